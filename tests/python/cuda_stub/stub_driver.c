/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* A stand-in for the CUDA driver (libcuda.so.1) for tests without a GPU: the driver's entry
 * points, by their exported names, that dlpack_mdspan's Python component loads
 * (python/src/shared/cuda_driver.c, the CUDA table of device_runtime.c), plus stub_* functions
 * the tests call through ctypes.
 *
 * - Every call is logged ("name arg=value ...", one line each; stub_log()).
 * - "Device" memory is host memory (malloc); allocations are counted, a free of memory the
 *   stub did not hand out (or freed twice) fails with CUDA_ERROR_INVALID_VALUE and is logged;
 *   a free first runs all queued work (the driver's frees synchronise with the device).
 * - Streams run lazily, as a GPU may: work queued on a stream (copies, stub_launch_fill,
 *   stub_launch_read) runs only when something waits for it on the host (cuStreamSynchronize,
 *   cuEventSynchronize, stub_run). A cuStreamWaitEvent makes its stream run the recorded
 *   stream up to the record first, so a consumer that was never made to wait reads memory
 *   before the producer's queued writes land: a stale read a test can see.
 * - stub_fail(name, code) makes every later call of that entry fail with `code`.
 * Two devices exist. Not thread-safe (the tests are single-threaded).
 *
 * The simulated device (everything but the cu* entry points) is also the HIP stub's
 * (tests/python/hip_stub/stub_hip_runtime.c includes this file): STUB_EVENT_RECORD and
 * STUB_STREAM_WAIT_EVENT name the log lines of the test producer's own record and wait. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STUB_API __attribute__((visibility("default")))
#ifndef STUB_EVENT_RECORD
#define STUB_EVENT_RECORD "cuEventRecord"
#define STUB_STREAM_WAIT_EVENT "cuStreamWaitEvent"
#endif

typedef int CUresult;
enum {
  OK = 0,
  INVALID_VALUE = 1,
  NOT_INITIALIZED = 3,
  INVALID_DEVICE = 101,
  INVALID_HANDLE = 400,
};

/* ---- the log and injected failures ----------------------------------------------------- */

static char* log_text;
static size_t log_size, log_capacity;

static void logf_(const char* format, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void logf_(const char* format, ...) {
  char line[512];
  va_list args;
  int n;
  va_start(args, format);
  n = vsnprintf(line, sizeof line - 1, format, args);
  va_end(args);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  if (log_size + (size_t)n + 1 > log_capacity) {
    size_t capacity = (log_capacity + (size_t)n + 1) * 2;
    char* grown = (char*)realloc(log_text, capacity);
    if (grown == NULL) abort();
    log_text = grown;
    log_capacity = capacity;
  }
  memcpy(log_text + log_size, line, (size_t)n);
  log_size += (size_t)n;
  log_text[log_size] = '\0';
}

STUB_API const char* stub_log(void) { return log_text ? log_text : ""; }
STUB_API void stub_clear_log(void) {
  log_size = 0;
  if (log_text) log_text[0] = '\0';
}

#define MAX_FAILS 16
static struct {
  char name[64];
  CUresult code;
} fails[MAX_FAILS];

STUB_API void stub_fail(const char* name, int code) {
  for (int i = 0; i < MAX_FAILS; ++i)
    if (fails[i].name[0] == '\0' || strcmp(fails[i].name, name) == 0) {
      snprintf(fails[i].name, sizeof fails[i].name, "%s", name);
      fails[i].code = code;
      return;
    }
}
STUB_API void stub_clear_fails(void) { memset(fails, 0, sizeof fails); }

static CUresult injected(const char* name) {
  for (int i = 0; i < MAX_FAILS && fails[i].name[0] != '\0'; ++i)
    if (strcmp(fails[i].name, name) == 0) return fails[i].code;
  return OK;
}

#define ENTER(name)                                                                                                  \
  do {                                                                                                               \
    const CUresult r_ = injected(name);                                                                              \
    if (r_ != OK) {                                                                                                  \
      logf_("%s failed %d", name, r_);                                                                               \
      return r_;                                                                                                     \
    }                                                                                                                \
  } while (0)

/* ---- streams, events and lazy work ------------------------------------------------------- */

enum { OP_COPY, OP_COPY_2D, OP_FILL, OP_READ, OP_WAIT, OP_RECORD };
typedef struct {
  int kind;
  unsigned char *dst, *src;
  size_t bytes, height, dst_pitch, src_pitch;
  float value;
  int wait_stream; /* OP_WAIT: the stream index and the op count to run it to */
  size_t wait_until;
} op;

#define MAX_STREAMS 256 /* every test of a suite makes its own: no stream is ever destroyed */
static struct {
  uintptr_t handle;
  op* ops;
  size_t count, capacity, done;
} streams[MAX_STREAMS];
static int nstreams;
static uintptr_t next_stream_handle = 0x5000;

/* The index of a stream handle: 0 and 1 (legacy default) and 2 (per-thread) exist always;
 * others only once cuStreamCreate made them. -1: not a stream. */
static int stream_index(void* handle) {
  uintptr_t h = (uintptr_t)handle;
  if (h == 0) h = 1; /* NULL is the legacy default stream */
  for (int i = 0; i < nstreams; ++i)
    if (streams[i].handle == h) return i;
  if ((h == 1 || h == 2) && nstreams < MAX_STREAMS) {
    streams[nstreams].handle = h;
    return nstreams++;
  }
  return -1;
}

static void push(int s, op o) {
  if (streams[s].count == streams[s].capacity) {
    size_t capacity = streams[s].capacity ? streams[s].capacity * 2 : 16;
    op* grown = (op*)realloc(streams[s].ops, capacity * sizeof(op));
    if (grown == NULL) abort();
    streams[s].ops = grown;
    streams[s].capacity = capacity;
  }
  streams[s].ops[streams[s].count++] = o;
}

static int nstreams_alive(void) { return nstreams; }

static void run_to(int s, size_t until) {
  if (until > streams[s].count) until = streams[s].count;
  while (streams[s].done < until) {
    op* o = &streams[s].ops[streams[s].done];
    switch (o->kind) {
      case OP_WAIT: run_to(o->wait_stream, o->wait_until); break;
      case OP_COPY: memcpy(o->dst, o->src, o->bytes); break;
      case OP_COPY_2D:
        for (size_t row = 0; row < o->height; ++row) memcpy(o->dst + row * o->dst_pitch, o->src + row * o->src_pitch, o->bytes);
        break;
      case OP_FILL:
        for (size_t i = 0; i < o->bytes / sizeof(float); ++i) memcpy(o->dst + i * sizeof(float), &o->value, sizeof(float));
        break;
      case OP_READ: memcpy(o->dst, o->src, o->bytes); break;
      default: break;
    }
    ++streams[s].done;
  }
}

#define MAX_EVENTS 256
static struct {
  int live;
  int recorded_stream; /* -1: never recorded */
  size_t recorded_at;
} events[MAX_EVENTS];
static int live_events;

static int event_index(void* handle) {
  const uintptr_t i = (uintptr_t)handle - 0x9000;
  return (uintptr_t)handle >= 0x9000 && i < MAX_EVENTS && events[i].live ? (int)i : -1;
}

/* ---- memory --------------------------------------------------------------------------- */

#define MAX_ALLOCATIONS 1024
static struct {
  void* memory;
  int kind; /* 1 device, 2 managed, 3 pinned host */
} allocations[MAX_ALLOCATIONS];
static int live_allocations;

static CUresult remember(void* memory, int kind) {
  for (int i = 0; i < MAX_ALLOCATIONS; ++i)
    if (allocations[i].memory == NULL) {
      allocations[i].memory = memory;
      allocations[i].kind = kind;
      ++live_allocations;
      return OK;
    }
  return INVALID_VALUE;
}

static void run_to(int s, size_t until);
static int nstreams_alive(void);

/* A free synchronises with the device first, as the driver's does: queued work that still
 * touches the memory lands before it goes. */
static CUresult forget(void* memory, int kind) {
  for (int s = 0; s < nstreams_alive(); ++s) run_to(s, (size_t)-1);
  for (int i = 0; i < MAX_ALLOCATIONS; ++i)
    if (allocations[i].memory == memory && memory != NULL) {
      if ((allocations[i].kind == 3) != (kind == 3)) return INVALID_VALUE; /* the wrong allocator's free */
      allocations[i].memory = NULL;
      --live_allocations;
      free(memory);
      return OK;
    }
  return INVALID_VALUE;
}

/* ---- the driver's entry points -------------------------------------------------------- */

static int initialised;
static void* current_context;

STUB_API CUresult cuInit(unsigned flags) {
  ENTER("cuInit");
  logf_("cuInit flags=%u", flags);
  initialised = 1;
  return OK;
}

STUB_API CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case 0: *name = "CUDA_SUCCESS"; return OK;
    case 1: *name = "CUDA_ERROR_INVALID_VALUE"; return OK;
    case 2: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return OK;
    case 3: *name = "CUDA_ERROR_NOT_INITIALIZED"; return OK;
    case 100: *name = "CUDA_ERROR_NO_DEVICE"; return OK;
    case 101: *name = "CUDA_ERROR_INVALID_DEVICE"; return OK;
    case 400: *name = "CUDA_ERROR_INVALID_HANDLE"; return OK;
    case 700: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; return OK;
    default: *name = NULL; return INVALID_VALUE;
  }
}

