// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The export builders (`ManagedTensor::build_from_vec`, `ManagedTensor::build_from_owner`):
//! a misused option is refused by `finish` with the message of the one export path, the
//! owner dropped once; options do not depend on the order they are given in.

mod common;

use common::{counted_vec, DropCounter};
use dlpack_mdspan::{Device, Element, Error, Flags, ManagedTensor, Order, OwnerExport, Status};

/// An owner export of six doubles, shape [2, 3], whose owner counts its drops.
type Counted<'a> = OwnerExport<'a, (Vec<f64>, DropCounter)>;

fn refusal(result: Result<ManagedTensor, Error>) -> (Status, String) {
    let err = result.expect_err("the export must be refused");
    (err.status(), err.message().to_owned())
}

#[test]
fn vec_builder_misuse_is_refused_with_its_message() {
    // Strides of the wrong length.
    let r = ManagedTensor::build_from_vec(vec![0u8; 6], &[2, 3])
        .strides(&[1])
        .finish();
    assert_eq!(
        refusal(r),
        (
            Status::INVALID_ARGUMENT,
            "strides has 1 entries but shape has 2".to_owned()
        )
    );
    // An offset past the Vec: element [0] would be its 7th of 6.
    let r = ManagedTensor::build_from_vec(vec![0u8; 6], &[1])
        .offset(6)
        .finish();
    assert_eq!(
        refusal(r),
        (
            Status::INVALID_ARGUMENT,
            "the layout addresses elements 6 to 6 but the Vec holds 6 elements".to_owned()
        )
    );
    // An offset whose bytes overflow.
    let r = ManagedTensor::build_from_vec(vec![0u32; 1], &[1])
        .offset(usize::MAX)
        .finish();
    assert_eq!(
        refusal(r),
        (
            Status::BYTE_OFFSET_OVERFLOW,
            format!("offset = {} elements overflows", usize::MAX)
        )
    );
}

#[test]
fn owner_builder_misuse_is_refused_and_drops_the_owner_once() {
    let refused = |export: fn(Counted) -> Result<ManagedTensor, Error>| {
        let (owner, data, counter) = counted_vec(vec![0f64; 6], None);
        let start = ManagedTensor::build_from_owner(owner, data, f64::DTYPE, Device::CPU, &[2, 3]);
        let outcome = refusal(export(start));
        assert_eq!(counter.get(), 1, "the refused owner is dropped once");
        outcome
    };
    // SAFETY (each closure): the owner keeps the six doubles alive and nothing else
    // touches them; every description here is refused, so nothing is exported.
    assert_eq!(
        refused(|e| unsafe { e.strides(&[1]).finish() }),
        (
            Status::INVALID_ARGUMENT,
            "strides has 1 entries but shape has 2".to_owned()
        )
    );
    assert_eq!(
        refused(|e| unsafe { e.order(Order::Any).finish() }).0,
        Status::INVALID_ARGUMENT
    );
    assert_eq!(
        refused(|e| unsafe { e.strides(&[1, 2]).order(Order::C).finish() }).0,
        Status::NON_COMPACT_STRIDES
    );
}

#[test]
fn vec_builder_options_do_not_depend_on_their_order() {
    let a = ManagedTensor::build_from_vec(vec![1u16, 2, 3], &[3])
        .strides(&[-1])
        .offset(2)
        .flags(Flags::READ_ONLY)
        .finish()
        .unwrap();
    let b = ManagedTensor::build_from_vec(vec![1u16, 2, 3], &[3])
        .flags(Flags::READ_ONLY)
        .offset(2)
        .strides(&[-1])
        .finish()
        .unwrap();
    for t in [&a, &b] {
        assert_eq!(t.view::<u16>().unwrap().to_vec(), vec![3, 2, 1]);
        assert_eq!(t.flags(), Flags::READ_ONLY);
        assert_eq!(t.dl_tensor().byte_offset, 4);
    }
}

#[test]
fn owner_builder_byte_offset_moves_element_zero() {
    let (owner, data, counter) = counted_vec(vec![1f64, 2.0, 3.0], None);
    let export = ManagedTensor::build_from_owner(owner, data, f64::DTYPE, Device::CPU, &[2])
        .byte_offset(8)
        .flags(Flags::READ_ONLY);
    // SAFETY: the owner keeps the three doubles alive; elements [0] and [1] are its 2nd and
    // 3rd, and nothing writes them (READ_ONLY).
    let t = unsafe { export.finish() }.unwrap();
    assert_eq!(t.dl_tensor().byte_offset, 8);
    assert_eq!(t.view::<f64>().unwrap().to_vec(), vec![2.0, 3.0]);
    assert!(t.is_read_only());
    drop(t);
    assert_eq!(counter.get(), 1);
}
