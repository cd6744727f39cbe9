// mdspan → DLTensor view (non-owning): to_dlpack_tensor / try_to_dlpack_tensor.
#ifndef DLPACK_MDSPAN_EXPORT_HPP
#define DLPACK_MDSPAN_EXPORT_HPP

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

namespace dlpack_mdspan::inline DLPM_ABI::detail {
struct export_access;
}

DLPM_EXPORT namespace dlpack_mdspan::inline DLPM_ABI {

/// A DLTensor view of an mdspan, with the shape and strides stored inline (no heap).
///
/// `get()` builds the DLTensor on each call, pointing into *this, so copies and moves are
/// always safe: every copy hands out pointers to its own arrays. The DLTensor returned by
/// `get()` must not outlive the dlpack_tensor; calling `get()` on a temporary is a
/// compile-time error, and clang's lifetimebound analysis flags the remaining misuses.
template <std::size_t Rank>
class dlpack_tensor {
 public:
  constexpr dlpack_tensor() noexcept = default;

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
  void* data_ = nullptr;
  DLDevice device_{kDLCPU, 0};
  DLDataType dtype_{};
  std::uint64_t byte_offset_ = 0;
  std::array<std::int64_t, Rank> shape_{};
  std::array<std::int64_t, Rank> strides_{};
};

}  // namespace dlpack_mdspan

namespace dlpack_mdspan::inline DLPM_ABI::detail {

template <class M, std::size_t... I>
constexpr typename M::index_type origin_index(const typename M::mapping_type& m, std::index_sequence<I...>) {
  return m(((void)I, typename M::index_type{0})...);
}

template <class I>
constexpr bool fits_int64(I v) noexcept {
  return std::in_range<std::int64_t>(v);
}

struct export_access {
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

  // The hot path behind every export: the checks and the copy, no message formatting, so
  // that it is small enough to be inlined into the caller. O(rank), no allocation.
  template <strided_mdspan M>
  static constexpr bool try_fill(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out) noexcept {
    using element_type = typename M::element_type;
    using index_type = typename M::index_type;
    constexpr std::size_t rank = M::rank();
    const auto& mapping = md.mapping();
    if (!mapping.is_strided()) return false;
    bool empty = false;
    if constexpr (rank > 0) {
      for (std::size_t r = 0; r < rank; ++r) {
        const index_type e = md.extent(r);
        const index_type s = mapping.stride(static_cast<typename M::extents_type::rank_type>(r));
        if (!fits_int64(e) || !fits_int64(s)) return false;
        out.shape_[r] = static_cast<std::int64_t>(e);
        out.strides_[r] = static_cast<std::int64_t>(s);
        empty = empty || e == 0;
      }
    }
    out.byte_offset_ = 0;
    out.data_ = nullptr;
    if (!empty) {
      const index_type offset = origin_index<M>(mapping, std::make_index_sequence<rank>{});
      if (offset < index_type{0} ||
          static_cast<std::uint64_t>(offset) > std::numeric_limits<std::uint64_t>::max() / sizeof(element_type))
        return false;
      out.byte_offset_ = static_cast<std::uint64_t>(offset) * sizeof(element_type);
      using mutable_element = std::remove_cv_t<element_type>;
      out.data_ = static_cast<void*>(const_cast<mutable_element*>(md.data_handle()));
    }
    out.device_ = device;
    out.dtype_ = dtype_v<element_type>;
    return true;
  }

  // Both forms: the hot path, and on failure the cold routine that says why.
  template <strided_mdspan M>
  static constexpr bool fill(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out, error* err) noexcept {
    if (try_fill(md, device, out)) return true;
    fill_described(md, device, out, err);
    return false;
  }

  template <strided_mdspan M>
  [[noreturn, gnu::cold, gnu::noinline]] static void throw_failure(const M& md, DLDevice device) {
    dlpack_tensor<M::rank()> scratch;
    error err;
    fill_described(md, device, scratch, &err);
    throw_error(err);
  }

