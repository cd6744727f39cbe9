/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* dlpack_mdspan for MPI, in C: any valid DLTensor as an MPI buffer (address, count, datatype):
 * MPI's derived datatype, or the library's packed message where the contiguous runs are short
 * (dlpm_mpi_packs). Header-only, compiled in your translation unit against your MPI: the
 * facade (libdlpack_mdspan_c) stays free of MPI, whose MPI_Datatype is an int in MPICH and a
 * pointer in Open MPI. Every check is the facade's (dlpm_check_layout, dlpm_is_unique,
 * dlpm_byte_span, dlpm_storage_itemsize, dlpm_is_host_accessible), and so is the walk over
 * the elements (dlpm_coalesce); the datatype is built by
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

/** The buffer of `tensor` (`flags`: a managed tensor's, 0 for a bare one) to send (`receive`
 * 0: every valid layout, broadcast strides included) or receive into (`receive` nonzero:
 * writable, each element reached once), a layout that is not compact row-major travelling as
 * `how` says (DLPM_MPI_CHOSEN: the library decides, dlpm_mpi_packs). A packed receive
 * (`out->packing` non-NULL) is unpacked into the tensor by dlpm_mpi_unpack once MPI has
 * completed it, or at the latest by dlpm_mpi_datatype_free. On a refusal,
 * dlpm_mpi_error(out) says why. */
static inline dlpm_status dlpm_mpi_buffer_as(const DLTensor* tensor, uint64_t flags, int receive, dlpm_mpi_transfer how,
                                             dlpm_mpi_datatype* out) {
  int64_t strides[DLPM_MAX_NDIM], extents[DLPM_MAX_NDIM], numel = 0, begin = 0, end = 0, run = 0;
  int32_t unique = 0, initialized = 0, finalized = 0, modes = 0;
  size_t itemsize;
  dlpm_requirements req;
  dlpm_status s;
  char* element0;
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
  dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION);
  req.writable = receive != 0;
  if ((s = dlpm_check_layout(tensor, flags, &req, strides, DLPM_MAX_NDIM, &numel)) != DLPM_OK) return s;
  itemsize = dlpm_storage_itemsize(tensor->dtype, (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0);
  if (itemsize == 0) {
    out->refusal = DLPM_MPI_REFUSAL_SUBBYTE;
    return DLPM_E_SUBBYTE_NOT_VIEWABLE;
  }
  if (!dlpm_is_host_accessible(tensor->device.device_type) && !(tensor->device.device_type == kDLCUDA && dlpm_mpi_cuda_aware())) {
    out->refusal = DLPM_MPI_REFUSAL_DEVICE;
    return DLPM_E_DEVICE_MISMATCH;
  }
  if (receive) {
    if ((s = dlpm_is_unique(tensor, &unique)) != DLPM_OK) return s;
    if (!unique) {
      out->refusal = DLPM_MPI_REFUSAL_REACHED_TWICE;
      return DLPM_E_OVERLAPPING_STRIDES;
    }
  }
  if ((s = dlpm_byte_span(tensor, flags, &begin, &end)) != DLPM_OK) return s;
  /* strides, read by dlpm_check_layout, now holds the byte steps */
  if ((s = dlpm_coalesce(tensor, flags, extents, strides, DLPM_MAX_NDIM, &modes, &run)) != DLPM_OK) return s;
  element0 = numel == 0 ? (char*)tensor->data : (char*)tensor->data + tensor->byte_offset;
  switch (dlpm_mpi_build(element0, modes, extents, strides, run, (int64_t)itemsize, begin - (int64_t)tensor->byte_offset,
                         end - begin, dlpm_mpi_element_of(tensor->dtype, itemsize), receive, how,
                         dlpm_is_host_accessible(tensor->device.device_type), out)) {
    case DLPM_MPI_BUILT: return DLPM_OK;
    case DLPM_MPI_COUNT_TOO_LARGE: return DLPM_E_EXTENT_OVERFLOW;
    default: return DLPM_E_INTERNAL;
  }
}

/** dlpm_mpi_buffer_as with the defaults: a send as the library chooses (DLPM_MPI_CHOSEN), a
 * receive as a derived datatype (DLPM_MPI_DERIVED: its elements land when MPI completes it,
 * with no dlpm_mpi_unpack to call; ask dlpm_mpi_buffer_as for DLPM_MPI_CHOSEN to opt in). */
static inline dlpm_status dlpm_mpi_buffer(const DLTensor* tensor, uint64_t flags, int receive, dlpm_mpi_datatype* out) {
  return dlpm_mpi_buffer_as(tensor, flags, receive, receive ? DLPM_MPI_DERIVED : DLPM_MPI_CHOSEN, out);
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

/** Why the last dlpm_mpi_*_buffer (or dlpm_mpi_reduction_datatype) call on `b` failed: its
 * own words where the refusal is MPI's (sub-byte elements, device memory, a receive that
 * reaches an element twice, counts, reductions),
 * else the facade's message (dlpm_last_error). */
static inline const char* dlpm_mpi_error(const dlpm_mpi_datatype* b) {
  return b != NULL && b->refusal != NULL ? b->refusal : dlpm_last_error();
}

#ifdef __cplusplus
}
#endif

#endif
