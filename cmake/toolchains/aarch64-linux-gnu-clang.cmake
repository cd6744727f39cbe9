# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# aarch64 Linux with clang 19 (--target=aarch64-linux-gnu) and lld, run under qemu
# (scripts/check-aarch64). clang takes the C runtime and libgcc of Debian's cross gcc.
# With DLPM_AARCH64_LIBCXX (cache or environment: the root where scripts/install-deps
# unpacked LLVM 19's libc++ for arm64) it uses that libc++, as the default preset does on
# x86-64; without it, the cross libstdc++ 12.
include("${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu-common.cmake")
set(CMAKE_C_COMPILER clang-19)
set(CMAKE_CXX_COMPILER clang++-19)
set(CMAKE_C_COMPILER_TARGET ${DLPM_AARCH64_TRIPLE})
set(CMAKE_CXX_COMPILER_TARGET ${DLPM_AARCH64_TRIPLE})
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-fuse-ld=lld")

if(NOT DEFINED DLPM_AARCH64_LIBCXX AND DEFINED ENV{DLPM_AARCH64_LIBCXX})
  set(DLPM_AARCH64_LIBCXX "$ENV{DLPM_AARCH64_LIBCXX}")
endif()
if(DLPM_AARCH64_LIBCXX)
  set(_dlpm_libcxx "${DLPM_AARCH64_LIBCXX}/usr/lib/llvm-19")
  if(NOT EXISTS "${_dlpm_libcxx}/lib/libc++.a")
    message(FATAL_ERROR "DLPM_AARCH64_LIBCXX=${DLPM_AARCH64_LIBCXX} holds no arm64 libc++ (scripts/install-deps unpacks it)")
  endif()
  # The arm64 package's own headers (in place of the C++ library's; -stdlib=libc++ there
  # would be an unused argument), and its libraries at link time and under qemu.
  set(CMAKE_CXX_FLAGS_INIT "-stdlib++-isystem ${_dlpm_libcxx}/include/c++/v1")
  foreach(kind EXE SHARED MODULE)
    string(APPEND CMAKE_${kind}_LINKER_FLAGS_INIT " -stdlib=libc++ -L${_dlpm_libcxx}/lib")
  endforeach()
  list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -E "LD_LIBRARY_PATH=${_dlpm_libcxx}/lib")
  list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES DLPM_AARCH64_LIBCXX)
endif()
