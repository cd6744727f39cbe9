/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The MPI datatype of a validated strided tensor: the one builder that <dlpack_mdspan/mpi.hpp>
 * (C++, over the core's checks) and <dlpack_mdspan_mpi.h> (C, over the facade's) share. It is
 * compiled in the user's translation unit, because MPI_Datatype is the MPI library's own type
 * (an int in MPICH, a pointer in Open MPI) and so cannot cross the facade's ABI.
 *
 * The message is the elements in row-major index order. A row-major compact tensor is a count
 * of a predefined type; any other layout either the library's own packed message (a count of
 * the predefined type at memory the buffer owns: dlpm_mpi_packs chooses, dlpm_mpi_copy packs
 * and unpacks) or one committed derived datatype of nested hvectors (innermost first; a mode
 * of step -1 byte built from pairs instead: dlpm_mpi_mode_), whose lower bound and extent are
 * the bytes the elements reach relative to element 0, the base address. Nothing here
 * validates: the callers have. */
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
#include <stdlib.h>
#include <string.h>
/* The tiles' register transposes: dlpm_mpi_square4_ (SSE2) where the compiler targets SSE2,
 * dlpm_mpi_squares_ (AVX2, chosen at run time by the processor) where it can compile a
 * function for AVX2 (GCC and clang on x86); never in a device pass. Either may be defined 0
 * before this header to take it out (the tests build the portable paths so). */
#ifndef DLPM_MPI_SQUARE4_
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#define DLPM_MPI_SQUARE4_ 1
#else
#define DLPM_MPI_SQUARE4_ 0
#endif
#endif
#ifndef DLPM_MPI_SQUARE8_
#if DLPM_MPI_SQUARE4_ && (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__NVCOMPILER)
#define DLPM_MPI_SQUARE8_ 1
#else
#define DLPM_MPI_SQUARE8_ 0
#endif
#endif
#if DLPM_MPI_SQUARE4_
#include <emmintrin.h>
#endif
#if DLPM_MPI_SQUARE8_
#include <immintrin.h>
#endif

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
  "MPI's predefined reductions take a count of predefined items, and this tensor travels as a derived datatype (a layout other than compact row-major, or a count beyond INT_MAX): reduce a compact row-major copy, in parts of at most INT_MAX items"
#define DLPM_MPI_REFUSAL_PACKED_COUNT_TOO_LARGE \
  "a packed message's count is beyond INT_MAX, the int count the library sends it with: send it as its derived datatype"
#define DLPM_MPI_REFUSAL_RUN_TOO_LARGE "a contiguous run of items is beyond INT_MAX, and MPI-3 counts are int"
#define DLPM_MPI_REFUSAL_EXTENT_TOO_LARGE "an extent is beyond INT_MAX, and MPI-3 counts are int"

/** How one element travels: `count` items of the predefined `type`. Types MPI lacks (float16,
 * bfloat16, fp8/fp6, float128, complex32) travel as their bytes: `type` MPI_BYTE, `reducible` 0. */
typedef struct dlpm_mpi_element {
  MPI_Datatype type;
  int count;
  int reducible;
} dlpm_mpi_element;

/** How a layout that is not compact row-major travels: DLPM_MPI_CHOSEN lets
 * dlpm_mpi_packs decide; DLPM_MPI_DERIVED, the default of every API, is the derived
 * datatype; DLPM_MPI_PACKED the library's pack (benchmarks and tests compare the two). */
typedef enum dlpm_mpi_transfer { DLPM_MPI_CHOSEN = 0, DLPM_MPI_DERIVED = 1, DLPM_MPI_PACKED = 2 } dlpm_mpi_transfer;

/** A packed buffer's own memory (dlpm_mpi_datatype.packing): the tensor's coalesced loops,
 * and the message, the elements in row-major index order, contiguous. Owned by the buffer. */
typedef struct dlpm_mpi_packing {
  char* tensor;          /* element 0 of the tensor */
  char* message;         /* the contiguous message: MPI's buf */
  int32_t modes;         /* the coalesced modes, outermost first, in extents and steps (bytes) */
  int64_t* extents;
  int64_t* steps;
  int64_t run_bytes;     /* the innermost contiguous run, in bytes */
  int64_t item;          /* one element's bytes */
  int unpack_pending;    /* a receive whose message has not been unpacked into the tensor yet */
  size_t bytes;          /* the whole allocation's bytes (this header, the loops, the message) */
} dlpm_mpi_packing;

/** An MPI buffer: MPI's `buf`, `count` and `datatype` arguments. `derived` nonzero: `datatype`
 * is committed and owned (dlpm_mpi_datatype_free). `packing` non-NULL: the library packs, and
 * `address` is its own contiguous message of `count` predefined items (a send's packed when
 * built; a receive's unpacked into the tensor by dlpm_mpi_unpack, or at the latest by
 * dlpm_mpi_datatype_free). On a refusal `refusal` says why (a static string) and `value`
 * names the number involved, when there is one. */
typedef struct dlpm_mpi_datatype {
  void* address;
  int count;
  MPI_Datatype datatype;
  int derived;
  dlpm_mpi_element element;
  const char* refusal;
  long long value;
  dlpm_mpi_packing* packing;
} dlpm_mpi_datatype;

/** What dlpm_mpi_build and dlpm_mpi_move return, each the status it is reported as (the
 * facade's dlpm_status, C++'s errc: the C companion and mpi.hpp check that the numbers
 * agree): built (DLPM_OK); a count beyond MPI's int (DLPM_E_EXTENT_OVERFLOW);
 * DLPM_MPI_PACKED asked for memory the host does not address (DLPM_E_DEVICE_MISMATCH); a
 * received fragment shorter than its place: the two sides' messages differ
 * (DLPM_E_SHAPE_MISMATCH); memory for a packed message or the fragments could not be had
 * (DLPM_E_OUT_OF_MEMORY); an MPI call failed, `value` its error code (DLPM_E_INTERNAL, which
 * nothing else in the library returns). */
enum {
  DLPM_MPI_BUILT = 0,
  DLPM_MPI_COUNT_TOO_LARGE = 2,
  DLPM_MPI_HOST_ONLY = 5,
  DLPM_MPI_SHORT_MESSAGE = 13,
  DLPM_MPI_OUT_OF_MEMORY = 30,
  DLPM_MPI_CALL_FAILED = 31
};

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

/* ---- The library's pack: the one copy between a tensor's places and its message -------- */

#if defined(__GNUC__) || defined(__clang__)
#define DLPM_MPI_INLINE_ __attribute__((always_inline)) inline
#else
#define DLPM_MPI_INLINE_ inline
#endif

/* `n` elements of `item` bytes: to[i * to_step] = from[i * from_step]. Inlined with a constant
 * `item` (DLPM_MPI_BY_ITEM_), so each element is one load and one store; the contiguous side
 * (the message's, whose step is `item`) gets its own loop, which compilers vectorize. */
static DLPM_MPI_INLINE_ void dlpm_mpi_line_(char* to, int64_t to_step, const char* from, int64_t from_step, int64_t n,
                                            int64_t item) {
  int64_t i;
  if (to_step == item)
    for (i = 0; i < n; ++i) memcpy(to + i * item, from + i * from_step, (size_t)item);
  else if (from_step == item)
    for (i = 0; i < n; ++i) memcpy(to + i * to_step, from + i * item, (size_t)item);
  else
    for (i = 0; i < n; ++i) memcpy(to + i * to_step, from + i * from_step, (size_t)item);
}

#if DLPM_MPI_SQUARE4_
/* Every other 4-byte element packed (every other column: the line at a step of 8 bytes),
 * `n` of them into `to`: two 16-byte loads, the even floats shuffled out, one store. The
 * loads read the odd elements between them too, never past the last element (the last four,
 * or fewer, take the element loop). The line of dlpm_mpi_copy only, not the tiles' (kept
 * apart so that the tiles' loop stays as tight as it was). */
static DLPM_MPI_INLINE_ void dlpm_mpi_evens4_(char* to, const char* from, int64_t n) {
  int64_t i;
  for (i = 0; i + 5 <= n; i += 4) {
    const __m128 x = _mm_loadu_ps((const float*)(from + i * 8)), y = _mm_loadu_ps((const float*)(from + i * 8 + 16));
    _mm_storeu_ps((float*)(to + i * 4), _mm_shuffle_ps(x, y, _MM_SHUFFLE(2, 0, 2, 0)));
  }
  for (; i < n; ++i) memcpy(to + i * 4, from + i * 8, 4);
}

