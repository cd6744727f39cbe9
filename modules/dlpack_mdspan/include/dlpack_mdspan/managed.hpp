// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Owning DLPack tensors both ways: managed_tensor (adopt, view, release) and
// to_managed_tensor / to_managed_tensor_copy / to_legacy_managed_tensor.
//
// Ownership rules, in one place:
//   * A deleter runs exactly once, on every path, including failed adoption.
//   * A deleter may run on any thread and must not throw. Every call of a foreign deleter
//     goes through detail::call_deleter, which ends the program with a message naming the
//     exception if one does: the caller could not be told, and the tensor's ownership
//     would be lost halfway (an owner whose destructor throws does the same).
//   * Views borrow: they cannot be taken from a temporary managed_tensor.
#ifndef DLPACK_MDSPAN_MANAGED_HPP
#define DLPACK_MDSPAN_MANAGED_HPP

#include <dlpack_mdspan/concepts.hpp>
#include <dlpack_mdspan/config.hpp>
#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/export.hpp>
#include <dlpack_mdspan/import.hpp>
#include <dlpack_mdspan/layout_queries.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <typeinfo>
#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#endif
#include <new>
#include <type_traits>
#include <utility>

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Whether a legacy (unversioned) tensor may be written. DLManagedTensor has no flags, so
/// a consumer cannot know whether the producer allows writes. NumPy imports legacy tensors
/// read-only for that reason, and so do we unless the caller says it knows better.
enum class legacy_access : int {
  read_only = 0,  ///< default: set DLPACK_FLAG_BITMASK_READ_ONLY on the adopted tensor
  writable = 1,   ///< the caller knows the producer allows writes
};

/// Why a managed tensor may not be written. DLPack's READ_ONLY flag says only that it may
/// not; where this library set the flag itself it also remembers why, because the reason
/// decides what a legacy export, which has no flags, may carry (read_only_cause_of).
enum class read_only_cause : int {
  none = 0,              ///< not READ_ONLY
  flagged = 1,           ///< READ_ONLY as its producer or maker flagged it: a legacy export would drop the flag
  legacy_unknown = 2,    ///< imported from a legacy tensor, which cannot say: a legacy export loses nothing
  producer_forbids = 3,  ///< its producer forbids writes for a reason DLPack cannot carry (PyTorch's requires_grad)
};

class managed_tensor;

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// A callback that throws out of a DLPack deleter breaks the C contract it was handed
// under: nobody up the stack can catch it safely (C frames, Rust frames, a destructor).
[[noreturn]] DLPM_COLD inline void callback_threw(const char* callback, const char* type, const char* what) noexcept {
  std::fprintf(stderr,
               "dlpack_mdspan: %s threw a C++ exception (%s%s%s); DLPack callbacks must not throw, so the program is "
               "terminated\n",
               callback, type, what[0] != '\0' ? ": " : "", what);
  std::fflush(stderr);
  std::abort();
}

#if DLPM_HAS_EXCEPTIONS
// The type of the exception being handled, demangled where possible. Works for exceptions
// thrown by another C++ runtime too (a hermetic libdlpack_mdspan_c.so has its own), whose
// std::exception the catch clause below cannot recognise: the type_info layout is the ABI's.
DLPM_COLD inline void describe_current_exception(char* out, std::size_t size) noexcept {
  std::snprintf(out, size, "of unknown type");
#if __has_include(<cxxabi.h>)
  if (const std::type_info* type = abi::__cxa_current_exception_type(); type != nullptr) {
    int status = -1;
    char* readable = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
    std::snprintf(out, size, "%s", status == 0 && readable != nullptr ? readable : type->name());
    std::free(readable);
  }
#endif
}

// call_foreign's handlers, out of line: the type buffer and the demangling stay off the
// callers, so a deleter call (managed_tensor::reset, a moved-from owner) inlines to a test.
// Runs inside the handler, where the exception being handled is still current.
[[noreturn]] DLPM_COLD inline void current_callback_threw(const char* callback, const char* what) noexcept {
  char type[256];
  describe_current_exception(type, sizeof type);
  callback_threw(callback, type, what);
}
#endif

/// Runs `fn()`, a foreign callback, so that no exception escapes: one that does ends the
/// program through callback_threw, naming the exception's type and, for a std::exception
/// of this library's C++ runtime, its what().
template <class Fn>
inline void call_foreign(const char* callback, Fn&& fn) noexcept {
#if DLPM_HAS_EXCEPTIONS
  try {
    fn();
  } catch (const std::exception& e) {
    current_callback_threw(callback, e.what());
  } catch (...) {
    current_callback_threw(callback, "");
  }
#else
  (void)callback;
  fn();
#endif
}

/// Calls a managed tensor's deleter, if it has one, exactly as DLPack says; see call_foreign.
template <class Managed>
inline void call_deleter(Managed* p) noexcept {
  if (p != nullptr && p->deleter != nullptr) call_foreign("a DLPack tensor's deleter", [p] { p->deleter(p); });
}

// One heap block per managed tensor: the DLPack struct, the shape and strides it points
// to, and the owner that keeps the data alive (nanobind does the same). The deleter
// destroys the block, and with it the owner, exactly once.
template <class Managed, std::size_t Rank, class Owner>
struct owner_block {
  Managed managed;
  std::int64_t shape[Rank == 0 ? 1 : Rank];
  std::int64_t strides[Rank == 0 ? 1 : Rank];
  Owner owner;

  static void destroy(Managed* self) noexcept { delete static_cast<owner_block*>(self->manager_ctx); }
};

