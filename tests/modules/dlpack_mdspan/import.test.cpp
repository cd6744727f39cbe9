// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// to_mdspan / try_to_mdspan: every import case of CCCL's suite, then every rule.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::f32;
using dlpm_test::f64;
using dlpm_test::i32;
using dlpm_test::tensor_builder;

namespace {
struct fp4_in_a_byte;
}
template <>
struct dlpack_mdspan::dtype_traits<fp4_in_a_byte> {
  static constexpr DLDataType value{kDLFloat4_e2m1fn, 4, 1};
};

namespace {
template <class T, std::size_t R>
using right = std::mdspan<T, std::dextents<std::int64_t, R>>;
template <class T, std::size_t R>
using left = std::mdspan<T, std::dextents<std::int64_t, R>, std::layout_left>;
template <class T, std::size_t R>
using strided = std::mdspan<T, std::dextents<std::int64_t, R>, std::layout_stride>;
template <class T, std::size_t R>
using relaxed = std::mdspan<T, std::dextents<std::int64_t, R>, dm::layout_stride_relaxed>;

template <class M>
dm::errc import_error(const DLTensor& t, const dm::tensor_requirements& o = {}) {
  auto r = dm::try_to_mdspan<M>(t, o);
  return r ? dm::errc::ok : r.error().code();
}
template <class M>
std::string import_message(const DLTensor& t, const dm::tensor_requirements& o = {}) {
  auto r = dm::try_to_mdspan<M>(t, o);
  return r ? std::string("ok") : std::string(r.error().what());
}

// The errc carried by the dlpack_error that to_mdspan<M> throws (ok if none is thrown).
template <class M>
dm::errc thrown_code(const DLTensor& t) {
  try {
    (void)dm::to_mdspan<M>(t);
  } catch (const dm::dlpack_error& e) {
    return e.code();
  }
  return dm::errc::ok;
}

// An fp4 value stored in a whole byte, registered with the sub-byte dtype.
struct fp4_in_a_byte {
  unsigned char bits;
};

// An accessor for CUDA device memory (declares it through the customization point).
template <class T>
struct device_accessor {
  using offset_policy = device_accessor;
  using element_type = T;
  using reference = T&;
  using data_handle_type = T*;
  static constexpr DLDeviceType dlpack_device_type = kDLCUDA;
  static constexpr bool dlpack_accepts(DLDeviceType t) { return t == kDLCUDA || t == kDLCUDAManaged; }
  reference access(data_handle_type p, std::size_t i) const noexcept { return p[i]; }
  data_handle_type offset(data_handle_type p, std::size_t i) const noexcept { return p + i; }
};
}  // namespace

// ---- CCCL's import cases -------------------------------------------------------------

TEST_CASE("rank 0 never touches shape or strides") {
  int v = 42;
  tensor_builder b(&v, i32, {}, {});
  DLTensor t = b.get();
  t.shape = reinterpret_cast<std::int64_t*>(0x1);  // dangling: must not be read
  t.strides = reinterpret_cast<std::int64_t*>(0x1);
  auto m = dm::to_mdspan<std::mdspan<int, std::extents<int>>>(t);
  CHECK(m[] == 42);
}

TEST_CASE("empty tensors import for right, left and stride layouts") {
  int dummy = 0;
  tensor_builder r1(&dummy, i32, {0, 5}, {5, 1});
  CHECK(dm::to_mdspan<right<int, 2>>(r1.get()).extent(0) == 0);
  tensor_builder r2(&dummy, i32, {2, 0}, {0, 1});
  CHECK(dm::to_mdspan<right<int, 2>>(r2.get()).extent(1) == 0);
  tensor_builder l1(&dummy, i32, {0, 5}, {1, 0});
  CHECK(dm::to_mdspan<left<int, 2>>(l1.get()).size() == 0);
  tensor_builder s1(&dummy, i32, {0, 5}, {5, 1});
  CHECK(dm::to_mdspan<strided<int, 2>>(s1.get()).size() == 0);
  // NumPy's (0,0,0) strides on an empty array (tvm-ffi#607) count as compact.
  tensor_builder zeros(&dummy, i32, {0, 3, 4}, {0, 0, 0});
  CHECK(dm::to_mdspan<right<int, 3>>(zeros.get()).size() == 0);
  CHECK(dm::to_mdspan<strided<int, 3>>(zeros.get()).size() == 0);
}

TEST_CASE("empty tensors with NULL data are accepted (CCCL rejects them)") {
  tensor_builder b(nullptr, i32, {0, 3}, {3, 1});
  auto m = dm::to_mdspan<right<int, 2>>(b.get());
  CHECK(m.data_handle() == nullptr);
  CHECK(m.extent(1) == 3);
  b.tensor.byte_offset = 8;  // still no arithmetic on NULL
  CHECK(dm::to_mdspan<right<int, 2>>(b.get()).data_handle() == nullptr);
}

TEST_CASE("ranks 1 to 3 as right, left and stride, including padded strides") {
  float buf[64];
  for (int i = 0; i < 64; ++i) buf[i] = static_cast<float>(i);
  tensor_builder r1(buf, f32, {5}, {1});
  CHECK(dm::to_mdspan<right<float, 1>>(r1.get())[4] == 4.f);
  tensor_builder r2(buf, f32, {2, 3}, {3, 1});
  CHECK(dm::to_mdspan<right<float, 2>>(r2.get())[1, 2] == 5.f);
  tensor_builder l2(buf, f32, {2, 3}, {1, 2});
  CHECK(dm::to_mdspan<left<float, 2>>(l2.get())[1, 2] == 5.f);
  tensor_builder r3(buf, f32, {2, 3, 4}, {12, 4, 1});
  CHECK(dm::to_mdspan<right<float, 3>>(r3.get())[1, 2, 3] == 23.f);
  tensor_builder l3(buf, f32, {2, 3, 4}, {1, 2, 6});
  CHECK(dm::to_mdspan<left<float, 3>>(l3.get())[1, 2, 3] == 23.f);
  tensor_builder p2(buf, f32, {2, 3}, {4, 1});
  auto s2 = dm::to_mdspan<strided<float, 2>>(p2.get());
  CHECK(s2[1, 2] == 6.f);
  CHECK(s2.stride(0) == 4);
  tensor_builder p3(buf, f32, {2, 3, 4}, {16, 5, 1});
  CHECK(dm::to_mdspan<strided<float, 3>>(p3.get())[1, 2, 3] == 29.f);
  CHECK(import_error<right<float, 2>>(p2.get()) == dm::errc::non_compact_strides);
}

TEST_CASE("const element types import (they do not compile in CCCL)") {
  const int buf[6] = {0, 1, 2, 3, 4, 5};
  tensor_builder b(const_cast<int*>(buf), i32, {2, 3}, {3, 1});
  auto m = dm::to_mdspan<std::mdspan<const int, std::extents<int, 2, 3>>>(b.get());
  CHECK(m[1, 1] == 4);
}

TEST_CASE("byte_offset is added to the pointer, never ignored") {
  int buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  tensor_builder b(buf, i32, {2, 3}, {3, 1}, 8);
  auto m = dm::to_mdspan<right<int, 2>>(b.get());
  CHECK(m[0, 0] == 2);
  CHECK(m.data_handle() == buf + 2);
}

