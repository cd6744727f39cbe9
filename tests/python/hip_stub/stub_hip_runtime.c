/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* A stand-in for the HIP runtime (libamdhip64) for tests without a GPU: HIP's entry points,
 * by their exported names, that dlpack_mdspan's Python component loads
 * (python/src/shared/hip_runtime.c), over the CUDA stub's simulated device (included below:
 * the same log, injected failures, lazily run streams, events and host-backed "device"
 * memory, and the same stub_* functions for the tests). The status codes are HIP's
 * (hipErrorInvalidValue 1, hipErrorOutOfMemory 2, hipErrorInvalidDevice 101,
 * hipErrorInvalidHandle 400, hipErrorIllegalAddress 700). Two devices exist; hipSetDevice
 * makes one current. */
#define STUB_EVENT_RECORD "hipEventRecord"
#define STUB_STREAM_WAIT_EVENT "hipStreamWaitEvent"
#include "../cuda_stub/stub_driver.c"

typedef int hipError_t;

static int hip_current_device;

STUB_API hipError_t hipInit(unsigned flags) {
  ENTER("hipInit");
  logf_("hipInit flags=%u", flags);
  initialised = 1;
  return OK;
}

STUB_API const char* hipGetErrorName(hipError_t error) {
  switch (error) {
    case 0: return "hipSuccess";
    case 1: return "hipErrorInvalidValue";
    case 2: return "hipErrorOutOfMemory";
    case 3: return "hipErrorNotInitialized";
    case 100: return "hipErrorNoDevice";
    case 101: return "hipErrorInvalidDevice";
    case 400: return "hipErrorInvalidHandle";
    case 700: return "hipErrorIllegalAddress";
    default: return "hipErrorUnknown";
  }
}

STUB_API hipError_t hipGetDevice(int* device) {
  ENTER("hipGetDevice");
  if (!initialised) return NOT_INITIALIZED;
  *device = hip_current_device; /* not logged: asked around every call */
  return OK;
}

STUB_API hipError_t hipSetDevice(int device) {
  ENTER("hipSetDevice");
  logf_("hipSetDevice device=%d", device);
  if (device < 0 || device > 1) return INVALID_DEVICE;
  hip_current_device = device;
  return OK;
}

STUB_API hipError_t hipStreamCreateWithFlags(void** stream, unsigned flags) {
  ENTER("hipStreamCreateWithFlags");
  return stream_create("hipStreamCreateWithFlags", stream, flags);
}

STUB_API hipError_t hipStreamWaitEvent(void* stream, void* event, unsigned flags) {
  ENTER("hipStreamWaitEvent");
  return stream_wait_event("hipStreamWaitEvent", stream, event, flags);
}

STUB_API hipError_t hipStreamSynchronize(void* stream) {
  ENTER("hipStreamSynchronize");
  return stream_synchronize("hipStreamSynchronize", stream);
}

STUB_API hipError_t hipEventCreateWithFlags(void** event, unsigned flags) {
  ENTER("hipEventCreateWithFlags");
  return event_create("hipEventCreateWithFlags", event, flags);
}

STUB_API hipError_t hipEventRecord(void* event, void* stream) {
  ENTER("hipEventRecord");
  return event_record("hipEventRecord", event, stream);
}

STUB_API hipError_t hipEventSynchronize(void* event) {
  ENTER("hipEventSynchronize");
  return event_synchronize("hipEventSynchronize", event);
}

STUB_API hipError_t hipEventDestroy(void* event) {
  ENTER("hipEventDestroy");
  return event_destroy("hipEventDestroy", event);
}

STUB_API hipError_t hipMalloc(void** ptr, size_t bytes) {
  ENTER("hipMalloc");
  return allocate("hipMalloc", ptr, bytes, 1);
}

STUB_API hipError_t hipHostMalloc(void** ptr, size_t bytes, unsigned flags) {
  ENTER("hipHostMalloc");
  (void)flags;
  return allocate("hipHostMalloc", ptr, bytes, 3);
}

STUB_API hipError_t hipFree(void* ptr) {
  ENTER("hipFree");
  logf_("hipFree ptr=%p device=%d", ptr, hip_current_device);
  return forget(ptr, 1);
}

STUB_API hipError_t hipHostFree(void* ptr) {
  ENTER("hipHostFree");
  logf_("hipHostFree ptr=%p device=%d", ptr, hip_current_device);
  return forget(ptr, 3);
}

STUB_API hipError_t hipMemcpyAsync(void* dst, const void* src, size_t bytes, int kind, void* stream) {
  ENTER("hipMemcpyAsync");
  logf_("hipMemcpyAsync dst=%p src=%p bytes=%zu kind=%d stream=%p", dst, src, bytes, kind, stream);
  return queue_copy(dst, src, bytes, stream);
}

STUB_API hipError_t hipMemcpy2DAsync(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                                     size_t height, int kind, void* stream) {
  ENTER("hipMemcpy2DAsync");
  logf_("hipMemcpy2DAsync width=%zu height=%zu src_pitch=%zu dst_pitch=%zu kind=%d stream=%p", width, height,
        src_pitch, dst_pitch, kind, stream);
  return queue_copy_2d(dst, dst_pitch, src, src_pitch, width, height, stream);
}

STUB_API int stub_current_device(void) { return hip_current_device; }
