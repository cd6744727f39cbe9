// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/python_casters.hpp: what nanobind.hpp and pybind11.hpp share, written once.
//
// The parameter and return types a binding may use (all in dlpack_mdspan::python):
//   std::mdspan<T, E, L, A>    a view for the call; the tensor is released when the call ends
//   legacy_writable<M>         the same M, for which a legacy ("dltensor") tensor arrives
//                              writable (PyTorch 1.x allows writes; NumPy 1.x marks its own)
//   stream_ordered<M>          the same M, and the stream its memory is ready on (`ready`)
//   held_view<M>               the view plus the tensor that keeps it alive (python.hpp)
//   managed_tensor             the tensor itself, owned
//   framework_tensor<F>        a return value handed to Python as F's array type
// and the loading rules (binding-neutral; each binding header adds its own cast calls):
//   * a refusal without conversion allowed (the first overload pass, or .noconvert()) lets
//     the next overload try;
//   * with conversion allowed, an object that is a DLPack tensor but does not fit raises
//     TypeError with the library's message (prefixed by the parameter's signature name);
//     anything else lets the next overload try.
#ifndef DLPACK_MDSPAN_PYTHON_CASTERS_HPP
#define DLPACK_MDSPAN_PYTHON_CASTERS_HPP

#include <cstddef>
#include <cstdint>
#include <optional>

#include <dlpack_mdspan/python.hpp>  // last: in the module form it ends with the import

