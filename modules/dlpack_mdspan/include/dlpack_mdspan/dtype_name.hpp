// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DLPack dtypes by name ("float32", "bfloat16", "float8_e4m3fn"). Below error.hpp, whose
// messages word dtypes by these names.
#ifndef DLPACK_MDSPAN_DTYPE_NAME_HPP
#define DLPACK_MDSPAN_DTYPE_NAME_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/dtype.hpp>

#include <cstddef>
#include <cstdint>

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
  if (!detail::dtype_valid(d)) {
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
    default: fixed = "unknown"; break;  // unreachable: dtype_valid knows no other code
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
