// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// __float128 and the host storage types of DLPack's fp8 / fp6 / fp4 codes (dtype.hpp):
// their dtypes, export flags (padded sub-byte types) and imports of hand-made tensors.
// tests/python/test_narrow_floats.py checks the same types against ml_dtypes and JAX.
#include "support/prelude.hpp"

#include <bit>
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::tensor_builder;

namespace {
constexpr bool is(DLDataType t, int code, int bits, int lanes = 1) {
  return t.code == code && t.bits == bits && t.lanes == lanes;
}
template <class T, std::size_t R>
using right = std::mdspan<T, std::dextents<std::int64_t, R>>;
template <class T, std::size_t R>
using strided = std::mdspan<T, std::dextents<std::int64_t, R>, std::layout_stride>;

template <class M>
dm::errc import_error(const DLTensor& t, const dm::tensor_requirements& o = {}) {
  auto r = dm::try_to_mdspan<M>(t, o);
  return r ? dm::errc::ok : r.error().code();
}

// A view of sub-byte data stored one element per byte: the tensor's DLPack flag says so.
template <class M>
M padded_view(const DLTensor& t) {
  auto r = dm::try_view<M>(t, dm::flag_is_subbyte_type_padded);
  REQUIRE(r);
  return *r;
}

// For dispatch: rank-1 and rank-2 const views of each candidate.
template <class T>
using vector_of = std::mdspan<const T, std::dextents<std::int64_t, 1>, std::layout_stride>;
template <class T>
using matrix_of = std::mdspan<const T, std::dextents<std::int64_t, 2>, std::layout_stride>;

// The narrow types' names as ml_dtypes spells them (and as the struct is named).
template <class T> constexpr std::string_view name_of = "?";
template <> constexpr std::string_view name_of<dm::float8_e3m4> = "float8_e3m4";
template <> constexpr std::string_view name_of<dm::float8_e4m3> = "float8_e4m3";
template <> constexpr std::string_view name_of<dm::float8_e4m3b11fnuz> = "float8_e4m3b11fnuz";
template <> constexpr std::string_view name_of<dm::float8_e4m3fn> = "float8_e4m3fn";
template <> constexpr std::string_view name_of<dm::float8_e4m3fnuz> = "float8_e4m3fnuz";
template <> constexpr std::string_view name_of<dm::float8_e5m2> = "float8_e5m2";
template <> constexpr std::string_view name_of<dm::float8_e5m2fnuz> = "float8_e5m2fnuz";
template <> constexpr std::string_view name_of<dm::float8_e8m0fnu> = "float8_e8m0fnu";
template <> constexpr std::string_view name_of<dm::float6_e2m3fn> = "float6_e2m3fn";
template <> constexpr std::string_view name_of<dm::float6_e3m2fn> = "float6_e3m2fn";
template <> constexpr std::string_view name_of<dm::float4_e2m1fn> = "float4_e2m1fn";

template <template <class> class View = vector_of>
std::string_view dispatched_name(const DLTensor& t, std::uint64_t flags = 0) {
  auto r = dm::try_visit_mdspan<View, dm::float8_e3m4, dm::float8_e4m3, dm::float8_e4m3b11fnuz, dm::float8_e4m3fn,
                                dm::float8_e4m3fnuz, dm::float8_e5m2, dm::float8_e5m2fnuz, dm::float8_e8m0fnu,
                                dm::float6_e2m3fn, dm::float6_e3m2fn, dm::float4_e2m1fn>(
      t, []<class V>(V) { return name_of<std::remove_const_t<typename V::element_type>>; }, {}, flags);
  return r ? *r : std::string_view("error");
}
}  // namespace

// ---- IEEE binary128: __float128, or long double where it is binary128 --------------------
// x86-64 has __float128 and an x87 long double (refused: compile_fail/long_double_dtype.cpp);
// AArch64 Linux has no __float128 and a binary128 long double. Either way one type here is
// (kDLFloat, 128, 1), and the same tests run on it.

#if defined(__SIZEOF_FLOAT128__)
using binary128 = __float128;
#elif DLPM_LONG_DOUBLE_IS_BINARY128
using binary128 = long double;
#endif

