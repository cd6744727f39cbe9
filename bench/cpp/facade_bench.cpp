// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 4. The C facade (static library, as Rust and the Python extensions link it) against the
// inline C++ call it wraps: dlpm_validate vs dlpack_mdspan::validate, dlpm_check /
// dlpm_check_managed vs dlpack_mdspan::check_requirements, dlpm_managed_new (and
// dlpm_managed_new_from) + dlpm_managed_delete vs dlpack_mdspan::try_make_managed_tensor +
// destroy. A 2-D float32 C-contiguous CPU tensor, the case of every NumPy consumer. Then
// dlpm_check of the strided views users have (a slice, a transpose, a permutation, a
// broadcast, a reversed axis) at ranks 2, 4 and 8 against a compact tensor of the same
// rank: the runtime-rank check every view of the C facade, Rust, MPI and the Python
// component makes; and dlpm_check_layout of a compact tensor with its strides given and
// NULL, whose strides the facade writes.
#include <catch2/catch.hpp>

#include "common.hpp"

#include <dlpack_mdspan.h>

#include <memory>
#include <vector>

namespace {

alignas(64) float g_data[256];
alignas(64) float g_strided[4096];
const std::int32_t g_cpu[] = {kDLCPU};
std::uint64_t g_releases = 0;

void count_release(void*) noexcept { ++g_releases; }

// The facade's owner (c_release_owner in ffi/src/dlpack_mdspan_c.cpp), for the inline call.
class release_owner {
 public:
  release_owner(dlpm_release_fn fn, void* ctx) noexcept : fn_(fn), ctx_(ctx) {}
  release_owner(release_owner&& o) noexcept : fn_(o.fn_), ctx_(o.ctx_) { o.fn_ = nullptr; }
  ~release_owner() {
    if (fn_ != nullptr) fn_(ctx_);
  }

 private:
  dlpm_release_fn fn_;
  void* ctx_;
};

dlpm_requirements c_requirements() {
  dlpm_requirements req;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.check_dtype = 1;
  req.dtype = DLDataType{kDLFloat, 32, 1};
  req.ndim = 2;
  req.order = 'C';
  req.device_types = g_cpu;
  req.num_device_types = 1;
  return req;
}

// dlpm_check's requirements for a view of any strides: float32, the rank, the CPU.
dlpm_requirements any_order_requirements(std::int32_t ndim) {
  dlpm_requirements req = c_requirements();
  req.ndim = ndim;
  req.order = 0;
  return req;
}

template <std::size_t R>
void strided_checks(const std::array<std::int64_t, R>& shape) {
  const dlpm_requirements req = any_order_requirements(static_cast<std::int32_t>(R));
  bench::tensor_fixture<R> compact(g_strided, shape);
  auto check_op = [&req](std::string name, DLTensor* t) {
    REQUIRE(dlpm_check(t, &req) == DLPM_OK);
    return bench::op(std::move(name), [t, r = req]() mutable {
      bench::launder(t);
      bench::launder(r);
      dlpm_status s = dlpm_check(t, &r);
      bench::escape(&s);
    });
  };
  std::vector<std::unique_ptr<bench::strided_fixture<R>>> views;
  std::vector<bench::operation> candidates;
  for (bench::view_kind kind : {bench::view_kind::slice, bench::view_kind::transpose, bench::view_kind::permutation,
                                bench::view_kind::broadcast, bench::view_kind::reversed}) {
    if (kind == bench::view_kind::permutation && R < 4) continue;  // rank 2's only permutation is the transpose
    views.push_back(std::make_unique<bench::strided_fixture<R>>(g_strided, kind, shape));
    candidates.push_back(
        check_op(bench::label("rank %zu, %s: dlpm_check (f32, any order, CPU)", R, bench::kind_name(kind)), &views.back()->t));
  }
  bench::compare("C facade, strided", check_op(bench::label("rank %zu, compact: dlpm_check (f32, any order, CPU)", R), &compact.t),
                 std::move(candidates));

  // The strides a binding reads back with the check (dlpm_check_layout): the compact
  // tensor's own, and the same tensor with NULL strides, whose row-major strides the facade
  // computes.
  DLTensor implicit = compact.t;
  implicit.strides = nullptr;
  auto layout_op = [&req](std::string name, DLTensor* t) {
    std::int64_t strides[R] = {}, numel = 0;
    REQUIRE(dlpm_check_layout(t, 0, &req, strides, static_cast<std::int32_t>(R), &numel) == DLPM_OK);
    return bench::op(std::move(name), [t, r = req]() mutable {
      bench::launder(t);
      bench::launder(r);
      std::int64_t out[R], n = 0;
      dlpm_status s = dlpm_check_layout(t, 0, &r, out, static_cast<std::int32_t>(R), &n);
      bench::escape(&s);
      bench::escape(out);
      bench::escape(&n);
    });
  };
  bench::compare("C facade, NULL strides",
                 layout_op(bench::label("rank %zu, compact, strides given: dlpm_check_layout", R), &compact.t),
                 {layout_op(bench::label("rank %zu, compact, NULL strides: dlpm_check_layout", R), &implicit)});
}

dm::tensor_requirements cxx_requirements() {
  dm::tensor_requirements req;
  req.check_dtype = true;
  req.dtype = DLDataType{kDLFloat, 32, 1};
  req.ndim = 2;
  req.order = 'C';
  req.device_types = g_cpu;
  req.num_device_types = 1;
  return req;
}

}  // namespace

