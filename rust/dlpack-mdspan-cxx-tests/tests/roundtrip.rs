// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Rust -> C facade -> C++ view -> Rust, and C++ -> Rust.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dlpack_mdspan::{sys, Device, Element, Flags, ManagedTensor, Status};
use dlpack_mdspan_cxx_tests::{
    cxx_live_owners, cxx_refuses_mutable_view, double_in_cxx, matrix_from_cxx, sum_in_cxx,
};

/// The C++ owner counter is global: tests that read it run one at a time.
static CXX_OWNERS: Mutex<()> = Mutex::new(());

/// An owner that keeps a Vec alive and counts its drops.
struct Counted<T> {
    drops: Arc<AtomicUsize>,
    _values: Vec<T>,
}

impl<T> Drop for Counted<T> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// A tensor over `values` owned by a `Counted`, and its drop counter.
fn counted<T: Element>(mut values: Vec<T>, shape: &[i64]) -> (ManagedTensor, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let data = values.as_mut_ptr().cast();
    let owner = Counted {
        drops: drops.clone(),
        _values: values,
    };
    // SAFETY: the owner keeps the Vec alive and nothing else touches it.
    let t = unsafe {
        ManagedTensor::build_from_owner(owner, data, T::DTYPE, Device::CPU, shape).finish()
    }
    .unwrap();
    (t, drops)
}

