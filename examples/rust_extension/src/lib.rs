// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! A Python extension in Rust: tensors of any framework (NumPy, PyTorch, JAX, our own
//! dlpack_mdspan.Tensor) in, dlpack_mdspan.Tensors out, through dlpack-mdspan's pyo3
//! feature (the project's Python component does the protocol).

use dlpack_mdspan::{
    to_pyerr, Complex32, ManagedTensor, PyTensor, PyTensorMut, StreamOrder, StreamOrdered,
};
use ndarray::Array2;
use pyo3::prelude::*;

/// `x * factor` as a new row-major float32 tensor (any layout of `x` is read).
#[pyfunction]
fn scale(py: Python<'_>, x: PyTensor<'_, f32>, factor: f32) -> PyResult<ManagedTensor> {
    let v = x.view_ref();
    let out: Vec<f32> = v.to_vec().into_iter().map(|e| e * factor).collect();
    ManagedTensor::from_vec(out, v.shape()).map_err(|e| to_pyerr(py, &e))
}

/// Calls `f` with every index of `shape` in row-major order (an odometer), stopping at its
/// first error; returns how many indices it was called with. A mutable view has no `&mut`
/// iterator (its producer may share the memory: it is never exclusive), so elements are
/// written one index at a time, through `set`, whatever the rank and strides.
fn for_each_index<E>(
    shape: &[i64],
    mut f: impl FnMut(&[usize]) -> Result<(), E>,
) -> Result<usize, E> {
    let shape: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
    let count: usize = shape.iter().product();
    let mut index = vec![0usize; shape.len()];
    for _ in 0..count {
        f(&index)?;
        for r in (0..shape.len()).rev() {
            index[r] += 1;
            if index[r] < shape[r] {
                break;
            }
            index[r] = 0;
        }
    }
    Ok(count)
}

/// Sets every element of `x` to `value`, in place; `x` must be writable (a read-only or
/// conjugate tensor is refused before this runs). Returns the number of elements written.
#[pyfunction]
fn fill(py: Python<'_>, mut x: PyTensorMut<'_, f32>, value: f32) -> PyResult<usize> {
    let mut v = x.view_mut();
    let shape = v.shape().to_vec();
    for_each_index(&shape, |i| v.set(i, value)).map_err(|e| to_pyerr(py, &e))
}

/// `f(e)` for every element `e` of `x`, in row-major order, as a new float32 tensor of its
/// shape. Python code runs while `x` is borrowed for reading, so a writer of the same memory
/// that `f` makes, through this extension or another built with dlpack-mdspan (`fill(x, 0)`),
/// is refused with BufferError rather than changing the elements being read.
#[pyfunction]
fn map_values(py: Python<'_>, x: PyTensor<'_, f32>, f: &Bound<'_, PyAny>) -> PyResult<ManagedTensor> {
    let v = x.view_ref();
    let mut out = Vec::with_capacity(v.len());
    for_each_index(v.shape(), |i| {
        let e = v.get(i).copied().unwrap_or_default(); // every index of the shape is in range
        out.push(f.call1((e,))?.extract::<f32>()?);
        Ok::<(), PyErr>(())
    })?;
    ManagedTensor::from_vec(out, v.shape()).map_err(|e| to_pyerr(py, &e))
}

/// Sets every element of a complex64 tensor of any rank to zero, in place (so a conjugate
/// view, whose memory holds the unconjugated values, is refused before this runs).
#[pyfunction]
fn zero_complex(py: Python<'_>, mut x: PyTensorMut<'_, Complex32>) -> PyResult<usize> {
    let mut v = x.view_mut();
    let shape = v.shape().to_vec();
    for_each_index(&shape, |i| v.set(i, Complex32::new(0.0, 0.0))).map_err(|e| to_pyerr(py, &e))
}

/// A `rows x cols` ndarray, `[i, j] = 10 * i + j`, built column-major and returned as a
/// tensor without a copy (its strides kept: `(1, rows)`).
#[pyfunction]
fn grid(py: Python<'_>, rows: usize, cols: usize) -> PyResult<ManagedTensor> {
    let a = Array2::from_shape_fn((cols, rows), |(j, i)| (10 * i + j) as f64).reversed_axes();
    ManagedTensor::from_ndarray(a).map_err(|e| to_pyerr(py, &e))
}

/// Where the data of `x`, a tensor of any device, is ready: `("stream", handle)` (launch
/// work that reads it on that stream, or make your stream wait for it: a PyTorch or
/// dlpack_mdspan CUDA tensor's current stream), `("none", 0)` (host memory: nothing to
/// order) or `("unknown", 0)` (synchronise by the producer's own means).
#[pyfunction]
fn ready_stream(x: StreamOrdered<ManagedTensor>) -> (&'static str, usize) {
    match x.ready.order {
        StreamOrder::Stream => ("stream", x.ready.stream as usize),
        StreamOrder::None => ("none", 0),
        StreamOrder::Unknown => ("unknown", 0),
    }
}

/// Panics: pyo3 turns the panic into a Python exception (pyo3_runtime.PanicException).
#[pyfunction]
fn panics() -> usize {
    panic!("a panic in the extension's Rust code")
}

#[pymodule]
fn dlpm_rust_extension(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scale, m)?)?;
    m.add_function(wrap_pyfunction!(fill, m)?)?;
    m.add_function(wrap_pyfunction!(map_values, m)?)?;
    m.add_function(wrap_pyfunction!(zero_complex, m)?)?;
    m.add_function(wrap_pyfunction!(grid, m)?)?;
    m.add_function(wrap_pyfunction!(ready_stream, m)?)?;
    m.add_function(wrap_pyfunction!(panics, m)?)?;
    Ok(())
}
