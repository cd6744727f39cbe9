// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-fail test: a std::map of owned tensors is a parameter nanobind would load in a
// noexcept function, where a refused tensor's raise (or a producer's interrupt) would end the
// process, so it does not compile, and the message names the containers that do. Without
// DLPM_EXPECT_COMPILE_ERROR the valid spellings are built (header and module form): owned
// tensors returned in a std::map, a std::pair and a std::tuple, and taken in a std::vector.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <dlpack_mdspan/nanobind.hpp>

using owned = dlpack_mdspan::managed_tensor;

NB_MODULE(map_of_owned_nanobind, m) {
#ifdef DLPM_EXPECT_COMPILE_ERROR
  m.def("count", [](std::map<std::string, owned> named) { return named.size(); });
#else
  m.def("count", [](std::vector<owned> each) { return each.size(); });
  m.def("named", [] { return std::map<std::string, owned>{}; });
  m.def("two", [] { return std::pair<owned, owned>{}; });
  m.def("three", [] { return std::tuple<owned, int, owned>{}; });
#endif
}
