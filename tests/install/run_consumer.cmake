# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Stage an install of BUILD_DIR into STAGE, then configure, build and run the consumer
# project against it. Any failing step fails the test.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "consumer test step failed (${rc}): ${cmd}")
  endif()
endfunction()

file(REMOVE_RECURSE "${STAGE}" "${CONSUMER_BIN}")
step("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${STAGE}")
step("${CMAKE_COMMAND}" -S "${CONSUMER_SRC}" -B "${CONSUMER_BIN}" -G "${GENERATOR}"
     "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
     "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_PREFIX_PATH=${STAGE}" "-DEXPECT_MODULE=${WITH_MODULE}")
step("${CMAKE_COMMAND}" --build "${CONSUMER_BIN}")
step("${CONSUMER_BIN}/consumer_header")
if(WITH_MODULE)
  step("${CONSUMER_BIN}/consumer_module")
endif()
