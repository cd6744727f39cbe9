// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// try_visit_mdspan / visit_mdspan: runtime dtype → typed view.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::tensor_builder;

namespace {
template <class T>
using matrix = std::mdspan<T, std::dextents<std::int64_t, 2>, std::layout_stride>;

struct summer {
  template <class M>
  double operator()(M m) const {
    double s = 0;
    for (std::int64_t i = 0; i < m.extent(0); ++i)
      for (std::int64_t j = 0; j < m.extent(1); ++j) s += static_cast<double>(m[i, j]);
    return s;
  }
};
}  // namespace

TEST_CASE("the visitor gets the view typed by the tensor's dtype") {
  double d[4] = {1, 2, 3, 4};
  std::int16_t s[4] = {1, 1, 1, 1};
  tensor_builder td(d, dlpm_test::f64, {2, 2}, {2, 1});
  tensor_builder ts(s, dlpm_test::dt(kDLInt, 16), {2, 2}, {1, 2});
  CHECK(dm::visit_mdspan<matrix, float, double, std::int16_t>(td.get(), summer{}) == 10.0);
  CHECK(dm::visit_mdspan<matrix, float, double, std::int16_t>(ts.get(), summer{}) == 4.0);
  int seen = 0;
  auto r = dm::try_visit_mdspan<matrix, float, double>(td.get(), [&](auto m) { seen = static_cast<int>(m.extent(0)); });
  CHECK(r.has_value());
  CHECK(seen == 2);
}

TEST_CASE("no candidate matches: a clear error: a match that fails validation: its own error") {
  std::uint8_t u[4] = {};
  tensor_builder tu(u, dlpm_test::dt(kDLUInt, 8), {2, 2}, {2, 1});
  auto r = dm::try_visit_mdspan<matrix, float, double>(tu.get(), summer{});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::no_matching_type);
  CHECK(std::string(r.error().what()) == "dtype uint8 matches none of the 2 candidate element types");
  auto visit_u8 = [&] { (void)dm::visit_mdspan<matrix, float>(tu.get(), summer{}); };
  CHECK_THROWS_AS(visit_u8(), dm::dlpack_error);
  float f[4] = {};
  tensor_builder rank1(f, dlpm_test::f32, {4}, {1});
  CHECK(dm::try_visit_mdspan<matrix, float>(rank1.get(), summer{}).error().code() == dm::errc::ndim_mismatch);
}
