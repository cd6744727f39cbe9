// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The pyo3 feature, in an embedded interpreter (the one pyo3 builds for; NumPy must be
//! importable there): arguments borrowed through the Python component, with its exceptions
//! and the library's messages, and ManagedTensor returned as a dlpack_mdspan.Tensor.
#![cfg(feature = "pyo3")]

use std::ffi::c_void;

use dlpack_mdspan::{sys, Flags, ManagedTensor, PyTensor, PyTensorMut};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod shared_registry;
use shared_registry::{HeldClaim, SharedRegistry};

/// Runs `code` with `np` imported and returns the value of its last line, `result`.
fn eval<'py>(py: Python<'py>, code: &str) -> Bound<'py, PyAny> {
    let globals = PyDict::new(py);
    py.run(
        &std::ffi::CString::new(format!("import numpy as np\n{code}")).unwrap(),
        Some(&globals),
        None,
    )
    .unwrap_or_else(|e| panic!("{code}: {e}"));
    globals
        .get_item("result")
        .unwrap()
        .expect("the code sets `result`")
}

/// The address of a NumPy array's first element (`a.ctypes.data`).
fn data_address(a: &Bound<'_, PyAny>) -> usize {
    a.getattr("ctypes")
        .unwrap()
        .getattr("data")
        .unwrap()
        .extract()
        .unwrap()
}

#[test]
fn numpy_arrays_are_read_with_their_layout() {
    Python::attach(|py| {
        let a = eval(py, "result = np.arange(6, dtype=np.float32).reshape(2, 3)");
        let t = a.extract::<PyTensor<'_, f32>>().unwrap();
        let v = t.view();
        assert_eq!(v.shape(), &[2, 3]);
        assert_eq!(v.strides(), &[3, 1]);
        assert_eq!(v.to_vec(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        // Zero-copy: the view's first element is NumPy's.
        let addr = data_address(&a);
        assert_eq!(v.get(&[0, 0]).unwrap() as *const f32 as usize, addr);
        // The lent view is the same view, not a copy of another.
        let lent = t.view_ref();
        assert_eq!((lent.shape(), lent.strides()), (v.shape(), v.strides()));
        assert_eq!(lent.as_slice().unwrap().as_ptr() as usize, addr);
        assert_eq!(lent.to_vec(), v.to_vec());
        drop(t);
        // Reversed rows: negative strides.
        let r = eval(
            py,
            "result = np.arange(6, dtype=np.int64).reshape(2, 3)[::-1]",
        );
        let t = r.extract::<PyTensor<'_, i64>>().unwrap();
        assert_eq!(t.view().strides(), &[-3, 1]);
        assert_eq!(t.view().to_vec(), vec![3, 4, 5, 0, 1, 2]);
    });
}

/// A `dlpack_mdspan.Tensor` of kDLBool elements over `bytes`, as a producer that lends bytes
/// other than 0 and 1 makes one (PyTorch's `u8.view(torch.bool)`), with `strides` and
/// `byte_offset`.
fn bool_tensor_of<'py>(
    py: Python<'py>,
    bytes: Vec<u8>,
    shape: &[i64],
    strides: &[i64],
    byte_offset: u64,
) -> Bound<'py, PyAny> {
    let data = bytes.as_ptr().cast_mut().cast();
    let export = ManagedTensor::build_from_owner(
        bytes,
        data,
        dlpack_mdspan::DataType::BOOL,
        dlpack_mdspan::Device::CPU,
        shape,
    )
    .strides(strides)
    .byte_offset(byte_offset);
    // SAFETY: the Vec keeps its bytes alive, nothing else reaches them; a view checks them.
    let t = unsafe { export.finish() }.unwrap();
    t.into_pyobject(py).unwrap()
}

// A bool argument, reader or writer, and a bool view of an imported ManagedTensor refuse a
// byte other than 0 or 1 by name instead of lending a &bool to it.
#[test]
fn bool_arguments_refuse_bytes_other_than_0_and_1() {
    Python::attach(|py| {
        let bad = bool_tensor_of(py, vec![1, 0, 2, 1], &[4], &[1], 0);
        let message = "a bool element holds the byte 2 at byte offset 2 from data: kDLBool elements are 0 or 1";
        let e = bad.extract::<PyTensor<'_, bool>>().err().expect("refused");
        assert!(e.to_string().contains(message), "{e}");
        let e = bad
            .extract::<PyTensorMut<'_, bool>>()
            .err()
            .expect("refused");
        assert!(e.to_string().contains(message), "{e}");
        let m = bad.extract::<ManagedTensor>().unwrap(); // any dtype, not viewed
        assert_eq!(m.view::<bool>().unwrap_err().message(), message);
        // Slices are judged by the bytes they reach: [1::2] reaches bytes 1 and 3, [::2]
        // bytes 0 and 2.
        let odd = bool_tensor_of(py, vec![1, 0, 2, 1], &[2], &[2], 1);
        let t = odd.extract::<PyTensor<'_, bool>>().unwrap();
        assert_eq!(t.view_ref().to_vec(), vec![false, true]);
        let even = bool_tensor_of(py, vec![1, 0, 2, 1], &[2], &[2], 0);
        assert!(even.extract::<PyTensor<'_, bool>>().is_err());
        // Bools pass, broadcast and reversed too.
        let good = bool_tensor_of(py, vec![1, 0, 1], &[1000, 3], &[0, -1], 2);
        let t = good.extract::<PyTensor<'_, bool>>().unwrap();
        assert_eq!(t.view_ref().get(&[999, 0]), Some(&true));
        assert_eq!(t.view_ref().get(&[999, 1]), Some(&false));
    });
}

/// Two `dlpack_mdspan.Tensor`s over one buffer of bytes: as uint8 and as kDLBool.
fn bytes_and_bools<'py>(py: Python<'py>, bytes: Vec<u8>) -> (Bound<'py, PyAny>, Bound<'py, PyAny>) {
    let buffer = std::sync::Arc::new(bytes);
    let data = buffer.as_ptr().cast_mut().cast();
    let shape = [buffer.len() as i64];
    let of = |dtype| {
        let export = ManagedTensor::build_from_owner(
            buffer.clone(),
            data,
            dtype,
            dlpack_mdspan::Device::CPU,
            &shape,
        );
        // SAFETY: the Arc keeps the bytes alive; the claims of this test's borrows decide who
        // reaches them.
        unsafe { export.finish() }
            .unwrap()
            .into_pyobject(py)
            .unwrap()
    };
    (
        of(dlpack_mdspan::DataType::U8),
        of(dlpack_mdspan::DataType::BOOL),
    )
}

