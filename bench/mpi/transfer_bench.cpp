// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rank 0 sends rank 1 a strided float32 (or int8, float16, float64, complex128) tensor of 64 MiB,
// received into the same strided
// layout (a halo exchange's shape), four ways:
//   chosen     dlpack_mdspan::mpi's buffers as they come (mpi::transfer::chosen: the library
//              packs where the contiguous runs are short, else the derived datatype)
//   datatype   dlpack_mdspan::mpi's derived datatype on both sides (transfer::derived): no
//              copy of ours
//   pack       pack into a contiguous buffer, send it, unpack it on the other side (what
//              users do today, e.g. .contiguous() then a copy back)
//   floor      a contiguous tensor of the same bytes, sent and received as is
//   send       the library's own transfer on both sides (mpi::send, mpi::receive: compact
//              tensors as one message, other layouts packed in pipelined fragments, the
//              library's default fragments unless --fragment BYTES / --depth N say otherwise)
// for eight layouts: every other column of a matrix, a transpose (of float32 and float64), a
// rank-4 sub-block (runs of 4 KiB), rows of 256 KiB, and transposes of int8, float16 and
// complex128. Prints
// one markdown table (median of the repetitions, measured on rank 1 from a barrier to the
// last byte in place) and checks every received element once.
//
//   mpiexec -np 2 dlpm_bench_mpi [--smoke] [--reps N] [--fragment BYTES] [--depth N] [--layout I]
//                                   (--layout: layout I alone, numbered from 0 in the order below)
//   dlpm_bench_mpi --construct N [--layout I]   (one process) build and free each layout's
//                                   (or layout I's) datatype N times: scripts/bench counts
//                                   the instructions of one (callgrind, N and 2N)
//   dlpm_bench_mpi --engine         (one process) MPI_Pack with the datatype against the pack
//                                   loop and the library's pack (a packed send buffer's
//                                   construction): the copies' cost without the transport
#include <dlpack_mdspan/mpi.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

namespace mpi = dlpack_mdspan::mpi;

// A rank-4 strided view of float32 (int8, float16, float64: bits 8, 16, 64; complex128: bits
// 128) over a parent buffer (unused modes: extent 1), held in a buffer of floats (a quarter
// of one an int8 element, half a float16, two a float64, four a complex128).
struct layout {
  const char* name;
  std::int64_t parent;     // elements in the parent buffer
  std::int64_t shape[4];
  std::int64_t strides[4];
  std::int64_t offset;     // elements
  int bits = 32;
  std::int64_t numel() const { return shape[0] * shape[1] * shape[2] * shape[3]; }
  std::size_t floats(std::int64_t elements) const { return static_cast<std::size_t>((elements * bits + 31) / 32); }
  DLTensor tensor(float* base) const {
    DLTensor t{};
    t.data = base;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = 4;
    const auto code = bits == 8 ? kDLInt : bits == 128 ? kDLComplex : kDLFloat;
    t.dtype = DLDataType{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), 1};
    t.shape = const_cast<std::int64_t*>(shape);
    t.strides = const_cast<std::int64_t*>(strides);
    t.byte_offset = static_cast<std::uint64_t>(offset) * static_cast<std::uint64_t>(bits / 8);
    return t;
  }
};

