// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The borrow registry: the bytes Rust holds borrowed from Python tensors, for reading or
//! for writing, so that one Python tensor (or two that share memory: a NumPy array and a
//! slice of it) cannot be lent to Rust as a reader and a writer at once. Safe code would
//! otherwise hold a `&[f32]` that a `PyTensorMut` of the same memory changes, which the
//! optimiser may assume never happens (rust-numpy keeps such a registry too).
//!
//! A claim is a span of host addresses, `[begin, end)`: every byte the elements reach
//! (`dlpm_byte_span`), which views only make for host-accessible memory, one address space
//! whatever the device type says (pinned and managed memory are host addresses). Claims
//! for reading share; a claim for writing shares with no other claim it overlaps. A gapped
//! layout claims its whole span, so two interleaved but disjoint slices (`a[:, ::2]` and
//! `a[:, 1::2]`) are refused as a reader and a writer: conservative, never unsound.
//!
//! Who claims: a [`PyTensor`](super::PyTensor) argument for reading and a
//! [`PyTensorMut`](super::PyTensorMut) for writing, until it drops; a
//! [`ManagedTensor`] imported from Python at its first view (reading) and its first
//! mutable view (writing), until it drops or leaves Rust (`into_raw`). The registry is
//! process-wide and shared by every copy of this crate in the process (each Rust extension
//! links its own): the first copy to take a Python tensor publishes its registry as a
//! capsule ([`Shared`], versioned), the attribute `sys._dlpack_mdspan_borrows`, and every
//! copy claims through the one it finds there, as rust-numpy shares its own. It is an
//! attribute of the `sys` module, not an entry of `sys.modules`: tests roll that back
//! (`mock.patch.dict(sys.modules)`), and a copy asking later would then publish a second.
//! What it cannot see is Python code, and other consumers, writing the memory while Rust
//! reads it, which no DLPack consumer can prevent.

use std::cell::UnsafeCell;
use std::ffi::{c_void, CStr};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use dlpack_mdspan_sys as sys;
use pyo3::ffi as pyffi;
use pyo3::prelude::*;

use crate::error::{check, Error, Status};
use crate::managed::ManagedTensor;
use crate::view::Reach;

/// One claim: `count` holders of the same key and kind (one object given twice as a reader,
/// `f(x, x)`), of the union of their spans.
struct Claim {
    key: usize,
    begin: usize,
    end: usize,
    writes: bool,
    count: usize,
}

/// The claims alive in this process, few at a time (the arguments of the calls in flight
/// and the viewed imports alive): a list. Only the copy whose registry the process shares
/// ([`Shared`]) keeps any.
static CLAIMS: Claims = Claims {
    locked: AtomicBool::new(false),
    list: UnsafeCell::new(Vec::new()),
};

/// The claim list behind a spin lock: taken with one atomic exchange and given back with a
/// plain store. Every argument claims and releases, and `std::sync::Mutex` pays an atomic
/// exchange at each unlock too (to find a waiter to wake); the lock is held for a scan of
/// a few claims and never across a call out, so a waiter spins briefly, then yields.
struct Claims {
    locked: AtomicBool,
    list: UnsafeCell<Vec<Claim>>,
}

// SAFETY: the list is reached only through a `ClaimsGuard`, which holds the lock.
unsafe impl Sync for Claims {}

impl Claims {
    fn lock(&self) -> ClaimsGuard<'_> {
        let mut spins = 0u32;
        while self.locked.swap(true, Ordering::Acquire) {
            // Wait for the holder with loads, not exchanges that take the cache line from it.
            while self.locked.load(Ordering::Relaxed) {
                if spins < 64 {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now(); // the holder may have been descheduled
                }
            }
        }
        ClaimsGuard(self)
    }
}

/// The claim list, locked until it drops (a panic in between cannot leave it half
/// written: each change is one push, removal or field update).
struct ClaimsGuard<'a>(&'a Claims);

impl Deref for ClaimsGuard<'_> {
    type Target = Vec<Claim>;
    fn deref(&self) -> &Vec<Claim> {
        // SAFETY: the lock is held (ClaimsGuard is made only by Claims::lock).
        unsafe { &*self.0.list.get() }
    }
}

