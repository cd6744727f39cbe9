/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Import: a Python object -> an owned (dlpm_py_import) or borrowed (dlpm_py_borrow) tensor,
 * validated unless the options leave that to the caller. The path is chosen
 * here: a capsule (capsule.c), the exchange API the type publishes (found by exchange_api.c,
 * called here: the hot path) or __dlpack__ (protocol.c). The producer's semantic bits are
 * checked here on every path but the bare capsule, which has no object to ask
 * (producer_bits.c). Every path either hands the tensor to the caller or deletes it. */
#include "import/import_direction.h"
#include "import/requirements_met.h"
#include "shared/device_runtime.h"

#include <stddef.h>
#include <string.h>

/* The bodies the entry points share are DLPM_PY_BODY (import_direction.h), forced inline into
 * each (see dlpm_py_import): the hot path makes no call more than one entry point of its own
 * would. */

/* The defaults, with or without validation: `unvalidated_options` leaves it to the caller
 * (the options of dlpm_py_borrow's fifth expansion), and is the defaults in every other field. */
#define DLPM_PY_DEFAULTS_(validated)                                                                          \
  {.version = DLPM_PY_OPTIONS_VERSION, .copy = -1, .dl_device = {kDLCPU, 0}, .use_exchange_api = 1,          \
   .validate = (validated)}
static const dlpm_py_options default_options = DLPM_PY_DEFAULTS_(1);
static const dlpm_py_options unvalidated_options = DLPM_PY_DEFAULTS_(0);
#undef DLPM_PY_DEFAULTS_

/* The bytes of a dlpm_py_options of `version` (1 to 5): a struct of an earlier version ends
 * before the fields a later one appended. */
static size_t options_size(uint32_t version) {
  return version == 1   ? offsetof(dlpm_py_options, semantic_bits_option)
         : version == 2 ? offsetof(dlpm_py_options, checked)
         : version == 3 ? offsetof(dlpm_py_options, lent)
         : version == 4 ? offsetof(dlpm_py_options, ready_on_host)
                        : sizeof(dlpm_py_options);
}

dlpm_status dlpm_py_options_init(dlpm_py_options* opts, uint32_t version) DLPM_NOEXCEPT {
  if (opts == NULL) return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "dlpm_py_options_init: opts is NULL");
  if (version < 1 || version > DLPM_PY_OPTIONS_VERSION)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_UNSUPPORTED_VERSION,
                         "dlpm_py_options_init: version %u is not supported (this library knows versions 1 to %u)",
                         version, (unsigned)DLPM_PY_OPTIONS_VERSION);
  memcpy(opts, &default_options, options_size(version));
  opts->version = version;
  return DLPM_OK;
}

void dlpm_py__options_copy(dlpm_py_options* to, const dlpm_py_options* from) {
  *to = default_options;
  memcpy(to, from, options_size(from->version));
}

/* A version-2 field of `o`, or its default for a version-1 struct (which has no such bytes). */
static const char* semantic_bits_option(const dlpm_py_options* o) {
  return o->version >= 2 ? o->semantic_bits_option : NULL;
}

/* The version-3 field: where a borrow hands back its checked form, or NULL. */
static dlpm_checked_tensor* checked_form_out(const dlpm_py_options* o) {
  return o->version >= 3 ? o->checked : NULL;
}

/* The version-4 field: where a borrow lends the checked form a Tensor kept, or NULL. */
static const dlpm_checked_tensor** lent_form_out(const dlpm_py_options* o) {
  return o->version >= 4 ? o->lent : NULL;
}

/* The version-5 field: whether the host waits for the producer's work on stream memory. */
static int ready_on_host(const dlpm_py_options* o) { return o->version >= 5 && o->ready_on_host; }

/* What check_options refuses, each stated once: its refusals test them one by one, and
 * options_usable, inline in each entry point, tests them all, so that usual options pay for no
 * call and only unusable ones go out of line to check_options for the refusal. */
DLPM_PY_BODY int version_known(uint32_t version, uint32_t newest) { return version - 1u < newest; } /* 1..newest */
DLPM_PY_BODY int copy_known(int32_t copy) { return copy >= -1 && copy <= 1; }
DLPM_PY_BODY int provenance_known(const dlpm_py_options* o) {
  return o->provenance == NULL || version_known(o->provenance->version, DLPM_PY_PROVENANCE_VERSION);
}
DLPM_PY_BODY int checked_known(const dlpm_py_options* o) {
  return checked_form_out(o) == NULL || checked_form_out(o)->version == DLPM_CHECKED_TENSOR_VERSION;
}
DLPM_PY_BODY int options_usable(const dlpm_py_options* o) {
  return version_known(o->version, DLPM_PY_OPTIONS_VERSION) && copy_known(o->copy) && provenance_known(o) &&
         checked_known(o);
}

static dlpm_status check_options(const dlpm_py_options* o, const char* function) {
  if (!version_known(o->version, DLPM_PY_OPTIONS_VERSION))
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_UNSUPPORTED_VERSION,
                         "%s: dlpm_py_options version %u is not supported (this library knows versions 1 to %u); %s",
                         function,
                         o->version, (unsigned)DLPM_PY_OPTIONS_VERSION,
                         o->version == 0 ? "initialise it with dlpm_py_options_init(&opts, DLPM_PY_OPTIONS_VERSION)"
                                         : "the extension was built against a newer dlpack_mdspan_python.h");
  if (!copy_known(o->copy))
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_INVALID_ARGUMENT,
                         "%s: dlpm_py_options.copy = %d is not -1 (None), 0 (False) or 1 (True)", function, o->copy);
  if (!provenance_known(o))
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_UNSUPPORTED_VERSION,
                         "%s: dlpm_py_options.provenance has version %u, not 1 to DLPM_PY_PROVENANCE_VERSION (%u)",
                         function, o->provenance->version, (unsigned)DLPM_PY_PROVENANCE_VERSION);
  if (!checked_known(o))
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_UNSUPPORTED_VERSION,
                         "%s: dlpm_py_options.checked has version %u, not DLPM_CHECKED_TENSOR_VERSION (%u)", function,
                         checked_form_out(o)->version, (unsigned)DLPM_CHECKED_TENSOR_VERSION);
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