// A bool argument claims its bytes before its check reads them: where a writer holds them
// (and may be writing them on another thread, the GIL released), it is refused as borrowed,
// without reading them (a refusal naming the writer's byte 2 would say it read them), on our
// Tensor (the checked form it lends; as a reader and as a writer) and on a producer that
// keeps no checked form (the view's own check); a bool view of an import likewise.
#[test]
fn a_bool_argument_claims_its_bytes_before_it_reads_them() {
    Python::attach(|py| {
        let (bytes, bools) = bytes_and_bools(py, vec![1, 0, 1, 1]);
        // The bool Tensor behind a producer of its own (its capsules), which keeps no checked
        // form: the view checks it.
        let wrapped = eval(
            py,
            "class Wrapped:\n\
             \x20   def __init__(self, t): self.t = t\n\
             \x20   def __dlpack__(self, **kw): return self.t.__dlpack__(**kw)\n\
             \x20   def __dlpack_device__(self): return self.t.__dlpack_device__()\n\
             result = Wrapped",
        )
        .call1((&bools,))
        .unwrap();
        let mut w = bytes.extract::<PyTensorMut<'_, u8>>().unwrap();
        w.view_mut().set(&[2], 2).unwrap(); // no bool: the writer's byte
        for reader in [&bools, &wrapped] {
            let e = reader
                .extract::<PyTensor<'_, bool>>()
                .err()
                .expect("the writer holds the bytes");
            assert!(already_borrowed(&e, py), "{e}");
            let m = reader.extract::<ManagedTensor>().unwrap();
            assert_eq!(
                m.view::<bool>().unwrap_err().status(),
                dlpack_mdspan::Status::ALREADY_BORROWED
            );
        }
        let e = bools
            .extract::<PyTensorMut<'_, bool>>()
            .err()
            .expect("the writer holds the bytes");
        assert!(already_borrowed(&e, py), "{e}");
        drop(w);
        // The writer gone, the bytes are read, and the byte 2 refused by name; a refused
        // argument keeps no claim, so a writer takes the bytes again.
        for reader in [&bools, &wrapped] {
            let e = reader
                .extract::<PyTensor<'_, bool>>()
                .err()
                .expect("the byte 2");
            assert!(e.to_string().contains("holds the byte 2"), "{e}");
        }
        let e = bools
            .extract::<PyTensorMut<'_, bool>>()
            .err()
            .expect("the byte 2");
        assert!(e.to_string().contains("holds the byte 2"), "{e}");
        bytes
            .extract::<PyTensorMut<'_, u8>>()
            .unwrap()
            .view_mut()
            .set(&[2], 1)
            .unwrap();
        for reader in [&bools, &wrapped] {
            let t = reader.extract::<PyTensor<'_, bool>>().unwrap();
            assert_eq!(t.view_ref().to_vec(), vec![true, false, true, true]);
        }
    });
}

#[test]
fn our_tensors_carry_broadcasts_and_the_read_only_flag() {
    // dlpack_mdspan.Tensor speaks DLPack 1.x whatever NumPy's version: a broadcast
    // (zero strides) and READ_ONLY reach the argument as they are.
    Python::attach(|py| {
        let b = ManagedTensor::build_from_vec(vec![1u8, 2, 3], &[4, 3])
            .strides(&[0, 1])
            .finish()
            .unwrap();
        let b = b.into_pyobject(py).unwrap();
        let t = b.extract::<PyTensor<'_, u8>>().unwrap();
        assert_eq!(t.view().strides(), &[0, 1]);
        assert_eq!(t.view().get(&[3, 2]), Some(&3));
        drop(t);
        let ro = ManagedTensor::build_from_vec(vec![0.0f64; 3], &[3])
            .flags(Flags::READ_ONLY)
            .finish()
            .unwrap()
            .into_pyobject(py)
            .unwrap();
        let e = ro
            .extract::<PyTensorMut<'_, f64>>()
            .err()
            .expect("a read-only tensor is refused");
        assert!(e.is_instance_of::<PyTypeError>(py), "{e}");
        assert!(e.to_string().contains("READ_ONLY"), "{e}");
        assert!(
            ro.extract::<PyTensor<'_, f64>>().is_ok(),
            "reading it is fine"
        );
    });
}

/// A pre-1.0 producer (NumPy 1.x's kind: `__dlpack__` knows no `max_version` and gives a
/// legacy capsule) of `[0.0, 1.0, 2.0]`: the component's retry without the keyword.
fn legacy_producer<'py>(py: Python<'py>) -> Bound<'py, PyAny> {
    eval(
        py,
        "class Legacy:\n\
         \x20   def __init__(self): self.a = np.arange(3.0)\n\
         \x20   def __dlpack__(self, stream=None): return self.a.__dlpack__()\n\
         \x20   def __dlpack_device__(self): return (1, 0)\n\
         result = Legacy()",
    )
}

#[test]
fn a_legacy_tensor_refused_for_writing_says_why_and_what_to_do() {
    Python::attach(|py| {
        let legacy = legacy_producer(py);
        // Read: fine.
        let t = legacy.extract::<PyTensor<'_, f64>>().unwrap();
        assert_eq!(t.view().to_vec(), vec![0.0, 1.0, 2.0]);
        drop(t);
        // Written: refused, with the cause and its remedy, not only the flag.
        let err = legacy.extract::<PyTensorMut<'_, f64>>().err().unwrap();
        assert!(err.is_instance_of::<PyTypeError>(py), "{err}"); // the component's, as before
        let message = err.to_string();
        assert!(
            message.contains("a legacy DLPack tensor cannot say whether it may be written")
                && message.contains("legacy_writable"),
            "{message}"
        );
        // The remedy named works.
        let options = dlpack_mdspan::PyImportOptions::new().legacy_writable(true);
        let mut t = dlpack_mdspan::StreamOrdered::import(&legacy, &options)
            .unwrap()
            .tensor;
        t.view_mut::<f64>().unwrap().set(&[2], 7.5).unwrap();
        let a = legacy.getattr("a").unwrap();
        assert_eq!(
            a.call_method0("tolist")
                .unwrap()
                .extract::<Vec<f64>>()
                .unwrap(),
            vec![0.0, 1.0, 7.5]
        );
    });
}

#[test]
fn writes_go_through_to_the_producers_memory() {
    Python::attach(|py| {
        let w = ManagedTensor::from_vec(vec![0.0f64; 3], &[3])
            .unwrap()
            .into_pyobject(py)
            .unwrap();
        {
            let mut t = w.extract::<PyTensorMut<'_, f64>>().unwrap();
            t.view_mut().set(&[1], 2.5).unwrap();
            // Every view it lends is one of the same elements, never exclusive (the producer
            // may share the memory): no `&mut [T]` of them.
            let mut v = t.view_mut();
            assert!(!v.is_exclusive());
            assert!(v.as_mut_slice().is_err());
            assert_eq!(t.view_mut().get(&[1]), Some(&2.5));
        }
        let np = py.import("numpy").unwrap();
        let a = np.call_method1("from_dlpack", (&w,)).unwrap();
        assert_eq!(
            a.call_method0("tolist")
                .unwrap()
                .extract::<Vec<f64>>()
                .unwrap(),
            vec![0.0, 2.5, 0.0]
        );
    });
}

#[test]
fn bad_arguments_raise_the_components_exceptions() {
    Python::attach(|py| {
        let f64s = eval(py, "result = np.zeros(2)");
        let e = f64s.extract::<PyTensor<'_, f32>>().err().unwrap();
        assert!(e.is_instance_of::<PyTypeError>(py), "{e}");
        assert!(
            e.to_string().contains("float64") && e.to_string().contains("float32"),
            "{e}"
        );
        let e = eval(py, "result = 'no tensor'")
            .extract::<PyTensor<'_, f32>>()
            .err()
            .unwrap();
        assert!(e.is_instance_of::<PyTypeError>(py), "{e}");
        // A producer whose __dlpack__ raises: its own exception comes through.
        let raising = eval(
            py,
            "class P:\n    def __dlpack__(self, **kw):\n        raise ValueError('producer says no')\n    \
             def __dlpack_device__(self):\n        return (1, 0)\nresult = P()",
        );
        let e = raising.extract::<PyTensor<'_, f32>>().err().unwrap();
        assert!(
            e.is_instance_of::<PyValueError>(py) && e.to_string().contains("producer says no"),
            "{e}"
        );
        // One that returns garbage.
        let garbage = eval(
            py,
            "class G:\n    def __dlpack__(self, **kw):\n        return 42\n    \
             def __dlpack_device__(self):\n        return (1, 0)\nresult = G()",
        );
        let e = garbage.extract::<ManagedTensor>().err().unwrap();
        assert!(
            e.is_instance_of::<PyTypeError>(py) || e.is_instance_of::<PyBufferError>(py),
            "{e}"
        );
    });
}

