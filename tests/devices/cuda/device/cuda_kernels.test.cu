// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/cuda.hpp compiled by nvcc, on a real GPU: cuda_device_of on every kind of CUDA
// allocation (DLPack's ids: the ordinal for device memory, 0 for managed and pinned),
// kernels writing through views imported from DLPack, managed tensors whose owners free
// CUDA memory in the deleter, and stream-ordered exchange (make_stream_wait,
// stream_from_array_api) between a slow producer kernel and a consumer on another stream.
//
// Without a usable GPU the program prints "SKIPPED: no CUDA device" and exits with 77,
// which CTest reports as skipped (SKIP_RETURN_CODE), never as passed. The static_asserts
// below are checked at build time either way.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <dlpack_mdspan/cuda.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

namespace dm = dlpack_mdspan;

// nvcc's front end sees the same registrations as host compilers (the CCCL complex<__half>
// specialization only exists under a CUDA compiler).
static_assert(dm::same_dtype(dm::dtype_v<__half>, DLDataType{kDLFloat, 16, 1}));
static_assert(dm::same_dtype(dm::dtype_v<__nv_bfloat162>, DLDataType{kDLBfloat, 16, 2}));
static_assert(dm::same_dtype(dm::dtype_v<__nv_fp8x4_e4m3>, DLDataType{kDLFloat8_e4m3fn, 8, 4}));
static_assert(dm::same_dtype(dm::dtype_v<__nv_fp4x2_e2m1>, DLDataType{kDLFloat4_e2m1fn, 4, 2}));
static_assert(dm::same_dtype(dm::dtype_v<__nv_fp6x2_e3m2>, DLDataType{kDLFloat6_e3m2fn, 6, 2}));
static_assert(dm::same_dtype(dm::dtype_v<cuda::std::complex<__half>>, DLDataType{kDLComplex, 32, 1}));
static_assert(dm::same_dtype(dm::dtype_v<float4>, DLDataType{kDLFloat, 32, 4}));
static_assert(sizeof(cuda::std::complex<__half>) == 4);

namespace {

using E2 = cuda::std::dextents<int, 2>;
using E1 = cuda::std::dextents<int, 1>;

#define REQUIRE_CUDA(call)                                                  \
  do {                                                                      \
    const cudaError_t status_ = (call);                                     \
    INFO(#call << " returned " << cudaGetErrorName(status_) << ": "         \
               << cudaGetErrorString(status_));                             \
    REQUIRE(status_ == cudaSuccess);                                        \
  } while (0)

// Frees made by owners: proves the deleter of a managed tensor released the memory.
int owner_frees = 0;

// Owns one CUDA allocation and frees it with the matching call when destroyed: what a
// producer moves into to_managed_tensor so that the consumer's deleter call frees it.
struct cuda_allocation {
  void* pointer = nullptr;
  cudaError_t (*release)(void*) = nullptr;

  cuda_allocation(void* p, cudaError_t (*free_fn)(void*)) noexcept : pointer(p), release(free_fn) {}
  cuda_allocation(cuda_allocation&& other) noexcept
      : pointer(std::exchange(other.pointer, nullptr)), release(other.release) {}
  cuda_allocation& operator=(cuda_allocation&&) = delete;
  ~cuda_allocation() {
    if (pointer != nullptr && release(pointer) == cudaSuccess) ++owner_frees;
  }
};

int current_device() {
  int device = -1;
  REQUIRE_CUDA(cudaGetDevice(&device));
  return device;
}

template <class View>
__global__ void write_indices(View m) {
  const int i = static_cast<int>(blockIdx.x);
  const int j = static_cast<int>(threadIdx.x);
  if (i < m.extent(0) && j < m.extent(1)) m(i, j) = static_cast<float>(i * 100 + j);
}

__global__ void write_halves(dm::device_mdspan<__half, E1> v) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < v.extent(0)) v(i) = __float2half(static_cast<float>(i) * 0.5f);
}

// Spins for `cycles` clock64 ticks, then writes base + i: a consumer that is not ordered
// after this kernel reads the old contents (the race the stream test must not show).
__global__ void delayed_fill(dm::device_mdspan<int, E1> out, long long cycles, int base) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < out.extent(0)) out(i) = base + i;
}

