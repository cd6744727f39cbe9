// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <cstdio>
#include <mdspan>
import dlpack_mdspan;

int main() {
  float buf[12] = {};
  std::mdspan<float, std::dextents<int, 2>, std::layout_left> md(buf, 3, 4);
  auto owner = dlpack_mdspan::to_dlpack_tensor(md);
  const DLTensor t = owner.get();
  std::printf("installed module: ndim=%d strides={%lld,%lld}\n", t.ndim, static_cast<long long>(t.strides[0]),
              static_cast<long long>(t.strides[1]));
  return t.ndim == 2 && t.strides[0] == 1 && t.strides[1] == 3 && t.dtype.code == kDLFloat ? 0 : 1;
}
