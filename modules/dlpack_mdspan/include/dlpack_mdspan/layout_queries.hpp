// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Questions about a DLTensor's layout: is it C/F-contiguous, which dimension is the
// leading (unit-stride) one (leading_dim), how the strides rank (stride_ranks), which
// bytes the elements reach (byte_span), the elements as nested byte loops (coalesce).
// CuTe's stride order and the requirements built on
// these answers are in layout_requirements.hpp.
#ifndef DLPACK_MDSPAN_LAYOUT_QUERIES_HPP
#define DLPACK_MDSPAN_LAYOUT_QUERIES_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/layout_stride_relaxed.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// A DLTensor's extents as layout_stride_relaxed's mapping reads them: rank max_ndim, the
// modes past ndim of extent 1, which the uniqueness rule skips. So a runtime rank asks the
// one rule the mapping holds instead of a second copy of it.
struct tensor_extents {
  using index_type = std::int64_t;
  using size_type = std::uint64_t;
  using rank_type = std::size_t;
  // Host and device, as the mapping's members that call them (nvcc compiles this header).
  DLPM_HOST_DEVICE static constexpr rank_type rank() noexcept { return max_ndim; }
  DLPM_HOST_DEVICE constexpr index_type extent(rank_type r) const noexcept { return values[r]; }
  index_type values[max_ndim];
};

