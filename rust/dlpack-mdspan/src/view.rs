// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Typed, validated views of host tensors.
//!
//! [`TensorView`] and [`TensorViewMut`] wrap one accessor, [`Elements`]: one facade call
//! checks the tensor for the element type and resolves its layout (`dlpm_check_tensor`: the
//! strides as the library reads them, NULL ones included, and the element count), and each
//! element addressed gets its byte offset from the facade without the tensor being
//! validated again (`dlpm_element_offset_prechecked`, which bounds-checks the index).

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use dlpack_mdspan_sys as sys;

use crate::checks::{
    check_view_layout, checked_dims, is_contiguous, is_unique, Viewed, C_ORDER, MAX_NDIM,
};
use crate::error::{check, Error, Status};
use crate::order::Order;
use crate::types::{DataType, Device, Element};

#[cfg(feature = "ndarray")]
mod ndarray_views;

/// The accessor both view types share: the validated tensor's fields and flags, and what a
/// view keeps beyond them ([`Kept`]), all fixed at construction. The shape is the tensor's
/// own array (`tensor.shape`, `tensor.ndim`), the strides the tensor's own or the row-major
/// ones the facade resolved for NULL strides, held in `kept`. Every element access of either
/// view goes through [`locate`](Self::locate), [`slice_base`](Self::slice_base) or
/// [`to_vec`](Self::to_vec).
///
/// 120 bytes, so that a `PyTensor` (the view and an 8-byte borrow) is 128, a size the
/// compiler copies in line where pyo3 moves the argument (docs/performance-history.md, "`PyTensor`
/// in 128 bytes").
struct Elements<'a, T> {
    /// The tensor's fields, copied (a view does not point at the `DLTensor` struct itself,
    /// only at what it points to: `shape`, `strides`, the elements), so that a borrowed
    /// argument can keep its view beside the struct it came from (`PyTensor`). Never
    /// written after construction: its `strides` and `ndim` say which field of `kept` is
    /// set ([`Elements::kind`]).
    tensor: sys::DLTensor,
    /// The flags the tensor was checked with (0 for a bare `DLTensor`): its elements are
    /// addressed with them (padded sub-byte elements by their padded size).
    flags: u64,
    kept: Kept,
    _elements: PhantomData<fn() -> T>,
    /// The shape and strides are borrowed for `'a`.
    _borrow: PhantomData<&'a [i64]>,
}

/// What a view keeps beyond the tensor's fields, by the kind of its strides
/// ([`Elements::kind`]), in 64 bytes:
/// - the tensor's own strides (not NULL): the element count and whether the view is
///   C-contiguous, as the facade's check found them (`own`);
/// - NULL strides up to rank [`INLINE_STRIDES`]: the row-major strides the facade resolved
///   (`inline`, the first `ndim` entries), so that such a view allocates nothing;
/// - NULL strides above it: the same, in an allocation it owns (`boxed`).
///
/// A view of NULL strides is C-contiguous (they are compact row-major) and its element
/// count is `shape[0] * strides[0]` (1 at rank 0), so neither is kept for it. The last word
/// is always written, and is [`BOXED`] for `boxed` alone (a resolved stride is never
/// negative; `own` writes 0 there, `inline` its eighth stride or 0), so that the drop and
/// the clone, which see no tensor, know when to free and copy the allocation. (A `Drop` of
/// the view itself would hold the borrow of the tensor until the view's scope ends: this
/// one borrows nothing.)
struct Kept(KeptWords);

/// The smallest and largest element index a checked tensor's elements reach, from its
/// first element (`dlpm_checked_tensor`'s `lowest_index` and `highest_index`): what a borrow
/// needs of the check to claim the bytes the view reaches. Only the Python borrows read its
/// fields, so without `pyo3` they are never read.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "pyo3"), allow(dead_code))]
pub(crate) struct Reach {
    pub(crate) lowest: i64,
    pub(crate) highest: i64,
}

impl Reach {
    /// What `checked` learned.
    #[inline(always)]
    pub(crate) fn of(checked: &sys::dlpm_checked_tensor) -> Self {
        Reach {
            lowest: checked.lowest_index,
            highest: checked.highest_index,
        }
    }
}

/// What a view's check does once it has learned the tensor's layout and before it reads any
/// element (a `bool` view reads its bytes): given the described tensor, its flags, the
/// element count and the reach, a Python borrow claims the bytes the view reaches
/// (`python/borrows.rs`), so that no element a writer holds is read. Views of anything else
/// claim nothing: [`no_claim`].
pub(crate) trait ClaimBeforeRead:
    FnOnce(&sys::DLTensor, u64, usize, Reach) -> Result<(), Error>
{
}
impl<F: FnOnce(&sys::DLTensor, u64, usize, Reach) -> Result<(), Error>> ClaimBeforeRead for F {}

/// The claim of a view that borrows nothing from Python: none.
#[inline(always)]
pub(crate) fn no_claim(_: &sys::DLTensor, _: u64, _: usize, _: Reach) -> Result<(), Error> {
    Ok(())
}

/// [`Kept`]'s fields, each 64 bytes, the last word of each at the same place.
#[derive(Clone, Copy)]
#[repr(C)]
union KeptWords {
    own: Own,
    inline: [MaybeUninit<i64>; INLINE_STRIDES],
    boxed: Boxed,
}

/// [`Kept`] for a view of the tensor's own strides.
#[derive(Clone, Copy)]
#[repr(C)]
struct Own {
    len: usize,
    /// C-contiguous, as the facade's check of the view found it (`dlpm_checked_tensor`'s
    /// `row_major`, nonzero: C-contiguous): a slice needs no second check. The facade's
    /// value in a whole word, so that no padding bytes are merged with another field's word
    /// where the kinds join, and no `bool` is made of it at construction.
    row_major: u64,
    _unused: [MaybeUninit<u64>; 5],
    /// 0 (not [`BOXED`]).
    last: i64,
}

/// [`Kept`] for a view of NULL strides above rank [`INLINE_STRIDES`]: `ndim` strides from a
/// `Box<[i64]>`, freed by the drop.
#[derive(Clone, Copy)]
#[repr(C)]
struct Boxed {
    strides: *mut i64,
    ndim: usize,
    _unused: [MaybeUninit<u64>; 5],
    /// [`BOXED`].
    last: i64,
}

/// [`Kept`]'s last word when it holds an allocation (`boxed`).
const BOXED: i64 = -1;

/// The highest rank whose resolved strides a view keeps inline (64 bytes): ranks above it
/// (up to `MAX_NDIM`) are rare, and keeping 64 strides inline would make every view 512
/// bytes larger.
const INLINE_STRIDES: usize = 8;

const _: () = assert!(std::mem::size_of::<KeptWords>() == 64);

