// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// import_targets.hpp: which target types to_mdspan builds, grouped by how their mapping is
// constructed (relaxed, compact, strided), what each requires of a tensor's strides, and the
// strides a view gets where the tensor's own cannot be taken as they are: an extent-1
// dimension's, an empty tensor's (std::layout_stride), the compact mapping's range, and
// std::layout_stride's uniqueness.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::f32;
using dlpm_test::tensor_builder;

namespace {
template <class I, std::size_t R>
using right = std::mdspan<float, std::dextents<I, R>>;
template <class I, std::size_t R>
using left = std::mdspan<float, std::dextents<I, R>, std::layout_left>;
template <class I, std::size_t R>
using strided = std::mdspan<float, std::dextents<I, R>, std::layout_stride>;
template <class I, std::size_t R>
using relaxed = std::mdspan<float, std::dextents<I, R>, dm::layout_stride_relaxed>;

template <class M>
dm::errc refusal(const DLTensor& t) {
  const auto r = dm::try_to_mdspan<M>(t);
  return r ? dm::errc::ok : r.error().code();
}
template <class M>
std::string message(const DLTensor& t) {
  const auto r = dm::try_to_mdspan<M>(t);
  return r ? std::string("ok") : std::string(r.error().what());
}
bool has_text(const std::string& haystack, std::string_view needle) { return haystack.find(needle) != std::string::npos; }

// std::layout_stride's precondition: positive strides and some order P of the dimensions in
// which stride(P[i]) >= stride(P[i-1]) * extent(P[i-1]) (a zero extent restarts the product,
// so the order need not be the strides'). Every order is tried: the ranks here are small.
template <class M>
bool layout_stride_precondition_holds(const M& v) {
  std::array<std::size_t, M::rank()> order{};
  for (std::size_t r = 0; r < M::rank(); ++r) {
    order[r] = r;
    if (v.stride(r) <= 0) return false;
  }
  do {
    bool holds = true;
    for (std::size_t i = 1; i < M::rank() && holds; ++i) {
      const auto prev = order[i - 1];
      holds = static_cast<std::int64_t>(v.stride(order[i])) >=
              static_cast<std::int64_t>(v.stride(prev)) * static_cast<std::int64_t>(v.extent(prev));
    }
    if (holds) return true;
  } while (std::next_permutation(order.begin(), order.end()));
  return false;
}
}  // namespace

TEST_CASE("the target groups: relaxed, compact and strided, each layout in exactly one") {
  static_assert(dm::relaxed_layout_mdspan<relaxed<std::int64_t, 2>>);
  static_assert(!dm::compact_layout_mdspan<relaxed<std::int64_t, 2>>);
  static_assert(!dm::strided_layout_mdspan<relaxed<std::int64_t, 2>>);

  static_assert(dm::compact_layout_mdspan<right<int, 2>>);
  static_assert(dm::compact_layout_mdspan<left<int, 3>>);
  static_assert(dm::compact_layout_mdspan<right<int, 0>>);
  static_assert(!dm::relaxed_layout_mdspan<right<int, 2>> && !dm::strided_layout_mdspan<right<int, 2>>);

  static_assert(dm::strided_layout_mdspan<strided<int, 2>>);
  static_assert(!dm::compact_layout_mdspan<strided<int, 2>> && !dm::relaxed_layout_mdspan<strided<int, 2>>);

  static_assert(dm::importable_mdspan<right<int, 2>> && dm::importable_mdspan<left<int, 1>> &&
                dm::importable_mdspan<strided<std::int8_t, 5>> && dm::importable_mdspan<relaxed<int, 3>>);
  // Not an mdspan over a pointer: nothing to_mdspan builds.
  static_assert(!dm::importable_mdspan<int>);
  static_assert(!dm::importable_mdspan<std::vector<float>>);
}

TEST_CASE("what each group requires of the strides: compact ones the mapping's, layout_stride positive ones") {
  float buf[64] = {};
  tensor_builder row_major(buf, f32, {2, 3}, {3, 1});
  CHECK(refusal<right<std::int64_t, 2>>(row_major.get()) == dm::errc::ok);
  CHECK(refusal<left<std::int64_t, 2>>(row_major.get()) == dm::errc::non_compact_strides);
  tensor_builder column_major(buf, f32, {2, 3}, {1, 2});
  CHECK(refusal<left<std::int64_t, 2>>(column_major.get()) == dm::errc::ok);
  CHECK(refusal<right<std::int64_t, 2>>(column_major.get()) == dm::errc::non_compact_strides);
  // A negative stride: layout_stride cannot hold it; layout_stride_relaxed can.
  tensor_builder reversed(buf, f32, {2, 3}, {-3, 1}, 3 * sizeof(float));
  CHECK(refusal<strided<std::int64_t, 2>>(reversed.get()) == dm::errc::non_positive_stride);
  CHECK(refusal<relaxed<std::int64_t, 2>>(reversed.get()) == dm::errc::ok);
}

