// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The owning handle over a `DLManagedTensorVersioned`.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

use dlpack_mdspan_sys as sys;

use crate::checks;
use crate::error::{check, Error, Status};
use crate::order::Order;
use crate::types::{DataType, Device, Flags};

// The exports (from_vec and the builders VecExport, OwnerExport): Rust memory into a
// tensor. This file keeps the ownership: taking, handing on, reading, dropping.
mod export;
#[cfg(feature = "ndarray")]
pub(crate) use export::{export_in_bounds, exports_in_bounds, InBoundsStrides, IN_BOUNDS_MAX_NDIM};
pub use export::{OwnerExport, VecExport};

/// An owned DLPack tensor: a `DLManagedTensorVersioned*` whose deleter this handle calls
/// exactly once, when it is dropped (through the facade's `dlpm_managed_delete`), unless
/// ownership is handed on with [`into_raw`](Self::into_raw) or
/// [`into_legacy`](Self::into_legacy).
///
/// Make one from Rust memory with [`from_vec`](Self::from_vec) (strides, an offset or flags
/// through [`build_from_vec`](Self::build_from_vec)) or
/// [`build_from_owner`](Self::build_from_owner); take one from C, C++, Python or another
/// Rust library with [`from_raw`](Self::from_raw) or
/// [`from_raw_legacy`](Self::from_raw_legacy). Read it
/// through [`view`](Self::view), write it through [`view_mut`](Self::view_mut).
///
/// ```
/// use dlpack_mdspan::{DataType, ManagedTensor};
///
/// let t = ManagedTensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// assert_eq!(t.dtype(), DataType::F64);
/// assert_eq!(t.shape()?, &[2, 3]);
/// let v = t.view::<f64>()?;
/// assert_eq!(v.get(&[1, 2]), Some(&6.0));
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
pub struct ManagedTensor {
    /// The tensor's address, with what this crate knows of it in the address's three low
    /// bits (a `DLManagedTensorVersioned` is aligned to 8: [`from_raw`](Self::from_raw)
    /// refuses another address): [`MADE_HERE`], and the tensor's claim in the borrow
    /// registry ([`CLAIM`]: `python/borrows.rs`), set for a tensor imported from Python,
    /// whose memory safe code may also reach through another argument, and changed
    /// atomically, after the registry's claim and before its release. One word, so that a
    /// `ManagedTensor` (an argument, the `Result` that carries it) moves by one 8-byte load
    /// and store: as a pointer and two bytes it was copied field by field and read back
    /// with wider loads, which cannot take their value from the narrower stores just made (a
    /// stall per move; docs/performance-history.md, "The ManagedTensor in one word").
    word: AtomicPtr<sys::DLManagedTensorVersioned>,
}

/// Made by this crate from memory it owns alone (`from_vec*`): nothing else can reach the
/// elements, so safe `&mut` access is sound. Set once, through `&mut`.
const MADE_HERE: usize = 0b100;
/// The claim's bits (`python/borrows.rs`'s `import_claim`: 0 to 3).
#[cfg_attr(not(feature = "pyo3"), allow(dead_code))]
const CLAIM: usize = 0b011;
/// Every bit the word keeps beside the address.
const TAGS: usize = MADE_HERE | CLAIM;
const _: () = assert!(std::mem::align_of::<sys::DLManagedTensorVersioned>() > TAGS);

/// The claim bits of a [`ManagedTensor`]'s word, read and changed as an atomic byte's
/// value would be (the address and [`MADE_HERE`] never change through it).
#[cfg(feature = "pyo3")]
pub(crate) struct ClaimBits<'a>(&'a AtomicPtr<sys::DLManagedTensorVersioned>);

