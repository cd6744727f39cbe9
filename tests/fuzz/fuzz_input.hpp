// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Decodes fuzzer bytes into a DLTensor. shape and strides always have room for 64
// entries, the most any accepted ndim can need; everything else is taken as given, so the
// library sees garbage ndim, extents, strides, dtypes, devices, offsets and pointers.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dlpm_fuzz {

class byte_reader {
 public:
  byte_reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  template <class T>
  T next() {
    T value{};
    const std::size_t n = size_ < sizeof(T) ? size_ : sizeof(T);
    std::memcpy(&value, data_, n);
    data_ += n;
    size_ -= n;
    return value;
  }
  // Mostly small values, sometimes anything: small ones reach the deep checks.
  std::int64_t extent_or_stride() {
    const auto selector = next<std::uint8_t>();
    if (selector < 200) return static_cast<std::int8_t>(next<std::uint8_t>()) / 4;
    return next<std::int64_t>();
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
};

struct fuzz_tensor {
  alignas(64) std::uint8_t buffer[4096] = {};
  std::int64_t shape[64] = {};
  std::int64_t strides[64] = {};
  DLTensor tensor{};
  std::uint64_t flags = 0;
  DLPackVersion version{};

  fuzz_tensor(const std::uint8_t* data, std::size_t size) {
    byte_reader in(data, size);
    const auto ndim_selector = in.next<std::uint8_t>();
    tensor.ndim = ndim_selector < 240 ? ndim_selector % 5 : in.next<std::int32_t>();
    for (int r = 0; r < 64; ++r) shape[r] = in.extent_or_stride();
    for (int r = 0; r < 64; ++r) strides[r] = in.extent_or_stride();
    const auto pointers = in.next<std::uint8_t>();
    tensor.shape = (pointers & 1) ? nullptr : shape;
    tensor.strides = (pointers & 2) ? nullptr : strides;
    switch ((pointers >> 2) & 3) {
      case 0: tensor.data = buffer + 2048; break;  // room below for negative strides
      case 1: tensor.data = nullptr; break;
      case 2: tensor.data = buffer + 2048 + (in.next<std::uint8_t>() % 8); break;  // maybe misaligned
      default: tensor.data = reinterpret_cast<void*>(in.next<std::uintptr_t>()); break;  // anything
    }
    tensor.dtype.code = in.next<std::uint8_t>() % 20;
    tensor.dtype.bits = in.next<std::uint8_t>();
    tensor.dtype.lanes = in.next<std::uint8_t>() % 5;
    tensor.device.device_type = static_cast<DLDeviceType>(in.next<std::uint8_t>() % 20);
    tensor.device.device_id = static_cast<std::int8_t>(in.next<std::uint8_t>());
    const auto offset_selector = in.next<std::uint8_t>();
    tensor.byte_offset = offset_selector < 200 ? offset_selector % 64 : in.next<std::uint64_t>();
    flags = in.next<std::uint8_t>();
    version.major = in.next<std::uint8_t>() % 4;
    version.minor = in.next<std::uint8_t>();
  }

  // True when every byte of [first, first + bytes) lies in `buffer`.
  bool inside(const void* first, std::int64_t bytes) const {
    const auto lo = reinterpret_cast<std::uintptr_t>(buffer), hi = lo + sizeof(buffer);
    const auto p = reinterpret_cast<std::uintptr_t>(first);
    return bytes >= 0 && p >= lo && p <= hi && static_cast<std::uint64_t>(bytes) <= hi - p;
  }
};

}  // namespace dlpm_fuzz