TEST_CASE("broadcast and negative strides with byte_offset through the relaxed layout") {
  int buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = i;
  tensor_builder bc(buf, i32, {3, 4}, {0, 1});
  auto b = dm::to_mdspan<relaxed<int, 2>>(bc.get());
  CHECK(b[2, 3] == 3);
  CHECK(b[0, 1] == b[2, 1]);
  CHECK(import_error<strided<int, 2>>(bc.get()) == dm::errc::non_positive_stride);

  // Rows reversed, NumPy style: data points at the first row, which is the last in memory.
  tensor_builder rev(buf + 8, i32, {3, 4}, {-4, 1});
  auto r = dm::to_mdspan<relaxed<int, 2>>(rev.get());
  CHECK(r[0, 0] == 8);
  CHECK(r[2, 3] == 3);
  CHECK(r.mapping().offset() == 8);
  CHECK(r.data_handle() == buf);
  // The same through byte_offset from the base: the offset becomes the mapping's.
  tensor_builder rev_off(buf, i32, {3, 4}, {-4, 1}, 8 * sizeof(int));
  auto r2 = dm::to_mdspan<relaxed<int, 2>>(rev_off.get());
  CHECK(r2.data_handle() == buf);
  CHECK(r2.mapping().offset() == 8);
  CHECK(r2[2, 0] == 0);
  CHECK(import_error<strided<int, 2>>(rev.get()) == dm::errc::non_positive_stride);
}

TEST_CASE("CCCL's exception cases each raise dlpack_error with a specific errc") {
  int buf[6] = {};
  tensor_builder b(buf, i32, {2, 3}, {3, 1});
  CHECK(thrown_code<right<int, 3>>(b.get()) == dm::errc::ndim_mismatch);
  CHECK(thrown_code<right<float, 2>>(b.get()) == dm::errc::dtype_mismatch);
  CHECK(thrown_code<left<int, 2>>(b.get()) == dm::errc::non_compact_strides);
  b.tensor.device = DLDevice{kDLCUDA, 0};
  CHECK(thrown_code<right<int, 2>>(b.get()) == dm::errc::device_mismatch);
}

// ---- every rule ----------------------------------------------------------------------

TEST_CASE("rule 1: host views accept CPU, pinned and managed memory: device ids are checked") {
  int buf[4] = {};
  for (auto type : {kDLCPU, kDLCUDAHost, kDLCUDAManaged}) {
    tensor_builder b(buf, i32, {4}, {1}, 0, DLDevice{type, 0});
    CHECK(import_error<right<int, 1>>(b.get()) == dm::errc::ok);
  }
  tensor_builder gpu(buf, i32, {4}, {1}, 0, DLDevice{kDLCUDA, 1});
  CHECK(import_message<right<int, 1>>(gpu.get()) ==
        "device kDLCUDA (type 2) is not accepted by the target, whose memory is kDLCPU");
  using device_view = std::mdspan<int, std::dextents<int, 1>, std::layout_right, device_accessor<int>>;
  CHECK(import_error<device_view>(gpu.get()) == dm::errc::ok);
  dm::tensor_requirements want_device_0;
  want_device_0.device_id = 0;
  CHECK(import_error<device_view>(gpu.get(), want_device_0) == dm::errc::device_id_mismatch);
  tensor_builder managed(buf, i32, {4}, {1}, 0, DLDevice{kDLCUDAManaged, 0});
  CHECK(import_error<device_view>(managed.get(), want_device_0) == dm::errc::ok);
  tensor_builder host(buf, i32, {4}, {1});
  CHECK(import_error<device_view>(host.get()) == dm::errc::device_mismatch);
}

TEST_CASE("rule 2: ndim must equal the rank: negative or absurd ndim is its own error") {
  int buf[4] = {};
  tensor_builder b(buf, i32, {4}, {1});
  CHECK(import_message<right<int, 2>>(b.get()) == "ndim = 1 but the target has rank 2");
  b.get();
  b.tensor.ndim = -1;
  CHECK(import_error<right<int, 1>>(b.tensor) == dm::errc::invalid_ndim);
  b.tensor.ndim = 1000;
  CHECK(import_error<right<int, 1>>(b.tensor) == dm::errc::invalid_ndim);
}

TEST_CASE("rule 3: dtype must match exactly, cv-qualifiers stripped") {
  std::int32_t buf[4] = {};
  tensor_builder b(buf, i32, {4}, {1});
  CHECK(import_error<right<const std::int32_t, 1>>(b.get()) == dm::errc::ok);
  CHECK(import_error<right<std::uint32_t, 1>>(b.get()) == dm::errc::dtype_mismatch);
  CHECK(import_message<right<float, 1>>(b.get()) ==
        "dtype int32 does not match the required float32");
  b.tensor.dtype.lanes = 2;
  CHECK(import_error<right<std::int32_t, 1>>(b.get()) == dm::errc::dtype_mismatch);
  b.tensor.dtype = dlpm_test::dt(kDLInt, 6);
  CHECK(import_error<right<std::int32_t, 1>>(b.get()) == dm::errc::invalid_dtype);
  b.tensor.dtype = dlpm_test::dt(kDLInt, 32, 0);
  CHECK(import_error<right<std::int32_t, 1>>(b.get()) == dm::errc::invalid_dtype);
  // Old producers sent bool as uint8 (jax#4719): a bool view refuses it.
  bool flags[2] = {};
  tensor_builder u8(flags, dlpm_test::dt(kDLUInt, 8), {2}, {1});
  CHECK(import_error<right<bool, 1>>(u8.get()) == dm::errc::dtype_mismatch);
}

TEST_CASE("rule 4: shape is non-NULL, non-negative, fits index_type and matches static extents") {
  int buf[6] = {};
  tensor_builder b(buf, i32, {2, 3}, {3, 1});
  DLTensor t = b.get();
  t.shape = nullptr;
  CHECK(import_message<right<int, 2>>(t) == "shape is NULL while ndim = 2");
  tensor_builder neg(buf, i32, {2, -3}, {3, 1});
  CHECK(import_message<right<int, 2>>(neg.get()) == "shape[1] = -3 is negative");
  CHECK(import_message<std::mdspan<int, std::extents<int, 2, 4>>>(b.get()) == "shape[1] = 3 but the view's static extent is 4");
  CHECK(import_error<std::mdspan<int, std::extents<int, 2, 3>>>(b.get()) == dm::errc::ok);
  tensor_builder big(buf, i32, {1, 300}, {300, 1});
  CHECK(import_error<std::mdspan<int, std::dextents<std::int8_t, 2>>>(big.get()) == dm::errc::extent_overflow);
}

TEST_CASE("rule 5: NULL data with elements is refused") {
  tensor_builder b(nullptr, i32, {2, 3}, {3, 1});
  CHECK(import_message<right<int, 2>>(b.get()) == "data is NULL but the tensor has 6 elements");
}

