// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CuTe DSL's layout vocabulary on a DLTensor: what a kernel may assume of a layout, asked
// (stride_order here, leading_dim in layout_queries.hpp) and required (layout_requirements):
// the leading dimension, the stride order (CuTe's stride_order, PyTorch's dim_order),
// compactness in that order, and divisibility of shapes and strides per mode. Alignment
// (CuTe's assumed_align) is the requirements' min_alignment.
#ifndef DLPACK_MDSPAN_LAYOUT_REQUIREMENTS_HPP
#define DLPACK_MDSPAN_LAYOUT_REQUIREMENTS_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// layout_requirements::leading_dim when no leading dimension is required.
inline constexpr std::int32_t any_leading_dim = std::numeric_limits<std::int32_t>::min();

/// What a kernel assumes of a layout, in CuTe DSL's terms. Every field defaults to
/// "anything"; a non-empty span must have one entry per mode.
struct layout_requirements {
  /// The mode whose stride must be 1 (CuTe's mark_layout_dynamic(leading_dim)); negative
  /// counts from the last mode (-1 is the last). A size-1 mode passes with any stride,
  /// since no index ever uses it.
  std::int32_t leading_dim = any_leading_dim;
  /// The modes from the outermost to the innermost (CuTe's stride_order, PyTorch's
  /// Tensor.dim_order()): strides must not grow along it. Size-1 modes may sit anywhere.
  std::span<const std::int32_t> stride_order = {};
  /// With stride_order: compact in that order (CuTe's mark_compact_shape_dynamic), i.e. the
  /// innermost mode has stride 1 and each next one the product of the extents inside it.
  bool compact = false;
  /// extent(r) % shape_divisors[r] == 0; 0 or 1 leaves a mode free (CuTe's divisibility).
  std::span<const std::int64_t> shape_divisors = {};
  /// stride(r) % stride_divisors[r] == 0 for modes of extent > 1; 0 or 1 leaves a mode free.
  std::span<const std::int64_t> stride_divisors = {};

  /// True when nothing is required.
  [[nodiscard]] constexpr bool empty() const noexcept {
    return leading_dim == any_leading_dim && stride_order.empty() && !compact && shape_divisors.empty() &&
           stride_divisors.empty();
  }
};

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// The requirements themselves, for a tensor of rank `ndim`: nonsense is an error for every
// tensor, empty or not.
template <class Err>
inline bool layout_requirements_valid(const layout_requirements& req, std::int32_t ndim, Err err) noexcept {
  const auto rank = static_cast<std::size_t>(ndim);
  if (req.leading_dim != any_leading_dim && (req.leading_dim >= ndim || req.leading_dim < -ndim))
    DLPM_REFUSE(err, errc::invalid_argument, "layout requirement: leading_dim = %d is not a mode of a rank-%d tensor",
                req.leading_dim, ndim);
  if (req.compact && req.stride_order.empty())
    DLPM_REFUSE(err, errc::invalid_argument, "layout requirement: compact needs a stride_order to be compact in");
  if (!req.stride_order.empty()) {
    if (req.stride_order.size() != rank)
      DLPM_REFUSE(err, errc::invalid_argument, "layout requirement: stride_order has %zu entries, the tensor has %d modes",
                  req.stride_order.size(), ndim);
    std::uint64_t seen = 0;  // ndim <= max_ndim = 64 (check_structure)
    for (std::size_t i = 0; i < rank; ++i) {
      const std::int32_t m = req.stride_order[i];
      if (m < 0 || m >= ndim)
        DLPM_REFUSE(err, errc::invalid_argument, "layout requirement: stride_order[%zu] = %d is not a mode of a rank-%d tensor",
                    i, m, ndim);
      seen |= std::uint64_t{1} << m;
    }
    for (std::int32_t m = 0; m < ndim; ++m)
      if ((seen >> m & 1u) == 0)
        DLPM_REFUSE(err, errc::invalid_argument, "layout requirement: stride_order must contain every mode, and %d is missing",
                    m);
  }
  const std::span<const std::int64_t> divisors[2] = {req.shape_divisors, req.stride_divisors};
  const char* const names[2] = {"shape_divisors", "stride_divisors"};
  for (int k = 0; k < 2; ++k) {
    if (divisors[k].empty()) continue;
    if (divisors[k].size() != rank)
      DLPM_REFUSE(err, errc::invalid_argument, "layout requirement: %s has %zu entries, the tensor has %d modes", names[k],
                  divisors[k].size(), ndim);
    for (std::size_t r = 0; r < rank; ++r)
      if (divisors[k][r] < 0)
        DLPM_REFUSE(err, errc::invalid_argument, "layout requirement: %s[%zu] = %lld is negative", names[k], r,
                    static_cast<long long>(divisors[k][r]));
  }
  return true;
}

