// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpm_fast_paths: the silent success paths against the worded checks, the same rule texts.
//
//   dlpm_fast_paths [--cases N] [--seed S] [--first I] [--max-seconds T] [--no-examples]
//   dlpm_fast_paths --replay HEX           # one case (tensor, requirements, flags)
//
// check_structure with detail::silent and detail::requirements_met are the silent
// instantiations of the rules that check_structure with an error* and
// detail::requirements_failure word: one text, but the silent requirements skip
// check_requirements_valid (each use refuses the nonsense it words) and the compiler folds
// each form its own way. check_requirements and try_make_managed_tensor run the silent form
// and ask the worded one only when it says no, so a silent form that accepts what the
// worded one refuses lets a bad tensor through (and one that refuses what it accepts costs
// a second pass). (The typed import's two instances are compared by dlpm_differential.)
// For every case:
//
//   - the silent check_structure(t, opts) accepts exactly when the worded one does, for the
//     four structure_options (NULL strides row_major/reject x subbyte padded/packed); when
//     both accept, its numel is the summary's and its C-contiguity is is_compact_valid's
//     (the worded path's test) and the reference model's;
//   - requirements_met(t, flags, req) is true exactly when requirements_failure(t, flags,
//     req) finds no broken rule, and a refusal has an errc and a message;
//   - the public check_requirements returns the same verdict, with the worded path's errc
//     and message on a refusal;
//   - try_make_managed_tensor(t, owner, flags) accepts exactly when check_structure(t,
//     {row_major, padded from flags}) does, with its errc and message on a refusal (the
//     owner then untouched); on success it copies shape and stride_at's strides (an
//     empty tensor's: those of NULL strides, row-major) and releases the owner once.
//
// Tensors come from the differential test's generator (dlpm_differential::generate_case:
// same seeds, same tensors); the requirements and flags are generated here from the
// tensor, edge-biased. N defaults to $DLPM_FAST_PATHS_CASES, else a count that keeps the
// sanitizer CTest run to a few seconds. Exit status 1 on any disagreement, after printing
// one reproducer per kind of disagreement.
#include "campaign_options.hpp"
#include "differential.hpp"

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace dm = dlpack_mdspan;
namespace dd = dlpm_differential;
namespace ref = dlpm_reference;
using ref::chance;
using ref::i128;

constexpr std::uint64_t default_cases = 100000;
constexpr std::uint64_t default_seed = 0xfa57ba7c5ULL;
constexpr int max_device_types = 8;

// ---- requirements and flags, as plain data ------------------------------------------------
struct requirements_spec {
  bool any_dtype = true;
  DLDataType dtype{};
  std::int32_t ndim = -1;
  bool has_shape = false;  // entries: ndim of them when ndim is a rank 0..64, else none
  std::array<std::int64_t, ref::max_ndim> shape{};
  char order = 0;
  bool has_device_types = false;  // entries: num_device_types of them when positive, else none
  std::int32_t num_device_types = 0;
  std::array<std::int32_t, max_device_types> device_types{};
  std::int32_t device_id = -1;
  std::uint64_t min_alignment = 0;
  bool writable = false;
  bool reject_null_strides = false;
  std::uint64_t flags = 0;  // the managed tensor's
};

std::size_t shape_entries(const requirements_spec& s) {
  return s.ndim >= 0 && s.ndim <= ref::max_ndim ? static_cast<std::size_t>(s.ndim) : 0;
}
std::size_t device_type_entries(const requirements_spec& s) {
  return static_cast<std::size_t>(std::clamp(s.num_device_types, 0, max_device_types));
}

// Made real with exactly sized heap arrays (none at all where the lists have no entries),
// so that any read past what the requirements describe is an AddressSanitizer report.
struct live_requirements {
  dm::tensor_requirements req;
  std::unique_ptr<std::int64_t[]> shape;
  std::unique_ptr<std::int32_t[]> types;

