// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// to_dlpack_tensor / try_to_dlpack_tensor: mdspan → DLTensor view.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;

namespace {

bool dtype_is(DLDataType t, std::uint8_t code, std::uint8_t bits, std::uint16_t lanes = 1) {
  return t.code == code && t.bits == bits && t.lanes == lanes;
}

std::vector<std::int64_t> shape_of(const DLTensor& t) { return {t.shape, t.shape + t.ndim}; }
std::vector<std::int64_t> strides_of(const DLTensor& t) { return {t.strides, t.strides + t.ndim}; }
using v64 = std::vector<std::int64_t>;

// An accessor that says its memory is CUDA device memory, through the customization point.
template <class T>
struct fake_cuda_accessor {
  using offset_policy = fake_cuda_accessor;
  using element_type = T;
  using reference = T&;
  using data_handle_type = T*;
  static constexpr DLDeviceType dlpack_device_type = kDLCUDA;
  constexpr reference access(data_handle_type p, std::size_t i) const noexcept { return p[i]; }
  constexpr data_handle_type offset(data_handle_type p, std::size_t i) const noexcept { return p + i; }
};

// An accessor object that knows its device id at run time.
template <class T>
struct fake_rocm_accessor {
  using offset_policy = fake_rocm_accessor;
  using element_type = T;
  using reference = T&;
  using data_handle_type = T*;
  int ordinal = 0;
  constexpr DLDevice dlpack_device() const noexcept { return DLDevice{kDLROCM, ordinal}; }
  constexpr reference access(data_handle_type p, std::size_t i) const noexcept { return p[i]; }
  constexpr data_handle_type offset(data_handle_type p, std::size_t i) const noexcept { return p + i; }
};

}  // namespace

TEST_CASE("layout_right {2,3} int gives the canonical row-major view") {
  int buf[6] = {};
  std::mdspan<int, std::dextents<int, 2>> md(buf, 2, 3);
  auto owner = dm::to_dlpack_tensor(md);
  const DLTensor t = owner.get();
  CHECK(t.device.device_type == kDLCPU);
  CHECK(t.device.device_id == 0);
  CHECK(t.ndim == 2);
  CHECK(dtype_is(t.dtype, kDLInt, 32));
  CHECK(shape_of(t) == v64{2, 3});
  CHECK(strides_of(t) == v64{3, 1});
  CHECK(t.byte_offset == 0);
  CHECK(t.data == buf);
}

TEST_CASE("layout_left {2,3} gives column-major strides") {
  float buf[6] = {};
  std::mdspan<float, std::dextents<std::size_t, 2>, std::layout_left> md(buf, 2, 3);
  auto owner = dm::to_dlpack_tensor(md);
  const DLTensor t = owner.get();
  CHECK(shape_of(t) == v64{2, 3});
  CHECK(strides_of(t) == v64{1, 2});
  CHECK(dtype_is(t.dtype, kDLFloat, 32));
}

TEST_CASE("ranks 1 to 3 for layout_right, layout_left and layout_stride") {
  double buf[64] = {};
  SUBCASE("rank 1") {
    std::mdspan<double, std::extents<int, 5>> r(buf);
    auto o = dm::to_dlpack_tensor(r);
    CHECK(shape_of(o.get()) == v64{5});
    CHECK(strides_of(o.get()) == v64{1});
    std::mdspan<double, std::dextents<int, 1>, std::layout_stride> s(
        buf, std::layout_stride::mapping(std::dextents<int, 1>(4), std::array<int, 1>{3}));
    auto os = dm::to_dlpack_tensor(s);
    CHECK(strides_of(os.get()) == v64{3});
  }
  SUBCASE("rank 3 right and left") {
    std::mdspan<double, std::dextents<int, 3>> r(buf, 2, 3, 4);
    auto o = dm::to_dlpack_tensor(r);
    CHECK(strides_of(o.get()) == v64{12, 4, 1});
    std::mdspan<double, std::dextents<int, 3>, std::layout_left> l(buf, 2, 3, 4);
    auto ol = dm::to_dlpack_tensor(l);
    CHECK(strides_of(ol.get()) == v64{1, 2, 6});
  }
  SUBCASE("rank 3 layout_stride with padding") {
    using E = std::dextents<int, 3>;
    std::mdspan<double, E, std::layout_stride> s(buf, std::layout_stride::mapping(E(2, 3, 4), std::array<int, 3>{16, 5, 1}));
    auto o = dm::to_dlpack_tensor(s);
    CHECK(shape_of(o.get()) == v64{2, 3, 4});
    CHECK(strides_of(o.get()) == v64{16, 5, 1});
  }
}

