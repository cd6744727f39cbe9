// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// long double is not IEEE binary128 on x86-64; exporting it must fail with a reason.
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
