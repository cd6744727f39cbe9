// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The differential test's other targets: static extents, a non-host accessor, and
// element types registered for sub-byte dtypes (one fp4 per byte when padded, two per
// byte when packed).
#include "targets.hpp"

namespace dlpm_differential {
namespace {
struct fp4_byte {
  std::uint8_t v;
};
struct fp4_pair {
  std::uint8_t v;
};
// An accessor whose memory is CUDA device memory (never dereferenced here).
template <class T>
struct cuda_accessor {
  using offset_policy = cuda_accessor;
  using element_type = T;
  using reference = T&;
  using data_handle_type = T*;
  static constexpr DLDeviceType dlpack_device_type = kDLCUDA;
  constexpr reference access(data_handle_type p, std::size_t i) const noexcept { return p[i]; }
  constexpr data_handle_type offset(data_handle_type p, std::size_t i) const noexcept { return p + i; }
};
}  // namespace
}  // namespace dlpm_differential

template <>
struct dlpack_mdspan::dtype_traits<dlpm_differential::fp4_byte> {
  static constexpr DLDataType value{kDLFloat4_e2m1fn, 4, 1};
};
template <>
struct dlpack_mdspan::dtype_traits<dlpm_differential::fp4_pair> {
  static constexpr DLDataType value{kDLFloat4_e2m1fn, 4, 2};
};

namespace dlpm_differential {
std::vector<target_entry> targets_extra() {
  constexpr auto dyn = std::dynamic_extent;
  return {
      make_entry<std::mdspan<float, std::extents<int, 2, 3>>>(),
      make_entry<std::mdspan<float, std::extents<int>>>(),
      make_entry<std::mdspan<std::int16_t, std::extents<std::int32_t, 3, dyn>, std::layout_left>>(),
      make_entry<std::mdspan<double, std::extents<std::size_t, 4>, std::layout_stride>>(),
      make_entry<std::mdspan<std::uint8_t, std::extents<std::uint8_t, 2, 2, 2, 2>, std::layout_stride>>(),
      make_entry<std::mdspan<std::int8_t, std::extents<std::int64_t, dyn, 0>, dm::layout_stride_relaxed>>(),
      make_entry<std::mdspan<const float, std::dextents<std::int64_t, 2>, std::layout_stride>>("const float"),
      make_entry<std::mdspan<fp4_byte, std::dextents<std::int64_t, 2>, dm::layout_stride_relaxed>>("fp4 (1 per byte)"),
      make_entry<std::mdspan<fp4_pair, std::dextents<std::int32_t, 1>>>("fp4 x2 (2 per byte)"),
      make_entry<std::mdspan<float, std::dextents<std::int64_t, 2>, std::layout_right, cuda_accessor<float>>>("float (CUDA accessor)"),
      make_entry<std::mdspan<double, std::dextents<std::int32_t, 3>, dm::layout_stride_relaxed, cuda_accessor<double>>>(
          "double (CUDA accessor)"),
  };
}
}  // namespace dlpm_differential
