// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Round-trip tests between the Rust crates and the C++ library: the C++ side
//! (`cxx/roundtrip_helper.cpp`) uses `managed_tensor::adopt`, `view<M>()`, `to_mdspan`
//! and `to_managed_tensor`. Not published; the tests are in `tests/`.

use std::ffi::c_char;

use dlpack_mdspan::{sys, Error, ManagedTensor};

extern "C" {
    fn dlpm_cxx_double_matrix(
        input: *mut sys::DLManagedTensorVersioned,
        out: *mut *mut sys::DLManagedTensorVersioned,
        msg: *mut c_char,
        msg_len: usize,
    ) -> i32;
    fn dlpm_cxx_mutable_view_refused(
        tensor: *mut sys::DLManagedTensorVersioned,
        first: *mut f64,
        msg: *mut c_char,
        msg_len: usize,
    ) -> i32;
    fn dlpm_cxx_sum_strided(
        tensor: *const sys::DLTensor,
        sum: *mut f64,
        msg: *mut c_char,
        msg_len: usize,
    ) -> i32;
    fn dlpm_cxx_make_matrix(
        rows: i64,
        cols: i64,
        read_only: i32,
    ) -> *mut sys::DLManagedTensorVersioned;
    fn dlpm_cxx_live_owners() -> i64;
    fn dlpm_cxx_make_throwing_tensor() -> *mut sys::DLManagedTensorVersioned;
}

/// A failure on the C++ side: the `errc` value and the exception / error message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CxxError {
    /// The C++ `errc` (equal to the facade's status codes).
    pub code: i32,
    /// The C++ error message.
    pub message: String,
}

fn message(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Hands `t` to C++ (ownership moves), which adopts it, views it as a row-major
/// `mdspan<double, dextents<int64_t, 2>>`, doubles every element and releases it back.
/// On failure C++ has released the tensor.
pub fn double_in_cxx(t: ManagedTensor) -> Result<ManagedTensor, CxxError> {
    let mut buf = [0u8; 512];
    let mut out: *mut sys::DLManagedTensorVersioned = std::ptr::null_mut();
    // SAFETY: ownership of the raw tensor moves to C++; buf is writable for its length.
    let code = unsafe {
        dlpm_cxx_double_matrix(t.into_raw(), &mut out, buf.as_mut_ptr().cast(), buf.len())
    };
    if code != 0 {
        assert!(out.is_null());
        return Err(CxxError {
            code,
            message: message(&buf),
        });
    }
    // SAFETY: C++ released the tensor it adopted and hands ownership back.
    Ok(unsafe { ManagedTensor::from_raw(out) }.expect("C++ returns a DLPack 1.x tensor"))
}

/// Lets C++ borrow `t` and try a const and a mutable `view<M>()`: `Ok(true)` if the
/// mutable view was refused as READ_ONLY, `Ok(false)` if it was allowed; plus element
/// `[0, 0]` read through the const view.
pub fn cxx_refuses_mutable_view(t: &ManagedTensor) -> Result<(bool, f64), CxxError> {
    let mut buf = [0u8; 512];
    let mut first = 0.0;
    // SAFETY: C++ borrows the live tensor for the call and gives ownership back (release).
    let r = unsafe {
        dlpm_cxx_mutable_view_refused(t.as_ptr(), &mut first, buf.as_mut_ptr().cast(), buf.len())
    };
    match r {
        1 => Ok((true, first)),
        0 => Ok((false, first)),
        code => Err(CxxError {
            code: -code,
            message: message(&buf),
        }),
    }
}

/// C++ sums a rank-2 f64 tensor through `to_mdspan` with `layout_stride_relaxed`.
pub fn sum_in_cxx(t: &sys::DLTensor) -> Result<f64, CxxError> {
    let mut buf = [0u8; 512];
    let mut sum = 0.0;
    // SAFETY: t is a live tensor borrowed for the call; C++ only reads it.
    let code = unsafe { dlpm_cxx_sum_strided(t, &mut sum, buf.as_mut_ptr().cast(), buf.len()) };
    if code == 0 {
        Ok(sum)
    } else {
        Err(CxxError {
            code,
            message: message(&buf),
        })
    }
}

/// A `rows x cols` f32 tensor made by C++ `to_managed_tensor` (value `100 i + j`), taken
/// over by Rust.
pub fn matrix_from_cxx(rows: i64, cols: i64, read_only: bool) -> Result<ManagedTensor, Error> {
    // SAFETY: plain values; the result is a new tensor owned by the caller, or NULL.
    let raw = unsafe { dlpm_cxx_make_matrix(rows, cols, i32::from(read_only)) };
    // SAFETY: raw is NULL (refused) or a fresh tensor whose ownership moves to Rust.
    unsafe { ManagedTensor::from_raw(raw) }
}

/// A valid 4-float tensor made in C++ whose deleter throws a C++ exception
/// (`std::runtime_error("boom from a C++ deleter")`), breaking the DLPack contract. The
/// caller owns it; deleting it must end the process with the facade's message, never
/// unwind into Rust. NULL only if C++ ran out of memory.
pub fn throwing_tensor_from_cxx() -> *mut sys::DLManagedTensorVersioned {
    // SAFETY: no arguments; the result is a new tensor owned by the caller, or NULL.
    unsafe { dlpm_cxx_make_throwing_tensor() }
}

/// How many C++ owners of `matrix_from_cxx` tensors are alive.
pub fn cxx_live_owners() -> i64 {
    // SAFETY: reads an atomic counter.
    unsafe { dlpm_cxx_live_owners() }
}
