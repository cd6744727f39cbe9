// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Element types: `F16` and `BF16` (conversions checked over every bit pattern against
//! references computed another way), and user-registered `Element` types (a 3-lane `Rgb`,
//! a size that does not match its dtype, sub-byte types).

mod common;

use std::collections::HashSet;
use std::ptr;

use common::Spec;
use dlpack_mdspan::{
    assert_element_layout, element_layout_ok, sys, Complex32, Complex64, DataType, Device, Element,
    Flags, ManagedTensor, Status, TensorView, TensorViewMut, TypeCode, BF16, F16,
};

// ---- F16: IEEE binary16 -----------------------------------------------------------------

/// The value of binary16 pattern `h`, decoded field by field in f64 (NaN: `None`).
fn f16_reference(h: u16) -> Option<f64> {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let man = f64::from(h & 0x3ff);
    match exp {
        0x1f if man == 0.0 => Some(sign * f64::INFINITY),
        0x1f => None,
        0 => Some(sign * man * 2f64.powi(-24)),
        _ => Some(sign * (1024.0 + man) * 2f64.powi(exp - 25)),
    }
}

#[test]
fn f16_to_f32_is_exact_for_every_pattern() {
    for h in 0..=u16::MAX {
        let got = F16::from_bits(h).to_f32();
        match f16_reference(h) {
            Some(v) => {
                // Every binary16 value is an f32, so the f64 reference converts exactly;
                // comparing bits also tells -0.0 from +0.0.
                assert_eq!(v as f32 as f64, v, "{h:#06x}");
                assert_eq!(got.to_bits(), (v as f32).to_bits(), "{h:#06x}");
                assert!(!F16::from_bits(h).is_nan());
            }
            None => {
                assert!(got.is_nan(), "{h:#06x}");
                assert!(F16::from_bits(h).is_nan());
                assert_eq!(got.is_sign_negative(), h & 0x8000 != 0, "{h:#06x}");
                // The payload, quiet bit included, moves to the top of the f32 mantissa.
                assert_eq!(
                    got.to_bits() & 0x7f_ffff,
                    u32::from(h & 0x3ff) << 13,
                    "{h:#06x}"
                );
            }
        }
        assert_eq!(f32::from(F16(h)).to_bits(), got.to_bits());
    }
}

#[test]
fn f16_round_trips_every_pattern() {
    for h in 0..=u16::MAX {
        let back = F16::from_f32(F16::from_bits(h).to_f32()).to_bits();
        if F16(h).is_nan() {
            assert_eq!(back, h | 0x0200, "{h:#06x}: NaNs come back quiet");
        } else {
            assert_eq!(back, h, "{h:#06x}");
        }
    }
}

/// The value `f16_reference` gives, with +∞ standing for 2^16 (the next binade's first value,
/// which is what rounding compares against above MAX).
fn f16_lattice(h: u16) -> f64 {
    if h == 0x7c00 {
        65536.0
    } else {
        f16_reference(h).unwrap()
    }
}

/// The f32 just above and just below a positive f32.
fn neighbours(x: f32) -> (f32, f32) {
    assert!(x > 0.0 && x.is_finite());
    (
        f32::from_bits(x.to_bits() + 1),
        f32::from_bits(x.to_bits() - 1),
    )
}

// Every rounding decision of from_f32 lies at a midpoint between two consecutive binary16
// values: check each midpoint (ties to even) and the f32 on either side of it, for both
// signs, from the smallest subnormal up to the overflow threshold (65520 -> inf).
#[test]
fn f16_from_f32_rounds_to_nearest_even_at_every_midpoint() {
    for a in 0..0x7c00u16 {
        let b = a + 1;
        let mid = (f16_lattice(a) + f16_lattice(b)) / 2.0;
        let mid32 = mid as f32;
        assert_eq!(f64::from(mid32), mid, "the midpoint of {a:#06x} is an f32");
        let even = if a & 1 == 0 { a } else { b };
        let (above, below) = neighbours(mid32);
        for (x, want) in [(mid32, even), (above, b), (below, a)] {
            assert_eq!(
                F16::from_f32(x).to_bits(),
                want,
                "{x:e} ({a:#06x}..{b:#06x})"
            );
            assert_eq!(F16::from_f32(-x).to_bits(), want | 0x8000, "-{x:e}");
        }
    }
}

