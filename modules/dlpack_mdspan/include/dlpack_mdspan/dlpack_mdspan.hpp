// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan: zero-copy, validated conversion between mdspan and DLPack.
//
// The header form of the library. `import dlpack_mdspan;` gives the same names.
#ifndef DLPACK_MDSPAN_DLPACK_MDSPAN_HPP
#define DLPACK_MDSPAN_DLPACK_MDSPAN_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/dtype_name.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/array_api_stream.hpp>
#include <dlpack_mdspan/concepts.hpp>
#include <dlpack_mdspan/layout_stride_relaxed.hpp>
#include <dlpack_mdspan/export.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>
#include <dlpack_mdspan/layout_queries.hpp>
#include <dlpack_mdspan/bool_values.hpp>
#include <dlpack_mdspan/layout_requirements.hpp>
#include <dlpack_mdspan/import.hpp>
#include <dlpack_mdspan/dispatch.hpp>
#include <dlpack_mdspan/managed.hpp>
#include <dlpack_mdspan/host_copy.hpp>
#include <dlpack_mdspan/requirements.hpp>
#include <dlpack_mdspan/message_plan.hpp>

#endif
