// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/hip.hpp on the host, with no AMD GPU and without libamdhip64: the dtypes of
// HIP's element types, and what the HIP accessors report on export and accept on import.
// "Device" memory here is a fake address, or host memory labelled with an explicit DLDevice:
// the conversions never dereference data, and nothing here calls the HIP runtime (the
// program does not link libamdhip64, which is itself part of the check).
//
// Built with the project compiler (C++23, header and module form) and compiled by g++ in
// C++20, where there is no std::mdspan and the mdspan cases drop out.
#include <doctest/doctest.h>

#include <dlpack_mdspan/hip.hpp>

#include <cstdint>
#include <type_traits>

#if __has_include(<mdspan>)
#include <mdspan>
#endif

#include "support/tensor_builder.hpp"

#ifdef DLPM_USE_MODULE
// hip.hpp brings the header form; importing the module as well must change nothing.
import dlpack_mdspan;
#endif

namespace dm = dlpack_mdspan;

// ---- at compile time -------------------------------------------------------------------------

static_assert(sizeof(__half) == 2 && sizeof(__half2) == 4 && sizeof(hip_bfloat16) == 2);
static_assert(dm::same_dtype(dm::dtype_v<__half>, DLDataType{kDLFloat, 16, 1}));
static_assert(dm::same_dtype(dm::dtype_v<__half2>, DLDataType{kDLFloat, 16, 2}));
static_assert(dm::same_dtype(dm::dtype_v<hip_bfloat16>, DLDataType{kDLBfloat, 16, 1}));
static_assert(dm::same_dtype(dm::dtype_v<const __half>, DLDataType{kDLFloat, 16, 1}));

// The accessors are device.hpp's shared template, nothing of their own.
static_assert(std::is_same_v<dm::hip_device_accessor<float>, dm::device_memory_accessor<float, kDLROCM>>);
static_assert(std::is_same_v<dm::hip_pinned_accessor<float>, dm::device_memory_accessor<float, kDLROCMHost>>);
static_assert(std::is_trivially_copyable_v<dm::hip_device_accessor<float>>);
static_assert(std::is_default_constructible_v<dm::hip_pinned_accessor<float>>);
static_assert(std::is_convertible_v<dm::hip_device_accessor<float>, dm::hip_device_accessor<const float>>);
static_assert(!std::is_convertible_v<dm::hip_device_accessor<float>, dm::hip_pinned_accessor<float>>);
static_assert(dm::device_traits<dm::hip_device_accessor<float>>::device_type == kDLROCM);
static_assert(dm::device_traits<dm::hip_pinned_accessor<float>>::device_type == kDLROCMHost);
static_assert(dm::hip_device_accessor<float>(5).dlpack_device().device_id == 5);
static_assert(dm::hip_pinned_accessor<float>(5).dlpack_device().device_id == 0);

// hip_device_of's signature, unevaluated: no runtime symbol is needed for this program.
static_assert(std::is_same_v<decltype(dm::hip_device_of(nullptr)), dm::result<DLDevice>>);
static_assert(noexcept(dm::hip_device_of(nullptr)));

namespace {

float* fake_device_pointer() { return reinterpret_cast<float*>(std::uintptr_t{0x7f0000100000}); }

}  // namespace

TEST_CASE("HIP element types have their DLPack dtypes") {
  const DLDataType h = dm::dtype_v<__half>;
  CHECK(int{h.code} == kDLFloat);
  CHECK(int{h.bits} == 16);
  CHECK(int{h.lanes} == 1);
  const DLDataType h2 = dm::dtype_v<__half2>;
  CHECK(int{h2.code} == kDLFloat);
  CHECK(int{h2.lanes} == 2);
  const DLDataType bf = dm::dtype_v<hip_bfloat16>;
  CHECK(int{bf.code} == kDLBfloat);
  CHECK(int{bf.bits} == 16);
  CHECK(dm::storage_itemsize(bf) == sizeof(hip_bfloat16));
}

TEST_CASE("each HIP accessor accepts exactly its memory kind on import") {
  struct row {
    DLDeviceType type;
    bool device, pinned, host;  // hip_device_accessor, hip_pinned_accessor, the default host accessor
  };
  // The table in docs/rocm.md.
  const row rows[] = {
      {kDLCPU, false, false, true},         {kDLROCM, true, false, false},    {kDLROCMHost, false, true, true},
      {kDLCUDA, false, false, false},       {kDLCUDAHost, false, false, true}, {kDLCUDAManaged, false, false, true},
      {kDLOneAPI, false, false, false},
  };
  for (const row& r : rows) {
    INFO(dm::device_type_name(r.type));
    CHECK(dm::device_traits<dm::hip_device_accessor<float>>::accepts(r.type) == r.device);
    CHECK(dm::device_traits<dm::hip_pinned_accessor<float>>::accepts(r.type) == r.pinned);
    CHECK(dm::is_host_accessible(r.type) == r.host);
    CHECK(dm::device_id_is_always_zero(r.type) == (r.type != kDLROCM && r.type != kDLCUDA && r.type != kDLOneAPI));
  }
}

