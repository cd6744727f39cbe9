// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: to_mdspan<M> for several targets. Whenever a view is accepted and the
// tensor claims memory inside our buffer, every element is read through the view, so a
// mapping or pointer computation that strays outside the claimed span is caught by ASan.
#include <mdspan>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include "fuzz_input.hpp"

#include <cstdlib>

namespace dm = dlpack_mdspan;

namespace {

template <class M>
void touch_all(const M& m, std::size_t rank_left, std::array<typename M::index_type, M::rank()>& idx, volatile unsigned char& sink) {
  if constexpr (M::rank() == 0) {
    sink = sink ^ reinterpret_cast<const volatile unsigned char&>(m[idx]);
  } else {
    const std::size_t r = M::rank() - rank_left;
    for (typename M::index_type i = 0; i < m.extent(r); ++i) {
      idx[r] = i;
      if (rank_left == 1) sink = sink ^ reinterpret_cast<const volatile unsigned char&>(m[idx]);
      else touch_all(m, rank_left - 1, idx, sink);
    }
  }
}

template <class M>
void try_target(const dlpm_fuzz::fuzz_tensor& f) {
  dm::tensor_requirements requirements;
  requirements.null_strides = (f.flags & 1) ? dm::null_strides_policy::reject : dm::null_strides_policy::row_major;
  auto view = dm::try_to_mdspan<M>(f.tensor, requirements);
  if (!view) {
    if (view.error().message().empty()) std::abort();  // every refusal explains itself
    return;
  }
  const M& m = *view;
  // A broadcast view (stride 0) can claim billions of elements over a few bytes; walking
  // them all would only turn into a fuzzer timeout, so the walk is bounded.
  if (m.size() == 0 || m.size() > (std::size_t{1} << 16)) return;
  const auto span_bytes = static_cast<std::int64_t>(m.mapping().required_span_size()) *
                          static_cast<std::int64_t>(sizeof(typename M::element_type));
  if (!f.inside(m.data_handle(), span_bytes)) return;  // the producer's claim is not our memory
  std::array<typename M::index_type, M::rank()> idx{};
  volatile unsigned char sink = 0;
  touch_all(m, M::rank(), idx, sink);
}

template <class T, std::size_t R, class L, class I = std::int64_t>
using md = std::mdspan<T, std::dextents<I, R>, L>;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dlpm_fuzz::fuzz_tensor f(data, size);
  try_target<md<float, 2, std::layout_right>>(f);
  try_target<md<std::int16_t, 3, std::layout_left>>(f);
  try_target<md<double, 2, std::layout_stride>>(f);
  try_target<md<std::int8_t, 2, dm::layout_stride_relaxed>>(f);
  try_target<md<std::uint8_t, 1, dm::layout_stride_relaxed, std::size_t>>(f);
  try_target<md<std::uint32_t, 4, dm::layout_stride_relaxed, int>>(f);
  try_target<std::mdspan<float, std::extents<int, 2, 3>>>(f);
  try_target<std::mdspan<float, std::extents<int>>>(f);
  return 0;
}