TEST_CASE("rule 7: NULL strides mean row-major by default, or are rejected by policy") {
  int buf[6] = {0, 1, 2, 3, 4, 5};
  auto b = tensor_builder::without_strides(buf, i32, {2, 3});
  CHECK(dm::to_mdspan<right<int, 2>>(b.get())[1, 0] == 3);
  CHECK(dm::to_mdspan<strided<int, 2>>(b.get()).stride(0) == 3);
  CHECK(import_error<left<int, 2>>(b.get()) == dm::errc::non_compact_strides);
  dm::tensor_requirements strict;
  strict.null_strides = dm::null_strides_policy::reject;
  CHECK(import_error<right<int, 2>>(b.get(), strict) == dm::errc::null_strides);
}

TEST_CASE("rule 7: size-1 dimensions may carry any stride for right and left layouts") {
  int buf[6] = {};
  tensor_builder torch(buf, i32, {2, 1}, {1, 7});  // CCCL rejects this; it is compact
  CHECK(import_error<right<int, 2>>(torch.get()) == dm::errc::ok);
  tensor_builder drjit(buf, i32, {1, 3}, {0, 1});
  CHECK(import_error<right<int, 2>>(drjit.get()) == dm::errc::ok);
  CHECK(import_error<strided<int, 2>>(drjit.get()) == dm::errc::ok);
  tensor_builder col(buf, i32, {3, 1}, {1, 1});  // (N,1): both C and F
  CHECK(import_error<right<int, 2>>(col.get()) == dm::errc::ok);
  CHECK(import_error<left<int, 2>>(col.get()) == dm::errc::ok);
}

TEST_CASE("rule 7: layout_stride needs positive, non-overlapping strides") {
  int buf[12] = {};
  tensor_builder overlap(buf, i32, {3, 4}, {1, 1});
  CHECK(import_error<strided<int, 2>>(overlap.get()) == dm::errc::overlapping_strides);
  CHECK(import_error<relaxed<int, 2>>(overlap.get()) == dm::errc::ok);
  tensor_builder zero(buf, i32, {3, 4}, {0, 1});
  CHECK(import_error<strided<int, 2>>(zero.get()) == dm::errc::non_positive_stride);
}

TEST_CASE("rule 7: layout_stride's uniqueness in any order of the dimensions, both instances (issue 50)") {
  // check_structure notes uniqueness in the order of the dimensions and in its reverse
  // while it sums the span; any other order is sorted. to_mdspan runs the silent rules,
  // try_to_mdspan with requirements the worded ones: both must agree.
  int buf[64] = {};
  struct layout_case {
    std::array<std::int64_t, 3> shape, strides;
    dm::errc want;
  };
  const layout_case cases[] = {
      {{2, 3, 4}, {24, 8, 1}, dm::errc::ok},                    // a slice of a row-major array
      {{4, 3, 2}, {1, 4, 12}, dm::errc::ok},                    // a transpose
      {{3, 2, 4}, {4, 12, 1}, dm::errc::ok},                    // a permutation
      {{2, 1, 3}, {3, 7, 1}, dm::errc::ok},                     // an extent-1 axis, odd stride, descending
      {{2, 1, 3}, {1, 7, 2}, dm::errc::ok},                     // the same ascending
      {{2, 2, 1}, {1, 2, -5}, dm::errc::ok},                    // an extent-1 axis's stride never matters
      {{3, 2, 1}, {1, 2, 1}, dm::errc::overlapping_strides},    // stride 2 inside the reach 3 of stride 1
      {{2, 3, 1}, {2, 1, 1}, dm::errc::overlapping_strides},    // reversed: stride 2 inside the reach 3
      {{2, 2, 2}, {2, 1, 3}, dm::errc::overlapping_strides},    // no order: 3 inside 2's reach 4
      {{2, 2, 2}, {4, 1, 2}, dm::errc::ok},                     // sorted: 1, 2, 4
      {{2, 3, 2}, {1, 2, 6}, dm::errc::ok},                     // ascending, each stride exactly the reach inside
      {{2, 3, 2}, {1, 2, 5}, dm::errc::overlapping_strides},    // the same with 5 inside the reach 6
      {{2, 2, 1}, {1, std::int64_t{1} << 40, 1}, dm::errc::ok},  // a large stride
  };
  for (const auto& c : cases) {
    tensor_builder t(buf, i32, {c.shape[0], c.shape[1], c.shape[2]}, {c.strides[0], c.strides[1], c.strides[2]});
    INFO("shape " << c.shape[0] << "x" << c.shape[1] << "x" << c.shape[2] << ", strides " << c.strides[0] << ", "
                  << c.strides[1] << ", " << c.strides[2]);
    CHECK(import_error<strided<int, 3>>(t.get()) == c.want);
    CHECK(thrown_code<strided<int, 3>>(t.get()) == c.want);
    CHECK(dm::try_to_mdspan<strided<int, 3>>(t.get()).has_value() == (c.want == dm::errc::ok));
    if (c.want == dm::errc::ok) {
      const auto m = dm::to_mdspan<strided<int, 3>>(t.get());
      for (std::size_t r = 0; r < 3; ++r)
        if (c.shape[r] != 1) CHECK(m.stride(r) == c.strides[r]);
    }
  }
}

TEST_CASE("rule 7: the span is computed with overflow checks") {
  int buf[1] = {};
  tensor_builder huge(buf, i32, {3, 2}, {std::int64_t{1} << 62, 1});
  CHECK(import_error<strided<int, 2>>(huge.get()) == dm::errc::span_overflow);
  tensor_builder minstride(buf, i32, {2}, {std::numeric_limits<std::int64_t>::min()});
  CHECK(import_error<relaxed<int, 1>>(minstride.get()) == dm::errc::stride_overflow);
  tensor_builder count(buf, i32, {std::int64_t{1} << 40, std::int64_t{1} << 40}, {1, 1});
  CHECK(import_error<relaxed<int, 2>>(count.get()) == dm::errc::span_overflow);
  tensor_builder narrow(buf, i32, {2, 100}, {100, 1});
  CHECK(import_error<std::mdspan<int, std::dextents<std::int8_t, 2>, std::layout_stride>>(narrow.get()) ==
        dm::errc::extent_overflow);
  tensor_builder span8(buf, i32, {2, 10}, {120, 1});  // span 1 + 120 + 9 = 130 > 127
  CHECK(import_error<std::mdspan<int, std::dextents<std::int8_t, 2>, std::layout_stride>>(span8.get()) ==
        dm::errc::span_overflow);
}

