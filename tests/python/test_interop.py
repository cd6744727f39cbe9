"""dlpm_interop against real NumPy, PyTorch and JAX: zero-copy export of C++ memory,
validated import of framework arrays, and exactly-once deleters."""
import os

import pytest

import dlpm_interop as dl

FLAVOUR = os.environ.get("DLPM_PYTHON_FLAVOUR", "modern")

F32 = (2, 32, 1)
F64 = (2, 64, 1)


def test_flavour_has_its_frameworks():
    import numpy

    major = int(numpy.__version__.split(".")[0])
    if FLAVOUR == "legacy":
        import torch  # noqa: F401

        assert major == 1, "legacy DLPack is tested with NumPy 1.x"
    else:
        import jax  # noqa: F401
        import ml_dtypes  # noqa: F401

        assert (major, int(numpy.__version__.split(".")[1])) >= (2, 1), "versioned DLPack needs NumPy >= 2.1"


# ---- producer: C++ memory exported through __dlpack__ -----------------------------------


def test_capsule_kind_follows_max_version():
    b = dl.Buffer((2, 3))
    assert "dltensor_versioned" in repr(b.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(b.__dlpack__())
    assert '"dltensor"' in repr(b.__dlpack__(max_version=(0, 8)))
    assert b.__dlpack_device__() == (1, 0)


def test_numpy_imports_zero_copy(np):
    b = dl.Buffer((2, 3), "float64")
    a = np.from_dlpack(b)
    assert a.shape == (2, 3) and a.dtype == np.float64
    assert a.__array_interface__["data"][0] == b.data_ptr
    b[4] = 7.5  # written in C, seen by NumPy
    assert a[1, 1] == 7.5
    if a.flags.writeable:
        a[0, 2] = -1.0  # written by NumPy, seen in C
        assert b[2] == -1.0


def test_torch_imports_zero_copy_and_writes_back(torch):
    from torch.utils.dlpack import from_dlpack

    b = dl.Buffer((3,), "int32")
    t = from_dlpack(b)
    assert t.data_ptr() == b.data_ptr
    t[1] = 42
    assert b[1] == 42
    b[2] = 9
    assert int(t[2]) == 9


def test_jax_imports_the_same_memory(jnp):
    b = dl.Buffer((2, 2), "float32")
    for i in range(4):
        b[i] = float(i)
    x = jnp.from_dlpack(b)
    assert x.shape == (2, 2)
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_export_keeps_the_buffer_alive(np, collect):
    b = dl.Buffer((4,), "int64")
    b[3] = 11
    a = np.from_dlpack(b)
    del b
    collect()
    assert a[3] == 11


def test_unconsumed_capsules_release_exactly_once(collect):
    b = dl.Buffer((2,))
    before = dl.released()
    cap = b.__dlpack__(max_version=(1, 0))
    legacy = b.__dlpack__()
    del cap, legacy
    collect()
    assert dl.released() == before + 2


def test_consumed_capsules_release_exactly_once(np, collect):
    b = dl.Buffer((2, 2))
    before = dl.released()
    a = np.from_dlpack(b)
    collect()
    assert dl.released() == before  # NumPy still holds it
    del a
    collect()
    assert dl.released() == before + 1
    r = dl.consume(b)  # our own consumer: deleter runs before consume returns
    assert r["shape"] == (2, 2)
    assert dl.released() == before + 2


def test_read_only_buffer(np):
    b = dl.Buffer((3,), readonly=True)
    r = dl.consume(b)
    assert r["read_only"] is True
    with pytest.raises(BufferError, match="READ_ONLY"):
        dl.consume(b, writable=True)
    with pytest.raises(BufferError, match="legacy DLManagedTensor cannot carry"):
        b.__dlpack__()  # a legacy capsule cannot say read-only, so it is refused
    if FLAVOUR == "modern":
        a = np.from_dlpack(b)
        assert not a.flags.writeable


def test_copy_true_gives_a_private_copy():
    b = dl.Buffer((2,), "float32")
    b[0] = 1.0
    r = dl.consume(type("Copying", (), {"__dlpack__": lambda self, **kw: b.__dlpack__(copy=True, **kw)})())
    assert r["copied"] is True and r["read_only"] is False
    assert r["values"] == [1.0, 0.0]


def test_refusals_are_buffer_errors():
    b = dl.Buffer((2,))
    with pytest.raises(BufferError, match="cannot export to device"):
        b.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    with pytest.raises(BufferError, match="stream must be None"):
        b.__dlpack__(stream=1)
    b.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)  # the CPU itself is fine


# ---- consumer: framework arrays imported through dlpm_check -------------------------------


def numpy_cases(np):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    cases = {
        "contiguous": base,
        "transposed": base.T,
        "sliced with steps": base[::2, 1::3],
        "size-1 dimensions": base[1:2, :, None],
        "zero-size": base[:0],
        "0-d": np.array(3.5, dtype=np.float64),
        "complex64": np.array([1 + 2j, 3 - 4j], dtype=np.complex64),
        "float64": base.astype(np.float64),
    }
    for name in ("int8", "int16", "int32", "int64", "uint8"):
        cases[name] = np.arange(5, dtype=name)
    if FLAVOUR == "modern":  # NumPy 1.x exports neither negative strides nor bool through DLPack
        cases["negative steps"] = base[::-1, ::-2]
        cases["bool"] = np.array([True, False, True])
    return cases


