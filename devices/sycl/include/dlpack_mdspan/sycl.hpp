// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SYCL unified shared memory (kDLOneAPI) by dpctl's rules, through dpctl's C interface
// (libDPCTLSyclInterface), so no SYCL compiler is needed: the accessor of USM views, where
// a USM pointer lives (usm_allocation_of), the checks a kDLOneAPI tensor must pass
// (check_usm_tensor), typed import and export on top of them, and copies between USM and
// the host (try_copy_usm_to_host, try_copy_host_to_usm_device) through dpctl's queues.
//
// The rules, as dpctl defines them for DLPack:
//   * export: device_id is the position of the allocation's root device (a sub-device's
//     unpartitioned parent) among all SYCL root devices; only allocations bound to their
//     platform's default context can be exported, since a device id cannot name any other;
//   * import: device_id selects that root device, and the pointer must be a USM allocation
//     of the default context of the device's platform.
//
// Not part of the umbrella header, because it needs dpctl's headers (the `dpctl` Python
// wheel ships them, with the library): include it explicitly and link libDPCTLSyclInterface
// (CMake: link dlpack_mdspan::sycl, which brings both). Never compiled into the named
// module; a TU may include it and `import dlpack_mdspan;` as well. Its names live in the
// core's ABI namespace (config.hpp), because functions returning result<T> differ between
// C++20 and C++23 TUs.
#ifndef DLPACK_MDSPAN_SYCL_HPP
#define DLPACK_MDSPAN_SYCL_HPP

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <syclinterface/dpctl_sycl_context_interface.h>
#include <syclinterface/dpctl_sycl_device_interface.h>
#include <syclinterface/dpctl_sycl_device_manager.h>
#include <syclinterface/dpctl_sycl_event_interface.h>
#include <syclinterface/dpctl_sycl_platform_interface.h>
#include <syclinterface/dpctl_sycl_queue_interface.h>
#include <syclinterface/dpctl_sycl_usm_interface.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#if __has_include(<mdspan>)
#include <mdspan>
#endif

namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// The accessor of views of SYCL USM: {kDLOneAPI, root device index} on export, kDLOneAPI
/// on import (device_memory_accessor, device.hpp).
template <class T>
using usm_accessor = device_memory_accessor<T, kDLOneAPI>;

#if defined(__cpp_lib_mdspan)
/// std::mdspan over SYCL USM.
template <class T, class Extents, class Layout = std::layout_right>
using usm_mdspan = std::mdspan<T, Extents, Layout, usm_accessor<T>>;
#endif

/// The kind of a USM allocation (sycl::usm::alloc), or none for an empty tensor whose data
/// is NULL (nothing was asked).
enum class usm_kind { none, device, shared, host };

/// "device", "shared", "host" or "none".
constexpr const char* usm_kind_name(usm_kind kind) noexcept {
  switch (kind) {
    case usm_kind::device: return "device";
    case usm_kind::shared: return "shared";
    case usm_kind::host: return "host";
    default: return "none";
  }
}

/// What the SYCL runtime says of a USM pointer.
struct usm_allocation {
  DLDevice device;  ///< {kDLOneAPI, position of the allocation's root device}
  usm_kind kind;    ///< device, shared or host USM
  bool cpu_device;  ///< the root device is a CPU device
};

/// Whether a host view may read device USM. SYCL 2020 does not let the host dereference
/// device allocations, so the default refuses them; on a CPU device the allocation is in
/// the process's address space in the implementations we know (Intel's OpenCL CPU runtime,
/// tested), and `cpu_device_usm` lets a caller who knows that say so.
enum class usm_host_access { host_and_shared, cpu_device_usm };

