// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SYCL unified shared memory through DLPack, by dpctl's rules (kDLOneAPI): a USM allocation
// exported as {kDLOneAPI, root device}, taken back as a typed USM view and as a host view,
// and device USM refused on the host unless the caller allows it.
//
// Needs dpctl's C interface (the `dpctl` wheel: headers in dpctl.get_include(), the library
// beside them) and a SYCL device; CI uses Intel's OpenCL CPU runtime from PyPI.
#include <syclinterface/dpctl_sycl_device_manager.h>
#include <syclinterface/dpctl_sycl_platform_interface.h>
#include <syclinterface/dpctl_sycl_queue_interface.h>
#include <syclinterface/dpctl_sycl_usm_interface.h>

#include <dlpack_mdspan/sycl.hpp>

#include <cstdio>
#include <mdspan>

#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#endif

namespace dm = dlpack_mdspan;

int main() {
  if (dm::usm_root_device_count() == 0) {
    std::puts("no SYCL device");
    return 1;
  }
  // A queue on root device 0 in its platform's default context: memory dpctl can export.
  DPCTLDeviceVectorRef devices = DPCTLDeviceMgr_GetDevices(static_cast<int>(DPCTL_ALL_BACKENDS) | static_cast<int>(DPCTL_ALL));
  DPCTLSyclDeviceRef device = DPCTLDeviceVector_GetAt(devices, 0);
  DPCTLSyclPlatformRef platform = DPCTLDevice_GetPlatform(device);
  DPCTLSyclContextRef context = DPCTLPlatform_GetDefaultContext(platform);
  DPCTLSyclQueueRef queue = DPCTLQueue_Create(context, device, nullptr, 0);

  auto* shared = reinterpret_cast<float*>(DPCTLmalloc_shared(6 * sizeof(float), queue));
  if (shared == nullptr) {
    std::fprintf(stderr, "DPCTLmalloc_shared failed\n");
    return 1;
  }
  for (int i = 0; i < 6; ++i) shared[i] = static_cast<float>(i);  // shared USM: the host may write it

  // Export: the device comes from the SYCL runtime, whatever the view's accessor says.
  const std::mdspan<float, std::dextents<int, 2>> m(shared, 2, 3);
  const auto exported = dm::to_dlpack_tensor_on_usm_device(m);
  std::printf("exported: device (%s, %d)\n", dm::device_type_name(exported.device().device_type),
              static_cast<int>(exported.device().device_id));

  // Import as a USM view (for a kernel) and as a host view (shared USM is host-readable).
  const auto usm = dm::to_mdspan_on_usm_device<dm::usm_mdspan<float, std::dextents<int, 2>>>(exported.get());
  const auto host = dm::to_host_mdspan_from_usm<std::mdspan<const float, std::dextents<int, 2>>>(exported.get());
  std::printf("usm view on device %d, host view reads [1, 2] = %g, same memory: %s\n",
              static_cast<int>(usm.accessor().device_id), static_cast<double>(host[1, 2]),
              host.data_handle() == shared ? "yes" : "no");

  // Device USM is not host memory in SYCL: a host view is refused with a reason.
  auto* on_device = reinterpret_cast<float*>(DPCTLmalloc_device(6 * sizeof(float), queue));
  if (on_device == nullptr) {
    std::fprintf(stderr, "DPCTLmalloc_device failed\n");
    DPCTLfree_with_queue(reinterpret_cast<DPCTLSyclUSMRef>(shared), queue);
    return 1;
  }
  DLTensor t = exported.get();
  t.data = on_device;
  const auto refused = dm::try_to_host_mdspan_from_usm<std::mdspan<const float, std::dextents<int, 2>>>(t);
  std::printf("host view of device USM: %s\n", refused ? "accepted" : refused.error().what().c_str());

  DPCTLfree_with_queue(reinterpret_cast<DPCTLSyclUSMRef>(on_device), queue);
  DPCTLfree_with_queue(reinterpret_cast<DPCTLSyclUSMRef>(shared), queue);
  DPCTLQueue_Delete(queue);
  DPCTLContext_Delete(context);
  DPCTLPlatform_Delete(platform);
  DPCTLDevice_Delete(device);
  DPCTLDeviceVector_Delete(devices);
  return refused ? 1 : 0;
}
