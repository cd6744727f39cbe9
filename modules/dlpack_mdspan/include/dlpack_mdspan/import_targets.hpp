// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The mdspan types to_mdspan can build, grouped by how their mapping is constructed; what
// each requires of a tensor's strides (stride_rule_of), and the strides a view gets where
// the tensor's own cannot be taken as they are: an empty tensor's for std::layout_stride,
// the compact mapping's range, std::layout_stride's uniqueness.
#ifndef DLPACK_MDSPAN_IMPORT_TARGETS_HPP
#define DLPACK_MDSPAN_IMPORT_TARGETS_HPP

#include <dlpack_mdspan/checked_arithmetic.hpp>
#include <dlpack_mdspan/compact_layouts.hpp>
#include <dlpack_mdspan/concepts.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/layout_stride_relaxed.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

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

/// The import's refusal of an unsupported target type, with what it supports (a macro: a
/// static_assert's message must be a literal).
#define DLPM_IMPORTABLE_ASSERT(M)                                                                                    \
  static_assert(::dlpack_mdspan::importable_mdspan<M>,                                                               \
                "to_mdspan: unsupported layout. Supported: layouts whose mapping is constructible from the extents " \
                "(layout_right, layout_left, padded), layout_stride, and dlpack_mdspan::layout_stride_relaxed")

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

template <class M, std::size_t... R>
constexpr typename M::extents_type make_extents(const DLTensor& t, std::index_sequence<R...>) noexcept {
  // profile: view
  return typename M::extents_type(static_cast<typename M::index_type>(t.shape[R])...);
}

