/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpm_interop: a CPython extension that drives the shipped Python component
 * (dlpack_mdspan_python.h) from pytest. It writes no capsule code of its own.
 *
 *   tensor(shape, dtype=(2, 32, 1), *, order='C', readonly=False)
 *                       host memory from malloc as a dlpack_mdspan.Tensor (zero-filled)
 *   cpp_tensor(shape, dtype_name)
 *                       memory owned by a C++ std::vector (buffer.cpp), as a Tensor
 *   fill(t, data)       writes row-major element bytes into a dlpack_mdspan.Tensor
 *   consume(obj, ...)   dlpm_py_import / dlpm_py_borrow with the given requirements and
 *                       options (accept_semantic_bits and validate too); returns the elements' bytes in
 *                       row-major order and facts
 *   reexport(obj)       dlpm_py_tensor_import with the default options and no requirements:
 *                       obj's tensor as a dlpack_mdspan.Tensor, zero copy, stream order kept
 *   tensor_import(obj, copy=None, device=None)   the same with those options (from_dlpack's)
 *   device_capsule(address, shape, strides, bits, device_type, device_id), device_capsules_released()
 *                       a capsule over memory at an address on a device (a fake CUDA producer's)
 *   capsule(t, versioned)           dlpm_py_capsule_new over a new zero-filled tensor shaped
 *                                   like Tensor t (same dtype and flags, its own memory)
 *   exchange_api(obj)               (major, minor) of the table obj's type publishes, or None
 *   to_py_via(obj, t)               Tensor t's memory as an object of obj's type, through
 *                                   that type's managed_tensor_to_py_object_no_sync
 *   table_export(obj)               an export through obj's own table: does it share the
 *                                   view's shape and strides arrays? (and its capsule)
 *   allocate_via(obj, shape, dtype[, device]) a tensor from the allocator of obj's type's table
 *   publish_on(cls, how)            a newer (major 2) or integer-form table on a class
 *   publish_raising(cls, exc)       a table on a class whose two import entries raise exc (an
 *                                   exception instance), or, for None, fail without one
 *   publish_on_stream(cls, stream)  a table on a class whose instances lend their `inner`
 *                                   Tensor through our table's entries, and whose
 *                                   current_work_stream is `stream` (a producer with a stream of
 *                                   its own, as PyTorch's table is)
 *   device_tensor(type), stream_waits()  a Tensor on a device with streams, and its sync log
 *   hooked_tensor(type), hooks_released()  a Tensor with device hooks (dlpm_py_tensor_new_on_device)
 *   waiting_tensor(address, n, wait, device_type, hooks)  a Tensor over n float32 at a device
 *                                   address whose producer orders consumers through the Python
 *                                   callable wait(has_stream, stream) (dlpm_py_tensor_new_on_stream,
 *                                   or with hooks a wait hook alone: dlpm_py_tensor_new_on_device)
 *   traced(obj, version, borrow)    dlpm_py_options.provenance: how obj's tensor came
 *   ready_stream(obj, borrow=False, stream=None, exchange=True, validate=False)   its
 *                                   stream_order and ready_stream (provenance version 2):
 *                                   (order, stream or None)
 *   null_arguments()                the integer decoders' answers to a NULL argument
 *   borrow_kept(obj, writable, end) dlpm_py_options.keep_alive: the owner as an object
 *   released()                      how many tensor()/cpp_tensor() buffers were freed
 *   options(obj, bits, grad)        dlpm_py_options (version 1) against obj (a NumPy array),
 *                                   bits (an object with a semantic bit set, or None) and
 *                                   grad (a tensor whose producer forbids writes, or None)
 *   sum_f32_2d, fill_f64_1d, keep, kept_sum, Holder   the C++ half (typed.cpp)
 */
#include <dlpack_mdspan_python.h>

#include <stddef.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

DLManagedTensorVersioned* dlpm_test_buffer_new(int32_t ndim, const int64_t* shape, DLDataType dtype, void (*on_free)(void));
int dlpm_test_add_typed(PyObject* module); /* typed.cpp: dlpack_mdspan/python.hpp */

static atomic_long released_count;

static void count_release(void) { atomic_fetch_add(&released_count, 1); }

static void free_counted(void* memory) {
  free(memory);
  count_release();
}

/* ---- argument helpers ------------------------------------------------------------------ */

static int parse_shape(PyObject* obj, int64_t* shape, int32_t* ndim) {
  Py_ssize_t n;
  if (!PyTuple_Check(obj) || (n = PyTuple_Size(obj)) > 64) {
    PyErr_SetString(PyExc_ValueError, "shape must be a tuple of at most 64 extents");
    return -1;
  }
  for (Py_ssize_t r = 0; r < n; ++r) shape[r] = PyLong_AsLongLong(PyTuple_GetItem(obj, r));
  *ndim = (int32_t)n;
  return PyErr_Occurred() ? -1 : 0;
}

static int parse_dtype(PyObject* obj, DLDataType* out) {
  unsigned code, bits, lanes;
  if (!PyArg_ParseTuple(obj, "III", &code, &bits, &lanes)) return -1;
  out->code = (uint8_t)code;
  out->bits = (uint8_t)bits;
  out->lanes = (uint16_t)lanes;
  return 0;
}

static int parse_device(PyObject* obj, DLDevice* out) {
  int type, id;
  if (!PyArg_ParseTuple(obj, "ii", &type, &id)) return -1;
  out->device_type = (DLDeviceType)type;
  out->device_id = id;
  return 0;
}

/* Bytes of every element in row-major order (whole-byte dtypes). */
static PyObject* element_bytes(const DLTensor* t) {
  const size_t itemsize = (size_t)t->dtype.bits * t->dtype.lanes / 8;
  int64_t numel = 0, index[64] = {0}, offset = 0;
  PyObject* out;
  char* dst;
  if (((size_t)t->dtype.bits * t->dtype.lanes) % 8 != 0) Py_RETURN_NONE;
  dlpm_numel(t, &numel);
  if (!(out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(numel * (int64_t)itemsize)))) return NULL;
  dst = PyBytes_AsString(out);
  for (int64_t k = 0; k < numel; ++k, dst += itemsize) {
    if (dlpm_element_offset(t, index, &offset) != DLPM_OK) {
      Py_DECREF(out);
      return dlpm_py_raise(DLPM_E_INVALID_ARGUMENT);
    }
    memcpy(dst, (const char*)t->data + offset, itemsize);
    for (int32_t r = t->ndim - 1; r >= 0 && ++index[r] == t->shape[r]; --r) index[r] = 0;
  }
  return out;
}

/* Writes row-major element bytes into a (validated, host) tensor. */
static int write_bytes(const DLTensor* t, PyObject* data) {
  const size_t itemsize = (size_t)t->dtype.bits * t->dtype.lanes / 8;
  int64_t numel = 0, index[64] = {0}, offset = 0;
  const char* src;
  dlpm_numel(t, &numel);
  if (!PyBytes_Check(data) || (size_t)PyBytes_Size(data) != (size_t)numel * itemsize) {
    PyErr_SetString(PyExc_ValueError, "write needs bytes of exactly numel * itemsize");
    return -1;
  }
  src = PyBytes_AsString(data);
  for (int64_t k = 0; k < numel; ++k, src += itemsize) {
    if (dlpm_element_offset(t, index, &offset) != DLPM_OK) {
      dlpm_py_raise(DLPM_E_INVALID_ARGUMENT);
      return -1;
    }
    memcpy((char*)t->data + offset, src, itemsize);
    for (int32_t r = t->ndim - 1; r >= 0 && ++index[r] == t->shape[r]; --r) index[r] = 0;
  }
  return 0;
}

/* ---- producers ------------------------------------------------------------------------- */

static DLManagedTensorVersioned* host_tensor(int32_t ndim, const int64_t* shape, DLDataType dtype, char order,
                                             uint64_t flags) {
  int64_t strides[64], step = 1, numel = 1;
  size_t itemsize = ((size_t)dtype.bits * dtype.lanes + 7) / 8;
  DLManagedTensorVersioned* t = NULL;
  void* memory;
  dlpm_status s;
  for (int32_t k = 0; k < ndim; ++k) {
    const int32_t r = order == 'F' ? k : ndim - 1 - k;
    strides[r] = step;
    step *= shape[r] > 1 ? shape[r] : 1;
    numel *= shape[r];
  }
  if (!(memory = calloc(numel > 0 ? (size_t)numel : 1, itemsize))) {
    PyErr_NoMemory();
    return NULL;
  }
  s = dlpm_managed_new(memory, ndim, shape, strides, dtype, (DLDevice){kDLCPU, 0}, 0, flags, free_counted, memory, &t);
  if (s != DLPM_OK) {
    free(memory);
    dlpm_py_raise(s);
    return NULL;
  }
  return t;
}

static PyObject* tensor(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"shape", "dtype", "order", "readonly", NULL};
  PyObject *shape_obj, *dtype_obj = NULL;
  const char* order = "C";
  int readonly = 0;
  int64_t shape[64];
  int32_t ndim;
  DLDataType dtype = {kDLFloat, 32, 1};
  DLManagedTensorVersioned* t;
  (void)module;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O$sp", keywords, &shape_obj, &dtype_obj, &order, &readonly))
    return NULL;
  if (parse_shape(shape_obj, shape, &ndim) != 0 || (dtype_obj && parse_dtype(dtype_obj, &dtype) != 0)) return NULL;
  if (!(t = host_tensor(ndim, shape, dtype, order[0], readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0))) return NULL;
  return dlpm_py_tensor_new(t);
}

static PyObject* cpp_tensor(PyObject* module, PyObject* args) {
  static const struct { const char* name; uint8_t code, bits; } table[] = {
      {"float32", kDLFloat, 32}, {"float64", kDLFloat, 64}, {"int32", kDLInt, 32},
      {"int64", kDLInt, 64},     {"uint8", kDLUInt, 8},     {"bool", kDLBool, 8},
  };
  PyObject* shape_obj;
  const char* name;
  int64_t shape[64];
  int32_t ndim;
  DLManagedTensorVersioned* t = NULL;
  (void)module;
  if (!PyArg_ParseTuple(args, "Os", &shape_obj, &name) || parse_shape(shape_obj, shape, &ndim) != 0) return NULL;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (strcmp(name, table[i].name) == 0) t = dlpm_test_buffer_new(ndim, shape, (DLDataType){table[i].code, table[i].bits, 1}, count_release);
  if (!t) {
    PyErr_Format(PyExc_ValueError, "cpp_tensor: unsupported dtype '%s' or rank %d", name, (int)ndim);
    return NULL;
  }
  return dlpm_py_tensor_new(t);
}

static PyObject* fill(PyObject* module, PyObject* args) {
  PyObject *obj, *data;
  const DLManagedTensorVersioned* t;
  (void)module;
  if (!PyArg_ParseTuple(args, "OO", &obj, &data) || !(t = dlpm_py_tensor_get(obj))) return NULL;
  if (write_bytes(&t->dl_tensor, data) != 0) return NULL;
  Py_RETURN_NONE;
}

/* ---- the consumer ----------------------------------------------------------------------- */

static PyObject* consume(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"obj",  "dtype", "ndim",   "shape",    "order",  "writable", "legacy_writable",
                             "copy", "dl_device", "stream", "exchange", "borrow", "write", "accept_semantic_bits",
                             "semantic_bits_option", "options_version", "validate", "options", "device_types", NULL};
  PyObject *obj, *dtype_obj = Py_None, *shape_obj = Py_None, *copy = Py_None, *device_obj = Py_None, *device_types = Py_None,
                 *stream = Py_None, *write = Py_None, *bytes = NULL, *data_ptr = NULL, *shape_tuple = NULL, *strides = NULL, *result = NULL;
  int ndim = -1, writable = 0, legacy_writable = 0, exchange = 1, borrow = 0, accept_semantic_bits = 0, validate = 1;
  int with_options = 1; /* 0: NULL options (the usual call), the option keywords unused */
  unsigned options_version = DLPM_PY_OPTIONS_VERSION;
  const char *order = NULL, *semantic_bits_option = NULL;
  int64_t want_shape[64];
  int32_t want_ndim, want_devices[4]; /* on the stack: each call's at the same address */
  dlpm_requirements req;
  dlpm_py_options opts;
  dlpm_py_borrowed view;
  const DLTensor* t;
  (void)module;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OiOzppOOOppOpzIppO", keywords, &obj, &dtype_obj, &ndim, &shape_obj,
                                   &order, &writable, &legacy_writable, &copy, &device_obj, &stream, &exchange, &borrow,
                                   &write, &accept_semantic_bits, &semantic_bits_option, &options_version, &validate,
                                   &with_options, &device_types))
    return NULL;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  if (device_types != Py_None) { /* a tuple of at most 4 DLDeviceType values */
    if (!PyTuple_Check(device_types) || PyTuple_Size(device_types) > 4) {
      PyErr_SetString(PyExc_ValueError, "device_types must be a tuple of at most 4 device types");
      return NULL;
    }
    req.num_device_types = (int32_t)PyTuple_Size(device_types);
    for (int32_t i = 0; i < req.num_device_types; ++i) want_devices[i] = (int32_t)PyLong_AsLong(PyTuple_GetItem(device_types, i));
    if (PyErr_Occurred()) return NULL;
    req.device_types = want_devices;
  }
  /* options_version 1: a struct as an extension built against 0.2.0's header fills it (the
   * version-2 field is set below only for version 2) */
  if (dlpm_py_options_init(&opts, options_version) != DLPM_OK) return NULL;
  if (options_version >= 2) opts.semantic_bits_option = semantic_bits_option;
  req.ndim = ndim;
  req.writable = writable;
  if (dtype_obj != Py_None) {
    if (parse_dtype(dtype_obj, &req.dtype) != 0) return NULL;
    req.check_dtype = 1;
  }
  if (shape_obj != Py_None) {
    if (parse_shape(shape_obj, want_shape, &want_ndim) != 0) return NULL;
    req.shape = want_shape;
  }
  if (order) req.order = order[0];
  opts.legacy_writable = legacy_writable;
  opts.copy = copy == Py_None ? -1 : PyObject_IsTrue(copy);
  opts.use_exchange_api = exchange;
  opts.accept_semantic_bits = accept_semantic_bits;
  opts.validate = validate;
  if (device_obj != Py_None) {
    if (parse_device(device_obj, &opts.dl_device) != 0) return NULL;
    opts.has_dl_device = 1;
  }
  if (stream != Py_None) { /* an integer, or an object passed as it is (a dpctl.SyclQueue) */
    opts.has_stream = 1;
    if (PyLong_Check(stream)) {
      opts.stream = PyLong_AsLongLong(stream);
      if (PyErr_Occurred()) return NULL;
    } else {
      opts.stream_object = stream;
    }
  }
  if (borrow) {
    if (dlpm_py_borrow(obj, &req, with_options ? &opts : NULL, &view) != DLPM_OK) return NULL;
  } else {
    DLManagedTensorVersioned* owned;
    if (dlpm_py_import(obj, &req, with_options ? &opts : NULL, &owned) != DLPM_OK) return NULL;
    view.dl_tensor = owned->dl_tensor;
    view.flags = owned->flags;
    view.owner = owned;
    view.keep_alive = NULL;
  }
  /* From here the view is ours: every path ends in exactly one dlpm_py_borrow_end. */
  t = &view.dl_tensor;
  if (write != Py_None && write_bytes(t, write) != 0) goto done;
  if (!(bytes = element_bytes(t)) || !(shape_tuple = PyTuple_New(t->ndim)) || !(strides = t->strides ? PyTuple_New(t->ndim) : Py_NewRef(Py_None)))
    goto done;
  /* an empty tensor may have NULL data, where no offset may be added */
  if (!(data_ptr = PyLong_FromVoidPtr(t->data ? (char*)t->data + t->byte_offset : (void*)(uintptr_t)t->byte_offset)))
    goto done;
  for (int32_t r = 0; r < t->ndim; ++r) {
    PyTuple_SetItem(shape_tuple, r, PyLong_FromLongLong(t->shape[r]));
    if (t->strides) PyTuple_SetItem(strides, r, PyLong_FromLongLong(t->strides[r]));
  }
  result = Py_BuildValue("{s:O,s:O,s:O,s:O,s:O,s:O,s:(iii),s:(ii),s:K,s:O}", "bytes", bytes, "shape", shape_tuple, "strides",
                         strides, "read_only", (view.flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? Py_True : Py_False, "copied",
                         (view.flags & DLPACK_FLAG_BITMASK_IS_COPIED) ? Py_True : Py_False, "data_ptr",
                         data_ptr, "dtype", (int)t->dtype.code, (int)t->dtype.bits, (int)t->dtype.lanes, "device",
                         (int)t->device.device_type, (int)t->device.device_id, "byte_offset",
                         (unsigned long long)t->byte_offset, "borrowed", view.owner ? Py_False : Py_True);
done:
  Py_XDECREF(data_ptr);
  Py_XDECREF(bytes);
  Py_XDECREF(shape_tuple);
  Py_XDECREF(strides);
  dlpm_py_borrow_end(&view);
  return result;
}

