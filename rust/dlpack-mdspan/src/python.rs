// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Python tensors in pyo3 functions (feature `pyo3`), through the project's one Python
//! component (`python/src`, C, compiled by `dlpack-mdspan-python-sys`): the protocol
//! (the exchange API, `__dlpack__` with `max_version`, capsule renaming, legacy capsules,
//! PyTorch's semantic bits) and its exceptions are the component's, not re-implemented here.
//!
//! - [`PyTensor<T>`] and [`PyTensorMut<T>`] are arguments: any framework's tensor,
//!   borrowed for the call (`dlpm_py_borrow`: without an allocation where the producer
//!   publishes the exchange API), checked for a view of `T` (dtype, host device, alignment;
//!   writable and without a semantic bit for [`PyTensorMut`]). [`PyTensor::view_ref`]
//!   (lent), [`PyTensor::view`] (a copy) and [`PyTensorMut::view_mut`] give the crate's views.
//! - [`ManagedTensor`] is an argument too (`dlpm_py_import`: owned, any dtype, validated),
//!   and a return value: a `dlpack_mdspan.Tensor` (`dlpm_py_tensor_new`) that NumPy,
//!   PyTorch, JAX and the component's consumers import without a copy.
//! - [`StreamOrdered<ManagedTensor>`] is that argument with the [`ReadyStream`] a device
//!   tensor's data is ready on, and [`StreamOrdered::import`] asks the producer what
//!   [`PyImportOptions`] say: the caller's own stream, a copy, a target device.
//!
//! A refusal raises the component's exception with the library's message (`TypeError` for
//! a tensor that does not meet the requirements, `BufferError` for a read-only or
//! conjugate tensor given to a writer, the producer's own exception when its
//! `__dlpack__` raises). The component is called with the GIL held (these types carry
//! `Python<'py>`, so they stay on the attached thread).

use std::mem::MaybeUninit;
use std::ptr;

use dlpack_mdspan_python_sys as pysys;
use dlpack_mdspan_sys as sys;
use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;

use crate::checks::{read_only_refusal, view_requirements, Viewed};
use crate::error::{Error, Status};
use crate::managed::ManagedTensor;
use crate::types::{DeviceType, Element};
use crate::view::{ClaimBeforeRead, KeptViewMut, Reach, TensorView, TensorViewMut};

mod borrows;
mod stream_ordered;
pub use stream_ordered::{PyImportOptions, ReadyStream, StreamOrder, StreamOrdered};

/// The exception for `e`: the component's (`dlpm_py_raise`: its exception type and wording)
/// when `e` is the facade's last failure on this thread, else a `BufferError` with the
/// crate's message and status (the crate's own checks, e.g. `NOT_EXCLUSIVE`).
pub fn to_pyerr(py: Python<'_>, e: &Error) -> PyErr {
    // SAFETY: dlpm_last_error returns a thread-local NUL-terminated string (or NULL).
    let last = unsafe { sys::dlpm_last_error() };
    // The crate's own statuses are negative; the facade's positive.
    let facades = e.status().code() > 0
        && !last.is_null()
        // SAFETY: non-NULL, NUL-terminated, valid until the next facade call on this thread.
        && unsafe { std::ffi::CStr::from_ptr(last) }.to_bytes() == e.message().as_bytes();
    if facades {
        // SAFETY: called with the GIL held (py); it sets an exception and returns NULL.
        unsafe { pysys::dlpm_py_raise(e.status().code()) };
        return PyErr::fetch(py);
    }
    PyBufferError::new_err(format!("{} ({})", e.message(), e.status().name()))
}

/// A tensor argument borrowed for the call, checked for reading as `T`. It keeps what owns
/// the tensor (the Python object itself where the producer lends its tensor), so it may
/// outlive the `Bound` it was extracted from.
///
/// ```ignore
/// #[pyfunction]
/// fn total(x: PyTensor<'_, f32>) -> f32 {
///     x.view_ref().to_vec().iter().sum()
/// }
/// ```
#[repr(C)]
pub struct PyTensor<'py, T: Element> {
    /// The view made at extraction; it points at the borrowed tensor's shape, strides and
    /// elements, which live until the borrow is ended (Drop), and is only handed out for a
    /// borrow of `self`. It holds the borrowed `DLTensor`'s fields and flags, which the
    /// argument therefore does not keep a second time.
    view: TensorView<'py, T>,
    borrow: Borrow,
}

