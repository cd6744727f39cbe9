// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! ndarray interoperation (feature `ndarray`): views keep values, strides (negative and
//! zero ones), the first element's address and the borrow; mutable ones need exclusivity;
//! owning exports move the array's elements and keep its layout.
#![cfg(feature = "ndarray")]

use dlpack_mdspan::{sys, DataType, Device, Element, Flags, ManagedTensor, Status, TensorView};
use ndarray::{array, s, Array, Ix0, Ix1, Ix2, Ix3, IxDyn};

/// The address of element [0, ..., 0] of a managed tensor.
fn origin(t: &ManagedTensor) -> *const u8 {
    let dl = t.dl_tensor();
    dl.data.cast::<u8>().wrapping_add(dl.byte_offset as usize)
}

#[test]
fn row_major_is_zero_copy_with_its_strides() {
    let t = ManagedTensor::from_vec((0..6).map(|x| x as f32).collect(), &[2, 3]).unwrap();
    let v = t.view::<f32>().unwrap();
    let a = v.as_array::<Ix2>().unwrap();
    assert_eq!(a, array![[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]);
    assert_eq!(a.strides(), &[3, 1]);
    assert_eq!(a.as_ptr().cast::<u8>(), origin(&t));
    let d = v.as_array::<IxDyn>().unwrap();
    assert_eq!(d.shape(), &[2, 3]);
    assert_eq!(d.strides(), &[3, 1]);
}

#[test]
fn negative_strides_keep_the_index_order() {
    // Rows reversed: element [0, 0] is the Vec's element 3.
    let t = ManagedTensor::build_from_vec((0..6).collect::<Vec<i64>>(), &[2, 3])
        .strides(&[-3, 1])
        .offset(3)
        .finish()
        .unwrap();
    let a = t
        .view::<i64>()
        .unwrap()
        .as_array::<Ix2>()
        .unwrap()
        .to_owned();
    assert_eq!(a, array![[3, 4, 5], [0, 1, 2]]);
    let v = t.view::<i64>().unwrap();
    let a = v.as_array::<Ix2>().unwrap();
    assert_eq!(a.strides(), &[-3, 1]);
    assert_eq!(a.as_ptr().cast::<u8>(), origin(&t));
    // Both axes reversed: [0, 0] is the last element.
    let t = ManagedTensor::build_from_vec((0..6).collect::<Vec<i64>>(), &[2, 3])
        .strides(&[-3, -1])
        .offset(5)
        .finish()
        .unwrap();
    let v = t.view::<i64>().unwrap();
    let a = v.as_array::<IxDyn>().unwrap();
    assert_eq!(a.strides(), &[-3, -1]);
    assert_eq!(a.as_ptr().cast::<u8>(), origin(&t));
    assert_eq!(
        a.into_dimensionality::<Ix2>().unwrap(),
        array![[5, 4, 3], [2, 1, 0]]
    );
}

#[test]
fn broadcast_strides_stay_zero() {
    // Four rows that are one row: stride 0.
    let t = ManagedTensor::build_from_vec(vec![1u8, 2, 3], &[4, 3])
        .strides(&[0, 1])
        .finish()
        .unwrap();
    let v = t.view::<u8>().unwrap();
    let a = v.as_array::<Ix2>().unwrap();
    assert_eq!(a.strides(), &[0, 1]);
    assert_eq!(a, array![[1, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3]]);
    assert_eq!(a.as_ptr().cast::<u8>(), origin(&t));
}

#[test]
fn column_major_and_offsets() {
    let t = ManagedTensor::build_from_vec(vec![1u16, 2, 3, 4, 5, 6], &[3, 2])
        .strides(&[1, 3])
        .finish()
        .unwrap();
    let v = t.view::<u16>().unwrap();
    let a = v.as_array::<Ix2>().unwrap();
    assert_eq!(a, array![[1, 4], [2, 5], [3, 6]]);
    assert_eq!(a.strides(), &[1, 3]);
    // Every other element from the second: offset 1, stride 2.
    let t = ManagedTensor::build_from_vec(vec![0u32, 10, 20, 30, 40, 50], &[3])
        .strides(&[2])
        .offset(1)
        .finish()
        .unwrap();
    let v = t.view::<u32>().unwrap();
    let a = v.as_array::<Ix1>().unwrap();
    assert_eq!(a, array![10, 30, 50]);
    assert_eq!(a.as_ptr().cast::<u8>(), origin(&t));
}

#[test]
fn null_strides_are_row_major_and_rank_zero_is_a_scalar() {
    let data = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
    let mut shape = [3i64, 2];
    let dl = sys::DLTensor {
        data: data.as_ptr().cast_mut().cast(),
        device: Device::CPU.0,
        ndim: 2,
        dtype: DataType::F64.0,
        shape: shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: data and shape outlive the view and are not written while it lives.
    let v = unsafe { TensorView::<f64>::from_raw(&dl) }.unwrap();
    let a = v.as_array::<Ix2>().unwrap();
    assert_eq!(a.strides(), &[2, 1]);
    assert_eq!(a, array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    let t = ManagedTensor::from_vec(vec![7i8], &[]).unwrap();
    assert_eq!(
        t.view::<i8>()
            .unwrap()
            .as_array::<Ix0>()
            .unwrap()
            .into_scalar(),
        &7
    );
}

#[test]
fn empty_tensors_give_empty_arrays() {
    let t = ManagedTensor::from_vec(Vec::<f32>::new(), &[0, 3]).unwrap();
    let v = t.view::<f32>().unwrap();
    let a = v.as_array::<Ix2>().unwrap();
    assert_eq!(a.shape(), &[0, 3]);
    assert_eq!(a.iter().count(), 0);
}

// An empty tensor may have NULL data (nothing is addressed): its array view gets a dangling,
// aligned pointer, never the NULL one (ndarray's views require a non-NULL pointer, which
// its debug builds assert), whichever dimension type; and a non-zero byte_offset on NULL
// data changes nothing. (Built from data + byte_offset as a non-empty view is, this test
// aborts.)
#[test]
fn empty_tensors_with_null_data_give_empty_arrays() {
    for (shape, strides, byte_offset) in [
        ([0i64, 3], [3i64, 1], 0u64),
        ([2, 0], [-1, 1], 0),
        ([0, 3], [3, 1], 64),
    ] {
        let (mut shape, mut strides) = (shape, strides);
        let t = sys::DLTensor {
            data: std::ptr::null_mut(),
            device: Device::CPU.0,
            ndim: 2,
            dtype: DataType::F32.0,
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset,
        };
        // SAFETY: shape and strides outlive the view and are not written; no element.
        let v = unsafe { TensorView::<f32>::from_raw(&t) }.unwrap();
        assert!(v.is_empty());
        let a = v.as_array::<Ix2>().unwrap();
        assert_eq!(a.shape(), &shape.map(|n| n as usize));
        assert!(!a.as_ptr().is_null());
        assert_eq!(a.iter().count(), 0);
        let d = v.as_array::<IxDyn>().unwrap();
        assert_eq!(d.shape(), &shape.map(|n| n as usize));
        assert!(!d.as_ptr().is_null());
    }
}

// ndarray's rule for any array: its extents other than 0 multiply to at most isize::MAX. A
// DLPack tensor with a 0 extent may have others of any size: its array view is refused (a
// debug build of ndarray asserted in from_shape_ptr, and a release build made an array that
// breaks ndarray's invariant), read-only and mutable alike; within the limit it is made.
#[test]
fn empty_tensors_past_ndarrays_size_limit_are_refused() {
    let huge = ManagedTensor::from_vec(Vec::<u8>::new(), &[0, 1 << 40, 1 << 40]).unwrap();
    let e = huge.view::<u8>().unwrap().as_array::<IxDyn>().unwrap_err();
    assert_eq!(e.status(), Status::SPAN_OVERFLOW);
    assert!(
        e.message().contains("multiply past isize::MAX"),
        "{}",
        e.message()
    );
    let mut huge = huge;
    let mut m = huge.view_mut::<u8>().unwrap();
    assert_eq!(
        m.as_array_mut::<Ix3>().unwrap_err().status(),
        Status::SPAN_OVERFLOW
    );
    let large = ManagedTensor::from_vec(Vec::<u8>::new(), &[0, 1 << 31, 1 << 31]).unwrap();
    let v = large.view::<u8>().unwrap();
    assert_eq!(v.as_array::<Ix3>().unwrap().shape(), &[0, 1 << 31, 1 << 31]);
}

// An extent-1 axis may have any stride (no index moves along it), i64::MIN too, whose
// magnitude no isize holds, where ndarray's strides are isize and its views' non-negative:
// that axis has stride 0 in the array view, and the values are the tensor's.
#[test]
fn an_extent_one_axis_of_stride_i64_min_has_stride_zero() {
    let t = ManagedTensor::build_from_vec(vec![1u8, 2], &[1, 2])
        .strides(&[i64::MIN, 1])
        .finish()
        .unwrap();
    let v = t.view::<u8>().unwrap();
    let a = v.as_array::<Ix2>().unwrap();
    assert_eq!(a, array![[1u8, 2]]);
    assert_eq!(a.strides(), &[0, 1]);
    let mut t = t;
    let mut m = t.view_mut::<u8>().unwrap();
    let mut b = m.as_array_mut::<IxDyn>().unwrap();
    b[[0, 1]] = 7;
    assert_eq!(b.strides(), &[0, 1]);
    drop(m);
    assert_eq!(t.view::<u8>().unwrap().to_vec(), vec![1, 7]);
}

#[test]
fn a_fixed_rank_of_another_rank_is_refused() {
    let t = ManagedTensor::from_vec(vec![0u8; 6], &[2, 3]).unwrap();
    let e = t.view::<u8>().unwrap().as_array::<Ix3>().unwrap_err();
    assert_eq!(e.status(), Status::NDIM_MISMATCH);
    assert!(
        e.message().contains("rank 2") && e.message().contains("3 dimensions"),
        "{e}"
    );
}

#[test]
fn mutable_views_write_through_and_need_exclusivity() {
    let mut t = ManagedTensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2]).unwrap();
    t.view_mut::<i32>().unwrap().as_array_mut::<Ix2>().unwrap()[[1, 0]] = 30;
    assert_eq!(t.view::<i32>().unwrap().as_slice().unwrap(), &[1, 2, 30, 4]);
    // Column-major exports are exclusive too.
    let mut f = ManagedTensor::build_from_vec(vec![1i32, 2, 3, 4], &[2, 2])
        .strides(&[1, 2])
        .finish()
        .unwrap();
    f.view_mut::<i32>()
        .unwrap()
        .as_array_mut::<IxDyn>()
        .unwrap()[[0, 1]] = 30;
    assert_eq!(f.view::<i32>().unwrap().to_vec(), vec![1, 30, 2, 4]);
    // A broadcast tensor reaches one element from several indices: no &mut.
    let mut b = ManagedTensor::build_from_vec(vec![1i32, 2], &[3, 2])
        .strides(&[0, 1])
        .finish()
        .unwrap();
    let e = b
        .view_mut::<i32>()
        .unwrap()
        .as_array_mut::<Ix2>()
        .unwrap_err();
    assert_eq!(e.status(), Status::NOT_EXCLUSIVE);
    // assume_exclusive vouches for access from outside alone: the layout still reaches one
    // element from two indices, so ndarray's view (a &mut per index) is still refused.
    {
        let mut v = b.view_mut::<i32>().unwrap();
        // SAFETY: the Vec behind `b` is reachable only through this view.
        unsafe { v.assume_exclusive() };
        let e = v.as_array_mut::<Ix2>().unwrap_err();
        assert_eq!(e.status(), Status::OVERLAPPING_STRIDES);
        assert!(e.message().contains("two &mut"), "{e}");
        *v.get_mut(&[2, 1]).unwrap() = 9; // one &mut at a time is fine
    }
    assert_eq!(b.view::<i32>().unwrap().to_vec(), vec![1, 9, 1, 9, 1, 9]);
    // Neither does a bare tensor, which may be shared with its producer.
    let mut data = [1i32, 2];
    let mut shape = [2i64];
    let dl = sys::DLTensor {
        data: data.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: 1,
        dtype: DataType::I32.0,
        shape: shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: data and shape outlive the view; nothing else touches them.
    let mut v = unsafe { dlpack_mdspan::TensorViewMut::<i32>::from_raw(&dl) }.unwrap();
    assert_eq!(
        v.as_array_mut::<Ix1>().unwrap_err().status(),
        Status::NOT_EXCLUSIVE
    );
    // A read-only tensor has no mutable view at all.
    let mut r = ManagedTensor::build_from_vec(vec![1i32], &[1])
        .flags(Flags::READ_ONLY)
        .finish()
        .unwrap();
    assert_eq!(r.view_mut::<i32>().unwrap_err().status(), Status::READ_ONLY);
}

#[test]
fn owning_exports_move_the_elements_and_keep_the_layout() {
    // C order, moved: the tensor's elements are the array's allocation.
    let a = array![[1.5f64, 2.5, 3.5], [4.5, 5.5, 6.5]];
    let (expected, p) = (a.clone(), a.as_ptr());
    let t = ManagedTensor::from_ndarray(a).unwrap();
    assert_eq!(origin(&t), p.cast());
    assert_eq!(t.shape().unwrap(), &[2, 3]);
    assert_eq!(t.strides().unwrap(), Some(&[3, 1][..]));
    assert_eq!(t.flags(), Flags::empty());
    assert!(t.is_exclusive());
    assert_eq!(
        t.view::<f64>().unwrap().as_array::<Ix2>().unwrap(),
        expected
    );
    // F order.
    let f = expected.reversed_axes();
    let (expected, p) = (f.clone(), f.as_ptr());
    let t = ManagedTensor::from_ndarray(f).unwrap();
    assert_eq!(origin(&t), p.cast());
    assert_eq!(t.strides().unwrap(), Some(&[1, 3][..]));
    assert_eq!(
        t.view::<f64>().unwrap().as_array::<Ix2>().unwrap(),
        expected
    );
    // Negative strides and an offset: rows reversed, every other column.
    let n = Array::from_shape_vec((3, 4), (0..12).collect::<Vec<i32>>())
        .unwrap()
        .slice_move(s![..;-1, ..;2]);
    let expected = n.clone();
    let p = n.as_ptr();
    let (strides, shape) = (n.strides().to_vec(), n.shape().to_vec());
    let t = ManagedTensor::from_ndarray(n).unwrap();
    assert_eq!(origin(&t), p.cast());
    assert_eq!(
        t.strides()
            .unwrap()
            .unwrap()
            .iter()
            .map(|&s| s as isize)
            .collect::<Vec<_>>(),
        strides
    );
    assert_eq!(
        t.shape()
            .unwrap()
            .iter()
            .map(|&s| s as usize)
            .collect::<Vec<_>>(),
        shape
    );
    assert_eq!(
        t.view::<i32>().unwrap().as_array::<Ix2>().unwrap(),
        expected
    );
    assert_eq!(t.view::<i32>().unwrap().to_vec(), vec![8, 10, 4, 6, 0, 2]);
    // Any dimension, and back as an owned array (a copy).
    let d = Array::from_shape_vec(IxDyn(&[2, 1, 2]), vec![1u8, 2, 3, 4]).unwrap();
    let t = ManagedTensor::from_ndarray(d.clone()).unwrap();
    assert_eq!(
        t.view::<u8>()
            .unwrap()
            .as_array::<IxDyn>()
            .unwrap()
            .to_owned(),
        d
    );
}

#[test]
fn shared_arrays_export_their_slices_transposes_and_reversals_read_only() {
    let shared = Array::from_shape_vec((3, 4), (0..12i64).collect())
        .unwrap()
        .into_shared();
    let base = shared.as_ptr();
    let cases = [
        (shared.clone().reversed_axes(), vec![1i64, 4], 0usize),
        (shared.clone().slice_move(s![1.., ..;2]), vec![4, 2], 4),
        (
            shared.clone().slice_move(s![..;-1, ..;-3]),
            vec![-4, -3],
            11,
        ),
        (
            shared
                .clone()
                .permuted_axes([1, 0])
                .slice_move(s![1..3, ..]),
            vec![1, 4],
            1,
        ),
    ];
    for (view, strides, first) in cases {
        let expected = view.to_owned();
        let t = ManagedTensor::from_arc_array(view).unwrap();
        assert_eq!(t.flags(), Flags::READ_ONLY);
        assert_eq!(t.strides().unwrap(), Some(&strides[..]));
        // zero copy: the tensor's first element is the shared buffer's element `first`
        assert_eq!(origin(&t), base.wrapping_add(first).cast());
        assert_eq!(
            t.view::<i64>().unwrap().as_array::<Ix2>().unwrap(),
            expected
        );
    }
}

#[test]
fn a_shared_array_lives_as_long_as_its_tensor_and_is_never_written() {
    let mut shared = array![[1.0f32, 2.0], [3.0, 4.0]].into_shared();
    let mut t = ManagedTensor::from_arc_array(shared.clone().reversed_axes()).unwrap();
    // a write through another handle copies first (copy-on-write): the tensor's elements stay
    shared[[0, 1]] = 20.0;
    drop(shared);
    assert_eq!(
        t.view::<f32>().unwrap().as_array::<Ix2>().unwrap(),
        array![[1.0f32, 3.0], [2.0, 4.0]]
    );
    // READ_ONLY: no mutable view
    assert_eq!(t.view_mut::<f32>().unwrap_err().status(), Status::READ_ONLY);
}

#[test]
fn a_broadcast_view_exports_through_the_owner_builder_as_docs_rust_md_shows() {
    let shared = Array::from_shape_vec((3, 4), (0..12).map(|x| x as f32).collect())
        .unwrap()
        .into_shared();
    let row = shared.slice(s![1, ..]);
    let wide = row.broadcast((5, 4)).unwrap();
    let strides: Vec<i64> = wide.strides().iter().map(|&s| s as i64).collect();
    let data = wide.as_ptr().cast_mut().cast();
    let export =
        ManagedTensor::build_from_owner(shared.clone(), data, f32::DTYPE, Device::CPU, &[5, 4])
            .strides(&strides)
            .flags(Flags::READ_ONLY);
    // SAFETY: `shared` (the owner) keeps the buffer alive and unwritten (copy on write);
    // data and strides address only row 1 of it; READ_ONLY forbids consumers to write.
    let t = unsafe { export.finish() }.unwrap();
    drop(shared);
    assert_eq!(t.strides().unwrap(), Some(&[0, 1][..]));
    let a = t
        .view::<f32>()
        .unwrap()
        .as_array::<Ix2>()
        .unwrap()
        .to_owned();
    assert_eq!(a, Array::from_shape_fn((5, 4), |(_, j)| (4 + j) as f32));
}