// The silent import of elements of 2 bytes or more does not ask for the INT64_MIN refusal
// (check_structure): the span refuses those tensors. The tightest cases: an int16 element
// (the smallest such item), the largest byte_offset, the INT64_MIN stride on a dimension
// of extent 2 while low is still 0 (its reach, exactly INT64_MIN, is the only one that
// does not overflow). Each must still be refused by to_mdspan and try_to_mdspan without
// requirements (the silent rules first): if the byte span's first byte stopped refusing
// them, the silent form would hand out a view.
TEST_CASE("rule 7: an INT64_MIN stride is refused through the silent rules too, as stride_overflow") {
  constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const DLDataType i16 = dlpm_test::dt(kDLInt, 16);
  alignas(8) std::int16_t buf[8] = {};
  auto refused = []<class M>(const DLTensor& t, std::type_identity<M>) {
    const auto r = dm::try_to_mdspan<M>(t);
    CHECK_FALSE(r.has_value());
    if (!r) CHECK(r.error().code() == dm::errc::stride_overflow);
    CHECK(thrown_code<M>(t) == dm::errc::stride_overflow);
  };
  for (const std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{std::numeric_limits<std::int64_t>::max() - 1}}) {
    tensor_builder one(buf, i16, {2}, {min}, offset);
    refused(one.get(), std::type_identity<relaxed<std::int16_t, 1>>{});
    tensor_builder middle(buf, i16, {2, 2, 3}, {1, min, 2}, offset);  // low is 0 when INT64_MIN comes
    refused(middle.get(), std::type_identity<relaxed<std::int16_t, 3>>{});
    tensor_builder last(buf, i16, {3, 2}, {-1, min}, offset);  // low is -2 first: the sum overflows
    refused(last.get(), std::type_identity<relaxed<std::int16_t, 2>>{});
    tensor_builder wide(buf, i16, {3}, {min}, offset);  // the reach itself overflows
    refused(wide.get(), std::type_identity<relaxed<std::int16_t, 1>>{});
  }
  tensor_builder as_float(buf, f32, {2, 2}, {min, 1});
  refused(as_float.get(), std::type_identity<relaxed<float, 2>>{});
  // On an extent-1 dimension INT64_MIN addresses nothing and is accepted.
  tensor_builder unit(buf, i16, {1, 2}, {min, 3});
  const auto v = dm::try_to_mdspan<relaxed<std::int16_t, 2>>(unit.get());
  REQUIRE(v.has_value());
  CHECK(v->stride(1) == 3);
}

// Into std::layout_stride the silent rules add a dimension's end (reach + stride) without
// its overflow test for elements of 2 bytes or more: an end past INT64_MAX needs a highest
// index of 2^62 or more, whose byte span overflows. Refused, silent or worded, as the span.
TEST_CASE("rule 7: a dimension's end past INT64_MAX is refused by the byte span, through the silent rules too") {
  const DLDataType i16 = dlpm_test::dt(kDLInt, 16);
  alignas(8) std::int16_t buf[8] = {};
  constexpr std::int64_t quarter = std::int64_t{1} << 62;
  tensor_builder one(buf, i16, {2}, {quarter});  // end 2^63, highest index 2^62
  tensor_builder two(buf, i16, {2, 2}, {1, quarter});
  tensor_builder outer(buf, i16, {2, 2}, {quarter, quarter - 1});  // the outer end overflows, the inner fits
  auto refused = []<class M>(const DLTensor& t, std::type_identity<M>) {
    const auto r = dm::try_to_mdspan<M>(t);
    CHECK_FALSE(r.has_value());
    if (!r) CHECK(r.error().code() == dm::errc::span_overflow);
    CHECK(thrown_code<M>(t) == dm::errc::span_overflow);
  };
  refused(one.get(), std::type_identity<strided<std::int16_t, 1>>{});
  refused(two.get(), std::type_identity<strided<std::int16_t, 2>>{});
  refused(outer.get(), std::type_identity<strided<std::int16_t, 2>>{});
}

TEST_CASE("rule 8: byte_offset is range-checked, then must be a multiple of the element size") {
  int buf[8] = {};
  tensor_builder odd(buf, i32, {2}, {1}, 2);
  CHECK(import_message<right<int, 1>>(odd.get()) == "byte_offset = 2 is not a multiple of the element size 4");
  tensor_builder huge(buf, i32, {2}, {1}, ~std::uint64_t{0} - 3);
  CHECK(import_error<right<int, 1>>(huge.get()) == dm::errc::byte_offset_overflow);
  tensor_builder wrap(reinterpret_cast<void*>(~std::uintptr_t{0} - 64), i32, {2}, {1}, std::uint64_t{1} << 40);
  CHECK(import_error<right<int, 1>>(wrap.get()) == dm::errc::byte_offset_overflow);
}

TEST_CASE("rule 9: data + byte_offset must be aligned, plus the requested alignment") {
  alignas(64) unsigned char raw[256] = {};
  tensor_builder mis(raw + 1, f32, {4}, {1});
  CHECK(import_error<right<float, 1>>(mis.get()) == dm::errc::misaligned_data);
  tensor_builder ok(raw + 16, f32, {4}, {1});
  dm::tensor_requirements align64;
  align64.min_alignment = 64;
  CHECK(import_error<right<float, 1>>(ok.get(), align64) == dm::errc::misaligned_data);
  tensor_builder aligned(raw, f32, {4}, {1});
  CHECK(import_error<right<float, 1>>(aligned.get(), align64) == dm::errc::ok);
  aligned.tensor.byte_offset = 16;
  CHECK(import_error<right<float, 1>>(aligned.get(), align64) == dm::errc::misaligned_data);
  dm::tensor_requirements not_pow2;
  not_pow2.min_alignment = 48;
  CHECK(import_error<right<float, 1>>(ok.get(), not_pow2) == dm::errc::invalid_argument);
  // Opaque-handle devices: the pointer is not an address, so no alignment check applies.
  tensor_builder opencl(raw + 1, f32, {4}, {1}, 0, DLDevice{kDLOpenCL, 0});
  auto r = dm::try_to_mdspan<right<float, 1>>(opencl.get());
  CHECK((!r && r.error().code() == dm::errc::device_mismatch));
}

TEST_CASE("per-dimension divisibility is checked") {
  float buf[48] = {};
  tensor_builder b(buf, f32, {6, 8}, {8, 1});
  const std::int64_t by_4_8[] = {3, 8};
  dm::tensor_requirements o;
  o.layout.shape_divisors = by_4_8;
  CHECK(import_error<right<float, 2>>(b.get(), o) == dm::errc::ok);
  const std::int64_t by_4[] = {4, 0};
  o.layout.shape_divisors = by_4;
  CHECK(import_message<right<float, 2>>(b.get(), o) == "shape[0] = 6 is not a multiple of 4");
}

TEST_CASE("rule 10: sub-byte dtypes cannot be viewed element-wise") {
  unsigned char packed[4] = {};
  tensor_builder fp4(packed, dlpm_test::dt(kDLFloat4_e2m1fn, 4, 2), {4}, {1});
  CHECK(import_error<right<unsigned char, 1>>(fp4.get()) == dm::errc::dtype_mismatch);
  // A one-byte type registered with the packed fp4 dtype cannot view packed data.
  tensor_builder fp4_single(packed, dlpm_test::dt(kDLFloat4_e2m1fn, 4, 1), {4}, {1});
  CHECK(import_error<right<fp4_in_a_byte, 1>>(fp4_single.get()) == dm::errc::subbyte_not_viewable);
}

TEST_CASE("the supported layouts satisfy importable_mdspan") {
  static_assert(dm::importable_mdspan<right<int, 2>>);
  static_assert(dm::importable_mdspan<left<const float, 3>>);
  static_assert(dm::importable_mdspan<strided<double, 1>>);
  static_assert(dm::importable_mdspan<relaxed<int, 4>>);
}

// ---- Soundness at the extremes ----

