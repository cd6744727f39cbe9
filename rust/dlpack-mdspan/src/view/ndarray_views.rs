// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! `ndarray` interoperation (feature `ndarray`): zero-copy [`ndarray::ArrayView`]s of
//! validated views, and owning exports of [`ndarray::Array`]s and (read-only)
//! [`ndarray::ArcArray`]s.
//!
//! A view keeps the tensor's layout: the element strides the facade validated (NULL ones
//! resolved as row-major), negative and zero ones included. ndarray builds views from the
//! lowest address with non-negative strides, so an axis with a negative stride is built
//! from its far end and then inverted (`invert_axis`), as rust-numpy does: the result
//! addresses exactly the tensor's elements in the tensor's index order. An empty tensor
//! addresses nothing; its view has ndarray's row-major strides.

use std::mem::MaybeUninit;
use std::ptr::NonNull;

use ndarray::{
    ArcArray, Array, ArrayBase, ArrayView, ArrayViewMut, Axis, Dimension, RawData, ShapeBuilder,
};

use super::{Elements, TensorView, TensorViewMut};
use crate::checks::MAX_NDIM;
use crate::error::{Error, Status};
use crate::managed::{
    export_in_bounds, exports_in_bounds, InBoundsStrides, ManagedTensor, IN_BOUNDS_MAX_NDIM,
};
use crate::types::{Device, Element, Flags};

/// The parts of an ndarray view of `elements`: its shape as `D`, the lowest address the
/// view reaches, the absolute strides from it, and the axes to invert afterwards.
struct NdParts<T, D> {
    dim: D,
    strides: D,
    low: NonNull<T>,
    /// Bit r set: axis r has a negative stride (ranks are at most DLPM_MAX_NDIM, 64).
    inverted: u64,
    empty: bool,
}

