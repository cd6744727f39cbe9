// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

// compact_strides writes every dimension's stride in one pass: row-major, the strides
// stride_at reads for NULL strides (saturating the same way), or column-major, the same
// product from the outermost dimension in; with a copy of the shape where asked.
TEST_CASE("compact_strides is stride_at of every dimension, or its column-major mirror") {
  const std::int64_t big = std::int64_t{1} << 40;
  const std::vector<std::vector<std::int64_t>> shapes = {
      {}, {5}, {2, 3}, {3, 1, 4}, {2, 3, 4, 5, 6, 7, 8, 9}, {0, big, big}, {big, big, 0}, {1, 0, big, big, 3},
      std::vector<std::int64_t>(64, 2)};
  for (const auto& shape : shapes) {
    const auto ndim = static_cast<std::int32_t>(shape.size());
    CAPTURE(ndim);
    std::vector<std::int64_t> row(shape.size() + 1, -7), column(shape.size() + 1, -7);
    std::vector<std::int64_t> copied(shape.size() + 1, -7);
    dm::detail::compact_strides<dm::stride_rule::row_major>(shape.data(), ndim, row.data());
    dm::detail::compact_strides<dm::stride_rule::column_major>(shape.data(), ndim, column.data(), copied.data());
    CHECK(std::equal(shape.begin(), shape.end(), copied.begin()));
    CHECK(copied.back() == -7);
    CHECK(row.back() == -7);  // nothing past ndim is written
    CHECK(column.back() == -7);
    DLTensor t{};
    t.ndim = ndim;
    t.shape = const_cast<std::int64_t*>(shape.data());
    std::vector<std::int64_t> reversed(shape.rbegin(), shape.rend());
    DLTensor mirror = t;
    mirror.shape = reversed.data();
    for (std::int32_t r = 0; r < ndim; ++r) {
      CAPTURE(r);
      CHECK(row[static_cast<std::size_t>(r)] == dm::stride_at(t, r));
      CHECK(column[static_cast<std::size_t>(r)] == dm::stride_at(mirror, ndim - 1 - r));
    }
  }
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

// ---- Soundness at the extremes (each case was undefined behaviour or a wrong answer) ----

TEST_CASE("a byte span reaching INT64_MIN below the data is refused, not negated") {
  // first_byte == INT64_MIN: negating it to test for address wrap-around was UB.
  float buf[32] = {};
  tensor_builder b(reinterpret_cast<unsigned char*>(buf) + 64, dlpm_test::f32, {2, 3}, {0, -(std::int64_t{1} << 60)});
  dm::error e;
  dm::tensor_summary s;
  CHECK_FALSE(dm::check_structure(b.get(), {}, s, &e));
  CHECK((e.code() == dm::errc::byte_offset_overflow || e.code() == dm::errc::span_overflow));
  CHECK_FALSE(e.message().empty());
}

TEST_CASE("an empty tensor has 0 elements whatever the order of its extents") {
  const std::int64_t big = std::int64_t{1} << 32;
  for (auto shape : {std::array<std::int64_t, 3>{big, big, 0}, {0, big, big}, {big, 0, big}}) {
    tensor_builder b(nullptr, i32, {shape[0], shape[1], shape[2]}, {1, 1, 1});
    CHECK(validate_error(b.get()) == dm::errc::ok);
    REQUIRE(dm::numel(b.get()).has_value());
    CHECK(*dm::numel(b.get()) == 0);
    CHECK(*dm::nbytes(b.get()) == 0);
  }
  // A negative extent anywhere is still an error, also after a zero.
  tensor_builder neg(nullptr, i32, {0, -3}, {1, 1});
  CHECK(validate_error(neg.get()) == dm::errc::negative_extent);
  CHECK(dm::numel(neg.get()).error().code() == dm::errc::negative_extent);
}

TEST_CASE("nbytes has no intermediate overflow: int8 {2^60} is 2^60 bytes") {
  unsigned char buf[1] = {};
  tensor_builder b(buf, dt(kDLInt, 8), {std::int64_t{1} << 60}, {1});
  REQUIRE(dm::nbytes(b.get()).has_value());
  CHECK(*dm::nbytes(b.get()) == std::int64_t{1} << 60);
  tensor_builder fp4(buf, dt(kDLFloat4_e2m1fn, 4), {std::numeric_limits<std::int64_t>::max()}, {1});
  CHECK(*dm::nbytes(fp4.get()) == std::int64_t{1} << 62);  // ceil((2^63 - 1) / 2)
  tensor_builder too_big(buf, dt(kDLInt, 16), {std::numeric_limits<std::int64_t>::max()}, {1});
  CHECK(dm::nbytes(too_big.get()).error().code() == dm::errc::span_overflow);
}

TEST_CASE("an extent-1 dimension's stride never matters, even INT64_MIN") {
  int buf[4] = {};
  tensor_builder b(buf, i32, {1, 3}, {std::numeric_limits<std::int64_t>::min(), 1});
  dm::tensor_summary s;
  dm::error e;
  REQUIRE(dm::check_structure(b.get(), {}, s, &e));
  CHECK(s.lowest_index == 0);
  CHECK(s.highest_index == 2);
  // Not C-contiguous, so the span pass reads every dimension: the extent-1 one adds nothing
  // there either, in the runtime check and in a typed import into layout_stride_relaxed.
  tensor_builder strided(buf, i32, {1, 2, 2}, {std::numeric_limits<std::int64_t>::min(), 1, 2});
  REQUIRE_MESSAGE(dm::check_structure(strided.get(), {}, s, &e), e.message().c_str());
  CHECK(s.lowest_index == 0);
  CHECK(s.highest_index == 3);
  using relaxed3 = std::mdspan<int, std::dextents<std::int64_t, 3>, dm::layout_stride_relaxed>;
  CHECK(dm::try_to_mdspan<relaxed3>(strided.get()).has_value());
}

TEST_CASE("element_byte_offset checks every index before any arithmetic") {
  // Empty {3, 0} with strides {INT64_MAX, 1}: index {2, 0} multiplied 2 * INT64_MAX first.
  int buf[1] = {};
  tensor_builder empty(buf, i32, {3, 0}, {std::numeric_limits<std::int64_t>::max(), 1});
  const std::int64_t index[] = {2, 0};
  std::int64_t out = -1;
  dm::error e;
  CHECK_FALSE(dm::element_byte_offset(empty.get(), index, &out, &e));
  CHECK(e.code() == dm::errc::invalid_argument);
  CHECK(out == -1);
  // Strides {2^62, 2^62, 1} overflow on the sum and the byte scaling: refused by validate.
  const std::int64_t p62 = std::int64_t{1} << 62;
  tensor_builder wide(buf, i32, {2, 2, 1}, {p62, p62, 1});
  CHECK(validate_error(wide.get()) == dm::errc::span_overflow);
  // In bounds on a valid tensor: the exact offset, including byte_offset.
  tensor_builder fine(buf, i32, {2, 3}, {3, 1}, 8);
  const std::int64_t last[] = {1, 2};
  REQUIRE(dm::element_byte_offset(fine.get(), last, &out, &e));
  CHECK(out == 8 + 5 * 4);
}

TEST_CASE("misaligned shape or strides pointers are refused before anything is read") {
  alignas(8) std::int64_t storage[4] = {2, 3, 3, 1};
  int buf[6] = {};
  DLTensor t{};
  t.data = buf;
  t.dtype = i32;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.shape = reinterpret_cast<std::int64_t*>(reinterpret_cast<unsigned char*>(storage) + 1);
  t.strides = storage + 2;
  CHECK(validate_error(t) == dm::errc::misaligned_metadata);
  CHECK(dm::numel(t).error().code() == dm::errc::misaligned_metadata);
  t.shape = storage;
  t.strides = reinterpret_cast<std::int64_t*>(reinterpret_cast<unsigned char*>(storage + 2) + 4);
  CHECK(validate_error(t) == dm::errc::misaligned_metadata);
  t.strides = storage + 2;
  CHECK(validate_error(t) == dm::errc::ok);
}

TEST_CASE("element_byte_offset works in elements first: no intermediate overflow (found by the differential test)") {
  // byte_offset near INT64_MAX and a large negative offset: offset * itemsize alone overflows.
  const std::int64_t p60 = std::int64_t{1} << 60;
  const std::uint64_t byte_offset = (std::uint64_t{1} << 63) - 8;
  alignas(64) float buf[16] = {};
  tensor_builder b(buf, dlpm_test::f32, {4, 3, 1}, {-2, -p60, 1}, byte_offset);
  dm::error e;
  REQUIRE(dm::validate(b.get(), &e));
  const std::int64_t index[] = {3, 2, 0};
  std::int64_t out = 0;
  REQUIRE(dm::element_byte_offset(b.get(), index, &out, &e));
  CHECK(out == -32);  // (byte_offset / 4 - 6 - 2^61) * 4
}

TEST_CASE("dtype_name spells dtypes as NumPy and ml_dtypes do, and malformed ones raw") {
  auto name = [](DLDataType d) { return std::string(dm::dtype_name(d).c_str()); };
  CHECK(name(dt(kDLFloat, 32)) == "float32");
  CHECK(name(dt(kDLFloat, 16)) == "float16");
  CHECK(name(dt(kDLInt, 8)) == "int8");
  CHECK(name(dt(kDLUInt, 64)) == "uint64");
  CHECK(name(dt(kDLInt, 4)) == "int4");
  CHECK(name(dt(kDLBool, 8)) == "bool");
  CHECK(name(dt(kDLBool, 1)) == "bool1");
  CHECK(name(dt(kDLBfloat, 16)) == "bfloat16");
  CHECK(name(dt(kDLComplex, 64)) == "complex64");
  CHECK(name(dt(kDLOpaqueHandle, 64)) == "handle64");
  CHECK(name(dt(kDLFloat8_e4m3fn, 8)) == "float8_e4m3fn");
  CHECK(name(dt(kDLFloat8_e4m3b11fnuz, 8)) == "float8_e4m3b11fnuz");
  CHECK(name(dt(kDLFloat8_e8m0fnu, 8)) == "float8_e8m0fnu");
  CHECK(name(dt(kDLFloat6_e3m2fn, 6)) == "float6_e3m2fn");
  CHECK(name(dt(kDLFloat4_e2m1fn, 4, 2)) == "float4_e2m1fnx2");
  CHECK(name(dt(kDLFloat, 32, 4)) == "float32x4");
  // What check_dtype refuses is shown as its three numbers, never under a plausible name.
  CHECK(name(dt(kDLFloat, 32, 0)) == "(code 2, bits 32, lanes 0)");
  CHECK(name(dt(kDLFloat, 12)) == "(code 2, bits 12, lanes 1)");
  CHECK(name(dt(kDLFloat8_e5m2, 16)) == "(code 12, bits 16, lanes 1)");
  CHECK(name(dt(255, 255, 65535)) == "(code 255, bits 255, lanes 65535)");
  // Usable in constant expressions: no allocation, no formatting library.
  static_assert(dm::dtype_name(DLDataType{kDLFloat, 64, 1}).text[6] == '4');
}

TEST_CASE("check_tensor returns the checked tensor with what the check learned") {
  int buf[12] = {};
  tensor_builder b(buf + 8, i32, {3, 4}, {-4, 1});
  const auto c = dm::check_tensor(b.get());
  REQUIRE(c);
  CHECK(&c->tensor() == &b.get());
  CHECK(c->flags() == 0);
  CHECK(c->numel() == 12);
  CHECK(c->itemsize() == 4);
  CHECK(c->lowest_index() == -8);
  CHECK(c->highest_index() == 3);
  CHECK(c->stride(0) == -4);
  CHECK(c->stride(1) == 1);
  CHECK_FALSE(c->row_major());
  CHECK_FALSE(c->column_major());
  CHECK(*c->element_bytes() == 4);

  // NULL strides are resolved row-major; a (1, N) tensor is both orders.
  auto row = tensor_builder::without_strides(buf, i32, {1, 12});
  const auto r = dm::check_tensor(row.get());
  REQUIRE(r);
  CHECK(r->implicit_strides());
  CHECK(r->row_major());
  CHECK(r->column_major());
  CHECK(r->stride(0) == 12);

  // A refusal is check_structure's error, worded.
  tensor_builder negative(buf, i32, {3, -4}, {4, 1});
  const auto n = dm::check_tensor(negative.get());
  REQUIRE_FALSE(n);
  CHECK(n.error().code() == dm::errc::negative_extent);
}

TEST_CASE("the sub-byte rule is one statement: check_element_bytes") {
  dm::error e;
  // Packed sub-byte elements have no byte address: refused for any element size.
  CHECK_FALSE(dm::check_element_bytes(dt(kDLFloat4_e2m1fn, 4), false, 0, &e));
  CHECK(e.code() == dm::errc::subbyte_not_viewable);
  CHECK(std::string_view(e.message().c_str()) ==
        "dtype float4_e2m1fn is packed, which cannot be viewed as one whole-byte element each");
  // Padded, one byte per lane: a whole-byte element, but not a 2-byte one.
  CHECK(dm::check_element_bytes(dt(kDLFloat4_e2m1fn, 4), true, 0, &e));
  CHECK(dm::check_element_bytes(dt(kDLFloat4_e2m1fn, 4), true, 1, &e));
  CHECK_FALSE(dm::check_element_bytes(dt(kDLFloat4_e2m1fn, 4), true, 2, &e));
  CHECK(std::string_view(e.message().c_str()) ==
        "dtype float4_e2m1fn is stored one byte per lane (padded), which cannot be viewed as one 2-byte element each");
  CHECK(dm::check_element_bytes(dt(kDLFloat4_e2m1fn, 4, 2), false, 1, &e));
  // Whole bytes of another size are the dtype's mismatch, not sub-byte storage.
  CHECK_FALSE(dm::check_element_bytes(dt(kDLFloat, 32), false, 8, &e));
  CHECK(e.code() == dm::errc::dtype_mismatch);
  CHECK(std::string_view(e.message().c_str()) == "dtype float32 has 4-byte elements, where 8-byte elements are required");

  // Every place that addresses elements one by one says it in these words.
  std::uint8_t bytes[8] = {};
  tensor_builder fp4(bytes, dt(kDLFloat4_e2m1fn, 4), {4}, {1});
  const auto c = dm::check_tensor(fp4.get());
  REQUIRE(c);
  CHECK(c->itemsize() == 0);
  const auto item = c->element_bytes();
  REQUIRE_FALSE(item);
  CHECK(item.error().message().view() ==
        std::string_view("dtype float4_e2m1fn is packed, which cannot be viewed as one whole-byte element each"));
  std::int64_t extents[dm::max_ndim], steps[dm::max_ndim];
  const auto loops = dm::coalesce(*c, extents, steps);
  REQUIRE_FALSE(loops);
  CHECK(loops.error().message().view() == item.error().message().view());
  const std::int64_t index[1] = {1};
  const auto offset = dm::element_offset(*c, index);
  REQUIRE_FALSE(offset);
  CHECK(offset.error().message().view() == item.error().message().view());
  dm::error old;
  std::int64_t out = 0;
  CHECK_FALSE(dm::element_byte_offset(fp4.get(), index, &out, &old));
  CHECK(old.message().view() == item.error().message().view());
  // The byte span of packed elements is total: four fp4 values from element 0 are 2 bytes.
  const auto span = dm::byte_span(*c);
  CHECK(span.begin == 0);
  CHECK(span.end == 2);
}

TEST_CASE("the queries over a checked tensor cannot fail on structure") {
  float buf[24] = {};
  tensor_builder reversed(buf + 18, dt(kDLFloat, 32), {4, 6}, {-6, 1});
  const auto c = dm::check_tensor(reversed.get());
  REQUIRE(c);
  const dm::byte_range span = dm::byte_span(*c);
  CHECK(span.begin == -18 * 4);
  CHECK(span.end == 6 * 4);
  CHECK(dm::is_unique(*c));
  std::int64_t extents[dm::max_ndim], steps[dm::max_ndim];
  const auto loops = dm::coalesce(*c, extents, steps);
  REQUIRE(loops);
  CHECK(loops->ndim == 1);
  CHECK(extents[0] == 4);
  CHECK(steps[0] == -24);
  CHECK(loops->block == 6);
  const std::int64_t index[2] = {3, 5};
  CHECK(*dm::element_offset(*c, index) == (3 * -6 + 5) * 4);  // from data, which is element 0 here
  const std::int64_t outside[2] = {4, 0};
  CHECK(dm::element_offset(*c, outside).error().code() == dm::errc::invalid_argument);

  tensor_builder broadcast(buf, dt(kDLFloat, 32), {4, 6}, {0, 1});
  const auto b = dm::check_tensor(broadcast.get());
  REQUIRE(b);
  CHECK_FALSE(dm::is_unique(*b));
}

TEST_CASE("a packed sub-byte tensor whose bytes pass INT64_MAX is refused by the structure") {
  std::uint8_t bytes[8] = {};
  // Four int4 values from byte_offset INT64_MAX - 1: their bytes end at INT64_MAX + 1.
  tensor_builder past(bytes, dt(kDLInt, 4), {4}, {1}, static_cast<std::uint64_t>(INT64_MAX) - 1);
  dm::error e;
  CHECK_FALSE(dm::validate(past.get(), &e));
  CHECK(e.code() == dm::errc::span_overflow);
  CHECK_FALSE(dm::check_tensor(past.get()));
  // Exact, with no intermediate product past int64: a stride of 2^61 over 4 int4 indices
  // reaches bit 4 * (3 * 2^61 + 1), past INT64_MAX, but byte 1.5 * 2^61 + 1, which fits.
  tensor_builder far(bytes, dt(kDLInt, 4), {4}, {std::int64_t{1} << 61});
  const auto c = dm::check_tensor(far.get());
  REQUIRE(c);
  const auto span = dm::byte_span(*c);
  CHECK(span.begin == 0);
  CHECK(span.end == 3 * (std::int64_t{1} << 60) + 1);
}

namespace {
// What check_structure's span pass, into std::layout_stride (positive strides), learned
// about the order of the strides: tensor_summary::ordered_unique.
template <int Rank>
bool ordered_unique(const DLTensor& t) {
  dm::tensor_summary s;
  dm::error e;
  REQUIRE(dm::check_structure<Rank, 1, dm::stride_rule::positive>(t, {}, s, &e));
  return s.ordered_unique;
}
}  // namespace

TEST_CASE("layout_stride's span pass sees a slice's and a transpose's unique order, and no other") {
  const DLDataType i8 = dt(kDLInt, 8);
  std::int8_t buf[64] = {};
  using M2 = std::mdspan<std::int8_t, std::dextents<std::int64_t, 2>, std::layout_stride>;
  using M3 = std::mdspan<std::int8_t, std::dextents<std::int64_t, 3>, std::layout_stride>;
  SUBCASE("a slice: each stride at least the next one's end, the chain met with equality too") {
    tensor_builder b(buf, i8, {2, 3, 4}, {15, 5, 1});
    CHECK(ordered_unique<3>(b.get()));
    tensor_builder tight(buf, i8, {2, 3, 4}, {12, 4, 1});  // row-major itself
    CHECK(ordered_unique<3>(tight.get()));
  }
  SUBCASE("a transpose: each stride at least the previous one's end") {
    tensor_builder b(buf, i8, {4, 3, 2}, {1, 4, 12});
    CHECK(ordered_unique<3>(b.get()));
  }
  SUBCASE("a permutation is unique in neither order: the import's sort decides") {
    tensor_builder b(buf, i8, {3, 2, 4}, {4, 12, 1});
    CHECK_FALSE(ordered_unique<3>(b.get()));
    CHECK(dm::try_to_mdspan<M3>(b.get()).has_value());
  }
  SUBCASE("overlapping strides are ordered in neither direction, and refused") {
    tensor_builder b(buf, i8, {2, 3}, {2, 1});  // 3 * 1 > 2, and 1 < 2 * 2
    CHECK_FALSE(ordered_unique<2>(b.get()));
    CHECK(dm::try_to_mdspan<M2>(b.get()).error().code() == dm::errc::overlapping_strides);
    tensor_builder one_link(buf, i8, {2, 3, 4}, {15, 5, 2});  // the inner link fails: 4 * 2 > 5
    CHECK_FALSE(ordered_unique<3>(one_link.get()));
  }
  SUBCASE("an extent-1 dimension is no link of either chain") {
    tensor_builder b(buf, i8, {2, 1, 4}, {5, 1000, 1});  // not row-major (5, not 4): the span pass decides
    CHECK(ordered_unique<3>(b.get()));
  }
  SUBCASE("a dimension whose end overflows int64 decides no order, though its span fits") {
    constexpr std::int64_t big = (std::int64_t{1} << 62) + 1;  // reach 2^62 + 1 fits; the end, 2^63 + 2, does not
    tensor_builder b(buf, i8, {2, 2}, {1, big});
    CHECK_FALSE(ordered_unique<2>(b.get()));
    tensor_builder descending(buf, i8, {2, 2}, {big, 1});
    CHECK_FALSE(ordered_unique<2>(descending.get()));
  }
}

TEST_CASE("a typed import's element count reads an extent-1 dimension's stride as free, and no other") {
  const DLDataType i8 = dt(kDLInt, 8);
  std::int8_t buf[64] = {};
  using Right = std::mdspan<std::int8_t, std::dextents<std::int64_t, 3>, std::layout_right>;
  dm::tensor_summary s;
  dm::error e;
  SUBCASE("row-major but for the extent-1 dimension's own stride, wherever it sits") {
    tensor_builder middle(buf, i8, {2, 1, 3}, {3, 1000, 1});
    tensor_builder outer(buf, i8, {1, 2, 3}, {-7, 3, 1});
    tensor_builder inner(buf, i8, {2, 3, 1}, {3, 1, 0});
    for (tensor_builder* b : {&middle, &outer, &inner}) {
      REQUIRE(dm::check_structure<3, 1, dm::stride_rule::row_major>(b->get(), {}, s, &e));
      CHECK(s.row_major);
      CHECK(s.numel == 6);
      CHECK(dm::try_to_mdspan<Right>(b->get()).has_value());
    }
  }
  SUBCASE("a stride that differs where the extent is not 1 is no row-major one") {
    tensor_builder b(buf, i8, {2, 1, 3}, {4, 1000, 1});
    REQUIRE(dm::check_structure<3, 1, dm::stride_rule::positive>(b.get(), {}, s, &e));
    CHECK_FALSE(s.row_major);
    CHECK(dm::try_to_mdspan<Right>(b.get()).error().code() == dm::errc::non_compact_strides);
  }
}

namespace {
// The runtime form's silent rules (check_tensor, whose one silent pass writes the summary it
// keeps; validate) and its worded ones (check_structure with an error): the same verdict,
// and on success the same summary.
dm::errc runtime_silent_and_worded(const DLTensor& t) {
  dm::tensor_summary worded;
  dm::error e;
  const bool accepted = dm::check_structure(t, {}, worded, &e);
  dm::error validated;
  REQUIRE(dm::validate(t, &validated) == accepted);
  if (!accepted) CHECK(validated.code() == e.code());
  const auto silent = dm::check_tensor(t);
  REQUIRE(static_cast<bool>(silent) == accepted);
  if (!accepted) {
    CHECK(silent.error().code() == e.code());
    return e.code();
  }
  CHECK(silent->numel() == worded.numel);
  CHECK(silent->itemsize() == worded.itemsize);
  CHECK(silent->lowest_index() == worded.lowest_index);
  CHECK(silent->highest_index() == worded.highest_index);
  CHECK(silent->row_major() == worded.row_major);
  CHECK(silent->ordered_unique() == worded.ordered_unique);
  CHECK(silent->implicit_strides() == worded.implicit_strides);
  return dm::errc::ok;
}
}  // namespace

TEST_CASE("the runtime check counts past the first strided dimension in its span pass, with the worded check's verdicts and summary") {
  constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const DLDataType i8 = dt(kDLInt, 8);
  alignas(8) int buf[4096] = {};
  SUBCASE("every rank to 12, the stride differing at each dimension, then an extent 0 or negative past it") {
    // Row-major strides of 2x1x3x2x1x3x2x2x1x2x1x2 (extent-1 axes with any stride among
    // them), the strides of one dimension replaced: reversed, broadcast, doubled.
    const std::int64_t extents[] = {2, 1, 3, 2, 1, 3, 2, 2, 1, 2, 1, 2};
    for (std::size_t rank = 1; rank <= 12; ++rank) {
      for (std::size_t stop = 0; stop < rank; ++stop) {
        for (const int change : {-1, 0, 2, 1}) {
          auto b = tensor_builder::row_major_but_at(buf + 2048, extents, rank, stop, change);
          INFO("rank " << rank << ", dimension " << stop << ", stride times " << change);
          CHECK(runtime_silent_and_worded(b.get()) == dm::errc::ok);
          std::int64_t n = 1;
          for (const std::int64_t e : b.shape) n *= e;
          CHECK(dm::check_tensor(b.get())->numel() == n);
          if (stop > 0) {
            b.shape[0] = 0;
            CHECK(runtime_silent_and_worded(b.get()) == dm::errc::ok);
            CHECK(dm::check_tensor(b.get())->numel() == 0);
            b.shape[0] = -2;
            CHECK(runtime_silent_and_worded(b.get()) == dm::errc::negative_extent);
          }
        }
      }
    }
  }
  SUBCASE("an extent 0 past the stop: empty, whatever the pass would refuse, but for byte_offset's rules") {
    tensor_builder negative_stride(buf, i32, {2, 0, 3}, {-5, 1, 2});
    tensor_builder span(buf, i32, {3, 0, 2}, {std::numeric_limits<std::int64_t>::max(), 1, 2});
    tensor_builder null_data(nullptr, i32, {0, 2, 3}, {1, 7, 2});
    tensor_builder behind_huge_count(buf, i32, {std::int64_t{1} << 40, std::int64_t{1} << 40, 0}, {0, 0, 5});
    for (tensor_builder* b : {&negative_stride, &span, &null_data, &behind_huge_count})
      CHECK(runtime_silent_and_worded(b->get()) == dm::errc::ok);
    tensor_builder misaligned(buf, i32, {0, 2, 3}, {1, 7, 2}, 2);
    CHECK(runtime_silent_and_worded(misaligned.get()) == dm::errc::misaligned_byte_offset);
    tensor_builder past_int64(buf, i32, {0, 2, 3}, {1, 7, 2}, std::uint64_t{1} << 63);
    CHECK(runtime_silent_and_worded(past_int64.get()) == dm::errc::byte_offset_overflow);
  }
  SUBCASE("a count past INT64_MAX is refused though the broadcast's span is small") {
    std::int8_t bytes[8] = {};
    tensor_builder broadcast(bytes, i8, {std::int64_t{1} << 32, std::int64_t{1} << 32, 2}, {0, 0, 1});  // 2^65
    CHECK(runtime_silent_and_worded(broadcast.get()) == dm::errc::span_overflow);
    tensor_builder below(bytes, i8, {(std::int64_t{1} << 31) - 1, std::int64_t{1} << 31, 2}, {0, 0, 1});
    CHECK(runtime_silent_and_worded(below.get()) == dm::errc::ok);
  }
  SUBCASE("an INT64_MIN stride past the stop is refused, and free on an extent-1 axis") {
    std::int8_t bytes[64] = {};
    tensor_builder refused(bytes, i8, {2, 2, 3}, {min, 4, 1});
    CHECK(runtime_silent_and_worded(refused.get()) == dm::errc::stride_overflow);
    tensor_builder free_axis(bytes + 8, i8, {1, 2, 3}, {min, -3, 1});
    CHECK(runtime_silent_and_worded(free_axis.get()) == dm::errc::ok);
  }
  SUBCASE("packed sub-byte elements, NULL data and NULL strides take the same turns") {
    std::int8_t bytes[64] = {};
    tensor_builder int4(bytes, dt(kDLInt, 4), {2, 3, 4}, {16, 1, 3});
    CHECK(runtime_silent_and_worded(int4.get()) == dm::errc::ok);
    tensor_builder null_data(nullptr, i32, {2, 3}, {1, 2});
    CHECK(runtime_silent_and_worded(null_data.get()) == dm::errc::null_data);
    auto implicit = tensor_builder::without_strides(buf, i32, {2, 3, 4});
    CHECK(runtime_silent_and_worded(implicit.get()) == dm::errc::ok);
    auto implicit_overflow = tensor_builder::without_strides(buf, i32, {std::int64_t{1} << 32, std::int64_t{1} << 32});
    CHECK(runtime_silent_and_worded(implicit_overflow.get()) == dm::errc::span_overflow);
  }
}
