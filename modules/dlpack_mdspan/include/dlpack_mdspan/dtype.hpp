// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Element type → DLDataType, through a trait users can specialize for their own types.
#ifndef DLPACK_MDSPAN_DTYPE_HPP
#define DLPACK_MDSPAN_DTYPE_HPP

#include <dlpack_mdspan/config.hpp>

#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

// The dtype rules, here and nowhere else: which bit widths a type code can have, how many
// bytes an element occupies as stored, and when a sub-byte element is the padded form.
namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// A dtype as one `unsigned`: one compare (same_dtype), and error::format's "%#x"
// conversion, which words it with dtype_name when the message is read.
constexpr unsigned packed_dtype(DLDataType d) noexcept {
  return static_cast<unsigned>(d.code) | static_cast<unsigned>(d.bits) << 8 | static_cast<unsigned>(d.lanes) << 16;
}
constexpr DLDataType unpacked_dtype(std::uint64_t v) noexcept {
  return DLDataType{static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(v >> 8), static_cast<std::uint16_t>(v >> 16)};
}

// Bit widths DLPack producers actually use for each type code. A width outside this table
// (an int of 6 bits, a float of 12) is malformed metadata, not a new type.
constexpr bool dtype_bits_rule(std::uint8_t code, std::uint8_t bits) noexcept {
  switch (code) {
    case kDLInt:
    case kDLUInt: return bits == 1 || bits == 4 || bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128;
    case kDLFloat: return bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128;
    case kDLBfloat: return bits == 16;
    case kDLComplex: return bits == 32 || bits == 64 || bits == 128;
    case kDLBool: return bits == 1 || bits == 8;
    case kDLOpaqueHandle: return bits > 0;
    case kDLFloat8_e3m4:
    case kDLFloat8_e4m3:
    case kDLFloat8_e4m3b11fnuz:
    case kDLFloat8_e4m3fn:
    case kDLFloat8_e4m3fnuz:
    case kDLFloat8_e5m2:
    case kDLFloat8_e5m2fnuz:
    case kDLFloat8_e8m0fnu: return bits == 8;
    case kDLFloat6_e2m3fn:
    case kDLFloat6_e3m2fn: return bits == 6;
    case kDLFloat4_e2m1fn: return bits == 4;
    default: return false;
  }
}

// dtype_bits_rule as a bit table, one 256-bit row per known type code, built from the rule
// at compile time: a lookup instead of a jump through the switch on every runtime check.
struct dtype_bits_table {
  std::uint64_t rows[kDLFloat4_e2m1fn + 1][4] = {};
  constexpr dtype_bits_table() noexcept {
    for (unsigned code = 0; code <= kDLFloat4_e2m1fn; ++code)
      for (unsigned bits = 0; bits < 256; ++bits)
        if (dtype_bits_rule(static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits)))
          rows[code][bits / 64] |= std::uint64_t{1} << (bits % 64);
  }
};
inline constexpr dtype_bits_table dtype_bits{};

DLPM_HOT_INLINE constexpr bool dtype_bits_valid(std::uint8_t code, std::uint8_t bits) noexcept {
  return code <= kDLFloat4_e2m1fn && ((dtype_bits.rows[code][bits / 64] >> (bits % 64)) & 1) != 0;
}

