// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The versioned `dlpm_requirements` struct and the validation of requirements, through the
//! raw bindings (the safe API builds its requirements internally, always valid), plus the
//! two status codes they brought.

mod common;

use std::ptr;

use common::{last_error, Spec};
use dlpack_mdspan::{sys, DataType, ManagedTensor, Status};

fn init() -> sys::dlpm_requirements {
    let mut req = std::mem::MaybeUninit::<sys::dlpm_requirements>::uninit();
    // SAFETY: req is writable; it is read only after DLPM_OK, which means fully written.
    let status =
        unsafe { sys::dlpm_requirements_init(req.as_mut_ptr(), sys::DLPM_REQUIREMENTS_VERSION) };
    assert_eq!(status, sys::DLPM_OK);
    // SAFETY: initialised (DLPM_OK).
    unsafe { req.assume_init() }
}

/// A field pattern no init would write, to see whether a refused init touched the struct.
fn sentinel() -> sys::dlpm_requirements {
    sys::dlpm_requirements {
        version: 0xdead,
        check_dtype: 77,
        dtype: sys::DLDataType {
            code: 9,
            bits: 9,
            lanes: 9,
        },
        ndim: 5,
        shape: ptr::null(),
        order: b'Z' as std::ffi::c_char,
        device_types: ptr::null(),
        num_device_types: 3,
        device_id: 42,
        min_alignment: 64,
        writable: 1,
        null_strides: sys::DLPM_NULL_STRIDES_REJECT,
        layout: sys::dlpm_layout_requirements {
            leading_dim: 9,
            compact: 9,
            stride_order: ptr::null(),
            shape_divisors: ptr::null(),
            stride_divisors: ptr::null(),
        },
    }
}

fn same(a: &sys::dlpm_requirements, b: &sys::dlpm_requirements) -> bool {
    (
        a.version,
        a.check_dtype,
        a.dtype,
        a.ndim,
        a.shape,
        a.order,
        a.device_types,
        a.num_device_types,
        a.device_id,
        a.min_alignment,
        a.writable,
        a.null_strides,
    ) == (
        b.version,
        b.check_dtype,
        b.dtype,
        b.ndim,
        b.shape,
        b.order,
        b.device_types,
        b.num_device_types,
        b.device_id,
        b.min_alignment,
        b.writable,
        b.null_strides,
    ) && (a.layout.leading_dim, a.layout.compact) == (b.layout.leading_dim, b.layout.compact)
}

#[test]
fn init_sets_the_version_and_the_defaults() {
    let req = init();
    assert_eq!(sys::DLPM_REQUIREMENTS_VERSION, 1);
    assert_eq!(req.version, sys::DLPM_REQUIREMENTS_VERSION);
    assert_eq!((req.check_dtype, req.ndim, req.device_id), (0, -1, -1));
    assert!(req.shape.is_null() && req.device_types.is_null());
    assert_eq!(
        (req.order, req.num_device_types, req.min_alignment),
        (0, 0, 0)
    );
    assert_eq!(
        (req.writable, req.null_strides),
        (0, sys::DLPM_NULL_STRIDES_ROW_MAJOR)
    );
    assert_eq!(
        (req.layout.leading_dim, req.layout.compact),
        (sys::DLPM_ANY_LEADING_DIM, 0)
    );
    assert!(
        req.layout.stride_order.is_null()
            && req.layout.shape_divisors.is_null()
            && req.layout.stride_divisors.is_null()
    );
}

#[test]
fn init_refuses_unknown_versions_and_leaves_the_struct_alone() {
    for version in [0u32, 2, u32::MAX] {
        let mut req = sentinel();
        // SAFETY: req is a valid, writable struct.
        let status = unsafe { sys::dlpm_requirements_init(&mut req, version) };
        assert_eq!(status, sys::DLPM_E_UNSUPPORTED_VERSION, "version {version}");
        assert!(
            same(&req, &sentinel()),
            "version {version}: *req was written"
        );
        assert!(!last_error().is_empty());
    }
    // SAFETY: NULL is refused, never written.
    let status =
        unsafe { sys::dlpm_requirements_init(ptr::null_mut(), sys::DLPM_REQUIREMENTS_VERSION) };
    assert_eq!(status, sys::DLPM_E_NULL_POINTER);
}

/// A valid 2x3 f32 tensor (bare and managed) and what `dlpm_check` / `dlpm_check_managed`
/// say about it under `req`; both must agree.
fn check(req: &sys::dlpm_requirements) -> sys::dlpm_status {
    let t = ManagedTensor::from_vec(vec![0f32; 6], &[2, 3]).unwrap();
    // SAFETY: t is live for both calls; req is a valid struct whose pointers (if any) point
    // to live arrays of the stated lengths.
    let (bare, managed) = unsafe {
        (
            sys::dlpm_check(t.dl_tensor(), req),
            sys::dlpm_check_managed(t.as_ptr(), req),
        )
    };
    assert_eq!(bare, managed, "dlpm_check and dlpm_check_managed disagree");
    bare
}

#[test]
fn checks_refuse_a_requirements_struct_of_an_unknown_version() {
    assert_eq!(check(&init()), sys::DLPM_OK);
    for version in [0u32, 2] {
        let mut req = init();
        req.version = version;
        assert_eq!(
            check(&req),
            sys::DLPM_E_UNSUPPORTED_VERSION,
            "version {version}"
        );
        assert!(!last_error().is_empty());
    }
}

