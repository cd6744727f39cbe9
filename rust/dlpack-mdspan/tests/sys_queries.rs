// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The `-sys` bindings of the facade's queries that take no tensor, called as a C binding
//! calls them: `dlpm_dtype_from_name` (the inverse of `dlpm_dtype_name`),
//! `dlpm_check_announced` (a producer's announced dtype and device against requirements)
//! and the array API's stream decoders, `dlpm_cuda_array_api_stream` and
//! `dlpm_rocm_array_api_stream`.

mod common;

use std::ffi::CString;
use std::mem::MaybeUninit;

use common::last_error;
use dlpack_mdspan::sys;

const F32: sys::DLDataType = sys::DLDataType {
    code: sys::kDLFloat,
    bits: 32,
    lanes: 1,
};

#[test]
fn dtype_from_name_inverts_dtype_name() {
    let mut out = MaybeUninit::<sys::DLDataType>::uninit();
    let name = CString::new("float32").unwrap();
    // SAFETY: a NUL-terminated name and a writable out, each live for the call.
    assert_eq!(
        unsafe { sys::dlpm_dtype_from_name(name.as_ptr(), out.as_mut_ptr()) },
        sys::DLPM_OK
    );
    // SAFETY: written on DLPM_OK.
    let got = unsafe { out.assume_init() };
    assert_eq!(
        (got.code, got.bits, got.lanes),
        (F32.code, F32.bits, F32.lanes)
    );

    let wrong = CString::new("float31").unwrap();
    let mut untouched = sys::DLDataType {
        code: 9,
        bits: 9,
        lanes: 9,
    };
    // SAFETY: as above.
    let status = unsafe { sys::dlpm_dtype_from_name(wrong.as_ptr(), &mut untouched) };
    assert_eq!(status, sys::DLPM_E_INVALID_DTYPE);
    assert!(last_error().contains("float31"), "{}", last_error());
    assert_eq!(
        (untouched.code, untouched.bits, untouched.lanes),
        (9, 9, 9),
        "written only on success"
    );
    // SAFETY: the facade answers a NULL argument with a status.
    assert_eq!(
        unsafe { sys::dlpm_dtype_from_name(std::ptr::null(), &mut untouched) },
        sys::DLPM_E_NULL_POINTER
    );
}

#[test]
fn check_announced_reads_the_dtype_and_device_fields_only() {
    let cuda_types = [sys::kDLCUDA];
    let req = sys::dlpm_requirements {
        check_dtype: 1,
        dtype: F32,
        ndim: 3, // not announced: not checked
        device_types: cuda_types.as_ptr(),
        num_device_types: 1,
        device_id: 1,
        ..sys::DLPM_REQUIREMENTS_INIT
    };
    let cuda = |id| sys::DLDevice {
        device_type: sys::kDLCUDA,
        device_id: id,
    };
    let announced = |dtype, device| {
        // SAFETY: req and the device-type array it points to live for the call.
        unsafe { sys::dlpm_check_announced(dtype, device, &req) }
    };
    assert_eq!(announced(F32, cuda(1)), sys::DLPM_OK);
    let f64 = sys::DLDataType { bits: 64, ..F32 };
    assert_eq!(announced(f64, cuda(1)), sys::DLPM_E_DTYPE_MISMATCH);
    assert!(last_error().contains("float64"), "{}", last_error());
    assert_eq!(announced(F32, cuda(0)), sys::DLPM_E_DEVICE_ID_MISMATCH);
    let cpu = sys::DLDevice {
        device_type: sys::kDLCPU,
        device_id: 0,
    };
    assert_eq!(announced(F32, cpu), sys::DLPM_E_DEVICE_MISMATCH);
    let ill_formed = sys::DLDataType { lanes: 0, ..F32 };
    assert_eq!(announced(ill_formed, cuda(1)), sys::DLPM_E_INVALID_DTYPE);
    // SAFETY: a NULL requirements pointer is answered with a status.
    assert_eq!(
        unsafe { sys::dlpm_check_announced(F32, cuda(1), std::ptr::null()) },
        sys::DLPM_E_NULL_POINTER
    );
}

#[test]
fn array_api_streams_decode_as_the_array_api_encodes_them() {
    let cuda = |value: i64| {
        let mut handle = usize::MAX;
        // SAFETY: handle is writable for the call.
        let status = unsafe { sys::dlpm_cuda_array_api_stream(value, &mut handle) };
        (status, handle)
    };
    assert_eq!(cuda(-1), (sys::DLPM_OK, 0));
    assert_eq!(cuda(1), (sys::DLPM_OK, 1));
    assert_eq!(cuda(2), (sys::DLPM_OK, 2));
    assert_eq!(cuda(0x7f00_1234), (sys::DLPM_OK, 0x7f00_1234));
    assert_eq!(cuda(0), (sys::DLPM_E_INVALID_ARGUMENT, usize::MAX));
    assert!(last_error().contains("CUDA"), "{}", last_error());
    assert_eq!(cuda(-2), (sys::DLPM_E_INVALID_ARGUMENT, usize::MAX));

    let rocm = |value: i64| {
        let (mut synchronise, mut handle) = (-7i32, usize::MAX);
        // SAFETY: both outputs are writable for the call.
        let status =
            unsafe { sys::dlpm_rocm_array_api_stream(value, &mut synchronise, &mut handle) };
        (status, synchronise, handle)
    };
    assert_eq!(rocm(-1), (sys::DLPM_OK, 0, 0));
    assert_eq!(rocm(0), (sys::DLPM_OK, 1, 0));
    assert_eq!(rocm(3), (sys::DLPM_OK, 1, 3));
    for refused in [1, 2, -2] {
        assert_eq!(
            rocm(refused),
            (sys::DLPM_E_INVALID_ARGUMENT, -7, usize::MAX),
            "{refused}"
        );
    }
    assert!(last_error().contains("ROCm"), "{}", last_error());
}
