// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mdspan → DLTensor view (non-owning): to_dlpack_tensor / try_to_dlpack_tensor.
#ifndef DLPACK_MDSPAN_EXPORT_HPP
#define DLPACK_MDSPAN_EXPORT_HPP

#include <dlpack_mdspan/compact_layouts.hpp>
#include <dlpack_mdspan/concepts.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/error.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {
struct export_access;
}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// A DLTensor view of an mdspan, with the shape and strides stored inline (no heap).
///
/// `get()` builds the DLTensor on each call, pointing into *this, so copies and moves are
/// always safe: every copy hands out pointers to its own arrays. The DLTensor returned by
/// `get()` must not outlive the dlpack_tensor; calling `get()` on a temporary is a
/// compile-time error, and clang's lifetimebound analysis flags the remaining misuses.
template <std::size_t Rank>
class dlpack_tensor {
 public:
  constexpr dlpack_tensor() noexcept : data_(nullptr), device_{kDLCPU, 0}, dtype_{}, byte_offset_(0), shape_{}, strides_{} {}

  /// The DLTensor view. Rank 0 gives NULL shape and strides.
  [[nodiscard]] constexpr DLTensor get() const& noexcept DLPM_LIFETIMEBOUND {
    DLTensor t{};
    t.data = data_;
    t.device = device_;
    t.ndim = static_cast<std::int32_t>(Rank);
    t.dtype = dtype_;
    t.shape = Rank == 0 ? nullptr : const_cast<std::int64_t*>(shape_.data());
    t.strides = Rank == 0 ? nullptr : const_cast<std::int64_t*>(strides_.data());
    t.byte_offset = byte_offset_;
    return t;
  }
  /// Deleted: the DLTensor would point into a temporary that dies at the end of the
  /// full-expression. Keep the dlpack_tensor in a variable and call get() on that.
  DLTensor get() const&& = delete;

  [[nodiscard]] static constexpr std::size_t rank() noexcept { return Rank; }
  [[nodiscard]] constexpr void* data() const noexcept { return data_; }
  [[nodiscard]] constexpr DLDevice device() const noexcept { return device_; }
  [[nodiscard]] constexpr DLDataType dtype() const noexcept { return dtype_; }
  [[nodiscard]] constexpr std::uint64_t byte_offset() const noexcept { return byte_offset_; }
  [[nodiscard]] constexpr const std::array<std::int64_t, Rank>& shape() const noexcept DLPM_LIFETIMEBOUND { return shape_; }
  [[nodiscard]] constexpr const std::array<std::int64_t, Rank>& strides() const noexcept DLPM_LIFETIMEBOUND { return strides_; }

 private:
  friend struct detail::export_access;
  // For the export, which writes every field: no zeroing first, which the compiler cannot
  // always see is dead.
  struct unfilled {};
  explicit constexpr dlpack_tensor(unfilled) noexcept {}
  void* data_;
  DLDevice device_;
  DLDataType dtype_;
  std::uint64_t byte_offset_;
  std::array<std::int64_t, Rank> shape_;
  std::array<std::int64_t, Rank> strides_;
};

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

template <class M, std::size_t... I>
constexpr typename M::index_type origin_index(const typename M::mapping_type& m, std::index_sequence<I...>) {
  return m(((void)I, typename M::index_type{0})...);
}

template <class I>
constexpr bool fits_int64(I v) noexcept {
  return std::in_range<std::int64_t>(v);
}

struct export_access {
  // A view for try_fill, which writes every field.
  template <std::size_t Rank>
  static constexpr dlpack_tensor<Rank> unfilled() noexcept {
    return dlpack_tensor<Rank>(typename dlpack_tensor<Rank>::unfilled{});
  }

  // A view with chosen fields, for owning exports that lay out their own storage.
  template <std::size_t Rank>
  static constexpr dlpack_tensor<Rank> make(void* data, DLDevice device, DLDataType dtype,
                                            const std::array<std::int64_t, Rank>& shape,
                                            const std::array<std::int64_t, Rank>& strides) noexcept {
    dlpack_tensor<Rank> out;
    out.data_ = data;
    out.device_ = device;
    out.dtype_ = dtype;
    out.shape_ = shape;
    out.strides_ = strides;
    return out;
  }

