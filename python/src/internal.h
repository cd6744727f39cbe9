/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Shared by the Python component's sources only. */
#ifndef DLPM_PY_INTERNAL_H
#define DLPM_PY_INTERNAL_H

#include <dlpack_mdspan_python.h>

/* Py_LIMITED_API below 3.12 has no vectorcall: the component then calls through
 * PyObject_Call (one build for several Python versions, a little slower per call). */
#if !defined(Py_LIMITED_API) || Py_LIMITED_API + 0 >= 0x030C0000
#define DLPM_PY_VECTORCALL 1
#else
#define DLPM_PY_VECTORCALL 0
#endif

/* Interned names and constant arguments, made once (under the GIL). */
typedef struct dlpm_py_names {
  PyObject* dlpack;             /* "__dlpack__" */
  PyObject* dlpack_device;      /* "__dlpack_device__" */
  PyObject* exchange_capsule;   /* "__dlpack_c_exchange_api__" */
  PyObject* exchange_integer;   /* "__c_dlpack_exchange_api__" */
  PyObject* max_version;        /* "max_version" */
  PyObject* dl_device;          /* "dl_device" */
  PyObject* copy;               /* "copy" */
  PyObject* stream;             /* "stream" */
  PyObject* our_max_version;    /* (1, DLPACK_MINOR_VERSION) */
  PyObject* kwnames_max_version; /* ("max_version",) */
} dlpm_py_names;

/* The names, or NULL with an exception set. */
const dlpm_py_names* dlpm_py__names(void);

/* Sets `kind` with the facade's message for `status`; returns NULL. */
PyObject* dlpm_py__raise_as(PyObject* kind, dlpm_status status);

/* Sets `kind` with a message of our own and returns `status`. */
dlpm_status dlpm_py__fail(PyObject* kind, dlpm_status status, const char* format, ...);

/* Keeps an exception the producer set (or sets BufferError) and returns DLPM_E_PRODUCER_FAILED. */
dlpm_status dlpm_py__producer_failed(const char* what);

/* A zero-copy export of a dlpack_mdspan.Tensor (a new managed tensor over the same memory
 * that keeps the object alive). 0, or -1 with an exception set. */
int dlpm_py__tensor_export(PyObject* self, DLManagedTensorVersioned** out);

/* Takes the tensor out of a DLPack capsule (capsule.c): renamed "used_..." first, then
 * version-checked; legacy tensors become versioned (READ_ONLY unless o->legacy_writable).
 * `not_dlpack` is the exception for an object that is not a DLPack capsule. */
dlpm_status dlpm_py__take_capsule(PyObject* capsule, const dlpm_py_options* o, PyObject* not_dlpack,
                                  DLManagedTensorVersioned** out);

#endif
