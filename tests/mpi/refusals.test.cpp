// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every refusal of dlpack_mdspan/mpi.hpp, with its errc and message, before MPI sees the
// tensor (one rank is enough: nothing is sent). Also what a buffer is for each layout class:
// a count of a predefined type when compact row-major, one committed derived datatype
// otherwise, whose extent is the bytes the elements reach.
#include "mpi_test.hpp"

#include <algorithm>
#include <climits>
#include <mdspan>
#include <string_view>
#include <utility>

namespace {

using namespace dlpm_mpi_test;
namespace mpi = dlpack_mdspan::mpi;
using dlpack_mdspan::errc;

int failures = 0;
int the_choice();

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
  // The library's own transfer reads a managed tensor's flags too (no overload once: callers
  // passed m.dl_tensor, which dropped READ_ONLY).
  refused(mpi::try_receive(read_only, 0, 3, MPI_COMM_SELF), errc::read_only, "READ_ONLY",
          "the library's transfer: receive into a READ_ONLY managed tensor");

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

  // 3e9 broadcast int8 elements asked packed: the packed message's int count is what refuses
  // it, with the true count (once the saturated 2147483648) and no word of MPI-4 (which would
  // not take it either); left to the choice, it is the derived datatype (MPI-3: refused for
  // its extent, MPI-4: built).
  const std::int64_t three_billion = 3'000'000'000;
  tensor bytes(data, DLDataType{kDLInt, 8, 1}, {three_billion}, {{0}, 0, 1});
  const auto packed = mpi::try_send_buffer(bytes.t, 0, mpi::transfer::packed);
  refused(packed, errc::extent_overflow, "the int count the library sends it with: send it as its derived datatype (3000000000)",
          "a packed count beyond INT_MAX");
  check(!packed && packed.error().message().view().find("MPI-4") == std::string_view::npos,
        "a packed count beyond INT_MAX: no word of MPI-4's constructors");
  if constexpr (!mpi::large_counts)
    refused(mpi::try_send_buffer(bytes.t, 0, mpi::transfer::chosen), errc::extent_overflow,
            "an extent is beyond INT_MAX, and MPI-3 counts are int (3000000000); MPI-4's large-count constructors would take it",
            "the choice, for a count beyond INT_MAX: derived (MPI-3)");
  else
    check(static_cast<bool>(mpi::try_send_buffer(bytes.t, 0, mpi::transfer::chosen)),
          "the choice, for a count beyond INT_MAX: derived (MPI-4)");
  // A compact row-major tensor past INT_MAX items: MPI-4 sends it as one derived item, which
  // MPI's reductions do not take; the refusal says so (it once said the layout was not
  // compact row-major).
  tensor compact_bytes(data, DLDataType{kDLInt, 8, 1}, {three_billion}, {{1}, 0, 1});
  if constexpr (mpi::large_counts) {
    const auto big = mpi::try_send_buffer(compact_bytes.t);
    check(big && big->derived(), "MPI-4: a compact tensor past INT_MAX items is one derived item");
    if (big)
      refused(big->reduction_datatype(), errc::non_compact_strides, "or a count beyond INT_MAX",
              "a reduction of a compact tensor past INT_MAX items (MPI-4)");
  } else {
    refused(mpi::try_send_buffer(compact_bytes.t), errc::extent_overflow, "a contiguous run of items is beyond INT_MAX",
            "a compact tensor past INT_MAX items (MPI-3)");
  }

  tensor on_gpu(data, f32, {4, 6}, row_major({4, 6}));
  on_gpu.t.device = DLDevice{kDLCUDA, 0};
  if (!mpi::cuda_aware())
    refused(mpi::try_send_buffer(on_gpu.t), errc::device_mismatch, "CUDA-aware", "CUDA memory, MPI not CUDA-aware");
  on_gpu.t.device = DLDevice{kDLROCM, 0};
  refused(mpi::try_send_buffer(on_gpu.t), errc::device_mismatch, "kDLROCM", "ROCm memory");