impl Kept {
    /// The tensor's own strides: the element count and whether they are C-contiguous (the
    /// checked form's `row_major`: nonzero).
    #[inline(always)]
    fn own(len: usize, row_major: i32) -> Self {
        Kept(KeptWords {
            own: Own {
                len,
                row_major: u64::from(row_major as u32),
                _unused: [MaybeUninit::uninit(); 5],
                last: 0,
            },
        })
    }

    /// NULL strides resolved by the facade: its first `ndim` entries of `resolved`.
    ///
    /// # Safety
    ///
    /// `resolved` points to 64 entries readable as `MaybeUninit<i64>` (a
    /// `dlpm_checked_tensor`'s `strides`), the first `ndim` written.
    #[inline(always)]
    unsafe fn resolved(resolved: *const MaybeUninit<i64>, ndim: usize) -> Self {
        if ndim <= INLINE_STRIDES {
            // A fixed-size copy (no length-dependent loop); the last word is written either
            // way (a resolved stride, or 0).
            let mut inline = [MaybeUninit::<i64>::uninit(); INLINE_STRIDES];
            // SAFETY: the caller's contract: 64 readable entries.
            unsafe { std::ptr::copy_nonoverlapping(resolved, inline.as_mut_ptr(), INLINE_STRIDES) };
            if ndim < INLINE_STRIDES {
                inline[INLINE_STRIDES - 1] = MaybeUninit::new(0);
            }
            Kept(KeptWords { inline })
        } else {
            // SAFETY: the first ndim entries were written by the facade (the contract).
            let strides: Box<[i64]> = (0..ndim)
                .map(|r| unsafe { (*resolved.add(r)).assume_init() })
                .collect();
            Kept(KeptWords {
                boxed: Boxed {
                    strides: Box::into_raw(strides).cast::<i64>(),
                    ndim,
                    _unused: [MaybeUninit::uninit(); 5],
                    last: BOXED,
                },
            })
        }
    }

    /// The allocation, when the view holds one (`boxed`).
    #[inline(always)]
    fn boxed(&self) -> Option<Boxed> {
        // SAFETY: every field writes the last word (the constructors above), so it is an
        // initialised i64 whichever field is set, and is BOXED only for `boxed`, which is
        // read only then (another field's unused words are uninitialised).
        unsafe {
            if self.0.inline[INLINE_STRIDES - 1].assume_init() == BOXED {
                Some(self.0.boxed)
            } else {
                None
            }
        }
    }
}

impl Clone for Kept {
    fn clone(&self) -> Self {
        let mut words = self.0;
        if let Some(b) = self.boxed() {
            // SAFETY: `ndim` entries from a Box<[i64]> this Kept owns, alive while it is.
            let strides = unsafe { std::slice::from_raw_parts(b.strides, b.ndim) };
            words.boxed.strides = Box::into_raw(Box::<[i64]>::from(strides)).cast::<i64>();
        }
        Kept(words)
    }
}

impl Drop for Kept {
    // In line: a view's drop is this test of the last word (out of line, it was a call per
    // view); the allocation's free is `free_boxed`'s.
    #[inline]
    fn drop(&mut self) {
        if let Some(b) = self.boxed() {
            // SAFETY: the allocation this Kept made (resolved) or copied (clone) and owns
            // alone, freed once: here, as it is dropped.
            unsafe { free_boxed(b) };
        }
    }
}

/// Frees [`Kept`]'s allocation (NULL strides above rank [`INLINE_STRIDES`]: rare).
///
/// # Safety
///
/// `b.strides` is a `Box<[i64]>` of `b.ndim` entries that nothing else owns or uses after.
#[cold]
#[inline(never)]
unsafe fn free_boxed(b: Boxed) {
    // SAFETY: the caller's contract.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(b.strides, b.ndim)) });
}

/// Which field of [`Kept`] a view set.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Own,
    Inline,
    Boxed,
}

impl<T> Elements<'_, T> {
    /// Which field of `kept` is set: fixed by the tensor's fields, which are never written
    /// after construction.
    #[inline(always)]
    fn kind(&self) -> Kind {
        if !self.tensor.strides.is_null() {
            Kind::Own
        } else if self.tensor.ndim as usize <= INLINE_STRIDES {
            Kind::Inline
        } else {
            Kind::Boxed
        }
    }
}

impl<T> Clone for Elements<'_, T> {
    fn clone(&self) -> Self {
        Elements {
            tensor: self.tensor,
            flags: self.flags,
            kept: self.kept.clone(),
            _elements: PhantomData,
            _borrow: PhantomData,
        }
    }
}

impl<'a, T: Element> Elements<'a, T> {
    /// The facade's checks for a view of `T` (`check_view_layout`: with `writable`, not
    /// READ_ONLY), then the accessor over the layout the same call resolved.
    ///
    /// # Safety
    ///
    /// The tensor's shape and strides stay valid and unmodified for `'a` (the contract of
    /// the views' `from_raw`, or a managed tensor borrowed for `'a`).
    // Always inlined, as `checked` is, into the caller's `from_raw` or `view`: built out of
    // line, the view came back through memory in a `Result`, and `#[inline]` alone let the
    // compiler choose worse (the counts: docs/performance-history.md, "The element-count tree and
    // the Rust views").
    ///
    /// `claim` is asked once the layout is known, before any element is read
    /// ([`ClaimBeforeRead`]).
    #[inline(always)]
    unsafe fn check(
        tensor: Viewed<'a>,
        writable: bool,
        claim: impl ClaimBeforeRead,
    ) -> Result<Self, Error> {
        // The checked tensor as the facade fills it (dlpm_check_tensor): the element count
        // and the strides as the library reads them (computed for NULL ones, so there is a
        // single definition of "row-major"), from the call that checks the tensor, the
        // element size included.
        let mut checked = MaybeUninit::<sys::dlpm_checked_tensor>::uninit();
        check_view_layout::<T>(tensor, writable, &mut checked)?;
        // SAFETY: written by the facade on success, of this tensor with its flags; the
        // shape and strides are this function's contract.
        unsafe { Self::from_checked(tensor, checked.as_ptr(), claim) }
    }

