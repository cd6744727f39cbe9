// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! `#[repr(C)]` mirrors of the DLPack 1.3 structs (`<dlpack/dlpack.h>`) and of the
//! facade's own types and constants (`ffi/include/dlpack_mdspan.h`).
//!
//! This file is also read by cbindgen (see `cbindgen.toml`), which the C++ test build
//! (`tests/rust_abi`) runs to turn it into `dlpack_mdspan_sys_abi.hpp`; the C++ test
//! `tests/rust_abi/abi.test.cpp` then checks every size, alignment, field offset and
//! constant against the real C headers. Keep it plain Rust 2021 (no `unsafe extern`
//! blocks, no attributes cbindgen 0.24 cannot parse, no C string literals).
//!
//! The C enums (`DLDeviceType`, `DLDataTypeCode`) are integer type aliases with constants,
//! not Rust enums: a newer producer may send a value this crate does not know, and that
//! value must be representable.

use core::ffi::{c_char, c_void};

// ---- DLPack: version -------------------------------------------------------------------

/// The DLPack major version these mirrors follow (`DLPACK_MAJOR_VERSION`).
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// The DLPack minor version these mirrors follow (`DLPACK_MINOR_VERSION`).
pub const DLPACK_MINOR_VERSION: u32 = 3;

/// `DLPackVersion`: the ABI version of a `DLManagedTensorVersioned`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DLPackVersion {
    /// DLPack major version.
    pub major: u32,
    /// DLPack minor version.
    pub minor: u32,
}

// ---- DLPack: devices -------------------------------------------------------------------

/// `DLDeviceType`, a C enum of `int32_t` size. Values not listed below are representable.
pub type DLDeviceType = i32;

/// CPU device.
pub const kDLCPU: DLDeviceType = 1;
/// CUDA GPU device.
pub const kDLCUDA: DLDeviceType = 2;
/// Pinned CUDA CPU memory (`cudaMallocHost`).
pub const kDLCUDAHost: DLDeviceType = 3;
/// OpenCL device.
pub const kDLOpenCL: DLDeviceType = 4;
/// Vulkan buffer.
pub const kDLVulkan: DLDeviceType = 7;
/// Metal (Apple GPU).
pub const kDLMetal: DLDeviceType = 8;
/// Verilog simulator buffer.
pub const kDLVPI: DLDeviceType = 9;
/// ROCm GPU.
pub const kDLROCM: DLDeviceType = 10;
/// Pinned ROCm CPU memory (`hipMallocHost`).
pub const kDLROCMHost: DLDeviceType = 11;
/// Reserved extension device type.
pub const kDLExtDev: DLDeviceType = 12;
/// CUDA managed (unified) memory (`cudaMallocManaged`).
pub const kDLCUDAManaged: DLDeviceType = 13;
/// Unified shared memory of oneAPI (SYCL).
pub const kDLOneAPI: DLDeviceType = 14;
/// WebGPU.
pub const kDLWebGPU: DLDeviceType = 15;
/// Qualcomm Hexagon DSP.
pub const kDLHexagon: DLDeviceType = 16;
/// Microsoft MAIA.
pub const kDLMAIA: DLDeviceType = 17;
/// AWS Trainium.
pub const kDLTrn: DLDeviceType = 18;

/// `DLDevice`: where a tensor's memory lives.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDevice {
    /// The device type (`kDLCPU`, `kDLCUDA`, ...).
    pub device_type: DLDeviceType,
    /// The device ordinal (0 for the CPU).
    pub device_id: i32,
}

// ---- DLPack: data types ----------------------------------------------------------------

/// `DLDataTypeCode`. In `DLDataType` the code is stored as a `uint8_t`, so the codes are
/// `u8` here. Values not listed below are representable.
pub type DLDataTypeCode = u8;

