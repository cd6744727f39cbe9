// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/pybind11.hpp: std::mdspan as a parameter (and owned tensors as parameters
// and return values) in pybind11 bindings. Type casters only: nothing to register.
//
//   #include <pybind11/pybind11.h>
//   #include <dlpack_mdspan/pybind11.hpp>   // last (the module form ends with the import)
//
//   PYBIND11_MODULE(ext, m) {
//     m.def("scale", [](std::mdspan<float, std::dextents<int64_t, 2>> a, float k) { ... });
//   }
//
// Unlike py::array, any DLPack producer is accepted (NumPy, PyTorch, JAX, TensorFlow, a
// capsule), through the type's exchange API where it publishes one. The rules for
// refusals, legacy tensors and return values are in python_casters.hpp and
// docs/python-interop.md.
//
// A loaded view's tensor is kept alive until the bound function returns (pybind11's
// loader_life_support), so py::cast<std::mdspan<...>>(obj) inside a bound function is
// safe, and outside one it is refused with pybind11's cast_error.
#ifndef DLPACK_MDSPAN_PYBIND11_HPP
#define DLPACK_MDSPAN_PYBIND11_HPP

#include <pybind11/pybind11.h>

#include <dlpack_mdspan/python_casters.hpp>  // last: in the module form it ends with the import

namespace pybind11::detail {

// A raise throws the exception that refuse() left set; pybind11 restores it.
inline bool dlpm_loaded(dlpack_mdspan::python::detail::load_outcome outcome) {
  if (outcome == dlpack_mdspan::python::detail::load_outcome::raise) throw error_already_set();
  return outcome == dlpack_mdspan::python::detail::load_outcome::loaded;
}

// std::mdspan<T, E, L, A>, legacy_writable<M> and stream_ordered<M>: a view for the call.
template <class P>
struct dlpm_view_caster {
  using Parameter = dlpack_mdspan::python::detail::unwrap_parameter<P>;
  using M = typename Parameter::type;
  static constexpr auto name = const_name(dlpack_mdspan::python::detail::mdspan_label<M>);
  template <typename T_>
  using cast_op_type = P;

  bool load(handle src, bool convert) {
    if (!dlpm_loaded(loaded.template load<Parameter::legacy_writable, Parameter::stream_ordered>(src.ptr(), convert))) return false;
    // This caster may be gone before the view is used (py::cast, or a container's caster):
    // what keeps the memory alive lives until the bound function returns.
    loader_life_support::add_patient(reinterpret_steal<object>(loaded.release_keep_alive(src.ptr())));
    return true;
  }
  explicit operator P() { return loaded.template parameter<P>(); }

  template <class U>
  static handle cast(U&&, return_value_policy, handle) {
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
template <class Value, auto& Label>
struct dlpm_owned_caster {
  static constexpr auto name = io_name(Label, "dlpack_mdspan.Tensor");
  template <typename T_>
  using cast_op_type = movable_cast_op_type<T_>;

  explicit operator Value*() { return &*value; }
  explicit operator Value&() { return *value; }
  explicit operator Value&&() { return std::move(*value); }

  static handle cast(Value&& v, return_value_policy, handle) {
    return dlpack_mdspan::python::detail::to_python(std::move(v));
  }

  std::optional<Value> value;
};

template <class M>
struct type_caster<dlpack_mdspan::python::held_view<M>>
    : dlpm_owned_caster<dlpack_mdspan::python::held_view<M>, dlpack_mdspan::python::detail::mdspan_label<M>> {
  bool load(handle src, bool convert) {
    return dlpm_loaded(dlpack_mdspan::python::detail::load_held<M>(src.ptr(), convert, false, this->value));
  }
};

template <>
struct type_caster<dlpack_mdspan::managed_tensor>
    : dlpm_owned_caster<dlpack_mdspan::managed_tensor, dlpack_mdspan::python::detail::managed_label> {
  bool load(handle src, bool convert) {
    this->value.emplace();
    return dlpm_loaded(dlpack_mdspan::python::detail::load_managed(src.ptr(), convert, *this->value));
  }
};

// framework_tensor<F>: return values only.
template <dlpack_mdspan::python::framework F>
struct type_caster<dlpack_mdspan::python::framework_tensor<F>> {
  using Value = dlpack_mdspan::python::framework_tensor<F>;
  static constexpr auto name = const_name(dlpack_mdspan::python::detail::framework_label<F>);
  static handle cast(Value&& v, return_value_policy, handle) {
    return dlpack_mdspan::python::detail::to_python(std::move(v));
  }
};

}  // namespace pybind11::detail

#endif  // DLPACK_MDSPAN_PYBIND11_HPP
