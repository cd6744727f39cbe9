// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Any valid DLPack tensor or strided mdspan as an MPI message buffer: a base address, a count
// and a datatype (a predefined one for a row-major compact tensor, else one committed derived
// datatype of nested hvectors, owned here), so MPI moves the elements where they lie, with no
// packing copy of ours.
//
// The message is the elements in row-major index order, whatever their layout: a transpose
// sent lands in a row-major array as the same logical matrix. The base address is element 0's
// (data + byte_offset, DLPack's meaning); the datatype's lower bound and extent are the bytes
// the elements reach, so negative strides place elements below it.
//
// Validation and admission are the core's, once per buffer: check_tensor, then plan_message
// (message_plan.hpp: whole-byte elements, memory MPI moves, and for a receive a writable
// layout that reaches no element twice; the walk over the elements, coalesce). This header
// adds what MPI itself needs: an initialized MPI and counts the MPI library can express. The
// datatype is built by dlpack_mdspan/mpi_datatype.h, which the C companion
// <dlpack_mdspan_mpi.h> shares.
#ifndef DLPACK_MDSPAN_MPI_HPP
#define DLPACK_MDSPAN_MPI_HPP

#include <dlpack_mdspan/dlpack_constants.hpp>
#include <dlpack_mdspan/device.hpp>
#include <dlpack_mdspan/dtype.hpp>
#include <dlpack_mdspan/error.hpp>
#include <dlpack_mdspan/export.hpp>
#include <dlpack_mdspan/message_plan.hpp>
#include <dlpack_mdspan/tensor_checks.hpp>

#include <dlpack_mdspan/mpi_datatype.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace dlpack_mdspan::mpi {

/// MPI-4 counts are MPI_Count (the large-count constructors); MPI-3's are int.
inline constexpr bool large_counts = DLPM_MPI_LARGE_COUNTS != 0;

/// Whether this MPI library moves CUDA device memory, asked at run time where the library can
/// say (Open MPI's MPIX_Query_cuda_support, MPICH's MPIX_GPU_query_support); false elsewhere.
inline bool cuda_aware() noexcept { return dlpm_mpi_cuda_aware() != 0; }

/// How a layout that is not compact row-major travels: `chosen` lets the library decide by its
/// coalesced loops (dlpm_mpi_packs: runs shorter than DLPM_MPI_PACK_RUN_BYTES are packed);
/// `derived` forces MPI's derived datatype, `packed` the library's pack. The default, for
/// sends and receives, is `derived`, as in 0.2.0: a packed send holds the elements as they
/// were when its buffer was made (a buffer kept for later sends, or a persistent request,
/// would send stale elements), and a packed receive's elements land only at
/// buffer::unpack() (or when the buffer goes). Pass `chosen` for a one-shot transfer.
enum class transfer : int { chosen = DLPM_MPI_CHOSEN, derived = DLPM_MPI_DERIVED, packed = DLPM_MPI_PACKED };

/// How one element travels (dlpm_mpi_element): `count` items of the predefined `type`, or,
/// for types MPI lacks (float16, bfloat16, fp8...), its bytes, which are never reduced.
using element_layout = dlpm_mpi_element;

/// What MPI's buffer arguments take for one tensor: `address()`, `count()`, `datatype()`.
/// A derived datatype is committed and owned: freed when this goes (unless MPI has been
/// finalized by then). A packed buffer owns its contiguous message: a send's is packed when
/// the buffer is made, a receive's is unpacked into the tensor by unpack(), or at the latest
/// when the buffer goes. Keep the buffer until every operation using it has completed.
class buffer {
 public:
  buffer() noexcept = default;
  explicit buffer(const dlpm_mpi_datatype& d) noexcept : d_(d) {}
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  buffer(buffer&& other) noexcept : d_(other.d_) { other.d_.derived = 0, other.d_.packing = nullptr; }
  buffer& operator=(buffer&& other) noexcept {
    if (this != &other) {
      dlpm_mpi_datatype_free(&d_);
      d_ = other.d_;
      other.d_.derived = 0, other.d_.packing = nullptr;
    }
    return *this;
  }
  ~buffer() { dlpm_mpi_datatype_free(&d_); }

