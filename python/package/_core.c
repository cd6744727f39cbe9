/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpack_mdspan._core: the pip package's extension, a thin view of the Python component.
 *
 *   Tensor                                    dlpack_mdspan.Tensor (dlpm_py_tensor_type)
 *   InvalidStreamError                        a stream value refused (dlpm_py_invalid_stream_error)
 *   CopyForbiddenError                        copy=False where only a copy reaches dl_device (dlpm_py_copy_forbidden_error)
 *   from_dlpack(x, /, *, copy=None, device=None) -> Tensor: x imported and re-exported
 *           (dlpm_py_tensor_import: a CUDA producer's stream order kept, CUDA copies made here)
 *   inspect(x, /, *, dtype=None, ndim=None, shape=None, order=None, writable=False,
 *           device=None) -> dict: what x's producer hands over, and whether it meets the
 *           requirements given (the Python wrapper prints it as a table)
 *
 * Built for the limited API (abi3), like the component it links. */
#define PY_SSIZE_T_CLEAN
#include <dlpack_mdspan_python.h>

#include <stdio.h>
#include <string.h>

/* ---- arguments ------------------------------------------------------------------------ */

/* The item `i` of a tuple, `what`, as an integer in [min, max] (dlpm_py_integer_in_range:
 * OverflowError outside, never narrowed). 0, or -1 with an exception set. */
static int tuple_item(PyObject* tuple, Py_ssize_t i, const char* what, long long min, long long max, long long* out) {
  return dlpm_py_integer_in_range(PyTuple_GetItem(tuple, i), what, min, max, NULL, out);
}

/* A dtype by NumPy's name ("float32", "bfloat16", "float32x4": dlpm_dtype_from_name, the
 * inverse of dlpm_dtype_name, the one spelling rule) or as (code, bits, lanes), each in its
 * DLDataType field's range. */
static int parse_dtype(PyObject* obj, const char* function, DLDataType* out) {
  char what[3][48];
  long long code, bits, lanes;
  if (PyTuple_Check(obj)) {
    if (PyTuple_Size(obj) != 3) {
      PyErr_Format(PyExc_TypeError, "%s: dtype must be a name ('float32') or a (code, bits, lanes) tuple", function);
      return -1;
    }
    snprintf(what[0], sizeof what[0], "%s: dtype code", function);
    snprintf(what[1], sizeof what[1], "%s: dtype bits", function);
    snprintf(what[2], sizeof what[2], "%s: dtype lanes", function);
    if (tuple_item(obj, 0, what[0], 0, UINT8_MAX, &code) || tuple_item(obj, 1, what[1], 0, UINT8_MAX, &bits) ||
        tuple_item(obj, 2, what[2], 0, UINT16_MAX, &lanes))
      return -1;
    out->code = (uint8_t)code;
    out->bits = (uint8_t)bits;
    out->lanes = (uint16_t)lanes;
    return 0;
  }
  if (PyUnicode_Check(obj)) {
    Py_ssize_t size;
    const char* name = PyUnicode_AsUTF8AndSize(obj, &size);
    if (name == NULL) return -1;
    if (strlen(name) != (size_t)size) { /* the C lookup would stop at the NUL */
      PyErr_Format(PyExc_ValueError, "dtype %R: a dtype name has no NUL character", obj);
      return -1;
    }
    if (dlpm_dtype_from_name(name, out) == DLPM_OK) return 0;
    PyErr_Format(PyExc_ValueError, "dtype %R: %s", obj, dlpm_last_error());
    return -1;
  }
  PyErr_Format(PyExc_TypeError, "%s: dtype must be a name ('float32') or a (code, bits, lanes) tuple", function);
  return -1;
}

/* (device_type, device_id), each a non-negative int32 (DLDevice's fields). */
static int parse_device(PyObject* obj, const char* function, DLDevice* out) {
  char what[2][48];
  long long type, id;
  if (!PyTuple_Check(obj) || PyTuple_Size(obj) != 2) {
    PyErr_Format(PyExc_TypeError, "%s: device must be a (device_type, device_id) tuple of integers", function);
    return -1;
  }
  snprintf(what[0], sizeof what[0], "%s: device_type", function);
  snprintf(what[1], sizeof what[1], "%s: device_id", function);
  if (tuple_item(obj, 0, what[0], 0, INT32_MAX, &type) || tuple_item(obj, 1, what[1], 0, INT32_MAX, &id)) return -1;
  out->device_type = (DLDeviceType)type;
  out->device_id = (int32_t)id;
  return 0;
}

/* ---- from_dlpack ---------------------------------------------------------------------- */

static PyObject* from_dlpack(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"", "copy", "device", NULL};
  PyObject *obj, *copy = Py_None, *device = Py_None;
  dlpm_py_options opts;
  (void)module;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OO:from_dlpack", keywords, &obj, &copy, &device)) return NULL;
  if (dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION) != DLPM_OK) return NULL;
  if (dlpm_py_copy_argument(copy, "from_dlpack: copy", &opts.copy) != 0) return NULL;
  if (device != Py_None) {
    if (parse_device(device, "from_dlpack", &opts.dl_device) != 0) return NULL;
    opts.has_dl_device = 1;
  }
  /* Stream order kept for CUDA memory, and copies of it made here (dlpm_py_tensor_import). */
  return dlpm_py_tensor_import(obj, NULL, &opts);
}

