// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CuTe DSL's layout vocabulary, walked through with the examples of CuTe's own
// documentation ("Integration with Frameworks": mark_layout_dynamic,
// mark_compact_shape_dynamic, assumed_align). Each case names the CuTe call and its
// documented answer; where CuTe's documented answer is wrong, the case says so.
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

float buf[8 * 4 * 16 * 2] = {};

// The tensors of CuTe's examples, as DLPack sees them (PyTorch writes stride 1 for size-1 modes).
tensor_builder a() { return {buf, f32, {8, 4, 16, 2}, {2, 16, 64, 1}}; }         // empty(16,4,8,2).permute(2,1,0,3)
tensor_builder b() { return {buf, f32, {1, 4, 1, 32, 1}, {1, 1, 1, 4, 1}}; }     // empty(32,1,1,1,4).permute(3,4,1,0,2)
tensor_builder c() { return {buf, f32, {2, 2}, {8, 2}}; }                        // empty(3,4)[::2, ::2]
tensor_builder d() { return {buf, f32, {3, 4, 2, 5}, {5, 0, 0, 1}}; }            // empty(3,1,1,5).expand(3,4,2,5)
tensor_builder doc() { return {buf, f32, {2, 2, 3, 4}, {2, 1, 4, 12}}; }         // the prose's (2,2,3,4):(2,1,4,12)

std::vector<std::int32_t> order_of(const DLTensor& t) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(t.ndim));
  const auto r = dm::stride_order(t, out);
  REQUIRE_MESSAGE(r.has_value(), r.error().what());
  return out;
}

dm::error check(const DLTensor& t, const dm::layout_requirements& req) {
  dm::error err;
  const bool ok = dm::check_layout(t, req, &err);
  CHECK(ok == (err.code() == dm::errc::ok));
  return err;
}

bool has_text(const dm::error& e, std::string_view text) { return std::string_view(e.what()).find(text) != std::string_view::npos; }

}  // namespace

TEST_CASE("mark_layout_dynamic(): the leading dimension deduced as CuTe deduces it") {
  auto t0 = a();
  CHECK(*dm::leading_dim(t0.get()) == 3);  // "auto deduce the leading dimension to be 3"
  auto t_doc = doc();
  CHECK(*dm::leading_dim(t_doc.get()) == 1);
  auto t5 = b();  // several stride-1 modes, exactly one of extent > 1
  CHECK(*dm::leading_dim(t5.get()) == 1);
  auto t3 = c();  // no stride 1: "all strides remain dynamic"
  CHECK(*dm::leading_dim(t3.get()) == -1);
  auto t4 = d();  // broadcast zeros are not unit strides
  CHECK(*dm::leading_dim(t4.get()) == 3);
  tensor_builder ones(buf, f32, {1, 1, 1}, {1, 1, 1});  // torch.ones(1,1,1): "Can't deduce the leading dimension"
  const auto fail = dm::leading_dim(ones.get());
  REQUIRE_FALSE(fail.has_value());
  CHECK(fail.error().code() == dm::errc::ambiguous_layout);
}

TEST_CASE("mark_layout_dynamic(leading_dim=...): a required leading dimension is checked") {
  dm::layout_requirements req;
  auto t_doc = doc();
  req.leading_dim = 1;
  CHECK(check(t_doc.get(), req).code() == dm::errc::ok);
  req.leading_dim = 0;  // "a deduction failure error is raised because the stride of dimension 0 is 2"
  const auto e0 = check(t_doc.get(), req);
  CHECK(e0.code() == dm::errc::non_compact_strides);
  CHECK(std::string(e0.what()) == "strides[0] = 2, but mode 0 is the required leading dimension (stride 1)");
  // CuTe's prose says leading_dim=-1 marks this layout (?,?,?,?):(?,?,?,1), though mode 3
  // has stride 12: the stride-1 assumption would be wrong, so it is refused here.
  req.leading_dim = -1;
  CHECK(check(t_doc.get(), req).code() == dm::errc::non_compact_strides);

  auto t1 = b();
  req.leading_dim = 0;  // t1: (?,?,?,?,?):(1,?,?,?,?)
  CHECK(check(t1.get(), req).code() == dm::errc::ok);
  req.leading_dim = 2;  // t2
  CHECK(check(t1.get(), req).code() == dm::errc::ok);
  req.leading_dim = 3;  // t7: "Expected strides[leading_dim] == 1, but got 4"
  CHECK(std::string(check(t1.get(), req).what()) == "strides[3] = 4, but mode 3 is the required leading dimension (stride 1)");
  auto t6 = a();
  req.leading_dim = 1;  // t6: "Expected strides[leading_dim] == 1, but got 16"
  CHECK(has_text(check(t6.get(), req), "strides[1] = 16"));
  req.leading_dim = 30;
  const auto range = check(t6.get(), req);
  CHECK(range.code() == dm::errc::invalid_argument);
  CHECK(std::string(range.what()) == "layout requirement: leading_dim = 30 is not a mode of a rank-4 tensor");
}

