/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Import: a Python object -> an owned (dlpm_py_import) or borrowed (dlpm_py_borrow),
 * validated tensor. Every path either hands the tensor to the caller or deletes it. */
#include "internal.h"

#include <stddef.h>
#include <string.h>

static const dlpm_py_options default_options = {DLPM_PY_OPTIONS_VERSION, 0, -1, 0, {kDLCPU, 0}, 0, 0, 1, 1};

/* The size of each version's struct: a caller's older struct is never written past its end. */
#define OPTIONS_V1_SIZE offsetof(dlpm_py_options, validate)

dlpm_status dlpm_py_options_init(dlpm_py_options* opts, uint32_t version) DLPM_NOEXCEPT {
  if (opts == NULL) return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "dlpm_py_options_init: opts is NULL");
  if (version != 1 && version != DLPM_PY_OPTIONS_VERSION)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_UNSUPPORTED_VERSION,
                         "dlpm_py_options_init: version %u is not supported (this library knows versions 1 to %u)", version,
                         (unsigned)DLPM_PY_OPTIONS_VERSION);
  memcpy(opts, &default_options, version == 1 ? OPTIONS_V1_SIZE : sizeof default_options);
  opts->version = version;
  return DLPM_OK;
}

/* Whether the tensor is validated: always for a version-1 struct, which has no field for it. */
static int validates(const dlpm_py_options* o) { return o->version < 2 || o->validate; }

static dlpm_status check_options(const dlpm_py_options* o, const char* function) {
  if (o->version != 1 && o->version != DLPM_PY_OPTIONS_VERSION)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_UNSUPPORTED_VERSION,
                         "%s: dlpm_py_options version %u is not supported (this library knows versions 1 to %u); %s", function,
                         o->version, (unsigned)DLPM_PY_OPTIONS_VERSION,
                         o->version == 0 ? "initialise it with dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION)"
                                         : "the extension was built against a newer dlpack_mdspan_python.h");
  if (o->copy < -1 || o->copy > 1)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_INVALID_ARGUMENT,
                         "%s: dlpm_py_options.copy = %d is not -1 (None), 0 (False) or 1 (True)", function, o->copy);
  return DLPM_OK;
}

/* "Anything": requirements still validate the tensor's structure. */
static const dlpm_requirements* no_requirements(void) {
  static dlpm_requirements anything;
  static int ready;
  if (!ready) {
    dlpm_requirements_init(&anything, DLPM_REQUIREMENTS_VERSION);
    ready = 1;
  }
  return &anything;
}

/* Deletes t without losing the exception already set (a deleter may run Python code). */
static void delete_keeping_error(DLManagedTensorVersioned* t) {
#if (defined(Py_LIMITED_API) ? Py_LIMITED_API + 0 : PY_VERSION_HEX) >= 0x030C0000
  PyObject* saved = PyErr_GetRaisedException();
  dlpm_managed_delete(t);
  PyErr_SetRaisedException(saved);
#else
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  dlpm_managed_delete(t);
  PyErr_Restore(type, value, traceback);
#endif
}

/* ---- the __dlpack__ protocol -------------------------------------------------------------- */

