/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpack_mdspan.Tensor: an owned tensor as a Python object that every DLPack consumer
 * takes, through __dlpack__ or through the exchange API its type publishes; and
 * dlpm_py_exchange_api_init, whose default managed_tensor_to_py_object makes a Tensor. The
 * type and the defaults of every table are one file: the type's own table is built with
 * them, and one of them builds the type. */
#include "export/export.h"
#include "shared/device_runtime.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  PyObject_HEAD
  DLManagedTensorVersioned* base; /* owned; deleted with the object */
  int64_t* strides;               /* in elements, never NULL for ndim > 0: base's, or our own row-major ones (NULL or empty) */
  DLTensor view;                  /* what every zero-copy export describes: base's fields with `strides` */
  dlpm_checked_tensor checked;    /* view's check, made once with base's flags: nothing changes view afterwards */
  dlpm_py_met met;                /* the requirements view last met (import/requirements_met.h) */
  PyObject* device;               /* (device_type, device_id), made once: every consumer asks first */
  dlpm_py_device_hooks hooks;     /* zeroed when the producer lends none */
  dlpm_py_stream_wait_fn int_wait; /* dlpm_py_tensor_new_on_stream's wait (integer streams), or NULL */
  void* int_wait_ctx;
  dlpm_py_ready ready;            /* dlpm_py_tensor_import of CUDA or ROCm memory: when the producer's data is ready */
  int library_waits;              /* the library's stream of ready.device was made to wait on ready.event */
  uint64_t copies_queued[DLPM_PY_RUNTIMES]; /* by runtime, bit d: a copy queued on its device d may still read the memory */
} tensor_object;

PyObject* dlpm_py__tensor_type_object; /* created on first use, lives for the process (shared.h) */
static DLPackExchangeAPI tensor_exchange_api;

static tensor_object* as_tensor(PyObject* obj) { return (tensor_object*)obj; }

static int is_tensor(PyObject* obj) {
  return dlpm_py__tensor_type_object != NULL && (PyObject*)Py_TYPE(obj) == dlpm_py__tensor_type_object;
}

/* ---- exports ------------------------------------------------------------------------------ */

/* Each export holds a reference to the Tensor, so the memory lives until the last consumer
 * lets go. The deleter may run on any thread, without the GIL, or after the interpreter
 * has gone; then nothing may be touched, and the object is leaked rather than freed. */
static void release_tensor_reference(void* ctx) {
  PyGILState_STATE gil;
  if (!Py_IsInitialized()) return;
#if DLPM_PY_FULL_API
  if (PyGILState_Check()) { /* the usual case: a consumer dropping it from Python */
    Py_DECREF((PyObject*)ctx);
    return;
  }
#endif
  gil = PyGILState_Ensure();
  Py_DECREF((PyObject*)ctx);
  PyGILState_Release(gil);
}

/* An export the facade refused: MemoryError, or BufferError with its message. */
static int export_failed(dlpm_status s) {
  dlpm_py__raise_as(s == DLPM_E_OUT_OF_MEMORY ? PyExc_MemoryError : PyExc_BufferError, s);
  return -1;
}

/* A zero-copy export (a new managed tensor over the same memory that keeps the object
 * alive). It is READ_ONLY for the same reason as the tensor (the facade's rule of what a
 * legacy export may carry reads it). 0, or -1 with an exception set. */
static int tensor_export(PyObject* self, DLManagedTensorVersioned** out) {
  const tensor_object* o = as_tensor(self);
  const uint64_t kept = o->base->flags & (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
  dlpm_managed_options options = DLPM_MANAGED_OPTIONS_INIT; /* order 0: dlpm_managed_new's reading */
  const char* reason = NULL;
  int32_t cause;
  DLManagedTensorVersioned* wrapped = NULL;
  dlpm_status s;
  options.flags = kept;
  options.release = release_tensor_reference;
  options.ctx = self;
  Py_INCREF(self);
  /* The view's own shape and strides, which the export's reference keeps alive, so that an
   * import trusts them by their addresses (dlpm_check_prechecked); copied where no checked
   * form is carried. */
  s = o->checked.tensor != NULL ? dlpm_managed_new_checked(&o->checked, kept, release_tensor_reference, self, out)
                                : dlpm_managed_new_from(&o->view, &options, out);
  if (s != DLPM_OK) {
    Py_DECREF(self);
    return export_failed(s);
  }
  if ((kept & DLPACK_FLAG_BITMASK_READ_ONLY) == 0 ||
      ((cause = dlpm_managed_read_only_cause(o->base, &reason)) != DLPM_READ_ONLY_LEGACY_UNKNOWN &&
       cause != DLPM_READ_ONLY_PRODUCER_FORBIDS))
    return 0; /* writable, or flagged: the flag says all */
  if ((s = dlpm_managed_forbid_writes(*out, cause, reason, &wrapped)) != DLPM_OK) {
    dlpm_managed_delete(*out); /* lets go of self */
    *out = NULL;
    return export_failed(s);
  }
  *out = wrapped;
  return 0;
}

/* Before a zero-copy export from a device with streams: the producer's wait, given the
 * consumer's stream as passed (object hooks) or as an integer (dlpm_py_tensor_new_on_stream). */
static int wait_for_producer(const tensor_object* o, DLDevice device, PyObject* stream) {
  long long value = 0;
  if (!dlpm_py__device_has_streams(device.device_type)) return 0;
  if (o->hooks.wait != NULL) return o->hooks.wait(o->hooks.ctx, device, stream);
  if (o->int_wait == NULL) {
    void* consumer;
    int wait;
    if (!dlpm_py__is_stream_memory(device.device_type)) return 0;
    /* the array API's stream values, checked whether or not there is anything to wait for */
    if (dlpm_py__stream_from_object(device.device_type, stream, &consumer, &wait) != 0) return -1;
    return wait && o->ready.event != NULL ? dlpm_py__wait(o->ready.device, consumer, o->ready.event) : 0;
  }
  if (stream != Py_None && (value = PyLong_AsLongLong(stream)) == -1 && PyErr_Occurred()) return -1;
  if (o->int_wait(o->int_wait_ctx, device, stream != Py_None, value) == 0) return 0;
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, "the producer's stream synchronisation failed");
  return -1;
}

