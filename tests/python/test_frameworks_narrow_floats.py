# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch 2.15's fp8 dtypes (the frameworks venv) against dtype.hpp's storage types and ml_dtypes.

PyTorch exports versioned tensors (and DLPack 1.3's exchange API), so this is the fp8 path
with a producer that speaks DLPack 1.x; test_narrow_floats.py covers JAX and every other
narrow dtype. Checks are on raw bytes; the ml_dtypes comparison shows the two libraries read
each encoding alike. Run by CTest with the frameworks flavour only.
"""
import numpy as np
import ml_dtypes
import pytest
import torch

import dlpm_interop as dl

# torch / ml_dtypes name -> DLPack code (bits 8, lanes 1)
FP8 = {"float8_e4m3fn": 10, "float8_e4m3fnuz": 11, "float8_e5m2": 12, "float8_e5m2fnuz": 13, "float8_e8m0fnu": 14}


def every_encoding(name):
    return torch.arange(256, dtype=torch.int32).to(torch.uint8).view(getattr(torch, name))


@pytest.mark.parametrize("name", list(FP8))
def test_torch_fp8_imports_zero_copy_with_ml_dtypes_bytes(name):
    t = every_encoding(name)
    got, address, padded = dl.narrow_view(t, name)
    assert got == t.view(torch.uint8).numpy().tobytes()
    assert address == t.data_ptr()  # zero copy
    assert not padded
    assert dl.consume(t)["dtype"] == (FP8[name], 8, 1)
    # ml_dtypes reads the same bytes as the same values (NaN where torch has NaN).
    h = np.frombuffer(got, dtype=np.uint8).view(getattr(ml_dtypes, name))
    np.testing.assert_array_equal(h.astype(np.float32), t.float().numpy())


@pytest.mark.parametrize("name", list(FP8))
def test_our_fp8_tensors_reach_torch_zero_copy(name):
    h = np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, name))
    ours = dl.narrow_tensor(name, h.view(np.uint8).tobytes())
    t = torch.from_dlpack(ours)
    assert t.dtype == getattr(torch, name)
    assert t.data_ptr() == dl.consume(ours)["data_ptr"]
    assert t.view(torch.uint8).numpy().tobytes() == h.view(np.uint8).tobytes()


def test_torch_packed_fp4_pairs_are_not_one_value_per_byte():
    t = torch.tensor([0x21, 0x7f], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    assert dl.consume(t)["dtype"] == (17, 4, 2)  # packed pairs: no host storage type of ours
    with pytest.raises(TypeError, match="dtype"):
        dl.narrow_view(t, "float4_e2m1fn")