  // The one export routine: the checks and the copy, no message formatting, so that it is
  // small enough to be inlined into the caller. O(rank), no allocation. On failure it
  // returns which check failed and, for per-dimension checks, the dimension; describe()
  // turns that into a message, off the hot path.
  template <strided_mdspan M>
  DLPM_HOT_INLINE static constexpr errc try_fill(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out,
                                 std::size_t* failed_dim) noexcept {
    using element_type = typename M::element_type;
    using index_type = typename M::index_type;
    constexpr std::size_t rank = M::rank();
    const auto& mapping = md.mapping();
    if (!mapping.is_strided()) return errc::not_strided;
    bool empty = false;
    if constexpr (rank > 0) {
      // layout_right/left: the strides as one running product of the extents (the mapping's
      // stride(r) multiplies them out again for each r, O(rank^2)), computed wrapping in
      // the unsigned index type. The mapping guarantees that the size of a non-empty view
      // fits its index_type, so the product is 0 exactly when the view is empty, and the
      // partial products are the strides; an empty view asks stride(r) instead.
      constexpr compact_order order = compact_order_of<M>();
      index_type strides[rank];
      bool compact = false;
      // Every extent and stride must fit int64_t (for an index_type wider than that, size_t).
      bool may_not_fit = std::numeric_limits<index_type>::max() > std::numeric_limits<std::int64_t>::max();
      if constexpr (order != compact_order::other) {
        using unsigned_index = std::make_unsigned_t<index_type>;
        using wide = std::conditional_t<(sizeof(unsigned_index) < sizeof(std::uint64_t)), std::uint64_t, unsigned_index>;
        unsigned_index running = 1;
        for (std::size_t i = 0; i < rank; ++i) {
          const std::size_t r = order == compact_order::row_major ? rank - 1 - i : i;
          strides[r] = static_cast<index_type>(running);
          running = static_cast<unsigned_index>(static_cast<wide>(running) * static_cast<wide>(md.extent(r)));
        }
        empty = running == 0;
        compact = !empty;
        // Non-empty, every extent is at least 1: each extent and each stride (a partial
        // product) is at most the whole product, the view's size, so one test of it covers
        // them all.
        if (compact) may_not_fit = may_not_fit && !fits_int64(running);
      } else {
        for (std::size_t r = 0; r < rank; ++r) empty = empty || md.extent(r) == 0;
      }
      if (!compact)
        for (std::size_t r = 0; r < rank; ++r) strides[r] = mapping.stride(static_cast<typename M::extents_type::rank_type>(r));
      // Otherwise (an empty or a strided view) one test of the OR of them all decides whether
      // the loop that names the dimension runs (for an index_type no wider than int64_t its
      // tests are constant and it folds away).
      if (may_not_fit && !compact) {
        index_type all = 0;
        for (std::size_t r = 0; r < rank; ++r) all |= static_cast<index_type>(md.extent(r) | strides[r]);
        may_not_fit = !fits_int64(all);
      }
      if (may_not_fit) [[unlikely]] {
        for (std::size_t r = 0; r < rank; ++r) {
          if (!fits_int64(md.extent(r)) || !fits_int64(strides[r])) {
            *failed_dim = r;
            return fits_int64(md.extent(r)) ? errc::stride_overflow : errc::extent_overflow;
          }
        }
      }
      for (std::size_t r = 0; r < rank; ++r) {
        out.shape_[r] = static_cast<std::int64_t>(md.extent(r));
        out.strides_[r] = static_cast<std::int64_t>(strides[r]);  // the real stride, never canonicalised
      }
    }
    std::uint64_t byte_offset = 0;
    void* data = nullptr;  // size 0: DLPack says data should be NULL
    if (!empty) {
      // A mapping with an offset (layout_stride_relaxed) keeps its base pointer; the offset
      // travels as byte_offset. Layouts without one evaluate to 0 here.
      const index_type offset = origin_index<M>(mapping, std::make_index_sequence<rank>{});
      if (offset < index_type{0} ||
          static_cast<std::uint64_t>(offset) > std::numeric_limits<std::uint64_t>::max() / sizeof(element_type))
        return errc::byte_offset_overflow;
      byte_offset = static_cast<std::uint64_t>(offset) * sizeof(element_type);
      using mutable_element = std::remove_cv_t<element_type>;
      data = static_cast<void*>(const_cast<mutable_element*>(md.data_handle()));
    }
    out.data_ = data;
    out.byte_offset_ = byte_offset;
    out.device_ = device;
    out.dtype_ = dtype_v<element_type>;
    return errc::ok;
  }