/* What an extension that passes a tensor through does (dlpm_py_tensor_import, which keeps a
 * CUDA producer's stream order): the peers' own suites run with it standing in for every
 * producer (tests/python/peers). */
static PyObject* reexport(PyObject* module, PyObject* obj) {
  (void)module;
  return dlpm_py_tensor_import(obj, NULL, NULL);
}

/* tensor_import(obj, *, copy=None, device=None): dlpm_py_tensor_import with those options,
 * as dlpack_mdspan.from_dlpack calls it. */
static PyObject* tensor_import(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"", "copy", "device", NULL};
  PyObject *obj, *copy = Py_None, *device = Py_None;
  dlpm_py_options opts;
  (void)module;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OO:tensor_import", keywords, &obj, &copy, &device)) return NULL;
  if (dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION) != DLPM_OK) return NULL;
  if (copy != Py_None) opts.copy = PyObject_IsTrue(copy);
  if (device != Py_None) {
    int type, id;
    if (!PyArg_ParseTuple(device, "ii", &type, &id)) return NULL;
    opts.has_dl_device = 1;
    opts.dl_device = (DLDevice){(DLDeviceType)type, id};
  }
  return dlpm_py_tensor_import(obj, NULL, &opts);
}

/* device_capsule(address, shape, strides, dtype_bits, device_type, device_id): a versioned
 * capsule over memory at `address` (float elements of dtype_bits bits; strides in elements,
 * or None), on that device, owned by nobody: its deleter only counts
 * (device_capsules_released()). What a fake CUDA producer hands out over the stub driver's
 * "device" memory (tests/python/cuda_stub). */
