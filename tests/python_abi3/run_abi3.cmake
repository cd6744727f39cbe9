# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# One build for several Pythons: configure and build dlpack_mdspan's C facade and Python
# component with -DDLPACK_MDSPAN_PYTHON_LIMITED_API=3.10 against Python 3.10's headers (no
# tests, examples or module), install it, build ONE extension against the installed package
# with Python3_add_library(USE_SABI 3.10) (Py_LIMITED_API=0x030A0000, 3.10's headers, a
# .abi3.so), and import that same file in every interpreter of RUN_PYTHONS (smoke.py).
# OLD_PYTHON (3.9), when it exists, must be refused by find_package(... COMPONENTS python).
# Exits 77 (CTest: skipped) when BUILD_PYTHON or every RUN_PYTHONS interpreter is absent.
#
#   cmake -DSOURCE_DIR=<repo> -DTEST_DIR=<tests/python_abi3> -DWORK=... -DGENERATOR=...
#         -DCC=... -DCXX=... -DC_FLAGS=... -DCXX_FLAGS=... -DEXE_LINKER_FLAGS=...
#         -DSHARED_LINKER_FLAGS=... -DMODULE_LINKER_FLAGS=... -DBUILD_TYPE=...
#         -DBUILD_PYTHON=<python3.10> -DRUN_PYTHONS=<a|b|c> [-DOLD_PYTHON=<python3.9>] -P run_abi3.cmake
include("${CMAKE_CURRENT_LIST_DIR}/../support/step.cmake")

function(skip why)
  message("DLPM_SKIPPED: ${why}")
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.29)
    cmake_language(EXIT 77)
  endif()
  return()  # older CMake: the test's SKIP_REGULAR_EXPRESSION matches the line above
endfunction()

string(REPLACE "|" ";" RUN_PYTHONS "${RUN_PYTHONS}")
set(pythons "")
set(missing "")
foreach(python IN LISTS RUN_PYTHONS)
  if(EXISTS "${python}")
    list(APPEND pythons "${python}")
  else()
    list(APPEND missing "${python}")
  endif()
endforeach()
if(NOT EXISTS "${BUILD_PYTHON}")
  skip("no ${BUILD_PYTHON} to build the abi3 extension with (scripts/install-deps installs it with pyenv)")
  return()
endif()
if(NOT pythons)
  skip("none of ${RUN_PYTHONS} exists (scripts/install-deps installs them with pyenv)")
  return()
endif()
if(missing)
  message(STATUS "absent, not tested: ${missing}")
endif()

unset(ENV{PYTHONPATH})
unset(ENV{LD_LIBRARY_PATH})
set(ENV{PYTHONDONTWRITEBYTECODE} 1)
file(REMOVE_RECURSE "${WORK}")
set(component "${WORK}/component")
set(prefix "${WORK}/prefix")
set(extension "${WORK}/extension")

# 1. The component, limited API, with the parent build's compilers and flags.
set(toolchain
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_C_FLAGS=${C_FLAGS}"
  "-DCMAKE_MODULE_LINKER_FLAGS=${MODULE_LINKER_FLAGS}" "-DPython3_EXECUTABLE=${BUILD_PYTHON}")
step("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${component}" -G "${GENERATOR}" ${toolchain}
  "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}" "-DCMAKE_SHARED_LINKER_FLAGS=${SHARED_LINKER_FLAGS}"
  -DDLPACK_MDSPAN_PYTHON=ON -DDLPACK_MDSPAN_PYTHON_LIMITED_API=3.10
  -DDLPACK_MDSPAN_BUILD_TESTS=OFF -DDLPACK_MDSPAN_BUILD_EXAMPLES=OFF -DDLPACK_MDSPAN_BUILD_MODULE=OFF
  -DDLPACK_MDSPAN_BUILD_FUZZERS=OFF -DDLPACK_MDSPAN_BUILD_BENCHMARKS=OFF)
if(NOT step_output MATCHES "Python component for [^\n]*\\(abi3-3\\.10\\)")
  message(FATAL_ERROR "the sub-build did not configure a limited-API component:\n${step_output}")
endif()
step("${CMAKE_COMMAND}" --build "${component}")
step("${CMAKE_COMMAND}" --install "${component}" --prefix "${prefix}")

# 2. One extension, against the installed package.
step("${CMAKE_COMMAND}" -S "${TEST_DIR}/extension" -B "${extension}" -G "${GENERATOR}" ${toolchain}
     "-DCMAKE_PREFIX_PATH=${prefix}")
step("${CMAKE_COMMAND}" --build "${extension}")
file(GLOB built "${extension}/dlpm_abi3_smoke*.so")
if(NOT built MATCHES "/dlpm_abi3_smoke\\.abi3\\.so$")
  message(FATAL_ERROR "expected one dlpm_abi3_smoke.abi3.so, built: ${built}")
endif()
message(STATUS "built ${built} with Python 3.10's headers, Py_LIMITED_API=0x030A0000")

# 3. The same file in every interpreter.
set(ENV{PYTHONPATH} "${extension}")
foreach(python IN LISTS pythons)
  step("${python}" "${TEST_DIR}/smoke.py")
  message(STATUS "${step_output}")
endforeach()
unset(ENV{PYTHONPATH})

# 4. An interpreter older than the limited API is refused by the package, with the reason.
if(OLD_PYTHON AND EXISTS "${OLD_PYTHON}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${TEST_DIR}/extension" -B "${WORK}/too-old" -G "${GENERATOR}" ${toolchain}
            "-DPython3_EXECUTABLE=${OLD_PYTHON}" "-DCMAKE_PREFIX_PATH=${prefix}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX REPLACE "[ \t\n]+" " " flat "${out}")  # CMake wraps the message
  if(rc EQUAL 0 OR NOT flat MATCHES "limited API of Python 3\\.10")
    message(FATAL_ERROR "find_package(dlpack_mdspan COMPONENTS python) with ${OLD_PYTHON} should refuse the abi3-3.10 "
                        "component (rc ${rc}):\n${out}")
  endif()
  message(STATUS "${OLD_PYTHON}: refused by find_package, as it should be")
endif()
