// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The import's rules in their documented order (docs/import.md), each refusal worded:
// import_view_ordered, for imports with options and for whatever the fast path declines.
#ifndef DLPACK_MDSPAN_IMPORT_ORDERED_HPP
#define DLPACK_MDSPAN_IMPORT_ORDERED_HPP

#include <dlpack_mdspan/checked_arithmetic.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/import_options.hpp>
#include <dlpack_mdspan/import_targets.hpp>
#include <dlpack_mdspan/layout_requirements.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// The typed checks before the layout: rank, device, dtype, element size, then the
// structure with the rank and element size known. The cheap equality tests come first
// (a dtype equal to dtype_v<T> is valid); the generic checks only word the failure.
template <class M, class Options>
DLPM_NOINLINE result<M> import_view_ordered(const DLTensor& t, const Options& opts) noexcept {
  using element_type = typename M::element_type;
  using index_type = typename M::index_type;
  using extents_type = typename M::extents_type;
  using mapping_type = typename M::mapping_type;
  using accessor_type = typename M::accessor_type;
  constexpr std::size_t rank = M::rank();
  constexpr DLDataType dtype = dtype_v<element_type>;

  error err;

  // 0. the options themselves, whatever the tensor (an empty one too)
  if (!check_import_options(opts, &err)) return unexpected_error(err);

  // 1-4. ndim, device, dtype
  if (t.ndim != static_cast<std::int32_t>(rank)) {
    (void)check_rank(t, rank, &err);
    return unexpected_error(err);
  }
  auto accepts = [](std::int32_t type) { return device_traits<accessor_type>::accepts(type); };
  if (!check_device(t.device, accepts, device_type_name(device_traits<accessor_type>::device_type), opts.device_id, &err))
    return unexpected_error(err);
  if (!same_dtype(t.dtype, dtype)) {
    (void)check_dtype_equals(t.dtype, dtype, &err);
    return unexpected_error(err);
  }
  // One whole element per sizeof(T): packed sub-byte data has no per-element address.
  if (storage_itemsize(dtype, opts.subbyte_padded) != sizeof(element_type))
    return unexpected_error(error::format(errc::subbyte_not_viewable,
                                          "dtype %#x %s, which cannot be viewed as one %zu-byte element each",
                                          detail::packed_dtype(t.dtype),
                                          opts.subbyte_padded ? "is stored one byte per lane (padded)" : "is packed",
                                          sizeof(element_type)));

  // 5-8. shape, strides, element count, span, byte_offset, NULL data
  tensor_summary summary;
  constexpr stride_rule rule = stride_rule_of<M>();
  if (!check_structure<static_cast<int>(rank), sizeof(element_type), rule>(
          t, structure_options{opts.null_strides, opts.subbyte_padded}, summary, &err))
    return unexpected_error(err);
  for (std::size_t r = 0; r < rank; ++r) {
    const std::int64_t e = t.shape[r];
    if (!std::in_range<index_type>(e))
      return unexpected_error(error::format(errc::extent_overflow, "shape[%zu] = %lld does not fit the view's index_type", r,
                                            static_cast<long long>(e)));
    if (extents_type::static_extent(r) != std::numeric_limits<std::size_t>::max() /* dynamic_extent */ && static_cast<std::int64_t>(extents_type::static_extent(r)) != e)
      return unexpected_error(error::format(errc::shape_mismatch, "shape[%zu] = %lld but the view's static extent is %zu",
                                            r, static_cast<long long>(e), static_cast<std::size_t>(extents_type::static_extent(r))));
  }
  if (!std::in_range<index_type>(summary.numel))
    return unexpected_error(error::format(errc::extent_overflow, "%lld elements do not fit the view's index_type",
                                          static_cast<long long>(summary.numel)));
  if (!opts.layout.empty() && !layout_met(t, summary.numel, opts.layout, &err)) return unexpected_error(err);

  const extents_type extents = make_extents<M>(t, std::make_index_sequence<rank>{});
  const bool empty = summary.numel == 0;
  const auto byte_offset = static_cast<std::int64_t>(t.byte_offset);
  using handle_type = typename M::data_handle_type;
  handle_type handle = nullptr;

  // 9. alignment of the first element, on devices whose pointers are addresses
  if (!check_data_alignment(t, empty, opts.min_alignment > alignof(element_type) ? opts.min_alignment : alignof(element_type),
                            &err))
    return unexpected_error(err);

  // 10. the layout
  if constexpr (relaxed_layout_mdspan<M>) {
    index_type strides[rank == 0 ? 1 : rank] = {};
    index_type offset = 0;
    for (std::size_t r = 0; r < rank; ++r) {
      const std::int64_t s = stride_at(t, static_cast<std::int32_t>(r));
      if (!std::in_range<index_type>(s)) {
        // Never used to address anything: every index of an empty tensor, and index 0 of
        // an extent-1 dimension, maps without it. The stride stays 0.
        if (empty || t.shape[r] == 1) continue;
        return unexpected_error(error::format(errc::stride_overflow, "strides[%zu] = %lld does not fit the view's index_type%s", r,
                                              static_cast<long long>(s),
                                              s < 0 ? " (negative strides need a signed index_type)" : ""));
      }
      strides[r] = static_cast<index_type>(s);
    }
    if (!empty) {
      const std::int64_t offset_items = byte_offset / static_cast<std::int64_t>(summary.itemsize);
      // Keep the producer's base pointer when the whole view lies at or above it (an exact
      // round trip of our own exports); otherwise rebase on the lowest element, because a
      // mapping may not produce negative indices.
      const std::int64_t shift = offset_items + summary.lowest_index < 0 ? offset_items + summary.lowest_index : 0;
      // mapped_offset is -lowest_index when rebased: 2^63 for INT64_MIN, hence the checks.
      std::int64_t mapped_offset = 0, span = 0;
      if (sub_overflows(offset_items, shift, &mapped_offset) || add_overflows(mapped_offset, summary.highest_index, &span) ||
          add_overflows(span, 1, &span) || !std::in_range<index_type>(span))
        return unexpected_error(error::format(errc::span_overflow, "the required span does not fit the view's index_type"));
      offset = static_cast<index_type>(mapped_offset);
      handle = offset_pointer<element_type>(t.data, shift * static_cast<std::int64_t>(summary.itemsize));
    } else if (t.data != nullptr) {
      handle = offset_pointer<element_type>(t.data, byte_offset);
    }
    return make_view<M>(handle, mapping_type(extents, strides, offset));
  } else {
    if (t.data != nullptr) handle = offset_pointer<element_type>(t.data, byte_offset);
    if constexpr (compact_layout_mdspan<M>) {
      if constexpr (rank > 1) {
        if (empty && !compact_strides_fit<M>(t, &err)) return unexpected_error(err);
      }
      const mapping_type mapping(extents);
      if constexpr (rank > 0 && rule == stride_rule::any) {  // padded layouts (plain ones: check_structure)
        if (!empty) {
          for (std::size_t r = 0; r < rank; ++r) {
            if (t.shape[r] == 1) continue;  // any stride is fine where only index 0 exists
            const std::int64_t s = stride_at(t, static_cast<std::int32_t>(r));
            const auto need = static_cast<std::int64_t>(mapping.stride(r));
            if (s != need)
              return unexpected_error(error::format(errc::non_compact_strides,
                                                    "strides[%zu] = %lld but the target layout needs %lld there (shape[%zu] = %lld); "
                                                    "import through layout_stride or layout_stride_relaxed instead",
                                                    r, static_cast<long long>(s), static_cast<long long>(need), r,
                                                    static_cast<long long>(t.shape[r])));
          }
        }
      }
      return make_view<M>(handle, mapping);
    } else if constexpr (strided_layout_mdspan<M>) {
      using stride_array = std::remove_cvref_t<decltype(std::declval<const mapping_type&>().strides())>;
      stride_array strides{};
      if (empty) {
        // No element is addressed, but the mapping's preconditions still hold for the
        // strides the library chooses (the producer's may be anything).
        if (!empty_tensor_strides<index_type>(t, strides, &err)) return unexpected_error(err);
        return make_view<M>(handle, mapping_type(extents, strides));
      }
      // One pass from the innermost dimension out: copy the strides (an extent-1 dimension
      // has no stride that matters; 1 keeps std::layout_stride's preconditions: positive,
      // and first in the uniqueness permutation), and check uniqueness in the order most
      // producers use, each stride stepping past the span of the dimension inside it.
      // Implicit strides are row-major, so unique; any other order gets the full check.
      const std::int64_t* const given = t.strides;
      const std::int64_t* const shape = t.shape;
      bool unique = true;
      std::int64_t inner_reach = 0, implicit = 1;
      for (std::size_t i = rank; i-- > 0;) {
        const std::int64_t e = shape[i];
        // Positive: check_structure saw to it. Implicit ones are row-major products.
        const std::int64_t s = given != nullptr ? given[i] : implicit;
        implicit = saturating_mul(implicit, e);
        if (e == 1) {
          strides[i] = 1;
          continue;
        }
        if (!std::in_range<index_type>(s))
          return unexpected_error(error::format(errc::stride_overflow, "strides[%zu] = %lld does not fit the view's index_type", i,
                                                static_cast<long long>(s)));
        strides[i] = static_cast<index_type>(s);
        std::int64_t reach = 0;
        unique &= (s >= inner_reach) & !mul_overflows(s, e, &reach);
        inner_reach = reach;
      }
      if (!unique && !layout_stride_unique(t, strides, &err)) return unexpected_error(err);
      if (!std::in_range<index_type>(summary.highest_index + 1))
        return unexpected_error(error::format(errc::span_overflow, "the required span does not fit the view's index_type"));
      return make_view<M>(handle, mapping_type(extents, strides));
    } else {
      static_assert(importable_mdspan<M>,
                    "to_mdspan: unsupported layout. Supported: layouts whose mapping is constructible from the extents "
                    "(layout_right, layout_left, padded), layout_stride, and dlpack_mdspan::layout_stride_relaxed");
    }
  }
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