/// Signed integer.
pub const kDLInt: DLDataTypeCode = 0;
/// Unsigned integer.
pub const kDLUInt: DLDataTypeCode = 1;
/// IEEE floating point.
pub const kDLFloat: DLDataTypeCode = 2;
/// Opaque handle type, reserved for testing purposes.
pub const kDLOpaqueHandle: DLDataTypeCode = 3;
/// bfloat16.
pub const kDLBfloat: DLDataTypeCode = 4;
/// Complex number (C/C++/Python layout: compact struct per complex number).
pub const kDLComplex: DLDataTypeCode = 5;
/// Boolean.
pub const kDLBool: DLDataTypeCode = 6;
/// FP8 e3m4.
pub const kDLFloat8_e3m4: DLDataTypeCode = 7;
/// FP8 e4m3.
pub const kDLFloat8_e4m3: DLDataTypeCode = 8;
/// FP8 e4m3b11fnuz.
pub const kDLFloat8_e4m3b11fnuz: DLDataTypeCode = 9;
/// FP8 e4m3fn.
pub const kDLFloat8_e4m3fn: DLDataTypeCode = 10;
/// FP8 e4m3fnuz.
pub const kDLFloat8_e4m3fnuz: DLDataTypeCode = 11;
/// FP8 e5m2.
pub const kDLFloat8_e5m2: DLDataTypeCode = 12;
/// FP8 e5m2fnuz.
pub const kDLFloat8_e5m2fnuz: DLDataTypeCode = 13;
/// FP8 e8m0fnu.
pub const kDLFloat8_e8m0fnu: DLDataTypeCode = 14;
/// FP6 e2m3fn.
pub const kDLFloat6_e2m3fn: DLDataTypeCode = 15;
/// FP6 e3m2fn.
pub const kDLFloat6_e3m2fn: DLDataTypeCode = 16;
/// FP4 e2m1fn.
pub const kDLFloat4_e2m1fn: DLDataTypeCode = 17;

/// `DLDataType`: element type as (code, bits, lanes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDataType {
    /// Type code (`kDLInt`, `kDLFloat`, ...).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Number of lanes (1 for scalars).
    pub lanes: u16,
}

// ---- DLPack: tensors -------------------------------------------------------------------

/// `DLTensor`: a plain, non-owning tensor description.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLTensor {
    /// Opaque data pointer (device memory for device tensors).
    pub data: *mut c_void,
    /// The device of the tensor.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// The element type.
    pub dtype: DLDataType,
    /// `ndim` extents; may be NULL when `ndim` is 0.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or NULL for compact row-major.
    pub strides: *mut i64,
    /// Offset in bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// `DLManagedTensor`: the legacy (pre-1.0) owning tensor.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// Producer context, for the deleter.
    pub manager_ctx: *mut c_void,
    /// Destructor, called exactly once by the last owner; may be NULL.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write to the data.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`: the data is a copy, exclusively the consumer's to mutate.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 2;
/// `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`: sub-byte elements occupy a whole byte each.
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 4;

/// `DLManagedTensorVersioned`: the versioned (DLPack >= 1.0) owning tensor.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// ABI version; a consumer must check `major` before reading any other field.
    pub version: DLPackVersion,
    /// Producer context, for the deleter.
    pub manager_ctx: *mut c_void,
    /// Destructor, called exactly once by the last owner; may be NULL.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*` bits.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

// ---- the facade: status codes ----------------------------------------------------------

/// `dlpm_status`: 0 is success, every other value names one failure.
pub type dlpm_status = i32;

