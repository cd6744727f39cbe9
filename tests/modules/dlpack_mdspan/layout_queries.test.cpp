// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// is_c_contiguous / is_f_contiguous / leading_dim / stride_ranks / byte_span / is_unique / coalesce.
#include "support/prelude.hpp"

#include <span>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::f32;
using dlpm_test::tensor_builder;

TEST_CASE("contiguity tolerates size-1 dimensions and empty tensors") {
  float buf[24] = {};
  tensor_builder c(buf, f32, {2, 3, 4}, {12, 4, 1});
  CHECK(dm::is_c_contiguous(c.get()));
  CHECK_FALSE(dm::is_f_contiguous(c.get()));
  tensor_builder f(buf, f32, {2, 3, 4}, {1, 2, 6});
  CHECK(dm::is_f_contiguous(f.get()));
  CHECK(dm::is_contiguous(f.get()));
  tensor_builder row(buf, f32, {1, 5}, {5, 1});  // (1, N): both
  CHECK(dm::is_c_contiguous(row.get()));
  CHECK(dm::is_f_contiguous(row.get()));
  tensor_builder torch(buf, f32, {2, 1, 3}, {3, 1, 1});
  CHECK(dm::is_c_contiguous(torch.get()));
  tensor_builder empty(buf, f32, {0, 3, 4}, {0, 0, 0});
  CHECK(dm::is_c_contiguous(empty.get()));
  CHECK(dm::is_f_contiguous(empty.get()));
  tensor_builder padded(buf, f32, {2, 3}, {4, 1});
  CHECK_FALSE(dm::is_contiguous(padded.get()));
  auto implicit = tensor_builder::without_strides(buf, f32, {2, 3});
  CHECK(dm::is_c_contiguous(implicit.get()));
  CHECK_FALSE(dm::is_f_contiguous(implicit.get()));
}

TEST_CASE("contiguity answers false, not UB, for garbage") {
  float buf[4] = {};
  tensor_builder b(buf, f32, {2, 2}, {2, 1});
  DLTensor t = b.get();
  t.shape = nullptr;
  CHECK_FALSE(dm::is_c_contiguous(t));
  t.ndim = -3;
  CHECK_FALSE(dm::is_f_contiguous(t));
}

TEST_CASE("leading dimension follows CuTe's rule: the unit stride, the big one among several, or none") {
  float buf[24] = {};
  tensor_builder c(buf, f32, {2, 3, 4}, {12, 4, 1});
  CHECK(*dm::leading_dim(c.get()) == 2);
  tensor_builder f(buf, f32, {2, 3, 4}, {1, 2, 6});
  CHECK(*dm::leading_dim(f.get()) == 0);
  tensor_builder one_big(buf, f32, {1, 4, 1}, {1, 1, 1});  // PyTorch's size-1 strides: mode 1 is the one
  CHECK(*dm::leading_dim(one_big.get()) == 1);
  tensor_builder amb(buf, f32, {1, 1, 1}, {1, 1, 1});
  auto r = dm::leading_dim(amb.get());
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::ambiguous_layout);
  CHECK(std::string(r.error().what()) ==
        "leading dimension is ambiguous: 3 modes have stride 1 and 0 of them extent > 1 (the first is mode 0); require the "
        "one you need (layout_requirements::leading_dim)");
  tensor_builder two_big(buf, f32, {2, 3}, {1, 1});
  CHECK(dm::leading_dim(two_big.get()).error().code() == dm::errc::ambiguous_layout);
  tensor_builder none(buf, f32, {2, 3}, {6, 2});  // no unit stride: no leading dimension
  CHECK(*dm::leading_dim(none.get()) == -1);
}

