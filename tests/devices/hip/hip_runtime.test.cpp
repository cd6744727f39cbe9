// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// hip_device_of() through the real HIP runtime (libamdhip64), from host code.
//
// Runs everywhere libamdhip64 links. Without an AMD GPU (and without /dev/kfd) every runtime
// call fails, here with hipErrorInvalidDevice, and the test checks that failure path: the
// error code, the HIP error named in the message, the last-error state left as it was. With
// a GPU it would check that host memory is reported as kDLCPU; device, managed and pinned
// allocations need a GPU and are not tested (no AMD GPU was available).
#include <doctest/doctest.h>

#include <dlpack_mdspan/hip.hpp>

#include <hip/hip_runtime_api.h>

#include <memory>
#include <string>
#include <string_view>

namespace dm = dlpack_mdspan;

namespace {

bool has_text(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

// What the runtime itself says about `p`, to compare hip_device_of's answer with.
hipError_t runtime_status_for(const void* p) {
  hipPointerAttribute_t attributes{};
  const hipError_t status = hipPointerGetAttributes(&attributes, p);
  (void)hipGetLastError();
  return status;
}

}  // namespace

TEST_CASE("hip_device_of is the function hip.hpp declares, and links") {
  dm::result<DLDevice> (*const f)(const void*) noexcept = &dm::hip_device_of;
  const auto through_pointer = f(nullptr);  // NULL: answered without a runtime call
  REQUIRE_FALSE(through_pointer.has_value());
  CHECK(through_pointer.error().code() == dm::errc::null_pointer);
}

TEST_CASE("hip_device_of(NULL) is a null_pointer error, without asking HIP") {
  const auto d = dm::hip_device_of(nullptr);
  REQUIRE_FALSE(d.has_value());
  CHECK(d.error().code() == dm::errc::null_pointer);
  CHECK(has_text(d.error().message(), "hip_device_of: the pointer is NULL"));
}

TEST_CASE("hip_device_of host memory: kDLCPU where HIP answers, the HIP error where it cannot") {
  int on_stack = 0;
  const auto on_heap = std::make_unique<double[]>(16);
  for (const void* p : {static_cast<const void*>(&on_stack), static_cast<const void*>(on_heap.get())}) {
    const hipError_t expected = runtime_status_for(p);
    const auto d = dm::hip_device_of(p);
    // HIP 5 reports memory it does not know as hipErrorInvalidValue, HIP 6 as unregistered.
    if (expected == hipSuccess || (HIP_VERSION_MAJOR < 6 && expected == hipErrorInvalidValue)) {
      MESSAGE("the HIP runtime answers: checking the kDLCPU result");
      REQUIRE(d.has_value());
      CHECK(d->device_type == kDLCPU);
      CHECK(d->device_id == 0);
    } else {
      MESSAGE("the HIP runtime fails here (" << std::string(hipGetErrorName(expected)) << "): checking the error path");
      REQUIRE_FALSE(d.has_value());
      CHECK(d.error().code() == dm::errc::invalid_argument);
      CHECK(has_text(d.error().message(), "hipPointerGetAttributes failed"));
      CHECK(has_text(d.error().message(), hipGetErrorName(expected)));
      CHECK(has_text(d.error().message(), hipGetErrorString(expected)));
    }
    // hip_device_of leaves the last-error state as a cleared runtime has it: hipSuccess, or
    // a failed initialisation, which HIP (like CUDA) reports on every call.
    (void)hipGetLastError();
    const hipError_t cleared = hipPeekAtLastError();
    (void)dm::hip_device_of(p);
    CHECK(hipPeekAtLastError() == cleared);
  }
}

#if defined(__cpp_lib_mdspan)
TEST_CASE("an export labelled by hip_device_of: the device it answers, or its error") {
  float storage[6] = {};
  float* const buf = storage;
  const dm::hip_device_mdspan<float, std::dextents<int, 2>> md(buf, 2, 3);
  const auto device = dm::hip_device_of(md.data_handle());
  if (device) {
    CHECK(dm::to_dlpack_tensor(md, *device).device().device_type == kDLCPU);
  } else {
    CHECK(device.error().code() == dm::errc::invalid_argument);
  }
}
#endif
