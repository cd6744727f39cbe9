// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Example code: replaces the global operator new(size_t) and operator delete(void*) so that
// each allocation is tallied (allocation_count.hpp). Two replacements are enough: the
// standard library's own array, nothrow and sized forms call these two, so a nothrow
// `new (std::nothrow) T` inside the library is counted as well.
#include "allocation_count.hpp"

#include <cstdlib>
#include <new>

namespace {
thread_local std::size_t tally = 0;
}  // namespace

std::size_t example::heap_allocations() noexcept { return tally; }

void* operator new(std::size_t bytes) {
  ++tally;
  if (void* memory = std::malloc(bytes != 0 ? bytes : 1)) return memory;
  throw std::bad_alloc();
}

void operator delete(void* memory) noexcept { std::free(memory); }
