// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The only arithmetic the library does on untrusted integers (extents, strides, offsets,
// indices from a foreign DLTensor): every product and sum goes through these helpers, so
// an overflow is a reported failure and never undefined behaviour. A raw `*` or `+` on an
// int64 read from a DLTensor is a bug; the differential test (tests/reference) and the
// fuzzers hunt for them.
#ifndef DLPACK_MDSPAN_CHECKED_ARITHMETIC_HPP
#define DLPACK_MDSPAN_CHECKED_ARITHMETIC_HPP

#include <dlpack_mdspan/config.hpp>

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

/// The magnitude of a negative offset as an address distance: well defined for INT64_MIN,
/// whose negation is not an int64.
constexpr std::uintptr_t magnitude_below_zero(std::int64_t negative) noexcept {
  return std::uintptr_t{0} - static_cast<std::uintptr_t>(negative);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