STUB_API CUresult cuDeviceGet(int* device, int ordinal) {
  ENTER("cuDeviceGet");
  logf_("cuDeviceGet ordinal=%d", ordinal);
  if (!initialised) return NOT_INITIALIZED;
  if (ordinal < 0 || ordinal > 1) return INVALID_DEVICE;
  *device = ordinal;
  return OK;
}

/* CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS (89), the one attribute asked: 1 (a
 * current discrete GPU) unless a test sets 0 (Jetson, pre-Pascal) with
 * stub_set_concurrent_managed_access. */
static int concurrent_managed_access = 1;

STUB_API void stub_set_concurrent_managed_access(int value) { concurrent_managed_access = value; }

STUB_API CUresult cuDeviceGetAttribute(int* value, int attribute, int device) {
  ENTER("cuDeviceGetAttribute");
  logf_("cuDeviceGetAttribute attribute=%d device=%d", attribute, device);
  if (!initialised) return NOT_INITIALIZED;
  if (device < 0 || device > 1) return INVALID_DEVICE;
  if (attribute != 89) return INVALID_VALUE;
  *value = concurrent_managed_access;
  return OK;
}

STUB_API CUresult cuDevicePrimaryCtxRetain(void** ctx, int device) {
  ENTER("cuDevicePrimaryCtxRetain");
  logf_("cuDevicePrimaryCtxRetain device=%d", device);
  *ctx = (void*)(uintptr_t)(0xC000 + device);
  return OK;
}

