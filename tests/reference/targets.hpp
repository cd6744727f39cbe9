// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The mdspan types the differential test imports into: what the model needs to know
// about each (target_desc), and how to observe an import (the only templated code).
#pragma once

#include <mdspan>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include "reference_model.hpp"
#include "tensor_generator.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace dlpm_differential {

namespace dm = dlpack_mdspan;
namespace ref = dlpm_reference;
using ref::i128;

struct address_check {
  std::array<std::int64_t, 4> index{};
  i128 address = 0;  // data_handle() + mapping()(index) * sizeof(T), exactly
};

// What try_to_mdspan<M> did.
struct observation {
  bool accepted = false;
  dm::errc code = dm::errc::ok;
  bool message_empty = false;
  std::array<i128, 4> extents{};
  std::array<i128, 4> strides{};  // mapping().stride(r)
  i128 offset = 0;                // layout_stride_relaxed's offset()
  std::uintptr_t handle = 0;
  int num_addresses = 0;
  std::array<address_check, 24> addresses{};
  // Without requirements: whether the silent instance of the import rules (to_mdspan's
  // inline success path) accepted; it must agree with the worded verdict above.
  bool silent_accepted = false;
};

// requirements == nullptr: try_to_mdspan<M>(t), the overload without requirements (the
// silent instance of the import rules inline, the worded one on a refusal), or with
// `throwing` to_mdspan<M>(t), which runs the silent instance its own way; else
// try_view<M>(t, flags, *requirements), the tensor's DLPack flags (padded sub-byte storage)
// beside them.
using observe_fn = observation (*)(const DLTensor&, const dm::tensor_requirements*, std::uint64_t flags, bool throwing,
                                   std::uint64_t);

struct target_entry {
  ref::target_desc desc;
  ref::target_hint hint;
  observe_fn observe;
};

// The indices to check in an accepted, non-empty view: first, last, two random ones, and
// every index when there are at most 16.
inline int pick_indices(const std::array<i128, 4>& e, int rank, std::uint64_t aux, std::array<address_check, 24>& out) {
  i128 numel = 1;
  for (int r = 0; r < rank; ++r) numel *= e[static_cast<std::size_t>(r)];
  int n = 0;
  if (numel <= 16) {
    for (i128 k = 0; k < numel; ++k) {
      i128 rest = k;
      for (int r = rank - 1; r >= 0; --r) {
        const auto ur = static_cast<std::size_t>(r);
        out[static_cast<std::size_t>(n)].index[ur] = static_cast<std::int64_t>(rest % e[ur]);
        rest /= e[ur];
      }
      ++n;
    }
    return n;
  }
  ref::rng_source rng(aux ^ 0x1dc5);
  for (int which = 0; which < 4; ++which) {
    auto& idx = out[static_cast<std::size_t>(n++)].index;
    for (std::size_t r = 0; r < static_cast<std::size_t>(rank); ++r) {
      const auto last = static_cast<std::uint64_t>(e[r] - 1);
      idx[r] = static_cast<std::int64_t>(which == 0 ? 0 : which == 1 ? last : last == UINT64_MAX ? 0 : rng.below(last + 1));
    }
  }
  return n;
}

template <class L>
constexpr ref::layout_kind layout_of() {
  if constexpr (std::is_same_v<L, std::layout_right>) return ref::layout_kind::right;
  else if constexpr (std::is_same_v<L, std::layout_left>) return ref::layout_kind::left;
  else if constexpr (std::is_same_v<L, std::layout_stride>) return ref::layout_kind::stride;
  else return ref::layout_kind::relaxed;
}

