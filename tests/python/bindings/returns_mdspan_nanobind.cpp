// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-fail test: a bound function that returns a bare std::mdspan does not compile
// (nothing would own its memory), and the message says what to return instead. Without
// DLPM_EXPECT_COMPILE_ERROR the valid spelling, a held_view, is built (header and module form).
#include <nanobind/nanobind.h>

#include <cstdint>
#include <mdspan>

#include <dlpack_mdspan/nanobind.hpp>

using f32_1d = std::mdspan<float, std::dextents<std::int64_t, 1>>;

NB_MODULE(returns_mdspan_nanobind, m) {
#ifdef DLPM_EXPECT_COMPILE_ERROR
  m.def("view", [](f32_1d a) { return a; });
#else
  m.def("view", [](dlpack_mdspan::python::held_view<f32_1d> a) { return a; });
#endif
}
