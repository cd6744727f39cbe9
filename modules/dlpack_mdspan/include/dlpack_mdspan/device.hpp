// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which device an mdspan's memory lives on: a customization point on the accessor.
#ifndef DLPACK_MDSPAN_DEVICE_HPP
#define DLPACK_MDSPAN_DEVICE_HPP

#include <dlpack_mdspan/config.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

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
  // kDLCPU first: one compare on every import of plain host memory, before the bit test.
  return type == kDLCPU || !(type >= 0 && type < 32 && ((handles >> type) & 1u) != 0);
}

/// Memory the host CPU may dereference: plain, CUDA-pinned, CUDA-managed or ROCm-pinned.
/// CCCL's host import refuses pinned memory; it is ordinary host memory to the CPU.
constexpr bool is_host_accessible(std::int32_t type) noexcept {
  constexpr std::uint32_t host = (1u << kDLCPU) | (1u << kDLCUDAHost) | (1u << kDLCUDAManaged) | (1u << kDLROCMHost);
  return type >= 0 && type < 32 && ((host >> type) & 1u) != 0;
}

/// True where DLPack fixes `device_id` at 0: "for vanilla CPU memory, pinned memory, or
/// managed memory, this is set to 0" (dlpack.h). Export reports 0 for these whatever the
/// accessor holds; import accepts any id for them, because producers disagree.
constexpr bool device_id_is_always_zero(std::int32_t type) noexcept {
  constexpr std::uint32_t zero = (1u << kDLCPU) | (1u << kDLCUDAHost) | (1u << kDLCUDAManaged) | (1u << kDLROCMHost);
  return type >= 0 && type < 32 && ((zero >> type) & 1u) != 0;
}

/// The device types an import into memory of kind `memory` accepts: the kind itself, and
/// CUDA managed memory wherever CUDA device or pinned memory is expected (managed memory is
/// reachable from both sides). Nothing else converts: device memory is not host memory,
/// nor the other way round.
constexpr bool memory_kind_accepts(DLDeviceType memory, std::int32_t type) noexcept {
  if (type == memory) return true;
  return (memory == kDLCUDA || memory == kDLCUDAHost) && type == kDLCUDAManaged;
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
  /// kDLCPU first: one compare on every import of plain host memory, before the bit test.
  static constexpr bool accepts(std::int32_t type) noexcept { return type == kDLCPU || is_host_accessible(type); }
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

namespace detail {
// Every device type Accessor accepts has plain addresses (is_direct_address_device), known
// at compile time: a typed import into it compiles the exceptions for handles away. False
// when the accessor's accepts() cannot be evaluated at compile time.
template <class Accessor>
constexpr bool accepts_only_direct_addresses() {
  if constexpr (requires { typename std::bool_constant<device_traits<Accessor>::accepts(0)>; }) {
    for (std::int32_t type = 0; type < 32; ++type)  // every handle type is below 32
      if (device_traits<Accessor>::accepts(type) && !is_direct_address_device(type)) return false;
    return true;
  } else {
    return false;
  }
}
}  // namespace detail

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

/// An mdspan accessor for memory of one device kind (CUDA, ROCm, SYCL USM, ...): plain
/// element access, like default_accessor, plus the DLPack device it stands for.
///
/// Export reports {Memory, device_id}, or {Memory, 0} where DLPack fixes the id at 0
/// (device_id_is_always_zero). Import accepts what memory_kind_accepts(Memory, type) says.
/// The vendor headers (cuda.hpp, hip.hpp, sycl.hpp) name its instances; this one template
/// is what they share. Element access is __host__ __device__ under nvcc and hipcc: whether
/// a dereference is valid where it runs is the caller's business, as with raw pointers.
template <class T, DLDeviceType Memory>
struct device_memory_accessor {
  using offset_policy = device_memory_accessor;  ///< the accessor for offset pointers: itself
  using element_type = T;                        ///< the element type
  using reference = T&;                          ///< what access() returns
  using data_handle_type = T*;                   ///< a plain pointer, which DLPack can describe

  /// The device type export reports (the customization point above).
  static constexpr DLDeviceType dlpack_device_type = Memory;

  /// The device types import accepts (memory_kind_accepts).
  static constexpr bool dlpack_accepts(DLDeviceType type) noexcept { return memory_kind_accepts(Memory, type); }

  /// The device ordinal. Reported by export unless DLPack fixes it at 0 for this kind.
  std::int32_t device_id = 0;

  constexpr device_memory_accessor() noexcept = default;
  /// An accessor for memory on device `ordinal`.
  DLPM_HOST_DEVICE constexpr explicit device_memory_accessor(std::int32_t ordinal) noexcept : device_id(ordinal) {}

  /// float → const float, as default_accessor allows.
  template <class U>
    requires std::is_convertible_v<U (*)[], T (*)[]>
  DLPM_HOST_DEVICE constexpr device_memory_accessor(const device_memory_accessor<U, Memory>& other) noexcept
      : device_id(other.device_id) {}

  /// What export reports for views through this accessor.
  [[nodiscard]] constexpr DLDevice dlpack_device() const noexcept {
    return DLDevice{Memory, device_id_is_always_zero(Memory) ? 0 : device_id};
  }

  /// Element `i` of `p` (dereference only where the memory is reachable).
  DLPM_HOST_DEVICE constexpr reference access(data_handle_type p, std::size_t i) const noexcept { return p[i]; }
  /// `p + i`.
  DLPM_HOST_DEVICE constexpr data_handle_type offset(data_handle_type p, std::size_t i) const noexcept { return p + i; }
};

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
