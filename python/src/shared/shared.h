/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* What the Python component's two directions share (names.c, errors.c); neither
 * direction's files include the other's header. Internal to the component.
 *
 *   shared/  names and errors, for both directions (calls only the facade); device_runtime.c,
 *            the CUDA driver (cuda_driver.c) and the HIP runtime (hip_runtime.c) loaded on
 *            first need (calls the facade and the runtime)
 *   import/  a Python object -> a tensor: capsule taking, __dlpack__ calls, the exchange API
 *            found and used, borrowing (calls shared/ and the facade)
 *   export/  a tensor -> a Python object: dlpack_mdspan.Tensor with its exchange-API
 *            defaults, the host allocator, capsule making (calls shared/ and the facade)
 *   tensor_import.c  dlpm_py_tensor_import: the one file that calls both directions, through
 *            the two entries declared below (dlpm_py__import_ready, dlpm_py__tensor_new_ready)
 *   The import asks the export one question, declared below too: the check a Tensor made of
 *   what it exports (dlpm_py__tensor_checked), so that its exports are not validated again. */
#ifndef DLPM_PY_SHARED_H
#define DLPM_PY_SHARED_H

#include <dlpack_mdspan_python.h>

#include "shared/compat.h"

/* Interned names and constant arguments, made once (under the GIL). */
typedef struct dlpm_py_names {
  PyObject* dlpack;             /* "__dlpack__" */
  PyObject* dlpack_device;      /* "__dlpack_device__" */
  PyObject* dlpack_data_type;   /* "__dlpack_data_type__" */
  PyObject* exchange_capsule;   /* "__dlpack_c_exchange_api__" */
  PyObject* exchange_integer;   /* "__c_dlpack_exchange_api__" */
  PyObject* max_version;        /* "max_version" */
  PyObject* dl_device;          /* "dl_device" */
  PyObject* copy;               /* "copy" */
  PyObject* stream;             /* "stream" */
  PyObject* our_max_version;    /* (1, DLPACK_MINOR_VERSION) */
  PyObject* kwnames_max_version; /* ("max_version",) */
  PyObject* kept_form;          /* DLPM_PY_KEPT_FORM_ATTRIBUTE */
} dlpm_py_names;

/* The names, or NULL with an exception set. */
const dlpm_py_names* dlpm_py__names(void);

/* The DLPack capsule names this copy gives its capsules and compares a producer's with
 * (names.c), one page-aligned object: every import and every capsule's death compares two
 * such names with strcmp (PyCapsule_GetPointer, PyCapsule_IsValid), one of them ours and the
 * other the producer's or the consumer's literal, and glibc's AVX2 strcmp takes a slower path
 * (about 60 instructions more) when the two strings' offsets in their pages, OR-ed, exceed
 * 4096 - 128. At a page's start (offsets 0 to 96) ours add only bits below 128 to the
 * other string's offset, which cross that limit only where the other string lies in its
 * page's last 256 bytes, wherever the linker put the rest of this copy (measured: a literal
 * of ours whose offset crossed it with NumPy's cost a pybind11 caster's import of a NumPy
 * array 64 instructions). */
typedef struct dlpm_py_capsule_names {
  char versioned[32];      /* "dltensor_versioned" */
  char used_versioned[32]; /* "used_dltensor_versioned": a taken capsule's */
  char legacy[32];         /* "dltensor" */
  char used_legacy[32];    /* "used_dltensor" */
} dlpm_py_capsule_names;
extern const dlpm_py_capsule_names dlpm_py__capsule_names;

/* Sets `kind` with the facade's message for `status`; returns NULL. */
PyObject* dlpm_py__raise_as(PyObject* kind, dlpm_status status);

/* After dlpm_check or dlpm_check_managed refused `t` with `status`: dlpm_py_raise's
 * exception, except that a tensor whose structure is malformed (dlpm_validate refuses it)
 * is BufferError even where the status is a requirement's (a negative device_id is
 * device_id_mismatch to the core): TypeError is kept for a valid tensor that does not fit
 * (docs/errors.md). Returns NULL. */
PyObject* dlpm_py__raise_refused(const DLTensor* t, dlpm_status status);

/* Sets `kind` with a message of our own and returns `status`. */
dlpm_status dlpm_py__fail(PyObject* kind, dlpm_status status, const char* format, ...);

/* The exception type `name`, a subclass of `first` and `second`, made once into *type (a
 * static of the caller's): a new reference, or NULL with an exception set. Where two peers
 * raise different built-in types for one refusal and their suites assert each. */
PyObject* dlpm_py__two_base_error(PyObject** type, const char* name, const char* doc, PyObject* first, PyObject* second);

