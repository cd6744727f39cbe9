// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The checks every view and accessor shares: the facade's requirements for an element
//! type, slices over validated metadata, and the element-size rule of `Element`.

use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use dlpack_mdspan_sys as sys;

use crate::error::{check, Error, Status};
use crate::order::Order;
use crate::types::{DeviceType, Element, Flags};

/// The facade's defaults ("anything"): the header's `DLPM_REQUIREMENTS_INIT`, mirrored by the
/// `-sys` crate, for the one place that needs them in a const context: the view requirements
/// built at compile time ([`ViewRequirements`], [`C_ORDER`]).
const ANY: sys::dlpm_requirements = sys::DLPM_REQUIREMENTS_INIT;

/// Requirements that accept anything, from the facade (`dlpm_requirements_init`), to fill in.
pub(crate) fn any_requirements() -> sys::dlpm_requirements {
    let mut req = std::mem::MaybeUninit::<sys::dlpm_requirements>::zeroed();
    // SAFETY: a valid, writable struct of the version these bindings declare.
    let status =
        unsafe { sys::dlpm_requirements_init(req.as_mut_ptr(), sys::DLPM_REQUIREMENTS_VERSION) };
    debug_assert_eq!(status, sys::DLPM_OK);
    // SAFETY: zeroed, then every field written by the facade.
    unsafe { req.assume_init() }
}

/// Requirements of a C-contiguous (row-major) layout and nothing else, for slices.
pub(crate) const C_ORDER: sys::dlpm_requirements = {
    let mut req = ANY;
    req.order = b'C' as std::ffi::c_char;
    req
};

/// The largest rank the facade accepts, the length of the index and stride buffers.
pub(crate) const MAX_NDIM: usize = sys::DLPM_MAX_NDIM as usize;

