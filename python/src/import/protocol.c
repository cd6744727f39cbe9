/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The __dlpack__ protocol: obj.__dlpack__(max_version=..., dl_device=..., copy=..., stream=...),
 * asked again without the DLPack 1.0 keywords of a pre-1.0 producer, and the tensor taken
 * out of the capsule it returns. */
#include "import/import_direction.h"
#include "shared/device_runtime.h"

#include <string.h>

/* obj.__dlpack__(**dict(zip(kwnames, values))). Inlined into each caller: the common call's
 * one keyword is then one store, not a copy loop (a memcpy call). */
DLPM_PY_BODY PyObject* call_dlpack(PyObject* obj, const dlpm_py_names* nm, PyObject* kwnames, PyObject* const* values,
                                    Py_ssize_t n) {
#if DLPM_PY_VECTORCALL
  PyObject* stack[6]; /* [0] is scratch for PY_VECTORCALL_ARGUMENTS_OFFSET */
  PyObject *method = dlpm_py__dlpack_method(obj), *result;
  stack[0] = NULL;
  stack[1] = obj;
  for (Py_ssize_t i = 0; i < n; ++i) stack[2 + i] = values[i];
  if (method == NULL)
    return PyObject_VectorcallMethod(nm->dlpack, stack + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, n ? kwnames : NULL);
  /* The type's method, kept by its cache: the same call without the attribute lookup. */
  result = PyObject_Vectorcall(method, stack + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, n ? kwnames : NULL);
  Py_DECREF(method);
  return result;
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
      if (PyDict_SetItem(kwargs, DLPM_PY_KWNAME(kwnames, i), values[i]) != 0) goto done;
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

/* (device_type, device_id) from obj.__dlpack_device__() (shared.h). */
dlpm_status dlpm_py__query_device(PyObject* obj, const dlpm_py_names* nm, DLDevice* out) {
  PyObject* d = PyObject_CallMethodObjArgs(obj, nm->dlpack_device, NULL);
  long long type, id;
  int malformed;
  if (!d) return dlpm_py__producer_failed("__dlpack_device__");
  if (!PyTuple_Check(d) || PyTuple_Size(d) != 2) {
    Py_DECREF(d);
    return dlpm_py__fail(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT, "__dlpack_device__() did not return a 2-tuple");
  }
  /* DLDevice's fields, a non-negative int32 each: anything else is a malformed answer. */
  malformed = dlpm_py_integer_in_range(PyTuple_GetItem(d, 0), "__dlpack_device__()[0], the device type", 0, INT32_MAX,
                                       PyExc_BufferError, &type) != 0 ||
              dlpm_py_integer_in_range(PyTuple_GetItem(d, 1), "__dlpack_device__()[1], the device_id", 0, INT32_MAX,
                                       PyExc_BufferError, &id) != 0;
  Py_DECREF(d);
  if (malformed) return DLPM_E_INVALID_ARGUMENT;
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

/* The keywords of one __dlpack__ call: max_version (unless pre_1_0), dl_device, copy, stream.
 * The common call, max_version alone, needs none of this (dlpm_py__take_through_protocol). */
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
    PyObject* object = o->stream_object; /* a queue object, for producers that take one */
    if (object != NULL)
      Py_INCREF(k->values[k->n] = object);
    else if (!(k->values[k->n] = PyLong_FromLongLong(o->stream)))
      goto fail;
    ++k->n;
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
#if DLPM_PY_RAISED_EXCEPTION
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

/* ask, past the common call: obj.__dlpack__ with the keywords `o` asks for (the DLPack 1.0
 * ones unless *pre_1_0), asked again without the DLPack 1.0 ones when a pre-1.0 producer
 * refuses them. Out of line: the common call never comes here. */
static PyObject* ask_with_keywords(PyObject* obj, const dlpm_py_names* nm, const dlpm_py_options* o, int pass_stream,
                                   int* pre_1_0) {
  keywords k;
  PyObject* capsule = NULL;
  if (!*pre_1_0) {
    if (keywords_build(&k, nm, o, pass_stream, 0) != 0) return NULL;
    capsule = call_dlpack(obj, nm, k.names, k.values, k.n);
    keywords_clear(&k, nm);
    if (capsule != NULL || !refused_keywords()) return capsule;
    *pre_1_0 = 1;
  }
  /* Pre-1.0 producers (NumPy 1.x, PyTorch 1.x) know no max_version, dl_device or copy. */
  if (keywords_build(&k, nm, o, pass_stream, 1) != 0) return NULL;
  capsule = call_dlpack(obj, nm, k.names, k.values, k.n);
  keywords_clear(&k, nm);
  return capsule;
}

/* obj.__dlpack__ with the keywords `o` asks for, asked again without the DLPack 1.0 ones when
 * a pre-1.0 producer refuses them. The common call (max_version alone, its keywords ready
 * made) is inlined into the caller, without a frame of its own. */
DLPM_PY_BODY PyObject* ask(PyObject* obj, const dlpm_py_names* nm, const dlpm_py_options* o, int pass_stream,
                           int* pre_1_0) {
  if (!*pre_1_0 && !pass_stream && !o->has_dl_device && o->copy < 0) {
    PyObject* capsule = call_dlpack(obj, nm, nm->kwnames_max_version, &nm->our_max_version, 1);
    if (capsule != NULL || !refused_keywords()) return capsule;
    *pre_1_0 = 1;
  }
  return ask_with_keywords(obj, nm, o, pass_stream, pre_1_0);
}

/* `o` with the library's stream of `device` as the stream to pass (into *with): 0, or -1 with
 * an exception set (the stream could not be made). The one statement of "ask with the
 * library's stream", for the first ask (library_stream_options) and the second (take_ordered). */
static int with_library_stream(const dlpm_py_options* o, DLDevice device, dlpm_py_options* with, void** stream) {
  if (dlpm_py__library_stream(device, stream) != 0) return -1;
  dlpm_py__options_copy(with, o);
  with->has_stream = 1;
  with->stream = (int64_t)(intptr_t)*stream;
  with->stream_object = NULL;
  return 0;
}

/* The capture of stream order (see dlpm_py__take_through_protocol), once the tensor *out was
 * taken from the producer's first answer: a CUDA or ROCm tensor that came with no stream is
 * let go and asked for again, with the library's stream of its device. With pass_stream,
 * `device` is the producer's answer to __dlpack_device__, and the caller's stream what it
 * ordered. A tensor of memory no stream orders (the usual case) costs one test of its device. */
static dlpm_status take_ordered(PyObject* obj, const dlpm_py_names* nm, const dlpm_py_options* o, int pass_stream,
                                DLDevice device, int* pre_1_0, int* legacy, PyObject** capsule,
                                DLManagedTensorVersioned** out, void** ordered_on, int* ordered, int host_readable_only) {
  void* library;
  dlpm_py_options again;
  const DLDevice d = (*out)->dl_tensor.device;
  if (pass_stream) { /* the caller's own stream: the producer ordered that one */
    if (o->stream_object == NULL && dlpm_py__stream_from_value(device.device_type, o->stream, ordered_on) == 1)
      *ordered = 1;
    return DLPM_OK;
  }
  if (!dlpm_py__captures(d.device_type, host_readable_only)) return DLPM_OK;
  dlpm_py_managed_delete(*out); /* ours since it was taken; a Python deleter leaves no exception */
  *out = NULL;
  Py_CLEAR(*capsule);
  if (with_library_stream(o, d, &again, &library) != 0) return DLPM_PY_E_DEVICE_RUNTIME;
  if ((*capsule = ask(obj, nm, &again, 1, pre_1_0)) == NULL) return dlpack_call_failed(obj, nm);
  {
    const dlpm_status s = dlpm_py__take_capsule(*capsule, o, PyExc_BufferError, out, legacy);
    if (s != DLPM_OK) return s;
  }
  *ordered_on = library;
  *ordered = 1;
  return DLPM_OK;
}

/* The capture of stream order for a type that may give stream memory (its facts' memory),
 * asked with no stream by the caller: its __dlpack_device__ first and, where the tensor will
 * land on a CUDA or ROCm device (that one, or the caller's dl_device), *library as `o` with the
 * library's stream of that device in *device, for the one __dlpack__ call (asked with none, a
 * producer may block the host until its data is ready, as JAX does, or order the legacy
 * default stream). 1 when *library was made; 0 to ask as take_ordered does (memory no stream
 * orders, or a __dlpack_device__ that failed: that path never asks it, so its error is
 * dropped, unless it is no Exception: KeyboardInterrupt); -1 with an exception set (that, or
 * the library's stream could not be made). */
static int library_stream_options(PyObject* obj, const dlpm_py_names* nm, const dlpm_py_options* o,
                                  dlpm_py_options* library, DLDevice* device, int host_readable_only) {
  void* stream;
  if (dlpm_py__query_device(obj, nm, device) != DLPM_OK) {
    if (dlpm_py__clear_unless_interrupt() != 0) return -1;
    device->device_type = kDLCPU;
    device->device_id = 0;
    return 0;
  }
  if (o->has_dl_device) *device = o->dl_device; /* where the producer puts it */
  if (!dlpm_py__captures(device->device_type, host_readable_only)) return 0;
  return with_library_stream(o, *device, library, &stream) == 0 ? 1 : -1;
}

/* Whether a tensor on `a` is ordered by the streams of `b`: the same runtime (CUDA's device
 * and managed memory share its streams) and ordinal. */
static int same_streams(DLDevice a, DLDevice b) {
  return dlpm_py__runtime_index(a.device_type) == dlpm_py__runtime_index(b.device_type) && a.device_id == b.device_id;
}

dlpm_status dlpm_py__take_through_protocol(PyObject* obj, const dlpm_py_options* o, DLManagedTensorVersioned** out,
                                          int* pre_1_0, int* legacy, PyObject** kept, void** ordered_on, int* ordered,
                                          int* passed, int host_readable_only, int type_memory) {
  const dlpm_py_names* nm = dlpm_py__names();
  PyObject* capsule;
  DLDevice device = {kDLCPU, 0};
  dlpm_py_options library; /* `o` with the library's stream: library_stream_options */
  const dlpm_py_options* asked = o; /* what the __dlpack__ call is asked with */
  int pass_stream = 0, by_library = 0;
  dlpm_status s;
  if (!nm) return DLPM_E_OUT_OF_MEMORY;
  if (o->has_stream) { /* the array API: no stream for CPU tensors */
    if ((s = dlpm_py__query_device(obj, nm, &device)) != DLPM_OK) return s;
    pass_stream = device.device_type != kDLCPU;
  } else if (ordered_on != NULL && type_memory != DLPM_PY_TYPE_MEMORY_HOST) { /* not a type of host memory alone */
    if ((by_library = library_stream_options(obj, nm, o, &library, &device, host_readable_only)) < 0)
      return PyErr_ExceptionMatches(PyExc_Exception) ? DLPM_PY_E_DEVICE_RUNTIME : DLPM_E_PRODUCER_FAILED;
    if (by_library) {
      asked = &library;
      pass_stream = 1;
    }
  }
  *passed = pass_stream && !by_library; /* the caller's own stream */
  capsule = ask(obj, nm, asked, pass_stream, pre_1_0);
  if (!capsule) return dlpack_call_failed(obj, nm);
  s = dlpm_py__take_capsule(capsule, asked, PyExc_BufferError, out, legacy);
  /* A tensor on another device than the one whose stream was passed (a __dlpack_device__ that
   * did not say where its tensor is): nothing ordered its own device's stream, so it is taken
   * as one that came with no stream (take_ordered asks again with that device's). */
  if (s == DLPM_OK && by_library && !same_streams((*out)->dl_tensor.device, device)) {
    asked = o;
    pass_stream = 0;
  }
  if (s == DLPM_OK && ordered_on != NULL)
    s = take_ordered(obj, nm, asked, pass_stream, device, pre_1_0, legacy, &capsule, out, ordered_on, ordered,
                     host_readable_only);
  if (s == DLPM_OK && ordered_on != NULL) {
    const int stream_memory = dlpm_py__is_stream_memory((*out)->dl_tensor.device.device_type);
    /* told what this call gave only where that changes the type's record */
    if (stream_memory ? type_memory != DLPM_PY_TYPE_MEMORY_STREAM : type_memory == DLPM_PY_TYPE_MEMORY_UNKNOWN)
      dlpm_py__note_type_memory(obj, stream_memory);
  }
  if (s == DLPM_OK && kept != NULL) *kept = capsule;
  else if (s == DLPM_OK) Py_XDECREF(capsule);
  else dlpm_py__drop_keeping_error(capsule); /* the refusal stays the one raised */
  return s;
}
