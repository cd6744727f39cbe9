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

namespace {

// A stand-in device runtime: "device" memory is host memory behind a copy callable that
// counts calls and bytes, or fails.
struct fake_runtime {
  int calls = 0;
  std::size_t bytes = 0;
  bool fail = false;
  dm::error copy(void* dst, const void* src, std::size_t n) {
    ++calls;
    bytes += n;
    if (fail) return dm::error(dm::errc::invalid_argument, "fake runtime: copy failed");
    std::memcpy(dst, src, n);
    return {};
  }
};

// Device memory of the fake runtime: a heap block, counted when freed.
struct fake_device_memory {
  std::unique_ptr<std::byte[]> block;
  int* frees;
  fake_device_memory(std::size_t n, int* f) : block(new std::byte[n]), frees(f) {}
  fake_device_memory(fake_device_memory&& o) noexcept = default;
  ~fake_device_memory() {
    if (block) ++*frees;
  }
  void* get() const noexcept { return block.get(); }
};

}  // namespace

TEST_CASE("try_copy_to_host_with: one block for contiguous memory, the byte span staged and compacted otherwise") {
  float buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = static_cast<float>(i);
  fake_runtime rt;
  auto read = [&](void* d, const void* s, std::size_t n) { return rt.copy(d, s, n); };
  tensor_builder contiguous(buf, f32, {3, 4}, {4, 1}, 0, DLDevice{kDLCUDA, 0});
  auto c = dm::try_copy_to_host_with(contiguous.get(), dm::flag_read_only, read);
  REQUIRE(c);
  CHECK(rt.calls == 1);
  CHECK(rt.bytes == 48);
  CHECK(c->flags() == dm::flag_is_copied);
  CHECK(c->tensor().device.device_type == kDLCPU);
  CHECK(std::memcmp(c->tensor().data, buf, 48) == 0);
  // The transpose read backwards along its rows: only elements 0..8 are reached, from byte 0.
  rt = {};
  tensor_builder odd(buf, f32, {4, 3}, {1, -4}, 8 * 4, DLDevice{kDLOneAPI, 0});
  auto o = dm::try_copy_to_host_with(odd.get(), 0, read);
  REQUIRE(o);
  CHECK(rt.calls == 1);
  CHECK(rt.bytes == 12 * 4);
  auto v = o->view<std::mdspan<const float, std::dextents<int, 2>>>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) CHECK(v[i, j] == buf[8 + i - 4 * j]);
  // A column of the 3x4 matrix starting at element 1: the span is elements 1..9.
  rt = {};
  tensor_builder column(buf, f32, {3}, {4}, 4, DLDevice{kDLCUDA, 0});
  auto col = dm::try_copy_to_host_with(column.get(), 0, read);
  REQUIRE(col);
  CHECK(rt.bytes == 9 * 4);
  auto cv = col->view<std::mdspan<const float, std::dextents<int, 1>>>();
  CHECK((cv[0] == 1.f && cv[1] == 5.f && cv[2] == 9.f));
  // Nothing to move for an empty tensor.
  rt = {};
  tensor_builder empty(nullptr, f32, {0, 3}, {3, 1}, 0, DLDevice{kDLCUDA, 0});
  REQUIRE(dm::try_copy_to_host_with(empty.get(), 0, read));
  CHECK(rt.calls == 0);
}

TEST_CASE("try_copy_to_host_with: the runtime's failure and invalid tensors come back as errors") {
  float buf[4] = {};
  fake_runtime rt;
  rt.fail = true;
  auto read = [&](void* d, const void* s, std::size_t n) { return rt.copy(d, s, n); };
  tensor_builder t(buf, f32, {4}, {1}, 0, DLDevice{kDLCUDA, 0});
  auto failed = dm::try_copy_to_host_with(t.get(), 0, read);
  REQUIRE_FALSE(failed);
  CHECK(std::string(failed.error().what().c_str()) == "fake runtime: copy failed");
  tensor_builder strided(buf, f32, {2}, {2}, 0, DLDevice{kDLCUDA, 0});
  CHECK_FALSE(dm::try_copy_to_host_with(strided.get(), 0, read));
  rt.fail = false;
  tensor_builder negative(buf, f32, {-1}, {1}, 0, DLDevice{kDLCUDA, 0});
  auto bad = dm::try_copy_to_host_with(negative.get(), 0, read);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code() == dm::errc::negative_extent);
  CHECK(rt.calls == 2);  // the two failing reads above, none for the invalid tensor
  std::uint8_t bytes[2] = {0x21, 0x43};
  tensor_builder packed(bytes, dlpm_test::dt(kDLFloat4_e2m1fn, 4), {2}, {2}, 0, DLDevice{kDLCUDA, 0});
  auto p = dm::try_copy_to_host_with(packed.get(), 0, read);
  REQUIRE_FALSE(p);
  CHECK(p.error().code() == dm::errc::subbyte_not_viewable);
}

TEST_CASE("try_copy_from_host_with: a compact copy in the runtime's memory, on the target device, freed with the tensor") {
  float buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = static_cast<float>(i);
  fake_runtime rt;
  int frees = 0, allocations = 0;
  auto allocate = [&](std::size_t n) -> dm::result<fake_device_memory> {
    ++allocations;
    return fake_device_memory(n, &frees);
  };
  auto write = [&](void* d, const void* s, std::size_t n) { return rt.copy(d, s, n); };
  const DLDevice gpu{kDLCUDA, 1};
  tensor_builder odd(buf, f32, {4, 3}, {1, -4}, 8 * 4);
  {
    auto copy = dm::try_copy_from_host_with(odd.get(), dm::flag_read_only, gpu, allocate, write);
    REQUIRE(copy);
    CHECK(copy->tensor().device.device_type == kDLCUDA);
    CHECK(copy->tensor().device.device_id == 1);
    CHECK(copy->flags() == dm::flag_is_copied);
    CHECK(copy->tensor().strides[0] == 3);
    CHECK(rt.bytes == 48);  // compacted on the host first: exactly the elements
    const float* d = static_cast<const float*>(copy->tensor().data);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j) CHECK(d[i * 3 + j] == buf[8 + i - 4 * j]);
  }
  CHECK(frees == 1);
  rt.fail = true;
  tensor_builder contiguous(buf, f32, {12}, {1});
  auto failed = dm::try_copy_from_host_with(contiguous.get(), 0, gpu, allocate, write);
  REQUIRE_FALSE(failed);
  CHECK(frees == 2);  // the memory of a failed copy is freed too
  tensor_builder on_device(buf, f32, {12}, {1}, 0, DLDevice{kDLCUDA, 0});
  auto refused = dm::try_copy_from_host_with(on_device.get(), 0, gpu, allocate, write);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == dm::errc::device_mismatch);
  CHECK(allocations == 2);
}
