// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// C++ ↔ NumPy and PyTorch, zero copy, through the Python component (dlpack_mdspan::python,
// dlpack_mdspan_python.h), embedding Debian's Python 3 with NumPy 1.24 and PyTorch 1.13,
// which speak legacy DLPack. No capsule code here: the component writes and reads them.
//
//   1. A std::mdspan over a C++ std::vector goes to NumPy and to PyTorch without a copy,
//      as one dlpack_mdspan.Tensor: writes on either side are seen on the other.
//   2. Their arrays come back as typed, validated mdspans, a transposed one included.
//   3. Wrong expectations are refused with a message instead of viewed wrongly.
#include <dlpack_mdspan_python.h>  // Python.h and the C facade

#include <cstdio>
#include <cstdlib>
#include <mdspan>
#include <string>
#include <utility>
#include <vector>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;

namespace {

[[noreturn]] void python_failed(const char* what) {
  PyErr_Print();
  std::fprintf(stderr, "python_handoff: %s failed\n", what);
  std::exit(1);
}

PyObject* run(const char* code, PyObject* globals) {
  PyObject* result = PyRun_String(code, Py_eval_input, globals, globals);
  if (!result) python_failed(code);
  return result;
}

// str(eval(code)) as a C++ string.
std::string str(const char* code, PyObject* globals) {
  PyObject* value = run(code, globals);
  PyObject* s = PyObject_Str(value);
  if (!s) python_failed(code);
  std::string result = PyUnicode_AsUTF8(s);
  Py_DECREF(s);
  Py_DECREF(value);
  return result;
}

// The address eval(code) names, e.g. "a.ctypes.data".
const void* address(const char* code, PyObject* globals) {
  PyObject* value = run(code, globals);
  const void* p = PyLong_AsVoidPtr(value);
  Py_DECREF(value);
  return p;
}

// C++ → Python: the tensor becomes a dlpack_mdspan.Tensor (__dlpack__, __dlpack_device__).
PyObject* to_python(dm::managed_tensor t) {
  PyObject* obj = dlpm_py_tensor_new(t.release());
  if (!obj) python_failed("dlpm_py_tensor_new");
  return obj;
}

// Python → C++: any DLPack producer, validated and owned. A legacy tensor (NumPy 1.x,
// PyTorch 1.x) cannot say whether it may be written: read-only unless `writable`.
dm::managed_tensor from_python(PyObject* obj, bool writable = false) {
  dlpm_py_options options;
  dlpm_py_options_init(&options, DLPM_PY_OPTIONS_VERSION);
  options.legacy_writable = writable;
  DLManagedTensorVersioned* t = nullptr;
  if (dlpm_py_import(obj, nullptr, &options, &t) != DLPM_OK) python_failed("dlpm_py_import");
  return dm::managed_tensor::adopt(t);
}

template <class M>
bool show_refusal(const char* what, const dm::managed_tensor& t) {
  auto r = t.try_view<M>();
  std::printf("  %-34s -> %s\n", what, r ? "accepted?!" : r.error().what().c_str());
  return !r;
}

}  // namespace