/* ---- inspect -------------------------------------------------------------------------- */

static PyObject* int64_tuple(const int64_t* values, int32_t n) {
  PyObject* t = PyTuple_New(n);
  for (int32_t i = 0; t != NULL && i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(values[i]);
    if (v == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SetItem(t, i, v);
  }
  return t;
}

/* A dict entry, the reference stolen; 0, or -1 with an exception set. */
static int put(PyObject* dict, const char* key, PyObject* value) {
  int r;
  if (value == NULL) return -1;
  r = PyDict_SetItemString(dict, key, value);
  Py_DECREF(value);
  return r;
}

/* dlpm_coalesce's answer for a valid tensor: ((extent, byte_step) per mode, outermost first,
 * block), or None when its elements share bytes (packed sub-byte). */
static PyObject* coalesced(const DLManagedTensorVersioned* t) {
  int64_t extents[DLPM_MAX_NDIM], steps[DLPM_MAX_NDIM], block = 0;
  int32_t n = 0;
  PyObject* modes;
  if (dlpm_coalesce(&t->dl_tensor, t->flags, extents, steps, DLPM_MAX_NDIM, &n, &block) != DLPM_OK) return Py_NewRef(Py_None);
  if ((modes = PyTuple_New(n)) == NULL) return NULL;
  for (int32_t m = 0; m < n; ++m) {
    PyObject* mode = Py_BuildValue("(LL)", (long long)extents[m], (long long)steps[m]);
    if (mode == NULL) {
      Py_DECREF(modes);
      return NULL;
    }
    PyTuple_SetItem(modes, m, mode);
  }
  return Py_BuildValue("(NL)", modes, (long long)block);
}

static PyObject* describe(const DLManagedTensorVersioned* t, const dlpm_py_provenance* how, const dlpm_requirements* req) {
  static const char* const paths[] = {"?", "capsule", "exchange API", "__dlpack__"};
  static const char* const orders[] = {"none", "stream", "unknown"}; /* DLPM_PY_ORDER_* */
  static const char* const causes[] = {"none", "flagged", "legacy_unknown", "producer_forbids"};
  const DLTensor* d = &t->dl_tensor;
  const char* forbids = NULL;
  const int32_t cause = dlpm_managed_read_only_cause(t, &forbids);
  char dtype[48];
  PyObject* r = PyDict_New();
  dlpm_status valid, passes;
  int32_t unique = 0;
  if (r == NULL) return NULL;
  dlpm_requirements anything;
  dlpm_dtype_name(d->dtype, dtype, sizeof dtype);
  /* The structure with the tensor's flags (padded sub-byte elements change the element size
   * its byte offset and span are checked with), as every import checks it */
  (void)dlpm_requirements_init(&anything, DLPM_REQUIREMENTS_VERSION);
  valid = dlpm_check_managed(t, &anything);
  /* The requirements' message, or the structure's: dlpm_last_error is per failure. */
  passes = valid == DLPM_OK ? dlpm_check_managed(t, req) : valid;
  if (put(r, "path", PyUnicode_FromString(paths[how->path >= 1 && how->path <= 3 ? how->path : 0])) ||
      put(r, "capsule", how->path == DLPM_PY_PATH_EXCHANGE_API
                            ? Py_NewRef(Py_None)
                            : PyUnicode_FromString(how->legacy ? "dltensor" : "dltensor_versioned")) ||
      put(r, "dlpack_version", how->legacy ? Py_NewRef(Py_None)
                                           : Py_BuildValue("(II)", how->dlpack_version.major, how->dlpack_version.minor)) ||
      put(r, "pre_1_0_call", PyBool_FromLong(how->pre_1_0_call)) ||
      put(r, "stream_order", PyUnicode_FromString(orders[how->stream_order >= 0 && how->stream_order <= 2 ? how->stream_order : 2])) ||
      put(r, "ready_stream", how->stream_order == DLPM_PY_ORDER_STREAM ? PyLong_FromVoidPtr(how->ready_stream) : Py_NewRef(Py_None)) ||
      put(r, "device", Py_BuildValue("(ii)", (int)d->device.device_type, (int)d->device.device_id)) ||
      put(r, "device_name", PyUnicode_FromString(dlpm_device_type_name(d->device.device_type))) ||
      put(r, "dtype", PyUnicode_FromString(dtype)) ||
      put(r, "dtype_code", Py_BuildValue("(iii)", (int)d->dtype.code, (int)d->dtype.bits, (int)d->dtype.lanes)) ||
      put(r, "ndim", PyLong_FromLong(d->ndim)))
    goto fail;
  /* shape and strides only for a tensor whose structure can be read */
  if (d->ndim >= 0 && d->ndim <= DLPM_MAX_NDIM && (d->ndim == 0 || d->shape != NULL)) {
    if (put(r, "shape", int64_tuple(d->shape, d->ndim)) ||
        put(r, "strides", d->strides ? int64_tuple(d->strides, d->ndim) : Py_NewRef(Py_None)))
      goto fail;
  } else if (put(r, "shape", Py_NewRef(Py_None)) || put(r, "strides", Py_NewRef(Py_None))) {
    goto fail;
  }
  if (put(r, "byte_offset", PyLong_FromUnsignedLongLong(d->byte_offset)) ||
      put(r, "data", PyLong_FromVoidPtr(d->data)) ||
      put(r, "read_only", PyBool_FromLong((t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0)) ||
      put(r, "read_only_cause", PyUnicode_FromString(causes[cause >= 0 && cause <= 3 ? cause : 1])) ||
      put(r, "read_only_reason", forbids ? PyUnicode_FromString(forbids) : Py_NewRef(Py_None)) ||
      put(r, "is_copied", PyBool_FromLong((t->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0)) ||
      put(r, "subbyte_padded", PyBool_FromLong((t->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0)) ||
      put(r, "valid", PyBool_FromLong(valid == DLPM_OK)) || put(r, "passes", PyBool_FromLong(passes == DLPM_OK)) ||
      put(r, "unique", valid != DLPM_OK || dlpm_is_unique(d, &unique) != DLPM_OK ? Py_NewRef(Py_None) : PyBool_FromLong(unique)) ||
      put(r, "itemsize", PyLong_FromSize_t(dlpm_storage_itemsize(d->dtype, (t->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0))) ||
      put(r, "coalesced", valid != DLPM_OK ? Py_NewRef(Py_None) : coalesced(t)) ||
      put(r, "reason", passes == DLPM_OK ? Py_NewRef(Py_None)
                                         : PyUnicode_FromFormat("%s (%s)", dlpm_last_error(), dlpm_status_string(passes))))
    goto fail;
  return r;
fail:
  Py_DECREF(r);
  return NULL;
}

static PyObject* inspect(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"", "dtype", "ndim", "shape", "order", "writable", "device", NULL};
  PyObject *obj, *dtype = Py_None, *ndim = Py_None, *shape = Py_None, *order = Py_None, *device = Py_None, *r;
  int writable = 0;
  int64_t want_shape[DLPM_MAX_NDIM];
  int32_t device_types[1];
  dlpm_requirements req;
  dlpm_py_options opts;
  dlpm_py_provenance how;
  DLManagedTensorVersioned* t = NULL;
  (void)module;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOOpO:inspect", keywords, &obj, &dtype, &ndim, &shape, &order,
                                   &writable, &device))
    return NULL;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  if (dtype != Py_None) {
    if (parse_dtype(dtype, "inspect", &req.dtype) != 0) return NULL;
    req.check_dtype = 1;
  }
  if (ndim != Py_None) {
    long long rank;
    if (dlpm_py_integer_in_range(ndim, "inspect: ndim", 0, DLPM_MAX_NDIM, NULL, &rank) != 0) return NULL;
    req.ndim = (int32_t)rank;
  }
  if (shape != Py_None) {
    Py_ssize_t n;
    if (!PyTuple_Check(shape)) {
      PyErr_SetString(PyExc_TypeError, "inspect: shape must be a tuple of extents (None: any)");
      return NULL;
    }
    if ((n = PyTuple_Size(shape)) > DLPM_MAX_NDIM) {
      PyErr_Format(PyExc_ValueError, "inspect: shape has %zd extents, more than the %d dimensions a tensor may have", n,
                   DLPM_MAX_NDIM);
      return NULL;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* e = PyTuple_GetItem(shape, i);
      char what[40];
      long long extent = -1; /* None: any extent (the requirement's wildcard) */
      snprintf(what, sizeof what, "inspect: shape[%d]", (int)i);
      if (e != Py_None && dlpm_py_integer_in_range(e, what, 0, INT64_MAX, NULL, &extent) != 0) return NULL;
      want_shape[i] = extent;
    }
    if (ndim != Py_None && req.ndim != (int32_t)n) {
      PyErr_SetString(PyExc_ValueError, "shape and ndim disagree");
      return NULL;
    }
    req.ndim = (int32_t)n;
    req.shape = want_shape;
  }
  if (order != Py_None) {
    Py_ssize_t size = 0;
    const char* o = PyUnicode_Check(order) ? PyUnicode_AsUTF8AndSize(order, &size) : NULL;
    if (o == NULL || size != 1 || strchr("CFA", o[0]) == NULL) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "order must be 'C', 'F' or 'A'");
      return NULL;
    }
    req.order = o[0];
  }
  if (device != Py_None) {
    DLDevice d;
    if (parse_device(device, "inspect", &d) != 0) return NULL;
    device_types[0] = (int32_t)d.device_type;
    req.device_types = device_types;
    req.num_device_types = 1;
    req.device_id = d.device_id;
  }
  req.writable = writable;
  if (dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION) != DLPM_OK) return NULL;
  how.version = DLPM_PY_PROVENANCE_VERSION;
  opts.validate = 0; /* described, not refused: describe() says what fails */
  opts.provenance = &how;
  if (dlpm_py_import(obj, NULL, &opts, &t) != DLPM_OK) return NULL;
  r = describe(t, &how, &req);
  dlpm_py_managed_delete(t); /* nothing is kept: the producer's deleter runs now */
  return r;
}