// The consumer's side: copies what it sees through an imported read-only view.
__global__ void copy_seen(dm::device_mdspan<const int, E1> in, dm::device_mdspan<int, E1> seen) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < in.extent(0)) seen(i) = in(i);
}

template <class View>
void launch_write_indices(View m) {
  write_indices<<<m.extent(0), m.extent(1)>>>(m);
  REQUIRE_CUDA(cudaGetLastError());
  REQUIRE_CUDA(cudaDeviceSynchronize());
}

}  // namespace

TEST_CASE("cuda_device_of reports cudaMalloc memory as kDLCUDA with its device's ordinal") {
  int count = 0;
  REQUIRE_CUDA(cudaGetDeviceCount(&count));
  for (int device = 0; device < count; ++device) {
    INFO("device " << device);
    REQUIRE_CUDA(cudaSetDevice(device));
    void* p = nullptr;
    REQUIRE_CUDA(cudaMalloc(&p, 256));
    const auto d = dm::cuda_device_of(p);
    REQUIRE_CUDA(cudaFree(p));
    REQUIRE(d.has_value());
    CHECK(d->device_type == kDLCUDA);
    CHECK(d->device_id == device);
  }
  REQUIRE_CUDA(cudaSetDevice(0));
}

TEST_CASE("cuda_device_of reports managed and pinned memory with device_id 0 from every device, and pageable memory") {
  // DLPack fixes the id of managed and pinned memory at 0, whichever device was current
  // when it was allocated (the runtime itself says that device).
  int count = 0;
  REQUIRE_CUDA(cudaGetDeviceCount(&count));
  for (int device = 0; device < count; ++device) {
    INFO("current device " << device);
    REQUIRE_CUDA(cudaSetDevice(device));
    float* managed = nullptr;
    REQUIRE_CUDA(cudaMallocManaged(&managed, 4 * sizeof(float)));
    cuda_allocation managed_guard(managed, cudaFree);
    const auto m = dm::cuda_device_of(managed);
    REQUIRE(m.has_value());
    CHECK(m->device_type == kDLCUDAManaged);
    CHECK(m->device_id == 0);

    float* pinned = nullptr;
    REQUIRE_CUDA(cudaMallocHost(&pinned, 4 * sizeof(float)));
    cuda_allocation pinned_guard(pinned, cudaFreeHost);
    const auto p = dm::cuda_device_of(pinned);
    REQUIRE(p.has_value());
    CHECK(p->device_type == kDLCUDAHost);
    CHECK(p->device_id == 0);

    // Both exports say 0: the queried one, and the accessor's, built with the ordinal.
    const dm::managed_mdspan<float, E1> managed_view(managed, cuda::std::layout_right::mapping<E1>(E1(4)),
                                                     dm::cuda_managed_accessor<float>(device));
    CHECK(dm::to_dlpack_tensor_on_cuda_device(managed_view).device().device_id == 0);
    CHECK(dm::to_dlpack_tensor(managed_view).device().device_id == 0);
    const dm::pinned_mdspan<float, E1> pinned_view(pinned, cuda::std::layout_right::mapping<E1>(E1(4)),
                                                   dm::cuda_pinned_accessor<float>(device));
    CHECK(dm::to_dlpack_tensor_on_cuda_device(pinned_view).device().device_type == kDLCUDAHost);
    CHECK(dm::to_dlpack_tensor_on_cuda_device(pinned_view).device().device_id == 0);
    CHECK(dm::to_dlpack_tensor(pinned_view).device().device_id == 0);
    // A host mdspan over pinned memory learns the kind, and DLPack's id, from the query.
    const auto queried = dm::to_dlpack_tensor_on_cuda_device(cuda::std::mdspan<float, E1>(pinned, 4));
    CHECK(queried.device().device_type == kDLCUDAHost);
    CHECK(queried.device().device_id == 0);
  }
  REQUIRE_CUDA(cudaSetDevice(0));

  std::vector<float> pageable(16);
  const auto h = dm::cuda_device_of(pageable.data());
  REQUIRE(h.has_value());
  CHECK(h->device_type == kDLCPU);
  CHECK(h->device_id == 0);
}