/* Lets go of `t` and of `keep` (an owner object), either may be NULL, without losing the
 * exception already set, nor leaving one (a deleter may run Python code). */
static void release_keeping_error(DLManagedTensorVersioned* t, PyObject* keep) {
  dlpm_py_set_aside kept;
  if (!PyErr_Occurred()) { /* the usual case (a borrow ending): nothing to keep */
    if (t) dlpm_managed_delete(t);
    Py_XDECREF(keep);
    if (PyErr_Occurred()) PyErr_Clear();
    return;
  }
  kept = dlpm_py__exception_set_aside();
  if (t) dlpm_managed_delete(t);
  Py_XDECREF(keep);
  dlpm_py__exception_put_back(kept);
}

void dlpm_py_managed_delete(DLManagedTensorVersioned* t) DLPM_NOEXCEPT { release_keeping_error(t, NULL); }

int dlpm_py_is_stream_memory(int32_t device_type) DLPM_NOEXCEPT { return dlpm_py__is_stream_memory(device_type); }

/* The producer did what was asked: a copy when copy=True, none when copy=False, the
 * requested device. */
DLPM_PY_BODY dlpm_status check_honoured(const DLManagedTensorVersioned* t, const dlpm_py_options* o, int pre_1_0) {
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
static int exchange_api_allowed(const dlpm_py_options* o) {
  return o->use_exchange_api && o->copy != 1 && !o->has_dl_device && !o->has_stream;
}

/* obj's tensor through its type's table, its DLPack major version checked (another major:
 * deleted). */
DLPM_PY_BODY dlpm_status take_through_exchange_api(const DLPackExchangeAPI* api, PyObject* obj,
                                       DLManagedTensorVersioned** out) {
  DLManagedTensorVersioned* t = NULL;
  dlpm_status s;
  if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0 || t == NULL)
    return dlpm_py__exchange_entry_failed(obj, "managed_tensor_from_py_object_no_sync");
  if ((s = dlpm_py__check_version(t)) == DLPM_OK) *out = t;
  return s;
}

/* An entry point's arguments, checked (ValueError when unusable); *o: the options the call
 * runs with, the caller's or the defaults. */
DLPM_PY_BODY dlpm_status entry_arguments(const char* function, PyObject* obj, const void* out,
                                         const dlpm_py_options* opts, const dlpm_py_options** o) {
  if (obj == NULL || out == NULL)
    return dlpm_py__fail(PyExc_ValueError, DLPM_E_NULL_POINTER, "%s: %s is NULL", function, obj ? "out" : "obj");
  *o = opts ? opts : &default_options;
  return opts == NULL || options_usable(opts) ? DLPM_OK : check_options(opts, function);
}

/* What a validating call checks the tensor against (`req`, or "anything"), or NULL when
 * the options turn validation off. */
static const dlpm_requirements* checks_for(const dlpm_requirements* req, const dlpm_py_options* o) {
  return o->validate ? (req ? req : no_requirements()) : NULL;
}

/* Whether the caller writes through the tensor. */
static int caller_writes(const dlpm_requirements* req, const dlpm_py_options* o) {
  return o->writable || (req && req->writable);
}

/* obj.<name>() as a tuple of `n` ints each in [0, max[i]] into out[]: 1; 0 when the answer
 * cannot be used (it raised an Exception, or is no such tuple, or an item lies outside its
 * field's range: never narrowed), no exception left set; -1 with one set that is no Exception
 * (KeyboardInterrupt, SystemExit: the user's, not the producer's). */
static int ask_tuple(PyObject* obj, PyObject* name, Py_ssize_t n, const long long* max, long long* out) {
  PyObject* answer = PyObject_CallMethodObjArgs(obj, name, NULL);
  int usable = answer != NULL && PyTuple_Check(answer) && PyTuple_Size(answer) == n;
  for (Py_ssize_t i = 0; usable && i < n; ++i)
    usable = dlpm_py_integer_in_range(PyTuple_GetItem(answer, i), "announced", 0, max[i], PyExc_BufferError, &out[i]) == 0;
  Py_XDECREF(answer);
  if (PyErr_Occurred() && dlpm_py__clear_unless_interrupt() != 0) return -1;
  return usable;
}

dlpm_status dlpm_py_check_announced(PyObject* obj, const dlpm_requirements* req) DLPM_NOEXCEPT {
  static const long long dtype_max[3] = {UINT8_MAX, UINT8_MAX, UINT16_MAX};
  static const long long device_max[2] = {INT32_MAX, INT32_MAX};
  const dlpm_py_names* nm;
  long long dtype[3], device[2];
  dlpm_py_type_facts facts;
  dlpm_status s;
  if (obj == NULL || req == NULL || PyCapsule_CheckExact(obj)) return DLPM_OK;
  /* Asked only where taking the tensor costs a capsule: through the exchange API the tensor
   * itself is cheaper to look at than two Python calls (measured: docs/performance-history.md). */
  facts = dlpm_py__type_facts(obj);
  if (!facts.announces || facts.api != NULL) return DLPM_OK;
  if ((nm = dlpm_py__names()) == NULL) {
    PyErr_Clear();
    return DLPM_OK;
  }
  {
    int asked = ask_tuple(obj, nm->dlpack_data_type, 3, dtype_max, dtype);
    if (asked == 1) asked = ask_tuple(obj, nm->dlpack_device, 2, device_max, device);
    if (asked < 0) return DLPM_E_PRODUCER_FAILED; /* an interrupt: raised */
    if (asked == 0) return DLPM_OK;               /* nothing usable announced: the tensor will say */
  }
  s = dlpm_check_announced((DLDataType){(uint8_t)dtype[0], (uint8_t)dtype[1], (uint16_t)dtype[2]},
                           (DLDevice){(DLDeviceType)device[0], (int32_t)device[1]}, req);
  if (s != DLPM_E_DTYPE_MISMATCH && s != DLPM_E_DEVICE_MISMATCH && s != DLPM_E_DEVICE_ID_MISMATCH)
    return DLPM_OK; /* met, or not judged here (an ill-formed dtype, unusable requirements): the import decides */
  return dlpm_py__fail(PyExc_TypeError, s, "%s, as the producer's __dlpack_data_type__() and __dlpack_device__() announce it",
                       dlpm_last_error());
}

