// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The test extension of the kDLOneAPI suite (test_sycl.py): sycl.hpp's import and export
// rules driven from Python with dpnp and dpctl objects, through the shipped component.
//
//   usm_view(obj)                  -> (device_type, device_id, data, usm kind): a USM view
//   host_sum(obj, cpu_device_usm)  -> (sum, data): a host view of host or shared USM
//   export_usm(ptr, n, owner)      -> dlpack_mdspan.Tensor of n float32 at ptr, keeping owner
//   check_raw(ptr, n, device_id)   -> usm kind: check_usm_tensor on a hand-made DLTensor
//   reexport(obj)                  -> obj imported and re-exported as a dlpack_mdspan.Tensor
//                                     with python_sycl.hpp's hooks (obj.sycl_queue, if any,
//                                     as the producer's queue)
//   host_tensor(n)                 -> n float32 0, 1, ... in host memory, as a Tensor with
//                                     those hooks (for copies to device USM)
//   describe(capsule)              -> (device_type, device_id, flags, data, host values or the
//                                     usm kind or None)
//   import_on(obj, stream)         -> (device_type, device_id): dlpm_py_import passing `stream`
//                                     as an object (dlpm_py_options.stream_object)
//
// Refusals raise TypeError with the library's message.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack_mdspan/python.hpp>
#include <dlpack_mdspan/python_sycl.hpp>
#include <dlpack_mdspan/sycl.hpp>

#include <cstdint>
#include <cstring>
#include <mdspan>
#include <vector>
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

// The producer's queue of a dpctl/dpnp array (its sycl_queue), or nullptr; *keep holds the
// capsule behind it while the reference is used.
DPCTLSyclQueueRef producer_queue(PyObject* obj, PyObject** keep) {
  *keep = nullptr;
  PyObject* queue = PyObject_GetAttrString(obj, "sycl_queue");
  if (queue == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  DPCTLSyclQueueRef ref = nullptr;
  if (dm::python::detail::sycl_queue_of(queue, keep, &ref) != 0) PyErr_Clear();
  Py_DECREF(queue);
  return ref;
}

PyObject* reexport(PyObject*, PyObject* obj) {
  auto tensor = import_any(obj);
  if (!tensor) return PyErr_Occurred() ? nullptr : refuse(tensor.error());
  PyObject* keep = nullptr;
  DPCTLSyclQueueRef queue = producer_queue(obj, &keep);
  PyObject* t = dm::python::to_python_on_sycl_queue(std::move(*tensor), queue);  // copies the reference
  Py_XDECREF(keep);
  return t;
}

PyObject* host_tensor(PyObject*, PyObject* arg) {
  const Py_ssize_t n = PyLong_AsSsize_t(arg);
  if (n < 0) return PyErr_Occurred() ? nullptr : (PyErr_SetString(PyExc_ValueError, "n < 0"), nullptr);
  std::vector<float> values(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const std::mdspan<float, extents> md(values.data(), n);
  auto tensor = dm::try_to_managed_tensor(md, std::move(values));
  if (!tensor) return refuse(tensor.error());
  return dm::python::to_python_on_sycl_queue(std::move(*tensor));
}

PyObject* describe(PyObject*, PyObject* capsule) {
  DLManagedTensorVersioned* raw = nullptr;
  if (dlpm_py_import(capsule, nullptr, nullptr, &raw) != DLPM_OK) return nullptr;
  auto tensor = dm::managed_tensor::try_adopt(raw);
  if (!tensor) return refuse(tensor.error());
  const DLTensor& t = tensor->tensor();
  PyObject* values = Py_None;
  Py_INCREF(values);
  if (t.device.device_type == kDLOneAPI) {  // asked while the memory is alive: the capsule's tensor dies here
    const auto where = dm::check_usm_tensor(t);
    if (!where) return refuse(where.error());
    Py_DECREF(values);
    values = PyUnicode_FromString(dm::usm_kind_name(where->kind));
  } else if (t.device.device_type == kDLCPU && t.dtype.code == kDLFloat && t.dtype.bits == 32) {  // read it: host memory
    const auto copy = dm::try_copy_to_host(t, tensor->flags());
    if (!copy) return refuse(copy.error());
    const auto n = static_cast<Py_ssize_t>(dm::numel(copy->tensor()).value_or(0));
    Py_DECREF(values);
    if ((values = PyList_New(n)) == nullptr) return nullptr;
    for (Py_ssize_t i = 0; i < n; ++i)
      PyList_SetItem(values, i, PyFloat_FromDouble(static_cast<const float*>(copy->tensor().data)[i]));
  }
  return Py_BuildValue("(iiKKN)", static_cast<int>(t.device.device_type), static_cast<int>(t.device.device_id),
                       static_cast<unsigned long long>(tensor->flags()),
                       static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(t.data)), values);
}

PyObject* import_on(PyObject*, PyObject* args) {
  PyObject *obj = nullptr, *stream = nullptr;
  if (!PyArg_ParseTuple(args, "OO", &obj, &stream)) return nullptr;
  dlpm_py_options opts;
  dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION);
  opts.has_stream = 1;
  opts.stream_object = stream;
  DLManagedTensorVersioned* raw = nullptr;
  if (dlpm_py_import(obj, nullptr, &opts, &raw) != DLPM_OK) return nullptr;
  const DLDevice d = raw->dl_tensor.device;
  dlpm_managed_delete(raw);
  return Py_BuildValue("(ii)", static_cast<int>(d.device_type), static_cast<int>(d.device_id));
}

PyMethodDef methods[] = {
    {"usm_view", usm_view, METH_O, "A USM view of a kDLOneAPI tensor: (device_type, device_id, data, usm kind)."},
    {"host_sum", host_sum, METH_VARARGS, "The sum of a 1-d float32 tensor read on the host, and its data pointer."},
    {"export_usm", export_usm, METH_VARARGS, "n float32 of USM at ptr as a dlpack_mdspan.Tensor keeping owner alive."},
    {"check_raw", check_raw, METH_VARARGS, "check_usm_tensor on a 1-d float32 kDLOneAPI DLTensor at ptr."},
    {"reexport", reexport, METH_O, "obj imported and re-exported as a Tensor with the SYCL hooks."},
    {"host_tensor", host_tensor, METH_O, "n float32 0, 1, ... on the host, as a Tensor with the SYCL hooks."},
    {"describe", describe, METH_O, "(device_type, device_id, flags, data, values, usm kind or None) of a capsule."},
    {"import_on", import_on, METH_VARARGS, "dlpm_py_import with an object stream: (device_type, device_id)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "dlpm_sycl", "sycl.hpp driven from Python.", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_dlpm_sycl(void) { return PyModule_Create(&module); }
