// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpm_sample: nanobind functions whose parameters are std::mdspan, converted from any DLPack
// producer (NumPy, PyTorch, JAX, ...) by dlpack_mdspan's caster, zero-copy and validated for
// exactly the parameter's type.
#include <nanobind/nanobind.h>

#include <cstdint>
#include <mdspan>

#include <dlpack_mdspan/nanobind.hpp>  // last: in the module form it ends with the import

namespace nb = nanobind;

using matrix = std::mdspan<float, std::dextents<std::int64_t, 2>>;                          // writable, row-major
using column = std::mdspan<const double, std::dextents<std::int64_t, 1>, std::layout_stride>;  // read-only, any stride

NB_MODULE(dlpm_sample, m) {
  m.def("scale", [](matrix a, float k) {
    for (std::int64_t i = 0; i < a.extent(0); ++i)
      for (std::int64_t j = 0; j < a.extent(1); ++j) a[i, j] *= k;
  }, nb::arg("a"), nb::arg("k"), nb::call_guard<nb::gil_scoped_release>(), "a *= k, in place");
  m.def("total", [](column v) {
    double s = 0;
    for (std::int64_t i = 0; i < v.extent(0); ++i) s += v[i];
    return s;
  }, nb::arg("v"), "the sum of a float64 vector, any stride");
}