namespace detail::sycl {

// The root devices and their platforms' default contexts, asked once per process: SYCL
// enumerates devices once, and dpctl answers from the same list. The references are never
// released, on purpose: a static destructor would run after the SYCL runtime has gone.
struct root_device {
  DPCTLSyclDeviceRef device;
  DPCTLSyclContextRef default_context;
  bool cpu;
};

inline constexpr int max_root_devices = 64;

struct registry {
  root_device roots[max_root_devices]{};
  int count = 0;
  const char* failure = nullptr;  // why the list could not be made, or NULL
};

// Every backend and device type: the list whose positions are kDLOneAPI device ids.
inline constexpr int all_devices = static_cast<int>(DPCTL_ALL_BACKENDS) | static_cast<int>(DPCTL_ALL);

inline registry make_registry() noexcept {
  registry r;
  DPCTLDeviceVectorRef devices = DPCTLDeviceMgr_GetDevices(all_devices);
  if (devices == nullptr) {
    r.failure = "DPCTLDeviceMgr_GetDevices returned NULL";
    return r;
  }
  const std::size_t n = DPCTLDeviceVector_Size(devices);
  for (std::size_t i = 0; i < n && r.count < max_root_devices; ++i) {
    DPCTLSyclDeviceRef device = DPCTLDeviceVector_GetAt(devices, i);
    DPCTLSyclPlatformRef platform = device ? DPCTLDevice_GetPlatform(device) : nullptr;
    DPCTLSyclContextRef context = platform ? DPCTLPlatform_GetDefaultContext(platform) : nullptr;
    if (platform) DPCTLPlatform_Delete(platform);
    r.roots[r.count++] = root_device{device, context, device != nullptr && DPCTLDevice_IsCPU(device)};
  }
  DPCTLDeviceVector_Delete(devices);  // the elements were copies; ours stay valid
  return r;
}

inline const registry& roots() noexcept {
  static const registry r = make_registry();
  return r;
}

// The position of a device's root device (itself, or its unpartitioned ancestor), or -1.
inline int root_index(DPCTLSyclDeviceRef device) noexcept {
  DPCTLSyclDeviceRef current = device;
  for (int depth = 0; depth < 16; ++depth) {  // partitions nest a few levels at most
    DPCTLSyclDeviceRef parent = DPCTLDevice_GetParentDevice(current);
    if (parent == nullptr) break;
    if (current != device) DPCTLDevice_Delete(current);
    current = parent;
  }
  const registry& r = roots();
  int found = -1;
  for (int i = 0; i < r.count && found < 0; ++i)
    if (r.roots[i].device != nullptr && DPCTLDevice_AreEq(r.roots[i].device, current)) found = i;
  if (current != device) DPCTLDevice_Delete(current);
  return found;
}

inline usm_kind kind_of(DPCTLSyclUSMType type) noexcept {
  switch (type) {
    case DPCTL_USM_DEVICE: return usm_kind::device;
    case DPCTL_USM_SHARED: return usm_kind::shared;
    case DPCTL_USM_HOST: return usm_kind::host;
    default: return usm_kind::none;
  }
}

DLPM_COLD inline error no_roots(const registry& r) {
  return error::format(errc::invalid_argument, "SYCL: no root devices are visible (%s)",
                       r.failure ? r.failure : "dpctl lists none; check ONEAPI_DEVICE_SELECTOR and the OpenCL/Level Zero drivers");
}

}  // namespace detail::sycl

/// The number of SYCL root devices, the range of kDLOneAPI device ids (0 when SYCL sees no
/// device or cannot enumerate them).
inline int usm_root_device_count() noexcept { return detail::sycl::roots().count; }