/* dlpack_mdspan.CopyForbiddenError (BufferError and ValueError): __dlpack__'s refusal of a
 * copy=False that only a copy could honour. A new reference, or NULL with an exception set. */
PyObject* dlpm_py__copy_forbidden_error(void);

/* The exception in flight, set aside while code runs that may run Python code and touch the
 * exception state (a producer's deleter, a release hook, a context manager's __exit__):
 * dlpm_py__exception_put_back makes it the one set again, dropping whatever was raised
 * meanwhile (nothing was in flight: none is left set). */
typedef struct dlpm_py_set_aside {
#if DLPM_PY_RAISED_EXCEPTION
  PyObject* exception;
#else
  PyObject *type, *value, *traceback;
#endif
} dlpm_py_set_aside;

static inline dlpm_py_set_aside dlpm_py__exception_set_aside(void) {
  dlpm_py_set_aside kept;
#if DLPM_PY_RAISED_EXCEPTION
  kept.exception = PyErr_GetRaisedException();
#else
  PyErr_Fetch(&kept.type, &kept.value, &kept.traceback);
#endif
  return kept;
}

static inline void dlpm_py__exception_put_back(dlpm_py_set_aside kept) {
#if DLPM_PY_RAISED_EXCEPTION
  PyErr_SetRaisedException(kept.exception); /* replaces (or, NULL, clears) what was raised meanwhile */
#else
  PyErr_Restore(kept.type, kept.value, kept.traceback);
#endif
}

/* After a producer's answer that failed, where the import can go on without it: the
 * Exception is cleared (0), but one that is no Exception (KeyboardInterrupt, SystemExit: the
 * user's, not the producer's) stays set (-1). */
static inline int dlpm_py__clear_unless_interrupt(void) {
  if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return -1;
  PyErr_Clear();
  return 0;
}

/* Py_XDECREF(obj) on a failure path, the exception in flight kept: a producer's capsule may
 * have a destructor that runs Python code (a ctypes callback, Warp's), which must neither see
 * that exception nor leave one of its own. */
static inline void dlpm_py__drop_keeping_error(PyObject* obj) {
  dlpm_py_set_aside kept;
  if (obj == NULL) return;
  kept = dlpm_py__exception_set_aside();
  Py_DECREF(obj);
  dlpm_py__exception_put_back(kept);
}


/* What an import that captures stream order (dlpm_py_tensor_import) learnt of a CUDA or ROCm
 * tensor: an event of the pool (device_runtime.h) recorded when the producer's data is ready,
 * on `device`; event NULL when there is nothing to wait for (a CPU tensor, a bare capsule,
 * stream=-1). */
typedef struct dlpm_py_ready {
  void* event;
  DLDevice device;
} dlpm_py_ready;

/* Whether memory of `device_type` is ordered by streams: every device but the CPU and the
 * pinned host memory of CUDA and ROCm (what a consumer's stream waits for, and what an import
 * reports a ready stream for). */
static inline int dlpm_py__device_has_streams(int32_t device_type) {
  return device_type != kDLCPU && device_type != kDLCUDAHost && device_type != kDLROCMHost;
}

/* The status of a failed device-runtime call (device_runtime.h; BufferError set). */
#define DLPM_PY_E_DEVICE_RUNTIME DLPM_E_DEVICE_MISMATCH

/* import/import.c: a copy of `from` (a usable struct: its version 1 to DLPM_PY_OPTIONS_VERSION)
 * into *to, reading only the bytes of from's version: the fields a later version appended
 * take their defaults, and to->version stays from's. */
void dlpm_py__options_copy(dlpm_py_options* to, const dlpm_py_options* from);

/* import/import.c: dlpm_py_import that also captures the readiness of a device tensor in
 * *ready (zeroed first; on failure no event is kept). */
dlpm_status dlpm_py__import_ready(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                                  DLManagedTensorVersioned** out, dlpm_py_ready* ready);

/* export/tensor.c: dlpm_py_tensor_new that takes over `ready`'s event: every zero-copy export
 * of the Tensor makes the consumer's stream wait on it, and copies are ordered after it. On
 * failure t is deleted and the event released. */
PyObject* dlpm_py__tensor_new_ready(DLManagedTensorVersioned* t, dlpm_py_ready ready);

/* export/tensor.c: what the structural check of a dlpack_mdspan.Tensor learned when it was
 * made, of the view every zero-copy export of it describes (unchanged for its lifetime: the
 * Tensor has no setter), for dlpm_check_prechecked; NULL when obj is no Tensor. Sets no
 * exception. */