/* A whole `tile` x `tile` tile of 4-byte elements whose source runs along `a` and destination
 * along `b` (from_a == to_b == 4, the callers' plain transpose): 4 x 4 squares, each four
 * 16-byte loads transposed in registers and four 16-byte stores, the squares `a` innermost so
 * that each source line is read whole at once (element by element, a tile's source lines,
 * a large power of two apart, share one L1 set and are read again for each `a`). */
static DLPM_MPI_INLINE_ void dlpm_mpi_square4_(char* to, int64_t to_a, const char* from, int64_t from_b, int64_t tile) {
  int64_t a, b;
  for (b = 0; b < tile; b += 4)
    for (a = 0; a < tile; a += 4) {
      const char* f = from + a * 4 + b * from_b;
      char* o = to + a * to_a + b * 4;
      const __m128i r0 = _mm_loadu_si128((const __m128i*)f), r1 = _mm_loadu_si128((const __m128i*)(f + from_b)),
                    r2 = _mm_loadu_si128((const __m128i*)(f + 2 * from_b)),
                    r3 = _mm_loadu_si128((const __m128i*)(f + 3 * from_b));
      const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3), t2 = _mm_unpackhi_epi32(r0, r1),
                    t3 = _mm_unpackhi_epi32(r2, r3);
      _mm_storeu_si128((__m128i*)o, _mm_unpacklo_epi64(t0, t1));
      _mm_storeu_si128((__m128i*)(o + to_a), _mm_unpackhi_epi64(t0, t1));
      _mm_storeu_si128((__m128i*)(o + 2 * to_a), _mm_unpacklo_epi64(t2, t3));
      _mm_storeu_si128((__m128i*)(o + 3 * to_a), _mm_unpackhi_epi64(t2, t3));
    }
}
#endif

#if DLPM_MPI_SQUARE8_
/* 1 when this processor runs AVX2 (compiled for it, or asked: GCC's and clang's cpu model,
 * which also checks that the OS saves the ymm registers). */
static inline int dlpm_mpi_avx2_(void) {
#if defined(__AVX2__)
  return 1;
#else
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
#endif
}

/* A loop of the squares unrolled whole (its trip count a constant once inlined), so that
 * their arrays of rows are registers: clang takes its own pragma (for GCC's it left the loops
 * rolled, every row in memory: a 256 x 256 float32 transpose in cache took 2x the time). */
#if defined(__clang__)
#define DLPM_MPI_UNROLL_ _Pragma("clang loop unroll(full)")
#else
#define DLPM_MPI_UNROLL_ _Pragma("GCC unroll 32")
#endif

/* x and y interleaved by `width`-byte pieces (1, 2, 4 or 8) within each 16-byte lane: the
 * lanes' low halves (`high` 0) or their high ones. */
__attribute__((target("avx2"), always_inline)) static inline __m256i dlpm_mpi_interleave_(__m256i x, __m256i y, int64_t width,
                                                                                          int high) {
  switch (width) {
    case 1: return high ? _mm256_unpackhi_epi8(x, y) : _mm256_unpacklo_epi8(x, y);
    case 2: return high ? _mm256_unpackhi_epi16(x, y) : _mm256_unpacklo_epi16(x, y);
    case 4: return high ? _mm256_unpackhi_epi32(x, y) : _mm256_unpacklo_epi32(x, y);
    default: return high ? _mm256_unpackhi_epi64(x, y) : _mm256_unpacklo_epi64(x, y);
  }
}

/* One round of dlpm_mpi_lanes_: the n rows `in` paired in order and interleaved by `width`
 * bytes into `out` (a perfect shuffle: the pair i's low halves to i, its high halves to
 * i + n / 2). */
__attribute__((target("avx2"), always_inline)) static inline void dlpm_mpi_round_(const __m256i* in, __m256i* out, int64_t n,
                                                                                 int64_t width) {
  int64_t i;
  DLPM_MPI_UNROLL_
  for (i = 0; i < n / 2; ++i) {
    out[i] = dlpm_mpi_interleave_(in[2 * i], in[2 * i + 1], width, 0);
    out[i + n / 2] = dlpm_mpi_interleave_(in[2 * i], in[2 * i + 1], width, 1);
  }
}

/* n = 16 / item rows of `item`-byte elements (1, 2, 4, 8 or 16), 32 bytes each (the source's
 * lines `from_b` apart), transposed as n x n squares within the 16-byte lanes: log2 n rounds
 * of interleaves (dlpm_mpi_round_: rows paired by `item` bytes, then by twice as many, up to
 * 8), each round a perfect shuffle, which leaves column c in register bitrev(c). out[c] holds
 * the rows' column c (c < n) in its low lane and their column c + n in its high lane.
 * Inlined with `item` a constant, the loops unroll (DLPM_MPI_UNROLL_) and the arrays stay in
 * registers; the rounds go back and forth between two arrays. */
__attribute__((target("avx2"), always_inline)) static inline void dlpm_mpi_lanes_(const char* from, int64_t from_b, int64_t item,
                                                                                 __m256i* out) {
  static const unsigned char bitrev[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  const int64_t n = 16 / item, rounds = item == 1 ? 4 : item == 2 ? 3 : item == 4 ? 2 : item == 8 ? 1 : 0;
  __m256i r[16], t[16];
  const __m256i* last = rounds % 2 ? t : r;
  int64_t i;
  DLPM_MPI_UNROLL_
  for (i = 0; i < n; ++i) r[i] = _mm256_loadu_si256((const __m256i*)(from + i * from_b));
  if (rounds > 0) dlpm_mpi_round_(r, t, n, item);
  if (rounds > 1) dlpm_mpi_round_(t, r, n, 2 * item);
  if (rounds > 2) dlpm_mpi_round_(r, t, n, 4 * item);
  if (rounds > 3) dlpm_mpi_round_(t, r, n, 8 * item);
  DLPM_MPI_UNROLL_
  for (i = 0; i < n; ++i) out[bitrev[i] * n / 16] = last[i]; /* bitrev(i) in log2 n bits */
}

/* One square of `item`-byte elements (2, 4, 8 or 16), 32 / item rows and columns,
 * transposed in AVX2 registers: out[c] is the destination's row c (the source's column c).
 * Its first n = 16 / item rows and its last n each transposed within their lanes
 * (dlpm_mpi_lanes_), then each column's two halves joined by a lane permute. (1-byte
 * elements do not take it: their 32 rows outnumber the 16 registers.) */
__attribute__((target("avx2"), always_inline)) static inline void dlpm_mpi_square_rows_(const char* from, int64_t from_b,
                                                                                       int64_t item, __m256i* out) {
  const int64_t n = 16 / item;
  __m256i low[16], high[16];
  int64_t c;
  dlpm_mpi_lanes_(from, from_b, item, low);
  dlpm_mpi_lanes_(from + n * from_b, from_b, item, high);
  DLPM_MPI_UNROLL_
  for (c = 0; c < n; ++c) {
    out[c] = _mm256_permute2x128_si256(low[c], high[c], 0x20);
    out[c + n] = _mm256_permute2x128_si256(low[c], high[c], 0x31);
  }
}

/* A whole tile of `item`-byte elements (1, 2, 4, 8 or 16; a tile is 64 bytes a side) in
 * squares of AVX2 registers, one 32-byte register a row (dlpm_mpi_square_rows_: 16 x 16
 * 2-byte elements, 8 x 8 4-byte, 4 x 4 8-byte, 2 x 2 16-byte). Into a destination whose tile
 * lines are whole cache lines (`to` and `to_a` multiples of 64), when the caller allows it
 * (`may_stream`: a block larger than the cache, DLPM_MPI_STREAM_BYTES), whole destination
 * lines at a time: for each square's destination rows the two squares of twice as many
 * source lines, then each row's 64 bytes stored at once, non-temporal, its two halves back to
 * back: a line written whole is not read first (the ordinary store's read for ownership), nor
 * does it evict the source's lines; a 4096 x 4096 float32 transpose packs in half the time or
 * less (docs/mpi.md). The caller fences them (_mm_sfence) before the memory is handed on.
 * Otherwise the squares `a` innermost, each source line read whole at once, each destination
 * line written in two halves: where the destination is not aligned, faster than whole lines
 * with ordinary stores (measured at 2 to 8 MiB, float32: whole lines took 1.2x to 1.5x the
 * time). 1-byte elements instead take 16 source lines at a time (dlpm_mpi_lanes_: 16 x 16
 * squares within the lanes), their lanes stored into a local block of 32 destination lines,
 * which then go out whole (streamed where the others would be): a 32 x 32 square in
 * registers spilled, at half the rate of the other sizes (docs/mpi.md). Returns 1 when it
 * streamed. Inlined into dlpm_mpi_squares1_ to dlpm_mpi_squares16_, each with its element
 * size a constant (as a call with the size a variable, the loops took 1.4x the time). */
__attribute__((target("avx2"), always_inline)) static inline int dlpm_mpi_squares_avx2_(char* to, int64_t to_a, const char* from,
                                                                                       int64_t from_b, int64_t tile,
                                                                                       int64_t item, int may_stream) {
  const int64_t side = 32 / item; /* a square's rows and columns */
  const int stream = may_stream && (((uintptr_t)to | (uintptr_t)to_a) & 63) == 0;
  __m256i low[32], high[32];
  int64_t a, b, i;
  if (item == 1) {
    __attribute__((aligned(64))) char lines[32 * 64]; /* 32 destination lines of a tile, 64 bytes each */
    for (a = 0; a < tile; a += 32) {
      for (b = 0; b < tile; b += 16) {
        dlpm_mpi_lanes_(from + a + b * from_b, from_b, 1, low);
        DLPM_MPI_UNROLL_
        for (i = 0; i < 16; ++i) {
          _mm_store_si128((__m128i*)(lines + i * 64 + b), _mm256_castsi256_si128(low[i]));
          _mm_store_si128((__m128i*)(lines + (i + 16) * 64 + b), _mm256_extracti128_si256(low[i], 1));
        }
      }
      DLPM_MPI_UNROLL_
      for (i = 0; i < 32; ++i) {
        const __m256i first = _mm256_load_si256((const __m256i*)(lines + i * 64));
        const __m256i second = _mm256_load_si256((const __m256i*)(lines + i * 64 + 32));
        if (stream) {
          _mm256_stream_si256((__m256i*)(to + (a + i) * to_a), first);
          _mm256_stream_si256((__m256i*)(to + (a + i) * to_a + 32), second);
        } else {
          _mm256_storeu_si256((__m256i*)(to + (a + i) * to_a), first);
          _mm256_storeu_si256((__m256i*)(to + (a + i) * to_a + 32), second);
        }
      }
    }
    return stream;
  }
  if (stream) {
    for (a = 0; a < tile; a += side)
      for (b = 0; b < tile; b += 2 * side) {
        char* o = to + a * to_a + b * item;
        dlpm_mpi_square_rows_(from + a * item + b * from_b, from_b, item, low);
        dlpm_mpi_square_rows_(from + a * item + (b + side) * from_b, from_b, item, high);
        DLPM_MPI_UNROLL_
        for (i = 0; i < side; ++i) {
          _mm256_stream_si256((__m256i*)(o + i * to_a), low[i]);
          _mm256_stream_si256((__m256i*)(o + i * to_a + 32), high[i]);
        }
      }
    return 1;
  }
  for (b = 0; b < tile; b += side)
    for (a = 0; a < tile; a += side) {
      dlpm_mpi_square_rows_(from + a * item + b * from_b, from_b, item, low);
      DLPM_MPI_UNROLL_
      for (i = 0; i < side; ++i) _mm256_storeu_si256((__m256i*)(to + (a + i) * to_a + b * item), low[i]);
    }
  return 0;
}

/* dlpm_mpi_squares_avx2_ of `bytes`-byte elements: dlpm_mpi_squares1_, 2_, 4_, 8_ and 16_,
 * each compiled for AVX2 alone with its element size a constant. */
#define DLPM_MPI_SQUARES_OF_(bytes)                                                                                         \
  __attribute__((target("avx2"))) static inline int dlpm_mpi_squares##bytes##_(char* to, int64_t to_a, const char* from,   \
                                                                               int64_t from_b, int64_t tile, int may_stream) { \
    return dlpm_mpi_squares_avx2_(to, to_a, from, from_b, tile, bytes, may_stream);                                          \
  }