/// Where a USM pointer lives, for export: the first root device whose platform's default
/// context knows `p`, then the allocation's own (sub-)device mapped to its root.
///
/// Runtime errors:
///   * errc::null_pointer: `p` is NULL;
///   * errc::device_mismatch: no default platform context knows `p` (not USM, or bound to
///     another context: dpctl cannot name such memory with a device id, and neither can we);
///   * errc::invalid_argument: SYCL sees no device, or the allocation's device is not
///     among the root devices.
inline result<usm_allocation> usm_allocation_of(const void* p) noexcept {
  using namespace detail::sycl;
  if (p == nullptr) return unexpected_error(error::format(errc::null_pointer, "usm_allocation_of: the pointer is NULL"));
  const registry& r = roots();
  if (r.count == 0) return unexpected_error(no_roots(r));
  auto* usm = static_cast<DPCTLSyclUSMRef>(const_cast<void*>(p));  // dpctl's query takes a non-const handle
  DPCTLSyclContextRef previous = nullptr;
  for (int i = 0; i < r.count; ++i) {
    DPCTLSyclContextRef context = r.roots[i].default_context;
    // Devices of one platform share its default context: ask each context once.
    if (context == nullptr || (previous != nullptr && DPCTLContext_AreEq(previous, context))) continue;
    previous = context;
    const usm_kind kind = kind_of(DPCTLUSM_GetPointerType(usm, context));
    if (kind == usm_kind::none) continue;
    DPCTLSyclDeviceRef device = DPCTLUSM_GetPointerDevice(usm, context);
    const int root = device ? root_index(device) : -1;
    if (device) DPCTLDevice_Delete(device);
    if (root < 0)
      return unexpected_error(error::format(errc::invalid_argument,
                                            "usm_allocation_of(%p): %s USM whose device is not among the %d SYCL root devices", p,
                                            usm_kind_name(kind), r.count));
    return usm_allocation{DLDevice{kDLOneAPI, root}, kind, r.roots[root].cpu};
  }
  return unexpected_error(error::format(errc::device_mismatch,
                                        "usm_allocation_of(%p): not a USM allocation of any SYCL platform's default context "
                                        "(not USM, or bound to another context, which a kDLOneAPI device id cannot name)",
                                        p));
}

/// Checks a kDLOneAPI tensor as dpctl's import does: device_id names a root device, and
/// `data` is a USM allocation of the default context of that device's platform; device
/// USM must also be on that root device (shared and host USM are reachable from every
/// device of the context). An empty tensor with NULL data asks nothing (kind none).
///
/// Runtime errors:
///   * errc::device_mismatch: the tensor is not kDLOneAPI, or `data` is not USM of the
///     default context of the platform (a foreign context, or not USM at all);
///   * errc::device_id_mismatch: device_id names no root device, or device USM lives on
///     another root device;
///   * errc::invalid_argument: SYCL sees no device.
inline result<usm_allocation> check_usm_tensor(const DLTensor& tensor) noexcept {
  using namespace detail::sycl;
  const DLDevice d = tensor.device;
  if (d.device_type != kDLOneAPI)
    return unexpected_error(error::format(errc::device_mismatch, "check_usm_tensor: the tensor is on %s, not kDLOneAPI",
                                          device_type_name(d.device_type)));
  const registry& r = roots();
  if (r.count == 0) return unexpected_error(no_roots(r));
  if (d.device_id < 0 || d.device_id >= r.count)
    return unexpected_error(error::format(errc::device_id_mismatch,
                                          "kDLOneAPI device_id %d names no SYCL root device (this process sees %d: ids 0 to %d)",
                                          static_cast<int>(d.device_id), r.count, r.count - 1));
  const root_device& root = r.roots[d.device_id];
  if (tensor.data == nullptr) return usm_allocation{d, usm_kind::none, root.cpu};
  if (root.default_context == nullptr)
    return unexpected_error(error::format(errc::invalid_argument,
                                          "kDLOneAPI device_id %d: its platform has no default context to check the pointer in",
                                          static_cast<int>(d.device_id)));
  auto* usm = static_cast<DPCTLSyclUSMRef>(tensor.data);
  const usm_kind kind = kind_of(DPCTLUSM_GetPointerType(usm, root.default_context));
  if (kind == usm_kind::none)
    return unexpected_error(error::format(errc::device_mismatch,
                                          "kDLOneAPI data %p is not a USM allocation of the default context of device_id %d's "
                                          "platform (bound to another context, or not USM): dpctl's rule admits only those",
                                          tensor.data, static_cast<int>(d.device_id)));
  if (kind == usm_kind::device) {
    DPCTLSyclDeviceRef device = DPCTLUSM_GetPointerDevice(usm, root.default_context);
    const int owner = device ? root_index(device) : -1;
    if (device) DPCTLDevice_Delete(device);
    if (owner != d.device_id)
      return unexpected_error(error::format(errc::device_id_mismatch,
                                            "kDLOneAPI data %p is device USM of root device %d, but the tensor says device_id %d",
                                            tensor.data, owner, static_cast<int>(d.device_id)));
  }
  return usm_allocation{d, kind, root.cpu};
}

