// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 2. Checked import: one interleaved group per (rank, layout), ranks 1, 2, 4 and 8 and the
// layouts layout_right, layout_left, layout_stride and layout_stride_relaxed (ours against
// CCCL's cuda::layout_stride_relaxed). float, dynamic extents with std::int64_t index type,
// a compact CPU tensor with explicit strides: row-major for right, stride and relaxed,
// column-major for left. Each group:
//
//   baseline  the checked import a careful programmer writes by hand (bench::hand_import:
//             dtype, ndim, device, the layout's strides, alignment; nothing else)
//   raw read  the same fields read into the mdspan without a single check (the floor)
//   CCCL      cuda::to_host_mdspan<float, R, Layout>(t) (when CCCL is built in)
//   ours      dm::to_mdspan<M>(t) and dm::try_to_mdspan<M>(t)
//
// Every candidate's view is checked against the raw read before the timing.
//
// 3. What producers also send (section "import variants"): the same rank-2 float tensor
// into to_mdspan<M>(t) with NULL strides (NumPy 1.x, legacy producers), with a byte_offset,
// on pinned memory (kDLCUDAHost), column-major into layout_stride (a transposed view), and
// empty; the baseline is the plain row-major import of group 2.
//
// 4. The strided views users have (section "strided import"), ranks 1, 2, 4 and 8, into
// layout_stride and layout_stride_relaxed: a slice (a[..., :k] of a row-major array: its
// strides descend but are not compact; rank 1: a[::2]), a transpose (the reversed axes of a
// row-major array, ascending strides), a permutation (axis pairs swapped, ranks 4 and 8), a
// broadcast (axis 0 with stride 0), a reversed axis (a[::-1] on axis 0, a negative stride)
// and an extent-1 axis with an odd stride (7). The baseline is the hand-written checked
// import; CCCL's to_host_mdspan is a candidate where it accepts the tensor. Broadcast and
// reversed rows are relaxed only: std::layout_stride refuses them (ours, CCCL's and the
// hand-written import alike).
#include <catch2/catch.hpp>

#include "common.hpp"

#include <cstdlib>
#include <exception>
#include <string>

