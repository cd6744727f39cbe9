// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A view returned from a function whose managed_tensor dies there dangles: clang sees it
// through [[clang::lifetimebound]] on view().
#include <dlpack/dlpack.h>
#include <mdspan>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

using view_type = std::mdspan<const float, std::dextents<int, 1>>;

#ifdef DLPM_EXPECT_COMPILE_ERROR
view_type escape(DLManagedTensorVersioned* p) {
  auto t = dlpack_mdspan::managed_tensor::adopt(p);
  return t.view<view_type>();
}
#else
float first(DLManagedTensorVersioned* p) {
  auto t = dlpack_mdspan::managed_tensor::adopt(p);
  return t.view<view_type>()[0];
}
#endif
