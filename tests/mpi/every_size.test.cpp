// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every element size (1, 2, 4, 8, 16 bytes; each as a predefined MPI type and, where DLPack
// has one MPI lacks, as bytes) along every stride sign and magnitude (-2 to 2 elements on
// each axis; zero, and rows that overlap, on the send side only), through the C++ header and the C companion, on
// 1 to 4 real ranks in a ring: each rank sends case k to the next and receives case k from
// the previous. Every received element is compared with the sender's, found by index
// arithmetic on a copy of the sender's buffer (no MPI); every receive buffer has 64 guard
// bytes on both sides, and every byte no element covers, guards included, must still hold
// the sentinel. Send buffers carry the same guards, so an element read from outside the
// tensor arrives as the sentinel and fails the comparison. Every case travels both ways a
// layout can: MPI's derived datatype (DLPM_MPI_DERIVED) and the library's pack
// (DLPM_MPI_PACKED: the send packed when its buffer is made, the receive unpacked after
// MPI_Wait), each send nonblocking, its buffer kept until the request completes. On 2 ranks,
// every case also travels by the library's own transfer (mpi::send and
// mpi::receive, dlpm_mpi_send and dlpm_mpi_recv: packed in pipelined fragments), its
// fragments by the case number one element, 2.5 elements (not a whole number of elements:
// rounded down to 2, the last fragment the rest), 3 elements with one in flight, or the
// default (300 times those for long runs of 256 elements, which the library's transfer moves
// as a derived datatype per fragment, received into and sent from packed layouts); and an
// empty tensor travels every way.
#include "mpi_test.hpp"

#include <dlpack_mdspan_mpi.h>

#include <algorithm>
#include <string>

