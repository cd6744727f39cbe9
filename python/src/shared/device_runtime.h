/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The device runtimes, loaded when a tensor of theirs first needs one (device_runtime.c):
 * no build-time CUDA or HIP dependency. Two runtimes serve it through one code path, each a
 * small table of calls (runtime_table.h):
 *   - the CUDA driver API (cuda_driver.c): dlopen("libcuda.so.1"), or the file named by
 *     DLPM_CUDA_DRIVER; memory kDLCUDA, kDLCUDAManaged, kDLCUDAHost;
 *   - the HIP runtime API (hip_runtime.c): dlopen("libamdhip64.so.7"), "libamdhip64.so.6",
 *     then "libamdhip64.so", or the file named by DLPM_HIP_RUNTIME; memory kDLROCM, kDLROCMHost.
 * Every failure, a missing runtime included, is a BufferError naming the call and the
 * runtime's error name; nothing here crashes. Internal to the component; every function is
 * called with the GIL held unless it says otherwise.
 *
 * What it serves: the stream order of a dlpack_mdspan.Tensor that re-exports a device tensor
 * (an event recorded when the producer's data is ready, which every export makes the
 * consumer's stream wait on) and copies between the CPU and a runtime's memory. A device
 * below is a DLDevice whose device_type names the runtime (any of its memory kinds) and
 * whose device_id the ordinal. */
#ifndef DLPM_PY_DEVICE_RUNTIME_H
#define DLPM_PY_DEVICE_RUNTIME_H

#include "shared/shared.h"

/* Memory whose readiness is ordered by a runtime's streams: an import of it captures an event. */
static inline int dlpm_py__is_stream_memory(int32_t device_type) {
  return device_type == kDLCUDA || device_type == kDLCUDAManaged || device_type == kDLROCM;
}

/* Stream memory the host reads: CUDA managed memory. The test of the device type inline, so
 * that the CPU's memory makes no call. */
static inline int dlpm_py__is_host_stream_memory(int32_t device_type) {
  return dlpm_py__is_stream_memory(device_type) && dlpm_is_host_accessible(device_type);
}

/* Whether an import that captures readiness captures that of memory of `device_type`: stream
 * memory, only what the host reads of it with `host_readable_only` (a borrow for a host
 * function, ready_on_host: a host view refuses the rest, unread). */
static inline int dlpm_py__captures(int32_t device_type, int host_readable_only) {
  return host_readable_only ? dlpm_py__is_host_stream_memory(device_type) : dlpm_py__is_stream_memory(device_type);
}

/* Any memory kind a device runtime allocates: its stream memory and its pinned host memory. */
static inline int dlpm_py__is_runtime_memory(int32_t device_type) {
  return dlpm_py__is_stream_memory(device_type) || device_type == kDLCUDAHost || device_type == kDLROCMHost;
}

/* The runtimes, by index: 0 the CUDA driver, 1 the HIP runtime; -1 for memory of neither. */
#define DLPM_PY_RUNTIMES 2
static inline int dlpm_py__runtime_index(int32_t device_type) {
  if (device_type == kDLCUDA || device_type == kDLCUDAManaged || device_type == kDLCUDAHost) return 0;
  if (device_type == kDLROCM || device_type == kDLROCMHost) return 1;
  return -1;
}

/* Device `device_id` of runtime `index` (named by the runtime's stream memory). */
static inline DLDevice dlpm_py__runtime_device(int index, int32_t device_id) {
  DLDevice d;
  d.device_type = index == 0 ? kDLCUDA : kDLROCM;
  d.device_id = device_id;
  return d;
}

/* Whether a runtime copies between `source` and `target`: the CPU and one runtime's memory
 * (either way, or within that runtime's memory), not the CPU alone. The CPU it copies to is
 * device 0, the only one there is. */
static inline int dlpm_py__runtime_copies(DLDevice source, DLDevice target) {
  const int s = dlpm_py__runtime_index(source.device_type), t = dlpm_py__runtime_index(target.device_type);
  if (target.device_type == kDLCPU && target.device_id != 0) return 0;
  if (s < 0 && source.device_type != kDLCPU) return 0;
  if (t < 0 && target.device_type != kDLCPU) return 0;
  return (s >= 0 || t >= 0) && (s < 0 || t < 0 || s == t);
}

/* The device whose stream queues a copy from `source` to `target` (dlpm_py__runtime_copies
 * holds): the target's when it is stream memory, else the source's when a runtime's, else the
 * target's (CPU memory to pinned memory). */
static inline DLDevice dlpm_py__copy_device(DLDevice source, DLDevice target) {
  if (dlpm_py__is_stream_memory(target.device_type)) return target;
  return dlpm_py__is_runtime_memory(source.device_type) ? source : target;
}

/* The array API's stream values for the stream memory of `device_type`, as the runtime's
 * handles (the core's rules: dlpm_cuda_array_api_stream, dlpm_rocm_array_api_stream). CUDA:
 * None and 1 the legacy default stream, 2 the per-thread default stream; ROCm: None and 0
 * the default stream, 1 and 2 refused; both: -1 no synchronisation, other values stream
 * handles. A refused value is dlpack_mdspan.InvalidStreamError, a RuntimeError and an
 * AssertionError (PyTorch asserts), "unsupported stream on CUDA: 0"; a non-integer is a
 * TypeError. 0 on success, *wait 0 for -1 (then *out is NULL). */
int dlpm_py__stream_from_object(int32_t device_type, PyObject* stream, void** out, int* wait);

/* The same decoding for an integer the caller already holds, raising nothing: 1 with *out
 * the stream to wait on, 0 for -1 (no synchronisation), -1 for a value the array API refuses
 * or a device_type of no runtime. */
int dlpm_py__stream_from_value(int32_t device_type, int64_t value, void** out);

/* The exception type for a stream value the array API refuses (a new reference), or NULL. */
PyObject* dlpm_py__invalid_stream_error(void);

/* The stream the library owns on `device` (created on first use, never destroyed): what an
 * import passes as __dlpack__(stream=...) so that the producer orders it, and what the
 * Tensor's exchange table answers for current_work_stream. 0, or -1 with BufferError set. */
int dlpm_py__library_stream(DLDevice device, void** out);

/* An event (from the pool) recorded on `stream` of `device`: an import's readiness, which the
 * library's stream is made to wait on only when the Tensor is first exported through its
 * exchange table (tensor.c, order_work_stream), the one path whose consumer launches on that
 * stream. *event is the caller's, for dlpm_py__event_release. 0, or -1 with BufferError set
 * (no event then). */
int dlpm_py__record(DLDevice device, void* stream, void** event);

/* dlpm_py__record, and the library's stream of that device made to wait on the event (a
 * copy queued on another stream, which the library's stream then orders after; or the
 * library's stream itself, for the host to wait on). 0, or -1 with BufferError set. */
int dlpm_py__capture(DLDevice device, void* stream, void** event);

/* *out: whether the host may read `device`'s memory while kernels run (CUDA managed memory:
 * the device's concurrent managed access, asked once per device; pinned host memory: 1, no
 * call). 0, or -1 with BufferError set. */
int dlpm_py__host_reads_while_kernels_run(DLDevice device, int* out);

/* Makes `stream` of `device` wait on `event` (no host blocking). 0 or -1. */
int dlpm_py__wait(DLDevice device, void* stream, void* event);

/* Blocks the host until `event` completes (a Tensor whose memory a queued copy still reads,
 * before that memory is let go). 0 or -1. */
int dlpm_py__event_synchronize(DLDevice device, void* event);

/* Returns an event to the pool (NULL: nothing). Never raises; a failure is dropped. */
void dlpm_py__event_release(DLDevice device, void* event);

/* A compact row-major copy of `source` on `target` (kDLCPU or the memory of the runtime of
 * `stream_device`), flagged IS_COPIED, in memory of the right allocator, which its deleter
 * frees once. The copy is queued on `stream` (a runtime handle) of `stream_device` after
 * `stream` is made to wait on `ready` (NULL: nothing to wait for); strided sources are read as
 * they are (one 2-D copy per outer index where the strides allow, else one copy per
 * contiguous run). With `synchronize` (a host target, always) the call returns when the
 * bytes have landed. 0, or -1 with an exception set (*out untouched). */
int dlpm_py__device_copy(const DLManagedTensorVersioned* source, DLDevice target, DLDevice stream_device, void* stream,
                         void* ready, int synchronize, DLManagedTensorVersioned** out);

/* Lets go of `copy` (made by dlpm_py__device_copy), whose copies were queued on `stream` of
 * `device`, after the call failed: freed once the stream is known to have run them, else
 * leaked rather than freed under them. Keeps the exception in flight. */
void dlpm_py__copy_release(DLDevice device, void* stream, DLManagedTensorVersioned* copy);

#endif
