// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// nb_bench: nanobind's ndarray argument conversion, for timing against dlpm_bench.
//
//   consume_f32_2d(a)  a function taking nb::ndarray<float, nb::ndim<2>, nb::c_contig>:
//                      nanobind imports the argument (through __dlpack__ for NumPy),
//                      checks dtype, rank and order, and releases it when the call ends.
//   consume_mdspan(a)  the same function taking std::mdspan<float, std::dextents<int64_t, 2>>
//                      through our caster (dlpack_mdspan/nanobind.hpp): the type's exchange
//                      API where it publishes one, else __dlpack__; the library's checks.
//   overloaded(a)      two overloads through our caster, a float64 view first, then a float32
//                      one: a float32 argument falls through the first (issue 39: a producer
//                      that announces its dtype is refused there without an export).
//   noop(a)            a function taking nb::handle: nanobind's call floor.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <mdspan>

#include <dlpack_mdspan/nanobind.hpp>

namespace nb = nanobind;

namespace {
volatile std::uintptr_t sink;  // the view is used, so nothing can be skipped
}

NB_MODULE(nb_bench, m) {
  m.def("consume_f32_2d", [](nb::ndarray<float, nb::ndim<2>, nb::c_contig> a) {
    sink = reinterpret_cast<std::uintptr_t>(a.data()) + static_cast<std::uintptr_t>(a.shape(0)) +
           static_cast<std::uintptr_t>(a.shape(1));
  });
  m.def("consume_mdspan", [](std::mdspan<float, std::dextents<std::int64_t, 2>> a) {
    sink = reinterpret_cast<std::uintptr_t>(a.data_handle()) + static_cast<std::uintptr_t>(a.extent(0)) +
           static_cast<std::uintptr_t>(a.extent(1));
  });
  m.def("overloaded", [](std::mdspan<const double, std::dextents<std::int64_t, 2>> a) {
    sink = reinterpret_cast<std::uintptr_t>(a.data_handle());
  });
  m.def("overloaded", [](std::mdspan<const float, std::dextents<std::int64_t, 2>> a) {
    sink = reinterpret_cast<std::uintptr_t>(a.data_handle());
  });
  m.def("noop", [](nb::handle) {});
}