  explicit live_requirements(const requirements_spec& s) {
    req.check_dtype = !s.any_dtype;
    req.dtype = s.dtype;
    req.ndim = s.ndim;
    if (s.has_shape) {
      const std::size_t n = shape_entries(s);
      shape.reset(new std::int64_t[n]);
      std::copy_n(s.shape.begin(), n, shape.get());
      req.shape = shape.get();
    }
    req.order = s.order;
    if (s.has_device_types) {
      const std::size_t n = device_type_entries(s);
      types.reset(new std::int32_t[n]);
      std::copy_n(s.device_types.begin(), n, types.get());
      req.device_types = types.get();
    }
    req.num_device_types = s.num_device_types;
    req.device_id = s.device_id;
    req.min_alignment = s.min_alignment;
    req.writable = s.writable;
    req.null_strides = s.reject_null_strides ? dm::null_strides_policy::reject : dm::null_strides_policy::row_major;
  }
  live_requirements(const live_requirements&) = delete;
  live_requirements& operator=(const live_requirements&) = delete;
};

// ---- generation -----------------------------------------------------------------------
// Edge-biased: each field matches the tensor, misses it, or is out of its domain; then, for
// about half the cases, the fields are pulled back to ones the tensor likely meets, so
// that acceptance (and the rules after the structure) are reached often.
template <class Source>
requirements_spec generate_requirements(Source& src, const ref::case_spec& c) {
  requirements_spec r;
  const auto wrap_add = [](std::int32_t v, std::uint32_t d) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(v) + d);
  };
  const auto tensor_extent = [&](std::size_t i) {
    // The spec's value, whatever the shape pointer: the requirements are compared with it
    // only after the structure (pointer, alignment) has been accepted.
    return i < static_cast<std::size_t>(std::clamp(c.ndim, 0, ref::max_ndim)) ? c.shape[i] : std::int64_t{3};
  };
  constexpr std::size_t n_valid = sizeof(ref::valid_dtypes) / sizeof(ref::valid_dtypes[0]);
  constexpr std::size_t n_invalid = sizeof(ref::invalid_dtypes) / sizeof(ref::invalid_dtypes[0]);

  // dtype
  r.any_dtype = chance(src, 30);
  switch (src.below(10)) {
    case 6: r.dtype = ref::valid_dtypes[src.below(n_valid)]; break;
    case 7: r.dtype = ref::invalid_dtypes[src.below(n_invalid)]; break;
    case 8:  // the same code and bits, other lanes
      r.dtype = c.dtype;
      r.dtype.lanes = static_cast<std::uint16_t>(chance(src, 50) ? r.dtype.lanes + 1 : src.below(3));
      break;
    case 9:  // the same code and lanes, other bits
      r.dtype = c.dtype;
      r.dtype.bits = static_cast<std::uint8_t>(chance(src, 50) ? r.dtype.bits ^ 8 : r.dtype.bits + 1);
      break;
    default: r.dtype = c.dtype; break;
  }

  // ndim: any, the tensor's, off by one, another rank, out of range
  {
    const std::uint64_t k = src.below(100);
    static constexpr std::int32_t invalid[] = {-2, -3, INT32_MIN, ref::max_ndim + 1, INT32_MAX, 1000};
    if (k < 30) r.ndim = -1;
    else if (k < 72) r.ndim = c.ndim;
    else if (k < 82) r.ndim = wrap_add(c.ndim, chance(src, 50) ? 1u : ~0u);
    else if (k < 92) r.ndim = static_cast<std::int32_t>(src.below(6));
    else if (k < 95) r.ndim = ref::max_ndim;
    else r.ndim = invalid[src.below(sizeof invalid / sizeof invalid[0])];
  }

  // shape: entries equal, wildcards (-1 or any negative), off by one, edge values
  if (chance(src, 35)) {
    r.has_shape = true;
    for (std::size_t i = 0; i < shape_entries(r); ++i) {
      const std::int64_t have = tensor_extent(i);
      const std::uint64_t k = src.below(12);
      r.shape[i] = k < 6    ? have
                   : k < 8  ? -1
                   : k < 9  ? (chance(src, 50) ? INT64_MIN : -2)
                   : k < 10 ? static_cast<std::int64_t>(static_cast<std::uint64_t>(have) + 1u)
                            : ref::edge_value(src);
    }
  }

  // order
  {
    static constexpr char orders[] = {0, 0, 0, 'C', 'C', 'C', 'F', 'F', 'A', 'A'};
    static constexpr char invalid[] = {'c', 'f', 'a', 'X', 1, static_cast<char>(-67)};
    r.order = chance(src, 90) ? orders[src.below(sizeof orders)] : invalid[src.below(sizeof invalid)];
  }

  // device types: none (any), listed, listed among others, not listed, an empty list, a
  // negative count (with a list; without one the count is ignored)
  {
    const std::int32_t have = static_cast<std::int32_t>(c.device.device_type);
    const std::uint64_t k = src.below(100);
    if (k < 40) {
      r.has_device_types = false;
      r.num_device_types = chance(src, 80) ? 0 : chance(src, 50) ? -1 : 3;
    } else {
      r.has_device_types = true;
      auto list = [&](std::initializer_list<std::int32_t> types) {
        r.num_device_types = static_cast<std::int32_t>(types.size());
        std::copy(types.begin(), types.end(), r.device_types.begin());
      };
      if (k < 60) list({have});
      else if (k < 72) list({kDLCUDA, kDLOpenCL, kDLCUDAHost, have});
      else if (k < 78) list({have, kDLCPU});
      else if (k < 85) list({wrap_add(have, 1u)});
      else if (k < 88) list({kDLROCM, wrap_add(have, ~0u)});
      else if (k < 93) r.num_device_types = 0;  // listed, but nothing
      else {
        r.device_types[0] = have;  // a negative count lists nothing, whatever the array holds
        r.num_device_types = chance(src, 50) ? -1 : INT32_MIN;
      }
    }
  }

  // device_id: any, the tensor's, another ordinal, out of range
  {
    const std::uint64_t k = src.below(100);
    static constexpr std::int32_t invalid[] = {-2, -7, INT32_MIN};
    if (k < 50) r.device_id = -1;
    else if (k < 72) r.device_id = c.device.device_id;
    else if (k < 82) r.device_id = wrap_add(c.device.device_id, 1u);
    else if (k < 94) r.device_id = static_cast<std::int32_t>(src.below(3));
    else r.device_id = invalid[src.below(3)];
  }

  // min_alignment: none, powers of two, not powers of two
  {
    static constexpr std::uint64_t pow2[] = {1, 2, 4, 8, 16, 32, 64, 4096, std::uint64_t{1} << 40, std::uint64_t{1} << 63};
    static constexpr std::uint64_t other[] = {3, 6, 12, 48, 100, (std::uint64_t{1} << 63) + 1, (std::uint64_t{3} << 39),
                                              UINT64_MAX};
    const std::uint64_t k = src.below(100);
    r.min_alignment = k < 45   ? 0
                      : k < 92 ? pow2[src.below(sizeof pow2 / sizeof pow2[0])]
                               : other[src.below(sizeof other / sizeof other[0])];
  }

  r.writable = chance(src, 30);
  r.reject_null_strides = chance(src, 25);
  {
    using dm::flag_is_copied, dm::flag_is_subbyte_type_padded, dm::flag_read_only;
    static constexpr std::uint64_t choices[] = {0,
                                                0,
                                                0,
                                                flag_read_only,
                                                flag_read_only,
                                                flag_is_copied,
                                                flag_is_subbyte_type_padded,
                                                flag_is_subbyte_type_padded,
                                                flag_read_only | flag_is_subbyte_type_padded,
                                                flag_read_only | flag_is_copied,
                                                flag_is_copied | flag_is_subbyte_type_padded,
                                                flag_read_only | flag_is_copied | flag_is_subbyte_type_padded};
    r.flags = chance(src, 4) ? src.u64() : choices[src.below(sizeof choices / sizeof choices[0])];
  }

  if (chance(src, 50)) {  // benign: requirements the tensor likely meets
    r.dtype = c.dtype;
    if (r.ndim != -1 || r.has_shape) r.ndim = c.ndim;  // a shape needs a rank
    if (r.has_shape)
      for (std::size_t i = 0; i < shape_entries(r); ++i)
        r.shape[i] = chance(src, 30) ? -1 : tensor_extent(i);
    static constexpr char good[] = {0, 0, 'C', 'C', 'F', 'A'};
    r.order = good[src.below(sizeof good)];
    if (r.has_device_types) {
      if (r.num_device_types < 1) r.num_device_types = 1;
      r.device_types[src.below(static_cast<std::uint64_t>(r.num_device_types))] = static_cast<std::int32_t>(c.device.device_type);
    }
    if (r.device_id != -1 && chance(src, 70)) r.device_id = chance(src, 50) ? -1 : c.device.device_id;
    static constexpr std::uint64_t small_aligns[] = {0, 0, 0, 1, 2, 4, 8, 16, 64};
    r.min_alignment = small_aligns[src.below(sizeof small_aligns / sizeof small_aligns[0])];
    if (chance(src, 70)) r.reject_null_strides = false;
    if (chance(src, 60)) r.writable = false;
  }
  return r;
}

