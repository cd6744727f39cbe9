// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// managed_tensor and the owning exports: the deleter runs exactly once on every path.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;

namespace {

template <class T, std::size_t R>
using right = std::mdspan<T, std::dextents<std::int64_t, R>>;

// A producer we control: a heap DLManagedTensorVersioned whose deleter counts its calls
// and records the thread it ran on.
struct foreign_producer {
  int deleter_calls = 0;
  std::thread::id deleter_thread{};
  std::int64_t shape[2] = {2, 3};
  std::int64_t strides[2] = {3, 1};
  float data[6] = {0, 1, 2, 3, 4, 5};

  DLManagedTensorVersioned* make(DLPackVersion version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION},
                                 std::uint64_t flags = 0) {
    auto* m = new DLManagedTensorVersioned{};
    m->version = version;
    m->manager_ctx = this;
    m->flags = flags;
    m->deleter = [](DLManagedTensorVersioned* self) {
      auto* p = static_cast<foreign_producer*>(self->manager_ctx);
      ++p->deleter_calls;
      p->deleter_thread = std::this_thread::get_id();
      delete self;
    };
    m->dl_tensor.data = data;
    m->dl_tensor.device = DLDevice{kDLCPU, 0};
    m->dl_tensor.ndim = 2;
    m->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    m->dl_tensor.shape = shape;
    m->dl_tensor.strides = strides;
    return m;
  }

  DLManagedTensor* make_legacy() {
    auto* m = new DLManagedTensor{};
    m->manager_ctx = this;
    m->deleter = [](DLManagedTensor* self) {
      ++static_cast<foreign_producer*>(self->manager_ctx)->deleter_calls;
      delete self;
    };
    m->dl_tensor.data = data;
    m->dl_tensor.device = DLDevice{kDLCPU, 0};
    m->dl_tensor.ndim = 2;
    m->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    m->dl_tensor.shape = shape;
    m->dl_tensor.strides = strides;
    return m;
  }
};

// An owner that counts how often a live (not moved-from) instance is destroyed.
struct counted_owner {
  int* destroyed;
  std::vector<float>* storage = nullptr;
  bool live = true;
  bool throw_on_move = false;
  counted_owner(int* d, std::vector<float>* s = nullptr) : destroyed(d), storage(s) {}
  counted_owner(counted_owner&& o) : destroyed(o.destroyed), storage(o.storage), throw_on_move(o.throw_on_move) {
    if (o.throw_on_move) throw std::runtime_error("owner move failed");
    o.live = false;
  }
  ~counted_owner() {
    if (live) ++*destroyed;
  }
};

}  // namespace

TEST_CASE("adopt → view → destroy: the deleter runs once, at destruction") {
  foreign_producer p;
  {
    auto t = dm::managed_tensor::adopt(p.make());
    auto v = t.view<right<float, 2>>();
    CHECK(v[1, 2] == 5.f);
    CHECK(t.version().major == DLPACK_MAJOR_VERSION);
    CHECK(p.deleter_calls == 0);
  }
  CHECK(p.deleter_calls == 1);
}

TEST_CASE("failed validation in view leaves ownership intact: the deleter still runs once") {
  foreign_producer p;
  {
    auto t = dm::managed_tensor::adopt(p.make());
    CHECK(t.try_view<right<double, 2>>().error().code() == dm::errc::dtype_mismatch);
    using rank3 = right<float, 3>;
    CHECK_THROWS_AS((void)t.view<rank3>(), dm::dlpack_error);
    CHECK(p.deleter_calls == 0);
  }
  CHECK(p.deleter_calls == 1);
}

TEST_CASE("major version mismatch: the deleter runs at once and nothing else is read") {
  for (std::uint32_t major : {0u, 2u}) {
    foreign_producer p;
    DLManagedTensorVersioned* m = p.make(DLPackVersion{major, 0});
    m->dl_tensor.ndim = -12345;  // garbage elsewhere must not matter
    auto r = dm::managed_tensor::try_adopt(m);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == dm::errc::version_mismatch);
    CHECK(p.deleter_calls == 1);
  }
  foreign_producer p;
  CHECK_THROWS_AS((void)dm::managed_tensor::adopt(p.make(DLPackVersion{2, 0})), dm::dlpack_error);
  CHECK(p.deleter_calls == 1);
}

TEST_CASE("a newer minor version is accepted") {
  foreign_producer p;
  {
    auto t = dm::managed_tensor::adopt(p.make(DLPackVersion{1, 99}));
    CHECK(t.version().minor == 99);
    CHECK(t.view<right<const float, 2>>()[0, 1] == 1.f);
  }
  CHECK(p.deleter_calls == 1);
}

TEST_CASE("a NULL deleter is allowed: a NULL tensor is an error") {
  foreign_producer p;
  DLManagedTensorVersioned* m = p.make();
  auto deleter = m->deleter;
  m->deleter = nullptr;
  {
    auto t = dm::managed_tensor::adopt(m);
    CHECK(t.view<right<float, 2>>()[1, 0] == 3.f);
  }
  CHECK(p.deleter_calls == 0);
  deleter(m);  // our producer frees it itself
  CHECK(dm::managed_tensor::try_adopt(nullptr).error().code() == dm::errc::null_pointer);
}

