// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C facade: each function converts its arguments, calls the C++ core, and turns the
// outcome into a dlpm_status plus a thread-local message. No logic of its own.
#include <dlpack_mdspan.h>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

namespace dm = dlpack_mdspan;

namespace {

// The message is worded here, at the boundary: a C caller reads it after the values it
// names (and any %s argument) are gone.
thread_local char last_error[dm::error::capacity];

dlpm_status fail(const dm::error& e) noexcept {
  e.write(last_error, sizeof last_error);
  return static_cast<dlpm_status>(e.code());
}

dlpm_status null_argument(const char* function, const char* argument) noexcept {
  return fail(dm::error::format(dm::errc::null_pointer, "%s: %s is NULL", function, argument));
}

// The requirements struct is versioned (git2's convention): only layouts this library
// knows are read, so a program built against a newer header gets an error, not garbage.
bool known_requirements_version(std::uint32_t version) noexcept { return version == DLPM_REQUIREMENTS_VERSION; }

dlpm_status unsupported_requirements(const char* function, std::uint32_t version) noexcept {
  return fail(dm::error::format(dm::errc::unsupported_version,
                                "%s: dlpm_requirements version %u is not supported (this library knows version %u); %s",
                                function, version, static_cast<unsigned>(DLPM_REQUIREMENTS_VERSION),
                                version == 0 ? "initialise it with dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION)"
                                             : "the program was built against a newer dlpack_mdspan.h"));
}

// A versioned struct (an output or options struct) of a version this library does not
// know (git2's convention, as for the requirements): `type` names the struct, `argument`
// the parameter that points to it, `known` the version this library knows.
DLPM_COLD dlpm_status unsupported_version(const char* function, const char* type, const char* argument,
                                          std::uint32_t version, std::uint32_t known) noexcept {
  return fail(dm::error::format(dm::errc::unsupported_version,
                                "%s: %s version %u is not supported (this library knows version %u); set %s->version to "
                                "the header's version constant",
                                function, type, version, known, argument));
}

// dlpm_requirements is dm::tensor_requirements under the same names; the C types differ
// where C++'s cannot cross a C ABI: int32_t for bool, an int32_t for the null strides
// policy enum, pointers for the layout's spans (their length is the tensor's rank).
static_assert(DLPM_NULL_STRIDES_ROW_MAJOR == static_cast<int>(dm::null_strides_policy::row_major) &&
                  DLPM_NULL_STRIDES_REJECT == static_cast<int>(dm::null_strides_policy::reject),
              "DLPM_NULL_STRIDES_* are the values of dlpack_mdspan::null_strides_policy");

// Version 1 of dlpm_requirements was published with the layout fields flat, after the
// null strides field (then under another name): nesting them in `layout` moved none, so a
// program built against that header and this library agree on every byte.
struct requirements_v1_flat {
  std::uint32_t version;
  std::int32_t check_dtype;
  DLDataType dtype;
  std::int32_t ndim;
  const std::int64_t* shape;
  char order;
  const std::int32_t* device_types;
  std::int32_t num_device_types;
  std::int32_t device_id;
  std::uint64_t min_alignment;
  std::int32_t writable;
  std::int32_t null_strides;
  std::int32_t leading_dim;
  std::int32_t compact;
  const std::int32_t* stride_order;
  const std::int64_t* shape_divisors;
  const std::int64_t* stride_divisors;
};
#define DLPM_SAME_V1_OFFSET(field)                                                                     \
  static_assert(offsetof(dlpm_requirements, field) == offsetof(requirements_v1_flat, field) &&     \
                    sizeof(dlpm_requirements::field) == sizeof(requirements_v1_flat::field),       \
                "dlpm_requirements." #field " is not where version 1 put it");
#define DLPM_SAME_V1_LAYOUT_OFFSET(field)                                                                  \
  static_assert(offsetof(dlpm_requirements, layout) + offsetof(dlpm_layout_requirements, field) ==     \
                        offsetof(requirements_v1_flat, field) &&                                        \
                    sizeof(dlpm_layout_requirements::field) == sizeof(requirements_v1_flat::field),     \
                "dlpm_requirements.layout." #field " is not where version 1 put " #field);
static_assert(sizeof(dlpm_requirements) == sizeof(requirements_v1_flat) &&
              alignof(dlpm_requirements) == alignof(requirements_v1_flat));
DLPM_SAME_V1_OFFSET(version)
DLPM_SAME_V1_OFFSET(check_dtype)
DLPM_SAME_V1_OFFSET(dtype)
DLPM_SAME_V1_OFFSET(ndim)
DLPM_SAME_V1_OFFSET(shape)
DLPM_SAME_V1_OFFSET(order)
DLPM_SAME_V1_OFFSET(device_types)
DLPM_SAME_V1_OFFSET(num_device_types)
DLPM_SAME_V1_OFFSET(device_id)
DLPM_SAME_V1_OFFSET(min_alignment)
DLPM_SAME_V1_OFFSET(writable)
DLPM_SAME_V1_OFFSET(null_strides)
DLPM_SAME_V1_LAYOUT_OFFSET(leading_dim)
DLPM_SAME_V1_LAYOUT_OFFSET(compact)
DLPM_SAME_V1_LAYOUT_OFFSET(stride_order)
DLPM_SAME_V1_LAYOUT_OFFSET(shape_divisors)
DLPM_SAME_V1_LAYOUT_OFFSET(stride_divisors)
#undef DLPM_SAME_V1_OFFSET
#undef DLPM_SAME_V1_LAYOUT_OFFSET

// The layout fields, as spans over the modes of a tensor of rank
// `ndim` (clamped: a rank check_structure refuses is refused before they are read).
dm::layout_requirements layout_to_core(const dlpm_layout_requirements& r, std::int32_t ndim) noexcept {
  dm::layout_requirements l;
  const auto modes = static_cast<std::size_t>(ndim < 0 ? 0 : ndim > dm::max_ndim ? dm::max_ndim : ndim);
  l.leading_dim = r.leading_dim;
  if (r.stride_order != nullptr) l.stride_order = {r.stride_order, modes};
  l.compact = r.compact != 0;
  if (r.shape_divisors != nullptr) l.shape_divisors = {r.shape_divisors, modes};
  if (r.stride_divisors != nullptr) l.stride_divisors = {r.stride_divisors, modes};
  return l;
}

// Whether the struct sets any layout field. False means layout_to_core is empty
// (true may still give an empty one, for a rank-0 tensor: to_core decides).
bool sets_layout(const dlpm_layout_requirements& r) noexcept {
  return r.leading_dim != DLPM_ANY_LEADING_DIM || r.stride_order != nullptr || r.compact != 0 ||
         r.shape_divisors != nullptr || r.stride_divisors != nullptr;
}

// The requirements' layout where the struct sets no layout field: empty, known at compile
// time, so the layout rule folds away (the conversion exists only to compile that rule).
struct no_layout {
  [[nodiscard]] static constexpr bool empty() noexcept { return true; }
  operator dm::layout_requirements() const noexcept { return {}; }
};

// dlpm_requirements as the core's rules read requirements (requirements.hpp's `Req`): each
// field read in place, where a rule asks for it, with no converted copy made first (a copy,
// dm::tensor_requirements, loaded every field before the first rule: 7 instructions more a
// dlpm_check, bench/callgrind.py). The flags are int32_t, read in boolean tests. A null_strides other
// than the two constants is read as DLPM_NULL_STRIDES_REJECT, as "nonzero" was before the
// field had its C++ name: a C value never leaves the core's enum. `Layout`: no_layout, or
// layout_to_core's spans.
template <class Layout>
struct c_requirements {
  c_requirements(const dlpm_requirements& r, Layout l) noexcept
      : check_dtype(r.check_dtype), dtype(r.dtype), ndim(r.ndim), shape(r.shape), order(r.order),
        device_types(r.device_types), num_device_types(r.num_device_types), device_id(r.device_id),
        min_alignment(r.min_alignment), writable(r.writable),
        null_strides(r.null_strides == DLPM_NULL_STRIDES_ROW_MAJOR ? dm::null_strides_policy::row_major
                                                                   : dm::null_strides_policy::reject),
        layout(l) {}
  const std::int32_t& check_dtype;
  const DLDataType& dtype;
  const std::int32_t& ndim;
  const std::int64_t* const& shape;
  const char& order;
  const std::int32_t* const& device_types;
  const std::int32_t& num_device_types;
  const std::int32_t& device_id;
  const std::uint64_t& min_alignment;
  const std::int32_t& writable;
  dm::null_strides_policy null_strides;
  Layout layout;
};

// Every field but the layout ones (an empty layout the compiler sees).
DLPM_HOT_INLINE inline c_requirements<no_layout> to_core_without_layout(const dlpm_requirements& r) noexcept {
  return {r, no_layout{}};
}

// Every field, the layout ones as spans over the modes of a tensor of rank `ndim`.
c_requirements<dm::layout_requirements> to_core(const dlpm_requirements& r, std::int32_t ndim) noexcept {
  return {r, layout_to_core(r.layout, ndim)};
}

// dm::check_requirements in its two halves, so that the success path reads the caller's
// struct field by field: the layout's spans, needed in memory for the out-of-line failure
// half, were built on every call (to_core), accepted or not.
DLPM_COLD dlpm_status requirements_failed(const DLTensor& tensor, std::uint64_t flags, const dlpm_requirements& req) noexcept {
  dm::error e;
  return dm::detail::requirements_failure(tensor, flags, to_core(req, tensor.ndim), &e) ? DLPM_OK : fail(e);
}

// Requirements with layout fields: the layout's spans in memory (layout_met takes them by
// reference). A function of its own, so that check_tensor's common path stays small.
[[gnu::noinline]] dlpm_status check_tensor_with_layout(const DLTensor& tensor, std::uint64_t flags,
                                                       const dlpm_requirements& req, dm::tensor_summary* summary) noexcept {
  if (dm::detail::requirements_met(tensor, flags, to_core(req, tensor.ndim), summary)) return DLPM_OK;
  return requirements_failed(tensor, flags, req);
}

// Without layout fields (the usual call) the requirements are read with an empty layout the
// compiler can see: the layout test folds away and no spans are stored to memory, which
// building them with layout_to_core made it do on every call. `summary`, where given,
// gets what the fast half learned; it is left alone when the ordered half accepts what the
// fast half refused.
DLPM_HOT_INLINE inline dlpm_status check_tensor(const DLTensor& tensor, std::uint64_t flags, const dlpm_requirements& req,
                                                dm::tensor_summary* summary = nullptr) noexcept {
  if (sets_layout(req.layout)) {
    // The out-of-line half learns into a summary of its own: handed the caller's, it made
    // that one's address escape, which kept the usual path's summary in memory (stored by
    // the check, read back by the caller) instead of in registers.
    if (summary == nullptr) return check_tensor_with_layout(tensor, flags, req, nullptr);
    dm::tensor_summary learned = *summary;
    const dlpm_status s = check_tensor_with_layout(tensor, flags, req, &learned);
    *summary = learned;
    return s;
  }
  if (dm::detail::requirements_met(tensor, flags, to_core_without_layout(req), summary)) return DLPM_OK;
  return requirements_failed(tensor, flags, req);
}

DLPM_COLD dlpm_status negative_capacity(const char* function, std::int32_t capacity) noexcept {
  return fail(dm::error::format(dm::errc::invalid_argument, "%s: capacity = %d is negative", function, capacity));
}

// A tensor's own `ndim` strides (ndim 0 to 64: checked) into `to`, two at a time: a call of
// memcpy cost 15 instructions at rank 2. None at rank 0, where the pointer was never read,
// so need not be aligned.
DLPM_HOT_INLINE inline void copy_strides(const std::int64_t* from, std::int32_t ndim, std::int64_t* to) noexcept {
  const std::int32_t pairs = ndim / 2;
#if defined(__clang__)
#pragma clang loop unroll(disable) vectorize(disable)
#endif
  for (std::int32_t p = 0; p < pairs; ++p) std::memcpy(to + 2 * p, from + 2 * p, 2 * sizeof(std::int64_t));
  if (ndim % 2 != 0) to[ndim - 1] = from[ndim - 1];
}

// The strides of a tensor a check has accepted, as the core reads them (stride_at): its own,
// or for NULL strides the row-major ones, in one pass (compact_strides).
DLPM_HOT_INLINE inline void write_strides(const DLTensor& tensor, std::int64_t* out) noexcept {
  if (tensor.strides != nullptr)
    copy_strides(tensor.strides, tensor.ndim, out);
  else
    dm::detail::compact_strides<dm::stride_rule::row_major>(tensor.shape, tensor.ndim, out);
}

// The second half of dlpm_layout and dlpm_check_layout, for a tensor `function` has just
// validated and counted (`count` elements): the strides (write_strides) and the count.
DLPM_HOT_INLINE inline dlpm_status write_layout(const char* function, const DLTensor& tensor, std::int64_t* strides,
                                                std::int32_t capacity, std::int64_t count, std::int64_t* numel) noexcept {
  if (capacity < tensor.ndim)
    return fail(dm::error::format(dm::errc::invalid_argument, "%s: capacity = %d is less than ndim = %d", function, capacity,
                                  tensor.ndim));
  if (strides == nullptr && tensor.ndim > 0) return null_argument(function, "strides");
  write_strides(tensor, strides);
  *numel = count;
  return DLPM_OK;
}

// The element count of a tensor a check has accepted, as dlpm_layout gets it.
dlpm_status count_elements(const DLTensor& tensor, std::int64_t* count) noexcept {
  const auto n = dm::numel(tensor);
  if (!n) return fail(n.error());
  *count = *n;
  return DLPM_OK;
}

class c_release_owner;

// What the dlpm_managed_new* calls but _inline hand the core as the owner: a
// source (the core's block_owner rule), from which the block's c_release_owner is made once
// the allocation succeeded. Nothing of its own to release, so a refusal leaves the buffer the
// caller's and hand_out's disarm has nothing to do. c_release_args carries the release and
// ctx passed as arguments; c_options_source reads them from dlpm_managed_new_from's options
// only then (so that neither is kept across the allocation).
struct c_release_args {
  using block_owner = c_release_owner;
  dlpm_release_fn release;
  void* ctx;
  [[nodiscard]] dlpm_release_fn release_fn() const noexcept { return release; }
  [[nodiscard]] void* context() const noexcept { return ctx; }
  void disarm() noexcept {}
};

struct c_options_source {
  using block_owner = c_release_owner;
  const dlpm_managed_options* options;
  [[nodiscard]] dlpm_release_fn release_fn() const noexcept { return options->release; }
  [[nodiscard]] void* context() const noexcept { return options->ctx; }
  void disarm() noexcept {}
};

// Owner of a dlpm_managed_new buffer: calls the caller's release exactly once. Made in the
// block, in place, from a source (c_release_args, c_options_source) once the tensor exists,
// so it is never moved and never disarmed.
class c_release_owner {
 public:
  c_release_owner(c_release_owner&&) = delete;
  template <class Source>
    requires requires(const Source& s) {
      s.release_fn();
      s.context();
    }
  explicit c_release_owner(Source&& source) noexcept : release_(source.release_fn()), ctx_(source.context()) {}
  c_release_owner& operator=(c_release_owner&&) = delete;
  ~c_release_owner() {
    if (release_ != nullptr) dm::detail::call_foreign("a dlpm_release_fn", [this] { release_(ctx_); });
  }

 private:
  dlpm_release_fn release_;
  void* ctx_;
};

// The end of a dlpm_managed_new* call: the tensor to *out, or the core's refusal worded,
// with `owner` (not moved from on failure) disarmed, so the buffer stays the caller's.
template <class Owner>
DLPM_HOT_INLINE inline dlpm_status hand_out(dm::result<dm::managed_tensor>&& made, Owner& owner,
                                            DLManagedTensorVersioned** out) noexcept {
  if (!made) {
    owner.disarm();
    return fail(made.error());
  }
  *out = made->release();
  return DLPM_OK;
}

// The body of the dlpm_managed_new* calls that copy the description (_new, _new_from,
// _new_checked's copying path): `order` is dlpm_managed_options.order. Order 0 is the core's
// form without an order (NULL strides row-major, explicit ones kept), whose order tests fold
// away; 'C' and 'F' (and the refusal of any other) are the ordered form's. Each branch hands
// out its own result, so neither merges into a temporary the other also writes. `source` is
// a c_release_args or a c_options_source. The core's calls are noexcept and so is making
// the owner: nothing here can throw.
template <class Source>
DLPM_HOT_INLINE inline dlpm_status wrap_buffer_as(const DLTensor& description, char order, uint64_t flags, Source& source,
                                                  DLManagedTensorVersioned** out) noexcept {
  if (order == 0) return hand_out(dm::try_make_managed_tensor(description, std::move(source), flags), source, out);
  return hand_out(dm::try_make_managed_tensor(description, std::move(source), flags, order), source, out);
}

// wrap_buffer_as for an order or for padded sub-byte storage: out of line.
DLPM_NOINLINE dlpm_status wrap_buffer_ordered_or_padded(const DLTensor& description, char order, uint64_t flags,
                                                        c_release_args source, DLManagedTensorVersioned** out) noexcept {
  return wrap_buffer_as(description, order, flags, source, out);
}

// wrap_buffer_as, the usual call (order 0 and packed storage, the padded bit clear) inlined
// with that bit known clear, so that the element size's sub-byte test folds away; any other
// goes to wrap_buffer_ordered_or_padded.
template <class Source>
DLPM_HOT_INLINE inline dlpm_status wrap_buffer(const DLTensor& description, char order, uint64_t flags, Source source,
                                               DLManagedTensorVersioned** out) noexcept {
  if (order == 0 && (flags & dm::flag_is_subbyte_type_padded) == 0) [[likely]]
    return wrap_buffer_as(description, 0, flags & ~dm::flag_is_subbyte_type_padded, source, out);
  return wrap_buffer_ordered_or_padded(description, order, flags, c_release_args{source.release_fn(), source.context()},
                                       out);
}

// Owner of a dlpm_managed_new_inline tensor: the caller's owner bytes, kept in the block,
// and the release that is called with their address exactly once.
class c_inline_owner {
 public:
  c_inline_owner(dlpm_release_fn release, const void* state, std::size_t size) noexcept : release_(release) {
    if (size != 0) std::memcpy(state_, state, size);
  }
  c_inline_owner(c_inline_owner&& other) noexcept : release_(other.release_) {
    std::memcpy(state_, other.state_, sizeof state_);
    other.release_ = nullptr;
  }
  c_inline_owner& operator=(c_inline_owner&&) = delete;
  ~c_inline_owner() {
    if (release_ != nullptr) dm::detail::call_foreign("a dlpm_release_fn", [this] { release_(state_); });
  }
  void disarm() noexcept { release_ = nullptr; }

 private:
  dlpm_release_fn release_;
  alignas(DLPM_INLINE_OWNER_ALIGNMENT) unsigned char state_[DLPM_INLINE_OWNER_CAPACITY] = {};
};
using c_inline_block = dm::detail::dynamic_owner_block<c_inline_owner>;

dlpm_status from_legacy(DLManagedTensor* legacy, dm::legacy_access access, DLManagedTensorVersioned** out) noexcept {
  if (legacy == nullptr) return null_argument("dlpm_from_legacy", "legacy");
  if (out == nullptr) {
    // Ownership was passed in, so even this failure releases the tensor.
    dm::detail::call_deleter(legacy);
    return null_argument("dlpm_from_legacy", "out");
  }
  auto wrapped = dm::legacy_to_versioned(legacy, access);
  if (!wrapped) return fail(wrapped.error());
  *out = *wrapped;
  return DLPM_OK;
}

}  // namespace

// One vocabulary: every DLPM_E_<NAME> equals dm::errc::<name>, and the codes end where
// errc ends. A status added on one side only, or renamed on one side, fails to compile.
#define DLPM_SAME_CODE(NAME, name) static_assert(DLPM_E_##NAME == static_cast<int>(dm::errc::name), #NAME);
DLPM_SAME_CODE(NULL_POINTER, null_pointer)
DLPM_SAME_CODE(EXTENT_OVERFLOW, extent_overflow)
DLPM_SAME_CODE(STRIDE_OVERFLOW, stride_overflow)
DLPM_SAME_CODE(NOT_STRIDED, not_strided)
DLPM_SAME_CODE(DEVICE_MISMATCH, device_mismatch)
DLPM_SAME_CODE(DEVICE_ID_MISMATCH, device_id_mismatch)
DLPM_SAME_CODE(NDIM_MISMATCH, ndim_mismatch)
DLPM_SAME_CODE(INVALID_NDIM, invalid_ndim)
DLPM_SAME_CODE(DTYPE_MISMATCH, dtype_mismatch)
DLPM_SAME_CODE(INVALID_DTYPE, invalid_dtype)
DLPM_SAME_CODE(NULL_SHAPE, null_shape)
DLPM_SAME_CODE(NEGATIVE_EXTENT, negative_extent)
DLPM_SAME_CODE(SHAPE_MISMATCH, shape_mismatch)
DLPM_SAME_CODE(NULL_DATA, null_data)
DLPM_SAME_CODE(NULL_STRIDES, null_strides)
DLPM_SAME_CODE(NON_COMPACT_STRIDES, non_compact_strides)
DLPM_SAME_CODE(NON_POSITIVE_STRIDE, non_positive_stride)
DLPM_SAME_CODE(OVERLAPPING_STRIDES, overlapping_strides)
DLPM_SAME_CODE(SPAN_OVERFLOW, span_overflow)
DLPM_SAME_CODE(BYTE_OFFSET_OVERFLOW, byte_offset_overflow)
DLPM_SAME_CODE(MISALIGNED_BYTE_OFFSET, misaligned_byte_offset)
DLPM_SAME_CODE(MISALIGNED_DATA, misaligned_data)
DLPM_SAME_CODE(DIVISIBILITY, divisibility)
DLPM_SAME_CODE(SUBBYTE_NOT_VIEWABLE, subbyte_not_viewable)
DLPM_SAME_CODE(AMBIGUOUS_LAYOUT, ambiguous_layout)
DLPM_SAME_CODE(NO_MATCHING_TYPE, no_matching_type)
DLPM_SAME_CODE(READ_ONLY, read_only)
DLPM_SAME_CODE(VERSION_MISMATCH, version_mismatch)
DLPM_SAME_CODE(INVALID_ARGUMENT, invalid_argument)
DLPM_SAME_CODE(OUT_OF_MEMORY, out_of_memory)
DLPM_SAME_CODE(INTERNAL, internal)
DLPM_SAME_CODE(MISALIGNED_METADATA, misaligned_metadata)
DLPM_SAME_CODE(UNSUPPORTED_VERSION, unsupported_version)
DLPM_SAME_CODE(PRODUCER_FAILED, producer_failed)
#undef DLPM_SAME_CODE
static_assert(DLPM_E_PRODUCER_FAILED == static_cast<int>(dm::last_errc), "a new errc needs its DLPM_E_ code");
static_assert(DLPM_MAX_NDIM == dm::max_ndim, "the facade's rank limit is the core's");

extern "C" {

const char* dlpm_status_string(dlpm_status status) noexcept {
  if (status < 0 || status > static_cast<int>(dm::last_errc)) return "unknown status";
  return dm::errc_name(static_cast<dm::errc>(status));
}

const char* dlpm_last_error(void) noexcept { return last_error; }

size_t dlpm_dtype_name(DLDataType dtype, char* buffer, size_t size) noexcept {
  const auto name = dm::dtype_name(dtype);
  const size_t length = std::strlen(name.c_str());
  if (buffer != nullptr && size > 0) {
    const size_t kept = length < size ? length : size - 1;
    std::memcpy(buffer, name.c_str(), kept);
    buffer[kept] = '\0';
  }
  return length;
}

dlpm_status dlpm_version(dlpm_version_info* out) noexcept {
  if (out == nullptr) return null_argument("dlpm_version", "out");
  *out = dlpm_version_info{dm::version_major, dm::version_minor, dm::version_patch, dm::dlpack_major_version,
                           dm::dlpack_minor_version};
  return DLPM_OK;
}

// Decoded by re-encoding: the candidate from each valid one-lane name that begins `name`
// (its width read from the name; or from the raw "(code, bits, lanes)" form), then kept only
// if dtype_name spells it exactly as given. So the spelling rule stays dtype_name's alone, and no near-miss
// ("float32x1", "int08", "float32x4 ") is taken.
dlpm_status dlpm_dtype_from_name(const char* name, DLDataType* out) noexcept {
  if (name == nullptr) return null_argument("dlpm_dtype_from_name", "name");
  if (out == nullptr) return null_argument("dlpm_dtype_from_name", "out");
  const auto spelled = [name](DLDataType d) { return std::strcmp(dm::dtype_name(d).c_str(), name) == 0; };
  const auto number = [](const char* at, char** end) { return static_cast<unsigned>(std::strtoul(at, end, 10)); };
  if (name[0] == '(') {  // a refused dtype's raw form: "(code %u, bits %u, lanes %u)"
    char* at = const_cast<char*>(name);
    if (std::strncmp(at, "(code ", 6) == 0) {
      const unsigned code = number(at + 6, &at);
      if (std::strncmp(at, ", bits ", 7) == 0) {
        const unsigned bits = number(at + 7, &at);
        if (std::strncmp(at, ", lanes ", 8) == 0) {
          const unsigned lanes = number(at + 8, &at);
          const DLDataType d{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits),
                             static_cast<std::uint16_t>(lanes)};
          if (code <= 0xFF && bits <= 0xFF && lanes <= 0xFFFF && spelled(d)) {
            *out = d;
            return DLPM_OK;
          }
        }
      }
    }
  } else {
    // Every one-lane name carries its bit width as its first number ("int16", "float8_e4m3fn",
    // "float32x4"), except "bool", NumPy's byte ("boolx2": the number is its lanes): so the
    // width is read (that number, or 8), not searched for, and only the codes are tried with it.
    const char* digits = std::strpbrk(name, "0123456789");
    const unsigned long widths[2] = {digits != nullptr ? std::strtoul(digits, nullptr, 10) : 8, 8};
    for (unsigned candidate = 0; candidate < 256 * 2; ++candidate) {
      const unsigned code = candidate % 256;
      const unsigned long width = widths[candidate / 256];
      if (width > 0xFF) continue;
      DLDataType d{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(width), 1};
      if (!dm::detail::dtype_bits_valid(d.code, d.bits)) continue;
      const auto one_lane = dm::dtype_name(d);
      const std::size_t n = std::strlen(one_lane.c_str());
      if (std::strncmp(one_lane.c_str(), name, n) != 0) continue;
      if (name[n] == 'x') {
        const unsigned long lanes = std::strtoul(name + n + 1, nullptr, 10);
        d.lanes = static_cast<std::uint16_t>(lanes <= 0xFFFF ? lanes : 0);
      }
      if (spelled(d)) {
        *out = d;
        return DLPM_OK;
      }
    }
  }
  return fail(dm::error::format(dm::errc::invalid_dtype,
                                "dlpm_dtype_from_name: \"%s\" names no DLPack dtype (dlpm_dtype_name's spellings: "
                                "\"float32\", \"int8\", \"bool\", \"bfloat16\", \"float8_e4m3fn\", \"float32x4\")",
                                name));
}

dlpm_status dlpm_validate(const DLTensor* tensor) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_validate", "tensor");
  dm::error e;
  return dm::validate(*tensor, &e) ? DLPM_OK : fail(e);
}

dlpm_status dlpm_numel(const DLTensor* tensor, int64_t* out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_numel", "tensor");
  if (out == nullptr) return null_argument("dlpm_numel", "out");
  auto n = dm::numel(*tensor);
  if (!n) return fail(n.error());
  *out = *n;
  return DLPM_OK;
}

dlpm_status dlpm_nbytes(const DLTensor* tensor, int64_t* out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_nbytes", "tensor");
  if (out == nullptr) return null_argument("dlpm_nbytes", "out");
  auto n = dm::nbytes(*tensor);
  if (!n) return fail(n.error());
  *out = *n;
  return DLPM_OK;
}

dlpm_status dlpm_is_contiguous(const DLTensor* tensor, char order, int32_t* out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_is_contiguous", "tensor");
  if (out == nullptr) return null_argument("dlpm_is_contiguous", "out");
  dm::error e;
  if (!dm::validate(*tensor, &e)) return fail(e);
  switch (order) {
    case 'C': *out = dm::is_c_contiguous(*tensor); return DLPM_OK;
    case 'F': *out = dm::is_f_contiguous(*tensor); return DLPM_OK;
    case 'A': *out = dm::is_contiguous(*tensor); return DLPM_OK;
    default:
      return fail(dm::error::format(dm::errc::invalid_argument, "dlpm_is_contiguous: order must be 'C', 'F' or 'A', not %d",
                                    dm::detail::char_byte(order)));
  }
}

dlpm_status dlpm_is_unique(const DLTensor* tensor, int32_t* out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_is_unique", "tensor");
  if (out == nullptr) return null_argument("dlpm_is_unique", "out");
  const dm::result<bool> r = dm::is_unique(*tensor);
  if (!r) return fail(r.error());
  *out = *r ? 1 : 0;
  return DLPM_OK;
}

dlpm_status dlpm_leading_dim(const DLTensor* tensor, int32_t* out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_leading_dim", "tensor");
  if (out == nullptr) return null_argument("dlpm_leading_dim", "out");
  const dm::result<std::int32_t> r = dm::leading_dim(*tensor);
  if (!r) return fail(r.error());
  *out = *r;
  return DLPM_OK;
}

dlpm_status dlpm_stride_order(const DLTensor* tensor, int32_t* out, int32_t capacity) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_stride_order", "tensor");
  if (out == nullptr) return null_argument("dlpm_stride_order", "out");
  if (capacity < 0)
    return fail(dm::error::format(dm::errc::invalid_argument, "dlpm_stride_order: capacity = %d is negative", capacity));
  const auto r = dm::stride_order(*tensor, std::span<std::int32_t>(out, static_cast<std::size_t>(capacity)));
  return r ? DLPM_OK : fail(r.error());
}

