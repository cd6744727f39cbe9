// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The reference model of dlpack_mdspan's validation rules.
//
// Deliberately simple: every quantity is computed exactly in 128-bit integers, and there
// are no early exits. Each function returns the SET of rules a tensor violates (plus the
// values the library must produce when the set is empty), so the differential test can
// ask "is the library's errc one of the rules actually broken?" whatever order the
// library checks them in.
//
// This file must never include or call the library's checking code (tensor_checks.hpp,
// import.hpp, layout_queries.hpp, requirements.hpp): it encodes the specification
// independently. It uses only <dlpack/dlpack.h>, the errc enum (to name rules) and the
// device classification (is_direct_address_device, device_traits).
//
// Spec: see the comment above each function; the numbers refer to the rule list in
// docs (structure rules 1..14).
#pragma once

#include <dlpack/dlpack.h>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/error.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace dlpm_reference {

using errc = dlpack_mdspan::errc;
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

inline constexpr i128 i64_min = INT64_MIN;
inline constexpr i128 i64_max = INT64_MAX;
inline constexpr i128 uptr_max = static_cast<i128>(UINTPTR_MAX);
inline constexpr int max_ndim = 64;

// ---- exact arithmetic ---------------------------------------------------------------
// Values beyond +-2^100 are clamped there. Every such value is far outside int64/uint64,
// so a clamped quantity only ever decides "out of range", which it already is; and the
// model never adds a clamped positive to a clamped negative.
inline constexpr i128 big = static_cast<i128>(1) << 100;
constexpr i128 clamp(i128 v) { return v > big ? big : v < -big ? -big : v; }
// Not __builtin_mul_overflow on __int128: clang lowers that to compiler-rt's __muloti4 on
// AArch64, and libgcc, the runtime Debian's clang links, has none. |a| * |b| > big exactly
// when |b| > big / |a| (integer division), so this clamps where that did, and otherwise the
// product is at most big in magnitude and cannot overflow.
constexpr i128 mul(i128 a, i128 b) {
  const u128 ua = a < 0 ? -static_cast<u128>(a) : static_cast<u128>(a);
  const u128 ub = b < 0 ? -static_cast<u128>(b) : static_cast<u128>(b);
  if (ua != 0 && ub > static_cast<u128>(big) / ua) return ((a < 0) != (b < 0)) ? -big : big;
  return a * b;
}
constexpr i128 add(i128 a, i128 b) { return clamp(clamp(a) + clamp(b)); }
constexpr bool fits_i64(i128 v) { return v >= i64_min && v <= i64_max; }

// ---- violation sets -----------------------------------------------------------------
struct violations {
  std::uint64_t mask = 0;
  void add(errc c) { mask |= std::uint64_t{1} << static_cast<int>(c); }
  [[nodiscard]] bool has(errc c) const { return (mask >> static_cast<int>(c)) & 1; }
  [[nodiscard]] bool empty() const { return mask == 0; }
  void merge(const violations& o) { mask |= o.mask; }
};

inline const char* errc_id(errc c) {
  switch (c) {
    case errc::ok: return "ok";
    case errc::null_pointer: return "null_pointer";
    case errc::extent_overflow: return "extent_overflow";
    case errc::stride_overflow: return "stride_overflow";
    case errc::not_strided: return "not_strided";
    case errc::device_mismatch: return "device_mismatch";
    case errc::device_id_mismatch: return "device_id_mismatch";
    case errc::ndim_mismatch: return "ndim_mismatch";
    case errc::invalid_ndim: return "invalid_ndim";
    case errc::dtype_mismatch: return "dtype_mismatch";
    case errc::invalid_dtype: return "invalid_dtype";
    case errc::null_shape: return "null_shape";
    case errc::negative_extent: return "negative_extent";
    case errc::shape_mismatch: return "shape_mismatch";
    case errc::null_data: return "null_data";
    case errc::null_strides: return "null_strides";
    case errc::non_compact_strides: return "non_compact_strides";
    case errc::non_positive_stride: return "non_positive_stride";
    case errc::overlapping_strides: return "overlapping_strides";
    case errc::span_overflow: return "span_overflow";
    case errc::byte_offset_overflow: return "byte_offset_overflow";
    case errc::misaligned_byte_offset: return "misaligned_byte_offset";
    case errc::misaligned_data: return "misaligned_data";
    case errc::divisibility: return "divisibility";
    case errc::subbyte_not_viewable: return "subbyte_not_viewable";
    case errc::ambiguous_layout: return "ambiguous_layout";
    case errc::no_matching_type: return "no_matching_type";
    case errc::read_only: return "read_only";
    case errc::version_mismatch: return "version_mismatch";
    case errc::invalid_argument: return "invalid_argument";
    case errc::out_of_memory: return "out_of_memory";
    case errc::internal: return "internal";
    case errc::misaligned_metadata: return "misaligned_metadata";
    case errc::unsupported_version: return "unsupported_version";
    case errc::producer_failed: return "producer_failed";
  }
  return "?";
}