static atomic_long device_capsules_released_count;

static void count_device_capsule(void* ctx) {
  (void)ctx;
  atomic_fetch_add(&device_capsules_released_count, 1);
}

static PyObject* device_capsule(PyObject* module, PyObject* args) {
  unsigned long long address;
  PyObject *shape_obj, *strides_obj;
  int bits, device_type, device_id;
  int64_t shape[8], strides[8];
  Py_ssize_t n;
  DLManagedTensorVersioned* t;
  dlpm_status s;
  (void)module;
  if (!PyArg_ParseTuple(args, "KOOiii", &address, &shape_obj, &strides_obj, &bits, &device_type, &device_id)) return NULL;
  if (!PyTuple_Check(shape_obj) || (n = PyTuple_Size(shape_obj)) > 8 ||
      (strides_obj != Py_None && (!PyTuple_Check(strides_obj) || PyTuple_Size(strides_obj) != n))) {
    PyErr_SetString(PyExc_TypeError, "shape and strides: tuples of up to 8 ints");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    shape[i] = PyLong_AsLongLong(PyTuple_GetItem(shape_obj, i));
    strides[i] = strides_obj == Py_None ? 0 : PyLong_AsLongLong(PyTuple_GetItem(strides_obj, i));
  }
  if (PyErr_Occurred()) return NULL;
  s = dlpm_managed_new((void*)(uintptr_t)address, (int32_t)n, shape, strides_obj == Py_None ? NULL : strides,
                       (DLDataType){kDLFloat, (uint8_t)bits, 1}, (DLDevice){(DLDeviceType)device_type, device_id}, 0, 0,
                       count_device_capsule, NULL, &t);
  if (s != DLPM_OK) return dlpm_py_raise(s);
  return dlpm_py_capsule_new(t, 1);
}

static PyObject* device_capsules_released(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  return PyLong_FromLong(atomic_load(&device_capsules_released_count));
}

/* ---- capsules and exchange tables --------------------------------------------------------- */

static PyObject* capsule(PyObject* module, PyObject* args) {
  PyObject* obj;
  int versioned;
  DLManagedTensorVersioned* t;
  const DLManagedTensorVersioned* base;
  (void)module;
  if (!PyArg_ParseTuple(args, "Op", &obj, &versioned) || !(base = dlpm_py_tensor_get(obj))) return NULL;
  if (!(t = host_tensor(base->dl_tensor.ndim, base->dl_tensor.shape, base->dl_tensor.dtype, 'C', base->flags))) return NULL;
  return dlpm_py_capsule_new(t, versioned);
}

static PyObject* exchange_api(PyObject* module, PyObject* obj) {
  const DLPackExchangeAPI* api = dlpm_py_exchange_api_of(obj);
  (void)module;
  if (!api) Py_RETURN_NONE;
  return Py_BuildValue("(II)", api->header.version.major, api->header.version.minor);
}

static const DLPackExchangeAPI* require_api(PyObject* obj) {
  const DLPackExchangeAPI* api = dlpm_py_exchange_api_of(obj);
  if (!api) PyErr_Format(PyExc_TypeError, "%R publishes no DLPack exchange API", (PyObject*)Py_TYPE(obj));
  return api;
}

static PyObject* to_py_via(PyObject* module, PyObject* args) {
  PyObject *like, *obj;
  const DLPackExchangeAPI *api, *ours;
  DLManagedTensorVersioned* t = NULL;
  void* out = NULL;
  (void)module;
  if (!PyArg_ParseTuple(args, "OO", &like, &obj) || !(api = require_api(like)) || !(ours = require_api(obj))) return NULL;
  /* An export of obj through its own table, handed to the other type's table, which takes it. */
  if (ours->managed_tensor_from_py_object_no_sync(obj, &t) != 0) return NULL;
  if (api->managed_tensor_to_py_object_no_sync(t, &out) != 0) return NULL;
  return (PyObject*)out;
}

/* table_export(obj): obj's export through its own table's managed_tensor_from_py_object_no_sync,
 * beside its view from dltensor_from_py_object_no_sync. A dict: shares (the export's shape and
 * strides are the view's very arrays), shape and strides (the export's), capsule (the export,
 * versioned: it alone keeps obj alive once the caller lets go). */
static PyObject* table_export(PyObject* module, PyObject* obj) {
  const DLPackExchangeAPI* api;
  DLManagedTensorVersioned* t = NULL;
  DLTensor view;
  PyObject *shape, *strides, *capsule;
  int shares;
  (void)module;
  if (!(api = require_api(obj)) || api->dltensor_from_py_object_no_sync(obj, &view) != 0 ||
      api->managed_tensor_from_py_object_no_sync(obj, &t) != 0)
    return NULL;
  shares = t->dl_tensor.ndim > 0 && t->dl_tensor.shape == view.shape && t->dl_tensor.strides == view.strides;
  shape = PyTuple_New(t->dl_tensor.ndim);
  strides = PyTuple_New(t->dl_tensor.ndim);
  for (int32_t r = 0; shape && strides && r < t->dl_tensor.ndim; ++r) {
    PyTuple_SET_ITEM(shape, r, PyLong_FromLongLong(t->dl_tensor.shape[r]));
    PyTuple_SET_ITEM(strides, r, PyLong_FromLongLong(t->dl_tensor.strides[r]));
  }
  if (!shape || !strides || !(capsule = dlpm_py_capsule_new(t, 1))) {
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return NULL;
  }
  return Py_BuildValue("{s:O,s:N,s:N,s:N}", "shares", shares ? Py_True : Py_False, "shape", shape, "strides", strides,
                       "capsule", capsule);
}

static void set_error(void* ctx, const char* kind, const char* message) {
  (void)ctx;
  PyErr_Format(PyExc_RuntimeError, "%s: %s", kind, message);
}

static PyObject* allocate_via(PyObject* module, PyObject* args) {
  PyObject *like, *shape_obj, *dtype_obj, *device_obj = NULL;
  const DLPackExchangeAPI* api;
  DLManagedTensorVersioned* t = NULL;
  DLTensor prototype;
  int64_t shape[64];
  void* out = NULL;
  (void)module;
  memset(&prototype, 0, sizeof prototype);
  prototype.device.device_type = kDLCPU;
  if (!PyArg_ParseTuple(args, "OOO|O", &like, &shape_obj, &dtype_obj, &device_obj) || !(api = require_api(like)) ||
      parse_shape(shape_obj, shape, &prototype.ndim) != 0 || parse_dtype(dtype_obj, &prototype.dtype) != 0 ||
      (device_obj && parse_device(device_obj, &prototype.device) != 0))
    return NULL;
  prototype.shape = shape;
  if (api->managed_tensor_allocator(&prototype, &t, NULL, set_error) != 0) return NULL;
  if (api->managed_tensor_to_py_object_no_sync(t, &out) != 0) return NULL;
  return (PyObject*)out;
}

/* Our Tensor type's exchange table, read off a sample Tensor: NULL with an exception set. */
static const DLPackExchangeAPI* our_table(void) {
  DLManagedTensorVersioned* t = host_tensor(0, NULL, (DLDataType){kDLFloat, 32, 1}, 'C', 0);
  PyObject* sample = t ? dlpm_py_tensor_new(t) : NULL;
  const DLPackExchangeAPI* ours = sample ? dlpm_py_exchange_api_of(sample) : NULL;
  Py_XDECREF(sample);
  return ours;
}

