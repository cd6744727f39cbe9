// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-fail test: a bound function that returns a bare std::mdspan does not compile
// (nothing would own its memory), and the message says what to return instead. Without
// DLPM_EXPECT_COMPILE_ERROR the valid spelling, a held_view, is built (header and module form).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <mdspan>

#include <dlpack_mdspan/pybind11.hpp>

using f32_1d = std::mdspan<float, std::dextents<std::int64_t, 1>>;

PYBIND11_MODULE(returns_mdspan_pybind11, m) {
#ifdef DLPM_EXPECT_COMPILE_ERROR
  m.def("view", [](f32_1d a) { return a; });
#else
  m.def("view", [](dlpack_mdspan::python::held_view<f32_1d> a) { return a; });
#endif
}
