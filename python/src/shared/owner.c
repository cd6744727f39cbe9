/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Owner objects: a capsule that only deletes its tensor, for bindings that keep a tensor
 * alive through a Python reference. Its name is not a DLPack one, so that no consumer takes
 * the tensor out. */
#include "shared/shared.h"

#define OWNER_NAME "dlpack_mdspan.owner"

static void owner_destructor(PyObject* capsule) {
  dlpm_managed_delete((DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, OWNER_NAME));
}

PyObject* dlpm_py_owner_new(DLManagedTensorVersioned* t) DLPM_NOEXCEPT {
  PyObject* capsule;
  if (t == NULL) {
    PyErr_SetString(PyExc_ValueError, "dlpm_py_owner_new: the tensor is NULL (null pointer argument)");
    return NULL;
  }
  if ((capsule = PyCapsule_New(t, OWNER_NAME, owner_destructor)) == NULL) dlpm_managed_delete(t);
  return capsule;
}

/* A capsule __dlpack__ returned is ours alone once its tensor is taken: rather than drop it
 * and allocate an owner, it becomes one. Only when no one else holds it, and when the
 * producer set no context: its destructor, replaced here, might have freed one. On a valid
 * capsule (the import checked it) none of these calls can fail. */
PyObject* dlpm_py__owner_from_capsule(PyObject* capsule, DLManagedTensorVersioned* t) {
  if (Py_REFCNT(capsule) == 1 && PyCapsule_GetContext(capsule) == NULL) {
    (void)PyCapsule_SetPointer(capsule, t); /* first: the producer's pointer is gone for good */
    (void)PyCapsule_SetDestructor(capsule, owner_destructor);
    (void)PyCapsule_SetName(capsule, OWNER_NAME);
    return capsule;
  }
  Py_DECREF(capsule); /* named "used_...": its destructor leaves the tensor alone */
  return dlpm_py_owner_new(t);
}
