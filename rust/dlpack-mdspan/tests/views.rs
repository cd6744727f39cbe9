// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Views: dtype and device checks, READ_ONLY refusal, empty / 0-d / strided tensors, raw
//! DLTensors, exclusivity.

mod common;

use std::ptr;

use common::Spec;
use dlpack_mdspan::{
    sys, Complex32, Complex64, DataType, Device, DeviceType, Element, Flags, ManagedTensor, Order,
    Status, TensorView, TensorViewMut, TypeCode,
};

// ---- dtype ------------------------------------------------------------------------------

#[test]
fn dtype_mismatch_carries_the_facade_message() {
    let t = ManagedTensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    let err = t.view::<f32>().unwrap_err();
    assert_eq!(err.status(), Status::DTYPE_MISMATCH);
    assert_eq!(
        err.message(),
        "dtype int32 does not match the required float32"
    );
    assert_eq!(
        err.to_string(),
        "dtype mismatch: dtype int32 does not match the required float32"
    );
    let err = t.view::<u32>().unwrap_err();
    assert_eq!(
        err.message(),
        "dtype int32 does not match the required uint32"
    );
}

/// Makes a 2-element tensor of T and checks that exactly one Element type can view it.
fn only_own_type_views<T: Element + Default>() {
    let t = ManagedTensor::from_vec(vec![T::default(); 2], &[2]).unwrap();
    assert_eq!(t.dtype(), T::DTYPE);
    let accepted = [
        t.view::<u8>().is_ok(),
        t.view::<u16>().is_ok(),
        t.view::<u32>().is_ok(),
        t.view::<u64>().is_ok(),
        t.view::<i8>().is_ok(),
        t.view::<i16>().is_ok(),
        t.view::<i32>().is_ok(),
        t.view::<i64>().is_ok(),
        t.view::<f32>().is_ok(),
        t.view::<f64>().is_ok(),
        t.view::<bool>().is_ok(),
        t.view::<Complex32>().is_ok(),
        t.view::<Complex64>().is_ok(),
    ];
    assert_eq!(
        accepted.iter().filter(|&&ok| ok).count(),
        1,
        "{:?}: {accepted:?}",
        T::DTYPE
    );
    assert!(t.view::<T>().is_ok());
}

#[test]
fn every_element_type_matches_only_itself() {
    only_own_type_views::<u8>();
    only_own_type_views::<u16>();
    only_own_type_views::<u32>();
    only_own_type_views::<u64>();
    only_own_type_views::<i8>();
    only_own_type_views::<i16>();
    only_own_type_views::<i32>();
    only_own_type_views::<i64>();
    only_own_type_views::<f32>();
    only_own_type_views::<f64>();
    only_own_type_views::<bool>();
    only_own_type_views::<Complex32>();
    only_own_type_views::<Complex64>();
}

#[test]
fn dtype_table() {
    let table: [(DataType, u8, u8, u16); 13] = [
        (u8::DTYPE, 1, 8, 1),
        (u16::DTYPE, 1, 16, 1),
        (u32::DTYPE, 1, 32, 1),
        (u64::DTYPE, 1, 64, 1),
        (i8::DTYPE, 0, 8, 1),
        (i16::DTYPE, 0, 16, 1),
        (i32::DTYPE, 0, 32, 1),
        (i64::DTYPE, 0, 64, 1),
        (f32::DTYPE, 2, 32, 1),
        (f64::DTYPE, 2, 64, 1),
        (bool::DTYPE, 6, 8, 1),
        (Complex32::DTYPE, 5, 64, 1),
        (Complex64::DTYPE, 5, 128, 1),
    ];
    for (dtype, code, bits, lanes) in table {
        assert_eq!(
            (dtype.code().0, dtype.bits(), dtype.lanes()),
            (code, bits, lanes)
        );
    }
}

#[test]
fn lanes_are_compared_exactly() {
    // float32x2 is 8 bytes per element like f64 and Complex32, but neither matches.
    let spec = Spec::new(
        sys::DLDataType {
            code: sys::kDLFloat,
            bits: 32,
            lanes: 2,
        },
        &[2],
    );
    let (raw, _) = common::versioned(&spec);
    // SAFETY: raw is handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    for err in [
        t.view::<f32>().unwrap_err(),
        t.view::<f64>().unwrap_err(),
        t.view::<Complex32>().unwrap_err(),
    ] {
        assert_eq!(err.status(), Status::DTYPE_MISMATCH);
        assert!(
            err.message().starts_with("dtype float32x2 does not match"),
            "{}",
            err.message()
        );
    }
}

#[test]
fn invalid_dtype_is_reported() {
    let spec = Spec::new(
        sys::DLDataType {
            code: sys::kDLFloat,
            bits: 32,
            lanes: 0,
        },
        &[2],
    );
    let (raw, _) = common::versioned(&spec);
    // SAFETY: raw is handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let err = t.view::<f32>().unwrap_err();
    assert_eq!(err.status(), Status::INVALID_DTYPE);
    assert_eq!(t.validate().unwrap_err().status(), Status::INVALID_DTYPE);
}