DLPM_MPI_SQUARES_OF_(1)
DLPM_MPI_SQUARES_OF_(2)
DLPM_MPI_SQUARES_OF_(4)
DLPM_MPI_SQUARES_OF_(8)
DLPM_MPI_SQUARES_OF_(16)
#undef DLPM_MPI_SQUARES_OF_

/* The squares of `item`-byte elements (1, 2, 4, 8 or 16), called only where dlpm_mpi_avx2_
 * says so. Inlined into the tiles, whose element size is a constant, the choice is made
 * when compiling: a choice per tile took 4 % to 7 % more instructions. */
static DLPM_MPI_INLINE_ int dlpm_mpi_squares_(char* to, int64_t to_a, const char* from, int64_t from_b, int64_t tile,
                                              int64_t item, int may_stream) {
  switch (item) {
    case 1: return dlpm_mpi_squares1_(to, to_a, from, from_b, tile, may_stream);
    case 2: return dlpm_mpi_squares2_(to, to_a, from, from_b, tile, may_stream);
    case 4: return dlpm_mpi_squares4_(to, to_a, from, from_b, tile, may_stream);
    case 8: return dlpm_mpi_squares8_(to, to_a, from, from_b, tile, may_stream);
    default: return dlpm_mpi_squares16_(to, to_a, from, from_b, tile, may_stream);
  }
}
#endif

/* The bytes of a transpose's block at and above which the AVX2 tiles stream into a
 * destination of whole 64-byte lines (dlpm_mpi_squares_): below it the block stays in cache,
 * where non-temporal stores would send it to memory to be read back. Measured, a square
 * float32 transpose packed then its message read, streamed against not: 2.1x to 2.8x the
 * time at 16 KiB to 256 KiB, 1.1x at 1 MiB, 0.7x to 1.0x at 1.6 and 2.5 MiB, 0.6x at 4 MiB
 * (docs/mpi.md). A definition before this header sets another (the tests stream every block
 * with 0). */
#ifndef DLPM_MPI_STREAM_BYTES
#define DLPM_MPI_STREAM_BYTES (2 * 1024 * 1024)
#endif

/* An `na` x `nb` block of elements (steps `to_a`, `to_b` and `from_a`, `from_b`) in tiles of
 * `tile` x `tile` elements, so that both sides' cache lines of a tile are used whole while they
 * are in cache (a transpose reads and writes whole lines instead of one element per line),
 * the tiles in blocks of 8 x 8 tiles, so that the pages a block touches on either side stay
 * within the TLB (a row of a 4096-wide transpose is its own page). The innermost loop runs
 * along `b`, where the callers put the destination's small step: the writes are
 * contiguous. A whole tile contiguous along `a` at the source (a plain transpose, packed or
 * unpacked) is moved in registers: of 1, 2, 4, 8 or 16-byte elements in squares of AVX2
 * where the processor has it (dlpm_mpi_squares_, asked once per call), else of 4-byte
 * elements in 4 x 4 squares where SSE2 is (dlpm_mpi_square4_); a reversed step of either
 * side included; partial tiles, other sizes and other machines take the element loop. With
 * AVX2, a block of
 * DLPM_MPI_STREAM_BYTES or more into a destination whose lines are 64-byte aligned but for
 * where it starts (`to_a` a multiple of 64, `to` not: a tensor's element 0 anywhere in its
 * line) has its first columns moved by the element loop, so that the tiles' lines fall on
 * cache lines and stream. */
