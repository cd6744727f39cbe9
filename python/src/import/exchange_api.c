/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* DLPack 1.3's exchange API, as a consumer: finding the table a type publishes (import.c
 * takes and borrows through it, inline on the hot path), what a failed entry raises, and the
 * producer's stream.
 * Tables are built in export/tensor.c. The per-type cache also keeps the type's semantic-bits
 * rule (producer_bits.c), so that one lookup answers both, and, for protocol.c, the type's
 * __dlpack__ method. */
#include "import/import_direction.h"

/* Types seen lately, their table (NULL: none) and their semantic-bits rule (0: none). Each
 * entry holds a reference to its type, so a freed type's address can never come back as a
 * different type with a stale answer; `method` (a reference, or NULL) is the type's
 * __dlpack__ as of its version tag `method_tag` (0: not looked up). */
#define DLPM_PY_TYPE_CACHE 16
static struct type_entry {
  PyObject* type;
  dlpm_py_type_facts facts;
  PyObject* method;
  unsigned int method_tag;
  const dlpm_py_kept_form* kept; /* kept_form_of(type) */
} type_cache[DLPM_PY_TYPE_CACHE];
static unsigned cache_next; /* round-robin victim */
static unsigned cache_last; /* the slot that answered last */

/* How many tables a prev_api chain is walked through: one per DLPack major version past ours,
 * far more than will ever be; a longer chain (or one that loops) is no table. */
#define DLPM_PY_PREV_API_HOPS 64

/* A table this library can call: our major version (walking prev_api for one, at most
 * DLPM_PY_PREV_API_HOPS tables) and the entries DLPack says are never NULL. */
static const DLPackExchangeAPI* compatible(const DLPackExchangeAPI* api) {
  const DLPackExchangeAPIHeader* h = api ? &api->header : NULL;
  for (int hops = 0; h != NULL && h->version.major != DLPACK_MAJOR_VERSION; h = h->prev_api)
    if (++hops > DLPM_PY_PREV_API_HOPS) return NULL;
  api = (const DLPackExchangeAPI*)h; /* the header is the table's first member */
  if (api == NULL || api->managed_tensor_from_py_object_no_sync == NULL || api->managed_tensor_to_py_object_no_sync == NULL ||
      api->managed_tensor_allocator == NULL || api->current_work_stream == NULL)
    return NULL;
  return api;
}

/* The table obj's type publishes, looked up on the type (never the instance). */
static const DLPackExchangeAPI* look_up(PyObject* type, const dlpm_py_names* nm) {
  const DLPackExchangeAPI* api = NULL;
  PyObject* attr = PyObject_GetAttr(type, nm->exchange_capsule);
  if (attr != NULL) {
    if (PyCapsule_IsValid(attr, "dlpack_exchange_api"))
      api = (const DLPackExchangeAPI*)PyCapsule_GetPointer(attr, "dlpack_exchange_api");
  } else {
    PyErr_Clear();
    attr = PyObject_GetAttr(type, nm->exchange_integer); /* earlier drafts: the address as an int */
    if (attr != NULL && PyLong_Check(attr)) {
      /* An address cannot be verified; one that no table can have is not one: a negative
       * int, or one not aligned for the table. */
      const unsigned long long address = PyLong_AsUnsignedLongLong(attr);
      if (!PyErr_Occurred() && address <= UINTPTR_MAX && address % _Alignof(DLPackExchangeAPI) == 0)
        api = (const DLPackExchangeAPI*)(uintptr_t)address;
    }
  }
  Py_XDECREF(attr);
  PyErr_Clear(); /* "none" is not an error */
  return compatible(api);
}

/* The kept checked form `type` publishes (shared.h, dlpm_py_kept_form), found by the type's
 * own attribute lookup (a metaclass's or a base's attribute is found too, and refused by the
 * identity test), or NULL: a capsule of exactly DLPM_PY_KEPT_FORM_CAPSULE whose struct has this
 * layout's version and size, the facade's checked-form version and a checked_of, and names
 * `type` itself. Anything else (none, a forged or foreign capsule, an older or newer layout,
 * a subclass of a Tensor type, a class that copied the attribute) is NULL: its instances are
 * checked in full. No exception left set. */