/// A bool view of bytes a producer wrote, with `shape`, `strides` (elements) and
/// `byte_offset`: the view's element count and, for up to 64 elements, its elements.
fn bool_view_of(
    bytes: &[u8],
    shape: &[i64],
    strides: &[i64],
    byte_offset: u64,
) -> Result<(usize, Vec<bool>), dlpack_mdspan::Error> {
    let (mut shape, mut strides) = (shape.to_vec(), strides.to_vec());
    let t = sys::DLTensor {
        data: bytes.as_ptr().cast_mut().cast(),
        device: Device::CPU.0,
        ndim: shape.len() as i32,
        dtype: DataType::BOOL.0,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset,
    };
    // SAFETY: `bytes`, `shape` and `strides` outlive the view and are not written meanwhile.
    let v = unsafe { TensorView::<bool>::from_raw(&t) }?;
    let elements = if v.len() <= 64 {
        v.to_vec()
    } else {
        Vec::new()
    };
    Ok((v.len(), elements))
}

// A producer may lend bytes other than 0 and 1 as kDLBool (PyTorch's u8.view(torch.bool)):
// a bool view reads the bytes its elements reach once and refuses such a byte, so no &bool
// points at it; the bytes it does not reach are not read.
#[test]
fn a_bool_view_refuses_bytes_other_than_0_and_1() {
    let bytes = [1u8, 0, 1, 0, 1, 2];
    let e = bool_view_of(&bytes, &[2, 3], &[3, 1], 0).unwrap_err();
    assert_eq!(e.status(), Status::INVALID_ARGUMENT);
    assert_eq!(
        e.message(),
        "a bool element holds the byte 2 at byte offset 5 from data: kDLBool elements are 0 or 1"
    );
    // Reversed, transposed, broadcast: the same byte is found.
    assert!(bool_view_of(&bytes, &[6], &[-1], 5).is_err());
    assert!(bool_view_of(&bytes, &[3, 2], &[1, 3], 0).is_err());
    assert!(bool_view_of(&bytes, &[1 << 40, 6], &[0, 1], 0).is_err());
    // a[:, :2] reaches bytes 0, 1, 3 and 4 only; a broadcast of it reads them once.
    assert_eq!(
        bool_view_of(&bytes, &[2, 2], &[3, 1], 0).unwrap(),
        (4, vec![true, false, false, true])
    );
    assert_eq!(
        bool_view_of(&bytes, &[1 << 40, 2, 2], &[0, 3, 1], 0)
            .unwrap()
            .0,
        1 << 42
    );
    // A mutable view checks the same bytes.
    let mut raw = [1u8, 7];
    let (mut shape, mut strides) = ([2i64], [1i64]);
    let t = sys::DLTensor {
        data: raw.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: 1,
        dtype: DataType::BOOL.0,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    // SAFETY: `raw`, `shape` and `strides` outlive the view; nothing else touches them.
    let e = unsafe { TensorViewMut::<bool>::from_raw(&t) }.unwrap_err();
    assert!(
        e.message().contains("holds the byte 7 at byte offset 1"),
        "{e}"
    );
}

#[test]
fn bool_and_complex_round_trip() {
    let mut b = ManagedTensor::from_vec(vec![true, false, true], &[3]).unwrap();
    b.view_mut::<bool>().unwrap().set(&[1], true).unwrap();
    assert_eq!(
        b.view::<bool>().unwrap().as_slice().unwrap(),
        &[true, true, true]
    );

    let z = vec![Complex64::new(1.0, 2.0), Complex64::new(-3.0, 0.5)];
    let mut t = ManagedTensor::from_vec(z, &[2]).unwrap();
    assert_eq!(t.nbytes().unwrap(), 32);
    t.view_mut::<Complex64>().unwrap().get_mut(&[1]).unwrap().im = 9.0;
    assert_eq!(
        t.view::<Complex64>().unwrap().get(&[1]),
        Some(&Complex64::new(-3.0, 9.0))
    );
}

// ---- device, alignment ---------------------------------------------------------------------

#[test]
fn device_memory_is_refused_for_element_access() {
    let mut spec = Spec::new(DataType::F32.0, &[4]);
    spec.device = sys::DLDevice {
        device_type: sys::kDLCUDA,
        device_id: 0,
    };
    let (raw, deleted) = common::versioned(&spec);
    // SAFETY: raw is handed over once (its "device" memory is host memory in this test).
    let mut t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.device(), Device::new(DeviceType::CUDA, 0));
    assert_eq!(t.shape().unwrap(), &[4], "metadata stays readable");
    let err = t.view::<f32>().unwrap_err();
    assert_eq!(err.status(), Status::DEVICE_MISMATCH);
    assert!(err.message().contains("kDLCUDA"), "{}", err.message());
    assert_eq!(
        t.view_mut::<f32>().unwrap_err().status(),
        Status::DEVICE_MISMATCH
    );
    drop(t);
    assert_eq!(deleted.get(), 1);
}

