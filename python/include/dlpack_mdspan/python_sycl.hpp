// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpack_mdspan/python_sycl.hpp: SYCL USM (kDLOneAPI) through the Python component, by
// dpctl's conventions: a dlpack_mdspan.Tensor whose __dlpack__ takes a dpctl.SyclQueue as
// `stream` (ordering it after the producer's queue) and copies across devices, as the
// array API's dl_device and copy ask: USM to the host, the host to device USM, and USM to
// new USM through the host.
//
//   PyObject* t = dlpack_mdspan::python::to_python_on_sycl_queue(std::move(tensor), producer_queue);
//
// `producer_queue` (may be nullptr) is the queue the producer's work on the memory was
// submitted to; the Tensor keeps a copy of the reference. A stream that is not a
// dpctl.SyclQueue or its "SyclQueueRef" capsule is a TypeError, as dpctl raises; a refused
// copy is a BufferError with the library's message.
//
// Needs dpctl's headers and libDPCTLSyclInterface (<dlpack_mdspan/sycl.hpp>) besides
// Python's: in CMake, link dlpack_mdspan::python and dlpack_mdspan::sycl.
#ifndef DLPACK_MDSPAN_PYTHON_SYCL_HPP
#define DLPACK_MDSPAN_PYTHON_SYCL_HPP

#include <dlpack_mdspan/python.hpp>
#include <dlpack_mdspan/sycl.hpp>

#include <cstdint>

namespace dlpack_mdspan::python {

namespace detail {

// The queue a __dlpack__ `stream` names: nullptr for None; a "SyclQueueRef" capsule's
// pointer, or a dpctl.SyclQueue's (through its _get_capsule(), kept in *keep while the
// queue is used). -1 with TypeError for anything else.
inline int sycl_queue_of(PyObject* stream, PyObject** keep, DPCTLSyclQueueRef* out) noexcept {
  *keep = nullptr;
  *out = nullptr;
  if (stream == Py_None) return 0;
  PyObject* capsule = nullptr;
  if (PyCapsule_IsValid(stream, "SyclQueueRef")) {
    capsule = stream;
    Py_INCREF(capsule);
  } else if (PyObject* get = PyObject_GetAttrString(stream, "_get_capsule")) {
    capsule = PyObject_CallNoArgs(get);
    Py_DECREF(get);
  }
  if (capsule == nullptr || !PyCapsule_IsValid(capsule, "SyclQueueRef")) {
    Py_XDECREF(capsule);
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "stream must be None, a dpctl.SyclQueue or its \"SyclQueueRef\" capsule for kDLOneAPI "
                                  "memory, not %R", reinterpret_cast<PyObject*>(Py_TYPE(stream)));
    return -1;
  }
  *keep = capsule;
  *out = static_cast<DPCTLSyclQueueRef>(PyCapsule_GetPointer(capsule, "SyclQueueRef"));
  return 0;
}

}  // namespace detail

/// The dlpm_py_device_hooks wait of SYCL producers (`ctx`: the producer's queue, or
/// nullptr): a consumer queue other than the producer's gets a barrier that waits for
/// everything submitted to the producer's queue so far, as dpctl's own __dlpack__ does.
inline int sycl_stream_wait(void* ctx, DLDevice device, PyObject* stream) noexcept {
  (void)device;
  PyObject* keep = nullptr;
  DPCTLSyclQueueRef consumer = nullptr;
  if (detail::sycl_queue_of(stream, &keep, &consumer) != 0) return -1;
  auto* producer = static_cast<DPCTLSyclQueueRef>(ctx);
  if (producer != nullptr && consumer != nullptr && !DPCTLQueue_AreEq(producer, consumer)) {
    DPCTLSyclEventRef done = DPCTLQueue_SubmitBarrier(producer);
    DPCTLSyclEventRef ordered = done != nullptr ? DPCTLQueue_SubmitBarrierForEvents(consumer, &done, 1) : nullptr;
    if (done != nullptr) DPCTLEvent_Delete(done);
    if (ordered != nullptr) DPCTLEvent_Delete(ordered);
    if (ordered == nullptr) {
      Py_XDECREF(keep);
      PyErr_SetString(PyExc_BufferError, "SYCL: the consumer's queue could not be ordered after the producer's");
      return -1;
    }
  }
  Py_XDECREF(keep);
  return 0;
}

/// The dlpm_py_device_hooks copy of SYCL producers: kDLOneAPI memory to the host (on the
/// producer's queue, after its work), memory the CPU can read to device USM, and kDLOneAPI
/// memory to device USM through the host. Every copy is complete when it returns, so the
/// consumer's queue needs no ordering.
inline int sycl_copy(void* ctx, const DLManagedTensorVersioned* source, DLDevice target, PyObject* stream,
                     DLManagedTensorVersioned** out) noexcept {
  PyObject* keep = nullptr;
  DPCTLSyclQueueRef consumer = nullptr;
  if (detail::sycl_queue_of(stream, &keep, &consumer) != 0) return -1;  // checked as a zero-copy export would
  Py_XDECREF(keep);
  const DLTensor& t = source->dl_tensor;
  const bool from_usm = t.device.device_type == kDLOneAPI;
  if ((!from_usm && !is_host_accessible(t.device.device_type)) ||
      (target.device_type != kDLOneAPI && target.device_type != kDLCPU)) {
    PyErr_Format(PyExc_BufferError,
                 "SYCL: cannot copy from device (%d, %d) to (%d, %d): the SYCL copy moves kDLOneAPI memory and host memory "
                 "between each other",
                 static_cast<int>(t.device.device_type), static_cast<int>(t.device.device_id),
                 static_cast<int>(target.device_type), static_cast<int>(target.device_id));
    return -1;
  }
  result<managed_tensor> copy = from_usm ? try_copy_usm_to_host(t, source->flags, static_cast<DPCTLSyclQueueRef>(ctx))
                                         : try_copy_to_host(t, source->flags);
  if (copy && target.device_type == kDLOneAPI)
    copy = try_copy_host_to_usm_device(copy->tensor(), copy->flags(), target.device_id);
  if (!copy) return detail::raise_buffer_error(copy.error());
  *out = copy->release();
  return 0;
}

/// The dlpm_py_device_hooks release of SYCL producers: lets go of the queue copy.
inline void sycl_release(void* ctx) noexcept {
  if (ctx != nullptr) DPCTLQueue_Delete(static_cast<DPCTLSyclQueueRef>(ctx));
}

/// A dlpack_mdspan.Tensor owning `tensor` (kDLOneAPI, or host memory that consumers may
/// ask to have copied to a SYCL device), whose __dlpack__ orders a consumer's dpctl queue
/// after `producer` (nullptr: no producer work to wait for) and copies across devices.
/// NULL with a Python exception set on failure (the tensor is deleted then).
[[nodiscard]] inline PyObject* to_python_on_sycl_queue(managed_tensor tensor, DPCTLSyclQueueRef producer = nullptr) noexcept {
  DPCTLSyclQueueRef kept = producer != nullptr ? DPCTLQueue_Copy(producer) : nullptr;
  const dlpm_py_device_hooks hooks{DLPM_PY_DEVICE_HOOKS_VERSION, kept, &sycl_stream_wait, &sycl_copy, &sycl_release};
  return dlpm_py_tensor_new_on_device(tensor.release(), &hooks);
}

}  // namespace dlpack_mdspan::python

#endif
