/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The export direction (a tensor -> a Python object), internal to the component: tensor.c
 * (dlpack_mdspan.Tensor and the exchange-API defaults) calls capsule.c (through the public
 * dlpm_py_capsule_new and dlpm_py_publish_exchange_api, and dlpm_py__publish_on_type) and
 * host_allocator.c; none calls back. */
#ifndef DLPM_PY_EXPORT_H
#define DLPM_PY_EXPORT_H

#include "shared/shared.h"

/* host_allocator.c: DLPack's managed_tensor_allocator for kDLCPU prototypes: new compact
 * row-major host memory shaped like `prototype` (dlpm_managed_alloc_host). Other devices,
 * and failures, are reported through SetError, as DLPack asks. */
int dlpm_py__host_allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
                            void (*SetError)(void* error_ctx, const char* kind, const char* message));

/* capsule.c: publishes `pointer`, which lives for the process, on `type` as the attribute
 * `attribute` (an interned name of dlpm_py__names), in a capsule named `capsule_name` with no
 * destructor: the exchange table, and a Tensor type's kept checked form. 0, or -1 with an
 * exception set. */
int dlpm_py__publish_on_type(PyObject* type, PyObject* attribute, void* pointer, const char* capsule_name);

#endif
