// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The checks of an import that CCCL's cuda::to_host_mdspan does not make, each shown by a
// tensor that breaks it: CCCL's import accepts the tensor and returns a view of it, ours
// refuses it with the error that names the rule. docs/performance.md counts these
// instructions as "checks CCCL does not make" (bench/import_profile.py's groups, the same
// names here); this is what shows that CCCL does not make them, and what its view then
// says that is false. Run with every benchmark run (scripts/bench, --smoke in CI): a CCCL
// that adds a check fails here, and the claim is then out of date.
//
// One rule goes the other way: std::layout_stride's extent-1 dimension, whose stride CCCL
// requires to be positive, where NumPy's and PyTorch's broadcasts put 0 (last section).
//
// Not run through CCCL: shape or strides misaligned for int64_t (CCCL reads them as they
// are, so the call itself would be the undefined behaviour our check refuses) and a
// byte_offset that wraps data's address (CCCL adds it to the pointer: the same).
#include <catch2/catch.hpp>

#include "common.hpp"

#include <array>
#include <cstdint>
#include <string>

#if DLPM_BENCH_HAVE_CCCL

namespace {

alignas(64) float g_elements[64];

template <std::size_t R>
using stride_view = std::mdspan<float, std::dextents<std::int64_t, R>, std::layout_stride>;
template <std::size_t R>
using relaxed_view = std::mdspan<float, std::dextents<std::int64_t, R>, dm::layout_stride_relaxed>;
template <std::size_t R>
using right_view = std::mdspan<float, std::dextents<std::int64_t, R>, std::layout_right>;

constexpr std::int64_t two_to(int k) { return std::int64_t{1} << k; }

/// Our import's refusal of `t` into M: its code (the message is printed with a failure).
template <class M>
dm::errc our_refusal(const DLTensor& t) {
  const auto r = dm::try_to_mdspan<M>(t);
  REQUIRE_FALSE(r.has_value());
  INFO("ours: " << r.error().message().c_str());
  return r.error().code();
}

/// CCCL's import of `t`: accepted, with the view's extents and strides the tensor's.
template <std::size_t R>
bench::cccl::import_outcome cccl_accepts(bench::cccl::layout l, const DLTensor& t) {
  auto out = bench::cccl::import_outcome_of(R, l, t);
  INFO("CCCL: " << out.refusal);
  REQUIRE(out.accepted);
  for (std::size_t r = 0; r < R; ++r) {
    REQUIRE(out.view.extents[r] == t.shape[r]);
    REQUIRE(out.view.strides[r] == t.strides[r]);
  }
  return out;
}

/// The largest index a positive-stride view reaches, (extent - 1) * stride summed, in 128
/// bits: what the view's mapping would compute in int64_t.
template <std::size_t R>
__int128 highest_index(const DLTensor& t) {
  __int128 high = 0;
  for (std::size_t r = 0; r < R; ++r) high += static_cast<__int128>(t.shape[r] - 1) * t.strides[r];
  return high;
}

}  // namespace

