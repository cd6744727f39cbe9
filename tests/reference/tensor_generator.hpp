// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Edge-biased DLTensor generation for the differential test and its fuzzer.
//
// A case is first described as plain data (case_spec: every field, including how the
// shape/strides/data pointers are broken), then materialised (live_tensor) with exactly
// sized heap arrays, so that any read past ndim entries, or any read at all through an
// invalid ndim, is an AddressSanitizer report. Nothing is ever read through `data`, so it
// may point anywhere.
//
// Specs come from a source of decisions: a 64-bit seed (rng_source) or fuzzer bytes
// (byte_source). A spec also has a literal byte encoding (encode_literal/decode), used for
// reproducers (--replay HEX) and for the fuzzer's seed corpus.
#pragma once

#include <dlpack/dlpack.h>

#include "reference_model.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace dlpm_reference {

// ---- sources of decisions -----------------------------------------------------------
struct rng_source {  // splitmix64
  std::uint64_t state;
  explicit rng_source(std::uint64_t seed) : state(seed) {}
  std::uint64_t u64() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : u64() % n; }
};

struct byte_source {  // fuzzer bytes; zeros once exhausted
  const std::uint8_t* p;
  std::size_t n;
  std::uint64_t take(std::size_t bytes) {
    std::uint64_t v = 0;
    const std::size_t k = std::min(bytes, n);
    std::memcpy(&v, p, k);  // little-endian hosts
    p += k;
    n -= k;
    return v;
  }
  std::uint64_t u64() { return take(8); }
  std::uint64_t below(std::uint64_t n_values) {
    if (n_values == 0) return 0;
    std::size_t bytes = 1;
    while (bytes < 8 && (n_values - 1) >> (8 * bytes) != 0) ++bytes;
    return take(bytes) % n_values;
  }
};

template <class Source>
bool chance(Source& src, unsigned percent) {
  return src.below(100) < percent;
}

// ---- edge values --------------------------------------------------------------------
inline constexpr std::int64_t edge_table[] = {
    0, 1, -1, 2, 3, INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1,
    std::int64_t{1} << 31, (std::int64_t{1} << 31) - 1, std::int64_t{1} << 32, std::int64_t{1} << 62,
    std::int64_t{1} << 60, -(std::int64_t{1} << 60), std::int64_t{1} << 40, 127, 128, 255, 256, 32767, 65535,
    // a few more around the index types' limits
    -2, -128, -129, 32768, 65536, -(std::int64_t{1} << 31), (std::int64_t{1} << 32) - 1, -(std::int64_t{1} << 62),
    (std::int64_t{1} << 62) + 1, std::int64_t{1} << 61, std::int64_t{1} << 30, std::int64_t{1} << 21};
inline constexpr std::size_t edge_count = sizeof(edge_table) / sizeof(edge_table[0]);

template <class Source>
std::int64_t edge_value(Source& src) {
  const std::uint64_t k = src.below(edge_count + 3);
  if (k < edge_count) return edge_table[k];
  if (k == edge_count) return static_cast<std::int64_t>(src.below(17)) - 8;  // small random
  if (k == edge_count + 1) return static_cast<std::int64_t>(src.below(1000));
  return static_cast<std::int64_t>(src.u64());
}

// ---- the description of a case --------------------------------------------------------
enum class ptr_mode : std::uint8_t { ok = 0, null = 1, misaligned = 2 };
enum class data_kind : std::uint8_t { null = 0, buffer = 1, literal = 2 };

