// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! dlpack-mdspan and dlpark doing the same jobs in one process (bench/dlpark/run):
//!
//! - a typed view of one `DLManagedTensorVersioned` (made once, viewed again and again),
//!   as a `&[f32]` and as an `ndarray::ArrayViewD<f32>`;
//! - an owning export of a `Vec<f32>`, and of an `ndarray::Array2<f32>` (made and dropped).
//!
//! `dlpark-compare` times every row's operations interleaved, batch by batch, at every
//! placement of the stack, and prints each one's interquartile mean ns per operation: the
//! timing of the project's Rust benchmark (`dlpack-mdspan-bench`'s library).
//! `dlpark-compare --run NAME N` calls one operation N times, one batch, for valgrind: `run`
//! counts instructions (callgrind, which instruments and counts that batch alone) and heap
//! allocations (memcheck, which sees the C++ facade's as well as Rust's) of an N-call and a
//! 2N-call run and takes the difference, so the fixed costs cancel out; `--list` prints the
//! names.

mod rows;

use rows::{row, Row};

use std::hint::black_box;
use std::mem::ManuallyDrop;

use dlpack_mdspan::ManagedTensor;
use dlpark::{allocation::dynamic, ffi, metadata, Foreign, Local, TryFromDlpack};
use ndarray::{Array2, ArrayViewD, IxDyn};

const SHAPE: [i64; 2] = [4, 6];
const STRIDES: [i64; 2] = [6, 1];

/// One tensor, viewed by both crates: made by dlpack-mdspan (explicit row-major strides),
/// owned by it, and borrowed by dlpark's `Foreign`, which must never run its deleter.
struct Shared {
    ours: ManagedTensor,
    theirs: ManuallyDrop<Foreign<ffi::DLManagedTensorVersioned>>,
}

fn shared_tensor() -> &'static Shared {
    let data: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let ours = ManagedTensor::build_from_vec(data, &SHAPE)
        .strides(&STRIDES)
        .finish()
        .expect("export");
    // SAFETY: the two crates mirror the same C struct (DLPack 1.3's); `ours` keeps the
    // tensor alive for the whole process (leaked below) and the Foreign is never dropped.
    let theirs = unsafe { Foreign::from_raw(ours.as_ptr().cast()) }.expect("dlpark from_raw");
    Box::leak(Box::new(Shared {
        ours,
        theirs: ManuallyDrop::new(theirs),
    }))
}

fn dlpark_vec(data: Vec<f32>) -> Local<ffi::DLManagedTensorVersioned> {
    let ptr = data.as_ptr().cast_mut().cast();
    let prepared =
        metadata::Dynamic::new(metadata::Copied(&SHAPE[..]), metadata::Copied(&STRIDES[..]))
            .prepare::<ffi::DLManagedTensorVersioned>()
            .expect("prepare");
    let mut init = prepared.initialize(Box::new(data)).expect("initialize");
    init.set_data(ptr)
        .set_dtype(<f32 as dlpark::DlpackElement>::DTYPE)
        .set_device(ffi::DLDevice::CPU);
    // SAFETY: the boxed Vec, the context, owns the 24 initialized f32 the data points at.
    unsafe { init.finish() }
}

