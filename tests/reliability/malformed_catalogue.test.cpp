// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The malformed-tensor catalogue: each named case is a foreign DLManagedTensorVersioned
// with one thing wrong. The C++ path (adopt + typed view) and the C path
// (dlpm_managed_check_version + dlpm_check_managed) must each report the case's exact
// error, and the producer's deleter must have run exactly once when all is over.
#include "support/prelude.hpp"

#include <dlpack_mdspan.h>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <functional>

namespace dm = dlpack_mdspan;

namespace {

// What a case views the tensor as.
enum class target { relaxed, right, strided, right_i8, static_3x4, rank0, relaxed_unsigned, fp4_byte, fp4_pair, rank3 };

struct fp4_byte {
  std::uint8_t v;
};
struct fp4_pair {
  std::uint8_t v;
};

// A foreign producer's tensor: float32 3x4, row-major, counting deleter.
struct producer {
  alignas(64) float data[64] = {};
  std::int64_t shape[4] = {3, 4, 1, 1};
  std::int64_t strides[4] = {4, 1, 1, 1};
  int deleter_calls = 0;

  static void count_deleter(DLManagedTensorVersioned* self) {
    if (self->manager_ctx != nullptr) ++static_cast<producer*>(self->manager_ctx)->deleter_calls;
    else ++null_ctx_deleter_calls;
  }
  static inline int null_ctx_deleter_calls = 0;

