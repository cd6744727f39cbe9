/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Semantic bits: state that a producer keeps beside a tensor, that changes what its memory
 * means or how it may be used, and that a DLPack tensor cannot carry. A consumer that drops
 * one reads wrong values, or writes where the producer forbids it, and sees no error:
 * PyTorch's lazy conjugate view of [1+2j] holds 1+2j in memory and means 1-2j; a write into
 * a tensor that requires grad bypasses autograd. The rule, in this one place, unless the
 * caller set dlpm_py_options.accept_semantic_bits (resolves the bits itself and takes the
 * raw memory): a bit that changes the values refuses the tensor (BufferError, naming the
 * bit and the producer's own remedy); a bit that forbids writes refuses an import that
 * writes, and makes a reading import READ_ONLY with the producer's reason
 * (dlpm_managed_forbid_writes), so that no re-export of it can be written either.
 *
 * The table below has one row per producer and one line per bit. To add a producer: its
 * module and tensor type (subclasses count), how each bit is asked (a method without
 * arguments or an attribute, true when set), when asking is needed (complex dtypes only, or
 * always), what a set bit means (wrong values, or writes forbidden), and whether the
 * producer's own __dlpack__ already refuses it (then it is asked on the exchange-API paths
 * only: they skip the producer's checks).
 *
 * Cost: a type is recognised once, when exchange_api.c's per-type cache first meets it: a
 * look in sys.modules, so a producer that was never imported is never imported here (its
 * tensors cannot exist yet). The answer is cached with the type's exchange table. An object
 * of any other type costs one comparison per import; a PyTorch tensor through its exchange
 * API two queries (is_neg, requires_grad), three for a complex one (is_conj); through
 * __dlpack__, which refuses the other two itself, one (is_neg). */
#include "import/import_direction.h"

#include <string.h>

/* ---- the table ------------------------------------------------------------------------- */

enum { ASK_METHOD, ASK_ATTRIBUTE };
enum { ALWAYS = 0, COMPLEX_ONLY = 1 };
enum { WRONG_VALUES, FORBIDS_WRITES };

typedef struct semantic_bit {
  const char* query;  /* the method called without arguments, or the attribute read */
  int how;            /* ASK_METHOD, ASK_ATTRIBUTE */
  int when;           /* ALWAYS, COMPLEX_ONLY (kDLComplex tensors) */
  int means;          /* WRONG_VALUES: refused; FORBIDS_WRITES: refused for writing, else READ_ONLY */
  int dunder_refuses; /* the producer's __dlpack__ refuses it itself: not asked on that path */
  const char* what;   /* the message: what is set, and what a reader (or writer) of the memory would get */
  const char* fix;    /* the remedy: the producer's own call */
  const char* forbids; /* FORBIDS_WRITES: completes "the tensor is READ_ONLY because ..." */
} semantic_bit;

#define MAX_BITS 4

typedef struct producer {
  const char* module; /* its key in sys.modules */
  const char* type;   /* the tensor type in that module */
  semantic_bit bits[MAX_BITS];
  int nbits;
  /* Subclasses that hook every method call (PyTorch's __torch_function__) are asked inside
   * a context manager that turns the hooks off (the first of `hooks_off` the module has, an
   * attribute path): a hook may refuse the query (torch.utils.dlpack.ReadOnlyTensorWrapper
   * does), and the exchange API exported the tensor underneath, not what the hook would
   * say. A subclass whose `hook` attribute is the module's `hook_off` has its hooks off
   * already. NULL: no hooks; a module without any of them: asked with the hooks on. */
  const char* hooks_off[2];
  const char* hook;
  const char* hook_off;
} producer;

static const producer producers[] = {
    {"torch",
     "Tensor",
     {{"is_conj", ASK_METHOD, COMPLEX_ONLY, WRONG_VALUES, 1,
       "its conjugate bit is set (a lazy conjugate view: its memory holds the unconjugated values)",
       "call .resolve_conj() on it first", NULL},
      {"is_neg", ASK_METHOD, ALWAYS, WRONG_VALUES, 0,
       "its negative bit is set (a lazy negated view: its memory holds the values' negatives)",
       "call .resolve_neg() on it first", NULL},
      /* PyTorch's own __dlpack__ refuses it: "Can't export tensors that require gradient". */
      {"requires_grad", ASK_ATTRIBUTE, ALWAYS, FORBIDS_WRITES, 1,
       "it requires grad, and a write through this import would bypass autograd",
       "call .detach() on it first, or import it read-only",
       "torch.Tensor forbids writes to tensors that require gradient (a write would bypass autograd; call "
       ".detach() on it first)"}},
     3,
     {"_C.DisableTorchFunctionSubclass", "_C.DisableTorchFunction"}, /* PyTorch 2, 1.x */
     "__torch_function__",
     "_C._disabled_torch_function_impl"},
};

#define NPRODUCERS (sizeof producers / sizeof producers[0])

/* A rule, as exchange_api.c caches it per type: 0 for none, else the producer's row + 1,
 * with HOOKED set for a subclass whose hooks must be turned off while it is asked. */
#define ROW_MASK 0x7Fu
#define HOOKED 0x80u

/* ---- what a row needs at run time, found in the producer's module once ------------------ */

typedef struct producer_state {
  int ready;                  /* 1: found; 0: not yet */
  PyObject* type;             /* the tensor type (a reference held for the process) */
  PyObject* query[MAX_BITS];  /* methods (unbound, from the type) or interned attribute names */
#if DLPM_PY_FULL_API
  PyCFunction direct[MAX_BITS]; /* a query that is a C method without arguments: its function */
  getter direct_get[MAX_BITS];  /* an attribute that is a C getter of the type: the getter */
  void* closure[MAX_BITS];      /* and its closure */
#endif
  unsigned asked[4];          /* the bits to ask (a mask), by situation(): the table's "when" */
  PyObject* hooks_off;        /* the context manager class, or NULL (asked with the hooks on) */
  PyObject* hook;             /* interned name of the hook attribute, or NULL */
  PyObject* hook_off;         /* the hook's "off" value, or NULL */
} producer_state;

static producer_state states[NPRODUCERS];

/* An index into producer_state.asked: what decides which bits are asked. */
static unsigned situation(int via_dunder, int complex_dtype) {
  return (via_dunder ? 2u : 0u) | (complex_dtype ? 1u : 0u);
}

/* module.a.b.c (a new reference), or NULL with an exception set. */
static PyObject* attribute_path(PyObject* module, const char* path) {
  char part[64];
  PyObject* obj = module;
  Py_INCREF(obj);
  while (*path) {
    const char* dot = strchr(path, '.');
    const size_t n = dot ? (size_t)(dot - path) : strlen(path);
    PyObject* next;
    if (n >= sizeof part) {
      Py_DECREF(obj);
      PyErr_SetString(PyExc_SystemError, "dlpack_mdspan: attribute path too long");
      return NULL;
    }
    memcpy(part, path, n);
    part[n] = '\0';
    next = PyObject_GetAttrString(obj, part);
    Py_DECREF(obj);
    if (!(obj = next)) return NULL;
    path += n + (dot ? 1 : 0);
  }
  return obj;
}

/* The references a state holds, let go (a state resolve() made and did not keep). */
static void release_state(producer_state* st) {
  Py_XDECREF(st->type);
  for (int b = 0; b < MAX_BITS; ++b) Py_XDECREF(st->query[b]);
  Py_XDECREF(st->hooks_off);
  Py_XDECREF(st->hook);
  Py_XDECREF(st->hook_off);
}

/* Fills states[i] from the producer's module (imported: the caller found it in
 * sys.modules). Its lookups run Python, which may import and so resolve row i first: that
 * state is kept. Returns 0, or -1 with an exception set (the row then stays unready). */
static int resolve(size_t i, PyObject* module) {
  const producer* p = &producers[i];
  producer_state st;
  memset(&st, 0, sizeof st);
  if (!(st.type = PyObject_GetAttrString(module, p->type))) return -1;
  if (!PyType_Check(st.type)) {
    PyErr_Format(PyExc_TypeError, "%s.%s is not a type", p->module, p->type);
    goto fail;
  }
  for (int b = 0; b < p->nbits; ++b) {
    st.query[b] = p->bits[b].how == ASK_METHOD ? PyObject_GetAttrString(st.type, p->bits[b].query)
                                               : PyUnicode_InternFromString(p->bits[b].query);
    if (!st.query[b]) goto fail;
#if DLPM_PY_FULL_API
    /* The type check and call wrapping of a method descriptor are not needed: the object is
     * an instance of the type the method came from (dlpm_py__semantic_bits_of_type). */
    if (p->bits[b].how == ASK_METHOD && PyObject_TypeCheck(st.query[b], &PyMethodDescr_Type) &&
        PyType_IsSubtype((PyTypeObject*)st.type, ((PyMethodDescrObject*)st.query[b])->d_common.d_type)) {
      const PyMethodDef* def = ((PyMethodDescrObject*)st.query[b])->d_method;
      if ((def->ml_flags & (METH_VARARGS | METH_KEYWORDS | METH_NOARGS | METH_O | METH_FASTCALL | METH_METHOD |
                            METH_CLASS | METH_STATIC)) == METH_NOARGS)
        st.direct[b] = def->ml_meth;
    }
    /* Likewise an attribute that is a getset descriptor of the type (a data descriptor: no
     * instance attribute can hide it): its getter, as the descriptor would call it, without
     * the attribute lookup. */
    if (p->bits[b].how == ASK_ATTRIBUTE) {
      PyObject* d = PyObject_GetAttr(st.type, st.query[b]);
      if (d && PyObject_TypeCheck(d, &PyGetSetDescr_Type) &&
          PyType_IsSubtype((PyTypeObject*)st.type, ((PyGetSetDescrObject*)d)->d_common.d_type) &&
          ((PyGetSetDescrObject*)d)->d_getset->get != NULL) {
        st.direct_get[b] = ((PyGetSetDescrObject*)d)->d_getset->get;
        st.closure[b] = ((PyGetSetDescrObject*)d)->d_getset->closure;
      }
      if (!d) PyErr_Clear(); /* asked through the attribute lookup, which raises then */
      Py_XDECREF(d);
    }
#endif
  }
  for (size_t k = 0; k < sizeof p->hooks_off / sizeof p->hooks_off[0] && p->hooks_off[k] && !st.hooks_off; ++k)
    if (!(st.hooks_off = attribute_path(module, p->hooks_off[k]))) PyErr_Clear();
  if (st.hooks_off && (!(st.hook = PyUnicode_InternFromString(p->hook)) || !(st.hook_off = attribute_path(module, p->hook_off)))) {
    PyErr_Clear(); /* without them, no subclass is told apart: all are asked with the hooks on */
    Py_CLEAR(st.hooks_off);
    Py_CLEAR(st.hook);
  }
  for (unsigned k = 0; k < 4; ++k)
    for (int b = 0; b < p->nbits; ++b) {
      const semantic_bit* bit = &p->bits[b];
      if (((k & 2) && bit->dunder_refuses) || (bit->when == COMPLEX_ONLY && !(k & 1))) continue;
      st.asked[k] |= 1u << b;
    }
  if (states[i].ready) { /* resolved meanwhile, by an import nested in a lookup above: that one stays */
    release_state(&st);
    return 0;
  }
  st.ready = 1;
  states[i] = st;
  return 0;
fail:
  release_state(&st);
  return -1;
}

/* Whether a subclass of row i's type hooks method calls (its hook attribute is not "off"). */
static int hooked(size_t i, PyObject* type) {
  const producer_state* st = &states[i];
  PyObject* hook;
  int on;
  if (!st->hooks_off || type == st->type) return 0;
  if (!(hook = PyObject_GetAttr(type, st->hook))) {
    PyErr_Clear();
    return 1; /* cannot tell: ask with the hooks off, which is always right */
  }
  on = hook != st->hook_off;
  Py_DECREF(hook);
  return on;
}

unsigned dlpm_py__semantic_bits_of_type(PyObject* type) {
  for (size_t i = 0; i < NPRODUCERS; ++i) {
    PyObject* name = PyUnicode_FromString(producers[i].module);
    PyObject* module = name ? PyImport_GetModule(name) : NULL; /* never imports */
    int is_subtype;
    Py_XDECREF(name);
    if (!module) {
      PyErr_Clear(); /* not imported: none of its tensors exists */
      continue;
    }
    if (!states[i].ready && resolve(i, module) != 0) {
      /* A module of that name without the pieces (another package, or one still being
       * imported): not this producer. The row is resolved again at the next cache miss. */
      PyErr_Clear();
      Py_DECREF(module);
      continue;
    }
    Py_DECREF(module);
    is_subtype = PyType_IsSubtype((PyTypeObject*)type, (PyTypeObject*)states[i].type);
    if (is_subtype) return (unsigned)(i + 1) | (hooked(i, type) ? HOOKED : 0u);
  }
  return 0;
}

/* ---- asking ----------------------------------------------------------------------------- */

/* 1 when the bit is set, 0 when not, -1 with the producer's exception set. */
static int ask(const producer_state* st, int b, const semantic_bit* bit, PyObject* obj) {
  PyObject* const query = st->query[b];
  PyObject* answer;
  int set;
  if (bit->how == ASK_ATTRIBUTE) {
#if DLPM_PY_FULL_API
    answer = st->direct_get[b] != NULL ? st->direct_get[b](obj, st->closure[b]) : PyObject_GetAttr(obj, query);
#else
    answer = PyObject_GetAttr(obj, query);
#endif
#if DLPM_PY_FULL_API
  } else if (st->direct[b] != NULL) {
    answer = st->direct[b](obj, NULL);
#endif
  } else {
#if DLPM_PY_VECTORCALL
    answer = PyObject_Vectorcall(query, &obj, 1, NULL);
#else
    answer = PyObject_CallFunctionObjArgs(query, obj, NULL);
#endif
  }
  if (!answer) return -1;
  set = answer == Py_True ? 1 : answer == Py_False ? 0 : PyObject_IsTrue(answer);
  Py_DECREF(answer);
  return set;
}

/* The hooks turned off (a context manager entered: *guard holds it), or -1 with an
 * exception set. */
static int hooks_off(const producer_state* st, PyObject** guard) {
  PyObject* entered;
  if (!(*guard = PyObject_CallObject(st->hooks_off, NULL))) return -1;
  if (!(entered = PyObject_CallMethod(*guard, "__enter__", NULL))) {
    Py_CLEAR(*guard);
    return -1;
  }
  Py_DECREF(entered);
  return 0;
}

/* Leaves the context manager. An exception already set (a refusal, a failed query) stays,
 * and one from __exit__ is then dropped; otherwise -1 when __exit__ failed. */
static int hooks_on(PyObject* guard) {
  PyObject* done;
  if (PyErr_Occurred()) {
    const dlpm_py_set_aside kept = dlpm_py__exception_set_aside();
    Py_XDECREF(PyObject_CallMethod(guard, "__exit__", "OOO", Py_None, Py_None, Py_None));
    dlpm_py__exception_put_back(kept);
    Py_DECREF(guard);
    return 0;
  }
  done = PyObject_CallMethod(guard, "__exit__", "OOO", Py_None, Py_None, Py_None);
  Py_DECREF(guard);
  if (!done) return -1;
  Py_DECREF(done);
  return 0;
}

dlpm_status dlpm_py__check_semantic_bits(unsigned rule, PyObject* obj, DLDataType dtype, int writes, int via_dunder,
                                         const char* option, const char** forbids) {
  const size_t row = (rule & ROW_MASK) - 1;
  const producer* p = &producers[row];
  const producer_state* st = &states[row];
  PyObject* guard = NULL;
  dlpm_status s = DLPM_OK;
  *forbids = NULL;
  if ((rule & HOOKED) && hooks_off(st, &guard) != 0) return dlpm_py__producer_failed("turning the tensor type's hooks off");
  for (unsigned left = st->asked[situation(via_dunder, dtype.code == kDLComplex)]; left != 0 && s == DLPM_OK;
       left &= left - 1) {
    int b = 0, set;
    const semantic_bit* bit;
    while (!(left & (1u << b))) ++b;
    bit = &p->bits[b];
    set = ask(st, b, bit, obj);
    if (set < 0)
      s = dlpm_py__producer_failed(bit->query);
    else if (set && bit->means == FORBIDS_WRITES && !writes)
      *forbids = bit->forbids;
    else if (set && option != NULL && option[0] == '\0')
      s = dlpm_py__fail(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT, "%s.%s refused: %s; %s", p->module, p->type,
                        bit->what, bit->fix);
    else if (set)
      s = dlpm_py__fail(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT,
                        "%s.%s refused: %s; %s, or set %s to take the raw memory and resolve the bit yourself",
                        p->module, p->type, bit->what, bit->fix,
                        option != NULL ? option : "dlpm_py_options.accept_semantic_bits = 1");
  }
  if (guard && hooks_on(guard) != 0) s = dlpm_py__producer_failed("turning the tensor type's hooks back on");
  return s;
}
