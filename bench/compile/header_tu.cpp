// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time probe, header form: the same code as import_tu.cpp through #include.
#include <cstdint>
#include <mdspan>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

std::int64_t probe(float* data) {
  std::mdspan<float, std::dextents<int, 2>> rows(data, 4, 6);
  auto view = dlpack_mdspan::to_dlpack_tensor(rows);
  const DLTensor t = view.get();
  auto back = dlpack_mdspan::to_mdspan<std::mdspan<float, std::dextents<std::int64_t, 2>>>(t);
  return back.extent(0) * back.stride(0) + t.ndim;
}
