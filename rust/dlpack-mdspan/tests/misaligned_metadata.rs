// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Foreign tensors whose `shape` or `strides` pointer is not aligned for `i64`.
//!
//! Such a tensor is malformed, but it can arrive from any producer, and the safe API must
//! answer it with an error: a `&[i64]` built over a misaligned pointer is undefined
//! behaviour (and `slice::from_raw_parts` aborts on it in debug builds). The facade refuses
//! it with `DLPM_E_MISALIGNED_METADATA` (`dlpm_validate`, `dlpm_check*`, `dlpm_numel`, ...),
//! and the crate builds its slices only after that.

mod common;

use std::ffi::c_void;
use std::ptr;

use common::Counter;
use dlpack_mdspan::{
    sys, DataType, Device, ManagedTensor, Order, Status, TensorView, TensorViewMut,
};

const SHAPE: [i64; 2] = [2, 3];
const STRIDES: [i64; 2] = [3, 1];

/// Which array of the tensor is misaligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Misaligned {
    Shape,
    Strides,
}

/// Storage for `n` i64 values starting one byte into an 8-byte aligned buffer: the values
/// are written with `write_unaligned`, and the pointer handed out is `u8`-aligned only.
struct Unaligned {
    storage: Box<[u64]>,
}

impl Unaligned {
    fn new(values: &[i64]) -> Self {
        let mut storage = vec![0u64; values.len() + 1].into_boxed_slice();
        let base = storage.as_mut_ptr().cast::<u8>();
        for (i, &v) in values.iter().enumerate() {
            // SAFETY: 1 + 8 * (i + 1) <= 8 * (len + 1) bytes: inside the buffer.
            unsafe { base.add(1 + 8 * i).cast::<i64>().write_unaligned(v) };
        }
        Unaligned { storage }
    }

    fn ptr(&mut self) -> *mut i64 {
        // One byte in: never aligned for i64, since the buffer is.
        self.storage
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_add(1)
            .cast::<i64>()
    }
}

/// A producer's allocation: the struct first (so the deleter can cast back), then the
/// arrays it points to and the data.
#[repr(C)]
struct Block {
    managed: sys::DLManagedTensorVersioned,
    shape: Unaligned,
    strides: Unaligned,
    aligned_shape: Box<[i64]>,
    aligned_strides: Box<[i64]>,
    data: Box<[u64]>,
    deleted: Counter,
}

unsafe extern "C" fn delete_block(p: *mut sys::DLManagedTensorVersioned) {
    // SAFETY: p is the first field of a Box<Block> made by `foreign` (repr(C)), released
    // exactly once.
    let block = unsafe { Box::from_raw(p.cast::<Block>()) };
    block.deleted.bump();
}

/// A 2x3 u64 tensor, as a foreign producer would make it, with one array misaligned.
fn foreign(which: Misaligned) -> (*mut sys::DLManagedTensorVersioned, Counter) {
    let deleted = Counter::new();
    let mut block = Box::new(Block {
        managed: sys::DLManagedTensorVersioned {
            version: sys::DLPackVersion { major: 1, minor: 3 },
            manager_ctx: ptr::null_mut(),
            deleter: Some(delete_block),
            flags: 0,
            dl_tensor: sys::DLTensor {
                data: ptr::null_mut(),
                device: Device::CPU.0,
                ndim: SHAPE.len() as i32,
                dtype: DataType::U64.0,
                shape: ptr::null_mut(),
                strides: ptr::null_mut(),
                byte_offset: 0,
            },
        },
        shape: Unaligned::new(&SHAPE),
        strides: Unaligned::new(&STRIDES),
        aligned_shape: SHAPE.to_vec().into_boxed_slice(),
        aligned_strides: STRIDES.to_vec().into_boxed_slice(),
        data: (0..6u64).collect::<Vec<_>>().into_boxed_slice(),
        deleted: deleted.clone(),
    });
    let b = &mut *block;
    b.managed.dl_tensor.data = b.data.as_mut_ptr().cast::<c_void>();
    let (shape, strides) = match which {
        Misaligned::Shape => (b.shape.ptr(), b.aligned_strides.as_mut_ptr()),
        Misaligned::Strides => (b.aligned_shape.as_mut_ptr(), b.strides.ptr()),
    };
    b.managed.dl_tensor.shape = shape;
    b.managed.dl_tensor.strides = strides;
    (
        Box::into_raw(block).cast::<sys::DLManagedTensorVersioned>(),
        deleted,
    )
}

