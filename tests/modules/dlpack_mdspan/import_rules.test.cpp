// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A typed import given tensor_requirements: every field holds on top of what the target
// type implies, each refusal with its errc, in import_rules' documented order.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::f32;
using dlpm_test::i32;
using dlpm_test::tensor_builder;

namespace {
using matrix = std::mdspan<float, std::dextents<std::int64_t, 2>>;
using const_matrix = std::mdspan<const float, std::dextents<std::int64_t, 2>>;
template <class T>
using const_matrix_of = std::mdspan<const T, std::dextents<std::int64_t, 2>>;

// try_to_mdspan's errc, after checking that to_mdspan throws the same one.
template <class M = matrix>
dm::errc refusal(const DLTensor& t, const dm::tensor_requirements& req) {
  const auto r = dm::try_to_mdspan<M>(t, req);
  const dm::errc code = r ? dm::errc::ok : r.error().code();
  dm::errc thrown = dm::errc::ok;
  try {
    (void)dm::to_mdspan<M>(t, req);
  } catch (const dm::dlpack_error& e) {
    thrown = e.code();
  }
  CHECK(thrown == code);
  return code;
}
template <class M = matrix>
std::string message(const DLTensor& t, const dm::tensor_requirements& req) {
  const auto r = dm::try_to_mdspan<M>(t, req);
  return r ? std::string("ok") : std::string(r.error().what());
}
}  // namespace

TEST_CASE("requirements that hold give the same view as none") {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  tensor_builder b(buf, f32, {2, 3}, {3, 1});
  const std::int64_t shape[] = {2, -1};
  const std::int32_t devices[] = {kDLCUDA, kDLCPU};
  dm::tensor_requirements req;
  req.ndim = 2;
  req.check_dtype = true;
  req.dtype = f32;
  req.shape = shape;
  req.order = 'C';
  req.device_types = devices;
  req.num_device_types = 2;
  req.device_id = 0;
  req.min_alignment = 4;
  req.writable = true;
  const auto v = dm::try_to_mdspan<matrix>(b.get(), req);
  REQUIRE_MESSAGE(v.has_value(), v.error().what());
  CHECK(v->data_handle() == buf);
  CHECK(v->extent(0) == 2);
  CHECK(v->extent(1) == 3);
  CHECK((*v)[1, 2] == 5.f);
  CHECK(dm::to_mdspan<matrix>(b.get(), req).data_handle() == buf);
  CHECK(dm::try_view<matrix>(b.get(), 0, req));
}

TEST_CASE("req.ndim: a rank other than the tensor's is ndim_mismatch, after the target's own rank") {
  float buf[6] = {};
  tensor_builder b(buf, f32, {2, 3}, {3, 1});
  dm::tensor_requirements req;
  req.ndim = 2;
  CHECK(refusal(b.get(), req) == dm::errc::ok);
  req.ndim = 3;
  CHECK(refusal(b.get(), req) == dm::errc::ndim_mismatch);
  CHECK(message(b.get(), req) == "ndim = 2 but the target has rank 3");
  // The target's rank is checked first: a rank-1 target reports its own rank 1.
  CHECK(message<std::mdspan<float, std::dextents<int, 1>>>(b.get(), req) == "ndim = 2 but the target has rank 1");
}

TEST_CASE("req.dtype: the tensor must have it exactly, on top of the target's element type") {
  float buf[6] = {};
  tensor_builder b(buf, f32, {2, 3}, {3, 1});
  dm::tensor_requirements req;
  req.check_dtype = true;
  req.dtype = f32;
  CHECK(refusal(b.get(), req) == dm::errc::ok);
  req.dtype = i32;
  CHECK(refusal(b.get(), req) == dm::errc::dtype_mismatch);
  req.check_dtype = false;  // dtype is read only when asked
  CHECK(refusal(b.get(), req) == dm::errc::ok);
}

TEST_CASE("req.shape: -1 is a wildcard, any other entry must equal the extent") {
  float buf[6] = {};
  tensor_builder b(buf, f32, {2, 3}, {3, 1});
  dm::tensor_requirements req;
  req.ndim = 2;
  const std::int64_t any_rows[] = {-1, 3};
  req.shape = any_rows;
  CHECK(refusal(b.get(), req) == dm::errc::ok);
  const std::int64_t five_columns[] = {-1, 5};
  req.shape = five_columns;
  CHECK(refusal(b.get(), req) == dm::errc::shape_mismatch);
  CHECK(message(b.get(), req) == "shape[1] = 3 but 5 is required");
  // A shape without a rank is nonsense in the requirements, whatever the tensor.
  req.ndim = -1;
  CHECK(refusal(b.get(), req) == dm::errc::invalid_argument);
}

