# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""pyarrow 26 (the frameworks venv) against the shipped Python component, both directions.

Import: pa.Array (primitive, null-free), pa.Tensor and pa.FixedShapeTensorArray have
__dlpack__ (versioned with max_version, READ_ONLY for immutable data); pyarrow publishes no
exchange API. Its refusals (bit-packed bool, nulls, non-primitive types) are its own
ArrowTypeError, which must reach the caller unchanged.

Export: pa.Array.from_dlpack (1-D contiguous), pa.Tensor.from_dlpack (any strides) and
pa.FixedShapeTensorArray.from_dlpack call our __dlpack__(max_version=(1, 3), dl_device=None,
copy=None). Run by CTest with the frameworks flavour only.
"""
import numpy as np  # pyarrow's own dependency: builds the arrays and reads them back
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dlpm_interop as dl

INT, UINT, FLOAT, BOOL = 0, 1, 2, 6
PA_DL = {
    "int8": (INT, 8, 1), "int16": (INT, 16, 1), "int32": (INT, 32, 1), "int64": (INT, 64, 1),
    "uint8": (UINT, 8, 1), "uint16": (UINT, 16, 1), "uint32": (UINT, 32, 1), "uint64": (UINT, 64, 1),
    "float16": (FLOAT, 16, 1), "float32": (FLOAT, 32, 1), "float64": (FLOAT, 64, 1),
}


def values(name, n=5):
    """n values of dtype `name`, reaching both ends of integer ranges."""
    if name[0] in "iu":
        info = np.iinfo(name)
        return np.array([info.min, info.min + 1] + list(range(n - 3)) + [info.max], dtype=name)
    return (np.arange(n) / 4 - 0.5).astype(name)


def array_address(a):
    """Where a's first element lives: its values buffer plus offset elements."""
    return a.buffers()[1].address + a.offset * a.type.bit_width // 8


def check_array_import(r, a):
    want = a.to_numpy(zero_copy_only=True)
    assert r["bytes"] == want.tobytes()
    assert r["shape"] == (len(a),) and r["strides"] == (1,)
    assert r["dtype"] == PA_DL[str(want.dtype)]
    assert r["device"] == (1, 0)
    assert r["read_only"] is True  # Arrow data is immutable
    assert r["copied"] is False
    if len(a):
        assert r["data_ptr"] == array_address(a)


# ---- import ------------------------------------------------------------------------------


@pytest.mark.matrix("pyarrow", "import", "__dlpack__")
@pytest.mark.parametrize("name", list(PA_DL))
def test_import_array(name):
    a = pa.array(values(name))
    assert dl.exchange_api(a) is None
    check_array_import(dl.consume(a), a)


