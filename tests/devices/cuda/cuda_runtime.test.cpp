// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuda_device_of() and the *_on_cuda_device exports through the real CUDA runtime, from host code.
//
// Runs everywhere. On a machine without a usable GPU every runtime call fails, and the
// test checks the failure path (error code, the CUDA error named in the message, the
// last-error state cleared); with a GPU it checks that host memory is reported as kDLCPU.
// Device, managed and pinned allocations are covered by the nvcc test (device/).
#include <doctest/doctest.h>

#include <dlpack_mdspan/cuda.hpp>

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

namespace dm = dlpack_mdspan;

namespace {

bool has_text(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

// What the runtime itself says about `p`, to compare cuda_device_of's message with.
cudaError_t runtime_status_for(const void* p) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, p);
  (void)cudaGetLastError();
  return status;
}

}  // namespace

TEST_CASE("cuda_device_of(NULL) is a null_pointer error, without asking CUDA") {
  const auto d = dm::cuda_device_of(nullptr);
  REQUIRE_FALSE(d.has_value());
  CHECK(d.error().code() == dm::errc::null_pointer);
}

TEST_CASE("cuda_device_of host memory: kDLCPU with a GPU, the CUDA error without one") {
  int on_stack = 0;
  const auto on_heap = std::make_unique<double[]>(16);
  for (const void* p : {static_cast<const void*>(&on_stack), static_cast<const void*>(on_heap.get())}) {
    const cudaError_t expected = runtime_status_for(p);
    const auto d = dm::cuda_device_of(p);
    if (expected == cudaSuccess) {
      MESSAGE("the CUDA runtime answers: checking the kDLCPU result");
      REQUIRE(d.has_value());
      CHECK(d->device_type == kDLCPU);
      CHECK(d->device_id == 0);
    } else {
      MESSAGE("the CUDA runtime fails here (" << std::string(cudaGetErrorName(expected)) << "): checking the error path");
      REQUIRE_FALSE(d.has_value());
      CHECK(d.error().code() == dm::errc::invalid_argument);
      CHECK(has_text(d.error().message(), "cudaPointerGetAttributes"));
      CHECK(has_text(d.error().message(), cudaGetErrorName(expected)));
      CHECK(has_text(d.error().message(), cudaGetErrorString(expected)));
    }
    // cuda_device_of leaves the last-error state as a cleared runtime has it: cudaSuccess, or
    // the failed initialisation (no driver, no device), which CUDA reports on every call.
    (void)cudaGetLastError();
    const cudaError_t cleared = cudaPeekAtLastError();
    (void)dm::cuda_device_of(p);
    CHECK(cudaPeekAtLastError() == cleared);
  }
}

TEST_CASE("to_dlpack_tensor_on_cuda_device labels a view with cuda_device_of's answer, or fails with its error") {
  float storage[6] = {};
  float* const buf = storage;
  // The accessor claims device memory; the query must override that claim.
  const dm::device_mdspan<float, cuda::std::dextents<int, 2>> md(buf, 2, 3);
  const auto view = dm::try_to_dlpack_tensor_on_cuda_device(md);
  if (runtime_status_for(buf) == cudaSuccess) {
    REQUIRE(view.has_value());
    CHECK(view->device().device_type == kDLCPU);
    CHECK(view->data() == buf);
    CHECK(dm::to_dlpack_tensor_on_cuda_device(md).device().device_type == kDLCPU);
  } else {
    MESSAGE("the CUDA runtime fails here: checking the error path");
    REQUIRE_FALSE(view.has_value());
    CHECK(view.error().code() == dm::errc::invalid_argument);
#if DLPM_HAS_EXCEPTIONS
    CHECK_THROWS_AS((void)dm::to_dlpack_tensor_on_cuda_device(md), dm::dlpack_error);
#endif
  }
  // The explicit device never asks CUDA, GPU or not.
  const auto hot = dm::to_dlpack_tensor(md, DLDevice{kDLCUDA, 1});
  CHECK(hot.device().device_type == kDLCUDA);
  CHECK(hot.device().device_id == 1);
}

