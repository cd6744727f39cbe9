// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// layout_stride_relaxed: broadcast, negative strides and an element offset.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using R = dm::layout_stride_relaxed;
using E2 = std::dextents<int, 2>;

TEST_CASE("the default mapping is row-major with no offset") {
  R::mapping<E2> m(E2(3, 4));
  CHECK(m.stride(0) == 4);
  CHECK(m.stride(1) == 1);
  CHECK(m.offset() == 0);
  CHECK(m.required_span_size() == 12);
  CHECK(m.is_unique());
  CHECK(m.is_exhaustive());
  CHECK(m(2, 3) == 11);
}

TEST_CASE("negative strides with an offset address the reversed rows") {
  int buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = i;
  std::mdspan<int, E2, R> md(buf, R::mapping<E2>(E2(3, 4), std::array<int, 2>{-4, 1}, 8));
  CHECK(md[0, 0] == 8);
  CHECK(md[2, 3] == 3);
  CHECK(md.mapping().required_span_size() == 12);
  CHECK(md.mapping().is_unique());
}

TEST_CASE("a zero stride broadcasts and is not unique") {
  int row[4] = {1, 2, 3, 4};
  std::mdspan<int, E2, R> md(row, R::mapping<E2>(E2(3, 4), std::array<int, 2>{0, 1}));
  CHECK(md[2, 1] == 2);
  CHECK_FALSE(md.mapping().is_unique());
  CHECK_FALSE(md.mapping().is_exhaustive());
  CHECK(md.mapping().required_span_size() == 4);
}

TEST_CASE("an empty extent has span 0 and is unique") {
  R::mapping<E2> m(E2(0, 4), std::array<int, 2>{0, 0}, 5);
  CHECK(m.required_span_size() == 0);
  CHECK(m.is_unique());
}

TEST_CASE("converts from other strided mappings") {
  std::layout_left::mapping<E2> left(E2(3, 4));
  R::mapping<E2> m(left);
  CHECK(m.stride(0) == 1);
  CHECK(m.stride(1) == 3);
  CHECK(m == R::mapping<E2>(E2(3, 4), std::array<int, 2>{1, 3}));
}

TEST_CASE("overlapping strides are detected") {
  R::mapping<E2> overlap(E2(3, 4), std::array<int, 2>{1, 1});
  CHECK_FALSE(overlap.is_unique());
  R::mapping<E2> size1(E2(2, 1), std::array<int, 2>{1, 1});
  CHECK(size1.is_unique());
}

TEST_CASE("converting a relaxed mapping keeps where index 0 maps (its offset)") {
  // Another extents type's relaxed mapping: the offset was dropped, so every element read
  // was another (and a reversed view's reads left the array).
  float a[12];
  for (int i = 0; i < 12; ++i) a[i] = static_cast<float>(i);
  using S = std::extents<long, 3, 4>;
  const std::mdspan<float, S, R> s(a, R::mapping<S>(S{}, std::array<long, 2>{4, 1}, 2));
  const std::mdspan<float, std::dextents<long, 2>, R> d(s);
  CHECK(d.mapping().offset() == 2);
  for (long i = 0; i < 3; ++i)
    for (long j = 0; j < 2; ++j) CHECK(d[i, j] == s[i, j]);
  // a reversed tensor imported into static extents, then converted to dynamic ones
  std::int64_t shape[1] = {4}, strides[1] = {-1};
  const DLTensor t{a + 3, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, strides, 0};  // a[3], a[2], a[1], a[0]
  const auto st = dm::to_mdspan<std::mdspan<const float, std::extents<long, 4>, R>>(t);
  const std::mdspan<const float, std::dextents<long, 1>, R> dy(st);
  for (long i = 0; i < 4; ++i) CHECK(dy[i] == static_cast<float>(3 - i));
  // another strided mapping: where its index 0 maps (0 for std::layout_stride)
  const std::layout_stride::mapping<std::dextents<int, 2>> ls(std::dextents<int, 2>(2, 3), std::array<int, 2>{1, 2});
  const R::mapping<std::dextents<int, 2>> from_stride(ls);
  CHECK(from_stride.offset() == 0);
  CHECK(from_stride(1, 2) == ls(1, 2));
}
