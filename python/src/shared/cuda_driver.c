/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The CUDA driver API as a table of function pointers, loaded on first need (see
 * cuda_driver.h). The driver's types are declared here as the driver's ABI defines them
 * (cuda.h is not needed to build). */
#include "shared/cuda_driver.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult; /* CUDA_SUCCESS is 0 */
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUstream;
typedef void* CUevent;
typedef unsigned long long CUdeviceptr;

enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_UNIFIED = 4 };
enum { CU_EVENT_DISABLE_TIMING = 2, CU_STREAM_NON_BLOCKING = 1, CU_MEM_ATTACH_GLOBAL = 1 };
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

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

static int cu_loaded;        /* the table is filled and cuInit succeeded */
static PyObject* load_error; /* the BufferError message of a failed load, repeated on every later need */

#define DLPM_CUDA_MAX_DEVICES 64
#define DLPM_CUDA_EVENT_POOL 64
static struct {
  CUcontext primary;  /* retained once, never released (the process keeps the device) */
  CUstream library;   /* the library's stream, created on first use */
  CUevent pool[DLPM_CUDA_EVENT_POOL];
  int pooled;
} devices[DLPM_CUDA_MAX_DEVICES];

static const char* driver_path(void) {
  const char* path = getenv("DLPM_CUDA_DRIVER");
  return path != NULL && path[0] != '\0' ? path : "libcuda.so.1";
}

/* BufferError "<call> failed: <CUDA error name> (<code>)". Returns -1. */
static int failed(const char* call, CUresult r) {
  const char* name = NULL;
  if (cu.cuGetErrorName == NULL || cu.cuGetErrorName(r, &name) != 0 || name == NULL) name = "an unknown CUDA error";
  PyErr_Format(PyExc_BufferError, "%s failed: %s (%d), in the CUDA driver %s", call, name, (int)r, driver_path());
  return -1;
}

#define CU_CALL(call, args)                                                                                          \
  do {                                                                                                               \
    const CUresult r_ = cu.call args;                                                                                \
    if (r_ != 0) return failed(#call, r_);                                                                           \
  } while (0)

/* The table, loading it on first use; 0, or -1 with BufferError set. */
static int need_driver(void) {
  void* lib;
  const char* path;
  CUresult r;
  if (cu_loaded) return 0;
  if (load_error != NULL) {
    PyErr_SetObject(PyExc_BufferError, load_error);
    return -1;
  }
  path = driver_path();
  if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
    const char* why = dlerror();
    load_error = PyUnicode_FromFormat("this CUDA tensor needs the CUDA driver, and dlopen(\"%s\") failed: %s", path,
                                      why ? why : "no reason given");
    goto fail;
  }
#define DLPM_CUDA_LOAD(name, symbol, params)                                                                         \
  if ((*(void**)&cu.name = dlsym(lib, symbol)) == NULL) {                                                            \
    load_error = PyUnicode_FromFormat("the CUDA driver %s has no %s", path, symbol);                                 \
    goto fail_close;                                                                                                 \
  }
  DLPM_CUDA_ENTRIES(DLPM_CUDA_LOAD)
#undef DLPM_CUDA_LOAD
  if ((r = cu.cuInit(0)) != 0) {
    const char* name = NULL;
    if (cu.cuGetErrorName(r, &name) != 0 || name == NULL) name = "an unknown CUDA error";
    load_error = PyUnicode_FromFormat("cuInit failed: %s (%d), in the CUDA driver %s", name, (int)r, path);
    goto fail_close;
  }
  cu_loaded = 1; /* the library stays loaded for the process */
  return 0;
fail_close:
  memset(&cu, 0, sizeof cu);
  dlclose(lib);
fail:
  if (load_error == NULL) return -1; /* MemoryError set */
  PyErr_SetObject(PyExc_BufferError, load_error);
  return -1;
}

/* The device's primary context made current, the previous one kept in *saved (NULL when
 * nothing changed). 0, or -1 with BufferError set. */
