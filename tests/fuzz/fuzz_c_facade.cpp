// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the C facade's inspection functions on arbitrary DLTensors. They must
// never crash, read out of bounds or overflow; out-parameters are written only on success.
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
  req.strict_strides = static_cast<std::int32_t>((f.flags >> 1) & 1);
  (void)dlpm_check(&t, &req);
  return 0;
}
