/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpm_bench: the shipped Python component (dlpack_mdspan::python, dlpack_mdspan_python.h)
 * as a benchmark extension, timed by bench_py.py against nanobind's ndarray argument,
 * tvm_ffi.from_dlpack and the raw DLPack 1.3 exchange-API calls. It writes no capsule
 * code of its own: every import and export goes through the component.
 *
 *   import_f32_2d(obj)           dlpm_py_import (float32, ndim 2, C order, CPU; default
 *                                options: the type's exchange API when it publishes one,
 *                                else __dlpack__) -> a typed 2-D view -> dlpm_managed_delete
 *   import_protocol_f32_2d(obj)  the same with use_exchange_api = 0: always __dlpack__
 *   borrow_f32_2d(obj)           dlpm_py_borrow (the exchange API's
 *                                dltensor_from_py_object_no_sync where published, else the
 *                                import) -> a typed view -> dlpm_py_borrow_end
 *   borrow_f32_2d_writable(obj)  the same for writing (requirements with `writable`: the
 *                                owning path, READ_ONLY and a producer's semantic bits
 *                                refused)
 *   raw_exchange_managed(obj)    the floor of the owning exchange path: the table from
 *                                dlpm_py_exchange_api_of, managed_tensor_from_py_object_no_sync,
 *                                the tensor's deleter; no version or requirement check
 *   raw_exchange_borrow(obj)     the floor of the borrowing path: dltensor_from_py_object_no_sync
 *   make_tensor()                a 4x6 float32 dlpack_mdspan.Tensor (dlpm_py_tensor_new) over
 *                                malloc'd memory holding 0, 1, ..., 23
 *   has_exchange_api(obj)        whether obj's type publishes a table this library can use
 *   noop(obj)                    returns None: the cost of calling a C function from Python
 *
 * All of them return None (make_tensor and has_exchange_api excepted) and read no element.
 */
#include <dlpack_mdspan_python.h>

#include <stdint.h>
#include <stdlib.h>

static dlpm_requirements f32_2d;          /* float32, ndim 2, C order, CPU */
static dlpm_requirements f32_2d_writable; /* the same, writable */
static dlpm_py_options protocol_only; /* defaults with use_exchange_api = 0 */
static const int32_t cpu_only[] = {kDLCPU};

/* What a C consumer works with once the checks passed. */
typedef struct {
  float* data;
  int64_t rows, cols;
} f32_matrix;

static volatile uintptr_t sink; /* the view is used, so nothing can be skipped */

static void use(const DLTensor* t) {
  f32_matrix view;
  view.data = (float*)((char*)t->data + t->byte_offset);
  view.rows = t->shape[0];
  view.cols = t->shape[1];
  sink = (uintptr_t)view.data + (uintptr_t)view.rows + (uintptr_t)view.cols;
}

static PyObject* import_with(PyObject* obj, const dlpm_py_options* opts) {
  DLManagedTensorVersioned* t;
  if (dlpm_py_import(obj, &f32_2d, opts, &t) != DLPM_OK) return NULL; /* exception set */
  use(&t->dl_tensor);
  dlpm_managed_delete(t);
  Py_RETURN_NONE;
}

static PyObject* import_f32_2d(PyObject* module, PyObject* obj) {
  (void)module;
  return import_with(obj, NULL);
}

static PyObject* import_protocol_f32_2d(PyObject* module, PyObject* obj) {
  (void)module;
  return import_with(obj, &protocol_only);
}

static PyObject* borrow_with(PyObject* obj, const dlpm_requirements* req) {
  dlpm_py_borrowed b;
  if (dlpm_py_borrow(obj, req, NULL, &b) != DLPM_OK) return NULL;
  use(&b.dl_tensor);
  dlpm_py_borrow_end(&b);
  Py_RETURN_NONE;
}

static PyObject* borrow_f32_2d(PyObject* module, PyObject* obj) {
  (void)module;
  return borrow_with(obj, &f32_2d);
}

static PyObject* borrow_f32_2d_writable(PyObject* module, PyObject* obj) {
  (void)module;
  return borrow_with(obj, &f32_2d_writable);
}

static const DLPackExchangeAPI* table_of(PyObject* obj) {
  const DLPackExchangeAPI* api = dlpm_py_exchange_api_of(obj);
  if (api == NULL)
    PyErr_Format(PyExc_TypeError, "%R publishes no DLPack exchange API", (PyObject*)Py_TYPE(obj));
  return api;
}

