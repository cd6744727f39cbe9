// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 6. Size independence: the same operations on a 4-element tensor (2 x 2) and on a
// 2^28-element one (16384 x 16384 floats, 1 GiB), and on a 1-element one (1 x 1) beside
// them. All live in PROT_NONE address space that is never committed, so any read or write
// of an element would crash: the costs below cannot involve the elements. The 4-element
// form is each row's baseline, so the 2^28-element row's ratio of 1.00 means "independent
// of size": both shapes have extents above 1 and take the same checks. The 1-element row
// shows what extents of 1 change (DLPack lets such a dimension carry any stride, so the
// compact-stride comparison skips it), which is the shape, not the size.
#include <catch2/catch.hpp>

#include "common.hpp"

#include <dlpack_mdspan.h>

#include <memory>

namespace {

using view2 = std::mdspan<float, std::dextents<std::size_t, 2>>;
using target2 = std::mdspan<float, std::dextents<std::int64_t, 2>>;
constexpr std::size_t big_side = 16384;  // 16384^2 = 2^28 elements

const std::int32_t g_cpu[] = {kDLCPU};

struct sized {
  std::shared_ptr<bench::untouchable> region;
  view2 md;
  std::unique_ptr<bench::tensor_fixture<2>> fx;
};

sized make_sized(std::size_t side) {
  sized s;
  s.region = std::make_shared<bench::untouchable>(side * side * sizeof(float));
  s.md = view2(s.region->data(), side, side);
  s.fx = std::make_unique<bench::tensor_fixture<2>>(
      s.region->data(), std::array<std::int64_t, 2>{static_cast<std::int64_t>(side), static_cast<std::int64_t>(side)});
  return s;
}

template <class MakeOp>
void size_rows(const char* what, sized& one, sized& small, sized& big, MakeOp make) {
  bench::compare("size independence", make(bench::label("%s: 4 elements (2 x 2)", what), small),
                 {make(bench::label("%s: 2^28 elements (1 GiB, untouched)", what), big),
                  make(bench::label("%s: 1 element (extents of 1)", what), one)});
}

}  // namespace

TEST_CASE("size independence: 4 elements vs 2^28 elements", "[size]") {
  sized one = make_sized(1);
  sized small = make_sized(2);
  sized big = make_sized(big_side);
  REQUIRE(dm::to_mdspan<target2>(big.fx->t).extent(0) == static_cast<std::int64_t>(big_side));

  size_rows("export view, rank 2", one, small, big, [](std::string name, sized& s) {
    return bench::op(std::move(name), [md = s.md]() mutable {
      bench::launder(md);
      auto view = dm::to_dlpack_tensor(md);
      const DLTensor& t = view.get();  // a reference into view: escaping t escapes view too
      bench::escape(&t);
    });
  });
  size_rows("import view, rank 2 layout_right", one, small, big, [](std::string name, sized& s) {
    return bench::op(std::move(name), [t = &s.fx->t]() mutable {
      bench::launder(t);
      bench::launder(*t);
      target2 m = dm::to_mdspan<target2>(*t);
      bench::escape(&m);
    });
  });
  size_rows("managed round trip, rank 2, owner owns the mapping", one, small, big, [](std::string name, sized& s) {
    return bench::op(std::move(name), [md = s.md, region = s.region]() mutable {
      bench::launder(md);
      DLManagedTensorVersioned* p = dm::to_managed_tensor(md, std::shared_ptr<bench::untouchable>(region)).release();
      bench::escape(p);
      auto mt = dm::managed_tensor::adopt(p);
      target2 v = mt.view<target2>();
      bench::escape(&v);
    });
  });
  size_rows("dlpm_check (f32, ndim 2, C order, CPU)", one, small, big, [](std::string name, sized& s) {
    dlpm_requirements req;
    dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
    req.check_dtype = 1;
    req.dtype = DLDataType{kDLFloat, 32, 1};
    req.ndim = 2;
    req.order = 'C';
    req.device_types = g_cpu;
    req.num_device_types = 1;
    return bench::op(std::move(name), [t = &s.fx->t, req]() mutable {
      bench::launder(t);
      dlpm_status st = dlpm_check(t, &req);
      bench::escape(&st);
    });
  });
  size_rows("dlpm_managed_new + dlpm_managed_delete", one, small, big, [](std::string name, sized& s) {
    return bench::op(std::move(name), [t = &s.fx->t]() mutable {
      bench::launder(t);
      DLManagedTensorVersioned* m = nullptr;
      dlpm_managed_new(t->data, t->ndim, t->shape, t->strides, t->dtype, t->device, 0, 0, nullptr, nullptr, &m);
      bench::escape(m);
      dlpm_managed_delete(m);
    });
  });
}
