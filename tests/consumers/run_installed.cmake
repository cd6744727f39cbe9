# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# An outside project against the staged install (stage.cmake): configure, build, run.
#   SOURCE WORK STAGE GENERATOR BUILD_TYPE  the project, its build dir, the install prefix
#   CXX CC CXX_FLAGS C_FLAGS LINKER_FLAGS   the toolchain (CC and the flags may be empty)
#   ARGS                                    more -D options, separated by '|'
#   RUN                                     executables to run, separated by '|'
#   EXPECT_ERROR                            a regex: configuring must fail with output that
#                                           matches it (and nothing is built or run)
include("${CMAKE_CURRENT_LIST_DIR}/../support/step.cmake")

file(REMOVE_RECURSE "${WORK}")
string(REPLACE "|" ";" args "${ARGS}")
set(configure "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_PREFIX_PATH=${STAGE}" ${args})
if(CC)
  list(APPEND configure "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_C_FLAGS=${C_FLAGS}")
endif()

if(EXPECT_ERROR)
  execute_process(COMMAND ${configure} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "configuring ${SOURCE} succeeded; it should have failed with: ${EXPECT_ERROR}\n${out}\n${err}")
  endif()
  # CMake wraps long messages: compare with the line breaks and indentation taken out.
  string(REGEX REPLACE "\n *" " " flat "${out} ${err}")
  if(NOT flat MATCHES "${EXPECT_ERROR}")
    message(FATAL_ERROR "configuring ${SOURCE} failed, but without the expected message (${EXPECT_ERROR}):\n${out}\n${err}")
  endif()
  message(STATUS "failed as expected:\n${err}")
  return()
endif()

step(${configure})
step("${CMAKE_COMMAND}" --build "${WORK}")
string(REPLACE "|" ";" run "${RUN}")
foreach(exe IN LISTS run)
  step("${WORK}/${exe}")
  message(STATUS "${step_output}")
endforeach()