#if defined(__SIZEOF_FLOAT128__) || DLPM_LONG_DOUBLE_IS_BINARY128
TEST_CASE("long double is (kDLFloat, 128, 1) exactly where it is binary128, and refused elsewhere") {
  static_assert(dm::has_dtype<long double> == (DLPM_LONG_DOUBLE_IS_BINARY128 == 1));
  static_assert(DLPM_LONG_DOUBLE_IS_BINARY128 == (std::numeric_limits<long double>::digits == 113 &&
                                                  std::numeric_limits<long double>::max_exponent == 16384));
#if defined(__aarch64__) && defined(__linux__)
  static_assert(DLPM_LONG_DOUBLE_IS_BINARY128, "AArch64 Linux's long double is IEEE binary128");
  static_assert(is(dm::dtype_v<long double>, kDLFloat, 128));
  static_assert(is(dm::dtype_v<const long double>, kDLFloat, 128));
#endif
#if defined(__x86_64__)
  static_assert(!DLPM_LONG_DOUBLE_IS_BINARY128, "x86-64's long double is the x87 80-bit format");
  static_assert(!std::is_same_v<binary128, long double>);
#endif
  static_assert(is(dm::dtype_v<binary128>, kDLFloat, 128));
  static_assert(is(dm::dtype_v<const binary128>, kDLFloat, 128));
  static_assert(dm::has_dtype<binary128>);
  CHECK(dm::storage_itemsize(dm::dtype_v<binary128>) == 16);
}

TEST_CASE("the type called (kDLFloat, 128, 1) holds IEEE binary128 bytes") {
  // 1.5 in binary128: sign 0, exponent 0x3fff, the fraction's top bit set; in an x87 long
  // double the same value would show its explicit integer bit and a 15-bit exponent at
  // byte 8, so a mislabelled type fails here.
  const binary128 one_and_a_half = 1.5;
  unsigned char bytes[16];
  std::memcpy(bytes, &one_and_a_half, 16);
  std::uint64_t low = 0, high = 0;
  for (int i = 7; i >= 0; --i) low = low << 8 | bytes[i];
  for (int i = 15; i >= 8; --i) high = high << 8 | bytes[i];
  CHECK(low == 0);
  CHECK(high == 0x3fff800000000000u);
}

TEST_CASE("a (kDLFloat, 128, 1) tensor imports as binary128 and float64 or float32 ones are refused") {
  alignas(16) binary128 values[6] = {1, 2, 3, 4, 5, 6};
  tensor_builder q(values, dlpm_test::dt(kDLFloat, 128), {2, 3}, {3, 1});
  auto m = dm::to_mdspan<right<const binary128, 2>>(q.get());
  CHECK(m.data_handle() == values);
  CHECK(static_cast<double>(m[1, 2]) == 6.0);
  CHECK(static_cast<double>(dm::to_mdspan<strided<binary128, 2>>(q.get())[0, 1]) == 2.0);

  double d[6] = {};
  tensor_builder f64(d, dlpm_test::f64, {2, 3}, {3, 1});
  CHECK(import_error<right<binary128, 2>>(f64.get()) == dm::errc::dtype_mismatch);
  CHECK(import_error<right<binary128, 2>>(tensor_builder(d, dlpm_test::f32, {2, 3}, {3, 1}).get()) ==
        dm::errc::dtype_mismatch);
  // and the reverse: binary128 data is not double.
  CHECK(import_error<right<double, 2>>(q.get()) == dm::errc::dtype_mismatch);

  // A byte offset of half an element is refused.
  tensor_builder shifted(values, dlpm_test::dt(kDLFloat, 128), {2}, {1}, 8);
  CHECK(import_error<right<binary128, 1>>(shifted.get()) == dm::errc::misaligned_byte_offset);
}

TEST_CASE("binary128 exports as (kDLFloat, 128, 1), as a view and as a managed tensor") {
  alignas(16) binary128 values[4] = {0.5, 1.5, 2.5, 3.5};
  std::mdspan<binary128, std::dextents<int, 1>> md(values, 4);
  auto view = dm::to_dlpack_tensor(md);
  CHECK(is(view.get().dtype, kDLFloat, 128));
  auto owned = dm::to_managed_tensor(md, 0);
  CHECK(is(owned.tensor().dtype, kDLFloat, 128));
  CHECK(owned.flags() == 0);
  CHECK(static_cast<double>(owned.view<right<const binary128, 1>>()[3]) == 3.5);
  auto copy = dm::to_managed_tensor_copy(md);
  CHECK(static_cast<double>(copy.view<right<const binary128, 1>>()[2]) == 2.5);
}
#endif

// ---- fp8 / fp6 / fp4 storage types ---------------------------------------------------------

