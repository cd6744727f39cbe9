# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The installed wheel in one interpreter (scripts/check-wheel runs it under every Python from
3.10 on): the package imports from the venv it was installed into, from_dlpack and inspect
work on NumPy arrays, and the abi3 C extension built against the wheel (dlpm_wheel_c, on
PYTHONPATH) imports NumPy arrays and our own Tensor, and refuses a wrong dtype."""
import sys

import numpy as np

import dlpack_mdspan as dm
import dlpm_wheel_c

assert dm.__file__.startswith(sys.prefix), (dm.__file__, sys.prefix)  # the venv's, not a tree's
assert dm._core.__file__.endswith("_core.abi3.so"), dm._core.__file__
assert dlpm_wheel_c.__file__.endswith(".abi3.so"), dlpm_wheel_c.__file__

a = np.arange(10, dtype=np.float64)
t = dm.from_dlpack(a)
assert type(t) is dm.Tensor and t.shape == (10,)
back = np.from_dlpack(t)
assert np.shares_memory(back, a) and back.tolist() == a.tolist()
info = dm.inspect(t, show=False, dtype="float64", ndim=1)
assert info["path"] == "exchange API" and info["passes"], info

assert dlpm_wheel_c.total(a[1::3]) == 1 + 4 + 7  # a strided NumPy view, through __dlpack__
assert dlpm_wheel_c.total(t) == 45  # our Tensor, through its exchange API
try:
    dlpm_wheel_c.total(np.ones(3, np.float32))
except TypeError as e:
    assert "dtype float32 does not match the required float64" in str(e), e
else:
    raise AssertionError("a float32 array was accepted as float64")
print(f"  Python {sys.version.split()[0]}, NumPy {np.__version__}: dlpack_mdspan {dm.__version__} and dlpm_wheel_c passed")