/// The component refuses options it cannot use (`check_options`, tested first inline in each
/// entry point by `options_usable`): a `copy` outside -1..=1, at both ends of `i32` too, is a
/// ValueError, whatever the tensor.
#[test]
fn options_out_of_range_are_refused() {
    use dlpack_mdspan_python_sys as pysys;
    use dlpack_mdspan_sys as sys;
    use std::mem::MaybeUninit;
    Python::attach(|py| {
        let a = eval(py, "result = np.zeros(2, dtype=np.float32)");
        for copy in [2, -2, i32::MAX, i32::MIN] {
            let mut o = MaybeUninit::<pysys::dlpm_py_options>::zeroed();
            // SAFETY: a valid out-parameter of the struct's size.
            let status = unsafe {
                pysys::dlpm_py_options_init(o.as_mut_ptr(), pysys::DLPM_PY_OPTIONS_VERSION)
            };
            assert_eq!(status, sys::DLPM_OK);
            // SAFETY: written by dlpm_py_options_init.
            let mut o = unsafe { o.assume_init() };
            o.copy = copy;
            let mut out = MaybeUninit::<pysys::dlpm_py_borrowed>::zeroed();
            // SAFETY: a live object, the GIL held, the options valid for the call, out a
            // valid out-parameter.
            let status = unsafe {
                pysys::dlpm_py_borrow(a.as_ptr(), std::ptr::null(), &o, out.as_mut_ptr())
            };
            assert_ne!(status, sys::DLPM_OK, "copy = {copy}");
            let e = PyErr::fetch(py);
            assert!(
                e.is_instance_of::<PyValueError>(py)
                    && e.to_string().contains("dlpm_py_options.copy"),
                "copy = {copy}: {e}"
            );
        }
    });
}

#[test]
fn managed_tensors_go_to_python_and_back() {
    Python::attach(|py| {
        let t = ManagedTensor::build_from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 3])
            .strides(&[-3, 1])
            .offset(3)
            .flags(Default::default())
            .finish()
            .unwrap();
        let data = t.dl_tensor().data as usize + t.dl_tensor().byte_offset as usize;
        let obj = t.into_pyobject(py).unwrap();
        assert_eq!(obj.get_type().name().unwrap().to_string(), "Tensor");
        let np = py.import("numpy").unwrap();
        let a = np.call_method1("from_dlpack", (&obj,)).unwrap();
        assert_eq!(
            a.call_method0("tolist")
                .unwrap()
                .extract::<Vec<Vec<i32>>>()
                .unwrap(),
            vec![vec![4, 5, 6], vec![1, 2, 3]]
        );
        let addr = data_address(&a);
        assert_eq!(addr, data, "NumPy reads the tensor's own memory");
        // Back into Rust, owned.
        let back = obj.extract::<ManagedTensor>().unwrap();
        assert_eq!(back.view::<i32>().unwrap().to_vec(), vec![4, 5, 6, 1, 2, 3]);
    });
}

/// A `PyTensor` view (made from the checked form the component hands back,
/// `dlpm_py_options.checked`) against the view the crate's own check makes of the same
/// producer's tensor (a `ManagedTensor`'s, `dlpm_check_tensor`): the same shape, strides
/// (NULL ones resolved), element count, C-contiguity (a slice or none) and elements, for
/// our Tensor (whose checked form is kept since it was made) and for NumPy (the borrow's
/// own check); through a writer's borrow (the owning path) too, for our Tensor. A stale or wrong checked
/// form (strides, count, row-major) gives another view.
#[test]
fn views_from_the_components_checked_form_are_the_views_own_check() {
    use dlpack_mdspan::Order;
    Python::attach(|py| {
        let values: Vec<f32> = (0..12).map(|v| v as f32).collect();
        let ours = |t: ManagedTensor| t.into_pyobject(py).unwrap();
        let producers = [
            ours(ManagedTensor::from_vec(values.clone(), &[3, 4]).unwrap()),
            ours(
                ManagedTensor::build_from_vec(values.clone(), &[3, 4])
                    .strides(&[1, 3])
                    .finish()
                    .unwrap(),
            ),
            ours(
                ManagedTensor::build_from_vec(values.clone(), &[2, 3])
                    .strides(&[0, 1])
                    .finish()
                    .unwrap(),
            ),
            ours(ManagedTensor::from_vec(vec![7.0f32], &[]).unwrap()),
            eval(py, "result = np.arange(12, dtype=np.float32).reshape(3, 4)"),
            eval(
                py,
                "result = np.arange(12, dtype=np.float32).reshape(3, 4).T",
            ),
            eval(
                py,
                "result = np.arange(12, dtype=np.float32).reshape(3, 4)[::-1, ::2]",
            ),
            eval(
                py,
                "result = np.arange(12, dtype=np.float32).reshape(3, 4)[1:, 1:3]",
            ),
        ];
        for (i, p) in producers.iter().enumerate() {
            let own = p.extract::<ManagedTensor>().unwrap();
            let expected = own.view::<f32>().unwrap();
            let described = |v: &dlpack_mdspan::TensorView<'_, f32>| {
                (
                    v.shape().to_vec(),
                    v.strides().to_vec(),
                    v.len(),
                    v.as_slice().ok().map(<[f32]>::to_vec),
                    v.is_contiguous(Order::C).unwrap(),
                    v.is_contiguous(Order::F).unwrap(),
                    v.to_vec(),
                )
            };
            let t = p.extract::<PyTensor<'_, f32>>().unwrap();
            assert_eq!(
                described(t.view_ref()),
                described(&expected),
                "producer {i}"
            );
            drop(t);
            if i >= 4 {
                continue; // NumPy's exports here are READ_ONLY to a writer
            }
            // The import's view claims its bytes for reading: the writer comes after it.
            let expected_written = (
                expected.shape().to_vec(),
                expected.strides().to_vec(),
                expected.len(),
                expected.to_vec(),
            );
            drop(own);
            let mut w = p
                .extract::<PyTensorMut<'_, f32>>()
                .unwrap_or_else(|e| panic!("producer {i}: {e}"));
            let v = w.view_mut();
            assert_eq!(
                (
                    v.shape().to_vec(),
                    v.strides().to_vec(),
                    v.len(),
                    v.to_vec()
                ),
                expected_written,
                "producer {i}, writable"
            );
        }
    });
}

/// `sys.getrefcount(a)`.
fn refs(py: Python<'_>, a: &Bound<'_, PyAny>) -> isize {
    py.import("sys")
        .unwrap()
        .call_method1("getrefcount", (a,))
        .unwrap()
        .extract()
        .unwrap()
}

/// A `PyTensor` keeps its tensor alive, though the `Bound` it was extracted from is gone:
/// our Tensor lends its tensor through the exchange API (nothing owned by the borrow), so
/// the borrow holds the Tensor itself until the argument drops. Without it the view read a
/// freed Tensor's memory.
#[test]
fn a_borrowed_tensor_outlives_the_object_it_was_extracted_from() {
    Python::attach(|py| {
        let values: Vec<f32> = (0..6).map(|v| v as f32).collect();
        let tensor = || {
            ManagedTensor::from_vec(values.clone(), &[2, 3])
                .unwrap()
                .into_pyobject(py)
                .unwrap()
        };
        let a = tensor();
        let before = refs(py, &a);
        let t = a.extract::<PyTensor<'_, f32>>().unwrap();
        assert_eq!(refs(py, &a), before + 1, "the borrow holds the Tensor");
        drop(t);
        assert_eq!(refs(py, &a), before, "and lets it go when it drops");
        // The last reference to the Tensor is the temporary's, dropped at once.
        let t = tensor().extract::<PyTensor<'_, f32>>().unwrap();
        let others: Vec<_> = (0..64)
            .map(|_| {
                ManagedTensor::from_vec(vec![-1.0f32; 6], &[2, 3])
                    .unwrap()
                    .into_pyobject(py)
                    .unwrap()
            })
            .collect();
        assert_eq!(t.view_ref().to_vec(), values);
        drop(others);
    });
}