/// The USM view of a kDLOneAPI tensor: try_view's checks (`flags`: the tensor's DLPack
/// flags), then check_usm_tensor's,
/// and the accessor built with the tensor's device_id (so a re-export names the same
/// device). M's accessor must be usm_accessor<T> (or another kDLOneAPI accessor that is
/// constructible from the ordinal).
template <pointer_mdspan M>
  requires(device_traits<typename M::accessor_type>::device_type == kDLOneAPI &&
           std::is_constructible_v<typename M::accessor_type, std::int32_t>)
[[nodiscard]] result<M> try_to_mdspan_on_usm_device(const DLTensor& tensor, const tensor_requirements& requirements = {},
                                                    std::uint64_t flags = 0) noexcept {
  result<M> view = try_to_mdspan_on_device<M>(tensor, requirements, flags);
  if (!view) return view;
  const result<usm_allocation> where = check_usm_tensor(tensor);
  if (!where) return unexpected_error(where.error());
  return view;
}

/// Throwing form of try_to_mdspan_on_usm_device (dlpack_error).
template <pointer_mdspan M>
  requires(device_traits<typename M::accessor_type>::device_type == kDLOneAPI &&
           std::is_constructible_v<typename M::accessor_type, std::int32_t>)
[[nodiscard]] M to_mdspan_on_usm_device(const DLTensor& tensor, const tensor_requirements& requirements = {},
                                        std::uint64_t flags = 0) {
  return detail::value_or_throw(try_to_mdspan_on_usm_device<M>(tensor, requirements, flags));
}

/// A host view (M's accessor is a host accessor) of a kDLOneAPI tensor whose memory the
/// host may read: host or shared USM, and device USM on a CPU device when `access` is
/// usm_host_access::cpu_device_usm. Any other tensor goes to try_to_mdspan unchanged, so
/// one call takes host tensors and USM alike. The requirements' device rules (device_types,
/// device_id) judge the tensor's own kDLOneAPI device; the rest judge the host view.
///
/// Runtime errors: check_usm_tensor's, try_to_mdspan's, and errc::device_mismatch for
/// device USM the host may not read (the message says which USM kind and device).
template <pointer_mdspan M>
  requires(device_traits<typename M::accessor_type>::device_type == kDLCPU)
[[nodiscard]] result<M> try_to_host_mdspan_from_usm(const DLTensor& tensor, const tensor_requirements& requirements = {},
                                                    usm_host_access access = usm_host_access::host_and_shared) noexcept {
  if (tensor.device.device_type != kDLOneAPI) return try_to_mdspan<M>(tensor, requirements);
  const result<usm_allocation> where = check_usm_tensor(tensor);
  if (!where) return unexpected_error(where.error());
  if (where->kind == usm_kind::device && !(access == usm_host_access::cpu_device_usm && where->cpu_device))
    return unexpected_error(error::format(
        errc::device_mismatch, "kDLOneAPI data %p is device USM on %s root device %d: the host may not read it%s", tensor.data,
        where->cpu_device ? "CPU" : "a non-CPU", static_cast<int>(tensor.device.device_id),
        where->cpu_device ? " unless the caller allows it (usm_host_access::cpu_device_usm)" : " (copy it to host or shared USM)"));
  // The caller's device rules (device_types, device_id) judge the tensor's own device.
  error err;
  if (!check_requirements_valid(requirements, &err) || !detail::check_required_device(tensor.device, requirements, &err))
    return unexpected_error(err);
  // The memory is host memory now: the host rules apply to the rest.
  DLTensor host = tensor;
  host.device = DLDevice{kDLCPU, 0};
  tensor_requirements host_requirements = requirements;  // the device rules were judged above
  host_requirements.device_id = -1;
  host_requirements.device_types = nullptr;
  return try_to_mdspan<M>(host, host_requirements);
}

