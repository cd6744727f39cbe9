# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# A parent project with dlpack_mdspan as a subproject (tests/consumers/subproject):
# configure, build `all`, check which of dlpack_mdspan's libraries were built, run.
#   SOURCE_DIR WORK GENERATOR BUILD_TYPE CXX CC CXX_FLAGS C_FLAGS LINKER_FLAGS
#   ARGS       more -D options, separated by '|'
#   EXPECT_C   ON: libdlpack_mdspan_c.so and .a must be built; OFF: neither may be
#   RUN        executables to run, separated by '|'
include("${CMAKE_CURRENT_LIST_DIR}/../support/step.cmake")

file(REMOVE_RECURSE "${WORK}")
string(REPLACE "|" ";" args "${ARGS}")
step("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/consumers/subproject" -B "${WORK}" -G "${GENERATOR}"
     "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
     "-DCMAKE_C_FLAGS=${C_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
     "-DCMAKE_SHARED_LINKER_FLAGS=${LINKER_FLAGS}" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
     "-DDLPM_SOURCE_DIR=${SOURCE_DIR}" ${args})
step("${CMAKE_COMMAND}" --build "${WORK}")

file(GLOB_RECURSE facade LIST_DIRECTORIES false RELATIVE "${WORK}" "${WORK}/*libdlpack_mdspan_c.*")
file(GLOB_RECURSE python LIST_DIRECTORIES false RELATIVE "${WORK}" "${WORK}/*libdlpack_mdspan_python.*")
if(python)
  message(FATAL_ERROR "the parent's build made the Python component: ${python}")
endif()
if(EXPECT_C)
  if(NOT facade MATCHES "libdlpack_mdspan_c\\.so" OR NOT facade MATCHES "libdlpack_mdspan_c\\.a")
    message(FATAL_ERROR "DLPACK_MDSPAN_BUILD_C_API=ON, but the C facade was not built (found: ${facade})")
  endif()
elseif(facade)
  message(FATAL_ERROR "the parent does not use the C facade, but its build made ${facade}")
endif()

string(REPLACE "|" ";" run "${RUN}")
foreach(exe IN LISTS run)
  step("${WORK}/${exe}")
  message(STATUS "${step_output}")
endforeach()