impl<T: Element> Elements<'_, T> {
    /// The common case's parts, read straight from what the view's check proved: a
    /// non-empty view of `D`'s rank whose strides are all non-negative, as `D`'s shape and
    /// strides and its first element (the lowest address). `None` for every other view
    /// (empty, another rank, a negative stride, a stride beyond `isize`), which
    /// [`nd_parts`](Self::nd_parts) takes, with its errors.
    #[inline(always)]
    fn nd_direct<D: Dimension>(&self) -> Option<(D, D, *mut T)> {
        let (shape, strides) = (self.shape(), self.strides());
        if self.len() == 0 || D::NDIM.is_some_and(|n| n != shape.len()) {
            return None;
        }
        let mut dim = D::zeros(shape.len());
        let mut steps = D::zeros(shape.len());
        debug_assert_eq!(shape.len(), strides.len());
        for (r, ((d, step), &n)) in dim
            .slice_mut()
            .iter_mut()
            .zip(steps.slice_mut())
            .zip(shape)
            .enumerate()
        {
            // SAFETY: r < shape.len(), and a view has as many strides as extents (its own
            // array of ndim entries, or the ndim the facade resolved).
            let s = unsafe { *strides.get_unchecked(r) };
            // Extents fit usize (as in nd_parts); a negative stride goes the general way.
            *step = usize::try_from(isize::try_from(s).ok()?).ok()?;
            *d = n as usize;
        }
        // Element [0, ..., 0], the lowest address when no stride is negative; non-NULL: the
        // facade refuses NULL data for a tensor with elements (DLPM_E_NULL_DATA), and
        // data + byte_offset lies in the allocation the tensor describes.
        Some((dim, steps, self.origin()))
    }

    #[inline]
    fn nd_parts<D: Dimension>(&self) -> Result<NdParts<T, D>, Error> {
        let (shape, strides) = (self.shape(), self.strides());
        if let Some(n) = D::NDIM {
            if n != shape.len() {
                return Err(Error::new(
                    Status::NDIM_MISMATCH,
                    format!(
                        "the tensor has rank {} but the ndarray view has {n} dimensions",
                        shape.len()
                    ),
                ));
            }
        }
        // One `D` made, filled through its slice (not index by index: an `IxDyn`'s
        // indexing matches on its storage every time) and cloned for the strides.
        let mut dim = D::zeros(shape.len());
        let mut inverted = 0u64;
        // The facade validated the shape (non-negative, product within i64) and the
        // element count fits the address space (checked when the view was made), so each
        // extent fits usize.
        for (d, &n) in dim.slice_mut().iter_mut().zip(shape) {
            *d = n as usize;
        }
        let mut abs = dim.clone();
        if self.len() == 0 {
            // ndarray's rule for any array (`from_shape_ptr`'s contract): the extents other
            // than 0 multiply to at most isize::MAX. A DLPack tensor with a 0 extent may have
            // others of any size (their product is not its element count).
            let nonzero = shape
                .iter()
                .filter(|&&n| n != 0)
                .try_fold(1usize, |p, &n| p.checked_mul(n as usize))
                .filter(|&p| p <= isize::MAX as usize);
            if nonzero.is_none() {
                return Err(Error::new(
                    Status::SPAN_OVERFLOW,
                    format!(
                        "the extents other than 0 of the empty shape {shape:?} multiply past isize::MAX, \
                         which an ndarray view cannot have"
                    ),
                ));
            }
            return Ok(NdParts {
                dim,
                strides: abs,
                low: NonNull::dangling(),
                inverted,
                empty: true,
            });
        }
        // Non-empty: the facade validated that every addressed element lies within the
        // tensor's span, whose byte size fits isize, so each (extent - 1) * |stride| does.
        let origin = self.first_element()?;
        let mut low_offset = 0isize;
        let abs_strides = abs.slice_mut();
        for (r, (&n, &s)) in shape.iter().zip(strides).enumerate() {
            let s = isize::try_from(s).map_err(|_| span_error(s))?;
            if s == isize::MIN {
                // No isize holds its magnitude, and ndarray's strides are isize: only an
                // extent-1 axis, whose stride moves nowhere, can have it (the facade refuses
                // it on a longer axis: its span overflows), and it becomes 0 there.
                if n != 1 {
                    return Err(span_error(i64::MIN));
                }
                abs_strides[r] = 0;
                continue;
            }
            abs_strides[r] = s.unsigned_abs();
            if s < 0 {
                low_offset += s * (n as isize - 1);
                inverted |= 1 << r;
            }
        }
        // The lowest address any element has: inside the tensor's allocation.
        let low = origin.as_ptr().wrapping_offset(low_offset);
        let low = NonNull::new(low).ok_or_else(|| Error::new(Status::NULL_DATA, "data is NULL"))?;
        Ok(NdParts {
            dim,
            strides: abs,
            low,
            inverted,
            empty: false,
        })
    }

    /// Element [0, ..., 0] (`data + byte_offset`) of a non-empty view.
    fn first_element(&self) -> Result<NonNull<T>, Error> {
        NonNull::new(self.origin()).ok_or_else(|| Error::new(Status::NULL_DATA, "data is NULL"))
    }
}

// The negative axes fit one u64 mask.
const _: () = assert!(crate::checks::MAX_NDIM <= 64);

/// Calls `invert` for each axis whose bit is set in `axes`.
fn invert_axes(mut axes: u64, mut invert: impl FnMut(usize)) {
    while axes != 0 {
        invert(axes.trailing_zeros() as usize);
        axes &= axes - 1;
    }
}

/// `a` with the axes whose bit is set in `axes` inverted (out of line: only views with a
/// negative stride come here).
#[inline(never)]
fn inverted<S: RawData, D: Dimension>(mut a: ArrayBase<S, D>, axes: u64) -> ArrayBase<S, D> {
    invert_axes(axes, |r| a.invert_axis(Axis(r)));
    a
}

fn span_error(stride: i64) -> Error {
    Error::new(
        Status::SPAN_OVERFLOW,
        format!("stride {stride} does not fit this platform's isize"),
    )
}

