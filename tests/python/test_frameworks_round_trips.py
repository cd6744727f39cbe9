# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every framework through an extension and back, by default options (issue 39).

An extension that passes a tensor through (dl.reexport: dlpm_py_import, then
dlpm_py_tensor_new) or returns a const view of it (the casters' held_view) hands back a
dlpack_mdspan.Tensor. JAX 0.10 and TensorFlow 2.21 speak legacy capsules only, which cannot
say whether the memory may be written: such a tensor is READ_ONLY with the cause "legacy
unknown", and may leave as a legacy capsule again (the consumer learns nothing less than the
producer told us). A tensor whose producer flagged it READ_ONLY (a read-only NumPy array,
pyarrow) still refuses a legacy export; no mutable view of an unknown one is given without
legacy_writable. Run by CTest with the frameworks flavour only.
"""
import importlib
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

import dlpm_interop as dl  # noqa: E402

FLAGGED = "the tensor is READ_ONLY and a legacy DLManagedTensor cannot carry that flag"


def address(x):
    """Where x's first element lives, as our import sees it (any framework)."""
    return dl.consume(x)["data_ptr"]


def to_jax(t):
    return jax.dlpack.from_dlpack(t)  # JAX asks __dlpack__ without max_version: legacy


def to_tf(t):
    return tf.experimental.dlpack.from_dlpack(t.__dlpack__())  # takes legacy capsules only


def to_numpy(t):
    return np.from_dlpack(t)


PRODUCERS = {
    "JAX": lambda: jnp.arange(12, dtype=jnp.float32).reshape(3, 4),
    "TensorFlow": lambda: tf.reshape(tf.range(12, dtype=tf.float32), (3, 4)),
}
CONSUMERS = {"JAX": to_jax, "TensorFlow": to_tf}


@pytest.mark.matrix("JAX/TensorFlow", "round trip", "through our Tensor")
@pytest.mark.parametrize("case", [f"{p} -> extension -> {c}" for p in PRODUCERS for c in CONSUMERS])
def test_legacy_producers_round_trip_by_default(case):
    p, c = case.split(" -> extension -> ")
    x = PRODUCERS[p]()
    t = dl.reexport(x)
    assert t.readonly  # unknown: no mutable view without the opt-in
    y = CONSUMERS[c](t)
    assert np.asarray(y).tolist() == np.asarray(x).tolist()
    assert address(y) == address(x), "zero copy"


@pytest.mark.matrix("JAX/TensorFlow", "round trip", "through our Tensor")
@pytest.mark.parametrize("case", ["JAX -> extension -> extension -> JAX"])
def test_two_hops_keep_the_cause(case):
    x = PRODUCERS["JAX"]()
    y = to_jax(dl.reexport(dl.reexport(x)))  # the second hop imports our Tensor (exchange API)
    assert address(y) == address(x)


@pytest.mark.matrix("JAX", "round trip", "through our Tensor")
@pytest.mark.parametrize("case", ["JAX -> NumPy", "NumPy -> JAX", "read-only NumPy -> JAX refused"])
def test_numpy_and_jax(case):
    if case == "JAX -> NumPy":
        x = PRODUCERS["JAX"]()
        a = to_numpy(dl.reexport(x))  # versioned: READ_ONLY travels
        assert not a.flags.writeable and a.tolist() == np.asarray(x).tolist()
    elif case == "NumPy -> JAX":
        a = np.arange(6, dtype=np.float64)
        assert not dl.reexport(a).readonly
        y = to_jax(dl.reexport(a))
        assert np.asarray(y).tolist() == a.tolist()
    else:
        a = np.arange(6, dtype=np.float64)
        a.flags.writeable = False  # NumPy flags it READ_ONLY: a legacy capsule would drop that
        with pytest.raises(BufferError, match=FLAGGED):
            to_jax(dl.reexport(a))


@pytest.mark.matrix("pyarrow", "round trip", "through our Tensor")
@pytest.mark.parametrize("case", ["pyarrow -> JAX refused (versioned READ_ONLY)"])
def test_versioned_read_only_still_refuses_a_legacy_export(case):
    pa = pytest.importorskip("pyarrow")
    t = dl.reexport(pa.array([1.0, 2.0, 3.0]))
    assert t.readonly
    with pytest.raises(BufferError, match=FLAGGED):
        to_jax(t)
    assert to_numpy(t).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.matrix("JAX", "import", "through our Tensor")
@pytest.mark.parametrize("case", ["no mutable view without legacy_writable"])
def test_unknown_writability_needs_the_opt_in(case):
    x = PRODUCERS["JAX"]()
    with pytest.raises(TypeError, match=r"READ_ONLY: a legacy DLPack tensor cannot say whether it may be written .*legacy_writable"):
        dl.consume(x, writable=True)
    with pytest.raises(TypeError, match=r"READ_ONLY: a legacy DLPack tensor cannot say whether it may be written .*legacy_writable"):
        dl.consume(dl.reexport(x), writable=True)
    # The opt-in trusts the unknown, on the legacy capsule and after a hop alike.
    assert not dl.consume(x, writable=True, legacy_writable=True)["read_only"]
    assert not dl.consume(dl.reexport(x), writable=True, legacy_writable=True)["read_only"]


@pytest.fixture(params=["bound_nanobind", "bound_pybind11"])
def ext(request):
    return importlib.import_module(request.param)


@pytest.mark.matrix("JAX/TensorFlow", "round trip", "through a caster")
@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_a_const_view_goes_back(ext, producer):
    """A function that takes a const view and returns it (held_view<const>)."""
    x = PRODUCERS[producer]()
    y = CONSUMERS[producer](ext.same_const(x))
    assert np.asarray(y).tolist() == np.asarray(x).tolist()
    assert address(y) == address(x)
    with pytest.raises(TypeError, match="READ_ONLY"):
        ext.every_other_row(x)  # a mutable view of an unknown one: refused
