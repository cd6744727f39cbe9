/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The MPI datatype of a validated strided tensor: the one builder that <dlpack_mdspan/mpi.hpp>
 * (C++, over the core's checks) and <dlpack_mdspan_mpi.h> (C, over the facade's) share. It is
 * compiled in the user's translation unit, because MPI_Datatype is the MPI library's own type
 * (an int in MPICH, a pointer in Open MPI) and so cannot cross the facade's ABI.
 *
 * The message is the elements in row-major index order. A row-major compact tensor is a count
 * of a predefined type; any other layout one committed derived datatype of nested hvectors
 * (innermost first; a mode of step -1 byte built from pairs instead: dlpm_mpi_mode_), whose
 * lower bound and extent are the bytes the elements reach relative to element 0, the base
 * address. Nothing here validates: the callers have. */
#ifndef DLPACK_MDSPAN_MPI_DATATYPE_H
#define DLPACK_MDSPAN_MPI_DATATYPE_H

#include <dlpack/dlpack.h>
#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI's MPIX_Query_cuda_support */
#endif
#endif

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** 1 when this MPI's counts are MPI_Count (MPI-4's large-count constructors), 0 when int. */
#if MPI_VERSION >= 4
#define DLPM_MPI_LARGE_COUNTS 1
#else
#define DLPM_MPI_LARGE_COUNTS 0
#endif

/** The words of MPI's own refusals, one wording in C, C++ and Python (dlpack_mdspan.mpi repeats
 * them; its test reads them from here). Which tensors may travel at all (whole-byte
 * elements, memory MPI moves, a writable receive that reaches each element once) is the
 * core's admission (message_plan.hpp, the facade's dlpm_plan_message), worded there once. */
#define DLPM_MPI_REFUSAL_NOT_INITIALIZED "MPI is not initialized (or already finalized): call MPI_Init first"
#define DLPM_MPI_REFUSAL_REDUCE_BYTES \
  "MPI has no type for these elements: they travel as bytes, which MPI's reductions cannot combine; reduce in a wider type"
#define DLPM_MPI_REFUSAL_REDUCE_DERIVED \
  "MPI's predefined reductions take predefined datatypes only, and this layout needs a derived one: reduce a compact row-major copy"

/** How one element travels: `count` items of the predefined `type`. Types MPI lacks (float16,
 * bfloat16, fp8/fp6, float128, complex32) travel as their bytes: `type` MPI_BYTE, `reducible` 0. */
typedef struct dlpm_mpi_element {
  MPI_Datatype type;
  int count;
  int reducible;
} dlpm_mpi_element;

/** An MPI buffer: MPI's `buf`, `count` and `datatype` arguments. `derived` nonzero: `datatype`
 * is committed and owned (dlpm_mpi_datatype_free). On a refusal `refusal` says why (a static
 * string) and `value` names the number involved, when there is one. */
typedef struct dlpm_mpi_datatype {
  void* address;
  int count;
  MPI_Datatype datatype;
  int derived;
  dlpm_mpi_element element;
  const char* refusal;
  long long value;
} dlpm_mpi_datatype;

/** What dlpm_mpi_build returns. */
enum { DLPM_MPI_BUILT = 0, DLPM_MPI_COUNT_TOO_LARGE = 1, DLPM_MPI_CALL_FAILED = 2 };

/** 1 when this MPI moves CUDA device memory, asked at run time where the library can say
 * (Open MPI's MPIX_Query_cuda_support, MPICH's MPIX_GPU_query_support), else 0. */
static inline int dlpm_mpi_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int supported = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) == MPI_SUCCESS && supported != 0;
#else
  return 0;
#endif
}

static inline MPI_Datatype dlpm_mpi_predefined(DLDataType d) {
  if (d.code == kDLInt || d.code == kDLUInt) {
    const int u = d.code == kDLUInt;
    switch (d.bits) {
      case 8: return u ? MPI_UINT8_T : MPI_INT8_T;
      case 16: return u ? MPI_UINT16_T : MPI_INT16_T;
      case 32: return u ? MPI_UINT32_T : MPI_INT32_T;
      case 64: return u ? MPI_UINT64_T : MPI_INT64_T;
      default: return MPI_DATATYPE_NULL;
    }
  }
  if (d.code == kDLFloat && d.bits == 32) return MPI_FLOAT;
  if (d.code == kDLFloat && d.bits == 64) return MPI_DOUBLE;
  if (d.code == kDLComplex && d.bits == 64) return MPI_C_FLOAT_COMPLEX;
  if (d.code == kDLComplex && d.bits == 128) return MPI_C_DOUBLE_COMPLEX;
  if (d.code == kDLBool && d.bits == 8) return MPI_C_BOOL;
  return MPI_DATATYPE_NULL;
}

