// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Raw bindings to the dlpack_mdspan Python component (`python/include/dlpack_mdspan_python.h`),
//! compiled by this crate's build script for the interpreter pyo3 builds for. Declarations
//! only, of the functions the safe layer (`dlpack-mdspan`'s `pyo3` feature) calls, not of
//! every function of the header; each mirror and declaration is asserted against the header
//! by `tests/rust_abi/python_abi.test.cpp` in the repository. Every function must be called
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
pub const DLPM_PY_OPTIONS_VERSION: u32 = 4;

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
}

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
    pub fn dlpm_py_tensor_new(t: *mut DLManagedTensorVersioned) -> *mut PyObject;
    pub fn dlpm_py_tensor_type() -> *mut PyObject;
    /// Nonzero when a validating `dlpm_py_borrow` of `obj` checks it against a checked form
    /// its Tensor kept (a `dlpack_mdspan.Tensor` of this copy of the component, or of another
    /// copy whose type publishes its kept form) and hands that form back; 0 otherwise. Sets
    /// no exception.
    pub fn dlpm_py_keeps_checked_form(obj: *mut PyObject) -> core::ffi::c_int;
    pub fn dlpm_py_raise(status: dlpm_status) -> *mut PyObject;
}
