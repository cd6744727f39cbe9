// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! CuTe DSL's layout vocabulary on a [`ManagedTensor`]: the leading dimension and the stride
//! order it deduces, and the requirements a kernel states (leading dimension, stride order,
//! compactness in it, divisibility of shapes and strides, alignment). Every answer comes
//! from the C facade, so Rust, C and C++ agree by construction.

use std::ptr;

use crate::checks::any_requirements;
use crate::error::{check, Error, Status};
use crate::managed::ManagedTensor;
use crate::sys;

/// What a kernel assumes of a layout, in CuTe DSL's terms; every field defaults to
/// "anything". Slices must have one entry per mode of the tensor checked.
///
/// ```
/// use dlpack_mdspan::{LayoutRequirements, ManagedTensor, Status};
///
/// // CuTe's example (8,4,16,2):(2,16,64,1): torch.empty(16,4,8,2).permute(2,1,0,3).
/// let t = ManagedTensor::build_from_vec(vec![0f32; 8 * 4 * 16 * 2], &[8, 4, 16, 2]).strides(&[2, 16, 64, 1]).finish()?;
/// assert_eq!(t.leading_dim()?, Some(3));
/// assert_eq!(t.stride_order()?, vec![2, 1, 0, 3]);
/// let order = [2, 1, 0, 3];
/// let req = LayoutRequirements { leading_dim: Some(-1), stride_order: Some(&order), compact: true, ..Default::default() };
/// t.check_layout(&req)?;
/// let wrong = LayoutRequirements { leading_dim: Some(1), ..Default::default() };
/// assert_eq!(t.check_layout(&wrong).unwrap_err().status(), Status::NON_COMPACT_STRIDES);
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LayoutRequirements<'a> {
    /// The mode whose stride must be 1 (CuTe's `leading_dim`); negative counts from the
    /// last mode. A size-1 mode passes with any stride: no index uses it.
    pub leading_dim: Option<i32>,
    /// The modes from outermost to innermost (CuTe's `stride_order`, PyTorch's
    /// `dim_order`): strides must not grow along it.
    pub stride_order: Option<&'a [i32]>,
    /// With `stride_order`: compact in that order (CuTe's `mark_compact_shape_dynamic`).
    pub compact: bool,
    /// A divisor per mode of its extent (0 or 1: free): CuTe's `divisibility`.
    pub shape_divisors: Option<&'a [i64]>,
    /// A divisor per mode of its stride (modes of extent 1 are free).
    pub stride_divisors: Option<&'a [i64]>,
    /// Bytes `data + byte_offset` must be aligned to (a power of two, 0 = none): CuTe's
    /// `assumed_align`, checked.
    pub min_alignment: u64,
}

impl ManagedTensor {
    /// CuTe's leading dimension: the one mode of stride 1, or among several the one of
    /// extent > 1; `None` when no mode has stride 1 (CuTe then keeps every stride dynamic).
    /// Several stride-1 modes of which none or more than one has extent > 1 are
    /// [`Status::AMBIGUOUS_LAYOUT`].
    pub fn leading_dim(&self) -> Result<Option<usize>, Error> {
        let mut out = -1i32;
        // SAFETY: the tensor is live and owned by self; out is a valid out-parameter.
        check(unsafe { sys::dlpm_leading_dim(self.dl_tensor(), &mut out) })?;
        Ok(usize::try_from(out).ok())
    }

    /// CuTe's stride order (PyTorch's `dim_order`): the modes from the outermost (largest
    /// stride) to the innermost, equal strides in mode order. More than one mode of stride
    /// 1 is [`Status::AMBIGUOUS_LAYOUT`], as in CuTe.
    pub fn stride_order(&self) -> Result<Vec<usize>, Error> {
        // At most the rank a valid tensor may have: the facade refuses a larger one, for
        // which nothing is allocated first.
        let ndim = self
            .dl_tensor()
            .ndim
            .clamp(0, crate::checks::MAX_NDIM as i32 + 1);
        let mut out = vec![0i32; ndim as usize];
        // SAFETY: out has `ndim` writable entries, the capacity passed; the tensor is live.
        check(unsafe { sys::dlpm_stride_order(self.dl_tensor(), out.as_mut_ptr(), ndim) })?;
        Ok(out.into_iter().map(|m| m as usize).collect())
    }

    /// Checks the layout against `req`, in the facade's order: the requirements themselves
    /// ([`Status::INVALID_ARGUMENT`], a slice of the wrong length included), alignment
    /// ([`Status::MISALIGNED_DATA`]), the leading dimension, the stride order and
    /// compactness ([`Status::NON_COMPACT_STRIDES`]), then divisibility
    /// ([`Status::DIVISIBILITY`]).
    pub fn check_layout(&self, req: &LayoutRequirements<'_>) -> Result<(), Error> {
        let ndim = self.dl_tensor().ndim.max(0) as usize;
        // The facade reads one entry per mode: a shorter slice would be read past its end.
        let per_mode = |name: &str, len: Option<usize>| match len {
            Some(n) if n != ndim => Err(Error::new(
                Status::INVALID_ARGUMENT,
                format!("layout requirement: {name} has {n} entries, the tensor has {ndim} modes"),
            )),
            _ => Ok(()),
        };
        per_mode("stride_order", req.stride_order.map(<[i32]>::len))?;
        per_mode("shape_divisors", req.shape_divisors.map(<[i64]>::len))?;
        per_mode("stride_divisors", req.stride_divisors.map(<[i64]>::len))?;
        let mut c = any_requirements();
        c.min_alignment = req.min_alignment;
        c.layout = sys::dlpm_layout_requirements {
            leading_dim: req.leading_dim.unwrap_or(sys::DLPM_ANY_LEADING_DIM),
            compact: i32::from(req.compact),
            stride_order: req.stride_order.map_or(ptr::null(), <[i32]>::as_ptr),
            shape_divisors: req.shape_divisors.map_or(ptr::null(), <[i64]>::as_ptr),
            stride_divisors: req.stride_divisors.map_or(ptr::null(), <[i64]>::as_ptr),
        };
        // SAFETY: the tensor is live; every pointer in `c` is NULL or a slice of exactly
        // ndim entries (checked above) that outlives the call.
        check(unsafe { sys::dlpm_check_managed(self.as_ptr(), &c) })
    }
}