template <class Managed, std::size_t Rank, class Owner>
Managed* make_owner_block(const dlpack_tensor<Rank>& view, Owner&& owner, std::uint64_t flags) {
  using block = owner_block<Managed, Rank, std::remove_cvref_t<Owner>>;
  // The only allocation. If it or the owner's move throws, nothing was taken: the caller's
  // owner is still intact and is destroyed by the caller.
  auto* b = new block{Managed{}, {}, {}, std::forward<Owner>(owner)};
  DLTensor t = view.get();
  for (std::size_t r = 0; r < Rank; ++r) {
    b->shape[r] = view.shape()[r];
    b->strides[r] = view.strides()[r];
  }
  t.shape = Rank == 0 ? nullptr : b->shape;
  t.strides = Rank == 0 ? nullptr : b->strides;
  b->managed.dl_tensor = t;
  b->managed.manager_ctx = b;
  b->managed.deleter = &block::destroy;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    b->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    b->managed.flags = flags;
  } else {
    (void)flags;
  }
  return &b->managed;
}

// A sub-byte element type stored one per byte (an fp4 value in a whole byte) is the
// padded form, which only a managed tensor's flags can announce.
template <class T>
constexpr std::uint64_t subbyte_flags() noexcept {
  return stored_padded(dtype_v<T>, sizeof(T)) ? flag_is_subbyte_type_padded : 0;
}

// A versioned tensor this library made around another one, to remember what DLPack's flags
// cannot: why it is READ_ONLY. Known by its deleter (read_only_cause_of); a tensor of another
// copy of the library, or of anyone else, is never read as one. It wraps either a legacy
// tensor (legacy_to_versioned; dl_tensor is copied, its shape and strides still point into
// the legacy tensor) or a versioned one (forbid_writes). Its deleter runs the inner one.
struct provenance_bridge {
  DLManagedTensorVersioned managed;
  DLManagedTensor* legacy;              // the wrapped legacy tensor, or NULL
  DLManagedTensorVersioned* versioned;  // the wrapped versioned tensor, or NULL
  read_only_cause cause;                // why READ_ONLY was set here (none: a writable legacy tensor)
  const char* reason;                   // producer_forbids: what the producer forbids, kept (keep_reason)

  static void destroy(DLManagedTensorVersioned* self) noexcept {
    auto* b = static_cast<provenance_bridge*>(self->manager_ctx);
    DLManagedTensor* legacy = b->legacy;
    DLManagedTensorVersioned* versioned = b->versioned;
    delete b;
    call_deleter(legacy);
    call_deleter(versioned);
  }
  static provenance_bridge* of(const DLManagedTensorVersioned* t) noexcept {
    return t->deleter == &destroy ? static_cast<provenance_bridge*>(t->manager_ctx) : nullptr;
  }
};

// The reasons forbid_writes keeps, each text once (at most 191 bytes of it), for the process:
// an error keeps its %s values as pointers (error.hpp), so a refusal that names the reason,
// and read_only_cause_of's *reason, stay valid after the tensor goes. Producers pass one
// fixed clause per cause; past 64 texts the reason is a fixed one. Lock-free: a slot is
// taken once, by compare-and-swap, and never changes again.
inline constexpr std::size_t kept_reasons = 64;
inline const char* keep_reason(const char* text) noexcept {
  static std::atomic<const char*> slots[kept_reasons] = {};
  char clipped[192];
  std::snprintf(clipped, sizeof clipped, "%s", text);
  const std::size_t bytes = std::strlen(clipped) + 1;
  for (auto& slot : slots) {
    const char* held = slot.load(std::memory_order_acquire);
    if (held == nullptr) {
      char* copy = new (std::nothrow) char[bytes];
      if (copy == nullptr) return "its producer forbids writes";
      std::memcpy(copy, clipped, bytes);
      if (slot.compare_exchange_strong(held, copy, std::memory_order_acq_rel)) return copy;
      delete[] copy;  // another thread took the slot first: `held` is its text
    }
    if (std::strcmp(held, clipped) == 0) return held;
  }
  return "its producer forbids writes (this process keeps no more reasons)";
}

// The refusal of a tensor of another DLPack major version, whose `version` alone may be
// read (DLPack's rule): `who` names the caller ("" or "adopt: "), `fate` what became of it.
DLPM_COLD inline error other_major_version(const char* who, DLPackVersion v, const char* fate) noexcept {
  return error::format(errc::version_mismatch, "%sDLPack version %u.%u has major %u, this library speaks major %u; %s", who,
                       v.major, v.minor, v.major, static_cast<unsigned>(DLPACK_MAJOR_VERSION), fate);
}

inline bool same_tensor(const DLTensor& a, const DLTensor& b) noexcept {
  return a.data == b.data && a.device.device_type == b.device.device_type && a.device.device_id == b.device.device_id &&
         a.ndim == b.ndim && a.dtype.code == b.dtype.code && a.dtype.bits == b.dtype.bits && a.dtype.lanes == b.dtype.lanes &&
         a.shape == b.shape && a.strides == b.strides && a.byte_offset == b.byte_offset;
}

// The reverse: a legacy tensor that owns a versioned one (for legacy-only consumers).
struct versioned_bridge {
  DLManagedTensor managed;
  DLManagedTensorVersioned* versioned;

  static void destroy(DLManagedTensor* self) noexcept {
    auto* b = static_cast<versioned_bridge*>(self->manager_ctx);
    DLManagedTensorVersioned* versioned = b->versioned;
    delete b;
    call_deleter(versioned);
  }
};

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Wraps a legacy tensor as a versioned one; ownership moves into the result. On failure
/// (allocation) the legacy deleter has run and the error says why. NULL is an error.
inline result<DLManagedTensorVersioned*> legacy_to_versioned(DLManagedTensor* legacy, legacy_access access) noexcept {
  if (legacy == nullptr) return unexpected_error(error::format(errc::null_pointer, "legacy tensor is NULL"));
  auto* b = new (std::nothrow) detail::provenance_bridge{};
  if (b == nullptr) {
    detail::call_deleter(legacy);
    return unexpected_error(error::format(errc::out_of_memory, "out of memory wrapping a legacy DLManagedTensor"));
  }
  b->legacy = legacy;
  b->cause = access == legacy_access::read_only ? read_only_cause::legacy_unknown : read_only_cause::none;
  b->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  b->managed.manager_ctx = b;
  b->managed.deleter = &detail::provenance_bridge::destroy;
  b->managed.flags = access == legacy_access::read_only ? flag_read_only : 0;
  b->managed.dl_tensor = legacy->dl_tensor;
  return &b->managed;
}