/* ---- message_plan ---------------------------------------------------------------------- */

/* message_plan(x, /, *, receive=False, cuda_aware=False): how x travels as a message, the
 * core's one admission (dlpm_plan_message: x checked once, then whole-byte elements, memory
 * the transport moves, and for a receive not READ_ONLY and no element reached twice), for
 * dlpack_mdspan.mpi. A dict: element0 (the address), loops ((extent, byte_step) per loop,
 * outermost first), block, dtype_code (code, bits, lanes), itemsize, is_copied, and owner:
 * the imported tensor the plan describes (dlpm_py_owner_new), which the caller keeps as long
 * as it uses element0. x alone does not keep that memory where x's export owns it (a
 * producer that makes its tensor on export: only the capsule holds it). A refusal
 * raises, in the core's words: BufferError for memory the transport cannot move or a
 * READ_ONLY receive, ValueError for the rest (an invalid tensor, sub-byte elements, a
 * layout that reaches an element twice). */
static PyObject* message_plan(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"", "receive", "cuda_aware", NULL};
  PyObject *obj, *loops, *r;
  int receive = 0, cuda_aware = 0;
  dlpm_py_options opts;
  dlpm_message_plan plan;
  dlpm_status s;
  DLManagedTensorVersioned* t = NULL;
  (void)module;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$pp:message_plan", keywords, &obj, &receive, &cuda_aware)) return NULL;
  if (dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION) != DLPM_OK) return NULL;
  opts.validate = 0; /* checked once, by dlpm_plan_message */
  opts.writable = receive; /* a producer's bit that forbids writes (requires_grad) is refused in its own words */
  opts.semantic_bits_option = ""; /* whose remedy is the producer's: Python callers have no option to set */
  /* A CUDA-aware MPI reads device memory with no stream to order that after the producer's
   * work: the host waits for it first (memory no stream orders is as before). */
  opts.ready_on_host = cuda_aware;
  if (dlpm_py_import(obj, NULL, &opts, &t) != DLPM_OK) return NULL;
  plan.version = DLPM_MESSAGE_PLAN_VERSION;
  s = dlpm_plan_message(&t->dl_tensor, t->flags, receive ? DLPM_MESSAGE_RECEIVE : DLPM_MESSAGE_SEND, cuda_aware, &plan);
  if (s != DLPM_OK) {
    PyErr_Format(s == DLPM_E_DEVICE_MISMATCH || s == DLPM_E_READ_ONLY ? PyExc_BufferError : PyExc_ValueError, "%s (%s)",
                 dlpm_last_error(), dlpm_status_string(s));
    dlpm_py_managed_delete(t);
    return NULL;
  }
  if ((loops = PyTuple_New(plan.loops)) == NULL) goto fail;
  for (int32_t m = 0; m < plan.loops; ++m) {
    PyObject* loop = Py_BuildValue("(LL)", (long long)plan.extents[m], (long long)plan.byte_steps[m]);
    if (loop == NULL) {
      Py_DECREF(loops);
      goto fail;
    }
    PyTuple_SetItem(loops, m, loop);
  }
  if ((r = PyDict_New()) == NULL) {
    Py_DECREF(loops);
    goto fail;
  }
  if (put(r, "loops", loops) || put(r, "element0", PyLong_FromVoidPtr(plan.element0)) ||
      put(r, "block", PyLong_FromLongLong(plan.block)) ||
      put(r, "dtype_code", Py_BuildValue("(iii)", (int)plan.dtype.code, (int)plan.dtype.bits, (int)plan.dtype.lanes)) ||
      put(r, "itemsize", PyLong_FromUnsignedLongLong(plan.itemsize)) ||
      put(r, "is_copied", PyBool_FromLong((t->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0))) {
    Py_DECREF(r);
    goto fail;
  }
  /* The owner takes t (and deletes it on failure): element0 lives as long as it does. */
  if (put(r, "owner", dlpm_py_owner_new(t))) {
    Py_DECREF(r);
    return NULL;
  }
  return r;
fail:
  dlpm_py_managed_delete(t);
  return NULL;
}

