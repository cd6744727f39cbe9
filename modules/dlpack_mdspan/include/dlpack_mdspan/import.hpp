// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DLTensor → typed, validated mdspan view: to_mdspan<M> / try_to_mdspan<M>, the entry
// points. The rules are in import_rules.hpp, the target types and the strides their views
// get in import_targets.hpp; the requirements a caller may add are tensor_requirements
// (requirements.hpp), the same the C facade and the Python component take.
#ifndef DLPACK_MDSPAN_IMPORT_HPP
#define DLPACK_MDSPAN_IMPORT_HPP

#include <dlpack_mdspan/concepts.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/import_rules.hpp>
#include <dlpack_mdspan/import_targets.hpp>
#include <dlpack_mdspan/requirements.hpp>

#include <cstdint>
#include <type_traits>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// The import without requirements: the silent rules inline, the worded ones out of line
// (only a refusal gets there), so that the success path keeps its registers.
template <class M>
DLPM_HOT_INLINE inline result<M> import_view(const DLTensor& t, std::uint64_t flags) noexcept {
  import_plan<M> plan;
  if (import_rules<M, false>(t, flags, no_requirements, plan, silent{})) [[likely]] return build_view<M>(t, plan);
  return import_view_refused<M>(t, flags);
}

// try_view's refusal of a mutable element type over a READ_ONLY tensor, worded off the hot path.
DLPM_COLD inline error read_only_view_refusal() noexcept {
  return error::format(errc::read_only, "view: the tensor is READ_ONLY; view it with a const element type");
}

// try_view's flag rules, the one text of them: `read_only_refusal()` words the READ_ONLY
// refusal, called only then (managed_tensor::try_view names the flag's cause there).
template <class M, class ReadOnlyRefusal>
[[nodiscard]] DLPM_HOT_INLINE inline result<M> try_view_with(const DLTensor& tensor, std::uint64_t flags,
                                                             ReadOnlyRefusal read_only_refusal) noexcept {
  if (!std::is_const_v<typename M::element_type> && (flags & flag_read_only) != 0) [[unlikely]]
    return unexpected_error(read_only_refusal());
  return import_view<M>(tensor, flags);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// View a DLTensor as M, or say precisely why not. Never allocates, O(rank) (O(rank²) for
/// the layout_stride overlap check).
template <pointer_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE inline result<M> try_to_mdspan(const DLTensor& tensor) noexcept {
  DLPM_IMPORTABLE_ASSERT(M);
  return detail::import_view<M>(tensor, 0);
}

/// The same, with requirements beyond the target type: M's own (rank, dtype, device type,
/// alignof) and the caller's tensor_requirements must all hold.
template <pointer_mdspan M>
[[nodiscard]] result<M> try_to_mdspan(const DLTensor& tensor, const tensor_requirements& requirements) noexcept {
  DLPM_IMPORTABLE_ASSERT(M);
  return detail::import_view_worded<M, true>(tensor, 0, requirements);
}

/// View a DLTensor as M. Throws dlpack_error (with an errc) when the tensor does not fit.
template <pointer_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE inline M to_mdspan(const DLTensor& tensor) {
  // profile: entry
  DLPM_IMPORTABLE_ASSERT(M);
  // The view goes straight to the caller: copied out of a result<M> it was stored field
  // by field and read back wider, which stalls store-to-load forwarding.
  detail::import_plan<M> plan;
  if (detail::import_rules<M, false>(tensor, 0, detail::no_requirements, plan, detail::silent{})) [[likely]]
    return detail::build_view<M>(tensor, plan);
  return detail::import_view_or_throw<M>(tensor);
}

/// The same, with tensor_requirements.
template <pointer_mdspan M>
[[nodiscard]] M to_mdspan(const DLTensor& tensor, const tensor_requirements& requirements) {
  return detail::value_or_throw(try_to_mdspan<M>(tensor, requirements));
}

/// A view of a tensor that carries DLPack flags (a managed tensor's, a Python producer's):
/// the import rules for M, plus a mutable element type over a READ_ONLY tensor is
/// errc::read_only, and padded sub-byte storage (IS_SUBBYTE_TYPE_PADDED) is honoured. The
/// one place these flag rules live: managed_tensor::try_view and the Python casters call it.
template <pointer_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE inline result<M> try_view(const DLTensor& tensor, std::uint64_t flags) noexcept {
  DLPM_IMPORTABLE_ASSERT(M);
  return detail::try_view_with<M>(tensor, flags, [] { return detail::read_only_view_refusal(); });
}

/// The same, with tensor_requirements (their `writable` is judged against `flags` too).
template <pointer_mdspan M>
[[nodiscard]] result<M> try_view(const DLTensor& tensor, std::uint64_t flags, const tensor_requirements& requirements) noexcept {
  DLPM_IMPORTABLE_ASSERT(M);
  if (!std::is_const_v<typename M::element_type> && (flags & flag_read_only) != 0)
    return unexpected_error(detail::read_only_view_refusal());
  return detail::import_view_worded<M, true>(tensor, flags, requirements);
}

/// try_view (`flags`: the tensor's DLPack flags), then the view's accessor is rebuilt with
/// the tensor's device ordinal, so that exporting the view again reports the device it came
/// from (plain to_mdspan default-constructs the accessor, device_id 0). For device accessors
/// constructible from an ordinal: device_memory_accessor and the vendor headers' aliases of it.
template <pointer_mdspan M>
  requires std::is_constructible_v<typename M::accessor_type, std::int32_t>
[[nodiscard]] result<M> try_to_mdspan_on_device(const DLTensor& tensor, const tensor_requirements& requirements = {},
                                                std::uint64_t flags = 0) noexcept {
  result<M> view = try_view<M>(tensor, flags, requirements);
  if (!view) return view;
  return M(view->data_handle(), view->mapping(), typename M::accessor_type(tensor.device.device_id));
}

/// Throwing form of try_to_mdspan_on_device (dlpack_error).
template <pointer_mdspan M>
  requires std::is_constructible_v<typename M::accessor_type, std::int32_t>
[[nodiscard]] M to_mdspan_on_device(const DLTensor& tensor, const tensor_requirements& requirements = {},
                                    std::uint64_t flags = 0) {
  return detail::value_or_throw(try_to_mdspan_on_device<M>(tensor, requirements, flags));
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