const dlpm_checked_tensor* dlpm_py__tensor_checked(PyObject* obj);

/* The requirements a Tensor's own view last met, with the flags it was checked with
 * (import/requirements_met.h keeps and compares them); zeroed (valid 0) when the Tensor is
 * made. */
#define DLPM_PY_MET_DEVICE_TYPES 4
typedef struct dlpm_py_met {
  int valid;
  uint64_t flags;
  dlpm_requirements req;                            /* device_types: NULL, or device_types below */
  int32_t device_types[DLPM_PY_MET_DEVICE_TYPES]; /* req.num_device_types of them */
} dlpm_py_met;

/* export/tensor.c: obj's dlpm_py_met; obj is a Tensor of this copy (dlpm_py__own_export_source
 * gave its form). */
dlpm_py_met* dlpm_py__tensor_met(PyObject* obj);

/* export/tensor.c: this copy's dlpack_mdspan.Tensor type, or NULL before its first use (no
 * reference: it lives for the process). An object whose type is this one is this copy's
 * Tensor: dlpm_py_import tells it from every other argument by this one compare. */
extern PyObject* dlpm_py__tensor_type_object;

/* export/tensor.c: the checked form dlpm_py__tensor_export makes obj's export from, when
 * `api` (the table obj's type publishes, as the import found it) is dlpack_mdspan.Tensor's own
 * and obj a Tensor carrying one, whose export asks no producer's wait (a borrow reads its view
 * in place, without the table that would ask it); else NULL (the import calls `api` and
 * checks what it made). Sets no exception. */
const dlpm_checked_tensor* dlpm_py__own_export_source(PyObject* obj, const DLPackExchangeAPI* api);

/* export/tensor.c: the zero-copy export of the Tensor `obj` that its table's
 * managed_tensor_from_py_object_no_sync makes (the same function, called without the table):
 * 0, or -1 with an exception set. Made from dlpm_py__own_export_source's form by
 * dlpm_managed_new_checked, so its shape pointer is that form's tensor's exactly when it
 * describes that tensor with its very arrays (the facade's promise). */
int dlpm_py__tensor_export(PyObject* obj, DLManagedTensorVersioned** out);

/* The kept checked form across copies of the component (docs/python-interop.md, "A Tensor of
 * another copy"): each copy's Tensor type publishes, as the type attribute
 * DLPM_PY_KEPT_FORM_ATTRIBUTE, a capsule named exactly DLPM_PY_KEPT_FORM_CAPSULE holding a
 * process-lifetime dlpm_py_kept_form. Another copy (exchange_api.c) trusts it only when
 * `version` and `size` are this layout's, `type` is the very type it was found on (a
 * subclass, or a class that copied the attribute, is another type) and `checked_version` is
 * the facade's DLPM_CHECKED_TENSOR_VERSION; then checked_of(obj), for an object of exactly
 * that type, is the form that Tensor's check learned, which a borrow compares against the
 * description it is lent (dlpm_check_prechecked: a description that differs is checked in
 * full). A new layout or meaning takes a new capsule name. */
#define DLPM_PY_KEPT_FORM_ATTRIBUTE "__dlpack_mdspan_kept_checked_form__"
#define DLPM_PY_KEPT_FORM_CAPSULE "dlpack_mdspan.kept_checked_form.v1"
#define DLPM_PY_KEPT_FORM_VERSION 1
typedef struct dlpm_py_kept_form {
  uint32_t version;         /* DLPM_PY_KEPT_FORM_VERSION */
  uint32_t size;            /* sizeof(dlpm_py_kept_form) */
  PyObject* type;           /* the type whose exact instances it describes (not a reference: the type lives
                               for the process, and the consumer's type cache holds one) */
  uint32_t checked_version; /* the dlpm_checked_tensor layout kept: DLPM_CHECKED_TENSOR_VERSION */
  uint32_t reserved;        /* 0 */
  /* obj (of exactly `type`, the GIL held): its kept form, or NULL (none: check in full). Sets no
   * exception. */
  const dlpm_checked_tensor* (*checked_of)(PyObject* obj);
} dlpm_py_kept_form;

/* import/protocol.c: (device_type, device_id) from obj.__dlpack_device__(), each field
 * range-checked into DLDevice's (a malformed answer is BufferError, a raising one keeps its
 * exception): DLPM_OK, or the status with an exception set. */
dlpm_status dlpm_py__query_device(PyObject* obj, const dlpm_py_names* nm, DLDevice* out);

/* Keeps an exception the producer set (or sets BufferError) and returns DLPM_E_PRODUCER_FAILED. */
dlpm_status dlpm_py__producer_failed(const char* what);

#endif
