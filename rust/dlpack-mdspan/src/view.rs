//! Typed, validated views of host tensors.

use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use dlpack_mdspan_sys as sys;

use crate::error::{check, Error, Status};
use crate::managed::Order;
use crate::types::{DataType, Device, DeviceType, Element};

/// The device types the views accept (see `DeviceType::HOST_ACCESSIBLE`).
static HOST_DEVICE_TYPES: [sys::DLDeviceType; 4] = [
    DeviceType::HOST_ACCESSIBLE[0].0,
    DeviceType::HOST_ACCESSIBLE[1].0,
    DeviceType::HOST_ACCESSIBLE[2].0,
    DeviceType::HOST_ACCESSIBLE[3].0,
];

/// Requirements that accept anything (the facade's own defaults), in the layout version
/// these bindings describe.
pub(crate) fn any_requirements() -> sys::dlpm_requirements {
    let req = sys::dlpm_requirements {
        version: sys::DLPM_REQUIREMENTS_VERSION,
        check_dtype: 0,
        dtype: sys::DLDataType {
            code: 0,
            bits: 0,
            lanes: 0,
        },
        ndim: -1,
        shape: ptr::null(),
        order: 0,
        device_types: ptr::null(),
        num_device_types: 0,
        device_id: -1,
        min_alignment: 0,
        writable: 0,
        strict_strides: 0,
        leading_dim: sys::DLPM_ANY_LEADING_DIM,
        stride_order: ptr::null(),
        compact: 0,
        shape_divisors: ptr::null(),
        stride_divisors: ptr::null(),
    };
    // The literal above is what dlpm_requirements_init writes; no FFI call needed.
    req
}

/// Requirements for a view of `T`: exact dtype, a host-accessible device, data aligned for
/// `T`, and (for mutable views of managed tensors) not READ_ONLY.
pub(crate) fn element_requirements<T: Element>(writable: bool) -> sys::dlpm_requirements {
    let mut req = any_requirements();
    req.check_dtype = 1;
    req.dtype = T::DTYPE.0;
    req.device_types = HOST_DEVICE_TYPES.as_ptr();
    req.num_device_types = HOST_DEVICE_TYPES.len() as i32;
    req.min_alignment = std::mem::align_of::<T>() as u64;
    req.writable = i32::from(writable);
    req
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
pub(crate) unsafe fn dims<'a>(ptr: *const i64, ndim: i32, what: &str) -> Result<&'a [i64], Error> {
    if ndim <= 0 || ptr.is_null() {
        return Ok(&[]);
    }
    if !ptr.is_aligned() {
        return Err(Error::new(
            Status::MISALIGNED_METADATA,
            format!(
                "{what} = {ptr:p} is not aligned for int64_t ({} bytes)",
                std::mem::align_of::<i64>()
            ),
        ));
    }
    // SAFETY: non-NULL and aligned; the caller guarantees ndim readable entries at ptr
    // for 'a.
    Ok(unsafe { std::slice::from_raw_parts(ptr, ndim as usize) })
}

/// Refuses an element type whose size is not one element of its dtype as the tensor stores
/// it (`subbyte_padded`: the tensor's IS_SUBBYTE_TYPE_PADDED flag), with the C++ core's
/// status and wording ([`Status::SUBBYTE_NOT_VIEWABLE`]). `Element`'s contract promises a
/// matching size, but a view built on a wrong one would address memory the facade never
/// validated, so it is checked here as well (a constant per `T` after inlining).
pub(crate) fn check_element_size<T: Element>(subbyte_padded: bool) -> Result<(), Error> {
    let dtype = T::DTYPE;
    let size = std::mem::size_of::<T>();
    if dtype.storage_size(subbyte_padded) == Some(size) {
        return Ok(());
    }
    Err(Error::new(
        Status::SUBBYTE_NOT_VIEWABLE,
        format!(
            "dtype (code {}, bits {}, lanes {}) {}, which cannot be viewed as one {size}-byte \
             element each",
            dtype.code().0,
            dtype.bits(),
            dtype.lanes(),
            if subbyte_padded {
                "is stored one byte per lane (padded)"
            } else {
                "is packed"
            }
        ),
    ))
}

/// `dlpm_is_contiguous` as a `bool`.
pub(crate) fn is_contiguous(t: &sys::DLTensor, order: Order) -> Result<bool, Error> {
    let mut out = 0i32;
    // SAFETY: t is a live DLTensor (the facade validates it before reading shape/strides);
    // out is a valid out-parameter.
    check(unsafe { sys::dlpm_is_contiguous(t, order.as_c_char(), &mut out) })?;
    Ok(out != 0)
}

/// What both view types share: the validated tensor, its shape and strides as slices
/// (built once, after validation), row-major strides computed here when the tensor's are
/// NULL, and its element count.
#[derive(Clone)]
struct Layout<'a> {
    tensor: &'a sys::DLTensor,
    /// The tensor's shape (empty for rank 0).
    shape: &'a [i64],
    /// The tensor's own strides (empty for rank 0 or NULL strides).
    own_strides: &'a [i64],
    /// Row-major strides owned by the view when the tensor's strides are NULL.
    implicit_strides: Option<Box<[i64]>>,
    len: usize,
}

