// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The differential comparison: for one case_spec, every public check of the core (C++ and
// C facade) against the reference model. Shared by dlpm_differential (CTest) and the
// fuzz_differential libFuzzer target.
//
// A disagreement is recorded under a key naming the function and the kind of
// disagreement; the first case of each kind is kept as a reproducer (every field, the
// target, and `--replay HEX`).
#pragma once

#include <dlpack_mdspan.h>

#include "reference_model.hpp"
#include "targets.hpp"
#include "tensor_generator.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define DLPM_DIFFERENTIAL_SANITIZED 1
#include <sanitizer/common_interface_defs.h>
#endif
#endif

namespace dlpm_differential {

inline const std::vector<target_entry>& target_table() {
  static const std::vector<target_entry> table = [] {
    std::vector<target_entry> all;
    for (auto part : {targets_right(), targets_left(), targets_stride(), targets_relaxed(), targets_extra()})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return table;
}

// The second target a case is imported into: mostly one of the same rank as the tensor,
// often also of the same dtype, so that the comparison gets past those checks.
inline std::uint32_t second_target(const ref::case_spec& c) {
  const auto& table = target_table();
  const std::uint64_t pick = c.aux_seed >> 32;
  if (c.ndim < 0 || c.ndim > 4 || (pick & 7) == 0) return static_cast<std::uint32_t>(pick % table.size());
  std::uint32_t same_rank[256], same_dtype[256];
  std::size_t n_rank = 0, n_dtype = 0;
  for (std::uint32_t i = 0; i < table.size() && n_rank < 256; ++i) {
    if (table[i].desc.rank != c.ndim) continue;
    same_rank[n_rank++] = i;
    if (ref::same_dtype(table[i].desc.dtype, c.dtype)) same_dtype[n_dtype++] = i;
  }
  if ((pick & 7) >= 3 && n_dtype != 0) return same_dtype[(pick >> 3) % n_dtype];
  return same_rank[(pick >> 3) % n_rank];
}

inline const ref::target_hint* hint_of(std::uint32_t i) { return &target_table()[i % target_table().size()].hint; }
inline std::uint32_t num_targets() { return static_cast<std::uint32_t>(target_table().size()); }

inline ref::case_spec generate_case(std::uint64_t seed, std::uint64_t index) {
  ref::rng_source src(seed * 0x9e3779b97f4a7c15ULL + index);
  return ref::generate(src, num_targets(), &hint_of);
}

inline ref::case_spec decode_case(const std::uint8_t* data, std::size_t size) {
  return ref::decode(data, size, num_targets(), &hint_of);
}

inline std::string str(i128 v) { return ref::to_string(v); }
inline const char* id(dm::errc c) { return ref::errc_id(c); }

class differential {
 public:
  struct group {
    std::uint64_t count = 0;
    std::string reproducer;
  };

  std::uint64_t cases = 0, comparisons = 0, disagreements = 0;
  std::uint64_t imports_accepted = 0, imports_refused = 0, validate_accepted = 0;
  std::map<std::string, group> groups;
  std::array<std::uint64_t, 64> validate_refusals{}, import_refusals{};  // by errc (coverage)
  bool abort_on_disagreement = false;  // the fuzzer: stop at the first one

  differential() {
#ifdef DLPM_DIFFERENTIAL_SANITIZED
    // A sanitizer report (UB, out-of-bounds read) ends the process inside the core: say
    // which case it was.
    __sanitizer_set_death_callback(&print_current_case);
#endif
  }

  void run(const ref::case_spec& c) {
    ++cases;
    spec_ = &c;
    current_case() = &c;
    const ref::live_tensor live(c);
    const DLTensor& t = live.t;
    check_structure_functions(t);
    check_values(t);
    check_contiguity(t);
    check_element_offsets(t, c);
    check_c_facade(t, c);
    const auto& table = target_table();
    check_import(t, c, table[c.target % table.size()]);
    check_import(t, c, table[second_target(c)]);  // the same tensor, another target
    spec_ = nullptr;
    current_case() = nullptr;
  }

  static const ref::case_spec*& current_case() {
    static const ref::case_spec* current = nullptr;
    return current;
  }

  static void print_current_case() {
    const ref::case_spec* c = current_case();
    if (c == nullptr) return;
    std::fprintf(stderr, "\n=== the sanitizer report above happened in this case:\n%s  target = %s\n  second target = %s\n"
                 "  reproduce: dlpm_differential --replay %s\n",
                 ref::describe(*c).c_str(), target_table()[c->target % target_table().size()].desc.name,
                 target_table()[second_target(*c)].desc.name, ref::to_hex(ref::encode_literal(*c)).c_str());
  }

  void print_coverage(std::FILE* out) const {
    for (const auto* h : {&validate_refusals, &import_refusals}) {
      std::fprintf(out, "  %s refusals by errc:", h == &validate_refusals ? "validate" : "try_to_mdspan");
      for (std::size_t c = 0; c < 64; ++c)
        if ((*h)[c] != 0) std::fprintf(out, " %s %llu", id(static_cast<dm::errc>(c)), static_cast<unsigned long long>((*h)[c]));
      std::fprintf(out, "\n");
    }
  }

  void print_report(std::FILE* out) const {
    for (const auto& [key, g] : groups) {
      std::fprintf(out, "\n=== DISAGREEMENT x%llu: %s\n%s", static_cast<unsigned long long>(g.count), key.c_str(),
                   g.reproducer.c_str());
    }
  }

 private:
  const ref::case_spec* spec_ = nullptr;

  void disagree(const std::string& key, const std::string& detail) {
    ++disagreements;
    group& g = groups[key];
    if (g.count++ == 0) {
      g.reproducer = detail + "\n" + ref::describe(*spec_) + "  target = " +
                     target_table()[spec_->target % target_table().size()].desc.name + "\n  second target = " +
                     target_table()[second_target(*spec_)].desc.name +
                     "\n  reproduce: dlpm_differential --replay " + ref::to_hex(ref::encode_literal(*spec_)) + "\n";
    }
    if (abort_on_disagreement) {
      print_report(stderr);
      std::fflush(stderr);
      __builtin_trap();
    }
  }

  // accepted <=> must is empty; a refusal's code is in must (or maybe); messages non-empty.
  bool outcome(const std::string& fn, bool accepted, dm::errc code, bool message_empty, const ref::violations& must,
               const ref::violations& maybe = {}) {
    ++comparisons;
    if (accepted && !must.empty()) {
      disagree(fn + ": accepted, the model says it violates " + ref::to_string(must), "");
      return false;
    }
    if (!accepted) {
      ref::violations allowed = must;
      allowed.merge(maybe);
      if (must.empty() && !maybe.has(code)) {
        disagree(fn + ": refused with " + id(code) + ", the model accepts", "");
        return false;
      }
      if (!allowed.has(code)) {
        disagree(fn + ": refused with " + id(code) + ", the model's set is " + ref::to_string(allowed), "");
        return false;
      }
      if (message_empty) disagree(fn + ": refused with an empty message", "");
    }
    return true;
  }

  void values_equal(const std::string& what, i128 lib, i128 model) {
    ++comparisons;
    if (lib != model) disagree(what + " differs", "  library: " + str(lib) + "\n  model:   " + str(model));
  }

  // ---- validate / check_structure ------------------------------------------------------
  void check_structure_functions(const DLTensor& t) {
    dm::error err;
    const bool ok = dm::validate(t, &err);
    validate_accepted += ok;
    if (!ok) ++validate_refusals[static_cast<std::size_t>(err.code()) % 64];
    outcome("validate", ok, err.code(), err.message().empty(), ref::validate(t).v);
    for (const bool reject : {false, true}) {
      for (const bool padded : {false, true}) {
        const std::string fn = std::string("check_structure{null_strides ") + (reject ? "reject" : "row_major") +
                               ", subbyte_padded " + (padded ? "on" : "off") + "}";
        const auto model = ref::structure(t, reject, padded);
        dm::tensor_summary s;
        dm::error e;
        const bool lib_ok = dm::check_structure(
            t, dm::structure_options{reject ? dm::null_strides_policy::reject : dm::null_strides_policy::row_major, padded}, s, &e);
        if (outcome(fn, lib_ok, e.code(), e.message().empty(), model.v) && lib_ok) {
          values_equal(fn + " summary.numel", s.numel, model.numel);
          values_equal(fn + " summary.lowest_index", s.lowest_index, model.low);
          values_equal(fn + " summary.highest_index", s.highest_index, model.high);
          values_equal(fn + " summary.itemsize", s.itemsize, model.itemsize);
          values_equal(fn + " summary.implicit_strides", s.implicit_strides, model.implicit_strides);
        }
      }
    }
  }

  // ---- numel / nbytes ------------------------------------------------------------------
  void check_values(const DLTensor& t) {
    {
      const auto model = ref::numel(t);
      const auto lib = dm::numel(t);
      const bool ok = lib.has_value();
      if (outcome("numel", ok, ok ? dm::errc::ok : lib.error().code(), ok ? false : lib.error().message().empty(), model.v,
                  model.maybe) &&
          ok)
        values_equal("numel value", *lib, model.value);
      std::int64_t out = -1;
      const dlpm_status st = dlpm_numel(&t, &out);
      if (c_outcome("dlpm_numel", st, model.v, model.maybe) && st == DLPM_OK) values_equal("dlpm_numel value", out, model.value);
    }
    {
      const auto model = ref::nbytes(t);
      const auto lib = dm::nbytes(t);
      const bool ok = lib.has_value();
      if (outcome("nbytes", ok, ok ? dm::errc::ok : lib.error().code(), ok ? false : lib.error().message().empty(), model.v,
                  model.maybe) &&
          ok)
        values_equal("nbytes value", *lib, model.value);
      std::int64_t out = -1;
      const dlpm_status st = dlpm_nbytes(&t, &out);
      if (c_outcome("dlpm_nbytes", st, model.v, model.maybe) && st == DLPM_OK) values_equal("dlpm_nbytes value", out, model.value);
    }
  }

  bool c_outcome(const std::string& fn, dlpm_status st, const ref::violations& must, const ref::violations& maybe = {}) {
    const bool message_empty = st != DLPM_OK && dlpm_last_error()[0] == '\0';
    return outcome(fn, st == DLPM_OK, static_cast<dm::errc>(st), message_empty, must, maybe);
  }

  // ---- contiguity ----------------------------------------------------------------------
  void check_contiguity(const DLTensor& t) {
    const bool c = ref::contiguous(t, true), f = ref::contiguous(t, false);
    values_equal("is_c_contiguous", dm::is_c_contiguous(t), c);
    values_equal("is_f_contiguous", dm::is_f_contiguous(t), f);
    values_equal("is_contiguous", dm::is_contiguous(t), c || f);
    const auto v = ref::validate(t).v;
    for (const char order : {'C', 'F', 'A', 'Z'}) {
      std::int32_t out = -1;
      const dlpm_status st = dlpm_is_contiguous(&t, order, &out);
      ref::violations must = v;
      if (must.empty() && order == 'Z') must.add(dm::errc::invalid_argument);
      const std::string fn = std::string("dlpm_is_contiguous('") + order + "')";
      if (c_outcome(fn, st, must) && st == DLPM_OK)
        values_equal(fn + " value", out, order == 'C' ? c : order == 'F' ? f : (c || f));
    }
  }

  // ---- element offsets -----------------------------------------------------------------
  // Indices: in range (first, last, random), and out of range in exactly one dimension
  // (-1, e, INT64_MAX, INT64_MIN) with the other dimensions at their largest index (or 0
  // when empty), which catches multiplying before all indices are checked.
  static std::vector<std::vector<std::int64_t>> offset_indices(const DLTensor& t, const ref::structure_model& m, std::uint64_t aux) {
    std::vector<std::vector<std::int64_t>> out;
    const int n = t.ndim;
    ref::rng_source rng(aux);
    std::vector<std::int64_t> corner(static_cast<std::size_t>(n)), zero(static_cast<std::size_t>(n)), rnd(static_cast<std::size_t>(n));
    for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
      const i128 e = m.e[r];
      corner[r] = e > 0 ? static_cast<std::int64_t>(e - 1) : 0;
      rnd[r] = e > 0 ? static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(e))) : 0;
    }
    out.push_back(zero);
    out.push_back(corner);
    out.push_back(rnd);
    if (n > 0) {
      static constexpr std::int64_t bad[] = {-1, 0 /* = e */, INT64_MAX, INT64_MIN};
      for (const std::int64_t b : bad) {
        const auto r = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(n)));
        auto idx = corner;
        idx[r] = b == 0 ? static_cast<std::int64_t>(m.e[r]) : b;
        out.push_back(idx);
      }
      auto last_bad = corner;  // out of range only in the last dimension
      last_bad[static_cast<std::size_t>(n - 1)] = static_cast<std::int64_t>(m.e[static_cast<std::size_t>(n - 1)]);
      out.push_back(last_bad);
    }
    return out;
  }

  void check_element_offsets(const DLTensor& t, const ref::case_spec& c) {
    const auto m = ref::validate(t);
    dm::error err;
    if (!m.ok() || !dm::validate(t, &err)) return;  // element_byte_offset's precondition
    for (const auto& idx_values : offset_indices(t, m, c.aux_seed)) {
      // Exactly ndim entries on the heap: reading past them is an ASan report.
      std::unique_ptr<std::int64_t[]> idx(new std::int64_t[idx_values.size() + 1]);
      std::copy(idx_values.begin(), idx_values.end(), idx.get());
      std::string where = "{";
      for (std::size_t r = 0; r < idx_values.size(); ++r) where += (r ? ", " : "") + std::to_string(idx_values[r]);
      where += "}";
      const auto model = ref::element_byte_offset(t, idx.get());
      if (model.v.empty() && !ref::fits_i64(model.value))
        disagree("MODEL/SPEC: element_byte_offset result does not fit int64 although validate passed",
                 "  index = " + where + ", value = " + str(model.value));
      std::int64_t off = 0;
      dm::error e;
      const bool ok = dm::element_byte_offset(t, idx.get(), &off, &e);
      if (outcome("element_byte_offset", ok, e.code(), e.message().empty(), model.v) && ok)
        values_equal("element_byte_offset value (index " + where + ")", off, model.value);
    }
  }

  // ---- the C facade --------------------------------------------------------------------
  void check_c_facade(const DLTensor& t, const ref::case_spec& c) {
    c_outcome("dlpm_validate", dlpm_validate(&t), ref::validate(t).v);
    const auto m = ref::validate(t);
    if (!m.ndim_valid || !m.shape_known) {
      // Only the refusal can be checked; the index array is never read.
      std::unique_ptr<std::int64_t[]> idx(new std::int64_t[1]{0});
      std::int64_t out = 0;
      c_outcome("dlpm_element_offset", dlpm_element_offset(&t, idx.get(), &out), m.v);
      return;
    }
    for (const auto& idx_values : offset_indices(t, m, c.aux_seed ^ 0x55)) {
      std::unique_ptr<std::int64_t[]> idx(new std::int64_t[idx_values.size() + 1]);
      std::copy(idx_values.begin(), idx_values.end(), idx.get());
      const auto model = ref::c_element_offset(t, idx.get());
      std::int64_t out = 0;
      const dlpm_status st = dlpm_element_offset(&t, idx.get(), &out);
      if (c_outcome("dlpm_element_offset", st, model.v) && st == DLPM_OK) values_equal("dlpm_element_offset value", out, model.value);
    }
  }

  // ---- try_to_mdspan, try_view ---------------------------------------------------------
  void check_import(const DLTensor& t, const ref::case_spec& c, const target_entry& target) {
    dm::tensor_requirements o;
    o.null_strides = c.reject_null_strides ? dm::null_strides_policy::reject : dm::null_strides_policy::row_major;
    o.min_alignment = c.min_alignment;
    o.device_id = c.opt_device_id;
    o.layout.shape_divisors = std::span<const std::int64_t>(c.divisors.data(), c.num_divisors);
    const std::uint64_t flags = c.subbyte_padded ? dm::flag_is_subbyte_type_padded : 0;
    ref::import_opts mo;
    mo.reject_null_strides = c.reject_null_strides;
    mo.min_alignment = c.min_alignment;
    mo.device_id = c.opt_device_id;
    mo.divisors = c.divisors.data();
    mo.num_divisors = c.num_divisors;
    mo.subbyte_padded = c.subbyte_padded;

    check_import_with(t, c, target, &o, flags, false, mo);
    // The same tensor through the overload without requirements, whose silent rules must
    // accept exactly what the worded ones (and so the model) do and build the same view,
    // and through to_mdspan, which runs them without a result in between.
    check_import_with(t, c, target, nullptr, 0, false, ref::import_opts{});
    check_import_with(t, c, target, nullptr, 0, true, ref::import_opts{});
  }

  void check_import_with(const DLTensor& t, const ref::case_spec& c, const target_entry& target, const dm::tensor_requirements* o,
                         std::uint64_t flags, bool throwing, const ref::import_opts& mo) {
    const ref::target_desc& d = target.desc;
    const auto model = ref::import(t, mo, d);
    const observation ob = target.observe(t, o, flags, throwing, c.aux_seed);
    (ob.accepted ? imports_accepted : imports_refused) += 1;
    if (!ob.accepted) ++import_refusals[static_cast<std::size_t>(ob.code) % 64];
    const std::string fn = std::string(throwing ? "to_mdspan<" : o != nullptr ? "try_view<" : "try_to_mdspan<") +
                           ref::layout_name(d.layout) + ">" + (o == nullptr ? " (no requirements)" : "");
    if (o == nullptr) {
      ++comparisons;
      if (ob.silent_accepted != ob.accepted)
        disagree(fn + ": the silent import rules and the worded ones disagree",
                 "  target = " + std::string(d.name) + "\n  silent " + (ob.silent_accepted ? "accepts" : "refuses") +
                     ", worded " + (ob.accepted ? "accepts" : "refuses"));
    }
    if (!outcome(fn, ob.accepted, ob.code, ob.message_empty, model.v, model.maybe) || !ob.accepted) return;

    const auto& m = model.s;
    const std::string at = "  target = " + std::string(d.name) + "\n";
    for (std::size_t r = 0; r < static_cast<std::size_t>(d.rank); ++r) {
      ++comparisons;
      if (ob.extents[r] != m.e[r]) disagree(fn + ": extents differ from the shape", at + "  dim " + std::to_string(r));
    }
    for (int k = 0; k < ob.num_addresses; ++k) {
      const auto& a = ob.addresses[static_cast<std::size_t>(k)];
      const i128 want = ref::element_address(model, a.index.data(), d.rank, d.elem_size);
      ++comparisons;
      if (a.address != want) {
        std::string idx = "{";
        for (int r = 0; r < d.rank; ++r) idx += (r ? ", " : "") + std::to_string(a.index[static_cast<std::size_t>(r)]);
        disagree(fn + ": element address differs",
                 at + "  index " + idx + "}: mdspan " + str(a.address) + ", model " + str(want) + " (difference " +
                     str(a.address - want) + ")");
        break;
      }
    }
    if (m.numel == 0) {
      if (d.layout == ref::layout_kind::stride) check_stride_preconditions(fn, ob, d, at);
      return;
    }
    if (d.layout == ref::layout_kind::stride) {
      check_stride_preconditions(fn, ob, d, at);
      for (std::size_t r = 0; r < static_cast<std::size_t>(d.rank); ++r) {
        ++comparisons;
        if (m.e[r] == 1 && ob.strides[r] != 1)
          disagree(fn + ": an extent-1 dimension's stride is not 1", at + "  dim " + std::to_string(r) + " stride " + str(ob.strides[r]));
      }
    }
    if (d.layout == ref::layout_kind::relaxed) {
      i128 lo = ob.offset, hi = ob.offset;
      for (std::size_t r = 0; r < static_cast<std::size_t>(d.rank); ++r) {
        const i128 reach = (ob.extents[r] - 1) * ob.strides[r];
        lo += reach < 0 ? reach : 0;
        hi += reach > 0 ? reach : 0;
      }
      ++comparisons;
      if (lo < 0 || hi > d.index_max)
        disagree(fn + ": the mapping reaches an index outside [0, index_max]",
                 at + "  offset " + str(ob.offset) + ", lowest index " + str(lo) + ", highest index " + str(hi));
    }
  }

  void check_stride_preconditions(const std::string& fn, const observation& ob, const ref::target_desc& d, const std::string& at) {
    ++comparisons;
    if (!ref::layout_stride_preconditions(ob.extents.data(), ob.strides.data(), d.rank, d.index_max)) {
      std::string s = "{";
      for (int r = 0; r < d.rank; ++r) s += (r ? ", " : "") + str(ob.strides[static_cast<std::size_t>(r)]);
      disagree(fn + ": the std::layout_stride mapping violates the standard's preconditions", at + "  mapping strides " + s + "}");
    }
  }
};