  tensor half(data, DLDataType{kDLFloat, 16, 1}, {4, 6}, {{12, 2}, 0, 48});
  auto h = mpi::try_send_buffer(half.t, 0, mpi::transfer::derived);
  check(h && h->derived() && !h->element().reducible, "float16 travels as bytes, in a derived datatype");
  auto hp = mpi::try_send_buffer(half.t, 0, mpi::transfer::chosen);
  check(hp && hp->packed() && hp->count() == 2 * 24 && hp->datatype() == MPI_BYTE, "float16 packed: its bytes, 2 a piece");
  if (h) refused(h->reduction_datatype(), errc::dtype_mismatch, "2 bytes each", "a reduction on float16");

  tensor strided(data, f32, {4, 3}, {{6, 2}, 0, 24});
  auto st = mpi::try_send_buffer(strided.t);
  if (st) refused(st->reduction_datatype(), errc::non_compact_strides, "reduce a compact row-major copy", "a reduction on a strided view");

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

  failures += the_choice();

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

namespace {

// The choice between MPI's derived datatype and the library's pack (dlpm_mpi_packs), and the
// pack and unpack themselves, on one rank (no transfer: the message is read and written here).
// The layouts whose runs are short are packed, in row-major index order; the others are
// derived datatypes; a receive is packed only when asked, and lands at unpack().
int the_choice() {
  int wrong = 0;
  auto expect = [&](bool ok, const char* what) {
    if (!ok) wrong += fail("the choice", what, "");
  };
  constexpr DLDataType f32{kDLFloat, 32, 1};
  // A 70 x 100 float32 matrix (not a multiple of the tiles), and views of it.
  std::vector<float> m(7000);
  for (std::size_t k = 0; k < m.size(); ++k) m[k] = static_cast<float>(k);
  // Every other column: runs of one element, one coalesced mode of step 2.
  tensor every_other(m.data(), f32, {70, 50}, {{100, 2}, 1, 7000});
  auto eo = mpi::try_send_buffer(every_other.t, 0, mpi::transfer::chosen);
  expect(eo && eo->packed() && !eo->derived() && eo->count() == 3500 && eo->datatype() == MPI_FLOAT && eo->address() != m.data(),
         "every other column is packed: 3500 MPI_FLOAT of the library's own");
  if (eo && eo->packed()) {
    const float* message = static_cast<const float*>(eo->address());
    bool in_order = true;
    for (int i = 0; i < 70; ++i)
      for (int j = 0; j < 50; ++j) in_order &= message[i * 50 + j] == m[static_cast<std::size_t>(1 + i * 100 + 2 * j)];
    expect(in_order, "every other column: the message holds the elements in row-major index order");
  }
  expect(eo && !eo->reduction_datatype(), "a packed buffer is refused for reductions, as a strided one");
  // A transpose (the tiled pack): 100 x 70, strides (1, 100).
  tensor transposed(m.data(), f32, {100, 70}, {{1, 100}, 0, 7000});
  auto tr = mpi::try_send_buffer(transposed.t, 0, mpi::transfer::chosen);
  expect(tr && tr->packed() && tr->count() == 7000, "a transpose is packed");
  if (tr && tr->packed()) {
    const float* message = static_cast<const float*>(tr->address());
    bool in_order = true;
    for (int i = 0; i < 100; ++i)
      for (int j = 0; j < 70; ++j) in_order &= message[i * 70 + j] == m[static_cast<std::size_t>(i + j * 100)];
    expect(in_order, "a transpose: the message holds the elements in row-major index order");
  }
  // Runs at the threshold: 63 floats (252 bytes) are packed, 64 (256 bytes) are not.
  tensor short_rows(m.data(), f32, {70, 63}, {{100, 1}, 0, 7000}), long_rows(m.data(), f32, {70, 64}, {{100, 1}, 0, 7000});
  auto sr = mpi::try_send_buffer(short_rows.t, 0, mpi::transfer::chosen);
  auto lr = mpi::try_send_buffer(long_rows.t, 0, mpi::transfer::chosen);
  expect(sr && sr->packed(), "runs of 252 bytes are packed");
  expect(lr && lr->derived() && !lr->packed(), "runs of 256 bytes are a derived datatype");
  expect(!mpi::send_buffer(long_rows.t, std::uint64_t{0}, mpi::transfer::derived).packed() &&
             mpi::send_buffer(long_rows.t, std::uint64_t{0}, mpi::transfer::packed).packed(),
         "transfer::derived and transfer::packed force the way");
  // A receive: derived unless asked; asked (chosen), it is packed and lands at unpack().
  std::vector<float> into(7000, -1.0f);
  tensor target(into.data(), f32, {100, 70}, {{1, 100}, 0, 7000});
  auto by_default = mpi::try_receive_buffer(target.t);
  expect(by_default && by_default->derived() && !by_default->packed(), "a receive is a derived datatype by default");
  // A send too: it reads the elements at each send (a kept buffer, a persistent request).
  auto send_by_default = mpi::try_send_buffer(every_other.t);
  expect(send_by_default && send_by_default->derived() && !send_by_default->packed(),
         "a send is a derived datatype by default");
  {
    auto r = mpi::try_receive_buffer(target.t, 0, mpi::transfer::chosen);
    expect(r && r->packed() && r->count() == 7000, "a receive asked for the choice is packed");
    if (r && r->packed()) {
      float* message = static_cast<float*>(r->address());
      for (int k = 0; k < 7000; ++k) message[k] = static_cast<float>(k) + 0.5f;  // what MPI would write
      expect(into[0] == -1.0f, "nothing lands before unpack()");
      auto moved = std::move(*r);  // the message is owned once, and moves with the buffer
      expect(moved.packed() && !r->packed(), "a moved buffer owns its message once");
      moved.unpack();
      bool landed = true;
      for (int i = 0; i < 100; ++i)
        for (int j = 0; j < 70; ++j) landed &= into[static_cast<std::size_t>(i + j * 100)] == static_cast<float>(i * 70 + j) + 0.5f;
      expect(landed, "unpack() puts each element at its strided place");
      into[0] = -2.0f;
      moved.unpack();  // once: a second call writes nothing
      expect(into[0] == -2.0f, "a second unpack() writes nothing");
    }
  }
  // Every other column received: the bytes between the elements are not written.
  std::vector<float> holes(7000, -1.0f);
  tensor every_other_into(holes.data(), f32, {70, 50}, {{100, 2}, 1, 7000});
  {
    auto r = mpi::receive_buffer(every_other_into.t, std::uint64_t{0}, mpi::transfer::chosen);
    float* message = static_cast<float*>(r.address());
    for (int k = 0; k < 3500; ++k) message[k] = static_cast<float>(k);
  }  // not unpacked: the buffer's end unpacks it
  bool placed = true;
  for (int k = 0; k < 7000; ++k) {
    const bool element = k % 100 % 2 == 1;
    placed &= element ? holes[static_cast<std::size_t>(k)] == static_cast<float>(k / 100 * 50 + k % 100 / 2) : holes[static_cast<std::size_t>(k)] == -1.0f;
  }
  expect(placed, "a packed receive not unpacked lands when the buffer goes, and only at the elements");

  // Device memory (CUDA through a CUDA-aware MPI; none is tested here, so the builder is asked
  // directly): never packed by the choice, and packing it refused.
  {
    const std::int64_t extents[1] = {3500}, steps[1] = {8};
    dlpm_mpi_datatype d{};
    const int chosen = dlpm_mpi_build(m.data(), 1, extents, steps, 1, 4, 0, 3500 * 8, dlpm_mpi_element_of(f32, 4), 0, DLPM_MPI_CHOSEN, 0, &d);
    expect(chosen == DLPM_MPI_BUILT && d.derived && d.packing == nullptr, "device memory: the choice is the derived datatype");
    dlpm_mpi_datatype_free(&d);
    const int packed = dlpm_mpi_build(m.data(), 1, extents, steps, 1, 4, 0, 3500 * 8, dlpm_mpi_element_of(f32, 4), 0, DLPM_MPI_PACKED, 0, &d);
    expect(packed == DLPM_MPI_HOST_ONLY && d.packing == nullptr && d.refusal != nullptr &&
               std::string_view(d.refusal).find("host addresses only") != std::string_view::npos,
           "device memory: packing it is refused");
    dlpm_mpi_datatype_free(&d);
    const int host = dlpm_mpi_build(m.data(), 1, extents, steps, 1, 4, 0, 3500 * 8, dlpm_mpi_element_of(f32, 4), 0, DLPM_MPI_CHOSEN, 1, &d);
    expect(host == DLPM_MPI_BUILT && d.packing != nullptr, "host memory: the same loops are packed");
    dlpm_mpi_datatype_free(&d);
  }

  // The tiles: transposes past several tiles and blocks (300 x 257, whole tiles and partial
  // ones; with its inner axis reversed, and its outer one; and a rank-3 permutation
  // 7 x 150 x 130 with strides (1, 7 * 130, 7)), for every element size (3 bytes: the
  // generic move; 1, 2, 4, 8 and 16 bytes: whole tiles in registers where AVX2 is,
  // dlpm_mpi_squares_, and 4 bytes where SSE2 is, dlpm_mpi_square4_),
  // packed and unpacked, each byte compared with index arithmetic.
  struct view {
    std::vector<std::int64_t> shape, strides;
    std::int64_t offset;
  };
  const view views[] = {{{300, 257}, {1, 300}, 0},
                        {{300, 257}, {1, -300}, 256 * 300},
                        {{300, 257}, {-1, 300}, 299},
                        {{7, 150, 130}, {1, 7 * 130, 7}, 0}};
  const DLDataType types[] = {{kDLInt, 8, 1}, {kDLInt, 16, 1}, {kDLFloat, 32, 1}, {kDLFloat, 64, 1}, {kDLComplex, 128, 1}, {kDLUInt, 8, 3}};
  for (const view& v : views)
    for (const DLDataType& type : types) {
      const std::int64_t item = static_cast<std::int64_t>(itemsize(type)), n = product(v.shape);
      std::vector<unsigned char> source(static_cast<std::size_t>(n * item)), back(source.size(), sentinel);
      for (std::size_t k = 0; k < source.size(); ++k) source[k] = static_cast<unsigned char>(k * 7 % 251);
      tensor from(source.data(), type, v.shape, {v.strides, v.offset, n}),
          into_view(back.data(), type, v.shape, {v.strides, v.offset, n});
      auto out = mpi::try_send_buffer(from.t, 0, mpi::transfer::chosen);
      auto in = mpi::try_receive_buffer(into_view.t, 0, mpi::transfer::chosen);
      if (!out || !in || !out->packed() || !in->packed()) {
        expect(false, "a transpose of any element size is packed");
        continue;
      }
      const auto* message = static_cast<const unsigned char*>(out->address());
      std::vector<std::int64_t> index(v.shape.size(), 0);
      bool in_order = true;
      for (std::int64_t e = 0; e < n; ++e) {
        std::int64_t at = v.offset;
        for (std::size_t r = 0; r < v.shape.size(); ++r) at += index[r] * v.strides[r];
        in_order &= std::memcmp(message + e * item, source.data() + at * item, static_cast<std::size_t>(item)) == 0;
        for (std::size_t r = v.shape.size(); r-- > 0;)
          if (++index[r] < v.shape[r]) break;
          else index[r] = 0;
      }
      expect(in_order, "a tiled pack: the message in row-major index order");
      std::memcpy(in->address(), out->address(), source.size());  // what MPI would move
      in->unpack();
      expect(back == source, "a tiled unpack: every element back at its place");
      // The library's transfer packs and unpacks the message a fragment at a time
      // (dlpm_mpi_copy_range): fragments of 1, 37 and 1000 elements (the last one partial)
      // and of 4099 bytes rounded down to whole elements cut the tiles and blocks anywhere;
      // each must give the same message, and land every element back at its place.
      const auto plan = mpi::admit(from.t, 0, false);
      if (!plan) {
        expect(false, "a transpose is admitted");
        continue;
      }
      dlpm_mpi_packing loops{};
      loops.modes = plan->loops, loops.extents = const_cast<std::int64_t*>(plan->extents);
      loops.steps = const_cast<std::int64_t*>(plan->byte_steps), loops.run_bytes = plan->block * item, loops.item = item;
      for (const std::int64_t asked : {item, 37 * item, 1000 * item, std::int64_t{4099}}) {
        const std::int64_t fragment = dlpm_mpi_fragment_bytes(asked, item, 1), total = n * item;
        std::vector<unsigned char> fragments(static_cast<std::size_t>(total), sentinel), landed(source.size(), sentinel);
        for (std::int64_t first = 0; first < total; first += fragment) {
          const std::int64_t bytes = std::min(fragment, total - first);
          std::vector<unsigned char> one(static_cast<std::size_t>(bytes));
          loops.tensor = reinterpret_cast<char*>(source.data()) + v.offset * item;  // element 0
          dlpm_mpi_copy_range(&loops, reinterpret_cast<char*>(one.data()), first, bytes, 1);
          std::memcpy(fragments.data() + first, one.data(), one.size());
          loops.tensor = reinterpret_cast<char*>(landed.data()) + v.offset * item;
          dlpm_mpi_copy_range(&loops, reinterpret_cast<char*>(one.data()), first, bytes, 0);
        }
        expect(fragment % item == 0 && fragment > 0, "a fragment is a whole number of elements");
        expect(std::memcmp(fragments.data(), message, fragments.size()) == 0, "a transpose packed by fragments: the same message");
        expect(landed == source, "a transpose unpacked by fragments: every element back at its place");
      }
    }

  // The library's transfer: strided device memory is refused (the pack is the host's), and a
  // received fragment shorter than its place is refused, the receives posted ahead cancelled.
  {
    const std::int64_t extents[1] = {3500}, steps[1] = {8};
    dlpm_mpi_datatype d{};
    const int moved = dlpm_mpi_move(m.data(), 1, extents, steps, 1, 4, dlpm_mpi_element_of(f32, 4), 0, 0, 0, 7, MPI_COMM_SELF,
                                    DLPM_MPI_FRAGMENT_BYTES, DLPM_MPI_FRAGMENT_DEPTH, &d);
    expect(moved == DLPM_MPI_HOST_ONLY && d.refusal != nullptr &&
               std::string_view(d.refusal).find("host addresses only") != std::string_view::npos,
           "the library's transfer: strided device memory is refused");
    std::vector<float> three(3, 1.0f), twenty(20, -1.0f);
    MPI_Request request;
    MPI_Isend(three.data(), 3, MPI_FLOAT, 0, 8, MPI_COMM_SELF, &request);
    tensor alternate(twenty.data(), f32, {10}, {{2}, 0, 20});
    const auto received = mpi::try_receive(alternate.t, 0, 8, MPI_COMM_SELF, mpi::fragments{16, 2});  // flags 0
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(!received && received.error().code() == errc::shape_mismatch &&
               std::string_view(received.error().message().c_str()).find("shorter than its place") != std::string_view::npos &&
               std::string_view(received.error().message().c_str()).find("(3 items arrived)") != std::string_view::npos,
           "the library's transfer: a short fragment is refused, shape_mismatch, saying what arrived");
    int pending = 0;
    MPI_Iprobe(0, 8, MPI_COMM_SELF, &pending, MPI_STATUS_IGNORE);
    expect(pending == 0, "the library's transfer: nothing is left behind by a refused receive");

    // The same for long runs (rows of 80 float32, 320 bytes: each fragment a derived
    // datatype where the elements lie): a short fragment refused, nothing left behind, and
    // the elements it brought are where they belong.
    std::vector<float> rows_memory(180, -1.0f);
    tensor runs_of_80(rows_memory.data(), f32, {2, 80}, {{100, 1}, 0, 180});
    MPI_Isend(three.data(), 3, MPI_FLOAT, 0, 10, MPI_COMM_SELF, &request);
    const auto cut_short = mpi::try_receive(runs_of_80.t, 0, 10, MPI_COMM_SELF, 0, mpi::fragments{256, 2});
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(!cut_short && cut_short.error().code() == errc::shape_mismatch &&
               std::string_view(cut_short.error().message().c_str()).find("shorter than its place") != std::string_view::npos,
           "the library's transfer, long runs: a short fragment is refused, shape_mismatch");
    pending = 0;
    MPI_Iprobe(0, 10, MPI_COMM_SELF, &pending, MPI_STATUS_IGNORE);
    expect(pending == 0, "the library's transfer, long runs: nothing is left behind by a refused receive");
    expect(rows_memory[0] == 1.0f && rows_memory[2] == 1.0f && rows_memory[3] == -1.0f && rows_memory[80] == -1.0f,
           "the library's transfer, long runs: a short fragment's elements land at their places, no others");
    // One element is short too: a derived fragment is whole at one item of its datatype, and
    // one basic element once passed for that one item (the receive said it had all 160).
    std::fill(rows_memory.begin(), rows_memory.end(), -1.0f);
    MPI_Isend(three.data(), 1, MPI_FLOAT, 0, 10, MPI_COMM_SELF, &request);
    const auto one_element = mpi::try_receive(runs_of_80.t, 0, 10, MPI_COMM_SELF, 0, mpi::fragments{1024, 2});
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(!one_element && one_element.error().code() == errc::shape_mismatch &&
               std::string_view(one_element.error().message().c_str()).find("(1 items arrived)") != std::string_view::npos,
           "the library's transfer, long runs: a fragment of one element is refused, shape_mismatch, saying so");
    pending = 0;
    MPI_Iprobe(0, 10, MPI_COMM_SELF, &pending, MPI_STATUS_IGNORE);
    expect(pending == 0, "the library's transfer, long runs: nothing is left behind by the refused receive of one element");

    // A fragment's transfer that fails where the communicator returns its errors (a fragment
    // longer than its place: MPI_ERR_TRUNCATE) is refused, and the receive posted ahead for
    // the next fragment is cancelled: it neither takes a later message on the tag nor writes
    // into the fragments' memory once that is given back.
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    std::vector<float> five(5, 2.0f), marker(4, 3.0f), landed(4, 0.0f);
    MPI_Isend(five.data(), 5, MPI_FLOAT, 0, 9, MPI_COMM_SELF, &request);
    const auto truncated = mpi::try_receive(alternate.t, 0, 9, MPI_COMM_SELF, 0, mpi::fragments{16, 2});
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(!truncated && std::string_view(truncated.error().message().c_str()).find("transfer failed") != std::string_view::npos,
           "the library's transfer: a fragment longer than its place is refused");
    MPI_Isend(marker.data(), 4, MPI_FLOAT, 0, 9, MPI_COMM_SELF, &request);
    int marker_pending = 0;
    for (int probe = 0; probe < 1000 && marker_pending == 0; ++probe)
      MPI_Iprobe(0, 9, MPI_COMM_SELF, &marker_pending, MPI_STATUS_IGNORE);
    if (marker_pending != 0) MPI_Recv(landed.data(), 4, MPI_FLOAT, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(marker_pending != 0 && landed == marker,
           "the library's transfer: a failed receive cancels the receive it posted ahead (a later message is the caller's)");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  }
  return wrong;
}

}  // namespace