fn assert_misaligned<T: std::fmt::Debug>(what: &str, result: Result<T, dlpack_mdspan::Error>) {
    let err = result.expect_err(what);
    assert_eq!(err.status(), Status::MISALIGNED_METADATA, "{what}: {err}");
    assert!(
        !err.message().is_empty(),
        "{what}: the error has no message"
    );
}

/// Every accessor of the safe API refuses the tensor, and dropping it runs its deleter once.
fn safe_api_refuses(which: Misaligned) {
    let (raw, deleted) = foreign(which);
    // SAFETY: raw is a live tensor, handed over once. Its metadata is malformed (a
    // misaligned array), which the API must refuse without reading it as a slice.
    let mut t = unsafe { ManagedTensor::from_raw(raw) }.expect("the version is fine");

    assert_misaligned("validate", t.validate());
    assert_misaligned("shape", t.shape());
    assert_misaligned("strides", t.strides());
    assert_misaligned("numel", t.numel());
    assert_misaligned("nbytes", t.nbytes());
    assert_misaligned("is_contiguous", t.is_contiguous(Order::C));
    assert_misaligned("view", t.view::<u64>());
    assert_misaligned("view_mut", t.view_mut::<u64>());
    // The metadata the struct holds directly stays readable.
    assert_eq!(t.ndim(), 2);
    assert_eq!(t.dtype(), DataType::U64);
    let debug = format!("{t:?}");
    assert!(debug.contains("invalid"), "{debug}");

    assert_eq!(deleted.get(), 0);
    drop(t);
    assert_eq!(deleted.get(), 1);
}

#[test]
fn misaligned_shape_is_refused_by_the_safe_api() {
    safe_api_refuses(Misaligned::Shape);
}

#[test]
fn misaligned_strides_are_refused_by_the_safe_api() {
    safe_api_refuses(Misaligned::Strides);
}

/// The same through views of a bare `DLTensor`.
#[test]
fn raw_views_refuse_misaligned_metadata() {
    for which in [Misaligned::Shape, Misaligned::Strides] {
        let (raw, deleted) = foreign(which);
        {
            // SAFETY: raw is live until dlpm_managed_delete below; nothing else touches it.
            let t: &sys::DLTensor = unsafe { &(*raw).dl_tensor };
            // SAFETY: data and arrays outlive the views; the facade refuses the tensor.
            assert_misaligned("TensorView::from_raw", unsafe {
                TensorView::<u64>::from_raw(t)
            });
            // SAFETY: as above.
            assert_misaligned("TensorViewMut::from_raw", unsafe {
                TensorViewMut::<u64>::from_raw(t)
            });
        }
        // SAFETY: raw is ours and deleted exactly once.
        unsafe { sys::dlpm_managed_delete(raw) };
        assert_eq!(deleted.get(), 1, "{which:?}");
    }
}

