// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runtime requirements on a DLTensor, for consumers that learn the expected type at run
// time (the C facade, Python bindings): one plain struct, like nanobind's ndarray
// constraints, checked by the same core as the typed import.
#ifndef DLPACK_MDSPAN_REQUIREMENTS_HPP
#define DLPACK_MDSPAN_REQUIREMENTS_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/layout_queries.hpp>
#include <dlpack_mdspan/layout_requirements.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <cstdint>


DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// What a consumer requires. Every field defaults to "anything".
struct tensor_requirements {
  bool check_dtype = false;           ///< true: dtype must equal `dtype` exactly (the facade's check_dtype)
  DLDataType dtype{};
  std::int32_t ndim = -1;             ///< -1: any rank
  const std::int64_t* shape = nullptr;///< NULL, or ndim entries; -1 is a wildcard
  char order = 0;                     ///< 'C', 'F', 'A' (either), or 0 for any layout
  const std::int32_t* device_types = nullptr;  ///< accepted DLDeviceTypes; NULL = any
  std::int32_t num_device_types = 0;
  std::int32_t device_id = -1;        ///< -1: any ordinal
  std::uint64_t min_alignment = 0;    ///< bytes, power of two; 0 = none beyond the element's
  bool writable = false;              ///< refuse READ_ONLY (only managed tensors carry flags)
  null_strides_policy null_strides = null_strides_policy::row_major;
  layout_requirements layout = {};    ///< CuTe's layout vocabulary (layout_requirements.hpp)
};

namespace detail {
/// min_alignment's rule: a power of two. Not std::has_single_bit, which libstdc++ builds as a
/// call to libgcc's __popcountdi2 (27 instructions) where the target has no popcnt.
[[nodiscard]] constexpr bool is_power_of_two(std::uint64_t bytes) noexcept { return bytes != 0 && (bytes & (bytes - 1)) == 0; }

// The rules below read their requirements as `req.field` of any type `Req` that has
// tensor_requirements' members under the same names, each read as its field is (a flag in
// a boolean test, null_strides as a null_strides_policy, layout as a layout_requirements
// with empty()): tensor_requirements itself, or the C facade's view of its
// dlpm_requirements, whose fields the rules then read in place, each where a rule asks
// for it, with no converted copy made first.

// check_requirements_valid's rules.
template <class Req>
bool requirements_valid(const Req& req, error* err) noexcept {
  if (req.ndim < -1 || req.ndim > max_ndim)
    DLPM_REFUSE(err, errc::invalid_argument, "requirements: ndim = %d is neither -1 (any rank) nor a rank 0..%d", req.ndim,
                max_ndim);
  if (req.shape != nullptr && req.ndim < 0)
    DLPM_REFUSE(err, errc::invalid_argument,
                "requirements: shape is set but ndim is -1 (any rank); set ndim to the number of shape entries");
  for (std::int32_t r = 0; req.shape != nullptr && r < req.ndim; ++r)
    if (req.shape[r] < -1)
      DLPM_REFUSE(err, errc::invalid_argument, "requirements: shape[%d] = %lld is neither -1 (any extent) nor an extent", r,
                  static_cast<long long>(req.shape[r]));
  if (req.order != 0 && req.order != 'C' && req.order != 'F' && req.order != 'A')
    DLPM_REFUSE(err, errc::invalid_argument, "requirements: order %d is not one of 'C', 'F', 'A' or 0 (any)",
                detail::char_byte(req.order));
  if (req.device_id < -1)
    DLPM_REFUSE(err, errc::invalid_argument, "requirements: device_id = %d is neither -1 (any) nor a device ordinal",
                req.device_id);
  if (req.device_types != nullptr && req.num_device_types < 0)
    DLPM_REFUSE(err, errc::invalid_argument, "requirements: num_device_types = %d is negative", req.num_device_types);
  if (req.min_alignment != 0 && !detail::is_power_of_two(req.min_alignment))
    DLPM_REFUSE(err, errc::invalid_argument, "requirements: min_alignment = %llu is not a power of two",
                static_cast<unsigned long long>(req.min_alignment));
  return true;
}
}  // namespace detail

