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
// Needs the CUDA Toolkit's headers and cudart (<dlpack_mdspan/cuda.hpp>) besides Python's:
// in CMake, link dlpack_mdspan::python, dlpack_mdspan::cuda and CUDA::cudart.
#ifndef DLPACK_MDSPAN_PYTHON_CUDA_HPP
#define DLPACK_MDSPAN_PYTHON_CUDA_HPP

#include <dlpack_mdspan/cuda.hpp>
#include <dlpack_mdspan/python.hpp>

#include <cstdint>
#include <utility>

namespace dlpack_mdspan::python {

/// The dlpm_py_stream_wait_fn of CUDA producers: `producer_stream` is the producer's
/// cudaStream_t. Returns 0, or -1 with BufferError set (the stream value refused, or the
/// CUDA call that failed, named).
inline int cuda_stream_wait(void* producer_stream, DLDevice device, std::int32_t has_stream,
                            std::int64_t consumer_stream) noexcept {
  (void)device;  // the component calls this for CUDA and other stream devices alike
  const result<array_api_stream> consumer = stream_from_array_api(has_stream ? consumer_stream : 1);
  if (!consumer) {
    PyErr_SetString(PyExc_BufferError, consumer.error().what().c_str());
    return -1;
  }
  if (!consumer->synchronise) return 0;
  const error waited = make_stream_wait(static_cast<cudaStream_t>(producer_stream), consumer->stream);
  if (waited.code() != errc::ok) {
    PyErr_SetString(PyExc_BufferError, waited.what().c_str());
    return -1;
  }
  return 0;
}

/// A dlpack_mdspan.Tensor owning `tensor`, whose __dlpack__(stream=...) orders the
/// consumer's stream after `producer` (cuda_stream_wait). NULL with a Python exception set
/// on failure (the tensor is deleted then).
[[nodiscard]] inline PyObject* to_python_on_cuda_stream(managed_tensor tensor, cudaStream_t producer) noexcept {
  return dlpm_py_tensor_new_on_stream(tensor.release(), &cuda_stream_wait, static_cast<void*>(producer));
}

}  // namespace dlpack_mdspan::python

#endif