int main() {
  Py_Initialize();
  PyObject* globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject* imported = PyRun_String("import numpy, torch, torch.utils.dlpack", Py_file_input, globals, globals);
  if (!imported) python_failed("importing numpy and torch");
  Py_DECREF(imported);
  std::printf("%s\n", str("f'NumPy {numpy.__version__}, PyTorch {torch.__version__}'", globals).c_str());

  // ---- 1. C++ memory to NumPy and PyTorch -------------------------------------------------
  std::vector<float> values = {0, 1, 2, 3, 4, 5};
  std::mdspan<float, std::dextents<int, 2>> matrix(values.data(), 2, 3);
  std::printf("\n1. a C++ std::mdspan<float, 2x3> handed over without a copy\n");
  // The vector moves into the tensor (its buffer stays put, so `matrix` still views it) and
  // lives until the Tensor and every array made from it are gone.
  PyObject* tensor = to_python(dm::to_managed_tensor(matrix, std::move(values)));
  PyDict_SetItemString(globals, "tensor", tensor);
  std::printf("  %s\n", str("tensor", globals).c_str());
  // Both call tensor.__dlpack__(), which gives them the legacy capsule they know.
  PyObject* np_array = run("numpy.from_dlpack(tensor)", globals);
  PyDict_SetItemString(globals, "a", np_array);
  PyObject* torch_tensor = run("torch.utils.dlpack.from_dlpack(tensor)", globals);
  PyDict_SetItemString(globals, "t", torch_tensor);

  matrix[1, 2] = 42.0f;  // a C++ write ...
  std::printf("  C++ wrote matrix[1,2] = 42     -> NumPy a[1,2] = %s, PyTorch t[1,2] = %s\n",
              str("a[1, 2]", globals).c_str(), str("float(t[1, 2])", globals).c_str());
  Py_DECREF(run("t.__setitem__((0, 0), -7.0)", globals));  // ... and a PyTorch write
  std::printf("  PyTorch wrote t[0,0] = -7      -> C++ matrix[0,0] = %g, NumPy a[0,0] = %s\n",
              static_cast<double>(matrix[0, 0]), str("a[0, 0]", globals).c_str());
  const bool shared_out = matrix[0, 0] == -7.0f && address("a.ctypes.data", globals) == matrix.data_handle() &&
                          address("t.data_ptr()", globals) == matrix.data_handle();

  // ---- 2. NumPy and PyTorch arrays back as typed mdspans -----------------------------------
  std::printf("\n2. framework arrays back as typed, validated mdspans\n");
  PyObject* np_matrix = run("numpy.arange(12.0).reshape(3, 4)", globals);
  PyDict_SetItemString(globals, "m", np_matrix);
  PyObject* np_transposed = run("m.T", globals);
  auto from_numpy = from_python(np_transposed);  // legacy NumPy: read-only
  auto transposed = from_numpy.view<std::mdspan<const double, std::dextents<std::int64_t, 2>, std::layout_stride>>();
  std::printf("  NumPy m.T (4x3, strides %lld,%lld)    -> mdspan<const double, layout_stride>: [3,2] = %g\n",
              static_cast<long long>(transposed.stride(0)), static_cast<long long>(transposed.stride(1)), transposed[3, 2]);
  auto as_left = from_numpy.view<std::mdspan<const double, std::dextents<int, 2>, std::layout_left>>();
  std::printf("  the same, as layout_left            -> [3,2] = %g (it is column-major)\n", as_left[3, 2]);

  PyObject* torch_int = run("torch.arange(6, dtype=torch.int32).reshape(2, 3)", globals);
  PyDict_SetItemString(globals, "ti", torch_int);
  auto from_torch = from_python(torch_int, /*writable=*/true);  // PyTorch 1.x allows writes
  auto ints = from_torch.view<std::mdspan<std::int32_t, std::extents<int, 2, 3>>>();
  ints[1, 1] = 100;
  std::printf("  PyTorch int32 2x3                   -> mdspan<int32_t, 2, 3>; wrote [1,1] = 100, torch sees %s\n",
              str("int(ti[1, 1])", globals).c_str());
  const bool shared_back = address("m.ctypes.data", globals) == transposed.data_handle() &&
                           address("ti.data_ptr()", globals) == ints.data_handle() && str("int(ti[1, 1])", globals) == "100";

  // ---- 3. Wrong expectations are refused -------------------------------------------------
  std::printf("\n3. bad inputs, refused with the reason\n");
  using rows = std::mdspan<const double, std::dextents<int, 2>>;
  int refused = 0;  // each must be refused: the example fails otherwise
  refused += show_refusal<rows>("transposed as row-major", from_numpy);
  refused += show_refusal<std::mdspan<const float, std::dextents<int, 2>, std::layout_stride>>("float64 data as float32",
                                                                                                from_numpy);
  refused += show_refusal<std::mdspan<const double, std::dextents<int, 3>, std::layout_stride>>("rank 2 as rank 3", from_numpy);
  refused +=
      show_refusal<std::mdspan<double, std::dextents<int, 2>, std::layout_stride>>("legacy NumPy data, mutable", from_numpy);
  // At the Python boundary a refusal is a Python exception (TypeError, BufferError).
  PyObject* list = run("[1.0, 2.0]", globals);
  DLManagedTensorVersioned* none = nullptr;
  if (dlpm_py_import(list, nullptr, nullptr, &none) != DLPM_OK) {
    ++refused;
    PyObject *type, *message, *traceback;
    PyErr_Fetch(&type, &message, &traceback);
    PyErr_NormalizeException(&type, &message, &traceback);
    PyDict_SetItemString(globals, "error", message);
    std::printf("  %-34s -> %s\n", "a Python list", str("f'{type(error).__name__}: {error}'", globals).c_str());
    Py_XDECREF(type);
    Py_XDECREF(message);
    Py_XDECREF(traceback);
  } else {
    std::printf("  %-34s -> accepted?!\n", "a Python list");
    dlpm_managed_delete(none);
  }
  Py_DECREF(list);

  from_numpy.reset();
  from_torch.reset();
  for (PyObject* o : {np_transposed, np_matrix, torch_int, np_array, torch_tensor, tensor, globals}) Py_DECREF(o);
  if (Py_FinalizeEx() < 0) return 1;
  const bool zero_copy = shared_out && shared_back;
  std::printf("\nzero copy both ways: %s; refused %d of 5 bad inputs\n", zero_copy ? "yes" : "NO", refused);
  return zero_copy && refused == 5 ? 0 : 1;
}