// Export computes layout_right/left strides as one running product of the extents (for an
// empty view in 64 bits, capped at INT64_MAX): where the mapping's stride(r) is defined, both
// give exactly it.
template <class L, class I, std::size_t R>
void strides_match_the_mapping(const std::array<I, R>& extents) {
  using E = std::dextents<I, R>;
  static float buf[1] = {};
  const std::mdspan<float, E, L> md(buf, typename L::template mapping<E>(E(extents)));
  const auto view = dm::to_dlpack_tensor(md);
  const DLTensor t = view.get();
  for (std::size_t r = 0; r < R; ++r) {
    INFO("dim " << r);
    CHECK(t.shape[r] == static_cast<std::int64_t>(md.extent(r)));
    CHECK(t.strides[r] == static_cast<std::int64_t>(md.stride(r)));
  }
}

TEST_CASE("layout_right/left strides equal the mapping's, for every rank, index type and empty views") {
  for (std::size_t k = 0; k < 64; ++k) {
    // Extents from {0, 1, 2, 3, 7}: some views empty, the rest small enough for any index type.
    const auto e = [&](std::size_t i) { return static_cast<int>(std::array{0, 1, 2, 3, 7}[(k * 7 + i * 3 + k / 5) % 5]); };
    strides_match_the_mapping<std::layout_right, int, 1>({e(0)});
    strides_match_the_mapping<std::layout_left, int, 1>({e(0)});
    strides_match_the_mapping<std::layout_right, std::size_t, 3>({std::size_t(e(0)), std::size_t(e(1)), std::size_t(e(2))});
    strides_match_the_mapping<std::layout_left, std::size_t, 3>({std::size_t(e(0)), std::size_t(e(1)), std::size_t(e(2))});
    // int8_t: extents up to 3, so that the size (at most 81) fits, as the mapping requires.
    strides_match_the_mapping<std::layout_right, std::int8_t, 4>(
        {std::int8_t(e(0) % 4), std::int8_t(e(1) % 4), std::int8_t(e(2) % 4), std::int8_t(e(3) % 4)});
    strides_match_the_mapping<std::layout_left, std::uint16_t, 4>(
        {std::uint16_t(e(0)), std::uint16_t(e(1)), std::uint16_t(e(2)), std::uint16_t(e(3))});
  }
  // Empty with large other extents: the running products, each within int64_t here.
  using E = std::dextents<std::uint64_t, 3>;
  static float buf[1] = {};
  const std::mdspan<float, E> empty(buf, E(std::uint64_t{1} << 40, 0, std::uint64_t{1} << 40));
  const auto view = dm::try_to_dlpack_tensor(empty);
  REQUIRE(view.has_value());
  CHECK(view->get().data == nullptr);
  CHECK(view->get().strides[1] == static_cast<std::int64_t>(empty.stride(1)));
  CHECK(view->get().strides[2] == 1);
}

