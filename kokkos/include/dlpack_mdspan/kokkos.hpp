// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kokkos::View and DLPack: a View handed out as a DLPack tensor without a copy (to NumPy,
// PyTorch, any consumer), and a DLPack tensor viewed as an unmanaged Kokkos::View.
//
// A thin view of the core: a Kokkos View (Kokkos 5, whose View is built on mdspan) is, to
// this library, an mdspan over its data, its extents and its strides, with the accessor its
// memory space stands for (memory_space_traits, the one table of spaces and devices). The
// export is the core's (try_to_dlpack_tensor, try_to_managed_tensor: READ_ONLY for a const
// View); the import is the core's typed import into the mdspan that the View's layout names
// (LayoutRight: layout_right, LayoutLeft: layout_left, LayoutStride: layout_stride), with its
// checks, flags and requirements (try_view); the View is then built over that mdspan's
// pointer and strides. No rule is restated here.
//
// Not part of the umbrella header nor of the named module, because it needs Kokkos:
// include it explicitly and link dlpack_mdspan::kokkos (which brings Kokkos::kokkos). A TU
// may include it and `import dlpack_mdspan;` as well. Its names live in the core's ABI
// namespace (config.hpp), as the other optional parts' do.
#ifndef DLPACK_MDSPAN_KOKKOS_HPP
#define DLPACK_MDSPAN_KOKKOS_HPP

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#if defined(KOKKOS_ENABLE_IMPL_VIEW_LEGACY) || !defined(KOKKOS_ENABLE_IMPL_MDSPAN)
#error "dlpack_mdspan/kokkos.hpp needs a Kokkos whose View is built on mdspan (Kokkos 5; not Kokkos_ENABLE_IMPL_VIEW_LEGACY)"
#endif

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace kokkos {

/// The one table of Kokkos memory spaces and DLPack devices: for each space this header
/// knows, the device type its memory is (`device_type`), the accessor of the mdspan that
/// views it (`accessor<T>`: the core's default for host memory, device_memory_accessor for
/// the others), and the device ordinal a View in it is on (`device_id()`; -1 where DLPack
/// fixes the ordinal at 0 or the space has none). A space not listed is a compile-time error
/// naming it. Kokkos's aliases (DefaultHostExecutionSpace::memory_space, SharedSpace,
/// SharedHostPinnedSpace) are these types, so they need no row of their own.
template <class MemorySpace>
struct memory_space_traits {
  static_assert(sizeof(MemorySpace) == 0,
                "dlpack_mdspan::kokkos: this Kokkos memory space has no DLPack device in memory_space_traits "
                "(known: HostSpace; CudaSpace, CudaUVMSpace, CudaHostPinnedSpace where Kokkos enables CUDA)");
};

template <>
struct memory_space_traits<Kokkos::HostSpace> {
  static constexpr DLDeviceType device_type = kDLCPU;
  template <class T>
  using accessor = Kokkos::default_accessor<T>;
  static std::int32_t device_id() noexcept { return -1; }
};

#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct memory_space_traits<Kokkos::CudaSpace> {
  static constexpr DLDeviceType device_type = kDLCUDA;
  template <class T>
  using accessor = device_memory_accessor<T, kDLCUDA>;
  /// The device of Kokkos's CUDA execution space: the one a CudaSpace View is on.
  static std::int32_t device_id() noexcept { return Kokkos::Cuda().cuda_device(); }
};

template <>
struct memory_space_traits<Kokkos::CudaUVMSpace> {
  static constexpr DLDeviceType device_type = kDLCUDAManaged;
  template <class T>
  using accessor = device_memory_accessor<T, kDLCUDAManaged>;
  static std::int32_t device_id() noexcept { return -1; }
};

template <>
struct memory_space_traits<Kokkos::CudaHostPinnedSpace> {
  static constexpr DLDeviceType device_type = kDLCUDAHost;
  template <class T>
  using accessor = device_memory_accessor<T, kDLCUDAHost>;
  static std::int32_t device_id() noexcept { return -1; }
};
#endif