    /// The accessor over the layout a check already resolved: `out`, the checked form of
    /// `tensor` (the facade's `dlpm_check_tensor`, or a checked form the Python component
    /// handed back: `PyTensor`).
    ///
    /// # Safety
    ///
    /// `out` points to a `dlpm_checked_tensor` that describes exactly `tensor` with its
    /// flags (written by `dlpm_check_tensor` of the same data, shape and strides, or a copy
    /// of one) and whose check included the requirements of a view of `T`
    /// ([`view_requirements`](crate::checks::view_requirements)) and the element size
    /// (`size_of::<T>()`); and the tensor's shape and strides stay valid and unmodified for
    /// `'a`. `claim` is asked before any element is read ([`ClaimBeforeRead`]).
    #[inline(always)]
    unsafe fn from_checked(
        tensor: Viewed<'a>,
        out: *const sys::dlpm_checked_tensor,
        claim: impl ClaimBeforeRead,
    ) -> Result<Self, Error> {
        let (t, flags) = tensor.parts();
        // SAFETY: the caller's contract: a checked form of this tensor.
        let (numel, row_major) = unsafe { ((*out).numel, (*out).row_major) };
        // The element count fits the address space in bytes; the view keeps it only for its
        // own strides (a view of NULL strides derives it: Kept).
        let size = std::mem::size_of::<T>();
        let len = usize::try_from(numel)
            .ok()
            .filter(|n| {
                n.checked_mul(size)
                    .is_some_and(|bytes| bytes <= isize::MAX as usize)
            })
            .ok_or_else(|| {
                Error::new(
                    Status::SPAN_OVERFLOW,
                    format!("{numel} elements do not fit this platform's address space"),
                )
            })?;
        // The claim, before the view is built (nothing of it is kept across the call) and
        // before any element is read.
        // SAFETY: the caller's contract: a checked form of this tensor.
        claim(t, flags, len, Reach::of(unsafe { &*out }))?;
        // The facade has validated the shape (aligned, non-negative extents, product within
        // i64) and the strides (aligned); ndim is 0 to 64.
        let ndim = t.ndim as usize;
        let kept = if !t.strides.is_null() {
            Kept::own(len, row_major)
        } else {
            // NULL strides read as compact row-major (DLPM_NULL_STRIDES_ROW_MAJOR; the view's
            // requirements refuse no NULL strides).
            debug_assert!(
                row_major != 0,
                "the facade found NULL strides not row-major"
            );
            // SAFETY: a field address of the struct, no reference to uninitialised memory;
            // its 64 entries are readable as MaybeUninit<i64>, the first ndim written by the
            // facade (the caller's contract: a checked form of this tensor).
            unsafe {
                Kept::resolved(
                    std::ptr::addr_of!((*out).strides).cast::<MaybeUninit<i64>>(),
                    ndim,
                )
            }
        };
        let elements = Elements {
            tensor: *t,
            flags,
            kept,
            _elements: PhantomData,
            _borrow: PhantomData,
        };
        debug_assert_eq!(elements.len(), len, "a view's derived element count");
        // A bool view reads its bytes once, here, after the claim, from what the check
        // learned: a producer may lend bytes other than 0 and 1, which no `&bool` may point
        // at (a constant `Ok` for every other T).
        // SAFETY: checked for a view of T with these flags, `out` its form (the caller's
        // contract), whose elements are readable for 'a (the view's contract).
        unsafe { crate::checks::check_bool_values::<T>(t, flags, out) }?;
        Ok(elements)
    }

