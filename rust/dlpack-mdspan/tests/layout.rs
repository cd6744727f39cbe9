// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! CuTe DSL's layout vocabulary from Rust, on the examples of CuTe's documentation (the C++
//! suite, tests/modules/dlpack_mdspan/layout_requirements.test.cpp, walks all of them; these
//! are the same cases through the facade).

use dlpack_mdspan::{LayoutRequirements, ManagedTensor, Status};

/// A float32 tensor over a zeroed buffer large enough for every example.
fn tensor(shape: &[i64], strides: &[i64]) -> ManagedTensor {
    ManagedTensor::build_from_vec(vec![0f32; 8 * 4 * 16 * 2], shape)
        .strides(strides)
        .finish()
        .unwrap()
}

// torch.empty(16,4,8,2).permute(2,1,0,3)
fn a() -> ManagedTensor {
    tensor(&[8, 4, 16, 2], &[2, 16, 64, 1])
}
// torch.empty(32,1,1,1,4).permute(3,4,1,0,2), with PyTorch's stride 1 for size-1 modes
fn b() -> ManagedTensor {
    tensor(&[1, 4, 1, 32, 1], &[1, 1, 1, 4, 1])
}

#[test]
fn leading_dim_is_deduced_as_cute_deduces_it() {
    assert_eq!(a().leading_dim().unwrap(), Some(3));
    assert_eq!(b().leading_dim().unwrap(), Some(1)); // several stride 1, one of extent > 1
    assert_eq!(tensor(&[2, 2], &[8, 2]).leading_dim().unwrap(), None); // no unit stride
    assert_eq!(
        tensor(&[3, 4, 2, 5], &[5, 0, 0, 1]).leading_dim().unwrap(),
        Some(3)
    );
    let ones = tensor(&[1, 1, 1], &[1, 1, 1]).leading_dim().unwrap_err();
    assert_eq!(ones.status(), Status::AMBIGUOUS_LAYOUT);
}

#[test]
fn stride_order_is_cutes_and_pytorchs_dim_order() {
    assert_eq!(a().stride_order().unwrap(), vec![2, 1, 0, 3]);
    assert_eq!(
        tensor(&[2, 2, 3, 4], &[2, 1, 4, 12])
            .stride_order()
            .unwrap(),
        vec![3, 2, 0, 1]
    );
    assert_eq!(tensor(&[4, 2], &[1, 4]).stride_order().unwrap(), vec![1, 0]);
    assert_eq!(
        tensor(&[3, 4, 2, 5], &[5, 0, 0, 1]).stride_order().unwrap(),
        vec![0, 3, 1, 2]
    );
    assert_eq!(
        b().stride_order().unwrap_err().status(),
        Status::AMBIGUOUS_LAYOUT
    );
}

#[test]
fn required_leading_dim_stride_order_and_compactness() {
    let t = a();
    let order = [2, 1, 0, 3];
    let ok = LayoutRequirements {
        leading_dim: Some(-1),
        stride_order: Some(&order),
        compact: true,
        ..Default::default()
    };
    t.check_layout(&ok).unwrap();
    let e = t
        .check_layout(&LayoutRequirements {
            leading_dim: Some(1),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.status(), Status::NON_COMPACT_STRIDES);
    assert_eq!(
        e.message(),
        "strides[1] = 16, but mode 1 is the required leading dimension (stride 1)"
    );
    let wrong = [0, 1, 2, 3];
    let e = t
        .check_layout(&LayoutRequirements {
            stride_order: Some(&wrong),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.status(), Status::NON_COMPACT_STRIDES);

    let t3 = [3, 0, 2, 4, 1];
    let t12 = [2, 1, 3, 0, 4];
    let t9 = [2, 1, 2, 3, 4];
    b().check_layout(&LayoutRequirements {
        stride_order: Some(&t3),
        compact: true,
        ..Default::default()
    })
    .unwrap();
    let e12 = b().check_layout(&LayoutRequirements {
        stride_order: Some(&t12),
        compact: true,
        ..Default::default()
    });
    assert_eq!(e12.unwrap_err().status(), Status::NON_COMPACT_STRIDES);
    let e9 = b()
        .check_layout(&LayoutRequirements {
            stride_order: Some(&t9),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e9.status(), Status::INVALID_ARGUMENT);
    assert_eq!(
        e9.message(),
        "layout requirement: stride_order must contain every mode, and 0 is missing"
    );
}

#[test]
fn divisibility_of_shapes_and_strides() {
    let shapes = [2, 1, 1, 1];
    let strides = [2, 4, 16, 1];
    let req = LayoutRequirements {
        shape_divisors: Some(&shapes),
        stride_divisors: Some(&strides),
        ..Default::default()
    };
    a().check_layout(&req).unwrap();
    let by_4 = [4, 1, 1, 1, 1];
    let e = b()
        .check_layout(&LayoutRequirements {
            shape_divisors: Some(&by_4),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.status(), Status::DIVISIBILITY);
    assert_eq!(e.message(), "shape[0] = 1 is not a multiple of 4");
}

#[test]
fn alignment_and_slices_of_the_wrong_length() {
    let e = a()
        .check_layout(&LayoutRequirements {
            min_alignment: 3,
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.status(), Status::INVALID_ARGUMENT);
    // A slice shorter than the rank is refused before the facade could read past its end.
    let short = [2, 1];
    let e = a()
        .check_layout(&LayoutRequirements {
            stride_order: Some(&short),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.status(), Status::INVALID_ARGUMENT);
    assert_eq!(
        e.message(),
        "layout requirement: stride_order has 2 entries, the tensor has 4 modes"
    );
}
