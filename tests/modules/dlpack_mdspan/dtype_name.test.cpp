// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtype_name: NumPy's and ml_dtypes' names, lanes as a suffix, a refused dtype shown raw.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

#include <string_view>

namespace dm = dlpack_mdspan;
using dlpm_test::dt;

namespace {
std::string_view name(DLDataType d) {
  static dm::dtype_name_text held;  // the text is held by value: keep it past the call
  held = dm::dtype_name(d);
  return held.c_str();
}
}  // namespace

TEST_CASE("dtype_name spells each family with its width, and the fixed formats by their own names") {
  CHECK(name(dt(kDLFloat, 32)) == "float32");
  CHECK(name(dt(kDLInt, 8)) == "int8");
  CHECK(name(dt(kDLUInt, 64)) == "uint64");
  CHECK(name(dt(kDLBfloat, 16)) == "bfloat16");
  CHECK(name(dt(kDLComplex, 128)) == "complex128");
  CHECK(name(dt(kDLOpaqueHandle, 64)) == "handle64");
  CHECK(name(dt(kDLBool, 8)) == "bool");    // NumPy's bool, a byte
  CHECK(name(dt(kDLBool, 1)) == "bool1");   // a 1-bit bool keeps its width
  CHECK(name(dt(kDLFloat8_e4m3fn, 8)) == "float8_e4m3fn");
  CHECK(name(dt(kDLFloat4_e2m1fn, 4)) == "float4_e2m1fn");
  CHECK(name(dt(kDLFloat6_e3m2fn, 6)) == "float6_e3m2fn");
}

TEST_CASE("dtype_name adds lanes above one as x<lanes>") {
  CHECK(name(dt(kDLFloat, 32, 4)) == "float32x4");
  CHECK(name(dt(kDLFloat4_e2m1fn, 4, 2)) == "float4_e2m1fnx2");
  CHECK(name(dt(kDLUInt, 8, 65535)) == "uint8x65535");
}

TEST_CASE("dtype_name shows a dtype check_dtype refuses raw, the longest within its buffer") {
  CHECK(name(dt(kDLInt, 7)) == "(code 0, bits 7, lanes 1)");
  CHECK(name(dt(kDLFloat, 32, 0)) == "(code 2, bits 32, lanes 0)");
  CHECK(name(DLDataType{255, 255, 65535}) == "(code 255, bits 255, lanes 65535)");
  CHECK(name(DLDataType{255, 255, 65535}).size() < sizeof(dm::dtype_name_text{}.text));
}

TEST_CASE("dtype_name is a constant expression") {
  constexpr auto n = dm::dtype_name(DLDataType{kDLFloat, 16, 1});
  static_assert(n.text[0] == 'f' && n.text[5] == '1' && n.text[6] == '6' && n.text[7] == '\0');
  CHECK(std::string_view(n.c_str()) == "float16");
}
