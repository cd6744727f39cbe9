/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* The CUDA driver API, loaded when a CUDA tensor first needs it (cuda_driver.c): no
 * build-time CUDA dependency. dlopen("libcuda.so.1"), or the file named by the environment
 * variable DLPM_CUDA_DRIVER (the tests' stub driver), fills one table of function pointers.
 * Every failure, a missing driver included, is a BufferError naming the call and the
 * driver's error name; nothing here crashes. Internal to the component; every function is
 * called with the GIL held unless it says otherwise.
 *
 * What it serves: the stream order of a dlpack_mdspan.Tensor that re-exports a CUDA tensor
 * (an event recorded when the producer's data is ready, which every export makes the
 * consumer's stream wait on) and copies between kDLCUDA, kDLCUDAManaged, kDLCUDAHost and
 * kDLCPU. */
#ifndef DLPM_PY_CUDA_DRIVER_H
#define DLPM_PY_CUDA_DRIVER_H

#include "shared/shared.h"

/* Memory whose readiness is ordered by CUDA streams: an import of it captures an event. */
static inline int dlpm_py__is_cuda_stream_memory(int32_t device_type) {
  return device_type == kDLCUDA || device_type == kDLCUDAManaged;
}

/* Any memory kind the CUDA driver allocates. */
static inline int dlpm_py__is_cuda_memory(int32_t device_type) {
  return dlpm_py__is_cuda_stream_memory(device_type) || device_type == kDLCUDAHost;
}

/* The array API's stream values for CUDA, as the driver's handles: None and 1 are the legacy
 * default stream, 2 the per-thread default stream, -1 no synchronisation, any other positive
 * integer a stream handle. 0 (ambiguous: 1 or 2?) and other negative values are refused with
 * dlpack_mdspan.InvalidStreamError, a RuntimeError and an AssertionError (PyTorch asserts),
 * "unsupported stream on CUDA: 0"; a non-integer is a TypeError. 0 on success, *wait 0 for
 * -1 (then *out is NULL). */
int dlpm_py__cuda_stream_from_object(PyObject* stream, void** out, int* wait);

/* The same decoding for an integer the caller already holds, raising nothing: 1 with *out
 * the stream to wait on, 0 for -1 (no synchronisation), -1 for a value the array API refuses. */
int dlpm_py__cuda_stream_from_value(int64_t value, void** out);

/* The exception type for a stream value the array API refuses (a new reference), or NULL. */
PyObject* dlpm_py__invalid_stream_error(void);

/* The stream the library owns on CUDA device `device_id` (created with the device's primary
 * context on first use, never destroyed): what an import passes as __dlpack__(stream=...)
 * so that the producer orders it, and what the Tensor's exchange table answers for
 * current_work_stream. 0, or -1 with BufferError set. */
int dlpm_py__cuda_library_stream(int32_t device_id, void** out);

/* An event (from the pool) recorded on `stream` of device `device_id`, and the library's
 * stream of that device made to wait on it (so that current_work_stream answers a stream
 * ordered after every import). *event is the caller's, for dlpm_py__cuda_event_release.
 * 0, or -1 with BufferError set (no event then). */
int dlpm_py__cuda_capture(int32_t device_id, void* stream, void** event);

/* Makes `stream` of device `device_id` wait on `event` (no host blocking). 0 or -1. */
int dlpm_py__cuda_wait(int32_t device_id, void* stream, void* event);

/* Blocks the host until `event` completes (a Tensor whose memory a queued copy still reads,
 * before that memory is let go). 0 or -1. */
int dlpm_py__cuda_event_synchronize(int32_t device_id, void* event);

/* Returns an event to the pool (NULL: nothing). Never raises; a failure is dropped. */
void dlpm_py__cuda_event_release(int32_t device_id, void* event);

/* A compact row-major copy of `source` on `target` (kDLCPU, kDLCUDA, kDLCUDAManaged,
 * kDLCUDAHost), flagged IS_COPIED, in memory of the right allocator, which its deleter frees
 * once. The copy is queued on `stream` (a driver handle: NULL or 1 the legacy default
 * stream) after `stream` is made to wait on `ready` (NULL: nothing to wait for); strided
 * sources are read as they are (one 2-D copy per outer index where the strides allow, else
 * one copy per contiguous run). With `synchronize` (a host target, always) the call returns
 * when the bytes have landed. `stream_device` is the device whose context queues the copy.
 * 0, or -1 with an exception set (*out untouched). */
int dlpm_py__cuda_copy(const DLManagedTensorVersioned* source, DLDevice target, int32_t stream_device, void* stream,
                       void* ready, int synchronize, DLManagedTensorVersioned** out);

#endif
