// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Device tensors from Python with their stream order: [`PyImportOptions`] (the consumer's
//! stream, a copy, a target device: what `dlpm_py_options` asks the producer) and
//! [`StreamOrdered`], a tensor with the [`ReadyStream`] its data is ready on (the import's
//! `dlpm_py_provenance`). The rule of which stream that is, is the component's
//! (docs/python-interop.md, "Streams"); here it is only read.

use std::ffi::c_void;
use std::ops::Deref;
use std::ptr;

use dlpack_mdspan_python_sys as pysys;
use dlpack_mdspan_sys as sys;
use pyo3::prelude::*;

use super::{import_managed, rust_options};
use crate::managed::ManagedTensor;
use crate::types::Device;

/// What an import knows of when a device tensor's data is ready (`DLPM_PY_ORDER_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamOrder {
    /// Nothing to order: memory of a device without streams (`kDLCPU`, `kDLCUDAHost`,
    /// `kDLROCMHost`).
    None,
    /// The producer's work on the memory is ordered before [`ReadyStream::stream`]: work
    /// queued on that stream, or on a stream made to wait for it, sees it.
    Stream,
    /// Nobody said: a bare capsule, `__dlpack__` asked with no stream or with -1, a stream
    /// object (a SYCL queue), or an integer stream on a device other than CUDA's and ROCm's. Synchronise
    /// with the producer by its own means before reading.
    Unknown,
}

/// Where an imported tensor's data is ready: the C++ casters' `ready_stream`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadyStream {
    /// What the import knows.
    pub order: StreamOrder,
    /// With [`StreamOrder::Stream`], the stream (a `cudaStream_t` for CUDA memory; null is
    /// the device's default stream, 1 and 2 CUDA's legacy and per-thread default streams);
    /// otherwise null.
    pub stream: *mut c_void,
}

// SAFETY: the stream is a handle the crate never dereferences; which thread may use it is
// the device runtime's rule (CUDA's streams are usable from any thread).
unsafe impl Send for ReadyStream {}
// SAFETY: as Send; the struct is read only.
unsafe impl Sync for ReadyStream {}

impl ReadyStream {
    fn of(how: &pysys::dlpm_py_provenance) -> Self {
        let order = match how.stream_order {
            pysys::DLPM_PY_ORDER_NONE => StreamOrder::None,
            pysys::DLPM_PY_ORDER_STREAM => StreamOrder::Stream,
            _ => StreamOrder::Unknown,
        };
        let stream = if order == StreamOrder::Stream {
            how.ready_stream
        } else {
            ptr::null_mut()
        };
        ReadyStream { order, stream }
    }
}

/// What an import asks the producer (`dlpm_py_options`): start from
/// [`PyImportOptions::new`] (the defaults: no stream, copy when the producer must, no target
/// device, legacy tensors read-only) and set what you need.
///
/// ```
/// use dlpack_mdspan::{Device, DeviceType, PyImportOptions};
/// let on_mine = PyImportOptions::new().stream(0x5eed).copy(false);
/// let to_gpu = PyImportOptions::new().dl_device(Device::new(DeviceType::CUDA, 0)).copy(true);
/// # let _ = (on_mine, to_gpu);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PyImportOptions {
    stream: Option<i64>,
    copy: Option<bool>,
    dl_device: Option<Device>,
    legacy_writable: bool,
}