STUB_API CUresult cuCtxGetCurrent(void** ctx) {
  ENTER("cuCtxGetCurrent");
  *ctx = current_context; /* not logged: asked around every call */
  return OK;
}

STUB_API CUresult cuCtxSetCurrent(void* ctx) {
  ENTER("cuCtxSetCurrent");
  logf_("cuCtxSetCurrent ctx=%p", ctx);
  current_context = ctx;
  return OK;
}

/* The simulated device's operations, each logged under the entry point's `name` (the CUDA
 * and HIP entry points share them). */
static CUresult stream_create(const char* name, void** stream, unsigned flags) {
  if (nstreams == MAX_STREAMS) return INVALID_VALUE;
  streams[nstreams].handle = next_stream_handle++;
  *stream = (void*)streams[nstreams++].handle;
  logf_("%s stream=%p flags=%u", name, *stream, flags);
  return OK;
}

STUB_API CUresult cuStreamCreate(void** stream, unsigned flags) {
  ENTER("cuStreamCreate");
  return stream_create("cuStreamCreate", stream, flags);
}

static CUresult stream_wait_event(const char* name, void* stream, void* event, unsigned flags) {
  int s, e;
  logf_("%s stream=%p event=%p flags=%u", name, stream, event, flags);
  if ((s = stream_index(stream)) < 0 || (e = event_index(event)) < 0) return INVALID_HANDLE;
  if (events[e].recorded_stream >= 0) {
    op o = {0};
    o.kind = OP_WAIT;
    o.wait_stream = events[e].recorded_stream;
    o.wait_until = events[e].recorded_at;
    push(s, o);
  }
  return OK;
}

STUB_API CUresult cuStreamWaitEvent(void* stream, void* event, unsigned flags) {
  ENTER("cuStreamWaitEvent");
  return stream_wait_event("cuStreamWaitEvent", stream, event, flags);
}

/* Whether the calling thread holds Python's GIL (the stub is loaded into a Python process;
 * -1 outside one): a host wait for device work should not hold it. */
static int python_holds_gil(void) {
  void* process = dlopen(NULL, RTLD_LAZY); /* the global scope: the interpreter's symbols */
  int (*check)(void) = process ? (int (*)(void))dlsym(process, "PyGILState_Check") : NULL;
  return check == NULL ? -1 : check();
}

static CUresult stream_synchronize(const char* name, void* stream) {
  int s;
  logf_("%s stream=%p gil=%d", name, stream, python_holds_gil());
  if ((s = stream_index(stream)) < 0) return INVALID_HANDLE;
  run_to(s, streams[s].count);
  return OK;
}

STUB_API CUresult cuStreamSynchronize(void* stream) {
  ENTER("cuStreamSynchronize");
  return stream_synchronize("cuStreamSynchronize", stream);
}

