/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The library's pack (dlpm_mpi_copy) moves every element of 4-byte transposes (the tiles) and
 * of every other column (the line at stride 2) to its place, whichever register kernels this
 * build has: compiled four times (CMakeLists.txt), with the AVX2 squares where the processor
 * has AVX2 (dlpm_mpi_square8_), again with DLPM_MPI_STREAM_BYTES 0 (every block whose
 * destination lines are whole cache lines takes the non-temporal stores), with the SSE2
 * squares alone (DLPM_MPI_SQUARE8_ 0), and with the element loop alone (both 0; the stride-2
 * line is SSE2's). Layouts: transposes of every shape from 1 to 41 by 1 to 41 (partial tiles
 * on either side, one, two and three whole tiles), of 129 x 300 (several blocks of tiles),
 * of rows of whole 64-byte lines on both sides (64 x 96, 160 x 272, 144 x 176 padded) and of
 * 1024 x 512 (2 MiB: streamed at the default bound), each with its steps as they are, the
 * inner one reversed, the outer one reversed, both (1024 x 512: as they are and both), and
 * with padded rows (source lines not a power of two apart); a rank-3 permutation; every
 * other column of 1 to 3 rows of 2 to 41 columns,
 * every step sign; int32 and float32 elements, all distinct. Packed: the message must hold the
 * elements in row-major index order (index arithmetic, no MPI); unpacked into a buffer of
 * zeros (no element is zero): every element back at its place, no other place written. Also by
 * fragments (dlpm_mpi_copy_range) of odd sizes, which cut the tiles anywhere. Every layout
 * with its buffers 16 bytes past a 64-byte boundary (malloc's); the transposes whose rows on
 * either side are whole 64-byte lines also at the boundary (the AVX2 tiles' lines stream)
 * and 12 bytes past it (the first 13 columns by the element loop, then streamed lines). No
 * MPI call is made. */
#include <dlpack_mdspan/mpi_datatype.h>

#include <stdio.h>

static int failures = 0;

static void check(int ok, const char* what, const char* layout) {
  if (!ok && ++failures <= 20) fprintf(stderr, "FAIL tiles: %s (%s)\n", what, layout);
}

/* One layout: `rank` extents and steps in elements, element 0 at `offset` elements into a
 * buffer of `span` elements. */
typedef struct layout {
  int32_t rank;
  int64_t extents[3], steps[3], offset, span;
} layout;

/* The buffer offset of the element of row-major index `e`. */
static int64_t place(const layout* l, int64_t e) {
  int64_t at = l->offset, r;
  for (r = l->rank - 1; r >= 0; --r) at += (e % l->extents[r]) * l->steps[r], e /= l->extents[r];
  return at;
}

/* A layout's steps and offset, each mode's step reversed where `reversed` has its bit. */
static layout reverse(layout l, int reversed) {
  int32_t r;
  for (r = 0; r < l.rank; ++r)
    if (reversed >> r & 1) l.offset += (l.extents[r] - 1) * l.steps[r], l.steps[r] = -l.steps[r];
  return l;
}

/* `elements` 4-byte elements at `shift` elements past a 64-byte boundary (its block's start
 * in *block, to free). */
static uint32_t* at_shift(int64_t elements, int64_t shift, void** block) {
  const size_t bytes = ((size_t)(elements + shift) * 4 + 4 + 63) / 64 * 64;
  *block = aligned_alloc(64, bytes);
  return (uint32_t*)*block + shift;
}

static void one(const layout* l, int kind, int is_float, int64_t shift, const char* name) {
  int64_t n = 1, e, k, bytes[4];
  int32_t r;
  dlpm_mpi_packing p;
  int64_t extents[3], steps[3];
  uint32_t *source, *message, *back, *fragment;
  void* blocks[4];
  for (r = 0; r < l->rank; ++r) n *= l->extents[r];
  source = at_shift(l->span, shift, &blocks[0]);
  back = at_shift(l->span, shift, &blocks[1]);
  message = at_shift(n, shift, &blocks[2]);
  fragment = at_shift(n, shift, &blocks[3]);
  for (k = 0; k < l->span; ++k) {
    if (is_float) {
      const float v = (float)k + 0.5f;
      memcpy(&source[k], &v, 4);
    } else
      source[k] = (uint32_t)(k * 2654435761u) | 1u; /* distinct for spans under 2^32, never 0 */
  }
  memset(back, 0, (size_t)l->span * 4);
  /* the coalesced loops as the library builds them: here the modes are already coalesced */
  for (r = 0; r < l->rank; ++r) extents[r] = l->extents[r], steps[r] = l->steps[r] * 4;
  p.modes = l->rank, p.extents = extents, p.steps = steps, p.run_bytes = 4, p.item = 4, p.unpack_pending = 0, p.bytes = 0;
  {
    int32_t tile_mode;
    check(dlpm_mpi_pack_loops(p.modes, p.steps, 4, 4, &tile_mode) == kind, "the layout takes the loops meant", name);
  }
  p.tensor = (char*)(source + l->offset), p.message = (char*)message;
  dlpm_mpi_copy(&p, 1);
  for (e = 0; e < n; ++e) check(message[e] == source[place(l, e)], "packed: an element out of row-major index order", name);
  p.tensor = (char*)(back + l->offset);
  dlpm_mpi_copy(&p, 0);
  for (e = 0; e < n; ++e) back[place(l, e)] ^= source[place(l, e)]; /* every element's place: 0 when right */
  for (k = 0; k < l->span; ++k) check(back[k] == 0, "unpacked: an element not at its place, or a byte between them written", name);
  /* By fragments: 1 element, 37, 1000 and 4099 bytes' worth (rounded down to whole elements). */
  bytes[0] = 4, bytes[1] = 37 * 4, bytes[2] = 1000 * 4, bytes[3] = 4096;
  for (k = 0; k < 4; ++k) {
    int64_t first;
    const int64_t piece = dlpm_mpi_fragment_bytes(bytes[k], 4, 1), total = n * 4;
    memset(back, 0, (size_t)l->span * 4);
    for (first = 0; first < total; first += piece) {
      const int64_t size = piece < total - first ? piece : total - first;
      p.tensor = (char*)(source + l->offset);
      dlpm_mpi_copy_range(&p, (char*)fragment + first, first, size, 1);
      p.tensor = (char*)(back + l->offset);
      dlpm_mpi_copy_range(&p, (char*)fragment + first, first, size, 0);
    }
    check(memcmp(fragment, message, (size_t)total) == 0, "packed by fragments: not the whole message's bytes", name);
    for (e = 0; e < n; ++e) back[place(l, e)] ^= source[place(l, e)];
    for (e = 0; e < l->span; ++e) check(back[e] == 0, "unpacked by fragments: an element not at its place", name);
  }
  for (k = 0; k < 4; ++k) free(blocks[k]);
}

/* Each element type, with the buffers 16 bytes past a 64-byte boundary, and with `aligned`
 * also at 0 and 12 bytes past it. */
static void both_types(const layout* l, int kind, int aligned) {
  static const int64_t shifts[3] = {4, 0, 3}; /* elements past a 64-byte boundary */
  char name[200];
  int is_float, s;
  for (s = 0; s < (aligned ? 3 : 1); ++s)
    for (is_float = 0; is_float < 2; ++is_float) {
      if (l->rank == 2)
        snprintf(name, sizeof name, "%s, %lld x %lld, steps %lld, %lld, offset %lld, buffers %lld bytes past 64",
                 is_float ? "float32" : "int32", (long long)l->extents[0], (long long)l->extents[1],
                 (long long)l->steps[0], (long long)l->steps[1], (long long)l->offset, (long long)shifts[s] * 4);
      else
        snprintf(name, sizeof name, "%s, rank 3, buffers %lld bytes past 64", is_float ? "float32" : "int32",
                 (long long)shifts[s] * 4);
      one(l, kind, is_float, shifts[s], name);
    }
}

int main(void) {
  int64_t rows, columns, pad;
  int reversed;
  const char* kernel = "the element loop";
  int64_t count = 0;
#if DLPM_MPI_SQUARE8_
  kernel = !dlpm_mpi_avx2_()               ? "4 x 4 SSE2 squares (this processor has no AVX2)"
           : DLPM_MPI_STREAM_BYTES == 0 ? "8 x 8 AVX2 squares, every block of whole lines streamed"
                                        : "8 x 8 AVX2 squares, blocks of whole lines streamed from DLPM_MPI_STREAM_BYTES";
#elif DLPM_MPI_SQUARE4_
  kernel = "4 x 4 SSE2 squares";
#endif
  /* A transpose: `rows` x `columns` with steps (1, rows + pad): the tile mode is the outer one
   * (step 1), the source contiguous along it. */
  for (pad = 0; pad <= 3; pad += 3)
    for (rows = 1; rows <= 41; ++rows)
      for (columns = 1; columns <= 41; ++columns)
        for (reversed = 0; reversed < 4; ++reversed) {
          const layout plain = {2, {rows, columns}, {1, rows + pad}, 0, (rows + pad) * columns};
          const layout l = reverse(plain, reversed);
          if (rows == 1 || columns == 1) continue; /* a single mode steps: the line, not the tiles */
          both_types(&l, DLPM_MPI_TILES, rows % 16 == 0 || columns % 16 == 0);
          ++count;
        }
  for (reversed = 0; reversed < 4; ++reversed) {
    const layout plain = {2, {129, 300}, {1, 129}, 0, 129 * 300}, padded = {2, {300, 129}, {1, 301}, 1, 301 * 129 + 1};
    const layout l = reverse(plain, reversed), m = reverse(padded, reversed);
    both_types(&l, DLPM_MPI_TILES, 0);
    both_types(&m, DLPM_MPI_TILES, 0);
    count += 2;
  }
  for (reversed = 0; reversed < 4; ++reversed) {
    /* Rows of whole 64-byte lines on both sides (the streamed tiles, packed and unpacked), in
     * one block and in several; padded rows of 160 elements, element 0 at 5 (12 columns
     * before the first boundary of a 64-byte aligned buffer). */
    const layout one_block = {2, {64, 96}, {1, 64}, 0, 64 * 96}, blocks = {2, {160, 272}, {1, 160}, 0, 160 * 272},
                 padded = {2, {144, 176}, {1, 160}, 5, 160 * 176 + 5};
    const layout l = reverse(one_block, reversed), m = reverse(blocks, reversed), o = reverse(padded, reversed);
    both_types(&l, DLPM_MPI_TILES, 1);
    both_types(&m, DLPM_MPI_TILES, 1);
    both_types(&o, DLPM_MPI_TILES, 1);
    count += 3;
  }
  {
    /* 2 MiB (the default DLPM_MPI_STREAM_BYTES: streamed): 1024 x 512, rows of whole lines */
    const layout big = {2, {1024, 512}, {1, 1024}, 0, 1024 * 512};
    for (reversed = 0; reversed < 4; reversed += 3) {
      const layout l = reverse(big, reversed);
      both_types(&l, DLPM_MPI_TILES, 1);
      ++count;
    }
  }
  {
    /* a rank-3 permutation 7 x 150 x 130, steps (1, 7 * 130, 7): the tile mode is mode 0 */
    const layout l = {3, {7, 150, 130}, {1, 7 * 130, 7}, 0, 7 * 150 * 130};
    both_types(&l, DLPM_MPI_TILES, 0);
    ++count;
  }
  /* Every other column: `rows` x `columns` with steps (2 * columns + pad, 2), the line's
   * stride-2 pack (4 at a time in SSE2 shuffles), each step sign. */
  for (pad = 0; pad <= 1; ++pad)
    for (rows = 1; rows <= 3; ++rows)
      for (columns = 2; columns <= 41; ++columns)
        for (reversed = 0; reversed < 4; ++reversed) {
          const layout plain = {2, {rows, columns}, {2 * columns + pad, 2}, 0, (2 * columns + pad) * rows};
          const layout l = reverse(plain, reversed);
          both_types(&l, DLPM_MPI_LINE, 0);
          ++count;
        }
  printf("the pack (%s): %lld layouts, int32 and float32, packed and unpacked, whole and by fragments: %d failures\n", kernel,
         (long long)count, failures);
  return failures == 0 ? 0 : 1;
}
