// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/cuda.hpp on the host, no GPU and no cudart needed: the CUDA element types'
// dtypes, the device accessors (what export reports, what import accepts), and the
// sub-byte packed/padded rules through managed tensors. "Device" memory here is host
// memory labelled with an explicit DLDevice, which is all the conversion code looks at.
//
// Built with the project compiler (C++23, header and module form) and with g++ -std=c++20.
#include <doctest/doctest.h>

#include <dlpack_mdspan/cuda.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#if __has_include(<mdspan>)
#include <mdspan>
#endif

#include "support/tensor_builder.hpp"

#ifdef DLPM_USE_MODULE
// cuda.hpp brings the header form; importing the module as well must change nothing.
import dlpack_mdspan;
#endif

#if defined(__cpp_lib_mdspan)
#define DLPM_HAVE_STD_MDSPAN 1
#else
#define DLPM_HAVE_STD_MDSPAN 0
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::tensor_builder;

namespace {

using E2 = cuda::std::dextents<int, 2>;

bool has_text(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

template <class T>
void check_dtype(const char* name, int code, int bits, int lanes) {
  INFO(name);
  constexpr DLDataType d = dm::dtype_v<T>;
  CHECK(int{d.code} == code);
  CHECK(int{d.bits} == bits);
  CHECK(int{d.lanes} == lanes);
}
#define CHECK_DTYPE(T, code, bits, lanes) check_dtype<T>(#T, code, bits, lanes)

// Whether cuda_memory_accessor<_, Memory> names a type: its constraint admits CUDA kinds only.
template <DLDeviceType Memory>
concept is_cuda_memory_kind = requires { typename dm::cuda_memory_accessor<float, Memory>; };

// A foreign producer's managed tensor over `data`, rank 1, with the dtype and flags we
// choose: for the pairings our own exports never produce.
struct foreign_tensor {
  DLManagedTensorVersioned managed{};
  std::int64_t shape[1] = {};
  std::int64_t strides[1] = {1};
  int deleter_calls = 0;

  foreign_tensor(void* data, DLDataType dtype, std::int64_t n, std::uint64_t flags) {
    shape[0] = n;
    managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<foreign_tensor*>(self->manager_ctx)->deleter_calls; };
    managed.flags = flags;
    managed.dl_tensor.data = data;
    managed.dl_tensor.device = DLDevice{kDLCUDA, 0};
    managed.dl_tensor.ndim = 1;
    managed.dl_tensor.dtype = dtype;
    managed.dl_tensor.shape = shape;
    managed.dl_tensor.strides = strides;
  }
};

}  // namespace

TEST_CASE("CUDA scalar floats have their DLPack dtypes") {
  CHECK_DTYPE(__half, kDLFloat, 16, 1);
  CHECK_DTYPE(__nv_bfloat16, kDLBfloat, 16, 1);
  CHECK_DTYPE(__nv_fp8_e4m3, kDLFloat8_e4m3fn, 8, 1);
  CHECK_DTYPE(__nv_fp8_e5m2, kDLFloat8_e5m2, 8, 1);
  CHECK_DTYPE(__nv_fp8_e8m0, kDLFloat8_e8m0fnu, 8, 1);
  CHECK_DTYPE(__nv_fp6_e2m3, kDLFloat6_e2m3fn, 6, 1);
  CHECK_DTYPE(__nv_fp6_e3m2, kDLFloat6_e3m2fn, 6, 1);
  CHECK_DTYPE(__nv_fp4_e2m1, kDLFloat4_e2m1fn, 4, 1);
  // cv-qualifiers are stripped, as for built-in types.
  CHECK_DTYPE(const __half, kDLFloat, 16, 1);
}

