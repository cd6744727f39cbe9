// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which compact layout a mapping is (row-major, column-major or neither), found at compile
// time by probing the layout itself: import checks strides against it, export computes
// the strides from it.
#ifndef DLPACK_MDSPAN_COMPACT_LAYOUTS_HPP
#define DLPACK_MDSPAN_COMPACT_LAYOUTS_HPP

#include <dlpack_mdspan/config.hpp>

#include <array>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// The same extents type with every extent dynamic (std::extents and cuda::std::extents
// alike), for probing a layout with extents of our choosing.
template <class Extents>
struct all_dynamic;
template <template <class, std::size_t...> class Extents, class I, std::size_t... E>
struct all_dynamic<Extents<I, E...>> {
  using type = Extents<I, (E | std::numeric_limits<std::size_t>::max())...>;
};

// uses[r][q]: extent q is a factor of stride r in M's compact layout (layout_right: q > r,
// layout_left: q < r), found at compile time by probing the layout itself with one extent
// of 2 among 1s, so any compact layout (std::, cuda::std::, padded) is covered.
template <class M, std::size_t Rank = M::rank()>
constexpr std::array<std::array<bool, Rank>, Rank> compact_stride_factors() {
  using dynamic = typename all_dynamic<typename M::extents_type>::type;
  using probe = typename M::layout_type::template mapping<dynamic>;
  std::array<std::array<bool, Rank>, Rank> uses{};
  for (std::size_t q = 0; q < Rank; ++q) {
    const probe m = [&]<std::size_t... I>(std::index_sequence<I...>) {
      return probe(dynamic(static_cast<typename dynamic::index_type>(I == q ? 2 : 1)...));
    }(std::make_index_sequence<Rank>{});
    for (std::size_t r = 0; r < Rank; ++r) uses[r][q] = m.stride(r) > 1;
  }
  return uses;
}

// Whether compact_stride_factors<M>() is a constant expression: the mapping's constructor from
// extents and its stride() are constexpr, as the standard's are (LayoutMapping does not ask a
// user's mapping to be).
template <class M>
concept constant_stride_probe = requires { typename std::bool_constant<(compact_stride_factors<M>(), true)>; };

// compact_stride_factors<M>(), a constant where the probe is one, else probed when asked.
template <class M>
constexpr std::array<std::array<bool, M::rank()>, M::rank()> stride_factors() {
  if constexpr (constant_stride_probe<M>) {
    constexpr auto uses = compact_stride_factors<M>();
    return uses;
  } else {
    return compact_stride_factors<M>();
  }
}

// A layout whose mapping is made from the extents alone and always covers every index
// of its span (layout_right, layout_left): its strides follow from the extents, so the
// probe above reads them off, at compile time: only where the mapping's constructor and
// stride() are constexpr (the standard's are; LayoutMapping does not ask a user's to be: a
// layout whose probe is no constant expression is one of the others, its strides read at
// run time). Excludes layout_stride_relaxed (which also has a constructor from the
// extents, for its row-major default) and the padded layouts.
template <class M>
concept probeable_compact_layout = M::rank() > 0 && M::mapping_type::is_always_exhaustive() && requires {
  typename M::layout_type::template mapping<typename all_dynamic<typename M::extents_type>::type>;
} && std::is_constructible_v<typename M::layout_type::template mapping<typename all_dynamic<typename M::extents_type>::type>,
                             const typename all_dynamic<typename M::extents_type>::type&> && constant_stride_probe<M>;

enum class compact_order { other, row_major, column_major };

// row_major: M's layout is layout_right's (std:: or cuda::std::): stride(r) is the
// product of the extents after r. column_major: layout_left's, the extents before r.
// other: any other layout (padded, strided, relaxed), and rank 0.
template <class M>
constexpr compact_order compact_order_of() {
  if constexpr (!probeable_compact_layout<M>) {
    return compact_order::other;
  } else {
    constexpr auto uses = compact_stride_factors<M>();
    bool right = true, left = true;
    for (std::size_t r = 0; r < M::rank(); ++r)
      for (std::size_t q = 0; q < M::rank(); ++q) {
        right &= uses[r][q] == (q > r);
        left &= uses[r][q] == (q < r);
      }
    return right ? compact_order::row_major : left ? compact_order::column_major : compact_order::other;
  }
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
