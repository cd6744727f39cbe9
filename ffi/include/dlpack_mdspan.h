/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/** \file dlpack_mdspan.h
 * dlpack_mdspan C facade: validation, inspection and ownership of DLPack tensors for C,
 * Python extensions, Rust, Go and Julia. Every function is a thin wrapper over the C++
 * core, so the rules are the C++ library's rules.
 *
 * Boundary rules, for every function:
 *   - no C++ exception crosses this boundary: every function is declared noexcept for C++
 *     callers, failures inside the library become a status, and a callback the library
 *     invokes (a tensor's deleter, a dlpm_release_fn) that throws ends the process with a
 *     message on stderr, because no caller could be told and ownership would be lost;
 *   - a NULL pointer argument returns DLPM_E_NULL_POINTER, never crashes;
 *   - out-parameters are written only on success (DLPM_OK);
 *   - on failure, dlpm_last_error() describes what went wrong, on this thread.
 */
#ifndef DLPACK_MDSPAN_H
#define DLPACK_MDSPAN_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(DLPM_BUILDING_SHARED)
#define DLPM_API __declspec(dllexport)
#elif defined(DLPM_USING_SHARED)
#define DLPM_API __declspec(dllimport)
#else
#define DLPM_API
#endif
#else
#define DLPM_API __attribute__((visibility("default")))
#endif

/* For C++ callers every entry point is noexcept: an exception can never unwind out. */
#if defined(__cplusplus)
#define DLPM_NOEXCEPT noexcept
#else
#define DLPM_NOEXCEPT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** A status code. DLPM_OK is 0; every other value names one failure and equals the C++
 * core's dlpack_mdspan::errc value. The values are stable. */
typedef int32_t dlpm_status;

#define DLPM_OK 0
#define DLPM_E_NULL_POINTER 1
#define DLPM_E_EXTENT_OVERFLOW 2
#define DLPM_E_STRIDE_OVERFLOW 3
#define DLPM_E_NOT_STRIDED 4
#define DLPM_E_DEVICE_MISMATCH 5
#define DLPM_E_DEVICE_ID_MISMATCH 6
#define DLPM_E_NDIM_MISMATCH 7
#define DLPM_E_INVALID_NDIM 8
#define DLPM_E_DTYPE_MISMATCH 9
#define DLPM_E_INVALID_DTYPE 10
#define DLPM_E_NULL_SHAPE 11
#define DLPM_E_NEGATIVE_EXTENT 12
#define DLPM_E_SHAPE_MISMATCH 13
#define DLPM_E_NULL_DATA 14
#define DLPM_E_NULL_STRIDES 15
#define DLPM_E_NON_COMPACT_STRIDES 16
#define DLPM_E_NON_POSITIVE_STRIDE 17
#define DLPM_E_OVERLAPPING_STRIDES 18
#define DLPM_E_SPAN_OVERFLOW 19
#define DLPM_E_BYTE_OFFSET_OVERFLOW 20
#define DLPM_E_MISALIGNED_BYTE_OFFSET 21
#define DLPM_E_MISALIGNED_DATA 22
#define DLPM_E_DIVISIBILITY 23
#define DLPM_E_SUBBYTE_NOT_VIEWABLE 24
#define DLPM_E_AMBIGUOUS_LAYOUT 25
#define DLPM_E_NO_MATCHING_TYPE 26
#define DLPM_E_READ_ONLY 27
#define DLPM_E_VERSION_MISMATCH 28
#define DLPM_E_INVALID_ARGUMENT 29
#define DLPM_E_OUT_OF_MEMORY 30
#define DLPM_E_INTERNAL 31 /**< an MPI call the MPI layer made failed (dlpack_mdspan_mpi.h); nothing else returns it */
#define DLPM_E_MISALIGNED_METADATA 32 /**< shape or strides is not aligned for int64_t */
#define DLPM_E_UNSUPPORTED_VERSION 33 /**< an options struct's version field is not one this library knows */
#define DLPM_E_PRODUCER_FAILED 34 /**< the producer reported a failure of its own (e.g. a Python exception, which is left set) */

/** A short fixed description of a status ("dtype mismatch"); never NULL. */
DLPM_API const char* dlpm_status_string(dlpm_status status) DLPM_NOEXCEPT;

/** The detailed message of the last failure on this thread ("shape[1] = -3 is negative"),
 * or "" if none. Valid until the next failing call on this thread. */
DLPM_API const char* dlpm_last_error(void) DLPM_NOEXCEPT;

/** Writes the name of `dtype` the way NumPy and ml_dtypes spell it ("float32", "int8",
 * "bool", "bfloat16", "complex64", "float8_e4m3fn"; "float32x4" for 4 lanes) into
 * `buffer`, NUL-terminated and cut to `size - 1` characters, like snprintf. A dtype the
 * checks refuse is written as its numbers, "(code 42, bits 7, lanes 1)". Returns the length
 * of the whole name (at most 39), so a return value >= `size` means it was cut. `buffer`
 * may be NULL when `size` is 0. Never fails. */
DLPM_API size_t dlpm_dtype_name(DLDataType dtype, char* buffer, size_t size) DLPM_NOEXCEPT;

/** Versions of this library and of the DLPack headers it was built against. */
typedef struct dlpm_version_info {
  int32_t major;         /**< dlpack_mdspan major version */
  int32_t minor;         /**< dlpack_mdspan minor version */
  int32_t patch;         /**< dlpack_mdspan patch version */
  uint32_t dlpack_major; /**< DLPACK_MAJOR_VERSION of the headers it was built with */
  uint32_t dlpack_minor; /**< DLPACK_MINOR_VERSION of the headers it was built with */
} dlpm_version_info;

/** Writes this library's version and the DLPack version it was built against to *out. */
DLPM_API dlpm_status dlpm_version(dlpm_version_info* out) DLPM_NOEXCEPT;

/** The dtype named `name`, the inverse of dlpm_dtype_name: every name it writes, and only
 * those, spelled exactly as it writes them ("float32", "bool", "bfloat16", "float8_e4m3fn",
 * "int16x4", and a refused dtype's "(code 42, bits 7, lanes 1)"). Anything else is
 * DLPM_E_INVALID_DTYPE, naming the text; a NULL argument is DLPM_E_NULL_POINTER. *out is
 * written only on success. */
DLPM_API dlpm_status dlpm_dtype_from_name(const char* name, DLDataType* out) DLPM_NOEXCEPT;