// The argument in 128 bytes (the view's 120 and the borrow's word): pyo3 moves it three
// times per call, and the compiler copies 128 bytes or less in line where it calls `memcpy`
// for more (docs/performance-history.md, "`PyTensor` in 128 bytes"). In declaration order
// (repr(C)): the borrow's word, the `Result`'s niche, is the last, so the view starts the
// argument and each move copies it in 16-byte pieces at the offsets the last move stored
// them; where the compiler put the word first, the pieces of the view were read back 8 bytes
// off the stores that had just written them (a failed store-to-load forward each: about 9 ns
// a call on the extension's own Tensor).
const _: () = assert!(std::mem::size_of::<PyTensor<'static, f32>>() <= 128);

/// A tensor argument borrowed for the call, checked for writing as `T`: not READ_ONLY, and
/// without a producer's semantic bit (PyTorch's conjugate or negative view, `requires_grad`).
#[repr(C)]
pub struct PyTensorMut<'py, T: Element> {
    /// As [`PyTensor`]'s; never exclusive (the producer may share the memory), kept without
    /// that flag.
    view: KeptViewMut<'py, T>,
    borrow: Borrow,
}

// 128 bytes, as PyTensor's.
const _: () = assert!(std::mem::size_of::<PyTensorMut<'static, f32>>() <= 128);

/// What a `dlpm_py_borrow` holds beyond the tensor's description, in one word: the
/// component's owner (the owning path), released by `dlpm_py_borrow_end` when the argument
/// drops, or the object kept alive, a reference the argument owns (on the borrowed path, the
/// argument's object itself: [`borrow`]) and drops itself. A borrow holds exactly one of
/// them: the component sets `keep_alive` only for `dlpm_py_options.keep_alive`, which this
/// crate never sets, and [`borrow`] sets it where the owner is NULL. The owner is kept with
/// its lowest bit set (both are addresses of structs aligned to 8), so that the argument
/// (the view and this word) is 128 bytes, a size the compiler moves in line
/// (docs/performance-history.md, "`PyTensor` in 128 bytes"). The `DLTensor` and flags the
/// component wrote are the view's copy ([`Borrow::end`] puts the struct back together), so
/// an argument is moved without them (a pointer: not Send).
struct Borrow(ptr::NonNull<std::ffi::c_void>);

impl Borrow {
    /// The owner's tag: its address with the lowest bit set.
    const OWNER: usize = 1;

    /// Ends the borrow whose description the component wrote as `tensor` with `flags` (the
    /// view's copy of it: the same fields): `dlpm_py_borrow_end` of the owner, or the kept
    /// object's reference dropped.
    fn end(&self, tensor: &sys::DLTensor, flags: u64) {
        let word = self.0.as_ptr();
        if word.addr() & Self::OWNER != 0 {
            let mut whole = pysys::dlpm_py_borrowed {
                dl_tensor: *tensor,
                flags,
                owner: word.wrapping_byte_sub(Self::OWNER).cast(),
                keep_alive: ptr::null_mut(),
            };
            // SAFETY: the struct the component wrote at extraction (its fields, put back
            // together, the owner untagged, no keep-alive), ended once (the argument's Drop),
            // on the attached thread.
            unsafe { pysys::dlpm_py_borrow_end(&mut whole) }
        } else {
            // SAFETY: a reference this argument owns (Borrowing::into_parts), dropped once,
            // with the GIL held (the argument carries Python<'py>).
            unsafe { pyo3::ffi::Py_DECREF(word.cast()) }
        }
    }
}

/// A borrow during the extraction, in the place the component wrote it (a local of the
/// extraction, so that it is not moved), ended by its Drop unless the argument takes it
/// ([`Self::into_parts`]): a refusal of the view ends it.
struct Borrowing<'b>(&'b mut pysys::dlpm_py_borrowed);

impl Borrowing<'_> {
    /// The borrowed tensor's description and flags, as the component wrote them.
    fn tensor(&self) -> (&sys::DLTensor, u64) {
        (&self.0.dl_tensor, self.0.flags)
    }

    /// A writable view's refusal `e` of this borrow's tensor: READ_ONLY worded with why,
    /// where the component owns the tensor (its facade knows a legacy tensor's unknown
    /// writability, or what a producer forbids: [`read_only_refusal`]); else `e`.
    #[cold]
    fn writer_refusal<T: Element>(&self, e: Error) -> Error {
        // SAFETY: the owner, when set, is the live tensor the borrow holds (until it ends).
        match unsafe { self.0.owner.as_ref() } {
            Some(owner) if e.status() == Status::READ_ONLY => {
                read_only_refusal(owner, view_requirements::<T>(true))
            }
            _ => e,
        }
    }

    /// The borrow's key in the borrow registry: the word the argument keeps
    /// ([`Self::into_parts`]), the owner's tagged address (one per borrow) or the kept
    /// object's (one per object: a reader given twice joins its claim, a writer conflicts).
    fn key(&self) -> usize {
        match ptr::NonNull::new(self.0.owner) {
            Some(owner) => owner.as_ptr().addr() | Borrow::OWNER,
            None => self.0.keep_alive.addr(),
        }
    }

    /// The borrow's owner and kept object for the argument, which ends it (its Drop): the
    /// keep-alive reference is taken, as `dlpm_py_borrowed` allows, and the argument drops
    /// it without the component.
    fn into_parts(self) -> Borrow {
        let (owner, keep_alive) = (self.0.owner, self.0.keep_alive);
        // Exactly one is set (Borrow): keep_alive by `borrow` where the owner is NULL.
        debug_assert!(
            owner.is_null() != keep_alive.is_null(),
            "a borrow holds one of owner and keep_alive"
        );
        let word = match ptr::NonNull::new(owner) {
            // An owner is aligned to 8: its lowest bit is free for the tag.
            Some(owner) => owner
                .cast::<std::ffi::c_void>()
                .map_addr(|a| a | Borrow::OWNER),
            // SAFETY: `borrow` leaves keep_alive non-NULL (a reference) where the owner is NULL.
            None => unsafe { ptr::NonNull::new_unchecked(keep_alive.cast()) },
        };
        std::mem::forget(self);
        Borrow(word)
    }
}