TEST_CASE("an empty layout_right view whose other extents multiply past index_type") {
  // Valid (its size, 0, fits), but its mapping's stride(0) overflows int64_t (undefined in
  // libc++), and an int8_t one wraps: the running products, capped at INT64_MAX.
  const std::mdspan<float, std::dextents<std::int64_t, 3>> wide(nullptr, 0, std::int64_t{1} << 62, 4);
  const auto w = dm::try_to_dlpack_tensor(wide);
  REQUIRE(w.has_value());
  CHECK(w->get().data == nullptr);
  CHECK(strides_of(w->get()) == v64{std::numeric_limits<std::int64_t>::max(), 4, 1});
  const std::mdspan<float, std::dextents<std::int8_t, 3>> narrow(nullptr, 0, 100, 100);
  const auto n = dm::try_to_dlpack_tensor(narrow);
  REQUIRE(n.has_value());
  CHECK(strides_of(n->get()) == v64{10000, 100, 1});
  const std::mdspan<float, std::dextents<std::int64_t, 3>, std::layout_left> left(nullptr, 4, std::int64_t{1} << 62, 0);
  const auto l = dm::try_to_dlpack_tensor(left);
  REQUIRE(l.has_value());
  CHECK(strides_of(l->get()) == v64{1, 4, std::numeric_limits<std::int64_t>::max()});
}

TEST_CASE("a layout_stride tensor with padded rows keeps its row pitch") {
  float buf[2 * 8] = {};
  using E = std::dextents<int, 2>;
  std::mdspan<float, E, std::layout_stride> md(buf, std::layout_stride::mapping(E(2, 5), std::array<int, 2>{8, 1}));
  auto owner = dm::to_dlpack_tensor(md);
  CHECK(shape_of(owner.get()) == v64{2, 5});
  CHECK(strides_of(owner.get()) == v64{8, 1});
}

TEST_CASE("empty {0,3} tensor has NULL data but filled shape and strides") {
  int buf[1] = {};
  std::mdspan<int, std::dextents<int, 2>> md(buf, 0, 3);
  auto owner = dm::to_dlpack_tensor(md);
  const DLTensor t = owner.get();
  CHECK(t.data == nullptr);
  CHECK(t.byte_offset == 0);
  CHECK(shape_of(t) == v64{0, 3});
  CHECK(strides_of(t) == v64{3, 1});
}

TEST_CASE("rank 0 has NULL shape and strides and keeps its data") {
  int value = 7;
  std::mdspan<int, std::extents<int>> md(&value);
  auto owner = dm::to_dlpack_tensor(md);
  const DLTensor t = owner.get();
  CHECK(t.ndim == 0);
  CHECK(t.shape == nullptr);
  CHECK(t.strides == nullptr);
  CHECK(t.data == &value);
}

TEST_CASE("const int rank 3 {2,3,4} is allowed and has strides {12,4,1}") {
  const int buf[24] = {};
  std::mdspan<const int, std::extents<int, 2, 3, 4>> md(buf);
  auto owner = dm::to_dlpack_tensor(md);
  const DLTensor t = owner.get();
  CHECK(strides_of(t) == v64{12, 4, 1});
  CHECK(dtype_is(t.dtype, kDLInt, 32));
  CHECK(t.data == static_cast<const void*>(buf));
}

TEST_CASE("size-1 dimensions keep their real strides") {
  float buf[16] = {};
  using E = std::dextents<int, 3>;
  // PyTorch canonicalises the stride of a size-1 dimension; we must not.
  std::mdspan<float, E, std::layout_stride> md(buf, std::layout_stride::mapping(E(2, 1, 3), std::array<int, 3>{3, 7, 1}));
  auto owner = dm::to_dlpack_tensor(md);
  CHECK(strides_of(owner.get()) == v64{3, 7, 1});
  std::mdspan<float, std::dextents<int, 2>> r(buf, 1, 4);
  auto o2 = dm::to_dlpack_tensor(r);
  CHECK(strides_of(o2.get()) == v64{4, 1});
}

TEST_CASE("copies and moves hand out pointers into their own arrays") {
  int buf[6] = {};
  std::mdspan<int, std::dextents<int, 2>> md(buf, 2, 3);
  auto a = dm::to_dlpack_tensor(md);
  auto b = a;  // copy
  const DLTensor ta = a.get();
  const DLTensor tb = b.get();
  CHECK(ta.shape != tb.shape);
  CHECK(ta.strides != tb.strides);
  CHECK(tb.shape == b.shape().data());
  CHECK(shape_of(tb) == v64{2, 3});
  auto c = std::move(b);
  const DLTensor tc = c.get();
  CHECK(tc.shape == c.shape().data());
  CHECK(strides_of(tc) == v64{3, 1});
  dm::dlpack_tensor<2> d;
  d = a;
  CHECK(d.get().shape == d.shape().data());
  CHECK(std::is_nothrow_copy_constructible_v<dm::dlpack_tensor<2>>);
}

