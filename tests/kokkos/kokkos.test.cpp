// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/kokkos.hpp: a Kokkos::View exported as a DLPack tensor over its own memory
// (LayoutRight, LayoutLeft, LayoutStride; READ_ONLY for const Views; the View kept alive by
// the managed tensor), and a DLPack tensor viewed as an unmanaged View with the core's
// import checks. The View-filling and reducing cases run on each host backend Kokkos was
// built with (Serial, OpenMP).
#include <doctest/doctest.h>

#include <dlpack_mdspan/kokkos.hpp>

#include "support/tensor_builder.hpp"

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dk = dlpack_mdspan::kokkos;
using dlpack_mdspan::errc;
using dlpm_test::f32;
using dlpm_test::f64;
using dlpm_test::tensor_builder;

namespace {

// Kokkos for the whole program: initialized by the first test that asks (not by a global
// object: Kokkos's own statics may not be constructed yet then), finalized at exit, after
// the last test, when every View of a test is gone.
void use_kokkos() {
  static const bool initialized = [] {
    // two threads for OpenMP (the machine's cores, and enough for a reduction to be parallel)
    Kokkos::initialize(Kokkos::InitializationSettings().set_num_threads(2).set_disable_warnings(true));
    std::atexit([] { Kokkos::finalize(); });
    return true;
  }();
  (void)initialized;
}

template <class Space>
Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> iota_2d(std::size_t rows, std::size_t cols) {
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> v("iota", rows, cols);
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, rows * cols), KOKKOS_LAMBDA(std::size_t k) { v(k / cols, k % cols) = double(k); });
  Kokkos::fence();
  return v;
}

template <class Space, class View>
double sum_2d(const View& v) {
  double total = 0;
  const std::size_t cols = v.extent(1);
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<Space>(0, v.extent(0) * cols),
      KOKKOS_LAMBDA(std::size_t k, double& acc) { acc += v(k / cols, k % cols); }, total);
  return total;
}

}  // namespace

// The host backends this Kokkos has (scripts/install-deps builds both).
#if defined(KOKKOS_ENABLE_SERIAL) && defined(KOKKOS_ENABLE_OPENMP)
#define DLPM_KOKKOS_SPACES Kokkos::Serial, Kokkos::OpenMP
#elif defined(KOKKOS_ENABLE_OPENMP)
#define DLPM_KOKKOS_SPACES Kokkos::OpenMP
#else
#define DLPM_KOKKOS_SPACES Kokkos::DefaultHostExecutionSpace
#endif

TEST_CASE_TEMPLATE("a LayoutRight View is exported over its own memory, row-major", Space, DLPM_KOKKOS_SPACES) {
  use_kokkos();
  const auto v = iota_2d<Space>(3, 4);
  const auto t = dk::try_to_dlpack_tensor(v);
  REQUIRE(t);
  const DLTensor d = t->get();
  CHECK(d.data == v.data());
  CHECK(d.byte_offset == 0);
  CHECK(d.device.device_type == kDLCPU);
  CHECK(d.dtype.code == kDLFloat);
  CHECK(d.dtype.bits == 64);
  CHECK(d.ndim == 2);
  CHECK(std::vector<std::int64_t>(d.shape, d.shape + 2) == std::vector<std::int64_t>{3, 4});
  CHECK(std::vector<std::int64_t>(d.strides, d.strides + 2) == std::vector<std::int64_t>{4, 1});
  // and back: the same memory, the values the backend wrote
  const auto back = dk::to_view<Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace>>(d);
  CHECK(back.data() == v.data());
  CHECK(back.extent(0) == 3);
  CHECK(back.extent(1) == 4);
  CHECK(sum_2d<Space>(back) == doctest::Approx(66.0));
  CHECK(back.use_count() == 0);  // unmanaged: the tensor's owner keeps the memory
}

TEST_CASE("a LayoutLeft View is exported column-major and imported back as LayoutLeft only") {
  use_kokkos();
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> v("left", 3, 5);
  v(2, 4) = 7.0f;
  const auto t = dk::try_to_dlpack_tensor(v);
  REQUIRE(t);
  const DLTensor d = t->get();
  CHECK(std::vector<std::int64_t>(d.strides, d.strides + 2) == std::vector<std::int64_t>{1, 3});
  const auto left = dk::try_to_view<Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace>>(d);
  REQUIRE(left);
  CHECK((*left)(2, 4) == 7.0f);
  CHECK(left->data() == v.data());
  // column-major strides are not LayoutRight's
  const auto right = dk::try_to_view<Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>>(d);
  REQUIRE_FALSE(right);
  CHECK(right.error().code() == errc::non_compact_strides);
  // LayoutStride takes them as they are
  const auto strided = dk::try_to_view<Kokkos::View<float**, Kokkos::LayoutStride, Kokkos::HostSpace>>(d);
  REQUIRE(strided);
  CHECK(strided->stride(0) == 1);
  CHECK(strided->stride(1) == 3);
  CHECK((*strided)(2, 4) == 7.0f);
}