/// The claim a view of a borrow asks once its check has learned the layout, before any
/// element is read ([`ClaimBeforeRead`](crate::view::ClaimBeforeRead): a bool view reads
/// its bytes): the bytes the view reaches claimed in the borrow registry, for writing with
/// `writes`; an empty view claims nothing. A view refused after its claim gives it back
/// ([`refused`](Self::refused)).
struct ViewClaim<'c, 'b> {
    borrow: &'c Borrowing<'b>,
    writes: bool,
    claimed: bool,
}

impl<'c, 'b> ViewClaim<'c, 'b> {
    fn new(borrow: &'c Borrowing<'b>, writes: bool) -> Self {
        ViewClaim {
            borrow,
            writes,
            claimed: false,
        }
    }

    /// Claims the bytes of the view (its description and flags, `len` elements of `T`, whose
    /// check learned `reach`). One tuple, not four parameters: with four, or with this body
    /// written inside `before_read`'s closure, rustc 1.95 allocated the registers of the
    /// five extractions differently, each 0x14 to 0x19 bytes longer with more moves.
    #[inline(always)]
    fn claim<T: Element>(
        &mut self,
        py: Python<'_>,
        (tensor, flags, len, reach): (&sys::DLTensor, u64, usize, Reach),
    ) -> Result<(), Error> {
        let Some(span) = borrows::view_span(tensor, flags, len, reach, std::mem::size_of::<T>())
        else {
            return Ok(());
        };
        borrows::claim(
            borrows::shared(py)?,
            self.borrow.key(),
            span,
            self.writes,
            false,
        )?;
        self.claimed = true;
        Ok(())
    }

    /// What a view's check asks before it reads ([`ClaimBeforeRead`]): [`claim`](Self::claim)
    /// for a view of `T`.
    #[inline(always)]
    fn before_read<'s, 'py, T: Element>(
        &'s mut self,
        py: Python<'py>,
    ) -> impl ClaimBeforeRead + use<'s, 'c, 'b, 'py, T> {
        move |t: &sys::DLTensor, f, n, r| self.claim::<T>(py, (t, f, n, r))
    }

    /// The view's refusal `e`, its claim given back if it made one.
    #[cold]
    fn refused(&self, e: Error) -> Error {
        if self.claimed {
            borrows::release(borrows::resolved(), self.borrow.key(), self.writes);
        }
        e
    }
}

impl Drop for Borrowing<'_> {
    fn drop(&mut self) {
        // SAFETY: the borrow made at extraction, ended once (here, or by the argument that
        // took it instead: into_parts forgets self), on the attached thread.
        unsafe { pysys::dlpm_py_borrow_end(self.0) }
    }
}

impl Borrow {
    /// Ends the argument's claim (made at extraction for a view of `len` elements:
    /// [`Borrowing::claim`]), then the borrow.
    fn end_claimed(&self, tensor: &sys::DLTensor, flags: u64, len: usize, writes: bool) {
        if len != 0 {
            // The claim's registry, which its extraction resolved.
            borrows::release(borrows::resolved(), self.0.as_ptr().addr(), writes);
        }
        self.end(tensor, flags);
    }
}

impl<T: Element> Drop for PyTensor<'_, T> {
    fn drop(&mut self) {
        let (tensor, flags) = self.view.described();
        self.borrow
            .end_claimed(tensor, flags, self.view.len(), false);
    }
}

impl<T: Element> Drop for PyTensorMut<'_, T> {
    fn drop(&mut self) {
        let (tensor, flags) = self.view.described();
        self.borrow
            .end_claimed(tensor, flags, self.view.len(), true);
    }
}