namespace detail {

template <class Layout>
struct mdspan_layout_of {
  static_assert(sizeof(Layout) == 0,
                "dlpack_mdspan::kokkos: a View's layout must be Kokkos::LayoutRight, LayoutLeft or LayoutStride");
};
template <>
struct mdspan_layout_of<Kokkos::LayoutRight> {
  using type = Kokkos::layout_right;
};
template <>
struct mdspan_layout_of<Kokkos::LayoutLeft> {
  using type = Kokkos::layout_left;
};
template <>
struct mdspan_layout_of<Kokkos::LayoutStride> {
  using type = Kokkos::layout_stride;
};

template <class View>
using space_traits = memory_space_traits<typename View::memory_space>;

template <class View>
using element_of = typename View::mdspan_type::element_type;

template <class View>
using accessor_of = typename space_traits<View>::template accessor<element_of<View>>;

template <class View>
accessor_of<View> make_accessor() noexcept {
  if constexpr (std::is_constructible_v<accessor_of<View>, std::int32_t>) {
    const std::int32_t id = space_traits<View>::device_id();
    return accessor_of<View>(id < 0 ? 0 : id);
  } else {
    return accessor_of<View>{};
  }
}

}  // namespace detail

/// The mdspan a View is to the core on export: its data, extents and strides, the accessor
/// of its memory space.
template <class View>
using export_mdspan_t = Kokkos::mdspan<detail::element_of<View>, Kokkos::dextents<std::size_t, View::rank()>,
                                       Kokkos::layout_stride, detail::accessor_of<View>>;

/// The mdspan a tensor is imported into before it becomes a View: the View's element type
/// and extents (static ones included), the layout its array layout names, the accessor of its
/// memory space.
template <class View>
using import_mdspan_t = Kokkos::mdspan<detail::element_of<View>, typename View::mdspan_type::extents_type,
                                       typename detail::mdspan_layout_of<typename View::array_layout>::type,
                                       detail::accessor_of<View>>;

/// The unmanaged View that an import gives for View: the same data type, layout and memory
/// space, Kokkos::MemoryTraits with Unmanaged added (the tensor's owner keeps the memory).
template <class View>
using unmanaged_view_t =
    Kokkos::View<typename View::data_type, typename View::array_layout, typename View::device_type,
                 Kokkos::MemoryTraits<View::memory_traits::impl_value | Kokkos::Unmanaged>>;

/// A View as an mdspan over the same memory (no copy).
template <class View>
[[nodiscard]] export_mdspan_t<View> to_export_mdspan(const View& view) noexcept {
  using M = export_mdspan_t<View>;
  std::array<std::size_t, View::rank()> extents{}, strides{};
  for (std::size_t r = 0; r < View::rank(); ++r) {
    extents[r] = view.extent(r);
    strides[r] = view.stride(r);
  }
  return M(view.data(), typename M::mapping_type(typename M::extents_type(extents), strides), detail::make_accessor<View>());
}

/// A non-owning DLTensor view of a View (the core's try_to_dlpack_tensor): keep the View
/// and the returned dlpack_tensor alive while the DLTensor is used.
template <class View>
[[nodiscard]] auto try_to_dlpack_tensor(const View& view) noexcept {
  return dlpack_mdspan::try_to_dlpack_tensor(to_export_mdspan(view));
}

namespace detail {
// Whether a copy of `view` keeps its memory alive: Kokkos counts a reference to it (a View
// without memory needs none). An unmanaged View (unmanaged_view_t, a View made over a raw
// pointer) counts nothing: its memory is someone else's.
template <class View>
bool owns_its_memory(const View& view) noexcept {
  return view.data() == nullptr || view.use_count() > 0;
}
DLPM_COLD inline error unowned_view_refusal() noexcept {
  return error::format(errc::invalid_argument,
                       "to_managed_tensor: the View does not own its memory (an unmanaged View, as to_view makes, or one "
                       "made over a pointer): nothing would keep the memory alive; export the tensor it came from, or a "
                       "managed View");
}

// The caller's requirements, with the device ordinal "any" (-1) made the memory space's
// (Kokkos's device, for CudaSpace): other values are the caller's, for the core to judge.
template <class View>
tensor_requirements requirements_of(const tensor_requirements& requirements) noexcept {
  tensor_requirements req = requirements;
  if (req.device_id == -1) req.device_id = space_traits<View>::device_id();
  return req;
}

// The unmanaged View over the mdspan the core's import accepted, or its refusal.
template <class View, class M>
result<unmanaged_view_t<View>> view_of(const result<M>& md) noexcept {
  using Out = unmanaged_view_t<View>;
  if (!md) return unexpected_error(md.error());
  typename Out::array_layout layout{};
  for (std::size_t r = 0; r < M::rank(); ++r) {
    layout.dimension[r] = md->extent(r);
    if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutStride>) layout.stride[r] = md->stride(r);
  }
  return Out(md->data_handle(), layout);
}
}  // namespace detail