/// The binary16 nearest to `x` (ties to even), by a binary search over the sorted values.
fn f16_nearest(x: f32) -> u16 {
    let v = f64::from(x).abs();
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    // The last pattern in 0..=0x7c00 whose lattice value is <= v.
    let (mut lo, mut hi) = (0u16, 0x7c00u16);
    if v >= f16_lattice(hi) {
        return sign | 0x7c00;
    }
    while hi - lo > 1 {
        let m = lo + (hi - lo) / 2;
        if f16_lattice(m) <= v {
            lo = m;
        } else {
            hi = m;
        }
    }
    let (dl, dh) = (v - f16_lattice(lo), f16_lattice(hi) - v);
    let pick = if dl < dh || (dl == dh && lo & 1 == 0) {
        lo
    } else {
        hi
    };
    sign | pick
}

// An independent reference (a search for the nearest value) over f32 inputs spread across
// the whole bit space: every exponent, both signs, subnormals, infinities.
#[test]
fn f16_from_f32_matches_a_nearest_value_search() {
    let mut bits = 0u32;
    loop {
        let x = f32::from_bits(bits);
        if !x.is_nan() {
            assert_eq!(
                F16::from_f32(x).to_bits(),
                f16_nearest(x),
                "{x:e} ({bits:#010x})"
            );
        }
        match bits.checked_add(4093) {
            Some(b) => bits = b,
            None => break,
        }
    }
    for x in [
        0.0f32,
        -0.0,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::MAX,
        f32::INFINITY,
    ] {
        assert_eq!(F16::from_f32(x).to_bits(), f16_nearest(x), "{x:e}");
        assert_eq!(F16::from_f32(-x).to_bits(), f16_nearest(-x), "-{x:e}");
    }
}

#[test]
fn f16_nan_handling() {
    // A NaN stays a NaN of the same sign; the quiet bit is set; the payload's top 9 bits
    // are kept, so a payload only in the low bits never turns into infinity.
    let cases: [(u32, u16); 6] = [
        (f32::NAN.to_bits(), 0x7e00),
        ((-f32::NAN).to_bits(), 0xfe00),
        (0x7f80_0001, 0x7e00), // signaling, payload below the kept bits
        (0x7fa0_0000, 0x7f00), // signaling, payload in the kept bits
        (0xffff_ffff, 0xffff),
        (0x7fc0_2000, 0x7e01),
    ];
    for (x, want) in cases {
        let h = F16::from_f32(f32::from_bits(x));
        assert!(h.is_nan());
        assert_eq!(h.to_bits(), want, "{x:#010x}");
    }
    assert_eq!(F16::from_f32(f32::NAN), F16::NAN);
}

#[test]
fn f16_constants() {
    assert_eq!(F16::ZERO.to_f32().to_bits(), 0);
    assert_eq!(F16::ONE.to_f32(), 1.0);
    assert_eq!(F16::MAX.to_f32(), 65504.0);
    assert_eq!(F16::MIN_POSITIVE.to_f32(), 2f32.powi(-14));
    assert_eq!(F16::INFINITY.to_f32(), f32::INFINITY);
    assert_eq!(F16::NEG_INFINITY.to_f32(), f32::NEG_INFINITY);
    assert!(F16::NAN.is_nan() && F16::NAN.to_f32().is_nan());
    assert_eq!(F16::default(), F16::ZERO);
    assert_eq!(F16::from_f32(65519.99), F16::MAX);
    assert_eq!(F16::from_f32(65520.0), F16::INFINITY); // the tie rounds to even: infinity
    assert_eq!(F16::from_f32(2f32.powi(-24)).to_bits(), 1); // smallest subnormal
    assert_eq!(F16::from_f32(2f32.powi(-25)).to_bits(), 0); // half of it: tie to even, 0
}

// ---- BF16 -------------------------------------------------------------------------------

/// The value of bfloat16 pattern `b`, decoded field by field in f64 (NaN: `None`).
fn bf16_reference(b: u16) -> Option<f64> {
    let sign = if b & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((b >> 7) & 0xff);
    let man = f64::from(b & 0x7f);
    match exp {
        0xff if man == 0.0 => Some(sign * f64::INFINITY),
        0xff => None,
        0 => Some(sign * man * 2f64.powi(-133)),
        _ => Some(sign * (128.0 + man) * 2f64.powi(exp - 134)),
    }
}

fn bf16_lattice(b: u16) -> f64 {
    if b == 0x7f80 {
        2f64.powi(128)
    } else {
        bf16_reference(b).unwrap()
    }
}

#[test]
fn bf16_to_f32_is_exact_for_every_pattern() {
    for b in 0..=u16::MAX {
        let got = BF16::from_bits(b).to_f32();
        match bf16_reference(b) {
            Some(v) => {
                assert_eq!(v as f32 as f64, v, "{b:#06x}");
                assert_eq!(got.to_bits(), (v as f32).to_bits(), "{b:#06x}");
                assert!(!BF16(b).is_nan());
            }
            None => {
                assert!(got.is_nan() && BF16(b).is_nan(), "{b:#06x}");
                assert_eq!(got.is_sign_negative(), b & 0x8000 != 0);
                assert_eq!(got.to_bits() & 0x7f_ffff, u32::from(b & 0x7f) << 16);
            }
        }
        assert_eq!(f32::from(BF16(b)).to_bits(), got.to_bits());
    }
}

