// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CUDA support: the CUDA element types, accessors for device, managed and pinned memory,
// cuda_device_of(), which asks the CUDA runtime where a pointer lives, and the stream helpers of
// stream-ordered exchange (stream_from_array_api, make_stream_wait).
//
// Not part of the umbrella header, because it needs the CUDA Toolkit's headers: include it
// explicitly (CMake: link dlpack_mdspan::cuda, which brings those). It is header-only and
// works with host compilers (clang, g++) as well as nvcc. Only cuda_device_of() and the
// *_on_cuda_device exports call the CUDA runtime, so a program that uses neither does not need
// to link cudart.
//
// Never compiled into the named module (nvcc cannot import modules anyway), so its
// namespace blocks are not exported; a TU may include it and `import dlpack_mdspan;` as
// well. They are the core's ABI namespace (config.hpp: cxx20 or cxx23), because cuda_device_of
// returns result<T>, which differs between C++20 TUs (nvcc) and C++23 ones: one name for
// both would let the linker merge two different functions.
//
// Copies between device and host memory (try_copy_cuda_to_host, try_copy_host_to_cuda) are
// the core's try_copy_to_host_with / try_copy_from_host_with with cudaMemcpyAsync on a
// stream the caller names.
#ifndef DLPACK_MDSPAN_CUDA_HPP
#define DLPACK_MDSPAN_CUDA_HPP

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <cuda_runtime_api.h>

#if !defined(CUDART_VERSION) || CUDART_VERSION < 12080
#error "dlpack_mdspan/cuda.hpp needs CUDA >= 12.8 (<cuda_fp6.h>, <cuda_fp4.h>, __nv_fp8_e8m0)"
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#include <vector_types.h>

#include <cuda/std/complex>
#include <cuda/std/mdspan>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// A CUDA type's dtype, checked against its size (packed or padded: dtype.hpp).
template <class T, DLDataTypeCode Code, int Bits, int Lanes>
using cuda_dtype = checked_dtype<T, Code, Bits, Lanes>;