static int enter(int32_t device_id, CUcontext* saved, int* switched) {
  CUcontext current = NULL;
  *switched = 0;
  if (need_driver() != 0) return -1;
  if (device_id < 0 || device_id >= DLPM_CUDA_MAX_DEVICES) {
    PyErr_Format(PyExc_BufferError, "CUDA device %d is out of the range this library handles (0 to %d)", (int)device_id,
                 DLPM_CUDA_MAX_DEVICES - 1);
    return -1;
  }
  if (devices[device_id].primary == NULL) {
    CUdevice device;
    CU_CALL(cuDeviceGet, (&device, device_id));
    CU_CALL(cuDevicePrimaryCtxRetain, (&devices[device_id].primary, device));
  }
  CU_CALL(cuCtxGetCurrent, (&current));
  if (current != devices[device_id].primary) {
    CU_CALL(cuCtxSetCurrent, (devices[device_id].primary));
    *saved = current;
    *switched = 1;
  }
  return 0;
}

/* Restores the context enter() replaced; keeps an exception already set. */
static int leave(CUcontext saved, int switched, int status) {
  if (switched) (void)cu.cuCtxSetCurrent(saved);
  return status;
}

/* ---- streams --------------------------------------------------------------------------- */

PyObject* dlpm_py__invalid_stream_error(void) {
  static PyObject* type;
  if (type == NULL) {
    PyObject* bases = PyTuple_Pack(2, PyExc_RuntimeError, PyExc_AssertionError);
    if (bases == NULL) return NULL;
    type = PyErr_NewExceptionWithDoc("dlpack_mdspan.InvalidStreamError",
                                     "A __dlpack__(stream=...) value the Python array API refuses for the tensor's "
                                     "device (a RuntimeError, as NumPy raises, and an AssertionError, as PyTorch does).",
                                     bases, NULL);
    Py_DECREF(bases);
    if (type == NULL) return NULL;
  }
  Py_INCREF(type);
  return type;
}

PyObject* dlpm_py_invalid_stream_error(void) DLPM_NOEXCEPT { return dlpm_py__invalid_stream_error(); }

int dlpm_py__cuda_stream_from_value(int64_t value, void** out) {
  uintptr_t handle = 0;
  *out = NULL;
  if (dlpm_cuda_array_api_stream(value, &handle) != DLPM_OK) return -1; /* the core's rule, once */
  *out = (void*)handle; /* 1 and 2 are the driver's own CU_STREAM_LEGACY and CU_STREAM_PER_THREAD */
  return handle != 0;
}

int dlpm_py__cuda_stream_from_object(PyObject* stream, void** out, int* wait) {
  long long value;
  PyObject* kind;
  *out = NULL;
  *wait = 1;
  if (stream == Py_None) {
    *out = CU_STREAM_LEGACY;
    return 0;
  }
  if (!PyLong_Check(stream)) {
    PyErr_Format(PyExc_TypeError, "__dlpack__: stream must be None or an integer for CUDA memory, not %R",
                 (PyObject*)Py_TYPE(stream));
    return -1;
  }
  if (dlpm_py_integer_in_range(stream, "__dlpack__: stream", INT64_MIN, INT64_MAX, NULL, &value) != 0) return -1;
  switch (dlpm_py__cuda_stream_from_value(value, out)) {
    case 1: return 0;
    case 0: *wait = 0; return 0;
    default: break;
  }
  if ((kind = dlpm_py__invalid_stream_error()) == NULL) return -1;
  PyErr_Format(kind, "__dlpack__: %s", dlpm_last_error()); /* the facade's wording of the refusal */
  Py_DECREF(kind);
  return -1;
}

static int library_stream(int32_t device_id, CUstream* out) {
  if (devices[device_id].library == NULL) CU_CALL(cuStreamCreate, (&devices[device_id].library, CU_STREAM_NON_BLOCKING));
  *out = devices[device_id].library;
  return 0;
}