TEST_CASE("req.order: 'F' refuses a C-contiguous tensor even for a strided target") {
  float buf[6] = {};
  tensor_builder c(buf, f32, {2, 3}, {3, 1});
  tensor_builder f(buf, f32, {2, 3}, {1, 2});
  using strided = std::mdspan<float, std::dextents<std::int64_t, 2>, std::layout_stride>;
  dm::tensor_requirements req;
  req.order = 'F';
  CHECK(refusal<strided>(c.get(), req) == dm::errc::non_compact_strides);
  CHECK(message<strided>(c.get(), req) == "the tensor is not F-contiguous");
  CHECK(refusal<strided>(f.get(), req) == dm::errc::ok);
  req.order = 'C';
  CHECK(refusal<strided>(f.get(), req) == dm::errc::non_compact_strides);
  req.order = 'A';
  CHECK(refusal<strided>(c.get(), req) == dm::errc::ok);
  CHECK(refusal<strided>(f.get(), req) == dm::errc::ok);
}

TEST_CASE("req.device_types: a list without the tensor's device type is device_mismatch") {
  float buf[6] = {};
  tensor_builder b(buf, f32, {2, 3}, {3, 1});
  dm::tensor_requirements req;
  const std::int32_t gpus[] = {kDLCUDA, kDLROCM};
  req.device_types = gpus;
  req.num_device_types = 2;
  CHECK(refusal(b.get(), req) == dm::errc::device_mismatch);
  const std::int32_t with_cpu[] = {kDLCUDA, kDLCPU};
  req.device_types = with_cpu;
  CHECK(refusal(b.get(), req) == dm::errc::ok);
  req.num_device_types = 0;  // an empty list accepts nothing
  CHECK(refusal(b.get(), req) == dm::errc::device_mismatch);
  req.device_types = nullptr;  // no list accepts what the target accepts
  CHECK(refusal(b.get(), req) == dm::errc::ok);
}

TEST_CASE("req.device_id: another ordinal is device_id_mismatch, after the dtype") {
  float buf[6] = {};
  tensor_builder b(buf, f32, {2, 3}, {3, 1}, 0, DLDevice{kDLCPU, 0});
  dm::tensor_requirements req;
  req.device_id = 1;
  CHECK(refusal(b.get(), req) == dm::errc::device_id_mismatch);
  // The target's dtype is checked before the required device (import_rules' order).
  CHECK(refusal<std::mdspan<int, std::dextents<int, 2>>>(b.get(), req) == dm::errc::dtype_mismatch);
  req.device_id = 0;
  CHECK(refusal(b.get(), req) == dm::errc::ok);
}

TEST_CASE("req.writable: refuses a READ_ONLY tensor even for a const view") {
  float buf[6] = {};
  tensor_builder b(buf, f32, {2, 3}, {3, 1});
  dm::tensor_requirements req;
  CHECK(dm::try_view<const_matrix>(b.get(), dm::flag_read_only, req));
  req.writable = true;
  const auto refused = dm::try_view<const_matrix>(b.get(), dm::flag_read_only, req);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == dm::errc::read_only);
  CHECK(dm::try_view<const_matrix>(b.get(), 0, req));
  CHECK(dm::try_view<matrix>(b.get(), dm::flag_is_copied, req));
  // try_to_mdspan has no flags: a bare DLTensor is never READ_ONLY.
  CHECK(refusal<const_matrix>(b.get(), req) == dm::errc::ok);
}

TEST_CASE("req.min_alignment: the larger of it and alignof(T) must hold") {
  alignas(64) unsigned char raw[256] = {};
  tensor_builder at16(raw + 16, f32, {2, 3}, {3, 1});
  dm::tensor_requirements req;
  req.min_alignment = 16;
  CHECK(refusal(at16.get(), req) == dm::errc::ok);
  req.min_alignment = 64;
  CHECK(refusal(at16.get(), req) == dm::errc::misaligned_data);
  tensor_builder at64(raw, f32, {2, 3}, {3, 1});
  CHECK(refusal(at64.get(), req) == dm::errc::ok);
  // Asking for less than alignof(float) does not lower it.
  tensor_builder at2(raw + 2, f32, {2, 3}, {3, 1});
  req.min_alignment = 2;
  CHECK(refusal(at2.get(), req) == dm::errc::misaligned_data);
}

