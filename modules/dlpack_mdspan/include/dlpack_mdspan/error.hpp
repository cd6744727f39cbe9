// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Error reporting: one code per failure (errc), a message that names the values involved,
// a throwing form (dlpack_error) and a non-throwing form (result<T>, std::expected or its
// stand-in in expected.hpp).
//
// An error keeps its format and values and words its message only when asked, so it is
// small (result<M> is about the size of M) and reporting a failure never allocates; the
// success paths of export and import allocate nothing at all.
#ifndef DLPACK_MDSPAN_ERROR_HPP
#define DLPACK_MDSPAN_ERROR_HPP

#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/dtype_name.hpp>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>

#if DLPM_USE_STD_EXPECTED
#include <expected>
#else
#include <dlpack_mdspan/expected.hpp>
#endif

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Why a conversion failed. The numeric values are stable: the C facade reuses them
/// as its `dlpm_status` codes, so never renumber an existing entry.
enum class errc : int {
  ok = 0,
  null_pointer = 1,            ///< a required pointer argument was NULL
  extent_overflow = 2,         ///< an extent cannot be represented (int64 on export, index_type on import)
  stride_overflow = 3,         ///< a stride cannot be represented in int64
  not_strided = 4,             ///< the mapping is not strided, so DLPack cannot describe it
  device_mismatch = 5,         ///< device type not accepted by the target view
  device_id_mismatch = 6,      ///< device id differs from the one the target view names
  ndim_mismatch = 7,           ///< ndim differs from the target rank
  invalid_ndim = 8,            ///< ndim is negative or absurdly large
  dtype_mismatch = 9,          ///< (code, bits, lanes) differs from the target element type
  invalid_dtype = 10,          ///< bits or lanes are zero or impossible
  null_shape = 11,             ///< shape is NULL while ndim > 0
  negative_extent = 12,        ///< a shape entry is negative
  shape_mismatch = 13,         ///< a shape entry differs from the target's static extent or the required shape
  null_data = 14,              ///< data is NULL for a tensor with elements
  null_strides = 15,           ///< strides are NULL and the policy rejects that
  non_compact_strides = 16,    ///< layout_right/left target but the strides are not compact
  non_positive_stride = 17,    ///< layout_stride target but a stride is zero or negative
  overlapping_strides = 18,    ///< layout_stride target but two elements share an address
  span_overflow = 19,          ///< the required span does not fit int64 / index_type
  byte_offset_overflow = 20,   ///< byte_offset is out of range
  misaligned_byte_offset = 21, ///< byte_offset is not a multiple of the element size
  misaligned_data = 22,        ///< data + byte_offset is not aligned as required
  divisibility = 23,           ///< an extent is not a multiple of the requested divisor
  subbyte_not_viewable = 24,   ///< a sub-byte dtype cannot be viewed element-wise
  ambiguous_layout = 25,       ///< layout introspection has no unique answer
  no_matching_type = 26,       ///< runtime dispatch found no candidate element type
  read_only = 27,              ///< a mutable view of a READ_ONLY tensor was requested
  version_mismatch = 28,       ///< DLPack major version differs from ours
  invalid_argument = 29,       ///< any other invalid argument
  out_of_memory = 30,          ///< an allocation failed
  internal = 31,               ///< an unexpected C++ exception was caught at the C boundary
  misaligned_metadata = 32,    ///< shape or strides is not aligned for int64_t
  unsupported_version = 33,    ///< an options struct's version field is not one this library knows
  producer_failed = 34,        ///< the producer (a Python object, a foreign callback) reported a failure of its own
};

/// The largest errc value; the C facade's status codes are exactly 0..last_errc.
inline constexpr errc last_errc = errc::producer_failed;

