/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The C facade in one page: wrap a C buffer as an owning DLPack tensor, check it the way a
 * consumer would, read an element through its strides, and watch bad input be refused. */
#include <dlpack_mdspan.h>

#include <stdio.h>
#include <stdlib.h>

static int released = 0;
static void release_buffer(void* ctx) {
  free(ctx);
  ++released;
}

/* A refusal the demo expects: `got` must be `expected`, and the message names the problem.
 * Anything else (an acceptance, another status) is counted as a failure of the demo. */
static int failures = 0;
static void expect_refusal(dlpm_status got, dlpm_status expected) {
  if (got == expected) {
    printf("refused: %s (%s)\n", dlpm_last_error(), dlpm_status_string(got));
  } else {
    fprintf(stderr, "expected %s, got %s\n", dlpm_status_string(expected), dlpm_status_string(got));
    ++failures;
  }
}

int main(void) {
  int64_t shape[2] = {3, 4};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLDevice cpu = {kDLCPU, 0};
  float* data = malloc(12 * sizeof(float));
  DLManagedTensorVersioned* tensor = NULL;
  DLManagedTensorVersioned* not_made = NULL;
  dlpm_requirements req;
  int64_t index[2] = {2, 3}, offset = 0;
  int32_t c_order = 0;
  dlpm_version_info v;
  int i;

  if (data == NULL) return 1;
  for (i = 0; i < 12; ++i) data[i] = (float)i;
  dlpm_version(&v);
  printf("dlpack_mdspan %d.%d.%d, DLPack %u.%u\n", v.major, v.minor, v.patch, v.dlpack_major, v.dlpack_minor);

  /* Hand the buffer over: one allocation holds the struct, shape and strides. */
  if (dlpm_managed_new(data, 2, shape, NULL, f32, cpu, 0, 0, release_buffer, data, &tensor) != DLPM_OK) {
    fprintf(stderr, "dlpm_managed_new: %s\n", dlpm_last_error());
    free(data);
    return 1;
  }

  /* A consumer that wants a C-contiguous float32 matrix with 4 columns. */
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.check_dtype = 1;
  req.dtype = f32;
  req.ndim = 2;
  req.shape = (const int64_t[]){-1, 4};
  req.order = 'C';
  if (dlpm_check_managed(tensor, &req) != DLPM_OK || dlpm_is_contiguous(&tensor->dl_tensor, 'C', &c_order) != DLPM_OK ||
      dlpm_element_offset(&tensor->dl_tensor, index, &offset) != DLPM_OK) {
    fprintf(stderr, "unexpected: %s\n", dlpm_last_error());
    dlpm_managed_delete(tensor);
    return 1;
  }
  printf("accepted 3x4 float32, C-contiguous=%d, element [2,3] = %g\n", c_order,
         *(const float*)((const char*)tensor->dl_tensor.data + offset));

  /* The same consumer, stricter: each refusal names the problem. */
  req.shape = (const int64_t[]){-1, 5};
  expect_refusal(dlpm_check_managed(tensor, &req), DLPM_E_SHAPE_MISMATCH);
  req.shape = NULL;
  req.order = 'F';
  expect_refusal(dlpm_check_managed(tensor, &req), DLPM_E_NON_COMPACT_STRIDES);
  req.order = 0;
  req.dtype.bits = 64;
  expect_refusal(dlpm_check_managed(tensor, &req), DLPM_E_DTYPE_MISMATCH);
  shape[1] = -4;
  expect_refusal(dlpm_managed_new(data, 2, shape, NULL, f32, cpu, 0, 0, NULL, NULL, &not_made), DLPM_E_NEGATIVE_EXTENT);

  dlpm_managed_delete(tensor); /* the release callback frees the buffer, exactly once */
  printf("released %d buffer(s)\n", released);
  return released == 1 && failures == 0 && not_made == NULL ? 0 : 1;
}
