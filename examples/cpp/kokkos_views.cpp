// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kokkos::View ↔ NumPy and PyTorch, zero copy (dlpack_mdspan/kokkos.hpp and the Python
// component), embedding Debian's Python 3 with NumPy 1.24 and PyTorch 1.13:
//
//   1. A View filled by a Kokkos kernel goes to NumPy and PyTorch without a copy: the
//      arrays' data pointers are the View's, and a PyTorch write is seen by the View.
//   2. A NumPy array (a transposed one) comes back as an unmanaged LayoutStride View, and a
//      Kokkos reduction runs over it in place.
//   3. A tensor that does not fit the View asked for is refused with the reason.
#include <dlpack_mdspan_python.h>  // Python.h and the C facade

#include <dlpack_mdspan/kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace dm = dlpack_mdspan;
namespace dk = dlpack_mdspan::kokkos;

namespace {

[[noreturn]] void python_failed(const char* what) {
  PyErr_Print();
  std::fprintf(stderr, "kokkos_views: %s failed\n", what);
  std::exit(1);
}

PyObject* run(const char* code, PyObject* globals) {
  PyObject* result = PyRun_String(code, Py_eval_input, globals, globals);
  if (!result) python_failed(code);
  return result;
}

std::string str(const char* code, PyObject* globals) {
  PyObject* value = run(code, globals);
  PyObject* s = PyObject_Str(value);
  if (!s) python_failed(code);
  std::string result = PyUnicode_AsUTF8(s);
  Py_DECREF(s);
  Py_DECREF(value);
  return result;
}

const void* address(const char* code, PyObject* globals) {
  PyObject* value = run(code, globals);
  const void* p = PyLong_AsVoidPtr(value);
  Py_DECREF(value);
  return p;
}

}  // namespace

int main() {
  Kokkos::initialize(Kokkos::InitializationSettings().set_num_threads(2).set_disable_warnings(true));
  bool zero_copy = false;
  {
    Py_Initialize();
    PyObject* globals = PyDict_New();
    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
    PyObject* imported = PyRun_String("import numpy, torch", Py_file_input, globals, globals);
    if (!imported) python_failed("importing numpy and torch");
    Py_DECREF(imported);
    std::printf("Kokkos %d.%d.%d (%s), %s\n", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100,
                Kokkos::DefaultExecutionSpace::name(), str("f'NumPy {numpy.__version__}, PyTorch {torch.__version__}'", globals).c_str());

    // ---- 1. a View to NumPy and PyTorch ---------------------------------------------------
    Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> matrix("matrix", 2, 3);
    Kokkos::parallel_for(
        "fill", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {2, 3}),
        KOKKOS_LAMBDA(int i, int j) { matrix(i, j) = float(3 * i + j); });
    Kokkos::fence();
    std::printf("\n1. a Kokkos::View<float**, LayoutRight> 2x3, filled by a kernel, handed over without a copy\n");
    // The tensor owns a copy of the View (a counted reference), so the memory lives as long
    // as the Tensor or any array made from it, whatever happens to `matrix`.
    PyObject* tensor = dlpm_py_tensor_new(dk::to_managed_tensor(matrix).release());
    if (!tensor) python_failed("dlpm_py_tensor_new");
    PyDict_SetItemString(globals, "tensor", tensor);
    PyObject* np_array = run("numpy.from_dlpack(tensor)", globals);
    PyDict_SetItemString(globals, "a", np_array);
    PyObject* torch_tensor = run("torch.from_dlpack(tensor)", globals);
    PyDict_SetItemString(globals, "t", torch_tensor);
    std::printf("  NumPy sees %s\n", str("a.tolist()", globals).c_str());
    Py_DECREF(run("t.__setitem__((1, 2), -7.0)", globals));
    std::printf("  PyTorch wrote t[1,2] = -7  -> View matrix(1,2) = %g, NumPy a[1,2] = %s\n",
                static_cast<double>(matrix(1, 2)), str("a[1, 2]", globals).c_str());
    const bool shared_out = matrix(1, 2) == -7.0f && address("a.ctypes.data", globals) == matrix.data() &&
                            address("t.data_ptr()", globals) == matrix.data();
    std::printf("  data pointers: View %p, NumPy %p, PyTorch %p\n", static_cast<const void*>(matrix.data()),
                address("a.ctypes.data", globals), address("t.data_ptr()", globals));

    // ---- 2. a NumPy array back as an unmanaged View ----------------------------------------
    std::printf("\n2. NumPy's m.T back as an unmanaged Kokkos::View<const double**, LayoutStride>\n");
    PyObject* np_matrix = run("numpy.arange(12.0).reshape(3, 4)", globals);
    PyDict_SetItemString(globals, "m", np_matrix);
    PyObject* np_transposed = run("m.T", globals);
    DLManagedTensorVersioned* imported_tensor = nullptr;
    if (dlpm_py_import(np_transposed, nullptr, nullptr, &imported_tensor) != DLPM_OK) python_failed("dlpm_py_import");
    dm::managed_tensor from_numpy = dm::managed_tensor::adopt(imported_tensor);  // legacy NumPy: read-only
    const auto view = dk::to_view<Kokkos::View<const double**, Kokkos::LayoutStride, Kokkos::HostSpace>>(from_numpy.get()->dl_tensor,
                                                                                                           from_numpy.get()->flags);
    double total = 0;
    Kokkos::parallel_reduce(
        "sum", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {int(view.extent(0)), int(view.extent(1))}),
        KOKKOS_LAMBDA(int i, int j, double& acc) { acc += view(i, j); }, total);
    std::printf("  %zux%zu, strides %zu,%zu; view(3,2) = %g; Kokkos sum = %g (NumPy: %s)\n", view.extent(0), view.extent(1),
                view.stride(0), view.stride(1), view(3, 2), total, str("m.sum()", globals).c_str());
    const bool shared_back = address("m.ctypes.data", globals) == view.data() && total == 66.0;

    // ---- 3. refusals -------------------------------------------------------------------
    std::printf("\n3. tensors that do not fit, refused with the reason\n");
    const auto as_right = dk::try_to_view<Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace>>(from_numpy);
    std::printf("  m.T as LayoutRight              -> %s\n", as_right ? "accepted?!" : as_right.error().what().c_str());
    const auto as_float = dk::try_to_view<Kokkos::View<const float**, Kokkos::LayoutStride, Kokkos::HostSpace>>(from_numpy);
    std::printf("  float64 as float                -> %s\n", as_float ? "accepted?!" : as_float.error().what().c_str());
    const auto mutable_view = dk::try_to_view<Kokkos::View<double**, Kokkos::LayoutStride, Kokkos::HostSpace>>(from_numpy);
    std::printf("  legacy NumPy data, non-const    -> %s\n", mutable_view ? "accepted?!" : mutable_view.error().what().c_str());
    const bool refused = !as_right && !as_float && !mutable_view;

    from_numpy.reset();
    for (PyObject* o : {np_transposed, np_matrix, np_array, torch_tensor, tensor, globals}) Py_DECREF(o);
    if (Py_FinalizeEx() < 0) return 1;  // every array made from `tensor` is gone: its View copy too
    zero_copy = shared_out && shared_back && refused;
  }
  Kokkos::finalize();
  std::printf("\nzero copy both ways: %s\n", zero_copy ? "yes" : "NO");
  return zero_copy ? 0 : 1;
}
