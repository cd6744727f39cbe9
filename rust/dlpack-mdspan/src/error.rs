// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Status codes and the crate's error type.

use std::ffi::CStr;
use std::fmt;

use dlpack_mdspan_sys as sys;

/// A status code: the C facade's `dlpm_status` values (0 and up, stable, equal to the C++
/// core's `errc`), plus this crate's own conditions, which are negative so they can never
/// collide with a facade code.
///
/// Unknown values (from a newer facade) are representable.
///
/// ```
/// use dlpack_mdspan::Status;
/// assert_eq!(Status::DTYPE_MISMATCH.code(), 9);
/// assert_eq!(Status::DTYPE_MISMATCH.name(), "dtype mismatch");
/// assert!(Status::OK.is_ok());
/// assert!(Status::NOT_EXCLUSIVE.code() < 0);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Status(pub i32);

impl Status {
    /// Success (`DLPM_OK`).
    pub const OK: Status = Status(sys::DLPM_OK);
    /// A required pointer was NULL (`DLPM_E_NULL_POINTER`).
    pub const NULL_POINTER: Status = Status(sys::DLPM_E_NULL_POINTER);
    /// An extent does not fit the index type (`DLPM_E_EXTENT_OVERFLOW`).
    pub const EXTENT_OVERFLOW: Status = Status(sys::DLPM_E_EXTENT_OVERFLOW);
    /// A stride is unusable in address arithmetic (`DLPM_E_STRIDE_OVERFLOW`).
    pub const STRIDE_OVERFLOW: Status = Status(sys::DLPM_E_STRIDE_OVERFLOW);
    /// The layout is not strided (`DLPM_E_NOT_STRIDED`).
    pub const NOT_STRIDED: Status = Status(sys::DLPM_E_NOT_STRIDED);
    /// The device type is not accepted (`DLPM_E_DEVICE_MISMATCH`).
    pub const DEVICE_MISMATCH: Status = Status(sys::DLPM_E_DEVICE_MISMATCH);
    /// The device ordinal is not the required one (`DLPM_E_DEVICE_ID_MISMATCH`).
    pub const DEVICE_ID_MISMATCH: Status = Status(sys::DLPM_E_DEVICE_ID_MISMATCH);
    /// The rank is not the required one (`DLPM_E_NDIM_MISMATCH`).
    pub const NDIM_MISMATCH: Status = Status(sys::DLPM_E_NDIM_MISMATCH);
    /// The rank is outside 0..=64 (`DLPM_E_INVALID_NDIM`).
    pub const INVALID_NDIM: Status = Status(sys::DLPM_E_INVALID_NDIM);
    /// The dtype is not the required one (`DLPM_E_DTYPE_MISMATCH`).
    pub const DTYPE_MISMATCH: Status = Status(sys::DLPM_E_DTYPE_MISMATCH);
    /// The dtype is malformed (`DLPM_E_INVALID_DTYPE`).
    pub const INVALID_DTYPE: Status = Status(sys::DLPM_E_INVALID_DTYPE);
    /// `shape` is NULL while `ndim > 0` (`DLPM_E_NULL_SHAPE`).
    pub const NULL_SHAPE: Status = Status(sys::DLPM_E_NULL_SHAPE);
    /// An extent is negative (`DLPM_E_NEGATIVE_EXTENT`).
    pub const NEGATIVE_EXTENT: Status = Status(sys::DLPM_E_NEGATIVE_EXTENT);
    /// An extent differs from the required one (`DLPM_E_SHAPE_MISMATCH`).
    pub const SHAPE_MISMATCH: Status = Status(sys::DLPM_E_SHAPE_MISMATCH);
    /// `data` is NULL while the tensor has elements (`DLPM_E_NULL_DATA`).
    pub const NULL_DATA: Status = Status(sys::DLPM_E_NULL_DATA);
    /// Explicit strides are required (`DLPM_E_NULL_STRIDES`).
    pub const NULL_STRIDES: Status = Status(sys::DLPM_E_NULL_STRIDES);
    /// The strides are not the compact ones required (`DLPM_E_NON_COMPACT_STRIDES`).
    pub const NON_COMPACT_STRIDES: Status = Status(sys::DLPM_E_NON_COMPACT_STRIDES);
    /// A stride is zero or negative (`DLPM_E_NON_POSITIVE_STRIDE`).
    pub const NON_POSITIVE_STRIDE: Status = Status(sys::DLPM_E_NON_POSITIVE_STRIDE);
    /// Two dimensions overlap (`DLPM_E_OVERLAPPING_STRIDES`).
    pub const OVERLAPPING_STRIDES: Status = Status(sys::DLPM_E_OVERLAPPING_STRIDES);
    /// An element count or span overflows `i64` (`DLPM_E_SPAN_OVERFLOW`).
    pub const SPAN_OVERFLOW: Status = Status(sys::DLPM_E_SPAN_OVERFLOW);
    /// `byte_offset` is out of range (`DLPM_E_BYTE_OFFSET_OVERFLOW`).
    pub const BYTE_OFFSET_OVERFLOW: Status = Status(sys::DLPM_E_BYTE_OFFSET_OVERFLOW);
    /// `byte_offset` is not a multiple of the element size (`DLPM_E_MISALIGNED_BYTE_OFFSET`).
    pub const MISALIGNED_BYTE_OFFSET: Status = Status(sys::DLPM_E_MISALIGNED_BYTE_OFFSET);
    /// The data is not aligned as required (`DLPM_E_MISALIGNED_DATA`).
    pub const MISALIGNED_DATA: Status = Status(sys::DLPM_E_MISALIGNED_DATA);
    /// An extent is not a multiple of the required divisor (`DLPM_E_DIVISIBILITY`).
    pub const DIVISIBILITY: Status = Status(sys::DLPM_E_DIVISIBILITY);
    /// Sub-byte storage cannot be viewed this way (`DLPM_E_SUBBYTE_NOT_VIEWABLE`).
    pub const SUBBYTE_NOT_VIEWABLE: Status = Status(sys::DLPM_E_SUBBYTE_NOT_VIEWABLE);
    /// The layout has no unique answer (`DLPM_E_AMBIGUOUS_LAYOUT`).
    pub const AMBIGUOUS_LAYOUT: Status = Status(sys::DLPM_E_AMBIGUOUS_LAYOUT);
    /// No candidate type matches (`DLPM_E_NO_MATCHING_TYPE`).
    pub const NO_MATCHING_TYPE: Status = Status(sys::DLPM_E_NO_MATCHING_TYPE);
    /// The tensor is READ_ONLY (`DLPM_E_READ_ONLY`).
    pub const READ_ONLY: Status = Status(sys::DLPM_E_READ_ONLY);
    /// The DLPack major version is not ours (`DLPM_E_VERSION_MISMATCH`).
    pub const VERSION_MISMATCH: Status = Status(sys::DLPM_E_VERSION_MISMATCH);
    /// An argument is invalid, e.g. an index out of bounds (`DLPM_E_INVALID_ARGUMENT`).
    pub const INVALID_ARGUMENT: Status = Status(sys::DLPM_E_INVALID_ARGUMENT);
    /// An allocation failed (`DLPM_E_OUT_OF_MEMORY`).
    pub const OUT_OF_MEMORY: Status = Status(sys::DLPM_E_OUT_OF_MEMORY);
    /// `DLPM_E_INTERNAL`: an MPI call the C MPI layer made failed; no call of this crate returns it.
    pub const INTERNAL: Status = Status(sys::DLPM_E_INTERNAL);
    /// The tensor's `shape` or `strides` pointer is not aligned for `i64`
    /// (`DLPM_E_MISALIGNED_METADATA`). Such a tensor is malformed: its metadata is never
    /// read, and never turned into a `&[i64]`.
    pub const MISALIGNED_METADATA: Status = Status(sys::DLPM_E_MISALIGNED_METADATA);
    /// An options struct (`dlpm_requirements`) carries a `version` the facade does not
    /// know (`DLPM_E_UNSUPPORTED_VERSION`), e.g. a program built against a newer header.
    pub const UNSUPPORTED_VERSION: Status = Status(sys::DLPM_E_UNSUPPORTED_VERSION);
    /// The producer reported a failure of its own (`DLPM_E_PRODUCER_FAILED`), e.g. a
    /// Python `__dlpack__` that raised; its exception is left set.
    pub const PRODUCER_FAILED: Status = Status(sys::DLPM_E_PRODUCER_FAILED);

