// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The module half: the same types, reached through `import dlpack_mdspan;`.
#include <mdspan>
import dlpack_mdspan;

dlpack_mdspan::dlpack_tensor<2> made_by_module(int* buf) {
  return dlpack_mdspan::to_dlpack_tensor(std::mdspan<int, std::dextents<int, 2>, std::layout_left>(buf, 3, 2));
}

bool module_checks(const dlpack_mdspan::dlpack_tensor<2>& t, const int* buf) {
  const DLTensor v = t.get();
  return v.ndim == 2 && v.shape[0] == 2 && v.shape[1] == 3 && v.strides[0] == 3 && v.data == buf;
}
