// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What differs between x86-64 and AArch64, and what must not: each guard of dtype.hpp and
// config.hpp held to what the compiler accepts (DLPM_COMPILER_*, from probes.cmake), and
// each platform claim the library makes held to the bytes the program sees at run time.
#include <doctest/doctest.h>

#include <dlpack_mdspan/dtype.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dm = dlpack_mdspan;

namespace {
constexpr bool is(DLDataType t, int code, int bits) { return t.code == code && t.bits == bits && t.lanes == 1; }

// The 16 bytes of a value as two little-endian 64-bit halves (both targets are little-endian).
template <class T>
void halves(const T& value, std::uint64_t& low, std::uint64_t& high) {
  static_assert(sizeof(T) == 16);
  unsigned char bytes[16];
  std::memcpy(bytes, &value, 16);
  low = high = 0;
  for (int i = 7; i >= 0; --i) low = low << 8 | bytes[i];
  for (int i = 15; i >= 8; --i) high = high << 8 | bytes[i];
}
}  // namespace

TEST_CASE("_Float16 is registered exactly where this compiler accepts it in C++") {
  // g++ 12 on AArch64 defines __FLT16_MAX__ but refuses _Float16 in C++: a guard that read
  // the macro made every header user fail to compile there.
  CHECK(DLPM_HAS_FLOAT16 == DLPM_COMPILER_ACCEPTS_FLOAT16);
#if DLPM_HAS_FLOAT16
  static_assert(is(dm::dtype_v<_Float16>, kDLFloat, 16));
  CHECK(dm::storage_itemsize(dm::dtype_v<_Float16>) == sizeof(_Float16));
#endif
}

TEST_CASE("__bf16 is registered exactly where this compiler accepts it as an arithmetic type") {
  // g++ 12 on AArch64 has a storage-only __bf16 (no conversions); g++ 13 and clang >= 17
  // have the arithmetic type on x86-64 and AArch64.
  CHECK(DLPM_HAS_BF16 == DLPM_COMPILER_ACCEPTS_BF16);
#if DLPM_HAS_BF16
  static_assert(is(dm::dtype_v<__bf16>, kDLBfloat, 16));
#endif
}

TEST_CASE("plain char is uint8 on AArch64 and int8 on x86-64, as each ABI makes it") {
#if defined(__aarch64__)
  static_assert(CHAR_MIN == 0, "AArch64's plain char is unsigned");
  static_assert(is(dm::dtype_v<char>, kDLUInt, 8));
#elif defined(__x86_64__)
  static_assert(CHAR_MIN < 0, "x86-64's plain char is signed");
  static_assert(is(dm::dtype_v<char>, kDLInt, 8));
#endif
  // Whatever the sign, the same bits as the explicit type of that sign.
  const char c = static_cast<char>(0xC3);
  CHECK(dm::dtype_v<char>.code == (c < 0 ? kDLInt : kDLUInt));
  CHECK(static_cast<unsigned char>(c) == 0xC3);
}

TEST_CASE("long, size_t, ptrdiff_t and pointers are 64 bits on both LP64 targets") {
  static_assert(sizeof(void*) == 8 && sizeof(long) == 8);
  static_assert(is(dm::dtype_v<long>, kDLInt, 64));
  static_assert(is(dm::dtype_v<unsigned long>, kDLUInt, 64));
  static_assert(is(dm::dtype_v<std::size_t>, kDLUInt, 64));
  static_assert(is(dm::dtype_v<std::ptrdiff_t>, kDLInt, 64));
  static_assert(is(dm::dtype_v<std::intptr_t>, kDLInt, 64));
  static_assert(is(dm::dtype_v<std::int64_t>, kDLInt, 64));
  CHECK(dm::storage_itemsize(dm::dtype_v<long>) == sizeof(long));
}

#if defined(__SIZEOF_INT128__)
TEST_CASE("__int128 is 16 bytes aligned to 16 on both targets, the alignment import checks") {
  static_assert(sizeof(dm::dlpm_int128) == 16 && alignof(dm::dlpm_int128) == 16);
  static_assert(alignof(dm::dlpm_uint128) == 16);
  static_assert(is(dm::dtype_v<dm::dlpm_int128>, kDLInt, 128));
  static_assert(is(dm::dtype_v<dm::dlpm_uint128>, kDLUInt, 128));
  // -1 is all ones in both halves: the type is one 128-bit integer, not two 64-bit ones.
  std::uint64_t low = 0, high = 0;
  halves(dm::dlpm_int128{-1}, low, high);
  CHECK(low == ~std::uint64_t{0});
  CHECK(high == ~std::uint64_t{0});
}
#endif

TEST_CASE("long double: (kDLFloat, 128) where its bytes are binary128, refused where x87") {
  static_assert(dm::has_dtype<long double> == (DLPM_LONG_DOUBLE_IS_BINARY128 == 1));
#if defined(__aarch64__) && defined(__linux__)
  static_assert(DLPM_LONG_DOUBLE_IS_BINARY128, "AArch64 Linux's long double is IEEE binary128");
#elif defined(__x86_64__)
  static_assert(!DLPM_LONG_DOUBLE_IS_BINARY128, "x86-64's long double is the x87 format");
#endif
  if constexpr (sizeof(long double) == 16) {
    std::uint64_t low = 0, high = 0;
    halves(static_cast<long double>(1.5), low, high);
    if (DLPM_LONG_DOUBLE_IS_BINARY128) {
      // binary128: exponent 0x3fff and the fraction's top bit, all in the high half.
      CHECK(low == 0);
      CHECK(high == 0x3fff800000000000u);
    } else {
      // x87: a 64-bit significand with its integer bit explicit, then the exponent; the
      // last 6 bytes are padding, left out.
      CHECK(low == 0xc000000000000000u);
      CHECK((high & 0xffff) == 0x3fff);
    }
  }
#if DLPM_LONG_DOUBLE_IS_BINARY128
  static_assert(is(dm::dtype_v<long double>, kDLFloat, 128));
  CHECK(dm::storage_itemsize(dm::dtype_v<long double>) == 16);
#endif
}