TEST_CASE("an extent-1 dimension's stride: 1 for layout_stride, the producer's for layout_stride_relaxed") {
  float buf[64] = {};
  tensor_builder b(buf, f32, {2, 1, 3}, {3, 7, 1});
  const auto s = dm::try_to_mdspan<strided<std::int64_t, 3>>(b.get());
  REQUIRE_MESSAGE(s.has_value(), message<strided<std::int64_t, 3>>(b.get()));
  CHECK(s->stride(0) == 3);
  CHECK(s->stride(1) == 1);
  CHECK(s->stride(2) == 1);
  const auto r = dm::try_to_mdspan<relaxed<std::int64_t, 3>>(b.get());
  REQUIRE(r.has_value());
  CHECK(r->stride(1) == 7);

  // NULL strides are row-major, with the same rule for extent 1.
  auto implicit = tensor_builder::without_strides(buf, f32, {2, 1, 3});
  const auto n = dm::try_to_mdspan<strided<std::int64_t, 3>>(implicit.get());
  REQUIRE(n.has_value());
  CHECK(n->stride(0) == 3);
  CHECK(n->stride(1) == 1);
  CHECK(n->stride(2) == 1);
}

TEST_CASE("layout_stride_relaxed from NULL strides: row-major at every rank, the offset kept, an empty tensor's saturated") {
  // Above rank 1 the relaxed view computes these strides out of line (view_strides).
  float buf[512] = {};
  auto check_row_major = [](const auto& v, const std::vector<std::int64_t>& want, std::int64_t offset) {
    REQUIRE(v.rank() == want.size());
    for (std::size_t r = 0; r < want.size(); ++r) CHECK(v.stride(r) == want[r]);
    CHECK(v.mapping().offset() == offset);
  };
  auto rank2 = tensor_builder::without_strides(buf, f32, {3, 5});
  check_row_major(dm::to_mdspan<relaxed<std::int64_t, 2>>(rank2.get()), {5, 1}, 0);
  auto rank4 = tensor_builder::without_strides(buf, f32, {2, 3, 4, 5});
  rank4.tensor.byte_offset = 8;  // two elements in: the mapping's offset, not the handle
  const auto v4 = dm::try_to_mdspan<relaxed<std::int64_t, 4>>(rank4.get());
  REQUIRE_MESSAGE(v4.has_value(), message<relaxed<std::int64_t, 4>>(rank4.get()));
  check_row_major(*v4, {60, 20, 5, 1}, 2);
  CHECK(v4->data_handle() == buf);
  CHECK(&(*v4)[1, 2, 3, 4] == buf + 2 + 60 + 40 + 15 + 4);
  auto rank8 = tensor_builder::without_strides(buf, f32, {2, 3, 2, 2, 2, 2, 2, 3});
  check_row_major(dm::to_mdspan<relaxed<std::int64_t, 8>>(rank8.get()), {288, 96, 48, 24, 12, 6, 3, 1}, 0);
  // Empty: the products saturate at INT64_MAX, and into int32 a stride past its range is 0
  // (no index uses either).
  const std::int64_t p20 = std::int64_t{1} << 20, p40 = std::int64_t{1} << 40;
  auto huge = tensor_builder::without_strides(nullptr, f32, {0, p40, p40});
  check_row_major(dm::to_mdspan<relaxed<std::int64_t, 3>>(huge.get()),
                  {std::numeric_limits<std::int64_t>::max(), p40, 1}, 0);
  auto wide = tensor_builder::without_strides(nullptr, f32, {0, p20, p20});
  const auto n32 = dm::try_to_mdspan<relaxed<std::int32_t, 3>>(wide.get());
  REQUIRE_MESSAGE(n32.has_value(), message<relaxed<std::int32_t, 3>>(wide.get()));
  CHECK(n32->stride(0) == 0);
  CHECK(n32->stride(1) == p20);
  CHECK(n32->stride(2) == 1);
  CHECK(n32->data_handle() == nullptr);  // NULL data stays NULL
}

TEST_CASE("layout_stride_relaxed: an empty tensor's handle is data + byte_offset at offset 0, a non-empty one's offset carries it") {
  float buf[16] = {};
  using M = relaxed<std::int64_t, 2>;
  tensor_builder empty(buf, f32, {0, 3}, {3, 1}, 8);
  for (const auto& v : {dm::try_to_mdspan<M>(empty.get()), dm::try_to_mdspan<M>(empty.get(), dm::tensor_requirements{})}) {
    REQUIRE_MESSAGE(v.has_value(), message<M>(empty.get()));
    CHECK(v->data_handle() == buf + 2);
    CHECK(v->mapping().offset() == 0);
  }
  CHECK(dm::to_mdspan<M>(empty.get()).data_handle() == buf + 2);
  tensor_builder full(buf, f32, {2, 3}, {3, 1}, 8);
  const auto w = dm::to_mdspan<M>(full.get());
  CHECK(w.data_handle() == buf);
  CHECK(w.mapping().offset() == 2);
}

