// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every refusal of dlpack_mdspan/mpi.hpp, with its errc and message, before MPI sees the
// tensor (one rank is enough: nothing is sent). Also what a buffer is for each layout class:
// a count of a predefined type when compact row-major, one committed derived datatype
// otherwise, whose extent is the bytes the elements reach.
#include "mpi_test.hpp"

#include <climits>
#include <mdspan>
#include <string_view>
#include <utility>

namespace {

using namespace dlpm_mpi_test;
namespace mpi = dlpack_mdspan::mpi;
using dlpack_mdspan::errc;

int failures = 0;

// Whether try_receive_buffer accepts a V (a requires-expression needs a template to say no).
template <class V>
constexpr bool receivable = requires(const V& v) { mpi::try_receive_buffer(v); };

void check(bool ok, const char* what) {
  if (!ok) failures += fail("refusals", what, "");
}

template <class R>
void refused(const R& r, errc code, std::string_view words, const char* what) {
  if (r) return check(false, what);
  const auto message = r.error().message();
  std::printf("  %-46s %s\n", what, message.c_str());
  check(r.error().code() == code, what);
  check(message.view().find(words) != std::string_view::npos, what);
}

}  // namespace

int main(int argc, char** argv) {
  float data[64] = {};
  const DLDataType f32{kDLFloat, 32, 1};
  tensor compact(data, f32, {4, 6}, row_major({4, 6}));

  // Before MPI_Init: no datatype can be made.
  refused(mpi::try_send_buffer(compact.t), errc::invalid_argument, "MPI is not initialized", "before MPI_Init");

  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  tensor broadcast(data, f32, {4, 6}, {{0, 1}, 0, 6});
  check(static_cast<bool>(mpi::try_send_buffer(broadcast.t)), "a broadcast layout is sent");
  refused(mpi::try_receive_buffer(broadcast.t), errc::overlapping_strides, "reaches an element twice", "receive into a broadcast");
  tensor overlap(data, f32, {4, 6}, {{2, 1}, 0, 64});
  refused(mpi::try_receive_buffer(overlap.t), errc::overlapping_strides, "reaches an element twice", "receive into overlapping rows");

  DLManagedTensorVersioned read_only{};
  read_only.dl_tensor = compact.t;
  read_only.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  check(static_cast<bool>(mpi::try_send_buffer(read_only)), "a READ_ONLY tensor is sent");
  refused(mpi::try_receive_buffer(read_only), errc::read_only, "READ_ONLY", "receive into a READ_ONLY tensor");

  tensor int4(data, DLDataType{kDLInt, 4, 1}, {4, 6}, row_major({4, 6}));
  refused(mpi::try_send_buffer(int4.t), errc::subbyte_not_viewable, "int4", "packed int4");
  tensor fp4(data, DLDataType{kDLFloat4_e2m1fn, 4, 1}, {4, 6}, row_major({4, 6}));
  refused(mpi::try_send_buffer(fp4.t), errc::subbyte_not_viewable, "is packed, which cannot be viewed as one whole-byte element", "packed fp4");

  // 2^31 broadcast rows of one element: a valid tensor that MPI-3 cannot count.
  tensor huge(data, f32, {std::int64_t{1} << 31, 2}, {{0, 1}, 0, 2});
  if constexpr (!mpi::large_counts)
    refused(mpi::try_send_buffer(huge.t), errc::extent_overflow, "beyond INT_MAX", "an extent beyond INT_MAX (MPI-3)");
  else
    check(static_cast<bool>(mpi::try_send_buffer(huge.t)), "MPI-4 counts an extent beyond INT_MAX");

  tensor on_gpu(data, f32, {4, 6}, row_major({4, 6}));
  on_gpu.t.device = DLDevice{kDLCUDA, 0};
  if (!mpi::cuda_aware())
    refused(mpi::try_send_buffer(on_gpu.t), errc::device_mismatch, "CUDA-aware", "CUDA memory, MPI not CUDA-aware");
  on_gpu.t.device = DLDevice{kDLROCM, 0};
  refused(mpi::try_send_buffer(on_gpu.t), errc::device_mismatch, "kDLROCM", "ROCm memory");

  tensor half(data, DLDataType{kDLFloat, 16, 1}, {4, 6}, {{12, 2}, 0, 48});
  auto h = mpi::try_send_buffer(half.t);
  check(h && h->derived() && !h->element().reducible, "float16 travels as bytes, in a derived datatype");
  if (h) refused(h->reduction_datatype(), errc::dtype_mismatch, "2 bytes each", "a reduction on float16");

  tensor strided(data, f32, {4, 3}, {{6, 2}, 0, 24});
  auto st = mpi::try_send_buffer(strided.t);
  if (st) refused(st->reduction_datatype(), errc::non_compact_strides, "predefined datatypes only", "a reduction on a strided view");

  tensor negative(data, f32, {4, -6}, {{6, 1}, 0, 24});
  refused(mpi::try_send_buffer(negative.t), errc::negative_extent, "negative", "an invalid tensor: the core's error");

  // What each layout class becomes.
  auto c = mpi::try_send_buffer(compact.t);
  check(c && !c->derived() && c->count() == 24 && c->datatype() == MPI_FLOAT && c->address() == data,
        "compact row-major: 24 MPI_FLOAT at data");
  check(c && *c->reduction_datatype() == MPI_FLOAT, "float32 reduces as MPI_FLOAT");
  tensor offset(data, f32, {2, 3}, {{3, 1}, 5, 11});
  auto o = mpi::try_send_buffer(offset.t);
  check(o && !o->derived() && o->address() == data + 5, "byte_offset moves the base address");
  tensor reversed(data, f32, {4, 6}, {{-6, 1}, 18, 24});
  auto r = mpi::try_receive_buffer(reversed.t);
  MPI_Aint lb = 0, extent = 0;
  if (r) MPI_Type_get_extent(r->datatype(), &lb, &extent);
  check(r && r->derived() && r->count() == 1 && r->address() == data + 18, "negative strides: element 0 is the base address");
  check(lb == -18 * 4 && extent == 24 * 4, "negative strides: lower bound below the base, extent the span");
  int size = 0;
  if (r) MPI_Type_size(r->datatype(), &size);
  check(size == 24 * 4, "the datatype holds every element once");
  tensor zero_d(data, f32, {}, {{}, 3, 4});
  auto z = mpi::try_receive_buffer(zero_d.t);
  check(z && z->count() == 1 && z->datatype() == MPI_FLOAT && z->address() == data + 3, "0-d: one MPI_FLOAT");
  tensor empty(nullptr, f32, {0, 6}, row_major({0, 6}));
  auto e = mpi::try_receive_buffer(empty.t);
  check(e && e->count() == 0, "empty: count 0, NULL data allowed");

  // mdspan: a const view is sent; receiving into it does not compile (the constraint).
  std::mdspan<const float, std::dextents<int, 2>> view(data, 4, 6);
  check(static_cast<bool>(mpi::try_send_buffer(view)), "a const mdspan is sent");
  static_assert(!receivable<decltype(view)>, "a const mdspan cannot be received into");
  static_assert(receivable<std::mdspan<float, std::dextents<int, 2>>>, "a mutable mdspan can");

  // One validation per buffer: the tensor is checked once (check_tensor), and the admission
  // and the datatype read the checked tensor (DLPM_TEST_COUNT_STRUCTURE_CHECKS counts every
  // check_structure on this thread; CMakeLists.txt defines it for this test alone).
  for (const auto& [layout, name] : {std::pair{&compact, "compact"}, std::pair{&reversed, "reversed rows"}}) {
    dlpack_mdspan::detail::structure_checks = 0;
    const auto sent = mpi::try_send_buffer(layout->t);
    const long send_checks = dlpack_mdspan::detail::structure_checks;
    dlpack_mdspan::detail::structure_checks = 0;
    const auto received = mpi::try_receive_buffer(layout->t);
    const long receive_checks = dlpack_mdspan::detail::structure_checks;
    std::printf("  %-46s send %ld, receive %ld\n", name, send_checks, receive_checks);
    check(sent && send_checks == 1, "a send validates its tensor once");
    check(received && receive_checks == 1, "a receive validates its tensor once");
  }

  // The buffer frees its datatype once, also when moved.
  {
    auto moved = std::move(*r);
    check(moved.derived() && !r->derived(), "a moved buffer owns the datatype once");
  }

  return finish("refusals", rank, failures, 1);
}
