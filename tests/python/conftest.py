"""Which interpreter generation this run is (set by CTest), and its frameworks.

Each flavour *requires* its frameworks: a missing one fails the run instead of skipping.
"""
import gc
import os

import pytest

FLAVOUR = os.environ.get("DLPM_PYTHON_FLAVOUR", "modern")


@pytest.fixture
def np():
    import numpy

    return numpy


@pytest.fixture
def torch():
    if FLAVOUR != "legacy":
        pytest.skip("PyTorch is tested with Debian's interpreter (legacy DLPack)")
    import torch

    return torch


@pytest.fixture
def jnp():
    if FLAVOUR != "modern":
        pytest.skip("JAX is tested with the modern interpreter (versioned DLPack)")
    import jax

    jax.config.update("jax_platforms", "cpu")
    import jax.numpy

    return jax.numpy


@pytest.fixture
def collect():
    """Runs the garbage collector, so dropped capsules and arrays are really gone."""

    def run():
        for _ in range(3):
            gc.collect()

    return run
