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
/// The view holds one DLTensor whose shape and strides point at its own arrays; `get()`
/// returns a reference to it. A copy or a move points the new DLTensor at the new object's
/// arrays (so it is not trivially copyable), so every copy hands out pointers into itself
/// and none into the object it came from. The DLTensor (and any pointer to it) must not
/// outlive the dlpack_tensor: calling `get()` on a temporary is a compile-time error, and
/// clang's lifetimebound analysis flags a reference or pointer to it returned from the
/// function whose dlpack_tensor dies there.
template <std::size_t Rank>
class dlpack_tensor {
 public:
  constexpr dlpack_tensor() noexcept
      : tensor_{nullptr, DLDevice{kDLCPU, 0}, static_cast<std::int32_t>(Rank), DLDataType{}, nullptr, nullptr, 0},
        shape_{},
        strides_{} {
    point_at_own_arrays();
  }
  constexpr dlpack_tensor(const dlpack_tensor& other) noexcept
      : tensor_(other.tensor_), shape_(other.shape_), strides_(other.strides_) {
    point_at_own_arrays();
  }
  constexpr dlpack_tensor& operator=(const dlpack_tensor& other) noexcept {
    tensor_ = other.tensor_;
    shape_ = other.shape_;
    strides_ = other.strides_;
    point_at_own_arrays();
    return *this;
  }
  constexpr ~dlpack_tensor() = default;

  /// The DLTensor view, stored in *this. Rank 0 gives NULL shape and strides.
  [[nodiscard]] constexpr const DLTensor& get() const& noexcept DLPM_LIFETIMEBOUND { return tensor_; }
  /// Deleted: the DLTensor would point into a temporary that dies at the end of the
  /// full-expression. Keep the dlpack_tensor in a variable and call get() on that.
  const DLTensor& get() const&& = delete;

  [[nodiscard]] static constexpr std::size_t rank() noexcept { return Rank; }
  [[nodiscard]] constexpr void* data() const noexcept { return tensor_.data; }
  [[nodiscard]] constexpr DLDevice device() const noexcept { return tensor_.device; }
  [[nodiscard]] constexpr DLDataType dtype() const noexcept { return tensor_.dtype; }
  [[nodiscard]] constexpr std::uint64_t byte_offset() const noexcept { return tensor_.byte_offset; }
  [[nodiscard]] constexpr const std::array<std::int64_t, Rank>& shape() const noexcept DLPM_LIFETIMEBOUND { return shape_; }
  [[nodiscard]] constexpr const std::array<std::int64_t, Rank>& strides() const noexcept DLPM_LIFETIMEBOUND { return strides_; }

