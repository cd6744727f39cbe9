// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// bound_functions.hpp through nanobind and dlpack_mdspan/nanobind.hpp (test_bindings.py).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include <dlpack_mdspan/nanobind.hpp>

#include "bound_functions.hpp"

namespace nb = nanobind;
namespace dp = dlpack_mdspan::python;

NB_MODULE(bound_nanobind, m) {
  bound::define_all(m, nb::arg("a").noconvert(), nb::call_guard<nb::gil_scoped_release>());
  // nb::cast to a bare mdspan is refused: the view would outlive the caster's tensor.
  m.def("cast_view", [](nb::handle h) { return bound::total(nb::cast<bound::const_f64_strided>(h)); });
  m.def("cast_held", [](nb::handle h) {
    auto held = nb::cast<dp::held_view<bound::const_f32_2d>>(h);
    return held.view().extent(0);
  });
  // A const element takes the header's container (nanobind's own would let a refusal abort).
  m.def("total_optional_const", [](std::optional<const bound::const_f64_strided> a) { return a ? bound::total(*a) : -1.0; });
  // Owned tensors returned in the containers that do not take them as parameters.
  m.def("named_aranges", [] {
    std::map<std::string, dlpack_mdspan::managed_tensor> named;
    named.emplace("a", bound::arange_2x3());
    named.emplace("b", bound::arange_2x3());
    return named;
  });
  m.def("pair_of_aranges", [] { return std::pair{bound::arange_2x3(), bound::arange_2x3()}; });
  m.def("arange_and_seven", [] { return std::tuple{bound::arange_2x3(), 7}; });
  // The peer: nanobind's own nb::ndarray argument, what it takes that our casters refuse.
  // Summed as it reads it (test_frameworks_bindings.py: a negated view) ...
  m.def("ndarray_total", [](nb::ndarray<const double, nb::ndim<1>, nb::device::cpu> a) {
    double sum = 0;
    for (std::size_t i = 0; i < a.shape(0); ++i) sum += a.data()[static_cast<std::int64_t>(i) * a.stride(0)];
    return sum;
  });
  // ... and described without reading an element (test_hostile.py: malformed tensors).
  m.def("ndarray_description", [](nb::ndarray<nb::ro> a) {
    nb::list shape, strides;
    for (std::size_t r = 0; r < a.ndim(); ++r) {
      shape.append(a.shape(r));
      strides.append(a.stride(r));
    }
    return nb::make_tuple(nb::tuple(shape), nb::tuple(strides), a.device_id(),
                          reinterpret_cast<std::uintptr_t>(a.data()));
  });
}