static CUresult event_create(const char* name, void** event, unsigned flags) {
  for (int i = 0; i < MAX_EVENTS; ++i)
    if (!events[i].live) {
      events[i].live = 1;
      events[i].recorded_stream = -1;
      ++live_events;
      *event = (void*)(uintptr_t)(0x9000 + i);
      logf_("%s event=%p flags=%u", name, *event, flags);
      return OK;
    }
  return INVALID_VALUE;
}

STUB_API CUresult cuEventCreate(void** event, unsigned flags) {
  ENTER("cuEventCreate");
  return event_create("cuEventCreate", event, flags);
}

static CUresult event_record(const char* name, void* event, void* stream) {
  int s, e;
  logf_("%s event=%p stream=%p", name, event, stream);
  if ((s = stream_index(stream)) < 0 || (e = event_index(event)) < 0) return INVALID_HANDLE;
  events[e].recorded_stream = s;
  events[e].recorded_at = streams[s].count;
  return OK;
}

STUB_API CUresult cuEventRecord(void* event, void* stream) {
  ENTER("cuEventRecord");
  return event_record("cuEventRecord", event, stream);
}

static CUresult event_synchronize(const char* name, void* event) {
  int e;
  logf_("%s event=%p gil=%d", name, event, python_holds_gil());
  if ((e = event_index(event)) < 0) return INVALID_HANDLE;
  if (events[e].recorded_stream >= 0) run_to(events[e].recorded_stream, events[e].recorded_at);
  return OK;
}

STUB_API CUresult cuEventSynchronize(void* event) {
  ENTER("cuEventSynchronize");
  return event_synchronize("cuEventSynchronize", event);
}

static CUresult event_destroy(const char* name, void* event) {
  int e;
  logf_("%s event=%p", name, event);
  if ((e = event_index(event)) < 0) return INVALID_HANDLE;
  events[e].live = 0;
  --live_events;
  return OK;
}

STUB_API CUresult cuEventDestroy_v2(void* event) {
  ENTER("cuEventDestroy_v2");
  return event_destroy("cuEventDestroy_v2", event);
}

static CUresult allocate(const char* name, void** out, size_t bytes, int kind) {
  void* memory;
  if (bytes == 0) return INVALID_VALUE;
  if ((memory = calloc(1, bytes)) == NULL) return 2;
  if (remember(memory, kind) != OK) {
    free(memory);
    return 2;
  }
  *out = memory;
  logf_("%s bytes=%zu ptr=%p", name, bytes, memory);
  return OK;
}

STUB_API CUresult cuMemAlloc_v2(unsigned long long* ptr, size_t bytes) {
  void* memory = NULL;
  CUresult r;
  ENTER("cuMemAlloc_v2");
  if ((r = allocate("cuMemAlloc_v2", &memory, bytes, 1)) == OK) *ptr = (unsigned long long)(uintptr_t)memory;
  return r;
}

STUB_API CUresult cuMemAllocManaged(unsigned long long* ptr, size_t bytes, unsigned flags) {
  void* memory = NULL;
  CUresult r;
  ENTER("cuMemAllocManaged");
  (void)flags;
  if ((r = allocate("cuMemAllocManaged", &memory, bytes, 2)) == OK) *ptr = (unsigned long long)(uintptr_t)memory;
  return r;
}

STUB_API CUresult cuMemAllocHost_v2(void** ptr, size_t bytes) {
  ENTER("cuMemAllocHost_v2");
  return allocate("cuMemAllocHost_v2", ptr, bytes, 3);
}

STUB_API CUresult cuMemFree_v2(unsigned long long ptr) {
  ENTER("cuMemFree_v2");
  logf_("cuMemFree_v2 ptr=%p", (void*)(uintptr_t)ptr);
  return forget((void*)(uintptr_t)ptr, 1);
}

STUB_API CUresult cuMemFreeHost(void* ptr) {
  ENTER("cuMemFreeHost");
  logf_("cuMemFreeHost ptr=%p", ptr);
  return forget(ptr, 3);
}

/* A copy queued on `stream` (logged by the caller). */
static CUresult queue_copy(void* dst, const void* src, size_t bytes, void* stream) {
  int s;
  op o = {0};
  if ((s = stream_index(stream)) < 0) return INVALID_HANDLE;
  o.kind = OP_COPY;
  o.dst = (unsigned char*)dst;
  o.src = (unsigned char*)(uintptr_t)src;
  o.bytes = bytes;
  push(s, o);
  return OK;
}

