// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/array_api_stream.hpp: the Python array API's `stream=` values for CUDA
// and ROCm memory, decoded once, for the C++ helpers of cuda.hpp and for the Python component
// (through the facade's dlpm_cuda_array_api_stream and dlpm_rocm_array_api_stream). No CUDA header and no runtime call: the values
// are integers, and 1 and 2 are the CUDA runtime's and driver's own handles of the two
// default streams (cudaStreamLegacy, cudaStreamPerThread; CU_STREAM_LEGACY,
// CU_STREAM_PER_THREAD).
//
// Semantics: -1 asks for no synchronisation; 1 is the legacy default stream; 2 the
// per-thread default stream; any other positive value a stream handle.
// Constraints: none on the value.
// Runtime errors: 0 (ambiguous between the two defaults) and values below -1 are refused,
// with cuda_stream_refusal's one message.
//
// ROCm (decode_rocm_stream): -1 asks for no synchronisation; 0 is the default stream (HIP's
// null stream, handle 0; a consumer's None means the same); any value above 2 a stream
// handle. 1 and 2 (CUDA's default streams, which HIP does not spell so) and values below -1
// are refused, with rocm_stream_refusal's one message.
#ifndef DLPACK_MDSPAN_ARRAY_API_STREAM_HPP
#define DLPACK_MDSPAN_ARRAY_API_STREAM_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/error.hpp>

#include <cstdint>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// A `stream=` value for CUDA memory, decoded (decode_cuda_stream).
struct cuda_stream_value {
  /// What the value asks for.
  enum class kind : std::uint8_t {
    no_sync,  ///< -1: the consumer orders its work itself
    stream,   ///< wait on `handle`
    refused,  ///< 0 or below -1 (cuda_stream_refusal says why)
  };
  kind asks = kind::refused;   ///< what the value asks for
  std::uintptr_t handle = 0;   ///< with kind::stream: the stream (1 and 2 the default streams)
};

/// Decodes a `stream=` value for CUDA memory (see the header).
[[nodiscard]] constexpr cuda_stream_value decode_cuda_stream(std::int64_t value) noexcept {
  if (value == -1) return {cuda_stream_value::kind::no_sync, 0};
  if (value <= 0) return {cuda_stream_value::kind::refused, 0};
  return {cuda_stream_value::kind::stream, static_cast<std::uintptr_t>(value)};
}

/// The refusal of a `stream=` value decode_cuda_stream refuses: errc::invalid_argument.
[[nodiscard]] DLPM_COLD inline error cuda_stream_refusal(std::int64_t value) noexcept {
  return error::format(errc::invalid_argument,
                       "unsupported stream on CUDA: %lld (the array API allows None or 1 for the legacy default "
                       "stream, 2 for the per-thread default stream, -1 for no synchronisation, or a stream handle)",
                       static_cast<long long>(value));
}

/// A `stream=` value for ROCm memory, decoded (decode_rocm_stream): the same three kinds,
/// where kind::stream with handle 0 is HIP's default (null) stream.
using rocm_stream_value = cuda_stream_value;

/// Decodes a `stream=` value for ROCm memory (see the header).
[[nodiscard]] constexpr rocm_stream_value decode_rocm_stream(std::int64_t value) noexcept {
  if (value == -1) return {rocm_stream_value::kind::no_sync, 0};
  if (value < -1 || value == 1 || value == 2) return {rocm_stream_value::kind::refused, 0};
  return {rocm_stream_value::kind::stream, static_cast<std::uintptr_t>(value)};
}

/// The refusal of a `stream=` value decode_rocm_stream refuses: errc::invalid_argument.
[[nodiscard]] DLPM_COLD inline error rocm_stream_refusal(std::int64_t value) noexcept {
  return error::format(errc::invalid_argument,
                       "unsupported stream on ROCm: %lld (the array API allows None or 0 for the default stream, -1 "
                       "for no synchronisation, or a stream handle; 1 and 2 are not ROCm streams)",
                       static_cast<long long>(value));
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif  // DLPACK_MDSPAN_ARRAY_API_STREAM_HPP
