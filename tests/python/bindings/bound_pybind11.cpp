// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// bound_functions.hpp through pybind11 and dlpack_mdspan/pybind11.hpp (test_bindings.py).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlpack_mdspan/pybind11.hpp>

#include "bound_functions.hpp"

namespace py = pybind11;
namespace dp = dlpack_mdspan::python;

PYBIND11_MODULE(bound_pybind11, m) {
  bound::define_all(m, py::arg("a").noconvert(), py::call_guard<py::gil_scoped_release>());
  // py::cast inside a bound function: the tensor lives until this function returns.
  m.def("cast_view", [](py::handle h) { return bound::total(py::cast<bound::const_f64_strided>(h)); });
  m.def("cast_held", [](py::handle h) {
    auto held = py::cast<dp::held_view<bound::const_f32_2d>>(h);
    return held.view().extent(0);
  });
}
