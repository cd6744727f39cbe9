// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Structural validation of a foreign DLTensor, independent of any C++ type: the one core
// that to_mdspan, the owning tensors and the C facade all call.
//
// Every field of a DLTensor from another library is untrusted. Nothing here dereferences
// shape or strides when ndim == 0, does arithmetic on a NULL data pointer, or lets a
// product or sum overflow: each step is checked and fails with its own errc.
#ifndef DLPACK_MDSPAN_TENSOR_CHECKS_HPP
#define DLPACK_MDSPAN_TENSOR_CHECKS_HPP

#include <dlpack_mdspan/checked_arithmetic.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/dtype_name.hpp>
#include <dlpack_mdspan/error.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// The largest ndim accepted. DLPack sets no bound; NumPy's is 64. Anything above this is
/// treated as garbage rather than a tensor.
inline constexpr std::int32_t max_ndim = 64;

/// What NULL strides with ndim > 0 mean. Producers older than DLPack 1.2 (NumPy until
/// 2.x) send them for compact row-major tensors, so accepting them is the default.
enum class null_strides_policy : int {
  row_major = 0,  ///< treat as compact row-major (C order)
  reject = 1,     ///< fail with errc::null_strides
};

/// Options of the structural checks.
struct structure_options {
  null_strides_policy null_strides = null_strides_policy::row_major;
  /// DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: each sub-byte lane occupies a whole byte.
  /// Only a managed tensor's flags can say so; a bare DLTensor is packed.
  bool subbyte_padded = false;
};

/// What the structural checks learned about a tensor, in elements relative to the first
/// element (data + byte_offset).
struct tensor_summary {
  std::int64_t numel = 0;         ///< number of elements (0 for an empty tensor; see check_structure for one exception)
  std::int64_t lowest_index = 0;  ///< smallest element index reached (<= 0 with negative strides)
  std::int64_t highest_index = 0; ///< largest element index reached
  std::uint64_t itemsize = 0;     ///< bytes per element, 0 for sub-byte dtypes
  bool implicit_strides = false;  ///< strides were NULL and are taken as row-major
  bool row_major = false;         ///< C-contiguous: is_compact_valid(t, numel, true) (an empty tensor is)
  /// std::layout_stride's uniqueness holds in the order of the dimensions or in its reverse
  /// (each stride of an extent above 1 at least the stride times the extent of the one
  /// before it), as check_structure with stride_rule::positive saw while summing the span;
  /// C-contiguous strides are. False says nothing: another order may still be unique.
  bool ordered_unique = false;
};

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

/// The reporter of a check that says only yes or no: every rule below takes either an
/// error* (the worded form: the first rule broken is written there) or silent (the fast
/// paths: each refusal is a plain `return false`, its message compiled away).
struct silent {};
template <class Err>
inline constexpr bool is_worded = !std::is_same_v<std::remove_cvref_t<Err>, silent>;

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

// A rule's refusal, written once beside the rule: worded into *err when the check was given
// an error* (never null: a null test here costs validate 21 instructions of its 145, since
// it changes how the worded checks compile), nothing but `return false` when it was given
// detail::silent. A macro so that the format stays a literal at the rule (error::format's
// printf checking).
#define DLPM_REFUSE(err, ...)                                                                    \
  do {                                                                                           \
    if constexpr (::dlpack_mdspan::detail::is_worded<decltype(err)>)                             \
      *(err) = ::dlpack_mdspan::error::format(__VA_ARGS__);                                      \
    return false;                                                                                \
  } while (false)

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// ndim is in [0, max_ndim].
template <class Err>
DLPM_HOT_INLINE inline bool check_ndim(const DLTensor& t, Err err) noexcept {
  if (static_cast<std::uint32_t>(t.ndim) > static_cast<std::uint32_t>(max_ndim))  // also ndim < 0
    DLPM_REFUSE(err, errc::invalid_ndim, "ndim = %d is not a valid rank (expected 0..%d)", t.ndim, max_ndim);
  return true;
}

/// lanes >= 1, a known type code, and a bit width that code can have (detail::dtype_valid).
template <class Err>
DLPM_HOT_INLINE inline bool check_dtype(const DLDataType& d, Err err) noexcept {
  if (!detail::dtype_valid(d))
    DLPM_REFUSE(err, errc::invalid_dtype, "dtype (code %u, bits %u, lanes %u): %s", d.code, d.bits, d.lanes,
                d.lanes == 0                   ? "lanes must be at least 1"
                : d.code > kDLFloat4_e2m1fn    ? "unknown type code"
                                               : "impossible bit width for this type code");
  return true;
}

/// shape is non-NULL when ndim > 0, and shape and strides (when given) are aligned for
/// int64_t: nothing is read through a misaligned pointer (UB in C++ and Rust alike).
/// Call after check_ndim. Rank >= 0: ndim is known to be Rank.
template <int Rank = -1, class Err>
DLPM_HOT_INLINE inline bool check_metadata_pointers(const DLTensor& t, Err err) noexcept {
  if ((Rank >= 0 ? Rank : t.ndim) == 0) return true;
  // profile: shape-null
  const auto shape = reinterpret_cast<std::uintptr_t>(t.shape);
  if (shape == 0) DLPM_REFUSE(err, errc::null_shape, "shape is NULL while ndim = %d", t.ndim);
  // profile: metadata-alignment
  constexpr auto align = alignof(std::int64_t);
  if ((shape | reinterpret_cast<std::uintptr_t>(t.strides)) % align != 0)  // NULL strides are aligned
    DLPM_REFUSE(err, errc::misaligned_metadata, "%s = %p is not aligned to %zu bytes, as an int64_t array must be",
                shape % align == 0 ? "strides" : "shape",
                shape % align == 0 ? static_cast<const void*>(t.strides) : static_cast<const void*>(t.shape), align);
  return true;
}

namespace detail {
// What count_elements leaves in *numel when it stops at a stride (StopAtStride): no count.
inline constexpr std::int64_t not_counted = -1;

// Where count_elements stopped (StopAtStride): the dimension whose stride is the first, from
// the innermost out, that is not C-contiguous, and the count of the dimensions inside it.
struct count_stop {
  std::int32_t dim = -1;
  std::int64_t inner_count = 1;
};

// What check_structure learns for a typed import into std::layout_stride beyond the public
// summary (import_rules' own). every_stride_checked: the silent check met no dimension of
// extent 1 and checked every stride, in its span pass (a strided tensor: positive, in the
// span, in an order) or in its count (explicit C-contiguous strides), so the view's strides
// are the tensor's own (view_strides' rule for extent-1 dimensions replaces none). False
// says nothing.
struct import_summary : tensor_summary {
  bool every_stride_checked = false;
};

// count_elements' rare case, out of line: true when the extents are non-negative and one is
// zero (an empty tensor); false, worded, for a negative extent or a product past INT64_MAX.
// With positive extents the partial products only grow, so the overflow is worded where
// the product from shape[0] on overflows.
template <class Err>
DLPM_COLD bool irregular_extents_empty(const std::int64_t* shape, std::int32_t ndim, Err err) noexcept {
  bool empty = false;
  for (std::int32_t r = 0; r < ndim; ++r) {
    if (shape[r] < 0)
      DLPM_REFUSE(err, errc::negative_extent, "shape[%d] = %lld is negative", r, static_cast<long long>(shape[r]));
    empty |= shape[r] == 0;
  }
  if (empty) return true;
  std::int64_t m = 1;
  for (std::int32_t r = 0; r < ndim && is_worded<Err>; ++r)
    if (mul_overflows(m, shape[r], &m))
      DLPM_REFUSE(err, errc::span_overflow, "the element count overflows int64 at shape[%d] = %lld", r,
                  static_cast<long long>(shape[r]));
  return false;
}
}  // namespace detail

