/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* What one device runtime supplies to device_runtime.c, the one code path of both (see
 * device_runtime.h): where to find it, the symbols to load, and its calls, each under the
 * name an error reports. Every call returns the runtime's own status (0 is success in both
 * the CUDA driver and HIP). Private to device_runtime.c, cuda_driver.c and hip_runtime.c. */
#ifndef DLPM_PY_RUNTIME_TABLE_H
#define DLPM_PY_RUNTIME_TABLE_H

#include "shared/device_runtime.h"

#include <stddef.h>

/* A symbol to load with dlsym into `slot` (a function pointer of the runtime file's table). */
typedef struct dlpm_py__runtime_symbol {
  const char* symbol;
  void** slot;
} dlpm_py__runtime_symbol;

/* The calls every runtime makes the same way: stream_create makes a non-blocking stream,
 * event_create an event without timing, memcpy_2d copies `height` rows of `width` bytes
 * (dst_host/src_host: whether that side is host memory, for runtimes that ask). */
#define DLPM_PY_RUNTIME_CALLS(X)                                                                                     \
  X(init, (void))                                                                                                    \
  X(stream_create, (void** stream))                                                                                  \
  X(stream_wait_event, (void* stream, void* event))                                                                  \
  X(stream_synchronize, (void* stream))                                                                              \
  X(event_create, (void** event))                                                                                    \
  X(event_record, (void* event, void* stream))                                                                       \
  X(event_synchronize, (void* event))                                                                                \
  X(event_destroy, (void* event))                                                                                    \
  X(memcpy, (void* dst, const void* src, size_t bytes, void* stream))                                                \
  X(memcpy_2d, (void* dst, size_t dst_pitch, int dst_host, const void* src, size_t src_pitch, int src_host,         \
                size_t width, size_t height, void* stream))

#define DLPM_PY_RUNTIME_CALL_FIELD(op, params)                                                                       \
  struct {                                                                                                           \
    const char* name; /* the runtime's call, as an error names it */                                               \
    int(*call) params;                                                                                               \
  } op;

typedef struct dlpm_py__runtime {
  const char* name;          /* "the CUDA driver", "the HIP runtime" */
  const char* memory;        /* the tensors it serves, in messages: "CUDA", "ROCm" */
  const char* vendor;        /* its errors, in messages: "CUDA", "HIP" */
  const char* memory_kinds;  /* "kDLCUDA, kDLCUDAManaged and kDLCUDAHost" */
  const char* environment;   /* the variable naming another file (a stub) */
  const char* libraries[4];  /* tried in order when the variable is unset; NULL-terminated */
  const dlpm_py__runtime_symbol* symbols;
  size_t nsymbols;
  /* The stream a consumer's None means, and the core's decoding of an integer value
   * (dlpm_py__stream_from_value's contract). */
  void* none_stream;
  int (*decode_stream)(int64_t value, void** out);
  /* The name of an error status, or NULL. */
  const char* (*error_name)(int status);
  /* Makes `device_id` current (CUDA: its primary context; HIP: the device), keeping what was
   * current in *saved; on failure *call names the call. leave() restores *saved. Both may run
   * on any thread without the GIL (a copy's deleter). */
  int (*enter)(int32_t device_id, void** saved, int* switched, const char** call);
  void (*leave)(void* saved);
  /* New memory of `bytes` (> 0) for a copy on `device_type` (*call names the allocator), and
   * its free (any thread, no GIL). */
  int (*allocate)(int32_t device_type, size_t bytes, void** out, const char** call);
  int (*release)(int32_t device_type, void* memory);
  /* *out: whether the host may read the runtime's managed memory of `device_id` (current)
   * while kernels run (CUDA: the device's concurrent managed access, which Jetson and
   * pre-Pascal GPUs lack); *call names a failed call. NULL: the runtime serves no managed
   * memory (HIP here: its host-readable memory is pinned). */
  int (*host_reads_while_kernels_run)(int32_t device_id, int* out, const char** call);
  DLPM_PY_RUNTIME_CALLS(DLPM_PY_RUNTIME_CALL_FIELD)
} dlpm_py__runtime;

extern const dlpm_py__runtime dlpm_py__cuda_driver; /* cuda_driver.c */
extern const dlpm_py__runtime dlpm_py__hip_runtime; /* hip_runtime.c */

#endif
