/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpm_wheel_c: the smallest user of the wheel's Python component, built by
 * scripts/check-wheel against the installed package only (limited API 3.10).
 *
 *   total(obj)   the sum of a rank-1 float64 tensor from any DLPack producer, any stride;
 *                anything else is refused with the component's TypeError */
#include <dlpack_mdspan_python.h>

static PyObject* total(PyObject* self, PyObject* obj) {
  dlpm_requirements req;
  DLManagedTensorVersioned* t = NULL;
  const DLTensor* d;
  const char* base;
  int64_t stride;
  double sum = 0;
  (void)self;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.check_dtype = 1;
  req.dtype = (DLDataType){kDLFloat, 64, 1};
  req.ndim = 1;
  if (dlpm_py_import(obj, &req, NULL, &t) != DLPM_OK) return NULL;
  d = &t->dl_tensor;
  base = (const char*)d->data + d->byte_offset;
  stride = d->strides ? d->strides[0] : 1; /* NULL strides: contiguous */
  for (int64_t i = 0; i < d->shape[0]; ++i) sum += *(const double*)(base + i * stride * (int64_t)sizeof(double));
  dlpm_managed_delete(t);
  return PyFloat_FromDouble(sum);
}

static PyMethodDef methods[] = {
    {"total", total, METH_O, "total(v): the sum of a rank-1 float64 tensor"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "dlpm_wheel_c", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_dlpm_wheel_c(void) { return PyModule_Create(&module); }
