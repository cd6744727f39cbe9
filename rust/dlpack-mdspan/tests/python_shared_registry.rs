// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The borrow registry shared by every copy of the crate in a process (docs/rust.md,
//! "Borrows of Python tensors"), seen from a copy that is not the first: this test plays the
//! first copy, publishing its own registry as `sys._dlpack_mdspan_borrows` before the crate
//! takes a tensor,
//! in a process of its own (a test binary of one test), so that the crate claims through it.
#![cfg(feature = "pyo3")]

use std::sync::Mutex;

use dlpack_mdspan::{ManagedTensor, PyTensor, PyTensorMut};
use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;

mod shared_registry;
use shared_registry::{capsule, capsule_at, HeldClaim, SharedRegistry};

/// What the crate asked of this registry: claims (key, begin, end, kind) and releases
/// (key, kind), in order.
#[derive(Debug, PartialEq, Clone, Copy)]
enum Call {
    Claim(usize, usize, usize, u32),
    Release(usize, u32),
}

static CALLS: Mutex<Vec<Call>> = Mutex::new(Vec::new());
/// When set, the claim in the way of every claim: (begin, end, kind).
static REFUSE_WITH: Mutex<Option<(usize, usize, u32)>> = Mutex::new(None);

unsafe extern "C" fn claim(
    key: usize,
    begin: usize,
    end: usize,
    kind: u32,
    held: *mut HeldClaim,
) -> i32 {
    CALLS
        .lock()
        .unwrap()
        .push(Call::Claim(key, begin, end, kind));
    match *REFUSE_WITH.lock().unwrap() {
        Some((b, e, k)) => {
            // SAFETY: the crate passes a valid out-parameter.
            unsafe {
                *held = HeldClaim {
                    begin: b,
                    end: e,
                    kind: k,
                }
            };
            1
        }
        None => 0,
    }
}

unsafe extern "C" fn release(key: usize, kind: u32) {
    CALLS.lock().unwrap().push(Call::Release(key, kind));
}

static FIRST_COPYS: SharedRegistry = SharedRegistry {
    version: 1,
    size: std::mem::size_of::<SharedRegistry>() as u32,
    claim,
    release,
};

static TOO_OLD: SharedRegistry = SharedRegistry {
    version: 0,
    size: std::mem::size_of::<SharedRegistry>() as u32,
    claim,
    release,
};

/// A registry that says it is smaller than version 1's (refused unread).
static TOO_SMALL: [u32; 2] = [1, 8];

/// Version 1 with a NULL release.
#[repr(C)]
struct NullRelease {
    version: u32,
    size: u32,
    claim: unsafe extern "C" fn(usize, usize, usize, u32, *mut HeldClaim) -> i32,
    release: usize,
}
static NULL_RELEASE: NullRelease = NullRelease {
    version: 1,
    size: std::mem::size_of::<NullRelease>() as u32,
    claim,
    release: 0,
};

/// Sets `sys._dlpack_mdspan_borrows` to `registry`.
fn publish(py: Python<'_>, registry: Bound<'_, PyAny>) {
    py.import("sys")
        .unwrap()
        .setattr("_dlpack_mdspan_borrows", registry)
        .unwrap();
}

fn refused_with(py: Python<'_>, obj: &Bound<'_, PyAny>, text: &str) {
    let e = obj.extract::<PyTensor<'_, f32>>().err().expect("refused");
    assert!(e.is_instance_of::<PyBufferError>(py), "{e}");
    assert!(e.to_string().contains(text), "{e}");
}

#[test]
fn a_copy_claims_through_the_registry_the_first_copy_published() {
    Python::attach(|py| {
        let obj = ManagedTensor::from_vec(vec![1.0f32; 4], &[4])
            .unwrap()
            .into_pyobject(py)
            .unwrap();
        // What is there is not a registry: every borrow is refused, naming it.
        publish(py, 42i32.into_pyobject(py).unwrap().into_any());
        refused_with(
            py,
            &obj,
            "the borrow registry cannot be used: sys._dlpack_mdspan_borrows (a int) is not a capsule named \
             'dlpack_mdspan.borrow_registry'; every Rust extension built with dlpack-mdspan shares its borrows \
             there, and only they may set it (invalid argument)",
        );
        assert!(
            obj.extract::<ManagedTensor>().is_err(),
            "an import would claim there too"
        );
        publish(py, capsule(py, &TOO_OLD));
        refused_with(py, &obj, "holds a registry of version 0 and size 24");
        publish(py, capsule_at(py, std::ptr::from_ref(&TOO_SMALL).cast()));
        refused_with(
            py,
            &obj,
            "holds a registry of version 1 and size 8, where version 1 of size 24",
        );
        publish(py, capsule_at(py, std::ptr::from_ref(&NULL_RELEASE).cast()));
        refused_with(py, &obj, "holds a registry whose claim or release is NULL");
        assert!(CALLS.lock().unwrap().is_empty());

        // The first copy's registry: every claim and release goes through it.
        publish(py, capsule(py, &FIRST_COPYS));
        let (begin, key) = {
            let t = obj.extract::<PyTensor<'_, f32>>().unwrap();
            let begin = t.view_ref().as_slice().unwrap().as_ptr().addr();
            let calls = CALLS.lock().unwrap().clone();
            let [Call::Claim(key, b, e, 0)] = calls[..] else {
                panic!("one reader's claim: {calls:?}")
            };
            assert_eq!((b, e), (begin, begin + 16));
            (begin, key)
        };
        assert_eq!(CALLS.lock().unwrap().last(), Some(&Call::Release(key, 0)));
        let w = obj.extract::<PyTensorMut<'_, f32>>().unwrap();
        drop(w);
        let calls = CALLS.lock().unwrap().split_off(2);
        assert!(
            matches!(calls[..], [Call::Claim(k, b, e, 1), Call::Release(r, 1)] if k == r && (b, e) == (begin, begin + 16)),
            "a writer's claim and release: {calls:?}"
        );
        // An import claims at its first view, without the GIL if need be, and releases at drop.
        let imported = obj.extract::<ManagedTensor>().unwrap();
        py.detach(|| assert_eq!(imported.view::<f32>().unwrap().len(), 4));
        let address = std::ptr::from_ref(&imported).addr();
        drop(imported);
        let calls = CALLS.lock().unwrap().split_off(2);
        assert!(
            matches!(calls[..], [Call::Claim(k, b, e, 0), Call::Release(r, 0)] if k == r && k != address && (b, e) == (begin, begin + 16)),
            "an import's claim and release: {calls:?}"
        );
        // The registry refuses: the crate words the refusal from the claim in its way.
        *REFUSE_WITH.lock().unwrap() = Some((begin + 4, begin + 64, 1));
        refused_with(
            py,
            &obj,
            "the tensor's 16 bytes cannot be borrowed for reading: 12 of them are borrowed by a writer in Rust",
        );
        // A claim in the way that does not overlap (the registry breaks its contract): no count.
        *REFUSE_WITH.lock().unwrap() = Some((0, 0, 1));
        refused_with(
            py,
            &obj,
            "the tensor's 16 bytes cannot be borrowed for reading: some of them are borrowed by a writer",
        );
        *REFUSE_WITH.lock().unwrap() = None;
    });
}