/// Success.
pub const DLPM_OK: dlpm_status = 0;
/// A required pointer argument was NULL.
pub const DLPM_E_NULL_POINTER: dlpm_status = 1;
/// An extent does not fit the index type.
pub const DLPM_E_EXTENT_OVERFLOW: dlpm_status = 2;
/// A stride cannot be used in address arithmetic or does not fit the index type.
pub const DLPM_E_STRIDE_OVERFLOW: dlpm_status = 3;
/// The layout is not strided.
pub const DLPM_E_NOT_STRIDED: dlpm_status = 4;
/// The device type is not accepted.
pub const DLPM_E_DEVICE_MISMATCH: dlpm_status = 5;
/// The device ordinal is not the required one.
pub const DLPM_E_DEVICE_ID_MISMATCH: dlpm_status = 6;
/// The rank is not the required one.
pub const DLPM_E_NDIM_MISMATCH: dlpm_status = 7;
/// The rank is outside 0..=64.
pub const DLPM_E_INVALID_NDIM: dlpm_status = 8;
/// The dtype is not the required one.
pub const DLPM_E_DTYPE_MISMATCH: dlpm_status = 9;
/// The dtype is malformed.
pub const DLPM_E_INVALID_DTYPE: dlpm_status = 10;
/// `shape` is NULL while `ndim > 0`.
pub const DLPM_E_NULL_SHAPE: dlpm_status = 11;
/// An extent is negative.
pub const DLPM_E_NEGATIVE_EXTENT: dlpm_status = 12;
/// An extent differs from the required one.
pub const DLPM_E_SHAPE_MISMATCH: dlpm_status = 13;
/// `data` is NULL while the tensor has elements.
pub const DLPM_E_NULL_DATA: dlpm_status = 14;
/// `strides` is NULL and explicit strides are required.
pub const DLPM_E_NULL_STRIDES: dlpm_status = 15;
/// The strides are not the compact ones the layout needs.
pub const DLPM_E_NON_COMPACT_STRIDES: dlpm_status = 16;
/// A stride is zero or negative where positive strides are needed.
pub const DLPM_E_NON_POSITIVE_STRIDE: dlpm_status = 17;
/// Two dimensions address the same elements.
pub const DLPM_E_OVERLAPPING_STRIDES: dlpm_status = 18;
/// The element count or index span overflows `int64_t`.
pub const DLPM_E_SPAN_OVERFLOW: dlpm_status = 19;
/// `byte_offset` is out of range.
pub const DLPM_E_BYTE_OFFSET_OVERFLOW: dlpm_status = 20;
/// `byte_offset` is not a multiple of the element size.
pub const DLPM_E_MISALIGNED_BYTE_OFFSET: dlpm_status = 21;
/// `data + byte_offset` is not aligned as required.
pub const DLPM_E_MISALIGNED_DATA: dlpm_status = 22;
/// An extent is not a multiple of the required divisor.
pub const DLPM_E_DIVISIBILITY: dlpm_status = 23;
/// Sub-byte storage cannot be viewed with the requested element type.
pub const DLPM_E_SUBBYTE_NOT_VIEWABLE: dlpm_status = 24;
/// The layout has no unique answer (e.g. several unit strides).
pub const DLPM_E_AMBIGUOUS_LAYOUT: dlpm_status = 25;
/// No candidate type matches the dtype.
pub const DLPM_E_NO_MATCHING_TYPE: dlpm_status = 26;
/// The tensor is READ_ONLY and a writable one is required.
pub const DLPM_E_READ_ONLY: dlpm_status = 27;
/// The DLPack major version is not this library's.
pub const DLPM_E_VERSION_MISMATCH: dlpm_status = 28;
/// An argument is invalid (e.g. an index out of bounds).
pub const DLPM_E_INVALID_ARGUMENT: dlpm_status = 29;
/// An allocation failed.
pub const DLPM_E_OUT_OF_MEMORY: dlpm_status = 30;
/// An unexpected C++ exception was caught at the boundary.
pub const DLPM_E_INTERNAL: dlpm_status = 31;
/// `shape` or `strides` is not aligned for `int64_t`.
pub const DLPM_E_MISALIGNED_METADATA: dlpm_status = 32;
/// An options struct's `version` field is not one this library knows.
pub const DLPM_E_UNSUPPORTED_VERSION: dlpm_status = 33;
/// The producer reported a failure of its own (e.g. a Python exception, which is left set).
pub const DLPM_E_PRODUCER_FAILED: dlpm_status = 34;

// ---- the facade: limits ----------------------------------------------------------------

/// `DLPM_MAX_NDIM`: the largest rank the library accepts (the C++ core's `max_ndim`): every
/// `ndim` is in `0..=DLPM_MAX_NDIM`. Size index and stride arrays with it (the `capacity` of
/// `dlpm_layout` and `dlpm_stride_order`).
pub const DLPM_MAX_NDIM: i32 = 64;

/// `DLPM_INLINE_OWNER_CAPACITY`: the most bytes of owner state `dlpm_managed_new_inline`
/// keeps inside the tensor's own allocation.
pub const DLPM_INLINE_OWNER_CAPACITY: i32 = 32;

/// `DLPM_INLINE_OWNER_ALIGNMENT`: the alignment, in bytes, of the owner state
/// `dlpm_managed_new_inline` keeps (and passes to the release function).
pub const DLPM_INLINE_OWNER_ALIGNMENT: i32 = 8;

/// `DLPM_BUFFER_SIZE_UNKNOWN`: `dlpm_managed_new_inline`'s `buffer_size` for a buffer whose
/// size the exporter does not know (not checked).
pub const DLPM_BUFFER_SIZE_UNKNOWN: u64 = u64::MAX;

// ---- the facade: structs ---------------------------------------------------------------

/// `dlpm_version_info`: versions of the library and of the DLPack headers it was built with.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct dlpm_version_info {
    /// Library major version.
    pub major: i32,
    /// Library minor version.
    pub minor: i32,
    /// Library patch version.
    pub patch: i32,
    /// DLPack major version of the headers the library was built with.
    pub dlpack_major: u32,
    /// DLPack minor version of the headers the library was built with.
    pub dlpack_minor: u32,
}