static DLPM_MPI_INLINE_ void dlpm_mpi_tiles_(char* to, int64_t to_a, int64_t to_b, const char* from, int64_t from_a,
                                             int64_t from_b, int64_t na, int64_t nb, int64_t item, int64_t tile) {
  const int64_t block = 8 * tile;
  int64_t A0, B0, a0, b0, a;
#if DLPM_MPI_SQUARE4_
  /* a transpose, either side's small step possibly reversed, of 4-byte elements (SSE2) or of
   * 1, 2, 4, 8 or 16 bytes (AVX2; 16 only where the block streams: in cache, its element
   * loop is as fast or faster than 2 x 2 squares, 0.75x to 1.0x their time at 256 KiB) */
  const int plain = (from_a == item || from_a == -item) && (to_b == item || to_b == -item);
#if DLPM_MPI_SQUARE8_
  const int large = na * nb * item >= DLPM_MPI_STREAM_BYTES;
  const int wide = plain && item <= 16 && (item & (item - 1)) == 0 && (item < 16 || large) && dlpm_mpi_avx2_();
  const int squares = wide || (plain && item == 4);
  const int may_stream = wide && large;
  int streamed = 0;
  if (may_stream && to_b == item && (to_a & 63) == 0 && ((uintptr_t)to & 63) != 0 && ((uintptr_t)to & (uintptr_t)(item - 1)) == 0) {
    /* the columns before the first 64-byte boundary, row by row: each row's few elements are
     * one destination line (column by column, every element was a line and a page of its
     * own: a fragment of an int8 transpose unpacked in 1.7x to 2x the time) */
    const int64_t before = (int64_t)((64 - ((uintptr_t)to & 63)) / (uintptr_t)item), skew = before < nb ? before : nb;
    for (a = 0; a < na; ++a) dlpm_mpi_line_(to + a * to_a, item, from + a * from_a, from_b, skew, item);
    to += skew * item, from += skew * from_b, nb -= skew;
  }
#else
  const int squares = plain && item == 4;
#endif
#endif
  for (A0 = 0; A0 < na; A0 += block)
    for (B0 = 0; B0 < nb; B0 += block) {
      const int64_t A1 = A0 + block < na ? A0 + block : na, B1 = B0 + block < nb ? B0 + block : nb;
      for (a0 = A0; a0 < A1; a0 += tile)
        for (b0 = B0; b0 < B1; b0 += tile) {
          const int64_t a1 = a0 + tile < A1 ? a0 + tile : A1, b1 = b0 + tile < B1 ? b0 + tile : B1;
#if DLPM_MPI_SQUARE4_
          if (squares && a1 - a0 == tile && b1 - b0 == tile) {
            /* A reversed small step: the squares walk that side's lines from the tile's other
             * corner, where they run forwards, and the other side's mode backwards. */
            const int64_t ea = from_a < 0 ? a1 - 1 : a0, eb = to_b < 0 ? b1 - 1 : b0;
            const int64_t step_a = from_a < 0 ? -to_a : to_a, step_b = to_b < 0 ? -from_b : from_b;
            char* o = to + ea * to_a + eb * to_b;
            const char* f = from + ea * from_a + eb * from_b;
#if DLPM_MPI_SQUARE8_
            if (wide) streamed |= dlpm_mpi_squares_(o, step_a, f, step_b, tile, item, may_stream);
            else
#endif
              dlpm_mpi_square4_(o, step_a, f, step_b, tile);
            continue;
          }
#endif
          for (a = a0; a < a1; ++a)
            dlpm_mpi_line_(to + a * to_a + b0 * to_b, to_b, from + a * from_a + b0 * from_b, from_b, b1 - b0, item);
        }
    }
#if DLPM_MPI_SQUARE8_
  if (streamed) _mm_sfence(); /* the non-temporal stores visible before the memory is handed on */
#endif
}

#define DLPM_MPI_BY_ITEM_(item, CALL) \
  switch (item) {                     \
    case 1: CALL(1); break;           \
    case 2: CALL(2); break;           \
    case 4: CALL(4); break;           \
    case 8: CALL(8); break;           \
    case 16: CALL(16); break;         \
    default: CALL(item); break;       \
  }

/** The innermost loops of the library's pack for a layout's coalesced loops (`modes` modes,
 * outermost first, byte steps `steps`, runs of `run_bytes` contiguous bytes of `item`-byte
 * elements). DLPM_MPI_RUNS: a memcpy per run. DLPM_MPI_LINE: runs of one element, the
 * innermost mode a tight loop of element moves. DLPM_MPI_TILES: runs of one element where an
 * outer mode steps less than the innermost (a transpose, a permutation): that mode and the
 * innermost are copied in tiles. `*tile_mode` is that outer mode (else -1). */
enum { DLPM_MPI_RUNS = 0, DLPM_MPI_LINE = 1, DLPM_MPI_TILES = 2 };
static inline int dlpm_mpi_pack_loops(int32_t modes, const int64_t* steps, int64_t run_bytes, int64_t item, int32_t* tile_mode) {
  int32_t m, k = -1;
  *tile_mode = -1;
  if (modes == 0 || run_bytes != item) return DLPM_MPI_RUNS;
  for (m = 0; m + 1 < modes; ++m)
    if (k < 0 || llabs((long long)steps[m]) < llabs((long long)steps[k])) k = m;
  if (k < 0 || llabs((long long)steps[k]) >= llabs((long long)steps[modes - 1])) return DLPM_MPI_LINE;
  *tile_mode = k;
  return DLPM_MPI_TILES;
}

/** Copies every element between the tensor's places and the message (row-major index order,
 * contiguous): into the message when `to_message`, else back into the tensor. One walk for
 * the pack of a send and the unpack of a receive: an odometer over the outer modes, and the
 * innermost loops of dlpm_mpi_pack_loops. */
static inline void dlpm_mpi_copy(const dlpm_mpi_packing* p, int to_message) {
  const int32_t modes = p->modes, last = modes - 1;
  const int64_t item = p->item, run_bytes = p->run_bytes;
  int64_t message_steps[64], index[64], size = run_bytes;
  int32_t outer[64], outers = 0, m, tile_mode;
  const int kind = dlpm_mpi_pack_loops(modes, p->steps, run_bytes, item, &tile_mode);
  const int64_t tile = item >= 16 ? 4 : 64 / item; /* a tile's row: one cache line */
  char* tensor = p->tensor;
  char* message = p->message;
  if (modes == 0) {
    if (to_message) memcpy(message, tensor, (size_t)run_bytes);
    else memcpy(tensor, message, (size_t)run_bytes);
    return;
  }
  for (m = last; m >= 0; --m) {
    message_steps[m] = size;
    size *= p->extents[m];
  }
  for (m = 0; m < last; ++m)
    if (m != tile_mode) index[outers] = 0, outer[outers++] = m;
  for (;;) {
    int32_t j;
    if (kind == DLPM_MPI_TILES) {
      const int64_t na = p->extents[tile_mode], nb = p->extents[last], ta = p->steps[tile_mode], tb = p->steps[last],
                    ma = message_steps[tile_mode];
/* packing, the message is written along the innermost mode; unpacking, the tensor along the
 * tile mode, its smaller step */
#define DLPM_MPI_TILES_CALL_(n)                                                  \
  if (to_message) dlpm_mpi_tiles_(message, ma, n, tensor, ta, tb, na, nb, n, tile); \
  else dlpm_mpi_tiles_(tensor, tb, ta, message, n, ma, nb, na, n, tile)
      DLPM_MPI_BY_ITEM_(item, DLPM_MPI_TILES_CALL_)
#undef DLPM_MPI_TILES_CALL_
    } else if (kind == DLPM_MPI_LINE) {
      const int64_t n = p->extents[last], step = p->steps[last];
#define DLPM_MPI_LINE_CALL_(k)                                 \
  if (to_message) dlpm_mpi_line_(message, k, tensor, step, n, k); \
  else dlpm_mpi_line_(tensor, step, message, k, n, k)
#if DLPM_MPI_SQUARE4_
      if (to_message && item == 4 && step == 8) dlpm_mpi_evens4_(message, tensor, n);
      else
#endif
      {
        DLPM_MPI_BY_ITEM_(item, DLPM_MPI_LINE_CALL_)
      }
#undef DLPM_MPI_LINE_CALL_
    } else {
      const int64_t n = p->extents[last], step = p->steps[last];
      int64_t i;
      for (i = 0; i < n; ++i) {
        if (to_message) memcpy(message + i * run_bytes, tensor + i * step, (size_t)run_bytes);
        else memcpy(tensor + i * step, message + i * run_bytes, (size_t)run_bytes);
      }
    }
    for (j = outers - 1; j >= 0; --j) { /* the next position of the outer modes */
      m = outer[j];
      tensor += p->steps[m];
      message += message_steps[m];
      if (++index[j] < p->extents[m]) break;
      tensor -= p->steps[m] * p->extents[m];
      message -= message_steps[m] * p->extents[m];
      index[j] = 0;
    }
    if (j < 0) return;
  }
}

/* What dlpm_mpi_range_walk_ calls for each piece of a range, in message order: modes `m`
 * onwards of `p` at byte `at` from element 0 with mode m's extent `extent` (a box of whole
 * slices), `bytes` of the message; for m == p->modes, the part of one run of `bytes` bytes
 * at byte `at`. A nonzero return (an MPI error) ends the walk. */
typedef int (*dlpm_mpi_piece_)(void* context, const dlpm_mpi_packing* p, int32_t m, int64_t at, int64_t extent, int64_t bytes);

/* The one cut of a fragment's range of the message (the bytes [first, first + bytes), whole
 * elements) of the sub-box of modes `m` onwards at byte `at`: at most two partial slices of
 * mode m (recursed into) around one box of whole slices, down to the part of one run; the
 * pack (dlpm_mpi_copy_range) and the derived fragments (dlpm_mpi_range_type_) both walk it,
 * so both sides cut a fragment alike. */