dlpm_status dlpm_element_offset(const DLTensor* tensor, const int64_t* index, int64_t* out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_element_offset", "tensor");
  if (out == nullptr) return null_argument("dlpm_element_offset", "out");
  if (index == nullptr && tensor->ndim > 0) return null_argument("dlpm_element_offset", "index");
  dm::error e;
  std::int64_t offset = 0;
  if (!dm::validate(*tensor, &e) || !dm::element_byte_offset(*tensor, index, &offset, &e)) return fail(e);
  *out = offset;
  return DLPM_OK;
}

dlpm_status dlpm_layout(const DLTensor* tensor, int64_t* strides, int32_t capacity, int64_t* numel) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_layout", "tensor");
  if (numel == nullptr) return null_argument("dlpm_layout", "numel");
  if (capacity < 0) return negative_capacity("dlpm_layout", capacity);
  dm::error e;
  if (!dm::validate(*tensor, &e)) return fail(e);
  std::int64_t count = 0;
  if (const dlpm_status s = count_elements(*tensor, &count); s != DLPM_OK) return s;
  return write_layout("dlpm_layout", *tensor, strides, capacity, count, numel);
}

size_t dlpm_storage_itemsize(DLDataType dtype, int32_t subbyte_padded) noexcept {
  return static_cast<size_t>(dm::storage_itemsize(dtype, subbyte_padded != 0));
}

