# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What both aarch64 toolchain files share: the target, Debian's arm64 cross root, and qemu's
# user-mode emulator, through which CTest (and doctest's test discovery) runs every target
# program: `qemu-aarch64-static -L /usr/aarch64-linux-gnu prog`, no binfmt registration.
# DLPM_AARCH64_QEMU_ENV: more VAR=value settings for the emulated program.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(DLPM_AARCH64_TRIPLE aarch64-linux-gnu)
set(DLPM_AARCH64_ROOT /usr/aarch64-linux-gnu)   # libc6-dev-arm64-cross, libstdc++-12-dev-arm64-cross

find_program(DLPM_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${DLPM_QEMU_AARCH64};-L;${DLPM_AARCH64_ROOT}")
foreach(setting IN LISTS DLPM_AARCH64_QEMU_ENV)
  list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -E "${setting}")
endforeach()

# Headers and libraries of the host (DLPack, doctest, CCCL: all headers, the same for every
# architecture) stay visible; programs found are the host's, to run at build time.
set(CMAKE_FIND_ROOT_PATH "${DLPM_AARCH64_ROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