TEST_CASE("C facade: validation and requirements vs the inline C++ call", "[facade]") {
  bench::tensor_fixture<2> fx(g_data, {8, 8});
  DLTensor* t = &fx.t;
  const dlpm_requirements creq = c_requirements();
  const dm::tensor_requirements req = cxx_requirements();
  {
    dm::error err;
    REQUIRE(dlpm_validate(t) == DLPM_OK);
    REQUIRE(dm::validate(*t, &err));
    REQUIRE(dlpm_check(t, &creq) == DLPM_OK);
    REQUIRE(dm::check_requirements(*t, 0, req, &err));
  }

  bench::compare("C facade",
                 bench::op("validate: dlpack_mdspan::validate (inline C++)",
                           [t]() mutable {
                             bench::launder(t);
                             dm::error err;
                             bool ok = dm::validate(*t, &err);
                             bench::escape(&ok);
                           }),
                 {bench::op("validate: dlpm_validate", [t]() mutable {
                   bench::launder(t);
                   dlpm_status s = dlpm_validate(t);
                   bench::escape(&s);
                 })});

  bench::compare("C facade",
                 bench::op("check (f32, ndim 2, C order, CPU): check_requirements (inline C++)",
                           [t, r = req]() mutable {
                             bench::launder(t);
                             bench::launder(r);
                             dm::error err;
                             bool ok = dm::check_requirements(*t, 0, r, &err);
                             bench::escape(&ok);
                           }),
                 {bench::op("check (f32, ndim 2, C order, CPU): dlpm_check", [t, r = creq]() mutable {
                   bench::launder(t);
                   bench::launder(r);
                   dlpm_status s = dlpm_check(t, &r);
                   bench::escape(&s);
                 })});

  DLManagedTensorVersioned* m = nullptr;
  REQUIRE(dlpm_managed_new(g_data, 2, fx.shape.data(), nullptr, fx.t.dtype, fx.t.device, 0, 0, nullptr, nullptr, &m) ==
          DLPM_OK);
  REQUIRE(dlpm_check_managed(m, &creq) == DLPM_OK);
  bench::compare("C facade",
                 bench::op("check managed: check_requirements with flags (inline C++)",
                           [m, r = req]() mutable {
                             bench::launder(m);
                             bench::launder(r);
                             dm::error err;
                             bool ok = dm::check_requirements(m->dl_tensor, m->flags, r, &err);
                             bench::escape(&ok);
                           }),
                 {bench::op("check managed: dlpm_check_managed", [m, r = creq]() mutable {
                   bench::launder(m);
                   bench::launder(r);
                   dlpm_status s = dlpm_check_managed(m, &r);
                   bench::escape(&s);
                 })});
  dlpm_managed_delete(m);
}

TEST_CASE("C facade: dlpm_managed_new + dlpm_managed_delete vs the inline C++ call", "[facade]") {
  bench::tensor_fixture<2> fx(g_data, {8, 8});
  DLTensor* t = &fx.t;
  g_releases = 0;
  {
    DLManagedTensorVersioned* m = nullptr;
    REQUIRE(dlpm_managed_new(t->data, t->ndim, t->shape, t->strides, t->dtype, t->device, 0, 0, count_release, nullptr, &m) ==
            DLPM_OK);
    dlpm_managed_delete(m);
    REQUIRE(g_releases == 1);
  }
  // A binding's one set of options for every export (its release function).
  dlpm_managed_options managed_options = DLPM_MANAGED_OPTIONS_INIT;
  managed_options.release = count_release;
  {
    DLManagedTensorVersioned* m = nullptr;
    REQUIRE(dlpm_managed_new_from(t, &managed_options, &m) == DLPM_OK);
    dlpm_managed_delete(m);
    REQUIRE(g_releases == 2);
  }
  bench::compare("C facade",
                 bench::op("managed new + delete: try_make_managed_tensor + destroy (inline C++)",
                           [t]() mutable {
                             bench::launder(t);
                             auto made = dm::try_make_managed_tensor(*t, release_owner(count_release, nullptr));
                             bench::escape(&made);
                           }),
                 {bench::op("managed new + delete: dlpm_managed_new + dlpm_managed_delete", [t]() mutable {
                   bench::launder(t);
                   DLManagedTensorVersioned* m = nullptr;
                   dlpm_managed_new(t->data, t->ndim, t->shape, t->strides, t->dtype, t->device, t->byte_offset, 0,
                                    count_release, nullptr, &m);
                   bench::escape(m);
                   dlpm_managed_delete(m);
                 }),
                  bench::op("managed new + delete: dlpm_managed_new_from + dlpm_managed_delete",
                            [t, options = &managed_options]() mutable {
                              bench::launder(t);
                              bench::launder(options);
                              DLManagedTensorVersioned* m = nullptr;
                              dlpm_managed_new_from(t, options, &m);
                              bench::escape(m);
                              dlpm_managed_delete(m);
                            })},
                 "release callback: a counter");
}

TEST_CASE("C facade: dlpm_check of strided views at a runtime rank, against a compact tensor", "[facade]") {
  strided_checks<2>({8, 8});
  strided_checks<4>({2, 3, 4, 5});
  strided_checks<8>({2, 3, 2, 2, 2, 2, 2, 3});
}