int32_t dlpm_is_host_accessible(int32_t device_type) noexcept { return dm::is_host_accessible(device_type) ? 1 : 0; }

const char* dlpm_device_type_name(int32_t device_type) noexcept { return dm::device_type_name(device_type); }

dlpm_status dlpm_cuda_array_api_stream(int64_t value, uintptr_t* handle) noexcept {
  if (handle == nullptr) return null_argument("dlpm_cuda_array_api_stream", "handle");
  const dm::cuda_stream_value decoded = dm::decode_cuda_stream(value);
  if (decoded.asks == dm::cuda_stream_value::kind::refused) return fail(dm::cuda_stream_refusal(value));
  *handle = decoded.handle;
  return DLPM_OK;
}

dlpm_status dlpm_rocm_array_api_stream(int64_t value, int32_t* synchronise, uintptr_t* handle) noexcept {
  if (synchronise == nullptr) return null_argument("dlpm_rocm_array_api_stream", "synchronise");
  if (handle == nullptr) return null_argument("dlpm_rocm_array_api_stream", "handle");
  const dm::rocm_stream_value decoded = dm::decode_rocm_stream(value);
  if (decoded.asks == dm::rocm_stream_value::kind::refused) return fail(dm::rocm_stream_refusal(value));
  *synchronise = decoded.asks == dm::rocm_stream_value::kind::stream ? 1 : 0;
  *handle = decoded.handle;
  return DLPM_OK;
}