inline std::string to_string(const violations& v) {
  std::string s = "{";
  for (int c = 0; c < 64; ++c) {
    if ((v.mask >> c) & 1) {
      if (s.size() > 1) s += ", ";
      s += errc_id(static_cast<errc>(c));
    }
  }
  return s + "}";
}

inline std::string to_string(i128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  u128 m = neg ? static_cast<u128>(-(v + 1)) + 1 : static_cast<u128>(v);
  std::string s;
  while (m != 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  }
  return neg ? "-" + s : s;
}

// ---- dtypes -------------------------------------------------------------------------
// The table of valid (code, bits) pairs, written out independently of the core (whose rule
// is dtype_bits_rule in dtype.hpp): the differential test compares the two, so a
// change to either one alone is caught.
inline bool dtype_bits_valid(std::uint8_t code, std::uint8_t bits) {
  switch (code) {
    case kDLInt:
    case kDLUInt: return bits == 1 || bits == 4 || bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128;
    case kDLFloat: return bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128;
    case kDLBfloat: return bits == 16;
    case kDLComplex: return bits == 32 || bits == 64 || bits == 128;
    case kDLBool: return bits == 1 || bits == 8;
    case kDLOpaqueHandle: return bits > 0;
    case kDLFloat8_e3m4:
    case kDLFloat8_e4m3:
    case kDLFloat8_e4m3b11fnuz:
    case kDLFloat8_e4m3fn:
    case kDLFloat8_e4m3fnuz:
    case kDLFloat8_e5m2:
    case kDLFloat8_e5m2fnuz:
    case kDLFloat8_e8m0fnu: return bits == 8;
    case kDLFloat6_e2m3fn:
    case kDLFloat6_e3m2fn: return bits == 6;
    case kDLFloat4_e2m1fn: return bits == 4;
    default: return false;
  }
}
inline bool dtype_valid(const DLDataType& d) { return d.lanes != 0 && dtype_bits_valid(d.code, d.bits); }
inline bool same_dtype(const DLDataType& a, const DLDataType& b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
// Packed bytes per element: bits*lanes/8 when whole, else 0.
inline std::uint64_t packed_itemsize(const DLDataType& d) {
  const std::uint64_t bits = std::uint64_t{d.bits} * d.lanes;
  return bits % 8 == 0 ? bits / 8 : 0;
}
// Storage bytes per element: with subbyte_padded, a sub-byte lane takes a whole byte.
inline std::uint64_t storage_itemsize(const DLDataType& d, bool subbyte_padded) {
  if (subbyte_padded && d.bits < 8) return d.lanes;
  return packed_itemsize(d);
}

inline bool direct_address(std::int32_t device_type) { return dlpack_mdspan::is_direct_address_device(device_type); }
inline bool aligned8(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % alignof(std::int64_t) == 0; }

// ---- structure (rules 1..14) --------------------------------------------------------
struct structure_model {
  violations v;
  bool ndim_valid = false;
  bool shape_known = false;    // extents could be read (ndim valid, shape non-NULL and aligned)
  bool strides_known = false;  // explicit strides readable, or implicit ones computable
  bool numel_known = false;    // extents known and non-negative, or some extent is 0
  i128 numel = 0;              // exact (clamped)
  std::array<i128, max_ndim> e{};
  std::array<i128, max_ndim> s{};  // effective strides (explicit, or implicit row-major)
  i128 low = 0, high = 0;          // element index span (0, 0 when empty)
  std::uint64_t itemsize = 0;      // storage itemsize
  bool implicit_strides = false;
  [[nodiscard]] bool ok() const { return v.empty(); }
};

// Reads the metadata the way a correct library may: never through NULL or misaligned
// pointers, never when ndim is out of range. Fills e, s and the *_known flags.
inline void read_metadata(const DLTensor& t, structure_model& m) {
  m.ndim_valid = t.ndim >= 0 && t.ndim <= max_ndim;
  if (!m.ndim_valid) return;
  const int n = t.ndim;
  m.shape_known = n == 0 || (t.shape != nullptr && aligned8(t.shape));
  if (!m.shape_known) return;
  for (int r = 0; r < n; ++r) {
    std::int64_t x = 0;
    std::memcpy(&x, t.shape + r, sizeof x);
    m.e[static_cast<std::size_t>(r)] = x;
  }
  if (n > 0 && t.strides == nullptr) {
    i128 acc = 1;  // implicit row-major: s_r = prod_{q > r} e_q, exact
    for (int r = n - 1; r >= 0; --r) {
      m.s[static_cast<std::size_t>(r)] = acc;
      acc = mul(acc, m.e[static_cast<std::size_t>(r)]);
    }
    m.strides_known = true;
  } else if (n == 0 || aligned8(t.strides)) {
    for (int r = 0; r < n; ++r) {
      std::int64_t x = 0;
      std::memcpy(&x, t.strides + r, sizeof x);
      m.s[static_cast<std::size_t>(r)] = x;
    }
    m.strides_known = true;
  }
}

// Rules 1, 4, 5, 7, 8: what numel(t) checks. `maybe` collects codes a correct library MAY
// report (acceptance is still allowed): the spec leaves them open.
inline void numel_rules(const DLTensor& t, structure_model& m, violations* maybe) {
  if (!m.ndim_valid) m.v.add(errc::invalid_ndim);  // 1
  if (m.ndim_valid && t.ndim > 0) {
    if (t.shape == nullptr) m.v.add(errc::null_shape);                   // 4
    else if (!aligned8(t.shape)) m.v.add(errc::misaligned_metadata);     // 5 (shape)
    if (t.strides != nullptr && !aligned8(t.strides)) {                  // 5 (strides)
      if (maybe != nullptr) maybe->add(errc::misaligned_metadata);
      else m.v.add(errc::misaligned_metadata);
    }
  }
  if (!m.shape_known) return;
  bool any_zero = false, any_negative = false;
  i128 magnitude = 1;
  for (int r = 0; r < t.ndim; ++r) {
    const i128 e = m.e[static_cast<std::size_t>(r)];
    any_zero |= e == 0;
    any_negative |= e < 0;
    magnitude = mul(magnitude, e < 0 ? -e : e);
  }
  if (any_negative) m.v.add(errc::negative_extent);  // 7
  if (any_zero) {                                    // 8: 0 whatever the other extents
    m.numel_known = true;
    m.numel = 0;
  } else if (!any_negative) {
    m.numel_known = true;
    m.numel = magnitude;
    if (m.numel > i64_max) m.v.add(errc::span_overflow);
  } else if (magnitude > i64_max) {
    // Negative extents and an element count that overflows: negative_extent is broken
    // anyway; a library that multiplies before it has seen the negative one may also say
    // span_overflow. (The spec leaves "numel of a shape with negative extents" open.)
    m.v.add(errc::span_overflow);
  }
}

// check_structure(t, {null_strides, subbyte_padded}): rules 1..14.
inline structure_model structure(const DLTensor& t, bool reject_null_strides, bool subbyte_padded) {
  structure_model m;
  read_metadata(t, m);
  numel_rules(t, m, nullptr);
  m.itemsize = storage_itemsize(t.dtype, subbyte_padded);
  m.implicit_strides = m.ndim_valid && t.ndim > 0 && t.strides == nullptr;
  if (!dtype_valid(t.dtype)) m.v.add(errc::invalid_dtype);                       // 2
  if (t.device.device_id < 0) m.v.add(errc::device_id_mismatch);                  // 3
  if (m.implicit_strides && reject_null_strides) m.v.add(errc::null_strides);    // 6
  const i128 byte_offset = static_cast<i128>(t.byte_offset);
  if (byte_offset > i64_max) m.v.add(errc::byte_offset_overflow);                // 9
  if (m.itemsize != 0 && t.byte_offset % m.itemsize != 0) m.v.add(errc::misaligned_byte_offset);  // 10
  const bool direct = direct_address(t.device.device_type);
  const i128 data = static_cast<i128>(reinterpret_cast<std::uintptr_t>(t.data));
  if (t.data != nullptr && direct && data + byte_offset > uptr_max) m.v.add(errc::byte_offset_overflow);  // 11

  if (!m.numel_known || m.numel == 0) return m;  // nothing below applies to an empty tensor
  if (t.data == nullptr) m.v.add(errc::null_data);  // 12
  if (!m.strides_known) return m;                    // misaligned strides: already a violation
  i128 low = 0, high = 0;                            // 13
  for (int r = 0; r < t.ndim; ++r) {
    const i128 e = m.e[static_cast<std::size_t>(r)], s = m.s[static_cast<std::size_t>(r)];
    if (e == 1) continue;  // only index 0 exists: the stride is ignored
    if (s == i64_min) m.v.add(errc::stride_overflow);
    const i128 reach = mul(e - 1, s);
    low = add(low, std::min<i128>(0, reach));
    high = add(high, std::max<i128>(0, reach));
  }
  if (low < i64_min || high > i64_max) m.v.add(errc::span_overflow);
  m.low = low;
  m.high = high;
  if (m.itemsize != 0) {  // 14
    const i128 item = static_cast<i128>(m.itemsize);
    const i128 off = static_cast<i128>(t.byte_offset / m.itemsize);
    const i128 first_byte = mul(add(off, low), item);
    const i128 end_byte = mul(add(add(off, high), 1), item);
    if (!fits_i64(first_byte) || !fits_i64(end_byte)) m.v.add(errc::span_overflow);
    if (direct && (data + first_byte <= 0 || data + end_byte > uptr_max)) m.v.add(errc::byte_offset_overflow);
  } else if (dtype_valid(t.dtype)) {  // packed sub-byte: the bytes the bits reach must fit too (byte_span's)
    const i128 bits = i128{t.dtype.bits} * t.dtype.lanes;
    const auto floor8 = [](i128 v) { return v >= 0 ? v / 8 : -((-v + 7) / 8); };
    const i128 first_byte = add(byte_offset, floor8(mul(low, bits)));
    const i128 end_byte = add(byte_offset, -floor8(-mul(add(high, 1), bits)));
    if (!fits_i64(first_byte) || !fits_i64(end_byte)) m.v.add(errc::span_overflow);
  }
  return m;
}

inline structure_model validate(const DLTensor& t) { return structure(t, false, false); }

// ---- numel / nbytes -----------------------------------------------------------------
struct value_model {
  violations v;      // must report one of these (accept iff empty)
  violations maybe;  // may also report one of these, or accept
  i128 value = 0;
};

// numel(t): rules 1, 4, 5, 7, 8 only.
// Open point: rule 5 names strides too, but numel never reads them; a misaligned strides
// pointer alone is allowed either way (accept, or misaligned_metadata).
inline value_model numel(const DLTensor& t) {
  structure_model m;
  read_metadata(t, m);
  value_model out;
  numel_rules(t, m, &out.maybe);
  out.v = m.v;
  out.value = m.numel;
  return out;
}

// nbytes(t): numel's rules plus 2; ceil(numel * bits * lanes / 8), span_overflow only when
// that result exceeds INT64_MAX.
inline value_model nbytes(const DLTensor& t) {
  value_model out = numel(t);
  if (!dtype_valid(t.dtype)) out.v.add(errc::invalid_dtype);
  const i128 bits = mul(out.value, i128{t.dtype.bits} * t.dtype.lanes);
  out.value = bits / 8 + (bits % 8 != 0);
  if (out.value > i64_max) out.v.add(errc::span_overflow);
  return out;
}

// ---- contiguity ---------------------------------------------------------------------
// False whenever validate fails; true when empty; NULL strides: C always, F iff at most one
// extent > 1; else walking from the fastest dimension, every extent > 1 needs
// stride == product of the extents walked so far.
inline bool contiguous(const DLTensor& t, bool c_order) {
  const structure_model m = validate(t);
  if (!m.ok()) return false;
  if (m.numel == 0) return true;
  if (t.ndim > 0 && t.strides == nullptr) {
    if (c_order) return true;
    int big_dims = 0;
    for (int r = 0; r < t.ndim; ++r) big_dims += m.e[static_cast<std::size_t>(r)] > 1;
    return big_dims <= 1;
  }
  i128 expected = 1;
  for (int i = 0; i < t.ndim; ++i) {
    const auto r = static_cast<std::size_t>(c_order ? t.ndim - 1 - i : i);
    if (m.e[r] > 1 && m.s[r] != expected) return false;
    expected = mul(expected, m.e[r]);
  }
  return true;
}

// ---- element_byte_offset ------------------------------------------------------------
// Precondition: validate(t) passed. subbyte_not_viewable when the packed itemsize is 0;
// invalid_argument when ANY index is outside [0, e_r); else the exact byte offset.
inline value_model element_byte_offset(const DLTensor& t, const std::int64_t* index) {
  const structure_model m = validate(t);
  value_model out;
  const std::uint64_t item = packed_itemsize(t.dtype);
  if (item == 0) out.v.add(errc::subbyte_not_viewable);
  i128 sum = 0;
  bool in_range = true;
  for (int r = 0; r < t.ndim; ++r) {
    const i128 i = index[r], e = m.e[static_cast<std::size_t>(r)];
    if (i < 0 || i >= e) in_range = false;
    else sum = add(sum, mul(i, m.s[static_cast<std::size_t>(r)]));
  }
  if (!in_range) out.v.add(errc::invalid_argument);
  out.value = add(static_cast<i128>(t.byte_offset), mul(sum, static_cast<i128>(item)));
  return out;
}

// The C facade: dlpm_element_offset = validate, then element_byte_offset.
inline value_model c_element_offset(const DLTensor& t, const std::int64_t* index) {
  const structure_model m = validate(t);
  if (!m.ok()) return value_model{m.v, {}, 0};
  return element_byte_offset(t, index);
}

// ---- import (try_to_mdspan<M>) -------------------------------------------------------
enum class layout_kind { right, left, stride, relaxed };

inline const char* layout_name(layout_kind k) {
  switch (k) {
    case layout_kind::right: return "std::layout_right";
    case layout_kind::left: return "std::layout_left";
    case layout_kind::stride: return "std::layout_stride";
    case layout_kind::relaxed: return "dlpack_mdspan::layout_stride_relaxed";
  }
  return "?";
}

// What the model needs to know about a target mdspan type M.
struct target_desc {
  const char* name;
  DLDataType dtype;          // dtype_v<element_type>
  std::size_t elem_size;     // sizeof(element_type)
  std::size_t elem_align;    // alignof(element_type)
  int rank;
  i128 index_min, index_max; // numeric_limits<index_type>
  layout_kind layout;
  std::array<i128, 4> static_extent;  // -1: dynamic
  bool (*accepts)(std::int32_t device_type);  // device_traits<accessor_type>::accepts
};

// The model's own copy of what a typed import is given: the tensor_requirements fields the
// generator draws, and the tensor's padded sub-byte flag (it must not include import.hpp).
struct import_opts {
  bool reject_null_strides = false;
  std::uint64_t min_alignment = 0;
  std::int32_t device_id = -1;
  const std::int64_t* divisors = nullptr;
  std::size_t num_divisors = 0;
  bool subbyte_padded = false;
};

inline bool in_index(i128 v, const target_desc& d) { return v >= d.index_min && v <= d.index_max; }

// For an empty tensor into std::layout_stride: do strides exist that satisfy the mapping's
// preconditions (all in [1, index_max], and a permutation P with
// s[p_i] >= s[p_{i-1}] * e[p_{i-1}])? Brute force over every permutation, greedily taking
// the smallest stride each step allows (which is optimal for a fixed permutation).
inline bool layout_stride_synthesisable(const structure_model& m, int rank, i128 index_max) {
  std::array<int, 4> p{0, 1, 2, 3};
  if (rank <= 1) return index_max >= 1;
  do {
    i128 s = 1;
    bool ok = s <= index_max;
    for (int i = 1; i < rank && ok; ++i) {
      s = std::max<i128>(1, mul(s, m.e[static_cast<std::size_t>(p[i - 1])]));
      ok = s <= index_max;
    }
    if (ok) return true;
  } while (std::next_permutation(p.begin(), p.begin() + rank));
  return false;
}

struct import_model {
  violations v;
  violations maybe;  // codes a correct library may report, or not (open points of the spec)
  structure_model s;
  // When accepted: the address of element idx is base + sum(idx[r] * s[r]) * itemsize.
  i128 base = 0;  // data + byte_offset
};

// try_view<M>(t, flags, requirements): the structure rules (with their null-strides policy
// and the flags' padding) plus the target's rules.
inline import_model import(const DLTensor& t, const import_opts& o, const target_desc& d) {
  import_model out;
  out.s = structure(t, o.reject_null_strides, o.subbyte_padded);
  const structure_model& m = out.s;
  violations& v = out.v;
  v = m.v;
  // Options: checked always, also for empty tensors.
  if (o.min_alignment != 0 && (o.min_alignment & (o.min_alignment - 1)) != 0) v.add(errc::invalid_argument);
  const bool divisors_given = o.num_divisors != 0;
  if (divisors_given && o.num_divisors != static_cast<std::size_t>(d.rank)) v.add(errc::invalid_argument);
  for (std::size_t i = 0; i < o.num_divisors; ++i)
    if (o.divisors[i] < 0) v.add(errc::invalid_argument);
  // Open point: the spec names device_id -1 (any) and >= 0 (that ordinal); a library may
  // refuse other negative values as invalid_argument, or treat them as "any".
  if (o.device_id < -1) out.maybe.add(errc::invalid_argument);
  if (m.ndim_valid && t.ndim != d.rank) v.add(errc::ndim_mismatch);
  if (!d.accepts(t.device.device_type)) v.add(errc::device_mismatch);
  if (o.device_id >= 0 && t.device.device_id != o.device_id) v.add(errc::device_id_mismatch);
  if (dtype_valid(t.dtype) && !same_dtype(t.dtype, d.dtype)) v.add(errc::dtype_mismatch);
  if (storage_itemsize(t.dtype, o.subbyte_padded) != d.elem_size) v.add(errc::subbyte_not_viewable);

  const i128 data = static_cast<i128>(reinterpret_cast<std::uintptr_t>(t.data));
  out.base = data + static_cast<i128>(t.byte_offset);
  if (!m.ndim_valid || t.ndim != d.rank || !m.shape_known) return out;
  const int rank = d.rank;
  for (int r = 0; r < rank; ++r) {
    const i128 e = m.e[static_cast<std::size_t>(r)];
    if (!in_index(e, d)) v.add(errc::extent_overflow);
    if (d.static_extent[static_cast<std::size_t>(r)] >= 0 && d.static_extent[static_cast<std::size_t>(r)] != e)
      v.add(errc::shape_mismatch);
    if (divisors_given && o.num_divisors == static_cast<std::size_t>(rank)) {
      const i128 div = o.divisors[r];
      if (div > 1 && e % div != 0) v.add(errc::divisibility);
    }
  }
  if (!m.numel_known) return out;
  if (!in_index(m.numel, d)) v.add(errc::extent_overflow);
  const bool direct = direct_address(t.device.device_type);

  if (m.numel == 0) {
    // Empty: strides are free, but a compact mapping's stride(r), a product of extents
    // that libc++ computes in index_type in an order of its own, must not overflow: the
    // product of its non-zero factors must be representable.
    if (d.layout == layout_kind::right || d.layout == layout_kind::left) {
      for (int r = 0; r < rank; ++r) {
        i128 compact = 1;
        for (int q = 0; q < rank; ++q)
          if ((d.layout == layout_kind::right ? q > r : q < r) && m.e[static_cast<std::size_t>(q)] != 0)
            compact = mul(compact, m.e[static_cast<std::size_t>(q)]);
        if (!in_index(compact, d)) v.add(errc::stride_overflow);
      }
    }
    // A std::layout_stride mapping still needs valid ones.
    if (d.layout == layout_kind::stride) {
      bool extents_fit = true;
      for (int r = 0; r < rank; ++r) extents_fit &= in_index(m.e[static_cast<std::size_t>(r)], d);
      if (extents_fit && !layout_stride_synthesisable(m, rank, d.index_max)) v.add(errc::stride_overflow);
    }
    return out;
  }

  const i128 align = std::max<i128>(static_cast<i128>(o.min_alignment), static_cast<i128>(d.elem_align));
  if (direct && out.base % align != 0) v.add(errc::misaligned_data);
  if (!m.strides_known) return out;

  switch (d.layout) {
    case layout_kind::right:
    case layout_kind::left: {
      for (int r = 0; r < rank; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        if (m.e[ur] <= 1) continue;
        i128 compact = 1;  // product of the extents of the faster dimensions
        for (int q = 0; q < rank; ++q)
          if (d.layout == layout_kind::right ? q > r : q < r) compact = mul(compact, m.e[static_cast<std::size_t>(q)]);
        if (m.s[ur] != compact) v.add(errc::non_compact_strides);
      }
      break;
    }
    case layout_kind::stride: {
      std::array<int, 4> dims{};
      int n = 0;
      for (int r = 0; r < rank; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        if (m.e[ur] <= 1) continue;  // extent 1: stride ignored (the mapping gets 1)
        if (m.s[ur] <= 0) v.add(errc::non_positive_stride);
        if (!in_index(m.s[ur], d)) v.add(errc::stride_overflow);
        dims[static_cast<std::size_t>(n++)] = r;
      }
      std::sort(dims.begin(), dims.begin() + n, [&](int a, int b) {
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        return m.s[ua] < m.s[ub] || (m.s[ua] == m.s[ub] && m.e[ua] < m.e[ub]);
      });
      for (int i = 1; i < n; ++i) {
        const auto prev = static_cast<std::size_t>(dims[static_cast<std::size_t>(i - 1)]);
        const auto cur = static_cast<std::size_t>(dims[static_cast<std::size_t>(i)]);
        if (m.s[cur] < mul(m.s[prev], m.e[prev])) v.add(errc::overlapping_strides);
      }
      if (!in_index(add(m.high, 1), d)) v.add(errc::span_overflow);
      break;
    }
    case layout_kind::relaxed: {
      for (int r = 0; r < rank; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        if (m.e[ur] > 1 && !in_index(m.s[ur], d)) v.add(errc::stride_overflow);
      }
      if (m.itemsize != 0) {
        // Keep the producer's base when off + low >= 0, else rebase on the lowest element.
        const i128 off = static_cast<i128>(t.byte_offset / m.itemsize);
        const i128 shift = add(off, m.low) < 0 ? add(off, m.low) : 0;
        const i128 mapped_offset = off - shift;
        if (!in_index(add(add(mapped_offset, m.high), 1), d)) v.add(errc::span_overflow);
      }
      break;
    }
  }
  return out;
}

// The address of element `idx` (rank entries) of an accepted import, exactly.
inline i128 element_address(const import_model& im, const std::int64_t* idx, int rank, std::size_t elem_size) {
  i128 sum = 0;
  for (int r = 0; r < rank; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    if (im.s.e[ur] == 1) continue;  // index 0 only, whatever the stride
    sum = add(sum, mul(idx[r], im.s.s[ur]));
  }
  return add(im.base, mul(sum, static_cast<i128>(elem_size)));
}

// Does a std::layout_stride mapping with these extents and strides satisfy the standard's
// preconditions? All strides > 0 and <= index_max; some permutation P with
// s[p_i] >= s[p_{i-1}] * e[p_{i-1}]; required_span_size representable.
inline bool layout_stride_preconditions(const i128* e, const i128* s, int rank, i128 index_max) {
  bool any_zero = false;
  i128 span = 1;
  for (int r = 0; r < rank; ++r) {
    if (s[r] <= 0 || s[r] > index_max || e[r] < 0 || e[r] > index_max) return false;
    any_zero |= e[r] == 0;
    span = add(span, mul(e[r] - 1, s[r]));
  }
  if (!any_zero && span > index_max) return false;
  if (rank <= 1) return true;
  std::array<int, 4> p{0, 1, 2, 3};
  do {
    bool ok = true;
    for (int i = 1; i < rank && ok; ++i) ok = s[p[i]] >= mul(s[p[i - 1]], e[p[i - 1]]);
    if (ok) return true;
  } while (std::next_permutation(p.begin(), p.begin() + rank));
  return false;
}

}  // namespace dlpm_reference