#[test]
fn pinned_and_managed_host_memory_are_accepted() {
    for device_type in [
        sys::kDLCPU,
        sys::kDLCUDAHost,
        sys::kDLCUDAManaged,
        sys::kDLROCMHost,
    ] {
        let mut spec = Spec::new(DataType::U16.0, &[2]);
        spec.device = sys::DLDevice {
            device_type,
            device_id: 0,
        };
        spec.init = common::bytes_of(&[5u16, 6]);
        let (raw, _) = common::versioned(&spec);
        // SAFETY: raw is handed over once.
        let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
        assert_eq!(t.view::<u16>().unwrap().as_slice().unwrap(), &[5, 6]);
    }
}

#[test]
fn misaligned_data_is_refused() {
    let mut storage = [0u64; 4];
    let mut shape = [2i64];
    let t = sys::DLTensor {
        // 4-byte aligned but not 8-byte aligned, for f64.
        data: storage.as_mut_ptr().cast::<u8>().wrapping_add(4).cast(),
        device: Device::CPU.0,
        ndim: 1,
        dtype: DataType::F64.0,
        shape: shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: the data (3.5 u64s after the offset) covers the 2 elements described.
    let err = unsafe { TensorView::<f64>::from_raw(&t) }.unwrap_err();
    assert_eq!(err.status(), Status::MISALIGNED_DATA);
    // As u32 the same bytes are fine.
    let t32 = sys::DLTensor {
        dtype: DataType::U32.0,
        ..t
    };
    // SAFETY: as above.
    assert!(unsafe { TensorView::<u32>::from_raw(&t32) }.is_ok());
}

// ---- READ_ONLY -----------------------------------------------------------------------------

#[test]
fn read_only_refuses_mutable_views() {
    let mut t = ManagedTensor::build_from_vec(vec![1u8, 2, 3], &[3])
        .flags(Flags::READ_ONLY)
        .finish()
        .unwrap();
    let err = t.view_mut::<u8>().unwrap_err();
    assert_eq!(err.status(), Status::READ_ONLY);
    assert_eq!(
        err.message(),
        "the tensor is READ_ONLY but a writable tensor is required"
    );
    // Reading is fine, and the data is untouched.
    assert_eq!(t.view::<u8>().unwrap().as_slice().unwrap(), &[1, 2, 3]);
}

#[test]
fn read_only_flag_from_a_foreign_producer_is_honoured() {
    let mut spec = Spec::new(DataType::F64.0, &[2]);
    spec.flags = sys::DLPACK_FLAG_BITMASK_READ_ONLY | sys::DLPACK_FLAG_BITMASK_IS_COPIED;
    let (raw, _) = common::versioned(&spec);
    // SAFETY: raw is handed over once.
    let mut t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.view_mut::<f64>().unwrap_err().status(), Status::READ_ONLY);
    assert!(t.view::<f64>().is_ok());
}

// ---- empty and 0-d -------------------------------------------------------------------------

#[test]
fn empty_tensors() {
    for shape in [&[0i64][..], &[0, 3], &[3, 0], &[2, 0, 5]] {
        let mut t = ManagedTensor::from_vec(Vec::<f32>::new(), shape).unwrap();
        assert_eq!(t.numel().unwrap(), 0);
        {
            let v = t.view::<f32>().unwrap();
            assert!(v.is_empty());
            assert_eq!(v.len(), 0);
            assert_eq!(v.shape(), shape);
            let s = v.as_slice().unwrap();
            assert!(s.is_empty());
            assert_eq!(s.as_ptr(), ptr::NonNull::<f32>::dangling().as_ptr());
            assert_eq!(v.get(&vec![0; shape.len()]), None);
            assert!(v.to_vec().is_empty());
        }
        let mut m = t.view_mut::<f32>().unwrap();
        assert!(m.as_mut_slice().unwrap().is_empty());
        assert_eq!(
            m.set(&vec![0; shape.len()], 1.0).unwrap_err().status(),
            Status::INVALID_ARGUMENT
        );
    }
}

#[test]
fn empty_tensor_with_null_data_from_a_producer() {
    let mut spec = Spec::new(DataType::I16.0, &[0, 4]);
    spec.bytes = None; // data == NULL
    let (raw, _) = common::versioned(&spec);
    // SAFETY: raw is handed over once; no element is addressed.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert!(t.dl_tensor().data.is_null());
    let v = t.view::<i16>().unwrap();
    let s = v.as_slice().unwrap();
    assert!(s.is_empty());
    assert_eq!(
        s.as_ptr(),
        ptr::NonNull::<i16>::dangling().as_ptr(),
        "never a slice from NULL"
    );
    assert_eq!(v.strides(), &[4, 1], "NULL strides become row-major");
}