/* A reading import of a tensor whose producer forbids writes (`reason`, producer_bits.c):
 * READ_ONLY from here on, with the reason, so that every re-export says so too. On failure
 * (out of memory) *t is still the caller's. */
static dlpm_status forbid_writes(DLManagedTensorVersioned** t, const char* reason) {
  DLManagedTensorVersioned* wrapped = NULL;
  const dlpm_status s = dlpm_managed_forbid_writes(*t, DLPM_READ_ONLY_PRODUCER_FORBIDS, reason, &wrapped);
  if (s != DLPM_OK) {
    dlpm_py_raise(s);
    return s;
  }
  *t = wrapped;
  return DLPM_OK;
}

/* The checked form obj's Tensor kept: this copy's own (dlpm_py__tensor_checked), else the one
 * another copy of the component publishes for obj's type (dlpm_py__kept_form: exchange_api.c
 * has checked the publication, and that it names that very type), when it has this facade's
 * layout; else NULL. It is never trusted beyond dlpm_check_prechecked's comparison: a
 * description that differs from the form's is checked in full; a form that names no tensor
 * is none. */
DLPM_PY_BODY const dlpm_checked_tensor* kept_checked(PyObject* obj) {
  const dlpm_checked_tensor* checked = dlpm_py__tensor_checked(obj);
  const dlpm_py_kept_form* kept;
  if (checked != NULL || (kept = dlpm_py__kept_form(obj)) == NULL) return checked;
  checked = kept->checked_of(obj);
  return checked != NULL && checked->version == DLPM_CHECKED_TENSOR_VERSION && checked->tensor != NULL ? checked : NULL;
}

int dlpm_py_keeps_checked_form(PyObject* obj) DLPM_NOEXCEPT {
  if (obj == NULL || PyCapsule_CheckExact(obj)) return 0;
  return kept_checked(obj) != NULL;
}

/* dlpm_check_managed's verdict on `t`, taken from `obj`: an export of a dlpack_mdspan.Tensor
 * is checked against what the Tensor's own check learned when it was made (its structure is
 * not validated again; an export that differs from the Tensor's view, a copy, is checked in
 * full by dlpm_check_prechecked). `obj` NULL: not asked (a capsule, or a type that publishes
 * no exchange table, as the Tensor's type does). */
DLPM_PY_BODY dlpm_status check_tensor(PyObject* obj, const DLManagedTensorVersioned* t, const dlpm_requirements* check,
                                      dlpm_checked_tensor* checked_out) {
  const dlpm_checked_tensor* checked = obj ? kept_checked(obj) : NULL;
  /* With checked_out (dlpm_py_options.checked; its version checked by check_options): the
   * kept form, copied, when the export describes what it was made of (checked against
   * `check` by what that check learned), else dlpm_check_tensor's, which checks `check` too.
   * Either way one check, and checked_out->tensor is the tensor checked. */
  if (checked_out != NULL) return dlpm_check_prechecked_tensor(&t->dl_tensor, t->flags, checked, check, checked_out);
  return checked ? dlpm_check_prechecked(&t->dl_tensor, t->flags, checked, check) : dlpm_check_managed(t, check);
}

/* Whether `t`, the export dlpm_py__tensor_export made from `own` (NULL: none), describes
 * own->tensor with its very arrays: dlpm_managed_new_checked makes such an export, and only
 * such a one, with own->tensor's shape pointer (its copies have arrays of their own). Then
 * dlpm_check_prechecked is given own->tensor itself, with t's flags (an import's
 * legacy_writable may have dropped READ_ONLY), and compares no field; not where the borrow
 * asks for the checked form of the tensor it lends (checked_out), which must name t. */
static int shares_checked_arrays(const dlpm_checked_tensor* own, const DLManagedTensorVersioned* t,
                                 const dlpm_checked_tensor* checked_out) {
  return own != NULL && checked_out == NULL && t->dl_tensor.shape == own->tensor->shape;
}

/* The check of `t`, the export made from `own` of obj (dlpm_py__tensor_export), against
 * `check`: by own->tensor itself where t shares its arrays (or by the last requirements it
 * met), else as check_tensor checks it. */
DLPM_PY_BODY dlpm_status checked_own_export(PyObject* obj, const dlpm_checked_tensor* own,
                                            const DLManagedTensorVersioned* t, const dlpm_requirements* check,
                                            dlpm_checked_tensor* checked_out) {
  return shares_checked_arrays(own, t, checked_out) ? own_view_meets(obj, own, t->flags, check)
                                                    : check_tensor(obj, t, check, checked_out);
}

/* The requirements' refusal `s` of the imported `t`, raised; a READ_ONLY one worded with why
 * the tensor is READ_ONLY where the facade knows (dlpm_check_managed, whose message it
 * rewrites: a legacy tensor's unknown writability and its remedy, legacy_writable, or what its
 * producer forbids), whichever check refused it. Only a refusal gets here. */
static void raise_check_refused(const DLManagedTensorVersioned* t, const dlpm_requirements* check, dlpm_status s) {
  if (s == DLPM_E_READ_ONLY) (void)dlpm_check_managed(t, check);
  dlpm_py__raise_refused(&t->dl_tensor, s);
}

/* The lend's rule for this copy's own Tensor behind its own table, `own` its form
 * (dlpm_py__own_export_source): that table lends own->tensor itself (the Tensor's view,
 * exchange_to_dltensor), so the view is own's bytes without the call or their comparison;
 * `own` when it was checked as a borrowed view reads it (no sub-byte padding: the view has
 * no flags), else NULL. */
static const dlpm_checked_tensor* lendable_own(const dlpm_checked_tensor* own) {
  return (own->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) == 0 ? own : NULL;
}

/* Whether a writer's borrow may take the borrowed path and be lent `own` (this copy's Tensor's
 * form, or NULL): a Tensor whose form has neither READ_ONLY nor sub-byte padding, so that its
 * export would carry no flag (tensor_export keeps those two alone) and the view's want of flags
 * loses nothing: checked with 0, it meets a writer's requirements exactly when the export
 * would. A READ_ONLY Tensor takes the owning path, whose refusal names the flag's cause (and
 * whose legacy_writable may drop it); so does a type with a semantic-bits rule. */