/** One element of `dtype` stored in `itemsize` bytes: its predefined type (lanes > 1: that many
 * of them) when that type is exactly the element's bytes, else its bytes. */
static inline dlpm_mpi_element dlpm_mpi_element_of(DLDataType dtype, uint64_t itemsize) {
  dlpm_mpi_element e;
  const MPI_Datatype base = dlpm_mpi_predefined(dtype);
  int size = 0;
  if (base != MPI_DATATYPE_NULL && MPI_Type_size(base, &size) == MPI_SUCCESS && (uint64_t)size * dtype.lanes == itemsize) {
    e.type = base;
    e.count = (int)dtype.lanes;
    e.reducible = 1;
  } else {
    e.type = MPI_BYTE;
    e.count = (int)itemsize;
    e.reducible = 0;
  }
  return e;
}

static inline int dlpm_mpi_hvector_(int64_t count, int64_t block, int64_t stride, MPI_Datatype old, MPI_Datatype* out) {
#if MPI_VERSION >= 4
  return MPI_Type_create_hvector_c((MPI_Count)count, (MPI_Count)block, (MPI_Count)stride, old, out);
#else
  return MPI_Type_create_hvector((int)count, (int)block, (MPI_Aint)stride, old, out);
#endif
}

static inline int dlpm_mpi_hindexed_block_(int64_t count, int64_t block, const int64_t* displacements, MPI_Datatype old,
                                           MPI_Datatype* out) {
#if MPI_VERSION >= 4
  MPI_Count d[2] = {(MPI_Count)displacements[0], (MPI_Count)displacements[1]};
  return MPI_Type_create_hindexed_block_c((MPI_Count)count, (MPI_Count)block, d, old, out);
#else
  MPI_Aint d[2] = {(MPI_Aint)displacements[0], (MPI_Aint)displacements[1]};
  return MPI_Type_create_hindexed_block((int)count, (int)block, d, old, out);
#endif
}

static inline int dlpm_mpi_struct2_(const int64_t* blocks, const int64_t* displacements, const MPI_Datatype* types,
                                    MPI_Datatype* out) {
#if MPI_VERSION >= 4
  MPI_Count b[2] = {(MPI_Count)blocks[0], (MPI_Count)blocks[1]};
  MPI_Count d[2] = {(MPI_Count)displacements[0], (MPI_Count)displacements[1]};
  return MPI_Type_create_struct_c(2, b, d, types, out);
#else
  int b[2] = {(int)blocks[0], (int)blocks[1]};
  MPI_Aint d[2] = {(MPI_Aint)displacements[0], (MPI_Aint)displacements[1]};
  return MPI_Type_create_struct(2, b, d, types, out);
#endif
}

/** One mode: `count` blocks of `block` items of `old`, `step` bytes apart. An hvector, except
 * for a step of exactly -1 byte, which Open MPI (opal_datatype_add) reads as "the old type's
 * own extent" and so walks forwards: a reversed axis of 1-byte elements would move the wrong
 * bytes, and on a receive write past the tensor. Such a mode is built from pairs instead: an
 * hindexed_block of two blocks at 0 and -1, repeated `count / 2` times 2 bytes down (a -2-byte
 * step, which every MPI moves right), and for an odd count a struct adding the last block at
 * -(count - 1). Constant size, whatever the count; the same bytes in the same order. */
static inline int dlpm_mpi_mode_(int64_t count, int64_t block, int64_t step, MPI_Datatype old, MPI_Datatype* out) {
  static const int64_t pair_displacements[2] = {0, -1};
  MPI_Datatype pair = MPI_DATATYPE_NULL, pairs = MPI_DATATYPE_NULL;
  int rc;
  if (step != -1 || count < 2) return dlpm_mpi_hvector_(count, block, step, old, out);
  if ((rc = dlpm_mpi_hindexed_block_(2, block, pair_displacements, old, &pair)) != MPI_SUCCESS) return rc;
  rc = dlpm_mpi_hvector_(count / 2, 1, -2, pair, count % 2 == 0 ? out : &pairs);
  MPI_Type_free(&pair);
  if (rc != MPI_SUCCESS || count % 2 == 0) return rc;
  {
    const int64_t blocks[2] = {1, block}, displacements[2] = {0, -(count - 1)};
    const MPI_Datatype types[2] = {pairs, old};
    rc = dlpm_mpi_struct2_(blocks, displacements, types, out);
  }
  MPI_Type_free(&pairs);
  return rc;
}

static inline int dlpm_mpi_refuse_(dlpm_mpi_datatype* out, int outcome, const char* why, long long value) {
  out->refusal = why;
  out->value = value;
  return outcome;
}

