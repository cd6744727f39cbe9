# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The installed sample (pip install ./examples/pip_extension) on NumPy 2 arrays and PyTorch
tensors: values written and read through std::mdspan parameters, and a refusal. PyTorch is
optional (skipped, and said so, when it is not installed); DLPM_SAMPLE_REQUIRE_TORCH=1 makes
its absence a failure (scripts/check-wheel sets it)."""
import os
import sys

import numpy as np

import dlpm_sample


def refused_float64(call, *args):
    try:
        call(*args)
    except TypeError as e:
        message = str(e)
        assert "dtype=float32" in message and "does not match the required float32" in message, message
        return message
    raise AssertionError(f"{call.__name__}: a float64 tensor was accepted by a float32 mdspan")


assert np.lib.NumpyVersion(np.__version__) >= "2.0.0", np.__version__

# NumPy: in place, zero copy; a strided, read-only column; a refusal.
a = np.arange(6, dtype=np.float32).reshape(2, 3)
dlpm_sample.scale(a, 2.5)
assert a.tolist() == [[0.0, 2.5, 5.0], [7.5, 10.0, 12.5]], a
m = np.arange(12, dtype=np.float64).reshape(3, 4)
m.flags.writeable = False
assert dlpm_sample.total(m[:, 1]) == 1 + 5 + 9  # stride 4 elements, read-only: fine for const
print("  refused:", refused_float64(dlpm_sample.scale, np.ones((2, 3)), 2.0))
print(f"  NumPy {np.__version__}: scale, total and the refusal work")

try:
    import torch
except ImportError:
    if os.environ.get("DLPM_SAMPLE_REQUIRE_TORCH"):
        raise
    print("  PyTorch not installed: its cases skipped")
else:
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    dlpm_sample.scale(t, -2.0)
    assert t.tolist() == [[-0.0, -2.0, -4.0], [-6.0, -8.0, -10.0]], t
    c = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    assert dlpm_sample.total(c[:, 3]) == 3 + 7 + 11
    refused_float64(dlpm_sample.scale, torch.ones(2, 3, dtype=torch.float64), 2.0)
    print(f"  PyTorch {torch.__version__}: scale, total and the refusal work")
print(f"dlpm_sample passed on Python {sys.version.split()[0]}")