/// Why `t` is READ_ONLY (read_only_cause::none when it is not). The cause is known where
/// this copy of the library set the flag (legacy_to_versioned, forbid_writes); any other
/// READ_ONLY tensor is read_only_cause::flagged. For producer_forbids, *reason (when not
/// NULL) receives what the producer forbids, kept for the process; else NULL.
/// Precondition: t is not NULL and of this library's major version.
[[nodiscard]] inline read_only_cause read_only_cause_of(const DLManagedTensorVersioned* t,
                                                         const char** reason = nullptr) noexcept {
  if (reason != nullptr) *reason = nullptr;
  if ((t->flags & flag_read_only) == 0) return read_only_cause::none;
  const detail::provenance_bridge* b = detail::provenance_bridge::of(t);
  if (b == nullptr || b->cause == read_only_cause::none) return read_only_cause::flagged;  // set by someone else
  if (reason != nullptr && b->cause == read_only_cause::producer_forbids) *reason = b->reason;
  return b->cause;
}

/// The refusal of a mutable view of a tensor READ_ONLY for `cause` (read_only_cause_of; or,
/// for a tensor another copy of the library made, the facade's dlpm_managed_read_only_cause,
/// as the Python casters ask it): errc::read_only, saying that a legacy tensor cannot say
/// whether it may be written and how to say it may, or what its producer forbids (`reason`,
/// which must outlive the error: read_only_cause_of's is kept for the process); for any
/// other cause, try_view's own words. managed_tensor::try_view refuses with it.
[[nodiscard]] DLPM_COLD inline error read_only_view_error(read_only_cause cause, const char* reason = nullptr) noexcept {
  if (cause == read_only_cause::legacy_unknown)
    return error::format(errc::read_only,
                         "view: the tensor is READ_ONLY: a legacy DLPack tensor cannot say whether it may be written (if "
                         "its producer allows writes, import it legacy_writable; C++: legacy_access::writable); or view it "
                         "with a const element type");
  if (cause == read_only_cause::producer_forbids && reason != nullptr)
    return error::format(errc::read_only, "view: the tensor is READ_ONLY because %s; view it with a const element type", reason);
  return detail::read_only_view_refusal();
}

/// Makes `t` READ_ONLY and remembers why: `cause` is read_only_cause::legacy_unknown (its
/// writability is unknown: a legacy export may carry it) or read_only_cause::producer_forbids
/// (`reason` says what the producer forbids, a clause that completes "the tensor is
/// READ_ONLY because ...": its first 191 bytes kept for the process, once per distinct text,
/// up to 64 texts, then a fixed one). legacy_unknown asked of a tensor this library already
/// made READ_ONLY because its producer forbids writes keeps that cause and its reason, so a
/// legacy export, which drops the flag, stays refused. (A READ_ONLY flag set elsewhere is the
/// caller's to judge: a re-export of a legacy import carries the flag it copied.) Ownership
/// moves into the result, a new tensor over the same memory whose deleter runs t's. On
/// failure t is still the caller's.
[[nodiscard]] inline result<DLManagedTensorVersioned*> forbid_writes(DLManagedTensorVersioned* t, read_only_cause cause,
                                                                     const char* reason = nullptr) noexcept {
  if (t == nullptr) return unexpected_error(error::format(errc::null_pointer, "forbid_writes: the tensor is NULL"));
  if (t->version.major != DLPACK_MAJOR_VERSION)
    return unexpected_error(detail::other_major_version("forbid_writes: ", t->version, "the tensor is still the caller's"));
  if (cause != read_only_cause::legacy_unknown && cause != read_only_cause::producer_forbids)
    return unexpected_error(error::format(errc::invalid_argument,
                                          "forbid_writes: the cause must be legacy_unknown (2) or producer_forbids (3), not %d",
                                          static_cast<int>(cause)));
  if (cause == read_only_cause::producer_forbids && (reason == nullptr || reason[0] == '\0'))
    return unexpected_error(error::format(errc::invalid_argument,
                                          "forbid_writes: producer_forbids needs a reason (what the producer forbids)"));
  if (cause == read_only_cause::legacy_unknown) {  // a producer_forbids cause recorded here stays, with its reason
    const char* recorded = nullptr;
    if (read_only_cause_of(t, &recorded) == read_only_cause::producer_forbids) {
      cause = read_only_cause::producer_forbids;
      reason = recorded;
    }
  }
  auto* b = new (std::nothrow) detail::provenance_bridge{};
  if (b == nullptr) return unexpected_error(error::format(errc::out_of_memory, "out of memory wrapping a tensor"));
  b->versioned = t;
  b->cause = cause;
  if (cause == read_only_cause::producer_forbids) b->reason = detail::keep_reason(reason);
  b->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  b->managed.manager_ctx = b;
  b->managed.deleter = &detail::provenance_bridge::destroy;
  b->managed.flags = t->flags | flag_read_only;
  b->managed.dl_tensor = t->dl_tensor;
  return &b->managed;
}

