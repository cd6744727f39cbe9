// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Whether a bool tensor's bytes are bools: DLPack's kDLBool elements hold 0 or 1 in each
// byte (NumPy's and PyTorch's convention), but nothing stops a producer from lending other
// bytes (PyTorch's `u8.view(torch.bool)`), and a language whose bool has two values (Rust;
// C++ too) must not read them as bool. check_bool_values reads every byte the elements
// reach, however the strides order, repeat (broadcast) or overlap them, and a repeated one
// at most bool_check_reads_per_byte times over the span.
#ifndef DLPACK_MDSPAN_BOOL_VALUES_HPP
#define DLPACK_MDSPAN_BOOL_VALUES_HPP

#include <dlpack_mdspan/checked_arithmetic.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/layout_queries.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// The first byte above 1 among the n bytes at p, or -1. The bytes are OR-ed first (a loop
// the compiler vectorises), and searched only when that finds one.
inline std::int64_t first_non_bool(const unsigned char* p, std::int64_t n) noexcept {
  unsigned char any = 0;
  for (std::int64_t i = 0; i < n; ++i) any = static_cast<unsigned char>(any | p[i]);
  if (any <= 1) return -1;
  for (std::int64_t i = 0; i < n; ++i)
    if (p[i] > 1) return i;
  return -1;  // unreachable: some byte was above 1
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// How many bytes check_bool_values reads at most per byte the elements span (byte_span)
/// before it refuses instead: strides that overlap more than this (a tensor whose indices
/// reach each byte many times over, other than by a stride of 0) would make the check take
/// far longer than the data is large.
inline constexpr std::int64_t bool_check_reads_per_byte = 64;

/// Every byte of every element of a checked kDLBool tensor (bits 8, or padded sub-byte
/// lanes, a byte each) is 0 or 1. Reads the elements' bytes, so the data must not be written
/// while it runs; memory the CPU cannot read (is_host_accessible) is refused unread.
///
/// Semantics: the elements as nested byte loops (coalesce); a mode of stride 0 repeats the
/// bytes inside it and is read once; a negative stride reads its bytes upwards; modes whose
/// step is at most the run of bytes inside them join it (a sliding window reads its bytes
/// once). Bytes that two modes which cannot be joined both reach are read again, within
/// the bool_check_reads_per_byte budget. Empty tensors pass, and so do packed sub-byte bools
/// (bits below 8, not padded), unread: every bit pattern of theirs is a set of bools.
///
/// Runtime errors: errc::dtype_mismatch for a dtype other than kDLBool;
/// errc::device_mismatch for memory the CPU cannot read; coalesce's refusal
/// for packed sub-byte lanes that do not fill whole bytes; errc::invalid_argument naming a
/// byte above 1 and its offset from `data` (the first met, not necessarily the lowest);
/// errc::invalid_argument for strides that would read more than bool_check_reads_per_byte
/// times the spanned bytes, or whose span is more bytes than int64 counts.
[[nodiscard]] inline bool check_bool_values(const checked_tensor& c, error* err) noexcept {
  const DLTensor& t = c.tensor();
  if (t.dtype.code != kDLBool)
    DLPM_REFUSE(err, errc::dtype_mismatch, "dtype %#x is not bool: only kDLBool elements are checked for 0 and 1",
                detail::packed_dtype(t.dtype));
  if (!is_host_accessible(t.device.device_type))
    DLPM_REFUSE(err, errc::device_mismatch,
                "a bool tensor on device %s (type %d) is not checked for 0 and 1: the CPU cannot read its memory",
                device_type_name(t.device.device_type), static_cast<int>(t.device.device_type));
  std::int64_t extents[max_ndim], steps[max_ndim];
  const auto loops = coalesce(c, extents, steps);
  if (!loops) {
    if constexpr (detail::is_worded<decltype(err)>) *err = loops.error();
    return false;
  }
  if (loops->block == 0) return true;  // empty
  if (t.dtype.bits < 8 && !c.subbyte_padded()) return true;  // packed bits: all valid
  // The lowest byte reached is the origin of the walk below: each mode walks upwards.
  const auto span = byte_span(c);
  std::int64_t origin = span.begin;
  std::int64_t run = 0;  // bytes side by side from the origin, block and joined modes
  (void)detail::mul_overflows(loops->block, static_cast<std::int64_t>(*c.element_bytes()), &run);  // within the span
  // The modes that step, upwards (a reversed mode starts at its last element), innermost
  // (smallest step) first: insertion sort, at most 64 modes.
  std::int32_t modes = 0;
  for (std::int32_t m = 0; m < loops->ndim; ++m) {
    if (steps[m] == 0) continue;  // a broadcast: the same bytes again
    // Read before the shift below, which may write over entry m (never past it: the
    // sorted list has at most m + 1 entries).
    const std::int64_t step = steps[m] < 0 ? -steps[m] : steps[m], extent = extents[m];
    std::int32_t at = modes++;
    for (; at > 0 && steps[at - 1] > step; --at) {
      steps[at] = steps[at - 1];
      extents[at] = extents[at - 1];
    }
    steps[at] = step;
    extents[at] = extent;
  }
  // Join each innermost mode whose step is within the run: its repeats overlap or abut, so
  // the run grows by step * (extent - 1) (within the span: no overflow).
  std::int32_t inner = 0;
  while (inner < modes && steps[inner] <= run) {
    run += steps[inner] * (extents[inner] - 1);
    ++inner;
  }
  // The outer walk: runs of `run` bytes at every combination of the remaining modes.
  std::int64_t runs = 1, reads = 0, budget = 0;
  // Strides the structure check allows may span more bytes than int64 counts: no memory
  // holds such a tensor, so it is refused before a byte is read.
  std::int64_t spanned = 0;
  if (detail::sub_overflows(span.end, span.begin, &spanned))
    DLPM_REFUSE(err, errc::invalid_argument,
                "a bool tensor whose elements span more than INT64_MAX bytes is not checked for 0 and 1: no memory holds it");
  for (std::int32_t m = inner; m < modes; ++m)
    if (detail::mul_overflows(runs, extents[m], &runs)) runs = std::numeric_limits<std::int64_t>::max();
  if (detail::mul_overflows(runs, run, &reads)) reads = std::numeric_limits<std::int64_t>::max();
  if (detail::mul_overflows(spanned, bool_check_reads_per_byte, &budget)) budget = std::numeric_limits<std::int64_t>::max();
  if (reads > budget)
    DLPM_REFUSE(err, errc::invalid_argument,
                "a bool tensor whose strides overlap this much is not checked for 0 and 1: it would read %lld bytes over "
                "the %lld it spans (view it as uint8)",
                static_cast<long long>(reads), static_cast<long long>(spanned));
  const auto* base = static_cast<const unsigned char*>(t.data);
  std::int64_t index[max_ndim] = {};
  for (;;) {
    std::int64_t at = origin;
    for (std::int32_t m = inner; m < modes; ++m) at += index[m] * steps[m];
    const std::int64_t bad = detail::first_non_bool(base + at, run);
    if (bad >= 0)
      DLPM_REFUSE(err, errc::invalid_argument,
                  "a bool element holds the byte %u at byte offset %lld from data: kDLBool elements are 0 or 1",
                  static_cast<unsigned>(base[at + bad]), static_cast<long long>(at + bad));
    std::int32_t m = modes;
    for (;;) {  // odometer over the outer modes, the last fastest
      if (m == inner) return true;
      --m;
      if (++index[m] < extents[m]) break;
      index[m] = 0;
    }
  }
}

/// check_bool_values of a tensor not yet checked (`flags`: a managed tensor's); fails
/// with check_tensor's error for an invalid one.
[[nodiscard]] inline bool check_bool_values(const DLTensor& t, std::uint64_t flags, error* err) noexcept {
  const auto c = check_tensor(t, flags);
  if (!c) {
    if constexpr (detail::is_worded<decltype(err)>) *err = c.error();
    return false;
  }
  return check_bool_values(*c, err);
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