    /// The tensor's shape (empty for rank 0).
    #[inline(always)]
    fn shape(&self) -> &'a [i64] {
        // SAFETY: the facade accepted the tensor (construction): its shape holds ndim entries
        // valid and unmodified for 'a (the view's contract), or ndim is 0.
        unsafe { checked_dims(self.tensor.shape, self.tensor.ndim) }
    }

    #[inline(always)]
    fn strides(&self) -> &[i64] {
        let ndim = self.tensor.ndim as usize;
        match self.kind() {
            // SAFETY: not NULL, so aligned (the facade checked it) and holding ndim entries
            // valid for 'a (or ndim is 0).
            Kind::Own => unsafe { checked_dims(self.tensor.strides, self.tensor.ndim) },
            // SAFETY: `inline` is the set field (kind), its first ndim entries written by the
            // facade (from_checked); MaybeUninit<i64> has i64's layout.
            Kind::Inline => unsafe {
                std::slice::from_raw_parts(self.kept.0.inline.as_ptr().cast::<i64>(), ndim)
            },
            // SAFETY: `boxed` is the set field (kind): ndim entries the view owns.
            Kind::Boxed => unsafe { std::slice::from_raw_parts(self.kept.0.boxed.strides, ndim) },
        }
    }

    /// The element count (1 for rank 0), which fits the address space in bytes (checked at
    /// construction).
    #[inline(always)]
    fn len(&self) -> usize {
        if self.kind() == Kind::Own {
            // SAFETY: `own` is the set field (kind).
            return unsafe { self.kept.0.own.len };
        }
        // NULL strides: compact row-major, so strides[0] is the product of the other extents
        // (0 when one is 0: the facade's product saturates, and 0 times anything is 0) and
        // shape[0] times it the count, which fits (checked at construction).
        match (self.shape().first(), self.strides().first()) {
            (Some(&n), Some(&s)) => (n as usize).wrapping_mul(s as usize),
            _ => 1,
        }
    }

    /// C-contiguous, as the facade's check of the view found it (NULL strides always are).
    #[inline(always)]
    fn row_major(&self) -> bool {
        // SAFETY: `own` is the set field when the kind is Own.
        self.kind() != Kind::Own || unsafe { self.kept.0.own.row_major != 0 }
    }

    fn device(&self) -> Device {
        Device(self.tensor.device)
    }

    fn is_contiguous(&self, order: Order) -> Result<bool, Error> {
        is_contiguous(&self.tensor, order)
    }

    /// The address of element `index`: [`Status::NDIM_MISMATCH`] for an index of the
    /// wrong length; otherwise the facade's `dlpm_element_offset_prechecked` (the offset
    /// `dlpm_element_offset` gives, without validating the tensor again), which refuses an index
    /// outside the shape with [`Status::INVALID_ARGUMENT`] (`index[r] = i is outside
    /// [0, n)`) and gives the byte offset, `byte_offset` included, of one inside it.
    fn locate(&self, index: &[usize]) -> Result<NonNull<T>, Error> {
        // The rank from the tensor's field (0 to 64, validated): the shape's slice is made
        // only for a refusal's words.
        let ndim = self.tensor.ndim as usize;
        if index.len() != ndim {
            return Err(Error::new(
                Status::NDIM_MISMATCH,
                format!(
                    "the index has {} entries but the tensor has rank {ndim}",
                    index.len()
                ),
            ));
        }
        // The facade reads ndim int64_t entries; an index beyond i64 is outside any shape.
        let mut wide = [MaybeUninit::<i64>::uninit(); MAX_NDIM];
        for (r, (&i, slot)) in index.iter().zip(&mut wide).enumerate() {
            let i = i64::try_from(i).map_err(|_| {
                Error::new(
                    Status::INVALID_ARGUMENT,
                    format!("index[{r}] = {i} is outside [0, {})", self.shape()[r]),
                )
            })?;
            slot.write(i);
        }
        let mut offset = 0i64;
        // SAFETY: the tensor passed dlpm_check_tensor with these flags when the view was
        // made, and its shape and strides stay valid and unmodified for 'a:
        // dlpm_element_offset_prechecked's precondition. The first ndim entries of `wide`
        // are initialised (index.len() == ndim <= MAX_NDIM), and the facade reads no more;
        // offset is a valid out-parameter.
        check(unsafe {
            sys::dlpm_element_offset_prechecked(
                &self.tensor,
                self.flags,
                wide.as_ptr().cast(),
                &mut offset,
            )
        })?;
        let bytes = isize::try_from(offset)
            .map_err(|_| Error::new(Status::SPAN_OVERFLOW, "element offset overflows"))?;
        let p = self
            .tensor
            .data
            .cast::<u8>()
            .wrapping_offset(bytes)
            .cast::<T>();
        // A tensor with an element has non-NULL data (validated), and the address lies in
        // the allocation it describes.
        NonNull::new(p).ok_or_else(|| Error::new(Status::NULL_DATA, "data is NULL"))
    }

    /// The first element of a C-contiguous tensor as a slice base (dangling when empty);
    /// other layouts are refused with [`Status::NON_COMPACT_STRIDES`], in the facade's words.
    fn slice_base(&self) -> Result<NonNull<T>, Error> {
        if !self.row_major() {
            return Err(self.not_row_major());
        }
        if self.len() == 0 {
            return Ok(NonNull::dangling());
        }
        NonNull::new(self.origin()).ok_or_else(|| Error::new(Status::NULL_DATA, "data is NULL"))
    }

    /// The address of element [0, ..., 0], `data + byte_offset` (computed without a claim
    /// that it lies in an allocation: an empty tensor's may be anything).
    #[inline(always)]
    fn origin(&self) -> *mut T {
        self.tensor
            .data
            .cast::<u8>()
            .wrapping_add(self.tensor.byte_offset as usize)
            .cast::<T>()
    }

    /// Why the view is no slice: the facade's refusal of the tensor as C-contiguous (the
    /// view's own check, with `C_ORDER`), asked only when the view's check found it is not.
    #[cold]
    fn not_row_major(&self) -> Error {
        let mut checked = MaybeUninit::<sys::dlpm_checked_tensor>::uninit();
        let out = checked.as_mut_ptr();
        // SAFETY: `out` is valid for writes of the struct; its version is set first.
        unsafe { std::ptr::addr_of_mut!((*out).version).write(sys::DLPM_CHECKED_TENSOR_VERSION) };
        // SAFETY: the tensor passed this check (without the order) when the view was made,
        // and stays valid for 'a; C_ORDER is a valid requirements struct.
        match check(unsafe { sys::dlpm_check_tensor(&self.tensor, self.flags, &C_ORDER, 0, out) }) {
            Err(e) => e,
            Ok(()) => Error::new(
                Status::INTERNAL,
                "dlpm_check_tensor found C-contiguous a tensor its view's check did not",
            ),
        }
    }

    /// The elements copied out in row-major (logical) order, or OUT_OF_MEMORY when the
    /// copy's allocation fails (a broadcast view's elements count once per index: a view of
    /// a few bytes may have 2^60 of them).
    fn try_to_vec(&self) -> Result<Vec<T>, Error> {
        // The count, derived for a view of NULL strides (Elements::len), read once.
        let len = self.len();
        // Only a C-contiguous view asks for its slice (another's refusal would be worded).
        if self.row_major() {
            if let Ok(base) = self.slice_base() {
                // SAFETY: C-contiguous (checked by the facade): len consecutive, aligned
                // elements valid for reads and unwritten while the view is borrowed (or a
                // dangling pointer for len 0).
                let elements = unsafe { std::slice::from_raw_parts(base.as_ptr(), len) };
                let mut out = Vec::new();
                reserve_copy(&mut out, len)?;
                out.extend_from_slice(elements);
                return Ok(out);
            }
        }
        let shape = self.shape();
        let mut out = Vec::new();
        reserve_copy(&mut out, len)?;
        if len == 0 {
            return Ok(out);
        }
        let mut index = vec![0usize; shape.len()];
        loop {
            let p = self.locate(&index).expect("index in bounds");
            // SAFETY: an in-bounds element of a validated view of T (see TensorView::get).
            out.push(unsafe { p.as_ptr().read() });
            // Row-major odometer.
            let mut r = shape.len();
            loop {
                if r == 0 {
                    return Ok(out);
                }
                r -= 1;
                index[r] += 1;
                if (index[r] as i64) < shape[r] {
                    break;
                }
                index[r] = 0;
            }
        }
    }
}

/// Room for a copy of `len` elements in `out`, or OUT_OF_MEMORY naming the count.
fn reserve_copy<T>(out: &mut Vec<T>, len: usize) -> Result<(), Error> {
    out.try_reserve_exact(len).map_err(|_| {
        Error::new(
            Status::OUT_OF_MEMORY,
            format!(
                "to_vec: no memory for a copy of {len} elements of {} bytes (a broadcast view counts an element once per index)",
                std::mem::size_of::<T>()
            ),
        )
    })
}