/// Wraps a versioned tensor as a legacy one for consumers that only speak legacy DLPack;
/// ownership moves into the result. Legacy tensors cannot say READ_ONLY, so a READ_ONLY
/// tensor is refused (errc::read_only) unless its cause is read_only_cause::legacy_unknown
/// (it came from a legacy tensor, which could not say either) or `allow_read_only` is set,
/// in which case the caller promises the consumer will not write. A tensor that
/// legacy_to_versioned made and nobody changed comes back as the original legacy tensor.
/// On failure the versioned tensor is still the caller's. Sub-byte padded tensors cannot
/// be expressed either (errc::invalid_argument).
inline result<DLManagedTensor*> versioned_to_legacy(DLManagedTensorVersioned* versioned, bool allow_read_only = false) noexcept {
  if (versioned == nullptr) return unexpected_error(error::format(errc::null_pointer, "versioned tensor is NULL"));
  // Only `version` may be read from a tensor of another major version (DLPack's rule).
  if (versioned->version.major != DLPACK_MAJOR_VERSION)
    return unexpected_error(
        detail::other_major_version("", versioned->version, "the tensor was not wrapped and is still the caller's"));
  // The one rule of what a legacy export may carry: a READ_ONLY flag whose cause the
  // legacy tensor cannot express is refused; a legacy tensor's unknown writability is what
  // a legacy tensor says anyway.
  const char* reason = nullptr;
  const read_only_cause cause = read_only_cause_of(versioned, &reason);
  if (!allow_read_only && cause == read_only_cause::flagged)
    return unexpected_error(error::format(errc::read_only,
                                          "the tensor is READ_ONLY and a legacy DLManagedTensor cannot carry that flag"));
  if (!allow_read_only && cause == read_only_cause::producer_forbids)
    return unexpected_error(error::format(errc::read_only,
                                          "the tensor is READ_ONLY because %s, and a legacy DLManagedTensor cannot carry that flag",
                                          reason));
  if ((versioned->flags & flag_is_subbyte_type_padded) != 0)
    return unexpected_error(error::format(errc::invalid_argument,
                                          "the tensor's sub-byte elements are padded, which a legacy DLManagedTensor cannot express"));
  // A legacy tensor that came in unchanged goes back out as itself: no allocation, and the
  // consumer gets the producer's own tensor.
  if (detail::provenance_bridge* in = detail::provenance_bridge::of(versioned);
      in != nullptr && in->legacy != nullptr && detail::same_tensor(in->managed.dl_tensor, in->legacy->dl_tensor)) {
    DLManagedTensor* legacy = std::exchange(in->legacy, nullptr);
    delete in;
    return legacy;
  }
  auto* b = new (std::nothrow) detail::versioned_bridge{};
  if (b == nullptr) return unexpected_error(error::format(errc::out_of_memory, "out of memory wrapping a DLManagedTensorVersioned"));
  b->versioned = versioned;
  b->managed.dl_tensor = versioned->dl_tensor;
  b->managed.manager_ctx = b;
  b->managed.deleter = &detail::versioned_bridge::destroy;
  return &b->managed;
}

/// Move-only owner of one DLManagedTensorVersioned. Destroying it (or resetting it, or
/// assigning over it) calls the deleter exactly once.
class managed_tensor {
 public:
  managed_tensor() noexcept = default;
  managed_tensor(const managed_tensor&) = delete;
  managed_tensor& operator=(const managed_tensor&) = delete;
  managed_tensor(managed_tensor&& other) noexcept : tensor_(std::exchange(other.tensor_, nullptr)) {}
  managed_tensor& operator=(managed_tensor&& other) noexcept {
    // other's tensor taken first, as std::unique_ptr does: the deleter of the old one may
    // destroy `other` (a managed_tensor inside the old tensor's owner).
    if (this != &other) detail::call_deleter(std::exchange(tensor_, std::exchange(other.tensor_, nullptr)));
    return *this;
  }
  ~managed_tensor() { reset(); }

  /// Takes ownership of `p`, whatever happens. A NULL deleter is allowed. If the major
  /// version is not ours, the deleter is called at once (no other field is read, as the
  /// DLPack spec requires) and errc::version_mismatch is returned. A newer minor version
  /// is accepted.
  [[nodiscard]] DLPM_HOT_INLINE static result<managed_tensor> try_adopt(DLManagedTensorVersioned* p) noexcept {
    if (p == nullptr) return unexpected_error(error::format(errc::null_pointer, "adopt: DLManagedTensorVersioned is NULL"));
    const DLPackVersion v = p->version;
    if (v.major != DLPACK_MAJOR_VERSION) {
      detail::call_deleter(p);
      return unexpected_error(detail::other_major_version("adopt: ", v, "the tensor was released"));
    }
    return managed_tensor(p);
  }
  [[nodiscard]] static managed_tensor adopt(DLManagedTensorVersioned* p) { return detail::value_or_throw(try_adopt(p)); }

  /// Takes ownership of a legacy tensor (pre-1.0 producers; NumPy 1.x, PyTorch 1.x). It is
  /// READ_ONLY unless `access` is legacy_access::writable; see legacy_access for why.
  [[nodiscard]] static result<managed_tensor> try_adopt_legacy(DLManagedTensor* p,
                                                               legacy_access access = legacy_access::read_only) noexcept {
    auto wrapped = legacy_to_versioned(p, access);
    if (!wrapped) return unexpected_error(wrapped.error());
    return managed_tensor(*wrapped);
  }
  [[nodiscard]] static managed_tensor adopt_legacy(DLManagedTensor* p, legacy_access access = legacy_access::read_only) {
    return detail::value_or_throw(try_adopt_legacy(p, access));
  }

  /// A validated view through the import rules, plus: a mutable element type on a
  /// READ_ONLY tensor is errc::read_only (whose message says why the tensor is READ_ONLY
  /// where this library set the flag: read_only_cause_of), and padded sub-byte storage is
  /// honoured. (dlpack_mdspan::try_view over the tensor and its flags.)
  template <pointer_mdspan M>
  [[nodiscard]] DLPM_HOT_INLINE result<M> try_view() const& noexcept DLPM_LIFETIMEBOUND {
    if (tensor_ == nullptr) [[unlikely]] return unexpected_error(empty_view_refusal());
    DLPM_IMPORTABLE_ASSERT(M);
    // The READ_ONLY refusal worded with the flag's cause, off the hot path.
    return detail::try_view_with<M>(tensor_->dl_tensor, tensor_->flags, [t = tensor_] {
      const char* reason = nullptr;
      return read_only_view_error(read_only_cause_of(t, &reason), reason);
    });
  }
  /// The same, with tensor_requirements (judged with the tensor's flags).
  template <pointer_mdspan M>
  [[nodiscard]] result<M> try_view(const tensor_requirements& requirements) const& noexcept DLPM_LIFETIMEBOUND {
    if (tensor_ == nullptr) return unexpected_error(empty_view_refusal());
    return dlpack_mdspan::try_view<M>(tensor_->dl_tensor, tensor_->flags, requirements);
  }
  /// Deleted: the view would dangle as soon as the temporary managed_tensor is destroyed.
  template <pointer_mdspan M>
  result<M> try_view() const&& = delete;
  template <pointer_mdspan M>
  result<M> try_view(const tensor_requirements&) const&& = delete;

