// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one-pass import of the common tensor (fast_import), taken by to_mdspan<M>(t) without
// options; whatever it declines goes to the ordered checks (import_ordered.hpp).
#ifndef DLPACK_MDSPAN_IMPORT_FAST_HPP
#define DLPACK_MDSPAN_IMPORT_FAST_HPP

#include <dlpack_mdspan/checked_arithmetic.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/import_targets.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// The common tensor in one pass: to_mdspan<M>(t) without options, a non-empty tensor of
// exactly M's rank and dtype with explicit strides, on a device M's accessor accepts, data
// and byte_offset aligned. It accepts only tensors that every ordered check below accepts
// too, and fills the same view; for anything else it says no and import_view_ordered runs
// those checks, which find and word the refusal (so every refusal keeps its errc and
// message). It is conservative where that is cheaper: it also says no to tensors the
// ordered checks accept (NULL strides, empty tensors, strided layouts with an extent or
// |stride| beyond the range bound below, data misaligned on a device without plain
// addresses), which then take the ordered path. The differential test
// (tests/reference/differential.hpp) imports every generated tensor both with options
// (the ordered path) and without them (this one) and holds both to the reference model.
// What the fast path learns beyond the tensor's own fields. The strides are not kept here:
// the mapping reads them from the tensor (fast_strides), because a stride array stored here
// and then copied into the mapping with wider loads stalls store-to-load forwarding (13.0
// against 4.3 ns for a rank-2 layout_stride import, measured).
template <class M>
struct fast_view {
  typename M::data_handle_type handle = nullptr;
  typename M::index_type offset = 0;  // relaxed
};

// The strided layouts' strides as the mapping takes them (layout_stride: in its own array
// type, std:: or cuda::std::): layout_stride's with 1 for an extent-1 dimension (its stride
// never matters, and 1 keeps the mapping's preconditions), layout_stride_relaxed's as they are.
template <class M>
struct fast_stride_array {
  using type = std::array<typename M::index_type, M::rank()>;
};
template <strided_layout_mdspan M>
struct fast_stride_array<M> {
  using type = std::remove_cvref_t<decltype(std::declval<const typename M::mapping_type&>().strides())>;
};
template <class M, std::size_t... R>
DLPM_HOT_INLINE inline typename fast_stride_array<M>::type fast_strides(const DLTensor& t, std::index_sequence<R...>) noexcept {
  using I = typename M::index_type;
  if constexpr (relaxed_layout_mdspan<M>) return {static_cast<I>(t.strides[R])...};
  else return {static_cast<I>(t.shape[R] == 1 ? 1 : t.strides[R])...};
}

template <class M>
constexpr bool has_fast_import() {
  using T = typename M::element_type;
  constexpr stride_rule rule = stride_rule_of<M>();
  if constexpr (M::rank() == 0 || storage_itemsize(dtype_v<T>, false) != sizeof(T)) return false;
  else if constexpr (relaxed_layout_mdspan<M> || strided_layout_mdspan<M>) return true;
  else return compact_layout_mdspan<M> && (rule == stride_rule::row_major || rule == stride_rule::column_major);
}

