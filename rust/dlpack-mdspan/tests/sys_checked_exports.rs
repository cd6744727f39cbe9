// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The `-sys` bindings of the facade's newer entry points, called as a C binding calls them:
//! `dlpm_managed_new_from` with its versioned options, `dlpm_managed_new_checked` (an export
//! sharing a checked description's arrays) and `dlpm_check_prechecked` /
//! `dlpm_check_prechecked_tensor` (a requirements check that reads a kept checked form).

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use dlpack_mdspan::sys;

static RELEASES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_release(ctx: *mut c_void) {
    assert_eq!(ctx as usize, 0x1234, "release gets the options' ctx");
    RELEASES.fetch_add(1, Ordering::SeqCst);
}

// The tests share RELEASES: one test runs them in order.
#[test]
fn newer_facade_entry_points_through_sys() {
    let mut data = [0f32; 6];
    let mut shape = [2i64, 3];
    let mut strides = [3i64, 1];
    let description = sys::DLTensor {
        data: data.as_mut_ptr().cast(),
        device: sys::DLDevice {
            device_type: sys::kDLCPU,
            device_id: 0,
        },
        ndim: 2,
        dtype: sys::DLDataType {
            code: sys::kDLFloat,
            bits: 32,
            lanes: 1,
        },
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };

    // dlpm_managed_new_from: copies the description's arrays; release runs once, at delete.
    let options = sys::dlpm_managed_options {
        release: Some(count_release),
        ctx: 0x1234 as *mut c_void,
        ..sys::DLPM_MANAGED_OPTIONS_INIT
    };
    let mut out = ptr::null_mut();
    // SAFETY: description, options and out are valid for the call; data outlives the tensor.
    assert_eq!(
        unsafe { sys::dlpm_managed_new_from(&description, &options, &mut out) },
        sys::DLPM_OK
    );
    // SAFETY: out is the live tensor the call made.
    let made = unsafe { &(*out).dl_tensor };
    assert_ne!(
        made.shape, description.shape,
        "dlpm_managed_new_from copies the shape"
    );
    // SAFETY: made.shape has ndim (2) entries.
    assert_eq!(unsafe { std::slice::from_raw_parts(made.shape, 2) }, &shape);
    // SAFETY: out is live and deleted once, here.
    unsafe { sys::dlpm_managed_delete(out) };
    assert_eq!(RELEASES.load(Ordering::SeqCst), 1);

    // Another options version is refused, the release not called, *out untouched.
    let newer = sys::dlpm_managed_options {
        version: sys::DLPM_MANAGED_OPTIONS_VERSION + 1,
        ..options
    };
    let mut untouched = ptr::null_mut();
    // SAFETY: as above.
    let s = unsafe { sys::dlpm_managed_new_from(&description, &newer, &mut untouched) };
    assert_eq!(s, sys::DLPM_E_UNSUPPORTED_VERSION);
    assert!(untouched.is_null());
    assert_eq!(RELEASES.load(Ordering::SeqCst), 1);

    // dlpm_check_tensor, then dlpm_managed_new_checked: the export shares the arrays.
    let mut checked = MaybeUninit::<sys::dlpm_checked_tensor>::uninit();
    // SAFETY: checked is writable storage for the struct; its version is set before the call.
    let checked = unsafe {
        ptr::addr_of_mut!((*checked.as_mut_ptr()).version).write(sys::DLPM_CHECKED_TENSOR_VERSION);
        let s = sys::dlpm_check_tensor(&description, 0, ptr::null(), 4, checked.as_mut_ptr());
        assert_eq!(s, sys::DLPM_OK);
        checked.assume_init()
    };
    assert_eq!((checked.numel, checked.row_major), (6, 1));
    let mut export = ptr::null_mut();
    // SAFETY: checked describes `description`, whose arrays outlive the export (deleted below).
    let s = unsafe {
        sys::dlpm_managed_new_checked(
            &checked,
            0,
            Some(count_release),
            0x1234 as *mut c_void,
            &mut export,
        )
    };
    assert_eq!(s, sys::DLPM_OK);
    // SAFETY: export is the live tensor the call made.
    let shared = unsafe { &(*export).dl_tensor };
    assert_eq!(
        shared.shape, description.shape,
        "the export shares the checked arrays"
    );
    assert_eq!(shared.strides, description.strides);

    // dlpm_check_prechecked(_tensor) of the export against the kept form.
    let mut req = sys::DLPM_REQUIREMENTS_INIT;
    req.check_dtype = 1;
    req.dtype = description.dtype;
    req.ndim = 2;
    // SAFETY: every pointer is valid for the call.
    assert_eq!(
        unsafe { sys::dlpm_check_prechecked(shared, 0, &checked, &req) },
        sys::DLPM_OK
    );
    req.ndim = 3;
    // SAFETY: as above.
    assert_ne!(
        unsafe { sys::dlpm_check_prechecked(shared, 0, &checked, &req) },
        sys::DLPM_OK
    );
    req.ndim = 2;
    let mut form = MaybeUninit::<sys::dlpm_checked_tensor>::uninit();
    // SAFETY: form is writable storage for the struct; its version is set before the call.
    let form = unsafe {
        ptr::addr_of_mut!((*form.as_mut_ptr()).version).write(sys::DLPM_CHECKED_TENSOR_VERSION);
        let s = sys::dlpm_check_prechecked_tensor(shared, 0, &checked, &req, form.as_mut_ptr());
        assert_eq!(s, sys::DLPM_OK);
        form.assume_init()
    };
    assert_eq!(
        form.tensor, shared as *const sys::DLTensor,
        "the form names the tensor it was lent"
    );
    assert_eq!((form.numel, form.ndim), (6, 2));
    assert_eq!(&form.strides[..2], &strides);

    // SAFETY: export is live and deleted once, here.
    unsafe { sys::dlpm_managed_delete(export) };
    assert_eq!(RELEASES.load(Ordering::SeqCst), 2);
}
