/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* consumer_ext: a CPython extension that knows dlpack_mdspan only as an installed package
 * (CMake: dlpack_mdspan::python; or pkg-config dlpack_mdspan_python). No capsule code.
 *
 *   make(n)               n float32 ones in C memory, as a dlpack_mdspan.Tensor
 *   double_in_place(obj)  imports a writable rank-1 float32 tensor and doubles it in place
 *   total(obj)            imports a rank-1 float32 tensor (read-only is fine) and sums it
 *   address(obj)          the address of the first element of any tensor obj exports
 *   released()            how many make() buffers have been freed
 */
#include <dlpack_mdspan_python.h>

#include <stdlib.h>

static long released_count;

static void release(void* memory) {
  free(memory);
  ++released_count; /* the releases in this test run under the GIL */
}

static PyObject* make(PyObject* self, PyObject* arg) {
  const long long n = PyLong_AsLongLong(arg);
  const DLDataType f32 = {kDLFloat, 32, 1};
  const DLDevice cpu = {kDLCPU, 0};
  DLManagedTensorVersioned* t = NULL;
  float* data;
  dlpm_status s;
  (void)self;
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (n < 0 || n > (1 << 24)) {
    PyErr_SetString(PyExc_ValueError, "make(n): n must be in [0, 2**24]");
    return NULL;
  }
  /* 64-byte aligned, as JAX and TensorFlow want for a zero-copy import. */
  if (!(data = aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64 + 64))) return PyErr_NoMemory();
  for (long long i = 0; i < n; ++i) data[i] = 1.0f;
  s = dlpm_managed_new(data, 1, (const int64_t[]){n}, NULL, f32, cpu, 0, 0, release, data, &t);
  if (s != DLPM_OK) {
    free(data);
    return dlpm_py_raise(s);
  }
  return dlpm_py_tensor_new(t); /* takes t, even on failure */
}

/* A rank-1 float32 host tensor from obj, or NULL with the component's exception set. */
static DLManagedTensorVersioned* import_float32(PyObject* obj, int writable) {
  const int32_t cpu = kDLCPU;
  dlpm_requirements req;
  DLManagedTensorVersioned* t = NULL;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.check_dtype = 1;
  req.dtype = (DLDataType){kDLFloat, 32, 1};
  req.ndim = 1;
  req.device_types = &cpu;
  req.num_device_types = 1;
  req.writable = writable;
  return dlpm_py_import(obj, &req, NULL, &t) == DLPM_OK ? t : NULL;
}

static float* element(const DLTensor* t, int64_t i) {
  const int64_t step = t->strides ? t->strides[0] : 1;
  return (float*)((char*)t->data + t->byte_offset) + i * step;
}

static PyObject* double_in_place(PyObject* self, PyObject* obj) {
  DLManagedTensorVersioned* t = import_float32(obj, 1);
  (void)self;
  if (!t) return NULL;
  for (int64_t i = 0; i < t->dl_tensor.shape[0]; ++i) *element(&t->dl_tensor, i) *= 2.0f;
  dlpm_managed_delete(t);
  Py_RETURN_NONE;
}

static PyObject* total(PyObject* self, PyObject* obj) {
  DLManagedTensorVersioned* t = import_float32(obj, 0);
  double sum = 0;
  (void)self;
  if (!t) return NULL;
  for (int64_t i = 0; i < t->dl_tensor.shape[0]; ++i) sum += *element(&t->dl_tensor, i);
  dlpm_managed_delete(t);
  return PyFloat_FromDouble(sum);
}

static PyObject* address(PyObject* self, PyObject* obj) {
  DLManagedTensorVersioned* t = NULL;
  PyObject* result;
  (void)self;
  if (dlpm_py_import(obj, NULL, NULL, &t) != DLPM_OK) return NULL;
  result = PyLong_FromVoidPtr((char*)t->dl_tensor.data + t->dl_tensor.byte_offset);
  dlpm_managed_delete(t);
  return result;
}

static PyObject* released(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLong(released_count);
}

static PyMethodDef methods[] = {
    {"make", make, METH_O, "make(n): n float32 ones as a dlpack_mdspan.Tensor"},
    {"double_in_place", double_in_place, METH_O, "doubles a writable rank-1 float32 tensor in place"},
    {"total", total, METH_O, "the sum of a rank-1 float32 tensor"},
    {"address", address, METH_O, "the address of a tensor's first element"},
    {"released", released, METH_NOARGS, "how many make() buffers have been freed"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "consumer_ext", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_consumer_ext(void) { return PyModule_Create(&module); }
