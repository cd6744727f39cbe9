// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand a C++ buffer out as an owning DLManagedTensorVersioned and take it back.
// The std::vector that owns the data travels inside the tensor and is destroyed by the
// deleter, exactly once, wherever the last consumer drops it.
#include <cstdint>
#include <cstdio>
#include <mdspan>
#include <vector>

#include "support/allocation_count.hpp"  // counts operator new (examples/support/allocation_count.cpp)
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;

// Keeps the data alive; says when it goes.
struct noisy_owner {
  std::vector<double> values;
  bool live = true;
  explicit noisy_owner(std::vector<double> v) : values(std::move(v)) {}
  noisy_owner(noisy_owner&& o) noexcept : values(std::move(o.values)) { o.live = false; }
  ~noisy_owner() {
    if (live) std::printf("  owner destroyed: %zu doubles freed\n", values.size());
  }
};

// Stands for any consumer across a C boundary (Python, Rust, a C library): it receives
// the raw pointer and owns it from then on.
static void consumer(DLManagedTensorVersioned* handed_over) {
  auto tensor = dm::managed_tensor::adopt(handed_over);
  auto m = tensor.view<std::mdspan<double, std::dextents<std::int64_t, 2>>>();
  std::printf("  consumer sees %lldx%lld, read_only=%d; doubling every element\n", static_cast<long long>(m.extent(0)),
              static_cast<long long>(m.extent(1)), tensor.is_read_only());
  for (std::int64_t i = 0; i < m.extent(0); ++i)
    for (std::int64_t j = 0; j < m.extent(1); ++j) m[i, j] *= 2;
}  // the deleter runs here

int main() {
  std::vector<double> values = {1, 2, 3, 4, 5, 6};
  double* data = values.data();
  std::mdspan<double, std::dextents<int, 2>> md(data, 2, 3);

  std::printf("versioned hand-off:\n");
  const std::size_t before = example::heap_allocations();
  auto owned = dm::to_managed_tensor(md, noisy_owner(std::move(values)));
  const std::size_t allocations = example::heap_allocations() - before;
  std::printf("  to_managed_tensor made %zu heap allocation(s) (counted): tensor, shape, strides and owner in one block\n",
              allocations);
  std::printf("  exported: flags=%llu, version %u.%u\n", static_cast<unsigned long long>(owned.flags()),
              owned.version().major, owned.version().minor);
  consumer(owned.release());

  // An over-aligned owner comes from the aligned operator new: still one block, counted.
  struct alignas(64) cache_line_owner {
    std::vector<double> values;
  };
  std::vector<double> pair = {1, 2};
  std::mdspan<double, std::dextents<int, 1>> pair_view(pair.data(), 2);
  const std::size_t before_aligned = example::heap_allocations();
  auto aligned = dm::to_managed_tensor(pair_view, cache_line_owner{std::move(pair)});
  const std::size_t aligned_allocations = example::heap_allocations() - before_aligned;
  std::printf("  with an alignas(64) owner: %zu heap allocation(s) (counted)\n", aligned_allocations);
  aligned.reset();

  std::printf("legacy hand-off (for NumPy 1.x / PyTorch 1.x):\n");
  std::vector<double> more = {10, 20};
  DLManagedTensor* legacy = dm::to_legacy_managed_tensor(std::mdspan<double, std::dextents<int, 1>>(more.data(), 2),
                                                         noisy_owner(std::move(more)));
  auto back = dm::managed_tensor::adopt_legacy(legacy);  // read-only: legacy has no flags
  auto refused = back.try_view<std::mdspan<double, std::dextents<int, 1>>>();
  std::printf("  mutable view of a legacy tensor: %s\n", refused ? "allowed?!" : refused.error().what().c_str());
  std::printf("  const view: %g %g\n", back.view<std::mdspan<const double, std::dextents<int, 1>>>()[0],
              back.view<std::mdspan<const double, std::dextents<int, 1>>>()[1]);
  back.reset();

  std::printf("a foreign tensor from a future DLPack 2.0 producer:\n");
  DLManagedTensorVersioned future{};
  future.version = DLPackVersion{2, 0};
  future.deleter = [](DLManagedTensorVersioned*) { std::printf("  its deleter ran\n"); };
  auto r = dm::managed_tensor::try_adopt(&future);
  std::printf("  %s\n", r ? "accepted?!" : r.error().what().c_str());
  return refused || r || allocations != 1 || aligned_allocations != 1 ? 1 : 0;  // the claims above, held
}
