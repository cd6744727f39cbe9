/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Taking the tensor out of a DLPack capsule, once: the one place that renames a capsule
 * ("used_..."; shared/owner.c turns a taken capsule into its tensor's owner). Capsules are
 * made in export/capsule.c. */
#include "import/import.h"

#include <string.h>

/* Takes the tensor out of a DLPack capsule: renamed "used_..." first (if the rename fails
 * the tensor stays with the capsule), then version-checked, legacy moved to versioned
 * (*legacy set). `not_dlpack` is the exception for a capsule (or object) that is not a
 * DLPack tensor. */
dlpm_status dlpm_py__take_capsule(PyObject* capsule, const dlpm_py_options* o, PyObject* not_dlpack,
                                  DLManagedTensorVersioned** out, int* legacy) {
  /* An exact capsule always has a pointer (PyCapsule_New refuses NULL), so its name decides;
   * a capsule without a name is none of DLPack's. */
  const char* name = PyCapsule_CheckExact(capsule) ? PyCapsule_GetName(capsule) : NULL;
  dlpm_status s;
  *legacy = 0;
  if (name != NULL && strcmp(name, "dltensor_versioned") == 0) {
    DLManagedTensorVersioned* t = (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, name);
    if (PyCapsule_SetName(capsule, "used_dltensor_versioned") != 0) return dlpm_py__producer_failed("renaming the capsule");
    if ((s = dlpm_py__check_version(t)) == DLPM_OK) *out = t; /* else the deleter has run */
    return s;
  }
  if (name != NULL && strcmp(name, "dltensor") == 0) {
    DLManagedTensor* old = (DLManagedTensor*)PyCapsule_GetPointer(capsule, name);
    if (PyCapsule_SetName(capsule, "used_dltensor") != 0) return dlpm_py__producer_failed("renaming the capsule");
    *legacy = 1;
    s = o->legacy_writable ? dlpm_from_legacy_writable(old, out) : dlpm_from_legacy(old, out);
    if (s != DLPM_OK) dlpm_py__raise_as(PyExc_BufferError, s); /* the legacy deleter has run */
    return s;
  }
  if (!PyCapsule_CheckExact(capsule)) { /* the wrong type of object: TypeError, as dpctl's suite asserts */
    PyErr_Format(PyExc_TypeError, "__dlpack__ returned an object of %R, not a PyCapsule (invalid argument)",
                 (PyObject*)Py_TYPE(capsule));
    return DLPM_E_INVALID_ARGUMENT;
  }
  if (name != NULL && strncmp(name, "used_", 5) == 0)
    return dlpm_py__fail(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT,
                         "the DLPack capsule was already consumed (it is named '%s'); a capsule can be imported once", name);
  return dlpm_py__fail(not_dlpack, DLPM_E_INVALID_ARGUMENT,
                       "a PyCapsule named '%s' is not a DLPack tensor ('dltensor_versioned' or 'dltensor')",
                       name ? name : "(null)");
}
