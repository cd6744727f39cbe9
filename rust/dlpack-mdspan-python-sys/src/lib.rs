// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Raw bindings to the dlpack_mdspan Python component (`python/include/dlpack_mdspan_python.h`),
//! compiled by this crate's build script for the interpreter pyo3 builds for. Declarations
//! only: those the safe layer (`dlpack-mdspan`'s `pyo3` feature) calls, and the raw entry
//! points a Rust extension may call itself (`dlpm_py_tensor_import`, the stream-ordered
//! import of a CUDA or ROCm tensor, among them); not the four that take DLPack's exchange
//! table or the device hooks. Each mirror and declaration is asserted against the header by
//! `tests/rust_abi/python_abi.test.cpp` in the repository. Every function must be called
//! with the GIL held (an attached thread), and sets a Python exception when it fails.
#![no_std]
#![allow(non_camel_case_types)]

use dlpack_mdspan_sys::{
    dlpm_checked_tensor, dlpm_requirements, dlpm_status, DLDevice, DLManagedTensorVersioned,
    DLPackVersion, DLTensor,
};
use pyo3_ffi::PyObject;

/// `DLPM_PY_PROVENANCE_VERSION`: the layout of [`dlpm_py_provenance`] declared here.
pub const DLPM_PY_PROVENANCE_VERSION: u32 = 2;

/// `DLPM_PY_PATH_*`: the way a tensor came ([`dlpm_py_provenance::path`]): a bare capsule.
pub const DLPM_PY_PATH_CAPSULE: i32 = 1;
/// The type's DLPack exchange API table.
pub const DLPM_PY_PATH_EXCHANGE_API: i32 = 2;
/// `obj.__dlpack__(...)`.
pub const DLPM_PY_PATH_DLPACK: i32 = 3;

/// `DLPM_PY_ORDER_*`: what an import knows of when a device tensor's data is ready
/// ([`dlpm_py_provenance::stream_order`]): nothing to order (memory of a device without
/// streams).
pub const DLPM_PY_ORDER_NONE: i32 = 0;
/// The producer's work on the memory is ordered before `ready_stream`.
pub const DLPM_PY_ORDER_STREAM: i32 = 1;
/// Nobody said (a bare capsule, `__dlpack__` asked with no stream, ...).
pub const DLPM_PY_ORDER_UNKNOWN: i32 = 2;

/// `dlpm_py_provenance`: what a producer handed over, as an import with
/// [`dlpm_py_options::provenance`] saw it. Set `version` before the call.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dlpm_py_provenance {
    pub version: u32,
    pub path: i32,
    pub legacy: i32,
    pub pre_1_0_call: i32,
    pub dlpack_version: DLPackVersion,
    /// Version 2: a `DLPM_PY_ORDER_*`.
    pub stream_order: i32,
    /// Version 2: with `DLPM_PY_ORDER_STREAM`, the stream (a `cudaStream_t` for CUDA
    /// memory; NULL is the device's default stream), else NULL.
    pub ready_stream: *mut core::ffi::c_void,
}

/// `DLPM_PY_OPTIONS_VERSION`: the layout of [`dlpm_py_options`] declared here.
pub const DLPM_PY_OPTIONS_VERSION: u32 = 5;

/// `dlpm_py_options`: how the producer is asked (initialise with [`dlpm_py_options_init`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dlpm_py_options {
    pub version: u32,
    pub legacy_writable: i32,
    pub copy: i32,
    pub has_dl_device: i32,
    pub dl_device: DLDevice,
    pub has_stream: i32,
    pub stream: i64,
    pub stream_object: *mut PyObject,
    pub use_exchange_api: i32,
    pub validate: i32,
    pub writable: i32,
    pub accept_semantic_bits: i32,
    pub keep_alive: i32,
    /// Where an import writes what the producer handed over (NULL: nowhere).
    pub provenance: *mut dlpm_py_provenance,
    /// Version 2: what a refusal of a semantic bit names as the way to accept it (NULL: the
    /// C option; `""`: none).
    pub semantic_bits_option: *const core::ffi::c_char,
    /// Version 3: where a validating `dlpm_py_borrow` hands back the checked form of the
    /// tensor it lends (NULL: none). Its `tensor` is `&out->dl_tensor` when it describes
    /// exactly that tensor with `out->flags`, NULL otherwise.
    pub checked: *mut dlpm_checked_tensor,
    /// Version 4: where a validating `dlpm_py_borrow` lends, instead of copying into
    /// `checked`, the checked form a `dlpack_mdspan.Tensor` kept, when the description it lends
    /// is that form's own byte for byte (NULL: none lent; `checked` is then handed back as
    /// version 3 says). The form is the Tensor's: read-only, valid while the borrowed object
    /// is alive.
    pub lent: *mut *const dlpm_checked_tensor,
    /// Version 5: nonzero: the host waits for the producer's work on memory a stream orders
    /// before the call returns (a host view, a tensor kept past the call).
    pub ready_on_host: i32,
}

