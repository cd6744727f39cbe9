/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The HIP runtime API's table for device_runtime.c (runtime_table.h): its symbols, loaded
 * from libamdhip64.so.7, .so.6, then libamdhip64.so (or $DLPM_HIP_RUNTIME), and each call as the
 * table asks for it. HIP's types and constants are declared here as HIP's public headers
 * define them (hip_runtime_api.h, driver_types.h; they are not needed to build). HIP has no
 * contexts: a device is made current with hipSetDevice, and what was current restored after. */
#include "shared/runtime_table.h"

typedef int hipError_t; /* hipSuccess is 0 */
typedef void* hipStream_t;
typedef void* hipEvent_t;

enum { HIP_STREAM_NON_BLOCKING = 0x1, HIP_EVENT_DISABLE_TIMING = 0x2, HIP_HOST_MALLOC_DEFAULT = 0x0 };
enum { HIP_MEMCPY_DEFAULT = 4 };           /* hipMemcpyKind: the runtime reads the kind from the addresses */

/* The entries, each with the symbol libamdhip64 exports. */
#define DLPM_HIP_ENTRIES(X)                                                                                          \
  X(hipInit, (unsigned flags))                                                                                        \
  X(hipSetDevice, (int device))                                                                                       \
  X(hipGetDevice, (int* device))                                                                                      \
  X(hipStreamCreateWithFlags, (hipStream_t * stream, unsigned flags))                                                 \
  X(hipStreamWaitEvent, (hipStream_t stream, hipEvent_t event, unsigned flags))                                       \
  X(hipStreamSynchronize, (hipStream_t stream))                                                                       \
  X(hipEventCreateWithFlags, (hipEvent_t * event, unsigned flags))                                                    \
  X(hipEventRecord, (hipEvent_t event, hipStream_t stream))                                                           \
  X(hipEventSynchronize, (hipEvent_t event))                                                                          \
  X(hipEventDestroy, (hipEvent_t event))                                                                              \
  X(hipMalloc, (void** ptr, size_t bytes))                                                                            \
  X(hipFree, (void* ptr))                                                                                             \
  X(hipHostMalloc, (void** ptr, size_t bytes, unsigned flags))                                                        \
  X(hipHostFree, (void* ptr))                                                                                         \
  X(hipMemcpyAsync, (void* dst, const void* src, size_t bytes, int kind, hipStream_t stream))                         \
  X(hipMemcpy2DAsync, (void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width, size_t height,   \
                       int kind, hipStream_t stream))

#define DLPM_HIP_FIELD(name, params) hipError_t(*name) params;
static struct {
  DLPM_HIP_ENTRIES(DLPM_HIP_FIELD)
  const char* (*hipGetErrorName)(hipError_t error);
} hip;
#undef DLPM_HIP_FIELD

#define DLPM_HIP_SYMBOL(name, params) {#name, (void**)&hip.name},
static const dlpm_py__runtime_symbol symbols[] = {DLPM_HIP_ENTRIES(DLPM_HIP_SYMBOL){"hipGetErrorName",
                                                                                  (void**)&hip.hipGetErrorName}};
#undef DLPM_HIP_SYMBOL

static int decode_stream(int64_t value, void** out) {
  uintptr_t handle = 0;
  int32_t synchronise = 0;
  if (dlpm_rocm_array_api_stream(value, &synchronise, &handle) != DLPM_OK) return -1; /* the core's rule, once */
  *out = (void*)handle; /* 0 is HIP's null stream, the default */
  return synchronise;
}

static const char* error_name(int status) { return hip.hipGetErrorName(status); }

static int enter(int32_t device_id, void** saved, int* switched, const char** call) {
  int current = -1;
  hipError_t r;
  *switched = 0;
  if ((r = hip.hipGetDevice(&current)) != 0) return *call = "hipGetDevice", r;
  if (current != device_id) {
    if ((r = hip.hipSetDevice(device_id)) != 0) return *call = "hipSetDevice", r;
    *saved = (void*)(intptr_t)current;
    *switched = 1;
  }
  return 0;
}

static void leave(void* saved) { (void)hip.hipSetDevice((int)(intptr_t)saved); }

static int allocate(int32_t device_type, size_t bytes, void** out, const char** call) {
  if (device_type == kDLROCMHost) return *call = "hipHostMalloc", hip.hipHostMalloc(out, bytes, HIP_HOST_MALLOC_DEFAULT);
  return *call = "hipMalloc", hip.hipMalloc(out, bytes);
}

static int release(int32_t device_type, void* memory) {
  return device_type == kDLROCMHost ? hip.hipHostFree(memory) : hip.hipFree(memory);
}

static int init(void) { return hip.hipInit(0); }
static int stream_create(void** stream) { return hip.hipStreamCreateWithFlags(stream, HIP_STREAM_NON_BLOCKING); }
static int stream_wait_event(void* stream, void* event) { return hip.hipStreamWaitEvent(stream, event, 0); }
static int stream_synchronize(void* stream) { return hip.hipStreamSynchronize(stream); }
static int event_create(void** event) { return hip.hipEventCreateWithFlags(event, HIP_EVENT_DISABLE_TIMING); }
static int event_record(void* event, void* stream) { return hip.hipEventRecord(event, stream); }
static int event_synchronize(void* event) { return hip.hipEventSynchronize(event); }
static int event_destroy(void* event) { return hip.hipEventDestroy(event); }

static int copy(void* dst, const void* src, size_t bytes, void* stream) {
  return hip.hipMemcpyAsync(dst, src, bytes, HIP_MEMCPY_DEFAULT, stream);
}

static int copy_2d(void* dst, size_t dst_pitch, int dst_host, const void* src, size_t src_pitch, int src_host,
                   size_t width, size_t height, void* stream) {
  (void)dst_host; /* hipMemcpyDefault: the runtime knows each side from its address */
  (void)src_host;
  return hip.hipMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height, HIP_MEMCPY_DEFAULT, stream);
}

const dlpm_py__runtime dlpm_py__hip_runtime = {
    "the HIP runtime",
    "ROCm",
    "HIP",
    "kDLROCM and kDLROCMHost",
    "DLPM_HIP_RUNTIME",
    {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so", NULL},
    symbols,
    sizeof symbols / sizeof symbols[0],
    NULL,
    decode_stream,
    error_name,
    enter,
    leave,
    allocate,
    release,
    NULL, /* the ROCm memory the host reads is pinned (kDLROCMHost): no managed kind is served */
    {"hipInit", init},
    {"hipStreamCreateWithFlags", stream_create},
    {"hipStreamWaitEvent", stream_wait_event},
    {"hipStreamSynchronize", stream_synchronize},
    {"hipEventCreateWithFlags", event_create},
    {"hipEventRecord", event_record},
    {"hipEventSynchronize", event_synchronize},
    {"hipEventDestroy", event_destroy},
    {"hipMemcpyAsync", copy},
    {"hipMemcpy2DAsync", copy_2d},
};