/// `DLPM_REQUIREMENTS_VERSION`: the layout of `dlpm_requirements` these mirrors describe.
/// Pass it to `dlpm_requirements_init` (git2's `*_options_init` convention), or store it
/// in `dlpm_requirements::version` when building the struct by hand. 0.2.0 publishes
/// version 1; a later version appends fields.
pub const DLPM_REQUIREMENTS_VERSION: u32 = 1;

/// `DLPM_ANY_LEADING_DIM`: `dlpm_layout_requirements::leading_dim` when no leading
/// dimension is required.
pub const DLPM_ANY_LEADING_DIM: i32 = i32::MIN;

/// `DLPM_NULL_STRIDES_ROW_MAJOR`: `dlpm_requirements::null_strides` reading NULL strides
/// (ndim > 0) as compact row-major, as producers before DLPack 1.2 mean them (the default).
pub const DLPM_NULL_STRIDES_ROW_MAJOR: i32 = 0;

/// `DLPM_NULL_STRIDES_REJECT`: `dlpm_requirements::null_strides` refusing NULL strides
/// (ndim > 0) with `DLPM_E_NULL_STRIDES`. The library reads any value other than the two
/// constants as this one.
pub const DLPM_NULL_STRIDES_REJECT: i32 = 1;

/// `dlpm_layout_requirements`: CuTe DSL's layout vocabulary, `dlpm_requirements::layout`.
/// Each array, when not NULL, has one entry per mode of the tensor checked.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dlpm_layout_requirements {
    /// `DLPM_ANY_LEADING_DIM`, or the mode whose stride must be 1 (negative: counted from
    /// the last mode). CuTe DSL's `leading_dim`.
    pub leading_dim: i32,
    /// Nonzero, with `stride_order`: the tensor must be compact in that order.
    pub compact: i32,
    /// NULL, or the tensor's modes from outermost to innermost (CuTe's `stride_order`,
    /// PyTorch's `dim_order`).
    pub stride_order: *const i32,
    /// NULL, or a divisor per mode of its extent (0 or 1: free).
    pub shape_divisors: *const i64,
    /// NULL, or a divisor per mode of its stride (modes of extent 1 are free).
    pub stride_divisors: *const i64,
}

/// `dlpm_requirements`: what a consumer requires of a tensor, the C++ core's
/// `tensor_requirements` under the same field names (`i32` where C++ has a `bool` or the
/// null strides enum); `dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION)` sets every
/// field to "anything".
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dlpm_requirements {
    /// `DLPM_REQUIREMENTS_VERSION`; set by `dlpm_requirements_init`. Any other value is
    /// refused by `dlpm_check` / `dlpm_check_managed` with `DLPM_E_UNSUPPORTED_VERSION`.
    pub version: u32,
    /// Nonzero: the dtype must equal `dtype` exactly.
    pub check_dtype: i32,
    /// The required dtype when `check_dtype` is nonzero.
    pub dtype: DLDataType,
    /// The required rank (0..=64), or -1 for any.
    pub ndim: i32,
    /// NULL, or `ndim` extents where -1 is a wildcard (needs `ndim >= 0`).
    pub shape: *const i64,
    /// `'C'`, `'F'`, `'A'` (either), or 0 for any layout.
    pub order: c_char,
    /// Accepted `DLDeviceType` values, or NULL for any.
    pub device_types: *const i32,
    /// Number of entries in `device_types`.
    pub num_device_types: i32,
    /// The required device ordinal, or -1 for any.
    pub device_id: i32,
    /// Required alignment of `data + byte_offset` in bytes (a power of two), or 0.
    pub min_alignment: u64,
    /// Nonzero: refuse READ_ONLY managed tensors.
    pub writable: i32,
    /// `DLPM_NULL_STRIDES_ROW_MAJOR` or `DLPM_NULL_STRIDES_REJECT`: what NULL strides
    /// (ndim > 0) mean.
    pub null_strides: i32,
    /// CuTe DSL's layout vocabulary.
    pub layout: dlpm_layout_requirements,
}

/// `dlpm_release_fn`: called exactly once, with `ctx`, when the last owner of a
/// `dlpm_managed_new` tensor lets go. May run on any thread; must not unwind.
pub type dlpm_release_fn = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

