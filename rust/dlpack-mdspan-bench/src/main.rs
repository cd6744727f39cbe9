// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Benchmarks of the safe Rust layer (`dlpack-mdspan`) against the raw facade calls it
//! makes (`dlpack-mdspan-sys`). Run by `scripts/bench`, which merges the rows into its
//! table; by hand:
//!
//! ```sh
//! DLPACK_MDSPAN_LIB_DIR=build/bench/ffi CARGO_TARGET_DIR=build/bench/cargo \
//!   cargo run --release --offline --locked -p dlpack-mdspan-bench -- [--smoke] [--tsv FILE]
//! ```
//!
//! Timing is the crate's library (`src/lib.rs`, shared with `bench/dlpark`), which follows
//! the C++ suite (`bench/cpp/harness.hpp`): each comparison measures its operations
//! interleaved, batch by batch, each batch at one of 256 placements of the stack across a
//! page, and reports each one's interquartile mean ns per operation, so the baseline and the
//! candidate see the same machine load and the same placements. `std::hint::black_box`
//! keeps the inputs opaque and the results alive.
//!
//! Allocations per operation count Rust's (a counting `#[global_allocator]`) and the C++
//! facade's (the global `operator new` forms the static library calls are defined here, in
//! the executable, so the linker binds the facade's calls to them).
//!
//! `--instructions N` counts instructions instead of timing, with the C++ suite's protocol
//! (`bench/cpp/harness.cpp`), so `bench/callgrind.py` reads it unchanged:
//!
//! ```sh
//! python3 bench/callgrind.py --exe build/bench/cargo/release/dlpack-mdspan-bench --n 1000
//! ```
//!
//! Each operation runs a warm-up batch, then a pass of N calls and one of 2N, each collected
//! alone and dumped as `dlpm-op <index> <calls>` through callgrind's client requests (the
//! library's `callgrind` module). The difference over N is one call's instructions.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;
use std::hint::black_box;
use std::io::Write;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use dlpack_mdspan::{DataType, Device, ManagedTensor, TensorView};
use dlpack_mdspan_bench::callgrind::{client_request, collected_batch, DUMP_STATS_AT, ZERO_STATS};
use dlpack_mdspan_bench::{calls_per_batch, op, seconds, time_interleaved, BATCHES, BATCH_US};
use dlpack_mdspan_sys as sys;

// ---- allocation counting --------------------------------------------------------------

static RUST_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static CXX_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

