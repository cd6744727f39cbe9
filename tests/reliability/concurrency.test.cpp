// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A stress test for ThreadSanitizer (and a plain correctness test elsewhere): 8 threads
// adopt, view and release managed tensors, export views of shared data, and hand tensors
// to other threads whose deleters then run there.
#include "support/prelude.hpp"

#include <dlpack_mdspan.h>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <atomic>
#include <mutex>

namespace dm = dlpack_mdspan;

namespace {
constexpr int thread_count = 8;
constexpr int rounds = 2000;

std::atomic<int> owners_destroyed{0};

struct counting_owner {
  std::vector<float> data;
  bool live = true;
  explicit counting_owner(std::vector<float> d) : data(std::move(d)) {}
  counting_owner(counting_owner&& o) noexcept : data(std::move(o.data)) { o.live = false; }
  ~counting_owner() {
    if (live) owners_destroyed.fetch_add(1, std::memory_order_relaxed);
  }
};
}  // namespace

TEST_CASE("8 threads adopt, view, export and release, and deleters run on foreign threads") {
  owners_destroyed = 0;
  const std::vector<double> shared(64, 1.5);  // read by every thread through exported views
  std::mutex handoff_mutex;
  std::vector<DLManagedTensorVersioned*> handoff;  // tensors made on one thread, freed on another
  std::atomic<int> checks_failed{0};

  auto work = [&](int id) {
    for (int round = 0; round < rounds; ++round) {
      std::vector<float> values(12, static_cast<float>(id));
      float* data = values.data();
      auto owned = dm::to_managed_tensor(std::mdspan<float, std::dextents<int, 2>>(data, 3, 4), counting_owner(std::move(values)));
      auto adopted = dm::managed_tensor::adopt(owned.release());
      auto v = adopted.view<std::mdspan<const float, std::dextents<std::int64_t, 2>, std::layout_stride>>();
      if (v[2, 3] != static_cast<float>(id)) checks_failed.fetch_add(1);
#ifdef DLPM_INJECT_RACE
      static int racy = 0;
      ++racy;
#endif

      auto view = dm::to_dlpack_tensor(std::mdspan<const double, std::dextents<int, 2>>(shared.data(), 8, 8));
      const DLTensor t = view.get();
      dlpm_requirements req;
      dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
      req.order = 'C';
      if (dlpm_check(&t, &req) != DLPM_OK) checks_failed.fetch_add(1);
      if (dm::to_mdspan<std::mdspan<const double, std::dextents<int, 2>>>(t)[7, 7] != 1.5) checks_failed.fetch_add(1);

      // Give the tensor to whichever thread comes next; take one made by another thread.
      DLManagedTensorVersioned* theirs = nullptr;
      {
        std::lock_guard<std::mutex> lock(handoff_mutex);
        handoff.push_back(adopted.release());
        if (handoff.size() > 1) {
          theirs = handoff.front();
          handoff.erase(handoff.begin());
        }
      }
      if (theirs != nullptr) {
        auto foreign = dm::managed_tensor::adopt(theirs);
        if (foreign.view<std::mdspan<const float, std::dextents<int, 2>>>().extent(1) != 4) checks_failed.fetch_add(1);
      }  // its deleter runs here, on this thread
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < thread_count; ++i) threads.emplace_back(work, i);
  for (auto& t : threads) t.join();
  for (auto* left : handoff) dlpm_managed_delete(left);

  CHECK(checks_failed.load() == 0);
  CHECK(owners_destroyed.load() == thread_count * rounds);
}