/* publish_on(cls, how): puts an exchange table on cls (a class made in Python) whose
 * header has DLPack major 2, the way a newer producer would: how = "chained" (prev_api
 * points at our Tensor's major-1 table), "unchained" (no older table), "cycle" (a hostile
 * one: major 2, whose prev_api is a major-3 table whose prev_api is the first again, with no
 * major 1 anywhere), or "integer" (our Tensor's table as the integer __c_dlpack_exchange_api__
 * of earlier drafts). */
static PyObject* publish_on(PyObject* module, PyObject* args) {
  static DLPackExchangeAPI chained, unchained, cycle_2, cycle_3;
  PyObject *cls, *tensor_type, *value;
  const char* how;
  const DLPackExchangeAPI* ours;
  int rc;
  (void)module;
  if (!PyArg_ParseTuple(args, "Os", &cls, &how) || !(tensor_type = dlpm_py_tensor_type())) return NULL;
  ours = our_table();
  Py_DECREF(tensor_type);
  if (!ours) return NULL;
  chained = unchained = *ours;
  chained.header.version.major = unchained.header.version.major = 2;
  chained.header.prev_api = (DLPackExchangeAPIHeader*)&ours->header;
  unchained.header.prev_api = NULL;
  cycle_2 = cycle_3 = unchained;
  cycle_3.header.version.major = 3;
  cycle_2.header.prev_api = &cycle_3.header;
  cycle_3.header.prev_api = &cycle_2.header;
  if (strcmp(how, "cycle") == 0) {
    if (dlpm_py_publish_exchange_api(cls, &cycle_2) != 0) return NULL;
  } else if (strcmp(how, "integer") == 0) {
    if (!(value = PyLong_FromVoidPtr((void*)ours))) return NULL;
    rc = PyObject_SetAttrString(cls, "__c_dlpack_exchange_api__", value);
    Py_DECREF(value);
    if (rc != 0) return NULL;
  } else if (dlpm_py_publish_exchange_api(cls, strcmp(how, "chained") == 0 ? &chained : &unchained) != 0) {
    return NULL;
  }
  Py_RETURN_NONE;
}

/* publish_raising(cls, exc): our Tensor's table, but for its two import entries
 * (managed_tensor_from_py_object_no_sync, dltensor_from_py_object_no_sync), which fail the
 * way a producer's would: raising exc (an exception instance), or returning -1 with no
 * exception set when exc is None. One such table at a time (the last call's exc). */
static PyObject* raising_exception;

static int raise_it(void) {
  if (raising_exception != Py_None) PyErr_SetObject((PyObject*)Py_TYPE(raising_exception), raising_exception);
  return -1;
}

static int raising_managed(void* obj, DLManagedTensorVersioned** out) {
  (void)obj;
  (void)out;
  return raise_it();
}

static int raising_borrowed(void* obj, DLTensor* out) {
  (void)obj;
  (void)out;
  return raise_it();
}

static PyObject* publish_raising(PyObject* module, PyObject* args) {
  static DLPackExchangeAPI raising;
  PyObject *cls, *exc;
  const DLPackExchangeAPI* ours;
  (void)module;
  if (!PyArg_ParseTuple(args, "OO", &cls, &exc)) return NULL;
  if (exc != Py_None && !PyExceptionInstance_Check(exc)) {
    PyErr_SetString(PyExc_TypeError, "publish_raising: exc must be an exception instance or None");
    return NULL;
  }
  if (!(ours = our_table())) return NULL;
  raising = *ours;
  raising.managed_tensor_from_py_object_no_sync = raising_managed;
  raising.dltensor_from_py_object_no_sync = raising_borrowed;
  Py_XSETREF(raising_exception, Py_NewRef(exc));
  if (dlpm_py_publish_exchange_api(cls, &raising) != 0) return NULL;
  Py_RETURN_NONE;
}

/* publish_on_stream(cls, stream): a producer's table as PyTorch's is, "no sync" with a
 * current_work_stream of its own: obj.inner (a Tensor) lent through our table's entries,
 * `stream` (an integer handle) the stream its data is ready on. One such table at a time. */
static const DLPackExchangeAPI* stream_table_ours;
static void* stream_table_stream;

static int inner_managed(void* obj, DLManagedTensorVersioned** out) {
  PyObject* inner = PyObject_GetAttrString((PyObject*)obj, "inner");
  int r = inner ? stream_table_ours->managed_tensor_from_py_object_no_sync(inner, out) : -1;
  Py_XDECREF(inner);
  return r;
}

static int inner_borrowed(void* obj, DLTensor* out) {
  PyObject* inner = PyObject_GetAttrString((PyObject*)obj, "inner");
  int r = inner ? stream_table_ours->dltensor_from_py_object_no_sync(inner, out) : -1;
  Py_XDECREF(inner);
  return r;
}

static int own_stream(DLDeviceType device_type, int32_t device_id, void** out) {
  (void)device_type;
  (void)device_id;
  *out = stream_table_stream;
  return 0;
}

static PyObject* publish_on_stream(PyObject* module, PyObject* args) {
  static DLPackExchangeAPI streamed;
  PyObject *cls, *stream;
  (void)module;
  if (!PyArg_ParseTuple(args, "OO", &cls, &stream)) return NULL;
  if (!(stream_table_stream = PyLong_AsVoidPtr(stream)) && PyErr_Occurred()) return NULL;
  if (!(stream_table_ours = our_table())) return NULL;
  streamed = *stream_table_ours;
  streamed.managed_tensor_from_py_object_no_sync = inner_managed;
  streamed.dltensor_from_py_object_no_sync = inner_borrowed;
  streamed.current_work_stream = own_stream;
  if (dlpm_py_publish_exchange_api(cls, &streamed) != 0) return NULL;
  Py_RETURN_NONE;
}

/* device_tensor(device_type): a 2-element float32 Tensor labelled with that device (host
 * memory underneath, so reading it is safe) whose __dlpack__ reports every stream
 * synchronisation request to stream_waits(); stream 13 is refused with RuntimeError. */
static PyObject* stream_log;

static int record_stream_wait(void* ctx, DLDevice device, int32_t has_stream, int64_t consumer_stream) {
  PyObject* entry;
  (void)ctx;
  if (has_stream && consumer_stream == 13) {
    PyErr_SetString(PyExc_RuntimeError, "stream 13 refused by the producer");
    return -1;
  }
  if (!stream_log && !(stream_log = PyList_New(0))) return -1;
  if (!(entry = Py_BuildValue("(iiL)", (int)device.device_type, (int)has_stream, (long long)consumer_stream))) return -1;
  if (PyList_Append(stream_log, entry) != 0) {
    Py_DECREF(entry);
    return -1;
  }
  Py_DECREF(entry);
  return 0;
}

static PyObject* device_tensor(PyObject* module, PyObject* args) {
  int device_type;
  int64_t shape[1] = {2};
  DLManagedTensorVersioned* t;
  void* memory;
  (void)module;
  if (!PyArg_ParseTuple(args, "i", &device_type)) return NULL;
  if (!(memory = calloc(2, sizeof(float)))) return PyErr_NoMemory();
  if (dlpm_managed_new(memory, 1, shape, NULL, (DLDataType){kDLFloat, 32, 1}, (DLDevice){(DLDeviceType)device_type, 0}, 0, 0,
                       free_counted, memory, &t) != DLPM_OK) {
    free(memory);
    return dlpm_py_raise(DLPM_E_INVALID_ARGUMENT);
  }
  return dlpm_py_tensor_new_on_stream(t, record_stream_wait, NULL);
}

/* hooked_tensor(device_type, version=1): a 2-element float32 Tensor labelled with that
 * device (host memory underneath) made by dlpm_py_tensor_new_on_device, whose hooks log to
 * stream_waits(): ("wait", device_type, stream's type name) and ("copy", target type, target
 * id, stream's type name). The copy is a host copy labelled with the target; target id 9
 * is refused with RuntimeError; target id 8 fails with RuntimeError after making an output
 * whose deleter runs Python code. hooks_released() counts the release calls. */
static atomic_long hooks_released_count;

static int log_entry(PyObject* entry) {
  int r;
  if (!entry || (!stream_log && !(stream_log = PyList_New(0)))) {
    Py_XDECREF(entry);
    return -1;
  }
  r = PyList_Append(stream_log, entry);
  Py_DECREF(entry);
  return r;
}

static int hook_wait(void* ctx, DLDevice device, PyObject* stream) {
  (void)ctx;
  return log_entry(Py_BuildValue("(sis)", "wait", (int)device.device_type, Py_TYPE(stream)->tp_name));
}

/* The deleter of hook_copy's output for target id 8: it runs Python code (a call of int()),
 * as a deleter that drops a Python owner may, and clears what that call left. */
