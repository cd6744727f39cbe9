// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Exports valid by construction (`from_vec`'s row-major shape inside the `Vec`, an
//! `ndarray::Array`'s own layout) are made in Rust without the facade's re-validation: the
//! tensor they make is the one the facade's export makes of the same description, field by
//! field, and accepted by the facade's own check. Everything else (a shape outside the
//! `Vec`, a negative or overflowing extent, an empty tensor, a rank above the inline one,
//! explicit strides, and every raw-parts export) still goes through the facade, which
//! refuses what is malformed.

use dlpack_mdspan::{sys, Device, Element, Error, Flags, ManagedTensor, Order, Status};

fn refusal(result: Result<ManagedTensor, Error>) -> (Status, String) {
    let err = result.expect_err("the export must be refused");
    (err.status(), err.message().to_owned())
}

/// Every field a consumer reads, of two tensors of the same elements: equal.
fn assert_same_tensor(ours: &ManagedTensor, facade: &ManagedTensor, what: &str) {
    assert_eq!(ours.version(), facade.version(), "{what}: version");
    assert_eq!(ours.flags(), facade.flags(), "{what}: flags");
    assert_eq!(ours.dtype(), facade.dtype(), "{what}: dtype");
    assert_eq!(ours.device(), facade.device(), "{what}: device");
    assert_eq!(
        ours.shape().unwrap(),
        facade.shape().unwrap(),
        "{what}: shape"
    );
    assert_eq!(
        ours.strides().unwrap(),
        facade.strides().unwrap(),
        "{what}: strides"
    );
    let (a, b) = (ours.dl_tensor(), facade.dl_tensor());
    assert_eq!(a.ndim, b.ndim, "{what}: ndim");
    assert_eq!(a.byte_offset, b.byte_offset, "{what}: byte_offset");
    assert_eq!(
        ours.is_exclusive(),
        facade.is_exclusive(),
        "{what}: exclusive"
    );
}

/// The facade's own check of a tensor (`dlpm_check_tensor`, the structure alone) accepts it.
fn assert_facade_accepts(t: &ManagedTensor, what: &str) {
    let mut out = std::mem::MaybeUninit::<sys::dlpm_checked_tensor>::zeroed();
    // SAFETY: out is a zeroed struct of the right type; its version is set before the call.
    unsafe { (*out.as_mut_ptr()).version = sys::DLPM_CHECKED_TENSOR_VERSION };
    // SAFETY: the tensor is live for the call; NULL requirements check the structure alone.
    let status = unsafe {
        sys::dlpm_check_tensor(
            t.dl_tensor(),
            t.flags().bits(),
            std::ptr::null(),
            0,
            out.as_mut_ptr(),
        )
    };
    assert_eq!(
        status,
        sys::DLPM_OK,
        "{what}: the facade refuses the export"
    );
}

