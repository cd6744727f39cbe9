// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a typed import requires beyond its target type (import_options), its compile-time
// defaults, and the check that the options themselves make sense.
#ifndef DLPACK_MDSPAN_IMPORT_OPTIONS_HPP
#define DLPACK_MDSPAN_IMPORT_OPTIONS_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/layout_requirements.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Requirements beyond the target type, all checked by to_mdspan.
struct import_options {
  /// What NULL strides (ndim > 0) mean: row-major by default, or an error.
  null_strides_policy null_strides = null_strides_policy::row_major;
  /// Required alignment of data + byte_offset in bytes (a power of two; 0 = none beyond
  /// alignof(element_type)). Like CuTe's assumed_align, but checked.
  std::size_t min_alignment = 0;
  /// The device ordinal the view must be on; -1 accepts any.
  std::int32_t device_id = -1;
  /// Sub-byte elements stored one per byte (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED).
  /// managed_tensor::view sets this from the tensor's flags.
  bool subbyte_padded = false;
  /// CuTe's layout vocabulary: leading dimension, stride order, compactness in it, shape
  /// divisors (extent(r) % shape_divisors[r] == 0) and stride divisors
  /// (layout_requirements.hpp). Empty = no requirement.
  layout_requirements layout = {};
};

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// import_options' defaults as compile-time constants: to_mdspan<M>(t) without options folds
// every option test away (no extra alignment, any device id, row-major NULL strides,
// packed sub-byte storage, no layout requirement).
struct default_import_options {
  static constexpr null_strides_policy null_strides = null_strides_policy::row_major;
  static constexpr std::size_t min_alignment = 0;
  static constexpr std::int32_t device_id = -1;
  static constexpr bool subbyte_padded = false;
  static constexpr layout_requirements layout = {};
};

// The options are the caller's, not the producer's: nonsense in them is an error for every
// tensor, empty or not.
// (The layout requirements are checked with the layout: layout_met.)
template <class Options>
DLPM_HOT_INLINE inline bool check_import_options(const Options& opts, error* err) noexcept {
  if (opts.min_alignment != 0 && !std::has_single_bit(opts.min_alignment))
    DLPM_REFUSE(err, errc::invalid_argument, "import_options::min_alignment = %zu is not a power of two", opts.min_alignment);
  if (opts.device_id < -1)
    DLPM_REFUSE(err, errc::invalid_argument, "import_options::device_id = %d is neither -1 (any) nor a device ordinal",
                static_cast<int>(opts.device_id));
  return true;
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