// A dtype is valid when it has a lane and a bit width its type code can have (check_dtype
// words the refusal; dtype_name shows an invalid dtype raw).
DLPM_HOT_INLINE constexpr bool dtype_valid(const DLDataType& d) noexcept {
  return d.lanes != 0 && dtype_bits_valid(d.code, d.bits);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Bytes one element occupies as stored: bits * lanes / 8 when packed (0 when that is not
/// whole: a sub-byte element shares its bytes, and has no address of its own), or one byte
/// per lane for a sub-byte dtype (0 < bits < 8) stored padded (IS_SUBBYTE_TYPE_PADDED).
/// lanes > 1 count: a float4 vector type is (kDLFloat, 32, 4), 16 bytes. A dtype of 0 bits
/// occupies nothing: 0.
constexpr std::uint64_t storage_itemsize(const DLDataType& d, bool subbyte_padded = false) noexcept {
  // The sub-byte test first, as a branch: a whole-byte dtype (every typed view's) then pays
  // one compare for the flag, where the three tests joined cost a runtime flag's check 7.
  if (DLPM_RARELY(d.bits < 8))
    if (subbyte_padded && d.bits > 0) return std::uint64_t{d.lanes};
  const std::uint64_t bits = std::uint64_t{d.bits} * d.lanes;
  return bits % 8 == 0 ? bits / 8 : 0;
}

/// A `size`-byte element of dtype `d` is the padded sub-byte form (one byte per lane, as an
/// fp4 value in a whole byte), which only a managed tensor's flags can announce.
constexpr bool stored_padded(const DLDataType& d, std::size_t size) noexcept {
  return storage_itemsize(d, true) == size && storage_itemsize(d, false) != size;
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {
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
  static_assert(storage_itemsize(make_dtype(Code, Bits, Lanes)) == sizeof(T) ||
                    stored_padded(make_dtype(Code, Bits, Lanes), sizeof(T)),
                "dlpack_mdspan: sizeof(T) matches neither the packed (bits * lanes / 8) nor the padded "
                "(one byte per sub-byte lane) DLPack description");
  static constexpr DLDataType value = make_dtype(Code, Bits, Lanes);
};
}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

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

#if defined(__SIZEOF_FLOAT128__) && !defined(__CUDACC__)
// __float128 is IEEE binary128 wherever the compiler defines __SIZEOF_FLOAT128__ (x86-64
// clang and g++, ppc64le; AArch64 has no such type, its long double is binary128), so it is
// DLPack's (kDLFloat, 128, 1), as in CCCL. nvcc's front end is left out: device code has no
// __float128. __extension__ keeps g++ -Wpedantic quiet about the non-standard type.
__extension__ typedef __float128 dlpm_float128;
template <> struct dtype_traits<dlpm_float128> {
  static constexpr DLDataType value = detail::make_dtype(kDLFloat, 128);
};
#endif

// _Float16 and __bf16 where the compiler accepts them in C++ (DLPM_HAS_FLOAT16,
// DLPM_HAS_BF16: config.hpp). In GCC's <stdfloat>, std::float16_t and std::bfloat16_t are
// these same types, so they are covered.
#if DLPM_HAS_FLOAT16
template <> struct dtype_traits<_Float16> {
  static constexpr DLDataType value = detail::make_dtype(kDLFloat, 16);
};
#endif
#if DLPM_HAS_BF16
template <> struct dtype_traits<__bf16> {
  static constexpr DLDataType value = detail::make_dtype(kDLBfloat, 16);
};
#endif

// Where long double is IEEE binary128 (DLPM_LONG_DOUBLE_IS_BINARY128: AArch64 Linux), it is
// DLPack's (kDLFloat, 128, 1), the same bytes as __float128 elsewhere. Every other format is
// refused by dtype_of (below) with this platform's reason: a 128-bit label on x87 or
// double-double bytes would mislabel them.
#if DLPM_LONG_DOUBLE_IS_BINARY128
static_assert(sizeof(long double) == 16, "dlpack_mdspan: a binary128 long double must occupy 16 bytes");
template <> struct dtype_traits<long double> : detail::float_dtype<long double> {};
#endif

// Complex bits count the whole value: std::complex<float> is 64 bits.
template <> struct dtype_traits<std::complex<float>> {
  static constexpr DLDataType value = detail::make_dtype(kDLComplex, 64);
};
template <> struct dtype_traits<std::complex<double>> {
  static constexpr DLDataType value = detail::make_dtype(kDLComplex, 128);
};

// ---- DLPack's narrow floats on the host: storage types -----------------------------------
// One struct per fp8 / fp6 / fp4 code of DLPack 1.1+, named as ml_dtypes names the dtype,
// holding the raw bits: one value per byte, exactly the bytes of an ml_dtypes array of that
// dtype (fp6 and fp4 in the low bits, the high bits zero). They are storage only: no
// arithmetic, no conversion to or from float; compare or convert `bits` yourself, or with
// a library that knows the format. Trivially copyable, one byte, alignment 1.
//
// fp6 and fp4 in one byte each are DLPack's *padded* sub-byte form, like __nv_fp4_e2m1
// (cuda.hpp): managed exports set IS_SUBBYTE_TYPE_PADDED, and import wants that flag
// (try_view<M>(t, flag_is_subbyte_type_padded)); a packed (17, 4, 1) tensor, such as JAX's float4_e2m1fn
// export, is errc::subbyte_not_viewable as float4_e2m1fn.

/// kDLFloat8_e3m4 (ml_dtypes.float8_e3m4): 1 sign, 3 exponent, 4 mantissa bits, IEEE-like.
struct float8_e3m4 { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat8_e4m3 (ml_dtypes.float8_e4m3): IEEE-like e4m3, with infinities.
struct float8_e4m3 { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat8_e4m3b11fnuz (ml_dtypes.float8_e4m3b11fnuz): exponent bias 11, finite, NaN at 0x80.
struct float8_e4m3b11fnuz { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat8_e4m3fn (ml_dtypes.float8_e4m3fn): OCP e4m3, finite; CUDA's __nv_fp8_e4m3.
struct float8_e4m3fn { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat8_e4m3fnuz (ml_dtypes.float8_e4m3fnuz): bias 8, finite, NaN at 0x80.
struct float8_e4m3fnuz { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat8_e5m2 (ml_dtypes.float8_e5m2): OCP e5m2; CUDA's __nv_fp8_e5m2.
struct float8_e5m2 { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat8_e5m2fnuz (ml_dtypes.float8_e5m2fnuz): bias 16, finite, NaN at 0x80.
struct float8_e5m2fnuz { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat8_e8m0fnu (ml_dtypes.float8_e8m0fnu): an unsigned power of two (MX scales);
/// CUDA's __nv_fp8_e8m0.
struct float8_e8m0fnu { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat6_e2m3fn (ml_dtypes.float6_e2m3fn), padded: 6 bits in the low bits of a byte;
/// CUDA's __nv_fp6_e2m3.
struct float6_e2m3fn { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat6_e3m2fn (ml_dtypes.float6_e3m2fn), padded; CUDA's __nv_fp6_e3m2.
struct float6_e3m2fn { std::uint8_t bits; /**< the raw encoding */ };
/// kDLFloat4_e2m1fn (ml_dtypes.float4_e2m1fn), padded: 4 bits in the low nibble of a byte;
/// CUDA's __nv_fp4_e2m1.
struct float4_e2m1fn { std::uint8_t bits; /**< the raw encoding */ };

template <> struct dtype_traits<float8_e3m4> : detail::checked_dtype<float8_e3m4, kDLFloat8_e3m4, 8, 1> {};
template <> struct dtype_traits<float8_e4m3> : detail::checked_dtype<float8_e4m3, kDLFloat8_e4m3, 8, 1> {};
template <>
struct dtype_traits<float8_e4m3b11fnuz> : detail::checked_dtype<float8_e4m3b11fnuz, kDLFloat8_e4m3b11fnuz, 8, 1> {};
template <> struct dtype_traits<float8_e4m3fn> : detail::checked_dtype<float8_e4m3fn, kDLFloat8_e4m3fn, 8, 1> {};
template <> struct dtype_traits<float8_e4m3fnuz> : detail::checked_dtype<float8_e4m3fnuz, kDLFloat8_e4m3fnuz, 8, 1> {};
template <> struct dtype_traits<float8_e5m2> : detail::checked_dtype<float8_e5m2, kDLFloat8_e5m2, 8, 1> {};
template <> struct dtype_traits<float8_e5m2fnuz> : detail::checked_dtype<float8_e5m2fnuz, kDLFloat8_e5m2fnuz, 8, 1> {};
template <> struct dtype_traits<float8_e8m0fnu> : detail::checked_dtype<float8_e8m0fnu, kDLFloat8_e8m0fnu, 8, 1> {};
// sizeof 1 for one 6- or 4-bit lane: the padded form (checked_dtype, subbyte_flags).
template <> struct dtype_traits<float6_e2m3fn> : detail::checked_dtype<float6_e2m3fn, kDLFloat6_e2m3fn, 6, 1> {};
template <> struct dtype_traits<float6_e3m2fn> : detail::checked_dtype<float6_e3m2fn, kDLFloat6_e3m2fn, 6, 1> {};
template <> struct dtype_traits<float4_e2m1fn> : detail::checked_dtype<float4_e2m1fn, kDLFloat4_e2m1fn, 4, 1> {};

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

// What long double is where it is not binary128, for dtype_of's refusal.
#if LDBL_MANT_DIG == 64
#define DLPM_LONG_DOUBLE_FORMAT "here it is the x87 80-bit extended format (x86-64, i386) padded in memory"
#elif LDBL_MANT_DIG == 106
#define DLPM_LONG_DOUBLE_FORMAT "here it is IBM double-double (two doubles, ppc64's default)"
#elif LDBL_MANT_DIG == 53
#define DLPM_LONG_DOUBLE_FORMAT "here it is double's binary64 format"
#else
#define DLPM_LONG_DOUBLE_FORMAT "here its format is not binary128 (LDBL_MANT_DIG is not 113)"
#endif

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {
template <class T>
consteval DLDataType dtype_of() {
  // Where long double is not binary128 (see its dtype_traits), calling it a 128-bit float,
  // as CCCL does, would mislabel the data; the message names what it is here.
  static_assert(DLPM_LONG_DOUBLE_IS_BINARY128 || !std::is_same_v<T, long double>,
                "dlpack_mdspan: long double has no DLPack dtype: " DLPM_LONG_DOUBLE_FORMAT
                ", not IEEE binary128, so kDLFloat/128 would be a lie. Convert to double, or use "
                "__float128 (kDLFloat/128) where the compiler has it.");
  static_assert((!DLPM_LONG_DOUBLE_IS_BINARY128 && std::is_same_v<T, long double>) || has_dtype<T>,
                "dlpack_mdspan: this element type has no DLPack dtype. Register it by "
                "specializing dlpack_mdspan::dtype_traits<T> with "
                "`static constexpr DLDataType value{code, bits, lanes};`");
  if constexpr (has_dtype<T>) return dtype_traits<T>::value;
  else return DLDataType{};
}
}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// The DLDataType of T, cv-qualifiers stripped. An unregistered T (or long double where it
/// is not IEEE binary128) is a compile-time error that says why and how to register it.
template <class T>
inline constexpr DLDataType dtype_v = detail::dtype_of<std::remove_cv_t<T>>();

/// (code, bits, lanes) equality. DLDataType is a C struct with no operator==.
constexpr bool same_dtype(const DLDataType& a, const DLDataType& b) noexcept {
  return detail::packed_dtype(a) == detail::packed_dtype(b);  // one 32-bit compare
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
