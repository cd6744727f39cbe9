# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Drives consumer_ext (built against the installed package) with every framework this
interpreter has: its tensors imported through dlpm_py_import, ours exported as a
dlpack_mdspan.Tensor, values checked and zero copy proven by addresses and shared writes.

    python check_consumer.py   (consumer_ext on PYTHONPATH)
Exits 0 when every available framework passed; prints what ran and what was absent."""
import gc
import importlib
import sys

import consumer_ext as ext

ran, absent = [], []


def framework(name):
    try:
        module = importlib.import_module(name)
    except ImportError:
        absent.append(name)
        return None
    ran.append(f"{name} {getattr(module, '__version__', '?')}")
    return module


def expect_error(kind, words, call, *args):
    try:
        call(*args)
    except kind as e:
        assert all(w in str(e) for w in words), f"{kind.__name__} without {words}: {e}"
        return
    raise AssertionError(f"{call.__name__}{args!r} did not raise {kind.__name__}")


# ---- our own Tensor, with no framework -------------------------------------------------
t = ext.make(4)
assert type(t).__module__ == "dlpack_mdspan" and type(t).__name__ == "Tensor", type(t)
assert (t.shape, t.strides, t.dtype, t.device, t.readonly) == ((4,), (1,), (2, 32, 1), (1, 0), False)
assert ext.total(t) == 4.0
ext.double_in_place(t)
assert ext.total(t.__dlpack__(max_version=(1, 3))) == 8.0  # a versioned capsule
assert ext.total(t.__dlpack__()) == 8.0  # a legacy one
expect_error(TypeError, ["expected a DLPack tensor"], ext.total, 1.5)
capsule = t.__dlpack__(max_version=(1, 3))
del t
assert ext.released() == 0  # the capsule keeps the memory alive
assert ext.total(capsule) == 8.0
expect_error(BufferError, ["already consumed"], ext.total, capsule)
del capsule
gc.collect()
assert ext.released() == 1, ext.released()

# ---- NumPy ---------------------------------------------------------------------------------
np = framework("numpy")
if np:
    a = np.arange(4, dtype=np.float32)
    ext.double_in_place(a)  # NumPy -> C, writable, in place
    assert a.tolist() == [0, 2, 4, 6] and ext.address(a) == a.ctypes.data
    strided = np.arange(8, dtype=np.float32)[::2]
    assert ext.total(strided) == 12.0 and ext.address(strided) == strided.ctypes.data
    a.flags.writeable = False
    expect_error(TypeError, ["READ_ONLY"], ext.double_in_place, a)
    expect_error(TypeError, ["dtype"], ext.total, np.zeros(3))
    t = ext.make(3)
    b = np.from_dlpack(t)  # C -> NumPy
    ext.double_in_place(t)
    assert b.tolist() == [2, 2, 2] and b.ctypes.data == ext.address(t)

# ---- PyTorch -------------------------------------------------------------------------------
torch = framework("torch")
if torch:
    x = torch.arange(4, dtype=torch.float32)
    ext.double_in_place(x)
    assert x.tolist() == [0, 2, 4, 6] and ext.address(x) == x.data_ptr()
    t = ext.make(3)
    y = torch.from_dlpack(t)
    ext.double_in_place(t)
    assert y.tolist() == [2, 2, 2] and y.data_ptr() == ext.address(t)
    y[0] = 5  # a PyTorch write, seen in C
    assert ext.total(t) == 9.0

# ---- JAX (immutable arrays: imported read-only) --------------------------------------------
jax = framework("jax")
if jax:
    import jax.numpy as jnp

    j = jnp.arange(4, dtype=jnp.float32)
    assert ext.total(j) == 6.0 and ext.address(j) == j.unsafe_buffer_pointer()
    t = ext.make(128)
    k = jnp.from_dlpack(t)
    assert k.unsafe_buffer_pointer() == ext.address(t) and float(k.sum()) == 128.0

# ---- TensorFlow (capsules both ways) -------------------------------------------------------
tf = framework("tensorflow")
if tf:
    c = tf.constant([1.0, 2.0, 3.5], dtype=tf.float32)
    assert ext.total(tf.experimental.dlpack.to_dlpack(c)) == 6.5
    t = ext.make(16)
    u = tf.experimental.dlpack.from_dlpack(t.__dlpack__())
    assert ext.address(tf.experimental.dlpack.to_dlpack(u)) == ext.address(t)
    assert float(tf.reduce_sum(u)) == 16.0

# ---- tvm-ffi ---------------------------------------------------------------------------
tvm_ffi = framework("tvm_ffi")
if tvm_ffi:
    t = ext.make(5)
    v = tvm_ffi.from_dlpack(t)
    assert ext.address(v) == ext.address(t)
    ext.double_in_place(v)  # through tvm-ffi's own export
    assert ext.total(t) == 10.0

# ---- pyarrow (a producer) ------------------------------------------------------------------
pa = framework("pyarrow")
if pa:
    arr = pa.array([1.5, 2.5, 3.0], type=pa.float32())
    assert ext.total(arr) == 7.0 and ext.address(arr) == arr.buffers()[1].address

print(f"consumer_ext with Python {sys.version.split()[0]} ({sys.executable}): {', '.join(ran) or 'no framework'}"
      + (f"; absent: {', '.join(absent)}" if absent else ""))
