// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// New host memory for a tensor: an uninitialised compact allocation (what a DLPack
// exchange API's managed_tensor_allocator hands out) and a compact copy of a tensor the CPU
// can read (what __dlpack__(copy=True) hands out). The C facade, the Python component and
// Rust reach these through dlpm_managed_alloc_host and dlpm_managed_copy_to_host.
// try_copy_to_host_with and try_copy_from_host_with are the same copies for memory only a
// device runtime can move: the device headers (cuda.hpp, sycl.hpp) pass it in.
#ifndef DLPACK_MDSPAN_HOST_COPY_HPP
#define DLPACK_MDSPAN_HOST_COPY_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/layout_queries.hpp>
#include <dlpack_mdspan/managed.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// 64 bytes: what vector units and nanobind's allocations give.
inline constexpr std::size_t host_alignment = 64;

// The owner of an aligned_alloc'd buffer, moved into the tensor it backs.
class aligned_host_buffer {
 public:
  explicit aligned_host_buffer(void* p) noexcept : p_(p) {}
  aligned_host_buffer(aligned_host_buffer&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  aligned_host_buffer& operator=(aligned_host_buffer&&) = delete;
  ~aligned_host_buffer() { std::free(p_); }
  void* get() const noexcept { return p_; }

 private:
  void* p_;
};

// Whole aligned blocks, at least one (aligned_alloc's rule; an empty tensor has an address).
inline std::size_t aligned_size(std::size_t n) noexcept {
  const std::size_t blocks = (n + host_alignment - 1) / host_alignment;
  return blocks == 0 ? host_alignment : blocks * host_alignment;
}

// The description of compact row-major memory of `dtype` at a placeholder aligned address,
// validated (rank, dtype, extents, byte count) before anything is allocated; *bytes is the
// size to allocate (at least one aligned block, so that an empty tensor has an address).
inline bool host_description(std::int32_t ndim, const std::int64_t* shape, DLDataType dtype, std::uint64_t flags,
                             DLTensor* out, std::size_t* bytes, error* err) noexcept {
  DLTensor d{};
  d.data = reinterpret_cast<void*>(host_alignment);
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = ndim;
  d.dtype = dtype;
  d.shape = const_cast<std::int64_t*>(shape);
  tensor_summary s;
  if (!check_structure(d, structure_options{null_strides_policy::row_major, (flags & flag_is_subbyte_type_padded) != 0}, s, err))
    return false;
  std::int64_t n = 0;
  if (s.itemsize != 0) {
    if (mul_overflows(s.numel, static_cast<std::int64_t>(s.itemsize), &n)) n = -1;
  } else {
    auto packed = nbytes(d);
    n = packed ? *packed : -1;
  }
  if (n < 0 || static_cast<std::uint64_t>(n) > SIZE_MAX - host_alignment) {
    *err = error::format(errc::out_of_memory, "host allocation: %lld elements do not fit in memory",
                         static_cast<long long>(s.numel));
    return false;
  }
  *bytes = aligned_size(static_cast<std::size_t>(n));
  *out = d;
  return true;
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// New compact row-major kDLCPU memory for a tensor of `shape` (ndim entries) and `dtype`,
/// 64-byte aligned and uninitialised, owned by the returned tensor (explicit strides, the
/// given `flags`). The description is validated first (check_structure's rules).
[[nodiscard]] inline result<managed_tensor> try_allocate_host_tensor(std::int32_t ndim, const std::int64_t* shape, DLDataType dtype,
                                                                     std::uint64_t flags = 0) noexcept {
  error err;
  DLTensor d;
  std::size_t bytes = 0;
  if (!detail::host_description(ndim, shape, dtype, flags, &d, &bytes, &err)) return unexpected_error(err);
  detail::aligned_host_buffer buffer(std::aligned_alloc(detail::host_alignment, bytes));
  if (buffer.get() == nullptr) return unexpected_error(error::format(errc::out_of_memory, "host allocation: out of memory"));
  d.data = buffer.get();
  return try_make_managed_tensor(d, std::move(buffer), flags, 'C');
}

/// A compact row-major kDLCPU copy of `t`, whose memory the CPU must be able to read
/// (is_host_accessible), flagged IS_COPIED (the copy aliases nothing, so it is writable:
/// READ_ONLY is not carried over) and IS_SUBBYTE_TYPE_PADDED as `flags` say. Elements are
/// read through the tensor's strides; packed sub-byte elements share bytes, so those are
/// copied only from a row-major contiguous tensor (errc::subbyte_not_viewable otherwise).
[[nodiscard]] inline result<managed_tensor> try_copy_to_host(const DLTensor& t, std::uint64_t flags) noexcept {
  const bool padded = (flags & flag_is_subbyte_type_padded) != 0;
  error err;
  tensor_summary s;
  if (!check_structure(t, structure_options{null_strides_policy::row_major, padded}, s, &err)) return unexpected_error(err);
  if (!is_host_accessible(t.device.device_type))
    return unexpected_error(error::format(errc::device_mismatch,
                                          "copy to host: memory of device %s (type %d) cannot be read by the CPU; copy it "
                                          "with the device's runtime",
                                          device_type_name(t.device.device_type), static_cast<int>(t.device.device_type)));
  if (s.itemsize == 0 && s.numel > 0 && !detail::is_compact_valid(t, s.numel, true))
    return unexpected_error(error::format(errc::subbyte_not_viewable,
                                          "copy to host: a packed sub-byte tensor is copied only when it is row-major contiguous"));
  auto copy = try_allocate_host_tensor(t.ndim, t.shape, t.dtype, flag_is_copied | (flags & flag_is_subbyte_type_padded));
  if (!copy || s.numel == 0) return copy;
  const char* src = static_cast<const char*>(t.data) + t.byte_offset;
  char* dst = static_cast<char*>(copy->tensor().data);
  if (s.itemsize == 0) {  // packed sub-byte, row-major contiguous: the bytes as they are
    const auto bytes = nbytes(t);
    std::memcpy(dst, src, static_cast<std::size_t>(*bytes));
    return copy;
  }
  // Row-major order through the strides; validation keeps every offset inside the span.
  const auto item = static_cast<std::size_t>(s.itemsize);
  std::int64_t index[max_ndim] = {}, stride[max_ndim] = {}, offset = 0;
  for (std::int32_t r = 0; r < t.ndim; ++r) stride[r] = stride_at(t, r);
  for (std::int64_t k = 0; k < s.numel; ++k, dst += item) {
    std::memcpy(dst, src + offset * static_cast<std::int64_t>(item), item);
    for (std::int32_t r = t.ndim - 1; r >= 0; --r) {
      if (++index[r] < t.shape[r]) {
        offset += stride[r];
        break;
      }
      offset -= stride[r] * (t.shape[r] - 1);
      index[r] = 0;
    }
  }
  return copy;
}

/// try_copy_to_host for memory only a device runtime can read. `read(void* host, const
/// void* device, std::size_t bytes)` moves bytes off the device and returns an error
/// (errc::ok: done, the bytes are in host memory when it returns); it is called at most
/// once, and not for an empty tensor. A row-major contiguous tensor moves as one block
/// straight into the copy; any other is read as the bytes its elements reach (byte_span)
/// into a host staging buffer and compacted there, under try_copy_to_host's rules (a
/// packed sub-byte tensor must be contiguous). Flagged as try_copy_to_host's copies.
/// The device's own rules (is this memory of that device?) are the caller's.
template <class Read>
[[nodiscard]] result<managed_tensor> try_copy_to_host_with(const DLTensor& t, std::uint64_t flags, Read&& read) noexcept {
  const std::uint64_t padded = flags & flag_is_subbyte_type_padded;
  const result<byte_range> span = byte_span(t, padded != 0);
  if (!span) return unexpected_error(span.error());
  const auto n = static_cast<std::size_t>(span->end - span->begin);
  const char* device_bytes = static_cast<const char*>(t.data) + span->begin;
  if (is_c_contiguous(t)) {  // the span is the compact bytes, in order
    auto copy = try_allocate_host_tensor(t.ndim, t.shape, t.dtype, flag_is_copied | padded);
    if (!copy || n == 0) return copy;
    if (const error e = read(copy->tensor().data, static_cast<const void*>(device_bytes), n); e.code() != errc::ok)
      return unexpected_error(e);
    return copy;
  }
  detail::aligned_host_buffer staging(std::aligned_alloc(detail::host_alignment, detail::aligned_size(n)));
  if (staging.get() == nullptr) return unexpected_error(error::format(errc::out_of_memory, "copy to host: out of memory"));
  if (const error e = read(staging.get(), static_cast<const void*>(device_bytes), n); e.code() != errc::ok)
    return unexpected_error(e);
  // The same elements at the same distances, now in host memory: byte_offset keeps the
  // first element where the span put it.
  DLTensor staged = t;
  staged.data = staging.get();
  staged.byte_offset = static_cast<std::uint64_t>(static_cast<std::int64_t>(t.byte_offset) - span->begin);
  staged.device = DLDevice{kDLCPU, 0};
  return try_copy_to_host(staged, flags);
}

/// A compact row-major copy of `t` (memory the CPU can read: is_host_accessible) on device
/// `target`, for memory only a device runtime can write. `allocate(std::size_t bytes)`
/// returns result<Owner>: the device memory (Owner::get() its address, at least one byte
/// even for an empty tensor), freed when the Owner is destroyed (nothrow movable); `write(void*
/// device, const void* host, std::size_t bytes)` fills it and returns an error (errc::ok: the
/// host bytes may be reused when it returns). A tensor that is not row-major contiguous is
/// compacted on the host first. Flagged IS_COPIED, and IS_SUBBYTE_TYPE_PADDED as `flags` say.
template <class Allocate, class Write>
[[nodiscard]] result<managed_tensor> try_copy_from_host_with(const DLTensor& t, std::uint64_t flags, DLDevice target,
                                                             Allocate&& allocate, Write&& write) noexcept {
  const std::uint64_t padded = flags & flag_is_subbyte_type_padded;
  result<managed_tensor> compacted = unexpected_error(error{});
  const DLTensor* source = &t;
  if (!is_c_contiguous(t)) {
    compacted = try_copy_to_host(t, flags);
    if (!compacted) return compacted;
    source = &compacted->tensor();
  } else if (!is_host_accessible(t.device.device_type)) {
    return unexpected_error(error::format(errc::device_mismatch,
                                          "copy from host: memory of device %s (type %d) cannot be read by the CPU",
                                          device_type_name(t.device.device_type), static_cast<int>(t.device.device_type)));
  }
  const result<byte_range> span = byte_span(*source, padded != 0);
  if (!span) return unexpected_error(span.error());
  const auto n = static_cast<std::size_t>(span->end - span->begin);
  auto memory = allocate(n == 0 ? std::size_t{1} : n);
  if (!memory) return unexpected_error(memory.error());
  DLTensor d = *source;
  d.data = memory->get();
  d.byte_offset = 0;
  d.device = target;
  d.strides = nullptr;  // compact row-major: try_make_managed_tensor writes them
  if (n != 0) {
    if (const error e = write(d.data, static_cast<const void*>(static_cast<const char*>(source->data) + span->begin), n);
        e.code() != errc::ok)
      return unexpected_error(e);
  }
  return try_make_managed_tensor(d, std::move(*memory), flag_is_copied | padded, 'C');
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
