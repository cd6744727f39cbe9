// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/python.hpp: typed C++ on top of dlpack_mdspan_python.h (header form).
//
//   auto v = dlpack_mdspan::python::try_import<std::mdspan<const float, std::dextents<int64_t, 2>>>(obj);
//   if (!v) return nullptr;                      // a Python exception is set
//   use(v->view());                              // v owns the tensor; the view is valid while v lives
//
//   bool ok = dlpack_mdspan::python::with_view<std::mdspan<float, std::dextents<int64_t, 1>>>(obj,
//       [](auto x) { x[0] = 1; });               // borrowed for the call only (the fast path)
//
//   static const DLPackExchangeAPI* api = dlpack_mdspan::python::exchange_api<&to_managed>();
//
// Every function needs the GIL. Failures set a Python exception: the component's for the
// import itself, TypeError with the library's message when the tensor does not fit M.
//
// Module form: define DLPM_USE_MODULE and this header ends with `import dlpack_mdspan;`
// instead of including the library's headers, so include it after every other header.
#ifndef DLPACK_MDSPAN_PYTHON_HPP
#define DLPACK_MDSPAN_PYTHON_HPP

#include <dlpack_mdspan_python.h>

#include <cstdint>
#include <exception>
#include <mdspan>
#include <new>
#include <type_traits>
#include <utility>

#ifdef DLPM_USE_MODULE
import dlpack_mdspan;
#else
#include <dlpack_mdspan/dlpack_mdspan.hpp>
#endif

// Macros do not cross a module boundary.
#ifndef DLPM_LIFETIMEBOUND
#if defined(__clang__)
#define DLPM_LIFETIMEBOUND [[clang::lifetimebound]]
#else
#define DLPM_LIFETIMEBOUND
#endif
#endif

namespace dlpack_mdspan::python {

/// An mdspan together with the managed tensor that keeps its memory alive (nanobind's
/// ndarray in one struct): move it, keep it beyond the call, destroy it without the GIL
/// only if the producer's deleter allows that (this library's own deleters do).
template <class M>
class held_view {
 public:
  /// Pairs `view` with the tensor whose memory it views.
  held_view(managed_tensor owner, M view) noexcept : owner_(std::move(owner)), view_(view) {}
  /// The typed view; valid while this object lives.
  [[nodiscard]] const M& view() const& noexcept DLPM_LIFETIMEBOUND { return view_; }
  const M& view() const&& = delete;  // the view would outlive its owner
  /// The managed tensor that keeps the memory alive.
  [[nodiscard]] const managed_tensor& owner() const noexcept { return owner_; }
  /// Gives up the tensor (for dlpm_py_tensor_new, say); the view must not be used after.
  [[nodiscard]] managed_tensor release_owner() && noexcept { return std::move(owner_); }