dlpm_status dlpm_byte_span(const DLTensor* tensor, uint64_t flags, int64_t* begin, int64_t* end) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_byte_span", "tensor");
  if (begin == nullptr) return null_argument("dlpm_byte_span", "begin");
  if (end == nullptr) return null_argument("dlpm_byte_span", "end");
  const auto span = dm::byte_span(*tensor, (flags & dm::flag_is_subbyte_type_padded) != 0);
  if (!span) return fail(span.error());
  *begin = span->begin;
  *end = span->end;
  return DLPM_OK;
}

dlpm_status dlpm_check_bool_values(const DLTensor* tensor, uint64_t flags) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_check_bool_values", "tensor");
  dm::error e;
  if (!dm::check_bool_values(*tensor, flags, &e)) return fail(e);
  return DLPM_OK;
}

dlpm_status dlpm_coalesce(const DLTensor* tensor, uint64_t flags, int64_t* extents, int64_t* byte_steps, int32_t capacity,
                          int32_t* ndim, int64_t* block) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_coalesce", "tensor");
  if (ndim == nullptr) return null_argument("dlpm_coalesce", "ndim");
  if (block == nullptr) return null_argument("dlpm_coalesce", "block");
  if (capacity < 0) return negative_capacity("dlpm_coalesce", capacity);
  if ((extents == nullptr || byte_steps == nullptr) && tensor->ndim > 0)
    return null_argument("dlpm_coalesce", extents == nullptr ? "extents" : "byte_steps");
  const auto size = extents != nullptr && byte_steps != nullptr ? static_cast<std::size_t>(capacity) : 0;
  const auto r = dm::coalesce(*tensor, (flags & dm::flag_is_subbyte_type_padded) != 0, std::span<std::int64_t>(extents, size),
                              std::span<std::int64_t>(byte_steps, size));
  if (!r) return fail(r.error());
  *ndim = r->ndim;
  *block = r->block;
  return DLPM_OK;
}

