// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The Rust ecosystem's element types, each behind the feature of its crate: `half`'s
//! [`f16`](::half::f16) and [`bf16`](::half::bf16), `num-complex`'s
//! [`Complex<f32>`](::num_complex::Complex) and `Complex<f64>`. They are [`Element`]s with
//! the same dtypes as [`F16`], [`BF16`], [`Complex32`] and [`Complex64`], which stay this
//! crate's own types (features must only add: an alias that changed type with a feature
//! would break code compiled without it), with bit-exact conversions between each pair.

#[cfg(any(feature = "half", feature = "num-complex"))]
use super::element::element;
#[cfg(any(feature = "half", feature = "num-complex"))]
use super::{assert_element_layout, DataType, Element};

#[cfg(feature = "half")]
mod half_types {
    use super::super::{BF16, F16};
    use super::*;

    // SAFETY: `half::f16` and `half::bf16` are #[repr(transparent)] over u16 (2 bytes, the
    // dtype's 16 bits, asserted by the macro), every bit pattern a value, no interior
    // mutability.
    element! { ::half::f16 => DataType::F16, ::half::bf16 => DataType::BF16 }

    impl From<F16> for ::half::f16 {
        fn from(h: F16) -> Self {
            ::half::f16::from_bits(h.0)
        }
    }
    impl From<::half::f16> for F16 {
        fn from(h: ::half::f16) -> Self {
            F16(h.to_bits())
        }
    }
    impl From<BF16> for ::half::bf16 {
        fn from(h: BF16) -> Self {
            ::half::bf16::from_bits(h.0)
        }
    }
    impl From<::half::bf16> for BF16 {
        fn from(h: ::half::bf16) -> Self {
            BF16(h.to_bits())
        }
    }
}

#[cfg(feature = "num-complex")]
mod complex_types {
    use super::super::{Complex32, Complex64};
    use super::*;
    use ::num_complex::Complex;

    // SAFETY: `num_complex::Complex<T>` is #[repr(C)] { re: T, im: T }: for f32 and f64 the
    // 8 and 16 bytes of complex64 and complex128 (asserted by the macro), no padding, every
    // bit pattern a value, no interior mutability.
    element! { Complex<f32> => DataType::COMPLEX64, Complex<f64> => DataType::COMPLEX128 }

    impl From<Complex32> for Complex<f32> {
        fn from(z: Complex32) -> Self {
            Complex::new(z.re, z.im)
        }
    }
    impl From<Complex<f32>> for Complex32 {
        fn from(z: Complex<f32>) -> Self {
            Complex32::new(z.re, z.im)
        }
    }
    impl From<Complex64> for Complex<f64> {
        fn from(z: Complex64) -> Self {
            Complex::new(z.re, z.im)
        }
    }
    impl From<Complex<f64>> for Complex64 {
        fn from(z: Complex<f64>) -> Self {
            Complex64::new(z.re, z.im)
        }
    }
}