// A vector of Lanes Scalars: the scalar's code and bits, Lanes lanes.
template <class V, class Scalar, int Lanes>
struct cuda_vector_dtype
    : checked_dtype<V, static_cast<DLDataTypeCode>(dtype_v<Scalar>.code), dtype_v<Scalar>.bits, Lanes> {};

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {

// ---- scalar floating-point types ------------------------------------------------------

template <> struct dtype_traits<__half> : detail::cuda_dtype<__half, kDLFloat, 16, 1> {};
template <> struct dtype_traits<__nv_bfloat16> : detail::cuda_dtype<__nv_bfloat16, kDLBfloat, 16, 1> {};
template <> struct dtype_traits<__nv_fp8_e4m3> : detail::cuda_dtype<__nv_fp8_e4m3, kDLFloat8_e4m3fn, 8, 1> {};
template <> struct dtype_traits<__nv_fp8_e5m2> : detail::cuda_dtype<__nv_fp8_e5m2, kDLFloat8_e5m2, 8, 1> {};
template <> struct dtype_traits<__nv_fp8_e8m0> : detail::cuda_dtype<__nv_fp8_e8m0, kDLFloat8_e8m0fnu, 8, 1> {};
// One sub-byte value in a whole byte: the padded form (managed exports set the flag).
template <> struct dtype_traits<__nv_fp6_e2m3> : detail::cuda_dtype<__nv_fp6_e2m3, kDLFloat6_e2m3fn, 6, 1> {};
template <> struct dtype_traits<__nv_fp6_e3m2> : detail::cuda_dtype<__nv_fp6_e3m2, kDLFloat6_e3m2fn, 6, 1> {};
template <> struct dtype_traits<__nv_fp4_e2m1> : detail::cuda_dtype<__nv_fp4_e2m1, kDLFloat4_e2m1fn, 4, 1> {};

// ---- packed and vector forms of the narrow floats --------------------------------------

template <> struct dtype_traits<__half2> : detail::cuda_vector_dtype<__half2, __half, 2> {};
template <> struct dtype_traits<__nv_bfloat162> : detail::cuda_vector_dtype<__nv_bfloat162, __nv_bfloat16, 2> {};
template <> struct dtype_traits<__nv_fp8x2_e4m3> : detail::cuda_vector_dtype<__nv_fp8x2_e4m3, __nv_fp8_e4m3, 2> {};
template <> struct dtype_traits<__nv_fp8x4_e4m3> : detail::cuda_vector_dtype<__nv_fp8x4_e4m3, __nv_fp8_e4m3, 4> {};
template <> struct dtype_traits<__nv_fp8x2_e5m2> : detail::cuda_vector_dtype<__nv_fp8x2_e5m2, __nv_fp8_e5m2, 2> {};
template <> struct dtype_traits<__nv_fp8x4_e5m2> : detail::cuda_vector_dtype<__nv_fp8x4_e5m2, __nv_fp8_e5m2, 4> {};
template <> struct dtype_traits<__nv_fp8x2_e8m0> : detail::cuda_vector_dtype<__nv_fp8x2_e8m0, __nv_fp8_e8m0, 2> {};
template <> struct dtype_traits<__nv_fp8x4_e8m0> : detail::cuda_vector_dtype<__nv_fp8x4_e8m0, __nv_fp8_e8m0, 4> {};
// fp6x2 / fp6x4 keep one value per byte (2 and 4 bytes): padded, flagged like fp6 itself.
// Packed fp6 pairs would need 12 bits, which no C++ type has.
template <> struct dtype_traits<__nv_fp6x2_e2m3> : detail::cuda_vector_dtype<__nv_fp6x2_e2m3, __nv_fp6_e2m3, 2> {};
template <> struct dtype_traits<__nv_fp6x4_e2m3> : detail::cuda_vector_dtype<__nv_fp6x4_e2m3, __nv_fp6_e2m3, 4> {};
template <> struct dtype_traits<__nv_fp6x2_e3m2> : detail::cuda_vector_dtype<__nv_fp6x2_e3m2, __nv_fp6_e3m2, 2> {};
template <> struct dtype_traits<__nv_fp6x4_e3m2> : detail::cuda_vector_dtype<__nv_fp6x4_e3m2, __nv_fp6_e3m2, 4> {};
// fp4x2 packs two values in one byte (low nibble first), as PyTorch's float4_e2m1fn_x2
// does: {kDLFloat4_e2m1fn, 4, 2}, no flag. fp4x4 packs four in two bytes.
template <> struct dtype_traits<__nv_fp4x2_e2m1> : detail::cuda_vector_dtype<__nv_fp4x2_e2m1, __nv_fp4_e2m1, 2> {};
template <> struct dtype_traits<__nv_fp4x4_e2m1> : detail::cuda_vector_dtype<__nv_fp4x4_e2m1, __nv_fp4_e2m1, 4> {};

// ---- vector_types.h: 2 and 4 lanes ------------------------------------------------------
// The 1- and 3-lane forms are left out: one lane is the scalar's dtype under another name,
// and consumers rarely accept 3-lane vectors.

template <> struct dtype_traits<char2> : detail::cuda_vector_dtype<char2, signed char, 2> {};
template <> struct dtype_traits<char4> : detail::cuda_vector_dtype<char4, signed char, 4> {};
template <> struct dtype_traits<uchar2> : detail::cuda_vector_dtype<uchar2, unsigned char, 2> {};
template <> struct dtype_traits<uchar4> : detail::cuda_vector_dtype<uchar4, unsigned char, 4> {};
template <> struct dtype_traits<short2> : detail::cuda_vector_dtype<short2, short, 2> {};
template <> struct dtype_traits<short4> : detail::cuda_vector_dtype<short4, short, 4> {};
template <> struct dtype_traits<ushort2> : detail::cuda_vector_dtype<ushort2, unsigned short, 2> {};
template <> struct dtype_traits<ushort4> : detail::cuda_vector_dtype<ushort4, unsigned short, 4> {};
template <> struct dtype_traits<int2> : detail::cuda_vector_dtype<int2, int, 2> {};
template <> struct dtype_traits<int4> : detail::cuda_vector_dtype<int4, int, 4> {};
template <> struct dtype_traits<uint2> : detail::cuda_vector_dtype<uint2, unsigned int, 2> {};
template <> struct dtype_traits<uint4> : detail::cuda_vector_dtype<uint4, unsigned int, 4> {};
template <> struct dtype_traits<long2> : detail::cuda_vector_dtype<long2, long, 2> {};
template <> struct dtype_traits<ulong2> : detail::cuda_vector_dtype<ulong2, unsigned long, 2> {};
template <> struct dtype_traits<longlong2> : detail::cuda_vector_dtype<longlong2, long long, 2> {};
template <> struct dtype_traits<ulonglong2> : detail::cuda_vector_dtype<ulonglong2, unsigned long long, 2> {};
template <> struct dtype_traits<float2> : detail::cuda_vector_dtype<float2, float, 2> {};
template <> struct dtype_traits<float4> : detail::cuda_vector_dtype<float4, float, 4> {};
template <> struct dtype_traits<double2> : detail::cuda_vector_dtype<double2, double, 2> {};

#if CUDART_VERSION >= 13000
// CUDA 13 deprecates the 4-lane 64-bit vectors in favour of explicitly aligned ones. The
// old names are still registered (with the deprecation silenced here, in the header, the
// way NVIDIA's own headers do it), so existing code keeps working.
template <> struct dtype_traits<long4_16a> : detail::cuda_vector_dtype<long4_16a, long, 4> {};
template <> struct dtype_traits<long4_32a> : detail::cuda_vector_dtype<long4_32a, long, 4> {};
template <> struct dtype_traits<ulong4_16a> : detail::cuda_vector_dtype<ulong4_16a, unsigned long, 4> {};
template <> struct dtype_traits<ulong4_32a> : detail::cuda_vector_dtype<ulong4_32a, unsigned long, 4> {};
template <> struct dtype_traits<longlong4_16a> : detail::cuda_vector_dtype<longlong4_16a, long long, 4> {};
template <> struct dtype_traits<longlong4_32a> : detail::cuda_vector_dtype<longlong4_32a, long long, 4> {};
template <> struct dtype_traits<ulonglong4_16a> : detail::cuda_vector_dtype<ulonglong4_16a, unsigned long long, 4> {};
template <> struct dtype_traits<ulonglong4_32a> : detail::cuda_vector_dtype<ulonglong4_32a, unsigned long long, 4> {};
template <> struct dtype_traits<double4_16a> : detail::cuda_vector_dtype<double4_16a, double, 4> {};
template <> struct dtype_traits<double4_32a> : detail::cuda_vector_dtype<double4_32a, double, 4> {};
#endif

#ifdef __NV_SILENCE_DEPRECATION_BEGIN
__NV_SILENCE_DEPRECATION_BEGIN
#endif
template <> struct dtype_traits<long4> : detail::cuda_vector_dtype<long4, long, 4> {};
template <> struct dtype_traits<ulong4> : detail::cuda_vector_dtype<ulong4, unsigned long, 4> {};
template <> struct dtype_traits<longlong4> : detail::cuda_vector_dtype<longlong4, long long, 4> {};
template <> struct dtype_traits<ulonglong4> : detail::cuda_vector_dtype<ulonglong4, unsigned long long, 4> {};
template <> struct dtype_traits<double4> : detail::cuda_vector_dtype<double4, double, 4> {};
#ifdef __NV_SILENCE_DEPRECATION_END
__NV_SILENCE_DEPRECATION_END
#endif

// ---- complex ----------------------------------------------------------------------------
// cuda::std::complex is its own template, distinct from std::complex. Bits count the whole
// value, as for std::complex: complex<__half> is 32 bits.

template <>
struct dtype_traits<cuda::std::complex<__half>> : detail::cuda_dtype<cuda::std::complex<__half>, kDLComplex, 32, 1> {};
template <>
struct dtype_traits<cuda::std::complex<float>> : detail::cuda_dtype<cuda::std::complex<float>, kDLComplex, 64, 1> {};
template <>
struct dtype_traits<cuda::std::complex<double>> : detail::cuda_dtype<cuda::std::complex<double>, kDLComplex, 128, 1> {};

// ---- accessors --------------------------------------------------------------------------

/// The accessor for memory of one CUDA kind: device_memory_accessor (device.hpp), limited to
/// the three CUDA kinds.
///
///   Memory          export reports           import accepts
///   kDLCUDA         {kDLCUDA, device_id}     kDLCUDA, kDLCUDAManaged
///   kDLCUDAManaged  {kDLCUDAManaged, 0}      kDLCUDAManaged
///   kDLCUDAHost     {kDLCUDAHost, 0}         kDLCUDAHost, kDLCUDAManaged
///
/// DLPack fixes device_id at 0 for pinned and managed memory, so only device memory
/// reports its ordinal. Import default-constructs the accessor (device_id 0);
/// to_mdspan_on_device keeps the tensor's ordinal instead.
template <class T, DLDeviceType Memory>
  requires(Memory == kDLCUDA || Memory == kDLCUDAManaged || Memory == kDLCUDAHost)
using cuda_memory_accessor = device_memory_accessor<T, Memory>;

/// Device memory (cudaMalloc): {kDLCUDA, device_id}.
template <class T>
using cuda_device_accessor = cuda_memory_accessor<T, kDLCUDA>;
/// Managed memory (cudaMallocManaged): {kDLCUDAManaged, 0}.
template <class T>
using cuda_managed_accessor = cuda_memory_accessor<T, kDLCUDAManaged>;
/// Pinned host memory (cudaMallocHost, cudaHostAlloc): {kDLCUDAHost, 0}.
template <class T>
using cuda_pinned_accessor = cuda_memory_accessor<T, kDLCUDAHost>;

/// cuda::std::mdspan over device, managed or pinned memory.
template <class T, class Extents, class Layout = cuda::std::layout_right>
using device_mdspan = cuda::std::mdspan<T, Extents, Layout, cuda_device_accessor<T>>;
template <class T, class Extents, class Layout = cuda::std::layout_right>
using managed_mdspan = cuda::std::mdspan<T, Extents, Layout, cuda_managed_accessor<T>>;
template <class T, class Extents, class Layout = cuda::std::layout_right>
using pinned_mdspan = cuda::std::mdspan<T, Extents, Layout, cuda_pinned_accessor<T>>;

// ---- where a pointer lives --------------------------------------------------------------

/// The DLPack device of the memory `p` points to, from cudaPointerGetAttributes:
/// device memory → {kDLCUDA, ordinal}, managed → {kDLCUDAManaged, 0}, pinned host →
/// {kDLCUDAHost, 0} (DLPack's ids for those two), memory CUDA does not know → {kDLCPU, 0}.
/// A CUDA failure (no driver, no device, ...) is errc::invalid_argument with the CUDA
/// error's name and text in the message. The runtime's last error is cleared, so it does
/// not surface in an unrelated cudaGetLastError later (a failed initialisation, such as
/// cudaErrorInsufficientDriver, is reported by every CUDA call whatever anyone clears).
/// NULL is errc::null_pointer, without a runtime call.
/// Costs one runtime call: pass the device explicitly on hot paths.
inline result<DLDevice> cuda_device_of(const void* p) noexcept {
  if (p == nullptr) return unexpected_error(error::format(errc::null_pointer, "cuda_device_of: the pointer is NULL"));
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, p);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return unexpected_error(error::format(errc::invalid_argument, "cuda_device_of(%p): cudaPointerGetAttributes failed: %s (%s)",
                                          p, cudaGetErrorName(status), cudaGetErrorString(status)));
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice: return DLDevice{kDLCUDA, attributes.device};
    // DLPack fixes the id of managed and pinned memory at 0 (device_id_is_always_zero).
    case cudaMemoryTypeManaged: return DLDevice{kDLCUDAManaged, 0};
    case cudaMemoryTypeHost: return DLDevice{kDLCUDAHost, 0};
    case cudaMemoryTypeUnregistered:
    default: return DLDevice{kDLCPU, 0};
  }
}

