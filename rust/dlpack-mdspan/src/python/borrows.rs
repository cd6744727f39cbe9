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
//! mutable view (writing), until it drops or leaves Rust (`into_raw`). The registry is this
//! copy of the crate's, process-wide (a `Mutex`): what it cannot see is Python code, and
//! other extensions, writing the memory while Rust reads it, which no DLPack consumer can
//! prevent.

use std::sync::Mutex;

use dlpack_mdspan_sys as sys;

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
/// and the viewed imports alive): a list.
static CLAIMS: Mutex<Vec<Claim>> = Mutex::new(Vec::new());

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

/// The bytes a checked view of `size`-byte elements reaches, as host addresses: from its
/// lowest element to past its highest (`reach`, what the view's check learned), counted from
/// `data + byte_offset`; `dlpm_byte_span`'s answer for whole-byte elements (held equal by a
/// debug assertion at every claim), without asking the facade again.
#[inline(always)]
pub(crate) fn span_reached(tensor: &sys::DLTensor, reach: Reach, size: usize) -> (usize, usize) {
    // The check bounded the reached bytes within isize: no overflow.
    let origin = (tensor.data as usize).wrapping_add(tensor.byte_offset as usize);
    let at = |index: i64| origin.wrapping_add((index as isize as usize).wrapping_mul(size));
    (at(reach.lowest), at(reach.highest + 1))
}

/// Claims `[begin, end)` for `key` (reading, or writing with `writes`), or refuses with
/// [`Status::ALREADY_BORROWED`] when a claim of another key overlaps it and either writes.
/// A reader's claim of the same key is joined (its count and span grow); `replaces` drops
/// the key's claim of the other kind first (an import's reader claim becoming a writer's),
/// in the same step, so that nothing comes between.
pub(crate) fn claim(
    key: usize,
    (begin, end): (usize, usize),
    writes: bool,
    replaces: bool,
) -> Result<(), Error> {
    let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
    // A key's own reader claim is no conflict for the writer that replaces it; two writers
    // always are, even of one key (one object given twice as a writer).
    if let Some(c) = claims.iter().find(|c| {
        c.begin < end && begin < c.end && (c.writes || writes) && !(replaces && c.key == key)
    }) {
        return Err(refusal(begin, end, writes, c));
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
        return Ok(());
    }
    claims.push(Claim {
        key,
        begin,
        end,
        writes,
        count: 1,
    });
    Ok(())
}

/// Ends one holder's claim of `key` and kind (the claim goes with its last holder).
pub(crate) fn release(key: usize, writes: bool) {
    let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
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
fn refusal(begin: usize, end: usize, writes: bool, held: &Claim) -> Error {
    let (asked, holder) = if writes {
        (
            "for writing",
            if held.writes { "a writer" } else { "a reader" },
        )
    } else {
        ("for reading", "a writer")
    };
    Error::new(
        Status::ALREADY_BORROWED,
        format!(
            "the tensor's {} bytes cannot be borrowed {asked}: {} of them are borrowed by {holder} in Rust (another \
             argument of this call, or a live view of an imported tensor); a writer needs its bytes alone, so pass \
             distinct tensors or a copy",
            end - begin,
            end.min(held.end) - begin.max(held.begin)
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
    /// nothing for a tensor not imported from Python. Returns the state before, for
    /// [`unclaim_for_view`](Self::unclaim_for_view). Two threads viewing one `&ManagedTensor`
    /// for the first time both claim, and the one whose state change loses gives its claim
    /// back.
    pub(crate) fn claim_for_view(&self, writes: bool) -> Result<u8, Error> {
        use std::sync::atomic::Ordering;
        let want = if writes {
            import_claim::WRITES
        } else {
            import_claim::READS
        };
        let before = self.python_claim().load(Ordering::Acquire);
        if before == import_claim::NONE || before >= want {
            return Ok(before);
        }
        let Some(span) = span_of(self.dl_tensor(), self.flags().0)? else {
            // Empty: no byte to claim; the state stays, and each view asks again (cheaply).
            return Ok(before);
        };
        let key = self.as_ptr() as usize;
        claim(key, span, writes, before == import_claim::READS)?;
        if self
            .python_claim()
            .compare_exchange(before, want, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            release(key, writes); // another thread's claim stands
            return Ok(want);
        }
        Ok(before)
    }

    /// Gives back the writer's claim a refused mutable view made (`before`: what
    /// [`claim_for_view`](Self::claim_for_view)`(true)` returned): the import is left as it
    /// was, unclaimed or claimed for reading. Called by `view_mut`, which holds `&mut self`,
    /// so no view relies on the claim.
    pub(crate) fn unclaim_for_view(&self, before: u8) {
        use std::sync::atomic::Ordering;
        if before == import_claim::NONE || before == import_claim::WRITES {
            return; // nothing was claimed here
        }
        let key = self.as_ptr() as usize;
        if before == import_claim::READS {
            // Back to a reader's claim: no other claim overlaps a writer's, so this holds.
            if let Ok(Some(span)) = span_of(self.dl_tensor(), self.flags().0) {
                if claim(key, span, false, true).is_ok() {
                    self.python_claim()
                        .store(import_claim::READS, Ordering::Release);
                }
            }
            return;
        }
        if self.python_claim().load(Ordering::Acquire) == import_claim::WRITES {
            release(key, true);
            self.python_claim().store(before, Ordering::Release);
        }
    }

    /// Whether the tensor was imported from Python (its views claim its bytes).
    #[inline(always)]
    pub(crate) fn is_python_import(&self) -> bool {
        self.python_claim()
            .load(std::sync::atomic::Ordering::Relaxed)
            != import_claim::NONE
    }

    /// Ends this tensor's claim, if it made one (its drop, `into_raw`, `into_legacy`): one
    /// load for a tensor that made none.
    #[inline(always)]
    pub(crate) fn release_claim(&self) {
        if self
            .python_claim()
            .load(std::sync::atomic::Ordering::Relaxed)
            >= import_claim::READS
        {
            self.release_claim_made();
        }
    }

    #[cold]
    #[inline(never)]
    fn release_claim_made(&self) {
        use std::sync::atomic::Ordering;
        match self
            .python_claim()
            .swap(import_claim::NONE, Ordering::AcqRel)
        {
            import_claim::READS => release(self.as_ptr() as usize, false),
            import_claim::WRITES => release(self.as_ptr() as usize, true),
            _ => {}
        }
    }
}