/// The read-only accessors [`TensorView`] and [`TensorViewMut`] share, written once: each
/// expands them in its own `impl`, so either type's public API is what it was. `$mut` and
/// `$view` make each type's doc examples (`let t` and `t.view()`, or `let mut t` and
/// `t.view_mut()`).
macro_rules! shared_accessors {
    ($mut:literal, $view:literal) => {
        /// The shape (empty for rank 0).
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::ManagedTensor;\n",
            "let ", $mut, "t = ManagedTensor::from_vec(vec![0u8; 6], &[2, 3])?;\n",
            "assert_eq!(t.", $view, "::<u8>()?.shape(), &[2, 3]);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn shape(&self) -> &'a [i64] {
            self.elements.shape()
        }

        /// The strides in elements (empty for rank 0; row-major when the tensor's are NULL).
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::ManagedTensor;\n",
            "let ", $mut, "t = ManagedTensor::from_vec(vec![0u8; 6], &[2, 3])?;\n",
            "assert_eq!(t.", $view, "::<u8>()?.strides(), &[3, 1]);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn strides(&self) -> &[i64] {
            self.elements.strides()
        }

        /// The rank.
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::ManagedTensor;\n",
            "let ", $mut, "t = ManagedTensor::from_vec(vec![0u8], &[])?;\n",
            "assert_eq!(t.", $view, "::<u8>()?.ndim(), 0);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn ndim(&self) -> usize {
            self.elements.shape().len()
        }

        /// The number of elements (1 for rank 0).
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::ManagedTensor;\n",
            "let ", $mut, "t = ManagedTensor::from_vec(vec![0u8; 6], &[2, 3])?;\n",
            "assert_eq!(t.", $view, "::<u8>()?.len(), 6);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn len(&self) -> usize {
            self.elements.len()
        }

        /// Whether the tensor has no elements.
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::ManagedTensor;\n",
            "let ", $mut, "t = ManagedTensor::from_vec(Vec::<u8>::new(), &[0, 3])?;\n",
            "assert!(t.", $view, "::<u8>()?.is_empty());\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn is_empty(&self) -> bool {
            self.elements.len() == 0
        }

        /// The device (host-accessible).
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::{Device, ManagedTensor};\n",
            "let ", $mut, "t = ManagedTensor::from_vec(vec![0u8], &[1])?;\n",
            "assert_eq!(t.", $view, "::<u8>()?.device(), Device::CPU);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn device(&self) -> Device {
            self.elements.device()
        }

        /// The dtype, `T::DTYPE`.
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::{DataType, ManagedTensor};\n",
            "let ", $mut, "t = ManagedTensor::from_vec(vec![0u8], &[1])?;\n",
            "assert_eq!(t.", $view, "::<u8>()?.dtype(), DataType::U8);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn dtype(&self) -> DataType {
            T::DTYPE
        }

        /// Whether the view is contiguous in `order` (`dlpm_is_contiguous`).
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::{ManagedTensor, Order};\n",
            "let ", $mut, "t = ManagedTensor::build_from_vec(vec![0u8; 6], &[3, 2]).strides(&[1, 3]).finish()?;\n",
            "assert!(t.", $view, "::<u8>()?.is_contiguous(Order::F)?);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn is_contiguous(&self, order: Order) -> Result<bool, Error> {
            self.elements.is_contiguous(order)
        }

        /// Whether no two indices reach the same element (`dlpm_is_unique`): false for a
        /// broadcast (stride 0 over an extent above 1) or overlapping strides; true for an
        /// empty view. A few unique but interleaved layouts answer false.
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::{Flags, ManagedTensor};\n",
            "let ", $mut, "t = ManagedTensor::from_vec(vec![0u8; 6], &[2, 3])?;\n",
            "assert!(t.", $view, "::<u8>()?.is_unique()?);\n",
            "let ", $mut, "b = ManagedTensor::build_from_vec(vec![0u8; 3], &[2, 3]).strides(&[0, 1]).finish()?;\n",
            "assert!(!b.", $view, "::<u8>()?.is_unique()?);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn is_unique(&self) -> Result<bool, Error> {
            is_unique(&self.elements.tensor)
        }

        /// The elements copied out in row-major (logical) order, whatever the strides.
        /// Panics where the copy cannot be allocated (a broadcast view may count 2^60
        /// elements over a few bytes): [`try_to_vec`](Self::try_to_vec) returns the error.
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::ManagedTensor;\n",
            "let ", $mut, "t = ManagedTensor::build_from_vec(vec![1u8, 2, 3, 4], &[2, 2]).strides(&[1, 2]).finish()?;\n",
            "assert_eq!(t.", $view, "::<u8>()?.to_vec(), vec![1, 3, 2, 4]);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn to_vec(&self) -> Vec<T> {
            self.elements.try_to_vec().unwrap_or_else(|e| panic!("{e}"))
        }

        /// [`to_vec`](Self::to_vec), or [`Status::OUT_OF_MEMORY`] where the copy cannot be
        /// allocated.
        ///
        #[doc = concat!(
            "```\n# use dlpack_mdspan::{ManagedTensor, Status};\n",
            "let ", $mut, "b = ManagedTensor::build_from_vec(vec![7u8], &[1 << 31, 1 << 31]).strides(&[0, 0]).finish()?;\n",
            "assert_eq!(b.", $view, "::<u8>()?.try_to_vec().unwrap_err().status(), Status::OUT_OF_MEMORY);\n",
            "# Ok::<(), dlpack_mdspan::Error>(())\n```"
        )]
        pub fn try_to_vec(&self) -> Result<Vec<T>, Error> {
            self.elements.try_to_vec()
        }
    };
}

/// A shared, typed, validated view of a host tensor: like `&'a [T]` with a shape and
/// strides. Borrowed from a [`ManagedTensor`](crate::ManagedTensor) with
/// [`view`](crate::ManagedTensor::view), or made from a raw `DLTensor` with
/// [`from_raw`](Self::from_raw).
///
/// ```
/// use dlpack_mdspan::ManagedTensor;
///
/// let t = ManagedTensor::build_from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 2]).strides(&[3, 2]).finish()?;
/// let v = t.view::<i32>()?;
/// assert_eq!(v.strides(), &[3, 2]);
/// assert_eq!(v.get(&[1, 1]), Some(&6));
/// assert_eq!(v.get(&[2, 0]), None);
/// assert_eq!(v.to_vec(), vec![1, 3, 4, 6]);
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
pub struct TensorView<'a, T: Element> {
    elements: Elements<'a, T>,
    _borrow: PhantomData<&'a [T]>,
}

// SAFETY: a TensorView only reads elements of type T, which is Sync (Element requires it),
// and the DLTensor it borrows, which nobody mutates during 'a; like &'a [T], it may be sent
// to and shared between threads.
unsafe impl<T: Element> Send for TensorView<'_, T> {}
// SAFETY: see the Send impl above.
unsafe impl<T: Element> Sync for TensorView<'_, T> {}

impl<'a, T: Element> TensorView<'a, T> {
    /// A view of `tensor` after the facade's checks for `T` (see
    /// [`from_raw`](Self::from_raw); a managed tensor's flags are checked too).
    ///
    /// # Safety
    ///
    /// The contract of [`from_raw`](Self::from_raw) holds for `'a`.
    /// `claim` is asked before any element is read ([`ClaimBeforeRead`]).
    #[inline(always)]
    pub(crate) unsafe fn checked(
        tensor: Viewed<'a>,
        claim: impl ClaimBeforeRead,
    ) -> Result<Self, Error> {
        // SAFETY: forwarded from this function's contract.
        let elements = unsafe { Elements::check(tensor, false, claim) }?;
        Ok(TensorView {
            elements,
            _borrow: PhantomData,
        })
    }

    /// A view of `tensor` from a checked form made elsewhere (the Python component's,
    /// handed back by its borrow: `PyTensor`), with no facade check of the tensor here; only
    /// the element-size rule for `T` (remembered per type after its first facade call).
    ///
    /// # Safety
    ///
    /// The contract of [`from_raw`](Self::from_raw) holds for `'a`, and `checked` describes
    /// exactly `tensor` with its flags and was checked with the requirements of a view of `T`
    /// (see `Elements::from_checked`).
    #[cfg(feature = "pyo3")]
    #[inline(always)]
    pub(crate) unsafe fn from_checked_form(
        tensor: Viewed<'a>,
        checked: &sys::dlpm_checked_tensor,
        claim: impl ClaimBeforeRead,
    ) -> Result<Self, Error> {
        crate::checks::check_element_size::<T>(tensor.parts().1)?;
        // SAFETY: forwarded from this function's contract; the element size is checked above.
        let elements = unsafe { Elements::from_checked(tensor, checked, claim) }?;
        Ok(TensorView {
            elements,
            _borrow: PhantomData,
        })
    }