static int lends_to_writer(const dlpm_checked_tensor* own, dlpm_py_type_facts facts) {
  return own != NULL && facts.semantic_bits == 0 &&
         (own->flags & (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED)) == 0;
}

/* `kept` (a Tensor's kept form, or NULL) when `view` is its very description, byte for byte,
 * and lendable_own would lend it, so that it may be lent as the view's checked form
 * (dlpm_py_options.lent); else NULL. */
static const dlpm_checked_tensor* lendable(const dlpm_checked_tensor* kept, const DLTensor* view) {
  return kept != NULL && kept->tensor != NULL && lendable_own(kept) != NULL &&
                 memcmp(kept->tensor, view, sizeof *view) == 0
             ? kept
             : NULL;
}

/* check_tensor's counterpart for a borrowed view (no flags): dlpm_check's verdict. With lent_out
 * (dlpm_py_options.lent), the kept form itself when it is lendable: its own tensor checked
 * (the same bytes as the view), and its address handed back instead of a copy. `own`: this
 * copy's Tensor's form, whose tensor the view is (borrow_tensor), or NULL; where nothing is
 * lent or handed back, it is checked by the requirements it last met (own_view_meets). */
DLPM_PY_BODY dlpm_status check_view(PyObject* obj, const DLTensor* view, const dlpm_requirements* check,
                                    dlpm_checked_tensor* checked_out, const dlpm_checked_tensor** lent_out,
                                    const dlpm_checked_tensor* own) {
  const dlpm_checked_tensor* checked = own ? own : kept_checked(obj);
  const dlpm_checked_tensor* lent;
  if (lent_out != NULL && (lent = own ? lendable_own(own) : lendable(checked, view)) != NULL) {
    const dlpm_status s = own ? own_view_meets(obj, own, 0, check) : dlpm_check_prechecked(lent->tensor, 0, lent, check);
    if (s == DLPM_OK) *lent_out = lent;
    return s;
  }
  if (checked_out != NULL) return dlpm_check_prechecked_tensor(view, 0, checked, check, checked_out); /* as check_tensor's */
  if (own != NULL) return own_view_meets(obj, own, 0, check); /* dlpm_check_prechecked's verdict, as below */
  return checked ? dlpm_check_prechecked(view, 0, checked, check) : dlpm_check(view, check);
}

/* dlpm_py_options.checked at the end of a borrow: it describes out->dl_tensor when the check
 * wrote it of `checked_as` (the view or the owned tensor the borrow lends, not one a later
 * step replaced) with the flags the borrow reports; else it is withdrawn (tensor NULL). */
static void hand_back_checked(dlpm_checked_tensor* checked_out, const DLTensor* checked_as, dlpm_py_borrowed* out) {
  checked_out->tensor =
      checked_out->tensor == checked_as && checked_out->flags == out->flags ? &out->dl_tensor : NULL;
}

/* The import itself, the options checked: the tensor is validated against `check`, or not
 * at all when it is NULL (the caller validates). `announced`: the caller's requirements, which
 * a producer's announced dtype and device are checked against before any export
 * (dlpm_py_check_announced), validated or not; NULL: nothing asked, no announcement looked at.
 * `writes`: the caller writes through it. `words`: how a refusal of a semantic bit names the
 * option (semantic_bits_option(o); the caller's own where `o` is the defaults standing for
 * options that ask what they ask: asks_the_defaults).
 * `how` (o->provenance, or NULL where the caller knows it is), when not NULL, says which
 * way the tensor came. `capsule`,
 * when not NULL, receives the capsule __dlpack__ returned (a reference; else NULL), kept for
 * the caller to make the tensor's owner object from. `host_readable_only` (a borrow):
 * ready_on_host's wait is for memory the host reads alone (dlpm_py__captures), as
 * dlpm_py_options.ready_on_host says of a borrow; other memory is asked for as without it. */
static dlpm_status capture_readiness(const DLManagedTensorVersioned* t, const DLPackExchangeAPI* api, void* ordered_on,
                                     int ordered, dlpm_py_ready* ready);
static dlpm_status host_may_read(DLDevice d);
static dlpm_status note_stream_order(dlpm_py_provenance* how, DLDevice d, const DLPackExchangeAPI* api,
                                     const dlpm_py_options* o, int path, void* ordered_on, int ordered, int passed);

