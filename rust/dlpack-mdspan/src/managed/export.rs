// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Rust memory into a [`ManagedTensor`]: the export constructors (a `Vec`, or any owner
//! of memory it describes), through the facade's `dlpm_managed_new_inline`.

use std::ffi::c_void;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use dlpack_mdspan_sys as sys;

use super::ManagedTensor;
use crate::checks;
use crate::error::{check, Error, Status};
use crate::order::Order;
use crate::types::{DataType, Device, Element, Flags};

/// The `dlpm_release_fn` of every tensor this crate exports, one per owner type `O`:
/// drops the owner, whose bytes the facade keeps in the tensor's allocation
/// (`dlpm_managed_new_inline`). It never unwinds into C: a panicking `Drop` aborts the
/// process.
///
/// # Safety
///
/// `state` must be NULL or the address of the bytes of an `O` moved into the tensor by
/// [`export`] and not released yet; the facade guarantees this by calling it exactly once,
/// with the address of its copy of the owner bytes.
unsafe extern "C" fn release_owner<O>(state: *mut c_void) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if !state.is_null() {
            // SAFETY: by this function's contract, state holds an O moved out of Rust and
            // released exactly once, here (read unaligned: the facade promises
            // DLPM_INLINE_OWNER_ALIGNMENT, which export checked O needs no more than, but the
            // read does not rely on it).
            drop(unsafe { state.cast::<O>().read_unaligned() });
        }
    }));
    if outcome.is_err() {
        // Unwinding into the C++ deleter would be undefined behaviour; the panic message
        // has already been printed by the panic hook.
        std::process::abort();
    }
}

impl ManagedTensor {
    /// Exports a `Vec` as a compact row-major (C-order) host tensor of shape `shape`. The
    /// `Vec` is moved into the tensor and dropped by its deleter, on whatever thread that
    /// runs. `shape` must describe at most `vec.len()` elements. Strides, an offset or flags
    /// go through [`build_from_vec`](Self::build_from_vec).
    ///
    /// ```
    /// use dlpack_mdspan::ManagedTensor;
    ///
    /// let t = ManagedTensor::from_vec((0..6).collect::<Vec<i64>>(), &[2, 3])?;
    /// assert_eq!(t.view::<i64>()?.get(&[1, 0]), Some(&3));
    /// assert!(ManagedTensor::from_vec(vec![0i64; 5], &[2, 3]).is_err()); // 6 elements needed
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn from_vec<T: Element>(vec: Vec<T>, shape: &[i64]) -> Result<Self, Error> {
        // VecExport::finish's path, without the builder in between (whose by-memory
        // argument cost the round trip one instruction per call).
        export_vec(vec, shape, None, 0, Flags::empty())
    }