/** The largest rank the library accepts (the C++ core's max_ndim): every ndim is in
 * [0, DLPM_MAX_NDIM]. Bindings size their index and stride arrays with it. */
#define DLPM_MAX_NDIM 64

/* ---- inspection --------------------------------------------------------------------- */

/** Structural validity: ndim in [0, 64], a known dtype with a possible bit width, non-NULL
 * shape for ndim > 0, non-negative extents, element count and index span without int64
 * overflow, byte_offset in range and a multiple of the element size, non-NULL data when
 * there are elements. NULL strides mean row-major. */
DLPM_API dlpm_status dlpm_validate(const DLTensor* tensor) DLPM_NOEXCEPT;

/** Number of elements (1 for ndim 0), overflow-checked. */
DLPM_API dlpm_status dlpm_numel(const DLTensor* tensor, int64_t* out) DLPM_NOEXCEPT;

/** Bytes of the elements packed densely: ceil(numel * bits * lanes / 8), overflow-checked.
 * Packed sub-byte aware: three fp4 values are 2 bytes. */
DLPM_API dlpm_status dlpm_nbytes(const DLTensor* tensor, int64_t* out) DLPM_NOEXCEPT;

/** *out = 1 if the tensor is contiguous in `order` ('C' row-major, 'F' column-major, 'A'
 * either), else 0. Size-1 dimensions may have any stride; empty tensors are contiguous. */
DLPM_API dlpm_status dlpm_is_contiguous(const DLTensor* tensor, char order, int32_t* out) DLPM_NOEXCEPT;

/** *out = 1 if no two indices of a valid tensor reach the same element (what a destination,
 * such as an MPI receive, needs), else 0: a broadcast (stride 0 over an extent > 1) or
 * overlapping strides are 0; negative strides count by magnitude; an empty tensor is 1.
 * The test sorts the modes by |stride| and needs each to step past the ones inside it, so a
 * few unique but interleaved layouts answer 0. */
DLPM_API dlpm_status dlpm_is_unique(const DLTensor* tensor, int32_t* out) DLPM_NOEXCEPT;

/** CuTe's leading dimension of a valid tensor: the one mode of stride 1, or among several the
 * one of extent > 1; *out = -1 when no mode has stride 1. Several stride-1 modes of which
 * none or more than one has extent > 1 are DLPM_E_AMBIGUOUS_LAYOUT. */
DLPM_API dlpm_status dlpm_leading_dim(const DLTensor* tensor, int32_t* out) DLPM_NOEXCEPT;

/** CuTe's stride order (PyTorch's dim_order) of a valid tensor: its ndim modes from the
 * outermost (largest stride) to the innermost, equal strides in mode order, written to
 * out[0..ndim). `capacity` is out's length (at least ndim, else DLPM_E_INVALID_ARGUMENT).
 * More than one mode of stride 1 is DLPM_E_AMBIGUOUS_LAYOUT, as in CuTe. */
DLPM_API dlpm_status dlpm_stride_order(const DLTensor* tensor, int32_t* out, int32_t capacity) DLPM_NOEXCEPT;

/** Byte offset of element `index` (ndim entries, bounds-checked) from tensor->data,
 * including byte_offset. The tensor must be valid and have whole-byte elements. */
DLPM_API dlpm_status dlpm_element_offset(const DLTensor* tensor, const int64_t* index, int64_t* out) DLPM_NOEXCEPT;

/** The layout of a valid tensor resolved once, for callers that address many elements
 * (language bindings' views): writes its strides in elements to strides[0..ndim) (the
 * tensor's own, or for NULL strides the compact row-major ones the library reads them as;
 * an empty tensor's saturate at INT64_MAX) and its element count to *numel. `capacity` is
 * strides' length (at least ndim, else DLPM_E_INVALID_ARGUMENT); strides may be NULL when
 * ndim is 0. Validation guarantees that, for every index inside the shape, the sum of
 * index[r] * strides[r] fits int64. Any dtype, packed sub-byte included. */
DLPM_API dlpm_status dlpm_layout(const DLTensor* tensor, int64_t* strides, int32_t capacity, int64_t* numel) DLPM_NOEXCEPT;

/** Bytes one element of `dtype` occupies as stored: bits * lanes / 8, or with
 * `subbyte_padded` nonzero (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) one byte per lane of
 * a sub-byte dtype. 0 when that is not a whole number of bytes (packed sub-byte elements,
 * which share bytes) or bits is 0. Never fails. */
DLPM_API size_t dlpm_storage_itemsize(DLDataType dtype, int32_t subbyte_padded) DLPM_NOEXCEPT;

/** 1 when the host CPU may dereference memory of `device_type` (kDLCPU, kDLCUDAHost,
 * kDLCUDAManaged, kDLROCMHost), else 0: what element access on the host, and
 * dlpm_managed_copy_to_host, require. Never fails. */
DLPM_API int32_t dlpm_is_host_accessible(int32_t device_type) DLPM_NOEXCEPT;

/** The name of a DLDeviceType as dlpack.h spells it ("kDLCPU", "kDLCUDA", "kDLOneAPI"), or
 * "unknown" for a value it does not define. Never NULL; a static string. */
DLPM_API const char* dlpm_device_type_name(int32_t device_type) DLPM_NOEXCEPT;

/** Decodes a consumer's `stream=` value for CUDA memory, as the Python array API encodes it
 * (`__dlpack__`): -1 (no synchronisation) sets *handle to 0; 1 and 2 (the legacy and
 * per-thread default streams, the runtime's and driver's own handles) and any other positive
 * value set *handle to the value, a stream handle. 0 (ambiguous between the two defaults)
 * and values below -1 are DLPM_E_INVALID_ARGUMENT, *handle untouched, with the reason in
 * dlpm_last_error() ("unsupported stream on CUDA: 0 (...)"). The C++ helpers
 * (stream_from_array_api in dlpack_mdspan/cuda.hpp) decode with the same rule. */
DLPM_API dlpm_status dlpm_cuda_array_api_stream(int64_t value, uintptr_t* handle) DLPM_NOEXCEPT;

/** Decodes a consumer's `stream=` value for ROCm memory, as the Python array API encodes it:
 * -1 (no synchronisation) sets *synchronise to 0 and *handle to 0; 0 (the default stream,
 * HIP's null stream) and any value above 2 set *synchronise to 1 and *handle to the value.
 * 1, 2 and values below -1 are DLPM_E_INVALID_ARGUMENT, the outputs untouched, with the
 * reason in dlpm_last_error() ("unsupported stream on ROCm: 1 (...)"). A consumer's None is
 * the default stream, as 0. */