TEST_CASE("move construction, move assignment over a live tensor, and self-move") {
  foreign_producer a, b;
  {
    auto ta = dm::managed_tensor::adopt(a.make());
    auto tb = dm::managed_tensor::adopt(b.make());
    dm::managed_tensor moved(std::move(ta));
    CHECK(ta.empty());
    CHECK(a.deleter_calls == 0);
    moved = std::move(tb);  // releases a's tensor
    CHECK(a.deleter_calls == 1);
    CHECK(b.deleter_calls == 0);
    auto& alias = moved;
    moved = std::move(alias);  // self-move: no effect
    CHECK(b.deleter_calls == 0);
    CHECK_FALSE(moved.empty());
  }
  CHECK(a.deleter_calls == 1);
  CHECK(b.deleter_calls == 1);
}

TEST_CASE("release() then a manual delete") {
  foreign_producer p;
  auto t = dm::managed_tensor::adopt(p.make());
  DLManagedTensorVersioned* raw = t.release();
  CHECK(t.empty());
  CHECK(t.try_view<right<float, 2>>().error().code() == dm::errc::null_pointer);
  CHECK(p.deleter_calls == 0);
  raw->deleter(raw);
  CHECK(p.deleter_calls == 1);
}

TEST_CASE("the deleter may run on another thread") {
  foreign_producer p;
  auto t = dm::managed_tensor::adopt(p.make());
  std::thread::id other;
  std::thread worker([&, owned = std::move(t)]() mutable {
    other = std::this_thread::get_id();
    owned.reset();
  });
  worker.join();
  CHECK(p.deleter_calls == 1);
  CHECK(p.deleter_thread == other);
  CHECK(p.deleter_thread != std::this_thread::get_id());
}

TEST_CASE("READ_ONLY refuses a mutable view: a const view works") {
  foreign_producer p;
  auto t = dm::managed_tensor::adopt(p.make(DLPackVersion{1, 3}, DLPACK_FLAG_BITMASK_READ_ONLY));
  CHECK(t.is_read_only());
  CHECK(t.try_view<right<float, 2>>().error().code() == dm::errc::read_only);
  CHECK(std::string(t.try_view<right<float, 2>>().error().what()) ==
        "view: the tensor is READ_ONLY; view it with a const element type");
  CHECK(t.view<right<const float, 2>>()[1, 1] == 4.f);
}

TEST_CASE("legacy tensors: read-only by default, writable on request, deleter once") {
  foreign_producer p;
  {
    auto t = dm::managed_tensor::adopt_legacy(p.make_legacy());
    CHECK(t.is_read_only());
    CHECK(t.try_view<right<float, 2>>().error().code() == dm::errc::read_only);
    // The refusal says why the tensor is READ_ONLY, and how to say it may be written.
    CHECK(std::string(t.try_view<right<float, 2>>().error().what()) ==
          "view: the tensor is READ_ONLY: a legacy DLPack tensor cannot say whether it may be written (if its producer "
          "allows writes, import it legacy_writable; C++: legacy_access::writable); or view it with a const element type");
    CHECK(t.view<right<const float, 2>>()[1, 2] == 5.f);
  }
  CHECK(p.deleter_calls == 1);
  {
    auto t = dm::managed_tensor::adopt_legacy(p.make_legacy(), dm::legacy_access::writable);
    t.view<right<float, 2>>()[0, 0] = 42.f;
  }
  CHECK(p.data[0] == 42.f);
  CHECK(p.deleter_calls == 2);
  CHECK(dm::managed_tensor::try_adopt_legacy(nullptr).error().code() == dm::errc::null_pointer);
}

TEST_CASE("to_managed_tensor → release → adopt → view: zero copy, owner destroyed once") {
  int destroyed = 0;
  std::vector<float> storage(6, 0.f);
  float* const data = storage.data();
  {
    right<float, 2> md(data, 2, 3);
    auto t = dm::to_managed_tensor(md, counted_owner(&destroyed, &storage));
    CHECK_FALSE(t.is_read_only());
    CHECK(t.tensor().data == data);
    DLManagedTensorVersioned* raw = t.release();
    auto back = dm::managed_tensor::adopt(raw);
    auto view = back.view<right<float, 2>>();
    view[1, 2] = 7.f;
    CHECK(md[1, 2] == 7.f);  // a write through one side is seen through the other
    md[0, 1] = 3.f;
    CHECK(view[0, 1] == 3.f);
    CHECK(destroyed == 0);
  }
  CHECK(destroyed == 1);
}

TEST_CASE("to_managed_tensor makes exactly one allocation") {
  std::vector<double> v(12, 1.0);
  std::mdspan<double, std::dextents<int, 2>> md(v.data(), 3, 4);
  const std::size_t before = dlpm_test::allocations_on_this_thread();
  auto t = dm::to_managed_tensor(md, std::move(v));
  const std::size_t after = dlpm_test::allocations_on_this_thread();
  CHECK(after - before == 1);
  auto shared = std::make_shared<int>(5);
  const std::size_t before2 = dlpm_test::allocations_on_this_thread();
  auto t2 = dm::to_managed_tensor(std::mdspan<int, std::extents<int, 1>>(shared.get()), std::shared_ptr<void>(shared));
  CHECK(dlpm_test::allocations_on_this_thread() - before2 == 1);
  CHECK(shared.use_count() == 2);
  t2.reset();
  CHECK(shared.use_count() == 1);
}

