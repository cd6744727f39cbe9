// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the C facade's inspection functions on arbitrary DLTensors. They must
// never crash, read out of bounds or overflow; out-parameters are written only on success.
// The one-call forms bindings use (dlpm_check_layout, dlpm_element_offset_prechecked,
// dlpm_managed_new_inline) must answer as the calls they stand for; dlpm_coalesce's loops
// must reach the element count.
#include <dlpack_mdspan.h>

#include "fuzz_input.hpp"

#include <cstdlib>
#include <initializer_list>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dlpm_fuzz::fuzz_tensor f(data, size);
  const DLTensor& t = f.tensor;
  const dlpm_status valid = dlpm_validate(&t);

  std::int64_t n = -1, bytes = -1;
  if (dlpm_numel(&t, &n) != DLPM_OK && n != -1) std::abort();  // untouched on failure
  if (dlpm_nbytes(&t, &bytes) != DLPM_OK && bytes != -1) std::abort();
  for (char order : {'C', 'F', 'A', 'Z'}) {
    std::int32_t yes = -1;
    const dlpm_status s = dlpm_is_contiguous(&t, order, &yes);
    if ((s == DLPM_OK) != (valid == DLPM_OK && order != 'Z')) std::abort();
    if (s == DLPM_OK && yes != 0 && yes != 1) std::abort();
  }
  if (valid == DLPM_OK && n > 0) {
    std::int64_t index[64] = {}, offset = 0;
    for (std::int32_t r = 0; r < t.ndim; ++r) index[r] = t.shape[r] - 1;  // the far corner
    (void)dlpm_element_offset(&t, index, &offset);
  }

  dlpm_requirements req;
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.ndim = static_cast<std::int32_t>(f.flags % 6) - 1;
  req.order = "\0CFAX"[f.flags % 5];
  req.min_alignment = std::uint64_t{1} << (f.flags % 8);
  req.writable = static_cast<std::int32_t>(f.flags & 1);
  req.null_strides = static_cast<std::int32_t>((f.flags >> 1) & 3);  // 2 and 3 are read as REJECT
  const dlpm_status checked = dlpm_check(&t, &req);

  // dlpm_check_layout refuses exactly what dlpm_check refuses (no flags), with or without
  // strides to write, and then counts as dlpm_numel; out-parameters untouched on failure.
  std::int64_t strides[64], count = -1, count_alone = -1;
  const dlpm_status joint = dlpm_check_layout(&t, 0, &req, strides, 64, &count);
  if (joint != checked) std::abort();
  if (dlpm_check_layout(&t, 0, &req, nullptr, 0, &count_alone) != checked) std::abort();
  if (joint != DLPM_OK && (count != -1 || count_alone != -1)) std::abort();
  if (joint == DLPM_OK && (count != n || count_alone != n)) std::abort();

  // dlpm_coalesce refuses what validation refuses (and elements that share bytes, or bytes
  // beyond int64); otherwise its loops reach numel elements. Untouched on failure.
  {
    std::int64_t extents[64], steps[64], block = -1;
    std::int32_t modes = -1;
    const dlpm_status s = dlpm_coalesce(&t, 0, extents, steps, 64, &modes, &block);
    if (s != DLPM_OK && (modes != -1 || block != -1)) std::abort();
    if (s != DLPM_OK && valid == DLPM_OK && s != DLPM_E_SUBBYTE_NOT_VIEWABLE && s != DLPM_E_SPAN_OVERFLOW) std::abort();
    if (s == DLPM_OK) {
      if (valid != DLPM_OK || modes < 0 || modes > t.ndim) std::abort();
      std::int64_t reached = block;  // bounded by numel
      for (std::int32_t m = 0; m < modes; ++m) reached *= extents[m];
      if (reached != n) std::abort();
    }
  }

  // On a tensor a check accepted, the offset without re-validation is dlpm_element_offset's.
  if (valid == DLPM_OK && n > 0) {
    std::int64_t index[64] = {}, a = -1, b = -1;
    for (std::int32_t r = 0; r < t.ndim; ++r) index[r] = (f.flags >> (r % 32)) & 1 ? t.shape[r] - 1 : 0;
    if (dlpm_element_offset(&t, index, &a) != dlpm_element_offset_prechecked(&t, 0, index, &b) || a != b) std::abort();
  }

  // dlpm_managed_new_inline makes what dlpm_managed_new makes, or refuses it alike; with a
  // buffer size, only a layout that reaches outside it besides, or one whose bytes
  // dlpm_byte_span cannot state (SPAN_OVERFLOW: beyond any buffer).
  DLManagedTensorVersioned* plain = nullptr;
  DLManagedTensorVersioned* in_place = nullptr;
  const std::uint64_t flags = f.flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  const dlpm_status made = dlpm_managed_new(t.data, t.ndim, t.shape, t.strides, t.dtype, t.device, t.byte_offset, flags,
                                            nullptr, nullptr, &plain);
  const std::uint64_t buffer = (f.flags & 4) != 0 ? DLPM_BUFFER_SIZE_UNKNOWN : f.flags >> 8;
  const char owner[DLPM_INLINE_OWNER_CAPACITY] = {};
  const dlpm_status inlined = dlpm_managed_new_inline(&t, t.strides == nullptr ? 'C' : 0, flags, buffer, nullptr, owner,
                                                      f.flags % (DLPM_INLINE_OWNER_CAPACITY + 1), &in_place);
  if (made != DLPM_OK ? inlined != made
                      : (inlined != DLPM_OK && inlined != DLPM_E_INVALID_ARGUMENT && inlined != DLPM_E_SPAN_OVERFLOW))
    std::abort();
  if (buffer == DLPM_BUFFER_SIZE_UNKNOWN && inlined != made) std::abort();
  if ((inlined == DLPM_OK) != (in_place != nullptr)) std::abort();
  dlpm_managed_delete(in_place);
  dlpm_managed_delete(plain);
  return 0;
}