#[test]
fn bf16_round_trips_every_pattern() {
    for b in 0..=u16::MAX {
        let back = BF16::from_f32(BF16::from_bits(b).to_f32()).to_bits();
        if BF16(b).is_nan() {
            assert_eq!(back, b | 0x0040, "{b:#06x}: NaNs come back quiet");
        } else {
            assert_eq!(back, b, "{b:#06x}");
        }
    }
}

#[test]
fn bf16_from_f32_rounds_to_nearest_even_at_every_midpoint() {
    for a in 0..0x7f80u16 {
        let b = a + 1;
        let mid = (bf16_lattice(a) + bf16_lattice(b)) / 2.0;
        let mid32 = mid as f32;
        assert_eq!(f64::from(mid32), mid, "the midpoint of {a:#06x} is an f32");
        let even = if a & 1 == 0 { a } else { b };
        let (above, below) = neighbours(mid32);
        for (x, want) in [(mid32, even), (above, b), (below, a)] {
            assert_eq!(
                BF16::from_f32(x).to_bits(),
                want,
                "{x:e} ({a:#06x}..{b:#06x})"
            );
            assert_eq!(BF16::from_f32(-x).to_bits(), want | 0x8000, "-{x:e}");
        }
    }
}

/// The bfloat16 nearest to `x` (ties to even), by a binary search over the sorted values.
fn bf16_nearest(x: f32) -> u16 {
    let v = f64::from(x).abs();
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let (mut lo, mut hi) = (0u16, 0x7f80u16);
    if v >= bf16_lattice(hi) {
        return sign | 0x7f80;
    }
    while hi - lo > 1 {
        let m = lo + (hi - lo) / 2;
        if bf16_lattice(m) <= v {
            lo = m;
        } else {
            hi = m;
        }
    }
    let (dl, dh) = (v - bf16_lattice(lo), bf16_lattice(hi) - v);
    sign | if dl < dh || (dl == dh && lo & 1 == 0) {
        lo
    } else {
        hi
    }
}

#[test]
fn bf16_from_f32_matches_a_nearest_value_search() {
    let mut bits = 0u32;
    loop {
        let x = f32::from_bits(bits);
        if !x.is_nan() {
            assert_eq!(
                BF16::from_f32(x).to_bits(),
                bf16_nearest(x),
                "{x:e} ({bits:#010x})"
            );
        }
        match bits.checked_add(4093) {
            Some(b) => bits = b,
            None => break,
        }
    }
    for x in [
        0.0f32,
        -0.0,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::MAX,
        f32::INFINITY,
    ] {
        assert_eq!(BF16::from_f32(x).to_bits(), bf16_nearest(x), "{x:e}");
        assert_eq!(BF16::from_f32(-x).to_bits(), bf16_nearest(-x), "-{x:e}");
    }
}

#[test]
fn bf16_nan_handling() {
    let cases: [(u32, u16); 5] = [
        (f32::NAN.to_bits(), 0x7fc0),
        ((-f32::NAN).to_bits(), 0xffc0),
        (0x7f80_0001, 0x7fc0), // signaling, payload below the kept bits: not infinity
        (0x7fa0_0000, 0x7fe0), // signaling, payload in the kept bits
        (0x7fff_ffff, 0x7fff), // never rounded up into the sign bit
    ];
    for (x, want) in cases {
        let b = BF16::from_f32(f32::from_bits(x));
        assert!(b.is_nan());
        assert_eq!(b.to_bits(), want, "{x:#010x}");
    }
    assert_eq!(BF16::from_f32(f32::NAN), BF16::NAN);
}

#[test]
fn bf16_constants() {
    assert_eq!(BF16::ZERO.to_f32().to_bits(), 0);
    assert_eq!(BF16::ONE.to_f32(), 1.0);
    assert_eq!(BF16::MAX.to_f32(), f32::from_bits(0x7f7f_0000));
    assert_eq!(BF16::MIN_POSITIVE.to_f32(), f32::MIN_POSITIVE);
    assert_eq!(BF16::INFINITY.to_f32(), f32::INFINITY);
    assert_eq!(BF16::NEG_INFINITY.to_f32(), f32::NEG_INFINITY);
    assert!(BF16::NAN.is_nan());
    assert_eq!(BF16::default(), BF16::ZERO);
    assert_eq!(BF16::from_f32(f32::MAX), BF16::INFINITY);
}