/// Export with the device found by cuda_device_of(md.data_handle()), whatever the accessor
/// says (the core's try_to_dlpack_tensor_on_device(md, cuda_device_of), export.hpp). A NULL
/// handle (an empty view) has nothing to ask about and takes the accessor's device. Fails with
/// cuda_device_of's error, or with the export errors. One pattern for the three runtimes:
/// try_to_dlpack_tensor_on_<memory>_device, with cuda, hip (hip.hpp) and usm (sycl.hpp).
template <strided_mdspan M>
[[nodiscard]] result<dlpack_tensor<M::rank()>> try_to_dlpack_tensor_on_cuda_device(const M& md) noexcept {
  return try_to_dlpack_tensor_on_device(md, cuda_device_of);
}

/// Throwing form of try_to_dlpack_tensor_on_cuda_device (dlpack_error).
template <strided_mdspan M>
[[nodiscard]] dlpack_tensor<M::rank()> to_dlpack_tensor_on_cuda_device(const M& md) {
  return detail::value_or_throw(try_to_dlpack_tensor_on_cuda_device(md));
}

/// The 0.2 names of the two above, kept for one minor release (CHANGELOG.md). The core's
/// try_to_dlpack_tensor_on_device(md, device_of), which takes the query, keeps its name.
template <strided_mdspan M>
[[deprecated("use try_to_dlpack_tensor_on_cuda_device")]] [[nodiscard]] result<dlpack_tensor<M::rank()>>
try_to_dlpack_tensor_on_device(const M& md) noexcept {
  return try_to_dlpack_tensor_on_cuda_device(md);
}
template <strided_mdspan M>
[[deprecated("use to_dlpack_tensor_on_cuda_device")]] [[nodiscard]] dlpack_tensor<M::rank()> to_dlpack_tensor_on_device(
    const M& md) {
  return to_dlpack_tensor_on_cuda_device(md);
}