/* Whether only the producer's own wait orders a stream after the work writing the memory: it
 * lent one (a wait hook, or dlpm_py_tensor_new_on_stream's), on a device with streams. (An
 * import's readiness is an event instead, which the library's stream already waits on.) */
static int has_producer_wait(const tensor_object* o) {
  return (o->hooks.wait != NULL || o->int_wait != NULL) && dlpm_py__device_has_streams(o->base->dl_tensor.device.device_type);
}

/* Makes `queue`, a CUDA or ROCm stream this library is about to use (a copy's, or the
 * library's stream that the exchange API names as current_work_stream), wait for the
 * producer's work through the producer's own wait, told the queue as the array API's integer
 * (a stream handle; the legacy default stream is 1, HIP's default 0). Nothing when no wait
 * was lent. 0, or -1 with an exception set. */
static int order_after_producer(const tensor_object* o, void* queue) {
  PyObject* stream;
  int r;
  if (!has_producer_wait(o)) return 0;
  if ((stream = PyLong_FromVoidPtr(queue)) == NULL) return -1;
  r = wait_for_producer(o, o->base->dl_tensor.device, stream);
  Py_DECREF(stream);
  return r;
}

/* Blocks the host until what the library's stream of `device` holds has run (its GIL
 * released meanwhile). 0, or -1 with an exception set. */
static int synchronize_library_stream(DLDevice device) {
  void* library = NULL;
  void* event = NULL;
  int r = dlpm_py__library_stream(device, &library) != 0 || dlpm_py__capture(device, library, &event) != 0 ||
                  dlpm_py__event_synchronize(device, event) != 0
              ? -1
              : 0;
  dlpm_py__event_release(device, event);
  return r;
}

/* Blocks the host until the producer's work on the memory is done, for a consumer on the
 * CPU, which passes no stream: the import's readiness event, or the producer's own wait
 * asked to order the library's stream, which the host then waits for. 0, or -1 with an
 * exception set. */
static int host_wait_for_producer(const tensor_object* o) {
  const DLDevice device = o->base->dl_tensor.device;
  void* library = NULL;
  if (o->ready.event != NULL && dlpm_py__event_synchronize(o->ready.device, o->ready.event) != 0) return -1;
  if (!has_producer_wait(o)) return 0;
  if (dlpm_py__library_stream(device, &library) != 0 || order_after_producer(o, library) != 0) return -1;
  return synchronize_library_stream(device);
}

/* A copy through a device runtime, between kDLCPU and its memory (device_runtime.h), after
 * the producer's readiness event or its wait (order_after_producer). A host target: on the library's stream of the source's
 * device, complete on return. A device target: on the consumer's stream (None: the runtime's
 * default stream; -1: the library's stream, complete on return), not waited for on the host;
 * the Tensor then waits for it before its memory goes (tensor_dealloc). */
static int runtime_copy(tensor_object* o, DLDevice target, PyObject* stream, DLManagedTensorVersioned** out) {
  const DLDevice on = dlpm_py__copy_device(o->base->dl_tensor.device, target);
  const int to_host = target.device_type == kDLCPU;
  void* queue = NULL;
  void* event = NULL;
  int wait = 0, synchronize = to_host;
  if (!to_host && dlpm_py__stream_from_object(on.device_type, stream, &queue, &wait) != 0) return -1;
  if (to_host || !wait) {
    synchronize = 1;
    if (dlpm_py__library_stream(on, &queue) != 0) return -1;
  }
  if (order_after_producer(o, queue) != 0 ||
      dlpm_py__device_copy(o->base, target, on, queue, o->ready.event, synchronize, out) != 0)
    return -1;
  if (!synchronize) { /* the memory is read by a queued copy: the library's stream orders after it */
    if (dlpm_py__capture(on, queue, &event) != 0) {
      dlpm_py__copy_release(on, queue, *out); /* its copies are queued on `queue` */
      *out = NULL;
      return -1;
    }
    dlpm_py__event_release(on, event); /* the library's stream already waits on it */
    if (on.device_id >= 0 && on.device_id < 64) /* the runtimes serve no other ids */
      o->copies_queued[dlpm_py__runtime_index(on.device_type)] |= (uint64_t)1 << on.device_id;
  }
  return 0;
}

/* A compact copy on `target` (copy=True, or a dl_device other than the tensor's), flagged
 * IS_COPIED: the producer's copy hook when it lent one (it orders the copy after device work
 * still writing the memory); else memory the CPU can read, with no device work pending (no
 * readiness event, no producer's wait), goes to kDLCPU through the facade, as it is; copies between
 * kDLCPU and CUDA or ROCm memory go through its runtime; anything else cannot be copied here. */