impl<'a, T: Element> TensorView<'a, T> {
    /// The view as an [`ndarray::ArrayView`] of dimension `D` (`IxDyn` for any rank, or a
    /// fixed `Ix0`..`Ix6`), zero-copy, with the tensor's strides (negative and zero ones
    /// included; an extent-1 axis of stride `i64::MIN`, whose magnitude no `isize` holds,
    /// has stride 0) and lifetime. A fixed `D` of another rank is refused with
    /// [`Status::NDIM_MISMATCH`]; an empty tensor whose extents other than 0 multiply past
    /// `isize::MAX` (ndarray's limit for any array) with [`Status::SPAN_OVERFLOW`].
    ///
    /// ```
    /// use dlpack_mdspan::{Flags, ManagedTensor};
    /// use ndarray::{Ix2, IxDyn};
    ///
    /// // 2x3, the rows in reverse order: stride -3 from the last row.
    /// let t = ManagedTensor::build_from_vec((0..6).collect::<Vec<i32>>(), &[2, 3]).strides(&[-3, 1]).offset(3).finish()?;
    /// let v = t.view::<i32>()?;
    /// let a = v.as_array::<Ix2>()?;
    /// assert_eq!(a, ndarray::array![[3, 4, 5], [0, 1, 2]]);
    /// assert_eq!(a.strides(), &[-3, 1]);
    /// assert_eq!(v.as_array::<IxDyn>()?.shape(), &[2, 3]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    ///
    /// The array view borrows the tensor, as the view does: it cannot outlive it.
    ///
    /// ```compile_fail,E0597
    /// # use dlpack_mdspan::ManagedTensor;
    /// let a = {
    ///     let t = ManagedTensor::from_vec(vec![1u8, 2], &[2]).unwrap();
    ///     t.view::<u8>().unwrap().as_array::<ndarray::Ix1>().unwrap()
    /// };
    /// ```
    #[inline]
    pub fn as_array<D: Dimension>(&self) -> Result<ArrayView<'a, T, D>, Error> {
        if let Some((dim, strides, first)) = self.elements.nd_direct::<D>() {
            // SAFETY: the facade validated the view for T (dtype, host device, non-NULL data
            // of a tensor with elements, alignment of data + byte_offset and so of every
            // element, every element inside the span, the span's bytes within isize): `first`
            // is the lowest element address (no stride is negative), and moving from it by the
            // strides reaches exactly the tensor's elements, which are valid for reads and
            // unwritten for 'a (the view's contract). ndarray's own requirements of
            // `from_shape_ptr` (non-NULL, aligned, non-negative strides, every offset within
            // isize and one allocation) are those facts.
            return Ok(unsafe { ArrayView::from_shape_ptr(dim.strides(strides), first) });
        }
        self.as_array_general()
    }

    /// [`as_array`](Self::as_array) of the views `nd_direct` leaves: empty ones, negative
    /// strides, and the refusals.
    #[inline(never)]
    fn as_array_general<D: Dimension>(&self) -> Result<ArrayView<'a, T, D>, Error> {
        let p = self.elements.nd_parts::<D>()?;
        if p.empty {
            // SAFETY: no element is addressed; the pointer is dangling, aligned and non-NULL.
            return Ok(unsafe { ArrayView::from_shape_ptr(p.dim, p.low.as_ptr()) });
        }
        // SAFETY: the facade validated the view for T (dtype, host device, alignment of
        // data + byte_offset and so of every element, every element inside the span, the
        // span's bytes within isize): `low` is the lowest element address and moving by the
        // absolute strides reaches exactly the tensor's elements, which are valid for reads
        // and unwritten for 'a (the view's contract). Strides are non-negative.
        let a = unsafe { ArrayView::from_shape_ptr(p.dim.strides(p.strides), p.low.as_ptr()) };
        if p.inverted == 0 {
            return Ok(a);
        }
        Ok(inverted(a, p.inverted))
    }
}

