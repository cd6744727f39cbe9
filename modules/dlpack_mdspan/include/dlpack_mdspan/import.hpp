// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DLTensor → typed, validated mdspan view: to_mdspan<M> / try_to_mdspan<M>.
#ifndef DLPACK_MDSPAN_IMPORT_HPP
#define DLPACK_MDSPAN_IMPORT_HPP

#include <dlpack_mdspan/compact_layouts.hpp>
#include <dlpack_mdspan/concepts.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/layout_requirements.hpp>
#include <dlpack_mdspan/layout_stride_relaxed.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Requirements beyond the target type, all checked by to_mdspan.
struct import_options {
  /// What NULL strides (ndim > 0) mean: row-major by default, or an error.
  null_strides_policy null_strides = null_strides_policy::row_major;
  /// Required alignment of data + byte_offset in bytes (a power of two; 0 = none beyond
  /// alignof(element_type)). Like CuTe's assumed_align, but checked.
  std::size_t min_alignment = 0;
  /// The device ordinal the view must be on; -1 accepts any.
  std::int32_t device_id = -1;
  /// Per-dimension divisors: extent(r) % divisors[r] == 0. Empty = no requirement; a
  /// divisor of 0 or 1 leaves that dimension free. Otherwise it must have rank entries.
  std::span<const std::int64_t> divisors = {};
  /// Sub-byte elements stored one per byte (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED).
  /// managed_tensor::view sets this from the tensor's flags.
  bool subbyte_padded = false;
  /// CuTe's layout vocabulary: leading dimension, stride order, compactness in it, shape
  /// and stride divisibility (layout_requirements.hpp). Empty = no requirement.
  layout_requirements layout = {};
};

/// The layout policies to_mdspan can build, by how their mapping is constructed:
///   relaxed: layout_stride_relaxed (any strides, offset);
///   compact: constructible from the extents alone (layout_right, layout_left, the padded
///            layouts), so the tensor's strides must equal the mapping's;
///   strided: constructible from extents + strides (layout_stride).
template <class M>
concept relaxed_layout_mdspan = pointer_mdspan<M> && std::is_same_v<typename M::layout_type, layout_stride_relaxed>;

template <class M>
concept compact_layout_mdspan = pointer_mdspan<M> && !relaxed_layout_mdspan<M> &&
                                std::is_constructible_v<typename M::mapping_type, const typename M::extents_type&> &&
                                strided_mdspan<M>;

template <class M>
concept strided_layout_mdspan =
    pointer_mdspan<M> && !relaxed_layout_mdspan<M> && !compact_layout_mdspan<M> &&
    requires(const typename M::mapping_type& m) { m.strides(); } &&
    std::is_constructible_v<typename M::mapping_type, const typename M::extents_type&,
                            std::remove_cvref_t<decltype(std::declval<const typename M::mapping_type&>().strides())>>;

/// A target type to_mdspan supports.
template <class M>
concept importable_mdspan = relaxed_layout_mdspan<M> || compact_layout_mdspan<M> || strided_layout_mdspan<M>;

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

template <class M, std::size_t... R>
constexpr typename M::extents_type make_extents(const DLTensor& t, std::index_sequence<R...>) noexcept {
  return typename M::extents_type(static_cast<typename M::index_type>(t.shape[R])...);
}

template <class M>
M make_view(typename M::data_handle_type handle, const typename M::mapping_type& mapping) {
  if constexpr (std::is_default_constructible_v<typename M::accessor_type>)
    return M(handle, mapping, typename M::accessor_type{});
  else
    static_assert(std::is_default_constructible_v<typename M::accessor_type>,
                  "to_mdspan: the target's accessor must be default-constructible");
}

// import_options' defaults as compile-time constants: to_mdspan<M>(t) without options folds
// every option test away (no divisors, no extra alignment, any device id, row-major NULL
// strides, packed sub-byte storage).
struct default_import_options {
  static constexpr null_strides_policy null_strides = null_strides_policy::row_major;
  static constexpr std::size_t min_alignment = 0;
  static constexpr std::int32_t device_id = -1;
  static constexpr std::span<const std::int64_t> divisors = {};
  static constexpr bool subbyte_padded = false;
  static constexpr layout_requirements layout = {};
};

// The options are the caller's, not the producer's: nonsense in them is an error for every
// tensor, empty or not.
template <class Options>
DLPM_HOT_INLINE inline bool check_import_options(const Options& opts, std::size_t rank, error* err) noexcept {
  if ((opts.min_alignment & (opts.min_alignment - 1)) != 0) {
    *err = error::format(errc::invalid_argument, "import_options::min_alignment = %zu is not a power of two", opts.min_alignment);
    return false;
  }
  if (opts.device_id < -1) {
    *err = error::format(errc::invalid_argument, "import_options::device_id = %d is neither -1 (any) nor a device ordinal",
                         static_cast<int>(opts.device_id));
    return false;
  }
  if (!opts.divisors.empty()) {
    if (opts.divisors.size() != rank) {
      *err = error::format(errc::invalid_argument, "import_options::divisors has %zu entries for rank %zu", opts.divisors.size(),
                           rank);
      return false;
    }
    for (std::size_t r = 0; r < rank; ++r)
      if (opts.divisors[r] < 0) {
        *err = error::format(errc::invalid_argument, "import_options::divisors[%zu] = %lld is negative", r,
                             static_cast<long long>(opts.divisors[r]));
        return false;
      }
  }
  return true;
}