// ---- F16 / BF16: traits and tensors -----------------------------------------------------

#[test]
fn half_types_compare_and_hash_bit_patterns() {
    assert_ne!(F16::from_f32(0.0), F16::from_f32(-0.0));
    assert_eq!(F16::NAN, F16::NAN);
    assert_ne!(BF16::from_f32(0.0), BF16::from_f32(-0.0));
    let set: HashSet<F16> = [F16(1), F16(1), F16(2)].into_iter().collect();
    assert_eq!(set.len(), 2);
    let set: HashSet<BF16> = [BF16::NAN, BF16::NAN, BF16::ONE].into_iter().collect();
    assert_eq!(set.len(), 2);
    assert_eq!(format!("{:?}", F16::ONE), "F16(1.0, bits 0x3c00)");
    assert_eq!(
        format!("{:?}", BF16::from_f32(-2.5)),
        "BF16(-2.5, bits 0xc020)"
    );
    assert_eq!(format!("{}", F16::from_f32(0.5)), "0.5");
    assert_eq!(format!("{}", BF16::ONE), "1");
    assert_eq!(
        (std::mem::size_of::<F16>(), std::mem::align_of::<F16>()),
        (2, 2)
    );
    assert_eq!(
        (std::mem::size_of::<BF16>(), std::mem::align_of::<BF16>()),
        (2, 2)
    );
}

#[test]
fn half_dtypes() {
    let f16 = F16::DTYPE;
    assert_eq!(
        (f16.code().0, f16.bits(), f16.lanes()),
        (sys::kDLFloat, 16, 1)
    );
    let bf16 = BF16::DTYPE;
    assert_eq!(
        (bf16.code().0, bf16.bits(), bf16.lanes()),
        (sys::kDLBfloat, 16, 1)
    );
    assert_eq!(F16::DTYPE, DataType::F16);
    assert_eq!(BF16::DTYPE, DataType::BF16);
}

/// Which built-in element types can view `t`.
fn viewable(t: &ManagedTensor) -> Vec<&'static str> {
    let all = [
        ("u8", t.view::<u8>().is_ok()),
        ("u16", t.view::<u16>().is_ok()),
        ("u32", t.view::<u32>().is_ok()),
        ("u64", t.view::<u64>().is_ok()),
        ("i8", t.view::<i8>().is_ok()),
        ("i16", t.view::<i16>().is_ok()),
        ("i32", t.view::<i32>().is_ok()),
        ("i64", t.view::<i64>().is_ok()),
        ("f32", t.view::<f32>().is_ok()),
        ("f64", t.view::<f64>().is_ok()),
        ("bool", t.view::<bool>().is_ok()),
        ("F16", t.view::<F16>().is_ok()),
        ("BF16", t.view::<BF16>().is_ok()),
        ("Complex32", t.view::<Complex32>().is_ok()),
        ("Complex64", t.view::<Complex64>().is_ok()),
    ];
    all.iter().filter(|(_, ok)| *ok).map(|(n, _)| *n).collect()
}

#[test]
fn half_tensors_are_viewed_only_as_themselves() {
    let values: Vec<F16> = [1.0f32, -2.0, 0.5, 65504.0]
        .iter()
        .map(|&x| F16::from_f32(x))
        .collect();
    let mut t = ManagedTensor::from_vec(values, &[2, 2]).unwrap();
    assert_eq!(t.dtype(), DataType::F16);
    assert_eq!(t.nbytes().unwrap(), 8);
    assert_eq!(viewable(&t), ["F16"]);
    let err = t.view::<BF16>().unwrap_err();
    assert_eq!(err.status(), Status::DTYPE_MISMATCH);
    assert_eq!(
        err.message(),
        "dtype float16 does not match the required bfloat16"
    );
    {
        let mut v = t.view_mut::<F16>().unwrap();
        v.set(&[0, 1], F16::from_f32(3.0)).unwrap();
        *v.get_mut(&[1, 0]).unwrap() = F16::NEG_INFINITY;
    }
    let v = t.view::<F16>().unwrap();
    let as_f32: Vec<f32> = v.to_vec().into_iter().map(f32::from).collect();
    assert_eq!(as_f32, [1.0, 3.0, f32::NEG_INFINITY, 65504.0]);

    let values: Vec<BF16> = [1.0f32, 3.0e38, -1.0e-38]
        .iter()
        .map(|&x| BF16::from_f32(x))
        .collect();
    let t = ManagedTensor::from_vec(values.clone(), &[3]).unwrap();
    assert_eq!(t.dtype(), DataType::BF16);
    assert_eq!(viewable(&t), ["BF16"]);
    assert_eq!(t.view::<BF16>().unwrap().as_slice().unwrap(), &values[..]);
    assert_eq!(
        t.view::<F16>().unwrap_err().status(),
        Status::DTYPE_MISMATCH
    );
}