impl PyImportOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// `__dlpack__(stream=stream)`: the consumer's stream, as the Python array API encodes
    /// it (CUDA: -1 no synchronisation, 1 the legacy default stream, 2 the per-thread
    /// default stream, other positive values a `cudaStream_t`; ROCm: -1, 0 the default
    /// stream, values above 2 a `hipStream_t`). The producer orders its work on the memory
    /// before that stream; the producer refuses a value its device does not take (0 on
    /// CUDA, say). Not passed for CPU tensors. The exchange API, which takes no stream, is
    /// then not used.
    pub fn stream(mut self, stream: i64) -> Self {
        self.stream = Some(stream);
        self
    }

    /// `__dlpack__(copy=copy)`: `true` always copies, `false` never does (a producer that
    /// must copy refuses). Unset: the producer copies only when it must.
    pub fn copy(mut self, copy: bool) -> Self {
        self.copy = Some(copy);
        self
    }

    /// `__dlpack__(dl_device=device)`: the device the tensor must arrive on (with
    /// `copy(true)`, or when the producer can hand it over there without a copy).
    pub fn dl_device(mut self, device: Device) -> Self {
        self.dl_device = Some(device);
        self
    }

    /// A legacy (pre-1.0) tensor, whose capsule cannot say whether it may be written,
    /// arrives writable instead of READ_ONLY (docs/ownership.md, "Legacy policy").
    pub fn legacy_writable(mut self, writable: bool) -> Self {
        self.legacy_writable = writable;
        self
    }

    /// The component's options for these, writing the provenance into `how`.
    fn component(&self, how: &mut pysys::dlpm_py_provenance) -> pysys::dlpm_py_options {
        let mut o = *rust_options(true);
        o.legacy_writable = i32::from(self.legacy_writable);
        o.copy = self.copy.map_or(-1, i32::from);
        if let Some(device) = self.dl_device {
            o.has_dl_device = 1;
            o.dl_device = device.0;
        }
        if let Some(stream) = self.stream {
            o.has_stream = 1;
            o.stream = stream;
        }
        o.provenance = how;
        o
    }
}

/// A tensor and the stream its data is ready on: the C++ casters' `stream_ordered<M>`. It
/// dereferences to the tensor.
///
/// As a pyo3 argument, `StreamOrdered<ManagedTensor>` imports with the default options
/// (through a type's exchange API, PyTorch's and ours, `ready` is the producer's current
/// stream; through `__dlpack__` with no stream, [`StreamOrder::Unknown`]);
/// [`StreamOrdered::import`] asks the producer to order the caller's own stream:
///
/// ```ignore
/// #[pyfunction]
/// fn scale(x: StreamOrdered<ManagedTensor>) -> PyResult<()> {
///     // launch on x.ready.stream when x.ready.order is StreamOrder::Stream
/// }
/// ```
#[derive(Debug)]
pub struct StreamOrdered<T> {
    /// The tensor.
    pub tensor: T,
    /// Where its data is ready.
    pub ready: ReadyStream,
}

impl<T> Deref for StreamOrdered<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.tensor
    }
}

impl StreamOrdered<ManagedTensor> {
    /// `dlpm_py_import` of `obj` with `options`: an owned, validated tensor of any dtype and
    /// device, and the stream its data is ready on. With [`PyImportOptions::stream`] on
    /// CUDA that is the stream given (the producer made it wait for its work).
    pub fn import(obj: &Bound<'_, PyAny>, options: &PyImportOptions) -> PyResult<Self> {
        Self::import_borrowed(obj.as_borrowed(), options)
    }

    fn import_borrowed(obj: Borrowed<'_, '_, PyAny>, options: &PyImportOptions) -> PyResult<Self> {
        let mut how = pysys::dlpm_py_provenance {
            version: pysys::DLPM_PY_PROVENANCE_VERSION,
            path: 0,
            legacy: 0,
            pre_1_0_call: 0,
            dlpack_version: sys::DLPackVersion { major: 0, minor: 0 },
            stream_order: pysys::DLPM_PY_ORDER_UNKNOWN,
            ready_stream: ptr::null_mut(),
        };
        let component = options.component(&mut how);
        let tensor = import_managed(obj, &component, false)?;
        Ok(StreamOrdered {
            tensor,
            ready: ReadyStream::of(&how),
        })
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for StreamOrdered<ManagedTensor> {
    type Error = PyErr;

    /// [`StreamOrdered::import`] with the default options.
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Self::import_borrowed(obj, &PyImportOptions::new())
    }
}
