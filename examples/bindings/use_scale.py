# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Drives the scale_nanobind or scale_pybind11 example (its module name is argv[1]): NumPy
arrays in and out, and the library's message when an array does not fit."""
import importlib
import sys

import numpy as np

ext = importlib.import_module(sys.argv[1])

a = np.ones((2, 3), dtype=np.float32)
ext.scale(a, 2.5)  # zero copy: C++ wrote into a
assert a.tolist() == [[2.5] * 3] * 2, a

m = np.arange(12, dtype=np.float32).reshape(3, 4)
assert abs(ext.norm(m[:, 1]) - float(np.linalg.norm(m[:, 1]))) < 1e-4  # a strided column

r = ext.ramp(5)
assert isinstance(r, np.ndarray) and r.tolist() == [0, 1, 2, 3, 4]

try:
    ext.scale(np.ones((2, 3)), 2.0)  # float64: not what scale takes
except TypeError as e:
    message = str(e)
    assert "dtype=float32" in message and "does not match" in message, message
    print("refused:", message)
else:
    raise AssertionError("a float64 array was accepted by a float32 mdspan")
print(f"{sys.argv[1]}: scale, norm and ramp work on NumPy {np.__version__}")