TEST_CASE("layout_stride from a strided tensor: its own strides where no extent is 1, stride 1 where one is") {
  float buf[512] = {};
  using M4 = strided<std::int64_t, 4>;
  // A slice of a row-major 2x3x4x8 array, and a transpose: no extent 1, the tensor's strides.
  const std::array<std::int64_t, 4> slice_strides{96, 32, 8, 1}, transpose_strides{1, 2, 6, 24};
  for (const auto& given : {slice_strides, transpose_strides}) {
    tensor_builder b(buf, f32, {2, 3, 4, 5}, {given[0], given[1], given[2], given[3]});
    const auto v = dm::to_mdspan<M4>(b.get());
    const auto tried = dm::try_to_mdspan<M4>(b.get());
    REQUIRE_MESSAGE(tried.has_value(), message<M4>(b.get()));
    for (std::size_t r = 0; r < 4; ++r) {
      CHECK(v.stride(r) == given[r]);
      CHECK(tried->stride(r) == given[r]);
    }
  }
  // The slice with an extent-1 dimension in each place, its stride one no order would take
  // (negative, zero, inside the chain, far outside it): that dimension's stride is 1, the
  // others the tensor's, through the silent rules and the worded ones alike.
  for (std::size_t unit = 0; unit < 4; ++unit) {
    for (const std::int64_t odd : {std::int64_t{-5}, std::int64_t{0}, std::int64_t{7}, std::int64_t{1000}}) {
      std::array<std::int64_t, 4> shape{2, 3, 4, 5}, strides = slice_strides;
      shape[unit] = 1;
      strides[unit] = odd;
      tensor_builder b(buf, f32, {shape[0], shape[1], shape[2], shape[3]}, {strides[0], strides[1], strides[2], strides[3]});
      CAPTURE(unit);
      CAPTURE(odd);
      const auto v = dm::to_mdspan<M4>(b.get());
      const auto tried = dm::try_to_mdspan<M4>(b.get());
      const auto worded = dm::try_to_mdspan<M4>(b.get(), dm::tensor_requirements{});
      REQUIRE_MESSAGE(tried.has_value(), message<M4>(b.get()));
      REQUIRE(worded.has_value());
      for (std::size_t r = 0; r < 4; ++r) {
        const std::int64_t want = r == unit ? 1 : strides[r];
        CHECK(v.stride(r) == want);
        CHECK(tried->stride(r) == want);
        CHECK(worded->stride(r) == want);
      }
      CHECK(layout_stride_precondition_holds(v));
    }
  }
  // Rank 2: the inner dimension of extent 1, stride -5; the outer a slice's.
  tensor_builder pair(buf, f32, {8, 1}, {11, -5});
  const auto p = dm::to_mdspan<strided<std::int64_t, 2>>(pair.get());
  CHECK(p.stride(0) == 11);
  CHECK(p.stride(1) == 1);
  // The strided tensor's byte_offset rules hold as for any other: a byte_offset that is not a
  // multiple of the element size is refused by the silent rules and worded, here where
  // data + byte_offset is aligned (data one byte past an aligned address, byte_offset 3), so
  // that no later rule refuses it instead.
  alignas(16) static unsigned char bytes[1024] = {};
  tensor_builder misaligned(bytes + 1, f32, {2, 3, 4, 5}, {96, 32, 8, 1}, 3);
  CHECK(refusal<M4>(misaligned.get()) == dm::errc::misaligned_byte_offset);
  CHECK_THROWS((void)dm::to_mdspan<M4>(misaligned.get()));
  tensor_builder aligned(bytes + 1, f32, {2, 3, 4, 5}, {96, 32, 8, 1}, 7);
  CHECK(refusal<M4>(aligned.get()) == dm::errc::misaligned_byte_offset);
}

