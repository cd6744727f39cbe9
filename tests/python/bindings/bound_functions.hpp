// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The functions the nanobind and the pybind11 test extensions both bind (bound_nanobind.cpp,
// bound_pybind11.cpp), driven by test_bindings.py: one body each, so that the two casters
// are held to the same behaviour.
#ifndef DLPM_TESTS_BOUND_FUNCTIONS_HPP
#define DLPM_TESTS_BOUND_FUNCTIONS_HPP

#include <array>
#include <cstdint>
#include <mdspan>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <dlpack_mdspan/python_casters.hpp>  // last: in the module form it ends with the import

namespace bound {

namespace dp = dlpack_mdspan::python;
using std::int64_t;

using f32_2d = std::mdspan<float, std::dextents<int64_t, 2>>;
using const_f64_strided = std::mdspan<const double, std::dextents<int64_t, 1>, std::layout_stride>;
using const_f32_2x3_left = std::mdspan<const float, std::extents<int64_t, 2, 3>, std::layout_left>;
using const_f32_1d = std::mdspan<const float, std::dextents<int64_t, 1>>;
using const_i32_1d = std::mdspan<const std::int32_t, std::dextents<int64_t, 1>>;
using f64_strided = std::mdspan<double, std::dextents<int64_t, 1>, std::layout_stride>;
using f32_2d_strided = std::mdspan<float, std::dextents<int64_t, 2>, std::layout_stride>;
using const_f32_2d = std::mdspan<const float, std::dextents<int64_t, 2>>;
using const_f32_2d_strided = std::mdspan<const float, std::dextents<int64_t, 2>, std::layout_stride>;

/// a *= k, in place: what C++ writes, Python reads (zero copy).
inline void scale(f32_2d a, float k) {
  for (int64_t i = 0; i < a.extent(0); ++i)
    for (int64_t j = 0; j < a.extent(1); ++j) a[i, j] *= k;
}

/// The sum of a read-only strided vector (any stride, reversed included).
inline double total(const_f64_strided a) {
  double s = 0;
  for (int64_t i = 0; i < a.extent(0); ++i) s += a[i];
  return s;
}

/// The same for any strides: reversed and broadcast (zero) ones too.
inline double total_any(std::mdspan<const double, std::dextents<int64_t, 1>, dlpack_mdspan::layout_stride_relaxed> a) {
  double s = 0;
  for (int64_t i = 0; i < a.extent(0); ++i) s += a[i];
  return s;
}

/// a[i, j] * 10^(i*3+j) summed: tells a transposed (column-major) 2x3 from a row-major one.
inline double fixed_left(const_f32_2x3_left a) {
  double s = 0, w = 1;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j, w *= 10) s += a[i, j] * w;
  return s;
}

/// Overloads on the element type: which one ran.
inline std::string kind_f32(const_f32_1d) { return "float32"; }
inline std::string kind_i32(const_i32_1d) { return "int32"; }
inline std::string kind_str(const std::string&) { return "str"; }

/// Writes x everywhere; a legacy tensor arrives writable for this parameter.
inline void fill_legacy(dp::legacy_writable<f64_strided> a, double x) {
  for (int64_t i = 0; i < a.extent(0); ++i) a[i] = x;
}
/// The same without the opt-in: a legacy tensor is refused as READ_ONLY.
inline void fill(f64_strided a, double x) {
  for (int64_t i = 0; i < a.extent(0); ++i) a[i] = x;
}

/// A held view kept beyond the call, summed later (the producer's object may be gone).
inline std::optional<dp::held_view<const_f32_2d>>& kept() {
  static std::optional<dp::held_view<const_f32_2d>> k;
  return k;
}
inline void keep(dp::held_view<const_f32_2d> h) { kept().emplace(std::move(h)); }
/// The view it was given, returned as a tensor (what a function that only reads returns).
inline dp::held_view<const_f32_2d> same_const(dp::held_view<const_f32_2d> h) { return h; }
inline std::optional<double> kept_sum() {
  if (!kept()) return std::nullopt;
  double s = 0;
  const auto& v = kept()->view();
  for (int64_t i = 0; i < v.extent(0); ++i)
    for (int64_t j = 0; j < v.extent(1); ++j) s += v[i, j];
  kept().reset();  // the producer's deleter runs here
  return s;
}

/// Every other row of `h`, returned as a tensor that owns `h`'s tensor: Python sees the
/// rows, not the whole array, and writes through to the original memory (M mutable), or
/// may read them only (M const: READ_ONLY for the reason the tensor was, if it was).
template <class M>
inline dp::held_view<M> every_other_row(dp::held_view<M> h) {
  const auto v = h.view();
  const std::array<int64_t, 2> extents{(v.extent(0) + 1) / 2, v.extent(1)};
  const std::array<int64_t, 2> strides{v.stride(0) * 2, v.stride(1)};
  const M rows(v.data_handle(), std::layout_stride::mapping(std::dextents<int64_t, 2>(extents), strides));
  return dp::held_view<M>(std::move(h).release_owner(), rows);
}