struct Counting;

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        RUST_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        RUST_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        RUST_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's pointer and layouts.
        unsafe { System.realloc(p, layout, new_size) }
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(p, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

fn cxx_new(size: usize) -> *mut c_void {
    CXX_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    // SAFETY: plain malloc; operator new never returns NULL for size 0 either.
    unsafe { malloc(size.max(1)) }
}

fn cxx_new_or_abort(size: usize) -> *mut c_void {
    let p = cxx_new(size);
    if p.is_null() {
        std::process::abort(); // no C++ exception can be thrown from here
    }
    p
}

// The Itanium-ABI names of the global operator new / delete forms (C++ libraries built with
// libc++ reach malloc/free through these; libc++'s own are malloc/free too, so memory from
// either side may be released by the other).
#[no_mangle]
extern "C" fn _Znwm(size: usize) -> *mut c_void {
    cxx_new_or_abort(size)
}
#[no_mangle]
extern "C" fn _Znam(size: usize) -> *mut c_void {
    cxx_new_or_abort(size)
}
#[no_mangle]
extern "C" fn _ZnwmRKSt9nothrow_t(size: usize, _: *const c_void) -> *mut c_void {
    cxx_new(size)
}
#[no_mangle]
extern "C" fn _ZnamRKSt9nothrow_t(size: usize, _: *const c_void) -> *mut c_void {
    cxx_new(size)
}
#[no_mangle]
unsafe extern "C" fn _ZdlPv(p: *mut c_void) {
    // SAFETY: p came from malloc (any operator new above, or libc++'s) or is NULL.
    unsafe { free(p) }
}
#[no_mangle]
unsafe extern "C" fn _ZdaPv(p: *mut c_void) {
    // SAFETY: as above.
    unsafe { free(p) }
}
#[no_mangle]
unsafe extern "C" fn _ZdlPvm(p: *mut c_void, _: usize) {
    // SAFETY: as above.
    unsafe { free(p) }
}
#[no_mangle]
unsafe extern "C" fn _ZdaPvm(p: *mut c_void, _: usize) {
    // SAFETY: as above.
    unsafe { free(p) }
}
#[no_mangle]
unsafe extern "C" fn _ZdlPvRKSt9nothrow_t(p: *mut c_void, _: *const c_void) {
    // SAFETY: as above.
    unsafe { free(p) }
}
#[no_mangle]
unsafe extern "C" fn _ZdaPvRKSt9nothrow_t(p: *mut c_void, _: *const c_void) {
    // SAFETY: as above.
    unsafe { free(p) }
}

fn allocations() -> u64 {
    RUST_ALLOCATIONS.load(Ordering::Relaxed) + CXX_ALLOCATIONS.load(Ordering::Relaxed)
}

// ---- harness ---------------------------------------------------------------------------

struct Options {
    smoke: bool,
    /// > 0: callgrind passes of this many calls (and twice as many) instead of timing.
    instructions: u64,
    batches: usize,
    batch_us: f64,
    tsv: Option<String>,
}

/// An operation of this benchmark: each owns its inputs.
type Op = dlpack_mdspan_bench::Op<'static>;

struct Row {
    name: String,
    ns: f64,
    baseline: String,
    allocs: f64,
    note: String,
}

/// `--instructions`: for each operation a warm-up batch, then passes of n and 2n calls,
/// each collected alone and dumped as `dlpm-op <index> <calls>` (bench/callgrind.py). The
/// row's value is the operation's index.
fn count_instructions(opts: &Options, rows: &mut Vec<Row>, ops: &mut [&mut Op], note: &str) {
    let n = opts.instructions;
    let first_index = rows.len();
    let base = ops[0].name.clone();
    for (i, o) in ops.iter_mut().enumerate() {
        let index = first_index + i;
        (o.batch)(n);
        for calls in [n, 2 * n] {
            let tag = std::ffi::CString::new(format!("dlpm-op {index} {calls}")).expect("no NUL");
            client_request(ZERO_STATS, 0);
            collected_batch(o, calls);
            client_request(DUMP_STATS_AT, tag.as_ptr() as usize);
        }
        rows.push(Row {
            name: o.name.clone(),
            ns: index as f64,
            baseline: if i == 0 { String::new() } else { base.clone() },
            allocs: 0.0,
            note: if i == 0 {
                String::new()
            } else {
                note.to_string()
            },
        });
    }
}

fn compare(opts: &Options, rows: &mut Vec<Row>, mut baseline: Op, candidates: Vec<Op>, note: &str) {
    eprintln!("  Rust: {} (+{})", baseline.name, candidates.len());
    let mut ops: Vec<&mut Op> = vec![&mut baseline];
    let mut candidates = candidates;
    ops.extend(candidates.iter_mut());
    if opts.instructions > 0 {
        count_instructions(opts, rows, &mut ops, note);
        return;
    }

    let reps: u64 = if opts.smoke { 1 } else { 64 };
    let mut allocs = Vec::new();
    for o in ops.iter_mut() {
        let before = allocations();
        (o.batch)(reps);
        allocs.push((allocations() - before) as f64 / reps as f64);
    }

    let ns = if opts.smoke {
        ops.iter_mut().map(|o| seconds(o, 1) * 1e9).collect()
    } else {
        let calls: Vec<u64> = ops
            .iter_mut()
            .map(|o| calls_per_batch(o, opts.batch_us))
            .collect();
        time_interleaved(&mut ops, &calls, opts.batches)
    };

    let base = ops[0].name.clone();
    for (i, o) in ops.iter().enumerate() {
        rows.push(Row {
            name: o.name.clone(),
            ns: ns[i],
            baseline: if i == 0 { String::new() } else { base.clone() },
            allocs: allocs[i],
            note: if i == 0 {
                String::new()
            } else {
                note.to_string()
            },
        });
    }
}

// ---- fixtures --------------------------------------------------------------------------

const SHAPE: [i64; 2] = [4, 6];
const STRIDES: [i64; 2] = [6, 1];
static HOST: [sys::DLDeviceType; 4] = [
    sys::kDLCPU,
    sys::kDLCUDAHost,
    sys::kDLCUDAManaged,
    sys::kDLROCMHost,
];

/// What `view::<f32>()` asks the facade for, written as a plain struct literal: what a
/// careful user of the raw bindings would pass.
fn f32_requirements(writable: bool) -> sys::dlpm_requirements {
    sys::dlpm_requirements {
        version: sys::DLPM_REQUIREMENTS_VERSION,
        check_dtype: 1,
        dtype: DataType::F32.0,
        ndim: -1,
        shape: ptr::null(),
        order: 0,
        device_types: HOST.as_ptr(),
        num_device_types: HOST.len() as i32,
        device_id: -1,
        min_alignment: std::mem::align_of::<f32>() as u64,
        writable: i32::from(writable),
        null_strides: sys::DLPM_NULL_STRIDES_ROW_MAJOR,
        layout: sys::dlpm_layout_requirements {
            leading_dim: sys::DLPM_ANY_LEADING_DIM,
            compact: 0,
            stride_order: ptr::null(),
            shape_divisors: ptr::null(),
            stride_divisors: ptr::null(),
        },
    }
}

/// A bare 4x6 f32 DLTensor over memory that lives for the whole program, with its
/// row-major strides, or NULL ones (`null_strides`), which mean the same.
fn leaked_tensor(null_strides: bool) -> &'static sys::DLTensor {
    leaked(1.0f32, DataType::F32, null_strides)
}

