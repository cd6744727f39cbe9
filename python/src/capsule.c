/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* DLPack capsules, both ways: the one place that makes, names and renames them.
 *   export: an owned tensor -> a "dltensor_versioned" or legacy "dltensor" capsule
 *   import: a capsule -> its tensor, taken once (renamed "used_...")
 *   keep:   an owned tensor -> a "dlpack_mdspan.owner" capsule that only deletes it */
#include "internal.h"

#include <string.h>

/* A consumer renames the capsule when it takes the tensor, so only a capsule that still
 * has its original name owns its tensor when Python drops it. */
static void versioned_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned"))
    dlpm_managed_delete((DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned"));
}

static void legacy_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor"))
    dlpm_legacy_delete((DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor"));
}

static void owner_destructor(PyObject* capsule) {
  dlpm_managed_delete((DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dlpack_mdspan.owner"));
}

PyObject* dlpm_py_owner_new(DLManagedTensorVersioned* t) DLPM_NOEXCEPT {
  PyObject* capsule;
  if (t == NULL) {
    PyErr_SetString(PyExc_ValueError, "dlpm_py_owner_new: the tensor is NULL (null pointer argument)");
    return NULL;
  }
  /* Not a DLPack name: no consumer may take the tensor out of it. */
  if ((capsule = PyCapsule_New(t, "dlpack_mdspan.owner", owner_destructor)) == NULL) dlpm_managed_delete(t);
  return capsule;
}

PyObject* dlpm_py_capsule_new(DLManagedTensorVersioned* t, int32_t versioned) DLPM_NOEXCEPT {
  DLManagedTensor* legacy = NULL;
  PyObject* capsule;
  dlpm_status s;
  if (t == NULL) {
    PyErr_SetString(PyExc_ValueError, "dlpm_py_capsule_new: the tensor is NULL (null pointer argument)");
    return NULL;
  }
  if (versioned) {
    if ((capsule = PyCapsule_New(t, "dltensor_versioned", versioned_destructor)) == NULL) dlpm_managed_delete(t);
    return capsule;
  }
  /* Legacy DLPack cannot say READ_ONLY (nor sub-byte padding): such a tensor is refused
   * rather than handed out writable, as NumPy refuses read-only arrays. */
  if ((s = dlpm_to_legacy(t, &legacy)) != DLPM_OK) {
    dlpm_py__raise_as(PyExc_BufferError, s);
    dlpm_managed_delete(t);
    return NULL;
  }
  if ((capsule = PyCapsule_New(legacy, "dltensor", legacy_destructor)) == NULL) dlpm_legacy_delete(legacy);
  return capsule;
}

/* Takes the tensor out of a DLPack capsule: renamed "used_..." first (if the rename fails
 * the tensor stays with the capsule), then version-checked, legacy moved to versioned.
 * `not_dlpack` is the exception for a capsule (or object) that is not a DLPack tensor. */
dlpm_status dlpm_py__take_capsule(PyObject* capsule, const dlpm_py_options* o, PyObject* not_dlpack,
                                DLManagedTensorVersioned** out) {
  const char* name;
  dlpm_status s;
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
    DLManagedTensor* legacy = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
    if (PyCapsule_SetName(capsule, "used_dltensor") != 0) return dlpm_py__producer_failed("renaming the capsule");
    s = o->legacy_writable ? dlpm_from_legacy_writable(legacy, out) : dlpm_from_legacy(legacy, out);
    if (s != DLPM_OK) dlpm_py__raise_as(PyExc_BufferError, s); /* the legacy deleter has run */
    return s;
  }
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_Format(not_dlpack, "__dlpack__ returned an object of %R, not a PyCapsule (invalid argument)",
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
