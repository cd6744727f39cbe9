// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The test extension of test_cuda_stream.py: python_cuda.hpp's stream-ordered export on
// a machine that may have no GPU. tensor_on_stream(producer) makes a 2-element float32
// Tensor labelled kDLCUDA (host memory underneath: nothing here dereferences it on a
// device) whose __dlpack__ orders the consumer after the producer stream given as an
// integer (1: cudaStreamLegacy, 2: cudaStreamPerThread, else a cudaStream_t).
// cuda_tensor(n) copies n float32 0, 1, ... to CUDA device 0 (try_copy_host_to_cuda) and
// returns them as a Tensor on the legacy stream; without a GPU it raises BufferError naming
// the CUDA call that failed.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack_mdspan/python_cuda.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace dm = dlpack_mdspan;

namespace {

PyObject* tensor_on_stream(PyObject*, PyObject* arg) {
  const unsigned long long producer = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return nullptr;
  auto memory = std::make_unique<float[]>(2);
  const std::mdspan<float, std::dextents<std::int64_t, 1>> view(memory.get(), 2);
  auto tensor = dm::try_to_managed_tensor(view, std::move(memory), DLDevice{kDLCUDA, 0});
  if (!tensor) {
    PyErr_SetString(PyExc_RuntimeError, tensor.error().what().c_str());
    return nullptr;
  }
  return dm::python::to_python_on_cuda_stream(std::move(*tensor),
                                              reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(producer)));
}

PyObject* cuda_tensor(PyObject*, PyObject* arg) {
  const Py_ssize_t n = PyLong_AsSsize_t(arg);
  if (n < 0) return PyErr_Occurred() ? nullptr : (PyErr_SetString(PyExc_ValueError, "n < 0"), nullptr);
  std::vector<float> values(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const std::int64_t shape[1] = {n};
  DLTensor host{};
  host.data = values.data();
  host.device = DLDevice{kDLCPU, 0};
  host.ndim = 1;
  host.dtype = DLDataType{kDLFloat, 32, 1};
  host.shape = const_cast<std::int64_t*>(shape);
  auto on_device = dm::try_copy_host_to_cuda(host, 0, 0, cudaStreamLegacy);
  if (!on_device) {
    PyErr_SetString(PyExc_BufferError, on_device.error().what().c_str());
    return nullptr;
  }
  return dm::python::to_python_on_cuda_stream(std::move(*on_device), cudaStreamLegacy);
}

PyMethodDef methods[] = {
    {"tensor_on_stream", tensor_on_stream, METH_O, "A kDLCUDA-labelled Tensor ordered after the given producer stream."},
    {"cuda_tensor", cuda_tensor, METH_O, "n float32 0, 1, ... in CUDA device memory, as a Tensor."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "dlpm_cuda_stream", "python_cuda.hpp on any machine.", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_dlpm_cuda_stream(void) { return PyModule_Create(&module); }