// Strides for a std::layout_stride view of an empty tensor. None is ever used, but the
// mapping requires positive, representable strides and a permutation P in which
// stride[P[i]] >= stride[P[i-1]] * extent[P[i-1]]. A zero extent restarts that product, so
// the dimensions are laid out as chains separated by the zero-extent ones; extent-1
// dimensions take stride 1 at the front. The largest extent ends the last chain (its
// extent multiplies nothing), and the others go, largest first, into the first chain
// whose product stays representable. Refused only when that packing fails, e.g. int8
// extents {0, 12, 12, 12, 12}: the largest 12 ends the last chain, and three more cannot share two chains under 127.
template <class IndexType, class StrideArray>
bool empty_tensor_strides(const DLTensor& t, StrideArray& strides, error* err) noexcept {
  constexpr std::int64_t limit = std::in_range<std::int64_t>(std::numeric_limits<IndexType>::max())
                                     ? static_cast<std::int64_t>(std::numeric_limits<IndexType>::max())
                                     : std::numeric_limits<std::int64_t>::max();
  const std::int32_t n = t.ndim;
  std::int32_t zeros[max_ndim], items[max_ndim];
  std::int32_t zero_count = 0, item_count = 0;
  for (std::int32_t r = 0; r < n; ++r) {
    strides[static_cast<std::size_t>(r)] = 1;
    if (t.shape[r] == 0) zeros[zero_count++] = r;
    else if (t.shape[r] > 1) items[item_count++] = r;
  }
  // Largest extent first (insertion sort: rank <= 64).
  for (std::int32_t i = 1; i < item_count; ++i)
    for (std::int32_t j = i; j > 0 && t.shape[items[j]] > t.shape[items[j - 1]]; --j) std::swap(items[j], items[j - 1]);
  // Chains 0..zero_count-1 each end in a zero-extent dimension; chain zero_count ends in
  // the largest extent (items[0]).
  std::int32_t chain_of[max_ndim];
  std::int64_t product[max_ndim + 1];
  for (std::int32_t c = 0; c <= zero_count; ++c) product[c] = 1;
  for (std::int32_t i = 1; i < item_count; ++i) {
    const std::int64_t e = t.shape[items[i]];
    std::int32_t c = 0;
    std::int64_t grown = 0;
    while (c <= zero_count && (mul_overflows(product[c], e, &grown) || grown > limit)) ++c;
    if (c > zero_count) {
      *err = error::format(errc::stride_overflow,
                           "the tensor is empty, but no strides for std::layout_stride that fit the view's index_type were "
                           "found for its extents (dimension %d, extent %lld); use a wider index_type",
                           items[i], static_cast<long long>(e));
      return false;
    }
    chain_of[i] = c;
    product[c] = grown;
  }
  // Walk each chain, assigning running products; its zero-extent dimension (or, for the
  // last chain, the largest extent) takes the chain's full product.
  for (std::int32_t c = 0; c <= zero_count; ++c) {
    std::int64_t running = 1;
    for (std::int32_t i = 1; i < item_count; ++i) {
      if (chain_of[i] != c) continue;
      strides[static_cast<std::size_t>(items[i])] = static_cast<IndexType>(running);
      running = saturating_mul(running, t.shape[items[i]]);  // a prefix of product[c] <= limit: never saturates
    }
    const std::int32_t last = c < zero_count ? zeros[c] : (item_count > 0 ? items[0] : -1);
    if (last >= 0) strides[static_cast<std::size_t>(last)] = static_cast<IndexType>(running);
  }
  return true;
}

// What M's layout requires of the strides: positive for std::layout_stride; row-major or
// column-major for plain layout_right/left (std:: or cuda::std::), read off the probe
// above; nothing checkable up front for padded layouts and layout_stride_relaxed.
template <class M>
constexpr stride_rule stride_rule_of() {
  if constexpr (strided_layout_mdspan<M>) {
    return stride_rule::positive;
  } else if constexpr (!compact_layout_mdspan<M> || M::rank() == 0) {
    return stride_rule::any;
  } else {
    constexpr compact_order order = compact_order_of<M>();
    return order == compact_order::row_major      ? stride_rule::row_major
           : order == compact_order::column_major ? stride_rule::column_major
                                                  : stride_rule::any;
  }
}

// Every stride of M's compact mapping for t's extents is representable in index_type.
// Non-empty, they are bounded by the element count, which fits. Empty, stride(r) still
// multiplies its extents in index_type, and a zero among them need not come first (libc++
// multiplies layout_right's from the last dimension): so the product of a stride's
// non-zero factors must fit, whatever the order. {0, 128, 2^62} into layout_left fails.
template <class M>
bool compact_strides_fit(const DLTensor& t, error* err) noexcept {
  using index_type = typename M::index_type;
  constexpr std::size_t rank = M::rank();
  static constexpr auto uses = compact_stride_factors<M>();
  for (std::size_t r = 0; r < rank; ++r) {
    index_type s = 1;  // as the mapping computes it; each extent fits index_type already
    for (std::size_t q = 0; q < rank; ++q) {
      if (!uses[r][q] || t.shape[q] == 0) continue;
      if (mul_overflows_in(s, static_cast<index_type>(t.shape[q]), &s)) {
        *err = error::format(errc::stride_overflow,
                             "the tensor is empty, but the layout's stride for dimension %zu multiplies extents past "
                             "the view's index_type (at shape[%zu] = %lld); use a wider index_type",
                             r, q, static_cast<long long>(t.shape[q]));
        return false;
      }
    }
  }
  return true;
}

