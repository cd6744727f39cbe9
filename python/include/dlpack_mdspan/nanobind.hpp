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
// Parameters such as std::optional<M>, std::vector<M> and std::variant<M, ...> work too: the
// tensor behind each view is kept until the call returns (python_casters.hpp, call_view).
//
// nb::cast<std::mdspan<...>>(obj) is refused (the view would outlive the caster that owns
// its tensor): cast to dlpack_mdspan::python::held_view<M> instead.
#ifndef DLPACK_MDSPAN_NANOBIND_HPP
#define DLPACK_MDSPAN_NANOBIND_HPP

#include <nanobind/nanobind.h>

#include <dlpack_mdspan/python_casters.hpp>  // last: in the module form it ends with the import

namespace nanobind::detail {

// The casters' two rules, once: a refusal may raise only where conversion is allowed and
// the dispatcher called (nb::cast and nb::try_cast pass `manual`, and try_cast is noexcept);
// a raise throws the exception that refuse() left set.
inline bool dlpm_may_raise(uint32_t flags) noexcept {
  return (flags & cast_flags::convert) && !(flags & cast_flags::manual);
}
inline bool dlpm_loaded(dlpack_mdspan::python::detail::load_outcome outcome) {
  if (outcome == dlpack_mdspan::python::detail::load_outcome::raise) throw python_error();
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
    if (!dlpm_loaded(loaded.template load<Parameter::legacy_writable, Parameter::stream_ordered>(src.ptr(), dlpm_may_raise(flags))))
      return false;
    // Kept until the call returns (a container's caster destroys or reuses this one first).
    if (cleanup != nullptr)
      if (PyObject* keep_alive = loaded.release_keep_alive()) cleanup->append(keep_alive);
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

// Owned values (held_view<M>, managed_tensor): the function may keep them; returned, they
// become a dlpack_mdspan.Tensor.
template <class Value_, auto& Label>
struct dlpm_owned_caster {
  using Value = Value_;
  static constexpr auto Name = io_name(Label, "dlpack_mdspan.Tensor");
  template <typename T_>
  using Cast = movable_cast_t<T_>;
  template <typename T_>
  static constexpr bool can_cast() { return true; }

  explicit operator Value*() { return &*value; }
  explicit operator Value&() { return *value; }
  explicit operator Value&&() { return std::move(*value); }

  static handle from_cpp(Value&& v, rv_policy, cleanup_list*) noexcept {
    return dlpack_mdspan::python::detail::to_python(std::move(v));
  }
  static handle from_cpp(Value* v, rv_policy, cleanup_list*) noexcept {
    if (v == nullptr) return none().release();
    return dlpack_mdspan::python::detail::to_python(std::move(*v));
  }

  std::optional<Value> value;
};

template <class M>
struct type_caster<dlpack_mdspan::python::held_view<M>>
    : dlpm_owned_caster<dlpack_mdspan::python::held_view<M>, dlpack_mdspan::python::detail::mdspan_label<M>> {
  bool from_python(handle src, uint32_t flags, cleanup_list*) {
    return dlpm_loaded(dlpack_mdspan::python::detail::load_held<M>(src.ptr(), dlpm_may_raise(flags), false, this->value));
  }
};

template <>
struct type_caster<dlpack_mdspan::managed_tensor>
    : dlpm_owned_caster<dlpack_mdspan::managed_tensor, dlpack_mdspan::python::detail::managed_label> {
  bool from_python(handle src, uint32_t flags, cleanup_list*) {
    this->value.emplace();
    return dlpm_loaded(dlpack_mdspan::python::detail::load_managed(src.ptr(), dlpm_may_raise(flags), *this->value));
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
