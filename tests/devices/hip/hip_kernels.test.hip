// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/hip.hpp under hipcc, C++20: device code through the HIP accessors, whose
// element access is __host__ __device__ there (DLPM_HOST_DEVICE), and hipcc's own __half and
// hip_bfloat16 classes, whose dtypes must match what host compilers see. Compiled, never run:
// there is no AMD GPU here.
#include <dlpack_mdspan/hip.hpp>

#include <hip/hip_runtime.h>

#include <cstddef>

namespace dm = dlpack_mdspan;

static_assert(dm::same_dtype(dm::dtype_v<__half>, DLDataType{kDLFloat, 16, 1}));
static_assert(dm::same_dtype(dm::dtype_v<__half2>, DLDataType{kDLFloat, 16, 2}));
static_assert(dm::same_dtype(dm::dtype_v<hip_bfloat16>, DLDataType{kDLBfloat, 16, 1}));
static_assert(dm::hip_device_accessor<float>(2).dlpack_device().device_id == 2);
static_assert(dm::hip_pinned_accessor<float>(2).dlpack_device().device_id == 0);

// The accessor is passed to the kernel by value, as an mdspan using it would be.
__global__ void scale(float* data, dm::hip_device_accessor<float> acc, std::size_t n, float k) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) acc.access(data, i) *= k;
}

__global__ void copy_halves(const __half* in, __half* out, dm::hip_device_accessor<const __half> from,
                            dm::hip_device_accessor<__half> to, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) to.access(to.offset(out, 0), i) = from.access(in, i);
}

#if defined(__cpp_lib_mdspan)
__global__ void scale_view(dm::hip_device_mdspan<float, std::dextents<int, 2>> m, float k) {
  const int i = static_cast<int>(blockIdx.x), j = static_cast<int>(threadIdx.x);
  if (i < m.extent(0) && j < m.extent(1)) m[i, j] *= k;
}
#endif

// Host code around the kernels: a launch and the device query (compiled, not called).
hipError_t launch_scale(float* device_data, std::size_t n, hipStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  hipLaunchKernelGGL(scale, dim3(blocks), dim3(256), 0, stream, device_data, dm::hip_device_accessor<float>(0), n, 2.0f);
  return hipGetLastError();
}

dm::result<DLDevice> where_is(const void* p) { return dm::hip_device_of(p); }