TEST_CASE("every DLPack fp8 / fp6 / fp4 code has a host storage type with its dtype") {
  static_assert(is(dm::dtype_v<dm::float8_e3m4>, kDLFloat8_e3m4, 8));
  static_assert(is(dm::dtype_v<dm::float8_e4m3>, kDLFloat8_e4m3, 8));
  static_assert(is(dm::dtype_v<dm::float8_e4m3b11fnuz>, kDLFloat8_e4m3b11fnuz, 8));
  static_assert(is(dm::dtype_v<dm::float8_e4m3fn>, kDLFloat8_e4m3fn, 8));
  static_assert(is(dm::dtype_v<dm::float8_e4m3fnuz>, kDLFloat8_e4m3fnuz, 8));
  static_assert(is(dm::dtype_v<dm::float8_e5m2>, kDLFloat8_e5m2, 8));
  static_assert(is(dm::dtype_v<dm::float8_e5m2fnuz>, kDLFloat8_e5m2fnuz, 8));
  static_assert(is(dm::dtype_v<dm::float8_e8m0fnu>, kDLFloat8_e8m0fnu, 8));
  static_assert(is(dm::dtype_v<dm::float6_e2m3fn>, kDLFloat6_e2m3fn, 6));
  static_assert(is(dm::dtype_v<dm::float6_e3m2fn>, kDLFloat6_e3m2fn, 6));
  static_assert(is(dm::dtype_v<dm::float4_e2m1fn>, kDLFloat4_e2m1fn, 4));
  // DLPack 1.3's numbering, which ml_dtypes-aware producers (JAX) report.
  static_assert(kDLFloat8_e3m4 == 7 && kDLFloat8_e8m0fnu == 14 && kDLFloat6_e2m3fn == 15 && kDLFloat4_e2m1fn == 17);
}

TEST_CASE_TEMPLATE("a narrow float is one raw byte, storage only", T, dm::float8_e3m4, dm::float8_e4m3,
                   dm::float8_e4m3b11fnuz, dm::float8_e4m3fn, dm::float8_e4m3fnuz, dm::float8_e5m2,
                   dm::float8_e5m2fnuz, dm::float8_e8m0fnu, dm::float6_e2m3fn, dm::float6_e3m2fn,
                   dm::float4_e2m1fn) {
  static_assert(sizeof(T) == 1 && alignof(T) == 1);
  static_assert(std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T> && std::is_aggregate_v<T>);
  static_assert(std::is_same_v<decltype(T::bits), std::uint8_t>);
  static_assert(dm::has_dtype<T> && dm::has_dtype<const T>);
  constexpr T x{0x5a};
  static_assert(std::bit_cast<std::uint8_t>(x) == 0x5a);  // the byte is the value's bits
  CHECK(name_of<T> != "?");
}

TEST_CASE_TEMPLATE("managed export: fp8 is whole bytes, fp6 and fp4 are flagged padded, views get the bytes back", T,
                   dm::float8_e3m4, dm::float8_e4m3, dm::float8_e4m3b11fnuz, dm::float8_e4m3fn, dm::float8_e4m3fnuz,
                   dm::float8_e5m2, dm::float8_e5m2fnuz, dm::float8_e8m0fnu, dm::float6_e2m3fn, dm::float6_e3m2fn,
                   dm::float4_e2m1fn) {
  constexpr bool sub_byte = dm::dtype_v<T>.bits < 8;
  const std::uint8_t mask = sub_byte ? static_cast<std::uint8_t>((1u << dm::dtype_v<T>.bits) - 1) : 0xff;
  std::vector<T> values(6);
  for (std::size_t i = 0; i < values.size(); ++i) values[i].bits = static_cast<std::uint8_t>((0x31 * i + 7) & mask);
  T* data = values.data();
  std::mdspan<T, std::dextents<int, 2>> md(data, 2, 3);
  auto t = dm::to_managed_tensor(md, std::move(values));
  CHECK(dm::same_dtype(t.tensor().dtype, dm::dtype_v<T>));
  CHECK(((t.flags() & dm::flag_is_subbyte_type_padded) != 0) == sub_byte);
  auto v = t.template view<right<const T, 2>>();
  CHECK(v.data_handle() == data);
  CHECK(v[1, 2].bits == ((0x31 * 5 + 7) & mask));
  // Runtime dispatch over the eleven types finds this one given the tensor's flags (padded
  // sub-byte storage); without them, padded storage reads as packed.
  CHECK(dispatched_name<matrix_of>(t.tensor(), t.flags()) == name_of<T>);
  CHECK(dispatched_name<matrix_of>(t.tensor()) == (sub_byte ? std::string_view("error") : name_of<T>));
  // A copy keeps dtype and flags.
  auto copy = dm::to_managed_tensor_copy(md);
  CHECK(copy.flags() == (dm::flag_is_copied | (sub_byte ? dm::flag_is_subbyte_type_padded : 0)));
  CHECK(copy.template view<right<const T, 2>>()[1, 2].bits == v[1, 2].bits);
}

