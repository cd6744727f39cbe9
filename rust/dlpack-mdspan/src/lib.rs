// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Safe DLPack tensors for Rust, over the dlpack_mdspan C facade.
//!
//! Every rule (structure validation, dtype and device checks, version and flag handling,
//! legacy conversion, deleter bookkeeping) is the C++ library's, reached through its C
//! facade (`ffi/include/dlpack_mdspan.h`, raw bindings in [`sys`]). This crate adds
//! ownership in Rust's type system and typed element access on top.
//!
//! ```
//! use dlpack_mdspan::{ManagedTensor, Status};
//!
//! // Export a Vec: the tensor owns it; its deleter drops it, exactly once, on any thread.
//! let mut t = ManagedTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
//!
//! // Typed views are checked by the facade: dtype (code, bits, lanes), device, layout.
//! assert_eq!(t.view::<f32>()?.get(&[1, 2]), Some(&6.0));
//! let err = t.view::<f64>().unwrap_err();
//! assert_eq!(err.status(), Status::DTYPE_MISMATCH);
//!
//! // Mutable views need `&mut` and a writable tensor.
//! t.view_mut::<f32>()?.set(&[0, 0], 10.0)?;
//!
//! // Hand it to C (or Python, or C++) and take it back.
//! let raw = t.into_raw();
//! // SAFETY: `raw` is the live tensor from into_raw; ownership comes back to Rust.
//! let t = unsafe { ManagedTensor::from_raw(raw) }?;
//! assert_eq!(t.view::<f32>()?.as_slice()?, &[10.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
//! # Ok::<(), dlpack_mdspan::Error>(())
//! ```
//!
//! # Features
//!
//! - `half`, `num-complex`: `half::f16`, `half::bf16`, `num_complex::Complex<f32>` and
//!   `Complex<f64>` are [`Element`]s (beside this crate's own [`F16`], [`BF16`],
//!   [`Complex32`], [`Complex64`], with `From` conversions both ways).
//! - `ndarray`: `TensorView::as_array`, `TensorViewMut::as_array_mut` (zero-copy
//!   `ndarray` views, negative and zero strides included) and `ManagedTensor::from_ndarray`.
//! - `pyo3`: `PyTensor` and `PyTensorMut` arguments and `ManagedTensor` to and from Python,
//!   through the project's Python component (`dlpack-mdspan-python-sys`).
//!
//! # Ownership
//!
//! [`ManagedTensor`] owns one `DLManagedTensorVersioned*` and calls its deleter exactly
//! once when dropped, with the original pointer. [`ManagedTensor::into_raw`] and
//! [`ManagedTensor::into_legacy`] hand that duty on; [`ManagedTensor::from_raw`] and
//! [`ManagedTensor::from_raw_legacy`] take it over. A tensor received with a DLPack major
//! version other than 1 is released at once by the facade and refused with
//! [`Status::VERSION_MISMATCH`]. Legacy tensors become READ_ONLY unless you say the
//! producer allows writes (NumPy's policy).
//!
//! A foreign deleter must not throw: one that throws a C++ exception ends the process
//! (the facade prints `dlpack_mdspan: a DLPack tensor's deleter threw a C++ exception
//! (...)` and calls `abort()`), since unwinding it through Rust frames would be undefined
//! behaviour. Likewise a panic in the drop of an owner given to this crate aborts.
//!
//! Views ([`TensorView`], [`TensorViewMut`]) borrow the tensor, so they cannot outlive it.
//!
//! # Views and element types
//!
//! A view of `T` exists only if the facade accepts the tensor for `T`: a valid structure,
//! a dtype equal to `T::DTYPE` ([`Element`]: `u8`..`u64`, `i8`..`i64`, `f32`, `f64`,
//! `bool`, [`F16`], [`BF16`], [`Complex32`], [`Complex64`], or a type you register by
//! implementing the `unsafe` trait, as C++'s `dtype_traits`), a host-accessible device
//! ([`DeviceType::is_host_accessible`]) and data aligned for `T`. Shape and strides are
//! exposed as `&[i64]` (NULL strides are resolved as row-major by the facade, into
//! storage owned by the view; rank 0 gives empty slices), built only after the facade has
//! validated the tensor: a foreign `shape` or `strides` pointer that is not aligned for
//! `i64` is refused with [`Status::MISALIGNED_METADATA`], never read. [`TensorView::get`]
//! honours any strides and the `byte_offset`; [`TensorView::as_slice`] needs a
//! C-contiguous tensor.
//!
//! # Mutation and aliasing
//!
//! - A mutable view of a READ_ONLY tensor is refused ([`Status::READ_ONLY`]).
//! - [`ManagedTensor::view_mut`] takes `&mut self`: while a mutable view lives, no other
//!   view of that tensor exists in Rust.
//! - [`TensorViewMut::set`] writes through a raw pointer and never creates a `&mut`, so it
//!   is safe on every mutable view.
//! - Accessors that hand out `&mut T` or `&mut [T]` ([`TensorViewMut::get_mut`],
//!   [`TensorViewMut::as_mut_slice`]) are safe only on *exclusive* views, and return
//!   [`Status::NOT_EXCLUSIVE`] otherwise. A view is exclusive when the tensor was made by
//!   this crate from a `Vec` (and has not left Rust as a raw pointer since) or carries
//!   DLPack's IS_COPIED flag, *and* it is C- or F-contiguous, which rules out zero
//!   (broadcast), negative and overlapping strides. This follows dlpark's rule. Memory from
//!   anywhere else may be shared with its producer (a NumPy array, a PyTorch tensor, a C
//!   buffer), and a raw `DLTensor` carries no flags at all.
//! - For those, [`TensorViewMut::assume_exclusive`] is the `unsafe` escape hatch: the
//!   caller promises that nothing outside the view touches the elements while it lives.
//!   It vouches for that alone: a layout that reaches an element from two indices (zero or
//!   overlapping strides) is still refused by `as_array_mut`, and `as_mut_slice` still
//!   needs C-contiguous elements.
//!
//! The `unsafe` constructors ([`ManagedTensor::from_raw`], [`OwnerExport::finish`],
//! [`TensorView::from_raw`], [`TensorViewMut::from_raw`]) state what the producer must
//! guarantee: valid memory for every addressed element, no foreign writes while views
//! exist, and nothing else reaching the memory of a tensor flagged IS_COPIED. A `bool` view
//! reads its bytes when it is made (`dlpm_check_bool_values`) and
//! refuses a byte other than 0 or 1 with [`Status::INVALID_ARGUMENT`], so a producer that
//! lends other bytes (PyTorch's `u8.view(torch.bool)`) is refused, not read as `bool`.
//!
//! # Threads
//!
//! [`ManagedTensor`] is `Send` and `Sync`. DLPack allows the deleter to be called from any
//! thread, this crate's own deleter drops a `Send` owner, and `&ManagedTensor` gives only
//! read access (every write path needs `&mut` or an `unsafe` contract); there is no
//! interior mutability. Views are `Send`/`Sync` like `&[T]` and `&mut [T]`.
//!
//! # Errors
//!
//! [`Error`] carries the facade's status code ([`Status`], for matching) and the detailed
//! message of `dlpm_last_error()`, e.g. `shape[0] = -4 is negative` or
//! `dtype int32 does not match the required float32`.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks, missing_docs)]

