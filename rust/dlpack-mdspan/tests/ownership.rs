// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Ownership: deleters run exactly once on every path, on any thread; version and legacy
//! rules come from the facade.

mod common;

use std::sync::{Arc, Mutex};

use common::{counted_vec, Counter, DropCounter, Spec};
use dlpack_mdspan::{
    sys, DataType, Device, DeviceType, Element, Flags, ManagedTensor, ReadOnlyCause, Status,
};

/// A tensor over a Vec<f64> whose owner counts its drops.
fn counted(values: Vec<f64>, shape: &[i64]) -> (ManagedTensor, Counter) {
    let (owner, data, counter) = counted_vec(values, None);
    // SAFETY: `owner` keeps the Vec alive and nothing else touches it.
    let t = unsafe {
        ManagedTensor::build_from_owner(owner, data, f64::DTYPE, Device::CPU, shape).finish()
    }
    .expect("valid description");
    (t, counter)
}

#[test]
fn drop_runs_the_deleter_exactly_once() {
    let (t, counter) = counted(vec![1.0, 2.0, 3.0], &[3]);
    assert_eq!(counter.get(), 0);
    assert_eq!(
        t.view::<f64>().unwrap().as_slice().unwrap(),
        &[1.0, 2.0, 3.0]
    );
    drop(t);
    assert_eq!(counter.get(), 1);
}

#[test]
fn into_raw_and_back_still_deletes_once() {
    let (t, counter) = counted(vec![0.5; 4], &[2, 2]);
    let raw = t.into_raw();
    assert_eq!(counter.get(), 0, "into_raw must not release");
    // SAFETY: raw comes from into_raw and is handed back once.
    let back = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(back.as_ptr(), raw, "the original pointer is kept");
    assert_eq!(counter.get(), 0);
    drop(back);
    assert_eq!(counter.get(), 1);
}

#[test]
fn raw_pointer_deleted_from_c_releases_once() {
    let (t, counter) = counted(vec![0.0; 2], &[2]);
    let raw = t.into_raw();
    // SAFETY: raw is live and deleted exactly once, here.
    unsafe { sys::dlpm_managed_delete(raw) };
    assert_eq!(counter.get(), 1);
}

#[test]
fn drop_on_another_thread() {
    let dropped_on = Arc::new(Mutex::new(None));
    let (owner, data, counter) = counted_vec(vec![1u32, 2, 3, 4], Some(dropped_on.clone()));
    // SAFETY: the owner keeps the Vec alive and nothing else touches it.
    let t = unsafe {
        ManagedTensor::build_from_owner(owner, data, u32::DTYPE, Device::CPU, &[4]).finish()
    }
    .unwrap();
    let worker = std::thread::spawn(move || {
        let sum: u32 = t.view::<u32>().unwrap().as_slice().unwrap().iter().sum();
        let id = std::thread::current().id();
        drop(t);
        (sum, id)
    });
    let (sum, worker_id) = worker.join().unwrap();
    assert_eq!(sum, 10);
    assert_eq!(counter.get(), 1);
    assert_eq!(*dropped_on.lock().unwrap(), Some(worker_id));
    assert_ne!(worker_id, std::thread::current().id());
}

#[test]
fn from_vec_tensor_dropped_on_another_thread() {
    let t = ManagedTensor::from_vec(vec![3u64; 1000], &[10, 100]).unwrap();
    let handle = std::thread::spawn(move || t.view::<u64>().unwrap().get(&[9, 99]).copied());
    assert_eq!(handle.join().unwrap(), Some(3));
}