#[test]
fn rust_vec_is_doubled_by_cxx_view_and_comes_back() {
    let t = ManagedTensor::from_vec((1..=6).map(f64::from).collect(), &[2, 3]).unwrap();
    let data = t.dl_tensor().data;
    let t = double_in_cxx(t).unwrap();
    assert_eq!(
        t.dl_tensor().data,
        data,
        "zero copies: the same buffer came back"
    );
    assert_eq!(
        t.view::<f64>().unwrap().as_slice().unwrap(),
        &[2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
    );
    // And a second trip, after the first came back.
    let t = double_in_cxx(t).unwrap();
    assert_eq!(t.view::<f64>().unwrap().get(&[1, 2]), Some(&24.0));
}

#[test]
fn owner_is_dropped_once_after_the_round_trip() {
    let (t, drops) = counted(vec![1.0f64; 4], &[2, 2]);
    let t = double_in_cxx(t).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    assert_eq!(t.view::<f64>().unwrap().as_slice().unwrap(), &[2.0; 4]);
    drop(t);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn cxx_view_failure_releases_the_tensor_once() {
    // f32 data, which C++ refuses to view as double.
    let (t, drops) = counted(vec![1.0f32; 4], &[2, 2]);
    let err = double_in_cxx(t).unwrap_err();
    assert_eq!(err.code, Status::DTYPE_MISMATCH.code());
    assert!(
        err.message.contains("does not match the required float64"),
        "{}",
        err.message
    );
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "C++ released the tensor it adopted"
    );
}

#[test]
fn cxx_version_check_releases_a_foreign_major_version() {
    // A tensor claiming DLPack 2.0 is released by C++'s adopt, exactly once.
    let (t, drops) = counted(vec![1.0f64; 4], &[2, 2]);
    let raw = t.into_raw();
    // SAFETY: raw is live and ours; only the version field is changed.
    unsafe { (*raw).version = sys::DLPackVersion { major: 2, minor: 0 } };
    // SAFETY: ownership of raw moves to Rust; the facade releases it on the mismatch.
    let err = unsafe { ManagedTensor::from_raw(raw) }.unwrap_err();
    assert_eq!(err.status(), Status::VERSION_MISMATCH);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn cxx_honours_read_only_from_rust() {
    let t = ManagedTensor::build_from_vec(vec![3.0f64, 4.0], &[1, 2])
        .flags(Flags::READ_ONLY)
        .finish()
        .unwrap();
    assert_eq!(cxx_refuses_mutable_view(&t).unwrap(), (true, 3.0));
    let w = ManagedTensor::from_vec(vec![5.0f64, 6.0], &[2, 1]).unwrap();
    assert_eq!(cxx_refuses_mutable_view(&w).unwrap(), (false, 5.0));
    // Read-only tensors refuse the C++ mutable view inside double_in_cxx too.
    let err = double_in_cxx(t).unwrap_err();
    assert_eq!(err.code, Status::READ_ONLY.code());
}

#[test]
fn cxx_layout_stride_relaxed_agrees_with_rust_views() {
    let storage: Vec<f64> = (0..12).map(f64::from).collect();
    let cases: Vec<(ManagedTensor, f64)> = vec![
        // row-major 3x4
        (
            ManagedTensor::from_vec(storage.clone(), &[3, 4]).unwrap(),
            66.0,
        ),
        // transposed 4x3
        (
            ManagedTensor::build_from_vec(storage.clone(), &[4, 3])
                .strides(&[1, 4])
                .finish()
                .unwrap(),
            66.0,
        ),
        // reversed rows
        (
            ManagedTensor::build_from_vec(storage.clone(), &[3, 4])
                .strides(&[-4, 1])
                .offset(8)
                .finish()
                .unwrap(),
            66.0,
        ),
        // broadcast first row 5 times: 5 * (0+1+2+3)
        (
            ManagedTensor::build_from_vec(storage.clone(), &[5, 4])
                .strides(&[0, 1])
                .finish()
                .unwrap(),
            30.0,
        ),
        // every other column
        (
            ManagedTensor::build_from_vec(storage.clone(), &[3, 2])
                .strides(&[4, 2])
                .finish()
                .unwrap(),
            0.0 + 2.0 + 4.0 + 6.0 + 8.0 + 10.0,
        ),
    ];
    for (t, expected) in cases {
        let rust_sum: f64 = t.view::<f64>().unwrap().to_vec().iter().sum();
        let cxx_sum = sum_in_cxx(t.dl_tensor()).unwrap();
        assert_eq!(rust_sum, expected);
        assert_eq!(cxx_sum, expected);
    }
}

#[test]
fn cxx_refuses_what_rust_refuses() {
    let t = ManagedTensor::from_vec(vec![1i32; 4], &[2, 2]).unwrap();
    let cxx = sum_in_cxx(t.dl_tensor()).unwrap_err();
    let rust = t.view::<f64>().unwrap_err();
    assert_eq!(cxx.code, rust.status().code());
    assert_eq!(cxx.message, rust.message(), "same core, same message");
}

#[test]
fn cxx_made_tensor_is_viewed_and_released_by_rust() {
    let _serial = CXX_OWNERS.lock().unwrap();
    let before = cxx_live_owners();
    let mut t = matrix_from_cxx(3, 4, false).unwrap();
    assert_eq!(cxx_live_owners(), before + 1);
    assert!(!t.is_exclusive(), "a C++ tensor is not the crate's own");
    {
        let v = t.view::<f32>().unwrap();
        assert_eq!(v.shape(), &[3, 4]);
        assert_eq!(v.get(&[2, 3]), Some(&203.0));
    }
    t.view_mut::<f32>().unwrap().set(&[0, 0], -1.0).unwrap();
    assert_eq!(t.view::<f32>().unwrap().get(&[0, 0]), Some(&-1.0));
    // Through the legacy path and back, still one owner.
    let legacy = t.into_legacy().map_err(|e| e.into_error()).unwrap();
    // SAFETY: legacy is a live tensor handed over once.
    let t = unsafe { ManagedTensor::from_raw_legacy(legacy, false) }.unwrap();
    assert!(t.is_read_only());
    assert_eq!(cxx_live_owners(), before + 1);
    drop(t);
    assert_eq!(
        cxx_live_owners(),
        before,
        "the C++ deleter ran once, from Rust"
    );
}

#[test]
fn cxx_made_read_only_tensor_on_another_thread() {
    let _serial = CXX_OWNERS.lock().unwrap();
    let before = cxx_live_owners();
    let mut t = matrix_from_cxx(2, 2, true).unwrap();
    assert_eq!(t.view_mut::<f32>().unwrap_err().status(), Status::READ_ONLY);
    let sum = std::thread::spawn(move || {
        let s: f32 = t.view::<f32>().unwrap().as_slice().unwrap().iter().sum();
        drop(t);
        s
    })
    .join()
    .unwrap();
    assert_eq!(sum, 0.0 + 1.0 + 100.0 + 101.0);
    assert_eq!(cxx_live_owners(), before);
}

#[test]
fn version_and_abi_agree() {
    let v = dlpack_mdspan::version();
    assert_eq!(
        (v.dlpack_major, v.dlpack_minor),
        (sys::DLPACK_MAJOR_VERSION, sys::DLPACK_MINOR_VERSION)
    );
}