TEST_CASE("get() is a reference to the DLTensor the view stores, and copies store their own") {
  static_assert(std::is_same_v<decltype(std::declval<const dm::dlpack_tensor<2>&>().get()), const DLTensor&>);
  int buf[6] = {};
  std::mdspan<int, std::dextents<std::size_t, 2>> md(buf, 2, 3);
  auto a = dm::to_dlpack_tensor(md);
  const DLTensor* ta = &a.get();
  CHECK(ta == &a.get());
  CHECK(ta->shape == a.shape().data());
  CHECK(ta->strides == a.strides().data());
  // A copy assigned over a view of another shape: its DLTensor points at its own arrays,
  // and keeps its values when the source changes or dies.
  std::mdspan<int, std::dextents<std::size_t, 2>> other(buf, 3, 2);
  auto d = dm::to_dlpack_tensor(other);
  {
    auto source = dm::to_dlpack_tensor(md);
    d = source;
    source = dm::to_dlpack_tensor(other);
  }
  CHECK(d.get().shape == d.shape().data());
  CHECK(d.get().strides == d.strides().data());
  CHECK(shape_of(d.get()) == v64{2, 3});
  CHECK(strides_of(d.get()) == v64{3, 1});
  // The try_ form moves its view into the result: the DLTensor there points into it.
  auto r = dm::try_to_dlpack_tensor(md);
  REQUIRE(r.has_value());
  CHECK(r->get().shape == r->shape().data());
  CHECK(r->get().strides == r->strides().data());
  CHECK(shape_of(r->get()) == v64{2, 3});
  // Rank 0 keeps NULL shape and strides through a copy.
  int value = 1;
  const auto s = dm::to_dlpack_tensor(std::mdspan<int, std::extents<int>>(&value));
  const auto s2 = s;
  CHECK(s2.get().shape == nullptr);
  CHECK(s2.get().strides == nullptr);
  CHECK(s2.get().data == &value);
}

TEST_CASE("layout_right: a size above INT64_MAX with every extent and stride in range exports") {
  // The one-test path turns this view away (its size does not fit int64_t); the rules one
  // by one accept it: DLPack bounds the extents and the strides, not their product.
  static float dummy = 0;
  using E = std::dextents<std::size_t, 2>;
  const std::mdspan<float, E> md(&dummy, E(std::size_t{1} << 32, std::size_t{1} << 31));
  const auto view = dm::to_dlpack_tensor(md);
  CHECK(view.get().data == &dummy);
  CHECK(shape_of(view.get()) == v64{std::int64_t{1} << 32, std::int64_t{1} << 31});
  CHECK(strides_of(view.get()) == v64{std::int64_t{1} << 31, 1});
  using L = std::layout_left::mapping<E>;
  const std::mdspan<float, E, std::layout_left> left(&dummy, L(E(std::size_t{1} << 31, std::size_t{1} << 32)));
  const auto lv = dm::to_dlpack_tensor(left);
  CHECK(strides_of(lv.get()) == v64{1, std::int64_t{1} << 31});
  // One past: the extent itself does not fit.
  const std::mdspan<float, E> big(&dummy, E(std::size_t{1} << 63, 1));
  auto r = dm::try_to_dlpack_tensor(big);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::extent_overflow);
  // A stride out of range while every extent fits: 1 x 2^32 x 2^31, stride(0) = 2^63.
  using E3 = std::dextents<std::size_t, 3>;
  const std::mdspan<float, E3> wide(&dummy, E3(1, std::size_t{1} << 32, std::size_t{1} << 31));
  auto w = dm::try_to_dlpack_tensor(wide);
  REQUIRE_FALSE(w.has_value());
  CHECK(w.error().code() == dm::errc::stride_overflow);
  CHECK(std::string(w.error().what()) == "to_dlpack_tensor: stride(0) = 9223372036854775808 does not fit DLPack's int64_t strides");
}