/// A 4x6 kDLBool tensor (every byte 1), strided, over memory that lives for the whole
/// program.
fn leaked_bool_tensor() -> &'static sys::DLTensor {
    leaked(1u8, DataType::BOOL, false)
}

/// A bare 4x6 DLTensor of `dtype` whose 24 elements are `value`, leaked for the program's
/// life.
fn leaked<T: Copy + 'static>(
    value: T,
    dtype: DataType,
    null_strides: bool,
) -> &'static sys::DLTensor {
    let data: &'static mut [T] = Box::leak(vec![value; 24].into_boxed_slice());
    let shape: &'static mut [i64; 2] = Box::leak(Box::new(SHAPE));
    let strides: &'static mut [i64; 2] = Box::leak(Box::new(STRIDES));
    Box::leak(Box::new(sys::DLTensor {
        data: data.as_mut_ptr().cast(),
        device: Device::CPU.0,
        ndim: 2,
        dtype: dtype.0,
        shape: shape.as_mut_ptr(),
        strides: if null_strides {
            ptr::null_mut()
        } else {
            strides.as_mut_ptr()
        },
        byte_offset: 0,
    }))
}

unsafe extern "C" fn drop_boxed_vec(ctx: *mut c_void) {
    // SAFETY: ctx is the Box::into_raw of a Box<Vec<f32>>, released exactly once (the
    // facade's contract for dlpm_managed_new).
    drop(unsafe { Box::from_raw(ctx.cast::<Vec<f32>>()) });
}

fn ok(status: sys::dlpm_status) {
    assert_eq!(status, sys::DLPM_OK, "facade call failed");
}

// ---- the benchmarks --------------------------------------------------------------------

