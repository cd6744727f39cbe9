/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpack_mdspan_python.h: the Python boundary of dlpack_mdspan, for C and C++ extensions.
 *
 *   import:  any object with __dlpack__, a bare "dltensor"/"dltensor_versioned" capsule, or
 *            an object whose type publishes DLPack 1.3's exchange API
 *            -> an owned, validated DLManagedTensorVersioned   (dlpm_py_import)
 *            -> a borrowed, validated DLTensor for one call    (dlpm_py_borrow)
 *            (dlpm_py_options says the rest: validated or not, writable, kept, traced)
 *   export:  a DLManagedTensorVersioned -> a capsule            (dlpm_py_capsule_new)
 *                                       -> a ready Python object with __dlpack__,
 *                                          __dlpack_device__ and the exchange API
 *                                                                (dlpm_py_tensor_new)
 *   tables:  the exchange API a type publishes                  (dlpm_py_exchange_api_of)
 *            a complete table for your own type                 (dlpm_py_exchange_api_init)
 *
 * Every function here must be called with the GIL held (the exchange-API callbacks it
 * builds are called by consumers that hold it, as DLPack requires). Functions that fail
 * set a Python exception and say so in their return value; none throws a C++ exception.
 *
 * Link target: dlpack_mdspan::python (CMake, COMPONENTS python) or pkg-config
 * dlpack_mdspan_python. It brings the C facade (dlpack_mdspan.h) with it.
 */
#ifndef DLPACK_MDSPAN_PYTHON_H
#define DLPACK_MDSPAN_PYTHON_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <dlpack/dlpack.h>
#include <dlpack_mdspan.h>

#include <stdint.h>

/* A static library linked into each extension: its symbols stay inside that extension
 * (it is built with hidden visibility), so two extensions never share or clash on them. */
#ifndef DLPM_PY_API
#define DLPM_PY_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options ------------------------------------------------------------------------ */

/** The layout of dlpm_py_provenance this header describes: a later version only appends
 * fields, and a struct of an earlier version stays accepted (nothing past its end is
 * written). */
#define DLPM_PY_PROVENANCE_VERSION 2

/** The ways a tensor comes in (dlpm_py_provenance.path). */
enum {
  DLPM_PY_PATH_CAPSULE = 1,      /**< a bare "dltensor_versioned" / "dltensor" capsule */
  DLPM_PY_PATH_EXCHANGE_API = 2, /**< the type's DLPack exchange API table */
  DLPM_PY_PATH_DLPACK = 3        /**< obj.__dlpack__(...) */
};

/** What an import knows of when a device tensor's data is ready (dlpm_py_provenance.stream_order). */
enum {
  DLPM_PY_ORDER_NONE = 0,   /**< nothing to order: memory of a device without streams (kDLCPU, kDLCUDAHost, kDLROCMHost) */
  DLPM_PY_ORDER_STREAM = 1, /**< the producer's work on the memory is ordered before ready_stream: work
                                 queued on that stream, or on a stream made to wait for it, sees it */
  DLPM_PY_ORDER_UNKNOWN = 2 /**< nobody said: a bare capsule, __dlpack__ asked with no stream (PyTorch then
                                 orders nothing) or with -1, a stream object (a SYCL queue), or
                                 __dlpack__'s integer stream on a device other than CUDA's and ROCm's */
};

/** What a producer handed over, as an import with dlpm_py_options.provenance saw it. */
typedef struct dlpm_py_provenance {
  uint32_t version;             /**< DLPM_PY_PROVENANCE_VERSION (or 1), set by the caller */
  int32_t path;                 /**< DLPM_PY_PATH_* */
  int32_t legacy;               /**< nonzero: a legacy (pre-1.0) "dltensor" capsule, converted to versioned */
  int32_t pre_1_0_call;         /**< nonzero: __dlpack__ refused the DLPack 1.0 keywords and was asked without */
  DLPackVersion dlpack_version; /**< the producer's DLPack version; {0, 0} for a legacy capsule, which has none */
  /* version 2 */
  int32_t stream_order;         /**< DLPM_PY_ORDER_*: through the exchange API, the table's current_work_stream
                                     for the device ("no sync": the data is ready in that stream's order);
                                     through __dlpack__(stream=s) on CUDA, s (1 and 2 the legacy and
                                     per-thread default streams); dlpm_py_tensor_import's own stream when it
                                     asked the producer with it */
  void* ready_stream;           /**< DLPM_PY_ORDER_STREAM: the stream (a cudaStream_t for CUDA memory; NULL is
                                     the device's default stream), else NULL */
} dlpm_py_provenance;

/** The layout of dlpm_py_options this header describes (see DLPM_REQUIREMENTS_VERSION): a
 * later version only appends fields, and a struct of an earlier version stays accepted. */
#define DLPM_PY_OPTIONS_VERSION 5