dlpm_status dlpm_element_offset_prechecked(const DLTensor* tensor, uint64_t flags, const int64_t* index,
                                           int64_t* out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_element_offset_prechecked", "tensor");
  if (out == nullptr) return null_argument("dlpm_element_offset_prechecked", "out");
  if (index == nullptr && tensor->ndim > 0) return null_argument("dlpm_element_offset_prechecked", "index");
  dm::error e;
  std::int64_t offset = 0;
  if (!dm::element_byte_offset(*tensor, index, &offset, &e, (flags & dm::flag_is_subbyte_type_padded) != 0)) return fail(e);
  *out = offset;
  return DLPM_OK;
}

dlpm_status dlpm_requirements_init(dlpm_requirements* req, uint32_t version) noexcept {
  if (req == nullptr) return null_argument("dlpm_requirements_init", "req");
  if (!known_requirements_version(version)) return unsupported_requirements("dlpm_requirements_init", version);
  *req = dlpm_requirements DLPM_REQUIREMENTS_INIT;  // the header's one statement of "anything"
  req->version = version;
  return DLPM_OK;
}

dlpm_status dlpm_check(const DLTensor* tensor, const dlpm_requirements* req) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_check", "tensor");
  if (req == nullptr) return null_argument("dlpm_check", "req");
  if (!known_requirements_version(req->version)) return unsupported_requirements("dlpm_check", req->version);
  return check_tensor(*tensor, 0, *req);
}

dlpm_status dlpm_check_announced(DLDataType dtype, DLDevice device, const dlpm_requirements* req) noexcept {
  if (req == nullptr) return null_argument("dlpm_check_announced", "req");
  if (!known_requirements_version(req->version)) return unsupported_requirements("dlpm_check_announced", req->version);
  dm::error e;
  return dm::detail::announced_rules(dtype, device, to_core_without_layout(*req), &e) ? DLPM_OK : fail(e);
}

namespace {

// dlpm_check_managed's READ_ONLY refusal (`s`), worded with why the tensor is READ_ONLY where
// this copy of the library set the flag (read_only_view_error: a legacy tensor's unknown
// writability and its remedy, what a producer forbids); else the check's own words.
DLPM_COLD dlpm_status read_only_refused(const DLManagedTensorVersioned* tensor, dlpm_status s) noexcept {
  const char* reason = nullptr;
  const auto cause = static_cast<dm::read_only_cause>(dlpm_managed_read_only_cause(tensor, &reason));
  if (cause != dm::read_only_cause::legacy_unknown && cause != dm::read_only_cause::producer_forbids) return s;
  return fail(dm::read_only_view_error(cause, reason));
}

}  // namespace

dlpm_status dlpm_check_managed(const DLManagedTensorVersioned* tensor, const dlpm_requirements* req) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_check_managed", "tensor");
  if (req == nullptr) return null_argument("dlpm_check_managed", "req");
  if (!known_requirements_version(req->version)) return unsupported_requirements("dlpm_check_managed", req->version);
  if (tensor->version.major != DLPACK_MAJOR_VERSION) [[unlikely]]  // only its version may be read
    return fail(dm::detail::other_major_version("dlpm_check_managed: ", tensor->version, "nothing else of it was read"));
  const dlpm_status s = check_tensor(tensor->dl_tensor, tensor->flags, *req);
  return s == DLPM_E_READ_ONLY ? read_only_refused(tensor, s) : s;
}

