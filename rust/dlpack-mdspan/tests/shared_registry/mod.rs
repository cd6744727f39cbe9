// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The shared borrow registry's C ABI as another copy of the crate (another Rust extension)
//! sees it (docs/rust.md, "Borrows of Python tensors"): version 1, and its capsule,
//! `sys._dlpack_mdspan_borrows`.
#![allow(dead_code)]

use pyo3::prelude::*;

/// Version 1 of `sys._dlpack_mdspan_borrows`'s struct.
#[repr(C)]
pub struct SharedRegistry {
    pub version: u32,
    pub size: u32,
    pub claim: unsafe extern "C" fn(usize, usize, usize, u32, *mut HeldClaim) -> i32,
    pub release: unsafe extern "C" fn(usize, u32),
}

/// The claim in the way of a refused claim.
#[repr(C)]
#[derive(Default, Debug)]
pub struct HeldClaim {
    pub begin: usize,
    pub end: usize,
    pub kind: u32,
}

/// The capsule's name.
pub const CAPSULE_NAME: &std::ffi::CStr = c"dlpack_mdspan.borrow_registry";

/// A capsule of `registry` under the registry's name, as the first copy publishes it.
pub fn capsule<'py>(py: Python<'py>, registry: &'static SharedRegistry) -> Bound<'py, PyAny> {
    capsule_at(py, std::ptr::from_ref(registry).cast())
}

/// A capsule under the registry's name of whatever `pointer` points at (a static).
pub fn capsule_at<'py>(py: Python<'py>, pointer: *const std::ffi::c_void) -> Bound<'py, PyAny> {
    // SAFETY: a non-NULL pointer (PyCapsule_New refuses NULL with an exception: unwrap) and a
    // static C string; no destructor.
    let c = unsafe { pyo3::ffi::PyCapsule_New(pointer.cast_mut(), CAPSULE_NAME.as_ptr(), None) };
    // SAFETY: a new reference, or NULL with an exception set (unwrap).
    unsafe { Bound::from_owned_ptr_or_err(py, c) }.unwrap()
}

/// The registry `capsule` carries, as another copy reads it.
pub fn registry_in(capsule: &Bound<'_, PyAny>) -> &'static SharedRegistry {
    // SAFETY: the GIL is held (a Bound); the name is a static C string.
    let pointer =
        unsafe { pyo3::ffi::PyCapsule_GetPointer(capsule.as_ptr(), CAPSULE_NAME.as_ptr()) };
    assert!(!pointer.is_null(), "the registry is a capsule of that name");
    // SAFETY: the capsule's pointer is a registry, which lives as long as the process.
    unsafe { &*pointer.cast::<SharedRegistry>() }
}