/// A short, fixed description of an errc (the detailed message is in `error::message`).
constexpr const char* errc_name(errc code) noexcept {
  switch (code) {
    case errc::ok: return "ok";
    case errc::null_pointer: return "null pointer argument";
    case errc::extent_overflow: return "extent out of range";
    case errc::stride_overflow: return "stride out of range";
    case errc::not_strided: return "layout mapping is not strided";
    case errc::device_mismatch: return "device type not accepted";
    case errc::device_id_mismatch: return "device id mismatch";
    case errc::ndim_mismatch: return "ndim mismatch";
    case errc::invalid_ndim: return "invalid ndim";
    case errc::dtype_mismatch: return "dtype mismatch";
    case errc::invalid_dtype: return "invalid dtype";
    case errc::null_shape: return "shape is NULL";
    case errc::negative_extent: return "negative extent";
    case errc::shape_mismatch: return "shape mismatch";
    case errc::null_data: return "data is NULL";
    case errc::null_strides: return "strides are NULL";
    case errc::non_compact_strides: return "strides are not compact for the layout";
    case errc::non_positive_stride: return "non-positive stride";
    case errc::overlapping_strides: return "overlapping strides";
    case errc::span_overflow: return "required span overflows";
    case errc::byte_offset_overflow: return "byte_offset out of range";
    case errc::misaligned_byte_offset: return "byte_offset not a multiple of the element size";
    case errc::misaligned_data: return "data misaligned";
    case errc::divisibility: return "extent not divisible";
    case errc::subbyte_not_viewable: return "sub-byte dtype not viewable element-wise";
    case errc::ambiguous_layout: return "ambiguous layout";
    case errc::no_matching_type: return "no matching element type";
    case errc::read_only: return "tensor is read-only";
    case errc::version_mismatch: return "DLPack major version mismatch";
    case errc::invalid_argument: return "invalid argument";
    case errc::out_of_memory: return "out of memory";
    case errc::internal: return "internal error";
    case errc::misaligned_metadata: return "shape or strides misaligned";
    case errc::unsupported_version: return "unsupported struct version";
    case errc::producer_failed: return "the producer failed";
  }
  return "unknown error";
}

/// A failure: its code, plus what its message needs (a format and up to six values),
/// worded only when asked for. It is 64 bytes and trivially copyable, allocation-free, so
/// result<M> stays close to the size of M and a failure can cross threads and C
/// boundaries; the success paths never touch it.
///
/// Values given for `%s` are kept as pointers: they must outlive the error (the library
/// passes string literals only; the C facade words messages at once, at the boundary).
/// `%#x` takes a dtype packed by detail::packed_dtype and words it by name ("float32").
class error {
 public:
  /// The most values one message can name.
  static constexpr std::size_t max_values = 6;
  /// The longest worded message, terminator included.
  static constexpr std::size_t capacity = 240;

  /// A worded message, held inline (no allocation). Valid as long as the object lives.
  class text {
   public:
    [[nodiscard]] const char* c_str() const noexcept { return chars_; }
    [[nodiscard]] std::string_view view() const noexcept { return chars_; }
    operator std::string_view() const noexcept { return chars_; }
    [[nodiscard]] bool empty() const noexcept { return chars_[0] == '\0'; }

   private:
    friend class error;
    char chars_[capacity];
  };

  // Nothing is written: a default-constructed error sits on every success path (export,
  // import, the facade), and only a failure fills it.
  error() noexcept = default;

  /// A fixed message. `message` must outlive the error (a string literal, typically).
  error(errc code, const char* message) noexcept : format_("%s"), code_(code), count_(1) {
    store(0, reinterpret_cast<std::uintptr_t>(message != nullptr ? message : ""));
  }

  [[nodiscard]] errc code() const noexcept { return code_; }

  /// The message, worded now ("shape[1] = -3 is negative").
  [[nodiscard]] text message() const noexcept {
    text t;
    write(t.chars_, capacity);
    return t;
  }
  /// The same as message(), under the name exceptions use.
  [[nodiscard]] text what() const noexcept { return message(); }

