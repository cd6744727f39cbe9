// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Memory orders (`'C'`, `'F'`, `'A'`), as the facade spells them.

/// A memory order for [`ManagedTensor::is_contiguous`](crate::ManagedTensor::is_contiguous),
/// the views' contiguity queries and
/// [`OwnerExport::order`](crate::OwnerExport::order).
///
/// ```
/// use dlpack_mdspan::{ManagedTensor, Order};
/// let t = ManagedTensor::build_from_vec(vec![0u8; 6], &[2, 3]).strides(&[1, 2]).finish()?; // column-major
/// assert!(!t.is_contiguous(Order::C)?);
/// assert!(t.is_contiguous(Order::F)?);
/// assert!(t.is_contiguous(Order::Any)?);
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Order {
    /// Row-major (C order, `'C'`).
    C,
    /// Column-major (Fortran order, `'F'`).
    F,
    /// Either (`'A'`).
    Any,
}

impl Order {
    pub(crate) fn as_c_char(self) -> std::ffi::c_char {
        (match self {
            Order::C => b'C',
            Order::F => b'F',
            Order::Any => b'A',
        }) as std::ffi::c_char
    }
}