DLPM_API dlpm_status dlpm_rocm_array_api_stream(int64_t value, int32_t* synchronise, uintptr_t* handle) DLPM_NOEXCEPT;

/** The bytes a valid tensor's elements occupy, as offsets from tensor->data: [*begin, *end),
 * byte_offset included, negative strides included (begin may be negative). Packed sub-byte
 * elements share bytes; `flags` (a managed tensor's) says whether they are padded. An empty
 * tensor addresses nothing: *begin == *end == byte_offset. */
DLPM_API dlpm_status dlpm_byte_span(const DLTensor* tensor, uint64_t flags, int64_t* begin, int64_t* end) DLPM_NOEXCEPT;

/** Every byte the elements of a valid kDLBool tensor reach is 0 or 1 (the core's
 * check_bool_values): what a language whose bool has two values (Rust, C++) needs before it
 * reads the elements as bool, since a producer may lend other bytes (PyTorch's
 * `u8.view(torch.bool)`). Reads the elements, so the data must be readable on the host and
 * not written meanwhile. A broadcast's repeats and a sliding window's overlaps are read once;
 * bytes that other overlapping strides reach are read again, at most 64 reads per spanned
 * byte. `flags` (a managed tensor's) say whether sub-byte bools are padded, a byte per lane;
 * packed bools (every bit pattern valid) pass unread. Errors: DLPM_E_INVALID_ARGUMENT naming
 * a byte above 1 (the first met) and its offset from data; DLPM_E_DTYPE_MISMATCH for another
 * dtype; DLPM_E_DEVICE_MISMATCH for memory the CPU cannot read; DLPM_E_SUBBYTE_NOT_VIEWABLE
 * for packed lanes that do not fill whole bytes; DLPM_E_INVALID_ARGUMENT for strides that
 * would read more than 64 times the bytes the tensor spans (view those as uint8). */
DLPM_API dlpm_status dlpm_check_bool_values(const DLTensor* tensor, uint64_t flags) DLPM_NOEXCEPT;

/** The byte offset of element `index` (ndim entries, bounds-checked) from tensor->data,
 * byte_offset included, as dlpm_element_offset gives it, without validating the tensor
 * again ("prechecked"): for bindings that made a view with dlpm_check_layout (or
 * dlpm_check_managed, dlpm_layout, dlpm_check, dlpm_validate) and address its elements one
 * by one. `flags` are those the tensor was checked with (a managed tensor's): elements of
 * a sub-byte dtype stored padded (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) are
 * addressed by their padded size, dlpm_storage_itemsize(dtype, 1); other flags change
 * nothing (pass 0 for a plain DLTensor). The index is still bounds-checked against the
 * shape (DLPM_E_INVALID_ARGUMENT) and the sum overflow-checked; an element that is not a
 * whole number of bytes is DLPM_E_SUBBYTE_NOT_VIEWABLE.
 * Precondition: `tensor` passed one of those checks with the same flags and neither it nor
 * its shape and strides have changed since; otherwise the behaviour is undefined (this
 * function reads shape[0..ndim) and strides[0..ndim) without looking at them first). */
DLPM_API dlpm_status dlpm_element_offset_prechecked(const DLTensor* tensor, uint64_t flags, const int64_t* index,
                                                    int64_t* out) DLPM_NOEXCEPT;

/** The elements of a valid tensor in row-major index order as nested byte loops (the core's
 * coalesce): the modes that step (extent > 1), outermost first, merged where one steps over
 * the next exactly, written as extents[0..*ndim) and byte_steps[0..*ndim); the innermost
 * mode whose step is one element is folded into *block, the count of elements that lie side
 * by side. A compact row-major tensor is *ndim = 0 and *block = numel; an empty tensor
 * *ndim = 0 and *block = 0. `flags` (a managed tensor's) say whether sub-byte elements are
 * padded; packed ones share bytes (DLPM_E_SUBBYTE_NOT_VIEWABLE). `capacity` is the length of
 * extents and byte_steps (at least ndim, else DLPM_E_INVALID_ARGUMENT); they may be NULL
 * when ndim is 0. What an MPI datatype describes (<dlpack_mdspan_mpi.h>). */
DLPM_API dlpm_status dlpm_coalesce(const DLTensor* tensor, uint64_t flags, int64_t* extents, int64_t* byte_steps,
                                   int32_t capacity, int32_t* ndim, int64_t* block) DLPM_NOEXCEPT;

/* ---- requirements (nanobind-style constraints) ---------------------------------------- */

/** The layout of dlpm_requirements this header describes. A program passes it to
 * dlpm_requirements_init, so a newer library knows which fields the program's struct has
 * (git2's *_options_init convention): the struct can grow without breaking old binaries.
 * A later version appends fields; this library accepts every version a release published
 * (docs/architecture.md, "Compatibility"). */
#define DLPM_REQUIREMENTS_VERSION 1

/** dlpm_layout_requirements.leading_dim when no leading dimension is required. */
#define DLPM_ANY_LEADING_DIM INT32_MIN

/** dlpm_requirements.null_strides: what NULL strides (ndim > 0) mean. The values are the
 * C++ core's dlpack_mdspan::null_strides_policy enumerators, row_major and reject. */
#define DLPM_NULL_STRIDES_ROW_MAJOR 0 /**< compact row-major, as producers before DLPack 1.2 mean them (the default) */
#define DLPM_NULL_STRIDES_REJECT 1    /**< an error, DLPM_E_NULL_STRIDES; any other value is read as this one */

/** CuTe DSL's layout vocabulary (docs/import.md, "CuTe users"), the C++ core's
 * dlpack_mdspan::layout_requirements with its spans as pointers: each array, when not NULL,
 * has one entry per mode of the tensor checked. dlpm_requirements.layout; every field
 * "anything" after dlpm_requirements_init. */
typedef struct dlpm_layout_requirements {
  int32_t leading_dim;             /**< DLPM_ANY_LEADING_DIM, or the mode whose stride must be 1 (negative: from the last) */
  int32_t compact;                 /**< nonzero, with stride_order: compact in that order */
  const int32_t* stride_order;     /**< NULL, or the modes from outermost to innermost (CuTe's stride_order, PyTorch's dim_order) */
  const int64_t* shape_divisors;   /**< NULL, or a divisor per mode of its extent (0 or 1: free) */
  const int64_t* stride_divisors;  /**< NULL, or a divisor per mode of its stride (modes of extent 1 are free) */
} dlpm_layout_requirements;

