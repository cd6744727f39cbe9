// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DLTensor → typed, validated mdspan view: to_mdspan<M> / try_to_mdspan<M>, the entry
// points. The options are in import_options.hpp, the target types and the strides their
// views get in import_targets.hpp, the one-pass path in import_fast.hpp and the ordered
// checks in import_ordered.hpp.
#ifndef DLPACK_MDSPAN_IMPORT_HPP
#define DLPACK_MDSPAN_IMPORT_HPP

#include <dlpack_mdspan/concepts.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/import_fast.hpp>
#include <dlpack_mdspan/import_options.hpp>
#include <dlpack_mdspan/import_ordered.hpp>
#include <dlpack_mdspan/import_targets.hpp>

#include <cstdint>
#include <type_traits>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// to_mdspan's entry: the one-pass fast path where it applies, else (and for whatever it
// declines) the ordered checks, out of line so that the fast path keeps its registers.
template <class M, class Options>
DLPM_HOT_INLINE inline result<M> import_view(const DLTensor& t, const Options& opts) noexcept {
  if constexpr (std::is_same_v<Options, default_import_options> && has_fast_import<M>()) {
    fast_view<M> fast;
    if (fast_import<M>(t, fast)) [[likely]] return fast_result<M>(t, fast);
  }
  return import_view_ordered<M>(t, opts);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// try_view's refusal of a mutable element type over a READ_ONLY tensor, worded off the hot path.
DLPM_COLD inline error read_only_view_refusal() noexcept {
  return error::format(errc::read_only, "view: the tensor is READ_ONLY; view it with a const element type");
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
  static_assert(importable_mdspan<M>,
                "to_mdspan: unsupported layout. Supported: layouts whose mapping is constructible from the extents "
                "(layout_right, layout_left, padded), layout_stride, and dlpack_mdspan::layout_stride_relaxed");
  return detail::import_view<M>(tensor, detail::default_import_options{});
}

/// The same, with requirements beyond the target type (see import_options).
template <pointer_mdspan M>
[[nodiscard]] result<M> try_to_mdspan(const DLTensor& tensor, const import_options& options) noexcept {
  static_assert(importable_mdspan<M>,
                "to_mdspan: unsupported layout. Supported: layouts whose mapping is constructible from the extents "
                "(layout_right, layout_left, padded), layout_stride, and dlpack_mdspan::layout_stride_relaxed");
  return detail::import_view<M>(tensor, options);
}

/// View a DLTensor as M. Throws dlpack_error (with an errc) when the tensor does not fit.
template <pointer_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE inline M to_mdspan(const DLTensor& tensor) {
  // The fast path's view goes straight to the caller: copied out of a result<M> it was
  // stored field by field and read back wider, which stalls store-to-load forwarding.
  if constexpr (detail::has_fast_import<M>()) {
    detail::fast_view<M> fast;
    if (detail::fast_import<M>(tensor, fast)) [[likely]] return detail::fast_result<M>(tensor, fast);
  }
  return detail::value_or_throw(detail::import_view_ordered<M>(tensor, detail::default_import_options{}));
}

/// The same, with import_options.
template <pointer_mdspan M>
[[nodiscard]] M to_mdspan(const DLTensor& tensor, const import_options& options) {
  return detail::value_or_throw(try_to_mdspan<M>(tensor, options));
}

/// A view of a tensor that carries DLPack flags (a managed tensor's, a Python producer's):
/// the import rules for M, plus a mutable element type over a READ_ONLY tensor is
/// errc::read_only, and padded sub-byte storage (IS_SUBBYTE_TYPE_PADDED) is honoured. The
/// one place these flag rules live: managed_tensor::try_view and the Python casters call it.
template <pointer_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE inline result<M> try_view(const DLTensor& tensor, std::uint64_t flags) noexcept {
  if (!std::is_const_v<typename M::element_type> && (flags & flag_read_only) != 0) [[unlikely]]
    return unexpected_error(detail::read_only_view_refusal());
  // The common case, packed storage, keeps the import's compile-time defaults.
  if ((flags & flag_is_subbyte_type_padded) == 0) [[likely]]
    return try_to_mdspan<M>(tensor);
  import_options opts;
  opts.subbyte_padded = true;
  return try_to_mdspan<M>(tensor, opts);
}

/// The same, with import_options (subbyte_padded comes from `flags`).
template <pointer_mdspan M>
[[nodiscard]] result<M> try_view(const DLTensor& tensor, std::uint64_t flags, const import_options& options) noexcept {
  if (!std::is_const_v<typename M::element_type> && (flags & flag_read_only) != 0)
    return unexpected_error(detail::read_only_view_refusal());
  import_options opts = options;
  opts.subbyte_padded = (flags & flag_is_subbyte_type_padded) != 0;
  return try_to_mdspan<M>(tensor, opts);
}

/// try_to_mdspan, then the view's accessor is rebuilt with the tensor's device ordinal, so
/// that exporting the view again reports the device it came from (plain to_mdspan
/// default-constructs the accessor, device_id 0). For device accessors constructible from
/// an ordinal: device_memory_accessor and the vendor headers' aliases of it.
template <pointer_mdspan M>
  requires std::is_constructible_v<typename M::accessor_type, std::int32_t>
[[nodiscard]] result<M> try_to_mdspan_on_device(const DLTensor& tensor, const import_options& options = {}) noexcept {
  result<M> view = try_to_mdspan<M>(tensor, options);
  if (!view) return view;
  return M(view->data_handle(), view->mapping(), typename M::accessor_type(tensor.device.device_id));
}

/// Throwing form of try_to_mdspan_on_device (dlpack_error).
template <pointer_mdspan M>
  requires std::is_constructible_v<typename M::accessor_type, std::int32_t>
[[nodiscard]] M to_mdspan_on_device(const DLTensor& tensor, const import_options& options = {}) {
  return detail::value_or_throw(try_to_mdspan_on_device<M>(tensor, options));
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