// The examples from the issue, run first by every differential run and written as the
// fuzzer's seeds. find_target picks a (CPU, dynamic-extent) target with this rank and
// layout whose index_type reaches index_max, preferring the given dtype and then the
// narrowest index_type; a case whose dtype differs still checks all the structure rules.
inline std::uint32_t find_target(DLDataType dtype, i128 index_max, int rank, ref::layout_kind layout) {
  const auto& table = target_table();
  std::uint32_t best = 0;
  int best_score = -1;
  for (std::uint32_t i = 0; i < table.size(); ++i) {
    const auto& d = table[i].desc;
    bool dynamic = true;
    for (int r = 0; r < d.rank; ++r) dynamic &= d.static_extent[static_cast<std::size_t>(r)] < 0;
    if (!dynamic || !d.accepts(kDLCPU) || d.rank != rank || d.layout != layout || d.index_max < index_max) continue;
    const int score = (ref::same_dtype(d.dtype, dtype) ? 4 : 0) + (d.index_max == index_max ? 2 : 0) + (d.index_min < 0 ? 1 : 0);
    if (score > best_score) best = i, best_score = score;
  }
  return best;
}

struct named_case {
  const char* name;
  ref::case_spec spec;
};

inline std::vector<named_case> edge_examples() {
  using ref::layout_kind;
  std::vector<named_case> out;
  const std::int64_t p32 = std::int64_t{1} << 32, p40 = std::int64_t{1} << 40, p60 = std::int64_t{1} << 60;
  auto base = [](int ndim, std::initializer_list<std::int64_t> shape, DLDataType dtype) {
    ref::case_spec c;
    c.ndim = ndim;
    std::size_t r = 0;
    for (auto e : shape) c.shape[r++] = e;
    c.dtype = dtype;
    c.strides_mode = ref::ptr_mode::null;
    c.aux_seed = 0x1234567800000000ULL;
    return c;
  };
  auto set_strides = [](ref::case_spec& c, std::initializer_list<std::int64_t> strides) {
    c.strides_mode = ref::ptr_mode::ok;
    std::size_t r = 0;
    for (auto s : strides) c.strides[r++] = s;
  };
  const DLDataType f32{kDLFloat, 32, 1}, i8{kDLInt, 8, 1}, i16{kDLInt, 16, 1};
  {  // numel: an empty dimension last must not overflow the product
    auto c = base(3, {p32, p32, 0}, f32);
    c.data = ref::data_kind::null;
    c.target = find_target(f32, INT64_MAX, 3, layout_kind::relaxed);
    out.push_back({"empty_last_huge_extents", c});
    auto c2 = base(3, {0, p32, p32}, f32);
    c2.data = ref::data_kind::null;
    c2.target = c.target;
    out.push_back({"empty_first_huge_extents", c2});
  }
  {  // first_byte == INT64_MIN: float {2,3} strides {0,-2^60}, 64 bytes into a buffer
    auto c = base(2, {2, 3}, f32);
    set_strides(c, {0, -p60});
    c.data_value = -4096 + 64;
    c.target = find_target(f32, INT64_MAX, 2, layout_kind::relaxed);
    out.push_back({"first_byte_int64_min", c});
  }
  {  // nbytes of int8 {2^60} fits
    auto c = base(1, {p60}, i8);
    c.target = find_target(i8, INT64_MAX, 1, layout_kind::relaxed);
    out.push_back({"nbytes_int8_2p60", c});
  }
  {  // garbage shape {0,-3} is not contiguous
    auto c = base(2, {0, -3}, f32);
    c.target = find_target(f32, INT64_MAX, 2, layout_kind::right);
    out.push_back({"negative_extent_with_empty", c});
  }
  {  // element offset: empty {3,0} strides {INT64_MAX,1}, index {2,0} (the corner index)
    auto c = base(2, {3, 0}, f32);
    set_strides(c, {INT64_MAX, 1});
    c.target = find_target(f32, INT64_MAX, 2, layout_kind::stride);
    out.push_back({"element_offset_empty_huge_stride", c});
  }
  {  // empty {0,100,100}, NULL strides into dextents<int8_t,3> layout_stride: accepted
    auto c = base(3, {0, 100, 100}, i8);
    c.target = find_target(i8, INT8_MAX, 3, layout_kind::stride);
    out.push_back({"layout_stride_empty_int8", c});
    auto c2 = base(3, {0, p40, p40}, i8);
    c2.target = find_target(i8, INT64_MAX, 3, layout_kind::stride);
    out.push_back({"layout_stride_empty_2p40", c2});
  }
  {  // shape {2,1,2} strides {1,3,2}: the extent-1 dimension does not overlap
    auto c = base(3, {2, 1, 2}, i8);
    set_strides(c, {1, 3, 2});
    c.target = find_target(i8, INT64_MAX, 3, layout_kind::stride);
    out.push_back({"layout_stride_extent1_between", c});
  }
  {  // shape {1,3} strides {2^40,1} into dextents<int32_t,2> layout_stride: accepted
    auto c = base(2, {1, 3}, i16);
    set_strides(c, {p40, 1});
    c.target = find_target(i16, INT32_MAX, 2, layout_kind::stride);
    out.push_back({"layout_stride_extent1_huge_stride", c});
  }
  {  // misaligned shape / strides pointers
    auto c = base(2, {2, 3}, f32);
    c.shape_mode = ref::ptr_mode::misaligned;
    c.shape_mis = 3;
    c.target = find_target(f32, INT64_MAX, 2, layout_kind::right);
    out.push_back({"misaligned_shape", c});
    auto c2 = base(2, {2, 3}, f32);
    set_strides(c2, {3, 1});
    c2.strides_mode = ref::ptr_mode::misaligned;
    c2.strides_mis = 0;
    c2.target = c.target;
    out.push_back({"misaligned_strides", c2});
  }
  {  // options are checked for empty tensors too
    auto c = base(2, {0, 3}, f32);
    c.min_alignment = 48;
    c.target = find_target(f32, INT64_MAX, 2, layout_kind::right);
    out.push_back({"empty_min_alignment_48", c});
    auto c2 = base(2, {0, 3}, f32);
    c2.num_divisors = 1;
    c2.divisors[0] = 2;
    c2.target = c.target;
    out.push_back({"empty_divisors_wrong_size", c2});
  }
  {  // extent-1 dimension with stride INT64_MIN is ignored
    auto c = base(2, {1, 3}, f32);
    set_strides(c, {INT64_MIN, 1});
    c.target = find_target(f32, INT64_MAX, 2, layout_kind::right);
    out.push_back({"extent1_stride_int64_min", c});
  }
  {  // relaxed import rebased on the lowest element, whose span is exactly 2^63 elements:
     // offset 2^63-1 fits, offset + highest + 1 does not (found by this test)
    auto c = base(2, {2, 1}, i8);
    set_strides(c, {-INT64_MAX, -1});
    c.data = ref::data_kind::literal;
    c.data_value = static_cast<std::int64_t>(0xd60d18f80c920385ULL);
    c.target = find_target(i8, INT64_MAX, 2, layout_kind::relaxed);
    out.push_back({"relaxed_rebased_span_2p63", c});
  }
  {  // element offset: byte_offset + offset*itemsize fits although offset*itemsize alone does
     // not (found by this test)
    auto c = base(3, {4, 3, 1}, f32);
    set_strides(c, {-2, -(std::int64_t{1} << 60), 1});
    c.byte_offset = static_cast<std::uint64_t>(INT64_MAX) - 7;
    c.target = find_target(f32, INT64_MAX, 3, layout_kind::relaxed);
    out.push_back({"element_offset_intermediate_overflow", c});
  }
  {  // the lowest element at address 0 (double {3}, strides {-1}, data 16): rule 14 allows
     // it, and the rebased relaxed view's handle is then NULL (found by this test)
    const DLDataType f64{kDLFloat, 64, 1};
    auto c = base(1, {3}, f64);
    set_strides(c, {-1});
    c.data = ref::data_kind::literal;
    c.data_value = 16;
    c.target = find_target(f64, INT64_MAX, 1, layout_kind::relaxed);
    out.push_back({"lowest_element_at_address_0", c});
  }
  {  // data near UINTPTR_MAX
    auto c = base(1, {4}, f32);
    c.data = ref::data_kind::literal;
    c.data_value = -16;
    c.target = find_target(f32, INT64_MAX, 1, layout_kind::right);
    out.push_back({"data_near_uintptr_max", c});
  }
  return out;
}

}  // namespace dlpm_differential