/** What a consumer requires: the C++ core's dlpack_mdspan::tensor_requirements, field for
 * field under the same names. Where C++ has a bool (check_dtype, writable, layout.compact)
 * this has an int32_t, nonzero meaning true: bool's size and representation are not fixed
 * across the C ABIs and languages (Rust, Go, Julia) that read this struct. Initialise with
 * dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION), which sets every field to
 * "anything", then set what you need. */
typedef struct dlpm_requirements {
  uint32_t version;             /**< DLPM_REQUIREMENTS_VERSION; set by dlpm_requirements_init */
  int32_t check_dtype;          /**< nonzero: dtype must equal `dtype` exactly */
  DLDataType dtype;             /**< the required dtype when check_dtype is nonzero */
  int32_t ndim;                 /**< -1: any rank; otherwise 0..64 */
  const int64_t* shape;         /**< NULL, or ndim entries where -1 is a wildcard (needs ndim >= 0) */
  char order;                   /**< 'C', 'F', 'A' (either), or 0 for any layout */
  const int32_t* device_types;  /**< accepted DLDeviceType values; NULL = any */
  int32_t num_device_types;     /**< number of entries in device_types */
  int32_t device_id;            /**< -1: any ordinal */
  uint64_t min_alignment;       /**< bytes, a power of two; 0 = none */
  int32_t writable;             /**< nonzero: refuse READ_ONLY (managed tensors only carry flags) */
  int32_t null_strides;         /**< DLPM_NULL_STRIDES_ROW_MAJOR or DLPM_NULL_STRIDES_REJECT */
  dlpm_layout_requirements layout; /**< CuTe's layout vocabulary */
} dlpm_requirements;

/** Every field "anything", as a C initializer: `dlpm_requirements req = DLPM_REQUIREMENTS_INIT;`
 * is what dlpm_requirements_init(&req, DLPM_REQUIREMENTS_VERSION) writes (the function writes
 * this), for a constant or a static (the Rust crate's compile-time view requirements). */
#define DLPM_REQUIREMENTS_INIT                                                                          \
  {DLPM_REQUIREMENTS_VERSION, 0, {0, 0, 0}, -1, NULL, 0, NULL, 0, -1, 0, 0, DLPM_NULL_STRIDES_ROW_MAJOR, \
   {DLPM_ANY_LEADING_DIM, 0, NULL, NULL, NULL}}

/** Sets every field of *req to "anything" (no dtype check, any ndim/shape/order/device, no
 * alignment, writability or layout requirement; NULL strides read as row-major) and req->version to
 * `version`. Pass DLPM_REQUIREMENTS_VERSION; any other value is DLPM_E_UNSUPPORTED_VERSION
 * and *req is untouched. */
DLPM_API dlpm_status dlpm_requirements_init(dlpm_requirements* req, uint32_t version) DLPM_NOEXCEPT;

/** Requirements themselves are checked before the tensor: a version this library does not
 * know is DLPM_E_UNSUPPORTED_VERSION; ndim below -1 or above 64, `shape` with ndim = -1,
 * a negative num_device_types with device_types given, an unknown order or a min_alignment that is not a power of
 * two are DLPM_E_INVALID_ARGUMENT. The layout fields are checked against the tensor's rank,
 * after its structure: a leading_dim that is not a mode, a stride_order that is not a
 * permutation of the modes, compact without a stride_order, or a negative divisor are
 * DLPM_E_INVALID_ARGUMENT. A layout the requirements refuse is DLPM_E_NON_COMPACT_STRIDES
 * (leading dimension, stride order, compactness) or DLPM_E_DIVISIBILITY. */

/** Checks a bare DLTensor (no flags: `writable` cannot be refused here). */
DLPM_API dlpm_status dlpm_check(const DLTensor* tensor, const dlpm_requirements* req) DLPM_NOEXCEPT;

/** What a producer says of a tensor before exporting it (the array API's
 * __dlpack_data_type__ and __dlpack_device__), checked against the dtype and device fields
 * of `req` alone, worded as dlpm_check words them (DLPM_E_DTYPE_MISMATCH,
 * DLPM_E_DEVICE_MISMATCH, DLPM_E_DEVICE_ID_MISMATCH): a consumer refuses a wrong overload
 * without an export. DLPM_OK says nothing of the rest; the tensor stays authoritative. An
 * ill-formed dtype is DLPM_E_INVALID_DTYPE: the announcement, not the tensor, is unusable. */
DLPM_API dlpm_status dlpm_check_announced(DLDataType dtype, DLDevice device, const dlpm_requirements* req) DLPM_NOEXCEPT;

/** Checks a managed tensor, including its READ_ONLY and sub-byte padding flags. A writable
 * check of a tensor READ_ONLY for a cause this copy of the library knows
 * (dlpm_managed_read_only_cause: from a legacy tensor, or what its producer forbids) says
 * that cause and its remedy in dlpm_last_error. A tensor of another DLPack major version is
 * DLPM_E_VERSION_MISMATCH: nothing but its version is read. */
DLPM_API dlpm_status dlpm_check_managed(const DLManagedTensorVersioned* tensor, const dlpm_requirements* req) DLPM_NOEXCEPT;

/** The layout of dlpm_checked_tensor this header describes: the caller sets
 * out->version to it before dlpm_check_tensor (git2's convention, as for dlpm_requirements),
 * so a newer library writes only the fields the caller's struct has. */
#define DLPM_CHECKED_TENSOR_VERSION 1

/** A tensor the library has checked, and what the check learned (the C++ core's
 * checked_tensor): the one thing bindings read a tensor's layout from. Filled by
 * dlpm_check_tensor; `version` first, set by the caller. */
