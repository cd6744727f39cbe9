// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C++ half of dlpm_interop: dlpack_mdspan/python.hpp (typed imports, borrowed views,
// an exchange-API table for a type of our own) driven from pytest.
//
//   sum_f32_2d(obj)         try_import<mdspan<const float, 2-D, layout_stride>>: the sum
//   fill_f64_1d(obj, x)     with_view<mdspan<double, 1-D, layout_stride>>: writes x everywhere
//   keep(obj) / kept_sum()  a held_view kept beyond the call (a static), summed later
//   Holder(n)               a type of ours publishing exchange_api<...>(): n float32 ones;
//                           Holder(0) makes its export throw a C++ exception, Holder(1)
//                           fail without an exception
//   narrow_view(obj, name)  try_import<mdspan<const T, 1-D, layout_stride>> for the narrow
//                           float T named as ml_dtypes names it (float8_e4m3fn, float4_e2m1fn,
//                           ...): (element bytes, address of element 0, padded flag)
//   narrow_tensor(name, b)  a std::vector<T> of those bytes exported by to_managed_tensor
#include <dlpack_mdspan/python.hpp>

#include <cstdint>
#include <cstring>
#include <mdspan>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace py = dlpack_mdspan::python;
using std::int64_t;

namespace {

using const_f32_2d = std::mdspan<const float, std::dextents<int64_t, 2>, std::layout_stride>;
using f64_1d = std::mdspan<double, std::dextents<int64_t, 1>, std::layout_stride>;

std::optional<py::held_view<const_f32_2d>> kept;

double sum(const const_f32_2d& v) {
  double total = 0;
  for (int64_t i = 0; i < v.extent(0); ++i)
    for (int64_t j = 0; j < v.extent(1); ++j) total += v[i, j];
  return total;
}

PyObject* sum_f32_2d(PyObject*, PyObject* obj) {
  auto held = py::try_import<const_f32_2d>(obj);
  if (!held) return nullptr;
  return PyFloat_FromDouble(sum(held->view()));
}

PyObject* fill_f64_1d(PyObject*, PyObject* args) {
  PyObject* obj;
  double x;
  if (!PyArg_ParseTuple(args, "Od", &obj, &x)) return nullptr;
  if (!py::with_view<f64_1d>(obj, [x](f64_1d v) {
        for (int64_t i = 0; i < v.extent(0); ++i) v[i] = x;
      }))
    return nullptr;
  Py_RETURN_NONE;
}

PyObject* keep(PyObject*, PyObject* obj) {
  auto held = py::try_import<const_f32_2d>(obj);
  if (!held) return nullptr;
  kept.emplace(std::move(*held));
  Py_RETURN_NONE;
}

PyObject* kept_sum(PyObject*, PyObject*) {
  if (!kept) Py_RETURN_NONE;
  const double total = sum(kept->view());
  kept.reset();  // the producer's deleter runs here
  return PyFloat_FromDouble(total);
}

// ---- a type of our own with an exchange-API table -----------------------------------------

struct holder_object {
  PyObject_HEAD
  std::vector<float>* values;
};

DLManagedTensorVersioned* holder_to_managed(PyObject* obj) {
  auto* self = reinterpret_cast<holder_object*>(obj);
  if (self->values->empty()) throw std::runtime_error("an empty Holder has nothing to export");
  if (self->values->size() == 1) return nullptr;  // fails without saying why
  Py_INCREF(obj);  // the export keeps the Holder alive
  std::mdspan<float, std::dextents<int64_t, 1>> v(self->values->data(), static_cast<int64_t>(self->values->size()));
  struct reference {
    PyObject* obj;
    reference(PyObject* o) : obj(o) {}
    reference(reference&& other) noexcept : obj(std::exchange(other.obj, nullptr)) {}
    ~reference() {
      if (obj && Py_IsInitialized()) {
        PyGILState_STATE gil = PyGILState_Ensure();
        Py_DECREF(obj);
        PyGILState_Release(gil);
      }
    }
  };
  return dlpack_mdspan::to_managed_tensor(v, reference(obj)).release();
}

bool holder_to_dltensor(PyObject* obj, DLTensor*) {
  if (reinterpret_cast<holder_object*>(obj)->values->size() == 1) return false;  // fails without saying why
  throw std::runtime_error("borrowing is not offered by Holder");
}

int holder_init(PyObject* obj, PyObject* args, PyObject*) {
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "n", &n)) return -1;
  auto* self = reinterpret_cast<holder_object*>(obj);
  delete self->values;
  self->values = new std::vector<float>(static_cast<std::size_t>(n), 1.0f);
  return 0;
}

void holder_dealloc(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  delete reinterpret_cast<holder_object*>(obj)->values;
  reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free))(obj);
  Py_DECREF(type);
}

PyType_Slot holder_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void*>(holder_init)},
    {Py_tp_dealloc, reinterpret_cast<void*>(holder_dealloc)},
    {0, nullptr},
};

PyType_Spec holder_spec = {"dlpm_interop.Holder", sizeof(holder_object), 0, Py_TPFLAGS_DEFAULT, holder_slots};