// ---- literal encoding (the reproducer: the tensor's bytes, then these) ------------------
std::vector<unsigned char> encode_requirements(const requirements_spec& s) {
  ref::writer w;
  w.put<std::uint8_t>(s.any_dtype ? 1 : 0);
  w.put<std::uint8_t>(s.dtype.code);
  w.put<std::uint8_t>(s.dtype.bits);
  w.put<std::uint16_t>(s.dtype.lanes);
  w.put<std::int32_t>(s.ndim);
  w.put<std::uint8_t>(s.has_shape ? 1 : 0);
  if (s.has_shape)
    for (std::size_t i = 0; i < shape_entries(s); ++i) w.put<std::int64_t>(s.shape[i]);
  w.put<std::int8_t>(static_cast<std::int8_t>(s.order));
  w.put<std::uint8_t>(s.has_device_types ? 1 : 0);
  w.put<std::int32_t>(s.num_device_types);
  if (s.has_device_types)
    for (std::size_t i = 0; i < device_type_entries(s); ++i) w.put<std::int32_t>(s.device_types[i]);
  w.put<std::int32_t>(s.device_id);
  w.put<std::uint64_t>(s.min_alignment);
  w.put<std::uint8_t>(s.writable ? 1 : 0);
  w.put<std::uint8_t>(s.reject_null_strides ? 1 : 0);
  w.put<std::uint64_t>(s.flags);
  return w.bytes;
}

