// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! What a pyo3 function's tensor argument costs, dlpack-mdspan beside dlpark, in an embedded
//! interpreter (bench/dlpark/run, when PYO3_PYTHON's packages have NumPy and PyTorch): the
//! argument extracted as pyo3 does for a `#[pyfunction]` parameter, then read as a `&[f32]`
//! (the element type checked), then dropped. Medians of interleaved batches, as main.rs;
//! `--run NAME N` calls one operation alone (NAME as `row / crate`), for valgrind.

#[path = "../one_op.rs"]
mod one_op;

use std::hint::black_box;
use std::time::Instant;

use dlpack_mdspan::{ManagedTensor, PyTensor};
use dlpark::{ffi::DLManagedTensorVersioned, Foreign};
use pyo3::prelude::*;

type Op<'py> = (String, &'static str, Box<dyn FnMut() + 'py>);

fn rows<'py>(label: &str, obj: Bound<'py, PyAny>) -> Vec<Op<'py>> {
    let (o1, o2, o3) = (obj.clone(), obj.clone(), obj);
    vec![
        (format!("{label}: borrowed argument as &[f32]"), "dlpack-mdspan", Box::new(move || {
            let t = black_box(&o1).extract::<PyTensor<'_, f32>>().unwrap();
            black_box(t.view().as_slice().unwrap());
        })),
        (format!("{label}: owned argument as &[f32]"), "dlpack-mdspan", Box::new(move || {
            let t = black_box(&o2).extract::<ManagedTensor>().unwrap();
            black_box(t.view::<f32>().unwrap().as_slice().unwrap());
        })),
        (format!("{label}: owned argument as &[f32]"), "dlpark", Box::new(move || {
            let t = black_box(&o3).extract::<Foreign<DLManagedTensorVersioned>>().unwrap();
            // SAFETY: the producer keeps the memory alive and unwritten while `t` lives.
            black_box(unsafe { t.cpu_slice::<f32>() }.unwrap());
        })),
    ]
}

fn batch(f: &mut dyn FnMut(), n: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_secs_f64() * 1e9 / n as f64
}

fn main() -> PyResult<()> {
    Python::attach(|py| {
        let np = py.import("numpy")?;
        let array = np.call_method1("arange", (24,))?.call_method1("astype", ("float32",))?
            .call_method1("reshape", ((4, 6),))?;
        let mut ops = rows("NumPy ndarray 4x6", array);
        match py.import("torch") {
            Ok(torch) => {
                let t = torch.call_method1("arange", (24,))?;
                let t = t.call_method1("to", (torch.getattr("float32")?,))?.call_method1("reshape", ((4, 6),))?;
                ops.extend(rows("torch.Tensor 4x6", t));
            }
            Err(e) => eprintln!("dlpark-compare-python: no PyTorch rows ({e})"),
        }
        // `--run NAME N`: that operation alone, N times (for valgrind, as main.rs's).
        let args: Vec<String> = std::env::args().skip(1).collect();
        if one_op::run_named(&mut ops, &args) {
            return Ok(());
        }
        const SAMPLES: usize = 31;
        const CALLS: u64 = 5_000;
        for (_, _, f) in ops.iter_mut() {
            batch(f.as_mut(), CALLS); // warm-up
        }
        let mut samples = vec![Vec::with_capacity(SAMPLES); ops.len()];
        for _ in 0..SAMPLES {
            for (i, (_, _, f)) in ops.iter_mut().enumerate() {
                samples[i].push(batch(f.as_mut(), CALLS));
            }
        }
        println!("{:<50} {:<14} {:>10}", "row", "crate", "median ns");
        for (i, (r, c, _)) in ops.iter().enumerate() {
            samples[i].sort_by(f64::total_cmp);
            println!("{:<50} {:<14} {:>10.1}", r, c, samples[i][SAMPLES / 2]);
        }
        Ok(())
    })
}