TEST_CASE("CUDA pairs and quads of narrow floats have lanes, packed or padded as their size says") {
  CHECK_DTYPE(__half2, kDLFloat, 16, 2);
  CHECK_DTYPE(__nv_bfloat162, kDLBfloat, 16, 2);
  CHECK_DTYPE(__nv_fp8x2_e4m3, kDLFloat8_e4m3fn, 8, 2);
  CHECK_DTYPE(__nv_fp8x4_e4m3, kDLFloat8_e4m3fn, 8, 4);
  CHECK_DTYPE(__nv_fp8x2_e5m2, kDLFloat8_e5m2, 8, 2);
  CHECK_DTYPE(__nv_fp8x4_e5m2, kDLFloat8_e5m2, 8, 4);
  CHECK_DTYPE(__nv_fp8x2_e8m0, kDLFloat8_e8m0fnu, 8, 2);
  CHECK_DTYPE(__nv_fp8x4_e8m0, kDLFloat8_e8m0fnu, 8, 4);
  CHECK_DTYPE(__nv_fp6x2_e2m3, kDLFloat6_e2m3fn, 6, 2);
  CHECK_DTYPE(__nv_fp6x4_e2m3, kDLFloat6_e2m3fn, 6, 4);
  CHECK_DTYPE(__nv_fp6x2_e3m2, kDLFloat6_e3m2fn, 6, 2);
  CHECK_DTYPE(__nv_fp6x4_e3m2, kDLFloat6_e3m2fn, 6, 4);
  CHECK_DTYPE(__nv_fp4x2_e2m1, kDLFloat4_e2m1fn, 4, 2);
  CHECK_DTYPE(__nv_fp4x4_e2m1, kDLFloat4_e2m1fn, 4, 4);

  // What the registrations rest on: fp4x2 is one byte (packed, like PyTorch's
  // float4_e2m1fn_x2), fp4x4 two; fp6 keeps a byte per value.
  CHECK(sizeof(__nv_fp4x2_e2m1) == 1);
  CHECK(sizeof(__nv_fp4x4_e2m1) == 2);
  CHECK(sizeof(__nv_fp6x2_e2m3) == 2);
  CHECK(sizeof(__nv_fp6x4_e3m2) == 4);
}

TEST_CASE("vector_types.h vectors of 2 and 4 lanes take the scalar's code and bits") {
  CHECK_DTYPE(char2, kDLInt, 8, 2);
  CHECK_DTYPE(char4, kDLInt, 8, 4);
  CHECK_DTYPE(uchar2, kDLUInt, 8, 2);
  CHECK_DTYPE(uchar4, kDLUInt, 8, 4);
  CHECK_DTYPE(short2, kDLInt, 16, 2);
  CHECK_DTYPE(short4, kDLInt, 16, 4);
  CHECK_DTYPE(ushort2, kDLUInt, 16, 2);
  CHECK_DTYPE(ushort4, kDLUInt, 16, 4);
  CHECK_DTYPE(int2, kDLInt, 32, 2);
  CHECK_DTYPE(int4, kDLInt, 32, 4);
  CHECK_DTYPE(uint2, kDLUInt, 32, 2);
  CHECK_DTYPE(uint4, kDLUInt, 32, 4);
  CHECK_DTYPE(long2, kDLInt, static_cast<int>(sizeof(long) * 8), 2);
  CHECK_DTYPE(ulong2, kDLUInt, static_cast<int>(sizeof(long) * 8), 2);
  CHECK_DTYPE(longlong2, kDLInt, 64, 2);
  CHECK_DTYPE(ulonglong2, kDLUInt, 64, 2);
  CHECK_DTYPE(float2, kDLFloat, 32, 2);
  CHECK_DTYPE(float4, kDLFloat, 32, 4);
  CHECK_DTYPE(double2, kDLFloat, 64, 2);
#if CUDART_VERSION >= 13000
  CHECK_DTYPE(long4_16a, kDLInt, static_cast<int>(sizeof(long) * 8), 4);
  CHECK_DTYPE(ulong4_32a, kDLUInt, static_cast<int>(sizeof(long) * 8), 4);
  CHECK_DTYPE(longlong4_16a, kDLInt, 64, 4);
  CHECK_DTYPE(longlong4_32a, kDLInt, 64, 4);
  CHECK_DTYPE(ulonglong4_16a, kDLUInt, 64, 4);
  CHECK_DTYPE(ulonglong4_32a, kDLUInt, 64, 4);
  CHECK_DTYPE(double4_16a, kDLFloat, 64, 4);
  CHECK_DTYPE(double4_32a, kDLFloat, 64, 4);
#endif
  // The names CUDA 13 deprecates still work (the test silences the deprecation for itself).
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  CHECK_DTYPE(long4, kDLInt, static_cast<int>(sizeof(long) * 8), 4);
  CHECK_DTYPE(ulonglong4, kDLUInt, 64, 4);
  CHECK_DTYPE(longlong4, kDLInt, 64, 4);
  CHECK_DTYPE(double4, kDLFloat, 64, 4);
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

  // 1- and 3-lane vectors are deliberately not registered (see docs/cuda.md).
  CHECK_FALSE(dm::has_dtype<float1>);
  CHECK_FALSE(dm::has_dtype<float3>);
  CHECK_FALSE(dm::has_dtype<int3>);
}

