// bound_functions.hpp through pybind11 and dlpack_mdspan/pybind11.hpp (test_bindings.py).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlpack_mdspan/pybind11.hpp>

#include "bound_functions.hpp"

namespace py = pybind11;
namespace dp = dlpack_mdspan::python;

PYBIND11_MODULE(bound_pybind11, m) {
  m.def("scale", &bound::scale);
  m.def("total", &bound::total);
  m.def("total_any", &bound::total_any);
  m.def("fixed_left", &bound::fixed_left);
  m.def("kind", &bound::kind_f32);
  m.def("kind", &bound::kind_i32);
  m.def("kind", &bound::kind_str);
  m.def("kind_noconvert", &bound::kind_f32, py::arg("a").noconvert());
  m.def("kind_noconvert", &bound::kind_i32, py::arg("a").noconvert());
  m.def("fill_legacy", &bound::fill_legacy);
  m.def("fill", &bound::fill);
  m.def("keep", &bound::keep);
  m.def("kept_sum", &bound::kept_sum);
  m.def("every_other_row", &bound::every_other_row);
  m.def("pass_through", &bound::pass_through);
  m.def("arange_2x3", &bound::arange_2x3);
  m.def("arange_2x3_numpy", &bound::arange_2x3_as<dp::framework::numpy>);
  m.def("arange_2x3_torch", &bound::arange_2x3_as<dp::framework::torch>);
  m.def("arange_2x3_jax", &bound::arange_2x3_as<dp::framework::jax>);
  m.def("sum_without_gil", &bound::sum_without_gil, py::call_guard<py::gil_scoped_release>());
  // py::cast inside a bound function: the tensor lives until this function returns.
  m.def("cast_view", [](py::handle h) { return bound::total(py::cast<bound::const_f64_strided>(h)); });
  m.def("cast_held", [](py::handle h) {
    auto held = py::cast<dp::held_view<bound::const_f32_2d>>(h);
    return held.view().extent(0); });
}