impl<'a> Layout<'a> {
    /// # Safety
    ///
    /// `t` has passed the facade's checks for an element type of `size` bytes (structure,
    /// dtype, host device, alignment); its shape and strides stay valid for `'a`.
    unsafe fn new(t: &'a sys::DLTensor, size: usize) -> Result<Self, Error> {
        // The facade has validated the shape (aligned, non-negative extents, product within
        // i64) and the strides (aligned); dims() re-checks the alignment before building a
        // slice.
        // SAFETY: validated: shape and strides hold ndim entries valid for 'a (or ndim is
        // 0, or strides are NULL).
        let (shape, own_strides) = unsafe {
            (
                dims(t.shape, t.ndim, "shape")?,
                dims(t.strides, t.ndim, "strides")?,
            )
        };
        let numel: i64 = shape.iter().product();
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
        let implicit_strides = if t.ndim > 0 && t.strides.is_null() {
            let mut strides = vec![0i64; shape.len()].into_boxed_slice();
            let mut s = 1i64;
            for r in (0..shape.len()).rev() {
                strides[r] = s;
                // Cannot overflow for a tensor with elements (the facade checked its span);
                // an empty tensor addresses nothing, so saturating is harmless there.
                s = s.saturating_mul(shape[r]);
            }
            Some(strides)
        } else {
            None
        };
        Ok(Layout {
            tensor: t,
            shape,
            own_strides,
            implicit_strides,
            len,
        })
    }