DLPM_PY_BODY dlpm_status import_tensor(PyObject* obj, const dlpm_py_options* o, const char* words, int writes,
                                       const dlpm_requirements* check, const dlpm_requirements* announced,
                                       DLManagedTensorVersioned** out,
                                       dlpm_py_provenance* how, PyObject** capsule, dlpm_py_ready* ready,
                                       dlpm_checked_tensor* checked_out, int host_readable_only) {
  DLManagedTensorVersioned* t = NULL;
  const DLPackExchangeAPI* api = NULL; /* the table the tensor came through */
  void* ordered_on = NULL;             /* the CUDA stream the producer ordered (__dlpack__ with a capture) */
  int ordered = 0;
  int passed = 0;             /* the caller's stream was passed to __dlpack__ */
  const char* forbids = NULL; /* the producer forbids writes (a reading import): why */
  unsigned bits = 0; /* the semantic-bits rule to apply; 0: none (a capsule, a type without) */
  int pre_1_0 = 0, via_dunder = 0, legacy = 0, path = DLPM_PY_PATH_CAPSULE;
  PyObject* publisher = NULL; /* obj, when its type publishes an exchange table (a Tensor's does) */
  const dlpm_checked_tensor* own = NULL; /* obj is a dlpack_mdspan.Tensor exported here from this form */
  dlpm_py_ready on_host = {NULL, {kDLCPU, 0}}; /* ready_on_host's capture, waited for at the end */
  dlpm_status s;
  if (ready == NULL && ready_on_host(o)) ready = &on_host;
  if (PyCapsule_CheckExact(obj)) {
    s = dlpm_py__take_capsule(obj, o, PyExc_TypeError, &t, &legacy);
  } else {
    const dlpm_py_type_facts facts = dlpm_py__type_facts(obj);
    if (announced != NULL && facts.announces && facts.api == NULL && (s = dlpm_py_check_announced(obj, announced)) != DLPM_OK)
      return s;
    if (!o->accept_semantic_bits) bits = facts.semantic_bits;
    if (facts.api != NULL) publisher = obj;
    if (facts.api != NULL && exchange_api_allowed(o)) {
      path = DLPM_PY_PATH_EXCHANGE_API;
      api = facts.api;
      /* Our own Tensor behind our own table: the export that table would make, made here
       * (no indirect call; our export's version is ours). */
      if ((own = dlpm_py__own_export_source(obj, facts.api)) != NULL)
        s = dlpm_py__tensor_export(obj, &t) == 0 ? DLPM_OK
                                                 : dlpm_py__exchange_entry_failed(obj, "managed_tensor_from_py_object_no_sync");
      else
        s = take_through_exchange_api(facts.api, obj, &t);
    } else {
      via_dunder = 1;
      path = DLPM_PY_PATH_DLPACK;
      s = dlpm_py__take_through_protocol(obj, o, &t, &pre_1_0, &legacy, capsule, ready ? &ordered_on : NULL, &ordered,
                                         &passed, host_readable_only, facts.memory);
    }
  }
  if (s != DLPM_OK) return s;
  if (how != NULL) {
    how->path = path;
    how->legacy = legacy;
    how->pre_1_0_call = pre_1_0;
    how->dlpack_version = t->version;
    if (legacy) how->dlpack_version.major = how->dlpack_version.minor = 0; /* it had none */
  }

  /* The tensor is ours: from here it goes to *out or is deleted. legacy_writable trusts a
   * tensor whose writability nobody knows, also after a hop through a Tensor that
   * re-exported a legacy import as versioned (the flag is then ours to drop). */
  if (o->legacy_writable && !legacy && (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0 &&
      dlpm_managed_read_only_cause(t, NULL) == DLPM_READ_ONLY_LEGACY_UNKNOWN)
    t->flags &= ~(uint64_t)DLPACK_FLAG_BITMASK_READ_ONLY;
  if ((bits == 0 ||
       (s = dlpm_py__check_semantic_bits(bits, obj, t->dl_tensor.dtype, writes, via_dunder, words,
                                         &forbids)) == DLPM_OK) &&
      (s = check_honoured(t, o, pre_1_0)) == DLPM_OK && check != NULL &&
      (s = checked_own_export(publisher, own, t, check, checked_out)) != DLPM_OK)
    raise_check_refused(t, check, s);
  if (s == DLPM_OK && forbids != NULL) s = forbid_writes(&t, forbids);
  if (s == DLPM_OK && ready != NULL && dlpm_py__captures(t->dl_tensor.device.device_type, host_readable_only))
    s = capture_readiness(t, api, ordered_on, ordered, ready);
  if (s == DLPM_OK && how != NULL) s = note_stream_order(how, t->dl_tensor.device, api, o, path, ordered_on, ordered, passed);
  if (on_host.event != NULL) { /* ready_on_host: the producer's work is done when the call returns */
    if (s == DLPM_OK && dlpm_py__event_synchronize(on_host.device, on_host.event) != 0) s = DLPM_PY_E_DEVICE_RUNTIME;
    dlpm_py__event_release(on_host.device, on_host.event);
  }
  if (s == DLPM_OK && ready_on_host(o) && dlpm_py__is_host_stream_memory(t->dl_tensor.device.device_type))
    s = host_may_read(t->dl_tensor.device);

  if (s != DLPM_OK) {
    release_keeping_error(t, capsule != NULL ? *capsule : NULL); /* "used_...": nothing left to delete */
    if (capsule != NULL) *capsule = NULL;
    return s;
  }
  *out = t;
  return DLPM_OK;
}

/* ---- stream order (dlpm_py_tensor_import) ---------------------------------------------------- */

/* A host function's view (ready_on_host) of memory the host reads: not managed memory of a
 * device without concurrent managed access (Jetson, pre-Pascal GPUs), which the host may not
 * read while any kernel runs, whatever the producer's own work. DLPM_OK, or an exception set:
 * TypeError (the memory does not fit a host view: a binding tries the next overload), or
 * BufferError from the runtime. */
static dlpm_status host_may_read(DLDevice d) {
  int reads = 1;
  if (dlpm_py__host_reads_while_kernels_run(d, &reads) != 0) return DLPM_PY_E_DEVICE_RUNTIME;
  if (reads) return DLPM_OK;
  return dlpm_py__fail(PyExc_TypeError, DLPM_E_DEVICE_MISMATCH,
                       "a host view of CUDA managed memory on device %d, which lacks concurrent managed access: the "
                       "host may not read it while kernels run (copy it to the CPU instead: dl_device=(1, 0))",
                       (int)d.device_id);
}

/* When a CUDA or ROCm tensor's data is ready: an event recorded on the producer's current work stream
 * (through the exchange API, "no sync": its table says which stream) or on the stream the
 * producer ordered (__dlpack__). A bare capsule says nothing: no event. Called for memory whose
 * readiness the import captures (dlpm_py__captures: the caller's test, inline, so that a host
 * tensor pays for no call). */
static dlpm_status capture_readiness(const DLManagedTensorVersioned* t, const DLPackExchangeAPI* api, void* ordered_on,
                                     int ordered, dlpm_py_ready* ready) {
  const DLDevice d = t->dl_tensor.device;
  void* stream = ordered_on;
  if (api != NULL) {
    stream = NULL;
    if (api->current_work_stream(d.device_type, d.device_id, &stream) != 0)
      return dlpm_py__producer_failed("the exchange API's current_work_stream");
  } else if (!ordered) {
    return DLPM_OK;
  }
  if (dlpm_py__record(d, stream, &ready->event) != 0) return DLPM_PY_E_DEVICE_RUNTIME;
  ready->device = d;
  return DLPM_OK;
}

/* dlpm_py_provenance.stream_order and ready_stream (version 2), for a tensor on device `d`
 * that came by `path`: what the producer was asked for, or its table's current stream. */
static dlpm_status note_stream_order(dlpm_py_provenance* how, DLDevice d, const DLPackExchangeAPI* api,
                                     const dlpm_py_options* o, int path, void* ordered_on, int ordered, int passed) {
  void* stream = NULL;
  if (how->version < 2) return DLPM_OK;
  how->ready_stream = NULL;
  how->stream_order = DLPM_PY_ORDER_UNKNOWN;
  if (!dlpm_py__device_has_streams(d.device_type)) {
    how->stream_order = DLPM_PY_ORDER_NONE;
    return DLPM_OK;
  }
  if (path == DLPM_PY_PATH_EXCHANGE_API) {
    if (api->current_work_stream == NULL) return DLPM_OK; /* a table that does not say: unknown */
    if (api->current_work_stream(d.device_type, d.device_id, &stream) != 0)
      return dlpm_py__producer_failed("the exchange API's current_work_stream");
    /* NULL is CUDA's and ROCm's default stream; on another device (a SYCL queue, Metal) it
     * names none, and nothing was ordered: unknown */
    if (stream == NULL && !dlpm_py__is_stream_memory(d.device_type)) return DLPM_OK;
  } else if (ordered) { /* dlpm_py_tensor_import's capture: the stream the producer was asked to order */
    stream = ordered_on;
  } else if (!(path == DLPM_PY_PATH_DLPACK && passed && o->stream_object == NULL &&
               dlpm_py__stream_from_value(d.device_type, o->stream, &stream) == 1)) {
    return DLPM_OK; /* unknown */
  }
  how->stream_order = DLPM_PY_ORDER_STREAM;
  how->ready_stream = stream;
  return DLPM_OK;
}

/* The options only a borrow reads (keep_alive, checked, lent), refused by the calls that
 * hand over a tensor: `function`'s refusal of the first one set, or DLPM_OK. */
static dlpm_status refuse_borrow_fields(const dlpm_py_options* o, const char* function) {
  const char* const field = o->keep_alive ? "keep_alive" : checked_form_out(o) ? "checked" : lent_form_out(o) ? "lent" : NULL;
  return field == NULL ? DLPM_OK
                       : dlpm_py__fail(PyExc_ValueError, DLPM_E_INVALID_ARGUMENT,
                                       "%s: dlpm_py_options.%s is for dlpm_py_borrow (%s)", function, field,
                                       o->keep_alive ? "an import hands over the tensor itself"
                                                     : "an imported tensor is checked by dlpm_check_tensor on it");
}

dlpm_status dlpm_py__import_ready(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                                  DLManagedTensorVersioned** out, dlpm_py_ready* ready) {
  const dlpm_py_options* o;
  dlpm_status s;
  ready->event = NULL;
  ready->device.device_type = kDLCPU;
  ready->device.device_id = 0;
  if ((s = entry_arguments("dlpm_py_tensor_import", obj, out, opts, &o)) != DLPM_OK ||
      (s = refuse_borrow_fields(o, "dlpm_py_tensor_import")) != DLPM_OK)
    return s;
  return import_tensor(obj, o, semantic_bits_option(o), caller_writes(req, o), checks_for(req, o), req, out, o->provenance, NULL, ready, NULL, 0);
}

/* dlpm_py_import with NULL options (the usual call), or with options that ask what the
 * defaults ask (asks_the_defaults, validating, nothing lent) but may name the caller's option
 * in a refusal of a semantic bit (`bits_option`: the Rust crate's ""), its arguments usable:
 * the body with the defaults as a constant, so that every option test folds away. */
static __attribute__((noinline)) dlpm_status import_with_defaults(PyObject* obj, const dlpm_requirements* req,
                                                                  const char* bits_option,
                                                                  DLManagedTensorVersioned** out) {
  return import_tensor(obj, &default_options, bits_option, caller_writes(req, &default_options),
                       checks_for(req, &default_options), req, out, NULL, NULL, NULL, NULL, 0);
}

/* The body for usable arguments: the defaults' for NULL options and options that ask what
 * they ask, else the caller's. */
static dlpm_status import_with(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                               DLManagedTensorVersioned** out);

static __attribute__((noinline)) dlpm_status import_with_options(PyObject* obj, const dlpm_requirements* req,
                                                                 const dlpm_py_options* opts,
                                                                 DLManagedTensorVersioned** out);

/* The same for obj of this copy's Tensor type, with NULL options or options that ask what the
 * defaults ask (asks_the_defaults, validating, nothing lent): when its type publishes the Tensor type's own
 * table and no semantic-bits rule, the body's own-table path alone (the export, then its
 * check; with the defaults nothing else applies: no announcement is asked of a type with a
 * table, nothing honoured, no legacy flag dropped, no semantic bit refused, so no refusal
 * worded), in a function whose frame is only that path's; else the body, with `opts`. */
static __attribute__((noinline)) dlpm_status import_own_tensor(PyObject* obj, const dlpm_requirements* req,
                                                               const dlpm_py_options* opts,
                                                               DLManagedTensorVersioned** out) {
  const dlpm_py_type_facts facts = dlpm_py__type_facts(obj);
  const dlpm_checked_tensor* own;
  DLManagedTensorVersioned* t = NULL;
  dlpm_status s;
  if (facts.semantic_bits != 0 || (own = dlpm_py__own_export_source(obj, facts.api)) == NULL)
    return import_with(obj, req, opts, out);
  if (dlpm_py__tensor_export(obj, &t) != 0)
    return dlpm_py__exchange_entry_failed(obj, "managed_tensor_from_py_object_no_sync");
  if ((s = checked_own_export(obj, own, t, checks_for(req, &default_options), NULL)) != DLPM_OK) {
    raise_check_refused(t, checks_for(req, &default_options), s);
    release_keeping_error(t, NULL);
    return s;
  }
  *out = t;
  return DLPM_OK;
}

/* dlpm_py_import with the caller's options, or with unusable arguments (opts NULL only then:
 * entry_arguments refuses them). */
static __attribute__((noinline)) dlpm_status import_with_options(PyObject* obj, const dlpm_requirements* req,
                                                                 const dlpm_py_options* opts,
                                                                 DLManagedTensorVersioned** out) {
  const dlpm_py_options* o;
  dlpm_status s;
  if ((s = entry_arguments("dlpm_py_import", obj, out, opts, &o)) != DLPM_OK ||
      (s = refuse_borrow_fields(o, "dlpm_py_import")) != DLPM_OK)
    return s;
  return import_tensor(obj, opts, semantic_bits_option(opts), caller_writes(req, opts), checks_for(req, opts), req, out, opts->provenance, NULL,
                       NULL, NULL, 0);
}

/* Whether the caller's options, of this version, ask what the defaults ask, but for
 * `validate` and `lent` (whether the borrow validates, and lends its checked form: the caller
 * tests them): every other field the defaults' but semantic_bits_option, which only words a
 * refusal (a binding's name for its option, as the Rust crate's ""). Such options are
 * usable. Compared field by field (a
 * struct's padding is not its value); an option that differs, whether or not it would change
 * the call, takes the general path. */
/* A field that a later version adds must join the comparison below, or options that set it
 * would take the defaults' path and have it ignored. */
_Static_assert(DLPM_PY_OPTIONS_VERSION == 5, "asks_the_defaults compares version 5's fields");
static int asks_the_defaults(const dlpm_py_options* o) {
  const dlpm_py_options* d = &default_options;
  /* The version first (it says which fields there are), then the fields callers set most,
   * so that their options fail at once: keep_alive (the casters'), use_exchange_api (an import
   * through __dlpack__) and writable. */
  return o->version == d->version && o->keep_alive == d->keep_alive && o->use_exchange_api == d->use_exchange_api &&
         o->writable == d->writable && o->legacy_writable == d->legacy_writable && o->copy == d->copy &&
         o->has_dl_device == d->has_dl_device && o->dl_device.device_type == d->dl_device.device_type &&
         o->dl_device.device_id == d->dl_device.device_id && o->has_stream == d->has_stream &&
         o->stream == d->stream && o->stream_object == d->stream_object &&
         o->accept_semantic_bits == d->accept_semantic_bits && o->provenance == d->provenance &&
         o->checked == d->checked && o->ready_on_host == d->ready_on_host;
}

/* Whether usable options ask an import what the defaults ask (validating, nothing lent): the
 * defaults' body serves them, with their semantic_bits_option. */
static int import_asks_the_defaults(const dlpm_py_options* opts) {
  return asks_the_defaults(opts) && opts->validate && opts->lent == NULL;
}

static dlpm_status import_with(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                               DLManagedTensorVersioned** out) {
  if (opts == NULL) return import_with_defaults(obj, req, NULL, out);
  if (import_asks_the_defaults(opts)) return import_with_defaults(obj, req, semantic_bits_option(opts), out);
  return import_with_options(obj, req, opts, out);
}

/* The entry points expand their body twice: for NULL options (the usual call) with the
 * defaults as a constant, so that every option test folds away, and for the caller's. Each
 * expansion is a function of its own, and so is a Tensor's usual call (NULL options, or
 * options that ask what the defaults ask), so that this entry makes no frame: its own work is
 * the choice. */
dlpm_status dlpm_py_import(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                           DLManagedTensorVersioned** out) DLPM_NOEXCEPT {
  if (obj == NULL || out == NULL) return import_with_options(obj, req, opts, out); /* ValueError */
  if ((PyObject*)Py_TYPE(obj) == dlpm_py__tensor_type_object && (opts == NULL || import_asks_the_defaults(opts)))
    return import_own_tensor(obj, req, opts, out);
  return import_with(obj, req, opts, out);
}

/* ---- borrowed views ----------------------------------------------------------------------- */

/* Whether a borrow of the Tensor whose form is `kept` (this copy's own, or the one another
 * copy keeps; NULL: not known) takes the owning path before its table is asked to lend: its
 * elements are padded sub-byte ones (a borrowed DLTensor has no flags to say so, and the
 * table refuses to lend them: exchange_to_dltensor), or a host function (`o`'s
 * ready_on_host) reads its memory, managed memory, after the producer's pending work (the
 * owning import captures that work; a lend first would ask the producer's wait twice). */
static int owned_before_lending(const dlpm_checked_tensor* kept, const dlpm_py_options* o) {
  if (kept == NULL) return 0;
  return (kept->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0 ||
         (ready_on_host(o) && dlpm_py__is_host_stream_memory(kept->tensor->device.device_type));
}

/* The borrow itself, the options checked; `words`, `check`, `announced` and `how` as for
 * import_tensor. A borrowed DLTensor has no flags, so READ_ONLY is unknown: a writer takes
 * the owning path, but for a writable Tensor of this copy whose form it may be lent
 * (lends_to_writer): the form knows the flags. With `keep` (o->keep_alive), an owned tensor
 * goes to an owner object, out->keep_alive, not to out->owner. */
DLPM_PY_BODY dlpm_status borrow_tensor(PyObject* obj, const dlpm_py_options* o, const char* words, int writable,
                                       const dlpm_requirements* check, const dlpm_requirements* announced, int keep,
                                       dlpm_py_provenance* how, dlpm_checked_tensor* checked_out,
                                       const dlpm_checked_tensor** lent_out, dlpm_py_borrowed* out) {
  DLManagedTensorVersioned* t = NULL;
  PyObject* capsule = NULL;
  dlpm_status s;
  if (checked_out != NULL) checked_out->tensor = NULL; /* none handed back until the end */
  if (lent_out != NULL) *lent_out = NULL;               /* none lent but by check_view */
  if ((!writable || lent_out != NULL) && !PyCapsule_CheckExact(obj) && exchange_api_allowed(o)) {
    const dlpm_py_type_facts facts = dlpm_py__type_facts(obj);
    /* A validating borrow of this copy's Tensor behind its own table: the view that table
     * lends is own->tensor itself (exchange_to_dltensor), read in place (no call; its bytes
     * need no comparison with the form's), and checked by the requirements it last met */
    const dlpm_checked_tensor* own = check != NULL && (PyObject*)Py_TYPE(obj) == dlpm_py__tensor_type_object
                                         ? dlpm_py__own_export_source(obj, facts.api)
                                         : NULL;
    const dlpm_checked_tensor* kept = own != NULL ? own : kept_checked(obj);
    if (facts.api != NULL && facts.api->dltensor_from_py_object_no_sync != NULL &&
        (!writable || (lent_out != NULL && lends_to_writer(own, facts))) && !owned_before_lending(kept, o)) {
      DLTensor lent_view;
      const DLTensor* view = &lent_view; /* what the table lends */
      const char* forbids = NULL;
      if (own != NULL) {
        view = own->tensor;
      } else if (facts.api->dltensor_from_py_object_no_sync(obj, &lent_view) != 0) {
        /* BufferError from a Tensor whose form is not known here (another copy's that keeps
         * none): what a DLTensor cannot say (a table refuses padded sub-byte elements so) the
         * owned export may: asked for that instead. Not from a Tensor whose form is known
         * (never padded here: owned_before_lending), whose refusal is its own: its wait,
         * asked again by the export, would be asked twice. */
        if (!PyErr_ExceptionMatches(PyExc_BufferError) || kept != NULL ||
            (PyObject*)Py_TYPE(obj) == dlpm_py__tensor_type_object)
          return dlpm_py__exchange_entry_failed(obj, "dltensor_from_py_object_no_sync");
        PyErr_Clear();
        goto owning;
      }
      if (ready_on_host(o) && dlpm_py__is_host_stream_memory(view->device.device_type))
        goto owning; /* a view the host reads (managed memory) of a type whose form is not known (its
                      * table's no_sync lend waited for nothing): an import captures the work to wait for */
      if (facts.semantic_bits != 0 && !o->accept_semantic_bits &&
          (s = dlpm_py__check_semantic_bits(facts.semantic_bits, obj, view->dtype, 0, 0, words,
                                            &forbids)) != DLPM_OK)
        return s;
      if (check != NULL && (s = check_view(obj, view, check, checked_out, lent_out, own)) != DLPM_OK) {
        dlpm_py__raise_refused(view, s);
        return s;
      }
      out->dl_tensor = *view;
      if (how != NULL) {
        how->path = DLPM_PY_PATH_EXCHANGE_API;
        how->legacy = how->pre_1_0_call = 0;
        how->dlpack_version = facts.api->header.version;
        if ((s = note_stream_order(how, view->device, facts.api, o, DLPM_PY_PATH_EXCHANGE_API, NULL, 0, 0)) != DLPM_OK) {
          memset(out, 0, sizeof *out);
          return s;
        }
      }
      if (forbids != NULL) { /* no owner to carry the reason: a borrow is not re-exported */
        out->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
        if (lent_out != NULL) *lent_out = NULL; /* the lent form was checked without flags */
      }
      if (checked_out != NULL) hand_back_checked(checked_out, view, out);
      return DLPM_OK;
    }
  }
owning:
  if ((s = import_tensor(obj, o, words, writable, check, announced, &t, how, keep ? &capsule : NULL, NULL, checked_out, 1)) !=
      DLPM_OK)
    return s;
  out->dl_tensor = t->dl_tensor;
  out->flags = t->flags;
  if (checked_out != NULL) hand_back_checked(checked_out, &t->dl_tensor, out);
  if (!keep) {
    out->owner = t;
    return DLPM_OK;
  }
  if ((out->keep_alive = capsule ? dlpm_py__owner_from_capsule(capsule, t) : dlpm_py_owner_new(t)) == NULL) {
    memset(out, 0, sizeof *out); /* t is deleted */
    return DLPM_E_OUT_OF_MEMORY;
  }
  return DLPM_OK;
}

dlpm_status dlpm_py_borrow(PyObject* obj, const dlpm_requirements* req, const dlpm_py_options* opts,
                           dlpm_py_borrowed* out) DLPM_NOEXCEPT {
  const dlpm_py_options* o;
  dlpm_status s;
  if (out != NULL) memset(out, 0, sizeof *out);
  /* A validating reader whose options ask what the defaults ask and for the lent form (the
   * Rust crate's PyTensor of a Tensor): the body expanded a fourth time with the defaults as
   * constants, so that it pays for no option test, the caller's wording of a refusal and
   * `lent` its only variables (nothing is lent before a failure without provenance: no
   * tail). */
  if (opts != NULL && lent_form_out(opts) != NULL && asks_the_defaults(opts) && opts->validate && obj != NULL &&
      out != NULL && !caller_writes(req, &default_options))
    return borrow_tensor(obj, &default_options, opts->semantic_bits_option, 0, checks_for(req, &default_options), req,
                         0, NULL, NULL, lent_form_out(opts), out);
  /* A borrow whose options ask what the defaults ask but leave validation to the caller (the
   * Rust crate's PyTensor and PyTensorMut of a producer that keeps no checked form: their view
   * makes the one check): the body expanded a fifth time, with those options as constants, so
   * that it pays for no option test (nothing is lent or handed back unvalidated). */
  if (opts != NULL && !opts->validate && asks_the_defaults(opts) && lent_form_out(opts) == NULL && obj != NULL &&
      out != NULL)
    return borrow_tensor(obj, &unvalidated_options, opts->semantic_bits_option, caller_writes(req, &unvalidated_options),
                         NULL, req, 0, NULL, NULL, NULL, out);
  s = entry_arguments("dlpm_py_borrow", obj, out, opts, &o);
  if (s != DLPM_OK) return s;
  if (opts == NULL)
    return borrow_tensor(obj, &default_options, NULL, caller_writes(req, &default_options),
                         checks_for(req, &default_options),
                         req, 0, NULL, NULL, NULL, out);
  /* The casters' borrow (python_casters.hpp), its body expanded a third time with what it
   * asks as constants, so that it pays for no test of an option it does not use. */
  if (!opts->validate && opts->keep_alive && opts->provenance == NULL)
    return borrow_tensor(obj, opts, semantic_bits_option(opts), caller_writes(req, opts), NULL, req, 1, NULL, NULL, NULL,
                         out);
  s = borrow_tensor(obj, opts, semantic_bits_option(opts), caller_writes(req, opts), checks_for(req, opts), req, opts->keep_alive, opts->provenance,
                    checked_form_out(opts), lent_form_out(opts), out);
  if (s != DLPM_OK && checked_form_out(opts) != NULL) checked_form_out(opts)->tensor = NULL;
  if (s != DLPM_OK && lent_form_out(opts) != NULL) *lent_form_out(opts) = NULL;
  return s;
}

void dlpm_py_borrow_end(dlpm_py_borrowed* b) DLPM_NOEXCEPT {
  if (b == NULL) return;
  if (b->owner || b->keep_alive) release_keeping_error(b->owner, b->keep_alive);
  memset(b, 0, sizeof *b);
}
