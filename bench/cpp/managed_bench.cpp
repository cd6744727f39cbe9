// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 3. Owning tensors: to_managed_tensor, managed_tensor::adopt / view / release, and the
// whole round trip, each against the same work written by hand (one block with the struct,
// shape, strides and owner; a deleter that frees it; a raw read for the view). Rank 4,
// float, dynamic extents, layout_right.
#include <catch2/catch.hpp>

#include "common.hpp"

#include <cstdlib>
#include <memory>

namespace {

alignas(64) float g_data[256];

using source = std::mdspan<float, std::dextents<std::size_t, 4>>;
using target = std::mdspan<float, std::dextents<std::int64_t, 4>>;

[[noreturn]] void bad_version() { std::abort(); }

// The hand-written consumer: version check (the DLPack spec requires it), raw read.
inline target hand_view(const DLManagedTensorVersioned* p) noexcept {
  if (p->version.major != DLPACK_MAJOR_VERSION) bad_version();
  return bench::raw_read<target>(p->dl_tensor);
}

}  // namespace

TEST_CASE("managed export: to_managed_tensor + destroy vs a hand-built block", "[managed]") {
  source md(g_data, 2, 3, 4, 5);
  {
    auto mt = dm::to_managed_tensor(md, bench::trivial_owner{});
    const target v = mt.view<target>();
    REQUIRE(v.data_handle() == g_data);
    REQUIRE(v.extent(3) == 5);
  }
  bench::compare("managed tensor",
                 bench::op("rank 4 export + destroy: hand-built block + deleter",
                           [md]() mutable {
                             bench::launder(md);
                             DLManagedTensorVersioned* p = bench::hand_managed(md, bench::trivial_owner{});
                             bench::escape(p);
                             p->deleter(p);
                           }),
                 {bench::op("rank 4 export + destroy: to_managed_tensor(md, owner)", [md]() mutable {
                   bench::launder(md);
                   auto mt = dm::to_managed_tensor(md, bench::trivial_owner{});
                   bench::escape(mt.get());
                 })},
                 "owner: a trivial struct (no allocation of its own)");
}

// CCCL has no owning import; its checked import of the same DLTensor (p->dl_tensor, rank 4,
// layout_right) is the reference for the target "adopt + view + release within CCCL's
// import time plus 3 ns", measured in the same interleaved group.
TEST_CASE("adopt + view + release vs a version check and a raw read", "[managed]") {
  source md(g_data, 2, 3, 4, 5);
  DLManagedTensorVersioned* p = dm::to_managed_tensor(md, bench::trivial_owner{}).release();
  REQUIRE(p->dl_tensor.strides != nullptr);
  std::vector<bench::operation> candidates;
  candidates.push_back(bench::op("rank 4 adopt + view + release: managed_tensor::adopt(p).view<M>()", [p]() mutable {
    bench::launder(p);
    auto mt = dm::managed_tensor::adopt(p);
    target v = mt.view<target>();
    bench::escape(&v);
    p = mt.release();
  }));
#if DLPM_BENCH_HAVE_CCCL
  REQUIRE(bench::cccl::import_once(4, bench::cccl::layout::right, p->dl_tensor) ==
          bench::describe(bench::raw_read<target>(p->dl_tensor)));
  candidates.push_back(
      bench::cccl::import_op("rank 4 adopt + view + release: CCCL import only, cuda::to_host_mdspan(p->dl_tensor)", 4,
                             bench::cccl::layout::right, &p->dl_tensor));
#endif
  bench::compare("managed tensor",
                 bench::op("rank 4 adopt + view + release: version check + raw read",
                           [p]() mutable {
                             bench::launder(p);
                             target v = hand_view(p);
                             bench::escape(&v);
                           }),
                 std::move(candidates), "no deleter runs: see the export + destroy rows for that");
  p->deleter(p);
}

TEST_CASE("round trip: export + release + adopt + view + destroy", "[managed]") {
  source md(g_data, 2, 3, 4, 5);
  bench::compare("managed tensor",
                 bench::op("rank 4 round trip: by hand",
                           [md]() mutable {
                             bench::launder(md);
                             DLManagedTensorVersioned* p = bench::hand_managed(md, bench::trivial_owner{});
                             bench::escape(p);
                             target v = hand_view(p);
                             bench::escape(&v);
                             p->deleter(p);
                           }),
                 {bench::op("rank 4 round trip: to_managed_tensor, release, adopt, view, destroy", [md]() mutable {
                   bench::launder(md);
                   DLManagedTensorVersioned* p = dm::to_managed_tensor(md, bench::trivial_owner{}).release();
                   bench::escape(p);
                   auto mt = dm::managed_tensor::adopt(p);
                   target v = mt.view<target>();
                   bench::escape(&v);
                 })},
                 "owner: a trivial struct");

  auto shared = std::make_shared<float[]>(128);
  source smd(shared.get(), 2, 3, 4, 5);
  bench::compare("managed tensor",
                 bench::op("rank 4 round trip, shared_ptr owner: by hand",
                           [smd, shared]() mutable {
                             bench::launder(smd);
                             DLManagedTensorVersioned* p = bench::hand_managed(smd, std::shared_ptr<float[]>(shared));
                             bench::escape(p);
                             target v = hand_view(p);
                             bench::escape(&v);
                             p->deleter(p);
                           }),
                 {bench::op("rank 4 round trip, shared_ptr owner: to_managed_tensor ... destroy", [smd, shared]() mutable {
                   bench::launder(smd);
                   DLManagedTensorVersioned* p = dm::to_managed_tensor(smd, std::shared_ptr<float[]>(shared)).release();
                   bench::escape(p);
                   auto mt = dm::managed_tensor::adopt(p);
                   target v = mt.view<target>();
                   bench::escape(&v);
                 })},
                 "owner: a std::shared_ptr copy (two atomic counts per round trip)");
}