/* obj.__dlpack__(**dict(zip(kwnames, values))). */
static PyObject* call_dlpack(PyObject* obj, const dlpm_py_names* nm, PyObject* kwnames, PyObject* const* values,
                             Py_ssize_t n) {
#if DLPM_PY_VECTORCALL
  PyObject* stack[6]; /* [0] is scratch for PY_VECTORCALL_ARGUMENTS_OFFSET */
  stack[0] = NULL;
  stack[1] = obj;
  for (Py_ssize_t i = 0; i < n; ++i) stack[2 + i] = values[i];
  return PyObject_VectorcallMethod(nm->dlpack, stack + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, n ? kwnames : NULL);
#else
  /* No vectorcall in this limited API: a bound method and a kwargs dict. The common call
   * (max_version only) reuses one dict; a C callee taking METH_KEYWORDS sees that dict
   * itself, so it is checked after the call and made again if the callee changed it. */
  static PyObject *empty, *common_kwargs;
  PyObject *method, *kwargs = NULL, *result = NULL;
  if (!empty && !(empty = PyTuple_New(0))) return NULL;
  if (!common_kwargs) {
    if (!(common_kwargs = PyDict_New())) return NULL;
    if (PyDict_SetItem(common_kwargs, nm->max_version, nm->our_max_version) != 0) {
      Py_CLEAR(common_kwargs);
      return NULL;
    }
  }
  if (!(method = PyObject_GetAttr(obj, nm->dlpack))) return NULL;
  if (n == 1 && kwnames == nm->kwnames_max_version) {
    kwargs = common_kwargs;
    Py_INCREF(kwargs);
  } else if (n > 0) {
    if (!(kwargs = PyDict_New())) goto done;
    for (Py_ssize_t i = 0; i < n; ++i)
      if (PyDict_SetItem(kwargs, PyTuple_GetItem(kwnames, i), values[i]) != 0) goto done;
  }
  result = PyObject_Call(method, empty, kwargs);
  if (kwargs == common_kwargs &&
      (PyDict_Size(common_kwargs) != 1 || PyDict_GetItem(common_kwargs, nm->max_version) != nm->our_max_version))
    Py_CLEAR(common_kwargs); /* our reference; the call's is dropped below */
done:
  Py_XDECREF(kwargs);
  Py_DECREF(method);
  return result;
#endif
}

/* (device_type, device_id) from obj.__dlpack_device__(). */
static dlpm_status query_device(PyObject* obj, const dlpm_py_names* nm, DLDevice* out) {
  PyObject* d = PyObject_CallMethodObjArgs(obj, nm->dlpack_device, NULL);
  long type, id;
  if (!d) return dlpm_py__producer_failed("__dlpack_device__");
  if (!PyTuple_Check(d) || PyTuple_Size(d) != 2) {
    Py_DECREF(d);
    return dlpm_py__fail(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT, "__dlpack_device__() did not return a 2-tuple");
  }
  type = PyLong_AsLong(PyTuple_GetItem(d, 0));
  id = PyLong_AsLong(PyTuple_GetItem(d, 1));
  Py_DECREF(d);
  if (PyErr_Occurred()) return dlpm_py__producer_failed("__dlpack_device__");
  out->device_type = (DLDeviceType)type;
  out->device_id = (int32_t)id;
  return DLPM_OK;
}

typedef struct keywords {
  PyObject* names;     /* tuple of keyword names (a new reference, or borrowed from nm) */
  PyObject* values[4]; /* new references, except our_max_version */
  Py_ssize_t n;
  int owns_names;
} keywords;

static void keywords_clear(keywords* k, const dlpm_py_names* nm) {
  for (Py_ssize_t i = 0; i < k->n; ++i)
    if (k->values[i] != nm->our_max_version) Py_DECREF(k->values[i]);
  if (k->owns_names) Py_XDECREF(k->names);
  k->n = 0;
  k->names = NULL;
  k->owns_names = 0;
}

/* The keywords of one __dlpack__ call: max_version (unless pre_1_0), dl_device, copy, stream. */
static int keywords_build(keywords* k, const dlpm_py_names* nm, const dlpm_py_options* o, int pass_stream, int pre_1_0) {
  PyObject* key_list[4];
  k->n = 0;
  k->owns_names = 0;
  k->names = NULL;
  if (!pre_1_0) {
    key_list[k->n] = nm->max_version;
    k->values[k->n++] = nm->our_max_version;
    if (o->has_dl_device) {
      key_list[k->n] = nm->dl_device;
      if (!(k->values[k->n] = Py_BuildValue("(ii)", (int)o->dl_device.device_type, (int)o->dl_device.device_id))) goto fail;
      ++k->n;
    }
    if (o->copy >= 0) {
      key_list[k->n] = nm->copy;
      k->values[k->n] = o->copy ? Py_True : Py_False;
      Py_INCREF(k->values[k->n]);
      ++k->n;
    }
  }
  if (pass_stream) {
    key_list[k->n] = nm->stream;
    if (!(k->values[k->n] = PyLong_FromLongLong(o->stream))) goto fail;
    ++k->n;
  }
  if (k->n == 1 && key_list[0] == nm->max_version) { /* the common call: a ready tuple */
    k->names = nm->kwnames_max_version;
    return 0;
  }
  if (k->n == 0) return 0;
  if (!(k->names = PyTuple_New(k->n))) goto fail;
  k->owns_names = 1;
  for (Py_ssize_t i = 0; i < k->n; ++i) {
    Py_INCREF(key_list[i]);
    PyTuple_SetItem(k->names, i, key_list[i]);
  }
  return 0;
fail:
  keywords_clear(k, nm);
  return -1;
}

