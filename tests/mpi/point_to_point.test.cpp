// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Real ranks (mpiexec -np 2): rank 0 sends, rank 1 receives, every layout class and dtype
// family; rank 1 compares each element with the bytes rank 0 sent, found by index arithmetic
// on its own copy of rank 0's buffer (no MPI), and checks that no byte outside the received
// elements was written. DLPM_MPI_WRONG_STRIDE=1 makes rank 0 describe its tensor with a
// wrong stride: the comparison must then fail (ctest runs that as a WILL_FAIL test).
#include "mpi_test.hpp"

#include <mdspan>

namespace {

using namespace dlpm_mpi_test;

// One transfer: the same shape, dtype and the layout each side gives it.
struct transfer {
  const char* name;
  DLDataType dtype;
  std::vector<std::int64_t> shape;
  layout send;
  layout receive;
};

constexpr DLDataType dt(std::uint8_t code, std::uint8_t bits, std::uint16_t lanes = 1) { return DLDataType{code, bits, lanes}; }

std::vector<transfer> transfers() {
  const DLDataType f32 = dt(kDLFloat, 32);
  std::vector<transfer> all = {
      {"compact row-major", f32, {3, 5}, row_major({3, 5}), row_major({3, 5})},
      {"compact column-major into row-major", f32, {3, 5}, column_major({3, 5}), row_major({3, 5})},
      {"row-major into column-major", f32, {3, 5}, row_major({3, 5}), column_major({3, 5})},
      {"every other column", f32, {4, 3}, {{6, 2}, 0, 24}, row_major({4, 3})},
      {"a transpose into a transposed view", f32, {6, 4}, {{1, 6}, 0, 24}, {{1, 6}, 0, 24}},
      {"negative strides: rows reversed", f32, {4, 6}, {{-6, 1}, 18, 24}, row_major({4, 6})},
      {"negative strides: both reversed, into reversed columns", f32, {4, 6}, {{-6, -1}, 23, 24}, {{6, -1}, 5, 24}},
      {"broadcast rows (send only)", f32, {3, 4}, {{0, 1}, 0, 4}, row_major({3, 4})},
      {"rank-4 sub-block", f32, {2, 3, 2, 4}, {{4 * 5 * 6, 5 * 6, 6, 1}, 6 + 1, 3 * 4 * 5 * 6}, row_major({2, 3, 2, 4})},
      {"0-d", f32, {}, {{}, 0, 1}, {{}, 0, 1}},
      {"empty", f32, {0, 5}, row_major({0, 5}), row_major({0, 5})},
      {"extent-1 modes with odd strides", f32, {1, 4, 1}, {{99, 2, -7}, 0, 8}, row_major({1, 4, 1})},
  };
  // Every dtype family through a strided send into a transposed receive.
  const DLDataType families[] = {
      dt(kDLInt, 8),           dt(kDLInt, 16),        dt(kDLInt, 32),      dt(kDLInt, 64),   dt(kDLUInt, 8),
      dt(kDLUInt, 16),         dt(kDLUInt, 32),       dt(kDLUInt, 64),     dt(kDLFloat, 64), dt(kDLComplex, 64),
      dt(kDLComplex, 128),     dt(kDLBool, 8),        dt(kDLFloat, 16),    dt(kDLBfloat, 16),
      dt(kDLFloat8_e4m3fn, 8), dt(kDLFloat, 32, 4),  // a vector type: 4 lanes
  };
  for (const DLDataType& d : families)
    all.push_back({"every dtype: strided into transposed", d, {3, 4}, {{8, 2}, 1, 24}, {{1, 3}, 0, 12}});
  return all;
}

// Rank 1: receive `x` and compare it with what rank 0 sent; returns the failures. `how`: the
// receive's way (transfer::chosen: packed where the library packs, then unpacked).
int receive_and_compare(const transfer& x, int tag, dlpack_mdspan::mpi::transfer how) {
  const std::uint64_t item = itemsize(x.dtype);
  std::vector<unsigned char> sent = pattern(x.send.buffer_elements * item, tag, x.dtype.code == kDLBool);
  std::vector<unsigned char> got(x.receive.buffer_elements * item + 1, sentinel);  // + 1: never empty
  tensor recv(got.data(), x.dtype, x.shape, x.receive);
  auto b = dlpack_mdspan::mpi::try_receive_buffer(recv.t, 0, how);
  if (!b) return fail(x.name, "receive buffer refused", b.error().message().c_str());
  MPI_Request request;
  MPI_Irecv(b->address(), b->count(), b->datatype(), 0, tag, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  b->unpack();
  return compare(x.name, x.dtype, x.shape, x.send, sent.data(), x.receive, got);
}

int send(const transfer& x, int tag, bool wrong_stride) {
  std::vector<unsigned char> data = pattern(x.send.buffer_elements * itemsize(x.dtype), tag, x.dtype.code == kDLBool);
  layout l = x.send;
  // The sabotage: a stride one element off, inside the same buffer.
  if (wrong_stride && !l.strides.empty() && x.shape[0] > 1) l.strides[0] += l.strides[0] > 0 ? -1 : 1;
  tensor t(data.data(), x.dtype, x.shape, l);
  auto b = dlpack_mdspan::mpi::try_send_buffer(t.t);
  if (!b) return fail(x.name, "send buffer refused", b.error().message().c_str());
  // A nonblocking send of the library's message: the buffer, which owns it, outlives the request.
  MPI_Request request;
  MPI_Isend(b->address(), b->count(), b->datatype(), 1, tag, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  return 0;
}

// The mdspan path: a std::mdspan transposed view sent, received into a layout_right one.
int mdspan_transfer(int rank) {
  constexpr int rows = 4, cols = 6;
  using stride_view = std::mdspan<const double, std::dextents<int, 2>, std::layout_stride>;
  if (rank == 0) {
    std::vector<double> a(rows * cols);
    for (int i = 0; i < rows * cols; ++i) a[i] = i * 1.5;
    // The transpose of the row-major rows x cols matrix: cols x rows, strides (1, cols).
    stride_view t(a.data(), {std::dextents<int, 2>(cols, rows), std::array<int, 2>{1, cols}});
    auto b = dlpack_mdspan::mpi::send_buffer(t);
    MPI_Send(b.address(), b.count(), b.datatype(), 1, 900, MPI_COMM_WORLD);
    return 0;
  }
  std::vector<double> out(rows * cols, -1.0);
  std::mdspan<double, std::dextents<int, 2>> m(out.data(), cols, rows);
  auto b = dlpack_mdspan::mpi::receive_buffer(m);
  MPI_Recv(b.address(), b.count(), b.datatype(), 0, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int failures = 0;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i)
      if (m[j, i] != (i * cols + j) * 1.5) failures += fail("mdspan transpose", "element differs", "");
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool wrong_stride = std::getenv("DLPM_MPI_WRONG_STRIDE") != nullptr;
  int failures = 0, compared = 0;
  if (size != 2) {
    std::fprintf(stderr, "point_to_point: run with 2 ranks, not %d\n", size);
    failures = 1;
  } else {
    const auto all = transfers();
    namespace mpi = dlpack_mdspan::mpi;
    for (const mpi::transfer how : {mpi::transfer::derived, mpi::transfer::chosen})
      for (std::size_t i = 0; i < all.size(); ++i) {
        const int tag = static_cast<int>(i) + 1;
        if (rank == 0) failures += send(all[i], tag, wrong_stride);
        else failures += receive_and_compare(all[i], tag, how), ++compared;
      }
    failures += mdspan_transfer(rank);
  }
  return finish("point_to_point", rank, failures, compared);
}
