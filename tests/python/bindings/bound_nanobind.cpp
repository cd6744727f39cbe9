// bound_functions.hpp through nanobind and dlpack_mdspan/nanobind.hpp (test_bindings.py).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <dlpack_mdspan/nanobind.hpp>

#include "bound_functions.hpp"

namespace nb = nanobind;
namespace dp = dlpack_mdspan::python;

NB_MODULE(bound_nanobind, m) {
  m.def("scale", &bound::scale);
  m.def("total", &bound::total);
  m.def("total_any", &bound::total_any);
  m.def("fixed_left", &bound::fixed_left);
  m.def("kind", &bound::kind_f32);
  m.def("kind", &bound::kind_i32);
  m.def("kind", &bound::kind_str);
  m.def("kind_noconvert", &bound::kind_f32, nb::arg("a").noconvert());
  m.def("kind_noconvert", &bound::kind_i32, nb::arg("a").noconvert());
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
  m.def("sum_without_gil", &bound::sum_without_gil, nb::call_guard<nb::gil_scoped_release>());
  // nb::cast to a bare mdspan is refused: the view would outlive the caster's tensor.
  m.def("cast_view", [](nb::handle h) { return bound::total(nb::cast<bound::const_f64_strided>(h)); });
  m.def("cast_held", [](nb::handle h) {
    auto held = nb::cast<dp::held_view<bound::const_f32_2d>>(h);
    return held.view().extent(0); });
}
