// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtype_traits / dtype_v: element type → DLDataType, and user registration.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;

namespace {
struct rgb8 {
  unsigned char r, g, b;
};
constexpr bool is(DLDataType t, int code, int bits, int lanes = 1) {
  return t.code == code && t.bits == bits && t.lanes == lanes;
}
}  // namespace

template <>
struct dlpack_mdspan::dtype_traits<rgb8> {
  static constexpr DLDataType value{kDLUInt, 8, 3};
};

TEST_CASE("bool is (kDLBool, 8, 1), not uint8") {
  static_assert(is(dm::dtype_v<bool>, kDLBool, 8));
}

TEST_CASE("every character and integer width maps to kDLInt / kDLUInt of its width") {
  static_assert(is(dm::dtype_v<char>, std::is_signed_v<char> ? kDLInt : kDLUInt, 8));
  static_assert(is(dm::dtype_v<signed char>, kDLInt, 8));
  static_assert(is(dm::dtype_v<unsigned char>, kDLUInt, 8));
  static_assert(is(dm::dtype_v<std::int8_t>, kDLInt, 8));
  static_assert(is(dm::dtype_v<std::int16_t>, kDLInt, 16));
  static_assert(is(dm::dtype_v<std::int32_t>, kDLInt, 32));
  static_assert(is(dm::dtype_v<std::int64_t>, kDLInt, 64));
  static_assert(is(dm::dtype_v<std::uint8_t>, kDLUInt, 8));
  static_assert(is(dm::dtype_v<std::uint16_t>, kDLUInt, 16));
  static_assert(is(dm::dtype_v<std::uint32_t>, kDLUInt, 32));
  static_assert(is(dm::dtype_v<std::uint64_t>, kDLUInt, 64));
  static_assert(is(dm::dtype_v<long>, kDLInt, sizeof(long) * 8));
  static_assert(is(dm::dtype_v<unsigned long long>, kDLUInt, 64));
#if defined(__SIZEOF_INT128__)
  static_assert(is(dm::dtype_v<__int128>, kDLInt, 128));
  static_assert(is(dm::dtype_v<unsigned __int128>, kDLUInt, 128));
#endif
}

TEST_CASE("floating-point types, including _Float16 and __bf16 where available") {
  static_assert(is(dm::dtype_v<float>, kDLFloat, 32));
  static_assert(is(dm::dtype_v<double>, kDLFloat, 64));
#if DLPM_HAS_FLOAT16
  static_assert(is(dm::dtype_v<_Float16>, kDLFloat, 16));
#endif
#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))
  // The guards must not hide the types where they exist (one once tested a GCC-only macro);
  // tests/platform checks both against what the compiler accepts.
  static_assert(DLPM_HAS_FLOAT16, "clang on x86-64 and AArch64 has _Float16");
  static_assert(__clang_major__ < 17 || DLPM_HAS_BF16, "clang >= 17 on x86-64 and AArch64 has __bf16");
#endif
#if DLPM_HAS_BF16
  static_assert(is(dm::dtype_v<__bf16>, kDLBfloat, 16));
#endif
#if __has_include(<stdfloat>)
  // std::float16_t / std::bfloat16_t are the same types as _Float16 / __bf16 where provided.
#endif
}

TEST_CASE("complex bits count the whole value") {
  static_assert(is(dm::dtype_v<std::complex<float>>, kDLComplex, 64));
  static_assert(is(dm::dtype_v<std::complex<double>>, kDLComplex, 128));
}

TEST_CASE("cv-qualifiers are stripped") {
  static_assert(is(dm::dtype_v<const int>, kDLInt, 32));
  static_assert(is(dm::dtype_v<volatile float>, kDLFloat, 32));
  static_assert(is(dm::dtype_v<const volatile double>, kDLFloat, 64));
}

TEST_CASE("users register their own element types") {
  static_assert(is(dm::dtype_v<rgb8>, kDLUInt, 8, 3));
  static_assert(is(dm::dtype_v<const rgb8>, kDLUInt, 8, 3));
  rgb8 px[4] = {};
  std::mdspan<rgb8, std::dextents<int, 1>> md(px, 4);
  auto owner = dm::to_dlpack_tensor(md);
  CHECK(is(owner.get().dtype, kDLUInt, 8, 3));
  CHECK(dm::storage_itemsize(owner.get().dtype) == sizeof(rgb8));
}

TEST_CASE("has_dtype tells registered from unregistered types without a hard error") {
  static_assert(dm::has_dtype<int>);
  static_assert(dm::has_dtype<const std::complex<float>>);
  static_assert(!dm::has_dtype<std::string>);
  static_assert(dm::has_dtype<long double> == (DLPM_LONG_DOUBLE_IS_BINARY128 == 1));  // narrow_floats.test.cpp
  static_assert(!dm::has_dtype<std::complex<long double>>);  // 256 bits: DLPack's bits field stops at 255
}

TEST_CASE("storage_itemsize counts lanes and reports sub-byte types as 0") {
  CHECK(dm::storage_itemsize(DLDataType{kDLFloat, 32, 4}) == 16);
  CHECK(dm::storage_itemsize(DLDataType{kDLFloat4_e2m1fn, 4, 2}) == 1);
  CHECK(dm::storage_itemsize(DLDataType{kDLFloat4_e2m1fn, 4, 1}) == 0);
  CHECK(dm::same_dtype(dm::dtype_v<int>, DLDataType{kDLInt, 32, 1}));
  CHECK_FALSE(dm::same_dtype(dm::dtype_v<int>, DLDataType{kDLInt, 32, 2}));
}