    fn shape(&self) -> &'a [i64] {
        self.shape
    }

    fn strides(&self) -> &[i64] {
        match &self.implicit_strides {
            Some(s) => s,
            None => self.own_strides,
        }
    }

    /// The address of element `index`, bounds-checked against the shape; the offset
    /// arithmetic is checked too, though the facade has already verified that the whole
    /// index span fits `i64`.
    fn locate(&self, index: &[usize], size: usize) -> Result<*mut u8, Error> {
        let shape = self.shape();
        if index.len() != shape.len() {
            return Err(Error::new(
                Status::NDIM_MISMATCH,
                format!(
                    "the index has {} entries but the tensor has rank {}",
                    index.len(),
                    shape.len()
                ),
            ));
        }
        let overflow = || Error::new(Status::SPAN_OVERFLOW, "element offset overflows");
        let mut offset = 0i64;
        for (r, ((&i, &extent), &stride)) in index.iter().zip(shape).zip(self.strides()).enumerate()
        {
            match i64::try_from(i) {
                Ok(i) if i < extent => {
                    offset = i
                        .checked_mul(stride)
                        .and_then(|d| offset.checked_add(d))
                        .ok_or_else(overflow)?;
                }
                _ => {
                    return Err(Error::new(
                        Status::INVALID_ARGUMENT,
                        format!("index[{r}] = {i} is outside [0, {extent})"),
                    ))
                }
            }
        }
        let bytes = offset
            .checked_mul(size as i64)
            .and_then(|b| b.checked_add(self.tensor.byte_offset as i64))
            .and_then(|b| isize::try_from(b).ok())
            .ok_or_else(overflow)?;
        Ok(self.tensor.data.cast::<u8>().wrapping_offset(bytes))
    }

    /// The first element of a C-contiguous tensor as a slice base (dangling when empty).
    fn slice_base<T>(&self) -> Result<NonNull<T>, Error> {
        let mut req = any_requirements();
        req.order = b'C' as std::ffi::c_char;
        // SAFETY: the tensor is valid for 'a; req is a valid requirements struct.
        check(unsafe { sys::dlpm_check(self.tensor, &req) })?;
        if self.len == 0 {
            return Ok(NonNull::dangling());
        }
        let base = self
            .tensor
            .data
            .cast::<u8>()
            .wrapping_add(self.tensor.byte_offset as usize)
            .cast::<T>();
        NonNull::new(base).ok_or_else(|| Error::new(Status::NULL_DATA, "data is NULL"))
    }

    fn to_vec<T: Element>(&self) -> Vec<T> {
        let shape = self.shape();
        let mut out = Vec::with_capacity(self.len);
        if self.len == 0 {
            return out;
        }
        let mut index = vec![0usize; shape.len()];
        loop {
            let p = self
                .locate(&index, std::mem::size_of::<T>())
                .expect("index in bounds");
            // SAFETY: an in-bounds element of a validated view of T (see TensorView::get).
            out.push(unsafe { p.cast::<T>().read() });
            // Row-major odometer.
            let mut r = shape.len();
            loop {
                if r == 0 {
                    return out;
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

/// A shared, typed, validated view of a host tensor: like `&'a [T]` with a shape and
/// strides. Borrowed from a [`ManagedTensor`](crate::ManagedTensor) with
/// [`view`](crate::ManagedTensor::view), or made from a raw `DLTensor` with
/// [`from_raw`](Self::from_raw).
///
/// ```
/// use dlpack_mdspan::ManagedTensor;
///
/// let t = ManagedTensor::from_vec_strided(vec![1i32, 2, 3, 4, 5, 6], &[2, 2], &[3, 2])?;
/// let v = t.view::<i32>()?;
/// assert_eq!(v.strides(), &[3, 2]);
/// assert_eq!(v.get(&[1, 1]), Some(&6));
/// assert_eq!(v.get(&[2, 0]), None);
/// assert_eq!(v.to_vec(), vec![1, 3, 4, 6]);
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
pub struct TensorView<'a, T: Element> {
    layout: Layout<'a>,
    _elements: PhantomData<&'a [T]>,
}

// SAFETY: a TensorView only reads elements of type T, which is Sync (Element requires it),
// and the DLTensor it borrows, which nobody mutates during 'a; like &'a [T], it may be sent
// to and shared between threads.
unsafe impl<T: Element> Send for TensorView<'_, T> {}
// SAFETY: see the Send impl above.
unsafe impl<T: Element> Sync for TensorView<'_, T> {}

impl<'a, T: Element> TensorView<'a, T> {
    /// # Safety
    ///
    /// `t` passed `element_requirements::<T>` in the facade, and the contract of
    /// [`from_raw`](Self::from_raw) holds for `'a`. The tensor's sub-byte elements, if
    /// any, are packed (no IS_SUBBYTE_TYPE_PADDED flag).
    pub(crate) unsafe fn new_checked(t: &'a sys::DLTensor) -> Result<Self, Error> {
        // SAFETY: forwarded from this function's contract.
        unsafe { Self::new_checked_stored(t, false) }
    }

    /// [`new_checked`](Self::new_checked) for a managed tensor whose IS_SUBBYTE_TYPE_PADDED
    /// flag is `subbyte_padded`.
    ///
    /// # Safety
    ///
    /// As for [`new_checked`](Self::new_checked), with the facade's check made with the
    /// same flag (`dlpm_check_managed` on the tensor that carries it).
    pub(crate) unsafe fn new_checked_stored(
        t: &'a sys::DLTensor,
        subbyte_padded: bool,
    ) -> Result<Self, Error> {
        check_element_size::<T>(subbyte_padded)?;
        // SAFETY: forwarded from this function's contract; size_of::<T>() is the element
        // size the facade validated the tensor with (checked just above).
        let layout = unsafe { Layout::new(t, std::mem::size_of::<T>()) }?;
        Ok(TensorView {
            layout,
            _elements: PhantomData,
        })
    }

    /// A view of a bare `DLTensor` (no flags, no owner), after the facade's checks
    /// (`dlpm_check`): structure, dtype equal to `T::DTYPE`, a host-accessible device, data
    /// aligned for `T`.
    ///
    /// # Safety
    ///
    /// For `'a`: the tensor's `shape` and `strides` stay valid and unmodified; every
    /// element it addresses is valid for reads; no other code writes those elements; and if
    /// `T` is `bool`, every element byte is 0 or 1. (Every other [`Element`] accepts any bit
    /// pattern: see its safety contract.)
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
    /// assert_eq!(v.strides(), &[2, 1]); // computed, owned by the view
    /// assert_eq!(v.get(&[2, 0]), Some(&5.0));
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub unsafe fn from_raw(tensor: &'a sys::DLTensor) -> Result<Self, Error> {
        let req = element_requirements::<T>(false);
        // SAFETY: tensor is a live DLTensor; the facade validates it before reading its
        // arrays; req is a valid requirements struct.
        check(unsafe { sys::dlpm_check(tensor, &req) })?;
        // SAFETY: just checked; the caller guarantees the rest for 'a.
        unsafe { Self::new_checked(tensor) }
    }

    /// The shape (empty for rank 0).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let t = ManagedTensor::from_vec(vec![0u8; 6], &[2, 3])?;
    /// assert_eq!(t.view::<u8>()?.shape(), &[2, 3]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn shape(&self) -> &'a [i64] {
        self.layout.shape()
    }

    /// The strides in elements (empty for rank 0; row-major when the tensor's are NULL).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let t = ManagedTensor::from_vec(vec![0u8; 6], &[2, 3])?;
    /// assert_eq!(t.view::<u8>()?.strides(), &[3, 1]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn strides(&self) -> &[i64] {
        self.layout.strides()
    }

    /// The rank.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// assert_eq!(ManagedTensor::from_vec(vec![0u8], &[])?.view::<u8>()?.ndim(), 0);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.layout.shape().len()
    }

    /// The number of elements (1 for rank 0).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// assert_eq!(ManagedTensor::from_vec(vec![0u8; 6], &[2, 3])?.view::<u8>()?.len(), 6);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.layout.len
    }

    /// Whether the tensor has no elements.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// assert!(ManagedTensor::from_vec(Vec::<u8>::new(), &[0, 3])?.view::<u8>()?.is_empty());
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.layout.len == 0
    }

    /// The device (host-accessible).
    ///
    /// ```
    /// # use dlpack_mdspan::{Device, ManagedTensor};
    /// assert_eq!(ManagedTensor::from_vec(vec![0u8], &[1])?.view::<u8>()?.device(), Device::CPU);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn device(&self) -> Device {
        Device(self.layout.tensor.device)
    }

    /// The dtype, `T::DTYPE`.
    ///
    /// ```
    /// # use dlpack_mdspan::{DataType, ManagedTensor};
    /// assert_eq!(ManagedTensor::from_vec(vec![0u8], &[1])?.view::<u8>()?.dtype(), DataType::U8);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn dtype(&self) -> DataType {
        T::DTYPE
    }

    /// Whether the view is contiguous in `order` (`dlpm_is_contiguous`).
    ///
    /// ```
    /// # use dlpack_mdspan::{ManagedTensor, Order};
    /// let t = ManagedTensor::from_vec_strided(vec![0u8; 6], &[3, 2], &[1, 3])?;
    /// assert!(t.view::<u8>()?.is_contiguous(Order::F)?);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn is_contiguous(&self, order: Order) -> Result<bool, Error> {
        is_contiguous(self.layout.tensor, order)
    }

    /// The element at `index` (one entry per dimension), or `None` when the index has the
    /// wrong length or is out of bounds. Strides (zero, negative, any) and `byte_offset` are
    /// honoured.
    ///
    /// ```
    /// # use dlpack_mdspan::{Flags, ManagedTensor};
    /// // Reversed: stride -1 starting from the last element.
    /// let t = ManagedTensor::from_vec_with(vec![1u8, 2, 3], &[3], Some(&[-1]), 2, Flags::empty())?;
    /// let v = t.view::<u8>()?;
    /// assert_eq!(v.get(&[0]), Some(&3));
    /// assert_eq!(v.get(&[3]), None);
    /// assert_eq!(v.get(&[0, 0]), None);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn get(&self, index: &[usize]) -> Option<&'a T> {
        let p = self.layout.locate(index, std::mem::size_of::<T>()).ok()?;
        // SAFETY: the facade checked the dtype (size of T), the host device and the
        // alignment of data + byte_offset (element offsets are multiples of size_of::<T>(),
        // itself a multiple of its alignment); the index is in bounds, so p addresses an
        // element that is valid for reads and unwritten for 'a (the view's contract), and
        // holds a valid T (any bit pattern, or 0/1 for bool by contract).
        Some(unsafe { &*p.cast::<T>() })
    }

    /// All elements as a slice, for C-contiguous (row-major) tensors only; others are
    /// refused by the facade with [`Status::NON_COMPACT_STRIDES`]. Empty tensors give an
    /// empty slice.
    ///
    /// ```
    /// # use dlpack_mdspan::{ManagedTensor, Status};
    /// let t = ManagedTensor::from_vec(vec![1u8, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(t.view::<u8>()?.as_slice()?, &[1, 2, 3, 4]);
    /// let f = ManagedTensor::from_vec_strided(vec![1u8, 2, 3, 4], &[2, 2], &[1, 2])?;
    /// assert_eq!(f.view::<u8>()?.as_slice().unwrap_err().status(), Status::NON_COMPACT_STRIDES);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn as_slice(&self) -> Result<&'a [T], Error> {
        let base = self.layout.slice_base::<T>()?;
        // SAFETY: C-contiguous (checked by the facade), so the len elements are consecutive
        // from data + byte_offset, aligned, valid for reads and unwritten for 'a; an empty
        // tensor uses a dangling, aligned, non-NULL pointer. len * size <= isize::MAX.
        Ok(unsafe { std::slice::from_raw_parts(base.as_ptr(), self.layout.len) })
    }

    /// The elements copied out in row-major (logical) order, whatever the strides.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let t = ManagedTensor::from_vec_strided(vec![1u8, 2, 3, 4], &[2, 2], &[1, 2])?;
    /// assert_eq!(t.view::<u8>()?.to_vec(), vec![1, 3, 2, 4]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn to_vec(&self) -> Vec<T> {
        self.layout.to_vec::<T>()
    }
}