  /// Words the message into `out` (`size` bytes, always terminated).
  DLPM_COLD void write(char* out, std::size_t size) const noexcept {
    if (size == 0) return;
    out[0] = '\0';
    if (format_ == nullptr) return;
    std::size_t used = 0, next = 0;
    auto put = [&](int n) { used += n > 0 ? static_cast<std::size_t>(n) : 0; };
    for (const char* f = format_; *f != '\0' && used + 1 < size; ++f) {
      if (*f != '%') {
        out[used++] = *f;
        out[used] = '\0';
        continue;
      }
      const conversion c = parse(f);  // advances f to the conversion's last character
      const std::uint64_t v = next < count_ ? load(next) : 0;
      if (c != conversion::percent) ++next;
      char* at = out + used;
      const std::size_t room = size - used;
      switch (c) {
        case conversion::percent: put(std::snprintf(at, room, "%%")); break;
        case conversion::int_: put(std::snprintf(at, room, "%d", static_cast<int>(static_cast<std::int64_t>(v)))); break;
        case conversion::unsigned_: put(std::snprintf(at, room, "%u", static_cast<unsigned>(v))); break;
        case conversion::long_long: put(std::snprintf(at, room, "%lld", static_cast<long long>(v))); break;
        case conversion::unsigned_long_long: put(std::snprintf(at, room, "%llu", static_cast<unsigned long long>(v))); break;
        case conversion::size: put(std::snprintf(at, room, "%zu", static_cast<std::size_t>(v))); break;
        case conversion::pointer: put(std::snprintf(at, room, "%p", reinterpret_cast<void*>(static_cast<std::uintptr_t>(v)))); break;
        case conversion::string: {
          const char* str = reinterpret_cast<const char*>(static_cast<std::uintptr_t>(v));
          put(std::snprintf(at, room, "%s", str != nullptr ? str : "(null)"));
          break;
        }
        case conversion::character: put(std::snprintf(at, room, "%c", static_cast<int>(v))); break;
        case conversion::dtype: put(std::snprintf(at, room, "%s", dtype_name(detail::unpacked_dtype(v)).c_str())); break;
        case conversion::unknown: put(std::snprintf(at, room, "?")); break;
      }
      if (used >= size) used = size - 1;
    }
  }

  /// printf-style constructor used by the library's checks: the compiler checks the
  /// values against the format; they are kept, and worded only by message().
#if defined(__GNUC__) || defined(__clang__)
  __attribute__((format(printf, 2, 3)))
#endif
  DLPM_COLD static error format(errc code, const char* fmt, ...) noexcept {
    error e;
    e.format_ = fmt;
    e.code_ = code;
    e.count_ = 0;
    std::va_list args;
    va_start(args, fmt);
    for (const char* f = fmt; *f != '\0'; ++f) {
      if (*f != '%') continue;
      const conversion c = parse(f);
      if (c == conversion::percent) continue;
      std::uint64_t v = 0;
      switch (c) {
        case conversion::int_:
        case conversion::character: v = static_cast<std::uint64_t>(static_cast<std::int64_t>(va_arg(args, int))); break;
        case conversion::unsigned_:
        case conversion::dtype: v = va_arg(args, unsigned); break;
        case conversion::long_long: v = static_cast<std::uint64_t>(va_arg(args, long long)); break;
        case conversion::unsigned_long_long: v = va_arg(args, unsigned long long); break;
        case conversion::size: v = va_arg(args, std::size_t); break;
        case conversion::pointer: v = reinterpret_cast<std::uintptr_t>(va_arg(args, void*)); break;
        case conversion::string: v = reinterpret_cast<std::uintptr_t>(va_arg(args, const char*)); break;
        case conversion::percent:
        case conversion::unknown: break;
      }
      if (e.count_ < max_values) e.store(e.count_++, v);
    }
    va_end(args);
    return e;
  }

