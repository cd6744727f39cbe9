// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Typed views of a [`ManagedTensor`]: the facade's checks for the element type, then a
//! [`TensorView`] or [`TensorViewMut`] over the tensor's memory. Kept apart from both
//! `managed.rs` (ownership) and `view.rs` (element access), which do not import each other.

use crate::checks::Viewed;
use crate::error::Error;
use crate::managed::ManagedTensor;
use crate::types::Element;
use crate::view::{no_claim, TensorView, TensorViewMut};

impl ManagedTensor {
    /// A shared, typed view for reading host memory. The facade checks (through
    /// `dlpm_check_tensor`, with the tensor's flags, in the call that also resolves the
    /// layout) the structure, that the dtype equals `T::DTYPE` exactly (code, bits,
    /// lanes), that the device is host-accessible
    /// ([`DeviceType::is_host_accessible`](crate::DeviceType::is_host_accessible)) and that the
    /// data is aligned for `T`.
    ///
    /// ```
    /// use dlpack_mdspan::{ManagedTensor, Status};
    ///
    /// let t = ManagedTensor::from_vec(vec![1u16, 2, 3, 4], &[2, 2])?;
    /// let v = t.view::<u16>()?;
    /// assert_eq!(v.shape(), &[2, 2]);
    /// assert_eq!(v.as_slice()?, &[1, 2, 3, 4]);
    /// assert_eq!(t.view::<i16>().unwrap_err().status(), Status::DTYPE_MISMATCH);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    // In line in the caller, as it was while the handle was a plain pointer: out of line it
    // costs a call and a `Result<TensorView>` returned through memory (12 instructions a
    // view, `bench/callgrind.py`).
    #[inline(always)]
    pub fn view<T: Element>(&self) -> Result<TensorView<'_, T>, Error> {
        // A tensor imported from Python claims its bytes too (out of line).
        #[cfg(feature = "pyo3")]
        if self.is_python_import() {
            return self.view_claimed();
        }
        // SAFETY: the struct, its shape and strides, and the elements stay valid, and
        // unwritten by others, while self is borrowed (from_raw's contract, or memory this
        // crate owns); the checks for T, flags included, are the facade's, in `checked`.
        unsafe { TensorView::checked(Viewed::Managed(self.raw()), no_claim) }
    }

    /// A typed view for reading and writing host memory: the checks of
    /// [`view`](Self::view), plus READ_ONLY tensors are refused with
    /// [`Status::READ_ONLY`](crate::Status::READ_ONLY). `&mut self` guarantees no other
    /// view of this tensor exists. See [the mutation rules](crate#mutation-and-aliasing)
    /// for which accessors are safe.
    ///
    /// ```
    /// use dlpack_mdspan::ManagedTensor;
    ///
    /// let mut t = ManagedTensor::from_vec(vec![0i32; 4], &[2, 2])?;
    /// let mut v = t.view_mut::<i32>()?;
    /// v.set(&[1, 0], 5)?;
    /// *v.get_mut(&[0, 1])? = 7;
    /// v.as_mut_slice()?[3] += 1;
    /// assert_eq!(t.view::<i32>()?.as_slice()?, &[0, 7, 5, 1]);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    #[inline]
    pub fn view_mut<T: Element>(&mut self) -> Result<TensorViewMut<'_, T>, Error> {
        let exclusive = self.is_exclusive();
        // A tensor imported from Python claims its bytes too (out of line).
        #[cfg(feature = "pyo3")]
        if self.is_python_import() {
            return self.view_mut_claimed(exclusive);
        }
        // SAFETY: `checked` refuses a READ_ONLY tensor (writable), so the memory is
        // writable (from_raw's contract, or memory this crate owns); the struct and its
        // arrays stay valid while self is borrowed; &mut self excludes every other view of
        // this tensor for the lifetime of the result. `exclusive` is only true for memory
        // nothing outside this tensor can reach.
        unsafe { TensorViewMut::checked(Viewed::Managed(self.raw()), true, exclusive, no_claim) }
    }

    /// [`view`](Self::view) of a tensor imported from Python: the view's check, then its
    /// bytes claimed for reading until the tensor drops (python/borrows.rs), the span the
    /// check learned, so that no writer elsewhere in safe Rust changes what the view lends,
    /// before any element is read (a bool view reads them). A view refused after the claim
    /// keeps it: another thread's view may rely on it.
    #[cfg(feature = "pyo3")]
    #[inline(never)]
    fn view_claimed<T: Element>(&self) -> Result<TensorView<'_, T>, Error> {
        let claim = |t: &_, flags, len, reach| {
            let size = std::mem::size_of::<T>();
            self.claim_for_checked_view(false, (t, flags, len, reach), size)
                .map(drop)
        };
        // SAFETY: as `view`'s.
        unsafe { TensorView::checked(Viewed::Managed(self.raw()), claim) }
    }

    /// [`view_mut`](Self::view_mut) of a tensor imported from Python: the view's check, then
    /// its bytes claimed for writing until the tensor drops, so that no other borrow in safe
    /// Rust reads what the view changes, before any element is read; a view refused after the
    /// claim gives it back (one refused by the check claims nothing).
    #[cfg(feature = "pyo3")]
    #[inline(never)]
    fn view_mut_claimed<T: Element>(
        &mut self,
        exclusive: bool,
    ) -> Result<TensorViewMut<'_, T>, Error> {
        let mut before = None;
        let claim = |t: &_, flags, len, reach| {
            let size = std::mem::size_of::<T>();
            before = Some(self.claim_for_checked_view(true, (t, flags, len, reach), size)?);
            Ok(())
        };
        // SAFETY: as `view_mut`'s.
        let view =
            unsafe { TensorViewMut::checked(Viewed::Managed(self.raw()), true, exclusive, claim) };
        if let (Err(_), Some(before)) = (&view, before) {
            // A writer refused after its claim (a bool byte) gives it back: &mut self, so no
            // other view relies on it.
            self.unclaim_for_view(before);
        }
        view
    }
}