static int export_copy(tensor_object* o, DLDevice target, PyObject* stream, DLManagedTensorVersioned** out) {
  const DLDevice device = o->base->dl_tensor.device;
  dlpm_status s;
  int host_reads = 0; /* not managed memory of a device without concurrent managed access: the device copies that */
  if (o->hooks.copy == NULL && target.device_type == kDLCPU && target.device_id == 0 &&
      dlpm_is_host_accessible(device.device_type) && o->ready.event == NULL && !has_producer_wait(o)) {
    if (dlpm_py__host_reads_while_kernels_run(device, &host_reads) != 0) return -1;
    if (host_reads) return (s = dlpm_managed_copy_to_host(o->base, out)) == DLPM_OK ? 0 : export_failed(s);
  }
  if (o->hooks.copy == NULL && dlpm_py__runtime_copies(device, target)) return runtime_copy(o, target, stream, out);
  if (o->hooks.copy == NULL) {
    /* A device no runtime of this library serves is named as PyTorch's __dlpack__ names it
     * (its suite asserts the words); any other pair says which runtime could copy it. */
    char unsupported[48] = "";
    if (target.device_type != kDLCPU && !dlpm_py__is_runtime_memory(target.device_type))
      snprintf(unsupported, sizeof unsupported, "Unsupported device_type: %d: ", (int)target.device_type);
    dlpm_py__fail(PyExc_BufferError, DLPM_E_DEVICE_MISMATCH,
                  "%scannot copy this tensor from device (%d, %d) to (%d, %d): only its producer's device runtime can, "
                  "and it lent no copy hook (dlpm_py_tensor_new_on_device)",
                  unsupported, (int)device.device_type, (int)device.device_id, (int)target.device_type,
                  (int)target.device_id);
    return -1;
  }
  *out = NULL;
  if (o->hooks.copy(o->hooks.ctx, o->base, target, target.device_type == kDLCPU ? Py_None : stream, out) != 0 ||
      *out == NULL) {
    dlpm_py_managed_delete(*out); /* its deleter (maybe Python code) must not meet the hook's exception */
    *out = NULL;
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, "the producer's copy hook failed without saying why");
    return -1;
  }
  return 0;
}

/* ---- the Python-facing methods ------------------------------------------------------------ */

/* Which of the four keywords `key` is (0..3), or -1. Callers pass interned names, so
 * identity decides in the common case; the string compare is the fallback. */
static int keyword_index(PyObject* key, const dlpm_py_names* nm) {
  static const char* const text[4] = {"stream", "max_version", "dl_device", "copy"};
  PyObject* const interned[4] = {nm->stream, nm->max_version, nm->dl_device, nm->copy};
  for (int i = 0; i < 4; ++i)
    if (key == interned[i]) return i;
  for (int i = 0; i < 4; ++i)
    if (PyUnicode_CompareWithASCIIString(key, text[i]) == 0) return i;
  return -1;
}

/* DLPackVersion's fields are uint32_t: the range of max_version's major and minor. */
#define DLPACK_VERSION_FIELD_MAX ((long long)UINT32_MAX)

/* max_version from the usual argument, a tuple of two ints each in
 * [0, DLPACK_VERSION_FIELD_MAX], read with the tuple's and the ints' own accessors: 1 and
 * *major, *minor set; 0 for anything else, which the checked reading in tensor_dlpack takes
 * (and words, where it is refused). */