TEST_CASE("const element types export READ_ONLY: extra flags are kept") {
  const int buf[4] = {1, 2, 3, 4};
  auto t = dm::to_managed_tensor(std::mdspan<const int, std::dextents<int, 1>>(buf, 4), 0, DLPACK_FLAG_BITMASK_IS_COPIED);
  CHECK(t.is_read_only());
  CHECK(t.is_copied());
  CHECK(t.try_view<right<int, 1>>().error().code() == dm::errc::read_only);
}

TEST_CASE("exceptions mid-construction: nothing leaks, the owner is destroyed once") {
  int destroyed = 0;
  int dummy = 0;
  {
    counted_owner owner(&destroyed);
    owner.throw_on_move = true;
    std::mdspan<int, std::dextents<int, 1>> md(&dummy, 1);
    CHECK_THROWS_AS((void)dm::to_managed_tensor(md, std::move(owner)), std::runtime_error);
    auto r = dm::try_to_managed_tensor(md, std::move(owner));
    CHECK(r.error().code() == dm::errc::invalid_argument);
    CHECK(destroyed == 0);
  }
  CHECK(destroyed == 1);
  {
    counted_owner owner(&destroyed);
    std::mdspan<int, std::dextents<std::uint64_t, 1>> huge(&dummy, std::uint64_t{1} << 63);
    CHECK_THROWS_AS((void)dm::to_managed_tensor(huge, std::move(owner)), dm::dlpack_error);
    CHECK(dm::try_to_managed_tensor(huge, std::move(owner)).error().code() == dm::errc::extent_overflow);
  }
  CHECK(destroyed == 2);
}

TEST_CASE("to_legacy_managed_tensor and adopt_legacy round trip") {
  int destroyed = 0;
  std::vector<float> storage = {1, 2, 3, 4};
  float* data = storage.data();
  DLManagedTensor* legacy = dm::to_legacy_managed_tensor(std::mdspan<float, std::dextents<int, 2>>(data, 2, 2),
                                                         counted_owner(&destroyed, &storage));
  CHECK(legacy->dl_tensor.strides[0] == 2);
  {
    auto t = dm::managed_tensor::adopt_legacy(legacy, dm::legacy_access::writable);
    t.view<right<float, 2>>()[1, 1] = 9.f;
  }
  CHECK(data[3] == 9.f);
  CHECK(destroyed == 1);
}

TEST_CASE("versioned_to_legacy: ownership moves, READ_ONLY is refused unless allowed") {
  foreign_producer p;
  DLManagedTensorVersioned* read_only = p.make(DLPackVersion{1, 3}, DLPACK_FLAG_BITMASK_READ_ONLY);
  auto r = dm::versioned_to_legacy(read_only);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == dm::errc::read_only);
  CHECK(p.deleter_calls == 0);  // still the caller's
  read_only->deleter(read_only);
  CHECK(p.deleter_calls == 1);
  DLManagedTensorVersioned* m = p.make();
  DLManagedTensor* legacy = *dm::versioned_to_legacy(m);
  CHECK(legacy->dl_tensor.data == p.data);
  legacy->deleter(legacy);
  CHECK(p.deleter_calls == 2);
}

TEST_CASE("read_only_cause: a legacy import leaves as the legacy tensor it was") {
  foreign_producer p;
  DLManagedTensor* legacy = p.make_legacy();
  auto t = dm::managed_tensor::adopt_legacy(legacy);
  CHECK(t.is_read_only());
  CHECK(t.read_only_cause() == dm::read_only_cause::legacy_unknown);
  CHECK_FALSE(t.try_view<right<float, 2>>().has_value());  // unknown writability: no mutable view
  auto back = dm::versioned_to_legacy(t.get());
  REQUIRE(back.has_value());
  (void)t.release();  // now inside *back
  CHECK(*back == legacy);  // the producer's own tensor, no wrapper
  CHECK(p.deleter_calls == 0);
  legacy->deleter(legacy);
  CHECK(p.deleter_calls == 1);

  // A writable legacy import has no cause, and also comes back as itself.
  legacy = p.make_legacy();
  auto w = dm::managed_tensor::adopt_legacy(legacy, dm::legacy_access::writable);
  CHECK(w.read_only_cause() == dm::read_only_cause::none);
  CHECK(*dm::versioned_to_legacy(w.release()) == legacy);
  legacy->deleter(legacy);
  CHECK(p.deleter_calls == 2);
}

TEST_CASE("read_only_cause: a changed legacy import is wrapped, not unwrapped") {
  foreign_producer p;
  DLManagedTensor* legacy = p.make_legacy();
  DLManagedTensorVersioned* v = *dm::legacy_to_versioned(legacy, dm::legacy_access::read_only);
  v->dl_tensor.byte_offset = sizeof(float);  // describes other memory now: the original would lie
  auto out = dm::versioned_to_legacy(v);
  REQUIRE(out.has_value());
  CHECK(*out != legacy);
  CHECK((*out)->dl_tensor.byte_offset == sizeof(float));
  (*out)->deleter(*out);
  CHECK(p.deleter_calls == 1);  // once, through both wrappers
}