    /// A view of a bare `DLTensor` (no flags, no owner), after the facade's checks
    /// (`dlpm_check_tensor` with no flags, as `dlpm_check`): structure, dtype equal to
    /// `T::DTYPE`, a host-accessible device, data aligned for `T`.
    ///
    /// # Safety
    ///
    /// For `'a`: the tensor's `shape` and `strides` stay valid and unmodified; every
    /// element it addresses is valid for reads; and no other code writes those elements. (A
    /// `bool` view reads its bytes when it is made, and refuses one that is neither 0 nor 1
    /// with [`Status::INVALID_ARGUMENT`](crate::Status::INVALID_ARGUMENT); every other
    /// [`Element`] accepts any bit pattern: see its safety contract.)
    ///
    /// ```
    /// use dlpack_mdspan::{sys, TensorView, DataType, Device};
    ///
    /// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// let mut shape = [3i64, 2];
    /// let t = sys::DLTensor {
    ///     data: data.as_ptr().cast_mut().cast(),
    ///     device: Device::CPU.0,
    ///     ndim: 2,
    ///     dtype: DataType::F32.0,
    ///     shape: shape.as_mut_ptr(),
    ///     strides: std::ptr::null_mut(), // row-major
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: `data` and `shape` outlive the view and are not written while it lives.
    /// let v = unsafe { TensorView::<f32>::from_raw(&t) }?;
    /// assert_eq!(v.strides(), &[2, 1]); // resolved by the facade, owned by the view
    /// assert_eq!(v.get(&[2, 0]), Some(&5.0));
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub unsafe fn from_raw(tensor: &'a sys::DLTensor) -> Result<Self, Error> {
        // SAFETY: the caller guarantees from_raw's contract for 'a.
        unsafe { Self::checked(Viewed::Bare(tensor), no_claim) }
    }

    /// The tensor's description as the view was made from it, and its flags: the borrowed
    /// argument's own (`PyTensor`), which it does not keep a second time.
    #[cfg(feature = "pyo3")]
    pub(crate) fn described(&self) -> (&sys::DLTensor, u64) {
        (&self.elements.tensor, self.elements.flags)
    }

    shared_accessors!("", "view");

    /// The element at `index` (one entry per dimension), or `None` when the index has the
    /// wrong length or is out of bounds. Strides (zero, negative, any) and `byte_offset` are
    /// honoured.
    ///
    /// ```
    /// # use dlpack_mdspan::{Flags, ManagedTensor};
    /// // Reversed: stride -1 starting from the last element.
    /// let t = ManagedTensor::build_from_vec(vec![1u8, 2, 3], &[3]).strides(&[-1]).offset(2).finish()?;
    /// let v = t.view::<u8>()?;
    /// assert_eq!(v.get(&[0]), Some(&3));
    /// assert_eq!(v.get(&[3]), None);
    /// assert_eq!(v.get(&[0, 0]), None);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn get(&self, index: &[usize]) -> Option<&'a T> {
        let p = self.elements.locate(index).ok()?;
        // SAFETY: the facade checked the dtype (size of T), the host device and the
        // alignment of data + byte_offset (element offsets are multiples of size_of::<T>(),
        // itself a multiple of its alignment); the index is in bounds, so p addresses an
        // element that is valid for reads and unwritten for 'a (the view's contract), and
        // holds a valid T (any bit pattern, or 0/1 for bool by contract).
        Some(unsafe { p.as_ref() })
    }

    /// All elements as a slice, for C-contiguous (row-major) tensors only; others are
    /// refused by the facade with [`Status::NON_COMPACT_STRIDES`]. Empty tensors give an
    /// empty slice.
    ///
    /// ```
    /// # use dlpack_mdspan::{ManagedTensor, Status};
    /// let t = ManagedTensor::from_vec(vec![1u8, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(t.view::<u8>()?.as_slice()?, &[1, 2, 3, 4]);
    /// let f = ManagedTensor::build_from_vec(vec![1u8, 2, 3, 4], &[2, 2]).strides(&[1, 2]).finish()?;
    /// assert_eq!(f.view::<u8>()?.as_slice().unwrap_err().status(), Status::NON_COMPACT_STRIDES);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn as_slice(&self) -> Result<&'a [T], Error> {
        let base = self.elements.slice_base()?;
        // SAFETY: C-contiguous (checked by the facade), so the len elements are consecutive
        // from data + byte_offset, aligned, valid for reads and unwritten for 'a; an empty
        // tensor uses a dangling, aligned, non-NULL pointer. len * size <= isize::MAX.
        Ok(unsafe { std::slice::from_raw_parts(base.as_ptr(), self.elements.len()) })
    }
}

impl<T: Element> Clone for TensorView<'_, T> {
    fn clone(&self) -> Self {
        TensorView {
            elements: self.elements.clone(),
            _borrow: PhantomData,
        }
    }
}

impl<T: Element + fmt::Debug> fmt::Debug for TensorView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorView")
            .field("dtype", &T::DTYPE)
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .finish()
    }
}

/// A typed, validated view for reading and writing a host tensor: like `&'a mut [T]` with a
/// shape and strides. Borrowed from a [`ManagedTensor`](crate::ManagedTensor) with
/// [`view_mut`](crate::ManagedTensor::view_mut), or made from a raw `DLTensor` with
/// [`from_raw`](Self::from_raw).
///
/// [`set`](Self::set) is always available; [`get_mut`](Self::get_mut) and
/// [`as_mut_slice`](Self::as_mut_slice), which hand out `&mut`, only on
/// [exclusive](Self::is_exclusive) views, see [the mutation rules](crate#mutation-and-aliasing).
///
/// ```
/// use dlpack_mdspan::ManagedTensor;
///
/// let mut t = ManagedTensor::from_vec(vec![0u32; 6], &[2, 3])?;
/// let mut v = t.view_mut::<u32>()?;
/// for i in 0..2 {
///     for j in 0..3 {
///         v.set(&[i, j], (10 * i + j) as u32)?;
///     }
/// }
/// assert_eq!(v.as_slice()?, &[0, 1, 2, 10, 11, 12]);
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
pub struct TensorViewMut<'a, T: Element> {
    elements: Elements<'a, T>,
    exclusive: bool,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: like &'a mut [T]: sending the view sends the unique right to access the elements
// (T is Send); the borrowed DLTensor is never mutated.
unsafe impl<T: Element> Send for TensorViewMut<'_, T> {}
// SAFETY: &TensorViewMut only allows reads (every write needs &mut self), and T is Sync.
unsafe impl<T: Element> Sync for TensorViewMut<'_, T> {}

