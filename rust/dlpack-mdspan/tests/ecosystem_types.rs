// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! `half` and `num-complex` element types (features `half`, `num-complex`): the same
//! dtypes as the crate's own F16, BF16, Complex32 and Complex64, the same bits through
//! either, and the facade's dtype check between them.

#[cfg(feature = "half")]
#[test]
fn half_types_are_the_float16_and_bfloat16_elements() {
    use dlpack_mdspan::{DataType, Element, ManagedTensor, Status, BF16, F16};
    use half::{bf16, f16};
    assert_eq!(f16::DTYPE, DataType::F16);
    assert_eq!(bf16::DTYPE, DataType::BF16);
    let t = ManagedTensor::from_vec(
        vec![f16::from_f32(1.5), f16::from_f32(-0.25), f16::NAN],
        &[3],
    )
    .unwrap();
    let ours = t.view::<F16>().unwrap().to_vec();
    let theirs = t.view::<f16>().unwrap().to_vec();
    assert_eq!(
        ours.iter().map(|h| h.0).collect::<Vec<_>>(),
        theirs.iter().map(|h| h.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(ours[0].to_f32(), 1.5);
    assert_eq!(f16::from(ours[1]).to_f32(), -0.25);
    assert_eq!(F16::from(theirs[2]).0, f16::NAN.to_bits());
    // float16 is not bfloat16: the facade's dtype check, in both directions.
    let e = t.view::<bf16>().unwrap_err();
    assert_eq!(e.status(), Status::DTYPE_MISMATCH);
    assert!(e.message().contains("bfloat16"), "{e}");
    let b = ManagedTensor::from_vec(vec![bf16::from_f32(3.0)], &[1]).unwrap();
    assert_eq!(
        b.view::<f16>().unwrap_err().status(),
        Status::DTYPE_MISMATCH
    );
    assert_eq!(
        BF16::from(*b.view::<bf16>().unwrap().get(&[0]).unwrap()).to_f32(),
        3.0
    );
    assert_eq!(bf16::from(BF16::from_f32(3.0)), bf16::from_f32(3.0));
}

#[cfg(feature = "num-complex")]
#[test]
fn num_complex_types_are_the_complex64_and_complex128_elements() {
    use dlpack_mdspan::{Complex32, Complex64, DataType, Element, ManagedTensor, Status};
    use num_complex::Complex;
    assert_eq!(Complex::<f32>::DTYPE, DataType::COMPLEX64);
    assert_eq!(Complex::<f64>::DTYPE, DataType::COMPLEX128);
    let t = ManagedTensor::from_vec(
        vec![Complex::new(1.0f32, -2.0), Complex::new(3.0, 4.0)],
        &[2],
    )
    .unwrap();
    assert_eq!(
        t.view::<Complex32>().unwrap().to_vec(),
        vec![Complex32::new(1.0, -2.0), Complex32::new(3.0, 4.0)]
    );
    let z = *t.view::<Complex<f32>>().unwrap().get(&[1]).unwrap();
    assert_eq!(z * z, Complex::new(-7.0, 24.0)); // num-complex's arithmetic on the tensor's element
    assert_eq!(Complex32::from(z), Complex32::new(3.0, 4.0));
    assert_eq!(Complex::<f32>::from(Complex32::new(3.0, 4.0)), z);
    // complex64 is not complex128.
    let e = t.view::<Complex<f64>>().unwrap_err();
    assert_eq!(e.status(), Status::DTYPE_MISMATCH);
    let w = ManagedTensor::from_vec(vec![Complex64::new(0.5, 1.5)], &[1]).unwrap();
    assert_eq!(
        w.view::<Complex<f64>>().unwrap().get(&[0]),
        Some(&Complex::new(0.5, 1.5))
    );
    assert_eq!(
        Complex64::from(Complex::new(0.5, 1.5)),
        Complex64::new(0.5, 1.5)
    );
}
