// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which tensors may travel as a message, and how (MPI's buffers): one admission over a
// checked tensor, read by the MPI header (mpi.hpp), the C companion (dlpack_mdspan_mpi.h,
// through the facade's dlpm_plan_message) and mpi.py (through the Python component's
// inspect). Each of them keeps only its own datatype construction; none checks a tensor
// again.
#ifndef DLPACK_MDSPAN_MESSAGE_PLAN_HPP
#define DLPACK_MDSPAN_MESSAGE_PLAN_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/layout_queries.hpp>
#include <dlpack_mdspan/requirements.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <cstdint>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Which way a message moves a tensor's elements.
enum class message_direction : int {
  send = 0,     ///< read: every valid layout, broadcast (zero) strides included
  receive = 1,  ///< written: not READ_ONLY, and each element reached once
};

/// How a checked tensor travels: its elements in row-major index order as nested byte
/// loops (coalesce) from element 0, the bytes they reach, and the element kind. What an MPI
/// datatype is built from (mpi_datatype.h).
struct message_plan {
  void* element0 = nullptr;       ///< element 0's address, data + byte_offset (data itself for an empty tensor)
  std::int32_t loops = 0;         ///< byte loops in extents[0..loops) and byte_steps[0..loops), outermost first
  std::int64_t block = 0;         ///< elements side by side in the innermost run (0: empty)
  std::int64_t lower_bound = 0;   ///< the lowest byte reached, relative to element 0
  std::int64_t extent = 0;        ///< bytes from the lowest reached to one past the highest
  DLDataType dtype{};             ///< the element kind: its dtype...
  std::uint64_t itemsize = 0;     ///< ...and its bytes as stored
  std::int64_t extents[max_ndim];
  std::int64_t byte_steps[max_ndim];
};

/// The admission of a checked tensor as a message (`direction`), with its one message per
/// refusal: elements with a byte address (element_bytes: packed sub-byte elements are
/// refused), memory the transport moves (host-accessible memory, and CUDA memory when
/// `moves_cuda_memory`: an MPI library that says it is CUDA-aware), and for a receive a
/// writable tensor (READ_ONLY is check_requirements' refusal) whose layout reaches each
/// element once (is_unique). Then the plan.
[[nodiscard]] inline result<message_plan> plan_message(const checked_tensor& c, message_direction direction,
                                                       bool moves_cuda_memory) noexcept {
  const DLTensor& t = c.tensor();
  message_plan plan;
  const auto loops = coalesce(c, plan.extents, plan.byte_steps);  // element_bytes' refusal first
  if (!loops) return unexpected_error(loops.error());
  const std::int32_t device = t.device.device_type;
  if (!is_host_accessible(device) && !(device == kDLCUDA && moves_cuda_memory))
    return unexpected_error(error::format(errc::device_mismatch,
                                          "the tensor is in device memory (%s) this MPI library cannot move: it moves "
                                          "host-accessible memory, and CUDA memory only when it says it is CUDA-aware",
                                          device_type_name(device)));
  if (direction == message_direction::receive) {
    tensor_requirements writable{};
    writable.writable = true;
    error err;
    if (!detail::required_writable(c.flags(), writable, &err)) return unexpected_error(err);
    if (!is_unique(c))
      return unexpected_error(error(errc::overlapping_strides,
                                    "receive: the layout reaches an element twice (a zero or overlapping stride), so what "
                                    "is written there would depend on the order it is written in"));
  }
  const byte_range span = byte_span(c);
  const auto offset = static_cast<std::int64_t>(t.byte_offset);
  plan.element0 = c.numel() == 0 ? t.data : static_cast<char*>(t.data) + t.byte_offset;  // data may be NULL when empty
  plan.loops = loops->ndim;
  plan.block = loops->block;
  plan.lower_bound = span.begin - offset;
  plan.extent = span.end - span.begin;
  plan.dtype = t.dtype;
  plan.itemsize = c.itemsize();
  return plan;
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
