# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The scale_nanobind example (std::mdspan parameters) under a modern interpreter: NumPy 2,
PyTorch 2 and JAX, each handing its arrays over the way it does today. Run by scripts/demo
with the frameworks venv of scripts/install-deps; also a CTest test."""
import ctypes
import sys

import jax
import jax.numpy as jnp
import numpy as np
import torch

import scale_nanobind as ext


def capsule_name(capsule):
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return get_name(capsule).decode()


def handed_over_as(array):
    """What the producer gives a consumer that asks for DLPack 1.x."""
    if hasattr(type(array), "__dlpack_c_exchange_api__"):
        return "DLPack 1.3 exchange API (no capsule)"
    return f'"{capsule_name(array.__dlpack__(max_version=(1, 3)))}" capsule'


print(f"Python {sys.version.split()[0]}: NumPy {np.__version__}, PyTorch {torch.__version__}, JAX {jax.__version__}")

a = np.ones((2, 3), dtype=np.float32)
ext.scale(a, 2.5)  # in place, zero copy
assert a.tolist() == [[2.5] * 3] * 2
print(f"  NumPy  float32 2x3, scaled in C++ in place   -> {a[0].tolist()}  via {handed_over_as(a)}")

t = torch.ones(2, 3)
ext.scale(t, 3.0)
assert t.tolist() == [[3.0] * 3] * 2
print(f"  torch  float32 2x3, scaled in C++ in place   -> {t[0].tolist()}  via {handed_over_as(t)}")

x = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
column = x[:, 1]
n = ext.norm(column)
assert abs(n - float(jnp.linalg.norm(column))) < 1e-4
print(f"  JAX    column of a 3x4 array, norm in C++     -> {n:.4f}  via {handed_over_as(x)}")
try:
    ext.scale(x, 2.0)
except TypeError as e:
    print(f"  JAX    array into a writable mdspan           -> refused: {e}")
else:
    raise AssertionError("a JAX array was accepted as writable")

r = ext.ramp(4)  # made in C++, owned by the NumPy array
assert isinstance(r, np.ndarray) and r.tolist() == [0, 1, 2, 3]
print(f"  C++ std::vector<float> returned as NumPy      -> {r.tolist()}, dtype {r.dtype}")
