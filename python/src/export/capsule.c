/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Making capsules: the one place that calls PyCapsule_New for a DLPack capsule or a table
 * (import/capsule.c renames capsules when a tensor is taken, and makes owner objects).
 *   export:  an owned tensor -> a "dltensor_versioned" or legacy "dltensor" capsule
 *   publish: an exchange table -> the "dlpack_exchange_api" capsule on a type, and a
 *            Tensor type's kept checked form -> its versioned capsule on that type */
#include "export/export.h"

/* A consumer renames the capsule when it takes the tensor, so only a capsule that still
 * has its original name owns its tensor when Python drops it. */
/* Python may drop a capsule while an exception is in flight (a consumer that failed after
 * __dlpack__): the deleter, maybe a producer's Python code, must neither see nor replace it. */
static void versioned_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, dlpm_py__capsule_names.versioned))
    dlpm_py_managed_delete((DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, dlpm_py__capsule_names.versioned));
}

/* dlpm_py_managed_delete's legacy twin. */
static void legacy_delete_keeping_error(DLManagedTensor* legacy) {
  const dlpm_py_set_aside kept = dlpm_py__exception_set_aside();
  dlpm_legacy_delete(legacy);
  dlpm_py__exception_put_back(kept);
}

static void legacy_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, dlpm_py__capsule_names.legacy))
    legacy_delete_keeping_error((DLManagedTensor*)PyCapsule_GetPointer(capsule, dlpm_py__capsule_names.legacy));
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
    if ((capsule = PyCapsule_New(t, dlpm_py__capsule_names.versioned, versioned_destructor)) == NULL)
      dlpm_py_managed_delete(t);
    return capsule;
  }
  /* Legacy DLPack cannot say READ_ONLY (nor sub-byte padding): such a tensor is refused
   * rather than handed out writable, as NumPy refuses read-only arrays. */
  if ((s = dlpm_to_legacy(t, &legacy)) != DLPM_OK) {
    dlpm_py__raise_as(PyExc_BufferError, s);
    dlpm_py_managed_delete(t);
    return NULL;
  }
  if ((capsule = PyCapsule_New(legacy, dlpm_py__capsule_names.legacy, legacy_destructor)) == NULL)
    legacy_delete_keeping_error(legacy);
  return capsule;
}

int dlpm_py_publish_exchange_api(PyObject* type, const DLPackExchangeAPI* table) DLPM_NOEXCEPT {
  const dlpm_py_names* nm;
  if (type == NULL || table == NULL || !PyType_Check(type)) {
    PyErr_SetString(PyExc_ValueError, "dlpm_py_publish_exchange_api: needs a type and a table");
    return -1;
  }
  if ((nm = dlpm_py__names()) == NULL) return -1;
  /* The table is process-lifetime (DLPack's rule), so the capsule has no destructor. */
  return dlpm_py__publish_on_type(type, nm->exchange_capsule, (void*)table, "dlpack_exchange_api");
}

int dlpm_py__publish_on_type(PyObject* type, PyObject* attribute, void* pointer, const char* capsule_name) {
  PyObject* capsule;
  int rc;
  if ((capsule = PyCapsule_New(pointer, capsule_name, NULL)) == NULL) return -1;
  rc = PyObject_SetAttr(type, attribute, capsule);
  Py_DECREF(capsule);
  return rc;
}