/// The requirements themselves make sense: a rank in -1..max_ndim, a shape only with a
/// rank (its length) whose entries are extents or -1 (any), a known order, a device id of
/// -1 or more, a device list of non-negative length, and a power of two alignment. Nonsense
/// is errc::invalid_argument, never a silent "anything".
inline bool check_requirements_valid(const tensor_requirements& req, error* err) noexcept {
  return detail::requirements_valid(req, err);
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// The device rule of check_requirements: the type listed (or any), the ordinal equal (or
// any). A negative count lists nothing.
template <class Req, class Err>
DLPM_HOT_INLINE inline bool check_required_device(const DLDevice& d, const Req& req, Err err) noexcept {
  if (req.device_types == nullptr) return check_device(d, [](std::int32_t) { return true; }, "any", req.device_id, err);
  auto listed = [&](std::int32_t type) {
    for (std::int32_t i = 0; i < req.num_device_types; ++i)
      if (req.device_types[i] == type) return true;
    return false;
  };
  return check_device(d, listed, "the listed device types", req.device_id, err);
}

// The rules of check_requirements that a typed import adds to its own (import_rules.hpp),
// each written once. The rank and the dtype: the equality decides, the checks word a
// difference; an ndim outside -1..max_ndim equals no valid rank.
template <class Req, class Err>
DLPM_HOT_INLINE inline bool required_rank(const DLTensor& t, const Req& req, Err err) noexcept {
  if (req.ndim == -1 || t.ndim == req.ndim) return true;
  if (req.ndim >= 0) (void)check_rank(t, static_cast<std::size_t>(req.ndim), err);
  return false;
}
template <class Req, class Err>
DLPM_HOT_INLINE inline bool required_dtype(const DLTensor& t, const Req& req, Err err) noexcept {
  if (!req.check_dtype || same_dtype(t.dtype, req.dtype)) return true;
  (void)check_dtype_equals(t.dtype, req.dtype, err);
  return false;
}
// After the structure and the rank.
template <class Req, class Err>
DLPM_HOT_INLINE inline bool required_shape(const DLTensor& t, const Req& req, Err err) noexcept {
  if (req.shape == nullptr) return true;
  if (req.ndim < 0) return false;  // a shape needs a rank; with one, t.ndim == req.ndim
  for (std::int32_t r = 0; r < t.ndim; ++r)
    if (req.shape[r] != -1 && req.shape[r] != t.shape[r])  // below -1: nonsense, refused (worded: check_requirements_valid)
      DLPM_REFUSE(err, errc::shape_mismatch, "shape[%d] = %lld but %lld is required", r, static_cast<long long>(t.shape[r]),
                  static_cast<long long>(req.shape[r]));
  return true;
}
// After the structure; the column-major test only when asked: it needs a second loop.
template <class Req, class Err>
DLPM_HOT_INLINE inline bool required_order(const DLTensor& t, const tensor_summary& summary, const Req& req,
                                           Err err) noexcept {
  bool ok = false;
  switch (req.order) {
    case 0: ok = true; break;  // any layout
    case 'C': ok = summary.row_major; break;
    case 'F': ok = is_compact_valid(t, summary.numel, false); break;
    case 'A': ok = summary.row_major || is_compact_valid(t, summary.numel, false); break;
    default: return false;  // not an order
  }
  if (!ok)
    DLPM_REFUSE(err, errc::non_compact_strides, "the tensor is not %s",
                req.order == 'C' ? "C-contiguous" : req.order == 'F' ? "F-contiguous" : "contiguous");
  return true;
}
template <class Req, class Err>
DLPM_HOT_INLINE inline bool required_writable(std::uint64_t flags, const Req& req, Err err) noexcept {
  if (req.writable && (flags & flag_read_only) != 0)
    DLPM_REFUSE(err, errc::read_only, "the tensor is READ_ONLY but a writable tensor is required");
  return true;
}

// check_requirements' rules: worded (an error*) in their documented order, the first one
// broken written into *err; or silent (detail::silent), the one-pass yes-or-no of the
// success paths, cheapest first: the rules that read only the tensor's scalars before the
// structure and its loop. The silent form skips check_requirements_valid: each rule also
// refuses the nonsense that one words (noted where it is), which costs nothing when the
// requirements are sound. On success, *summary_out (when not NULL) is what the structure's
// pass learned, for a caller that keeps the checked tensor (check_tensor, the facade).
// `known` (silent form only): what an earlier structure pass over this very tensor, with the
// same IS_SUBBYTE_TYPE_PADDED, learned (a checked_tensor's summary); the pass is not made
// again. Its one option-dependent verdict, NULL strides under the strict policy, is a silent
// no: the worded form, which always makes the pass, words it.
template <class Req, class Err>
DLPM_HOT_INLINE inline bool requirements_rules(const DLTensor& t, std::uint64_t flags, const Req& req,
                                               tensor_summary* summary_out, Err err,
                                               const tensor_summary* known = nullptr) noexcept {
  tensor_summary summary;
  auto structure = [&]() DLPM_HOT_INLINE {
    if constexpr (!is_worded<Err>) {
      if (known != nullptr) {
        summary = *known;
        return !(known->implicit_strides && req.null_strides == null_strides_policy::reject);
      }
    }
    return check_structure(t, structure_options{req.null_strides, (flags & flag_is_subbyte_type_padded) != 0}, summary, err);
  };
  auto rank = [&]() DLPM_HOT_INLINE { return required_rank(t, req, err); };
  auto dtype = [&]() DLPM_HOT_INLINE { return required_dtype(t, req, err); };
  auto shape = [&]() DLPM_HOT_INLINE { return required_shape(t, req, err); };
  // A device_id below -1 matches no device; a negative device type count lists none.
  auto device = [&]() DLPM_HOT_INLINE { return check_required_device(t.device, req, err); };
  auto order = [&]() DLPM_HOT_INLINE { return required_order(t, summary, req, err); };
  auto alignment = [&]() DLPM_HOT_INLINE {  // after the structure
    if (req.min_alignment == 0) return true;
    if (!detail::is_power_of_two(req.min_alignment)) return false;
    return check_data_alignment(t, summary.numel == 0, req.min_alignment, err);
  };
  auto layout = [&]() DLPM_HOT_INLINE { return req.layout.empty() || layout_met(t, summary.numel, req.layout, err); };
  auto writable = [&]() DLPM_HOT_INLINE { return required_writable(flags, req, err); };
  bool ok = false;
  if constexpr (is_worded<Err>)
    ok = requirements_valid(req, err) && structure() && rank() && dtype() && shape() && device() && order() &&
         alignment() && layout() && writable();
  else
    ok = rank() && dtype() && writable() && device() && structure() && shape() && order() && alignment() && layout();
  if (ok && summary_out != nullptr) *summary_out = summary;
  return ok;
}

// The silent rules: true exactly when check_requirements accepts.
template <class Req>
DLPM_HOT_INLINE inline bool requirements_met(const DLTensor& t, std::uint64_t flags, const Req& req,
                                             tensor_summary* summary_out = nullptr) noexcept {
  return requirements_rules(t, flags, req, summary_out, silent{});
}

// The silent rules for a tensor a check has already accepted: its structure's pass is not
// made again (requirements_rules' `known`). True exactly when check_requirements accepts.
template <class Req>
DLPM_HOT_INLINE inline bool requirements_met(const checked_tensor& checked, const Req& req) noexcept {
  return requirements_rules(checked.tensor(), checked.flags(), req, nullptr, silent{}, &checked.summary());
}

// The worded rules, out of line: only failures get here (requirements_met said no).
template <class Req>
DLPM_COLD inline bool requirements_failure(const DLTensor& t, std::uint64_t flags, const Req& req, error* err) noexcept {
  return requirements_rules(t, flags, req, nullptr, err);
}

// check_announced's rules.
template <class Req>
bool announced_rules(const DLDataType& dtype, const DLDevice& device, const Req& req, error* err) noexcept {
  if (!requirements_valid(req, err) || !check_dtype(dtype, err)) return false;
  if (req.check_dtype && !check_dtype_equals(dtype, req.dtype, err)) return false;
  return check_required_device(device, req, err);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Checks `t` (with its managed `flags`, 0 for a bare DLTensor) against `req`, after
/// check_requirements_valid(req). The first rule broken, in this order, is the error:
/// the requirements, the structure (check_structure), rank, dtype, shape, device type and
/// id, order, alignment, the layout (leading dimension, stride order, compactness,
/// divisibility: layout_requirements), READ_ONLY. The success path runs one pass without
/// messages.
DLPM_HOT_INLINE inline bool check_requirements(const DLTensor& t, std::uint64_t flags, const tensor_requirements& req,
                                               error* err) noexcept {
  return detail::requirements_met(t, flags, req) || detail::requirements_failure(t, flags, req, err);
}

/// check_requirements for a tensor a check has already accepted (`checked`, its tensor
/// unchanged since, its flags those the import carries now): every rule but the structure's
/// pass, which is not made again (what that pass learned is in `checked`). A refusal is
/// check_requirements' error, worded by its full rules.
DLPM_HOT_INLINE inline bool check_requirements(const checked_tensor& checked, const tensor_requirements& req,
                                               error* err) noexcept {
  return detail::requirements_met(checked, req) || detail::requirements_failure(checked.tensor(), checked.flags(), req, err);
}

/// check_requirements, as a checked_tensor: the tensor with its `flags`, accepted by `req`,
/// and what the checks learned. One silent pass on success; the refusal is
/// check_requirements' error.
[[nodiscard]] DLPM_HOT_INLINE inline result<checked_tensor> check_tensor(const DLTensor& t, std::uint64_t flags,
                                                                         const tensor_requirements& req) noexcept {
  tensor_summary s;
  if (detail::requirements_met(t, flags, req, &s)) [[likely]]
    return detail::checked_tensor_access::make(t, flags, s);
  error err;
  (void)detail::requirements_failure(t, flags, req, &err);
  return unexpected_error(err);
}
result<checked_tensor> check_tensor(const DLTensor&& t, std::uint64_t flags, const tensor_requirements& req) = delete;

/// What a producer can say of a tensor before exporting it (the array API's
/// __dlpack_data_type__ and __dlpack_device__), checked against the dtype and device rules
/// of `req` alone, worded as check_requirements words them: a consumer with several typed
/// overloads refuses a wrong one without an export. Passing says nothing of the rest (the
/// tensor itself stays authoritative); failing means check_requirements would fail too, if
/// the producer told the truth. An ill-formed dtype is errc::invalid_dtype (the announcement
/// cannot be judged, not the tensor).
inline bool check_announced(const DLDataType& dtype, const DLDevice& device, const tensor_requirements& req,
                            error* err) noexcept {
  return detail::announced_rules(dtype, device, req, err);
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