#if defined(__cpp_lib_mdspan)
namespace {
using E2 = std::dextents<int, 2>;
}

TEST_CASE("export through the HIP accessors: kDLROCM keeps its ordinal, pinned memory says 0") {
  float* const p = fake_device_pointer();  // never dereferenced
  const dm::hip_device_mdspan<float, E2> device(p, std::layout_right::mapping<E2>(E2(2, 3)), dm::hip_device_accessor<float>(3));
  const auto d = dm::to_dlpack_tensor(device);
  CHECK(d.device().device_type == kDLROCM);
  CHECK(d.device().device_id == 3);
  CHECK(d.data() == p);
  CHECK(d.shape()[0] == 2);
  CHECK(d.strides()[0] == 3);

  // const conversion keeps device_id.
  const dm::hip_device_mdspan<const float, E2> as_const = device;
  CHECK(dm::to_dlpack_tensor(as_const).device().device_id == 3);

  // Built for device 3, but DLPack fixes pinned memory's id at 0.
  const dm::hip_pinned_mdspan<float, E2> pinned(p, std::layout_right::mapping<E2>(E2(2, 3)), dm::hip_pinned_accessor<float>(3));
  CHECK(pinned.accessor().device_id == 3);
  const auto h = dm::to_dlpack_tensor(pinned);
  CHECK(h.device().device_type == kDLROCMHost);
  CHECK(h.device().device_id == 0);

  // The explicit device is the caller's word (the hot path, without hip_device_of).
  const auto explicit_device = dm::to_dlpack_tensor(device, DLDevice{kDLROCM, 1});
  CHECK(explicit_device.device().device_id == 1);
}

TEST_CASE_TEMPLATE("HIP element types round-trip through a kDLROCM view", T, __half, __half2, hip_bfloat16) {
  T* const p = reinterpret_cast<T*>(fake_device_pointer());
  const dm::hip_device_mdspan<T, E2> md(p, std::layout_right::mapping<E2>(E2(2, 3)), dm::hip_device_accessor<T>(1));
  const auto view = dm::to_dlpack_tensor(md);
  const DLTensor t = view.get();
  CHECK(dm::same_dtype(t.dtype, dm::dtype_v<T>));
  CHECK(dm::storage_itemsize(t.dtype) == sizeof(T));
  // Import default-constructs the accessor: device_id 0, whatever the tensor says.
  const auto back = dm::to_mdspan<dm::hip_device_mdspan<T, E2>>(t);
  CHECK(back.data_handle() == p);
  CHECK(back.accessor().device_id == 0);
  CHECK(back.extent(1) == 3);
}

TEST_CASE("import into HIP views follows the accessor table, device ids included") {
  float* const p = fake_device_pointer();
  using V = std::dextents<int, 1>;
  for (const DLDeviceType type : {kDLCPU, kDLROCM, kDLROCMHost, kDLCUDA, kDLCUDAHost, kDLCUDAManaged}) {
    INFO(dm::device_type_name(type));
    dlpm_test::tensor_builder b(p, dlpm_test::f32, {4}, {1}, 0, DLDevice{type, 0});
    const auto d = dm::try_to_mdspan<dm::hip_device_mdspan<float, V>>(b.get());
    const auto h = dm::try_to_mdspan<dm::hip_pinned_mdspan<float, V>>(b.get());
    const auto host = dm::try_to_mdspan<std::mdspan<float, V>>(b.get());
    CHECK(d.has_value() == (type == kDLROCM));
    CHECK(h.has_value() == (type == kDLROCMHost));
    CHECK(host.has_value() == dm::is_host_accessible(type));
    if (!d) CHECK(d.error().code() == dm::errc::device_mismatch);
    if (!h) CHECK(h.error().code() == dm::errc::device_mismatch);
  }

  // kDLROCM on device 1: tensor_requirements::device_id is compared with it.
  dlpm_test::tensor_builder on_1(p, dlpm_test::f32, {4}, {1}, 0, DLDevice{kDLROCM, 1});
  dm::tensor_requirements want_0;
  want_0.device_id = 0;
  const auto refused = dm::try_to_mdspan<dm::hip_device_mdspan<float, V>>(on_1.get(), want_0);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == dm::errc::device_id_mismatch);
  dm::tensor_requirements want_1;
  want_1.device_id = 1;
  CHECK(dm::try_to_mdspan<dm::hip_device_mdspan<float, V>>(on_1.get(), want_1).has_value());

  // Pinned memory that arrives with a non-zero id is accepted (producers disagree), and
  // re-exports with id 0.
  dlpm_test::tensor_builder pinned_1(p, dlpm_test::f32, {4}, {1}, 0, DLDevice{kDLROCMHost, 1});
  const auto pinned = dm::to_mdspan<dm::hip_pinned_mdspan<float, V>>(pinned_1.get());
  CHECK(dm::to_dlpack_tensor(pinned).device().device_type == kDLROCMHost);
  CHECK(dm::to_dlpack_tensor(pinned).device().device_id == 0);
}
#endif