static int usual_version(PyObject* max_version, long long* major, long long* minor) {
#if DLPM_PY_FULL_API
  PyObject *first, *second;
  long long values[2];
  int overflow[2] = {0, 0};
  if (!PyTuple_CheckExact(max_version) || PyTuple_GET_SIZE(max_version) != 2) return 0;
  first = PyTuple_GET_ITEM(max_version, 0);
  second = PyTuple_GET_ITEM(max_version, 1);
  if (!PyLong_CheckExact(first) || !PyLong_CheckExact(second)) return 0;
  values[0] = PyLong_AsLongLongAndOverflow(first, &overflow[0]); /* an exact int raises nothing */
  values[1] = PyLong_AsLongLongAndOverflow(second, &overflow[1]);
  for (int i = 0; i < 2; ++i)
    if (overflow[i] != 0 || values[i] < 0 || values[i] > DLPACK_VERSION_FIELD_MAX) return 0;
  *major = values[0];
  *minor = values[1];
  return 1;
#else
  (void)max_version;
  (void)major;
  (void)minor;
  return 0;
#endif
}

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) */
static PyObject* tensor_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const dlpm_py_names* nm = dlpm_py__names();
  tensor_object* o = as_tensor(self);
  const DLDevice device = o->base->dl_tensor.device;
  DLDevice target = device;
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  DLManagedTensorVersioned* exported = NULL;
  Py_ssize_t nkw = kwnames ? DLPM_PY_KWNAMES_SIZE(kwnames) : 0;
  int versioned = 0;
  if (!nm) return NULL;
  if (nargs != 0) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__() takes keyword arguments only");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    PyObject* key = DLPM_PY_KWNAME(kwnames, i);
    PyObject** slot[4] = {&stream, &max_version, &dl_device, &copy};
    const int k = keyword_index(key, nm);
    if (k < 0) {
      PyErr_Format(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument %R", key);
      return NULL;
    }
    *slot[k] = args[i];
  }
  if (max_version != Py_None) {
    /* The major decides the capsule (versioned from 1 on); a 1.0 consumer knows no flag of
     * DLPack 1.1, such as IS_SUBBYTE_TYPE_PADDED, and would read padded elements as packed. */
    long long major, minor;
    if (usual_version(max_version, &major, &minor)) {
      versioned = major >= 1;
    } else if (!PyTuple_Check(max_version) || PyTuple_Size(max_version) != 2) {
      PyErr_SetString(PyExc_TypeError, "__dlpack__: max_version must be None or a (major, minor) tuple");
      return NULL;
    } else {
      if (dlpm_py_integer_in_range(PyTuple_GetItem(max_version, 0), "__dlpack__: max_version major", 0,
                                   DLPACK_VERSION_FIELD_MAX, NULL, &major) != 0 ||
          dlpm_py_integer_in_range(PyTuple_GetItem(max_version, 1), "__dlpack__: max_version minor", 0,
                                   DLPACK_VERSION_FIELD_MAX, NULL, &minor) != 0)
        return NULL;
      versioned = major >= 1;
    }
    if (major == 1 && minor == 0 && (o->base->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0) {
      PyErr_SetString(PyExc_BufferError,
                      "__dlpack__: the tensor's sub-byte elements are padded (IS_SUBBYTE_TYPE_PADDED, a flag of DLPack 1.1), "
                      "which a DLPack 1.0 consumer (max_version=(1, 0)) would read as packed");
      return NULL;
    }
  }
  if (dl_device != Py_None) {
    long long type, id; /* DLDevice's fields: a non-negative int32 each */
    if (!PyTuple_Check(dl_device) || PyTuple_Size(dl_device) != 2) {
      PyErr_SetString(PyExc_TypeError, "__dlpack__: dl_device must be None or a (device_type, device_id) tuple");
      return NULL;
    }
    if (dlpm_py_integer_in_range(PyTuple_GetItem(dl_device, 0), "__dlpack__: dl_device device_type", 0, INT32_MAX, NULL,
                                 &type) != 0 ||
        dlpm_py_integer_in_range(PyTuple_GetItem(dl_device, 1), "__dlpack__: dl_device device_id", 0, INT32_MAX, NULL,
                                 &id) != 0)
      return NULL;
    target.device_type = (DLDeviceType)type;
    target.device_id = (int32_t)id;
  }
  /* copy: None, or a truth value (True, numpy.True_, ...) but a string; else a ValueError,
   * as in NumPy's own suite. */
  if (copy != Py_None && copy != Py_True && copy != Py_False) {
    int32_t truth;
    if (dlpm_py_copy_argument(copy, "__dlpack__: copy", &truth) != 0) return NULL;
    copy = truth ? Py_True : Py_False;
  }
  /* The stream belongs to the consumer, on the device it reads from (the target). CUDA and
   * ROCm memory's streams are judged by the array API's rules where the export waits or copies. */
  if (stream != Py_None &&
      (target.device_type == kDLCPU ||
       (o->hooks.wait == NULL && !(o->int_wait == NULL && dlpm_py__is_stream_memory(target.device_type))))) {
    long long value = 0;
    if (o->hooks.wait == NULL && dlpm_py__is_runtime_memory(target.device_type)) {
      /* Pinned memory (nothing to order), or a producer's integer wait: the value is still
       * the array API's for the runtime's device, refused as a copy or the library's own
       * wait refuses it (ROCm's 1 and 2, CUDA's 0, anything below -1). */
      void* decoded = NULL;
      int wait = 0;
      if (dlpm_py__stream_from_object(target.device_type, stream, &decoded, &wait) != 0) return NULL;
    } else if (dlpm_py_stream_integer(stream,
                                      target.device_type == kDLCPU ? "CPU" : dlpm_device_type_name(target.device_type),
                                      &value) != 0)
      return NULL; /* not None: an exception is set */
    /* The array API: a CPU consumer passes no stream (-1, "no synchronisation", is harmless).
     * dlpack_mdspan.InvalidStreamError: a RuntimeError, as NumPy raises, and an AssertionError,
     * as PyTorch does (their suites assert the types). */
    if (target.device_type == kDLCPU && value != -1) {
      PyObject* kind = dlpm_py__invalid_stream_error();
      if (kind == NULL) return NULL;
      PyErr_Format(kind, "stream must be None for CPU tensors (got %lld): stream should be None on cpu, or -1", value);
      Py_DECREF(kind);
      return NULL;
    }
  }
  if (target.device_type != device.device_type || target.device_id != device.device_id) {
    /* The array API's dl_device: a copy on that device, unless copy=False forbids it. */
    if (target.device_type == kDLCPU && target.device_id != 0) {
      PyErr_Format(PyExc_BufferError, "__dlpack__: dl_device=(%d, %d) names no device: the CPU is device 0 (kDLCPU, 0)",
                   (int)target.device_type, (int)target.device_id);
      return NULL;
    }
    /* Memory the host reads (managed, pinned) reaches a CPU consumer as it is unless copy=True
     * (the array API's copy=None reuses the memory where it can, as CuPy's __dlpack__ does for
     * managed memory), once the host has waited for the producer's work: a CPU consumer
     * passes no stream. */
    const int host_target = target.device_type == kDLCPU && dlpm_is_host_accessible(device.device_type);
    int shared = 0; /* Jetson's and pre-Pascal GPUs' managed memory faults if the host reads it while kernels run */
    if (host_target && copy != Py_True && dlpm_py__host_reads_while_kernels_run(device, &shared) != 0)
      return NULL;
    if (shared) {
      if (host_wait_for_producer(o) != 0 || tensor_export(self, &exported) != 0) return NULL;
      exported->dl_tensor.device = target;
      return dlpm_py_capsule_new(exported, versioned);
    }
    if (copy == Py_False) {
      PyObject* kind = dlpm_py__copy_forbidden_error();
      if (kind == NULL) return NULL;
      PyErr_Format(kind,
                   "__dlpack__: dl_device=(%d, %d) needs a copy of this tensor, which is on (%d, %d), and copy=False "
                   "forbids one%s",
                   (int)target.device_type, (int)target.device_id, (int)device.device_type, (int)device.device_id,
                   host_target ? " (the device lacks concurrent managed access: the host may not read its managed memory "
                         "while kernels run)"
                       : "");
      Py_DECREF(kind);
      return NULL;
    }
    if (export_copy(o, target, stream, &exported) != 0) return NULL;
  } else if (copy == Py_True) {
    if (export_copy(o, device, stream, &exported) != 0) return NULL;
  } else {
    /* Memory that device work may still be writing: the producer makes the consumer wait. */
    if (wait_for_producer(o, device, stream) != 0 || tensor_export(self, &exported) != 0) return NULL;
  }
  return dlpm_py_capsule_new(exported, versioned);
}

