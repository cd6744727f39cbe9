// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// result<T> in a C++20 TU, where it is the stand-in of expected.hpp rather than
// std::expected: it must behave as std::expected<T, error> does, assignment included.
#include <doctest/doctest.h>

#include <dlpack_mdspan/error.hpp>

#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

namespace dm = dlpack_mdspan;

static_assert(__cplusplus <= 202002L, "this suite checks the C++20 stand-in; build it as C++20");

namespace {
dm::unexpected_error failure(dm::errc code) { return dm::unexpected_error(dm::error(code, "why")); }
}  // namespace

TEST_CASE("result<T> is copy- and move-constructible as T is, with T's noexcept") {
  // std::expected's rules: a std::vector of a move-only T's results moves them (it copied,
  // and failed to compile, while the copy constructor was unconstrained and the move not
  // noexcept).
  static_assert(std::is_copy_constructible_v<dm::result<int>>);
  static_assert(std::is_nothrow_move_constructible_v<dm::result<int>>);
  static_assert(!std::is_copy_constructible_v<dm::result<std::unique_ptr<int>>>);
  static_assert(std::is_nothrow_move_constructible_v<dm::result<std::unique_ptr<int>>>);
  std::vector<dm::result<std::unique_ptr<int>>> results;
  results.push_back(std::make_unique<int>(7));
  results.push_back(failure(dm::errc::read_only));
  results.reserve(64);  // moves the two
  REQUIRE(results[0].has_value());
  CHECK(**results[0] == 7);
  CHECK(results[1].error().code() == dm::errc::read_only);
}

TEST_CASE("result<T> is copy- and move-assignable when T is") {
  static_assert(std::is_copy_assignable_v<dm::result<int>>);
  static_assert(std::is_move_assignable_v<dm::result<int>>);
  static_assert(std::is_nothrow_move_assignable_v<dm::result<int>>);
  static_assert(!std::is_copy_assignable_v<dm::result<std::unique_ptr<int>>>);
  static_assert(std::is_move_assignable_v<dm::result<std::unique_ptr<int>>>);

  dm::result<int> a = 1;
  dm::result<int> b = failure(dm::errc::read_only);
  a = b;  // value <- error
  REQUIRE_FALSE(a.has_value());
  CHECK(a.error().code() == dm::errc::read_only);
  b = 5;  // error <- value
  REQUIRE(b.has_value());
  a = b;  // error <- value (copy)
  CHECK(*a == 5);
  a = dm::result<int>(7);  // value <- value (move)
  CHECK(*a == 7);
  a = failure(dm::errc::null_data);
  CHECK(a.error().code() == dm::errc::null_data);
}

TEST_CASE("move assignment moves the value and keeps ownership single") {
  dm::result<std::unique_ptr<int>> a = std::make_unique<int>(3);
  dm::result<std::unique_ptr<int>> b = failure(dm::errc::invalid_argument);
  b = std::move(a);
  REQUIRE(b.has_value());
  CHECK(**b == 3);
  b = failure(dm::errc::out_of_memory);  // the held pointer is destroyed, not leaked
  CHECK(b.error().code() == dm::errc::out_of_memory);
}

TEST_CASE("value() of an error throws dlpack_error with the error's code and message") {
  const dm::result<int> r = failure(dm::errc::read_only);
  CHECK_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::read_only);
  try {
    (void)r.value();
    FAIL("value() of an error returned");
  } catch (const dm::dlpack_error& e) {
    CHECK(e.code() == dm::errc::read_only);
    CHECK(std::string_view(e.what()) == "why");
  }
}