requirements_spec decode_requirements(ref::byte_source& in) {
  requirements_spec s;
  s.any_dtype = (in.take(1) & 1) != 0;
  s.dtype.code = static_cast<std::uint8_t>(in.take(1));
  s.dtype.bits = static_cast<std::uint8_t>(in.take(1));
  s.dtype.lanes = static_cast<std::uint16_t>(in.take(2));
  s.ndim = static_cast<std::int32_t>(in.take(4));
  s.has_shape = (in.take(1) & 1) != 0;
  if (s.has_shape)
    for (std::size_t i = 0; i < shape_entries(s); ++i) s.shape[i] = static_cast<std::int64_t>(in.take(8));
  s.order = static_cast<char>(in.take(1));
  s.has_device_types = (in.take(1) & 1) != 0;
  s.num_device_types = std::min(static_cast<std::int32_t>(in.take(4)), max_device_types);
  if (s.has_device_types)
    for (std::size_t i = 0; i < device_type_entries(s); ++i) s.device_types[i] = static_cast<std::int32_t>(in.take(4));
  s.device_id = static_cast<std::int32_t>(in.take(4));
  s.min_alignment = in.take(8);
  s.writable = (in.take(1) & 1) != 0;
  s.reject_null_strides = (in.take(1) & 1) != 0;
  s.flags = in.take(8);
  return s;
}

std::string replay_hex(const ref::case_spec& c, const requirements_spec& r) {
  const auto tensor = ref::encode_literal(c);
  const auto reqs = encode_requirements(r);
  std::vector<unsigned char> bytes;
  const auto n = static_cast<std::uint16_t>(tensor.size());
  bytes.push_back(static_cast<unsigned char>(n & 0xff));
  bytes.push_back(static_cast<unsigned char>(n >> 8));
  bytes.insert(bytes.end(), tensor.begin(), tensor.end());
  bytes.insert(bytes.end(), reqs.begin(), reqs.end());
  return ref::to_hex(bytes);
}

std::string describe_requirements(const requirements_spec& s) {
  char line[512];
  std::string out;
  std::snprintf(line, sizeof line, "  requirements = {any_dtype %d, dtype {code %u, bits %u, lanes %u}, ndim %d, shape ",
                s.any_dtype ? 1 : 0, s.dtype.code, s.dtype.bits, s.dtype.lanes, s.ndim);
  out += line;
  if (!s.has_shape) {
    out += "NULL";
  } else {
    out += "{";
    for (std::size_t i = 0; i < shape_entries(s); ++i) out += (i ? ", " : "") + std::to_string(s.shape[i]);
    out += "}";
  }
  std::snprintf(line, sizeof line, ", order %d ('%c'), device_types ", static_cast<int>(s.order),
                s.order >= 32 && s.order < 127 ? s.order : '?');
  out += line;
  if (!s.has_device_types) {
    out += "NULL";
  } else {
    out += "{";
    for (std::size_t i = 0; i < device_type_entries(s); ++i) out += (i ? ", " : "") + std::to_string(s.device_types[i]);
    out += "}";
  }
  std::snprintf(line, sizeof line,
                " (num %d), device_id %d, min_alignment %llu, writable %d, null_strides %s}\n  flags = 0x%llx\n",
                s.num_device_types, s.device_id, static_cast<unsigned long long>(s.min_alignment), s.writable ? 1 : 0,
                s.reject_null_strides ? "reject" : "row_major", static_cast<unsigned long long>(s.flags));
  out += line;
  return out;
}

