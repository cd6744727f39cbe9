# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The pip package `dlpack_mdspan`, installed from the wheel (scripts/check-wheel runs this
in a fresh venv that also sees the frameworks venv's PyTorch and JAX): the build-time paths,
`python -m dlpack_mdspan`, `inspect` on every kind of producer, `from_dlpack` and `Tensor`."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import dlpack_mdspan as dm


def test_build_time_paths_hold_the_package():
    assert os.path.isfile(os.path.join(dm.cmake_dir(), "dlpack_mdspanConfig.cmake"))
    assert os.path.isfile(os.path.join(dm.include_dir(), "dlpack_mdspan_python.h"))
    assert os.path.isfile(os.path.join(dm.include_dir(), "dlpack", "dlpack.h"))
    assert os.path.isfile(os.path.join(dm.include_dir(), "dlpack_mdspan", "nanobind.hpp"))
    assert os.path.isfile(os.path.join(dm.library_dir(), "libdlpack_mdspan_python.a"))
    assert dm.cmake_dir().startswith(os.path.dirname(dm.__file__))


@pytest.mark.parametrize("flag, function", [("--cmake_dir", dm.cmake_dir), ("--include_dir", dm.include_dir),
                                            ("--library_dir", dm.library_dir), ("--version", lambda: dm.__version__),
                                            ("--source_commit", dm.source_commit)])
def test_python_m_dlpack_mdspan(flag, function):
    out = subprocess.run([sys.executable, "-m", "dlpack_mdspan", flag], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == function()


def test_version_is_the_projects():
    assert dm.__version__.count(".") == 2 and dm.__version__ != "unknown"


def test_source_commit_names_a_commit():
    # The wheel of scripts/check-wheel is built from a git checkout (which compares it with
    # the checkout's HEAD): a full commit id, "+dirty" when tracked files had changes.
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", dm.source_commit()), dm.source_commit()


def test_inspect_numpy(capsys):
    info = dm.inspect(np.ones((2, 3), np.float32))
    table = capsys.readouterr().out
    for line in ("path            __dlpack__", "capsule         dltensor_versioned", "dtype           float32 (2, 32, 1)",
                 "shape           (2, 3)", "device          kDLCPU (1, 0)", "flags           none", "passes          True"):
        assert line in table, table
    assert info["path"] == "__dlpack__" and info["dlpack_version"][0] == 1
    assert info["strides"] in (None, (3, 1))  # NumPy passes NULL strides for C-contiguous arrays
    assert info["valid"] and info["passes"] and info["reason"] is None


def test_inspect_strides_offset_flags_and_requirements():
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    view = base[1:, ::2]
    view.flags.writeable = False
    info = dm.inspect(view, show=False, dtype="float64", ndim=2, shape=(3, None), writable=True)
    assert info["shape"] == (3, 3) and info["strides"] == (6, 2)
    assert info["data"] + info["byte_offset"] == view.ctypes.data
    assert info["read_only"] and not info["is_copied"]
    assert info["valid"] and not info["passes"]
    assert "READ_ONLY" in info["reason"]
    wrong = dm.inspect(view, show=False, dtype="float32")
    assert not wrong["passes"] and "dtype float64 does not match the required float32" in wrong["reason"]
    order = dm.inspect(view, show=False, order="C")
    assert not order["passes"]
    assert dm.inspect(view, show=False, dtype=(2, 64, 1), order=None)["passes"]
    assert not dm.inspect(view, show=False, dtype="float64x2")["passes"]  # a name with lanes is one
    for near_miss in ("float33", "float64x1", "Float64"):  # only dlpm_dtype_name's own spellings
        with pytest.raises(ValueError, match="names no DLPack dtype"):
            dm.inspect(view, dtype=near_miss)


def test_inspect_gives_the_itemsize_and_the_coalesced_byte_loops():
    base = np.arange(48, dtype=np.float32).reshape(4, 12)
    assert dm.inspect(base, show=False)["coalesced"] == ((), 48)  # compact: one run
    info = dm.inspect(base[:, :6], show=False)  # rows of 6 within rows of 12
    assert info["itemsize"] == 4 and info["coalesced"] == (((4, 48),), 6)
    assert dm.inspect(base.T, show=False)["coalesced"] == (((12, 4), (4, 48)), 1)
    assert dm.inspect(base[::-1, ::-1], show=False)["coalesced"] == (((48, -4),), 1)
    assert dm.inspect(np.broadcast_to(np.float64(1), (3, 5)), show=False)["coalesced"] == (((15, 0),), 1)
    assert dm.inspect(base[:0], show=False)["coalesced"] == ((), 0)  # nothing addressed


def test_inspect_our_tensor_names_the_exchange_api():
    t = dm.from_dlpack(np.zeros((2, 2), np.int16))
    info = dm.inspect(t, show=False)
    assert info["path"] == "exchange API" and info["capsule"] is None
    assert info["dtype"] == "int16" and info["strides"] == (2, 1)
    assert info["stream_order"] == "none" and info["ready_stream"] is None  # CPU memory: no stream orders it


def test_inspect_pytorch_names_the_exchange_api():
    torch = pytest.importorskip("torch")
    info = dm.inspect(torch.ones(3, 2, dtype=torch.bfloat16).t(), show=False)
    assert info["path"] == "exchange API" and info["capsule"] is None
    assert info["dtype"] == "bfloat16" and info["shape"] == (2, 3) and info["strides"] == (1, 2)


def test_inspect_jax_names_the_legacy_capsule():
    jnp = pytest.importorskip("jax.numpy")
    info = dm.inspect(jnp.ones((2, 3), dtype=jnp.float32), show=False)
    assert info["path"] == "__dlpack__" and info["capsule"] == "dltensor" and info["dlpack_version"] is None
    assert info["read_only"]  # a legacy capsule cannot say, so the import is read-only
    assert "legacy (pre-1.0)" in dm._table(info)


def test_inspect_consumes_a_bare_capsule():
    capsule = np.arange(3.0).__dlpack__(max_version=(1, 0))
    info = dm.inspect(capsule, show=False)
    assert info["path"] == "capsule" and info["capsule"] == "dltensor_versioned"
    assert "used_dltensor_versioned" in repr(capsule)


def test_from_dlpack_is_a_zero_copy_tensor_or_a_copy():
    a = np.arange(6.0).reshape(2, 3)
    t = dm.from_dlpack(a)
    assert isinstance(t, dm.Tensor) and type(t).__module__ == "dlpack_mdspan"
    assert np.shares_memory(np.from_dlpack(t), a)
    c = dm.from_dlpack(a, copy=True)
    assert not np.shares_memory(np.from_dlpack(c), a)
    np.testing.assert_array_equal(np.from_dlpack(c), a)
    with pytest.raises(BufferError):  # NumPy cannot copy to another device
        dm.from_dlpack(a, device=(2, 0))
    with pytest.raises(ValueError, match="from_dlpack: copy must be None or a boolean, not <class 'str'>"):
        dm.from_dlpack(a, copy="False")  # a string is no boolean ("False" is true): not a copy
    assert np.shares_memory(np.from_dlpack(dm.from_dlpack(a, copy=np.False_)), a)
    with pytest.raises(TypeError, match="dlpack_mdspan.Tensor objects are made by C and C\\+\\+ extensions"):
        dm.Tensor()