/// The component's default options as a Rust caller needs them: a refusal of a producer's
/// semantic bit names no option (a Rust caller has none to set: `semantic_bits_option` is
/// `""`), only the producer's own remedy (`.detach()`, `.resolve_conj()`). The component
/// validates the tensor (a `ManagedTensor` argument; a `PyTensor`'s against the
/// requirements of its view, handing back the checked form: [`borrow`]).
fn rust_options(validate: bool) -> &'static pysys::dlpm_py_options {
    struct Options(pysys::dlpm_py_options);
    // SAFETY: read-only after initialisation; its pointers are NULL (stream_object,
    // provenance) or a static string (semantic_bits_option).
    unsafe impl Sync for Options {}
    // SAFETY: as Sync.
    unsafe impl Send for Options {}
    fn make(validate: bool) -> Options {
        let mut o = std::mem::MaybeUninit::<pysys::dlpm_py_options>::zeroed();
        // SAFETY: a valid out-parameter, and the version these bindings declare.
        let status =
            unsafe { pysys::dlpm_py_options_init(o.as_mut_ptr(), pysys::DLPM_PY_OPTIONS_VERSION) };
        assert_eq!(status, sys::DLPM_OK, "dlpm_py_options_init");
        // SAFETY: initialised by the component.
        let mut o = unsafe { o.assume_init() };
        o.validate = i32::from(validate);
        o.semantic_bits_option = c"".as_ptr();
        Options(o)
    }
    static CHECKED: std::sync::OnceLock<Options> = std::sync::OnceLock::new();
    static BY_THE_VIEW: std::sync::OnceLock<Options> = std::sync::OnceLock::new();
    let cell = if validate { &CHECKED } else { &BY_THE_VIEW };
    &cell.get_or_init(|| make(validate)).0
}

/// Whether a validating borrow of `obj` checks it against a checked form its Tensor kept and
/// hands that form back (`dlpm_py_keeps_checked_form`): a `dlpack_mdspan.Tensor` of this
/// extension's copy of the component (a `ManagedTensor` it returned, given back) or of another
/// copy that publishes its kept form (the `dlpack_mdspan` package's, a C extension's,
/// another Rust extension's). The answer is kept for the last type of each kind, so that a
/// run of calls with one type asks once; it only chooses the path: a stale answer (a freed
/// type's address taken by another) makes the borrow check in full or the view check, never
/// trust more (the component decides what it trusts on each call).
fn keeps_checked_form(obj: &Borrowed<'_, '_, PyAny>) -> bool {
    use std::sync::atomic::{AtomicPtr, Ordering};
    static KEEPS: AtomicPtr<pyo3::ffi::PyTypeObject> = AtomicPtr::new(ptr::null_mut());
    static KEEPS_NOT: AtomicPtr<pyo3::ffi::PyTypeObject> = AtomicPtr::new(ptr::null_mut());
    // SAFETY: obj is a live object; its type pointer is read and compared, not dereferenced.
    let ty = unsafe { pyo3::ffi::Py_TYPE(obj.as_ptr()) };
    if ty == KEEPS.load(Ordering::Relaxed) {
        return true;
    }
    if ty == KEEPS_NOT.load(Ordering::Relaxed) {
        return false;
    }
    // SAFETY: obj is live and the GIL is held (obj); the call sets no exception.
    let keeps = unsafe { pysys::dlpm_py_keeps_checked_form(obj.as_ptr()) } != 0;
    (if keeps { &KEEPS } else { &KEEPS_NOT }).store(ty, Ordering::Relaxed);
    keeps
}

/// `dlpm_py_borrow` of `obj` with the requirements of a view of `T` (which also tell the
/// component whether the caller writes) and `options`, written into `out`, where it stays
/// until the argument takes its owner ([`Borrowing::into_parts`]).
// In line in each extraction (four: a reader's and a writer's, checked or kept), as
// `borrow_kept` is: each out of line was a frame of its own, its out-parameters and answer
// passed through memory; a `PyTensor` argument of a NumPy array counted 38 instructions more
// a call, one of a Tensor 70 (bench/python/callgrind_py.py; docs/performance-history.md,
// "The borrow's frames").
#[inline(always)]
fn borrow<'b, T: Element>(
    obj: &Borrowed<'_, '_, PyAny>,
    writable: bool,
    options: &pysys::dlpm_py_options,
    out: &'b mut MaybeUninit<pysys::dlpm_py_borrowed>,
) -> PyResult<Borrowing<'b>> {
    // SAFETY: obj is a live object and the GIL is held; the requirements are a static and
    // the options valid for the call (any pointer in them live for it); out is a valid
    // out-parameter.
    let status = unsafe {
        pysys::dlpm_py_borrow(
            obj.as_ptr(),
            view_requirements::<T>(writable),
            options,
            out.as_mut_ptr(),
        )
    };
    if status != sys::DLPM_OK {
        return Err(PyErr::fetch(obj.py()));
    }
    // SAFETY: written by the component on success.
    let out = unsafe { out.assume_init_mut() };
    let device = DeviceType(out.dl_tensor.device.device_type);
    if device != DeviceType::CPU && options.ready_on_host == 0 && device.is_host_accessible() {
        borrow_ready_on_host::<T>(obj, writable, options, out)?;
    }
    // (A bare capsule is not asked again: it gives its tensor once, and has no producer to
    // wait for: `borrow_ready_on_host`.)
    if out.owner.is_null() && out.keep_alive.is_null() {
        // The borrowed path: the view is valid while `obj` is alive, and an extracted
        // argument is not tied to `obj`'s lifetime (`obj.extract()` of a temporary), so the
        // borrow keeps `obj` itself, in the keep-alive field: the argument drops it
        // ([`Borrow::end`]), a refused view's `dlpm_py_borrow_end` ([`Borrowing`]'s Drop).
        out.keep_alive = Borrowed::to_owned(*obj).into_ptr();
    }
    Ok(Borrowing(out))
}

