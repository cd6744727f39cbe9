// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// error.hpp: codes and their names, messages kept as values and worded on demand (dtypes by
// name through %#x), truncation at the capacity, the exception form.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

#include <string>
#include <string_view>

namespace dm = dlpack_mdspan;

TEST_CASE("every errc up to last_errc has a name of its own") {
  CHECK(std::string_view(dm::errc_name(dm::errc::ok)) != "");
  for (int c = 0; c <= static_cast<int>(dm::last_errc); ++c) {
    const char* a = dm::errc_name(static_cast<dm::errc>(c));
    REQUIRE(a != nullptr);
    for (int d = 0; d < c; ++d) REQUIRE(std::string_view(a) != dm::errc_name(static_cast<dm::errc>(d)));
  }
  CHECK(std::string_view(dm::errc_name(dm::errc::subbyte_not_viewable)) == "sub-byte dtype not viewable element-wise");
}

TEST_CASE("error::format keeps the values and words them on demand, a dtype by its name") {
  const auto e = dm::error::format(dm::errc::negative_extent, "shape[%d] = %lld is negative", 1, -3LL);
  CHECK(e.code() == dm::errc::negative_extent);
  CHECK(e.message().view() == "shape[1] = -3 is negative");
  CHECK(e.what().view() == e.message().view());
  dm::error d;
  CHECK_FALSE(dm::check_dtype_equals(DLDataType{kDLFloat, 16, 2}, DLDataType{kDLFloat, 32, 1}, &d));
  CHECK(d.message().view() == "dtype float16x2 does not match the required float32");
  const dm::error fixed(dm::errc::internal, "a fixed message");
  CHECK(fixed.message().view() == "a fixed message");
}

TEST_CASE("a message longer than the capacity is cut, terminated") {
  const std::string longer(2 * dm::error::capacity, 'a');
  const auto e = dm::error::format(dm::errc::invalid_argument, "%s", longer.c_str());
  const auto text = e.message();
  CHECK(text.view().size() == dm::error::capacity - 1);
  char small[8];
  e.write(small, sizeof small);
  CHECK(std::string_view(small) == "aaaaaaa");
}

TEST_CASE("dlpack_error carries the code and the worded message") {
  const auto e = dm::error::format(dm::errc::null_data, "data is NULL but the tensor has %lld elements", 6LL);
  const dm::dlpack_error thrown(e);
  CHECK(thrown.code() == dm::errc::null_data);
  CHECK(std::string_view(thrown.what()) == "data is NULL but the tensor has 6 elements");
}
