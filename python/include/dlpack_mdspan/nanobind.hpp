// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/nanobind.hpp: std::mdspan as a parameter (and owned tensors as parameters
// and return values) in nanobind bindings. Type casters only: nothing to register.
//
//   #include <nanobind/nanobind.h>
//   #include <dlpack_mdspan/nanobind.hpp>   // last (the module form ends with the import)
//
//   NB_MODULE(ext, m) {
//     m.def("scale", [](std::mdspan<float, std::dextents<int64_t, 2>> a, float k) {
//       for (int64_t i = 0; i < a.extent(0); ++i)
//         for (int64_t j = 0; j < a.extent(1); ++j) a[i, j] *= k;
//     });
//   }
//
// Any DLPack producer is accepted (NumPy, PyTorch, JAX, TensorFlow, CuPy, a capsule),
// through the type's exchange API where it publishes one, validated by the library's
// import rules for exactly that mdspan type. The rules for refusals, legacy tensors and
// return values are in python_casters.hpp and docs/python-interop.md.
//
// Parameters such as std::optional<M>, std::vector<M> and std::variant<M, ...> (nested in
// each other too) work: the tensor behind each view is kept until the call returns
// (python_casters.hpp, call_view). A view (or a held_view<M>, a managed_tensor) refused inside
// one of them fails the argument (the next overload, else nanobind's "incompatible function
// arguments") instead of raising the library's reason; a producer's interrupt
// (KeyboardInterrupt, SystemExit) stops the container and is raised, itself, when the
// outermost one returns. As parameters, other containers of views and owned values
// (std::array, std::list, std::deque, std::pair, std::tuple, std::map, std::unordered_map) do
// not compile: nanobind loads their elements in a noexcept function, where a raise would end
// the process; take a std::vector. Owned values still return in them.
//
// nb::cast<std::mdspan<...>>(obj) is refused (the view would outlive the caster that owns
// its tensor): cast to dlpack_mdspan::python::held_view<M> instead.
#ifndef DLPACK_MDSPAN_NANOBIND_HPP
#define DLPACK_MDSPAN_NANOBIND_HPP

#include <nanobind/nanobind.h>

#include <array>
#include <deque>
#include <list>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <dlpack_mdspan/python_casters.hpp>  // last: in the module form it ends with the import

