# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Stage an install of BUILD_DIR into STAGE, then configure and build device_consumer/
# against it with EXPECT_DEVICES (a |-separated list: cuda|hip|sycl), the device parts the
# build defined. Any failing step fails the test.
#
#   cmake -DBUILD_DIR=... -DSTAGE=... -DSOURCE=<device_consumer> -DWORK=... -DGENERATOR=...
#         -DCXX=... -DCXX_FLAGS=... -DBUILD_TYPE=... -DEXPECT_DEVICES=<a|b>
#         [-DSYCL_PYTHON=<an interpreter with dpctl>] -P run_device_consumer.cmake
include("${CMAKE_CURRENT_LIST_DIR}/../support/step.cmake")

string(REPLACE "|" ";" EXPECT_DEVICES "${EXPECT_DEVICES}")
file(REMOVE_RECURSE "${STAGE}" "${WORK}")
step("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${STAGE}")
step("${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}" -G "${GENERATOR}"
     "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
     "-DCMAKE_PREFIX_PATH=${STAGE}" "-DEXPECT_DEVICES=${EXPECT_DEVICES}"
     "-DDLPACK_MDSPAN_SYCL_PYTHON=${SYCL_PYTHON}")
step("${CMAKE_COMMAND}" --build "${WORK}")
message(STATUS "the installed package's device parts compile: ${EXPECT_DEVICES}")