TEST_CASE("an extent that int64 cannot hold throws: the try_ form returns the error") {
  int dummy = 0;
  std::mdspan<int, std::dextents<std::uint64_t, 1>> md(&dummy, std::uint64_t{1} << 63);
  CHECK_THROWS_AS((void)dm::to_dlpack_tensor(md), dm::dlpack_error);
  try {
    (void)dm::to_dlpack_tensor(md);
    FAIL("expected a throw");
  } catch (const dm::dlpack_error& e) {
    CHECK(e.code() == dm::errc::extent_overflow);
    CHECK(std::string_view(e.what()).find("extent(0) = 9223372036854775808") != std::string_view::npos);
  }
  auto r = dm::try_to_dlpack_tensor(md);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::extent_overflow);
  // dlpack_error is a std::invalid_argument, so generic handlers catch it too.
  CHECK_THROWS_AS((void)dm::to_dlpack_tensor(md), std::invalid_argument);
}

TEST_CASE("a stride that int64 cannot hold is reported as stride_overflow") {
  int dummy = 0;
  using E = std::dextents<std::uint64_t, 2>;
  // A 2x1 tensor whose row stride is 2^63: legal for the mapping (span fits uint64) but
  // not representable in DLPack's int64 strides.
  std::mdspan<int, E, std::layout_stride> md(&dummy, std::layout_stride::mapping(E(1, 1), std::array<std::uint64_t, 2>{std::uint64_t{1} << 63, 1}));
  auto r = dm::try_to_dlpack_tensor(md);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::stride_overflow);
}

TEST_CASE("the explicit device overload sets the device") {
  int buf[4] = {};
  std::mdspan<int, std::dextents<int, 1>> md(buf, 4);
  auto owner = dm::to_dlpack_tensor(md, DLDevice{kDLCUDAManaged, 3});
  CHECK(owner.get().device.device_type == kDLCUDAManaged);
  CHECK(owner.get().device.device_id == 3);
  auto r = dm::try_to_dlpack_tensor(md, DLDevice{kDLCUDAHost, 1});
  REQUIRE(r.has_value());
  CHECK(r->device().device_type == kDLCUDAHost);
}

TEST_CASE("an accessor declares its device through the customization point") {
  int buf[4] = {};
  std::mdspan<int, std::dextents<int, 1>, std::layout_right, fake_cuda_accessor<int>> md(buf, 4);
  auto owner = dm::to_dlpack_tensor(md);
  CHECK(owner.get().device.device_type == kDLCUDA);
  CHECK(owner.get().device.device_id == 0);
  static_assert(dm::device_traits<fake_cuda_accessor<int>>::device_type == kDLCUDA);
  static_assert(dm::device_traits<std::default_accessor<int>>::device_type == kDLCPU);

  fake_rocm_accessor<int> acc{};
  acc.ordinal = 2;
  std::mdspan<int, std::dextents<int, 1>, std::layout_right, fake_rocm_accessor<int>> md2(
      buf, std::layout_right::mapping<std::dextents<int, 1>>(std::dextents<int, 1>(4)), acc);
  auto o2 = dm::to_dlpack_tensor(md2);
  CHECK(o2.get().device.device_type == kDLROCM);
  CHECK(o2.get().device.device_id == 2);
}

TEST_CASE("layout_stride_relaxed: the offset travels as byte_offset, data stays the base") {
  double buf[12] = {};
  using E = std::dextents<int, 2>;
  using R = dm::layout_stride_relaxed;
  // A 3x4 view with reversed rows: row stride -4, offset 8 elements.
  std::mdspan<double, E, R> md(buf, R::mapping<E>(E(3, 4), std::array<int, 2>{-4, 1}, 8));
  auto owner = dm::to_dlpack_tensor(md);
  const DLTensor t = owner.get();
  CHECK(t.data == buf);
  CHECK(t.byte_offset == 8 * sizeof(double));
  CHECK(strides_of(t) == v64{-4, 1});
  // A broadcast view: stride 0.
  std::mdspan<double, E, R> bc(buf, R::mapping<E>(E(3, 4), std::array<int, 2>{0, 1}));
  auto ob = dm::to_dlpack_tensor(bc);
  CHECK(strides_of(ob.get()) == v64{0, 1});
  CHECK(ob.get().byte_offset == 0);
}