/// `dlpm_py_stream_wait_fn`: called by a Tensor's `__dlpack__` on a device with streams
/// before the export is made, to make the consumer's stream wait for the producer's work
/// (`has_stream` 0 for `stream=None`, else `consumer_stream` is the value given; -1: no
/// synchronisation wanted). Returns 0, or -1 with a Python exception set. Called with the
/// GIL held.
pub type dlpm_py_stream_wait_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut core::ffi::c_void,
        device: DLDevice,
        has_stream: i32,
        consumer_stream: i64,
    ) -> core::ffi::c_int,
>;

/// `dlpm_py_borrowed`: a tensor borrowed for one call.
#[repr(C)]
#[derive(Debug)]
pub struct dlpm_py_borrowed {
    pub dl_tensor: DLTensor,
    pub flags: u64,
    pub owner: *mut DLManagedTensorVersioned,
    pub keep_alive: *mut PyObject,
}

extern "C" {
    pub fn dlpm_py_options_init(opts: *mut dlpm_py_options, version: u32) -> dlpm_status;
    pub fn dlpm_py_import(
        obj: *mut PyObject,
        req: *const dlpm_requirements,
        opts: *const dlpm_py_options,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;
    pub fn dlpm_py_borrow(
        obj: *mut PyObject,
        req: *const dlpm_requirements,
        opts: *const dlpm_py_options,
        out: *mut dlpm_py_borrowed,
    ) -> dlpm_status;
    pub fn dlpm_py_borrow_end(b: *mut dlpm_py_borrowed);
    /// `DLPM_OK`, or the mismatch of the dtype and device the producer announces
    /// (`__dlpack_data_type__`, `__dlpack_device__`) with `req`, with a `TypeError` set.
    pub fn dlpm_py_check_announced(
        obj: *mut PyObject,
        req: *const dlpm_requirements,
    ) -> dlpm_status;
    /// The description of a DLPack capsule without taking it: 1 (`out`, `flags` written),
    /// 0 when `obj` is no unconsumed DLPack capsule. Sets no exception.
    pub fn dlpm_py_capsule_peek(
        obj: *mut PyObject,
        opts: *const dlpm_py_options,
        out: *mut DLTensor,
        flags: *mut u64,
    ) -> i32;
    pub fn dlpm_py_capsule_new(t: *mut DLManagedTensorVersioned, versioned: i32) -> *mut PyObject;
    pub fn dlpm_py_owner_new(t: *mut DLManagedTensorVersioned) -> *mut PyObject;
    /// The tensor an owner object holds (`dlpm_py_owner_new`'s, a borrow's `keep_alive`), still
    /// the owner's; NULL, with no exception set, for any other object.
    pub fn dlpm_py_owner_get(obj: *mut PyObject) -> *const DLManagedTensorVersioned;
    /// `dlpm_managed_delete(t)` with the GIL held where an exception may be in flight: it is
    /// kept aside while the producer's deleter (possibly Python code) runs, and restored.
    pub fn dlpm_py_managed_delete(t: *mut DLManagedTensorVersioned);
    /// Nonzero for memory a stream orders (`kDLCUDA`, `kDLCUDAManaged`, `kDLROCM`), which
    /// [`dlpm_py_options::ready_on_host`] makes the host wait for.
    pub fn dlpm_py_is_stream_memory(device_type: i32) -> core::ffi::c_int;
    pub fn dlpm_py_tensor_new(t: *mut DLManagedTensorVersioned) -> *mut PyObject;
    /// `dlpm_py_import` followed by `dlpm_py_tensor_new`, keeping the producer's stream order
    /// for CUDA and ROCm memory (what `dlpack_mdspan.from_dlpack` does), and copying across
    /// devices with `opts.copy` or `opts.dl_device`: a new `dlpack_mdspan.Tensor`, or NULL
    /// with an exception set.
    pub fn dlpm_py_tensor_import(
        obj: *mut PyObject,
        req: *const dlpm_requirements,
        opts: *const dlpm_py_options,
    ) -> *mut PyObject;
    pub fn dlpm_py_invalid_stream_error() -> *mut PyObject;
    /// `dlpack_mdspan.CopyForbiddenError` (a `BufferError` and a `ValueError`): what a Tensor's
    /// `__dlpack__` raises for `copy=False` where only a copy reaches `dl_device`. A new
    /// reference, or NULL with an exception set.
    pub fn dlpm_py_copy_forbidden_error() -> *mut PyObject;
    /// `dlpm_py_tensor_new` for memory that device work may still be writing: `wait(ctx, ...)`
    /// runs on every `__dlpack__` call for a device with streams; `ctx` must outlive the object.
    pub fn dlpm_py_tensor_new_on_stream(
        t: *mut DLManagedTensorVersioned,
        wait: dlpm_py_stream_wait_fn,
        ctx: *mut core::ffi::c_void,
    ) -> *mut PyObject;
    pub fn dlpm_py_tensor_type() -> *mut PyObject;
    /// Nonzero when a validating `dlpm_py_borrow` of `obj` checks it against a checked form
    /// its Tensor kept (a `dlpack_mdspan.Tensor` of this copy of the component, or of another
    /// copy whose type publishes its kept form) and hands that form back; 0 otherwise. Sets
    /// no exception.
    pub fn dlpm_py_keeps_checked_form(obj: *mut PyObject) -> core::ffi::c_int;
    /// The tensor a `dlpack_mdspan.Tensor` holds (borrowed: valid while `obj` lives), or NULL.
    pub fn dlpm_py_tensor_get(obj: *mut PyObject) -> *const DLManagedTensorVersioned;
    /// The producer's current work stream for `device`, through the exchange API its type
    /// publishes.
    pub fn dlpm_py_current_work_stream(
        obj: *mut PyObject,
        device: DLDevice,
        out_stream: *mut *mut core::ffi::c_void,
    ) -> dlpm_status;
    pub fn dlpm_py_raise(status: dlpm_status) -> *mut PyObject;
    /// A Python integer (or an object with `__index__`) in `[min, max]` into `out`: 0, or -1
    /// with an exception set naming `what` and the range (`malformed` NULL, for an argument:
    /// `TypeError` for no integer, `OverflowError` outside the range; else `malformed` for
    /// both).
    pub fn dlpm_py_integer_in_range(
        value: *mut PyObject,
        what: *const core::ffi::c_char,
        min: core::ffi::c_longlong,
        max: core::ffi::c_longlong,
        malformed: *mut PyObject,
        out: *mut core::ffi::c_longlong,
    ) -> core::ffi::c_int;
    /// A consumer's `stream` argument to `__dlpack__`: 1 for `None` (`value` untouched), 0
    /// with the integer in `value`, or -1 with an exception set (`TypeError` naming `memory`,
    /// such as `"CUDA"`, for anything but an int; `OverflowError` outside int64).
    pub fn dlpm_py_stream_integer(
        stream: *mut PyObject,
        memory: *const core::ffi::c_char,
        value: *mut core::ffi::c_longlong,
    ) -> core::ffi::c_int;
    /// A `copy` argument (`bool | None`): `*out` -1 for `None`, else 1 or 0; a str or bytes,
    /// or an object without a truth value, is a `ValueError` naming `what`. 0, or -1 with
    /// the exception set.
    pub fn dlpm_py_copy_argument(
        copy: *mut PyObject,
        what: *const core::ffi::c_char,
        out: *mut i32,
    ) -> core::ffi::c_int;
}
