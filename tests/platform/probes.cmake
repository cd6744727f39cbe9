# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What this C++ compiler itself accepts and what its long double is, asked by compiling,
# never by reading the macros the headers' guards read: tests/platform holds the guards to
# these answers, and compile_fail chooses its long double refusal by them.
include_guard(GLOBAL)
include(CheckCXXSourceCompiles)

# A function, so that the settings for the probes stay in its scope. They compile and do not
# link: what the front end accepts is the question (clang 19 converts to __bf16 through
# libgcc's __truncsfbf2, which Debian 12's libgcc, from gcc 12, lacks).
function(dlpm_probe_compiler)
  set(CMAKE_REQUIRED_QUIET ON)
  set(CMAKE_CXX_STANDARD 20)
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  foreach(type _Float16 __bf16)
    string(TOUPPER "${type}" upper)
    string(REGEX REPLACE "^_+" "" upper "${upper}")
    # Arithmetic and conversions both ways, as the library's tests use them: g++ 12 on AArch64
    # has a storage-only __bf16 that neither converts nor adds, and no _Float16 in C++.
    check_cxx_source_compiles("
      ${type} twice(float f) { ${type} h = static_cast<${type}>(f); return h + h; }
      float widen(${type} h) { return static_cast<float>(h); }" DLPM_COMPILER_ACCEPTS_${upper})
  endforeach()
  check_cxx_source_compiles("
    #include <limits>
    static_assert(std::numeric_limits<long double>::digits == 64);" DLPM_COMPILER_LONG_DOUBLE_IS_X87)
  check_cxx_source_compiles("
    #include <limits>
    static_assert(std::numeric_limits<long double>::digits == 113 &&
                  std::numeric_limits<long double>::max_exponent == 16384);" DLPM_COMPILER_LONG_DOUBLE_IS_BINARY128)
endfunction()
dlpm_probe_compiler()