struct case_spec {
  std::int32_t ndim = 0;
  ptr_mode shape_mode = ptr_mode::ok;
  std::uint8_t shape_mis = 0;  // 1..7 when misaligned
  ptr_mode strides_mode = ptr_mode::ok;
  std::uint8_t strides_mis = 0;
  std::array<std::int64_t, max_ndim> shape{};
  std::array<std::int64_t, max_ndim> strides{};
  data_kind data = data_kind::buffer;
  std::int64_t data_value = 0;  // offset from the buffer's middle, or the literal address
  std::uint64_t byte_offset = 0;
  DLDataType dtype{kDLFloat, 32, 1};
  DLDevice device{kDLCPU, 0};
  // the target and its import requirements (and the padded sub-byte flag)
  std::uint32_t target = 0;
  bool reject_null_strides = false;
  bool subbyte_padded = false;
  std::uint64_t min_alignment = 0;
  std::int32_t opt_device_id = -1;
  std::uint8_t num_divisors = 0;  // <= 8
  std::array<std::int64_t, 8> divisors{};
  std::uint64_t aux_seed = 0;  // picks the indices that are checked
};

// The middle of a 64-byte-aligned scratch buffer; data pointers of kind `buffer` are
// relative to it. The buffer is never read or written through a tensor.
inline unsigned char* scratch_middle() {
  alignas(64) static unsigned char buffer[8192];
  return buffer + 4096;
}

// A case_spec made real: exactly sized, heap-allocated shape and strides arrays.
struct live_tensor {
  DLTensor t{};
  std::unique_ptr<unsigned char[]> shape_mem, strides_mem;

  static const std::int64_t* place(const std::array<std::int64_t, max_ndim>& values, std::int32_t ndim, ptr_mode mode,
                                   std::uint8_t mis, std::unique_ptr<unsigned char[]>& mem) {
    if (mode == ptr_mode::null) return nullptr;
    // Only a valid ndim gets entries; an invalid one gets none, so any read is caught.
    const std::size_t count = ndim >= 0 && ndim <= max_ndim ? static_cast<std::size_t>(ndim) : 0;
    const std::size_t shift = mode == ptr_mode::misaligned ? (mis % 7) + 1 : 0;
    mem.reset(new unsigned char[count * 8 + shift + 1]);  // +1: never a zero-size array
    unsigned char* p = mem.get() + shift;
    std::memcpy(p, values.data(), count * 8);
    return reinterpret_cast<const std::int64_t*>(p);
  }

  explicit live_tensor(const case_spec& c) {
    t.ndim = c.ndim;
    t.shape = const_cast<std::int64_t*>(place(c.shape, c.ndim, c.shape_mode, c.shape_mis, shape_mem));
    t.strides = const_cast<std::int64_t*>(place(c.strides, c.ndim, c.strides_mode, c.strides_mis, strides_mem));
    switch (c.data) {
      case data_kind::null: t.data = nullptr; break;
      case data_kind::buffer:
        t.data = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(scratch_middle()) + static_cast<std::uintptr_t>(c.data_value));
        break;
      case data_kind::literal: t.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(c.data_value)); break;
    }
    t.byte_offset = c.byte_offset;
    t.dtype = c.dtype;
    t.device = c.device;
  }
  live_tensor(const live_tensor&) = delete;
  live_tensor& operator=(const live_tensor&) = delete;
};

// What the generator needs to know about a target to aim at it.
struct target_hint {
  int rank;
  DLDataType dtype;
  std::size_t elem_size;
  layout_kind layout;
  std::array<i128, 4> static_extent;
  std::int32_t device_type;  // the accessor's device
};

// ---- generation ---------------------------------------------------------------------
template <class Source>
std::int64_t small_extent(Source& src) {
  const std::uint64_t k = src.below(100);
  if (k < 10) return 0;
  if (k < 30) return 1;
  if (k < 92) return 2 + static_cast<std::int64_t>(src.below(3));
  if (k < 96) return 5 + static_cast<std::int64_t>(src.below(12));
  return edge_value(src);
}

inline std::int64_t saturate(i128 v) { return v > i64_max ? INT64_MAX : v < i64_min ? INT64_MIN : static_cast<std::int64_t>(v); }

// Compact strides in the dimension order `order` (fastest first), with an optional gap.
template <class Source>
void ordered_strides(Source& src, case_spec& c, int rank, const std::array<int, max_ndim>& order, bool gaps) {
  i128 acc = 1;
  for (int i = 0; i < rank; ++i) {
    const auto r = static_cast<std::size_t>(order[static_cast<std::size_t>(i)]);
    if (gaps && chance(src, 20)) acc = mul(acc, 1 + static_cast<i128>(src.below(3)));
    c.strides[r] = saturate(acc);
    acc = mul(acc, c.shape[r]);
  }
}

