// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// doctest's main, plus one guard: a run whose filters matched no test case fails.
// CTest runs each test case by name; a name that stops matching (renamed, or split by a
// ';' in CMake's list handling) must fail loudly instead of passing with nothing run.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {
unsigned matched_test_cases = 0;
bool run_finished = false;

struct match_counter : doctest::IReporter {
  explicit match_counter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    matched_test_cases = stats.numTestCasesPassingFilters;
    run_finished = true;
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
}  // namespace

DOCTEST_REGISTER_LISTENER("match_counter", 1, match_counter);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;
  if (run_finished && matched_test_cases == 0) {
    std::fprintf(stderr, "error: no test case matched the filters; nothing was tested\n");
    return 1;
  }
  return result;
}
