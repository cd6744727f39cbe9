// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: managed_tensor::adopt with arbitrary version, flags and tensor fields.
// The counting deleter must have run exactly once when everything is over, whatever the
// input: version rejection, failed views and successful ones alike.
#include <mdspan>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include "fuzz_input.hpp"

#include <cstdlib>

namespace dm = dlpack_mdspan;

namespace {
int deleter_calls = 0;
void counting_deleter(DLManagedTensorVersioned*) { ++deleter_calls; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dlpm_fuzz::fuzz_tensor f(data, size);
  DLManagedTensorVersioned managed{};
  managed.version = f.version;
  managed.flags = f.flags;
  managed.dl_tensor = f.tensor;
  managed.deleter = counting_deleter;
  deleter_calls = 0;
  {
    auto adopted = dm::managed_tensor::try_adopt(&managed);
    if (adopted) {
      (void)adopted->try_view<std::mdspan<float, std::dextents<std::int64_t, 2>, dm::layout_stride_relaxed>>();
      (void)adopted->try_view<std::mdspan<const std::uint8_t, std::dextents<int, 1>>>();
      if (adopted->is_read_only() &&
          adopted->try_view<std::mdspan<float, std::dextents<std::int64_t, 2>>>().error().code() != dm::errc::read_only)
        std::abort();  // a mutable view of a READ_ONLY tensor must always be refused first
      dm::managed_tensor moved = std::move(*adopted);
      if (deleter_calls != 0) std::abort();
    } else if (adopted.error().code() == dm::errc::version_mismatch && deleter_calls != 1) {
      std::abort();
    }
  }
  if (deleter_calls != 1) std::abort();
  return 0;
}