    /// Starts the export of a `Vec` as a host tensor of shape `shape`, for the options
    /// [`from_vec`](Self::from_vec) leaves at their defaults: [`strides`](VecExport::strides),
    /// [`offset`](VecExport::offset) and [`flags`](VecExport::flags);
    /// [`finish`](VecExport::finish) exports. Nothing is checked before `finish`.
    ///
    /// ```
    /// use dlpack_mdspan::{Flags, ManagedTensor, Status};
    ///
    /// // The transpose of a 2x3 row-major matrix.
    /// let t = ManagedTensor::build_from_vec(vec![1u8, 2, 3, 4, 5, 6], &[3, 2]).strides(&[1, 3]).finish()?;
    /// assert_eq!(t.view::<u8>()?.get(&[2, 1]), Some(&6));
    ///
    /// // A reversed, read-only vector: element [0] is the Vec's last one, stride -1.
    /// let t = ManagedTensor::build_from_vec(vec![1u64, 2, 3], &[3])
    ///     .strides(&[-1])
    ///     .offset(2)
    ///     .flags(Flags::READ_ONLY)
    ///     .finish()?;
    /// assert_eq!(t.dl_tensor().byte_offset, 16);
    /// assert_eq!(t.view::<u64>()?.to_vec(), vec![3, 2, 1]);
    /// assert_eq!(t.flags(), Flags::READ_ONLY);
    ///
    /// // A layout that reaches past the end of the Vec is refused.
    /// let err = ManagedTensor::build_from_vec(vec![0u8; 6], &[3, 2]).strides(&[2, 3]).finish().unwrap_err();
    /// assert_eq!(err.status(), Status::INVALID_ARGUMENT);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn build_from_vec<T: Element>(vec: Vec<T>, shape: &[i64]) -> VecExport<'_, T> {
        VecExport {
            vec,
            shape,
            strides: None,
            offset: 0,
            flags: Flags::empty(),
        }
    }

    /// Starts the export of memory kept alive by `owner` (a `Box<[T]>`, an `Arc`, a memory
    /// map, a device allocation, ...): `data` on `device`, elements of `dtype`, of shape
    /// `shape`. The options are [`strides`](OwnerExport::strides) (row-major without them),
    /// [`order`](OwnerExport::order), [`byte_offset`](OwnerExport::byte_offset) and
    /// [`flags`](OwnerExport::flags); the `unsafe` [`finish`](OwnerExport::finish) exports,
    /// and states what the description must promise. Nothing is checked before `finish`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dlpack_mdspan::{DataType, Device, Element, Flags, ManagedTensor};
    ///
    /// let shared: Arc<[f32]> = vec![1.0, 2.0, 3.0].into();
    /// let data = shared.as_ptr().cast_mut().cast();
    /// let export = ManagedTensor::build_from_owner(shared.clone(), data, f32::DTYPE, Device::CPU, &[3])
    ///     .flags(Flags::READ_ONLY);
    /// // SAFETY: `shared` keeps the three floats alive and is never written; the tensor is
    /// // READ_ONLY so no consumer writes it either.
    /// let t = unsafe { export.finish() }?;
    /// assert_eq!(t.view::<f32>()?.as_slice()?, &[1.0, 2.0, 3.0]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn build_from_owner<O: Send + 'static>(
        owner: O,
        data: *mut c_void,
        dtype: DataType,
        device: Device,
        shape: &[i64],
    ) -> OwnerExport<'_, O> {
        OwnerExport {
            owner,
            data,
            dtype,
            device,
            shape,
            strides: None,
            order: None,
            byte_offset: 0,
            flags: Flags::empty(),
        }
    }
}

/// The export of a `Vec` as a host tensor, begun by [`ManagedTensor::build_from_vec`] and
/// done by [`finish`](Self::finish).
#[must_use = "nothing is exported until `finish` is called"]
#[derive(Debug)]
pub struct VecExport<'a, T> {
    vec: Vec<T>,
    shape: &'a [i64],
    strides: Option<&'a [i64]>,
    offset: usize,
    flags: Flags,
}

impl<'a, T: Element> VecExport<'a, T> {
    /// Explicit strides, in elements, one per dimension (zero and negative strides are
    /// allowed); without them the tensor is compact row-major. Every element the layout
    /// addresses must lie inside the `Vec`: the lowest addressed index at least 0, the
    /// highest below `vec.len()`.
    pub fn strides(mut self, strides: &'a [i64]) -> Self {
        self.strides = Some(strides);
        self
    }

    /// The index in the `Vec` of element `[0, 0, ...]` (0 without it), which becomes the
    /// tensor's `byte_offset`; negative strides need one.
    pub fn offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }

    /// The tensor's DLPack flags (none without it), e.g. [`Flags::READ_ONLY`]: consumers
    /// (this crate's [`view_mut`](ManagedTensor::view_mut), the C++ `view<M>()` with a
    /// mutable element type, NumPy) refuse to write a READ_ONLY tensor.
    pub fn flags(mut self, flags: Flags) -> Self {
        self.flags = flags;
        self
    }

    /// Exports the `Vec`: it is moved into the tensor and dropped by its deleter, on
    /// whatever thread that runs. Refused (the `Vec` dropped here) when the description is
    /// invalid or addresses an element outside the `Vec`.
    pub fn finish(self) -> Result<ManagedTensor, Error> {
        export_vec(self.vec, self.shape, self.strides, self.offset, self.flags)
    }
}