  DLManagedTensorVersioned make() {
    DLManagedTensorVersioned m{};
    m.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    m.manager_ctx = this;
    m.deleter = &count_deleter;
    m.dl_tensor.data = data;
    m.dl_tensor.device = DLDevice{kDLCPU, 0};
    m.dl_tensor.ndim = 2;
    m.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    m.dl_tensor.shape = shape;
    m.dl_tensor.strides = strides;
    return m;
  }
};

struct malformed_case {
  const char* name;
  std::function<void(DLManagedTensorVersioned&, producer&)> mutate;
  dm::errc expected;                       // from the C++ adopt + view path
  target view = target::relaxed;
  dm::tensor_requirements requirements = {};
  int deleter_calls = 1;                   // 0 only for a NULL deleter
  bool facade_checks = true;               // the C path applies (not a typed-view-only rule)
};

template <class T, std::size_t R, class L = dm::layout_stride_relaxed, class I = std::int64_t>
using md = std::mdspan<T, std::dextents<I, R>, L>;

template <class M>
dm::errc view_as(const dm::managed_tensor& t, const dm::tensor_requirements& o) {
  auto r = t.try_view<M>(o);
  return r ? dm::errc::ok : r.error().code();
}

dm::errc view(const dm::managed_tensor& t, target k, const dm::tensor_requirements& o) {
  switch (k) {
    case target::relaxed: return view_as<md<float, 2>>(t, o);
    case target::right: return view_as<md<float, 2, std::layout_right>>(t, o);
    case target::strided: return view_as<md<float, 2, std::layout_stride>>(t, o);
    case target::right_i8: return view_as<md<float, 2, std::layout_right, std::int8_t>>(t, o);
    case target::static_3x4: return view_as<std::mdspan<float, std::extents<int, 3, 5>>>(t, o);
    case target::rank0: return view_as<std::mdspan<float, std::extents<int>>>(t, o);
    case target::relaxed_unsigned: return view_as<md<float, 2, dm::layout_stride_relaxed, std::size_t>>(t, o);
    case target::fp4_byte: return view_as<md<fp4_byte, 1>>(t, o);
    case target::fp4_pair: return view_as<md<fp4_pair, 1>>(t, o);
    case target::rank3: return view_as<md<float, 3>>(t, o);
  }
  return dm::errc::invalid_argument;
}

constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
using M = DLManagedTensorVersioned;
using P = producer;

std::vector<malformed_case> catalogue() {
  using e = dm::errc;
  dm::tensor_requirements strict;
  strict.null_strides = dm::null_strides_policy::reject;
  dm::tensor_requirements align64;
  align64.min_alignment = 64;
  dm::tensor_requirements align48;
  align48.min_alignment = 48;
  dm::tensor_requirements device0;
  device0.device_id = 0;
  return {
      {"a well-formed tensor", [](M&, P&) {}, e::ok},
      {"ndim -1", [](M& m, P&) { m.dl_tensor.ndim = -1; }, e::invalid_ndim},
      {"ndim 1000", [](M& m, P&) { m.dl_tensor.ndim = 1000; }, e::invalid_ndim},
      {"ndim 65", [](M& m, P&) { m.dl_tensor.ndim = 65; }, e::invalid_ndim},
      {"ndim INT32_MAX with NULL shape", [](M& m, P&) { m.dl_tensor.ndim = INT32_MAX; m.dl_tensor.shape = nullptr; }, e::invalid_ndim},
      {"ndim 0 with NULL shape and strides (valid)", [](M& m, P&) { m.dl_tensor.ndim = 0; m.dl_tensor.shape = nullptr; m.dl_tensor.strides = nullptr; }, e::ok, target::rank0},
      {"ndim 0 with dangling shape and strides (valid)", [](M& m, P&) { m.dl_tensor.ndim = 0; m.dl_tensor.shape = reinterpret_cast<std::int64_t*>(8); m.dl_tensor.strides = reinterpret_cast<std::int64_t*>(8); }, e::ok, target::rank0},
      {"ndim 2 with NULL shape", [](M& m, P&) { m.dl_tensor.shape = nullptr; }, e::null_shape},
      {"a shape entry of -1", [](M&, P& p) { p.shape[1] = -1; }, e::negative_extent},
      {"a shape entry of INT64_MIN", [](M&, P& p) { p.shape[0] = i64_min; }, e::negative_extent},
      {"a shape product that overflows int64", [](M&, P& p) { p.shape[0] = std::int64_t{1} << 32; p.shape[1] = std::int64_t{1} << 32; }, e::span_overflow},
      {"a stride of INT64_MIN", [](M&, P& p) { p.strides[0] = i64_min; }, e::stride_overflow},
      {"strides whose span overflows int64", [](M&, P& p) { p.strides[0] = std::int64_t{1} << 62; }, e::span_overflow},
      {"byte_offset not a multiple of the element size", [](M& m, P&) { m.dl_tensor.byte_offset = 2; }, e::misaligned_byte_offset},
      {"byte_offset near UINT64_MAX", [](M& m, P&) { m.dl_tensor.byte_offset = ~std::uint64_t{0} - 3; }, e::byte_offset_overflow},
      {"byte_offset INT64_MAX + 1", [](M& m, P&) { m.dl_tensor.byte_offset = std::uint64_t{1} << 63; }, e::byte_offset_overflow},
      {"a range that wraps the address space", [](M& m, P&) { m.dl_tensor.data = reinterpret_cast<void*>(~std::uintptr_t{0} - 15); }, e::byte_offset_overflow},
      {"an empty tensor whose data + byte_offset wraps (fuzzer finding)", [](M& m, P& p) { p.shape[0] = 0; m.dl_tensor.data = reinterpret_cast<void*>(~std::uintptr_t{0}); m.dl_tensor.byte_offset = 4; }, e::byte_offset_overflow},
      {"an index span ending at INT64_MAX (fuzzer finding)", [](M&, P& p) { p.shape[0] = 2; p.shape[1] = 1; p.strides[0] = std::numeric_limits<std::int64_t>::max(); }, e::span_overflow},
      {"a misaligned data pointer", [](M& m, P& p) { m.dl_tensor.data = reinterpret_cast<char*>(p.data) + 1; }, e::misaligned_data, target::relaxed, {}, 1, false},
      {"data not aligned as requested", [](M& m, P&) { m.dl_tensor.byte_offset = 16; }, e::misaligned_data, target::relaxed, align64, 1, false},
      {"a requested alignment that is not a power of two", [](M&, P&) {}, e::invalid_argument, target::relaxed, align48, 1, false},
      {"lanes 0", [](M& m, P&) { m.dl_tensor.dtype.lanes = 0; }, e::invalid_dtype},
      {"bits 0", [](M& m, P&) { m.dl_tensor.dtype.bits = 0; }, e::invalid_dtype},
      {"bits 6 claimed for an int", [](M& m, P&) { m.dl_tensor.dtype = DLDataType{kDLInt, 6, 1}; }, e::invalid_dtype},
      {"an unknown dtype code", [](M& m, P&) { m.dl_tensor.dtype.code = 99; }, e::invalid_dtype},
      {"float64 data for a float32 view", [](M& m, P&) { m.dl_tensor.dtype.bits = 64; }, e::dtype_mismatch, target::relaxed, {}, 1, false},
      {"two lanes for a scalar view", [](M& m, P&) { m.dl_tensor.dtype.lanes = 2; }, e::dtype_mismatch, target::relaxed, {}, 1, false},
      {"an unknown device type", [](M& m, P&) { m.dl_tensor.device.device_type = static_cast<DLDeviceType>(99); }, e::device_mismatch, target::relaxed, {}, 1, false},
      {"CUDA memory for a host view", [](M& m, P&) { m.dl_tensor.device.device_type = kDLCUDA; }, e::device_mismatch, target::relaxed, {}, 1, false},
      {"a negative device id", [](M& m, P&) { m.dl_tensor.device.device_id = -1; }, e::device_id_mismatch},
      {"the wrong device id", [](M& m, P&) { m.dl_tensor.device.device_id = 3; }, e::device_id_mismatch, target::relaxed, device0, 1, false},
      {"NULL data with elements", [](M& m, P&) { m.dl_tensor.data = nullptr; }, e::null_data},
      {"NULL data in an empty tensor (valid)", [](M& m, P& p) { m.dl_tensor.data = nullptr; p.shape[0] = 0; }, e::ok},
      {"garbage strides in an empty tensor (valid)", [](M&, P& p) { p.shape[1] = 0; p.strides[0] = i64_min + 1; p.strides[1] = -77; }, e::ok},
      {"NULL strides from a minor >= 2 producer under the strict policy", [](M& m, P&) { m.dl_tensor.strides = nullptr; }, e::null_strides, target::relaxed, strict},
      {"NULL strides under the default policy (valid: row-major)", [](M& m, P&) { m.dl_tensor.strides = nullptr; }, e::ok, target::right},
      {"READ_ONLY and a mutable view", [](M& m, P&) { m.flags = DLPACK_FLAG_BITMASK_READ_ONLY; }, e::read_only, target::relaxed, {}, 1, false},
      {"major version 0", [](M& m, P&) { m.version = DLPackVersion{0, 8}; }, e::version_mismatch},
      {"major version 2", [](M& m, P&) { m.version = DLPackVersion{2, 0}; }, e::version_mismatch},
      {"a newer minor version (valid)", [](M& m, P&) { m.version.minor = 99; }, e::ok},
      {"a NULL deleter (valid: nothing to call)", [](M& m, P&) { m.deleter = nullptr; }, e::ok, target::relaxed, {}, 0},
      {"a NULL manager_ctx (valid: the deleter's business)", [](M& m, P&) { m.manager_ctx = nullptr; }, e::ok},
      {"ndim 3 for a rank-2 view", [](M& m, P&) { m.dl_tensor.ndim = 3; }, e::ndim_mismatch, target::relaxed, {}, 1, false},
      {"transposed strides for a layout_right view", [](M&, P& p) { p.strides[0] = 1; p.strides[1] = 3; }, e::non_compact_strides, target::right, {}, 1, false},
      {"a zero stride for a layout_stride view", [](M&, P& p) { p.strides[0] = 0; }, e::non_positive_stride, target::strided, {}, 1, false},
      {"a negative stride for a layout_stride view", [](M& m, P& p) { p.strides[0] = -4; m.dl_tensor.byte_offset = 32; }, e::non_positive_stride, target::strided, {}, 1, false},
      {"overlapping strides for a layout_stride view", [](M&, P& p) { p.strides[0] = 1; }, e::overlapping_strides, target::strided, {}, 1, false},
      {"a negative stride for an unsigned index type", [](M& m, P& p) { p.strides[0] = -4; m.dl_tensor.byte_offset = 32; }, e::stride_overflow, target::relaxed_unsigned, {}, 1, false},
      {"an extent too large for int8_t", [](M&, P& p) { p.shape[1] = 200; p.strides[0] = 200; p.shape[0] = 1; }, e::extent_overflow, target::right_i8, {}, 1, false},
      {"a static extent mismatch", [](M&, P&) {}, e::shape_mismatch, target::static_3x4, {}, 1, false},
      {"packed fp4 for a one-byte-per-value type", [](M& m, P&) { m.dl_tensor.ndim = 1; m.dl_tensor.dtype = DLDataType{kDLFloat4_e2m1fn, 4, 1}; }, e::subbyte_not_viewable, target::fp4_byte, {}, 1, false},
      {"padded fp4 for a packed pair type", [](M& m, P&) { m.dl_tensor.ndim = 1; m.dl_tensor.dtype = DLDataType{kDLFloat4_e2m1fn, 4, 2}; m.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED; }, e::subbyte_not_viewable, target::fp4_pair, {}, 1, false},
  };
}

dlpm_status expected_status(dm::errc code) { return static_cast<dlpm_status>(code); }

}  // namespace

