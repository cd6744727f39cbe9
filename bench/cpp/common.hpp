// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the C++ benchmark files share: the library (header form, so the suite builds with
// or without the module), the physical-floor baselines and a few fixtures.
#ifndef DLPM_BENCH_COMMON_HPP
#define DLPM_BENCH_COMMON_HPP

#include <mdspan>

#include <dlpack_mdspan/dlpack_mdspan.hpp>

#include "cccl.hpp"
#include "harness.hpp"

#include <sys/mman.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace dm = dlpack_mdspan;

namespace bench {

inline std::string label(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// ---- export floor: a DLTensor filled by hand, with its shape and strides beside it ------

template <std::size_t R>
struct raw_tensor {
  DLTensor t;
  std::int64_t shape[R == 0 ? 1 : R];
  std::int64_t strides[R == 0 ? 1 : R];
};

/// What a careful programmer writes by hand for a float mdspan on the CPU: no checks.
template <class M>
inline void hand_fill(const M& md, raw_tensor<M::rank()>& out) noexcept {
  constexpr std::size_t R = M::rank();
  out.t.data = const_cast<float*>(md.data_handle());
  out.t.device = DLDevice{kDLCPU, 0};
  out.t.ndim = static_cast<std::int32_t>(R);
  out.t.dtype = DLDataType{kDLFloat, 32, 1};
  for (std::size_t r = 0; r < R; ++r) {
    out.shape[r] = static_cast<std::int64_t>(md.extent(r));
    out.strides[r] = static_cast<std::int64_t>(md.stride(r));
  }
  out.t.shape = out.shape;
  out.t.strides = out.strides;
  out.t.byte_offset = 0;
}

// ---- import floor: a DLTensor read into an mdspan without a single check ----------------

template <class M, std::size_t... I>
inline M raw_read(const DLTensor& t, std::index_sequence<I...>) noexcept {
  using E = typename M::extents_type;
  using L = typename M::layout_type;
  using T = typename M::element_type;
  using index = typename M::index_type;
  const E e(static_cast<index>(t.shape[I])...);
  if constexpr (std::is_same_v<L, dm::layout_stride_relaxed>) {
    const std::array<index, sizeof...(I)> s{static_cast<index>(t.strides[I])...};
    return M(static_cast<T*>(t.data), typename M::mapping_type(e, s, static_cast<index>(t.byte_offset / sizeof(T))));
  } else if constexpr (std::is_same_v<L, std::layout_stride>) {
    const std::array<index, sizeof...(I)> s{static_cast<index>(t.strides[I])...};
    return M(reinterpret_cast<T*>(static_cast<char*>(t.data) + t.byte_offset), typename M::mapping_type(e, s));
  } else {
    return M(reinterpret_cast<T*>(static_cast<char*>(t.data) + t.byte_offset), e);
  }
}
template <class M>
inline M raw_read(const DLTensor& t) noexcept {
  return raw_read<M>(t, std::make_index_sequence<M::rank()>{});
}

// ---- import baseline: the checked import a careful programmer writes by hand -----------
//
// For a float target of static rank R on the CPU: dtype == float32, ndim == R, device ==
// CPU, the strides (layout_right / layout_left: equal to the compact ones, computed from
// the shape; layout_stride: positive; layout_stride_relaxed: any), data + byte_offset
// aligned to alignof(float) (relaxed: data and byte_offset each, since the view keeps the
// offset in its mapping), then the mdspan. Nothing else: no NULL checks (the strides must
// be explicit), no overflow, extent or address-space checks. Failures throw, as
// to_mdspan and CCCL's to_host_mdspan do, from a cold function.

[[noreturn, gnu::cold, gnu::noinline]] inline void hand_import_failed(const char* what) {
  throw std::invalid_argument(what);
}

template <class M, std::size_t... I>
inline M hand_import(const DLTensor& t, std::index_sequence<I...>) {
  using L = typename M::layout_type;
  using T = typename M::element_type;
  static_assert(std::is_same_v<std::remove_cv_t<T>, float>, "the hand-written import is written for float");
  constexpr std::size_t R = sizeof...(I);
  if (t.dtype.code != kDLFloat || t.dtype.bits != 32 || t.dtype.lanes != 1) hand_import_failed("dtype is not float32");
  if (t.ndim != static_cast<std::int32_t>(R)) hand_import_failed("wrong ndim");
  if (t.device.device_type != kDLCPU) hand_import_failed("not a CPU tensor");
  if constexpr (std::is_same_v<L, std::layout_right>) {
    std::int64_t expect = 1;
    for (std::size_t r = R; r-- > 0;) {
      if (t.strides[r] != expect) hand_import_failed("not row-major");
      expect *= t.shape[r];
    }
  } else if constexpr (std::is_same_v<L, std::layout_left>) {
    std::int64_t expect = 1;
    for (std::size_t r = 0; r < R; ++r) {
      if (t.strides[r] != expect) hand_import_failed("not column-major");
      expect *= t.shape[r];
    }
  } else if constexpr (std::is_same_v<L, std::layout_stride>) {
    for (std::size_t r = 0; r < R; ++r)
      if (t.strides[r] <= 0) hand_import_failed("non-positive stride");
  }
  if constexpr (std::is_same_v<L, dm::layout_stride_relaxed>) {
    if (((reinterpret_cast<std::uintptr_t>(t.data) | t.byte_offset) % alignof(T)) != 0) hand_import_failed("misaligned");
  } else {
    if ((reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset) % alignof(T) != 0) hand_import_failed("misaligned");
  }
  return raw_read<M>(t, std::index_sequence<I...>{});
}
template <class M>
inline M hand_import(const DLTensor& t) {
  return hand_import<M>(t, std::make_index_sequence<M::rank()>{});
}

/// What the import benchmarks compare between candidates (view_info, in cccl.hpp so that
/// the CCCL TU can fill it from its own mdspan type without our headers).
template <class M, std::size_t... I>
inline view_info describe(const M& m, std::index_sequence<I...>) {
  view_info v;
  v.data = m.data_handle();
  v.rank = M::rank();
  v.offset0 = static_cast<std::int64_t>(m.mapping()(((void)I, typename M::index_type{0})...));
  ((v.extents[I] = static_cast<std::int64_t>(m.extent(I)), v.strides[I] = static_cast<std::int64_t>(m.stride(I))), ...);
  return v;
}
template <class M>
inline view_info describe(const M& m) {
  static_assert(M::rank() <= 8);
  return describe(m, std::make_index_sequence<M::rank()>{});
}

// ---- fixtures ---------------------------------------------------------------------------

enum class order { row_major, column_major };

/// The strides of a compact array of `shape` in order `o`, in elements.
template <std::size_t R>
std::array<std::int64_t, R> compact_strides(const std::array<std::int64_t, R>& shape, order o = order::row_major) {
  std::array<std::int64_t, R> s{};
  std::int64_t stride = 1;
  for (std::size_t i = 0; i < R; ++i) {
    const std::size_t r = o == order::row_major ? R - 1 - i : i;
    s[r] = stride;
    stride *= shape[r];
  }
  return s;
}

/// A float32 CPU tensor over `data` with the given shape and strides (kept by the caller).
template <std::size_t R>
DLTensor float_cpu_tensor(void* data, std::array<std::int64_t, R>& shape, std::array<std::int64_t, R>& strides) {
  return DLTensor{data, DLDevice{kDLCPU, 0}, static_cast<std::int32_t>(R), DLDataType{kDLFloat, 32, 1},
                  shape.data(), strides.data(), 0};
}

/// A compact float DLTensor over caller-owned arrays, row-major (the default) or
/// column-major, with explicit strides.
template <std::size_t R>
struct tensor_fixture {
  std::array<std::int64_t, R> shape{};
  std::array<std::int64_t, R> strides{};
  DLTensor t{};
  tensor_fixture(void* data, const std::array<std::int64_t, R>& s, order o = order::row_major)
      : shape(s), strides(compact_strides(s, o)) {
    t = float_cpu_tensor(data, shape, strides);
  }
  tensor_fixture(const tensor_fixture&) = delete;
};

/// The strided views users have, of a row-major array (bench/cpp/import_bench.cpp's rows,
/// and the C facade's runtime-rank rows).
enum class view_kind { slice, transpose, permutation, broadcast, reversed, unit_axis };

constexpr const char* kind_name(view_kind k) {
  switch (k) {
    case view_kind::slice: return "slice";
    case view_kind::transpose: return "transpose";
    case view_kind::permutation: return "permutation";
    case view_kind::broadcast: return "broadcast (stride 0)";
    case view_kind::reversed: return "reversed axis (negative stride)";
    case view_kind::unit_axis: return "extent-1 axis, stride 7";
  }
  return "?";
}

/// A float CPU tensor viewing `data` (4096 floats at least) as `kind` of a row-major array
/// whose view has `shape`.
template <std::size_t R>
struct strided_fixture {
  std::array<std::int64_t, R> shape{};
  std::array<std::int64_t, R> strides{};
  DLTensor t{};
  strided_fixture(float* data, view_kind kind, std::array<std::int64_t, R> s) : shape(s) {
    std::size_t first = 0;  // elements from data to element (0, ..., 0)
    switch (kind) {
      case view_kind::slice: {
        if constexpr (R == 1) {
          strides[0] = 2;
        } else {
          std::array<std::int64_t, R> parent = shape;
          parent[R - 1] += 3;
          strides = compact_strides(parent);
        }
        break;
      }
      case view_kind::transpose:  // the parent is row-major with the reversed shape
        strides = compact_strides(shape, order::column_major);
        break;
      case view_kind::permutation: {  // view axis i is parent axis i ^ 1
        std::array<std::int64_t, R> parent{};
        for (std::size_t r = 0; r < R; ++r) parent[r ^ 1] = shape[r];
        const auto ps = compact_strides(parent);
        for (std::size_t r = 0; r < R; ++r) strides[r] = ps[r ^ 1];
        break;
      }
      case view_kind::broadcast:
        strides = compact_strides(shape);
        strides[0] = 0;
        break;
      case view_kind::reversed:
        strides = compact_strides(shape);
        first = static_cast<std::size_t>((shape[0] - 1) * strides[0]);
        strides[0] = -strides[0];
        break;
      case view_kind::unit_axis: {
        const std::size_t axis = R == 1 ? 0 : 1;
        shape[axis] = 1;
        strides = compact_strides(shape);
        strides[axis] = 7;
        break;
      }
    }
    t = float_cpu_tensor(data + first, shape, strides);
  }
  strided_fixture(const strided_fixture&) = delete;
};

/// Address space that nothing may touch: PROT_NONE, never committed. Any read or write of
/// an element segfaults, which proves that an operation's cost cannot depend on the size.
class untouchable {
 public:
  explicit untouchable(std::size_t bytes) : bytes_(bytes) {
    p_ = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p_ == MAP_FAILED) throw std::runtime_error("mmap of the untouchable region failed");
  }
  ~untouchable() { ::munmap(p_, bytes_); }
  untouchable(const untouchable&) = delete;
  untouchable& operator=(const untouchable&) = delete;
  float* data() const noexcept { return static_cast<float*>(p_); }

 private:
  void* p_;
  std::size_t bytes_;
};

/// An owner that keeps nothing alive and costs nothing to move: it isolates the library's
/// own cost in the managed-tensor benchmarks.
struct trivial_owner {
  void* keep = nullptr;
};

/// The hand-written floor of an owning export: one block with the struct, the shape, the
/// strides and the owner, and a deleter that frees it.
template <std::size_t R, class Owner>
struct raw_block {
  DLManagedTensorVersioned managed;
  std::int64_t shape[R];
  std::int64_t strides[R];
  Owner owner;
  static void destroy(DLManagedTensorVersioned* self) noexcept { delete static_cast<raw_block*>(self->manager_ctx); }
};

template <class M, class Owner>
inline DLManagedTensorVersioned* hand_managed(const M& md, Owner&& owner) {
  constexpr std::size_t R = M::rank();
  using block = raw_block<R, std::remove_cvref_t<Owner>>;
  auto* b = new block{DLManagedTensorVersioned{}, {}, {}, std::forward<Owner>(owner)};
  raw_tensor<R> view;
  hand_fill(md, view);
  for (std::size_t r = 0; r < R; ++r) {
    b->shape[r] = view.shape[r];
    b->strides[r] = view.strides[r];
  }
  b->managed.dl_tensor = view.t;
  b->managed.dl_tensor.shape = b->shape;
  b->managed.dl_tensor.strides = b->strides;
  b->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  b->managed.manager_ctx = b;
  b->managed.deleter = &block::destroy;
  b->managed.flags = 0;
  return &b->managed;
}

}  // namespace bench

#endif
