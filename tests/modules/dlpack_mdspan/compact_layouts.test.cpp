// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// compact_layouts.hpp: which compact layout a mapping is, found by probing the layout. Import
// and export trust its answer to skip the stride arithmetic, so a wrong answer would be a
// silent wrong view. Internal (detail), so the header is included in both forms of the suite.
#include "support/prelude.hpp"

#include <dlpack_mdspan/compact_layouts.hpp>
#include <dlpack_mdspan/layout_stride_relaxed.hpp>

#include <array>
#include <cstddef>
#include <mdspan>
#include <type_traits>

namespace dd = dlpack_mdspan::detail;
using dd::compact_order;
constexpr std::size_t dyn = std::dynamic_extent;

namespace {

// A compact layout of rank 3 that is neither row- nor column-major: mode 0 innermost, then
// mode 2, then mode 1. Just enough of a mapping for the probe.
struct layout_middle {
  template <class Extents>
  struct mapping {
    Extents e;
    constexpr explicit mapping(const Extents& x) : e(x) {}
    static constexpr bool is_always_exhaustive() { return true; }
    constexpr typename Extents::index_type stride(std::size_t r) const {
      return r == 0 ? 1 : r == 2 ? e.extent(0) : e.extent(0) * e.extent(2);
    }
  };
};

// layout_middle's strides, without constexpr: the probe is then no constant expression
// (LayoutMapping does not ask a user's mapping to be constexpr).
struct layout_middle_at_run_time {
  template <class Extents>
  struct mapping {
    Extents e;
    explicit mapping(const Extents& x) : e(x) {}
    static constexpr bool is_always_exhaustive() { return true; }
    typename Extents::index_type stride(std::size_t r) const { return r == 0 ? 1 : r == 2 ? e.extent(0) : e.extent(0) * e.extent(2); }
  };
};

// What compact_order_of reads of a view type: its extents, layout and mapping.
template <class Layout, class Extents>
struct view_type {
  using extents_type = Extents;
  using layout_type = Layout;
  using mapping_type = typename Layout::template mapping<Extents>;
  static constexpr std::size_t rank() { return Extents::rank(); }
};

template <class Layout, std::size_t... E>
using md = std::mdspan<float, std::extents<int, E...>, Layout>;

template <std::size_t Rank>
using factors = std::array<std::array<bool, Rank>, Rank>;

// The factors a layout_right (Right) or layout_left stride of rank Rank is made of.
template <std::size_t Rank, bool Right>
constexpr factors<Rank> expected_factors() {
  factors<Rank> f{};
  for (std::size_t r = 0; r < Rank; ++r)
    for (std::size_t q = 0; q < Rank; ++q) f[r][q] = Right ? q > r : q < r;
  return f;
}

}  // namespace

TEST_CASE("all_dynamic makes every extent dynamic and keeps the index type") {
  static_assert(std::is_same_v<dd::all_dynamic<std::extents<int, 2, dyn, 3>>::type, std::dextents<int, 3>>);
  static_assert(std::is_same_v<dd::all_dynamic<std::extents<std::size_t, 4>>::type, std::dextents<std::size_t, 1>>);
  static_assert(std::is_same_v<dd::all_dynamic<std::extents<short>>::type, std::extents<short>>);
  CHECK(std::is_same_v<dd::all_dynamic<std::extents<long, 5, 6>>::type, std::dextents<long, 2>>);
}

TEST_CASE("compact_stride_factors reads each stride's extent factors off the layout") {
  CHECK(dd::compact_stride_factors<md<std::layout_right, 2, 3, 4>>() == expected_factors<3, true>());
  CHECK(dd::compact_stride_factors<md<std::layout_left, 2, 3, 4>>() == expected_factors<3, false>());
  CHECK(dd::compact_stride_factors<md<std::layout_right, dyn, dyn, dyn, dyn, dyn>>() == expected_factors<5, true>());
  CHECK(dd::compact_stride_factors<md<std::layout_left, 7, dyn>>() == expected_factors<2, false>());
  // layout_middle: stride(0) = 1, stride(2) = e0, stride(1) = e0 * e2.
  constexpr factors<3> middle{{{false, false, false}, {true, false, true}, {true, false, false}}};
  CHECK(dd::compact_stride_factors<view_type<layout_middle, std::dextents<int, 3>>>() == middle);
}

TEST_CASE("probeable_compact_layout: exhaustive layouts made from the extents, rank above 0") {
  static_assert(dd::probeable_compact_layout<md<std::layout_right, 2, 3>>);
  static_assert(dd::probeable_compact_layout<md<std::layout_left, dyn>>);
  static_assert(dd::probeable_compact_layout<view_type<layout_middle, std::dextents<int, 3>>>);
  static_assert(!dd::probeable_compact_layout<md<std::layout_right>>);    // rank 0
  static_assert(!dd::probeable_compact_layout<md<std::layout_stride, 2, 3>>);  // not made from the extents
  // Made from the extents (its row-major default), but not always exhaustive.
  static_assert(!dd::probeable_compact_layout<md<dlpack_mdspan::layout_stride_relaxed, 2, 3>>);
  CHECK(dd::probeable_compact_layout<md<std::layout_left, 4, 4>>);
}

TEST_CASE("a probe that is no constant expression makes no compile-time answer, and is probed at run time") {
  using run_time = view_type<layout_middle_at_run_time, std::dextents<int, 3>>;
  static_assert(dd::constant_stride_probe<view_type<layout_middle, std::dextents<int, 3>>>);
  static_assert(dd::constant_stride_probe<md<std::layout_right, 2, 3>>);
  static_assert(!dd::constant_stride_probe<run_time>);
  static_assert(!dd::probeable_compact_layout<run_time>);
  static_assert(dd::compact_order_of<run_time>() == compact_order::other);
  constexpr factors<3> middle{{{false, false, false}, {true, false, true}, {true, false, false}}};
  CHECK(dd::stride_factors<run_time>() == middle);
  static_assert(dd::stride_factors<md<std::layout_left, 2, 3, 4>>() == expected_factors<3, false>());
}

TEST_CASE("compact_order_of names layout_right and layout_left, and nothing else") {
  CHECK(dd::compact_order_of<md<std::layout_right, 2, 3, 4>>() == compact_order::row_major);
  CHECK(dd::compact_order_of<md<std::layout_right, dyn, 3>>() == compact_order::row_major);
  CHECK(dd::compact_order_of<md<std::layout_left, 2, 3, 4>>() == compact_order::column_major);
  CHECK(dd::compact_order_of<md<std::layout_left, dyn, dyn>>() == compact_order::column_major);
  // Rank 1: both orders describe it; the answer is row_major, so export and import agree.
  CHECK(dd::compact_order_of<md<std::layout_right, 5>>() == compact_order::row_major);
  CHECK(dd::compact_order_of<md<std::layout_left, 5>>() == compact_order::row_major);
  CHECK(dd::compact_order_of<view_type<layout_middle, std::dextents<int, 3>>>() == compact_order::other);
  CHECK(dd::compact_order_of<md<std::layout_stride, 2, 3>>() == compact_order::other);
  CHECK(dd::compact_order_of<md<dlpack_mdspan::layout_stride_relaxed, 2, 3>>() == compact_order::other);
  CHECK(dd::compact_order_of<md<std::layout_right>>() == compact_order::other);  // rank 0
  static_assert(dd::compact_order_of<md<std::layout_left, 2, 2>>() == compact_order::column_major);  // at compile time
}