namespace {
// to_mdspan, try_to_mdspan and the worded rules (requirements given) into
// std::layout_stride of rank R accept the tensor, and the view's strides are the tensor's
// but 1 for each extent-1 dimension.
template <std::size_t R>
void check_view_strides(const std::array<std::int64_t, R>& shape, const std::array<std::int64_t, R>& strides) {
  static float buf[4096] = {};
  using M = strided<std::int64_t, R>;
  tensor_builder b(buf, f32, {}, {});
  b.shape.assign(shape.begin(), shape.end());
  b.strides.assign(strides.begin(), strides.end());
  b.tensor.ndim = static_cast<std::int32_t>(R);
  const DLTensor& t = b.get();
  const auto tried = dm::try_to_mdspan<M>(t);
  const auto worded = dm::try_to_mdspan<M>(t, dm::tensor_requirements{});
  REQUIRE_MESSAGE(tried.has_value(), message<M>(t));
  REQUIRE(worded.has_value());
  const auto v = dm::to_mdspan<M>(t);
  for (std::size_t r = 0; r < R; ++r) {
    CAPTURE(r);
    const std::int64_t want = shape[r] == 1 ? 1 : strides[r];
    CHECK(v.stride(r) == want);
    CHECK(tried->stride(r) == want);
    CHECK(worded->stride(r) == want);
  }
}

// Ranks 5 and 8 (the silent check's first loop of the span pass is at every rank): a
// slice, a transpose and a permutation of the axes take the tensor's strides; a slice or
// a transpose with one link of its order one below its end is refused; the three with an
// extent-1 dimension in each place, its stride one no order would take, take 1 there.
template <std::size_t R>
void check_view_strides_at_rank(const std::array<std::int64_t, R>& shape) {
  std::array<std::int64_t, R> parent = shape, slice{}, transpose{}, permutation{};
  parent[R - 1] += 3;
  std::int64_t s = 1;
  for (std::size_t r = R; r-- > 0;) {
    slice[r] = s;
    s *= parent[r];
  }
  s = 1;
  for (std::size_t r = 0; r < R; ++r) {
    transpose[r] = s;
    s *= shape[r];
  }
  // View axis r is axis r ^ 1 of a row-major array (the last axis itself at an odd rank).
  const auto partner = [](std::size_t r) { return (r ^ 1) < R ? (r ^ 1) : r; };
  std::array<std::int64_t, R> swapped{}, swapped_strides{};
  for (std::size_t r = 0; r < R; ++r) swapped[r] = shape[partner(r)];
  s = 1;
  for (std::size_t r = R; r-- > 0;) {
    swapped_strides[r] = s;
    s *= swapped[r];
  }
  for (std::size_t r = 0; r < R; ++r) permutation[r] = swapped_strides[partner(r)];
  std::array<std::int64_t, R> permuted_shape{};
  for (std::size_t r = 0; r < R; ++r) permuted_shape[r] = swapped[partner(r)];
  check_view_strides<R>(shape, slice);
  check_view_strides<R>(shape, transpose);
  check_view_strides<R>(permuted_shape, permutation);
  // Each link of the slice's order, and of the transpose's, one below its end: those two
  // dimensions overlap, refused by every form (the order test of the pass accepts no such
  // tensor, and the sorted order words it).
  for (std::size_t link = 0; link + 1 < R; ++link) {
    CAPTURE(link);
    std::array<std::int64_t, R> broken_slice = slice, broken_transpose = transpose;
    broken_slice[link] = slice[link + 1] * shape[link + 1] - 1;
    broken_transpose[link + 1] = transpose[link] * shape[link] - 1;
    for (const auto* broken : {&broken_slice, &broken_transpose}) {
      static float buf[4096] = {};
      tensor_builder b(buf, f32, {}, {});
      b.shape.assign(shape.begin(), shape.end());
      b.strides.assign(broken->begin(), broken->end());
      b.tensor.ndim = static_cast<std::int32_t>(R);
      using M = strided<std::int64_t, R>;
      CHECK(refusal<M>(b.get()) == dm::errc::overlapping_strides);
      CHECK_FALSE(dm::try_to_mdspan<M>(b.get(), dm::tensor_requirements{}).has_value());
      CHECK_THROWS_AS((void)dm::to_mdspan<M>(b.get()), dm::dlpack_error);
    }
  }
  for (std::size_t unit = 0; unit < R; ++unit) {
    for (const std::int64_t odd : {std::int64_t{-5}, std::int64_t{0}, std::int64_t{7}, std::int64_t{1} << 40}) {
      CAPTURE(unit);
      CAPTURE(odd);
      for (const auto* given : {&slice, &transpose, &permutation}) {
        std::array<std::int64_t, R> unit_shape = given == &permutation ? permuted_shape : shape, unit_strides = *given;
        unit_shape[unit] = 1;
        unit_strides[unit] = odd;
        check_view_strides<R>(unit_shape, unit_strides);
      }
    }
  }
  // A compact (row-major) tensor, which the count of the silent check sees whole: its own
  // strides where no extent is 1 (the view copies them as they are); with an extent-1
  // dimension in each place, of its C-contiguous stride or any other, 1 there.
  const auto row_major_of = [](const std::array<std::int64_t, R>& extents) {
    std::array<std::int64_t, R> out{};
    std::int64_t step = 1;
    for (std::size_t r = R; r-- > 0;) {
      out[r] = step;
      step *= extents[r];
    }
    return out;
  };
  check_view_strides<R>(shape, row_major_of(shape));
  for (std::size_t unit = 0; unit < R; ++unit) {
    std::array<std::int64_t, R> unit_shape = shape;
    unit_shape[unit] = 1;
    const std::array<std::int64_t, R> compact = row_major_of(unit_shape);
    CAPTURE(unit);
    check_view_strides<R>(unit_shape, compact);
    for (const std::int64_t odd : {std::int64_t{-5}, std::int64_t{0}, std::int64_t{7}, std::int64_t{1} << 40}) {
      CAPTURE(odd);
      std::array<std::int64_t, R> unit_strides = compact;
      unit_strides[unit] = odd;
      check_view_strides<R>(unit_shape, unit_strides);
    }
  }
  // The same count's rare extents before and after the extent of 1, the strides
  // C-contiguous up to them: 0 (an empty tensor, accepted), negative and a count past
  // INT64_MAX (refused, the view never made).
  using M = strided<std::int64_t, R>;
  for (std::size_t unit = 0; unit < R; ++unit) {
    for (std::size_t at = 0; at < R; ++at) {
      if (at == unit) continue;
      for (const std::int64_t rare : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1} << 62}) {
        CAPTURE(unit);
        CAPTURE(at);
        CAPTURE(rare);
        std::array<std::int64_t, R> rare_shape = shape, rare_strides{};
        rare_shape[unit] = 1;
        rare_shape[at] = rare;
        std::int64_t step = 1;
        for (std::size_t r = R; r-- > 0;) {
          rare_strides[r] = step;  // saturated past the rare extent, which the count never passes
          if (__builtin_mul_overflow(step, rare_shape[r] > 0 ? rare_shape[r] : 1, &step))
            step = std::numeric_limits<std::int64_t>::max();
        }
        static float buf[4096] = {};
        tensor_builder b(buf, f32, {}, {});
        b.shape.assign(rare_shape.begin(), rare_shape.end());
        b.strides.assign(rare_strides.begin(), rare_strides.end());
        b.tensor.ndim = static_cast<std::int32_t>(R);
        const dm::errc want = rare == 0 ? dm::errc::ok : rare < 0 ? dm::errc::negative_extent : dm::errc::span_overflow;
        CHECK(refusal<M>(b.get()) == want);
        CHECK(dm::try_to_mdspan<M>(b.get(), dm::tensor_requirements{}).has_value() == (rare == 0));
        if (rare == 0) CHECK(dm::to_mdspan<M>(b.get()).size() == 0);
        else CHECK_THROWS_AS((void)dm::to_mdspan<M>(b.get()), dm::dlpack_error);
      }
    }
  }
}
}  // namespace