#[test]
fn shared_views_across_threads() {
    let t = ManagedTensor::from_vec((0..100i32).collect(), &[10, 10]).unwrap();
    let sums: Vec<i32> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|k| {
                let t = &t;
                s.spawn(move || {
                    let v = t.view::<i32>().unwrap();
                    (0..10).map(|j| *v.get(&[k, j]).unwrap()).sum()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(sums, vec![45, 145, 245, 345]);
}

#[test]
fn foreign_tensor_deleter_runs_once_on_drop() {
    let (raw, deleted) = common::versioned(&Spec::new(DataType::F32.0, &[2, 3]));
    // SAFETY: raw is a freshly built tensor, handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert!(!t.is_exclusive());
    assert_eq!(t.shape().unwrap(), &[2, 3]);
    assert_eq!(deleted.get(), 0);
    drop(t);
    assert_eq!(deleted.get(), 1);
}

#[test]
fn version_mismatch_releases_at_once() {
    let mut spec = Spec::new(DataType::F32.0, &[2]);
    spec.version = sys::DLPackVersion { major: 2, minor: 0 };
    let (raw, deleted) = common::versioned(&spec);
    // SAFETY: raw is handed over; the facade releases it on a major mismatch.
    let err = unsafe { ManagedTensor::from_raw(raw) }.unwrap_err();
    assert_eq!(err.status(), Status::VERSION_MISMATCH);
    assert!(err.message().contains("2.0"), "message: {}", err.message());
    assert!(
        err.message().contains("released"),
        "message: {}",
        err.message()
    );
    assert_eq!(
        deleted.get(),
        1,
        "the deleter ran exactly once, inside from_raw"
    );
}

#[test]
fn newer_minor_version_is_accepted() {
    let mut spec = Spec::new(DataType::U8.0, &[4]);
    spec.version = sys::DLPackVersion {
        major: 1,
        minor: 99,
    };
    let (raw, deleted) = common::versioned(&spec);
    // SAFETY: raw is handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(
        t.version(),
        sys::DLPackVersion {
            major: 1,
            minor: 99
        }
    );
    drop(t);
    assert_eq!(deleted.get(), 1);
}

#[test]
fn null_pointers_are_errors() {
    // SAFETY: NULL is allowed and refused.
    let err = unsafe { ManagedTensor::from_raw(std::ptr::null_mut()) }.unwrap_err();
    assert_eq!(err.status(), Status::NULL_POINTER);
    // SAFETY: as above.
    let err = unsafe { ManagedTensor::from_raw_legacy(std::ptr::null_mut(), true) }.unwrap_err();
    assert_eq!(err.status(), Status::NULL_POINTER);
}

#[test]
fn misaligned_addresses_are_refused_unread() {
    // An address not aligned for the struct: refused before anything reads through it (a
    // read would be undefined behaviour; this one points nowhere), and not taken.
    for offset in [1, 4, 7] {
        let raw = std::ptr::dangling_mut::<dlpack_mdspan::sys::DLManagedTensorVersioned>()
            .wrapping_byte_add(offset);
        // SAFETY: a misaligned address is refused without being read.
        let err = unsafe { ManagedTensor::from_raw(raw) }.unwrap_err();
        assert_eq!(err.status(), Status::MISALIGNED_METADATA, "offset {offset}");
        assert!(err.message().contains("not aligned"), "{}", err.message());
    }
    // An aligned one keeps its address and what the handle knows of it: made here or not.
    let made = ManagedTensor::from_vec(vec![1u16, 2, 3], &[3]).unwrap();
    assert!(made.is_exclusive());
    let raw = made.into_raw();
    assert_eq!(
        raw.addr() % std::mem::align_of::<dlpack_mdspan::sys::DLManagedTensorVersioned>(),
        0
    );
    // SAFETY: raw comes straight from into_raw.
    let back = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(back.as_ptr(), raw);
    assert!(!back.is_exclusive());
    assert_eq!(back.view::<u16>().unwrap().as_slice().unwrap(), &[1, 2, 3]);
}

#[test]
fn null_deleter_is_allowed() {
    let (raw, deleted) = common::versioned(&Spec::new(DataType::U8.0, &[1]));
    // Take the deleter out, to call it ourselves afterwards.
    // SAFETY: raw is live and ours.
    let deleter = unsafe { (*raw).deleter.take() }.unwrap();
    // SAFETY: raw is handed over; with a NULL deleter, drop does nothing.
    drop(unsafe { ManagedTensor::from_raw(raw) }.unwrap());
    assert_eq!(deleted.get(), 0);
    // SAFETY: raw is still live (nobody freed it); freed exactly once, here.
    unsafe { deleter(raw) };
    assert_eq!(deleted.get(), 1);
}

#[test]
fn legacy_round_trip() {
    let (owner, data, counter) = counted_vec(vec![1i64, 2, 3, 4, 5, 6], None);
    // SAFETY: the owner keeps the Vec alive and nothing else touches it.
    let t = unsafe {
        ManagedTensor::build_from_owner(owner, data, i64::DTYPE, Device::CPU, &[2, 3]).finish()
    }
    .unwrap();

    let legacy = t.into_legacy().map_err(|e| e.into_error()).unwrap();
    assert_eq!(counter.get(), 0);
    // SAFETY: legacy is live and ours.
    assert_eq!(unsafe { (*legacy).dl_tensor.ndim }, 2);

    // Back, writable: the producer (us) allows writes.
    // SAFETY: legacy is handed over once.
    let mut back = unsafe { ManagedTensor::from_raw_legacy(legacy, true) }.unwrap();
    assert!(!back.is_read_only());
    assert_eq!(back.shape().unwrap(), &[2, 3]);
    back.view_mut::<i64>().unwrap().set(&[1, 2], 60).unwrap();
    assert_eq!(
        back.view::<i64>().unwrap().as_slice().unwrap(),
        &[1, 2, 3, 4, 5, 60]
    );
    assert_eq!(counter.get(), 0);
    drop(back);
    assert_eq!(
        counter.get(),
        1,
        "legacy bridge + versioned bridge release the owner once"
    );
}

#[test]
fn foreign_legacy_tensor_is_read_only_by_default() {
    let mut spec = Spec::new(DataType::I32.0, &[3]);
    spec.init = common::bytes_of(&[7i32, 8, 9]);
    let (raw, deleted) = common::legacy(&spec);
    // SAFETY: raw is handed over once.
    let mut t = unsafe { ManagedTensor::from_raw_legacy(raw, false) }.unwrap();
    assert!(t.is_read_only());
    assert_eq!(t.view::<i32>().unwrap().as_slice().unwrap(), &[7, 8, 9]);
    let err = t.view_mut::<i32>().unwrap_err();
    assert_eq!(err.status(), Status::READ_ONLY);
    // The refusal says why and what to do, not only that the flag is set.
    assert!(
        err.message()
            .contains("a legacy DLPack tensor cannot say whether it may be written")
            && err.message().contains("legacy_writable"),
        "{}",
        err.message()
    );
    assert_eq!(deleted.get(), 0);
    drop(t);
    assert_eq!(deleted.get(), 1);
}

#[test]
fn read_only_tensor_cannot_go_legacy_and_is_given_back() {
    let (raw, deleted) = {
        let mut spec = Spec::new(DataType::U8.0, &[2]);
        spec.flags = sys::DLPACK_FLAG_BITMASK_READ_ONLY;
        common::versioned(&spec)
    };
    // SAFETY: raw is handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let err = t.into_legacy().unwrap_err();
    assert_eq!(err.error().status(), Status::READ_ONLY);
    assert_eq!(deleted.get(), 0, "a refused conversion keeps the tensor");
    let t = err.into_tensor();
    assert_eq!(t.as_ptr(), raw);
    drop(t);
    assert_eq!(deleted.get(), 1);
}

#[test]
fn failed_export_drops_the_owner_once_and_exports_nothing() {
    let counter = Counter::new();
    let owner = DropCounter {
        counter: counter.clone(),
        thread: None,
    };
    let mut byte = 0u8;
    // SAFETY: the description is invalid (negative extent), so nothing is exported.
    let err = unsafe {
        ManagedTensor::build_from_owner(
            owner,
            (&mut byte as *mut u8).cast(),
            u8::DTYPE,
            Device::CPU,
            &[-1],
        )
        .finish()
    }
    .unwrap_err();
    assert_eq!(err.status(), Status::NEGATIVE_EXTENT);
    assert_eq!(err.message(), "shape[0] = -1 is negative");
    assert_eq!(counter.get(), 1);
}

/// An owner of `N` pattern bytes (plus its counter) aligned as `A`, which counts its drops
/// and checks that its bytes arrived intact.
#[repr(C)]
struct Sized<const N: usize, A: Copy> {
    pattern: [u8; N],
    _align: [A; 0],
    counter: Counter,
}

impl<const N: usize, A: Copy> Sized<N, A> {
    fn new(counter: &Counter) -> Self {
        let mut pattern = [0u8; N];
        for (i, b) in pattern.iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
        Sized {
            pattern,
            _align: [],
            counter: counter.clone(),
        }
    }
}

impl<const N: usize, A: Copy> Drop for Sized<N, A> {
    fn drop(&mut self) {
        assert!(self
            .pattern
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i * 7 + 3) as u8));
        self.counter.bump();
    }
}