// try_to_mdspan_on_device and to_mdspan_on_device, which keep the tensor's ordinal in the
// accessor, are in the core (import.hpp): they need no runtime.

// ---- stream-ordered exchange ---------------------------------------------------------------

/// A consumer's `stream=` argument to `__dlpack__`, as the Python array API encodes it for
/// CUDA: -1 asks for no synchronisation; 1 is the legacy default stream, 2 the per-thread
/// default stream; any other positive value is a cudaStream_t; 0 is disallowed (ambiguous
/// between the two defaults), and so is anything below -1.
struct array_api_stream {
  bool synchronise;     ///< false for -1: the consumer takes care of ordering itself
  cudaStream_t stream;  ///< the consumer's stream when synchronise is true
};

/// Decodes a `stream=` value (see array_api_stream) by the core's rule (decode_cuda_stream,
/// array_api_stream.hpp): 0 and values below -1 are errc::invalid_argument
/// (cuda_stream_refusal). No runtime call.
[[nodiscard]] inline result<array_api_stream> stream_from_array_api(std::int64_t value) noexcept {
  const cuda_stream_value decoded = decode_cuda_stream(value);
  if (decoded.asks == cuda_stream_value::kind::refused) return unexpected_error(cuda_stream_refusal(value));
  if (decoded.asks == cuda_stream_value::kind::no_sync) return array_api_stream{false, nullptr};
  return array_api_stream{true, reinterpret_cast<cudaStream_t>(decoded.handle)};
}

