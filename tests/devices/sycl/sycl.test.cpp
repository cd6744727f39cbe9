// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// sycl.hpp against a real SYCL runtime, through dpctl's C interface: USM allocated in the
// default context of the first root device's platform (device, shared and host USM), USM of
// a context of our own (the "foreign context" dpctl's rules refuse), and memory that is not
// USM at all. CI runs it on Intel's OpenCL CPU device from PyPI (scripts/install-deps),
// in header form and with `import dlpack_mdspan;` beside the include.
#include <doctest/doctest.h>

#include <dlpack_mdspan/sycl.hpp>

#include <syclinterface/dpctl_sycl_context_interface.h>
#include <syclinterface/dpctl_sycl_event_interface.h>
#include <syclinterface/dpctl_sycl_queue_interface.h>
#include <syclinterface/dpctl_sycl_usm_interface.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <mdspan>
#include <string>
#include <string_view>

#ifdef DLPM_USE_MODULE
// sycl.hpp brings the header form; importing the module as well must change nothing.
import dlpack_mdspan;
#endif

namespace dm = dlpack_mdspan;

namespace {

bool has_text(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

// A queue on root device 0, in its platform's default context or in a context of its own.
class queue {
 public:
  explicit queue(bool default_context) {
    DPCTLDeviceVectorRef devices = DPCTLDeviceMgr_GetDevices(static_cast<int>(DPCTL_ALL_BACKENDS) | static_cast<int>(DPCTL_ALL));
    REQUIRE(devices != nullptr);
    REQUIRE(DPCTLDeviceVector_Size(devices) > 0);
    device_ = DPCTLDeviceVector_GetAt(devices, 0);
    DPCTLDeviceVector_Delete(devices);
    if (default_context) {
      DPCTLSyclPlatformRef platform = DPCTLDevice_GetPlatform(device_);
      context_ = DPCTLPlatform_GetDefaultContext(platform);
      DPCTLPlatform_Delete(platform);
    } else {
      context_ = DPCTLContext_Create(device_, nullptr, 0);
    }
    REQUIRE(context_ != nullptr);
    queue_ = DPCTLQueue_Create(context_, device_, nullptr, 0);
    REQUIRE(queue_ != nullptr);
  }
  ~queue() {
    DPCTLQueue_Delete(queue_);
    DPCTLContext_Delete(context_);
    DPCTLDevice_Delete(device_);
  }
  queue(const queue&) = delete;
  queue& operator=(const queue&) = delete;

  // n floats of USM of `kind`, freed with the queue's context when the holder goes.
  struct usm {
    float* p;
    DPCTLSyclQueueRef q;
    usm(float* p_, DPCTLSyclQueueRef q_) : p(p_), q(q_) {}
    usm(const usm&) = delete;
    usm& operator=(const usm&) = delete;
    ~usm() {
      if (p) DPCTLfree_with_queue(reinterpret_cast<DPCTLSyclUSMRef>(p), q);
    }
  };
  [[nodiscard]] usm allocate(dm::usm_kind kind, std::size_t n) const {
    const std::size_t bytes = n * sizeof(float);
    DPCTLSyclUSMRef r = kind == dm::usm_kind::device   ? DPCTLmalloc_device(bytes, queue_)
                        : kind == dm::usm_kind::shared ? DPCTLmalloc_shared(bytes, queue_)
                                                       : DPCTLmalloc_host(bytes, queue_);
    REQUIRE(r != nullptr);
    return usm(reinterpret_cast<float*>(r), queue_);
  }
  [[nodiscard]] DPCTLSyclQueueRef get() const noexcept { return queue_; }
  void copy(void* to, const void* from, std::size_t bytes) const {
    DPCTLSyclEventRef e = DPCTLQueue_Memcpy(queue_, to, from, bytes);
    REQUIRE(e != nullptr);
    DPCTLEvent_Wait(e);
    DPCTLEvent_Delete(e);
  }

 private:
  DPCTLSyclDeviceRef device_ = nullptr;
  DPCTLSyclContextRef context_ = nullptr;
  DPCTLSyclQueueRef queue_ = nullptr;
};

constexpr std::array<std::int64_t, 2> shape{2, 3};

DLTensor usm_tensor(void* data, std::int32_t device_id) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLOneAPI, device_id};
  t.ndim = 2;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = const_cast<std::int64_t*>(shape.data());
  t.strides = nullptr;
  return t;
}

