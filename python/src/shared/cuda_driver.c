/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The CUDA driver API's table for device_runtime.c (runtime_table.h): its symbols, loaded
 * from libcuda.so.1 (or $DLPM_CUDA_DRIVER), and each call as the table asks for it. The
 * driver's types are declared here as the driver's ABI defines them (cuda.h is not needed to
 * build). A device is made current through its primary context, retained once and never
 * released (the process keeps the device). */
#include "shared/runtime_table.h"

#include <string.h>

typedef int CUresult; /* CUDA_SUCCESS is 0 */
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUstream;
typedef void* CUevent;
typedef unsigned long long CUdeviceptr;

enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_UNIFIED = 4 };
enum { CU_EVENT_DISABLE_TIMING = 2, CU_STREAM_NON_BLOCKING = 1, CU_MEM_ATTACH_GLOBAL = 1 };
enum { CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89 };
#define CU_STREAM_LEGACY ((CUstream)0x1)

/* CUDA_MEMCPY2D (cuda.h's layout, the _v2 ABI). */
typedef struct {
  size_t srcXInBytes, srcY;
  int srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  void* srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  int dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  void* dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
} cuda_memcpy_2d;

/* The entries, each with the exact symbol the driver exports (the _v2 ABI where there is one). */
#define DLPM_CUDA_ENTRIES(X)                                                                                         \
  X(cuInit, "cuInit", (unsigned flags))                                                                               \
  X(cuGetErrorName, "cuGetErrorName", (CUresult error, const char** name))                                            \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                                                     \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int* value, int attribute, CUdevice device))                       \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice device))                         \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext * ctx))                                                            \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx))                                                              \
  X(cuStreamCreate, "cuStreamCreate", (CUstream * stream, unsigned flags))                                            \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream stream, CUevent event, unsigned flags))                         \
  X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream stream))                                                    \
  X(cuEventCreate, "cuEventCreate", (CUevent * event, unsigned flags))                                                \
  X(cuEventRecord, "cuEventRecord", (CUevent event, CUstream stream))                                                 \
  X(cuEventSynchronize, "cuEventSynchronize", (CUevent event))                                                        \
  X(cuEventDestroy, "cuEventDestroy_v2", (CUevent event))                                                             \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * ptr, size_t bytes))                                                   \
  X(cuMemAllocManaged, "cuMemAllocManaged", (CUdeviceptr * ptr, size_t bytes, unsigned flags))                        \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr ptr))                                                                     \
  X(cuMemAllocHost, "cuMemAllocHost_v2", (void** ptr, size_t bytes))                                                  \
  X(cuMemFreeHost, "cuMemFreeHost", (void* ptr))                                                                      \
  X(cuMemcpyAsync, "cuMemcpyAsync", (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))                \
  X(cuMemcpy2DAsync, "cuMemcpy2DAsync_v2", (const cuda_memcpy_2d* copy, CUstream stream))

#define DLPM_CUDA_FIELD(name, symbol, params) CUresult (*name) params;
static struct {
  DLPM_CUDA_ENTRIES(DLPM_CUDA_FIELD)
} cu;
#undef DLPM_CUDA_FIELD

#define DLPM_CUDA_SYMBOL(name, symbol, params) {symbol, (void**)&cu.name},
static const dlpm_py__runtime_symbol symbols[] = {DLPM_CUDA_ENTRIES(DLPM_CUDA_SYMBOL)};
#undef DLPM_CUDA_SYMBOL

#define DLPM_CUDA_MAX_DEVICES 64
static CUcontext primary[DLPM_CUDA_MAX_DEVICES]; /* retained once, never released */

static int decode_stream(int64_t value, void** out) {
  uintptr_t handle = 0;
  if (dlpm_cuda_array_api_stream(value, &handle) != DLPM_OK) return -1; /* the core's rule, once */
  *out = (void*)handle; /* 1 and 2 are the driver's own CU_STREAM_LEGACY and CU_STREAM_PER_THREAD */
  return handle != 0;
}

static const char* error_name(int status) {
  const char* name = NULL;
  return cu.cuGetErrorName(status, &name) == 0 ? name : NULL;
}