namespace dlpack_mdspan::python {

/// A parameter type: M, except that a legacy (unversioned) tensor arrives writable instead
/// of READ_ONLY (dlpm_py_options::legacy_writable for this parameter). It is an M.
template <class M>
struct legacy_writable : M {
  using mdspan_type = M;  ///< the mdspan type it is
  /// Wraps a view (implicit: it is an M).
  legacy_writable(const M& m) noexcept : M(m) {}  // NOLINT(google-explicit-constructor)
};

/// Where the memory of an imported tensor is ready (dlpm_py_provenance's stream_order and
/// ready_stream, the component's answer).
struct ready_stream {
  /// DLPM_PY_ORDER_NONE (memory no stream orders: the CPU's, pinned), DLPM_PY_ORDER_STREAM
  /// (work queued on `stream`, or on a stream made to wait for it, sees the producer's
  /// writes), DLPM_PY_ORDER_UNKNOWN (nobody said: see dlpm_py_provenance).
  std::int32_t order = DLPM_PY_ORDER_UNKNOWN;
  /// With DLPM_PY_ORDER_STREAM: the stream (a cudaStream_t for CUDA memory; nullptr is the
  /// device's default stream).
  void* stream = nullptr;
};

/// A parameter type: M, and the stream its memory is ready on (`ready`). Through a type's
/// exchange API (PyTorch, our Tensor) that is the producer's current stream; through
/// __dlpack__, the stream caster_options() name (has_stream, stream), which the producer
/// is then asked to order. Launch the function's work on `ready.stream`, or make its own
/// stream wait for it. It is an M.
template <class M>
struct stream_ordered : M {
  using mdspan_type = M;  ///< the mdspan type it is
  /// A view and where it is ready.
  stream_ordered(const M& m, ready_stream r) noexcept : M(m), ready(r) {}
  ready_stream ready;  ///< where the view's memory is ready
};

/// The options every caster of this extension module passes to dlpm_py_import. Change them
/// in the module's init function only (they are read without a lock). Each extension has
/// its own copy: the component is linked into it with hidden symbols. The refusal of a
/// semantic bit names this function's accept_semantic_bits as the way to accept it
/// (semantic_bits_option), the option an extension's author sets.
inline dlpm_py_options& caster_options() noexcept {
  static dlpm_py_options options = [] {
    dlpm_py_options o;
    (void)dlpm_py_options_init(&o, DLPM_PY_OPTIONS_VERSION);
    o.semantic_bits_option = "dlpack_mdspan::python::caster_options().accept_semantic_bits = 1 in the extension";
    return o;
  }();
  return options;
}

/// The Python array type a framework_tensor becomes.
enum class framework {
  dlpack_mdspan, ///< a dlpack_mdspan.Tensor (what managed_tensor and held_view return)
  numpy,         ///< numpy.from_dlpack(tensor)
  torch,         ///< torch.utils.dlpack.from_dlpack(tensor)
  jax,           ///< jax.numpy.from_dlpack(tensor)
};

/// A return type: an owned tensor that Python receives as F's own array (zero-copy;
/// the framework's array keeps the tensor alive). Made by as<F>(...); a failed export
/// is carried along and raised as BufferError on return.
template <framework F>
struct framework_tensor {
  result<managed_tensor> tensor;  ///< the tensor, or why it could not be made
};

/// `return as<framework::numpy>(std::move(t));` for a managed_tensor (a held_view below).
template <framework F>
[[nodiscard]] framework_tensor<F> as(managed_tensor t) noexcept {
  return framework_tensor<F>{std::move(t)};
}

namespace detail {

template <class M>
struct unwrap_parameter {
  using type = M;
  static constexpr bool legacy_writable = false;
  static constexpr bool stream_ordered = false;
};
template <class M>
struct unwrap_parameter<legacy_writable<M>> {
  using type = M;
  static constexpr bool legacy_writable = true;
  static constexpr bool stream_ordered = false;
};
template <class M>
struct unwrap_parameter<stream_ordered<M>> {
  using type = M;
  static constexpr bool legacy_writable = false;
  static constexpr bool stream_ordered = true;
};

// ---- the signature name, a compile-time string -------------------------------------------

// A fixed buffer filled in a constant expression, then cut to size by exact_label.
struct label_text {
  char data[160] = {};
  std::size_t size = 0;
  constexpr void put(const char* s) noexcept {
    while (*s && size + 1 < sizeof data) data[size++] = *s++;
  }
  constexpr void put(std::uint64_t v) noexcept {
    char digits[24] = {};
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0 && size + 1 < sizeof data) data[size++] = digits[--n];
  }
};

// mdspan[dtype=float32, shape=(*, 3), order='C', device=kDLCPU, writable]: what the
// parameter accepts, in nanobind's ndarray vocabulary.
template <class M>
constexpr label_text make_label() noexcept {
  using T = typename M::element_type;
  using L = typename M::layout_type;
  label_text t;
  t.put("mdspan[dtype=");
  t.put(dtype_name(dtype_v<std::remove_cv_t<T>>).c_str());
  t.put(", shape=(");
  for (std::size_t r = 0; r < M::rank(); ++r) {
    if (r != 0) t.put(", ");
    if (M::static_extent(r) == std::dynamic_extent) t.put("*");
    else t.put(static_cast<std::uint64_t>(M::static_extent(r)));
  }
  if (M::rank() == 1) t.put(",");
  t.put(")");
  if constexpr (std::is_same_v<L, std::layout_right>) t.put(", order='C'");
  else if constexpr (std::is_same_v<L, std::layout_left>) t.put(", order='F'");
  else if constexpr (std::is_same_v<L, layout_stride_relaxed>) t.put(", strides=any");
  t.put(", device=");
  t.put(device_type_name(device_traits<typename M::accessor_type>::device_type));
  if constexpr (!std::is_const_v<T>) t.put(", writable");
  t.put("]");
  return t;
}

template <class M, class = std::make_index_sequence<make_label<M>().size>>
struct exact_label;
template <class M, std::size_t... I>
struct exact_label<M, std::index_sequence<I...>> {
  static constexpr label_text text = make_label<M>();
  static constexpr char value[] = {text.data[I]..., '\0'};
};

/// The signature name of a parameter of type M, as a char array (for const_name).
template <class M>
inline constexpr const auto& mdspan_label = exact_label<M>::value;

/// The signature names of managed_tensor parameters and of framework_tensor results.
inline constexpr char managed_label[] = "DLPackTensor";
template <framework F>
inline constexpr char framework_label[] = "dlpack_mdspan.Tensor";
template <>
inline constexpr char framework_label<framework::numpy>[] = "numpy.ndarray";
template <>
inline constexpr char framework_label<framework::torch>[] = "torch.Tensor";
template <>
inline constexpr char framework_label<framework::jax>[] = "jax.Array";

// ---- loading ----------------------------------------------------------------------------

enum class load_outcome { loaded, next_overload, raise };

inline bool is_dlpack_object(PyObject* obj) noexcept {
  if (PyCapsule_CheckExact(obj) || dlpm_py_exchange_api_of(obj) != nullptr) return true;
  const int has = PyObject_HasAttrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)), "__dlpack__");
  return has == 1;
}

