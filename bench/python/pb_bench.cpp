// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// pb_bench: the nb_bench function bound with pybind11 and our caster, for bench_py.py.
//
//   consume_mdspan(a)  takes std::mdspan<float, std::dextents<int64_t, 2>> through
//                      dlpack_mdspan/pybind11.hpp (any DLPack producer; py::array would
//                      take NumPy only)
//   consume_array(a)   the same function taking pybind11's own NumPy argument,
//                      py::array_t<float, py::array::c_style> (NumPy only), its rank
//                      checked in the body: the floor of a pybind11 function that takes a
//                      NumPy array (pybind11's call and its array caster, no keep-alive:
//                      the caster holds a reference to the array).
//   noop(a)            a function taking py::handle: pybind11's call floor.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <mdspan>

#include <dlpack_mdspan/pybind11.hpp>

namespace py = pybind11;

namespace {
volatile std::uintptr_t sink;  // the view is used, so nothing can be skipped
}

PYBIND11_MODULE(pb_bench, m) {
  m.def("consume_mdspan", [](std::mdspan<float, std::dextents<std::int64_t, 2>> a) {
    sink = reinterpret_cast<std::uintptr_t>(a.data_handle()) + static_cast<std::uintptr_t>(a.extent(0)) +
           static_cast<std::uintptr_t>(a.extent(1));
  });
  m.def("consume_array", [](const py::array_t<float, py::array::c_style>& a) {
    if (a.ndim() != 2) throw py::type_error("consume_array: a 2-D array is required");
    sink = reinterpret_cast<std::uintptr_t>(a.data()) + static_cast<std::uintptr_t>(a.shape(0)) +
           static_cast<std::uintptr_t>(a.shape(1));
  });
  m.def("noop", [](py::handle) {});
}