/// The one path of every `Vec` export ([`VecExport::finish`], [`ManagedTensor::from_vec`]).
/// A compact row-major layout (no strides, no offset, no flags) inside the `Vec`, of an
/// element type the facade accepted, is valid by construction: it is made here
/// ([`export_in_bounds`]) without the facade's re-validation. Everything else takes
/// [`export_vec_checked`].
#[inline]
fn export_vec<T: Element>(
    vec: Vec<T>,
    shape: &[i64],
    strides: Option<&[i64]>,
    offset: usize,
    flags: Flags,
) -> Result<ManagedTensor, Error> {
    if strides.is_none()
        && offset == 0
        && flags.bits() == 0
        && row_major_in_vec(shape, vec.len())
        && exports_in_bounds::<T>()
    {
        // SAFETY: row_major_in_vec found at most IN_BOUNDS_MAX_NDIM extents, none negative,
        // at least one element and at most vec.len(): the compact row-major layout
        // addresses, from element 0, elements 0 to count - 1 only; exports_in_bounds
        // checked T's element size, unpadded.
        return Ok(unsafe { export_in_bounds(vec, shape, InBoundsStrides::RowMajor, 0) });
    }
    export_vec_checked(vec, shape, strides, offset, flags)
}

/// A `Vec` export through the facade: the element size rule, the offset in bytes, and the
/// facade's checks with the `Vec`'s size, a layout outside it worded in its elements.
#[inline(never)]
fn export_vec_checked<T: Element>(
    mut vec: Vec<T>,
    shape: &[i64],
    strides: Option<&[i64]>,
    offset: usize,
    flags: Flags,
) -> Result<ManagedTensor, Error> {
    let size = std::mem::size_of::<T>();
    // A type whose size is only the padded storage of its dtype (one byte per sub-byte
    // lane) is stored padded, and says so (the C++ core's subbyte_flags); any other
    // registration must fill its bytes exactly. A type that breaks Element's size
    // promise is refused here, before a consumer could read past the Vec.
    let padded = is_padded::<T>();
    checks::check_element_size::<T>(if padded {
        Flags::IS_SUBBYTE_TYPE_PADDED.0
    } else {
        0
    })?;
    let flags = if padded {
        flags | Flags::IS_SUBBYTE_TYPE_PADDED
    } else {
        flags
    };
    let byte_offset = offset
        .checked_mul(size)
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(|| {
            Error::new(
                Status::BYTE_OFFSET_OVERFLOW,
                format!("offset = {offset} elements overflows"),
            )
        })?;
    let data = vec.as_mut_ptr().cast::<c_void>();
    // No strides: NULL, which the facade reads as row-major and stores explicitly.
    let description = describe(data, T::DTYPE, Device::CPU, shape, strides, byte_offset)?;
    if padded && check_inside_vec(&description, flags, size, vec.len())? {
        // Refused as before dlpm_byte_span (whose answer would place such elements
        // correctly): build_from_owner with IS_SUBBYTE_TYPE_PADDED exports them.
        return Err(Error::new(
            Status::SUBBYTE_NOT_VIEWABLE,
            format!(
                "from_vec does not export elements of the padded sub-byte dtype {} (one byte per \
                     lane); use build_from_owner with Flags::IS_SUBBYTE_TYPE_PADDED",
                T::DTYPE
            ),
        ));
    }
    // The Vec's bytes bound the layout: the facade refuses, after validating the
    // description, a layout that reaches outside them (a Vec never holds more than
    // isize::MAX bytes, so the product fits).
    let buffer = (vec.len() * size) as u64;
    // SAFETY: `data` points to vec.len() initialised elements of T, which stay where they
    // are when the Vec (moved into the owner) moves; the facade checks that every
    // element the layout addresses lies inside them; the Vec is owned by the tensor
    // alone.
    match unsafe { export(vec, &description, None, flags, buffer) } {
        Ok(mut tensor) => {
            tensor.set_made_here();
            Ok(tensor)
        }
        Err((error, vec)) => {
            // The facade words a layout outside the buffer in bytes; word it in the Vec's
            // elements, as this crate always has (dlpm_byte_span on the same layout).
            if let (Status::INVALID_ARGUMENT, Some(vec)) = (error.status(), vec) {
                check_inside_vec(&description, flags, size, vec.len())?;
            }
            Err(error)
        }
    }
}

