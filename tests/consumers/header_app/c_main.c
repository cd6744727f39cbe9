/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The C facade from the installed package, through dlpack_mdspan::c. */
#include <dlpack_mdspan.h>

#include <stdio.h>

int main(void) {
  float data[6] = {0};
  int64_t shape[2] = {2, 3};
  int64_t n = 0;
  DLTensor t = {0};
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  if (dlpm_numel(&t, &n) != DLPM_OK || n != 6) return 1;
  shape[0] = -1;
  if (dlpm_validate(&t) != DLPM_E_NEGATIVE_EXTENT) return 1;
  printf("C consumer: numel 6, refused: %s\n", dlpm_last_error());
  return 0;
}
