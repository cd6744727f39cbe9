// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each facade query that bindings ask instead of re-deriving a rule gives the C++ core's
// answer, over every dtype triple, every device type and many generated tensors.
#include <doctest/doctest.h>

#include <dlpack_mdspan.h>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace dm = dlpack_mdspan;

TEST_CASE("DLPM_MAX_NDIM is the core's max_ndim") { CHECK(DLPM_MAX_NDIM == dm::max_ndim); }

TEST_CASE("dlpm_storage_itemsize is the core's storage_itemsize for every code and bit width") {
  for (int code = 0; code < 24; ++code)
    for (int bits = 0; bits < 256; ++bits)
      for (int lanes : {1, 2, 3, 4, 16})
        for (int padded : {0, 1}) {
          const DLDataType d{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), static_cast<std::uint16_t>(lanes)};
          REQUIRE(dlpm_storage_itemsize(d, padded) == dm::storage_itemsize(d, padded != 0));
        }
}

TEST_CASE("dlpm_is_host_accessible is the core's is_host_accessible for every device type") {
  for (int type = -4; type < 64; ++type) REQUIRE(dlpm_is_host_accessible(type) == (dm::is_host_accessible(type) ? 1 : 0));
}

TEST_CASE("dlpm_device_type_name is the core's device_type_name for every device type") {
  for (int type = -4; type < 64; ++type) REQUIRE(std::string(dlpm_device_type_name(type)) == dm::device_type_name(type));
}

