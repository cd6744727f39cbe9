# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""MLX 0.32 (its CPU build, mlx-cpu) through an extension and back, by default options
(issue 51).

MLX's `__dlpack__` returns a legacy `dltensor` capsule even when asked with max_version, which
a DLPack 1.x consumer must take: the tensor is READ_ONLY ("legacy unknown"; MLX arrays are
immutable anyway) and reaches NumPy read-only, without a copy. `mx.from_dlpack` copies into
MLX's own memory, with or without us between. Run by CTest with the frameworks flavour only.
"""
import mlx.core as mx
import numpy as np
import pytest

import dlpm_interop as dl


def address(x):
    return dl.consume(x)["data_ptr"]


def made():
    return mx.arange(12, dtype=mx.float32).reshape(3, 4)


@pytest.mark.matrix("MLX", "round trip", "through our Tensor")
@pytest.mark.parametrize("case", ["MLX -> extension -> MLX (MLX copies)", "MLX -> extension -> NumPy (read-only)",
                                  "NumPy -> extension -> MLX (MLX copies)"])
def test_round_trip_by_default(case):
    if case.startswith("NumPy"):
        a = np.arange(6, dtype=np.float32)
        y = mx.from_dlpack(dl.reexport(a))
        assert np.array(y).tolist() == a.tolist()
        assert address(mx.from_dlpack(a)) != address(a)  # MLX's own copy, alone too
        return
    x = made()
    t = dl.reexport(x)
    assert t.readonly
    if case.endswith("(read-only)"):
        a = np.from_dlpack(t)
        assert not a.flags.writeable and a.tolist() == np.array(x).tolist() and address(a) == address(x)
        return
    y = mx.from_dlpack(t)
    assert np.array(y).tolist() == np.array(x).tolist()


@pytest.mark.matrix("MLX", "import", "through our Tensor")
@pytest.mark.parametrize("case", ["a legacy capsule for max_version", "lazy arrays are computed on export",
                                  "strided views arrive as they are"])
def test_import(case):
    x = made()
    if case == "a legacy capsule for max_version":
        capsule = x.__dlpack__(max_version=(1, 3))
        assert "dltensor" in repr(capsule) and "versioned" not in repr(capsule)
        got = dl.consume(capsule)
        assert got["read_only"] and got["shape"] == (3, 4) and not got["copied"]
    elif case == "lazy arrays are computed on export":
        y = x * 2 + 1  # not evaluated yet
        assert np.from_dlpack(dl.reexport(y)).tolist() == (np.arange(12, dtype=np.float32).reshape(3, 4) * 2 + 1).tolist()
    else:
        for view, strides in ((x.T, (1, 4)), (x[1:, ::2], (4, 2)), (x[::-1], (-4, 1))):
            assert dl.consume(view)["strides"] == strides
            assert np.from_dlpack(dl.reexport(view)).tolist() == np.array(view).tolist()
