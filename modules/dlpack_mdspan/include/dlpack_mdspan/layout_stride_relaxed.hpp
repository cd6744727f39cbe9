// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// layout_stride_relaxed: a strided layout that also allows zero (broadcast) and negative
// strides plus an element offset, so that every valid DLPack tensor has an mdspan view.
// std::layout_stride requires positive, non-overlapping strides and has no offset.
#ifndef DLPACK_MDSPAN_LAYOUT_STRIDE_RELAXED_HPP
#define DLPACK_MDSPAN_LAYOUT_STRIDE_RELAXED_HPP

#include <dlpack_mdspan/concepts.hpp>
#include <dlpack_mdspan/config.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Layout policy: element (i0, ..., iR-1) is at `offset + sum(ik * stride(k))`.
///
/// It works with any extents type (std::extents, cuda::std::extents), so the same policy
/// serves std::mdspan and cuda::std::mdspan. Negative strides need a signed index_type.
///
/// Preconditions of the mapping (import establishes them; direct users must too): for a
/// non-empty extents, the smallest reachable index `offset + sum over negative strides of
/// (extent-1)*stride` is >= 0, and the largest fits index_type.
struct layout_stride_relaxed {
  template <class Extents>
  class mapping {
   public:
    using extents_type = Extents;
    using index_type = typename extents_type::index_type;
    using size_type = typename extents_type::size_type;
    using rank_type = typename extents_type::rank_type;
    using layout_type = layout_stride_relaxed;

   private:
    static constexpr rank_type rank_ = extents_type::rank();
    // A plain array rather than std::array keeps this usable in CUDA device code.
    struct stride_array {
      index_type values[rank_ == 0 ? 1 : rank_];
      DLPM_HOST_DEVICE constexpr index_type operator[](std::size_t i) const { return values[i]; }
    };

    // Each stride written once (zeroing the array first, then filling it, left a copy of the
    // mapping reading it back wider than it was stored: a store-forwarding stall).
    template <class StrideArray, std::size_t... R>
    DLPM_HOST_DEVICE static constexpr stride_array copy_strides(const StrideArray& a, std::index_sequence<R...>) noexcept {
      return stride_array{{static_cast<index_type>(a[R])...}};
    }

    // Where `other` maps index 0: the offset of a mapping that has one, else other(0, ..., 0)
    // (0 for an empty mapping, which maps no index).
    template <class OtherMapping, std::size_t... R>
    DLPM_HOST_DEVICE static constexpr index_type origin_of(const OtherMapping& other, std::index_sequence<R...>) noexcept {
      if constexpr (requires { other.offset(); }) {
        return static_cast<index_type>(other.offset());
      } else {
        for (rank_type r = 0; r < rank_; ++r)
          if (other.extents().extent(r) == 0) return 0;
        return static_cast<index_type>(detail::index_zero_of(other, std::index_sequence<R...>{}));
      }
    }

   public:
    /// Row-major (layout_right) strides, offset 0.
    DLPM_HOST_DEVICE constexpr mapping() noexcept : mapping(extents_type{}) {}

    /// Row-major strides for `e`, offset 0.
    DLPM_HOST_DEVICE constexpr explicit mapping(const extents_type& e) noexcept : extents_(e), strides_{}, offset_(0) {
      index_type s = 1;
      for (rank_type r = rank_; r-- > 0;) {
        strides_.values[r] = s;
        s = static_cast<index_type>(s * e.extent(r));
      }
    }

    /// Explicit strides (any array-like of rank() integers) and element offset.
    template <class StrideArray>
      requires requires(const StrideArray& a) {
        { a[std::size_t{}] } -> std::convertible_to<index_type>;
      }
    DLPM_HOST_DEVICE constexpr mapping(const extents_type& e, const StrideArray& strides,
                                       index_type offset = 0) noexcept
        : extents_(e), strides_(copy_strides(strides, std::make_index_sequence<rank_>{})), offset_(offset) {}

    /// From any other strided mapping of the same rank (layout_right, layout_stride, another
    /// extents' layout_stride_relaxed, ...): its strides, and where index 0 maps (a relaxed
    /// mapping's offset; otherwise other(0, ..., 0), 0 for an empty one), so every index maps
    /// where `other` maps it.
    template <class OtherMapping>
      requires(!std::is_same_v<OtherMapping, mapping> &&
               requires(const OtherMapping& m) {
                 { m.extents() } -> std::convertible_to<extents_type>;
                 { m.stride(0) };
                 { m.is_strided() };
               })
    DLPM_HOST_DEVICE constexpr explicit mapping(const OtherMapping& other) noexcept
        : extents_(other.extents()), strides_{}, offset_(origin_of(other, std::make_index_sequence<rank_>{})) {
      for (rank_type r = 0; r < rank_; ++r) strides_.values[r] = static_cast<index_type>(other.stride(r));
    }