/** How dlpm_py_import and dlpm_py_borrow ask the producer and what they hand back.
 * Initialise with dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION), then set what you
 * need. */
typedef struct dlpm_py_options {
  uint32_t version;         /**< DLPM_PY_OPTIONS_VERSION; set by dlpm_py_options_init */
  int32_t legacy_writable;  /**< nonzero: a legacy ("dltensor") tensor arrives writable (default 0:
                                 READ_ONLY, since a legacy capsule cannot say; PyTorch 1.x allows writes) */
  int32_t copy;             /**< __dlpack__(copy=...): -1 None (default), 0 False (never copy), 1 True */
  int32_t has_dl_device;    /**< nonzero: pass dl_device=(dl_device.device_type, dl_device.device_id) */
  DLDevice dl_device;       /**< the requested device when has_dl_device is nonzero */
  int32_t has_stream;       /**< nonzero: pass stream=stream (for CPU tensors stream is never passed) */
  int64_t stream;           /**< the consumer's stream, as the Python array API encodes it (-1: no sync) */
  PyObject* stream_object;  /**< NULL (default), or the consumer's stream as a Python object, passed as
                                 __dlpack__(stream=stream_object) in place of the integer `stream` when
                                 has_stream is set: what producers whose streams are objects take (a
                                 dpctl.SyclQueue for kDLOneAPI). Borrowed: the caller keeps it alive for
                                 the call */
  int32_t use_exchange_api; /**< nonzero (default): use the type's exchange API when it publishes one */
  int32_t validate;         /**< nonzero (default): validate the tensor and check `req`. 0: check only its
                                 DLPack version and what was asked here (copy, dl_device), and not `req`
                                 (but for req->writable, below, and the dtype and device a producer
                                 announces before its export: dlpm_py_check_announced, made whatever
                                 `validate` says); for a caller that validates the tensor
                                 itself before reading it, as the C++ typed imports of
                                 dlpack_mdspan/python.hpp do */
  int32_t writable;         /**< nonzero: the caller writes through the tensor (req->writable, which
                                 also refuses a READ_ONLY tensor when validating, implies it). A
                                 producer's bit that forbids writes (requires_grad) is then refused
                                 instead of making the tensor READ_ONLY, and a borrow takes the owning
                                 path, whose READ_ONLY flag is known (out->flags). Default 0: the caller
                                 only reads */
  int32_t accept_semantic_bits; /**< 0 (default): refuse, with BufferError, a tensor whose producer
                                 marks it with a bit that changes what its memory means and that
                                 DLPack cannot carry: PyTorch's conjugate and negative bits (lazy
                                 views: the memory holds the unconjugated, unnegated values) and,
                                 for an import that writes, requires_grad. Nonzero: take such a
                                 tensor as its raw memory, for a caller that resolves the bits
                                 itself. Checked whatever `validate` says (docs/python-interop.md,
                                 "Semantic bits") */
  int32_t keep_alive;       /**< dlpm_py_borrow only (dlpm_py_import refuses it): nonzero: what owns the
                                 tensor comes back as a Python object, out->keep_alive, not as
                                 out->owner (see dlpm_py_borrowed). Default 0 */
  dlpm_py_provenance* provenance; /**< NULL (default), or where the import says how the tensor came
                                 (its `version` set by the caller): for tools that explain a
                                 hand-over, such as dlpack_mdspan.inspect. Written once the tensor is
                                 received, even if it is then refused */
  /* version 2 */
  const char* semantic_bits_option; /**< how the refusal of a semantic bit tells the caller's users to
                                 accept it: NULL (default) names `dlpm_py_options.accept_semantic_bits
                                 = 1`; a binding whose users set the option under another name gives
                                 that name; "" names none (a binding whose users have no such option:
                                 the refusal then gives only the producer's own remedy, such as
                                 .detach() or .resolve_conj()). Borrowed, static or kept alive by the
                                 caller */
  /* version 3 */
  dlpm_checked_tensor* checked; /**< dlpm_py_borrow only (dlpm_py_import refuses it): NULL (default),
                                 or where a validating borrow (`validate` nonzero) hands back the
                                 checked form of the tensor it lends, its `version` set by the caller
                                 (DLPM_CHECKED_TENSOR_VERSION; another is ValueError). The borrow
                                 writes checked->tensor last: &out->dl_tensor when the rest describes
                                 exactly out->dl_tensor (the same data, byte_offset, ndim, dtype,
                                 device, shape and strides) with out->flags (checked->flags equal to
                                 them), as dlpm_check_tensor with `req` and element_size 0 would
                                 write it; NULL when it wrote none (validate 0, or a path that
                                 changed the tensor after its check: the rest is then unspecified).
                                 For a dlpack_mdspan.Tensor it is the Tensor's own checked form
                                 (made once, when the Tensor was made), copied when the lent view is
                                 the Tensor's (the same data, shape and strides pointers); otherwise
                                 what the borrow's own check computed, at no extra check. Valid
                                 until dlpm_py_borrow_end, while out->dl_tensor is unchanged */
  /* version 4 */
  const dlpm_checked_tensor** lent; /**< dlpm_py_borrow only (dlpm_py_import refuses it): NULL (default),
                                 or where a validating borrow lends, instead of copying into
                                 `checked`, the checked form a dlpack_mdspan.Tensor kept (this
                                 copy's, or the one another copy publishes): *lent is set to it when
                                 the borrow lends the Tensor's description through its exchange
                                 table (a borrow for reading; or for writing, of this copy's Tensor
                                 when its form has neither READ_ONLY nor sub-byte padding, so that its
                                 export would carry no flag) and that description is, byte for byte,
                                 the form's own `tensor` (so `*lent`'s learned fields describe
                                 out->dl_tensor, though its `tensor` is the Tensor's DLTensor, not
                                 &out->dl_tensor), checked with out->flags (0: no flags, and no
                                 sub-byte padding in the form) against `req`, as `checked` would have
                                 been. `checked` is then not written (its tensor NULL). Otherwise
                                 a validating borrow sets *lent to NULL (another producer, a
                                 writable borrow's owning path (a READ_ONLY Tensor, another copy's
                                 Tensor), a description other than the
                                 form's, a refusal) and hands `checked` back as version 3 says; a
                                 borrow with validate 0 lends nothing and may leave *lent as it
                                 was (set it to NULL before the call). The form is the
                                 Tensor's, not the caller's: read it only, while `obj` is alive (the
                                 Tensor never changes its description) */
  /* version 5 */
  int32_t ready_on_host;    /**< nonzero: the caller reads the memory on the host, or keeps the tensor
                                 with nothing to order its reads after the producer's work (a host
                                 view, a tensor held past the call): for memory a stream orders
                                 (kDLCUDA, kDLCUDAManaged, kDLROCM), the producer is asked as
                                 dlpm_py_tensor_import asks (the library's stream through
                                 __dlpack__, or the caller's `stream`; the table's
                                 current_work_stream through the exchange API) and the host waits
                                 for that work before the call returns (a borrow: only for such
                                 memory the host can read, CUDA managed memory, for which it takes
                                 the owning path; other memory is asked for as without it, through
                                 __dlpack__ too). Memory no stream orders is as without it; so is
                                 a bare capsule, a stream_object or stream -1 (nothing says what to
                                 wait for), and dlpm_py_tensor_import (its Tensor keeps the order).
                                 Default 0: the caller orders its own reads (a stream-ordered
                                 view, provenance) */
} dlpm_py_options;