using host_view = std::mdspan<const float, std::dextents<int, 2>>;
using usm_view = dm::usm_mdspan<float, std::dextents<int, 2>>;

}  // namespace

TEST_CASE("SYCL sees a root device, and dpctl's order gives the ids") {
  REQUIRE(dm::usm_root_device_count() >= 1);
  MESSAGE("SYCL root devices: " << dm::usm_root_device_count());
}

TEST_CASE("usm_allocation_of: every USM kind of the default context is kDLOneAPI on its root device") {
  const queue q(true);
  for (const dm::usm_kind kind : {dm::usm_kind::device, dm::usm_kind::shared, dm::usm_kind::host}) {
    CAPTURE(dm::usm_kind_name(kind));
    const auto memory = q.allocate(kind, 6);
    const auto where = dm::usm_allocation_of(memory.p + 1);  // an interior pointer is the same allocation
    REQUIRE_MESSAGE(where.has_value(), where.error().what());
    CHECK(where->device.device_type == kDLOneAPI);
    CHECK(where->device.device_id == 0);
    CHECK(where->kind == kind);
  }
}

TEST_CASE("export: a view of shared USM becomes {kDLOneAPI, 0}, through the USM accessor or any other") {
  const queue q(true);
  const auto memory = q.allocate(dm::usm_kind::shared, 6);
  const std::mdspan<float, std::dextents<int, 2>> plain(memory.p, 2, 3);
  const auto found = dm::try_to_dlpack_tensor_on_usm_device(plain);
  REQUIRE(found.has_value());
  CHECK(found->device().device_type == kDLOneAPI);
  CHECK(found->device().device_id == 0);

  const usm_view typed(memory.p, std::layout_right::mapping(std::dextents<int, 2>(2, 3)), dm::usm_accessor<float>(0));
  const auto labelled = dm::to_dlpack_tensor(typed);  // the accessor's device, no runtime call
  CHECK(labelled.device().device_type == kDLOneAPI);
  CHECK(labelled.get().data == memory.p);
}

TEST_CASE("export refuses USM of a context that is not the platform's default, and memory that is not USM") {
  const queue foreign(false);
  const auto memory = foreign.allocate(dm::usm_kind::shared, 6);
  const auto where = dm::usm_allocation_of(memory.p);
  REQUIRE_FALSE(where.has_value());
  CHECK(where.error().code() == dm::errc::device_mismatch);
  CHECK(has_text(where.error().what(), "not a USM allocation of any SYCL platform's default context"));

  std::array<float, 6> stack{};
  const std::mdspan<float, std::dextents<int, 2>> on_stack(stack.data(), 2, 3);
  const auto refused = dm::try_to_dlpack_tensor_on_usm_device(on_stack);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == dm::errc::device_mismatch);

  CHECK(dm::usm_allocation_of(nullptr).error().code() == dm::errc::null_pointer);
}

TEST_CASE("import into a USM view keeps the pointer and the device id") {
  const queue q(true);
  const auto memory = q.allocate(dm::usm_kind::device, 6);
  const DLTensor t = usm_tensor(memory.p, 0);
  const auto view = dm::try_to_mdspan_on_usm_device<usm_view>(t);
  REQUIRE_MESSAGE(view.has_value(), view.error().what());
  CHECK(view->data_handle() == memory.p);
  CHECK(view->extent(0) == 2);
  CHECK(view->extent(1) == 3);
  CHECK(view->accessor().dlpack_device().device_id == 0);
  // Back out again: the same device.
  CHECK(dm::to_dlpack_tensor(*view).device().device_type == kDLOneAPI);
}

TEST_CASE("import refuses a device id that names no root device") {
  const queue q(true);
  const auto memory = q.allocate(dm::usm_kind::shared, 6);
  const DLTensor t = usm_tensor(memory.p, dm::usm_root_device_count());
  const auto view = dm::try_to_mdspan_on_usm_device<usm_view>(t);
  REQUIRE_FALSE(view.has_value());
  CHECK(view.error().code() == dm::errc::device_id_mismatch);
  CHECK(has_text(view.error().what(), "names no SYCL root device"));
}