namespace nanobind::detail {

// How many of this header's containers (below) are loading on this thread: nanobind calls a
// container's element casters in a noexcept function, where a raise would end the process
// (std::terminate), so an element loaded inside one never raises.
inline thread_local unsigned dlpm_containers_loading = 0;
// The interrupt an element's load met and could not raise (dlpm_loaded), owned: the
// containers stop loading, so that no other element or alternative asks a producer again, and
// the outermost one raises it (its own instance: a SystemExit keeps its code).
inline thread_local PyObject* dlpm_pending_interrupt = nullptr;
// One load of a container. The outermost one (no container of this header around it on this
// thread: a bound call that a producer's own code makes starts afresh, dlpm_load_scope) owns
// the pending interrupt: it starts with none (an outer call's is set aside) and raises the one
// its elements met (finish). It is never an element of nanobind's own containers: those of
// the types that raise do not compile as parameters (below).
struct dlpm_container_loading {
  const bool outermost = dlpm_containers_loading++ == 0;
  PyObject* const set_aside = outermost ? std::exchange(dlpm_pending_interrupt, nullptr) : nullptr;
  dlpm_container_loading() = default;
  ~dlpm_container_loading() {
    --dlpm_containers_loading;
    if (outermost) Py_XDECREF(std::exchange(dlpm_pending_interrupt, set_aside));
  }
  dlpm_container_loading(const dlpm_container_loading&) = delete;
  dlpm_container_loading& operator=(const dlpm_container_loading&) = delete;
  // The container's outcome: `loaded` unless an element met an interrupt, which the outermost
  // container raises (nanobind's dispatcher and nb::cast catch the throw; nb::try_cast, which
  // is noexcept and passes `manual` as nb::cast does, gets it re-armed, dlpm_rearm).
  bool finish(bool loaded, uint32_t flags);
};

// An interrupt that cannot be raised where it was met (a manual cast, which may be
// nb::try_cast): re-armed for this thread (PyThreadState_SetAsyncExc: its type, raised at the
// interpreter's next check; a SystemExit's code is not carried). Steals `interrupt`.
[[gnu::cold]] inline void dlpm_rearm(PyObject* interrupt) noexcept {
  PyThreadState_SetAsyncExc(PyThread_get_thread_ident(), reinterpret_cast<PyObject*>(Py_TYPE(interrupt)));
  Py_DECREF(interrupt);
}

inline bool dlpm_container_loading::finish(bool loaded, uint32_t flags) {
  if (dlpm_pending_interrupt == nullptr) [[likely]]
    return loaded;
  if (!outermost) return false;  // the outermost container raises it
  PyObject* const interrupt = std::exchange(dlpm_pending_interrupt, nullptr);
  if (flags & cast_flags::manual) {
    dlpm_rearm(interrupt);
    return false;
  }
  dlpack_mdspan::python::detail::restore_raised_exception(interrupt);
  throw python_error();
}

// One load of this header's casters: whether it loads an element of one of the containers
// above (it must not raise then), read when it starts; the count is zero while it loads, so a
// bound call that the producer's own code makes meanwhile (in its __dlpack__) raises as usual.
struct dlpm_load_scope {
  const unsigned outer = std::exchange(dlpm_containers_loading, 0u);
  dlpm_load_scope() = default;
  ~dlpm_load_scope() { dlpm_containers_loading = outer; }
  dlpm_load_scope(const dlpm_load_scope&) = delete;
  dlpm_load_scope& operator=(const dlpm_load_scope&) = delete;
};

// The casters' rules, once: a refusal may raise only where conversion is allowed and the
// dispatcher called (nb::cast and nb::try_cast pass `manual`, and try_cast is noexcept),
// but an interrupt (KeyboardInterrupt, SystemExit: refuse() always raises those) in every
// pass; a raise throws the exception that refuse() left set, unless the load may not throw:
// then it is cleared and the argument fails. An interrupt met by an element of a container
// is kept for the outermost container to raise (dlpm_pending_interrupt); one met by a manual
// cast is re-armed (dlpm_rearm). The tests are on the refusal's path only.
inline bool dlpm_may_raise(uint32_t flags) noexcept {
  return (flags & cast_flags::convert) && !(flags & cast_flags::manual);
}
inline bool dlpm_loaded(dlpack_mdspan::python::detail::load_outcome outcome, const dlpm_load_scope& scope, uint32_t flags) {
  if (outcome == dlpack_mdspan::python::detail::load_outcome::raise) [[unlikely]] {
    if (scope.outer == 0 && !(flags & cast_flags::manual)) throw python_error();
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
      PyErr_Clear();
    } else if (PyObject* const interrupt = dlpack_mdspan::python::detail::take_raised_exception(); scope.outer == 0) {
      dlpm_rearm(interrupt);
    } else if (dlpm_pending_interrupt == nullptr) {
      dlpm_pending_interrupt = interrupt;
    } else {
      Py_DECREF(interrupt);  // the first one is raised
    }
    return false;
  }
  return outcome == dlpack_mdspan::python::detail::load_outcome::loaded;
}

// std::mdspan<T, E, L, A>, legacy_writable<M> and stream_ordered<M>: a view for the call.
template <class P>
struct dlpm_view_caster {
  using Parameter = dlpack_mdspan::python::detail::unwrap_parameter<P>;
  using M = typename Parameter::type;
  using Value = P;
  static constexpr auto Name = const_name(dlpack_mdspan::python::detail::mdspan_label<M>);
  template <typename T_>
  using Cast = Value;
  template <typename T_>
  static constexpr bool can_cast() { return true; }

  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) {
    if (flags & cast_flags::manual) return false;  // nb::cast: the view would dangle
    const dlpm_load_scope scope;
    if (!dlpm_loaded(loaded.template load<Parameter::legacy_writable, Parameter::stream_ordered>(src.ptr(), dlpm_may_raise(flags)),
                     scope, flags))
      return false;
    // Kept until the call returns (a container's caster destroys or reuses this one first).
    if (cleanup != nullptr) cleanup->append(loaded.release_keep_alive(src.ptr()));
    return true;
  }
  explicit operator Value() { return loaded.template parameter<Value>(); }

  template <class U>
  static handle from_cpp(U&&, rv_policy, cleanup_list*) noexcept {
    dlpack_mdspan::python::detail::refuse_returned_view<U>();
    return {};
  }

  dlpack_mdspan::python::detail::call_view<M> loaded;
};