inline const DLDataType valid_dtypes[] = {
    {kDLInt, 8, 1},   {kDLUInt, 8, 1},  {kDLInt, 16, 1},  {kDLFloat, 32, 1}, {kDLFloat, 64, 1},  {kDLInt, 32, 1},
    {kDLInt, 64, 1},  {kDLUInt, 16, 1}, {kDLBool, 8, 1},  {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}, {kDLComplex, 64, 1},
    {kDLFloat, 32, 4}, {kDLInt, 4, 1},  {kDLUInt, 4, 2},  {kDLInt, 1, 1},    {kDLBool, 1, 8},    {kDLFloat4_e2m1fn, 4, 1},
    {kDLFloat4_e2m1fn, 4, 2}, {kDLFloat6_e2m3fn, 6, 1}, {kDLFloat6_e3m2fn, 6, 4}, {kDLFloat8_e4m3fn, 8, 1},
    {kDLOpaqueHandle, 64, 1}, {kDLOpaqueHandle, 3, 1}, {kDLInt, 128, 1}, {kDLFloat, 8, 3}, {kDLUInt, 32, 65535}};
inline const DLDataType invalid_dtypes[] = {
    {kDLInt, 0, 1},  {kDLInt, 8, 0},  {kDLInt, 12, 1}, {kDLFloat, 4, 1}, {kDLFloat, 12, 1}, {kDLBfloat, 32, 1},
    {kDLBool, 4, 1}, {kDLComplex, 16, 1}, {kDLOpaqueHandle, 0, 1}, {kDLFloat6_e2m3fn, 8, 1}, {kDLFloat4_e2m1fn, 8, 1},
    {kDLFloat8_e5m2, 4, 1}, {20, 8, 1}, {255, 32, 1}, {kDLFloat, 255, 1}, {kDLUInt, 3, 1}};

