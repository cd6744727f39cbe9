/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Facade statuses as Python exceptions, and the interned names every source uses. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

/* A tensor that does not meet the caller's requirements is a TypeError: the value has the
 * wrong type for the parameter, and binding layers (nanobind, pybind11) read TypeError as
 * "try the next overload". Defects of the tensor or the protocol are BufferError. */
static PyObject* exception_for(dlpm_status status) {
  switch (status) {
    case DLPM_E_DTYPE_MISMATCH:
    case DLPM_E_NDIM_MISMATCH:
    case DLPM_E_SHAPE_MISMATCH:
    case DLPM_E_NON_COMPACT_STRIDES:
    case DLPM_E_DEVICE_MISMATCH:
    case DLPM_E_DEVICE_ID_MISMATCH:
    case DLPM_E_DIVISIBILITY:
    case DLPM_E_MISALIGNED_DATA:
    case DLPM_E_READ_ONLY:
    case DLPM_E_NO_MATCHING_TYPE:
    case DLPM_E_SUBBYTE_NOT_VIEWABLE:
    case DLPM_E_AMBIGUOUS_LAYOUT:
      return PyExc_TypeError;
    case DLPM_E_INVALID_ARGUMENT:     /* from dlpm_check*: the requirements themselves */
    case DLPM_E_UNSUPPORTED_VERSION:
    case DLPM_E_NULL_POINTER:
      return PyExc_ValueError;
    case DLPM_E_OUT_OF_MEMORY:
      return PyExc_MemoryError;
    default:
      return PyExc_BufferError;
  }
}

PyObject* dlpm_py__raise_as(PyObject* kind, dlpm_status status) {
  const char* message = dlpm_last_error();
  if (message[0] == '\0') message = "DLPack tensor refused";
  PyErr_Format(kind, "%s (%s)", message, dlpm_status_string(status));
  return NULL;
}

PyObject* dlpm_py_raise(dlpm_status status) DLPM_NOEXCEPT {
  if (status == DLPM_E_PRODUCER_FAILED) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, "the DLPack producer failed without saying why");
    return NULL;
  }
  return dlpm_py__raise_as(exception_for(status), status);
}

dlpm_status dlpm_py__fail(PyObject* kind, dlpm_status status, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  PyErr_Format(kind, "%s (%s)", message, dlpm_status_string(status));
  return status;
}

dlpm_status dlpm_py__producer_failed(const char* what) {
  if (!PyErr_Occurred()) PyErr_Format(PyExc_BufferError, "%s failed without setting an exception", what);
  return DLPM_E_PRODUCER_FAILED;
}

static dlpm_py_names names;
static int names_ready;

static PyObject* intern(const char* s) { return PyUnicode_InternFromString(s); }

const dlpm_py_names* dlpm_py__names(void) {
  if (names_ready) return &names;
  names.dlpack = intern("__dlpack__");
  names.dlpack_device = intern("__dlpack_device__");
  names.exchange_capsule = intern("__dlpack_c_exchange_api__");
  names.exchange_integer = intern("__c_dlpack_exchange_api__");
  names.max_version = intern("max_version");
  names.dl_device = intern("dl_device");
  names.copy = intern("copy");
  names.stream = intern("stream");
  names.our_max_version = Py_BuildValue("(ii)", 1, (int)DLPACK_MINOR_VERSION);
  names.kwnames_max_version = names.max_version ? PyTuple_Pack(1, names.max_version) : NULL;
  if (!names.dlpack || !names.dlpack_device || !names.exchange_capsule || !names.exchange_integer || !names.max_version ||
      !names.dl_device || !names.copy || !names.stream || !names.our_max_version || !names.kwnames_max_version)
    return NULL; /* only under MemoryError; names made so far are leaked, the next call retries */
  names_ready = 1;
  return &names;
}