namespace {
// The standard's preconditions of layout_stride::mapping(extents, strides): positive
// strides and a permutation P with stride[P[i]] >= stride[P[i-1]] * extent[P[i-1]]
// (checked here by trying every permutation: ranks are tiny).
template <class Mapping>
bool meets_layout_stride_preconditions(const Mapping& m) {
  constexpr std::size_t rank = Mapping::extents_type::rank();
  std::array<std::size_t, rank> p{};
  for (std::size_t r = 0; r < rank; ++r) {
    if (m.stride(r) <= 0) return false;
    p[r] = r;
  }
  do {
    bool ok = true;
    for (std::size_t i = 1; i < rank && ok; ++i) {
      const auto need = static_cast<__int128>(m.stride(p[i - 1])) * m.extents().extent(p[i - 1]);
      ok = static_cast<__int128>(m.stride(p[i])) >= need;
    }
    if (ok) return true;
  } while (std::next_permutation(p.begin(), p.end()));
  return rank == 0;
}

// The verdict of the silent rules (to_mdspan, try_to_mdspan without requirements, run first)
// and of the worded ones (try_to_mdspan with requirements): the same, and the same view if
// any (into std::layout_stride, one that meets the mapping's preconditions).
template <class M>
dm::errc silent_and_worded_verdict(const DLTensor& t) {
  const auto worded = dm::try_to_mdspan<M>(t, dm::tensor_requirements{});
  const dm::errc want = worded ? dm::errc::ok : worded.error().code();
  CHECK(thrown_code<M>(t) == want);
#ifndef DLPM_USE_MODULE  // the silent instance alone (internal, so the header form only): a refusal there is no error
  dm::detail::import_plan<M> plan;
  CHECK(dm::detail::import_rules<M, false>(t, 0, dm::detail::no_requirements, plan, dm::detail::silent{}) ==
        worded.has_value());
#endif
  const auto silent = dm::try_to_mdspan<M>(t);
  REQUIRE(silent.has_value() == worded.has_value());
  if (silent) {
    CHECK(silent->data_handle() == worded->data_handle());
    CHECK(silent->mapping() == worded->mapping());
    if constexpr (std::is_same_v<typename M::layout_type, std::layout_stride>)
      CHECK(meets_layout_stride_preconditions(silent->mapping()));
    CHECK(dm::to_mdspan<M>(t).mapping() == worded->mapping());
  }
  return want;
}
}  // namespace

TEST_CASE("layout_stride: an empty tensor's strides are chosen valid, without overflow") {
  const std::int64_t p40 = std::int64_t{1} << 40;
  // NULL strides, shape {0, 2^40, 2^40}: `compact *= shape` overflowed int64.
  auto huge = tensor_builder::without_strides(nullptr, i32, {0, p40, p40});
  auto v = dm::try_to_mdspan<strided<int, 3>>(huge.get());
  REQUIRE(v.has_value());
  CHECK(meets_layout_stride_preconditions(v->mapping()));
  // {0, 100, 100} into int8 extents: valid strides exist (1, 1, 100), so it imports.
  auto small = tensor_builder::without_strides(nullptr, i32, {0, 100, 100});
  using int8_strided = std::mdspan<int, std::dextents<std::int8_t, 3>, std::layout_stride>;
  auto w = dm::try_to_mdspan<int8_strided>(small.get());
  REQUIRE(w.has_value());
  CHECK(meets_layout_stride_preconditions(w->mapping()));
  // Two chains: int8 {12, 0, 12, 12} needs the 12s split around the zero.
  tensor_builder split(nullptr, i32, {12, 0, 12, 12}, {1, 1, 1, 1});
  using int8_strided4 = std::mdspan<int, std::dextents<std::int8_t, 4>, std::layout_stride>;
  auto x = dm::try_to_mdspan<int8_strided4>(split.get());
  REQUIRE(x.has_value());
  CHECK(meets_layout_stride_preconditions(x->mapping()));
  // No representable strides at all: an error that says so.
  tensor_builder none(nullptr, i32, {0, 12, 12, 12, 12}, {1, 1, 1, 1, 1});
  using int8_strided5 = std::mdspan<int, std::dextents<std::int8_t, 5>, std::layout_stride>;
  CHECK(import_error<int8_strided5>(none.get()) == dm::errc::stride_overflow);
}

TEST_CASE("layout_stride: extent-1 dimensions have no stride that matters") {
  int buf[8] = {};
  // {2,1,2} strides {1,3,2} is unique: the extent-1 stride 3 was called overlapping.
  tensor_builder middle(buf, i32, {2, 1, 2}, {1, 3, 2});
  auto v = dm::try_to_mdspan<strided<int, 3>>(middle.get());
  REQUIRE(v.has_value());
  CHECK(meets_layout_stride_preconditions(v->mapping()));
  CHECK(&(*v)[1, 0, 1] == buf + 3);
  // {1,3} strides {2^40,1} into int32 extents: layout_right accepted it, layout_stride not.
  tensor_builder row(buf, i32, {1, 3}, {std::int64_t{1} << 40, 1});
  using i32_right = std::mdspan<int, std::dextents<std::int32_t, 2>>;
  using i32_strided = std::mdspan<int, std::dextents<std::int32_t, 2>, std::layout_stride>;
  using i32_relaxed = std::mdspan<int, std::dextents<std::int32_t, 2>, dm::layout_stride_relaxed>;
  CHECK(import_error<i32_right>(row.get()) == dm::errc::ok);
  CHECK(import_error<i32_strided>(row.get()) == dm::errc::ok);
  CHECK(import_error<i32_relaxed>(row.get()) == dm::errc::ok);
  auto s = dm::to_mdspan<i32_strided>(row.get());
  CHECK(&s[0, 2] == buf + 2);
}