typedef struct dlpm_checked_tensor {
  uint32_t version;          /**< DLPM_CHECKED_TENSOR_VERSION, set by the caller */
  int32_t row_major;         /**< nonzero: C-contiguous (size-1 dimensions may have any stride; an empty tensor is) */
  const DLTensor* tensor;    /**< the tensor checked (it must stay unchanged while this is used) */
  uint64_t flags;            /**< the flags it was checked with (a managed tensor's; 0 for a bare DLTensor) */
  int64_t numel;             /**< number of elements (0 for an empty tensor) */
  uint64_t itemsize;         /**< bytes per element as stored; 0 when packed sub-byte elements share bytes */
  int64_t lowest_index;      /**< smallest element index reached from the first element (<= 0 with negative strides) */
  int64_t highest_index;     /**< largest element index reached */
  int32_t implicit_strides;  /**< nonzero: the tensor's strides are NULL and read as row-major */
  int32_t ndim;              /**< tensor->ndim, the entries of `strides` written */
  int64_t strides[DLPM_MAX_NDIM]; /**< the strides in elements as the library reads them (NULL ones resolved row-major) */
} dlpm_checked_tensor;

/** The one check a binding makes before it views a tensor: `tensor` with `flags` (a managed
 * tensor's, READ_ONLY and IS_SUBBYTE_TYPE_PADDED read as dlpm_check_managed reads them; 0 for
 * a bare DLTensor) against `req` (NULL: the structure alone, NULL strides row-major), then,
 * when `element_size` is not 0, one element of the tensor's dtype as stored must be exactly
 * `element_size` bytes (the binding's element type: packed sub-byte elements have no byte
 * address; DLPM_E_SUBBYTE_NOT_VIEWABLE, worded as the C++ typed import words it). On success
 * writes the checked form to *out, whose `version` the caller has set
 * (DLPM_CHECKED_TENSOR_VERSION; another is DLPM_E_UNSUPPORTED_VERSION). dlpm_check_layout is
 * this call's older, narrower form. */
DLPM_API dlpm_status dlpm_check_tensor(const DLTensor* tensor, uint64_t flags, const dlpm_requirements* req,
                                       size_t element_size, dlpm_checked_tensor* out) DLPM_NOEXCEPT;

/** dlpm_check_managed's verdict, status and message for a tensor whose structure
 * dlpm_check_tensor has already accepted: `tensor` with `flags` (a managed tensor's; 0 for a
 * bare DLTensor) against `req`, reading what the earlier check learned from `checked` instead
 * of making the structure's pass again. It is used only when `tensor` is checked->tensor or an
 * equal description (the same data, byte_offset, ndim, dtype, device, shape and strides, NULL
 * where those were NULL) and `flags` carry checked->flags' IS_SUBBYTE_TYPE_PADDED bit; else
 * (checked->tensor NULL included) the tensor is checked in full, as dlpm_check_managed checks it. For a holder of a tensor that
 * hands out exports of it (dlpack_mdspan.Tensor): validate once, when the tensor is made.
 * Precondition: checked->tensor, with its shape and strides, is unchanged since
 * dlpm_check_tensor filled `checked` (whose `version` is DLPM_CHECKED_TENSOR_VERSION). */
DLPM_API dlpm_status dlpm_check_prechecked(const DLTensor* tensor, uint64_t flags, const dlpm_checked_tensor* checked,
                                           const dlpm_requirements* req) DLPM_NOEXCEPT;

/** dlpm_check_prechecked that also writes the checked form, as dlpm_check_tensor writes it:
 * for a binding that views what it imports and holds a checked form of (a borrow of a
 * dlpack_mdspan.Tensor). `checked` may be NULL (nothing checked before) and `req` may be NULL
 * (the structure alone, as dlpm_check_tensor reads it).
 * Semantics: when `checked` is not NULL, checked->tensor is not NULL and `tensor` with `flags`
 * is checked->tensor or an equal description (dlpm_check_prechecked's test: the same data,
 * byte_offset, ndim, dtype, device, shape and strides, NULL where those were NULL, and
 * checked->flags' IS_SUBBYTE_TYPE_PADDED bit), `req` is checked against what `checked`
 * learned and, on success, `checked`'s learned fields are copied to *out (row_major, numel,
 * itemsize, lowest_index, highest_index, implicit_strides, ndim and ndim strides) with
 * out->tensor = `tensor` and out->flags = `flags`. Otherwise it is
 * dlpm_check_tensor(tensor, flags, req, 0, out). Either way the status is that of
 * dlpm_check_managed for that tensor and `req`, and so is the message, but for a READ_ONLY
 * refusal: a bare DLTensor cannot say why it is READ_ONLY, so the cause that
 * dlpm_check_managed words (dlpm_managed_read_only_cause) is not named.
 * Constraints: out->version is set by the caller (DLPM_CHECKED_TENSOR_VERSION); so is
 * checked->version. Precondition (as dlpm_check_prechecked's): checked->tensor, with its
 * shape and strides, is unchanged since dlpm_check_tensor filled `checked`. `out` may be
 * `checked` itself. On failure *out is untouched.
 * Runtime errors: DLPM_E_NULL_POINTER (tensor or out NULL), DLPM_E_UNSUPPORTED_VERSION
 * (out->version, checked->version or req->version unknown), then dlpm_check_tensor's. */
DLPM_API dlpm_status dlpm_check_prechecked_tensor(const DLTensor* tensor, uint64_t flags, const dlpm_checked_tensor* checked,
                                                  const dlpm_requirements* req, dlpm_checked_tensor* out) DLPM_NOEXCEPT;

/** dlpm_check_bool_values for a binding that holds the tensor's checked form: the bytes of
 * `tensor` with `flags` are read as dlpm_check_bool_values reads them, from what the earlier
 * check learned (its element count and the indices it reaches) instead of checking the
 * structure again. For a view of bools made from dlpm_check_tensor's form (the Rust crate's).
 * Semantics: when `checked` is not NULL, checked->tensor is not NULL and `tensor` with `flags`
 * is checked->tensor or an equal description (dlpm_check_prechecked's test), the check reads
 * `checked`; otherwise (`checked` NULL included) it is dlpm_check_bool_values(tensor, flags).
 * Either way the status and the message are dlpm_check_bool_values'.
 * Constraints: checked->version is DLPM_CHECKED_TENSOR_VERSION. Precondition (as
 * dlpm_check_prechecked's): checked->tensor, with its shape and strides, is unchanged since
 * dlpm_check_tensor filled `checked`; the bytes are not written meanwhile.
 * Runtime errors: DLPM_E_NULL_POINTER (tensor NULL), DLPM_E_UNSUPPORTED_VERSION
 * (checked->version unknown), then dlpm_check_bool_values'. */