static inline int dlpm_mpi_range_walk_(const dlpm_mpi_packing* p, int32_t m, int64_t at, int64_t first, int64_t bytes,
                                       dlpm_mpi_piece_ piece, void* context) {
  int64_t slice = p->run_bytes, i0, i1, lo, hi;
  int32_t k;
  int rc;
  while (bytes > 0) {
    if (m == p->modes) return piece(context, p, m, at + first, 1, bytes); /* within one contiguous run */
    for (k = m + 1; k < p->modes; ++k) slice *= p->extents[k];
    i0 = first / slice, lo = first % slice, i1 = (first + bytes) / slice, hi = (first + bytes) % slice;
    if (i0 == i1) { /* inside one slice of mode m */
      at += i0 * p->steps[m];
      first = lo;
      ++m;
      slice = p->run_bytes;
      continue;
    }
    if (lo != 0) { /* the head: the end of slice i0 */
      if ((rc = dlpm_mpi_range_walk_(p, m + 1, at + i0 * p->steps[m], lo, slice - lo, piece, context)) != 0) return rc;
      ++i0;
    }
    /* whole slices i0 .. i1 - 1: one box */
    if (i1 > i0 && (rc = piece(context, p, m, at + i0 * p->steps[m], i1 - i0, (i1 - i0) * slice)) != 0) return rc;
    /* the tail: the start of slice i1 */
    at += i1 * p->steps[m];
    first = 0;
    bytes = hi;
    ++m;
    slice = p->run_bytes;
  }
  return 0;
}

/* The pack's piece: copied between the tensor and the message's cursor, a box by the same
 * pack as a whole message (dlpm_mpi_copy: tiles for a transpose). */
typedef struct dlpm_mpi_copy_cursor_ {
  char* message;
  int to_message;
} dlpm_mpi_copy_cursor_;
static inline int dlpm_mpi_copy_piece_(void* context, const dlpm_mpi_packing* p, int32_t m, int64_t at, int64_t extent,
                                       int64_t bytes) {
  dlpm_mpi_copy_cursor_* cursor = (dlpm_mpi_copy_cursor_*)context;
  if (m == p->modes) {
    if (cursor->to_message) memcpy(cursor->message, p->tensor + at, (size_t)bytes);
    else memcpy(p->tensor + at, cursor->message, (size_t)bytes);
  } else {
    dlpm_mpi_packing box = *p;
    int64_t extents[64];
    int32_t k;
    box.modes = p->modes - m;
    box.extents = extents;
    box.steps = p->steps + m;
    for (k = m; k < p->modes; ++k) extents[k - m] = p->extents[k];
    extents[0] = extent;
    box.tensor = p->tensor + at;
    box.message = cursor->message;
    /* Each direction by its own constant, so that the copy's loops can be specialised for
     * it as they were before the walk took a visitor. */
    if (cursor->to_message) dlpm_mpi_copy(&box, 1);
    else dlpm_mpi_copy(&box, 0);
  }
  cursor->message += bytes;
  return 0;
}

/** Copies the message bytes [first, first + bytes) (whole elements) between the tensor of
 * `p` and `fragment`, which holds just those bytes: into the fragment when `to_message`,
 * else back into the tensor. A pipelined transfer's pack and unpack of one fragment. */
static inline void dlpm_mpi_copy_range(const dlpm_mpi_packing* p, char* fragment, int64_t first, int64_t bytes, int to_message) {
  dlpm_mpi_copy_cursor_ cursor;
  cursor.message = fragment;
  cursor.to_message = to_message;
  (void)dlpm_mpi_range_walk_(p, 0, 0, first, bytes, dlpm_mpi_copy_piece_, &cursor);
}

/** Contiguous runs shorter than this many bytes are packed by the library rather than moved
 * by MPI's datatype engine (see dlpm_mpi_packs). */
#define DLPM_MPI_PACK_RUN_BYTES 256

/** The choice, for a layout that is not compact row-major: 1 when the library packs it, 0
 * when MPI moves it by the derived datatype. The library packs when the coalesced loops'
 * contiguous run is shorter than DLPM_MPI_PACK_RUN_BYTES (MPI's engine pays per run, the
 * library's loops per element or per memcpy; docs/mpi.md has the measurements) and the
 * message is a count MPI's int takes (`items`: the message's predefined items). */
static inline int dlpm_mpi_packs(int64_t run_bytes, int64_t items) {
  return run_bytes < DLPM_MPI_PACK_RUN_BYTES && items <= INT_MAX;
}

/* The memory of the last packed buffer freed, kept for the next one (one block per
 * translation unit, taken and given back atomically), so that a transfer repeated in a loop
 * does not pay the page faults of fresh memory each time (64 MiB of fresh pages cost more than
 * packing them). Freed at MPI_Finalize (a delete callback of an attribute of MPI_COMM_SELF,
 * which MPI_Finalize deletes first); after MPI_Finalize nothing is kept. */
#if defined(__GNUC__) || defined(__clang__)
static dlpm_mpi_packing* dlpm_mpi_spare_ = NULL;
static int dlpm_mpi_spare_registered_ = 0;
static inline int dlpm_mpi_spare_release_(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  free(__atomic_exchange_n(&dlpm_mpi_spare_, (dlpm_mpi_packing*)NULL, __ATOMIC_ACQ_REL));
  return MPI_SUCCESS;
}
static inline dlpm_mpi_packing* dlpm_mpi_spare_take_(void) {
  return __atomic_exchange_n(&dlpm_mpi_spare_, (dlpm_mpi_packing*)NULL, __ATOMIC_ACQ_REL);
}
static inline void dlpm_mpi_spare_give_back_(dlpm_mpi_packing* p) {
  int initialized = 0, finalized = 0, keyval = MPI_KEYVAL_INVALID;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    free(p);
    return;
  }
  if (!__atomic_exchange_n(&dlpm_mpi_spare_registered_, 1, __ATOMIC_ACQ_REL) &&
      (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, dlpm_mpi_spare_release_, &keyval, NULL) != MPI_SUCCESS ||
       MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL) != MPI_SUCCESS)) {
    __atomic_store_n(&dlpm_mpi_spare_registered_, 0, __ATOMIC_RELEASE); /* nothing would free it: keep nothing */
    free(p);
    return;
  }
  if (keyval != MPI_KEYVAL_INVALID) MPI_Comm_free_keyval(&keyval); /* the attribute holds it until MPI_Finalize */
  free(__atomic_exchange_n(&dlpm_mpi_spare_, p, __ATOMIC_ACQ_REL));
}
#else
static inline dlpm_mpi_packing* dlpm_mpi_spare_take_(void) { return NULL; }
static inline void dlpm_mpi_spare_give_back_(dlpm_mpi_packing* p) { free(p); }
#endif

/* The bytes of the message of a tensor's byte loops: its innermost run's, times each loop's
 * extent (the plan's coalesce checked that they fit int64). */
static inline int64_t dlpm_mpi_message_bytes_(int32_t modes, const int64_t* extents, int64_t run_bytes) {
  int32_t m;
  for (m = 0; m < modes; ++m) run_bytes *= extents[m];
  return run_bytes;
}

/* Memory of at least `bytes` for a packed message or the fragments of a transfer, its size
 * in `bytes`: the spare packed message's when it is large enough (fresh pages cost page
 * faults at every transfer), else new memory; what it holds is not defined (an earlier
 * message's bytes, or none). NULL when none could be had. */
static inline dlpm_mpi_packing* dlpm_mpi_spare_at_least_(size_t bytes) {
  dlpm_mpi_packing* p = dlpm_mpi_spare_take_();
  if (p != NULL && p->bytes >= bytes) return p;
  free(p);
  p = (dlpm_mpi_packing*)malloc(bytes);
  if (p != NULL) p->bytes = bytes;
  return p;
}

/* Sets `out` up as a packed buffer: its own message, packed now for a send, to be unpacked
 * for a receive. 0 when the memory could not be had. */
static inline int dlpm_mpi_pack_into_(dlpm_mpi_datatype* out, int32_t modes, const int64_t* extents, const int64_t* steps,
                                      int64_t run_bytes, int64_t item, int64_t items, int receive) {
  const size_t loops = 2 * (size_t)modes * sizeof(int64_t), head = (sizeof(dlpm_mpi_packing) + loops + 63) / 64 * 64;
  const size_t bytes = (size_t)dlpm_mpi_message_bytes_(modes, extents, run_bytes);
  int32_t m;
  dlpm_mpi_packing* p = dlpm_mpi_spare_at_least_(head + bytes);
  if (p == NULL) return 0;
  p->tensor = (char*)out->address;
  p->message = (char*)p + head;
  p->modes = modes;
  p->extents = (int64_t*)(p + 1);
  p->steps = p->extents + modes;
  for (m = 0; m < modes; ++m) p->extents[m] = extents[m], p->steps[m] = steps[m];
  p->run_bytes = run_bytes;
  p->item = item;
  p->unpack_pending = receive != 0;
  /* A send's message is its elements. So is a receive's, until MPI writes it: the unpack then
   * writes back every element no message replaced (a buffer let go before its receive, a
   * shorter message), as a derived receive leaves them, never an earlier message's bytes. */
  dlpm_mpi_copy(p, 1);
  out->packing = p;
  out->address = p->message;
  out->count = (int)items;
  return 1;
}