TEST_CASE("a kernel writes through a view imported from an exported device tensor") {
  const int device = current_device();
  constexpr int rows = 3, cols = 5;
  float* p = nullptr;
  REQUIRE_CUDA(cudaMalloc(&p, rows * cols * sizeof(float)));
  cuda_allocation guard(p, cudaFree);

  SUBCASE("row-major") {
    const dm::device_mdspan<float, E2> md(p, rows, cols);
    const auto exported = dm::to_dlpack_tensor_on_cuda_device(md);
    CHECK(exported.device().device_type == kDLCUDA);
    CHECK(exported.device().device_id == device);
    const DLTensor t = exported.get();

    dm::tensor_requirements here;
    here.device_id = device;
    const auto view = dm::to_mdspan_on_device<dm::device_mdspan<float, E2>>(t, here);
    CHECK(view.accessor().device_id == device);
    launch_write_indices(view);

    std::vector<float> host(rows * cols);
    REQUIRE_CUDA(cudaMemcpy(host.data(), p, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) CHECK(host[i * cols + j] == static_cast<float>(i * 100 + j));
  }
  SUBCASE("column-major, imported through layout_stride") {
    const dm::device_mdspan<float, E2, cuda::std::layout_left> md(p, rows, cols);
    const auto exported = dm::to_dlpack_tensor(md, DLDevice{kDLCUDA, device});  // the hot path: no query
    const auto view = dm::to_mdspan<dm::device_mdspan<float, E2, cuda::std::layout_stride>>(exported.get());
    CHECK(view.stride(0) == 1);
    CHECK(view.stride(1) == rows);
    launch_write_indices(view);

    std::vector<float> host(rows * cols);
    REQUIRE_CUDA(cudaMemcpy(host.data(), p, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) CHECK(host[i + j * rows] == static_cast<float>(i * 100 + j));
  }
}

TEST_CASE("__half elements are written on the device through an imported view") {
  constexpr int n = 8;
  __half* p = nullptr;
  REQUIRE_CUDA(cudaMalloc(&p, n * sizeof(__half)));
  cuda_allocation guard(p, cudaFree);
  const auto exported = dm::to_dlpack_tensor_on_cuda_device(dm::device_mdspan<__half, E1>(p, n));
  CHECK(exported.dtype().code == kDLFloat);
  CHECK(exported.dtype().bits == 16);
  const auto view = dm::to_mdspan<dm::device_mdspan<__half, E1>>(exported.get());
  write_halves<<<1, n>>>(view);
  REQUIRE_CUDA(cudaGetLastError());
  REQUIRE_CUDA(cudaDeviceSynchronize());
  std::vector<__half> host(n);
  REQUIRE_CUDA(cudaMemcpy(host.data(), p, n * sizeof(__half), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) CHECK(__half2float(host[i]) == static_cast<float>(i) * 0.5f);
}

TEST_CASE("a managed tensor owns device memory and its deleter cudaFrees it") {
  const int device = current_device();
  constexpr int rows = 4, cols = 8;
  float* p = nullptr;
  REQUIRE_CUDA(cudaMalloc(&p, rows * cols * sizeof(float)));
  const int frees_before = owner_frees;

  const dm::device_mdspan<float, E2> md(p, rows, cols);
  const auto where = dm::cuda_device_of(p);
  REQUIRE(where.has_value());
  dm::managed_tensor produced = dm::to_managed_tensor(md, cuda_allocation(p, cudaFree), *where);
  CHECK(produced.tensor().device.device_type == kDLCUDA);
  CHECK(produced.tensor().device.device_id == device);

  // Hand it over as a consumer would receive it, and take it back.
  DLManagedTensorVersioned* raw = produced.release();
  {
    const dm::managed_tensor consumed = dm::managed_tensor::adopt(raw);
    const auto view = consumed.view<dm::device_mdspan<float, E2>>();
    CHECK(view.data_handle() == p);
    launch_write_indices(view);
    std::vector<float> host(rows * cols);
    REQUIRE_CUDA(cudaMemcpy(host.data(), p, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(host[2 * cols + 7] == 207.0f);
    CHECK(owner_frees == frees_before);  // still alive while the consumer holds it
  }
  CHECK(owner_frees == frees_before + 1);  // the deleter ran, and cudaFree succeeded
}

TEST_CASE("managed memory is written on the device and read on the host") {
  constexpr int rows = 2, cols = 6;
  float* p = nullptr;
  REQUIRE_CUDA(cudaMallocManaged(&p, rows * cols * sizeof(float)));
  const int frees_before = owner_frees;
  {
    const dm::managed_mdspan<float, E2> md(p, rows, cols);
    const dm::managed_tensor t = dm::to_managed_tensor(md, cuda_allocation(p, cudaFree), dm::cuda_device_of(p).value());
    CHECK(t.tensor().device.device_type == kDLCUDAManaged);
    CHECK(t.tensor().device.device_id == 0);

    // A device view accepts managed memory, and so does the host's default accessor.
    launch_write_indices(t.view<dm::device_mdspan<float, E2>>());
    const auto on_host = t.view<cuda::std::mdspan<float, E2>>();
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) CHECK(on_host(i, j) == static_cast<float>(i * 100 + j));
  }
  CHECK(owner_frees == frees_before + 1);
}

TEST_CASE("pinned memory is kDLCUDAHost and the host reads what the device wrote") {
  constexpr int rows = 2, cols = 4;
  float* p = nullptr;
  REQUIRE_CUDA(cudaMallocHost(&p, rows * cols * sizeof(float)));
  const int frees_before = owner_frees;
  {
    // A plain host mdspan over pinned memory: cuda_device_of tells what the accessor cannot.
    const cuda::std::mdspan<float, E2> md(p, rows, cols);
    const auto where = dm::cuda_device_of(p);
    REQUIRE(where.has_value());
    CHECK(where->device_type == kDLCUDAHost);
    CHECK(where->device_id == 0);
    const dm::managed_tensor t = dm::to_managed_tensor(md, cuda_allocation(p, cudaFreeHost), *where);
    CHECK(t.tensor().device.device_type == kDLCUDAHost);
    CHECK(t.tensor().device.device_id == 0);

    const auto pinned = t.view<dm::pinned_mdspan<float, E2>>();
    CHECK(pinned.data_handle() == p);
    // The device cannot import it as device memory...
    const auto refused = t.try_view<dm::device_mdspan<float, E2>>();
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code() == dm::errc::device_mismatch);
    // ...but pinned memory is mapped for the device, so a kernel may still write it.
    launch_write_indices(dm::device_mdspan<float, E2>(p, rows, cols));
    const auto on_host = t.view<cuda::std::mdspan<float, E2>>();
    CHECK(on_host(1, 3) == 103.0f);
  }
  CHECK(owner_frees == frees_before + 1);
}

namespace {

constexpr int stream_n = 1024;
constexpr int stream_sentinel = -7;

// About 50 ms of clock64 ticks at the device's peak clock (longer if it runs slower):
// long enough that an unordered consumer would read the sentinel, not a value.
long long spin_cycles() {
  int device = 0, khz = 0;
  REQUIRE_CUDA(cudaGetDevice(&device));
  REQUIRE_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return static_cast<long long>(khz) * 50;
}

// One exchange: the producer fills `data` on `producer` after the delay and exports it;
// the consumer imports it and copies what it sees on `consumer`, once `consumer` has been
// made to wait by make_stream_wait (or, with wait == false, by synchronising the producer
// from the host, which is what -1 leaves to the consumer). Returns what the consumer saw.
std::vector<int> exchange(cudaStream_t producer, cudaStream_t consumer, bool wait, int base) {
  int* data = nullptr;
  int* seen = nullptr;
  REQUIRE_CUDA(cudaMalloc(&data, stream_n * sizeof(int)));
  cuda_allocation data_guard(data, cudaFree);
  REQUIRE_CUDA(cudaMalloc(&seen, stream_n * sizeof(int)));
  cuda_allocation seen_guard(seen, cudaFree);
  // The sentinel everywhere, finished before either stream starts.
  std::vector<int> host(stream_n, stream_sentinel);
  REQUIRE_CUDA(cudaMemcpy(data, host.data(), stream_n * sizeof(int), cudaMemcpyHostToDevice));
  REQUIRE_CUDA(cudaMemcpy(seen, host.data(), stream_n * sizeof(int), cudaMemcpyHostToDevice));
  REQUIRE_CUDA(cudaDeviceSynchronize());

  // Producer: the slow kernel, then the export a __dlpack__ call would hand over.
  const dm::device_mdspan<int, E1> produced(data, stream_n);
  delayed_fill<<<stream_n / 256, 256, 0, producer>>>(produced, spin_cycles(), base);
  REQUIRE_CUDA(cudaGetLastError());
  const auto exported = dm::to_dlpack_tensor_on_cuda_device(produced);

  if (wait) {
    const dm::error e = dm::make_stream_wait(producer, consumer);
    INFO(e.message());
    REQUIRE(e.code() == dm::errc::ok);
    // The wait is queued on the GPU, not done by the host: the producer is (almost always)
    // still spinning here. Reported, not checked: the host could be descheduled 50 ms.
    if (cudaStreamQuery(producer) == cudaErrorNotReady)
      MESSAGE("the producer was still running when the consumer's work was queued");
    (void)cudaGetLastError();
  } else {
    REQUIRE_CUDA(cudaStreamSynchronize(producer));
  }

  // Consumer: imports the tensor and reads it on its own stream, then copies the result
  // back on the same stream, so that the host sees exactly what the consumer saw.
  const auto in = dm::to_mdspan_on_device<dm::device_mdspan<const int, E1>>(exported.get());
  copy_seen<<<stream_n / 256, 256, 0, consumer>>>(in, dm::device_mdspan<int, E1>(seen, stream_n));
  REQUIRE_CUDA(cudaGetLastError());
  REQUIRE_CUDA(cudaMemcpyAsync(host.data(), seen, stream_n * sizeof(int), cudaMemcpyDeviceToHost, consumer));
  REQUIRE_CUDA(cudaStreamSynchronize(consumer));
  REQUIRE_CUDA(cudaDeviceSynchronize());  // the producer too, before the buffers are freed
  return host;
}

void check_all_written(const std::vector<int>& seen, int base) {
  int wrong = 0, first_wrong = -1;
  for (int i = 0; i < stream_n; ++i) {
    if (seen[static_cast<std::size_t>(i)] != base + i) {
      if (first_wrong < 0) first_wrong = i;
      ++wrong;
    }
  }
  INFO("first wrong element " << first_wrong << " of " << stream_n);
  CHECK(wrong == 0);
}

// A non-blocking stream: it does not synchronise implicitly with the legacy default
// stream, so only the event wait can order it.
struct owned_stream {
  cudaStream_t stream = nullptr;
  owned_stream() { REQUIRE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;
  ~owned_stream() { (void)cudaStreamDestroy(stream); }
};

}  // namespace

TEST_CASE("make_stream_wait orders a consumer stream after a slow producer kernel") {
  owned_stream producer, consumer;
  check_all_written(exchange(producer.stream, consumer.stream, true, 1000), 1000);
  // The same stream is already ordered: no event, nothing to fail.
  CHECK(dm::make_stream_wait(producer.stream, producer.stream).code() == dm::errc::ok);
  check_all_written(exchange(producer.stream, producer.stream, true, 2000), 2000);
}

TEST_CASE("stream_from_array_api values 1, 2 and a stream pointer are waited on, and -1 leaves it to the consumer") {
  owned_stream producer, consumer;
  SUBCASE("1: the legacy default stream") {
    const auto s = dm::stream_from_array_api(1);
    REQUIRE(s.has_value());
    REQUIRE(s->synchronise);
    check_all_written(exchange(producer.stream, s->stream, true, 3000), 3000);
  }
  SUBCASE("2: the per-thread default stream") {
    const auto s = dm::stream_from_array_api(2);
    REQUIRE(s.has_value());
    REQUIRE(s->synchronise);
    check_all_written(exchange(producer.stream, s->stream, true, 4000), 4000);
  }
  SUBCASE("a cudaStream_t passed as an integer") {
    const auto value = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(consumer.stream));
    const auto s = dm::stream_from_array_api(value);
    REQUIRE(s.has_value());
    REQUIRE(s->synchronise);
    CHECK(s->stream == consumer.stream);
    check_all_written(exchange(producer.stream, s->stream, true, 5000), 5000);
  }
  SUBCASE("-1: no wait is made; the consumer orders itself") {
    const auto s = dm::stream_from_array_api(-1);
    REQUIRE(s.has_value());
    CHECK_FALSE(s->synchronise);
    CHECK(s->stream == nullptr);
    check_all_written(exchange(producer.stream, consumer.stream, false, 6000), 6000);
  }
}

int main(int argc, char** argv) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device (cudaGetDeviceCount: %s)\n",
                status != cudaSuccess ? cudaGetErrorName(status) : "0 devices");
    return 77;  // SKIP_RETURN_CODE in CMakeLists.txt
  }
  doctest::Context context(argc, argv);
  return context.run();
}