/** Sets *opts to the defaults (legacy READ_ONLY, copy None, no dl_device, no stream, exchange
 * API on, validate, read only, semantic bits refused, owner as out->owner, no provenance, no
 * checked form, none lent, no wait on the host)
 * and opts->version to `version`, 1 to 5 (DLPM_PY_OPTIONS_VERSION); a struct of an earlier
 * version (built against an older header) ends before the fields a later one appended
 * (version 1 before semantic_bits_option, version 2 before checked, version 3 before lent,
 * version 4 before ready_on_host),
 * which are neither written nor read. Any other version is DLPM_E_UNSUPPORTED_VERSION (with a ValueError set) and leaves
 * *opts untouched. */
DLPM_PY_API dlpm_status dlpm_py_options_init(dlpm_py_options* opts, uint32_t version) DLPM_NOEXCEPT;

/* ---- import ------------------------------------------------------------------------- */

/** Imports `obj` (an object with __dlpack__, a "dltensor"/"dltensor_versioned" capsule, or an
 * object whose type publishes the exchange API) as an owned, validated, versioned tensor.
 * `req` and `opts` may be NULL (anything; defaults).
 *
 * Path: the type's exchange API (managed_tensor_from_py_object_no_sync) when it publishes
 * one, opts->use_exchange_api is set and the caller asked for no copy, device or stream;
 * otherwise obj.__dlpack__(max_version=(1, DLPACK_MINOR_VERSION), ...), retried without the
 * DLPack 1.0 keywords when the producer raises TypeError (pre-1.0 producers). The capsule
 * is renamed "used_..." before the tensor is taken.
 *
 * Semantic bits (see dlpm_py_options.accept_semantic_bits): a tensor of a producer that
 * keeps such bits (PyTorch) is refused when one is set, through the exchange API and
 * __dlpack__ (a bare capsule has no object to ask). `opts->writable` or `req->writable`
 * says the import writes: only then is requires_grad refused (whatever opts->validate
 * says); an import that is not writable must not write through it.
 *
 * On success *out owns the tensor: release it with dlpm_managed_delete. On failure *out is
 * untouched, any tensor received has been deleted, and a Python exception is set:
 * TypeError when the tensor does not meet `req` (dtype, rank, shape, layout, device,
 * alignment, divisibility, writability), ValueError for invalid `req`/`opts` (keep_alive,
 * checked and lent are dlpm_py_borrow's; a provenance struct of another version), MemoryError,
 * or the producer's own exception (DLPM_E_PRODUCER_FAILED); BufferError otherwise (a
 * semantic bit set, too). The message is the facade's, followed by the status name in
 * parentheses. */
