// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Where long double is not IEEE binary128 (x86-64's x87 format), exporting it must fail with
// this platform's reason. Not built where it is binary128 (AArch64 Linux): see CMakeLists.txt.
#include <mdspan>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

int use_dtype() {
#ifdef DLPM_EXPECT_COMPILE_ERROR
  return dlpack_mdspan::dtype_v<long double>.bits;
#else
  return dlpack_mdspan::dtype_v<double>.bits;
#endif
}