int dlpm_py__cuda_library_stream(int32_t device_id, void** out) {
  CUcontext saved = NULL;
  int switched;
  if (enter(device_id, &saved, &switched) != 0) return -1;
  return leave(saved, switched, library_stream(device_id, (CUstream*)out));
}

static int pooled_event(int32_t device_id, CUevent* out) {
  if (devices[device_id].pooled > 0) {
    *out = devices[device_id].pool[--devices[device_id].pooled];
    return 0;
  }
  CU_CALL(cuEventCreate, (out, CU_EVENT_DISABLE_TIMING));
  return 0;
}

static void unpool(int32_t device_id, CUevent event) {
  if (devices[device_id].pooled < DLPM_CUDA_EVENT_POOL) devices[device_id].pool[devices[device_id].pooled++] = event;
  else (void)cu.cuEventDestroy(event);
}

static int capture(int32_t device_id, CUstream stream, CUevent* out) {
  CUstream library;
  CUevent event;
  CUresult r;
  if (library_stream(device_id, &library) != 0 || pooled_event(device_id, &event) != 0) return -1;
  if ((r = cu.cuEventRecord(event, stream)) != 0) {
    unpool(device_id, event);
    return failed("cuEventRecord", r);
  }
  if (stream != library && (r = cu.cuStreamWaitEvent(library, event, 0)) != 0) {
    unpool(device_id, event);
    return failed("cuStreamWaitEvent", r);
  }
  *out = event;
  return 0;
}

int dlpm_py__cuda_capture(int32_t device_id, void* stream, void** event) {
  CUcontext saved = NULL;
  int switched;
  if (enter(device_id, &saved, &switched) != 0) return -1;
  return leave(saved, switched, capture(device_id, (CUstream)stream, (CUevent*)event));
}

int dlpm_py__cuda_wait(int32_t device_id, void* stream, void* event) {
  CUcontext saved = NULL;
  int switched;
  CUresult r;
  if (enter(device_id, &saved, &switched) != 0) return -1;
  r = cu.cuStreamWaitEvent((CUstream)stream, (CUevent)event, 0);
  return leave(saved, switched, r == 0 ? 0 : failed("cuStreamWaitEvent", r));
}

int dlpm_py__cuda_event_synchronize(int32_t device_id, void* event) {
  CUcontext saved = NULL;
  int switched;
  CUresult r;
  if (enter(device_id, &saved, &switched) != 0) return -1;
  r = cu.cuEventSynchronize((CUevent)event);
  return leave(saved, switched, r == 0 ? 0 : failed("cuEventSynchronize", r));
}

void dlpm_py__cuda_event_release(int32_t device_id, void* event) {
  if (event == NULL || !cu_loaded || device_id < 0 || device_id >= DLPM_CUDA_MAX_DEVICES) return;
  unpool(device_id, (CUevent)event);
}

/* ---- copies ---------------------------------------------------------------------------- */

/* What a copy's deleter frees, and with which allocator. */
typedef struct {
  int32_t device_type;
  CUcontext context; /* the context it was allocated in (the queueing device's primary context) */
  void* memory;
} cuda_allocation;

/* May run on any thread, without the GIL: the driver alone, no Python. */
static void free_allocation(void* ctx) {
  cuda_allocation* a = (cuda_allocation*)ctx;
  CUcontext current = NULL;
  const int switched = cu.cuCtxGetCurrent(&current) == 0 && current != a->context && cu.cuCtxSetCurrent(a->context) == 0;
  if (a->device_type == kDLCUDAHost) (void)cu.cuMemFreeHost(a->memory);
  else (void)cu.cuMemFree((CUdeviceptr)(uintptr_t)a->memory);
  if (switched) (void)cu.cuCtxSetCurrent(current);
  free(a);
}

/* New memory of `bytes` on `target`, owned by a new tensor shaped like `source` (compact
 * row-major, IS_COPIED). 0, or -1 with an exception set. */
