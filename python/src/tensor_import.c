/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpm_py_tensor_import: an import re-exported as a dlpack_mdspan.Tensor, the one place that
 * joins the two directions (import/ captures when a CUDA or ROCm producer's data is ready,
 * export/ makes every consumer wait for it), and the copies from_dlpack(copy=True,
 * device=...) makes of CUDA and ROCm memory through their runtime (shared/device_runtime.h). */
#include "shared/device_runtime.h"

/* The device obj's tensor is on, without taking it: a capsule's own, or __dlpack_device__().
 * 0, or -1 with an exception set. */
static int source_device(PyObject* obj, const dlpm_py_options* o, DLDevice* out) {
  const dlpm_py_names* nm;
  if (PyCapsule_CheckExact(obj)) {
    DLTensor view;
    uint64_t flags;
    if (!dlpm_py_capsule_peek(obj, o, &view, &flags)) {
      out->device_type = kDLCPU; /* the import says what is wrong with it */
      out->device_id = 0;
      return 0;
    }
    *out = view.device;
    return 0;
  }
  if ((nm = dlpm_py__names()) == NULL) return -1;
  return dlpm_py__query_device(obj, nm, out) == DLPM_OK ? 0 : -1;
}

/* A copy asked of from_dlpack, made here: of CUDA or ROCm memory, or to it, the tensor
 * imported as it is (its readiness captured), copied by the runtime after that, on the
 * library's stream of the device that holds the work, and complete when this returns; of
 * host memory to the host (copy=True), by the facade (dlpm_managed_copy_to_host), so that
 * a producer that predates DLPack 1.0, or ignores copy=True, still gives a copy, as the
 * array API asks. The source is let go at once. */
static PyObject* import_copy(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts, DLDevice target) {
  dlpm_py_options o;
  DLManagedTensorVersioned *t = NULL, *copy = NULL;
  dlpm_py_ready ready;
  void* library;
  DLDevice on;
  dlpm_status s;
  dlpm_py__options_copy(&o, opts);
  o.copy = -1;
  o.has_dl_device = 0;
  if (dlpm_py__import_ready(obj, NULL, &o, &t, &ready) != DLPM_OK) return NULL;
  if (t->dl_tensor.device.device_type == kDLCPU && target.device_type == kDLCPU) {
    if ((s = dlpm_managed_copy_to_host(t, &copy)) != DLPM_OK) {
      dlpm_py__raise_as(PyExc_BufferError, s);
      copy = NULL;
    }
  } else {
    on = dlpm_py__copy_device(t->dl_tensor.device, target);
    if (dlpm_py__library_stream(on, &library) != 0 ||
        dlpm_py__device_copy(t, target, on, library, ready.event, 1, &copy) != 0)
      copy = NULL;
  }
  dlpm_py__event_release(ready.device, ready.event);
  dlpm_py_managed_delete(t); /* the producer's deleter (maybe Python code) must not meet a failed copy's exception */
  if (copy == NULL) return NULL;
  if (req != NULL && (s = dlpm_check_managed(copy, req)) != DLPM_OK) {
    dlpm_managed_delete(copy);
    return dlpm_py_raise(s);
  }
  return dlpm_py_tensor_new(copy);
}

PyObject* dlpm_py_tensor_import(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts) DLPM_NOEXCEPT {
  DLManagedTensorVersioned* t = NULL;
  dlpm_py_ready ready;
  if (obj != NULL && opts != NULL && opts->version >= 1 && opts->version <= DLPM_PY_OPTIONS_VERSION && opts->copy != 0 &&
      (opts->copy == 1 || opts->has_dl_device)) {
    DLDevice source, target;
    if (source_device(obj, opts, &source) != 0) return NULL;
    target = opts->has_dl_device ? opts->dl_device : source;
    if (dlpm_py__runtime_copies(source, target) &&
        (opts->copy == 1 || source.device_type != target.device_type || source.device_id != target.device_id))
      return import_copy(obj, req, opts, target);
    if (opts->copy == 1 && source.device_type == kDLCPU && target.device_type == kDLCPU && source.device_id == 0 &&
        target.device_id == 0) /* (kDLCPU, 1) names no device: the import refuses it */
      return import_copy(obj, req, opts, target);
  }
  if (dlpm_py__import_ready(obj, req, opts, &t, &ready) != DLPM_OK) return NULL;
  return dlpm_py__tensor_new_ready(t, ready);
}
