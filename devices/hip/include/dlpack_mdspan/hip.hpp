// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ROCm support through HIP: accessors for device and pinned memory (kDLROCM, kDLROCMHost),
// hip_device_of(), which asks the HIP runtime where a pointer lives, and the dtypes of
// HIP's __half, __half2 and hip_bfloat16.
//
// Not part of the umbrella header, because it needs HIP's headers (Debian:
// libamdhip64-dev): include it explicitly (CMake: link dlpack_mdspan::hip). Header-only;
// host compilers (clang, g++) and hipcc can include it. Only hip_device_of() calls the HIP
// runtime, so a program that does not call it does not link libamdhip64.
//
// HIP's headers refuse to compile unless a platform macro is defined: hipcc defines
// __HIP_PLATFORM_AMD__ itself, host compilers do not. This header is for AMD's platform
// (kDLROCM), so it defines __HIP_PLATFORM_AMD__ when no platform is named; HIP on NVIDIA's
// platform is CUDA memory, for which include dlpack_mdspan/cuda.hpp instead. The two
// headers cannot share a translation unit: CUDA and HIP both define __half.
//
// Never compiled into the named module, so its namespace blocks are not exported; a TU may
// include it and `import dlpack_mdspan;` as well. They are the core's ABI namespace
// (config.hpp: cxx20 or cxx23), because hip_device_of returns result<T>, which differs
// between C++20 TUs (hipcc, g++) and C++23 ones: one name for both would let the linker
// merge two different functions.
#ifndef DLPACK_MDSPAN_HIP_HPP
#define DLPACK_MDSPAN_HIP_HPP

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#if defined(__HIP_PLATFORM_NVIDIA__) || defined(__HIP_PLATFORM_NVCC__) || defined(__NVCC__) || \
    (defined(__CUDA__) && !defined(__HIP__))
#error "dlpack_mdspan/hip.hpp is for HIP on AMD's platform (kDLROCM); on NVIDIA's, use dlpack_mdspan/cuda.hpp"
#endif
#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_HCC__)
#define __HIP_PLATFORM_AMD__
#endif

#include <hip/hip_version.h>

#if !defined(HIP_VERSION_MAJOR) || HIP_VERSION_MAJOR < 5
#error "dlpack_mdspan/hip.hpp needs HIP >= 5 (tested with 5.2)"
#endif

#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <cstdint>
#if __has_include(<mdspan>)
#include <mdspan>
#endif

