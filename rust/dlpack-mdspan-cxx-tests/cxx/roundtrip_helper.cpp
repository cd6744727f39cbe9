// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// C++ side of the Rust <-> C++ round-trip tests: real C++ consumers and producers written
// with the library's own API (managed_tensor::adopt, view<M>(), to_mdspan,
// to_managed_tensor), exposed to Rust through extern "C". Test code only: compiled by the
// unpublished dlpack-mdspan-cxx-tests crate, never by the published crates.
#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <mdspan>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

namespace dm = dlpack_mdspan;

namespace {

using matrix = std::mdspan<double, std::dextents<std::int64_t, 2>>;
using const_matrix = std::mdspan<const double, std::dextents<std::int64_t, 2>>;
using strided_matrix = std::mdspan<const double, std::dextents<std::int64_t, 2>, dm::layout_stride_relaxed>;

void write_message(char* msg, std::size_t len, const char* text) {
  if (msg != nullptr && len > 0) std::snprintf(msg, len, "%s", text);
}

// Owners made on the C++ side that are still alive (destroyed by the tensor's deleter).
std::atomic<std::int64_t> live_owners{0};

struct counted_owner {
  std::vector<float> values;
  bool live = true;
  explicit counted_owner(std::vector<float> v) : values(std::move(v)) { ++live_owners; }
  counted_owner(counted_owner&& o) noexcept : values(std::move(o.values)) { o.live = false; }
  counted_owner(const counted_owner&) = delete;
  counted_owner& operator=(const counted_owner&) = delete;
  counted_owner& operator=(counted_owner&&) = delete;
  ~counted_owner() {
    if (live) --live_owners;
  }
};

// A producer that breaks the DLPack contract: its deleter frees the tensor and then
// throws. The library must end the process with a message, never let the exception unwind
// into its caller (Rust frames, C frames).
struct throwing_block {
  DLManagedTensorVersioned managed{};
  std::int64_t shape[1] = {4};
  float data[4] = {1, 2, 3, 4};
};

void throwing_deleter(DLManagedTensorVersioned* self) {
  delete static_cast<throwing_block*>(self->manager_ctx);
  throw std::runtime_error("boom from a C++ deleter");
}

}  // namespace

extern "C" {

// Takes ownership of `in` (managed_tensor::adopt), views it as a row-major
// mdspan<double, dextents<int64_t, 2>> through view<M>(), doubles every element, and hands
// the same tensor back in *out (release). Returns 0, or the errc of the failure with its
// message in `msg`; then *out is NULL and the tensor has been released (by adopt on a
// version mismatch, or by the managed_tensor's destructor after a failed view).
int dlpm_cxx_double_matrix(DLManagedTensorVersioned* in, DLManagedTensorVersioned** out, char* msg,
                           std::size_t msg_len) noexcept {
  *out = nullptr;
  try {
    auto tensor = dm::managed_tensor::adopt(in);
    auto m = tensor.view<matrix>();
    for (std::int64_t i = 0; i < m.extent(0); ++i)
      for (std::int64_t j = 0; j < m.extent(1); ++j) m[i, j] *= 2;
    *out = tensor.release();
    return 0;
  } catch (const dm::dlpack_error& e) {
    write_message(msg, msg_len, e.what());
    return static_cast<int>(e.code());
  } catch (...) {
    write_message(msg, msg_len, "unexpected C++ exception");
    return -1;
  }
}

// Borrows `t` (no ownership change): checks that a const view works and a mutable one is
// refused when the tensor is READ_ONLY (view<M>() with const / non-const element types).
// Returns 1 if the mutable view was refused with errc::read_only, 0 if it was allowed, or
// -(errc) if even the const view failed. *first receives element [0, 0].
int dlpm_cxx_mutable_view_refused(DLManagedTensorVersioned* t, double* first, char* msg, std::size_t msg_len) noexcept {
  auto adopted = dm::managed_tensor::try_adopt(t);  // borrowed: released below without deleting
  if (!adopted) {
    write_message(msg, msg_len, adopted.error().what().c_str());
    return -static_cast<int>(adopted.error().code());
  }
  dm::managed_tensor tensor = std::move(*adopted);
  int result = 0;
  auto c = tensor.try_view<const_matrix>();
  if (!c) {
    write_message(msg, msg_len, c.error().what().c_str());
    result = -static_cast<int>(c.error().code());
  } else {
    *first = (*c)[0, 0];
    auto m = tensor.try_view<matrix>();
    if (!m) write_message(msg, msg_len, m.error().what().c_str());
    result = (!m && m.error().code() == dm::errc::read_only) ? 1 : 0;
  }
  (void)tensor.release();  // ownership stays with the caller
  return result;
}

// Borrows a bare DLTensor and sums it through to_mdspan with layout_stride_relaxed
// (any strides: transposed, reversed, broadcast). Returns 0 or the errc.
int dlpm_cxx_sum_strided(const DLTensor* t, double* sum, char* msg, std::size_t msg_len) noexcept {
  auto m = dm::try_to_mdspan<strided_matrix>(*t);
  if (!m) {
    write_message(msg, msg_len, m.error().what().c_str());
    return static_cast<int>(m.error().code());
  }
  double s = 0;
  for (std::int64_t i = 0; i < m->extent(0); ++i)
    for (std::int64_t j = 0; j < m->extent(1); ++j) s += (*m)[i, j];
  *sum = s;
  return 0;
}

// A tensor produced in C++ (to_managed_tensor with a std::vector owner): rows x cols floats
// with value 100*i + j, READ_ONLY if `read_only`. The caller owns the result.
DLManagedTensorVersioned* dlpm_cxx_make_matrix(std::int64_t rows, std::int64_t cols, int read_only) noexcept {
  try {
    std::vector<float> values(static_cast<std::size_t>(rows * cols));
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) values[static_cast<std::size_t>(i * cols + j)] = static_cast<float>(100 * i + j);
    std::mdspan<float, std::dextents<std::int64_t, 2>> md(values.data(), rows, cols);
    auto tensor = dm::to_managed_tensor(md, counted_owner(std::move(values)), read_only ? dm::flag_read_only : 0);
    return tensor.release();
  } catch (...) {
    return nullptr;
  }
}

// A valid 4-float DLPack 1.x tensor whose deleter throws std::runtime_error("boom from a
// C++ deleter") after freeing it. The caller owns the result (NULL if out of memory).
DLManagedTensorVersioned* dlpm_cxx_make_throwing_tensor(void) noexcept {
  auto* block = new (std::nothrow) throwing_block{};
  if (block == nullptr) return nullptr;
  DLManagedTensorVersioned& m = block->managed;
  m.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m.manager_ctx = block;
  m.deleter = &throwing_deleter;
  m.flags = 0;
  m.dl_tensor.data = block->data;
  m.dl_tensor.device = DLDevice{kDLCPU, 0};
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  m.dl_tensor.shape = block->shape;
  m.dl_tensor.strides = nullptr;
  m.dl_tensor.byte_offset = 0;
  return &m;
}

// How many C++ owners made by dlpm_cxx_make_matrix are still alive.
std::int64_t dlpm_cxx_live_owners(void) noexcept { return live_owners.load(); }

}  // extern "C"