DLPM_API dlpm_status dlpm_check_bool_values_prechecked(const DLTensor* tensor, uint64_t flags,
                                                       const dlpm_checked_tensor* checked) DLPM_NOEXCEPT;

/** dlpm_plan_message's `direction`: a send reads the tensor (every valid layout, broadcast
 * strides included); a receive writes it (not READ_ONLY, each element reached once). */
#define DLPM_MESSAGE_SEND 0
#define DLPM_MESSAGE_RECEIVE 1

/** The layout of dlpm_message_plan this header describes (the caller sets out->version). */
#define DLPM_MESSAGE_PLAN_VERSION 1

/** How a tensor travels as a message (the C++ core's message_plan): its elements in row-major
 * index order as nested byte loops from element 0 (dlpm_coalesce's), the bytes they reach,
 * and the element kind. What an MPI datatype is built from (<dlpack_mdspan_mpi.h>). */
typedef struct dlpm_message_plan {
  uint32_t version;      /**< DLPM_MESSAGE_PLAN_VERSION, set by the caller */
  int32_t loops;         /**< byte loops in extents[0..loops) and byte_steps[0..loops), outermost first */
  void* element0;        /**< element 0's address, data + byte_offset (data itself for an empty tensor) */
  int64_t block;         /**< elements side by side in the innermost run (0: the tensor is empty) */
  int64_t lower_bound;   /**< the lowest byte reached, relative to element0 */
  int64_t extent;        /**< bytes from the lowest reached to one past the highest */
  DLDataType dtype;      /**< the element kind: its dtype... */
  uint64_t itemsize;     /**< ...and its bytes as stored */
  int64_t extents[DLPM_MAX_NDIM];    /**< each loop's count, outermost first (loops of them are set) */
  int64_t byte_steps[DLPM_MAX_NDIM]; /**< each loop's step in bytes, outermost first (loops of them are set) */
} dlpm_message_plan;

/** Which tensors may travel as a message, and how: `tensor` with `flags` (a managed
 * tensor's; 0 for a bare DLTensor) is checked once, then admitted for `direction`
 * (DLPM_MESSAGE_SEND or DLPM_MESSAGE_RECEIVE) by the core's one set of rules: elements with
 * a byte address (packed sub-byte ones: DLPM_E_SUBBYTE_NOT_VIEWABLE), memory the transport
 * moves (host-accessible, or CUDA when `moves_cuda_memory` is nonzero:
 * DLPM_E_DEVICE_MISMATCH), and for a receive not READ_ONLY (DLPM_E_READ_ONLY) and no element
 * reached twice (DLPM_E_OVERLAPPING_STRIDES). On success writes the plan to *out, whose
 * `version` the caller has set. */
DLPM_API dlpm_status dlpm_plan_message(const DLTensor* tensor, uint64_t flags, int32_t direction, int32_t moves_cuda_memory,
                                       dlpm_message_plan* out) DLPM_NOEXCEPT;

/** dlpm_check and dlpm_layout in one pass, for bindings that make a view: checks `tensor`
 * against `req` with `flags` (a managed tensor's flags, READ_ONLY and
 * IS_SUBBYTE_TYPE_PADDED read as dlpm_check_managed reads them; 0 for a bare DLTensor, as
 * dlpm_check), refusing exactly the tensors and requirements those refuse, with the same
 * status and message; then writes what dlpm_layout writes: the strides in elements to
 * strides[0..ndim) (the tensor's own, or for NULL strides the compact row-major ones) and
 * the element count (which the check counts anyway) to *numel. `capacity` is strides'
 * length (negative, or after the check below ndim: DLPM_E_INVALID_ARGUMENT). `strides`
 * may be NULL: then only *numel is written (for a caller that reads the tensor's own
 * strides), and `capacity` is only checked for sign. With a managed tensor `m`, pass
 * &m->dl_tensor and m->flags. */
DLPM_API dlpm_status dlpm_check_layout(const DLTensor* tensor, uint64_t flags, const dlpm_requirements* req, int64_t* strides,
                                       int32_t capacity, int64_t* numel) DLPM_NOEXCEPT;

/* ---- ownership --------------------------------------------------------------------- */

/** Called exactly once, with `ctx`, when the last owner of a dlpm_managed_new tensor lets
 * go. May run on any thread. */
typedef void (*dlpm_release_fn)(void* ctx);

/** Wraps the caller's buffer as a DLManagedTensorVersioned. shape (ndim entries) and
 * strides (ndim entries, or NULL for row-major) are copied, with the struct, into a single
 * allocation. An empty tensor (an extent 0) gets the row-major strides NULL stands for,
 * whatever strides it was given: they address nothing, and extreme ones (INT64_MIN) break
 * consumers' stride arithmetic. The description is validated like dlpm_validate. On
 * success *out owns the buffer: its deleter calls release(ctx) exactly once (release may be NULL). On failure
 * *out is untouched and release is NOT called: the buffer is still the caller's. */