#[cfg(feature = "pyo3")]
impl ClaimBits<'_> {
    /// The word with `claim` in its claim bits and its other bits as they are.
    #[inline(always)]
    fn with(&self, claim: u8) -> *mut sys::DLManagedTensorVersioned {
        self.0
            .load(Ordering::Relaxed)
            .map_addr(|a| (a & !CLAIM) | usize::from(claim))
    }

    #[inline(always)]
    pub(crate) fn load(&self, order: Ordering) -> u8 {
        (self.0.load(order).addr() & CLAIM) as u8
    }

    #[inline(always)]
    pub(crate) fn store(&self, claim: u8, order: Ordering) {
        self.0.store(self.with(claim), order);
    }

    #[inline(always)]
    pub(crate) fn swap(&self, claim: u8, order: Ordering) -> u8 {
        (self.0.swap(self.with(claim), order).addr() & CLAIM) as u8
    }

    /// As `AtomicU8::compare_exchange`: only the claim bits change, so the word is as
    /// expected exactly when they are.
    #[inline(always)]
    pub(crate) fn compare_exchange(
        &self,
        current: u8,
        new: u8,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u8, u8> {
        self.0
            .compare_exchange(self.with(current), self.with(new), success, failure)
            .map(|_| current)
            .map_err(|w| (w.addr() & CLAIM) as u8)
    }
}

// SAFETY: a ManagedTensor is a unique owning pointer. Moving it to another thread moves the
// duty to call the deleter there, which DLPack allows (the deleter may be called from any
// thread); this crate's own deleter drops an owner that is `Send`. Sharing `&ManagedTensor`
// between threads only allows reading the struct, which nobody mutates while it is owned,
// and reading the elements through `TensorView` (all element types are `Sync`); every write
// path needs `&mut ManagedTensor` or an `unsafe` contract. There is no interior mutability.
unsafe impl Send for ManagedTensor {}
// SAFETY: see the `Send` impl above: `&ManagedTensor` gives read-only access only.
unsafe impl Sync for ManagedTensor {}

impl ManagedTensor {
    /// The owner of `ptr` (aligned to 8); `made_here`: memory this crate owns alone.
    #[inline]
    pub(crate) fn owning(ptr: NonNull<sys::DLManagedTensorVersioned>, made_here: bool) -> Self {
        Self::tagged(ptr.as_ptr(), if made_here { MADE_HERE } else { 0 })
    }

    /// The handle of `ptr` (aligned to 8) with `tags` in its low bits.
    #[inline(always)]
    fn tagged(ptr: *mut sys::DLManagedTensorVersioned, tags: usize) -> Self {
        debug_assert_eq!(ptr.addr() & TAGS, 0);
        debug_assert_eq!(tags & !TAGS, 0);
        ManagedTensor {
            word: AtomicPtr::new(ptr.map_addr(|a| a | tags)),
        }
    }

    /// Takes a tensor the Python component handed over (`dlpm_py_import`, which checked it,
    /// its major version included), with `claim` in the registry's bits: `from_raw` without
    /// the facade's second version check. An address not aligned for the struct is refused
    /// as `from_raw` refuses it, and not taken.
    ///
    /// # Safety
    ///
    /// `ptr` is a tensor `dlpm_py_import` just returned, whose ownership passes to the
    /// result (or stays with nobody, for a refused address: it is leaked).
    #[cfg(feature = "pyo3")]
    #[inline]
    pub(crate) unsafe fn from_component(
        ptr: *mut sys::DLManagedTensorVersioned,
        claim: u8,
    ) -> Result<Self, Error> {
        if ptr.is_null() {
            return Err(Error::new(
                Status::INTERNAL,
                "dlpm_py_import returned success and a NULL tensor",
            ));
        }
        check_aligned(ptr)?;
        Ok(Self::tagged(ptr, usize::from(claim)))
    }

    /// Marks the tensor as made here, from memory this crate owns alone.
    #[inline]
    pub(crate) fn set_made_here(&mut self) {
        let word = self.word.get_mut();
        *word = word.map_addr(|a| a | MADE_HERE);
    }

    /// Made here (`MADE_HERE`).
    #[inline(always)]
    fn made_here(&self) -> bool {
        self.word.load(Ordering::Relaxed).addr() & MADE_HERE != 0
    }

    /// The tensor's address.
    #[inline(always)]
    fn ptr(&self) -> *mut sys::DLManagedTensorVersioned {
        self.word.load(Ordering::Relaxed).map_addr(|a| a & !TAGS)
    }