/// Throwing form of try_to_host_mdspan_from_usm (dlpack_error).
template <pointer_mdspan M>
  requires(device_traits<typename M::accessor_type>::device_type == kDLCPU)
[[nodiscard]] M to_host_mdspan_from_usm(const DLTensor& tensor, const tensor_requirements& requirements = {},
                                        usm_host_access access = usm_host_access::host_and_shared) {
  return detail::value_or_throw(try_to_host_mdspan_from_usm<M>(tensor, requirements, access));
}

/// Export with the device found by usm_allocation_of(md.data_handle()), whatever the
/// accessor says: a view of USM, through any accessor, becomes {kDLOneAPI, root index}.
/// A NULL handle (an empty view) has nothing to ask about and takes the accessor's device.
/// Fails with usm_allocation_of's errors (memory of a non-default context is refused), or
/// with the export errors. One pattern for the three runtimes:
/// try_to_dlpack_tensor_on_<memory>_device, with cuda (cuda.hpp), hip (hip.hpp) and usm.
template <strided_mdspan M>
[[nodiscard]] result<dlpack_tensor<M::rank()>> try_to_dlpack_tensor_on_usm_device(const M& md) noexcept {
  return try_to_dlpack_tensor_on_device(md, [](const void* p) noexcept -> result<DLDevice> {
    const result<usm_allocation> where = usm_allocation_of(p);
    if (!where) return unexpected_error(where.error());
    return where->device;
  });
}

/// Throwing form of try_to_dlpack_tensor_on_usm_device (dlpack_error).
template <strided_mdspan M>
[[nodiscard]] dlpack_tensor<M::rank()> to_dlpack_tensor_on_usm_device(const M& md) {
  return detail::value_or_throw(try_to_dlpack_tensor_on_usm_device(md));
}

namespace detail::sycl {

// A queue to move bytes with: the caller's, or a new one on a root device and its
// platform's default context (the context every exportable allocation belongs to).
class copy_queue {
 public:
  copy_queue(DPCTLSyclQueueRef given, const root_device& root) noexcept
      : queue_(given != nullptr ? given
                                : DPCTLQueue_Create(root.default_context, root.device, nullptr, DPCTL_DEFAULT_PROPERTY)),
        owned_(given == nullptr) {}
  copy_queue(const copy_queue&) = delete;
  copy_queue& operator=(const copy_queue&) = delete;
  ~copy_queue() {
    if (owned_ && queue_ != nullptr) DPCTLQueue_Delete(queue_);
  }
  DPCTLSyclQueueRef get() const noexcept { return queue_; }

 private:
  DPCTLSyclQueueRef queue_;
  bool owned_;
};

DLPM_COLD inline error no_queue(std::int32_t device_id) {
  return error::format(errc::invalid_argument, "SYCL: no queue could be made on root device %d", static_cast<int>(device_id));
}

// n bytes from src to dst on `queue`, after every command already submitted to it (a
// barrier: dpctl's queues run out of order unless made in order), waited for.
inline error queue_memcpy(DPCTLSyclQueueRef queue, void* dst, const void* src, std::size_t n) noexcept {
  DPCTLSyclEventRef barrier = DPCTLQueue_SubmitBarrier(queue);
  DPCTLSyclEventRef copied = DPCTLQueue_MemcpyWithEvents(queue, dst, src, n, barrier != nullptr ? &barrier : nullptr,
                                                         barrier != nullptr ? 1 : 0);
  if (barrier != nullptr) DPCTLEvent_Delete(barrier);
  if (copied == nullptr) return error::format(errc::invalid_argument, "SYCL: dpctl's queue memcpy of %zu bytes failed", n);
  DPCTLEvent_Wait(copied);
  DPCTLEvent_Delete(copied);
  return {};
}

// Device USM of one context, freed with the tensor it backs.
class usm_memory {
 public:
  usm_memory(void* p, DPCTLSyclContextRef context) noexcept : p_(p), context_(context) {}
  usm_memory(usm_memory&& other) noexcept : p_(std::exchange(other.p_, nullptr)), context_(other.context_) {}
  usm_memory& operator=(usm_memory&&) = delete;
  ~usm_memory() {
    if (p_ != nullptr) DPCTLfree_with_context(static_cast<DPCTLSyclUSMRef>(p_), context_);
  }
  void* get() const noexcept { return p_; }

