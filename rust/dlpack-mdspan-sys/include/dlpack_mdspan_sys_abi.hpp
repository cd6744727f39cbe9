// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Rust #[repr(C)] mirrors of dlpack-mdspan-sys (rust/dlpack-mdspan-sys/src/types.rs),
// as C++ seen by cbindgen. Generated: do not edit; run scripts/check-rust-abi --update.

#ifndef DLPACK_MDSPAN_SYS_ABI_HPP
#define DLPACK_MDSPAN_SYS_ABI_HPP



#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <new>

namespace dlpm_rust_abi {

/// The DLPack major version these mirrors follow (`DLPACK_MAJOR_VERSION`).
constexpr static const uint32_t DLPACK_MAJOR_VERSION = 1;

/// The DLPack minor version these mirrors follow (`DLPACK_MINOR_VERSION`).
constexpr static const uint32_t DLPACK_MINOR_VERSION = 3;

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write to the data.
constexpr static const uint64_t DLPACK_FLAG_BITMASK_READ_ONLY = 1;

/// `DLPACK_FLAG_BITMASK_IS_COPIED`: the data is a copy, exclusively the consumer's to mutate.
constexpr static const uint64_t DLPACK_FLAG_BITMASK_IS_COPIED = 2;

/// `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`: sub-byte elements occupy a whole byte each.
constexpr static const uint64_t DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED = 4;

/// `DLPM_MAX_NDIM`: the largest rank the library accepts (the C++ core's `max_ndim`): every
/// `ndim` is in `0..=DLPM_MAX_NDIM`. Size index and stride arrays with it (the `capacity` of
/// `dlpm_layout` and `dlpm_stride_order`).
constexpr static const int32_t DLPM_MAX_NDIM = 64;

/// `DLPM_INLINE_OWNER_CAPACITY`: the most bytes of owner state `dlpm_managed_new_inline`
/// keeps inside the tensor's own allocation.
constexpr static const int32_t DLPM_INLINE_OWNER_CAPACITY = 32;

/// `DLPM_INLINE_OWNER_ALIGNMENT`: the alignment, in bytes, of the owner state
/// `dlpm_managed_new_inline` keeps (and passes to the release function).
constexpr static const int32_t DLPM_INLINE_OWNER_ALIGNMENT = 8;

/// `DLPM_BUFFER_SIZE_UNKNOWN`: `dlpm_managed_new_inline`'s `buffer_size` for a buffer whose
/// size the exporter does not know (not checked).
constexpr static const uint64_t DLPM_BUFFER_SIZE_UNKNOWN = UINT64_MAX;

/// `DLPM_REQUIREMENTS_VERSION`: the layout of `dlpm_requirements` these mirrors describe.
/// Pass it to `dlpm_requirements_init` (git2's `*_options_init` convention), or store it
/// in `dlpm_requirements::version` when building the struct by hand. Version 2 added the
/// layout fields (`leading_dim` and after); the facade still accepts version 1.
constexpr static const uint32_t DLPM_REQUIREMENTS_VERSION = 2;

/// `DLPM_ANY_LEADING_DIM`: `dlpm_requirements::leading_dim` when no leading dimension is
/// required.
constexpr static const int32_t DLPM_ANY_LEADING_DIM = INT32_MIN;

/// `DLDeviceType`, a C enum of `int32_t` size. Values not listed below are representable.
using DLDeviceType = int32_t;

/// `DLDataTypeCode`. In `DLDataType` the code is stored as a `uint8_t`, so the codes are
/// `u8` here. Values not listed below are representable.
using DLDataTypeCode = uint8_t;

/// `dlpm_status`: 0 is success, every other value names one failure.
using dlpm_status = int32_t;

/// `DLPackVersion`: the ABI version of a `DLManagedTensorVersioned`.
struct DLPackVersion {
  /// DLPack major version.
  uint32_t major;
  /// DLPack minor version.
  uint32_t minor;
};

/// `DLDevice`: where a tensor's memory lives.
struct DLDevice {
  /// The device type (`kDLCPU`, `kDLCUDA`, ...).
  DLDeviceType device_type;
  /// The device ordinal (0 for the CPU).
  int32_t device_id;
};

/// `DLDataType`: element type as (code, bits, lanes).
struct DLDataType {
  /// Type code (`kDLInt`, `kDLFloat`, ...).
  uint8_t code;
  /// Bits per lane.
  uint8_t bits;
  /// Number of lanes (1 for scalars).
  uint16_t lanes;
};

/// `DLTensor`: a plain, non-owning tensor description.
struct DLTensor {
  /// Opaque data pointer (device memory for device tensors).
  void *data;
  /// The device of the tensor.
  DLDevice device;
  /// Number of dimensions.
  int32_t ndim;
  /// The element type.
  DLDataType dtype;
  /// `ndim` extents; may be NULL when `ndim` is 0.
  int64_t *shape;
  /// `ndim` strides in elements, or NULL for compact row-major.
  int64_t *strides;
  /// Offset in bytes from `data` to the first element.
  uint64_t byte_offset;
};

/// `DLManagedTensor`: the legacy (pre-1.0) owning tensor.
struct DLManagedTensor {
  /// The tensor.
  DLTensor dl_tensor;
  /// Producer context, for the deleter.
  void *manager_ctx;
  /// Destructor, called exactly once by the last owner; may be NULL.
  void (*deleter)(DLManagedTensor *self_);
};

/// `DLManagedTensorVersioned`: the versioned (DLPack >= 1.0) owning tensor.
struct DLManagedTensorVersioned {
  /// ABI version; a consumer must check `major` before reading any other field.
  DLPackVersion version;
  /// Producer context, for the deleter.
  void *manager_ctx;
  /// Destructor, called exactly once by the last owner; may be NULL.
  void (*deleter)(DLManagedTensorVersioned *self_);
  /// `DLPACK_FLAG_BITMASK_*` bits.
  uint64_t flags;
  /// The tensor.
  DLTensor dl_tensor;
};

/// `dlpm_version_info`: versions of the library and of the DLPack headers it was built with.
struct dlpm_version_info {
  /// Library major version.
  int32_t major;
  /// Library minor version.
  int32_t minor;
  /// Library patch version.
  int32_t patch;
  /// DLPack major version of the headers the library was built with.
  uint32_t dlpack_major;
  /// DLPack minor version of the headers the library was built with.
  uint32_t dlpack_minor;
};

/// `dlpm_requirements`: what a consumer requires of a tensor;
/// `dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION)` sets every field to
/// "anything".
struct dlpm_requirements {
  /// `DLPM_REQUIREMENTS_VERSION`; set by `dlpm_requirements_init`. Any other value is
  /// refused by `dlpm_check` / `dlpm_check_managed` with `DLPM_E_UNSUPPORTED_VERSION`.
  uint32_t version;
  /// Nonzero: the dtype must equal `dtype` exactly.
  int32_t check_dtype;
  /// The required dtype when `check_dtype` is nonzero.
  DLDataType dtype;
  /// The required rank (0..=64), or -1 for any.
  int32_t ndim;
  /// NULL, or `ndim` extents where -1 is a wildcard (needs `ndim >= 0`).
  const int64_t *shape;
  /// `'C'`, `'F'`, `'A'` (either), or 0 for any layout.
  char order;
  /// Accepted `DLDeviceType` values, or NULL for any.
  const int32_t *device_types;
  /// Number of entries in `device_types`.
  int32_t num_device_types;
  /// The required device ordinal, or -1 for any.
  int32_t device_id;
  /// Required alignment of `data + byte_offset` in bytes (a power of two), or 0.
  uint64_t min_alignment;
  /// Nonzero: refuse READ_ONLY managed tensors.
  int32_t writable;
  /// Nonzero: NULL strides (ndim > 0) are an error instead of row-major.
  int32_t strict_strides;
  /// Version 2: `DLPM_ANY_LEADING_DIM`, or the mode whose stride must be 1 (negative:
  /// counted from the last mode). CuTe DSL's `leading_dim`.
  int32_t leading_dim;
  /// Nonzero, with `stride_order`: the tensor must be compact in that order.
  int32_t compact;
  /// NULL, or the tensor's modes from outermost to innermost (CuTe's `stride_order`,
  /// PyTorch's `dim_order`): one entry per mode of the tensor checked.
  const int32_t *stride_order;
  /// NULL, or a divisor per mode of its extent (0 or 1: free).
  const int64_t *shape_divisors;
  /// NULL, or a divisor per mode of its stride (modes of extent 1 are free).
  const int64_t *stride_divisors;
};

/// `dlpm_release_fn`: called exactly once, with `ctx`, when the last owner of a
/// `dlpm_managed_new` tensor lets go. May run on any thread; must not unwind.
using dlpm_release_fn = void(*)(void *ctx);

/// CPU device.
constexpr static const DLDeviceType kDLCPU = 1;

/// CUDA GPU device.
constexpr static const DLDeviceType kDLCUDA = 2;

/// Pinned CUDA CPU memory (`cudaMallocHost`).
constexpr static const DLDeviceType kDLCUDAHost = 3;

/// OpenCL device.
constexpr static const DLDeviceType kDLOpenCL = 4;

/// Vulkan buffer.
constexpr static const DLDeviceType kDLVulkan = 7;

/// Metal (Apple GPU).
constexpr static const DLDeviceType kDLMetal = 8;

/// Verilog simulator buffer.
constexpr static const DLDeviceType kDLVPI = 9;

/// ROCm GPU.
constexpr static const DLDeviceType kDLROCM = 10;

/// Pinned ROCm CPU memory (`hipMallocHost`).
constexpr static const DLDeviceType kDLROCMHost = 11;

/// Reserved extension device type.
constexpr static const DLDeviceType kDLExtDev = 12;

/// CUDA managed (unified) memory (`cudaMallocManaged`).
constexpr static const DLDeviceType kDLCUDAManaged = 13;

/// Unified shared memory of oneAPI (SYCL).
constexpr static const DLDeviceType kDLOneAPI = 14;

/// WebGPU.
constexpr static const DLDeviceType kDLWebGPU = 15;

/// Qualcomm Hexagon DSP.
constexpr static const DLDeviceType kDLHexagon = 16;

/// Microsoft MAIA.
constexpr static const DLDeviceType kDLMAIA = 17;

/// AWS Trainium.
constexpr static const DLDeviceType kDLTrn = 18;

/// Signed integer.
constexpr static const DLDataTypeCode kDLInt = 0;

/// Unsigned integer.
constexpr static const DLDataTypeCode kDLUInt = 1;

/// IEEE floating point.
constexpr static const DLDataTypeCode kDLFloat = 2;

/// Opaque handle type, reserved for testing purposes.
constexpr static const DLDataTypeCode kDLOpaqueHandle = 3;

/// bfloat16.
constexpr static const DLDataTypeCode kDLBfloat = 4;

/// Complex number (C/C++/Python layout: compact struct per complex number).
constexpr static const DLDataTypeCode kDLComplex = 5;

/// Boolean.
constexpr static const DLDataTypeCode kDLBool = 6;

/// FP8 e3m4.
constexpr static const DLDataTypeCode kDLFloat8_e3m4 = 7;

/// FP8 e4m3.
constexpr static const DLDataTypeCode kDLFloat8_e4m3 = 8;

/// FP8 e4m3b11fnuz.
constexpr static const DLDataTypeCode kDLFloat8_e4m3b11fnuz = 9;

/// FP8 e4m3fn.
constexpr static const DLDataTypeCode kDLFloat8_e4m3fn = 10;

/// FP8 e4m3fnuz.
constexpr static const DLDataTypeCode kDLFloat8_e4m3fnuz = 11;

/// FP8 e5m2.
constexpr static const DLDataTypeCode kDLFloat8_e5m2 = 12;

/// FP8 e5m2fnuz.
constexpr static const DLDataTypeCode kDLFloat8_e5m2fnuz = 13;

/// FP8 e8m0fnu.
constexpr static const DLDataTypeCode kDLFloat8_e8m0fnu = 14;

/// FP6 e2m3fn.
constexpr static const DLDataTypeCode kDLFloat6_e2m3fn = 15;

/// FP6 e3m2fn.
constexpr static const DLDataTypeCode kDLFloat6_e3m2fn = 16;

/// FP4 e2m1fn.
constexpr static const DLDataTypeCode kDLFloat4_e2m1fn = 17;

/// Success.
constexpr static const dlpm_status DLPM_OK = 0;

/// A required pointer argument was NULL.
constexpr static const dlpm_status DLPM_E_NULL_POINTER = 1;

/// An extent does not fit the index type.
constexpr static const dlpm_status DLPM_E_EXTENT_OVERFLOW = 2;

/// A stride cannot be used in address arithmetic or does not fit the index type.
constexpr static const dlpm_status DLPM_E_STRIDE_OVERFLOW = 3;

/// The layout is not strided.
constexpr static const dlpm_status DLPM_E_NOT_STRIDED = 4;

/// The device type is not accepted.
constexpr static const dlpm_status DLPM_E_DEVICE_MISMATCH = 5;

/// The device ordinal is not the required one.
constexpr static const dlpm_status DLPM_E_DEVICE_ID_MISMATCH = 6;

/// The rank is not the required one.
constexpr static const dlpm_status DLPM_E_NDIM_MISMATCH = 7;

/// The rank is outside 0..=64.
constexpr static const dlpm_status DLPM_E_INVALID_NDIM = 8;

/// The dtype is not the required one.
constexpr static const dlpm_status DLPM_E_DTYPE_MISMATCH = 9;

/// The dtype is malformed.
constexpr static const dlpm_status DLPM_E_INVALID_DTYPE = 10;

/// `shape` is NULL while `ndim > 0`.
constexpr static const dlpm_status DLPM_E_NULL_SHAPE = 11;

/// An extent is negative.
constexpr static const dlpm_status DLPM_E_NEGATIVE_EXTENT = 12;

/// An extent differs from the required one.
constexpr static const dlpm_status DLPM_E_SHAPE_MISMATCH = 13;

/// `data` is NULL while the tensor has elements.
constexpr static const dlpm_status DLPM_E_NULL_DATA = 14;

/// `strides` is NULL and explicit strides are required.
constexpr static const dlpm_status DLPM_E_NULL_STRIDES = 15;

/// The strides are not the compact ones the layout needs.
constexpr static const dlpm_status DLPM_E_NON_COMPACT_STRIDES = 16;

/// A stride is zero or negative where positive strides are needed.
constexpr static const dlpm_status DLPM_E_NON_POSITIVE_STRIDE = 17;

/// Two dimensions address the same elements.
constexpr static const dlpm_status DLPM_E_OVERLAPPING_STRIDES = 18;

/// The element count or index span overflows `int64_t`.
constexpr static const dlpm_status DLPM_E_SPAN_OVERFLOW = 19;

/// `byte_offset` is out of range.
constexpr static const dlpm_status DLPM_E_BYTE_OFFSET_OVERFLOW = 20;

/// `byte_offset` is not a multiple of the element size.
constexpr static const dlpm_status DLPM_E_MISALIGNED_BYTE_OFFSET = 21;

/// `data + byte_offset` is not aligned as required.
constexpr static const dlpm_status DLPM_E_MISALIGNED_DATA = 22;

/// An extent is not a multiple of the required divisor.
constexpr static const dlpm_status DLPM_E_DIVISIBILITY = 23;

/// Sub-byte storage cannot be viewed with the requested element type.
constexpr static const dlpm_status DLPM_E_SUBBYTE_NOT_VIEWABLE = 24;

/// The layout has no unique answer (e.g. several unit strides).
constexpr static const dlpm_status DLPM_E_AMBIGUOUS_LAYOUT = 25;

/// No candidate type matches the dtype.
constexpr static const dlpm_status DLPM_E_NO_MATCHING_TYPE = 26;

/// The tensor is READ_ONLY and a writable one is required.
constexpr static const dlpm_status DLPM_E_READ_ONLY = 27;

/// The DLPack major version is not this library's.
constexpr static const dlpm_status DLPM_E_VERSION_MISMATCH = 28;

/// An argument is invalid (e.g. an index out of bounds).
constexpr static const dlpm_status DLPM_E_INVALID_ARGUMENT = 29;

/// An allocation failed.
constexpr static const dlpm_status DLPM_E_OUT_OF_MEMORY = 30;

/// An unexpected C++ exception was caught at the boundary.
constexpr static const dlpm_status DLPM_E_INTERNAL = 31;

/// `shape` or `strides` is not aligned for `int64_t`.
constexpr static const dlpm_status DLPM_E_MISALIGNED_METADATA = 32;

/// An options struct's `version` field is not one this library knows.
constexpr static const dlpm_status DLPM_E_UNSUPPORTED_VERSION = 33;

/// The producer reported a failure of its own (e.g. a Python exception, which is left set).
constexpr static const dlpm_status DLPM_E_PRODUCER_FAILED = 34;

} // namespace dlpm_rust_abi

#endif // DLPACK_MDSPAN_SYS_ABI_HPP