TEST_CASE("checks CCCL's import does not make: a tensor it accepts and ours refuses, for each", "[import][cccl]") {
  using bench::cccl::layout;
  constexpr __int128 int64_max = INT64_MAX;

  SECTION("device-id: a negative device ordinal") {
    std::array<std::int64_t, 2> shape{2, 3}, strides{3, 1};
    DLTensor t = bench::float_cpu_tensor(g_elements, shape, strides);
    t.device.device_id = -1;
    cccl_accepts<2>(layout::right, t);
    REQUIRE(our_refusal<right_view<2>>(t) == dm::errc::device_id_mismatch);
  }

  SECTION("uniqueness: overlapping strides into std::layout_stride, a view that says it is unique") {
    // Elements (0, 1) and (1, 0) are one element; std::layout_stride's mapping requires
    // unique strides, and CCCL's view answers is_unique() true.
    std::array<std::int64_t, 2> shape{2, 2}, strides{1, 1};
    const DLTensor t = bench::float_cpu_tensor(g_elements, shape, strides);
    const auto cccl = cccl_accepts<2>(layout::stride, t);
    REQUIRE(cccl.unique);
    REQUIRE(0 * cccl.view.strides[0] + 1 * cccl.view.strides[1] == 1 * cccl.view.strides[0] + 0 * cccl.view.strides[1]);
    REQUIRE(our_refusal<stride_view<2>>(t) == dm::errc::overlapping_strides);
  }

  SECTION("span-pass: an index span past int64") {
    // (4 - 1) * 2^62: the mapping's offset of index 3 overflows int64_t.
    std::array<std::int64_t, 1> shape{4}, strides{two_to(62)};
    const DLTensor t = bench::float_cpu_tensor(g_elements, shape, strides);
    cccl_accepts<1>(layout::stride, t);
    cccl_accepts<1>(layout::relaxed, t);
    REQUIRE(highest_index<1>(t) > int64_max);
    REQUIRE(our_refusal<stride_view<1>>(t) == dm::errc::span_overflow);
    REQUIRE(our_refusal<relaxed_view<1>>(t) == dm::errc::span_overflow);
  }

  SECTION("byte-span: an index span within int64 whose bytes are not") {
    // Index 2^61 is element 2^61 of 4 bytes: 2^63 bytes past data.
    std::array<std::int64_t, 1> shape{2}, strides{two_to(61)};
    const DLTensor t = bench::float_cpu_tensor(g_elements, shape, strides);
    cccl_accepts<1>(layout::stride, t);
    cccl_accepts<1>(layout::relaxed, t);
    REQUIRE(highest_index<1>(t) <= int64_max);
    REQUIRE(highest_index<1>(t) * 4 > int64_max);
    REQUIRE(our_refusal<stride_view<1>>(t) == dm::errc::span_overflow);
    REQUIRE(our_refusal<relaxed_view<1>>(t) == dm::errc::span_overflow);
  }

  SECTION("count-overflow: 2^64 elements, a view whose size() is 0") {
    // A broadcast of one element to 2^32 x 2^32 (NumPy's broadcast_to makes such views):
    // every index is valid and reaches element 0, but size() wraps to 0 in size_t, and every
    // size computed from the view with it (a copy's bytes, a loop's bound) is wrong.
    std::array<std::int64_t, 2> shape{two_to(32), two_to(32)}, strides{0, 0};
    const DLTensor t = bench::float_cpu_tensor(g_elements, shape, strides);
    const auto cccl = cccl_accepts<2>(layout::relaxed, t);
    REQUIRE(cccl.size == 0);
    REQUIRE(our_refusal<relaxed_view<2>>(t) == dm::errc::span_overflow);
  }

  SECTION("address-space: elements past the top of the address space, or below address 0") {
    // Never dereferenced: the views are only made. 2048 floats from 4096 bytes below the top
    // of the address space end past it; a reversed axis of 2 floats whose second element
    // lies 8192 bytes before data = 0x1000 reaches below address 0.
    std::array<std::int64_t, 1> shape{2048}, strides{1};
    DLTensor top = bench::float_cpu_tensor(nullptr, shape, strides);
    top.data = reinterpret_cast<void*>(UINTPTR_MAX - 4095);
    cccl_accepts<1>(layout::right, top);
    cccl_accepts<1>(layout::stride, top);
    REQUIRE(our_refusal<right_view<1>>(top) == dm::errc::byte_offset_overflow);
    REQUIRE(our_refusal<stride_view<1>>(top) == dm::errc::byte_offset_overflow);

    std::array<std::int64_t, 1> reversed_shape{2}, reversed_strides{-2048};
    DLTensor low = bench::float_cpu_tensor(nullptr, reversed_shape, reversed_strides);
    low.data = reinterpret_cast<void*>(std::uintptr_t{0x1000});
    cccl_accepts<1>(layout::relaxed, low);
    REQUIRE(our_refusal<relaxed_view<1>>(low) == dm::errc::byte_offset_overflow);
  }
}

TEST_CASE("a rule CCCL's import has and ours does not: an extent-1 dimension's stride", "[import][cccl]") {
  // numpy.broadcast_to(a, (1, 3)) and torch.zeros(3).expand(1, 3) give the new axis stride
  // 0. Its one index never multiplies the stride, so the view is well defined; std::
  // layout_stride's mapping requires positive strides, so ours gives that dimension stride
  // 1 (docs/import.md), and CCCL refuses the tensor.
  std::array<std::int64_t, 2> shape{1, 3}, strides{0, 1};
  const DLTensor t = bench::float_cpu_tensor(g_elements, shape, strides);
  const auto cccl = bench::cccl::import_outcome_of(2, bench::cccl::layout::stride, t);
  REQUIRE_FALSE(cccl.accepted);
  REQUIRE(cccl.refusal == "layout_stride requires strictly positive strides");
  const auto ours = dm::try_to_mdspan<stride_view<2>>(t);
  REQUIRE(ours.has_value());
  REQUIRE(ours->stride(0) == 1);
  REQUIRE(ours->stride(1) == 1);
  REQUIRE(&(*ours)[0, 2] == &g_elements[2]);
}

#endif