 private:
  void* p_;
  DPCTLSyclContextRef context_;
};

}  // namespace detail::sycl

/// A compact row-major kDLCPU copy of a kDLOneAPI tensor of any USM kind (check_usm_tensor's
/// rules first), flagged IS_COPIED (try_copy_to_host_with). The bytes move through dpctl's
/// queue memcpy on `queue`, after the work already submitted to it (pass the producer's
/// queue, whose context must be the allocation's), or on a new queue of the tensor's root
/// device when `queue` is nullptr. Returns once the bytes are on the host.
///
/// Runtime errors: check_usm_tensor's, try_copy_to_host_with's, and errc::invalid_argument
/// when dpctl can make no queue or its memcpy fails.
inline result<managed_tensor> try_copy_usm_to_host(const DLTensor& t, std::uint64_t flags,
                                                   DPCTLSyclQueueRef queue = nullptr) noexcept {
  using namespace detail::sycl;
  const result<usm_allocation> where = check_usm_tensor(t);
  if (!where) return unexpected_error(where.error());
  const copy_queue q(queue, roots().roots[t.device.device_id]);
  if (q.get() == nullptr) return unexpected_error(no_queue(t.device.device_id));
  return try_copy_to_host_with(t, flags, [&q](void* host, const void* usm, std::size_t n) noexcept {
    return queue_memcpy(q.get(), host, usm, n);
  });
}

/// A compact row-major copy of `t` (memory the CPU can read) in device USM of root device
/// `device_id`, allocated in its platform's default context so that it exports as
/// {kDLOneAPI, device_id}; flagged IS_COPIED, the USM freed with the tensor
/// (try_copy_from_host_with). Returns once the bytes are on the device.
///
/// Runtime errors: try_copy_from_host_with's, errc::device_id_mismatch when device_id names
/// no root device, errc::out_of_memory when the USM allocation fails, and
/// errc::invalid_argument when dpctl can make no queue or its memcpy fails.
inline result<managed_tensor> try_copy_host_to_usm_device(const DLTensor& t, std::uint64_t flags,
                                                          std::int32_t device_id) noexcept {
  using namespace detail::sycl;
  const registry& r = roots();
  if (r.count == 0) return unexpected_error(no_roots(r));
  if (device_id < 0 || device_id >= r.count)
    return unexpected_error(error::format(errc::device_id_mismatch,
                                          "kDLOneAPI device_id %d names no SYCL root device (this process sees %d: ids 0 to %d)",
                                          static_cast<int>(device_id), r.count, r.count - 1));
  const root_device& root = r.roots[device_id];
  const copy_queue q(nullptr, root);
  if (q.get() == nullptr) return unexpected_error(no_queue(device_id));
  auto allocate = [&](std::size_t n) noexcept -> result<usm_memory> {
    void* p = DPCTLmalloc_device(n, q.get());
    if (p == nullptr)
      return unexpected_error(error::format(errc::out_of_memory, "SYCL: %zu bytes of device USM on root device %d", n,
                                            static_cast<int>(device_id)));
    return usm_memory(p, root.default_context);
  };
  auto write = [&q](void* usm, const void* host, std::size_t n) noexcept { return queue_memcpy(q.get(), usm, host, n); };
  return try_copy_from_host_with(t, flags, DLDevice{kDLOneAPI, device_id}, allocate, write);
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