/// A [`TensorViewMut`] that is not exclusive, as a writer's argument keeps it
/// ([`PyTensorMut`](crate::PyTensorMut)): its elements without the flag, so that the
/// argument is 128 bytes, as a reader's is (with the flag it was 136, which the compiler
/// moves with `memcpy` where it moves 128 in line). Each mutable view it lends is made from
/// it, not exclusive.
#[cfg(feature = "pyo3")]
pub(crate) struct KeptViewMut<'a, T: Element> {
    elements: Elements<'a, T>,
    _borrow: PhantomData<&'a mut [T]>,
}

#[cfg(feature = "pyo3")]
impl<T: Element> KeptViewMut<'_, T> {
    /// The kept view, for as long as `self` is borrowed (what `&mut *v` is to a `&mut`).
    pub(crate) fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        TensorViewMut {
            elements: self.elements.clone(),
            exclusive: false,
            _borrow: PhantomData,
        }
    }

    /// As [`TensorView`]'s: the description and flags the view was made from.
    pub(crate) fn described(&self) -> (&sys::DLTensor, u64) {
        (&self.elements.tensor, self.elements.flags)
    }

    /// The element count (as [`TensorViewMut::len`]).
    pub(crate) fn len(&self) -> usize {
        self.elements.len()
    }
}

impl<'a, T: Element> TensorViewMut<'a, T> {
    /// A mutable view of `tensor` after the facade's checks for `T` (see
    /// [`from_raw`](Self::from_raw); with `writable`, a managed tensor's READ_ONLY flag is
    /// refused).
    ///
    /// # Safety
    ///
    /// The contract of [`from_raw`](Self::from_raw) holds for `'a`, and
    /// `exclusive_provenance` is true only if nothing outside this view can reach the
    /// elements during `'a`. `claim` is asked before any element is read
    /// ([`ClaimBeforeRead`]).
    #[inline(always)]
    pub(crate) unsafe fn checked(
        tensor: Viewed<'a>,
        writable: bool,
        exclusive_provenance: bool,
        claim: impl ClaimBeforeRead,
    ) -> Result<Self, Error> {
        // SAFETY: forwarded from this function's contract.
        let elements = unsafe { Elements::check(tensor, writable, claim) }?;
        // Zero, negative or overlapping strides cannot be contiguous: only C- or
        // F-contiguous layouts (checked by the facade) count as exclusive.
        let exclusive = exclusive_provenance && is_contiguous(&elements.tensor, Order::Any)?;
        Ok(TensorViewMut {
            elements,
            exclusive,
            _borrow: PhantomData,
        })
    }

    /// A mutable view of `tensor` from a checked form made elsewhere, as
    /// [`TensorView::from_checked_form`]; never exclusive (the producer may share the memory).
    ///
    /// # Safety
    ///
    /// The contract of [`from_raw`](Self::from_raw) holds for `'a`, and `checked` describes
    /// exactly `tensor` with its flags and was checked with the requirements of a writable
    /// view of `T` (not READ_ONLY).
    #[cfg(feature = "pyo3")]
    #[inline(always)]
    pub(crate) unsafe fn from_checked_form(
        tensor: Viewed<'a>,
        checked: &sys::dlpm_checked_tensor,
        claim: impl ClaimBeforeRead,
    ) -> Result<Self, Error> {
        crate::checks::check_element_size::<T>(tensor.parts().1)?;
        // SAFETY: forwarded from this function's contract; the element size is checked above.
        let elements = unsafe { Elements::from_checked(tensor, checked, claim) }?;
        Ok(TensorViewMut {
            elements,
            exclusive: false,
            _borrow: PhantomData,
        })
    }

