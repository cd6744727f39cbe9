# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""apache-tvm-ffi 0.1.15 (the frameworks venv) against the shipped Python component.

Import: tvm_ffi.Tensor publishes no exchange API; its __dlpack__ returns a versioned capsule
when asked with max_version (the "__dlpack__" path), and t.__dlpack__(max_version=...) can be
handed over as a bare capsule (the "capsule" path).

Export: tvm_ffi.from_dlpack(obj) uses the exchange API of obj's type when it publishes one
(__dlpack_c_exchange_api__), else obj.__dlpack__() (legacy). Our dlpack_mdspan.Tensor
publishes one, so tvm-ffi takes our tensors through managed_tensor_from_py_object_no_sync;
a monkeypatched-out __dlpack__ proves it. Run by CTest with the frameworks flavour only.
"""
import numpy as np  # builds tvm_ffi tensors (tvm_ffi.from_dlpack(ndarray)) and reads bytes back
import pytest
import tvm_ffi

import dlpm_interop as dl

INT, UINT, FLOAT, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 4, 5, 6
NP_DL = {
    "bool": (BOOL, 8, 1), "int8": (INT, 8, 1), "int16": (INT, 16, 1), "int32": (INT, 32, 1), "int64": (INT, 64, 1),
    "uint8": (UINT, 8, 1), "uint16": (UINT, 16, 1), "uint32": (UINT, 32, 1), "uint64": (UINT, 64, 1),
    "float16": (FLOAT, 16, 1), "float32": (FLOAT, 32, 1), "float64": (FLOAT, 64, 1), "complex64": (COMPLEX, 64, 1),
    "complex128": (COMPLEX, 128, 1),
}


def numpy_cases():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    cases = {
        "contiguous": base,
        "transposed": base.T,
        "sliced with steps": base[::2, 1::3],
        "negative steps": base[::-1, ::-2],
        "size-1 dims": base[1:2, :, None],
        "size-0 dims": base[:0],
        "0-d": np.array(3.5),
        "bool": np.array([True, False, True]),
        "complex64": np.array([1 + 2j, 3 - 4j], dtype=np.complex64),
    }
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        info = np.iinfo(name)
        cases[name] = np.array([info.min, 0, 1, info.max], dtype=name)
    for name in ("float16", "float32", "float64"):
        cases[name] = (np.arange(5) / 4 - 0.5).astype(name)
    return cases


IMPORT_CASES = list(numpy_cases())


def check_import(r, a):
    assert r["bytes"] == np.ascontiguousarray(a).tobytes()
    assert r["shape"] == a.shape
    assert r["dtype"] == NP_DL[str(a.dtype)]
    assert r["device"] == (1, 0)
    assert r["read_only"] is False and r["copied"] is False
    assert r["data_ptr"] == a.ctypes.data  # numpy -> tvm_ffi -> us: the same memory
    if a.ndim and a.size:
        for extent, got, want in zip(a.shape, r["strides"], a.strides):
            assert extent == 1 or got == want // a.itemsize


# ---- import: tvm_ffi.Tensor -> dlpm_py_import ---------------------------------------------------


@pytest.mark.matrix("tvm-ffi", "import", "__dlpack__")
@pytest.mark.parametrize("name", IMPORT_CASES)
def test_import_through_dunder_dlpack(name):
    a = numpy_cases()[name]
    t = tvm_ffi.from_dlpack(a)
    assert dl.exchange_api(t) is None
    check_import(dl.consume(t), a)


@pytest.mark.matrix("tvm-ffi", "import", "capsule")
@pytest.mark.parametrize("name", ["contiguous", "transposed", "0-d", "bool", "int8", "float16"])
def test_import_versioned_capsule(name):
    a = numpy_cases()[name]
    capsule = tvm_ffi.from_dlpack(a).__dlpack__(max_version=(1, 3))
    check_import(dl.consume(capsule), a)
    with pytest.raises(BufferError, match="already consumed .*'used_dltensor_versioned'"):
        dl.consume(capsule)


@pytest.mark.matrix("tvm-ffi", "import", "__dlpack__")
@pytest.mark.parametrize("dtype", [(BFLOAT, 16, 1), (10, 8, 1), (12, 8, 1), (INT, 4, 1), (FLOAT, 32, 4)],
                         ids=["bfloat16", "float8_e4m3fn", "float8_e5m2", "int4", "float32x4"])
def test_import_dtypes_numpy_cannot_make(dtype):
    """tvm_ffi tensors of dtypes NumPy cannot export, made over our memory and read back."""
    ours = dl.tensor((2, 4), dtype)
    t = tvm_ffi.from_dlpack(ours)
    r = dl.consume(t)
    assert r["dtype"] == dtype and r["shape"] == (2, 4) and r["data_ptr"] == dl.consume(ours)["data_ptr"]
    bits = dtype[1] * dtype[2]
    if bits % 8 == 0:
        data = bytes(range(1, 8 * bits // 8 + 1))
        dl.fill(ours, data)
        assert dl.consume(t)["bytes"] == data
    else:  # packed sub-byte: no per-element bytes; the component reports none
        assert r["bytes"] is None


@pytest.mark.matrix("tvm-ffi", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["write through"])
def test_write_through_is_seen_by_tvm(case):
    a = np.zeros((3, 4), dtype=np.int32)
    t = tvm_ffi.from_dlpack(a[:, ::2])
    want = np.arange(1, 7, dtype=np.int32).reshape(3, 2)
    dl.consume(t, writable=True, write=want.tobytes())
    assert np.array_equal(np.from_dlpack(t), want)
    assert np.array_equal(a[:, ::2], want) and not a[:, 1::2].any()


@pytest.mark.matrix("tvm-ffi", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["refused copy=True"])
def test_copy_request_is_refused_by_tvm(case):
    with pytest.raises(BufferError, match="copy not yet supported"):
        dl.consume(tvm_ffi.from_dlpack(np.arange(3.0)), copy=True)


@pytest.mark.matrix("tvm-ffi", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["requirement mismatches"])
def test_requirement_mismatches(case):
    t = tvm_ffi.from_dlpack(np.zeros((2, 3), dtype=np.float32).T)
    with pytest.raises(TypeError, match="dtype mismatch"):
        dl.consume(t, dtype=(INT, 32, 1))
    with pytest.raises(TypeError, match="not C-contiguous"):
        dl.consume(t, order="C")


# ---- export: tvm_ffi.from_dlpack(our Tensor) ---------------------------------------------------

EXPORT_DTYPES = {
    "bool": (BOOL, 8, 1), "int8": (INT, 8, 1), "int16": (INT, 16, 1), "int32": (INT, 32, 1), "int64": (INT, 64, 1),
    "uint8": (UINT, 8, 1), "uint64": (UINT, 64, 1), "float16": (FLOAT, 16, 1), "float32": (FLOAT, 32, 1),
    "float64": (FLOAT, 64, 1), "bfloat16": (BFLOAT, 16, 1), "float8_e4m3fn": (10, 8, 1), "float8_e5m2": (12, 8, 1),
    "complex64": (COMPLEX, 64, 1), "int4": (INT, 4, 1), "float32x4": (FLOAT, 32, 4),
}
SHAPES = {"0-d": (), "size-0": (0, 3), "size-1 dims": (1, 4, 1), "column-major": (2, 3)}


@pytest.fixture
def no_dunder_dlpack(monkeypatch):
    """dlpack_mdspan.Tensor.__dlpack__ patched out: only the exchange API can export it."""

    def broken(self, **kwargs):
        raise RuntimeError("dlpack_mdspan.Tensor.__dlpack__ is patched out")

    monkeypatch.setattr(dl.Tensor, "__dlpack__", broken)
    with pytest.raises(RuntimeError, match="patched out"):
        dl.tensor((1,)).__dlpack__()


def check_export(ours, dtype):
    x = tvm_ffi.from_dlpack(ours)
    assert type(x) is tvm_ffi.Tensor
    assert tuple(x.shape) == ours.shape and tuple(x.strides) == ours.strides
    # tvm_ffi 0.1.15 has no name for complex dtypes (Tensor.dtype raises); we read it back instead
    r = dl.consume(x)
    assert r["dtype"] == dtype
    if r["shape"] and 0 in r["shape"]:
        return
    assert x.data_ptr() == r["data_ptr"] == dl.consume(ours)["data_ptr"]
    bits = dtype[1] * dtype[2]
    if bits % 8 == 0:
        numel = int(np.prod(ours.shape))
        data = bytes(k % 2 if dtype[0] == BOOL else (k % 251) + 1 for k in range(numel * bits // 8))
        dl.fill(ours, data)  # after the import: tvm must see it (zero-copy)
        assert dl.consume(x)["bytes"] == data


@pytest.mark.matrix("tvm-ffi", "export", "exchange API")
@pytest.mark.parametrize("name", list(EXPORT_DTYPES))
def test_export_through_our_exchange_api(name, no_dunder_dlpack):
    dtype = EXPORT_DTYPES[name]
    check_export(dl.tensor((2, 4), dtype), dtype)


@pytest.mark.matrix("tvm-ffi", "export", "exchange API")
@pytest.mark.parametrize("name", list(SHAPES))
def test_export_shapes_through_our_exchange_api(name, no_dunder_dlpack):
    check_export(dl.tensor(SHAPES[name], order="F" if name == "column-major" else "C"), (FLOAT, 32, 1))


@pytest.mark.matrix("tvm-ffi", "export", "exchange API")
@pytest.mark.parametrize("case", ["tvm names our dtypes"])
def test_tvm_dtype_names(case):
    names = {name: str(tvm_ffi.from_dlpack(dl.tensor((2,), EXPORT_DTYPES[name])).dtype)
             for name in ("bool", "int8", "bfloat16", "float8_e4m3fn", "int4", "float32x4")}
    assert names == {"bool": "bool", "int8": "int8", "bfloat16": "bfloat16", "float8_e4m3fn": "float8_e4m3fn",
                     "int4": "int4", "float32x4": "float32x4"}
    with pytest.raises(ValueError, match="DLDataType contains unknown type_code=5"):
        tvm_ffi.from_dlpack(dl.tensor((2,), (COMPLEX, 64, 1))).dtype  # noqa: B018 - tvm_ffi's gap, not ours


@pytest.mark.matrix("tvm-ffi", "export", "exchange API")
@pytest.mark.parametrize("case", ["write from tvm side"])
def test_numpy_over_tvm_writes_reach_us(case, no_dunder_dlpack):
    ours = dl.tensor((2, 3), (INT, 32, 1))
    x = tvm_ffi.from_dlpack(ours)
    view = np.from_dlpack(x)  # NumPy over tvm_ffi over us
    view[1, 2] = 77
    assert dl.consume(ours)["bytes"][-4:] == (77).to_bytes(4, "little")


@pytest.mark.matrix("tvm-ffi", "export", "exchange API")
@pytest.mark.parametrize("case", ["read-only (tvm drops the flag)"])
def test_read_only_export(case, no_dunder_dlpack):
    """tvm_ffi takes a READ_ONLY tensor and re-exports it without the flag."""
    ours = dl.tensor((2,), readonly=True)
    x = tvm_ffi.from_dlpack(ours)
    r = dl.consume(x)
    assert r["read_only"] is False
    assert r["data_ptr"] == dl.consume(ours)["data_ptr"]


def misaligned_tensor(alignment):
    """A 3-element Tensor whose data is not `alignment`-aligned: malloc may return an aligned
    block, so such blocks are kept (so that the next is another) until one is not."""
    aligned = []
    for _ in range(64):
        t = dl.tensor((3,))
        if dl.consume(t)["data_ptr"] % alignment != 0:  # through the exchange API: no __dlpack__ call
            return t
        aligned.append(t)
    raise AssertionError(f"64 allocations in a row were {alignment}-byte aligned")


@pytest.mark.matrix("tvm-ffi", "export", "exchange API")
@pytest.mark.parametrize("make, kwargs, message", [
    (lambda: dl.tensor((2, 3), order="F"), {"require_contiguous": True}, "FromDLPack: Tensor is not contiguous"),
    (lambda: misaligned_tensor(4096), {"require_alignment": 4096}, "FromDLPack: Data is not aligned to 4096 bytes"),
], ids=["refused column-major (require_contiguous)", "refused misaligned (require_alignment)"])
def test_tvm_refusals_release_our_export(make, kwargs, message, collect, monkeypatch):
    calls = []
    original = dl.Tensor.__dlpack__

    def spy(self, **kw):
        calls.append(kw)
        return original(self, **kw)

    monkeypatch.setattr(dl.Tensor, "__dlpack__", spy)
    ours = make()
    collect()
    before = dl.released()
    with pytest.raises(RuntimeError, match=message):
        tvm_ffi.from_dlpack(ours, **kwargs)
    # tvm_ffi turns its refusal of the exchange-API tensor into BufferError, catches it and
    # tries again through __dlpack__() (a legacy capsule), which it refuses the same way.
    assert calls == [{}]
    del ours
    collect()
    assert dl.released() == before + 1  # tvm's refusal deleted our export: nothing leaked


@pytest.mark.matrix("tvm-ffi", "export", "exchange API")
@pytest.mark.parametrize("case", ["lifetime"])
def test_tvm_keeps_our_memory_alive(case, collect, no_dunder_dlpack):
    ours = dl.tensor((3,), (INT, 64, 1))
    dl.fill(ours, np.array([7, 8, 9], dtype=np.int64).tobytes())
    collect()
    before = dl.released()
    x = tvm_ffi.from_dlpack(ours)
    del ours
    collect()
    assert np.from_dlpack(x).tolist() == [7, 8, 9]
    assert dl.released() == before
    del x
    collect()
    assert dl.released() == before + 1


@pytest.mark.matrix("tvm-ffi", "export", "exchange API")
@pytest.mark.parametrize("case", ["C++ memory lifetime"])
def test_cpp_memory_to_tvm(case, collect, no_dunder_dlpack):
    ours = dl.cpp_tensor((4,), "int32")
    dl.fill(ours, np.array([1, 2, 3, 4], dtype=np.int32).tobytes())
    collect()
    before = dl.released()
    x = tvm_ffi.from_dlpack(ours)
    del ours
    collect()
    assert np.from_dlpack(x).sum() == 10 and dl.released() == before
    del x
    collect()
    assert dl.released() == before + 1