#[test]
fn empty_tensor_whose_row_major_strides_overflow() {
    // numel is 0, so the tensor is valid, but 2^40 * 2^40 does not fit i64: no stride
    // computation may overflow (in Rust or in the C++ core).
    let shape = [0i64, 1 << 40, 1 << 40];
    let t = ManagedTensor::from_vec(Vec::<u8>::new(), &shape).unwrap();
    let v = t.view::<u8>().unwrap();
    assert!(v.is_empty());
    assert_eq!(v.shape(), &shape);
    assert!(v.as_slice().unwrap().is_empty());
    assert_eq!(v.get(&[0, 0, 0]), None);
}

/// A view of NULL strides keeps no element count: it is `shape[0]` times the first resolved
/// stride (the product of the other extents, saturated by the facade where it overflows, 0
/// after a 0 extent). Every place of a 0 extent, an overflowing product, rank 0 and a rank
/// whose strides do not fit the view.
#[test]
fn views_of_null_strides_count_their_elements() {
    let big = 1i64 << 40;
    let cases: [(&[i64], usize); 10] = [
        (&[], 1),
        (&[5], 5),
        (&[2, 3, 4], 24),
        (&[0], 0),
        (&[0, 3], 0),
        (&[3, 0], 0),
        (&[2, 0, 5], 0),
        (&[0, big, big], 0),
        (&[2, 0, big, big], 0),
        (&[2, 1, 3, 1, 2, 1, 1, 2, 1, 0], 0),
    ];
    let mut data = [0u8; 24];
    for (shape, len) in cases {
        let mut shape = shape.to_vec();
        let t = sys::DLTensor {
            data: data.as_mut_ptr().cast(),
            device: Device::CPU.0,
            ndim: shape.len() as i32,
            dtype: DataType::U8.0,
            shape: shape.as_mut_ptr(),
            strides: ptr::null_mut(),
            byte_offset: 0,
        };
        // SAFETY: data and shape outlive the view and are not written while it lives.
        let v = unsafe { TensorView::<u8>::from_raw(&t) }.unwrap();
        assert_eq!((v.len(), v.is_empty()), (len, len == 0), "shape {shape:?}");
        assert_eq!(v.as_slice().unwrap().len(), len, "shape {shape:?}");
        assert_eq!(v.clone().len(), len, "shape {shape:?}");
    }
}

#[test]
fn null_data_with_elements_is_refused() {
    let mut spec = Spec::new(DataType::I16.0, &[2]);
    spec.bytes = None;
    let (raw, _) = common::versioned(&spec);
    // SAFETY: raw is handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let err = t.view::<i16>().unwrap_err();
    assert_eq!(err.status(), Status::NULL_DATA);
    assert_eq!(err.message(), "data is NULL but the tensor has 2 elements");
}

#[test]
fn zero_dimensional_tensors() {
    let mut t = ManagedTensor::from_vec(vec![42i64], &[]).unwrap();
    assert_eq!(t.ndim(), 0);
    assert_eq!(t.shape().unwrap(), &[] as &[i64]);
    assert_eq!(t.numel().unwrap(), 1);
    {
        let v = t.view::<i64>().unwrap();
        assert_eq!(v.shape(), &[] as &[i64]);
        assert_eq!(v.strides(), &[] as &[i64]);
        assert_eq!(v.len(), 1);
        assert_eq!(v.get(&[]), Some(&42));
        assert_eq!(v.get(&[0]), None);
        assert_eq!(v.as_slice().unwrap(), &[42]);
    }
    t.view_mut::<i64>().unwrap().set(&[], 43).unwrap();
    assert_eq!(t.view::<i64>().unwrap().to_vec(), vec![43]);
    // A scalar needs one element.
    assert!(ManagedTensor::from_vec(Vec::<i64>::new(), &[]).is_err());
}