DLPM_API dlpm_status dlpm_managed_new(void* data, int32_t ndim, const int64_t* shape, const int64_t* strides, DLDataType dtype,
                                      DLDevice device, uint64_t byte_offset, uint64_t flags, dlpm_release_fn release, void* ctx,
                                      DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** dlpm_managed_new with the order of the strides (nanobind's runtime `order`):
 * - 'C' or 'F': NULL strides stand for compact row-major ('C') or column-major ('F')
 *   strides, which the tensor stores explicitly (never NULL: DLPack reads NULL as
 *   row-major). Explicit strides must be that compact layout, as dlpm_is_contiguous says
 *   (extent-1 dimensions may have any stride, an empty tensor is compact), else
 *   DLPM_E_NON_COMPACT_STRIDES.
 * - 'C' or 'F' with an empty tensor: that layout's strides, whatever strides were given.
 * - 0: explicit strides are kept as given (exactly dlpm_managed_new: an empty tensor's
 *   become row-major); with NULL strides 0 is DLPM_E_INVALID_ARGUMENT.
 * Any other order is DLPM_E_INVALID_ARGUMENT, checked before the description. Otherwise
 * as dlpm_managed_new: on failure *out is untouched and release is NOT called. */
DLPM_API dlpm_status dlpm_managed_new_ordered(void* data, int32_t ndim, const int64_t* shape, const int64_t* strides,
                                              char order, DLDataType dtype, DLDevice device, uint64_t byte_offset,
                                              uint64_t flags, dlpm_release_fn release, void* ctx,
                                              DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** The most bytes of owner state dlpm_managed_new_inline keeps inside the tensor's own
 * allocation, and the alignment it keeps them at. */
#define DLPM_INLINE_OWNER_CAPACITY 32
#define DLPM_INLINE_OWNER_ALIGNMENT 8

/** dlpm_buffer_size for a buffer whose size the exporter does not know: not checked. */
#define DLPM_BUFFER_SIZE_UNKNOWN UINT64_MAX

/** dlpm_managed_new_ordered for exporters whose owner is a few bytes of state (a Rust
 * Vec's pointer, capacity and length; a handle) and which may know their buffer's size:
 * - the `owner_state_size` bytes at `owner_state` (at most DLPM_INLINE_OWNER_CAPACITY;
 *   `owner_state` may be NULL when owner_state_size is 0) are copied, bit for bit, into the tensor's own allocation,
 *   at an address aligned to DLPM_INLINE_OWNER_ALIGNMENT: the export is that one
 *   allocation in all. The deleter calls release(p) exactly once, p being the address of
 *   that copy (release may be NULL).
 * - `buffer_size`, unless DLPM_BUFFER_SIZE_UNKNOWN: every byte the elements occupy
 *   (dlpm_byte_span with `flags`) must lie in [data, data + buffer_size), else
 *   DLPM_E_INVALID_ARGUMENT, checked after the description is validated; a layout whose
 *   bytes dlpm_byte_span cannot state is refused with its DLPM_E_SPAN_OVERFLOW.
 * `description` gives data, ndim, shape, strides, dtype, device and byte_offset (shape and
 * strides are copied); `order` and every other rule are dlpm_managed_new_ordered's (order
 * 0 with NULL strides is DLPM_E_INVALID_ARGUMENT: pass 'C' for dlpm_managed_new's
 * reading). An owner_state_size above the capacity is DLPM_E_INVALID_ARGUMENT. On failure
 * *out is untouched and release is NOT called: the buffer and the owner are still the
 * caller's (its bytes were only copied). */
DLPM_API dlpm_status dlpm_managed_new_inline(const DLTensor* description, char order, uint64_t flags, uint64_t buffer_size,
                                             dlpm_release_fn release, const void* owner_state, size_t owner_state_size,
                                             DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** The version of dlpm_managed_options this header describes. */
#define DLPM_MANAGED_OPTIONS_VERSION 1

/** What dlpm_managed_new_from needs besides the description: the versioned form of
 * dlpm_managed_new's scalar arguments (git2's convention: a program built against a newer
 * header is told so, not misread). Start from DLPM_MANAGED_OPTIONS_INIT, which reads the
 * description exactly as dlpm_managed_new does, and set the fields you need. */
typedef struct dlpm_managed_options {
  uint32_t version;        /**< DLPM_MANAGED_OPTIONS_VERSION, set by the caller */
  char order;              /**< 0: dlpm_managed_new's reading (NULL strides are row-major,
                                explicit ones kept as given); 'C' or 'F':
                                dlpm_managed_new_ordered's; any other is refused */
  uint64_t flags;          /**< stored in the tensor as given */
  dlpm_release_fn release; /**< called with ctx exactly once when the tensor is deleted; may be NULL */
  void* ctx;               /**< release's argument */
} dlpm_managed_options;

/** dlpm_managed_options with dlpm_managed_new's reading, no flags and no release. */
#define DLPM_MANAGED_OPTIONS_INIT {DLPM_MANAGED_OPTIONS_VERSION, 0, 0, NULL, NULL}

/** dlpm_managed_new with the description and the options passed by pointer: the form for
 * a binding that already holds a DLTensor and one set of options (its release function)
 * for every export, which skips the eleven arguments' copies.
 * Semantics: `description` gives data, ndim, shape, strides, dtype, device and byte_offset
 * (shape and strides are copied, with the struct, into one allocation); options->order 0
 * is dlpm_managed_new, 'C' or 'F' is dlpm_managed_new_ordered with that order, with
 * every rule of theirs (validation like dlpm_validate, an empty tensor's strides, the
 * compact layout an order asks for). On success *out owns the buffer: its deleter calls
 * options->release(options->ctx) exactly once (release may be NULL), on any thread; the
 * options struct need not outlive the call.
 * Constraints: options->version is DLPM_MANAGED_OPTIONS_VERSION.
 * Runtime errors: DLPM_E_NULL_POINTER for a NULL description, options or out;
 * DLPM_E_UNSUPPORTED_VERSION for another options->version; DLPM_E_INVALID_ARGUMENT for an
 * order other than 0, 'C' and 'F'; otherwise dlpm_managed_new's and
 * dlpm_managed_new_ordered's. On failure *out is untouched and release is NOT called: the
 * buffer is still the caller's. */
DLPM_API dlpm_status dlpm_managed_new_from(const DLTensor* description, const dlpm_managed_options* options,
                                           DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** dlpm_managed_new of a description dlpm_check_tensor has checked, for a holder of a
 * tensor that hands out exports of it (dlpack_mdspan.Tensor): validated once, when the
 * tensor was made, and its exports described by the very arrays that check vouches for.
 * Semantics: the tensor dlpm_managed_new(t->data, t->ndim, t->shape, t->strides, t->dtype,
 * t->device, t->byte_offset, flags, release, ctx, out) makes, t being checked->tensor, except
 * that when `t` is in the form that call would copy unchanged (ndim > 0, explicit strides,
 * not empty: checked->numel > 0) and `flags` carry checked->flags' IS_SUBBYTE_TYPE_PADDED
 * bit, the description is not validated again and its shape and strides are not copied:
 * out->dl_tensor.shape and .strides are t->shape and t->strides themselves, so that
 * dlpm_check_prechecked of the export against `checked` trusts them without comparing them.
 * Otherwise (an empty tensor, NULL strides, rank 0, the other sub-byte storage) it is that
 * dlpm_managed_new call, copying and validating.
 * Constraints: checked->version is DLPM_CHECKED_TENSOR_VERSION. Precondition: `t` and its
 * shape and strides are unchanged since dlpm_check_tensor filled `checked`, and stay alive
 * and unchanged until release(ctx) is called: the owner `ctx` stands for must keep them.
 * Runtime errors: DLPM_E_NULL_POINTER (checked, checked->tensor or out NULL),
 * DLPM_E_UNSUPPORTED_VERSION (checked->version), DLPM_E_OUT_OF_MEMORY, and on the copying
 * path dlpm_managed_new's. On failure *out is untouched and release is NOT called. */
DLPM_API dlpm_status dlpm_managed_new_checked(const dlpm_checked_tensor* checked, uint64_t flags, dlpm_release_fn release,
                                              void* ctx, DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** Calls the tensor's deleter (if any). NULL is a no-op. */
DLPM_API void dlpm_managed_delete(DLManagedTensorVersioned* tensor) DLPM_NOEXCEPT;

/** Calls a legacy (pre-1.0) tensor's deleter (if any), by the same rule: NULL is a no-op,
 * and a deleter that throws ends the process with a message. */
DLPM_API void dlpm_legacy_delete(DLManagedTensor* tensor) DLPM_NOEXCEPT;

/** New compact row-major kDLCPU memory for a tensor of `shape` (ndim entries) and `dtype`,
 * 64-byte aligned and uninitialised, owned by *out (its deleter frees it); `flags` are
 * stored as given (say DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED for padded sub-byte
 * storage). What a DLPack exchange API's managed_tensor_allocator hands out. The
 * description is validated like dlpm_validate; a size that cannot be allocated is
 * DLPM_E_OUT_OF_MEMORY. */
DLPM_API dlpm_status dlpm_managed_alloc_host(int32_t ndim, const int64_t* shape, DLDataType dtype, uint64_t flags,
                                             DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** A compact row-major kDLCPU copy of `tensor` in new memory owned by *out (as
 * dlpm_managed_alloc_host), flagged IS_COPIED; READ_ONLY is not carried over (the copy
 * aliases nothing), the sub-byte padding flag is. The source's memory must be readable by
 * the CPU (dlpm_is_host_accessible), else DLPM_E_DEVICE_MISMATCH; a packed sub-byte source
 * must be row-major contiguous, else DLPM_E_SUBBYTE_NOT_VIEWABLE; of another DLPack major
 * version, DLPM_E_VERSION_MISMATCH (nothing but its version read). `tensor` stays the
 * caller's. */
DLPM_API dlpm_status dlpm_managed_copy_to_host(const DLManagedTensorVersioned* tensor, DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** For a tensor just received from a producer: if its major version is not this library's,
 * calls its deleter at once and returns DLPM_E_VERSION_MISMATCH (the tensor is gone).
 * A newer minor version is accepted. */
DLPM_API dlpm_status dlpm_managed_check_version(DLManagedTensorVersioned* tensor) DLPM_NOEXCEPT;

/** Moves a legacy tensor into a new versioned one (*out). The legacy struct cannot say
 * whether writes are allowed, so the result is READ_ONLY, as NumPy does; use
 * dlpm_from_legacy_writable when you know the producer allows writes. On failure the
 * legacy deleter has already run (ownership was passed in). */
DLPM_API dlpm_status dlpm_from_legacy(DLManagedTensor* legacy, DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** dlpm_from_legacy without READ_ONLY, for producers known to allow writes (PyTorch). */
DLPM_API dlpm_status dlpm_from_legacy_writable(DLManagedTensor* legacy, DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

/** Moves a versioned tensor into a new legacy one (*out), for consumers that only speak
 * pre-1.0 DLPack. A READ_ONLY tensor is refused (DLPM_E_READ_ONLY: the legacy struct would
 * silently drop the flag) unless its cause is DLPM_READ_ONLY_LEGACY_UNKNOWN: it came from a
 * legacy tensor, which could not say either; one that dlpm_from_legacy made and nobody
 * changed comes back as the original legacy tensor. Padded sub-byte tensors are refused
 * (DLPM_E_INVALID_ARGUMENT). On failure the versioned tensor is still the caller's. */
DLPM_API dlpm_status dlpm_to_legacy(DLManagedTensorVersioned* tensor, DLManagedTensor** out) DLPM_NOEXCEPT;

/** Why a managed tensor is READ_ONLY: what decides whether a legacy export may carry it. */
typedef enum dlpm_read_only_cause {
  DLPM_READ_ONLY_NONE = 0,             /**< not READ_ONLY */
  DLPM_READ_ONLY_FLAGGED = 1,          /**< flagged by its producer or maker: a legacy export is refused */
  DLPM_READ_ONLY_LEGACY_UNKNOWN = 2,   /**< from a legacy tensor, which cannot say: a legacy export is allowed */
  DLPM_READ_ONLY_PRODUCER_FORBIDS = 3  /**< the producer forbids writes for a reason DLPack cannot carry */
} dlpm_read_only_cause;

/** Why `tensor` is READ_ONLY (a dlpm_read_only_cause). The cause is known where this copy
 * of the library set the flag (dlpm_from_legacy, dlpm_managed_forbid_writes); any other
 * READ_ONLY tensor is DLPM_READ_ONLY_FLAGGED. *reason (when `reason` is not NULL) receives,
 * for DLPM_READ_ONLY_PRODUCER_FORBIDS, what the producer forbids (kept for the process,
 * each text once, up to 64), else NULL. A NULL tensor or one of another major version: DLPM_READ_ONLY_NONE. */
DLPM_API int32_t dlpm_managed_read_only_cause(const DLManagedTensorVersioned* tensor, const char** reason) DLPM_NOEXCEPT;

/** Moves `tensor` into a new READ_ONLY tensor over the same memory (*out) that remembers
 * why: `cause` is DLPM_READ_ONLY_LEGACY_UNKNOWN or DLPM_READ_ONLY_PRODUCER_FORBIDS, with
 * `reason` completing "the tensor is READ_ONLY because ..." (copied; required for the
 * latter). DLPM_READ_ONLY_LEGACY_UNKNOWN asked of a tensor this library made READ_ONLY
 * because its producer forbids writes keeps that cause and its reason. Asked of a tensor
 * READ_ONLY for any other reason (DLPM_READ_ONLY_FLAGGED), it replaces that cause: the caller
 * says the tensor's writability is unknown, as for a re-export of a legacy import, which
 * copied the flag, and dlpm_to_legacy then accepts it. The new tensor's deleter runs the old
 * one's. On failure the tensor is still the caller's (DLPM_E_INVALID_ARGUMENT for another
 * cause or a missing reason). */
DLPM_API dlpm_status dlpm_managed_forbid_writes(DLManagedTensorVersioned* tensor, int32_t cause, const char* reason,
                                                DLManagedTensorVersioned** out) DLPM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* DLPACK_MDSPAN_H */
