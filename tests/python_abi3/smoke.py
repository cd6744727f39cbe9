# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The abi3 extension (dlpm_abi3_smoke.abi3.so, on PYTHONPATH) in this interpreter: our own
dlpack_mdspan.Tensor exported and imported back through every path, no NumPy needed."""
import gc
import sys

import dlpm_abi3_smoke as ext

assert ext.__file__.endswith(".abi3.so"), ext.__file__


def refused(kind, words, call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except kind as e:
        assert all(w in str(e) for w in words), f"{kind.__name__} without {words}: {e}"
        return str(e)
    raise AssertionError(f"{call.__name__}{args!r} did not raise {kind.__name__}")


t = ext.make(2, 3)
Tensor = type(t)
assert (Tensor.__module__, Tensor.__name__) == ("dlpack_mdspan", "Tensor"), Tensor
assert (t.shape, t.strides, t.dtype, t.device, t.readonly) == ((2, 3), (3, 1), (2, 32, 1), (1, 0), False)
assert t.__dlpack_device__() == (1, 0)
assert repr(t) == "dlpack_mdspan.Tensor(shape=(2, 3), dtype=float32, device=(1, 0))", repr(t)
assert '"dlpack_exchange_api"' in repr(Tensor.__dlpack_c_exchange_api__)

# Exports: a versioned capsule, a legacy one, and the object itself (its type's exchange API).
versioned = t.__dlpack__(max_version=(1, 3))
legacy = t.__dlpack__()
assert '"dltensor_versioned"' in repr(versioned) and '"dltensor"' in repr(legacy), (versioned, legacy)
layout = ((2, 3), (3, 1), (2, 32, 1))
shape, strides, dtype, readonly, version = ext.inspect(versioned)
assert ((shape, strides, dtype), readonly, version[0]) == (layout, False, 1), ext.inspect
assert ext.inspect(legacy)[:4] == layout + (True,)  # a legacy tensor arrives read-only
assert ext.inspect(t)[:4] == layout + (False,)
assert '"used_dltensor_versioned"' in repr(versioned) and '"used_dltensor"' in repr(legacy)

# Writes round-trip: through a versioned capsule and through the object, read back both ways.
assert ext.get(t, 1, 2) == 5.0
ext.put(t.__dlpack__(max_version=(1, 3)), 1, 2, 42.0)
assert ext.get(t, 1, 2) == 42.0
ext.put(t, 0, 0, -7.0)
assert ext.get(t.__dlpack__(), 0, 0) == -7.0
assert ext.check(t, 2, 32, 2) is True

# Refusals, with the component's messages.
refused(TypeError, ["READ_ONLY"], ext.put, t.__dlpack__(), 0, 0, 1.0)
print("  refused:", refused(TypeError, ["dtype"], ext.check, t, 2, 64, 2))
refused(TypeError, ["ndim"], ext.check, t, 2, 32, 3)
refused(BufferError, ["already consumed"], ext.inspect, versioned)
refused(TypeError, ["expected a DLPack tensor"], ext.inspect, 42)
refused(RuntimeError, ["stream must be None"], t.__dlpack__, stream=1)
refused(TypeError, ["made by C and C++ extensions"], Tensor)

# Ownership: an unconsumed capsule keeps the memory alive and releases it once.
unconsumed = t.__dlpack__(max_version=(1, 3))
del t, versioned, legacy
gc.collect()
assert ext.released() == 0, ext.released()
del unconsumed
gc.collect()
assert ext.released() == 1, ext.released()
print(f"  Python {sys.version.split()[0]} ({sys.executable}): dlpm_abi3_smoke.abi3.so passed")
