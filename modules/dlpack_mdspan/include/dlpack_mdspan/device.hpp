// Which device an mdspan's memory lives on: a customization point on the accessor.
#ifndef DLPACK_MDSPAN_DEVICE_HPP
#define DLPACK_MDSPAN_DEVICE_HPP

#include <dlpack_mdspan/config.hpp>

#include <concepts>
#include <cstdint>

DLPM_EXPORT namespace dlpack_mdspan::inline DLPM_ABI {

/// Names a DLDeviceType for messages ("kDLCUDA"), or "unknown".
constexpr const char* device_type_name(std::int32_t type) noexcept {
  switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    case kDLVPI: return "kDLVPI";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLExtDev: return "kDLExtDev";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    case kDLOneAPI: return "kDLOneAPI";
    case kDLWebGPU: return "kDLWebGPU";
    case kDLHexagon: return "kDLHexagon";
    case kDLMAIA: return "kDLMAIA";
    case kDLTrn: return "kDLTrn";
    default: return "unknown";
  }
}

/// True for device types whose data pointer is a plain address (pointer arithmetic and
/// alignment checks are meaningful). OpenCL, Vulkan, Metal and WebGPU hand out opaque
/// handles instead, where byte_offset must be applied by the runtime, not by us.
constexpr bool is_direct_address_device(std::int32_t type) noexcept {
  // A bit test rather than a switch: this runs on every import.
  constexpr std::uint32_t handles = (1u << kDLOpenCL) | (1u << kDLVulkan) | (1u << kDLMetal) | (1u << kDLWebGPU);
  return !(type >= 0 && type < 32 && ((handles >> type) & 1u) != 0);
}

/// Memory the host CPU may dereference: plain, CUDA-pinned, CUDA-managed or ROCm-pinned.
/// CCCL's host import refuses pinned memory; it is ordinary host memory to the CPU.
constexpr bool is_host_accessible(std::int32_t type) noexcept {
  constexpr std::uint32_t host = (1u << kDLCPU) | (1u << kDLCUDAHost) | (1u << kDLCUDAManaged) | (1u << kDLROCMHost);
  return type >= 0 && type < 32 && ((host >> type) & 1u) != 0;
}

/// The customization point through which an accessor declares where its memory lives.
///
/// The default (for std::default_accessor and any accessor that says nothing) is host
/// memory. An accessor declares another device in one of two ways:
///   * a static member `static constexpr DLDeviceType dlpack_device_type = kDLCUDA;`
///     (optionally with `static constexpr bool dlpack_accepts(DLDeviceType)` for import), or
///   * a specialization of device_traits<Accessor>.
/// An accessor object that knows its device id at run time may add a member
/// `DLDevice dlpack_device() const`, which export then prefers.
template <class Accessor>
struct device_traits {
  static constexpr DLDeviceType device_type = kDLCPU;
  /// Device types an import into this accessor accepts.
  static constexpr bool accepts(std::int32_t type) noexcept { return is_host_accessible(type); }
};

template <class Accessor>
  requires requires { Accessor::dlpack_device_type; }
struct device_traits<Accessor> {
  static constexpr DLDeviceType device_type = Accessor::dlpack_device_type;
  static constexpr bool accepts(std::int32_t type) noexcept {
    if constexpr (requires { Accessor::dlpack_accepts(DLDeviceType{}); }) {
      return Accessor::dlpack_accepts(static_cast<DLDeviceType>(type));
    } else {
      return type == Accessor::dlpack_device_type;
    }
  }
};

/// The device an accessor object says its data is on (device id 0 unless it knows better).
template <class Accessor>
constexpr DLDevice accessor_device(const Accessor& acc) noexcept {
  if constexpr (requires { { acc.dlpack_device() } -> std::same_as<DLDevice>; }) {
    return acc.dlpack_device();
  } else {
    (void)acc;
    return DLDevice{device_traits<Accessor>::device_type, 0};
  }
}

}  // namespace dlpack_mdspan

#endif