// std::layout_stride requires that no two indices share an element: in some order of the
// dimensions with more than one index, each stride steps past the previous dimension's
// span. The innermost-last order was tried by the caller; here the innermost-first order
// (column-major producers), then the order sorted by (stride, extent), which decides.
template <class StrideArray>
DLPM_COLD bool layout_stride_unique(const DLTensor& t, const StrideArray& strides, error* err) noexcept {
  const std::size_t rank = static_cast<std::size_t>(t.ndim);
  std::size_t order[max_ndim] = {};
  std::size_t count = 0;
  for (std::size_t r = 0; r < rank; ++r)
    if (t.shape[r] > 1) order[count++] = r;
  // The first position (or none: count) where the order breaks uniqueness.
  auto first_overlap = [&] {
    for (std::size_t i = 1; i < count; ++i) {
      std::int64_t reach = 0;
      if (mul_overflows(static_cast<std::int64_t>(strides[order[i - 1]]), t.shape[order[i - 1]], &reach) ||
          static_cast<std::int64_t>(strides[order[i]]) < reach)
        return i;
    }
    return count;
  };
  if (first_overlap() == count) return true;
  auto before = [&](std::size_t a, std::size_t b) {
    return strides[a] < strides[b] || (strides[a] == strides[b] && t.shape[a] < t.shape[b]);
  };
  for (std::size_t i = 1; i < count; ++i)
    for (std::size_t j = i; j > 0 && before(order[j], order[j - 1]); --j) std::swap(order[j], order[j - 1]);
  const std::size_t i = first_overlap();
  if (i == count) return true;
  const std::size_t prev = order[i - 1], cur = order[i];
  *err = error::format(errc::overlapping_strides,
                       "dimensions %zu (stride %lld) and %zu (shape %lld, stride %lld) overlap; std::layout_stride needs "
                       "unique elements (use layout_stride_relaxed)",
                       cur, static_cast<long long>(strides[cur]), prev, static_cast<long long>(t.shape[prev]),
                       static_cast<long long>(strides[prev]));
  return false;
}

template <class T>
T* offset_pointer(void* data, std::int64_t bytes) noexcept {
  // Only called with non-NULL data: the checks above never do arithmetic on NULL.
  return reinterpret_cast<T*>(static_cast<unsigned char*>(data) + bytes);
}

// The common tensor in one pass: to_mdspan<M>(t) without options, a non-empty tensor of
// exactly M's rank and dtype with explicit strides, on a device M's accessor accepts, data
// and byte_offset aligned. It accepts only tensors that every ordered check below accepts
// too, and fills the same view; for anything else it says no and import_view_ordered runs
// those checks, which find and word the refusal (so every refusal keeps its errc and
// message). It is conservative where that is cheaper: it also says no to tensors the
// ordered checks accept (NULL strides, empty tensors, strided layouts with an extent or
// |stride| beyond the range bound below, data misaligned on a device without plain
// addresses), which then take the ordered path. The differential test
// (tests/reference/differential.hpp) imports every generated tensor both with options
// (the ordered path) and without them (this one) and holds both to the reference model.
// What the fast path learns beyond the tensor's own fields. The strides are not kept here:
// the mapping reads them from the tensor (fast_strides), because a stride array stored here
// and then copied into the mapping with wider loads stalls store-to-load forwarding (13.0
// against 4.3 ns for a rank-2 layout_stride import, measured).
template <class M>
struct fast_view {
  typename M::data_handle_type handle = nullptr;
  typename M::index_type offset = 0;  // relaxed
};

// The strided layouts' strides as the mapping takes them (layout_stride: in its own array
// type, std:: or cuda::std::): layout_stride's with 1 for an extent-1 dimension (its stride
// never matters, and 1 keeps the mapping's preconditions), layout_stride_relaxed's as they are.
template <class M>
struct fast_stride_array {
  using type = std::array<typename M::index_type, M::rank()>;
};
template <strided_layout_mdspan M>
struct fast_stride_array<M> {
  using type = std::remove_cvref_t<decltype(std::declval<const typename M::mapping_type&>().strides())>;
};
template <class M, std::size_t... R>
DLPM_HOT_INLINE inline typename fast_stride_array<M>::type fast_strides(const DLTensor& t, std::index_sequence<R...>) noexcept {
  using I = typename M::index_type;
  if constexpr (relaxed_layout_mdspan<M>) return {static_cast<I>(t.strides[R])...};
  else return {static_cast<I>(t.shape[R] == 1 ? 1 : t.strides[R])...};
}

template <class M>
constexpr bool has_fast_import() {
  using T = typename M::element_type;
  constexpr stride_rule rule = stride_rule_of<M>();
  if constexpr (M::rank() == 0 || storage_itemsize(dtype_v<T>, false) != sizeof(T)) return false;
  else if constexpr (relaxed_layout_mdspan<M> || strided_layout_mdspan<M>) return true;
  else return compact_layout_mdspan<M> && (rule == stride_rule::row_major || rule == stride_rule::column_major);
}

