// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C++ side of the Python producer: a buffer allocated in C++, owned by a std::vector
// inside a managed tensor made by to_managed_tensor. The C extension only sees the
// resulting DLManagedTensorVersioned*; on_free runs when the vector is freed.
#include <dlpack/dlpack.h>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <array>
#include <cstdint>
#include <mdspan>
#include <type_traits>
#include <utility>
#include <vector>

namespace {
template <class S>
struct counted_storage {
  std::vector<S> values;
  void (*on_free)() = nullptr;
  counted_storage(std::size_t n, void (*f)()) : values(n), on_free(f) {}
  counted_storage(counted_storage&& other) noexcept : values(std::move(other.values)), on_free(std::exchange(other.on_free, nullptr)) {}
  counted_storage& operator=(counted_storage&&) = delete;
  ~counted_storage() {
    if (on_free) on_free();
  }
};

template <class T>
DLManagedTensorVersioned* make(std::int32_t ndim, const std::int64_t* shape, void (*on_free)()) {
  std::int64_t count = 1;
  for (std::int32_t r = 0; r < ndim; ++r) count *= shape[r];
  // vector<bool> is not contiguous bytes, so bools live in a vector<unsigned char> viewed as bool.
  using storage_type = std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>;
  counted_storage<storage_type> storage(static_cast<std::size_t>(count), on_free);
  T* data = reinterpret_cast<T*>(storage.values.data());
  std::array<std::int64_t, 3> e{1, 1, 1};
  for (std::int32_t r = 0; r < ndim && r < 3; ++r) e[static_cast<std::size_t>(r)] = shape[r];
  namespace dm = dlpack_mdspan;
  switch (ndim) {
    case 0: return dm::to_managed_tensor(std::mdspan<T, std::extents<std::int64_t>>(data), std::move(storage)).release();
    case 1: return dm::to_managed_tensor(std::mdspan<T, std::dextents<std::int64_t, 1>>(data, e[0]), std::move(storage)).release();
    case 2: return dm::to_managed_tensor(std::mdspan<T, std::dextents<std::int64_t, 2>>(data, e[0], e[1]), std::move(storage)).release();
    case 3: return dm::to_managed_tensor(std::mdspan<T, std::dextents<std::int64_t, 3>>(data, e[0], e[1], e[2]), std::move(storage)).release();
    default: storage.on_free = nullptr; return nullptr;
  }
}
}  // namespace

// Returns NULL for an unsupported dtype or rank (> 3).
extern "C" DLManagedTensorVersioned* dlpm_test_buffer_new(std::int32_t ndim, const std::int64_t* shape, DLDataType dtype,
                                                          void (*on_free)()) {
  namespace dm = dlpack_mdspan;
  if (dm::same_dtype(dtype, dm::dtype_v<float>)) return make<float>(ndim, shape, on_free);
  if (dm::same_dtype(dtype, dm::dtype_v<double>)) return make<double>(ndim, shape, on_free);
  if (dm::same_dtype(dtype, dm::dtype_v<std::int32_t>)) return make<std::int32_t>(ndim, shape, on_free);
  if (dm::same_dtype(dtype, dm::dtype_v<std::int64_t>)) return make<std::int64_t>(ndim, shape, on_free);
  if (dm::same_dtype(dtype, dm::dtype_v<std::uint8_t>)) return make<std::uint8_t>(ndim, shape, on_free);
  if (dm::same_dtype(dtype, dm::dtype_v<bool>)) return make<bool>(ndim, shape, on_free);
  return nullptr;
}
