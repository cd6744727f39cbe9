/* dlpm_interop: a CPython extension written in C against the dlpack_mdspan facade.
 *
 *   Buffer(shape, dtype, readonly=False)  memory allocated in C++ (buffer.cpp), exported
 *                                         zero-copy through __dlpack__ / __dlpack_device__
 *   consume(obj, ...)                     imports any __dlpack__ object through dlpm_check
 *   released()                            how many exported tensors have been released
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack_mdspan.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

DLManagedTensorVersioned* dlpm_test_buffer_new(int32_t ndim, const int64_t* shape, DLDataType dtype);

static atomic_long released_count;

/* ---- helpers -------------------------------------------------------------------------- */

static int dtype_from_name(const char* name, DLDataType* out) {
  static const struct { const char* name; uint8_t code, bits; } table[] = {
      {"float32", kDLFloat, 32}, {"float64", kDLFloat, 64}, {"int32", kDLInt, 32},
      {"int64", kDLInt, 64},     {"uint8", kDLUInt, 8},     {"bool", kDLBool, 8},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    if (strcmp(name, table[i].name) == 0) {
      out->code = table[i].code;
      out->bits = table[i].bits;
      out->lanes = 1;
      return 1;
    }
  }
  return 0;
}

/* Raises the facade's failure as a Python exception: layout and type mismatches are
 * TypeError, everything else (read-only, version, malformed tensors) BufferError. */
static PyObject* raise_status(dlpm_status s) {
  PyObject* kind = PyExc_BufferError;
  switch (s) {
    case DLPM_E_DTYPE_MISMATCH: case DLPM_E_NDIM_MISMATCH: case DLPM_E_SHAPE_MISMATCH:
    case DLPM_E_NON_COMPACT_STRIDES: case DLPM_E_DEVICE_MISMATCH: case DLPM_E_DEVICE_ID_MISMATCH:
      kind = PyExc_TypeError;
      break;
    default: break;
  }
  PyErr_Format(kind, "%s (%s)", dlpm_last_error(), dlpm_status_string(s));
  return NULL;
}

/* Element (flat row-major position `flat`) of a validated tensor: its byte address. */
static char* element_address(const DLTensor* t, int64_t flat) {
  int64_t index[64];
  int64_t offset = 0;
  for (int32_t r = t->ndim - 1; r >= 0; --r) {
    index[r] = flat % t->shape[r];
    flat /= t->shape[r];
  }
  if (dlpm_element_offset(t, index, &offset) != DLPM_OK) return NULL;
  return (char*)t->data + offset;
}

static PyObject* read_element(const DLTensor* t, const char* p) {
  const DLDataType d = t->dtype;
  if (d.lanes != 1) goto unsupported;
  switch (d.code) {
    case kDLBool: if (d.bits == 8) return PyBool_FromLong(*(const uint8_t*)p != 0); break;
    case kDLInt:
      if (d.bits == 8) return PyLong_FromLong(*(const int8_t*)p);
      if (d.bits == 16) return PyLong_FromLong(*(const int16_t*)p);
      if (d.bits == 32) return PyLong_FromLong(*(const int32_t*)p);
      if (d.bits == 64) return PyLong_FromLongLong(*(const int64_t*)p);
      break;
    case kDLUInt:
      if (d.bits == 8) return PyLong_FromUnsignedLong(*(const uint8_t*)p);
      if (d.bits == 16) return PyLong_FromUnsignedLong(*(const uint16_t*)p);
      if (d.bits == 32) return PyLong_FromUnsignedLong(*(const uint32_t*)p);
      if (d.bits == 64) return PyLong_FromUnsignedLongLong(*(const uint64_t*)p);
      break;
    case kDLFloat:
      if (d.bits == 32) return PyFloat_FromDouble(*(const float*)p);
      if (d.bits == 64) return PyFloat_FromDouble(*(const double*)p);
      break;
    case kDLBfloat:
      if (d.bits == 16) { /* bfloat16 is the top half of a float32 */
        uint32_t bits = (uint32_t)(*(const uint16_t*)p) << 16;
        float f;
        memcpy(&f, &bits, sizeof f);
        return PyFloat_FromDouble(f);
      }
      break;
    case kDLComplex:
      if (d.bits == 64) return PyComplex_FromDoubles(((const float*)p)[0], ((const float*)p)[1]);
      if (d.bits == 128) return PyComplex_FromDoubles(((const double*)p)[0], ((const double*)p)[1]);
      break;
    default: break;
  }
unsupported:
  PyErr_Format(PyExc_TypeError, "cannot read dtype (code %u, bits %u, lanes %u)", d.code, d.bits, d.lanes);
  return NULL;
}