static PyObject* tensor_dlpack_device(PyObject* self, PyObject* unused) {
  tensor_object* o = as_tensor(self);
  (void)unused;
  if (o->device == NULL) {
    const DLDevice d = o->base->dl_tensor.device;
    if ((o->device = Py_BuildValue("(ii)", (int)d.device_type, (int)d.device_id)) == NULL) return NULL;
  }
  Py_INCREF(o->device);
  return o->device;
}

static PyObject* int64_tuple(const int64_t* values, int32_t n) {
  PyObject* t = PyTuple_New(n);
  for (int32_t i = 0; t && i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(values[i]);
    if (!v) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SetItem(t, i, v);
  }
  return t;
}

static PyObject* get_shape(PyObject* self, void* closure) {
  const DLTensor* b = &as_tensor(self)->base->dl_tensor;
  (void)closure;
  return int64_tuple(b->shape, b->ndim);
}

static PyObject* get_strides(PyObject* self, void* closure) {
  (void)closure;
  return int64_tuple(as_tensor(self)->strides, as_tensor(self)->base->dl_tensor.ndim);
}

static PyObject* get_dtype(PyObject* self, void* closure) {
  const DLDataType d = as_tensor(self)->base->dl_tensor.dtype;
  (void)closure;
  return Py_BuildValue("(iii)", (int)d.code, (int)d.bits, (int)d.lanes);
}

/* __dlpack_data_type__(): the array API's dtype protocol (a consumer learns the dtype
 * without an export), answered as .dtype. */
static PyObject* tensor_dlpack_data_type(PyObject* self, PyObject* unused) {
  (void)unused;
  return get_dtype(self, NULL);
}

static PyObject* get_device(PyObject* self, void* closure) {
  (void)closure;
  return tensor_dlpack_device(self, NULL);
}

