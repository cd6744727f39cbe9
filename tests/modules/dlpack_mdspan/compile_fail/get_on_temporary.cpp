// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// to_dlpack_tensor(md).get() would hand out shape/strides pointers into a temporary that
// dies at the end of the statement. It must not compile.
#include <mdspan>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

int use_view() {
  static int buf[6] = {};
  std::mdspan<int, std::extents<int, 2, 3>> md(buf);
#ifdef DLPM_EXPECT_COMPILE_ERROR
  DLTensor t = dlpack_mdspan::to_dlpack_tensor(md).get();
#else
  auto owner = dlpack_mdspan::to_dlpack_tensor(md);
  DLTensor t = owner.get();
#endif
  return t.ndim;
}