@pytest.mark.parametrize(
    "name",
    ["contiguous", "transposed", "sliced with steps", "size-1 dimensions", "zero-size", "0-d", "bool", "complex64",
     "float64", "int8", "int16", "int32", "int64", "uint8", "negative steps"],
)
def test_consume_numpy(np, name):
    cases = numpy_cases(np)
    if name not in cases:
        pytest.skip("NumPy 1.x does not export negative strides or bool through DLPack")
    a = cases[name]
    r = dl.consume(a)
    assert r["shape"] == a.shape
    assert r["values"] == a.flatten().tolist()  # row-major order, whatever the strides
    itemsize = a.itemsize
    if r["strides"] and None in r["strides"]:
        assert FLAVOUR == "legacy" and a.flags.c_contiguous  # NumPy 1.x sends NULL strides when compact
    elif r["strides"]:
        assert tuple(s * itemsize for s in r["strides"]) == a.strides or a.size == 0
    assert r["versioned"] is (FLAVOUR == "modern")


def test_legacy_frameworks_refuse_bool(np, torch):
    # Old producers cannot export bool (jax#4719, pytorch#67081): the refusal is theirs.
    with pytest.raises(BufferError):
        dl.consume(np.array([True, False]))
    with pytest.raises(RuntimeError, match="Bool"):
        dl.consume(torch.tensor([True, False]))


def test_consume_numpy_writes_through(np):
    a = np.zeros((2, 3), dtype=np.float64)
    if FLAVOUR == "modern":
        dl.consume(a, writable=True, write=5.0)
    else:  # a legacy capsule is read-only unless the caller vouches for it
        with pytest.raises(BufferError, match="READ_ONLY"):
            dl.consume(a, writable=True, write=5.0)
        dl.consume(a, writable=True, trust_legacy_writable=True, write=5.0)
    assert a[0, 0] == 5.0


def test_non_writeable_numpy_arrives_read_only(np):
    a = np.arange(4.0)
    a.flags.writeable = False
    if FLAVOUR == "legacy":
        with pytest.raises(BufferError):  # NumPy 1.24 refuses to export read-only arrays
            dl.consume(a)
        return
    r = dl.consume(a)
    assert r["read_only"] is True
    assert r["values"] == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(BufferError, match="READ_ONLY"):
        dl.consume(a, writable=True)


def test_mismatches_raise_with_the_facade_message(np):
    a = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(TypeError, match=r"dtype \(code 2, bits 32, lanes 1\) does not match the required \(code 2, bits 64"):
        dl.consume(a, dtype=F64)
    with pytest.raises(TypeError, match="ndim = 2 but the target has rank 3"):
        dl.consume(a, ndim=3)
    with pytest.raises(TypeError, match=r"shape\[1\] = 3 but 4 is required"):
        dl.consume(a, ndim=2, shape=(-1, 4))
    with pytest.raises(TypeError, match="not F-contiguous"):
        dl.consume(a, order="F")
    assert dl.consume(a, dtype=F32, ndim=2, shape=(-1, 3), order="C")["shape"] == (2, 3)
    assert dl.consume(a.T, order="F")["shape"] == (3, 2)


def test_consume_torch(torch):
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    for x in (t, t.t(), t[::2, 1::2], t[:, 1:2], t[:0], torch.tensor(2.5),
              torch.arange(4, dtype=torch.int8), torch.arange(4, dtype=torch.uint8), torch.arange(4, dtype=torch.int64)):
        r = dl.consume(x)
        assert r["shape"] == tuple(x.shape)
        assert r["values"] == x.flatten().tolist()
        assert r["versioned"] is False
    # PyTorch 1.13 rewrites size-1 strides; an F-order request still sees the real layout.
    col = torch.zeros(4, 1)
    assert dl.consume(col, order="C")["shape"] == (4, 1)
    assert dl.consume(col, order="F")["shape"] == (4, 1)
    dl.consume(t, writable=True, trust_legacy_writable=True, write=-3.0)
    assert float(t[0, 0]) == -3.0
    with pytest.raises(TypeError, match="dtype"):
        dl.consume(t, dtype=(0, 32, 1))


def test_consume_jax(jnp):
    import ml_dtypes
    import numpy

    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    r = dl.consume(x)
    assert r["shape"] == (2, 3) and r["values"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    bf = jnp.array([1.5, -2.0, 0.25], dtype=jnp.bfloat16)
    r = dl.consume(bf, dtype=(4, 16, 1))  # kDLBfloat
    assert r["values"] == [1.5, -2.0, 0.25]
    assert numpy.asarray(bf).dtype == ml_dtypes.bfloat16
    for y in (jnp.zeros((0, 3)), jnp.array(7, dtype=jnp.int32), jnp.array([True, False]), jnp.ones((1, 4, 1))):
        r = dl.consume(y)
        assert r["values"] == numpy.asarray(y).flatten().tolist()
    with pytest.raises(TypeError, match="ndim"):
        dl.consume(x, ndim=1)
