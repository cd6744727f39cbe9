// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The element types views read and exports describe: the [`Element`] trait, its layout
//! check, and its implementations for the built-in types.

use super::{Complex32, Complex64, DataType, BF16, F16};

/// An element type the views can read and write, and `from_vec` can export: its DLPack
/// dtype must match the tensor's (code, bits, lanes) exactly. The Rust counterpart of the
/// C++ library's `dtype_traits<T>`.
///
/// Implemented for `u8`..`u64`, `i8`..`i64`, `f32`, `f64`, `bool`, [`F16`], [`BF16`],
/// [`Complex32`] and [`Complex64`]. Every bit pattern is a valid value for all of them
/// except `bool`, whose bytes must be 0 or 1 (DLPack's `kDLBool` convention, which NumPy
/// and PyTorch follow): a view of a `kDLBool` element type reads its bytes when it is made
/// and refuses any other.
///
/// # Registering your own element type
///
/// Implement it for a plain-old-data type whose bytes are one element of a DLPack dtype,
/// for instance three `uint8` lanes, and check the size at compile time with
/// [`assert_element_layout`]:
///
/// ```
/// use dlpack_mdspan::{assert_element_layout, DataType, Element, ManagedTensor, TypeCode};
///
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Rgb {
///     r: u8,
///     g: u8,
///     b: u8,
/// }
///
/// // SAFETY: three u8 fields, so 3 bytes (8 bits * 3 lanes) with no padding, alignment 1;
/// // every bit pattern is a valid Rgb; no interior mutability; the code is not kDLBool.
/// unsafe impl Element for Rgb {
///     const DTYPE: DataType = DataType::new(TypeCode::UINT, 8, 3);
/// }
/// const _: () = assert_element_layout::<Rgb>(); // a size mismatch fails the build
///
/// let t = ManagedTensor::from_vec(vec![Rgb { r: 1, g: 2, b: 3 }; 4], &[2, 2])?;
/// assert_eq!(t.dtype(), DataType::new(TypeCode::UINT, 8, 3));
/// assert_eq!(t.view::<Rgb>()?.get(&[1, 1]), Some(&Rgb { r: 1, g: 2, b: 3 }));
/// assert!(t.view::<u8>().is_err()); // (kDLUInt, 8, 3) is not uint8
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
///
/// Views check the size at run time as well: a `T` whose `size_of` is not one element of
/// `T::DTYPE` as the tensor stores it gets [`Status::DTYPE_MISMATCH`](crate::Status::DTYPE_MISMATCH)
/// (whole bytes of another size: `dtype uint8x3 has 3-byte elements, where 4-byte elements
/// are required`) or [`Status::SUBBYTE_NOT_VIEWABLE`](crate::Status::SUBBYTE_NOT_VIEWABLE)
/// (sub-byte storage; the C++ library's `errc::subbyte_not_viewable`), never a view that
/// reads past the elements the facade validated.
///
/// # Safety
///
/// With `T::DTYPE = (code, bits, lanes)`, an implementor promises:
///
/// 1. **Size.** `size_of::<T>() * 8 == bits * lanes` (packed: the lanes fill `T` bit for
///    bit, e.g. `(kDLUInt, 8, 3)` in 3 bytes, or two 4-bit lanes in one byte), or
///    `bits < 8` and `size_of::<T>() == lanes` (padded sub-byte: one byte per lane, the
///    form DLPack flags `IS_SUBBYTE_TYPE_PADDED`). [`assert_element_layout`] checks exactly
///    this. Exports ([`ManagedTensor::from_vec`](crate::ManagedTensor::from_vec),
///    [`ManagedTensor::build_from_vec`](crate::ManagedTensor::build_from_vec)) describe a
///    `Vec<T>` with this dtype to foreign consumers, which read `bits * lanes / 8` bytes
///    per element.
/// 2. **No uninitialised bytes.** `T` has no padding bytes (nor `MaybeUninit` fields):
///    every byte of every value is initialised, because exports hand the bytes to other
///    languages and to views of other element types with the same dtype.
/// 3. **Every bit pattern is valid.** Any initialised `size_of::<T>()` bytes are a valid
///    `T` (so no `bool`, `char`, enum, reference, `NonZero*` or other niche-carrying
///    field): views hand out `&T` to memory written by C, C++, Python, or through another
///    element type with the same dtype. If the code is `kDLBool`, the converse holds too:
///    every byte of every value of `T` is 0 or 1, since such memory may be viewed as `bool`.
/// 4. **No interior mutability** (`UnsafeCell`, `Cell`, atomics): a shared view of a
///    READ_ONLY or foreign tensor hands out `&T`, through which nothing may write.
///
/// `Copy + Send + Sync + 'static` are required by the trait. Alignment is free: the
/// facade refuses data that is not aligned for `T` ([`Status::MISALIGNED_DATA`](crate::Status::MISALIGNED_DATA)), so a
/// `T` aligned more strictly than its lanes only narrows which tensors it can view.
///
/// Not a safety matter, but what makes the data meaningful: the bytes of `T` are the
/// dtype's bytes as C and C++ store them (lanes in order, each in the platform's byte
/// order), the same as the C++ side's `dtype_traits<T>` registration for that type.
///
/// ```
/// use dlpack_mdspan::{DataType, Element};
/// assert_eq!(<u16 as Element>::DTYPE, DataType::U16);
/// assert_eq!(<bool as Element>::DTYPE, DataType::BOOL);
/// ```
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// The DLPack dtype of this type.
    const DTYPE: DataType;
}