/* The datatype of modes `m` onwards (of `modes`) with mode m's extent `extent0` (a whole
 * tensor's, or a box of whole slices): nested hvectors of `old`, innermost first, `block`
 * items in the innermost run, a -1-byte step from pairs (dlpm_mpi_mode_); each intermediate
 * freed once the next holds it. A buffer's datatype (dlpm_mpi_build) and a derived
 * fragment's boxes (dlpm_mpi_range_type_). */
static inline int dlpm_mpi_nested_type_(int32_t modes, const int64_t* extents, const int64_t* steps, int32_t m,
                                        int64_t extent0, int64_t block, MPI_Datatype old, MPI_Datatype* out) {
  MPI_Datatype type = old;
  int32_t k;
  int rc = MPI_SUCCESS;
  for (k = modes - 1; k >= m && rc == MPI_SUCCESS; --k) {
    MPI_Datatype next = MPI_DATATYPE_NULL;
    rc = dlpm_mpi_mode_(k == m ? extent0 : extents[k], k == modes - 1 ? block : 1, steps[k], type, &next);
    if (type != old) MPI_Type_free(&type);
    type = next;
  }
  *out = type;
  return rc;
}

/** The buffer of a tensor its caller has validated: element 0 at `element0`, its elements
 * as the core's coalesce gives them (C++ coalesce, C dlpm_coalesce: `modes` byte modes,
 * outermost first, in `extents` and `steps`, then a contiguous run of `run` elements of
 * `item` bytes; `run` 0 for an empty tensor), reaching the bytes [lower, lower + extent)
 * relative to element 0. A layout that is not compact row-major travels as `how` says
 * (DLPM_MPI_CHOSEN: dlpm_mpi_packs decides): packed into the buffer's own message (a send's
 * packed now; a `receive`'s unpacked by dlpm_mpi_unpack), or as a derived datatype. The
 * library packs with the host's loads and stores, so only `host_memory` (memory the host
 * addresses): device memory (CUDA through a CUDA-aware MPI) is always a derived datatype,
 * and DLPM_MPI_PACKED is refused for it.
 * Returns DLPM_MPI_BUILT, or DLPM_MPI_COUNT_TOO_LARGE (an MPI-3 int count cannot hold
 * `value`), DLPM_MPI_CALL_FAILED (`value` is MPI's error code), DLPM_MPI_OUT_OF_MEMORY or
 * DLPM_MPI_HOST_ONLY (DLPM_MPI_PACKED for device memory), with out->refusal saying which. */
static inline int dlpm_mpi_build(void* element0, int32_t modes, const int64_t* extents, const int64_t* steps, int64_t run,
                                 int64_t item, int64_t lower, int64_t extent, dlpm_mpi_element element, int receive,
                                 dlpm_mpi_transfer how, int host_memory, dlpm_mpi_datatype* out) {
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
  out->packing = NULL;
  if (run == 0) return DLPM_MPI_BUILT; /* nothing is addressed */
  if (modes == 0 && block <= INT_MAX) { /* compact, row-major: a count of the predefined type */
    out->count = (int)block;
    return DLPM_MPI_BUILT;
  }
  if (modes > 0 && how == DLPM_MPI_PACKED && !host_memory)
    return dlpm_mpi_refuse_(out, DLPM_MPI_HOST_ONLY, "the library packs memory the host addresses only: this is device memory", 0);
  if (modes > 0 && how != DLPM_MPI_DERIVED && host_memory) {
    int64_t items = block; /* the message's predefined items (saturated at INT64_MAX: a broadcast's may not fit) */
    for (m = 0; m < modes; ++m) items = extents[m] > INT64_MAX / items ? INT64_MAX : items * extents[m]; /* extents >= 1 */
    if (items > INT_MAX && how == DLPM_MPI_PACKED)
      return dlpm_mpi_refuse_(out, DLPM_MPI_COUNT_TOO_LARGE, DLPM_MPI_REFUSAL_PACKED_COUNT_TOO_LARGE, items);
    if (items <= INT_MAX && (how == DLPM_MPI_PACKED || dlpm_mpi_packs(run * item, items))) { /* else derived */
      if (dlpm_mpi_pack_into_(out, modes, extents, steps, run * item, item, items, receive)) return DLPM_MPI_BUILT;
      if (how == DLPM_MPI_PACKED) return dlpm_mpi_refuse_(out, DLPM_MPI_OUT_OF_MEMORY, "allocating the packed message failed", 0);
      /* chosen, and no memory for the message: MPI moves the elements where they lie */
    }
  }
#if !DLPM_MPI_LARGE_COUNTS
  if (block > INT_MAX)
    return dlpm_mpi_refuse_(out, DLPM_MPI_COUNT_TOO_LARGE, DLPM_MPI_REFUSAL_RUN_TOO_LARGE, block);
  for (m = 0; m < modes; ++m)
    if (extents[m] > INT_MAX)
      return dlpm_mpi_refuse_(out, DLPM_MPI_COUNT_TOO_LARGE, DLPM_MPI_REFUSAL_EXTENT_TOO_LARGE, extents[m]);
#endif
  if (modes == 0) rc = dlpm_mpi_hvector_(1, block, 0, type, &type); /* a compact tensor past INT_MAX items */
  else rc = dlpm_mpi_nested_type_(modes, extents, steps, 0, extents[0], block, type, &type);
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
  if (d->derived || d->packing != NULL) return DLPM_MPI_REFUSAL_REDUCE_DERIVED;
  return NULL;
}

/** A packed receive's message, once MPI has completed the receive, unpacked into the tensor's
 * strided places; once (later calls, and any other buffer: nothing). */
static inline void dlpm_mpi_unpack(dlpm_mpi_datatype* d) {
  if (d == NULL || d->packing == NULL || !d->packing->unpack_pending) return;
  dlpm_mpi_copy(d->packing, 0);
  d->packing->unpack_pending = 0;
}

/** Frees what the buffer owns: a packed message (a receive's unpacked first, if
 * dlpm_mpi_unpack has not been called), a derived datatype (unless MPI is finalized: then
 * MPI freed it); idempotent. */
static inline void dlpm_mpi_datatype_free(dlpm_mpi_datatype* d) {
  int finalized = 0;
  if (d == NULL) return;
  if (d->packing != NULL) {
    dlpm_mpi_unpack(d);
    dlpm_mpi_spare_give_back_(d->packing);
    d->packing = NULL;
    d->address = NULL;
    d->count = 0;
  }
  if (!d->derived) return;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Type_free(&d->datatype);
  d->derived = 0;
  d->datatype = MPI_DATATYPE_NULL;
}

/* ---- The library's own transfer: a tensor sent or received in pipelined fragments -------- */

/** The default fragment of the library's pipelined transfer (dlpm_mpi_move): its bytes
 * (rounded down to whole elements, at least one), and how many batches of fragments the
 * library packs into at once (a batch is one fragment, or a transpose's
 * DLPM_MPI_TILES_BATCH_BYTES: the sender packs batch j + 1 while MPI moves batch j; the
 * receiver has the next batch's receives posted while it unpacks one). docs/mpi.md has the
 * measurements. */
#define DLPM_MPI_FRAGMENT_BYTES (1024 * 1024)
#define DLPM_MPI_FRAGMENT_DEPTH 2

/** The bytes of each fragment but the last of a message of `item`-byte elements (each
 * `per_item` predefined items) asked for in fragments of `fragment_bytes`: whole elements,
 * at least one, at most INT_MAX predefined items. */
static inline int64_t dlpm_mpi_fragment_bytes(int64_t fragment_bytes, int64_t item, int64_t per_item) {
  int64_t elements = fragment_bytes / item;
  if (elements < 1) elements = 1;
  if (elements > INT_MAX / per_item) elements = INT_MAX / per_item;
  return elements * item;
}

/* Fragment k's bytes: `fragment`, the last one the rest of `total` (a batch's too, with the
 * batch's bytes as `fragment`). */
static inline int64_t dlpm_mpi_fragment_at_(int64_t k, int64_t fragment, int64_t total) {
  return total - k * fragment < fragment ? total - k * fragment : fragment;
}

/** Contiguous runs of this many bytes or more are moved by MPI's datatype engine in the
 * library's own transfer (dlpm_mpi_move): each fragment a derived datatype of its pieces of
 * the tensor, no pack of ours. The same bound as the buffers' choice (dlpm_mpi_packs);
 * docs/mpi.md has the rule and the measurements. */
static inline int dlpm_mpi_moves_derived(int64_t run_bytes) { return run_bytes >= DLPM_MPI_PACK_RUN_BYTES; }

