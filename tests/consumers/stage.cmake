# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# cmake -DBUILD_DIR=<build tree> -DSTAGE=<prefix> -P stage.cmake
# Installs the build tree into a fresh STAGE, which the consumer tests find_package from.
include("${CMAKE_CURRENT_LIST_DIR}/../support/step.cmake")
file(REMOVE_RECURSE "${STAGE}")
step("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${STAGE}")