static int enter(int32_t device_id, void** saved, int* switched, const char** call) {
  CUcontext current = NULL;
  CUresult r;
  *switched = 0;
  if (device_id < 0 || device_id >= DLPM_CUDA_MAX_DEVICES) return *call = "cuDeviceGet", 101; /* CUDA_ERROR_INVALID_DEVICE */
  if (primary[device_id] == NULL) {
    CUdevice device;
    if ((r = cu.cuDeviceGet(&device, device_id)) != 0) return *call = "cuDeviceGet", r;
    if ((r = cu.cuDevicePrimaryCtxRetain(&primary[device_id], device)) != 0) return *call = "cuDevicePrimaryCtxRetain", r;
  }
  if ((r = cu.cuCtxGetCurrent(&current)) != 0) return *call = "cuCtxGetCurrent", r;
  if (current != primary[device_id]) {
    if ((r = cu.cuCtxSetCurrent(primary[device_id])) != 0) return *call = "cuCtxSetCurrent", r;
    *saved = current;
    *switched = 1;
  }
  return 0;
}

static void leave(void* saved) { (void)cu.cuCtxSetCurrent((CUcontext)saved); }

static int allocate(int32_t device_type, size_t bytes, void** out, const char** call) {
  CUdeviceptr ptr = 0;
  CUresult r;
  if (device_type == kDLCUDAHost) return *call = "cuMemAllocHost", cu.cuMemAllocHost(out, bytes);
  if (device_type == kDLCUDAManaged) *call = "cuMemAllocManaged", r = cu.cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL);
  else *call = "cuMemAlloc", r = cu.cuMemAlloc(&ptr, bytes);
  if (r == 0) *out = (void*)(uintptr_t)ptr;
  return r;
}

static int release(int32_t device_type, void* memory) {
  return device_type == kDLCUDAHost ? cu.cuMemFreeHost(memory) : cu.cuMemFree((CUdeviceptr)(uintptr_t)memory);
}

static int host_reads_while_kernels_run(int32_t device_id, int* out, const char** call) {
  CUdevice device;
  CUresult r;
  if ((r = cu.cuDeviceGet(&device, device_id)) != 0) return *call = "cuDeviceGet", r;
  *call = "cuDeviceGetAttribute";
  return cu.cuDeviceGetAttribute(out, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, device);
}

static int init(void) { return cu.cuInit(0); }
static int stream_create(void** stream) { return cu.cuStreamCreate(stream, CU_STREAM_NON_BLOCKING); }
static int stream_wait_event(void* stream, void* event) { return cu.cuStreamWaitEvent(stream, event, 0); }
static int stream_synchronize(void* stream) { return cu.cuStreamSynchronize(stream); }
static int event_create(void** event) { return cu.cuEventCreate(event, CU_EVENT_DISABLE_TIMING); }
static int event_record(void* event, void* stream) { return cu.cuEventRecord(event, stream); }
static int event_synchronize(void* event) { return cu.cuEventSynchronize(event); }
static int event_destroy(void* event) { return cu.cuEventDestroy(event); }

static int copy(void* dst, const void* src, size_t bytes, void* stream) {
  return cu.cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes, stream);
}

static int copy_2d(void* dst, size_t dst_pitch, int dst_host, const void* src, size_t src_pitch, int src_host,
                   size_t width, size_t height, void* stream) {
  cuda_memcpy_2d c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
  c.srcHost = src;
  c.srcDevice = (CUdeviceptr)(uintptr_t)src;
  c.srcPitch = src_pitch;
  c.dstMemoryType = dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
  c.dstHost = dst;
  c.dstDevice = (CUdeviceptr)(uintptr_t)dst;
  c.dstPitch = dst_pitch;
  c.WidthInBytes = width;
  c.Height = height;
  return cu.cuMemcpy2DAsync(&c, stream);
}

const dlpm_py__runtime dlpm_py__cuda_driver = {
    "the CUDA driver",
    "CUDA",
    "CUDA",
    "kDLCUDA, kDLCUDAManaged and kDLCUDAHost",
    "DLPM_CUDA_DRIVER",
    {"libcuda.so.1", NULL, NULL},
    symbols,
    sizeof symbols / sizeof symbols[0],
    CU_STREAM_LEGACY,
    decode_stream,
    error_name,
    enter,
    leave,
    allocate,
    release,
    host_reads_while_kernels_run,
    {"cuInit", init},
    {"cuStreamCreate", stream_create},
    {"cuStreamWaitEvent", stream_wait_event},
    {"cuStreamSynchronize", stream_synchronize},
    {"cuEventCreate", event_create},
    {"cuEventRecord", event_record},
    {"cuEventSynchronize", event_synchronize},
    {"cuEventDestroy", event_destroy},
    {"cuMemcpyAsync", copy},
    {"cuMemcpy2DAsync", copy_2d},
};
