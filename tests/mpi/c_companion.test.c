/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The C companion <dlpack_mdspan_mpi.h> with real ranks (mpiexec -np 2), compiled as C11: a
 * transposed float matrix sent, received into a layout with reversed columns, compared with
 * the transpose computed without MPI; and the refusals, reductions' included, each checked
 * on rank 0. */
#include <dlpack_mdspan_mpi.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAIL c_companion: %s\n", what);
    ++failures;
  }
}

static DLTensor tensor(void* data, int32_t ndim, int64_t* shape, int64_t* strides, uint64_t offset_bytes) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = offset_bytes;
  return t;
}

static void refused(const DLTensor* t, uint64_t flags, int receive, dlpm_status want, const char* words, const char* what) {
  dlpm_mpi_datatype b;
  const dlpm_status s = dlpm_mpi_buffer(t, flags, receive, &b);
  check(s == want, what);
  check(s != DLPM_OK && strstr(dlpm_mpi_error(&b), words) != NULL, what);
  if (s != DLPM_OK) printf("  %-34s %s\n", what, dlpm_mpi_error(&b));
  dlpm_mpi_datatype_free(&b);
}

/* `t` is sent, and refused for MPI's reductions with `want` and exactly the header's `words`. */
static void refused_reduction(const DLTensor* t, dlpm_status want, const char* words, const char* what) {
  dlpm_mpi_datatype b;
  MPI_Datatype reduce = MPI_DATATYPE_NULL;
  check(dlpm_mpi_send_buffer(t, 0, &b) == DLPM_OK, what);
  check(dlpm_mpi_reduction_datatype(&b, &reduce) == want && strcmp(dlpm_mpi_error(&b), words) == 0, what);
  printf("  %-34s %s\n", what, dlpm_mpi_error(&b));
  dlpm_mpi_datatype_free(&b);
}

/* A packed receive unpacks its whole message (when asked, or when let go): the elements no
 * message replaced must come back as they were, as a derived receive leaves them, never an
 * earlier message's bytes (the spare packed message is reused). Every other element of 16
 * floats, on this rank alone. */