namespace {

// Small random tensors over a real buffer: ranks 0..4, extents 0..4, strides in [-6, 6]
// (or NULL), offsets inside the buffer, whole-byte, packed and padded sub-byte dtypes.
struct random_tensor {
  std::int64_t shape[4] = {}, strides[4] = {};
  DLTensor t{};
  std::uint64_t flags = 0;
  random_tensor(std::mt19937_64& rng, void* base) {
    auto pick = [&](int lo, int hi) { return static_cast<int>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
    static const DLDataType dtypes[] = {{kDLFloat, 32, 1}, {kDLInt, 8, 1}, {kDLUInt, 16, 3}, {kDLFloat4_e2m1fn, 4, 1},
                                        {kDLFloat6_e2m3fn, 6, 1}, {kDLComplex, 64, 1}};
    t.ndim = pick(0, 4);
    t.dtype = dtypes[pick(0, 5)];
    flags = t.dtype.bits < 8 && pick(0, 1) ? dm::flag_is_subbyte_type_padded : 0;
    for (int r = 0; r < t.ndim; ++r) {
      shape[r] = pick(0, 4);
      strides[r] = pick(-6, 6);
    }
    t.shape = t.ndim ? shape : nullptr;
    t.strides = t.ndim && pick(0, 4) ? strides : nullptr;
    const std::uint64_t item = std::max<std::uint64_t>(1, dm::storage_itemsize(t.dtype, flags != 0));
    t.byte_offset = static_cast<std::uint64_t>(pick(0, 64)) * item;
    t.data = base;
    t.device = DLDevice{pick(0, 3) ? kDLCPU : kDLCUDA, 0};
  }
};

}  // namespace

TEST_CASE("dlpm_byte_span and dlpm_managed_copy_to_host give the core's answers on generated tensors") {
  alignas(64) static unsigned char buffer[4096];
  for (std::size_t i = 0; i < sizeof buffer; ++i) buffer[i] = static_cast<unsigned char>(i * 7 + 3);
  unsigned char* middle = buffer + 2048;  // negative strides reach below data
  std::mt19937_64 rng(20261124);
  int compared_spans = 0, compared_copies = 0;
  for (int n = 0; n < 20000; ++n) {
    random_tensor r(rng, middle);
    const DLTensor& t = r.t;
    std::int64_t begin = -1, end = -1;
    const dlpm_status s = dlpm_byte_span(&t, r.flags, &begin, &end);
    const auto core = dm::byte_span(t, r.flags != 0);
    REQUIRE((s == DLPM_OK) == static_cast<bool>(core));
    if (!core) {
      REQUIRE(s == static_cast<dlpm_status>(core.error().code()));
      continue;
    }
    REQUIRE(begin == core->begin);
    REQUIRE(end == core->end);
    ++compared_spans;

    // The copy holds, in row-major order, the bytes of every element the core addresses.
    DLManagedTensorVersioned source{};
    source.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    source.dl_tensor = t;
    source.flags = r.flags;
    DLManagedTensorVersioned* copy = nullptr;
    const dlpm_status c = dlpm_managed_copy_to_host(&source, &copy);
    const auto core_copy = dm::try_copy_to_host(t, r.flags);
    REQUIRE((c == DLPM_OK) == static_cast<bool>(core_copy));
    if (c != DLPM_OK) {
      REQUIRE(c == static_cast<dlpm_status>(core_copy.error().code()));
      continue;
    }
    const std::uint64_t item = dm::storage_itemsize(t.dtype, r.flags != 0);
    std::int64_t numel = 0, nbytes = 0;
    REQUIRE(dlpm_numel(&t, &numel) == DLPM_OK);
    const auto* got = static_cast<const unsigned char*>(copy->dl_tensor.data);
    REQUIRE(copy->flags == (dm::flag_is_copied | r.flags));
    if (item == 0) {  // packed sub-byte: row-major contiguous, the bytes as they are
      REQUIRE(dlpm_nbytes(&t, &nbytes) == DLPM_OK);
      REQUIRE(std::memcmp(got, middle + t.byte_offset, static_cast<std::size_t>(nbytes)) == 0);
    } else {
      std::int64_t index[4] = {};
      for (std::int64_t k = 0; k < numel; ++k) {
        std::int64_t rest = k;
        for (int d = t.ndim - 1; d >= 0; --d) {
          index[d] = rest % t.shape[d];
          rest /= t.shape[d];
        }
        // The element's address by the core's element_byte_offset (whole-byte elements).
        std::int64_t at = static_cast<std::int64_t>(t.byte_offset);
        for (int d = 0; d < t.ndim; ++d) at += index[d] * dm::stride_at(t, d) * static_cast<std::int64_t>(item);
        REQUIRE(std::memcmp(got + k * static_cast<std::int64_t>(item), middle + at, item) == 0);
      }
    }
    dlpm_managed_delete(copy);
    ++compared_copies;
  }
  CHECK(compared_spans > 5000);
  CHECK(compared_copies > 2000);
}

namespace {

// Requirements drawn to hit every rule on random_tensor's tensors: each field "anything"
// or a value near the tensor's own (equal, different, malformed).
struct random_requirements {
  dlpm_requirements req{};
  std::int64_t shape[4] = {};
  std::int32_t devices[2] = {};
  std::int32_t order[4] = {};
  std::int64_t shape_divisors[4] = {}, stride_divisors[4] = {};
  random_requirements(std::mt19937_64& rng, const DLTensor& t) {
    auto pick = [&](int lo, int hi) { return static_cast<int>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
    REQUIRE(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION) == DLPM_OK);
    if (pick(0, 1)) {
      req.check_dtype = 1;
      req.dtype = pick(0, 3) ? t.dtype : DLDataType{kDLFloat, 64, 1};
    }
    const int modes = t.ndim;
    switch (pick(0, 4)) {
      case 0: req.ndim = modes; break;
      case 1: req.ndim = modes + 1; break;
      case 2: req.ndim = pick(-3, 70); break;
      default: break;
    }
    if (req.ndim == modes && pick(0, 1)) {
      for (int r = 0; r < modes; ++r) shape[r] = pick(0, 3) ? t.shape[r] : pick(-1, 4);
      req.shape = shape;
    }
    static const char orders[] = {0, 0, 'C', 'F', 'A', 'Q'};
    req.order = orders[pick(0, 5)];
    switch (pick(0, 3)) {
      case 0:
        devices[0] = kDLCPU;
        devices[1] = kDLCUDAHost;
        req.device_types = devices;
        req.num_device_types = pick(-1, 2);
        break;
      case 1:
        devices[0] = t.device.device_type;
        req.device_types = devices;
        req.num_device_types = 1;
        break;
      default: break;
    }
    if (pick(0, 3) == 0) req.device_id = pick(-2, 1);
    static const std::uint64_t alignments[] = {0, 0, 1, 2, 4, 8, 64, 3};
    req.min_alignment = alignments[pick(0, 7)];
    req.writable = pick(0, 1);
    req.null_strides = pick(0, 3) == 0 ? DLPM_NULL_STRIDES_REJECT : DLPM_NULL_STRIDES_ROW_MAJOR;
    if (pick(0, 3) == 0) req.layout.leading_dim = pick(-2, 3);
    if (modes > 0 && pick(0, 3) == 0) {
      for (int r = 0; r < modes; ++r) order[r] = r;
      std::shuffle(order, order + modes, rng);
      if (pick(0, 5) == 0) order[0] = modes;  // not a permutation
      req.layout.stride_order = order;
      req.layout.compact = pick(0, 1);
    } else if (pick(0, 7) == 0) {
      req.layout.compact = 1;  // without a stride order
    }
    if (modes > 0 && pick(0, 5) == 0) {
      for (int r = 0; r < modes; ++r) shape_divisors[r] = pick(-1, 4);
      req.layout.shape_divisors = shape_divisors;
    }
    if (modes > 0 && pick(0, 5) == 0) {
      for (int r = 0; r < modes; ++r) stride_divisors[r] = pick(-1, 4);
      req.layout.stride_divisors = stride_divisors;
    }
  }
};

}  // namespace

TEST_CASE("dlpm_is_unique is the core's is_unique on generated tensors") {
  alignas(64) static unsigned char buffer[4096];
  std::mt19937_64 rng(20261128);
  int unique = 0, not_unique = 0;
  for (int n = 0; n < 20000; ++n) {
    random_tensor r(rng, buffer + 2048);
    std::int32_t out = -1;
    const dlpm_status s = dlpm_is_unique(&r.t, &out);
    const auto core = dm::is_unique(r.t);
    REQUIRE((s == DLPM_OK) == static_cast<bool>(core));
    if (!core) {
      REQUIRE(s == static_cast<dlpm_status>(core.error().code()));
      REQUIRE(out == -1);
      continue;
    }
    REQUIRE(out == (*core ? 1 : 0));
    (*core ? unique : not_unique) += 1;
  }
  CHECK(unique > 100);
  CHECK(not_unique > 100);
  std::int32_t out = 0;
  CHECK(dlpm_is_unique(nullptr, &out) == DLPM_E_NULL_POINTER);
}

TEST_CASE("dlpm_check_layout refuses what dlpm_check_managed refuses and writes what dlpm_layout writes") {
  alignas(64) static unsigned char buffer[4096];
  unsigned char* middle = buffer + 2048;
  std::mt19937_64 rng(20261125);
  int accepted = 0, refused = 0;
  for (int n = 0; n < 100000; ++n) {
    random_tensor r(rng, middle);
    if (std::uniform_int_distribution<int>(0, 7)(rng) == 0) r.flags |= dm::flag_read_only;
    const DLTensor& t = r.t;
    random_requirements q(rng, t);
    DLManagedTensorVersioned m{};
    m.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    m.dl_tensor = t;
    m.flags = r.flags;
    const dlpm_status separate = dlpm_check_managed(&m, &q.req);
    const std::string message = dlpm_last_error();
    if (r.flags == 0) REQUIRE(dlpm_check(&t, &q.req) == separate);
    std::int64_t strides[DLPM_MAX_NDIM], numel = -7;
    std::fill(std::begin(strides), std::end(strides), -7);
    const dlpm_status joint = dlpm_check_layout(&t, r.flags, &q.req, strides, DLPM_MAX_NDIM, &numel);
    REQUIRE(joint == separate);
    if (joint != DLPM_OK) {
      REQUIRE(message == dlpm_last_error());
      REQUIRE(numel == -7);
      REQUIRE(strides[0] == -7);
      // Without strides: refused alike, unless the capacity was all it lacked.
      if (joint != DLPM_E_INVALID_ARGUMENT || message.rfind("dlpm_check_layout: capacity", 0) != 0) {
        REQUIRE(dlpm_check_layout(&t, r.flags, &q.req, nullptr, 0, &numel) == joint);
        REQUIRE(message == dlpm_last_error());
      }
      ++refused;
      continue;
    }
    ++accepted;
    std::int64_t expected[DLPM_MAX_NDIM], expected_numel = -7;
    std::fill(std::begin(expected), std::end(expected), -7);
    REQUIRE(dlpm_layout(&t, expected, DLPM_MAX_NDIM, &expected_numel) == DLPM_OK);
    REQUIRE(numel == expected_numel);
    for (int k = 0; k < DLPM_MAX_NDIM; ++k) REQUIRE(strides[k] == expected[k]);
    std::int64_t count_alone = -7;  // without strides: the same count
    REQUIRE(dlpm_check_layout(&t, r.flags, &q.req, nullptr, 0, &count_alone) == DLPM_OK);
    REQUIRE(count_alone == numel);
  }
  CHECK(accepted > 3000);
  CHECK(refused > 30000);
}

// The test's own reading of a dlpm_requirements as the core's tensor_requirements, field by
// field, by the header's documentation: a nonzero flag is true, a null_strides other than
// DLPM_NULL_STRIDES_ROW_MAJOR rejects, the layout's arrays have ndim entries.
dm::tensor_requirements as_core_requirements(const dlpm_requirements& c, std::int32_t ndim) {
  dm::tensor_requirements r;
  r.check_dtype = c.check_dtype != 0;
  r.dtype = c.dtype;
  r.ndim = c.ndim;
  r.shape = c.shape;
  r.order = c.order;
  r.device_types = c.device_types;
  r.num_device_types = c.num_device_types;
  r.device_id = c.device_id;
  r.min_alignment = c.min_alignment;
  r.writable = c.writable != 0;
  r.null_strides = c.null_strides == DLPM_NULL_STRIDES_ROW_MAJOR ? dm::null_strides_policy::row_major
                                                                 : dm::null_strides_policy::reject;
  const auto modes = static_cast<std::size_t>(ndim);
  r.layout.leading_dim = c.layout.leading_dim;
  if (c.layout.stride_order != nullptr) r.layout.stride_order = {c.layout.stride_order, modes};
  r.layout.compact = c.layout.compact != 0;
  if (c.layout.shape_divisors != nullptr) r.layout.shape_divisors = {c.layout.shape_divisors, modes};
  if (c.layout.stride_divisors != nullptr) r.layout.stride_divisors = {c.layout.stride_divisors, modes};
  return r;
}

TEST_CASE("dlpm_check_managed and dlpm_check_announced give check_requirements' and check_announced's verdicts and words") {
  alignas(64) static unsigned char buffer[4096];
  unsigned char* middle = buffer + 2048;
  std::mt19937_64 rng(20261206);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  // Nonzero flags other than 1, and a null_strides that is neither constant: read as the
  // header says, by every rule that reads them (the facade reads the struct in place).
  static const std::int32_t nonzero[] = {1, -1, 2, 256, INT32_MIN, INT32_MAX};
  int accepted = 0, refused = 0;
  for (int n = 0; n < 100000; ++n) {
    random_tensor r(rng, middle);
    if (pick(0, 7) == 0) r.flags |= dm::flag_read_only;
    random_requirements q(rng, r.t);
    if (q.req.check_dtype != 0) q.req.check_dtype = nonzero[pick(0, 5)];
    if (q.req.writable != 0) q.req.writable = nonzero[pick(0, 5)];
    if (q.req.null_strides == DLPM_NULL_STRIDES_REJECT && pick(0, 1)) q.req.null_strides = pick(2, 9);
    if (q.req.layout.compact != 0 && pick(0, 1)) q.req.layout.compact = nonzero[pick(1, 5)];
    DLManagedTensorVersioned m{};
    m.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    m.dl_tensor = r.t;
    m.flags = r.flags;
    const auto core_req = as_core_requirements(q.req, r.t.ndim);
    dm::error e;
    const bool core = dm::check_requirements(r.t, r.flags, core_req, &e);
    const dlpm_status s = dlpm_check_managed(&m, &q.req);
    REQUIRE((s == DLPM_OK) == core);
    if (!core) {
      REQUIRE(s == static_cast<dlpm_status>(e.code()));
      REQUIRE(std::string(dlpm_last_error()) == e.message().c_str());
    }
    (core ? accepted : refused) += 1;
    dm::error announced_error;
    const bool announced = dm::check_announced(r.t.dtype, r.t.device, core_req, &announced_error);
    const dlpm_status a = dlpm_check_announced(r.t.dtype, r.t.device, &q.req);
    REQUIRE((a == DLPM_OK) == announced);
    if (!announced) {
      REQUIRE(a == static_cast<dlpm_status>(announced_error.code()));
      REQUIRE(std::string(dlpm_last_error()) == announced_error.message().c_str());
    }
  }
  CHECK(accepted > 2000);
  CHECK(refused > 20000);
}

TEST_CASE("dlpm_element_offset_prechecked (flags 0) is dlpm_element_offset on tensors that passed the checks") {
  alignas(64) static unsigned char buffer[4096];
  unsigned char* middle = buffer + 2048;
  std::mt19937_64 rng(20261126);
  int compared = 0, out_of_bounds = 0;
  for (int n = 0; n < 20000; ++n) {
    random_tensor r(rng, middle);
    const DLTensor& t = r.t;
    if (dlpm_validate(&t) != DLPM_OK) continue;
    for (int k = 0; k < 8; ++k) {
      std::int64_t index[4] = {};
      for (int d = 0; d < t.ndim; ++d) index[d] = std::uniform_int_distribution<std::int64_t>(-1, t.shape[d])(rng);
      std::int64_t checked = -7, validated = -7;
      const dlpm_status a = dlpm_element_offset(&t, index, &checked);
      const std::string message = dlpm_last_error();
      const dlpm_status b = dlpm_element_offset_prechecked(&t, 0, index, &validated);
      REQUIRE(a == b);
      REQUIRE(checked == validated);  // both written, or both left at -7
      if (a != DLPM_OK) {
        REQUIRE(message == dlpm_last_error());
        out_of_bounds += a == DLPM_E_INVALID_ARGUMENT;
      } else {
        ++compared;
      }
    }
  }
  CHECK(compared > 20000);
  CHECK(out_of_bounds > 20000);
}

namespace {
// Two managed tensors made from one description: the same fields, shape and strides (each
// its own copy), flags and version.
void require_same_managed(const DLManagedTensorVersioned& x, const DLManagedTensorVersioned& y) {
  const DLTensor& a = x.dl_tensor;
  const DLTensor& b = y.dl_tensor;
  REQUIRE(a.data == b.data);
  REQUIRE(a.ndim == b.ndim);
  REQUIRE(std::memcmp(&a.dtype, &b.dtype, sizeof a.dtype) == 0);
  REQUIRE(std::memcmp(&a.device, &b.device, sizeof a.device) == 0);
  REQUIRE(a.byte_offset == b.byte_offset);
  for (int d = 0; d < a.ndim; ++d) {
    REQUIRE(a.shape[d] == b.shape[d]);
    REQUIRE(a.strides[d] == b.strides[d]);
  }
  REQUIRE(x.flags == y.flags);
  REQUIRE(std::memcmp(&x.version, &y.version, sizeof x.version) == 0);
}

int inline_releases = 0;
void count_inline_release(void* state) {
  int tag = 0;
  std::memcpy(&tag, state, sizeof tag);
  REQUIRE(tag == 0x5eed);
  ++inline_releases;
}
int ordered_releases = 0;
void count_ordered_release(void*) { ++ordered_releases; }
}  // namespace

TEST_CASE("dlpm_managed_new_inline is dlpm_managed_new_ordered plus the buffer check of dlpm_byte_span") {
  alignas(64) static unsigned char buffer[4096];
  unsigned char* middle = buffer + 2048;
  std::mt19937_64 rng(20261127);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int made = 0, outside = 0, refused = 0;
  const int tag = 0x5eed;
  for (int n = 0; n < 30000; ++n) {
    random_tensor r(rng, middle);
    const DLTensor& t = r.t;
    static const char orders[] = {0, 'C', 'F', 'A'};
    const char order = orders[pick(0, 3)];
    DLManagedTensorVersioned* ordered = nullptr;
    const int before = ordered_releases;
    const dlpm_status expected = dlpm_managed_new_ordered(t.data, t.ndim, t.shape, t.strides, order, t.dtype, t.device,
                                                          t.byte_offset, r.flags, count_ordered_release, nullptr, &ordered);
    const std::string message = dlpm_last_error();
    // The bytes the made tensor reaches, and a buffer size around them.
    std::int64_t begin = 0, end = 0;
    std::uint64_t size = DLPM_BUFFER_SIZE_UNKNOWN;
    bool inside = true;
    if (expected == DLPM_OK) {
      REQUIRE(dlpm_byte_span(&ordered->dl_tensor, r.flags, &begin, &end) == DLPM_OK);
      if (pick(0, 3) != 0) {
        size = static_cast<std::uint64_t>(std::max<std::int64_t>(0, end + pick(-2, 1)));
        inside = begin == end || (begin >= 0 && static_cast<std::uint64_t>(end) <= size);
      }
    }
    DLManagedTensorVersioned* in_place = nullptr;
    const dlpm_status got =
        dlpm_managed_new_inline(&t, order, r.flags, size, count_inline_release, &tag, sizeof tag, &in_place);
    if (expected != DLPM_OK) {
      REQUIRE(got == expected);
      REQUIRE(message == dlpm_last_error());
      REQUIRE(in_place == nullptr);
      ++refused;
      continue;
    }
    if (!inside) {
      REQUIRE(got == DLPM_E_INVALID_ARGUMENT);
      REQUIRE(in_place == nullptr);
      ++outside;
    } else {
      REQUIRE(got == DLPM_OK);
      require_same_managed(*ordered, *in_place);
      const int released = inline_releases;
      dlpm_managed_delete(in_place);
      REQUIRE(inline_releases == released + 1);
      ++made;
    }
    dlpm_managed_delete(ordered);
    REQUIRE(ordered_releases == before + 1);
  }
  CHECK(made > 5000);
  CHECK(outside > 1000);
  CHECK(refused > 5000);
  CHECK(inline_releases == made);
}

namespace {
struct no_owner {};  // the core's call's owner: nothing to release
int from_releases = 0;
void count_from_release(void* ctx) {
  if (ctx == &from_releases) ++from_releases;  // a wrong ctx shows as a missing release
}
}  // namespace

TEST_CASE("dlpm_managed_new_from is dlpm_managed_new at order 0 and dlpm_managed_new_ordered at any other order") {
  alignas(64) static unsigned char buffer[4096];
  unsigned char* middle = buffer + 2048;
  std::mt19937_64 rng(20261129);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int made = 0, refused = 0, made_null_strides = 0, padded_made = 0;
  for (int n = 0; n < 30000; ++n) {
    random_tensor r(rng, middle);
    const DLTensor& t = r.t;
    static const char orders[] = {0, 'C', 'F', 'A'};
    dlpm_managed_options options = DLPM_MANAGED_OPTIONS_INIT;
    options.order = orders[pick(0, 3)];
    options.flags = r.flags | (pick(0, 1) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
    options.release = count_from_release;
    options.ctx = &from_releases;
    DLManagedTensorVersioned* reference = nullptr;
    const int before = ordered_releases;
    const dlpm_status expected =
        options.order == 0
            ? dlpm_managed_new(t.data, t.ndim, t.shape, t.strides, t.dtype, t.device, t.byte_offset, options.flags,
                               count_ordered_release, nullptr, &reference)
            : dlpm_managed_new_ordered(t.data, t.ndim, t.shape, t.strides, options.order, t.dtype, t.device,
                                       t.byte_offset, options.flags, count_ordered_release, nullptr, &reference);
    const std::string message = dlpm_last_error();
    // The core's own call: the facade's order 0 takes a path of its own for packed storage
    // (the padded bit known clear), so padded sub-byte flags must reach the same answer.
    const auto core = options.order == 0 ? dm::try_make_managed_tensor(t, no_owner{}, options.flags)
                                         : dm::try_make_managed_tensor(t, no_owner{}, options.flags, options.order);
    REQUIRE(expected == (core ? DLPM_OK : static_cast<dlpm_status>(core.error().code())));
    if (core) require_same_managed(*reference, *core->get());
    padded_made += core && (options.flags & dm::flag_is_subbyte_type_padded) != 0;
    DLManagedTensorVersioned* from = nullptr;
    const dlpm_status got = dlpm_managed_new_from(&t, &options, &from);
    REQUIRE(got == expected);
    if (expected != DLPM_OK) {
      REQUIRE(message == dlpm_last_error());
      REQUIRE(from == nullptr);
      ++refused;
      continue;
    }
    require_same_managed(*reference, *from);
    const int released = from_releases;
    dlpm_managed_delete(from);
    REQUIRE(from_releases == released + 1);
    dlpm_managed_delete(reference);
    REQUIRE(ordered_releases == before + 1);
    ++made;
    made_null_strides += t.strides == nullptr && t.ndim > 0;
  }
  CHECK(made > 5000);
  CHECK(refused > 5000);
  CHECK(made_null_strides > 500);
  CHECK(padded_made > 500);
  CHECK(from_releases == made);
}

namespace {

// dlpm_coalesce's answer for `t`, checked against the core's and against the tensor itself:
// the nested byte loops reach, in row-major index order, exactly the bytes of the elements
// (stride_at times the itemsize), and no mode could be dropped or merged further.
// Returns false when both refused the tensor.
bool coalesce_matches_core(const DLTensor& t, std::uint64_t flags) {
  std::int64_t extents[4] = {}, steps[4] = {}, core_extents[4] = {}, core_steps[4] = {}, block = -1;
  std::int32_t ndim = -1;
  const dlpm_status s = dlpm_coalesce(&t, flags, extents, steps, 4, &ndim, &block);
  const bool padded = (flags & dm::flag_is_subbyte_type_padded) != 0;
  const auto core = dm::coalesce(t, padded, core_extents, core_steps);
  REQUIRE((s == DLPM_OK) == static_cast<bool>(core));
  if (!core) {
    REQUIRE(s == static_cast<dlpm_status>(core.error().code()));
    REQUIRE(ndim == -1);  // nothing written on a refusal
    return false;
  }
  REQUIRE(ndim == core->ndim);
  REQUIRE(block == core->block);
  REQUIRE(std::equal(extents, extents + ndim, core_extents));
  REQUIRE(std::equal(steps, steps + ndim, core_steps));

  // The tensor's own element offsets, in row-major index order.
  const auto item = static_cast<std::int64_t>(dm::storage_itemsize(t.dtype, padded));
  std::int64_t numel = 1;
  for (int r = 0; r < t.ndim; ++r) numel *= t.shape[r];
  std::vector<std::int64_t> expected;
  for (std::int64_t flat = 0; flat < numel; ++flat) {
    std::int64_t rest = flat, offset = 0;
    for (int r = t.ndim - 1; r >= 0; --r) {
      offset += rest % t.shape[r] * dm::stride_at(t, r) * item;
      rest /= t.shape[r];
    }
    expected.push_back(offset);
  }
  // The loops' offsets: the modes outermost first, then the block's elements side by side.
  std::int64_t loops = block;
  for (int m = 0; m < ndim; ++m) loops *= extents[m];
  std::vector<std::int64_t> walked;
  for (std::int64_t flat = 0; flat < loops; ++flat) {
    std::int64_t rest = flat / block, offset = flat % block * item;
    for (int m = ndim - 1; m >= 0; --m) {
      offset += rest % extents[m] * steps[m];
      rest /= extents[m];
    }
    walked.push_back(offset);
  }
  REQUIRE(walked == expected);
  // Minimal: every mode steps, none steps over the next exactly, and an innermost mode of
  // one element's step is in the block (block 1: there was none).
  REQUIRE(ndim <= t.ndim);
  REQUIRE((block == 0) == (numel == 0));
  for (int m = 0; m < ndim; ++m) REQUIRE(extents[m] > 1);
  for (int m = 0; m + 1 < ndim; ++m) REQUIRE(steps[m] != steps[m + 1] * extents[m + 1]);
  if (ndim > 0 && block == 1) REQUIRE(steps[ndim - 1] != item);
  if (block > 1) REQUIRE(ndim + 1 <= t.ndim);
  return true;
}

}  // namespace

TEST_CASE("dlpm_coalesce gives the core's coalesce, which walks the elements in row-major order with the fewest modes") {
  alignas(64) static unsigned char buffer[4096];
  unsigned char* middle = buffer + 2048;
  float data[48] = {};
  auto host_tensor = [&](DLDataType dtype, std::int32_t ndim, std::int64_t* shape, std::int64_t* strides) {
    DLTensor t{};
    t.data = data;
    t.device = {kDLCPU, 0};
    t.dtype = dtype;
    t.ndim = ndim;
    t.shape = shape;
    t.strides = strides;
    return t;
  };
  SUBCASE("named layouts") {
    struct layout {
      std::vector<std::int64_t> shape, strides;  // no strides: NULL (row-major)
      std::int32_t ndim;
      std::int64_t block;
      std::vector<std::int64_t> extents, steps;
    };
    const layout layouts[] = {
        {{2, 3, 4}, {}, 0, 24, {}, {}},                    // row-major, NULL strides: one block
        {{2, 3, 4}, {12, 4, 1}, 0, 24, {}, {}},            // row-major, explicit
        {{2, 3, 4}, {1, 2, 6}, 3, 1, {2, 3, 4}, {4, 8, 24}},  // column-major: every mode steps alone
        {{4, 6}, {1, 4}, 2, 1, {4, 6}, {4, 16}},           // a transpose
        {{2, 3, 4}, {12, 1, 3}, 3, 1, {2, 3, 4}, {48, 4, 12}},  // the inner two transposed: nothing merges
        {{2, 3, 4}, {4, 8, 1}, 2, 4, {2, 3}, {16, 32}},     // the outer two transposed: rows still side by side
        {{2, 3, 4}, {24, 8, 1}, 1, 4, {6}, {32}},           // rows padded to 8: the outer two merged
        {{3, 4}, {0, 1}, 1, 4, {3}, {0}},                  // a broadcast row
        {{3, 4}, {0, 0}, 1, 1, {12}, {0}},                 // a broadcast scalar: one mode of step 0
        {{2, 3, 4}, {-12, -4, -1}, 1, 1, {24}, {-4}},      // reversed: one mode stepping back
        {{2, 3, 4}, {12, 4, -1}, 2, 1, {6, 4}, {16, -4}},  // rows reversed
        {{1, 4, 1, 3}, {99, 3, -7, 1}, 0, 12, {}, {}},     // extent-1 modes step nowhere, whatever their stride
        {{2, 1, 3}, {6, 5, 2}, 1, 1, {6}, {8}},            // every other element, across the rows
        {{1, 1}, {5, 7}, 0, 1, {}, {}},                    // one element
        {{}, {}, 0, 1, {}, {}},                            // a scalar
        {{2, 0, 3}, {3, 3, 1}, 0, 0, {}, {}},              // empty: nothing addressed
    };
    for (const layout& l : layouts) {
      DLTensor t = host_tensor({kDLFloat, 32, 1}, static_cast<std::int32_t>(l.shape.size()),
                               const_cast<std::int64_t*>(l.shape.data()),
                               l.strides.empty() ? nullptr : const_cast<std::int64_t*>(l.strides.data()));
      std::int64_t begin = 0, end = 0;  // negative strides reach below data: start where they end inside `data`
      REQUIRE(dlpm_byte_span(&t, 0, &begin, &end) == DLPM_OK);
      t.data = data - begin / 4;
      REQUIRE(end - begin <= static_cast<std::int64_t>(sizeof data));
      CAPTURE(t.ndim);
      REQUIRE(coalesce_matches_core(t, 0));
      std::int64_t extents[4] = {}, steps[4] = {}, block = -1;
      std::int32_t ndim = -1;
      REQUIRE(dlpm_coalesce(&t, 0, extents, steps, 4, &ndim, &block) == DLPM_OK);
      CHECK(ndim == l.ndim);
      CHECK(block == l.block);
      CHECK(std::vector<std::int64_t>(extents, extents + ndim) == l.extents);
      CHECK(std::vector<std::int64_t>(steps, steps + ndim) == l.steps);
    }
  }
  SUBCASE("padded and packed sub-byte elements") {
    std::int64_t shape[2] = {3, 4}, extents[2] = {}, steps[2] = {}, block = -1;
    std::int32_t ndim = -1;
    DLTensor t = host_tensor({kDLFloat4_e2m1fn, 4, 1}, 2, shape, nullptr);
    REQUIRE(coalesce_matches_core(t, dm::flag_is_subbyte_type_padded));
    REQUIRE(dlpm_coalesce(&t, dm::flag_is_subbyte_type_padded, extents, steps, 2, &ndim, &block) == DLPM_OK);
    CHECK(ndim == 0);
    CHECK(block == 12);  // one byte each
    CHECK(dlpm_coalesce(&t, 0, extents, steps, 2, &ndim, &block) == DLPM_E_SUBBYTE_NOT_VIEWABLE);
    CHECK(std::string(dlpm_last_error()) == "dtype float4_e2m1fn is packed, which cannot be viewed as one whole-byte element each");
  }
  SUBCASE("generated tensors") {
    std::mt19937_64 rng(20261128);
    int compared = 0, merged = 0, refused = 0;
    for (int n = 0; n < 20000; ++n) {
      random_tensor r(rng, middle);
      std::int64_t extents[4] = {}, steps[4] = {}, block = 0;
      std::int32_t ndim = 0, stepping = 0;
      if (!coalesce_matches_core(r.t, r.flags)) {
        ++refused;
        continue;
      }
      ++compared;
      REQUIRE(dlpm_coalesce(&r.t, r.flags, extents, steps, 4, &ndim, &block) == DLPM_OK);
      for (int d = 0; d < r.t.ndim; ++d) stepping += r.t.shape[d] > 1;
      merged += block > 0 && ndim + (block > 1 ? 1 : 0) < stepping;
    }
    CHECK(compared > 5000);
    CHECK(merged > 500);
    CHECK(refused > 1000);
  }
  SUBCASE("arguments") {
    std::int64_t shape[2] = {3, 4}, extents[2] = {}, steps[2] = {}, block = -1;
    std::int32_t ndim = -1;
    DLTensor t = host_tensor({kDLFloat, 32, 1}, 2, shape, nullptr);
    CHECK(dlpm_coalesce(nullptr, 0, extents, steps, 2, &ndim, &block) == DLPM_E_NULL_POINTER);
    CHECK(dlpm_coalesce(&t, 0, nullptr, steps, 2, &ndim, &block) == DLPM_E_NULL_POINTER);
    CHECK(dlpm_coalesce(&t, 0, extents, nullptr, 2, &ndim, &block) == DLPM_E_NULL_POINTER);
    CHECK(dlpm_coalesce(&t, 0, extents, steps, 2, nullptr, &block) == DLPM_E_NULL_POINTER);
    CHECK(dlpm_coalesce(&t, 0, extents, steps, 2, &ndim, nullptr) == DLPM_E_NULL_POINTER);
    CHECK(dlpm_coalesce(&t, 0, extents, steps, 1, &ndim, &block) == DLPM_E_INVALID_ARGUMENT);
    CHECK(dlpm_coalesce(&t, 0, extents, steps, -1, &ndim, &block) == DLPM_E_INVALID_ARGUMENT);
    CHECK(ndim == -1);
    t.ndim = 0;  // a scalar needs no arrays
    CHECK(dlpm_coalesce(&t, 0, nullptr, nullptr, 0, &ndim, &block) == DLPM_OK);
    CHECK(ndim == 0);
    CHECK(block == 1);
  }
}

TEST_CASE("dlpm_check_tensor refuses what dlpm_check_managed refuses and writes the core's checked tensor") {
  alignas(64) static unsigned char buffer[4096];
  std::mt19937_64 rng(20261129);
  int accepted = 0, refused = 0, wrong_size = 0;
  for (int n = 0; n < 50000; ++n) {
    random_tensor r(rng, buffer + 2048);
    if (std::uniform_int_distribution<int>(0, 7)(rng) == 0) r.flags |= dm::flag_read_only;
    random_requirements q(rng, r.t);
    DLManagedTensorVersioned m{};
    m.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    m.dl_tensor = r.t;
    m.flags = r.flags;
    const dlpm_status separate = dlpm_check_managed(&m, &q.req);
    const std::string message = dlpm_last_error();
    // The caller's element size: none (0), the stored one, or one byte more.
    const std::uint64_t stored = dm::storage_itemsize(r.t.dtype, (r.flags & dm::flag_is_subbyte_type_padded) != 0);
    const int which = std::uniform_int_distribution<int>(0, 2)(rng);
    const std::size_t element_size = which == 0 ? 0 : which == 1 ? stored : stored + 1;
    dlpm_checked_tensor out;
    std::memset(&out, 0x5a, sizeof out);
    out.version = DLPM_CHECKED_TENSOR_VERSION;
    const dlpm_status joint = dlpm_check_tensor(&r.t, r.flags, &q.req, element_size, &out);
    if (separate != DLPM_OK) {
      REQUIRE(joint == separate);
      REQUIRE(message == dlpm_last_error());
      REQUIRE(out.numel == 0x5a5a5a5a5a5a5a5a);
      ++refused;
      continue;
    }
    dm::error e;
    const bool size_ok = element_size == 0 || dm::check_element_bytes(r.t.dtype, (r.flags & dm::flag_is_subbyte_type_padded) != 0,
                                                                      element_size, &e);
    if (!size_ok) {  // whole bytes of another size: the dtype's; packed sub-byte elements: no byte each
      REQUIRE(joint == (r.t.dtype.bits >= 8 ? DLPM_E_DTYPE_MISMATCH : DLPM_E_SUBBYTE_NOT_VIEWABLE));
      REQUIRE(std::string(dlpm_last_error()) == e.message().c_str());
      ++wrong_size;
      continue;
    }
    REQUIRE(joint == DLPM_OK);
    ++accepted;
    const auto core = dm::check_tensor(r.t, r.flags);
    REQUIRE(core);
    REQUIRE(out.tensor == &r.t);
    REQUIRE(out.flags == r.flags);
    REQUIRE(out.numel == core->numel());
    REQUIRE(out.itemsize == core->itemsize());
    REQUIRE(out.lowest_index == core->lowest_index());
    REQUIRE(out.highest_index == core->highest_index());
    REQUIRE((out.row_major != 0) == core->row_major());
    REQUIRE((out.implicit_strides != 0) == core->implicit_strides());
    REQUIRE(out.ndim == r.t.ndim);
    for (int k = 0; k < r.t.ndim; ++k) REQUIRE(out.strides[k] == core->stride(k));
  }
  CHECK(accepted > 1000);
  CHECK(refused > 10000);
  CHECK(wrong_size > 100);
  // Without requirements: the structure alone. A version the library does not know is refused.
  float data[6] = {};
  std::int64_t shape[2] = {2, 3};
  DLTensor t{data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  dlpm_checked_tensor out{};
  out.version = DLPM_CHECKED_TENSOR_VERSION;
  // A whole-byte dtype of another element size is the dtype's mismatch, worded so (float32 is
  // not "packed").
  REQUIRE(dlpm_check_tensor(&t, 0, nullptr, 8, &out) == DLPM_E_DTYPE_MISMATCH);
  REQUIRE(std::string(dlpm_last_error()) == "dtype float32 has 4-byte elements, where 8-byte elements are required");
  REQUIRE(dlpm_check_tensor(&t, 0, nullptr, sizeof(float), &out) == DLPM_OK);
  CHECK(out.numel == 6);
  CHECK(out.strides[0] == 3);
  CHECK(out.implicit_strides == 1);
  out.version = 0;
  CHECK(dlpm_check_tensor(&t, 0, nullptr, 0, &out) == DLPM_E_UNSUPPORTED_VERSION);
  CHECK(dlpm_check_tensor(&t, 0, nullptr, 0, nullptr) == DLPM_E_NULL_POINTER);
}

namespace {

// What dlpm_check_tensor writes of `t` with `flags` and no requirements; it must accept.
dlpm_checked_tensor checked_form(const DLTensor& t, std::uint64_t flags) {
  dlpm_checked_tensor checked{};
  checked.version = DLPM_CHECKED_TENSOR_VERSION;
  REQUIRE(dlpm_check_tensor(&t, flags, nullptr, 0, &checked) == DLPM_OK);
  return checked;
}

dlpm_requirements c_order_requirements() {
  dlpm_requirements req;
  REQUIRE(dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION) == DLPM_OK);
  req.order = 'C';
  return req;
}

// A 2x3 float tensor with transposed strides (valid, not row-major), its checked form and
// order 'C' requirements: the tests of a checked form lie to it that the tensor is row-major.
struct transposed_case {
  float data[6] = {};
  std::int64_t shape[2] = {2, 3}, transposed[2] = {1, 2};
  DLTensor t{data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, transposed, 0};
  dlpm_checked_tensor checked = checked_form(t, 0);
  dlpm_requirements c_order = c_order_requirements();
  transposed_case() = default;
  transposed_case(const transposed_case&) = delete;  // t points into it
};

// The fields of a checked form that say what the check learned (all but version, tensor, flags).
void require_same_learned(const dlpm_checked_tensor& got, const dlpm_checked_tensor& want) {
  REQUIRE(got.row_major == want.row_major);
  REQUIRE(got.numel == want.numel);
  REQUIRE(got.itemsize == want.itemsize);
  REQUIRE(got.lowest_index == want.lowest_index);
  REQUIRE(got.highest_index == want.highest_index);
  REQUIRE(got.implicit_strides == want.implicit_strides);
  REQUIRE(got.ndim == want.ndim);
  for (std::int32_t r = 0; r < want.ndim; ++r) REQUIRE(got.strides[r] == want.strides[r]);
}

// each(r, rng) for `count` random_tensors over one buffer, drawn from a generator seeded `seed`.
template <class Each>
void for_generated_tensors(std::uint64_t seed, int count, Each&& each) {
  alignas(64) static unsigned char buffer[4096];
  std::mt19937_64 rng(seed);
  for (int n = 0; n < count; ++n) {
    random_tensor r(rng, buffer + 2048);
    each(r, rng);
  }
}

int released_checked = 0;
void count_checked_release(void* ctx) { released_checked += *static_cast<int*>(ctx); }

}  // namespace

TEST_CASE("dlpm_check_prechecked is dlpm_check_managed for a tensor checked before, without its structure's pass") {
  alignas(64) static unsigned char buffer[4096];
  std::mt19937_64 rng(20261131);
  int trusted = 0, copied = 0, refused = 0;
  for (int n = 0; n < 50000; ++n) {
    random_tensor r(rng, buffer + 2048);
    dlpm_checked_tensor checked = checked_form(r.t, r.flags);  // random_tensor's are well formed
    // The import's flags may differ from the holder's in READ_ONLY (legacy_writable drops it).
    if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) r.flags ^= dm::flag_read_only;
    random_requirements q(rng, r.t);
    DLManagedTensorVersioned m{};
    m.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    m.dl_tensor = r.t;
    m.flags = r.flags;
    const dlpm_status full = dlpm_check_managed(&m, &q.req);
    const std::string message = full == DLPM_OK ? std::string() : std::string(dlpm_last_error());
    // The very struct checked, and an export's equal description in arrays of its own.
    REQUIRE(dlpm_check_prechecked(&r.t, r.flags, &checked, &q.req) == full);
    if (full != DLPM_OK) REQUIRE(message == dlpm_last_error());
    ++trusted;
    refused += full != DLPM_OK;
    std::int64_t shape[DLPM_MAX_NDIM] = {}, strides[DLPM_MAX_NDIM] = {};
    DLTensor copy = r.t;
    if (r.t.ndim > 0 && r.t.shape != nullptr) {
      std::memcpy(shape, r.t.shape, sizeof(std::int64_t) * static_cast<std::size_t>(r.t.ndim));
      copy.shape = shape;
    }
    if (r.t.ndim > 0 && r.t.strides != nullptr) {
      std::memcpy(strides, r.t.strides, sizeof(std::int64_t) * static_cast<std::size_t>(r.t.ndim));
      copy.strides = strides;
    }
    REQUIRE(dlpm_check_prechecked(&copy, r.flags, &checked, &q.req) == full);
    if (full != DLPM_OK) REQUIRE(message == dlpm_last_error());
    ++copied;
  }
  CHECK(trusted > 10000);
  CHECK(copied == trusted);
  CHECK(refused > 10000);
  CHECK(trusted - refused > 1000);

  // What the earlier check learned is read, not learned again: told (falsely) that a
  // transposed tensor is C-contiguous, the call believes it; a different description (a
  // copy's data, another stride, the other sub-byte storage) is checked in full.
  transposed_case x;
  DLTensor& t = x.t;
  dlpm_checked_tensor& checked = x.checked;
  const dlpm_requirements& c_order = x.c_order;
  std::int64_t* const shape = x.shape;
  std::int64_t other[2] = {1, 2};
  REQUIRE(checked.row_major == 0);
  CHECK(dlpm_check_prechecked(&t, 0, &checked, &c_order) == DLPM_E_NON_COMPACT_STRIDES);
  checked.row_major = 1;  // the lie
  CHECK(dlpm_check_prechecked(&t, 0, &checked, &c_order) == DLPM_OK);
  DLTensor moved = t;
  moved.data = x.data + 1;
  CHECK(dlpm_check_prechecked(&moved, 0, &checked, &c_order) == DLPM_E_NON_COMPACT_STRIDES);
  DLTensor restrided = t;
  restrided.strides = other;
  CHECK(dlpm_check_prechecked(&restrided, 0, &checked, &c_order) == DLPM_OK);  // equal strides: trusted
  other[1] = 3;
  CHECK(dlpm_check_prechecked(&restrided, 0, &checked, &c_order) == DLPM_E_NON_COMPACT_STRIDES);
  CHECK(dlpm_check_prechecked(&t, dm::flag_is_subbyte_type_padded, &checked, &c_order) == DLPM_E_NON_COMPACT_STRIDES);
  // A copy of the struct pointing at the very arrays checked (a borrow of a Tensor) is
  // trusted without comparing them; any other field, or one array of its own that differs,
  // is checked in full.
  DLTensor same_arrays = t;
  CHECK(dlpm_check_prechecked(&same_arrays, 0, &checked, &c_order) == DLPM_OK);
  for (int field = 0; field < 5; ++field) {
    DLTensor changed = t;
    if (field == 0) changed.byte_offset = sizeof(float);
    if (field == 1) changed.dtype.lanes = 2;
    if (field == 2) changed.device.device_id = 1;
    if (field == 3) changed.device.device_type = kDLCUDAHost;
    if (field == 4) changed.dtype.bits = 64;
    CAPTURE(field);
    CHECK(dlpm_check_prechecked(&changed, 0, &checked, &c_order) != DLPM_OK);
  }
  DLTensor own_strides = t;  // the shape checked, strides of its own that differ
  own_strides.strides = other;
  CHECK(dlpm_check_prechecked(&own_strides, 0, &checked, &c_order) == DLPM_E_NON_COMPACT_STRIDES);
  std::int64_t wider[2] = {2, 3};
  DLTensor own_shape = t;  // the strides checked, a shape of its own
  own_shape.shape = wider;
  CHECK(dlpm_check_prechecked(&own_shape, 0, &checked, &c_order) == DLPM_OK);  // equal shape: trusted
  wider[0] = 3;
  CHECK(dlpm_check_prechecked(&own_shape, 0, &checked, &c_order) == DLPM_E_NON_COMPACT_STRIDES);
  checked.tensor = nullptr;  // no checked form carried: in full
  CHECK(dlpm_check_prechecked(&t, 0, &checked, &c_order) == DLPM_E_NON_COMPACT_STRIDES);
  // The strict strides policy is the structure's: NULL strides are refused as dlpm_check_managed refuses them.
  DLTensor implicit{x.data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  REQUIRE(dlpm_check_tensor(&implicit, 0, nullptr, 0, &checked) == DLPM_OK);
  dlpm_requirements strict;
  REQUIRE(dlpm_requirements_init(&strict, DLPM_REQUIREMENTS_VERSION) == DLPM_OK);
  strict.null_strides = DLPM_NULL_STRIDES_REJECT;
  CHECK(dlpm_check_prechecked(&implicit, 0, &checked, &strict) == DLPM_E_NULL_STRIDES);
  // Arguments.
  CHECK(dlpm_check_prechecked(nullptr, 0, &checked, &c_order) == DLPM_E_NULL_POINTER);
  CHECK(dlpm_check_prechecked(&t, 0, nullptr, &c_order) == DLPM_E_NULL_POINTER);
  CHECK(dlpm_check_prechecked(&t, 0, &checked, nullptr) == DLPM_E_NULL_POINTER);
  checked.version = 0;
  CHECK(dlpm_check_prechecked(&t, 0, &checked, &c_order) == DLPM_E_UNSUPPORTED_VERSION);
}

TEST_CASE("dlpm_check_prechecked_tensor is dlpm_check_prechecked's verdict with dlpm_check_tensor's checked form") {
  int accepted = 0, refused = 0;
  for_generated_tensors(20261129, 30000, [&](random_tensor& r, std::mt19937_64& rng) {
    dlpm_checked_tensor checked = checked_form(r.t, r.flags);
    if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) r.flags ^= dm::flag_read_only;
    random_requirements q(rng, r.t);
    const bool with_req = std::uniform_int_distribution<int>(0, 4)(rng) != 0;
    dlpm_checked_tensor want{};
    want.version = DLPM_CHECKED_TENSOR_VERSION;
    const dlpm_status full = dlpm_check_tensor(&r.t, r.flags, with_req ? &q.req : nullptr, 0, &want);
    const std::string message = full == DLPM_OK ? std::string() : std::string(dlpm_last_error());
    // The very struct, an equal description in arrays of its own, and no checked form at all.
    std::int64_t shape[DLPM_MAX_NDIM] = {}, strides[DLPM_MAX_NDIM] = {};
    DLTensor copy = r.t;
    if (r.t.ndim > 0 && r.t.shape != nullptr) copy.shape = std::copy(r.t.shape, r.t.shape + r.t.ndim, shape) - r.t.ndim;
    if (r.t.ndim > 0 && r.t.strides != nullptr) copy.strides = std::copy(r.t.strides, r.t.strides + r.t.ndim, strides) - r.t.ndim;
    for (int form = 0; form < 3; ++form) {
      const DLTensor* tensor = form == 1 ? &copy : &r.t;
      dlpm_checked_tensor out{};
      out.version = DLPM_CHECKED_TENSOR_VERSION;
      out.numel = -7;  // untouched on a refusal
      CAPTURE(form);
      REQUIRE(dlpm_check_prechecked_tensor(tensor, r.flags, form == 2 ? nullptr : &checked, with_req ? &q.req : nullptr, &out) ==
              full);
      if (full != DLPM_OK) {
        REQUIRE(message == dlpm_last_error());
        REQUIRE(out.numel == -7);
        continue;
      }
      require_same_learned(out, want);
      REQUIRE(out.tensor == tensor);
      REQUIRE(out.flags == r.flags);
    }
    ++(full == DLPM_OK ? accepted : refused);
  });
  CHECK(accepted > 5000);
  CHECK(refused > 5000);

  // What the earlier check learned is read, not learned again: told (falsely) that a
  // transposed tensor is C-contiguous, the call believes it and hands the lie on; another
  // description, or the other sub-byte storage, is checked in full.
  transposed_case x;
  DLTensor& t = x.t;
  dlpm_checked_tensor& checked = x.checked;
  dlpm_requirements& c_order = x.c_order;
  checked.row_major = 1;  // the lie
  dlpm_checked_tensor out{};
  out.version = DLPM_CHECKED_TENSOR_VERSION;
  CHECK(dlpm_check_prechecked_tensor(&t, 0, &checked, &c_order, &out) == DLPM_OK);
  CHECK(out.row_major == 1);
  DLTensor moved = t;
  moved.data = x.data + 1;
  CHECK(dlpm_check_prechecked_tensor(&moved, 0, &checked, &c_order, &out) == DLPM_E_NON_COMPACT_STRIDES);
  CHECK(dlpm_check_prechecked_tensor(&moved, 0, &checked, nullptr, &out) == DLPM_OK);
  CHECK(out.row_major == 0);
  CHECK(out.tensor == &moved);
  CHECK(dlpm_check_prechecked_tensor(&t, dm::flag_is_subbyte_type_padded, &checked, nullptr, &out) == DLPM_OK);
  CHECK(out.row_major == 0);
  // `out` may be `checked` itself.
  CHECK(dlpm_check_prechecked_tensor(&t, 0, &checked, &c_order, &checked) == DLPM_OK);
  CHECK(checked.row_major == 1);
  CHECK(checked.tensor == &t);
  // Arguments, checked before anything is read.
  CHECK(dlpm_check_prechecked_tensor(nullptr, 0, &checked, &c_order, &out) == DLPM_E_NULL_POINTER);
  CHECK(dlpm_check_prechecked_tensor(&t, 0, &checked, &c_order, nullptr) == DLPM_E_NULL_POINTER);
  out.version = 0;
  CHECK(dlpm_check_prechecked_tensor(&t, 0, &checked, &c_order, &out) == DLPM_E_UNSUPPORTED_VERSION);
  out.version = DLPM_CHECKED_TENSOR_VERSION;
  checked.version = 0;
  CHECK(dlpm_check_prechecked_tensor(&t, 0, &checked, &c_order, &out) == DLPM_E_UNSUPPORTED_VERSION);
  checked.version = DLPM_CHECKED_TENSOR_VERSION;
  c_order.version = 0;
  CHECK(dlpm_check_prechecked_tensor(&t, 0, &checked, &c_order, &out) == DLPM_E_UNSUPPORTED_VERSION);
}

TEST_CASE("dlpm_managed_new_checked is dlpm_managed_new of the checked description, sharing its arrays") {
  int shared = 0, copied = 0, other_storage = 0;
  for_generated_tensors(20261128, 30000, [&](random_tensor& r, std::mt19937_64& rng) {
    dlpm_checked_tensor checked = checked_form(r.t, r.flags);
    // The export's flags: READ_ONLY or not, and sometimes the other sub-byte storage.
    std::uint64_t flags = r.flags ^ (std::uniform_int_distribution<int>(0, 1)(rng) ? dm::flag_read_only : 0);
    if (r.t.dtype.bits < 8 && std::uniform_int_distribution<int>(0, 2)(rng) == 0) flags ^= dm::flag_is_subbyte_type_padded;
    DLManagedTensorVersioned *want = nullptr, *got = nullptr;
    const DLTensor& t = r.t;
    const dlpm_status s =
        dlpm_managed_new(t.data, t.ndim, t.shape, t.strides, t.dtype, t.device, t.byte_offset, flags, nullptr, nullptr, &want);
    int one = 1;
    released_checked = 0;
    REQUIRE(dlpm_managed_new_checked(&checked, flags, count_checked_release, &one, &got) == s);
    if (s != DLPM_OK) {
      REQUIRE(got == nullptr);
      REQUIRE(released_checked == 0);
      return;
    }
    const DLTensor& g = got->dl_tensor;
    const DLTensor& w = want->dl_tensor;
    REQUIRE(std::memcmp(&g, &w, offsetof(DLTensor, shape)) == 0);
    REQUIRE(g.byte_offset == w.byte_offset);
    REQUIRE(got->flags == want->flags);
    REQUIRE(got->version.major == want->version.major);
    REQUIRE(got->version.minor == want->version.minor);
    REQUIRE((g.strides == nullptr) == (w.strides == nullptr));
    for (std::int32_t d = 0; d < g.ndim; ++d) {
      REQUIRE(g.shape[d] == w.shape[d]);
      REQUIRE(g.strides[d] == w.strides[d]);
    }
    // The checked arrays themselves exactly where dlpm_managed_new would copy them unchanged
    // from a description checked with the export's storage; else arrays of its own.
    const bool shares = t.ndim > 0 && t.strides != nullptr && checked.numel > 0 &&
                        ((flags ^ r.flags) & dm::flag_is_subbyte_type_padded) == 0;
    REQUIRE((g.ndim > 0 && g.shape == t.shape && g.strides == t.strides) == shares);
    ++(shares ? shared : copied);
    other_storage += ((flags ^ r.flags) & dm::flag_is_subbyte_type_padded) != 0;
    dlpm_managed_delete(want);
    dlpm_managed_delete(got);
    REQUIRE(released_checked == 1);
  });
  CHECK(shared > 5000);
  CHECK(copied > 5000);
  CHECK(other_storage > 500);  // checked as the other sub-byte storage: copied and validated as this one

  // An export of it is trusted by dlpm_check_prechecked without comparing: told (falsely)
  // that a transposed tensor is C-contiguous, the check believes it of the export.
  transposed_case x;
  dlpm_checked_tensor& checked = x.checked;
  DLManagedTensorVersioned* m = nullptr;
  int one = 1;
  released_checked = 0;
  REQUIRE(dlpm_managed_new_checked(&checked, DLPACK_FLAG_BITMASK_READ_ONLY, count_checked_release, &one, &m) == DLPM_OK);
  CHECK(m->dl_tensor.shape == x.shape);
  CHECK(m->dl_tensor.strides == x.transposed);
  CHECK(m->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK(dlpm_check_prechecked(&m->dl_tensor, m->flags, &checked, &x.c_order) == DLPM_E_NON_COMPACT_STRIDES);
  checked.row_major = 1;  // the lie
  CHECK(dlpm_check_prechecked(&m->dl_tensor, m->flags, &checked, &x.c_order) == DLPM_OK);
  dlpm_managed_delete(m);
  CHECK(released_checked == 1);
  // Arguments: refused before anything is made; release is not called.
  released_checked = 0;
  m = nullptr;
  CHECK(dlpm_managed_new_checked(nullptr, 0, count_checked_release, &one, &m) == DLPM_E_NULL_POINTER);
  CHECK(dlpm_managed_new_checked(&checked, 0, count_checked_release, &one, nullptr) == DLPM_E_NULL_POINTER);
  checked.version = 0;
  CHECK(dlpm_managed_new_checked(&checked, 0, count_checked_release, &one, &m) == DLPM_E_UNSUPPORTED_VERSION);
  checked.version = DLPM_CHECKED_TENSOR_VERSION;
  checked.tensor = nullptr;
  CHECK(dlpm_managed_new_checked(&checked, 0, count_checked_release, &one, &m) == DLPM_E_NULL_POINTER);
  CHECK(m == nullptr);
  CHECK(released_checked == 0);
}

TEST_CASE("dlpm_plan_message is the core's plan_message: one admission for C, C++ and Python") {
  alignas(64) static unsigned char buffer[4096];
  std::mt19937_64 rng(20261130);
  int planned = 0, refused = 0;
  for (int n = 0; n < 20000; ++n) {
    random_tensor r(rng, buffer + 2048);
    if (std::uniform_int_distribution<int>(0, 7)(rng) == 0) r.flags |= dm::flag_read_only;
    const int direction = std::uniform_int_distribution<int>(0, 1)(rng);
    const int cuda = std::uniform_int_distribution<int>(0, 1)(rng);
    dlpm_message_plan out;
    out.version = DLPM_MESSAGE_PLAN_VERSION;
    const dlpm_status s = dlpm_plan_message(&r.t, r.flags, direction, cuda, &out);
    const auto checked = dm::check_tensor(r.t, r.flags);
    if (!checked) {
      REQUIRE(s == static_cast<dlpm_status>(checked.error().code()));
      ++refused;
      continue;
    }
    const auto core = dm::plan_message(*checked, static_cast<dm::message_direction>(direction), cuda != 0);
    REQUIRE((s == DLPM_OK) == static_cast<bool>(core));
    if (!core) {
      REQUIRE(s == static_cast<dlpm_status>(core.error().code()));
      REQUIRE(std::string(dlpm_last_error()) == core.error().message().c_str());
      ++refused;
      continue;
    }
    ++planned;
    REQUIRE(out.element0 == core->element0);
    REQUIRE(out.loops == core->loops);
    REQUIRE(out.block == core->block);
    REQUIRE(out.lower_bound == core->lower_bound);
    REQUIRE(out.extent == core->extent);
    REQUIRE(out.itemsize == core->itemsize);
    for (int k = 0; k < out.loops; ++k) REQUIRE((out.extents[k] == core->extents[k] && out.byte_steps[k] == core->byte_steps[k]));
    // The plan is the queries' answers: the span and the loops.
    const auto span = dm::byte_span(*checked);
    REQUIRE(out.extent == span.end - span.begin);
  }
  CHECK(planned > 1000);
  CHECK(refused > 1000);
  // Each refusal of the admission, by the core's rules.
  std::uint8_t bytes[24] = {};
  std::int64_t shape[2] = {4, 6}, broadcast[2] = {0, 1};
  DLTensor t{bytes, {kDLCPU, 0}, 2, {kDLInt, 4, 1}, shape, nullptr, 0};
  dlpm_message_plan out{};
  out.version = DLPM_MESSAGE_PLAN_VERSION;
  CHECK(dlpm_plan_message(&t, 0, DLPM_MESSAGE_SEND, 0, &out) == DLPM_E_SUBBYTE_NOT_VIEWABLE);
  CHECK(std::string(dlpm_last_error()) == "dtype int4 is packed, which cannot be viewed as one whole-byte element each");
  t.dtype = DLDataType{kDLUInt, 8, 1};
  CHECK(dlpm_plan_message(&t, 0, DLPM_MESSAGE_SEND, 0, &out) == DLPM_OK);
  CHECK(dlpm_plan_message(&t, dm::flag_read_only, DLPM_MESSAGE_RECEIVE, 0, &out) == DLPM_E_READ_ONLY);
  t.device = DLDevice{kDLCUDA, 0};
  CHECK(dlpm_plan_message(&t, 0, DLPM_MESSAGE_SEND, 0, &out) == DLPM_E_DEVICE_MISMATCH);
  CHECK(dlpm_plan_message(&t, 0, DLPM_MESSAGE_SEND, 1, &out) == DLPM_OK);
  t.device = DLDevice{kDLCPU, 0};
  t.strides = broadcast;
  CHECK(dlpm_plan_message(&t, 0, DLPM_MESSAGE_SEND, 0, &out) == DLPM_OK);
  CHECK(dlpm_plan_message(&t, 0, DLPM_MESSAGE_RECEIVE, 0, &out) == DLPM_E_OVERLAPPING_STRIDES);
  CHECK(dlpm_plan_message(&t, 0, 2, 0, &out) == DLPM_E_INVALID_ARGUMENT);
  out.version = 2;
  CHECK(dlpm_plan_message(&t, 0, DLPM_MESSAGE_SEND, 0, &out) == DLPM_E_UNSUPPORTED_VERSION);
}
