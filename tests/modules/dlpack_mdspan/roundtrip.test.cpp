// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Property: export → import gives back the same view (same extents, and every index
// addresses the same element) for every dtype, layout and shape.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;

namespace {

// Calls f(index_array) for every index of `e` (row-major order).
template <class Extents, class F>
void for_each_index(const Extents& e, F&& f) {
  constexpr std::size_t rank = Extents::rank();
  std::array<typename Extents::index_type, rank> idx{};
  for (std::size_t r = 0; r < rank; ++r)
    if (e.extent(r) == 0) return;
  while (true) {
    f(idx);
    std::size_t r = rank;
    while (r > 0) {
      --r;
      if (++idx[r] < e.extent(r)) break;
      idx[r] = 0;
      if (r == 0) return;
    }
    if (rank == 0) return;
  }
}

template <class M>
void check_roundtrip(const M& original) {
  auto owner = dm::to_dlpack_tensor(original);
  const DLTensor t = owner.get();
  auto back = dm::try_to_mdspan<M>(t);
  REQUIRE_MESSAGE(back.has_value(), back.error().what().c_str());
  CHECK(back->extents() == original.extents());
  std::size_t mismatches = 0, visited = 0;
  for_each_index(original.extents(), [&](const auto& i) {
    ++visited;
    if (&(*back)[i] != &original[i]) ++mismatches;
  });
  CHECK(visited == original.size());
  CHECK(mismatches == 0);
}

template <class T>
void roundtrip_all_layouts() {
  alignas(64) static T storage[256];
  using E1 = std::dextents<std::int64_t, 1>;
  using E2 = std::dextents<std::int64_t, 2>;
  using E3 = std::dextents<int, 3>;
  using R = dm::layout_stride_relaxed;
  CAPTURE(dm::dtype_v<T>.code);
  CAPTURE(dm::dtype_v<T>.bits);
  // rank 0, static extents
  check_roundtrip(std::mdspan<T, std::extents<int>>(storage));
  check_roundtrip(std::mdspan<T, std::extents<int, 2, 3>>(storage));
  check_roundtrip(std::mdspan<const T, std::extents<std::size_t, 4, 1, 2>, std::layout_left>(storage));
  // right and left, with empty and size-1 shapes
  for (auto shape : {std::array<std::int64_t, 2>{2, 3}, {0, 3}, {3, 0}, {1, 4}, {4, 1}, {1, 1}}) {
    check_roundtrip(std::mdspan<T, E2>(storage, shape[0], shape[1]));
    check_roundtrip(std::mdspan<T, E2, std::layout_left>(storage, shape[0], shape[1]));
    check_roundtrip(std::mdspan<T, E2, R>(storage, R::mapping<E2>(E2(shape[0], shape[1]))));
  }
  check_roundtrip(std::mdspan<T, E3>(storage, 3, 1, 2));
  // layout_stride: padded rows, every other element, a size-1 dimension with a big stride
  check_roundtrip(std::mdspan<T, E2, std::layout_stride>(storage, std::layout_stride::mapping(E2(3, 5), std::array<std::int64_t, 2>{8, 1})));
  check_roundtrip(std::mdspan<T, E1, std::layout_stride>(storage, std::layout_stride::mapping(E1(7), std::array<std::int64_t, 1>{3})));
  check_roundtrip(std::mdspan<T, E3, std::layout_stride>(storage, std::layout_stride::mapping(E3(2, 1, 3), std::array<int, 3>{3, 50, 1})));
  // relaxed: reversed rows with an offset, broadcast, reversed columns
  check_roundtrip(std::mdspan<T, E2, R>(storage, R::mapping<E2>(E2(3, 4), std::array<std::int64_t, 2>{-4, 1}, 8)));
  check_roundtrip(std::mdspan<T, E2, R>(storage, R::mapping<E2>(E2(3, 4), std::array<std::int64_t, 2>{0, 1})));
  check_roundtrip(std::mdspan<T, E2, R>(storage, R::mapping<E2>(E2(3, 4), std::array<std::int64_t, 2>{4, -1}, 3)));
  check_roundtrip(std::mdspan<T, E2, R>(storage, R::mapping<E2>(E2(3, 4), std::array<std::int64_t, 2>{4, 1}, 20)));
}

}  // namespace

