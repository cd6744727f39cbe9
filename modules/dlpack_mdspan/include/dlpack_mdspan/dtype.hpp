// Element type → DLDataType, through a trait users can specialize for their own types.
#ifndef DLPACK_MDSPAN_DTYPE_HPP
#define DLPACK_MDSPAN_DTYPE_HPP

#include <dlpack_mdspan/config.hpp>

#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace dlpack_mdspan::inline DLPM_ABI::detail {
constexpr DLDataType make_dtype(DLDataTypeCode code, int bits, int lanes = 1) noexcept {
  return DLDataType{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits),
                    static_cast<std::uint16_t>(lanes)};
}
template <class T>
struct integer_dtype {
  static constexpr DLDataType value =
      make_dtype(std::is_signed_v<T> ? kDLInt : kDLUInt, static_cast<int>(sizeof(T) * 8));
};
template <class T>
struct float_dtype {
  static constexpr DLDataType value = make_dtype(kDLFloat, static_cast<int>(sizeof(T) * 8));
};
// A vendor type's dtype (cuda.hpp, hip.hpp), checked against its size when the header is
// compiled. Two storage forms are possible: packed, where the lanes fill sizeof(T) bit for
// bit (fp8x2 is 2 bytes, fp4x2 one byte for two values), and padded, where each sub-byte
// lane has a byte of its own (fp4 in one byte, fp6x2 in two). The padded form is what
// subbyte_flags turns into IS_SUBBYTE_TYPE_PADDED, so the two checks agree by construction.
template <class T, DLDataTypeCode Code, int Bits, int Lanes>
struct checked_dtype {
  static_assert(static_cast<std::size_t>(Bits) * Lanes == sizeof(T) * 8 ||
                    (Bits < 8 && sizeof(T) == static_cast<std::size_t>(Lanes)),
                "dlpack_mdspan: sizeof(T) matches neither the packed (bits * lanes / 8) nor the padded "
                "(one byte per sub-byte lane) DLPack description");
  static constexpr DLDataType value = make_dtype(Code, Bits, Lanes);
};
}  // namespace dlpack_mdspan::detail