  /// Element 0's address (data + byte_offset): MPI's `buf`.
  [[nodiscard]] void* address() const noexcept { return d_.address; }
  /// MPI's `count`: the items of a predefined type for a compact row-major tensor, 1 for a
  /// derived datatype, 0 for an empty tensor.
  [[nodiscard]] int count() const noexcept { return d_.count; }
  /// MPI's `datatype`.
  [[nodiscard]] MPI_Datatype datatype() const noexcept { return d_.datatype; }
  /// Whether datatype() is a derived datatype made (and freed) here.
  [[nodiscard]] bool derived() const noexcept { return d_.derived != 0; }
  /// Whether the library packs: address() is its own contiguous message of count() items.
  [[nodiscard]] bool packed() const noexcept { return d_.packing != nullptr; }
  /// A packed receive, once MPI has completed it (MPI_Recv returned, MPI_Wait on MPI_Irecv's
  /// request): the message unpacked into the tensor. Once; nothing for any other buffer.
  /// The destructor does it when it has not been called.
  void unpack() noexcept { dlpm_mpi_unpack(&d_); }
  /// How one element travels.
  [[nodiscard]] const element_layout& element() const noexcept { return d_.element; }

  /// datatype() for MPI_Reduce, MPI_Allreduce and the other predefined reductions, or why
  /// not: an element that travels as bytes (float16, bfloat16, fp8...) cannot be added by
  /// MPI, and MPI's predefined operations take predefined datatypes only (Open MPI refuses
  /// MPI_SUM on a derived one), so the tensor must be compact row-major.
  [[nodiscard]] result<MPI_Datatype> reduction_datatype() const noexcept {
    const char* refusal = dlpm_mpi_reduction_refusal(&d_);
    if (refusal == nullptr) return d_.datatype;
    if (!d_.element.reducible)
      return unexpected_error(error::format(errc::dtype_mismatch, "%s (%d bytes each)", refusal, d_.element.count));
    return unexpected_error(error(errc::non_compact_strides, refusal));
  }

 private:
  dlpm_mpi_datatype d_{};
};

/// A tensor admitted as a message (`receive`: to be received into), MPI initialized: the
/// core's check and plan_message, once.
[[nodiscard]] inline result<message_plan> admit(const DLTensor& t, std::uint64_t flags, bool receive) noexcept {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return unexpected_error(error(errc::invalid_argument, DLPM_MPI_REFUSAL_NOT_INITIALIZED));
  // Checked once; everything after reads the checked tensor (message_plan.hpp: the one admission).
  const auto checked = check_tensor(t, flags);
  if (!checked) return unexpected_error(checked.error());
  return plan_message(*checked, receive ? message_direction::receive : message_direction::send, cuda_aware());
}

/// dlpm_mpi_build's and dlpm_mpi_move's refusals as the library's errors: each outcome is
/// its errc (mpi_datatype.h).
static_assert(DLPM_MPI_COUNT_TOO_LARGE == static_cast<int>(errc::extent_overflow) &&
              DLPM_MPI_HOST_ONLY == static_cast<int>(errc::device_mismatch) &&
              DLPM_MPI_SHORT_MESSAGE == static_cast<int>(errc::shape_mismatch) &&
              DLPM_MPI_OUT_OF_MEMORY == static_cast<int>(errc::out_of_memory) &&
              DLPM_MPI_CALL_FAILED == static_cast<int>(errc::internal));
[[nodiscard]] inline error refusal(int outcome, const dlpm_mpi_datatype& d) noexcept {
  const auto code = static_cast<errc>(outcome);
  switch (outcome) {
    case DLPM_MPI_COUNT_TOO_LARGE:  // MPI-3's int counts (an extent, a run), or a packed message's int count
      return error::format(code, "MPI %d.%d: %s (%lld)%s", MPI_VERSION, MPI_SUBVERSION, d.refusal, d.value,
                           std::strcmp(d.refusal, DLPM_MPI_REFUSAL_PACKED_COUNT_TOO_LARGE) == 0
                               ? ""
                               : "; MPI-4's large-count constructors would take it");
    case DLPM_MPI_SHORT_MESSAGE: return error::format(code, "%s (%lld items arrived)", d.refusal, d.value);
    case DLPM_MPI_CALL_FAILED: return error::format(code, "%s with MPI error code %lld", d.refusal, d.value);
    default: return error(code, d.refusal);
  }
}