static int write_element(const DLTensor* t, char* p, PyObject* value) {
  const DLDataType d = t->dtype;
  if (d.code == kDLFloat && d.bits == 32) *(float*)p = (float)PyFloat_AsDouble(value);
  else if (d.code == kDLFloat && d.bits == 64) *(double*)p = PyFloat_AsDouble(value);
  else if (d.code == kDLInt && d.bits == 32) *(int32_t*)p = (int32_t)PyLong_AsLong(value);
  else if (d.code == kDLInt && d.bits == 64) *(int64_t*)p = PyLong_AsLongLong(value);
  else if (d.code == kDLUInt && d.bits == 8) *(uint8_t*)p = (uint8_t)PyLong_AsLong(value);
  else if (d.code == kDLBool && d.bits == 8) *(uint8_t*)p = (uint8_t)PyObject_IsTrue(value);
  else {
    PyErr_Format(PyExc_TypeError, "cannot write dtype (code %u, bits %u)", d.code, d.bits);
    return -1;
  }
  return PyErr_Occurred() ? -1 : 0;
}

/* ---- Buffer: the producer ---------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  DLManagedTensorVersioned* base; /* owns the C++ memory */
  int readonly;
} BufferObject;

/* release() of a zero-copy export: drops the reference that kept the Buffer alive. It may
 * run on any thread, without the GIL, or after interpreter shutdown (then nothing is safe
 * to touch, and the object is leaked rather than freed without the interpreter). */
static void release_buffer_reference(void* ctx) {
  atomic_fetch_add(&released_count, 1);
  if (!Py_IsInitialized()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF((PyObject*)ctx);
  PyGILState_Release(gil);
}

/* release() of a copy export: frees the copied bytes. */
static void release_copy(void* ctx) {
  atomic_fetch_add(&released_count, 1);
  free(ctx);
}

static void versioned_capsule_destructor(PyObject* capsule) {
  /* A consumer renames the capsule when it takes ownership; only an unconsumed capsule
   * still owns its tensor. */
  if (PyCapsule_IsValid(capsule, "dltensor_versioned"))
    dlpm_managed_delete((DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned"));
}

static void legacy_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* t = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
    if (t->deleter) t->deleter(t);
  }
}

static int Buffer_init(BufferObject* self, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"shape", "dtype", "readonly", NULL};
  PyObject* shape_obj = NULL;
  const char* dtype_name = "float32";
  int readonly = 0;
  int64_t shape[3];
  DLDataType dtype;
  Py_ssize_t ndim;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|sp", keywords, &shape_obj, &dtype_name, &readonly)) return -1;
  if (!PyTuple_Check(shape_obj) || (ndim = PyTuple_Size(shape_obj)) > 3) {
    PyErr_SetString(PyExc_ValueError, "shape must be a tuple of at most 3 extents");
    return -1;
  }
  for (Py_ssize_t r = 0; r < ndim; ++r) shape[r] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape_obj, r));
  if (PyErr_Occurred()) return -1;
  if (!dtype_from_name(dtype_name, &dtype)) {
    PyErr_Format(PyExc_ValueError, "unsupported dtype '%s'", dtype_name);
    return -1;
  }
  if (self->base) { /* exports may still point into the current memory */
    PyErr_SetString(PyExc_TypeError, "a Buffer cannot be re-initialised");
    return -1;
  }
  self->base = dlpm_test_buffer_new((int32_t)ndim, shape, dtype);
  if (!self->base) {
    PyErr_SetString(PyExc_MemoryError, "could not allocate the C++ buffer");
    return -1;
  }
  self->readonly = readonly;
  return 0;
}

static void Buffer_dealloc(BufferObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  dlpm_managed_delete(self->base);
  type->tp_free((PyObject*)self);
  Py_DECREF(type); /* heap types are referenced by their instances */
}