static const dlpm_py_kept_form* kept_form_of(PyObject* type, const dlpm_py_names* nm) {
  const dlpm_py_kept_form* kept = NULL;
  PyObject* attr = PyObject_GetAttr(type, nm->kept_form);
  if (attr != NULL && PyCapsule_IsValid(attr, DLPM_PY_KEPT_FORM_CAPSULE))
    kept = (const dlpm_py_kept_form*)PyCapsule_GetPointer(attr, DLPM_PY_KEPT_FORM_CAPSULE);
  Py_XDECREF(attr);
  PyErr_Clear(); /* "none" is not an error */
  if (kept == NULL || kept->version != DLPM_PY_KEPT_FORM_VERSION || kept->size != sizeof(dlpm_py_kept_form) ||
      kept->type != type || kept->checked_version != DLPM_CHECKED_TENSOR_VERSION || kept->checked_of == NULL)
    return NULL;
  return kept;
}

/* Whether `type` has a slot: then cache_last is it. */
static int cached(PyObject* type) {
  for (unsigned i = 0; i < DLPM_PY_TYPE_CACHE; ++i)
    if (type_cache[i].type == type) {
      cache_last = i;
      return 1;
    }
  return 0;
}

/* dlpm_py__type_facts after a miss of the last slot: another slot's facts, or the type's
 * lookups, cached (the first sight of a type). Out of line, apart from the hit: compiled into
 * one function with it, the hit paid for the lookups' frame (seven registers saved and
 * restored: 26 instructions for a hit, asked two to four times by an import of a producer that
 * is no Tensor of this copy; docs/performance-history.md). */
static __attribute__((noinline)) dlpm_py_type_facts facts_looked_up(PyObject* obj) {
  static const dlpm_py_type_facts none = {NULL, 0, 0, DLPM_PY_TYPE_MEMORY_UNKNOWN};
  PyObject* type = (PyObject*)Py_TYPE(obj);
  const dlpm_py_names* nm;
  dlpm_py_type_facts facts;
  unsigned slot;
  if (cached(type)) return type_cache[cache_last].facts;
  if ((nm = dlpm_py__names()) == NULL) {
    PyErr_Clear();
    return none;
  }
  facts.api = look_up(type, nm);
  facts.semantic_bits = dlpm_py__semantic_bits_of_type(type); /* no exception left set */
  facts.announces = (unsigned char)PyObject_HasAttr(type, nm->dlpack_data_type); /* never raises */
  facts.memory = DLPM_PY_TYPE_MEMORY_UNKNOWN;
  {
    const dlpm_py_kept_form* kept = kept_form_of(type, nm); /* Python may run: before the slot is touched */
    PyObject *old_type, *old_method;
    if (cached(type)) return type_cache[cache_last].facts; /* meanwhile, by an import the lookups above ran */
    slot = cache_next++ % DLPM_PY_TYPE_CACHE;
    old_type = type_cache[slot].type;
    old_method = type_cache[slot].method;
    Py_INCREF(type);
    type_cache[slot].type = type;
    type_cache[slot].method = NULL;
    type_cache[slot].facts = facts;
    type_cache[slot].method_tag = 0;
    type_cache[slot].kept = kept;
    cache_last = slot;
    /* Let go of the evicted entry last, the slot whole again: freeing a method or a type may
     * run a finaliser, whose own imports may take this very slot. */
    Py_XDECREF(old_method);
    Py_XDECREF(old_type);
  }
  return facts;
}

/* The entry of the slot that answered last, where it is obj's type's (calls come in runs), or
 * NULL: the hit every question of the cache asks first, inline. */
static inline struct type_entry* last_entry_of(PyObject* obj) {
  return type_cache[cache_last].type == (PyObject*)Py_TYPE(obj) ? &type_cache[cache_last] : NULL;
}

dlpm_py_type_facts dlpm_py__type_facts(PyObject* obj) {
  const struct type_entry* entry = last_entry_of(obj);
  return entry != NULL ? entry->facts : facts_looked_up(obj);
}

/* entry_of after a miss of the last slot, out of line as facts_looked_up is. */
static __attribute__((noinline)) struct type_entry* entry_looked_up(PyObject* obj) {
  (void)facts_looked_up(obj);
  return last_entry_of(obj);
}

/* The cache entry of obj's type (looked up, and cached, if it is not the last), or NULL
 * (MemoryError: not cached). */
static inline struct type_entry* entry_of(PyObject* obj) {
  struct type_entry* entry = last_entry_of(obj);
  return entry != NULL ? entry : entry_looked_up(obj);
}

const dlpm_py_kept_form* dlpm_py__kept_form(PyObject* obj) {
  const struct type_entry* entry = entry_of(obj); /* the import has looked the type up already */
  return entry != NULL ? entry->kept : NULL;      /* MemoryError: not cached */
}