/// Before anything is timed: both crates see the same elements, strides and exports, so a
/// row never times an operation that went wrong.
fn check_agreement() {
    let s = shared_tensor();
    let ours = s.ours.view::<f32>().unwrap();
    // SAFETY: as in ops().
    let theirs = unsafe { s.theirs.cpu_slice::<f32>() }.unwrap();
    assert_eq!(
        ours.as_slice().unwrap(),
        theirs,
        "the two &[f32] views differ"
    );
    // SAFETY: as in ops().
    let theirs = unsafe { ArrayViewD::<f32>::try_from_dlpack(&*s.theirs) }.unwrap();
    assert_eq!(
        ours.as_array::<IxDyn>().unwrap(),
        theirs,
        "the two ndarray views differ"
    );
    let vec: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let (a, b) = (
        ManagedTensor::from_vec(vec.clone(), &SHAPE).unwrap(),
        dlpark_vec(vec),
    );
    assert_eq!(
        a.view::<f32>().unwrap().as_slice().unwrap(),
        b.cpu_slice::<f32>().unwrap()
    );
    let array = Array2::<f32>::from_shape_fn((4, 6), |(i, j)| (i * 6 + j) as f32).reversed_axes();
    let a = ManagedTensor::from_ndarray(array.clone()).unwrap();
    let init: dynamic::Initialized<ffi::DLManagedTensorVersioned> =
        Box::new(array).try_into().unwrap();
    // SAFETY: the boxed array, the context, owns the elements (dlpark's own export), and
    // nothing else reaches them while the view lives.
    let b = unsafe { init.finish() }.into_foreign();
    let b = unsafe { ArrayViewD::<f32>::try_from_dlpack(&b) }.unwrap();
    assert_eq!(
        a.view::<f32>().unwrap().as_array::<IxDyn>().unwrap(),
        b,
        "the two Array exports differ"
    );
    assert_eq!(b.strides(), &[1, 6]);
}

/// The rows: (row, crate, one operation). Inputs are made once, outside the operations.
fn ops() -> Vec<Row<'static>> {
    let s = shared_tensor();
    let vec: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let (v1, v2, v3) = (vec.clone(), vec.clone(), vec);
    let array = Array2::<f32>::from_shape_fn((4, 6), |(i, j)| (i * 6 + j) as f32);
    let (a1, a2, a3) = (array.clone(), array.clone(), array);
    vec![
        row("view as &[f32]", "dlpack-mdspan", move || {
            let v = black_box(&s.ours).view::<f32>().unwrap();
            black_box(v.as_slice().unwrap());
        }),
        row("view as &[f32]", "dlpark", move || {
            // SAFETY: the tensor is valid and unwritten for the process (shared_tensor).
            black_box(unsafe { black_box(&*s.theirs).cpu_slice::<f32>() }.unwrap());
        }),
        row("view as ArrayViewD<f32>", "dlpack-mdspan", move || {
            let v = black_box(&s.ours).view::<f32>().unwrap();
            black_box(v.as_array::<IxDyn>().unwrap());
        }),
        row("view as ArrayViewD<f32>", "dlpark", move || {
            // SAFETY: as above.
            black_box(
                unsafe { ArrayViewD::<f32>::try_from_dlpack(black_box(&*s.theirs)) }.unwrap(),
            );
        }),
        row("Vec<f32> clone (shared by the next two)", "-", move || {
            drop(black_box(v1.clone()));
        }),
        row(
            "export a Vec<f32> (clone, export, drop)",
            "dlpack-mdspan",
            move || {
                drop(black_box(
                    ManagedTensor::from_vec(v2.clone(), &SHAPE).unwrap(),
                ));
            },
        ),
        row(
            "export a Vec<f32> (clone, export, drop)",
            "dlpark",
            move || {
                drop(black_box(dlpark_vec(v3.clone())));
            },
        ),
        row(
            "Array2<f32> clone (shared by the next two)",
            "-",
            move || {
                drop(black_box(a1.clone()));
            },
        ),
        row(
            "export an Array2<f32> (clone, export, drop)",
            "dlpack-mdspan",
            move || {
                drop(black_box(ManagedTensor::from_ndarray(a2.clone()).unwrap()));
            },
        ),
        row(
            "export an Array2<f32> (clone, export, drop)",
            "dlpark",
            move || {
                let init: dynamic::Initialized<ffi::DLManagedTensorVersioned> =
                    Box::new(a3.clone()).try_into().unwrap();
                // SAFETY: the boxed array, the context, owns the elements (dlpark's own export).
                drop(black_box(unsafe { init.finish() }));
            },
        ),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    check_agreement();
    rows::main_with(&mut ops(), &args);
}