namespace dlpack_mdspan {
inline namespace DLPM_ABI {

// ---- element types --------------------------------------------------------------------------
// hipcc and host compilers see different definitions of these types (HIP's headers give host
// compilers plain structs of the same size); the dtypes are the same, and checked_dtype
// (dtype.hpp) checks each against its size.

template <> struct dtype_traits<__half> : detail::checked_dtype<__half, kDLFloat, 16, 1> {};
template <> struct dtype_traits<__half2> : detail::checked_dtype<__half2, kDLFloat, 16, 2> {};
template <> struct dtype_traits<hip_bfloat16> : detail::checked_dtype<hip_bfloat16, kDLBfloat, 16, 1> {};

// ---- accessors ------------------------------------------------------------------------------

/// Device memory (hipMalloc): device_memory_accessor (device.hpp) for kDLROCM. Export
/// reports {kDLROCM, device_id}; import accepts kDLROCM only.
template <class T>
using hip_device_accessor = device_memory_accessor<T, kDLROCM>;

/// Pinned host memory (hipHostMalloc, hipHostRegister): device_memory_accessor for
/// kDLROCMHost. Export reports {kDLROCMHost, 0}, DLPack's id for pinned memory, whatever
/// device_id holds; import accepts kDLROCMHost with any id. (The default host accessor
/// accepts kDLROCMHost too.)
template <class T>
using hip_pinned_accessor = device_memory_accessor<T, kDLROCMHost>;

#if defined(__cpp_lib_mdspan)
/// std::mdspan over HIP device or pinned memory. HIP ships no mdspan of its own; where the
/// standard library has none (libstdc++ 12, C++20), spell the mdspan you use with the
/// accessors above.
template <class T, class Extents, class Layout = std::layout_right>
using hip_device_mdspan = std::mdspan<T, Extents, Layout, hip_device_accessor<T>>;
template <class T, class Extents, class Layout = std::layout_right>
using hip_pinned_mdspan = std::mdspan<T, Extents, Layout, hip_pinned_accessor<T>>;
#endif

// ---- where a pointer lives ------------------------------------------------------------------

/// The DLPack device of the memory `p` points to, from hipPointerGetAttributes:
/// device memory → {kDLROCM, ordinal}; managed memory (hipMallocManaged) → {kDLROCM,
/// ordinal}, since DLPack has no ROCm managed type; pinned host memory → {kDLROCMHost, 0};
/// memory HIP does not know → {kDLCPU, 0} (HIP < 6 reports it as hipErrorInvalidValue, HIP
/// >= 6 as hipMemoryTypeUnregistered). Other HIP failures (no driver, no device, ...) are
/// errc::invalid_argument with the HIP error's name and text in the message; the runtime's
/// last error is cleared (a failed initialisation is reported by every later call anyway).
/// NULL is errc::null_pointer, without a runtime call.
/// Costs one runtime call: on hot paths pass the device yourself, to_dlpack_tensor(md, device).
inline result<DLDevice> hip_device_of(const void* p) noexcept {
  if (p == nullptr) return unexpected_error(error::format(errc::null_pointer, "hip_device_of: the pointer is NULL"));
  hipPointerAttribute_t attributes{};
  const hipError_t status = hipPointerGetAttributes(&attributes, p);
#if HIP_VERSION_MAJOR < 6
  if (status == hipErrorInvalidValue) {  // HIP 5: "no allocation of ours", i.e. unregistered
    (void)hipGetLastError();
    return DLDevice{kDLCPU, 0};
  }
#endif
  if (status != hipSuccess) {
    (void)hipGetLastError();
    return unexpected_error(error::format(errc::invalid_argument, "hip_device_of(%p): hipPointerGetAttributes failed: %s (%s)",
                                          p, hipGetErrorName(status), hipGetErrorString(status)));
  }
  // HIP 5 reports managed memory as host memory with isManaged set.
  if (attributes.isManaged != 0) return DLDevice{kDLROCM, attributes.device};
#if HIP_VERSION_MAJOR >= 6
  const hipMemoryType type = attributes.type;  // HIP 6 renamed memoryType
#else
  const hipMemoryType type = attributes.memoryType;
#endif
  switch (type) {
    case hipMemoryTypeDevice: return DLDevice{kDLROCM, attributes.device};
    // DLPack fixes the id of pinned memory at 0 (device_id_is_always_zero).
    case hipMemoryTypeHost: return DLDevice{kDLROCMHost, 0};
#if HIP_VERSION_MAJOR >= 6
    case hipMemoryTypeManaged: return DLDevice{kDLROCM, attributes.device};
    case hipMemoryTypeUnregistered: return DLDevice{kDLCPU, 0};
#endif
    default:  // hipMemoryTypeArray, hipMemoryTypeUnified: no plain address DLPack can describe
      return unexpected_error(error::format(errc::invalid_argument,
                                            "hip_device_of(%p): HIP memory type %d is neither device, managed, pinned "
                                            "nor unregistered memory",
                                            p, static_cast<int>(type)));
  }
}

/// Export with the device found by hip_device_of(md.data_handle()), whatever the accessor
/// says (try_to_dlpack_tensor_on_device of export.hpp). A NULL handle (an empty view) takes
/// the accessor's device. Fails with hip_device_of's error, or with the export errors.
/// For the import side, try_to_mdspan_on_device (import.hpp) keeps the tensor's ordinal.
/// One pattern for the three runtimes: try_to_dlpack_tensor_on_<memory>_device, with cuda
/// (cuda.hpp), hip and usm (sycl.hpp).
template <strided_mdspan M>
[[nodiscard]] result<dlpack_tensor<M::rank()>> try_to_dlpack_tensor_on_hip_device(const M& md) noexcept {
  return try_to_dlpack_tensor_on_device(md, hip_device_of);
}

/// Throwing form of try_to_dlpack_tensor_on_hip_device (dlpack_error).
template <strided_mdspan M>
[[nodiscard]] dlpack_tensor<M::rank()> to_dlpack_tensor_on_hip_device(const M& md) {
  return detail::value_or_throw(try_to_dlpack_tensor_on_hip_device(md));
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
