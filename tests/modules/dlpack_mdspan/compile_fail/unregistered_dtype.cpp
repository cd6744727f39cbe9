// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An element type with no dtype_traits specialization fails with a message that says how
// to register it; the instantiation context names the type.
#include <mdspan>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

struct unregistered_pixel {
  int value;
};

int use_dtype() {
#ifdef DLPM_EXPECT_COMPILE_ERROR
  return dlpack_mdspan::dtype_v<unregistered_pixel>.bits;
#else
  return dlpack_mdspan::dtype_v<int>.bits;
#endif
}
