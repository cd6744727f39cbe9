// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// pb_bench: the nb_bench function bound with pybind11 and our caster, for bench_py.py.
//
//   consume_mdspan(a)  takes std::mdspan<float, std::dextents<int64_t, 2>> through
//                      dlpack_mdspan/pybind11.hpp (any DLPack producer; py::array would
//                      take NumPy only)
//   noop(a)            a function taking py::handle: pybind11's call floor.
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
  m.def("noop", [](py::handle) {});
}
