/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpack_mdspan for MPI, in C: any valid DLTensor as an MPI buffer (address, count, datatype):
 * MPI's derived datatype, or the library's packed message where the contiguous runs are short
 * (dlpm_mpi_packs). Header-only, compiled in your translation unit against your MPI: the
 * facade (libdlpack_mdspan_c) stays free of MPI, whose MPI_Datatype is an int in MPICH and a
 * pointer in Open MPI. The check and the admission are the facade's, one call
 * (dlpm_plan_message: the core's plan_message), and so is the walk over the elements; the
 * datatype is built by
 * <dlpack_mdspan/mpi_datatype.h>, as in C++. Link dlpack_mdspan::c and dlpack_mdspan::mpi.
 *
 *   dlpm_mpi_datatype b;
 *   if (dlpm_mpi_send_buffer(&tensor, 0, &b) != DLPM_OK) { fprintf(stderr, "%s\n", dlpm_mpi_error(&b)); ... }
 *   MPI_Send(b.address, b.count, b.datatype, 1, 0, MPI_COMM_WORLD);
 *   dlpm_mpi_datatype_free(&b);
 *   ... a receive: MPI_Recv(...); dlpm_mpi_unpack(&b); (a packed one lands now) dlpm_mpi_datatype_free(&b);
 */
#ifndef DLPACK_MDSPAN_MPI_H
#define DLPACK_MDSPAN_MPI_H

#include <dlpack_mdspan.h>
#include <dlpack_mdspan/mpi_datatype.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The admission both the buffers and the library's transfer start with: MPI initialized,
 * then one call that checks the tensor once and admits it (the core's plan_message). */
static inline dlpm_status dlpm_mpi_admit_(const DLTensor* tensor, uint64_t flags, int receive, dlpm_mpi_datatype* out,
                                          dlpm_message_plan* plan) {
  int32_t initialized = 0, finalized = 0;
  if (out == NULL) return DLPM_E_NULL_POINTER;
  out->derived = 0;
  out->packing = NULL;
  out->refusal = NULL;
  out->value = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    out->refusal = DLPM_MPI_REFUSAL_NOT_INITIALIZED;
    return DLPM_E_INVALID_ARGUMENT;
  }
  plan->version = DLPM_MESSAGE_PLAN_VERSION;
  return dlpm_plan_message(tensor, flags, receive ? DLPM_MESSAGE_RECEIVE : DLPM_MESSAGE_SEND, dlpm_mpi_cuda_aware(), plan);
}

/* Each outcome of dlpm_mpi_build and dlpm_mpi_move is the status it is reported as. */
typedef char dlpm_mpi_outcomes_are_statuses_[(DLPM_MPI_BUILT == DLPM_OK && DLPM_MPI_COUNT_TOO_LARGE == DLPM_E_EXTENT_OVERFLOW &&
                                              DLPM_MPI_HOST_ONLY == DLPM_E_DEVICE_MISMATCH &&
                                              DLPM_MPI_SHORT_MESSAGE == DLPM_E_SHAPE_MISMATCH &&
                                              DLPM_MPI_OUT_OF_MEMORY == DLPM_E_OUT_OF_MEMORY &&
                                              DLPM_MPI_CALL_FAILED == DLPM_E_INTERNAL)
                                                 ? 1
                                                 : -1];
static inline dlpm_status dlpm_mpi_outcome_(int outcome) { return (dlpm_status)outcome; }

/** C's own refusal (C++'s transfer is an enum class): a dlpm_mpi_transfer of another value. */
#define DLPM_MPI_REFUSAL_UNKNOWN_TRANSFER "the transfer is none of DLPM_MPI_CHOSEN, DLPM_MPI_DERIVED and DLPM_MPI_PACKED"

/** The buffer of `tensor` (`flags`: a managed tensor's, 0 for a bare one) to send (`receive`
 * 0: every valid layout, broadcast strides included) or receive into (`receive` nonzero:
 * writable, each element reached once), a layout that is not compact row-major travelling as
 * `how` says (DLPM_MPI_CHOSEN: the library decides, dlpm_mpi_packs). A packed receive
 * (`out->packing` non-NULL) is unpacked into the tensor by dlpm_mpi_unpack once MPI has
 * completed it, or at the latest by dlpm_mpi_datatype_free. A `how` that is none of the
 * three is DLPM_E_INVALID_ARGUMENT. On a refusal, dlpm_mpi_error(out) says why. */
static inline dlpm_status dlpm_mpi_buffer_as(const DLTensor* tensor, uint64_t flags, int receive, dlpm_mpi_transfer how,
                                             dlpm_mpi_datatype* out) {
  dlpm_message_plan plan;
  const dlpm_status s = dlpm_mpi_admit_(tensor, flags, receive, out, &plan);
  if (s != DLPM_OK) return s;
  if (how != DLPM_MPI_CHOSEN && how != DLPM_MPI_DERIVED && how != DLPM_MPI_PACKED) {
    out->refusal = DLPM_MPI_REFUSAL_UNKNOWN_TRANSFER;
    out->value = (long long)how;
    return DLPM_E_INVALID_ARGUMENT;
  }
  return dlpm_mpi_outcome_(dlpm_mpi_build(plan.element0, plan.loops, plan.extents, plan.byte_steps, plan.block,
                                          (int64_t)plan.itemsize, plan.lower_bound, plan.extent,
                                          dlpm_mpi_element_of(plan.dtype, plan.itemsize), receive, how,
                                          dlpm_is_host_accessible(tensor->device.device_type), out));
}

/** The library's own transfer (dlpm_mpi_move): sends `tensor` to `peer` (`receive` 0) or
 * receives it from `peer` (`receive` nonzero), on `tag` of `comm`, returning once its
 * elements have left or landed: compact row-major as one message; any other layout in host
 * memory in fragments of `fragment_bytes` (rounded down to whole elements; each fragment its
 * own message of `tag`: both sides call this with the same fragments; DLPM_MPI_FRAGMENT_BYTES
 * and DLPM_MPI_FRAGMENT_DEPTH are dlpm_mpi_send's and dlpm_mpi_recv's), each a derived
 * datatype where the contiguous runs are 256 bytes or more, else packed, pipelined in `depth`
 * batches (a batch: one fragment, a transpose's DLPM_MPI_TILES_BATCH_BYTES of them); strided
 * device memory is refused. `out` holds nothing afterwards;
 * on a refusal dlpm_mpi_error(out) says why. */
static inline dlpm_status dlpm_mpi_move_as(const DLTensor* tensor, uint64_t flags, int receive, int peer, int tag, MPI_Comm comm,
                                           int64_t fragment_bytes, int depth, dlpm_mpi_datatype* out) {
  dlpm_message_plan plan;
  const dlpm_status s = dlpm_mpi_admit_(tensor, flags, receive, out, &plan);
  if (s != DLPM_OK) return s;
  return dlpm_mpi_outcome_(dlpm_mpi_move(plan.element0, plan.loops, plan.extents, plan.byte_steps, plan.block,
                                         (int64_t)plan.itemsize, dlpm_mpi_element_of(plan.dtype, plan.itemsize), receive,
                                         dlpm_is_host_accessible(tensor->device.device_type), peer, tag, comm, fragment_bytes,
                                         depth, out));
}

/** Sends `tensor` (every valid layout) to `dest` by the library's own transfer, with the
 * default fragments. */
static inline dlpm_status dlpm_mpi_send(const DLTensor* tensor, uint64_t flags, int dest, int tag, MPI_Comm comm,
                                        dlpm_mpi_datatype* out) {
  return dlpm_mpi_move_as(tensor, flags, 0, dest, tag, comm, DLPM_MPI_FRAGMENT_BYTES, DLPM_MPI_FRAGMENT_DEPTH, out);
}

/** Receives `tensor` (writable, each element reached once) from `source` by the library's own
 * transfer, with the default fragments. */
static inline dlpm_status dlpm_mpi_recv(const DLTensor* tensor, uint64_t flags, int source, int tag, MPI_Comm comm,
                                        dlpm_mpi_datatype* out) {
  return dlpm_mpi_move_as(tensor, flags, 1, source, tag, comm, DLPM_MPI_FRAGMENT_BYTES, DLPM_MPI_FRAGMENT_DEPTH, out);
}

/** dlpm_mpi_buffer_as with the default, a derived datatype (DLPM_MPI_DERIVED), as in 0.2.0: a
 * send reads the elements when MPI sends them (a buffer kept for later sends, or a persistent
 * request, stays right), and a receive's elements land when MPI completes it, with no
 * dlpm_mpi_unpack to call. Ask dlpm_mpi_buffer_as for DLPM_MPI_CHOSEN for a one-shot
 * transfer the library may pack. */
static inline dlpm_status dlpm_mpi_buffer(const DLTensor* tensor, uint64_t flags, int receive, dlpm_mpi_datatype* out) {
  return dlpm_mpi_buffer_as(tensor, flags, receive, DLPM_MPI_DERIVED, out);
}

static inline dlpm_status dlpm_mpi_send_buffer(const DLTensor* tensor, uint64_t flags, dlpm_mpi_datatype* out) {
  return dlpm_mpi_buffer(tensor, flags, 0, out);
}

static inline dlpm_status dlpm_mpi_receive_buffer(const DLTensor* tensor, uint64_t flags, dlpm_mpi_datatype* out) {
  return dlpm_mpi_buffer(tensor, flags, 1, out);
}

/** `b`'s datatype for MPI's predefined reductions (MPI_Reduce, MPI_Allreduce...) in
 * *datatype, or why not, said by dlpm_mpi_error(b): DLPM_E_DTYPE_MISMATCH for elements that
 * travel as bytes (float16, bfloat16, fp8...), DLPM_E_NON_COMPACT_STRIDES for a layout that
 * needs a derived datatype (anything but compact row-major). */
static inline dlpm_status dlpm_mpi_reduction_datatype(dlpm_mpi_datatype* b, MPI_Datatype* datatype) {
  if (b == NULL || datatype == NULL) return DLPM_E_NULL_POINTER;
  b->refusal = dlpm_mpi_reduction_refusal(b);
  if (b->refusal == NULL) {
    *datatype = b->datatype;
    return DLPM_OK;
  }
  return b->element.reducible ? DLPM_E_NON_COMPACT_STRIDES : DLPM_E_DTYPE_MISMATCH;
}

/** The refusal of a NULL dlpm_mpi_datatype (the buffers' `out`, the reduction's `b`). */
#define DLPM_MPI_REFUSAL_NULL_BUFFER "the dlpm_mpi_datatype is NULL (null pointer argument)"

/** Why the last dlpm_mpi_*_buffer (or dlpm_mpi_reduction_datatype) call on `b` failed: its
 * own words where the refusal is MPI's (not initialized, counts, reductions) or `b` is NULL
 * (DLPM_MPI_REFUSAL_NULL_BUFFER: the call's DLPM_E_NULL_POINTER), else the facade's message
 * (dlpm_last_error: the core's admission, worded once for C, C++ and Python). */
static inline const char* dlpm_mpi_error(const dlpm_mpi_datatype* b) {
  if (b == NULL) return DLPM_MPI_REFUSAL_NULL_BUFFER;
  return b->refusal != NULL ? b->refusal : dlpm_last_error();
}

#ifdef __cplusplus
}
#endif

#endif