/// Whether an argument that took memory of `device_type` from `obj` asks again with
/// `dlpm_py_options.ready_on_host`: for memory a stream orders (`dlpm_py_is_stream_memory`),
/// but not of a bare capsule, which gives its tensor once and names no producer to wait for.
fn asks_again_ready_on_host(obj: &Borrowed<'_, '_, PyAny>, device_type: sys::DLDeviceType) -> bool {
    // SAFETY: a plain function of its argument.
    let stream_memory = unsafe { pysys::dlpm_py_is_stream_memory(device_type) } != 0;
    // SAFETY: obj is a live object.
    stream_memory && unsafe { pyo3::ffi::PyCapsule_CheckExact(obj.as_ptr()) } == 0
}

/// [`borrow`]'s rare turn, for host-accessible memory other than the CPU's: where it is
/// memory a stream orders (CUDA managed memory: `dlpm_py_is_stream_memory`), the view reads
/// it on the host with nothing to order that after the producer's work, so the borrow is
/// ended and made again with `dlpm_py_options.ready_on_host` (the host waits for that work,
/// docs/python-interop.md). Out of line and cold: the CPU's memory never comes here, and
/// the borrow's fast paths (options that ask the defaults) stay as they are.
#[cold]
#[inline(never)]
fn borrow_ready_on_host<T: Element>(
    obj: &Borrowed<'_, '_, PyAny>,
    writable: bool,
    options: &pysys::dlpm_py_options,
    out: &mut pysys::dlpm_py_borrowed,
) -> PyResult<()> {
    if !asks_again_ready_on_host(obj, out.dl_tensor.device.device_type) {
        return Ok(());
    }
    // SAFETY: the borrow the component just made, ended once; `out` is written again below.
    unsafe { pysys::dlpm_py_borrow_end(out) };
    let waiting = pysys::dlpm_py_options {
        ready_on_host: 1,
        ..*options
    };
    // SAFETY: as `borrow`'s call; `out` is a valid out-parameter.
    let status = unsafe {
        pysys::dlpm_py_borrow(
            obj.as_ptr(),
            view_requirements::<T>(writable),
            &waiting,
            out,
        )
    };
    if status != sys::DLPM_OK {
        return Err(PyErr::fetch(obj.py()));
    }
    Ok(())
}

/// The borrow of a Tensor whose checked form the component keeps ([`keeps_checked_form`]):
/// the component checks the requirements of a view of `T` against the Tensor's kept checked
/// form (its own copy's, or the one another copy publishes: compared with the description
/// lent) and lends that very form (`dlpm_py_options.lent`: a borrow of the form's own
/// description, for reading, or for writing where this copy's Tensor is writable), or, for a
/// writer that takes the owning path (another copy's Tensor, a READ_ONLY one), hands a copy
/// back into `checked` (`dlpm_py_options.checked`). A reader asks for
/// no copy: where the form is not lent (sub-byte padding, a description other than the
/// form's) the view makes its own check, and the copy's option cost every reader's call more
/// than that rare check (docs/performance-history.md). Returns the borrow and the checked
/// form of its tensor, when the component gave one: the lent form, or `checked` when the
/// component set `checked.tensor` to the very `dl_tensor` it wrote (its word that the
/// checked form is of that description, with the flags it reports). Any other producer is
/// borrowed with `validate = 0` and the view's one `dlpm_check_tensor`, cheaper there than
/// the component's check and hand-back (docs/performance-history.md, "Rust pyo3
/// arguments").
///
/// The form is lent for `'f`, which `'a` outlives: the lent form is the Tensor's, alive with
/// `obj` (the component's contract), and `checked` is the caller's local; neither is kept by
/// the argument, whose view copies what it reads of the form.
// In line, as `borrow` is (there, why).
#[inline(always)]
fn borrow_kept<'a: 'f, 'f, 'b, T: Element>(
    obj: &Borrowed<'a, '_, PyAny>,
    writable: bool,
    checked: &'f mut MaybeUninit<sys::dlpm_checked_tensor>,
    out: &'b mut MaybeUninit<pysys::dlpm_py_borrowed>,
) -> PyResult<(Borrowing<'b>, Option<&'f sys::dlpm_checked_tensor>)> {
    let form = checked.as_mut_ptr();
    let mut lent: *const sys::dlpm_checked_tensor = ptr::null();
    if writable {
        // SAFETY: `form` is valid for writes; the component reads only the version before it
        // writes the rest.
        unsafe { ptr::addr_of_mut!((*form).version).write(sys::DLPM_CHECKED_TENSOR_VERSION) };
    }
    let options = pysys::dlpm_py_options {
        checked: if writable { form } else { ptr::null_mut() },
        lent: &mut lent,
        ..*rust_options(true)
    };
    let borrowing = borrow::<T>(obj, writable, &options, out)?;
    // SAFETY: on success the component has written `lent` (NULL, or a kept form: read-only,
    // alive while `obj` is, so for 'a, which outlives 'f) and, for a writer, `form->tensor`
    // (NULL, or the address of the dl_tensor it wrote, when the rest of `checked` is that
    // tensor's form; NULL where it lent the form).
    let form = unsafe {
        if !lent.is_null() {
            Some(&*lent)
        } else if writable && (*form).tensor == ptr::addr_of!(borrowing.0.dl_tensor) {
            Some(checked.assume_init_ref())
        } else {
            None
        }
    };
    Ok((borrowing, form))
}