/// The borrow of a Python tensor ends once, when the argument drops (or when its view is
/// refused): NumPy's export holds a reference to the array (`__dlpack__`'s capsule, the
/// component's owner) until `dlpm_py_borrow_end` releases it, so the array's reference
/// count is back where it was exactly then. A borrow never ended leaves it raised; one ended
/// twice lowers it (or crashes).
#[test]
fn borrows_end_once_when_the_argument_drops() {
    Python::attach(|py| {
        let a = eval(py, "result = np.arange(6, dtype=np.float32).reshape(2, 3)");
        let before = refs(py, &a);
        let t = a.extract::<PyTensor<'_, f32>>().unwrap();
        assert!(
            refs(py, &a) > before,
            "the export holds the array while borrowed"
        );
        assert_eq!(t.view_ref().len(), 6);
        drop(t);
        assert_eq!(refs(py, &a), before, "PyTensor's drop ends the borrow once");
        // A writer of our Tensor (NumPy's export is read-only here): lent the Tensor's form,
        // the argument keeps the Tensor itself, and drops it once.
        let w = ManagedTensor::from_vec(vec![0.0f32; 6], &[2, 3])
            .unwrap()
            .into_pyobject(py)
            .unwrap();
        let w_before = refs(py, &w);
        let mut m = w.extract::<PyTensorMut<'_, f32>>().unwrap();
        assert!(refs(py, &w) > w_before, "the argument holds the Tensor");
        m.view_mut().set(&[0, 0], 7.0).unwrap();
        drop(m);
        assert_eq!(
            refs(py, &w),
            w_before,
            "PyTensorMut's drop ends the borrow once"
        );
        // A borrow whose view is refused (the dtype, checked by the view) ends at once.
        let e = a.extract::<PyTensor<'_, f64>>().err().unwrap();
        assert!(e.is_instance_of::<PyTypeError>(py), "{e}");
        assert_eq!(refs(py, &a), before, "a refused view ends its borrow once");
        // Several arguments of one array, dropped in any order.
        let (x, y) = (
            a.extract::<PyTensor<'_, f32>>().unwrap(),
            a.extract::<PyTensor<'_, f32>>().unwrap(),
        );
        drop(x);
        assert!(refs(py, &a) > before);
        drop(y);
        assert_eq!(refs(py, &a), before);
    });
}

/// The type [`a_form_kept_of_another_description_is_not_lent`] makes publishes what another
/// copy of the component would (docs/python-interop.md, "A Tensor of another copy"): an
/// exchange table whose borrowing entry lends `lent`, and a kept checked form, `form`, made by
/// the facade's check of `kept`, another description of the same elements. Made once, read
/// only, for the process (the published pointers stay valid while the type lives).
struct Published {
    lent: sys::DLTensor,
    kept: sys::DLTensor,
    form: sys::dlpm_checked_tensor,
}
// SAFETY: written once, before it is published, and only read afterwards; its pointers are
// to leaked arrays that are never written.
unsafe impl Sync for Published {}
// SAFETY: as Sync.
unsafe impl Send for Published {}

static PUBLISHED: std::sync::OnceLock<&'static Published> = std::sync::OnceLock::new();

/// `DLPackExchangeAPI` (dlpack.h), every entry an address.
#[repr(C)]
struct ExchangeApi {
    version: sys::DLPackVersion,
    prev_api: *const c_void,
    managed_tensor_allocator: *const c_void,
    managed_tensor_from_py_object_no_sync: *const c_void,
    managed_tensor_to_py_object_no_sync: *const c_void,
    dltensor_from_py_object_no_sync: *const c_void,
    current_work_stream: *const c_void,
}

/// A table for the process (leaked) with these three entries; the others, which DLPack says
/// are never NULL, a function that refuses (never called).
fn exchange_api(
    managed_tensor_from_py_object_no_sync: *const c_void,
    dltensor_from_py_object_no_sync: *const c_void,
    current_work_stream: *const c_void,
) -> &'static ExchangeApi {
    let unused = refuse as *const c_void;
    Box::leak(Box::new(ExchangeApi {
        version: sys::DLPackVersion {
            major: sys::DLPACK_MAJOR_VERSION,
            minor: sys::DLPACK_MINOR_VERSION,
        },
        prev_api: std::ptr::null(),
        managed_tensor_allocator: unused,
        managed_tensor_from_py_object_no_sync,
        managed_tensor_to_py_object_no_sync: unused,
        dltensor_from_py_object_no_sync,
        current_work_stream,
    }))
}

/// A capsule of a process-lifetime struct (no destructor) named `name`.
fn static_capsule<'py>(
    py: Python<'py>,
    p: *const c_void,
    name: &'static std::ffi::CStr,
) -> Bound<'py, PyAny> {
    // SAFETY: a process-lifetime struct and name, no destructor; a new reference.
    unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            pyo3::ffi::PyCapsule_New(p.cast_mut(), name.as_ptr(), None),
        )
    }
    .unwrap()
}

/// `dlpm_py_kept_form` (python/src/shared/shared.h), version 1.
#[repr(C)]
struct KeptForm {
    version: u32,
    size: u32,
    type_: *mut pyo3::ffi::PyObject,
    checked_version: u32,
    reserved: u32,
    checked_of: unsafe extern "C" fn(*mut pyo3::ffi::PyObject) -> *const sys::dlpm_checked_tensor,
}

unsafe extern "C" fn refuse() -> i32 {
    -1
}

unsafe extern "C" fn lend(_obj: *mut c_void, out: *mut sys::DLTensor) -> i32 {
    // SAFETY: out is the caller's DLTensor to write.
    unsafe { out.write(PUBLISHED.get().unwrap().lent) };
    0
}

unsafe extern "C" fn kept_form_of(
    _obj: *mut pyo3::ffi::PyObject,
) -> *const sys::dlpm_checked_tensor {
    &PUBLISHED.get().unwrap().form
}

/// A `PyTensor` of a Tensor of another copy whose kept form is not of the description its
/// table lends (here the same six elements as 2x3, lent as 3x2): the component lends no form
/// (`dlpm_py_options.lent` stays NULL: only a form of the very description is lent) and checks
/// the description in full, and the argument's view checks the tensor itself (the unlent path
/// of `PyTensor`'s extraction): a view of the description lent, not of the form. An extraction
/// that refused there, or a view made from the form, fails this test.
#[test]
fn a_form_kept_of_another_description_is_not_lent() {
    use dlpack_mdspan::{Device, Element};
    Python::attach(|py| {
        // Never written: read by the view alone.
        let values: &'static [f32] = Box::leak((0..6).map(|v| v as f32).collect());
        let shape = |s: [i64; 2]| Box::leak(Box::new(s)).as_mut_ptr();
        let described = |shape| sys::DLTensor {
            data: values.as_ptr().cast_mut().cast(),
            device: Device::CPU.0,
            ndim: 2,
            dtype: f32::DTYPE.0,
            shape,
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        };
        let published: &'static mut Published = Box::leak(Box::new(Published {
            lent: described(shape([3, 2])),
            kept: described(shape([2, 3])),
            // SAFETY: plain data; written by the facade's check below.
            form: unsafe { std::mem::zeroed() },
        }));
        published.form.version = sys::DLPM_CHECKED_TENSOR_VERSION;
        // SAFETY: a valid tensor (its arrays leaked) and out-parameter.
        let status = unsafe {
            sys::dlpm_check_tensor(&published.kept, 0, std::ptr::null(), 0, &mut published.form)
        };
        assert_eq!(status, sys::DLPM_OK);
        assert!(PUBLISHED.set(published).is_ok());

        let globals = PyDict::new(py);
        py.run(
            c"class AnotherCopysTensor:\n    pass\n",
            Some(&globals),
            None,
        )
        .unwrap();
        let class = globals.get_item("AnotherCopysTensor").unwrap().unwrap();
        let unused = refuse as *const c_void;
        let table = exchange_api(unused, lend as *const c_void, unused);
        let kept: &'static KeptForm = Box::leak(Box::new(KeptForm {
            version: 1,
            size: std::mem::size_of::<KeptForm>() as u32,
            type_: class.as_ptr(),
            checked_version: sys::DLPM_CHECKED_TENSOR_VERSION,
            reserved: 0,
            checked_of: kept_form_of,
        }));
        class
            .setattr(
                "__dlpack_c_exchange_api__",
                static_capsule(py, ptr_of(table), c"dlpack_exchange_api"),
            )
            .unwrap();
        class
            .setattr(
                "__dlpack_mdspan_kept_checked_form__",
                static_capsule(py, ptr_of(kept), c"dlpack_mdspan.kept_checked_form.v1"),
            )
            .unwrap();
        let obj = class.call0().unwrap();
        // SAFETY: a live object, the GIL held.
        let keeps = unsafe { dlpack_mdspan_python_sys::dlpm_py_keeps_checked_form(obj.as_ptr()) };
        assert_ne!(
            keeps, 0,
            "the publication is trusted: the argument asks for a lent form"
        );

        let t = obj.extract::<PyTensor<'_, f32>>().unwrap();
        let v = t.view_ref();
        assert_eq!((v.shape(), v.strides()), (&[3i64, 2][..], &[2i64, 1][..]));
        assert_eq!(v.get(&[2, 1]), Some(&5.0));
        assert_eq!(v.to_vec(), values.to_vec());
    });
}

