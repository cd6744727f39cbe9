// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Hand-built "foreign" tensors with counting deleters, as a C or Python producer would
//! make them, independent of this crate's export path.
#![allow(dead_code)]

use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dlpack_mdspan::sys;

/// The facade's message of the last failing call on this thread (`dlpm_last_error`), for
/// tests that call the `-sys` functions directly.
pub fn last_error() -> String {
    // SAFETY: a NUL-terminated string, never NULL, valid until the next failing call on this
    // thread; copied at once.
    unsafe { CStr::from_ptr(sys::dlpm_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Counts calls (deleters, drops).
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Increments its counter when dropped: an owner for `ManagedTensor::build_from_owner`.
pub struct DropCounter {
    pub counter: Counter,
    pub thread: Option<DropThread>,
}

impl Drop for DropCounter {
    fn drop(&mut self) {
        if let Some(t) = &self.thread {
            *t.lock().unwrap() = Some(std::thread::current().id());
        }
        self.counter.bump();
    }
}

/// Where a [`DropCounter`] records the thread it was dropped on.
pub type DropThread = Arc<std::sync::Mutex<Option<std::thread::ThreadId>>>;

/// An owner for `ManagedTensor::build_from_owner`: a `Vec<T>` plus a [`DropCounter`] (recording
/// the dropping thread in `thread`, if given), with the address of the Vec's first element
/// and the counter of the owner's drops. Moving the owner keeps the Vec's heap buffer where
/// it is, so the address stays valid while the owner lives.
pub fn counted_vec<T>(
    mut values: Vec<T>,
    thread: Option<DropThread>,
) -> ((Vec<T>, DropCounter), *mut c_void, Counter) {
    let counter = Counter::new();
    let data = values.as_mut_ptr().cast();
    let owner = (
        values,
        DropCounter {
            counter: counter.clone(),
            thread,
        },
    );
    (owner, data, counter)
}

/// What a foreign producer allocates: the struct, its shape and strides, and the data,
/// in one heap block freed by the deleter.
#[repr(C)]
struct Block<M> {
    managed: M,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    data: Vec<u64>, // u64 storage: 8-byte aligned
    deleted: Counter,
}

/// Description of a foreign tensor.
pub struct Spec {
    pub version: sys::DLPackVersion,
    pub flags: u64,
    pub dtype: sys::DLDataType,
    pub device: sys::DLDevice,
    pub shape: Vec<i64>,
    pub strides: Option<Vec<i64>>,
    pub byte_offset: u64,
    /// Bytes of data to allocate (zeroed), or None for a NULL data pointer.
    pub bytes: Option<usize>,
    /// Initial bytes copied to the start of the data.
    pub init: Vec<u8>,
}

impl Spec {
    pub fn new(dtype: sys::DLDataType, shape: &[i64]) -> Self {
        Spec {
            version: sys::DLPackVersion { major: 1, minor: 3 },
            flags: 0,
            dtype,
            device: sys::DLDevice {
                device_type: sys::kDLCPU,
                device_id: 0,
            },
            shape: shape.to_vec(),
            strides: None,
            byte_offset: 0,
            bytes: Some(256),
            init: Vec::new(),
        }
    }
}

unsafe extern "C" fn delete_versioned(p: *mut sys::DLManagedTensorVersioned) {
    // SAFETY: p is the first field of a Box<Block<_>> made by `versioned` (repr(C)).
    let block = unsafe { Box::from_raw(p.cast::<Block<sys::DLManagedTensorVersioned>>()) };
    block.deleted.bump();
}

unsafe extern "C" fn delete_legacy(p: *mut sys::DLManagedTensor) {
    // SAFETY: p is the first field of a Box<Block<_>> made by `legacy` (repr(C)).
    let block = unsafe { Box::from_raw(p.cast::<Block<sys::DLManagedTensor>>()) };
    block.deleted.bump();
}

fn fill(spec: &Spec) -> (Vec<i64>, Option<Vec<i64>>, Vec<u64>) {
    let mut data = vec![0u64; spec.bytes.unwrap_or(0).div_ceil(8)];
    assert!(spec.init.len() <= data.len() * 8);
    // SAFETY: data holds at least init.len() bytes (asserted above).
    unsafe {
        ptr::copy_nonoverlapping(
            spec.init.as_ptr(),
            data.as_mut_ptr().cast::<u8>(),
            spec.init.len(),
        )
    };
    (spec.shape.clone(), spec.strides.clone(), data)
}

fn dl_tensor(
    spec: &Spec,
    shape: &mut [i64],
    strides: Option<&mut Vec<i64>>,
    data: &mut [u64],
) -> sys::DLTensor {
    sys::DLTensor {
        data: if spec.bytes.is_some() {
            data.as_mut_ptr().cast::<c_void>()
        } else {
            ptr::null_mut()
        },
        device: spec.device,
        ndim: spec.shape.len() as i32,
        dtype: spec.dtype,
        shape: if shape.is_empty() {
            ptr::null_mut()
        } else {
            shape.as_mut_ptr()
        },
        strides: strides.map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: spec.byte_offset,
    }
}

/// A versioned tensor whose deleter frees it and bumps the returned counter.
pub fn versioned(spec: &Spec) -> (*mut sys::DLManagedTensorVersioned, Counter) {
    let deleted = Counter::new();
    let (shape, strides, data) = fill(spec);
    let mut block = Box::new(Block {
        managed: sys::DLManagedTensorVersioned {
            version: spec.version,
            manager_ctx: ptr::null_mut(),
            deleter: Some(delete_versioned),
            flags: spec.flags,
            dl_tensor: sys::DLTensor {
                data: ptr::null_mut(),
                device: spec.device,
                ndim: 0,
                dtype: spec.dtype,
                shape: ptr::null_mut(),
                strides: ptr::null_mut(),
                byte_offset: 0,
            },
        },
        shape,
        strides,
        data,
        deleted: deleted.clone(),
    });
    let b = &mut *block;
    b.managed.dl_tensor = dl_tensor(spec, &mut b.shape, b.strides.as_mut(), &mut b.data);
    (
        Box::into_raw(block).cast::<sys::DLManagedTensorVersioned>(),
        deleted,
    )
}

/// A legacy tensor whose deleter frees it and bumps the returned counter.
pub fn legacy(spec: &Spec) -> (*mut sys::DLManagedTensor, Counter) {
    let deleted = Counter::new();
    let (shape, strides, data) = fill(spec);
    let mut block = Box::new(Block {
        managed: sys::DLManagedTensor {
            dl_tensor: sys::DLTensor {
                data: ptr::null_mut(),
                device: spec.device,
                ndim: 0,
                dtype: spec.dtype,
                shape: ptr::null_mut(),
                strides: ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: ptr::null_mut(),
            deleter: Some(delete_legacy),
        },
        shape,
        strides,
        data,
        deleted: deleted.clone(),
    });
    let b = &mut *block;
    b.managed.dl_tensor = dl_tensor(spec, &mut b.shape, b.strides.as_mut(), &mut b.data);
    (Box::into_raw(block).cast::<sys::DLManagedTensor>(), deleted)
}

/// Bytes of a slice of plain values, for `Spec::init`.
pub fn bytes_of<T: Copy>(values: &[T]) -> Vec<u8> {
    // SAFETY: reading the initialised bytes of plain Copy values without padding (the
    // element types used in the tests have none).
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
    .to_vec()
}
