// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C++20 stand-in for std::expected<T, E> and std::unexpected<E>: the subset the library
// and its users need, with std::expected's assignment rules. error.hpp makes result<T> of
// it where <expected> is missing; Raise is what value() calls on an error (std::expected
// throws bad_expected_access, the library throws dlpack_error).
#ifndef DLPACK_MDSPAN_EXPECTED_HPP
#define DLPACK_MDSPAN_EXPECTED_HPP

#include <dlpack_mdspan/config.hpp>

#include <new>
#include <type_traits>
#include <utility>

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

template <class E>
class unexpected {
 public:
  explicit unexpected(const E& e) noexcept : error_(e) {}
  [[nodiscard]] const E& error() const noexcept { return error_; }

 private:
  E error_;
};

template <class T, class E, void (*Raise)(const E&)>
class expected {
  static_assert(std::is_trivially_copyable_v<E>, "an error is copied where nothing may throw");

 public:
  using value_type = T;
  using error_type = E;

  expected(const T& value) : has_value_(true) { ::new (&storage_.value) T(value); }
  expected(T&& value) : has_value_(true) { ::new (&storage_.value) T(std::move(value)); }
  expected(const unexpected<E>& u) noexcept : has_value_(false) { ::new (&storage_.err) error_type(u.error()); }
  // Copyable and movable as T is, with T's noexcept (std::expected's rules: a
  // std::vector<result<managed_tensor>> moves its elements, and copies none).
  expected(const expected& other)
    requires std::is_copy_constructible_v<T>
      : has_value_(other.has_value_) {
    if (has_value_) ::new (&storage_.value) T(other.storage_.value);
    else ::new (&storage_.err) error_type(other.storage_.err);
  }
  expected(const expected&) = delete;
  expected(expected&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
    requires std::is_move_constructible_v<T>
      : has_value_(other.has_value_) {
    if (has_value_) ::new (&storage_.value) T(std::move(other.storage_.value));
    else ::new (&storage_.err) error_type(other.storage_.err);
  }
  // Assignment, as std::expected<T, E> has it. The error is trivially copyable, so a
  // throwing T copy leaves *this holding its previous error (strong guarantee).
  expected& operator=(const expected& other)
    requires std::is_copy_constructible_v<T> && std::is_copy_assignable_v<T>
  {
    if (this != &other) {
      if (other.has_value_) assign_value(other.storage_.value);
      else assign_error(other.storage_.err);
    }
    return *this;
  }
  expected& operator=(expected&& other) noexcept(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>)
    requires std::is_move_constructible_v<T> && std::is_move_assignable_v<T>
  {
    if (this != &other) {
      if (other.has_value_) assign_value(std::move(other.storage_.value));
      else assign_error(other.storage_.err);
    }
    return *this;
  }
  expected& operator=(const T& value)
    requires std::is_copy_constructible_v<T> && std::is_copy_assignable_v<T>
  {
    assign_value(value);
    return *this;
  }
  expected& operator=(T&& value)
    requires std::is_move_constructible_v<T> && std::is_move_assignable_v<T>
  {
    assign_value(std::move(value));
    return *this;
  }
  expected& operator=(const unexpected<E>& u) noexcept {
    assign_error(u.error());
    return *this;
  }
  ~expected() {
    if (has_value_) storage_.value.~T();
  }

  [[nodiscard]] bool has_value() const noexcept { return has_value_; }
  explicit operator bool() const noexcept { return has_value_; }
  T& value() & { check(); return storage_.value; }
  const T& value() const& { check(); return storage_.value; }
  T&& value() && { check(); return std::move(storage_.value); }
  T& operator*() & noexcept { return storage_.value; }
  const T& operator*() const& noexcept { return storage_.value; }
  T&& operator*() && noexcept { return std::move(storage_.value); }
  T* operator->() noexcept { return &storage_.value; }
  const T* operator->() const noexcept { return &storage_.value; }
  [[nodiscard]] const error_type& error() const& noexcept { return storage_.err; }

 private:
  void check() const {
    if (!has_value_) Raise(storage_.err);
  }
  template <class V>
  void assign_value(V&& v) {
    if (has_value_) {
      storage_.value = std::forward<V>(v);
      return;
    }
    const error_type saved = storage_.err;
    try_construct_value(std::forward<V>(v), saved);
  }
  template <class V>
  void try_construct_value(V&& v, const error_type& saved) {
#if DLPM_HAS_EXCEPTIONS
    try {
      ::new (&storage_.value) T(std::forward<V>(v));
    } catch (...) {
      ::new (&storage_.err) error_type(saved);
      throw;
    }
#else
    (void)saved;
    ::new (&storage_.value) T(std::forward<V>(v));
#endif
    has_value_ = true;
  }
  void assign_error(const error_type& e) noexcept {
    if (has_value_) {
      storage_.value.~T();
      has_value_ = false;
    }
    ::new (&storage_.err) error_type(e);
  }
  union storage {
    storage() {}
    ~storage() {}
    T value;
    error_type err;
  } storage_;
  bool has_value_;
};

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
