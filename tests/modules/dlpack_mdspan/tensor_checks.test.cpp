// check_structure / validate / numel / nbytes: the type-free core.
#include "support/prelude.hpp"
#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

namespace dm = dlpack_mdspan;
using dlpm_test::dt;
using dlpm_test::i32;
using dlpm_test::tensor_builder;

namespace {
dm::errc validate_error(const DLTensor& t) {
  dm::error e;
  return dm::validate(t, &e) ? dm::errc::ok : e.code();
}
}  // namespace

TEST_CASE("a well-formed tensor passes and is summarised") {
  int buf[12] = {};
  tensor_builder b(buf + 8, i32, {3, 4}, {-4, 1});
  dm::tensor_summary s;
  dm::error e;
  REQUIRE(dm::check_structure(b.get(), {}, s, &e));
  CHECK(s.numel == 12);
  CHECK(s.lowest_index == -8);
  CHECK(s.highest_index == 3);
  CHECK(s.itemsize == 4);
}

TEST_CASE("dtype well-formedness: lanes, bit widths and type codes") {
  dm::error e;
  CHECK(dm::check_dtype(dt(kDLFloat, 16), &e));
  CHECK(dm::check_dtype(dt(kDLBfloat, 16), &e));
  CHECK(dm::check_dtype(dt(kDLFloat4_e2m1fn, 4, 2), &e));
  CHECK(dm::check_dtype(dt(kDLFloat6_e3m2fn, 6), &e));
  CHECK_FALSE(dm::check_dtype(dt(kDLInt, 6), &e));
  CHECK(std::string(e.what()) == "dtype (code 0, bits 6, lanes 1): impossible bit width for this type code");
  CHECK_FALSE(dm::check_dtype(dt(kDLFloat, 0), &e));
  CHECK_FALSE(dm::check_dtype(dt(kDLInt, 32, 0), &e));
  CHECK(e.code() == dm::errc::invalid_dtype);
  CHECK_FALSE(dm::check_dtype(dt(200, 32), &e));
  CHECK(std::string(e.what()) == "dtype (code 200, bits 32, lanes 1): unknown type code");
}

TEST_CASE("structural failures have their own codes") {
  int buf[4] = {};
  tensor_builder neg(buf, i32, {-1}, {1});
  CHECK(validate_error(neg.get()) == dm::errc::negative_extent);
  tensor_builder overflow(buf, i32, {std::int64_t{1} << 32, std::int64_t{1} << 32}, {1, 1});
  CHECK(validate_error(overflow.get()) == dm::errc::span_overflow);
  tensor_builder null_data(nullptr, i32, {2}, {1});
  CHECK(validate_error(null_data.get()) == dm::errc::null_data);
  tensor_builder empty_null(nullptr, i32, {0}, {1});
  CHECK(validate_error(empty_null.get()) == dm::errc::ok);
  tensor_builder min(buf, i32, {2}, {std::numeric_limits<std::int64_t>::min()});
  CHECK(validate_error(min.get()) == dm::errc::stride_overflow);
  tensor_builder off(buf, i32, {2}, {1}, 6);
  CHECK(validate_error(off.get()) == dm::errc::misaligned_byte_offset);
  tensor_builder scalar(buf, i32, {}, {});
  DLTensor t = scalar.get();
  t.ndim = 100;
  CHECK(validate_error(t) == dm::errc::invalid_ndim);
}

TEST_CASE("numel and nbytes, packed sub-byte aware and overflow-checked") {
  unsigned char buf[8] = {};
  tensor_builder fp4(buf, dt(kDLFloat4_e2m1fn, 4), {3}, {1});
  CHECK(*dm::numel(fp4.get()) == 3);
  CHECK(*dm::nbytes(fp4.get()) == 2);
  tensor_builder pairs(buf, dt(kDLFloat4_e2m1fn, 4, 2), {3}, {1});
  CHECK(*dm::nbytes(pairs.get()) == 3);
  tensor_builder cplx(buf, dt(kDLComplex, 64), {2, 2}, {2, 1});
  CHECK(*dm::nbytes(cplx.get()) == 32);
  tensor_builder big(buf, dt(kDLFloat, 64), {std::int64_t{1} << 61}, {1});
  CHECK(dm::nbytes(big.get()).error().code() == dm::errc::span_overflow);
  tensor_builder rank0(buf, dt(kDLFloat, 64), {}, {});
  CHECK(*dm::numel(rank0.get()) == 1);
}

TEST_CASE("implicit row-major strides of an empty tensor saturate instead of overflowing") {
  // Found by the Rust crate's UBSan run: shape {0, 2^40, 2^40} with NULL strides.
  auto b = tensor_builder::without_strides(nullptr, dt(kDLUInt, 8), {0, std::int64_t{1} << 40, std::int64_t{1} << 40});
  dm::error e;
  CHECK(dm::validate(b.get(), &e));
  CHECK(dm::stride_at(b.get(), 0) == std::numeric_limits<std::int64_t>::max());
  CHECK(dm::stride_at(b.get(), 1) == std::int64_t{1} << 40);
  float one = 0;
  auto r = dm::try_make_managed_tensor(b.get(), 0);
  REQUIRE(r.has_value());
  CHECK(r->tensor().strides[2] == 1);
  (void)one;
}
