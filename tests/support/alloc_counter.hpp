// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Counts global operator new calls on the current thread (alloc_counter.cpp replaces
// operator new in the test executables), and can make the N-th one fail, for fault
// injection. Used to prove "exactly one allocation" and the strong guarantee.
#pragma once

#include <cstddef>

namespace dlpm_test {
std::size_t allocations_on_this_thread() noexcept;

// Makes the `n`-th allocation from now on this thread fail (throwing operator new throws
// std::bad_alloc, nothrow returns NULL); 0 disarms. Returns on destruction to disarmed.
class fail_nth_allocation {
 public:
  explicit fail_nth_allocation(std::size_t n) noexcept;
  ~fail_nth_allocation();
  fail_nth_allocation(const fail_nth_allocation&) = delete;
  fail_nth_allocation& operator=(const fail_nth_allocation&) = delete;
};
}  // namespace dlpm_test
