# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TensorFlow 2.21 (tensorflow-cpu, the frameworks venv) against the shipped Python component.

TensorFlow speaks legacy DLPack only: EagerTensor.__dlpack__ returns a "dltensor" capsule even
when asked for max_version=(1, 3), tf.experimental.dlpack.to_dlpack gives the same, and
tf.experimental.dlpack.from_dlpack takes a "dltensor" capsule only (not an object with
__dlpack__). A legacy tensor arrives READ_ONLY unless the consumer trusts it (legacy_writable):
TensorFlow's tensors are immutable, so the default protects them.

Run by CTest with the frameworks flavour only.
"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # before TensorFlow loads: no start-up chatter

import numpy as np  # noqa: E402 - TensorFlow's own dependency: its tensors read back as NumPy arrays
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

import dlpm_interop as dl  # noqa: E402

INT, UINT, FLOAT, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 4, 5, 6

TF_DL = {
    tf.bool: (BOOL, 8, 1), tf.int8: (INT, 8, 1), tf.int16: (INT, 16, 1), tf.int32: (INT, 32, 1),
    tf.int64: (INT, 64, 1), tf.uint8: (UINT, 8, 1), tf.uint16: (UINT, 16, 1), tf.uint32: (UINT, 32, 1),
    tf.uint64: (UINT, 64, 1), tf.float16: (FLOAT, 16, 1), tf.float32: (FLOAT, 32, 1), tf.float64: (FLOAT, 64, 1),
    tf.bfloat16: (BFLOAT, 16, 1), tf.complex64: (COMPLEX, 64, 1), tf.complex128: (COMPLEX, 128, 1),
}
DTYPES = {d.name: d for d in TF_DL}


def tf_bytes(x):
    return x.numpy().tobytes()


def import_cases():
    cases = {
        "contiguous": tf.reshape(tf.range(24, dtype=tf.float32), (4, 6)),
        "transposed (TF copies)": tf.transpose(tf.reshape(tf.range(24, dtype=tf.float32), (4, 6))),
        "size-1 dims": tf.reshape(tf.range(6, dtype=tf.float32), (1, 6, 1)),
        "size-0 dims": tf.zeros((0, 3)),
        "0-d": tf.constant(3.5, dtype=tf.float64),
        "bool": tf.constant([True, False, True]),
        "complex64": tf.constant([1 + 2j, 3 - 4j], dtype=tf.complex64),
        "complex128": tf.constant([1 + 2j, 3 - 4j], dtype=tf.complex128),
    }
    for name in ("int8", "int16", "int32", "int64"):
        cases[name] = tf.constant([-2, -1, 0, 1, 2], dtype=DTYPES[name])
    for name in ("uint8", "uint16", "uint32", "uint64"):
        cases[name] = tf.constant([250, 251, 252, 253, 254, 255], dtype=DTYPES[name])
    for name in ("float16", "float32", "float64", "bfloat16"):
        cases[name] = tf.cast(tf.range(-2, 3), DTYPES[name]) / 4
    return cases


IMPORT_CASES = list(import_cases())


def compact(shape, strides):
    """True when strides (in elements) are row-major compact, ignoring size-1 dims."""
    if strides is None:
        return True
    step = 1
    for extent, stride in reversed(list(zip(shape, strides))):
        if extent > 1 and stride != step:
            return False
        step *= max(extent, 1)
    return True


def check_import(r, x):
    assert r["bytes"] == tf_bytes(x)
    assert r["shape"] == tuple(x.shape)
    assert compact(r["shape"], r["strides"])
    assert r["dtype"] == TF_DL[x.dtype]
    assert r["device"] == (1, 0)
    assert r["read_only"] is True  # legacy: READ_ONLY unless the consumer trusts it
    assert r["copied"] is False
    if x.shape.num_elements():  # TF's own buffer, not a copy (NumPy takes no bfloat16: bitcast shares it)
        view = tf.bitcast(x, tf.uint16) if x.dtype == tf.bfloat16 else x
        assert r["data_ptr"] == np.from_dlpack(view).ctypes.data


# ---- import ------------------------------------------------------------------------------


@pytest.mark.matrix("TensorFlow", "import", "__dlpack__")
@pytest.mark.parametrize("name", IMPORT_CASES)
def test_import_through_dunder_dlpack(name):
    x = import_cases()[name]
    assert dl.exchange_api(x) is None  # TF publishes no exchange API: __dlpack__ it is
    check_import(dl.consume(x), x)


@pytest.mark.matrix("TensorFlow", "import", "capsule")
@pytest.mark.parametrize("name", IMPORT_CASES)
def test_import_to_dlpack_capsule(name):
    x = import_cases()[name]
    capsule = tf.experimental.dlpack.to_dlpack(x)
    check_import(dl.consume(capsule), x)
    with pytest.raises(BufferError, match="already consumed .*'used_dltensor'"):
        dl.consume(capsule)


