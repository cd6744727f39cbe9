// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Export to and import from cuda::std::mdspan through the header form, in C++20, without <mdspan>.
#include <doctest/doctest.h>

#include <cuda/std/array>
#include <cuda/std/mdspan>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <vector>

namespace dm = dlpack_mdspan;
using v64 = std::vector<std::int64_t>;

namespace {
v64 strides_of(const DLTensor& t) { return {t.strides, t.strides + t.ndim}; }
v64 shape_of(const DLTensor& t) { return {t.shape, t.shape + t.ndim}; }
}  // namespace

TEST_CASE("cuda::std::mdspan satisfies the export concepts") {
  static_assert(dm::strided_mdspan<cuda::std::mdspan<float, cuda::std::dextents<int, 2>>>);
  static_assert(dm::strided_mdspan<cuda::std::mdspan<const float, cuda::std::extents<int, 2, 3>, cuda::std::layout_left>>);
}

TEST_CASE("layout_right, layout_left and layout_stride export like std::mdspan") {
  int buf[24] = {};
  cuda::std::mdspan<int, cuda::std::dextents<int, 2>> right(buf, 2, 3);
  auto r = dm::to_dlpack_tensor(right);
  CHECK(shape_of(r.get()) == v64{2, 3});
  CHECK(strides_of(r.get()) == v64{3, 1});
  CHECK(r.get().data == buf);

  cuda::std::mdspan<int, cuda::std::dextents<int, 2>, cuda::std::layout_left> left(buf, 2, 3);
  auto l = dm::to_dlpack_tensor(left);
  CHECK(strides_of(l.get()) == v64{1, 2});

  using E = cuda::std::dextents<int, 2>;
  cuda::std::mdspan<int, E, cuda::std::layout_stride> strided(
      buf, cuda::std::layout_stride::mapping<E>(E(2, 5), cuda::std::array<int, 2>{8, 1}));
  auto s = dm::to_dlpack_tensor(strided);
  CHECK(strides_of(s.get()) == v64{8, 1});
}

TEST_CASE("rank 0, empty and const cuda::std::mdspan") {
  int value = 3;
  cuda::std::mdspan<int, cuda::std::extents<int>> scalar(&value);
  auto o = dm::to_dlpack_tensor(scalar);
  CHECK(o.get().shape == nullptr);
  CHECK(o.get().data == &value);

  cuda::std::mdspan<const int, cuda::std::dextents<int, 2>> empty(&value, 0, 4);
  auto e = dm::to_dlpack_tensor(empty);
  CHECK(e.get().data == nullptr);
  CHECK(strides_of(e.get()) == v64{4, 1});
}

TEST_CASE("the relaxed layout works with cuda::std::extents") {
  double buf[12] = {};
  using E = cuda::std::dextents<int, 2>;
  using R = dm::layout_stride_relaxed;
  cuda::std::mdspan<double, E, R> md(buf, R::mapping<E>(E(3, 4), cuda::std::array<int, 2>{-4, 1}, 8));
  auto o = dm::to_dlpack_tensor(md);
  CHECK(o.get().byte_offset == 8 * sizeof(double));
  CHECK(strides_of(o.get()) == v64{-4, 1});
}

TEST_CASE("the C++20 result type reports errors without exceptions escaping") {
  int dummy = 0;
  cuda::std::mdspan<int, cuda::std::dextents<unsigned long long, 1>> md(&dummy, 1ull << 63);
  auto r = dm::try_to_dlpack_tensor(md);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::extent_overflow);
  CHECK_THROWS_AS((void)dm::to_dlpack_tensor(md), dm::dlpack_error);
}

TEST_CASE("import into cuda::std::mdspan: right, left, stride and relaxed targets") {
  int buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = i;
  std::int64_t shape[2] = {3, 4}, strides[2] = {4, 1};
  DLTensor t{};
  t.data = buf;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 2;
  t.dtype = DLDataType{kDLInt, 32, 1};
  t.shape = shape;
  t.strides = strides;
  using E = cuda::std::dextents<int, 2>;
  auto right = dm::to_mdspan<cuda::std::mdspan<const int, E>>(t);
  CHECK(right(2, 3) == 11);
  CHECK(dm::try_to_mdspan<cuda::std::mdspan<int, E, cuda::std::layout_left>>(t).error().code() == dm::errc::non_compact_strides);
  auto strided = dm::to_mdspan<cuda::std::mdspan<int, E, cuda::std::layout_stride>>(t);
  CHECK(strided.stride(0) == 4);
  CHECK(strided(1, 1) == 5);
  strides[0] = -4;
  t.data = buf + 8;
  auto reversed = dm::to_mdspan<cuda::std::mdspan<int, E, dm::layout_stride_relaxed>>(t);
  CHECK(reversed(0, 0) == 8);
  CHECK(reversed(2, 3) == 3);
  // A tensor that breaks only the static-extent rule (a reversed one would also break
  // layout_right's, and either code may then be reported first).
  strides[0] = 4;
  t.data = buf;
  CHECK(dm::try_to_mdspan<cuda::std::mdspan<int, cuda::std::extents<int, 3, 5>>>(t).error().code() ==
        dm::errc::shape_mismatch);
}