dlpm_status dlpm_check_layout(const DLTensor* tensor, uint64_t flags, const dlpm_requirements* req, int64_t* strides,
                              int32_t capacity, int64_t* numel) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_check_layout", "tensor");
  if (req == nullptr) return null_argument("dlpm_check_layout", "req");
  if (numel == nullptr) return null_argument("dlpm_check_layout", "numel");
  if (!known_requirements_version(req->version)) return unsupported_requirements("dlpm_check_layout", req->version);
  if (capacity < 0) return negative_capacity("dlpm_check_layout", capacity);
  // check_tensor, its fast half also counting the elements (the count the silent
  // check_structure makes anyway).
  dm::tensor_summary summary;
  summary.numel = -1;
  if (const dlpm_status s = check_tensor(*tensor, flags, *req, &summary); s != DLPM_OK) return s;
  std::int64_t count = summary.numel;
  // The ordered half accepted what the fast half refused (tests/reference rules this out):
  // count as dlpm_layout does.
  if (count < 0)
    if (const dlpm_status s = count_elements(*tensor, &count); s != DLPM_OK) return s;
  if (strides == nullptr) {  // the caller reads the tensor's own strides: the count alone
    *numel = count;
    return DLPM_OK;
  }
  return write_layout("dlpm_check_layout", *tensor, strides, capacity, count, numel);
}

namespace {

// dlpm_check_tensor's refusal of an element size that is not the itemsize its check learned:
// the core's rule (check_element_bytes), worded. Out of line: only a wrong size gets here.
DLPM_COLD dlpm_status element_size_refused(const DLTensor& tensor, std::uint64_t flags, std::size_t element_size) noexcept {
  dm::error e;
  return dm::check_element_bytes(tensor.dtype, (flags & dm::flag_is_subbyte_type_padded) != 0, element_size, &e) ? DLPM_OK
                                                                                                                    : fail(e);
}

}  // namespace

dlpm_status dlpm_check_tensor(const DLTensor* tensor, uint64_t flags, const dlpm_requirements* req, size_t element_size,
                              dlpm_checked_tensor* out) noexcept {
  constexpr const char* function = "dlpm_check_tensor";
  if (tensor == nullptr) return null_argument(function, "tensor");
  if (out == nullptr) return null_argument(function, "out");
  if (out->version != DLPM_CHECKED_TENSOR_VERSION)
    return unsupported_version(function, "dlpm_checked_tensor", "out", out->version, DLPM_CHECKED_TENSOR_VERSION);
  if (req != nullptr && !known_requirements_version(req->version)) return unsupported_requirements(function, req->version);
  dm::tensor_summary summary;
  summary.numel = -1;
  if (req != nullptr) {
    if (const dlpm_status s = check_tensor(*tensor, flags, *req, &summary); s != DLPM_OK) return s;
  }
  if (summary.numel < 0) {  // no requirements, or the ordered half accepted what the fast half refused
    const auto checked = dm::check_tensor(*tensor, flags);
    if (!checked) return fail(checked.error());
    summary = checked->summary();
  }
  // The element size against the itemsize the check learned (storage_itemsize of the dtype
  // with these flags, check_element_bytes' `stored`): equal, the rule holds; else the core's
  // rule decides and words it.
  if (element_size != 0 && element_size != summary.itemsize) [[unlikely]]
    if (const dlpm_status s = element_size_refused(*tensor, flags, element_size); s != DLPM_OK) return s;
  out->row_major = summary.row_major;
  out->tensor = tensor;
  out->flags = flags;
  out->numel = summary.numel;
  out->itemsize = summary.itemsize;
  out->lowest_index = summary.lowest_index;
  out->highest_index = summary.highest_index;
  out->implicit_strides = summary.implicit_strides;
  out->ndim = tensor->ndim;
  write_strides(*tensor, out->strides);
  return DLPM_OK;
}

namespace {

// DLTensor's fields before its arrays (data, device, ndim, dtype): 24 bytes without padding,
// so that equal bytes are equal fields, compared in three words.
constexpr std::size_t dltensor_head_bytes = offsetof(DLTensor, shape);
static_assert(dltensor_head_bytes == sizeof(void*) + sizeof(DLDevice) + sizeof(std::int32_t) + sizeof(DLDataType));

// `tensor` with `flags` is what dlpm_check_tensor accepted as `checked`: the same
// description (or the very struct), sub-byte elements stored the same way.
DLPM_HOT_INLINE inline bool same_as_checked(const DLTensor& tensor, std::uint64_t flags, const dlpm_checked_tensor& checked) noexcept {
  const DLTensor& c = *checked.tensor;
  if (((flags ^ checked.flags) & dm::flag_is_subbyte_type_padded) != 0 || tensor.ndim != checked.ndim) return false;
  if (&tensor == &c) return true;
  if (std::memcmp(&tensor, &c, dltensor_head_bytes) != 0 || tensor.byte_offset != c.byte_offset ||
      (tensor.strides == nullptr) != (c.strides == nullptr))
    return false;
  // A copy of the struct checked (what a borrow of a dlpack_mdspan.Tensor hands out) points
  // at the very arrays checked, unchanged (the precondition): nothing to compare.
  if (tensor.shape == c.shape) [[unlikely]] {  // an export's arrays of its own fail this one test
    if (tensor.strides == c.strides) return true;
  }
  for (std::int32_t r = 0; r < tensor.ndim; ++r)
    if (tensor.shape[r] != c.shape[r] || (tensor.strides != nullptr && tensor.strides[r] != c.strides[r])) return false;
  return true;
}

// dlpm_check_prechecked's verdict once `tensor` with `flags` is known to be what `checked`
// was made of: `req` against what that check learned, without the structure's pass.
// Inlined into both callers, as it was written inside dlpm_check_prechecked (out of line, it
// cost the borrow of a Tensor 37 instructions: bench/python/callgrind_py.py).
// The core's checked_tensor of `tensor` with `flags`, known to be what `checked` was made of
// (same_as_checked), from what that check learned: the one conversion of the C checked form.
// C++ linkage: it returns a C++ type (this file's functions are declared extern "C").
extern "C++" DLPM_HOT_INLINE inline dm::checked_tensor as_checked(const DLTensor& tensor, std::uint64_t flags,
                                                     const dlpm_checked_tensor& checked) noexcept {
  dm::tensor_summary summary;
  summary.numel = checked.numel;
  summary.lowest_index = checked.lowest_index;
  summary.highest_index = checked.highest_index;
  summary.itemsize = checked.itemsize;
  summary.implicit_strides = checked.implicit_strides != 0;
  summary.row_major = checked.row_major != 0;
  summary.ordered_unique = false;  // not carried; neither the requirements nor the bool check read it
  return dm::detail::checked_tensor_access::make(tensor, flags, summary);
}

DLPM_HOT_INLINE inline dlpm_status requirements_met_as_checked(const DLTensor& tensor, std::uint64_t flags, const dlpm_checked_tensor& checked,
                                        const dlpm_requirements& req) noexcept {
  // As check_tensor: the silent half, then the worded one (out of line, the full rules).
  const auto known = as_checked(tensor, flags, checked);
  if (sets_layout(req.layout) ? dm::detail::requirements_met(known, to_core(req, tensor.ndim))
                              : dm::detail::requirements_met(known, to_core_without_layout(req)))
    return DLPM_OK;
  return requirements_failed(tensor, flags, req);
}

}  // namespace

dlpm_status dlpm_check_prechecked(const DLTensor* tensor, uint64_t flags, const dlpm_checked_tensor* checked,
                                  const dlpm_requirements* req) noexcept {
  constexpr const char* function = "dlpm_check_prechecked";
  if (tensor == nullptr) return null_argument(function, "tensor");
  if (checked == nullptr) return null_argument(function, "checked");
  if (req == nullptr) return null_argument(function, "req");
  if (checked->version != DLPM_CHECKED_TENSOR_VERSION)
    return unsupported_version(function, "dlpm_checked_tensor", "checked", checked->version, DLPM_CHECKED_TENSOR_VERSION);
  if (!known_requirements_version(req->version)) return unsupported_requirements(function, req->version);
  if (checked->tensor == nullptr || !same_as_checked(*tensor, flags, *checked)) return check_tensor(*tensor, flags, *req);
  return requirements_met_as_checked(*tensor, flags, *checked, *req);
}