#[test]
fn from_vec_makes_the_tensor_the_facades_export_makes() {
    let shapes: [&[i64]; 7] = [
        &[],
        &[1],
        &[6],
        &[2, 3],
        &[2, 1, 3],
        &[1, 1, 1, 1, 1, 1, 1, 6],
        &[2, 1, 3, 1, 1, 1, 1, 1],
    ];
    for shape in shapes {
        let count = shape.iter().product::<i64>() as usize;
        let values: Vec<i32> = (0..count as i32 + 2).collect(); // two spare elements
        let ours = ManagedTensor::from_vec(values.clone(), shape).unwrap();
        let reference = values.clone();
        let p = reference.as_ptr().cast_mut().cast();
        // IS_COPIED: exclusive, as a Vec export is.
        let export = ManagedTensor::build_from_owner(reference, p, i32::DTYPE, Device::CPU, shape)
            .order(Order::C)
            .flags(Flags::IS_COPIED);
        // SAFETY: the Vec owns the elements and nothing else reaches them.
        let facade = unsafe { export.finish() }.unwrap();
        let what = format!("shape {shape:?}");
        assert_eq!(facade.flags(), Flags::IS_COPIED);
        assert_eq!(ours.flags(), Flags::empty(), "{what}");
        assert_eq!(ours.version(), facade.version(), "{what}");
        assert_eq!(ours.shape().unwrap(), facade.shape().unwrap(), "{what}");
        assert_eq!(ours.strides().unwrap(), facade.strides().unwrap(), "{what}");
        assert_eq!(ours.dl_tensor().byte_offset, 0, "{what}");
        assert!(ours.is_exclusive(), "{what}");
        assert_facade_accepts(&ours, &what);
        assert_eq!(
            ours.view::<i32>().unwrap().to_vec(),
            &values[..count],
            "{what}"
        );
    }
    // The elements are the Vec's own, not a copy.
    let v = vec![1.5f64; 4];
    let data = v.as_ptr();
    let t = ManagedTensor::from_vec(v, &[2, 2]).unwrap();
    assert_eq!(t.dl_tensor().data.cast_const().cast::<f64>(), data);
    // Written through an exclusive view, read back through the tensor.
    let mut t = t;
    t.view_mut::<f64>().unwrap().as_mut_slice().unwrap()[3] = 7.0;
    assert_eq!(t.view::<f64>().unwrap().get(&[1, 1]), Some(&7.0));
}

#[test]
fn layouts_outside_the_vec_or_malformed_are_still_refused_by_the_facade() {
    // A shape needing more elements than the Vec holds.
    assert_eq!(
        refusal(ManagedTensor::from_vec(vec![0u8; 5], &[2, 3])),
        (
            Status::INVALID_ARGUMENT,
            "the layout addresses elements 0 to 5 but the Vec holds 5 elements".to_owned()
        )
    );
    // Rank 0 is one element, which an empty Vec does not hold.
    assert_eq!(
        refusal(ManagedTensor::from_vec(Vec::<f32>::new(), &[])),
        (
            Status::INVALID_ARGUMENT,
            "the layout addresses elements 0 to 0 but the Vec holds 0 elements".to_owned()
        )
    );
    // A negative extent, and extents whose product overflows: the facade's words.
    let (status, message) = refusal(ManagedTensor::from_vec(vec![0u8; 6], &[-1, 2]));
    assert_eq!(status, Status::NEGATIVE_EXTENT, "{message}");
    let (status, message) = refusal(ManagedTensor::from_vec(vec![0u8; 6], &[i64::MAX, 3]));
    assert_eq!(status, Status::SPAN_OVERFLOW, "{message}");
    // Above DLPack's rank.
    let (status, message) = refusal(ManagedTensor::from_vec(vec![0u8; 1], &[1; 65]));
    assert_eq!(status, Status::INVALID_NDIM, "{message}");
    // Raw parts: a malformed description of memory an owner keeps alive is refused.
    let owner = vec![0f32; 6];
    let p = owner.as_ptr().cast_mut().cast();
    let export = ManagedTensor::build_from_owner(owner, p, f32::DTYPE, Device::CPU, &[2, -3]);
    // SAFETY: refused before anything reads the memory (the owner is dropped).
    let (status, message) = refusal(unsafe { export.finish() });
    assert_eq!(status, Status::NEGATIVE_EXTENT, "{message}");
    let owner = vec![0f32; 6];
    let p = owner.as_ptr().cast_mut().cast();
    let export =
        ManagedTensor::build_from_owner(owner, p, f32::DTYPE, Device::CPU, &[2, 3]).byte_offset(2);
    // SAFETY: as above.
    let (status, message) = refusal(unsafe { export.finish() });
    assert_eq!(status, Status::MISALIGNED_BYTE_OFFSET, "{message}");
    // Explicit row-major strides take the checked path: outside the Vec, refused.
    let r = ManagedTensor::build_from_vec(vec![0u8; 5], &[2, 3])
        .strides(&[3, 1])
        .finish();
    assert_eq!(refusal(r).0, Status::INVALID_ARGUMENT);
}

