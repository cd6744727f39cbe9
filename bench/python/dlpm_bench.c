/* dlpm_bench: the smallest correct DLPack consumer over the dlpack_mdspan C facade, for
 * timing against nanobind's ndarray argument conversion and tvm_ffi.from_dlpack.
 *
 *   consume_f32_2d(obj)  obj.__dlpack__(max_version=(1, 3)) -> rename the capsule (take
 *                        ownership) -> dlpm_managed_check_version -> dlpm_check_managed
 *                        (float32, ndim 2, C order, CPU) -> a typed 2-D view -> delete.
 *                        Returns None. Reads no element.
 *   noop(obj)            returns None: the cost of calling a C function from Python.
 *
 * Unlike tests/python/dlpm_interop.c's consume(), which reads every element into a list,
 * this does only what an extension must do before it can use the memory.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack_mdspan.h>

#include <stdint.h>

static PyObject* dlpack_name;    /* "__dlpack__" */
static PyObject* kwnames;        /* ("max_version",) */
static PyObject* max_version;    /* (1, DLPACK_MINOR_VERSION) */
static dlpm_requirements f32_2d; /* float32, ndim 2, C order, CPU */
static const int32_t cpu_only[] = {kDLCPU};

/* What a C consumer works with once the checks passed. */
typedef struct {
  float* data;
  int64_t rows, cols;
} f32_matrix;

static volatile uintptr_t sink; /* the view is used, so nothing can be skipped */

static PyObject* raise_status(dlpm_status s) {
  PyErr_Format(s == DLPM_E_DTYPE_MISMATCH || s == DLPM_E_NDIM_MISMATCH || s == DLPM_E_NON_COMPACT_STRIDES ||
                       s == DLPM_E_DEVICE_MISMATCH
                   ? PyExc_TypeError
                   : PyExc_BufferError,
               "%s (%s)", dlpm_last_error(), dlpm_status_string(s));
  return NULL;
}

static PyObject* consume_f32_2d(PyObject* module, PyObject* obj) {
  PyObject* args[2] = {obj, max_version};
  PyObject* capsule;
  DLManagedTensorVersioned* tensor;
  dlpm_status s;
  f32_matrix view;
  (void)module;

  capsule = PyObject_VectorcallMethod(dlpack_name, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
  if (!capsule) return NULL;
  tensor = (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
  /* Rename first: if that fails, the tensor is not ours. */
  if (!tensor || PyCapsule_SetName(capsule, "used_dltensor_versioned") != 0) {
    Py_DECREF(capsule);
    return NULL;
  }
  Py_DECREF(capsule);
  if ((s = dlpm_managed_check_version(tensor)) != DLPM_OK) return raise_status(s); /* released already */
  if ((s = dlpm_check_managed(tensor, &f32_2d)) != DLPM_OK) {
    raise_status(s);
    dlpm_managed_delete(tensor);
    return NULL;
  }
  view.data = (float*)((char*)tensor->dl_tensor.data + tensor->dl_tensor.byte_offset);
  view.rows = tensor->dl_tensor.shape[0];
  view.cols = tensor->dl_tensor.shape[1];
  sink = (uintptr_t)view.data + (uintptr_t)view.rows + (uintptr_t)view.cols;
  dlpm_managed_delete(tensor);
  Py_RETURN_NONE;
}

static PyObject* noop(PyObject* module, PyObject* obj) {
  (void)module;
  (void)obj;
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"consume_f32_2d", consume_f32_2d, METH_O, "Import a float32 2-D C-contiguous CPU array through the facade."},
    {"noop", noop, METH_O, "Return None (the call floor)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "dlpm_bench", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_dlpm_bench(void) {
  dlpack_name = PyUnicode_InternFromString("__dlpack__");
  kwnames = Py_BuildValue("(s)", "max_version");
  max_version = Py_BuildValue("(ii)", 1, (int)DLPACK_MINOR_VERSION);
  if (!dlpack_name || !kwnames || !max_version) return NULL;
  dlpm_requirements_init(&f32_2d, DLPM_REQUIREMENTS_VERSION);
  f32_2d.check_dtype = 1;
  f32_2d.dtype.code = kDLFloat;
  f32_2d.dtype.bits = 32;
  f32_2d.dtype.lanes = 1;
  f32_2d.ndim = 2;
  f32_2d.order = 'C';
  f32_2d.device_types = cpu_only;
  f32_2d.num_device_types = 1;
  return PyModule_Create(&module_def);
}