    /// The tensor's claim in the borrow registry.
    #[cfg(feature = "pyo3")]
    pub(crate) fn python_claim(&self) -> ClaimBits<'_> {
        ClaimBits(&self.word)
    }

    /// Takes ownership of a versioned tensor received from a producer, after the version
    /// check of the C facade (`dlpm_managed_check_version`): a major version other than the
    /// library's (DLPack 1) is refused with [`Status::VERSION_MISMATCH`], and the tensor's
    /// deleter has then already been called, as the DLPack specification requires. A newer
    /// minor version is accepted. A NULL pointer is [`Status::NULL_POINTER`]; an address not
    /// aligned for the struct is [`Status::MISALIGNED_METADATA`], and is not taken: nothing
    /// may read the struct through it, its deleter included.
    ///
    /// The structure is not validated here; [`view`](Self::view), [`view_mut`](Self::view_mut)
    /// and [`validate`](Self::validate) do that.
    ///
    /// # Safety
    ///
    /// - `ptr` is NULL or points to a live `DLManagedTensorVersioned` whose ownership is
    ///   transferred by this call, whatever it returns: the caller must not use `ptr` or call
    ///   its deleter afterwards.
    /// - Its deleter (which may be NULL) may be called once, from any thread.
    /// - If the major version is 1, the struct follows the DLPack contract until the deleter
    ///   runs: the struct, its `shape` and its `strides` stay valid and unmodified (and lie
    ///   outside the elements, which a mutable view writes), and `dl_tensor` describes
    ///   memory that is valid for reads of every element it addresses, and for writes too
    ///   unless the READ_ONLY flag is set.
    /// - While a view borrowed from the returned tensor exists, no other code writes the
    ///   elements it reaches; while a mutable view exists, no other code reads them either.
    /// - If the IS_COPIED flag is set, nothing but the tensor reaches the memory (DLPack's
    ///   meaning of the flag): mutable views of it hand out `&mut`.
    ///
    /// A malformed structure is not undefined behaviour: the facade refuses it (e.g. a
    /// `shape` or `strides` pointer not aligned for `i64` is
    /// [`Status::MISALIGNED_METADATA`]) before this crate reads the arrays. Dropping the
    /// tensor calls its deleter through the facade; a deleter that throws a C++ exception
    /// ends the process with a message instead of unwinding into Rust.
    ///
    /// ```
    /// use dlpack_mdspan::ManagedTensor;
    ///
    /// let raw = ManagedTensor::from_vec(vec![7u32; 3], &[3])?.into_raw();
    /// // ... the pointer travels through C and comes back ...
    /// // SAFETY: `raw` is a live tensor from `into_raw`, whose ownership we pass back.
    /// let t = unsafe { ManagedTensor::from_raw(raw) }?;
    /// assert_eq!(t.view::<u32>()?.as_slice()?, &[7, 7, 7]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub unsafe fn from_raw(ptr: *mut sys::DLManagedTensorVersioned) -> Result<Self, Error> {
        check_aligned(ptr)?;
        // SAFETY: the caller hands over ownership of ptr (or passes NULL, which the facade
        // refuses); on a version mismatch the facade calls the deleter and nothing more.
        check(unsafe { sys::dlpm_managed_check_version(ptr) })?;
        let ptr = NonNull::new(ptr)
            .ok_or_else(|| Error::new(Status::NULL_POINTER, "from_raw: the tensor is NULL"))?;
        Ok(ManagedTensor::owning(ptr, false))
    }

    /// Takes ownership of a legacy (pre-1.0) `DLManagedTensor`, through the facade's
    /// `dlpm_from_legacy` / `dlpm_from_legacy_writable`. The legacy struct cannot say
    /// whether writes are allowed, so with `writable == false` the result is READ_ONLY (as
    /// NumPy does); pass `true` only when you know the producer allows writes. On failure
    /// the legacy deleter has already run (except for a NULL pointer).
    ///
    /// # Safety
    ///
    /// The same contract as [`from_raw`](Self::from_raw), for a `DLManagedTensor`; with
    /// `writable == true`, the memory must also be valid for writes.
    ///
    /// ```
    /// use dlpack_mdspan::{ManagedTensor, Status};
    ///
    /// let legacy = ManagedTensor::from_vec(vec![1i16, 2], &[2])?.into_legacy().map_err(|e| e.into_error())?;
    /// // SAFETY: `legacy` is a live legacy tensor whose ownership we pass on.
    /// let mut t = unsafe { ManagedTensor::from_raw_legacy(legacy, false) }?;
    /// assert!(t.is_read_only());
    /// assert_eq!(t.view_mut::<i16>().unwrap_err().status(), Status::READ_ONLY);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub unsafe fn from_raw_legacy(
        ptr: *mut sys::DLManagedTensor,
        writable: bool,
    ) -> Result<Self, Error> {
        let mut out: *mut sys::DLManagedTensorVersioned = ptr::null_mut();
        // SAFETY: the caller hands over ownership of ptr; `out` is a valid out-parameter,
        // written only on success.
        let status = unsafe {
            if writable {
                sys::dlpm_from_legacy_writable(ptr, &mut out)
            } else {
                sys::dlpm_from_legacy(ptr, &mut out)
            }
        };
        check(status)?;
        let ptr = NonNull::new(out).ok_or_else(|| {
            Error::new(
                Status::INTERNAL,
                "dlpm_from_legacy returned success and a NULL tensor",
            )
        })?;
        Ok(ManagedTensor::owning(ptr, false))
    }

    /// A compact row-major copy in new host memory, through the facade's
    /// `dlpm_managed_copy_to_host`: `kDLCPU`, 64-byte aligned, flagged IS_COPIED (so it is
    /// [exclusive](Self::is_exclusive): its mutable views hand out `&mut`), without READ_ONLY
    /// (the copy aliases nothing), with the sub-byte padding flag kept. The tensor must be
    /// valid and its memory readable by the CPU
    /// ([`DeviceType::is_host_accessible`](crate::DeviceType::is_host_accessible)), else
    /// [`Status::DEVICE_MISMATCH`]; a packed sub-byte tensor must be row-major contiguous,
    /// else [`Status::SUBBYTE_NOT_VIEWABLE`]. `self` is unchanged.
    ///
    /// ```
    /// use dlpack_mdspan::{Flags, ManagedTensor, Order};
    ///
    /// // The READ_ONLY transpose of a row-major 2x3 matrix.
    /// let t = ManagedTensor::build_from_vec(vec![1u16, 2, 3, 4, 5, 6], &[3, 2]).strides(&[1, 3]).flags(Flags::READ_ONLY).finish()?;
    /// let mut copy = t.copy_to_host()?;
    /// assert_eq!(copy.flags(), Flags::IS_COPIED);
    /// assert!(copy.is_contiguous(Order::C)?);
    /// copy.view_mut::<u16>()?.as_mut_slice()?[0] = 10; // exclusive: &mut is allowed
    /// assert_eq!(copy.view::<u16>()?.as_slice()?, &[10, 4, 2, 5, 3, 6]);
    /// assert_eq!(t.view::<u16>()?.get(&[0, 0]), Some(&1)); // the original is untouched
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn copy_to_host(&self) -> Result<ManagedTensor, Error> {
        // A tensor imported from Python claims its bytes for reading, as a view does: no
        // writer elsewhere in safe Rust writes them while the copy reads them.
        #[cfg(feature = "pyo3")]
        self.claim_for_copy()?;
        let mut out: *mut sys::DLManagedTensorVersioned = ptr::null_mut();
        // SAFETY: self owns a live tensor, which the facade validates and only reads (its
        // elements are readable by from_raw's contract, or memory this crate owns); `out` is
        // a valid out-parameter, written only on success.
        check(unsafe { sys::dlpm_managed_copy_to_host(self.ptr(), &mut out) })?;
        let ptr = NonNull::new(out).ok_or_else(|| {
            Error::new(
                Status::INTERNAL,
                "dlpm_managed_copy_to_host returned success and a NULL tensor",
            )
        })?;
        // The facade's memory, reachable only through this tensor: its IS_COPIED flag makes
        // it exclusive.
        Ok(ManagedTensor::owning(ptr, false))
    }

    /// Gives up ownership: the returned pointer's deleter must be called exactly once, by
    /// whoever receives it (C, C++, Python, or [`from_raw`](Self::from_raw)).
    ///
    /// ```
    /// use dlpack_mdspan::ManagedTensor;
    ///
    /// let raw = ManagedTensor::from_vec(vec![0u8; 2], &[2])?.into_raw();
    /// // SAFETY: `raw` is a live tensor from into_raw, deleted exactly once, here.
    /// unsafe { dlpack_mdspan::sys::dlpm_managed_delete(raw) };
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub fn into_raw(self) -> *mut sys::DLManagedTensorVersioned {
        // The tensor leaves Rust: no view of it is alive (self is moved), so its claim ends.
        #[cfg(feature = "pyo3")]
        self.release_claim();
        ManuallyDrop::new(self).ptr()
    }

    /// Gives up ownership to a legacy (pre-1.0) consumer through the facade's
    /// `dlpm_to_legacy`. READ_ONLY and padded sub-byte tensors are refused, since the
    /// legacy struct would silently drop those flags, except a tensor whose READ_ONLY only
    /// says that its writability is unknown ([`ReadOnlyCause::LegacyUnknown`]: it came from
    /// a legacy tensor, and unchanged goes back as that tensor); the error gives the tensor
    /// back.
    ///
    /// ```
    /// use dlpack_mdspan::{Flags, ManagedTensor, Status};
    ///
    /// let legacy = ManagedTensor::from_vec(vec![1.0f32; 3], &[3])?.into_legacy().map_err(|e| e.into_error())?;
    /// // SAFETY: `legacy` is a live legacy tensor, deleted exactly once, here.
    /// unsafe { (*legacy).deleter.unwrap()(legacy) };
    ///
    /// let ro = ManagedTensor::build_from_vec(vec![1.0f32; 3], &[3]).flags(Flags::READ_ONLY).finish()?;
    /// let refused = ro.into_legacy().unwrap_err();
    /// assert_eq!(refused.error().status(), Status::READ_ONLY);
    /// let ro = refused.into_tensor(); // still ours, dropped normally
    /// # drop(ro);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn into_legacy(self) -> Result<*mut sys::DLManagedTensor, IntoLegacyError> {
        let mut out: *mut sys::DLManagedTensor = ptr::null_mut();
        // SAFETY: self.ptr is a live tensor we own; on success its ownership moves into the
        // new legacy tensor, on failure it stays ours. `out` is a valid out-parameter.
        let status = unsafe { sys::dlpm_to_legacy(self.ptr(), &mut out) };
        if status != sys::DLPM_OK {
            return Err(IntoLegacyError {
                error: Error::from_facade(status),
                tensor: self,
            });
        }
        // The tensor leaves Rust: its claim ends (as into_raw's).
        #[cfg(feature = "pyo3")]
        self.release_claim();
        let _moved = ManuallyDrop::new(self);
        Ok(out)
    }

    /// The raw pointer, still owned by `self`: do not call its deleter. For passing to C
    /// functions that borrow a tensor.
    ///
    /// ```
    /// use dlpack_mdspan::{sys, ManagedTensor};
    ///
    /// let t = ManagedTensor::from_vec(vec![0u8; 8], &[2, 4])?;
    /// let mut n = 0i64;
    /// // SAFETY: the pointer is live for the call and dlpm_numel only reads it.
    /// let status = unsafe { sys::dlpm_numel(&(*t.as_ptr()).dl_tensor, &mut n) };
    /// assert_eq!((status, n), (sys::DLPM_OK, 8));
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub fn as_ptr(&self) -> *mut sys::DLManagedTensorVersioned {
        self.ptr()
    }

    #[inline]
    pub(crate) fn raw(&self) -> &sys::DLManagedTensorVersioned {
        // SAFETY: self owns a live tensor whose struct nobody mutates while it is owned
        // (from_raw's contract, or made by the facade).
        unsafe { &*self.ptr() }
    }

    /// The underlying `DLTensor`, unvalidated.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let t = ManagedTensor::from_vec(vec![0i8; 3], &[3])?;
    /// assert_eq!(t.dl_tensor().ndim, 1);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub fn dl_tensor(&self) -> &sys::DLTensor {
        &self.raw().dl_tensor
    }

    /// The DLPack version of the struct.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let t = ManagedTensor::from_vec(vec![0i8; 3], &[3])?;
    /// assert_eq!(t.version().major, 1);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub fn version(&self) -> sys::DLPackVersion {
        self.raw().version
    }

    /// The DLPack flags.
    ///
    /// ```
    /// # use dlpack_mdspan::{Flags, ManagedTensor};
    /// let t = ManagedTensor::from_vec(vec![0i8; 3], &[3])?;
    /// assert_eq!(t.flags(), Flags::empty());
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub fn flags(&self) -> Flags {
        Flags(self.raw().flags)
    }

    /// Whether the READ_ONLY flag is set.
    ///
    /// ```
    /// # use dlpack_mdspan::{Flags, ManagedTensor};
    /// assert!(ManagedTensor::build_from_vec(vec![0i8; 3], &[3]).flags(Flags::READ_ONLY).finish()?.is_read_only());
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn is_read_only(&self) -> bool {
        self.flags().contains(Flags::READ_ONLY)
    }

    /// Why the tensor is READ_ONLY, as the facade that set the flag remembers it
    /// (`dlpm_managed_read_only_cause`); it decides whether [`into_legacy`](Self::into_legacy)
    /// may carry the tensor.
    ///
    /// ```
    /// # use dlpack_mdspan::{Flags, ManagedTensor, ReadOnlyCause};
    /// assert_eq!(ManagedTensor::from_vec(vec![0i8; 3], &[3])?.read_only_cause(), ReadOnlyCause::None);
    /// assert_eq!(ManagedTensor::build_from_vec(vec![0i8; 3], &[3]).flags(Flags::READ_ONLY).finish()?.read_only_cause(), ReadOnlyCause::Flagged);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn read_only_cause(&self) -> ReadOnlyCause {
        // SAFETY: self.ptr is a live tensor of our major version; no reason is asked for.
        match unsafe { sys::dlpm_managed_read_only_cause(self.ptr(), ptr::null_mut()) } {
            sys::DLPM_READ_ONLY_NONE => ReadOnlyCause::None,
            sys::DLPM_READ_ONLY_LEGACY_UNKNOWN => ReadOnlyCause::LegacyUnknown,
            sys::DLPM_READ_ONLY_PRODUCER_FORBIDS => ReadOnlyCause::ProducerForbids,
            _ => ReadOnlyCause::Flagged,
        }
    }

    /// Whether the IS_COPIED flag is set.
    ///
    /// ```
    /// # use dlpack_mdspan::{Flags, ManagedTensor};
    /// let t = ManagedTensor::build_from_vec(vec![0i8; 3], &[3]).flags(Flags::IS_COPIED).finish()?;
    /// assert!(t.is_copied());
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn is_copied(&self) -> bool {
        self.flags().contains(Flags::IS_COPIED)
    }

    /// Whether nothing outside this tensor can reach its elements, so that mutable views
    /// may hand out `&mut` safely (subject to contiguity, see
    /// [`TensorViewMut::is_exclusive`](crate::TensorViewMut::is_exclusive)): the tensor
    /// was made by this crate from a `Vec` and never left Rust, or it carries IS_COPIED,
    /// whoever set it (a foreign producer through [`from_raw`](Self::from_raw), or
    /// [`build_from_owner`](Self::build_from_owner), whose `finish` contract then rules out
    /// shared memory). DLPack's IS_COPIED means the producer made
    /// a copy for this consumer, which holds the only reference and may write it.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let t = ManagedTensor::from_vec(vec![0i8; 3], &[3])?;
    /// assert!(t.is_exclusive());
    /// // SAFETY: the pointer comes straight from into_raw.
    /// let back = unsafe { ManagedTensor::from_raw(t.into_raw()) }?;
    /// assert!(!back.is_exclusive()); // provenance is lost across the raw pointer
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub fn is_exclusive(&self) -> bool {
        self.made_here() || self.is_copied()
    }

    /// The device of the tensor.
    ///
    /// ```
    /// # use dlpack_mdspan::{Device, ManagedTensor};
    /// let t = ManagedTensor::from_vec(vec![0i8; 3], &[3])?;
    /// assert_eq!(t.device(), Device::CPU);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn device(&self) -> Device {
        Device(self.raw().dl_tensor.device)
    }

    /// The element type of the tensor.
    ///
    /// ```
    /// # use dlpack_mdspan::{DataType, ManagedTensor};
    /// let t = ManagedTensor::from_vec(vec![true, false], &[2])?;
    /// assert_eq!(t.dtype(), DataType::BOOL);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn dtype(&self) -> DataType {
        DataType(self.raw().dl_tensor.dtype)
    }

    /// The rank, as stored (unvalidated).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// assert_eq!(ManagedTensor::from_vec(vec![0u8; 8], &[2, 2, 2])?.ndim(), 3);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn ndim(&self) -> i32 {
        self.raw().dl_tensor.ndim
    }

    /// Structural validation by the facade (`dlpm_validate`, honouring the sub-byte
    /// padding flag through `dlpm_check_managed`).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// ManagedTensor::from_vec(vec![0u8; 8], &[2, 4])?.validate()?;
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        let req = checks::any_requirements();
        // SAFETY: the tensor is live; req is a valid requirements struct.
        check(unsafe { sys::dlpm_check_managed(self.ptr(), &req) })
    }

    /// The validated shape (empty for rank 0).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// assert_eq!(ManagedTensor::from_vec(vec![0u8; 8], &[2, 4])?.shape()?, &[2, 4]);
    /// assert!(ManagedTensor::from_vec(vec![0u8], &[])?.shape()?.is_empty());
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn shape(&self) -> Result<&[i64], Error> {
        self.validate()?;
        // SAFETY: validated (a misaligned pointer is refused before any read): shape holds
        // ndim readable entries (or ndim is 0), and the struct outlives the borrow of self.
        unsafe { checks::dims(self.dl_tensor().shape, self.dl_tensor().ndim, "shape") }
    }

    /// The validated strides as stored: `None` when they are NULL (compact row-major).
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// let t = ManagedTensor::from_vec(vec![0u8; 8], &[2, 4])?;
    /// assert_eq!(t.strides()?, Some(&[4i64, 1][..])); // the facade stores them explicitly
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn strides(&self) -> Result<Option<&[i64]>, Error> {
        self.validate()?;
        let t = self.dl_tensor();
        if t.strides.is_null() && t.ndim > 0 {
            return Ok(None);
        }
        // SAFETY: validated (a misaligned pointer is refused before any read): strides holds
        // ndim readable entries (or ndim is 0).
        Ok(Some(unsafe { checks::dims(t.strides, t.ndim, "strides") }?))
    }

    /// The number of elements (1 for rank 0), from the facade's `dlpm_numel`.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// assert_eq!(ManagedTensor::from_vec(vec![0u8; 8], &[2, 4])?.numel()?, 8);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn numel(&self) -> Result<i64, Error> {
        self.validate()?;
        let mut n = 0i64;
        // SAFETY: the tensor is live; n is a valid out-parameter.
        check(unsafe { sys::dlpm_numel(self.dl_tensor(), &mut n) })?;
        Ok(n)
    }

    /// Bytes of the elements packed densely, from the facade's `dlpm_nbytes`.
    ///
    /// ```
    /// # use dlpack_mdspan::ManagedTensor;
    /// assert_eq!(ManagedTensor::from_vec(vec![0f64; 8], &[2, 4])?.nbytes()?, 64);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn nbytes(&self) -> Result<i64, Error> {
        self.validate()?;
        let mut n = 0i64;
        // SAFETY: the tensor is live; n is a valid out-parameter.
        check(unsafe { sys::dlpm_nbytes(self.dl_tensor(), &mut n) })?;
        Ok(n)
    }

    /// Whether the tensor is contiguous in `order` (`dlpm_is_contiguous`): extent-1
    /// dimensions may have any stride and empty tensors are contiguous.
    ///
    /// ```
    /// # use dlpack_mdspan::{ManagedTensor, Order};
    /// assert!(ManagedTensor::from_vec(vec![0u8; 8], &[2, 4])?.is_contiguous(Order::C)?);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn is_contiguous(&self, order: Order) -> Result<bool, Error> {
        checks::is_contiguous(self.dl_tensor(), order)
    }
}