/// Whether `T`'s size is only the padded storage of its dtype (one byte per sub-byte lane):
/// a constant of the type.
#[inline]
const fn is_padded<T: Element>() -> bool {
    let size = std::mem::size_of::<T>();
    !matches!(T::DTYPE.storage_itemsize(false), Some(s) if s == size)
        && matches!(T::DTYPE.storage_itemsize(true), Some(s) if s == size)
}

/// Whether [`export_in_bounds`] may export elements of `T`: stored unpadded, and accepted
/// by the facade's element-size check (remembered after the first time:
/// [`checks::check_element_size`]). A `false` leaves the export to the facade's path, which
/// words any refusal.
#[inline]
pub(crate) fn exports_in_bounds<T: Element>() -> bool {
    !is_padded::<T>() && checks::check_element_size::<T>(0).is_ok()
}

/// The most dimensions a tensor made by [`export_in_bounds`] holds in its own allocation
/// (a higher rank goes through the facade's export).
pub(crate) const IN_BOUNDS_MAX_NDIM: usize = 8;

/// Whether a `Vec` of `len` elements holds every element of the compact row-major layout
/// of `shape`, with at least one element and at most [`IN_BOUNDS_MAX_NDIM`] extents, none
/// negative: the layouts [`export_in_bounds`] makes from [`InBoundsStrides::RowMajor`].
/// Anything else is left to the facade, which validates it and words the refusal.
#[inline]
fn row_major_in_vec(shape: &[i64], len: usize) -> bool {
    if shape.len() > IN_BOUNDS_MAX_NDIM {
        return false;
    }
    let mut count: u64 = 1; // rank 0: one element, which the Vec must hold too
    for &extent in shape {
        let Ok(extent) = u64::try_from(extent) else {
            return false;
        };
        match count.checked_mul(extent) {
            Some(c) => count = c,
            None => return false,
        }
    }
    count > 0 && count <= len as u64
}

/// The strides of a tensor [`export_in_bounds`] makes, in elements.
pub(crate) enum InBoundsStrides<'a> {
    /// Compact row-major, computed from the shape.
    RowMajor,
    /// These, one per extent (only ndarray's exports give them).
    #[cfg_attr(not(feature = "ndarray"), allow(dead_code))]
    Given(&'a [i64]),
}

/// A tensor made in Rust, in one allocation: the `DLManagedTensorVersioned` first (its
/// address is the block's, for [`delete_in_bounds`]), its shape and strides (the rank's
/// entries written), and the `Vec` whose elements it describes.
#[repr(C)]
struct InBoundsBlock<T> {
    managed: sys::DLManagedTensorVersioned,
    shape: [MaybeUninit<i64>; IN_BOUNDS_MAX_NDIM],
    strides: [MaybeUninit<i64>; IN_BOUNDS_MAX_NDIM],
    vec: Vec<T>,
}

/// The deleter of every tensor [`export_in_bounds`] makes: frees the block, the `Vec`
/// with it. It cannot unwind: dropping a `Vec` of `Copy` elements runs no user code (it
/// only frees; an allocator failure aborts).
///
/// # Safety
///
/// `managed` is NULL or a tensor made by [`export_in_bounds::<T>`], not deleted yet.
unsafe extern "C" fn delete_in_bounds<T>(managed: *mut sys::DLManagedTensorVersioned) {
    if !managed.is_null() {
        // SAFETY: by the contract, managed is the first field (repr(C)) of a live, fully
        // initialised Box<InBoundsBlock<T>> leaked by export_in_bounds (the unwritten
        // shape and stride entries are MaybeUninit), freed exactly once, here.
        drop(unsafe { Box::from_raw(managed.cast::<InBoundsBlock<T>>()) });
    }
}

