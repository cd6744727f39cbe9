// Counts global operator new calls on the current thread (alloc_counter.cpp replaces
// operator new in the test executables). Used to prove "exactly one allocation".
#pragma once

#include <cstddef>

namespace dlpm_test {
std::size_t allocations_on_this_thread() noexcept;
}