/// The facade entry points that read shape or strides answer DLPM_E_MISALIGNED_METADATA.
#[test]
fn facade_reports_misaligned_metadata() {
    for which in [Misaligned::Shape, Misaligned::Strides] {
        let (raw, deleted) = foreign(which);
        let mut req = std::mem::MaybeUninit::<sys::dlpm_requirements>::uninit();
        // SAFETY: req is writable; on DLPM_OK it is fully initialised.
        let init = unsafe {
            sys::dlpm_requirements_init(req.as_mut_ptr(), sys::DLPM_REQUIREMENTS_VERSION)
        };
        assert_eq!(init, sys::DLPM_OK);
        // SAFETY: initialised by dlpm_requirements_init (DLPM_OK).
        let req = unsafe { req.assume_init() };
        // SAFETY: raw is live; every call below only reads it, and writes out-parameters.
        unsafe {
            let t = &(*raw).dl_tensor;
            let mut n = -7i64;
            let mut flag = -7i32;
            let index = [0i64, 0];
            let statuses = [
                ("dlpm_validate", sys::dlpm_validate(t)),
                ("dlpm_check", sys::dlpm_check(t, &req)),
                ("dlpm_check_managed", sys::dlpm_check_managed(raw, &req)),
                ("dlpm_numel", sys::dlpm_numel(t, &mut n)),
                ("dlpm_nbytes", sys::dlpm_nbytes(t, &mut n)),
                (
                    "dlpm_is_contiguous",
                    sys::dlpm_is_contiguous(t, b'A' as _, &mut flag),
                ),
                (
                    "dlpm_element_offset",
                    sys::dlpm_element_offset(t, index.as_ptr(), &mut n),
                ),
            ];
            for (function, status) in statuses {
                assert_eq!(
                    status,
                    sys::DLPM_E_MISALIGNED_METADATA,
                    "{function} on a tensor with misaligned {which:?}"
                );
            }
            // Out-parameters are written only on success.
            assert_eq!((n, flag), (-7, -7));
            sys::dlpm_managed_delete(raw);
        }
        assert_eq!(deleted.get(), 1);
    }
}

/// Aligned arrays in the same kind of block are accepted: the refusal above is about the
/// alignment only.
#[test]
fn the_same_tensor_with_aligned_arrays_is_accepted() {
    let (raw, deleted) = foreign(Misaligned::Shape);
    // SAFETY: raw is live and not yet shared; repoint its shape at the aligned copy, which
    // lives in the same block.
    unsafe {
        let block = &mut *raw.cast::<Block>();
        block.managed.dl_tensor.shape = block.aligned_shape.as_mut_ptr();
    }
    // SAFETY: raw is handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.shape().unwrap(), &SHAPE);
    assert_eq!(t.strides().unwrap(), Some(&STRIDES[..]));
    assert_eq!(t.view::<u64>().unwrap().to_vec(), vec![0, 1, 2, 3, 4, 5]);
    drop(t);
    assert_eq!(deleted.get(), 1);
}

// Rank 0 reads no entry of `shape` or `strides`, so the facade does not refuse misaligned
// (or any) pointers there; the view's slices of such a tensor are empty without being built
// over the pointers (a slice of length 0 over a misaligned pointer is still undefined
// behaviour, which debug builds abort on: so does this test when the view's slices test
// only for NULL).
#[test]
fn rank_zero_never_builds_a_slice_over_its_pointers() {
    let mut value = 7.0f32;
    let mut shape = Unaligned::new(&[]);
    let mut strides = Unaligned::new(&[]);
    for (shape, strides) in [
        (shape.ptr(), strides.ptr()),
        (shape.ptr(), ptr::null_mut()),
        (ptr::null_mut(), strides.ptr()),
    ] {
        let t = sys::DLTensor {
            data: ptr::addr_of_mut!(value).cast(),
            device: Device::CPU.0,
            ndim: 0,
            dtype: DataType::F32.0,
            shape,
            strides,
            byte_offset: 0,
        };
        // SAFETY: value outlives the view and is not written meanwhile; rank 0 reads
        // neither array.
        let v = unsafe { TensorView::<f32>::from_raw(&t) }.unwrap();
        assert_eq!((v.shape(), v.strides(), v.len()), (&[][..], &[][..], 1));
        assert_eq!(v.get(&[]), Some(&7.0));
    }
}
