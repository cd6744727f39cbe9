// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Example code: replaces the global allocation functions so that each allocation is tallied
// (allocation_count.hpp). Every form is replaced, each beside the deallocation functions
// that free what it returns: a standard library (or a sanitizer runtime) may route a form
// that is left out to its own allocator, which would then miss the tally or be handed
// memory from malloc.
#include "allocation_count.hpp"

#include <cstdlib>
#include <new>

namespace {
thread_local std::size_t tally = 0;

void* counted(std::size_t bytes) noexcept {
  ++tally;
  return std::malloc(bytes != 0 ? bytes : 1);
}

void* counted_or_throw(std::size_t bytes) {
  if (void* memory = counted(bytes)) return memory;
  throw std::bad_alloc();
}

// The over-aligned forms (an owner declared alignas(64), say): aligned_alloc wants a size
// that is a multiple of the alignment.
void* counted_aligned(std::size_t bytes, std::align_val_t alignment) noexcept {
  const auto align = static_cast<std::size_t>(alignment);
  const std::size_t rounded = bytes == 0 ? align : (bytes + align - 1) / align * align;
  if (rounded < bytes) return nullptr;  // the rounding overflowed
  ++tally;
  return std::aligned_alloc(align, rounded);
}

void* counted_aligned_or_throw(std::size_t bytes, std::align_val_t alignment) {
  if (void* memory = counted_aligned(bytes, alignment)) return memory;
  throw std::bad_alloc();
}
}  // namespace

std::size_t example::heap_allocations() noexcept { return tally; }

// new T
void* operator new(std::size_t bytes) { return counted_or_throw(bytes); }
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

// new T[n]
void* operator new[](std::size_t bytes) { return counted_or_throw(bytes); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept { std::free(memory); }

// new (std::nothrow) T and T[n]: NULL instead of std::bad_alloc
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept { return counted(bytes); }
void operator delete(void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept { return counted(bytes); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { std::free(memory); }

// new T and T[n] for an over-aligned T, and their nothrow forms
void* operator new(std::size_t bytes, std::align_val_t a) { return counted_aligned_or_throw(bytes, a); }
void operator delete(void* memory, std::align_val_t) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t, std::align_val_t) noexcept { std::free(memory); }
void* operator new[](std::size_t bytes, std::align_val_t a) { return counted_aligned_or_throw(bytes, a); }
void operator delete[](void* memory, std::align_val_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t, std::align_val_t) noexcept { std::free(memory); }
void* operator new(std::size_t bytes, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_aligned(bytes, a); }
void operator delete(void* memory, std::align_val_t, const std::nothrow_t&) noexcept { std::free(memory); }
void* operator new[](std::size_t bytes, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_aligned(bytes, a); }
void operator delete[](void* memory, std::align_val_t, const std::nothrow_t&) noexcept { std::free(memory); }
