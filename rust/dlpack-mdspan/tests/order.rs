// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! `OwnerExport::order`: the order of implicit strides ('C' or 'F'),
//! through the facade's `dlpm_managed_new_ordered`.

mod common;

use common::{counted_vec, Counter};
use dlpack_mdspan::{Device, Element, Error, ManagedTensor, Order, Status};

/// Exports `values` with `shape`, `strides` and `order`; the owner counts its drops.
fn ordered(
    values: Vec<f64>,
    shape: &[i64],
    strides: Option<&[i64]>,
    order: Order,
) -> (Result<ManagedTensor, Error>, Counter) {
    let (owner, data, counter) = counted_vec(values, None);
    let mut export =
        ManagedTensor::build_from_owner(owner, data, f64::DTYPE, Device::CPU, shape).order(order);
    if let Some(strides) = strides {
        export = export.strides(strides);
    }
    // SAFETY: `owner` keeps the Vec alive and nothing else touches it; every layout the
    // tests give addresses only elements inside it (or none: empty tensors).
    let t = unsafe { export.finish() };
    (t, counter)
}

fn strides_of(t: &ManagedTensor) -> Vec<i64> {
    t.strides()
        .unwrap()
        .expect("the tensor stores explicit strides")
        .to_vec()
}

#[test]
fn order_f_stores_explicit_column_major_strides() {
    let (t, counter) = ordered(vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0], &[2, 3], None, Order::F);
    let t = t.unwrap();
    assert_eq!(t.shape().unwrap(), &[2, 3]);
    assert_eq!(strides_of(&t), vec![1, 2]);
    assert!(t.is_contiguous(Order::F).unwrap());
    assert!(!t.is_contiguous(Order::C).unwrap());
    let v = t.view::<f64>().unwrap();
    assert_eq!(v.get(&[0, 2]), Some(&3.0));
    assert_eq!(v.get(&[1, 0]), Some(&4.0));
    assert_eq!(v.to_vec(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]); // row-major index order
    assert_eq!(counter.get(), 0);
    drop(t);
    assert_eq!(counter.get(), 1, "the owner is dropped exactly once");

    let (t, _) = ordered(vec![0.0; 24], &[2, 3, 4], None, Order::F);
    assert_eq!(strides_of(&t.unwrap()), vec![1, 2, 6]);
}

#[test]
fn order_c_stores_what_no_order_stores() {
    let (t, _) = ordered(vec![0.0; 24], &[2, 3, 4], None, Order::C);
    let t = t.unwrap();
    assert_eq!(strides_of(&t), vec![12, 4, 1]);
    let plain = ManagedTensor::from_vec(vec![0.0f64; 24], &[2, 3, 4]).unwrap();
    assert_eq!(strides_of(&t), strides_of(&plain));
}

#[test]
fn explicit_strides_must_be_the_order_given() {
    let (t, _) = ordered(vec![0.0; 6], &[2, 3], Some(&[1, 2]), Order::F);
    assert_eq!(strides_of(&t.unwrap()), vec![1, 2]);
    let (t, _) = ordered(vec![0.0; 6], &[2, 3], Some(&[3, 1]), Order::C);
    assert_eq!(strides_of(&t.unwrap()), vec![3, 1]);
    // an extent-1 dimension may carry any stride
    let (t, _) = ordered(vec![0.0; 3], &[1, 3], Some(&[99, 1]), Order::F);
    assert_eq!(strides_of(&t.unwrap()), vec![99, 1]);

    for (strides, order) in [([3i64, 1], Order::F), ([1, 2], Order::C)] {
        let (t, counter) = ordered(vec![0.0; 6], &[2, 3], Some(&strides), order);
        let err = t.expect_err("strides of the other layout are refused");
        assert_eq!(
            err.status(),
            Status::NON_COMPACT_STRIDES,
            "{}",
            err.message()
        );
        assert_eq!(counter.get(), 1, "the owner is dropped once, on failure");
    }
}

#[test]
fn order_any_is_refused_and_the_owner_dropped_once() {
    for strides in [None, Some(&[3i64, 1][..])] {
        let (t, counter) = ordered(vec![0.0; 6], &[2, 3], strides, Order::Any);
        let err = t.expect_err("Order::Any names no layout");
        assert_eq!(err.status(), Status::INVALID_ARGUMENT);
        assert!(
            err.message().contains("'C'") && err.message().contains("'F'"),
            "the message names the valid orders: {}",
            err.message()
        );
        assert_eq!(counter.get(), 1);
    }
}

#[test]
fn computed_strides_saturate_for_empty_tensors_and_overflow_is_refused() {
    let (p32, p40) = (1i64 << 32, 1i64 << 40);
    let (t, _) = ordered(Vec::new(), &[p40, p40, 0], None, Order::F);
    assert_eq!(strides_of(&t.unwrap()), vec![1, p40, i64::MAX]);
    let (t, _) = ordered(Vec::new(), &[0, p40, p40], None, Order::F);
    assert_eq!(strides_of(&t.unwrap()), vec![1, 0, 0]);

    let (c, c_counter) = ordered(vec![0.0], &[p32, p32], None, Order::C);
    let (f, f_counter) = ordered(vec![0.0], &[p32, p32], None, Order::F);
    let (c, f) = (c.unwrap_err(), f.unwrap_err());
    assert_ne!(f.status(), Status::OK);
    assert_eq!(f.status(), c.status(), "{} / {}", f.message(), c.message());
    assert_eq!((c_counter.get(), f_counter.get()), (1, 1));
}