TEST_CASE("import refuses USM of a foreign context, and host memory labelled kDLOneAPI") {
  const queue foreign(false);
  const auto memory = foreign.allocate(dm::usm_kind::shared, 6);
  const auto from_foreign = dm::try_to_mdspan_on_usm_device<usm_view>(usm_tensor(memory.p, 0));
  REQUIRE_FALSE(from_foreign.has_value());
  CHECK(from_foreign.error().code() == dm::errc::device_mismatch);
  CHECK(has_text(from_foreign.error().what(), "not a USM allocation of the default context"));

  std::array<float, 6> stack{};
  const auto from_stack = dm::check_usm_tensor(usm_tensor(stack.data(), 0));
  REQUIRE_FALSE(from_stack.has_value());
  CHECK(from_stack.error().code() == dm::errc::device_mismatch);
}

TEST_CASE("host views: host and shared USM are read in place, device USM only where the caller allows it") {
  const queue q(true);
  const std::array<float, 6> values{1, 2, 3, 4, 5, 6};
  for (const dm::usm_kind kind : {dm::usm_kind::host, dm::usm_kind::shared, dm::usm_kind::device}) {
    CAPTURE(dm::usm_kind_name(kind));
    const auto memory = q.allocate(kind, 6);
    q.copy(memory.p, values.data(), sizeof values);
    const DLTensor t = usm_tensor(memory.p, 0);
    const auto strict = dm::try_to_host_mdspan_from_usm<host_view>(t);
    if (kind == dm::usm_kind::device) {
      REQUIRE_FALSE(strict.has_value());
      CHECK(strict.error().code() == dm::errc::device_mismatch);
      CHECK(has_text(strict.error().what(), "device USM"));
      CHECK(has_text(strict.error().what(), "usm_host_access::cpu_device_usm"));
    } else {
      REQUIRE_MESSAGE(strict.has_value(), strict.error().what());
      CHECK(strict->data_handle() == memory.p);
      CHECK((*strict)[1, 2] == 6.0f);
    }
    // The OpenCL CPU device CI runs on: device USM is host memory there, by the caller's leave.
    const auto allowed = dm::try_to_host_mdspan_from_usm<host_view>(t, {}, dm::usm_host_access::cpu_device_usm);
    REQUIRE_MESSAGE(allowed.has_value(), allowed.error().what());
    CHECK(allowed->data_handle() == memory.p);
    CHECK((*allowed)[0, 1] == 2.0f);
  }
}

TEST_CASE("host views: plain host tensors pass through, and the requirements' device rules judge the kDLOneAPI device") {
  std::array<float, 6> host{};
  DLTensor cpu = usm_tensor(host.data(), 0);
  cpu.device = DLDevice{kDLCPU, 0};
  CHECK(dm::try_to_host_mdspan_from_usm<host_view>(cpu).has_value());

  const queue q(true);
  const auto memory = q.allocate(dm::usm_kind::shared, 6);
  dm::tensor_requirements on_other;
  on_other.device_id = 1;
  const auto refused = dm::try_to_host_mdspan_from_usm<host_view>(usm_tensor(memory.p, 0), on_other);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == dm::errc::device_id_mismatch);
  dm::tensor_requirements on_zero;
  on_zero.device_id = 0;
  CHECK(dm::try_to_host_mdspan_from_usm<host_view>(usm_tensor(memory.p, 0), on_zero).has_value());
  // A device list judges the tensor's own device: kDLOneAPI, not the host view's kDLCPU.
  const std::int32_t cpu_only[] = {kDLCPU};
  dm::tensor_requirements host_memory_only;
  host_memory_only.device_types = cpu_only;
  host_memory_only.num_device_types = 1;
  const auto listed = dm::try_to_host_mdspan_from_usm<host_view>(usm_tensor(memory.p, 0), host_memory_only);
  REQUIRE_FALSE(listed.has_value());
  CHECK(listed.error().code() == dm::errc::device_mismatch);
  const std::int32_t one_api[] = {kDLOneAPI};
  dm::tensor_requirements usm_only;
  usm_only.device_types = one_api;
  usm_only.num_device_types = 1;
  CHECK(dm::try_to_host_mdspan_from_usm<host_view>(usm_tensor(memory.p, 0), usm_only).has_value());
}