TEST_CASE("layout_stride from a strided or compact tensor at ranks 5 and 8: its own strides where no extent is 1, stride 1 where one is, overlaps refused") {
  check_view_strides_at_rank<5>({2, 3, 2, 4, 3});
  check_view_strides_at_rank<8>({2, 3, 2, 2, 2, 2, 2, 3});
}

TEST_CASE("an empty tensor's layout_stride view gets strides that keep the mapping's precondition") {
  float buf[4] = {};
  // The producer's strides are anything for an empty tensor (here zeros and a negative one).
  tensor_builder b(buf, f32, {3, 0, 4, 1, 5}, {0, 0, -2, 9, 0});
  const auto v = dm::try_to_mdspan<strided<std::int64_t, 5>>(b.get());
  REQUIRE_MESSAGE(v.has_value(), message<strided<std::int64_t, 5>>(b.get()));
  CHECK(v->size() == 0);
  CHECK(layout_stride_precondition_holds(*v));

  // In a narrow index_type the strides must fit too: int8 {0, 10, 11}: 10 * 11 > 127, so
  // 11 ends the last chain and 10 goes before the zero.
  tensor_builder narrow(buf, f32, {0, 10, 11}, {0, 0, 0});
  const auto w = dm::try_to_mdspan<strided<std::int8_t, 3>>(narrow.get());
  REQUIRE_MESSAGE(w.has_value(), message<strided<std::int8_t, 3>>(narrow.get()));
  CHECK(layout_stride_precondition_holds(*w));

  // Refused only where no packing fits: the largest 12 ends the last chain, and three more
  // 12s cannot share the two chains under 127.
  tensor_builder packed(buf, f32, {0, 12, 12, 12, 12}, {0, 0, 0, 0, 0});
  CHECK(refusal<strided<std::int8_t, 5>>(packed.get()) == dm::errc::stride_overflow);
  CHECK(has_text(message<strided<std::int8_t, 5>>(packed.get()), "use a wider index_type"));
  // The same tensor into a wide index_type is fine.
  CHECK(refusal<strided<std::int64_t, 5>>(packed.get()) == dm::errc::ok);
}