impl<'a, 'py, T: Element> FromPyObject<'a, 'py> for PyTensor<'py, T> {
    type Error = PyErr;

    // The path chosen (keeps_checked_form), each out of line, so that this stays a type
    // test and a jump: one frame's setup per argument, not two.
    #[inline]
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if keeps_checked_form(&obj) {
            Self::extract_kept(obj)
        } else {
            Self::extract_checked(obj)
        }
    }
}

impl<'py, T: Element> PyTensor<'py, T> {
    /// The extraction of any other producer: the component's borrow with `validate = 0`, and
    /// the view's one check.
    #[inline(never)]
    fn extract_checked(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let mut out = MaybeUninit::uninit();
        let borrow = borrow::<T>(&obj, false, rust_options(false), &mut out)?;
        let (tensor, flags) = borrow.tensor();
        // The view copies the DLTensor's fields; this reference is read only while the
        // view is made, before the argument takes the borrow.
        // SAFETY: a live local, not written while the view is made.
        let tensor: &'py sys::DLTensor = unsafe { &*ptr::from_ref(tensor) };
        let py = obj.py();
        let mut claim = ViewClaim::new(&borrow, false);
        // SAFETY: the tensor's shape, strides and elements stay valid and unmodified until
        // the borrow ends (Drop), after the view, which is only lent for borrows of self;
        // its elements are not written by Rust while a read borrow lives (the claim, made
        // before the view reads any; the producer's other users are the contract of every
        // DLPack import).
        let view = unsafe {
            TensorView::checked(Viewed::Flagged(tensor, flags), claim.before_read::<T>(py))
        }
        .map_err(|e| to_pyerr(py, &claim.refused(e)))?;
        Ok(Self::with(view, borrow))
    }

    /// The extraction of a Tensor whose checked form the component keeps (this extension's
    /// copy's, or another copy's): the view made from the checked form the component hands
    /// back ([`borrow_kept`]). Out of line, so that the other producers'
    /// extraction stays as it was.
    #[inline(never)]
    fn extract_kept(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let (mut checked, mut out) = (MaybeUninit::uninit(), MaybeUninit::uninit());
        let (borrow, form) = borrow_kept::<T>(&obj, false, &mut checked, &mut out)?;
        let (tensor, flags) = borrow.tensor();
        // SAFETY: a live local, not written while the view is made (as in `extract_checked`).
        let tensor: &'py sys::DLTensor = unsafe { &*ptr::from_ref(tensor) };
        let tensor = Viewed::Flagged(tensor, flags);
        // As `extract_checked`'s, and with a form the component checked this very description
        // with its flags against a view of T's requirements, and the form is what that check
        // learned (its contract: dlpm_py_options.lent and .checked); otherwise the view checks.
        let Some(form) = form else {
            return Self::unlent(obj, tensor, borrow);
        };
        let py = obj.py();
        let mut claim = ViewClaim::new(&borrow, false);
        // SAFETY: as above; `form` is a checked form of this tensor (borrow_kept).
        let view =
            unsafe { TensorView::from_checked_form(tensor, form, claim.before_read::<T>(py)) }
                .map_err(|e| to_pyerr(py, &claim.refused(e)))?;
        Ok(Self::with(view, borrow))
    }

    /// `extract_kept`'s rare end, where nothing was lent (a padded form, a description other
    /// than the form's): the view checks the tensor itself. Out of line, so that the lent
    /// path builds its view in place, with no join of the two views.
    #[cold]
    #[inline(never)]
    fn unlent(
        obj: Borrowed<'_, 'py, PyAny>,
        tensor: Viewed<'py>,
        borrow: Borrowing<'_>,
    ) -> PyResult<Self> {
        let py = obj.py();
        let mut claim = ViewClaim::new(&borrow, false);
        // SAFETY: as `extract_kept`'s; the view makes its own check.
        let view = unsafe { TensorView::checked(tensor, claim.before_read::<T>(py)) }
            .map_err(|e| to_pyerr(py, &claim.refused(e)))?;
        Ok(Self::with(view, borrow))
    }

