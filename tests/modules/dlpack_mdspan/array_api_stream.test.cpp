// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// decode_cuda_stream / cuda_stream_refusal, decode_rocm_stream / rocm_stream_refusal: the
// array API's stream= values for CUDA and ROCm memory.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

#include <cstdint>
#include <limits>
#include <string_view>

namespace dm = dlpack_mdspan;
using kind = dm::cuda_stream_value::kind;

static_assert(dm::decode_cuda_stream(-1).asks == kind::no_sync);
static_assert(dm::decode_cuda_stream(1).asks == kind::stream && dm::decode_cuda_stream(1).handle == 1);
static_assert(dm::decode_cuda_stream(0).asks == kind::refused);

TEST_CASE("minus one asks for no synchronisation and positive values are stream handles") {
  CHECK(dm::decode_cuda_stream(-1).asks == kind::no_sync);
  CHECK(dm::decode_cuda_stream(-1).handle == 0);
  for (const std::int64_t value : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{0x7f00dead0000},
                                   std::numeric_limits<std::int64_t>::max()}) {
    const dm::cuda_stream_value decoded = dm::decode_cuda_stream(value);
    CHECK(decoded.asks == kind::stream);
    CHECK(decoded.handle == static_cast<std::uintptr_t>(value));
  }
}

TEST_CASE("zero and values below minus one are refused with one message naming the value") {
  for (const std::int64_t value : {std::int64_t{0}, std::int64_t{-2}, std::numeric_limits<std::int64_t>::min()}) {
    CHECK(dm::decode_cuda_stream(value).asks == kind::refused);
  }
  const dm::error refused = dm::cuda_stream_refusal(0);
  CHECK(refused.code() == dm::errc::invalid_argument);
  CHECK(std::string_view(refused.what().c_str()).starts_with("unsupported stream on CUDA: 0 (the array API allows None or 1"));
}

static_assert(dm::decode_rocm_stream(0).asks == kind::stream && dm::decode_rocm_stream(0).handle == 0);
static_assert(dm::decode_rocm_stream(1).asks == kind::refused);

TEST_CASE("on ROCm zero is the default stream and values above two are stream handles") {
  CHECK(dm::decode_rocm_stream(-1).asks == kind::no_sync);
  for (const std::int64_t value : {std::int64_t{0}, std::int64_t{3}, std::int64_t{0x7f00dead0000},
                                   std::numeric_limits<std::int64_t>::max()}) {
    const dm::rocm_stream_value decoded = dm::decode_rocm_stream(value);
    CHECK(decoded.asks == kind::stream);
    CHECK(decoded.handle == static_cast<std::uintptr_t>(value));
  }
}

TEST_CASE("on ROCm one, two and values below minus one are refused with one message naming the value") {
  for (const std::int64_t value : {std::int64_t{1}, std::int64_t{2}, std::int64_t{-2}, std::numeric_limits<std::int64_t>::min()}) {
    CHECK(dm::decode_rocm_stream(value).asks == kind::refused);
  }
  const dm::error refused = dm::rocm_stream_refusal(1);
  CHECK(refused.code() == dm::errc::invalid_argument);
  CHECK(std::string_view(refused.what().c_str()).starts_with("unsupported stream on ROCm: 1 (the array API allows None or 0"));
}