/// Whether `size_of::<T>()` is one element of `T::DTYPE`: packed
/// (`size_of::<T>() * 8 == bits * lanes`) or padded sub-byte (`bits < 8` and
/// `size_of::<T>() == lanes`), rule 1 of [`Element`]'s safety contract.
///
/// ```
/// use dlpack_mdspan::{element_layout_ok, F16};
/// assert!(element_layout_ok::<F16>());
/// assert!(element_layout_ok::<u64>());
/// ```
pub const fn element_layout_ok<T: Element>() -> bool {
    layout_fits(T::DTYPE, std::mem::size_of::<T>())
}

/// Rule 1 of [`Element`]'s contract as a `const fn`, for the compile-time check: `size`
/// bytes are one element of `dtype` as stored, packed or padded sub-byte, i.e. the C++
/// core's `storage_itemsize` of `dtype` in either form ([`DataType::storage_itemsize`],
/// itself a `const fn` held equal to the facade's answer by its tests), which is what views
/// check at run time. Equivalently: `size * 8 == bits * lanes`, or `0 < bits < 8` and
/// `size == lanes`, with `size != 0`.
const fn layout_fits(dtype: DataType, size: usize) -> bool {
    matches!(dtype.storage_itemsize(false), Some(s) if s == size)
        || matches!(dtype.storage_itemsize(true), Some(s) if s == size)
}

/// Fails (at compile time, in a `const` item) unless `size_of::<T>()` is one element of
/// `T::DTYPE`, packed or padded sub-byte: see [`element_layout_ok`]. The Rust counterpart of
/// the C++ library's `static_assert` on registered dtypes.
///
/// ```
/// use dlpack_mdspan::{assert_element_layout, DataType, Element, TypeCode};
///
/// #[derive(Clone, Copy)]
/// #[repr(transparent)]
/// struct Fp8E4m3fn(u8);
/// // SAFETY: one byte (8 bits, 1 lane), any bit pattern valid, no interior mutability.
/// unsafe impl Element for Fp8E4m3fn {
///     const DTYPE: DataType = DataType::new(TypeCode::FLOAT8_E4M3FN, 8, 1);
/// }
/// const _: () = assert_element_layout::<Fp8E4m3fn>();
/// ```
///
/// A mismatch does not compile:
///
/// ```compile_fail,E0080
/// use dlpack_mdspan::{assert_element_layout, DataType, Element, TypeCode};
///
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Rgba(u8, u8, u8, u8);
/// // Wrong: 4 bytes registered as 3 lanes of 8 bits.
/// unsafe impl Element for Rgba {
///     const DTYPE: DataType = DataType::new(TypeCode::UINT, 8, 3);
/// }
/// const _: () = assert_element_layout::<Rgba>();
/// ```
pub const fn assert_element_layout<T: Element>() {
    assert!(
        element_layout_ok::<T>(),
        "dlpack_mdspan: size_of::<T>() matches neither the packed (bits * lanes / 8) nor the \
         padded (one byte per sub-byte lane) form of T::DTYPE"
    );
}

