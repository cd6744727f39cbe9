# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Stage an install of BUILD_DIR into STAGE, configure and build mpi_consumer/ against it
# (find_package(dlpack_mdspan COMPONENTS mpi)), and run its two programs (one process each).
#
#   cmake -DBUILD_DIR=... -DSTAGE=... -DSOURCE=<mpi_consumer> -DWORK=... -DGENERATOR=...
#         -DCC=... -DCXX=... -DCXX_FLAGS=... -DLINKER_FLAGS=... -DBUILD_TYPE=... -P run_mpi_consumer.cmake
include("${CMAKE_CURRENT_LIST_DIR}/../support/step.cmake")

file(REMOVE_RECURSE "${STAGE}" "${WORK}")
step("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${STAGE}")
step("${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}" -G "${GENERATOR}"
     "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
     "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_PREFIX_PATH=${STAGE}")
step("${CMAKE_COMMAND}" --build "${WORK}")
step("${WORK}/mpi_cpp")
step("${WORK}/mpi_c")
