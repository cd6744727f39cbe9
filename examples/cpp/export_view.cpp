// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Export std::mdspan views as DLPack DLTensors, without copying or allocating: the
// allocations are counted (examples/support/allocation_count.cpp replaces operator new here).
#include <array>
#include <cstdio>
#include <mdspan>

#include "support/allocation_count.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;

static void print(const char* what, const DLTensor& t) {
  std::printf("%-28s ndim=%d dtype=%s device=%s shape={", what, t.ndim, dm::dtype_name(t.dtype).c_str(),
              dm::device_type_name(t.device.device_type));
  for (int i = 0; i < t.ndim; ++i) std::printf("%s%lld", i ? "," : "", static_cast<long long>(t.shape[i]));
  std::printf("} strides={");
  for (int i = 0; i < t.ndim; ++i) std::printf("%s%lld", i ? "," : "", static_cast<long long>(t.strides[i]));
  std::printf("} byte_offset=%llu\n", static_cast<unsigned long long>(t.byte_offset));
}

int main() {
  float image[4 * 6] = {};

  // A row-major 4x6 matrix. Shape and strides live inside `view`: nothing is allocated.
  std::mdspan<float, std::dextents<int, 2>> rows(image, 4, 6);
  const std::size_t before = example::heap_allocations();
  auto view = dm::to_dlpack_tensor(rows);  // keep the wrapper alive while the DLTensor is used
  const std::size_t allocations = example::heap_allocations() - before;
  print("row-major 4x6 float", view.get());
  std::printf("%-28s %zu heap allocations (counted)\n", "  to_dlpack_tensor made", allocations);

  // Its transpose, as a column-major view of the same memory.
  std::mdspan<float, std::dextents<int, 2>, std::layout_left> cols(image, 6, 4);
  auto transposed = dm::to_dlpack_tensor(cols);
  print("transposed (layout_left)", transposed.get());

  // Every other column: a strided view.
  using E = std::dextents<int, 2>;
  std::mdspan<float, E, std::layout_stride> every_other(image, std::layout_stride::mapping(E(4, 3), std::array<int, 2>{6, 2}));
  auto strided = dm::to_dlpack_tensor(every_other);
  print("every other column", strided.get());

  // Rows in reverse order: a negative stride needs the relaxed layout and its offset.
  using R = dm::layout_stride_relaxed;
  std::mdspan<float, E, R> upside_down(image, R::mapping<E>(E(4, 6), std::array<int, 2>{-6, 1}, 18));
  auto reversed = dm::to_dlpack_tensor(upside_down);
  print("rows reversed (relaxed)", reversed.get());

  // Pinned host memory is still host memory; say so with the explicit-device overload.
  auto pinned = dm::to_dlpack_tensor(rows, DLDevice{kDLCUDAHost, 0});
  print("same data, labelled pinned", pinned.get());

  // Errors come back as values from the try_ form (or as dlpack_error from the other).
  int dummy = 0;
  std::mdspan<int, std::dextents<unsigned long long, 1>> huge(&dummy, 1ull << 63);
  auto bad = dm::try_to_dlpack_tensor(huge);
  if (!bad) std::printf("refused: %s\n", bad.error().what().c_str());
  return bad || allocations != 0 ? 1 : 0;  // the claims above, held
}
