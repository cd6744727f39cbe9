// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// check_bool_values: every byte a kDLBool tensor's elements reach is 0 or 1,
// whatever the strides (slices, transposes, reversed axes, broadcasts, sliding windows).
#include "support/prelude.hpp"

#include <cstring>
#include <string>
#include <vector>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::dt;
using dlpm_test::f32;
using dlpm_test::tensor_builder;

namespace {
const DLDataType b8 = dt(kDLBool, 8);

// The check's answer, and its message when it refuses.
struct answer {
  bool ok;
  dm::errc code;
  std::string message;
};

answer check(const DLTensor& t, std::uint64_t flags = 0) {
  dm::error e;
  const bool ok = dm::check_bool_values(t, flags, &e);
  return {ok, ok ? dm::errc::ok : e.code(), ok ? std::string() : std::string(e.message().c_str())};
}
}  // namespace

TEST_CASE("bytes of 0 and 1 pass in every layout a user makes") {
  unsigned char buf[24];
  for (int i = 0; i < 24; ++i) buf[i] = static_cast<unsigned char>(i % 3 == 0);
  CHECK(check(tensor_builder(buf, b8, {2, 3, 4}, {12, 4, 1}).get()).ok);                  // row-major
  CHECK(check(tensor_builder(buf, b8, {4, 3, 2}, {1, 4, 12}).get()).ok);                  // transpose
  CHECK(check(tensor_builder(buf, b8, {2, 3, 2}, {12, 4, 1}).get()).ok);                  // a[..., :2]
  CHECK(check(tensor_builder(buf, b8, {24}, {-1}, 23).get()).ok);                         // reversed
  CHECK(check(tensor_builder(buf, b8, {1000000, 24}, {0, 1}).get()).ok);                  // broadcast: 24 bytes read
  CHECK(check(tensor_builder(buf, b8, {20, 5}, {1, 1}).get()).ok);                        // sliding window
  CHECK(check(tensor_builder(buf, b8, {0, 3}, {3, 1}).get()).ok);                         // empty
  CHECK(check(tensor_builder::without_strides(buf, b8, {4, 6}).get()).ok);                // NULL strides
  CHECK(check(tensor_builder(buf, b8, {}, {}).get()).ok);                                 // rank 0
}

TEST_CASE("a byte above 1 is found wherever the strides put it, and named with its offset") {
  unsigned char buf[24] = {};
  buf[17] = 2;
  for (auto t : {tensor_builder(buf, b8, {2, 3, 4}, {12, 4, 1}), tensor_builder(buf, b8, {4, 3, 2}, {1, 4, 12}),
                        tensor_builder(buf, b8, {24}, {-1}, 23), tensor_builder(buf, b8, {3, 24}, {0, 1}),
                        tensor_builder(buf, b8, {20, 5}, {1, 1}), tensor_builder(buf, b8, {3, 4}, {8, 2}, 1),
                        tensor_builder(buf, b8, {2, 2, 3}, {-12, 1, -4}, 20)}) {
    const answer a = check(t.get());
    CHECK_FALSE(a.ok);
    CHECK(a.code == dm::errc::invalid_argument);
    CHECK(a.message == "a bool element holds the byte 2 at byte offset 17 from data: kDLBool elements are 0 or 1");
  }
  // Bytes the elements do not reach are not read: every other byte, from byte 0.
  CHECK(check(tensor_builder(buf, b8, {12}, {2}).get()).ok);
  CHECK_FALSE(check(tensor_builder(buf, b8, {12}, {2}, 1).get()).ok);
  // The last byte, read through a reversed axis from the highest address.
  unsigned char last[5] = {0, 1, 0, 1, 255};
  const answer a = check(tensor_builder(last, b8, {5}, {-1}, 4).get());
  CHECK(a.message == "a bool element holds the byte 255 at byte offset 4 from data: kDLBool elements are 0 or 1");
}

TEST_CASE("padded bool lanes are a byte each, and packed ones and other dtypes are refused as such") {
  unsigned char buf[8] = {1, 0, 1, 1, 0, 0, 1, 3};
  auto padded = tensor_builder(buf, dt(kDLBool, 1), {8}, {1});
  CHECK(check(padded.get(), dm::flag_is_subbyte_type_padded).message ==
        "a bool element holds the byte 3 at byte offset 7 from data: kDLBool elements are 0 or 1");
  CHECK(check(padded.get()).code == dm::errc::subbyte_not_viewable);
  // Packed 1-bit bools filling whole bytes: every bit pattern is 8 (or 16) bools, so no
  // byte is refused, and none is read.
  unsigned char bits[4] = {0xFF, 0x03, 0x00, 0x01};
  CHECK(check(tensor_builder(bits, dt(kDLBool, 1, 8), {4}, {1}).get()).ok);
  CHECK(check(tensor_builder(bits, dt(kDLBool, 1, 16), {2}, {1}).get()).ok);
  float f[2] = {};
  const answer a = check(tensor_builder(f, f32, {2}, {1}).get());
  CHECK(a.code == dm::errc::dtype_mismatch);
  CHECK(a.message == "dtype float32 is not bool: only kDLBool elements are checked for 0 and 1");
}

TEST_CASE("strides that overlap past the budget are refused with the numbers, not walked") {
  unsigned char buf[64] = {};
  // 4096 x 4096 indices at strides (3, 2) reach 3 * 4095 + 2 * 4095 + 1 bytes but read 4096 * 4096: more than 64 times the span.
  std::vector<unsigned char> big(20476, 0);
  const answer a = check(tensor_builder(big.data(), b8, {4096, 4096}, {3, 2}).get());
  CHECK(a.code == dm::errc::invalid_argument);
  CHECK(a.message ==
        "a bool tensor whose strides overlap this much is not checked for 0 and 1: it would read 16777216 bytes over the "
        "20476 it spans (view it as uint8)");
  // Within the budget, overlapping strides are walked: 8 x 8 at (2, 3) over 36 bytes.
  CHECK(check(tensor_builder(buf, b8, {8, 8}, {2, 3}).get()).ok);
  buf[35] = 7;
  CHECK_FALSE(check(tensor_builder(buf, b8, {8, 8}, {2, 3}).get()).ok);
}

TEST_CASE("an invalid tensor gets the structure's refusal") {
  unsigned char buf[4] = {};
  DLTensor t = tensor_builder(buf, b8, {4}, {1}).get();
  t.ndim = -1;
  CHECK(check(t).code == dm::errc::invalid_ndim);
}

TEST_CASE("memory the CPU cannot read, and a span no memory holds, are refused before a byte is read") {
  // Neither address is readable here: a read would crash the test.
  auto on_device = tensor_builder(reinterpret_cast<void*>(std::uintptr_t{0x7f0000000000}), b8, {4}, {1});
  DLTensor t = on_device.get();
  t.device = {kDLCUDA, 0};
  const answer device = check(t);
  CHECK(device.code == dm::errc::device_mismatch);
  CHECK(device.message ==
        "a bool tensor on device kDLCUDA (type 2) is not checked for 0 and 1: the CPU cannot read its memory");
  const std::int64_t quarter = std::int64_t{1} << 62;
  const answer huge =
      check(tensor_builder(reinterpret_cast<void*>(std::uintptr_t{0x5000000000000000}), b8, {2, 2}, {-quarter, quarter - 1})
                .get());
  CHECK(huge.code == dm::errc::invalid_argument);
  CHECK(huge.message ==
        "a bool tensor whose elements span more than INT64_MAX bytes is not checked for 0 and 1: no memory holds it");
}