fn ptr_of<T>(r: &'static T) -> *const c_void {
    std::ptr::from_ref(r).cast()
}

/// Our Tensor's argument is checked against the requirements of its view (the component's
/// borrow, which lends the Tensor's kept form only once that form passed them): a float32
/// Tensor is no `PyTensor<f64>` nor `PyTensorMut<i32>`. A borrow that checked the form
/// against anything else lent it, and the view read float32 elements as float64.
#[test]
fn our_tensors_are_checked_against_the_views_requirements() {
    Python::attach(|py| {
        let t = ManagedTensor::from_vec(vec![1.0f32; 6], &[2, 3])
            .unwrap()
            .into_pyobject(py)
            .unwrap();
        let e = t.extract::<PyTensor<'_, f64>>().err().expect("refused");
        assert!(e.is_instance_of::<PyTypeError>(py), "{e}");
        assert!(
            e.to_string().contains("float32") && e.to_string().contains("float64"),
            "{e}"
        );
        let e = t.extract::<PyTensorMut<'_, i32>>().err().expect("refused");
        assert!(e.is_instance_of::<PyTypeError>(py), "{e}");
        assert!(t.extract::<PyTensor<'_, f32>>().is_ok());
    });
}

/// The raw bindings beyond what the `pyo3` feature calls (their types are proved against the
/// header by `tests/rust_abi/python_abi.test.cpp`), called as a Rust extension would: the
/// stream-ordered import into a `dlpack_mdspan.Tensor`, the tensor it holds, the provenance
/// an import reports, a capsule looked at without being taken, and the stream decoder.
#[test]
fn the_components_other_entry_points_are_bound() {
    use dlpack_mdspan_python_sys as pysys;
    use dlpack_mdspan_sys as sys;
    use std::mem::MaybeUninit;
    Python::attach(|py| {
        let a = eval(py, "result = np.arange(6, dtype=np.float32).reshape(2, 3)");
        let address = data_address(&a);

        // SAFETY: a live object, the GIL held; NULL requirements and options: the defaults.
        let t =
            unsafe { pysys::dlpm_py_tensor_import(a.as_ptr(), std::ptr::null(), std::ptr::null()) };
        assert!(!t.is_null(), "{}", PyErr::fetch(py));
        // SAFETY: a new reference, owned from here.
        let t = unsafe { Bound::from_owned_ptr(py, t) };
        assert_eq!(t.get_type().name().unwrap().to_string(), "Tensor");
        // SAFETY: a live object; the tensor is valid while `t` lives.
        let held = unsafe { pysys::dlpm_py_tensor_get(t.as_ptr()) };
        assert!(!held.is_null());
        // SAFETY: as above.
        let dl = unsafe { &(*held).dl_tensor };
        assert_eq!((dl.data as usize, dl.ndim), (address, 2));
        // SAFETY: a live object; NumPy's array is no Tensor.
        assert!(unsafe { pysys::dlpm_py_tensor_get(a.as_ptr()) }.is_null());

        // The provenance an import writes, through the mirrored struct.
        let mut how = pysys::dlpm_py_provenance {
            version: pysys::DLPM_PY_PROVENANCE_VERSION,
            path: -1,
            legacy: -1,
            pre_1_0_call: -1,
            dlpack_version: sys::DLPackVersion { major: 0, minor: 0 },
            stream_order: -1,
            ready_stream: std::ptr::null_mut(),
        };
        let mut o = MaybeUninit::<pysys::dlpm_py_options>::zeroed();
        // SAFETY: a valid out-parameter of the struct's size.
        let status =
            unsafe { pysys::dlpm_py_options_init(o.as_mut_ptr(), pysys::DLPM_PY_OPTIONS_VERSION) };
        assert_eq!(status, sys::DLPM_OK);
        // SAFETY: written by dlpm_py_options_init.
        let mut o = unsafe { o.assume_init() };
        o.provenance = &mut how;
        let mut out = std::ptr::null_mut();
        // SAFETY: a live object, the GIL held, the options and `how` valid for the call.
        let status = unsafe { pysys::dlpm_py_import(a.as_ptr(), std::ptr::null(), &o, &mut out) };
        assert_eq!(status, sys::DLPM_OK, "{}", PyErr::fetch(py));
        // SAFETY: the owned tensor the import handed over, deleted once.
        unsafe { ((*out).deleter.unwrap())(out) };
        // NumPy >= 2.1 answers __dlpack__(max_version=...) with a versioned capsule; an
        // older one (Debian 12's 1.24) refuses the keyword and gives a legacy capsule.
        assert_eq!(how.path, pysys::DLPM_PY_PATH_DLPACK);
        let seen = (how.legacy, how.pre_1_0_call, how.dlpack_version.major);
        assert!(seen == (0, 0, 1) || seen == (1, 1, 0), "{seen:?}");
        assert_eq!(how.stream_order, pysys::DLPM_PY_ORDER_NONE); // CPU memory has no streams

        // A capsule looked at, not taken: it can still be imported once.
        let capsule = a.call_method0("__dlpack__").unwrap();
        let (mut seen, mut flags) = (MaybeUninit::<sys::DLTensor>::uninit(), 0u64);
        // SAFETY: a live object; out-parameters valid for writes.
        let peeked = unsafe {
            pysys::dlpm_py_capsule_peek(
                capsule.as_ptr(),
                std::ptr::null(),
                seen.as_mut_ptr(),
                &mut flags,
            )
        };
        assert_eq!(peeked, 1);
        // SAFETY: written where peek returns 1.
        assert_eq!(unsafe { seen.assume_init() }.ndim, 2);
        let mut taken = std::ptr::null_mut();
        // SAFETY: a live capsule, the GIL held; NULL requirements and options.
        let status = unsafe {
            pysys::dlpm_py_import(
                capsule.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                &mut taken,
            )
        };
        assert_eq!(status, sys::DLPM_OK, "{}", PyErr::fetch(py));
        // SAFETY: the owned tensor the import handed over, deleted once.
        unsafe { ((*taken).deleter.unwrap())(taken) };

        // The stream decoder: None, an integer, and a refusal that names the memory.
        let mut value: std::ffi::c_longlong = 0;
        let none = py.None();
        // SAFETY: live objects, a static string, a valid out-parameter.
        assert_eq!(
            unsafe { pysys::dlpm_py_stream_integer(none.as_ptr(), c"CUDA".as_ptr(), &mut value) },
            1
        );
        let five = 5i64.into_pyobject(py).unwrap();
        // SAFETY: as above.
        assert_eq!(
            unsafe { pysys::dlpm_py_stream_integer(five.as_ptr(), c"CUDA".as_ptr(), &mut value) },
            0
        );
        assert_eq!(value, 5);
        let text = "s".into_pyobject(py).unwrap();
        // SAFETY: as above.
        assert_eq!(
            unsafe { pysys::dlpm_py_stream_integer(text.as_ptr(), c"CUDA".as_ptr(), &mut value) },
            -1
        );
        let e = PyErr::fetch(py);
        assert!(
            e.is_instance_of::<PyTypeError>(py) && e.to_string().contains("CUDA"),
            "{e}"
        );
    });
}

/// Two float32 on device 0 of `device_type` (host memory underneath, which no consumer here
/// dereferences as device memory), owned by the tensor.
fn device_tensor(device_type: dlpack_mdspan::DeviceType) -> ManagedTensor {
    use dlpack_mdspan::{Device, Element};
    let data: Box<[f32; 2]> = Box::new([1.0, 2.0]);
    let address = data.as_ptr().cast_mut().cast();
    let export = ManagedTensor::build_from_owner(
        data,
        address,
        f32::DTYPE,
        Device::new(device_type, 0),
        &[2],
    );
    // SAFETY: the box keeps the two floats alive; nothing writes them.
    unsafe { export.finish() }.unwrap()
}

/// A CUDA tensor of two float32 (never read).
fn cuda_tensor() -> ManagedTensor {
    device_tensor(dlpack_mdspan::DeviceType::CUDA)
}

/// `t` in a versioned capsule (the component's `dlpm_py_capsule_new`).
fn capsule_of(py: Python<'_>, t: ManagedTensor) -> Bound<'_, PyAny> {
    // SAFETY: the GIL held; the component takes the tensor.
    let capsule = unsafe { dlpack_mdspan_python_sys::dlpm_py_capsule_new(t.into_raw(), 1) };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, capsule) }.unwrap()
}