namespace {

using namespace dlpm_mpi_test;

constexpr std::int64_t guard_bytes = 64;

struct element_type {
  const char* name;
  DLDataType dtype;
};

constexpr DLDataType dt(std::uint8_t code, std::uint8_t bits) { return DLDataType{code, bits, 1}; }

const element_type element_types[] = {
    {"int8", dt(kDLInt, 8)},          {"uint8", dt(kDLUInt, 8)},          {"float8_e4m3fn (bytes)", dt(kDLFloat8_e4m3fn, 8)},
    {"int16", dt(kDLInt, 16)},        {"float16 (bytes)", dt(kDLFloat, 16)}, {"float32", dt(kDLFloat, 32)},
    {"int64", dt(kDLInt, 64)},        {"complex64", dt(kDLComplex, 64)},  {"complex128", dt(kDLComplex, 128)},
    {"float128 (bytes)", dt(kDLFloat, 128)},
};

// A layout of `shape` with these element strides, placed `guard` elements into its buffer,
// with `guard` elements after the bytes it reaches.
layout place(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides, std::int64_t guard) {
  std::int64_t low = 0, high = 0;
  for (std::size_t r = 0; r < shape.size(); ++r) {
    const std::int64_t reach = (shape[r] - 1) * strides[r];
    low += std::min<std::int64_t>(0, reach);
    high += std::max<std::int64_t>(0, reach);
  }
  return layout{strides, guard - low, high - low + 1 + 2 * guard};
}

struct shape_case {
  std::vector<std::int64_t> shape;
  std::vector<std::vector<std::int64_t>> strides;  // every layout tried for this shape
  std::vector<std::vector<std::int64_t>> receive_only{};  // when set, the receive layouts (else strides')
  std::int64_t fragment_elements = 1;  // the library's transfer: fragments_of's elements times this
};

// Strides in elements: every sign and magnitude -2..2 on each axis.
std::vector<shape_case> shape_cases() {
  std::vector<shape_case> all;
  shape_case vector{{7}, {}};
  for (std::int64_t s = -2; s <= 2; ++s) vector.strides.push_back({s});
  all.push_back(vector);
  // A 3 x 5 matrix: the inner axis -2..2 elements, the outer axis -2..2 times the row's reach,
  // so the rows never overlap (except where a stride is zero).
  shape_case matrix{{3, 5}, {}};
  for (std::int64_t inner = -2; inner <= 2; ++inner)
    for (std::int64_t outer = -2; outer <= 2; ++outer) matrix.strides.push_back({outer * 5 * std::max<std::int64_t>(1, inner < 0 ? -inner : inner), inner});
  all.push_back(matrix);
  // The outer axis of magnitude 1 over an inner axis of magnitude 2: interleaved rows, so a
  // -1-element step on the outer mode of the datatype (over a derived inner type).
  shape_case interleaved{{2, 4}, {}};
  for (std::int64_t outer : {-1, 1})
    for (std::int64_t inner : {-2, 2}) interleaved.strides.push_back({outer, inner});
  all.push_back(interleaved);
  // Overlapping rows (send only): runs of 2 elements, rows 1 element apart, both directions.
  all.push_back({{4, 2}, {{-1, 1}, {1, 1}, {-1, -1}}, {{2, 1}, {-2, -1}}});
  // Transposes (column-major, each axis either way): the library's pack copies them in
  // tiles, and its fragments of 1 to 3 elements cut the tiles' rows anywhere; sent into and
  // received from compact rows and every other element of reversed rows (the library's
  // transfer packs a transpose in batches of fragments, those one fragment at a time: built
  // with DLPM_MPI_TILES_BATCH_BYTES=20, several batches, the last one short).
  all.push_back({{4, 6}, {{1, 4}, {-1, 4}, {1, -4}, {6, 1}, {12, -2}}});
  // Long runs (256 elements: 256 bytes and more, whatever the element): the library's
  // transfer moves each fragment of these as a derived datatype of its pieces (a run's part,
  // boxes of whole rows, partial slices) where a compact or packed layout is on the other
  // side; fragments of 300, 750 and 900 elements cut rows and slices anywhere. Inner stride -1:
  // runs of one element, packed, into and out of the long runs.
  all.push_back({{2, 3, 256}, {{768, 256, 1}, {900, 300, 1}, {-900, 300, 1}, {256, 512, 1}, {768, 256, -1}}, {}, 300});
  // Empty: no element, whatever the strides.
  all.push_back({{0, 3}, {{3, 1}, {1, -2}}});
  return all;
}

bool has_zero(const std::vector<std::int64_t>& strides) { return std::find(strides.begin(), strides.end(), 0) != strides.end(); }

std::string describe(const char* api, const element_type& e, const std::vector<std::int64_t>& shape, const layout& send, const layout& recv) {
  auto list = [](const std::vector<std::int64_t>& v) {
    std::string s = "(";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + ")";
  };
  return std::string(api) + " " + e.name + " shape " + list(shape) + " strides " + list(send.strides) + " into " + list(recv.strides);
}

// The MPI buffer of a tensor through one of the two APIs, and its release.
struct mpi_buffer {
  void* address = nullptr;
  int count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  bool packed = false;
  bool derived = false;
  dlpack_mdspan::mpi::buffer cpp;
  dlpm_mpi_datatype c{};
  std::string refusal;
  void unpack() {
    dlpm_mpi_unpack(&c);
    cpp.unpack();
  }
  ~mpi_buffer() { dlpm_mpi_datatype_free(&c); }
};

// The library's own transfer of case `k` (the fragments by k, in units of `scale` elements;
// both sides compute the same).
dlpack_mdspan::mpi::fragments fragments_of(int k, std::int64_t item, std::int64_t scale) {
  switch (k % 4) {
    case 0: return {scale == 1 ? 1 : item * scale, 2};  // one element each (1 byte: rounded up to one element)
    case 1: return {item * 5 * scale / 2, 2}; // 2.5 elements: rounded down to 2, the last the rest
    case 2: return {3 * item * scale, 1};     // 3 elements, one in flight
    default: return {};                       // the default
  }
}

bool move(bool use_c, const DLTensor& t, bool receive, int peer, int tag, dlpack_mdspan::mpi::fragments f, std::string& refusal) {
  if (use_c) {
    dlpm_mpi_datatype status{};
    if (dlpm_mpi_move_as(&t, 0, receive, peer, tag, MPI_COMM_WORLD, f.bytes, f.depth, &status) != DLPM_OK)
      return refusal = dlpm_mpi_error(&status), false;
    return true;
  }
  const auto moved = receive ? dlpack_mdspan::mpi::try_receive(t, peer, tag, MPI_COMM_WORLD, 0, f)
                             : dlpack_mdspan::mpi::try_send(t, peer, tag, MPI_COMM_WORLD, 0, f);
  if (!moved) return refusal = moved.error().message(), false;
  return true;
}

bool make(bool use_c, dlpm_mpi_transfer way, const DLTensor& t, bool receive, mpi_buffer& out) {
  if (use_c) {
    const dlpm_status s = dlpm_mpi_buffer_as(&t, 0, receive, way, &out.c);
    if (s != DLPM_OK) return out.refusal = dlpm_mpi_error(&out.c), false;
    out.address = out.c.address, out.count = out.c.count, out.datatype = out.c.datatype;
    out.packed = out.c.packing != nullptr, out.derived = out.c.derived != 0;
    return true;
  }
  const auto how = static_cast<dlpack_mdspan::mpi::transfer>(way);
  auto b = receive ? dlpack_mdspan::mpi::try_receive_buffer(t, 0, how) : dlpack_mdspan::mpi::try_send_buffer(t, 0, how);
  if (!b) return out.refusal = b.error().message(), false;
  out.cpp = std::move(*b);
  out.address = out.cpp.address(), out.count = out.cpp.count(), out.datatype = out.cpp.datatype();
  out.packed = out.cpp.packed(), out.derived = out.cpp.derived();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc > 1 && ranks != std::atoi(argv[1])) {  // the expected size: an mpiexec of another MPI gives singletons
    std::fprintf(stderr, "FAIL every_size: %d ranks, not %s: is mpiexec another MPI's?\n", ranks, argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
  int failures = 0, compared = 0, failed_transfers = 0, printed = 0, packed = 0, derived = 0;
  int k = 0;  // the case number: the tag, and with the sender's rank the byte pattern
  int moved = 0;
  for (const int way_number : {static_cast<int>(DLPM_MPI_DERIVED), static_cast<int>(DLPM_MPI_PACKED), 3})
  for (const bool use_c : {false, true})
    for (const element_type& e : element_types)
      for (const shape_case& sc : shape_cases())
        for (const auto& send_strides : sc.strides)
          for (const auto& recv_strides : sc.receive_only.empty() ? sc.strides : sc.receive_only) {
            if (has_zero(recv_strides)) continue;  // a receive reaches each element once
            const bool library_moves = way_number == 3;  // the library's own transfer
            // On 2 ranks only: a blocking send to itself (1 rank) would wait forever, and on a
            // ring of 3 or 4 the blocking transfers go one after the other, which MPICH's busy
            // polling on oversubscribed cores makes take minutes.
            if (library_moves && ranks != 2) continue;
            const auto way = library_moves ? DLPM_MPI_PACKED : static_cast<dlpm_mpi_transfer>(way_number);
            ++k;
            const std::int64_t item = static_cast<std::int64_t>(itemsize(e.dtype));
            const std::int64_t guard = guard_bytes / item;
            const layout send = place(sc.shape, send_strides, guard), recv = place(sc.shape, recv_strides, guard);
            const int tag = k % 30000;
            // The bytes each side's buffer holds: the sender's pattern, guards of sentinels.
            auto filled = [&](int sender) {
              std::vector<unsigned char> bytes = pattern(static_cast<std::size_t>(send.buffer_elements * item), k * 7 + sender);
              std::fill_n(bytes.begin(), guard_bytes, sentinel);
              std::fill_n(bytes.end() - guard_bytes, guard_bytes, sentinel);
              return bytes;
            };
            std::vector<unsigned char> outgoing = filled(rank), incoming(static_cast<std::size_t>(recv.buffer_elements * item), sentinel);
            tensor out_tensor(outgoing.data(), e.dtype, sc.shape, send), in_tensor(incoming.data(), e.dtype, sc.shape, recv);
            mpi_buffer out_buffer, in_buffer;
            const std::string name =
                library_moves ? describe(use_c ? "C send/recv" : "C++ send/receive", e, sc.shape, send, recv) + ", fragments of " +
                                    std::to_string(fragments_of(k, item, sc.fragment_elements).bytes) + " bytes, " +
                                    std::to_string(fragments_of(k, item, sc.fragment_elements).depth) + " in flight"
                : describe(way == DLPM_MPI_PACKED ? (use_c ? "C packed" : "C++ packed") : (use_c ? "C" : "C++"), e, sc.shape, send, recv);
            if (library_moves) {
              // Rank 0 sends first, the others receive first: the ring's blocking transfers
              // then never all wait for each other.
              std::string refusal;
              bool done = true;
              for (int step = 0; step < 2 && done; ++step)
                done = (step == 0) == (rank == 0) ? move(use_c, out_tensor.t, false, next, tag, fragments_of(k, item, sc.fragment_elements), refusal)
                                                  : move(use_c, in_tensor.t, true, previous, tag, fragments_of(k, item, sc.fragment_elements), refusal);
              if (!done) {
                fail(name.c_str(), "the library's transfer refused:", refusal.c_str());
                MPI_Abort(MPI_COMM_WORLD, 1);
              }
              ++moved;
              const std::vector<unsigned char> sent = filled(previous);
              const int wrong = compare(printed < 20 ? name.c_str() : nullptr, e.dtype, sc.shape, send, sent.data(), recv, incoming);
              ++compared;
              if (wrong != 0) failures += wrong, ++failed_transfers, ++printed;
              continue;
            }
            // Every layout here is valid: a refusal is a failure, and ends the run (the ring's
            // other ranks would wait for this rank's message). No collective per case: MPICH's
            // busy polling makes thousands of them crawl on oversubscribed cores.
            const bool sendable = make(use_c, way, out_tensor.t, false, out_buffer);
            if (!make(use_c, way, in_tensor.t, true, in_buffer) || !sendable) {
              fail(name.c_str(), "buffer refused:", (out_buffer.refusal + in_buffer.refusal).c_str());
              MPI_Abort(MPI_COMM_WORLD, 1);
            }
            // The way asked for is the way taken: a layout that is not compact row-major is
            // packed, or a derived datatype, never the other.
            for (const mpi_buffer* b : {&out_buffer, &in_buffer}) {
              if (b->packed && b->derived) failures += fail(name.c_str(), "both packed and derived", "");
              if (way == DLPM_MPI_DERIVED && b->packed) failures += fail(name.c_str(), "packed, though the datatype was asked for", "");
              if (way == DLPM_MPI_PACKED && b->derived) failures += fail(name.c_str(), "a derived datatype, though packing was asked for", "");
              packed += b->packed, derived += b->derived;
            }
            MPI_Request requests[2];
            MPI_Irecv(in_buffer.address, in_buffer.count, in_buffer.datatype, previous, tag, MPI_COMM_WORLD, &requests[0]);
            MPI_Isend(out_buffer.address, out_buffer.count, out_buffer.datatype, next, tag, MPI_COMM_WORLD, &requests[1]);
            MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
            in_buffer.unpack();  // a packed receive lands in the tensor now
            const std::vector<unsigned char> sent = filled(previous);
            // compare() reports its first differences; past 20 failing transfers only count them.
            const int wrong = compare(printed < 20 ? name.c_str() : nullptr, e.dtype, sc.shape, send, sent.data(), recv, incoming);
            ++compared;
            if (wrong != 0) failures += wrong, ++failed_transfers, ++printed;
          }
  int failed_everywhere = 0;
  MPI_Allreduce(&failed_transfers, &failed_everywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("every_size on %d ranks: %d transfers failed; buffers packed %d, derived %d; the library's transfers %d\n", ranks,
                failed_everywhere, packed, derived, moved);
  if (packed == 0 || derived == 0 || (ranks == 2 && moved == 0)) failures += fail("every_size", "a way was never taken", "");
  return finish("every_size", rank, failures, compared);
}
