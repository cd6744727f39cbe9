// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The only arithmetic the library does on untrusted integers (extents, strides, offsets,
// indices from a foreign DLTensor): every product and sum goes through these helpers, so
// an overflow is a reported failure and never undefined behaviour. A raw `*` or `+` on an
// int64 read from a DLTensor is a bug; the differential test (tests/reference) and the
// fuzzers hunt for them.
#ifndef DLPACK_MDSPAN_CHECKED_ARITHMETIC_HPP
#define DLPACK_MDSPAN_CHECKED_ARITHMETIC_HPP

#include <dlpack_mdspan/config.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

/// *out = a * b; true when the exact product does not fit (then *out is unspecified).
constexpr bool mul_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) noexcept {
  return __builtin_mul_overflow(a, b, out);
}

/// *out = a + b; true when the exact sum does not fit.
constexpr bool add_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) noexcept {
  return __builtin_add_overflow(a, b, out);
}

/// *out = a - b; true when the exact difference does not fit.
constexpr bool sub_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) noexcept {
  return __builtin_sub_overflow(a, b, out);
}

/// *out = a * b in the integer type I (an mdspan's index_type); true on overflow.
template <class I>
constexpr bool mul_overflows_in(I a, I b, I* out) noexcept {
  return __builtin_mul_overflow(a, b, out);
}

/// a * b, or INT64_MAX when it does not fit (for non-negative operands: strides of empty
/// tensors, which address nothing and only need to be defined).
constexpr std::int64_t saturating_mul(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t out = 0;
  return mul_overflows(a, b, &out) ? std::numeric_limits<std::int64_t>::max() : out;
}

/// The product of v's entries, each at most 2^W, as a tree of pairwise products: a level
/// multiplies unchecked while 2W <= 63 (its products cannot wrap uint64), and sets
/// `overflow` where one of the levels above does wrap.
template <std::size_t N, int W>
DLPM_HOT_INLINE constexpr std::uint64_t bounded_product(const std::array<std::uint64_t, N>& v, bool& overflow) noexcept {
  if constexpr (N == 1) {
    return v[0];
  } else {
    std::array<std::uint64_t, (N + 1) / 2> next{};
    for (std::size_t i = 0; i < N / 2; ++i) {
      if constexpr (2 * W <= 63) next[i] = v[2 * i] * v[2 * i + 1];
      else overflow |= __builtin_mul_overflow(v[2 * i], v[2 * i + 1], &next[i]);
    }
    if constexpr (N % 2 != 0) next[N / 2] = v[N - 1];
    return bounded_product<(N + 1) / 2, (2 * W <= 63 ? 2 * W : 64)>(next, overflow);
  }
}

/// Whether the product of N extents exceeds `limit`, for extents each in [1, 2^Bits] (the
/// import's range bound; for others the answer is meaningless and unused). log2(N)
/// multiplies deep instead of one serial chain of N checked ones, and only the levels of
/// the tree whose products could wrap test for overflow.
template <std::size_t N, int Bits>
DLPM_HOT_INLINE constexpr bool bounded_product_above(const std::int64_t* extents, std::uint64_t limit) noexcept {
  static_assert(N > 0 && Bits > 0 && Bits <= 62);
  std::array<std::uint64_t, N> v{};
  for (std::size_t i = 0; i < N; ++i) v[i] = static_cast<std::uint64_t>(extents[i]);
  bool overflow = false;
  const std::uint64_t product = bounded_product<N, Bits>(v, overflow);
  return overflow || product > limit;
}

/// The magnitude of a negative offset as an address distance: well defined for INT64_MIN,
/// whose negation is not an int64.
constexpr std::uintptr_t magnitude_below_zero(std::int64_t negative) noexcept {
  return std::uintptr_t{0} - static_cast<std::uintptr_t>(negative);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