template <class M>
DLPM_HOT_INLINE inline bool fast_import(const DLTensor& t, fast_view<M>& out) noexcept {
  using T = typename M::element_type;
  using I = typename M::index_type;
  using extents_type = typename M::extents_type;
  constexpr std::size_t rank = M::rank();
  constexpr std::int64_t item = static_cast<std::int64_t>(sizeof(T));
  constexpr stride_rule rule = stride_rule_of<M>();
  // The largest extent, stride and span that fit both int64 and the view's index_type.
  constexpr std::int64_t index_max = std::in_range<std::int64_t>(std::numeric_limits<I>::max())
                                         ? static_cast<std::int64_t>(std::numeric_limits<I>::max())
                                         : std::numeric_limits<std::int64_t>::max();
  // The strided layouts' range bound: every extent and |stride| at most 2^bits, with
  // rank * 2^(2 bits) <= 2^61, so no step, reach or span sum below can overflow int64
  // (nor the index_type); bigger tensors take the ordered path, which checks each product.
  constexpr int bits = std::min((61 - static_cast<int>(std::bit_width(rank - 1))) / 2, std::numeric_limits<I>::digits - 1);
  constexpr std::int64_t span_bound = static_cast<std::int64_t>(rank) << (2 * bits);

  // ndim, dtype (one 32-bit compare), device type and id
  if (t.ndim != static_cast<std::int32_t>(rank) || packed_dtype(t.dtype) != packed_dtype(dtype_v<T>)) return false;
  if (!device_traits<typename M::accessor_type>::accepts(t.device.device_type) || t.device.device_id < 0) return false;
  // shape and strides present and aligned for int64_t
  const std::int64_t* const shape = t.shape;
  const std::int64_t* const strides = t.strides;
  if (shape == nullptr || strides == nullptr ||
      ((reinterpret_cast<std::uintptr_t>(shape) | reinterpret_cast<std::uintptr_t>(strides)) % alignof(std::int64_t)) != 0)
    return false;
  // data non-NULL and aligned for T; byte_offset at most INT64_MAX and a whole number of
  // elements (so data + byte_offset is aligned too: alignof(T) divides sizeof(T))
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  const std::uint64_t byte_offset = t.byte_offset;
  if (base == 0 || base % alignof(T) != 0 || byte_offset > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
      byte_offset % sizeof(T) != 0)
    return false;
  const auto offset_items = static_cast<std::int64_t>(byte_offset / sizeof(T));

  // Non-zero where extent e of dimension r differs from M's static extent there.
  auto static_mismatch = [](std::size_t r, std::uint64_t e) -> std::uint64_t {
    const std::size_t fixed = extents_type::static_extent(r);
    return fixed == std::numeric_limits<std::size_t>::max() /* dynamic_extent */ ? 0 : e ^ static_cast<std::uint64_t>(fixed);
  };
  // Each extent in [1, index_max] (non-empty, fits the index_type) and equal to a static one.
  auto extent_ok = [&](std::size_t r, std::int64_t e) {
    return e >= 1 && e <= index_max && static_mismatch(r, static_cast<std::uint64_t>(e)) == 0;
  };

  std::int64_t low = 0, high = 0;  // the lowest and highest element index reached
  std::int64_t count = 0;          // high + 1: the elements from index 0 to the highest
  if constexpr (compact_layout_mdspan<M>) {
    // The strides must be the compact layout's; then the span is exactly the element
    // count, which the running product (each dimension's compact stride) ends as.
    std::int64_t n = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t r = rule == stride_rule::row_major ? rank - 1 - i : i;
      const std::int64_t e = shape[r];
      if (!extent_ok(r, e)) return false;
      if ((e != 1 && strides[r] != n) || mul_overflows(n, e, &n)) return false;
    }
    if (n > index_max) return false;  // numel fits the index_type
    count = n;
  } else if constexpr (strided_layout_mdspan<M>) {
    // Positive strides, the span summed from the innermost dimension out, and uniqueness
    // in that order (each stride steps past the reach of the dimension inside it). Inside
    // the range bound nothing below overflows, so the pass is plain unsigned arithmetic
    // (wrapping, never undefined, for the tensors the bound then sends away). A unique
    // mapping reaches numel distinct indices in [0, high], so numel <= high + 1: the
    // element count fits wherever the span does, and needs no product of its own.
    std::uint64_t range = 0;       // every e - 1 and s - 1 below 2^bits
    std::uint64_t statics = 0;     // non-zero: an extent differs from M's static one
    std::uint64_t misordered = 0;  // top bit: a stride inside the reach of the dimension inside it
    std::uint64_t span = 0, reach = 0;
    for (std::size_t r = rank; r-- > 0;) {
      const auto e = static_cast<std::uint64_t>(shape[r]);
      const auto s = static_cast<std::uint64_t>(strides[r]);
      range |= (e - 1) | (s - 1);
      statics |= static_mismatch(r, e);
      const std::uint64_t step = (e - 1) * s;
      span += step;
      misordered |= s - reach;
      reach = step + s;
    }
    if ((range >> bits) != 0 || statics != 0) return false;
    high = static_cast<std::int64_t>(span);
    if constexpr (span_bound >= index_max) {
      if (high >= index_max) return false;  // high + 1 must fit the index_type
    }
    if ((misordered >> 63) != 0) {  // another order may still be unique: the full check decides
      error err;
      if (!layout_stride_unique(t, fast_strides<M>(t, std::make_index_sequence<rank>{}), &err)) return false;
    }
    count = high + 1;
  } else {
    // layout_stride_relaxed: any stride in [-2^bits, 2^bits) (INT64_MIN never); the span
    // from the signed extremes. Without a negative stride the lowest index is 0 and the
    // highest the plain sum, as for layout_stride.
    std::uint64_t range = 0, statics = 0, span = 0;
    std::int64_t negative = 0;  // below zero: some stride is
    // Strides may repeat elements here, so the element count is not bounded by the span:
    // it must fit the index_type on its own (the mapping's precondition). Under the range
    // bound it is at most 2^(rank * bits): no product to check where that fits (ranks 1 and 2
    // with a 64-bit index_type); elsewhere a product tree, not a serial chain of checked
    // multiplies (bounded_product_above).
    constexpr bool numel_fits = rank * bits < 63 && (std::int64_t{1} << (rank * bits)) <= index_max;
    bool numel_too_big = false;
    if constexpr (!numel_fits) numel_too_big = bounded_product_above<rank, bits>(shape, static_cast<std::uint64_t>(index_max));
    for (std::size_t r = 0; r < rank; ++r) {
      const auto e = static_cast<std::uint64_t>(shape[r]);
      const std::int64_t s = strides[r];
      if constexpr (std::is_signed_v<I>) {
        range |= (e - 1) | ((static_cast<std::uint64_t>(s) + (std::uint64_t{1} << bits)) >> 1);
        negative |= s;
      } else {  // no negative stride fits an unsigned index_type
        range |= (e - 1) | static_cast<std::uint64_t>(s);
      }
      statics |= static_mismatch(r, e);
      span += (e - 1) * static_cast<std::uint64_t>(s);
    }
    if ((range >> bits) != 0 || statics != 0 || numel_too_big) return false;
    if (negative >= 0) {
      high = static_cast<std::int64_t>(span);
    } else {
      for (std::size_t r = 0; r < rank; ++r) {
        const std::int64_t step = (shape[r] - 1) * strides[r];  // in range: the bound held
        (step < 0 ? low : high) += step;
      }
    }
    count = high + 1;
  }

  // The byte span [first_byte, last_byte) from data must be representable, and must not
  // wrap around the address space (nor start at address 0: base is not NULL, and only the
  // relaxed layout reaches below data).
  std::int64_t end = 0;
  std::uintptr_t last_address = 0;
  if constexpr (!compact_layout_mdspan<M> && span_bound <= static_cast<std::int64_t>((std::uint64_t{1} << 63) / item)) {
    // The range bound keeps count * item at most 2^63, so the sum with byte_offset (at
    // most INT64_MAX) cannot wrap uint64: one test for the int64 range, one carry.
    const std::uint64_t last_byte = byte_offset + static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(item);
    if (last_byte > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        __builtin_add_overflow(base, static_cast<std::uintptr_t>(last_byte), &last_address))
      return false;
    end = offset_items + count;  // last_byte / item
  } else {
    std::int64_t last_byte = 0;
    if (add_overflows(offset_items, count, &end) || mul_overflows(end, item, &last_byte) ||
        __builtin_add_overflow(base, static_cast<std::uintptr_t>(last_byte), &last_address))
      return false;
  }
  if constexpr (relaxed_layout_mdspan<M>) {
    if (low == 0) {  // no stride below zero: the view starts at data + byte_offset, at or above data
      if (end > index_max) return false;  // the span, offset_items + high + 1, fits the index_type
      out.offset = static_cast<I>(offset_items);
      out.handle = static_cast<T*>(t.data);
      return true;
    }
    std::int64_t first = 0, first_byte = 0;
    if (add_overflows(offset_items, low, &first) || mul_overflows(first, item, &first_byte) ||
        (first_byte <= 0 && base <= magnitude_below_zero(first_byte)))
      return false;
    // Rebase on the lowest element when the view reaches below data (a mapping yields no
    // negative index); the element offset and the span must fit the index_type.
    const std::int64_t shift = first < 0 ? first : 0;
    std::int64_t mapped_offset = 0, span = 0;
    if (sub_overflows(offset_items, shift, &mapped_offset) || add_overflows(mapped_offset, high, &span) || span >= index_max)
      return false;
    out.offset = static_cast<I>(mapped_offset);
    out.handle = offset_pointer<T>(t.data, first_byte < 0 ? first_byte : 0);
  } else {
    out.handle = offset_pointer<T>(t.data, static_cast<std::int64_t>(byte_offset));
  }
  return true;
}

