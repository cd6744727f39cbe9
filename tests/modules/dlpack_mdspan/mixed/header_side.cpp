// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The header half: makes a dlpack_tensor<2> and checks what the module half made.
#include <mdspan>
#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <cstdio>

dlpack_mdspan::dlpack_tensor<2> made_by_header(int* buf) {
  return dlpack_mdspan::to_dlpack_tensor(std::mdspan<int, std::dextents<int, 2>>(buf, 2, 3));
}

// Defined in module_side.cpp.
dlpack_mdspan::dlpack_tensor<2> made_by_module(int* buf);
bool module_checks(const dlpack_mdspan::dlpack_tensor<2>& t, const int* buf);

int main() {
  int buf[6] = {};
  const dlpack_mdspan::dlpack_tensor<2> from_module = made_by_module(buf);
  const DLTensor t = from_module.get();
  const bool header_ok = t.ndim == 2 && t.shape[0] == 3 && t.shape[1] == 2 && t.strides[0] == 1 && t.data == buf;
  const bool module_ok = module_checks(made_by_header(buf), buf);
  std::printf("header sees module's tensor: %s; module sees header's tensor: %s\n", header_ok ? "ok" : "WRONG",
              module_ok ? "ok" : "WRONG");
  return header_ok && module_ok ? 0 : 1;
}
