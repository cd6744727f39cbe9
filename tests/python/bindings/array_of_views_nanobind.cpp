// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-fail test: a std::array of views is a parameter nanobind would load in a noexcept
// function, where a refused view's raise would end the process, so it does not compile, and
// the message names the containers that do. Without DLPM_EXPECT_COMPILE_ERROR the valid
// spelling, a std::vector of views with nanobind's own vector caster included beside the
// header's, is built (header and module form).
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstdint>
#include <mdspan>
#include <vector>

#include <dlpack_mdspan/nanobind.hpp>

using const_f32_1d = std::mdspan<const float, std::dextents<std::int64_t, 1>>;

NB_MODULE(array_of_views_nanobind, m) {
#ifdef DLPM_EXPECT_COMPILE_ERROR
  m.def("first", [](std::array<const_f32_1d, 2> a) { return a[0].extent(0); });
#else
  m.def("first", [](std::vector<const_f32_1d> a) { return a.empty() ? 0 : a[0].extent(0); });
#endif
}