TEST_CASE("stride order ranks dimensions by stride") {
  float buf[24] = {};
  std::int32_t order[3] = {};
  tensor_builder c(buf, f32, {2, 3, 4}, {12, 4, 1});
  auto o = dm::stride_ranks(c.get(), order);
  REQUIRE(o.has_value());
  CHECK(std::vector<std::int32_t>(o->begin(), o->end()) == std::vector<std::int32_t>{2, 1, 0});
  tensor_builder p(buf, f32, {2, 3, 4}, {4, 1, 12});
  REQUIRE(dm::stride_ranks(p.get(), order).has_value());
  CHECK(std::vector<std::int32_t>(order, order + 3) == std::vector<std::int32_t>{1, 0, 2});
  tensor_builder amb(buf, f32, {1, 4, 1}, {1, 1, 1});
  CHECK(dm::stride_ranks(amb.get(), order).error().code() == dm::errc::ambiguous_layout);
  std::int32_t small[1];
  CHECK(dm::stride_ranks(c.get(), small).error().code() == dm::errc::invalid_argument);
}

TEST_CASE("contiguity is false for every tensor validate refuses, also after a zero extent") {
  float buf[4] = {};
  tensor_builder zero_then_negative(buf, f32, {0, -3}, {1, 1});
  CHECK_FALSE(dm::is_c_contiguous(zero_then_negative.get()));
  CHECK_FALSE(dm::is_f_contiguous(zero_then_negative.get()));
  CHECK_FALSE(dm::is_contiguous(zero_then_negative.get()));
  tensor_builder bad_dtype(buf, dlpm_test::dt(kDLInt, 6), {2}, {1});
  CHECK_FALSE(dm::is_c_contiguous(bad_dtype.get()));
  tensor_builder null_data(nullptr, f32, {2, 2}, {2, 1});
  CHECK_FALSE(dm::is_c_contiguous(null_data.get()));
}

TEST_CASE("byte_span: the bytes the elements reach, negative strides and offsets included") {
  float buf[32] = {};
  tensor_builder c(buf, f32, {2, 3}, {3, 1});
  auto s = dm::byte_span(c.get());
  REQUIRE(s);
  CHECK(s->begin == 0);
  CHECK(s->end == 6 * 4);
  tensor_builder padded_rows(buf, f32, {2, 3}, {8, 1}, 4 * 4);  // row pitch 8, starts at element 4
  s = dm::byte_span(padded_rows.get());
  REQUIRE(s);
  CHECK(s->begin == 16);
  CHECK(s->end == 16 + (8 + 2 + 1) * 4);
  tensor_builder reversed(buf, f32, {4}, {-1}, 3 * 4);  // elements 3, 2, 1, 0
  s = dm::byte_span(reversed.get());
  REQUIRE(s);
  CHECK(s->begin == 0);
  CHECK(s->end == 16);
  tensor_builder broadcast(buf, f32, {5, 2}, {0, 1});
  s = dm::byte_span(broadcast.get());
  REQUIRE(s);
  CHECK(s->end - s->begin == 8);
  auto implicit = tensor_builder::without_strides(buf, f32, {2, 2});
  s = dm::byte_span(implicit.get());
  REQUIRE(s);
  CHECK(s->end == 16);
}

TEST_CASE("byte_span: empty tensors address nothing, sub-byte elements share bytes unless padded") {
  float buf[8] = {};
  tensor_builder empty(buf, f32, {0, 3}, {3, 1}, 8);
  auto s = dm::byte_span(empty.get());
  REQUIRE(s);
  CHECK(s->begin == 8);
  CHECK(s->end == 8);
  const DLDataType fp4 = dlpm_test::dt(kDLFloat4_e2m1fn, 4);
  tensor_builder packed(buf, fp4, {3}, {1});
  s = dm::byte_span(packed.get());
  REQUIRE(s);
  CHECK(s->begin == 0);
  CHECK(s->end == 2);  // three nibbles: a byte and a half, the half counted whole
  s = dm::byte_span(packed.get(), /*subbyte_padded=*/true);
  REQUIRE(s);
  CHECK(s->end == 3);
}