// Checks a tensor that passed check_structure (numel is its element count) against `req`,
// wording the first rule broken: the requirements, then the leading dimension, the stride
// order, compactness, shape and stride divisibility. An empty tensor addresses nothing, so
// only its shapes are judged.
template <class Err>
inline bool layout_met(const DLTensor& t, std::int64_t numel, const layout_requirements& req, Err err) noexcept {
  if (!layout_requirements_valid(req, t.ndim, err)) return false;
  const bool empty = numel == 0;
  if (req.leading_dim != any_leading_dim && !empty) {
    const std::int32_t m = req.leading_dim < 0 ? t.ndim + req.leading_dim : req.leading_dim;
    if (t.shape[m] != 1 && stride_at(t, m) != 1)
      DLPM_REFUSE(err, errc::non_compact_strides, "strides[%d] = %lld, but mode %d is the required leading dimension (stride 1)",
                  m, static_cast<long long>(stride_at(t, m)), m);
  }
  if (!req.stride_order.empty() && !empty) {
    // Outermost to innermost, skipping size-1 modes: strides must not grow. (Index loops,
    // not range-for: clang 19 hashes a range-for differently when a TU both includes the
    // header and imports the module, and reports an ODR violation.)
    std::int32_t outer = -1;
    for (std::size_t i = 0; i < req.stride_order.size(); ++i) {
      const std::int32_t m = req.stride_order[i];
      if (t.shape[m] == 1) continue;
      if (outer >= 0 && stride_at(t, m) > stride_at(t, outer))
        DLPM_REFUSE(err, errc::non_compact_strides,
                    "the strides do not follow stride_order: mode %d (stride %lld) comes after mode %d (stride %lld)", m,
                    static_cast<long long>(stride_at(t, m)), outer, static_cast<long long>(stride_at(t, outer)));
      outer = m;
    }
    if (req.compact) {
      std::int64_t expected = 1;  // a product of extents, bounded by numel
      for (std::size_t i = req.stride_order.size(); i-- > 0;) {
        const std::int32_t m = req.stride_order[i];
        if (t.shape[m] == 1) continue;
        if (stride_at(t, m) != expected)
          DLPM_REFUSE(err, errc::non_compact_strides,
                      "the tensor is not compact in stride_order: mode %d has stride %lld, %lld expected", m,
                      static_cast<long long>(stride_at(t, m)), static_cast<long long>(expected));
        expected *= t.shape[m];
      }
    }
  }
  for (std::int32_t r = 0; r < t.ndim && !req.shape_divisors.empty(); ++r) {
    const std::int64_t d = req.shape_divisors[static_cast<std::size_t>(r)];
    if (d > 1 && t.shape[r] % d != 0)
      DLPM_REFUSE(err, errc::divisibility, "shape[%d] = %lld is not a multiple of %lld", r, static_cast<long long>(t.shape[r]),
                  static_cast<long long>(d));
  }
  for (std::int32_t r = 0; r < t.ndim && !req.stride_divisors.empty() && !empty; ++r) {
    const std::int64_t d = req.stride_divisors[static_cast<std::size_t>(r)];
    if (d > 1 && t.shape[r] != 1 && stride_at(t, r) % d != 0)
      DLPM_REFUSE(err, errc::divisibility, "strides[%d] = %lld is not a multiple of %lld", r,
                  static_cast<long long>(stride_at(t, r)), static_cast<long long>(d));
  }
  return true;
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Checks `t` against `req` after check_structure(t). The first rule broken is the error:
/// the structure, the requirements themselves (errc::invalid_argument), the leading
/// dimension, the stride order and compactness (errc::non_compact_strides), then shape
/// and stride divisibility (errc::divisibility).
inline bool check_layout(const DLTensor& t, const layout_requirements& req, error* err) noexcept {
  tensor_summary summary;
  if (!check_structure(t, structure_options{}, summary, err)) return false;
  return detail::layout_met(t, summary.numel, req, err);
}

/// CuTe's stride order of `t` (mark_compact_shape_dynamic's stride_order, PyTorch's
/// Tensor.dim_order()): the modes from the outermost (largest stride) to the innermost,
/// equal strides in mode order. As in CuTe, more than one mode of stride 1 has no answer
/// (errc::ambiguous_layout: PyTorch writes stride 1 for every size-1 mode, so the true
/// order is lost; require the order you need instead). `out` must have ndim entries;
/// returns the filled prefix. Shape (2,2,3,4) with strides (2,1,4,12) gives (3,2,0,1).
inline result<std::span<std::int32_t>> stride_order(const DLTensor& t, std::span<std::int32_t> out) noexcept {
  error err;
  tensor_summary summary;
  if (!check_structure(t, structure_options{}, summary, &err)) return unexpected_error(err);
  if (out.size() < static_cast<std::size_t>(t.ndim))
    return unexpected_error(
        error::format(errc::invalid_argument, "stride_order: output has %zu entries, ndim is %d", out.size(), t.ndim));
  std::int32_t unit = 0;
  for (std::int32_t r = 0; r < t.ndim; ++r) unit += stride_at(t, r) == 1;
  if (unit > 1)
    return unexpected_error(error::format(errc::ambiguous_layout,
                                          "stride order is ambiguous: %d modes have stride 1; require the order you need "
                                          "(layout_requirements::stride_order) instead",
                                          unit));
  // A stable insertion sort by descending stride: ndim <= 64.
  for (std::int32_t r = 0; r < t.ndim; ++r) {
    std::int32_t i = r;
    while (i > 0 && stride_at(t, out[static_cast<std::size_t>(i - 1)]) < stride_at(t, r)) {
      out[static_cast<std::size_t>(i)] = out[static_cast<std::size_t>(i - 1)];
      --i;
    }
    out[static_cast<std::size_t>(i)] = r;
  }
  return out.first(static_cast<std::size_t>(t.ndim));
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