static PyObject* get_readonly(PyObject* self, void* closure) {
  (void)closure;
  return PyBool_FromLong((as_tensor(self)->base->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
}

/* The dtype by name ("float32"), as the frameworks print theirs; .dtype keeps the numbers. */
static PyObject* tensor_repr(PyObject* self) {
  char dtype[40];
  PyObject *shape = get_shape(self, NULL), *device = get_device(self, NULL), *r = NULL;
  dlpm_dtype_name(as_tensor(self)->base->dl_tensor.dtype, dtype, sizeof dtype);
  if (shape && device)
    r = PyUnicode_FromFormat("dlpack_mdspan.Tensor(shape=%R, dtype=%s, device=%R%s)", shape, dtype, device,
                             (as_tensor(self)->base->flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? ", readonly" : "");
  Py_XDECREF(shape);
  Py_XDECREF(device);
  return r;
}

static PyObject* tensor_new_from_python(PyObject* type, PyObject* args, PyObject* kwargs) {
  (void)type;
  (void)args;
  (void)kwargs;
  PyErr_SetString(PyExc_TypeError, "dlpack_mdspan.Tensor objects are made by C and C++ extensions (dlpm_py_tensor_new)");
  return NULL;
}

/* Before the memory goes: a copy queued by an export (runtime_copy) that still reads it lands
 * first (the library's stream of the device orders after every such copy). A failure is
 * reported as unraisable. */
static void wait_for_queued_copies(DLDevice device) {
  if (synchronize_library_stream(device) != 0) PyErr_WriteUnraisable(NULL);
}

/* A Tensor may go while an exception is in flight (its own __dlpack__ raised, and the bound
 * method held the last reference). What runs here may run Python code and touch the
 * exception state: the producer's deleter (Warp's and ctypes producers' are ctypes
 * callbacks, which report and clear it), the release hook, the device tuple. The exception in
 * flight is kept aside meanwhile, and is the one the caller sees. */
static void tensor_dealloc(PyObject* self) {
  tensor_object* o = as_tensor(self);
  PyTypeObject* type = Py_TYPE(self);
  freefunc free_object = (freefunc)PyType_GetSlot(type, Py_tp_free);
  const dlpm_py_set_aside kept = dlpm_py__exception_set_aside();
  Py_XDECREF(o->device);
  if (o->hooks.release) o->hooks.release(o->hooks.ctx);
  for (int r = 0; r < DLPM_PY_RUNTIMES; ++r)
    for (int32_t d = 0; o->copies_queued[r] != 0 && d < 64; ++d)
      if (o->copies_queued[r] & ((uint64_t)1 << d)) wait_for_queued_copies(dlpm_py__runtime_device(r, d));
  dlpm_py__event_release(o->ready.device, o->ready.event);
  if (o->base) {
    if (o->strides != o->base->dl_tensor.strides) PyMem_Free(o->strides);
    dlpm_managed_delete(o->base);
  }
  free_object(self);
  Py_DECREF(type); /* instances of a heap type hold a reference to it */
  dlpm_py__exception_put_back(kept);
}

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule sharing the memory."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "(device_type, device_id)"},
    {"__dlpack_data_type__", tensor_dlpack_data_type, METH_NOARGS, "(code, bits, lanes), as DLPack's DLDataType"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, NULL, "extents, a tuple of int", NULL},
    {"strides", get_strides, NULL, "strides in elements, a tuple of int", NULL},
    {"dtype", get_dtype, NULL, "(code, bits, lanes) as DLPack's DLDataType", NULL},
    {"device", get_device, NULL, "(device_type, device_id), as __dlpack_device__() returns", NULL},
    {"readonly", get_readonly, NULL, "True when the tensor is flagged READ_ONLY", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot tensor_slots[] = {
    {Py_tp_doc, (void*)"A tensor owned by C or C++ code, exported zero-copy through DLPack (dlpack_mdspan)."},
    {Py_tp_new, (void*)tensor_new_from_python},
    {Py_tp_dealloc, (void*)tensor_dealloc},
    {Py_tp_repr, (void*)tensor_repr},
    {Py_tp_methods, (void*)tensor_methods},
    {Py_tp_getset, (void*)tensor_getset},
    {0, NULL},
};

static PyType_Spec tensor_spec = {"dlpack_mdspan.Tensor", sizeof(tensor_object), 0, Py_TPFLAGS_DEFAULT, tensor_slots};

/* ---- exchange tables: the defaults of dlpm_py_exchange_api_init ------------------------------ */

static int to_dlpack_mdspan_tensor(DLManagedTensorVersioned* tensor, void** out_py_object) {
  PyObject* obj = dlpm_py_tensor_new(tensor); /* owns the tensor, even on failure */
  if (obj == NULL) return -1;
  *out_py_object = obj;
  return 0;
}

static int no_stream(DLDeviceType device_type, int32_t device_id, void** out_current_stream) {
  (void)device_type;
  (void)device_id;
  *out_current_stream = NULL;
  return 0;
}

dlpm_status dlpm_py_exchange_api_init(DLPackExchangeAPI* table, const dlpm_py_exchange_callbacks* cb) DLPM_NOEXCEPT {
  if (table == NULL || cb == NULL)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "dlpm_py_exchange_api_init: %s is NULL",
                         table ? "callbacks" : "table");
  if (cb->version != DLPM_PY_EXCHANGE_CALLBACKS_VERSION)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_UNSUPPORTED_VERSION,
                         "dlpm_py_exchange_api_init: dlpm_py_exchange_callbacks version %u is not supported (this "
                         "library knows version %u)",
                         cb->version, (unsigned)DLPM_PY_EXCHANGE_CALLBACKS_VERSION);
  if (cb->managed_tensor_from_py_object == NULL)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER,
                         "dlpm_py_exchange_api_init: managed_tensor_from_py_object is required");
  memset(table, 0, sizeof *table);
  table->header.version.major = DLPACK_MAJOR_VERSION;
  table->header.version.minor = DLPACK_MINOR_VERSION;
  table->header.prev_api = NULL;
  table->managed_tensor_allocator =
      cb->managed_tensor_allocator ? cb->managed_tensor_allocator : dlpm_py__host_allocator;
  table->managed_tensor_from_py_object_no_sync = cb->managed_tensor_from_py_object;
  table->managed_tensor_to_py_object_no_sync =
      cb->managed_tensor_to_py_object ? cb->managed_tensor_to_py_object : to_dlpack_mdspan_tensor;
  table->dltensor_from_py_object_no_sync = cb->dltensor_from_py_object;
  table->current_work_stream = cb->current_work_stream ? cb->current_work_stream : no_stream;
  return DLPM_OK;
}

/* ---- the exchange API of the type ----------------------------------------------------------- */

/* Whether an export through the type's table must first order the library's stream: an
 * import's readiness it does not wait on yet, or a producer's wait on stream memory. */
static int exchange_export_orders(const tensor_object* o) {
  return (o->ready.event != NULL && !o->library_waits) ||
         (has_producer_wait(o) && dlpm_py__is_stream_memory(o->base->dl_tensor.device.device_type));
}

/* The exchange API's exports are "no sync": the consumer orders its work after
 * current_work_stream, the library's stream of the device (tensor_work_stream). That stream
 * is made to wait here, before the tensor is handed out (an export through the type's table,
 * or an import's own path to it: dlpm_py__tensor_export): on an import's readiness event,
 * once per Tensor (the import records it and no more: a Tensor never exported so pays for no
 * wait), or through the producer's wait, asked each time. 0, or -1 with an exception set. */
static int order_work_stream(tensor_object* o) {
  void* library;
  if (o->ready.event != NULL && !o->library_waits) {
    if (dlpm_py__library_stream(o->ready.device, &library) != 0 ||
        dlpm_py__wait(o->ready.device, library, o->ready.event) != 0)
      return -1;
    o->library_waits = 1;
  }
  if (!has_producer_wait(o) || !dlpm_py__is_stream_memory(o->base->dl_tensor.device.device_type)) return 0;
  if (dlpm_py__library_stream(o->base->dl_tensor.device, &library) != 0) return -1;
  return order_after_producer(o, library);
}

static int exchange_argument(PyObject* obj) {
  if (is_tensor(obj)) return 0;
  PyErr_SetString(PyExc_TypeError, "dlpack_mdspan.Tensor's exchange API called with another type");
  return -1;
}

static int exchange_to_managed(void* py_object, DLManagedTensorVersioned** out) {
  PyObject* obj = (PyObject*)py_object;
  if (exchange_argument(obj) != 0) return -1;
  return dlpm_py__tensor_export(obj, out);
}

/* A DLTensor carries no flags: a Tensor whose sub-byte elements are padded is refused, as a
 * DLPack 1.0 or legacy consumer is (its consumer would read them as packed); its owned export
 * says so. */
static int exchange_to_dltensor(void* py_object, DLTensor* out) {
  PyObject* obj = (PyObject*)py_object;
  if (exchange_argument(obj) != 0) return -1;
  if ((as_tensor(obj)->base->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0) {
    PyErr_SetString(PyExc_BufferError,
                    "dltensor_from_py_object_no_sync: the tensor's sub-byte elements are padded "
                    "(IS_SUBBYTE_TYPE_PADDED), which a DLTensor, having no flags, cannot say: its consumer would read "
                    "them as packed (managed_tensor_from_py_object_no_sync's export carries the flag)");
    return -1;
  }
  if (order_work_stream(as_tensor(obj)) != 0) return -1;
  *out = as_tensor(obj)->view;
  return 0;
}

/* The Tensor type's current_work_stream: for CUDA and ROCm memory, the library's stream of
 * the device, which every exchange-API export of a Tensor made wait on its producer first
 * (order_work_stream: the import's readiness event, or the producer's wait): a consumer that
 * launches its work on it once the export is made (DLPack's order) reads what the Tensor
 * holds. NULL elsewhere. */
static int tensor_work_stream(DLDeviceType device_type, int32_t device_id, void** out) {
  const DLDevice device = {device_type, device_id};
  *out = NULL;
  if (!dlpm_py__is_stream_memory(device_type)) return 0;
  return dlpm_py__library_stream(device, out);
}

/* The kept checked form this copy's Tensor type publishes for other copies of the component
 * (shared.h, dlpm_py_kept_form): a Tensor's own, or NULL for any other object. */
static const dlpm_checked_tensor* kept_checked_of(PyObject* obj) {
  return is_tensor(obj) && as_tensor(obj)->checked.tensor != NULL ? &as_tensor(obj)->checked : NULL;
}

static dlpm_py_kept_form tensor_kept_form = {DLPM_PY_KEPT_FORM_VERSION, sizeof(dlpm_py_kept_form), NULL,
                                             DLPM_CHECKED_TENSOR_VERSION, 0, kept_checked_of};

/* Publishes tensor_kept_form, naming `type`, on `type`. 0, or -1 with an exception set. */
static int publish_kept_form(PyObject* type) {
  const dlpm_py_names* nm = dlpm_py__names();
  if (nm == NULL) return -1;
  tensor_kept_form.type = type;
  /* process-lifetime (a static, as the exchange table) */
  return dlpm_py__publish_on_type(type, nm->kept_form, &tensor_kept_form, DLPM_PY_KEPT_FORM_CAPSULE);
}

static PyObject* ready_type(void) {
  static const dlpm_py_exchange_callbacks callbacks = {DLPM_PY_EXCHANGE_CALLBACKS_VERSION, exchange_to_managed,
                                                       exchange_to_dltensor, NULL, NULL, tensor_work_stream};
  PyObject* type;
  if (dlpm_py__tensor_type_object) return dlpm_py__tensor_type_object;
  if (dlpm_py_exchange_api_init(&tensor_exchange_api, &callbacks) != DLPM_OK) return NULL;
  if ((type = PyType_FromSpec(&tensor_spec)) == NULL) return NULL;
  if (dlpm_py_publish_exchange_api(type, &tensor_exchange_api) != 0 || publish_kept_form(type) != 0) {
    Py_DECREF(type);
    return NULL;
  }
  dlpm_py__tensor_type_object = type;
  return type;
}

PyObject* dlpm_py_tensor_type(void) DLPM_NOEXCEPT {
  PyObject* type = ready_type();
  Py_XINCREF(type);
  return type;
}

const dlpm_checked_tensor* dlpm_py__tensor_checked(PyObject* obj) {
  return is_tensor(obj) ? &as_tensor(obj)->checked : NULL;
}

const dlpm_checked_tensor* dlpm_py__own_export_source(PyObject* obj, const DLPackExchangeAPI* api) {
  /* Not for a Tensor whose export orders the library's stream first (order_work_stream):
   * its importer calls the table, which orders it. */
  return api == &tensor_exchange_api && is_tensor(obj) && as_tensor(obj)->checked.tensor != NULL &&
                 !exchange_export_orders(as_tensor(obj))
             ? &as_tensor(obj)->checked
             : NULL;
}

dlpm_py_met* dlpm_py__tensor_met(PyObject* obj) { return &as_tensor(obj)->met; }

int dlpm_py__tensor_export(PyObject* obj, DLManagedTensorVersioned** out) {
  if (order_work_stream(as_tensor(obj)) != 0) return -1;
  return tensor_export(obj, out);
}

const DLManagedTensorVersioned* dlpm_py_tensor_get(PyObject* obj) DLPM_NOEXCEPT {
  if (obj == NULL || !is_tensor(obj)) {
    PyErr_SetString(PyExc_TypeError, "expected a dlpack_mdspan.Tensor");
    return NULL;
  }
  return as_tensor(obj)->base;
}

PyObject* dlpm_py_tensor_new_on_stream(DLManagedTensorVersioned* t, dlpm_py_stream_wait_fn wait, void* ctx) DLPM_NOEXCEPT {
  PyObject* obj = dlpm_py_tensor_new(t);
  if (obj != NULL) {
    as_tensor(obj)->int_wait = wait;
    as_tensor(obj)->int_wait_ctx = ctx;
  }
  return obj;
}

PyObject* dlpm_py_tensor_new_on_device(DLManagedTensorVersioned* t, const dlpm_py_device_hooks* hooks) DLPM_NOEXCEPT {
  PyObject* obj;
  if (hooks != NULL && hooks->version != DLPM_PY_DEVICE_HOOKS_VERSION) {
    dlpm_py__fail(PyExc_ValueError, DLPM_E_UNSUPPORTED_VERSION,
                  "dlpm_py_tensor_new_on_device: dlpm_py_device_hooks version %u is not supported (this library knows "
                  "version %u)",
                  hooks->version, (unsigned)DLPM_PY_DEVICE_HOOKS_VERSION);
    dlpm_py_managed_delete(t);
    return NULL;
  }
  if ((obj = dlpm_py_tensor_new(t)) == NULL) {
    if (hooks != NULL && hooks->release != NULL) hooks->release(hooks->ctx);
    return NULL;
  }
  if (hooks != NULL) as_tensor(obj)->hooks = *hooks;
  return obj;
}

PyObject* dlpm_py__tensor_new_ready(DLManagedTensorVersioned* t, dlpm_py_ready ready) {
  PyObject* obj = dlpm_py_tensor_new(t);
  if (obj == NULL) dlpm_py__event_release(ready.device, ready.event);
  else as_tensor(obj)->ready = ready;
  return obj;
}

PyObject* dlpm_py_tensor_new(DLManagedTensorVersioned* t) DLPM_NOEXCEPT {
  PyObject* type;
  tensor_object* o;
  allocfunc alloc;
  int64_t numel;
  dlpm_checked_tensor checked;
  dlpm_status s;
  if (t == NULL) {
    PyErr_SetString(PyExc_ValueError, "dlpm_py_tensor_new: the tensor is NULL (null pointer argument)");
    return NULL;
  }
  if ((s = dlpm_managed_check_version(t)) != DLPM_OK) return dlpm_py__raise_as(PyExc_BufferError, s); /* deleted */
  /* The one structural check of the tensor (as dlpm_validate, with its flags): the view every
   * export describes is checked here, once, and consumers of the component read the result
   * (dlpm_py__tensor_checked). */
  checked.version = DLPM_CHECKED_TENSOR_VERSION;
  if ((s = dlpm_check_tensor(&t->dl_tensor, t->flags, NULL, 0, &checked)) != DLPM_OK) {
    dlpm_py__raise_as(PyExc_BufferError, s);
    dlpm_py_managed_delete(t);
    return NULL;
  }
  if ((type = ready_type()) == NULL) goto fail;
  alloc = (allocfunc)PyType_GetSlot((PyTypeObject*)type, Py_tp_alloc);
  if ((o = (tensor_object*)alloc((PyTypeObject*)type, 0)) == NULL) goto fail;
  o->strides = t->dl_tensor.strides;
  for (int32_t r = 0; o->strides != NULL && r < t->dl_tensor.ndim; ++r)
    if (t->dl_tensor.shape[r] == 0) o->strides = NULL; /* empty: its strides address nothing */
  if (o->strides == NULL && t->dl_tensor.ndim > 0) {
    /* Exports always carry explicit strides; those NULL stands for (row-major, the facade's
     * dlpm_layout) where the tensor has none, or is empty, whose strides may be anything a
     * producer sent (INT64_MIN) and leave canonical, as dlpm_managed_new makes them. */
    DLTensor shape_only = t->dl_tensor;
    shape_only.strides = NULL;
    if ((o->strides = (int64_t*)PyMem_Malloc(sizeof(int64_t) * (size_t)t->dl_tensor.ndim)) == NULL) {
      Py_DECREF((PyObject*)o); /* base is still NULL: nothing of t is touched */
      PyErr_NoMemory();
      goto fail;
    }
    dlpm_layout(&shape_only, o->strides, t->dl_tensor.ndim, &numel); /* valid: cannot fail */
  }
  o->view = t->dl_tensor;
  o->view.strides = o->strides;
  o->checked = checked;
  o->checked.tensor = &o->view;
  /* Our own strides (base's NULL, or an empty tensor's): the view differs from what was
   * checked in its strides alone, which the check learns from; checked again. It cannot
   * fail (row-major strides of a valid shape); if it did, no checked form is carried
   * (tensor NULL) and every import checks the export in full. */
  if (o->strides != t->dl_tensor.strides && dlpm_check_tensor(&o->view, t->flags, NULL, 0, &o->checked) != DLPM_OK)
    o->checked.tensor = NULL;
  o->base = t;
  return (PyObject*)o;
fail:
  dlpm_py_managed_delete(t); /* t may be a producer's, whose deleter (maybe Python code) must not meet our exception */
  return NULL;
}