/// Every extent is non-negative; *numel is their product: 0 when any extent is 0, whatever
/// the others (an empty tensor has no elements to count), else checked against INT64_MAX.
/// *row_major says whether the strides are C-contiguous ones (NULL strides, rank 0 and an
/// empty tensor are), learned from the same loop: counting from the innermost dimension
/// out, the running count is the row-major stride of the next dimension. Call after
/// check_ndim and check_metadata_pointers. Rank >= 0: ndim is known to be Rank.
/// StopAtStride: the loop stops at the first stride that is not C-contiguous, *row_major
/// false and *numel detail::not_counted; the extents from there out are the caller's to
/// check (check_structure's silent checks: the runtime form's and typed imports'). With
/// `stopped` (the check into a layout whose strides may be anything), *stopped says where:
/// that dimension, and the count of the dimensions inside it. Without (into
/// std::layout_stride), it sets *no_unit_extent (not NULL there) when it counted explicit
/// strides, all C-contiguous, and met no extent of 1 (the caller's false otherwise): those
/// strides are a std::layout_stride view's own, positive and unique.
template <int Rank = -1, bool StopAtStride = false, class Err>
DLPM_HOT_INLINE inline bool count_elements(const DLTensor& t, std::int64_t* numel, bool* row_major, Err err,
                                           bool* no_unit_extent = nullptr, detail::count_stop* stopped = nullptr) noexcept {
  // profile: dispatch
  const std::int32_t ndim = Rank >= 0 ? Rank : t.ndim;
  const std::int64_t* const shape = t.shape;
  const std::int64_t* const strides = t.strides;
  std::int64_t n = 1;
  bool compact = true;
  // The rare extents, sorted out by irregular_extents_empty: a negative one (refused), a
  // zero one (an empty tensor: no count, any strides) or an overflowing product (refused).
  // A known rank unrolls the loop, and leaving it at the first rare extent keeps fewer
  // values live; a loop of unknown length that counts every dimension (the worded check)
  // runs faster with one flag and no branch. A loop that stops at a stride (StopAtStride)
  // leaves at the first rare extent too, of a known rank or not. Two loops each, so that
  // neither tests the strides pointer. The lambdas here are always inline: g++ called one
  // left to it out of line and built its closure, pointers to these locals, before the loop
  // on every call (docs/performance-history.md, "The count's lambdas under g++").
  auto rare_extents = [&]() DLPM_HOT_INLINE {
    if (!detail::irregular_extents_empty(shape, ndim, err)) return false;
    *numel = 0;
    *row_major = true;
    return true;
  };
  if constexpr (Rank >= 0 || StopAtStride) {
    if (strides == nullptr) {
      for (std::int32_t r = ndim; r-- > 0;)
        if (shape[r] <= 0 || detail::mul_overflows(n, shape[r], &n)) [[unlikely]] return rare_extents();
    } else if constexpr (StopAtStride) {
      auto stop = [&](std::int32_t r) DLPM_HOT_INLINE {  // at the first stride that is not C-contiguous
        *numel = detail::not_counted;
        *row_major = false;
        if (stopped != nullptr) *stopped = detail::count_stop{r, n};
      };
      // From dimension `from` down: false at a stop or a rare extent (rare).
      bool rare = false;
      auto count_from = [&](std::int32_t from) DLPM_HOT_INLINE -> bool {
        for (std::int32_t r = from; r-- > 0;) {
          // profile: extent-sign; arithmetic: count-overflow
          const std::int64_t e = shape[r];
          // profile: row-major-comparison
          if (e != 1 && strides[r] != n) {
            stop(r);
            return false;
          }
          // profile: extent-sign; arithmetic: count-overflow
          if (e <= 0 || detail::mul_overflows(n, e, &n)) [[unlikely]] {
            rare = true;
            return false;
          }
        }
        return true;
      };
      // Strides of any kind (`stopped`): where the count stopped is all the caller needs, one
      // loop. Into std::layout_stride, two loops, so that where the count ends says whether
      // it met an extent of 1, not a flag live across the loop: the first while no extent is
      // 1 (a count that ends there has seen every stride C-contiguous and none of an extent-1
      // dimension: *no_unit_extent, the view's strides are the tensor's own); from the first
      // extent of 1 on, count_from, where an extent-1 dimension may have any stride. (One loop
      // with the flag: rank 8's extent-1 rows 16 instructions more, in moves;
      // docs/performance-history.md.)
      if (stopped != nullptr) {
        if (!count_from(ndim)) return rare ? rare_extents() : true;
      } else {
        std::int32_t r = ndim;
        for (; r-- > 0;) {
          // profile: extent-sign; arithmetic: count-overflow
          const std::int64_t e = shape[r];
          // profile: row-major-comparison
          if (e == 1) break;
          if (strides[r] != n) {
            stop(r);
            return true;
          }
          // profile: extent-sign; arithmetic: count-overflow
          if (e <= 0 || detail::mul_overflows(n, e, &n)) [[unlikely]] return rare_extents();
        }
        if (r < 0) {
          *no_unit_extent = true;
        } else if (!count_from(r)) {
          return rare ? rare_extents() : true;
        }
      }
    } else {
      for (std::int32_t r = ndim; r-- > 0;) {
        // profile: extent-sign; arithmetic: count-overflow
        const std::int64_t e = shape[r];
        // An extent-1 dimension may have any stride. Asked first and short-circuited: a
        // compare and a jump for it, not a flag per comparison kept live to the end of the
        // loop (6 to 16 instructions fewer at ranks 4 and 8, docs/performance-history.md).
        // profile: row-major-comparison
        compact &= e == 1 || strides[r] == n;
        // profile: extent-sign; arithmetic: count-overflow
        if (e <= 0 || detail::mul_overflows(n, e, &n)) [[unlikely]] return rare_extents();
      }
    }
  } else {
    bool rare = false;
    if (strides == nullptr) {
      for (std::int32_t r = ndim; r-- > 0;) {
        rare |= shape[r] <= 0;
        rare |= detail::mul_overflows(n, shape[r], &n);
      }
    } else {
      for (std::int32_t r = ndim; r-- > 0;) {
        const std::int64_t e = shape[r];
        compact &= (e == 1) | (strides[r] == n);
        rare |= e <= 0;
        rare |= detail::mul_overflows(n, e, &n);
      }
    }
    if (rare) [[unlikely]] {  // falls through to the stores below: a return through rare_extents is slower here
      if (!detail::irregular_extents_empty(shape, ndim, err)) return false;
      n = 0;
      compact = true;
    }
  }
  *numel = n;
  *row_major = compact;
  return true;
}