// Garbage (anything check_structure refuses) is never contiguous.
inline bool is_compact(const DLTensor& t, bool row_major) noexcept {
  error err;
  tensor_summary summary;
  return check_structure(t, structure_options{}, summary, &err) && is_compact_valid(t, summary.numel, row_major);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// The bytes a tensor's elements occupy, as offsets from `data`: [begin, end).
struct byte_range {
  std::int64_t begin = 0;  ///< the first byte of the lowest-addressed element (byte_offset included)
  std::int64_t end = 0;    ///< one past the last byte of the highest-addressed element
};

/// The byte range a checked tensor addresses, for callers that must know the memory it
/// reaches (a buffer it must lie inside, a copy of it): the lowest and highest element the
/// strides reach (negative strides included) and the bytes between. Packed sub-byte
/// elements share bytes (a partly used byte counts whole); padded ones (the flags) take a
/// byte per lane. An empty tensor addresses nothing: begin == end == byte_offset. Total:
/// check_structure verified that these bytes fit.
[[nodiscard]] inline byte_range byte_span(const checked_tensor& c) noexcept {
  const DLTensor& t = c.tensor();
  const auto base = static_cast<std::int64_t>(t.byte_offset);  // check_structure: it fits
  if (c.numel() == 0) return byte_range{base, base};
  const std::int64_t bits = c.itemsize() != 0 ? static_cast<std::int64_t>(c.itemsize()) * 8
                                              : std::int64_t{t.dtype.bits} * t.dtype.lanes;  // packed sub-byte
  byte_range out;
  (void)detail::bit_span(t.byte_offset, c.lowest_index(), c.highest_index(), bits, &out.begin, &out.end);
  return out;
}

/// byte_span of a tensor not yet checked (`subbyte_padded`: its IS_SUBBYTE_TYPE_PADDED
/// flag); fails with check_structure's error for an invalid tensor.
inline result<byte_range> byte_span(const DLTensor& t, bool subbyte_padded = false) noexcept {
  const auto c = check_tensor(t, subbyte_padded ? flag_is_subbyte_type_padded : 0);
  if (!c) return unexpected_error(c.error());
  return byte_span(*c);
}

/// Whether no two indices of a checked tensor reach the same element: what a destination
/// needs (a receive, a copy into it). A broadcast (stride 0 over an extent > 1) or an
/// overlap is false; negative strides are judged by their magnitude; empty tensors are
/// unique. The rule is layout_stride_relaxed::mapping::is_unique's: sorted by |stride|,
/// each mode steps past the span of the modes inside it, so a few unique but interleaved
/// layouts (strides (3, 2) over shape (2, 3)) count as not unique. Total.
[[nodiscard]] inline bool is_unique(const checked_tensor& c) noexcept {
  if (c.row_major()) return true;  // compact strides (an empty tensor's too) reach each element once
  const DLTensor& t = c.tensor();
  detail::tensor_extents extents;
  std::int64_t strides[max_ndim];
  for (std::int32_t r = 0; r < max_ndim; ++r) {
    extents.values[r] = r < t.ndim ? t.shape[r] : 1;
    strides[r] = r < t.ndim ? stride_at(t, r) : 0;
  }
  return layout_stride_relaxed::mapping<detail::tensor_extents>(extents, strides).is_unique();
}

/// is_unique of a tensor not yet checked; fails with check_structure's error for an invalid one.
inline result<bool> is_unique(const DLTensor& t) noexcept {
  const auto c = check_tensor(t);
  if (!c) return unexpected_error(c.error());
  return is_unique(*c);
}

/// What coalesce found: `ndim` byte modes written, outermost first, and the `block`.
struct coalesced_layout {
  std::int32_t ndim = 0;   ///< modes written to extents[0..ndim) and byte_steps[0..ndim)
  std::int64_t block = 0;  ///< elements of the innermost contiguous run (0: the tensor is empty)
};

/// The elements of a checked tensor in row-major index order as nested byte loops: the
/// modes that step (extent > 1), outermost first, merged where one steps over the next
/// exactly (CuTe's coalesce, read from the outermost mode), each as an extent and a step in
/// bytes; the innermost mode whose step is one element is folded into `block`, the run of
/// elements that lie side by side. A compact row-major tensor is no mode and a block of
/// numel; an empty one no mode and a block of 0; at most ndim modes are written. Padded
/// sub-byte lanes (the flags) take a byte each. What an MPI datatype describes
/// (mpi_datatype.h). Fails only for elements without a byte address (element_bytes) and
/// for a distance from the lowest to the highest byte past INT64_MAX (errc::span_overflow).
[[nodiscard]] inline result<coalesced_layout> coalesce(const checked_tensor& c, std::span<std::int64_t, max_ndim> extents,
                                                       std::span<std::int64_t, max_ndim> byte_steps) noexcept {
  const auto item = c.element_bytes();
  if (!item) return unexpected_error(item.error());
  const DLTensor& t = c.tensor();
  coalesced_layout out;
  if (c.numel() == 0) return out;  // nothing is addressed
  const auto itemsize = static_cast<std::int64_t>(*item);
  // No overflow: the bytes from the lowest element to the highest fit (checked here), and a
  // mode of extent > 1 steps at most that far; merged extents are bounded by numel.
  std::int64_t distance = 0, reach = 0;  // highest - lowest alone may pass INT64_MAX
  if (detail::sub_overflows(c.highest_index(), c.lowest_index(), &distance) || detail::mul_overflows(distance, itemsize, &reach))
    return unexpected_error(error::format(errc::span_overflow, "coalesce: the addressed bytes overflow int64"));
  std::int32_t modes = 0;
  for (std::int32_t r = 0; r < t.ndim; ++r) {
    const std::int64_t extent = t.shape[r];
    if (extent == 1) continue;  // its stride may be anything: it never steps
    const std::int64_t step = c.stride(r) * itemsize;
    // The outer mode runs straight on when its step is this mode's whole stretch, step *
    // extent; a stretch beyond int64 cannot equal a step that fits.
    std::int64_t stretch = 0;
    if (modes > 0 && !detail::mul_overflows(step, extent, &stretch) && byte_steps[modes - 1] == stretch) {
      extents[modes - 1] *= extent;
      byte_steps[modes - 1] = step;
      continue;
    }
    extents[modes] = extent;
    byte_steps[modes] = step;
    ++modes;
  }
  out.block = 1;
  if (modes > 0 && byte_steps[modes - 1] == itemsize) out.block = extents[--modes];
  out.ndim = modes;
  return out;
}

/// coalesce of a tensor not yet checked (`subbyte_padded`: its IS_SUBBYTE_TYPE_PADDED
/// flag), into spans of at least ndim entries (errc::invalid_argument otherwise); fails
/// with check_structure's error for an invalid tensor.
inline result<coalesced_layout> coalesce(const DLTensor& t, bool subbyte_padded, std::span<std::int64_t> extents,
                                         std::span<std::int64_t> byte_steps) noexcept {
  const auto c = check_tensor(t, subbyte_padded ? flag_is_subbyte_type_padded : 0);
  if (!c) return unexpected_error(c.error());
  if (extents.size() < static_cast<std::size_t>(t.ndim) || byte_steps.size() < static_cast<std::size_t>(t.ndim))
    return unexpected_error(error::format(errc::invalid_argument, "coalesce: the outputs hold %zu and %zu modes, ndim is %d",
                                          extents.size(), byte_steps.size(), t.ndim));
  std::int64_t e[max_ndim], s[max_ndim];
  const auto r = coalesce(*c, e, s);
  if (r)
    for (std::int32_t m = 0; m < r->ndim; ++m) {
      extents[static_cast<std::size_t>(m)] = e[m];
      byte_steps[static_cast<std::size_t>(m)] = s[m];
    }
  return r;
}

/// C order (row-major), tolerant of size-1 dimensions and empty tensors. NULL strides
/// count as row-major. A tensor that fails validate() is never contiguous.
inline bool is_c_contiguous(const DLTensor& t) noexcept { return detail::is_compact(t, true); }

/// Fortran order (column-major), with the same tolerance. A (1, N) tensor is both.
inline bool is_f_contiguous(const DLTensor& t) noexcept { return detail::is_compact(t, false); }

/// C or Fortran order.
inline bool is_contiguous(const DLTensor& t) noexcept {
  error err;
  tensor_summary summary;
  return check_structure(t, structure_options{}, summary, &err) &&
         (detail::is_compact_valid(t, summary.numel, true) || detail::is_compact_valid(t, summary.numel, false));
}

/// The leading dimension, deduced as CuTe DSL's mark_layout_dynamic deduces it: the one
/// mode of stride 1; among several modes of stride 1, the one of extent > 1 if exactly one
/// has it (PyTorch writes stride 1 for every size-1 mode). No mode of stride 1 is not an
/// error: the answer is -1, "no leading dimension" (CuTe then keeps every stride dynamic).
/// Several stride-1 modes of which none, or more than one, has extent > 1 are
/// errc::ambiguous_layout: (1,4,1,32,1) with strides (1,1,1,4,1) gives 1; (1,1,1) with
/// strides (1,1,1) has no answer.
inline result<std::int32_t> leading_dim(const DLTensor& t) noexcept {
  error err;
  tensor_summary summary;
  if (!check_structure(t, structure_options{}, summary, &err)) return unexpected_error(err);
  std::int32_t first = -1, count = 0, big = -1, big_count = 0;
  for (std::int32_t r = 0; r < t.ndim; ++r) {
    if (stride_at(t, r) != 1) continue;
    if (first < 0) first = r;
    ++count;
    if (t.shape[r] > 1) {
      big = r;
      ++big_count;
    }
  }
  if (count <= 1) return first;  // the one unit stride, or -1: none
  if (big_count == 1) return big;
  return unexpected_error(error::format(errc::ambiguous_layout,
                                        "leading dimension is ambiguous: %d modes have stride 1 and %d of them extent > 1 "
                                        "(the first is mode %d); require the one you need (layout_requirements::leading_dim)",
                                        count, big_count, first));
}

/// Writes, for each dimension, its rank when the strides are sorted ascending: row-major
/// rank 3 gives (2,1,0), column-major (0,1,2). `order` must have ndim entries. Equal
/// strides make the order ambiguous (errc::ambiguous_layout). Returns the filled prefix.
/// Not CuTe's stride_order (the modes from outermost to innermost: stride_order in
/// layout_requirements.hpp).
inline result<std::span<std::int32_t>> stride_ranks(const DLTensor& t, std::span<std::int32_t> order) noexcept {
  error err;
  tensor_summary summary;
  if (!check_structure(t, structure_options{}, summary, &err)) return unexpected_error(err);
  if (order.size() < static_cast<std::size_t>(t.ndim))
    return unexpected_error(error::format(errc::invalid_argument, "stride_ranks: output has %zu entries, ndim is %d",
                                          order.size(), t.ndim));
  for (std::int32_t r = 0; r < t.ndim; ++r) {
    std::int32_t position = 0;
    for (std::int32_t q = 0; q < t.ndim; ++q) {
      if (q == r) continue;
      const std::int64_t sr = stride_at(t, r), sq = stride_at(t, q);
      if (sr == sq)
        return unexpected_error(error::format(errc::ambiguous_layout,
                                              "stride order is ambiguous: dimensions %d and %d both have stride %lld", q, r,
                                              static_cast<long long>(sr)));
      position += sq < sr;
    }
    order[static_cast<std::size_t>(r)] = position;
  }
  return order.first(static_cast<std::size_t>(t.ndim));
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
