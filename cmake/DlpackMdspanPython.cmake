# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The Python interpreters of the tests, examples and benchmarks, found in one place. (The
# Python component itself, python/CMakeLists.txt, uses CMake's FindPython3.)
#
# Cache variables, none with a default path: each names an interpreter outside the build, or
# is empty, and then what needs it is skipped with a status line.
#   DLPACK_MDSPAN_FRAMEWORKS_PYTHON   PyTorch 2, TensorFlow, pyarrow, tvm-ffi and JAX (the
#                                     frameworks venv of scripts/install-deps)
#   DLPACK_MDSPAN_SYCL_PYTHON         dpctl, dpnp and Intel's OpenCL CPU runtime (its SYCL venv)
#   DLPACK_MDSPAN_ABI3_PYTHON_ROOT    a folder of pyenv versions (<root>/3.10.13/bin/python3 ...);
#                                     empty: `pyenv root`/versions, when pyenv is installed
# CMakePresets.json passes the first two from the environment (DLPM_FRAMEWORKS_PYTHON,
# DLPM_SYCL_PYTHON), which scripts/run-tests and scripts/demo set to install-deps' venvs.
#
# Functions:
#   dlpm_python_probe(<prefix> <python>)
#       asks `python` once for sys.executable, its version, include folder, extension suffix,
#       LIBDIR, LDVERSION and sys.prefix: sets <prefix>_FOUND and <prefix>_EXECUTABLE,
#       _VERSION ("3.11"), _INCLUDE_DIR, _HAS_HEADERS (Python.h is there), _EXT_SUFFIX,
#       _LIBDIR, _LDVERSION, _PREFIX in the caller's scope.
#   dlpm_python_serves(<out> <version>)
#       whether the Python component, built for DLPM_PYTHON_ABI ("3.11", or "abi3-3.10" for
#       the limited API), loads in Python <version>.
#   dlpm_path_python(<out>)
#       the python3 on PATH (the modern interpreter, the one the component is built for),
#       or empty.
#   dlpm_debian_python(<out>)
#       Debian's own interpreter, /usr/bin/python3 (the legacy flavour: NumPy 1.24,
#       PyTorch 1.13), or empty where there is none.
#   dlpm_pyenv_versions(<out>)
#       DLPACK_MDSPAN_ABI3_PYTHON_ROOT, else pyenv's versions folder, else empty.
include_guard(GLOBAL)

set(DLPACK_MDSPAN_FRAMEWORKS_PYTHON "" CACHE FILEPATH
    "A Python interpreter with PyTorch 2, TensorFlow, pyarrow, tvm-ffi and JAX (scripts/install-deps makes a venv with them) for the framework interop tests, the installed Python component test and the modern_frameworks example; empty: those are skipped")
set(DLPACK_MDSPAN_SYCL_PYTHON "" CACHE FILEPATH
    "A Python interpreter with dpctl, dpnp and intel-opencl-rt (scripts/install-deps makes a venv with them) for the SYCL tests and example; empty: those are skipped")
set(DLPACK_MDSPAN_ABI3_PYTHON_ROOT "" CACHE PATH
    "A folder of pyenv versions holding Python 3.9.x, 3.10.x, 3.12.x and 3.13.x for the abi3 test; empty: pyenv's own, when pyenv is installed")

# An interpreter named but not there is a mistake, not a reason to skip tests quietly.
foreach(_dlpm_var DLPACK_MDSPAN_FRAMEWORKS_PYTHON DLPACK_MDSPAN_SYCL_PYTHON)
  if(${_dlpm_var} AND NOT EXISTS "${${_dlpm_var}}")
    message(FATAL_ERROR "dlpack_mdspan: ${_dlpm_var} is ${${_dlpm_var}}, which does not exist: make it with "
                        "scripts/install-deps, or configure with -D${_dlpm_var}= to skip what needs it")
  endif()
endforeach()
unset(_dlpm_var)

function(dlpm_python_probe prefix python)
  foreach(field EXECUTABLE VERSION INCLUDE_DIR EXT_SUFFIX LIBDIR LDVERSION PREFIX)
    unset(${prefix}_${field} PARENT_SCOPE)
  endforeach()
  set(${prefix}_FOUND FALSE PARENT_SCOPE)
  set(${prefix}_HAS_HEADERS FALSE PARENT_SCOPE)
  if(NOT python)
    return()
  endif()
  # Once per interpreter and configure: several folders ask about the same one.
  string(MD5 key "${python}")
  get_property(answer GLOBAL PROPERTY _dlpm_python_probe_${key})
  if(NOT answer)
    execute_process(
      COMMAND "${python}" -c [=[
import sys, sysconfig
var = sysconfig.get_config_var
for value in (sys.executable, "%d.%d" % sys.version_info[:2], sysconfig.get_paths()["include"],
              var("EXT_SUFFIX"), var("LIBDIR"), var("LDVERSION"), sys.prefix):
    print(value)
]=]
      OUTPUT_VARIABLE answer RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REPLACE "\n" ";" answer "${answer}")
    list(LENGTH answer n)
    if(NOT rc EQUAL 0 OR NOT n EQUAL 7)
      set(answer "-")  # does not run: remembered as such
    endif()
    set_property(GLOBAL PROPERTY _dlpm_python_probe_${key} "${answer}")
  endif()
  if(answer STREQUAL "-")
    return()
  endif()
  foreach(field EXECUTABLE VERSION INCLUDE_DIR EXT_SUFFIX LIBDIR LDVERSION PREFIX)
    list(POP_FRONT answer value)
    set(${prefix}_${field} "${value}" PARENT_SCOPE)
    if(field STREQUAL "INCLUDE_DIR" AND EXISTS "${value}/Python.h")
      set(${prefix}_HAS_HEADERS TRUE PARENT_SCOPE)
    endif()
  endforeach()
  set(${prefix}_FOUND TRUE PARENT_SCOPE)
endfunction()

function(dlpm_python_serves out version)
  set(serves FALSE)
  if(DLPM_PYTHON_ABI MATCHES "^abi3-(.+)$")
    if(version AND version VERSION_GREATER_EQUAL CMAKE_MATCH_1)
      set(serves TRUE)
    endif()
  elseif(version AND DLPM_PYTHON_ABI STREQUAL version)
    set(serves TRUE)
  endif()
  set(${out} ${serves} PARENT_SCOPE)
endfunction()

function(dlpm_path_python out)
  find_program(DLPM_PYTHON3 python3)
  if(DLPM_PYTHON3)
    set(${out} "${DLPM_PYTHON3}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

function(dlpm_debian_python out)
  if(EXISTS /usr/bin/python3)
    set(${out} /usr/bin/python3 PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

function(dlpm_pyenv_versions out)
  set(root "${DLPACK_MDSPAN_ABI3_PYTHON_ROOT}")
  if(NOT root)
    set(hints "")
    if(DEFINED ENV{PYENV_ROOT})
      list(APPEND hints "$ENV{PYENV_ROOT}/bin")
    endif()
    find_program(DLPM_PYENV pyenv HINTS ${hints})
    if(DLPM_PYENV)
      execute_process(COMMAND "${DLPM_PYENV}" root OUTPUT_VARIABLE pyenv_root RESULT_VARIABLE rc
                      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(rc EQUAL 0 AND IS_DIRECTORY "${pyenv_root}/versions")
        set(root "${pyenv_root}/versions")
      endif()
    endif()
  endif()
  set(${out} "${root}" PARENT_SCOPE)
endfunction()
