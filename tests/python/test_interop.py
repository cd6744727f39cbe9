# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The shipped Python component (dlpack_mdspan_python.h) against NumPy, PyTorch 1.13 and JAX,
both directions, driven through the dlpm_interop test extension.

Legacy flavour: Debian's NumPy 1.24 and PyTorch 1.13 (pre-1.0 DLPack: "dltensor" capsules).
Modern flavour: NumPy 2.4, JAX 0.10 and ml_dtypes (versioned DLPack).
"""
import ctypes
import gc
import os

import pytest

import dlpm_interop as dl

FLAVOUR = os.environ.get("DLPM_PYTHON_FLAVOUR", "modern")
MODERN = FLAVOUR == "modern"
OURS = "dlpack_mdspan.Tensor"

# DLDataType codes
INT, UINT, FLOAT, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 4, 5, 6
DTYPES = {"bool": (BOOL, 8, 1), "int8": (INT, 8, 1), "int16": (INT, 16, 1), "int32": (INT, 32, 1),
          "int64": (INT, 64, 1), "uint8": (UINT, 8, 1), "float16": (FLOAT, 16, 1), "float32": (FLOAT, 32, 1),
          "float64": (FLOAT, 64, 1), "complex64": (COMPLEX, 64, 1)}


def test_flavour_has_its_frameworks():
    import numpy

    major, minor = (int(x) for x in numpy.__version__.split(".")[:2])
    if FLAVOUR == "legacy":
        import torch  # noqa: F401

        assert major == 1, "legacy DLPack is tested with NumPy 1.x"
    else:
        import jax  # noqa: F401
        import ml_dtypes  # noqa: F401

        assert (major, minor) >= (2, 1), "versioned DLPack needs NumPy >= 2.1"


def row_major_bytes(np, a):
    return np.ascontiguousarray(a).tobytes()


# ---- import: framework arrays through dlpm_py_import --------------------------------------


def numpy_import_cases(np):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    cases = {
        "contiguous": base,
        "transposed": base.T,
        "sliced with steps": base[::2, 1::3],
        "size-1 dims": base[1:2, :, None],
        "size-0 dim": base[:0],
        "0-d": np.array(3.5, dtype=np.float64),
    }
    for name in ("int8", "int16", "int32", "int64", "uint8", "float16", "float64"):
        cases[name] = np.arange(-2, 3).astype(name) if name[0] != "u" else np.arange(5, dtype=name)
    cases["complex64"] = np.array([1 + 2j, 3 - 4j], dtype=np.complex64)
    if MODERN:  # NumPy 1.x exports neither negative strides nor bool through DLPack
        cases["negative steps"] = base[::-1, ::-2]
        cases["bool"] = np.array([True, False, True])
    return cases


NUMPY_CASES = ["contiguous", "transposed", "sliced with steps", "size-1 dims", "size-0 dim", "0-d", "int8", "int16",
               "int32", "int64", "uint8", "float16", "float64", "complex64", "negative steps", "bool"]


@pytest.mark.matrix("NumPy", "import", "__dlpack__")
@pytest.mark.parametrize("name", NUMPY_CASES)
def test_import_numpy(np, name):
    cases = numpy_import_cases(np)
    if name not in cases:
        pytest.skip("NumPy 1.x exports no negative strides and no bool through DLPack")
    a = cases[name]
    r = dl.consume(a)
    assert r["shape"] == a.shape
    assert r["bytes"] == row_major_bytes(np, a)
    assert r["data_ptr"] == a.__array_interface__["data"][0]  # zero copy
    assert r["borrowed"] is False
    if r["strides"] is not None and a.size > 1:
        assert all(s * a.itemsize == t for s, t, n in zip(r["strides"], a.strides, a.shape) if n > 1)
    assert r["read_only"] is (not MODERN)  # legacy capsules cannot say, so they arrive READ_ONLY


@pytest.mark.matrix("NumPy", "import", "__dlpack__")
def test_import_numpy_read_only(np):
    a = np.arange(4.0)
    a.flags.writeable = False
    if not MODERN:
        with pytest.raises(BufferError):  # NumPy 1.24 itself refuses to export read-only arrays
            dl.consume(a)
        return
    r = dl.consume(a)
    assert r["read_only"] is True and r["bytes"] == a.tobytes()
    with pytest.raises(TypeError, match=r"READ_ONLY.*\(tensor is read-only\)"):
        dl.consume(a, writable=True)


@pytest.mark.matrix("NumPy", "import", "__dlpack__")
def test_import_numpy_writes_through(np):
    a = np.zeros((2, 3))
    new = np.arange(6.0).tobytes()
    if MODERN:
        dl.consume(a, writable=True, write=new)
    else:  # a legacy capsule is read-only unless the caller vouches for the producer
        with pytest.raises(TypeError, match="READ_ONLY"):
            dl.consume(a, writable=True, write=new)
        dl.consume(a, writable=True, legacy_writable=True, write=new)
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_from_dlpack_copy_true_always_copies(np):
    """dlpm_py_tensor_import (from_dlpack) with copy=True copies host memory itself, as the
    array API asks ("must always copy"), where the producer cannot: NumPy 1.x predates
    DLPack 1.0, and a producer may ignore copy=True. (dlpm_py_import, which asks the
    producer, still refuses those: the test above.)"""

    class IgnoresCopy:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kwargs):
            kwargs.pop("copy", None)
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.arange(6, dtype=np.int32)
    for producer in (a, IgnoresCopy(a)):
        r = dl.consume(dl.tensor_import(producer, copy=True))
        assert r["data_ptr"] != a.ctypes.data and r["bytes"] == a.tobytes()
        r = dl.consume(dl.tensor_import(producer, copy=True, device=(1, 0)))
        assert r["data_ptr"] != a.ctypes.data and r["bytes"] == a.tobytes()
        with pytest.raises(BufferError):  # (kDLCPU, 1) names no device: refused, not copied to (1, 0)
            dl.tensor_import(producer, copy=True, device=(1, 1))


@pytest.mark.matrix("NumPy", "import", "__dlpack__")
def test_import_numpy_copy_and_device_options(np):
    a = np.arange(6, dtype=np.int32)
    if not MODERN:
        with pytest.raises(BufferError, match="predates DLPack 1.0"):
            dl.consume(a, copy=True)
        return
    r = dl.consume(a, copy=True)
    assert r["copied"] is True and r["data_ptr"] != a.ctypes.data and r["bytes"] == a.tobytes()
    assert dl.consume(a, copy=False)["data_ptr"] == a.ctypes.data
    assert dl.consume(a, dl_device=(1, 0))["device"] == (1, 0)
    with pytest.raises(BufferError):  # NumPy cannot move to CUDA
        dl.consume(a, dl_device=(2, 0))
    assert dl.consume(a, stream=-1)["shape"] == (6,)  # a stream is never passed for CPU tensors


def test_requirement_mismatches_are_type_errors(np):
    a = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(TypeError, match=r"dtype float32 does not match the required float64"):
        dl.consume(a, dtype=DTYPES["float64"])
    with pytest.raises(TypeError, match=r"ndim = 2 but the target has rank 3 \(ndim mismatch\)"):
        dl.consume(a, ndim=3)
    with pytest.raises(TypeError, match=r"shape\[1\] = 3 but 4 is required"):
        dl.consume(a, ndim=2, shape=(-1, 4))
    with pytest.raises(TypeError, match="not F-contiguous"):
        dl.consume(a, order="F")
    assert dl.consume(a, dtype=DTYPES["float32"], ndim=2, shape=(-1, 3), order="C")["shape"] == (2, 3)
    assert dl.consume(a.T, order="F")["shape"] == (3, 2)


def test_not_a_tensor_is_a_type_error():
    with pytest.raises(TypeError, match=r"expected a DLPack tensor .* got an object of <class 'list'>"):
        dl.consume([1.0, 2.0])


def test_producer_errors_propagate():
    class Raises:
        def __dlpack__(self, **kwargs):
            raise BufferError("cannot export this one")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(BufferError, match="cannot export this one"):
        dl.consume(Raises())

    class ReturnsJunk:
        def __dlpack__(self, **kwargs):
            return 42

    with pytest.raises(TypeError, match=r"__dlpack__ returned an object of <class 'int'>, not a PyCapsule"):
        dl.consume(ReturnsJunk())


def test_dlpack_is_the_method_python_would_call(np):
    """The component keeps a type's __dlpack__ between imports (while the type's version tag
    says it is unchanged) and calls it with the object first: replacing or deleting it, in
    the class or in a base, changes what the next import calls; a staticmethod is called
    without the object; an instance attribute hides the method where instances have a
    __dict__."""
    a, b = np.arange(6, dtype=np.float32), np.arange(4, dtype=np.float32)

    class Base:
        __slots__ = ()  # no instance __dict__: the kept method is called

        def __dlpack__(self, **kwargs):
            return a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return (1, 0)

    class Producer(Base):
        __slots__ = ()

    p = Producer()
    for _ in range(3):
        assert dl.consume(p)["shape"] == (6,)
    Base.__dlpack__ = lambda self, **kwargs: b.__dlpack__(**kwargs)
    assert dl.consume(p)["shape"] == (4,)
    Producer.__dlpack__ = lambda self, **kwargs: a[:2].__dlpack__(**kwargs)
    assert dl.consume(p)["shape"] == (2,)
    Producer.__dlpack__ = staticmethod(lambda **kwargs: a[:3].__dlpack__(**kwargs))
    assert dl.consume(p)["shape"] == (3,)
    del Producer.__dlpack__
    assert dl.consume(p)["shape"] == (4,)
    del Base.__dlpack__
    with pytest.raises(TypeError, match="expected a DLPack tensor"):
        dl.consume(p)

    class WithDict:
        def __dlpack__(self, **kwargs):
            return a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return (1, 0)

    w = WithDict()
    assert dl.consume(w)["shape"] == (6,)
    w.__dlpack__ = lambda **kwargs: b.__dlpack__(**kwargs)
    assert dl.consume(w)["shape"] == (4,)


def test_options_on_our_own_tensor(np):
    """dlpm_py_import of this copy's Tensor takes the Tensor's own path with options that ask
    what the defaults ask, however semantic_bits_option words a refusal (the Rust crate's
    ManagedTensor argument), and the general path with any other: each honoured."""
    t = dl.tensor((2, 3), DTYPES["float32"])
    dl.fill(t, np.arange(6, dtype=np.float32).tobytes())
    usual = dl.consume(t, options=False)
    assert usual["copied"] is False and usual["shape"] == (2, 3)
    assert dl.consume(t) == usual
    assert dl.consume(t, semantic_bits_option="") == usual
    copied = dl.consume(t, copy=True)
    assert copied["copied"] is True and copied["bytes"] == usual["bytes"]
    with pytest.raises(TypeError, match="does not match the required float64"):
        dl.consume(t, dtype=DTYPES["float64"])
    assert dl.consume(t, dtype=DTYPES["float64"], validate=False)["shape"] == (2, 3)


# ---- capsules: dlpm_py_capsule_new and bare capsules ---------------------------------------


@pytest.mark.matrix(OURS, "import", "capsule")
def test_bare_capsules_are_taken_once(np):
    t = dl.tensor((2, 2), DTYPES["int32"])
    dl.fill(t, np.arange(4, dtype=np.int32).tobytes())
    for versioned in (True, False):
        cap = dl.capsule(t, versioned)
        assert ("dltensor_versioned" if versioned else '"dltensor"') in repr(cap)
        assert dl.consume(cap)["shape"] == (2, 2)
        assert "used_dltensor" in repr(cap)
        with pytest.raises(BufferError, match="already consumed"):
            dl.consume(cap)


@pytest.mark.matrix(OURS, "export", "capsule")
def test_read_only_tensor_cannot_go_legacy(collect):
    t = dl.tensor((3,), readonly=True)
    before = dl.released()
    with pytest.raises(BufferError, match="legacy DLManagedTensor cannot carry"):
        dl.capsule(t, False)  # the tensor made for the capsule is deleted on this path
    collect()
    assert dl.released() == before + 1
    assert "dltensor_versioned" in repr(dl.capsule(t, True))


def test_capsule_destructor_releases_only_unconsumed(np, collect):
    t = dl.tensor((2,))
    before = dl.released()
    unconsumed = dl.capsule(t, True)
    legacy = dl.capsule(t, False)
    consumed = dl.capsule(t, True)
    dl.consume(consumed)  # released by the consumer, before consume returns
    assert dl.released() == before + 1
    del unconsumed, legacy, consumed
    collect()
    assert dl.released() == before + 3


# ---- export: dlpack_mdspan.Tensor to the frameworks ---------------------------------------


def test_tensor_attributes():
    t = dl.tensor((2, 3), DTYPES["float64"], order="F")
    assert t.shape == (2, 3) and t.strides == (1, 2)
    assert t.dtype == (2, 64, 1) and t.device == (1, 0) and t.__dlpack_device__() == (1, 0)
    assert t.readonly is False and dl.tensor((1,), readonly=True).readonly is True
    assert repr(t) == "dlpack_mdspan.Tensor(shape=(2, 3), dtype=float64, device=(1, 0))"
    assert dl.exchange_api(t) == (1, 3)
    with pytest.raises(TypeError, match="made by C and C"):
        type(t)()


def test_dlpack_keywords(np):
    t = dl.tensor((2, 3))
    assert '"dltensor"' in repr(t.__dlpack__())
    assert '"dltensor"' in repr(t.__dlpack__(max_version=(0, 8)))
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 0)))
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False, stream=None))
    # a copy to CUDA memory goes through the CUDA driver (cuda_stub/ tests it): none here
    with pytest.raises(BufferError, match=r"CUDA driver"):
        t.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    # and to ROCm memory through the HIP runtime (hip_stub/ tests it): none here either (no
    # library, or one that finds no device)
    with pytest.raises(BufferError, match=r"HIP runtime"):
        t.__dlpack__(max_version=(1, 0), dl_device=(10, 0))
    with pytest.raises(BufferError, match=r"cannot copy this tensor from device \(1, 0\) to \(7, 0\)"):
        t.__dlpack__(max_version=(1, 0), dl_device=(7, 0))
    # NumPy's exception types, where NumPy's own test_dlpack.py asserts them.
    with pytest.raises(RuntimeError, match="stream must be None for CPU tensors"):
        t.__dlpack__(stream=1)
    with pytest.raises(ValueError, match="copy must be None or a boolean"):
        t.__dlpack__(copy=np.array([1, 2, 3]))
    # A string is no boolean ("False" is true): refused, as NumPy refuses it, not a copy.
    for word in ("False", "no", b"0"):
        with pytest.raises(ValueError, match="__dlpack__: copy must be None or a boolean, not <class '(str|bytes)'>"):
            t.__dlpack__(max_version=(1, 0), copy=word)
    # NumPy's booleans are accepted, and honoured.
    assert dl.consume(t.__dlpack__(max_version=(1, 0), copy=np.True_))["copied"] is True
    assert dl.consume(t.__dlpack__(max_version=(1, 0), copy=np.False_))["copied"] is False
    with pytest.raises(TypeError, match="keyword arguments only"):
        t.__dlpack__(None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'color'"):
        t.__dlpack__(color=1)


def reference(np, name, shape):
    n = int(np.prod(shape)) if shape else 1
    if name == "bool":
        return (np.arange(n) % 2 == 1).reshape(shape)
    if name == "complex64":
        return (np.arange(n) + 1j * np.arange(n)).astype(np.complex64).reshape(shape)
    return (np.arange(n) - (n // 2 if name[0] in "if" else 0)).astype(name).reshape(shape)


EXPORT_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64", "complex64"]
EXPORT_SHAPES = {"2x3": (2, 3), "0-d": (), "size-0": (0, 3), "size-1": (1, 4, 1)}


@pytest.mark.matrix("NumPy", "export", "__dlpack__")
@pytest.mark.parametrize("shape", EXPORT_SHAPES, ids=list(EXPORT_SHAPES))
@pytest.mark.parametrize("name", EXPORT_DTYPES)
def test_export_to_numpy(np, name, shape):
    shape = EXPORT_SHAPES[shape]
    if name == "bool" and not MODERN:
        pytest.skip("NumPy 1.24 does not import bool through DLPack")
    ref = reference(np, name, shape)
    t = dl.tensor(shape, DTYPES[name])
    dl.fill(t, ref.tobytes())
    a = np.from_dlpack(t)
    assert a.dtype == ref.dtype and a.shape == shape and a.tobytes() == ref.tobytes()
    if ref.size:  # zero copy: a write on our side is seen by NumPy
        changed = np.flip(ref.reshape(-1)).reshape(shape)
        dl.fill(t, np.ascontiguousarray(changed).tobytes())
        assert a.tobytes() == np.ascontiguousarray(changed).tobytes()


@pytest.mark.matrix("NumPy", "export", "__dlpack__")
def test_export_column_major_and_read_only(np):
    t = dl.tensor((2, 3), DTYPES["float32"], order="F")
    dl.fill(t, np.arange(6, dtype=np.float32).tobytes())
    a = np.from_dlpack(t)
    assert a.strides == (4, 8) and a.tolist() == [[0, 1, 2], [3, 4, 5]]
    ro = dl.tensor((3,), readonly=True)
    if MODERN:
        assert not np.from_dlpack(ro).flags.writeable
    else:  # NumPy 1.24 asks for a legacy capsule, which cannot say read-only
        with pytest.raises(BufferError, match="cannot carry"):
            np.from_dlpack(ro)


@pytest.mark.matrix("NumPy", "export", "__dlpack__")
def test_export_copy(np):
    if not MODERN:
        pytest.skip("NumPy 1.24's from_dlpack has no copy keyword")
    t = dl.tensor((2, 3), DTYPES["int64"], order="F")
    dl.fill(t, np.arange(6, dtype=np.int64).tobytes())
    c = np.from_dlpack(t, copy=True)
    dl.fill(t, np.zeros(6, dtype=np.int64).tobytes())
    assert c.tolist() == [[0, 1, 2], [3, 4, 5]]  # a private, row-major copy


def test_cpp_memory_lives_until_the_last_consumer(np, collect):
    t = dl.cpp_tensor((4,), "int64")
    dl.fill(t, np.array([0, 0, 0, 11], dtype=np.int64).tobytes())
    before = dl.released()
    a = np.from_dlpack(t)
    b = np.from_dlpack(t)  # __dlpack__ twice: each capsule holds its own reference
    del t
    collect()
    assert a[3] == 11 and b[3] == 11 and dl.released() == before
    del a
    collect()
    assert dl.released() == before
    del b
    collect()
    assert dl.released() == before + 1


@pytest.mark.matrix(OURS, "import", "exchange API")
def test_own_type_through_its_exchange_api(np):
    t = dl.tensor((2, 3), DTYPES["float32"])
    dl.fill(t, np.arange(6, dtype=np.float32).tobytes())
    owned = dl.consume(t)
    borrowed = dl.consume(t, borrow=True)
    assert owned["borrowed"] is False and borrowed["borrowed"] is True
    assert owned["bytes"] == borrowed["bytes"] == np.arange(6, dtype=np.float32).tobytes()
    assert owned["data_ptr"] == borrowed["data_ptr"]
    # A writer takes the owning path even when borrowing (a borrowed DLTensor has no flags),
    # unless it asks for the lent form: test_writer_borrow_lent_only_a_writable_tensors_form.
    assert dl.consume(t, borrow=True, writable=True)["borrowed"] is False
    ro = dl.tensor((2,), readonly=True)
    with pytest.raises(TypeError, match="READ_ONLY"):
        dl.consume(ro, borrow=True, writable=True)
    assert dl.consume(ro)["read_only"] is True


def test_own_type_exports_share_the_views_arrays_and_keep_them():
    """A Tensor's zero-copy export (its table's, as __dlpack__'s) is described by the view's own
    shape and strides arrays (dlpm_managed_new_checked from the Tensor's checked form), so an
    import of it trusts them by address; the export keeps the Tensor, and so the arrays, alive.
    An empty Tensor's export has arrays of its own (row-major strides, as dlpm_managed_new makes
    them)."""
    for order, strides in (("C", (4, 1)), ("F", (1, 3))):
        t = dl.tensor((3, 4), DTYPES["float32"], order=order)
        r = dl.table_export(t)
        assert r["shares"] and r["shape"] == (3, 4) and r["strides"] == strides, (order, r)
        capsule = r["capsule"]
        del t, r
        gc.collect()
        got = dl.borrow_checked(capsule)  # the export alone keeps the arrays it describes
        assert got["status"] == 0 and got["strides"] == strides, got
    empty = dl.table_export(dl.tensor((0, 3), DTYPES["float32"], order="F"))
    assert not empty["shares"] and empty["strides"] == (3, 1)


@pytest.mark.parametrize("make", ["tensor C", "tensor F", "tensor 0-d", "tensor reexported transposed",
                                  "numpy", "numpy transposed", "numpy reversed"])
def test_borrow_hands_back_the_checked_form(np, make):
    """dlpm_py_options.checked (version 3): a validating borrow hands back the checked form of
    the tensor it lends, equal to dlpm_check_tensor's of it (strides resolved), for our Tensor
    (its own, kept since it was made) and for another producer (the borrow's own check); also
    through the owning path a writer takes."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    obj, strides = {
        "tensor C": (lambda: dl.tensor((3, 4), DTYPES["float32"]), (4, 1)),
        "tensor F": (lambda: dl.tensor((3, 4), DTYPES["float32"], order="F"), (1, 3)),
        "tensor 0-d": (lambda: dl.tensor((), DTYPES["float32"]), ()),
        "tensor reexported transposed": (lambda: dl.reexport(a.T), (1, 4)),
        "numpy": (lambda: a, (4, 1)),
        "numpy transposed": (lambda: a.T, (1, 4)),
        "numpy reversed": (lambda: a[::-1], (-4, 1)),
    }[make]
    obj = obj()
    for writable, lend in ((False, False), (True, False), (False, True), (True, True)):
        r = dl.borrow_checked(obj, writable=writable, lend=lend)
        if writable and r["status"] != 0 and (make.startswith("numpy") or "reexported" in make):
            # an older NumPy's legacy capsule (and its re-export) is READ_ONLY to a writer
            assert not r["described"] and np.lib.NumpyVersion(np.__version__) < "1.25.0", r
            continue
        # dlpm_py_options.lent (version 4): a borrow of a Tensor lends the form it kept instead
        # of copying it, for a writer too (the Tensor is writable); another producer copies it
        lent = lend and make.startswith("tensor")
        assert r["status"] == 0 and r["lent"] == lent and r["described"] != lent and r["matches"], (writable, r)
        assert r["borrowed"] == (lent or (not writable and make.startswith("tensor"))), (writable, lend, r)
        assert r["lent_untouched"] != lend  # written when asked: the form, or NULL
        assert r["strides"] == strides
        assert r["import_refuses"] != 0  # dlpm_py_import refuses the fields: they are the borrow's