/// Exports a byte through `owner` (which must be an owner the facade keeps inline, or one
/// boxed because it does not fit: both paths of the crate's export), reads it back, drops
/// the tensor and checks the owner was dropped exactly once, and only then; then the same
/// with a description the facade refuses, after which the owner has been dropped once too.
fn owner_dropped_once<O: Send + 'static>(make: impl Fn(&Counter) -> O) {
    let counter = Counter::new();
    let mut byte = 42u8;
    // SAFETY: the byte outlives the tensor (deleted below) and nothing writes it.
    let t = unsafe {
        ManagedTensor::build_from_owner(
            make(&counter),
            (&mut byte as *mut u8).cast(),
            u8::DTYPE,
            Device::CPU,
            &[1],
        )
        .flags(Flags::READ_ONLY)
        .finish()
    }
    .expect("valid description");
    assert_eq!(t.view::<u8>().unwrap().get(&[0]), Some(&42));
    assert_eq!(counter.get(), 0);
    let raw = t.into_raw();
    // SAFETY: raw comes from into_raw: deleted exactly once, here, through the facade.
    unsafe { sys::dlpm_managed_delete(raw) };
    assert_eq!(counter.get(), 1);

    let refused = Counter::new();
    // SAFETY: the description is invalid (negative extent), so nothing is exported.
    let err = unsafe {
        ManagedTensor::build_from_owner(
            make(&refused),
            (&mut byte as *mut u8).cast(),
            u8::DTYPE,
            Device::CPU,
            &[-1],
        )
        .finish()
    }
    .unwrap_err();
    assert_eq!(err.status(), Status::NEGATIVE_EXTENT);
    assert_eq!(refused.get(), 1);
}