namespace {

alignas(64) float g_data[4096];

[[noreturn]] void import_failed() { std::abort(); }

template <class L>
constexpr const char* layout_name() {
  if constexpr (std::is_same_v<L, std::layout_right>) return "layout_right";
  else if constexpr (std::is_same_v<L, std::layout_left>) return "layout_left";
  else if constexpr (std::is_same_v<L, std::layout_stride>) return "layout_stride";
  else return "layout_stride_relaxed";
}

#if DLPM_BENCH_HAVE_CCCL
template <class L>
constexpr bench::cccl::layout cccl_layout() {
  if constexpr (std::is_same_v<L, std::layout_right>) return bench::cccl::layout::right;
  else if constexpr (std::is_same_v<L, std::layout_left>) return bench::cccl::layout::left;
  else if constexpr (std::is_same_v<L, std::layout_stride>) return bench::cccl::layout::stride;
  else return bench::cccl::layout::relaxed;
}
#endif

void require_same(const bench::view_info& got, const bench::view_info& want) {
  REQUIRE(got.data == want.data);
  REQUIRE(got.rank == want.rank);
  REQUIRE(got.offset0 == want.offset0);
  for (std::size_t r = 0; r < want.rank; ++r) {
    REQUIRE(got.extents[r] == want.extents[r]);
    REQUIRE(got.strides[r] == want.strides[r]);
  }
}

template <class M>
void import_group(bench::tensor_fixture<M::rank()>& fx) {
  constexpr std::size_t R = M::rank();
  using L = typename M::layout_type;
  const char* layout = layout_name<L>();
  DLTensor* t = &fx.t;
  {
    const bench::view_info want = bench::describe(bench::raw_read<M>(fx.t));
    REQUIRE(want.data == static_cast<const void*>(g_data));
    require_same(bench::describe(bench::hand_import<M>(fx.t)), want);
    require_same(bench::describe(dm::to_mdspan<M>(fx.t)), want);
    const auto tried = dm::try_to_mdspan<M>(fx.t);
    REQUIRE(tried.has_value());
    require_same(bench::describe(*tried), want);
#if DLPM_BENCH_HAVE_CCCL
    require_same(bench::cccl::import_once(R, cccl_layout<L>(), fx.t), want);
#endif
  }
  {
    // The checks the baseline makes, every checked candidate makes too: each refuses a
    // tensor that breaks one of them.
    auto refused_by_all = [&](const DLTensor& bad) {
      REQUIRE_THROWS(bench::hand_import<M>(bad));
      REQUIRE_THROWS(dm::to_mdspan<M>(bad));
      REQUIRE_FALSE(dm::try_to_mdspan<M>(bad).has_value());
#if DLPM_BENCH_HAVE_CCCL
      REQUIRE_THROWS(bench::cccl::import_once(R, cccl_layout<L>(), bad));
#endif
    };
    DLTensor bad = fx.t;
    bad.dtype.bits = 64;
    refused_by_all(bad);
    bad = fx.t;
    bad.ndim = static_cast<std::int32_t>(R + 1);
    refused_by_all(bad);
    bad = fx.t;
    bad.device.device_type = kDLCUDA;
    refused_by_all(bad);
    bad = fx.t;
    bad.data = reinterpret_cast<char*>(g_data) + 2;
    refused_by_all(bad);
    if constexpr (!std::is_same_v<L, dm::layout_stride_relaxed>) {
      std::array<std::int64_t, R> strides = fx.strides;
      strides[0] = -strides[0];
      bad = fx.t;
      bad.strides = strides.data();
      refused_by_all(bad);
    }
  }
  std::vector<bench::operation> candidates;
  candidates.push_back(bench::op(bench::label("rank %zu, %s: raw read, no checks", R, layout), [t]() mutable {
    bench::launder(t);
    bench::launder(*t);
    M m = bench::raw_read<M>(*t);
    bench::escape(&m);
  }));
#if DLPM_BENCH_HAVE_CCCL
  candidates.push_back(bench::cccl::import_op(bench::label("rank %zu, %s: cuda::to_host_mdspan (CCCL)", R, layout), R,
                                              cccl_layout<L>(), t));
#endif
  candidates.push_back(bench::op(bench::label("rank %zu, %s: to_mdspan<M>(t)", R, layout), [t]() mutable {
    bench::launder(t);
    bench::launder(*t);
    M m = dm::to_mdspan<M>(*t);
    bench::escape(&m);
  }));
  candidates.push_back(bench::op(bench::label("rank %zu, %s: try_to_mdspan<M>(t)", R, layout), [t]() mutable {
    bench::launder(t);
    bench::launder(*t);
    auto r = dm::try_to_mdspan<M>(*t);
    if (!r.has_value()) import_failed();
    M m = *r;
    bench::escape(&m);
  }));
  bench::compare("import view",
                 bench::op(bench::label("rank %zu, %s: hand-written checked import", R, layout), [t]() mutable {
                   bench::launder(t);
                   bench::launder(*t);
                   M m = bench::hand_import<M>(*t);
                   bench::escape(&m);
                 }),
                 std::move(candidates));
}

template <std::size_t R>
void import_rank(const std::array<std::int64_t, R>& shape) {
  using E = std::dextents<std::int64_t, R>;
  bench::tensor_fixture<R> row(g_data, shape, bench::order::row_major);
  bench::tensor_fixture<R> col(g_data, shape, bench::order::column_major);
  import_group<std::mdspan<float, E, std::layout_right>>(row);
  import_group<std::mdspan<float, E, std::layout_left>>(col);
  import_group<std::mdspan<float, E, std::layout_stride>>(row);
  import_group<std::mdspan<float, E, dm::layout_stride_relaxed>>(row);
}

}  // namespace

TEST_CASE("import view: hand-written checked import vs raw read, CCCL and to_mdspan<M>(t)", "[import]") {
  import_rank<1>({64});
  import_rank<2>({8, 8});
  import_rank<4>({2, 3, 4, 5});
  import_rank<8>({2, 3, 2, 2, 2, 2, 2, 3});
}

namespace {

template <class M>
bench::operation import_op(const char* name, DLTensor* t) {
  return bench::op(name, [t]() mutable {
    bench::launder(t);
    bench::launder(*t);
    M m = dm::to_mdspan<M>(*t);
    bench::escape(&m);
  });
}

}  // namespace

TEST_CASE("import variants: NULL strides, byte_offset, pinned memory, transposed, empty", "[import]") {
  using E = std::dextents<std::int64_t, 2>;
  using right = std::mdspan<float, E, std::layout_right>;
  using strided = std::mdspan<float, E, std::layout_stride>;
  bench::tensor_fixture<2> plain(g_data, {8, 8});
  bench::tensor_fixture<2> null_strides(g_data, {8, 8});
  null_strides.t.strides = nullptr;
  bench::tensor_fixture<2> offset(g_data, {8, 8});
  offset.t.byte_offset = 64;
  bench::tensor_fixture<2> pinned(g_data, {8, 8});
  pinned.t.device = DLDevice{kDLCUDAHost, 0};
  bench::tensor_fixture<2> transposed(g_data, {8, 8}, bench::order::column_major);
  bench::tensor_fixture<2> empty(g_data, {0, 8});
  for (DLTensor* t : {&plain.t, &null_strides.t, &offset.t, &pinned.t, &empty.t}) REQUIRE(dm::try_to_mdspan<right>(*t).has_value());
  REQUIRE(dm::try_to_mdspan<strided>(transposed.t).has_value());
  REQUIRE(dm::to_mdspan<right>(offset.t).data_handle() == g_data + 16);
  REQUIRE(dm::to_mdspan<strided>(transposed.t).stride(1) == 8);
  std::vector<bench::operation> candidates;
  candidates.push_back(import_op<right>("rank 2, layout_right: NULL strides", &null_strides.t));
  candidates.push_back(import_op<right>("rank 2, layout_right: byte_offset 64", &offset.t));
  candidates.push_back(import_op<right>("rank 2, layout_right: pinned memory (kDLCUDAHost)", &pinned.t));
  candidates.push_back(import_op<strided>("rank 2, layout_stride: column-major (transposed)", &transposed.t));
  candidates.push_back(import_op<right>("rank 2, layout_right: empty (shape {0, 8})", &empty.t));
  bench::compare("import variants", import_op<right>("rank 2, layout_right: row-major, explicit strides", &plain.t),
                 std::move(candidates));
}

