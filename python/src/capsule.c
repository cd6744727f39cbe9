/* Export: an owned tensor -> a "dltensor_versioned" or legacy "dltensor" capsule. */
#include "internal.h"

/* A consumer renames the capsule when it takes the tensor, so only a capsule that still
 * has its original name owns its tensor when Python drops it. */
static void versioned_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned"))
    dlpm_managed_delete((DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned"));
}

static void legacy_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* t = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
    if (t->deleter) t->deleter(t);
  }
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
  if ((capsule = PyCapsule_New(legacy, "dltensor", legacy_destructor)) == NULL && legacy->deleter) legacy->deleter(legacy);
  return capsule;
}
