# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PaddlePaddle 3.3 through an extension and back, by default options (issue 51).

Paddle publishes the C exchange API (`__dlpack_c_exchange_api__`, table version 1.3), which
the import takes before `__dlpack__`; its capsules are versioned on request. Its tensors are
writable, and stay so through our Tensor: a write through NumPy's view of the re-export is
seen by the Paddle tensor. Run by CTest with the frameworks flavour only.
"""
import numpy as np
import paddle
import pytest

import dlpm_interop as dl


def address(x):
    return dl.consume(x)["data_ptr"]


def made():
    return paddle.arange(12, dtype="float32").reshape([3, 4])


@pytest.mark.matrix("PaddlePaddle", "round trip", "through our Tensor")
@pytest.mark.parametrize("case", ["Paddle -> extension -> Paddle", "Paddle -> extension -> NumPy (writable)",
                                  "NumPy -> extension -> Paddle", "Paddle capsule -> extension -> Paddle"])
def test_round_trip_by_default(case):
    if case.startswith("NumPy"):
        a = np.arange(6, dtype=np.float64)
        y = paddle.from_dlpack(dl.reexport(a))
        assert y.numpy().tolist() == a.tolist() and address(y) == address(a)
        return
    x = made()
    t = dl.reexport(x.__dlpack__(max_version=(1, 3)) if "capsule" in case else x)
    assert not t.readonly  # Paddle says writable (the exchange API and versioned capsules carry it)
    if case.endswith("NumPy (writable)"):
        a = np.from_dlpack(t)
        assert a.flags.writeable and address(a) == address(x)
        a[0, 0] = 42.0
        assert float(x[0, 0]) == 42.0  # one memory
        return
    y = paddle.from_dlpack(t)
    assert y.numpy().tolist() == x.numpy().tolist()
    assert address(y) == address(x), "zero copy"


@pytest.mark.matrix("PaddlePaddle", "import", "through our Tensor")
@pytest.mark.parametrize("case", ["the exchange API is taken", "strided views arrive as they are",
                                  "negative strides into NumPy"])
def test_import(case):
    x = made()
    if case == "the exchange API is taken":
        assert type(x).__dlpack_c_exchange_api__ is not None
        # Paddle's __dlpack_device__ has no device id; the exchange API does not ask it.
        assert x.__dlpack_device__()[1] is None
        assert not hasattr(x, "__dlpack_data_type__")  # not in Paddle 3.3.1's wheel
        got = dl.consume(x)
        assert got["device"] == (1, 0) and not got["read_only"] and not got["copied"]
    elif case == "strided views arrive as they are":
        for view, strides in ((x.T, (1, 4)), (x[1:, ::2], (4, 2))):
            assert dl.consume(view)["strides"] == strides
            assert paddle.from_dlpack(dl.reexport(view)).numpy().tolist() == view.numpy().tolist()
    else:
        # Into NumPy only: Paddle 3.3's own from_dlpack was seen to fail on negative strides
        # from NumPy and from Paddle alike (a MemoryError asking ~2**64 bytes), not every time.
        reversed_ = x[::-1]
        assert dl.consume(reversed_)["strides"] == (-4, 1)
        assert np.from_dlpack(dl.reexport(reversed_)).tolist() == reversed_.numpy().tolist()
