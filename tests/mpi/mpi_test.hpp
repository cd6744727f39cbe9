// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the MPI tests share: layouts described in elements, tensors over byte buffers, a
// byte pattern per message, and the element-by-element reference comparison, which uses
// index arithmetic only (no MPI, no datatype), so a wrong datatype cannot agree with it.
#pragma once

#include <dlpack_mdspan/mpi.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace dlpm_mpi_test {

// Strides and offset in elements, and the elements the buffer under them holds.
struct layout {
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  std::int64_t buffer_elements = 0;
};

inline std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

inline layout row_major(const std::vector<std::int64_t>& shape) {
  layout l{std::vector<std::int64_t>(shape.size()), 0, product(shape)};
  std::int64_t s = 1;
  for (std::size_t r = shape.size(); r-- > 0;) l.strides[r] = s, s *= shape[r] > 0 ? shape[r] : 1;
  return l;
}

inline layout column_major(const std::vector<std::int64_t>& shape) {
  layout l{std::vector<std::int64_t>(shape.size()), 0, product(shape)};
  std::int64_t s = 1;
  for (std::size_t r = 0; r < shape.size(); ++r) l.strides[r] = s, s *= shape[r] > 0 ? shape[r] : 1;
  return l;
}

inline std::uint64_t itemsize(const DLDataType& d) { return std::uint64_t{d.bits} * d.lanes / 8; }

// Never the sentinel; bools stay 0 or 1, the values C's _Bool may hold.
constexpr unsigned char sentinel = 0xEE;
inline std::vector<unsigned char> pattern(std::size_t bytes, int tag, bool boolean = false) {
  std::vector<unsigned char> v(bytes);
  for (std::size_t k = 0; k < bytes; ++k)
    v[k] = boolean ? static_cast<unsigned char>((k + static_cast<std::size_t>(tag)) & 1u)
                   : static_cast<unsigned char>((k * 37 + static_cast<std::size_t>(tag) * 11) % 200);
  return v;
}

// A DLTensor over `data` with its own shape and strides.
struct tensor {
  std::vector<std::int64_t> shape, strides;
  DLTensor t{};
  tensor(void* data, DLDataType dtype, std::vector<std::int64_t> s, const layout& l) : shape(std::move(s)), strides(l.strides) {
    t.data = data;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<std::int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.data();
    t.byte_offset = static_cast<std::uint64_t>(l.offset) * itemsize(dtype);
  }
};

// Counts one failure; says it unless `test` is null (a test past the failures it prints).
inline int fail(const char* test, const char* what, const char* detail) {
  if (test != nullptr) std::fprintf(stderr, "FAIL %s: %s %s\n", test, what, detail);
  return 1;
}

// Every element of the received buffer `got` (layout `recv`) equals the element of the same
// index in `sent` (layout `send`), and every byte no element covers still holds the sentinel.
inline int compare(const char* name, const DLDataType& dtype, const std::vector<std::int64_t>& shape, const layout& send,
                   const unsigned char* sent, const layout& recv, const std::vector<unsigned char>& got) {
  const auto item = static_cast<std::int64_t>(itemsize(dtype));
  const std::int64_t n = product(shape);
  std::vector<bool> covered(got.size(), false);
  std::vector<std::int64_t> index(shape.size(), 0);
  int failures = 0;
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t from = send.offset, to = recv.offset;
    for (std::size_t r = 0; r < shape.size(); ++r) from += index[r] * send.strides[r], to += index[r] * recv.strides[r];
    if (std::memcmp(sent + from * item, got.data() + to * item, static_cast<std::size_t>(item)) != 0 && failures++ < 3) {
      char where[64];
      std::snprintf(where, sizeof where, "(element %lld of %lld)", static_cast<long long>(e), static_cast<long long>(n));
      fail(name, "received element differs from the one sent", where);
    }
    for (std::int64_t b = 0; b < item; ++b) covered[static_cast<std::size_t>(to * item + b)] = true;
    for (std::size_t r = shape.size(); r-- > 0;) {  // the next row-major index
      if (++index[r] < shape[r]) break;
      index[r] = 0;
    }
  }
  for (std::size_t b = 0; b < got.size(); ++b)
    if (!covered[b] && got[b] != sentinel) {
      failures += fail(name, "a byte outside the received elements was written", "");
      break;
    }
  return failures;
}

// Every rank's failures summed; rank 0 reports; MPI finalized. The process's exit status.
inline int finish(const char* test, int rank, int failures, int compared) {
  int total = 0, checked = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&compared, &checked, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d comparisons, %d failures\n", test, checked, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

}  // namespace dlpm_mpi_test
