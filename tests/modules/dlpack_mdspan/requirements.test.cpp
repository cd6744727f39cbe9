// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// check_requirements: the runtime constraint struct behind dlpm_check.
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
dm::errc check(const DLTensor& t, const dm::tensor_requirements& r, std::uint64_t flags = 0) {
  dm::error e;
  return dm::check_requirements(t, flags, r, &e) ? dm::errc::ok : e.code();
}
}  // namespace

TEST_CASE("default requirements accept any valid tensor and reject invalid ones") {
  float buf[12] = {};
  tensor_builder b(buf, f32, {3, 4}, {1, 3});
  CHECK(check(b.get(), {}) == dm::errc::ok);
  tensor_builder bad(buf, f32, {3, -4}, {1, 3});
  CHECK(check(bad.get(), {}) == dm::errc::negative_extent);
}

TEST_CASE("dtype, rank, wildcard shape, order, devices and alignment") {
  float buf[12] = {};
  tensor_builder b(buf, f32, {3, 4}, {4, 1});
  dm::tensor_requirements r;
  r.check_dtype = true;
  r.dtype = DLDataType{kDLFloat, 32, 1};
  r.ndim = 2;
  const std::int64_t shape[] = {-1, 4};
  r.shape = shape;
  r.order = 'C';
  const std::int32_t host[] = {kDLCPU, kDLCUDAHost};
  r.device_types = host;
  r.num_device_types = 2;
  r.min_alignment = 4;
  CHECK(check(b.get(), r) == dm::errc::ok);
  r.order = 'F';
  CHECK(check(b.get(), r) == dm::errc::non_compact_strides);
  r.order = 'A';
  r.dtype.bits = 64;
  CHECK(check(b.get(), r) == dm::errc::dtype_mismatch);
  r.dtype.bits = 32;
  const std::int64_t other[] = {3, 5};
  r.shape = other;
  CHECK(check(b.get(), r) == dm::errc::shape_mismatch);
  r.shape = shape;
  b.tensor.device = DLDevice{kDLCUDA, 0};
  CHECK(check(b.get(), r) == dm::errc::device_mismatch);
}

TEST_CASE("writable is refused for READ_ONLY flags only") {
  float buf[4] = {};
  tensor_builder b(buf, f32, {4}, {1});
  dm::tensor_requirements r;
  r.writable = true;
  CHECK(check(b.get(), r) == dm::errc::ok);
  CHECK(check(b.get(), r, DLPACK_FLAG_BITMASK_READ_ONLY) == dm::errc::read_only);
}

TEST_CASE("try_make_managed_tensor: any rank, one allocation, shape copied, row-major filled in") {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  auto b = tensor_builder::without_strides(buf, f32, {2, 3});
  int released = 0;
  struct owner {
    int* count;
    owner(int* c) : count(c) {}
    owner(owner&& o) noexcept : count(std::exchange(o.count, nullptr)) {}
    ~owner() {
      if (count) ++*count;
    }
  };
  {
    const std::size_t before = dlpm_test::allocations_on_this_thread();
    auto t = dm::try_make_managed_tensor(b.get(), owner(&released), DLPACK_FLAG_BITMASK_READ_ONLY);
    REQUIRE(t.has_value());
    CHECK(dlpm_test::allocations_on_this_thread() - before == 1);
    b.shape[0] = 99;
    CHECK(t->tensor().shape[0] == 2);
    CHECK(t->tensor().strides[0] == 3);
    CHECK(t->view<std::mdspan<const float, std::dextents<int, 2>>>()[1, 2] == 5.f);
    CHECK(released == 0);
  }
  CHECK(released == 1);
  tensor_builder bad(buf, f32, {2, -3}, {3, 1});
  owner kept(&released);
  CHECK(dm::try_make_managed_tensor(bad.get(), std::move(kept)).error().code() == dm::errc::negative_extent);
  CHECK(kept.count == &released);  // not moved from on failure
}

TEST_CASE("element_byte_offset is bounds-checked and applies strides and byte_offset") {
  int buf[12] = {};
  tensor_builder b(buf, dlpm_test::i32, {3, 4}, {1, 3}, 8);
  const std::int64_t index[] = {2, 1};
  std::int64_t offset = 0;
  dm::error e;
  REQUIRE(dm::element_byte_offset(b.get(), index, &offset, &e));
  CHECK(offset == 8 + (2 * 1 + 1 * 3) * 4);
  const std::int64_t outside[] = {3, 0};
  CHECK_FALSE(dm::element_byte_offset(b.get(), outside, &offset, &e));
  CHECK(e.code() == dm::errc::invalid_argument);
}

TEST_CASE("nonsense requirements are refused, never read as 'anything'") {
  float buf[12] = {};
  tensor_builder b(buf, f32, {3, 4}, {4, 1});
  const std::int64_t wrong_shape[] = {5, 5};
  dm::tensor_requirements r;
  r.shape = wrong_shape;  // ndim left at -1: the shape was silently ignored
  CHECK(check(b.get(), r) == dm::errc::invalid_argument);
  r.ndim = 2;
  CHECK(check(b.get(), r) == dm::errc::shape_mismatch);
  dm::tensor_requirements minus_two;
  minus_two.ndim = -2;  // was taken as "any rank"
  CHECK(check(b.get(), minus_two) == dm::errc::invalid_argument);
  dm::tensor_requirements too_many;
  too_many.ndim = 65;
  CHECK(check(b.get(), too_many) == dm::errc::invalid_argument);
  dm::tensor_requirements id;
  id.device_id = -7;
  CHECK(check(b.get(), id) == dm::errc::invalid_argument);
  const std::int32_t cpu[] = {kDLCPU};
  dm::tensor_requirements list;
  list.device_types = cpu;
  list.num_device_types = -1;
  CHECK(check(b.get(), list) == dm::errc::invalid_argument);
  dm::tensor_requirements align;
  align.min_alignment = 48;
  CHECK(check(b.get(), align) == dm::errc::invalid_argument);
  // Also for an empty tensor, whose elements would never be checked.
  tensor_builder empty(nullptr, f32, {0, 4}, {4, 1});
  CHECK(check(empty.get(), align) == dm::errc::invalid_argument);
}

TEST_CASE("min_alignment: every power of two is a valid requirement, and nothing else is") {
  alignas(128) float buf[32] = {};
  tensor_builder b(buf + 16, f32, {3, 4}, {4, 1});  // aligned to 64 bytes and not to 128
  for (int bit = 0; bit < 64; ++bit) {
    dm::tensor_requirements r;
    r.min_alignment = std::uint64_t{1} << bit;
    CAPTURE(r.min_alignment);
    // Met up to the buffer's 64 bytes, and refused as misaligned above them, never as nonsense.
    CHECK(check(b.get(), r) == (bit <= 6 ? dm::errc::ok : dm::errc::misaligned_data));
    if (bit < 2) continue;
    for (const std::uint64_t stray : {std::uint64_t{1}, std::uint64_t{1} << (bit - 1), ~std::uint64_t{0} >> (64 - bit)}) {
      r.min_alignment = (std::uint64_t{1} << bit) | stray;
      CAPTURE(r.min_alignment);
      CHECK(check(b.get(), r) == dm::errc::invalid_argument);
    }
  }
}