def test_an_unvalidated_writers_borrow_knows_the_flags():
    """A writer's borrow that leaves validation to the caller (validate = 0, the other options
    the defaults: the Rust crate's PyTensorMut of a producer that keeps no checked form) takes
    the owning path, whose flags say READ_ONLY for the caller's check to refuse; a reader is
    lent the view (a borrowed DLTensor has no flags). A Tensor, whose exchange table lends
    views, is where the two differ."""
    t = dl.tensor((2, 3), readonly=True)
    r = dl.consume(t, borrow=True, writable=True, validate=False)
    assert r["read_only"] and not r["borrowed"]
    assert dl.consume(t, borrow=True, validate=False)["borrowed"]


def test_writer_borrow_lent_only_a_writable_tensors_form(np):
    """A writer that asks for the lent form (dlpm_py_options.lent) of a writable Tensor of this
    copy takes the borrowed path (no owner; the form's flags are known, and its export would
    carry none), and writes reach the Tensor's memory; a READ_ONLY Tensor still takes the owning
    path, whose refusal names the flag; without `lent` a writer takes the owning path."""
    t = dl.tensor((2, 3), DTYPES["float32"])
    r = dl.borrow_checked(t, writable=True, lend=True)
    assert r["status"] == 0 and r["lent"] and r["borrowed"] and r["flags"] == 0 and r["matches"], r
    r = dl.borrow_checked(t, writable=True)
    assert r["status"] == 0 and not r["lent"] and not r["borrowed"] and r["described"], r
    for readonly in (dl.tensor((2,), readonly=True), dl.reexport(dl.tensor((2,), readonly=True))):
        r = dl.borrow_checked(readonly, writable=True, lend=True)
        assert r["status"] != 0 and not r["lent"] and not r["described"], r
        assert "READ_ONLY" in r["error"], r
        r = dl.borrow_checked(readonly, lend=True)  # a reader is lent it
        assert r["status"] == 0 and r["lent"], r
    # the borrowed writer writes into the Tensor itself
    w = dl.tensor((3,), DTYPES["float32"])
    dl.fill(w, np.arange(3, dtype=np.float32).tobytes())
    r = dl.borrow_checked(w, writable=True, lend=True, write=np.array([0, 7.5, 2], dtype=np.float32).tobytes())
    assert r["status"] == 0 and r["borrowed"], r
    assert np.from_dlpack(w).tolist() == [0.0, 7.5, 2.0]