  // The same checks again, formatting the message of the first failure (cold).
  template <strided_mdspan M>
  [[gnu::cold, gnu::noinline]] static constexpr bool fill_described(const M& md, DLDevice device, dlpack_tensor<M::rank()>& out, error* err) noexcept {
    using element_type = typename M::element_type;
    using index_type = typename M::index_type;
    constexpr std::size_t rank = M::rank();
    const auto& mapping = md.mapping();

    if (!mapping.is_strided()) {
      *err = error::format(errc::not_strided, "to_dlpack_tensor: the layout mapping is not strided, "
                                              "so DLPack cannot describe it");
      return false;
    }
    bool empty = false;
    if constexpr (rank > 0) {
    for (std::size_t r = 0; r < rank; ++r) {
      const index_type e = md.extent(r);
      if (!fits_int64(e)) {
        *err = error::format(errc::extent_overflow,
                             "to_dlpack_tensor: extent(%zu) = %llu does not fit DLPack's int64_t shape", r,
                             static_cast<unsigned long long>(e));
        return false;
      }
      const index_type s = mapping.stride(static_cast<typename M::extents_type::rank_type>(r));
      if (!fits_int64(s)) {
        *err = error::format(errc::stride_overflow,
                             "to_dlpack_tensor: stride(%zu) = %llu does not fit DLPack's int64_t strides", r,
                             static_cast<unsigned long long>(s));
        return false;
      }
      out.shape_[r] = static_cast<std::int64_t>(e);
      out.strides_[r] = static_cast<std::int64_t>(s);  // the real stride, never canonicalised
      empty = empty || e == 0;
    }
    }

    out.byte_offset_ = 0;
    out.data_ = nullptr;  // size 0: DLPack says data should be NULL
    if (!empty) {
      // A mapping with an offset (layout_stride_relaxed) keeps its base pointer; the offset
      // travels as byte_offset. Layouts without one evaluate to 0 here.
      const index_type offset = origin_index<M>(mapping, std::make_index_sequence<rank>{});
      if (offset < index_type{0} ||
          static_cast<std::uint64_t>(offset) > std::numeric_limits<std::uint64_t>::max() / sizeof(element_type)) {
        *err = error::format(errc::byte_offset_overflow,
                             "to_dlpack_tensor: element offset %lld times sizeof(T) = %zu does not fit byte_offset",
                             static_cast<long long>(offset), sizeof(element_type));
        return false;
      }
      out.byte_offset_ = static_cast<std::uint64_t>(offset) * sizeof(element_type);
      using mutable_element = std::remove_cv_t<element_type>;
      out.data_ = static_cast<void*>(const_cast<mutable_element*>(md.data_handle()));
    }
    out.device_ = device;
    out.dtype_ = dtype_v<element_type>;
    return true;
  }
};

}  // namespace dlpack_mdspan::detail

DLPM_EXPORT namespace dlpack_mdspan::inline DLPM_ABI {

/// Non-throwing export with an explicit device.
template <strided_mdspan M>
[[nodiscard]] constexpr result<dlpack_tensor<M::rank()>> try_to_dlpack_tensor(const M& md, DLDevice device) noexcept {
  dlpack_tensor<M::rank()> out;
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
[[nodiscard]] constexpr dlpack_tensor<M::rank()> to_dlpack_tensor(const M& md, DLDevice device) {
  dlpack_tensor<M::rank()> out;
  if (!detail::export_access::try_fill(md, device, out)) [[unlikely]] detail::export_access::throw_failure(md, device);
  return out;
}

/// Export; the device comes from the accessor (kDLCPU by default).
template <strided_mdspan M>
[[nodiscard]] constexpr dlpack_tensor<M::rank()> to_dlpack_tensor(const M& md) {
  return to_dlpack_tensor(md, accessor_device(md.accessor()));
}

}  // namespace dlpack_mdspan

#endif