/// An owned tensor in, the same tensor out (as a dlpack_mdspan.Tensor): ownership moves.
inline dlpack_mdspan::managed_tensor pass_through(dlpack_mdspan::managed_tensor t) { return t; }

/// A new C++-owned 2x3 float32 array (values 0..5), handed to the framework asked for.
inline dlpack_mdspan::managed_tensor arange_2x3() {
  std::vector<float> values{0, 1, 2, 3, 4, 5};
  const f32_2d view(values.data(), 2, 3);
  return dlpack_mdspan::to_managed_tensor(view, std::move(values));
}
template <dp::framework F>
dp::framework_tensor<F> arange_2x3_as() {
  return dp::as<F>(arange_2x3());
}

/// Whether the GIL was held inside (bound with a GIL-releasing call guard), and the sum,
/// read with the GIL released: the view stays valid.
inline std::pair<bool, double> sum_without_gil(const_f32_1d a) {
  const bool held = PyGILState_Check() != 0;
  double s = 0;
  for (int64_t i = 0; i < a.extent(0); ++i) s += a[i];
  return {held, s};
}

/// Views inside the binding library's own containers: its element casters are local to the
/// container's caster and gone before the function runs (and a list's is reused for every
/// element), so the tensor behind each view must live on elsewhere until the call returns.
/// Where a stream_ordered view is ready: (stream_order, the stream as an integer or None).
template <class M>
inline std::pair<int, std::optional<std::uint64_t>> ready_on(dp::stream_ordered<M> v) {
  if (v.ready.order != DLPM_PY_ORDER_STREAM) return {v.ready.order, std::nullopt};
  return {v.ready.order, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(v.ready.stream))};
}
using const_cuda_f32_1d =
    std::mdspan<const float, std::dextents<int64_t, 1>, std::layout_right, dlpack_mdspan::device_memory_accessor<const float, kDLCUDA>>;

inline double total_optional(std::optional<const_f64_strided> a) { return a ? total(*a) : -1.0; }
inline double total_each(const std::vector<const_f64_strided>& views) {
  double s = 0;
  for (const auto& v : views) s += total(v);
  return s;
}
inline double total_variant(std::variant<const_f64_strided, std::string> a) {
  return std::holds_alternative<const_f64_strided>(a) ? total(std::get<const_f64_strided>(a)) : -1.0;
}

/// Owned values inside containers: held views in (their count out), an optional tensor in and
/// out, tensors out as a list.
inline int64_t count_held(std::vector<dp::held_view<const_f32_2d>> each) { return static_cast<int64_t>(each.size()); }
inline std::optional<dlpack_mdspan::managed_tensor> maybe_pass(std::optional<dlpack_mdspan::managed_tensor> t) { return t; }
inline std::vector<dlpack_mdspan::managed_tensor> two_aranges() {
  std::vector<dlpack_mdspan::managed_tensor> out;
  out.push_back(arange_2x3());
  out.push_back(arange_2x3());
  return out;
}

/// Binds every function above on `m`, for nanobind and pybind11 alike: `no_convert` is the
/// library's arg("a").noconvert(), `release_gil` its call_guard<gil_scoped_release>.
template <class Module, class NoConvert, class ReleaseGil>
void define_all(Module& m, NoConvert no_convert, ReleaseGil release_gil) {
  m.def("scale", &scale);
  m.def("total", &total);
  m.def("total_any", &total_any);
  m.def("fixed_left", &fixed_left);
  m.def("kind", &kind_f32);
  m.def("kind", &kind_i32);
  m.def("kind", &kind_str);
  m.def("kind_noconvert", &kind_f32, no_convert);
  m.def("kind_noconvert", &kind_i32, no_convert);
  m.def("fill_legacy", &fill_legacy);
  m.def("fill", &fill);
  m.def("keep", &keep);
  m.def("same_const", &same_const);
  m.def("kept_sum", &kept_sum);
  m.def("every_other_row", &every_other_row<f32_2d_strided>);
  m.def("every_other_row_const", &every_other_row<const_f32_2d_strided>);
  m.def("pass_through", &pass_through);
  m.def("arange_2x3", &arange_2x3);
  m.def("arange_2x3_numpy", &arange_2x3_as<dp::framework::numpy>);
  m.def("arange_2x3_torch", &arange_2x3_as<dp::framework::torch>);
  m.def("arange_2x3_jax", &arange_2x3_as<dp::framework::jax>);
  m.def("sum_without_gil", &sum_without_gil, release_gil);
  m.def("total_optional", &total_optional);
  m.def("total_each", &total_each);
  m.def("total_variant", &total_variant);
  m.def("count_held", &count_held);
  m.def("maybe_pass", &maybe_pass);
  m.def("two_aranges", &two_aranges);
  m.def("ready_on_cuda", &ready_on<const_cuda_f32_1d>);
  m.def("ready_on_cpu", &ready_on<const_f32_1d>);
}

}  // namespace bound

#endif