TEST_CASE("an empty tensor's compact view: every stride of the mapping must fit the index_type") {
  float buf[4] = {};
  constexpr std::int64_t big = std::int64_t{1} << 62;
  // layout_right's stride(0) multiplies 128 and 2^62: past int64, whatever the zero.
  tensor_builder over(buf, f32, {0, 128, big}, {0, 0, 0});
  CHECK(refusal<right<std::int64_t, 3>>(over.get()) == dm::errc::stride_overflow);
  CHECK(has_text(message<right<std::int64_t, 3>>(over.get()), "use a wider index_type"));
  // layout_left's strides multiply the extents before each dimension: 0 and 128, which fit.
  CHECK(refusal<left<std::int64_t, 3>>(over.get()) == dm::errc::ok);
  // A narrow index_type: layout_right's stride(0) of {0, 12, 12} is 144 > 127.
  tensor_builder narrow(buf, f32, {0, 12, 12}, {0, 0, 0});
  CHECK(refusal<right<std::int8_t, 3>>(narrow.get()) == dm::errc::stride_overflow);
  CHECK(refusal<right<std::int16_t, 3>>(narrow.get()) == dm::errc::ok);
}

TEST_CASE("layout_stride needs unique elements in some order of the dimensions, not only theirs or its reverse") {
  float buf[64] = {};
  // Ordered by stride: dimension 2 (reach 4), dimension 0 (reach 8), dimension 1 (16 >= 8).
  tensor_builder unique(buf, f32, {2, 3, 4}, {4, 16, 1});
  const auto v = dm::try_to_mdspan<strided<std::int64_t, 3>>(unique.get());
  REQUIRE_MESSAGE(v.has_value(), message<strided<std::int64_t, 3>>(unique.get()));
  CHECK(v->stride(1) == 16);
  CHECK(((*v)[1, 2, 3] == buf[4 + 32 + 3]));
  // Dimension 1's stride 5 falls inside dimension 0's reach (4 * 2 = 8): two indices share
  // an element. layout_stride refuses; layout_stride_relaxed takes it.
  tensor_builder overlapping(buf, f32, {2, 3, 4}, {4, 5, 1});
  CHECK(refusal<strided<std::int64_t, 3>>(overlapping.get()) == dm::errc::overlapping_strides);
  CHECK(has_text(message<strided<std::int64_t, 3>>(overlapping.get()), "use layout_stride_relaxed"));
  CHECK(refusal<relaxed<std::int64_t, 3>>(overlapping.get()) == dm::errc::ok);
}