TEST_CASE_TEMPLATE("round trip for every dtype and layout", T, bool, char, signed char, unsigned char, std::int16_t,
                   std::uint16_t, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double,
                   std::complex<float>, std::complex<double>) {
  roundtrip_all_layouts<T>();
}

#if defined(__SIZEOF_INT128__)
TEST_CASE("round trip for 128-bit integers") {
  roundtrip_all_layouts<__int128>();
  roundtrip_all_layouts<unsigned __int128>();
}
#endif

#if DLPM_HAS_FLOAT16 && DLPM_HAS_BF16
TEST_CASE("round trip for _Float16 and __bf16") {
  roundtrip_all_layouts<_Float16>();
  roundtrip_all_layouts<__bf16>();
}
#endif

TEST_CASE("a relaxed view with the minimal offset round-trips to the identical mapping") {
  int buf[12] = {};
  using E2 = std::dextents<std::int64_t, 2>;
  using R = dm::layout_stride_relaxed;
  std::mdspan<int, E2, R> md(buf, R::mapping<E2>(E2(3, 4), std::array<std::int64_t, 2>{-4, 1}, 8));
  auto owner = dm::to_dlpack_tensor(md);
  auto back = dm::to_mdspan<std::mdspan<int, E2, R>>(owner.get());
  CHECK(back.data_handle() == md.data_handle());
  CHECK(back.mapping() == md.mapping());
}

namespace {

// A user's row-major layout whose members are not constexpr: nothing in the LayoutMapping
// requirements asks them to be, and the docs ask only is_strided() and stride(r). It once
// failed to compile (the compile-time probe of compact layouts could not evaluate it).
struct runtime_row_major {
  template <class E>
  struct mapping {
    using extents_type = E;
    using index_type = typename E::index_type;
    using size_type = typename E::size_type;
    using rank_type = typename E::rank_type;
    using layout_type = runtime_row_major;
    E ext{};
    mapping() = default;
    mapping(const E& e) : ext(e) {}  // NOLINT: implicit, as the standard layouts' are
    const E& extents() const { return ext; }
    index_type required_span_size() const { return ext.extent(0) * ext.extent(1); }
    index_type operator()(index_type i, index_type j) const { return i * ext.extent(1) + j; }
    static constexpr bool is_always_unique() { return true; }
    static constexpr bool is_always_exhaustive() { return true; }
    static constexpr bool is_always_strided() { return true; }
    static constexpr bool is_unique() { return true; }
    static constexpr bool is_exhaustive() { return true; }
    static constexpr bool is_strided() { return true; }
    index_type stride(rank_type r) const { return r == 0 ? ext.extent(1) : 1; }
    friend bool operator==(const mapping&, const mapping&) = default;
  };
};

}  // namespace

TEST_CASE("a user's layout whose mapping is not constexpr exports, imports and round-trips") {
  using M = std::mdspan<float, std::dextents<int, 2>, runtime_row_major>;
  float data[6] = {0, 1, 2, 3, 4, 5};
  const M m(data, 2, 3);
  auto owner = dm::to_dlpack_tensor(m);
  const DLTensor& t = owner.get();
  REQUIRE(t.strides != nullptr);
  CHECK(t.strides[0] == 3);
  CHECK(t.strides[1] == 1);
  check_roundtrip(m);
  // Its strides are read at run time, so a transposed tensor is refused, not misread.
  std::int64_t shape[2] = {2, 3}, transposed[2] = {1, 2};
  DLTensor other = t;
  other.shape = shape;
  other.strides = transposed;
  CHECK_FALSE(dm::try_to_mdspan<M>(other).has_value());
  // Empty: its strides need not fit anything, and nothing is addressed.
  std::int64_t empty_shape[2] = {0, 3};
  other.shape = empty_shape;
  CHECK(dm::try_to_mdspan<M>(other).has_value());
}
