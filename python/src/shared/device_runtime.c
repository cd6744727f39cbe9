/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The device runtimes' one code path (see device_runtime.h): loading, the event pool, the
 * capture of readiness, waits, copies and error reporting, written once over the table each
 * runtime supplies (runtime_table.h: cuda_driver.c, hip_runtime.c). */
#include "shared/runtime_table.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* glibc 2.34 moved dlopen, dlsym, dlclose and dlerror from libdl into libc under a new
 * symbol version, GLIBC_2.34, and a reference to that version makes every binary holding
 * this file need glibc 2.34 (the wheel: manylinux_2_34, where it promises manylinux_2_17).
 * Bound instead to the version each has had since the architecture's first glibc, which
 * glibc 2.34 and later keep in libc as the same functions, and older ones define in libdl
 * (the wheel's extension names libdl.so.2: python/package/CMakeLists.txt); scripts/check-wheel
 * checks the policy the wheel meets. */
#if defined(__GLIBC__) && defined(__x86_64__)
#define DLPM_GLIBC_FIRST "GLIBC_2.2.5"
#elif defined(__GLIBC__) && defined(__aarch64__)
#define DLPM_GLIBC_FIRST "GLIBC_2.17"
#endif
#ifdef DLPM_GLIBC_FIRST
__asm__(".symver dlopen,dlopen@" DLPM_GLIBC_FIRST);
__asm__(".symver dlsym,dlsym@" DLPM_GLIBC_FIRST);
__asm__(".symver dlclose,dlclose@" DLPM_GLIBC_FIRST);
__asm__(".symver dlerror,dlerror@" DLPM_GLIBC_FIRST);
#endif

#define DLPM_RUNTIME_MAX_DEVICES 64
#define DLPM_RUNTIME_EVENT_POOL 64

/* What the process holds of each runtime. */
typedef struct {
  int loaded;           /* the symbols are loaded and the runtime's init succeeded */
  PyObject* load_error; /* the BufferError message of a failed load, repeated on every later need */
  char path[512];       /* the file that was loaded (or tried) */
  struct {
    void* library; /* the library's stream, created on first use */
    void* pool[DLPM_RUNTIME_EVENT_POOL];
    int pooled;
    int host_reads; /* managed memory read by the host while kernels run: 0 not asked, 1 yes, 2 no */
  } devices[DLPM_RUNTIME_MAX_DEVICES];
} runtime_state;

static runtime_state states[DLPM_PY_RUNTIMES];

static const dlpm_py__runtime* runtime_of(int32_t device_type, runtime_state** state) {
  static const dlpm_py__runtime* const tables[DLPM_PY_RUNTIMES] = {&dlpm_py__cuda_driver, &dlpm_py__hip_runtime};
  const int i = dlpm_py__runtime_index(device_type);
  if (i < 0) return NULL;
  if (state != NULL) *state = &states[i];
  return tables[i];
}

/* "<call> failed: <error name> (<code>), in <runtime> <path>" (a new reference, or NULL with
 * MemoryError set); the error's name is asked of the runtime when `named`. */
static PyObject* failure_text(const dlpm_py__runtime* rt, const runtime_state* st, const char* call, int r, int named) {
  const char* name = named && rt->error_name != NULL ? rt->error_name(r) : NULL;
  if (name == NULL)
    return PyUnicode_FromFormat("%s failed: an unknown %s error (%d), in %s %s", call, rt->vendor, r, rt->name, st->path);
  return PyUnicode_FromFormat("%s failed: %s (%d), in %s %s", call, name, r, rt->name, st->path);
}

/* BufferError with failure_text. Returns -1. */
static int failed(const dlpm_py__runtime* rt, const runtime_state* st, const char* call, int r) {
  PyObject* text = failure_text(rt, st, call, r, st->loaded);
  if (text != NULL) {
    PyErr_SetObject(PyExc_BufferError, text);
    Py_DECREF(text);
  }
  return -1;
}

/* One call of the table, reported by its name on failure (returns -1 from the caller). */
#define RT_CALL(rt, st, op, args)                                                                                    \
  do {                                                                                                               \
    const int r_ = (rt)->op.call args;                                                                               \
    if (r_ != 0) return failed((rt), (st), (rt)->op.name, r_);                                                       \
  } while (0)

/* Loads a library's symbols into its table: NULL, or the first symbol it lacks. */
static const char* load_symbols(const dlpm_py__runtime* rt, void* lib) {
  for (size_t i = 0; i < rt->nsymbols; ++i)
    if ((*rt->symbols[i].slot = dlsym(lib, rt->symbols[i].symbol)) == NULL) return rt->symbols[i].symbol;
  return NULL;
}

static void clear_symbols(const dlpm_py__runtime* rt) {
  for (size_t i = 0; i < rt->nsymbols; ++i) *rt->symbols[i].slot = NULL;
}

/* The file to open: the environment variable's, else each default name in turn. NULL, or
 * the library with st->path naming it; on failure st->load_error says every attempt. */
static void* open_library(const dlpm_py__runtime* rt, runtime_state* st) {
  const char* named = getenv(rt->environment);
  const char* only[2] = {named, NULL};
  const char* const* paths = named != NULL && named[0] != '\0' ? only : rt->libraries;
  char why[1024];
  size_t used = 0;
  why[0] = '\0';
  for (size_t i = 0; paths[i] != NULL; ++i) {
    void* lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
    const char* reason;
    snprintf(st->path, sizeof st->path, "%s", paths[i]);
    if (lib != NULL) return lib;
    reason = dlerror();
    if (used < sizeof why) {
      const int n = snprintf(why + used, sizeof why - used, "%sdlopen(\"%s\") failed: %s", i ? "; " : "", paths[i],
                             reason ? reason : "no reason given");
      if (n > 0) used += (size_t)n;
    }
  }
  st->load_error = PyUnicode_FromFormat("this %s tensor needs %s, and %s", rt->memory, rt->name, why);
  return NULL;
}

/* The runtime of `device_type`, loaded on first use; NULL with BufferError set. */
static const dlpm_py__runtime* need_runtime(int32_t device_type, runtime_state** state) {
  runtime_state* st;
  const dlpm_py__runtime* rt = runtime_of(device_type, &st);
  void* lib;
  const char* missing;
  int r;
  if (rt == NULL) {
    PyErr_Format(PyExc_BufferError, "no device runtime serves device type %d", (int)device_type);
    return NULL;
  }
  *state = st;
  if (st->loaded) return rt;
  if (st->load_error != NULL) {
    PyErr_SetObject(PyExc_BufferError, st->load_error);
    return NULL;
  }
  if ((lib = open_library(rt, st)) == NULL) goto fail;
  if ((missing = load_symbols(rt, lib)) != NULL) {
    st->load_error = PyUnicode_FromFormat("%s %s has no %s", rt->name, st->path, missing);
    goto fail_close;
  }
  if ((r = rt->init.call()) != 0) {
    st->load_error = failure_text(rt, st, rt->init.name, r, 1);
    goto fail_close;
  }
  st->loaded = 1; /* the library stays loaded for the process */
  return rt;
fail_close:
  clear_symbols(rt);
  dlclose(lib);
fail:
  if (st->load_error == NULL) return NULL; /* MemoryError set */
  PyErr_SetObject(PyExc_BufferError, st->load_error);
  return NULL;
}

/* The runtime of `device`, its device made current (what was current kept in *saved). NULL,
 * with BufferError set, on failure. */
static const dlpm_py__runtime* enter(DLDevice device, runtime_state** state, void** saved, int* switched) {
  const dlpm_py__runtime* rt;
  const char* call = NULL;
  int r;
  *switched = 0;
  if ((rt = need_runtime(device.device_type, state)) == NULL) return NULL;
  if (device.device_id < 0 || device.device_id >= DLPM_RUNTIME_MAX_DEVICES) {
    PyErr_Format(PyExc_BufferError, "%s device %d is out of the range this library handles (0 to %d)", rt->memory,
                 (int)device.device_id, DLPM_RUNTIME_MAX_DEVICES - 1);
    return NULL;
  }
  if ((r = rt->enter(device.device_id, saved, switched, &call)) != 0) {
    failed(rt, *state, call, r);
    return NULL;
  }
  return rt;
}

/* Restores what enter() replaced; keeps an exception already set. */
static int leave(const dlpm_py__runtime* rt, void* saved, int switched, int status) {
  if (switched) rt->leave(saved);
  return status;
}

/* ---- streams --------------------------------------------------------------------------- */

PyObject* dlpm_py__invalid_stream_error(void) {
  static PyObject* type;
  return dlpm_py__two_base_error(&type, "dlpack_mdspan.InvalidStreamError",
                                 "A __dlpack__(stream=...) value the Python array API refuses for the tensor's "
                                 "device (a RuntimeError, as NumPy raises, and an AssertionError, as PyTorch does).",
                                 PyExc_RuntimeError, PyExc_AssertionError);
}

PyObject* dlpm_py_invalid_stream_error(void) DLPM_NOEXCEPT { return dlpm_py__invalid_stream_error(); }

int dlpm_py__stream_from_value(int32_t device_type, int64_t value, void** out) {
  const dlpm_py__runtime* rt = runtime_of(device_type, NULL);
  *out = NULL;
  return rt == NULL ? -1 : rt->decode_stream(value, out); /* the core's rule, once */
}

int dlpm_py__stream_from_object(int32_t device_type, PyObject* stream, void** out, int* wait) {
  const dlpm_py__runtime* rt = runtime_of(device_type, NULL);
  long long value;
  PyObject* kind;
  *out = NULL;
  *wait = 1;
  if (rt == NULL) {
    PyErr_Format(PyExc_BufferError, "no device runtime serves device type %d", (int)device_type);
    return -1;
  }
  switch (dlpm_py_stream_integer(stream, rt->memory, &value)) {
    case 1: *out = rt->none_stream; return 0;
    case 0: break;
    default: return -1;
  }
  switch (rt->decode_stream(value, out)) {
    case 1: return 0;
    case 0: *wait = 0; return 0;
    default: break;
  }
  if ((kind = dlpm_py__invalid_stream_error()) == NULL) return -1;
  PyErr_Format(kind, "__dlpack__: %s", dlpm_last_error()); /* the facade's wording of the refusal */
  Py_DECREF(kind);
  return -1;
}

static int library_stream(const dlpm_py__runtime* rt, runtime_state* st, int32_t device_id, void** out) {
  if (st->devices[device_id].library == NULL) RT_CALL(rt, st, stream_create, (&st->devices[device_id].library));
  *out = st->devices[device_id].library;
  return 0;
}

int dlpm_py__library_stream(DLDevice device, void** out) {
  runtime_state* st;
  void* saved = NULL;
  int switched;
  const dlpm_py__runtime* rt = enter(device, &st, &saved, &switched);
  if (rt == NULL) return -1;
  return leave(rt, saved, switched, library_stream(rt, st, device.device_id, out));
}

static int pooled_event(const dlpm_py__runtime* rt, runtime_state* st, int32_t device_id, void** out) {
  if (st->devices[device_id].pooled > 0) {
    *out = st->devices[device_id].pool[--st->devices[device_id].pooled];
    return 0;
  }
  RT_CALL(rt, st, event_create, (out));
  return 0;
}

static void unpool(const dlpm_py__runtime* rt, runtime_state* st, int32_t device_id, void* event) {
  if (st->devices[device_id].pooled < DLPM_RUNTIME_EVENT_POOL)
    st->devices[device_id].pool[st->devices[device_id].pooled++] = event;
  else
    (void)rt->event_destroy.call(event);
}

static int record(const dlpm_py__runtime* rt, runtime_state* st, int32_t device_id, void* stream, void** out) {
  void* event;
  int r;
  if (pooled_event(rt, st, device_id, &event) != 0) return -1;
  if ((r = rt->event_record.call(event, stream)) != 0) {
    unpool(rt, st, device_id, event);
    return failed(rt, st, rt->event_record.name, r);
  }
  *out = event;
  return 0;
}

int dlpm_py__record(DLDevice device, void* stream, void** event) {
  runtime_state* st;
  void* saved = NULL;
  int switched;
  const dlpm_py__runtime* rt = enter(device, &st, &saved, &switched);
  if (rt == NULL) return -1;
  return leave(rt, saved, switched, record(rt, st, device.device_id, stream, event));
}

static int capture(const dlpm_py__runtime* rt, runtime_state* st, int32_t device_id, void* stream, void** out) {
  void *library, *event;
  int r;
  if (library_stream(rt, st, device_id, &library) != 0 || record(rt, st, device_id, stream, &event) != 0) return -1;
  if (stream != library && (r = rt->stream_wait_event.call(library, event)) != 0) {
    unpool(rt, st, device_id, event);
    return failed(rt, st, rt->stream_wait_event.name, r);
  }
  *out = event;
  return 0;
}

int dlpm_py__capture(DLDevice device, void* stream, void** event) {
  runtime_state* st;
  void* saved = NULL;
  int switched;
  const dlpm_py__runtime* rt = enter(device, &st, &saved, &switched);
  if (rt == NULL) return -1;
  return leave(rt, saved, switched, capture(rt, st, device.device_id, stream, event));
}

int dlpm_py__host_reads_while_kernels_run(DLDevice device, int* out) {
  runtime_state* st;
  void* saved = NULL;
  const char* call = NULL;
  int switched, r = 0, reads = 1;
  const dlpm_py__runtime* rt;
  *out = 1;
  /* the CPU's or pinned host memory (no streams), or a runtime with no managed memory: no call */
  if (!dlpm_py__device_has_streams(device.device_type) || (rt = runtime_of(device.device_type, NULL)) == NULL ||
      rt->host_reads_while_kernels_run == NULL)
    return 0;
  if ((rt = enter(device, &st, &saved, &switched)) == NULL) return -1;
  if (st->devices[device.device_id].host_reads == 0) {
    if ((r = rt->host_reads_while_kernels_run(device.device_id, &reads, &call)) == 0)
      st->devices[device.device_id].host_reads = reads ? 1 : 2;
  }
  *out = st->devices[device.device_id].host_reads == 1;
  return leave(rt, saved, switched, r == 0 ? 0 : failed(rt, st, call, r));
}

int dlpm_py__wait(DLDevice device, void* stream, void* event) {
  runtime_state* st;
  void* saved = NULL;
  int switched, r;
  const dlpm_py__runtime* rt = enter(device, &st, &saved, &switched);
  if (rt == NULL) return -1;
  r = rt->stream_wait_event.call(stream, event);
  return leave(rt, saved, switched, r == 0 ? 0 : failed(rt, st, rt->stream_wait_event.name, r));
}

/* The host's waits for device work (a runtime's stream_synchronize or event_synchronize on
 * `handle`), the GIL released meanwhile (as PyTorch and CuPy release it): work queued before
 * them may call back into Python (a host function CuPy queued on the producer's stream) and
 * would never run while this thread held it; other threads run on. Nothing of the runtime's
 * state is touched while it is released. */
static int host_wait(int (*synchronize)(void*), void* handle) {
  int r;
  Py_BEGIN_ALLOW_THREADS
  r = synchronize(handle);
  Py_END_ALLOW_THREADS
  return r;
}

/* Lets go of `copy`, into which copies may have been queued on `stream` (`queued`): freed
 * once the stream is known to have run them, else leaked rather than freed under them (a
 * failed synchronisation included). The one rule of a failed copy's memory. */
static void release_copy(const dlpm_py__runtime* rt, void* stream, DLManagedTensorVersioned* copy, int queued) {
  if (!queued || host_wait(rt->stream_synchronize.call, stream) == 0) dlpm_managed_delete(copy);
}

int dlpm_py__event_synchronize(DLDevice device, void* event) {
  runtime_state* st;
  void* saved = NULL;
  int switched, r;
  const dlpm_py__runtime* rt = enter(device, &st, &saved, &switched);
  if (rt == NULL) return -1;
  r = host_wait(rt->event_synchronize.call, event);
  return leave(rt, saved, switched, r == 0 ? 0 : failed(rt, st, rt->event_synchronize.name, r));
}

void dlpm_py__event_release(DLDevice device, void* event) {
  runtime_state* st;
  const dlpm_py__runtime* rt = runtime_of(device.device_type, &st);
  if (event == NULL || rt == NULL || !st->loaded || device.device_id < 0 || device.device_id >= DLPM_RUNTIME_MAX_DEVICES)
    return;
  unpool(rt, st, device.device_id, event);
}

/* ---- copies ---------------------------------------------------------------------------- */

/* What a copy's deleter frees, and with which allocator. */
typedef struct {
  const dlpm_py__runtime* rt;
  int32_t device_type;
  int32_t device_id; /* the device it was allocated on (the queueing device) */
  void* memory;
} device_allocation;

/* May run on any thread, without the GIL: the runtime alone, no Python. */
static void free_allocation(void* ctx) {
  device_allocation* a = (device_allocation*)ctx;
  void* saved = NULL;
  int switched = 0;
  const char* call = NULL;
  const int entered = a->rt->enter(a->device_id, &saved, &switched, &call) == 0;
  (void)a->rt->release(a->device_type, a->memory);
  if (entered && switched) a->rt->leave(saved);
  free(a);
}

/* New memory of `bytes` on `target`, owned by a new tensor shaped like `source` (compact
 * row-major, IS_COPIED), allocated on `device_id` (current). 0, or -1 with an exception set. */
static int allocate_like(const dlpm_py__runtime* rt, const runtime_state* st, int32_t device_id,
                         const DLManagedTensorVersioned* source, DLDevice target, size_t bytes,
                         DLManagedTensorVersioned** out) {
  const DLTensor* s = &source->dl_tensor;
  const uint64_t flags =
      DLPACK_FLAG_BITMASK_IS_COPIED | (source->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
  device_allocation* a;
  const char* call = NULL;
  dlpm_status status;
  int r;
  if (target.device_type == kDLCPU) {
    if ((status = dlpm_managed_alloc_host(s->ndim, s->shape, s->dtype, flags, out)) != DLPM_OK) {
      dlpm_py__raise_as(status == DLPM_E_OUT_OF_MEMORY ? PyExc_MemoryError : PyExc_BufferError, status);
      return -1;
    }
    return 0;
  }
  if ((a = (device_allocation*)malloc(sizeof *a)) == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  a->rt = rt;
  a->device_type = target.device_type;
  a->device_id = device_id;
  a->memory = NULL;
  if (bytes == 0) bytes = 1; /* the runtimes refuse empty allocations */
  if ((r = rt->allocate(target.device_type, bytes, &a->memory, &call)) != 0) {
    free(a);
    return failed(rt, st, call, r);
  }
  status = dlpm_managed_new_ordered(a->memory, s->ndim, s->shape, NULL, 'C', s->dtype, target, 0, flags,
                                    free_allocation, a, out);
  if (status != DLPM_OK) {
    free_allocation(a);
    dlpm_py__raise_as(status == DLPM_E_OUT_OF_MEMORY ? PyExc_MemoryError : PyExc_BufferError, status);
    return -1;
  }
  return 0;
}

/* One 2-D copy (height rows of width bytes; height 1 is a plain copy). */
static int copy_rows(const dlpm_py__runtime* rt, const runtime_state* st, uintptr_t dst, size_t dst_pitch,
                     int dst_host, uintptr_t src, size_t src_pitch, int src_host, size_t width, size_t height,
                     void* stream) {
  if (height == 1) RT_CALL(rt, st, memcpy, ((void*)dst, (const void*)src, width, stream));
  else
    RT_CALL(rt, st, memcpy_2d,
            ((void*)dst, dst_pitch, dst_host, (const void*)src, src_pitch, src_host, width, height, stream));
  return 0;
}

/* The source's elements, in row-major order, into the compact `dst`: the innermost modes
 * that are compact in the source make one contiguous run; the next mode, when its stride
 * is a positive pitch of at least a run, makes the rows of a 2-D copy; the outer modes are
 * walked one index at a time. */
static int copy_strided(const dlpm_py__runtime* rt, const runtime_state* st, const DLTensor* s,
                        const int64_t* strides, size_t itemsize, uintptr_t dst, int dst_host, int src_host,
                        void* stream) {
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
    if (copy_rows(rt, st, dst + c * width * height, width, dst_host,
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

int dlpm_py__device_copy(const DLManagedTensorVersioned* source, DLDevice target, DLDevice stream_device, void* stream,
                         void* ready, int synchronize, DLManagedTensorVersioned** out) {
  const DLTensor* s = &source->dl_tensor;
  const int padded = (source->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
  const size_t itemsize = dlpm_storage_itemsize(s->dtype, padded);
  const dlpm_py__runtime* rt = runtime_of(stream_device.device_type, NULL);
  int64_t strides[DLPM_MAX_NDIM], numel = 1;
  DLManagedTensorVersioned* copy = NULL;
  runtime_state* st;
  void* saved = NULL;
  int switched, status = -1, queued = 0, r;
  if (rt == NULL || !dlpm_py__runtime_copies(s->device, target) ||
      (target.device_type != kDLCPU && runtime_of(target.device_type, NULL) != rt)) {
    PyErr_Format(PyExc_BufferError, "cannot copy a tensor to device (%d, %d): %s copies only between kDLCPU and %s",
                 (int)target.device_type, (int)target.device_id, rt ? rt->name : "no device runtime",
                 rt ? rt->memory_kinds : "a runtime's memory");
    return -1;
  }
  if (itemsize == 0 || s->ndim > DLPM_MAX_NDIM) {
    PyErr_Format(PyExc_BufferError, "cannot copy a tensor of packed sub-byte elements through %s", rt->name);
    return -1;
  }
  if (dlpm_layout(s, strides, DLPM_MAX_NDIM, &numel) != DLPM_OK) {
    dlpm_py__raise_as(PyExc_BufferError, DLPM_E_INVALID_ARGUMENT);
    return -1;
  }
  if ((rt = enter(stream_device, &st, &saved, &switched)) == NULL) return -1;
  if (allocate_like(rt, st, stream_device.device_id, source, target, (size_t)numel * itemsize, &copy) != 0)
    return leave(rt, saved, switched, -1);
  if (ready != NULL && (r = rt->stream_wait_event.call(stream, ready)) != 0) {
    failed(rt, st, rt->stream_wait_event.name, r);
    goto done;
  }
  queued = 1; /* from here on, copies into `copy` may be queued */
  if (copy_strided(rt, st, s, strides, itemsize, (uintptr_t)copy->dl_tensor.data, target.device_type == kDLCPU,
                   s->device.device_type == kDLCPU, stream) != 0)
    goto done;
  if (synchronize && (r = host_wait(rt->stream_synchronize.call, stream)) != 0) {
    failed(rt, st, rt->stream_synchronize.name, r);
    goto done;
  }
  *out = copy;
  copy = NULL;
  status = 0;
done:
  if (copy != NULL) release_copy(rt, stream, copy, queued);
  return leave(rt, saved, switched, status);
}

void dlpm_py__copy_release(DLDevice device, void* stream, DLManagedTensorVersioned* copy) {
  runtime_state* st;
  void* saved = NULL;
  int switched;
  const dlpm_py__runtime* rt;
  const dlpm_py_set_aside kept = dlpm_py__exception_set_aside();
  if ((rt = enter(device, &st, &saved, &switched)) != NULL) {
    release_copy(rt, stream, copy, 1);
    (void)leave(rt, saved, switched, 0);
  } /* else leaked: nothing can say the copies ran */
  dlpm_py__exception_put_back(kept);
}