/// The stride of dimension `dim`: the tensor's own, or the row-major one when strides are
/// NULL (implicit). Callers have validated the tensor with check_structure first.
DLPM_HOT_INLINE inline std::int64_t stride_at(const DLTensor& t, std::int32_t dim) noexcept {
  if (t.strides != nullptr) return t.strides[dim];
  std::int64_t s = 1;
  // Only an empty tensor (numel 0) can overflow here, e.g. shape {0, 2^40, 2^40}: its
  // strides address nothing, so saturate instead of overflowing.
  for (std::int32_t r = t.ndim - 1; r > dim; --r) s = detail::saturating_mul(s, t.shape[r]);
  return s;
}

/// What a typed import requires of the strides, beyond the structural rules: nothing
/// (layout_stride_relaxed), a compact layout (layout_right, layout_left), or positive
/// strides (std::layout_stride).
enum class stride_rule : int { any = 0, row_major = 1, column_major = 2, positive = 3 };

namespace detail {
/// Writes the `ndim` strides of the compact layout `Order` of `shape` into `out`:
/// `stride_rule::row_major` (the strides stride_at reads for NULL strides, saturating as it
/// does) or `stride_rule::column_major` (the same product from the outermost dimension in).
/// One multiplication per dimension, where stride_at of each dimension is one per dimension
/// inside it. `shape_out`, where given, gets a copy of the shape in the same pass (a new
/// tensor's arrays).
template <stride_rule Order>
DLPM_HOT_INLINE inline void compact_strides(const std::int64_t* shape, std::int32_t ndim, std::int64_t* out,
                                            std::int64_t* shape_out = nullptr) noexcept {
  static_assert(Order == stride_rule::row_major || Order == stride_rule::column_major, "a compact layout");
  std::int64_t s = 1;
  for (std::int32_t i = 0; i < ndim; ++i) {
    const std::int32_t r = Order == stride_rule::column_major ? i : ndim - 1 - i;
    const std::int64_t e = shape[r];
    if (shape_out != nullptr) shape_out[r] = e;
    out[r] = s;
    s = saturating_mul(s, e);  // only an empty tensor's product can saturate
  }
}
}  // namespace detail

/// The strides of a non-empty tensor whose element count fits are those of the compact
/// layout `Order` (extent-1 dimensions may carry any stride). NULL strides are row-major.
template <stride_rule Order, class Err>
DLPM_HOT_INLINE inline bool check_compact_strides(const DLTensor& t, std::int32_t ndim, Err err) noexcept {
  if (t.strides == nullptr && (Order == stride_rule::row_major || ndim <= 1)) return true;
  std::int64_t expected = 1;  // a product of extents of a non-empty tensor: <= numel, no overflow
  for (std::int32_t i = 0; i < ndim; ++i) {
    const std::int32_t r = Order == stride_rule::row_major ? ndim - 1 - i : i;
    const std::int64_t s = stride_at(t, r);
    if (t.shape[r] != 1 && s != expected)
      DLPM_REFUSE(err, errc::non_compact_strides,
                  "strides[%d] = %lld but the target layout needs %lld there (shape[%d] = %lld); import through "
                  "layout_stride or layout_stride_relaxed instead",
                  r, static_cast<long long>(s), static_cast<long long>(expected), r, static_cast<long long>(t.shape[r]));
    expected = detail::saturating_mul(expected, t.shape[r]);
  }
  return true;
}

namespace detail {

#ifdef DLPM_TEST_COUNT_STRUCTURE_CHECKS
// Test builds only: how many times check_structure has run on this thread, so that a test
// can prove a hand-over validates its tensor once (tests/mpi/refusals.test.cpp).
inline thread_local long structure_checks = 0;
#define DLPM_COUNT_STRUCTURE_CHECK() (++::dlpack_mdspan::detail::structure_checks)
#else
#define DLPM_COUNT_STRUCTURE_CHECK() ((void)0)
#endif

// The bytes index * bits / 8 reach, rounded down (`up` false) or up, of the element
// `index` + `past` (past 0 or 1: its first bit, or one past its last): exact, with no
// intermediate product past int64 (index = 8q + r, so the bits are 8 q bits + (r + past) bits).
// False when the bytes do not fit int64.
inline bool bits_to_bytes(std::int64_t index, std::int64_t past, std::int64_t bits, bool up, std::int64_t* out) noexcept {
  const std::int64_t q = index / 8, rest_bits = (index % 8 + past) * bits;  // |rest_bits| <= 8 * 2^24
  std::int64_t whole = 0;
  const std::int64_t rounding = rest_bits % 8 == 0 ? 0 : up ? (rest_bits > 0 ? 1 : 0) : (rest_bits < 0 ? -1 : 0);
  return !mul_overflows(q, bits, &whole) && !add_overflows(whole, rest_bits / 8 + rounding, out);
}

// The bytes [*begin, *end) from data that elements lowest..highest of `bits` bits each
// occupy (a partly used byte counts whole), byte_offset included: floor(lowest * bits / 8)
// and ceil((highest + 1) * bits / 8). False when they do not fit int64. The one
// computation of check_structure (for packed sub-byte elements) and byte_span.
inline bool bit_span(std::uint64_t byte_offset, std::int64_t lowest, std::int64_t highest, std::int64_t bits,
                     std::int64_t* begin, std::int64_t* end) noexcept {
  const auto base = static_cast<std::int64_t>(byte_offset);
  std::int64_t first = 0, last = 0;
  return bits_to_bytes(lowest, 0, bits, false, &first) && bits_to_bytes(highest, 1, bits, true, &last) &&
         !add_overflows(base, first, begin) && !add_overflows(base, last, end);
}

// byte_offset's rules: at most INT64_MAX, a multiple of the element size (itemsize 0:
// packed sub-byte elements, any offset). One test passes an offset that meets both, and a
// zero one, the usual case, first: with a runtime element size a zero offset pays no
// division, and with a constant power of two clang folds the whole test into one `test`
// against a mask (which a zero offset passes too), where a separate early return for zero
// cost a test, a branch and two reloads (docs/performance-history.md, "byte_offset's rules in one
// test"). A refusal then words the rule that is broken.
template <class Err>
DLPM_HOT_INLINE inline bool byte_offset_fits(std::uint64_t byte_offset, std::uint64_t itemsize, Err err) noexcept {
  // profile: byte-offset
  const bool fits_int64 = byte_offset <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (byte_offset == 0 || (fits_int64 && (itemsize == 0 || byte_offset % itemsize == 0))) [[likely]]
    return true;
  if (!fits_int64)
    DLPM_REFUSE(err, errc::byte_offset_overflow, "byte_offset = %llu is larger than INT64_MAX",
                static_cast<unsigned long long>(byte_offset));
  DLPM_REFUSE(err, errc::misaligned_byte_offset, "byte_offset = %llu is not a multiple of the element size %llu",
              static_cast<unsigned long long>(byte_offset), static_cast<unsigned long long>(itemsize));
}

// Whether the bytes packed sub-byte elements lowest..highest reach fit int64 (bit_span):
// out of line and cold, so that the whole-byte path of check_structure keeps its code.
DLPM_COLD inline bool packed_bytes_fit(const DLDataType& dtype, std::uint64_t byte_offset, std::int64_t lowest,
                                       std::int64_t highest) noexcept {
  std::int64_t begin = 0, end = 0;
  return bit_span(byte_offset, lowest, highest, std::int64_t{dtype.bits} * dtype.lanes, &begin, &end);
}

}  // namespace detail