TEST_CASE("a size-1 mode is a leading dimension whatever its stride: no index uses it") {
  tensor_builder t(buf, f32, {4, 1}, {1, 0});  // DrJit writes 0 for size-1 modes
  dm::layout_requirements req;
  req.leading_dim = 1;
  CHECK(check(t.get(), req).code() == dm::errc::ok);
}

TEST_CASE("stride_order: CuTe's (PyTorch's dim_order), outermost to innermost") {
  tensor_builder t42(buf, f32, {4, 2}, {1, 4});
  CHECK(order_of(t42.get()) == std::vector<std::int32_t>{1, 0});
  tensor_builder t5324(buf, f32, {5, 3, 2, 4}, {3, 1, 15, 30});
  CHECK(order_of(t5324.get()) == std::vector<std::int32_t>{3, 2, 0, 1});
  auto t_doc = doc();  // "the deduced stride_order is [3,2,0,1]"
  CHECK(order_of(t_doc.get()) == std::vector<std::int32_t>{3, 2, 0, 1});
  auto t0 = a();  // "auto deduce the stride order to be [2,1,0,3]"
  CHECK(order_of(t0.get()) == std::vector<std::int32_t>{2, 1, 0, 3});
  // Ties are resolved by mode index: the broadcast zeros of d come in mode order.
  auto t4 = d();
  CHECK(order_of(t4.get()) == std::vector<std::int32_t>{0, 3, 1, 2});
  // The former convention stays: each mode's rank among ascending strides.
  std::int32_t ranks[4] = {};
  REQUIRE(dm::stride_ranks(t_doc.get(), ranks).has_value());
  CHECK(std::vector<std::int32_t>(ranks, ranks + 4) == std::vector<std::int32_t>{1, 0, 2, 3});
}

TEST_CASE("stride_order cannot be deduced where several modes have stride 1, as in CuTe") {
  tensor_builder t151(buf, f32, {1, 5, 1}, {1, 1, 1});
  std::int32_t out[5] = {};
  const auto r = dm::stride_order(t151.get(), out);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::ambiguous_layout);
  auto t7 = b();  // t7: "The layout could not be deduced, please specify the stride_order explicitly"
  CHECK(dm::stride_order(t7.get(), out).error().code() == dm::errc::ambiguous_layout);
  std::int32_t small[2] = {};
  CHECK(dm::stride_order(t7.get(), small).error().code() == dm::errc::invalid_argument);
}

TEST_CASE("mark_compact_shape_dynamic(stride_order=...): the order given is checked against the layout") {
  auto tb = b();
  const std::int32_t t3_order[] = {3, 0, 2, 4, 1};  // t3: accepted
  const std::int32_t t4_order[] = {2, 3, 4, 0, 1};  // t4: accepted
  const std::int32_t t12_order[] = {2, 1, 3, 0, 4};  // t12: "not consistent with the layout"
  dm::layout_requirements req;
  req.compact = true;
  req.stride_order = t3_order;
  CHECK(check(tb.get(), req).code() == dm::errc::ok);
  req.stride_order = t4_order;
  CHECK(check(tb.get(), req).code() == dm::errc::ok);
  req.stride_order = t12_order;
  const auto e12 = check(tb.get(), req);
  CHECK(e12.code() == dm::errc::non_compact_strides);
  CHECK(std::string(e12.what()) ==
        "the strides do not follow stride_order: mode 3 (stride 4) comes after mode 1 (stride 1)");

  auto ta = a();
  const std::int32_t t6_order[] = {0, 1, 2, 3};  // t6: "not consistent with the deduced stride_order"
  req.stride_order = t6_order;
  CHECK(check(ta.get(), req).code() == dm::errc::non_compact_strides);
  const std::int32_t t9_order[] = {2, 1, 2, 3, 4};  // t9: "doesn't contain 0"
  req.stride_order = t9_order;
  const auto e9 = check(tb.get(), req);
  CHECK(e9.code() == dm::errc::invalid_argument);
  CHECK(std::string(e9.what()) == "layout requirement: stride_order must contain every mode, and 0 is missing");
  const std::int32_t t10_order[] = {0, 1, 2, 3, 4, 5};  // t10: "Expected stride_order to have 5 elements, but got 6"
  req.stride_order = t10_order;
  CHECK(std::string(check(tb.get(), req).what()) == "layout requirement: stride_order has 6 entries, the tensor has 5 modes");
}

TEST_CASE("a stride order without compactness: padded rows follow (1,0), and compactness is what they lack") {
  tensor_builder padded(buf, f32, {4, 3}, {8, 1});  // rows of 8, 3 used
  const std::int32_t row_major[] = {0, 1};
  dm::layout_requirements req;
  req.stride_order = row_major;
  CHECK(check(padded.get(), req).code() == dm::errc::ok);
  req.compact = true;
  const auto e = check(padded.get(), req);
  CHECK(e.code() == dm::errc::non_compact_strides);
  CHECK(std::string(e.what()) == "the tensor is not compact in stride_order: mode 0 has stride 8, 3 expected");
  dm::layout_requirements compact_alone;
  compact_alone.compact = true;
  CHECK(check(padded.get(), compact_alone).code() == dm::errc::invalid_argument);
}