// One field pushed to an edge.
template <class Source>
void mutate(Source& src, case_spec& c, std::uint32_t num_targets) {
  const int n = std::clamp(c.ndim, 0, max_ndim);
  const auto any_dim = [&] { return static_cast<std::size_t>(n == 0 ? 0 : src.below(static_cast<std::uint64_t>(n))); };
  switch (src.below(15)) {
    case 0: {  // ndim
      static constexpr std::int32_t values[] = {-1, 0, 1, 2, 3, 4, 5, 6, 8, 63, 64, 65, 1000, INT32_MIN, INT32_MAX, -64};
      c.ndim = values[src.below(sizeof(values) / sizeof(values[0]))];
      break;
    }
    case 1: c.shape[any_dim()] = edge_value(src); break;
    case 2: c.strides[any_dim()] = edge_value(src); break;
    case 3: {  // an empty dimension, its stride anything
      const auto r = any_dim();
      c.shape[r] = 0;
      if (chance(src, 50)) c.strides[r] = edge_value(src);
      if (chance(src, 50)) c.shape[any_dim()] = edge_value(src);
      break;
    }
    case 4: {  // an extent-1 dimension with a huge stride
      const auto r = any_dim();
      c.shape[r] = 1;
      c.strides[r] = edge_value(src);
      break;
    }
    case 5:
      c.shape_mode = static_cast<ptr_mode>(1 + src.below(2));
      c.shape_mis = static_cast<std::uint8_t>(src.below(7));
      break;
    case 6:
      c.strides_mode = static_cast<ptr_mode>(1 + src.below(2));
      c.strides_mis = static_cast<std::uint8_t>(src.below(7));
      break;
    case 7:  // data
      switch (src.below(7)) {
        case 0: c.data = data_kind::null; c.data_value = 0; break;
        case 1: c.data = data_kind::literal; c.data_value = static_cast<std::int64_t>(1 + src.below(4096)); break;  // near 0
        case 2: c.data = data_kind::literal; c.data_value = -static_cast<std::int64_t>(1 + src.below(4096)); break;  // near UINTPTR_MAX
        case 3: c.data = data_kind::buffer; c.data_value = -4096 + static_cast<std::int64_t>(src.below(128)); break;  // buffer start
        case 4: c.data = data_kind::buffer; c.data_value = 1 + static_cast<std::int64_t>(src.below(7)); break;  // misaligned
        case 5: c.data = data_kind::literal; c.data_value = edge_value(src); break;
        default: c.data = data_kind::literal; c.data_value = static_cast<std::int64_t>(src.u64()); break;
      }
      break;
    case 8: {  // byte_offset
      const std::uint64_t item = std::max<std::uint64_t>(1, packed_itemsize(c.dtype));
      switch (src.below(5)) {
        case 0: c.byte_offset = static_cast<std::uint64_t>(edge_value(src)); break;
        case 1: c.byte_offset = static_cast<std::uint64_t>(edge_value(src)) * item; break;
        case 2: c.byte_offset = 1 + src.below(item + 1); break;
        case 3: c.byte_offset = (std::uint64_t{1} << 63) - src.below(3) * item; break;
        default: c.byte_offset = UINT64_MAX - src.below(16); break;
      }
      break;
    }
    case 9:  // dtype
      if (chance(src, 50)) c.dtype = valid_dtypes[src.below(sizeof(valid_dtypes) / sizeof(valid_dtypes[0]))];
      else c.dtype = invalid_dtypes[src.below(sizeof(invalid_dtypes) / sizeof(invalid_dtypes[0]))];
      if (chance(src, 15)) c.dtype.lanes = static_cast<std::uint16_t>(src.below(5));
      break;
    case 10:  // device
      if (chance(src, 60)) c.device.device_type = static_cast<DLDeviceType>(src.below(20));
      if (chance(src, 60)) {
        static constexpr std::int32_t ids[] = {-1, 0, 1, 2, INT32_MIN, INT32_MAX, -7};
        c.device.device_id = ids[src.below(sizeof(ids) / sizeof(ids[0]))];
      }
      break;
    case 11: {  // import requirements
      switch (src.below(5)) {
        case 0: c.reject_null_strides = !c.reject_null_strides; break;
        case 1: {
          static constexpr std::uint64_t aligns[] = {0, 1, 2, 16, 48, 64, 3, 4096, std::uint64_t{1} << 40, UINT64_MAX};
          c.min_alignment = aligns[src.below(sizeof(aligns) / sizeof(aligns[0]))];
          break;
        }
        case 2: {
          static constexpr std::int32_t ids[] = {-1, 0, 1, -5};
          c.opt_device_id = ids[src.below(4)];
          break;
        }
        case 3: {
          c.num_divisors = static_cast<std::uint8_t>(src.below(6));
          for (std::size_t i = 0; i < c.num_divisors; ++i) {
            static constexpr std::int64_t ds[] = {0, 1, 2, 3, 4, -1, -2, INT64_MIN, INT64_MAX, 16};
            c.divisors[i] = ds[src.below(sizeof(ds) / sizeof(ds[0]))];
          }
          break;
        }
        default: c.subbyte_padded = !c.subbyte_padded; break;
      }
      break;
    }
    case 12:  // a fresh small shape with zeros anywhere, and random small strides
      for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
        c.shape[r] = static_cast<std::int64_t>(src.below(4));
        c.strides[r] = static_cast<std::int64_t>(src.below(13)) - 6;
      }
      break;
    case 13: c.target = static_cast<std::uint32_t>(src.below(num_targets)); break;
    default:  // huge extents with exact row-major strides (the numel boundary)
      for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r)
        c.shape[r] = chance(src, 50) ? edge_value(src) : small_extent(src);
      if (chance(src, 50)) {
        std::array<int, max_ndim> order{};
        for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = n - 1 - i;
        ordered_strides(src, c, n, order, false);
      }
      break;
  }
}

