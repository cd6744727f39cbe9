// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The typed import's rules, written once in their documented order (docs/import.md):
// import_rules, instantiated silent (to_mdspan's inline success path, every message
// compiled away) and worded (the refusal, out of line); build_view makes the view they
// accepted.
#ifndef DLPACK_MDSPAN_IMPORT_RULES_HPP
#define DLPACK_MDSPAN_IMPORT_RULES_HPP

#include <dlpack_mdspan/checked_arithmetic.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/import_targets.hpp>
#include <dlpack_mdspan/layout_requirements.hpp>
#include <dlpack_mdspan/requirements.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// What the rules learn beyond the tensor's own fields. The extents and strides are not
// kept: build_view reads them from the tensor, because an array stored here and copied
// into the mapping with wider loads stalls store-to-load forwarding (docs/performance-history.md).
template <class M>
struct import_plan {
  // profile: view
  typename M::data_handle_type handle = nullptr;
  typename M::index_type offset = 0;  // layout_stride_relaxed's
  bool empty = false;                 // std::layout_stride's: no element, strides of the library's choosing
  bool own_strides = false;           // std::layout_stride's: the tensor's strides are the view's (import_summary)
};

// The requirements of an import given none: every field "anything". import_rules<M, false>
// never reads them, so to_mdspan<M>(t) folds every requirement test away.
inline constexpr tensor_requirements no_requirements{};