def test_borrow_checked_form_versions(np):
    """`checked` is version 3's and `lent` version 4's: an options struct of an earlier version
    neither reads nor writes them (version 3 copies the form a version-4 borrow lends);
    without validation none is handed back; a checked form of another version is a
    ValueError."""
    t = dl.tensor((2, 3), DTYPES["float32"])
    for version in (1, 2):
        r = dl.borrow_checked(t, options_version=version, lend=True)
        assert r["status"] == 0 and r["untouched"] and not r["described"] and r["import_refuses"] == 0
        assert r["lent_untouched"] and not r["lent"]
    r = dl.borrow_checked(t, options_version=3, lend=True)  # the import, given .lent alone, ignores it
    assert r["status"] == 0 and r["described"] and r["matches"] and r["lent_untouched"] and r["import_refuses"] == 0
    r = dl.borrow_checked(t, validate=False, lend=True)  # lends nothing (*lent NULL, or left as it was)
    assert r["status"] == 0 and not r["described"] and not r["lent"]
    assert r["strides"] is None
    r = dl.borrow_checked(np.arange(3.0), validate=False)
    assert r["status"] == 0 and not r["described"]
    r = dl.borrow_checked(t, checked_version=2)
    assert r["status"] != 0 and r["untouched"]
    # a refused tensor hands nothing back
    r = dl.borrow_checked(dl.tensor((2,), readonly=True), writable=True)
    assert r["status"] != 0 and not r["described"]