// The silent rules into std::layout_stride count a tensor's elements only while its strides
// are C-contiguous (check_structure's `uncounted`): from the first stride that is not, from
// the innermost dimension out, the span pass reads the extents. So what the count decided
// must come out the same without it, silent (to_mdspan, try_to_mdspan) and worded (with
// requirements): an extent 0 outside the counted dimensions (an empty tensor, accepted
// whatever its strides and data), a negative one (refused), a count past INT64_MAX (refused,
// by the span and uniqueness) and past the index_type (refused). The tightest tensors: the
// zero extent behind each refusal of the pass; a unique tensor of 2^63 int8 elements, whose
// highest index is INT64_MAX exactly (so its byte span, not its index span, refuses it); a
// column-major one of 128 elements into int8 extents, highest index 127.
TEST_CASE("layout_stride: a strided tensor's elements are not counted by the silent rules, and the count's verdicts hold") {
  using i8_strided = std::mdspan<std::int8_t, std::dextents<std::int64_t, 2>, std::layout_stride>;
  using narrow = std::mdspan<int, std::dextents<std::int8_t, 2>, std::layout_stride>;
  using unsigned_strided = std::mdspan<int, std::dextents<std::uint32_t, 2>, std::layout_stride>;
  const DLDataType i8 = dlpm_test::dt(kDLInt, 8);
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t quarter = std::int64_t{1} << 62;
  alignas(8) int buf[256] = {};
  using M3 = strided<int, 3>;
  SUBCASE("an extent 0 outside the counted dimensions: empty, whatever the pass would refuse") {
    tensor_builder negative_stride(buf, i32, {2, 0, 3}, {-5, 1, 2});
    tensor_builder zero_stride(buf, i32, {2, 0, 3}, {0, 1, 2});
    tensor_builder span(buf, i32, {3, 0, 2}, {max, 1, 2});
    tensor_builder overlap(buf, i32, {4, 0, 4}, {1, 1, 2});
    tensor_builder outermost(buf, i32, {0, 2, 3}, {1, 1, 2});
    tensor_builder null_data(nullptr, i32, {0, 2, 3}, {1, 7, 2});
    for (tensor_builder* b : {&negative_stride, &zero_stride, &span, &overlap, &outermost, &null_data}) {
      INFO("shape " << b->shape[0] << "x" << b->shape[1] << "x" << b->shape[2]);
      CHECK(silent_and_worded_verdict<M3>(b->get()) == dm::errc::ok);
      CHECK(dm::to_mdspan<M3>(b->get()).size() == 0);
    }
    CHECK(dm::to_mdspan<M3>(null_data.get()).data_handle() == nullptr);
    // An empty tensor's data + byte_offset must still not wrap.
    tensor_builder wrap(reinterpret_cast<void*>(~std::uintptr_t{0} - 64), i32, {0, 2, 3}, {1, 1, 2}, std::uint64_t{1} << 40);
    CHECK(silent_and_worded_verdict<M3>(wrap.get()) == dm::errc::byte_offset_overflow);
  }
  SUBCASE("a negative extent outside the counted dimensions is refused, beside a zero one too") {
    tensor_builder alone(buf, i32, {-1, 2, 3}, {1, 1, 2});
    tensor_builder with_zero(buf, i32, {0, -1, 3}, {1, 1, 2});
    tensor_builder behind_refusal(buf, i32, {2, -3, 3}, {-5, 1, 2});
    for (tensor_builder* b : {&alone, &with_zero, &behind_refusal})
      CHECK(silent_and_worded_verdict<M3>(b->get()) == dm::errc::negative_extent);
  }
  SUBCASE("a count past INT64_MAX is refused without the count") {
    std::int8_t bytes[8] = {};
    tensor_builder unique(bytes, i8, {quarter, 2}, {1, quarter});  // 2^63 elements, highest index INT64_MAX
    CHECK(silent_and_worded_verdict<i8_strided>(unique.get()) == dm::errc::span_overflow);
    tensor_builder overlapping(bytes, i8, {std::int64_t{1} << 32, std::int64_t{1} << 32}, {1, 1});  // 2^64, span 2^33 - 2
    CHECK(silent_and_worded_verdict<i8_strided>(overlapping.get()) == dm::errc::span_overflow);
    tensor_builder fits(bytes, i8, {quarter - 1, 2}, {1, quarter});  // 2^63 - 2 elements, highest index 2^63 - 2
    CHECK(silent_and_worded_verdict<i8_strided>(fits.get()) == dm::errc::ok);
  }
  SUBCASE("a count past the index_type is refused without the count, at the limit") {
    tensor_builder over(buf, i32, {64, 2}, {1, 64});  // 128 elements, highest index 127
    CHECK(silent_and_worded_verdict<narrow>(over.get()) == dm::errc::extent_overflow);
    tensor_builder at(buf, i32, {63, 2}, {1, 64});  // 126 elements, highest index 126
    CHECK(silent_and_worded_verdict<narrow>(at.get()) == dm::errc::ok);
    tensor_builder slice(buf, i32, {2, 3}, {4, 1});  // an unsigned index_type is no reason to refuse
    CHECK(silent_and_worded_verdict<unsigned_strided>(slice.get()) == dm::errc::ok);
  }
}

// The silent rules into layout_stride_relaxed compare the strides with the C-contiguous
// ones from the innermost dimension out only up to the first that differs; from there out
// they count the extents in the span pass (check_structure's `counted_in_span`), entered
// at that dimension (up to rank 8 through a jump table, above it in a loop). So what the
// count decided must come out the same, silent (to_mdspan, try_to_mdspan) and worded (with
// requirements), wherever the count stops: an extent 0 past the stop (an empty tensor,
// accepted whatever its strides), a negative one (refused), a count past INT64_MAX (refused,
// though the span of a broadcast is small) and past the index_type; and every rank's view
// has the worded view's mapping, wherever its stride differs.
TEST_CASE("layout_stride_relaxed: the silent rules count past the first strided dimension in the span pass, and the count's verdicts hold") {
  constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const DLDataType i8 = dlpm_test::dt(kDLInt, 8);
  alignas(8) int buf[4096] = {};
  using M3 = relaxed<int, 3>;
  SUBCASE("an extent 0 past the stop: empty, whatever the pass would refuse") {
    tensor_builder negative_stride(buf, i32, {2, 0, 3}, {-5, 1, 2});
    tensor_builder span(buf, i32, {3, 0, 2}, {std::numeric_limits<std::int64_t>::max(), 1, 2});
    tensor_builder outermost(buf, i32, {0, 2, 3}, {1, 7, 2});
    tensor_builder null_data(nullptr, i32, {0, 2, 3}, {1, 7, 2});
    tensor_builder behind_huge_count(buf, i32, {std::int64_t{1} << 40, std::int64_t{1} << 40, 0}, {0, 0, 5});
    for (tensor_builder* b : {&negative_stride, &span, &outermost, &null_data, &behind_huge_count}) {
      INFO("shape " << b->shape[0] << "x" << b->shape[1] << "x" << b->shape[2]);
      CHECK(silent_and_worded_verdict<M3>(b->get()) == dm::errc::ok);
      CHECK(dm::to_mdspan<M3>(b->get()).size() == 0);
    }
  }
  SUBCASE("a negative extent past the stop is refused, beside a zero one too") {
    tensor_builder alone(buf, i32, {-1, 2, 3}, {1, 1, 2});
    tensor_builder with_zero(buf, i32, {0, -1, 3}, {1, 1, 2});
    tensor_builder behind_refusal(buf, i32, {2, -3, 3}, {min, 1, 2});
    for (tensor_builder* b : {&alone, &with_zero, &behind_refusal})
      CHECK(silent_and_worded_verdict<M3>(b->get()) == dm::errc::negative_extent);
  }
  SUBCASE("a count past INT64_MAX is refused though the broadcast's span is small") {
    std::int8_t bytes[8] = {};
    using i8_relaxed = relaxed<std::int8_t, 3>;
    tensor_builder broadcast(bytes, i8, {std::int64_t{1} << 32, std::int64_t{1} << 32, 2}, {0, 0, 1});  // 2^65
    CHECK(silent_and_worded_verdict<i8_relaxed>(broadcast.get()) == dm::errc::span_overflow);
    tensor_builder one_past(bytes, i8, {std::int64_t{1} << 31, std::int64_t{1} << 31, 2}, {0, 0, 1});  // 2^63
    CHECK(silent_and_worded_verdict<i8_relaxed>(one_past.get()) == dm::errc::span_overflow);
    tensor_builder below(bytes, i8, {(std::int64_t{1} << 31) - 1, std::int64_t{1} << 31, 2}, {0, 0, 1});  // 2^63 - 2^32
    CHECK(silent_and_worded_verdict<i8_relaxed>(below.get()) == dm::errc::ok);
  }
  SUBCASE("a count past the index_type is refused at the limit") {
    using narrow = std::mdspan<int, std::dextents<std::int8_t, 2>, dm::layout_stride_relaxed>;
    tensor_builder over(buf, i32, {64, 2}, {0, 1});  // 128 elements
    CHECK(silent_and_worded_verdict<narrow>(over.get()) == dm::errc::extent_overflow);
    tensor_builder at(buf, i32, {63, 2}, {0, 1});  // 126 elements
    CHECK(silent_and_worded_verdict<narrow>(at.get()) == dm::errc::ok);
  }
  SUBCASE("an INT64_MIN stride past the stop is refused for bytes, and free on an extent-1 axis") {
    std::int8_t bytes[64] = {};
    tensor_builder refused(bytes, i8, {2, 2, 3}, {min, 4, 1});
    CHECK(silent_and_worded_verdict<relaxed<std::int8_t, 3>>(refused.get()) == dm::errc::stride_overflow);
    tensor_builder free_axis(bytes + 8, i8, {1, 2, 3}, {min, -3, 1});
    CHECK(silent_and_worded_verdict<relaxed<std::int8_t, 3>>(free_axis.get()) == dm::errc::ok);
  }
  SUBCASE("every rank to 10, the stride differing at each dimension: the worded view") {
    // Row-major strides of 2x1x3x2x1x3x2x2x1x2 (extent-1 axes with any stride among them),
    // the strides of one dimension replaced: reversed, broadcast, doubled.
    const std::int64_t extents[] = {2, 1, 3, 2, 1, 3, 2, 2, 1, 2};
    auto every_stop = [&]<std::size_t R>(std::integral_constant<std::size_t, R>) {
      for (std::size_t stop = 0; stop < R; ++stop) {
        for (const int change : {-1, 0, 2}) {
          auto b = tensor_builder::row_major_but_at(buf + 2048, extents, R, stop, change);
          INFO("rank " << R << ", dimension " << stop << ", stride times " << change);
          CHECK(silent_and_worded_verdict<relaxed<int, R>>(b.get()) == dm::errc::ok);
          // The same past the stop with an extent 0 (empty) and a negative one (refused).
          if (stop > 0) {
            b.shape[0] = 0;
            CHECK(silent_and_worded_verdict<relaxed<int, R>>(b.get()) == dm::errc::ok);
            b.shape[0] = -2;
            CHECK(silent_and_worded_verdict<relaxed<int, R>>(b.get()) == dm::errc::negative_extent);
          }
        }
      }
    };
    [&]<std::size_t... R>(std::index_sequence<R...>) {
      (every_stop(std::integral_constant<std::size_t, R + 1>{}), ...);
    }(std::make_index_sequence<10>{});
  }
}