static void free_running_python(void* memory) {
  PyObject* r = PyObject_CallNoArgs((PyObject*)&PyLong_Type);
  if (r == NULL) PyErr_Clear();
  Py_XDECREF(r);
  free_counted(memory);
}

static int hook_copy(void* ctx, const DLManagedTensorVersioned* source, DLDevice target, PyObject* stream,
                     DLManagedTensorVersioned** out) {
  const DLTensor* t = &source->dl_tensor;
  DLManagedTensorVersioned* as_host;
  dlpm_status s;
  (void)ctx;
  if (log_entry(Py_BuildValue("(siis)", "copy", (int)target.device_type, (int)target.device_id, Py_TYPE(stream)->tp_name)))
    return -1;
  if (target.device_id == 9) {
    PyErr_SetString(PyExc_RuntimeError, "copy hook refused device 9");
    return -1;
  }
  if (target.device_id == 8) { /* fails after making its output, whose deleter runs Python code */
    int64_t one = 1;
    void* memory = malloc(sizeof(float));
    if (memory == NULL || dlpm_managed_new(memory, 1, &one, NULL, t->dtype, (DLDevice){kDLCPU, 0}, 0, 0,
                                           free_running_python, memory, out) != DLPM_OK) {
      free(memory);
      return dlpm_py_raise(DLPM_E_OUT_OF_MEMORY), -1;
    }
    PyErr_SetString(PyExc_RuntimeError, "copy hook failed after its copy to device 8");
    return -1;
  }
  if (dlpm_managed_new(t->data, t->ndim, t->shape, t->strides, t->dtype, (DLDevice){kDLCPU, 0}, t->byte_offset, 0, NULL, NULL,
                       &as_host) != DLPM_OK)
    return dlpm_py_raise(DLPM_E_INVALID_ARGUMENT), -1;
  s = dlpm_managed_copy_to_host(as_host, out);
  dlpm_managed_delete(as_host);
  if (s != DLPM_OK) return dlpm_py_raise(s), -1;
  (*out)->dl_tensor.device = target;
  return 0;
}

static void hook_release(void* ctx) {
  (void)ctx;
  atomic_fetch_add(&hooks_released_count, 1);
}

static PyObject* hooked_tensor(PyObject* module, PyObject* args) {
  int device_type;
  unsigned version = DLPM_PY_DEVICE_HOOKS_VERSION;
  int64_t shape[1] = {2};
  DLManagedTensorVersioned* t;
  float* memory;
  dlpm_py_device_hooks hooks = {0, NULL, hook_wait, hook_copy, hook_release};
  (void)module;
  if (!PyArg_ParseTuple(args, "i|I", &device_type, &version)) return NULL;
  hooks.version = version;
  if (!(memory = calloc(2, sizeof(float)))) return PyErr_NoMemory();
  memory[0] = 1.5f;
  memory[1] = 2.5f;
  if (dlpm_managed_new(memory, 1, shape, NULL, (DLDataType){kDLFloat, 32, 1}, (DLDevice){(DLDeviceType)device_type, 0}, 0, 0,
                       free_counted, memory, &t) != DLPM_OK) {
    free(memory);
    return dlpm_py_raise(DLPM_E_INVALID_ARGUMENT);
  }
  return dlpm_py_tensor_new_on_device(t, &hooks);
}

/* waiting_tensor(address, n, wait, device_type, hooks): see the list above. The memory is the
 * caller's (a stub runtime's); the callable is kept by the Tensor's hooks (released with it),
 * or, for dlpm_py_tensor_new_on_stream (whose ctx must outlive the Tensor), for the process. */
static int call_wait(PyObject* wait, int has_stream, PyObject* stream) {
  PyObject* r = PyObject_CallFunction(wait, "iO", has_stream, stream);
  Py_XDECREF(r);
  return r == NULL ? -1 : 0;
}

static int integer_wait(void* ctx, DLDevice device, int32_t has_stream, int64_t consumer_stream) {
  PyObject* stream = has_stream ? PyLong_FromLongLong(consumer_stream) : Py_NewRef(Py_None);
  int r;
  (void)device;
  if (stream == NULL) return -1;
  r = call_wait((PyObject*)ctx, has_stream != 0, stream);
  Py_DECREF(stream);
  return r;
}

static int object_wait(void* ctx, DLDevice device, PyObject* stream) {
  (void)device;
  return call_wait((PyObject*)ctx, stream != Py_None, stream);
}

static void drop_wait(void* ctx) { Py_DECREF((PyObject*)ctx); }

static PyObject* waiting_tensor(PyObject* module, PyObject* args) {
  unsigned long long address;
  long long n;
  PyObject* wait;
  int device_type, hooks;
  int64_t shape[1];
  DLManagedTensorVersioned* t;
  (void)module;
  if (!PyArg_ParseTuple(args, "KLOip", &address, &n, &wait, &device_type, &hooks)) return NULL;
  shape[0] = n;
  if (dlpm_managed_new((void*)(uintptr_t)address, 1, shape, NULL, (DLDataType){kDLFloat, 32, 1},
                       (DLDevice){(DLDeviceType)device_type, 0}, 0, 0, NULL, NULL, &t) != DLPM_OK)
    return dlpm_py_raise(DLPM_E_INVALID_ARGUMENT);
  Py_INCREF(wait);
  if (hooks) {
    const dlpm_py_device_hooks h = {DLPM_PY_DEVICE_HOOKS_VERSION, wait, object_wait, NULL, drop_wait};
    return dlpm_py_tensor_new_on_device(t, &h);
  }
  return dlpm_py_tensor_new_on_stream(t, integer_wait, wait);
}

/* null_arguments() -> [(call, return value, exception type name or None, message or None)]:
 * dlpm_py_stream_integer and dlpm_py_integer_in_range, each with one NULL argument. */
static PyObject* null_argument_answer(const char* call, int rc) {
  PyObject *type, *value, *traceback, *text, *entry;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  text = value ? PyObject_Str(value) : NULL;
  entry = Py_BuildValue("(siss)", call, rc, type ? ((PyTypeObject*)type)->tp_name : NULL, text ? PyUnicode_AsUTF8(text) : NULL);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  Py_XDECREF(text);
  return entry;
}