@pytest.mark.matrix("TensorFlow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["legacy capsule despite max_version"])
def test_dunder_dlpack_is_legacy_even_when_versioned_is_asked(case):
    x = tf.constant([1, 2, 3])
    assert '"dltensor"' in repr(x.__dlpack__(max_version=(1, 3)))
    r = dl.consume(x, legacy_writable=True)  # trusting the legacy tensor drops READ_ONLY
    assert r["read_only"] is False and r["bytes"] == tf_bytes(x)


@pytest.mark.matrix("TensorFlow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["refused writable (immutable)"])
def test_writable_request_is_refused(case):
    x = tf.constant([1.0, 2.0])
    with pytest.raises(TypeError, match=r"READ_ONLY: a legacy DLPack tensor cannot say whether it may be written .*legacy_writable"):
        dl.consume(x, writable=True, write=b"\0" * 8)
    assert x.numpy().tolist() == [1.0, 2.0]


@pytest.mark.matrix("TensorFlow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["refused tf.Variable (no __dlpack__)"])
def test_variable_is_not_a_dlpack_producer(case):
    with pytest.raises(TypeError, match="expected a DLPack tensor .*ResourceVariable"):
        dl.consume(tf.Variable([1.0, 2.0]))


@pytest.mark.matrix("TensorFlow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["requirement mismatches"])
def test_requirement_mismatches(case):
    x = tf.zeros((2, 3))
    with pytest.raises(TypeError, match="dtype mismatch"):
        dl.consume(x, dtype=(FLOAT, 64, 1))
    with pytest.raises(TypeError, match="ndim = 2 but the target has rank 1"):
        dl.consume(x, ndim=1)
    with pytest.raises(RuntimeError, match="tf.Tensor does not support DLPack export with a copy=True"):
        dl.consume(x, copy=True)  # TF's own refusal propagates


# ---- export ------------------------------------------------------------------------------

SHAPES = {"2x3": (2, 3), "0-d": (), "size-0": (0, 3), "size-1 dims": (1, 7, 1)}


def pattern(numel, itemsize, code):
    if code == BOOL:
        return bytes(k % 2 for k in range(numel))
    return bytes((k * itemsize + j + 1) % 251 for k in range(numel) for j in range(itemsize))


def check_export(dtype, shape):
    ours = dl.tensor(shape, TF_DL[dtype])
    z = tf.experimental.dlpack.from_dlpack(ours.__dlpack__())  # no max_version: a legacy capsule
    assert z.dtype == dtype and tuple(z.shape) == shape
    numel = int(np.prod(shape))
    data = pattern(numel, dtype.size, TF_DL[dtype][0])
    dl.fill(ours, data)  # after the import: TF must see it (zero-copy)
    assert tf_bytes(z) == data


@pytest.mark.matrix("TensorFlow", "export", "__dlpack__")
@pytest.mark.parametrize("name", list(DTYPES))
def test_export_dtypes(name):
    check_export(DTYPES[name], (2, 3))


@pytest.mark.matrix("TensorFlow", "export", "__dlpack__")
@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
def test_export_shapes(shape):
    check_export(tf.float32, shape)


@pytest.mark.matrix("TensorFlow", "export", "__dlpack__")
@pytest.mark.parametrize("make, error, message", [
    (lambda: dl.tensor((2, 3), order="F"), tf.errors.InvalidArgumentError, "Invalid strides array from DLPack"),
    (lambda: dl.tensor((2,), (7, 8, 1)), tf.errors.InvalidArgumentError, "Unsupported Type Codes: 7"),
    (lambda: dl.tensor((2,), (INT, 4, 1)), tf.errors.InvalidArgumentError, "Unsupported Int bits: 4"),
], ids=["refused column-major", "refused float8_e3m4", "refused int4"])
def test_tensorflow_refusals_release_our_export(make, error, message, collect):
    ours = make()
    collect()
    before = dl.released()
    with pytest.raises(error, match=message):
        tf.experimental.dlpack.from_dlpack(ours.__dlpack__())
    del ours
    collect()
    assert dl.released() == before + 1  # the refused capsule still released our export


@pytest.mark.matrix("TensorFlow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["refused versioned capsule"])
def test_tensorflow_refuses_versioned_capsules(case, collect):
    ours = dl.tensor((2,))
    collect()
    before = dl.released()
    with pytest.raises(tf.errors.InvalidArgumentError, match='must be a capsule with name "dltensor"'):
        tf.experimental.dlpack.from_dlpack(ours.__dlpack__(max_version=(1, 3)))
    with pytest.raises(TypeError, match="incompatible function arguments"):
        tf.experimental.dlpack.from_dlpack(ours)  # an object with __dlpack__ is not taken
    del ours
    collect()
    assert dl.released() == before + 1


@pytest.mark.matrix("TensorFlow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["refused read-only (legacy)"])
def test_read_only_cannot_go_to_tensorflow(case):
    ours = dl.tensor((2,), readonly=True)
    with pytest.raises(BufferError, match="READ_ONLY and a legacy DLManagedTensor cannot carry that flag"):
        tf.experimental.dlpack.from_dlpack(ours.__dlpack__())


@pytest.mark.matrix("TensorFlow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["lifetime"])
def test_tensorflow_keeps_our_memory_alive(case, collect):
    ours = dl.tensor((3,), (INT, 64, 1))
    dl.fill(ours, np.array([7, 8, 9], dtype=np.int64).tobytes())
    collect()
    before = dl.released()
    z = tf.experimental.dlpack.from_dlpack(ours.__dlpack__())
    del ours
    collect()
    assert z.numpy().tolist() == [7, 8, 9]  # (no kernel on it: see test_misaligned_memory_aborts_tensorflow)
    assert dl.released() == before
    del z
    collect()
    assert dl.released() == before + 1


@pytest.mark.matrix("TensorFlow", "export", "capsule")
@pytest.mark.parametrize("case", ["dlpm_py_capsule_new legacy"])
def test_bare_legacy_capsule_to_tensorflow(case, collect):
    ours = dl.tensor((2, 3), (INT, 16, 1))
    collect()
    before = dl.released()
    z = tf.experimental.dlpack.from_dlpack(dl.capsule(ours, False))
    # dl.capsule wraps a fresh zero-filled host tensor of ours' shape and dtype
    assert z.dtype == tf.int16 and tuple(z.shape) == (2, 3) and z.numpy().tolist() == [[0] * 3] * 2
    del ours
    collect()
    assert dl.released() == before + 1  # ours itself
    del z
    collect()
    assert dl.released() == before + 2  # and the capsule's tensor, once TF let go


@pytest.mark.matrix("TensorFlow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["lanes dropped (float32x2 read as float32)"])
def test_tensorflow_ignores_lanes(case):
    """TF 2.21 takes a vector dtype (lanes > 1) as its scalar type with the same shape: it
    reads half of the elements' data instead of refusing the tensor."""
    ours = dl.tensor((2,), (FLOAT, 32, 2))
    dl.fill(ours, np.arange(4, dtype=np.float32).tobytes())
    z = tf.experimental.dlpack.from_dlpack(ours.__dlpack__())
    assert z.dtype == tf.float32 and tuple(z.shape) == (2,)
    assert z.numpy().tolist() == [0.0, 1.0]


@pytest.mark.matrix("TensorFlow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["64-byte aligned memory computes"])
def test_aligned_memory_computes_in_tensorflow(case):
    # Our exchange table's allocator gives 64-byte aligned memory, as TF's kernels (Eigen) need.
    ours = dl.allocate_via(dl.tensor((1,)), (3,), (INT, 64, 1))
    assert type(ours) is dl.Tensor and dl.consume(ours)["data_ptr"] % 64 == 0
    dl.fill(ours, np.array([7, 8, 9], dtype=np.int64).tobytes())
    z = tf.experimental.dlpack.from_dlpack(ours.__dlpack__())
    assert int(tf.reduce_sum(z)) == 24
    dl.fill(ours, np.array([1, 2, 3], dtype=np.int64).tobytes())
    assert (z * 2).numpy().tolist() == [2, 4, 6]  # zero-copy: the kernel read the new values


MISALIGNED = r"""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
import numpy as np
import tensorflow as tf
import dlpm_interop as dl

keep = []
while True:  # malloc'ed memory: find a tensor that is not 64-byte aligned
    ours = dl.tensor((3,), (0, 64, 1))
    keep.append(ours)
    if dl.consume(ours)["data_ptr"] % 64:
        break
dl.fill(ours, np.array([7, 8, 9], dtype=np.int64).tobytes())
z = tf.experimental.dlpack.from_dlpack(ours.__dlpack__())
print("imported", z.numpy().tolist(), flush=True)
print("sum", int(tf.reduce_sum(z)), flush=True)
"""


@pytest.mark.matrix("TensorFlow", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["misaligned memory aborts TF kernels"])
def test_misaligned_memory_aborts_tensorflow(case):
    """TF 2.21's from_dlpack takes memory that is not 64-byte aligned without copying it; the
    first kernel run on it then aborts the process (Check failed: IsAligned()). Reading it
    back (numpy()) works. Run in a child interpreter: the abort is TensorFlow's, not ours."""
    import signal
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", MISALIGNED], capture_output=True, text=True, timeout=300)
    assert "imported [7, 8, 9]" in child.stdout
    assert "sum" not in child.stdout
    assert child.returncode == -signal.SIGABRT
    assert "Check failed: IsAligned()" in child.stderr


STRING_TENSOR = r"""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
import tensorflow as tf
import dlpm_interop as dl

print("importing", flush=True)
dl.consume(tf.constant(["a", "b"]))
print("survived", flush=True)
"""


@pytest.mark.matrix("TensorFlow", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["string tensor aborts TF"])
def test_string_tensor_aborts_tensorflow(case):
    """TF 2.21's EagerTensor.__dlpack__ (and to_dlpack) on a string tensor aborts the process
    (Check failed: DataTypeCanUseMemcpy) instead of raising: no consumer can protect itself."""
    import signal
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", STRING_TENSOR], capture_output=True, text=True, timeout=300)
    assert child.stdout == "importing\n"
    assert child.returncode == -signal.SIGABRT
    assert "Check failed: DataTypeCanUseMemcpy(dtype())" in child.stderr
