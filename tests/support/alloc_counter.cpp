// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "support/alloc_counter.hpp"

#include <cstdlib>
#include <new>

namespace {
thread_local std::size_t count = 0;
thread_local std::size_t fail_at = 0;  // the value of `count` whose allocation fails; 0 = never

// True when this allocation is the one to fail.
bool next_fails() noexcept {
  ++count;
  if (fail_at != 0 && count == fail_at) {
    fail_at = 0;
    return true;
  }
  return false;
}
}  // namespace

std::size_t dlpm_test::allocations_on_this_thread() noexcept { return count; }

dlpm_test::fail_nth_allocation::fail_nth_allocation(std::size_t n) noexcept { fail_at = n == 0 ? 0 : count + n; }
dlpm_test::fail_nth_allocation::~fail_nth_allocation() { fail_at = 0; }

void* operator new(std::size_t n) {
  if (next_fails()) throw std::bad_alloc();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (next_fails()) return nullptr;
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return ::operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