/* A TypeError for objects that are no DLPack producer at all; otherwise the producer's own. */
static dlpm_status dlpack_call_failed(PyObject* obj, const dlpm_py_names* nm) {
  if (PyErr_ExceptionMatches(PyExc_AttributeError) && !PyObject_HasAttr((PyObject*)Py_TYPE(obj), nm->dlpack)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "expected a DLPack tensor (an object with __dlpack__, or a DLPack capsule), got an object of %R "
                 "(invalid argument)",
                 (PyObject*)Py_TYPE(obj));
    return DLPM_E_INVALID_ARGUMENT;
  }
  return dlpm_py__producer_failed("__dlpack__");
}

/* Whether the pending exception is a plain TypeError about keyword arguments, what a
 * pre-1.0 __dlpack__ raises for max_version ("unexpected keyword argument", "invalid
 * keyword argument"). Then it is cleared. A refusal that merely subclasses TypeError
 * (pyarrow's ArrowTypeError) is the producer's answer and stays set: asking again without
 * keywords would call the producer twice and may replace its error with another. */
static int refused_keywords(void) {
  int refused = 0;
#if (defined(Py_LIMITED_API) ? Py_LIMITED_API + 0 : PY_VERSION_HEX) >= 0x030C0000
  PyObject* exc = PyErr_GetRaisedException();
  PyObject* text = (exc && Py_TYPE(exc) == (PyTypeObject*)PyExc_TypeError) ? PyObject_Str(exc) : NULL;
  const char* message = text ? PyUnicode_AsUTF8AndSize(text, NULL) : NULL;
  refused = message != NULL && strstr(message, "keyword") != NULL;
  Py_XDECREF(text);
  if (refused) Py_XDECREF(exc);
  else PyErr_SetRaisedException(exc);
#else
  PyObject *type, *value, *traceback, *text = NULL;
  const char* message = NULL;
  PyErr_Fetch(&type, &value, &traceback);
  if (type == PyExc_TypeError) {
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value && (text = PyObject_Str(value)) != NULL) message = PyUnicode_AsUTF8AndSize(text, NULL);
  }
  refused = message != NULL && strstr(message, "keyword") != NULL;
  Py_XDECREF(text);
  if (refused) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
  } else {
    PyErr_Restore(type, value, traceback);
  }
#endif
  if (refused) PyErr_Clear(); /* anything PyObject_Str raised */
  return refused;
}

/* obj.__dlpack__(...) -> the tensor. *pre_1_0 is set when the producer refused the DLPack
 * 1.0 keywords (TypeError) and was asked again without them. */
static dlpm_status take_through_protocol(PyObject* obj, const dlpm_py_options* o, DLManagedTensorVersioned** out,
                                         int* pre_1_0) {
  const dlpm_py_names* nm = dlpm_py__names();
  keywords k;
  PyObject* capsule;
  int pass_stream = 0;
  dlpm_status s;
  if (!nm) return DLPM_E_OUT_OF_MEMORY;
  if (o->has_stream) { /* the array API: no stream for CPU tensors */
    DLDevice device;
    if ((s = query_device(obj, nm, &device)) != DLPM_OK) return s;
    pass_stream = device.device_type != kDLCPU;
  }
  if (keywords_build(&k, nm, o, pass_stream, 0) != 0) return DLPM_E_OUT_OF_MEMORY;
  capsule = call_dlpack(obj, nm, k.names, k.values, k.n);
  keywords_clear(&k, nm);
  if (!capsule && refused_keywords()) {
    /* Pre-1.0 producers (NumPy 1.x, PyTorch 1.x) know no max_version, dl_device or copy. */
    *pre_1_0 = 1;
    if (keywords_build(&k, nm, o, pass_stream, 1) != 0) return DLPM_E_OUT_OF_MEMORY;
    capsule = call_dlpack(obj, nm, k.names, k.values, k.n);
    keywords_clear(&k, nm);
  }
  if (!capsule) return dlpack_call_failed(obj, nm);
  s = dlpm_py__take_capsule(capsule, o, PyExc_BufferError, out);
  Py_DECREF(capsule);
  return s;
}

