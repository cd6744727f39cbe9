// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! A view allocates nothing: not for the tensor's own strides, and not for NULL strides,
//! which the facade resolves into the view (inline up to rank 8). Counted by this test
//! binary's global allocator, per thread, so tests running beside it do not count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr;

use dlpack_mdspan::{sys, DataType, Device, TensorView, TensorViewMut};

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; the count is a
// thread-local Cell with a const initialiser, which never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract for GlobalAlloc::alloc, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: p came from System.alloc with this layout (alloc above).
        unsafe { System.dealloc(p, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// A bare f32 tensor of `shape` over `data`, with `strides` (NULL when None).
fn tensor(data: &mut [f32], shape: &mut [i64], strides: Option<&mut [i64]>) -> sys::DLTensor {
    sys::DLTensor {
        data: data.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: shape.len() as i32,
        dtype: DataType::F32.0,
        shape: shape.as_mut_ptr(),
        strides: strides.map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: 0,
    }
}

/// The row-major strides of `shape`.
fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for r in (0..shape.len().saturating_sub(1)).rev() {
        strides[r] = strides[r + 1] * shape[r + 1];
    }
    strides
}

#[test]
fn views_of_null_strides_up_to_rank_8_allocate_nothing() {
    let mut data = vec![0.0f32; 512];
    for rank in 1..=8usize {
        let mut shape: Vec<i64> = (0..rank).map(|r| [4, 2, 2, 2, 2, 2, 2, 2][r]).collect();
        let expected = row_major(&shape);
        let t = tensor(&mut data, &mut shape, None);
        let n = allocations_in(|| {
            // SAFETY: data and shape outlive the view and are not written while it lives.
            let v = unsafe { TensorView::<f32>::from_raw(&t) }.expect("a valid tensor");
            assert_eq!(v.strides(), &expected[..], "rank {rank}");
            let copy = v.clone();
            assert_eq!(copy.strides(), &expected[..], "rank {rank}");
        });
        assert_eq!(n, 0, "rank {rank}: a view or its clone allocated");
        let n = allocations_in(|| {
            // SAFETY: as above; nothing else reads or writes data while the view lives.
            let v = unsafe { TensorViewMut::<f32>::from_raw(&t) }.expect("a valid tensor");
            assert_eq!(v.strides(), &expected[..]);
        });
        assert_eq!(n, 0, "rank {rank}: a mutable view allocated");
    }
}

#[test]
fn views_of_own_strides_allocate_nothing() {
    let mut data = vec![0.0f32; 24];
    let mut shape = [4i64, 6];
    let mut strides = [1i64, 4]; // column-major
    let t = tensor(&mut data, &mut shape, Some(&mut strides));
    let n = allocations_in(|| {
        // SAFETY: data, shape and strides outlive the view and are not written while it lives.
        let v = unsafe { TensorView::<f32>::from_raw(&t) }.expect("a valid tensor");
        assert_eq!(v.strides(), &[1, 4]);
        assert_eq!(v.get(&[1, 1]), Some(&0.0));
    });
    assert_eq!(n, 0);
}

#[test]
fn views_of_null_strides_above_rank_8_resolve_them_too() {
    // Rank 10: the strides no longer fit inline, and still read as row-major.
    let mut shape = [2i64, 1, 3, 1, 2, 1, 1, 2, 1, 2];
    let mut data = vec![0.0f32; 48];
    let expected = row_major(&shape);
    let t = tensor(&mut data, &mut shape, None);
    // SAFETY: data and shape outlive the view and are not written while it lives.
    let v = unsafe { TensorView::<f32>::from_raw(&t) }.expect("a valid tensor");
    assert_eq!(v.strides(), &expected[..]);
    assert_eq!(v.len(), 48);
    let copy = v.clone();
    assert_eq!(copy.strides(), &expected[..]);
}

// An ndarray export allocates once: the array's Vec moves into the tensor's one allocation
// (the DLManagedTensorVersioned with its shape, strides and the Vec inside, made in Rust for
// a layout valid by construction), and nothing else is allocated, in Rust or by the facade
// (which this allocator does not see: its allocation would leave the count at 0). Negative
// strides and an offset into the Vec included.
#[cfg(feature = "ndarray")]
#[test]
fn ndarray_exports_allocate_the_tensor_only() {
    use dlpack_mdspan::ManagedTensor;
    use ndarray::{s, Array, IxDyn};
    let a = Array::from_shape_vec((3, 4), (0..12).map(|i| i as f32).collect()).unwrap();
    let reversed = a.slice_move(s![..;-1, 1..]);
    let d = Array::<u8, _>::zeros(IxDyn(&[2, 1, 3, 1, 2]));
    let mut tensors = Vec::with_capacity(2);
    let n = allocations_in(|| {
        tensors.push(ManagedTensor::from_ndarray(reversed).unwrap());
        tensors.push(ManagedTensor::from_ndarray(d).unwrap());
    });
    assert_eq!(n, 2);
    assert_eq!(tensors[0].strides().unwrap(), Some(&[-4, 1][..]));
    assert_eq!(tensors[0].view::<f32>().unwrap().get(&[0, 0]), Some(&9.0));
}

// So does a Vec export of a row-major shape inside the Vec: one allocation, the tensor's.
#[test]
fn vec_exports_allocate_the_tensor_only() {
    use dlpack_mdspan::ManagedTensor;
    let (a, b) = (vec![0.0f32; 6], vec![0u64; 24]);
    let mut tensors = Vec::with_capacity(2);
    let n = allocations_in(|| {
        tensors.push(ManagedTensor::from_vec(a, &[2, 3]).unwrap());
        tensors.push(ManagedTensor::from_vec(b, &[2, 3, 4]).unwrap());
    });
    assert_eq!(n, 2);
    assert_eq!(tensors[1].strides().unwrap(), Some(&[12, 4, 1][..]));
}

/// A strided view's `to_vec` allocates its result and its index and nothing else: it does
/// not ask for the slice it cannot have (whose refusal would be worded, in a `String`, and
/// dropped).
#[test]
fn a_strided_to_vec_allocates_its_result_and_index_only() {
    let mut data: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let (mut shape, mut strides) = ([6i64, 4], [1i64, 6]);
    let t = tensor(&mut data, &mut shape, Some(&mut strides));
    // SAFETY: data, shape and strides outlive the view and are not written meanwhile.
    let v = unsafe { TensorView::<f32>::from_raw(&t) }.unwrap();
    let mut out = Vec::new();
    assert_eq!(allocations_in(|| out = v.to_vec()), 2);
    assert_eq!(out[..5], [0.0, 6.0, 12.0, 18.0, 1.0]);
}