/// Exports `vec` as a host tensor of `shape` and `strides` (in elements) whose element
/// `[0, 0, ...]` is `vec[offset]`, without asking the facade: one allocation holds the
/// managed tensor, its shape and strides, and the `Vec`; no flags. This is the export of a
/// layout valid by construction (from_vec's row-major shape inside the Vec, an
/// `ndarray::Array`'s own layout), which the facade's validation would only repeat; every
/// consumer still validates what it views (a `ManagedTensor`'s views through the facade).
///
/// # Safety
///
/// - `shape` has at most [`IN_BOUNDS_MAX_NDIM`] entries, none negative, addressing at
///   least one element; [`InBoundsStrides::Given`] strides have as many entries.
/// - Every index of the layout addresses, from `vec[offset]`, an element of `vec` (so the
///   element count, the span and the byte offset all fit `isize`).
/// - `T` passed the facade's element-size check without IS_SUBBYTE_TYPE_PADDED
///   ([`exports_in_bounds`]), so `T::DTYPE` is a dtype the core accepts whose elements are
///   `size_of::<T>()` bytes.
pub(crate) unsafe fn export_in_bounds<T: Element>(
    mut vec: Vec<T>,
    shape: &[i64],
    strides: InBoundsStrides<'_>,
    offset: usize,
) -> ManagedTensor {
    let ndim = shape.len();
    debug_assert!(ndim <= IN_BOUNDS_MAX_NDIM);
    let data = vec.as_mut_ptr().cast::<c_void>(); // writable: the Vec is the tensor's alone
    let block = Box::into_raw(Box::<InBoundsBlock<T>>::new_uninit()).cast::<InBoundsBlock<T>>();
    // SAFETY: block is a live allocation for an InBoundsBlock<T>, written here field by
    // field through raw places (no reference to the uninitialised block), every field
    // before the tensor is handed out: `managed` whole, `vec`, and the first ndim entries
    // of shape and strides (the others are MaybeUninit). Its contents stay where they are
    // until delete_in_bounds frees it, so the shape and strides pointers stay valid that
    // long; they and the tensor's pointer derive from the raw `block`, so the tensor's
    // pointer keeps the whole block's provenance for the deleter's Box::from_raw.
    unsafe {
        let shape_out = ptr::addr_of_mut!((*block).shape).cast::<i64>();
        let strides_out = ptr::addr_of_mut!((*block).strides).cast::<i64>();
        // Element by element: a rank's few entries cost less than a call to memcpy.
        match strides {
            InBoundsStrides::Given(s) => {
                debug_assert_eq!(s.len(), ndim);
                for (r, (&n, &s)) in shape.iter().zip(s).enumerate() {
                    shape_out.add(r).write(n);
                    strides_out.add(r).write(s);
                }
            }
            InBoundsStrides::RowMajor => {
                // Every partial product is at most the element count, which fits isize.
                let mut stride = 1i64;
                for (r, &n) in shape.iter().enumerate().rev() {
                    shape_out.add(r).write(n);
                    strides_out.add(r).write(stride);
                    stride = stride.wrapping_mul(n);
                }
            }
        }
        ptr::addr_of_mut!((*block).managed).write(sys::DLManagedTensorVersioned {
            version: sys::DLPackVersion {
                major: sys::DLPACK_MAJOR_VERSION,
                minor: sys::DLPACK_MINOR_VERSION,
            },
            manager_ctx: block.cast::<c_void>(),
            deleter: Some(delete_in_bounds::<T>),
            flags: 0,
            dl_tensor: sys::DLTensor {
                data,
                device: Device::CPU.0,
                ndim: ndim as i32,
                dtype: T::DTYPE.0,
                shape: shape_out,
                strides: strides_out,
                // offset < vec.len(), and the Vec's bytes fit isize.
                byte_offset: (offset * std::mem::size_of::<T>()) as u64,
            },
        });
        ptr::addr_of_mut!((*block).vec).write(vec);
    }
    // SAFETY: Box::into_raw is never NULL; `managed` is the first field of the repr(C)
    // block, at its address.
    ManagedTensor::owning(
        unsafe { NonNull::new_unchecked(block.cast::<sys::DLManagedTensorVersioned>()) },
        true,
    )
}

/// The export of memory kept alive by an owner, begun by
/// [`ManagedTensor::build_from_owner`] and done by the `unsafe` [`finish`](Self::finish).
#[must_use = "nothing is exported until `finish` is called"]
#[derive(Debug)]
pub struct OwnerExport<'a, O> {
    owner: O,
    data: *mut c_void,
    dtype: DataType,
    device: Device,
    shape: &'a [i64],
    strides: Option<&'a [i64]>,
    order: Option<Order>,
    byte_offset: u64,
    flags: Flags,
}

