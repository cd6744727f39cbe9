// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A view taken from a temporary managed_tensor would dangle once the temporary's deleter
// runs at the end of the statement. It must not compile.
#include <dlpack/dlpack.h>
#include <mdspan>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

float first_element(DLManagedTensorVersioned* p) {
  using view_type = std::mdspan<const float, std::dextents<int, 1>>;
#ifdef DLPM_EXPECT_COMPILE_ERROR
  auto v = dlpack_mdspan::managed_tensor::adopt(p).view<view_type>();
#else
  auto owner = dlpack_mdspan::managed_tensor::adopt(p);
  auto v = owner.view<view_type>();
#endif
  return v[0];
}