TEST_CASE("forbid_writes: READ_ONLY with the producer's reason, which decides the legacy export") {
  foreign_producer p;
  auto forbidden = dm::forbid_writes(p.make(), dm::read_only_cause::producer_forbids, "its producer says no");
  REQUIRE(forbidden.has_value());
  DLManagedTensorVersioned* f = *forbidden;
  CHECK((f->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK(f->dl_tensor.data == p.data);
  const char* reason = nullptr;
  CHECK(dm::read_only_cause_of(f, &reason) == dm::read_only_cause::producer_forbids);
  CHECK(std::string(reason) == "its producer says no");
  {
    auto viewed = dm::managed_tensor::adopt(f);  // a mutable view is refused with the reason
    CHECK(std::string(viewed.try_view<right<float, 2>>().error().what()) ==
          "view: the tensor is READ_ONLY because its producer says no; view it with a const element type");
    f = viewed.release();
  }
  auto refused = dm::versioned_to_legacy(f);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == dm::errc::read_only);
  CHECK(std::string(refused.error().what()) ==
        "the tensor is READ_ONLY because its producer says no, and a legacy DLManagedTensor cannot carry that flag");
  auto allowed = dm::versioned_to_legacy(f, true);  // the caller vouches for the consumer
  REQUIRE(allowed.has_value());
  (*allowed)->deleter(*allowed);
  CHECK(p.deleter_calls == 1);

  // legacy_unknown on a versioned tensor: the legacy export is allowed (wrapped).
  DLManagedTensorVersioned* u = *dm::forbid_writes(p.make(), dm::read_only_cause::legacy_unknown);
  CHECK(dm::read_only_cause_of(u) == dm::read_only_cause::legacy_unknown);
  DLManagedTensor* l = *dm::versioned_to_legacy(u);
  CHECK(l->dl_tensor.data == p.data);
  l->deleter(l);
  CHECK(p.deleter_calls == 2);

  // Anyone else's READ_ONLY flag is "flagged": refused with the message it always had.
  DLManagedTensorVersioned* flagged = p.make(DLPackVersion{1, 3}, DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK(dm::read_only_cause_of(flagged) == dm::read_only_cause::flagged);
  CHECK(std::string(dm::versioned_to_legacy(flagged).error().what()) ==
        "the tensor is READ_ONLY and a legacy DLManagedTensor cannot carry that flag");
  flagged->deleter(flagged);
  DLManagedTensorVersioned* writable = p.make();
  CHECK(dm::read_only_cause_of(writable) == dm::read_only_cause::none);
  writable->deleter(writable);
}

TEST_CASE("forbid_writes refuses what it cannot record, and the tensor stays the caller's") {
  foreign_producer p;
  DLManagedTensorVersioned* m = p.make();
  CHECK(dm::forbid_writes(m, dm::read_only_cause::flagged, "x").error().code() == dm::errc::invalid_argument);
  CHECK(dm::forbid_writes(m, dm::read_only_cause::none, "x").error().code() == dm::errc::invalid_argument);
  CHECK(dm::forbid_writes(m, dm::read_only_cause::producer_forbids, "").error().code() == dm::errc::invalid_argument);
  CHECK(dm::forbid_writes(m, dm::read_only_cause::producer_forbids).error().code() == dm::errc::invalid_argument);
  CHECK(dm::forbid_writes(nullptr, dm::read_only_cause::legacy_unknown).error().code() == dm::errc::null_pointer);
  DLManagedTensorVersioned* future = p.make(DLPackVersion{DLPACK_MAJOR_VERSION + 1, 0});
  CHECK(dm::forbid_writes(future, dm::read_only_cause::legacy_unknown).error().code() == dm::errc::version_mismatch);
  CHECK(p.deleter_calls == 0);
  m->deleter(m);
  future->deleter(future);
  CHECK(p.deleter_calls == 2);
  // A long reason is cut, not overrun.
  const std::string long_reason(500, 'r');
  DLManagedTensorVersioned* f = *dm::forbid_writes(p.make(), dm::read_only_cause::producer_forbids, long_reason.c_str());
  const char* kept = nullptr;
  (void)dm::read_only_cause_of(f, &kept);
  CHECK(std::string(kept) == long_reason.substr(0, 191));
  f->deleter(f);
  CHECK(p.deleter_calls == 3);
}

TEST_CASE("to_managed_tensor_copy makes a compact row-major copy with IS_COPIED") {
  int buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = i;
  using E = std::dextents<int, 2>;
  std::mdspan<int, E, std::layout_stride> every_other_column(buf, std::layout_stride::mapping(E(3, 2), std::array<int, 2>{4, 2}));
  auto t = dm::to_managed_tensor_copy(every_other_column);
  CHECK(t.is_copied());
  CHECK_FALSE(t.is_read_only());
  CHECK(t.tensor().data != buf);
  CHECK(t.tensor().strides[0] == 2);
  CHECK(t.tensor().strides[1] == 1);
  auto v = t.view<right<int, 2>>();
  CHECK(v[0, 0] == 0);
  CHECK(v[0, 1] == 2);
  CHECK(v[2, 1] == 10);
  bool flags[3] = {true, false, true};
  auto b = dm::to_managed_tensor_copy(std::mdspan<const bool, std::dextents<int, 1>>(flags, 3));
  CHECK(b.view<right<bool, 1>>()[2]);
  auto e = dm::to_managed_tensor_copy(std::mdspan<int, std::dextents<int, 2>>(buf, 0, 4));
  CHECK(e.tensor().data == nullptr);
  CHECK(e.view<right<int, 2>>().size() == 0);
}

namespace {
struct fp4_byte {  // an fp4 value stored in a whole byte
  std::uint8_t bits;
};
struct fp4_pair {  // two packed fp4 values in a byte
  std::uint8_t bits;
};
}  // namespace
template <>
struct dlpack_mdspan::dtype_traits<fp4_byte> {
  static constexpr DLDataType value{kDLFloat4_e2m1fn, 4, 1};
};
template <>
struct dlpack_mdspan::dtype_traits<fp4_pair> {
  static constexpr DLDataType value{kDLFloat4_e2m1fn, 4, 2};
};

TEST_CASE("sub-byte types: padded storage is flagged and viewable, packed and padded do not mix") {
  fp4_byte padded[4] = {};
  auto t = dm::to_managed_tensor(std::mdspan<fp4_byte, std::dextents<int, 1>>(padded, 4), 0);
  CHECK((t.flags() & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0);
  CHECK(t.view<right<fp4_byte, 1>>().data_handle() == padded);
  CHECK(t.try_view<right<fp4_pair, 1>>().error().code() == dm::errc::dtype_mismatch);
  fp4_pair packed[2] = {};
  auto p = dm::to_managed_tensor(std::mdspan<fp4_pair, std::dextents<int, 1>>(packed, 2), 0);
  CHECK((p.flags() & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) == 0);
  CHECK(p.view<right<fp4_pair, 1>>().size() == 2);
  // Padded storage claimed for a packed pair type: refused.
  DLManagedTensorVersioned* raw = p.release();
  raw->flags |= DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  auto back = dm::managed_tensor::adopt(raw);
  CHECK(back.try_view<right<fp4_pair, 1>>().error().code() == dm::errc::subbyte_not_viewable);
}

TEST_CASE_TEMPLATE("managed round trip with mutation for each dtype", T, bool, std::int8_t, std::uint16_t, std::int32_t,
                   std::int64_t, float, double, std::complex<float>, std::complex<double>) {
  auto storage = std::make_unique<T[]>(6);  // not std::vector: vector<bool> has no data()
  T* data = storage.get();
  auto t = dm::to_managed_tensor(std::mdspan<T, std::dextents<int, 2>, std::layout_left>(data, 2, 3), std::move(storage));
  auto back = dm::managed_tensor::adopt(t.release());
  auto left = back.template view<std::mdspan<T, std::dextents<int, 2>, std::layout_left>>();
  auto strided = back.template view<std::mdspan<const T, std::dextents<int, 2>, std::layout_stride>>();
  left[1, 2] = T(true);
  CHECK(strided[1, 2] == T(true));
  CHECK(&strided[1, 2] == data + 5);
}

TEST_CASE("managed round trip through the relaxed layout keeps the offset") {
  std::vector<int> storage(12);
  for (int i = 0; i < 12; ++i) storage[static_cast<std::size_t>(i)] = i;
  int* data = storage.data();
  using E = std::dextents<std::int64_t, 2>;
  using R = dm::layout_stride_relaxed;
  std::mdspan<int, E, R> reversed(data, R::mapping<E>(E(3, 4), std::array<std::int64_t, 2>{-4, 1}, 8));
  auto t = dm::to_managed_tensor(reversed, std::move(storage));
  CHECK(t.tensor().byte_offset == 8 * sizeof(int));
  auto back = dm::managed_tensor::adopt(t.release());
  auto v = back.view<std::mdspan<int, E, R>>();
  CHECK(v[0, 0] == 8);
  CHECK(v[2, 3] == 3);
  CHECK(back.try_view<std::mdspan<int, E, std::layout_stride>>().error().code() == dm::errc::non_positive_stride);
}

namespace {
DLManagedTensorVersioned* tensor_with_throwing_deleter() {
  auto* t = new DLManagedTensorVersioned{};
  t->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  t->deleter = [](DLManagedTensorVersioned* self) {
    delete self;
    throw std::runtime_error("boom from a C++ deleter");
  };
  return t;
}
}  // namespace

TEST_CASE("a deleter that throws ends the program with a message naming the exception") {
  // Destroying the owner, failing adoption and wrapping as legacy all call the deleter
  // through one noexcept path; none lets the exception unwind into the caller.
  auto destroy = [] {
    { auto owner = dm::managed_tensor::adopt(tensor_with_throwing_deleter()); }
    std::fprintf(stderr, "returned after the deleter threw\n");
  };
  auto failed_adoption = [] {
    auto* t = tensor_with_throwing_deleter();
    t->version.major = DLPACK_MAJOR_VERSION + 1;
    (void)dm::managed_tensor::try_adopt(t);
    std::fprintf(stderr, "returned after the deleter threw\n");
  };
  for (auto body : {+destroy, +failed_adoption}) {
    const dlpm_death d = dlpm_run_in_child(body);
    CHECK(d.signal == SIGABRT);
    const std::string err = d.err;
    CHECK(err.find("a DLPack tensor's deleter threw a C++ exception (std::runtime_error: boom from a C++ deleter)") !=
          std::string::npos);
    CHECK(err.find("returned after") == std::string::npos);
  }
}

namespace {
// A nothrow-movable owner (try_make_managed_tensor's requirement) counting its live
// destructions; `count` is NULL once moved from.
struct release_counter {
  int* count;
  explicit release_counter(int* c) noexcept : count(c) {}
  release_counter(release_counter&& o) noexcept : count(std::exchange(o.count, nullptr)) {}
  ~release_counter() {
    if (count != nullptr) ++*count;
  }
};

std::vector<std::int64_t> stored_strides(const dm::managed_tensor& t) {
  const DLTensor& d = t.tensor();
  return d.strides == nullptr ? std::vector<std::int64_t>{} : std::vector<std::int64_t>(d.strides, d.strides + d.ndim);
}

// An owner made from a source (the block_owner rule): it counts how often it is made and
// adds its value, which only the source carries, to `destroyed` when it is destroyed. It
// cannot be moved, so the block must make it in place.
struct sourced_owner {
  struct source {
    using block_owner = sourced_owner;
    int* made;
    int* destroyed;
    int value;
  };
  int* destroyed;
  int value;
  explicit sourced_owner(source&& s) noexcept : destroyed(s.destroyed), value(s.value) { ++*s.made; }
  sourced_owner(sourced_owner&&) = delete;
  ~sourced_owner() { *destroyed += value; }
};
}  // namespace

TEST_CASE("try_make_managed_tensor with order 'F': NULL strides become explicit column-major ones, one allocation") {
  float buf[24] = {0, 1, 2, 3, 4, 5};
  auto b = dlpm_test::tensor_builder::without_strides(buf, dlpm_test::f32, {2, 3});
  int released = 0;
  {
    const std::size_t before = dlpm_test::allocations_on_this_thread();
    auto t = dm::try_make_managed_tensor(b.get(), release_counter(&released), 0, 'F');
    REQUIRE(t.has_value());
    CHECK(dlpm_test::allocations_on_this_thread() - before == 1);
    b.shape[0] = 99;  // copied
    CHECK(t->tensor().shape[0] == 2);
    CHECK(stored_strides(*t) == std::vector<std::int64_t>{1, 2});
    CHECK(dm::is_f_contiguous(t->tensor()));
    CHECK_FALSE(dm::is_c_contiguous(t->tensor()));
    // buf[1 + 2 * 2]: column-major indexing of the same buffer
    CHECK(t->view<std::mdspan<const float, std::dextents<int, 2>, std::layout_left>>()[1, 2] == 5.f);
    CHECK(t->try_view<std::mdspan<const float, std::dextents<int, 2>>>().error().code() == dm::errc::non_compact_strides);
    CHECK(released == 0);
  }
  CHECK(released == 1);

  auto b3 = dlpm_test::tensor_builder::without_strides(buf, dlpm_test::f32, {2, 3, 4});
  auto f3 = dm::try_make_managed_tensor(b3.get(), release_counter(&released), 0, 'F');
  REQUIRE(f3.has_value());
  CHECK(stored_strides(*f3) == std::vector<std::int64_t>{1, 2, 6});
  // 'C' stores what the form without an order stores
  auto c3 = dm::try_make_managed_tensor(b3.get(), release_counter(&released), dm::flag_read_only, 'C');
  auto plain = dm::try_make_managed_tensor(b3.get(), release_counter(&released));
  REQUIRE(c3.has_value());
  REQUIRE(plain.has_value());
  CHECK(stored_strides(*c3) == std::vector<std::int64_t>{12, 4, 1});
  CHECK(stored_strides(*c3) == stored_strides(*plain));
  CHECK(c3->is_read_only());

  // rank 0: nothing to store
  auto b0 = dlpm_test::tensor_builder::without_strides(buf, dlpm_test::f32, {});
  auto f0 = dm::try_make_managed_tensor(b0.get(), release_counter(&released), 0, 'F');
  REQUIRE(f0.has_value());
  CHECK(f0->tensor().ndim == 0);
}

TEST_CASE("try_make_managed_tensor order: unknown orders, 0 without strides and strides of another layout are refused") {
  float buf[8] = {};
  int released = 0;
  release_counter kept(&released);
  auto refusal = [&](const DLTensor& t, char order) {
    auto made = dm::try_make_managed_tensor(t, std::move(kept), 0, order);
    CHECK(kept.count == &released);  // not moved from on failure
    return made.has_value() ? dm::error{} : made.error();
  };
  auto b = dlpm_test::tensor_builder::without_strides(buf, dlpm_test::f32, {2, 3});
  for (const char order : {'A', 'c', 'X', '\x7f'}) {
    const dm::error e = refusal(b.get(), order);
    CHECK(e.code() == dm::errc::invalid_argument);
    const std::string message = e.message().c_str();
    CHECK(message.find("'C'") != std::string::npos);
    CHECK(message.find("'F'") != std::string::npos);
  }
  // the order is checked before the description
  auto bad = dlpm_test::tensor_builder::without_strides(buf, dlpm_test::f32, {2, -3});
  CHECK(refusal(bad.get(), 'A').code() == dm::errc::invalid_argument);
  CHECK(refusal(bad.get(), 'F').code() == dm::errc::negative_extent);
  // 0 says nothing about NULL strides
  const dm::error zero = refusal(b.get(), 0);
  CHECK(zero.code() == dm::errc::invalid_argument);
  CHECK(std::string(zero.message().c_str()).find("'F'") != std::string::npos);

  // explicit strides: 0 keeps any valid ones, 'C' / 'F' must be that layout
  dlpm_test::tensor_builder padded(buf, dlpm_test::f32, {2, 3}, {4, 1});
  auto as_given = dm::try_make_managed_tensor(padded.get(), release_counter(&released), 0, 0);
  REQUIRE(as_given.has_value());
  CHECK(stored_strides(*as_given) == std::vector<std::int64_t>{4, 1});
  CHECK(refusal(padded.get(), 'C').code() == dm::errc::non_compact_strides);
  dlpm_test::tensor_builder column(buf, dlpm_test::f32, {2, 3}, {1, 2});
  CHECK(dm::try_make_managed_tensor(column.get(), release_counter(&released), 0, 'F').has_value());
  const dm::error wrong = refusal(column.get(), 'C');
  CHECK(wrong.code() == dm::errc::non_compact_strides);
  CHECK(std::string(wrong.message().c_str()).find("strides[1] = 2") != std::string::npos);
  // seven values named once held six: the extent read 0
  CHECK(std::string(wrong.message().c_str()).find("(its extent is 3)") != std::string::npos);
  dlpm_test::tensor_builder row(buf, dlpm_test::f32, {2, 3}, {3, 1});
  CHECK(refusal(row.get(), 'F').code() == dm::errc::non_compact_strides);
  CHECK(dm::try_make_managed_tensor(row.get(), release_counter(&released), 0, 'C').has_value());
  // extent-1 dimensions may carry any stride, an empty tensor is compact
  dlpm_test::tensor_builder one_row(buf, dlpm_test::f32, {1, 3}, {99, 1});
  CHECK(dm::try_make_managed_tensor(one_row.get(), release_counter(&released), 0, 'F').has_value());
  dlpm_test::tensor_builder empty(nullptr, dlpm_test::f32, {0, 3}, {5, 7});
  CHECK(dm::try_make_managed_tensor(empty.get(), release_counter(&released), 0, 'F').has_value());
  CHECK(released == 4);  // the four temporaries made above (as_given lives on), none of the refusals
}

TEST_CASE("try_make_managed_tensor: an empty tensor leaves with its order's compact strides, whatever it was given") {
  constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  int released = 0;
  // PyTorch's from_dlpack overflows on (INT64_MIN, INT64_MAX) and deletes the tensor twice
  dlpm_test::tensor_builder extreme(nullptr, dlpm_test::f32, {0, 5}, {lo, hi});
  auto as_given = dm::try_make_managed_tensor(extreme.get(), release_counter(&released));
  REQUIRE(as_given.has_value());
  CHECK(stored_strides(*as_given) == std::vector<std::int64_t>{5, 1});
  auto zero = dm::try_make_managed_tensor(extreme.get(), release_counter(&released), 0, 0);
  REQUIRE(zero.has_value());
  CHECK(stored_strides(*zero) == std::vector<std::int64_t>{5, 1});
  dlpm_test::tensor_builder middle(nullptr, dlpm_test::f32, {3, 0, 4}, {hi, lo, -7});
  auto c = dm::try_make_managed_tensor(middle.get(), release_counter(&released), 0, 'C');
  auto f = dm::try_make_managed_tensor(middle.get(), release_counter(&released), 0, 'F');
  REQUIRE((c.has_value() && f.has_value()));
  CHECK(stored_strides(*c) == std::vector<std::int64_t>{0, 4, 1});
  CHECK(stored_strides(*f) == std::vector<std::int64_t>{1, 3, 0});
  // a non-empty tensor's strides stay as given, an extent-1 dimension's included
  float buf[6] = {};
  dlpm_test::tensor_builder reversed(buf + 5, dlpm_test::f32, {2, 1, 3}, {-3, 99, -1});
  auto kept = dm::try_make_managed_tensor(reversed.get(), release_counter(&released));
  REQUIRE(kept.has_value());
  CHECK(stored_strides(*kept) == std::vector<std::int64_t>{-3, 99, -1});
}

TEST_CASE("try_make_managed_tensor order 'F': an overflowing count is refused as for 'C', empty tensors saturate") {
  float buf[1] = {};
  int released = 0;
  constexpr std::int64_t p32 = std::int64_t{1} << 32, p40 = std::int64_t{1} << 40;
  auto big = dlpm_test::tensor_builder::without_strides(buf, dlpm_test::f32, {p32, p32});
  release_counter kept(&released);
  auto c = dm::try_make_managed_tensor(big.get(), std::move(kept), 0, 'C');
  auto f = dm::try_make_managed_tensor(big.get(), std::move(kept), 0, 'F');
  auto plain = dm::try_make_managed_tensor(big.get(), std::move(kept));
  REQUIRE_FALSE(c.has_value());
  REQUIRE_FALSE(f.has_value());
  REQUIRE_FALSE(plain.has_value());
  CHECK(f.error().code() == c.error().code());
  CHECK(plain.error().code() == c.error().code());
  CHECK(kept.count == &released);

  auto outer = dlpm_test::tensor_builder::without_strides(nullptr, dlpm_test::f32, {p40, p40, 0});
  auto fo = dm::try_make_managed_tensor(outer.get(), release_counter(&released), 0, 'F');
  REQUIRE(fo.has_value());
  CHECK(stored_strides(*fo) == std::vector<std::int64_t>{1, p40, std::numeric_limits<std::int64_t>::max()});
  auto inner = dlpm_test::tensor_builder::without_strides(nullptr, dlpm_test::f32, {0, p40, p40});
  auto ci = dm::try_make_managed_tensor(inner.get(), release_counter(&released), 0, 'C');
  REQUIRE(ci.has_value());
  CHECK(stored_strides(*ci) == std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max(), p40, 1});
  auto fi = dm::try_make_managed_tensor(inner.get(), release_counter(&released), 0, 'F');
  REQUIRE(fi.has_value());
  CHECK(stored_strides(*fi) == std::vector<std::int64_t>{1, 0, 0});
}

TEST_CASE("try_make_managed_tensor with an owner source (block_owner): the owner is made in the block, once, and only on success") {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  int made = 0, destroyed = 0;
  dlpm_test::tensor_builder row(buf, dlpm_test::f32, {2, 3}, {3, 1});
  {
    const std::size_t before = dlpm_test::allocations_on_this_thread();
    auto t = dm::try_make_managed_tensor(row.get(), sourced_owner::source{&made, &destroyed, 7});
    REQUIRE(t.has_value());
    CHECK(dlpm_test::allocations_on_this_thread() - before == 1);  // the owner is in the block
    CHECK(made == 1);
    CHECK(destroyed == 0);
    CHECK(t->tensor().data == buf);
    CHECK(t->view<std::mdspan<const float, std::dextents<int, 2>>>()[1, 2] == 5.f);
  }
  CHECK(destroyed == 7);  // destroyed once, with the value the source carried
  {
    auto t = dm::try_make_managed_tensor(row.get(), sourced_owner::source{&made, &destroyed, 100}, 0, 'C');
    REQUIRE(t.has_value());
    CHECK(made == 2);
    CHECK(stored_strides(*t) == std::vector<std::int64_t>{3, 1});
    DLManagedTensorVersioned* released = t->release();  // the deleter destroys the owner
    released->deleter(released);
  }
  CHECK(destroyed == 107);
  // A refusal, of the description or of the order, makes no owner.
  dlpm_test::tensor_builder negative(buf, dlpm_test::f32, {2, -3}, {3, 1});
  CHECK(dm::try_make_managed_tensor(negative.get(), sourced_owner::source{&made, &destroyed, 1000}).error().code() ==
        dm::errc::negative_extent);
  CHECK(dm::try_make_managed_tensor(row.get(), sourced_owner::source{&made, &destroyed, 1000}, 0, 'F').error().code() ==
        dm::errc::non_compact_strides);
  CHECK(made == 2);
  CHECK(destroyed == 107);
}

TEST_CASE("a refusal that names a producer's reason stays readable after the tensor goes") {
  // versioned_to_legacy names forbid_writes' reason; the error keeps it as a pointer, so the
  // reason is kept for the process (it was the tensor's own copy: freed with it).
  std::vector<float> buffer(4, 1.0f);
  const std::mdspan<float, std::dextents<int, 1>> view(buffer.data(), 4);
  auto owned = dm::to_managed_tensor(view, std::move(buffer));
  auto forbidden = dm::forbid_writes(owned.release(), dm::read_only_cause::producer_forbids, "a test forbids writes");
  REQUIRE(forbidden.has_value());
  DLManagedTensorVersioned* v = *forbidden;
  const auto refused = dm::versioned_to_legacy(v);
  REQUIRE_FALSE(refused.has_value());
  v->deleter(v);  // still the caller's on failure: let go before the message is read
  CHECK(std::string(refused.error().what().c_str()) ==
        "the tensor is READ_ONLY because a test forbids writes, and a legacy DLManagedTensor cannot carry that flag");
}

TEST_CASE("move-assigning a managed_tensor that lives inside the old tensor's owner") {
  // The old tensor's deleter destroys `other`: its tensor must be taken first.
  struct holder {
    std::vector<float> data;
    dm::managed_tensor inner;
  };
  auto h = std::make_unique<holder>();
  h->data.assign(4, 1.0f);
  std::vector<float> second(4, 2.0f);
  const std::mdspan<float, std::dextents<int, 1>> second_view(second.data(), 4);
  h->inner = dm::to_managed_tensor(second_view, std::move(second));
  holder* raw = h.get();
  const std::mdspan<float, std::dextents<int, 1>> first_view(raw->data.data(), 4);
  auto outer = dm::to_managed_tensor(first_view, std::shared_ptr<holder>(std::move(h)));
  outer = std::move(raw->inner);  // destroys *raw
  REQUIRE_FALSE(outer.empty());
  CHECK(outer.get()->dl_tensor.ndim == 1);
  CHECK(static_cast<const float*>(outer.get()->dl_tensor.data)[3] == 2.0f);
}

TEST_CASE("an over-aligned owner is placed at its alignment") {
  struct alignas(256) big_owner {
    int x = 0;
  };
  float a[6] = {};
  std::int64_t shape[2] = {2, 3};
  const DLTensor d{a, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  auto made = dm::try_make_managed_tensor(d, big_owner{});
  REQUIRE(made.has_value());
  CHECK(reinterpret_cast<std::uintptr_t>(made->get()->manager_ctx) % 256 == 0);
  const std::mdspan<float, std::dextents<int, 2>> m(a, 2, 3);
  auto exported = dm::to_managed_tensor(m, big_owner{});
  CHECK(reinterpret_cast<std::uintptr_t>(exported.get()->manager_ctx) % 256 == 0);
}