void dlpm_py__note_type_memory(PyObject* obj, int stream_memory) {
  struct type_entry* entry = entry_of(obj);
  if (entry == NULL) return;
  if (stream_memory) entry->facts.memory = DLPM_PY_TYPE_MEMORY_STREAM;
  else if (entry->facts.memory == DLPM_PY_TYPE_MEMORY_UNKNOWN) entry->facts.memory = DLPM_PY_TYPE_MEMORY_HOST;
}

#if DLPM_PY_METHOD_CACHE
/* dlpm_py__dlpack_method where `entry`, the cache entry of `type`, holds no method of the
 * type's current version: looked up and kept. Out of line, as facts_looked_up is: with it, the hit paid for
 * this lookup's frame. */
static __attribute__((noinline)) PyObject* method_looked_up(struct type_entry* entry, PyTypeObject* type) {
  /* What PyObject_VectorcallMethod finds, with the same lookup: the entry of the type's
   * MRO, called with obj first when it is a method descriptor (functions are) and no
   * instance attribute can hide it (no instance dict, generic attribute lookup). */
  const dlpm_py_names* nm = dlpm_py__names();
  PyObject *found, *stale;
  if (nm == NULL) {
    PyErr_Clear();
    return NULL;
  }
  found = _PyType_Lookup(type, nm->dlpack); /* borrowed; sets no exception; gives the type a tag */
  if (found != NULL && !(PyType_HasFeature(Py_TYPE(found), Py_TPFLAGS_METHOD_DESCRIPTOR) &&
                         type->tp_getattro == PyObject_GenericGetAttr && type->tp_dictoffset == 0))
    found = NULL;
  stale = entry->method;
  Py_XINCREF(found);
  entry->method = found;
  entry->method_tag = type->tp_version_tag; /* 0 (no tag): looked up again next time */
  Py_XINCREF(found); /* the caller's, taken before the stale one goes: its finaliser may */
  Py_XDECREF(stale); /* take this slot for another type */
  return found;
}
#endif

PyObject* dlpm_py__dlpack_method(PyObject* obj) {
#if DLPM_PY_METHOD_CACHE
  PyTypeObject* type = Py_TYPE(obj);
  struct type_entry* entry = entry_of(obj); /* import.c has looked the type up already */
  if (entry == NULL) return NULL;           /* MemoryError: not cached */
  if (entry->method_tag == 0 || entry->method_tag != type->tp_version_tag) return method_looked_up(entry, type);
  Py_XINCREF(entry->method);
  return entry->method;
#else
  (void)obj;
  return NULL;
#endif
}

const DLPackExchangeAPI* dlpm_py_exchange_api_of(PyObject* obj) DLPM_NOEXCEPT {
  return obj == NULL ? NULL : dlpm_py__type_facts(obj).api;
}

/* The name "module.qualname" of obj's type, or NULL (no exception set). */
static PyObject* type_name(PyObject* obj) {
  PyObject* type = (PyObject*)Py_TYPE(obj);
  PyObject* module = PyObject_GetAttrString(type, "__module__");
  PyObject* qualname = module ? PyObject_GetAttrString(type, "__qualname__") : NULL;
  PyObject* name = qualname ? PyUnicode_FromFormat("%S.%S", module, qualname) : NULL;
  Py_XDECREF(module);
  Py_XDECREF(qualname);
  if (!name) PyErr_Clear();
  return name;
}

/* The first line of str(exc) (PyTorch appends a C++ backtrace), or NULL (no exception set). */
static PyObject* first_line(PyObject* exc) {
  PyObject *text = PyObject_Str(exc), *line = NULL;
  Py_ssize_t end;
  if (text && (end = PyUnicode_FindChar(text, '\n', 0, PyUnicode_GetLength(text), 1)) != -2)
    line = end < 0 ? Py_NewRef(text) : PyUnicode_Substring(text, 0, end);
  Py_XDECREF(text);
  if (!line) PyErr_Clear();
  return line;
}

/* The exception in flight (one is), normalised with its traceback attached, and cleared: a
 * new reference. */