TEST_CASE("cuda::std::complex counts the whole value's bits") {
  CHECK_DTYPE(cuda::std::complex<__half>, kDLComplex, 32, 1);
  CHECK_DTYPE(cuda::std::complex<float>, kDLComplex, 64, 1);
  CHECK_DTYPE(cuda::std::complex<double>, kDLComplex, 128, 1);
}

// Every type stored in whole bytes per element: a bare DLTensor round-trips it.
TEST_CASE_TEMPLATE("whole-byte CUDA types export and import through cuda::std::mdspan with a device accessor", T,
                   __half, __nv_bfloat16, __nv_fp8_e4m3, __nv_fp8_e5m2, __nv_fp8_e8m0, __half2, __nv_bfloat162,
                   __nv_fp8x2_e4m3, __nv_fp8x4_e5m2, __nv_fp8x2_e8m0, __nv_fp4x2_e2m1, __nv_fp4x4_e2m1, char2, uchar4,
                   short4, ushort2, int2, uint4, long2, longlong2, ulonglong2, float2, float4, double2,
                   cuda::std::complex<__half>, cuda::std::complex<float>, cuda::std::complex<double>) {
  T storage[6] = {};
  T* const buf = storage;  // a pointer, so that doctest prints addresses, not elements
  const dm::device_mdspan<T, E2> md(buf, cuda::std::layout_right::mapping<E2>(E2(2, 3)), dm::cuda_device_accessor<T>(2));

  const auto view = dm::to_dlpack_tensor(md);
  const DLTensor t = view.get();
  CHECK(t.device.device_type == kDLCUDA);
  CHECK(t.device.device_id == 2);
  CHECK(dm::same_dtype(t.dtype, dm::dtype_v<T>));
  CHECK(dm::storage_itemsize(t.dtype) == sizeof(T));  // packed: the dtype's bytes are the type's
  CHECK(t.data == buf);
  CHECK(t.shape[0] == 2);
  CHECK(t.strides[0] == 3);

  // Plain to_mdspan default-constructs the accessor; the _on_device form keeps the ordinal.
  const auto plain = dm::to_mdspan<dm::device_mdspan<T, E2>>(t);
  CHECK(plain.data_handle() == buf);
  CHECK(plain.accessor().device_id == 0);
  const auto back = dm::to_mdspan_on_device<dm::device_mdspan<T, E2>>(t);
  CHECK(back.data_handle() == buf);
  CHECK(back.extent(0) == 2);
  CHECK(back.extent(1) == 3);
  CHECK(back.accessor().device_id == 2);
  CHECK(&back(1, 2) == &buf[5]);

  // Re-exporting the imported view reports where it came from.
  const auto again = dm::to_dlpack_tensor(back);
  CHECK(again.device().device_id == 2);
}