dlpm_status dlpm_check_prechecked_tensor(const DLTensor* tensor, uint64_t flags, const dlpm_checked_tensor* checked,
                                         const dlpm_requirements* req, dlpm_checked_tensor* out) noexcept {
  constexpr const char* function = "dlpm_check_prechecked_tensor";
  if (tensor == nullptr) return null_argument(function, "tensor");
  if (out == nullptr) return null_argument(function, "out");
  if (out->version != DLPM_CHECKED_TENSOR_VERSION)
    return unsupported_version(function, "dlpm_checked_tensor", "out", out->version, DLPM_CHECKED_TENSOR_VERSION);
  if (checked != nullptr && checked->version != DLPM_CHECKED_TENSOR_VERSION)
    return unsupported_version(function, "dlpm_checked_tensor", "checked", checked->version, DLPM_CHECKED_TENSOR_VERSION);
  if (req != nullptr && !known_requirements_version(req->version)) return unsupported_requirements(function, req->version);
  if (checked == nullptr || checked->tensor == nullptr || !same_as_checked(*tensor, flags, *checked))
    return dlpm_check_tensor(tensor, flags, req, 0, out);
  if (req != nullptr)
    if (const dlpm_status s = requirements_met_as_checked(*tensor, flags, *checked, *req); s != DLPM_OK) return s;
  // What the earlier check learned, the `ndim` strides written (checked->ndim <= DLPM_MAX_NDIM: it was checked).
  std::memmove(&out->row_major, &checked->row_major, offsetof(dlpm_checked_tensor, strides) - offsetof(dlpm_checked_tensor, row_major) +
                                                         static_cast<std::size_t>(checked->ndim) * sizeof checked->strides[0]);
  out->tensor = tensor;
  out->flags = flags;
  return DLPM_OK;
}

dlpm_status dlpm_check_bool_values_prechecked(const DLTensor* tensor, uint64_t flags,
                                              const dlpm_checked_tensor* checked) noexcept {
  constexpr const char* function = "dlpm_check_bool_values_prechecked";
  if (tensor == nullptr) return null_argument(function, "tensor");
  if (checked != nullptr && checked->version != DLPM_CHECKED_TENSOR_VERSION)
    return unsupported_version(function, "dlpm_checked_tensor", "checked", checked->version, DLPM_CHECKED_TENSOR_VERSION);
  if (checked == nullptr || checked->tensor == nullptr || !same_as_checked(*tensor, flags, *checked))
    return dlpm_check_bool_values(tensor, flags);
  dm::error e;
  if (!dm::check_bool_values(as_checked(*tensor, flags, *checked), &e)) return fail(e);
  return DLPM_OK;
}

dlpm_status dlpm_plan_message(const DLTensor* tensor, uint64_t flags, int32_t direction, int32_t moves_cuda_memory,
                              dlpm_message_plan* out) noexcept {
  constexpr const char* function = "dlpm_plan_message";
  if (tensor == nullptr) return null_argument(function, "tensor");
  if (out == nullptr) return null_argument(function, "out");
  if (out->version != DLPM_MESSAGE_PLAN_VERSION)
    return unsupported_version(function, "dlpm_message_plan", "out", out->version, DLPM_MESSAGE_PLAN_VERSION);
  if (direction != DLPM_MESSAGE_SEND && direction != DLPM_MESSAGE_RECEIVE)
    return fail(dm::error::format(dm::errc::invalid_argument,
                                  "%s: direction = %d is neither DLPM_MESSAGE_SEND nor DLPM_MESSAGE_RECEIVE", function,
                                  direction));
  const auto checked = dm::check_tensor(*tensor, flags);
  if (!checked) return fail(checked.error());
  const auto plan = dm::plan_message(*checked, static_cast<dm::message_direction>(direction), moves_cuda_memory != 0);
  if (!plan) return fail(plan.error());
  out->loops = plan->loops;
  out->element0 = plan->element0;
  out->block = plan->block;
  out->lower_bound = plan->lower_bound;
  out->extent = plan->extent;
  out->dtype = plan->dtype;
  out->itemsize = plan->itemsize;
  for (std::int32_t m = 0; m < plan->loops; ++m) {
    out->extents[m] = plan->extents[m];
    out->byte_steps[m] = plan->byte_steps[m];
  }
  return DLPM_OK;
}

static_assert(DLPM_MESSAGE_SEND == static_cast<int>(dm::message_direction::send));
static_assert(DLPM_MESSAGE_RECEIVE == static_cast<int>(dm::message_direction::receive));

namespace {

// The description dlpm_managed_new and dlpm_managed_new_ordered are given as scalars.
DLTensor describe(void* data, int32_t ndim, const int64_t* shape, const int64_t* strides, DLDataType dtype,
                  DLDevice device, uint64_t byte_offset) noexcept {
  DLTensor description{};
  description.data = data;
  description.device = device;
  description.ndim = ndim;
  description.dtype = dtype;
  description.shape = const_cast<int64_t*>(shape);
  description.strides = const_cast<int64_t*>(strides);
  description.byte_offset = byte_offset;
  return description;
}

}  // namespace

dlpm_status dlpm_managed_new(void* data, int32_t ndim, const int64_t* shape, const int64_t* strides, DLDataType dtype,
                             DLDevice device, uint64_t byte_offset, uint64_t flags, dlpm_release_fn release, void* ctx,
                             DLManagedTensorVersioned** out) noexcept {
  if (out == nullptr) return null_argument("dlpm_managed_new", "out");
  return wrap_buffer(describe(data, ndim, shape, strides, dtype, device, byte_offset), 0, flags, c_release_args{release, ctx},
                     out);
}

dlpm_status dlpm_managed_new_ordered(void* data, int32_t ndim, const int64_t* shape, const int64_t* strides, char order,
                                     DLDataType dtype, DLDevice device, uint64_t byte_offset, uint64_t flags,
                                     dlpm_release_fn release, void* ctx, DLManagedTensorVersioned** out) noexcept {
  if (out == nullptr) return null_argument("dlpm_managed_new_ordered", "out");
  // Its order 0 refuses NULL strides (the core's ordered form), where dlpm_managed_options'
  // 0 reads them as row-major: always the ordered form here.
  c_release_args source{release, ctx};
  return hand_out(dm::try_make_managed_tensor(describe(data, ndim, shape, strides, dtype, device, byte_offset),
                                              std::move(source), flags, order),
                  source, out);
}

dlpm_status dlpm_managed_new_from(const DLTensor* description, const dlpm_managed_options* options,
                                  DLManagedTensorVersioned** out) noexcept {
  constexpr const char* function = "dlpm_managed_new_from";
  if (description == nullptr) return null_argument(function, "description");
  if (options == nullptr) return null_argument(function, "options");
  if (out == nullptr) return null_argument(function, "out");
  if (options->version != DLPM_MANAGED_OPTIONS_VERSION)
    return unsupported_version(function, "dlpm_managed_options", "options", options->version, DLPM_MANAGED_OPTIONS_VERSION);
  return wrap_buffer(*description, options->order, options->flags, c_options_source{options}, out);
}

dlpm_status dlpm_managed_new_checked(const dlpm_checked_tensor* checked, uint64_t flags, dlpm_release_fn release, void* ctx,
                                     DLManagedTensorVersioned** out) noexcept {
  constexpr const char* function = "dlpm_managed_new_checked";
  if (checked == nullptr) return null_argument(function, "checked");
  if (out == nullptr) return null_argument(function, "out");
  if (checked->version != DLPM_CHECKED_TENSOR_VERSION)
    return unsupported_version(function, "dlpm_checked_tensor", "checked", checked->version, DLPM_CHECKED_TENSOR_VERSION);
  if (checked->tensor == nullptr) return null_argument(function, "checked->tensor");
  const DLTensor& t = *checked->tensor;
  // Not in the form dlpm_managed_new keeps as it is, or checked as the other storage: its call.
  if (t.ndim <= 0 || t.strides == nullptr || checked->numel <= 0 ||
      ((flags ^ checked->flags) & dm::flag_is_subbyte_type_padded) != 0)
    return wrap_buffer(t, 0, flags, c_release_args{release, ctx}, out);
  c_release_args source{release, ctx};
  return hand_out(dm::detail::make_managed_tensor_sharing_arrays(t, std::move(source), flags), source, out);
}

