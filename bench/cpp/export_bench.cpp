// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 1. Export views: to_dlpack_tensor(md).get() against a DLTensor filled by hand, for ranks
// 1, 2, 4 and 8, with static and with dynamic extents (std::size_t index type, as
// std::dims gives; layout_right; float). When CCCL is built in, its
// cuda::to_dlpack_tensor(cuda::host_mdspan).get() on the same data and extents is a
// candidate too (cccl_bench.cpp holds the same shapes; the check below compares them).
#include <catch2/catch.hpp>

#include "common.hpp"

namespace {

float g_data[256];

template <class M>
void check_export(const M& md) {
  auto view = dm::to_dlpack_tensor(md);
  const DLTensor t = view.get();
  bench::raw_tensor<M::rank()> raw;
  bench::hand_fill(md, raw);
  REQUIRE(t.data == raw.t.data);
  REQUIRE(t.ndim == raw.t.ndim);
  REQUIRE(t.byte_offset == raw.t.byte_offset);
  for (std::size_t r = 0; r < M::rank(); ++r) {
    REQUIRE(t.shape[r] == raw.shape[r]);
    REQUIRE(t.strides[r] == raw.strides[r]);
  }
}

#if DLPM_BENCH_HAVE_CCCL
template <class M>
void check_cccl_export(const M& md, bool static_extents) {
  const bench::tensor_info c = bench::cccl::export_once(M::rank(), static_extents, const_cast<float*>(md.data_handle()));
  bench::raw_tensor<M::rank()> raw;
  bench::hand_fill(md, raw);
  REQUIRE(c.t.data == raw.t.data);
  REQUIRE(c.t.ndim == raw.t.ndim);
  REQUIRE(c.t.byte_offset == raw.t.byte_offset);
  REQUIRE(c.t.device.device_type == raw.t.device.device_type);
  REQUIRE(c.t.device.device_id == raw.t.device.device_id);
  REQUIRE(c.t.dtype.code == raw.t.dtype.code);
  REQUIRE(c.t.dtype.bits == raw.t.dtype.bits);
  REQUIRE(c.t.dtype.lanes == raw.t.dtype.lanes);
  for (std::size_t r = 0; r < M::rank(); ++r) {
    REQUIRE(c.shape[r] == raw.shape[r]);
    REQUIRE(c.strides[r] == raw.strides[r]);
  }
}
#endif

template <class M>
void export_group(const char* kind, M md) {
  constexpr std::size_t R = M::rank();
  const bool static_extents = M::rank_dynamic() == 0;
  check_export(md);
  std::vector<bench::operation> candidates;
  candidates.push_back(
      bench::op(bench::label("rank %zu, %s extents: to_dlpack_tensor(md).get()", R, kind), [md]() mutable {
        bench::launder(md);
        auto view = dm::to_dlpack_tensor(md);
        const DLTensor& t = view.get();  // a reference into view: escaping t escapes view too
        bench::escape(&t);
      }));
#if DLPM_BENCH_HAVE_CCCL
  check_cccl_export(md, static_extents);
  candidates.push_back(
      bench::cccl::export_op(bench::label("rank %zu, %s extents: cuda::to_dlpack_tensor(md).get() (CCCL)", R, kind), R,
                             static_extents, const_cast<float*>(md.data_handle())));
#else
  (void)static_extents;
#endif
  bench::compare("export view",
                 bench::op(bench::label("rank %zu, %s extents: hand-filled DLTensor", R, kind),
                           [md]() mutable {
                             bench::launder(md);
                             bench::raw_tensor<R> raw;
                             bench::hand_fill(md, raw);
                             bench::escape(&raw);
                           }),
                 std::move(candidates));
}

}  // namespace

TEST_CASE("export view: to_dlpack_tensor(md).get() vs a hand-filled DLTensor", "[export]") {
  using std::extents;
  using std::size_t;
  export_group("static", std::mdspan<float, extents<size_t, 64>>(g_data));
  export_group("dynamic", std::mdspan<float, std::dextents<size_t, 1>>(g_data, 64));
  export_group("static", std::mdspan<float, extents<size_t, 8, 8>>(g_data));
  export_group("dynamic", std::mdspan<float, std::dextents<size_t, 2>>(g_data, 8, 8));
  export_group("static", std::mdspan<float, extents<size_t, 2, 3, 4, 5>>(g_data));
  export_group("dynamic", std::mdspan<float, std::dextents<size_t, 4>>(g_data, 2, 3, 4, 5));
  export_group("static", std::mdspan<float, extents<size_t, 2, 2, 2, 2, 2, 2, 2, 2>>(g_data));
  export_group("dynamic", std::mdspan<float, std::dextents<size_t, 8>>(g_data, 2, 2, 2, 2, 2, 2, 2, 2));
}
