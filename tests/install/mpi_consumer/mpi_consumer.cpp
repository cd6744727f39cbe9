// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One process (MPI's singleton start): a transposed view becomes a derived datatype of 24 floats.
#include <dlpack_mdspan/mpi.hpp>

#include <array>
#include <cstdio>
#include <mdspan>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  float a[24] = {};
  std::mdspan<const float, std::dextents<int, 2>, std::layout_stride> t(a, {std::dextents<int, 2>(6, 4), std::array{1, 6}});
  int size = 0;
  {
    auto b = dlpack_mdspan::mpi::send_buffer(t);
    MPI_Type_size(b.datatype(), &size);
  }
  MPI_Finalize();
  std::printf("C++: a transposed 6 x 4 float view is %d bytes of MPI datatype\n", size);
  return size == 96 ? 0 : 1;
}