TEST_CASE("byte_span: an invalid tensor gets the structural error") {
  float buf[4] = {};
  tensor_builder negative(buf, f32, {2, -1}, {1, 1});
  auto s = dm::byte_span(negative.get());
  REQUIRE_FALSE(s);
  CHECK(s.error().code() == dm::errc::negative_extent);
}

TEST_CASE("is_unique: broadcast and overlap are not, negative and permuted strides are, empty always is") {
  float buf[64] = {};
  auto unique = [&](std::initializer_list<std::int64_t> shape, std::initializer_list<std::int64_t> strides) {
    tensor_builder b(buf + 32, f32, shape, strides);
    auto r = dm::is_unique(b.get());
    REQUIRE(r);
    return *r;
  };
  CHECK(unique({4, 6}, {6, 1}));
  CHECK(unique({4, 6}, {1, 4}));        // a transpose
  CHECK(unique({4, 3}, {-6, 2}));       // a reversed, every-other-column view
  CHECK(unique({2, 1, 3}, {3, 0, 1}));  // stride 0 over extent 1 reaches one element
  CHECK_FALSE(unique({4, 3}, {0, 1}));  // broadcast rows
  CHECK_FALSE(unique({4, 3}, {2, 1}));  // rows overlap
  CHECK_FALSE(unique({2, 3}, {-1, 1}));
  CHECK(unique({0, 3}, {0, 0}));
  CHECK(unique({}, {}));
  auto implicit = tensor_builder::without_strides(buf, f32, {2, 3});
  CHECK(*dm::is_unique(implicit.get()));
  tensor_builder negative(buf, f32, {2, -1}, {1, 1});
  auto bad = dm::is_unique(negative.get());
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code() == dm::errc::negative_extent);
}

TEST_CASE("coalesce: refusals, and steps that would overflow int64 are never computed") {
  std::int64_t extents[4] = {}, steps[4] = {};
  alignas(8) unsigned char buf[64] = {};
  tensor_builder c(buf, f32, {2, 3}, {3, 1});
  const auto short_extents = dm::coalesce(c.get(), false, std::span<std::int64_t>(extents, 1), steps);
  CHECK(short_extents.error().code() == dm::errc::invalid_argument);
  tensor_builder bad(buf, f32, {2, -1}, {3, 1});
  CHECK(dm::coalesce(bad.get(), false, extents, steps).error().code() == dm::errc::negative_extent);
  tensor_builder packed(buf, dlpm_test::dt(kDLFloat4_e2m1fn, 4), {2, 4}, {4, 1});
  CHECK(dm::coalesce(packed.get(), false, extents, steps).error().code() == dm::errc::subbyte_not_viewable);
  auto padded = dm::coalesce(packed.get(), true, extents, steps);  // one byte per element
  REQUIRE(padded);
  CHECK(padded->ndim == 0);
  CHECK(padded->block == 8);
  // An extent-1 mode's stride is never multiplied: any value is fine there.
  tensor_builder huge_unit(buf, dlpm_test::dt(kDLFloat, 64), {1, 4}, {INT64_MAX / 2, 1});
  auto r = dm::coalesce(huge_unit.get(), false, extents, steps);
  REQUIRE(r);
  CHECK(r->ndim == 0);
  CHECK(r->block == 4);
  // 2^61 * 3 overflows int64 in the merge test: then the modes do not merge.
  tensor_builder far(buf, dlpm_test::dt(kDLInt, 8), {2, 3}, {1, std::int64_t{1} << 61});
  r = dm::coalesce(far.get(), false, extents, steps);
  REQUIRE(r);
  CHECK(r->ndim == 2);
  CHECK(extents[0] == 2);
  CHECK(steps[0] == 1);
  CHECK(extents[1] == 3);
  CHECK(steps[1] == std::int64_t{1} << 61);
  CHECK(r->block == 1);
}
