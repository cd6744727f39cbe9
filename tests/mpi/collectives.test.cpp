// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Collectives on strided views (mpiexec -np 3): MPI_Bcast of every other column from rank 0
// (packed) into transposed views elsewhere (derived, and packed then unpacked); MPI_Allgather of each rank's strided column into a compact
// array; MPI_Allreduce of compact int32 views. Each result is compared element by element
// with a reference computed without MPI.
#include "mpi_test.hpp"

namespace {

using namespace dlpm_mpi_test;
namespace mpi = dlpack_mdspan::mpi;

constexpr DLDataType f32{kDLFloat, 32, 1};
constexpr DLDataType i32{kDLInt, 32, 1};

// Rank 0's 4 x 6 matrix (every other column of it is sent: packed, the library's choice) and
// the transposed view others receive the 4 x 3 selection into: by the derived datatype (the
// default), then packed (`how` transfer::chosen) and unpacked after the broadcast.
int broadcast(int rank, mpi::transfer how) {
  std::vector<unsigned char> source = pattern(24 * 4, 7);
  const layout every_other{{6, 2}, 0, 24}, transposed{{1, 4}, 0, 12};
  std::vector<unsigned char> got(12 * 4, sentinel);
  const bool root = rank == 0;
  tensor t(root ? source.data() : got.data(), f32, {4, 3}, root ? every_other : transposed);
  auto b = root ? mpi::try_send_buffer(t.t, 0, mpi::transfer::chosen) : mpi::try_receive_buffer(t.t, 0, how);
  if (!b) return fail("bcast", "buffer refused", b.error().message().c_str());
  if (b->packed() != (root || how == mpi::transfer::chosen)) return fail("bcast", "not the way the choice gives", "");
  MPI_Bcast(b->address(), b->count(), b->datatype(), 0, MPI_COMM_WORLD);
  b->unpack();
  return root ? 0 : compare("bcast", f32, {4, 3}, every_other, source.data(), transposed, got);
}

// Column `rank` of each rank's 5 x size matrix (stride size), gathered as row `rank`.
int allgather(int rank, int size) {
  std::vector<float> mine(static_cast<std::size_t>(5 * size));
  for (int k = 0; k < 5 * size; ++k) mine[k] = static_cast<float>(rank * 1000 + k);
  tensor column(mine.data() + rank, f32, {5}, {{size}, 0, 5 * size});
  auto b = mpi::try_send_buffer(column.t);
  if (!b) return fail("allgather", "buffer refused", b.error().message().c_str());
  std::vector<float> all(static_cast<std::size_t>(5 * size), -1.0f);
  MPI_Allgather(b->address(), b->count(), b->datatype(), all.data(), 5, MPI_FLOAT, MPI_COMM_WORLD);
  int failures = 0;
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < 5; ++i)
      if (all[static_cast<std::size_t>(r * 5 + i)] != static_cast<float>(r * 1000 + i * size + r) && failures++ == 0)
        fail("allgather", "gathered element differs", "");
  return failures;
}

// A reduction: MPI's predefined operations take predefined datatypes, so compact int32 views
// (the receive at an offset into a larger array); a strided one is refused (refusals.test.cpp).
int allreduce(int rank, int size) {
  std::int32_t mine[6], sum[8];
  for (int k = 0; k < 6; ++k) mine[k] = (rank + 1) * (k + 1);
  for (int k = 0; k < 8; ++k) sum[k] = -7;
  tensor from(mine, i32, {2, 3}, row_major({2, 3})), into(sum, i32, {2, 3}, {{3, 1}, 1, 8});
  auto s = mpi::try_send_buffer(from.t);
  auto r = mpi::try_receive_buffer(into.t);
  if (!s || !r) return fail("allreduce", "buffer refused", "");
  const auto type = r->reduction_datatype();
  if (!type) return fail("allreduce", "reduction refused", type.error().message().c_str());
  MPI_Allreduce(s->address(), r->address(), r->count(), *type, MPI_SUM, MPI_COMM_WORLD);
  int failures = 0;
  const int ranks_sum = size * (size + 1) / 2;
  for (int k = 0; k < 6; ++k) failures += sum[k + 1] != ranks_sum * (k + 1);
  failures += sum[0] != -7 || sum[7] != -7;  // untouched
  if (failures) fail("allreduce", "reduced elements differ", "");
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int failures = broadcast(rank, mpi::transfer::derived) + broadcast(rank, mpi::transfer::chosen) + allgather(rank, size) +
                       allreduce(rank, size);
  return finish("collectives", rank, failures, 4);
}