// A permutation that is neither the order of the dimensions nor its reverse is decided by
// the order sorted by stride, each with its end = stride * extent (layout_stride_unique).
// The edges: a stride exactly at the end before it (unique), one below (an overlap, worded
// by the first broken link), extent-1 axes whose strides (negative, zero, or between the
// others' strides and ends) take no part, equal strides (an overlap in either order) worded
// by their dimensions, and an end past INT64_MAX, which no stride reaches.
TEST_CASE("layout_stride's uniqueness of a permutation by the sorted order: the edges") {
  float buf[64] = {};
  using M3 = strided<std::int64_t, 3>;
  using M4 = strided<std::int64_t, 4>;
  // Sorted: dimension 1 (stride 1, end 3), 0 (stride 3, end 6), 2 (stride 6): each stride
  // at the end before it. Neither the order of the dimensions nor its reverse is a chain.
  tensor_builder at_end(buf, f32, {2, 3, 2}, {3, 1, 6});
  CHECK(message<M3>(at_end.get()) == "ok");
  // The same with an extent-1 axis of stride -5 or 0 among them (rank 4).
  tensor_builder negative_unit(buf, f32, {2, 3, 1, 2}, {3, 1, -5, 6});
  CHECK(message<M4>(negative_unit.get()) == "ok");
  tensor_builder zero_unit(buf, f32, {2, 1, 3, 2}, {3, 0, 1, 6});
  CHECK(message<M4>(zero_unit.get()) == "ok");
  // Dimension 2's stride 5 is one below dimension 0's end 6.
  tensor_builder below_end(buf, f32, {2, 3, 2}, {3, 1, 5});
  CHECK(refusal<M3>(below_end.get()) == dm::errc::overlapping_strides);
  CHECK(has_text(message<M3>(below_end.get()), "dimensions 2 (stride 5) and 0 (shape 2, stride 3) overlap"));
  CHECK_THROWS_AS((void)dm::to_mdspan<M3>(below_end.get()), dm::dlpack_error);
  tensor_builder below_end4(buf, f32, {2, 1, 3, 2}, {3, 7, 1, 5});
  CHECK(refusal<M4>(below_end4.get()) == dm::errc::overlapping_strides);
  CHECK(has_text(message<M4>(below_end4.get()), "dimensions 3 (stride 5) and 0 (shape 2, stride 3) overlap"));
  // Extent-1 axes of stride 2 and 4, each inside an end of the chain 1 (end 3), 3 (end 6),
  // 6: sorted by their own strides, they would break it (rank 5, and rank 8 with three more).
  using M5 = strided<std::int64_t, 5>;
  tensor_builder inside5(buf, f32, {2, 1, 3, 2, 1}, {3, 2, 1, 6, 4});
  CHECK(message<M5>(inside5.get()) == "ok");
  CHECK(dm::to_mdspan<M5>(inside5.get()).stride(3) == 6);
  using M8x = strided<std::int64_t, 8>;
  tensor_builder inside8(buf, f32, {1, 2, 1, 3, 1, 2, 1, 1}, {5, 3, 2, 1, 4, 6, 2, 12});
  CHECK(message<M8x>(inside8.get()) == "ok");
  CHECK(dm::to_mdspan<M8x>(inside8.get()).stride(5) == 6);
  // The same chain broken by dimension 4's stride 5 (below dimension 0's end 6), with the
  // extent-1 axes about it: the link worded is the one between real dimensions.
  tensor_builder broken5(buf, f32, {2, 1, 3, 1, 2}, {3, 4, 1, 2, 5});
  CHECK(refusal<M5>(broken5.get()) == dm::errc::overlapping_strides);
  CHECK(has_text(message<M5>(broken5.get()), "dimensions 4 (stride 5) and 0 (shape 2, stride 3) overlap"));
  CHECK_THROWS_AS((void)dm::to_mdspan<M5>(broken5.get()), dm::dlpack_error);
  // Equal strides: dimensions 0 and 1 (stride 3, extent 2) follow dimension 2 (stride 1,
  // end 3); among equal strides the higher dimension comes first, and the link between them
  // breaks (two dimensions of one stride and extents above 1 overlap in either order).
  tensor_builder equal(buf, f32, {2, 2, 3, 1}, {3, 3, 1, 9});
  CHECK(refusal<M4>(equal.get()) == dm::errc::overlapping_strides);
  CHECK(has_text(message<M4>(equal.get()), "dimensions 0 (stride 3) and 1 (shape 2, stride 3) overlap"));
  // Equal strides, unequal extents: the extent worded is the dimension's own.
  tensor_builder equal_stride(buf, f32, {3, 2, 1}, {3, 3, 1});
  CHECK(refusal<M3>(equal_stride.get()) == dm::errc::overlapping_strides);
  CHECK(has_text(message<M3>(equal_stride.get()), "dimensions 0 (stride 3) and 1 (shape 2, stride 3) overlap"));
  // The extent in the message is the dimension's own (the sort keeps stride and end).
  tensor_builder long_axis(buf, f32, {1000, 2, 3}, {3, 2999, 1});
  CHECK(has_text(message<M3>(long_axis.get()), "dimensions 1 (stride 2999) and 0 (shape 1000, stride 3) overlap"));
  // int8 elements, so that a span of 2^63 - 1 bytes fits: dimension 2 (stride 2^62, extent
  // 2) ends at 2^63, past INT64_MAX; dimension 0's end, 3 * (2^61 - 1), passes 2^62, so
  // dimension 2 starts inside dimension 0. Refused, by both instances.
  using M8 = std::mdspan<std::int8_t, std::dextents<std::int64_t, 3>, std::layout_stride>;
  std::int8_t bytes[4] = {};
  std::int64_t shape[3] = {3, 1, 2};
  std::int64_t strides[3] = {(std::int64_t{1} << 61) - 1, 5, std::int64_t{1} << 62};
  DLTensor wide{};
  wide.data = bytes;
  wide.device = DLDevice{kDLCPU, 0};
  wide.ndim = 3;
  wide.dtype = DLDataType{kDLInt, 8, 1};
  wide.shape = shape;
  wide.strides = strides;
  CHECK(refusal<M8>(wide) == dm::errc::overlapping_strides);
  CHECK_THROWS_AS((void)dm::to_mdspan<M8>(wide), dm::dlpack_error);
  // An end past INT64_MAX in a unique permutation: dimensions 1 (stride 1, end 2), 0 (stride
  // 2, end 4), 2 (stride 2^62, end 2^63).
  shape[0] = 2;
  shape[1] = 2;
  strides[0] = 2;
  strides[1] = 1;
  CHECK(message<M8>(wide) == "ok");
}

