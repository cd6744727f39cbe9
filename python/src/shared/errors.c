/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Facade statuses as Python exceptions, for both directions. */
#include "shared/shared.h"

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

PyObject* dlpm_py__raise_refused(const DLTensor* t, dlpm_status status) {
  /* One requirement status is also a structural rule's: device_id_mismatch, which the core
   * gives a negative device_id whatever was asked. The structure decides, read once more
   * on this cold path (its message then replaces the check's). */
  if (exception_for(status) == PyExc_TypeError && dlpm_validate(t) != DLPM_OK)
    return dlpm_py__raise_as(PyExc_BufferError, status);
  return dlpm_py_raise(status);
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

PyObject* dlpm_py__two_base_error(PyObject** type, const char* name, const char* doc, PyObject* first, PyObject* second) {
  if (*type == NULL) {
    PyObject* bases = PyTuple_Pack(2, first, second);
    if (bases == NULL) return NULL;
    *type = PyErr_NewExceptionWithDoc(name, doc, bases, NULL);
    Py_DECREF(bases);
    if (*type == NULL) return NULL;
  }
  return Py_NewRef(*type);
}

PyObject* dlpm_py__copy_forbidden_error(void) {
  static PyObject* type;
  return dlpm_py__two_base_error(&type, "dlpack_mdspan.CopyForbiddenError",
                                 "__dlpack__(dl_device=..., copy=False) where only a copy reaches that device (a "
                                 "BufferError, as the array API's __dlpack__ raises, and a ValueError, as its from_dlpack "
                                 "and CuPy's __dlpack__ raise).",
                                 PyExc_BufferError, PyExc_ValueError);
}

PyObject* dlpm_py_copy_forbidden_error(void) DLPM_NOEXCEPT { return dlpm_py__copy_forbidden_error(); }

dlpm_status dlpm_py__producer_failed(const char* what) {
  if (!PyErr_Occurred()) PyErr_Format(PyExc_BufferError, "%s failed without setting an exception", what);
  return DLPM_E_PRODUCER_FAILED;
}

int dlpm_py_stream_integer(PyObject* stream, const char* memory, long long* value) DLPM_NOEXCEPT {
  if (stream == NULL || value == NULL) {
    (void)dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "dlpm_py_stream_integer: %s is NULL",
                        stream == NULL ? "stream" : "value");
    return -1;
  }
  if (memory == NULL) memory = "this";
  if (stream == Py_None) return 1;
  if (!PyLong_Check(stream)) {
    PyErr_Format(PyExc_TypeError, "__dlpack__: stream must be None or an integer for %s memory, not %R", memory,
                 (PyObject*)Py_TYPE(stream));
    return -1;
  }
  return dlpm_py_integer_in_range(stream, "__dlpack__: stream", INT64_MIN, INT64_MAX, NULL, value);
}

int dlpm_py_copy_argument(PyObject* copy, const char* what, int32_t* out) DLPM_NOEXCEPT {
  int truth = -1;
  if (copy == NULL || copy == Py_None) {
    if (out != NULL) *out = -1;
    return 0;
  }
  if (copy == Py_True || copy == Py_False) truth = copy == Py_True;
  else if (!PyUnicode_Check(copy) && !PyBytes_Check(copy) && (truth = PyObject_IsTrue(copy)) < 0 &&
           dlpm_py__clear_unless_interrupt() != 0)
    return -1; /* the user's interrupt, raised as it is */
  if (truth < 0) {
    PyErr_Format(PyExc_ValueError, "%s must be None or a boolean, not %R", what ? what : "copy", (PyObject*)Py_TYPE(copy));
    return -1;
  }
  if (out != NULL) *out = truth;
  return 0;
}

int dlpm_py_integer_in_range(PyObject* value, const char* what, long long min, long long max, PyObject* malformed,
                             long long* out) DLPM_NOEXCEPT {
  PyObject* integer;
  long long v = 0;
  int overflow = 0;
  if (out == NULL) {
    (void)dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "dlpm_py_integer_in_range: out is NULL");
    return -1;
  }
  if (what == NULL) what = "the integer";
  if (value != NULL && PyLong_CheckExact(value)) /* the usual argument: what PyNumber_Index returns for it, without the call */
    Py_INCREF(integer = value);
  else
    integer = value != NULL ? PyNumber_Index(value) : NULL;
  if (integer == NULL) {
    if (dlpm_py__clear_unless_interrupt() != 0) return -1; /* an __index__ interrupted: raised as it is */
    PyErr_Format(malformed ? malformed : PyExc_TypeError, "%s must be an integer in [%lld, %lld], not %R", what, min, max,
                 value ? (PyObject*)Py_TYPE(value) : Py_None);
    return -1;
  }
  v = PyLong_AsLongLongAndOverflow(integer, &overflow);
  if (v == -1 && PyErr_Occurred()) {
    Py_DECREF(integer);
    return -1;
  }
  if (overflow != 0 || v < min || v > max) {
    PyErr_Format(malformed ? malformed : PyExc_OverflowError, "%s = %R is out of range: it must be in [%lld, %lld]", what,
                 integer, min, max);
    Py_DECREF(integer);
    return -1;
  }
  Py_DECREF(integer);
  *out = v;
  return 0;
}