def capsule_name(capsule):
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return get_name(capsule).decode()


class Producer:
    """Hands out t's capsules through __dlpack__ alone (no exchange API on this type). keep:
    holds on to each capsule; context: sets one on it, as a producer may."""

    def __init__(self, t, keep=False, context=False):
        self.t, self.keep, self.context, self.capsule_id = t, keep, context, None

    def __dlpack__(self, **kwargs):
        c = self.t.__dlpack__(**kwargs)
        self.capsule_id = id(c)
        if self.keep:
            self.kept = c
        if self.context:
            set_context = ctypes.pythonapi.PyCapsule_SetContext
            set_context.restype, set_context.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_void_p]
            assert set_context(c, 1) == 0
        return c

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_borrow_kept_hands_the_tensor_to_an_owner_object(collect):
    before = dl.released()
    t = dl.tensor((4,))
    data = dl.consume(t)["data_ptr"]
    p = Producer(t)
    del t
    keep, address, name = dl.borrow_kept(p)
    # Through __dlpack__ the producer's own capsule, its tensor taken, is the owner: no allocation.
    assert (id(keep), address, name) == (p.capsule_id, data, "dlpack_mdspan.owner")
    del p
    collect()
    assert dl.released() == before  # the owner keeps the tensor, and so the buffer, alive
    del keep
    collect()
    assert dl.released() == before + 1


