// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CCCL's DLPack conversions as benchmark candidates (cccl.hpp explains the separate TU).
// Host code only, compiled by clang 19 + libc++ without nvcc or the CUDA toolkit: CCCL
// then has no CTK (_CCCL_HAS_CTK() is 0), and its DLPack support switches on by itself
// when <dlpack/dlpack.h> is on the include path (/usr/include here, the same header our
// library uses: DLPack 1.3). With DLPack >= 1.2 CCCL refuses NULL strides, so every
// tensor given to it has explicit strides.
#include <cuda/__mdspan/dlpack_to_mdspan.h>
#include <cuda/__mdspan/mdspan_to_dlpack.h>
#include <cuda/mdspan>
#include <cuda/std/__cccl/version.h>

#include "cccl.hpp"

#include <exception>
#include <stdexcept>
#include <utility>

static_assert(CCCL_MAJOR_VERSION >= 3, "the DLPack conversions need CCCL 3.x");

namespace bench::cccl {
namespace {

template <class M, std::size_t... I>
view_info describe(const M& m, std::index_sequence<I...>) {
  view_info v;
  v.data = m.data_handle();
  v.rank = M::rank();
  v.offset0 = static_cast<std::int64_t>(m.mapping()(((void)I, typename M::index_type{0})...));
  ((v.extents[I] = static_cast<std::int64_t>(m.extent(I)), v.strides[I] = static_cast<std::int64_t>(m.stride(I))), ...);
  return v;
}

template <std::size_t R, class L>
view_info import_once_t(const DLTensor& t) {
  const auto m = cuda::to_host_mdspan<float, R, L>(t);
  return describe(m, std::make_index_sequence<R>{});
}

template <std::size_t R, class L>
import_outcome import_outcome_t(const DLTensor& t) {
  import_outcome out;
  try {
    const auto m = cuda::to_host_mdspan<float, R, L>(t);
    out.accepted = true;
    out.view = describe(m, std::make_index_sequence<R>{});
    out.size = m.size();
    out.unique = m.is_unique();
  } catch (const std::exception& e) {
    out.refusal = e.what();
  }
  return out;
}

template <std::size_t R, class L>
operation import_op_t(std::string name, DLTensor* t) {
  return op(std::move(name), [t]() mutable {
    launder(t);
    launder(*t);
    auto m = cuda::to_host_mdspan<float, R, L>(*t);
    escape(&m);
  });
}

template <std::size_t R, class F>
decltype(auto) by_layout(layout l, F&& f) {
  switch (l) {
    case layout::right: return f.template operator()<R, cuda::std::layout_right>();
    case layout::left: return f.template operator()<R, cuda::std::layout_left>();
    case layout::stride: return f.template operator()<R, cuda::std::layout_stride>();
    case layout::relaxed: return f.template operator()<R, cuda::layout_stride_relaxed>();
  }
  throw std::invalid_argument("bench::cccl: unknown layout");
}

template <class F>
decltype(auto) by_rank_layout(std::size_t rank, layout l, F&& f) {
  switch (rank) {
    case 1: return by_layout<1>(l, f);
    case 2: return by_layout<2>(l, f);
    case 4: return by_layout<4>(l, f);
    case 8: return by_layout<8>(l, f);
  }
  throw std::invalid_argument("bench::cccl: ranks 1, 2, 4 and 8 only");
}

// The export benchmarks' shapes (export_bench.cpp), static and dynamic.
template <std::size_t R, bool Static>
struct export_md;
#define DLPM_EXPORT_MD(R, ...)                                                                                     \
  template <>                                                                                                      \
  struct export_md<R, true> {                                                                                      \
    using type = cuda::host_mdspan<float, cuda::std::extents<std::size_t, __VA_ARGS__>>;                               \
    static type make(float* p) { return type(p); }                                                                 \
  };                                                                                                               \
  template <>                                                                                                      \
  struct export_md<R, false> {                                                                                     \
    using type = cuda::host_mdspan<float, cuda::std::dextents<std::size_t, R>>;                                        \
    static type make(float* p) { return type(p, __VA_ARGS__); }                                                    \
  };
DLPM_EXPORT_MD(1, 64)
DLPM_EXPORT_MD(2, 8, 8)
DLPM_EXPORT_MD(4, 2, 3, 4, 5)
DLPM_EXPORT_MD(8, 2, 2, 2, 2, 2, 2, 2, 2)
#undef DLPM_EXPORT_MD

template <std::size_t R, bool Static>
tensor_info export_once_t(float* data) {
  const auto md = export_md<R, Static>::make(data);
  const auto view = cuda::to_dlpack_tensor(md);
  tensor_info out;
  out.t = view.get();
  for (std::size_t r = 0; r < R; ++r) {
    out.shape[r] = out.t.shape[r];
    out.strides[r] = out.t.strides[r];
  }
  out.t.shape = out.shape;
  out.t.strides = out.strides;
  return out;
}

template <std::size_t R, bool Static>
operation export_op_t(std::string name, float* data) {
  return op(std::move(name), [md = export_md<R, Static>::make(data)]() mutable {
    launder(md);
    auto view = cuda::to_dlpack_tensor(md);
    DLTensor t = view.get();
    escape(&view);
    escape(&t);
  });
}

template <class F>
decltype(auto) by_export(std::size_t rank, bool static_extents, F&& f) {
  switch (rank) {
    case 1: return static_extents ? f.template operator()<1, true>() : f.template operator()<1, false>();
    case 2: return static_extents ? f.template operator()<2, true>() : f.template operator()<2, false>();
    case 4: return static_extents ? f.template operator()<4, true>() : f.template operator()<4, false>();
    case 8: return static_extents ? f.template operator()<8, true>() : f.template operator()<8, false>();
  }
  throw std::invalid_argument("bench::cccl: ranks 1, 2, 4 and 8 only");
}

}  // namespace

std::string version() {
  return "CCCL " + std::to_string(CCCL_MAJOR_VERSION) + "." + std::to_string(CCCL_MINOR_VERSION) + "." +
         std::to_string(CCCL_PATCH_VERSION);
}

view_info import_once(std::size_t rank, layout l, const DLTensor& t) {
  return by_rank_layout(rank, l, [&]<std::size_t R, class L>() { return import_once_t<R, L>(t); });
}

import_outcome import_outcome_of(std::size_t rank, layout l, const DLTensor& t) {
  return by_rank_layout(rank, l, [&]<std::size_t R, class L>() { return import_outcome_t<R, L>(t); });
}

operation import_op(std::string name, std::size_t rank, layout l, DLTensor* t) {
  operation o = by_rank_layout(rank, l, [&]<std::size_t R, class L>() { return import_op_t<R, L>(std::move(name), t); });
  o.note = version();
  return o;
}

tensor_info export_once(std::size_t rank, bool static_extents, float* data) {
  return by_export(rank, static_extents, [&]<std::size_t R, bool S>() { return export_once_t<R, S>(data); });
}

operation export_op(std::string name, std::size_t rank, bool static_extents, float* data) {
  operation o = by_export(rank, static_extents,
                          [&]<std::size_t R, bool S>() { return export_op_t<R, S>(std::move(name), data); });
  o.note = version();
  return o;
}

}  // namespace bench::cccl
