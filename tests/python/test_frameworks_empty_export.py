# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What we export is what a consumer can use (issue 52): a hand-made capsule (test_hostile.py's
ctypes producer) with hostile strides, imported and re-exported as a dlpack_mdspan.Tensor,
taken by NumPy, PyTorch 2.15 and JAX (the frameworks venv).

An empty tensor leaves with row-major strides whatever it came with: PyTorch's from_dlpack
overflows on (INT64_MIN, INT64_MAX) for shape (0, 5), raises after calling the deleter, and
the capsule deletes the tensor a second time (a segmentation fault that ends this process).
An extent-1 dimension's stride is passed on as given: each consumer takes any value there.
Run by CTest with the frameworks flavour only.
"""
import jax
import numpy as np
import pytest
import torch

import dlpm_interop as dl
from test_hostile import INT64_MAX, INT64_MIN, Hand, collect

jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402  (after the platform is chosen)

CONSUMERS = {"numpy": np.from_dlpack, "torch": torch.from_dlpack, "jax": jnp.from_dlpack}

# (shape, the producer's strides, the strides the re-export carries)
CASES = [
    ((0, 5), (INT64_MIN, INT64_MAX), (5, 1)),  # the case
    ((5, 0), (INT64_MAX, INT64_MIN), (0, 1)),
    ((3, 0, 4), (-7, 0, INT64_MIN), (0, 4, 1)),
    ((0,), (INT64_MIN,), (1,)),
    ((2, 0, 3), (INT64_MAX, INT64_MAX, INT64_MAX), (0, 3, 1)),
    # non-empty: an extent-1 dimension reaches index 0 only; its stride is kept
    ((2, 1, 3), (3, INT64_MIN, 1), (3, INT64_MIN, 1)),
    ((2, 1, 3), (3, INT64_MAX, 1), (3, INT64_MAX, 1)),
    ((1, 1), (INT64_MIN, INT64_MAX), (INT64_MIN, INT64_MAX)),
]


@pytest.mark.parametrize("consumer", list(CONSUMERS))
@pytest.mark.parametrize("shape, strides, exported", CASES, ids=[f"{s}-{t}" for s, t, _ in CASES])
def test_reexported_tensor_is_taken(consumer, shape, strides, exported):
    hand = Hand(shape=shape, strides=strides, data_bytes=4 * 6)
    t = dl.reexport(hand.capsule())
    assert t.strides == exported
    a = CONSUMERS[consumer](t)
    assert tuple(a.shape) == shape
    size = 1
    for e in shape:
        size *= e
    assert int(np.prod(a.shape)) == size
    del t, a
    collect()
    assert hand.deletes() == 1