@pytest.mark.parametrize("how", ["held by the producer", "with a context", "bare capsule", "exchange API, writable"])
def test_borrow_kept_makes_a_new_owner_when_the_capsule_is_not_only_ours(how, collect):
    before = dl.released()
    t = dl.tensor((4,))
    p = {"held by the producer": lambda: Producer(t, keep=True), "with a context": lambda: Producer(t, context=True),
         "bare capsule": lambda: t.__dlpack__(max_version=(1, 3)), "exchange API, writable": lambda: t}[how]()
    keep, _, name = dl.borrow_kept(p, how.endswith("writable"))
    assert name == "dlpack_mdspan.owner"
    if how == "with a context":  # the producer's capsule (its context set) is not the owner
        get_context = ctypes.pythonapi.PyCapsule_GetContext
        get_context.restype, get_context.argtypes = ctypes.c_void_p, [ctypes.py_object]
        assert get_context(keep) != 1  # the producer's context; an owner's is its tensor
    else:  # (there the dropped capsule's address may be reused by the new owner)
        assert id(keep) != getattr(p, "capsule_id", id(p))
    if how == "held by the producer":
        assert capsule_name(p.kept) == "used_dltensor_versioned"
    if how == "bare capsule":
        assert capsule_name(p) == "used_dltensor_versioned"
        with pytest.raises(BufferError, match="already consumed"):
            dl.consume(p)
    del t, p
    collect()
    assert dl.released() == before
    del keep
    collect()
    assert dl.released() == before + 1


def test_capsule_peek_leaves_the_capsule_as_it_was(np):
    t = dl.tensor((2, 3), readonly=True)
    capsule = t.__dlpack__(max_version=(1, 3))
    assert dl.capsule_peek(capsule) == (2, 1, "dltensor_versioned")  # flags: READ_ONLY
    assert dl.capsule_peek(capsule) == (2, 1, "dltensor_versioned")  # still there
    assert dl.consume(capsule)["read_only"] is True
    assert dl.capsule_peek(capsule) is None  # used
    legacy = dl.tensor((2,)).__dlpack__()  # no max_version: a legacy capsule
    assert dl.capsule_peek(legacy) == (1, 1, "dltensor")  # read-only, as the import makes it
    assert dl.capsule_peek(legacy, True) == (1, 0, "dltensor")  # unless the options say writable
    for other in (t, np.zeros(2), object()):
        assert dl.capsule_peek(other) is None


def test_borrow_end_drops_a_keep_alive_left_in_the_borrow(collect):
    """dlpm_py_borrow_end lets go of out->keep_alive when the caller did not take it."""
    collect()  # earlier tests' tensors gone first: the count below is this test's alone
    before = dl.released()
    t = dl.tensor((4,))
    p = Producer(t)
    del t
    keep, _, name = dl.borrow_kept(p, False, True)
    assert (keep, name) == (None, None)
    del p
    collect()
    assert dl.released() == before + 1


def test_borrow_kept_through_the_exchange_api_keeps_nothing():
    t = dl.tensor((4,))
    keep, address, name = dl.borrow_kept(t)
    assert (keep, name) == (None, None) and address == dl.consume(t)["data_ptr"]


@pytest.mark.matrix(OURS, "export", "exchange API")
def test_own_allocator_and_to_py_object(np):
    t = dl.tensor((2,))
    x = dl.allocate_via(t, (3, 4), DTYPES["float64"])
    assert x.shape == (3, 4) and x.strides == (4, 1) and x.dtype == (2, 64, 1)
    y = dl.to_py_via(t, t)
    assert y.shape == (2,) and dl.consume(y)["data_ptr"] == dl.consume(t)["data_ptr"]
    with pytest.raises(RuntimeError, match=r"BufferError: managed_tensor_allocator: .*host \(kDLCPU\) memory only"):
        dl.allocate_via(t, (2,), (2, 32, 1), (2, 0))  # reported through SetError
    with pytest.raises(RuntimeError, match="ValueError: .*negative"):
        dl.allocate_via(t, (2, -1), (2, 32, 1))


# ---- PyTorch 1.13 (legacy) -----------------------------------------------------------------


@pytest.mark.matrix("PyTorch", "import", "__dlpack__")
def test_import_torch_legacy(torch):
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    for x in (t, t.t(), t[::2, 1::2], t[:, 1:2], t[:0], torch.tensor(2.5), torch.arange(4, dtype=torch.int8),
              torch.arange(4, dtype=torch.uint8), torch.arange(4, dtype=torch.int64), torch.zeros(3, dtype=torch.float16),
              torch.tensor([1 + 2j], dtype=torch.complex64), torch.zeros(2, dtype=torch.bfloat16)):
        r = dl.consume(x)
        assert r["shape"] == tuple(x.shape) and r["read_only"] is True
        assert r["bytes"] == x.contiguous().numpy().tobytes() if x.dtype != torch.bfloat16 else len(r["bytes"]) == 4
        if x.numel():
            assert r["data_ptr"] == x.data_ptr()
    dl.consume(t, writable=True, legacy_writable=True, write=torch.full((3, 4), -3.0).numpy().tobytes())
    assert float(t[2, 3]) == -3.0
    with pytest.raises(TypeError, match="dtype"):
        dl.consume(t, dtype=(0, 32, 1))
    with pytest.raises(RuntimeError, match="Bool"):  # PyTorch 1.13 cannot export bool (pytorch#67081)
        dl.consume(torch.tensor([True, False]))