/// A producer of `cuda_tensor()` through `__dlpack__` alone, which records the keywords it
/// was asked with (`seen`).
fn cuda_producer<'py>(py: Python<'py>) -> Bound<'py, PyAny> {
    let globals = PyDict::new(py);
    py.run(
        c"class CudaProducer:\n    \
          def __init__(self, capsule):\n        self.capsule = capsule\n        self.seen = None\n    \
          def __dlpack__(self, **kw):\n        self.seen = kw\n        return self.capsule\n    \
          def __dlpack_device__(self):\n        return (2, 0)\n",
        Some(&globals),
        None,
    )
    .unwrap();
    let capsule = capsule_of(py, cuda_tensor());
    let class = globals.get_item("CudaProducer").unwrap().unwrap();
    class.call1((capsule,)).unwrap()
}

/// `StreamOrdered::import` asks the producer what `PyImportOptions` say (the consumer's
/// stream, copy, dl_device) and reports where the data is ready: on CUDA the stream the
/// producer was asked to order (1, the legacy default stream, is that stream's handle too);
/// no stream or -1 (no synchronisation) is unknown; CPU memory has no order to keep. The
/// plain `ManagedTensor` argument asks no stream.
#[test]
fn a_consumers_stream_is_asked_and_where_the_data_is_ready_is_told() {
    use dlpack_mdspan::{Device, DeviceType, PyImportOptions, StreamOrder, StreamOrdered};
    Python::attach(|py| {
        let seen = |p: &Bound<'_, PyAny>, key: &str| -> Option<String> {
            let kw = p.getattr("seen").unwrap();
            kw.call_method1("get", (key,))
                .unwrap()
                .extract::<Option<Bound<'_, PyAny>>>()
                .unwrap()
                .map(|v| v.repr().unwrap().to_string())
        };

        let p = cuda_producer(py);
        let t = StreamOrdered::import(&p, &PyImportOptions::new().stream(0x5eed)).unwrap();
        assert_eq!(seen(&p, "stream").as_deref(), Some("24301"));
        assert_eq!(t.ready.order, StreamOrder::Stream);
        assert_eq!(t.ready.stream as usize, 0x5eed);
        assert_eq!(t.device(), Device::new(DeviceType::CUDA, 0));
        assert_eq!(t.shape().unwrap(), &[2]);

        let p = cuda_producer(py);
        let t = StreamOrdered::import(&p, &PyImportOptions::new().stream(1)).unwrap();
        assert_eq!(
            (t.ready.order, t.ready.stream as usize),
            (StreamOrder::Stream, 1)
        );

        for options in [PyImportOptions::new(), PyImportOptions::new().stream(-1)] {
            let p = cuda_producer(py);
            let t = StreamOrdered::import(&p, &options).unwrap();
            assert_eq!(t.ready.order, StreamOrder::Unknown, "{options:?}");
            assert!(t.ready.stream.is_null());
        }

        let p = cuda_producer(py);
        let t = p.extract::<StreamOrdered<ManagedTensor>>().unwrap();
        assert_eq!(seen(&p, "stream"), None, "the default asks no stream");
        assert_eq!(t.ready.order, StreamOrder::Unknown);

        let p = cuda_producer(py);
        let options = PyImportOptions::new()
            .copy(false)
            .dl_device(Device::new(DeviceType::CUDA, 0));
        let t = StreamOrdered::import(&p, &options).unwrap();
        assert_eq!(seen(&p, "copy").as_deref(), Some("False"));
        assert_eq!(seen(&p, "dl_device").as_deref(), Some("(2, 0)"));
        assert_eq!(t.ready.order, StreamOrder::Unknown);

        let a = eval(py, "result = np.arange(3, dtype=np.float32)");
        let t = StreamOrdered::import(&a, &PyImportOptions::new().stream(0x5eed)).unwrap();
        assert_eq!(
            (t.ready.order, t.ready.stream),
            (StreamOrder::None, std::ptr::null_mut())
        );
        assert_eq!(t.view::<f32>().unwrap().to_vec(), vec![0.0, 1.0, 2.0]);
    });
}

unsafe extern "C" fn hand_over_cuda_tensor(
    _obj: *mut c_void,
    out: *mut *mut sys::DLManagedTensorVersioned,
) -> i32 {
    // SAFETY: out is the caller's pointer to write; the caller owns the tensor.
    unsafe { out.write(cuda_tensor().into_raw()) };
    0
}

unsafe extern "C" fn current_stream_c0ffee(
    device_type: sys::DLDeviceType,
    _device_id: i32,
    out: *mut *mut c_void,
) -> i32 {
    assert_eq!(device_type, dlpack_mdspan::DeviceType::CUDA.0);
    // SAFETY: out is the caller's pointer to write.
    unsafe { out.write(0xc0ffee as *mut c_void) };
    0
}

/// A producer that publishes the exchange API (PyTorch, our Tensor) hands its tensor over
/// "no sync": the data is ready on its current work stream, which the table names. A
/// `StreamOrdered<ManagedTensor>` argument reports that stream; a stream asked for makes
/// the import call `__dlpack__` instead (the table takes no stream).
#[test]
fn a_producers_exchange_table_tells_its_current_stream() {
    use dlpack_mdspan::{PyImportOptions, StreamOrder, StreamOrdered};
    Python::attach(|py| {
        let globals = PyDict::new(py);
        py.run(
            c"class Published:\n    \
              def __dlpack__(self, **kw):\n        raise BufferError('asked through __dlpack__')\n    \
              def __dlpack_device__(self):\n        return (2, 0)\n",
            Some(&globals),
            None,
        )
        .unwrap();
        let class = globals.get_item("Published").unwrap().unwrap();
        let unused = refuse as *const c_void;
        let table = exchange_api(
            hand_over_cuda_tensor as *const c_void,
            unused,
            current_stream_c0ffee as *const c_void,
        );
        let capsule = static_capsule(py, ptr_of(table), c"dlpack_exchange_api");
        class.setattr("__dlpack_c_exchange_api__", capsule).unwrap();
        let obj = class.call0().unwrap();

        let t = obj.extract::<StreamOrdered<ManagedTensor>>().unwrap();
        assert_eq!(
            (t.ready.order, t.ready.stream as usize),
            (StreamOrder::Stream, 0xc0ffee)
        );
        assert_eq!(t.shape().unwrap(), &[2]);

        let e = StreamOrdered::import(&obj, &PyImportOptions::new().stream(7)).unwrap_err();
        assert!(e.to_string().contains("asked through __dlpack__"), "{e}");
    });
}

