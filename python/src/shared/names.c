/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The interned names and constant arguments both directions use. */
#include "shared/shared.h"

_Alignas(4096) const dlpm_py_capsule_names dlpm_py__capsule_names = {
    "dltensor_versioned", "used_dltensor_versioned", "dltensor", "used_dltensor"};

static dlpm_py_names names;
static int names_ready;

static PyObject* intern(const char* s) { return PyUnicode_InternFromString(s); }

const dlpm_py_names* dlpm_py__names(void) {
  if (names_ready) return &names;
  names.dlpack = intern("__dlpack__");
  names.dlpack_device = intern("__dlpack_device__");
  names.dlpack_data_type = intern("__dlpack_data_type__");
  names.exchange_capsule = intern("__dlpack_c_exchange_api__");
  names.exchange_integer = intern("__c_dlpack_exchange_api__");
  names.max_version = intern("max_version");
  names.dl_device = intern("dl_device");
  names.copy = intern("copy");
  names.stream = intern("stream");
  names.our_max_version = Py_BuildValue("(ii)", 1, (int)DLPACK_MINOR_VERSION);
  names.kwnames_max_version = names.max_version ? PyTuple_Pack(1, names.max_version) : NULL;
  names.kept_form = intern(DLPM_PY_KEPT_FORM_ATTRIBUTE);
  if (!names.dlpack || !names.dlpack_device || !names.dlpack_data_type || !names.exchange_capsule || !names.exchange_integer || !names.max_version ||
      !names.dl_device || !names.copy || !names.stream || !names.our_max_version || !names.kwnames_max_version ||
      !names.kept_form)
    return NULL; /* only under MemoryError; names made so far are leaked, the next call retries */
  names_ready = 1;
  return &names;
}