static PyObject* Buffer_dlpack(BufferObject* self, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  const DLTensor* base = &self->base->dl_tensor;
  DLManagedTensorVersioned* exported = NULL;
  int versioned = 0, copying;
  dlpm_status s;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO", keywords, &stream, &max_version, &dl_device, &copy)) return NULL;
  if (stream != Py_None) {
    PyErr_SetString(PyExc_BufferError, "stream must be None for CPU tensors");
    return NULL;
  }
  if (dl_device != Py_None) {
    int type = 0, id = 0;
    if (!PyArg_ParseTuple(dl_device, "ii", &type, &id)) return NULL;
    if (type != kDLCPU || id != 0) {
      PyErr_Format(PyExc_BufferError, "cannot export to device (%d, %d): this buffer is on the CPU and is not copied across devices", type, id);
      return NULL;
    }
  }
  if (max_version != Py_None) {
    long major = PyLong_AsLong(PyTuple_GetItem(max_version, 0));
    if (PyErr_Occurred()) return NULL;
    versioned = major >= 1;
  }
  copying = copy == Py_True;

  if (copying) {
    int64_t nbytes = 0;
    void* bytes;
    if ((s = dlpm_nbytes(base, &nbytes)) != DLPM_OK) return raise_status(s);
    bytes = malloc(nbytes > 0 ? (size_t)nbytes : 1);
    if (!bytes) return PyErr_NoMemory();
    memcpy(bytes, base->data, (size_t)nbytes); /* the C++ buffer is compact row-major */
    s = dlpm_managed_new(bytes, base->ndim, base->shape, base->strides, base->dtype, base->device, 0,
                         DLPACK_FLAG_BITMASK_IS_COPIED, release_copy, bytes, &exported);
    if (s != DLPM_OK) {
      free(bytes);
      return raise_status(s);
    }
  } else {
    Py_INCREF(self); /* the export keeps the Buffer, and so its memory, alive */
    s = dlpm_managed_new(base->data, base->ndim, base->shape, base->strides, base->dtype, base->device, 0,
                         self->readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0, release_buffer_reference, self, &exported);
    if (s != DLPM_OK) {
      Py_DECREF(self);
      return raise_status(s);
    }
  }

  if (versioned) {
    PyObject* capsule = PyCapsule_New(exported, "dltensor_versioned", versioned_capsule_destructor);
    if (!capsule) dlpm_managed_delete(exported);
    return capsule;
  } else {
    DLManagedTensor* legacy = NULL;
    PyObject* capsule;
    if ((s = dlpm_to_legacy(exported, &legacy)) != DLPM_OK) {
      PyObject* error = raise_status(s); /* READ_ONLY cannot travel in a legacy capsule */
      dlpm_managed_delete(exported);
      return error;
    }
    capsule = PyCapsule_New(legacy, "dltensor", legacy_capsule_destructor);
    if (!capsule) legacy->deleter(legacy);
    return capsule;
  }
}

static PyObject* Buffer_data_ptr(BufferObject* self, void* closure) {
  (void)closure;
  return PyLong_FromVoidPtr(self->base->dl_tensor.data);
}

