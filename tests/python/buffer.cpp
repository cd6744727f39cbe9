// The C++ side of the Python producer: a buffer allocated in C++, owned by a std::vector
// inside a managed tensor made by to_managed_tensor. The C extension only sees the
// resulting DLManagedTensorVersioned*.
#include <dlpack/dlpack.h>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <cstdint>
#include <mdspan>
#include <vector>

namespace {
template <class T>
DLManagedTensorVersioned* make(std::int32_t ndim, const std::int64_t* shape) {
  std::int64_t count = 1;
  for (std::int32_t r = 0; r < ndim; ++r) count *= shape[r];
  // vector<bool> is not contiguous bytes, so bools live in a vector<unsigned char> viewed as bool.
  using storage_type = std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>;
  std::vector<storage_type> storage(static_cast<std::size_t>(count));
  T* data = reinterpret_cast<T*>(storage.data());
  std::array<std::int64_t, 4> extents{1, 1, 1, 1};
  for (std::int32_t r = 0; r < ndim; ++r) extents[static_cast<std::size_t>(r)] = shape[r];
  // The buffer is an mdspan; rank is dynamic here, so go through the rank-4 view and trim.
  switch (ndim) {
    case 0: return dlpack_mdspan::to_managed_tensor(std::mdspan<T, std::extents<std::int64_t>>(data), std::move(storage)).release();
    case 1: return dlpack_mdspan::to_managed_tensor(std::mdspan<T, std::dextents<std::int64_t, 1>>(data, extents[0]), std::move(storage)).release();
    case 2: return dlpack_mdspan::to_managed_tensor(std::mdspan<T, std::dextents<std::int64_t, 2>>(data, extents[0], extents[1]), std::move(storage)).release();
    case 3: return dlpack_mdspan::to_managed_tensor(std::mdspan<T, std::dextents<std::int64_t, 3>>(data, extents[0], extents[1], extents[2]), std::move(storage)).release();
    default: return nullptr;
  }
}
}  // namespace

// Returns NULL for an unsupported dtype or rank (> 3).
extern "C" DLManagedTensorVersioned* dlpm_test_buffer_new(std::int32_t ndim, const std::int64_t* shape, DLDataType dtype) {
  namespace dm = dlpack_mdspan;
  if (dm::same_dtype(dtype, dm::dtype_v<float>)) return make<float>(ndim, shape);
  if (dm::same_dtype(dtype, dm::dtype_v<double>)) return make<double>(ndim, shape);
  if (dm::same_dtype(dtype, dm::dtype_v<std::int32_t>)) return make<std::int32_t>(ndim, shape);
  if (dm::same_dtype(dtype, dm::dtype_v<std::int64_t>)) return make<std::int64_t>(ndim, shape);
  if (dm::same_dtype(dtype, dm::dtype_v<std::uint8_t>)) return make<std::uint8_t>(ndim, shape);
  if (dm::same_dtype(dtype, dm::dtype_v<bool>)) return make<bool>(ndim, shape);
  return nullptr;
}
