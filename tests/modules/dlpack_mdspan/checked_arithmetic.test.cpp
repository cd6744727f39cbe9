// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// checked_arithmetic.hpp: the helpers every product and sum on untrusted integers goes
// through, at the limits where a raw operator would wrap. Internal (detail), so the header is
// included in both forms of the suite.
#include "support/prelude.hpp"

#include <dlpack_mdspan/checked_arithmetic.hpp>

#include <array>
#include <cstdint>
#include <limits>

namespace dd = dlpack_mdspan::detail;
using std::int64_t;
using std::uint64_t;
constexpr int64_t max64 = std::numeric_limits<int64_t>::max();
constexpr int64_t min64 = std::numeric_limits<int64_t>::min();

TEST_CASE("mul, add and sub report exactly the results that do not fit in int64") {
  int64_t out = 0;
  CHECK_FALSE(dd::mul_overflows(int64_t{1} << 31, int64_t{1} << 31, &out));
  CHECK(out == int64_t{1} << 62);
  CHECK(dd::mul_overflows(int64_t{1} << 32, int64_t{1} << 31, &out));  // 2^63
  CHECK_FALSE(dd::mul_overflows(-(int64_t{1} << 32), int64_t{1} << 31, &out));  // -2^63 fits
  CHECK(out == min64);
  CHECK(dd::mul_overflows(min64, -1, &out));
  CHECK_FALSE(dd::add_overflows(max64 - 1, 1, &out));
  CHECK(out == max64);
  CHECK(dd::add_overflows(max64, 1, &out));
  CHECK(dd::add_overflows(min64, -1, &out));
  CHECK_FALSE(dd::sub_overflows(-1, max64, &out));
  CHECK(out == min64);
  CHECK(dd::sub_overflows(-2, max64, &out));
  CHECK(dd::sub_overflows(0, min64, &out));
}

TEST_CASE("mul_overflows_in uses the index type's own range") {
  std::int16_t s = 0;
  CHECK_FALSE(dd::mul_overflows_in<std::int16_t>(181, 181, &s));  // 32761
  CHECK(s == 32761);
  CHECK(dd::mul_overflows_in<std::int16_t>(182, 181, &s));  // 32942
  std::uint32_t u = 0;
  CHECK_FALSE(dd::mul_overflows_in<std::uint32_t>(65535, 65537, &u));  // 2^32 - 1
  CHECK(dd::mul_overflows_in<std::uint32_t>(65536, 65536, &u));
}

TEST_CASE("saturating_mul stops at INT64_MAX") {
  CHECK(dd::saturating_mul(3, 7) == 21);
  CHECK(dd::saturating_mul(int64_t{1} << 40, int64_t{1} << 40) == max64);
  CHECK(dd::saturating_mul(0, max64) == 0);
}

TEST_CASE("magnitude_below_zero is defined for INT64_MIN") {
  CHECK(dd::magnitude_below_zero(-1) == 1u);
  CHECK(dd::magnitude_below_zero(min64) == (std::uintptr_t{1} << 63));
}