// The typed checks before the layout: rank, device, dtype, element size, then the
// structure with the rank and element size known. The cheap equality tests come first
// (a dtype equal to dtype_v<T> is valid); the generic checks only word the failure.
template <class M, class Options>
DLPM_NOINLINE result<M> import_view_ordered(const DLTensor& t, const Options& opts) noexcept {
  using element_type = typename M::element_type;
  using index_type = typename M::index_type;
  using extents_type = typename M::extents_type;
  using mapping_type = typename M::mapping_type;
  using accessor_type = typename M::accessor_type;
  constexpr std::size_t rank = M::rank();
  constexpr DLDataType dtype = dtype_v<element_type>;

  error err;

  // 0. the options themselves, whatever the tensor (an empty one too)
  if (!check_import_options(opts, rank, &err)) return unexpected_error(err);

  // 1-4. ndim, device, dtype
  if (t.ndim != static_cast<std::int32_t>(rank)) {
    (void)check_rank(t, rank, &err);
    return unexpected_error(err);
  }
  auto accepts = [](std::int32_t type) { return device_traits<accessor_type>::accepts(type); };
  if (!check_device(t.device, accepts, device_type_name(device_traits<accessor_type>::device_type), opts.device_id, &err))
    return unexpected_error(err);
  if (!same_dtype(t.dtype, dtype)) {
    (void)check_dtype_equals(t.dtype, dtype, &err);
    return unexpected_error(err);
  }
  // One whole element per sizeof(T): packed sub-byte data has no per-element address.
  if (storage_itemsize(dtype, opts.subbyte_padded) != sizeof(element_type))
    return unexpected_error(error::format(errc::subbyte_not_viewable,
                                          "dtype %#x %s, which cannot be viewed as one %zu-byte element each",
                                          detail::packed_dtype(t.dtype),
                                          opts.subbyte_padded ? "is stored one byte per lane (padded)" : "is packed",
                                          sizeof(element_type)));

  // 5-8. shape, strides, element count, span, byte_offset, NULL data
  tensor_summary summary;
  constexpr stride_rule rule = stride_rule_of<M>();
  if (!check_structure<static_cast<int>(rank), sizeof(element_type), rule>(
          t, structure_options{opts.null_strides, opts.subbyte_padded}, summary, &err))
    return unexpected_error(err);
  for (std::size_t r = 0; r < rank; ++r) {
    const std::int64_t e = t.shape[r];
    if (!std::in_range<index_type>(e))
      return unexpected_error(error::format(errc::extent_overflow, "shape[%zu] = %lld does not fit the view's index_type", r,
                                            static_cast<long long>(e)));
    if (extents_type::static_extent(r) != std::numeric_limits<std::size_t>::max() /* dynamic_extent */ && static_cast<std::int64_t>(extents_type::static_extent(r)) != e)
      return unexpected_error(error::format(errc::shape_mismatch, "shape[%zu] = %lld but the view's static extent is %zu",
                                            r, static_cast<long long>(e), static_cast<std::size_t>(extents_type::static_extent(r))));
  }
  if (!std::in_range<index_type>(summary.numel))
    return unexpected_error(error::format(errc::extent_overflow, "%lld elements do not fit the view's index_type",
                                          static_cast<long long>(summary.numel)));
  if (!opts.divisors.empty()) {
    for (std::size_t r = 0; r < rank; ++r) {
      const std::int64_t d = opts.divisors[r];
      if (d > 1 && t.shape[r] % d != 0)
        return unexpected_error(error::format(errc::divisibility, "shape[%zu] = %lld is not a multiple of %lld", r,
                                              static_cast<long long>(t.shape[r]), static_cast<long long>(d)));
    }
  }

  if (!opts.layout.empty() && !layout_met(t, summary.numel, opts.layout, &err)) return unexpected_error(err);

  const extents_type extents = make_extents<M>(t, std::make_index_sequence<rank>{});
  const bool empty = summary.numel == 0;
  const auto byte_offset = static_cast<std::int64_t>(t.byte_offset);
  using handle_type = typename M::data_handle_type;
  handle_type handle = nullptr;

  // 9. alignment of the first element, on devices whose pointers are addresses
  if (!empty && is_direct_address_device(t.device.device_type)) {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset;
    const std::size_t align = opts.min_alignment > alignof(element_type) ? opts.min_alignment : alignof(element_type);
    if (first % align != 0)
      return unexpected_error(error::format(errc::misaligned_data, "data + byte_offset = %p is not aligned to %zu bytes",
                                            reinterpret_cast<void*>(first), align));
  }

  // 10. the layout
  if constexpr (relaxed_layout_mdspan<M>) {
    index_type strides[rank == 0 ? 1 : rank] = {};
    index_type offset = 0;
    for (std::size_t r = 0; r < rank; ++r) {
      const std::int64_t s = stride_at(t, static_cast<std::int32_t>(r));
      if (!std::in_range<index_type>(s)) {
        // Never used to address anything: every index of an empty tensor, and index 0 of
        // an extent-1 dimension, maps without it. The stride stays 0.
        if (empty || t.shape[r] == 1) continue;
        return unexpected_error(error::format(errc::stride_overflow, "strides[%zu] = %lld does not fit the view's index_type%s", r,
                                              static_cast<long long>(s),
                                              s < 0 ? " (negative strides need a signed index_type)" : ""));
      }
      strides[r] = static_cast<index_type>(s);
    }
    if (!empty) {
      const std::int64_t offset_items = byte_offset / static_cast<std::int64_t>(summary.itemsize);
      // Keep the producer's base pointer when the whole view lies at or above it (an exact
      // round trip of our own exports); otherwise rebase on the lowest element, because a
      // mapping may not produce negative indices.
      const std::int64_t shift = offset_items + summary.lowest_index < 0 ? offset_items + summary.lowest_index : 0;
      // mapped_offset is -lowest_index when rebased: 2^63 for INT64_MIN, hence the checks.
      std::int64_t mapped_offset = 0, span = 0;
      if (sub_overflows(offset_items, shift, &mapped_offset) || add_overflows(mapped_offset, summary.highest_index, &span) ||
          add_overflows(span, 1, &span) || !std::in_range<index_type>(span))
        return unexpected_error(error::format(errc::span_overflow, "the required span does not fit the view's index_type"));
      offset = static_cast<index_type>(mapped_offset);
      handle = offset_pointer<element_type>(t.data, shift * static_cast<std::int64_t>(summary.itemsize));
    } else if (t.data != nullptr) {
      handle = offset_pointer<element_type>(t.data, byte_offset);
    }
    return make_view<M>(handle, mapping_type(extents, strides, offset));
  } else {
    if (t.data != nullptr) handle = offset_pointer<element_type>(t.data, byte_offset);
    if constexpr (compact_layout_mdspan<M>) {
      if constexpr (rank > 1) {
        if (empty && !compact_strides_fit<M>(t, &err)) return unexpected_error(err);
      }
      const mapping_type mapping(extents);
      if constexpr (rank > 0 && rule == stride_rule::any) {  // padded layouts (plain ones: check_structure)
        if (!empty) {
          for (std::size_t r = 0; r < rank; ++r) {
            if (t.shape[r] == 1) continue;  // any stride is fine where only index 0 exists
            const std::int64_t s = stride_at(t, static_cast<std::int32_t>(r));
            const auto need = static_cast<std::int64_t>(mapping.stride(r));
            if (s != need)
              return unexpected_error(error::format(errc::non_compact_strides,
                                                    "strides[%zu] = %lld but the target layout needs %lld there (shape[%zu] = %lld); "
                                                    "import through layout_stride or layout_stride_relaxed instead",
                                                    r, static_cast<long long>(s), static_cast<long long>(need), r,
                                                    static_cast<long long>(t.shape[r])));
          }
        }
      }
      return make_view<M>(handle, mapping);
    } else if constexpr (strided_layout_mdspan<M>) {
      using stride_array = std::remove_cvref_t<decltype(std::declval<const mapping_type&>().strides())>;
      stride_array strides{};
      if (empty) {
        // No element is addressed, but the mapping's preconditions still hold for the
        // strides the library chooses (the producer's may be anything).
        if (!empty_tensor_strides<index_type>(t, strides, &err)) return unexpected_error(err);
        return make_view<M>(handle, mapping_type(extents, strides));
      }
      // One pass from the innermost dimension out: copy the strides (an extent-1 dimension
      // has no stride that matters; 1 keeps std::layout_stride's preconditions: positive,
      // and first in the uniqueness permutation), and check uniqueness in the order most
      // producers use, each stride stepping past the span of the dimension inside it.
      // Implicit strides are row-major, so unique; any other order gets the full check.
      const std::int64_t* const given = t.strides;
      const std::int64_t* const shape = t.shape;
      bool unique = true;
      std::int64_t inner_reach = 0, implicit = 1;
      for (std::size_t i = rank; i-- > 0;) {
        const std::int64_t e = shape[i];
        // Positive: check_structure saw to it. Implicit ones are row-major products.
        const std::int64_t s = given != nullptr ? given[i] : implicit;
        implicit = saturating_mul(implicit, e);
        if (e == 1) {
          strides[i] = 1;
          continue;
        }
        if (!std::in_range<index_type>(s))
          return unexpected_error(error::format(errc::stride_overflow, "strides[%zu] = %lld does not fit the view's index_type", i,
                                                static_cast<long long>(s)));
        strides[i] = static_cast<index_type>(s);
        std::int64_t reach = 0;
        unique &= (s >= inner_reach) & !mul_overflows(s, e, &reach);
        inner_reach = reach;
      }
      if (!unique && !layout_stride_unique(t, strides, &err)) return unexpected_error(err);
      if (!std::in_range<index_type>(summary.highest_index + 1))
        return unexpected_error(error::format(errc::span_overflow, "the required span does not fit the view's index_type"));
      return make_view<M>(handle, mapping_type(extents, strides));
    } else {
      static_assert(importable_mdspan<M>,
                    "to_mdspan: unsupported layout. Supported: layouts whose mapping is constructible from the extents "
                    "(layout_right, layout_left, padded), layout_stride, and dlpack_mdspan::layout_stride_relaxed");
    }
  }
}