namespace {
// The layout_stride precondition on a tensor's own strides, every order of its dimensions
// with more than one index tried (the sorted check of layout_stride_unique is what is
// tested: this oracle sorts nothing).
template <std::size_t R>
bool unique_in_some_order(const std::array<std::int64_t, R>& shape, const std::array<std::int64_t, R>& strides) {
  std::array<std::size_t, R> order{};
  std::size_t count = 0;
  for (std::size_t r = 0; r < R; ++r)
    if (shape[r] > 1) order[count++] = r;
  do {
    bool holds = true;
    for (std::size_t i = 1; i < count && holds; ++i)
      holds = strides[order[i]] >= strides[order[i - 1]] * shape[order[i - 1]];
    if (holds) return true;
  } while (std::next_permutation(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count)));
  return false;
}

// splitmix64: a fixed sequence, the same on every platform.
struct test_random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }
};

// Views of a row-major array with its axes in a random order (a transpose, a permutation,
// a slice: padding on a random axis) and extent-1 axes with odd strides; half of them then
// get one stride moved (shrunk, grown, or copied from another axis), which may make two
// indices share an element. Every tensor: the oracle's answer, by both instances of the
// rules (to_mdspan's silent one, try_to_mdspan's), with the overlap worded as such.
template <std::size_t R>
void check_layout_stride_uniqueness(test_random& random, int cases, int& accepted, int& refused) {
  static float buf[1 << 16];
  for (int c = 0; c < cases; ++c) {
    std::array<std::int64_t, R> shape{}, strides{};
    std::array<std::size_t, R> axes{};  // axes[k]: the view's axis laid out k-th from the outermost
    for (std::size_t r = 0; r < R; ++r) {
      shape[r] = 1 + random.below(3);
      axes[r] = r;
    }
    for (std::size_t r = R; r-- > 1;) std::swap(axes[r], axes[static_cast<std::size_t>(random.below(static_cast<std::int64_t>(r) + 1))]);
    std::int64_t stride = 1;
    const std::size_t padded = static_cast<std::size_t>(random.below(static_cast<std::int64_t>(R)));
    for (std::size_t k = R; k-- > 0;) {
      const std::size_t axis = axes[k];
      strides[axis] = shape[axis] == 1 && random.below(2) == 0 ? 7 : stride;
      stride *= shape[axis] + (k == padded ? random.below(3) : 0);
    }
    if (random.below(2) == 0) {
      const auto axis = static_cast<std::size_t>(random.below(static_cast<std::int64_t>(R)));
      switch (random.below(3)) {
        case 0: strides[axis] = std::max<std::int64_t>(1, strides[axis] - 1 - random.below(3)); break;
        case 1: strides[axis] += 1 + random.below(3); break;
        default: strides[axis] = strides[static_cast<std::size_t>(random.below(static_cast<std::int64_t>(R)))]; break;
      }
    }
    DLTensor t{};
    t.data = buf;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<std::int32_t>(R);
    t.dtype = f32;
    t.shape = shape.data();
    t.strides = strides.data();
    const bool unique = unique_in_some_order(shape, strides);
    (unique ? accepted : refused) += 1;
    INFO("rank " << R << ", case " << c);
    using M = strided<std::int64_t, R>;
    const auto tried = dm::try_to_mdspan<M>(t);
    REQUIRE(tried.has_value() == unique);
    dm::errc thrown = dm::errc::ok;
    try {
      const M m = dm::to_mdspan<M>(t);
      for (std::size_t r = 0; r < R; ++r)
        if (shape[r] != 1) CHECK(m.stride(r) == strides[r]);
    } catch (const dm::dlpack_error& e) {
      thrown = e.code();
    }
    CHECK(thrown == (unique ? dm::errc::ok : dm::errc::overlapping_strides));
    if (!unique) {
      CHECK(tried.error().code() == dm::errc::overlapping_strides);
      CHECK(has_text(std::string(tried.error().what()), "overlap; std::layout_stride needs unique elements"));
    }
  }
}
}  // namespace

TEST_CASE("layout_stride's uniqueness at ranks 3 to 8, axes in any order, against an oracle that tries every order") {
  test_random random{50};
  int accepted = 0, refused = 0;
  check_layout_stride_uniqueness<3>(random, 400, accepted, refused);
  check_layout_stride_uniqueness<4>(random, 400, accepted, refused);
  check_layout_stride_uniqueness<6>(random, 300, accepted, refused);
  check_layout_stride_uniqueness<8>(random, 200, accepted, refused);
  // Both answers are exercised, many times each.
  CHECK(accepted > 200);
  CHECK(refused > 200);
}