/// Registers built-in element types; every use states why the types meet the contract.
macro_rules! element {
    ($($t:ty => $dtype:expr),* $(,)?) => {$(
        // SAFETY: each use says why its types meet Element's contract; their size is
        // bits * lanes / 8, asserted below.
        unsafe impl Element for $t {
            const DTYPE: DataType = $dtype;
        }
        const _: () = {
            assert_element_layout::<$t>();
            assert!(std::mem::size_of::<$t>() * 8 == $dtype.bits() as usize * $dtype.lanes() as usize);
        };
    )*};
}

#[cfg(any(feature = "half", feature = "num-complex"))]
pub(super) use element;

// SAFETY: primitives, #[repr(C)] pairs of floats and #[repr(transparent)] u16s, with no
// padding, no interior mutability, and every bit pattern valid except for bool, the kDLBool
// type, whose values are the bytes 0 and 1.
element! {
    u8 => DataType::U8, u16 => DataType::U16, u32 => DataType::U32, u64 => DataType::U64,
    i8 => DataType::I8, i16 => DataType::I16, i32 => DataType::I32, i64 => DataType::I64,
    f32 => DataType::F32, f64 => DataType::F64,
    bool => DataType::BOOL,
    F16 => DataType::F16, BF16 => DataType::BF16,
    Complex32 => DataType::COMPLEX64, Complex64 => DataType::COMPLEX128,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TypeCode;

    // The compile-time rule equals the facade's storage_itemsize, packed or padded, and the
    // arithmetic of Element's contract (rule 1), for every bit width, lane counts from 0 to
    // the largest, and the sizes near each answer.
    #[test]
    fn the_const_layout_rule_is_the_facades_storage_itemsize() {
        let lane_counts = [0u16, 1, 2, 3, 4, 5, 7, 8, 9, 16, 255, 256, 4097, u16::MAX];
        for bits in 0..=u8::MAX {
            for &lanes in &lane_counts {
                let dtype = DataType::new(TypeCode::FLOAT, bits, lanes);
                // SAFETY: a plain function of its by-value arguments.
                let (packed, padded) = unsafe {
                    (
                        dlpack_mdspan_sys::dlpm_storage_itemsize(dtype.0, 0),
                        dlpack_mdspan_sys::dlpm_storage_itemsize(dtype.0, 1),
                    )
                };
                let (b, l) = (usize::from(bits), usize::from(lanes));
                let whole = b * l / 8;
                for size in [0, 1, 2, 3, 4, 8, l, whole, whole + 1]
                    .into_iter()
                    .chain(whole.checked_sub(1))
                {
                    let facade = size != 0 && (packed == size || padded == size);
                    let contract =
                        size != 0 && (size * 8 == b * l || (b > 0 && b < 8 && size == l));
                    assert_eq!(
                        layout_fits(dtype, size),
                        facade,
                        "bits {bits}, lanes {lanes}, size {size}: packed {packed}, padded {padded}"
                    );
                    assert_eq!(facade, contract, "bits {bits}, lanes {lanes}, size {size}");
                }
            }
        }
    }
}
