# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# nanobind and pybind11 from PyPI, for the caster tests (tests/python/bindings) and the
# binding examples (examples/bindings): found once through the python3 on PATH
# (scripts/requirements-modern.txt pins them). Sets DLPM_BINDINGS_OK, DLPM_BINDINGS_PYTHON
# (that interpreter), DLPM_NANOBIND_INCLUDE, DLPM_NANOBIND_SOURCE and DLPM_PYBIND11_INCLUDE,
# and defines
#   dlpm_nanobind_runtime(name python_include_dir)
# which makes the static library `name`: nanobind's runtime for one interpreter.
# Not include_guard(GLOBAL): the variables are directory-scoped, so each includer finds them.

include(DlpackMdspanPython)
option(DLPACK_MDSPAN_BINDING_TESTS "Build the nanobind and pybind11 caster tests and examples" ON)

set(DLPM_BINDINGS_OK FALSE)
if(DLPACK_MDSPAN_BINDING_TESTS)
  dlpm_path_python(DLPM_BINDINGS_PYTHON)
  execute_process(
    COMMAND "${DLPM_BINDINGS_PYTHON}" -c "import nanobind, pybind11; print(nanobind.include_dir()); print(nanobind.source_dir()); print(pybind11.get_include()); print(nanobind.__version__, pybind11.__version__)"
    OUTPUT_VARIABLE _dlpm_bindings RESULT_VARIABLE _dlpm_bindings_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT _dlpm_bindings_rc EQUAL 0)
    message(FATAL_ERROR "dlpack_mdspan: nanobind and pybind11 are not installed for ${DLPM_BINDINGS_PYTHON}; "
                        "run scripts/install-deps, or configure with -DDLPACK_MDSPAN_BINDING_TESTS=OFF")
  endif()
  string(REPLACE "\n" ";" _dlpm_bindings "${_dlpm_bindings}")
  list(GET _dlpm_bindings 0 DLPM_NANOBIND_INCLUDE)
  list(GET _dlpm_bindings 1 DLPM_NANOBIND_SOURCE)
  list(GET _dlpm_bindings 2 DLPM_PYBIND11_INCLUDE)
  list(GET _dlpm_bindings 3 _dlpm_versions)
  message(VERBOSE "dlpack_mdspan: binding casters tested with nanobind/pybind11 ${_dlpm_versions}")
  set(DLPM_BINDINGS_OK TRUE)
endif()

function(dlpm_nanobind_runtime name python_include_dir)
  add_library(${name} STATIC "${DLPM_NANOBIND_SOURCE}/nb_combined.cpp")
  # Its headers are not warning-clean under this project's flags: SYSTEM, and -w for its source.
  target_include_directories(${name} SYSTEM PUBLIC
    "${DLPM_NANOBIND_INCLUDE}" "${DLPM_NANOBIND_INCLUDE}/../ext/robin_map/include" "${python_include_dir}")
  target_compile_options(${name} PRIVATE -w -fno-strict-aliasing)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden)
  target_compile_features(${name} PUBLIC cxx_std_17)
endfunction()
