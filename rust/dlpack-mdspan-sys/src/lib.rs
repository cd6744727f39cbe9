// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Raw bindings to the dlpack_mdspan C facade (`ffi/include/dlpack_mdspan.h`).
//!
//! This crate holds only declarations: `#[repr(C)]` mirrors of the DLPack 1.3 structs, the
//! facade's status codes and structs, and `extern "C"` declarations of every `dlpm_*`
//! function. Every function follows the facade's boundary rules: no C++ exception crosses
//! it (a tensor deleter or `dlpm_release_fn` that throws ends the process with a message
//! on stderr, so nothing unwinds into Rust), a NULL pointer argument returns
//! `DLPM_E_NULL_POINTER`, out-parameters are written only on `DLPM_OK`, and
//! `dlpm_last_error()` describes the last failure on this thread.
//!
//! The safe wrapper is the `dlpack-mdspan` crate; see `docs/rust.md` in the repository.
//!
//! # Linking
//!
//! The build script compiles the C facade (inside the repository its `ffi/` sources and
//! the C++ core headers of `modules/`; a packaged crate carries a copy of them in `csrc/`,
//! generated when it is packaged), with the platform's C++20 compiler (`CXX`, else `c++`) into a static `libdlpack_mdspan_c.a`,
//! and links it and the C++ standard library it was compiled against (libstdc++, or
//! libc++ when `CXX` says `-stdlib=libc++`). The DLPack header (>= 1.3) is found through
//! `DLPACK_INCLUDE_DIR` or the system include directories. A prebuilt library is used
//! instead when `DLPACK_MDSPAN_LIB_DIR` names its directory, or when
//! `DLPACK_MDSPAN_USE_PKG_CONFIG=1` (pkg-config package `dlpack_mdspan`). The package's
//! `links` key is `dlpack_mdspan_c`: dependents read `DEP_DLPACK_MDSPAN_C_INCLUDE` (the C
//! header), `DEP_DLPACK_MDSPAN_C_CXX_INCLUDE` (the C++ core headers),
//! `DEP_DLPACK_MDSPAN_C_ROOT`, `DEP_DLPACK_MDSPAN_C_CXX` (the compiler command) and
//! `DEP_DLPACK_MDSPAN_C_CXX_STDLIB` (`stdc++` or `c++`). See `docs/rust.md`.
#![no_std]
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

mod types;

pub use types::*;

use core::ffi::{c_char, c_void};