// Every rule a tensor must meet to be viewed as M, beyond the flags' READ_ONLY rule
// (try_view): the requirements themselves (Given), rank, device, dtype, element size, the
// structure (check_structure), the extents in the index_type and M's static extents, the
// required shape, order and layout (Given), the first element's alignment, then M's
// layout: compact strides, layout_stride's positive unique strides, the span in the
// index_type. Err is an error* (the first rule broken is worded there) or silent.
template <class M, bool Given, class Err>
DLPM_HOT_INLINE inline bool import_rules(const DLTensor& t, std::uint64_t flags, const tensor_requirements& req,
                                         import_plan<M>& out, Err err) noexcept {
  // profile: dispatch
  using element_type = typename M::element_type;
  using index_type = typename M::index_type;
  using extents_type = typename M::extents_type;
  using accessor_type = typename M::accessor_type;
  constexpr std::size_t rank = M::rank();
  constexpr DLDataType dtype = dtype_v<element_type>;
  constexpr stride_rule rule = stride_rule_of<M>();
  // Host memory and the GPU runtimes' pointers are plain addresses: once the device type is
  // accepted, the exceptions for handles (OpenCL, Vulkan, ...) compile away.
  constexpr bool direct = accepts_only_direct_addresses<accessor_type>();

  if constexpr (Given) {  // the caller's own, nonsense in them an error for every tensor
    static_assert(is_worded<Err>, "requirements given at run time are checked worded");
    if (!check_requirements_valid(req, err)) return false;
  }
  // The cheap equality tests decide; the generic checks only word a failure.
  // profile: rank
  if (t.ndim != static_cast<std::int32_t>(rank)) {
    (void)check_rank(t, rank, err);
    return false;
  }
  // profile: device-type
  auto accepts = [](std::int32_t type) { return device_traits<accessor_type>::accepts(type); };
  if (!check_device(t.device, accepts, device_type_name(device_traits<accessor_type>::device_type), -1, err)) return false;
  // profile: dtype
  if (!same_dtype(t.dtype, dtype)) {
    (void)check_dtype_equals(t.dtype, dtype, err);
    return false;
  }
  if constexpr (Given) {
    if (!required_rank(t, req, err) || !check_required_device(t.device, req, err) || !required_dtype(t, req, err))
      return false;
  }
  // One whole element per sizeof(T): packed sub-byte data has no per-element address.
  const bool padded = (flags & flag_is_subbyte_type_padded) != 0;
  if (!check_element_bytes(dtype, padded, sizeof(element_type), err)) return false;

  // profile: dispatch
  import_summary summary;
  const null_strides_policy null_strides = Given ? req.null_strides : null_strides_policy::row_major;
  if (!check_structure<static_cast<int>(rank), sizeof(element_type), rule, direct>(t, structure_options{null_strides, padded},
                                                                                   summary, err))
    return false;
  // From here on the layout stage reads the checked tensor: what the structure's pass learned.
  const checked_tensor checked = checked_tensor_access::make(t, flags, summary);
  // profile: index-range
  for (std::size_t r = 0; r < rank; ++r) {
    const std::int64_t e = t.shape[r];
    if (!std::in_range<index_type>(e))
      DLPM_REFUSE(err, errc::extent_overflow, "shape[%zu] = %lld does not fit the view's index_type", r, static_cast<long long>(e));
    constexpr auto dynamic = std::numeric_limits<std::size_t>::max();  // dynamic_extent
    if (extents_type::static_extent(r) != dynamic && static_cast<std::int64_t>(extents_type::static_extent(r)) != e)
      DLPM_REFUSE(err, errc::shape_mismatch, "shape[%zu] = %lld but the view's static extent is %zu", r,
                  static_cast<long long>(e), static_cast<std::size_t>(extents_type::static_extent(r)));
  }
  // Not counted (the silent check of a strided tensor into std::layout_stride, see
  // check_structure): its count is at most highest_index + 1, whose range is asked below.
  if (checked.numel() != not_counted && !std::in_range<index_type>(checked.numel()))
    DLPM_REFUSE(err, errc::extent_overflow, "%lld elements do not fit the view's index_type",
                static_cast<long long>(checked.numel()));
  // profile: dispatch
  const bool empty = checked.numel() == 0;
  std::uint64_t align = alignof(element_type);
  if constexpr (Given) {
    if (!required_shape(t, req, err) || !required_order(t, checked.summary(), req, err) ||
        (!req.layout.empty() && !layout_met(t, checked.numel(), req.layout, err)))
      return false;
    if (req.min_alignment > align) align = req.min_alignment;
  }
  // profile: data-alignment
  if (!check_data_alignment(t, empty, align, err, direct)) return false;
  if constexpr (Given) {
    if (!required_writable(flags, req, err)) return false;
  }

  // M's layout.
  // profile: view
  const auto byte_offset = static_cast<std::int64_t>(t.byte_offset);
  // data is not NULL when the tensor has elements (check_structure); an empty one may have NULL.
  // Into layout_stride_relaxed only an empty tensor takes it (a tensor with elements has
  // data, and its offset carries byte_offset): formed there, clang no longer computes a
  // handle that it then overwrites (rank-2 relaxed imports 2 to 3 instructions fewer;
  // docs/performance-history.md, "The relaxed import's mapping and moves").
  auto first_element = [&] {
    return !empty || t.data != nullptr ? offset_pointer<element_type>(t.data, byte_offset) : nullptr;
  };
  if constexpr (!relaxed_layout_mdspan<M>) out.handle = first_element();
  if constexpr (relaxed_layout_mdspan<M>) {
    for (std::size_t r = 0; r < rank; ++r) {
      // profile: index-range
      const std::int64_t s = stride_at(t, static_cast<std::int32_t>(r));
      // A stride that no index uses (an empty tensor's, an extent-1 dimension's) becomes 0.
      if (!std::in_range<index_type>(s) && !empty && t.shape[r] != 1)
        DLPM_REFUSE(err, errc::stride_overflow, "strides[%zu] = %lld does not fit the view's index_type%s", r,
                    static_cast<long long>(s), s < 0 ? " (negative strides need a signed index_type)" : "");
    }
    // profile: dispatch
    if (empty) {  // the handle as for the other layouts, offset 0
      out.handle = first_element();
      return true;
    }
    // profile: view
    out.handle = static_cast<element_type*>(t.data);  // the offset carries byte_offset
    // check_structure verified the byte span [(offset_items + lowest) * item,
    // (offset_items + highest + 1) * item): those sums fit int64.
    // Divided unsigned (a shift for a power-of-two size): byte_offset is at most INT64_MAX
    // (check_structure), which a signed division does not know (it adds a rounding fix-up).
    const auto offset_items = static_cast<std::int64_t>(t.byte_offset / sizeof(element_type));
    // profile: rebase
    const std::int64_t first = offset_items + checked.lowest_index();
    std::int64_t mapped_offset = offset_items, span = offset_items + checked.highest_index() + 1;
    if (first < 0) {
      // The view reaches below the producer's base pointer: rebase on the lowest element,
      // because a mapping yields no negative index. (Otherwise the base pointer stays: an
      // exact round trip of our own exports.) mapped_offset is then -lowest_index: 2^63
      // for INT64_MIN, hence the checks.
      if (sub_overflows(offset_items, first, &mapped_offset) || add_overflows(mapped_offset, checked.highest_index(), &span) ||
          add_overflows(span, 1, &span))
        DLPM_REFUSE(err, errc::span_overflow, "the required span does not fit the view's index_type");
      out.handle = offset_pointer<element_type>(t.data, first * static_cast<std::int64_t>(sizeof(element_type)));
    }
    // profile: index-range
    if (!std::in_range<index_type>(span))
      DLPM_REFUSE(err, errc::span_overflow, "the required span does not fit the view's index_type");
    // profile: view
    out.offset = static_cast<index_type>(mapped_offset);
  } else if constexpr (compact_layout_mdspan<M>) {
    if constexpr (rank > 1) {
      if (empty) return compact_strides_fit<M>(t, err);
    }
    if constexpr (rank > 0 && rule == stride_rule::any) {  // padded layouts (plain ones: check_structure)
      if (empty) return true;
      const typename M::mapping_type mapping(make_extents<M>(t, std::make_index_sequence<rank>{}));
      for (std::size_t r = 0; r < rank; ++r) {
        if (t.shape[r] == 1) continue;  // any stride is fine where only index 0 exists
        const std::int64_t s = stride_at(t, static_cast<std::int32_t>(r));
        const auto need = static_cast<std::int64_t>(mapping.stride(r));
        if (s != need)
          DLPM_REFUSE(err, errc::non_compact_strides,
                      "strides[%zu] = %lld but the target layout needs %lld there (shape[%zu] = %lld); import through "
                      "layout_stride or layout_stride_relaxed instead",
                      r, static_cast<long long>(s), static_cast<long long>(need), r, static_cast<long long>(t.shape[r]));
      }
    }
  } else if constexpr (strided_layout_mdspan<M>) {
    // profile: dispatch
    if (empty) {
      // No element is addressed, but the mapping's preconditions still hold for the
      // strides the library chooses (the producer's may be anything).
      typename view_strides<M>::type strides{};
      out.empty = true;
      return empty_tensor_strides<index_type>(t, strides, err);
    }
    // The strides are positive (check_structure). Each must fit the index_type (for one
    // narrower than int64; C-contiguous strides are at most numel, which fits). Unique in
    // the order of the dimensions or in its reverse (check_structure saw it, as it saw
    // C-contiguous strides): nothing more to do; any other order gets the full check.
    // profile: index-range
    if constexpr (std::numeric_limits<index_type>::max() < std::numeric_limits<std::int64_t>::max()) {
      for (std::size_t i = rank; i-- > 0 && !checked.row_major();) {
        const std::int64_t s = stride_at(t, static_cast<std::int32_t>(i));
        if (t.shape[i] != 1 && !std::in_range<index_type>(s))
          DLPM_REFUSE(err, errc::stride_overflow, "strides[%zu] = %lld does not fit the view's index_type", i,
                      static_cast<long long>(s));
      }
    }
    // profile: uniqueness
    if (!checked.ordered_unique() && !layout_stride_unique<rank>(t, err)) return false;
    // profile: view
    out.own_strides = summary.every_stride_checked;
    // profile: index-range
    if (!std::in_range<index_type>(checked.highest_index() + 1))
      DLPM_REFUSE(err, errc::span_overflow, "the required span does not fit the view's index_type");
  } else {
    DLPM_IMPORTABLE_ASSERT(M);
  }
  return true;
}