#if DLPM_HAVE_STD_MDSPAN
TEST_CASE_TEMPLATE("CUDA types go through std::mdspan with the managed and pinned accessors", T, __half, __nv_bfloat16,
                   __nv_fp8_e4m3, __nv_fp4x2_e2m1, float4, cuda::std::complex<float>) {
  T storage[8] = {};
  T* const buf = storage;
  using E = std::extents<std::int64_t, 2, 4>;
  const std::mdspan<T, E, std::layout_left, dm::cuda_managed_accessor<T>> managed(buf);
  const auto m = dm::to_dlpack_tensor(managed);
  CHECK(m.device().device_type == kDLCUDAManaged);
  CHECK(m.device().device_id == 0);
  CHECK(m.strides()[1] == 2);
  const auto managed_back = dm::to_mdspan<std::mdspan<T, E, std::layout_left, dm::cuda_managed_accessor<T>>>(m.get());
  CHECK(&managed_back[1, 3] == &buf[7]);

  // Built for device 1, but DLPack fixes pinned memory's id at 0: export says 0.
  const std::mdspan<T, E, std::layout_right, dm::cuda_pinned_accessor<T>> pinned(
      buf, std::layout_right::mapping<E>(), dm::cuda_pinned_accessor<T>(1));
  CHECK(pinned.accessor().device_id == 1);
  const auto p = dm::to_dlpack_tensor(pinned);
  CHECK(p.device().device_type == kDLCUDAHost);
  CHECK(p.device().device_id == 0);
  // Pinned memory is host memory: the default host accessor takes it too.
  const auto host = dm::to_mdspan<std::mdspan<T, E>>(p.get());
  CHECK(host.data_handle() == buf);
}
#endif

TEST_CASE("each CUDA accessor accepts exactly its memory kinds on import") {
  float buf[4] = {};
  struct row {
    DLDeviceType type;
    bool device, managed, pinned;
  };
  // The table in docs/cuda.md.
  const row rows[] = {
      {kDLCPU, false, false, false},        {kDLCUDA, true, false, false}, {kDLCUDAHost, false, false, true},
      {kDLCUDAManaged, true, true, true},   {kDLROCM, false, false, false},
  };
  for (const row& r : rows) {
    INFO(dm::device_type_name(r.type));
    tensor_builder b(buf, dlpm_test::f32, {4}, {1}, 0, DLDevice{r.type, 0});
    using V = cuda::std::dextents<int, 1>;
    const auto d = dm::try_to_mdspan<dm::device_mdspan<float, V>>(b.get());
    const auto m = dm::try_to_mdspan<dm::managed_mdspan<float, V>>(b.get());
    const auto p = dm::try_to_mdspan<dm::pinned_mdspan<float, V>>(b.get());
    CHECK(d.has_value() == r.device);
    CHECK(m.has_value() == r.managed);
    CHECK(p.has_value() == r.pinned);
    if (!d) CHECK(d.error().code() == dm::errc::device_mismatch);
    if (!m) CHECK(m.error().code() == dm::errc::device_mismatch);
    if (!p) CHECK(p.error().code() == dm::errc::device_mismatch);
  }

  // The message names both sides.
  tensor_builder host(buf, dlpm_test::f32, {4}, {1});
  const auto refused = dm::try_to_mdspan<dm::device_mdspan<float, cuda::std::dextents<int, 1>>>(host.get());
  REQUIRE_FALSE(refused.has_value());
  CHECK(has_text(refused.error().message(), "kDLCPU"));
  CHECK(has_text(refused.error().message(), "kDLCUDA"));

  // And the host accessor still refuses device memory.
  tensor_builder device(buf, dlpm_test::f32, {4}, {1}, 0, DLDevice{kDLCUDA, 0});
  const auto host_view = dm::try_to_mdspan<cuda::std::mdspan<float, cuda::std::dextents<int, 1>>>(device.get());
  REQUIRE_FALSE(host_view.has_value());
  CHECK(host_view.error().code() == dm::errc::device_mismatch);
}

