# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# aarch64 Linux with Debian's cross g++ 12 and its libstdc++ (g++-aarch64-linux-gnu), run
# under qemu (scripts/check-aarch64): cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu-gcc.cmake
include("${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu-common.cmake")
set(CMAKE_C_COMPILER ${DLPM_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${DLPM_AARCH64_TRIPLE}-g++)