// ---- the comparison ---------------------------------------------------------------------
// The reference model's C order on an accepted tensor: walking from the fastest dimension,
// every extent > 1 needs stride == the product of the extents walked so far (exact).
bool model_c_contiguous(const ref::structure_model& m, std::int32_t ndim) {
  if (m.numel == 0) return true;
  i128 expected = 1;
  for (std::int32_t r = ndim - 1; r >= 0; --r) {
    const auto i = static_cast<std::size_t>(r);
    if (m.e[i] > 1 && m.s[i] != expected) return false;
    expected = ref::mul(expected, m.e[i]);
  }
  return true;
}

// Nothing but counting: released once when the managed tensor goes, never on a refusal.
struct counting_owner {
  long* released;
  explicit counting_owner(long* r) noexcept : released(r) {}
  counting_owner(counting_owner&& o) noexcept : released(std::exchange(o.released, nullptr)) {}
  counting_owner(const counting_owner&) = delete;
  counting_owner& operator=(const counting_owner&) = delete;
  counting_owner& operator=(counting_owner&&) = delete;
  ~counting_owner() {
    if (released != nullptr) ++*released;
  }
};

class fast_paths {
 public:
  struct group {
    std::uint64_t count = 0;
    std::string reproducer;
  };
  std::uint64_t cases = 0, comparisons = 0, disagreements = 0;
  std::uint64_t structure_accepted = 0, structure_refused = 0, requirements_accepted = 0, requirements_refused = 0;
  std::uint64_t managed_accepted = 0, managed_refused = 0, c_contiguous_accepted = 0;
  std::array<std::uint64_t, 64> requirement_refusals{};  // by errc (coverage)
  std::map<std::string, group> groups;

  fast_paths() {
#ifdef DLPM_DIFFERENTIAL_SANITIZED
    // A sanitizer report ends the process inside the core: say which case it was.
    __sanitizer_set_death_callback(&print_current_case);
#endif
  }

  void run(const ref::case_spec& c, const requirements_spec& rs) {
    ++cases;
    current() = {&c, &rs};
    const ref::live_tensor live(c);
    const live_requirements lr(rs);
    check_structure_paths(live.t);
    check_requirement_paths(live.t, rs.flags, lr.req);
    check_managed(live.t, rs.flags);
    current() = {nullptr, nullptr};
  }

  void print_report(std::FILE* out) const {
    for (const auto& [key, g] : groups)
      std::fprintf(out, "\n=== DISAGREEMENT x%llu: %s\n%s", static_cast<unsigned long long>(g.count), key.c_str(),
                   g.reproducer.c_str());
  }

  void print_coverage(std::FILE* out) const {
    std::fprintf(out, "  requirements refusals by errc:");
    for (std::size_t i = 0; i < requirement_refusals.size(); ++i)
      if (requirement_refusals[i] != 0)
        std::fprintf(out, " %s %llu", ref::errc_id(static_cast<dm::errc>(i)),
                     static_cast<unsigned long long>(requirement_refusals[i]));
    std::fprintf(out, "\n");
  }

 private:
  struct case_ref {
    const ref::case_spec* c;
    const requirements_spec* r;
  };
  static case_ref& current() {
    static case_ref now{nullptr, nullptr};
    return now;
  }

  static std::string reproducer(const case_ref& k) {
    return ref::describe(*k.c) + describe_requirements(*k.r) + "  reproduce: dlpm_fast_paths --replay " + replay_hex(*k.c, *k.r) +
           "\n";
  }

  static void print_current_case() {
    const case_ref k = current();
    if (k.c == nullptr) return;
    std::fprintf(stderr, "\n=== the sanitizer report above happened in this case:\n%s", reproducer(k).c_str());
  }