TEST_CASE("DLPack's device ids: kDLCUDA exports its ordinal, managed and pinned memory always 0") {
  float storage[6] = {};
  float* const buf = storage;
  const auto mapping = cuda::std::layout_right::mapping<E2>(E2(2, 3));
  for (const std::int32_t id : {0, 1, 3, 127}) {
    INFO("accessor device_id " << id);
    const dm::device_mdspan<float, E2> device(buf, mapping, dm::cuda_device_accessor<float>(id));
    const dm::managed_mdspan<float, E2> managed(buf, mapping, dm::cuda_managed_accessor<float>(id));
    const dm::pinned_mdspan<float, E2> pinned(buf, mapping, dm::cuda_pinned_accessor<float>(id));
    // The accessors keep what they were given; export applies the rule.
    CHECK(managed.accessor().device_id == id);
    CHECK(pinned.accessor().device_id == id);

    const auto d = dm::to_dlpack_tensor(device);
    CHECK(d.device().device_type == kDLCUDA);
    CHECK(d.device().device_id == id);
    const auto m = dm::to_dlpack_tensor(managed);
    CHECK(m.device().device_type == kDLCUDAManaged);
    CHECK(m.device().device_id == 0);
    const auto p = dm::to_dlpack_tensor(pinned);
    CHECK(p.device().device_type == kDLCUDAHost);
    CHECK(p.device().device_id == 0);

    // Managed tensors (what __dlpack__ hands out) follow the same rule.
    const dm::managed_tensor owned_m = dm::to_managed_tensor(managed, std::make_unique<int>(0));
    CHECK(owned_m.tensor().device.device_type == kDLCUDAManaged);
    CHECK(owned_m.tensor().device.device_id == 0);
    const dm::managed_tensor owned_p = dm::to_managed_tensor(pinned, std::make_unique<int>(0));
    CHECK(owned_p.tensor().device.device_id == 0);
    const dm::managed_tensor owned_d = dm::to_managed_tensor(device, std::make_unique<int>(0));
    CHECK(owned_d.tensor().device.device_id == id);

    // A const view converted from a mutable one keeps both the ordinal and the rule.
    const dm::pinned_mdspan<const float, E2> read_only = pinned;
    CHECK(read_only.accessor().device_id == id);
    CHECK(dm::to_dlpack_tensor(read_only).device().device_id == 0);
  }
  // The rule holds at compile time too.
  static_assert(dm::cuda_device_accessor<float>(5).dlpack_device().device_id == 5);
  static_assert(dm::cuda_managed_accessor<float>(5).dlpack_device().device_id == 0);
  static_assert(dm::cuda_pinned_accessor<float>(5).dlpack_device().device_id == 0);
}

TEST_CASE("import tolerates any device_id on managed and pinned tensors, and re-export says 0") {
  // Producers disagree (some report the current device for pinned or managed memory), so
  // import takes any ordinal for these kinds rather than refusing a correct tensor.
  float buf[4] = {};
  using V = cuda::std::dextents<int, 1>;
  for (const DLDeviceType type : {kDLCUDAManaged, kDLCUDAHost}) {
    for (const std::int32_t id : {0, 1, 5}) {
      INFO(dm::device_type_name(type) << ", device_id " << id);
      tensor_builder b(buf, dlpm_test::f32, {4}, {1}, 0, DLDevice{type, id});

      const auto plain = dm::try_to_mdspan<dm::pinned_mdspan<float, V>>(b.get());  // pinned takes both kinds
      REQUIRE(plain.has_value());
      CHECK(plain->accessor().device_id == 0);

      const auto pinned = dm::try_to_mdspan_on_device<dm::pinned_mdspan<float, V>>(b.get());
      REQUIRE(pinned.has_value());
      CHECK(pinned->data_handle() == buf);
      CHECK(pinned->accessor().device_id == id);  // kept as the producer said it
      const auto pinned_again = dm::to_dlpack_tensor(*pinned);
      CHECK(pinned_again.device().device_type == kDLCUDAHost);
      CHECK(pinned_again.device().device_id == 0);  // and exported by DLPack's rule

      // The host's default accessor takes both, whatever the id.
      CHECK(dm::try_to_mdspan<cuda::std::mdspan<float, V>>(b.get()).has_value());

      if (type == kDLCUDAManaged) {
        const auto managed = dm::to_mdspan_on_device<dm::managed_mdspan<float, V>>(b.get());
        CHECK(managed.accessor().device_id == id);
        CHECK(dm::to_dlpack_tensor(managed).device().device_id == 0);
        // Managed memory viewed as device memory is exported as kDLCUDA: the ordinal counts.
        const auto device = dm::to_mdspan_on_device<dm::device_mdspan<float, V>>(b.get());
        CHECK(dm::to_dlpack_tensor(device).device().device_type == kDLCUDA);
        CHECK(dm::to_dlpack_tensor(device).device().device_id == id);
      }
    }
  }
}

