/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* A C program calls dlpm_managed_delete on a tensor whose (C++) deleter throws. The
 * exception must not unwind into C: the library ends the process with a message. */
#include <dlpack_mdspan.h>

#include <stdio.h>
#include <string.h>

#include "support/death_test.h"

DLManagedTensorVersioned* dlpm_test_throwing_tensor(void);
void dlpm_test_throwing_release(void* ctx);

static void delete_throwing_tensor(void) {
  dlpm_managed_delete(dlpm_test_throwing_tensor());
  fprintf(stderr, "returned after the deleter threw\n");
}

static void release_throws(void) {
  static float data[2];
  int64_t shape[1] = {2};
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLManagedTensorVersioned* t = NULL;
  if (dlpm_managed_new(data, 1, shape, NULL, f32, cpu, 0, 0, dlpm_test_throwing_release, NULL, &t) == DLPM_OK)
    dlpm_managed_delete(t);
  fprintf(stderr, "returned after the release function threw\n");
}

static void inline_release_throws(void) {
  static float data[2];
  int64_t shape[1] = {2};
  DLTensor d;
  int state = 7;
  DLManagedTensorVersioned* t = NULL;
  memset(&d, 0, sizeof d);
  d.data = data;
  d.device.device_type = kDLCPU;
  d.ndim = 1;
  d.dtype.code = kDLFloat;
  d.dtype.bits = 32;
  d.dtype.lanes = 1;
  d.shape = shape;
  if (dlpm_managed_new_inline(&d, 'C', 0, sizeof data, dlpm_test_throwing_release, &state, sizeof state, &t) == DLPM_OK)
    dlpm_managed_delete(t);
  fprintf(stderr, "returned after the inline owner's release function threw\n");
}

static int expect_abort(const char* what, void (*body)(void), const char* needle) {
  dlpm_death d = dlpm_run_in_child(body);
  const int ok = d.signal == SIGABRT && strstr(d.err, "threw a C++ exception") != NULL && strstr(d.err, needle) != NULL &&
                 strstr(d.err, "returned after") == NULL;
  printf("%s: %s (signal %d, stderr: %s)\n", what, ok ? "ok" : "FAILED", d.signal, d.err);
  return ok;
}

int main(void) {
  int passed = 0, failed = 0;
  /* The exception's type is always named; its what() only where the library shares the
   * program's C++ runtime (a hermetic shared library has its own, see reliability.md). */
  if (expect_abort("a throwing deleter", delete_throwing_tensor, "std::runtime_error")) ++passed;
  else ++failed;
  if (expect_abort("a throwing dlpm_release_fn", release_throws, "std::runtime_error")) ++passed;
  else ++failed;
  if (expect_abort("a throwing dlpm_release_fn of an inline owner", inline_release_throws, "std::runtime_error")) ++passed;
  else ++failed;
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
