// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kokkos_views: a CPython extension over dlpack_mdspan/kokkos.hpp and the Python component,
// for test_kokkos_frameworks.py (NumPy 2 and PyTorch 2 in the frameworks venv).
//
//   matrix(read_only)  a 2x3 float32 Kokkos::View (LayoutRight, HostSpace) filled with 0..5 by
//                      a kernel, as a dlpack_mdspan.Tensor (a const View when read_only), and
//                      the View's data address: (tensor, address)
//   left()             a 3x2 float64 LayoutLeft View, (tensor, address)
//   view_sum(obj)      obj (any DLPack producer) imported and viewed as an unmanaged
//                      Kokkos::View<const T**, LayoutStride> (T float32 or float64), summed by
//                      a Kokkos reduction in place: (sum, the View's data address)
//   view_refusal(obj)  the message of viewing obj as a Kokkos::View<double**, LayoutRight>, or
//                      None when it is accepted
//
// Kokkos is initialized when the module is imported and finalized after the interpreter has
// freed its objects (Py_AtExit), so every View the Tensors hold goes before it.
#include <dlpack_mdspan_python.h>

#include <dlpack_mdspan/kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace dm = dlpack_mdspan;
namespace dk = dlpack_mdspan::kokkos;

namespace {

PyObject* tensor_and_address(dm::managed_tensor tensor, const void* address) {
  PyObject* obj = dlpm_py_tensor_new(tensor.release());
  if (obj == nullptr) return nullptr;
  return Py_BuildValue("(NN)", obj, PyLong_FromVoidPtr(const_cast<void*>(address)));
}

PyObject* matrix(PyObject*, PyObject* arg) {
  const int read_only = PyObject_IsTrue(arg);
  if (read_only < 0) return nullptr;
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> v("matrix", 2, 3);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<>(0, 6), KOKKOS_LAMBDA(int k) { v(k / 3, k % 3) = float(k); });
  Kokkos::fence();
  try {
    if (read_only) {
      const Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace> c = v;
      return tensor_and_address(dk::to_managed_tensor(c), c.data());
    }
    return tensor_and_address(dk::to_managed_tensor(v), v.data());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

PyObject* left(PyObject*, PyObject*) {
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> v("left", 3, 2);
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) v(i, j) = 10.0 * i + j;
  try {
    return tensor_and_address(dk::to_managed_tensor(v), v.data());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

// obj's tensor, owned: legacy tensors read-only, as the component's defaults say.
bool import_tensor(PyObject* obj, dm::managed_tensor& out) {
  DLManagedTensorVersioned* t = nullptr;
  if (dlpm_py_import(obj, nullptr, nullptr, &t) != DLPM_OK) return false;
  out = dm::managed_tensor::adopt(t);
  return true;
}

template <class T>
PyObject* sum_as(const dm::managed_tensor& tensor) {
  const auto v = dk::try_to_view<Kokkos::View<const T**, Kokkos::LayoutStride, Kokkos::HostSpace>>(tensor);
  if (!v) {
    PyErr_SetString(PyExc_TypeError, v.error().what().c_str());
    return nullptr;
  }
  const auto view = *v;
  double total = 0;
  Kokkos::parallel_reduce(
      "sum", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {int(view.extent(0)), int(view.extent(1))}),
      KOKKOS_LAMBDA(int i, int j, double& acc) { acc += double(view(i, j)); }, total);
  return Py_BuildValue("(dN)", total, PyLong_FromVoidPtr(const_cast<T*>(view.data())));
}

PyObject* view_sum(PyObject*, PyObject* obj) {
  dm::managed_tensor tensor;
  if (!import_tensor(obj, tensor)) return nullptr;
  if (tensor.get()->dl_tensor.dtype.bits == 32) return sum_as<float>(tensor);
  return sum_as<double>(tensor);
}

PyObject* view_refusal(PyObject*, PyObject* obj) {
  dm::managed_tensor tensor;
  if (!import_tensor(obj, tensor)) return nullptr;
  const auto v = dk::try_to_view<Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>>(tensor);
  if (v) Py_RETURN_NONE;
  return PyUnicode_FromString(v.error().what().c_str());
}

PyMethodDef methods[] = {
    {"matrix", matrix, METH_O, "a 2x3 float32 View as a Tensor, and its address"},
    {"left", left, METH_NOARGS, "a 3x2 float64 LayoutLeft View as a Tensor, and its address"},
    {"view_sum", view_sum, METH_O, "obj viewed as a LayoutStride View, summed by Kokkos"},
    {"view_refusal", view_refusal, METH_O, "why obj is no Kokkos::View<double**, LayoutRight>, or None"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "kokkos_views", nullptr, -1, methods, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_kokkos_views(void) {
  if (!Kokkos::is_initialized()) {
    Kokkos::initialize(Kokkos::InitializationSettings().set_num_threads(2).set_disable_warnings(true));
    Py_AtExit([] { Kokkos::finalize(); });
  }
  return PyModule_Create(&module);
}