/// The buffer of a tensor, for sending (`receive` false: every valid layout, broadcast
/// strides included) or receiving (`receive` true: a writable layout that reaches each
/// element once). `flags` are a managed tensor's (READ_ONLY, IS_SUBBYTE_TYPE_PADDED); 0 for
/// a bare DLTensor. `how`: how a layout that is not compact row-major travels. MPI must be
/// initialized.
[[nodiscard]] inline result<buffer> make_buffer_from(const DLTensor& t, std::uint64_t flags, bool receive,
                                                     transfer how = transfer::derived) noexcept {
  const auto plan = admit(t, flags, receive);
  if (!plan) return unexpected_error(plan.error());
  dlpm_mpi_datatype d{};
  const int outcome = dlpm_mpi_build(plan->element0, plan->loops, plan->extents, plan->byte_steps, plan->block,
                                     static_cast<std::int64_t>(plan->itemsize), plan->lower_bound, plan->extent,
                                     dlpm_mpi_element_of(plan->dtype, plan->itemsize), receive, static_cast<dlpm_mpi_transfer>(how),
                                     is_host_accessible(t.device.device_type), &d);
  if (outcome != DLPM_MPI_BUILT) return unexpected_error(refusal(outcome, d));
  return buffer(d);
}

/// The buffer to send a tensor from: every valid layout, broadcast (zero) strides included.
[[nodiscard]] inline result<buffer> try_send_buffer(const DLTensor& t, std::uint64_t flags = 0, transfer how = transfer::derived) noexcept {
  return make_buffer_from(t, flags, false, how);
}
/// The buffer to receive into a tensor: writable (no READ_ONLY flag), each element reached once.
/// `how` transfer::chosen or packed: call unpack() once the receive has completed.
[[nodiscard]] inline result<buffer> try_receive_buffer(const DLTensor& t, std::uint64_t flags = 0,
                                                       transfer how = transfer::derived) noexcept {
  return make_buffer_from(t, flags, true, how);
}
/// A managed tensor's, its flags read.
[[nodiscard]] inline result<buffer> try_send_buffer(const DLManagedTensorVersioned& t, transfer how = transfer::derived) noexcept {
  return make_buffer_from(t.dl_tensor, t.flags, false, how);
}
[[nodiscard]] inline result<buffer> try_receive_buffer(const DLManagedTensorVersioned& t, transfer how = transfer::derived) noexcept {
  return make_buffer_from(t.dl_tensor, t.flags, true, how);
}

/// An mdspan's (any strided mapping, exported by to_dlpack_tensor).
template <class M>
  requires requires(const M& m) { try_to_dlpack_tensor(m); }
[[nodiscard]] result<buffer> try_send_buffer(const M& m, transfer how = transfer::derived) noexcept {
  const auto t = try_to_dlpack_tensor(m);
  if (!t) return unexpected_error(t.error());
  return make_buffer_from(t->get(), 0, false, how);
}
/// An mdspan of mutable elements only: a const view cannot be received into.
template <class M>
  requires(!std::is_const_v<typename M::element_type>) && requires(const M& m) { try_to_dlpack_tensor(m); }
[[nodiscard]] result<buffer> try_receive_buffer(const M& m, transfer how = transfer::derived) noexcept {
  const auto t = try_to_dlpack_tensor(m);
  if (!t) return unexpected_error(t.error());
  return make_buffer_from(t->get(), 0, true, how);
}

/// The fragments of the library's own transfer (send(), receive()): each fragment's bytes
/// (rounded down to whole elements, at least one; both sides of a transfer must use the same)
/// and how many batches of fragments a packing side packs into at once (a batch: one
/// fragment, or a transpose's DLPM_MPI_TILES_BATCH_BYTES of them).
struct fragments {
  std::int64_t bytes = DLPM_MPI_FRAGMENT_BYTES;
  int depth = DLPM_MPI_FRAGMENT_DEPTH;
};

/// Moves a tensor itself (dlpm_mpi_move): sends it to `peer` (`receive` false) or receives it
/// from `peer` into it, on `tag` of `comm`, and returns once the elements have left or
/// landed. Compact row-major tensors travel as one message; any other layout in host memory
/// in fragments of `f` (each its own message of `tag`: both sides use send()/receive() with
/// the same fragments), each a derived datatype where the contiguous runs are 256 bytes or
/// more, else the library's pack, pipelined; strided device memory is refused. Returns the
/// message's bytes.
[[nodiscard]] inline result<std::int64_t> move(const DLTensor& t, std::uint64_t flags, bool receive, int peer, int tag,
                                               MPI_Comm comm, fragments f = {}) noexcept {
  const auto plan = admit(t, flags, receive);
  if (!plan) return unexpected_error(plan.error());
  dlpm_mpi_datatype d{};
  const int outcome = dlpm_mpi_move(plan->element0, plan->loops, plan->extents, plan->byte_steps, plan->block,
                                    static_cast<std::int64_t>(plan->itemsize), dlpm_mpi_element_of(plan->dtype, plan->itemsize), receive,
                                    is_host_accessible(t.device.device_type), peer, tag, comm, f.bytes, f.depth, &d);
  if (outcome != DLPM_MPI_BUILT) return unexpected_error(refusal(outcome, d));
  return dlpm_mpi_message_bytes_(plan->loops, plan->extents, plan->block * static_cast<std::int64_t>(plan->itemsize));
}