  void disagree(const std::string& key, const std::string& detail = {}) {
    ++disagreements;
    group& g = groups[key];
    if (g.count++ == 0) g.reproducer = detail + (detail.empty() ? "" : "\n") + reproducer(current());
  }

// One comparison; the key and the detail are only worded when it fails.
#define DLPM_EXPECT(ok, ...)          \
  do {                                \
    ++comparisons;                    \
    if (!(ok)) disagree(__VA_ARGS__); \
  } while (0)

  static std::string verdict(bool accepted, const dm::error& e) {
    return accepted ? std::string("accepts") : std::string("refuses (") + ref::errc_id(e.code()) + ": " + e.message().c_str() + ")";
  }

  // The silent check_structure vs the worded one, the four option sets.
  void check_structure_paths(const DLTensor& t) {
    for (const bool reject : {false, true}) {
      for (const bool padded : {false, true}) {
        const dm::structure_options opts{reject ? dm::null_strides_policy::reject : dm::null_strides_policy::row_major, padded};
        const auto fn = [&] {
          return std::string("{null_strides ") + (reject ? "reject" : "row_major") + ", subbyte_padded " + (padded ? "on" : "off") +
                 "}";
        };
        dm::tensor_summary silent_summary;
        silent_summary.numel = -7;
        const bool fast = dm::check_structure(t, opts, silent_summary, dm::detail::silent{});
        const std::int64_t numel = silent_summary.numel;
        const bool row_major = silent_summary.row_major;
        dm::tensor_summary summary;
        dm::error err;
        const bool ordered = dm::check_structure(t, opts, summary, &err);
        (ordered ? structure_accepted : structure_refused) += 1;
        DLPM_EXPECT(fast == ordered, "silent check_structure" + fn() + (fast ? " accepts" : " refuses") + ", check_structure " +
                                    (ordered ? "accepts" : std::string("refuses with ") + ref::errc_id(err.code())),
               "  check_structure " + verdict(ordered, err));
        if (!fast || !ordered) continue;
        DLPM_EXPECT(numel == summary.numel, "silent check_structure" + fn() + ": numel differs from check_structure's summary",
               "  silent check_structure " + std::to_string(numel) + ", summary " + std::to_string(summary.numel));
        const bool c_ordered = dm::detail::is_compact_valid(t, summary.numel, true);
        DLPM_EXPECT(row_major == c_ordered, "silent check_structure" + fn() + ": C-contiguity differs from is_compact_valid",
               "  silent check_structure " + std::to_string(row_major) + ", is_compact_valid " + std::to_string(c_ordered));
        const ref::structure_model m = ref::structure(t, reject, padded);
        DLPM_EXPECT(m.ok(), "silent check_structure" + fn() + ": accepted, the reference model says it violates " + ref::to_string(m.v));
        if (m.ok()) {
          DLPM_EXPECT(numel == m.numel, "silent check_structure" + fn() + ": numel differs from the reference model's",
                 "  silent check_structure " + std::to_string(numel) + ", model " + ref::to_string(m.numel));
          const bool c_model = model_c_contiguous(m, t.ndim);
          DLPM_EXPECT(row_major == c_model, "silent check_structure" + fn() + ": C-contiguity differs from the reference model's",
                 "  silent check_structure " + std::to_string(row_major) + ", model " + std::to_string(c_model));
        }
        c_contiguous_accepted += row_major;
      }
    }
  }