// The raised exception, taken (a new reference; NULL when none), its traceback kept on it;
// and the same raised again (the reference stolen): a load that sets an exception aside.
inline PyObject* take_raised_exception() noexcept {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *type, *exc, *traceback;
  PyErr_Fetch(&type, &exc, &traceback);
  PyErr_NormalizeException(&type, &exc, &traceback);
  if (exc && traceback) PyException_SetTraceback(exc, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  return exc;
#endif
}
inline void restore_raised_exception(PyObject* exc) noexcept {
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(exc);
#else
  PyErr_Restore(Py_NewRef(reinterpret_cast<PyObject*>(Py_TYPE(exc))), exc, PyException_GetTraceback(exc));
#endif
}

// A failed load has a Python exception set. Either it is cleared (the next overload
// tries) or it stays, reworded as "<what the parameter accepts>: <why not>" when it is the
// library's TypeError (a producer's own exception passes unchanged). An interrupt, an
// exception that is no Exception (KeyboardInterrupt, SystemExit: the user's, which the
// component never clears), always stays, whatever `may_raise` says: the next overload would
// ask the producer again and the interrupt would be lost.
[[gnu::cold, gnu::noinline]] inline load_outcome refuse(PyObject* src, bool may_raise, const char* label) noexcept {
  PyObject* exc = take_raised_exception();  // the probe below must not see (or clear) it
  const bool interrupted = exc != nullptr && !PyErr_GivenExceptionMatches(exc, PyExc_Exception);
  const bool raise = interrupted || (may_raise && is_dlpack_object(src));
  PyErr_Clear();
  PyObject* text = raise && exc && PyErr_GivenExceptionMatches(exc, PyExc_TypeError) ? PyObject_Str(exc) : nullptr;
  if (text) {
    PyErr_Format(PyExc_TypeError, "%s: %U", label, text);
    Py_DECREF(text);
    Py_XDECREF(exc);
  } else if (raise && exc) {  // the producer's own exception, unchanged (its traceback too)
    restore_raised_exception(exc);
  } else if (raise) {  // a failure without an exception: not expected, but never raise nothing
    PyErr_Format(PyExc_TypeError, "%s: the import failed", label);
  } else {
    Py_XDECREF(exc);
  }
  return raise ? load_outcome::raise : load_outcome::next_overload;
}

// caster_options() with legacy tensors arriving writable, made once: the hot path copies
// nothing.
inline const dlpm_py_options& legacy_writable_options() noexcept {
  static const dlpm_py_options options = [] {
    dlpm_py_options o = caster_options();
    o.legacy_writable = 1;
    return o;
  }();
  return options;
}

// Whether the function reads M's memory on the host: its accessor takes the CPU's memory
// (and so the host-accessible kinds, CUDA managed memory among them). True where accepts()
// cannot be evaluated at compile time: the host then waits where it need not, never reads
// early.
template <class M>
constexpr bool reads_on_host() {
  using traits = device_traits<typename M::accessor_type>;
  if constexpr (requires { typename std::bool_constant<traits::accepts(kDLCPU)>; })
    return traits::accepts(kDLCPU);
  else
    return true;
}

// What a view caster borrows with, made once per kind: caster_options() (legacy tensors
// writable or not), not validated (try_view applies M's rules), writable as M writes, and
// the owner handed back as an object for the binding to keep (keep_alive). HostReads: the
// function reads the memory on the host with nothing to order it after the producer's work
// (a plain host view, not a stream_ordered one): memory a stream orders (CUDA managed
// memory) is ready on the host when the function runs (dlpm_py_options.ready_on_host).
template <bool LegacyWritable, bool Writes, bool HostReads>
inline const dlpm_py_options& view_options() noexcept {
  static const dlpm_py_options options = [] {
    dlpm_py_options o = unvalidated(LegacyWritable ? legacy_writable_options() : caster_options(), Writes);
    o.keep_alive = 1;
    o.ready_on_host = HostReads;
    return o;
  }();
  return options;
}

// What a held_view or managed_tensor parameter imports with: caster_options() (legacy tensors
// writable or not), the producer's work on memory a stream orders done before the function
// gets the tensor (dlpm_py_options.ready_on_host), since nothing it keeps or returns carries
// that order; Writes: imported writable (a tensor that requires grad refused).
template <bool LegacyWritable, bool Writes>
inline const dlpm_py_options& kept_options() noexcept {
  static const dlpm_py_options options = [] {
    dlpm_py_options o = LegacyWritable ? legacy_writable_options() : caster_options();
    o.ready_on_host = 1;
    if (Writes) o.writable = 1;
    return o;
  }();
  return options;
}

// A bare capsule gives its tensor away once: taking it renames the capsule, and a tensor
// refused after that is released. So the view caster looks at the tensor before it takes
// it, and a tensor M refuses stays in the capsule for the next overload (or the next
// alternative of a std::variant). True, with the TypeError set, when M refuses it; false
// for anything else, the component's to judge (dlpm_py_capsule_peek: not a capsule, no
// DLPack one, used, another DLPack major version).
template <class M>
[[gnu::noinline]] bool peeked_capsule_refused(PyObject* src, const dlpm_py_options& options) noexcept {
  DLTensor tensor;
  std::uint64_t flags = 0;
  if (dlpm_py_capsule_peek(src, &options, &tensor, &flags) == 0) return false;
  const auto view = dlpack_mdspan::try_view<M>(tensor, flags);
  if (view) return false;
  // A legacy capsule's READ_ONLY is the import's, for want of a flag: worded as its cause.
  raise_type_error(view.error().code() == errc::read_only && PyCapsule_IsValid(src, "dltensor")
                       ? read_only_view_error(read_only_cause::legacy_unknown)
                       : view.error());
  return true;
}
template <class M>
bool capsule_refused(PyObject* src, const dlpm_py_options& options) noexcept {
  return PyCapsule_CheckExact(src) && peeked_capsule_refused<M>(src, options);  // the usual argument: one test, no call
}

// What a producer's announcement, before any export, is checked against
// (dlpm_py_check_announced: the array API's __dlpack_data_type__): M's dtype, so that a
// dtype M cannot view is refused, and the next overload tried, without the producer making
// a capsule. NULL where M's element type has no DLPack dtype.
template <class M>
const dlpm_requirements* announced_requirements() noexcept {
  using T = std::remove_const_t<typename M::element_type>;
  if constexpr (!has_dtype<T>) {
    return nullptr;
  } else {
    static const dlpm_requirements wanted = [] {
      dlpm_requirements r;
      (void)dlpm_requirements_init(&r, DLPM_REQUIREMENTS_VERSION);
      r.check_dtype = 1;
      r.dtype = dtype_v<T>;
      return r;
    }();
    return &wanted;
  }
}

/// An M for the duration of one call, and what keeps its memory alive: the object it was
/// borrowed from, through the exchange API, else an owner object (through __dlpack__, the
/// producer's own capsule: no allocation; dlpm_py_borrow's keep_alive). The binding keeps
/// that until its call ends (nanobind's cleanup list, pybind11's loader_life_support),
/// not this caster: a caster inside a container's caster (std::optional, std::vector,
/// std::variant) is destroyed, or reused, before the function runs. A caster destroyed or
/// reloaded while still holding it lets go, which needs the GIL: both binding libraries
/// destroy argument casters after re-acquiring it.
template <class M>
class call_view {
 public:
  call_view() noexcept = default;
  call_view(call_view&& other) noexcept : keep_alive_(std::exchange(other.keep_alive_, nullptr)), view_(other.view_) {}
  call_view& operator=(call_view&&) = delete;
  ~call_view() { Py_XDECREF(keep_alive_); }

  /// LegacyWritable: a legacy tensor arrives writable (legacy_writable<M>). StreamOrdered:
  /// also learn where the memory is ready (ready()), through the provenance (the component's
  /// slower, general borrow). Template arguments, so that a plain view's load makes no test
  /// of either.
  template <bool LegacyWritable, bool StreamOrdered>
  load_outcome load(PyObject* src, bool may_raise) noexcept {
    Py_CLEAR(keep_alive_);
    const dlpm_py_options& options = view_options<LegacyWritable, writes_v<M> != 0, reads_on_host<M>() && !StreamOrdered>();
    if (capsule_refused<M>(src, options)) return refuse(src, may_raise, mdspan_label<M>);
    dlpm_py_borrowed b;
    const dlpm_py_options* asked = &options;
    [[maybe_unused]] dlpm_py_options ordered;
    [[maybe_unused]] dlpm_py_provenance how;
    if constexpr (StreamOrdered) {
      ordered = options;
      how = dlpm_py_provenance{};
      how.version = DLPM_PY_PROVENANCE_VERSION;
      ordered.provenance = &how;
      asked = &ordered;
    }
    // The options do not validate (try_view does, below): the requirements are M's dtype,
    // for the borrow's check of what the producer announces alone.
    if (dlpm_py_borrow(src, announced_requirements<M>(), asked, &b) != DLPM_OK) return refuse(src, may_raise, mdspan_label<M>);
    if constexpr (StreamOrdered) ready_ = ready_stream{how.stream_order, how.ready_stream};  // else left unknown, as ready() says
    keep_alive_ = b.keep_alive;  // taken: no borrow to end (out->owner is NULL with keep_alive)
    const auto view = dlpack_mdspan::try_view<M>(b.dl_tensor, b.flags);
    if (!view) {
      const error refusal = view_refusal(view.error(), dlpm_py_owner_get(keep_alive_));  // before the owner goes
      Py_CLEAR(keep_alive_);  // first: a deleter may run Python code, which must not meet our exception
      raise_type_error(refusal);
      return refuse(src, may_raise, mdspan_label<M>);
    }
    view_.emplace(*view);
    return load_outcome::loaded;
  }
  /// Precondition: load returned loaded.
  [[nodiscard]] const M& view() const noexcept { return *view_; }
  /// Where the view is ready, when load was asked (else DLPM_PY_ORDER_UNKNOWN).
  [[nodiscard]] ready_stream ready() const noexcept { return ready_; }
  /// The parameter P (M, legacy_writable<M> or stream_ordered<M>) the binding passes.
  template <class P>
  [[nodiscard]] P parameter() const noexcept {
    if constexpr (unwrap_parameter<P>::stream_ordered) return P(*view_, ready_);
    else return P(*view_);
  }
  /// What keeps the view's memory alive, for the binding to keep until its call ends, as a
  /// new reference: the owner object, else `src`, the object the view was borrowed from (a
  /// container's element need not outlive the call: a sequence's item made on access, an
  /// element a callback removes).
  [[nodiscard]] PyObject* release_keep_alive(PyObject* src) noexcept {
    PyObject* owner = std::exchange(keep_alive_, nullptr);
    return owner != nullptr ? owner : Py_NewRef(src);
  }

 private:
  PyObject* keep_alive_ = nullptr;
  std::optional<M> view_;
  ready_stream ready_;
};

/// A held_view<M> or managed_tensor parameter: the tensor is the function's to keep.
template <class M>
load_outcome load_held(PyObject* src, bool may_raise, bool legacy_writable, std::optional<held_view<M>>& out) noexcept {
  const dlpm_py_options& options = legacy_writable ? kept_options<true, false>() : kept_options<false, false>();
  if (capsule_refused<M>(src, options)) return refuse(src, may_raise, mdspan_label<M>);
  // The import checks what the producer announces against M's dtype, before any export (as
  // the view caster's borrow does), with the type's facts it looks up anyway.
  auto held = import_held<M>(src, &options, announced_requirements<M>());
  if (!held) return refuse(src, may_raise, mdspan_label<M>);
  out.emplace(std::move(*held));
  return load_outcome::loaded;
}

// A managed_tensor parameter may be written through (it carries its flags, not a const
// element type): it is imported writable, so that a tensor that requires grad is refused,
// and validated as caster_options() say (the component's rule; by default: validated).
inline load_outcome load_managed(PyObject* src, bool may_raise, managed_tensor& out) noexcept {
  const dlpm_py_options& options = kept_options<false, true>();
  DLManagedTensorVersioned* raw = nullptr;
  if (dlpm_py_import(src, nullptr, &options, &raw) != DLPM_OK) return refuse(src, may_raise, managed_label);
  auto owned = managed_tensor::try_adopt(raw);  // the component checked the version: cannot fail
  if (!owned) {
    raise_type_error(owned.error());
    return refuse(src, may_raise, managed_label);
  }
  out = std::move(*owned);
  return load_outcome::loaded;
}

// ---- returning --------------------------------------------------------------------------

/// A new reference to a dlpack_mdspan.Tensor owning `t` (None for an empty one), or NULL
/// with an exception set.
inline PyObject* to_python(managed_tensor&& t) noexcept {
  if (t.empty()) Py_RETURN_NONE;
  return dlpm_py_tensor_new(t.release());
}

inline PyObject* to_python(result<managed_tensor>&& t) noexcept {
  if (!t) {
    PyErr_SetString(PyExc_BufferError, t.error().what().c_str());
    return nullptr;
  }
  return to_python(std::move(*t));
}

/// The view, not the whole tensor behind it: a new tensor describes view() (one
/// allocation) and owns the old one; on the owner's device.
template <class M>
result<managed_tensor> view_tensor(held_view<M>&& h) noexcept {
  if (h.owner().empty()) return managed_tensor();
  const M view = h.view();
  const DLDevice device = h.owner().tensor().device;
  // A view of a tensor that is READ_ONLY for a reason of its own (a legacy tensor's unknown
  // writability, a producer that forbids writes) is READ_ONLY for that reason, not because
  // its element type is const: the facade, whose import set the cause, reads and sets it.
  const char* reason = nullptr;
  const std::int32_t cause = dlpm_managed_read_only_cause(h.owner().get(), &reason);
  auto made = try_to_managed_tensor(view, std::move(h).release_owner(), device);  // owns the reason now
  if (!made || (cause != DLPM_READ_ONLY_LEGACY_UNKNOWN && cause != DLPM_READ_ONLY_PRODUCER_FORBIDS)) return made;
  DLManagedTensorVersioned* marked = nullptr;
  if (const dlpm_status s = dlpm_managed_forbid_writes(made->get(), cause, reason, &marked); s != DLPM_OK)
    return unexpected_error(error::format(errc::out_of_memory, "%s", dlpm_last_error()));
  (void)made->release();  // now inside `marked`
  return managed_tensor::try_adopt(marked);  // the facade made it: our major version
}

template <class M>
PyObject* to_python(held_view<M>&& h) noexcept {
  return to_python(view_tensor(std::move(h)));
}

template <framework F>
PyObject* to_python(framework_tensor<F>&& f) noexcept {
  PyObject* tensor = to_python(std::move(f.tensor));
  if (F == framework::dlpack_mdspan || tensor == nullptr || tensor == Py_None) return tensor;
  const char* module_name = F == framework::numpy ? "numpy" : F == framework::torch ? "torch.utils.dlpack" : "jax.numpy";
  PyObject* module = PyImport_ImportModule(module_name);
  PyObject* result = nullptr;
  if (module) {
    PyObject* from_dlpack = PyObject_GetAttrString(module, "from_dlpack");
    if (from_dlpack) {
      result = PyObject_CallOneArg(from_dlpack, tensor);
      Py_DECREF(from_dlpack);
    }
    Py_DECREF(module);
  }
  Py_DECREF(tensor);
  return result;
}

template <class>
inline constexpr bool always_false = false;

// What both bindings' view casters say when a function returns a bare std::mdspan (U):
// instantiated only then, so the message is the compile error.
template <class U>
void refuse_returned_view() noexcept {
  static_assert(always_false<U>,
                "a std::mdspan cannot be returned to Python: nothing would own its memory. Return "
                "dlpack_mdspan::python::held_view<M>, a dlpack_mdspan::managed_tensor, or "
                "dlpack_mdspan::python::as<framework::numpy>(...)");
}

}  // namespace detail

/// A held_view returned as F's array, showing exactly its view.
template <framework F, class M>
[[nodiscard]] framework_tensor<F> as(held_view<M> h) noexcept {
  return framework_tensor<F>{detail::view_tensor(std::move(h))};
}

}  // namespace dlpack_mdspan::python

#endif  // DLPACK_MDSPAN_PYTHON_CASTERS_HPP
