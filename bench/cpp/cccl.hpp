// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CCCL's DLPack conversions (cuda::to_host_mdspan, cuda::to_dlpack_tensor) as benchmark
// candidates. They live in their own TU, cccl_bench.cpp, compiled with CCCL's include
// directory (from the pinned nvidia-cuda-cccl wheel, bench/requirements-bench.txt) and
// without our headers or <mdspan>: CCCL brings its own mdspan (cuda::std::mdspan) and its
// own configuration macros. This header only declares plain functions and types, so the
// other TUs can put CCCL's operations into the same interleaved groups as ours.
//
// Built only when bench/CMakeLists.txt finds CCCL; it then defines DLPM_BENCH_HAVE_CCCL=1
// for every TU of dlpm_bench_cpp.
#ifndef DLPM_BENCH_CCCL_HPP
#define DLPM_BENCH_CCCL_HPP

#include <dlpack/dlpack.h>

#include "harness.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

#ifndef DLPM_BENCH_HAVE_CCCL
#define DLPM_BENCH_HAVE_CCCL 0
#endif

namespace bench {

/// What the import benchmarks compare between candidates: the data handle, the offset
/// (in elements) of element (0, ..., 0), the extents and the strides.
struct view_info {
  const void* data = nullptr;
  std::size_t rank = 0;
  std::int64_t offset0 = 0;
  std::int64_t extents[8] = {};
  std::int64_t strides[8] = {};
  friend bool operator==(const view_info&, const view_info&) = default;
};

/// A DLTensor with copies of its shape and strides (what an export produced).
struct tensor_info {
  DLTensor t{};
  std::int64_t shape[8] = {};
  std::int64_t strides[8] = {};
};

namespace cccl {

/// The target layouts: cuda::std::layout_right, cuda::std::layout_left,
/// cuda::std::layout_stride and cuda::layout_stride_relaxed.
enum class layout { right, left, stride, relaxed };

/// "CCCL 3.5.0": from CCCL_VERSION (cuda/std/__cccl/version.h).
std::string version();

/// cuda::to_host_mdspan<float, rank, layout>(t), once (throws what CCCL throws). Ranks 1,
/// 2, 4 and 8.
view_info import_once(std::size_t rank, layout l, const DLTensor& t);

/// What cuda::to_host_mdspan<float, rank, layout>(t) made of `t`, or what it threw: the
/// checks CCCL does not make are proven by the tensors it accepts (cccl_accepts.cpp).
struct import_outcome {
  bool accepted = false;
  std::string refusal;     ///< what() of the exception it threw
  view_info view;          ///< the view's data handle, extents and strides (accepted)
  std::uint64_t size = 0;  ///< the view's size(): the extents' product in size_t
  bool unique = false;     ///< the view's is_unique()
};
import_outcome import_outcome_of(std::size_t rank, layout l, const DLTensor& t);

/// The same as a benchmark operation on *t (laundered and escaped as ours are).
operation import_op(std::string name, std::size_t rank, layout l, DLTensor* t);

/// cuda::to_dlpack_tensor(cuda::host_mdspan<float, E>(data)).get() for the export
/// benchmarks' shapes: rank 1 {64}, 2 {8, 8}, 4 {2, 3, 4, 5}, 8 {2, ..., 2}; E has
/// std::size_t index type, static or dynamic extents (layout_right).
tensor_info export_once(std::size_t rank, bool static_extents, float* data);
operation export_op(std::string name, std::size_t rank, bool static_extents, float* data);

}  // namespace cccl
}  // namespace bench

#endif