  // requirements_met vs requirements_failure, and check_requirements.
  void check_requirement_paths(const DLTensor& t, std::uint64_t flags, const dm::tensor_requirements& req) {
    const bool fast = dm::detail::requirements_met(t, flags, req);
    // The element count it reports on success (the C facade's dlpm_check_layout passes it
    // on) is dm::numel's; the verdict is the same with or without the out-parameter.
    dm::tensor_summary summary;
    summary.numel = -1;
    DLPM_EXPECT(dm::detail::requirements_met(t, flags, req, &summary) == fast,
                "requirements_met decides differently when asked for the element count");
    const std::int64_t counted = summary.numel;
    if (fast) {
      const auto n = dm::numel(t);
      DLPM_EXPECT(n && *n == counted, "requirements_met reports an element count other than dm::numel's",
                  "  requirements_met " + std::to_string(counted) + ", dm::numel " +
                      (n ? std::to_string(*n) : std::string("fails")));
    }
    dm::error err;
    const bool ordered = dm::detail::requirements_failure(t, flags, req, &err);
    (ordered ? requirements_accepted : requirements_refused) += 1;
    if (!ordered) ++requirement_refusals[static_cast<std::size_t>(err.code()) % 64];
    DLPM_EXPECT(fast == ordered, std::string("requirements_met ") + (fast ? "accepts" : "refuses") + ", requirements_failure " +
                                (ordered ? "finds no broken rule" : std::string("refuses with ") + ref::errc_id(err.code())),
           "  requirements_failure " + verdict(ordered, err));
    if (!ordered)
      DLPM_EXPECT(err.code() != dm::errc::ok && err.message().c_str()[0] != '\0',
             "requirements_failure refuses without an errc or a message");

    dm::error public_err;
    const bool pub = dm::check_requirements(t, flags, req, &public_err);
    DLPM_EXPECT(pub == ordered, std::string("check_requirements ") + (pub ? "accepts" : "refuses") + ", the ordered path " +
                               (ordered ? "accepts" : "refuses"),
           "  check_requirements " + verdict(pub, public_err) + "\n  requirements_failure " + verdict(ordered, err));
    if (!pub && !ordered) {
      DLPM_EXPECT(public_err.code() == err.code(),
             std::string("check_requirements refuses with ") + ref::errc_id(public_err.code()) + ", the ordered path with " +
                 ref::errc_id(err.code()));
      DLPM_EXPECT(std::strcmp(public_err.message().c_str(), err.message().c_str()) == 0,
             "check_requirements words its refusal unlike the ordered path",
             std::string("  check_requirements: ") + public_err.message().c_str() + "\n  ordered path:       " +
                 err.message().c_str());
    }
  }

  // try_make_managed_tensor: check_structure's verdict under {row_major, padded from flags}.
  void check_managed(const DLTensor& t, std::uint64_t flags) {
    const dm::structure_options opts{dm::null_strides_policy::row_major, (flags & dm::flag_is_subbyte_type_padded) != 0};
    dm::tensor_summary summary;
    dm::error err;
    const bool ordered = dm::check_structure(t, opts, summary, &err);
    long released = 0;
    {
      counting_owner owner(&released);
      auto made = dm::try_make_managed_tensor(t, std::move(owner), flags);
      (made.has_value() ? managed_accepted : managed_refused) += 1;
      DLPM_EXPECT(made.has_value() == ordered,
             std::string("try_make_managed_tensor ") + (made.has_value() ? "accepts" : "refuses") + ", check_structure " +
                 (ordered ? "accepts" : std::string("refuses with ") + ref::errc_id(err.code())),
             "  try_make_managed_tensor " + verdict(made.has_value(), made.has_value() ? dm::error{} : made.error()) +
                 "\n  check_structure " + verdict(ordered, err));
      if (!made.has_value()) {
        DLPM_EXPECT(owner.released != nullptr, "try_make_managed_tensor refuses but moved from the owner");
        if (!ordered) {
          DLPM_EXPECT(made.error().code() == err.code(),
                 std::string("try_make_managed_tensor refuses with ") + ref::errc_id(made.error().code()) +
                     ", check_structure with " + ref::errc_id(err.code()));
          DLPM_EXPECT(std::strcmp(made.error().message().c_str(), err.message().c_str()) == 0,
                 "try_make_managed_tensor words its refusal unlike check_structure",
                 std::string("  try_make_managed_tensor: ") + made.error().message().c_str() + "\n  check_structure:        " +
                     err.message().c_str());
        }
      } else if (ordered) {
        const DLManagedTensorVersioned* m = made->get();
        const DLTensor& o = m->dl_tensor;
        bool same = o.data == t.data && o.ndim == t.ndim && o.byte_offset == t.byte_offset &&
                    std::bit_cast<std::uint32_t>(o.dtype) == std::bit_cast<std::uint32_t>(t.dtype) &&
                    o.device.device_type == t.device.device_type && o.device.device_id == t.device.device_id &&
                    m->flags == flags && m->version.major == DLPACK_MAJOR_VERSION && m->version.minor == DLPACK_MINOR_VERSION &&
                    (t.ndim == 0) == (o.shape == nullptr) && (t.ndim == 0) == (o.strides == nullptr);
        std::string where;
        // An empty tensor leaves with the strides NULL stands for (row-major), whatever it was given.
        bool empty = false;
        for (std::int32_t r = 0; r < t.ndim; ++r) empty = empty || t.shape[r] == 0;
        DLTensor shape_only = t;
        shape_only.strides = nullptr;
        if (same) {
          for (std::int32_t r = 0; r < t.ndim && same; ++r) {
            const std::int64_t want = dm::stride_at(empty ? shape_only : t, r);
            if (o.shape[r] != t.shape[r] || o.strides[r] != want) {
              same = false;
              where = "  dim " + std::to_string(r) + ": shape " + std::to_string(o.shape[r]) + " (want " +
                      std::to_string(t.shape[r]) + "), stride " + std::to_string(o.strides[r]) + " (want stride_at " +
                      std::to_string(want) + ")";
            }
          }
        }
        DLPM_EXPECT(same, "try_make_managed_tensor: the built tensor differs from the description (shape, stride_at's strides, "
                     "fields, flags, version)",
               where);
      }
    }
    // The owner is released exactly once: by the managed tensor, or (refused) as the local.
    DLPM_EXPECT(released == 1, "try_make_managed_tensor: the owner released " + std::to_string(released) + " times");
  }
#undef DLPM_EXPECT
};

