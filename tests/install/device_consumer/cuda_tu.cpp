// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// <dlpack_mdspan/cuda.hpp> through the installed dlpack_mdspan::cuda: its include paths
// (the core, CUDA's and CCCL's headers) are all the target's.
#include <dlpack_mdspan/cuda.hpp>

static_assert(dlpack_mdspan::dtype_v<__half>.code == kDLFloat && dlpack_mdspan::dtype_v<__half>.bits == 16);
static_assert(dlpack_mdspan::dtype_v<__nv_bfloat16>.code == kDLBfloat);