TEST_CASE("tensor_requirements::device_id picks the ordinal and to_mdspan_on_device records it") {
  float buf[4] = {};
  tensor_builder b(buf, dlpm_test::f32, {4}, {1}, 0, DLDevice{kDLCUDA, 1});
  using V = dm::device_mdspan<float, cuda::std::dextents<int, 1>>;

  dm::tensor_requirements on_0;
  on_0.device_id = 0;
  const auto wrong = dm::try_to_mdspan_on_device<V>(b.get(), on_0);
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().code() == dm::errc::device_id_mismatch);

  dm::tensor_requirements on_1;
  on_1.device_id = 1;
  const auto right = dm::try_to_mdspan_on_device<V>(b.get(), on_1);
  REQUIRE(right.has_value());
  CHECK(right->accessor().device_id == 1);
  CHECK(right->accessor().dlpack_device().device_id == 1);

#if DLPM_HAS_EXCEPTIONS
  CHECK_THROWS_AS((void)dm::to_mdspan_on_device<V>(b.get(), on_0), dm::dlpack_error);
#endif
}

TEST_CASE("CUDA accessors are cheap, kernel-friendly policies") {
  using A = dm::cuda_device_accessor<float>;
  static_assert(std::is_default_constructible_v<A>);
  static_assert(std::is_trivially_copyable_v<A>);  // an mdspan passes to a kernel by value
  static_assert(std::is_same_v<A::offset_policy, A>);
  static_assert(dm::device_traits<A>::device_type == kDLCUDA);
  static_assert(dm::device_traits<dm::cuda_managed_accessor<int>>::device_type == kDLCUDAManaged);
  static_assert(dm::device_traits<dm::cuda_pinned_accessor<int>>::device_type == kDLCUDAHost);
  // Views of const elements come from views of mutable ones, keeping the ordinal; not the
  // other way round, and not across memory kinds.
  static_assert(std::is_convertible_v<dm::cuda_device_accessor<float>, dm::cuda_device_accessor<const float>>);
  static_assert(!std::is_convertible_v<dm::cuda_device_accessor<const float>, dm::cuda_device_accessor<float>>);
  static_assert(!std::is_convertible_v<dm::cuda_device_accessor<float>, dm::cuda_managed_accessor<float>>);
  // The shared template of device.hpp, limited to the three CUDA kinds.
  static_assert(std::is_same_v<A, dm::device_memory_accessor<float, kDLCUDA>>);
  static_assert(std::is_same_v<dm::cuda_pinned_accessor<int>, dm::device_memory_accessor<int, kDLCUDAHost>>);
  static_assert(is_cuda_memory_kind<kDLCUDA> && is_cuda_memory_kind<kDLCUDAManaged> && is_cuda_memory_kind<kDLCUDAHost>);
  static_assert(!is_cuda_memory_kind<kDLCPU> && !is_cuda_memory_kind<kDLROCM> && !is_cuda_memory_kind<kDLOneAPI>);

  float buf[6] = {0, 1, 2, 3, 4, 5};
  const dm::device_mdspan<float, E2> md(buf, cuda::std::layout_right::mapping<E2>(E2(2, 3)), A(5));
  const dm::device_mdspan<const float, E2> read_only = md;
  CHECK(read_only.accessor().device_id == 5);
  CHECK(read_only(1, 1) == 4.0f);

  const auto view = dm::to_dlpack_tensor(read_only);
  CHECK(view.device().device_type == kDLCUDA);
  CHECK(view.device().device_id == 5);
  // An explicit device still wins over the accessor's.
  const auto relabelled = dm::to_dlpack_tensor(md, DLDevice{kDLCUDAManaged, 0});
  CHECK(relabelled.device().device_type == kDLCUDAManaged);
}