impl<T: Element> TensorViewMut<'_, T> {
    /// The view as an [`ndarray::ArrayViewMut`] of dimension `D`, zero-copy: only on
    /// [exclusive](Self::is_exclusive) views ([`Status::NOT_EXCLUSIVE`] otherwise), since
    /// an `ArrayViewMut` hands out `&mut T`; a fixed `D` of another rank is refused with
    /// [`Status::NDIM_MISMATCH`].
    ///
    /// ```
    /// use dlpack_mdspan::ManagedTensor;
    /// use ndarray::Ix2;
    ///
    /// let mut t = ManagedTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// t.view_mut::<f32>()?.as_array_mut::<Ix2>()?.map_inplace(|x| *x *= 10.0);
    /// assert_eq!(t.view::<f32>()?.as_slice()?, &[10.0, 20.0, 30.0, 40.0]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub fn as_array_mut<D: Dimension>(&mut self) -> Result<ArrayViewMut<'_, T, D>, Error> {
        self.require_exclusive()?;
        // Exclusive says nothing outside the view reaches the elements; `assume_exclusive`
        // vouches for that alone, whatever the layout. ndarray's view hands out a `&mut` per
        // index (iter_mut), so no two indices may reach one element.
        if !self.is_unique()? {
            return Err(Error::new(
                Status::OVERLAPPING_STRIDES,
                "as_array_mut: the layout may reach an element from two indices (zero, overlapping or \
                 interleaved strides: dlpm_is_unique), and ndarray's mutable view would then hand out two &mut \
                 to it: use get_mut() or set()",
            ));
        }
        let p = self.elements.nd_parts::<D>()?;
        if p.empty {
            // SAFETY: no element is addressed; the pointer is dangling, aligned and non-NULL.
            return Ok(unsafe { ArrayViewMut::from_shape_ptr(p.dim, p.low.as_ptr()) });
        }
        // SAFETY: as in TensorView::as_array, and the elements are valid for writes (a
        // mutable view: not READ_ONLY); the view is exclusive (nothing outside it reaches the
        // elements) and unique (no element reached from two indices, tested above); the
        // borrow of self excludes other access through this view while the array view lives.
        let a = unsafe { ArrayViewMut::from_shape_ptr(p.dim.strides(p.strides), p.low.as_ptr()) };
        if p.inverted == 0 {
            return Ok(a);
        }
        Ok(inverted(a, p.inverted))
    }
}

impl ManagedTensor {
    /// Exports an [`ndarray::Array`] (any dimension, any layout: negative strides
    /// included) without copying: the array's `Vec` moves into the tensor's own allocation
    /// (one allocation besides the elements, as [`from_vec`](Self::from_vec)), and the
    /// tensor has the array's shape, strides and first element.
    ///
    /// ```
    /// use dlpack_mdspan::ManagedTensor;
    /// use ndarray::{array, s, Ix2};
    ///
    /// let a = array![[1u16, 2, 3], [4, 5, 6]].reversed_axes(); // 3x2, column-major
    /// let t = ManagedTensor::from_ndarray(a)?;
    /// assert_eq!(t.shape()?, &[3, 2]);
    /// assert_eq!(t.strides()?, Some(&[1, 3][..]));
    /// assert_eq!(t.view::<u16>()?.as_array::<Ix2>()?, array![[1, 4], [2, 5], [3, 6]]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn from_ndarray<T: Element, D: Dimension>(array: Array<T, D>) -> Result<Self, Error> {
        let layout = NdLayout::of(&array)?;
        let in_bounds =
            !array.is_empty() && array.ndim() <= IN_BOUNDS_MAX_NDIM && exports_in_bounds::<T>();
        let (vec, offset) = array.into_raw_vec_and_offset();
        let offset = offset.unwrap_or(0);
        if in_bounds {
            // SAFETY: ndarray's invariant for an owned array: every index of its shape, moved
            // by its strides (in elements) from its first element, `vec[offset]`, addresses
            // an initialised element of its Vec (offset is Some for a non-empty array), so
            // the count, span and offset fit isize; the array is not empty and its rank is at
            // most IN_BOUNDS_MAX_NDIM, with as many strides as extents; exports_in_bounds
            // checked T's element size, unpadded.
            return Ok(unsafe {
                export_in_bounds(
                    vec,
                    layout.shape(),
                    InBoundsStrides::Given(layout.strides()),
                    offset,
                )
            });
        }
        Self::build_from_vec(vec, layout.shape())
            .strides(layout.strides())
            .offset(offset)
            .finish()
    }

    /// Exports an [`ndarray::ArcArray`] without copying, READ_ONLY: the array (one reference
    /// to its shared buffer) moves into the tensor, which drops it in its deleter, so the
    /// elements live as long as the tensor does, however long the consumer keeps it. The
    /// tensor has the array's shape, strides (negative ones included) and first element.
    ///
    /// This is the safe export of a *view*: `ArcArray`'s moving methods (`slice_move`,
    /// `reversed_axes`, `permuted_axes`, `invert_axis`, `index_axis_move`, `insert_axis`)
    /// make any slice, transpose or reversal of a shared array an `ArcArray` of its own,
    /// over the same buffer. READ_ONLY is what sharing means: an `ArcArray` written through
    /// another handle copies first (copy-on-write), so the exported elements never change,
    /// and no consumer may write them. A borrowed [`ndarray::ArrayView`] has no owner to
    /// move (its lifetime ends where the consumer cannot see it); broadcasts, whose zero
    /// strides no owned array has, go through [`build_from_owner`](Self::build_from_owner)
    /// with an `ArcArray` as the owner (docs/rust.md, "Exporting ndarray views").
    ///
    /// ```
    /// use dlpack_mdspan::{Flags, ManagedTensor};
    /// use ndarray::{array, s, Ix2};
    ///
    /// let shared = array![[1i32, 2, 3], [4, 5, 6]].into_shared();
    /// let every_other_reversed = shared.clone().slice_move(s![.., ..;-2]); // same buffer
    /// let t = ManagedTensor::from_arc_array(every_other_reversed)?;
    /// assert_eq!(t.flags(), Flags::READ_ONLY);
    /// assert_eq!(t.strides()?, Some(&[3, -2][..]));
    /// assert_eq!(t.view::<i32>()?.as_array::<Ix2>()?, array![[3, 1], [6, 4]]);
    /// drop(shared); // the tensor keeps the buffer alive
    /// assert_eq!(t.view::<i32>()?.get(&[1, 0]), Some(&6));
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn from_arc_array<T: Element, D: Dimension + 'static>(
        array: ArcArray<T, D>,
    ) -> Result<Self, Error> {
        let layout = NdLayout::of(&array)?;
        let data = array.as_ptr().cast_mut().cast();
        let export = Self::build_from_owner(array, data, T::DTYPE, Device::CPU, layout.shape())
            .strides(layout.strides())
            .flags(Flags::READ_ONLY);
        // SAFETY: the owner is the ArcArray whose first element `data` is, and whose shape
        // and strides (in elements of T) are the tensor's: ndarray guarantees they address
        // only elements of its buffer, which the owner keeps alive, valid and initialised
        // values of T. Nothing writes them while the tensor lives: the tensor is READ_ONLY,
        // and any other ArcArray of the buffer copies before it writes (the tensor's
        // reference makes the buffer shared). The tensor is not IS_COPIED.
        unsafe { export.finish() }
    }
}