impl DerefMut for ClaimsGuard<'_> {
    fn deref_mut(&mut self) -> &mut Vec<Claim> {
        // SAFETY: as in deref; this guard is the only one.
        unsafe { &mut *self.0.list.get() }
    }
}

impl Drop for ClaimsGuard<'_> {
    fn drop(&mut self) {
        self.0.locked.store(false, Ordering::Release);
    }
}

/// The attribute of the `sys` module that is the process's registry: a capsule named
/// [`CAPSULE_NAME`] of a [`Shared`].
const SHARED_ATTRIBUTE: &str = "_dlpack_mdspan_borrows";
/// The registry capsule's name.
const CAPSULE_NAME: &CStr = c"dlpack_mdspan.borrow_registry";

/// The registry every copy of the crate in the process claims through: a C ABI that later
/// versions extend by appending fields (`version` 1: these fields; `size`: the size of the
/// struct its maker knew). It lives as long as the process: a static of the copy that
/// published it (CPython never unloads an extension module). Its functions are called from
/// any thread, with or without the GIL (a view of a `ManagedTensor`), never from Python code.
#[repr(C)]
pub(crate) struct Shared {
    version: u32,
    size: u32,
    /// Claims `[begin, end)` for `key` (`kind`: [`WRITES`] and [`REPLACES`], as [`claim`]'s
    /// `writes` and `replaces`). Returns 0, or 1 with `*held` set to the claim in the way.
    claim: unsafe extern "C" fn(
        key: usize,
        begin: usize,
        end: usize,
        kind: u32,
        held: *mut Held,
    ) -> i32,
    /// Ends one holder's claim of `key`, of the kind `kind & WRITES` says.
    release: unsafe extern "C" fn(key: usize, kind: u32),
}

/// The claim in the way of another ([`Shared::claim`]'s answer).
#[repr(C)]
#[derive(Default)]
struct Held {
    begin: usize,
    end: usize,
    /// [`WRITES`] for a writer's claim, 0 for a reader's.
    kind: u32,
}

/// [`Shared`]'s `kind` bit: a writer's claim.
const WRITES: u32 = 1;
/// [`Shared::claim`]'s `kind` bit: the key's claim of the other kind is replaced.
const REPLACES: u32 = 2;

/// The `kind` of a writer's claim (`writes`) or a reader's.
fn kind_of(writes: bool) -> u32 {
    if writes {
        WRITES
    } else {
        0
    }
}

/// This copy's registry, shared when this copy is the first of the process to claim.
static OURS: Shared = Shared {
    version: 1,
    size: std::mem::size_of::<Shared>() as u32,
    claim: claim_here,
    release: release_here,
};

/// The registry this copy claims through, once found or published ([`shared`]).
static SHARED: OnceLock<&'static Shared> = OnceLock::new();