/// The refusal of an address not aligned for the struct (`from_raw`'s, `from_component`'s):
/// the handle keeps facts in the address's low bits, and nothing, the facade included, may
/// read the struct through it.
#[inline(always)]
fn check_aligned(ptr: *mut sys::DLManagedTensorVersioned) -> Result<(), Error> {
    if ptr.addr() & TAGS != 0 {
        return Err(misaligned_tensor(ptr));
    }
    Ok(())
}

/// [`check_aligned`]'s error, worded out of line.
#[cold]
#[inline(never)]
fn misaligned_tensor(ptr: *mut sys::DLManagedTensorVersioned) -> Error {
    Error::new(
        Status::MISALIGNED_METADATA,
        format!(
            "the tensor's address {ptr:p} is not aligned for DLManagedTensorVersioned ({} bytes); it is not \
             taken (its deleter cannot be called through it)",
            std::mem::align_of::<sys::DLManagedTensorVersioned>()
        ),
    )
}

impl Drop for ManagedTensor {
    fn drop(&mut self) {
        #[cfg(feature = "pyo3")]
        self.release_claim();
        // SAFETY: self owns the tensor; its deleter is called exactly once, here, with the
        // original pointer. dlpm_managed_delete is noexcept: a deleter that throws a C++
        // exception aborts the process inside the facade, so nothing unwinds into this frame.
        unsafe { sys::dlpm_managed_delete(self.ptr()) }
    }
}

