// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Any valid DLPack tensor or strided mdspan as an MPI message buffer: a base address, a count
// and a datatype (a predefined one for a row-major compact tensor, else one committed derived
// datatype of nested hvectors, owned here), so MPI moves the elements where they lie, with no
// packing copy of ours.
//
// The message is the elements in row-major index order, whatever their layout: a transpose
// sent lands in a row-major array as the same logical matrix. The base address is element 0's
// (data + byte_offset, DLPack's meaning); the datatype's lower bound and extent are the bytes
// the elements reach, so negative strides place elements below it.
//
// Validation is the core's (check_structure, is_unique, byte_span, is_host_accessible); this
// header adds what MPI itself needs: whole-byte elements, counts the MPI library can express,
// and for a receive a writable layout that reaches no element twice.
#ifndef DLPACK_MDSPAN_MPI_HPP
#define DLPACK_MDSPAN_MPI_HPP

#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/export.hpp>
#include <dlpack_mdspan/layout_queries.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_Query_cuda_support
#endif

#include <climits>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace dlpack_mdspan::mpi {

/// MPI-4 counts are MPI_Count (the large-count constructors); MPI-3's are int.
#if MPI_VERSION >= 4
inline constexpr bool large_counts = true;
#else
inline constexpr bool large_counts = false;
#endif

/// Whether this MPI library moves device (CUDA) memory, asked at run time where the library
/// can say (Open MPI's MPIX_Query_cuda_support, MPICH's MPIX_GPU_query_support); false where
/// it cannot.
inline bool cuda_aware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int supported = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) == MPI_SUCCESS && supported != 0;
#else
  return false;
#endif
}

/// How one element travels: `count` items of the predefined `type`. Types MPI lacks
/// (float16, bfloat16, the fp8/fp6/fp4 families, float128, complex32) travel as their bytes
/// (`type` MPI_BYTE, `reducible` false): moved exactly, never reduced.
struct element_layout {
  MPI_Datatype type = MPI_BYTE;
  int count = 0;
  bool reducible = false;
};

namespace detail {

inline MPI_Datatype predefined_type(const DLDataType& d) noexcept {
  switch (d.code) {
    case kDLInt:
      switch (d.bits) {
        case 8: return MPI_INT8_T;
        case 16: return MPI_INT16_T;
        case 32: return MPI_INT32_T;
        case 64: return MPI_INT64_T;
      }
      break;
    case kDLUInt:
      switch (d.bits) {
        case 8: return MPI_UINT8_T;
        case 16: return MPI_UINT16_T;
        case 32: return MPI_UINT32_T;
        case 64: return MPI_UINT64_T;
      }
      break;
    case kDLFloat:
      if (d.bits == 32) return MPI_FLOAT;
      if (d.bits == 64) return MPI_DOUBLE;
      break;
    case kDLComplex:
      if (d.bits == 64) return MPI_C_FLOAT_COMPLEX;
      if (d.bits == 128) return MPI_C_DOUBLE_COMPLEX;
      break;
    case kDLBool:
      if (d.bits == 8) return MPI_C_BOOL;
      break;
  }
  return MPI_DATATYPE_NULL;
}

// An MPI call's failure, which validated input should never cause: named, never fatal here.
[[nodiscard]] DLPM_COLD inline error mpi_failure(const char* function, int code) noexcept {
  return error::format(errc::internal, "%s failed with MPI error code %d", function, code);
}

// MPI_Type_create_hvector, through the large-count constructor where the library has one.
inline int hvector(std::int64_t count, std::int64_t block, std::int64_t stride, MPI_Datatype old, MPI_Datatype* out) noexcept {
#if MPI_VERSION >= 4
  return MPI_Type_create_hvector_c(count, block, stride, old, out);
#else
  return MPI_Type_create_hvector(static_cast<int>(count), static_cast<int>(block), static_cast<MPI_Aint>(stride), old, out);
#endif
}

[[nodiscard]] DLPM_COLD inline error count_refusal(const char* what, std::int64_t value) noexcept {
  return error::format(errc::extent_overflow,
                       "MPI %d.%d counts are int: the %s of %lld is beyond INT_MAX (MPI-4's large-count "
                       "constructors would take it)",
                       MPI_VERSION, MPI_SUBVERSION, what, static_cast<long long>(value));
}

}  // namespace detail

