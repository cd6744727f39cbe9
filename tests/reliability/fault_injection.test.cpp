// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Allocation failure inside the owning exports, throwing owners, and deleters that
// re-enter the library: no leak, the strong guarantee, exactly-once ownership.
#include "support/prelude.hpp"

#include <dlpack_mdspan.h>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

namespace dm = dlpack_mdspan;

namespace {
struct counted_owner {
  int* destroyed;
  bool live = true;
  explicit counted_owner(int* d) : destroyed(d) {}
  counted_owner(counted_owner&& o) noexcept : destroyed(o.destroyed) { o.live = false; }
  ~counted_owner() {
    if (live) ++*destroyed;
  }
};

int released = 0;
void count_release(void*) { ++released; }
}  // namespace

TEST_CASE("to_managed_tensor: the one allocation fails → bad_alloc, owner intact, then destroyed once") {
  float buf[6] = {};
  int destroyed = 0;
  std::mdspan<float, std::dextents<int, 2>> md(buf, 2, 3);
  {
    counted_owner owner(&destroyed);
    {
      dlpm_test::fail_nth_allocation fail(1);
      CHECK_THROWS_AS((void)dm::to_managed_tensor(md, std::move(owner)), std::bad_alloc);
    }
    CHECK(destroyed == 0);
    CHECK(owner.live);  // the strong guarantee: nothing was taken
    {
      dlpm_test::fail_nth_allocation fail(1);
      auto r = dm::try_to_managed_tensor(md, std::move(owner));
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code() == dm::errc::out_of_memory);
    }
    CHECK(owner.live);
    auto t = dm::to_managed_tensor(md, std::move(owner));  // and it still works afterwards
    CHECK_FALSE(owner.live);
  }
  CHECK(destroyed == 1);
}

TEST_CASE("to_managed_tensor_copy: each allocation failing in turn leaks nothing") {
  int buf[12] = {};
  using E = std::dextents<int, 2>;
  std::mdspan<int, E, std::layout_stride> src(buf, std::layout_stride::mapping(E(3, 2), std::array<int, 2>{4, 2}));
  int failures = 0;
  for (std::size_t n = 1; n <= 4; ++n) {
    dlpm_test::fail_nth_allocation fail(n);
    try {
      auto t = dm::to_managed_tensor_copy(src);
      CHECK(t.tensor().shape[0] == 3);
    } catch (const std::bad_alloc&) {
      ++failures;
    }
  }
  CHECK(failures == 2);  // the buffer and the block; LeakSanitizer checks the rest
}

TEST_CASE("dlpm_managed_new: allocation failure → DLPM_E_OUT_OF_MEMORY, out untouched, release not called") {
  float buf[4] = {};
  std::int64_t shape[1] = {4};
  DLManagedTensorVersioned* out = nullptr;
  released = 0;
  {
    dlpm_test::fail_nth_allocation fail(1);
    CHECK(dlpm_managed_new(buf, 1, shape, nullptr, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}, 0, 0, count_release, nullptr,
                           &out) == DLPM_E_OUT_OF_MEMORY);
  }
  CHECK(out == nullptr);
  CHECK(released == 0);
  CHECK(std::string(dlpm_last_error()) == "make_managed_tensor: out of memory");
  REQUIRE(dlpm_managed_new(buf, 1, shape, nullptr, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}, 0, 0, count_release, nullptr,
                           &out) == DLPM_OK);
  dlpm_managed_delete(out);
  CHECK(released == 1);
}

TEST_CASE("dlpm_managed_new_checked: allocation failure → DLPM_E_OUT_OF_MEMORY, out untouched, release not called") {
  float buf[6] = {};
  std::int64_t shape[2] = {2, 3}, strides[2] = {3, 1};
  const DLTensor t{buf, DLDevice{kDLCPU, 0}, 2, DLDataType{kDLFloat, 32, 1}, shape, strides, 0};
  dlpm_checked_tensor checked{};
  checked.version = DLPM_CHECKED_TENSOR_VERSION;
  REQUIRE(dlpm_check_tensor(&t, 0, nullptr, 0, &checked) == DLPM_OK);
  DLManagedTensorVersioned* out = nullptr;
  released = 0;
  {
    dlpm_test::fail_nth_allocation fail(1);  // the block of an export sharing the arrays
    CHECK(dlpm_managed_new_checked(&checked, 0, count_release, nullptr, &out) == DLPM_E_OUT_OF_MEMORY);
  }
  CHECK(out == nullptr);
  CHECK(released == 0);
  REQUIRE(dlpm_managed_new_checked(&checked, 0, count_release, nullptr, &out) == DLPM_OK);
  CHECK(out->dl_tensor.shape == shape);
  dlpm_managed_delete(out);
  CHECK(released == 1);
}