// Owners of every size class the export distinguishes: kept in the tensor's allocation (up
// to DLPM_INLINE_OWNER_CAPACITY bytes aligned to at most DLPM_INLINE_OWNER_ALIGNMENT, a
// zero-sized one included), or boxed (too large, or aligned more strictly).
#[test]
fn owners_inline_or_boxed_are_dropped_exactly_once() {
    assert_eq!(sys::DLPM_INLINE_OWNER_CAPACITY, 32);
    assert_eq!(sys::DLPM_INLINE_OWNER_ALIGNMENT, 8);
    owner_dropped_once(Sized::<0, u8>::new); // 8 bytes: the counter alone
    owner_dropped_once(Sized::<24, u64>::new); // 32 bytes: inline, exactly full
    owner_dropped_once(Sized::<25, u64>::new); // 40 bytes: boxed
    owner_dropped_once(Sized::<8, u128>::new); // aligned to 16: boxed
    owner_dropped_once(Sized::<200, u8>::new);
    owner_dropped_once(|c| {
        let c = c.clone();
        DropCounter {
            counter: c,
            thread: None,
        }
    });
    // A zero-sized owner: nothing to copy, nothing to drop but its Drop.
    struct Unit;
    static UNITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    impl Drop for Unit {
        fn drop(&mut self) {
            UNITS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let mut byte = 1u8;
    // SAFETY: the byte outlives the tensor (dropped below) and nothing writes it.
    let t = unsafe {
        ManagedTensor::build_from_owner(
            Unit,
            (&mut byte as *mut u8).cast(),
            u8::DTYPE,
            Device::CPU,
            &[1],
        )
        .flags(Flags::READ_ONLY)
        .finish()
    }
    .unwrap();
    assert_eq!(UNITS.load(std::sync::atomic::Ordering::SeqCst), 0);
    drop(t);
    assert_eq!(UNITS.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn exported_tensor_carries_the_facade_version_and_flags() {
    let t = ManagedTensor::build_from_vec(vec![0u8; 4], &[4])
        .flags(Flags::IS_COPIED | Flags::READ_ONLY)
        .finish()
        .unwrap();
    let v = dlpack_mdspan::version();
    assert_eq!(
        t.version(),
        sys::DLPackVersion {
            major: v.dlpack_major,
            minor: v.dlpack_minor
        }
    );
    assert_eq!(t.flags(), Flags::IS_COPIED | Flags::READ_ONLY);
    assert!(t.is_copied() && t.is_read_only());
}

/// Run in a child process by `panicking_owner_aborts`: a panic in the owner's Drop cannot
/// unwind into the C++ deleter, so the process aborts.
#[test]
fn panicking_owner_child() {
    if std::env::var_os("DLPM_PANIC_CHILD").is_none() {
        return;
    }
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("owner drop panics");
        }
    }
    let mut byte = 0u8;
    // SAFETY: one valid byte, kept alive for the whole test.
    let t = unsafe {
        ManagedTensor::build_from_owner(
            Bomb,
            (&mut byte as *mut u8).cast(),
            u8::DTYPE,
            Device::CPU,
            &[1],
        )
        .finish()
    }
    .unwrap();
    drop(t);
    unreachable!("the process should have aborted");
}

#[test]
#[cfg(unix)]
fn panicking_owner_aborts() {
    use std::os::unix::process::ExitStatusExt;
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "panicking_owner_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DLPM_PANIC_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.signal(),
        Some(6),
        "expected SIGABRT; status {:?}, stderr:\n{stderr}",
        out.status
    );
    assert!(stderr.contains("owner drop panics"), "stderr:\n{stderr}");
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn handles_and_views_are_send_and_sync() {
    assert_send_sync::<ManagedTensor>();
    assert_send_sync::<dlpack_mdspan::TensorView<'static, f32>>();
    assert_send_sync::<dlpack_mdspan::TensorViewMut<'static, f32>>();
    assert_send_sync::<dlpack_mdspan::Error>();
    assert_send_sync::<dlpack_mdspan::IntoLegacyError>();
}

// copy_to_host: the facade's compact host copy is a new, exclusive tensor with its own
// deleter; the original (here a foreign, strided, READ_ONLY one) keeps its memory and is
// released once, by its own deleter.
#[test]
fn copy_to_host_makes_an_independent_exclusive_tensor() {
    let mut spec = Spec::new(DataType::I32.0, &[2, 3]);
    spec.strides = Some(vec![1, 2]); // column-major
    spec.flags = sys::DLPACK_FLAG_BITMASK_READ_ONLY;
    spec.init = [1i32, 4, 2, 5, 3, 6]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect();
    let (raw, deleted) = common::versioned(&spec);
    // SAFETY: raw is handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let mut copy = t.copy_to_host().unwrap();
    assert_eq!(copy.flags(), Flags::IS_COPIED);
    assert_eq!(copy.device(), Device::CPU);
    assert_eq!(copy.shape().unwrap(), &[2, 3]);
    assert_eq!(copy.strides().unwrap(), Some(&[3i64, 1][..]));
    assert!(copy.is_exclusive() && !t.is_exclusive());
    assert_eq!(
        copy.view::<i32>().unwrap().as_slice().unwrap(),
        &[1, 2, 3, 4, 5, 6]
    );
    assert_eq!(copy.dl_tensor().data as usize % 64, 0);
    copy.view_mut::<i32>().unwrap().as_mut_slice().unwrap()[0] = 7;
    assert_eq!(t.view::<i32>().unwrap().get(&[0, 0]), Some(&1));
    drop(copy);
    assert_eq!(deleted.get(), 0);
    drop(t);
    assert_eq!(deleted.get(), 1);
}

// Memory the CPU may not read is refused, and the tensor stays ours.
#[test]
fn copy_to_host_refuses_device_memory() {
    let (owner, data, dropped) = counted_vec(vec![0f32; 4], None);
    // SAFETY: the owner keeps the four floats alive; "device" memory that is really host
    // memory, which nothing reads here.
    let t = unsafe {
        ManagedTensor::build_from_owner(
            owner,
            data,
            DataType::F32,
            Device::new(DeviceType::CUDA, 0),
            &[4],
        )
        .finish()
    }
    .unwrap();
    let err = t.copy_to_host().unwrap_err();
    assert_eq!(err.status(), Status::DEVICE_MISMATCH);
    assert!(err.message().contains("kDLCUDA"), "{}", err.message());
    assert_eq!(dropped.get(), 0, "the tensor is still ours");
    drop(t);
    assert_eq!(dropped.get(), 1);
}

// The raw allocation and legacy-delete entry points: dlpm_managed_alloc_host's tensor is
// written (never read uninitialised), handed to a legacy consumer, and released there with
// dlpm_legacy_delete.
#[test]
fn raw_host_allocation_and_legacy_delete() {
    let shape = [2i64, 3];
    let mut out: *mut sys::DLManagedTensorVersioned = std::ptr::null_mut();
    // SAFETY: shape holds 2 entries; out is a valid out-parameter.
    let status =
        unsafe { sys::dlpm_managed_alloc_host(2, shape.as_ptr(), DataType::F32.0, 0, &mut out) };
    assert_eq!(status, sys::DLPM_OK);
    // SAFETY: out is a live tensor whose ownership we take, once.
    let mut t = unsafe { ManagedTensor::from_raw(out) }.unwrap();
    assert_eq!(t.strides().unwrap(), Some(&[3i64, 1][..]));
    assert_eq!(t.dl_tensor().data as usize % 64, 0);
    {
        let mut v = t.view_mut::<f32>().unwrap();
        for i in 0..2 {
            for j in 0..3 {
                v.set(&[i, j], (10 * i + j) as f32).unwrap();
            }
        }
        assert_eq!(v.as_slice().unwrap(), &[0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
    }
    let legacy = t.into_legacy().map_err(|e| e.into_error()).unwrap();
    // SAFETY: legacy is the live legacy tensor just made; released exactly once, here.
    unsafe { sys::dlpm_legacy_delete(legacy) };
    // SAFETY: NULL is a no-op.
    unsafe { sys::dlpm_legacy_delete(std::ptr::null_mut()) };
}

#[test]
fn a_legacy_import_leaves_as_the_legacy_tensor_it_was() {
    let (raw, deleted) = common::legacy(&Spec::new(DataType::U8.0, &[2]));
    // SAFETY: raw is handed over once.
    let mut t = unsafe { ManagedTensor::from_raw_legacy(raw, false) }.unwrap();
    assert!(t.is_read_only());
    assert_eq!(t.read_only_cause(), ReadOnlyCause::LegacyUnknown);
    assert_eq!(t.view_mut::<u8>().unwrap_err().status(), Status::READ_ONLY);
    let back = t.into_legacy().map_err(|e| e.into_error()).unwrap();
    assert_eq!(back, raw, "the producer's own tensor, unwrapped");
    assert_eq!(deleted.get(), 0);
    // SAFETY: back is live and ours, deleted once.
    unsafe { (*back).deleter.unwrap()(back) };
    assert_eq!(deleted.get(), 1);
}

#[test]
fn a_producer_forbidding_writes_is_refused_by_name() {
    let (raw, deleted) = common::versioned(&Spec::new(DataType::U8.0, &[2]));
    let mut forbidden: *mut sys::DLManagedTensorVersioned = std::ptr::null_mut();
    // SAFETY: raw is live and ours; on success it moves into `forbidden`.
    let status = unsafe {
        sys::dlpm_managed_forbid_writes(
            raw,
            sys::DLPM_READ_ONLY_PRODUCER_FORBIDS,
            c"the producer says so".as_ptr(),
            &mut forbidden,
        )
    };
    assert_eq!(status, sys::DLPM_OK);
    // SAFETY: forbidden is handed over once.
    let t = unsafe { ManagedTensor::from_raw(forbidden) }.unwrap();
    assert_eq!(t.read_only_cause(), ReadOnlyCause::ProducerForbids);
    let err = t.into_legacy().unwrap_err();
    assert_eq!(err.error().status(), Status::READ_ONLY);
    assert!(err
        .error()
        .message()
        .contains("READ_ONLY because the producer says so"));
    drop(err.into_tensor());
    assert_eq!(deleted.get(), 1);
}