/// The MPI datatype of one element of `dtype` stored in `itemsize` bytes: its predefined
/// type (lanes > 1: that many of them), or its bytes.
inline element_layout element_of(const DLDataType& dtype, std::uint64_t itemsize) noexcept {
  const MPI_Datatype base = detail::predefined_type(dtype);
  int size = 0;
  // The predefined type must be exactly the element's bytes (MPI_C_BOOL is not 1 byte everywhere).
  if (base != MPI_DATATYPE_NULL && MPI_Type_size(base, &size) == MPI_SUCCESS &&
      static_cast<std::uint64_t>(size) * dtype.lanes == itemsize)
    return element_layout{base, static_cast<int>(dtype.lanes), true};
  return element_layout{MPI_BYTE, static_cast<int>(itemsize), false};
}

/// What MPI's buffer arguments take for one tensor: `address()`, `count()`, `datatype()`.
/// A derived datatype is committed and owned: freed when this goes (unless MPI has been
/// finalized by then), so keep the buffer until every operation using it has completed.
class buffer {
 public:
  buffer() noexcept = default;
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  buffer(buffer&& other) noexcept { *this = std::move(other); }
  buffer& operator=(buffer&& other) noexcept {
    if (this != &other) {
      release();
      address_ = other.address_;
      count_ = other.count_;
      type_ = other.type_;
      element_ = other.element_;
      owned_ = std::exchange(other.owned_, false);
      other.type_ = MPI_DATATYPE_NULL;
    }
    return *this;
  }
  ~buffer() { release(); }

  /// Element 0's address (data + byte_offset): MPI's `buf`.
  [[nodiscard]] void* address() const noexcept { return address_; }
  /// MPI's `count`: the items of a predefined type for a compact tensor, 1 for a derived
  /// datatype, 0 for an empty tensor.
  [[nodiscard]] int count() const noexcept { return count_; }
  /// MPI's `datatype`.
  [[nodiscard]] MPI_Datatype datatype() const noexcept { return type_; }
  /// Whether datatype() is a derived datatype made (and freed) here.
  [[nodiscard]] bool derived() const noexcept { return owned_; }
  /// How one element travels.
  [[nodiscard]] const element_layout& element() const noexcept { return element_; }

  /// datatype() for MPI_Reduce, MPI_Allreduce and the other predefined reductions, or why
  /// not: an element that travels as bytes (float16, bfloat16, fp8...) cannot be added by
  /// MPI, and MPI's predefined operations take predefined datatypes only (Open MPI refuses
  /// MPI_SUM on a derived one), so the tensor must be compact row-major.
  [[nodiscard]] result<MPI_Datatype> reduction_datatype() const noexcept {
    if (!element_.reducible)
      return unexpected_error(error::format(errc::dtype_mismatch,
                                            "MPI has no type for these elements: they travel as %d bytes each, which "
                                            "MPI's reductions cannot combine; reduce in a wider type",
                                            element_.count));
    if (owned_)
      return unexpected_error(error(errc::non_compact_strides,
                                    "MPI's predefined reductions take predefined datatypes only, and this layout needs a "
                                    "derived one: reduce a compact row-major copy"));
    return type_;
  }

 private:
  friend result<buffer> make_buffer_from(const DLTensor&, std::uint64_t, bool) noexcept;
  void release() noexcept {
    if (!owned_) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Type_free(&type_);
    owned_ = false;
    type_ = MPI_DATATYPE_NULL;
  }
  void* address_ = nullptr;
  int count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  element_layout element_{};
  bool owned_ = false;
};