TEST_CASE("hand-made tensors: fp8 imports from a bare DLTensor, fp6 / fp4 only when marked padded") {
  std::uint8_t bytes[4] = {0x00, 0x38, 0x40, 0x44};  // ml_dtypes float8_e4m3fn: 0, 1, 2, 3
  tensor_builder e4m3fn(bytes, dlpm_test::dt(kDLFloat8_e4m3fn, 8), {4}, {1});
  auto m = dm::to_mdspan<right<const dm::float8_e4m3fn, 1>>(e4m3fn.get());
  CHECK(static_cast<const void*>(m.data_handle()) == bytes);
  CHECK(m[1].bits == 0x38);
  CHECK(dispatched_name(e4m3fn.get()) == "float8_e4m3fn");
  // A neighbouring code is another type, never silently the same bytes.
  CHECK(import_error<right<dm::float8_e4m3, 1>>(e4m3fn.get()) == dm::errc::dtype_mismatch);
  CHECK(import_error<right<dm::float8_e4m3fnuz, 1>>(e4m3fn.get()) == dm::errc::dtype_mismatch);
  CHECK(import_error<right<std::uint8_t, 1>>(e4m3fn.get()) == dm::errc::dtype_mismatch);
  // fp8 with lanes 2 (CUDA's __nv_fp8x2_e4m3) is not the scalar type either.
  tensor_builder pairs(bytes, dlpm_test::dt(kDLFloat8_e4m3fn, 8, 2), {2}, {1});
  CHECK(import_error<right<dm::float8_e4m3fn, 1>>(pairs.get()) == dm::errc::dtype_mismatch);

  // ml_dtypes float4_e2m1fn 0.5, 1, 6, -6: one value per byte, in the low nibble.
  std::uint8_t fp4[4] = {0x1, 0x2, 0x7, 0xf};
  tensor_builder e2m1(fp4, dlpm_test::dt(kDLFloat4_e2m1fn, 4), {4}, {1});
  CHECK(import_error<right<dm::float4_e2m1fn, 1>>(e2m1.get()) == dm::errc::subbyte_not_viewable);  // read as packed
  auto q = padded_view<right<const dm::float4_e2m1fn, 1>>(e2m1.get());
  CHECK(q.extent(0) == 4);
  CHECK(q[3].bits == 0xf);
  CHECK(dispatched_name(e2m1.get()) == "error");

  std::uint8_t fp6[3] = {0x08, 0x0c, 0x3f};
  tensor_builder e2m3(fp6, dlpm_test::dt(kDLFloat6_e2m3fn, 6), {3}, {1});
  tensor_builder e3m2(fp6, dlpm_test::dt(kDLFloat6_e3m2fn, 6), {3}, {1});
  CHECK(import_error<right<dm::float6_e2m3fn, 1>>(e2m3.get()) == dm::errc::subbyte_not_viewable);
  CHECK(padded_view<right<const dm::float6_e2m3fn, 1>>(e2m3.get())[0].bits == 0x08);
  CHECK(padded_view<strided<const dm::float6_e3m2fn, 1>>(e3m2.get())[2].bits == 0x3f);
  auto other = dm::try_view<right<dm::float6_e3m2fn, 1>>(e2m3.get(), dm::flag_is_subbyte_type_padded);
  CHECK((!other && other.error().code() == dm::errc::dtype_mismatch));
  // A packed fp4 pair (lanes 2, PyTorch's float4_e2m1fn_x2) is not one fp4 per byte.
  tensor_builder fp4x2(fp4, dlpm_test::dt(kDLFloat4_e2m1fn, 4, 2), {4}, {1});
  CHECK(import_error<right<dm::float4_e2m1fn, 1>>(fp4x2.get()) == dm::errc::dtype_mismatch);
}

TEST_CASE("padded narrow floats cannot leave as legacy tensors or bare views unflagged by accident") {
  dm::float4_e2m1fn values[2] = {{0x2}, {0x7}};
  auto t = dm::to_managed_tensor(std::mdspan<dm::float4_e2m1fn, std::dextents<int, 1>>(values, 2), 0);
  CHECK((t.flags() & dm::flag_is_subbyte_type_padded) != 0);
  // versioned_to_legacy refuses padded tensors: a legacy consumer would read them as packed.
  DLManagedTensorVersioned* raw = t.release();
  auto legacy = dm::versioned_to_legacy(raw);
  REQUIRE(!legacy);
  CHECK(legacy.error().code() == dm::errc::invalid_argument);
  auto back = dm::managed_tensor::adopt(raw);  // refused, so still ours
  CHECK(back.view<right<const dm::float4_e2m1fn, 1>>()[1].bits == 0x7);
}
