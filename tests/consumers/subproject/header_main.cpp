// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The header form, with the standard library's mdspan: export, import back, compare.
#include <cstdio>
#include <mdspan>
#include <dlpack_mdspan/dlpack_mdspan.hpp>

int main() {
  double buf[6] = {1, 2, 3, 4, 5, 6};
  std::mdspan<double, std::dextents<int, 2>> md(buf, 2, 3);
  auto view = dlpack_mdspan::to_dlpack_tensor(md);
  const DLTensor t = view.get();
  auto back = dlpack_mdspan::to_mdspan<std::mdspan<const double, std::dextents<int, 2>>>(t);
  int bad = t.ndim == 2 && t.shape[1] == 3 && back.data_handle() == buf ? 0 : 1;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      if (back[i, j] != md[i, j]) ++bad;
  std::printf("subproject, header form: back[1, 2] = %g, %d mismatches\n", back[1, 2], bad);
  return bad == 0 ? 0 : 1;
}
