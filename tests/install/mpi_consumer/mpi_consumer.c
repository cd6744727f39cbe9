/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* One process (MPI's singleton start): a broadcast receive is refused with the companion's words. */
#include <dlpack_mdspan_mpi.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  float a[4] = {0};
  int64_t shape[2] = {3, 4}, strides[2] = {0, 1};
  DLTensor t;
  dlpm_mpi_datatype b;
  dlpm_status s;
  memset(&t, 0, sizeof t);
  t.data = a;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  MPI_Init(&argc, &argv);
  s = dlpm_mpi_receive_buffer(&t, 0, &b);
  printf("C: %s\n", dlpm_mpi_error(&b));
  MPI_Finalize();
  return s == DLPM_E_OVERLAPPING_STRIDES ? 0 : 1;
}