 private:
  managed_tensor owner_;
  M view_;
};

namespace detail {

// A mutable element type writes through the view: the component then takes the path whose
// READ_ONLY flag is known, and try_view refuses a READ_ONLY tensor.
template <class M>
inline constexpr std::int32_t writes_v = std::is_const_v<typename M::element_type> ? 0 : 1;

inline unexpected_error python_failed(dlpm_status status) noexcept {
  return unexpected_error(error::format(static_cast<errc>(status), "the Python import failed; its exception is set"));
}

inline void raise_type_error(const error& e) noexcept { PyErr_SetString(PyExc_TypeError, e.what().c_str()); }

// A refused export or copy (the device hooks of python_cuda.hpp and python_sycl.hpp):
// BufferError with the library's message; -1, as the hooks return it.
inline int raise_buffer_error(const error& e) noexcept {
  PyErr_SetString(PyExc_BufferError, e.what().c_str());
  return -1;
}

// The options of an import that the library's rules for M validate, not the component:
// `opts` (NULL: the defaults) with validate = 0 and writable as M writes. Made once for the
// defaults; copied for a caller's options.
template <bool Writes>
inline const dlpm_py_options& unvalidated_defaults() noexcept {
  static const dlpm_py_options options = [] {
    dlpm_py_options o;
    (void)dlpm_py_options_init(&o, DLPM_PY_OPTIONS_VERSION);
    o.validate = 0;
    o.writable = Writes;
    return o;
  }();
  return options;
}
inline dlpm_py_options unvalidated(const dlpm_py_options& opts, bool writes) noexcept {
  dlpm_py_options o = opts;
  o.validate = 0;
  o.writable = writes;
  return o;
}

// A view's refusal `e` of `t` (NULL: a borrowed tensor, which carries no flags), a tensor the
// component imported: a mutable view of a READ_ONLY tensor says why it is READ_ONLY, as the
// component's facade recorded it (dlpm_managed_read_only_cause: a legacy capsule's unknown
// writability, what a producer forbids). The header's read_only_cause_of knows only the
// tensors this copy of it made.
[[gnu::cold]] inline error view_refusal(const error& e, const DLManagedTensorVersioned* t) noexcept {
  if (e.code() != errc::read_only || t == nullptr) return e;
  const char* reason = nullptr;
  const auto cause = static_cast<read_only_cause>(dlpm_managed_read_only_cause(t, &reason));
  return read_only_view_error(cause, reason);
}

// `obj` borrowed into *b (which the caller ends) and viewed as an M, validated once: by the
// library's import rules for M, over the tensor's flags. A failure has its exception set.
// Inlined into with_view, so that the view reaches it in registers, not through a returned
// expected<M> in memory.
template <class M>
[[gnu::always_inline]] inline result<M> borrow_view(PyObject* obj, const dlpm_py_options* opts, dlpm_py_borrowed* b) noexcept {
  dlpm_status s;
  if (opts == nullptr) {
    s = dlpm_py_borrow(obj, nullptr, &unvalidated_defaults<writes_v<M> != 0>(), b);
  } else {
    const dlpm_py_options o = unvalidated(*opts, writes_v<M> != 0);
    s = dlpm_py_borrow(obj, nullptr, &o, b);
  }
  if (s != DLPM_OK) return python_failed(s);
  auto view = dlpack_mdspan::try_view<M>(b->dl_tensor, b->flags);
  if (!view) raise_type_error(view_refusal(view.error(), b->owner));
  return view;
}

// An owned import of `obj` for the library's rules for M to validate: writable when M
// writes, so that the component refuses a tensor that requires grad. `announced`: what a
// producer's announced dtype and device are checked against before any export (the
// import's requirements; not validated: the options do not validate), or NULL.
template <class M>
inline dlpm_status import_owned(PyObject* obj, const dlpm_py_options* opts, const dlpm_requirements* announced,
                                DLManagedTensorVersioned** out) noexcept {
  if (opts == nullptr) return dlpm_py_import(obj, announced, &unvalidated_defaults<writes_v<M> != 0>(), out);
  const dlpm_py_options o = unvalidated(*opts, writes_v<M> != 0);
  return dlpm_py_import(obj, announced, &o, out);
}

// try_import, and the casters' held_view parameter, which also has the import check what
// the producer announces against M's dtype (python_casters.hpp's load_held).
template <class M>
result<held_view<M>> import_held(PyObject* obj, const dlpm_py_options* opts, const dlpm_requirements* announced) noexcept {
  DLManagedTensorVersioned* raw = nullptr;
  if (const dlpm_status s = detail::import_owned<M>(obj, opts, announced, &raw); s != DLPM_OK)
    return detail::python_failed(s);
  auto owner = managed_tensor::try_adopt(raw);
  if (!owner) {
    detail::raise_type_error(owner.error());
    return unexpected_error(owner.error());
  }
  auto view = owner->template try_view<M>();
  if (!view) {
    const error refusal = view_refusal(view.error(), owner->get());
    // Let go first: the producer's deleter may run Python code, which must not meet our error.
    dlpm_py_managed_delete(owner->release());
    detail::raise_type_error(refusal);
    return unexpected_error(refusal);
  }
  return held_view<M>(std::move(*owner), *view);
}

}  // namespace detail

/// Imports `obj` (any DLPack producer, capsule or exchange-API type) as an M, validated by
/// the library's import rules for exactly M. `opts` may be NULL (defaults).
template <class M>
[[nodiscard]] result<held_view<M>> try_import(PyObject* obj, const dlpm_py_options* opts = nullptr) noexcept {
  return detail::import_held<M>(obj, opts, nullptr);
}

/// Calls f(M) with `obj` borrowed for the call (DLPack's dltensor_from_py_object_no_sync
/// where the type publishes it: no allocation), then lets go, also when f throws. Returns
/// false, with a Python exception set, when obj cannot be viewed as an M.
template <class M, class F>
[[nodiscard]] bool with_view(PyObject* obj, F&& f, const dlpm_py_options* opts = nullptr) {
  dlpm_py_borrowed borrowed{};
  struct end_borrow {
    dlpm_py_borrowed* b;
    ~end_borrow() { dlpm_py_borrow_end(b); }
  } guard{&borrowed};
  auto view = detail::borrow_view<M>(obj, opts, &borrowed);
  if (!view) return false;
  std::forward<F>(f)(*view);
  return true;
}

namespace detail {

// The exchange API's entries are C function pointers: each trampoline is a distinct
// noexcept function that turns a C++ exception into the table's error convention.
inline int report(const char* kind, const char* what) noexcept {
  PyErr_Format(PyExc_RuntimeError, "%s: %s", kind, what);
  return -1;
}

// A function of yours that failed without saying why: BufferError naming the entry.
inline int failed_silently(const char* entry) noexcept {
  PyErr_Format(PyExc_BufferError, "%s: your export failed without setting an exception", entry);
  return -1;
}

template <auto ToManaged>
int managed_trampoline(void* py_object, DLManagedTensorVersioned** out) noexcept {
  try {
    *out = ToManaged(static_cast<PyObject*>(py_object));
    return *out != nullptr ? 0 : (PyErr_Occurred() ? -1 : failed_silently("managed_tensor_from_py_object_no_sync"));
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    return -1;
  } catch (const std::exception& e) {
    return report("C++ exception", e.what());
  } catch (...) {
    return report("C++ exception", "unknown");
  }
}

template <auto ToDLTensor>
int dltensor_trampoline(void* py_object, DLTensor* out) noexcept {
  try {
    return ToDLTensor(static_cast<PyObject*>(py_object), out) ? 0
                                                              : (PyErr_Occurred() ? -1 : failed_silently("dltensor_from_py_object_no_sync"));
  } catch (const std::exception& e) {
    return report("C++ exception", e.what());
  } catch (...) {
    return report("C++ exception", "unknown");
  }
}

}  // namespace detail

/// A complete, process-lifetime DLPackExchangeAPI for a type of yours, from
///   DLManagedTensorVersioned* ToManaged(PyObject*)       (required; may throw)
///   bool ToDLTensor(PyObject*, DLTensor*)                (optional; may throw)
/// with this library's defaults for the rest (dlpm_py_exchange_api_init). Publish it with
/// dlpm_py_publish_exchange_api(type, table). Returns NULL with a Python exception set if
/// the table cannot be made.
template <auto ToManaged, auto ToDLTensor = nullptr>
[[nodiscard]] const DLPackExchangeAPI* exchange_api() noexcept {
  static DLPackExchangeAPI table;
  static const bool ready = [] {
    dlpm_py_exchange_callbacks callbacks{};
    callbacks.version = DLPM_PY_EXCHANGE_CALLBACKS_VERSION;
    callbacks.managed_tensor_from_py_object = &detail::managed_trampoline<ToManaged>;
    if constexpr (!std::is_null_pointer_v<decltype(ToDLTensor)>)
      callbacks.dltensor_from_py_object = &detail::dltensor_trampoline<ToDLTensor>;
    return dlpm_py_exchange_api_init(&table, &callbacks) == DLPM_OK;
  }();
  return ready ? &table : nullptr;
}

}  // namespace dlpack_mdspan::python

#endif  // DLPACK_MDSPAN_PYTHON_HPP