    /// The argument of `view`, whose bytes its check claimed for reading.
    #[inline(always)]
    fn with(view: TensorView<'py, T>, borrow: Borrowing<'_>) -> Self {
        PyTensor {
            view,
            borrow: borrow.into_parts(),
        }
    }
}

impl<'a, 'py, T: Element> FromPyObject<'a, 'py> for PyTensorMut<'py, T> {
    type Error = PyErr;

    // The path chosen (keeps_checked_form), each out of line, so that this stays a type
    // test and a jump: one frame's setup per argument, not two.
    #[inline]
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if keeps_checked_form(&obj) {
            Self::extract_kept(obj)
        } else {
            Self::extract_checked(obj)
        }
    }
}

impl<'py, T: Element> PyTensorMut<'py, T> {
    /// The extraction of any other producer: the component's borrow with `validate = 0`, and
    /// the view's one check.
    #[inline(never)]
    fn extract_checked(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let mut out = MaybeUninit::uninit();
        let borrow = borrow::<T>(&obj, true, rust_options(false), &mut out)?;
        let (tensor, flags) = borrow.tensor();
        // The view copies the DLTensor's fields; this reference is read only while the
        // view is made, before the argument takes the borrow.
        // SAFETY: a live local, not written while the view is made.
        let tensor: &'py sys::DLTensor = unsafe { &*ptr::from_ref(tensor) };
        let py = obj.py();
        let mut claim = ViewClaim::new(&borrow, true);
        // SAFETY: as PyTensor's; a writable request takes the component's owning path, whose
        // flags are known, and the view refuses READ_ONLY. Not exclusive: the producer may
        // share the memory.
        let view = unsafe {
            TensorViewMut::checked(
                Viewed::Flagged(tensor, flags),
                true,
                false,
                claim.before_read::<T>(py),
            )
        }
        .map_err(|e| to_pyerr(py, &borrow.writer_refusal::<T>(claim.refused(e))))?;
        Ok(Self::with(view, borrow))
    }

    /// As [`PyTensor`]'s `extract_kept`, for a writer: lent the form of a writable Tensor of
    /// this copy (the borrowed path), else the component's owning path, its check with the
    /// writable requirements refusing READ_ONLY.
    #[inline(never)]
    fn extract_kept(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let (mut checked, mut out) = (MaybeUninit::uninit(), MaybeUninit::uninit());
        let (borrow, form) = borrow_kept::<T>(&obj, true, &mut checked, &mut out)?;
        let (tensor, flags) = borrow.tensor();
        // SAFETY: a live local, not written while the view is made (as in `extract_checked`).
        let tensor: &'py sys::DLTensor = unsafe { &*ptr::from_ref(tensor) };
        let tensor = Viewed::Flagged(tensor, flags);
        let py = obj.py();
        let mut claim = ViewClaim::new(&borrow, true);
        let claim_view = claim.before_read::<T>(py);
        let view = if let Some(form) = form {
            // SAFETY: as PyTensor's `extract_kept`; checked with the writable requirements
            // (where the form is lent, with the Tensor's own flags, which the component lends
            // a writer only without READ_ONLY).
            unsafe { TensorViewMut::from_checked_form(tensor, form, claim_view) }
        } else {
            // SAFETY: as above; the view makes its own check.
            unsafe { TensorViewMut::checked(tensor, true, false, claim_view) }
        }
        .map_err(|e| to_pyerr(py, &borrow.writer_refusal::<T>(claim.refused(e))))?;
        Ok(Self::with(view, borrow))
    }

    /// The argument of `view`, whose bytes its check claimed for writing.
    #[inline(always)]
    fn with(view: TensorViewMut<'py, T>, borrow: Borrowing<'_>) -> Self {
        PyTensorMut {
            view: view.into_kept(),
            borrow: borrow.into_parts(),
        }
    }
}