  template <pointer_mdspan M>
  [[nodiscard]] DLPM_HOT_INLINE M view() const& DLPM_LIFETIMEBOUND {
    return detail::value_or_throw(try_view<M>());
  }
  template <pointer_mdspan M>
  [[nodiscard]] M view(const tensor_requirements& requirements) const& DLPM_LIFETIMEBOUND {
    return detail::value_or_throw(try_view<M>(requirements));
  }
  /// Deleted: the view would dangle as soon as the temporary managed_tensor is destroyed.
  template <pointer_mdspan M>
  M view() const&& = delete;
  template <pointer_mdspan M>
  M view(const tensor_requirements&) const&& = delete;

  /// The DLTensor (precondition: not empty).
  [[nodiscard]] const DLTensor& tensor() const noexcept DLPM_LIFETIMEBOUND { return tensor_->dl_tensor; }
  [[nodiscard]] std::uint64_t flags() const noexcept { return tensor_ ? tensor_->flags : 0; }
  [[nodiscard]] bool is_read_only() const noexcept { return (flags() & flag_read_only) != 0; }
  /// Why it is READ_ONLY (read_only_cause_of); none when empty or writable.
  [[nodiscard]] dlpack_mdspan::read_only_cause read_only_cause(const char** reason = nullptr) const noexcept {
    if (tensor_ == nullptr) {
      if (reason != nullptr) *reason = nullptr;
      return dlpack_mdspan::read_only_cause::none;
    }
    return dlpack_mdspan::read_only_cause_of(tensor_, reason);
  }
  [[nodiscard]] bool is_copied() const noexcept { return (flags() & flag_is_copied) != 0; }
  [[nodiscard]] DLPackVersion version() const noexcept { return tensor_ ? tensor_->version : DLPackVersion{0, 0}; }
  /// The raw pointer, still owned by *this.
  [[nodiscard]] DLManagedTensorVersioned* get() const noexcept { return tensor_; }
  [[nodiscard]] bool empty() const noexcept { return tensor_ == nullptr; }
  explicit operator bool() const noexcept { return tensor_ != nullptr; }

  /// Gives up ownership: the caller must eventually call the returned tensor's deleter.
  [[nodiscard]] DLManagedTensorVersioned* release() noexcept { return std::exchange(tensor_, nullptr); }

  /// Calls the deleter (if any) now and leaves *this empty.
  void reset() noexcept {
    detail::call_deleter(std::exchange(tensor_, nullptr));
  }

 private:
  explicit managed_tensor(DLManagedTensorVersioned* p) noexcept : tensor_(p) {}

  DLPM_COLD static error empty_view_refusal() noexcept {
    return error::format(errc::null_pointer, "view: the managed_tensor is empty");
  }
  DLManagedTensorVersioned* tensor_ = nullptr;
};

/// Hands an mdspan out as an owning DLManagedTensorVersioned. `owner` is any
/// move-constructible object that keeps the data alive (std::vector, std::unique_ptr<T[]>,
/// std::shared_ptr<void>, a user type); it is moved into the tensor and destroyed exactly
/// once, inside the deleter. Exactly one heap allocation. READ_ONLY is set for a const
/// element type, IS_SUBBYTE_TYPE_PADDED for a sub-byte type stored one per byte, plus
/// `extra_flags`. The device comes from the export rules (the accessor) unless given.
/// If anything fails, nothing leaks and the owner is destroyed exactly once (by the caller's
/// copy going out of scope).
template <strided_mdspan M, class Owner>
  requires std::is_move_constructible_v<std::remove_cvref_t<Owner>>
[[nodiscard]] result<managed_tensor> try_to_managed_tensor(const M& md, Owner&& owner, DLDevice device,
                                                           std::uint64_t extra_flags = 0) noexcept {
  dlpack_tensor<M::rank()> view = detail::export_access::unfilled<M::rank()>();
  error err;
  if (!detail::export_access::fill(md, device, view, &err)) return unexpected_error(err);
  const std::uint64_t flags =
      extra_flags | (std::is_const_v<typename M::element_type> ? flag_read_only : 0) |
      detail::subbyte_flags<std::remove_cv_t<typename M::element_type>>();
#if DLPM_HAS_EXCEPTIONS
  try {
#endif
    return managed_tensor::adopt(detail::make_owner_block<DLManagedTensorVersioned>(view, std::forward<Owner>(owner), flags));
#if DLPM_HAS_EXCEPTIONS
  } catch (const std::bad_alloc&) {
    return unexpected_error(error::format(errc::out_of_memory, "to_managed_tensor: out of memory"));
  } catch (...) {
    return unexpected_error(error::format(errc::invalid_argument, "to_managed_tensor: moving the owner threw"));
  }
#endif
}

template <strided_mdspan M, class Owner>
  requires std::is_move_constructible_v<std::remove_cvref_t<Owner>>
[[nodiscard]] result<managed_tensor> try_to_managed_tensor(const M& md, Owner&& owner, std::uint64_t extra_flags = 0) noexcept {
  return try_to_managed_tensor(md, std::forward<Owner>(owner), accessor_device(md.accessor()), extra_flags);
}

