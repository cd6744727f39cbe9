// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What "an mdspan" means to this library: structural (the shape of the type, not its
// namespace), so std::mdspan and CCCL's cuda::std::mdspan both qualify without adapters.
#ifndef DLPACK_MDSPAN_CONCEPTS_HPP
#define DLPACK_MDSPAN_CONCEPTS_HPP

#include <dlpack_mdspan/config.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Any type with the shape of std::mdspan: the nested types and the observers that the
/// standard specifies. Nothing here names a namespace.
template <class M>
concept mdspan_like = requires(const M& m) {
  typename M::extents_type;
  typename M::layout_type;
  typename M::accessor_type;
  typename M::mapping_type;
  typename M::element_type;
  typename M::index_type;
  typename M::data_handle_type;
  { M::rank() } -> std::convertible_to<std::size_t>;
  { m.mapping() };
  { m.accessor() };
  { m.data_handle() } -> std::convertible_to<typename M::data_handle_type>;
  { m.extents() };
};

/// An mdspan whose data handle is a raw pointer, which is all DLPack can describe.
template <class M>
concept pointer_mdspan = mdspan_like<M> && std::is_pointer_v<typename M::data_handle_type>;

/// An mdspan whose mapping can report strides (layout_right/left/stride, the relaxed and
/// padded layouts). Export needs strides; a mapping without `stride(r)` cannot be exported.
/// (Rank 0 mappings have no stride() in the standard layouts; they are trivially strided.)
template <class M>
concept strided_mdspan = pointer_mdspan<M> && requires(const typename M::mapping_type& m) {
  { m.is_strided() } -> std::convertible_to<bool>;
} && (M::rank() == 0 || requires(const typename M::mapping_type& m) {
  { m.stride(0) } -> std::convertible_to<typename M::index_type>;
});

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {
/// Where a mapping maps the index (0, ..., 0): the element offset of its first element (0
/// for the standard layouts, a relaxed mapping's offset). Precondition: not empty, unless
/// the mapping defines it for an empty one.
template <class Mapping, std::size_t... I>
DLPM_HOST_DEVICE constexpr typename Mapping::index_type index_zero_of(const Mapping& m, std::index_sequence<I...>) {
  return m(((void)I, typename Mapping::index_type{0})...);
}
}  // namespace detail

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
