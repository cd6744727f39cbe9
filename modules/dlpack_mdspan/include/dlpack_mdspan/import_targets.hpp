// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The mdspan types to_mdspan can build, grouped by how their mapping is constructed, and
// what each requires of a tensor's strides (stride_rule_of).
#ifndef DLPACK_MDSPAN_IMPORT_TARGETS_HPP
#define DLPACK_MDSPAN_IMPORT_TARGETS_HPP

#include <dlpack_mdspan/compact_layouts.hpp>
#include <dlpack_mdspan/concepts.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/layout_stride_relaxed.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// The layout policies to_mdspan can build, by how their mapping is constructed:
///   relaxed: layout_stride_relaxed (any strides, offset);
///   compact: constructible from the extents alone (layout_right, layout_left, the padded
///            layouts), so the tensor's strides must equal the mapping's;
///   strided: constructible from extents + strides (layout_stride).
template <class M>
concept relaxed_layout_mdspan = pointer_mdspan<M> && std::is_same_v<typename M::layout_type, layout_stride_relaxed>;

template <class M>
concept compact_layout_mdspan = pointer_mdspan<M> && !relaxed_layout_mdspan<M> &&
                                std::is_constructible_v<typename M::mapping_type, const typename M::extents_type&> &&
                                strided_mdspan<M>;

template <class M>
concept strided_layout_mdspan =
    pointer_mdspan<M> && !relaxed_layout_mdspan<M> && !compact_layout_mdspan<M> &&
    requires(const typename M::mapping_type& m) { m.strides(); } &&
    std::is_constructible_v<typename M::mapping_type, const typename M::extents_type&,
                            std::remove_cvref_t<decltype(std::declval<const typename M::mapping_type&>().strides())>>;

/// A target type to_mdspan supports.
template <class M>
concept importable_mdspan = relaxed_layout_mdspan<M> || compact_layout_mdspan<M> || strided_layout_mdspan<M>;

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

template <class M, std::size_t... R>
constexpr typename M::extents_type make_extents(const DLTensor& t, std::index_sequence<R...>) noexcept {
  return typename M::extents_type(static_cast<typename M::index_type>(t.shape[R])...);
}

template <class M>
M make_view(typename M::data_handle_type handle, const typename M::mapping_type& mapping) {
  if constexpr (std::is_default_constructible_v<typename M::accessor_type>)
    return M(handle, mapping, typename M::accessor_type{});
  else
    static_assert(std::is_default_constructible_v<typename M::accessor_type>,
                  "to_mdspan: the target's accessor must be default-constructible");
}

// What M's layout requires of the strides: positive for std::layout_stride; row-major or
// column-major for plain layout_right/left (std:: or cuda::std::), read off the probe
// above; nothing checkable up front for padded layouts and layout_stride_relaxed.
template <class M>
constexpr stride_rule stride_rule_of() {
  if constexpr (strided_layout_mdspan<M>) {
    return stride_rule::positive;
  } else if constexpr (!compact_layout_mdspan<M> || M::rank() == 0) {
    return stride_rule::any;
  } else {
    constexpr compact_order order = compact_order_of<M>();
    return order == compact_order::row_major      ? stride_rule::row_major
           : order == compact_order::column_major ? stride_rule::column_major
                                                  : stride_rule::any;
  }
}

template <class T>
T* offset_pointer(void* data, std::int64_t bytes) noexcept {
  // Only called with non-NULL data: the checks above never do arithmetic on NULL.
  return reinterpret_cast<T*>(static_cast<unsigned char*>(data) + bytes);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