static void packed_receives_write_back_what_no_message_replaced(void) {
  float secret[16], mine[16], three[3] = {7.0f, 7.0f, 7.0f};
  int64_t shape[1] = {8}, every_other[1] = {2};
  const DLTensor s = tensor(secret, 1, shape, every_other, 0), r = tensor(mine, 1, shape, every_other, 0);
  dlpm_mpi_datatype b;
  MPI_Request request;
  int i, kept = 1;
  for (i = 0; i < 16; ++i) secret[i] = 1000.0f + (float)i, mine[i] = (float)-i;
  /* an unrelated packed send, let go: its message becomes the spare */
  check(dlpm_mpi_buffer_as(&s, 0, 0, DLPM_MPI_CHOSEN, &b) == DLPM_OK && b.packing != NULL, "a packed send");
  dlpm_mpi_datatype_free(&b);
  /* a packed receive let go before its receive (an error path) */
  check(dlpm_mpi_buffer_as(&r, 0, 1, DLPM_MPI_CHOSEN, &b) == DLPM_OK && b.packing != NULL, "a packed receive");
  dlpm_mpi_datatype_free(&b);
  for (i = 0; i < 16; ++i) kept &= mine[i] == (float)-i;
  check(kept, "a packed receive let go before its receive changed the tensor");
  /* a shorter message than the buffer's count (MPI's count is an upper bound) */
  check(dlpm_mpi_buffer_as(&s, 0, 0, DLPM_MPI_CHOSEN, &b) == DLPM_OK, "a packed send, again");
  dlpm_mpi_datatype_free(&b);
  check(dlpm_mpi_buffer_as(&r, 0, 1, DLPM_MPI_CHOSEN, &b) == DLPM_OK && b.packing != NULL && b.count == 8, "a packed receive, again");
  MPI_Isend(three, 3, MPI_FLOAT, 0, 5, MPI_COMM_SELF, &request);
  MPI_Recv(b.address, b.count, b.datatype, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  dlpm_mpi_unpack(&b);
  dlpm_mpi_datatype_free(&b);
  for (i = 0, kept = 1; i < 16; ++i) kept &= mine[i] == (i % 2 == 0 && i < 6 ? 7.0f : (float)-i);
  check(kept, "a shorter message into a packed receive: the elements beyond it changed");
  /* the library's own transfer: a shorter message is the sides' mismatch, not an MPI failure */
  {
    float ten[10];
    int64_t ten_shape[1] = {10};
    const DLTensor compact = tensor(ten, 1, ten_shape, NULL, 0);
    dlpm_status st;
    MPI_Isend(three, 3, MPI_FLOAT, 0, 6, MPI_COMM_SELF, &request);
    st = dlpm_mpi_recv(&compact, 0, 0, 6, MPI_COMM_SELF, &b);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check(st == DLPM_E_SHAPE_MISMATCH && strstr(dlpm_mpi_error(&b), "shorter than its place") != NULL,
          "a shorter message to dlpm_mpi_recv: DLPM_E_SHAPE_MISMATCH");
  }
}

int main(int argc, char** argv) {
  float a[4 * 6], got[6 * 4];
  int64_t shape[2] = {6, 4}, transposed[2] = {1, 6}, reversed_columns[2] = {4, -1};
  int rank = 0, i, j, total = 0;
  dlpm_mpi_datatype b;
  DLTensor t;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (i = 0; i < 24; ++i) a[i] = (float)i, got[i] = -1.0f;
  if (rank == 0) {
    t = tensor(a, 2, shape, transposed, 0); /* the 4 x 6 row-major matrix, transposed */
    /* runs of one element: by default a derived datatype; asked for the choice, the library
     * packs it, a message of 24 MPI_FLOAT of its own */
    check(dlpm_mpi_send_buffer(&t, 0, &b) == DLPM_OK && b.packing == NULL && b.derived, "send a transposed view: derived by default");
    dlpm_mpi_datatype_free(&b);
    check(dlpm_mpi_buffer_as(&t, 0, 0, DLPM_MPI_CHOSEN, &b) == DLPM_OK && b.packing != NULL && !b.derived && b.count == 24 && b.datatype == MPI_FLOAT &&
              b.address != (void*)a && ((float*)b.address)[1] == a[6],
          "send a transposed view: packed");
    MPI_Send(b.address, b.count, b.datatype, 1, 0, MPI_COMM_WORLD);
    dlpm_mpi_datatype_free(&b);
    dlpm_mpi_datatype_free(&b); /* idempotent */
    check(dlpm_mpi_buffer_as(&t, 0, 0, (dlpm_mpi_transfer)7, &b) == DLPM_E_INVALID_ARGUMENT &&
              strcmp(dlpm_mpi_error(&b), DLPM_MPI_REFUSAL_UNKNOWN_TRANSFER) == 0 && b.packing == NULL && !b.derived,
          "a transfer that is none of the three is refused (it once acted as DLPM_MPI_CHOSEN)");
    check(dlpm_mpi_buffer_as(&t, 0, 0, DLPM_MPI_DERIVED, &b) == DLPM_OK && b.packing == NULL && b.derived && b.count == 1,
          "send a transposed view: the derived datatype, when asked");
    MPI_Send(b.address, b.count, b.datatype, 1, 1, MPI_COMM_WORLD);
    dlpm_mpi_datatype_free(&b);
  } else if (rank == 1) {
    t = tensor(got, 2, shape, reversed_columns, 3 * sizeof(float)); /* element (i, j) at 3 - j + 4 i */
    check(dlpm_mpi_receive_buffer(&t, 0, &b) == DLPM_OK && b.derived && b.packing == NULL, "receive into reversed columns (derived)");
    MPI_Recv(b.address, b.count, b.datatype, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    dlpm_mpi_datatype_free(&b);
    for (i = 0; i < 6; ++i)
      for (j = 0; j < 4; ++j) check(got[3 - j + 4 * i] == a[j * 6 + i], "a received element differs from the transpose");
    for (i = 0; i < 24; ++i) got[i] = -1.0f;
    /* the library's choice, asked for: packed, the elements land at dlpm_mpi_unpack */
    check(dlpm_mpi_buffer_as(&t, 0, 1, DLPM_MPI_CHOSEN, &b) == DLPM_OK && b.packing != NULL && !b.derived && b.count == 24,
          "receive into reversed columns (packed)");
    MPI_Recv(b.address, b.count, b.datatype, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(got[3] == -1.0f, "nothing lands before dlpm_mpi_unpack");
    dlpm_mpi_unpack(&b);
    for (i = 0; i < 6; ++i)
      for (j = 0; j < 4; ++j) check(got[3 - j + 4 * i] == a[j * 6 + i], "an unpacked element differs from the transpose");
    dlpm_mpi_datatype_free(&b);
    packed_receives_write_back_what_no_message_replaced();
  }
  if (rank == 0) {
    int64_t broadcast[2] = {0, 1}, row[2] = {4, 6}, row_strides[2] = {6, 1};
    t = tensor(a, 2, row, row_strides, 0);
    check(dlpm_mpi_send_buffer(&t, 0, &b) == DLPM_OK && !b.derived && b.count == 24 && b.datatype == MPI_FLOAT,
          "compact row-major: 24 MPI_FLOAT");
    {
      MPI_Datatype reduce = MPI_DATATYPE_NULL;
      check(dlpm_mpi_reduction_datatype(&b, &reduce) == DLPM_OK && reduce == MPI_FLOAT, "a compact float32 reduces as MPI_FLOAT");
      dlpm_mpi_datatype_free(&b);
      t.strides = broadcast; /* stride 0 rows: a derived datatype */
      refused_reduction(&t, DLPM_E_NON_COMPACT_STRIDES, DLPM_MPI_REFUSAL_REDUCE_DERIVED, "a reduction on broadcast rows");
      t.strides = row_strides;
      t.dtype.bits = 16; /* float16 travels as bytes */
      refused_reduction(&t, DLPM_E_DTYPE_MISMATCH, DLPM_MPI_REFUSAL_REDUCE_BYTES, "a reduction on float16");
      t.dtype.bits = 32;
      check(dlpm_mpi_reduction_datatype(NULL, &reduce) == DLPM_E_NULL_POINTER, "a NULL buffer");
    }
    refused(&t, DLPACK_FLAG_BITMASK_READ_ONLY, 1, DLPM_E_READ_ONLY, "READ_ONLY", "receive into a READ_ONLY tensor");
    t = tensor(a, 2, row, broadcast, 0);
    check(dlpm_mpi_send_buffer(&t, 0, &b) == DLPM_OK, "send a broadcast");
    dlpm_mpi_datatype_free(&b);
    refused(&t, 0, 1, DLPM_E_OVERLAPPING_STRIDES, "reaches an element twice", "receive into a broadcast");
    t = tensor(a, 2, row, row_strides, 0);
    t.dtype.code = kDLInt;
    t.dtype.bits = 4;
    refused(&t, 0, 0, DLPM_E_SUBBYTE_NOT_VIEWABLE, "is packed, which cannot be viewed as one whole-byte element", "packed int4");
    t = tensor(a, 2, row, row_strides, 0);
    t.device.device_type = kDLCUDA;
    if (!dlpm_mpi_cuda_aware()) refused(&t, 0, 0, DLPM_E_DEVICE_MISMATCH, "device memory", "CUDA memory, MPI not CUDA-aware");
    row[1] = -6;
    t = tensor(a, 2, row, row_strides, 0);
    refused(&t, 0, 0, DLPM_E_NEGATIVE_EXTENT, "negative", "an invalid tensor: the facade's message");
    check(dlpm_mpi_send_buffer(&t, 0, NULL) == DLPM_E_NULL_POINTER, "NULL out");
    check(strcmp(dlpm_mpi_error(NULL), DLPM_MPI_REFUSAL_NULL_BUFFER) == 0, "NULL out: the refusal says so");
  }
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("c_companion: %d failures\n", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