// The 0.2 names stay for one minor release (CHANGELOG.md): deprecated, and the same export.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_CASE("the deprecated to_dlpack_tensor_on_device(md) is to_dlpack_tensor_on_cuda_device(md)") {
  const dm::device_mdspan<float, cuda::std::dextents<int, 1>> empty(
      nullptr, cuda::std::layout_right::mapping<cuda::std::dextents<int, 1>>(cuda::std::dextents<int, 1>(0)),
      dm::cuda_device_accessor<float>(2));
  const auto old_view = dm::try_to_dlpack_tensor_on_device(empty);
  REQUIRE(old_view.has_value());
  CHECK(old_view->device().device_type == kDLCUDA);
  CHECK(old_view->device().device_id == 2);
  CHECK(dm::to_dlpack_tensor_on_device(empty).device().device_id == 2);
  float storage[2] = {};
  const dm::device_mdspan<float, cuda::std::dextents<int, 1>> md(storage, 2);
  const auto old_found = dm::try_to_dlpack_tensor_on_device(md);
  const auto new_found = dm::try_to_dlpack_tensor_on_cuda_device(md);
  REQUIRE(old_found.has_value() == new_found.has_value());
  if (new_found) CHECK(old_found->device().device_type == new_found->device().device_type);
  else CHECK(old_found.error().code() == new_found.error().code());
}
#pragma GCC diagnostic pop

TEST_CASE("an empty view with a NULL handle takes the accessor's device without a query") {
  const dm::device_mdspan<float, cuda::std::dextents<int, 2>> empty(
      nullptr, cuda::std::layout_right::mapping<cuda::std::dextents<int, 2>>(cuda::std::dextents<int, 2>(0, 3)),
      dm::cuda_device_accessor<float>(3));
  const auto view = dm::try_to_dlpack_tensor_on_cuda_device(empty);
  REQUIRE(view.has_value());
  CHECK(view->device().device_type == kDLCUDA);
  CHECK(view->device().device_id == 3);
  CHECK(view->data() == nullptr);

  // The accessor's device follows DLPack's rule: pinned and managed memory say 0.
  const dm::pinned_mdspan<float, cuda::std::dextents<int, 1>> empty_pinned(
      nullptr, cuda::std::layout_right::mapping<cuda::std::dextents<int, 1>>(cuda::std::dextents<int, 1>(0)),
      dm::cuda_pinned_accessor<float>(3));
  const auto pinned = dm::try_to_dlpack_tensor_on_cuda_device(empty_pinned);
  REQUIRE(pinned.has_value());
  CHECK(pinned->device().device_type == kDLCUDAHost);
  CHECK(pinned->device().device_id == 0);
  const dm::managed_mdspan<float, cuda::std::dextents<int, 1>> empty_managed(
      nullptr, cuda::std::layout_right::mapping<cuda::std::dextents<int, 1>>(cuda::std::dextents<int, 1>(0)),
      dm::cuda_managed_accessor<float>(3));
  const auto managed = dm::try_to_dlpack_tensor_on_cuda_device(empty_managed);
  REQUIRE(managed.has_value());
  CHECK(managed->device().device_type == kDLCUDAManaged);
  CHECK(managed->device().device_id == 0);
}

TEST_CASE("stream_from_array_api decodes the array API's stream values") {
  const auto none = dm::stream_from_array_api(-1);
  REQUIRE(none.has_value());
  CHECK_FALSE(none->synchronise);
  const auto legacy = dm::stream_from_array_api(1);
  REQUIRE(legacy.has_value());
  CHECK((legacy->synchronise && legacy->stream == cudaStreamLegacy));
  const auto per_thread = dm::stream_from_array_api(2);
  REQUIRE(per_thread.has_value());
  CHECK(per_thread->stream == cudaStreamPerThread);
  const auto handle = dm::stream_from_array_api(0x7f0012345600);
  REQUIRE(handle.has_value());
  CHECK(reinterpret_cast<std::uintptr_t>(handle->stream) == 0x7f0012345600u);
  for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{-2}, INT64_MIN}) {
    const auto refused = dm::stream_from_array_api(bad);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code() == dm::errc::invalid_argument);
    CHECK(has_text(refused.error().message(), "unsupported stream on CUDA"));
  }
}

TEST_CASE("make_stream_wait: the same stream needs nothing, two streams an event, or the CUDA error") {
  CHECK(dm::make_stream_wait(cudaStreamLegacy, cudaStreamLegacy).code() == dm::errc::ok);  // no runtime call
  int devices = 0;
  const bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  (void)cudaGetLastError();
  const dm::error e = dm::make_stream_wait(cudaStreamPerThread, cudaStreamLegacy);
  if (gpu) {
    CHECK(e.code() == dm::errc::ok);
    CHECK(cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess);
  } else {  // no GPU here: the first runtime call fails, and says which and why
    CHECK(e.code() == dm::errc::invalid_argument);
    CHECK(has_text(e.message(), "make_stream_wait: cudaEventCreateWithFlags failed: cuda"));
  }
}
