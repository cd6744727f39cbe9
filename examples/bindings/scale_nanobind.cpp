// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A nanobind extension whose functions are written against std::mdspan: dlpack_mdspan/nanobind.hpp
// converts any DLPack tensor (NumPy, PyTorch, JAX, TensorFlow, CuPy...) into the exact
// mdspan type a function asks for, zero-copy and validated, and C++-owned results back
// into NumPy arrays. use_scale.py drives it.
#include <nanobind/nanobind.h>

#include <cmath>
#include <cstdint>
#include <mdspan>
#include <numeric>
#include <vector>

#include <dlpack_mdspan/nanobind.hpp>  // last: with DLPM_USE_MODULE it ends with `import dlpack_mdspan;`

namespace nb = nanobind;
namespace dp = dlpack_mdspan::python;

using matrix = std::mdspan<float, std::dextents<std::int64_t, 2>>;  // writable, row-major
using vector_view = std::mdspan<const float, std::dextents<std::int64_t, 1>, std::layout_stride>;

NB_MODULE(scale_nanobind, m) {
  // In place: the caller's array changes. The GIL is released while it runs.
  m.def("scale", [](matrix a, float k) {
    for (std::int64_t i = 0; i < a.extent(0); ++i)
      for (std::int64_t j = 0; j < a.extent(1); ++j) a[i, j] *= k;
  }, nb::call_guard<nb::gil_scoped_release>());
  // Read-only, any stride: a column or a slice with steps is fine.
  m.def("norm", [](vector_view v) {
    double s = 0;
    for (std::int64_t i = 0; i < v.extent(0); ++i) s += double(v[i]) * v[i];
    return std::sqrt(s);
  });
  // Made in C++, returned as a NumPy array that owns the std::vector.
  m.def("ramp", [](std::int64_t n) {
    std::vector<float> values(static_cast<std::size_t>(n));
    std::iota(values.begin(), values.end(), 0.0f);
    const std::mdspan view(values.data(), n);
    return dp::as<dp::framework::numpy>(dlpack_mdspan::to_managed_tensor(view, std::move(values)));
  });
}