// A foreign float16 / bfloat16 tensor (bytes written as a C producer would) reads back with
// the values the bit patterns encode.
#[test]
fn foreign_half_tensors() {
    let halves: [u16; 3] = [0x3c00, 0xc000, 0x7bff]; // 1, -2, 65504
    let mut init = Vec::new();
    for h in halves {
        init.extend_from_slice(&h.to_ne_bytes());
    }
    let mut spec = Spec::new(DataType::F16.0, &[3]);
    spec.init = init.clone();
    let (raw, deleted) = common::versioned(&spec);
    // SAFETY: raw is a live tensor handed over once.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let got: Vec<f32> = t
        .view::<F16>()
        .unwrap()
        .to_vec()
        .into_iter()
        .map(f32::from)
        .collect();
    assert_eq!(got, [1.0, -2.0, 65504.0]);
    drop(t);
    assert_eq!(deleted.get(), 1);

    let mut spec = Spec::new(DataType::BF16.0, &[3]);
    spec.init = init;
    let (raw, _) = common::versioned(&spec);
    // SAFETY: as above.
    let t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    let got: Vec<u16> = t
        .view::<BF16>()
        .unwrap()
        .to_vec()
        .into_iter()
        .map(BF16::to_bits)
        .collect();
    assert_eq!(got, halves);
    // 0x3c00 as bfloat16: exponent 120, mantissa 0, so 2^-7.
    assert_eq!(
        t.view::<BF16>().unwrap().get(&[0]).unwrap().to_f32(),
        0.0078125
    );
}

// ---- registering an element type --------------------------------------------------------

/// Three uint8 lanes: DLPack's (kDLUInt, 8, 3), as an image's RGB pixel.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Rgb {
    r: u8,
    g: u8,
    b: u8,
}

// SAFETY: three u8 fields: 3 bytes = 8 bits * 3 lanes, no padding, alignment 1; every bit
// pattern is a valid Rgb; no interior mutability; not kDLBool.
unsafe impl Element for Rgb {
    const DTYPE: DataType = DataType::new(TypeCode::UINT, 8, 3);
}
const _: () = assert_element_layout::<Rgb>();

fn rgb(r: u8, g: u8, b: u8) -> Rgb {
    Rgb { r, g, b }
}

#[test]
fn a_registered_type_is_exported_and_viewed() {
    let pixels: Vec<Rgb> = (0..6u8).map(|i| rgb(i, 10 * i, 100 + i)).collect();
    let mut t = ManagedTensor::from_vec(pixels.clone(), &[2, 3]).unwrap();
    assert_eq!(t.dtype(), DataType::new(TypeCode::UINT, 8, 3));
    assert_eq!(t.nbytes().unwrap(), 18);
    assert!(viewable(&t).is_empty(), "{:?}", viewable(&t));
    let err = t.view::<u8>().unwrap_err();
    assert_eq!(err.status(), Status::DTYPE_MISMATCH);
    assert_eq!(
        err.message(),
        "dtype uint8x3 does not match the required uint8"
    );

    let v = t.view::<Rgb>().unwrap();
    assert_eq!(v.get(&[1, 2]), Some(&rgb(5, 50, 105)));
    assert_eq!(v.as_slice().unwrap(), &pixels[..]);
    assert_eq!(v.dtype(), Rgb::DTYPE);
    {
        let mut m = t.view_mut::<Rgb>().unwrap();
        m.set(&[0, 0], rgb(255, 0, 0)).unwrap();
        m.get_mut(&[1, 1]).unwrap().g = 7;
    }
    let v = t.view::<Rgb>().unwrap();
    assert_eq!(v.get(&[0, 0]), Some(&rgb(255, 0, 0)));
    assert_eq!(v.get(&[1, 1]), Some(&rgb(4, 7, 104)));

    // Strided: the transpose, element strides in units of one Rgb (3 bytes).
    let t = ManagedTensor::build_from_vec(pixels, &[3, 2])
        .strides(&[1, 3])
        .finish()
        .unwrap();
    let v = t.view::<Rgb>().unwrap();
    assert_eq!(v.get(&[2, 1]), Some(&rgb(5, 50, 105)));
    assert_eq!(v.to_vec()[1], rgb(3, 30, 103));

    // Round trip through the raw pointer.
    // SAFETY: the pointer comes straight from into_raw.
    let back = unsafe { ManagedTensor::from_raw(t.into_raw()) }.unwrap();
    assert_eq!(
        back.view::<Rgb>().unwrap().get(&[0, 1]),
        Some(&rgb(3, 30, 103))
    );
}