static PyObject* raw_exchange_managed(PyObject* module, PyObject* obj) {
  const DLPackExchangeAPI* api = table_of(obj);
  DLManagedTensorVersioned* t = NULL;
  (void)module;
  if (api == NULL) return NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0) return NULL;
  use(&t->dl_tensor);
  if (t->deleter) t->deleter(t);
  Py_RETURN_NONE;
}

static PyObject* raw_exchange_borrow(PyObject* module, PyObject* obj) {
  const DLPackExchangeAPI* api = table_of(obj);
  DLTensor view;
  (void)module;
  if (api == NULL) return NULL;
  if (api->dltensor_from_py_object_no_sync == NULL) {
    PyErr_Format(PyExc_TypeError, "the exchange API of %R has no dltensor_from_py_object_no_sync",
                 (PyObject*)Py_TYPE(obj));
    return NULL;
  }
  if (api->dltensor_from_py_object_no_sync(obj, &view) != 0) return NULL;
  use(&view);
  Py_RETURN_NONE;
}

static PyObject* has_exchange_api(PyObject* module, PyObject* obj) {
  (void)module;
  return PyBool_FromLong(dlpm_py_exchange_api_of(obj) != NULL);
}

static void free_memory(void* memory) { free(memory); }

static PyObject* make_tensor(PyObject* module, PyObject* unused) {
  static const int64_t shape[2] = {4, 6};
  const DLDataType f32 = {kDLFloat, 32, 1};
  const DLDevice cpu = {kDLCPU, 0};
  DLManagedTensorVersioned* t;
  float* memory = (float*)malloc(sizeof(float) * 24);
  dlpm_status s;
  (void)module;
  (void)unused;
  if (memory == NULL) return PyErr_NoMemory();
  for (int i = 0; i < 24; ++i) memory[i] = (float)i;
  if ((s = dlpm_managed_new(memory, 2, shape, NULL, f32, cpu, 0, 0, free_memory, memory, &t)) != DLPM_OK) {
    free(memory);
    return dlpm_py_raise(s);
  }
  return dlpm_py_tensor_new(t); /* owns t, even on failure */
}

static PyObject* noop(PyObject* module, PyObject* obj) {
  (void)module;
  (void)obj;
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"import_f32_2d", import_f32_2d, METH_O,
     "dlpm_py_import (exchange API where published, else __dlpack__): float32, ndim 2, C order, CPU."},
    {"import_protocol_f32_2d", import_protocol_f32_2d, METH_O, "dlpm_py_import through __dlpack__ only."},
    {"borrow_f32_2d", borrow_f32_2d, METH_O, "dlpm_py_borrow + dlpm_py_borrow_end."},
    {"borrow_f32_2d_writable", borrow_f32_2d_writable, METH_O, "dlpm_py_borrow for writing + dlpm_py_borrow_end."},
    {"raw_exchange_managed", raw_exchange_managed, METH_O,
     "managed_tensor_from_py_object_no_sync + deleter, no checks (the floor of the exchange path)."},
    {"raw_exchange_borrow", raw_exchange_borrow, METH_O, "dltensor_from_py_object_no_sync, no checks."},
    {"has_exchange_api", has_exchange_api, METH_O, "Whether obj's type publishes a usable exchange API."},
    {"make_tensor", make_tensor, METH_NOARGS, "A 4x6 float32 dlpack_mdspan.Tensor holding 0..23."},
    {"noop", noop, METH_O, "Return None (the call floor)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "dlpm_bench", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_dlpm_bench(void) {
  dlpm_status s;
  if ((s = dlpm_requirements_init(&f32_2d, DLPM_REQUIREMENTS_VERSION)) != DLPM_OK) return dlpm_py_raise(s);
  if (dlpm_py_options_init(&protocol_only, DLPM_PY_OPTIONS_VERSION) != DLPM_OK) return NULL; /* ValueError set */
  f32_2d.check_dtype = 1;
  f32_2d.dtype.code = kDLFloat;
  f32_2d.dtype.bits = 32;
  f32_2d.dtype.lanes = 1;
  f32_2d.ndim = 2;
  f32_2d.order = 'C';
  f32_2d.device_types = cpu_only;
  f32_2d.num_device_types = 1;
  protocol_only.use_exchange_api = 0;
  f32_2d_writable = f32_2d;
  f32_2d_writable.writable = 1;
  return PyModule_Create(&module_def);
}