TEST_CASE("dlpm_managed_new_ordered: allocation failure → DLPM_E_OUT_OF_MEMORY, out untouched, release not called") {
  float buf[6] = {};
  std::int64_t shape[2] = {2, 3};
  DLManagedTensorVersioned* out = nullptr;
  released = 0;
  {
    dlpm_test::fail_nth_allocation fail(1);
    CHECK(dlpm_managed_new_ordered(buf, 2, shape, nullptr, 'F', DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}, 0, 0,
                                   count_release, nullptr, &out) == DLPM_E_OUT_OF_MEMORY);
  }
  CHECK(out == nullptr);
  CHECK(released == 0);
  CHECK(std::string(dlpm_last_error()) == "make_managed_tensor: out of memory");
  REQUIRE(dlpm_managed_new_ordered(buf, 2, shape, nullptr, 'F', DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}, 0, 0,
                                   count_release, nullptr, &out) == DLPM_OK);
  CHECK(out->dl_tensor.strides[0] == 1);
  CHECK(out->dl_tensor.strides[1] == 2);
  dlpm_managed_delete(out);
  CHECK(released == 1);
}

TEST_CASE("legacy bridges: allocation failure is reported and ownership rules still hold") {
  static int legacy_deleted = 0;
  legacy_deleted = 0;
  auto* legacy = new DLManagedTensor{};
  legacy->deleter = [](DLManagedTensor* self) {
    ++legacy_deleted;
    delete self;
  };
  DLManagedTensorVersioned* out = nullptr;
  {
    dlpm_test::fail_nth_allocation fail(1);
    CHECK(dlpm_from_legacy(legacy, &out) == DLPM_E_OUT_OF_MEMORY);  // ownership was passed in
  }
  CHECK(legacy_deleted == 1);
  CHECK(out == nullptr);
}

TEST_CASE("an owner whose move constructor throws: no tensor, no leak, owner intact") {
  struct throwing_owner {
    int* destroyed;
    throwing_owner(int* d) : destroyed(d) {}
    throwing_owner(throwing_owner&&) { throw std::runtime_error("no move"); }
    ~throwing_owner() { ++*destroyed; }
  };
  int destroyed = 0;
  float buf[2] = {};
  {
    throwing_owner owner(&destroyed);
    std::mdspan<float, std::dextents<int, 1>> md(buf, 2);
    CHECK_THROWS_AS((void)dm::to_managed_tensor(md, std::move(owner)), std::runtime_error);
    CHECK(dm::try_to_managed_tensor(md, std::move(owner)).error().code() == dm::errc::invalid_argument);
    CHECK(destroyed == 0);
  }
  CHECK(destroyed == 1);
}

TEST_CASE("a deleter that re-enters the library") {
  // The owner's destructor creates, validates, views and destroys other managed tensors.
  struct reentrant_owner {
    int* calls;
    bool live = true;
    explicit reentrant_owner(int* c) : calls(c) {}
    reentrant_owner(reentrant_owner&& o) noexcept : calls(o.calls) { o.live = false; }
    ~reentrant_owner() {
      if (!live) return;
      double inner[4] = {1, 2, 3, 4};
      auto t = dm::to_managed_tensor(std::mdspan<double, std::dextents<int, 1>>(inner, 4), 0);
      DLManagedTensorVersioned* raw = t.release();
      dlpm_requirements req;
      dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
      if (dlpm_check_managed(raw, &req) == DLPM_OK && dlpm_managed_check_version(raw) == DLPM_OK) {
        auto back = dm::managed_tensor::adopt(raw);
        if (back.view<std::mdspan<const double, std::dextents<int, 1>>>()[3] == 4.0) ++*calls;
      } else {
        dlpm_managed_delete(raw);
      }
    }
  };
  int calls = 0;
  float buf[2] = {};
  {
    auto outer = dm::to_managed_tensor(std::mdspan<float, std::dextents<int, 1>>(buf, 2), reentrant_owner(&calls));
    DLManagedTensorVersioned* raw = outer.release();
    dlpm_managed_delete(raw);  // the deleter runs the owner's re-entrant destructor
  }
  CHECK(calls == 1);
}