static int allocate_like(const DLManagedTensorVersioned* source, DLDevice target, size_t bytes,
                         DLManagedTensorVersioned** out) {
  const DLTensor* s = &source->dl_tensor;
  const uint64_t flags =
      DLPACK_FLAG_BITMASK_IS_COPIED | (source->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
  cuda_allocation* a;
  dlpm_status st;
  if (target.device_type == kDLCPU) {
    if ((st = dlpm_managed_alloc_host(s->ndim, s->shape, s->dtype, flags, out)) != DLPM_OK) {
      dlpm_py__raise_as(st == DLPM_E_OUT_OF_MEMORY ? PyExc_MemoryError : PyExc_BufferError, st);
      return -1;
    }
    return 0;
  }
  if ((a = (cuda_allocation*)malloc(sizeof *a)) == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  a->device_type = target.device_type;
  a->memory = NULL;
  if (cu.cuCtxGetCurrent(&a->context) != 0) a->context = NULL; /* enter() made it current */
  if (bytes == 0) bytes = 1; /* the driver refuses empty allocations */
  {
    CUresult r;
    CUdeviceptr ptr = 0;
    const char* call = target.device_type == kDLCUDAHost      ? "cuMemAllocHost"
                       : target.device_type == kDLCUDAManaged ? "cuMemAllocManaged"
                                                              : "cuMemAlloc";
    if (target.device_type == kDLCUDAHost) r = cu.cuMemAllocHost(&a->memory, bytes);
    else if (target.device_type == kDLCUDAManaged) r = cu.cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL);
    else r = cu.cuMemAlloc(&ptr, bytes);
    if (r != 0) {
      free(a);
      return failed(call, r);
    }
    if (ptr != 0) a->memory = (void*)(uintptr_t)ptr;
  }
  st = dlpm_managed_new_ordered(a->memory, s->ndim, s->shape, NULL, 'C', s->dtype, target, 0, flags, free_allocation, a,
                                out);
  if (st != DLPM_OK) {
    free_allocation(a);
    dlpm_py__raise_as(st == DLPM_E_OUT_OF_MEMORY ? PyExc_MemoryError : PyExc_BufferError, st);
    return -1;
  }
  return 0;
}

/* One 2-D copy (height rows of width bytes; height 1 is a plain copy). */
static int copy_rows(uintptr_t dst, size_t dst_pitch, int dst_host, uintptr_t src, size_t src_pitch, int src_host,
                     size_t width, size_t height, CUstream stream) {
  if (height == 1) {
    CU_CALL(cuMemcpyAsync, ((CUdeviceptr)dst, (CUdeviceptr)src, width, stream));
    return 0;
  }
  {
    cuda_memcpy_2d c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
    c.srcHost = (const void*)src;
    c.srcDevice = (CUdeviceptr)src;
    c.srcPitch = src_pitch;
    c.dstMemoryType = dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
    c.dstHost = (void*)dst;
    c.dstDevice = (CUdeviceptr)dst;
    c.dstPitch = dst_pitch;
    c.WidthInBytes = width;
    c.Height = height;
    CU_CALL(cuMemcpy2DAsync, (&c, stream));
  }
  return 0;
}

/* The source's elements, in row-major order, into the compact `dst`: the innermost modes
 * that are compact in the source make one contiguous run; the next mode, when its stride
 * is a positive pitch of at least a run, makes the rows of a 2-D copy; the outer modes are
 * walked one index at a time. */
static int copy_strided(const DLTensor* s, const int64_t* strides, size_t itemsize, uintptr_t dst, int dst_host,
                        int src_host, CUstream stream) {
  const int32_t n = s->ndim;
  int64_t run = 1, index[DLPM_MAX_NDIM];
  int32_t k = n, rows_mode = -1, outer;
  size_t width, height = 1, pitch = 0, copies;
  for (int32_t i = n - 1; i >= 0; --i) {
    if (s->shape[i] == 0) return 0; /* nothing to copy */
    if (s->shape[i] != 1 && strides[i] != run) break;
    run *= s->shape[i];
    k = i;
  }
  width = (size_t)run * itemsize;
  outer = k;
  if (k > 0 && strides[k - 1] > 0 && (size_t)strides[k - 1] * itemsize >= width) {
    rows_mode = k - 1;
    height = (size_t)s->shape[rows_mode];
    pitch = (size_t)strides[rows_mode] * itemsize;
    outer = rows_mode;
  }
  copies = 1;
  for (int32_t i = 0; i < outer; ++i) {
    if (s->shape[i] == 0) return 0;
    copies *= (size_t)s->shape[i];
    index[i] = 0;
  }
  for (size_t c = 0; c < copies; ++c) {
    int64_t offset = 0; /* in elements */
    for (int32_t i = 0; i < outer; ++i) offset += index[i] * strides[i];
    if (copy_rows(dst + c * width * height, width, dst_host,
                  (uintptr_t)s->data + (uintptr_t)s->byte_offset + (uintptr_t)(offset * (int64_t)itemsize), pitch,
                  src_host, width, height, stream) != 0)
      return -1;
    for (int32_t i = outer - 1; i >= 0; --i) { /* the next outer index, row-major */
      if (++index[i] < s->shape[i]) break;
      index[i] = 0;
    }
  }
  return 0;
}

int dlpm_py__cuda_copy(const DLManagedTensorVersioned* source, DLDevice target, int32_t stream_device, void* stream,
                       void* ready, int synchronize, DLManagedTensorVersioned** out) {
  const DLTensor* s = &source->dl_tensor;
  const int padded = (source->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
  const size_t itemsize = dlpm_storage_itemsize(s->dtype, padded);
  int64_t strides[DLPM_MAX_NDIM], numel = 1;
  DLManagedTensorVersioned* copy = NULL;
  CUcontext saved = NULL;
  int switched, status = -1;
  CUresult r;
  if (target.device_type != kDLCPU && !dlpm_py__is_cuda_memory(target.device_type)) {
    PyErr_Format(PyExc_BufferError, "cannot copy a tensor to device (%d, %d): the CUDA driver copies only between "
                 "kDLCPU, kDLCUDA, kDLCUDAManaged and kDLCUDAHost", (int)target.device_type, (int)target.device_id);
    return -1;
  }
  if (itemsize == 0 || s->ndim > DLPM_MAX_NDIM) {
    PyErr_SetString(PyExc_BufferError, "cannot copy a tensor of packed sub-byte elements through the CUDA driver");
    return -1;
  }
  if (dlpm_layout(s, strides, DLPM_MAX_NDIM, &numel) != DLPM_OK) {
    dlpm_py__raise_as(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT);
    return -1;
  }
  if (enter(stream_device, &saved, &switched) != 0) return -1;
  if (allocate_like(source, target, (size_t)numel * itemsize, &copy) != 0) return leave(saved, switched, -1);
  if (ready != NULL && (r = cu.cuStreamWaitEvent((CUstream)stream, (CUevent)ready, 0)) != 0) {
    failed("cuStreamWaitEvent", r);
    goto done;
  }
  if (copy_strided(s, strides, itemsize, (uintptr_t)copy->dl_tensor.data, target.device_type == kDLCPU,
                   s->device.device_type == kDLCPU, (CUstream)stream) != 0)
    goto done;
  if (synchronize && (r = cu.cuStreamSynchronize((CUstream)stream)) != 0) {
    failed("cuStreamSynchronize", r);
    goto done;
  }
  *out = copy;
  copy = NULL;
  status = 0;
done:
  if (copy != NULL) {
    if (synchronize || cu.cuStreamSynchronize((CUstream)stream) == 0) dlpm_managed_delete(copy);
    /* else: queued copies may still write it: leaked rather than freed under them */
  }
  return leave(saved, switched, status);
}