impl<'a, O: Send + 'static> OwnerExport<'a, O> {
    /// Explicit strides, in elements of the dtype, one per dimension, exported as given
    /// (unless an [`order`](Self::order) is set, which they must then match). Without them
    /// the tensor is compact row-major, or compact in the order set.
    pub fn strides(mut self, strides: &'a [i64]) -> Self {
        self.strides = Some(strides);
        self
    }

    /// The order of the strides, by the facade's `dlpm_managed_new_ordered` rules
    /// (nanobind's runtime `order`):
    ///
    /// - without [`strides`](Self::strides): [`Order::C`] stands for compact row-major
    ///   strides, [`Order::F`] for compact column-major (Fortran) ones. The tensor stores
    ///   them explicitly (never NULL, which DLPack reads as row-major), so every consumer
    ///   sees the layout.
    /// - with strides: they must be that compact layout (extent-1 dimensions may have any
    ///   stride; an empty tensor is compact), else [`Status::NON_COMPACT_STRIDES`]. Without
    ///   an order, strides are exported as given.
    ///
    /// [`Order::Any`] names no layout and is [`Status::INVALID_ARGUMENT`]. The computed
    /// strides fit whenever the element count does (a larger count is refused, in either
    /// order); an empty tensor's saturate at `i64::MAX`.
    ///
    /// ```
    /// use dlpack_mdspan::{Device, Element, ManagedTensor, Order};
    ///
    /// // A 2x3 matrix stored column by column: [[1, 2, 3], [4, 5, 6]].
    /// let columns: Box<[f64]> = vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0].into_boxed_slice();
    /// let data = columns.as_ptr().cast_mut().cast();
    /// let export = ManagedTensor::build_from_owner(columns, data, f64::DTYPE, Device::CPU, &[2, 3]);
    /// // SAFETY: the box keeps the six doubles alive, and nothing else reaches them.
    /// let t = unsafe { export.order(Order::F).finish() }?;
    /// assert_eq!(t.strides()?, Some(&[1, 2][..])); // stored, not NULL
    /// assert!(t.is_contiguous(Order::F)?);
    /// assert_eq!(t.view::<f64>()?.get(&[0, 2]), Some(&3.0));
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn order(mut self, order: Order) -> Self {
        self.order = Some(order);
        self
    }

    /// The offset in bytes from `data` to element `[0, 0, ...]` (0 without it).
    pub fn byte_offset(mut self, byte_offset: u64) -> Self {
        self.byte_offset = byte_offset;
        self
    }

    /// The tensor's DLPack flags (none without it): [`Flags::READ_ONLY`],
    /// [`Flags::IS_COPIED`], [`Flags::IS_SUBBYTE_TYPE_PADDED`]; [`finish`](Self::finish)'s
    /// contract depends on them.
    pub fn flags(mut self, flags: Flags) -> Self {
        self.flags = flags;
        self
    }

    /// Exports the described memory with `dlpm_managed_new`'s rules (with an order,
    /// `dlpm_managed_new_ordered`'s), through the facade's `dlpm_managed_new_inline`: one
    /// allocation, which holds the owner itself when it fits (`DLPM_INLINE_OWNER_CAPACITY`
    /// bytes, as a `Vec`, a `Box` or an `Arc` does), else a `Box` of it. The tensor's
    /// deleter drops the owner, exactly once and on any thread (hence `Send + 'static`); a
    /// panic in that drop aborts the process, since it cannot unwind into C. The description
    /// is validated by the facade; on failure the owner is dropped here and nothing was
    /// exported.
    ///
    /// Whether the tensor is [exclusive](crate#mutation-and-aliasing) follows its flags, as
    /// for every tensor this crate receives: without [`Flags::IS_COPIED`] it is not (the
    /// owner may share the memory, e.g. an `Arc`), so its mutable views hand out no `&mut`;
    /// with IS_COPIED it is, because DLPack's IS_COPIED says the memory is a private copy
    /// that only the tensor's holder reads or writes (which the caller promises below).
    ///
    /// # Safety
    ///
    /// - For as long as the owner lives, `data` (with the byte offset, the shape and the
    ///   strides, in elements of the dtype) describes memory on the device that is valid for
    ///   reads of every addressed element, and for writes unless the flags contain
    ///   READ_ONLY. The memory must not move with the owner: `finish` moves the owner into
    ///   the tensor, so memory held inline (an array, not a `Vec`, `Box` or `Arc` of one)
    ///   would be left behind.
    /// - While views of the tensor exist, no other code writes those elements; while a
    ///   mutable view exists, no other code reads them either.
    /// - If the flags contain IS_COPIED, nothing but the tensor reaches the memory while it
    ///   lives: the owner does not share it (no other `Arc` clone, reference or pointer to
    ///   it is used), because mutable views of an IS_COPIED tensor hand out `&mut T` and
    ///   `&mut [T]`, and so does any consumer the tensor is passed to.
    pub unsafe fn finish(self) -> Result<ManagedTensor, Error> {
        // No strides stay NULL: the facade computes the row-major strides (saturating for an
        // empty tensor, whose strides address nothing), or the order's, and stores them
        // explicitly.
        let d = describe(
            self.data,
            self.dtype,
            self.device,
            self.shape,
            self.strides,
            self.byte_offset,
        )?;
        // SAFETY: d's shape and strides are the caller's slices, of d.ndim entries each (or
        // NULL strides); the memory they describe is the caller's contract, passed on
        // unchanged.
        unsafe {
            export(
                self.owner,
                &d,
                self.order.map(Order::as_c_char),
                self.flags,
                sys::DLPM_BUFFER_SIZE_UNKNOWN,
            )
        }
        .map_err(|(e, _)| e)
    }
}