TEST_CASE("divisibility of shapes and of strides, per mode") {
  auto ta = a();
  dm::layout_requirements req;
  const std::int64_t t0_shapes[] = {2, 1, 1, 1};  // t0: mode 0 divisibility 2
  req.shape_divisors = t0_shapes;
  CHECK(check(ta.get(), req).code() == dm::errc::ok);
  // t0's derived strides: (2, ?{div=4}, ?{div=16}, 1).
  const std::int64_t t0_strides[] = {2, 4, 16, 1};
  req.stride_divisors = t0_strides;
  CHECK(check(ta.get(), req).code() == dm::errc::ok);
  const std::int64_t too_much[] = {1, 32, 1, 1};
  req.stride_divisors = too_much;
  const auto es = check(ta.get(), req);
  CHECK(es.code() == dm::errc::divisibility);
  CHECK(std::string(es.what()) == "strides[1] = 16 is not a multiple of 32");

  auto tb = b();  // t11: "The shape(1) of mode(0) is not divisible by the divisibility(4)"
  dm::layout_requirements t11;
  const std::int64_t mode0_by_4[] = {4, 1, 1, 1, 1};
  t11.shape_divisors = mode0_by_4;
  const auto e11 = check(tb.get(), t11);
  CHECK(e11.code() == dm::errc::divisibility);
  CHECK(std::string(e11.what()) == "shape[0] = 1 is not a multiple of 4");
  // A size-1 mode's stride is never used: no stride divisibility is asked of it.
  dm::layout_requirements size1;
  const std::int64_t by_8[] = {8, 1, 8, 1, 8};
  size1.stride_divisors = by_8;
  CHECK(check(tb.get(), size1).code() == dm::errc::ok);
  const std::int64_t negative[] = {1, -2, 1, 1, 1};
  size1.stride_divisors = negative;
  CHECK(check(tb.get(), size1).code() == dm::errc::invalid_argument);
}

TEST_CASE("assumed_align is min_alignment, checked, in the typed import and in the requirements") {
  alignas(64) float aligned[16] = {};
  tensor_builder at16(aligned + 4, f32, {4}, {1});  // 16 bytes past a 64-byte boundary
  dm::tensor_requirements req;
  req.min_alignment = 16;
  CHECK(dm::try_to_mdspan<std::mdspan<float, std::dextents<int, 1>>>(at16.get(), req).has_value());
  req.min_alignment = 32;
  CHECK(dm::try_to_mdspan<std::mdspan<float, std::dextents<int, 1>>>(at16.get(), req).error().code() ==
        dm::errc::misaligned_data);
  dm::error err;
  CHECK_FALSE(dm::check_requirements(at16.get(), 0, req, &err));
  CHECK(err.code() == dm::errc::misaligned_data);
}

TEST_CASE("the typed import and the runtime requirements take the same layout requirements") {
  auto ta = a();
  const std::int32_t order[] = {2, 1, 0, 3};
  const std::int64_t strides_by[] = {2, 16, 64, 1};
  using view = std::mdspan<float, std::dextents<int, 4>, std::layout_stride>;
  dm::tensor_requirements req;
  req.layout.leading_dim = -1;
  req.layout.stride_order = order;
  req.layout.compact = true;
  req.layout.stride_divisors = strides_by;
  const auto v = dm::try_to_mdspan<view>(ta.get(), req);
  REQUIRE_MESSAGE(v.has_value(), v.error().what());
  CHECK(v->stride(2) == 64);
  dm::error err;
  CHECK(dm::check_requirements(ta.get(), 0, req, &err));

  req.layout.leading_dim = 0;
  const auto refused = dm::try_to_mdspan<view>(ta.get(), req);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == dm::errc::non_compact_strides);
  CHECK_FALSE(dm::check_requirements(ta.get(), 0, req, &err));
  CHECK(std::string(err.what()) == std::string(refused.error().what()));
}

TEST_CASE("empty tensors: only shapes are judged, and the requirements themselves always are") {
  tensor_builder empty(buf, f32, {0, 3}, {7, 5});
  dm::layout_requirements req;
  const std::int32_t order[] = {1, 0};
  req.leading_dim = 0;
  req.stride_order = order;
  req.compact = true;
  CHECK(check(empty.get(), req).code() == dm::errc::ok);
  const std::int64_t by_2[] = {1, 2};
  req.shape_divisors = by_2;
  CHECK(check(empty.get(), req).code() == dm::errc::divisibility);  // 3 is odd
  dm::layout_requirements nonsense;
  nonsense.leading_dim = 2;
  CHECK(check(empty.get(), nonsense).code() == dm::errc::invalid_argument);
}