TEST_CASE("export is constexpr-friendly and allocation-free in shape") {
  static_assert(sizeof(dm::dlpack_tensor<4>) <= 128, "shape and strides are inline");
  // Not trivially copyable: a copy points its DLTensor at its own shape and strides.
  static_assert(!std::is_trivially_copyable_v<dm::dlpack_tensor<4>>);
  static_assert(std::is_nothrow_copy_constructible_v<dm::dlpack_tensor<4>> && std::is_nothrow_move_assignable_v<dm::dlpack_tensor<4>>);
}

TEST_CASE("a default-constructed dlpack_tensor is an empty CPU tensor of its rank") {
  const dm::dlpack_tensor<3> d;
  const DLTensor t = d.get();
  CHECK(t.data == nullptr);
  CHECK(t.ndim == 3);
  CHECK(t.device.device_type == kDLCPU);
  CHECK(t.device.device_id == 0);
  CHECK(t.byte_offset == 0);
  CHECK(shape_of(t) == v64{0, 0, 0});
  CHECK(strides_of(t) == v64{0, 0, 0});
}

// device.hpp's shared pieces, which cuda.hpp, hip.hpp and sycl.hpp only name: tested here,
// without any vendor header, so that every build checks the rules they all inherit.

TEST_CASE("device_id_is_always_zero: DLPack's id-0 kinds, and no others") {
  // dlpack.h: "For vanilla CPU memory, pinned memory, or managed memory, this is set to 0".
  static_assert(dm::device_id_is_always_zero(kDLCPU));
  static_assert(dm::device_id_is_always_zero(kDLCUDAHost));
  static_assert(dm::device_id_is_always_zero(kDLCUDAManaged));
  static_assert(dm::device_id_is_always_zero(kDLROCMHost));
  // Device memory keeps its ordinal; kDLOneAPI's id is dpctl's root-device index.
  for (const std::int32_t type : {kDLCUDA, kDLROCM, kDLOneAPI, kDLOpenCL, kDLVulkan, kDLMetal, kDLExtDev, kDLWebGPU,
                                  kDLHexagon, kDLMAIA, kDLTrn}) {
    INFO(dm::device_type_name(type));
    CHECK_FALSE(dm::device_id_is_always_zero(type));
  }
  // Not device types, including those a shift taken modulo 32 would turn into an id-0
  // kind (33 → kDLCPU, 35 → kDLCUDAHost, 43 → kDLROCMHost, 45 → kDLCUDAManaged).
  for (const std::int32_t type : {-1, 0, 32, 33, 35, 43, 45, 1 << 20, INT32_MIN, INT32_MAX}) {
    INFO(type);
    CHECK_FALSE(dm::device_id_is_always_zero(type));
  }
}

TEST_CASE("memory_kind_accepts: the kind itself, and CUDA managed memory where CUDA device or pinned is wanted") {
  struct row {
    DLDeviceType memory;
    std::int32_t type;
    bool accepted;
  };
  const row rows[] = {
      {kDLCUDA, kDLCUDA, true},           {kDLCUDA, kDLCUDAManaged, true},      {kDLCUDA, kDLCUDAHost, false},
      {kDLCUDA, kDLCPU, false},           {kDLCUDAHost, kDLCUDAHost, true},     {kDLCUDAHost, kDLCUDAManaged, true},
      {kDLCUDAHost, kDLCPU, false},       {kDLCUDAHost, kDLCUDA, false},        {kDLCUDAManaged, kDLCUDAManaged, true},
      {kDLCUDAManaged, kDLCUDA, false},   {kDLCUDAManaged, kDLCUDAHost, false}, {kDLROCM, kDLROCM, true},
      {kDLROCM, kDLROCMHost, false},      {kDLROCM, kDLCUDAManaged, false},     {kDLROCMHost, kDLROCMHost, true},
      {kDLROCMHost, kDLROCM, false},      {kDLROCMHost, kDLCPU, false},         {kDLOneAPI, kDLOneAPI, true},
      {kDLOneAPI, kDLCPU, false},         {kDLOneAPI, kDLCUDAManaged, false},   {kDLCUDA, -1, false},
      {kDLCUDA, 1000, false},
  };
  for (const row& r : rows) {
    INFO(dm::device_type_name(r.memory) << " <- " << dm::device_type_name(r.type) << " (" << r.type << ")");
    CHECK(dm::memory_kind_accepts(r.memory, r.type) == r.accepted);
  }
  static_assert(dm::memory_kind_accepts(kDLCUDA, kDLCUDAManaged));
}

