/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The import direction (a Python object -> a tensor): what its files, internal to the
 * component, declare for each other. Listed from the bottom up; each part calls only those
 * above it, so no two call each other:
 *   producer_bits.c  the semantic-bits rule of a type, and its check
 *   exchange_api.c   the per-type cache (the table, the rule, __dlpack__), failed entries
 *   capsule.c        a tensor taken out of a capsule, the capsule made its owner
 *   protocol.c       obj.__dlpack__(...)
 *   import.c         the entry points, dlpm_py_import and dlpm_py_borrow: the path chosen */
#ifndef DLPM_PY_IMPORT_DIRECTION_H
#define DLPM_PY_IMPORT_DIRECTION_H

#include "shared/shared.h"

/* producer_bits.c: the semantic-bits rule of a type (0: none), found when the type is
 * first cached; leaves no exception set. */
unsigned dlpm_py__semantic_bits_of_type(PyObject* type);

/* producer_bits.c: refuses (BufferError) a tensor of obj, whose type has `rule` (nonzero),
 * with one of its producer's semantic bits set that changes its values, or, when `writes`
 * (the import writes through it), one that forbids writes. A reading import with a bit set
 * that forbids writes is not refused: *forbids receives the producer's reason (a static
 * string completing "the tensor is READ_ONLY because ..."), else NULL. `dtype` is the
 * exported tensor's; `via_dunder`: it came from obj.__dlpack__(), which makes some checks
 * itself; `option`: dlpm_py_options.semantic_bits_option, what a refusal names as the way to
 * accept the bit. Returns DLPM_OK, or a status with an exception set. */
dlpm_status dlpm_py__check_semantic_bits(unsigned rule, PyObject* obj, DLDataType dtype, int writes, int via_dunder,
                                         const char* option, const char** forbids);

/* exchange_api.c: what the component knows of obj's type, from its per-type cache (the
 * first sight of a type looks both up). Never fails: on MemoryError, nothing is known. */
typedef struct dlpm_py_type_facts {
  const DLPackExchangeAPI* api; /* the table the type publishes, usable here, or NULL */
  unsigned semantic_bits;       /* producer_bits.c's rule for the type; 0: none */
  unsigned char announces;      /* the type has __dlpack_data_type__ (the array API's dtype protocol) */
  unsigned char memory;         /* what its __dlpack__ gave to ordered imports so far (DLPM_PY_TYPE_MEMORY_*, below) */
} dlpm_py_type_facts;           /* 16 bytes: returned in registers */
dlpm_py_type_facts dlpm_py__type_facts(PyObject* obj);

/* exchange_api.c: the kept checked form another copy of the component publishes on obj's type
 * (shared.h, dlpm_py_kept_form), as its type's cache keeps it (trusted as kept_form_of there
 * says), or NULL. Not one of the facts, which stay small enough to be returned in registers:
 * asked only by a validating import of a type that is no Tensor of this copy. */
const dlpm_py_kept_form* dlpm_py__kept_form(PyObject* obj);

/* What obj's type's __dlpack__ gave to the imports that asked where its data is ready
 * (protocol.c), one of its facts (dlpm_py_type_facts.memory): so that such an import asks
 * __dlpack_device__ first, and passes a stream device's tensor the library's stream in its one
 * __dlpack__ call, unless the type has only ever given memory no stream orders. A stream
 * producer asked with no stream may block the host until its data is ready (JAX does) or
 * order the legacy default stream; asking a second time with a stream did not undo that.
 * Sticky: once a type gave stream memory, it is asked its device first for good. */
enum {
  DLPM_PY_TYPE_MEMORY_UNKNOWN = 0, /* not seen by such an import: ask its device first */
  DLPM_PY_TYPE_MEMORY_HOST = 1,    /* gave only memory no stream orders: its __dlpack__ alone */
  DLPM_PY_TYPE_MEMORY_STREAM = 2   /* gave CUDA or ROCm memory once: ask its device first */
};
/* Records what a __dlpack__ of obj's type gave (`stream_memory`: dlpm_py__is_stream_memory). */
void dlpm_py__note_type_memory(PyObject* obj, int stream_memory);