dlpm_status dlpm_managed_new_inline(const DLTensor* description, char order, uint64_t flags, uint64_t buffer_size,
                                    dlpm_release_fn release, const void* owner_state, size_t owner_state_size,
                                    DLManagedTensorVersioned** out) noexcept {
  constexpr const char* function = "dlpm_managed_new_inline";
  if (description == nullptr) return null_argument(function, "description");
  if (out == nullptr) return null_argument(function, "out");
  if (owner_state == nullptr && owner_state_size != 0) return null_argument(function, "owner_state");
  if (owner_state_size > DLPM_INLINE_OWNER_CAPACITY)
    return fail(dm::error::format(dm::errc::invalid_argument,
                                  "%s: owner_state_size = %zu is more than DLPM_INLINE_OWNER_CAPACITY (%d)", function,
                                  owner_state_size, DLPM_INLINE_OWNER_CAPACITY));
  c_inline_owner state(release, owner_state, owner_state_size);
  dm::tensor_summary summary;
  summary.numel = -1;  // written by the export's validation when it accepts in one pass
  auto made = dm::try_make_managed_tensor(*description, std::move(state), flags, order, &summary);
  if (!made) {
    state.disarm();  // not moved from on failure: the owner stays the caller's
    return fail(made.error());
  }
  DLManagedTensorVersioned* tensor = made->release();
  if (buffer_size != DLPM_BUFFER_SIZE_UNKNOWN) {
    // The tensor is valid: only its extent can be refused now, by undoing the export
    // without the release (the owner is still the caller's). Its span comes from what the
    // export's validation learned (the same description, the same options as byte_span's
    // check), else from a check of its own.
    const auto span =
        summary.numel >= 0
            ? dm::result<dm::byte_range>(dm::byte_span(dm::detail::checked_tensor_access::make(tensor->dl_tensor, flags, summary)))
            : dm::byte_span(tensor->dl_tensor, (flags & dm::flag_is_subbyte_type_padded) != 0);
    const bool inside = span && (span->begin == span->end ||
                                 (span->begin >= 0 && static_cast<std::uint64_t>(span->end) <= buffer_size));
    if (!inside) {
      static_cast<c_inline_block*>(tensor->manager_ctx)->owner.disarm();
      dm::detail::call_deleter(tensor);
      if (!span) return fail(span.error());
      return fail(dm::error::format(dm::errc::invalid_argument,
                                    "%s: the elements occupy bytes [%lld, %lld) from data, outside the %llu-byte buffer",
                                    function, static_cast<long long>(span->begin), static_cast<long long>(span->end),
                                    static_cast<unsigned long long>(buffer_size)));
    }
  }
  *out = tensor;
  return DLPM_OK;
}

namespace {
DLPM_NOINLINE void call_any_deleter(DLManagedTensorVersioned* tensor) noexcept { dm::detail::call_deleter(tensor); }
}  // namespace

// A block of dlpm_managed_new, _ordered or _from: its deleter is noexcept and guards the
// release itself (c_release_owner), so it is jumped to, without call_deleter's guard.
void dlpm_managed_delete(DLManagedTensorVersioned* tensor) noexcept {
  using block = dm::detail::dynamic_owner_block<c_release_owner>;
  if (tensor != nullptr && tensor->deleter == &block::destroy) [[likely]]
    return block::destroy(tensor);
  call_any_deleter(tensor);
}

void dlpm_legacy_delete(DLManagedTensor* tensor) noexcept { dm::detail::call_deleter(tensor); }

dlpm_status dlpm_managed_alloc_host(int32_t ndim, const int64_t* shape, DLDataType dtype, uint64_t flags,
                                    DLManagedTensorVersioned** out) noexcept {
  if (out == nullptr) return null_argument("dlpm_managed_alloc_host", "out");
  auto made = dm::try_allocate_host_tensor(ndim, shape, dtype, flags);
  if (!made) return fail(made.error());
  *out = made->release();
  return DLPM_OK;
}

dlpm_status dlpm_managed_copy_to_host(const DLManagedTensorVersioned* tensor, DLManagedTensorVersioned** out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_managed_copy_to_host", "tensor");
  if (out == nullptr) return null_argument("dlpm_managed_copy_to_host", "out");
  if (tensor->version.major != DLPACK_MAJOR_VERSION)  // only its version may be read
    return fail(
        dm::detail::other_major_version("dlpm_managed_copy_to_host: ", tensor->version, "the tensor is still the caller's"));
  auto made = dm::try_copy_to_host(tensor->dl_tensor, tensor->flags);
  if (!made) return fail(made.error());
  *out = made->release();
  return DLPM_OK;
}

dlpm_status dlpm_managed_check_version(DLManagedTensorVersioned* tensor) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_managed_check_version", "tensor");
  auto adopted = dm::managed_tensor::try_adopt(tensor);
  if (!adopted) return fail(adopted.error());
  (void)adopted->release();  // valid: ownership stays with the caller
  return DLPM_OK;
}

dlpm_status dlpm_from_legacy(DLManagedTensor* legacy, DLManagedTensorVersioned** out) noexcept {
  return from_legacy(legacy, dm::legacy_access::read_only, out);
}

dlpm_status dlpm_from_legacy_writable(DLManagedTensor* legacy, DLManagedTensorVersioned** out) noexcept {
  return from_legacy(legacy, dm::legacy_access::writable, out);
}

// One vocabulary for the cause, too.
static_assert(DLPM_READ_ONLY_NONE == static_cast<int>(dm::read_only_cause::none));
static_assert(DLPM_READ_ONLY_FLAGGED == static_cast<int>(dm::read_only_cause::flagged));
static_assert(DLPM_READ_ONLY_LEGACY_UNKNOWN == static_cast<int>(dm::read_only_cause::legacy_unknown));
static_assert(DLPM_READ_ONLY_PRODUCER_FORBIDS == static_cast<int>(dm::read_only_cause::producer_forbids));

int32_t dlpm_managed_read_only_cause(const DLManagedTensorVersioned* tensor, const char** reason) noexcept {
  if (reason != nullptr) *reason = nullptr;
  if (tensor == nullptr || tensor->version.major != DLPACK_MAJOR_VERSION) return DLPM_READ_ONLY_NONE;
  return static_cast<int32_t>(dm::read_only_cause_of(tensor, reason));
}

dlpm_status dlpm_managed_forbid_writes(DLManagedTensorVersioned* tensor, int32_t cause, const char* reason,
                                       DLManagedTensorVersioned** out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_managed_forbid_writes", "tensor");
  if (out == nullptr) return null_argument("dlpm_managed_forbid_writes", "out");
  auto wrapped = dm::forbid_writes(tensor, static_cast<dm::read_only_cause>(cause), reason);
  if (!wrapped) return fail(wrapped.error());
  *out = *wrapped;
  return DLPM_OK;
}

dlpm_status dlpm_to_legacy(DLManagedTensorVersioned* tensor, DLManagedTensor** out) noexcept {
  if (tensor == nullptr) return null_argument("dlpm_to_legacy", "tensor");
  if (out == nullptr) return null_argument("dlpm_to_legacy", "out");
  auto wrapped = dm::versioned_to_legacy(tensor);
  if (!wrapped) return fail(wrapped.error());
  *out = *wrapped;
  return DLPM_OK;
}

}  // extern "C"