@pytest.mark.matrix("PyTorch", "import", "__dlpack__")
def test_torch_legacy_semantic_bits(np, torch):
    """PyTorch 1.13's __dlpack__ refuses the conjugate bit and requires_grad itself
    (RuntimeError), and exports a negated view's raw memory, which the component refuses
    unless asked to take it (dlpm_py_options.accept_semantic_bits)."""
    n = torch.tensor([1 + 2j], dtype=torch.complex64).conj().imag  # -2.0, its memory holds 2.0
    assert n.is_neg()
    with pytest.raises(BufferError, match=r"torch.Tensor refused: its negative bit is set .*\.resolve_neg\(\)"):
        dl.consume(n)
    assert dl.consume(n, accept_semantic_bits=True)["bytes"] == np.float32(2.0).tobytes()  # the raw memory
    assert dl.consume(n.resolve_neg())["bytes"] == np.float32(-2.0).tobytes()
    with pytest.raises(RuntimeError, match="conjugate bit"):
        dl.consume(torch.tensor([1 + 2j]).conj())
    with pytest.raises(RuntimeError, match="require gradient"):
        dl.consume(torch.ones(2, requires_grad=True))
    assert dl.options(np.arange(4.0), n, None) == {
        **OPTIONS, "bits_refused": 1, "bits_accepted": 1, "grad_writable_refused": -1,
        "grad_writable_unvalidated_refused": -1, "grad_req_writable_unvalidated_refused": -1, "grad_read_only": -1}


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
def test_export_to_torch_legacy(np, torch):
    from torch.utils.dlpack import from_dlpack

    t = dl.cpp_tensor((3,), "int32")
    x = from_dlpack(t)
    x[1] = 42
    assert np.frombuffer(dl.consume(t)["bytes"], np.int32).tolist() == [0, 42, 0]
    dl.fill(t, np.array([9, 9, 9], dtype=np.int32).tobytes())
    assert x.tolist() == [9, 9, 9]


# ---- JAX (modern) ----------------------------------------------------------------------------


@pytest.mark.matrix("JAX", "import", "__dlpack__")
def test_import_jax(jnp):
    import ml_dtypes
    import numpy

    cases = [jnp.arange(6, dtype=jnp.float32).reshape(2, 3), jnp.array([1.5, -2.0, 0.25], dtype=jnp.bfloat16),
             jnp.zeros((0, 3)), jnp.array(7, dtype=jnp.int32), jnp.array([True, False]), jnp.ones((1, 4, 1)),
             jnp.arange(4, dtype=jnp.int8), jnp.arange(4, dtype=jnp.uint8), jnp.arange(3, dtype=jnp.float16),
             jnp.array([1 + 2j], dtype=jnp.complex64)]
    for x in cases:
        r = dl.consume(x)
        assert r["shape"] == x.shape and r["bytes"] == numpy.asarray(x).tobytes()
    assert numpy.asarray(cases[1]).dtype == ml_dtypes.bfloat16
    assert dl.consume(cases[1], dtype=(BFLOAT, 16, 1))["dtype"] == (BFLOAT, 16, 1)
    with pytest.raises(TypeError, match="ndim"):
        dl.consume(cases[0], ndim=1)


@pytest.mark.matrix("JAX", "export", "__dlpack__")
def test_export_to_jax(np, jnp):
    for name in ("float32", "int32", "bool", "float16", "complex64"):
        ref = reference(np, name, (2, 3))
        t = dl.tensor((2, 3), DTYPES[name])
        dl.fill(t, ref.tobytes())
        x = jnp.from_dlpack(t)
        assert np.asarray(x).tobytes() == ref.tobytes()


def test_type_error_subclass_is_the_producers_answer():
    """Only a plain TypeError about keywords means "pre-1.0 producer, ask again without them"."""
    calls = []

    class Refusal(TypeError):
        pass

    class Refuses:
        def __dlpack__(self, **kwargs):
            calls.append(kwargs)
            raise Refusal("this dtype cannot be exported")

    with pytest.raises(Refusal, match="cannot be exported"):
        dl.consume(Refuses())
    assert len(calls) == 1

    class Legacy:  # a pre-1.0 producer: no keywords at all
        def __init__(self, inner):
            self.inner = inner

        def __dlpack__(self):
            calls.append("legacy")
            return self.inner.__dlpack__()

    calls.clear()
    t = dl.tensor((2,))
    assert dl.consume(Legacy(t))["shape"] == (2,) and calls == ["legacy"]


@pytest.mark.parametrize("how", ["chained", "integer"])
def test_exchange_table_lookup_walks_prev_api_and_reads_the_integer_form(how):
    # The table found is our Tensor's (major 1): called with another type, it refuses, which
    # proves that lookup found it (through prev_api, or the integer attribute). Its TypeError
    # arrives as the cause of a BufferError (test_exchange_entry_failures below).
    cls = type("Newer", (), {})
    dl.publish_on(cls, how)
    assert dl.exchange_api(cls()) == (1, 3)
    with pytest.raises(BufferError, match="managed_tensor_from_py_object_no_sync raised TypeError") as e:
        dl.consume(cls())
    assert type(e.value.__cause__) is TypeError
    assert "exchange API called with another type" in str(e.value.__cause__)


class ProducersOwnError(RuntimeError):
    pass


# What a producer's exchange-API import entry raises -> what the import raises.
ENTRY_FAILURES = [
    (RuntimeError("cannot export this\nbacktrace line"), BufferError),
    (TypeError("wrong kind of tensor"), BufferError),
    (ValueError("bad value"), BufferError),
    (MemoryError("no memory"), MemoryError),
    (BufferError("the producer's own BufferError"), BufferError),
    (ProducersOwnError("a class of the producer's own"), ProducersOwnError),
    (NotImplementedError("a RuntimeError subclass"), NotImplementedError),
    (KeyError("anything else"), KeyError),
]


@pytest.mark.parametrize("borrow", [False, True], ids=["owned", "borrowed"])
@pytest.mark.parametrize("exc, raised", ENTRY_FAILURES, ids=[type(e).__name__ for e, _ in ENTRY_FAILURES])
def test_exchange_entry_failures(exc, raised, borrow):
    """Exactly RuntimeError, TypeError and ValueError from an import entry of a type's table
    become BufferError naming the type and the entry, with the producer's exception as
    __cause__ (its message's first line in ours); everything else is raised as it is."""
    cls = type("Failing", (), {})
    dl.publish_raising(cls, exc)
    entry = "dltensor_from_py_object_no_sync" if borrow else "managed_tensor_from_py_object_no_sync"
    with pytest.raises(raised) as e:
        dl.consume(cls(), borrow=borrow)
    if raised is BufferError and type(exc) is not BufferError:
        assert type(e.value) is BufferError
        assert str(e.value) == (f"{__name__}.Failing's DLPack exchange API refused the tensor: {entry} raised "
                                f"{type(exc).__name__}: {str(exc).splitlines()[0]} (the producer failed)")
        assert e.value.__cause__ is exc and e.value.__suppress_context__
    else:
        assert e.value is exc and e.value.__cause__ is None


