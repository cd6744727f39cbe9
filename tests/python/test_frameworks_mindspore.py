# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""MindSpore 2.10 through an extension and back, by default options (issue 51).

MindSpore's tensors have no `__dlpack__`: mindspore.utils.dlpack.to_dlpack(x) hands over a
legacy `dltensor` capsule, and from_dlpack takes a capsule only (not an object with
`__dlpack__`). Through us: the capsule is imported READ_ONLY ("legacy unknown"), and leaves
as a legacy capsule again for MindSpore, which then shares the memory. Run by CTest in the
MindSpore venv (NumPy 1.26, which MindSpore's C++ parser is built against), with the
frameworks suite's extension (the same interpreter): not in the frameworks venv.
"""
import mindspore as ms
import numpy as np
import pytest
from mindspore.utils.dlpack import from_dlpack, to_dlpack

import dlpm_interop as dl


def address(x):
    """Where x's first element lives: a MindSpore tensor through its capsule."""
    return dl.consume(to_dlpack(x) if isinstance(x, ms.Tensor) else x)["data_ptr"]


def made():
    return ms.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))


@pytest.mark.matrix("MindSpore", "round trip", "through our Tensor")
@pytest.mark.parametrize("case", ["MindSpore -> extension -> MindSpore", "MindSpore -> extension -> NumPy (read-only)",
                                  "NumPy -> extension -> MindSpore"])
def test_round_trip_by_default(case):
    if case.startswith("NumPy"):
        a = np.arange(6, dtype=np.float32)
        y = from_dlpack(dl.reexport(a).__dlpack__())
        assert y.asnumpy().tolist() == a.tolist() and address(y) == a.ctypes.data, "zero copy"
        return
    x = made()
    t = dl.reexport(to_dlpack(x))
    assert t.readonly  # a legacy capsule: unknown
    if case.endswith("(read-only)"):
        a = np.from_dlpack(t)
        assert not a.flags.writeable and a.tolist() == x.asnumpy().tolist() and a.ctypes.data == address(x)
        return
    y = from_dlpack(t.__dlpack__())
    assert y.asnumpy().tolist() == x.asnumpy().tolist()
    assert address(y) == address(x), "zero copy"


@pytest.mark.matrix("MindSpore", "import", "through our Tensor")
@pytest.mark.parametrize("case", ["no __dlpack__: its capsule is imported", "strided views arrive as they are"])
def test_import(case):
    x = made()
    if case == "no __dlpack__: its capsule is imported":
        assert not hasattr(x, "__dlpack__")
        with pytest.raises(TypeError, match="expected a DLPack tensor"):
            dl.consume(x)
        got = dl.consume(to_dlpack(x))
        assert got["read_only"] and got["shape"] == (3, 4) and not got["copied"]
    else:
        for view, strides in ((x.T, (1, 4)), (x[1:, ::2], (4, 2))):
            assert dl.consume(to_dlpack(view))["strides"] == strides
            assert np.from_dlpack(dl.reexport(to_dlpack(view))).tolist() == view.asnumpy().tolist()
