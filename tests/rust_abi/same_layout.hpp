// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What "the same on both sides" means for the Rust ABI proofs (abi.test.cpp, functions.test.cpp,
// python_abi.test.cpp): a struct, field by field, and a function's declaration. Each includer
// names the namespace of its cbindgen rendering `rust` before using the macros.
#ifndef DLPM_TESTS_RUST_ABI_SAME_LAYOUT_HPP
#define DLPM_TESTS_RUST_ABI_SAME_LAYOUT_HPP

#include <cstddef>
#include <type_traits>

namespace dlpm_abi_proof {

// A field has the same representation on both sides: the same scalar or pointer type, an
// enum whose underlying type is the Rust integer, a mirrored struct of the same size and
// alignment, or a function pointer on both sides.
template <class C, class R>
constexpr bool same_repr() {
  if constexpr (std::is_same_v<C, R>) {
    return true;
  } else if constexpr (std::is_enum_v<C>) {
    return std::is_same_v<std::underlying_type_t<C>, R>;
  } else if constexpr (std::is_class_v<C> && std::is_class_v<R>) {
    return sizeof(C) == sizeof(R) && alignof(C) == alignof(R);
  } else if constexpr (std::is_pointer_v<C> && std::is_pointer_v<R>) {
    using PC = std::remove_pointer_t<C>;
    using PR = std::remove_pointer_t<R>;
    if constexpr (std::is_function_v<PC> && std::is_function_v<PR>) {
      return true;
    } else if constexpr (std::is_class_v<PC> && std::is_class_v<PR>) {  // a pointer to a mirrored struct
      return std::is_const_v<PC> == std::is_const_v<PR> && same_repr<std::remove_cv_t<PC>, std::remove_cv_t<PR>>();
    } else {
      return false;
    }
  } else {
    return false;
  }
}

// A function type without its noexcept: the C headers declare every entry point noexcept for
// C++ callers, which a Rust declaration (and cbindgen's rendering of it) cannot say.
template <class F>
struct without_noexcept {
  using type = F;
};
template <class R, class... A>
struct without_noexcept<R(A...) noexcept> {
  using type = R(A...);
};

}  // namespace dlpm_abi_proof

#define DLPM_ABI_SAME_STRUCT(T)                                                                         \
  static_assert(sizeof(::T) == sizeof(rust::T), "sizeof(" #T ") differs");                              \
  static_assert(alignof(::T) == alignof(rust::T), "alignof(" #T ") differs");                           \
  static_assert(std::is_standard_layout_v<rust::T> && std::is_trivially_copyable_v<rust::T>, #T);

#define DLPM_ABI_SAME_FIELD(T, f)                                                                       \
  static_assert(offsetof(::T, f) == offsetof(rust::T, f), "offsetof(" #T ", " #f ") differs");          \
  static_assert(sizeof(::T::f) == sizeof(rust::T::f), "sizeof(" #T "::" #f ") differs");               \
  static_assert(dlpm_abi_proof::same_repr<decltype(::T::f), decltype(rust::T::f)>(), "type of " #T "::" #f " differs");

// The function `name` as the Rust crate declares it (cbindgen's rendering, in namespace `ns`)
// has the C header's type: the same return and parameter types, in the same order.
#define DLPM_ABI_SAME_FUNCTION(ns, name)                                                                \
  static_assert(std::is_same_v<decltype(ns::name),                                                      \
                               typename dlpm_abi_proof::without_noexcept<decltype(::name)>::type>,      \
                #name " is declared with other types in Rust than in C");

#endif  // DLPM_TESTS_RUST_ABI_SAME_LAYOUT_HPP