/* The pieces of a fragment's derived datatype: at most two partial slices per mode around
 * one box, and a run's part (dlpm_mpi_range_walk_). */
typedef struct dlpm_mpi_pieces_ {
  int count;
  int64_t displacements[2 * 64 + 2]; /* bytes from element 0 */
  MPI_Datatype types[2 * 64 + 2];
} dlpm_mpi_pieces_;

/* The derived fragment's piece: its datatype at its displacement from element 0, a run's
 * part as a count of the predefined type, a box as a buffer's nested hvectors. */
typedef struct dlpm_mpi_type_pieces_ {
  dlpm_mpi_pieces_* pieces;
  dlpm_mpi_element element;
} dlpm_mpi_type_pieces_;
static inline int dlpm_mpi_type_piece_(void* context, const dlpm_mpi_packing* p, int32_t m, int64_t at, int64_t extent,
                                       int64_t bytes) {
  dlpm_mpi_type_pieces_* c = (dlpm_mpi_type_pieces_*)context;
  dlpm_mpi_pieces_* out = c->pieces;
  const int64_t per_item = c->element.count;
  int rc;
  if (out->count == (int)(sizeof out->types / sizeof out->types[0])) return MPI_ERR_OTHER; /* at most 2 * modes + 1 */
  rc = m == p->modes
                     ? dlpm_mpi_hvector_(1, bytes / p->item * per_item, 0, c->element.type, &out->types[out->count])
                     : dlpm_mpi_nested_type_(p->modes, p->extents, p->steps, m, extent, p->run_bytes / p->item * per_item,
                                               c->element.type, &out->types[out->count]);
  if (rc == MPI_SUCCESS) out->displacements[out->count++] = at;
  return rc;
}

/* The committed derived datatype of the message bytes [first, first + bytes) (whole
 * elements) of the tensor of `p`, relative to element 0: a struct of the range's pieces
 * (dlpm_mpi_range_walk_), one block of each. Its type signature is the range's predefined
 * items, the same as a packed fragment's, so either side may pack and the other not. */
static inline int dlpm_mpi_range_type_(const dlpm_mpi_packing* p, int64_t first, int64_t bytes, dlpm_mpi_element element,
                                       MPI_Datatype* out) {
  dlpm_mpi_pieces_ pieces;
  int rc, i;
  pieces.count = 0;
  *out = MPI_DATATYPE_NULL;
  {
    dlpm_mpi_type_pieces_ context;
    context.pieces = &pieces;
    context.element = element;
    rc = dlpm_mpi_range_walk_(p, 0, 0, first, bytes, dlpm_mpi_type_piece_, &context);
  }
  if (rc == MPI_SUCCESS) {
#if MPI_VERSION >= 4
    MPI_Count blocks[2 * 64 + 2], displacements[2 * 64 + 2];
#else
    int blocks[2 * 64 + 2];
    MPI_Aint displacements[2 * 64 + 2];
#endif
    for (i = 0; i < pieces.count; ++i) blocks[i] = 1, displacements[i] = pieces.displacements[i];
#if MPI_VERSION >= 4
    rc = MPI_Type_create_struct_c(pieces.count, blocks, displacements, pieces.types, out);
#else
    rc = MPI_Type_create_struct(pieces.count, blocks, displacements, pieces.types, out);
#endif
  }
  for (i = 0; i < pieces.count; ++i) MPI_Type_free(&pieces.types[i]);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(out);
  if (rc != MPI_SUCCESS && *out != MPI_DATATYPE_NULL) MPI_Type_free(out);
  return rc;
}

/* Posts the send (`receive` 0) or the receive of the message bytes [first, first + bytes) of
 * the tensor of `p` as one derived datatype where its elements lie (dlpm_mpi_range_type_),
 * handed out in `type` (the caller frees it once the request is complete: a receive's
 * status is read with the receive's own datatype). */
static inline int dlpm_mpi_post_range_(const dlpm_mpi_packing* p, int64_t first, int64_t bytes, dlpm_mpi_element element,
                                       int receive, int peer, int tag, MPI_Comm comm, MPI_Request* request,
                                       MPI_Datatype* type) {
  int rc = dlpm_mpi_range_type_(p, first, bytes, element, type);
  if (rc != MPI_SUCCESS) return rc;
  return receive ? MPI_Irecv(p->tensor, 1, *type, peer, tag, comm, request)
                 : MPI_Isend(p->tensor, 1, *type, peer, tag, comm, request);
}

/* Frees a derived fragment's datatype once its request is complete (none: nothing to free). */
static inline void dlpm_mpi_free_fragment_type_(MPI_Datatype* type) {
  if (*type != MPI_DATATYPE_NULL) MPI_Type_free(type);
}

/* Ends the transfers of a refused or failed dlpm_mpi_move that are still posted: each is
 * cancelled and waited for, so that none matches a later message, or reads or writes the
 * fragments' memory once it is given back; then the fragments' datatypes are freed. */
static inline void dlpm_mpi_end_posted_(MPI_Request* requests, MPI_Datatype* types, int depth) {
  int slot;
  for (slot = 0; slot < depth; ++slot) {
    if (requests[slot] != MPI_REQUEST_NULL) MPI_Cancel(&requests[slot]), MPI_Wait(&requests[slot], MPI_STATUS_IGNORE);
    dlpm_mpi_free_fragment_type_(&types[slot]);
  }
}

/** A transpose's fragments (the tiles' layouts, DLPM_MPI_TILES) are packed and unpacked this
 * many bytes at a time, a batch of whole fragments: a fragment of a transpose is a band of
 * the tensor's columns, and a narrow band reads or writes each row in pieces too short for the
 * caches and the prefetchers (docs/mpi.md has the measurements). Each side decides by its own
 * layout, as it does between a pack and a derived datatype: the messages stay the fragments. */
#ifndef DLPM_MPI_TILES_BATCH_BYTES
#define DLPM_MPI_TILES_BATCH_BYTES (16 * 1024 * 1024)
#endif

/* How many fragments of `fragment` bytes the library packs or unpacks at once for a layout of
 * `modes` coalesced loops: a batch of DLPM_MPI_TILES_BATCH_BYTES for a transpose (at most 32
 * fragments, so that two batches' requests fit the transfer's 64), else one. */
static inline int64_t dlpm_mpi_batch_fragments_(int32_t modes, const int64_t* steps, int64_t run_bytes, int64_t item,
                                                int64_t fragment) {
  int32_t tile_mode;
  int64_t batch;
  if (modes == 0 || dlpm_mpi_pack_loops(modes, steps, run_bytes, item, &tile_mode) != DLPM_MPI_TILES) return 1;
  batch = DLPM_MPI_TILES_BATCH_BYTES / fragment;
  return batch < 1 ? 1 : batch > 32 ? 32 : batch;
}

/** Sends (`receive` 0) the tensor, as dlpm_mpi_build takes it, to `peer`, or receives it
 * from `peer` into the tensor: the message (the elements in row-major index order, `total`
 * bytes) in fragments of `fragment_bytes` (dlpm_mpi_fragment_bytes: whole elements; the last
 * fragment the rest; one empty fragment for an empty tensor), each its own message of the
 * predefined items on `tag` of `comm`, nonblocking sends and receives in flight. The
 * fragments depend on the message's bytes only, never on the layout, so a tensor of any
 * layout is received into any other, as long as both sides ask for the same fragment bytes.
 * - A compact row-major tensor: each fragment is MPI's buffer where it lies (no copy), up to
 *   16 in flight.
 * - Contiguous runs of DLPM_MPI_PACK_RUN_BYTES or more (dlpm_mpi_moves_derived), in memory
 *   the host addresses: each fragment is one derived datatype of its pieces where they lie
 *   (dlpm_mpi_range_type_: the same cut of the range as the pack's), up to 16 in flight, MPI's
 *   engine moving the runs (in its own pipeline on shared memory); no memory of ours.
 * - Any other layout, in memory the host addresses: the library's pack, pipelined, in `depth`
 *   buffers of a batch each: one fragment, or a transpose's DLPM_MPI_TILES_BATCH_BYTES of
 *   whole fragments (dlpm_mpi_batch_fragments_). The sender packs batch j + 1
 *   (dlpm_mpi_copy_range) while MPI moves the fragments of batch j; the receiver unpacks a
 *   batch once its fragments have landed, the next batch's receives posted; never memory of
 *   the tensor's size. Device memory: refused (DLPM_MPI_HOST_ONLY).
 * Each side chooses by its own layout: a fragment's type signature is its predefined items
 * either way, so a derived fragment is received into a packed one and the other way round.
 * The message may exceed INT_MAX items. A received fragment shorter than its place is
 * refused (DLPM_MPI_SHORT_MESSAGE, `value` the items that arrived), as MPI refuses a longer one
 * (MPI_ERR_TRUNCATE). Returns once every fragment has left or landed; `out` holds nothing
 * to free, and says a refusal. */