// Bytes from elsewhere (an image decoder, a C library) viewed as pixels, without a copy.
#[test]
fn a_registered_type_views_foreign_bytes() {
    let mut bytes: Vec<u8> = (0..12).collect();
    let mut shape = [1i64, 3];
    let t = sys::DLTensor {
        data: bytes.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: 2,
        dtype: Rgb::DTYPE.0,
        shape: shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 3, // starts at the second pixel
    };
    // SAFETY: bytes and shape outlive the view and are not written meanwhile; the three
    // pixels after byte_offset 3 end at byte 12.
    let v = unsafe { TensorView::<Rgb>::from_raw(&t) }.unwrap();
    assert_eq!(v.get(&[0, 0]), Some(&rgb(3, 4, 5)));
    assert_eq!(v.get(&[0, 2]), Some(&rgb(9, 10, 11)));
    assert_eq!(v.get(&[0, 3]), None);
}

// ---- sizes that do not match the dtype --------------------------------------------------

/// A registration that breaks rule 1 of Element's contract on purpose (4 bytes for a 3-byte
/// dtype), to show that views and exports refuse it instead of reading past the validated
/// elements.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
struct Wide(#[allow(dead_code)] u32);

// SAFETY: deliberately wrong size (see above); every bit pattern is valid and every export
// of it is refused, so the only uses are the views' and the exports' runtime checks.
unsafe impl Element for Wide {
    const DTYPE: DataType = DataType::new(TypeCode::UINT, 8, 3);
}

/// The opposite mistake: 1 byte for a 3-byte dtype.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
struct Narrow(#[allow(dead_code)] u8);

// SAFETY: deliberately wrong size, as for Wide.
unsafe impl Element for Narrow {
    const DTYPE: DataType = DataType::new(TypeCode::UINT, 8, 3);
}

#[test]
fn a_size_mismatch_is_refused_at_view_creation() {
    assert!(element_layout_ok::<Rgb>());
    assert!(!element_layout_ok::<Wide>());
    assert!(!element_layout_ok::<Narrow>());

    let mut storage = [0u32; 4]; // 16 bytes, aligned for Wide
    let mut shape = [4i64];
    let t = sys::DLTensor {
        data: storage.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: 1,
        dtype: Wide::DTYPE.0,
        shape: shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: storage and shape outlive the views and are not touched meanwhile.
    let err = unsafe { TensorView::<Wide>::from_raw(&t) }.unwrap_err();
    assert_eq!(err.status(), Status::DTYPE_MISMATCH);
    assert_eq!(
        err.message(),
        "dtype uint8x3 has 3-byte elements, where 4-byte elements are required"
    );
    // SAFETY: as above.
    let err = unsafe { TensorViewMut::<Wide>::from_raw(&t) }.unwrap_err();
    assert_eq!(err.status(), Status::DTYPE_MISMATCH);
    // SAFETY: as above.
    let err = unsafe { TensorView::<Narrow>::from_raw(&t) }.unwrap_err();
    assert_eq!(
        err.message(),
        "dtype uint8x3 has 3-byte elements, where 1-byte elements are required"
    );
    // The same tensor is fine for a type of the right size.
    // SAFETY: as above.
    assert_eq!(unsafe { TensorView::<Rgb>::from_raw(&t) }.unwrap().len(), 4);

    // Managed tensors: view and view_mut.
    let mut spec = Spec::new(Wide::DTYPE.0, &[4]);
    spec.init = vec![1; 12];
    let (raw, _) = common::versioned(&spec);
    // SAFETY: raw is a live tensor handed over once.
    let mut t = unsafe { ManagedTensor::from_raw(raw) }.unwrap();
    assert_eq!(
        t.view::<Wide>().unwrap_err().status(),
        Status::DTYPE_MISMATCH
    );
    assert_eq!(
        t.view::<Narrow>().unwrap_err().status(),
        Status::DTYPE_MISMATCH
    );
    assert_eq!(
        t.view_mut::<Wide>().unwrap_err().status(),
        Status::DTYPE_MISMATCH
    );
    assert_eq!(t.view::<Rgb>().unwrap().get(&[3]), Some(&rgb(1, 1, 1)));
}

/// The exports remember the element sizes the facade accepted (one facade check per type,
/// not per export): what is remembered is the exact (dtype, size) the facade accepted, so a
/// type of the same dtype and another size is still refused, however the exports alternate.
#[test]
fn an_accepted_element_size_is_remembered_for_its_size_alone() {
    for _ in 0..3 {
        let t = ManagedTensor::from_vec(vec![rgb(1, 2, 3); 4], &[4]).unwrap();
        assert_eq!(t.view::<Rgb>().unwrap().get(&[3]), Some(&rgb(1, 2, 3)));
        let err = ManagedTensor::from_vec(vec![Wide(0); 4], &[4]).unwrap_err();
        assert_eq!(err.status(), Status::DTYPE_MISMATCH);
        assert_eq!(
            err.message(),
            "dtype uint8x3 has 3-byte elements, where 4-byte elements are required"
        );
        let err = ManagedTensor::from_vec(vec![Narrow(0); 4], &[4]).unwrap_err();
        assert_eq!(err.status(), Status::DTYPE_MISMATCH);
    }
}

// ---- sub-byte element types -------------------------------------------------------------

/// Two float4_e2m1fn values packed in one byte: (kDLFloat4_e2m1fn, 4, 2).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
struct Fp4x2(u8);
// SAFETY: one byte = 4 bits * 2 lanes; every bit pattern valid; no interior mutability.
unsafe impl Element for Fp4x2 {
    const DTYPE: DataType = DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 2);
}
const _: () = assert_element_layout::<Fp4x2>();

/// One float4_e2m1fn value in the low nibble of a byte: the padded form of (kDLFloat4_e2m1fn,
/// 4, 1), as the C++ library's `float4_e2m1fn`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
struct Fp4(u8);
// SAFETY: one byte per 4-bit lane (the padded form); every bit pattern valid; no interior
// mutability.
unsafe impl Element for Fp4 {
    const DTYPE: DataType = DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 1);
}
const _: () = assert_element_layout::<Fp4>();

#[test]
fn sub_byte_types() {
    let mut bytes = [0x21u8, 0x43, 0x65, 0x87];
    let mut shape = [4i64];
    let packed_pairs = sys::DLTensor {
        data: bytes.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: 1,
        dtype: Fp4x2::DTYPE.0,
        shape: shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: bytes and shape outlive the view and are not written meanwhile.
    let v = unsafe { TensorView::<Fp4x2>::from_raw(&packed_pairs) }.unwrap();
    assert_eq!(v.get(&[2]), Some(&Fp4x2(0x65)));

    // A bare DLTensor of (kDLFloat4_e2m1fn, 4, 1) is packed, two values per byte: a
    // one-byte-per-value type cannot view it (the C++ core's refusal and wording).
    let packed = sys::DLTensor {
        dtype: Fp4::DTYPE.0,
        ..packed_pairs
    };
    // SAFETY: as above.
    let err = unsafe { TensorView::<Fp4>::from_raw(&packed) }.unwrap_err();
    assert_eq!(err.status(), Status::SUBBYTE_NOT_VIEWABLE);
    assert_eq!(
        err.message(),
        "dtype float4_e2m1fn is packed, which cannot be viewed as one 1-byte element each"
    );
}

// Managed views read IS_SUBBYTE_TYPE_PADDED: the padded type views a flagged tensor, the
// packed pair type does not. (from_vec of a padded type is still refused: its layout checks
// compute byte addresses as for packed data.)
#[test]
fn padded_sub_byte_types_are_viewed_through_the_flag() {
    let mut values = vec![Fp4(1), Fp4(2), Fp4(3)];
    let data = values.as_mut_ptr().cast();
    // SAFETY: data points to 3 initialised one-byte values owned by `values`, which the
    // tensor keeps; the dtype and the padded flag describe exactly that storage.
    let mut t = unsafe {
        ManagedTensor::build_from_owner(values, data, Fp4::DTYPE, Device::CPU, &[3])
            .flags(Flags::IS_SUBBYTE_TYPE_PADDED)
            .finish()
    }
    .unwrap();
    assert_eq!(t.view::<Fp4>().unwrap().get(&[2]), Some(&Fp4(3)));
    t.view_mut::<Fp4>().unwrap().set(&[0], Fp4(7)).unwrap();
    assert_eq!(
        t.view::<Fp4>().unwrap().to_vec(),
        vec![Fp4(7), Fp4(2), Fp4(3)]
    );
    assert_eq!(
        t.view::<Fp4x2>().unwrap_err().status(),
        Status::DTYPE_MISMATCH
    );
    let refused = ManagedTensor::from_vec(vec![Fp4(1)], &[1]).unwrap_err();
    assert_eq!(refused.status(), Status::SUBBYTE_NOT_VIEWABLE);
}

/// A view's element size is the size of its dtype *stored with the tensor's padding flag*
/// (the facade compares `size_of::<T>()` with the itemsize its check learned): a one-byte
/// `Fp4` views padded storage, and a bare tensor of the same dtype is packed and refused,
/// with the core's words, however the views alternate. (A check that remembered an
/// acceptance without the padding flag, or compared with the dtype's size alone, accepts the
/// packed tensor: this test fails.)
#[test]
fn views_check_the_element_size_for_its_storage_alone() {
    let mut values = vec![Fp4(1), Fp4(2), Fp4(3)];
    let data = values.as_mut_ptr().cast();
    // SAFETY: data points to 3 initialised one-byte values owned by `values`, which the
    // tensor keeps; the dtype and the padded flag describe exactly that storage.
    let padded = unsafe {
        ManagedTensor::build_from_owner(values, data, Fp4::DTYPE, Device::CPU, &[3])
            .flags(Flags::IS_SUBBYTE_TYPE_PADDED)
            .finish()
    }
    .unwrap();
    let mut bytes = [0x21u8, 0x43];
    let mut shape = [4i64];
    let packed = sys::DLTensor {
        data: bytes.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: 1,
        dtype: Fp4::DTYPE.0,
        shape: shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    let refused = || {
        // SAFETY: bytes and shape outlive the view and are not written meanwhile.
        let err = unsafe { TensorView::<Fp4>::from_raw(&packed) }.unwrap_err();
        assert_eq!(err.status(), Status::SUBBYTE_NOT_VIEWABLE);
        assert_eq!(
            err.message(),
            "dtype float4_e2m1fn is packed, which cannot be viewed as one 1-byte element each"
        );
    };
    for _ in 0..3 {
        refused();
        assert_eq!(padded.view::<Fp4>().unwrap().get(&[2]), Some(&Fp4(3)));
        refused();
        // SAFETY: as above.
        let err = unsafe { TensorViewMut::<Fp4>::from_raw(&packed) }.unwrap_err();
        assert_eq!(err.status(), Status::SUBBYTE_NOT_VIEWABLE);
    }
    // The packed pair type views the packed tensor's storage (its own dtype) and not the
    // padded one (another dtype: the requirements refuse it before any size is asked).
    let mut pair_shape = [2i64];
    let pairs = sys::DLTensor {
        dtype: Fp4x2::DTYPE.0,
        shape: pair_shape.as_mut_ptr(),
        ..packed
    };
    for _ in 0..2 {
        // SAFETY: as above.
        assert_eq!(
            unsafe { TensorView::<Fp4x2>::from_raw(&pairs) }
                .unwrap()
                .get(&[1]),
            Some(&Fp4x2(0x43))
        );
        assert_eq!(
            padded.view::<Fp4x2>().unwrap_err().status(),
            Status::DTYPE_MISMATCH
        );
    }
}

// The padded rule of the contract, as DataType::storage_itemsize states it.
#[test]
fn storage_sizes() {
    let fp4 = DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 1);
    assert_eq!(fp4.storage_itemsize(false), None);
    assert_eq!(fp4.storage_itemsize(true), Some(1));
    let fp6x4 = DataType::new(TypeCode::FLOAT6_E2M3FN, 6, 4);
    assert_eq!(fp6x4.storage_itemsize(false), Some(3));
    assert_eq!(fp6x4.storage_itemsize(true), Some(4));
    assert_eq!(DataType::F16.storage_itemsize(true), Some(2)); // whole bytes: never padded
    assert_eq!(DataType::COMPLEX128.storage_itemsize(false), Some(16));
    assert_eq!(
        DataType::new(TypeCode::UINT, 0, 1).storage_itemsize(false),
        None
    );
    assert_eq!(
        DataType::new(TypeCode::UINT, 8, 0).storage_itemsize(false),
        None
    );
    assert_eq!(
        DataType::new(TypeCode::UINT, 8, 0).storage_itemsize(true),
        None
    );
}

// A Vec export is checked against the bytes the facade says its elements occupy, flags
// included (dlpm_byte_span): packed pairs flagged IS_SUBBYTE_TYPE_PADDED would take two
// bytes each, twice what the Vec holds, so the export is refused instead of letting a
// consumer that honours the flag read past the Vec.
#[test]
fn vec_exports_are_checked_against_the_flagged_storage() {
    let err = ManagedTensor::build_from_vec(vec![Fp4x2(0x21); 3], &[3])
        .flags(Flags::IS_SUBBYTE_TYPE_PADDED)
        .finish()
        .unwrap_err();
    assert_eq!(err.status(), Status::INVALID_ARGUMENT);
    assert_eq!(
        err.message(),
        "the layout addresses elements 0 to 5 but the Vec holds 3 elements"
    );
    let t = ManagedTensor::from_vec(vec![Fp4x2(0x21); 3], &[3]).unwrap();
    assert_eq!(t.view::<Fp4x2>().unwrap().get(&[2]), Some(&Fp4x2(0x21)));
}