TEST_CASE("a subview is exported with its strides (a padded row) and imported as LayoutStride") {
  use_kokkos();
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> v("whole", 4, 6);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 6; ++j) v(i, j) = double(10 * i + j);
  const auto sub = Kokkos::subview(v, Kokkos::pair<int, int>(1, 3), Kokkos::pair<int, int>(2, 5));
  const auto t = dk::try_to_dlpack_tensor(sub);
  REQUIRE(t);
  const DLTensor d = t->get();
  CHECK(d.data == &v(1, 2));
  CHECK(std::vector<std::int64_t>(d.shape, d.shape + 2) == std::vector<std::int64_t>{2, 3});
  CHECK(std::vector<std::int64_t>(d.strides, d.strides + 2) == std::vector<std::int64_t>{6, 1});
  const auto back = dk::to_view<Kokkos::View<const double**, Kokkos::LayoutStride, Kokkos::HostSpace>>(d);
  CHECK(back(1, 2) == 24.0);
  CHECK(&back(0, 0) == &v(1, 2));
  // row stride 6 is not a compact LayoutRight
  const auto right = dk::try_to_view<Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace>>(d);
  REQUIRE_FALSE(right);
  CHECK(right.error().code() == errc::non_compact_strides);
}

TEST_CASE("the managed tensor keeps the View alive, and a const View is READ_ONLY") {
  use_kokkos();
  Kokkos::View<double*, Kokkos::HostSpace> v("kept", 8);
  v(7) = 3.5;
  const double* data = v.data();
  auto tensor = dk::to_managed_tensor(v);
  CHECK(v.use_count() == 2);  // the tensor's owner is a copy of the View
  CHECK((tensor.get()->flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
  v = {};  // the caller's View goes; the tensor's memory stays
  CHECK(tensor.get()->dl_tensor.data == data);
  CHECK(static_cast<const double*>(tensor.get()->dl_tensor.data)[7] == 3.5);
  const auto writable = dk::try_to_view<Kokkos::View<double*, Kokkos::HostSpace>>(tensor);
  REQUIRE(writable);
  (*writable)(0) = 1.0;
  CHECK(static_cast<const double*>(tensor.get()->dl_tensor.data)[0] == 1.0);

  Kokkos::View<const double*, Kokkos::HostSpace> read_only = Kokkos::View<double*, Kokkos::HostSpace>("ro", 4);
  const auto ro = dk::to_managed_tensor(read_only);
  CHECK((ro.get()->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  const auto refused = dk::try_to_view<Kokkos::View<double*, Kokkos::HostSpace>>(ro);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == errc::read_only);
  CHECK(dk::try_to_view<Kokkos::View<const double*, Kokkos::HostSpace>>(ro));
}

TEST_CASE("a tensor that does not fit the View is refused with the core's reason") {
  use_kokkos();
  std::array<double, 12> data{};
  SUBCASE("dtype") {
    tensor_builder b(data.data(), f32, {3, 4}, {4, 1});
    const auto r = dk::try_to_view<Kokkos::View<double**, Kokkos::HostSpace>>(b.get());
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::dtype_mismatch);
  }
  SUBCASE("rank") {
    tensor_builder b(data.data(), f64, {12}, {1});
    const auto r = dk::try_to_view<Kokkos::View<double**, Kokkos::HostSpace>>(b.get());
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::ndim_mismatch);
  }
  SUBCASE("a static extent") {
    tensor_builder b(data.data(), f64, {4, 3}, {3, 1});
    CHECK(dk::try_to_view<Kokkos::View<double* [3], Kokkos::HostSpace>>(b.get()));
    tensor_builder wrong(data.data(), f64, {3, 4}, {4, 1});
    const auto r = dk::try_to_view<Kokkos::View<double* [3], Kokkos::HostSpace>>(wrong.get());
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::shape_mismatch);
  }
  SUBCASE("device memory is not HostSpace's") {
    tensor_builder b(data.data(), f64, {3, 4}, {4, 1}, 0, DLDevice{kDLCUDA, 0});
    const auto r = dk::try_to_view<Kokkos::View<double**, Kokkos::HostSpace>>(b.get());
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::device_mismatch);
  }
  SUBCASE("a negative stride has no LayoutStride") {
    tensor_builder b(data.data() + 11, f64, {3, 4}, {-4, -1});
    const auto r = dk::try_to_view<Kokkos::View<double**, Kokkos::LayoutStride, Kokkos::HostSpace>>(b.get());
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::non_positive_stride);
  }
  SUBCASE("the caller's requirements") {
    tensor_builder b(data.data(), f64, {3, 4}, {4, 1});
    dlpack_mdspan::tensor_requirements req{};
    req.order = 'F';
    const auto r = dk::try_to_view<Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>>(b.get(), 0, req);
    REQUIRE_FALSE(r);
  }
  SUBCASE("the throwing form throws dlpack_error") {
    tensor_builder b(data.data(), f32, {3, 4}, {4, 1});
    using doubles = Kokkos::View<double**, Kokkos::HostSpace>;
    CHECK_THROWS_AS((void)dk::to_view<doubles>(b.get()), dlpack_mdspan::dlpack_error);
  }
  SUBCASE("a device_id that is neither -1 (any) nor an ordinal is the caller's error, not \"any\"") {
    tensor_builder b(data.data(), f64, {3, 4}, {4, 1});
    dlpack_mdspan::tensor_requirements req{};
    req.device_id = -5;
    const auto r = dk::try_to_view<Kokkos::View<double**, Kokkos::HostSpace>>(b.get(), 0, req);
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::invalid_argument);
  }
}