#[test]
fn invalid_requirements_are_invalid_arguments() {
    let shape = [2i64, 3];
    let devices = [sys::kDLCPU];
    let cases: Vec<(&str, sys::dlpm_requirements)> = vec![
        ("ndim = -2", sys::dlpm_requirements { ndim: -2, ..init() }),
        ("ndim = 65", sys::dlpm_requirements { ndim: 65, ..init() }),
        (
            "shape with ndim = -1",
            sys::dlpm_requirements {
                shape: shape.as_ptr(),
                ..init()
            },
        ),
        (
            "num_device_types = -1",
            sys::dlpm_requirements {
                device_types: devices.as_ptr(),
                num_device_types: -1,
                ..init()
            },
        ),
        (
            "order = 'X'",
            sys::dlpm_requirements {
                order: b'X' as std::ffi::c_char,
                ..init()
            },
        ),
        (
            "min_alignment = 3",
            sys::dlpm_requirements {
                min_alignment: 3,
                ..init()
            },
        ),
        (
            "min_alignment = 24",
            sys::dlpm_requirements {
                min_alignment: 24,
                ..init()
            },
        ),
    ];
    for (what, req) in &cases {
        assert_eq!(check(req), sys::DLPM_E_INVALID_ARGUMENT, "{what}");
        assert!(!last_error().is_empty(), "{what}");
    }
}

#[test]
fn valid_requirements_still_check_the_tensor() {
    let shape = [2i64, -1];
    let wrong_shape = [2i64, 4];
    let devices = [sys::kDLCPU];
    // Accepted.
    for (what, req) in [
        (
            "ndim = 2 and a wildcard shape",
            sys::dlpm_requirements {
                ndim: 2,
                shape: shape.as_ptr(),
                ..init()
            },
        ),
        (
            "order 'C'",
            sys::dlpm_requirements {
                order: b'C' as std::ffi::c_char,
                ..init()
            },
        ),
        (
            "order 'A'",
            sys::dlpm_requirements {
                order: b'A' as std::ffi::c_char,
                ..init()
            },
        ),
        (
            "min_alignment = 4",
            sys::dlpm_requirements {
                min_alignment: 4,
                ..init()
            },
        ),
        (
            "min_alignment = 1",
            sys::dlpm_requirements {
                min_alignment: 1,
                ..init()
            },
        ),
        (
            "the CPU",
            sys::dlpm_requirements {
                device_types: devices.as_ptr(),
                num_device_types: 1,
                ..init()
            },
        ),
        (
            "no device list",
            sys::dlpm_requirements {
                device_types: ptr::null(),
                num_device_types: 0,
                ..init()
            },
        ),
    ] {
        assert_eq!(check(&req), sys::DLPM_OK, "{what}");
    }
    // Refused, for the tensor's sake.
    assert_eq!(
        check(&sys::dlpm_requirements { ndim: 3, ..init() }),
        sys::DLPM_E_NDIM_MISMATCH
    );
    assert_eq!(
        check(&sys::dlpm_requirements {
            ndim: 2,
            shape: wrong_shape.as_ptr(),
            ..init()
        }),
        sys::DLPM_E_SHAPE_MISMATCH
    );
    assert_eq!(
        check(&sys::dlpm_requirements {
            order: b'F' as std::ffi::c_char,
            ..init()
        }),
        sys::DLPM_E_NON_COMPACT_STRIDES
    );
}

#[test]
fn new_status_codes() {
    assert_eq!(Status::MISALIGNED_METADATA.code(), 32);
    assert_eq!(Status::UNSUPPORTED_VERSION.code(), 33);
    assert_eq!(
        Status::MISALIGNED_METADATA,
        Status(sys::DLPM_E_MISALIGNED_METADATA)
    );
    assert_eq!(
        Status::UNSUPPORTED_VERSION,
        Status(sys::DLPM_E_UNSUPPORTED_VERSION)
    );
    for status in [
        Status::INTERNAL,
        Status::MISALIGNED_METADATA,
        Status::UNSUPPORTED_VERSION,
        Status::PRODUCER_FAILED,
    ] {
        assert_ne!(status.name(), "unknown status", "{status:?}");
    }
    assert_eq!(Status::PRODUCER_FAILED.code(), 34);
    assert_eq!(Status(35).name(), "unknown status");
}

/// `dlpm_to_legacy` refuses a tensor of another DLPack major version and leaves it to the
/// caller (only `version` may be read from such a struct).
#[test]
fn to_legacy_refuses_another_major_version() {
    let mut spec = Spec::new(DataType::F32.0, &[2]);
    spec.version = sys::DLPackVersion { major: 2, minor: 0 };
    let (raw, deleted) = common::versioned(&spec);
    let mut out: *mut sys::DLManagedTensor = ptr::null_mut();
    // SAFETY: raw is live and ours; on failure it stays ours.
    let status = unsafe { sys::dlpm_to_legacy(raw, &mut out) };
    assert_eq!(status, sys::DLPM_E_VERSION_MISMATCH);
    assert!(out.is_null());
    assert_eq!(deleted.get(), 0, "the tensor is still the caller's");
    // SAFETY: raw is still ours; deleted exactly once.
    unsafe { sys::dlpm_managed_delete(raw) };
    assert_eq!(deleted.get(), 1);
}