#[test]
fn zero_dimensional_raw_tensor_with_null_shape() {
    let mut value = 2.5f32;
    let t = sys::DLTensor {
        data: (&mut value as *mut f32).cast(),
        device: Device::CPU.0,
        ndim: 0,
        dtype: DataType::F32.0,
        shape: ptr::null_mut(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: `value` outlives the view and is only accessed through it.
    let mut v = unsafe { TensorViewMut::<f32>::from_raw(&t) }.unwrap();
    assert!(v.shape().is_empty() && v.strides().is_empty());
    v.set(&[], 7.0).unwrap();
    assert_eq!(v.get(&[]), Some(&7.0));
    drop(v);
    assert_eq!(value, 7.0);
}

// ---- strided -------------------------------------------------------------------------------

/// The facade's byte offset of `index`, for cross-checking the views' indexing.
fn facade_offset(t: &sys::DLTensor, index: &[usize]) -> i64 {
    let index: Vec<i64> = index.iter().map(|&i| i as i64).collect();
    let mut out = 0i64;
    // SAFETY: t is a live, valid tensor; index has ndim entries.
    let status = unsafe { sys::dlpm_element_offset(t, index.as_ptr(), &mut out) };
    assert_eq!(status, sys::DLPM_OK);
    out
}

/// Checks every element of a rank-2 view against the facade's offsets and a reference.
fn check_rank2(t: &ManagedTensor, storage: &[i32], expected: &[&[i32]]) {
    let v = t.view::<i32>().unwrap();
    assert_eq!(
        v.shape(),
        &[expected.len() as i64, expected[0].len() as i64]
    );
    for (i, row) in expected.iter().enumerate() {
        for (j, &want) in row.iter().enumerate() {
            let got = *v.get(&[i, j]).unwrap();
            assert_eq!(got, want, "at [{i}, {j}]");
            let byte = facade_offset(t.dl_tensor(), &[i, j]);
            assert_eq!(
                storage[(byte / 4) as usize],
                want,
                "facade offset at [{i}, {j}]"
            );
            let addr = v.get(&[i, j]).unwrap() as *const i32 as usize;
            assert_eq!(
                addr as i64 - t.dl_tensor().data as i64,
                byte,
                "address at [{i}, {j}]"
            );
        }
    }
    let flat: Vec<i32> = expected.iter().flat_map(|r| r.iter().copied()).collect();
    assert_eq!(v.to_vec(), flat);
}

#[test]
fn transposed_tensor() {
    let storage = vec![1, 2, 3, 4, 5, 6];
    let t = ManagedTensor::build_from_vec(storage.clone(), &[3, 2])
        .strides(&[1, 3])
        .finish()
        .unwrap();
    check_rank2(&t, &storage, &[&[1, 4], &[2, 5], &[3, 6]]);
    assert!(t.is_contiguous(Order::F).unwrap());
    // Refused in the facade's words (a slice reads the view's own check, and asks the
    // facade only to word a refusal).
    let err = t.view::<i32>().unwrap().as_slice().unwrap_err();
    assert_eq!(err.status(), Status::NON_COMPACT_STRIDES);
    assert_eq!(err.message(), "the tensor is not C-contiguous");
    // Size-1 dimensions may carry any stride: still a slice.
    let t = ManagedTensor::build_from_vec(storage, &[1, 6])
        .strides(&[100, 1])
        .finish()
        .unwrap();
    assert_eq!(
        t.view::<i32>().unwrap().as_slice().unwrap(),
        &[1, 2, 3, 4, 5, 6]
    );
}

#[test]
fn reversed_rows_with_offset() {
    let storage = vec![1, 2, 3, 4, 5, 6];
    // Rows reversed: element [0, 0] is storage[3].
    let t = ManagedTensor::build_from_vec(storage.clone(), &[2, 3])
        .strides(&[-3, 1])
        .offset(3)
        .finish()
        .unwrap();
    assert_eq!(t.dl_tensor().byte_offset, 12);
    check_rank2(&t, &storage, &[&[4, 5, 6], &[1, 2, 3]]);
    assert!(!t.is_contiguous(Order::Any).unwrap());
}

#[test]
fn broadcast_rows() {
    let storage = vec![7, 8, 9];
    let mut t = ManagedTensor::build_from_vec(storage.clone(), &[4, 3])
        .strides(&[0, 1])
        .finish()
        .unwrap();
    check_rank2(
        &t,
        &storage,
        &[&[7, 8, 9], &[7, 8, 9], &[7, 8, 9], &[7, 8, 9]],
    );
    let mut v = t.view_mut::<i32>().unwrap();
    assert!(!v.is_exclusive(), "zero strides alias");
    assert_eq!(
        v.get_mut(&[0, 0]).unwrap_err().status(),
        Status::NOT_EXCLUSIVE
    );
    v.set(&[3, 1], 80).unwrap(); // raw-pointer write: every row sees it
    assert_eq!(v.get(&[0, 1]), Some(&80));
}

#[test]
fn every_other_element() {
    let storage: Vec<i32> = (0..12).collect();
    let t = ManagedTensor::build_from_vec(storage.clone(), &[2, 3])
        .strides(&[6, 2])
        .finish()
        .unwrap();
    check_rank2(&t, &storage, &[&[0, 2, 4], &[6, 8, 10]]);
}

#[test]
fn layouts_reaching_outside_the_vec_are_refused() {
    // Too short for the shape.
    let err = ManagedTensor::from_vec(vec![0i32; 5], &[2, 3]).unwrap_err();
    assert_eq!(err.status(), Status::INVALID_ARGUMENT);
    assert_eq!(
        err.message(),
        "the layout addresses elements 0 to 5 but the Vec holds 5 elements"
    );
    // Strides reaching past the end.
    let err = ManagedTensor::build_from_vec(vec![0i32; 6], &[2, 3])
        .strides(&[4, 1])
        .finish()
        .unwrap_err();
    assert_eq!(
        err.message(),
        "the layout addresses elements 0 to 6 but the Vec holds 6 elements"
    );
    // A negative stride without an offset reaches below the start.
    let err = ManagedTensor::build_from_vec(vec![0i32; 6], &[2, 3])
        .strides(&[-3, 1])
        .finish()
        .unwrap_err();
    assert_eq!(
        err.message(),
        "the layout addresses elements -3 to 2 but the Vec holds 6 elements"
    );
    // An offset past the end.
    assert!(ManagedTensor::build_from_vec(vec![0i32; 6], &[1])
        .offset(6)
        .finish()
        .is_err());
    assert!(ManagedTensor::build_from_vec(vec![0i32; 6], &[1])
        .offset(5)
        .finish()
        .is_ok());
    // Exactly fitting layouts, and an empty tensor addressing nothing, are accepted.
    assert!(ManagedTensor::build_from_vec(vec![0i32; 6], &[2, 3])
        .strides(&[3, 1])
        .finish()
        .is_ok());
    assert!(ManagedTensor::build_from_vec(vec![0i32; 0], &[0, 3])
        .strides(&[100, 1])
        .finish()
        .is_ok());
    // An empty tensor leaves with row-major strides, whatever it was given (docs/import.md).
    let empty = ManagedTensor::build_from_vec(vec![0i32; 0], &[0, 3])
        .strides(&[i64::MIN, i64::MAX])
        .finish()
        .unwrap();
    assert_eq!(empty.view::<i32>().unwrap().strides(), &[3, 1]);
    // Mismatched strides length.
    let err = ManagedTensor::build_from_vec(vec![0i32; 6], &[2, 3])
        .strides(&[1])
        .finish()
        .unwrap_err();
    assert_eq!(err.status(), Status::INVALID_ARGUMENT);
    // Structural errors come from the facade.
    let err = ManagedTensor::build_from_vec(vec![0i32; 6], &[6])
        .strides(&[i64::MIN])
        .finish()
        .unwrap_err();
    assert_eq!(err.status(), Status::STRIDE_OVERFLOW);
    let err = ManagedTensor::from_vec(vec![0i32; 1], &[1; 65]).unwrap_err();
    assert_eq!(err.status(), Status::INVALID_NDIM);
}

#[test]
fn index_errors() {
    let mut t = ManagedTensor::from_vec(vec![0u8; 6], &[2, 3]).unwrap();
    let mut v = t.view_mut::<u8>().unwrap();
    assert_eq!(v.get(&[1]), None);
    assert_eq!(v.get(&[2, 0]), None);
    assert_eq!(v.get(&[usize::MAX, 0]), None);
    let err = v.set(&[1], 0).unwrap_err();
    assert_eq!(err.status(), Status::NDIM_MISMATCH);
    let err = v.set(&[0, 3], 0).unwrap_err();
    assert_eq!(err.message(), "index[1] = 3 is outside [0, 3)");
}

// ---- raw DLTensor views --------------------------------------------------------------------

#[test]
fn raw_tensor_with_explicit_strides_and_byte_offset() {
    let mut storage: Vec<u16> = (0..20).collect();
    let mut shape = [2i64, 2];
    let mut strides = [5i64, 2];
    let t = sys::DLTensor {
        data: storage.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: 2,
        dtype: DataType::U16.0,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 6, // element 3
    };
    {
        // SAFETY: storage covers elements 3..=10 and is only accessed through the view.
        let mut v = unsafe { TensorViewMut::<u16>::from_raw(&t) }.unwrap();
        assert_eq!(v.to_vec(), vec![3, 5, 8, 10]);
        assert!(!v.is_exclusive());
        v.set(&[1, 1], 100).unwrap();
    }
    assert_eq!(storage[10], 100);
    // SAFETY: as above, read-only now.
    let v = unsafe { TensorView::<u16>::from_raw(&t) }.unwrap();
    assert_eq!(v.get(&[1, 1]), Some(&100));
}

#[test]
fn raw_tensor_validation_errors() {
    let mut storage = [0i32; 4];
    let mut shape = [2i64, -3];
    let t = sys::DLTensor {
        data: storage.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: 2,
        dtype: DataType::I32.0,
        shape: shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: the facade refuses the tensor before any element is read.
    let err = unsafe { TensorView::<i32>::from_raw(&t) }.unwrap_err();
    assert_eq!(err.status(), Status::NEGATIVE_EXTENT);
    assert_eq!(err.message(), "shape[1] = -3 is negative");

    let null_shape = sys::DLTensor {
        shape: ptr::null_mut(),
        ..t
    };
    // SAFETY: as above.
    let err = unsafe { TensorView::<i32>::from_raw(&null_shape) }.unwrap_err();
    assert_eq!(err.status(), Status::NULL_SHAPE);

    shape[1] = 2;
    let misaligned_offset = sys::DLTensor {
        byte_offset: 2,
        shape: shape.as_mut_ptr(),
        ..t
    };
    // SAFETY: as above.
    let err = unsafe { TensorView::<i32>::from_raw(&misaligned_offset) }.unwrap_err();
    assert_eq!(err.status(), Status::MISALIGNED_BYTE_OFFSET);
}

// ---- exclusivity ---------------------------------------------------------------------------

#[test]
fn exclusivity_rules() {
    // Made here: exclusive, &mut allowed.
    let mut t = ManagedTensor::from_vec(vec![1u32, 2, 3, 4], &[2, 2]).unwrap();
    assert!(t.is_exclusive());
    {
        let mut v = t.view_mut::<u32>().unwrap();
        assert!(v.is_exclusive());
        *v.get_mut(&[1, 1]).unwrap() = 40;
        v.as_mut_slice().unwrap()[0] = 10;
    }
    assert_eq!(
        t.view::<u32>().unwrap().as_slice().unwrap(),
        &[10, 2, 3, 40]
    );

    // F-contiguous, made here: exclusive, but no C-order slice.
    let mut f = ManagedTensor::build_from_vec(vec![1u32, 2, 3, 4], &[2, 2])
        .strides(&[1, 2])
        .finish()
        .unwrap();
    let mut v = f.view_mut::<u32>().unwrap();
    assert!(v.is_exclusive());
    *v.get_mut(&[0, 1]).unwrap() += 1;
    assert_eq!(
        v.as_mut_slice().unwrap_err().status(),
        Status::NON_COMPACT_STRIDES
    );
    assert_eq!(v.to_vec(), vec![1, 4, 2, 4]);

    // Gapped strides: conservatively not exclusive.
    let mut g = ManagedTensor::build_from_vec(vec![0u32; 8], &[2, 2])
        .strides(&[4, 2])
        .finish()
        .unwrap();
    assert!(!g.view_mut::<u32>().unwrap().is_exclusive());

    // Foreign without IS_COPIED: not exclusive until assumed.
    let (raw, _) = common::versioned(&Spec::new(DataType::U32.0, &[4]));
    // SAFETY: raw is handed over once.
    let mut foreign = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert!(!foreign.is_exclusive());
    {
        let mut v = foreign.view_mut::<u32>().unwrap();
        assert_eq!(v.get_mut(&[0]).unwrap_err().status(), Status::NOT_EXCLUSIVE);
        assert_eq!(
            v.as_mut_slice().unwrap_err().status(),
            Status::NOT_EXCLUSIVE
        );
        v.set(&[0], 5).unwrap();
        // SAFETY: the test's foreign buffer is reachable only through this view.
        unsafe { v.assume_exclusive() };
        *v.get_mut(&[1]).unwrap() = 6;
    }
    assert_eq!(
        foreign.view::<u32>().unwrap().as_slice().unwrap(),
        &[5, 6, 0, 0]
    );

    // Foreign with IS_COPIED: exclusive.
    let mut spec = Spec::new(DataType::U32.0, &[4]);
    spec.flags = sys::DLPACK_FLAG_BITMASK_IS_COPIED;
    let (raw, _) = common::versioned(&spec);
    // SAFETY: raw is handed over once.
    let mut copied = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert!(copied.is_exclusive());
    copied
        .view_mut::<u32>()
        .unwrap()
        .as_mut_slice()
        .unwrap()
        .fill(3);
    assert_eq!(copied.view::<u32>().unwrap().as_slice().unwrap(), &[3; 4]);
}

/// `build_from_owner` follows the flags like every other tensor: IS_COPIED (DLPack: the producer
/// made a private copy for this consumer) makes the tensor exclusive, its absence does not,
/// and the flag keeps that meaning after the tensor crossed a raw pointer.
#[test]
fn owner_export_exclusivity_follows_is_copied() {
    fn export(values: Vec<u32>, flags: Flags) -> ManagedTensor {
        let mut owner = values.into_boxed_slice();
        let data = owner.as_mut_ptr().cast();
        let shape = [owner.len() as i64];
        // SAFETY: the boxed slice keeps the elements alive and nothing but the tensor
        // reaches them (the test keeps no other pointer), so IS_COPIED is truthful.
        unsafe {
            ManagedTensor::build_from_owner(owner, data, u32::DTYPE, Device::CPU, &shape)
                .flags(flags)
                .finish()
        }
        .unwrap()
    }

    // Without IS_COPIED: the owner may share the memory, so no &mut.
    let mut shared = export(vec![1, 2, 3], Flags::empty());
    assert!(!shared.is_copied() && !shared.is_exclusive());
    {
        let mut v = shared.view_mut::<u32>().unwrap();
        assert!(!v.is_exclusive());
        assert_eq!(v.get_mut(&[0]).unwrap_err().status(), Status::NOT_EXCLUSIVE);
        assert_eq!(
            v.as_mut_slice().unwrap_err().status(),
            Status::NOT_EXCLUSIVE
        );
        v.set(&[0], 10).unwrap();
    }
    assert_eq!(shared.view::<u32>().unwrap().to_vec(), vec![10, 2, 3]);

    // With IS_COPIED: exclusive, &mut allowed.
    let mut copied = export(vec![1, 2, 3], Flags::IS_COPIED);
    assert!(copied.is_copied() && copied.is_exclusive());
    {
        let mut v = copied.view_mut::<u32>().unwrap();
        assert!(v.is_exclusive());
        *v.get_mut(&[1]).unwrap() = 20;
        v.as_mut_slice().unwrap()[2] = 30;
    }
    assert_eq!(
        copied.view::<u32>().unwrap().as_slice().unwrap(),
        &[1, 20, 30]
    );

    // The flag travels with the tensor: still exclusive after a raw round trip, unlike the
    // provenance of a from_vec export.
    // SAFETY: the pointer comes straight from into_raw and is handed back once.
    let mut back = unsafe { ManagedTensor::from_raw(copied.into_raw()) }.unwrap();
    assert!(back.is_exclusive());
    back.view_mut::<u32>()
        .unwrap()
        .as_mut_slice()
        .unwrap()
        .fill(7);
    assert_eq!(back.view::<u32>().unwrap().as_slice().unwrap(), &[7, 7, 7]);

    // IS_COPIED with READ_ONLY: exclusive, but no mutable view at all.
    let mut frozen = export(vec![1], Flags::IS_COPIED | Flags::READ_ONLY);
    assert!(frozen.is_exclusive());
    assert_eq!(
        frozen.view_mut::<u32>().unwrap_err().status(),
        Status::READ_ONLY
    );
}

// ---- types ---------------------------------------------------------------------------------

#[test]
fn unknown_enum_values_are_representable() {
    let mut spec = Spec::new(
        sys::DLDataType {
            code: 200,
            bits: 8,
            lanes: 1,
        },
        &[1],
    );
    spec.device = sys::DLDevice {
        device_type: 99,
        device_id: 3,
    };
    spec.flags = 1 << 40;
    let (raw, deleted) = common::versioned(&spec);
    // SAFETY: raw is handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.dtype().code(), TypeCode(200));
    assert_eq!(t.device().device_type(), DeviceType(99));
    assert_eq!(t.flags(), Flags(1 << 40));
    assert_eq!(t.validate().unwrap_err().status(), Status::INVALID_DTYPE);
    assert!(format!("{t:?}").contains("DeviceType(99)"));
    drop(t);
    assert_eq!(deleted.get(), 1);
}

#[test]
fn status_names_come_from_the_facade() {
    assert_eq!(Status::DTYPE_MISMATCH.name(), "dtype mismatch");
    assert_eq!(Status::INTERNAL.name(), "internal error");
    assert_eq!(Status(12345).name(), "unknown status");
    assert_eq!(Status::NOT_EXCLUSIVE.name(), "not exclusive");
    for code in 0..=33 {
        assert_ne!(Status(code).name(), "unknown status", "code {code}");
    }
}

// ---- uniqueness (dlpm_is_unique) --------------------------------------------------------

// Both views answer the facade's dlpm_is_unique: compact and reversed layouts reach each
// element once; a broadcast and overlapping strides do not; an empty view is unique.
#[test]
fn is_unique_is_the_facades_answer() {
    type Case<'a> = (&'a [i64], Option<&'a [i64]>, usize, bool);
    let cases: [Case; 5] = [
        (&[2, 3], None, 0, true),
        (&[3], Some(&[-1]), 2, true),
        (&[2, 3], Some(&[0, 1]), 0, false),
        (&[2, 3], Some(&[1, 1]), 0, false),
        (&[0, 3], Some(&[0, 0]), 0, true),
    ];
    for (shape, strides, offset, unique) in cases {
        let mut export = ManagedTensor::build_from_vec(vec![0u8; 6], shape).offset(offset);
        if let Some(strides) = strides {
            export = export.strides(strides);
        }
        let mut t = export.finish().unwrap();
        assert_eq!(
            t.view::<u8>().unwrap().is_unique().unwrap(),
            unique,
            "{shape:?} {strides:?}"
        );
        assert_eq!(
            t.view_mut::<u8>().unwrap().is_unique().unwrap(),
            unique,
            "{shape:?} {strides:?}"
        );
    }
}
