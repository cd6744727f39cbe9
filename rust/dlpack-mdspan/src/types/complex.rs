// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Complex element types with the C/C++/NumPy layout: [`Complex32`] and [`Complex64`].

/// A single-precision complex number with the C/C++/NumPy layout (`complex64`,
/// `std::complex<float>`): real part, then imaginary part.
///
/// ```
/// use dlpack_mdspan::{Complex32, DataType, Element};
/// let z = Complex32::new(1.0, -2.0);
/// assert_eq!((z.re, z.im), (1.0, -2.0));
/// assert_eq!(Complex32::DTYPE, DataType::COMPLEX64);
/// ```
#[derive(Clone, Copy, PartialEq, Debug, Default)]
#[repr(C)]
pub struct Complex32 {
    /// Real part.
    pub re: f32,
    /// Imaginary part.
    pub im: f32,
}

impl Complex32 {
    /// `re + im·i`.
    pub const fn new(re: f32, im: f32) -> Self {
        Complex32 { re, im }
    }
}

/// A double-precision complex number with the C/C++/NumPy layout (`complex128`,
/// `std::complex<double>`): real part, then imaginary part.
///
/// ```
/// use dlpack_mdspan::{Complex64, DataType, Element};
/// let z = Complex64::new(0.5, 4.0);
/// assert_eq!(z.im, 4.0);
/// assert_eq!(Complex64::DTYPE, DataType::COMPLEX128);
/// ```
#[derive(Clone, Copy, PartialEq, Debug, Default)]
#[repr(C)]
pub struct Complex64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex64 {
    /// `re + im·i`.
    pub const fn new(re: f64, im: f64) -> Self {
        Complex64 { re, im }
    }
}