/// The tensor a view is checked on: a bare `DLTensor` (no flags, as `dlpm_check`), a
/// managed one (with its READ_ONLY and sub-byte padding flags, as `dlpm_check_managed`), or
/// a `DLTensor` with the flags its owner is known to have (a Python argument's).
#[derive(Clone, Copy)]
pub(crate) enum Viewed<'a> {
    Bare(&'a sys::DLTensor),
    Managed(&'a sys::DLManagedTensorVersioned),
    #[cfg(feature = "pyo3")]
    Flagged(&'a sys::DLTensor, u64),
}

impl<'a> Viewed<'a> {
    /// The tensor and the flags the facade checks it with (0 for a bare `DLTensor`).
    pub(crate) fn parts(self) -> (&'a sys::DLTensor, u64) {
        match self {
            Viewed::Bare(t) => (t, 0),
            Viewed::Managed(m) => (&m.dl_tensor, m.flags),
            #[cfg(feature = "pyo3")]
            Viewed::Flagged(t, flags) => (t, flags),
        }
    }
}

/// How many device types the C++ core says the CPU may dereference
/// ([`DeviceType::is_host_accessible`], whose rule only ever says yes to types 0 to 31).
const HOST_DEVICE_TYPE_COUNT: usize = {
    let (mut n, mut t) = (0, 0);
    while t < 32 {
        if DeviceType(t).is_host_accessible() {
            n += 1;
        }
        t += 1;
    }
    n
};

/// Those device types, listed for the requirements of every view: the facade accepts a
/// tensor on any of them and refuses the others with DEVICE_MISMATCH, in its usual order of
/// checks.
static HOST_DEVICE_TYPES: [sys::DLDeviceType; HOST_DEVICE_TYPE_COUNT] = {
    let mut list = [0; HOST_DEVICE_TYPE_COUNT];
    let (mut n, mut t) = (0, 0);
    while t < 32 {
        if DeviceType(t).is_host_accessible() {
            list[n] = t;
            n += 1;
        }
        t += 1;
    }
    list
};

/// The requirements of a view of `T`, built at compile time: the dtype `T::DTYPE` exactly,
/// a host-accessible device, data aligned for `T`, and for [`WRITE`](Self::WRITE) not
/// READ_ONLY.
struct ViewRequirements<T>(std::marker::PhantomData<T>);

impl<T: Element> ViewRequirements<T> {
    const READ: sys::dlpm_requirements = Self::with_writable(0);
    const WRITE: sys::dlpm_requirements = Self::with_writable(1);

    const fn with_writable(writable: i32) -> sys::dlpm_requirements {
        let mut req = ANY;
        req.check_dtype = 1;
        req.dtype = T::DTYPE.0;
        req.device_types = HOST_DEVICE_TYPES.as_ptr();
        req.num_device_types = HOST_DEVICE_TYPE_COUNT as i32;
        req.min_alignment = std::mem::align_of::<T>() as u64;
        req.writable = writable;
        req
    }
}

/// The facade's checks for a view of `T`, and what they learned, in one call
/// (`dlpm_check_tensor`, [`check_view_layout`]): the structure, the dtype `T::DTYPE`
/// exactly, a host-accessible device, data aligned for `T`, one element of
/// `size_of::<T>()` bytes as the tensor stores it, and with `writable` (which only a managed
/// tensor's flags can refuse) not READ_ONLY; written to a `dlpm_checked_tensor`: the element
/// count and the strides as the library reads them.
///
/// Which devices are host-accessible is the C++ core's rule
/// ([`DeviceType::is_host_accessible`], held equal to `dlpm_is_host_accessible` by its
/// test), listed once in `HOST_DEVICE_TYPES`.
/// The requirements a view of `T` makes (dtype, host device, alignment; `writable`: not
/// READ_ONLY), as a constant.
pub(crate) fn view_requirements<T: Element>(writable: bool) -> &'static sys::dlpm_requirements {
    if writable {
        &ViewRequirements::<T>::WRITE
    } else {
        &ViewRequirements::<T>::READ
    }
}

#[inline]
pub(crate) fn check_view_layout<T: Element>(
    tensor: Viewed<'_>,
    writable: bool,
    checked: &mut MaybeUninit<sys::dlpm_checked_tensor>,
) -> Result<(), Error> {
    let (t, flags) = tensor.parts();
    let req = view_requirements::<T>(writable);
    let out = checked.as_mut_ptr();
    // SAFETY: `out` points to writable storage for the struct; its version field is set
    // before the call (the facade reads nothing else of it and writes the rest on success).
    unsafe { ptr::addr_of_mut!((*out).version).write(sys::DLPM_CHECKED_TENSOR_VERSION) };
    // The element-size rule (packed sub-byte elements have no byte address) is the core's:
    // the facade is told size_of::<T>() and compares it with the itemsize its check learned
    // (one compare; the rule words a mismatch).
    // SAFETY: the tensor is live (a reference); the facade checks it before reading its
    // arrays. req is a valid requirements struct whose device list is a static; `out` is
    // valid for writes of a whole dlpm_checked_tensor.
    let status = unsafe { sys::dlpm_check_tensor(t, flags, req, std::mem::size_of::<T>(), out) };
    if status != sys::DLPM_OK {
        return Err(view_refusal(tensor, req, status));
    }
    Ok(())
}

/// The facade's refusal (`status`) of a view of `tensor`; a managed tensor's READ_ONLY one
/// says why ([`read_only_refusal`]).
#[cold]
fn view_refusal(
    tensor: Viewed<'_>,
    req: &sys::dlpm_requirements,
    status: sys::dlpm_status,
) -> Error {
    match tensor {
        Viewed::Managed(m) if status == sys::DLPM_E_READ_ONLY => read_only_refusal(m, req),
        _ => Error::from_facade(status),
    }
}

/// The refusal of a writable view of `tensor`, READ_ONLY: the facade's, which says why where
/// its copy of the library set the flag (`dlpm_check_managed`: a legacy tensor's unknown
/// writability and how to import it writable, or what its producer forbids). Only a refused
/// writer gets here.
#[cold]
pub(crate) fn read_only_refusal(
    tensor: &sys::DLManagedTensorVersioned,
    req: &sys::dlpm_requirements,
) -> Error {
    // SAFETY: a live tensor (a reference) and a valid requirements struct.
    let status = unsafe { sys::dlpm_check_managed(tensor, req) };
    Error::from_facade(status)
}

/// `ndim` entries at `ptr` (a tensor's `shape` or `strides`, named by `what` in the
/// error), or an empty slice when `ndim <= 0` or `ptr` is NULL (never a slice built from a
/// NULL pointer).
///
/// A pointer that is not aligned for `i64` is refused with [`Status::MISALIGNED_METADATA`]
/// and never dereferenced: `slice::from_raw_parts` on it would be undefined behaviour (and
/// aborts in debug builds). The facade's checks (`dlpm_validate`, `dlpm_check*`) refuse
/// such a tensor before this is reached; checking here too keeps the crate sound when it is
/// linked (through `DLPACK_MDSPAN_LIB_DIR`) against a facade that predates that check.
///
/// # Safety
///
/// Unless `ndim <= 0` or `ptr` is NULL, `ptr` points to `ndim` initialised `i64` (if it is
/// aligned) that stay valid and unmodified for `'a`: call it only on a tensor the facade
/// has validated.
#[inline]
pub(crate) unsafe fn dims<'a>(ptr: *const i64, ndim: i32, what: &str) -> Result<&'a [i64], Error> {
    if ndim <= 0 || ptr.is_null() {
        return Ok(&[]);
    }
    if !ptr.is_aligned() {
        return Err(misaligned_metadata(ptr, what));
    }
    // SAFETY: non-NULL and aligned (tested above); the caller guarantees ndim readable
    // entries at ptr for 'a.
    Ok(unsafe { std::slice::from_raw_parts(ptr, ndim as usize) })
}

/// [`dims`] for a tensor that `dlpm_check_tensor` has accepted, reading what that check
/// proved instead of testing it again: `ndim` is in `0..=DLPM_MAX_NDIM`, a tensor of rank
/// above 0 has a non-NULL shape (the facade refuses a NULL one with `DLPM_E_NULL_SHAPE`),
/// and its arrays are aligned (`DLPM_E_MISALIGNED_METADATA`), so neither the rank's sign,
/// the pointer nor its alignment is tested. Rank 0 gives an empty slice whatever `ptr` is.
///
/// # Safety
///
/// The facade accepted the tensor; `ptr` is its `shape`, or its strides when they are not
/// NULL, valid and unmodified for `'a`.
#[inline(always)]
pub(crate) unsafe fn checked_dims<'a>(ptr: *const i64, ndim: i32) -> &'a [i64] {
    debug_assert!(
        (0..=MAX_NDIM as i32).contains(&ndim),
        "the facade accepted ndim = {ndim}"
    );
    // Rank 0: nothing to read, and a pointer the facade did not read need not be aligned
    // (nor be non-NULL).
    if ndim == 0 {
        return &[];
    }
    debug_assert!(
        !ptr.is_null() && ptr.is_aligned(),
        "dlpm_check_tensor accepted a NULL or misaligned array of rank {ndim}"
    );
    // SAFETY: non-NULL and aligned (the facade refused it otherwise); ndim is in 1..=64 and
    // the caller guarantees ndim readable entries at ptr for 'a.
    unsafe { std::slice::from_raw_parts(ptr, ndim as usize) }
}

#[cold]
fn misaligned_metadata(ptr: *const i64, what: &str) -> Error {
    Error::new(
        Status::MISALIGNED_METADATA,
        format!(
            "{what} = {ptr:p} is not aligned for int64_t ({} bytes)",
            std::mem::align_of::<i64>()
        ),
    )
}

/// Refuses an element type whose size is not one element of its dtype as stored with
/// `flags` (IS_SUBBYTE_TYPE_PADDED: one byte per sub-byte lane), for an export that has no
/// tensor to check yet: the facade checks an empty tensor of `T::DTYPE` told
/// `size_of::<T>()`, so the rule and its words are the C++ core's (`check_element_bytes`).
/// Its answer depends on nothing but the dtype, the size and the padding flag, so an
/// accepted triple is remembered ([`ACCEPTED_ELEMENT_SIZES`]) and not asked again: every
/// export of a type after its first makes no facade call here.
#[inline]
pub(crate) fn check_element_size<T: Element>(flags: u64) -> Result<(), Error> {
    let memo = element_size_memo::<T>(flags);
    if let Some((slot, key)) = memo {
        if slot.load(Ordering::Relaxed) == key {
            return Ok(());
        }
    }
    facade_element_size_check::<T>(flags)?;
    if let Some((slot, key)) = memo {
        slot.store(key, Ordering::Relaxed);
    }
    Ok(())
}

/// The memo's slot for `T` stored with `flags`, and the key that says the facade accepted
/// its size there (`None`: a size the memo does not keep). For a bare tensor (flags 0) both
/// are constants.
#[inline(always)]
fn element_size_memo<T: Element>(flags: u64) -> Option<(&'static AtomicU64, u64)> {
    let key = element_size_key(T::DTYPE.0, std::mem::size_of::<T>(), flags)?;
    Some((&ACCEPTED_ELEMENT_SIZES[element_size_slot(key)], key))
}

/// Triples (dtype, element size, padded) the facade has accepted, one per slot of a small
/// direct-mapped table (a later triple of the same slot replaces the one there; 0: none).
/// Only accepted ones are stored, and an entry is the whole key, so a hit is exactly an
/// earlier acceptance of the same question.
static ACCEPTED_ELEMENT_SIZES: [AtomicU64; 16] = [const { AtomicU64::new(0) }; 16];

/// The memo's key: the dtype's 32 bits, the size (when below 2^30; larger ones are not
/// remembered), the padding flag, and a top bit so that no key is 0.
#[inline]
fn element_size_key(dtype: sys::DLDataType, size: usize, flags: u64) -> Option<u64> {
    let size = u64::try_from(size).ok().filter(|&s| s < 1 << 30)?;
    let padded = u64::from(flags & Flags::IS_SUBBYTE_TYPE_PADDED.0 != 0);
    let dtype = u64::from(dtype.code) | u64::from(dtype.bits) << 8 | u64::from(dtype.lanes) << 16;
    Some(1 << 63 | padded << 62 | size << 32 | dtype)
}

#[inline]
fn element_size_slot(key: u64) -> usize {
    ((key ^ key >> 8 ^ key >> 16 ^ key >> 32) & 15) as usize
}

/// The facade's element-size check itself (see [`check_element_size`]).
#[cold]
fn facade_element_size_check<T: Element>(flags: u64) -> Result<(), Error> {
    let shape = [0i64];
    let empty = sys::DLTensor {
        data: ptr::null_mut(),
        device: sys::DLDevice {
            device_type: sys::kDLCPU,
            device_id: 0,
        },
        ndim: 1,
        dtype: T::DTYPE.0,
        shape: shape.as_ptr().cast_mut(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    let mut checked = MaybeUninit::<sys::dlpm_checked_tensor>::uninit();
    let out = checked.as_mut_ptr();
    // SAFETY: `out` is valid for writes of the struct; its version is set first.
    unsafe { ptr::addr_of_mut!((*out).version).write(sys::DLPM_CHECKED_TENSOR_VERSION) };
    // SAFETY: `empty` is a live, valid DLTensor whose shape outlives the call; NULL
    // requirements are the structure alone.
    check(unsafe {
        sys::dlpm_check_tensor(&empty, flags, ptr::null(), std::mem::size_of::<T>(), out)
    })
}

/// `dlpm_is_contiguous` as a `bool`.
pub(crate) fn is_contiguous(t: &sys::DLTensor, order: Order) -> Result<bool, Error> {
    let mut out = 0i32;
    // SAFETY: t is a live DLTensor (the facade validates it before reading shape/strides);
    // out is a valid out-parameter.
    check(unsafe { sys::dlpm_is_contiguous(t, order.as_c_char(), &mut out) })?;
    Ok(out != 0)
}

/// Every byte the elements of `t` (with `flags`) reach is 0 or 1, where `T` is a bool
/// (`kDLBool`, whose Rust `bool` has no other value): the facade's
/// `dlpm_check_bool_values_prechecked`, which reads every reached byte (at most 64 reads per
/// spanned byte) from what the view's check learned (`checked`), without checking the tensor
/// again. Nothing for any other `T` (every bit pattern is valid there: [`Element`]'s
/// contract), so the test is a constant.
///
/// # Safety
///
/// `t` passed the view's check for `T` with `flags` (host-accessible, its shape and strides
/// valid), `checked` is that check's form (of `t` with `flags`, or of an equal description,
/// its `tensor` alive), and every element `t` addresses is valid for reads now.
#[inline(always)]
pub(crate) unsafe fn check_bool_values<T: Element>(
    t: &sys::DLTensor,
    flags: u64,
    checked: *const sys::dlpm_checked_tensor,
) -> Result<(), Error> {
    if T::DTYPE.code().0 != sys::kDLBool {
        return Ok(());
    }
    #[inline(never)]
    unsafe fn read(
        t: &sys::DLTensor,
        flags: u64,
        checked: *const sys::dlpm_checked_tensor,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract: a checked host tensor whose elements are readable,
        // and its checked form.
        check(unsafe { sys::dlpm_check_bool_values_prechecked(t, flags, checked) })
    }
    // SAFETY: forwarded.
    unsafe { read(t, flags, checked) }
}

/// Whether no two indices of `t` reach the same element (`dlpm_is_unique`).
pub(crate) fn is_unique(t: &sys::DLTensor) -> Result<bool, Error> {
    let mut out = 0i32;
    // SAFETY: as is_contiguous's.
    check(unsafe { sys::dlpm_is_unique(t, &mut out) })?;
    Ok(out != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    // dims() refuses a misaligned pointer by itself, whatever the linked facade checked: no
    // slice is ever built over it (slice::from_raw_parts would abort in debug builds).
    #[test]
    fn dims_refuses_misaligned_pointers_without_reading_them() {
        let storage = [0u64; 3];
        let aligned = storage.as_ptr().cast::<i64>();
        let misaligned = aligned.cast::<u8>().wrapping_add(1).cast::<i64>();
        // SAFETY: aligned points to 3 readable i64 (u64 storage, same size and alignment).
        assert_eq!(unsafe { dims(aligned, 2, "shape") }.unwrap(), &[0, 0]);
        // SAFETY: dims must refuse the pointer before reading it.
        let err = unsafe { dims(misaligned, 2, "strides") }.unwrap_err();
        assert_eq!(err.status(), Status::MISALIGNED_METADATA);
        assert!(err.message().starts_with("strides = "), "{}", err.message());
        // Nothing is read for rank 0 or a NULL pointer, aligned or not.
        // SAFETY: not read.
        assert!(unsafe { dims(misaligned, 0, "shape") }.unwrap().is_empty());
        // SAFETY: not read.
        assert!(unsafe { dims(ptr::null(), 3, "shape") }.unwrap().is_empty());
    }

    // Every view lists HOST_DEVICE_TYPES as its accepted devices: exactly the types the
    // facade says the CPU may dereference (is_host_accessible's test covers the rest of i32).
    #[test]
    fn the_host_device_list_is_the_facades() {
        let facade: Vec<sys::DLDeviceType> = (-64..=512)
            // SAFETY: a plain function of its by-value argument.
            .filter(|&t| unsafe { sys::dlpm_is_host_accessible(t) } != 0)
            .collect();
        assert_eq!(&HOST_DEVICE_TYPES[..], &facade[..]);
        assert_eq!(
            HOST_DEVICE_TYPES,
            [
                sys::kDLCPU,
                sys::kDLCUDAHost,
                sys::kDLROCMHost,
                sys::kDLCUDAManaged
            ]
        );
        let req = ViewRequirements::<f32>::WRITE;
        assert_eq!(req.device_types, HOST_DEVICE_TYPES.as_ptr());
        assert_eq!(req.num_device_types, 4);
        assert_eq!(
            (req.check_dtype, req.writable, req.min_alignment),
            (1, 1, 4)
        );
        assert_eq!(ViewRequirements::<u16>::READ.writable, 0);
    }

    // The -sys mirror of DLPM_REQUIREMENTS_INIT is what dlpm_requirements_init writes, field
    // by field (the pointers NULL, as the facade's).
    #[test]
    fn the_requirements_initializer_is_the_facades_defaults() {
        let ours = ANY;
        let theirs = any_requirements();
        let fields = |r: &sys::dlpm_requirements| {
            (
                (
                    r.version,
                    r.check_dtype,
                    r.dtype.code,
                    r.dtype.bits,
                    r.dtype.lanes,
                    r.ndim,
                ),
                (
                    r.shape.is_null(),
                    r.order,
                    r.device_types.is_null(),
                    r.num_device_types,
                ),
                (
                    r.device_id,
                    r.min_alignment,
                    r.writable,
                    r.null_strides,
                    r.layout.leading_dim,
                ),
                (r.layout.stride_order.is_null(), r.layout.compact),
                (
                    r.layout.shape_divisors.is_null(),
                    r.layout.stride_divisors.is_null(),
                ),
            )
        };
        assert_eq!(fields(&ours), fields(&theirs));
    }
}