#[test]
fn layouts_the_fast_path_leaves_to_the_facade_are_still_exported() {
    // Empty: the facade's strides (saturating where the shape has a zero).
    let t = ManagedTensor::from_vec(Vec::<u16>::new(), &[0, 3]).unwrap();
    assert_eq!(t.shape().unwrap(), &[0, 3]);
    assert!(t.view::<u16>().unwrap().to_vec().is_empty());
    // Rank 9, above the inline rank.
    let shape = [1i64, 2, 1, 1, 1, 1, 1, 1, 3];
    let t = ManagedTensor::from_vec((0..6).collect::<Vec<u8>>(), &shape).unwrap();
    assert_eq!(
        t.strides().unwrap(),
        Some(&[6i64, 3, 3, 3, 3, 3, 3, 3, 1][..])
    );
    assert_eq!(
        t.view::<u8>().unwrap().get(&[0, 1, 0, 0, 0, 0, 0, 0, 2]),
        Some(&5)
    );
    // Flags or an offset: the builder's checked path.
    let t = ManagedTensor::build_from_vec(vec![1u32, 2, 3], &[2])
        .offset(1)
        .flags(Flags::READ_ONLY)
        .finish()
        .unwrap();
    assert_eq!(t.flags(), Flags::READ_ONLY);
    assert_eq!(t.view::<u32>().unwrap().to_vec(), vec![2, 3]);
}

#[cfg(feature = "ndarray")]
#[test]
fn from_ndarray_makes_the_tensor_the_facades_export_makes() {
    use ndarray::{s, Array, ArrayD, Ix2, IxDyn};
    let base = Array::from_shape_vec((4, 6), (0..24).map(|i| i as f32).collect()).unwrap();
    let arrays: Vec<(&str, ArrayD<f32>)> = vec![
        ("row-major", base.clone().into_dyn()),
        ("transposed", base.clone().reversed_axes().into_dyn()),
        (
            "reversed and sliced",
            base.clone().slice_move(s![1..;-2, 1..5;3]).into_dyn(),
        ),
        (
            "rank 5 with unit extents",
            Array::from_shape_vec(IxDyn(&[2, 1, 3, 1, 4]), (0..24).map(|i| i as f32).collect())
                .unwrap(),
        ),
        ("rank 0", ArrayD::from_elem(IxDyn(&[]), 5.0)),
    ];
    for (what, a) in arrays {
        let shape: Vec<i64> = a.shape().iter().map(|&n| n as i64).collect();
        let strides: Vec<i64> = a.strides().iter().map(|&s| s as i64).collect();
        let expected = a.clone();
        let ours = ManagedTensor::from_ndarray(a.clone()).unwrap();
        let (vec, offset) = a.into_raw_vec_and_offset();
        let facade = ManagedTensor::build_from_vec(vec, &shape)
            .strides(&strides)
            .offset(offset.unwrap())
            .finish()
            .unwrap();
        assert_same_tensor(&ours, &facade, what);
        assert_facade_accepts(&ours, what);
        assert_eq!(
            ours.view::<f32>().unwrap().as_array::<IxDyn>().unwrap(),
            expected,
            "{what}"
        );
    }
    // Empty and rank 9: the facade's path, as before.
    let t = ManagedTensor::from_ndarray(Array::<f32, Ix2>::zeros((0, 3))).unwrap();
    assert_eq!(t.shape().unwrap(), &[0, 3]);
    let t = ManagedTensor::from_ndarray(ArrayD::<u8>::zeros(IxDyn(&[1, 2, 1, 1, 1, 1, 1, 1, 3])))
        .unwrap();
    assert_eq!(t.view::<u8>().unwrap().len(), 6);
}
