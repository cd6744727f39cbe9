/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The host allocator of the exchange tables this component builds (a DLPack
 * managed_tensor_allocator): the facade's compact, 64-byte aligned host memory. */
#include "export/export.h"

int dlpm_py__host_allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
                            void (*SetError)(void* error_ctx, const char* kind, const char* message)) {
  dlpm_status s;
  if (prototype == NULL || out == NULL) {
    SetError(error_ctx, "ValueError", "managed_tensor_allocator: prototype or out is NULL");
    return -1;
  }
  if (prototype->device.device_type != kDLCPU) {
    SetError(error_ctx, "BufferError", "managed_tensor_allocator: this producer allocates host (kDLCPU) memory only");
    return -1;
  }
  if ((s = dlpm_managed_alloc_host(prototype->ndim, prototype->shape, prototype->dtype, 0, out)) != DLPM_OK) {
    SetError(error_ctx, s == DLPM_E_OUT_OF_MEMORY ? "MemoryError" : "ValueError", dlpm_last_error());
    return -1;
  }
  return 0;
}