/// The process's registry: the one `sys._dlpack_mdspan_borrows` holds, or this copy's,
/// published there by the first copy to ask. Asked with the GIL held before every claim
/// (the arguments' extraction, the imports), so that a claim made where the thread holds no GIL (a view of a
/// `ManagedTensor`) finds it resolved ([`resolved`]). An attribute that is not a registry
/// (Python code set it) is refused with `INVALID_ARGUMENT` naming it, at every claim until
/// it is one: claiming elsewhere would not see the other copies' claims.
#[inline]
pub(crate) fn shared(py: Python<'_>) -> Result<&'static Shared, Error> {
    match SHARED.get() {
        Some(found) => Ok(found),
        None => shared_first(py),
    }
}

#[cold]
#[inline(never)]
fn shared_first(py: Python<'_>) -> Result<&'static Shared, Error> {
    let found = publish_or_find(py).map_err(|why| {
        Error::new(
            Status::INVALID_ARGUMENT,
            format!(
                "the borrow registry cannot be used: sys.{SHARED_ATTRIBUTE} {why}; every Rust extension built \
                 with dlpack-mdspan shares its borrows there, and only they may set it"
            ),
        )
    })?;
    // Two threads that both asked found the same registry (setdefault is atomic).
    Ok(SHARED.get_or_init(|| found))
}

/// Publishes this copy's registry as `sys._dlpack_mdspan_borrows`, or finds the one there
/// (`setdefault` on the module's own dict: the first copy's stays, in one step, whichever
/// copies race; no Python code runs between the lookup and the insert of a str key), and
/// reads it.
fn publish_or_find(py: Python<'_>) -> Result<&'static Shared, String> {
    let namespace = py
        .import("sys")
        .and_then(|sys| sys.getattr("__dict__"))
        .map_err(|e| format!("is out of reach ({e})"))?;
    // SAFETY: OURS lives as long as the process (a static); the name is a static C string;
    // no destructor: the capsule only lends the pointer.
    let ours = unsafe {
        pyffi::PyCapsule_New(
            std::ptr::from_ref(&OURS).cast_mut().cast::<c_void>(),
            CAPSULE_NAME.as_ptr(),
            None,
        )
    };
    // SAFETY: a new reference, or NULL with an exception set.
    let ours = unsafe { Bound::from_owned_ptr_or_err(py, ours) }
        .map_err(|e| format!("could not be made ({e})"))?;
    let found = namespace
        .call_method1("setdefault", (SHARED_ATTRIBUTE, ours))
        .map_err(|e| format!("could not be set ({e})"))?;
    registry_of(&found)
}

/// The registry `found` (the attribute's value) is, or what is wrong with it. Its version
/// and size are read before the struct is: a struct smaller than version 1's is refused
/// unread, and so are NULL functions.
fn registry_of(found: &Bound<'_, PyAny>) -> Result<&'static Shared, String> {
    // SAFETY: the GIL is held; any object may be asked (NULL and an exception if it is not
    // a capsule of that name); the name is a static C string.
    let pointer = unsafe { pyffi::PyCapsule_GetPointer(found.as_ptr(), CAPSULE_NAME.as_ptr()) };
    if pointer.is_null() {
        drop(PyErr::take(found.py()));
        return Err(format!(
            "(a {}) is not a capsule named '{}'",
            type_name(found),
            CAPSULE_NAME.to_string_lossy()
        ));
    }
    let header = pointer.cast::<u32>();
    // SAFETY: a capsule of that name holds a registry of some version, and every version
    // starts with two u32, version and size.
    let (version, size) = unsafe { (header.read(), header.add(1).read()) };
    if version < 1 || (size as usize) < std::mem::size_of::<Shared>() {
        return Err(format!(
            "holds a registry of version {version} and size {size}, where version 1 of size {} at least is needed",
            std::mem::size_of::<Shared>()
        ));
    }
    // SAFETY: version 1's fields are there (size); the functions are read as nullable
    // pointers (Option of a function pointer has a pointer's layout) before the struct is
    // taken as a Shared, which lives as long as the process (its maker's static).
    let functions = unsafe {
        pointer
            .cast::<u8>()
            .add(8)
            .cast::<[Option<unsafe extern "C" fn()>; 2]>()
            .read()
    };
    if functions.iter().any(Option::is_none) {
        return Err("holds a registry whose claim or release is NULL".to_owned());
    }
    // SAFETY: as above.
    Ok(unsafe { &*pointer.cast::<Shared>() })
}

fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// The bytes a valid tensor's elements reach, as host addresses `[begin, end)`, or `None`
/// when it reaches none (empty).
pub(crate) fn span_of(tensor: &sys::DLTensor, flags: u64) -> Result<Option<(usize, usize)>, Error> {
    let (mut begin, mut end) = (0i64, 0i64);
    // SAFETY: the tensor is live (a reference); the facade validates it before it reads its
    // arrays; begin and end are valid out-parameters.
    check(unsafe { sys::dlpm_byte_span(tensor, flags, &mut begin, &mut end) })?;
    if begin == end {
        return Ok(None);
    }
    // Offsets from data within the tensor's allocation (validated): addresses as integers,
    // compared and never dereferenced.
    let data = tensor.data as usize;
    Ok(Some((
        data.wrapping_add(begin as isize as usize),
        data.wrapping_add(end as isize as usize),
    )))
}

/// The bytes a checked view of `len` elements of `size` bytes (`tensor` with `flags`)
/// reaches, as host addresses, or `None` when it reaches none (empty): from its lowest
/// element to past its highest (`reach`, what the view's check learned), counted from
/// `data + byte_offset`. [`span_of`]'s answer for whole-byte elements (held equal by a
/// debug assertion), without asking the facade again.
#[inline(always)]
pub(crate) fn view_span(
    tensor: &sys::DLTensor,
    flags: u64,
    len: usize,
    reach: Reach,
    size: usize,
) -> Option<(usize, usize)> {
    if len == 0 {
        return None;
    }
    // The check bounded the reached bytes within isize: no overflow.
    let origin = (tensor.data as usize).wrapping_add(tensor.byte_offset as usize);
    let at = |index: i64| origin.wrapping_add((index as isize as usize).wrapping_mul(size));
    let span = (at(reach.lowest), at(reach.highest + 1));
    debug_assert_eq!(
        span_of(tensor, flags).ok().flatten(),
        Some(span),
        "a view's reach is the facade's byte span"
    );
    Some(span)
}

/// Claims `[begin, end)` for `key` (reading, or writing with `writes`) in the process's
/// registry `shared`, or refuses with [`Status::ALREADY_BORROWED`] when a claim of another
/// key overlaps it and either writes. A reader's claim of the same key is joined (its count
/// and span grow); `replaces` drops the key's claim of the other kind first (an import's
/// reader claim becoming a writer's), in the same step, so that nothing comes between.
#[inline]
pub(crate) fn claim(
    shared: &'static Shared,
    key: usize,
    (begin, end): (usize, usize),
    writes: bool,
    replaces: bool,
) -> Result<(), Error> {
    let mut held = Held::default();
    let kind = kind_of(writes) | if replaces { REPLACES } else { 0 };
    // SAFETY: a registry of version 1 at least (registry_of); held is a valid out-parameter.
    if unsafe { (shared.claim)(key, begin, end, kind, &mut held) } == 0 {
        return Ok(());
    }
    Err(refusal(begin, end, writes, &held))
}

/// Ends one holder's claim of `key` and kind in `shared` (the claim goes with its last
/// holder).
#[inline]
pub(crate) fn release(shared: &'static Shared, key: usize, writes: bool) {
    // SAFETY: a registry of version 1 at least (registry_of).
    unsafe { (shared.release)(key, kind_of(writes)) }
}

/// The registry of a claim made where the thread may hold no GIL (a view of a
/// `ManagedTensor`): the one its import from Python found ([`shared`]).
pub(crate) fn resolved() -> &'static Shared {
    SHARED.get().copied().unwrap_or_else(|| {
        debug_assert!(
            false,
            "an import from Python resolves the registry before its views claim"
        );
        &OURS
    })
}

/// [`Shared::claim`] of this copy's registry.
unsafe extern "C" fn claim_here(
    key: usize,
    begin: usize,
    end: usize,
    kind: u32,
    held: *mut Held,
) -> i32 {
    let (writes, replaces) = (kind & WRITES != 0, kind & REPLACES != 0);
    let mut claims = CLAIMS.lock();
    // A key's own reader claim is no conflict for the writer that replaces it; two writers
    // always are, even of one key (one object given twice as a writer).
    if let Some(c) = claims.iter().find(|c| {
        c.begin < end && begin < c.end && (c.writes || writes) && !(replaces && c.key == key)
    }) {
        // SAFETY: NULL, or a valid out-parameter (Shared::claim's contract).
        if let Some(held) = unsafe { held.as_mut() } {
            *held = Held {
                begin: c.begin,
                end: c.end,
                kind: kind_of(c.writes),
            };
        }
        return 1;
    }
    if replaces {
        claims.retain(|c| !(c.key == key && c.writes != writes));
    }
    if let Some(c) = claims
        .iter_mut()
        .find(|c| c.key == key && c.writes == writes)
    {
        c.count += 1;
        c.begin = c.begin.min(begin);
        c.end = c.end.max(end);
        return 0;
    }
    claims.push(Claim {
        key,
        begin,
        end,
        writes,
        count: 1,
    });
    0
}

/// [`Shared::release`] of this copy's registry.
unsafe extern "C" fn release_here(key: usize, kind: u32) {
    let writes = kind & WRITES != 0;
    let mut claims = CLAIMS.lock();
    if let Some(i) = claims
        .iter()
        .position(|c| c.key == key && c.writes == writes)
    {
        claims[i].count -= 1;
        if claims[i].count == 0 {
            claims.swap_remove(i);
        }
    }
}

#[cold]
fn refusal(begin: usize, end: usize, writes: bool, held: &Held) -> Error {
    let (asked, holder) = if writes {
        (
            "for writing",
            if held.kind & WRITES != 0 {
                "a writer"
            } else {
                "a reader"
            },
        )
    } else {
        ("for reading", "a writer")
    };
    // A registry of another copy may report a claim that does not overlap (its contract says
    // it does): no count is made up then.
    let overlap = match end.min(held.end).checked_sub(begin.max(held.begin)) {
        Some(n) if n > 0 => n.to_string(),
        _ => "some".to_owned(),
    };
    Error::new(
        Status::ALREADY_BORROWED,
        format!(
            "the tensor's {} bytes cannot be borrowed {asked}: {overlap} of them are borrowed by {holder} in Rust \
             (another argument of this call, a live view of an imported tensor, or another Rust extension's); a \
             writer needs its bytes alone, so pass distinct tensors or a copy",
            end - begin,
        ),
    )
}

/// What a [`ManagedTensor`] imported from Python has claimed (its `python_claim`): nothing
/// yet, its bytes for reading, or for writing.
pub(crate) mod import_claim {
    /// Not imported from Python: nothing to claim (from_vec, from_raw's contract).
    pub(crate) const NONE: u8 = 0;
    /// Imported from Python, not viewed yet.
    pub(crate) const UNCLAIMED: u8 = 1;
    /// Claimed for reading.
    pub(crate) const READS: u8 = 2;
    /// Claimed for writing.
    pub(crate) const WRITES: u8 = 3;
}

impl ManagedTensor {
    /// The claim a view of this tensor needs (`writes`: a mutable view), made at its first
    /// view of that kind (or first copy: `copy_to_host`) and kept until the tensor drops;
    /// nothing for a tensor not imported from Python. `span` gives the bytes, asked only when
    /// a claim is made: a view's from what its check learned ([`view_span`]), a copy's from
    /// the facade ([`span_of`]). Returns the state before, for
    /// [`unclaim_for_view`](Self::unclaim_for_view). Two threads viewing one `&ManagedTensor`
    /// for the first time both claim, and the one whose state change loses gives its claim
    /// back.
    fn claim_for_view(
        &self,
        writes: bool,
        span: impl FnOnce() -> Result<Option<(usize, usize)>, Error>,
    ) -> Result<u8, Error> {
        let want = if writes {
            import_claim::WRITES
        } else {
            import_claim::READS
        };
        let before = self.python_claim().load(Ordering::Acquire);
        if before == import_claim::NONE || before >= want {
            return Ok(before);
        }
        let Some(span) = span()? else {
            // Empty: no byte to claim; the state stays, and each view asks again (cheaply).
            return Ok(before);
        };
        let key = self.as_ptr() as usize;
        claim(resolved(), key, span, writes, before == import_claim::READS)?;
        if self
            .python_claim()
            .compare_exchange(before, want, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            release(resolved(), key, writes); // another thread's claim stands
            return Ok(want);
        }
        Ok(before)
    }

    /// [`claim_for_view`](Self::claim_for_view) for a view whose check learned `reach`, of
    /// `len` elements of `size` bytes, the tensor as described with `flags`.
    #[inline(always)]
    pub(crate) fn claim_for_checked_view(
        &self,
        writes: bool,
        (tensor, flags, len, reach): (&sys::DLTensor, u64, usize, Reach),
        size: usize,
    ) -> Result<u8, Error> {
        self.claim_for_view(writes, || Ok(view_span(tensor, flags, len, reach, size)))
    }

    /// [`claim_for_view`](Self::claim_for_view) for a copy, which makes no view: the bytes
    /// from the facade's byte span.
    pub(crate) fn claim_for_copy(&self) -> Result<u8, Error> {
        self.claim_for_view(false, || span_of(self.dl_tensor(), self.flags().0))
    }

    /// Gives back the writer's claim a refused mutable view made (`before`: what
    /// [`claim_for_view`](Self::claim_for_view)`(true)` returned): the import is left as it
    /// was, unclaimed or claimed for reading. Called by `view_mut`, which holds `&mut self`,
    /// so no view relies on the claim.
    pub(crate) fn unclaim_for_view(&self, before: u8) {
        if before == import_claim::NONE || before == import_claim::WRITES {
            return; // nothing was claimed here
        }
        let key = self.as_ptr() as usize;
        if before == import_claim::READS {
            // Back to a reader's claim: no other claim overlaps a writer's, so this holds.
            if let Ok(Some(span)) = span_of(self.dl_tensor(), self.flags().0) {
                if claim(resolved(), key, span, false, true).is_ok() {
                    self.python_claim()
                        .store(import_claim::READS, Ordering::Release);
                }
            }
            return;
        }
        if self.python_claim().load(Ordering::Acquire) == import_claim::WRITES {
            release(resolved(), key, true);
            self.python_claim().store(before, Ordering::Release);
        }
    }

    /// Whether the tensor was imported from Python (its views claim its bytes).
    #[inline(always)]
    pub(crate) fn is_python_import(&self) -> bool {
        self.python_claim().load(Ordering::Relaxed) != import_claim::NONE
    }

    /// Ends this tensor's claim, if it made one (its drop, `into_raw`, `into_legacy`): one
    /// load for a tensor that made none.
    #[inline(always)]
    pub(crate) fn release_claim(&self) {
        if self.python_claim().load(Ordering::Relaxed) >= import_claim::READS {
            self.release_claim_made();
        }
    }

    #[cold]
    #[inline(never)]
    fn release_claim_made(&self) {
        match self
            .python_claim()
            .swap(import_claim::NONE, Ordering::AcqRel)
        {
            import_claim::READS => release(resolved(), self.as_ptr() as usize, false),
            import_claim::WRITES => release(resolved(), self.as_ptr() as usize, true),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The claim list under many threads at once (views of `ManagedTensor`s claim without
    /// the GIL): every claim and release is seen whole, conflicts are found, and the list
    /// ends empty. Without the lock the threads' pushes and removals race on one `Vec`.
    #[test]
    fn claims_from_many_threads_at_once_stay_consistent() {
        const THREADS: usize = 8;
        const ROUNDS: usize = 20_000;
        // Addresses far from any real allocation; each thread's writer span is its own, and
        // all threads read one shared span.
        const BASE: usize = 1 << 47;
        const SHARED: (usize, usize) = (BASE, BASE + 64);
        let refused = std::thread::scope(|s| {
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    s.spawn(move || {
                        let own = (BASE + 4096 * (t + 1), BASE + 4096 * (t + 1) + 256);
                        let (writer, reader, intruder) =
                            (BASE + 3 * t, BASE + 3 * t + 1, BASE + 3 * t + 2);
                        let mut refused = 0;
                        for _ in 0..ROUNDS {
                            // SAFETY: a null `held` is allowed (Shared::claim's contract).
                            unsafe {
                                assert_eq!(
                                    claim_here(writer, own.0, own.1, WRITES, std::ptr::null_mut()),
                                    0
                                );
                                assert_eq!(
                                    claim_here(reader, SHARED.0, SHARED.1, 0, std::ptr::null_mut()),
                                    0
                                );
                                // A writer of the shared span meets this thread's own reader.
                                refused += claim_here(
                                    intruder,
                                    SHARED.0,
                                    SHARED.1 + 1,
                                    WRITES,
                                    std::ptr::null_mut(),
                                );
                                release_here(reader, 0);
                                release_here(writer, WRITES);
                            }
                        }
                        refused
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum::<i32>()
        });
        assert_eq!(refused as usize, THREADS * ROUNDS);
        assert!(CLAIMS
            .lock()
            .iter()
            .all(|c| c.begin < BASE || c.begin >= BASE + 4096 * (THREADS + 1)));
    }
}