template <class M>
observation observe(const DLTensor& t, const dm::tensor_requirements* o, std::uint64_t flags, bool throwing, std::uint64_t aux) {
  using index_type = typename M::index_type;
  constexpr std::size_t rank = M::rank();
  observation ob;
  if (o == nullptr) {
    dm::detail::import_plan<M> plan;
    ob.silent_accepted = dm::detail::import_rules<M, false>(t, flags, dm::detail::no_requirements, plan, dm::detail::silent{});
  }
  std::optional<M> thrown;
  if (o == nullptr && throwing) {
    try {
      thrown.emplace(dm::to_mdspan<M>(t));
    } catch (const dm::dlpack_error& e) {
      ob.code = e.code();
      ob.message_empty = std::string_view(e.what()).empty();
      return ob;
    }
  }
  auto res = thrown ? dm::result<M>(*thrown) : o != nullptr ? dm::try_view<M>(t, flags, *o) : dm::try_to_mdspan<M>(t);
  if (!res) {
    ob.code = res.error().code();
    ob.message_empty = res.error().message().empty();
    return ob;
  }
  ob.accepted = true;
  const M& m = *res;
  ob.handle = reinterpret_cast<std::uintptr_t>(m.data_handle());
  // 0 when any extent is 0: an accepted empty view may have huge other extents, whose
  // product overflows even __int128 (found by fuzz_differential).
  i128 numel = 1;
  for (std::size_t r = 0; r < rank; ++r) ob.extents[r] = static_cast<i128>(m.extent(r));
  for (std::size_t r = 0; r < rank; ++r)
    if (ob.extents[r] == 0) numel = 0;
  for (std::size_t r = 0; r < rank && numel != 0; ++r) numel *= ob.extents[r];  // fits int64: the view is non-empty
  // layout_right/left compute stride(r) as a product of extents, which overflows
  // index_type for some empty views (extents {0, 2^40, 2^40}): only ask when non-empty.
  constexpr auto layout = layout_of<typename M::layout_type>();
  if constexpr (rank > 0)
    if (numel != 0 || layout == ref::layout_kind::stride || layout == ref::layout_kind::relaxed)
      for (std::size_t r = 0; r < rank; ++r) ob.strides[r] = static_cast<i128>(m.mapping().stride(r));
  if constexpr (layout == ref::layout_kind::relaxed) ob.offset = static_cast<i128>(m.mapping().offset());
  if (numel == 0) return ob;
  ob.num_addresses = pick_indices(ob.extents, static_cast<int>(rank), aux, ob.addresses);
  for (int k = 0; k < ob.num_addresses; ++k) {
    auto& a = ob.addresses[static_cast<std::size_t>(k)];
    const index_type mapped = [&]<std::size_t... R>(std::index_sequence<R...>) {
      return m.mapping()(static_cast<index_type>(a.index[R])...);
    }(std::make_index_sequence<rank>{});
    a.address = static_cast<i128>(ob.handle) + static_cast<i128>(mapped) * static_cast<i128>(sizeof(typename M::element_type));
  }
  return ob;
}

template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, std::int8_t>) return "int8_t";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8_t";
  else if constexpr (std::is_same_v<T, std::int16_t>) return "int16_t";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32_t";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32_t";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64_t";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64_t/size_t";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else return "user type";
}

// A target M, described for the model.
template <class M>
target_entry make_entry(const char* element_name = nullptr) {
  using T = typename M::element_type;
  using I = typename M::index_type;
  using E = typename M::extents_type;
  constexpr int rank = static_cast<int>(M::rank());
  static const std::string name = [&] {
    std::string s = std::string("std::mdspan<") + (element_name ? element_name : type_name<T>()) + ", extents<" + type_name<I>();
    for (std::size_t r = 0; r < static_cast<std::size_t>(rank); ++r)
      s += E::static_extent(r) == std::dynamic_extent ? std::string(", dyn") : ", " + std::to_string(E::static_extent(r));
    return s + ">, " + ref::layout_name(layout_of<typename M::layout_type>()) + ">";
  }();
  std::array<i128, 4> static_extent{-1, -1, -1, -1};
  for (std::size_t r = 0; r < static_cast<std::size_t>(rank); ++r)
    if (E::static_extent(r) != std::dynamic_extent) static_extent[r] = static_cast<i128>(E::static_extent(r));
  ref::target_desc desc{name.c_str(),
                        dm::dtype_v<T>,
                        sizeof(T),
                        alignof(T),
                        rank,
                        static_cast<i128>(std::numeric_limits<I>::min()),
                        static_cast<i128>(std::numeric_limits<I>::max()),
                        layout_of<typename M::layout_type>(),
                        static_extent,
                        &dm::device_traits<typename M::accessor_type>::accepts};
  ref::target_hint hint{rank, desc.dtype, sizeof(T), desc.layout, static_extent,
                        static_cast<std::int32_t>(dm::device_traits<typename M::accessor_type>::device_type)};
  return target_entry{desc, hint, &observe<M>};
}

using index_types = std::tuple<std::int8_t, std::uint8_t, std::int16_t, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, std::size_t>;
using element_types = std::tuple<std::int8_t, std::uint8_t, std::int16_t, float, double>;
using layouts = std::tuple<std::layout_right, std::layout_left, std::layout_stride, dm::layout_stride_relaxed>;

// Every (index type, rank 0..4) for one layout; the element type rotates so that each
// (index type, layout) pair meets all five element types across the ranks.
template <std::size_t L, std::size_t K>
target_entry grid_entry() {
  constexpr std::size_t ii = K % 8, rank = K / 8, ti = (ii + rank + L) % 5;
  using M = std::mdspan<std::tuple_element_t<ti, element_types>, std::dextents<std::tuple_element_t<ii, index_types>, rank>,
                        std::tuple_element_t<L, layouts>>;
  return make_entry<M>();
}

template <std::size_t L, std::size_t... K>
std::vector<target_entry> grid(std::index_sequence<K...>) {
  return {grid_entry<L, K>()...};
}

// Defined in targets_<layout>.cpp (one per layout, to build in parallel) and
// targets_extra.cpp (static extents, sub-byte element types).
std::vector<target_entry> targets_right();
std::vector<target_entry> targets_left();
std::vector<target_entry> targets_stride();
std::vector<target_entry> targets_relaxed();
std::vector<target_entry> targets_extra();

}  // namespace dlpm_differential