// A case aimed at target `hint` (mostly valid for it), then 0..4 fields pushed to edges.
template <class Source>
case_spec generate(Source& src, std::uint32_t num_targets, const target_hint* (*hint_of)(std::uint32_t)) {
  case_spec c;
  c.target = static_cast<std::uint32_t>(src.below(num_targets));
  const target_hint& h = *hint_of(c.target);
  c.aux_seed = src.u64();
  c.ndim = h.rank;
  c.dtype = h.dtype;
  const std::uint64_t item = std::max<std::uint64_t>(1, packed_itemsize(h.dtype));
  for (std::size_t r = 0; r < max_ndim; ++r) {
    c.shape[r] = r < 4 && h.static_extent[r] >= 0 && chance(src, 85) ? static_cast<std::int64_t>(h.static_extent[r])
                                                                    : small_extent(src);
    c.strides[r] = static_cast<std::int64_t>(src.below(9)) - 4;
  }
  // Strides that suit the layout (or not).
  std::array<int, max_ndim> order{};
  const int rank = h.rank;
  const std::uint64_t style = src.below(100);
  if (style < 15) {
    c.strides_mode = ptr_mode::null;
  } else {
    layout_kind as = h.layout;
    if (style >= 90) as = static_cast<layout_kind>(src.below(4));  // strides for another layout
    for (int i = 0; i < rank; ++i) order[static_cast<std::size_t>(i)] = as == layout_kind::left ? i : rank - 1 - i;
    if (as == layout_kind::stride || as == layout_kind::relaxed) {
      for (int i = rank - 1; i > 0; --i)
        if (chance(src, 50)) std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(src.below(static_cast<std::uint64_t>(i) + 1))]);
    }
    ordered_strides(src, c, rank, order, as != layout_kind::right && as != layout_kind::left);
    if (as == layout_kind::relaxed) {
      for (std::size_t r = 0; r < static_cast<std::size_t>(rank); ++r) {
        const std::uint64_t k = src.below(10);
        if (k < 3) c.strides[r] = c.strides[r] == INT64_MIN ? INT64_MAX : -c.strides[r];
        else if (k == 3) c.strides[r] = 0;
        else if (k == 4) c.strides[r] = static_cast<std::int64_t>(src.below(13)) - 6;
      }
    }
    for (std::size_t r = 0; r < static_cast<std::size_t>(rank); ++r)
      if (c.shape[r] == 1 && chance(src, 20)) c.strides[r] = edge_value(src);  // size-1: any stride
  }
  // data and byte_offset: the view stays at or above the base, or reaches below it.
  c.data = data_kind::buffer;
  c.data_value = 0;
  i128 low = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(rank); ++r)
    if (c.shape[r] > 1 && c.strides_mode == ptr_mode::ok) low = add(low, std::min<i128>(0, mul(c.shape[r] - 1, c.strides[r])));
  const std::uint64_t where = src.below(10);
  if (where < 5) c.byte_offset = 0;
  else if (where < 8) c.byte_offset = static_cast<std::uint64_t>(saturate(mul(-low, static_cast<i128>(item)))) + item * src.below(3);
  else c.byte_offset = item * src.below(4);
  c.device.device_type = static_cast<DLDeviceType>(h.device_type);
  if (h.device_type == kDLCPU && chance(src, 10)) c.device.device_type = chance(src, 50) ? kDLCUDAHost : kDLCUDAManaged;
  if (chance(src, 10)) c.min_alignment = chance(src, 50) ? 16 : 64;
  if (chance(src, 10)) c.opt_device_id = 0;
  if (chance(src, 10)) {
    c.num_divisors = static_cast<std::uint8_t>(rank);
    for (std::size_t r = 0; r < static_cast<std::size_t>(rank); ++r) c.divisors[r] = static_cast<std::int64_t>(src.below(4));
  }
  if (h.dtype.bits < 8 || chance(src, 5)) c.subbyte_padded = chance(src, 50);
  if (chance(src, 10)) c.reject_null_strides = true;
  // Push some fields to the edges.
  const std::uint64_t k = src.below(100);
  const int mutations = k < 30 ? 0 : k < 65 ? 1 : k < 85 ? 2 : k < 95 ? 3 : 6;
  for (int i = 0; i < mutations; ++i) mutate(src, c, num_targets);
  c.target %= num_targets;
  return c;
}

