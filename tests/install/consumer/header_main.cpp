// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <mdspan>
#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <cstdio>

int main() {
  double buf[6] = {};
  std::mdspan<double, std::dextents<int, 2>> md(buf, 2, 3);
  auto owner = dlpack_mdspan::to_dlpack_tensor(md);
  const DLTensor t = owner.get();
  std::printf("installed header: ndim=%d shape={%lld,%lld}\n", t.ndim, static_cast<long long>(t.shape[0]),
              static_cast<long long>(t.shape[1]));
  return t.ndim == 2 && t.shape[1] == 3 && t.strides[0] == 3 ? 0 : 1;
}