using host_doubles = Kokkos::View<double*, Kokkos::HostSpace>;
// A View of a temporary managed_tensor would dangle at the end of the statement: no overload.
template <class Tensor>
concept viewable_as_a_view = requires(Tensor&& t) { dk::try_to_view<host_doubles>(std::forward<Tensor>(t)); };
static_assert(!viewable_as_a_view<dlpack_mdspan::managed_tensor>);
static_assert(viewable_as_a_view<const dlpack_mdspan::managed_tensor&>);

TEST_CASE("an empty managed_tensor is refused as the core refuses it, not read") {
  use_kokkos();
  const dlpack_mdspan::managed_tensor empty;
  const auto r = dk::try_to_view<host_doubles>(empty);
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == errc::null_pointer);
}

TEST_CASE("a View that owns no memory is not exported as an owning tensor") {
  use_kokkos();
  std::vector<double> storage{1, 2, 3, 42};
  auto producer = dlpack_mdspan::to_managed_tensor(
      Kokkos::mdspan<double, Kokkos::dextents<std::size_t, 1>>(storage.data(), storage.size()), std::move(storage));
  const auto imported = dk::to_view<host_doubles>(producer.get()->dl_tensor, producer.get()->flags);  // unmanaged
  const auto refused = dk::try_to_managed_tensor(imported);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == errc::invalid_argument);
  CHECK(std::string(refused.error().what()).find("does not own its memory") != std::string::npos);
  CHECK_THROWS_AS((void)dk::to_managed_tensor(imported), dlpack_mdspan::dlpack_error);
  double raw[2] = {1, 2};
  CHECK_FALSE(dk::try_to_managed_tensor(host_doubles(raw, 2)));  // a View over a pointer: unmanaged too
  CHECK(dk::try_to_managed_tensor(host_doubles()));                // no memory: nothing to keep alive
  CHECK(dk::try_to_managed_tensor(host_doubles("owned", 2)));
}

TEST_CASE("pinned and managed host-reachable memory is HostSpace's, an empty tensor views as an empty View") {
  use_kokkos();
  std::array<double, 4> data{1, 2, 3, 4};
  tensor_builder pinned(data.data(), f64, {4}, {1}, 0, DLDevice{kDLCUDAHost, 0});
  const auto v = dk::try_to_view<Kokkos::View<double*, Kokkos::HostSpace>>(pinned.get());
  REQUIRE(v);
  CHECK((*v)(3) == 4.0);
  tensor_builder empty(nullptr, f64, {0, 4}, {4, 1});
  const auto e = dk::try_to_view<Kokkos::View<double**, Kokkos::HostSpace>>(empty.get());
  REQUIRE(e);
  CHECK(e->extent(0) == 0);
  CHECK(e->extent(1) == 4);
}

static_assert(dk::memory_space_traits<Kokkos::HostSpace>::device_type == kDLCPU);
static_assert(std::is_same_v<dk::unmanaged_view_t<Kokkos::View<double**>>::memory_space, Kokkos::HostSpace>);
static_assert(dk::unmanaged_view_t<Kokkos::View<double**>>::memory_traits::is_unmanaged);

TEST_CASE("a rank-0 View and a View with a static extent go out and come back") {
  use_kokkos();
  Kokkos::View<double, Kokkos::HostSpace> scalar("scalar");
  scalar() = 2.5;
  const auto t = dk::try_to_dlpack_tensor(scalar);
  REQUIRE(t);
  const DLTensor d = t->get();
  CHECK(d.ndim == 0);
  CHECK(d.data == scalar.data());
  const auto back = dk::to_view<Kokkos::View<const double, Kokkos::HostSpace>>(d);
  CHECK(back() == 2.5);

  Kokkos::View<float* [2], Kokkos::HostSpace> pairs("pairs", 5);
  pairs(4, 1) = 9.0f;
  const auto p = dk::try_to_dlpack_tensor(pairs);
  REQUIRE(p);
  const DLTensor pd = p->get();
  CHECK(std::vector<std::int64_t>(pd.shape, pd.shape + 2) == std::vector<std::int64_t>{5, 2});
  CHECK(std::vector<std::int64_t>(pd.strides, pd.strides + 2) == std::vector<std::int64_t>{2, 1});
  const auto pairs_back = dk::to_view<Kokkos::View<float* [2], Kokkos::HostSpace>>(pd);
  CHECK(pairs_back(4, 1) == 9.0f);
  CHECK(pairs_back.extent(0) == 5);
}