TEST_CASE("tensor_requirements are checked for empty tensors too") {
  tensor_builder empty(nullptr, i32, {0, 4}, {4, 1});
  dm::tensor_requirements bad_alignment;
  bad_alignment.min_alignment = 48;
  CHECK(import_error<right<int, 2>>(empty.get(), bad_alignment) == dm::errc::invalid_argument);
  const std::int64_t three[] = {1, 2, 3};
  dm::tensor_requirements bad_divisors;
  bad_divisors.layout.shape_divisors = three;
  CHECK(import_error<right<int, 2>>(empty.get(), bad_divisors) == dm::errc::invalid_argument);
  const std::int64_t negative[] = {1, -2};
  dm::tensor_requirements negative_divisor;
  negative_divisor.layout.shape_divisors = negative;
  CHECK(import_error<right<int, 2>>(empty.get(), negative_divisor) == dm::errc::invalid_argument);
  dm::tensor_requirements bad_device;
  bad_device.device_id = -5;
  CHECK(import_error<right<int, 2>>(empty.get(), bad_device) == dm::errc::invalid_argument);
}

TEST_CASE("the INT64_MIN byte span is refused by import as by validate") {
  float buf[32] = {};
  tensor_builder b(reinterpret_cast<unsigned char*>(buf) + 64, f32, {2, 3}, {0, -(std::int64_t{1} << 60)});
  const auto code = import_error<relaxed<float, 2>>(b.get());
  CHECK((code == dm::errc::byte_offset_overflow || code == dm::errc::span_overflow));
}

TEST_CASE("result<T> assigns like std::expected, in C++20 and C++23") {
  static_assert(std::is_copy_assignable_v<dm::result<int>>);
  static_assert(std::is_move_assignable_v<dm::result<int>>);
  static_assert(std::is_move_assignable_v<dm::result<dm::managed_tensor>>);
  dm::result<int> r = 1;
  r = dm::unexpected_error(dm::error(dm::errc::invalid_argument, "no"));
  CHECK_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::invalid_argument);
  dm::result<int> other = 7;
  r = other;
  REQUIRE(r.has_value());
  CHECK(*r == 7);
  r = dm::result<int>(dm::unexpected_error(dm::error(dm::errc::read_only, "ro")));
  CHECK(r.error().code() == dm::errc::read_only);
  r = 9;
  CHECK(*r == 9);
}

TEST_CASE("layout_stride_relaxed: a rebased span of 2^63 elements is refused, not wrapped (found by the differential test)") {
  // lowest index -(2^63 - 1): the rebased offset plus one was computed with a signed overflow.
  tensor_builder b(reinterpret_cast<void*>(std::uintptr_t{0xd60d18f80c920385}), dlpm_test::dt(kDLInt, 8), {2, 1},
                   {-std::numeric_limits<std::int64_t>::max(), -1});
  CHECK(import_error<relaxed<std::int8_t, 2>>(b.get()) == dm::errc::span_overflow);
}

TEST_CASE("layout_stride_relaxed: a reversed view of data itself reaches down to exactly INT64_MIN bytes") {
  // byte_offset 0 and a negative stride: the byte span's first byte, lowest_index * item,
  // must fit int64, so the lowest index may be INT64_MIN / item and not one below. The data
  // sits above 2^63 so that the address space holds the span; nothing is dereferenced.
  const auto high_address = reinterpret_cast<void*>(std::uintptr_t{0x8000000000000010});
  auto boundary = []<class T>(void* data, DLDataType dtype, std::type_identity<T>) {
    constexpr std::int64_t lowest = std::numeric_limits<std::int64_t>::min() / static_cast<std::int64_t>(sizeof(T));
    tensor_builder at(data, dtype, {2}, {lowest});
    CHECK(import_error<relaxed<T, 1>>(at.get()) == dm::errc::ok);
    CHECK(thrown_code<relaxed<T, 1>>(at.get()) == dm::errc::ok);
    const auto v = dm::to_mdspan<relaxed<T, 1>>(at.get());
    CHECK(v.mapping().offset() == -lowest);  // rebased on the lowest element, 2^63 bytes below data
    CHECK(reinterpret_cast<std::uintptr_t>(v.data_handle()) == std::uintptr_t{0x10});
    CHECK(v.stride(0) == lowest);
    tensor_builder below(data, dtype, {2}, {lowest - 1});
    CHECK(import_error<relaxed<T, 1>>(below.get()) == dm::errc::span_overflow);
    CHECK(thrown_code<relaxed<T, 1>>(below.get()) == dm::errc::span_overflow);
  };
  boundary(high_address, dlpm_test::dt(kDLInt, 16), std::type_identity<std::int16_t>{});
  boundary(high_address, f32, std::type_identity<float>{});
  boundary(high_address, f64, std::type_identity<double>{});
}

