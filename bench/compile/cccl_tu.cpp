// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time probe, CCCL's form: the same work as header_tu.cpp through CCCL's DLPack
// headers (cuda::to_dlpack_tensor, cuda::to_host_mdspan), host code only.
#include <cstdint>

#include <cuda/__mdspan/dlpack_to_mdspan.h>
#include <cuda/__mdspan/mdspan_to_dlpack.h>
#include <cuda/mdspan>

std::int64_t probe(float* data) {
  cuda::host_mdspan<float, cuda::std::dims<2, int>> rows(data, 4, 6);
  auto view = cuda::to_dlpack_tensor(rows);
  const DLTensor t = view.get();
  auto back = cuda::to_host_mdspan<float, 2, cuda::std::layout_right>(t);
  return back.extent(0) * back.stride(0) + t.ndim;
}
