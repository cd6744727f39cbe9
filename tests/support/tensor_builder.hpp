// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Builds hand-made DLTensors for tests, including malformed ones. Owns shape and strides.
#pragma once

#include <dlpack/dlpack.h>

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