/// Makes `consumer` wait for all work queued on `producer` so far, without blocking the
/// host or synchronising the device: an event recorded on `producer` and waited on by
/// `consumer` (what a producer's `__dlpack__(stream=consumer)` must do). The same stream
/// needs nothing and makes no runtime call. A CUDA failure is errc::invalid_argument naming
/// the call and the CUDA error; the runtime's last error is cleared.
[[nodiscard]] inline error make_stream_wait(cudaStream_t producer, cudaStream_t consumer) noexcept {
  if (producer == consumer) return error();
  cudaEvent_t event = nullptr;
  const char* step = "cudaEventCreateWithFlags";
  cudaError_t status = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (status == cudaSuccess) {
    step = "cudaEventRecord";
    status = cudaEventRecord(event, producer);
    if (status == cudaSuccess) {
      step = "cudaStreamWaitEvent";
      status = cudaStreamWaitEvent(consumer, event, 0);
    }
    (void)cudaEventDestroy(event);  // the wait keeps what it needs; destroying is allowed at once
  }
  if (status == cudaSuccess) return error();
  (void)cudaGetLastError();
  return error::format(errc::invalid_argument, "make_stream_wait: %s failed: %s (%s)", step, cudaGetErrorName(status),
                       cudaGetErrorString(status));
}

// ---- copies between device and host ----------------------------------------------------------