TEST_CASE("device_memory_accessor: ROCm and oneAPI memory report their ordinal, ROCm pinned memory 0") {
  using rocm = dm::device_memory_accessor<int, kDLROCM>;
  using rocm_host = dm::device_memory_accessor<int, kDLROCMHost>;
  using oneapi = dm::device_memory_accessor<int, kDLOneAPI>;
  // Checked at compile time: the accessor is a literal type, as kernels need.
  static_assert(rocm(3).dlpack_device().device_type == kDLROCM && rocm(3).dlpack_device().device_id == 3);
  static_assert(rocm_host(3).dlpack_device().device_type == kDLROCMHost && rocm_host(3).dlpack_device().device_id == 0);
  static_assert(oneapi(2).dlpack_device().device_type == kDLOneAPI && oneapi(2).dlpack_device().device_id == 2);

  int buf[6] = {0, 1, 2, 3, 4, 5};
  using E = std::dextents<int, 2>;
  for (const std::int32_t id : {0, 1, 7}) {
    INFO("device_id " << id);
    const std::mdspan<int, E, std::layout_right, rocm> on_rocm(buf, std::layout_right::mapping<E>(E(2, 3)), rocm(id));
    const auto r = dm::to_dlpack_tensor(on_rocm);
    CHECK(r.device().device_type == kDLROCM);
    CHECK(r.device().device_id == id);

    // The ordinal stays in the accessor; only export applies DLPack's rule.
    const std::mdspan<int, E, std::layout_right, rocm_host> pinned(buf, std::layout_right::mapping<E>(E(2, 3)),
                                                                   rocm_host(id));
    CHECK(pinned.accessor().device_id == id);
    const auto p = dm::to_dlpack_tensor(pinned);
    CHECK(p.device().device_type == kDLROCMHost);
    CHECK(p.device().device_id == 0);

    const std::mdspan<int, E, std::layout_right, oneapi> usm(buf, std::layout_right::mapping<E>(E(2, 3)), oneapi(id));
    const auto u = dm::to_dlpack_tensor(usm);
    CHECK(u.device().device_type == kDLOneAPI);
    CHECK(u.device().device_id == id);
  }

  // Any Memory with an id-0 rule, not just the CUDA kinds, exports 0 through the core.
  const std::mdspan<int, std::dextents<int, 1>, std::layout_right, dm::device_memory_accessor<int, kDLCUDAManaged>>
      managed(buf, std::layout_right::mapping<std::dextents<int, 1>>(std::dextents<int, 1>(6)),
              dm::device_memory_accessor<int, kDLCUDAManaged>(4));
  CHECK(dm::to_dlpack_tensor(managed).device().device_id == 0);
  // An explicit device is the caller's word and is passed on as given.
  CHECK(dm::to_dlpack_tensor(managed, DLDevice{kDLCUDAManaged, 4}).device().device_id == 4);
}