template <class M>
M make_view(typename M::data_handle_type handle, const typename M::mapping_type& mapping) {
  // profile: view
  if constexpr (std::is_default_constructible_v<typename M::accessor_type>)
    return M(handle, mapping, typename M::accessor_type{});
  else
    static_assert(std::is_default_constructible_v<typename M::accessor_type>,
                  "to_mdspan: the target's accessor must be default-constructible");
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

// The strides a view of M gets from a non-empty tensor, in the array type its mapping
// takes: layout_stride's with 1 for an extent-1 dimension (its stride never matters, and 1
// keeps the mapping's preconditions), layout_stride_relaxed's as they are, 0 for one that
// does not fit the index_type (import_rules allows that only where no index uses it).
// Implicit (NULL) strides are row-major.
template <class M>
struct view_stride_array {
  using type = std::array<typename M::index_type, M::rank()>;
};
template <strided_layout_mdspan M>  // std:: or cuda::std::array
struct view_stride_array<M> {
  using type = std::remove_cvref_t<decltype(std::declval<const typename M::mapping_type&>().strides())>;
};
template <class M>
struct view_strides {
  using type = typename view_stride_array<M>::type;
  static DLPM_HOT_INLINE type of(const DLTensor& t) noexcept {
    // profile: view
    // Into layout_stride_relaxed above rank 1, the row-major strides are computed out of
    // line: inline, the extents they multiply stayed live across the test, and rank 8
    // spilled three of them around the view's copies (rank 8's imports 35 instructions
    // more, rank 4's 4 to 8; docs/performance-history.md, "The relaxed import's mapping and
    // moves"). Into std::layout_stride it gained as much as it cost, and at rank 1 the
    // stride is a constant 1.
    if (t.strides == nullptr) [[unlikely]] {
      if constexpr (M::rank() > 1 && relaxed_layout_mdspan<M>) return implicit_out_of_line(t);
      else return implicit(t);
    }
    return read(t, std::make_index_sequence<M::rank()>{});
  }
  // The tensor's explicit strides as they are, where `of` would replace none: every
  // dimension has more than one index and every stride fits the index_type (the span pass
  // or the count of an import into std::layout_stride saw them all, import_summary).
  static DLPM_HOT_INLINE type own(const DLTensor& t) noexcept {
    // profile: view
    return own_strides(t, std::make_index_sequence<M::rank()>{});
  }

 private:
  static DLPM_NOINLINE type implicit_out_of_line(const DLTensor& t) noexcept { return implicit(t); }
  static DLPM_HOT_INLINE type implicit(const DLTensor& t) noexcept {
    type out{};
    std::int64_t s = 1;
    for (std::size_t r = M::rank(); r-- > 0;) {
      out[r] = take(t.shape[r], s);
      s = saturating_mul(s, t.shape[r]);
    }
    return out;
  }
  static DLPM_HOT_INLINE typename M::index_type take(std::int64_t e, std::int64_t s) noexcept {
    // profile: extent-1-rule
    using I = typename M::index_type;
    if constexpr (!relaxed_layout_mdspan<M>) return static_cast<I>(e == 1 ? 1 : s);
    else return std::in_range<I>(s) ? static_cast<I>(s) : I{0};
  }
  template <std::size_t... R>
  static DLPM_HOT_INLINE type read(const DLTensor& t, std::index_sequence<R...>) noexcept {
    // profile: view
    return {take(t.shape[R], t.strides[R])...};
  }
  template <std::size_t... R>
  static DLPM_HOT_INLINE type own_strides(const DLTensor& t, std::index_sequence<R...>) noexcept {
    // profile: view
    return {static_cast<typename M::index_type>(t.strides[R])...};
  }
};

template <class T>
T* offset_pointer(void* data, std::int64_t bytes) noexcept {
  // Only called with non-NULL data: the checks above never do arithmetic on NULL.
  // profile: view
  return reinterpret_cast<T*>(static_cast<unsigned char*>(data) + bytes);
}


// Strides for a std::layout_stride view of an empty tensor. None is ever used, but the
// mapping requires positive, representable strides and a permutation P in which
// stride[P[i]] >= stride[P[i-1]] * extent[P[i-1]]. A zero extent restarts that product, so
// the dimensions are laid out as chains separated by the zero-extent ones; extent-1
// dimensions take stride 1 at the front. The largest extent ends the last chain (its
// extent multiplies nothing), and the others go, largest first, into the first chain
// whose product stays representable. Refused only when that packing fails, e.g. int8
// extents {0, 12, 12, 12, 12}: the largest 12 ends the last chain, and three more cannot share two chains under 127.
template <class IndexType, class StrideArray, class Err>
bool empty_tensor_strides(const DLTensor& t, StrideArray& strides, Err err) noexcept {
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
    if (c > zero_count)
      DLPM_REFUSE(err, errc::stride_overflow,
                  "the tensor is empty, but no strides for std::layout_stride that fit the view's index_type were found "
                  "for its extents (dimension %d, extent %lld); use a wider index_type",
                  items[i], static_cast<long long>(e));
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

// Every stride of M's compact mapping for t's extents is representable in index_type.
// Non-empty, they are bounded by the element count, which fits. Empty, stride(r) still
// multiplies its extents in index_type, and a zero among them need not come first (libc++
// multiplies layout_right's from the last dimension): so the product of a stride's
// non-zero factors must fit, whatever the order. {0, 128, 2^62} into layout_left fails.
template <class M, class Err>
bool compact_strides_fit(const DLTensor& t, Err err) noexcept {
  using index_type = typename M::index_type;
  constexpr std::size_t rank = M::rank();
  const auto uses = stride_factors<M>();  // a constant for the standard layouts
  for (std::size_t r = 0; r < rank; ++r) {
    index_type s = 1;  // as the mapping computes it; each extent fits index_type already
    for (std::size_t q = 0; q < rank; ++q) {
      if (!uses[r][q] || t.shape[q] == 0) continue;
      if (mul_overflows_in(s, static_cast<index_type>(t.shape[q]), &s))
        DLPM_REFUSE(err, errc::stride_overflow,
                    "the tensor is empty, but the layout's stride for dimension %zu multiplies extents past the view's "
                    "index_type (at shape[%zu] = %lld); use a wider index_type",
                    r, q, static_cast<long long>(t.shape[q]));
    }
  }
  return true;
}

// std::layout_stride requires that no two indices share an element: in some order of the
// dimensions with more than one index, each stride steps past the previous dimension's
// span. The order of the dimensions and its reverse were tried by check_structure
// (tensor_summary::ordered_unique); here the order sorted by stride decides.
// The tensor's own strides are read (positive where the extent is above 1, check_structure;
// the view's copies of them are the same values), never NULL here: NULL strides are
// C-contiguous, which check_structure found ordered.
//
// The dimensions are sorted by stride, each with its end = stride * extent, largest first
// (an axis permutation of a row-major array is nearly in that order: a few moves), by
// insertion: no loads through an index. The values are unsigned: check_structure proved
// each (extent - 1) * stride fits int64 with a positive stride, so the end, one stride
// more, is below 2^64 and exact, and a link breaks exactly when the next stride is below
// the end. Equal strides need no tie-break: two dimensions of one stride and extents above
// 1 overlap in either order, and they are adjacent in any sorted order, so the decision is
// the same; an equal stride is inserted after the ones already there. An extent-1
// dimension is (0, 0): sorted last, below every other, its links break nothing, and every
// position of the array is known at compile time (skipped, the count of those sorted was a
// variable, and each insertion computed its address). Read from the end, the array is the
// ascending order, and the first link that breaks there is the one worded; the dimension's
// index is carried only where a refusal is worded.
//
// Strides and ends are two arrays of 8-byte words, not an array of (stride, end) pairs:
// the compiler moved a pair with one 16-byte load, which cannot take its value from the
// two 8-byte stores that had just written the pair (a failed store-to-load forward, a
// stall at every move: the rank-8 permutation took 29.6 ns for 371 instructions, and 14.0
// ns for 373 in two arrays).
// Out of line (inlined, every layout_stride import counted more instructions, the
// permutations too), but not cold: a permutation of the axes is an everyday view, and a
// cold function is compiled for size.
template <std::size_t Rank, class Err>
DLPM_NOINLINE bool layout_stride_unique(const DLTensor& t, Err err) noexcept {
  // profile: uniqueness
  const std::int64_t* const strides = t.strides;
  constexpr bool worded = is_worded<Err>;
  constexpr std::size_t slots = Rank > 0 ? Rank : 1;
  std::uint64_t stride_of[slots], end_of[slots];
  std::size_t index[worded ? slots : 1];
  for (std::size_t r = 0; r < Rank; ++r) {
    // Inserted after every larger or equal stride.
    // Every stride is loaded, and an extent-1 dimension's set to 0 by a select, not a branch
    // around the load (15 fewer instructions at rank 8).
    const auto loaded = static_cast<std::uint64_t>(strides[r]);
    const auto stride = t.shape[r] > 1 ? loaded : 0;
    const auto end = stride * static_cast<std::uint64_t>(t.shape[r]);
    std::size_t j = r;
    for (; j > 0 && stride_of[j - 1] < stride; --j) {
      stride_of[j] = stride_of[j - 1];
      end_of[j] = end_of[j - 1];
      if constexpr (worded) index[j] = index[j - 1];
    }
    stride_of[j] = stride;
    end_of[j] = end;
    if constexpr (worded) index[j] = r;
  }
  for (std::size_t i = Rank; i-- > 1;) {
    if (stride_of[i - 1] < end_of[i])
      DLPM_REFUSE(err, errc::overlapping_strides,
                  "dimensions %zu (stride %lld) and %zu (shape %lld, stride %lld) overlap; std::layout_stride needs unique "
                  "elements (use layout_stride_relaxed)",
                  index[i - 1], static_cast<long long>(stride_of[i - 1]), index[i],
                  static_cast<long long>(end_of[i] / stride_of[i]), static_cast<long long>(stride_of[i]));
  }
  return true;
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