TEST_CASE("fp4 in a byte exports padded and fp4x2 packed, each viewable as itself only") {
  using V1 = cuda::std::dextents<int, 1>;
  using fp4 = __nv_fp4_e2m1;
  using fp4x2 = __nv_fp4x2_e2m1;

  auto singles = std::make_unique<fp4[]>(4);
  fp4* const singles_data = singles.get();
  const dm::device_mdspan<fp4, V1> one_per_byte(singles_data, 4);
  const dm::managed_tensor padded = dm::to_managed_tensor(one_per_byte, std::move(singles));
  CHECK((padded.flags() & dm::flag_is_subbyte_type_padded) != 0);
  CHECK(padded.tensor().dtype.bits == 4);
  CHECK(padded.tensor().dtype.lanes == 1);
  const auto padded_view = padded.view<dm::device_mdspan<fp4, V1>>();
  CHECK(padded_view.data_handle() == singles_data);
  CHECK(padded_view.extent(0) == 4);
  // A padded fp4 tensor is not a tensor of packed pairs.
  const auto as_pairs = padded.try_view<dm::device_mdspan<fp4x2, V1>>();
  REQUIRE_FALSE(as_pairs.has_value());
  CHECK(as_pairs.error().code() == dm::errc::dtype_mismatch);
  // A legacy DLManagedTensor has no flags, so it cannot carry this tensor (it stays ours).
  const auto legacy = dm::versioned_to_legacy(padded.get());
  REQUIRE_FALSE(legacy.has_value());
  CHECK(legacy.error().code() == dm::errc::invalid_argument);

  // The bare DLTensor of the same view has no flags: consumers read it as packed, which a
  // one-byte-per-value type cannot view.
  const auto bare = dm::to_dlpack_tensor(one_per_byte);
  const auto bare_view = dm::try_to_mdspan<dm::device_mdspan<fp4, V1>>(bare.get());
  REQUIRE_FALSE(bare_view.has_value());
  CHECK(bare_view.error().code() == dm::errc::subbyte_not_viewable);

  auto pairs = std::make_unique<fp4x2[]>(3);
  fp4x2* const pairs_data = pairs.get();
  const dm::device_mdspan<fp4x2, V1> two_per_byte(pairs_data, 3);
  const dm::managed_tensor packed = dm::to_managed_tensor(two_per_byte, std::move(pairs));
  CHECK((packed.flags() & dm::flag_is_subbyte_type_padded) == 0);
  CHECK(packed.tensor().dtype.code == kDLFloat4_e2m1fn);
  CHECK(packed.tensor().dtype.bits == 4);
  CHECK(packed.tensor().dtype.lanes == 2);
  CHECK(*dm::nbytes(packed.tensor()) == 3);  // three pairs, one byte each
  const auto packed_view = packed.view<dm::device_mdspan<fp4x2, V1>>();
  CHECK(packed_view.data_handle() == pairs_data);
  CHECK(packed_view.extent(0) == 3);
  const auto as_singles = packed.try_view<dm::device_mdspan<fp4, V1>>();
  REQUIRE_FALSE(as_singles.has_value());
  CHECK(as_singles.error().code() == dm::errc::dtype_mismatch);
}