/// All structural checks: ndim, dtype, shape, strides, element count, index span,
/// byte_offset and NULL data, in that order (the first broken is the error). Fills `out`
/// on success. `err` is an error* (the worded form) or detail::silent (the one-pass
/// yes-or-no of the fast paths: the same rules, no message).
///
/// One body, two uses: the runtime form (Rank -1, Item 0) checks everything; a typed
/// import passes the target's rank and element size after it has checked that ndim is
/// that rank and the dtype that element's (a valid constant), so those checks are skipped,
/// the loops have a constant trip count and the divisions are by a constant. A typed
/// import also passes its stride_rule: into layout_right or layout_left the strides must
/// be that compact layout's (non_compact_strides otherwise), which makes the index span
/// exactly 0 to numel - 1 without a multiplication per dimension; into std::layout_stride
/// they must be positive (non_positive_stride), so the span starts at 0. Compact strides
/// (seen while counting) make the span exact for every rule. DirectAddress: the caller
/// knows the device has plain addresses (a typed import whose accessor accepts no other).
/// The silent instance into std::layout_stride does not count a strided tensor's elements
/// (summary numel detail::not_counted): its count past INT64_MAX is refused by the
/// uniqueness that import_rules, its one caller, asks next (the proof at the end).
template <int Rank = -1, std::uint64_t Item = 0, stride_rule Order = stride_rule::any, bool DirectAddress = false,
          class Summary, class Err>
