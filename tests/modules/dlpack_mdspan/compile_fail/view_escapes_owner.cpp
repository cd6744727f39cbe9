// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A reference or pointer to the DLTensor, returned from a function whose dlpack_tensor dies
// there, would dangle. [[clang::lifetimebound]] on get() lets clang see that.
#include <mdspan>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

static int buf[6] = {};

#ifdef DLPM_EXPECT_COMPILE_ERROR
const DLTensor* escape() {
  auto view = dlpack_mdspan::to_dlpack_tensor(std::mdspan<int, std::dextents<int, 2>>(buf, 2, 3));
  return &view.get();
}
#else
int no_escape() {
  auto view = dlpack_mdspan::to_dlpack_tensor(std::mdspan<int, std::dextents<int, 2>>(buf, 2, 3));
  return view.get().ndim;
}
#endif
