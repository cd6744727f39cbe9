/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* A C program that only knows the installed library, found through pkg-config. */
#include <dlpack_mdspan.h>

#include <stdio.h>

int main(void) {
  double data[6] = {0};
  int64_t shape[2] = {2, 3};
  DLTensor t = {0};
  dlpm_version_info v;
  int64_t n = 0;
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 64;
  t.dtype.lanes = 1;
  t.shape = shape;
  if (dlpm_version(&v) != DLPM_OK || dlpm_numel(&t, &n) != DLPM_OK || n != 6) return 1;
  shape[0] = -1;
  if (dlpm_validate(&t) != DLPM_E_NEGATIVE_EXTENT) return 1;
  printf("pkg-config consumer: dlpack_mdspan %d.%d.%d (DLPack %u.%u), refused: %s\n", v.major, v.minor, v.patch,
         v.dlpack_major, v.dlpack_minor, dlpm_last_error());
  return 0;
}