// 64 MiB of elements each (16 Mi floats; 64 Mi int8, 32 Mi float16, 8 Mi doubles, 4 Mi
// complex128); --smoke: 64 KiB.
std::vector<layout> layouts(bool smoke) {
  const std::int64_t n = smoke ? 128 : 4096;  // n x n floats = 64 MiB at 4096
  const std::int64_t a = smoke ? 2 : 8, b = smoke ? 4 : 32, c = smoke ? 4 : 64, d = smoke ? 512 : 1024;
  const std::int64_t pa = a + 2, pb = b + 8, pc = c + 8, pd = d + 256;  // the parent of the sub-block
  return {
      {"every other column", n * 2 * n, {1, 1, n, n}, {0, 0, 2 * n, 2}, 0},
      {"transpose", n * n, {1, 1, n, n}, {0, 0, 1, n}, 0},
      // float64: a transpose of an n/2 x n matrix
      {"transpose, float64", n / 2 * n, {1, 1, n, n / 2}, {0, 0, 1, n}, 0, 64},
      {"rank-4 sub-block", pa * pb * pc * pd, {a, b, c, d}, {pb * pc * pd, pc * pd, pd, 1}, ((1 * pb + 4) * pc + 4) * pd + 128},
      // rows of 256 KiB (8 KiB under --smoke), 1 KiB apart: long runs
      {"rows of 256 KiB", (n / 16) * (n * 16 + 256), {1, 1, n / 16, n * 16}, {0, 0, n * 16 + 256, 1}, 0},
      // int8: of a 4n x n matrix; float16: of a 2n x n matrix; complex128: of an n/4 x n matrix
      // (after the others, so that their --layout numbers stay)
      {"transpose, int8", 4 * n * n, {1, 1, n, 4 * n}, {0, 0, 1, n}, 0, 8},
      {"transpose, float16", 2 * n * n, {1, 1, n, 2 * n}, {0, 0, 1, n}, 0, 16},
      {"transpose, complex128", n / 4 * n, {1, 1, n, n / 4}, {0, 0, 1, n}, 0, 128},
  };
}

// The element at row-major index k of the view.
std::int64_t element(const layout& l, std::int64_t k) {
  std::int64_t at = l.offset;
  for (int r = 3; r >= 0; --r) {
    at += (k % l.shape[r]) * l.strides[r];
    k /= l.shape[r];
  }
  return at;
}

// Plain loops as a user writes them, the innermost a memcpy where it is contiguous; each
// element moved by a memcpy of its `Size` bytes (one load and store, two for complex128:
// float32's loop is the one a user writes for float, and the storage, floats, holds the
// other types' bytes too).
template <std::size_t Size>
void pack_as(const layout& l, const unsigned char* from, unsigned char* to) {
  for (std::int64_t i = 0; i < l.shape[0]; ++i)
    for (std::int64_t j = 0; j < l.shape[1]; ++j)
      for (std::int64_t k = 0; k < l.shape[2]; ++k) {
        const unsigned char* row = from + (l.offset + i * l.strides[0] + j * l.strides[1] + k * l.strides[2]) * Size;
        if (l.strides[3] == 1) {
          std::memcpy(to, row, static_cast<std::size_t>(l.shape[3]) * Size);
          to += l.shape[3] * Size;
        } else {
          for (std::int64_t m = 0; m < l.shape[3]; ++m, to += Size) std::memcpy(to, row + m * l.strides[3] * Size, Size);
        }
      }
}

template <std::size_t Size>
void unpack_as(const layout& l, const unsigned char* from, unsigned char* to) {
  for (std::int64_t i = 0; i < l.shape[0]; ++i)
    for (std::int64_t j = 0; j < l.shape[1]; ++j)
      for (std::int64_t k = 0; k < l.shape[2]; ++k) {
        unsigned char* row = to + (l.offset + i * l.strides[0] + j * l.strides[1] + k * l.strides[2]) * Size;
        if (l.strides[3] == 1) {
          std::memcpy(row, from, static_cast<std::size_t>(l.shape[3]) * Size);
          from += l.shape[3] * Size;
        } else {
          for (std::int64_t m = 0; m < l.shape[3]; ++m, from += Size) std::memcpy(row + m * l.strides[3] * Size, from, Size);
        }
      }
}

// move(std::integral_constant<std::size_t, Size>{}) with the layout's element size in bytes.
template <class Move>
void by_size(const layout& l, Move move) {
  switch (l.bits) {
    case 8: move(std::integral_constant<std::size_t, 1>{}); break;
    case 16: move(std::integral_constant<std::size_t, 2>{}); break;
    case 64: move(std::integral_constant<std::size_t, 8>{}); break;
    case 128: move(std::integral_constant<std::size_t, 16>{}); break;
    default: move(std::integral_constant<std::size_t, 4>{}); break;
  }
}