static PyObject* take_exception(void) {
#if DLPM_PY_RAISED_EXCEPTION
  return PyErr_GetRaisedException();
#else
  PyObject *type, *exc, *traceback;
  PyErr_Fetch(&type, &exc, &traceback);
  PyErr_NormalizeException(&type, &exc, &traceback);
  if (traceback) PyException_SetTraceback(exc, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  return exc;
#endif
}

/* What obj's own __dlpack__() says of the tensor its exchange API refused: the first line of
 * its exception, or NULL (no exception set) when it raised none or that could not be read. A
 * producer's exchange entry may fail below the words its protocol gives (PyTorch's, for a
 * sparse tensor: "Cannot access data pointer of Tensor that doesn't have storage", where its
 * __dlpack__ says the tensor is not strided). An export it makes after all is let go. */
static PyObject* protocol_refusal(PyObject* obj) {
  PyObject *method = PyObject_GetAttrString(obj, "__dlpack__"), *capsule, *exc, *line;
  if (method == NULL) {
    PyErr_Clear();
    return NULL;
  }
  capsule = PyObject_CallNoArgs(method);
  Py_DECREF(method);
  if (capsule != NULL) {
    Py_DECREF(capsule); /* unconsumed: its destructor runs the producer's deleter */
    return NULL;
  }
  exc = take_exception();
  line = first_line(exc);
  Py_DECREF(exc);
  return line;
}

/* `producer`'s exception (normalised), now BufferError naming the entry and what obj's
 * __dlpack__() says of the tensor, with `producer` as its __cause__; NULL when that could not
 * be built (no exception set). Steals `producer` only on success. */
static PyObject* as_buffer_error(PyObject* obj, const char* entry, PyObject* producer, const char* kind) {
  PyObject *name = type_name(obj), *line = first_line(producer), *protocol = protocol_refusal(obj), *wrapped = NULL;
  if (name && line)
    wrapped = PyObject_CallFunction(
        PyExc_BufferError, "N",
        protocol ? PyUnicode_FromFormat("%U's DLPack exchange API refused the tensor: %s raised %s: %U; its __dlpack__() "
                                        "refuses it too: %U (%s)",
                                        name, entry, kind, line, protocol, dlpm_status_string(DLPM_E_PRODUCER_FAILED))
                 : PyUnicode_FromFormat("%U's DLPack exchange API refused the tensor: %s raised %s: %U (%s)", name, entry,
                                        kind, line, dlpm_status_string(DLPM_E_PRODUCER_FAILED)));
  Py_XDECREF(name);
  Py_XDECREF(line);
  Py_XDECREF(protocol);
  if (!wrapped) {
    PyErr_Clear();
    return NULL;
  }
  PyException_SetCause(wrapped, producer); /* steals; sets __suppress_context__, as `raise ... from` */
  return wrapped;
}

dlpm_status dlpm_py__exchange_entry_failed(PyObject* obj, const char* entry) {
  PyObject *exc, *wrapped;
  const char* kind;
  if (!PyErr_Occurred()) {
    PyErr_Format(PyExc_BufferError, "the DLPack exchange API's %s failed without setting an exception (%s)", entry,
                 dlpm_status_string(DLPM_E_PRODUCER_FAILED));
    return DLPM_E_PRODUCER_FAILED;
  }
  exc = take_exception();
  kind = Py_IS_TYPE(exc, (PyTypeObject*)PyExc_RuntimeError) ? "RuntimeError"
         : Py_IS_TYPE(exc, (PyTypeObject*)PyExc_TypeError)  ? "TypeError"
         : Py_IS_TYPE(exc, (PyTypeObject*)PyExc_ValueError) ? "ValueError"
                                                             : NULL;
  wrapped = kind ? as_buffer_error(obj, entry, exc, kind) : NULL;
  if (wrapped) exc = wrapped;
#if DLPM_PY_RAISED_EXCEPTION
  PyErr_SetRaisedException(exc);
#else
  PyErr_Restore(Py_NewRef((PyObject*)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
#endif
  return DLPM_E_PRODUCER_FAILED;
}

dlpm_status dlpm_py_current_work_stream(PyObject* obj, DLDevice device, void** out_stream) DLPM_NOEXCEPT {
  const DLPackExchangeAPI* api;
  if (out_stream == NULL)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "dlpm_py_current_work_stream: out_stream is NULL");
  *out_stream = NULL;
  if (device.device_type == kDLCPU || (api = dlpm_py_exchange_api_of(obj)) == NULL) return DLPM_OK;
  if (api->current_work_stream(device.device_type, device.device_id, out_stream) != 0) {
    *out_stream = NULL;
    return dlpm_py__producer_failed("the exchange API's current_work_stream");
  }
  return DLPM_OK;
}
