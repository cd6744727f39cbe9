/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* DLPack 1.3's exchange API: finding the table a type publishes, and building one. */
#include "internal.h"

#include <string.h>

/* ---- finding a type's table ----------------------------------------------------------------- */

/* Types seen lately and their table (NULL: none). Each entry holds a reference to its type,
 * so a freed type's address can never come back as a different type with a stale answer. */
#define DLPM_PY_TYPE_CACHE 16
static struct {
  PyObject* type;
  const DLPackExchangeAPI* api;
} type_cache[DLPM_PY_TYPE_CACHE];
static unsigned cache_next; /* round-robin victim */
static unsigned cache_last; /* the slot that answered last */

/* A table this library can call: our major version (walking prev_api for one) and the
 * entries DLPack says are never NULL. */
static const DLPackExchangeAPI* compatible(const DLPackExchangeAPI* api) {
  const DLPackExchangeAPIHeader* h = api ? &api->header : NULL;
  while (h != NULL && h->version.major != DLPACK_MAJOR_VERSION) h = h->prev_api;
  api = (const DLPackExchangeAPI*)h; /* the header is the table's first member */
  if (api == NULL || api->managed_tensor_from_py_object_no_sync == NULL || api->managed_tensor_to_py_object_no_sync == NULL ||
      api->managed_tensor_allocator == NULL || api->current_work_stream == NULL)
    return NULL;
  return api;
}

/* The table obj's type publishes, looked up on the type (never the instance). */
static const DLPackExchangeAPI* look_up(PyObject* type, const dlpm_py_names* nm) {
  const DLPackExchangeAPI* api = NULL;
  PyObject* attr = PyObject_GetAttr(type, nm->exchange_capsule);
  if (attr != NULL) {
    if (PyCapsule_IsValid(attr, "dlpack_exchange_api"))
      api = (const DLPackExchangeAPI*)PyCapsule_GetPointer(attr, "dlpack_exchange_api");
  } else {
    PyErr_Clear();
    attr = PyObject_GetAttr(type, nm->exchange_integer); /* earlier drafts: the address as an int */
    if (attr != NULL && PyLong_Check(attr)) api = (const DLPackExchangeAPI*)PyLong_AsVoidPtr(attr);
  }
  Py_XDECREF(attr);
  PyErr_Clear(); /* "none" is not an error */
  return compatible(api);
}

const DLPackExchangeAPI* dlpm_py_exchange_api_of(PyObject* obj) DLPM_NOEXCEPT {
  PyObject* type;
  const dlpm_py_names* nm;
  const DLPackExchangeAPI* api;
  unsigned slot;
  if (obj == NULL) return NULL;
  type = (PyObject*)Py_TYPE(obj);
  if (type_cache[cache_last].type == type) return type_cache[cache_last].api; /* calls come in runs */
  for (unsigned i = 0; i < DLPM_PY_TYPE_CACHE; ++i)
    if (type_cache[i].type == type) {
      cache_last = i;
      return type_cache[i].api;
    }
  if ((nm = dlpm_py__names()) == NULL) {
    PyErr_Clear();
    return NULL;
  }
  api = look_up(type, nm);
  slot = cache_next++ % DLPM_PY_TYPE_CACHE;
  Py_XDECREF(type_cache[slot].type);
  Py_INCREF(type);
  type_cache[slot].type = type;
  type_cache[slot].api = api;
  cache_last = slot;
  return api;
}

dlpm_status dlpm_py_current_work_stream(PyObject* obj, DLDevice device, void** out_stream) DLPM_NOEXCEPT {
  const DLPackExchangeAPI* api;
  if (out_stream == NULL)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "dlpm_py_current_work_stream: out_stream is NULL");
  *out_stream = NULL;
  if (device.device_type == kDLCPU || (api = dlpm_py_exchange_api_of(obj)) == NULL) return DLPM_OK;
  if (api->current_work_stream(device.device_type, device.device_id, out_stream) != 0) {
    *out_stream = NULL;
    return dlpm_py__producer_failed("the exchange API's current_work_stream");
  }
  return DLPM_OK;
}

/* ---- building a table ------------------------------------------------------------------------ */

/* New compact row-major host memory shaped like the prototype (the facade's allocation,
 * 64-byte aligned). Failures go through SetError, as DLPack asks. */
static int host_allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
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

static int to_dlpack_mdspan_tensor(DLManagedTensorVersioned* tensor, void** out_py_object) {
  PyObject* obj = dlpm_py_tensor_new(tensor); /* owns the tensor, even on failure */
  if (obj == NULL) return -1;
  *out_py_object = obj;
  return 0;
}

static int no_stream(DLDeviceType device_type, int32_t device_id, void** out_current_stream) {
  (void)device_type;
  (void)device_id;
  *out_current_stream = NULL;
  return 0;
}

dlpm_status dlpm_py_exchange_api_init(DLPackExchangeAPI* table, const dlpm_py_exchange_callbacks* cb) DLPM_NOEXCEPT {
  if (table == NULL || cb == NULL)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "dlpm_py_exchange_api_init: %s is NULL",
                         table ? "callbacks" : "table");
  if (cb->version != DLPM_PY_EXCHANGE_CALLBACKS_VERSION)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_UNSUPPORTED_VERSION,
                         "dlpm_py_exchange_api_init: dlpm_py_exchange_callbacks version %u is not supported (this "
                         "library knows version %u)",
                         cb->version, (unsigned)DLPM_PY_EXCHANGE_CALLBACKS_VERSION);
  if (cb->managed_tensor_from_py_object == NULL)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER,
                         "dlpm_py_exchange_api_init: managed_tensor_from_py_object is required");
  memset(table, 0, sizeof *table);
  table->header.version.major = DLPACK_MAJOR_VERSION;
  table->header.version.minor = DLPACK_MINOR_VERSION;
  table->header.prev_api = NULL;
  table->managed_tensor_allocator = cb->managed_tensor_allocator ? cb->managed_tensor_allocator : host_allocator;
  table->managed_tensor_from_py_object_no_sync = cb->managed_tensor_from_py_object;
  table->managed_tensor_to_py_object_no_sync =
      cb->managed_tensor_to_py_object ? cb->managed_tensor_to_py_object : to_dlpack_mdspan_tensor;
  table->dltensor_from_py_object_no_sync = cb->dltensor_from_py_object;
  table->current_work_stream = cb->current_work_stream ? cb->current_work_stream : no_stream;
  return DLPM_OK;
}

int dlpm_py_publish_exchange_api(PyObject* type, const DLPackExchangeAPI* table) DLPM_NOEXCEPT {
  const dlpm_py_names* nm;
  PyObject* capsule;
  int rc;
  if (type == NULL || table == NULL || !PyType_Check(type)) {
    PyErr_SetString(PyExc_ValueError, "dlpm_py_publish_exchange_api: needs a type and a table");
    return -1;
  }
  if ((nm = dlpm_py__names()) == NULL) return -1;
  /* The table is process-lifetime (DLPack's rule), so the capsule has no destructor. */
  if ((capsule = PyCapsule_New((void*)table, "dlpack_exchange_api", NULL)) == NULL) return -1;
  rc = PyObject_SetAttr(type, nm->exchange_capsule, capsule);
  Py_DECREF(capsule);
  return rc;
}
