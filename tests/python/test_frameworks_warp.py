# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""NVIDIA Warp 1.19 on its CPU device through an extension and back, by default options
(issue 51).

Warp speaks legacy capsules only: `__dlpack__(max_version=...)` is a TypeError about the
keyword, so the import asks again without it. A legacy capsule cannot say whether the memory
may be written: the tensor is READ_ONLY with the cause "legacy unknown", leaves to Warp as a
legacy capsule again, and to NumPy as a read-only array; no mutable view is given without
legacy_writable. A NumPy array re-exported by us reaches Warp without a copy. Run by CTest
with the frameworks flavour only.
"""
import numpy as np
import pytest
import warp as wp

import dlpm_interop as dl

wp.config.quiet = True


def address(x):
    return dl.consume(x)["data_ptr"]


def made():
    return wp.array(np.arange(12, dtype=np.float32).reshape(3, 4), device="cpu")


@pytest.mark.matrix("Warp", "round trip", "through our Tensor")
@pytest.mark.parametrize("case", ["Warp -> extension -> Warp", "Warp -> extension -> NumPy (read-only)",
                                  "NumPy -> extension -> Warp (writes through)"])
def test_round_trip_by_default(case):
    if case.startswith("NumPy"):
        a = np.arange(6, dtype=np.float32)
        y = wp.from_dlpack(dl.reexport(a))
        assert address(y) == address(a), "zero copy"
        y.fill_(7.0)
        assert a.tolist() == [7.0] * 6
        return
    x = made()
    t = dl.reexport(x)
    assert t.readonly  # unknown: a legacy capsule
    if case.endswith("(read-only)"):
        a = np.from_dlpack(t)  # versioned: READ_ONLY travels
        assert not a.flags.writeable and a.tolist() == x.numpy().tolist() and address(a) == address(x)
        return
    y = wp.from_dlpack(t)
    assert y.numpy().tolist() == x.numpy().tolist()
    assert address(y) == address(x), "zero copy"


@pytest.mark.matrix("Warp", "import", "through our Tensor")
@pytest.mark.parametrize("case", ["retried without keywords", "no mutable view without legacy_writable",
                                  "strided views arrive as they are"])
def test_import(case):
    x = made()
    if case == "retried without keywords":
        with pytest.raises(TypeError, match="max_version"):
            x.__dlpack__(max_version=(1, 3))
        got = dl.consume(x)
        assert got["read_only"] and not got["copied"] and got["shape"] == (3, 4)
    elif case == "no mutable view without legacy_writable":
        with pytest.raises(TypeError, match=r"READ_ONLY: a legacy DLPack tensor cannot say whether it may be written .*legacy_writable"):
            dl.consume(x, writable=True)
        assert not dl.consume(x, writable=True, legacy_writable=True)["read_only"]
    else:
        for view, strides in ((x.transpose(), (1, 4)), (x[1:, ::2], (4, 2))):
            assert dl.consume(view)["strides"] == strides
            assert wp.from_dlpack(dl.reexport(view)).numpy().tolist() == view.numpy().tolist()