    /// A mutable view of a bare `DLTensor`, after the facade's checks (`dlpm_check_tensor`
    /// with no flags, as `dlpm_check`): structure, dtype equal to `T::DTYPE`, a
    /// host-accessible device, data aligned for `T`.
    /// A bare `DLTensor` has no flags, so READ_ONLY cannot be checked here, and the view is
    /// never [exclusive](Self::is_exclusive): only [`set`](Self::set) writes, unless you
    /// call [`assume_exclusive`](Self::assume_exclusive).
    ///
    /// # Safety
    ///
    /// For `'a`: the tensor's `shape` and `strides` stay valid and unmodified, and lie
    /// outside the elements (which the view writes); every element it addresses is valid
    /// for reads and writes, and the producer allows writes; and no other code reads or
    /// writes those elements. (A `bool` view checks its bytes when it is made, as
    /// [`TensorView::from_raw`]'s.)
    ///
    /// ```
    /// use dlpack_mdspan::{sys, DataType, Device, Status, TensorViewMut};
    ///
    /// let mut data = [0i64; 4];
    /// let mut shape = [4i64];
    /// let t = sys::DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: Device::CPU.0,
    ///     ndim: 1,
    ///     dtype: DataType::I64.0,
    ///     shape: shape.as_mut_ptr(),
    ///     strides: std::ptr::null_mut(),
    ///     byte_offset: 0,
    /// };
    /// {
    ///     // SAFETY: `data` is ours, writable, and untouched while the view lives.
    ///     let mut v = unsafe { TensorViewMut::<i64>::from_raw(&t) }?;
    ///     v.set(&[2], 42)?;
    ///     assert_eq!(v.get_mut(&[2]).unwrap_err().status(), Status::NOT_EXCLUSIVE);
    /// }
    /// assert_eq!(data, [0, 0, 42, 0]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub unsafe fn from_raw(tensor: &'a sys::DLTensor) -> Result<Self, Error> {
        // SAFETY: the caller guarantees from_raw's contract for 'a; not exclusive.
        unsafe { Self::checked(Viewed::Bare(tensor), false, false, no_claim) }
    }

    /// The view as an argument keeps it ([`KeptViewMut`]); only a view that is not
    /// exclusive is kept, and the flag is not.
    #[cfg(feature = "pyo3")]
    pub(crate) fn into_kept(self) -> KeptViewMut<'a, T> {
        debug_assert!(!self.exclusive, "a kept writer's view is never exclusive");
        KeptViewMut {
            elements: self.elements,
            _borrow: PhantomData,
        }
    }

    /// A shared view of the same elements, for reading while `self` is borrowed.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![3u8; 2], &[2])?;
    /// let v = t.view_mut::<u8>()?;
    /// assert_eq!(v.as_view().get(&[1]), Some(&3));
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn as_view(&self) -> TensorView<'_, T> {
        TensorView {
            elements: self.elements.clone(),
            _borrow: PhantomData,
        }
    }

    shared_accessors!("mut ", "view_mut");

    /// Whether this view hands out `&mut` safely ([`get_mut`](Self::get_mut),
    /// [`as_mut_slice`](Self::as_mut_slice)): the tensor is
    /// [exclusive](crate::ManagedTensor::is_exclusive) (made by this crate from a `Vec`, or
    /// IS_COPIED) and C- or F-contiguous (which rules out zero, negative and overlapping
    /// strides), or [`assume_exclusive`](Self::assume_exclusive) was called.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![0u8; 6], &[3, 2])?;
    /// assert!(t.view_mut::<u8>()?.is_exclusive());
    /// let mut b = ManagedTensor::build_from_vec(vec![0u8; 2], &[3, 2]).strides(&[0, 1]).finish()?; // broadcast
    /// assert!(!b.view_mut::<u8>()?.is_exclusive());
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Declares that nothing outside this view reaches its elements while it lives, so that
    /// [`get_mut`](Self::get_mut) and [`as_mut_slice`](Self::as_mut_slice) work on a
    /// tensor whose provenance this crate cannot see (from C, Python, a raw `DLTensor`).
    /// It vouches for access from outside alone, not for the layout: `as_mut_slice` still
    /// needs C-contiguous elements, and `as_array_mut` a layout that reaches no element
    /// from two indices (it refuses zero and overlapping strides with
    /// [`Status::OVERLAPPING_STRIDES`]).
    ///
    /// # Safety
    ///
    /// Until the view is dropped, no other code (another thread, the producer, another
    /// view or reference, in any language) reads or writes the elements this view can
    /// reach, except through this view.
    ///
    /// ```
    /// use dlpack_mdspan::ManagedTensor;
    ///
    /// let raw = ManagedTensor::from_vec(vec![1.0f64; 3], &[3])?.into_raw();
    /// // SAFETY: `raw` comes from into_raw, so the tensor owns its Vec alone.
    /// let mut t = unsafe { ManagedTensor::from_raw(raw) }?;
    /// let mut v = t.view_mut::<f64>()?;
    /// assert!(!v.is_exclusive());
    /// // SAFETY: the Vec behind the tensor is reachable only through this view.
    /// unsafe { v.assume_exclusive() };
    /// v.as_mut_slice()?.iter_mut().for_each(|x| *x *= 2.0);
    /// assert_eq!(v.as_slice()?, &[2.0, 2.0, 2.0]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub unsafe fn assume_exclusive(&mut self) {
        self.exclusive = true;
    }

    /// The element at `index`, or `None` when the index has the wrong length or is out of
    /// bounds.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![4u8, 5], &[2])?;
    /// assert_eq!(t.view_mut::<u8>()?.get(&[1]), Some(&5));
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn get(&self, index: &[usize]) -> Option<&T> {
        let p = self.elements.locate(index).ok()?;
        // SAFETY: as in TensorView::get; the returned borrow of self excludes writes
        // through this view while it lives.
        Some(unsafe { p.as_ref() })
    }

    /// Writes `value` at `index` through a raw pointer, without creating a reference, so it
    /// is safe on every mutable view (overlapping strides included: a later write simply
    /// wins). Errors: [`Status::NDIM_MISMATCH`] for an index of the wrong length,
    /// [`Status::INVALID_ARGUMENT`] for one out of bounds.
    ///
    /// ```
    /// # use dlpack_mdspan::{ManagedTensor, Status};
    /// let mut t = ManagedTensor::from_vec(vec![0u8; 2], &[2])?;
    /// let mut v = t.view_mut::<u8>()?;
    /// v.set(&[1], 9)?;
    /// let err = v.set(&[2], 9).unwrap_err();
    /// assert_eq!(err.status(), Status::INVALID_ARGUMENT);
    /// assert_eq!(err.message(), "index[0] = 2 is outside [0, 2)");
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn set(&mut self, index: &[usize], value: T) -> Result<(), Error> {
        let p = self.elements.locate(index)?;
        // SAFETY: p addresses an in-bounds, aligned element of T that is valid for writes
        // (not READ_ONLY, or by from_raw's contract) and that nobody else accesses while
        // this view lives (the view's contract); &mut self excludes references handed out
        // by this view.
        unsafe { p.as_ptr().write(value) };
        Ok(())
    }

    /// A mutable reference to the element at `index`, on [exclusive](Self::is_exclusive)
    /// views only ([`Status::NOT_EXCLUSIVE`] otherwise); index errors as for
    /// [`set`](Self::set).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![1u8, 2], &[2])?;
    /// let mut v = t.view_mut::<u8>()?;
    /// *v.get_mut(&[0])? += 10;
    /// assert_eq!(v.get(&[0]), Some(&11));
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn get_mut(&mut self, index: &[usize]) -> Result<&mut T, Error> {
        self.require_exclusive()?;
        let mut p = self.elements.locate(index)?;
        // SAFETY: as in set; the view is exclusive, so no other reference to this element
        // exists anywhere, and the returned borrow of self excludes any other access
        // through this view while it lives.
        Ok(unsafe { p.as_mut() })
    }

    /// All elements as a mutable slice: [exclusive](Self::is_exclusive), C-contiguous
    /// views only.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![1i32, 2, 3], &[3])?;
    /// t.view_mut::<i32>()?.as_mut_slice()?.reverse();
    /// assert_eq!(t.view::<i32>()?.as_slice()?, &[3, 2, 1]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], Error> {
        self.require_exclusive()?;
        let base = self.elements.slice_base()?;
        // SAFETY: C-contiguous (checked by the facade): len consecutive, aligned elements
        // valid for reads and writes (or a dangling pointer for len 0); exclusive, so no
        // other reference to them exists; the borrow of self excludes other access through
        // this view. len * size <= isize::MAX.
        Ok(unsafe { std::slice::from_raw_parts_mut(base.as_ptr(), self.elements.len()) })
    }

    /// All elements as a slice, for C-contiguous tensors (see [`TensorView::as_slice`]).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![1i32, 2, 3], &[3])?;
    /// assert_eq!(t.view_mut::<i32>()?.as_slice()?, &[1, 2, 3]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn as_slice(&self) -> Result<&[T], Error> {
        let base = self.elements.slice_base()?;
        // SAFETY: as in TensorView::as_slice; the borrow of self excludes writes through
        // this view while the slice lives.
        Ok(unsafe { std::slice::from_raw_parts(base.as_ptr(), self.elements.len()) })
    }

    fn require_exclusive(&self) -> Result<(), Error> {
        if self.exclusive {
            Ok(())
        } else {
            Err(Error::new(
                Status::NOT_EXCLUSIVE,
                "this view may alias memory outside it (a foreign or raw tensor, or zero, negative or overlapping \
                 strides): use set(), or assume_exclusive() if you can guarantee exclusivity",
            ))
        }
    }
}

impl<T: Element + fmt::Debug> fmt::Debug for TensorViewMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorViewMut")
            .field("dtype", &T::DTYPE)
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("exclusive", &self.exclusive)
            .finish()
    }
}