DLPM_PY_API dlpm_status dlpm_py_import(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                                    DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** A tensor borrowed for the duration of one call (dlpm_py_borrow). */
typedef struct dlpm_py_borrowed {
  DLTensor dl_tensor;             /**< validated unless opts->validate = 0; valid until dlpm_py_borrow_end */
  uint64_t flags;                 /**< DLPACK_FLAG_BITMASK_* as known (0 on the borrowed fast path) */
  DLManagedTensorVersioned* owner; /**< the owned tensor behind dl_tensor, or NULL when borrowed (or kept) */
  PyObject* keep_alive;           /**< with opts->keep_alive: a reference to an object that owns the
                                       tensor, or NULL when borrowed (`obj` keeps the memory alive) */
} dlpm_py_borrowed;

/** Like dlpm_py_import, but for use within the current call only: through the exchange
 * API's dltensor_from_py_object_no_sync where the type publishes it (no allocation, no
 * deleter), else through dlpm_py_import. The view is valid until dlpm_py_borrow_end, which
 * must be called before control returns to Python (unless the borrow holds nothing: see
 * dlpm_py_borrow_end), and while `obj` is alive. A borrowed
 * DLTensor carries no flags, so a writable borrow (opts->writable or req->writable) takes the
 * owning path (whose READ_ONLY flag is known), but for one that asks for the lent form
 * (opts->lent) of a dlpack_mdspan.Tensor of this copy whose kept form has neither READ_ONLY
 * nor sub-byte padding: the form knows its flags, so that borrow takes the borrowed path and
 * is lent the form (out->owner NULL, out->flags 0, as its export's). A caller that keeps the
 * tensor may take out->owner (setting it to NULL before dlpm_py_borrow_end).
 *
 * opts->keep_alive is for a binding whose view may outlive the C++ object that made it,
 * though never its call (a nanobind caster inside std::optional, std::vector or
 * std::variant is destroyed, or reused, before the function runs): ownership then comes
 * back as out->keep_alive, a new reference to an owner object (as dlpm_py_owner_new makes)
 * that deletes the tensor when dropped, to keep until the call ends (take it, setting it to
 * NULL, or dlpm_py_borrow_end drops it); out->owner is NULL. Through __dlpack__ it is the
 * producer's capsule itself, once its tensor is taken (when no one else holds it and the
 * producer left its context unset), so the usual call allocates nothing.
 *
 * With opts->provenance, a tensor borrowed through the exchange API is reported as
 * DLPM_PY_PATH_EXCHANGE_API with the table's DLPack version. On failure *out is zeroed and
 * an exception is set. */
DLPM_PY_API dlpm_status dlpm_py_borrow(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                                    dlpm_py_borrowed* out) DLPM_NOEXCEPT;

/** Ends a borrow: releases the owned tensor and the keep-alive object, if any, and zeroes
 * *b. NULL is a no-op. A borrow whose owner and keep_alive are both NULL (the borrowed path,
 * or both taken) holds nothing: ending it releases nothing, and a caller may leave it
 * unended. */
DLPM_PY_API void dlpm_py_borrow_end(dlpm_py_borrowed* b) DLPM_NOEXCEPT;

/** Asks obj's producer, without an export, what it would hand over (the array API's
 * `__dlpack_data_type__()` and `__dlpack_device__()`, where obj's type has the former and
 * publishes no exchange API, through which the tensor costs no capsule and is cheaper to
 * look at than two Python calls) and
 * checks that against the dtype and device fields of `req` (dlpm_check_announced). For a
 * typed binding with several overloads: a wrong one is refused before the producer makes a
 * capsule. Returns DLPM_OK when they may match, or when nothing usable is announced (no
 * protocol, a method that raises, an answer that is no tuple of ints in range, a capsule,
 * NULL arguments): the tensor the import then takes is authoritative, so a producer whose
 * announcement lies still never yields a wrongly typed view. Otherwise the mismatch's status
 * with TypeError set, or DLPM_E_PRODUCER_FAILED with the producer's interrupt set (an
 * exception that is no Exception, KeyboardInterrupt or SystemExit, is the user's: never
 * cleared). dlpm_py_import and dlpm_py_borrow call it themselves when `req` is
 * given, validating or not (dlpm_py_options.validate): a binding that validates the tensor
 * itself passes its dtype as `req` for this pre-check alone. */
DLPM_PY_API dlpm_status dlpm_py_check_announced(PyObject* obj, const dlpm_requirements* req) DLPM_NOEXCEPT;

/** Looks at the tensor a bare DLPack capsule holds without taking it: the capsule stays as it
 * was. For a binding that must refuse a tensor before consuming it, so that another overload
 * can still take it (a capsule gives its tensor away once). Returns 1 for an exact
 * "dltensor_versioned" capsule of this DLPack major version, or a legacy "dltensor" one, with
 * *out its DLTensor and *flags its flags (a legacy tensor's as the import converts it:
 * READ_ONLY unless opts->legacy_writable; opts may be NULL). Returns 0 for anything else,
 * with no exception set: another object, another name (a used capsule), another major
 * version, a NULL argument; the import says why. Nothing is validated: check the DLTensor
 * (dlpm_check, dlpack_mdspan::try_view) before reading through it. */
DLPM_PY_API int32_t dlpm_py_capsule_peek(PyObject* obj, const dlpm_py_options* opts, DLTensor* out,
                                      uint64_t* flags) DLPM_NOEXCEPT;

/* ---- export ------------------------------------------------------------------------- */

/** Takes ownership of `t` and returns a capsule: "dltensor_versioned" when `versioned` is
 * nonzero, else a legacy "dltensor" (through dlpm_to_legacy: a READ_ONLY or padded sub-byte
 * tensor cannot go legacy, which is a BufferError). The capsule's destructor deletes the
 * tensor only if no consumer took it (renamed the capsule). On failure `t` is deleted, an
 * exception is set and NULL is returned. */
DLPM_PY_API PyObject* dlpm_py_capsule_new(DLManagedTensorVersioned* t, int32_t versioned) DLPM_NOEXCEPT;

/** Takes ownership of `t` and returns a Python object that only keeps it: the tensor is
 * deleted when the object is collected, and no consumer can take it (a capsule named
 * "dlpack_mdspan.owner", not a DLPack name). For bindings that keep a tensor alive through a
 * Python reference (nanobind's cleanup list, pybind11's loader_life_support: the casters,
 * through dlpm_py_borrow's keep_alive option, which turns a taken capsule into one). On
 * failure `t` is deleted, an exception is set and NULL is returned. */
DLPM_PY_API PyObject* dlpm_py_owner_new(DLManagedTensorVersioned* t) DLPM_NOEXCEPT;

/** The tensor an owner object holds (dlpm_py_owner_new's, and a borrow's keep_alive), still
 * the owner's: valid while `obj` is alive. NULL, with no exception set, for any other object.
 * For a binding that reads what the tensor's deleter knows (dlpm_managed_read_only_cause,
 * for a refusal's words) after a borrow handed its ownership to keep_alive. */
DLPM_PY_API const DLManagedTensorVersioned* dlpm_py_owner_get(PyObject* obj) DLPM_NOEXCEPT;

/** dlpm_managed_delete(t) (t may be NULL) with the GIL held, where an exception may be in
 * flight: the producer's deleter may run Python code (a ctypes callback, Warp's), which must
 * not see that exception nor leave one of its own. The exception in flight, if any, is
 * kept aside and restored; one the deleter leaves is cleared. What a binding calls to let
 * go of an imported tensor on its error paths. */
DLPM_PY_API void dlpm_py_managed_delete(DLManagedTensorVersioned* t) DLPM_NOEXCEPT;

/** Takes ownership of `t` (which must be valid: the structure is checked once, here, with
 * its flags, as dlpm_check_tensor checks it; a malformed one is BufferError) and returns an instance of
 * dlpack_mdspan.Tensor, a ready Python type with __dlpack__(*, stream=None, max_version=None,
 * dl_device=None, copy=None), __dlpack_device__(), read-only shape, strides (in elements),
 * dtype ((code, bits, lanes)), device ((device_type, device_id)) and readonly, and
 * __dlpack_c_exchange_api__ on the type. Every export shares the memory and keeps the
 * object alive; t's deleter runs when the object and every export are gone. On failure `t`
 * is deleted, an exception is set and NULL is returned. */
DLPM_PY_API PyObject* dlpm_py_tensor_new(DLManagedTensorVersioned* t) DLPM_NOEXCEPT;

/** dlpm_py_import followed by dlpm_py_tensor_new, keeping the producer's stream order: what
 * dlpack_mdspan.from_dlpack does, for a Tensor that re-exports what it was given. For CUDA
 * memory (kDLCUDA, kDLCUDAManaged) and ROCm memory (kDLROCM) the import captures when the
 * producer's data is ready,
 * as an event on a stream the producer ordered: through the exchange API, its
 * current_work_stream; through __dlpack__, a stream this library owns on the device, passed
 * as stream= (or the caller's own opts->stream) in the one __dlpack__ call, after
 * __dlpack_device__ (not asked of a type that has only given memory no stream orders; see
 * docs/python-interop.md, "Streams"). Every zero-copy export then makes the
 * consumer's stream wait on that event, with no host blocking. The CUDA driver
 * (libcuda.so.1, or the file $DLPM_CUDA_DRIVER names) or the HIP runtime (libamdhip64.so.6,
 * then libamdhip64.so, or the file $DLPM_HIP_RUNTIME names) is loaded only then; CPU tensors
 * never load either. With opts->copy = 1, or a dl_device other than the tensor's, where CUDA
 * memory (kDLCUDA, kDLCUDAManaged, kDLCUDAHost) or ROCm memory (kDLROCM, kDLROCMHost) is on
 * one side and the CPU or the same runtime's memory on the other, the copy is made here
 * through that runtime, complete on return, IS_COPIED; `req` then checks the copy. On failure
 * NULL with an exception set: a missing runtime or a failed call is BufferError naming the
 * call and the runtime's error name. */
DLPM_PY_API PyObject* dlpm_py_tensor_import(PyObject* obj, const dlpm_requirements* req,
                                            const dlpm_py_options* opts) DLPM_NOEXCEPT;

/** The exception a Tensor's __dlpack__ raises for a stream value the array API refuses on the
 * tensor's device ("dlpack_mdspan.InvalidStreamError", a subclass of RuntimeError, as NumPy
 * raises, and of AssertionError, as PyTorch raises): a new reference, or NULL with an
 * exception set. One type per extension that links the component: catch RuntimeError or
 * AssertionError across extensions. */
DLPM_PY_API PyObject* dlpm_py_invalid_stream_error(void) DLPM_NOEXCEPT;

/** The exception a Tensor's __dlpack__ raises for copy=False where dl_device names a device
 * only a copy reaches ("dlpack_mdspan.CopyForbiddenError", a subclass of BufferError, as the
 * array API's __dlpack__ raises, and of ValueError, as CuPy's __dlpack__ and the array API's
 * from_dlpack raise): a new reference, or NULL with an exception set. One type per extension
 * that links the component: catch BufferError or ValueError across extensions. */
DLPM_PY_API PyObject* dlpm_py_copy_forbidden_error(void) DLPM_NOEXCEPT;

/** Called by a Tensor's __dlpack__ on a device with streams (anything but kDLCPU and
 * kDLCUDAHost) before the export is made: make the consumer's stream wait for the
 * producer's work on the memory (for CUDA: dlpack_mdspan::stream_from_array_api and
 * make_stream_wait in <dlpack_mdspan/cuda.hpp>). `has_stream` is 0 for stream=None (the
 * array API's default stream of the device), else `consumer_stream` is the value given
 * (-1: no synchronisation wanted). Return 0, or -1 with a Python exception set, which
 * __dlpack__ raises. Called with the GIL held. */
typedef int (*dlpm_py_stream_wait_fn)(void* ctx, DLDevice device, int32_t has_stream, int64_t consumer_stream);

/** dlpm_py_tensor_new for memory that device work may still be writing: `wait(ctx, ...)`
 * runs on every __dlpack__ call for a device with streams (see dlpm_py_stream_wait_fn): a
 * zero-copy export's with the consumer's stream, a copy's (dl_device, copy=True) with the
 * stream the copy runs on. Exports through the Tensor type's exchange API ("no sync") call
 * it with the library's stream of the device, which the table's current_work_stream names,
 * so a consumer that launches on that stream after the export reads the producer's writes.
 * `ctx` must outlive the object. */
DLPM_PY_API PyObject* dlpm_py_tensor_new_on_stream(DLManagedTensorVersioned* t, dlpm_py_stream_wait_fn wait,
                                                   void* ctx) DLPM_NOEXCEPT;

/** The layout of dlpm_py_device_hooks this header describes. */
#define DLPM_PY_DEVICE_HOOKS_VERSION 1

/** What a producer of device memory lends its dlpack_mdspan.Tensor: the device runtime's
 * calls, which the component cannot make itself (it links no device runtime). For CUDA:
 * dlpack_mdspan::python::cuda_device_hooks (<dlpack_mdspan/python_cuda.hpp>); for SYCL USM:
 * to_python_on_sycl_queue, with sycl_stream_wait, sycl_copy and sycl_release
 * (<dlpack_mdspan/python_sycl.hpp>). Every hook
 * is called with the GIL held, and returns 0, or -1 with a Python exception set, which
 * __dlpack__ raises. */
typedef struct dlpm_py_device_hooks {
  uint32_t version; /**< DLPM_PY_DEVICE_HOOKS_VERSION */
  void* ctx;        /**< passed to each hook; lives until `release`, or at least as long as the Tensor */
  /** Optional: before a zero-copy export from a device with streams (not kDLCPU or
   * kDLCUDAHost), make the consumer's `stream` wait for the producer's work on the memory.
   * `stream` is the object the consumer passed (Py_None when none): an integer for CUDA and
   * ROCm (the array API's encoding), a dpctl.SyclQueue or its "SyclQueueRef" capsule for
   * kDLOneAPI. A stream of the wrong kind is the hook's TypeError. Without a copy hook, a
   * copy the component makes of CUDA or ROCm memory, and an export through the exchange API,
   * call it too, with the stream they use as an integer (as dlpm_py_tensor_new_on_stream's
   * wait). */
  int (*wait)(void* ctx, DLDevice device, PyObject* stream);
  /** Optional: a compact row-major copy of `source` on `target`, ordered after the
   * producer's work: the consumer's dl_device (a copy across devices), or the tensor's own
   * device for copy=True. For a device target the copy is ordered on `stream` (as for
   * `wait`); a host (kDLCPU) target gets Py_None and its bytes are complete when the hook
   * returns. *out, flagged IS_COPIED, is owned by the caller. A `target` the hook cannot
   * reach is its BufferError. */
  int (*copy)(void* ctx, const DLManagedTensorVersioned* source, DLDevice target, PyObject* stream,
              DLManagedTensorVersioned** out);
  /** Optional: called once, when the Tensor is collected (every zero-copy export has let go
   * of it by then; copies own their memory), to free `ctx`; may run without the GIL only
   * if the interpreter is gone, in which case it is not called. */
  void (*release)(void* ctx);
} dlpm_py_device_hooks;

/** dlpm_py_tensor_new for memory a device runtime owns: the Tensor calls `hooks` (copied;
 * NULL: none) for stream ordering and for copies (__dlpack__'s dl_device and copy).
 * Without a copy hook, __dlpack__ copies memory the CPU can read to kDLCPU, and CUDA or ROCm
 * memory through its runtime (as dlpm_py_tensor_import), after the `wait` hook; nothing else.
 * On failure `t` is deleted and `release` (if any) called, except for a hooks version this
 * header does not know (a ValueError), whose fields are not read. */
DLPM_PY_API PyObject* dlpm_py_tensor_new_on_device(DLManagedTensorVersioned* t,
                                                   const dlpm_py_device_hooks* hooks) DLPM_NOEXCEPT;

/** The dlpack_mdspan.Tensor type (a new reference), or NULL with an exception set. */
DLPM_PY_API PyObject* dlpm_py_tensor_type(void) DLPM_NOEXCEPT;

/** Nonzero when a validating dlpm_py_borrow of `obj` checks it against a checked form its
 * Tensor kept, and can hand that form back (dlpm_py_options.checked) at no check of its own:
 * `obj` is a dlpack_mdspan.Tensor of this copy of the component, or of another copy whose
 * type publishes its kept form (docs/python-interop.md, "A Tensor of another copy"); 0 for
 * anything else (NULL included). For a binding choosing between that borrow and a check of
 * its own. Sets no exception; the GIL must be held. */
DLPM_PY_API int dlpm_py_keeps_checked_form(PyObject* obj) DLPM_NOEXCEPT;

/** The tensor a dlpack_mdspan.Tensor holds (borrowed: valid while `obj` lives), or NULL
 * with a TypeError set when `obj` is not one. */
DLPM_PY_API const DLManagedTensorVersioned* dlpm_py_tensor_get(PyObject* obj) DLPM_NOEXCEPT;

/* ---- DLPack 1.3's exchange API ---------------------------------------------------- */

/** The DLPackExchangeAPI that obj's type publishes: the capsule `__dlpack_c_exchange_api__`
 * named "dlpack_exchange_api" (DLPack 1.3), or the integer `__c_dlpack_exchange_api__` of
 * earlier drafts. The table must have this library's DLPack major version (walking
 * header.prev_api for one) and its required entries. Cached per type (the cache holds a
 * reference to the type, so its address is never reused). NULL, with no exception set,
 * when the type publishes none. */
DLPM_PY_API const DLPackExchangeAPI* dlpm_py_exchange_api_of(PyObject* obj) DLPM_NOEXCEPT;

/** The layout of dlpm_py_exchange_callbacks this header describes. */
#define DLPM_PY_EXCHANGE_CALLBACKS_VERSION 1

/** What a type provides to dlpm_py_exchange_api_init: DLPack's own entry-point types, so
 * the table holds them as they are. Each must be noexcept and report failures as DLPack
 * says: a Python exception set and -1 returned (the allocator: through SetError). */
typedef struct dlpm_py_exchange_callbacks {
  uint32_t version; /**< DLPM_PY_EXCHANGE_CALLBACKS_VERSION */
  /** Required: an owning export of an object of the publishing type. */
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object;
  /** Optional: a borrowed export (shape and strides owned by the object). */
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object;
  /** Optional: wraps an owned tensor as a Python object of the type, taking ownership even
   * on failure (default: dlpm_py_tensor_new, a dlpack_mdspan.Tensor). */
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object;
  /** Optional: allocates a tensor shaped like a prototype (default: compact row-major host
   * memory, 64-byte aligned, for kDLCPU; other devices are refused through SetError). */
  DLPackManagedTensorAllocator managed_tensor_allocator;
  /** Optional: the producer's current stream for a device (default: NULL, as a CPU-only
   * producer answers). */
  DLPackCurrentWorkStream current_work_stream;
} dlpm_py_exchange_callbacks;

/** Fills *table, a process-lifetime object (a static), from `callbacks`: the header
 * (DLPack version of these headers, prev_api NULL) and every entry, with this library's
 * defaults where a callback is NULL. The entries may be called only with objects of the
 * type that publishes the table. Returns DLPM_E_NULL_POINTER or DLPM_E_UNSUPPORTED_VERSION
 * (with ValueError set) when the arguments are not usable. Called once per table; not
 * thread-safe with respect to itself. */
DLPM_PY_API dlpm_status dlpm_py_exchange_api_init(DLPackExchangeAPI* table, const dlpm_py_exchange_callbacks* callbacks) DLPM_NOEXCEPT;

/** Publishes `table` on `type` as `__dlpack_c_exchange_api__` (a capsule named
 * "dlpack_exchange_api"). `type` must accept attributes (a heap type). Returns 0, or -1
 * with an exception set. */
DLPM_PY_API int dlpm_py_publish_exchange_api(PyObject* type, const DLPackExchangeAPI* table) DLPM_NOEXCEPT;

/** Nonzero for memory a stream orders (kDLCUDA, kDLCUDAManaged, kDLROCM): what an import
 * captures an event for, and what dlpm_py_options.ready_on_host makes the host wait for. A
 * binding that borrows on its fast path and asks again with ready_on_host only for such
 * memory (the Rust crate's arguments) asks this. */
DLPM_PY_API int dlpm_py_is_stream_memory(int32_t device_type) DLPM_NOEXCEPT;

/** The producer's current work stream for the tensor's device, through the exchange API
 * of obj's type: *out_stream is NULL for CPU tensors and producers without a table.
 * Returns DLPM_OK, or a status with an exception set. */
DLPM_PY_API dlpm_status dlpm_py_current_work_stream(PyObject* obj, DLDevice device, void** out_stream) DLPM_NOEXCEPT;

/* ---- errors ------------------------------------------------------------------------- */

/** Sets the Python exception for a facade failure (`status`, dlpm_last_error()) with the
 * mapping dlpm_py_import uses, and returns NULL (so `return dlpm_py_raise(s);` works in a
 * function returning PyObject*). DLPM_E_PRODUCER_FAILED keeps an exception already set. */
DLPM_PY_API PyObject* dlpm_py_raise(dlpm_status status) DLPM_NOEXCEPT;

/** The one conversion of a Python integer that crosses into the component (an argument, or
 * a producer's answer) to a C integer, for every field it is narrowed into: `value` (an int,
 * or any object with __index__) must lie in [min, max], the range of that field or of what
 * it means, and only then is written to *out. Returns 0, or -1 with an exception set that
 * names `what` and the range: for an argument (`malformed` NULL) TypeError when it is no
 * integer and OverflowError when it lies outside; for a producer's answer, `malformed`
 * (BufferError: a malformed hand-over) for both. Nothing is narrowed silently. An exception
 * that is no Exception (KeyboardInterrupt, SystemExit) raised by `value`'s __index__ is the
 * one left set, never reworded. A NULL `out` is ValueError; a NULL `value` is no integer, a
 * NULL `what` reads "the integer". */
DLPM_PY_API int dlpm_py_integer_in_range(PyObject* value, const char* what, long long min, long long max,
                                         PyObject* malformed, long long* out) DLPM_NOEXCEPT;

/** The one decoding of a consumer's `stream` argument to __dlpack__ (the array API's stream:
 * None or an integer), for every producer that takes integer streams: returns 1 for None
 * (*value untouched), 0 with the integer in *value, or -1 with an exception set: TypeError
 * for anything but an int ("__dlpack__: stream must be None or an integer for <memory>
 * memory, not <its type>", `memory` naming the tensor's memory: "CPU", "CUDA"), and
 * dlpm_py_integer_in_range's OverflowError for an int outside int64 (never narrowed into
 * another stream). What the integer means is the caller's (the device's rule). A NULL `stream`
 * or `value` is ValueError (NULL is not None); a NULL `memory` reads "this". */
DLPM_PY_API int dlpm_py_stream_integer(PyObject* stream, const char* memory, long long* value) DLPM_NOEXCEPT;

/** The one decoding of a `copy` argument (the array API's `bool | None`, of __dlpack__ and
 * from_dlpack): *out is -1 for None, else 1 or 0 as the object's truth value (True,
 * numpy.True_, 1...). A str or bytes ("False" is true) and an object without a truth value
 * are a ValueError naming `what` ("__dlpack__: copy must be None or a boolean, not str"),
 * but for an interrupt (an exception that is no Exception) raised by its __bool__, left set.
 * Returns 0, or -1 with the exception set. */
DLPM_PY_API int dlpm_py_copy_argument(PyObject* copy, const char* what, int32_t* out) DLPM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* DLPACK_MDSPAN_PYTHON_H */
