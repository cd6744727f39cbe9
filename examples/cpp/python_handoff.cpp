// C++ ↔ NumPy and PyTorch, zero copy, through DLPack (embedding Debian's Python 3 with
// NumPy 1.24 and PyTorch 1.13, which speak legacy DLPack).
//
//   1. A std::mdspan over a C++ std::vector goes to NumPy and to PyTorch without a copy:
//      writes on either side are seen on the other.
//   2. Their arrays come back as typed, validated mdspans, a transposed one included.
//   3. Wrong expectations are refused with a message instead of viewed wrongly.
#include <Python.h>

#include <cstdio>
#include <cstdlib>
#include <mdspan>
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

// A capsule that deletes its tensor only if no consumer took it (the consumer renames it).
PyObject* legacy_capsule(DLManagedTensor* t) {
  return PyCapsule_New(t, "dltensor", [](PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto* unconsumed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
      if (unconsumed->deleter) unconsumed->deleter(unconsumed);
    }
  });
}

// Takes the tensor out of an object's __dlpack__() capsule: rename first, then own it.
dm::managed_tensor take(PyObject* array, dm::legacy_access access) {
  PyObject* capsule = PyObject_CallMethod(array, "__dlpack__", nullptr);
  if (!capsule) python_failed("__dlpack__");
  auto* legacy = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (!legacy || PyCapsule_SetName(capsule, "used_dltensor") != 0) python_failed("taking the capsule");
  Py_DECREF(capsule);
  return dm::managed_tensor::adopt_legacy(legacy, access);
}

template <class M>
void show_refusal(const char* what, const dm::managed_tensor& t) {
  auto r = t.try_view<M>();
  std::printf("  %-34s -> %s\n", what, r ? "accepted?!" : r.error().what().c_str());
}

}  // namespace

int main() {
  Py_Initialize();
  PyObject* globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject* imported = PyRun_String(
      "import numpy, torch, torch.utils.dlpack\n"
      "class Exported:\n"
      "    def __init__(self, capsule): self.capsule = capsule\n"
      "    def __dlpack__(self, stream=None): return self.capsule\n"
      "    def __dlpack_device__(self): return (1, 0)\n",
      Py_file_input, globals, globals);
  if (!imported) python_failed("importing numpy and torch");
  Py_DECREF(imported);
  std::printf("NumPy %s, PyTorch %s\n", PyUnicode_AsUTF8(run("numpy.__version__", globals)),
              PyUnicode_AsUTF8(run("torch.__version__", globals)));

  // ---- 1. C++ memory to NumPy and PyTorch -------------------------------------------------
  std::vector<float> values = {0, 1, 2, 3, 4, 5};
  std::mdspan<float, std::dextents<int, 2>> matrix(values.data(), 2, 3);
  std::printf("\n1. a C++ std::mdspan<float, 2x3> handed over without a copy\n");
  // Legacy tensors: Debian's NumPy and PyTorch predate DLPack 1.0. The vector's buffer is
  // shared: each tensor owns a non-owning handle, the vector stays here.
  PyDict_SetItemString(globals, "np_capsule", legacy_capsule(dm::to_legacy_managed_tensor(matrix, 0)));
  PyDict_SetItemString(globals, "torch_capsule", legacy_capsule(dm::to_legacy_managed_tensor(matrix, 0)));
  PyObject* np_array = run("numpy.from_dlpack(Exported(np_capsule))", globals);
  PyDict_SetItemString(globals, "a", np_array);
  PyObject* torch_tensor = run("torch.utils.dlpack.from_dlpack(torch_capsule)", globals);
  PyDict_SetItemString(globals, "t", torch_tensor);

  matrix[1, 2] = 42.0f;  // a C++ write ...
  std::printf("  C++ wrote matrix[1,2] = 42     -> NumPy a[1,2] = %s, PyTorch t[1,2] = %s\n",
              PyUnicode_AsUTF8(run("str(a[1, 2])", globals)), PyUnicode_AsUTF8(run("str(float(t[1, 2]))", globals)));
  Py_DECREF(run("t.__setitem__((0, 0), -7.0)", globals));  // ... and a PyTorch write
  std::printf("  PyTorch wrote t[0,0] = -7      -> C++ matrix[0,0] = %g, NumPy a[0,0] = %s\n", matrix[0, 0],
              PyUnicode_AsUTF8(run("str(a[0, 0])", globals)));
  const bool shared = matrix[0, 0] == -7.0f && values[5] == 42.0f;

  // ---- 2. NumPy and PyTorch arrays back as typed mdspans -----------------------------------
  std::printf("\n2. framework arrays back as typed, validated mdspans\n");
  PyObject* np_matrix = run("numpy.arange(12.0).reshape(3, 4)", globals);
  PyDict_SetItemString(globals, "m", np_matrix);
  PyObject* np_transposed = run("m.T", globals);
  auto from_numpy = take(np_transposed, dm::legacy_access::read_only);
  auto transposed = from_numpy.view<std::mdspan<const double, std::dextents<std::int64_t, 2>, std::layout_stride>>();
  std::printf("  NumPy m.T (4x3, strides %lld,%lld)    -> mdspan<const double, layout_stride>: [3,2] = %g\n",
              static_cast<long long>(transposed.stride(0)), static_cast<long long>(transposed.stride(1)), transposed[3, 2]);
  auto as_left = from_numpy.view<std::mdspan<const double, std::dextents<int, 2>, std::layout_left>>();
  std::printf("  the same, as layout_left            -> [3,2] = %g (it is column-major)\n", as_left[3, 2]);

  PyObject* torch_int = run("torch.arange(6, dtype=torch.int32).reshape(2, 3)", globals);
  auto from_torch = take(torch_int, dm::legacy_access::writable);  // PyTorch allows writes
  auto ints = from_torch.view<std::mdspan<std::int32_t, std::extents<int, 2, 3>>>();
  ints[1, 1] = 100;
  std::printf("  PyTorch int32 2x3                   -> mdspan<int32_t, 2, 3>; wrote [1,1] = 100, torch sees %s\n",
              PyUnicode_AsUTF8(run("str(int(torch_int_ref[1, 1]))", [&] {
                PyDict_SetItemString(globals, "torch_int_ref", torch_int);
                return globals;
              }())));

  // ---- 3. Wrong expectations are refused -------------------------------------------------
  std::printf("\n3. bad inputs, refused with the reason\n");
  using rows = std::mdspan<const double, std::dextents<int, 2>>;
  show_refusal<rows>("transposed as row-major", from_numpy);
  show_refusal<std::mdspan<const float, std::dextents<int, 2>, std::layout_stride>>("float64 data as float32", from_numpy);
  show_refusal<std::mdspan<const double, std::dextents<int, 3>, std::layout_stride>>("rank 2 as rank 3", from_numpy);
  show_refusal<std::mdspan<double, std::dextents<int, 2>, std::layout_stride>>("legacy NumPy data, mutable", from_numpy);

  from_numpy.reset();
  from_torch.reset();
  Py_DECREF(np_transposed);
  Py_DECREF(np_matrix);
  Py_DECREF(torch_int);
  Py_DECREF(np_array);
  Py_DECREF(torch_tensor);
  Py_DECREF(globals);
  if (Py_FinalizeEx() < 0) return 1;
  std::printf("\nzero copy both ways: %s\n", shared ? "yes" : "NO");
  return shared ? 0 : 1;
}
