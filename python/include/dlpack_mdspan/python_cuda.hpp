// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/python_cuda.hpp: stream-ordered export of CUDA memory through the Python
// component, as the Python array API asks of a CUDA producer: a dlpack_mdspan.Tensor whose
// __dlpack__(stream=s) makes the consumer's stream s wait for the producer's work queued so
// far (an event recorded on the producer's stream, waited on by s), without blocking the
// host.
//
//   PyObject* t = dlpack_mdspan::python::to_python_on_cuda_stream(std::move(tensor), stream);
//
// stream=None is the legacy default stream (the array API's default for CUDA), -1 asks for
// nothing, 0 is refused (ambiguous), 1 and 2 are the legacy and per-thread default streams,
// anything else is a cudaStream_t. A refusal or a CUDA failure raises BufferError with the
// library's message from __dlpack__. The producer's stream must outlive the Tensor.
//
// The Tensor also copies across devices, as the array API's dl_device and copy ask
// (cuda_device_hooks): kDLCUDA or managed memory to the host, ordered after the producer's
// stream; host memory to a CUDA device, on the consumer's stream; device memory to new device
// memory through the host.
//
// Needs the CUDA Toolkit's headers and cudart (<dlpack_mdspan/cuda.hpp>) besides Python's:
// in CMake, link dlpack_mdspan::python, dlpack_mdspan::cuda and CUDA::cudart.
#ifndef DLPACK_MDSPAN_PYTHON_CUDA_HPP
#define DLPACK_MDSPAN_PYTHON_CUDA_HPP

#include <dlpack_mdspan/cuda.hpp>
#include <dlpack_mdspan/python.hpp>

#include <cstdint>
#include <utility>

namespace dlpack_mdspan::python {

namespace detail {

// A Python stream argument as the array API's integer in *value (None: 1, the legacy default
// stream), decoded by the component (dlpm_py_stream_integer: TypeError for anything but an
// int, OverflowError past int64). false with the exception set.
inline bool integer_stream(PyObject* stream, long long* value) noexcept {
  *value = 1;
  return dlpm_py_stream_integer(stream, "CUDA", value) >= 0;
}

// Makes the consumer's stream wait for the producer's (nothing for -1, "no synchronisation").
inline int cuda_wait(cudaStream_t producer, const result<array_api_stream>& consumer) noexcept {
  if (!consumer) return raise_buffer_error(consumer.error());
  if (!consumer->synchronise) return 0;
  const error waited = make_stream_wait(producer, consumer->stream);
  return waited.code() == errc::ok ? 0 : raise_buffer_error(waited);
}

}  // namespace detail

/// The dlpm_py_device_hooks copy of CUDA producers (`ctx`: the producer's cudaStream_t):
/// CUDA memory to the host on the producer's stream (synchronised: complete on return);
/// memory the CPU can read to a kDLCUDA device on the consumer's stream, made to wait for
/// the producer's first; device memory to another device, or a copy=True of it, through
/// the host. A refusal or a CUDA failure is a BufferError with the library's message.
inline int cuda_copy(void* ctx, const DLManagedTensorVersioned* source, DLDevice target, PyObject* stream,
                     DLManagedTensorVersioned** out) noexcept {
  auto* producer = static_cast<cudaStream_t>(ctx);
  const DLTensor& t = source->dl_tensor;
  if (target.device_type != kDLCPU && target.device_type != kDLCUDA)
    return detail::raise_buffer_error(error::format(errc::device_mismatch, "CUDA: cannot copy to device type %d (kDLCPU and kDLCUDA only)",
                                             static_cast<int>(target.device_type)));
  long long value = 1;  // the consumer's stream, for a copy to the device: judged before any work
  if (target.device_type == kDLCUDA && !detail::integer_stream(stream, &value)) return -1;
  result<managed_tensor> copy = unexpected_error(error());
  if (t.device.device_type == kDLCPU) {
    copy = try_copy_to_host(t, source->flags);
  } else if (is_host_accessible(t.device.device_type)) {  // managed or pinned: the host reads it once the producer is done
    const cudaError_t status = cudaStreamSynchronize(producer);
    copy = status == cudaSuccess ? try_copy_to_host(t, source->flags)
                                 : result<managed_tensor>(unexpected_error(dlpack_mdspan::detail::cuda_failed("cudaStreamSynchronize", status)));
  } else {
    copy = try_copy_cuda_to_host(t, source->flags, producer);
  }
  if (copy && target.device_type == kDLCUDA) {
    const result<array_api_stream> consumer = stream_from_array_api(value);
    if (!consumer) return detail::raise_buffer_error(consumer.error());
    cudaStream_t on = consumer->synchronise ? consumer->stream : producer;
    if (const error waited = make_stream_wait(producer, on); waited.code() != errc::ok) return detail::raise_buffer_error(waited);
    copy = try_copy_host_to_cuda(copy->tensor(), copy->flags(), target.device_id, on);
  }
  if (!copy) return detail::raise_buffer_error(copy.error());
  *out = copy->release();
  return 0;
}

/// The dlpm_py_stream_wait_fn of CUDA producers: `producer_stream` is the producer's
/// cudaStream_t. Returns 0, or -1 with BufferError set (the stream value refused, or the
/// CUDA call that failed, named).
inline int cuda_stream_wait(void* producer_stream, DLDevice device, std::int32_t has_stream,
                            std::int64_t consumer_stream) noexcept {
  (void)device;  // the component calls this for CUDA and other stream devices alike
  return detail::cuda_wait(static_cast<cudaStream_t>(producer_stream), stream_from_array_api(has_stream ? consumer_stream : 1));
}

/// The dlpm_py_device_hooks wait of CUDA producers (`ctx`: the producer's cudaStream_t):
/// cuda_stream_wait, with the stream as the object the consumer passed.
inline int cuda_object_stream_wait(void* ctx, DLDevice device, PyObject* stream) noexcept {
  (void)device;
  long long value;
  if (!detail::integer_stream(stream, &value)) return -1;
  return detail::cuda_wait(static_cast<cudaStream_t>(ctx), stream_from_array_api(value));
}

/// The hooks of a Tensor over CUDA memory written on `producer`: cuda_object_stream_wait
/// and cuda_copy. The stream must outlive the Tensor.
[[nodiscard]] inline dlpm_py_device_hooks cuda_device_hooks(cudaStream_t producer) noexcept {
  return dlpm_py_device_hooks{DLPM_PY_DEVICE_HOOKS_VERSION, static_cast<void*>(producer), &cuda_object_stream_wait, &cuda_copy,
                              nullptr};
}

/// A dlpack_mdspan.Tensor owning `tensor`, whose __dlpack__(stream=...) orders the
/// consumer's stream after `producer` and copies across devices (cuda_device_hooks). NULL
/// with a Python exception set on failure (the tensor is deleted then).
[[nodiscard]] inline PyObject* to_python_on_cuda_stream(managed_tensor tensor, cudaStream_t producer) noexcept {
  const dlpm_py_device_hooks hooks = cuda_device_hooks(producer);
  return dlpm_py_tensor_new_on_device(tensor.release(), &hooks);
}

}  // namespace dlpack_mdspan::python

#endif
