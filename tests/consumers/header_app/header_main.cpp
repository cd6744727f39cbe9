// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The header form in C++20 on a standard library without <mdspan>: the DLTensor checks.
#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <cstdio>
#include <cstring>

int main() {
  float data[6] = {};
  std::int64_t shape[2] = {2, 3};
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = dlpack_mdspan::dtype_v<float>;
  t.shape = shape;

  int bad = 0;
  dlpack_mdspan::error err;
  if (!dlpack_mdspan::validate(t, &err)) ++bad;
  auto n = dlpack_mdspan::numel(t);
  auto bytes = dlpack_mdspan::nbytes(t);
  if (!n || *n != 6 || !bytes || *bytes != 24) ++bad;
  if (std::strcmp(dlpack_mdspan::dtype_name(t.dtype).c_str(), "float32") != 0) ++bad;
  shape[0] = -1;
  if (dlpack_mdspan::validate(t, &err)) ++bad;  // a negative extent is refused
  std::printf("header consumer (C++%ld): %s, %d failures\n", static_cast<long>(__cplusplus),
              dlpack_mdspan::dtype_name(t.dtype).c_str(), bad);
  return bad == 0 ? 0 : 1;
}
