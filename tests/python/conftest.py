# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Which interpreter generation this run is (set by CTest), its frameworks, and the
interop matrix that docs/python-interop.md shows.

Each flavour *requires* its frameworks: a missing one fails the run instead of skipping.

A test marked ``@pytest.mark.matrix(framework, direction, path)`` adds one row to the
matrix file named by $DLPM_MATRIX_FILE (JSON lines) with its outcome; matrix.py turns the
rows of every run into the table in the docs.
"""
import gc
import json
import os

import pytest

FLAVOUR = os.environ.get("DLPM_PYTHON_FLAVOUR", "modern")


def pytest_configure(config):
    config.addinivalue_line("markers", "matrix(framework, direction, path): a row of the interop matrix")


def _framework_version(name):
    module = {"NumPy": "numpy", "PyTorch": "torch", "JAX": "jax", "TensorFlow": "tensorflow", "pyarrow": "pyarrow",
              "tvm-ffi": "tvm_ffi", "PaddlePaddle": "paddle", "MindSpore": "mindspore", "Warp": "warp", "MLX": "mlx",
              "dlpack_mdspan.Tensor": None}.get(name)
    if module is None:
        return ""
    try:
        from importlib.metadata import version

        return version({"tvm_ffi": "apache-tvm-ffi", "tensorflow": "tensorflow-cpu", "paddle": "paddlepaddle",
                        "warp": "warp-lang"}.get(module, module))
    except Exception:  # noqa: BLE001 - e.g. tensorflow installed as "tensorflow"
        try:
            return getattr(__import__(module), "__version__", "")
        except ImportError:  # not installed for this flavour
            return ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    marker = item.get_closest_marker("matrix")
    path = os.environ.get("DLPM_MATRIX_FILE")
    if marker is None or not path:
        return
    # One row per test: its call outcome, or a failed setup. A skip in setup is a fixture
    # saying "not this flavour's framework" (PyTorch 1.13 on the modern interpreter): no row.
    if report.when == "call" or (report.when == "setup" and report.outcome == "failed"):
        framework, direction, route = marker.args
        case = item.callspec.id if hasattr(item, "callspec") else item.name
        row = {"flavour": FLAVOUR, "framework": framework, "version": _framework_version(framework),
               "direction": direction, "path": route, "case": case, "outcome": report.outcome}
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


@pytest.fixture
def np():
    import numpy

    return numpy


@pytest.fixture
def torch():
    if FLAVOUR != "legacy":
        pytest.skip("PyTorch 1.13 is tested with Debian's interpreter (legacy DLPack)")
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
