// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Newtypes over the DLPack integers and structs, and the element types, one module per
//! idea; everything is re-exported here (and from the crate root), so the paths stay
//! `crate::types::X` and `dlpack_mdspan::X`.

mod complex;
mod devices;
mod dtypes;
mod ecosystem;
mod element;
mod flags;
mod half;

pub use complex::{Complex32, Complex64};
pub use devices::{Device, DeviceType};
pub use dtypes::{DataType, TypeCode};
pub use element::{assert_element_layout, element_layout_ok, Element};
pub use flags::Flags;
pub use half::{BF16, F16};