fn run(opts: &Options) -> Vec<Row> {
    let mut rows = Vec::new();
    // The raw rows' requirements, built once, as a careful user of the raw bindings would
    // (a view's are a constant): no row rebuilds them on every call.
    let req = f32_requirements(false);

    // 1. A safe view of a bare DLTensor vs the one facade call behind it.
    let t = leaked_tensor(false);
    {
        // SAFETY: t and its arrays live for the whole program and are never written.
        let v = unsafe { TensorView::<f32>::from_raw(t) }.expect("valid tensor");
        assert_eq!(v.shape(), &SHAPE);
    }
    compare(
        opts,
        &mut rows,
        op("view of a bare DLTensor: raw dlpm_check", move || {
            // SAFETY: t is a live DLTensor; req a valid requirements struct.
            let s = unsafe { sys::dlpm_check(black_box(t), &req) };
            black_box(s);
        }),
        vec![
            op(
                "view of a bare DLTensor: raw dlpm_check_tensor (the call the view makes)",
                move || {
                    let mut checked = std::mem::MaybeUninit::<sys::dlpm_checked_tensor>::uninit();
                    // SAFETY: t is a live DLTensor; req a valid requirements struct; `checked`
                    // is writable storage for the struct, its version set before the call;
                    // the element size f32's, as a view passes it.
                    let s = unsafe {
                        ptr::addr_of_mut!((*checked.as_mut_ptr()).version)
                            .write(sys::DLPM_CHECKED_TENSOR_VERSION);
                        sys::dlpm_check_tensor(
                            black_box(t),
                            0,
                            &req,
                            std::mem::size_of::<f32>(),
                            checked.as_mut_ptr(),
                        )
                    };
                    black_box((s, &checked));
                },
            ),
            op(
                "view of a bare DLTensor: TensorView::<f32>::from_raw",
                move || {
                    // SAFETY: t and its arrays live for the whole program and are never written.
                    let v = unsafe { TensorView::<f32>::from_raw(black_box(t)) };
                    black_box(&v);
                },
            ),
        ],
        "safe side: one dlpm_check_tensor (no flags) and the view struct",
    );

    // 1a. A view of bools: the one check, then the bytes read (each 0 or 1). A raw caller
    // makes two facade calls, the check and dlpm_check_bool_values, which checks the tensor
    // again; the view reads the bytes from what its check learned.
    let bools = leaked_bool_tensor();
    let bool_req = sys::dlpm_requirements {
        dtype: DataType::BOOL.0,
        min_alignment: 1,
        ..f32_requirements(false)
    };
    {
        // SAFETY: bools and its arrays live for the whole program and are never written.
        let v = unsafe { TensorView::<bool>::from_raw(bools) }.expect("valid tensor");
        assert_eq!(v.shape(), &SHAPE);
    }
    compare(
        opts,
        &mut rows,
        op(
            "bool view of a bare DLTensor: raw dlpm_check_tensor, then dlpm_check_bool_values",
            move || {
                let mut checked = std::mem::MaybeUninit::<sys::dlpm_checked_tensor>::uninit();
                // SAFETY: as the f32 row's; the bytes are readable (leaked, never written).
                let s = unsafe {
                    ptr::addr_of_mut!((*checked.as_mut_ptr()).version)
                        .write(sys::DLPM_CHECKED_TENSOR_VERSION);
                    let s = sys::dlpm_check_tensor(
                        black_box(bools),
                        0,
                        &bool_req,
                        1,
                        checked.as_mut_ptr(),
                    );
                    if s == sys::DLPM_OK {
                        sys::dlpm_check_bool_values(black_box(bools), 0)
                    } else {
                        s
                    }
                };
                black_box((s, &checked));
            },
        ),
        vec![op(
            "bool view of a bare DLTensor: TensorView::<bool>::from_raw",
            move || {
                // SAFETY: bools and its arrays live for the whole program and are never written.
                let v = unsafe { TensorView::<bool>::from_raw(black_box(bools)) };
                black_box(&v);
            },
        )],
        "safe side: one dlpm_check_tensor, the bytes read from its checked form",
    );

    // 1b. The same with NULL strides: the facade resolves them, the view keeps them inline.
    let null_strides = leaked_tensor(true);
    {
        // SAFETY: null_strides and its arrays live for the whole program and are never written.
        let v = unsafe { TensorView::<f32>::from_raw(null_strides) }.expect("valid tensor");
        assert_eq!(v.strides(), &STRIDES);
    }
    compare(
        opts,
        &mut rows,
        op(
            "view of a bare DLTensor, NULL strides: raw dlpm_check_layout",
            move || {
                let mut strides = [0i64; 2];
                let mut numel = 0i64;
                // SAFETY: null_strides is a live DLTensor; req a valid requirements struct; strides has
                // room for the 2 the capacity says; numel a valid out-parameter.
                let s = unsafe {
                    sys::dlpm_check_layout(
                        black_box(null_strides),
                        0,
                        &req,
                        strides.as_mut_ptr(),
                        2,
                        &mut numel,
                    )
                };
                black_box((s, &strides, numel));
            },
        ),
        vec![op(
            "view of a bare DLTensor, NULL strides: TensorView::<f32>::from_raw",
            move || {
                // SAFETY: null_strides and its arrays live for the whole program and are never written.
                let v = unsafe { TensorView::<f32>::from_raw(black_box(null_strides)) };
                black_box(&v);
            },
        )],
        "safe side: one dlpm_check_tensor, its resolved strides copied into the view, no allocation",
    );

    // 1c. An ndarray view of the same tensor vs the view it is made from (feature ndarray).
    compare(
        opts,
        &mut rows,
        op(
            "ndarray view of a bare DLTensor: TensorView::<f32>::from_raw",
            move || {
                // SAFETY: t and its arrays live for the whole program and are never written.
                let v = unsafe { TensorView::<f32>::from_raw(black_box(t)) };
                black_box(&v);
            },
        ),
        vec![op(
            "ndarray view of a bare DLTensor: from_raw, then as_array::<Ix2>",
            move || {
                // SAFETY: as above.
                let v = unsafe { TensorView::<f32>::from_raw(black_box(t)) }.expect("valid tensor");
                let a = v.as_array::<ndarray::Ix2>();
                black_box(&a);
            },
        )],
        "ndarray side: the view's shape and strides copied into ndarray's dimension types",
    );

    // 2. A safe view of a managed tensor vs dlpm_check_managed.
    let owned: &'static ManagedTensor = Box::leak(Box::new(
        ManagedTensor::from_vec(vec![1.0f32; 24], &SHAPE).expect("export"),
    ));
    let raw_ptr = owned.as_ptr();
    compare(
        opts,
        &mut rows,
        op(
            "view of a ManagedTensor: raw dlpm_check_managed",
            move || {
                // SAFETY: raw_ptr is owned by `owned`, which lives for the whole program.
                let s = unsafe { sys::dlpm_check_managed(black_box(raw_ptr), &req) };
                black_box(s);
            },
        ),
        vec![op(
            "view of a ManagedTensor: ManagedTensor::view::<f32>()",
            move || {
                let v = black_box(owned).view::<f32>();
                black_box(&v);
            },
        )],
        "safe side: one dlpm_check_tensor (the tensor's flags) and the view struct",
    );

    // 3. The round trip: export a Vec, hand it out, take it back, view it, drop it.
    compare(
        opts,
        &mut rows,
        op(
            "round trip: raw dlpm_managed_new ... dlpm_managed_delete",
            move || {
                let mut v = vec![0.0f32; 24];
                let data = v.as_mut_ptr().cast::<c_void>();
                let ctx = Box::into_raw(Box::new(v)).cast::<c_void>();
                let mut out: *mut sys::DLManagedTensorVersioned = ptr::null_mut();
                // SAFETY: shape/strides hold 2 entries each; ctx is released exactly once by
                // drop_boxed_vec; out is a valid out-parameter.
                ok(unsafe {
                    sys::dlpm_managed_new(
                        data,
                        2,
                        SHAPE.as_ptr(),
                        STRIDES.as_ptr(),
                        DataType::F32.0,
                        Device::CPU.0,
                        0,
                        0,
                        Some(drop_boxed_vec),
                        ctx,
                        &mut out,
                    )
                });
                // Handed out ... and taken back.
                let p = black_box(out);
                // SAFETY: p is the live tensor made above; deleted exactly once, here.
                unsafe {
                    ok(sys::dlpm_managed_check_version(p));
                    ok(sys::dlpm_check_managed(p, &req));
                    black_box((*p).dl_tensor.shape);
                    sys::dlpm_managed_delete(p);
                }
            },
        ),
        vec![op(
            "round trip: from_vec, into_raw, from_raw, view, drop",
            || {
                let t = ManagedTensor::from_vec(vec![0.0f32; 24], &SHAPE).expect("export");
                let raw = black_box(t.into_raw()); // handed out ... and taken back
                                                   // SAFETY: raw is the live tensor from into_raw; ownership comes back here.
                let t = unsafe { ManagedTensor::from_raw(raw) }.expect("adopt");
                {
                    let v = t.view::<f32>().expect("view");
                    black_box(v.shape());
                }
                drop(t);
            },
        )],
        "both sides allocate the Vec<f32> of 24 elements each time",
    );

    // 4. Element access through a view made once: TensorView::get (bounds check, offset,
    //    reference) against the facade's own per-element answer, dlpm_element_offset.
    let view: &'static TensorView<'static, f32> = Box::leak(Box::new(
        // SAFETY: t and its arrays live for the whole program and are never written.
        unsafe { TensorView::<f32>::from_raw(t) }.expect("view"),
    ));
    compare(
        opts,
        &mut rows,
        op("element access: raw dlpm_element_offset", move || {
            let index = [black_box(3i64), black_box(5i64)];
            let mut offset = 0i64;
            // SAFETY: t is a live DLTensor of rank 2; index holds 2 entries; offset is a
            // valid out-parameter.
            let s = unsafe { sys::dlpm_element_offset(black_box(t), index.as_ptr(), &mut offset) };
            black_box((s, offset));
        }),
        vec![op("element access: TensorView::<f32>::get", move || {
            let x = black_box(view).get(&[black_box(3usize), black_box(5usize)]);
            black_box(x);
        })],
        "the view is made once; each op addresses one element of the 4x6 tensor",
    );

    // 5. A non-contiguous copy-out, which addresses every element through the view's
    //    accessor: to_vec of the transposed 6x4 view of the same 24 floats.
    let transposed: &'static sys::DLTensor = {
        let shape: &'static mut [i64; 2] = Box::leak(Box::new([SHAPE[1], SHAPE[0]]));
        let strides: &'static mut [i64; 2] = Box::leak(Box::new([STRIDES[1], STRIDES[0]]));
        Box::leak(Box::new(sys::DLTensor {
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            ..*t
        }))
    };
    let columns: &'static TensorView<'static, f32> = Box::leak(Box::new(
        // SAFETY: as above: the arrays and the data live for the whole program, unwritten.
        unsafe { TensorView::<f32>::from_raw(transposed) }.expect("view"),
    ));
    compare(
        opts,
        &mut rows,
        op(
            "strided copy-out (6x4 transposed): raw dlpm_element_offset loop",
            move || {
                let t = black_box(transposed);
                let base = t.data.cast::<u8>();
                let mut out = Vec::with_capacity(24);
                for i in 0..SHAPE[1] {
                    for j in 0..SHAPE[0] {
                        let index = [i, j];
                        let mut offset = 0i64;
                        // SAFETY: t is a live DLTensor of rank 2; index is in bounds;
                        // offset is a valid out-parameter; the element it addresses is an
                        // f32 of the leaked, never-written data.
                        unsafe {
                            ok(sys::dlpm_element_offset(t, index.as_ptr(), &mut offset));
                            out.push(base.offset(offset as isize).cast::<f32>().read());
                        }
                    }
                }
                black_box(out);
            },
        ),
        vec![op(
            "strided copy-out (6x4 transposed): TensorView::to_vec",
            move || {
                black_box(black_box(columns).to_vec());
            },
        )],
        "both sides allocate the Vec<f32> of 24 elements each time",
    );

    rows
}