template <class T, class E, class L, class A>
struct type_caster<std::mdspan<T, E, L, A>> : dlpm_view_caster<std::mdspan<T, E, L, A>> {};
template <class M>
struct type_caster<dlpack_mdspan::python::legacy_writable<M>> : dlpm_view_caster<dlpack_mdspan::python::legacy_writable<M>> {};
template <class M>
struct type_caster<dlpack_mdspan::python::stream_ordered<M>> : dlpm_view_caster<dlpack_mdspan::python::stream_ordered<M>> {};

// ---- containers of views and owned values ----------------------------------------------------

template <class T>
inline constexpr bool dlpm_is_view = false;
template <class T, class E, class L, class A>
inline constexpr bool dlpm_is_view<std::mdspan<T, E, L, A>> = true;
template <class M>
inline constexpr bool dlpm_is_view<dlpack_mdspan::python::legacy_writable<M>> = true;
template <class M>
inline constexpr bool dlpm_is_view<dlpack_mdspan::python::stream_ordered<M>> = true;
// The types whose casters raise a refusal: the views and the owned values.
template <class T>
inline constexpr bool dlpm_raises = dlpm_is_view<T>;
template <class M>
inline constexpr bool dlpm_raises<dlpack_mdspan::python::held_view<M>> = true;
template <>
inline constexpr bool dlpm_raises<dlpack_mdspan::managed_tensor> = true;
// const elements alike (std::optional<const M>: nanobind's own caster would hold them)
template <class T>
inline constexpr bool dlpm_is_view<const T> = dlpm_is_view<T>;
template <class T>
inline constexpr bool dlpm_raises<const T> = dlpm_raises<T>;
// and this header's containers of them, nested in each other
template <class T, class Alloc>
inline constexpr bool dlpm_raises<std::vector<T, Alloc>> = dlpm_raises<T>;
template <class T>
inline constexpr bool dlpm_raises<std::optional<T>> = dlpm_raises<T>;
template <class... Ts>
inline constexpr bool dlpm_raises<std::variant<Ts...>> = (dlpm_raises<Ts> || ...);

// A value the caster makes and hands over, by pointer, reference or move (an owned tensor, a
// container): held in an optional, since not every such value has a default constructor (a
// view of static extents, a managed tensor).
template <class Value_>
struct dlpm_held_value {
  using Value = Value_;
  template <typename T_>
  using Cast = movable_cast_t<T_>;
  template <typename T_>
  static constexpr bool can_cast() { return true; }
  explicit operator Value*() { return &*value; }
  explicit operator Value&() { return *value; }
  explicit operator Value&&() { return std::move(*value); }
  std::optional<Value> value;
};

// What a container of them holds and hands to the function (constrained specializations:
// they take the place of nanobind's own casters of these containers, included or not).
template <class Value_>
struct dlpm_container_caster : dlpm_held_value<Value_> {
  // An element, loaded as nanobind's containers load one, into `out`.
  template <class T, class Out>
  static bool element(handle src, uint32_t flags, cleanup_list* cleanup, Out&& out) {
    make_caster<T> caster;
    if (!caster.from_python(src, flags_for_local_caster<T>(flags), cleanup) || !caster.template can_cast<T>()) return false;
    out(caster.operator cast_t<T>());
    return true;
  }
  // An element returned: a view cannot be (nothing would own its memory), an owned value
  // becomes a dlpack_mdspan.Tensor.
  template <class T, class U>
  static handle element_to_python(U&& v, rv_policy policy, cleanup_list* cleanup) noexcept {
    if constexpr (dlpm_is_view<T>) {
      dlpack_mdspan::python::detail::refuse_returned_view<U>();
      return {};
    } else {
      return make_caster<T>::from_cpp(std::forward<U>(v), policy, cleanup);
    }
  }
};

// std::vector<T>: any sequence but str and bytes.
template <class T, class Alloc>
  requires dlpm_raises<T>