// The requirements of case `index`: their own stream, from the seed and the index.
ref::rng_source requirement_source(std::uint64_t seed, std::uint64_t index) {
  ref::rng_source mix(seed ^ 0x6a09e667f3bcc909ULL);
  return ref::rng_source(mix.u64() + index * 0xd1342543de82ef95ULL);
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = dlpm_reference::parse_campaign_options(argc, argv, "DLPM_FAST_PATHS_CASES", default_cases,
                                                             "DLPM_FAST_PATHS_SEED", default_seed, false);
  const std::uint64_t cases = options.cases, seed = options.seed, first = options.first;
  const double max_seconds = options.max_seconds;
  const std::string& replay = options.replay;
  const bool examples = options.examples;

  fast_paths fp;
  const auto start = std::chrono::steady_clock::now();
  if (!replay.empty()) {
    const auto bytes = ref::from_hex(replay);
    const std::size_t n = bytes.size() >= 2 ? std::min<std::size_t>(bytes[0] | (std::size_t{bytes[1]} << 8), bytes.size() - 2) : 0;
    const auto spec = dd::decode_case(bytes.data() + 2, n);
    ref::byte_source rest{bytes.data() + 2 + n, bytes.size() - 2 - n};
    const requirements_spec rs = decode_requirements(rest);
    std::printf("replaying:\n%s%s", ref::describe(spec).c_str(), describe_requirements(rs).c_str());
    fp.run(spec, rs);
  } else {
    if (examples) {  // the differential's edge examples, each under a few generated requirements
      std::uint64_t k = 0;
      for (const auto& ex : dd::edge_examples())
        for (int j = 0; j < 16; ++j, ++k) {
          ref::rng_source src = requirement_source(seed ^ 0xe8a3, k);
          fp.run(ex.spec, generate_requirements(src, ex.spec));
        }
    }
    for (std::uint64_t i = 0; i < cases; ++i) {
      const ref::case_spec spec = dd::generate_case(seed, first + i);
      ref::rng_source src = requirement_source(seed, first + i);
      fp.run(spec, generate_requirements(src, spec));
      if (max_seconds > 0 && (i & 1023) == 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > max_seconds)
        break;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fp.print_report(stdout);
  std::printf(
      "\nfast paths: %llu cases (seed 0x%llx), %llu comparisons, %llu disagreements in %zu kinds, %.1f s\n"
      "  check_structure accepted %llu, refused %llu (4 option sets per case; %llu accepted C-contiguous)\n"
      "  requirements accepted %llu, refused %llu; try_make_managed_tensor accepted %llu, refused %llu\n",
      static_cast<unsigned long long>(fp.cases), static_cast<unsigned long long>(seed),
      static_cast<unsigned long long>(fp.comparisons), static_cast<unsigned long long>(fp.disagreements), fp.groups.size(),
      seconds, static_cast<unsigned long long>(fp.structure_accepted), static_cast<unsigned long long>(fp.structure_refused),
      static_cast<unsigned long long>(fp.c_contiguous_accepted), static_cast<unsigned long long>(fp.requirements_accepted),
      static_cast<unsigned long long>(fp.requirements_refused), static_cast<unsigned long long>(fp.managed_accepted),
      static_cast<unsigned long long>(fp.managed_refused));
  fp.print_coverage(stdout);
  return fp.disagreements == 0 ? 0 : 1;
}