namespace detail {

// A CUDA failure: errc::invalid_argument naming the call; the runtime's last error cleared.
DLPM_COLD inline error cuda_failed(const char* step, cudaError_t status) noexcept {
  (void)cudaGetLastError();
  return error::format(errc::invalid_argument, "%s failed: %s (%s)", step, cudaGetErrorName(status), cudaGetErrorString(status));
}

// n bytes on `stream` (ordered after the work queued on it), waited for: the host side of
// the copy is a staging or result buffer that must be complete, or free to reuse, on return.
inline error cuda_memcpy(void* dst, const void* src, std::size_t n, cudaMemcpyKind kind, cudaStream_t stream) noexcept {
  cudaError_t status = cudaMemcpyAsync(dst, src, n, kind, stream);
  if (status != cudaSuccess) return cuda_failed("cudaMemcpyAsync", status);
  status = cudaStreamSynchronize(stream);
  return status == cudaSuccess ? error() : cuda_failed("cudaStreamSynchronize", status);
}

// Device memory from cudaMalloc, freed with the tensor it backs.
class cuda_device_memory {
 public:
  explicit cuda_device_memory(void* p) noexcept : p_(p) {}
  cuda_device_memory(cuda_device_memory&& other) noexcept : p_(other.p_) { other.p_ = nullptr; }
  cuda_device_memory& operator=(cuda_device_memory&&) = delete;
  ~cuda_device_memory() {
    if (p_ != nullptr) (void)cudaFree(p_);
  }
  void* get() const noexcept { return p_; }

 private:
  void* p_;
};

}  // namespace detail

/// A compact row-major kDLCPU copy of a kDLCUDA or kDLCUDAManaged tensor (or any memory
/// CUDA can read), flagged IS_COPIED (try_copy_to_host_with): cudaMemcpyAsync on `stream`,
/// after the work already queued on it, then cudaStreamSynchronize, so the bytes are on the
/// host when it returns. Pass the producer's stream, or one already made to wait for it
/// (make_stream_wait).
///
/// Runtime errors: try_copy_to_host_with's, and errc::invalid_argument naming the CUDA call
/// that failed.
[[nodiscard]] inline result<managed_tensor> try_copy_cuda_to_host(const DLTensor& t, std::uint64_t flags,
                                                                  cudaStream_t stream) noexcept {
  return try_copy_to_host_with(t, flags, [stream](void* host, const void* device, std::size_t n) noexcept {
    return detail::cuda_memcpy(host, device, n, cudaMemcpyDeviceToHost, stream);
  });
}

/// A compact row-major copy of `t` (memory the CPU can read) in new device memory of CUDA
/// device `device_id` (cudaMalloc with that device current; the caller's current device is
/// restored), flagged IS_COPIED, the memory freed (cudaFree) with the tensor
/// (try_copy_from_host_with). Written by cudaMemcpyAsync on `stream` and waited for.
///
/// Runtime errors: try_copy_from_host_with's, errc::out_of_memory when cudaMalloc fails
/// for want of memory, and errc::invalid_argument naming any other CUDA call that failed.
[[nodiscard]] inline result<managed_tensor> try_copy_host_to_cuda(const DLTensor& t, std::uint64_t flags, int device_id,
                                                                  cudaStream_t stream) noexcept {
  auto allocate = [device_id](std::size_t n) noexcept -> result<detail::cuda_device_memory> {
    int previous = 0;
    cudaError_t status = cudaGetDevice(&previous);
    if (status != cudaSuccess) return unexpected_error(detail::cuda_failed("cudaGetDevice", status));
    if ((status = cudaSetDevice(device_id)) != cudaSuccess) return unexpected_error(detail::cuda_failed("cudaSetDevice", status));
    void* p = nullptr;
    status = cudaMalloc(&p, n);
    (void)cudaSetDevice(previous);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return unexpected_error(error::format(errc::out_of_memory, "cudaMalloc of %zu bytes on device %d", n, device_id));
    }
    if (status != cudaSuccess) return unexpected_error(detail::cuda_failed("cudaMalloc", status));
    return detail::cuda_device_memory(p);
  };
  auto write = [stream](void* device, const void* host, std::size_t n) noexcept {
    return detail::cuda_memcpy(device, host, n, cudaMemcpyHostToDevice, stream);
  };
  return try_copy_from_host_with(t, flags, DLDevice{kDLCUDA, device_id}, allocate, write);
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
