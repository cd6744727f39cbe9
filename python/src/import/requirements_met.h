/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The requirements a dlpack_mdspan.Tensor's own view last met (import.c only): the verdict of
 * dlpm_check_prechecked on the Tensor's checked form is a function of the view (which never
 * changes: the Tensor has no setter), the flags it is checked with and the requirements'
 * content, so a second import with equal flags and requirements compares them with the last
 * ones met instead of checking again. Kept only of requirements whose content is all in the
 * struct or in a short device-type list (copied): a shape or a layout array is not copied,
 * and such requirements are checked every time. A requirement refused is never kept (its
 * message comes from the check). GIL builds only: under free threading two imports of one
 * Tensor may run at once, and every import checks. */
#ifndef DLPM_PY_REQUIREMENTS_MET_H
#define DLPM_PY_REQUIREMENTS_MET_H

#include "import/import_direction.h"
#include "shared/shared.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The fields compared below are those of this version: a version that adds one adds it here. */
_Static_assert(DLPM_REQUIREMENTS_VERSION == 1, "requirements_met.h compares version 1's fields");

#if !defined(Py_GIL_DISABLED)
/* Whether n bytes at a and b are equal, in parts of 32 bytes and less, each of which the
 * compiler compares inline (no bcmp call). */
static inline int same_bytes(const char* a, const char* b, size_t n) {
  for (size_t at = 0; at < n; at += 32)
    if (memcmp(a + at, b + at, n - at < 32 ? n - at : 32) != 0) return 0;
  return 1;
}

/* The eight bytes at p (two device types), read as one word. */
static inline uint64_t two_device_types(const int32_t* p) {
  uint64_t word;
  memcpy(&word, p, sizeof word);
  return word;
}

/* Whether the n device types at a (the caller's; NULL: any device) are the n kept at b, where
 * n is the count note_met kept (0 to DLPM_PY_MET_DEVICE_TYPES): one compare for one type, two
 * word compares for two to four (the first two types and the last two, which overlap for
 * fewer than four). No loop, and no wider read than the caller's n entries. */
static inline int same_device_types(const int32_t* a, const int32_t* b, int32_t n) {
  _Static_assert(DLPM_PY_MET_DEVICE_TYPES == 4, "two overlapping words cover at most four device types");
  if (a == NULL || n <= 0) return 1;
  if (n == 1) return a[0] == b[0];
  return ((two_device_types(a) ^ two_device_types(b)) |
          (two_device_types(a + n - 2) ^ two_device_types(b + n - 2))) == 0;
}

/* Whether `r` with `flags` is what `met` holds: the fields byte for byte, not the padding
 * after `order` (a struct on the caller's stack has anything there); so the same
 * device-type pointer, and NULL where the kept one has NULL (note_met keeps no shape or layout
 * array); then the device types by content. */
static inline int requirements_as_met(const dlpm_py_met* met, uint64_t flags, const dlpm_requirements* r) {
  const char *a = (const char*)r, *b = (const char*)&met->req;
  const size_t after_order = offsetof(dlpm_requirements, device_types);
  if (!met->valid || met->flags != flags || r->order != met->req.order ||
      !same_bytes(a, b, offsetof(dlpm_requirements, order)) ||
      !same_bytes(a + after_order, b + after_order, sizeof *r - after_order))
    return 0;
  return same_device_types(r->device_types, met->device_types, r->num_device_types);
}

/* Keeps `r` with `flags`, which the Tensor's view met, where its content can be copied. */
static void note_met(dlpm_py_met* met, uint64_t flags, const dlpm_requirements* r) {
  met->valid = 0;
  if (r->version != DLPM_REQUIREMENTS_VERSION || r->shape != NULL || r->layout.stride_order != NULL ||
      r->layout.shape_divisors != NULL || r->layout.stride_divisors != NULL || r->num_device_types < 0 ||
      r->num_device_types > DLPM_PY_MET_DEVICE_TYPES)
    return;
  met->req = *r;
  if (r->device_types != NULL)
    memcpy(met->device_types, r->device_types, sizeof(int32_t) * (size_t)r->num_device_types);
  met->flags = flags;
  met->valid = 1;
}

/* The check, and what it met kept: own_view_meets' path when the requirements are not the
 * last ones met. */
static __attribute__((noinline)) dlpm_status check_own_view(dlpm_py_met* met, const dlpm_checked_tensor* own,
                                                            uint64_t flags, const dlpm_requirements* check) {
  const dlpm_status s = dlpm_check_prechecked(own->tensor, flags, own, check);
  if (s == DLPM_OK) note_met(met, flags, check);
  return s;
}
#endif

/* dlpm_check_prechecked(own->tensor, flags, own, check) of obj, a Tensor of this copy whose
 * form is `own` (dlpm_py__own_export_source's), answered by the last requirements it met
 * where they are equal. Forced inline, as the bodies of the entry points it is part of. */
DLPM_PY_BODY dlpm_status own_view_meets(PyObject* obj, const dlpm_checked_tensor* own, uint64_t flags,
                                         const dlpm_requirements* check) {
#if !defined(Py_GIL_DISABLED)
  dlpm_py_met* met = dlpm_py__tensor_met(obj);
  return requirements_as_met(met, flags, check) ? DLPM_OK : check_own_view(met, own, flags, check);
#else
  (void)obj;
  return dlpm_check_prechecked(own->tensor, flags, own, check);
#endif
}

#endif