/* The producer did what was asked: a copy when copy=True, none when copy=False, the
 * requested device. */
static dlpm_status check_honoured(const DLManagedTensorVersioned* t, const dlpm_py_options* o, int pre_1_0) {
  const int copied = (t->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
  if (o->copy == 1 && !copied)
    return dlpm_py__fail(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT,
                         pre_1_0 ? "copy=True was requested, but the producer predates DLPack 1.0 (its __dlpack__ takes "
                                   "no copy keyword) and shares its memory"
                                 : "copy=True was requested, but the producer's tensor is not flagged IS_COPIED");
  if (o->copy == 0 && copied)
    return dlpm_py__fail(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT,
                         "copy=False was requested, but the producer's tensor is flagged IS_COPIED");
  if (o->has_dl_device && (t->dl_tensor.device.device_type != o->dl_device.device_type ||
                           t->dl_tensor.device.device_id != o->dl_device.device_id))
    return dlpm_py__fail(PyExc_BufferError, DLPM_E_DEVICE_MISMATCH,
                         "dl_device=(%d, %d) was requested, but the producer exported a tensor on (%d, %d)",
                         (int)o->dl_device.device_type, (int)o->dl_device.device_id,
                         (int)t->dl_tensor.device.device_type, (int)t->dl_tensor.device.device_id);
  return DLPM_OK;
}

/* The exchange API is a fast path for "this object, as it is": no copy, device or stream
 * negotiation, which only __dlpack__ can do. */
static const DLPackExchangeAPI* usable_exchange_api(PyObject* obj, const dlpm_py_options* o) {
  if (!o->use_exchange_api || o->copy == 1 || o->has_dl_device || o->has_stream) return NULL;
  return dlpm_py_exchange_api_of(obj);
}

/* An entry point's arguments, checked (ValueError when unusable); *o: the options the call
 * runs with, the caller's or the defaults. */
static dlpm_status entry_arguments(const char* function, PyObject* obj, const void* out, const dlpm_py_options* opts,
                                   const dlpm_py_options** o) {
  if (obj == NULL || out == NULL)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "%s: %s is NULL", function, obj ? "out" : "obj");
  *o = opts ? opts : &default_options;
  return opts ? check_options(opts, function) : DLPM_OK;
}

/* What a validating call checks the tensor against (`req`, or "anything"), or NULL when
 * the options turn validation off. */
static const dlpm_requirements* checks_for(const dlpm_requirements* req, const dlpm_py_options* o) {
  return validates(o) ? (req ? req : no_requirements()) : NULL;
}

/* The import itself, the options checked: the tensor is validated against `check`, or not
 * at all when it is NULL (the caller validates). */
static dlpm_status import_tensor(PyObject* obj, const dlpm_py_options* o, const dlpm_requirements* check,
                                 DLManagedTensorVersioned** out) {
  DLManagedTensorVersioned* t = NULL;
  const DLPackExchangeAPI* api;
  int pre_1_0 = 0;
  dlpm_status s = DLPM_OK;
  if (PyCapsule_CheckExact(obj)) {
    s = dlpm_py__take_capsule(obj, o, PyExc_TypeError, &t);
  } else if ((api = usable_exchange_api(obj, o)) != NULL) {
    if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0 || t == NULL)
      return dlpm_py__producer_failed("the exchange API's managed_tensor_from_py_object_no_sync");
    /* The comparison inline (the common case); the facade deletes and words a mismatch. */
    if (t->version.major != DLPACK_MAJOR_VERSION && (s = dlpm_managed_check_version(t)) != DLPM_OK)
      dlpm_py__raise_as(PyExc_BufferError, s); /* deleted */
  } else {
    s = take_through_protocol(obj, o, &t, &pre_1_0);
  }
  if (s != DLPM_OK) return s;

  /* The tensor is ours: from here it goes to *out or is deleted. */
  if ((s = check_honoured(t, o, pre_1_0)) == DLPM_OK && check != NULL && (s = dlpm_check_managed(t, check)) != DLPM_OK)
    dlpm_py_raise(s);
  if (s != DLPM_OK) {
    delete_keeping_error(t);
    return s;
  }
  *out = t;
  return DLPM_OK;
}

