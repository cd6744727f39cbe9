// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Export an mdspan as a DLTensor through the installed module, import it back, compare.
#ifdef DLPM_IMPORT_STD
import std;
#else
#include <cstdio>
#include <mdspan>
#endif
import dlpack_mdspan;

#if defined(__STRICT_ANSI__) != DLPM_EXPECT_STRICT
#error "compiled with other extension settings than the test asked for"
#endif

int main() {
  float buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = 0.5f * static_cast<float>(i);
  std::mdspan<float, std::dextents<int, 2>> md(buf, 3, 4);

  auto view = dlpack_mdspan::to_dlpack_tensor(md);
  const DLTensor t = view.get();
  int bad = 0;
  if (t.ndim != 2 || t.shape[0] != 3 || t.shape[1] != 4 || t.dtype.code != kDLFloat || t.dtype.bits != 32) ++bad;

  auto back = dlpack_mdspan::to_mdspan<std::mdspan<const float, std::dextents<int, 2>, std::layout_stride>>(t);
  if (back.data_handle() != buf || back.extent(0) != 3 || back.extent(1) != 4) ++bad;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      if (back[i, j] != md[i, j]) ++bad;

  std::printf("module consumer (%s%s): shape {%lld, %lld}, back[2, 3] = %g, %d mismatches\n",
              DLPM_EXPECT_STRICT ? "c++23" : "gnu++23",
#ifdef DLPM_IMPORT_STD
              ", import std",
#else
              "",
#endif
              static_cast<long long>(t.shape[0]), static_cast<long long>(t.shape[1]),
              static_cast<double>(back[2, 3]), bad);
  return bad == 0 ? 0 : 1;
}