/// Exports `owner` with the description `d` through the facade's
/// `dlpm_managed_new_inline`, in one allocation: the owner's bytes live in the tensor's own
/// block when they fit (`DLPM_INLINE_OWNER_CAPACITY` bytes, aligned to at most
/// `DLPM_INLINE_OWNER_ALIGNMENT`), else a `Box` of it does. `order` as
/// `dlpm_managed_new_ordered`'s (without one, NULL strides are row-major and explicit ones
/// are kept, as `dlpm_managed_new` does); `buffer` bounds the bytes the layout may reach
/// from `d.data` (`DLPM_BUFFER_SIZE_UNKNOWN`: unchecked). On failure the owner is handed
/// back with the error.
///
/// # Safety
///
/// `d.shape` and `d.strides` point to `d.ndim` readable entries (or `d.strides` is NULL),
/// and the caller upholds [`OwnerExport::finish`]'s contract for `d` and `owner`.
unsafe fn export<O: Send + 'static>(
    owner: O,
    d: &sys::DLTensor,
    order: Option<std::ffi::c_char>,
    flags: Flags,
    buffer: u64,
) -> Result<ManagedTensor, (Error, Option<O>)> {
    let fits = std::mem::size_of::<O>() <= sys::DLPM_INLINE_OWNER_CAPACITY as usize
        && std::mem::align_of::<O>() <= sys::DLPM_INLINE_OWNER_ALIGNMENT as usize;
    if fits {
        // SAFETY: forwarded from this function's contract.
        unsafe { export_inline(owner, d, order, flags, buffer) }
    } else {
        // SAFETY: as above; the box keeps the owner alive as long as the owner would.
        unsafe { export_inline(Box::new(owner), d, order, flags, buffer) }
            .map_err(|(e, boxed)| (e, boxed.map(|b| *b)))
    }
}