DLPM_EXPORT namespace dlpack_mdspan::inline DLPM_ABI {

/// dtype_traits<T>::value is the DLDataType of element type T.
///
/// Register your own element type by specializing it, e.g.
///   template <> struct dlpack_mdspan::dtype_traits<my_half> {
///     static constexpr DLDataType value{kDLFloat, 16, 1};
///   };
/// The primary template has no `value`, so has_dtype<T> can test for registration;
/// dtype_v<T> turns a missing registration into an error that says how to add one.
template <class T>
struct dtype_traits {};

/// True when T (cv-stripped) has a registered dtype.
template <class T>
concept has_dtype = requires {
  { dtype_traits<std::remove_cv_t<T>>::value } -> std::convertible_to<DLDataType>;
};

template <>
struct dtype_traits<bool> {
  static constexpr DLDataType value = detail::make_dtype(kDLBool, 8);
};

// Plain char is its own type, signed or unsigned by platform; CCCL rejects it, we do not.
template <>
struct dtype_traits<char> {
  static constexpr DLDataType value = detail::make_dtype(static_cast<char>(-1) < 0 ? kDLInt : kDLUInt, 8);
};

template <> struct dtype_traits<signed char> : detail::integer_dtype<signed char> {};
template <> struct dtype_traits<unsigned char> : detail::integer_dtype<unsigned char> {};
template <> struct dtype_traits<short> : detail::integer_dtype<short> {};
template <> struct dtype_traits<unsigned short> : detail::integer_dtype<unsigned short> {};
template <> struct dtype_traits<int> : detail::integer_dtype<int> {};
template <> struct dtype_traits<unsigned int> : detail::integer_dtype<unsigned int> {};
template <> struct dtype_traits<long> : detail::integer_dtype<long> {};
template <> struct dtype_traits<unsigned long> : detail::integer_dtype<unsigned long> {};
template <> struct dtype_traits<long long> : detail::integer_dtype<long long> {};
template <> struct dtype_traits<unsigned long long> : detail::integer_dtype<unsigned long long> {};

#if defined(__SIZEOF_INT128__)
// std::is_signed is false for __int128 in strict modes, so spell both out. __extension__
// keeps g++ -Wpedantic quiet about the non-standard type.
__extension__ typedef __int128 dlpm_int128;
__extension__ typedef unsigned __int128 dlpm_uint128;
template <> struct dtype_traits<dlpm_int128> {
  static constexpr DLDataType value = detail::make_dtype(kDLInt, 128);
};
template <> struct dtype_traits<dlpm_uint128> {
  static constexpr DLDataType value = detail::make_dtype(kDLUInt, 128);
};
#endif

template <> struct dtype_traits<float> : detail::float_dtype<float> {};
template <> struct dtype_traits<double> : detail::float_dtype<double> {};

// _Float16 exists where the compiler defines its limits macros; __bf16 where
// DLPM_HAS_BF16 (config.hpp) says so. In GCC's <stdfloat>, std::float16_t and
// std::bfloat16_t are these same types, so they are covered.
// nvcc's front end is left out: CUDA code uses __half / __nv_bfloat16 (see the CUDA header).
#if defined(__FLT16_MAX__) && !defined(__CUDACC__)
template <> struct dtype_traits<_Float16> {
  static constexpr DLDataType value = detail::make_dtype(kDLFloat, 16);
};
#endif
#if DLPM_HAS_BF16
template <> struct dtype_traits<__bf16> {
  static constexpr DLDataType value = detail::make_dtype(kDLBfloat, 16);
};
#endif

// Complex bits count the whole value: std::complex<float> is 64 bits.
template <> struct dtype_traits<std::complex<float>> {
  static constexpr DLDataType value = detail::make_dtype(kDLComplex, 64);
};
template <> struct dtype_traits<std::complex<double>> {
  static constexpr DLDataType value = detail::make_dtype(kDLComplex, 128);
};

}  // namespace dlpack_mdspan

namespace dlpack_mdspan::inline DLPM_ABI::detail {
template <class T>
consteval DLDataType dtype_of() {
  // long double is not IEEE binary128 on x86-64 (it is the 80-bit x87 format padded to
  // 16 bytes), so calling it a 128-bit float, as CCCL does, would mislabel the data.
  static_assert(!std::is_same_v<T, long double>,
                "dlpack_mdspan: long double has no DLPack dtype: on x86-64 it is the 80-bit x87 "
                "format stored in 16 bytes, not IEEE binary128, so kDLFloat/128 would be a lie. "
                "Convert to double, or register a dtype for a true binary128 type.");
  static_assert(std::is_same_v<T, long double> || has_dtype<T>,
                "dlpack_mdspan: this element type has no DLPack dtype. Register it by "
                "specializing dlpack_mdspan::dtype_traits<T> with "
                "`static constexpr DLDataType value{code, bits, lanes};`");
  if constexpr (has_dtype<T>) return dtype_traits<T>::value;
  else return DLDataType{};
}
}  // namespace dlpack_mdspan::detail

DLPM_EXPORT namespace dlpack_mdspan::inline DLPM_ABI {

/// The DLDataType of T, cv-qualifiers stripped. An unregistered T (or long double) is a
/// compile-time error that says why and how to register it.
template <class T>
inline constexpr DLDataType dtype_v = detail::dtype_of<std::remove_cv_t<T>>();

/// (code, bits, lanes) equality. DLDataType is a C struct with no operator==.
constexpr bool same_dtype(const DLDataType& a, const DLDataType& b) noexcept {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/// Bytes one element of `t` occupies, or 0 for sub-byte or invalid dtypes.
/// lanes > 1 count: a float4 vector type is (kDLFloat, 32, 4), 16 bytes.
constexpr std::uint64_t dtype_itemsize(DLDataType t) noexcept {
  const std::uint64_t bits = std::uint64_t{t.bits} * t.lanes;
  return bits % 8 == 0 ? bits / 8 : 0;
}

}  // namespace dlpack_mdspan

#endif