impl fmt::Debug for ManagedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ManagedTensor");
        d.field("ptr", &self.ptr())
            .field("version", &self.version())
            .field("flags", &self.flags())
            .field("device", &self.device())
            .field("dtype", &self.dtype());
        match self.shape() {
            Ok(shape) => d.field("shape", &shape),
            Err(e) => d.field("invalid", &e.message()),
        };
        d.finish()
    }
}

/// The error of [`ManagedTensor::into_legacy`]: why, and the tensor, which is still owned.
///
/// ```
/// use dlpack_mdspan::{Flags, ManagedTensor, Status};
///
/// let err = ManagedTensor::build_from_vec(vec![0u8], &[1]).flags(Flags::READ_ONLY).finish()?.into_legacy().unwrap_err();
/// assert_eq!(err.error().status(), Status::READ_ONLY);
/// assert!(err.to_string().contains("READ_ONLY"));
/// let tensor: ManagedTensor = err.into_tensor();
/// assert!(tensor.is_read_only());
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
#[derive(Debug)]
pub struct IntoLegacyError {
    error: Error,
    tensor: ManagedTensor,
}

impl IntoLegacyError {
    /// Why the conversion was refused.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The tensor, still owned (dropping it calls its deleter).
    pub fn into_tensor(self) -> ManagedTensor {
        self.tensor
    }

    /// The error, dropping the tensor.
    pub fn into_error(self) -> Error {
        self.error
    }
}

impl fmt::Display for IntoLegacyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot hand the tensor to a legacy consumer: {}",
            self.error
        )
    }
}

impl std::error::Error for IntoLegacyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Why a [`ManagedTensor`] is READ_ONLY (the facade's `dlpm_read_only_cause`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadOnlyCause {
    /// Not READ_ONLY.
    None,
    /// Flagged by its producer or its maker: a legacy export is refused.
    Flagged,
    /// Taken from a legacy tensor, which cannot say: a legacy export is allowed.
    LegacyUnknown,
    /// Its producer forbids writes for a reason DLPack cannot carry: a legacy export is
    /// refused, naming the reason.
    ProducerForbids,
}