/// Why a managed tensor is READ_ONLY (`dlpm_managed_read_only_cause`): not READ_ONLY.
pub const DLPM_READ_ONLY_NONE: i32 = 0;
/// Flagged by its producer or maker: a legacy export is refused.
pub const DLPM_READ_ONLY_FLAGGED: i32 = 1;
/// From a legacy tensor, which cannot say: a legacy export is allowed.
pub const DLPM_READ_ONLY_LEGACY_UNKNOWN: i32 = 2;
/// The producer forbids writes for a reason DLPack cannot carry.
pub const DLPM_READ_ONLY_PRODUCER_FORBIDS: i32 = 3;

/// `DLPM_CHECKED_TENSOR_VERSION`: the layout of `dlpm_checked_tensor` these mirrors
/// describe; the caller stores it in `dlpm_checked_tensor::version` before
/// `dlpm_check_tensor`.
pub const DLPM_CHECKED_TENSOR_VERSION: u32 = 1;

/// `dlpm_checked_tensor`: a tensor the library has checked and what the check learned (the
/// C++ core's `checked_tensor`), filled by `dlpm_check_tensor`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dlpm_checked_tensor {
    /// `DLPM_CHECKED_TENSOR_VERSION`, set by the caller.
    pub version: u32,
    /// Nonzero: C-contiguous (size-1 dimensions may have any stride; an empty tensor is).
    pub row_major: i32,
    /// The tensor checked.
    pub tensor: *const DLTensor,
    /// The flags it was checked with.
    pub flags: u64,
    /// Number of elements (0 for an empty tensor).
    pub numel: i64,
    /// Bytes per element as stored; 0 when packed sub-byte elements share bytes.
    pub itemsize: u64,
    /// Smallest element index reached from the first element.
    pub lowest_index: i64,
    /// Largest element index reached.
    pub highest_index: i64,
    /// Nonzero: the tensor's strides are NULL and read as row-major.
    pub implicit_strides: i32,
    /// The tensor's ndim: the entries of `strides` written.
    pub ndim: i32,
    /// The strides in elements as the library reads them (NULL ones resolved row-major).
    pub strides: [i64; 64],
}

/// `DLPM_MANAGED_OPTIONS_VERSION`: the layout of `dlpm_managed_options` this mirror describes.
pub const DLPM_MANAGED_OPTIONS_VERSION: u32 = 1;

/// `dlpm_managed_options`: what `dlpm_managed_new_from` needs besides the description (the
/// versioned form of `dlpm_managed_new`'s scalar arguments). Start from
/// `DLPM_MANAGED_OPTIONS_INIT`, which reads the description as `dlpm_managed_new` does.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dlpm_managed_options {
    /// `DLPM_MANAGED_OPTIONS_VERSION`, set by the caller.
    pub version: u32,
    /// 0: `dlpm_managed_new`'s reading (NULL strides row-major, explicit ones kept as given);
    /// `b'C'` or `b'F'`: `dlpm_managed_new_ordered`'s; any other is refused.
    pub order: c_char,
    /// Stored in the tensor as given.
    pub flags: u64,
    /// Called with `ctx` exactly once when the tensor is deleted; may be `None`.
    pub release: dlpm_release_fn,
    /// `release`'s argument.
    pub ctx: *mut c_void,
}

/// `DLPM_MESSAGE_SEND` and `DLPM_MESSAGE_RECEIVE`: `dlpm_plan_message`'s direction.
pub const DLPM_MESSAGE_SEND: i32 = 0;
/// See [`DLPM_MESSAGE_SEND`].
pub const DLPM_MESSAGE_RECEIVE: i32 = 1;

/// `DLPM_MESSAGE_PLAN_VERSION`: the layout of `dlpm_message_plan` these mirrors describe.
pub const DLPM_MESSAGE_PLAN_VERSION: u32 = 1;

/// `dlpm_message_plan`: how a tensor travels as a message (the C++ core's `message_plan`),
/// filled by `dlpm_plan_message`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dlpm_message_plan {
    /// `DLPM_MESSAGE_PLAN_VERSION`, set by the caller.
    pub version: u32,
    /// Byte loops in `extents[..loops]` and `byte_steps[..loops]`, outermost first.
    pub loops: i32,
    /// Element 0's address.
    pub element0: *mut c_void,
    /// Elements side by side in the innermost run (0: empty).
    pub block: i64,
    /// The lowest byte reached, relative to `element0`.
    pub lower_bound: i64,
    /// Bytes from the lowest reached to one past the highest.
    pub extent: i64,
    /// The element's dtype.
    pub dtype: DLDataType,
    /// The element's bytes as stored.
    pub itemsize: u64,
    /// The loops' extents.
    pub extents: [i64; 64],
    /// The loops' steps in bytes.
    pub byte_steps: [i64; 64],
}