mod access;
mod checks;
mod error;
mod layout;
mod managed;
mod order;
#[cfg(feature = "pyo3")]
mod python;
mod types;
mod view;

/// The raw bindings (`dlpack-mdspan-sys`), for passing tensors to and from C.
pub use dlpack_mdspan_sys as sys;

pub use error::{Error, Status};
pub use layout::LayoutRequirements;
pub use managed::{IntoLegacyError, ManagedTensor, OwnerExport, ReadOnlyCause, VecExport};
pub use order::Order;
#[cfg(feature = "pyo3")]
pub use python::{
    to_pyerr, PyImportOptions, PyTensor, PyTensorMut, ReadyStream, StreamOrder, StreamOrdered,
};
pub use types::{
    assert_element_layout, element_layout_ok, Complex32, Complex64, DataType, Device, DeviceType,
    Element, Flags, TypeCode, BF16, F16,
};
pub use view::{TensorView, TensorViewMut};

/// Versions of the linked C facade and of the DLPack headers it was built against.
///
/// ```
/// let v = dlpack_mdspan::version();
/// assert_eq!(v.dlpack_major, 1);
/// assert!(v.dlpack_minor >= 3);
/// ```
pub fn version() -> sys::dlpm_version_info {
    let mut out = sys::dlpm_version_info::default();
    // SAFETY: out is a valid out-parameter; dlpm_version only writes it.
    let status = unsafe { sys::dlpm_version(&mut out) };
    debug_assert_eq!(status, sys::DLPM_OK);
    out
}
