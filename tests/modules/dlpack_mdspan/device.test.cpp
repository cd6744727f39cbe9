// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// device.hpp: device type names, which memory the host may read, which pointers are
// addresses, where DLPack fixes device_id at 0.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

#include <string_view>

namespace dm = dlpack_mdspan;

TEST_CASE("is_host_accessible says yes to host, pinned and managed memory only, for every int32 probed") {
  for (std::int32_t type = -70000; type <= 70000; ++type) {
    const bool host = type == kDLCPU || type == kDLCUDAHost || type == kDLCUDAManaged || type == kDLROCMHost;
    REQUIRE(dm::is_host_accessible(type) == host);
    // DLPack fixes device_id at 0 for exactly the same memory.
    REQUIRE(dm::device_id_is_always_zero(type) == host);
  }
  CHECK_FALSE(dm::is_host_accessible(INT32_MIN));
  CHECK_FALSE(dm::is_host_accessible(INT32_MAX));
}

TEST_CASE("is_direct_address_device: handles for OpenCL, Vulkan, Metal and WebGPU, addresses elsewhere") {
  for (std::int32_t type = -64; type <= 64; ++type) {
    const bool handle = type == kDLOpenCL || type == kDLVulkan || type == kDLMetal || type == kDLWebGPU;
    REQUIRE(dm::is_direct_address_device(type) == !handle);
  }
}

TEST_CASE("device_type_name spells dlpack.h's names, and unknown otherwise") {
  CHECK(std::string_view(dm::device_type_name(kDLCPU)) == "kDLCPU");
  CHECK(std::string_view(dm::device_type_name(kDLCUDAManaged)) == "kDLCUDAManaged");
  CHECK(std::string_view(dm::device_type_name(kDLOneAPI)) == "kDLOneAPI");
  CHECK(std::string_view(dm::device_type_name(-1)) == "unknown");
  CHECK(std::string_view(dm::device_type_name(99)) == "unknown");
  for (std::int32_t type = -8; type < 64; ++type) REQUIRE(dm::device_type_name(type) != nullptr);
}