static PyGetSetDef Buffer_getset[] = {
    {"data_ptr", (getter)Buffer_data_ptr, NULL, "Address of the C++ memory.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject* Buffer_dlpack_device(BufferObject* self, PyObject* unused) {
  (void)unused;
  return Py_BuildValue("(ii)", (int)self->base->dl_tensor.device.device_type, (int)self->base->dl_tensor.device.device_id);
}

static PyObject* Buffer_getitem(BufferObject* self, PyObject* key) {
  Py_ssize_t flat = PyLong_AsSsize_t(key);
  int64_t n = 0;
  char* p;
  if (PyErr_Occurred()) return NULL;
  dlpm_numel(&self->base->dl_tensor, &n);
  if (flat < 0 || flat >= n) {
    PyErr_SetString(PyExc_IndexError, "flat index out of range");
    return NULL;
  }
  if (!(p = element_address(&self->base->dl_tensor, flat))) return raise_status(DLPM_E_INVALID_ARGUMENT);
  return read_element(&self->base->dl_tensor, p);
}

static int Buffer_setitem(BufferObject* self, PyObject* key, PyObject* value) {
  Py_ssize_t flat = PyLong_AsSsize_t(key);
  int64_t n = 0;
  char* p;
  if (PyErr_Occurred()) return -1;
  dlpm_numel(&self->base->dl_tensor, &n);
  if (value == NULL || flat < 0 || flat >= n) {
    PyErr_SetString(PyExc_IndexError, "flat index out of range");
    return -1;
  }
  if (!(p = element_address(&self->base->dl_tensor, flat))) return -1;
  return write_element(&self->base->dl_tensor, p, value);
}

static PyMethodDef Buffer_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))Buffer_dlpack, METH_VARARGS | METH_KEYWORDS, "Export as a DLPack capsule."},
    {"__dlpack_device__", (PyCFunction)Buffer_dlpack_device, METH_NOARGS, "(device_type, device_id)."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Buffer_slots[] = {
    {Py_tp_doc, (void*)"A buffer allocated in C++, exported zero-copy through DLPack."},
    {Py_tp_new, (void*)PyType_GenericNew},
    {Py_tp_init, (void*)Buffer_init},
    {Py_tp_dealloc, (void*)Buffer_dealloc},
    {Py_tp_methods, (void*)Buffer_methods},
    {Py_tp_getset, (void*)Buffer_getset},
    {Py_mp_subscript, (void*)Buffer_getitem},
    {Py_mp_ass_subscript, (void*)Buffer_setitem},
    {0, NULL},
};

static PyType_Spec Buffer_spec = {"dlpm_interop.Buffer", sizeof(BufferObject), 0, Py_TPFLAGS_DEFAULT, Buffer_slots};

/* ---- consume: the consumer ------------------------------------------------------------ */

static PyObject* get_capsule(PyObject* obj) {
  PyObject *method, *kwargs, *empty, *capsule;
  if (!(method = PyObject_GetAttrString(obj, "__dlpack__"))) return NULL;
  kwargs = Py_BuildValue("{s:(ii)}", "max_version", 1, (int)DLPACK_MINOR_VERSION);
  empty = PyTuple_New(0);
  capsule = (kwargs && empty) ? PyObject_Call(method, empty, kwargs) : NULL;
  if (!capsule && PyErr_ExceptionMatches(PyExc_TypeError)) {
    /* A pre-1.0 producer (NumPy 1.x, PyTorch 1.x) has no max_version keyword. */
    PyErr_Clear();
    capsule = PyObject_CallNoArgs(method);
  }
  Py_XDECREF(kwargs);
  Py_XDECREF(empty);
  Py_DECREF(method);
  return capsule;
}

static PyObject* consume(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"obj", "dtype", "ndim", "shape", "order", "writable", "trust_legacy_writable", "write", NULL};
  PyObject *obj, *dtype_obj = Py_None, *shape_obj = Py_None, *write = Py_None, *capsule, *result = NULL;
  PyObject *values = NULL, *shape_tuple = NULL, *strides_tuple = NULL;
  int ndim = -1, writable = 0, trust_legacy_writable = 0, was_versioned;
  const char* order = NULL;
  int64_t want_shape[64], n = 0;
  DLManagedTensorVersioned* tensor = NULL;
  dlpm_requirements req;
  dlpm_status s;
  (void)module;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OiOzppO", keywords, &obj, &dtype_obj, &ndim, &shape_obj, &order,
                                   &writable, &trust_legacy_writable, &write))
    return NULL;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.ndim = ndim;
  req.writable = writable;
  if (dtype_obj != Py_None) {
    unsigned code, bits, lanes;
    if (!PyArg_ParseTuple(dtype_obj, "III", &code, &bits, &lanes)) return NULL;
    req.check_dtype = 1;
    req.dtype.code = (uint8_t)code;
    req.dtype.bits = (uint8_t)bits;
    req.dtype.lanes = (uint16_t)lanes;
  }
  if (shape_obj != Py_None) {
    Py_ssize_t len = PyTuple_Size(shape_obj);
    if (len < 0 || len > 64 || len != ndim) {
      PyErr_SetString(PyExc_ValueError, "shape needs ndim entries");
      return NULL;
    }
    for (Py_ssize_t r = 0; r < len; ++r) want_shape[r] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape_obj, r));
    if (PyErr_Occurred()) return NULL;
    req.shape = want_shape;
  }
  if (order) req.order = order[0];

  if (!(capsule = get_capsule(obj))) return NULL;
  was_versioned = PyCapsule_IsValid(capsule, "dltensor_versioned");
  if (was_versioned) {
    tensor = (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
    /* Rename first: if that fails we must not own the tensor. */
    if (!tensor || PyCapsule_SetName(capsule, "used_dltensor_versioned") != 0) goto capsule_error;
    s = dlpm_managed_check_version(tensor); /* on a major mismatch the deleter has run */
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* legacy = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
    if (!legacy || PyCapsule_SetName(capsule, "used_dltensor") != 0) goto capsule_error;
    s = trust_legacy_writable ? dlpm_from_legacy_writable(legacy, &tensor) : dlpm_from_legacy(legacy, &tensor);
  } else {
    PyErr_SetString(PyExc_TypeError, "__dlpack__ returned neither a 'dltensor' nor a 'dltensor_versioned' capsule");
    goto capsule_error;
  }
  Py_DECREF(capsule);
  if (s != DLPM_OK) return raise_status(s);

  /* From here the tensor is ours: every path ends in exactly one dlpm_managed_delete. */
  if ((s = dlpm_check_managed(tensor, &req)) != DLPM_OK) {
    raise_status(s);
    goto done;
  }
  {
    const DLTensor* t = &tensor->dl_tensor;
    dlpm_numel(t, &n);
    values = PyList_New((Py_ssize_t)n);
    shape_tuple = PyTuple_New(t->ndim);
    strides_tuple = PyTuple_New(t->ndim);
    if (!values || !shape_tuple || !strides_tuple) goto done;
    for (int32_t r = 0; r < t->ndim; ++r) {
      PyTuple_SET_ITEM(shape_tuple, r, PyLong_FromLongLong(t->shape[r]));
      PyTuple_SET_ITEM(strides_tuple, r, t->strides ? PyLong_FromLongLong(t->strides[r]) : Py_NewRef(Py_None));
    }
    for (int64_t i = 0; i < n; ++i) {
      const char* p = element_address(t, i);
      PyObject* v = p ? read_element(t, p) : raise_status(DLPM_E_INVALID_ARGUMENT);
      if (!v) goto done;
      PyList_SET_ITEM(values, (Py_ssize_t)i, v);
    }
    if (write != Py_None) {
      char* p;
      if (!writable || n == 0) {
        PyErr_SetString(PyExc_ValueError, "write= needs writable=True and a non-empty tensor");
        goto done;
      }
      if (!(p = element_address(t, 0)) || write_element(t, p, write) != 0) goto done;
    }
    result = Py_BuildValue("{s:O,s:O,s:O,s:O,s:O,s:O,s:(III),s:K}", "values", values, "shape", shape_tuple, "strides",
                           strides_tuple, "read_only", (tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? Py_True : Py_False,
                           "copied", (tensor->flags & DLPACK_FLAG_BITMASK_IS_COPIED) ? Py_True : Py_False,
                           "versioned", was_versioned ? Py_True : Py_False, "dtype", (unsigned)t->dtype.code,
                           (unsigned)t->dtype.bits, (unsigned)t->dtype.lanes, "byte_offset",
                           (unsigned long long)t->byte_offset);
  }
done:
  Py_XDECREF(values);
  Py_XDECREF(shape_tuple);
  Py_XDECREF(strides_tuple);
  dlpm_managed_delete(tensor);
  return result;

capsule_error:
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, "could not take the DLPack capsule (rename failed)");
  Py_DECREF(capsule);
  return NULL;
}

static PyObject* released(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  return PyLong_FromLong(atomic_load(&released_count));
}

static PyMethodDef module_methods[] = {
    {"consume", (PyCFunction)(void (*)(void))consume, METH_VARARGS | METH_KEYWORDS,
     "Import obj through __dlpack__ with the given requirements; returns values, shape, strides, flags."},
    {"released", released, METH_NOARGS, "Number of exported tensors released so far."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "dlpm_interop", NULL, -1, module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_dlpm_interop(void) {
  PyObject *m, *type;
  if (!(m = PyModule_Create(&module_def))) return NULL;
  if (!(type = PyType_FromSpec(&Buffer_spec)) || PyModule_AddObject(m, "Buffer", type) < 0) {
    Py_XDECREF(type);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