impl<T: Element> PyTensor<'_, T> {
    /// The tensor as a view of `T`, an owned copy of the one made at extraction (no facade
    /// call here). [`view_ref`](Self::view_ref) lends that view instead, without the copy.
    pub fn view(&self) -> TensorView<'_, T> {
        self.view.clone()
    }

    /// The view made at extraction, lent for a borrow of the argument: everything
    /// [`view`](Self::view) gives, without copying the view. Its lifetime is the borrow's,
    /// so nothing it lends (a slice, an element) outlives the argument, whose drop ends the
    /// borrow of the Python tensor.
    ///
    /// ```ignore
    /// #[pyfunction]
    /// fn total(x: PyTensor<'_, f32>) -> f32 {
    ///     x.view_ref().to_vec().iter().sum()
    /// }
    /// ```
    ///
    /// What the lent view lends cannot outlive the argument:
    ///
    /// ```compile_fail,E0505
    /// use dlpack_mdspan::PyTensor;
    ///
    /// fn first(x: PyTensor<'_, f32>) -> f32 {
    ///     let elements = x.view_ref().as_slice().unwrap();
    ///     drop(x); // ends the borrow of the Python tensor
    ///     elements[0]
    /// }
    /// ```
    pub fn view_ref(&self) -> &TensorView<'_, T> {
        // The stored view's lifetime is shortened to the borrow of self (TensorView is
        // covariant in it).
        &self.view
    }

    /// The DLPack flags known for the tensor (0 on the borrowed fast path).
    pub fn flags(&self) -> u64 {
        self.view.described().1
    }
}

impl<T: Element> PyTensorMut<'_, T> {
    /// The tensor as a mutable view of `T`; it is not exclusive (the producer may share the
    /// memory), so it writes through [`TensorViewMut::set`].
    pub fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        self.view.view_mut()
    }

    /// The DLPack flags known for the tensor: those of the component's owning path, or 0
    /// where this extension's writable Tensor lent its form (its export carries none).
    pub fn flags(&self) -> u64 {
        self.view.described().1
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for ManagedTensor {
    type Error = PyErr;

    /// `dlpm_py_import`: an owned, validated tensor of any dtype and device. Nothing it
    /// carries says when a device tensor's data is ready, so for memory a stream orders the
    /// host waits for the producer's work first (`dlpm_py_options.ready_on_host`; a function
    /// that orders its own work takes [`StreamOrdered`]).
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        import_managed(obj, rust_options(true), true)
    }
}

/// `dlpm_py_import` of `obj` with `options` (validating: [`rust_options`]`(true)` or a copy
/// of it): an owned, validated tensor of any dtype and device. `ready_on_host`: memory a
/// stream orders is imported again with `dlpm_py_options.ready_on_host` (the CPU's memory
/// keeps the import's fast path).
fn import_managed(
    obj: Borrowed<'_, '_, PyAny>,
    options: &pysys::dlpm_py_options,
    ready_on_host: bool,
) -> PyResult<ManagedTensor> {
    let mut out = ptr::null_mut();
    // SAFETY: obj is live and the GIL is held; NULL requirements: anything; the options are
    // valid for the call (any pointer in them live for it); out is a valid out-parameter.
    let status = unsafe { pysys::dlpm_py_import(obj.as_ptr(), ptr::null(), options, &mut out) };
    if status != sys::DLPM_OK {
        return Err(PyErr::fetch(obj.py()));
    }
    // Its memory may be another argument's too: its views claim it (python/borrows.rs), in
    // the registry found here, with the GIL held; it starts unclaimed.
    // SAFETY: the component hands over a live, validated tensor of major version 1.
    let tensor = unsafe { ManagedTensor::from_component(out, borrows::import_claim::UNCLAIMED) }
        .map_err(|e| to_pyerr(obj.py(), &e))?;
    borrows::shared(obj.py()).map_err(|e| to_pyerr(obj.py(), &e))?;
    if ready_on_host
        && options.ready_on_host == 0
        && tensor.device().device_type() != DeviceType::CPU
    {
        return import_ready_on_host(obj, options, tensor);
    }
    Ok(tensor)
}

/// [`import_managed`]'s rare turn, for memory other than the CPU's: where a stream orders
/// it, the tensor is let go and imported again with `dlpm_py_options.ready_on_host`.
#[cold]
#[inline(never)]
fn import_ready_on_host(
    obj: Borrowed<'_, '_, PyAny>,
    options: &pysys::dlpm_py_options,
    tensor: ManagedTensor,
) -> PyResult<ManagedTensor> {
    if !asks_again_ready_on_host(&obj, tensor.device().device_type().0) {
        return Ok(tensor);
    }
    drop(tensor);
    let waiting = pysys::dlpm_py_options {
        ready_on_host: 1,
        ..*options
    };
    import_managed(obj, &waiting, false)
}

impl<'py> IntoPyObject<'py> for ManagedTensor {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    /// A `dlpack_mdspan.Tensor` owning the tensor (`dlpm_py_tensor_new`).
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // The component needs a valid tensor; a ManagedTensor made here or imported is one,
        // and one taken from a raw pointer was checked for its version only.
        self.validate().map_err(|e| to_pyerr(py, &e))?;
        let raw = self.into_raw();
        // SAFETY: GIL held; the component takes ownership of raw, also on failure.
        let obj = unsafe { pysys::dlpm_py_tensor_new(raw) };
        // SAFETY: a new reference, or NULL with an exception set.
        unsafe { Bound::from_owned_ptr_or_err(py, obj) }
    }
}
