// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Export a Vec as a DLPack tensor, hand the raw pointer through the C facade (as a C, C++
//! or Python consumer would see it), take it back, view it, mutate it, and show the two
//! most common refusals: a write to a READ_ONLY tensor and a dtype mismatch.
//!
//! Run with `cargo run --example roundtrip`.

use dlpack_mdspan::{sys, Flags, ManagedTensor, Status};

fn main() -> Result<(), dlpack_mdspan::Error> {
    let v = dlpack_mdspan::version();
    println!(
        "dlpack_mdspan {}.{}.{} (DLPack {}.{})",
        v.major, v.minor, v.patch, v.dlpack_major, v.dlpack_minor
    );

    // 1. Export: the Vec moves into the tensor; its deleter will drop it exactly once.
    let t = ManagedTensor::from_vec((1..=6).map(f64::from).collect(), &[2, 3])?;
    println!(
        "exported: dtype {}, shape {:?}, strides {:?}, device {:?}, flags {:?}",
        t.dtype(),
        t.shape()?,
        t.strides()?,
        t.device(),
        t.flags()
    );

    // 2. Hand the raw pointer to C. Here "C" is the facade itself: it checks the tensor the
    //    way a C consumer would, then converts it to a legacy DLManagedTensor and back, so
    //    the pointer really crosses the FFI boundary twice.
    let raw: *mut sys::DLManagedTensorVersioned = t.into_raw();
    let mut req = std::mem::MaybeUninit::<sys::dlpm_requirements>::uninit();
    // SAFETY: dlpm_requirements_init fully initialises `req` when it returns DLPM_OK
    // (asserted before assume_init); `raw` is live.
    let status = unsafe {
        let init = sys::dlpm_requirements_init(req.as_mut_ptr(), sys::DLPM_REQUIREMENTS_VERSION);
        assert_eq!(init, sys::DLPM_OK);
        let mut req = req.assume_init();
        req.ndim = 2;
        req.order = b'C' as std::ffi::c_char;
        sys::dlpm_check_managed(raw, &req)
    };
    println!(
        "C checked the tensor: status {status} (DLPM_OK = {})",
        sys::DLPM_OK
    );

    let mut legacy: *mut sys::DLManagedTensor = std::ptr::null_mut();
    // SAFETY: raw is live and ours; on success its ownership moves into `legacy`.
    let status = unsafe { sys::dlpm_to_legacy(raw, &mut legacy) };
    assert_eq!(status, sys::DLPM_OK);
    let mut again: *mut sys::DLManagedTensorVersioned = std::ptr::null_mut();
    // SAFETY: legacy is live and ours; its ownership moves into `again`.
    let status = unsafe { sys::dlpm_from_legacy_writable(legacy, &mut again) };
    assert_eq!(status, sys::DLPM_OK);

    // 3. Take it back: the facade checks the DLPack version.
    // SAFETY: `again` is a live tensor whose ownership is handed back to Rust, once.
    let mut t = unsafe { ManagedTensor::from_raw(again) }?;

    // 4. View it.
    {
        let view = t.view::<f64>()?;
        println!(
            "shape {:?}, strides {:?}, [1, 2] = {:?}",
            view.shape(),
            view.strides(),
            view.get(&[1, 2])
        );
    }

    // 5. Mutate it. It came back through C, so this crate cannot prove nobody else holds
    //    the memory: `set` (raw-pointer writes) is allowed, `&mut` access is not.
    {
        let mut view = t.view_mut::<f64>()?;
        for i in 0..2 {
            for j in 0..3 {
                let x = *view.get(&[i, j]).expect("in bounds");
                view.set(&[i, j], x * 10.0)?;
            }
        }
        let refused = view.get_mut(&[0, 0]).unwrap_err();
        println!("get_mut on a tensor from C: {refused}");
    }
    println!("after mutation: {:?}", t.view::<f64>()?.as_slice()?);

    // 6. A READ_ONLY tensor refuses mutable views.
    let mut frozen = ManagedTensor::build_from_vec(vec![1u8, 2, 3], &[3])
        .flags(Flags::READ_ONLY)
        .finish()?;
    let err = frozen.view_mut::<u8>().unwrap_err();
    assert_eq!(err.status(), Status::READ_ONLY);
    println!("READ_ONLY: {err}");

    // 7. A dtype mismatch names both dtypes.
    let err = t.view::<f32>().unwrap_err();
    assert_eq!(err.status(), Status::DTYPE_MISMATCH);
    println!("dtype: {err}");

    Ok(()) // `t` and `frozen` are dropped here: each deleter runs once.
}
