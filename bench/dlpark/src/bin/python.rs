// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! What a pyo3 function's tensor argument costs, dlpack-mdspan beside dlpark, in an embedded
//! interpreter (bench/dlpark/run, when PYO3_PYTHON's packages have NumPy and PyTorch): the
//! argument extracted as pyo3 does for a `#[pyfunction]` parameter, then read as a `&[f32]`
//! (the element type checked), then dropped. Timed as main.rs's rows (`rows.rs`); `--run
//! NAME N` calls one operation alone (NAME as `row / crate`), for valgrind.

#[path = "../rows.rs"]
mod rows;

use std::hint::black_box;

use dlpack_mdspan::{ManagedTensor, PyTensor};
use dlpark::{ffi::DLManagedTensorVersioned, Foreign};
use pyo3::prelude::*;

use rows::{row, Row};

fn rows_of<'py>(label: &str, obj: Bound<'py, PyAny>) -> Vec<Row<'py>> {
    let (o1, o2, o3) = (obj.clone(), obj.clone(), obj);
    vec![
        row(
            format!("{label}: borrowed argument as &[f32]"),
            "dlpack-mdspan",
            move || {
                let t = black_box(&o1).extract::<PyTensor<'_, f32>>().unwrap();
                black_box(t.view().as_slice().unwrap());
            },
        ),
        row(
            format!("{label}: owned argument as &[f32]"),
            "dlpack-mdspan",
            move || {
                let t = black_box(&o2).extract::<ManagedTensor>().unwrap();
                black_box(t.view::<f32>().unwrap().as_slice().unwrap());
            },
        ),
        row(
            format!("{label}: owned argument as &[f32]"),
            "dlpark",
            move || {
                let t = black_box(&o3)
                    .extract::<Foreign<DLManagedTensorVersioned>>()
                    .unwrap();
                // SAFETY: the producer keeps the memory alive and unwritten while `t` lives.
                black_box(unsafe { t.cpu_slice::<f32>() }.unwrap());
            },
        ),
    ]
}

fn main() -> PyResult<()> {
    Python::attach(|py| {
        let np = py.import("numpy")?;
        let array = np
            .call_method1("arange", (24,))?
            .call_method1("astype", ("float32",))?
            .call_method1("reshape", ((4, 6),))?;
        let mut ops = rows_of("NumPy ndarray 4x6", array);
        match py.import("torch") {
            Ok(torch) => {
                let t = torch.call_method1("arange", (24,))?;
                let t = t
                    .call_method1("to", (torch.getattr("float32")?,))?
                    .call_method1("reshape", ((4, 6),))?;
                ops.extend(rows_of("torch.Tensor 4x6", t));
            }
            Err(e) => eprintln!("dlpark-compare-python: no PyTorch rows ({e})"),
        }
        // `--run NAME N`, `--list` or nothing, as main.rs's.
        let args: Vec<String> = std::env::args().skip(1).collect();
        rows::main_with(&mut ops, &args);
        Ok(())
    })
}
