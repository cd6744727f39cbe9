# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dlpack_mdspan: zero-copy, validated DLPack for C, C++ and Python extensions.

For extension authors, the build-time paths (as nanobind's and pybind11's packages give):

    cmake -Ddlpack_mdspan_DIR=$(python -m dlpack_mdspan --cmake_dir) ...
    find_package(dlpack_mdspan CONFIG REQUIRED COMPONENTS python)

At run time: ``Tensor`` (an owned tensor any DLPack consumer takes), ``from_dlpack(x)``
(x imported, validated and re-exported as a Tensor; for CUDA and ROCm memory its producer's
stream order is kept, and copies with ``copy=True`` or ``device=`` are made through the CUDA
driver or the HIP runtime, loaded then), and ``inspect(x)`` (what x's producer actually hands over, and whether it meets
given requirements). ``InvalidStreamError`` (a RuntimeError and an AssertionError) is what a
Tensor's ``__dlpack__`` raises for a stream value the array API refuses;
``CopyForbiddenError`` (a BufferError and a ValueError) what it raises for ``copy=False``
where only a copy reaches ``dl_device``.
"""
import os as _os

from ._core import CopyForbiddenError, InvalidStreamError, Tensor, from_dlpack
from ._core import inspect as _inspect

__all__ = ["CopyForbiddenError", "InvalidStreamError", "Tensor", "cmake_dir", "from_dlpack", "include_dir", "inspect", "library_dir", "source_commit", "__version__"]

_HERE = _os.path.dirname(_os.path.abspath(__file__))


def _version():
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("dlpack-mdspan")
    except PackageNotFoundError:  # imported from a build tree, not installed
        return "unknown"


__version__ = _version()


def include_dir() -> str:
    """The folder holding <dlpack_mdspan/...>, <dlpack_mdspan.h>, <dlpack_mdspan_python.h>
    and <dlpack/dlpack.h>."""
    return _os.path.join(_HERE, "include")


def library_dir() -> str:
    """The folder holding libdlpack_mdspan_c (shared and static) and libdlpack_mdspan_python."""
    return _os.path.join(_HERE, "lib")


def cmake_dir() -> str:
    """The folder holding dlpack_mdspanConfig.cmake: pass it as -Ddlpack_mdspan_DIR=..."""
    return _os.path.join(_HERE, "lib", "cmake", "dlpack_mdspan")


def source_commit() -> str:
    """The commit this package was built from (``git rev-parse HEAD``, with "+dirty" where
    tracked files differed from it), or "unknown" (built outside the project's git checkout,
    or imported from a build tree)."""
    try:
        with open(_os.path.join(_HERE, "source_commit"), encoding="ascii") as f:
            return f.read().strip() or "unknown"
    except OSError:
        return "unknown"


_FIELDS = [
    ("path", "path"), ("capsule", "capsule"), ("DLPack version", "dlpack_version"), ("device", "device"),
    ("dtype", "dtype"), ("shape", "shape"), ("strides", "strides"), ("byte_offset", "byte_offset"),
    ("flags", "flags"), ("valid", "valid"), ("passes", "passes"), ("reason", "reason"),
]


def _table(info):
    shown = dict(info)
    shown["device"] = f"{info['device_name']} {info['device']}"
    shown["dtype"] = f"{info['dtype']} {info['dtype_code']}"
    shown["dlpack_version"] = ("legacy (pre-1.0)" if info["dlpack_version"] is None
                               else "%d.%d" % info["dlpack_version"])
    if info["pre_1_0_call"]:
        shown["path"] = info["path"] + " (without the DLPack 1.0 keywords: the producer refused them)"
    if info["strides"] is None:
        shown["strides"] = "None (row-major)"
    flags = [name for name, key in (("READ_ONLY", "read_only"), ("IS_COPIED", "is_copied"),
                                    ("IS_SUBBYTE_TYPE_PADDED", "subbyte_padded")) if info[key]]
    shown["flags"] = " | ".join(flags) or "none"
    width = max(len(label) for label, _ in _FIELDS)
    return "\n".join(f"{label:<{width}}  {shown[key]}" for label, key in _FIELDS if key != "reason" or info[key])


def inspect(x, *, dtype=None, ndim=None, shape=None, order=None, writable=False, device=None, show=True):
    """What ``x``'s producer hands over, without keeping it: the path taken (its type's
    exchange API, ``__dlpack__``, or a bare capsule), the capsule's name, the DLPack version,
    device, dtype by name, shape, strides, byte_offset, flags, and whether the tensor is
    valid and meets the requirements given (dtype: a name or (code, bits, lanes); ndim;
    shape, None for any extent; order 'C', 'F' or 'A'; writable; device (type, id)), with
    the reason when not. Prints a table unless ``show`` is False; returns the dict.

    The tensor is imported as ``dlpm_py_import`` would with the default options and
    released before returning (a bare capsule is consumed: a capsule is taken once).
    """
    info = _inspect(x, dtype=dtype, ndim=ndim, shape=shape, order=order, writable=writable, device=device)
    if show:
        print(_table(info))
    return info
