/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpm_abi3_smoke: the Python component through the limited API (Py_LIMITED_API is
 * 0x030A0000, set by Python3_add_library(USE_SABI 3.10)), one binary for every Python from
 * 3.10 on. It uses only the component's own type: no NumPy in these interpreters.
 *
 *   make(rows, cols)          float32 values 0, 1, 2, ... in C memory, as a dlpack_mdspan.Tensor
 *   inspect(obj)              dlpm_py_import: (shape, strides, dtype, readonly, version)
 *   get(obj, i, j)            element [i, j] of a rank-2 float32 tensor
 *   put(obj, i, j, value)     writes element [i, j] of a writable rank-2 float32 tensor
 *   check(obj, code, bits, ndim)  True, or the component's refusal
 *   released()                how many make() buffers have been freed
 */
#include <dlpack_mdspan_python.h>

#include <stdlib.h>

#if !defined(Py_LIMITED_API) || Py_LIMITED_API != 0x030A0000
#error "dlpm_abi3_smoke must be built against the limited API of Python 3.10"
#endif

static long released_count;

static void release(void* memory) {
  free(memory);
  ++released_count;
}

static PyObject* make(PyObject* self, PyObject* args) {
  long long rows, cols;
  const DLDataType f32 = {kDLFloat, 32, 1};
  const DLDevice cpu = {kDLCPU, 0};
  DLManagedTensorVersioned* t = NULL;
  float* data;
  dlpm_status s;
  (void)self;
  if (!PyArg_ParseTuple(args, "LL", &rows, &cols)) return NULL;
  if (rows < 0 || cols < 0 || rows > 4096 || cols > 4096) {
    PyErr_SetString(PyExc_ValueError, "make: extents must be in [0, 4096]");
    return NULL;
  }
  if (!(data = malloc(sizeof(float) * (size_t)(rows * cols + 1)))) return PyErr_NoMemory();
  for (long long k = 0; k < rows * cols; ++k) data[k] = (float)k;
  s = dlpm_managed_new(data, 2, (const int64_t[]){rows, cols}, NULL, f32, cpu, 0, 0, release, data, &t);
  if (s != DLPM_OK) {
    free(data);
    return dlpm_py_raise(s);
  }
  return dlpm_py_tensor_new(t);
}

static PyObject* int64_tuple(const int64_t* values, int32_t n) {
  PyObject* t = PyTuple_New(n);
  for (int32_t i = 0; t && i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(values[i]);
    if (!v || PyTuple_SetItem(t, i, v) != 0) {
      Py_DECREF(t);
      return NULL;
    }
  }
  return t;
}

static PyObject* inspect(PyObject* self, PyObject* obj) {
  DLManagedTensorVersioned* t = NULL;
  const DLTensor* d;
  int64_t strides[64], step = 1;
  PyObject *shape, *stride_tuple, *result = NULL;
  (void)self;
  if (dlpm_py_import(obj, NULL, NULL, &t) != DLPM_OK) return NULL;
  d = &t->dl_tensor;
  for (int32_t r = d->ndim - 1; r >= 0; --r) { /* NULL strides: row-major */
    strides[r] = d->strides ? d->strides[r] : step;
    step *= d->shape[r];
  }
  shape = int64_tuple(d->shape, d->ndim);
  stride_tuple = int64_tuple(strides, d->ndim);
  if (shape && stride_tuple)
    result = Py_BuildValue("(OO(iii)O(II))", shape, stride_tuple, (int)d->dtype.code, (int)d->dtype.bits,
                           (int)d->dtype.lanes, (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? Py_True : Py_False,
                           (unsigned)t->version.major, (unsigned)t->version.minor);
  Py_XDECREF(shape);
  Py_XDECREF(stride_tuple);
  dlpm_managed_delete(t);
  return result;
}

/* A rank-2 float32 host tensor, or NULL with the component's exception set. */
static DLManagedTensorVersioned* import_matrix(PyObject* obj, int writable) {
  dlpm_requirements req;
  DLManagedTensorVersioned* t = NULL;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.check_dtype = 1;
  req.dtype = (DLDataType){kDLFloat, 32, 1};
  req.ndim = 2;
  req.writable = writable;
  return dlpm_py_import(obj, &req, NULL, &t) == DLPM_OK ? t : NULL;
}

static float* element(DLManagedTensorVersioned* t, long long i, long long j) {
  const int64_t index[2] = {i, j};
  int64_t offset = 0;
  if (dlpm_element_offset(&t->dl_tensor, index, &offset) != DLPM_OK) {
    dlpm_py_raise(DLPM_E_INVALID_ARGUMENT);
    return NULL;
  }
  return (float*)((char*)t->dl_tensor.data + offset);
}

static PyObject* get(PyObject* self, PyObject* args) {
  PyObject* obj;
  long long i, j;
  DLManagedTensorVersioned* t;
  float* e;
  PyObject* result = NULL;
  (void)self;
  if (!PyArg_ParseTuple(args, "OLL", &obj, &i, &j) || !(t = import_matrix(obj, 0))) return NULL;
  if ((e = element(t, i, j)) != NULL) result = PyFloat_FromDouble(*e);
  dlpm_managed_delete(t);
  return result;
}

static PyObject* put(PyObject* self, PyObject* args) {
  PyObject* obj;
  long long i, j;
  double value;
  DLManagedTensorVersioned* t;
  float* e;
  (void)self;
  if (!PyArg_ParseTuple(args, "OLLd", &obj, &i, &j, &value) || !(t = import_matrix(obj, 1))) return NULL;
  if ((e = element(t, i, j)) != NULL) *e = (float)value;
  dlpm_managed_delete(t);
  if (!e) return NULL;
  Py_RETURN_NONE;
}

static PyObject* check(PyObject* self, PyObject* args) {
  PyObject* obj;
  int code, bits, ndim;
  dlpm_requirements req;
  DLManagedTensorVersioned* t = NULL;
  (void)self;
  if (!PyArg_ParseTuple(args, "Oiii", &obj, &code, &bits, &ndim)) return NULL;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.check_dtype = 1;
  req.dtype = (DLDataType){(uint8_t)code, (uint8_t)bits, 1};
  req.ndim = ndim;
  if (dlpm_py_import(obj, &req, NULL, &t) != DLPM_OK) return NULL;
  dlpm_managed_delete(t);
  Py_RETURN_TRUE;
}

static PyObject* released(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLong(released_count);
}

static PyMethodDef methods[] = {
    {"make", make, METH_VARARGS, "make(rows, cols): float32 0, 1, 2, ... as a dlpack_mdspan.Tensor"},
    {"inspect", inspect, METH_O, "(shape, strides, dtype, readonly, version) of an imported tensor"},
    {"get", get, METH_VARARGS, "get(obj, i, j): element [i, j] of a rank-2 float32 tensor"},
    {"put", put, METH_VARARGS, "put(obj, i, j, value): writes element [i, j]"},
    {"check", check, METH_VARARGS, "check(obj, code, bits, ndim): True, or the refusal"},
    {"released", released, METH_NOARGS, "how many make() buffers have been freed"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "dlpm_abi3_smoke", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_dlpm_abi3_smoke(void) { return PyModule_Create(&module); }