/// The buffer of a tensor, for sending (`receive` false: every valid layout, broadcast
/// strides included) or receiving (`receive` true: a writable layout that reaches each
/// element once). `flags` are a managed tensor's (READ_ONLY, IS_SUBBYTE_TYPE_PADDED); 0 for
/// a bare DLTensor. MPI must be initialized.
[[nodiscard]] inline result<buffer> make_buffer_from(const DLTensor& t, std::uint64_t flags, bool receive) noexcept {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return unexpected_error(error(errc::invalid_argument, "MPI is not initialized (or already finalized): call MPI_Init first"));
  error err;
  tensor_summary s;
  const structure_options opts{null_strides_policy::row_major, (flags & flag_is_subbyte_type_padded) != 0};
  if (!check_structure(t, opts, s, &err)) return unexpected_error(err);
  if (s.itemsize == 0)
    return unexpected_error(error::format(errc::subbyte_not_viewable,
                                          "%#x elements are packed below a byte and share bytes, and MPI addresses "
                                          "whole bytes: unpack them (or send the padded form)",
                                          dlpack_mdspan::detail::packed_dtype(t.dtype)));
  const std::int32_t device = t.device.device_type;
  if (!is_host_accessible(device) && !(device == kDLCUDA && cuda_aware()))
    return unexpected_error(error::format(errc::device_mismatch,
                                          "the tensor is in %s memory, which this MPI library cannot move%s",
                                          device_type_name(device),
                                          device == kDLCUDA ? " (it is not CUDA-aware: MPIX_Query_cuda_support says no)" : ""));
  if (receive) {
    if ((flags & flag_read_only) != 0)
      return unexpected_error(error(errc::read_only, "receive: the tensor is READ_ONLY; MPI would write into it"));
    const auto unique = is_unique(t);
    if (!unique) return unexpected_error(unique.error());
    if (!*unique)
      return unexpected_error(error(errc::overlapping_strides,
                                    "receive: the layout reaches an element twice (a zero or overlapping stride), so "
                                    "what MPI writes there would depend on the order it writes in"));
  }

  buffer b;
  b.element_ = element_of(t.dtype, s.itemsize);
  if (s.numel == 0) {  // nothing is addressed: data may be NULL
    b.address_ = t.data;
    b.type_ = b.element_.type;
    return b;
  }
  b.address_ = static_cast<char*>(t.data) + t.byte_offset;

  // The bytes the elements reach: the datatype's lower bound and extent (relative to element
  // 0), and the bound that keeps every byte stride below in int64.
  const auto span = byte_span(t, opts.subbyte_padded);
  if (!span) return unexpected_error(span.error());

  // The modes that step (extent > 1), outermost first; the innermost folded into the block
  // when it is the element's own size (rows stay runs of bytes), adjacent modes merged
  // where one steps over the other exactly.
  std::int64_t extents[max_ndim], steps[max_ndim];
  std::int32_t modes = 0;
  const auto item = static_cast<std::int64_t>(s.itemsize);
  for (std::int32_t r = 0; r < t.ndim; ++r) {
    if (t.shape[r] == 1) continue;
    const std::int64_t step = stride_at(t, r) * item;  // |step| * (extent - 1) is within the span
    if (modes > 0 && steps[modes - 1] == step * t.shape[r]) {
      extents[modes - 1] *= t.shape[r];  // numel bounds it
      steps[modes - 1] = step;
      continue;
    }
    extents[modes] = t.shape[r];
    steps[modes] = step;
    ++modes;
  }
  std::int64_t block = b.element_.count;
  if (modes > 0 && steps[modes - 1] == item) block *= extents[--modes];

  if (modes == 0) {  // compact, row-major: a count of the predefined type
    if (block <= INT_MAX) {
      b.type_ = b.element_.type;
      b.count_ = static_cast<int>(block);
      return b;
    }
    if constexpr (!large_counts) return unexpected_error(detail::count_refusal("element count", block));
  }
  if constexpr (!large_counts) {
    if (block > INT_MAX) return unexpected_error(detail::count_refusal("contiguous run", block));
    for (std::int32_t m = 0; m < modes; ++m)
      if (extents[m] > INT_MAX) return unexpected_error(detail::count_refusal("extent", extents[m]));
  }

  // Nested hvectors, innermost first; each intermediate is freed once the next holds it.
  MPI_Datatype type = b.element_.type;
  int rc = MPI_SUCCESS;
  if (modes == 0) rc = detail::hvector(1, block, 0, type, &type);  // a large count of a compact tensor
  for (std::int32_t m = modes; m-- > 0 && rc == MPI_SUCCESS;) {
    MPI_Datatype next = MPI_DATATYPE_NULL;
    rc = detail::hvector(extents[m], m == modes - 1 ? block : 1, steps[m], type, &next);
    if (type != b.element_.type) MPI_Type_free(&type);
    type = next;
  }
  if (rc != MPI_SUCCESS) return unexpected_error(detail::mpi_failure("MPI_Type_create_hvector", rc));

  MPI_Datatype resized = MPI_DATATYPE_NULL;
  const auto offset = static_cast<std::int64_t>(t.byte_offset);
  rc = MPI_Type_create_resized(type, static_cast<MPI_Aint>(span->begin - offset), static_cast<MPI_Aint>(span->end - span->begin),
                               &resized);
  MPI_Type_free(&type);
  if (rc != MPI_SUCCESS) return unexpected_error(detail::mpi_failure("MPI_Type_create_resized", rc));
  if ((rc = MPI_Type_commit(&resized)) != MPI_SUCCESS) {
    MPI_Type_free(&resized);
    return unexpected_error(detail::mpi_failure("MPI_Type_commit", rc));
  }
  b.type_ = resized;
  b.count_ = 1;
  b.owned_ = true;
  return b;
}

