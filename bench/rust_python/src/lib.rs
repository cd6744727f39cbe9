// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! pyo3 functions that take a tensor argument and do nothing else, for bench_py.py's rows
//! beside the C component's `borrow_f32_2d` and `import_f32_2d` (bench/python/dlpm_bench.c).

use dlpack_mdspan::{ManagedTensor, PyTensor, PyTensorMut};
use pyo3::prelude::*;

/// A `PyTensor<f32>` argument (`dlpm_py_borrow` with a view's requirements, the view made
/// once) and its view (lent by `view_ref`, not copied), as `borrow_f32_2d` makes one;
/// dropped at return (`dlpm_py_borrow_end`).
#[pyfunction]
fn borrow_f32(x: PyTensor<'_, f32>) {
    std::hint::black_box(x.view_ref());
}

/// The same argument with its view copied out (`PyTensor::view`, the 0.2.0 accessor).
#[pyfunction]
fn borrow_f32_view_copy(x: PyTensor<'_, f32>) {
    std::hint::black_box(&x.view());
}

/// A `PyTensorMut<f32>` argument (`dlpm_py_borrow` for writing, with a writable view's
/// requirements: the owning path, or this extension's own writable Tensor's lent form), beside
/// `borrow_f32_2d_writable`; its view made (`view_mut`), dropped at return.
#[pyfunction]
fn borrow_f32_mut(mut x: PyTensorMut<'_, f32>) {
    std::hint::black_box(&x.view_mut());
}

/// One argument, unused: pyo3's own call floor, beside the C component's `noop`.
#[pyfunction]
fn noop(_x: &Bound<'_, PyAny>) {}

/// A `ManagedTensor` argument (`dlpm_py_import`, owned), dropped at return.
#[pyfunction]
fn import_managed(x: ManagedTensor) {
    std::hint::black_box(&x);
}

/// A 4x6 float32 `dlpack_mdspan.Tensor` made by this extension's copy of the component
/// (`ManagedTensor` returned: `dlpm_py_tensor_new`), whose checked form a `PyTensor` of the
/// same extension is handed back by the borrow. The C bench's `make_tensor` is a Tensor of
/// `dlpm_bench`'s own copy, which this extension's component does not recognise as its own.
#[pyfunction]
fn make_tensor() -> PyResult<ManagedTensor> {
    ManagedTensor::from_vec((0..24).map(|v| v as f32).collect(), &[4, 6])
        .map_err(|e| pyo3::exceptions::PyBufferError::new_err(e.to_string()))
}

#[pymodule]
fn dlpm_rust_bench(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(noop, m)?)?;
    m.add_function(wrap_pyfunction!(borrow_f32, m)?)?;
    m.add_function(wrap_pyfunction!(borrow_f32_view_copy, m)?)?;
    m.add_function(wrap_pyfunction!(borrow_f32_mut, m)?)?;
    m.add_function(wrap_pyfunction!(import_managed, m)?)?;
    m.add_function(wrap_pyfunction!(make_tensor, m)?)?;
    Ok(())
}