    /// This crate's own condition: a mutable reference was requested from a view whose
    /// elements may be aliased elsewhere (see [the mutation rules](crate#mutation-and-aliasing)).
    /// Never returned by the C facade.
    pub const NOT_EXCLUSIVE: Status = Status(-1);
    /// This crate's own condition: the bytes of a tensor from Python are already borrowed by
    /// Rust in a way that excludes this borrow: a writer (`PyTensorMut`, a mutable view of
    /// an imported `ManagedTensor`) overlaps another borrow, or a reader overlaps a writer
    /// (docs/rust.md, "Borrows of Python tensors"). Python raises it as `BufferError`.
    /// Never returned by the C facade.
    pub const ALREADY_BORROWED: Status = Status(-2);

    /// The numeric code.
    ///
    /// ```
    /// assert_eq!(dlpack_mdspan::Status::READ_ONLY.code(), 27);
    /// ```
    pub const fn code(self) -> i32 {
        self.0
    }

    /// Whether this is [`Status::OK`].
    ///
    /// ```
    /// assert!(!dlpack_mdspan::Status::READ_ONLY.is_ok());
    /// ```
    pub const fn is_ok(self) -> bool {
        self.0 == sys::DLPM_OK
    }

    /// A short fixed description: the facade's `dlpm_status_string` for facade codes
    /// ("unknown status" for codes it does not know), this crate's own text for its
    /// negative codes.
    ///
    /// ```
    /// use dlpack_mdspan::Status;
    /// assert_eq!(Status::READ_ONLY.name(), "tensor is read-only");
    /// assert_eq!(Status(1000).name(), "unknown status");
    /// ```
    pub fn name(self) -> &'static str {
        if self == Status::NOT_EXCLUSIVE {
            return "not exclusive";
        }
        if self == Status::ALREADY_BORROWED {
            return "already borrowed";
        }
        if self.0 < 0 {
            return "unknown status";
        }
        // SAFETY: dlpm_status_string accepts any value and returns a pointer to a fixed,
        // NUL-terminated string with static storage duration (a string literal), never NULL.
        let text = unsafe { CStr::from_ptr(sys::dlpm_status_string(self.0)) };
        text.to_str().unwrap_or("unknown status")
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Status({}: {})", self.0, self.name())
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error: a [`Status`] and the detailed message, for facade failures the text of the
/// facade's `dlpm_last_error()` captured right after the failing call (e.g.
/// `dtype int32 does not match the required float32`).
///
/// ```
/// use dlpack_mdspan::{ManagedTensor, Status};
///
/// let t = ManagedTensor::from_vec(vec![1i32, 2, 3], &[3])?;
/// let err = t.view::<f32>().unwrap_err();
/// assert_eq!(err.status(), Status::DTYPE_MISMATCH);
/// assert!(err.message().contains("does not match the required float32"));
/// println!("{err}"); // "dtype mismatch: dtype int32 does not match the required float32"
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    /// The status code, for matching.
    ///
    /// ```
    /// # use dlpack_mdspan::{ManagedTensor, Status};
    /// let t = ManagedTensor::from_vec(vec![0u8; 4], &[4])?;
    /// assert_eq!(t.view::<i8>().unwrap_err().status(), Status::DTYPE_MISMATCH);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn status(&self) -> Status {
        self.status
    }

    /// The detailed message.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let err = ManagedTensor::from_vec(vec![0u8; 4], &[-4]).unwrap_err();
    /// assert_eq!(err.message(), "shape[0] = -4 is negative");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// An error raised by this crate itself (not by the facade).
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Self {
        Error {
            status,
            message: message.into(),
        }
    }

    /// The error for a facade call that just returned `status` on this thread: the message
    /// is the facade's `dlpm_last_error()`.
    #[cold]
    #[inline(never)]
    pub(crate) fn from_facade(status: sys::dlpm_status) -> Self {
        // SAFETY: dlpm_last_error takes no arguments and returns a NUL-terminated string
        // (never NULL) that stays valid until the next failing facade call on this thread;
        // it is copied before any other facade call is made.
        let message = unsafe { CStr::from_ptr(sys::dlpm_last_error()) }
            .to_string_lossy()
            .into_owned();
        Error {
            status: Status(status),
            message,
        }
    }
}

/// `Ok(())` for `DLPM_OK`, otherwise the facade's error for `status`.
#[inline]
pub(crate) fn check(status: sys::dlpm_status) -> Result<(), Error> {
    if status == sys::DLPM_OK {
        Ok(())
    } else {
        Err(Error::from_facade(status))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("status", &self.status)
            .field("message", &self.message)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            f.write_str(self.status.name())
        } else {
            write!(f, "{}: {}", self.status.name(), self.message)
        }
    }
}

impl std::error::Error for Error {}