TEST_CASE("an empty kDLOneAPI tensor with NULL data asks the runtime nothing") {
  const std::array<std::int64_t, 2> empty_shape{0, 3};
  DLTensor t = usm_tensor(nullptr, 0);
  t.shape = const_cast<std::int64_t*>(empty_shape.data());
  const auto where = dm::check_usm_tensor(t);
  REQUIRE(where.has_value());
  CHECK(where->kind == dm::usm_kind::none);
  CHECK(dm::try_to_mdspan_on_usm_device<usm_view>(t).has_value());
}

TEST_CASE("the throwing forms throw dlpack_error with the same message") {
  std::array<float, 6> stack{};
  const DLTensor t = usm_tensor(stack.data(), 0);
  CHECK_THROWS_AS((void)dm::to_mdspan_on_usm_device<usm_view>(t), dm::dlpack_error);
  CHECK_THROWS_AS((void)dm::to_host_mdspan_from_usm<host_view>(t), dm::dlpack_error);
}

TEST_CASE("copies: every USM kind to the host, strided too, and host memory to device USM that exports as the device") {
  const queue q(true);
  const std::array<float, 6> values{1, 2, 3, 4, 5, 6};
  for (const dm::usm_kind kind : {dm::usm_kind::host, dm::usm_kind::shared, dm::usm_kind::device}) {
    CAPTURE(dm::usm_kind_name(kind));
    const auto memory = q.allocate(kind, 6);
    q.copy(memory.p, values.data(), sizeof values);
    DLTensor t = usm_tensor(memory.p, 0);
    const auto copy = dm::try_copy_usm_to_host(t, dm::flag_read_only);
    REQUIRE_MESSAGE(copy.has_value(), copy.error().what());
    CHECK(copy->tensor().device.device_type == kDLCPU);
    CHECK(copy->flags() == dm::flag_is_copied);
    CHECK(std::memcmp(copy->tensor().data, values.data(), sizeof values) == 0);
    // The transpose: staged and compacted on the host.
    const std::int64_t strides[] = {1, 3};
    const std::int64_t transposed_shape[] = {3, 2};
    t.shape = const_cast<std::int64_t*>(transposed_shape);
    t.strides = const_cast<std::int64_t*>(strides);
    const auto transposed = dm::try_copy_usm_to_host(t, 0, q.get());
    REQUIRE_MESSAGE(transposed.has_value(), transposed.error().what());
    const auto* out = static_cast<const float*>(transposed->tensor().data);
    CHECK((out[0] == 1 && out[1] == 4 && out[2] == 2 && out[3] == 5 && out[4] == 3 && out[5] == 6));
  }
  DLTensor host = usm_tensor(const_cast<float*>(values.data()), 0);
  host.device = DLDevice{kDLCPU, 0};
  const auto on_device = dm::try_copy_host_to_usm_device(host, 0, 0);
  REQUIRE_MESSAGE(on_device.has_value(), on_device.error().what());
  CHECK(on_device->flags() == dm::flag_is_copied);
  const auto where = dm::check_usm_tensor(on_device->tensor());
  REQUIRE_MESSAGE(where.has_value(), where.error().what());
  CHECK(where->kind == dm::usm_kind::device);
  std::array<float, 6> back{};
  q.copy(back.data(), on_device->tensor().data, sizeof back);
  CHECK(back == values);
}

TEST_CASE("copies refuse what is not USM of the device, and device ids that name no root device") {
  const queue foreign(false);
  const auto memory = foreign.allocate(dm::usm_kind::shared, 6);
  const auto refused = dm::try_copy_usm_to_host(usm_tensor(memory.p, 0), 0);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == dm::errc::device_mismatch);
  std::array<float, 6> values{};
  DLTensor host = usm_tensor(values.data(), 0);
  host.device = DLDevice{kDLCPU, 0};
  const auto nowhere = dm::try_copy_host_to_usm_device(host, 0, 99);
  REQUIRE_FALSE(nowhere.has_value());
  CHECK(nowhere.error().code() == dm::errc::device_id_mismatch);
  const auto not_host = dm::try_copy_host_to_usm_device(usm_tensor(memory.p, 0), 0, 0);
  REQUIRE_FALSE(not_host.has_value());
  CHECK(not_host.error().code() == dm::errc::device_mismatch);
}