/// The buffer to send a tensor from: every valid layout, broadcast (zero) strides included.
[[nodiscard]] inline result<buffer> try_send_buffer(const DLTensor& t, std::uint64_t flags = 0) noexcept {
  return make_buffer_from(t, flags, false);
}
/// The buffer to receive into a tensor: writable (no READ_ONLY flag), each element reached once.
[[nodiscard]] inline result<buffer> try_receive_buffer(const DLTensor& t, std::uint64_t flags = 0) noexcept {
  return make_buffer_from(t, flags, true);
}
/// A managed tensor's, its flags read.
[[nodiscard]] inline result<buffer> try_send_buffer(const DLManagedTensorVersioned& t) noexcept {
  return make_buffer_from(t.dl_tensor, t.flags, false);
}
[[nodiscard]] inline result<buffer> try_receive_buffer(const DLManagedTensorVersioned& t) noexcept {
  return make_buffer_from(t.dl_tensor, t.flags, true);
}

/// An mdspan's (any strided mapping, exported by to_dlpack_tensor).
template <class M>
  requires requires(const M& m) { try_to_dlpack_tensor(m); }
[[nodiscard]] result<buffer> try_send_buffer(const M& m) noexcept {
  const auto t = try_to_dlpack_tensor(m);
  if (!t) return unexpected_error(t.error());
  return make_buffer_from(t->get(), 0, false);
}
/// An mdspan of mutable elements only: a const view cannot be received into.
template <class M>
  requires(!std::is_const_v<typename M::element_type>) && requires(const M& m) { try_to_dlpack_tensor(m); }
[[nodiscard]] result<buffer> try_receive_buffer(const M& m) noexcept {
  const auto t = try_to_dlpack_tensor(m);
  if (!t) return unexpected_error(t.error());
  return make_buffer_from(t->get(), 0, true);
}

/// The throwing forms (dlpack_error).
template <class T>
[[nodiscard]] buffer send_buffer(const T& t) {
  return dlpack_mdspan::detail::value_or_throw(try_send_buffer(t));
}
template <class T>
[[nodiscard]] buffer receive_buffer(const T& t) {
  return dlpack_mdspan::detail::value_or_throw(try_receive_buffer(t));
}

}  // namespace dlpack_mdspan::mpi

#endif