/* ---- the module ----------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))from_dlpack, METH_VARARGS | METH_KEYWORDS,
     "from_dlpack(x, /, *, copy=None, device=None): x imported (validated) and re-exported as a dlpack_mdspan.Tensor."},
    {"message_plan", (PyCFunction)(void (*)(void))message_plan, METH_VARARGS | METH_KEYWORDS,
     "message_plan(x, /, *, receive=False, cuda_aware=False): how x travels as a message (the core's admission), or the "
     "refusal."},
    {"inspect", (PyCFunction)(void (*)(void))inspect, METH_VARARGS | METH_KEYWORDS,
     "inspect(x, /, *, dtype=None, ndim=None, shape=None, order=None, writable=False, device=None): what x hands over, as "
     "a dict."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "dlpack_mdspan._core",
                                        "The dlpack_mdspan package's extension (see dlpack_mdspan).", -1, methods,
                                        NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void) {
  PyObject* m = PyModule_Create(&module_def);
  PyObject* type;
  if (m == NULL) return NULL;
  if ((type = dlpm_py_tensor_type()) == NULL || PyModule_AddObject(m, "Tensor", type) != 0) {
    Py_XDECREF(type);
    Py_DECREF(m);
    return NULL;
  }
  if ((type = dlpm_py_invalid_stream_error()) == NULL || PyModule_AddObject(m, "InvalidStreamError", type) != 0) {
    Py_XDECREF(type);
    Py_DECREF(m);
    return NULL;
  }
  if ((type = dlpm_py_copy_forbidden_error()) == NULL || PyModule_AddObject(m, "CopyForbiddenError", type) != 0) {
    Py_XDECREF(type);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
