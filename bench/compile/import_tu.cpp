// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time probe, module form: export and import through `import dlpack_mdspan;`.
// scripts/bench times this TU's compile command (from compile_commands.json) against
// header_tu.cpp, which is the same code through #include.
#include <cstdint>
#include <mdspan>

import dlpack_mdspan;

std::int64_t probe(float* data) {
  std::mdspan<float, std::dextents<int, 2>> rows(data, 4, 6);
  auto view = dlpack_mdspan::to_dlpack_tensor(rows);
  const DLTensor t = view.get();
  auto back = dlpack_mdspan::to_mdspan<std::mdspan<float, std::dextents<std::int64_t, 2>>>(t);
  return back.extent(0) * back.stride(0) + t.ndim;
}