// The view the fast path accepted, built where it is returned.
template <class M>
DLPM_HOT_INLINE inline M fast_result(const DLTensor& t, const fast_view<M>& fast) noexcept {
  using mapping_type = typename M::mapping_type;
  constexpr auto ranks = std::make_index_sequence<M::rank()>{};
  const typename M::extents_type extents = make_extents<M>(t, ranks);
  if constexpr (relaxed_layout_mdspan<M>) return make_view<M>(fast.handle, mapping_type(extents, fast_strides<M>(t, ranks), fast.offset));
  else if constexpr (strided_layout_mdspan<M>) return make_view<M>(fast.handle, mapping_type(extents, fast_strides<M>(t, ranks)));
  else return make_view<M>(fast.handle, mapping_type(extents));
}

// to_mdspan's entry: the one-pass fast path where it applies, else (and for whatever it
// declines) the ordered checks, out of line so that the fast path keeps its registers.
template <class M, class Options>
DLPM_HOT_INLINE inline result<M> import_view(const DLTensor& t, const Options& opts) noexcept {
  if constexpr (std::is_same_v<Options, default_import_options> && has_fast_import<M>()) {
    fast_view<M> fast;
    if (fast_import<M>(t, fast)) [[likely]] return fast_result<M>(t, fast);
  }
  return import_view_ordered<M>(t, opts);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// try_view's refusal of a mutable element type over a READ_ONLY tensor, worded off the hot path.
DLPM_COLD inline error read_only_view_refusal() noexcept {
  return error::format(errc::read_only, "view: the tensor is READ_ONLY; view it with a const element type");
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// View a DLTensor as M, or say precisely why not. Never allocates, O(rank) (O(rank²) for
/// the layout_stride overlap check).
template <pointer_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE inline result<M> try_to_mdspan(const DLTensor& tensor) noexcept {
  static_assert(importable_mdspan<M>,
                "to_mdspan: unsupported layout. Supported: layouts whose mapping is constructible from the extents "
                "(layout_right, layout_left, padded), layout_stride, and dlpack_mdspan::layout_stride_relaxed");
  return detail::import_view<M>(tensor, detail::default_import_options{});
}

/// The same, with requirements beyond the target type (see import_options).
template <pointer_mdspan M>
[[nodiscard]] result<M> try_to_mdspan(const DLTensor& tensor, const import_options& options) noexcept {
  static_assert(importable_mdspan<M>,
                "to_mdspan: unsupported layout. Supported: layouts whose mapping is constructible from the extents "
                "(layout_right, layout_left, padded), layout_stride, and dlpack_mdspan::layout_stride_relaxed");
  return detail::import_view<M>(tensor, options);
}

/// View a DLTensor as M. Throws dlpack_error (with an errc) when the tensor does not fit.
template <pointer_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE inline M to_mdspan(const DLTensor& tensor) {
  // The fast path's view goes straight to the caller: copied out of a result<M> it was
  // stored field by field and read back wider, which stalls store-to-load forwarding.
  if constexpr (detail::has_fast_import<M>()) {
    detail::fast_view<M> fast;
    if (detail::fast_import<M>(tensor, fast)) [[likely]] return detail::fast_result<M>(tensor, fast);
  }
  return detail::value_or_throw(detail::import_view_ordered<M>(tensor, detail::default_import_options{}));
}

/// The same, with import_options.
template <pointer_mdspan M>
[[nodiscard]] M to_mdspan(const DLTensor& tensor, const import_options& options) {
  return detail::value_or_throw(try_to_mdspan<M>(tensor, options));
}

/// A view of a tensor that carries DLPack flags (a managed tensor's, a Python producer's):
/// the import rules for M, plus a mutable element type over a READ_ONLY tensor is
/// errc::read_only, and padded sub-byte storage (IS_SUBBYTE_TYPE_PADDED) is honoured. The
/// one place these flag rules live: managed_tensor::try_view and the Python casters call it.
template <pointer_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE inline result<M> try_view(const DLTensor& tensor, std::uint64_t flags) noexcept {
  if (!std::is_const_v<typename M::element_type> && (flags & flag_read_only) != 0) [[unlikely]]
    return unexpected_error(detail::read_only_view_refusal());
  // The common case, packed storage, keeps the import's compile-time defaults.
  if ((flags & flag_is_subbyte_type_padded) == 0) [[likely]]
    return try_to_mdspan<M>(tensor);
  import_options opts;
  opts.subbyte_padded = true;
  return try_to_mdspan<M>(tensor, opts);
}

/// The same, with import_options (subbyte_padded comes from `flags`).
template <pointer_mdspan M>
[[nodiscard]] result<M> try_view(const DLTensor& tensor, std::uint64_t flags, const import_options& options) noexcept {
  if (!std::is_const_v<typename M::element_type> && (flags & flag_read_only) != 0)
    return unexpected_error(detail::read_only_view_refusal());
  import_options opts = options;
  opts.subbyte_padded = (flags & flag_is_subbyte_type_padded) != 0;
  return try_to_mdspan<M>(tensor, opts);
}

/// try_to_mdspan, then the view's accessor is rebuilt with the tensor's device ordinal, so
/// that exporting the view again reports the device it came from (plain to_mdspan
/// default-constructs the accessor, device_id 0). For device accessors constructible from
/// an ordinal: device_memory_accessor and the vendor headers' aliases of it.
template <pointer_mdspan M>
  requires std::is_constructible_v<typename M::accessor_type, std::int32_t>
[[nodiscard]] result<M> try_to_mdspan_on_device(const DLTensor& tensor, const import_options& options = {}) noexcept {
  result<M> view = try_to_mdspan<M>(tensor, options);
  if (!view) return view;
  return M(view->data_handle(), view->mapping(), typename M::accessor_type(tensor.device.device_id));
}

/// Throwing form of try_to_mdspan_on_device (dlpack_error).
template <pointer_mdspan M>
  requires std::is_constructible_v<typename M::accessor_type, std::int32_t>
[[nodiscard]] M to_mdspan_on_device(const DLTensor& tensor, const import_options& options = {}) {
  return detail::value_or_throw(try_to_mdspan_on_device<M>(tensor, options));
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
