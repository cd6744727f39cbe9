// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The test extension of the kDLOneAPI suite (test_sycl.py): sycl.hpp's import and export
// rules driven from Python with dpnp and dpctl objects, through the shipped component.
//
//   usm_view(obj)                  -> (device_type, device_id, data, usm kind): a USM view
//   host_sum(obj, cpu_device_usm)  -> (sum, data): a host view of host or shared USM
//   export_usm(ptr, n, owner)      -> dlpack_mdspan.Tensor of n float32 at ptr, keeping owner
//   check_raw(ptr, n, device_id)   -> usm kind: check_usm_tensor on a hand-made DLTensor
//
// Refusals raise TypeError with the library's message.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack_mdspan/python.hpp>
#include <dlpack_mdspan/sycl.hpp>

#include <cstdint>
#include <mdspan>
#include <utility>

namespace dm = dlpack_mdspan;

namespace {

using extents = std::dextents<std::int64_t, 1>;
using usm_view_t = dm::usm_mdspan<const float, extents, std::layout_stride>;
using host_view_t = std::mdspan<const float, extents, std::layout_stride>;

PyObject* refuse(const dm::error& e) {
  PyErr_SetString(PyExc_TypeError, e.what().c_str());
  return nullptr;
}

// The owned tensor of any DLPack producer (dpnp arrays take the __dlpack__ path).
dm::result<dm::managed_tensor> import_any(PyObject* obj) {
  DLManagedTensorVersioned* raw = nullptr;
  if (dlpm_py_import(obj, nullptr, nullptr, &raw) != DLPM_OK) return dm::unexpected_error(dm::error(dm::errc::producer_failed, "the Python import failed"));
  return dm::managed_tensor::try_adopt(raw);
}

PyObject* usm_view(PyObject*, PyObject* obj) {
  auto tensor = import_any(obj);
  if (!tensor) return PyErr_Occurred() ? nullptr : refuse(tensor.error());
  const auto view = dm::try_to_mdspan_on_usm_device<usm_view_t>(tensor->tensor());
  if (!view) return refuse(view.error());
  const auto where = dm::check_usm_tensor(tensor->tensor());
  const DLDevice d = view->accessor().dlpack_device();
  return Py_BuildValue("(iiKs)", static_cast<int>(d.device_type), static_cast<int>(d.device_id),
                       static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(view->data_handle())),
                       dm::usm_kind_name(where->kind));
}

PyObject* host_sum(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  int cpu_device_usm = 0;
  if (!PyArg_ParseTuple(args, "O|p", &obj, &cpu_device_usm)) return nullptr;
  auto tensor = import_any(obj);
  if (!tensor) return PyErr_Occurred() ? nullptr : refuse(tensor.error());
  const auto view = dm::try_to_host_mdspan_from_usm<host_view_t>(
      tensor->tensor(), {}, cpu_device_usm ? dm::usm_host_access::cpu_device_usm : dm::usm_host_access::host_and_shared);
  if (!view) return refuse(view.error());
  double sum = 0;
  for (std::int64_t i = 0; i < view->extent(0); ++i) sum += (*view)[i];
  return Py_BuildValue("(dK)", sum, static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(view->data_handle())));
}

// Keeps a Python object alive for as long as the managed tensor lives; the deleter may run
// on any thread, so it takes the GIL to let go.
struct python_owner {
  PyObject* object;
  explicit python_owner(PyObject* o) noexcept : object(o) { Py_INCREF(o); }
  python_owner(python_owner&& other) noexcept : object(std::exchange(other.object, nullptr)) {}
  python_owner(const python_owner&) = delete;
  python_owner& operator=(const python_owner&) = delete;
  python_owner& operator=(python_owner&&) = delete;
  ~python_owner() {
    if (object == nullptr) return;
    const PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(object);
    PyGILState_Release(gil);
  }
};

PyObject* export_usm(PyObject*, PyObject* args) {
  unsigned long long address = 0;
  Py_ssize_t n = 0;
  PyObject* owner = nullptr;
  if (!PyArg_ParseTuple(args, "KnO", &address, &n, &owner)) return nullptr;
  float* data = reinterpret_cast<float*>(static_cast<std::uintptr_t>(address));
  const std::mdspan<float, extents> md(data, n);
  const auto where = dm::usm_allocation_of(data);
  if (!where) return refuse(where.error());
  auto tensor = dm::try_to_managed_tensor(md, python_owner(owner), where->device);
  if (!tensor) return refuse(tensor.error());
  return dlpm_py_tensor_new(tensor->release());
}

PyObject* check_raw(PyObject*, PyObject* args) {
  unsigned long long address = 0;
  long long n = 0;
  int device_id = 0;
  if (!PyArg_ParseTuple(args, "KLi", &address, &n, &device_id)) return nullptr;
  std::int64_t shape[1] = {n};
  DLTensor t{};
  t.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
  t.device = DLDevice{kDLOneAPI, device_id};
  t.ndim = 1;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  const auto where = dm::check_usm_tensor(t);
  if (!where) return refuse(where.error());
  return PyUnicode_FromString(dm::usm_kind_name(where->kind));
}

PyMethodDef methods[] = {
    {"usm_view", usm_view, METH_O, "A USM view of a kDLOneAPI tensor: (device_type, device_id, data, usm kind)."},
    {"host_sum", host_sum, METH_VARARGS, "The sum of a 1-d float32 tensor read on the host, and its data pointer."},
    {"export_usm", export_usm, METH_VARARGS, "n float32 of USM at ptr as a dlpack_mdspan.Tensor keeping owner alive."},
    {"check_raw", check_raw, METH_VARARGS, "check_usm_tensor on a 1-d float32 kDLOneAPI DLTensor at ptr."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "dlpm_sycl", "sycl.hpp driven from Python.", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_dlpm_sycl(void) { return PyModule_Create(&module); }