/* `height` rows of `width` bytes queued on `stream` (logged by the caller). */
static CUresult queue_copy_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                              size_t height, void* stream) {
  int s;
  op o = {0};
  if ((s = stream_index(stream)) < 0) return INVALID_HANDLE;
  if (src_pitch < width || dst_pitch < width) return INVALID_VALUE;
  o.kind = OP_COPY_2D;
  o.src = (unsigned char*)(uintptr_t)src;
  o.dst = (unsigned char*)dst;
  o.bytes = width;
  o.height = height;
  o.src_pitch = src_pitch;
  o.dst_pitch = dst_pitch;
  push(s, o);
  return OK;
}

STUB_API CUresult cuMemcpyAsync(unsigned long long dst, unsigned long long src, size_t bytes, void* stream) {
  ENTER("cuMemcpyAsync");
  logf_("cuMemcpyAsync dst=%p src=%p bytes=%zu stream=%p", (void*)(uintptr_t)dst, (void*)(uintptr_t)src, bytes, stream);
  return queue_copy((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, bytes, stream);
}

/* CUDA_MEMCPY2D, the _v2 ABI. */
typedef struct {
  size_t srcXInBytes, srcY;
  int srcMemoryType;
  const void* srcHost;
  unsigned long long srcDevice;
  void* srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  int dstMemoryType;
  void* dstHost;
  unsigned long long dstDevice;
  void* dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
} memcpy_2d;

STUB_API CUresult cuMemcpy2DAsync_v2(const memcpy_2d* c, void* stream) {
  ENTER("cuMemcpy2DAsync_v2");
  logf_("cuMemcpy2DAsync_v2 width=%zu height=%zu src_pitch=%zu dst_pitch=%zu src_type=%d dst_type=%d stream=%p",
        c->WidthInBytes, c->Height, c->srcPitch, c->dstPitch, c->srcMemoryType, c->dstMemoryType, stream);
  return queue_copy_2d((void*)(c->dstMemoryType == 1 ? (uintptr_t)c->dstHost : (uintptr_t)c->dstDevice), c->dstPitch,
                       (const void*)(c->srcMemoryType == 1 ? (uintptr_t)c->srcHost : (uintptr_t)c->srcDevice),
                       c->srcPitch, c->WidthInBytes, c->Height, stream);
}

/* ---- for the tests (ctypes) ---------------------------------------------------------------- */

/* A "kernel" on `stream` that writes `value` to n floats at ptr when the stream runs. */
STUB_API int stub_launch_fill(void* stream, void* ptr, float value, size_t n) {
  int s = stream_index(stream);
  op o = {0};
  if (s < 0) return INVALID_HANDLE;
  logf_("stub_launch_fill ptr=%p value=%g n=%zu stream=%p", ptr, (double)value, n, stream);
  o.kind = OP_FILL;
  o.dst = (unsigned char*)ptr;
  o.value = value;
  o.bytes = n * sizeof(float);
  push(s, o);
  return OK;
}

/* A "kernel" on `stream` that copies `bytes` at ptr into out when the stream runs. */
STUB_API int stub_launch_read(void* stream, const void* ptr, void* out, size_t bytes) {
  int s = stream_index(stream);
  op o = {0};
  if (s < 0) return INVALID_HANDLE;
  logf_("stub_launch_read ptr=%p bytes=%zu stream=%p", ptr, bytes, stream);
  o.kind = OP_READ;
  o.dst = (unsigned char*)out;
  o.src = (unsigned char*)(uintptr_t)ptr;
  o.bytes = bytes;
  push(s, o);
  return OK;
}

/* cuEventRecord and cuStreamWaitEvent for a test's fake producer: never failed by stub_fail
 * (which is aimed at the component's calls). */
STUB_API int stub_event_record(void* event, void* stream) { return event_record(STUB_EVENT_RECORD, event, stream); }
STUB_API int stub_stream_wait_event(void* stream, void* event) {
  return stream_wait_event(STUB_STREAM_WAIT_EVENT, stream, event, 0);
}

/* Runs everything queued on `stream` (as the host waiting for it). */
STUB_API int stub_run(void* stream) {
  int s = stream_index(stream);
  if (s < 0) return INVALID_HANDLE;
  run_to(s, streams[s].count);
  return OK;
}

/* Work queued on `stream` that has not run yet. */
STUB_API size_t stub_pending(void* stream) {
  int s = stream_index(stream);
  return s < 0 ? 0 : streams[s].count - streams[s].done;
}

STUB_API int stub_live_allocations(void) { return live_allocations; }
STUB_API int stub_live_events(void) { return live_events; }
STUB_API void* stub_current_context(void) { return current_context; }