template <>
struct dlpack_mdspan::dtype_traits<fp4_byte> {
  static constexpr DLDataType value{kDLFloat4_e2m1fn, 4, 1};
};
template <>
struct dlpack_mdspan::dtype_traits<fp4_pair> {
  static constexpr DLDataType value{kDLFloat4_e2m1fn, 4, 2};
};

TEST_CASE("the catalogue has at least 40 cases with distinct names") {
  const auto cases = catalogue();
  CHECK(cases.size() >= 40);
  for (std::size_t i = 0; i < cases.size(); ++i)
    for (std::size_t j = i + 1; j < cases.size(); ++j) CHECK(std::string(cases[i].name) != cases[j].name);
}

TEST_CASE("C++ path: adopt, then a typed view") {
  for (const auto& c : catalogue()) {
    const std::string name = c.name;
    CAPTURE(name);
    producer p;
    producer::null_ctx_deleter_calls = 0;
    auto* m = new DLManagedTensorVersioned(p.make());
    c.mutate(*m, p);
    dm::errc got = dm::errc::ok;
    {
      auto adopted = dm::managed_tensor::try_adopt(m);
      if (!adopted) got = adopted.error().code();
      else got = view(*adopted, c.view, c.requirements);
    }
    CHECK(got == c.expected);
    CHECK(p.deleter_calls + producer::null_ctx_deleter_calls == c.deleter_calls);
    delete m;
  }
}

TEST_CASE("C path: dlpm_managed_check_version, then dlpm_check_managed") {
  for (const auto& c : catalogue()) {
    if (!c.facade_checks) continue;
    const std::string name = c.name;
    CAPTURE(name);
    producer p;
    producer::null_ctx_deleter_calls = 0;
    auto* m = new DLManagedTensorVersioned(p.make());
    c.mutate(*m, p);
    dlpm_requirements req;
    dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
    req.null_strides = static_cast<std::int32_t>(c.requirements.null_strides);  // DLPM_NULL_STRIDES_* are its values
    dlpm_status s = dlpm_managed_check_version(m);
    if (s == DLPM_OK) {
      s = dlpm_check_managed(m, &req);
      dlpm_managed_delete(m);
    }
    CHECK(s == expected_status(c.expected));
    if (s != DLPM_OK) CHECK(std::string(dlpm_last_error()).size() > 10);  // a message that names the problem
    CHECK(p.deleter_calls + producer::null_ctx_deleter_calls == c.deleter_calls);
    delete m;
  }
}