 private:
  friend struct detail::export_access;
  // For the export, which writes every field: no zeroing first, which the compiler cannot
  // always see is dead.
  struct unfilled {};
  explicit constexpr dlpack_tensor(unfilled) noexcept {}
  // Every field of the DLTensor in one assignment (the compiler merges the stores), its
  // shape and strides pointing at this object's arrays.
  constexpr void set_tensor(void* data, DLDevice device, DLDataType dtype, std::uint64_t byte_offset) noexcept {
    tensor_ = DLTensor{data, device, static_cast<std::int32_t>(Rank), dtype, shape_pointer(), strides_pointer(), byte_offset};
  }
  constexpr void point_at_own_arrays() noexcept {
    tensor_.shape = shape_pointer();
    tensor_.strides = strides_pointer();
  }
  constexpr std::int64_t* shape_pointer() noexcept {
    if constexpr (Rank == 0) return nullptr;
    else return shape_.data();
  }
  constexpr std::int64_t* strides_pointer() noexcept {
    if constexpr (Rank == 0) return nullptr;
    else return strides_.data();
  }
  DLTensor tensor_;
  std::array<std::int64_t, Rank> shape_;
  std::array<std::int64_t, Rank> strides_;
};

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

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
    out.shape_ = shape;
    out.strides_ = strides;
    out.set_tensor(data, device, dtype, 0);
    return out;
  }

  // A non-empty view's data pointer and its byte_offset. A mapping with an offset
  // (layout_stride_relaxed) keeps its base pointer; the offset travels as byte_offset.
  // Layouts without one evaluate to 0 here, and the test folds away.
  template <strided_mdspan M>
  DLPM_HOT_INLINE static constexpr errc origin_of(const M& md, void** data, std::uint64_t* byte_offset) noexcept {
    using element_type = typename M::element_type;
    using index_type = typename M::index_type;
    const index_type offset = index_zero_of(md.mapping(), std::make_index_sequence<M::rank()>{});
    if (offset < index_type{0} ||
        static_cast<std::uint64_t>(offset) > std::numeric_limits<std::uint64_t>::max() / sizeof(element_type))
      return errc::byte_offset_overflow;
    *byte_offset = static_cast<std::uint64_t>(offset) * sizeof(element_type);
    using mutable_element = std::remove_cv_t<element_type>;
    *data = static_cast<void*>(const_cast<mutable_element*>(md.data_handle()));
    return errc::ok;
  }

  // Whether try_fill_compact applies: layout_right/left, and any layout whose strides are
  // the running product of its extents.
  template <class M>
  static constexpr bool has_compact_path = M::rank() > 0 && compact_order_of<M>() != compact_order::other;

  // The hot path of those layouts, small enough to be inlined into the caller: the
  // strides as one running product of the extents (the mapping's stride(r) multiplies
  // them out again for each r, O(rank^2)), computed wrapping in the unsigned index type.
  // The mapping guarantees that the size of a non-empty view fits its index_type, so the
  // product is the size, and every extent and every stride (a partial product) of a
  // non-empty view is at most the size: one test, 0 < size <= INT64_MAX, covers the
  // empty-view rule and the int64 range of every extent and stride. Returns false for a
  // view that fails it (empty, too large for DLPack, or with an offset that does not fit
  // byte_offset): fill_any, off the hot path, applies each rule on its own and reports.
  template <strided_mdspan M>
    requires has_compact_path<M>
  DLPM_HOT_INLINE static constexpr bool try_fill_compact(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out) noexcept {
    constexpr std::size_t rank = M::rank();
    using index_type = typename M::index_type;
    using unsigned_index = std::make_unsigned_t<index_type>;
    using wide = std::conditional_t<(sizeof(unsigned_index) < sizeof(std::uint64_t)), std::uint64_t, unsigned_index>;
    constexpr compact_order order = compact_order_of<M>();
    if (!md.mapping().is_strided()) return false;
    unsigned_index running = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t r = order == compact_order::row_major ? rank - 1 - i : i;
      out.strides_[r] = static_cast<std::int64_t>(running);
      out.shape_[r] = static_cast<std::int64_t>(md.extent(r));
      running = static_cast<unsigned_index>(static_cast<wide>(running) * static_cast<wide>(md.extent(r)));
    }
    if (running == 0 || !fits_int64(running)) [[unlikely]]
      return false;
    void* data = nullptr;
    std::uint64_t byte_offset = 0;
    if (origin_of(md, &data, &byte_offset) != errc::ok) return false;
    out.set_tensor(data, device, dtype_v<typename M::element_type>, byte_offset);
    return true;
  }

  // An empty compact view (layout_right/left): its size, 0, fits index_type, but the product
  // of its other extents need not, and its mapping's stride(r) multiplies them out in
  // index_type (signed overflow in libc++ and CCCL: undefined). Its strides are the running
  // products, computed here in 64 bits and capped at INT64_MAX (an empty tensor's strides
  // address nothing); data NULL, byte_offset 0.
  template <strided_mdspan M>
    requires has_compact_path<M>
  static constexpr errc fill_empty_compact(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out,
                                           std::size_t* failed_dim) noexcept {
    constexpr std::size_t rank = M::rank();
    constexpr std::uint64_t max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    std::uint64_t running = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t r = compact_order_of<M>() == compact_order::row_major ? rank - 1 - i : i;
      if (!fits_int64(md.extent(r))) {
        *failed_dim = r;
        return errc::extent_overflow;
      }
      const auto e = static_cast<std::uint64_t>(md.extent(r));
      out.shape_[r] = static_cast<std::int64_t>(e);
      out.strides_[r] = static_cast<std::int64_t>(running);
      running = e == 0 ? 0 : running > max / e ? max : running * e;
    }
    out.set_tensor(nullptr, device, dtype_v<typename M::element_type>, 0);
    return errc::ok;
  }

  // Every strided view, each rule on its own: the strides from the mapping, the int64 range
  // of every extent and stride, and the empty-view rule (data NULL, byte_offset 0).
  template <strided_mdspan M>
  DLPM_HOT_INLINE static constexpr errc fill_any(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out,
                                 std::size_t* failed_dim) noexcept {
    using index_type = typename M::index_type;
    constexpr std::size_t rank = M::rank();
    const auto& mapping = md.mapping();
    if (!mapping.is_strided()) return errc::not_strided;
    bool empty = false;
    if constexpr (has_compact_path<M>) {
      for (std::size_t r = 0; r < rank; ++r) empty = empty || md.extent(r) == 0;
      if (empty) return fill_empty_compact(md, device, out, failed_dim);
    }
    if constexpr (rank > 0) {
      index_type strides[rank];
      for (std::size_t r = 0; r < rank; ++r) {
        empty = empty || md.extent(r) == 0;
        strides[r] = mapping.stride(static_cast<typename M::extents_type::rank_type>(r));
      }
      // Every extent and stride must fit int64_t (for an index_type wider than that, size_t):
      // one test of the OR of them all decides whether the loop that names the dimension
      // runs (for an index_type no wider than int64_t it is constant and folds away).
      if constexpr (std::numeric_limits<index_type>::max() > std::numeric_limits<std::int64_t>::max()) {
        index_type all = 0;
        for (std::size_t r = 0; r < rank; ++r) all |= static_cast<index_type>(md.extent(r) | strides[r]);
        if (!fits_int64(all)) [[unlikely]] {
          for (std::size_t r = 0; r < rank; ++r) {
            if (!fits_int64(md.extent(r)) || !fits_int64(strides[r])) {
              *failed_dim = r;
              return fits_int64(md.extent(r)) ? errc::stride_overflow : errc::extent_overflow;
            }
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
    if (!empty)
      if (const errc code = origin_of(md, &data, &byte_offset); code != errc::ok) return code;
    out.set_tensor(data, device, dtype_v<typename M::element_type>, byte_offset);
    return errc::ok;
  }

  // The message for a failure fill_any reported, naming the values involved (cold).
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
                             static_cast<long long>(index_zero_of(md.mapping(), std::make_index_sequence<M::rank()>{})),
                             sizeof(typename M::element_type));
      default: break;
    }
    return error::format(errc::not_strided, "to_dlpack_tensor: the layout mapping is not strided, so DLPack cannot describe it");
  }

  // fill_any, and on failure its message (the try_ forms).
  template <strided_mdspan M>
  DLPM_HOT_INLINE static constexpr bool fill_any_or_describe(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out,
                                                             error* err) noexcept {
    std::size_t dim = 0;
    const errc code = fill_any(md, device, out, &dim);
    if (code == errc::ok) [[likely]] return true;
    *err = describe(md, code, dim);
    return false;
  }
  template <strided_mdspan M>
  DLPM_NOINLINE static constexpr bool fill_any_or_describe_cold(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out,
                                                                error* err) noexcept {
    return fill_any_or_describe(md, device, out, err);
  }

  // fill_any, and on failure dlpack_error (the throwing forms).
  template <strided_mdspan M>
  DLPM_HOT_INLINE static constexpr void fill_any_or_throw(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out) {
    std::size_t dim = 0;
    if (const errc code = fill_any(md, device, out, &dim); code != errc::ok) [[unlikely]]
      detail::throw_error(describe(md, code, dim));
  }
  template <strided_mdspan M>
  DLPM_NOINLINE static constexpr void fill_any_or_throw_cold(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out) {
    fill_any_or_throw(md, device, out);
  }

  // The export, non-throwing: true when out is filled, otherwise false and *err says why.
  // One call out of line (taking every failure with it) where the one-test path fails, so
  // that nothing of the failure paths stays live in the caller's frame.
  template <strided_mdspan M>
  DLPM_HOT_INLINE static constexpr bool fill(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out, error* err) noexcept {
    if constexpr (has_compact_path<M>) {
      if (try_fill_compact(md, device, out)) [[likely]] return true;
      return fill_any_or_describe_cold(md, device, out, err);
    } else {
      return fill_any_or_describe(md, device, out, err);
    }
  }

  // The export, throwing dlpack_error on failure.
  template <strided_mdspan M>
  DLPM_HOT_INLINE static constexpr void fill_or_throw(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out) {
    if constexpr (has_compact_path<M>) {
      if (try_fill_compact(md, device, out)) [[likely]] return;
      fill_any_or_throw_cold(md, device, out);
    } else {
      fill_any_or_throw(md, device, out);
    }
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
  detail::export_access::fill_or_throw(md, device, out);
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
