/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Taking the tensor out of a DLPack capsule, once: the one place that renames a capsule
 * ("used_..."). Capsules are made in export/capsule.c. */
#include "import/import.h"

#include <string.h>

/* Takes the tensor out of a DLPack capsule: renamed "used_..." first (if the rename fails
 * the tensor stays with the capsule), then version-checked, legacy moved to versioned
 * (*legacy set). `not_dlpack` is the exception for a capsule (or object) that is not a
 * DLPack tensor. */
dlpm_status dlpm_py__take_capsule(PyObject* capsule, const dlpm_py_options* o, PyObject* not_dlpack,
                                  DLManagedTensorVersioned** out, int* legacy) {
  const char* name;
  dlpm_status s;
  *legacy = 0;
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned* t = (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (PyCapsule_SetName(capsule, "used_dltensor_versioned") != 0) return dlpm_py__producer_failed("renaming the capsule");
    if ((s = dlpm_managed_check_version(t)) != DLPM_OK) { /* the deleter has run */
      dlpm_py__raise_as(PyExc_BufferError, s);
      return s;
    }
    *out = t;
    return DLPM_OK;
  }
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* old = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
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
  name = PyCapsule_GetName(capsule);
  if (name == NULL) PyErr_Clear();
  if (name != NULL && strncmp(name, "used_", 5) == 0)
    return dlpm_py__fail(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT,
                         "the DLPack capsule was already consumed (it is named '%s'); a capsule can be imported once", name);
  return dlpm_py__fail(not_dlpack, DLPM_E_INVALID_ARGUMENT,
                       "a PyCapsule named '%s' is not a DLPack tensor ('dltensor_versioned' or 'dltensor')",
                       name ? name : "(null)");
}
