// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Build-mode switches shared by every dlpack_mdspan header.
//
// The headers are compiled in two ways: textually (#include, C++20 or later, also by nvcc)
// and as the body of the named module `dlpack_mdspan` (C++23). DLPM_EXPORT marks the
// public namespace blocks; it expands to `export` only inside the module unit.
#ifndef DLPACK_MDSPAN_CONFIG_HPP
#define DLPACK_MDSPAN_CONFIG_HPP

#include <dlpack/dlpack.h>

#include <cfloat>
#include <version>

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
#error "dlpack_mdspan needs DLPack >= 1.0 (DLManagedTensorVersioned); found an older <dlpack/dlpack.h>"
#endif

#ifdef DLPACK_MDSPAN_MODULE_BUILD
#define DLPM_EXPORT export
#else
#define DLPM_EXPORT
#endif

// Functions that mdspan mappings call must also be callable from CUDA device code.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define DLPM_HOST_DEVICE __host__ __device__
#else
#define DLPM_HOST_DEVICE
#endif

// [[clang::lifetimebound]] lets clang diagnose a view that outlives the object owning
// its shape and strides. Other compilers ignore it; the deleted `&&` overloads still apply.
#if defined(__has_cpp_attribute)
#if __has_cpp_attribute(clang::lifetimebound)
#define DLPM_LIFETIMEBOUND [[clang::lifetimebound]]
#endif
#endif
#ifndef DLPM_LIFETIMEBOUND
#define DLPM_LIFETIMEBOUND
#endif

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define DLPM_HAS_EXCEPTIONS 1
#else
#define DLPM_HAS_EXCEPTIONS 0
#endif

// Everything lives in an inline namespace named after the result type in use: a C++20 TU
// gets the library's own result<T>, a C++23 TU std::expected. Without distinct mangled
// names, one program with both kinds of TU would merge, say, numel() from each and call
// the wrong layout (an ODR violation seen between the C facade and C++23 callers).
// Users never spell this name; dlpack_mdspan::x and specializations work as usual.
#if __cplusplus > 202002L && defined(__cpp_lib_expected) && __cpp_lib_expected >= 202202L
#define DLPM_ABI cxx23
#define DLPM_USE_STD_EXPECTED 1
#else
#define DLPM_ABI cxx20
#define DLPM_USE_STD_EXPECTED 0
#endif

// The success paths are inlined into the caller; the failure paths format messages in cold,
// out-of-line code (docs/performance.md measures both).
#if defined(__GNUC__) || defined(__clang__)
#define DLPM_HOT_INLINE __attribute__((always_inline))
#define DLPM_COLD __attribute__((cold, noinline))
#define DLPM_NOINLINE __attribute__((noinline))
// A condition usually false, where [[unlikely]] has no statement to stand on (an operand of
// ?:): the rare side is laid out off the usual path.
#define DLPM_RARELY(cond) __builtin_expect(static_cast<bool>(cond), false)
#else
#define DLPM_HOT_INLINE
#define DLPM_COLD
#define DLPM_NOINLINE
#define DLPM_RARELY(cond) static_cast<bool>(cond)
#endif

// __bf16 is a usable type in clang >= 17 on x86-64 (SSE2) and AArch64, and in GCC >= 13,
// which alone defines __BFLT16_MAX__ (clang 19 does not: testing that macro alone hid the
// type from clang users). nvcc's front end uses __nv_bfloat16 instead (see cuda.hpp).
#if !defined(__CUDACC__) &&                                                                  \
    (defined(__BFLT16_MAX__) ||                                                              \
     (defined(__clang__) && __clang_major__ >= 17 && (defined(__SSE2__) || defined(__aarch64__))))
#define DLPM_HAS_BF16 1
#else
#define DLPM_HAS_BF16 0
#endif

// _Float16 in C++: clang wherever the target has the type (it defines __FLT16_MAX__ only
// there), g++ from 13, and g++ 12 on x86 alone, whose x86 back end brought the type to C++
// early. g++ 12 on AArch64 defines __FLT16_MAX__ (its C front end has _Float16) yet refuses
// the type in C++: testing the macro alone broke every build there. nvcc's front end uses
// __half instead (see cuda.hpp). tests/platform checks this against the compiler itself.
#if !defined(__CUDACC__) && defined(__FLT16_MAX__) &&                                        \
    (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 13) ||                          \
     (defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))))
#define DLPM_HAS_FLOAT16 1
#else
#define DLPM_HAS_FLOAT16 0
#endif

// long double is IEEE binary128 (113-bit significand, 15-bit exponent) on AArch64 Linux and
// the other ABIs that chose it; x86-64's is the x87 80-bit format, ppc64's IBM double-double.
#if LDBL_MANT_DIG == 113 && LDBL_MAX_EXP == 16384
#define DLPM_LONG_DOUBLE_IS_BINARY128 1
#else
#define DLPM_LONG_DOUBLE_IS_BINARY128 0
#endif

#define DLPACK_MDSPAN_VERSION_MAJOR 0
#define DLPACK_MDSPAN_VERSION_MINOR 2
#define DLPACK_MDSPAN_VERSION_PATCH 0

#endif