template <class M>
DLPM_HOT_INLINE inline bool fast_import(const DLTensor& t, fast_view<M>& out) noexcept {
  using T = typename M::element_type;
  using I = typename M::index_type;
  using extents_type = typename M::extents_type;
  constexpr std::size_t rank = M::rank();
  constexpr std::int64_t item = static_cast<std::int64_t>(sizeof(T));
  constexpr stride_rule rule = stride_rule_of<M>();
  // The largest extent, stride and span that fit both int64 and the view's index_type.
  constexpr std::int64_t index_max = std::in_range<std::int64_t>(std::numeric_limits<I>::max())
                                         ? static_cast<std::int64_t>(std::numeric_limits<I>::max())
                                         : std::numeric_limits<std::int64_t>::max();
  // The strided layouts' range bound: every extent and |stride| at most 2^bits, with
  // rank * 2^(2 bits) <= 2^61, so no step, reach or span sum below can overflow int64
  // (nor the index_type); bigger tensors take the ordered path, which checks each product.
  constexpr int bits = std::min((61 - static_cast<int>(std::bit_width(rank - 1))) / 2, std::numeric_limits<I>::digits - 1);
  constexpr std::int64_t span_bound = static_cast<std::int64_t>(rank) << (2 * bits);

  // ndim, dtype (one 32-bit compare), device type and id
  if (t.ndim != static_cast<std::int32_t>(rank) || packed_dtype(t.dtype) != packed_dtype(dtype_v<T>)) return false;
  if (!device_traits<typename M::accessor_type>::accepts(t.device.device_type) || t.device.device_id < 0) return false;
  // shape and strides present and aligned for int64_t
  const std::int64_t* const shape = t.shape;
  const std::int64_t* const strides = t.strides;
  if (shape == nullptr || strides == nullptr ||
      ((reinterpret_cast<std::uintptr_t>(shape) | reinterpret_cast<std::uintptr_t>(strides)) % alignof(std::int64_t)) != 0)
    return false;
  // data non-NULL and aligned for T; byte_offset at most INT64_MAX and a whole number of
  // elements (so data + byte_offset is aligned too: alignof(T) divides sizeof(T))
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  const std::uint64_t byte_offset = t.byte_offset;
  if (base == 0 || base % alignof(T) != 0 || byte_offset > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
      byte_offset % sizeof(T) != 0)
    return false;
  const auto offset_items = static_cast<std::int64_t>(byte_offset / sizeof(T));

  // Non-zero where extent e of dimension r differs from M's static extent there.
  auto static_mismatch = [](std::size_t r, std::uint64_t e) -> std::uint64_t {
    const std::size_t fixed = extents_type::static_extent(r);
    return fixed == std::numeric_limits<std::size_t>::max() /* dynamic_extent */ ? 0 : e ^ static_cast<std::uint64_t>(fixed);
  };
  // Each extent in [1, index_max] (non-empty, fits the index_type) and equal to a static one.
  auto extent_ok = [&](std::size_t r, std::int64_t e) {
    return e >= 1 && e <= index_max && static_mismatch(r, static_cast<std::uint64_t>(e)) == 0;
  };

  std::int64_t low = 0, high = 0;  // the lowest and highest element index reached
  std::int64_t count = 0;          // high + 1: the elements from index 0 to the highest
  if constexpr (compact_layout_mdspan<M>) {
    // The strides must be the compact layout's; then the span is exactly the element
    // count, which the running product (each dimension's compact stride) ends as.
    std::int64_t n = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t r = rule == stride_rule::row_major ? rank - 1 - i : i;
      const std::int64_t e = shape[r];
      if (!extent_ok(r, e)) return false;
      if ((e != 1 && strides[r] != n) || mul_overflows(n, e, &n)) return false;
    }
    if (n > index_max) return false;  // numel fits the index_type
    count = n;
  } else if constexpr (strided_layout_mdspan<M>) {
    // Positive strides, the span summed from the innermost dimension out, and uniqueness
    // in that order (each stride steps past the reach of the dimension inside it). Inside
    // the range bound nothing below overflows, so the pass is plain unsigned arithmetic
    // (wrapping, never undefined, for the tensors the bound then sends away). A unique
    // mapping reaches numel distinct indices in [0, high], so numel <= high + 1: the
    // element count fits wherever the span does, and needs no product of its own.
    std::uint64_t range = 0;       // every e - 1 and s - 1 below 2^bits
    std::uint64_t statics = 0;     // non-zero: an extent differs from M's static one
    std::uint64_t misordered = 0;  // top bit: a stride inside the reach of the dimension inside it
    std::uint64_t span = 0, reach = 0;
    for (std::size_t r = rank; r-- > 0;) {
      const auto e = static_cast<std::uint64_t>(shape[r]);
      const auto s = static_cast<std::uint64_t>(strides[r]);
      range |= (e - 1) | (s - 1);
      statics |= static_mismatch(r, e);
      const std::uint64_t step = (e - 1) * s;
      span += step;
      misordered |= s - reach;
      reach = step + s;
    }
    if ((range >> bits) != 0 || statics != 0) return false;
    high = static_cast<std::int64_t>(span);
    if constexpr (span_bound >= index_max) {
      if (high >= index_max) return false;  // high + 1 must fit the index_type
    }
    if ((misordered >> 63) != 0) {  // another order may still be unique: the full check decides
      error err;
      if (!layout_stride_unique(t, fast_strides<M>(t, std::make_index_sequence<rank>{}), &err)) return false;
    }
    count = high + 1;
  } else {
    // layout_stride_relaxed: any stride in [-2^bits, 2^bits) (INT64_MIN never); the span
    // from the signed extremes. Without a negative stride the lowest index is 0 and the
    // highest the plain sum, as for layout_stride.
    std::uint64_t range = 0, statics = 0, span = 0;
    std::int64_t negative = 0;  // below zero: some stride is
    // Strides may repeat elements here, so the element count is not bounded by the span:
    // it must fit the index_type on its own (the mapping's precondition). Under the range
    // bound it is at most 2^(rank * bits): no product to check where that fits (ranks 1 and 2
    // with a 64-bit index_type); elsewhere a product tree, not a serial chain of checked
    // multiplies (bounded_product_above).
    constexpr bool numel_fits = rank * bits < 63 && (std::int64_t{1} << (rank * bits)) <= index_max;
    bool numel_too_big = false;
    if constexpr (!numel_fits) numel_too_big = bounded_product_above<rank, bits>(shape, static_cast<std::uint64_t>(index_max));
    for (std::size_t r = 0; r < rank; ++r) {
      const auto e = static_cast<std::uint64_t>(shape[r]);
      const std::int64_t s = strides[r];
      if constexpr (std::is_signed_v<I>) {
        range |= (e - 1) | ((static_cast<std::uint64_t>(s) + (std::uint64_t{1} << bits)) >> 1);
        negative |= s;
      } else {  // no negative stride fits an unsigned index_type
        range |= (e - 1) | static_cast<std::uint64_t>(s);
      }
      statics |= static_mismatch(r, e);
      span += (e - 1) * static_cast<std::uint64_t>(s);
    }
    if ((range >> bits) != 0 || statics != 0 || numel_too_big) return false;
    if (negative >= 0) {
      high = static_cast<std::int64_t>(span);
    } else {
      for (std::size_t r = 0; r < rank; ++r) {
        const std::int64_t step = (shape[r] - 1) * strides[r];  // in range: the bound held
        (step < 0 ? low : high) += step;
      }
    }
    count = high + 1;
  }

  // The byte span [first_byte, last_byte) from data must be representable, and must not
  // wrap around the address space (nor start at address 0: base is not NULL, and only the
  // relaxed layout reaches below data).
  std::int64_t end = 0;
  std::uintptr_t last_address = 0;
  if constexpr (!compact_layout_mdspan<M> && span_bound <= static_cast<std::int64_t>((std::uint64_t{1} << 63) / item)) {
    // The range bound keeps count * item at most 2^63, so the sum with byte_offset (at
    // most INT64_MAX) cannot wrap uint64: one test for the int64 range, one carry.
    const std::uint64_t last_byte = byte_offset + static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(item);
    if (last_byte > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        __builtin_add_overflow(base, static_cast<std::uintptr_t>(last_byte), &last_address))
      return false;
    end = offset_items + count;  // last_byte / item
  } else {
    std::int64_t last_byte = 0;
    if (add_overflows(offset_items, count, &end) || mul_overflows(end, item, &last_byte) ||
        __builtin_add_overflow(base, static_cast<std::uintptr_t>(last_byte), &last_address))
      return false;
  }
  if constexpr (relaxed_layout_mdspan<M>) {
    if (low == 0) {  // no stride below zero: the view starts at data + byte_offset, at or above data
      if (end > index_max) return false;  // the span, offset_items + high + 1, fits the index_type
      out.offset = static_cast<I>(offset_items);
      out.handle = static_cast<T*>(t.data);
      return true;
    }
    std::int64_t first = 0, first_byte = 0;
    if (add_overflows(offset_items, low, &first) || mul_overflows(first, item, &first_byte) ||
        (first_byte <= 0 && base <= magnitude_below_zero(first_byte)))
      return false;
    // Rebase on the lowest element when the view reaches below data (a mapping yields no
    // negative index); the element offset and the span must fit the index_type.
    const std::int64_t shift = first < 0 ? first : 0;
    std::int64_t mapped_offset = 0, span = 0;
    if (sub_overflows(offset_items, shift, &mapped_offset) || add_overflows(mapped_offset, high, &span) || span >= index_max)
      return false;
    out.offset = static_cast<I>(mapped_offset);
    out.handle = offset_pointer<T>(t.data, first_byte < 0 ? first_byte : 0);
  } else {
    out.handle = offset_pointer<T>(t.data, static_cast<std::int64_t>(byte_offset));
  }
  return true;
}

// The view the fast path accepted, built where it is returned.
template <class M>
DLPM_HOT_INLINE inline M fast_result(const DLTensor& t, const fast_view<M>& fast) noexcept {
  using mapping_type = typename M::mapping_type;
  constexpr auto ranks = std::make_index_sequence<M::rank()>{};
  const typename M::extents_type extents = make_extents<M>(t, ranks);
  if constexpr (relaxed_layout_mdspan<M>) return make_view<M>(fast.handle, mapping_type(extents, fast_strides<M>(t, ranks), fast.offset));
  else if constexpr (strided_layout_mdspan<M>) return make_view<M>(fast.handle, mapping_type(extents, fast_strides<M>(t, ranks)));
  else return make_view<M>(fast.handle, mapping_type(extents));
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
