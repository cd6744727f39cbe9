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

TEST_CASE("bounded_product_above agrees with exact arithmetic at the limit, for every tree shape") {
  // Extents of 2^31 (the import's range bound): rank 2 gives exactly 2^62, rank 3 wraps uint64
  // in a checked level of the tree, rank 4 in two.
  const int64_t big = int64_t{1} << 31;
  const std::array<int64_t, 5> bigs{big, big, big, big, big};
  CHECK_FALSE(dd::bounded_product_above<2, 31>(bigs.data(), uint64_t{1} << 62));
  CHECK(dd::bounded_product_above<2, 31>(bigs.data(), (uint64_t{1} << 62) - 1));
  CHECK(dd::bounded_product_above<3, 31>(bigs.data(), static_cast<uint64_t>(max64)));  // 2^93
  CHECK(dd::bounded_product_above<4, 31>(bigs.data(), static_cast<uint64_t>(max64)));
  CHECK(dd::bounded_product_above<5, 31>(bigs.data(), static_cast<uint64_t>(max64)));
  // An odd count carries the last extent up a level unmultiplied: 3 * 5 * 7 = 105.
  const std::array<int64_t, 3> odd{3, 5, 7};
  CHECK_FALSE(dd::bounded_product_above<3, 31>(odd.data(), 105));
  CHECK(dd::bounded_product_above<3, 31>(odd.data(), 104));
  // Rank 8 of 2^7 = 2^56 and of 2^8 = 2^64 (wraps to 0 unchecked; must be reported).
  std::array<int64_t, 8> e{};
  e.fill(128);
  CHECK_FALSE(dd::bounded_product_above<8, 8>(e.data(), uint64_t{1} << 56));
  CHECK(dd::bounded_product_above<8, 8>(e.data(), (uint64_t{1} << 56) - 1));
  e.fill(256);
  CHECK(dd::bounded_product_above<8, 8>(e.data(), static_cast<uint64_t>(max64)));
  // A single extent is its own product.
  CHECK_FALSE(dd::bounded_product_above<1, 31>(odd.data(), 3));
  CHECK(dd::bounded_product_above<1, 31>(odd.data(), 2));
}

TEST_CASE("magnitude_below_zero is defined for INT64_MIN") {
  CHECK(dd::magnitude_below_zero(-1) == 1u);
  CHECK(dd::magnitude_below_zero(min64) == (std::uintptr_t{1} << 63));
}
