// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack-mdspan-python-sys against the Python component's header (dlpack_mdspan_python.h):
// its #[repr(C)] mirrors (as C++, rendered by cbindgen from its src/lib.rs) in every size,
// alignment, field offset and type, its constants, and every function it declares in its
// return and parameter types. The types the crate takes from dlpack-mdspan-sys (DLDevice,
// DLTensor, ...) are the C ones here: abi.test.cpp proves those mirrors. If it compiles, it
// passes.
#include <dlpack/dlpack.h>
#include <dlpack_mdspan.h>
#include <dlpack_mdspan_python.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

// The names the renderings use, as the C headers declare them.
namespace dlpm_rust_python_abi {
using ::DLDevice, ::DLManagedTensorVersioned, ::DLPackVersion, ::DLTensor, ::dlpm_checked_tensor, ::PyObject;
}  // namespace dlpm_rust_python_abi
namespace dlpm_rust_python_functions {
using ::DLDevice, ::DLManagedTensorVersioned, ::DLTensor, ::dlpm_py_borrowed, ::dlpm_py_options,
    ::dlpm_py_stream_wait_fn, ::dlpm_requirements, ::dlpm_status, ::PyObject;
}  // namespace dlpm_rust_python_functions

// The Rust constants have the C macros' names: rendered with the macros out of the way.
#define DLPM_ABI_PYTHON_MACRO_CONSTANTS(X)                                                             \
  X(DLPM_PY_OPTIONS_VERSION) X(DLPM_PY_PROVENANCE_VERSION)
#define DLPM_ABI_PYTHON_ENUMERATORS(X)                                                                 \
  X(DLPM_PY_PATH_CAPSULE) X(DLPM_PY_PATH_EXCHANGE_API) X(DLPM_PY_PATH_DLPACK) X(DLPM_PY_ORDER_NONE)    \
  X(DLPM_PY_ORDER_STREAM) X(DLPM_PY_ORDER_UNKNOWN)
#pragma push_macro("DLPM_PY_OPTIONS_VERSION")
#pragma push_macro("DLPM_PY_PROVENANCE_VERSION")
#undef DLPM_PY_OPTIONS_VERSION
#undef DLPM_PY_PROVENANCE_VERSION
// (The enumerators' names are C enumerators at global scope, the rendering's constants are
// in its namespace: both are reachable, by qualified name.)
#include "dlpack_mdspan_python_sys_abi.hpp"
// rust_DLPM_PY_OPTIONS_VERSION = dlpm_rust_python_abi::DLPM_PY_OPTIONS_VERSION, and so on.
#define DLPM_ABI_PYTHON_CAPTURE(name) constexpr auto rust_##name = dlpm_rust_python_abi::name;
DLPM_ABI_PYTHON_MACRO_CONSTANTS(DLPM_ABI_PYTHON_CAPTURE)
#undef DLPM_ABI_PYTHON_CAPTURE
#pragma pop_macro("DLPM_PY_OPTIONS_VERSION")
#pragma pop_macro("DLPM_PY_PROVENANCE_VERSION")

#include "dlpack_mdspan_python_sys_functions.hpp"

namespace rust = dlpm_rust_python_abi;
#include "same_layout.hpp"

namespace {

#define DLPM_ABI_PYTHON_SAME_CONSTANT(name)                                                           \
  static_assert(static_cast<long long>(rust_##name) == static_cast<long long>(name),                 \
                #name " differs between python-sys and dlpack_mdspan_python.h");                      \
  static_assert(std::is_same_v<std::remove_cv_t<decltype(rust_##name)>, std::uint32_t>, #name " is a u32");
DLPM_ABI_PYTHON_MACRO_CONSTANTS(DLPM_ABI_PYTHON_SAME_CONSTANT)

#define DLPM_ABI_PYTHON_SAME_ENUMERATOR(name)                                                         \
  static_assert(static_cast<long long>(rust::name) == static_cast<long long>(::name),                \
                #name " differs between python-sys and dlpack_mdspan_python.h");
DLPM_ABI_PYTHON_ENUMERATORS(DLPM_ABI_PYTHON_SAME_ENUMERATOR)

DLPM_ABI_SAME_STRUCT(dlpm_py_provenance)
DLPM_ABI_SAME_FIELD(dlpm_py_provenance, version)
DLPM_ABI_SAME_FIELD(dlpm_py_provenance, path)
DLPM_ABI_SAME_FIELD(dlpm_py_provenance, legacy)
DLPM_ABI_SAME_FIELD(dlpm_py_provenance, pre_1_0_call)
DLPM_ABI_SAME_FIELD(dlpm_py_provenance, dlpack_version)
DLPM_ABI_SAME_FIELD(dlpm_py_provenance, stream_order)
DLPM_ABI_SAME_FIELD(dlpm_py_provenance, ready_stream)

DLPM_ABI_SAME_STRUCT(dlpm_py_options)
DLPM_ABI_SAME_FIELD(dlpm_py_options, version)
DLPM_ABI_SAME_FIELD(dlpm_py_options, legacy_writable)
DLPM_ABI_SAME_FIELD(dlpm_py_options, copy)
DLPM_ABI_SAME_FIELD(dlpm_py_options, has_dl_device)
DLPM_ABI_SAME_FIELD(dlpm_py_options, dl_device)
DLPM_ABI_SAME_FIELD(dlpm_py_options, has_stream)
DLPM_ABI_SAME_FIELD(dlpm_py_options, stream)
DLPM_ABI_SAME_FIELD(dlpm_py_options, stream_object)
DLPM_ABI_SAME_FIELD(dlpm_py_options, use_exchange_api)
DLPM_ABI_SAME_FIELD(dlpm_py_options, validate)
DLPM_ABI_SAME_FIELD(dlpm_py_options, writable)
DLPM_ABI_SAME_FIELD(dlpm_py_options, accept_semantic_bits)
DLPM_ABI_SAME_FIELD(dlpm_py_options, keep_alive)
DLPM_ABI_SAME_FIELD(dlpm_py_options, provenance)
DLPM_ABI_SAME_FIELD(dlpm_py_options, semantic_bits_option)
DLPM_ABI_SAME_FIELD(dlpm_py_options, checked)
DLPM_ABI_SAME_FIELD(dlpm_py_options, lent)
DLPM_ABI_SAME_FIELD(dlpm_py_options, ready_on_host)

DLPM_ABI_SAME_STRUCT(dlpm_py_borrowed)
DLPM_ABI_SAME_FIELD(dlpm_py_borrowed, dl_tensor)
DLPM_ABI_SAME_FIELD(dlpm_py_borrowed, flags)
DLPM_ABI_SAME_FIELD(dlpm_py_borrowed, owner)
DLPM_ABI_SAME_FIELD(dlpm_py_borrowed, keep_alive)

// The callback type the functions above take by its C name (dlpm_py_tensor_new_on_stream).
static_assert(std::is_same_v<rust::dlpm_py_stream_wait_fn, ::dlpm_py_stream_wait_fn>,
              "dlpm_py_stream_wait_fn differs between python-sys and dlpack_mdspan_python.h");

#define DLPM_ABI_SAME_PYTHON_FUNCTION(name) DLPM_ABI_SAME_FUNCTION(dlpm_rust_python_functions, name)
DLPM_RUST_PYTHON_FUNCTIONS(DLPM_ABI_SAME_PYTHON_FUNCTION)

}  // namespace

int main() { return 0; }