/// Throwing form: exceptions from the allocation or the owner's move propagate unchanged
/// (std::bad_alloc stays std::bad_alloc); export errors throw dlpack_error.
template <strided_mdspan M, class Owner>
  requires std::is_move_constructible_v<std::remove_cvref_t<Owner>>
[[nodiscard]] managed_tensor to_managed_tensor(const M& md, Owner&& owner, DLDevice device, std::uint64_t extra_flags = 0) {
  dlpack_tensor<M::rank()> view = detail::export_access::unfilled<M::rank()>();
  detail::export_access::fill_or_throw(md, device, view);
  const std::uint64_t flags =
      extra_flags | (std::is_const_v<typename M::element_type> ? flag_read_only : 0) |
      detail::subbyte_flags<std::remove_cv_t<typename M::element_type>>();
  return managed_tensor::adopt(detail::make_owner_block<DLManagedTensorVersioned>(view, std::forward<Owner>(owner), flags));
}

template <strided_mdspan M, class Owner>
  requires std::is_move_constructible_v<std::remove_cvref_t<Owner>>
[[nodiscard]] managed_tensor to_managed_tensor(const M& md, Owner&& owner, std::uint64_t extra_flags = 0) {
  return to_managed_tensor(md, std::forward<Owner>(owner), accessor_device(md.accessor()), extra_flags);
}

/// The legacy form, for consumers that only speak pre-1.0 DLPack (NumPy 1.24, PyTorch
/// 1.13): ownership of the returned DLManagedTensor passes to the caller. One allocation.
/// A legacy tensor cannot say READ_ONLY, so a const element type is refused at compile time.
template <strided_mdspan M, class Owner>
  requires std::is_move_constructible_v<std::remove_cvref_t<Owner>>