TEST_CASE("foreign sub-byte tensors whose storage does not match the type are refused") {
  using V1 = cuda::std::dextents<int, 1>;
  unsigned char bytes[8] = {};
  const DLDataType fp4_single{kDLFloat4_e2m1fn, 4, 1};
  const DLDataType fp4_pair{kDLFloat4_e2m1fn, 4, 2};

  SUBCASE("packed fp4 (two values per byte) viewed one value per byte") {
    foreign_tensor f(bytes, fp4_single, 8, 0);
    {
      const dm::managed_tensor t = dm::managed_tensor::adopt(&f.managed);
      const auto v = t.try_view<dm::device_mdspan<__nv_fp4_e2m1, V1>>();
      REQUIRE_FALSE(v.has_value());
      CHECK(v.error().code() == dm::errc::subbyte_not_viewable);
      CHECK(has_text(v.error().message(), "packed"));
    }
    CHECK(f.deleter_calls == 1);
  }
  SUBCASE("padded fp4 pairs (a byte per value) viewed as packed pairs") {
    foreign_tensor f(bytes, fp4_pair, 4, dm::flag_is_subbyte_type_padded);
    const dm::managed_tensor t = dm::managed_tensor::adopt(&f.managed);
    const auto v = t.try_view<dm::device_mdspan<__nv_fp4x2_e2m1, V1>>();
    REQUIRE_FALSE(v.has_value());
    CHECK(v.error().code() == dm::errc::subbyte_not_viewable);
    CHECK(has_text(v.error().message(), "padded"));
  }
  SUBCASE("padded fp4 viewed as itself works") {
    foreign_tensor f(bytes, fp4_single, 8, dm::flag_is_subbyte_type_padded);
    const dm::managed_tensor t = dm::managed_tensor::adopt(&f.managed);
    const auto v = t.try_view<dm::device_mdspan<__nv_fp4_e2m1, V1>>();
    REQUIRE(v.has_value());
    CHECK(v->extent(0) == 8);
    CHECK(static_cast<const void*>(v->data_handle()) == bytes);
  }
  SUBCASE("unflagged fp6 pairs are packed 12-bit values, which __nv_fp6x2 cannot view") {
    foreign_tensor f(bytes, DLDataType{kDLFloat6_e2m3fn, 6, 2}, 4, 0);
    const dm::managed_tensor t = dm::managed_tensor::adopt(&f.managed);
    const auto v = t.try_view<dm::device_mdspan<__nv_fp6x2_e2m3, V1>>();
    REQUIRE_FALSE(v.has_value());
    CHECK(v.error().code() == dm::errc::subbyte_not_viewable);
  }
}

TEST_CASE_TEMPLATE("fp6 types and fp6 pairs keep a byte per value: padded managed exports", T, __nv_fp6_e2m3,
                   __nv_fp6_e3m2, __nv_fp6x2_e2m3, __nv_fp6x4_e3m2) {
  using V1 = cuda::std::dextents<int, 1>;
  auto owner = std::make_unique<T[]>(5);
  T* const data = owner.get();
  const dm::managed_mdspan<T, V1> md(data, 5);
  const dm::managed_tensor t = dm::to_managed_tensor(md, std::move(owner));
  CHECK((t.flags() & dm::flag_is_subbyte_type_padded) != 0);
  CHECK(t.tensor().dtype.bits == 6);
  CHECK(t.tensor().device.device_type == kDLCUDAManaged);
  const auto v = t.view<dm::managed_mdspan<T, V1>>();
  CHECK(v.data_handle() == data);
  CHECK(&v(4) == data + 4);
}

TEST_CASE("fp4x4 packs four values in two bytes: no padding flag, bare views work") {
  using V1 = cuda::std::dextents<int, 1>;
  auto owner = std::make_unique<__nv_fp4x4_e2m1[]>(3);
  __nv_fp4x4_e2m1* const data = owner.get();
  const dm::device_mdspan<__nv_fp4x4_e2m1, V1> md(data, 3);
  const auto bare = dm::to_dlpack_tensor(md);
  CHECK(*dm::nbytes(bare.get()) == 6);
  CHECK(dm::to_mdspan<dm::device_mdspan<__nv_fp4x4_e2m1, V1>>(bare.get()).data_handle() == data);
  const dm::managed_tensor t = dm::to_managed_tensor(md, std::move(owner));
  CHECK(t.flags() == 0);
}