impl<T: Element> Clone for TensorView<'_, T> {
    fn clone(&self) -> Self {
        TensorView {
            layout: self.layout.clone(),
            _elements: PhantomData,
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
    layout: Layout<'a>,
    exclusive: bool,
    _elements: PhantomData<&'a mut [T]>,
}

// SAFETY: like &'a mut [T]: sending the view sends the unique right to access the elements
// (T is Send); the borrowed DLTensor is never mutated.
unsafe impl<T: Element> Send for TensorViewMut<'_, T> {}
// SAFETY: &TensorViewMut only allows reads (every write needs &mut self), and T is Sync.
unsafe impl<T: Element> Sync for TensorViewMut<'_, T> {}

impl<'a, T: Element> TensorViewMut<'a, T> {
    /// # Safety
    ///
    /// `t` passed `element_requirements::<T>` in the facade, the contract of
    /// [`from_raw`](Self::from_raw) holds for `'a`, and `exclusive_provenance` is true only
    /// if nothing outside this view can reach the elements during `'a`. The tensor's
    /// sub-byte elements, if any, are packed (no IS_SUBBYTE_TYPE_PADDED flag).
    pub(crate) unsafe fn new_checked(
        t: &'a sys::DLTensor,
        exclusive_provenance: bool,
    ) -> Result<Self, Error> {
        // SAFETY: forwarded from this function's contract.
        unsafe { Self::new_checked_stored(t, exclusive_provenance, false) }
    }

    /// [`new_checked`](Self::new_checked) for a managed tensor whose IS_SUBBYTE_TYPE_PADDED
    /// flag is `subbyte_padded`.
    ///
    /// # Safety
    ///
    /// As for [`new_checked`](Self::new_checked), with the facade's check made with the
    /// same flag (`dlpm_check_managed` on the tensor that carries it).
    pub(crate) unsafe fn new_checked_stored(
        t: &'a sys::DLTensor,
        exclusive_provenance: bool,
        subbyte_padded: bool,
    ) -> Result<Self, Error> {
        check_element_size::<T>(subbyte_padded)?;
        // SAFETY: forwarded from this function's contract; size_of::<T>() is the element
        // size the facade validated the tensor with (checked just above).
        let layout = unsafe { Layout::new(t, std::mem::size_of::<T>()) }?;
        // Zero, negative or overlapping strides cannot be contiguous: only C- or
        // F-contiguous layouts (checked by the facade) count as exclusive.
        let exclusive = exclusive_provenance && is_contiguous(t, Order::Any)?;
        Ok(TensorViewMut {
            layout,
            exclusive,
            _elements: PhantomData,
        })
    }

    /// A mutable view of a bare `DLTensor`, after the facade's checks (`dlpm_check`):
    /// structure, dtype equal to `T::DTYPE`, a host-accessible device, data aligned for `T`.
    /// A bare `DLTensor` has no flags, so READ_ONLY cannot be checked here, and the view is
    /// never [exclusive](Self::is_exclusive): only [`set`](Self::set) writes, unless you
    /// call [`assume_exclusive`](Self::assume_exclusive).
    ///
    /// # Safety
    ///
    /// For `'a`: the tensor's `shape` and `strides` stay valid and unmodified; every element
    /// it addresses is valid for reads and writes, and the producer allows writes; no other
    /// code reads or writes those elements; and if `T` is `bool`, every element byte is 0
    /// or 1.
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
    pub unsafe fn from_raw(tensor: &'a sys::DLTensor) -> Result<Self, Error> {
        let req = element_requirements::<T>(false);
        // SAFETY: tensor is a live DLTensor; the facade validates it before reading its
        // arrays; req is a valid requirements struct.
        check(unsafe { sys::dlpm_check(tensor, &req) })?;
        // SAFETY: just checked; the caller guarantees the rest for 'a; not exclusive.
        unsafe { Self::new_checked(tensor, false) }
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
            layout: self.layout.clone(),
            _elements: PhantomData,
        }
    }

    /// The shape (empty for rank 0).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![0u8; 6], &[3, 2])?;
    /// assert_eq!(t.view_mut::<u8>()?.shape(), &[3, 2]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn shape(&self) -> &'a [i64] {
        self.layout.shape()
    }

    /// The strides in elements (empty for rank 0; row-major when the tensor's are NULL).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![0u8; 6], &[3, 2])?;
    /// assert_eq!(t.view_mut::<u8>()?.strides(), &[2, 1]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn strides(&self) -> &[i64] {
        self.layout.strides()
    }

    /// The rank.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![0u8; 6], &[3, 2])?;
    /// assert_eq!(t.view_mut::<u8>()?.ndim(), 2);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.layout.shape().len()
    }

    /// The number of elements (1 for rank 0).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![0u8; 6], &[3, 2])?;
    /// assert_eq!(t.view_mut::<u8>()?.len(), 6);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.layout.len
    }

    /// Whether the tensor has no elements.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec(vec![0u8; 6], &[3, 2])?;
    /// assert!(!t.view_mut::<u8>()?.is_empty());
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.layout.len == 0
    }

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
    /// let mut b = ManagedTensor::from_vec_strided(vec![0u8; 2], &[3, 2], &[0, 1])?; // broadcast
    /// assert!(!b.view_mut::<u8>()?.is_exclusive());
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Declares that nothing outside this view reaches its elements while it lives, so that
    /// [`get_mut`](Self::get_mut) and [`as_mut_slice`](Self::as_mut_slice) work on a
    /// tensor whose provenance this crate cannot see (from C, Python, a raw `DLTensor`).
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
        let p = self.layout.locate(index, std::mem::size_of::<T>()).ok()?;
        // SAFETY: as in TensorView::get; the returned borrow of self excludes writes
        // through this view while it lives.
        Some(unsafe { &*p.cast::<T>() })
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
        let p = self.layout.locate(index, std::mem::size_of::<T>())?;
        // SAFETY: p addresses an in-bounds, aligned element of T that is valid for writes
        // (not READ_ONLY, or by from_raw's contract) and that nobody else accesses while
        // this view lives (the view's contract); &mut self excludes references handed out
        // by this view.
        unsafe { p.cast::<T>().write(value) };
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
        let p = self.layout.locate(index, std::mem::size_of::<T>())?;
        // SAFETY: as in set; the view is exclusive, so no other reference to this element
        // exists anywhere, and the returned borrow of self excludes any other access
        // through this view while it lives.
        Ok(unsafe { &mut *p.cast::<T>() })
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
        let base = self.layout.slice_base::<T>()?;
        // SAFETY: C-contiguous (checked by the facade): len consecutive, aligned elements
        // valid for reads and writes (or a dangling pointer for len 0); exclusive, so no
        // other reference to them exists; the borrow of self excludes other access through
        // this view. len * size <= isize::MAX.
        Ok(unsafe { std::slice::from_raw_parts_mut(base.as_ptr(), self.layout.len) })
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
        let base = self.layout.slice_base::<T>()?;
        // SAFETY: as in TensorView::as_slice; the borrow of self excludes writes through
        // this view while the slice lives.
        Ok(unsafe { std::slice::from_raw_parts(base.as_ptr(), self.layout.len) })
    }

    /// The elements copied out in row-major (logical) order.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let mut t = ManagedTensor::from_vec_strided(vec![1u8, 2, 3, 4], &[2, 2], &[1, 2])?;
    /// assert_eq!(t.view_mut::<u8>()?.to_vec(), vec![1, 3, 2, 4]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn to_vec(&self) -> Vec<T> {
        self.layout.to_vec::<T>()
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

    // The padded sub-byte form of Element's contract: one byte per 4-bit lane fits a tensor
    // flagged IS_SUBBYTE_TYPE_PADDED and not a packed one; a packed pair the other way round.
    #[test]
    fn element_size_follows_the_subbyte_padding() {
        use crate::types::TypeCode;

        #[derive(Clone, Copy)]
        struct Fp4(#[allow(dead_code)] u8);
        // SAFETY: one byte per 4-bit lane (padded); any bit pattern; no interior mutability.
        unsafe impl Element for Fp4 {
            const DTYPE: DataType = DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 1);
        }
        #[derive(Clone, Copy)]
        struct Fp4x2(#[allow(dead_code)] u8);
        // SAFETY: two 4-bit lanes in one byte (packed); any bit pattern; no interior
        // mutability.
        unsafe impl Element for Fp4x2 {
            const DTYPE: DataType = DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 2);
        }

        assert!(check_element_size::<Fp4>(true).is_ok());
        let err = check_element_size::<Fp4>(false).unwrap_err();
        assert_eq!(err.status(), Status::SUBBYTE_NOT_VIEWABLE);
        assert!(err.message().contains("is packed"), "{}", err.message());
        assert!(check_element_size::<Fp4x2>(false).is_ok());
        let err = check_element_size::<Fp4x2>(true).unwrap_err();
        assert_eq!(
            err.message(),
            "dtype (code 17, bits 4, lanes 2) is stored one byte per lane (padded), which cannot be \
             viewed as one 1-byte element each"
        );
        // Whole-byte types are unaffected by the flag.
        assert!(check_element_size::<f32>(true).is_ok());
        assert!(check_element_size::<crate::types::F16>(false).is_ok());
    }

    // any_requirements spells out the facade's defaults to save an FFI call per view; this
    // keeps the two in lock step.
    #[test]
    fn any_requirements_matches_the_facade_defaults() {
        let ours = any_requirements();
        let mut theirs = any_requirements();
        theirs.ndim = 7;
        theirs.device_id = 7;
        theirs.check_dtype = 7;
        theirs.version = 0;
        // SAFETY: theirs is a valid, writable dlpm_requirements.
        let status =
            unsafe { sys::dlpm_requirements_init(&mut theirs, sys::DLPM_REQUIREMENTS_VERSION) };
        assert_eq!(status, sys::DLPM_OK);
        assert_eq!(ours.version, sys::DLPM_REQUIREMENTS_VERSION);
        assert_eq!(theirs.version, sys::DLPM_REQUIREMENTS_VERSION);
        assert_eq!(
            (
                ours.check_dtype,
                ours.ndim,
                ours.order,
                ours.num_device_types,
                ours.device_id
            ),
            (
                theirs.check_dtype,
                theirs.ndim,
                theirs.order,
                theirs.num_device_types,
                theirs.device_id
            )
        );
        assert_eq!(
            (ours.min_alignment, ours.writable, ours.strict_strides),
            (theirs.min_alignment, theirs.writable, theirs.strict_strides)
        );
        assert!(theirs.shape.is_null() && theirs.device_types.is_null());
        assert_eq!(
            (ours.dtype.code, ours.dtype.bits, ours.dtype.lanes),
            (theirs.dtype.code, theirs.dtype.bits, theirs.dtype.lanes)
        );
    }
}
