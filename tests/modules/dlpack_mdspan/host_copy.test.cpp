// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// try_allocate_host_tensor / try_copy_to_host: new compact host memory, and copies into it.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::f32;
using dlpm_test::tensor_builder;

TEST_CASE("try_allocate_host_tensor: compact row-major, aligned, kDLCPU, flags as given") {
  const std::int64_t shape[] = {3, 5};
  auto t = dm::try_allocate_host_tensor(2, shape, f32, dm::flag_is_copied);
  REQUIRE(t);
  const DLTensor& d = t->tensor();
  CHECK(d.device.device_type == kDLCPU);
  CHECK(reinterpret_cast<std::uintptr_t>(d.data) % 64 == 0);
  CHECK(d.strides[0] == 5);
  CHECK(d.strides[1] == 1);
  CHECK(t->flags() == dm::flag_is_copied);
  auto view = t->view<std::mdspan<float, std::dextents<int, 2>>>();
  view[2, 4] = 7.f;  // the whole extent is writable (ASan would see a short buffer)
  CHECK(view[2, 4] == 7.f);
  const std::int64_t none[] = {0, 4};
  auto empty = dm::try_allocate_host_tensor(2, none, f32);
  REQUIRE(empty);
  CHECK(empty->tensor().data != nullptr);  // an address, even for no elements
}

TEST_CASE("try_allocate_host_tensor: the description is validated before anything is allocated") {
  const std::int64_t negative[] = {2, -3};
  auto bad = dm::try_allocate_host_tensor(2, negative, f32);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code() == dm::errc::negative_extent);
  const std::int64_t huge[] = {std::int64_t{1} << 40, std::int64_t{1} << 22};
  auto too_big = dm::try_allocate_host_tensor(2, huge, f32);
  REQUIRE_FALSE(too_big);
  CHECK((too_big.error().code() == dm::errc::extent_overflow || too_big.error().code() == dm::errc::out_of_memory ||
         too_big.error().code() == dm::errc::span_overflow));
  auto bad_rank = dm::try_allocate_host_tensor(65, negative, f32);
  REQUIRE_FALSE(bad_rank);
  CHECK(bad_rank.error().code() == dm::errc::invalid_ndim);
}

TEST_CASE("try_copy_to_host: strided, negative and broadcast sources become compact row-major copies") {
  float buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = static_cast<float>(i);
  // The transpose of a 3x4 row-major matrix, read backwards along its rows.
  tensor_builder odd(buf, f32, {4, 3}, {1, -4}, 8 * 4);
  auto copy = dm::try_copy_to_host(odd.get(), dm::flag_read_only);
  REQUIRE(copy);
  CHECK(copy->flags() == dm::flag_is_copied);  // READ_ONLY does not travel: the copy aliases nothing
  auto v = copy->view<std::mdspan<const float, std::dextents<int, 2>>>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) CHECK(v[i, j] == buf[8 + i - 4 * j]);
  tensor_builder broadcast(buf, f32, {2, 3}, {0, 1});
  auto b = dm::try_copy_to_host(broadcast.get(), 0);
  REQUIRE(b);
  auto w = b->view<std::mdspan<const float, std::dextents<int, 2>>>();
  CHECK(w[1, 2] == 2.f);
  tensor_builder empty(nullptr, f32, {0, 3}, {3, 1});
  auto e = dm::try_copy_to_host(empty.get(), 0);
  REQUIRE(e);
  CHECK(e->tensor().shape[0] == 0);
}

TEST_CASE("try_copy_to_host: sub-byte elements, memory the CPU cannot read") {
  std::uint8_t bytes[4] = {0x21, 0x43, 0x65, 0x87};
  const DLDataType fp4 = dlpm_test::dt(kDLFloat4_e2m1fn, 4);
  tensor_builder packed(bytes, fp4, {5}, {1});
  auto p = dm::try_copy_to_host(packed.get(), 0);
  REQUIRE(p);
  CHECK(std::memcmp(p->tensor().data, bytes, 3) == 0);  // five nibbles: three bytes
  tensor_builder strided(bytes, fp4, {2}, {2});
  auto s = dm::try_copy_to_host(strided.get(), 0);
  REQUIRE_FALSE(s);
  CHECK(s.error().code() == dm::errc::subbyte_not_viewable);
  // Padded: one byte per element, copied through the strides like any whole-byte dtype.
  auto q = dm::try_copy_to_host(strided.get(), dm::flag_is_subbyte_type_padded);
  REQUIRE(q);
  CHECK(q->flags() == (dm::flag_is_copied | dm::flag_is_subbyte_type_padded));
  CHECK(static_cast<const std::uint8_t*>(q->tensor().data)[1] == 0x65);
  float buf[4] = {};
  tensor_builder device(buf, f32, {4}, {1}, 0, DLDevice{kDLCUDA, 0});
  auto d = dm::try_copy_to_host(device.get(), 0);
  REQUIRE_FALSE(d);
  CHECK(d.error().code() == dm::errc::device_mismatch);
  tensor_builder pinned(buf, f32, {4}, {1}, 0, DLDevice{kDLCUDAHost, 0});
  CHECK(dm::try_copy_to_host(pinned.get(), 0));
}