DLPM_HOT_INLINE inline bool check_structure(const DLTensor& t, const structure_options& opts, Summary& out, Err err) noexcept {
  // profile: dispatch
  static_assert(std::is_base_of_v<tensor_summary, Summary>, "check_structure fills a tensor_summary");
  DLPM_COUNT_STRUCTURE_CHECK();
  constexpr bool typed = Rank >= 0;
  if constexpr (!typed) {
    if (!check_ndim(t, err) || !check_dtype(t.dtype, err)) return false;
  }
  const std::int32_t ndim = typed ? Rank : t.ndim;
  // profile: device-id
  if (t.device.device_id < 0)
    DLPM_REFUSE(err, errc::device_id_mismatch, "device_id = %d is negative", static_cast<int>(t.device.device_id));
  // profile: metadata-alignment
  // (clang gives the alignment test, inlined, this calling line)
  if (!check_metadata_pointers<Rank>(t, err)) return false;
  // profile: dispatch
  if (ndim > 0 && t.strides == nullptr && opts.null_strides == null_strides_policy::reject)
    DLPM_REFUSE(err, errc::null_strides, "strides are NULL (ndim = %d) and the strict policy requires explicit strides", ndim);
  // The silent check of a typed import into std::layout_stride counts the elements only
  // while the strides are C-contiguous ones (what lets a compact tensor skip the span
  // pass); a strided tensor's count is never needed there (the proof at the end).
  constexpr bool uncounted = typed && Order == stride_rule::positive && !detail::is_worded<Err>;
  // The silent check whose strides may be anything (the runtime form, the one every view of
  // a runtime rank makes: the C facade, Rust, MPI, the Python component; a typed import into
  // layout_stride_relaxed or the padded layouts) stops comparing at the first stride that is
  // not C-contiguous too, and counts the dimensions from there out in the span pass, one
  // step for both: the dimensions inside the stop, C-contiguous, reach exactly their
  // count - 1 (the sums telescope), so the pass starts at the stop
  // (docs/performance-history.md, "The relaxed import's count in its span pass", and "The
  // runtime check's count in its span pass").
  constexpr bool counted_in_span = Order == stride_rule::any && !detail::is_worded<Err>;
  constexpr bool stops = uncounted || counted_in_span;
  // A typed check asks byte_offset's rules before the count (a silent refusal says nothing,
  // so its order is free): the count's stop then leads straight to the span pass, not through
  // the tests of what the count found (numel, row_major) after them. The runtime form asks
  // them where the worded check does: its element size is not known before.
  constexpr bool offset_first = stops && typed;
  if constexpr (offset_first) {
    if (!detail::byte_offset_fits(t.byte_offset, Item, err)) return false;
  }
  std::int64_t numel = 0;
  bool row_major = true;
  bool no_unit_extent = false;
  detail::count_stop stopped;
  if (!count_elements<Rank, stops>(t, &numel, &row_major, err, &no_unit_extent, counted_in_span ? &stopped : nullptr))
    return false;
  const std::uint64_t itemsize = Item != 0 ? Item : storage_itemsize(t.dtype, opts.subbyte_padded);
  out.numel = numel;
  out.itemsize = itemsize;
  out.implicit_strides = ndim > 0 && t.strides == nullptr;
  out.row_major = row_major;
  out.ordered_unique = row_major;
  out.lowest_index = 0;
  out.highest_index = 0;

  const std::uint64_t byte_offset = t.byte_offset;
  const bool offset_zero = byte_offset == 0;  // the usual case: the byte span below needs no sums
  if constexpr (!offset_first) {
    if (!detail::byte_offset_fits(byte_offset, itemsize, err)) return false;
  }
  // data + byte_offset is formed even for an empty tensor (as the view's handle), so it
  // must not wrap either (found by fuzz_to_mdspan: data 0xff..ff with byte_offset 3). With
  // elements of whole bytes, the byte span's check below covers a tensor that has some: its
  // span ends past data + byte_offset.
  const bool direct = DirectAddress || is_direct_address_device(t.device.device_type);
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  auto handle_fits = [&]() DLPM_HOT_INLINE {
    // profile: address-space
    if (base != 0 && direct && base > std::numeric_limits<std::uintptr_t>::max() - byte_offset)
      DLPM_REFUSE(err, errc::byte_offset_overflow, "data %p + byte_offset %llu wraps around the address space", t.data,
                  static_cast<unsigned long long>(byte_offset));
    return true;
  };
  if (numel == 0 || itemsize == 0) {
    if (!handle_fits()) return false;
    if (numel == 0) return true;  // no element is addressed: strides and data are free
  }
  // The rules of a tensor with elements (numel > 0, or not counted: see `uncounted`): data
  // is not NULL, the index span [low, high] of the strides (with Order's stride rule and the
  // order of the strides into std::layout_stride), the byte span.
  auto addressed = [&]() DLPM_HOT_INLINE -> bool {
    // profile: data-null
    if (base == 0)
      DLPM_REFUSE(err, errc::null_data, "data is NULL but the tensor has %lld elements", static_cast<long long>(numel));
    // profile: dispatch
    std::int64_t low = 0, high = numel - 1;  // exact for compact strides: the partial sums telescope
    if constexpr (Order == stride_rule::row_major || Order == stride_rule::column_major) {
      if constexpr (Order == stride_rule::row_major) {
        // Compared while counting (a non-empty tensor here): the walk only words the refusal.
        if (!row_major) {
          (void)check_compact_strides<Order>(t, ndim, err);
          return false;
        }
      } else if (!check_compact_strides<Order>(t, ndim, err)) {
        return false;
      }
    } else if (!row_major) {
      // profile: span-pass
      high = 0;
      // Into std::layout_stride the same pass notes whether the strides are unique in the
      // order of the dimensions (a slice of a row-major array: each stride at least the end,
      // stride times extent, of the dimension inside it) or in its reverse (a transpose).
      // Each order is one OR of differences, negative once a link of its chain fails: the
      // operands are positive, so no difference overflows.
      // profile: uniqueness
      std::int64_t descending_gaps = 0, ascending_gaps = 0;
      std::int64_t outer_stride = std::numeric_limits<std::int64_t>::max(), outer_end = 0;
      // profile: span-pass
      // The silent check of a typed import of elements of 2 bytes or more leaves two tests of
      // this pass to the byte span below, which refuses every tensor they would refuse (the
      // worded check, which words the first rule broken, still asks both):
      // - the INT64_MIN refusal (3 instructions a dimension). A dimension of extent e >= 2
      //   and stride INT64_MIN reaches (e - 1) * INT64_MIN, which overflows for e > 2; for
      //   e = 2 it adds INT64_MIN to low, which overflows unless low is 0 and then leaves low
      //   INT64_MIN to the end (any later negative reach overflows). The byte span's first
      //   byte is then (byte_offset / item + INT64_MIN) * item, with byte_offset / item <=
      //   INT64_MAX / item: below -2^63 for item >= 2, refused;
      // - the end's overflow test (into std::layout_stride), which never refuses: see there.
      constexpr bool span_decides_silently = !detail::is_worded<Err> && Item >= 2;
      auto dimension = [&](std::int32_t r) DLPM_HOT_INLINE -> bool {
        const std::int64_t s = t.strides[r];
        if constexpr (Order == stride_rule::positive) {
          // profile: stride-sign
          if (s <= 0)
            DLPM_REFUSE(err, errc::non_positive_stride,
                        "strides[%d] = %lld; std::layout_stride needs positive strides (import through "
                        "layout_stride_relaxed for broadcast or reversed views)",
                        r, static_cast<long long>(s));
        } else {
          // Not `else if (...) [[unlikely]] {`: nvcc 13's front end drops the declarations
          // after such a discarded branch inside a lambda ("reach" undefined below).
          if (!span_decides_silently && s == std::numeric_limits<std::int64_t>::min() && t.shape[r] != 1) [[unlikely]]
            DLPM_REFUSE(err, errc::stride_overflow, "strides[%d] = INT64_MIN cannot be used in address arithmetic", r);
        }
        std::int64_t reach = 0;
        // The reach goes to low or high by a branch on the sign (a select of the two sums
        // costs more), a negative stride the rare side (laid out off the usual path, the
        // rank-8 pass has no moves at a join of the two); a positive stride, every one into
        // std::layout_stride, adds to high.
        if (detail::mul_overflows(t.shape[r] - 1, s, &reach) ||
            (DLPM_RARELY(s < 0) ? detail::add_overflows(low, reach, &low) : detail::add_overflows(high, reach, &high)))
          DLPM_REFUSE(err, errc::span_overflow, "the index span overflows int64 at dimension %d (shape %lld, stride %lld)",
                      r, static_cast<long long>(t.shape[r]), static_cast<long long>(s));
        if constexpr (Order == stride_rule::positive) {
          // profile: uniqueness
          std::int64_t end = 0;  // past the last index of this dimension
          if constexpr (span_decides_silently) {
            // An end past INT64_MAX, reach + stride with stride <= reach (extent >= 2), makes
            // reach, and high, at least 2^62: the byte span (high + 1) * item overflows for
            // item >= 2, refused. So the end may wrap (unsigned, no UB) where the checked
            // pass would decide no order: the orders of a refused tensor are never read.
            end = static_cast<std::int64_t>(static_cast<std::uint64_t>(reach) + static_cast<std::uint64_t>(s));
          } else if (detail::add_overflows(reach, s, &end)) [[unlikely]] {
            descending_gaps = ascending_gaps = -1;  // overflowing: no order is decided here
            end = std::numeric_limits<std::int64_t>::max();
          }
          // Differences of positive operands (a wrapped end only where the span refuses).
          descending_gaps |=
              static_cast<std::int64_t>(static_cast<std::uint64_t>(outer_stride) - static_cast<std::uint64_t>(end));
          ascending_gaps |= static_cast<std::int64_t>(static_cast<std::uint64_t>(s) - static_cast<std::uint64_t>(outer_end));
          outer_stride = s;
          outer_end = end;
        }
        return true;
      };
      // profile: dispatch
      std::int32_t r = 0;
      [[maybe_unused]] bool unit = false;  // an extent-1 dimension skipped
      if constexpr (counted_in_span) {
        // The dimensions from the count's stop out, each counted and passed in one step. Those
        // inside the stop are C-contiguous: their reach is exactly inner_count - 1.
        // profile: span-pass
        high = stopped.inner_count - 1;
        std::int64_t count = stopped.inner_count;
        auto counted = [&](std::int32_t d) DLPM_HOT_INLINE -> bool {
          // profile: extent-sign; arithmetic: count-overflow
          const std::int64_t e = t.shape[d];
          // A rare extent (0, negative) or a count past INT64_MAX: check_structure's caller
          // below decides (an empty tensor is accepted, the rest refused).
          if (e <= 0 || detail::mul_overflows(count, e, &count)) [[unlikely]] return false;
          // profile: span-pass
          return dimension(d);
        };
        // A known rank up to 8, unrolled and entered at the stop's dimension (a jump table: a
        // loop of variable length is not unrolled, and its counter and bounds cost more than
        // the pass it shortens). The cases past the rank are never entered (the stop is below
        // it); they name dimension 0 only so that they compile. A runtime rank, a loop.
        if constexpr (Rank >= 0 && Rank <= 8) {
          constexpr auto below_rank = [](std::int32_t d) { return d < Rank ? d : 0; };
          switch (stopped.dim) {
            case 7: if (!counted(below_rank(7))) return false; [[fallthrough]];
            case 6: if (!counted(below_rank(6))) return false; [[fallthrough]];
            case 5: if (!counted(below_rank(5))) return false; [[fallthrough]];
            case 4: if (!counted(below_rank(4))) return false; [[fallthrough]];
            case 3: if (!counted(below_rank(3))) return false; [[fallthrough]];
            case 2: if (!counted(below_rank(2))) return false; [[fallthrough]];
            case 1: if (!counted(below_rank(1))) return false; [[fallthrough]];
            default: if (!counted(0)) return false;
          }
        } else {
          for (std::int32_t d = stopped.dim; d >= 0; --d)
            if (!counted(d)) return false;
        }
        // profile: dispatch
        out.numel = count;
        // Every dimension passed: the loops below do nothing. (Written as an `else` around
        // them, the same rules counted 17 instructions more over the relaxed rows.)
        r = ndim;
      }
      // The silent check into std::layout_stride (the strided tensors count_elements did not
      // count) runs the pass without the extent-1 test while every extent is above 1, and
      // leaves the rest, from the first extent of 1 or less, to the loop below, where the
      // rules for those extents are: no branch per dimension joins the skip (its moves, the
      // orders' registers), and a pass that meets none has checked every stride.
      if constexpr (uncounted) {
        for (; r < ndim; ++r) {
          if (t.shape[r] <= 1) [[unlikely]] break;
          if (!dimension(r)) return false;
        }
      }
      for (; r < ndim; ++r) {
        // A dimension with one index reaches only index 0: its stride never matters. Into
        // std::layout_stride it is skipped (neither its sign nor its place in an order
        // counts); otherwise its reach, 0 * stride, adds nothing, and only the INT64_MIN
        // refusal (off the hot path) asks for its extent.
        if constexpr (Order == stride_rule::positive) {
          // profile: extent-1-rule
          if (t.shape[r] == 1) {
            unit = true;
            continue;
          }
          if constexpr (uncounted) {  // an extent count_elements did not read: below 1, check_structure decides
            // profile: extent-sign
            if (t.shape[r] < 1) return false;
          }
        }
        if (!dimension(r)) return false;
      }
      // profile: dispatch
      if constexpr (uncounted && requires { out.every_stride_checked; }) out.every_stride_checked = !unit;
      // profile: uniqueness
      out.ordered_unique = Order == stride_rule::positive && (descending_gaps >= 0 || ascending_gaps >= 0);
    }
    // profile: dispatch
    out.lowest_index = low;
    out.highest_index = high;

    // The byte range [first_byte, last_byte) from data the elements occupy must be
    // representable, and on devices with plain addresses it must not wrap around the
    // address space.
    if (itemsize != 0) {
      // profile: byte-span
      const auto item = static_cast<std::int64_t>(itemsize);
      std::int64_t first_byte = 0, last_byte = 0, end = 0;
      bool overflows = false;
      if (offset_zero && low == 0) {  // the usual case: the span starts at data itself
        if constexpr (Item != 0) {
          // (high + 1) * Item fits exactly when high + 1 <= INT64_MAX / Item (high >= 0): one
          // compare with a constant.
          overflows = high >= std::numeric_limits<std::int64_t>::max() / item;
          // Unsigned, so that it wraps (only when overflows, which refuses) without UB.
          last_byte = static_cast<std::int64_t>((static_cast<std::uint64_t>(high) + 1) * itemsize);
        } else {
          overflows = detail::add_overflows(high, 1, &end) || detail::mul_overflows(end, item, &last_byte);
        }
      } else if (Item != 0 && offset_zero) {
        // A negative stride's view of data itself (a reversed axis): low * Item fits exactly
        // when low >= INT64_MIN / Item (the quotient rounds toward zero: the least multiple
        // of Item at or above INT64_MIN), and (high + 1) * Item as above. Two compares with
        // constants, where the sums below take five checked operations.
        overflows = high >= std::numeric_limits<std::int64_t>::max() / item ||
                    low < std::numeric_limits<std::int64_t>::min() / item;
        // Unsigned, so that they wrap (only when overflows, which refuses) without UB.
        last_byte = static_cast<std::int64_t>((static_cast<std::uint64_t>(high) + 1) * itemsize);
        first_byte = static_cast<std::int64_t>(static_cast<std::uint64_t>(low) * itemsize);
      } else {
        const auto offset_items = static_cast<std::int64_t>(byte_offset / itemsize);
        std::int64_t last = 0, first = 0;
        overflows = detail::add_overflows(offset_items, high, &last) || detail::add_overflows(last, 1, &end) ||
                    detail::mul_overflows(end, item, &last_byte) || detail::add_overflows(offset_items, low, &first) ||
                    detail::mul_overflows(first, item, &first_byte);
      }
      if (overflows) DLPM_REFUSE(err, errc::span_overflow, "the byte span of the tensor overflows int64");
      // The lowest element may not sit at address 0 either: no object lives there, and a
      // view rebased on it would be formed by arithmetic that yields a null pointer. (Data is
      // not NULL here, so a span from data itself, first_byte 0, starts above 0; and
      // last_byte, (byte_offset / item + high + 1) * item, is positive.)
      // profile: address-space
      if (direct && ((first_byte < 0 && base <= detail::magnitude_below_zero(first_byte)) ||
                     base > std::numeric_limits<std::uintptr_t>::max() - static_cast<std::uintptr_t>(last_byte)))
        DLPM_REFUSE(err, errc::byte_offset_overflow,
                    "data %p with byte_offset %llu and these strides addresses memory outside the address space", t.data,
                    static_cast<unsigned long long>(byte_offset));
    } else if constexpr (Item == 0) {  // packed sub-byte elements: their bytes must be representable too (byte_span)
      // profile: byte-span
      if (!detail::packed_bytes_fit(t.dtype, byte_offset, low, high))
        DLPM_REFUSE(err, errc::span_overflow, "the byte span of the tensor overflows int64");
    }
    return true;
  };
  if constexpr (stops) {
    // A strided tensor here (count_elements stopped at its first stride that is not
    // C-contiguous) was not counted by count_elements, and the extents from there out were
    // not read: the span pass reads them, and refuses (silently) where one is 0 or negative
    // (or, counting them, counted_in_span, where the count passes INT64_MAX). So any refusal
    // is final only when the tensor has elements; an empty one (an extent 0, none negative)
    // is accepted as the count would have found it, its strides and data free.
    //
    // Uncounted, what the count would have refused, a product past INT64_MAX, is refused by
    // the rules of std::layout_stride: a tensor the pass accepts has every extent at least 1, and
    // import_rules asks that no two indices share an element (ordered_unique, else
    // layout_stride_unique). Unique, the indices reach numel distinct elements in
    // [0, high], so numel <= high + 1; and the byte span refuses high + 1 > INT64_MAX / Item.
    // (The pass stops at an extent 0 before it writes lowest_index and highest_index.)
    if constexpr (uncounted && requires { out.every_stride_checked; }) out.every_stride_checked = no_unit_extent;
    if (!row_major) {
      if (addressed()) return true;
      if (!detail::irregular_extents_empty(t.shape, ndim, err)) return false;
      out.numel = 0;
      out.row_major = out.ordered_unique = true;
      return handle_fits();
    }
  }
  return addressed();
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

/// Words why the silent check_structure refused `t`: the same rules, worded. Out of line:
/// only failures get here.
DLPM_COLD inline bool structure_failure(const DLTensor& t, const structure_options& opts, error* err) noexcept {
  tensor_summary summary;
  return check_structure(t, opts, summary, err);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// ndim equals `rank` (after check_ndim).
template <class Err>
DLPM_HOT_INLINE inline bool check_rank(const DLTensor& t, std::size_t rank, Err err) noexcept {
  if (!check_ndim(t, err)) return false;
  if (static_cast<std::size_t>(t.ndim) != rank)
    DLPM_REFUSE(err, errc::ndim_mismatch, "ndim = %d but the target has rank %zu", t.ndim, rank);
  return true;
}

/// (code, bits, lanes) equal `want` exactly (after check_dtype).
template <class Err>
DLPM_HOT_INLINE inline bool check_dtype_equals(const DLDataType& have, const DLDataType& want, Err err) noexcept {
  if (!check_dtype(have, err)) return false;
  if (!same_dtype(have, want))
    DLPM_REFUSE(err, errc::dtype_mismatch, "dtype %#x does not match the required %#x", detail::packed_dtype(have),
                detail::packed_dtype(want));
  return true;
}

/// The device type is one the consumer accepts (`accepted` says which, `what` names the
/// consumer's memory for the message), and the ordinal matches unless device_id is -1
/// (any; an id below -1 matches no device).
template <class Accepts, class Err>
DLPM_HOT_INLINE inline bool check_device(const DLDevice& d, Accepts&& accepted, const char* what, std::int32_t device_id,
                                         Err err) noexcept {
  // profile: device-type
  if (!accepted(d.device_type))
    DLPM_REFUSE(err, errc::device_mismatch, "device %s (type %d) is not accepted by the target, whose memory is %s",
                device_type_name(d.device_type), static_cast<int>(d.device_type), what);
  if (device_id != -1 && d.device_id != device_id)
    DLPM_REFUSE(err, errc::device_id_mismatch, "device_id = %d but the target requires device %d",
                static_cast<int>(d.device_id), static_cast<int>(device_id));
  return true;
}

/// The first element, data + byte_offset, is a multiple of `align` (a power of two) where
/// pointers are addresses; an empty tensor addresses nothing. The one statement of the
/// rule for typed imports (alignof(T) or more) and for requirements (min_alignment).
template <class Err>
DLPM_HOT_INLINE inline bool check_data_alignment(const DLTensor& t, bool empty, std::uint64_t align, Err err,
                                                 bool direct_address = false) noexcept {
  // profile: data-alignment
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(t.data) + static_cast<std::uintptr_t>(t.byte_offset);
  if (!empty && (direct_address || is_direct_address_device(t.device.device_type)) && (first & (align - 1)) != 0)
    DLPM_REFUSE(err, errc::misaligned_data, "data + byte_offset = %p is not aligned to %llu bytes",
                reinterpret_cast<void*>(first), static_cast<unsigned long long>(align));
  return true;
}

/// One element of `dtype`, stored as `padded` says (a managed tensor's
/// IS_SUBBYTE_TYPE_PADDED flag), has a byte address and, when `element_size` is not 0, is
/// exactly `element_size` bytes: the one statement of the sub-byte rule (packed sub-byte
/// elements share bytes, so none has an address of its own). The typed import asks it
/// with sizeof(T), checked_tensor::element_bytes with 0 (any whole number of bytes), the
/// facade with the caller's element size (dlpm_check_tensor).
template <class Err>
DLPM_HOT_INLINE inline bool check_element_bytes(const DLDataType& dtype, bool padded, std::uint64_t element_size,
                                                Err err) noexcept {
  const std::uint64_t stored = storage_itemsize(dtype, padded);
  if (stored != 0 && (element_size == 0 || stored == element_size)) return true;
  if (stored != 0 && dtype.bits >= 8)  // whole bytes of another size (the facade's caller's element size)
    DLPM_REFUSE(err, errc::dtype_mismatch, "dtype %#x has %llu-byte elements, where %llu-byte elements are required",
                detail::packed_dtype(dtype), static_cast<unsigned long long>(stored),
                static_cast<unsigned long long>(element_size));
  const char* form = padded ? "is stored one byte per lane (padded)" : "is packed";
  if (element_size != 0)
    DLPM_REFUSE(err, errc::subbyte_not_viewable, "dtype %#x %s, which cannot be viewed as one %llu-byte element each",
                detail::packed_dtype(dtype), form, static_cast<unsigned long long>(element_size));
  DLPM_REFUSE(err, errc::subbyte_not_viewable, "dtype %#x %s, which cannot be viewed as one whole-byte element each",
              detail::packed_dtype(dtype), form);
}

namespace detail {
// Compact in the given dimension order? Size-1 dimensions may carry any stride (PyTorch
// rewrites them, DrJit writes 0) and an empty tensor is compact whatever its strides.
// The tensor has passed check_structure: extents are valid and the element count fits.
inline bool is_compact_valid(const DLTensor& t, std::int64_t numel, bool row_major) noexcept {
  if (numel == 0) return true;
  if (t.strides == nullptr) return row_major || t.ndim <= 1 || [&] {
    // Implicit row-major strides are also column-major when at most one extent exceeds 1.
    int big = 0;
    for (std::int32_t r = 0; r < t.ndim; ++r) big += t.shape[r] != 1;
    return big <= 1;
  }();
  std::int64_t expected = 1;  // a product of extents, bounded by numel
  for (std::int32_t i = 0; i < t.ndim; ++i) {
    const std::int32_t r = row_major ? t.ndim - 1 - i : i;
    if (t.shape[r] == 1) continue;
    if (t.strides[r] != expected) return false;
    if (mul_overflows(expected, t.shape[r], &expected)) return false;
  }
  return true;
}

// The byte offset from data of element `index` of a tensor check_structure accepted with
// elements of `item` bytes. The index is bounds-checked; the sum is not, and need not be:
// in bounds, each partial sum lies between the lowest and the highest index the check
// summed, and (byte_offset / item + that) * item inside the byte span it verified.
inline bool element_offset_of(const DLTensor& t, std::uint64_t item, const std::int64_t* index, std::int64_t* out,
                              error* err) noexcept {
  for (std::int32_t r = 0; r < t.ndim; ++r) {
    if (index[r] < 0 || index[r] >= t.shape[r])
      DLPM_REFUSE(err, errc::invalid_argument, "index[%d] = %lld is outside [0, %lld)", r, static_cast<long long>(index[r]),
                  static_cast<long long>(t.shape[r]));
  }
  std::int64_t offset = 0;
  for (std::int32_t r = 0; r < t.ndim; ++r)
    if (index[r] != 0) offset += index[r] * stride_at(t, r);  // index 0 also skips extent-1 dimensions' free strides
  const auto items = static_cast<std::int64_t>(item);
  *out = (static_cast<std::int64_t>(t.byte_offset) / items + offset) * items;
  return true;
}

struct checked_tensor_access;
}  // namespace detail

/// A tensor that has passed the structural checks (check_structure), with what they
/// learned: what check_tensor and check_requirements return on success, so that the
/// queries and builders that take one (byte_span, is_unique, coalesce, element_offset,
/// the MPI buffers) cannot fail on structure and never check it again. Only a check makes
/// one. It refers to the DLTensor it was made from, which must outlive it unchanged.
class checked_tensor {
 public:
  /// The tensor checked.
  [[nodiscard]] const DLTensor& tensor() const noexcept { return *tensor_; }
  /// The flags it was checked with (a managed tensor's; 0 for a bare DLTensor).
  [[nodiscard]] std::uint64_t flags() const noexcept { return flags_; }
  /// Sub-byte lanes stored one per byte (IS_SUBBYTE_TYPE_PADDED).
  [[nodiscard]] bool subbyte_padded() const noexcept { return (flags_ & flag_is_subbyte_type_padded) != 0; }
  /// Number of elements (0 for an empty tensor).
  [[nodiscard]] std::int64_t numel() const noexcept { return summary_.numel; }
  /// Bytes per element as stored, 0 when packed sub-byte elements share bytes.
  [[nodiscard]] std::uint64_t itemsize() const noexcept { return summary_.itemsize; }
  /// The element's bytes, or the sub-byte refusal (check_element_bytes): what everything
  /// that addresses elements one by one asks first.
  [[nodiscard]] result<std::uint64_t> element_bytes() const noexcept {
    error err;
    if (!check_element_bytes(tensor_->dtype, subbyte_padded(), 0, &err)) return unexpected_error(err);
    return summary_.itemsize;
  }
  /// Smallest and largest element index reached, relative to the first element.
  [[nodiscard]] std::int64_t lowest_index() const noexcept { return summary_.lowest_index; }
  [[nodiscard]] std::int64_t highest_index() const noexcept { return summary_.highest_index; }
  /// The stride of dimension r in elements: the tensor's own, or the row-major one for NULL strides.
  [[nodiscard]] std::int64_t stride(std::int32_t r) const noexcept { return stride_at(*tensor_, r); }
  /// Strides were NULL and are read as row-major.
  [[nodiscard]] bool implicit_strides() const noexcept { return summary_.implicit_strides; }
  /// C-contiguous (size-1 dimensions may have any stride; an empty tensor is).
  [[nodiscard]] bool row_major() const noexcept { return summary_.row_major; }
  /// Unique in the order of the dimensions or its reverse, as check_structure saw (tensor_summary).
  [[nodiscard]] bool ordered_unique() const noexcept { return summary_.ordered_unique; }
  /// Fortran-contiguous, with the same tolerance (asked, not learned: one more loop).
  [[nodiscard]] bool column_major() const noexcept { return detail::is_compact_valid(*tensor_, summary_.numel, false); }
  /// Everything the check learned, as one struct.
  [[nodiscard]] const tensor_summary& summary() const noexcept { return summary_; }

 private:
  friend struct detail::checked_tensor_access;
  checked_tensor(const DLTensor& t, std::uint64_t flags, const tensor_summary& s) noexcept
      : tensor_(&t), flags_(flags), summary_(s) {}
  const DLTensor* tensor_;
  std::uint64_t flags_;
  tensor_summary summary_;
};

namespace detail {
// The checks' own door to checked_tensor's constructor.
struct checked_tensor_access {
  static checked_tensor make(const DLTensor& t, std::uint64_t flags, const tensor_summary& s) noexcept {
    return checked_tensor(t, flags, s);
  }
};
}  // namespace detail

/// The structural checks, as a checked_tensor: `flags` are a managed tensor's (0 for a
/// bare DLTensor; IS_SUBBYTE_TYPE_PADDED is read), `null_strides` what NULL strides mean.
/// One silent pass on success; a refusal is worded out of line (check_structure's error).
[[nodiscard]] DLPM_HOT_INLINE inline result<checked_tensor> check_tensor(
    const DLTensor& t, std::uint64_t flags = 0, null_strides_policy null_strides = null_strides_policy::row_major) noexcept {
  const structure_options opts{null_strides, (flags & flag_is_subbyte_type_padded) != 0};
  tensor_summary s;
  if (check_structure(t, opts, s, detail::silent{})) [[likely]]
    return detail::checked_tensor_access::make(t, flags, s);
  error err;
  (void)detail::structure_failure(t, opts, &err);
  return unexpected_error(err);
}
/// A checked_tensor refers to its DLTensor: never to a temporary one.
result<checked_tensor> check_tensor(const DLTensor&& t, std::uint64_t flags = 0,
                                    null_strides_policy null_strides = null_strides_policy::row_major) = delete;

/// The byte offset from `data` of element `index` (ndim entries, bounds-checked:
/// errc::invalid_argument), byte_offset included. Fails only for elements without a byte
/// address (element_bytes) and an index outside the shape; the sum cannot overflow.
[[nodiscard]] inline result<std::int64_t> element_offset(const checked_tensor& c, const std::int64_t* index) noexcept {
  const auto item = c.element_bytes();
  if (!item) return unexpected_error(item.error());
  error err;
  std::int64_t out = 0;
  if (!detail::element_offset_of(c.tensor(), *item, index, &out, &err)) return unexpected_error(err);
  return out;
}

/// Byte offset of element `index` (ndim entries) from `data`, for a tensor that passed
/// check_structure (with the same `subbyte_padded`) and was not kept as a checked_tensor
/// (the facade's dlpm_element_offset_prechecked): element_offset's rules.
inline bool element_byte_offset(const DLTensor& t, const std::int64_t* index, std::int64_t* out, error* err,
                                bool subbyte_padded = false) noexcept {
  if (!check_element_bytes(t.dtype, subbyte_padded, 0, err)) return false;
  return detail::element_offset_of(t, storage_itemsize(t.dtype, subbyte_padded), index, out, err);
}

/// Structural validity with the default options (NULL strides mean row-major). One silent
/// pass on success; a refusal is worded by a second, worded pass.
inline bool validate(const DLTensor& t, error* err) noexcept {
  tensor_summary s;
  return check_structure(t, structure_options{}, s, detail::silent{}) || detail::structure_failure(t, structure_options{}, err);
}

/// Number of elements (0 when any extent is 0), checked.
inline result<std::int64_t> numel(const DLTensor& t) noexcept {
  error err;
  std::int64_t n = 0;
  bool row_major = false;
  if (!check_ndim(t, &err) || !check_metadata_pointers(t, &err) || !count_elements(t, &n, &row_major, &err))
    return unexpected_error(err);
  return n;
}

/// Bytes the elements occupy when packed densely: ceil(numel * bits * lanes / 8), so a
/// packed fp4 tensor of 3 elements is 2 bytes. Fails only when the result does not fit.
inline result<std::int64_t> nbytes(const DLTensor& t) noexcept {
  error err;
  if (!check_dtype(t.dtype, &err)) return unexpected_error(err);
  auto n = numel(t);
  if (!n) return n;
  // numel * bits / 8 without the intermediate product: (n/8)*bits + ceil((n%8)*bits / 8).
  const std::int64_t bits = std::int64_t{t.dtype.bits} * t.dtype.lanes;  // < 2^24
  const std::int64_t rest_bits = (*n % 8) * bits;
  std::int64_t bytes = 0;
  if (detail::mul_overflows(*n / 8, bits, &bytes) || detail::add_overflows(bytes, rest_bits / 8 + (rest_bits % 8 != 0), &bytes))
    return unexpected_error(error::format(errc::span_overflow, "%lld elements of %lld bits are more than INT64_MAX bytes",
                                          static_cast<long long>(*n), static_cast<long long>(bits)));
  return bytes;
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
