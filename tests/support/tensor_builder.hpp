// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Builds hand-made DLTensors for tests, including malformed ones. Owns shape and strides.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace dlpm_test {

struct tensor_builder {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  bool null_strides = false;
  DLTensor tensor{};

  tensor_builder(void* data, DLDataType dtype, std::initializer_list<std::int64_t> shape_,
                 std::initializer_list<std::int64_t> strides_, std::uint64_t byte_offset = 0,
                 DLDevice device = DLDevice{kDLCPU, 0})
      : shape(shape_), strides(strides_) {
    tensor.data = data;
    tensor.dtype = dtype;
    tensor.device = device;
    tensor.byte_offset = byte_offset;
    tensor.ndim = static_cast<std::int32_t>(shape.size());
  }

  // A tensor with NULL strides (a pre-1.2 producer's compact row-major tensor).
  static tensor_builder without_strides(void* data, DLDataType dtype, std::initializer_list<std::int64_t> shape_) {
    tensor_builder b(data, dtype, shape_, {});
    b.null_strides = true;
    return b;
  }

  // An int32 tensor of the first `rank` of `extents` whose strides are row-major but at
  // `stop` (extent-1 axes carry stride 7, and `stop`'s extent is made 2 where it is 1, so
  // that its stride counts), where the row-major stride is multiplied by `change`: the
  // first stride, from the innermost out, that differs (none for a change of 1).
  static tensor_builder row_major_but_at(void* data, const std::int64_t* extents, std::size_t rank, std::size_t stop,
                                         std::int64_t change) {
    tensor_builder b(data, DLDataType{kDLInt, 32, 1}, {}, {});
    b.shape.assign(extents, extents + rank);
    if (b.shape[stop] == 1) b.shape[stop] = 2;
    b.strides.assign(rank, 0);
    std::int64_t n = 1;
    for (std::size_t r = rank; r-- > 0;) {
      b.strides[r] = b.shape[r] == 1 ? 7 : n;
      n *= b.shape[r];
    }
    b.strides[stop] *= change;
    b.tensor.ndim = static_cast<std::int32_t>(rank);
    return b;
  }

  // The DLTensor, with pointers into this builder (rank 0 gets NULL shape and strides).
  const DLTensor& get() {
    tensor.shape = shape.empty() ? nullptr : shape.data();
    tensor.strides = null_strides || strides.empty() ? nullptr : strides.data();
    return tensor;
  }
};

inline DLDataType dt(std::uint8_t code, std::uint8_t bits, std::uint16_t lanes = 1) { return DLDataType{code, bits, lanes}; }
inline const DLDataType i32 = dt(kDLInt, 32);
inline const DLDataType f32 = dt(kDLFloat, 32);
inline const DLDataType f64 = dt(kDLFloat, 64);

}  // namespace dlpm_test