void pack(const layout& l, const float* from, float* to) {
  by_size(l, [&](auto size) {
    pack_as<size()>(l, reinterpret_cast<const unsigned char*>(from), reinterpret_cast<unsigned char*>(to));
  });
}
void unpack(const layout& l, const float* from, float* to) {
  by_size(l, [&](auto size) {
    unpack_as<size()>(l, reinterpret_cast<const unsigned char*>(from), reinterpret_cast<unsigned char*>(to));
  });
}

enum class method { send, chosen, datatype, pack, floor };
constexpr const char* method_name[] = {"send", "chosen", "datatype", "pack", "floor"};
constexpr int methods = 5;
mpi::fragments fragments_asked;  // --fragment, --depth

// One transfer; returns rank 1's seconds from the barrier to the data in place.
double transfer(method how, const layout& l, std::vector<float>& parent, std::vector<float>& staging, int rank) {
  const int n = static_cast<int>(l.floats(l.numel()));  // the message's floats (a double is two)
  DLTensor t = l.tensor(parent.data());
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  if (how == method::send) {
    if (rank == 0) mpi::send(t, 1, 0, MPI_COMM_WORLD, std::uint64_t{0}, fragments_asked);
    else mpi::receive(t, 0, 0, MPI_COMM_WORLD, std::uint64_t{0}, fragments_asked);
  } else if (how == method::chosen || how == method::datatype) {
    const auto way = how == method::chosen ? mpi::transfer::chosen : mpi::transfer::derived;
    // construction (and a packed buffer's pack) is part of the cost
    auto b = rank == 0 ? mpi::send_buffer(t, std::uint64_t{0}, way) : mpi::receive_buffer(t, std::uint64_t{0}, way);
    if (rank == 0) MPI_Send(b.address(), b.count(), b.datatype(), 1, 0, MPI_COMM_WORLD);
    else MPI_Recv(b.address(), b.count(), b.datatype(), 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    b.unpack();  // a packed receive lands in the tensor
  } else if (how == method::pack) {
    if (rank == 0) {
      pack(l, parent.data(), staging.data());
      MPI_Send(staging.data(), n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv(staging.data(), n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      unpack(l, staging.data(), parent.data());
    }
  } else {
    if (rank == 0) MPI_Send(staging.data(), n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
    else MPI_Recv(staging.data(), n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return MPI_Wtime() - start;
}

// Element k's bytes: float32 and float64 hold k + 1; int8 and float16 the low 8 or 16 bits of
// k + 1 mixed with the bits above (an element misplaced by less than 2^8 or 2^16 places
// differs), as a bit pattern; complex128 k + 1 and -(k + 1).
void element_bytes(int bits, std::int64_t k, unsigned char* out) {
  if (bits == 8) {
    *out = static_cast<unsigned char>((k + 1) ^ ((k >> 8) * 151) ^ (k >> 16));
  } else if (bits == 16) {
    const auto v = static_cast<std::uint16_t>((k + 1) ^ ((k >> 16) * 40503));
    std::memcpy(out, &v, 2);
  } else if (bits == 32) {
    const auto v = static_cast<float>(k + 1);
    std::memcpy(out, &v, 4);
  } else {
    const double v[2] = {static_cast<double>(k + 1), -static_cast<double>(k + 1)};
    std::memcpy(out, v, static_cast<std::size_t>(bits / 8));
  }
}

// Rank 1's view holds rank 0's elements (rank 0's parent: element_bytes).
// (The floor moves whatever the staging buffer holds: nothing to check.)
bool received(const layout& l, const std::vector<float>& parent) {
  const auto size = static_cast<std::size_t>(l.bits / 8);
  unsigned char expected[16];
  for (std::int64_t k = 0; k < l.numel(); ++k) {
    const std::int64_t at = element(l, k);
    element_bytes(l.bits, at, expected);
    if (std::memcmp(reinterpret_cast<const unsigned char*>(parent.data()) + at * l.bits / 8, expected, size) != 0) return false;
  }
  return true;
}

// Rank 0's parent: element k holds element_bytes(k).
void fill(const layout& l, std::vector<float>& parent) {
  auto* bytes = reinterpret_cast<unsigned char*>(parent.data());
  for (std::int64_t k = 0; k < l.parent; ++k) element_bytes(l.bits, k, bytes + k * l.bits / 8);
}

// --construct N [--layout I]: each layout's (or layout I's) datatype built and freed N times
// (one process).
int construct(long count, int only) {
  MPI_Init(nullptr, nullptr);
  std::vector<float> parent(1);
  const auto all = layouts(false);
  for (int i = 0; i < static_cast<int>(all.size()); ++i) {
    if (only >= 0 && i != only) continue;
    const layout& l = all[static_cast<std::size_t>(i)];
    const DLTensor t = l.tensor(parent.data());
    const double start = MPI_Wtime();
    for (long i = 0; i < count; ++i) {
      auto b = mpi::send_buffer(t, std::uint64_t{0}, mpi::transfer::derived);
      if (!b.derived()) std::abort();
    }
    std::printf("%s\t%.3f us\n", l.name, (MPI_Wtime() - start) / static_cast<double>(count) * 1e6);
  }
  MPI_Finalize();
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// --engine (one process): what a transfer's datatype path costs without the transport, MPI's
// datatype engine packing the tensor (MPI_Pack) against the plain pack loop, median of 5; and
// the machine's rate for the message's bytes, one memcpy of as many bytes between two buffers
// already written (the pack and the unpack move the same bytes, in the tensor's order).
int engine() {
  MPI_Init(nullptr, nullptr);
  std::printf("| layout | MPI_Pack of the datatype ms | pack loop ms | library's pack ms | MPI_Pack / library's | library's unpack ms "
              "| memcpy of the message ms | library's pack / memcpy | library's unpack / memcpy |\n"
              "|---|---|---|---|---|---|---|---|---|\n");
  for (const layout& l : layouts(false)) {
    std::vector<float> parent(l.floats(l.parent), 1.0f), packed(l.floats(l.numel()));
    const auto b = mpi::send_buffer(l.tensor(parent.data()), std::uint64_t{0}, mpi::transfer::derived);
    std::vector<double> by_mpi, by_loop, by_library, by_unpack, by_memcpy;
    for (int r = 0; r < 6; ++r) {
      double begin = MPI_Wtime();
      std::memcpy(packed.data(), parent.data(), packed.size() * sizeof(float));
      if (r > 0) by_memcpy.push_back(MPI_Wtime() - begin);
      begin = MPI_Wtime();
      {
        const auto p = mpi::send_buffer(l.tensor(parent.data()), std::uint64_t{0}, mpi::transfer::packed);  // packs
        if (r > 0) by_library.push_back(MPI_Wtime() - begin);
      }
      int position = 0;
      double start = MPI_Wtime();
      MPI_Pack(b.address(), b.count(), b.datatype(), packed.data(), static_cast<int>(packed.size() * sizeof(float)), &position,
               MPI_COMM_SELF);
      if (r > 0) by_mpi.push_back(MPI_Wtime() - start);
      start = MPI_Wtime();
      pack(l, parent.data(), packed.data());
      if (r > 0) by_loop.push_back(MPI_Wtime() - start);
      {
        auto u = mpi::receive_buffer(l.tensor(parent.data()), std::uint64_t{0}, mpi::transfer::packed);
        start = MPI_Wtime();
        u.unpack();  // the message (as allocated) into the tensor's places
        if (r > 0) by_unpack.push_back(MPI_Wtime() - start);
      }
    }
    std::printf("| %s | %.1f | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %.2f |\n", l.name, median(by_mpi) * 1e3,
                median(by_loop) * 1e3, median(by_library) * 1e3, median(by_mpi) / median(by_library), median(by_unpack) * 1e3,
                median(by_memcpy) * 1e3, median(by_library) / median(by_memcpy), median(by_unpack) / median(by_memcpy));
  }
  MPI_Finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  int reps = 9, only = -1;
  long constructions = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--smoke") smoke = true, reps = 1;
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--construct" && i + 1 < argc) constructions = std::atol(argv[++i]);
    else if (a == "--layout" && i + 1 < argc) only = std::atoi(argv[++i]);
    else if (a == "--fragment" && i + 1 < argc) fragments_asked.bytes = std::atol(argv[++i]);
    else if (a == "--depth" && i + 1 < argc) fragments_asked.depth = std::atoi(argv[++i]);
    else if (a == "--engine") return engine();
  }
  if (constructions > 0) return construct(constructions, only);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "dlpm_bench_mpi: run with 2 ranks (mpiexec -np 2)\n");
    MPI_Finalize();
    return 2;
  }
  int failures = 0;
  if (rank == 0)
    std::printf("| layout | MiB | send ms | chosen | chosen ms | datatype ms | pack-send-unpack ms | contiguous floor ms | "
                "send / pack | send / floor | chosen / pack | chosen / floor | datatype / pack | datatype / floor | construction us |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const std::vector<layout> all = layouts(smoke);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (only >= 0 && static_cast<int>(i) != only) continue;
    const layout& l = all[i];
    std::vector<float> parent(l.floats(l.parent)), staging(l.floats(l.numel()));
    double median_of[methods] = {};
    // Rank 0's parent holds index + 1; rank 1's is zeroed before the transfer it checks.
    if (rank == 0) fill(l, parent);
    // Round by round, each round every method once: whatever the machine does in the first
    // moments after the buffers are allocated (or at any moment) falls on every method alike.
    // Measured method by method, send (measured first) of the rows of 256 KiB at 4 MiB
    // fragments took 42 to 59 ms in five runs of six where the derived datatype took 12 to
    // 25; measured after it, 15 and 17 ms, and the datatype, then first, 13 and 32 ms
    // (docs/performance.md, MPI).
    std::vector<double> times[methods];
    for (int r = 0; r < reps + 1; ++r) {  // + 1: the first round warms the pages and is checked
      for (method how : {method::send, method::chosen, method::datatype, method::pack, method::floor}) {
        if (rank == 1 && r == 0) std::fill(parent.begin(), parent.end(), 0.0f);
        const double s = transfer(how, l, parent, staging, rank);
        if (r > 0) times[static_cast<int>(how)].push_back(s);
        if (rank == 1 && r == 0 && how != method::floor && !received(l, parent)) {
          std::fprintf(stderr, "dlpm_bench_mpi: %s, %s: a received element is wrong\n", l.name, method_name[static_cast<int>(how)]);
          ++failures;
        }
      }
    }
    for (int m = 0; m < methods; ++m) median_of[m] = median(times[m]);
    // Construction: build and free the datatype 1000 times on rank 1 (rank 0 waits).
    double construction_us = 0;
    if (rank == 1) {
      const DLTensor t = l.tensor(parent.data());
      const int count = smoke ? 10 : 1000;
      const double start = MPI_Wtime();
      for (int i = 0; i < count; ++i) {
        auto b = mpi::receive_buffer(t, std::uint64_t{0}, mpi::transfer::derived);
        if (!b.derived()) ++failures;
      }
      construction_us = (MPI_Wtime() - start) / count * 1e6;
      MPI_Send(median_of, methods, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
      MPI_Send(&construction_us, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    } else {
      MPI_Recv(median_of, methods, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(&construction_us, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const double bytes = static_cast<double>(l.numel()) * (l.bits / 8);
      const DLTensor t = l.tensor(parent.data());
      const bool packs = mpi::send_buffer(t, std::uint64_t{0}, mpi::transfer::chosen).packed();
      const double* ms = median_of;  // send, chosen, datatype, pack, floor
      std::printf("| %s | %.2f | %.2f | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |\n", l.name,
                  bytes / (1 << 20), ms[0] * 1e3, packs ? "packed" : "datatype", ms[1] * 1e3, ms[2] * 1e3, ms[3] * 1e3, ms[4] * 1e3,
                  ms[0] / ms[3], ms[0] / ms[4], ms[1] / ms[3], ms[1] / ms[4], ms[2] / ms[3], ms[2] / ms[4], construction_us);
    }
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("\n%d ranks, median of %d transfers each, %s\n", size, reps, total ? "WRONG DATA" : "every element checked");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