fn main() {
    let mut opts = Options {
        smoke: false,
        instructions: 0,
        batches: BATCHES,
        batch_us: BATCH_US,
        tsv: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--smoke" => opts.smoke = true,
            "--tsv" => opts.tsv = args.next(),
            "--instructions" => {
                opts.instructions = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&n| n > 0)
                    .expect("--instructions N")
            }
            "--batches" => {
                opts.batches = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .expect("--batches N")
            }
            "--batch-us" => {
                opts.batch_us = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .expect("--batch-us US")
            }
            _ => {
                eprintln!(
                    "usage: dlpack-mdspan-bench [--smoke] [--tsv FILE] [--batches N] [--batch-us US] \
                     [--instructions N]"
                );
                std::process::exit(2);
            }
        }
    }
    let rows = run(&opts);
    let mut text = String::from("section\tname\tvalue\tunit\tbaseline\tallocs\tnote\n");
    for r in &rows {
        text.push_str(&format!(
            "Rust\t{}\t{}\tns\t{}\t{}\t{}\n",
            r.name, r.ns, r.baseline, r.allocs, r.note
        ));
        if opts.instructions > 0 {
            println!("  {:<62} callgrind dump index {}", r.name, r.ns);
        } else {
            println!(
                "  {:<62} {:>9.2} ns  {:>5.2} allocs",
                r.name, r.ns, r.allocs
            );
        }
    }
    if let Some(path) = &opts.tsv {
        std::fs::File::create(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
    }
}