@pytest.mark.matrix("pyarrow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["sliced (offset)", "empty", "slice without the nulls"])
def test_import_array_layouts(case):
    a = {
        "sliced (offset)": pa.array(np.arange(10, dtype=np.int32)).slice(3, 4),
        "empty": pa.array([], type=pa.float64()),
        "slice without the nulls": pa.array([1, None, 3, 4]).slice(2, 2),
    }[case]
    r = dl.consume(a)
    check_array_import(r, a)
    if case == "sliced (offset)":
        assert a.offset == 3 and r["byte_offset"] == 0
        assert r["data_ptr"] == a.buffers()[1].address + 12  # pyarrow moves the pointer


@pytest.mark.matrix("pyarrow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["Tensor C-order", "Tensor transposed", "Tensor read-only", "FixedShapeTensorArray"])
def test_import_tensors(case):
    base = np.arange(12, dtype=np.int32).reshape(3, 4)
    if case == "FixedShapeTensorArray":
        obj, want, read_only = pa.FixedShapeTensorArray.from_numpy_ndarray(base.astype(np.float64)), base.astype(np.float64), True
    elif case == "Tensor read-only":
        frozen = base.copy()
        frozen.flags.writeable = False
        obj, want, read_only = pa.Tensor.from_numpy(frozen), frozen, True
    else:
        want = base if case == "Tensor C-order" else base.T
        obj, read_only = pa.Tensor.from_numpy(want), False  # a Tensor over writable NumPy memory
    r = dl.consume(obj)
    assert r["bytes"] == np.ascontiguousarray(want).tobytes()
    assert r["shape"] == want.shape
    assert r["strides"] == tuple(s // want.itemsize for s in want.strides)
    assert r["read_only"] is read_only
    if case != "FixedShapeTensorArray":
        assert r["data_ptr"] == want.ctypes.data  # pa.Tensor wraps the NumPy memory


@pytest.mark.matrix("pyarrow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["copy=True"])
def test_import_copy(case):
    a = pa.array(np.arange(4, dtype=np.int64))
    r = dl.consume(a, copy=True)
    assert r["copied"] is True and r["read_only"] is False
    assert r["data_ptr"] != array_address(a)
    assert r["bytes"] == a.to_numpy().tobytes()


@pytest.mark.matrix("pyarrow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["refused writable (immutable)"])
def test_writable_request_is_refused(case):
    a = pa.array(np.arange(3, dtype=np.float32))
    with pytest.raises(TypeError, match="READ_ONLY but a writable tensor is required"):
        dl.consume(a, writable=True, write=b"\0" * 12)
    assert a.to_pylist() == [0.0, 1.0, 2.0]


# pyarrow's refusal is an ArrowTypeError, a TypeError: dlpm_py_import takes it for a pre-1.0
# producer and asks again without max_version, which pyarrow answers with a DeprecationWarning
# before refusing again (see test_refusal_with_warnings_as_errors).
@pytest.mark.filterwarnings("ignore:Exporting an unversioned DLPack capsule is deprecated:DeprecationWarning")
@pytest.mark.matrix("pyarrow", "import", "__dlpack__")
@pytest.mark.parametrize("make, message", [
    (lambda: pa.array([True, False]), "Bit-packed boolean data type not supported by DLPack"),
    (lambda: pa.array([1, None, 3]), "Can only use DLPack on arrays with no nulls"),
    (lambda: pa.array([1.5, None]), "Can only use DLPack on arrays with no nulls"),
    (lambda: pa.array(["a", "b"]), "DataType is not compatible with DLPack spec: string"),
], ids=["refused bool", "refused int64 with nulls", "refused float64 with nulls", "refused string"])
def test_pyarrow_refusals_propagate(make, message):
    with pytest.raises(pa.ArrowTypeError, match=message):
        dl.consume(make())


@pytest.mark.matrix("pyarrow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["refused bool under -W error"])
def test_refusal_with_warnings_as_errors(case):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(pa.ArrowTypeError, match="Bit-packed boolean data type not supported by DLPack"):
            dl.consume(pa.array([True, False]))


@pytest.mark.matrix("pyarrow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["refused ChunkedArray (no __dlpack__)"])
def test_chunked_array_is_not_a_dlpack_producer(case):
    with pytest.raises(TypeError, match="expected a DLPack tensor .*ChunkedArray"):
        dl.consume(pa.chunked_array([[1], [2]]))


# ---- export ------------------------------------------------------------------------------


@pytest.fixture
def our_calls(monkeypatch):
    """Records calls of dlpack_mdspan.Tensor.__dlpack__ (keyword arguments), passing them on."""
    calls = []
    original = dl.Tensor.__dlpack__

    def spy(self, **kwargs):
        calls.append(kwargs)
        return original(self, **kwargs)

    monkeypatch.setattr(dl.Tensor, "__dlpack__", spy)
    return calls


@pytest.mark.matrix("pyarrow", "export", "__dlpack__")
@pytest.mark.parametrize("name", list(PA_DL), ids=lambda n: f"Array {n}")
def test_export_to_array(name, our_calls):
    want = values(name, 6)
    ours = dl.tensor((6,), PA_DL[name])
    a = pa.Array.from_dlpack(ours)
    assert our_calls == [{"max_version": (1, 3), "dl_device": None, "copy": None}]
    assert str(a.to_numpy().dtype) == name and len(a) == 6
    dl.fill(ours, want.tobytes())  # after the import: pyarrow must see it (zero-copy)
    assert a.to_numpy().tobytes() == want.tobytes()
    assert array_address(a) == dl.consume(ours)["data_ptr"]


@pytest.mark.matrix("pyarrow", "export", "__dlpack__")
@pytest.mark.parametrize("shape, order", [((2, 3), "C"), ((2, 3), "F"), ((), "C"), ((0, 3), "C"), ((1, 4, 1), "C")],
                         ids=["Tensor 2x3", "Tensor column-major", "Tensor 0-d", "Tensor size-0", "Tensor size-1 dims"])
def test_export_to_tensor(shape, order):
    ours = dl.tensor(shape, (FLOAT, 64, 1), order=order)
    t = pa.Tensor.from_dlpack(ours)
    assert t.shape == shape and t.type == pa.float64()
    assert t.strides == tuple(8 * s for s in ours.strides)
    want = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    dl.fill(ours, want.tobytes())
    assert np.array_equal(t.to_numpy(), want)


@pytest.mark.matrix("pyarrow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["FixedShapeTensorArray"])
def test_export_to_fixed_shape_tensor_array(case):
    ours = dl.tensor((3, 2), (FLOAT, 64, 1))
    f = pa.FixedShapeTensorArray.from_dlpack(ours)
    assert len(f) == 3 and f.type.shape == [2]
    dl.fill(ours, np.arange(6.0).tobytes())
    assert f.to_numpy_ndarray().tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


@pytest.mark.matrix("pyarrow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["copy=True"])
def test_export_copy(case, our_calls):
    ours = dl.tensor((4,), (INT, 32, 1))
    dl.fill(ours, np.arange(4, dtype=np.int32).tobytes())
    a = pa.Array.from_dlpack(ours, copy=True)
    assert our_calls[-1]["copy"] is True
    dl.fill(ours, np.zeros(4, dtype=np.int32).tobytes())
    assert a.to_pylist() == [0, 1, 2, 3]  # a private copy
    assert array_address(a) != dl.consume(ours)["data_ptr"]


@pytest.mark.matrix("pyarrow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["read-only"])
def test_export_read_only(case):
    ours = dl.tensor((3,), (INT, 16, 1), readonly=True)
    a = pa.Array.from_dlpack(ours)  # Arrow data is immutable anyway
    assert a.to_pylist() == [0, 0, 0] and array_address(a) == dl.consume(ours)["data_ptr"]


@pytest.mark.matrix("pyarrow", "export", "__dlpack__")
@pytest.mark.parametrize("make, consumer, message", [
    (lambda: dl.tensor((4,), (BOOL, 8, 1)), pa.Array.from_dlpack, "unsupported DLPack type 6"),
    (lambda: dl.tensor((4,), (4, 16, 1)), pa.Tensor.from_dlpack, "unsupported DLPack type 4"),
    (lambda: dl.tensor((4,), (5, 64, 1)), pa.Tensor.from_dlpack, "unsupported DLPack type 5"),
    (lambda: dl.tensor((2, 3)), pa.Array.from_dlpack, "Only contiguous one dimensional tensor can be imported as arrays"),
    (lambda: dl.tensor(()), pa.Array.from_dlpack, "Only contiguous one dimensional tensor can be imported as arrays"),
], ids=["refused bool", "refused bfloat16", "refused complex64", "refused 2-D Array", "refused 0-d Array"])
def test_pyarrow_refusals_release_our_export(make, consumer, message, collect):
    ours = make()
    collect()
    before = dl.released()
    with pytest.raises(pa.ArrowInvalid, match=message):
        consumer(ours)
    del ours
    collect()
    assert dl.released() == before + 1  # pyarrow's refusal ran our deleter: nothing leaked


@pytest.mark.matrix("pyarrow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["refused device"])
def test_device_request_is_refused_by_us(case):
    """A device no copy reaches (Vulkan): refused by our __dlpack__. (A CUDA or ROCm device is
    now a copy through its runtime where there is one: tests/python/cuda_stub, hip_stub.)"""
    with pytest.raises(BufferError, match=r"cannot copy this tensor from device \(1, 0\) to \(7, 0\)"):
        pa.Array.from_dlpack(dl.tensor((2,)), device=(7, 0))


@pytest.mark.matrix("pyarrow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["lifetime"])
def test_pyarrow_keeps_our_memory_alive(case, collect):
    ours = dl.tensor((3,), (INT, 64, 1))
    dl.fill(ours, np.array([7, 8, 9], dtype=np.int64).tobytes())
    collect()
    before = dl.released()
    a = pa.Array.from_dlpack(ours)
    del ours
    collect()
    assert a.to_pylist() == [7, 8, 9]
    assert pc.sum(a).as_py() == 24
    assert dl.released() == before
    del a
    collect()
    assert dl.released() == before + 1
