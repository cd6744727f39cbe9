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
  CHECK(t.view<right<const float, 2>>()[1, 1] == 4.f);
}

TEST_CASE("legacy tensors: read-only by default, writable on request, deleter once") {
  foreign_producer p;
  {
    auto t = dm::managed_tensor::adopt_legacy(p.make_legacy());
    CHECK(t.is_read_only());
    CHECK(t.try_view<right<float, 2>>().error().code() == dm::errc::read_only);
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