    DLPM_HOST_DEVICE constexpr const extents_type& extents() const noexcept { return extents_; }
    DLPM_HOST_DEVICE constexpr index_type stride(rank_type r) const noexcept { return strides_.values[r]; }
    DLPM_HOST_DEVICE constexpr index_type offset() const noexcept { return offset_; }

    /// The smallest index range [0, required_span_size()) that holds every element.
    DLPM_HOST_DEVICE constexpr index_type required_span_size() const noexcept {
      index_type last = offset_;
      for (rank_type r = 0; r < rank_; ++r) {
        if (extents_.extent(r) == 0) return 0;
        if (strides_.values[r] > 0) last += static_cast<index_type>((extents_.extent(r) - 1) * strides_.values[r]);
      }
      return static_cast<index_type>(last + 1);
    }

    template <class... Indices>
      requires(sizeof...(Indices) == rank_ && (std::is_convertible_v<Indices, index_type> && ...))
    DLPM_HOST_DEVICE constexpr index_type operator()(Indices... indices) const noexcept {
      return apply(std::make_index_sequence<rank_>{}, static_cast<index_type>(indices)...);
    }

    DLPM_HOST_DEVICE static constexpr bool is_always_unique() noexcept { return false; }
    DLPM_HOST_DEVICE static constexpr bool is_always_exhaustive() noexcept { return false; }
    DLPM_HOST_DEVICE static constexpr bool is_always_strided() noexcept { return true; }

    /// True when no two indices share an element. A broadcast (stride 0 over an extent
    /// > 1) or an overlap makes it false. Empty extents are trivially unique.
    DLPM_HOST_DEVICE constexpr bool is_unique() const noexcept {
      // Sorting by |stride| and checking that each dimension jumps past the previous ones'
      // span is the standard non-overlap test; rank is small, so insertion sort.
      rank_type order[rank_ == 0 ? 1 : rank_] = {};
      for (rank_type r = 0; r < rank_; ++r) {
        if (extents_.extent(r) == 0) return true;
        order[r] = r;
      }
      for (rank_type i = 1; i < rank_; ++i)
        for (rank_type j = i; j > 0 && less(order[j], order[j - 1]); --j) {
          const rank_type t = order[j];
          order[j] = order[j - 1];
          order[j - 1] = t;
        }
      magnitude_type reach = 1;  // elements spanned by the dimensions checked so far, in strides
      for (rank_type i = 0; i < rank_; ++i) {
        const rank_type r = order[i];
        if (extents_.extent(r) == 1) continue;
        if (magnitude(strides_.values[r]) < reach) return false;
        reach = static_cast<magnitude_type>(magnitude(strides_.values[r]) * static_cast<magnitude_type>(extents_.extent(r)));
      }
      return true;
    }
    /// True when every index in [0, required_span_size()) is some element's: unique, and
    /// no gap, which also means a zero offset.
    DLPM_HOST_DEVICE constexpr bool is_exhaustive() const noexcept {
      if (!is_unique()) return false;
      index_type size = 1;
      for (rank_type r = 0; r < rank_; ++r) size = static_cast<index_type>(size * extents_.extent(r));
      return size == required_span_size();
    }
    DLPM_HOST_DEVICE static constexpr bool is_strided() noexcept { return true; }

    template <class OtherExtents>
    DLPM_HOST_DEVICE friend constexpr bool operator==(const mapping& a,
                                                      const typename layout_stride_relaxed::template mapping<OtherExtents>& b) noexcept {
      if (a.extents() != b.extents() || a.offset() != b.offset()) return false;
      for (rank_type r = 0; r < rank_; ++r)
        if (a.stride(r) != b.stride(r)) return false;
      return true;
    }

   private:
    template <std::size_t... R, class... Indices>
    DLPM_HOST_DEVICE constexpr index_type apply(std::index_sequence<R...>, Indices... i) const noexcept {
      return static_cast<index_type>(offset_ + ((i * strides_.values[R]) + ... + index_type{0}));
    }
    // |v|, unsigned: the magnitude of the most negative stride (INT64_MIN, which an extent-1
    // dimension may carry) has no signed value.
    using magnitude_type = std::make_unsigned_t<index_type>;
    DLPM_HOST_DEVICE static constexpr magnitude_type magnitude(index_type v) noexcept {
      if constexpr (std::is_signed_v<index_type>)
        return v < 0 ? static_cast<magnitude_type>(magnitude_type{0} - static_cast<magnitude_type>(v)) : static_cast<magnitude_type>(v);
      else return v;
    }
    DLPM_HOST_DEVICE constexpr bool less(rank_type a, rank_type b) const noexcept {
      const magnitude_type sa = magnitude(strides_.values[a]), sb = magnitude(strides_.values[b]);
      return sa < sb || (sa == sb && extents_.extent(a) < extents_.extent(b));
    }
    extents_type extents_;
    stride_array strides_;
    index_type offset_;
  };
};

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
