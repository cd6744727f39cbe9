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
  if (r->device_types != NULL && r->num_device_types == DLPM_PY_MET_DEVICE_TYPES) /* a full list: one comparison */
    return memcmp(r->device_types, met->device_types, sizeof met->device_types) == 0;
  for (int32_t i = 0; r->device_types != NULL && i < r->num_device_types; ++i)
    if (r->device_types[i] != met->device_types[i]) return 0;
  return 1;
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