  // The message for a failure try_fill reported, naming the values involved (cold).
  template <strided_mdspan M>
  [[gnu::cold, gnu::noinline]] static error describe(const M& md, errc code, std::size_t dim) noexcept {
    switch (code) {
      case errc::extent_overflow:
        return error::format(code, "to_dlpack_tensor: extent(%zu) = %llu does not fit DLPack's int64_t shape", dim,
                             static_cast<unsigned long long>(md.extent(dim)));
      case errc::stride_overflow:
        if constexpr (M::rank() > 0) {
          return error::format(code, "to_dlpack_tensor: stride(%zu) = %llu does not fit DLPack's int64_t strides", dim,
                               static_cast<unsigned long long>(md.mapping().stride(
                                   static_cast<typename M::extents_type::rank_type>(dim))));
        }
        break;
      case errc::byte_offset_overflow:
        return error::format(code, "to_dlpack_tensor: element offset %lld times sizeof(T) = %zu does not fit byte_offset",
                             static_cast<long long>(origin_index<M>(md.mapping(), std::make_index_sequence<M::rank()>{})),
                             sizeof(typename M::element_type));
      default: break;
    }
    return error::format(errc::not_strided, "to_dlpack_tensor: the layout mapping is not strided, so DLPack cannot describe it");
  }

  // Both forms: the hot path, and on failure the message.
  template <strided_mdspan M>
  static constexpr bool fill(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out, error* err) noexcept {
    std::size_t dim = 0;
    const errc code = try_fill(md, device, out, &dim);
    if (code == errc::ok) return true;
    *err = describe(md, code, dim);
    return false;
  }
};

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Non-throwing export with an explicit device.
template <strided_mdspan M>
[[nodiscard]] constexpr result<dlpack_tensor<M::rank()>> try_to_dlpack_tensor(const M& md, DLDevice device) noexcept {
  dlpack_tensor<M::rank()> out = detail::export_access::unfilled<M::rank()>();
  error err;
  if (!detail::export_access::fill(md, device, out, &err)) return unexpected_error(err);
  return out;
}

/// Non-throwing export; the device comes from the accessor (kDLCPU by default).
template <strided_mdspan M>
[[nodiscard]] constexpr result<dlpack_tensor<M::rank()>> try_to_dlpack_tensor(const M& md) noexcept {
  return try_to_dlpack_tensor(md, accessor_device(md.accessor()));
}

/// Export with an explicit device. Throws dlpack_error when an extent or stride does not
/// fit int64_t or the mapping is not strided.
template <strided_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE constexpr dlpack_tensor<M::rank()> to_dlpack_tensor(const M& md, DLDevice device) {
  dlpack_tensor<M::rank()> out = detail::export_access::unfilled<M::rank()>();
  std::size_t dim = 0;
  if (const errc code = detail::export_access::try_fill(md, device, out, &dim); code != errc::ok) [[unlikely]]
    detail::throw_error(detail::export_access::describe(md, code, dim));
  return out;
}

/// Export; the device comes from the accessor (kDLCPU by default).
template <strided_mdspan M>
[[nodiscard]] DLPM_HOT_INLINE constexpr dlpack_tensor<M::rank()> to_dlpack_tensor(const M& md) {
  return to_dlpack_tensor(md, accessor_device(md.accessor()));
}

/// Export with the device a runtime query names for md.data_handle(), whatever the accessor
/// says: `device_of(const void*)` returns result<DLDevice> (cuda.hpp's cuda_device_of,
/// hip.hpp's hip_device_of, or a lambda of yours; it must not throw). A NULL handle (an empty view) has
/// nothing to ask about and takes the accessor's device. Fails with the query's error, or
/// with the export errors.
template <strided_mdspan M, class DeviceOf>
  requires std::is_invocable_r_v<result<DLDevice>, DeviceOf&, const void*>
[[nodiscard]] result<dlpack_tensor<M::rank()>> try_to_dlpack_tensor_on_device(const M& md, DeviceOf&& device_of) noexcept {
  if (md.data_handle() == nullptr) return try_to_dlpack_tensor(md);
  const result<DLDevice> device = device_of(static_cast<const void*>(md.data_handle()));
  if (!device) return unexpected_error(device.error());
  return try_to_dlpack_tensor(md, *device);
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