static inline int dlpm_mpi_move(void* element0, int32_t modes, const int64_t* extents, const int64_t* steps, int64_t run,
                                int64_t item, dlpm_mpi_element element, int receive, int host_memory, int peer, int tag,
                                MPI_Comm comm, int64_t fragment_bytes, int depth, dlpm_mpi_datatype* out) {
  dlpm_mpi_packing loops, *held = NULL;
  const size_t head = (sizeof(dlpm_mpi_packing) + 63) / 64 * 64;
  const int compact = modes == 0;
  /* Long runs: each fragment is a derived datatype of its pieces of the tensor, MPI's engine
   * moving them where they lie (its own pipeline); no ring of ours. */
  const int derived = !compact && dlpm_mpi_moves_derived(run * item);
  MPI_Request requests[64];
  MPI_Datatype types[64]; /* a derived fragment's datatype, kept until its request is complete */
  char* ring = NULL;
  int64_t total, fragment, fragments, batch = 1, batches, k, j;
  int rc = MPI_SUCCESS, slot, in_flight;
  out->address = NULL, out->count = 0, out->datatype = element.type, out->derived = 0, out->element = element;
  out->refusal = NULL, out->value = 0, out->packing = NULL;
  if (!compact && !host_memory)
    return dlpm_mpi_refuse_(out, DLPM_MPI_HOST_ONLY,
                            "the library packs memory the host addresses only: this is device memory (send it by a buffer's derived datatype)", 0);
  total = dlpm_mpi_message_bytes_(modes, extents, run * item);
  fragment = dlpm_mpi_fragment_bytes(fragment_bytes, item, element.count);
  fragments = total == 0 ? 1 : (total + fragment - 1) / fragment;
  if (compact || derived) depth = 16; /* nothing to pack: every fragment MPI can take at once */
  if (depth < 1) depth = 1;
  if (depth > 16) depth = 16;
  if (!compact && !derived) batch = dlpm_mpi_batch_fragments_(modes, steps, run * item, item, fragment);
  if (depth > 64 / batch) depth = (int)(64 / batch); /* at least 2 */
  batches = (fragments + batch - 1) / batch;
  if (depth > batches) depth = (int)batches;
  if (batch > fragments) batch = fragments; /* a short message: one batch of its fragments */
  in_flight = depth * (int)batch;            /* a request of each fragment of `depth` batches */
  if (!compact) {
    loops.tensor = (char*)element0, loops.message = NULL, loops.modes = modes;
    loops.extents = (int64_t*)extents, loops.steps = (int64_t*)steps;
    loops.run_bytes = run * item, loops.item = item, loops.unpack_pending = 0, loops.bytes = 0;
  }
  if (!compact && !derived) {
    /* The batches' memory (every batch is received or packed before it is read), given back
     * for the next transfer or packed buffer. */
    const int64_t batch_bytes = total < batch * fragment ? total : batch * fragment; /* a short message: its size */
    held = dlpm_mpi_spare_at_least_(head + (size_t)batch_bytes * (size_t)depth);
    if (held == NULL) return dlpm_mpi_refuse_(out, DLPM_MPI_OUT_OF_MEMORY, "allocating the fragments failed", 0);
    ring = (char*)held + head;
  }
  for (slot = 0; slot < in_flight; ++slot) requests[slot] = MPI_REQUEST_NULL, types[slot] = MPI_DATATYPE_NULL;
/* Fragment k's buffer: in the tensor when it is compact, else its place in its batch's slot
 * of the ring; its request's slot. */
#define DLPM_MPI_FRAGMENT_BUFFER_(k) \
  (compact ? (char*)element0 + (k) * fragment : ring + ((k) / batch % depth * batch + (k) % batch) * fragment)
#define DLPM_MPI_POST_RECEIVE_(k)                                                                                        \
  (derived ? dlpm_mpi_post_range_(&loops, (k) * fragment, dlpm_mpi_fragment_at_(k, fragment, total), element, 1, peer, \
                                  tag, comm, &requests[(k) % in_flight], &types[(k) % in_flight])                      \
           : MPI_Irecv(DLPM_MPI_FRAGMENT_BUFFER_(k),                                                                    \
                       (int)(dlpm_mpi_fragment_at_(k, fragment, total) / item * element.count), element.type, peer, tag, \
                       comm, &requests[(k) % in_flight]))
  if (receive)
    for (k = 0; k < in_flight && k < fragments && rc == MPI_SUCCESS; ++k) rc = DLPM_MPI_POST_RECEIVE_(k);
  for (k = 0; k < fragments && rc == MPI_SUCCESS; ++k) {
    const int64_t first = k * fragment, bytes = dlpm_mpi_fragment_at_(k, fragment, total);
    const int64_t batch_first = k - k % batch; /* the first fragment of k's batch */
    char* buffer = derived ? NULL : DLPM_MPI_FRAGMENT_BUFFER_(k);
    MPI_Status status;
    slot = (int)(k % in_flight);
    if (receive) {
      /* The status read with the receive's own datatype: a derived fragment is one item of
       * its datatype when whole (else MPI_UNDEFINED or 0: its basic elements then say how many
       * arrived, which is never all of them), a packed one its count of the element's items.
       * `arrived` counts the element's basic items either way, as `whole` does. */
      const int64_t whole = bytes / item * element.count;
      int64_t arrived;
      int got = 0;
      if ((rc = MPI_Wait(&requests[slot], &status)) != MPI_SUCCESS) break;
      if ((rc = MPI_Get_count(&status, derived ? types[slot] : element.type, &got)) != MPI_SUCCESS) break;
      arrived = derived && got == 1 ? whole : got;
      if (derived && got != 1) {
        if ((rc = MPI_Get_elements(&status, types[slot], &got)) != MPI_SUCCESS) break;
        arrived = got; /* fewer than whole: all of them would have made the item whole */
      }
      if (arrived != whole) {
        dlpm_mpi_end_posted_(requests, types, in_flight);
        if (held != NULL) dlpm_mpi_spare_give_back_(held);
        return dlpm_mpi_refuse_(out, DLPM_MPI_SHORT_MESSAGE,
                                "a received fragment is shorter than its place in the tensor: do both sides send the same "
                                "number of elements, in the same fragments?",
                                (long long)arrived);
      }
      dlpm_mpi_free_fragment_type_(&types[slot]);
      if (k - batch_first == batch - 1 || k == fragments - 1) {
        /* The batch has landed: unpacked, and its slot given to the batch `depth` on. */
        if (!compact && !derived)
          dlpm_mpi_copy_range(&loops, DLPM_MPI_FRAGMENT_BUFFER_(batch_first), batch_first * fragment,
                              dlpm_mpi_fragment_at_(k / batch, batch * fragment, total), 0);
        for (j = batch_first + in_flight; j <= k + in_flight && j < fragments && rc == MPI_SUCCESS; ++j)
          rc = DLPM_MPI_POST_RECEIVE_(j);
      }
    } else {
      /* A batch's slot is packed again once every send of the batch `depth` back is complete. */
      if (k == batch_first && (rc = MPI_Waitall((int)batch, &requests[slot], MPI_STATUSES_IGNORE)) != MPI_SUCCESS) break;
      dlpm_mpi_free_fragment_type_(&types[slot]);
      if (derived) rc = dlpm_mpi_post_range_(&loops, first, bytes, element, 0, peer, tag, comm, &requests[slot], &types[slot]);
      else {
        if (!compact && k == batch_first)
          dlpm_mpi_copy_range(&loops, buffer, first, dlpm_mpi_fragment_at_(k / batch, batch * fragment, total), 1);
        rc = MPI_Isend(buffer, (int)(bytes / item * element.count), element.type, peer, tag, comm, &requests[slot]);
      }
    }
  }
#undef DLPM_MPI_POST_RECEIVE_
#undef DLPM_MPI_FRAGMENT_BUFFER_
  if (rc == MPI_SUCCESS) {
    rc = MPI_Waitall(in_flight, requests, MPI_STATUSES_IGNORE);
    for (slot = 0; slot < in_flight; ++slot) dlpm_mpi_free_fragment_type_(&types[slot]);
  } else
    dlpm_mpi_end_posted_(requests, types, in_flight); /* a failure that returned (MPI_ERRORS_RETURN) */
  if (held != NULL) dlpm_mpi_spare_give_back_(held);
  if (rc != MPI_SUCCESS) return dlpm_mpi_refuse_(out, DLPM_MPI_CALL_FAILED, "a fragment's transfer failed", rc);
  return DLPM_MPI_BUILT;
}

#ifdef __cplusplus
}
#endif

#endif
