// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The named module `dlpack_mdspan`: the headers, compiled once.
//
// Every standard and DLPack header goes in the global module fragment, so that the
// #includes inside the library headers below are no-ops. The library headers are then
// included inside extern "C++": their entities attach to the global module, which is what
// lets one program mix TUs that import the module with TUs that include the headers.
module;

#include <dlpack/dlpack.h>

#include <array>
#include <atomic>
#include <cfloat>
#include <complex>
#include <concepts>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <expected>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#endif
#include <utility>
#include <version>
#include <variant>
#include <vector>
#if __has_include(<mdspan>)
#include <mdspan>
#endif

export module dlpack_mdspan;

#define DLPACK_MDSPAN_MODULE_BUILD 1

// Including in the purview is the point here (see above), so clang's warning about it
// does not apply.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winclude-angled-in-module-purview"
extern "C++" {
#include <dlpack_mdspan/dlpack_mdspan.hpp>
}
#pragma clang diagnostic pop

// DLPack's C types and enumerators, so importers need not include <dlpack/dlpack.h>.
// (Its macros, such as DLPACK_FLAG_BITMASK_READ_ONLY, cannot be exported: use the
// constants in dlpack_constants.hpp, or include <dlpack/dlpack.h> before the import.)
export {
  using ::DLPackVersion;
  using ::DLDeviceType;
  using ::DLDevice;
  using ::DLDataTypeCode;
  using ::DLDataType;
  using ::DLTensor;
  using ::DLManagedTensor;
  using ::DLManagedTensorVersioned;

  using ::kDLCPU;
  using ::kDLCUDA;
  using ::kDLCUDAHost;
  using ::kDLOpenCL;
  using ::kDLVulkan;
  using ::kDLMetal;
  using ::kDLVPI;
  using ::kDLROCM;
  using ::kDLROCMHost;
  using ::kDLExtDev;
  using ::kDLCUDAManaged;
  using ::kDLOneAPI;
  using ::kDLWebGPU;
  using ::kDLHexagon;
  using ::kDLMAIA;
  using ::kDLTrn;

  using ::kDLInt;
  using ::kDLUInt;
  using ::kDLFloat;
  using ::kDLOpaqueHandle;
  using ::kDLBfloat;
  using ::kDLComplex;
  using ::kDLBool;
  using ::kDLFloat8_e3m4;
  using ::kDLFloat8_e4m3;
  using ::kDLFloat8_e4m3b11fnuz;
  using ::kDLFloat8_e4m3fn;
  using ::kDLFloat8_e4m3fnuz;
  using ::kDLFloat8_e5m2;
  using ::kDLFloat8_e5m2fnuz;
  using ::kDLFloat8_e8m0fnu;
  using ::kDLFloat6_e2m3fn;
  using ::kDLFloat6_e3m2fn;
  using ::kDLFloat4_e2m1fn;
}
