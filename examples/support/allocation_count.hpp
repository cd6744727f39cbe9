// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Example code, not part of the library: a tally of heap allocations, so that an example
// can print how many a call made. allocation_count.cpp replaces the global operator new
// (every form) with one that counts, per thread, then calls malloc. Link that file into an
// example and read the tally before and after the call:
//
//   const auto before = example::heap_allocations();
//   auto view = dlpack_mdspan::to_dlpack_tensor(md);
//   std::printf("%zu\n", example::heap_allocations() - before);
#pragma once

#include <cstddef>

namespace example {
/// How many times operator new has run on this thread so far.
std::size_t heap_allocations() noexcept;
}  // namespace example
