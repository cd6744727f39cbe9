// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DLPack dtypes by name ("float32", "bfloat16", "float8_e4m3fn"), and the bit widths each
// type code can have. Below error.hpp, whose messages word dtypes by these names.
#ifndef DLPACK_MDSPAN_DTYPE_NAME_HPP
#define DLPACK_MDSPAN_DTYPE_NAME_HPP

#include <dlpack_mdspan/config.hpp>

#include <cstddef>
#include <cstdint>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

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

// A dtype as one `unsigned`, for messages: error::format's "%#x" conversion takes it and
// words it with dtype_name when the message is read (an error keeps values, not text).
constexpr unsigned packed_dtype(DLDataType d) noexcept {
  return static_cast<unsigned>(d.code) | static_cast<unsigned>(d.bits) << 8 | static_cast<unsigned>(d.lanes) << 16;
}
constexpr DLDataType unpacked_dtype(std::uint64_t v) noexcept {
  return DLDataType{static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(v >> 8), static_cast<std::uint16_t>(v >> 16)};
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// A dtype's name, held by value (no allocation): see dtype_name.
struct dtype_name_text {
  char text[40] = {};  // the longest, "(code 255, bits 255, lanes 65535)", has 33 characters
  constexpr const char* c_str() const noexcept { return text; }
};

/// Names a dtype the way NumPy and ml_dtypes do: "float32", "int8", "uint16", "bool",
/// "bfloat16", "complex64", "float8_e4m3fn", "float4_e2m1fn", "handle64"; lanes > 1 add
/// "x<lanes>" ("float32x4"). A dtype check_dtype refuses (lanes 0, an unknown code, a width
/// its code cannot have) is shown raw: "(code 42, bits 7, lanes 1)".
constexpr dtype_name_text dtype_name(DLDataType d) noexcept {
  dtype_name_text out;
  std::size_t n = 0;
  auto put = [&](const char* s) {
    while (*s && n + 1 < sizeof out.text) out.text[n++] = *s++;
  };
  auto put_number = [&](unsigned v) {
    char digits[12] = {};
    int k = 0;
    do digits[k++] = static_cast<char>('0' + v % 10); while ((v /= 10) != 0);
    while (k > 0 && n + 1 < sizeof out.text) out.text[n++] = digits[--k];
  };
  if (d.lanes == 0 || !detail::dtype_bits_valid(d.code, d.bits)) {
    put("(code ");
    put_number(d.code);
    put(", bits ");
    put_number(d.bits);
    put(", lanes ");
    put_number(d.lanes);
    put(")");
    return out;
  }
  // The fp8/fp6/fp4 codes carry their width in the name; the others take it as a suffix.
  const char* fixed = nullptr;
  const char* family = nullptr;
  switch (d.code) {
    case kDLInt: family = "int"; break;
    case kDLUInt: family = "uint"; break;
    case kDLFloat: family = "float"; break;
    case kDLOpaqueHandle: family = "handle"; break;
    case kDLBfloat: family = "bfloat"; break;
    case kDLComplex: family = "complex"; break;
    case kDLBool:
      if (d.bits == 8) fixed = "bool";  // NumPy's bool is a byte; a 1-bit bool keeps its width
      else family = "bool";
      break;
    case kDLFloat8_e3m4: fixed = "float8_e3m4"; break;
    case kDLFloat8_e4m3: fixed = "float8_e4m3"; break;
    case kDLFloat8_e4m3b11fnuz: fixed = "float8_e4m3b11fnuz"; break;
    case kDLFloat8_e4m3fn: fixed = "float8_e4m3fn"; break;
    case kDLFloat8_e4m3fnuz: fixed = "float8_e4m3fnuz"; break;
    case kDLFloat8_e5m2: fixed = "float8_e5m2"; break;
    case kDLFloat8_e5m2fnuz: fixed = "float8_e5m2fnuz"; break;
    case kDLFloat8_e8m0fnu: fixed = "float8_e8m0fnu"; break;
    case kDLFloat6_e2m3fn: fixed = "float6_e2m3fn"; break;
    case kDLFloat6_e3m2fn: fixed = "float6_e3m2fn"; break;
    case kDLFloat4_e2m1fn: fixed = "float4_e2m1fn"; break;
    default: fixed = "unknown"; break;  // unreachable: dtype_bits_valid knows no other code
  }
  if (fixed) {
    put(fixed);
  } else {
    put(family);
    put_number(d.bits);
  }
  if (d.lanes > 1) {
    put("x");
    put_number(d.lanes);
  }
  return out;
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif  // DLPACK_MDSPAN_DTYPE_NAME_HPP