dlpm_status dlpm_py_import(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                           DLManagedTensorVersioned** out) DLPM_NOEXCEPT {
  const dlpm_py_options* o;
  const dlpm_status s = entry_arguments("dlpm_py_import", obj, out, opts, &o);
  return s != DLPM_OK ? s : import_tensor(obj, o, checks_for(req, o), out);
}

dlpm_status dlpm_py_import_unvalidated(PyObject* obj, const dlpm_py_options* opts,
                                       DLManagedTensorVersioned** out) DLPM_NOEXCEPT {
  const dlpm_py_options* o;
  const dlpm_status s = entry_arguments("dlpm_py_import_unvalidated", obj, out, opts, &o);
  return s != DLPM_OK ? s : import_tensor(obj, o, NULL, out);
}

/* ---- borrowed views ----------------------------------------------------------------------- */

/* The borrow itself, the options checked; `check` as for import_tensor. A borrowed DLTensor
 * has no flags, so READ_ONLY is unknown: a writer takes the owning path. */
static dlpm_status borrow_tensor(PyObject* obj, const dlpm_py_options* o, int writable, const dlpm_requirements* check,
                                 dlpm_py_borrowed* out) {
  const DLPackExchangeAPI* api;
  DLManagedTensorVersioned* t = NULL;
  dlpm_status s;
  if (!writable && !PyCapsule_CheckExact(obj) && (api = usable_exchange_api(obj, o)) != NULL &&
      api->dltensor_from_py_object_no_sync != NULL) {
    DLTensor view;
    if (api->dltensor_from_py_object_no_sync(obj, &view) != 0)
      return dlpm_py__producer_failed("the exchange API's dltensor_from_py_object_no_sync");
    if (check != NULL && (s = dlpm_check(&view, check)) != DLPM_OK) {
      dlpm_py_raise(s);
      return s;
    }
    out->dl_tensor = view;
    return DLPM_OK;
  }
  if ((s = import_tensor(obj, o, check, &t)) != DLPM_OK) return s;
  out->dl_tensor = t->dl_tensor;
  out->flags = t->flags;
  out->owner = t;
  return DLPM_OK;
}

dlpm_status dlpm_py_borrow(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                           dlpm_py_borrowed* out) DLPM_NOEXCEPT {
  const dlpm_py_options* o;
  dlpm_status s;
  if (out != NULL) memset(out, 0, sizeof *out);
  s = entry_arguments("dlpm_py_borrow", obj, out, opts, &o);
  return s != DLPM_OK ? s : borrow_tensor(obj, o, req && req->writable, checks_for(req, o), out);
}

dlpm_status dlpm_py_borrow_unvalidated(PyObject* obj, int32_t writable, const dlpm_py_options* opts,
                                       dlpm_py_borrowed* out) DLPM_NOEXCEPT {
  const dlpm_py_options* o;
  dlpm_status s;
  if (out != NULL) memset(out, 0, sizeof *out);
  s = entry_arguments("dlpm_py_borrow_unvalidated", obj, out, opts, &o);
  return s != DLPM_OK ? s : borrow_tensor(obj, o, writable != 0, NULL, out);
}

void dlpm_py_borrow_end(dlpm_py_borrowed* b) DLPM_NOEXCEPT {
  if (b == NULL) return;
  if (b->owner) delete_keeping_error(b->owner);
  memset(b, 0, sizeof *b);
}