/// A producer of two float32 in CUDA managed memory (host memory here, which the CPU reads)
/// through `__dlpack__` (a new tensor for each of four asks), which records the `stream` it
/// was asked with (`seen`).
fn managed_memory_producer<'py>(py: Python<'py>) -> Bound<'py, PyAny> {
    let capsule = || capsule_of(py, device_tensor(dlpack_mdspan::DeviceType::CUDA_MANAGED));
    let globals = PyDict::new(py);
    py.run(
        c"class ManagedProducer:\n    \
          def __init__(self, capsules):\n        self.capsules = capsules\n        self.seen = []\n    \
          def __dlpack__(self, **kw):\n        self.seen.append(kw.get('stream'))\n        \
          return self.capsules.pop(0)\n    \
          def __dlpack_device__(self):\n        return (13, 0)\n",
        Some(&globals),
        None,
    )
    .unwrap();
    let class = globals.get_item("ManagedProducer").unwrap().unwrap();
    class
        .call1(((0..4).map(|_| capsule()).collect::<Vec<_>>(),))
        .unwrap()
}

/// CUDA managed memory read through a `PyTensor` (on the host) or kept as a `ManagedTensor`
/// (nothing in it says when the data is ready): the host must wait for the producer's work
/// first, so the producer is asked with the library's stream of the device and the host
/// waits on it (`dlpm_py_options.ready_on_host`), which needs the CUDA driver. Without one
/// (this machine) the argument is refused, naming it; with one, the producer was asked
/// with a stream. Before, the view read the memory with nothing ordering that after the
/// producer's queued work, and the producer was asked with no stream.
#[test]
fn managed_memory_is_read_only_after_the_producers_work() {
    Python::attach(|py| {
        for kind in ["PyTensor", "PyTensorMut", "ManagedTensor"] {
            let p = managed_memory_producer(py);
            let got = match kind {
                "PyTensor" => p.extract::<PyTensor<'_, f32>>().map(drop),
                "PyTensorMut" => p.extract::<PyTensorMut<'_, f32>>().map(drop),
                _ => p.extract::<ManagedTensor>().map(drop),
            };
            let seen: Vec<Option<i64>> = p.getattr("seen").unwrap().extract().unwrap();
            // A bare capsule of such memory is taken as it is (it gives its tensor once, and
            // names no producer to wait for), as before.
            let bare = p.getattr("capsules").unwrap().get_item(0).unwrap();
            let taken = match kind {
                "PyTensor" => bare.extract::<PyTensor<'_, f32>>().map(drop),
                "PyTensorMut" => bare.extract::<PyTensorMut<'_, f32>>().map(drop),
                _ => bare.extract::<ManagedTensor>().map(drop),
            };
            assert!(taken.is_ok(), "{kind} of a bare capsule: {taken:?}");
            match got {
                Err(e) => assert!(
                    e.is_instance_of::<PyBufferError>(py) && e.to_string().contains("CUDA driver"),
                    "{kind}: {e}"
                ),
                Ok(()) => assert!(
                    seen.last().is_some_and(Option::is_some),
                    "{kind}: asked with {seen:?}"
                ),
            }
        }
    });
}

/// The status of an extraction's refusal, for the crate's own refusals: the exception's
/// text ends with the status name.
fn already_borrowed(e: &PyErr, py: Python<'_>) -> bool {
    e.is_instance_of::<PyBufferError>(py) && e.to_string().ends_with("(already borrowed)")
}

// One Python tensor given as a reader and a writer of one call (`f(x, x)`) would let safe
// code hold a `&[f32]` that the writer changes; the borrow registry refuses the second
// argument with BufferError, and a reader given twice is still lent twice.
#[test]
fn a_tensor_is_not_lent_as_a_reader_and_a_writer_at_once() {
    Python::attach(|py| {
        let obj = ManagedTensor::from_vec(vec![1.0f32; 4], &[4])
            .unwrap()
            .into_pyobject(py)
            .unwrap();
        let r = obj.extract::<PyTensor<'_, f32>>().unwrap();
        let e = obj
            .extract::<PyTensorMut<'_, f32>>()
            .err()
            .expect("refused");
        assert!(already_borrowed(&e, py), "{e}");
        assert!(
            e.to_string()
                .contains("the tensor's 16 bytes cannot be borrowed for writing: 16 of them are borrowed by a reader"),
            "{e}"
        );
        let r2 = obj.extract::<PyTensor<'_, f32>>().unwrap(); // readers share
        assert_eq!(
            r2.view_ref().as_slice().unwrap(),
            r.view_ref().as_slice().unwrap()
        );
        drop((r, r2));
        let mut w = obj.extract::<PyTensorMut<'_, f32>>().unwrap(); // the readers are gone
        let e = obj.extract::<PyTensor<'_, f32>>().err().expect("refused");
        assert!(
            e.to_string().contains("cannot be borrowed for reading"),
            "{e}"
        );
        let e = obj
            .extract::<PyTensorMut<'_, f32>>()
            .err()
            .expect("two writers of one object");
        assert!(already_borrowed(&e, py), "{e}");
        w.view_mut().set(&[0], 9.0).unwrap();
        drop(w);
        assert_eq!(
            obj.extract::<PyTensor<'_, f32>>()
                .unwrap()
                .view_ref()
                .get(&[0]),
            Some(&9.0)
        );
    });
}

/// A `dlpack_mdspan.Tensor` of `len` float32 elements from element `from` of `buffer`,
/// a memory several tensors share, as a NumPy array and its slices do.
fn slice_of<'py>(
    py: Python<'py>,
    buffer: &std::sync::Arc<Vec<f32>>,
    from: usize,
    len: i64,
) -> Bound<'py, PyAny> {
    let data = buffer.as_ptr().cast_mut().cast();
    let shape = [len];
    let export = ManagedTensor::build_from_owner(
        buffer.clone(),
        data,
        dlpack_mdspan::DataType::F32,
        dlpack_mdspan::Device::CPU,
        &shape,
    )
    .byte_offset(4 * from as u64);
    // SAFETY: the Arc keeps the buffer alive; what reaches it is what this test checks.
    unsafe { export.finish() }
        .unwrap()
        .into_pyobject(py)
        .unwrap()
}