// ---- literal encoding (reproducers, fuzzer seeds) ------------------------------------
// First byte even: the fields follow literally. First byte odd: the rest drives generate().
class writer {
 public:
  template <class T>
  void put(T v) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    bytes.insert(bytes.end(), b, b + sizeof(T));
  }
  std::vector<unsigned char> bytes;
};

inline std::vector<unsigned char> encode_literal(const case_spec& c) {
  writer w;
  w.put<std::uint8_t>(0);
  w.put<std::int32_t>(c.ndim);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.shape_mode));
  w.put<std::uint8_t>(c.shape_mis);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.strides_mode));
  w.put<std::uint8_t>(c.strides_mis);
  const int n = std::clamp(c.ndim, 0, max_ndim);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(n));
  for (int r = 0; r < n; ++r) w.put<std::int64_t>(c.shape[static_cast<std::size_t>(r)]);
  for (int r = 0; r < n; ++r) w.put<std::int64_t>(c.strides[static_cast<std::size_t>(r)]);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.data));
  w.put<std::int64_t>(c.data_value);
  w.put<std::uint64_t>(c.byte_offset);
  w.put<std::uint8_t>(c.dtype.code);
  w.put<std::uint8_t>(c.dtype.bits);
  w.put<std::uint16_t>(c.dtype.lanes);
  w.put<std::int32_t>(static_cast<std::int32_t>(c.device.device_type));
  w.put<std::int32_t>(c.device.device_id);
  w.put<std::uint16_t>(static_cast<std::uint16_t>(c.target));
  w.put<std::uint8_t>(static_cast<std::uint8_t>((c.reject_null_strides ? 1 : 0) | (c.subbyte_padded ? 2 : 0)));
  w.put<std::uint64_t>(c.min_alignment);
  w.put<std::int32_t>(c.opt_device_id);
  w.put<std::uint8_t>(c.num_divisors);
  for (std::size_t i = 0; i < c.num_divisors; ++i) w.put<std::int64_t>(c.divisors[i]);
  w.put<std::uint64_t>(c.aux_seed);
  return w.bytes;
}

inline case_spec decode(const std::uint8_t* data, std::size_t size, std::uint32_t num_targets,
                        const target_hint* (*hint_of)(std::uint32_t)) {
  byte_source in{data, size};
  if ((in.take(1) & 1) != 0) return generate(in, num_targets, hint_of);
  case_spec c;
  c.ndim = static_cast<std::int32_t>(in.take(4));
  c.shape_mode = static_cast<ptr_mode>(in.take(1) % 3);
  c.shape_mis = static_cast<std::uint8_t>(in.take(1));
  c.strides_mode = static_cast<ptr_mode>(in.take(1) % 3);
  c.strides_mis = static_cast<std::uint8_t>(in.take(1));
  const std::size_t n = std::min<std::size_t>(in.take(1), max_ndim);
  for (std::size_t r = 0; r < n; ++r) c.shape[r] = static_cast<std::int64_t>(in.take(8));
  for (std::size_t r = 0; r < n; ++r) c.strides[r] = static_cast<std::int64_t>(in.take(8));
  c.data = static_cast<data_kind>(in.take(1) % 3);
  c.data_value = static_cast<std::int64_t>(in.take(8));
  c.byte_offset = in.take(8);
  c.dtype.code = static_cast<std::uint8_t>(in.take(1));
  c.dtype.bits = static_cast<std::uint8_t>(in.take(1));
  c.dtype.lanes = static_cast<std::uint16_t>(in.take(2));
  c.device.device_type = static_cast<DLDeviceType>(static_cast<std::int32_t>(in.take(4)));
  c.device.device_id = static_cast<std::int32_t>(in.take(4));
  c.target = static_cast<std::uint32_t>(in.take(2)) % num_targets;
  const auto flags = in.take(1);
  c.reject_null_strides = (flags & 1) != 0;
  c.subbyte_padded = (flags & 2) != 0;
  c.min_alignment = in.take(8);
  c.opt_device_id = static_cast<std::int32_t>(in.take(4));
  c.num_divisors = static_cast<std::uint8_t>(std::min<std::uint64_t>(in.take(1), 8));
  for (std::size_t i = 0; i < c.num_divisors; ++i) c.divisors[i] = static_cast<std::int64_t>(in.take(8));
  c.aux_seed = in.take(8);
  return c;
}