struct type_caster<std::vector<T, Alloc>> : dlpm_container_caster<std::vector<T, Alloc>> {
  static constexpr auto Name = const_name("collections.abc.Sequence[") + make_caster<T>::Name + const_name("]");
  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) {
    auto& out = this->value.emplace();
    if (PyUnicode_Check(src.ptr()) || PyBytes_Check(src.ptr()) || !PySequence_Check(src.ptr())) return false;
    PyObject* items;
    {  // the sequence's own Python code (__len__, __getitem__) runs as no element's load
      const dlpm_load_scope outside;
      items = PySequence_Fast(src.ptr(), "");  // the list or tuple itself, else a list of the items
      if (items == nullptr) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))  // an interrupt: raised, or kept as an element's
          return dlpm_loaded(dlpack_mdspan::python::detail::load_outcome::raise, outside, flags);
        PyErr_Clear();
        return false;
      }
    }
    dlpm_container_loading loading;
    bool loaded = true;
    for (Py_ssize_t i = 0, n = PySequence_Fast_GET_SIZE(items); loaded && i < n; ++i)
      loaded = this->template element<T>(PySequence_Fast_GET_ITEM(items, i), flags, cleanup,
                                         [&](auto&& e) { out.push_back(std::forward<decltype(e)>(e)); });
    {  // the items' finalisers, too
      const dlpm_load_scope outside;
      Py_DECREF(items);
    }
    return loading.finish(loaded, flags);
  }
  // A returned vector of owned values (moved): a list of Tensors.
  static handle from_cpp(std::vector<T, Alloc>&& v, rv_policy policy, cleanup_list* cleanup) noexcept {
    object list = steal(PyList_New(static_cast<Py_ssize_t>(v.size())));
    if (!list.is_valid()) return {};
    Py_ssize_t i = 0;
    for (auto& e : v) {
      const handle item = dlpm_container_caster<std::vector<T, Alloc>>::template element_to_python<T>(std::move(e), policy, cleanup);
      if (!item.is_valid()) return {};
      PyList_SET_ITEM(list.ptr(), i++, item.ptr());
    }
    return list.release();
  }
};

// std::optional<T>: None, or a T.
template <class T>
  requires dlpm_raises<T>
struct type_caster<std::optional<T>> : dlpm_container_caster<std::optional<T>> {
  static constexpr auto Name = make_caster<T>::Name + const_name(" | None");
  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) {
    auto& out = this->value.emplace();
    if (src.is_none()) return true;
    dlpm_container_loading loading;
    return loading.finish(
        this->template element<T>(src, flags, cleanup, [&](auto&& e) { out.emplace(std::forward<decltype(e)>(e)); }), flags);
  }
  static handle from_cpp(std::optional<T>&& v, rv_policy policy, cleanup_list* cleanup) noexcept {
    if (!v) return none().release();
    return dlpm_container_caster<std::optional<T>>::template element_to_python<T>(std::move(*v), policy, cleanup);
  }
};

// std::variant<...>: the first alternative that loads, each tried without conversion, then
// with it (nanobind's order).
template <class... Ts>
  requires(dlpm_raises<Ts> || ...)
struct type_caster<std::variant<Ts...>> : dlpm_container_caster<std::variant<Ts...>> {
  static constexpr auto Name = union_name(make_caster<Ts>::Name...);
  // An alternative of another type (nanobind's own caster, an int's __index__ say) loads with
  // the container count at zero: Python code it runs raises as usual.
  template <class T>
  bool alternative(handle src, uint32_t flags, cleanup_list* cleanup) {
    if (dlpm_pending_interrupt != nullptr) return false;  // no other alternative asks the producer again
    const auto load = [&] {
      return this->template element<T>(src, flags, cleanup, [&](auto&& e) { this->value.emplace(std::in_place_type<T>, std::forward<decltype(e)>(e)); });
    };
    if constexpr (dlpm_raises<T>) {
      return load();
    } else {
      const dlpm_load_scope outside;
      return load();
    }
  }
  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) {
    dlpm_container_loading loading;
    if ((flags & cast_flags::convert) && (alternative<Ts>(src, flags & ~cast_flags::convert, cleanup) || ...)) return true;
    return loading.finish((alternative<Ts>(src, flags, cleanup) || ...), flags);
  }
  static handle from_cpp(std::variant<Ts...>&& v, rv_policy policy, cleanup_list* cleanup) noexcept {
    return std::visit(
        [&](auto&& e) {
          using T = std::remove_cvref_t<decltype(e)>;
          return dlpm_container_caster<std::variant<Ts...>>::template element_to_python<T>(std::move(e), policy, cleanup);
        },
        std::move(v));
  }
};