/// Sends a tensor (every valid layout) to `dest`: the library's own transfer (move()).
[[nodiscard]] inline result<std::int64_t> try_send(const DLTensor& t, int dest, int tag, MPI_Comm comm, std::uint64_t flags = 0,
                                                   fragments f = {}) noexcept {
  return move(t, flags, false, dest, tag, comm, f);
}
/// Receives a tensor (writable, each element reached once) from `source`: move().
[[nodiscard]] inline result<std::int64_t> try_receive(const DLTensor& t, int source, int tag, MPI_Comm comm,
                                                      std::uint64_t flags = 0, fragments f = {}) noexcept {
  return move(t, flags, true, source, tag, comm, f);
}
/// The same with fragments and no flags (a bare DLTensor's: 0).
[[nodiscard]] inline result<std::int64_t> try_send(const DLTensor& t, int dest, int tag, MPI_Comm comm, fragments f) noexcept {
  return move(t, 0, false, dest, tag, comm, f);
}
[[nodiscard]] inline result<std::int64_t> try_receive(const DLTensor& t, int source, int tag, MPI_Comm comm,
                                                      fragments f) noexcept {
  return move(t, 0, true, source, tag, comm, f);
}
/// A managed tensor's, with its flags (a READ_ONLY one is refused as a receive's), as
/// try_send_buffer and try_receive_buffer take one.
[[nodiscard]] inline result<std::int64_t> try_send(const DLManagedTensorVersioned& m, int dest, int tag, MPI_Comm comm,
                                                   fragments f = {}) noexcept {
  return move(m.dl_tensor, m.flags, false, dest, tag, comm, f);
}
[[nodiscard]] inline result<std::int64_t> try_receive(const DLManagedTensorVersioned& m, int source, int tag, MPI_Comm comm,
                                                      fragments f = {}) noexcept {
  return move(m.dl_tensor, m.flags, true, source, tag, comm, f);
}
/// An mdspan's.
template <class M>
  requires requires(const M& m) { try_to_dlpack_tensor(m); }
[[nodiscard]] result<std::int64_t> try_send(const M& m, int dest, int tag, MPI_Comm comm, fragments f = {}) noexcept {
  const auto t = try_to_dlpack_tensor(m);
  if (!t) return unexpected_error(t.error());
  return move(t->get(), 0, false, dest, tag, comm, f);
}
template <class M>
  requires(!std::is_const_v<typename M::element_type>) && requires(const M& m) { try_to_dlpack_tensor(m); }
[[nodiscard]] result<std::int64_t> try_receive(const M& m, int source, int tag, MPI_Comm comm, fragments f = {}) noexcept {
  const auto t = try_to_dlpack_tensor(m);
  if (!t) return unexpected_error(t.error());
  return move(t->get(), 0, true, source, tag, comm, f);
}
/// The throwing forms of the library's own transfer (dlpack_error).
template <class T, class... Options>
std::int64_t send(const T& t, int dest, int tag, MPI_Comm comm, Options... options) {
  return dlpack_mdspan::detail::value_or_throw(try_send(t, dest, tag, comm, options...));
}
template <class T, class... Options>
std::int64_t receive(const T& t, int source, int tag, MPI_Comm comm, Options... options) {
  return dlpack_mdspan::detail::value_or_throw(try_receive(t, source, tag, comm, options...));
}

/// The throwing forms (dlpack_error).
template <class T, class... Options>
[[nodiscard]] buffer send_buffer(const T& t, Options... options) {
  return dlpack_mdspan::detail::value_or_throw(try_send_buffer(t, options...));
}
template <class T, class... Options>
[[nodiscard]] buffer receive_buffer(const T& t, Options... options) {
  return dlpack_mdspan::detail::value_or_throw(try_receive_buffer(t, options...));
}

}  // namespace dlpack_mdspan::mpi

#endif