TEST_CASE("nonsense requirements are invalid_argument for every tensor, with the field named") {
  float buf[6] = {};
  tensor_builder b(buf, f32, {2, 3}, {3, 1});
  tensor_builder empty(nullptr, f32, {0, 3}, {3, 1});
  dm::tensor_requirements req;
  req.min_alignment = 3;
  CHECK(refusal(b.get(), req) == dm::errc::invalid_argument);
  CHECK(refusal(empty.get(), req) == dm::errc::invalid_argument);
  CHECK(message(b.get(), req) == "requirements: min_alignment = 3 is not a power of two");
  req.min_alignment = 0;
  req.device_id = -5;
  CHECK(message(b.get(), req) == "requirements: device_id = -5 is neither -1 (any) nor a device ordinal");
  req.device_id = -1;
  req.ndim = -2;
  CHECK(refusal(b.get(), req) == dm::errc::invalid_argument);
  req.ndim = -1;
  req.order = 'X';
  CHECK(refusal(b.get(), req) == dm::errc::invalid_argument);
  // Checked before the tensor: a tensor the target refuses still gets the requirements' error.
  req.order = 0;
  req.min_alignment = 3;
  CHECK(refusal<std::mdspan<int, std::dextents<int, 1>>>(b.get(), req) == dm::errc::invalid_argument);
}

TEST_CASE("the worded order: the target's rank, device and dtype, the required ones, then shape, order, alignment, writable") {
  alignas(64) unsigned char raw[256] = {};
  tensor_builder b(raw + 4, f32, {2, 3}, {1, 2});  // F-contiguous, 4 bytes past a 64-byte boundary
  const std::int64_t shape[] = {2, 5};
  const std::int32_t gpu[] = {kDLCUDA};
  using strided = std::mdspan<const float, std::dextents<std::int64_t, 2>, std::layout_stride>;
  dm::tensor_requirements req;
  req.ndim = 2;
  req.shape = shape;
  req.order = 'C';
  req.min_alignment = 64;
  req.writable = true;
  auto first = [&]() {
    const auto r = dm::try_view<strided>(b.get(), dm::flag_read_only, req);
    return r ? dm::errc::ok : r.error().code();
  };
  req.device_types = gpu;
  req.num_device_types = 1;
  req.check_dtype = true;
  req.dtype = i32;
  CHECK(first() == dm::errc::device_mismatch);
  req.device_types = nullptr;
  CHECK(first() == dm::errc::dtype_mismatch);
  req.check_dtype = false;
  CHECK(first() == dm::errc::shape_mismatch);
  req.shape = nullptr;
  CHECK(first() == dm::errc::non_compact_strides);
  req.order = 0;
  CHECK(first() == dm::errc::misaligned_data);
  req.min_alignment = 0;
  CHECK(first() == dm::errc::read_only);
  req.writable = false;
  CHECK(first() == dm::errc::ok);
}

TEST_CASE("managed_tensor::view and try_visit_mdspan take the same requirements") {
  std::vector<float> values(6, 1.f);
  float* data = values.data();
  const auto t = dm::to_managed_tensor(std::mdspan<float, std::dextents<int, 2>>(data, 2, 3), std::move(values));
  dm::tensor_requirements req;
  req.ndim = 2;
  const std::int64_t three_rows[] = {3, -1};
  req.shape = three_rows;
  const auto refused = t.try_view<const_matrix>(req);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == dm::errc::shape_mismatch);
  CHECK_THROWS_AS((void)t.view<const_matrix>(req), dm::dlpack_error);
  const auto visited = dm::try_visit_mdspan<const_matrix_of, float>(t.tensor(), [](auto) { return 1; }, req);
  REQUIRE_FALSE(visited);
  CHECK(visited.error().code() == dm::errc::shape_mismatch);
  const std::int64_t two_rows[] = {2, -1};
  req.shape = two_rows;
  CHECK(t.view<const_matrix>(req).data_handle() == data);
}