// The other containers of views and owned values, and of this header's containers of them,
// whose nanobind casters would load them in a noexcept function (a refusal or an interrupt
// would end the process), refused as parameters when compiling: a std::vector is the container
// these casters take. Owned values still return in them (as nanobind returns them: a list, a
// tuple, a dict); a view is never returned, so a container of views is refused whole.
template <class T>
inline constexpr bool dlpm_refused_container = false;
#define DLPM_NB_REFUSED_MESSAGE_                                                                                      \
  "dlpack_mdspan/nanobind.hpp: views and owned tensors in this container cannot be refused safely as a parameter " \
  "(nanobind loads its elements in a noexcept function): take std::vector, std::optional or std::variant"
template <class Value_, int Kind>
struct dlpm_return_only_caster : dlpm_held_value<Value_> {
  template <class Never = void>
  bool from_python(handle, uint32_t, cleanup_list*) {
    static_assert(dlpm_refused_container<Never>, DLPM_NB_REFUSED_MESSAGE_);
    return false;
  }
  // A Python list (kind 0), tuple (1) or dict (2) of the elements, converted as this header's
  // containers convert theirs (an owned value becomes a dlpack_mdspan.Tensor).
  static handle from_cpp(Value_&& v, rv_policy policy, cleanup_list* cleanup) noexcept {
    if constexpr (Kind == 2) {
      object dict = steal(PyDict_New());
      if (!dict.is_valid()) return {};
      for (auto& [key, e] : v) {
        object k = steal(make_caster<std::remove_cvref_t<decltype(key)>>::from_cpp(key, rv_policy::copy, cleanup));
        object item = steal(dlpm_container_caster<Value_>::template element_to_python<std::remove_cvref_t<decltype(e)>>(
            std::move(e), policy, cleanup));
        if (!k.is_valid() || !item.is_valid() || PyDict_SetItem(dict.ptr(), k.ptr(), item.ptr()) != 0) return {};
      }
      return dict.release();
    } else {
      object out;
      if constexpr (Kind == 1) {
        out = steal(PyTuple_New(static_cast<Py_ssize_t>(std::tuple_size_v<Value_>)));
      } else {
        out = steal(PyList_New(static_cast<Py_ssize_t>(std::size(v))));
      }
      if (!out.is_valid()) return {};
      Py_ssize_t i = 0;
      bool failed = false;
      const auto put = [&](auto&& e) {
        if (failed) return;
        const handle item = dlpm_container_caster<Value_>::template element_to_python<std::remove_cvref_t<decltype(e)>>(
            std::move(e), policy, cleanup);
        if (!item.is_valid()) {
          failed = true;
          return;
        }
        if constexpr (Kind == 1) {
          PyTuple_SET_ITEM(out.ptr(), i++, item.ptr());
        } else {
          PyList_SET_ITEM(out.ptr(), i++, item.ptr());
        }
      };
      if constexpr (Kind == 1) {
        std::apply([&](auto&... e) { (put(std::move(e)), ...); }, v);
      } else {
        for (auto& e : v) put(std::move(e));
      }
      return failed ? handle() : out.release();
    }
  }
  static handle from_cpp(Value_* v, rv_policy policy, cleanup_list* cleanup) noexcept {
    if (v == nullptr) return none().release();
    return from_cpp(std::move(*v), policy, cleanup);
  }
};
template <class T, class A>
  requires dlpm_raises<T>
struct type_caster<std::list<T, A>> : dlpm_return_only_caster<std::list<T, A>, 0> {
  static_assert(!dlpm_is_view<T>, DLPM_NB_REFUSED_MESSAGE_);
  static constexpr auto Name = const_name("list[") + make_caster<T>::Name + const_name("]");
};
template <class T, class A>
  requires dlpm_raises<T>
struct type_caster<std::deque<T, A>> : dlpm_return_only_caster<std::deque<T, A>, 0> {
  static_assert(!dlpm_is_view<T>, DLPM_NB_REFUSED_MESSAGE_);
  static constexpr auto Name = const_name("list[") + make_caster<T>::Name + const_name("]");
};
template <class T, std::size_t N>
  requires dlpm_raises<T>
struct type_caster<std::array<T, N>> : dlpm_return_only_caster<std::array<T, N>, 0> {
  static_assert(!dlpm_is_view<T>, DLPM_NB_REFUSED_MESSAGE_);
  static constexpr auto Name = const_name("list[") + make_caster<T>::Name + const_name("]");
};
template <class T1, class T2>
  requires(dlpm_raises<T1> || dlpm_raises<T2>)
