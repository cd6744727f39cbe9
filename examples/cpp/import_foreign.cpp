// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Consume a tensor that some other library produced: a typed view, or a precise error.
#include <array>
#include <cstdint>
#include <cstdio>
#include <mdspan>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;

// What a C library, NumPy or PyTorch might hand us: a transposed 3x4 float32 matrix
// (column-major strides), 8 bytes into its 32-byte aligned buffer.
alignas(32) static float storage[2 + 12];
static std::int64_t shape[2] = {3, 4};
static std::int64_t strides[2] = {1, 3};
static DLTensor foreign_tensor() {
  for (int i = 0; i < 14; ++i) storage[i] = static_cast<float>(i);
  DLTensor t{};
  t.data = storage;
  t.byte_offset = 2 * sizeof(float);
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 2;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = strides;
  return t;
}

template <class T>
using any_matrix = std::mdspan<T, std::dextents<std::int64_t, 2>, std::layout_stride>;

int main() {
  const DLTensor t = foreign_tensor();
  std::printf("foreign tensor: C-contiguous=%d F-contiguous=%d leading dimension=%d\n", dm::is_c_contiguous(t),
              dm::is_f_contiguous(t), *dm::leading_dim(t));

  // The layout we expect (column-major), typed, validated, byte_offset applied.
  auto cols = dm::to_mdspan<std::mdspan<const float, std::dextents<int, 2>, std::layout_left>>(t);
  std::printf("as layout_left: m[0,0]=%g m[2,3]=%g\n", cols[0, 0], cols[2, 3]);

  // Any strided layout, dtype chosen at run time.
  const double total = dm::visit_mdspan<any_matrix, float, double, std::int32_t>(t, [](auto m) {
    double s = 0;
    for (std::int64_t i = 0; i < m.extent(0); ++i)
      for (std::int64_t j = 0; j < m.extent(1); ++j) s += m[i, j];
    return s;
  });
  std::printf("sum via runtime dispatch: %g\n", total);

  // Wrong expectations are refused with the reason, never viewed wrongly.
  auto as_rows = dm::try_to_mdspan<std::mdspan<float, std::dextents<int, 2>>>(t);
  std::printf("as layout_right: %s\n", as_rows ? "accepted?!" : as_rows.error().what().c_str());
  auto as_int = dm::try_to_mdspan<std::mdspan<std::int32_t, std::dextents<int, 2>, std::layout_left>>(t);
  std::printf("as int32: %s\n", as_int ? "accepted?!" : as_int.error().what().c_str());
  auto as_3d = dm::try_to_mdspan<std::mdspan<float, std::dextents<int, 3>>>(t);
  std::printf("as rank 3: %s\n", as_3d ? "accepted?!" : as_3d.error().what().c_str());

  // What a kernel needs beyond the type: 4 columns (any number of rows), column-major,
  // and, for vector loads, 32-byte aligned data. The same tensor_requirements the C
  // facade and the Python component check.
  using strided = std::mdspan<const float, std::dextents<int, 2>, std::layout_stride>;
  const std::int64_t four_columns[] = {-1, 4};
  dm::tensor_requirements kernel;
  kernel.ndim = 2;
  kernel.shape = four_columns;
  kernel.order = 'F';
  auto fits = dm::try_to_mdspan<strided>(t, kernel);
  std::printf("4 columns, column-major: %s\n", fits ? "accepted" : fits.error().what().c_str());
  kernel.min_alignment = 32;
  auto aligned = dm::try_to_mdspan<strided>(t, kernel);
  std::printf("and 32-byte aligned: %s\n", aligned ? "accepted?!" : aligned.error().what().c_str());
  return (as_rows || as_int || as_3d || !fits || aligned || cols[2, 3] != 13.f || total != 90.0) ? 1 : 0;
}
