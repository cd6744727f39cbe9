/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Reading DLPack capsules: taking the tensor out, once, and looking at it without taking it;
 * and owner objects, the capsules that keep a taken tensor alive for a binding. The one place
 * that renames a capsule ("used_...", or a taken one turned into its tensor's owner). DLPack
 * capsules are made in export/capsule.c. */
#include "import/import_direction.h"

#include <string.h>

/* What a capsule's name says it holds. */
enum capsule_kind { NOT_DLPACK, VERSIONED, LEGACY };
static enum capsule_kind kind_of(const char* name) {
  if (name != NULL && strcmp(name, dlpm_py__capsule_names.versioned) == 0) return VERSIONED;
  if (name != NULL && strcmp(name, dlpm_py__capsule_names.legacy) == 0) return LEGACY;
  return NOT_DLPACK;
}

int32_t dlpm_py_capsule_peek(PyObject* obj, const dlpm_py_options* opts, DLTensor* out, uint64_t* flags) DLPM_NOEXCEPT {
  const char* name;
  if (obj == NULL || out == NULL || flags == NULL || !PyCapsule_CheckExact(obj)) return 0;
  name = PyCapsule_GetName(obj);
  switch (kind_of(name)) {
    case VERSIONED: {
      const DLManagedTensorVersioned* t = (const DLManagedTensorVersioned*)PyCapsule_GetPointer(obj, name);
      if (t == NULL) PyErr_Clear(); /* not for a valid capsule: its name was just read */
      if (t == NULL || t->version.major != DLPACK_MAJOR_VERSION) break; /* the import words it */
      *out = t->dl_tensor;
      *flags = t->flags;
      return 1;
    }
    case LEGACY: {
      const DLManagedTensor* t = (const DLManagedTensor*)PyCapsule_GetPointer(obj, name);
      if (t == NULL) {
        PyErr_Clear();
        break;
      }
      *out = t->dl_tensor;
      *flags = opts != NULL && opts->legacy_writable ? 0 : DLPACK_FLAG_BITMASK_READ_ONLY; /* as the import converts it */
      return 1;
    }
    case NOT_DLPACK: break;
  }
  return 0;
}

#if !defined(Py_GIL_DISABLED)
/* The name pointers of the last versioned and legacy capsules taken. A producer names its
 * capsules with one string, so a capsule's name is usually the very pointer the last one had,
 * and its kind is guessed without a string comparison; the guess is then checked by
 * PyCapsule_GetPointer under the DLPack name itself (one comparison, where reading the name
 * and then the pointer made two). A wrong guess (another name at an address that held a
 * DLPack one) costs an exception cleared, and the name is read as before. */
static uintptr_t seen_versioned, seen_legacy; /* addresses as integers: the names may be gone */
#endif

/* The capsule's tensor and kind: by the guess above where it holds, else by its name (kind_of). */
static enum capsule_kind take_pointer(PyObject* capsule, const char* name, void** pointer) {
  enum capsule_kind kind = NOT_DLPACK;
#if !defined(Py_GIL_DISABLED)
  const uintptr_t address = (uintptr_t)name;
  if (name != NULL && (address == seen_versioned || address == seen_legacy)) {
    kind = address == seen_versioned ? VERSIONED : LEGACY;
    if ((*pointer = PyCapsule_GetPointer(capsule, kind == VERSIONED ? dlpm_py__capsule_names.versioned
                                                                   : dlpm_py__capsule_names.legacy)) != NULL)
      return kind;
    PyErr_Clear();
  }
#endif
  if ((kind = kind_of(name)) == NOT_DLPACK) return kind;
  *pointer = PyCapsule_GetPointer(capsule, name); /* the name just compared: never NULL */
#if !defined(Py_GIL_DISABLED)
  if (kind == VERSIONED) seen_versioned = (uintptr_t)name;
  else seen_legacy = (uintptr_t)name;
#endif
  return kind;
}

/* Takes the tensor out of a DLPack capsule: renamed "used_..." first (if the rename fails
 * the tensor stays with the capsule), then version-checked, legacy moved to versioned
 * (*legacy set). `not_dlpack` is the exception for a capsule (or object) that is not a
 * DLPack tensor. */
dlpm_status dlpm_py__take_capsule(PyObject* capsule, const dlpm_py_options* o, PyObject* not_dlpack,
                                  DLManagedTensorVersioned** out, int* legacy) {
  /* An exact capsule always has a pointer (PyCapsule_New refuses NULL), so its name decides;
   * a capsule without a name is none of DLPack's. */
  const char* name = PyCapsule_CheckExact(capsule) ? PyCapsule_GetName(capsule) : NULL;
  void* pointer = NULL;
  const enum capsule_kind kind = name != NULL ? take_pointer(capsule, name, &pointer) : NOT_DLPACK;
  dlpm_status s;
  *legacy = 0;
  if (kind == VERSIONED) {
    DLManagedTensorVersioned* t = (DLManagedTensorVersioned*)pointer;
    if (PyCapsule_SetName(capsule, dlpm_py__capsule_names.used_versioned) != 0)
      return dlpm_py__producer_failed("renaming the capsule");
    if ((s = dlpm_py__check_version(t)) == DLPM_OK) *out = t; /* else the deleter has run */
    return s;
  }
  if (kind == LEGACY) {
    DLManagedTensor* old = (DLManagedTensor*)pointer;
    if (PyCapsule_SetName(capsule, dlpm_py__capsule_names.used_legacy) != 0)
      return dlpm_py__producer_failed("renaming the capsule");
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

/* ---- owner objects: a capsule that only deletes its tensor, for bindings that keep a
 * tensor alive through a Python reference. Its name is not a DLPack one, so that no
 * consumer takes the tensor out. */

#define OWNER_NAME "dlpack_mdspan.owner"

/* An owner's tensor is its context, which its destructor reads without the name comparison
 * PyCapsule_GetPointer makes (the pointer is the tensor too, or, for a capsule that became
 * an owner, what the producer put there). */
static void owner_destructor(PyObject* capsule) {
  /* Python may drop an owner while an exception is in flight (a failed call's arguments):
   * the producer's deleter, maybe Python code, must neither see nor replace it. */
  dlpm_py_managed_delete((DLManagedTensorVersioned*)PyCapsule_GetContext(capsule));
}

PyObject* dlpm_py_owner_new(DLManagedTensorVersioned* t) DLPM_NOEXCEPT {
  PyObject* capsule;
  if (t == NULL) {
    PyErr_SetString(PyExc_ValueError, "dlpm_py_owner_new: the tensor is NULL (null pointer argument)");
    return NULL;
  }
  if ((capsule = PyCapsule_New(t, OWNER_NAME, NULL)) == NULL || PyCapsule_SetContext(capsule, t) != 0 ||
      PyCapsule_SetDestructor(capsule, owner_destructor) != 0) {
    Py_XDECREF(capsule); /* no destructor yet: the tensor is still ours */
    dlpm_py_managed_delete(t);
    return NULL;
  }
  return capsule;
}

const DLManagedTensorVersioned* dlpm_py_owner_get(PyObject* obj) DLPM_NOEXCEPT {
  /* An owner's name is ours alone (no consumer takes it); its context is its tensor. */
  if (obj == NULL || !PyCapsule_CheckExact(obj) || !PyCapsule_IsValid(obj, OWNER_NAME)) return NULL;
  return (const DLManagedTensorVersioned*)PyCapsule_GetContext(obj);
}

/* A capsule __dlpack__ returned is ours alone once its tensor is taken: rather than drop it
 * and allocate an owner, it becomes one. Only when no one else holds it, and when the
 * producer set no context: its destructor, replaced here, might have freed one. On a valid
 * capsule (the import checked it) none of these calls can fail. */
PyObject* dlpm_py__owner_from_capsule(PyObject* capsule, DLManagedTensorVersioned* t) {
  if (Py_REFCNT(capsule) == 1 && PyCapsule_GetContext(capsule) == NULL) {
    (void)PyCapsule_SetContext(capsule, t); /* first: the destructor below deletes it */
    (void)PyCapsule_SetDestructor(capsule, owner_destructor);
    (void)PyCapsule_SetName(capsule, OWNER_NAME);
    return capsule;
  }
  Py_DECREF(capsule); /* named "used_...": its destructor leaves the tensor alone */
  return dlpm_py_owner_new(t);
}