static PyObject* null_arguments(PyObject* module, PyObject* unused) {
  PyObject *one = PyLong_FromLong(1), *half = PyFloat_FromDouble(0.5), *list = PyList_New(0);
  long long v = 0;
  (void)module;
  (void)unused;
  if (!one || !half || !list) goto fail;
#define DLPM_TEST_ANSWER(call)                                                  \
  do {                                                                          \
    PyObject* entry = null_argument_answer(#call, call);                       \
    if (!entry || PyList_Append(list, entry) != 0) {                            \
      Py_XDECREF(entry);                                                        \
      goto fail;                                                                \
    }                                                                           \
    Py_DECREF(entry);                                                           \
  } while (0)
  DLPM_TEST_ANSWER(dlpm_py_stream_integer(NULL, "CPU", &v));
  DLPM_TEST_ANSWER(dlpm_py_stream_integer(one, "CPU", NULL));
  DLPM_TEST_ANSWER(dlpm_py_stream_integer(half, NULL, &v));
  DLPM_TEST_ANSWER(dlpm_py_integer_in_range(one, "x", 0, 5, NULL, NULL));
  DLPM_TEST_ANSWER(dlpm_py_integer_in_range(one, NULL, 3, 5, NULL, &v));
  DLPM_TEST_ANSWER(dlpm_py_integer_in_range(NULL, "x", 0, 5, NULL, &v));
#undef DLPM_TEST_ANSWER
  Py_DECREF(one);
  Py_DECREF(half);
  return list;
fail:
  Py_XDECREF(one);
  Py_XDECREF(half);
  Py_XDECREF(list);
  return NULL;
}

static PyObject* hooks_released(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  return PyLong_FromLong(atomic_load(&hooks_released_count));
}

static PyObject* stream_waits(PyObject* module, PyObject* unused) {
  PyObject* log = stream_log ? stream_log : PyList_New(0);
  (void)module;
  (void)unused;
  stream_log = NULL; /* handed over: the next call starts a new log */
  return log;
}

static PyObject* released(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  return PyLong_FromLong(atomic_load(&released_count));
}

/* An import of obj with `opts` and `req` (either may be NULL): its status, the tensor's
 * flags in *flags (when imported), no exception left. */
static dlpm_status import_status(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts, uint64_t* flags) {
  DLManagedTensorVersioned* t = NULL;
  const dlpm_status s = dlpm_py_import(obj, req, opts, &t);
  if (t != NULL) {
    if (flags) *flags = t->flags;
    dlpm_managed_delete(t);
  }
  PyErr_Clear();
  return s;
}

/* Whether dlpm_py_import and dlpm_py_tensor_import each refuse `o`, whose only unusual field
 * is `field` (one a borrow alone reads), with a ValueError that names the call and the field. */
static int entries_refuse_borrow_field(PyObject* obj, const dlpm_py_options* o, const char* field) {
  const char* const entry[2] = {"dlpm_py_import", "dlpm_py_tensor_import"};
  int refused = 1;
  for (int k = 0; k < 2; ++k) {
    DLManagedTensorVersioned* t = NULL;
    PyObject *kind, *value, *trace, *text, *imported = NULL;
    char expected[128];
    int named = 0;
    if (k == 0) {
      refused = refused && dlpm_py_import(obj, NULL, o, &t) == DLPM_E_INVALID_ARGUMENT && t == NULL;
      if (t) dlpm_managed_delete(t);
    } else {
      imported = dlpm_py_tensor_import(obj, NULL, o);
      refused = refused && imported == NULL;
      Py_XDECREF(imported);
    }
    refused = refused && PyErr_ExceptionMatches(PyExc_ValueError);
    PyErr_Fetch(&kind, &value, &trace);
    snprintf(expected, sizeof expected, "%s: dlpm_py_options.%s is for dlpm_py_borrow", entry[k], field);
    if (value != NULL && (text = PyObject_Str(value)) != NULL) {
      const char* utf8 = PyUnicode_AsUTF8(text);
      named = utf8 != NULL && strstr(utf8, expected) != NULL;
      Py_DECREF(text);
    }
    Py_XDECREF(kind);
    Py_XDECREF(value);
    Py_XDECREF(trace);
    PyErr_Clear();
    refused = refused && named;
  }
  return refused;
}

/* options(obj, bits, grad): dlpm_py_options, version 1 (the only one): initialised to the
 * defaults, other versions refused (at init and at import), `validate` (an impossible ndim
 * refused, or not checked), keep_alive, checked and lent refused by both imports. `bits` (when not None) is a
 * tensor with a semantic bit set: refused by default (BufferError), taken with
 * accept_semantic_bits. `grad` (when not None) is a tensor whose producer forbids writes:
 * refused by a writable import (`writable` or req->writable), validated or not, and
 * READ_ONLY for a reading one. */
static PyObject* options(PyObject* module, PyObject* args) {
  dlpm_py_options o, bad;
  dlpm_checked_tensor checked;
  const dlpm_checked_tensor* lent = NULL;
  dlpm_requirements req, writer;
  DLManagedTensorVersioned* t = NULL;
  uint64_t flags = 0;
  PyObject *obj, *bits, *grad;
  int defaults, refused_next, refused_0, import_refuses_0, import_refuses_next, validated_refuses, unvalidated_accepts,
      imports_refuse_borrow_fields, import_refuses_null, bits_refused = -1, bits_accepted = -1, grad_writable_refused = -1,
      grad_writable_unvalidated_refused = -1, grad_req_writable_unvalidated_refused = -1, grad_read_only = -1;
  (void)module;
  if (!PyArg_ParseTuple(args, "OOO", &obj, &bits, &grad)) return NULL;
  memset(&o, 0xAB, sizeof o);
  if (dlpm_py_options_init(&o, DLPM_PY_OPTIONS_VERSION) != DLPM_OK) return NULL;
  defaults = o.version == 5 && o.legacy_writable == 0 && o.copy == -1 && o.has_dl_device == 0 &&
             o.dl_device.device_type == kDLCPU && o.dl_device.device_id == 0 && o.has_stream == 0 && o.stream == 0 &&
             o.stream_object == NULL && o.use_exchange_api == 1 && o.validate == 1 && o.writable == 0 &&
             o.accept_semantic_bits == 0 && o.keep_alive == 0 && o.provenance == NULL && o.semantic_bits_option == NULL &&
             o.checked == NULL && o.lent == NULL && o.ready_on_host == 0;
  /* a version-1 struct (0.2.0's header) ends before semantic_bits_option: init writes nothing past it */
  memset(&bad, 0xAB, sizeof bad);
  defaults = defaults && dlpm_py_options_init(&bad, 1) == DLPM_OK && bad.version == 1 && bad.copy == -1 &&
             bad.provenance == NULL &&
             ((const unsigned char*)&bad)[offsetof(dlpm_py_options, semantic_bits_option)] == 0xAB;
  /* a version-2 struct ends before checked */
  memset(&bad, 0xAB, sizeof bad);
  defaults = defaults && dlpm_py_options_init(&bad, 2) == DLPM_OK && bad.version == 2 && bad.semantic_bits_option == NULL &&
             ((const unsigned char*)&bad)[offsetof(dlpm_py_options, checked)] == 0xAB;
  /* a version-3 struct ends before lent */
  memset(&bad, 0xAB, sizeof bad);
  defaults = defaults && dlpm_py_options_init(&bad, 3) == DLPM_OK && bad.version == 3 && bad.checked == NULL &&
             ((const unsigned char*)&bad)[offsetof(dlpm_py_options, lent)] == 0xAB;
  /* a version-4 struct ends before ready_on_host */
  memset(&bad, 0xAB, sizeof bad);
  defaults = defaults && dlpm_py_options_init(&bad, 4) == DLPM_OK && bad.version == 4 && bad.lent == NULL &&
             ((const unsigned char*)&bad)[offsetof(dlpm_py_options, ready_on_host)] == 0xAB;
  memset(&bad, 0xAB, sizeof bad);
  refused_next = dlpm_py_options_init(&bad, DLPM_PY_OPTIONS_VERSION + 1) == DLPM_E_UNSUPPORTED_VERSION &&
              PyErr_ExceptionMatches(PyExc_ValueError) && bad.version == 0xABABABABu;
  PyErr_Clear();
  refused_0 = dlpm_py_options_init(&bad, 0) == DLPM_E_UNSUPPORTED_VERSION;
  PyErr_Clear();
  bad = o;
  bad.version = 0;
  import_refuses_0 = import_status(obj, NULL, &bad, NULL) == DLPM_E_UNSUPPORTED_VERSION;
  bad.version = DLPM_PY_OPTIONS_VERSION + 1;
  import_refuses_next = import_status(obj, NULL, &bad, NULL) == DLPM_E_UNSUPPORTED_VERSION;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.ndim = 63;
  validated_refuses = import_status(obj, &req, &o, NULL) == DLPM_E_NDIM_MISMATCH;
  o.validate = 0;
  unvalidated_accepts = import_status(obj, &req, &o, NULL) == DLPM_OK;
  o.validate = 1;
  /* the fields only a borrow reads, refused by both calls that hand over a tensor */
  o.keep_alive = 1;
  imports_refuse_borrow_fields = entries_refuse_borrow_field(obj, &o, "keep_alive");
  o.keep_alive = 0;
  memset(&checked, 0, sizeof checked);
  checked.version = DLPM_CHECKED_TENSOR_VERSION;
  o.checked = &checked;
  imports_refuse_borrow_fields = imports_refuse_borrow_fields && entries_refuse_borrow_field(obj, &o, "checked");
  o.checked = NULL;
  o.lent = &lent;
  imports_refuse_borrow_fields = imports_refuse_borrow_fields && entries_refuse_borrow_field(obj, &o, "lent");
  o.lent = NULL;
  /* NULL obj or out, with and without options: a ValueError, never a dereference */
  import_refuses_null = 1;
  {
    const dlpm_py_options* const with[] = {NULL, &o};
    size_t k;
    for (k = 0; k < 2; ++k) {
      import_refuses_null = import_refuses_null && dlpm_py_import(NULL, NULL, with[k], &t) == DLPM_E_NULL_POINTER &&
                            PyErr_ExceptionMatches(PyExc_ValueError) && t == NULL;
      PyErr_Clear();
      import_refuses_null = import_refuses_null && dlpm_py_import(obj, NULL, with[k], NULL) == DLPM_E_NULL_POINTER &&
                            PyErr_ExceptionMatches(PyExc_ValueError);
      PyErr_Clear();
    }
  }
  if (bits != Py_None) {
    bits_refused = dlpm_py_import(bits, NULL, &o, &t) == DLPM_E_INVALID_ARGUMENT && PyErr_ExceptionMatches(PyExc_BufferError);
    if (t) dlpm_managed_delete(t);
    PyErr_Clear();
    o.accept_semantic_bits = 1;
    bits_accepted = import_status(bits, NULL, &o, NULL) == DLPM_OK;
    o.accept_semantic_bits = 0;
  }
  if (grad != Py_None) {
    dlpm_requirements_init(&writer, DLPM_REQUIREMENTS_VERSION);
    writer.writable = 1;
    o.writable = 1;
    grad_writable_refused = import_status(grad, NULL, &o, NULL) == DLPM_E_INVALID_ARGUMENT;
    o.validate = 0;
    grad_writable_unvalidated_refused = import_status(grad, NULL, &o, NULL) == DLPM_E_INVALID_ARGUMENT;
    o.writable = 0;
    grad_req_writable_unvalidated_refused = import_status(grad, &writer, &o, NULL) == DLPM_E_INVALID_ARGUMENT;
    grad_read_only = import_status(grad, NULL, &o, &flags) == DLPM_OK && (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    o.validate = 1;
  }
  return Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "defaults", defaults, "init_refuses_next",
                       refused_next, "init_refuses_0", refused_0, "import_refuses_0", import_refuses_0, "import_refuses_next",
                       import_refuses_next, "validated_refuses", validated_refuses, "unvalidated_accepts", unvalidated_accepts,
                       "imports_refuse_borrow_fields", imports_refuse_borrow_fields, "import_refuses_null", import_refuses_null,
                       "bits_refused", bits_refused, "bits_accepted",
                       bits_accepted, "grad_writable_refused", grad_writable_refused, "grad_writable_unvalidated_refused",
                       grad_writable_unvalidated_refused, "grad_req_writable_unvalidated_refused",
                       grad_req_writable_unvalidated_refused, "grad_read_only", grad_read_only);
}

/* borrow_checked(obj, options_version=DLPM_PY_OPTIONS_VERSION, checked_version=DLPM_CHECKED_TENSOR_VERSION,
 * validate=True, writable=False, lend=False, write=None): dlpm_py_borrow with
 * dlpm_py_options.checked pointing to a checked form filled with 0xAB but its version (and with
 * `lend`, .lent pointing to a pointer set to a sentinel), and `writable` a float32 requirement
 * (a writer takes the owning path, unless lent a writable Tensor's form); `write`: bytes written
 * through the borrowed view, as consume's. Returns a dict: status; described (checked->tensor
 * is &out->dl_tensor); lent (*lent a form); lent_untouched (*lent still the sentinel); matches (what the form handed back, the
 * lent one or else `checked`, says equals dlpm_check_tensor's checked form of out->dl_tensor
 * with out->flags, strides included, and a lent form's tensor is out->dl_tensor byte for byte);
 * untouched (no byte of `checked` past the version written); strides (that form's, when there
 * is one); borrowed (the borrow holds no owner: the borrowed path); flags (out->flags); error
 * (the refusal's message, or None); import_refuses (dlpm_py_import with the same options, with
 * `lend` .lent alone: DLPM_E_INVALID_ARGUMENT when a field is set, else its status). */
static PyObject* borrow_checked(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"obj", "options_version", "checked_version", "validate", "writable", "lend", "write", NULL};
  static const dlpm_checked_tensor sentinel;
  PyObject *obj, *write = Py_None, *strides = NULL, *error = NULL, *result;
  unsigned options_version = DLPM_PY_OPTIONS_VERSION, checked_version = DLPM_CHECKED_TENSOR_VERSION;
  int validate = 1, writable = 0, lend = 0, described = 0, is_lent = 0, matches = 0, untouched = 1, import_refuses;
  int borrowed = 0;
  unsigned long long flags = 0;
  size_t i;
  dlpm_py_options opts;
  dlpm_requirements req;
  dlpm_checked_tensor checked, reference;
  const dlpm_checked_tensor* lent = &sentinel;
  const dlpm_checked_tensor* form = NULL;
  dlpm_py_borrowed b;
  dlpm_status s;
  DLManagedTensorVersioned* t = NULL;
  (void)module;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|IIpppO", keywords, &obj, &options_version, &checked_version,
                                   &validate, &writable, &lend, &write))
    return NULL;
  memset(&opts, 0, sizeof opts);
  if (dlpm_py_options_init(&opts, options_version) != DLPM_OK) return NULL;
  opts.validate = validate;
  /* set whatever the version: a borrow of an earlier version must neither read nor write them */
  opts.checked = &checked;
  if (lend) opts.lent = &lent;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.writable = writable;
  memset(&checked, 0xAB, sizeof checked);
  checked.version = checked_version;
  s = dlpm_py_borrow(obj, &req, &opts, &b);
  for (i = sizeof checked.version; i < sizeof checked; ++i)
    if (((const unsigned char*)&checked)[i] != 0xAB) untouched = 0;
  if (s == DLPM_OK) {
    borrowed = b.owner == NULL && b.keep_alive == NULL;
    flags = (unsigned long long)b.flags;
    described = checked.tensor == &b.dl_tensor;
    is_lent = lent != &sentinel && lent != NULL;
    form = is_lent ? lent : described ? &checked : NULL;
    memset(&reference, 0, sizeof reference);
    reference.version = DLPM_CHECKED_TENSOR_VERSION;
    if (form != NULL && dlpm_check_tensor(&b.dl_tensor, b.flags, NULL, 0, &reference) == DLPM_OK) {
      /* the lent form's flags are the Tensor's: it was checked without them, as out->flags (0) */
      matches = (is_lent ? b.flags == 0 && memcmp(lent->tensor, &b.dl_tensor, sizeof b.dl_tensor) == 0
                         : form->flags == reference.flags) &&
                form->row_major == reference.row_major &&
                form->numel == reference.numel && form->itemsize == reference.itemsize &&
                form->lowest_index == reference.lowest_index && form->highest_index == reference.highest_index &&
                form->implicit_strides == reference.implicit_strides && form->ndim == reference.ndim;
      for (i = 0; matches && i < (size_t)reference.ndim; ++i) matches = form->strides[i] == reference.strides[i];
    }
    if ((write != Py_None && write_bytes(&b.dl_tensor, write) != 0) ||
        (form != NULL && !(strides = PyTuple_New(form->ndim)))) {
      dlpm_py_borrow_end(&b);
      return NULL;
    }
    for (i = 0; form != NULL && i < (size_t)form->ndim; ++i)
      PyTuple_SET_ITEM(strides, (Py_ssize_t)i, PyLong_FromLongLong(form->strides[i]));
    dlpm_py_borrow_end(&b);
  } else {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    error = value ? PyObject_Str(value) : NULL;
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    PyErr_Clear(); /* PyObject_Str's own failure, if any: the error is then None */
  }
  if (lend) opts.checked = NULL; /* the import is given .lent alone */
  import_refuses = dlpm_py_import(obj, NULL, &opts, &t);
  if (t) dlpm_managed_delete(t);
  PyErr_Clear();
  result = Py_BuildValue("{s:i,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:K,s:O,s:i}", "status", (int)s, "described",
                         described ? Py_True : Py_False, "lent", is_lent ? Py_True : Py_False, "lent_untouched",
                         lent == &sentinel ? Py_True : Py_False, "matches", matches ? Py_True : Py_False, "untouched",
                         untouched ? Py_True : Py_False, "strides", strides ? strides : Py_None, "borrowed",
                         borrowed ? Py_True : Py_False, "flags", flags, "error", error ? error : Py_None,
                         "import_refuses", (int)import_refuses);
  Py_XDECREF(strides);
  Py_XDECREF(error);
  return result;
}