/* exchange_api.c: obj's __dlpack__ as its type's cache keeps it, to be called with obj as
 * its first argument exactly as PyObject_VectorcallMethod(__dlpack__) would call it (a new
 * reference); NULL (no exception set) when the caller must look it up through
 * PyObject_VectorcallMethod: the limited API, a type whose instances may hide it, a
 * __dlpack__ that is no method descriptor or none at all. Valid while the GIL is held. */
PyObject* dlpm_py__dlpack_method(PyObject* obj);

/* exchange_api.c: after the table entry `entry` (its name) of obj's type returned -1. The
 * generic exceptions, exactly RuntimeError, TypeError and ValueError, become BufferError
 * (DLPack asks a producer that cannot describe its data for BufferError, and its
 * __dlpack__ often raises that already), naming the entry and keeping the producer's
 * exception as __cause__; any other exception stays as it is; none set gives BufferError.
 * Returns DLPM_E_PRODUCER_FAILED. */
dlpm_status dlpm_py__exchange_entry_failed(PyObject* obj, const char* entry);

/* A body forced inline into its callers: the hot path's (import.c's entry points). */
#if defined(__GNUC__) || defined(__clang__)
#define DLPM_PY_BODY static inline __attribute__((always_inline))
#else
#define DLPM_PY_BODY static inline
#endif

/* A tensor just received: its DLPack major version checked (the comparison inline, the
 * common case; the facade deletes and words a mismatch, raised as BufferError). */
DLPM_PY_BODY dlpm_status dlpm_py__check_version(DLManagedTensorVersioned* t) {
  dlpm_status s;
  if (t->version.major == DLPACK_MAJOR_VERSION || (s = dlpm_managed_check_version(t)) == DLPM_OK) return DLPM_OK;
  dlpm_py__raise_as(PyExc_BufferError, s); /* deleted */
  return s;
}

/* capsule.c: takes the tensor out of a DLPack capsule: renamed "used_..." first, then
 * version-checked; legacy tensors become versioned (READ_ONLY unless o->legacy_writable),
 * and *legacy says so. `not_dlpack` is the exception for an object that is not a DLPack
 * capsule. */
dlpm_status dlpm_py__take_capsule(PyObject* capsule, const dlpm_py_options* o, PyObject* not_dlpack,
                                  DLManagedTensorVersioned** out, int* legacy);

/* capsule.c: the capsule `t` was taken from, turned into t's owner object (what
 * dlpm_py_owner_new makes) without an allocation where that is safe, else a new owner.
 * Steals `capsule`; NULL (t deleted, MemoryError) on failure. */
PyObject* dlpm_py__owner_from_capsule(PyObject* capsule, DLManagedTensorVersioned* t);

/* protocol.c: obj.__dlpack__(...) with the keywords `o` asks for -> the tensor. *pre_1_0 is
 * set when the producer refused the DLPack 1.0 keywords (TypeError) and was asked again
 * without them; *legacy when it answered with a legacy "dltensor" capsule. With `capsule`
 * not NULL, a taken tensor's capsule comes back there (a reference) instead of being dropped.
 * With `ordered_on` not NULL (an import that captures stream order, dlpm_py_tensor_import),
 * a CUDA tensor asked for with no stream is asked for again with stream= the library's
 * stream of its device (the tensor first taken let go), and *ordered_on receives the
 * CUDA stream the producer ordered (the library's, or the caller's own integer stream),
 * *ordered 1; else *ordered stays 0 (a CPU tensor, stream=-1, a stream object). *passed is
 * set when the caller's stream (o->has_stream) was passed: not for a producer whose
 * __dlpack_device__ says the CPU, which the array API asks with no stream. With
 * `host_readable_only` the capture is of memory the host reads alone (dlpm_py__captures): a
 * tensor of other memory is asked for as without `ordered_on`. `type_memory`: obj's type's
 * dlpm_py_type_facts.memory, as the caller read it (a value read before Python code ran may be
 * stale: at worst the producer is asked twice, as for a type not seen before). */
dlpm_status dlpm_py__take_through_protocol(PyObject* obj, const dlpm_py_options* o, DLManagedTensorVersioned** out,
                                          int* pre_1_0, int* legacy, PyObject** kept, void** ordered_on, int* ordered,
                                          int* passed, int host_readable_only, int type_memory);

#endif