TEST_CASE("device_memory_accessor: import into ROCm and oneAPI views accepts their kind only, any ordinal") {
  int buf[4] = {};
  using E = std::dextents<int, 1>;
  using rocm_view = std::mdspan<int, E, std::layout_right, dm::device_memory_accessor<int, kDLROCM>>;
  using rocm_host_view = std::mdspan<int, E, std::layout_right, dm::device_memory_accessor<int, kDLROCMHost>>;
  using oneapi_view = std::mdspan<int, E, std::layout_right, dm::device_memory_accessor<int, kDLOneAPI>>;
  struct row {
    DLDeviceType type;
    bool rocm, rocm_host, oneapi;
  };
  const row rows[] = {
      {kDLCPU, false, false, false},      {kDLROCM, true, false, false},  {kDLROCMHost, false, true, false},
      {kDLOneAPI, false, false, true},    {kDLCUDA, false, false, false}, {kDLCUDAManaged, false, false, false},
  };
  for (const row& r : rows) {
    for (const std::int32_t id : {0, 3}) {
      INFO(dm::device_type_name(r.type) << ", device_id " << id);
      dlpm_test::tensor_builder b(buf, dlpm_test::i32, {4}, {1}, 0, DLDevice{r.type, id});
      const auto v_rocm = dm::try_to_mdspan<rocm_view>(b.get());
      const auto v_rocm_host = dm::try_to_mdspan<rocm_host_view>(b.get());
      const auto v_oneapi = dm::try_to_mdspan<oneapi_view>(b.get());
      CHECK(v_rocm.has_value() == r.rocm);
      CHECK(v_rocm_host.has_value() == r.rocm_host);
      CHECK(v_oneapi.has_value() == r.oneapi);
      if (!v_rocm) CHECK(v_rocm.error().code() == dm::errc::device_mismatch);
      if (!v_rocm_host) CHECK(v_rocm_host.error().code() == dm::errc::device_mismatch);
      if (!v_oneapi) CHECK(v_oneapi.error().code() == dm::errc::device_mismatch);
      // Plain to_mdspan default-constructs the accessor.
      if (v_rocm) CHECK(v_rocm->accessor().device_id == 0);
    }
  }
  // device_traits sees the same rule as memory_kind_accepts.
  static_assert(dm::device_traits<dm::device_memory_accessor<int, kDLROCM>>::device_type == kDLROCM);
  static_assert(dm::device_traits<dm::device_memory_accessor<int, kDLOneAPI>>::accepts(kDLOneAPI));
  static_assert(!dm::device_traits<dm::device_memory_accessor<int, kDLOneAPI>>::accepts(kDLCPU));
  static_assert(!dm::device_traits<dm::device_memory_accessor<int, kDLROCM>>::accepts(kDLROCMHost));
}

TEST_CASE("device_memory_accessor is a trivially copyable policy: const views keep the ordinal, kinds do not mix") {
  using A = dm::device_memory_accessor<float, kDLROCM>;
  static_assert(std::is_default_constructible_v<A>);
  static_assert(std::is_trivially_copyable_v<A>);  // passed to kernels by value
  static_assert(std::is_same_v<A::offset_policy, A>);
  static_assert(std::is_same_v<A::data_handle_type, float*>);
  static_assert(std::is_convertible_v<A, dm::device_memory_accessor<const float, kDLROCM>>);
  static_assert(!std::is_convertible_v<dm::device_memory_accessor<const float, kDLROCM>, A>);
  static_assert(!std::is_convertible_v<A, dm::device_memory_accessor<float, kDLROCMHost>>);
  static_assert(!std::is_convertible_v<A, dm::device_memory_accessor<float, kDLOneAPI>>);
  // Explicit from an ordinal: an int is not silently an accessor.
  static_assert(std::is_constructible_v<A, std::int32_t> && !std::is_convertible_v<std::int32_t, A>);
  static_assert(A().device_id == 0);

  float buf[4] = {0, 1, 2, 3};
  const std::mdspan<float, std::dextents<int, 1>, std::layout_right, A> md(
      buf, std::layout_right::mapping<std::dextents<int, 1>>(std::dextents<int, 1>(4)), A(6));
  const std::mdspan<const float, std::dextents<int, 1>, std::layout_right, dm::device_memory_accessor<const float, kDLROCM>>
      read_only = md;
  CHECK(read_only.accessor().device_id == 6);
  CHECK(read_only[2] == 2.0f);
  CHECK(dm::to_dlpack_tensor(read_only).device().device_id == 6);
}