/* traced(obj, version=DLPM_PY_PROVENANCE_VERSION, borrow=False): dlpm_py_import (or
 * dlpm_py_borrow) with dlpm_py_options.provenance -> (path, legacy, pre_1_0_call,
 * (major, minor)), the tensor released. */
static PyObject* traced(PyObject* module, PyObject* args) {
  PyObject* obj;
  unsigned version = DLPM_PY_PROVENANCE_VERSION;
  int borrow = 0;
  dlpm_py_provenance how;
  dlpm_py_options opts;
  DLManagedTensorVersioned* t = NULL;
  dlpm_py_borrowed b;
  (void)module;
  if (!PyArg_ParseTuple(args, "O|Ip", &obj, &version, &borrow)) return NULL;
  memset(&how, 0, sizeof how);
  how.version = version;
  if (dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION) != DLPM_OK) return NULL;
  opts.validate = 0;
  opts.provenance = &how;
  if (borrow) {
    if (dlpm_py_borrow(obj, NULL, &opts, &b) != DLPM_OK) return NULL;
    dlpm_py_borrow_end(&b);
  } else {
    if (dlpm_py_import(obj, NULL, &opts, &t) != DLPM_OK) return NULL;
    dlpm_managed_delete(t);
  }
  if (version < 2 && (how.stream_order != 0 || how.ready_stream != NULL))
    return PyErr_Format(PyExc_AssertionError, "the import wrote past the end of a version-%u provenance", version);
  return Py_BuildValue("(iii(II))", (int)how.path, (int)how.legacy, (int)how.pre_1_0_call, how.dlpack_version.major,
                       how.dlpack_version.minor);
}