inline std::string to_hex(const std::vector<unsigned char>& bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

inline std::vector<unsigned char> from_hex(const std::string& s) {
  std::vector<unsigned char> out;
  auto val = [](char ch) { return ch <= '9' ? ch - '0' : (ch | 32) - 'a' + 10; };
  for (std::size_t i = 0; i + 1 < s.size(); i += 2) out.push_back(static_cast<unsigned char>(val(s[i]) * 16 + val(s[i + 1])));
  return out;
}

// Every field, for a reproducer.
inline std::string describe(const case_spec& c) {
  std::string s;
  char line[256];
  auto ptr = [](ptr_mode m, std::uint8_t mis) {
    return m == ptr_mode::null ? std::string("NULL")
           : m == ptr_mode::misaligned ? "misaligned by " + std::to_string((mis % 7) + 1) + " bytes"
                                       : std::string("aligned");
  };
  std::snprintf(line, sizeof line, "  ndim = %d\n", c.ndim);
  s += line;
  const int n = std::clamp(c.ndim, 0, max_ndim);
  auto values = [&](const char* name, ptr_mode m, std::uint8_t mis, const std::array<std::int64_t, max_ndim>& v) {
    if (m == ptr_mode::null) {
      s += std::string("  ") + name + " = NULL\n";
      return;
    }
    s += std::string("  ") + name + " (" + ptr(m, mis) + ") = {";
    for (int r = 0; r < n; ++r) s += (r ? ", " : "") + std::to_string(v[static_cast<std::size_t>(r)]);
    s += "}\n";
  };
  values("shape", c.shape_mode, c.shape_mis, c.shape);
  values("strides", c.strides_mode, c.strides_mis, c.strides);
  switch (c.data) {
    case data_kind::null: s += "  data = NULL\n"; break;
    case data_kind::buffer:
      std::snprintf(line, sizeof line, "  data = 64-aligned buffer %+lld bytes (0x%llx)\n", static_cast<long long>(c.data_value),
                    static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(scratch_middle()) +
                                                    static_cast<std::uintptr_t>(c.data_value)));
      s += line;
      break;
    case data_kind::literal:
      std::snprintf(line, sizeof line, "  data = 0x%llx\n", static_cast<unsigned long long>(c.data_value));
      s += line;
      break;
  }
  std::snprintf(line, sizeof line,
                "  byte_offset = %llu\n  dtype = {code %u, bits %u, lanes %u}\n  device = {type %d, id %d}\n",
                static_cast<unsigned long long>(c.byte_offset), c.dtype.code, c.dtype.bits, c.dtype.lanes,
                static_cast<int>(c.device.device_type), c.device.device_id);
  s += line;
  std::snprintf(line, sizeof line,
                "  options = {null_strides %s, subbyte_padded %d, min_alignment %llu, device_id %d, divisors {",
                c.reject_null_strides ? "reject" : "row_major", c.subbyte_padded ? 1 : 0,
                static_cast<unsigned long long>(c.min_alignment), c.opt_device_id);
  s += line;
  for (std::size_t i = 0; i < c.num_divisors; ++i) s += (i ? ", " : "") + std::to_string(c.divisors[i]);
  s += "}}\n";
  return s;
}

}  // namespace dlpm_reference