/// The shape and element strides of an ndarray array on the stack (the tensor's own
/// allocation stays the only one), of its rank: only those entries are written (not the
/// 2 x DLPM_MAX_NDIM of the buffers, which every export would otherwise fill).
struct NdLayout {
    shape: [MaybeUninit<i64>; MAX_NDIM],
    strides: [MaybeUninit<i64>; MAX_NDIM],
    ndim: usize,
}

impl NdLayout {
    /// The layout of `array`, refused above DLPack's rank here.
    fn of<S: RawData, D: Dimension>(array: &ArrayBase<S, D>) -> Result<Self, Error> {
        let ndim = array.ndim();
        if ndim > MAX_NDIM {
            return Err(Error::new(
                Status::INVALID_NDIM,
                format!(
                    "ndim = {ndim} is above the {MAX_NDIM} dimensions DLPack tensors may have here"
                ),
            ));
        }
        let mut layout = NdLayout {
            shape: [MaybeUninit::uninit(); MAX_NDIM],
            strides: [MaybeUninit::uninit(); MAX_NDIM],
            ndim,
        };
        for (r, (&n, &s)) in array.shape().iter().zip(array.strides()).enumerate() {
            // An array's extents and strides fit isize, hence i64.
            layout.shape[r].write(n as i64);
            layout.strides[r].write(s as i64);
        }
        Ok(layout)
    }

    fn shape(&self) -> &[i64] {
        // SAFETY: the first ndim entries were written by `of` (ndarray's shape and strides
        // both have ndim entries).
        unsafe { std::slice::from_raw_parts(self.shape.as_ptr().cast::<i64>(), self.ndim) }
    }

    fn strides(&self) -> &[i64] {
        // SAFETY: as in `shape`.
        unsafe { std::slice::from_raw_parts(self.strides.as_ptr().cast::<i64>(), self.ndim) }
    }
}