@pytest.mark.parametrize("protocol", ["refuses", "exports"])
def test_an_exchange_entry_failure_quotes_the_producers_own_dunder_dlpack(protocol):
    """Where the type's __dlpack__() also refuses the tensor, its words follow the entry's
    (PyTorch's table says less of a sparse tensor than its __dlpack__ does); where it exports
    after all, the export is let go unconsumed and the entry's words stand alone."""
    made = []

    def dunder_dlpack(self, **kw):
        if protocol == "refuses":
            raise BufferError("not a strided tensor\nmore lines")
        made.append(dl.device_tensor(1).__dlpack__())
        return made[-1]

    cls = type("Failing", (), {"__dlpack__": dunder_dlpack})
    dl.publish_raising(cls, RuntimeError("no storage"))
    with pytest.raises(BufferError) as e:
        dl.consume(cls())
    words = f"{__name__}.Failing's DLPack exchange API refused the tensor: managed_tensor_from_py_object_no_sync " \
            "raised RuntimeError: no storage"
    if protocol == "refuses":
        assert str(e.value) == f"{words}; its __dlpack__() refuses it too: not a strided tensor (the producer failed)"
    else:
        assert str(e.value) == f"{words} (the producer failed)" and len(made) == 1
        assert "used_" not in repr(made[0])  # never consumed: its destructor ran the deleter


def test_exchange_entry_failing_without_an_exception_is_a_buffer_error():
    cls = type("Silent", (), {})
    dl.publish_raising(cls, None)
    for borrow, entry in ((False, "managed_tensor_from_py_object_no_sync"), (True, "dltensor_from_py_object_no_sync")):
        with pytest.raises(BufferError, match=f"exchange API's {entry} failed without setting an exception"):
            dl.consume(cls(), borrow=borrow)


@pytest.mark.parametrize("how", ["unchained", "cycle"])
def test_exchange_table_of_another_major_without_an_older_one_is_none(how):
    """Also when its prev_api chain loops (2 -> 3 -> 2 ...): the walk is bounded (it once spun
    for ever with the GIL held)."""
    cls = type("OnlyNewer", (), {})
    dl.publish_on(cls, how)
    assert dl.exchange_api(cls()) is None
    with pytest.raises(TypeError, match="expected a DLPack tensor"):  # no table, no __dlpack__
        dl.consume(cls())


def test_every_refusal_releases_the_export_exactly_once(np, collect):
    # Each export holds a reference to the Tensor: one leaked export would keep it alive.
    t = dl.tensor((2, 3), DTYPES["float32"])
    before = dl.released()
    refusals = [dict(dtype=DTYPES["float64"]), dict(ndim=1), dict(ndim=2, shape=(2, 4)), dict(order="F"),
                dict(copy=True, ndim=3), dict(exchange=False, ndim=3), dict(borrow=True, order="F"),
                dict(borrow=True, writable=True, ndim=5), dict(dl_device=(2, 0))]
    for kwargs in refusals:
        with pytest.raises((TypeError, BufferError)):
            dl.consume(t, **kwargs)
    ro = dl.tensor((2,), readonly=True)
    with pytest.raises(TypeError, match="READ_ONLY"):
        dl.consume(ro, writable=True)
    with pytest.raises(BufferError, match="cannot carry"):
        ro.__dlpack__()
    del t, ro
    collect()
    assert dl.released() == before + 2


def test_producer_stream_wait_runs_for_devices_with_streams():
    KDLCUDA, KDLCUDAHOST, KDLROCM = 2, 3, 10
    dl.stream_waits()
    t = dl.device_tensor(KDLCUDA)
    t.__dlpack__(max_version=(1, 3), stream=5)
    t.__dlpack__(max_version=(1, 3))
    t.__dlpack__(max_version=(1, 3), stream=-1)
    assert dl.stream_waits() == [(KDLCUDA, 1, 5), (KDLCUDA, 0, 0), (KDLCUDA, 1, -1)]
    with pytest.raises(RuntimeError, match="stream 13 refused by the producer"):
        t.__dlpack__(max_version=(1, 3), stream=13)
    # the exchange API's export ("no sync") asks the wait to order the library's stream, which
    # current_work_stream names (cuda_stub/ tests it): the CUDA driver, absent here, is needed
    with pytest.raises(BufferError, match=r"needs the CUDA driver"):
        dl.consume(t)
    assert dl.stream_waits() == []
    dl.device_tensor(KDLCUDAHOST).__dlpack__(max_version=(1, 3), stream=7)  # pinned host memory: no stream
    dl.device_tensor(KDLROCM).__dlpack__(max_version=(1, 3), stream=0)
    assert dl.stream_waits() == [(KDLROCM, 1, 0)]


@pytest.mark.parametrize("device_type", [14, 8], ids=["oneAPI", "Metal"])
def test_a_table_naming_no_stream_on_a_device_without_our_runtime_orders_nothing(device_type):
    """Our Tensor's table answers current_work_stream with NULL on a device with streams that no
    runtime of ours serves (kDLOneAPI, kDLMetal): an import or borrow through it reports the
    order unknown, as __dlpack__ with no stream does (it once reported "ready on stream NULL")."""
    ORDER_STREAM, ORDER_UNKNOWN = 1, 2
    t = dl.hooked_tensor(device_type)
    assert dl.ready_stream(t) == (ORDER_UNKNOWN, None)
    assert dl.ready_stream(t, borrow=True) == (ORDER_UNKNOWN, None)
    assert dl.ready_stream(t, exchange=False) == (ORDER_UNKNOWN, None)
    assert dl.ready_stream(t, stream=5, exchange=False) == (ORDER_UNKNOWN, None)
    dl.stream_waits()



def describe(capsule):
    """(device, flags, values) of a capsule's float32 tensor, through the component's import."""
    r = dl.consume(capsule)
    return r["device"], (r["read_only"], r["copied"]), r["bytes"]