/* ready_stream(obj, borrow=False, stream=None, exchange=True, validate=False) -> (stream_order,
 * ready_stream as an integer, or None): where an import (or a borrow) of obj says the tensor is
 * ready, with opts.stream when `stream` is an integer, opts.use_exchange_api = exchange and
 * opts.validate = validate (a validating borrow reads this copy's Tensor's view in place). */
static PyObject* ready_stream(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"", "borrow", "stream", "exchange", "validate", NULL};
  PyObject *obj, *stream = Py_None;
  int borrow = 0, exchange = 1, validate = 0;
  dlpm_py_provenance how;
  dlpm_py_options opts;
  DLManagedTensorVersioned* t = NULL;
  dlpm_py_borrowed b;
  (void)module;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$pOpp:ready_stream", keywords, &obj, &borrow, &stream, &exchange,
                                   &validate))
    return NULL;
  memset(&how, 0xA5, sizeof how); /* the import must write both fields */
  how.version = DLPM_PY_PROVENANCE_VERSION;
  if (dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION) != DLPM_OK) return NULL;
  opts.validate = validate;
  opts.provenance = &how;
  opts.use_exchange_api = exchange;
  if (stream != Py_None) {
    opts.has_stream = 1;
    opts.stream = PyLong_AsLongLong(stream);
    if (PyErr_Occurred()) return NULL;
  }
  if (borrow) {
    if (dlpm_py_borrow(obj, NULL, &opts, &b) != DLPM_OK) return NULL;
    dlpm_py_borrow_end(&b);
  } else {
    if (dlpm_py_import(obj, NULL, &opts, &t) != DLPM_OK) return NULL;
    dlpm_managed_delete(t);
  }
  if (how.stream_order != DLPM_PY_ORDER_STREAM) {
    if (how.ready_stream != NULL) return PyErr_Format(PyExc_AssertionError, "ready_stream set without a stream order");
    return Py_BuildValue("(iO)", (int)how.stream_order, Py_None);
  }
  return Py_BuildValue("(iK)", (int)how.stream_order, (unsigned long long)(uintptr_t)how.ready_stream);
}

/* borrow_kept(obj, writable=False, end=False) -> (keep_alive or None, data address,
 * keep_alive's capsule name or None): dlpm_py_borrow with keep_alive, the view's owner
 * handed to the caller; with `end`, left in the borrow for dlpm_py_borrow_end to drop
 * (None returned in its place). */
static PyObject* borrow_kept(PyObject* module, PyObject* args) {
  PyObject *obj, *keep, *result;
  int writable = 0, end = 0;
  dlpm_py_options opts;
  dlpm_py_borrowed b;
  (void)module;
  if (!PyArg_ParseTuple(args, "O|pp", &obj, &writable, &end)) return NULL;
  if (dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION) != DLPM_OK) return NULL;
  opts.validate = 0;
  opts.writable = writable;
  opts.keep_alive = 1;
  if (dlpm_py_borrow(obj, NULL, &opts, &b) != DLPM_OK) return NULL;
  if (b.owner != NULL) { /* never: ownership is keep_alive's */
    dlpm_py_borrow_end(&b);
    PyErr_SetString(PyExc_AssertionError, "dlpm_py_borrow with keep_alive left out->owner set");
    return NULL;
  }
  keep = end ? NULL : b.keep_alive;
  if (!end) b.keep_alive = NULL; /* taken */
  result = Py_BuildValue("(OKz)", keep ? keep : Py_None,
                         (unsigned long long)((uintptr_t)b.dl_tensor.data + b.dl_tensor.byte_offset),
                         keep ? PyCapsule_GetName(keep) : NULL);
  dlpm_py_borrow_end(&b);
  Py_XDECREF(keep);
  return result;
}

/* capsule_peek(obj, legacy_writable=False) -> (ndim, flags, capsule name), or None:
 * dlpm_py_capsule_peek, which leaves the capsule as it was. */
static PyObject* capsule_peek(PyObject* module, PyObject* args) {
  PyObject* obj;
  int legacy_writable = 0;
  dlpm_py_options opts;
  DLTensor t;
  uint64_t flags = 0;
  (void)module;
  if (!PyArg_ParseTuple(args, "O|p", &obj, &legacy_writable)) return NULL;
  dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION);
  opts.legacy_writable = legacy_writable;
  if (!dlpm_py_capsule_peek(obj, &opts, &t, &flags)) {
    if (PyErr_Occurred()) return NULL; /* never: the test asserts it by returning a value */
    Py_RETURN_NONE;
  }
  return Py_BuildValue("(iKs)", (int)t.ndim, (unsigned long long)flags, PyCapsule_GetName(obj));
}

static PyMethodDef module_methods[] = {
    {"options", options, METH_VARARGS, "dlpm_py_options: defaults, versions, validate, writable, semantic bits."},
    {"tensor", (PyCFunction)(void (*)(void))tensor, METH_VARARGS | METH_KEYWORDS, "A host tensor as a dlpack_mdspan.Tensor."},
    {"cpp_tensor", cpp_tensor, METH_VARARGS, "A C++ std::vector as a dlpack_mdspan.Tensor."},
    {"fill", fill, METH_VARARGS, "Write row-major element bytes into a dlpack_mdspan.Tensor."},
    {"consume", (PyCFunction)(void (*)(void))consume, METH_VARARGS | METH_KEYWORDS, "Import through the Python component."},
    {"ready_stream", (PyCFunction)(void (*)(void))ready_stream, METH_VARARGS | METH_KEYWORDS,
     "Where an import says obj's tensor is ready: (stream_order, stream or None)."},
    {"reexport", reexport, METH_O, "obj imported with the default options, as a dlpack_mdspan.Tensor."},
    {"tensor_import", (PyCFunction)(void (*)(void))tensor_import, METH_VARARGS | METH_KEYWORDS,
     "dlpm_py_tensor_import(obj) with copy and device, as dlpack_mdspan.from_dlpack."},
    {"device_capsule", device_capsule, METH_VARARGS, "A capsule over memory at an address, on a device."},
    {"device_capsules_released", device_capsules_released, METH_NOARGS, "How many device_capsule tensors were let go."},
    {"capsule", capsule, METH_VARARGS, "A capsule from dlpm_py_capsule_new."},
    {"exchange_api", exchange_api, METH_O, "(major, minor) of the type's exchange API, or None."},
    {"to_py_via", to_py_via, METH_VARARGS, "A Tensor's memory as an object of another type, through its table."},
    {"table_export", table_export, METH_O, "An export through obj's own table, and whether it shares the view's arrays."},
    {"allocate_via", allocate_via, METH_VARARGS, "A tensor from a type's exchange-API allocator."},
    {"publish_on", publish_on, METH_VARARGS, "Publish a major-2 (chained/unchained) or integer table on a class."},
    {"publish_raising", publish_raising, METH_VARARGS, "A table whose import entries raise exc (or fail with none)."},
    {"publish_on_stream", publish_on_stream, METH_VARARGS, "A table lending obj.inner, ready on a stream of its own."},
    {"device_tensor", device_tensor, METH_VARARGS, "A Tensor labelled with a device, logging stream waits."},
    {"stream_waits", stream_waits, METH_NOARGS, "The stream synchronisation requests since the last call."},
    {"hooked_tensor", hooked_tensor, METH_VARARGS, "A Tensor labelled with a device, with logging device hooks."},
    {"waiting_tensor", waiting_tensor, METH_VARARGS, "A Tensor of device memory whose producer's wait is a callable."},
    {"capsule_peek", capsule_peek, METH_VARARGS, "dlpm_py_capsule_peek: (ndim, flags, name) or None."},
    {"borrow_kept", borrow_kept, METH_VARARGS, "dlpm_py_borrow with keep_alive: (keep_alive, data address, its capsule name)."},
    {"borrow_checked", (PyCFunction)(void (*)(void))borrow_checked, METH_VARARGS | METH_KEYWORDS,
     "dlpm_py_borrow with dlpm_py_options.checked: what it handed back, against dlpm_check_tensor."},
    {"traced", traced, METH_VARARGS, "dlpm_py_options.provenance: (path, legacy, pre_1_0_call, version)."},
    {"hooks_released", hooks_released, METH_NOARGS, "Number of device hooks released so far."},
    {"released", released, METH_NOARGS, "Number of host buffers freed so far."},
    {"null_arguments", null_arguments, METH_NOARGS, "The integer decoders' answers to a NULL argument."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "dlpm_interop", NULL, -1, module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_dlpm_interop(void) {
  PyObject *m, *type;
  if (!(m = PyModule_Create(&module_def))) return NULL;
  if (!(type = dlpm_py_tensor_type()) || PyModule_AddObject(m, "Tensor", type) < 0) {
    Py_XDECREF(type);
    Py_DECREF(m);
    return NULL;
  }
  if (dlpm_test_add_typed(m) != 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
