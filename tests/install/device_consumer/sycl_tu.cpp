// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// <dlpack_mdspan/sycl.hpp> through the installed dlpack_mdspan::sycl (the core and dpctl's
// C interface), compiled only: running it needs the SYCL runtime's environment.
#include <dlpack_mdspan/sycl.hpp>

#include <string_view>

static_assert(std::string_view(dlpack_mdspan::usm_kind_name(dlpack_mdspan::usm_kind::shared)) == "shared");