/// An owning DLManagedTensorVersioned over a View's memory (the core's try_to_managed_tensor):
/// a copy of the View (a reference, counted by Kokkos) is its owner, released by the
/// deleter, so a consumer (numpy.from_dlpack, torch.from_dlpack) keeps the memory alive
/// after the View goes. READ_ONLY for a View of const elements. The deleter destroys a View:
/// let every consumer go before Kokkos::finalize. A View that owns no memory Kokkos counts
/// (an unmanaged View) is errc::invalid_argument: its copy would keep nothing alive. Not
/// inside a parallel region, where Kokkos counts no copy either.
template <class View>
[[nodiscard]] result<managed_tensor> try_to_managed_tensor(const View& view) noexcept {
  if (!detail::owns_its_memory(view)) [[unlikely]] return unexpected_error(detail::unowned_view_refusal());
  return dlpack_mdspan::try_to_managed_tensor(to_export_mdspan(view), View(view));
}

/// Throwing form of try_to_managed_tensor: the core's throwing form (std::bad_alloc stays
/// std::bad_alloc), dlpack_error otherwise.
template <class View>
[[nodiscard]] managed_tensor to_managed_tensor(const View& view) {
  if (!detail::owns_its_memory(view)) [[unlikely]] dlpack_mdspan::detail::throw_error(detail::unowned_view_refusal());
  return dlpack_mdspan::to_managed_tensor(to_export_mdspan(view), View(view));
}

/// A tensor viewed as an unmanaged View (unmanaged_view_t<View>), or why not: the core's
/// typed import into import_mdspan_t<View> decides (dtype, rank, static extents, the strides
/// the layout needs, alignment, the device type of the memory space and, for CudaSpace,
/// Kokkos's device), with `flags` (a managed tensor's: a View of non-const elements over a
/// READ_ONLY tensor is errc::read_only) and the caller's `requirements`.
template <class View>
[[nodiscard]] result<unmanaged_view_t<View>> try_to_view(const DLTensor& tensor, std::uint64_t flags = 0,
                                                         const tensor_requirements& requirements = {}) noexcept {
  const tensor_requirements req = detail::requirements_of<View>(requirements);
  return detail::view_of<View>(dlpack_mdspan::try_view<import_mdspan_t<View>>(tensor, flags, req));
}

/// Throwing form of try_to_view (dlpack_error).
template <class View>
[[nodiscard]] unmanaged_view_t<View> to_view(const DLTensor& tensor, std::uint64_t flags = 0,
                                             const tensor_requirements& requirements = {}) {
  return dlpack_mdspan::detail::value_or_throw(try_to_view<View>(tensor, flags, requirements));
}

/// A managed tensor's DLTensor viewed as an unmanaged View, with its flags (the core's
/// managed_tensor::try_view: an empty managed_tensor is errc::null_pointer): the tensor must
/// outlive the View.
template <class View>
[[nodiscard]] result<unmanaged_view_t<View>> try_to_view(const managed_tensor& tensor DLPM_LIFETIMEBOUND,
                                                         const tensor_requirements& requirements = {}) noexcept {
  return detail::view_of<View>(tensor.try_view<import_mdspan_t<View>>(detail::requirements_of<View>(requirements)));
}
/// Deleted: the View would dangle as soon as the temporary managed_tensor is destroyed.
template <class View>
result<unmanaged_view_t<View>> try_to_view(const managed_tensor&&, const tensor_requirements& = {}) = delete;

}  // namespace kokkos
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
