// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// <dlpack_mdspan/hip.hpp> through the installed dlpack_mdspan::hip (the core and HIP's
// headers), on the host.
#include <dlpack_mdspan/hip.hpp>

static_assert(dlpack_mdspan::dtype_v<hip_bfloat16>.code == kDLBfloat && dlpack_mdspan::dtype_v<hip_bfloat16>.bits == 16);
static_assert(dlpack_mdspan::dtype_v<__half2>.lanes == 2);