/// [`export`] of an owner whose bytes fit the tensor's allocation.
///
/// # Safety
///
/// As for [`export`], and `O` fits: at most `DLPM_INLINE_OWNER_CAPACITY` bytes.
unsafe fn export_inline<O: Send + 'static>(
    owner: O,
    d: &sys::DLTensor,
    order: Option<std::ffi::c_char>,
    flags: Flags,
    buffer: u64,
) -> Result<ManagedTensor, (Error, Option<O>)> {
    // Moved into the tensor bit for bit on success: the facade's copy is the owner then,
    // dropped by release_owner::<O>; on failure nothing was moved and it is still ours.
    let owner = ManuallyDrop::new(owner);
    let mut out: *mut sys::DLManagedTensorVersioned = ptr::null_mut();
    // Without an order, NULL strides are row-major and explicit ones are kept, which is
    // what dlpm_managed_new does: 'C' or 0 for the ordered forms.
    let order = order.unwrap_or(if d.strides.is_null() {
        b'C' as std::ffi::c_char
    } else {
        0
    });
    // SAFETY: d is a live description whose shape and strides point to d.ndim readable
    // entries (or strides is NULL); the facade copies them. `owner` points to
    // size_of::<O>() readable bytes (at most the capacity), copied by the facade; the
    // contract of release_owner::<O> holds for that copy, which the facade passes to it
    // exactly once on success and never on failure. `out` is a valid out-parameter.
    let status = unsafe {
        sys::dlpm_managed_new_inline(
            d,
            order,
            flags.bits(),
            buffer,
            Some(release_owner::<O>),
            ptr::from_ref::<O>(&owner).cast::<c_void>(),
            std::mem::size_of::<O>(),
            &mut out,
        )
    };
    if status != sys::DLPM_OK {
        // On failure the facade copied nothing for keeps: the owner is still ours.
        return Err((
            Error::from_facade(status),
            Some(ManuallyDrop::into_inner(owner)),
        ));
    }
    // Success: the owner lives in the tensor now (ManuallyDrop: not dropped here).
    match NonNull::new(out) {
        Some(ptr) => Ok(ManagedTensor::owning(ptr, false)),
        // A facade that says OK and returns no tensor: where the owner went is unknown, so
        // it is neither dropped nor handed back (leaked).
        None => Err((
            Error::new(
                Status::INTERNAL,
                "dlpm_managed_new_inline returned success and a NULL tensor",
            ),
            None,
        )),
    }
}

/// A `DLTensor` describing caller-provided arrays (shape, strides) for the facade.
fn describe(
    data: *mut c_void,
    dtype: DataType,
    device: Device,
    shape: &[i64],
    strides: Option<&[i64]>,
    byte_offset: u64,
) -> Result<sys::DLTensor, Error> {
    let ndim = i32::try_from(shape.len()).map_err(|_| {
        Error::new(
            Status::INVALID_NDIM,
            format!("ndim = {} is not a valid rank", shape.len()),
        )
    })?;
    if let Some(s) = strides {
        if s.len() != shape.len() {
            return Err(Error::new(
                Status::INVALID_ARGUMENT,
                format!(
                    "strides has {} entries but shape has {}",
                    s.len(),
                    shape.len()
                ),
            ));
        }
    }
    Ok(sys::DLTensor {
        data,
        device: device.0,
        ndim,
        dtype: dtype.0,
        // The facade only reads through these (it copies them); the C signature is const.
        shape: shape.as_ptr().cast_mut(),
        strides: strides.map_or(ptr::null_mut(), |s| s.as_ptr().cast_mut()),
        byte_offset,
    })
}

/// Checks that every byte `t` addresses (its elements stored as `flags` says) lies inside
/// a buffer of `len` elements of `size` bytes starting at `t.data`: the facade validates the
/// description and gives the addressed bytes (`dlpm_byte_span`). Returns whether any element
/// is addressed.
fn check_inside_vec(
    t: &sys::DLTensor,
    flags: Flags,
    size: usize,
    len: usize,
) -> Result<bool, Error> {
    let (mut begin, mut end) = (0i64, 0i64);
    // SAFETY: t's shape and strides point to ndim readable entries (describe's slices);
    // begin and end are valid out-parameters.
    check(unsafe { sys::dlpm_byte_span(t, flags.bits(), &mut begin, &mut end) })?;
    if begin == end {
        return Ok(false); // no element is addressed
    }
    let capacity = i128::try_from(len).unwrap_or(i128::MAX) * size as i128;
    if begin < 0 || i128::from(end) > capacity {
        let size = size as i64;
        return Err(Error::new(
            Status::INVALID_ARGUMENT,
            format!(
                "the layout addresses elements {} to {} but the Vec holds {} elements",
                begin.div_euclid(size),
                (end - 1).div_euclid(size),
                len
            ),
        ));
    }
    Ok(true)
}