extern "C" {
    /// A short fixed description of a status ("dtype mismatch"); never NULL.
    pub fn dlpm_status_string(status: dlpm_status) -> *const c_char;

    /// The detailed message of the last failure on this thread, or "" if none. Valid until
    /// the next failing call on this thread.
    pub fn dlpm_last_error() -> *const c_char;

    /// Writes the dtype's name as NumPy and ml_dtypes spell it ("float32", "bfloat16",
    /// "float8_e4m3fn", "float32x4"; a malformed dtype as "(code C, bits B, lanes L)") into
    /// `buffer`, NUL-terminated and cut to `size - 1` bytes, like snprintf. Returns the
    /// whole name's length (at most 39). `buffer` may be NULL when `size` is 0.
    pub fn dlpm_dtype_name(dtype: DLDataType, buffer: *mut c_char, size: usize) -> usize;

    /// The dtype named `name` (a NUL-terminated string), the inverse of [`dlpm_dtype_name`]:
    /// every name it writes, and only those, spelled exactly as it writes them (`"float32"`,
    /// `"bool"`, `"bfloat16"`, `"float8_e4m3fn"`, `"int16x4"`, and a refused dtype's
    /// `"(code 42, bits 7, lanes 1)"`). Anything else is `DLPM_E_INVALID_DTYPE`, naming the
    /// text; a NULL argument is `DLPM_E_NULL_POINTER`. `*out` is written only on success.
    pub fn dlpm_dtype_from_name(name: *const c_char, out: *mut DLDataType) -> dlpm_status;

    /// Versions of the library and of the DLPack headers it was built against.
    pub fn dlpm_version(out: *mut dlpm_version_info) -> dlpm_status;

    /// Structural validity of a tensor (ndim, dtype, shape, strides, spans, byte_offset,
    /// data). NULL strides mean row-major. A `shape` or `strides` pointer that is not
    /// aligned for `int64_t` is `DLPM_E_MISALIGNED_METADATA` (never read).
    pub fn dlpm_validate(tensor: *const DLTensor) -> dlpm_status;

    /// Number of elements (1 for ndim 0), overflow-checked.
    pub fn dlpm_numel(tensor: *const DLTensor, out: *mut i64) -> dlpm_status;

    /// Bytes of the elements packed densely, overflow-checked, sub-byte aware.
    pub fn dlpm_nbytes(tensor: *const DLTensor, out: *mut i64) -> dlpm_status;

    /// `*out = 1` if the tensor is contiguous in `order` (`'C'`, `'F'` or `'A'`), else 0.
    pub fn dlpm_is_contiguous(tensor: *const DLTensor, order: c_char, out: *mut i32)
        -> dlpm_status;

    /// `*out = 1` if no two indices of a valid tensor reach the same element (what a
    /// destination, such as an MPI receive, needs), else 0: a broadcast (stride 0 over an
    /// extent > 1) or overlapping strides are 0; negative strides count by magnitude; an
    /// empty tensor is 1. A few unique but interleaved layouts answer 0.
    pub fn dlpm_is_unique(tensor: *const DLTensor, out: *mut i32) -> dlpm_status;

    /// CuTe's leading dimension of a valid tensor: the one mode of stride 1, or among several
    /// the one of extent > 1; `*out = -1` when no mode has stride 1. Several stride-1 modes
    /// of which none or more than one has extent > 1 are `DLPM_E_AMBIGUOUS_LAYOUT`.
    pub fn dlpm_leading_dim(tensor: *const DLTensor, out: *mut i32) -> dlpm_status;

    /// CuTe's stride order (PyTorch's `dim_order`) of a valid tensor: its modes from the
    /// outermost (largest stride) to the innermost, equal strides in mode order, written to
    /// `out[0..ndim]`; `capacity` is `out`'s length (at least ndim). More than one mode of
    /// stride 1 is `DLPM_E_AMBIGUOUS_LAYOUT`.
    pub fn dlpm_stride_order(tensor: *const DLTensor, out: *mut i32, capacity: i32) -> dlpm_status;

    /// Byte offset of element `index` (ndim entries, bounds-checked) from `tensor->data`,
    /// including `byte_offset`.
    pub fn dlpm_element_offset(
        tensor: *const DLTensor,
        index: *const i64,
        out: *mut i64,
    ) -> dlpm_status;

    /// The layout of a valid tensor resolved once: its strides in elements written to
    /// `strides[0..ndim]` (its own, or for NULL strides the compact row-major ones the
    /// library reads them as; an empty tensor's saturate at `i64::MAX`) and its element
    /// count to `*numel`. `capacity` is `strides`' length (at least ndim); `strides` may be
    /// NULL when ndim is 0. For every index inside the shape, the sum of
    /// `index[r] * strides[r]` fits `i64`.
    pub fn dlpm_layout(
        tensor: *const DLTensor,
        strides: *mut i64,
        capacity: i32,
        numel: *mut i64,
    ) -> dlpm_status;

    /// The byte offset of element `index` (ndim entries, bounds-checked) from
    /// `tensor->data`, `byte_offset` included, as [`dlpm_element_offset`] gives it, without
    /// validating the tensor again ("prechecked"): for bindings that made a view with
    /// [`dlpm_check_layout`] and address its elements one by one. `flags` are those the
    /// tensor was checked with (0 for a plain tensor): elements of a sub-byte dtype stored
    /// padded (`DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`) are addressed by their padded
    /// size; other flags change nothing. The index is still bounds-checked
    /// (`DLPM_E_INVALID_ARGUMENT`) and the sum overflow-checked; an element that is not a
    /// whole number of bytes is `DLPM_E_SUBBYTE_NOT_VIEWABLE`.
    ///
    /// # Safety
    ///
    /// `tensor` passed [`dlpm_check_layout`] or [`dlpm_check_managed`] with the same
    /// `flags` (or, for flags without the padding bit, [`dlpm_layout`], [`dlpm_check`] or
    /// [`dlpm_validate`]), and neither it nor its `shape` and `strides` have changed since:
    /// this function reads `shape[0..ndim]` and `strides[0..ndim]` without looking at them
    /// first. `index` points to `ndim` readable entries (or `ndim` is 0).
    pub fn dlpm_element_offset_prechecked(
        tensor: *const DLTensor,
        flags: u64,
        index: *const i64,
        out: *mut i64,
    ) -> dlpm_status;

    /// Bytes one element of `dtype` occupies as stored: `bits * lanes / 8`, or with
    /// `subbyte_padded` nonzero (`DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`) one byte per
    /// lane of a sub-byte dtype. 0 when that is not a whole number of bytes (packed sub-byte
    /// elements, which share bytes) or `bits` is 0. Never fails.
    pub fn dlpm_storage_itemsize(dtype: DLDataType, subbyte_padded: i32) -> usize;

    /// 1 when the host CPU may dereference memory of `device_type` (`kDLCPU`, `kDLCUDAHost`,
    /// `kDLCUDAManaged`, `kDLROCMHost`), else 0: what element access on the host, and
    /// [`dlpm_managed_copy_to_host`], require. Never fails.
    pub fn dlpm_is_host_accessible(device_type: i32) -> i32;

    /// The name of a `DLDeviceType` as dlpack.h spells it (`"kDLCPU"`, `"kDLCUDA"`), or
    /// `"unknown"` for a value it does not define. Never NULL; a static, NUL-terminated
    /// string.
    pub fn dlpm_device_type_name(device_type: i32) -> *const c_char;

    /// Decodes a consumer's `stream=` value for CUDA memory, as the Python array API encodes
    /// it (`__dlpack__`): -1 (no synchronisation) sets `*handle` to 0; 1 and 2 (the legacy
    /// and per-thread default streams) and any other positive value set `*handle` to the
    /// value, a stream handle. 0 (ambiguous between the two defaults) and values below -1
    /// are `DLPM_E_INVALID_ARGUMENT`, `*handle` untouched, with the reason in
    /// [`dlpm_last_error`].
    pub fn dlpm_cuda_array_api_stream(value: i64, handle: *mut usize) -> dlpm_status;

    /// Decodes a consumer's `stream=` value for ROCm memory, as the Python array API
    /// encodes it: -1 (no synchronisation) sets `*synchronise` to 0 and `*handle` to 0; 0
    /// (the default stream, HIP's null stream) and any value above 2 set `*synchronise` to
    /// 1 and `*handle` to the value. 1, 2 and values below -1 are
    /// `DLPM_E_INVALID_ARGUMENT`, the outputs untouched, with the reason in
    /// [`dlpm_last_error`].
    pub fn dlpm_rocm_array_api_stream(
        value: i64,
        synchronise: *mut i32,
        handle: *mut usize,
    ) -> dlpm_status;

    /// The bytes a valid tensor's elements occupy, as offsets from `tensor->data`:
    /// `[*begin, *end)`, `byte_offset` included, negative strides included (`begin` may be
    /// negative). Packed sub-byte elements share bytes; `flags` (a managed tensor's) says
    /// whether they are padded. An empty tensor addresses nothing:
    /// `*begin == *end == byte_offset`.
    pub fn dlpm_byte_span(
        tensor: *const DLTensor,
        flags: u64,
        begin: *mut i64,
        end: *mut i64,
    ) -> dlpm_status;

    /// Every byte the elements of a valid kDLBool tensor reach is 0 or 1 (what Rust needs
    /// before it reads them as `bool`): `DLPM_E_INVALID_ARGUMENT` naming a byte above 1 (the
    /// first met) and its offset from `data`; `DLPM_E_DTYPE_MISMATCH` for another dtype;
    /// `DLPM_E_DEVICE_MISMATCH` for memory the CPU cannot read;
    /// `DLPM_E_SUBBYTE_NOT_VIEWABLE` for packed lanes that do not fill whole bytes (packed
    /// bools that do pass unread); `DLPM_E_INVALID_ARGUMENT` for strides that would read more
    /// than 64 times the bytes the tensor spans. Reads the elements: the
    /// data must be readable on the host and not written meanwhile. `flags` (a managed
    /// tensor's) say whether sub-byte bools are padded.
    pub fn dlpm_check_bool_values(tensor: *const DLTensor, flags: u64) -> dlpm_status;

    /// The elements of a valid tensor in row-major index order as nested byte loops: the
    /// modes that step (extent > 1), outermost first, merged where one steps over the next
    /// exactly, into `extents[0..*ndim)` and `byte_steps[0..*ndim)`; the innermost mode whose
    /// step is one element folded into `*block`, the elements side by side (a compact
    /// row-major tensor: no mode, `*block` numel; an empty one: no mode, `*block` 0). `flags`
    /// (a managed tensor's) say whether sub-byte elements are padded; packed ones are
    /// `DLPM_E_SUBBYTE_NOT_VIEWABLE`. `capacity` is the arrays' length (at least ndim).
    pub fn dlpm_coalesce(
        tensor: *const DLTensor,
        flags: u64,
        extents: *mut i64,
        byte_steps: *mut i64,
        capacity: i32,
        ndim: *mut i32,
        block: *mut i64,
    ) -> dlpm_status;

    /// Sets every field of `req` to "anything" (no dtype check, any rank, shape, order and
    /// device, no alignment, writability, strict-strides or layout requirement) and
    /// `req.version` to `version`. Pass [`DLPM_REQUIREMENTS_VERSION`]; any other value is
    /// `DLPM_E_UNSUPPORTED_VERSION` and `*req` is untouched.
    pub fn dlpm_requirements_init(req: *mut dlpm_requirements, version: u32) -> dlpm_status;

    /// Checks a bare DLTensor against `req` (no flags: `writable` cannot be refused here).
    ///
    /// The requirements are checked first: a `version` other than
    /// [`DLPM_REQUIREMENTS_VERSION`] is `DLPM_E_UNSUPPORTED_VERSION`; `ndim` below -1 or
    /// above 64, `shape` with `ndim == -1`, a negative `num_device_types`, an unknown
    /// `order` or a `min_alignment` that is not a power of two are
    /// `DLPM_E_INVALID_ARGUMENT`. A tensor whose `shape` or `strides` pointer is not
    /// aligned for `int64_t` is `DLPM_E_MISALIGNED_METADATA`.
    pub fn dlpm_check(tensor: *const DLTensor, req: *const dlpm_requirements) -> dlpm_status;

    /// What a producer says of a tensor before exporting it (the array API's
    /// `__dlpack_data_type__` and `__dlpack_device__`), checked against the dtype and
    /// device fields of `req` alone, worded as [`dlpm_check`] words them
    /// (`DLPM_E_DTYPE_MISMATCH`, `DLPM_E_DEVICE_MISMATCH`, `DLPM_E_DEVICE_ID_MISMATCH`): a
    /// consumer refuses a wrong overload without an export. `DLPM_OK` says nothing of the
    /// rest; the tensor stays authoritative. An ill-formed dtype is `DLPM_E_INVALID_DTYPE`.
    /// The requirements are checked as for [`dlpm_check`].
    pub fn dlpm_check_announced(
        dtype: DLDataType,
        device: DLDevice,
        req: *const dlpm_requirements,
    ) -> dlpm_status;

    /// Checks a managed tensor against `req`, including its READ_ONLY and sub-byte flags.
    /// The requirements are checked as for [`dlpm_check`]. A writable check of a tensor
    /// READ_ONLY for a cause this copy of the library knows ([`dlpm_managed_read_only_cause`]:
    /// from a legacy tensor, or what its producer forbids) says that cause and its remedy
    /// in [`dlpm_last_error`].
    pub fn dlpm_check_managed(
        tensor: *const DLManagedTensorVersioned,
        req: *const dlpm_requirements,
    ) -> dlpm_status;

    /// [`dlpm_check`] and [`dlpm_layout`] in one pass, for bindings that make a view:
    /// checks `tensor` against `req` with `flags` (a managed tensor's flags, READ_ONLY and
    /// IS_SUBBYTE_TYPE_PADDED read as [`dlpm_check_managed`] reads them; 0 for a bare
    /// `DLTensor`, as [`dlpm_check`]), refusing exactly what those refuse with the same
    /// status; then writes the strides in elements to `strides[0..ndim]` (the tensor's own,
    /// or for NULL strides the compact row-major ones) and the element count to `*numel`.
    /// `capacity` is `strides`' length (negative, or after the check below ndim:
    /// `DLPM_E_INVALID_ARGUMENT`). `strides` may be NULL: then only `*numel` is written (for
    /// a caller that reads the tensor's own strides).
    pub fn dlpm_check_layout(
        tensor: *const DLTensor,
        flags: u64,
        req: *const dlpm_requirements,
        strides: *mut i64,
        capacity: i32,
        numel: *mut i64,
    ) -> dlpm_status;

    /// The one check a binding makes before it views a tensor: `tensor` with `flags`
    /// against `req` (NULL: the structure alone), then, when `element_size` is not 0, one
    /// element of the tensor's dtype as stored must be exactly `element_size` bytes
    /// (`DLPM_E_SUBBYTE_NOT_VIEWABLE` otherwise, the C++ core's words). On success writes
    /// the checked form to `*out`, whose `version` the caller has set
    /// ([`DLPM_CHECKED_TENSOR_VERSION`]).
    pub fn dlpm_check_tensor(
        tensor: *const DLTensor,
        flags: u64,
        req: *const dlpm_requirements,
        element_size: usize,
        out: *mut dlpm_checked_tensor,
    ) -> dlpm_status;

    /// `dlpm_check_managed`'s verdict, status and message for a tensor whose structure
    /// [`dlpm_check_tensor`] has already accepted into `checked`: `tensor` with `flags`
    /// against `req`, reading what that check learned instead of making the structure's pass
    /// again, when `tensor` is `checked.tensor` or an equal description (the same data,
    /// byte_offset, ndim, dtype, device, shape and strides) and `flags` carry
    /// `checked.flags`' IS_SUBBYTE_TYPE_PADDED bit; otherwise (a NULL `checked.tensor`
    /// included) the tensor is checked in full. `checked.tensor`, with its shape and strides,
    /// must be unchanged since `checked` was filled.
    pub fn dlpm_check_prechecked(
        tensor: *const DLTensor,
        flags: u64,
        checked: *const dlpm_checked_tensor,
        req: *const dlpm_requirements,
    ) -> dlpm_status;

    /// [`dlpm_check_prechecked`] that also writes the checked form to `*out` (its `version`
    /// set by the caller), as [`dlpm_check_tensor`] writes it: `checked`'s learned fields with
    /// `out.tensor = tensor` and `out.flags = flags` when the shortcut applies, else
    /// `dlpm_check_tensor(tensor, flags, req, 0, out)`. `checked` and `req` may be NULL; `out`
    /// may be `checked` itself. On failure `*out` is untouched.
    pub fn dlpm_check_prechecked_tensor(
        tensor: *const DLTensor,
        flags: u64,
        checked: *const dlpm_checked_tensor,
        req: *const dlpm_requirements,
        out: *mut dlpm_checked_tensor,
    ) -> dlpm_status;

    /// [`dlpm_check_bool_values`] of a tensor whose checked form the caller holds: read from
    /// `checked` (what [`dlpm_check_tensor`] learned) when `tensor` with `flags` is
    /// `checked.tensor` or an equal description ([`dlpm_check_prechecked`]'s test), else
    /// the full check. `checked` may be NULL. Status and message are
    /// [`dlpm_check_bool_values`]'.
    pub fn dlpm_check_bool_values_prechecked(
        tensor: *const DLTensor,
        flags: u64,
        checked: *const dlpm_checked_tensor,
    ) -> dlpm_status;

    /// Which tensors may travel as a message, and how: checks `tensor` once and admits it
    /// for `direction` ([`DLPM_MESSAGE_SEND`] or [`DLPM_MESSAGE_RECEIVE`]) by the core's
    /// rules, then writes the plan to `*out` (its `version` set by the caller).
    pub fn dlpm_plan_message(
        tensor: *const DLTensor,
        flags: u64,
        direction: i32,
        moves_cuda_memory: i32,
        out: *mut dlpm_message_plan,
    ) -> dlpm_status;

    /// Wraps the caller's buffer as a `DLManagedTensorVersioned` (shape and strides are
    /// copied). On success `*out` owns the buffer and its deleter calls `release(ctx)`
    /// exactly once; on failure `*out` is untouched and `release` is not called.
    pub fn dlpm_managed_new(
        data: *mut c_void,
        ndim: i32,
        shape: *const i64,
        strides: *const i64,
        dtype: DLDataType,
        device: DLDevice,
        byte_offset: u64,
        flags: u64,
        release: dlpm_release_fn,
        ctx: *mut c_void,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;

    /// [`dlpm_managed_new`] with the order of the strides. `'C'` or `'F'`: NULL `strides`
    /// stand for compact row-major or column-major strides, which the tensor stores
    /// explicitly; explicit `strides` must be that compact layout (extent-1 dimensions may
    /// have any stride), else `DLPM_E_NON_COMPACT_STRIDES`. `0`: explicit `strides` are kept
    /// as given, NULL ones are `DLPM_E_INVALID_ARGUMENT`. Any other `order` is
    /// `DLPM_E_INVALID_ARGUMENT`. On failure `*out` is untouched and `release` is not called.
    pub fn dlpm_managed_new_ordered(
        data: *mut c_void,
        ndim: i32,
        shape: *const i64,
        strides: *const i64,
        order: c_char,
        dtype: DLDataType,
        device: DLDevice,
        byte_offset: u64,
        flags: u64,
        release: dlpm_release_fn,
        ctx: *mut c_void,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;

    /// [`dlpm_managed_new_ordered`] for exporters whose owner is a few bytes of state and
    /// which may know their buffer's size: the `owner_size` bytes at `owner` (at most
    /// [`DLPM_INLINE_OWNER_CAPACITY`]; `owner` may be NULL when `owner_size` is 0) are
    /// copied bit for bit into the tensor's own allocation, at an address aligned to
    /// [`DLPM_INLINE_OWNER_ALIGNMENT`], and the deleter calls `release` with that address
    /// exactly once; unless `buffer_size` is [`DLPM_BUFFER_SIZE_UNKNOWN`], every byte the
    /// elements occupy must lie in `[data, data + buffer_size)`, else
    /// `DLPM_E_INVALID_ARGUMENT` (checked after the description is validated; a layout
    /// whose bytes [`dlpm_byte_span`] cannot state is its `DLPM_E_SPAN_OVERFLOW`).
    /// `description` gives data, ndim, shape, strides, dtype, device and byte_offset;
    /// `order` and every other rule are [`dlpm_managed_new_ordered`]'s. On failure `*out` is
    /// untouched and `release` is not called: the buffer and the owner are still the
    /// caller's (its bytes were only copied).
    pub fn dlpm_managed_new_inline(
        description: *const DLTensor,
        order: c_char,
        flags: u64,
        buffer_size: u64,
        release: dlpm_release_fn,
        owner: *const c_void,
        owner_size: usize,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;

    /// [`dlpm_managed_new`] with the description and the options by pointer (see
    /// [`dlpm_managed_options`], starting from [`DLPM_MANAGED_OPTIONS_INIT`]): `order` 0 is
    /// `dlpm_managed_new`, `b'C'` or `b'F'` is [`dlpm_managed_new_ordered`], with every rule
    /// of theirs; `description`'s shape and strides are copied. Another `options.version` is
    /// `DLPM_E_UNSUPPORTED_VERSION`, another order `DLPM_E_INVALID_ARGUMENT`. On failure
    /// `*out` is untouched and `release` is not called; the options need not outlive the call.
    pub fn dlpm_managed_new_from(
        description: *const DLTensor,
        options: *const dlpm_managed_options,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;

    /// [`dlpm_managed_new`] of a description [`dlpm_check_tensor`] has checked
    /// (`checked.tensor`): when it is non-empty, of rank above 0 with explicit strides, and
    /// `flags` carry `checked.flags`' IS_SUBBYTE_TYPE_PADDED bit, it is not validated again and
    /// the export's shape and strides ARE `checked.tensor`'s arrays (not copies), so the
    /// owner `ctx` stands for must keep that tensor and its arrays alive and unchanged until
    /// `release(ctx)` runs; otherwise it is the copying, validating `dlpm_managed_new`. On
    /// failure `*out` is untouched and `release` is not called.
    pub fn dlpm_managed_new_checked(
        checked: *const dlpm_checked_tensor,
        flags: u64,
        release: dlpm_release_fn,
        ctx: *mut c_void,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;

    /// Calls the tensor's deleter (if any). NULL is a no-op. A deleter that throws a C++
    /// exception ends the process (a message on stderr, then `abort()`): the exception
    /// never unwinds into the caller.
    pub fn dlpm_managed_delete(tensor: *mut DLManagedTensorVersioned);

    /// Calls a legacy (pre-1.0) tensor's deleter (if any), by the same rule as
    /// [`dlpm_managed_delete`]: NULL is a no-op, and a deleter that throws ends the process
    /// with a message.
    pub fn dlpm_legacy_delete(tensor: *mut DLManagedTensor);

    /// New compact row-major `kDLCPU` memory for a tensor of `shape` (`ndim` entries) and
    /// `dtype`, 64-byte aligned and uninitialised, owned by `*out` (its deleter frees it);
    /// `flags` are stored as given (say `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED` for
    /// padded sub-byte storage). The description is validated like [`dlpm_validate`]; a size
    /// that cannot be allocated is `DLPM_E_OUT_OF_MEMORY`.
    pub fn dlpm_managed_alloc_host(
        ndim: i32,
        shape: *const i64,
        dtype: DLDataType,
        flags: u64,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;

    /// A compact row-major `kDLCPU` copy of `tensor` in new memory owned by `*out` (as
    /// [`dlpm_managed_alloc_host`]), flagged IS_COPIED; READ_ONLY is not carried over (the
    /// copy aliases nothing), the sub-byte padding flag is. The source's memory must be
    /// readable by the CPU ([`dlpm_is_host_accessible`]), else `DLPM_E_DEVICE_MISMATCH`; a
    /// packed sub-byte source must be row-major contiguous, else
    /// `DLPM_E_SUBBYTE_NOT_VIEWABLE`. `tensor` stays the caller's.
    pub fn dlpm_managed_copy_to_host(
        tensor: *const DLManagedTensorVersioned,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;

    /// For a tensor just received: on a major version other than the library's, calls its
    /// deleter at once and returns `DLPM_E_VERSION_MISMATCH` (the tensor is gone).
    pub fn dlpm_managed_check_version(tensor: *mut DLManagedTensorVersioned) -> dlpm_status;

    /// Moves a legacy tensor into a new versioned one, marked READ_ONLY. On failure the
    /// legacy deleter has already run.
    pub fn dlpm_from_legacy(
        legacy: *mut DLManagedTensor,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;

    /// Like `dlpm_from_legacy`, but the result is writable.
    pub fn dlpm_from_legacy_writable(
        legacy: *mut DLManagedTensor,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;

    /// Moves a versioned tensor into a new legacy one. A READ_ONLY tensor is refused unless
    /// its cause is `DLPM_READ_ONLY_LEGACY_UNKNOWN` (it came from a legacy tensor; unchanged,
    /// the original comes back); padded sub-byte tensors are refused, and so is a DLPack
    /// major version other than 1 (`DLPM_E_VERSION_MISMATCH`); on failure the versioned
    /// tensor is still the caller's.
    pub fn dlpm_to_legacy(
        tensor: *mut DLManagedTensorVersioned,
        out: *mut *mut DLManagedTensor,
    ) -> dlpm_status;

    /// Why `tensor` is READ_ONLY: one of the `DLPM_READ_ONLY_*` causes. `*reason` (when
    /// `reason` is not NULL) receives, for `DLPM_READ_ONLY_PRODUCER_FORBIDS`, what the
    /// producer forbids (valid while the tensor lives), else NULL.
    pub fn dlpm_managed_read_only_cause(
        tensor: *const DLManagedTensorVersioned,
        reason: *mut *const c_char,
    ) -> i32;

    /// Moves `tensor` into a new READ_ONLY tensor over the same memory that remembers why
    /// (`DLPM_READ_ONLY_LEGACY_UNKNOWN`, or `DLPM_READ_ONLY_PRODUCER_FORBIDS` with `reason`,
    /// copied). On failure the tensor is still the caller's.
    pub fn dlpm_managed_forbid_writes(
        tensor: *mut DLManagedTensorVersioned,
        cause: i32,
        reason: *const c_char,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dlpm_status;
}

/// `DLPM_REQUIREMENTS_INIT`: every field "anything", the header's initializer, which
/// `dlpm_requirements_init` writes; for constants (the safe crate's compile-time view
/// requirements). A unit test of `dlpack-mdspan` holds it to `dlpm_requirements_init`.
pub const DLPM_REQUIREMENTS_INIT: dlpm_requirements = dlpm_requirements {
    version: DLPM_REQUIREMENTS_VERSION,
    check_dtype: 0,
    dtype: DLDataType {
        code: 0,
        bits: 0,
        lanes: 0,
    },
    ndim: -1,
    shape: core::ptr::null(),
    order: 0,
    device_types: core::ptr::null(),
    num_device_types: 0,
    device_id: -1,
    min_alignment: 0,
    writable: 0,
    null_strides: DLPM_NULL_STRIDES_ROW_MAJOR,
    layout: dlpm_layout_requirements {
        leading_dim: DLPM_ANY_LEADING_DIM,
        compact: 0,
        stride_order: core::ptr::null(),
        shape_divisors: core::ptr::null(),
        stride_divisors: core::ptr::null(),
    },
};

/// `DLPM_MANAGED_OPTIONS_INIT`: `dlpm_managed_new`'s reading, no flags, no release.
pub const DLPM_MANAGED_OPTIONS_INIT: dlpm_managed_options = dlpm_managed_options {
    version: DLPM_MANAGED_OPTIONS_VERSION,
    order: 0,
    flags: 0,
    release: None,
    ctx: core::ptr::null_mut(),
};

// Compile-time layout checks against the x86-64 / aarch64 Linux ABI. The authoritative,
// field-by-field check against the C headers is the C++ test tests/rust_abi.
#[cfg(target_pointer_width = "64")]
const _: () = {
    use core::mem::{align_of, size_of};
    assert!(size_of::<DLPackVersion>() == 8);
    assert!(size_of::<DLDevice>() == 8);
    assert!(size_of::<DLDataType>() == 4);
    assert!(size_of::<DLTensor>() == 48);
    assert!(align_of::<DLTensor>() == 8);
    assert!(size_of::<DLManagedTensor>() == 64);
    assert!(size_of::<DLManagedTensorVersioned>() == 80);
    assert!(size_of::<dlpm_version_info>() == 20);
    assert!(size_of::<dlpm_requirements>() == 96);
    assert!(size_of::<dlpm_layout_requirements>() == 32);
    assert!(core::mem::offset_of!(dlpm_requirements, layout) == 64);
    assert!(size_of::<dlpm_checked_tensor>() == 64 + 8 * 64);
    assert!(size_of::<dlpm_message_plan>() == 56 + 16 * 64);
    assert!(size_of::<dlpm_managed_options>() == 32);
};