[[nodiscard]] DLManagedTensor* to_legacy_managed_tensor(const M& md, Owner&& owner) {
  static_assert(!std::is_const_v<typename M::element_type>,
                "to_legacy_managed_tensor: a legacy DLManagedTensor cannot carry READ_ONLY, so a const view cannot be "
                "handed out safely; use to_managed_tensor (versioned) instead");
  static_assert(detail::subbyte_flags<typename M::element_type>() == 0,
                "to_legacy_managed_tensor: padded sub-byte elements need the versioned IS_SUBBYTE_TYPE_PADDED flag");
  const auto view = to_dlpack_tensor(md);
  return detail::make_owner_block<DLManagedTensor>(view, std::forward<Owner>(owner), 0);
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

namespace dlpack_mdspan {
inline namespace DLPM_ABI {
namespace detail {

// Visits md's elements in row-major index order, passing each element's mapped offset.
template <class M, class F, class... I>
void for_each_offset_row_major(const M& md, F& f, I... i) {
  if constexpr (sizeof...(I) == M::rank()) {
    f(md.mapping()(i...));
  } else {
    for (typename M::index_type k = 0; k < md.extent(sizeof...(I)); ++k) for_each_offset_row_major(md, f, i..., k);
  }
}

// Runtime-rank form of owner_block: shape and strides trail the block, so any ndim still
// takes a single allocation.
template <class Owner>
struct dynamic_owner_block {
  DLManagedTensorVersioned managed;
  Owner owner;

  std::int64_t* dims() noexcept { return reinterpret_cast<std::int64_t*>(this + 1); }
  static std::size_t bytes(std::int32_t ndim) noexcept {
    return sizeof(dynamic_owner_block) + 2 * static_cast<std::size_t>(ndim) * sizeof(std::int64_t);
  }
  // Its memory, aligned for the owner however over-aligned (operator new alone gives
  // __STDCPP_DEFAULT_NEW_ALIGNMENT__); nullptr when there is none.
  static constexpr bool over_aligned = alignof(dynamic_owner_block) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  static void* allocate(std::int32_t ndim) noexcept {
    if constexpr (over_aligned) return ::operator new(bytes(ndim), std::align_val_t{alignof(dynamic_owner_block)}, std::nothrow);
    else return ::operator new(bytes(ndim), std::nothrow);
  }
  static void destroy(DLManagedTensorVersioned* self) noexcept {
    auto* b = static_cast<dynamic_owner_block*>(self->manager_ctx);
    b->~dynamic_owner_block();
    if constexpr (over_aligned) ::operator delete(static_cast<void*>(b), std::align_val_t{alignof(dynamic_owner_block)});
    else ::operator delete(static_cast<void*>(b));
  }
};
static_assert(alignof(DLManagedTensorVersioned) >= alignof(std::int64_t), "trailing dims stay aligned");

// The owner a block keeps for an owner argument of type O: O itself, or O::block_owner
// where O names one (an owner formed in the block from what the argument points to).
template <class O>
struct block_owner_of {
  using type = O;
};
template <class O>
  requires requires { typename O::block_owner; }
struct block_owner_of<O> {
  using type = typename O::block_owner;
};
template <class O>
using block_owner_t = typename block_owner_of<std::remove_cvref_t<O>>::type;

// A dynamic_owner_block with room for `ndim` trailing shape and strides entries, its owner
// made from `owner` (moved in, or made from a source) by direct initialisation, in place:
// an explicit constructor from a source serves, and the owner need not be movable; nullptr
// (the argument untouched) when out of memory.
template <class Owner, class Arg>
DLPM_HOT_INLINE inline dynamic_owner_block<Owner>* new_dynamic_block(std::int32_t ndim, Arg&& owner) noexcept {
  void* memory = dynamic_owner_block<Owner>::allocate(ndim);
  if (memory == nullptr) return nullptr;
  return ::new (memory) dynamic_owner_block<Owner>{DLManagedTensorVersioned{}, Owner(std::forward<Arg>(owner))};
}

// The block's managed tensor: `t`, this library's DLPack version, `flags`, the block's deleter.
template <class Owner>
DLPM_HOT_INLINE inline result<managed_tensor> seal_dynamic_block(dynamic_owner_block<Owner>* b, const DLTensor& t,
                                                                 std::uint64_t flags) noexcept {
  b->managed.dl_tensor = t;
  b->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  b->managed.flags = flags;
  b->managed.manager_ctx = b;
  b->managed.deleter = &dynamic_owner_block<Owner>::destroy;
  return managed_tensor::try_adopt(&b->managed);  // inlined, its version test folds away
}

// try_make_managed_tensor's refusals of its `order` argument, worded off the hot path.
DLPM_COLD inline error unknown_managed_order(char order) noexcept {
  return error::format(errc::invalid_argument,
                       "make_managed_tensor: order %d is not one of 'C' (row-major), 'F' (column-major) or 0 (explicit "
                       "strides as given)",
                       detail::char_byte(order));
}
DLPM_COLD inline error managed_order_needs_strides() noexcept {
  return error::format(errc::invalid_argument,
                       "make_managed_tensor: the strides are NULL and order is 0; say which compact layout they stand "
                       "for: 'C' (row-major) or 'F' (column-major)");
}
// Explicit strides that are not the compact layout `order` ('C' or 'F') names: the first
// dimension, from the innermost, whose stride differs. The tensor is valid and not empty.
DLPM_COLD inline error strides_not_in_order(const DLTensor& t, char order) noexcept {
  std::int64_t expected = 1;
  for (std::int32_t i = 0; i < t.ndim; ++i) {
    const std::int32_t r = order == 'C' ? t.ndim - 1 - i : i;
    if (t.shape[r] == 1) continue;
    if (t.strides[r] != expected)
      return error::format(errc::non_compact_strides,
                           "make_managed_tensor: order '%c' but strides[%d] = %lld where the %s layout has %lld (its "
                           "extent is %lld); pass order 0 to keep other strides as given",
                           order, r, static_cast<long long>(t.strides[r]), order == 'C' ? "row-major" : "column-major",
                           static_cast<long long>(expected), static_cast<long long>(t.shape[r]));
    expected = saturating_mul(expected, t.shape[r]);
  }
  return error::format(errc::non_compact_strides, "make_managed_tensor: the strides are not in order '%c'", order);
}

// The body of both try_make_managed_tensor forms. `order` is 0 (NULL strides mean
// row-major, explicit strides are kept), 'C' or 'F' (NULL strides become that layout's;
// explicit ones must be it), already checked by the caller. Inlined with a constant 0,
// the order tests fold away.
// `checked`, when given, receives what the validation learned (the element count, the
// span's indices), so that a caller needing the span does not validate again; it is left
// unwritten where the one-pass check did not accept the description.
template <class Owner>
DLPM_HOT_INLINE inline result<managed_tensor> make_managed_tensor(const DLTensor& description, Owner&& owner, std::uint64_t flags,
                                                                 char order, tensor_summary* checked = nullptr) noexcept {
  using block = dynamic_owner_block<block_owner_t<Owner>>;
  error err;
  // One pass on the success path; the ordered checks only word a failure.
  const structure_options opts{null_strides_policy::row_major, (flags & flag_is_subbyte_type_padded) != 0};
  std::int64_t numel = 0;
  bool row_major = false, empty = false;
  if (tensor_summary summary; check_structure(description, opts, summary, silent{})) {
    numel = summary.numel;
    row_major = summary.row_major;
    empty = numel == 0;
    if (checked != nullptr) *checked = summary;
  } else if (!structure_failure(description, opts, &err)) {
    return unexpected_error(err);
  } else {  // the worded check accepted what the silent one refused (the tests rule it out)
    for (std::int32_t r = 0; r < description.ndim; ++r) empty = empty || description.shape[r] == 0;
  }
  // An empty tensor's strides address nothing, so a producer's may be anything (INT64_MIN,
  // INT64_MAX, which overflow consumers' own stride arithmetic: PyTorch's). Its strides
  // leave canonical: the compact strides of `order` (row-major unless 'F'), computed below
  // exactly as for NULL strides.
  const std::int64_t* const given = empty ? nullptr : description.strides;
  // Explicit strides with an order: they must be that compact layout (extent-1 dimensions
  // may carry any stride; an empty tensor is compact), as dlpm_is_contiguous says.
  if (order != 0 && given != nullptr && !(order == 'C' ? row_major : is_compact_valid(description, numel, false)))
    return unexpected_error(strides_not_in_order(description, order));
  const std::int32_t ndim = description.ndim;
  block* const b = new_dynamic_block<block_owner_t<Owner>>(ndim, std::forward<Owner>(owner));
  if (b == nullptr) return unexpected_error(error::format(errc::out_of_memory, "make_managed_tensor: out of memory"));
  std::int64_t* shape = b->dims();
  std::int64_t* strides = shape + ndim;
  if (given != nullptr) {
    for (std::int32_t r = 0; r < ndim; ++r) {
      shape[r] = description.shape[r];
      strides[r] = given[r];
    }
  } else if (order == 'F') {
    compact_strides<stride_rule::column_major>(description.shape, ndim, strides, shape);
  } else {
    compact_strides<stride_rule::row_major>(description.shape, ndim, strides, shape);
  }
  DLTensor t = description;
  t.shape = ndim == 0 ? nullptr : shape;
  t.strides = ndim == 0 ? nullptr : strides;
  return seal_dynamic_block(b, t, flags);
}

// A managed tensor describing `description` as it stands, its shape and strides arrays
// not copied: they are the description's own, so `owner` must keep them alive and
// unchanged until it is released. Nothing is validated: the caller has checked the
// description, and it is in the form make_managed_tensor would copy unchanged (explicit
// strides, not empty, ndim > 0): the C facade's dlpm_managed_new_checked, whose exports an
// import then trusts by those very arrays (dlpm_check_prechecked). One allocation.
template <class Owner>
DLPM_HOT_INLINE inline result<managed_tensor> make_managed_tensor_sharing_arrays(const DLTensor& description, Owner&& owner,
                                                                                std::uint64_t flags) noexcept {
  auto* const b = new_dynamic_block<block_owner_t<Owner>>(0, std::forward<Owner>(owner));
  if (b == nullptr) return unexpected_error(error::format(errc::out_of_memory, "make_managed_tensor: out of memory"));
  return seal_dynamic_block(b, description, flags);
}

}  // namespace detail
}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

DLPM_EXPORT namespace dlpack_mdspan {
inline namespace DLPM_ABI {

/// Wraps a buffer described by `description` (any rank: the runtime counterpart of
/// to_managed_tensor, used by the C facade) with an owner. The description is validated
/// first (check_structure's rules); its shape and strides are copied (NULL strides become
/// explicit row-major ones, as DLPack >= 1.2 requires), so they need not outlive the call.
/// An empty tensor (an extent 0) gets those row-major strides whatever strides it was
/// given: they address nothing, and extreme ones break consumers.
/// One allocation. On failure no tensor exists and `owner` is untouched (not moved from).
/// An owner type that names a `block_owner` type is a source: the tensor keeps a
/// `block_owner` made from it in place (direct initialisation: the constructor may be
/// explicit, and the owner need not be movable) once the block is allocated, so a source
/// may point at the owner's values rather than carry them (the C facade's options).
template <class Owner>
  requires std::is_nothrow_move_constructible_v<std::remove_cvref_t<Owner>> &&
           std::is_nothrow_constructible_v<detail::block_owner_t<Owner>, std::remove_cvref_t<Owner>&&>
[[nodiscard]] DLPM_HOT_INLINE inline result<managed_tensor> try_make_managed_tensor(const DLTensor& description, Owner&& owner,
                                                                                    std::uint64_t flags = 0) noexcept {
  return detail::make_managed_tensor(description, std::forward<Owner>(owner), flags, 0);
}

/// The same, saying which compact layout the description's strides are (nanobind's
/// runtime `order`):
///   - 'C' or 'F': NULL strides stand for that layout, row-major or column-major, and the
///     tensor stores its explicit strides (never NULL: DLPack reads NULL as row-major).
///     Explicit strides must be that layout (extent-1 dimensions may carry any stride, an
///     empty tensor is compact, and leaves with that layout's strides), else
///     errc::non_compact_strides.
///   - 0: explicit strides are kept as given, whatever they are (but an empty tensor's,
///     which become row-major, as 'C' makes them); NULL strides are refused
///     (errc::invalid_argument): say 'C' or 'F', or use the form without `order`.
/// Any other `order` is errc::invalid_argument, checked before the description. The
/// computed strides are the running products of the extents, so they fit whenever the
/// element count does (a non-empty tensor whose count overflows is refused by the
/// validation, in either order); an empty tensor's saturate at INT64_MAX. One allocation.
/// On failure no tensor exists and `owner` is untouched (not moved from). `checked`, when
/// given, receives on success what the validation learned (check_structure's summary of the
/// description: the element count, the lowest and highest index), for a caller that needs
/// the tensor's span without validating it again; it may be left unwritten (then the
/// caller checks the tensor itself). An owner naming a `block_owner` type is a source, as above.
template <class Owner>
  requires std::is_nothrow_move_constructible_v<std::remove_cvref_t<Owner>> &&
           std::is_nothrow_constructible_v<detail::block_owner_t<Owner>, std::remove_cvref_t<Owner>&&>
[[nodiscard]] DLPM_HOT_INLINE inline result<managed_tensor> try_make_managed_tensor(const DLTensor& description, Owner&& owner,
                                                                                    std::uint64_t flags, char order,
                                                                                    tensor_summary* checked = nullptr) noexcept {
  if (order != 'C' && order != 'F' && order != 0) return unexpected_error(detail::unknown_managed_order(order));
  if (order == 0 && description.strides == nullptr) return unexpected_error(detail::managed_order_needs_strides());
  return detail::make_managed_tensor(description, std::forward<Owner>(owner), flags, order, checked);
}

/// A compact row-major copy of `md` in a new buffer, owned by the returned tensor, with
/// IS_COPIED set (the consumer may write it; it aliases nothing). For non-contiguous or
/// short-lived sources. Host memory only: the elements are read on the CPU.
template <strided_mdspan M>
[[nodiscard]] managed_tensor to_managed_tensor_copy(const M& md) {
  using value_type = std::remove_cv_t<typename M::element_type>;
  constexpr std::size_t rank = M::rank();
  static_assert(device_traits<typename M::accessor_type>::device_type == kDLCPU,
                "to_managed_tensor_copy reads elements on the host; copy device memory with the device's runtime");
  // Validate the shape first, through the view export (extents fit int64).
  const auto source = to_dlpack_tensor(md);
  // unique_ptr<T[]> rather than std::vector: vector<bool> has no contiguous data().
  const auto count = static_cast<std::size_t>(md.size());
  std::unique_ptr<value_type[]> buffer(count == 0 ? nullptr : new value_type[count]);
  std::size_t next = 0;
  auto append = [&](typename M::index_type offset) { buffer[next++] = md.accessor().access(md.data_handle(), offset); };
  if (count != 0) detail::for_each_offset_row_major(md, append);
  std::array<std::int64_t, rank> strides{};
  detail::compact_strides<stride_rule::row_major>(source.shape().data(), static_cast<std::int32_t>(rank), strides.data());
  void* data = static_cast<void*>(buffer.get());
  const auto view = detail::export_access::make<rank>(data, DLDevice{kDLCPU, 0}, dtype_v<value_type>, source.shape(), strides);
  return managed_tensor::adopt(detail::make_owner_block<DLManagedTensorVersioned>(
      view, std::move(buffer), flag_is_copied | detail::subbyte_flags<value_type>()));
}

}  // inline namespace DLPM_ABI
}  // namespace dlpack_mdspan

#endif