// The view import_rules accepted, built where it is returned.
template <class M>
DLPM_HOT_INLINE inline M build_view(const DLTensor& t, const import_plan<M>& plan) noexcept {
  // profile: view
  using mapping_type = typename M::mapping_type;
  const typename M::extents_type extents = make_extents<M>(t, std::make_index_sequence<M::rank()>{});
  if constexpr (relaxed_layout_mdspan<M>) return make_view<M>(plan.handle, mapping_type(extents, view_strides<M>::of(t), plan.offset));
  else if constexpr (strided_layout_mdspan<M>) {
    if (plan.empty) [[unlikely]] {
      typename view_strides<M>::type strides{};
      (void)empty_tensor_strides<typename M::index_type>(t, strides, silent{});  // import_rules found them
      return make_view<M>(plan.handle, mapping_type(extents, strides));
    }
    if (plan.own_strides) return make_view<M>(plan.handle, mapping_type(extents, view_strides<M>::own(t)));
    return make_view<M>(plan.handle, mapping_type(extents, view_strides<M>::of(t)));
  }
  else return make_view<M>(plan.handle, mapping_type(extents));
}

// The worded rules, out of line: a refusal, or a view the silent rules could not be
// trusted with (requirements given at run time, flags).
template <class M, bool Given>
DLPM_NOINLINE result<M> import_view_worded(const DLTensor& t, std::uint64_t flags, const tensor_requirements& req) noexcept {
  error err;
  import_plan<M> plan;
  if (!import_rules<M, Given>(t, flags, req, plan, &err)) return unexpected_error(err);
  return build_view<M>(t, plan);
}

// The refusal of an import without requirements (import_view's, to_mdspan's): the worded
// rules, called with the tensor alone. The inline success path then keeps nothing live for
// it, neither no_requirements' address nor a result<M> on the stack for to_mdspan to throw
// from: compiled into a caller's loop, those took registers that the span pass needed
// (docs/performance-history.md).
template <class M>
DLPM_NOINLINE result<M> import_view_refused(const DLTensor& t, std::uint64_t flags) noexcept {
  return import_view_worded<M, false>(t, flags, no_requirements);
}
template <class M>
DLPM_NOINLINE M import_view_or_throw(const DLTensor& t) {
  return value_or_throw(import_view_worded<M, false>(t, 0, no_requirements));
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