 private:
  enum class conversion : unsigned char {
    percent, int_, unsigned_, long_long, unsigned_long_long, size, pointer, string, character, dtype, unknown
  };
  // The conversions the library's messages use: %d %u %lld %llu %zu %p %s %c %%, and %#x
  // for a packed dtype (printf's checker sees an unsigned, which it is).
  static conversion parse(const char*& f) noexcept {
    const char* p = f + 1;
    conversion c = conversion::unknown;
    if (*p == '%') c = conversion::percent;
    else if (*p == 'd' || *p == 'i') c = conversion::int_;
    else if (*p == 'u') c = conversion::unsigned_;
    else if (*p == 'p') c = conversion::pointer;
    else if (*p == 's') c = conversion::string;
    else if (*p == 'c') c = conversion::character;
    else if (*p == '#' && p[1] == 'x') c = conversion::dtype, ++p;
    else if (*p == 'z' && p[1] == 'u') c = conversion::size, ++p;
    else if (*p == 'l' && p[1] == 'l' && (p[2] == 'd' || p[2] == 'i')) c = conversion::long_long, p += 2;
    else if (*p == 'l' && p[1] == 'l' && p[2] == 'u') c = conversion::unsigned_long_long, p += 2;
    else if (*p == '\0') return f = p - 1, conversion::unknown;
    f = p;
    return c;
  }

  // Bytes, not uint64_t: the unused tail stays uninitialised (free on the success paths)
  // and copying uninitialised bytes is well defined.
  void store(std::size_t i, std::uint64_t v) noexcept { std::memcpy(values_ + i * sizeof v, &v, sizeof v); }
  std::uint64_t load(std::size_t i) const noexcept {
    std::uint64_t v;
    std::memcpy(&v, values_ + i * sizeof v, sizeof v);
    return v;
  }

  const char* format_ = nullptr;
  errc code_ = errc::ok;
  std::uint32_t count_ = 0;
  unsigned char values_[max_values * sizeof(std::uint64_t)];
};
static_assert(sizeof(error) == 64, "an error is a code, a format and six values");

/// The exception thrown by the throwing forms. It is a std::invalid_argument, so generic
/// handlers catch it, and it keeps the errc for programs that dispatch on the cause.
class dlpack_error : public std::invalid_argument {
 public:
  explicit dlpack_error(const error& e) : std::invalid_argument(e.message().c_str()), code_(e.code()) {}
  dlpack_error(errc code, const char* message) : std::invalid_argument(message), code_(code) {}
  [[nodiscard]] errc code() const noexcept { return code_; }

 private:
  errc code_;
};

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

/// A char's byte for a message's "%d": 0..255 whatever char's signedness, so an order of
/// 0xC3 reads 195 on AArch64 (char unsigned) and on x86-64 (signed) alike.
constexpr int char_byte(char c) noexcept { return static_cast<unsigned char>(c); }

/// The throwing forms' failure path. Without exceptions (-fno-exceptions) it prints the
/// message to stderr and aborts; use the try_ forms in such programs.
[[noreturn]] inline void throw_error(const error& e) {
#if DLPM_HAS_EXCEPTIONS
  throw dlpack_error(e);
#else
  std::fprintf(stderr, "dlpack_mdspan: %s\n", e.message().c_str());
  std::abort();
#endif
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// result<T>: std::expected<T, error> in C++23, the library's stand-in (expected.hpp) in
/// C++20, whose value() of an error throws dlpack_error as throw_error does.
#if DLPM_USE_STD_EXPECTED
template <class T>
using result = std::expected<T, error>;
using unexpected_error = std::unexpected<error>;
#else
template <class T>
using result = detail::expected<T, error, detail::throw_error>;
using unexpected_error = detail::unexpected<error>;
#endif

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

template <class T>
T value_or_throw(result<T>&& r) {
  if (!r.has_value()) throw_error(r.error());
  return std::move(*r);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