namespace {

using bench::kind_name;
using bench::strided_fixture;
using bench::view_kind;

/// The same elements at the same addresses: element (0, ..., 0), the extents, and the
/// stride of every axis with more than one index.
void require_same_elements(const bench::view_info& got, const bench::view_info& want) {
  REQUIRE(got.rank == want.rank);
  REQUIRE(static_cast<const float*>(got.data) + got.offset0 == static_cast<const float*>(want.data) + want.offset0);
  for (std::size_t r = 0; r < want.rank; ++r) {
    REQUIRE(got.extents[r] == want.extents[r]);
    if (want.extents[r] != 1) REQUIRE(got.strides[r] == want.strides[r]);
  }
}

template <class M>
void strided_group(view_kind kind, const std::array<std::int64_t, M::rank()>& shape) {
  constexpr std::size_t R = M::rank();
  using L = typename M::layout_type;
  const bool positive_only = std::is_same_v<L, std::layout_stride>;
  if (positive_only && (kind == view_kind::broadcast || kind == view_kind::reversed)) return;
  strided_fixture<R> fx(g_data, kind, shape);
  DLTensor* t = &fx.t;
  const std::string what = bench::label("rank %zu, %s, %s", R, layout_name<L>(), kind_name(kind));
  const bench::view_info want = bench::describe(bench::hand_import<M>(*t));
  require_same_elements(bench::describe(dm::to_mdspan<M>(*t)), want);
  const auto tried = dm::try_to_mdspan<M>(*t);
  REQUIRE(tried.has_value());
  require_same_elements(bench::describe(*tried), want);
  std::vector<bench::operation> candidates;
#if DLPM_BENCH_HAVE_CCCL
  bool cccl_accepts = true;
  try {
    require_same_elements(bench::cccl::import_once(R, cccl_layout<L>(), *t), want);
  } catch (const std::exception&) {
    cccl_accepts = false;  // no CCCL row for this tensor
  }
  if (cccl_accepts)
    candidates.push_back(bench::cccl::import_op(what + ": cuda::to_host_mdspan (CCCL)", R, cccl_layout<L>(), t));
#endif
  candidates.push_back(bench::op(what + ": to_mdspan<M>(t)", [t]() mutable {
    bench::launder(t);
    bench::launder(*t);
    M m = dm::to_mdspan<M>(*t);
    bench::escape(&m);
  }));
  candidates.push_back(bench::op(what + ": try_to_mdspan<M>(t)", [t]() mutable {
    bench::launder(t);
    bench::launder(*t);
    auto r = dm::try_to_mdspan<M>(*t);
    if (!r.has_value()) import_failed();
    M m = *r;
    bench::escape(&m);
  }));
  bench::compare("strided import",
                 bench::op(what + ": hand-written checked import",
                           [t]() mutable {
                             bench::launder(t);
                             bench::launder(*t);
                             M m = bench::hand_import<M>(*t);
                             bench::escape(&m);
                           }),
                 std::move(candidates));
}

template <std::size_t R>
void strided_rank(const std::array<std::int64_t, R>& shape) {
  using E = std::dextents<std::int64_t, R>;
  for (view_kind kind : {view_kind::slice, view_kind::transpose, view_kind::permutation, view_kind::broadcast,
                         view_kind::reversed, view_kind::unit_axis}) {
    if (kind == view_kind::transpose && R < 2) continue;     // rank 1 has one axis order
    if (kind == view_kind::permutation && R < 4) continue;  // rank 2's only permutation is the transpose
    strided_group<std::mdspan<float, E, std::layout_stride>>(kind, shape);
    strided_group<std::mdspan<float, E, dm::layout_stride_relaxed>>(kind, shape);
  }
}

}  // namespace

TEST_CASE("strided import: slices, transposes, permutations, broadcasts, reversed and extent-1 axes", "[import][strided]") {
  strided_rank<1>({64});
  strided_rank<2>({8, 8});
  strided_rank<4>({2, 3, 4, 5});
  strided_rank<8>({2, 3, 2, 2, 2, 2, 2, 3});
}