namespace {
// The ordered path's answer (import_error), held equal to the one-pass path's (thrown_code).
template <class M>
dm::errc both_paths(const DLTensor& t) {
  const dm::errc ordered = import_error<M>(t);
  CHECK(thrown_code<M>(t) == ordered);
  return ordered;
}
}  // namespace

TEST_CASE("layout_stride_relaxed: the element count at ranks 4 and 8 is checked exactly at the index_type's limit") {
  // Zero strides keep the span at one element, so only the count can fail. Both paths:
  // to_mdspan<M>(t) takes the one-pass path (a product tree), requirements the ordered checks.
  int one[1] = {7};
  using wide8 = std::mdspan<int, std::dextents<std::int64_t, 8>, dm::layout_stride_relaxed>;
  // 7 * 7 * 73 * 127 * 337 * 92737 * 649657 = 2^63 - 1, the largest count int64 holds.
  tensor_builder largest(one, i32, {7, 7, 73, 127, 337, 92737, 649657, 1}, {0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(both_paths<wide8>(largest.get()) == dm::errc::ok);
  CHECK(dm::to_mdspan<wide8>(largest.get()).size() == static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()));
  tensor_builder doubled(one, i32, {7, 7, 73, 127, 337, 92737, 649657, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(both_paths<wide8>(doubled.get()) != dm::errc::ok);
  // Every extent at the range bound (2^29 at rank 8): the pairwise products fit, their
  // products do not.
  constexpr std::int64_t big = std::int64_t{1} << 29;
  tensor_builder huge(one, i32, {big, big, big, big, big, big, big, big}, {0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(both_paths<wide8>(huge.get()) != dm::errc::ok);
  // A 16-bit index_type at rank 4: 32256 elements fit, 32768 do not.
  using narrow4 = std::mdspan<int, std::dextents<std::int16_t, 4>, dm::layout_stride_relaxed>;
  tensor_builder fits(one, i32, {8, 8, 8, 63}, {0, 0, 0, 0});
  CHECK(both_paths<narrow4>(fits.get()) == dm::errc::ok);
  tensor_builder over(one, i32, {8, 8, 8, 64}, {0, 0, 0, 0});
  CHECK(both_paths<narrow4>(over.get()) == dm::errc::extent_overflow);
  // The same count in the other order, so the tree pairs other extents.
  tensor_builder over_reordered(one, i32, {64, 8, 8, 8}, {0, 0, 0, 0});
  CHECK(both_paths<narrow4>(over_reordered.get()) == dm::errc::extent_overflow);
}

TEST_CASE("an error is small, so result<M> is about the size of M") {
  using M4 = std::mdspan<float, std::dextents<std::int64_t, 4>, std::layout_stride>;
  static_assert(sizeof(dm::error) == 64);
  static_assert(sizeof(dm::result<M4>) <= sizeof(M4) + 16);
  // The message is worded on demand, from the values the failure kept.
  int buf[2] = {};
  tensor_builder b(buf, i32, {2, -3}, {1, 1});
  auto r = dm::try_to_mdspan<right<int, 2>>(b.get());
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message().view() == "shape[1] = -3 is negative");
  CHECK(std::string_view(r.error().what()) == "shape[1] = -3 is negative");
}

namespace {
dm::errc validate_error_of(const DLTensor& t) {
  dm::error e;
  return dm::validate(t, &e) ? dm::errc::ok : e.code();
}
}  // namespace

TEST_CASE("no element may sit at address 0 (found by the differential test)") {
  // double {3}, stride -1, data 0x10: the lowest element is at address 0, and the relaxed
  // view rebased on it was formed by pointer arithmetic yielding NULL (UBSan).
  tensor_builder b(reinterpret_cast<void*>(std::uintptr_t{0x10}), f64, {3}, {-1});
  CHECK(validate_error_of(b.get()) == dm::errc::byte_offset_overflow);
  CHECK(import_error<relaxed<double, 1>>(b.get()) == dm::errc::byte_offset_overflow);
}

TEST_CASE("an empty tensor's compact strides must fit index_type (found by the differential test)") {
  // layout_left {0, 128, 2^62}: stride(2) = 0 * 128 ... but {128, 2^62, 0}: stride(2) =
  // 128 * 2^62, computed by the mapping in index_type, overflows: refused, not handed out.
  tensor_builder over(nullptr, i32, {128, std::int64_t{1} << 62, 0}, {1, 1, 1});
  CHECK(import_error<left<int, 3>>(over.get()) == dm::errc::stride_overflow);
  CHECK(import_error<right<int, 3>>(over.get()) == dm::errc::ok);  // right: strides 2^62*0, 0, 1
  // uint8 extents {1, 255, 2, 0} into layout_right: stride(0)'s non-zero factors 255 * 2
  // exceed 255 (libc++ multiplies from the last dimension, so the zero does not save it).
  tensor_builder small(nullptr, i32, {1, 255, 2, 0}, {1, 1, 1, 1});
  using u8_right = std::mdspan<int, std::dextents<std::uint8_t, 4>>;
  CHECK(import_error<u8_right>(small.get()) == dm::errc::stride_overflow);
  tensor_builder fine(nullptr, i32, {0, 100, 100}, {1, 1, 1});
  using i16_right = std::mdspan<int, std::dextents<std::int16_t, 3>>;
  CHECK(import_error<i16_right>(fine.get()) == dm::errc::ok);
}

TEST_CASE("try_view: a tensor's flags, READ_ONLY and padded sub-byte storage, in one rule") {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  tensor_builder b(buf, f32, {2, 3}, {3, 1});
  using writable = std::mdspan<float, std::dextents<int, 2>>;
  using readable = std::mdspan<const float, std::dextents<int, 2>>;
  CHECK(dm::try_view<writable>(b.get(), 0));
  auto refused = dm::try_view<writable>(b.get(), dm::flag_read_only);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == dm::errc::read_only);
  auto ok = dm::try_view<readable>(b.get(), dm::flag_read_only | dm::flag_is_copied);
  REQUIRE(ok);
  CHECK((*ok)[1, 2] == 5.f);
  dm::tensor_requirements opts;
  opts.device_id = 1;
  auto wrong_device = dm::try_view<readable>(b.get(), 0, opts);
  REQUIRE_FALSE(wrong_device);
  CHECK(wrong_device.error().code() == dm::errc::device_id_mismatch);
  CHECK(dm::try_view<writable>(b.get(), dm::flag_read_only, dm::tensor_requirements{}).error().code() == dm::errc::read_only);
}

TEST_CASE("try_view: padded sub-byte storage views one element per byte") {
  std::uint8_t bytes[4] = {1, 2, 3, 4};
  tensor_builder b(bytes, dlpm_test::dt(kDLFloat4_e2m1fn, 4), {4}, {1});
  using fp4 = std::mdspan<const dm::float4_e2m1fn, std::dextents<int, 1>>;
  CHECK_FALSE(dm::try_view<fp4>(b.get(), 0));  // packed: two per byte, not viewable
  auto padded = dm::try_view<fp4>(b.get(), dm::flag_is_subbyte_type_padded);
  REQUIRE(padded);
  CHECK((*padded)[3].bits == 4);
  CHECK(dm::try_view<fp4>(b.get(), dm::flag_is_subbyte_type_padded, dm::tensor_requirements{}));
}
