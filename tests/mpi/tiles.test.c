/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The library's pack (dlpm_mpi_copy) moves every element of transposes of 1- to 16-byte
 * elements (the tiles) and of every other column (the line at stride 2) to its place,
 * whichever register kernels this build has: compiled four times (CMakeLists.txt), with the
 * AVX2 squares where the processor has AVX2 (dlpm_mpi_squares_: 1, 2, 4, 8 and 16-byte
 * elements), again with DLPM_MPI_STREAM_BYTES 0 (every block whose destination lines are
 * whole cache lines takes the non-temporal stores), with the SSE2 squares alone
 * (DLPM_MPI_SQUARE8_ 0: 4-byte elements only, the others by the element loop), and with the
 * element loop alone (both 0; the stride-2 line is SSE2's). Layouts: transposes of every
 * shape from 1 to 41 by 1 to 41 (partial tiles on either side, one, two and three whole
 * tiles of 4-byte elements), of 129 x 300 (several blocks of tiles), of rows of whole 64-byte
 * lines on both sides (64 x 96, 160 x 272, 144 x 176 padded) and of 2 MiB (streamed at the
 * default bound: 1024 x 512 4-byte elements, 512 x 512 8-byte ones), each with its steps as
 * they are, the inner one reversed, the outer one reversed, both (the 2 MiB ones: as they
 * are and both), and with padded rows (source lines not a power of two apart), int32,
 * float32 and float64; of int8, int16 and complex128 (tiles of 64, 32 and 4 elements a
 * side), every pair of sides from 3, a tile less one, a tile, a tile and one, and two tiles
 * and three (complex128 also 37: two blocks of tiles), and of 2 MiB (2048 x 1024, 1024 x 1024
 * and 512 x 256), the same steps; a rank-3 permutation of every type; every other column of 1
 * to 3 rows of 2 to 41 columns, every step sign, int32 and float32. Every element distinct
 * (1- and 2-byte elements cannot all be: each layout of them runs once per 7 or 15 bits of
 * the place, so that the runs together tell every place apart). Packed: the message must
 * hold the elements in row-major index order (index arithmetic, no MPI); unpacked into a
 * buffer of zeros (no element is zero): every element back at its place, no other place
 * written. Also by fragments (dlpm_mpi_copy_range) of odd sizes, which cut the tiles
 * anywhere (not of one element above 64 Ki elements). Every layout with its buffers 16 bytes
 * past a 64-byte boundary (malloc's; the 2 MiB ones: the element loop up to the first
 * boundary, then streamed lines); the transposes whose rows on either side are whole
 * multiples of 8 elements (of a tile, for 1-, 2- and 16-byte elements) also at the boundary
 * and 3 elements past it. No MPI call is made. */
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

/* `elements` elements of `item` bytes, `shift` bytes past a 64-byte boundary (its block's
 * start in *block, to free). */
static unsigned char* at_shift(int64_t elements, int64_t item, int64_t shift, void** block) {
  const size_t bytes = ((size_t)(elements * item + shift) + 8 + 63) / 64 * 64;
  *block = aligned_alloc(64, bytes);
  return (unsigned char*)*block + shift;
}

/* The passes of element values a type needs (value_of): one for 4-, 8- and 16-byte elements
 * (every element distinct), and as many as identify every place of a span for 1- and 2-byte
 * ones (7 or 15 bits a pass). */
static int passes_for(int64_t span, int64_t item) {
  int bits = 0, passes = 1;
  while (((int64_t)1 << bits) < span) ++bits;
  if (item <= 2) passes = (bits + (int)(8 * item) - 2) / (int)(8 * item - 1);
  return passes > 0 ? passes : 1;
}

/* Element k's bits, never 0: float32, int32, float64, int64 or complex128, distinct; 1- and
 * 2-byte elements pass `pass`'s 7 or 15 bits of k under their top bit (all passes together
 * tell every place apart). */
static void value_of(int64_t k, int64_t item, int is_float, int pass, unsigned char* out) {
  if (item == 1) {
    *out = (unsigned char)(0x80u | ((uint64_t)k >> (7 * pass) & 0x7Fu));
  } else if (item == 2) {
    const uint16_t v = (uint16_t)(0x8000u | ((uint64_t)k >> (15 * pass) & 0x7FFFu));
    memcpy(out, &v, 2);
  } else if (item == 4 && is_float) {
    const float v = (float)k + 0.5f;
    memcpy(out, &v, 4);
  } else if (item == 4) {
    const uint32_t v = (uint32_t)(k * 2654435761u) | 1u; /* distinct for spans under 2^32 */
    memcpy(out, &v, 4);
  } else if (item == 8 && is_float) {
    const double v = (double)k + 0.5;
    memcpy(out, &v, 8);
  } else {
    const uint64_t v[2] = {((uint64_t)k * 0x9E3779B97F4A7C15ull) | 1u, ~(uint64_t)k};
    memcpy(out, v, (size_t)item);
  }
}

/* Each element's place in `back` XOR-ed with its value: all of `back` 0 when every element
 * was unpacked to its place and nothing else was written. */
static int unpacked_right(const layout* l, int64_t n, int64_t item, unsigned char* back, const unsigned char* source) {
  int64_t e, k;
  const int64_t words = item / 4; /* 4-byte words an element, where it has whole ones */
  uint32_t* b32 = (uint32_t*)back; /* the buffers are aligned for their elements */
  const uint32_t* s32 = (const uint32_t*)source;
  for (e = 0; e < n; ++e) {
    const int64_t at = place(l, e);
    if (words == 0)
      for (k = 0; k < item; ++k) back[at * item + k] ^= source[at * item + k];
    else
      for (k = 0; k < words; ++k) b32[at * words + k] ^= s32[at * words + k];
  }
  return back[0] == 0 && memcmp(back, back + 1, (size_t)(l->span * item - 1)) == 0;
}

static void one(const layout* l, int kind, int64_t item, int is_float, int pass, int64_t shift, const char* name) {
  int64_t n = 1, e, k, bytes[4];
  int32_t r;
  dlpm_mpi_packing p;
  int64_t extents[3], steps[3];
  unsigned char *source, *message, *back, *fragment;
  void* blocks[4];
  for (r = 0; r < l->rank; ++r) n *= l->extents[r];
  source = at_shift(l->span, item, shift, &blocks[0]);
  back = at_shift(l->span, item, shift, &blocks[1]);
  message = at_shift(n, item, shift, &blocks[2]);
  fragment = at_shift(n, item, shift, &blocks[3]);
  for (k = 0; k < l->span; ++k) value_of(k, item, is_float, pass, source + k * item);
  memset(back, 0, (size_t)(l->span * item));
  /* the coalesced loops as the library builds them: here the modes are already coalesced */
  for (r = 0; r < l->rank; ++r) extents[r] = l->extents[r], steps[r] = l->steps[r] * item;
  p.modes = l->rank, p.extents = extents, p.steps = steps, p.run_bytes = item, p.item = item, p.unpack_pending = 0,
  p.bytes = 0;
  {
    int32_t tile_mode;
    check(dlpm_mpi_pack_loops(p.modes, p.steps, item, item, &tile_mode) == kind, "the layout takes the loops meant", name);
  }
  p.tensor = (char*)(source + l->offset * item), p.message = (char*)message;
  dlpm_mpi_copy(&p, 1);
  for (e = 0; e < n; ++e)
    check(memcmp(message + e * item, source + place(l, e) * item, (size_t)item) == 0,
          "packed: an element out of row-major index order", name);
  p.tensor = (char*)(back + l->offset * item);
  dlpm_mpi_copy(&p, 0);
  check(unpacked_right(l, n, item, back, source), "unpacked: an element not at its place, or a byte between them written", name);
  /* By fragments: 1 element, 37, 1000 and 4099 bytes' worth (rounded down to whole elements);
   * not of 1 element above 64 Ki elements (the cuts of the smaller layouts are the same). */
  bytes[0] = item, bytes[1] = 37 * item, bytes[2] = 1000 * item, bytes[3] = 4099;
  for (k = n > 65536 ? 1 : 0; k < 4; ++k) {
    int64_t first;
    const int64_t piece = dlpm_mpi_fragment_bytes(bytes[k], item, 1), total = n * item;
    memset(back, 0, (size_t)(l->span * item));
    for (first = 0; first < total; first += piece) {
      const int64_t size = piece < total - first ? piece : total - first;
      p.tensor = (char*)(source + l->offset * item);
      dlpm_mpi_copy_range(&p, (char*)fragment + first, first, size, 1);
      p.tensor = (char*)(back + l->offset * item);
      dlpm_mpi_copy_range(&p, (char*)fragment + first, first, size, 0);
    }
    check(memcmp(fragment, message, (size_t)total) == 0, "packed by fragments: not the whole message's bytes", name);
    check(unpacked_right(l, n, item, back, source), "unpacked by fragments: an element not at its place", name);
  }
  for (k = 0; k < 4; ++k) free(blocks[k]);
}

/* The element types `mask` names (INT32, FLOAT32, FLOAT64; INT8, INT16, COMPLEX128), the
 * buffers 16 bytes past a 64-byte boundary, and with `aligned` also at 0 bytes and 3
 * elements past it. */
enum {
  INT32 = 1,
  FLOAT32 = 2,
  FLOAT64 = 4,
  INT8 = 8,
  INT16 = 16,
  COMPLEX128 = 32,
  FOUR_BYTES = INT32 | FLOAT32,
  ALL = INT32 | FLOAT32 | FLOAT64
};
static const char* const type_names[6] = {"int32", "float32", "float64", "int8", "int16", "complex128"};
static const int64_t type_items[6] = {4, 4, 8, 1, 2, 16};
static void types(const layout* l, int kind, int mask, int aligned) {
  char name[200];
  int t, s, pass;
  for (t = 0; t < 6; ++t)
    for (s = 0; s < (aligned ? 3 : 1) && (mask >> t & 1); ++s)
      for (pass = 0; pass < passes_for(l->span, type_items[t]); ++pass) {
        const int64_t shift = s == 0 ? 16 : s == 1 ? 0 : 3 * type_items[t]; /* bytes past a 64-byte boundary */
        if (l->rank == 2)
          snprintf(name, sizeof name, "%s, %lld x %lld, steps %lld, %lld, offset %lld, buffers %lld bytes past 64, values %d",
                   type_names[t], (long long)l->extents[0], (long long)l->extents[1], (long long)l->steps[0],
                   (long long)l->steps[1], (long long)l->offset, (long long)shift, pass);
        else
          snprintf(name, sizeof name, "%s, rank 3, buffers %lld bytes past 64, values %d", type_names[t], (long long)shift, pass);
        one(l, kind, type_items[t], t == 1 || t == 2, pass, shift, name);
      }
}

int main(void) {
  int64_t rows, columns, pad;
  int reversed;
  const char* kernel = "the element loop";
  int64_t count = 0;
#if DLPM_MPI_SQUARE8_
  kernel = !dlpm_mpi_avx2_()               ? "4 x 4 SSE2 squares (this processor has no AVX2)"
           : DLPM_MPI_STREAM_BYTES == 0 ? "AVX2 squares (of 1, 2, 4, 8 and 16 bytes), every block of whole lines streamed"
                                        : "AVX2 squares (of 1, 2, 4, 8 and 16 bytes), blocks of whole lines streamed from "
                                          "DLPM_MPI_STREAM_BYTES";
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
          types(&l, DLPM_MPI_TILES, ALL, rows % 8 == 0 || columns % 8 == 0);
          ++count;
        }
  for (reversed = 0; reversed < 4; ++reversed) {
    const layout plain = {2, {129, 300}, {1, 129}, 0, 129 * 300}, padded = {2, {300, 129}, {1, 301}, 1, 301 * 129 + 1};
    const layout l = reverse(plain, reversed), m = reverse(padded, reversed);
    types(&l, DLPM_MPI_TILES, ALL, 0);
    types(&m, DLPM_MPI_TILES, ALL, 0);
    count += 2;
  }
  for (reversed = 0; reversed < 4; ++reversed) {
    /* Rows of whole 64-byte lines on both sides (the streamed tiles, packed and unpacked), in
     * one block and in several; padded rows of 160 elements, element 0 at 5 (in an aligned
     * buffer, its columns before the first 64-byte boundary by the element loop). */
    const layout one_block = {2, {64, 96}, {1, 64}, 0, 64 * 96}, blocks = {2, {160, 272}, {1, 160}, 0, 160 * 272},
                 padded = {2, {144, 176}, {1, 160}, 5, 160 * 176 + 5};
    const layout l = reverse(one_block, reversed), m = reverse(blocks, reversed), o = reverse(padded, reversed);
    types(&l, DLPM_MPI_TILES, ALL, 1);
    types(&m, DLPM_MPI_TILES, ALL, 1);
    types(&o, DLPM_MPI_TILES, ALL, 1);
    count += 3;
  }
  {
    /* 2 MiB (the default DLPM_MPI_STREAM_BYTES: streamed), rows of whole lines: 1024 x 512
     * 4-byte elements, 512 x 512 8-byte ones */
    const layout big = {2, {1024, 512}, {1, 1024}, 0, 1024 * 512}, big8 = {2, {512, 512}, {1, 512}, 0, 512 * 512};
    for (reversed = 0; reversed < 4; reversed += 3) {
      const layout l = reverse(big, reversed), m = reverse(big8, reversed);
      types(&l, DLPM_MPI_TILES, FOUR_BYTES, 0); /* 16 bytes past a line: the skew, then streamed */
      types(&m, DLPM_MPI_TILES, FLOAT64, 0);
      count += 2;
    }
  }
  {
    /* 1-, 2- and 16-byte elements (tiles of 64, 32 and 4 elements a side): transposes of every
     * pair of sides from 1, 3, a tile less one, a tile, a tile and one, and two tiles and three
     * (for 16 bytes also 37: more than one block of 8 x 8 tiles), each step sign, rows as they
     * are and padded by 3; then 2 MiB (several blocks), streamed at the default bound. */
    static const int sizes[3] = {INT8, INT16, COMPLEX128};
    static const int64_t tiles[3] = {64, 32, 4};
    int t, i, j;
    for (t = 0; t < 3; ++t) {
      const int64_t tile = tiles[t], sides[7] = {1, 3, tile - 1, tile, tile + 1, 2 * tile + 3, 37};
      const int count_sides = tile == 4 ? 7 : 6;
      for (pad = 0; pad <= 3; pad += 3)
        for (i = 0; i < count_sides; ++i)
          for (j = 0; j < count_sides; ++j)
            for (reversed = 0; reversed < 4; ++reversed) {
              const layout plain = {2, {sides[i], sides[j]}, {1, sides[i] + pad}, 0, (sides[i] + pad) * sides[j]};
              const layout l = reverse(plain, reversed);
              if (sides[i] == 1 || sides[j] == 1) continue; /* the line, not the tiles */
              types(&l, DLPM_MPI_TILES, sizes[t], sides[i] % tile == 0 || sides[j] % tile == 0);
              ++count;
            }
    }
    for (reversed = 0; reversed < 4; reversed += 3) {
      const layout big1 = reverse((layout){2, {2048, 1024}, {1, 2048}, 0, 2048 * 1024}, reversed),
                   big2 = reverse((layout){2, {1024, 1024}, {1, 1024}, 0, 1024 * 1024}, reversed),
                   big16 = reverse((layout){2, {512, 256}, {1, 512}, 0, 512 * 256}, reversed);
      types(&big1, DLPM_MPI_TILES, INT8, 0);
      types(&big2, DLPM_MPI_TILES, INT16, 0);
      types(&big16, DLPM_MPI_TILES, COMPLEX128, 0);
      count += 3;
    }
  }
  {
    /* a rank-3 permutation 7 x 150 x 130, steps (1, 7 * 130, 7): the tile mode is mode 0 */
    const layout l = {3, {7, 150, 130}, {1, 7 * 130, 7}, 0, 7 * 150 * 130};
    types(&l, DLPM_MPI_TILES, ALL | INT8 | INT16 | COMPLEX128, 0);
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
          types(&l, DLPM_MPI_LINE, FOUR_BYTES, 0);
          ++count;
        }
  printf("the pack (%s): %lld layouts, int8, int16, int32, float32, float64 and complex128 (the transposes), packed and "
         "unpacked, whole and by fragments: %d failures\n",
         kernel,
         (long long)count, failures);
  return failures == 0 ? 0 : 1;
}