// Claims are spans of memory, not objects: a tensor and an overlapping slice of the same
// memory conflict, disjoint slices do not, and empty tensors claim nothing.
#[test]
fn overlapping_memory_of_two_objects_is_one_borrow() {
    Python::attach(|py| {
        let buffer = std::sync::Arc::new((0..8).map(|v| v as f32).collect::<Vec<f32>>());
        let (a, head, tail, middle) = (
            slice_of(py, &buffer, 0, 8),
            slice_of(py, &buffer, 0, 4),
            slice_of(py, &buffer, 4, 4),
            slice_of(py, &buffer, 3, 2),
        );
        let w = head.extract::<PyTensorMut<'_, f32>>().unwrap();
        let r = tail.extract::<PyTensor<'_, f32>>().unwrap(); // disjoint
        let e = middle
            .extract::<PyTensor<'_, f32>>()
            .err()
            .expect("bytes 12..16 are the writer's");
        assert!(
            e.to_string().contains("4 of them are borrowed by a writer"),
            "{e}"
        );
        let e = a
            .extract::<PyTensor<'_, f32>>()
            .err()
            .expect("the whole overlaps the writer");
        assert!(already_borrowed(&e, py), "{e}");
        let empty = slice_of(py, &buffer, 2, 0);
        let e1 = empty.extract::<PyTensorMut<'_, f32>>().unwrap();
        let e2 = empty.extract::<PyTensorMut<'_, f32>>().unwrap(); // nothing to share
        drop((w, r, e1, e2));
        assert!(middle.extract::<PyTensorMut<'_, f32>>().is_ok());
    });
}

// Two ManagedTensor imports of one Tensor are owned and may live long: each claims its
// bytes at its first view (for reading) and first mutable view (for writing), until it
// drops or leaves Rust, so that one's slice is never changed through the other.
#[test]
fn imported_tensors_claim_their_bytes_when_viewed() {
    Python::attach(|py| {
        let obj = ManagedTensor::from_vec(vec![1i32, 2, 3], &[3])
            .unwrap()
            .into_pyobject(py)
            .unwrap();
        let reader = obj.extract::<ManagedTensor>().unwrap();
        let mut writer = obj.extract::<ManagedTensor>().unwrap();
        let slice = reader.view::<i32>().unwrap().as_slice().unwrap();
        let e = writer.view_mut::<i32>().map(|_| ()).unwrap_err();
        assert_eq!(e.status(), dlpack_mdspan::Status::ALREADY_BORROWED, "{e}");
        let e = obj
            .extract::<PyTensorMut<'_, i32>>()
            .err()
            .expect("the import reads it");
        assert!(already_borrowed(&e, py), "{e}");
        assert!(obj.extract::<PyTensor<'_, i32>>().is_ok()); // readers share
        assert_eq!(slice, &[1, 2, 3]);
        drop(reader);
        writer.view_mut::<i32>().unwrap().set(&[0], 7).unwrap(); // claims for writing now
        assert_eq!(writer.view::<i32>().unwrap().get(&[0]), Some(&7)); // its own reader
        let again = obj.extract::<ManagedTensor>().unwrap(); // an import claims nothing yet
        assert_eq!(
            again.view::<i32>().unwrap_err().status(),
            dlpack_mdspan::Status::ALREADY_BORROWED
        );
        let back = writer.into_pyobject(py).unwrap(); // it leaves Rust: its claim ends
        assert_eq!(again.view::<i32>().unwrap().as_slice().unwrap(), &[7, 2, 3]);
        drop((back, again));
        // A legacy export leaves Rust too.
        let mut leaving = obj.extract::<ManagedTensor>().unwrap();
        leaving.view_mut::<i32>().unwrap();
        assert!(obj.extract::<PyTensor<'_, i32>>().is_err());
        let legacy = leaving.into_legacy().unwrap();
        assert!(obj.extract::<PyTensorMut<'_, i32>>().is_ok());
        // SAFETY: a live legacy tensor from into_legacy, deleted once.
        unsafe { sys::dlpm_legacy_delete(legacy) };
    });
}

// A refused mutable view of an import gives back the writer's claim it took (the claim comes
// first, so that the view's check, which may read the elements, never reads bytes a writer
// holds); a copy claims as a view does.
#[test]
fn an_imports_refused_writer_gives_its_claim_back_and_a_copy_claims() {
    Python::attach(|py| {
        let obj = ManagedTensor::from_vec(vec![1i32, 2, 3], &[3])
            .unwrap()
            .into_pyobject(py)
            .unwrap();
        let mut m = obj.extract::<ManagedTensor>().unwrap();
        let e = m.view_mut::<f64>().map(|_| ()).unwrap_err();
        assert_eq!(e.status(), dlpack_mdspan::Status::DTYPE_MISMATCH);
        drop(obj.extract::<PyTensorMut<'_, i32>>().unwrap()); // still unclaimed
        m.view::<i32>().unwrap(); // a reader now
        assert!(m.view_mut::<u8>().is_err());
        assert!(obj.extract::<PyTensor<'_, i32>>().is_ok()); // back to a reader, not a writer
        assert!(obj.extract::<PyTensorMut<'_, i32>>().is_err());
        drop(m);
        let copied = obj.extract::<ManagedTensor>().unwrap();
        let w = obj.extract::<PyTensorMut<'_, i32>>().unwrap();
        let e = copied.copy_to_host().unwrap_err();
        assert_eq!(e.status(), dlpack_mdspan::Status::ALREADY_BORROWED, "{e}");
        drop(w);
        assert_eq!(
            copied
                .copy_to_host()
                .unwrap()
                .view::<i32>()
                .unwrap()
                .to_vec(),
            vec![1, 2, 3]
        );
        assert!(obj.extract::<PyTensorMut<'_, i32>>().is_err()); // the copy's claim stays
    });
}

/// The process's shared registry, as another copy reads it.
fn shared_registry(py: Python<'_>) -> &'static SharedRegistry {
    let capsule = eval(py, "import sys\nresult = sys._dlpack_mdspan_borrows");
    shared_registry::registry_in(&capsule)
}

// Two Rust extensions each link their own copy of the crate: their borrows of one tensor
// would not see each other (ext_a's reader, ext_b's writer, in a call that calls back into
// Python), so the first copy publishes its registry and every copy claims through it. Here
// the test plays the other copy, through the published C ABI.
#[test]
fn borrows_are_shared_with_the_other_rust_extensions_in_the_process() {
    Python::attach(|py| {
        let a = ManagedTensor::from_vec(vec![1.0f32; 6], &[6])
            .unwrap()
            .into_pyobject(py)
            .unwrap();
        let begin = {
            let t = a.extract::<PyTensor<'_, f32>>().unwrap(); // this copy claims: resolved
            t.view_ref().as_slice().unwrap().as_ptr().addr()
        };
        let end = begin + 24;
        let registry = shared_registry(py);
        assert_eq!(registry.version, 1);
        assert_eq!(
            registry.size as usize,
            std::mem::size_of::<SharedRegistry>()
        );
        let other_key = Box::into_raw(Box::new(0u64)).addr(); // another copy's borrow
        let mut held = HeldClaim::default();
        // The other copy writes bytes 8..16: this copy's reader is refused.
        // SAFETY: the registry's functions, with a valid out-parameter.
        let claimed = unsafe { (registry.claim)(other_key, begin + 8, begin + 16, 1, &mut held) };
        assert_eq!(claimed, 0);
        let e = a
            .extract::<PyTensor<'_, f32>>()
            .err()
            .expect("the other copy writes");
        assert!(already_borrowed(&e, py), "{e}");
        assert!(
            e.to_string().contains(
                "the tensor's 24 bytes cannot be borrowed for reading: 8 of them are borrowed by a writer"
            ),
            "{e}"
        );
        // SAFETY: the other copy's claim ends.
        unsafe { (registry.release)(other_key, 1) };
        // This copy writes: the other copy's reader of the last 4 bytes (and 4 past them) is
        // refused, and told which claim is in the way.
        let w = a.extract::<PyTensorMut<'_, f32>>().unwrap();
        // SAFETY: as above.
        let claimed = unsafe { (registry.claim)(other_key, end - 4, end + 4, 0, &mut held) };
        assert_eq!(claimed, 1);
        assert_eq!(
            (held.begin, held.end, held.kind),
            (begin, end, 1),
            "{held:?}"
        );
        drop(w);
        // SAFETY: as above; the extension's writer is gone, the other copy reads, then ends.
        let claimed = unsafe { (registry.claim)(other_key, end - 4, end + 4, 0, &mut held) };
        assert_eq!(claimed, 0);
        assert!(
            a.extract::<PyTensorMut<'_, f32>>().is_err(),
            "the other copy reads"
        );
        // SAFETY: as above.
        unsafe { (registry.release)(other_key, 0) };
        assert!(a.extract::<PyTensorMut<'_, f32>>().is_ok());
        // SAFETY: the Box made above, freed once.
        drop(unsafe { Box::from_raw(other_key as *mut u64) });
    });
}