/** The buffer of a tensor its caller has validated: element 0 at `element0`, its elements
 * as the core's coalesce gives them (C++ coalesce, C dlpm_coalesce: `modes` byte modes,
 * outermost first, in `extents` and `steps`, then a contiguous run of `run` elements; `run` 0
 * for an empty tensor), reaching the bytes [lower, lower + extent) relative to element 0.
 * Returns DLPM_MPI_BUILT, or DLPM_MPI_COUNT_TOO_LARGE (an MPI-3 int count cannot hold
 * `value`), or DLPM_MPI_CALL_FAILED (`value` is MPI's error code), with out->refusal saying
 * which. */
static inline int dlpm_mpi_build(void* element0, int32_t modes, const int64_t* extents, const int64_t* steps, int64_t run,
                                 int64_t lower, int64_t extent, dlpm_mpi_element element, dlpm_mpi_datatype* out) {
  const int64_t block = run * element.count; /* within the span's bytes: element.count <= itemsize */
  int32_t m;
  MPI_Datatype type = element.type, resized = MPI_DATATYPE_NULL;
  int rc = MPI_SUCCESS;
  out->address = element0;
  out->count = 0;
  out->datatype = element.type;
  out->derived = 0;
  out->element = element;
  out->refusal = NULL;
  out->value = 0;
  if (run == 0) return DLPM_MPI_BUILT; /* nothing is addressed */
  if (modes == 0 && block <= INT_MAX) { /* compact, row-major: a count of the predefined type */
    out->count = (int)block;
    return DLPM_MPI_BUILT;
  }
#if !DLPM_MPI_LARGE_COUNTS
  if (block > INT_MAX)
    return dlpm_mpi_refuse_(out, DLPM_MPI_COUNT_TOO_LARGE, "a contiguous run of items is beyond INT_MAX, and MPI-3 counts are int", block);
  for (m = 0; m < modes; ++m)
    if (extents[m] > INT_MAX)
      return dlpm_mpi_refuse_(out, DLPM_MPI_COUNT_TOO_LARGE, "an extent is beyond INT_MAX, and MPI-3 counts are int", extents[m]);
#endif
  /* Nested hvectors, innermost first; each intermediate freed once the next holds it. */
  if (modes == 0) rc = dlpm_mpi_hvector_(1, block, 0, type, &type); /* a compact tensor past INT_MAX items */
  for (m = modes - 1; m >= 0 && rc == MPI_SUCCESS; --m) {
    MPI_Datatype next = MPI_DATATYPE_NULL;
    rc = dlpm_mpi_mode_(extents[m], m == modes - 1 ? block : 1, steps[m], type, &next);
    if (type != element.type) MPI_Type_free(&type);
    type = next;
  }
  if (rc != MPI_SUCCESS) return dlpm_mpi_refuse_(out, DLPM_MPI_CALL_FAILED, "building the derived datatype failed", rc);
  rc = MPI_Type_create_resized(type, (MPI_Aint)lower, (MPI_Aint)extent, &resized);
  MPI_Type_free(&type);
  if (rc != MPI_SUCCESS) return dlpm_mpi_refuse_(out, DLPM_MPI_CALL_FAILED, "MPI_Type_create_resized failed", rc);
  if ((rc = MPI_Type_commit(&resized)) != MPI_SUCCESS) {
    MPI_Type_free(&resized);
    return dlpm_mpi_refuse_(out, DLPM_MPI_CALL_FAILED, "MPI_Type_commit failed", rc);
  }
  out->datatype = resized;
  out->count = 1;
  out->derived = 1;
  return DLPM_MPI_BUILT;
}

/** Why `d` cannot be handed to MPI's predefined reductions (MPI_Reduce, MPI_Allreduce...), or
 * NULL when d->datatype can: the elements must have an MPI type (not travel as bytes), and
 * the layout must need no derived datatype (MPI's predefined operations take predefined
 * datatypes only; Open MPI refuses MPI_SUM on a derived one). The rule of C++'s
 * buffer::reduction_datatype() and the C companion's dlpm_mpi_reduction_datatype(). */
static inline const char* dlpm_mpi_reduction_refusal(const dlpm_mpi_datatype* d) {
  if (!d->element.reducible) return DLPM_MPI_REFUSAL_REDUCE_BYTES;
  if (d->derived) return DLPM_MPI_REFUSAL_REDUCE_DERIVED;
  return NULL;
}

/** Frees a derived datatype (unless MPI is finalized: then MPI freed it); idempotent. */
static inline void dlpm_mpi_datatype_free(dlpm_mpi_datatype* d) {
  int finalized = 0;
  if (d == NULL || !d->derived) return;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Type_free(&d->datatype);
  d->derived = 0;
  d->datatype = MPI_DATATYPE_NULL;
}

#ifdef __cplusplus
}
#endif

#endif