def test_copies_across_devices_without_hooks():
    """The array API's dl_device: memory the CPU can read reaches kDLCPU as it is (copy=None
    reuses it, copy=False too), and is copied by the component itself for copy=True; other
    memory needs the producer's copy hook, and copy=False forbids that copy with
    CopyForbiddenError, a BufferError (the array API's) and a ValueError (CuPy's)."""
    KDLCUDA, KDLCUDAHOST = 2, 3
    pinned = dl.device_tensor(KDLCUDAHOST)
    own = dl.consume(pinned.__dlpack__(max_version=(1, 3)))
    for copy in (None, False, True):
        r = dl.consume(pinned.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=copy))
        assert r["device"] == (1, 0) and r["copied"] == (copy is True) and not r["read_only"], copy
        assert r["bytes"] == own["bytes"] and (r["data_ptr"] == own["data_ptr"]) == (copy is not True), copy
    hooked = dl.hooked_tensor(KDLCUDA)
    for kind in (BufferError, ValueError):
        with pytest.raises(kind, match=r"dl_device=\(1, 0\) needs a copy of this tensor, which is on \(2, 0\), and copy=False"):
            hooked.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)
    # CUDA memory is copied through the CUDA driver, loaded then (cuda_stub/ tests it): with
    # none here, or no GPU, a BufferError naming it
    with pytest.raises(BufferError, match=r"CUDA driver"):
        dl.device_tensor(KDLCUDA).__dlpack__(max_version=(1, 3), dl_device=(1, 0))
    with pytest.raises(BufferError, match=r"CUDA driver"):
        dl.device_tensor(KDLCUDA).__dlpack__(max_version=(1, 3), copy=True)
    # ROCm memory through the HIP runtime (hip_stub/ tests it): none here, or no GPU
    with pytest.raises(BufferError, match=r"HIP runtime"):
        dl.device_tensor(10).__dlpack__(max_version=(1, 3), dl_device=(1, 0))
    with pytest.raises(BufferError, match=r"from device \(7, 0\) to \(1, 0\): only its producer's device runtime can"):
        dl.device_tensor(7).__dlpack__(max_version=(1, 3), dl_device=(1, 0))
    # a device no runtime of ours serves, in PyTorch's words (its test_dlpack.py asserts them)
    with pytest.raises(BufferError, match=r"^Unsupported device_type: 16: cannot copy this tensor from device \(3, 0\) to \(16, 0\)"):
        pinned.__dlpack__(max_version=(1, 3), dl_device=(16, 0))
    with pytest.raises(RuntimeError, match="stream must be None for CPU tensors"):  # the target's rule
        pinned.__dlpack__(max_version=(1, 3), dl_device=(1, 0), stream=5)


def test_device_hooks_wait_and_copy(collect):
    """dlpm_py_tensor_new_on_device: the wait hook gets the stream object as passed, the copy
    hook every copy the component cannot make (to a device; from device memory), with the
    stream for a device target and None for the host; release runs once per Tensor."""
    import array
    KDLCUDA = 2
    dl.stream_waits()
    released = dl.hooks_released()
    t = dl.hooked_tensor(KDLCUDA)
    t.__dlpack__(max_version=(1, 3), stream=5)
    t.__dlpack__(max_version=(1, 3), stream="queue object")  # objects reach the hook as they are
    device, (_, copied), data = describe(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))
    assert device == (1, 0) and copied and array.array("f", data).tolist() == [1.5, 2.5]
    device, (_, copied), _ = describe(t.__dlpack__(max_version=(1, 3), copy=True, stream=4))
    assert device == (KDLCUDA, 0) and copied
    assert dl.stream_waits() == [("wait", KDLCUDA, "int"), ("wait", KDLCUDA, "str"), ("copy", 1, 0, "NoneType"),
                                 ("copy", KDLCUDA, 0, "int")]
    with pytest.raises(RuntimeError, match="copy hook refused device 9"):
        t.__dlpack__(max_version=(1, 3), dl_device=(KDLCUDA, 9))
    # A hook that fails after making its output: the output is let go (its deleter may run
    # Python code) and the hook's own exception is the one raised, not a SystemError.
    with pytest.raises(RuntimeError, match="copy hook failed after its copy to device 8"):
        t.__dlpack__(max_version=(1, 3), dl_device=(KDLCUDA, 8))
    # A lent copy hook makes every copy, host copies of host-readable memory too (only the
    # producer can order them after its device work).
    h = dl.hooked_tensor(1)
    describe(h.__dlpack__(max_version=(1, 3), copy=True))
    describe(h.__dlpack__(max_version=(1, 3), dl_device=(KDLCUDA, 1), stream=3))
    assert dl.stream_waits() == [("copy", KDLCUDA, 9, "NoneType"), ("copy", KDLCUDA, 8, "NoneType"), ("copy", 1, 0, "NoneType"),
                                 ("copy", KDLCUDA, 1, "int")]
    del t, h
    collect()
    assert dl.hooks_released() == released + 2
    with pytest.raises(ValueError, match="dlpm_py_device_hooks version 2 is not supported"):
        dl.hooked_tensor(KDLCUDA, 2)
    assert dl.hooks_released() == released + 2  # an unknown layout is never read



def test_provenance_says_how_the_tensor_came(np):
    """dlpm_py_options.provenance (what dlpack_mdspan.inspect shows): the path, a legacy
    capsule, a pre-1.0 call, the producer's DLPack version; a borrow through the exchange API
    reports the table's version."""
    CAPSULE, EXCHANGE_API, DLPACK = 1, 2, 3
    t = dl.tensor((2,))
    assert dl.traced(t) == (EXCHANGE_API, 0, 0, (1, 3))
    assert dl.traced(t, 1, True) == (EXCHANGE_API, 0, 0, (1, 3))
    assert dl.traced(t.__dlpack__(max_version=(1, 0))) == (CAPSULE, 0, 0, (1, 3))
    assert dl.traced(t.__dlpack__(max_version=(1, 0)), 1, True) == (CAPSULE, 0, 0, (1, 3))
    assert dl.traced(t.__dlpack__()) == (CAPSULE, 1, 0, (0, 0))  # legacy: no version of its own

    class Old:  # a pre-1.0 producer: no keywords
        def __init__(self, inner):
            self.inner = inner

        def __dlpack__(self, stream=None):
            return self.inner.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    assert dl.traced(Old(t)) == (DLPACK, 1, 1, (0, 0))
    for borrow in (False, True):
        assert dl.traced(t, 1, borrow) == (EXCHANGE_API, 0, 0, (1, 3))  # a version-1 struct (0.2.0's) stays accepted
        for version in (0, 3):
            with pytest.raises(ValueError, match=rf"provenance has version {version}, not 1 to DLPM_PY_PROVENANCE_VERSION \(2\)"):
                dl.traced(t, version, borrow)
    # version 2: where the tensor is ready; CPU memory has no stream to order
    assert dl.ready_stream(t) == (0, None) and dl.ready_stream(t, borrow=True) == (0, None)
    assert dl.ready_stream(np.arange(3.0)) == (0, None)


OPTIONS = {
    "defaults": 1, "init_refuses_next": 1, "init_refuses_0": 1, "import_refuses_0": 1, "import_refuses_next": 1,
    "validated_refuses": 1, "unvalidated_accepts": 1, "imports_refuse_borrow_fields": 1, "import_refuses_null": 1}


def test_options(np):
    """dlpm_py_options, version 1: its defaults, other versions refused, `validate`, and
    keep_alive, checked and lent (a borrow's) refused by both imports, a NULL object or out refused with and without options. (Semantic bits and `writable` with PyTorch tensors:
    test_frameworks_torch.py, and with PyTorch 1.13 test_torch_legacy_semantic_bits below.)"""
    assert dl.options(np.arange(4.0), None, None) == {
        **OPTIONS, "bits_refused": -1, "bits_accepted": -1, "grad_writable_refused": -1,
        "grad_writable_unvalidated_refused": -1, "grad_req_writable_unvalidated_refused": -1, "grad_read_only": -1}