// ---- narrow floats: dtype.hpp's fp8 / fp6 / fp4 storage types, by ml_dtypes' names --------

namespace dm = dlpack_mdspan;

// Calls f(std::type_identity<T>{}) for the storage type named `name`; false if none is.
template <class F>
bool with_narrow_type(std::string_view name, F&& f) {
  auto is = [&]<class T>(std::string_view n, std::type_identity<T> t) {
    if (name != n) return false;
    f(t);
    return true;
  };
  return is("float8_e3m4", std::type_identity<dm::float8_e3m4>{}) ||
         is("float8_e4m3", std::type_identity<dm::float8_e4m3>{}) ||
         is("float8_e4m3b11fnuz", std::type_identity<dm::float8_e4m3b11fnuz>{}) ||
         is("float8_e4m3fn", std::type_identity<dm::float8_e4m3fn>{}) ||
         is("float8_e4m3fnuz", std::type_identity<dm::float8_e4m3fnuz>{}) ||
         is("float8_e5m2", std::type_identity<dm::float8_e5m2>{}) ||
         is("float8_e5m2fnuz", std::type_identity<dm::float8_e5m2fnuz>{}) ||
         is("float8_e8m0fnu", std::type_identity<dm::float8_e8m0fnu>{}) ||
         is("float6_e2m3fn", std::type_identity<dm::float6_e2m3fn>{}) ||
         is("float6_e3m2fn", std::type_identity<dm::float6_e3m2fn>{}) ||
         is("float4_e2m1fn", std::type_identity<dm::float4_e2m1fn>{});
}

PyObject* unknown_narrow_type(const char* name) {
  PyErr_Format(PyExc_ValueError, "no narrow float type named %s", name);
  return nullptr;
}

PyObject* narrow_view(PyObject*, PyObject* args) {
  PyObject* obj;
  const char* name;
  if (!PyArg_ParseTuple(args, "Os", &obj, &name)) return nullptr;
  PyObject* result = nullptr;
  if (!with_narrow_type(name, [&]<class T>(std::type_identity<T>) {
        using M = std::mdspan<const T, std::dextents<int64_t, 1>, std::layout_stride>;
        auto held = py::try_import<M>(obj);
        if (!held) return;  // TypeError (or the component's error) is set
        const M& v = held->view();
        std::string bytes(static_cast<std::size_t>(v.extent(0)), '\0');
        for (int64_t i = 0; i < v.extent(0); ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>(v[i].bits);
        const bool padded = (held->owner().flags() & dm::flag_is_subbyte_type_padded) != 0;
        result = Py_BuildValue("(y#NO)", bytes.data(), static_cast<Py_ssize_t>(bytes.size()),
                               PyLong_FromVoidPtr(const_cast<T*>(v.data_handle())), padded ? Py_True : Py_False);
      }))
    return unknown_narrow_type(name);
  return result;
}

PyObject* narrow_tensor(PyObject*, PyObject* args) {
  const char* name;
  const char* data;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "sy#", &name, &data, &n)) return nullptr;
  PyObject* result = nullptr;
  if (!with_narrow_type(name, [&]<class T>(std::type_identity<T>) {
        std::vector<T> values(static_cast<std::size_t>(n));
        if (n > 0) std::memcpy(values.data(), data, static_cast<std::size_t>(n));
        std::mdspan<T, std::dextents<int64_t, 1>> md(values.data(), n);
        auto t = dm::try_to_managed_tensor(md, std::move(values));  // sets the padded flag for fp6 / fp4
        if (!t) {
          PyErr_SetString(PyExc_RuntimeError, t.error().what().c_str());
          return;
        }
        result = dlpm_py_tensor_new(t->release());
      }))
    return unknown_narrow_type(name);
  return result;
}

PyMethodDef methods[] = {
    {"sum_f32_2d", sum_f32_2d, METH_O, "try_import<mdspan<const float, 2-D, layout_stride>>, summed."},
    {"fill_f64_1d", fill_f64_1d, METH_VARARGS, "with_view<mdspan<double, 1-D, layout_stride>>, filled."},
    {"keep", keep, METH_O, "Keep a held_view beyond the call."},
    {"kept_sum", kept_sum, METH_NOARGS, "Sum the kept view and let it go."},
    {"narrow_view", narrow_view, METH_VARARGS, "A narrow float's typed 1-D import: (bytes, address, padded)."},
    {"narrow_tensor", narrow_tensor, METH_VARARGS, "A narrow float's std::vector exported as a managed tensor."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

// Adds the functions and the Holder type to the module; 0 or -1 with an exception set.
extern "C" int dlpm_test_add_typed(PyObject* module) {
  if (PyModule_AddFunctions(module, methods) != 0) return -1;
  PyObject* type = PyType_FromSpec(&holder_spec);
  if (!type) return -1;
  const DLPackExchangeAPI* api = py::exchange_api<&holder_to_managed, &holder_to_dltensor>();
  if (!api || dlpm_py_publish_exchange_api(type, api) != 0 || PyModule_AddObject(module, "Holder", type) != 0) {
    Py_DECREF(type);
    return -1;
  }
  return 0;
}
