/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The import direction (a Python object -> a tensor), internal to the component: import.c
 * (the entry points) calls protocol.c, capsule.c and exchange_api.c (dlpm_py_exchange_api_of);
 * protocol.c calls capsule.c; none calls back. */
#ifndef DLPM_PY_IMPORT_H
#define DLPM_PY_IMPORT_H

#include "shared/shared.h"

/* PyErr_GetRaisedException and PyErr_SetRaisedException (3.12), else PyErr_Fetch and
 * PyErr_Restore. */
#if (defined(Py_LIMITED_API) ? Py_LIMITED_API + 0 : PY_VERSION_HEX) >= 0x030C0000
#define DLPM_PY_RAISED_EXCEPTION 1
#else
#define DLPM_PY_RAISED_EXCEPTION 0
#endif

/* capsule.c: takes the tensor out of a DLPack capsule: renamed "used_..." first, then
 * version-checked; legacy tensors become versioned (READ_ONLY unless o->legacy_writable).
 * `not_dlpack` is the exception for an object that is not a DLPack capsule. */
dlpm_status dlpm_py__take_capsule(PyObject* capsule, const dlpm_py_options* o, PyObject* not_dlpack,
                                  DLManagedTensorVersioned** out);

/* protocol.c: obj.__dlpack__(...) with the keywords `o` asks for -> the tensor. *pre_1_0 is
 * set when the producer refused the DLPack 1.0 keywords (TypeError) and was asked again
 * without them. */
dlpm_status dlpm_py__take_through_protocol(PyObject* obj, const dlpm_py_options* o, DLManagedTensorVersioned** out,
                                          int* pre_1_0);

#endif