struct type_caster<std::pair<T1, T2>> : dlpm_return_only_caster<std::pair<T1, T2>, 1> {
  static_assert(!dlpm_is_view<T1> && !dlpm_is_view<T2>, DLPM_NB_REFUSED_MESSAGE_);
  static constexpr auto Name =
      const_name("tuple[") + make_caster<T1>::Name + const_name(", ") + make_caster<T2>::Name + const_name("]");
};
template <class... Ts>
  requires(dlpm_raises<Ts> || ...)
struct type_caster<std::tuple<Ts...>> : dlpm_return_only_caster<std::tuple<Ts...>, 1> {
  static_assert((!dlpm_is_view<Ts> && ...), DLPM_NB_REFUSED_MESSAGE_);
  static constexpr auto Name = const_name("tuple[") + concat(make_caster<Ts>::Name...) + const_name("]");
};
template <class K, class T, class C, class A>
  requires dlpm_raises<T>
struct type_caster<std::map<K, T, C, A>> : dlpm_return_only_caster<std::map<K, T, C, A>, 2> {
  static_assert(!dlpm_is_view<T>, DLPM_NB_REFUSED_MESSAGE_);
  static constexpr auto Name =
      const_name("dict[") + make_caster<K>::Name + const_name(", ") + make_caster<T>::Name + const_name("]");
};
template <class K, class T, class H, class E, class A>
  requires dlpm_raises<T>
struct type_caster<std::unordered_map<K, T, H, E, A>> : dlpm_return_only_caster<std::unordered_map<K, T, H, E, A>, 2> {
  static_assert(!dlpm_is_view<T>, DLPM_NB_REFUSED_MESSAGE_);
  static constexpr auto Name =
      const_name("dict[") + make_caster<K>::Name + const_name(", ") + make_caster<T>::Name + const_name("]");
};
#undef DLPM_NB_REFUSED_MESSAGE_

// Owned values (held_view<M>, managed_tensor): the function may keep them; returned, they
// become a dlpack_mdspan.Tensor.
template <class Value_, auto& Label>
struct dlpm_owned_caster : dlpm_held_value<Value_> {
  using Value = Value_;
  static constexpr auto Name = io_name(Label, "dlpack_mdspan.Tensor");

  static handle from_cpp(Value&& v, rv_policy, cleanup_list*) noexcept {
    return dlpack_mdspan::python::detail::to_python(std::move(v));
  }
  static handle from_cpp(Value* v, rv_policy, cleanup_list*) noexcept {
    if (v == nullptr) return none().release();
    return dlpack_mdspan::python::detail::to_python(std::move(*v));
  }
};

template <class M>
struct type_caster<dlpack_mdspan::python::held_view<M>>
    : dlpm_owned_caster<dlpack_mdspan::python::held_view<M>, dlpack_mdspan::python::detail::mdspan_label<M>> {
  bool from_python(handle src, uint32_t flags, cleanup_list*) {
    const dlpm_load_scope scope;
    return dlpm_loaded(dlpack_mdspan::python::detail::load_held<M>(src.ptr(), dlpm_may_raise(flags), false, this->value), scope,
                       flags);
  }
};

template <>
struct type_caster<dlpack_mdspan::managed_tensor>
    : dlpm_owned_caster<dlpack_mdspan::managed_tensor, dlpack_mdspan::python::detail::managed_label> {
  bool from_python(handle src, uint32_t flags, cleanup_list*) {
    this->value.emplace();
    const dlpm_load_scope scope;
    return dlpm_loaded(dlpack_mdspan::python::detail::load_managed(src.ptr(), dlpm_may_raise(flags), *this->value), scope, flags);
  }
};

// framework_tensor<F>: return values only.
template <dlpack_mdspan::python::framework F>
struct type_caster<dlpack_mdspan::python::framework_tensor<F>> {
  using Value = dlpack_mdspan::python::framework_tensor<F>;
  static constexpr auto Name = const_name(dlpack_mdspan::python::detail::framework_label<F>);
  template <typename T_>
  using Cast = movable_cast_t<T_>;
  static handle from_cpp(Value&& v, rv_policy, cleanup_list*) noexcept {
    return dlpack_mdspan::python::detail::to_python(std::move(v));
  }
};

}  // namespace nanobind::detail

#endif  // DLPACK_MDSPAN_NANOBIND_HPP
