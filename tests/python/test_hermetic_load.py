# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""libdlpack_mdspan_c.so loaded into an interpreter beside PyTorch or JAX.

The shared C facade must carry its C++ runtime privately and add no unwinder to the
process (ffi/CMakeLists.txt). A NEEDED libc++.so.1 used to bring LLVM's libunwind.so.1 into
the process, whose _Unwind_* interposed on libgcc_s's: the next C++ exception thrown inside
torch (c10::Error) or jaxlib (nanobind / XLA runtime errors) then segfaulted in
_Unwind_RaiseException (RTLD_LOCAL), or, with RTLD_GLOBAL, libc++abi's __cxa_throw and
personality took over and terminated on an exception libstdc++ had a handler for.

Each check runs in a child interpreter, so that a crash becomes a failure with a message
instead of killing pytest. CTest sets DLPM_C_SHARED_LIBRARY to the built library.
"""
import os
import signal
import subprocess
import sys

import pytest

FLAVOUR = os.environ.get("DLPM_PYTHON_FLAVOUR", "modern")
LIBRARY = os.environ.get("DLPM_C_SHARED_LIBRARY", "")

pytestmark = pytest.mark.skipif(not LIBRARY, reason="DLPM_C_SHARED_LIBRARY is not set (CTest sets it)")

MODES = ["RTLD_LOCAL", "RTLD_GLOBAL"]

# Loads the library first, before any framework, and checks that it still answers at the end.
PRELUDE = r"""
import ctypes
import sys

path, mode = sys.argv[1], sys.argv[2]
lib = ctypes.CDLL(path, mode=getattr(ctypes, mode))


class VersionInfo(ctypes.Structure):
    _fields_ = [("major", ctypes.c_int32), ("minor", ctypes.c_int32), ("patch", ctypes.c_int32),
                ("dlpack_major", ctypes.c_uint32), ("dlpack_minor", ctypes.c_uint32)]


def library_answers():
    info = VersionInfo()
    assert lib.dlpm_version(ctypes.byref(info)) == 0, "dlpm_version failed"
    lib.dlpm_status_string.restype = ctypes.c_char_p
    assert lib.dlpm_status_string(0), "dlpm_status_string returned NULL"
    return "%d.%d.%d" % (info.major, info.minor, info.patch)


library_answers()


def expect(exception_type, action, times=5):
    for _ in range(times):
        try:
            action()
        except exception_type:
            continue
        raise AssertionError("%r did not raise %s" % (action, exception_type.__name__))
"""

TORCH = r"""
import torch

# Each of these is a C++ exception (c10::Error and friends) thrown and caught inside
# libtorch, then translated to a Python exception.
expect(RuntimeError, lambda: torch.zeros(2) + torch.zeros(3))
expect(RuntimeError, lambda: torch.zeros(2).view(3))
expect(IndexError, lambda: torch.zeros(2)[5])
assert (torch.ones(2) + torch.ones(2)).sum().item() == 4.0
print("HERMETIC-OK torch", torch.__version__, "dlpack_mdspan", library_answers())
"""

# The backend is left to JAX's defaults: its start-up probes PJRT plugins and throws and
# catches C++ exceptions while doing so (the crash first seen with jnp.arange).
JAX_DEFAULT_BACKEND = r"""
import jax.numpy as jnp

assert jnp.arange(6.0).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
print("HERMETIC-OK jax", "dlpack_mdspan", library_answers())
"""

JAX_JIT_ERRORS = r"""
import jax

jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp


def fails_in_python(x):
    raise ValueError("raised inside a host callback")


# A jitted host callback that raises: jaxlib catches the Python error as a C++ exception
# (nanobind's python_error) and rethrows it as an XLA runtime error.
callback = jax.jit(lambda x: jax.pure_callback(fails_in_python, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
expect(Exception, lambda: callback(jnp.ones(3)).block_until_ready())

# A jitted shape error, raised while tracing under jaxlib's C++ dispatch.
add = jax.jit(lambda a, b: a + b)
expect(TypeError, lambda: add(jnp.zeros(2), jnp.zeros(3)))
expect(TypeError, lambda: jnp.zeros(3).reshape(4))
assert add(jnp.ones(2), jnp.ones(2)).tolist() == [2.0, 2.0]
print("HERMETIC-OK jax-jit", jax.__version__, "dlpack_mdspan", library_answers())
"""


def run_beside(framework_code, mode, drop_env=()):
    env = {k: v for k, v in os.environ.items() if k not in drop_env}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + framework_code, LIBRARY, mode],
        capture_output=True, text=True, timeout=600, env=env)
    tail = "\n--- stdout ---\n%s\n--- stderr (tail) ---\n%s" % (proc.stdout[-2000:], proc.stderr[-4000:])
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = "signal %d" % -proc.returncode
        pytest.fail(
            "the interpreter died of %s after ctypes.CDLL(%r, mode=%s): a C++ exception thrown "
            "inside the framework crashed: the library's C++ runtime or an unwinder leaks into "
            "the process (readelf -d: NEEDED libc++/libc++abi/libunwind?)%s" % (name, LIBRARY, mode, tail),
            pytrace=False)
    assert proc.returncode == 0, "child interpreter exited with %d%s" % (proc.returncode, tail)
    assert "HERMETIC-OK" in proc.stdout, "child interpreter did not finish%s" % tail
    return proc.stdout.strip().splitlines()[-1]


def test_library_exists():
    assert os.path.isfile(LIBRARY), LIBRARY


@pytest.mark.parametrize("mode", MODES)
def test_torch_exceptions_beside_library(mode):
    if FLAVOUR != "legacy":
        pytest.skip("PyTorch is tested with Debian's interpreter")
    print(run_beside(TORCH, mode))


@pytest.mark.parametrize("mode", MODES)
def test_jax_default_backend_beside_library(mode):
    if FLAVOUR != "modern":
        pytest.skip("JAX is tested with the modern interpreter")
    print(run_beside(JAX_DEFAULT_BACKEND, mode, drop_env=("JAX_PLATFORMS", "JAX_PLATFORM_NAME")))


@pytest.mark.parametrize("mode", MODES)
def test_jax_jit_exceptions_beside_library(mode):
    if FLAVOUR != "modern":
        pytest.skip("JAX is tested with the modern interpreter")
    print(run_beside(JAX_JIT_ERRORS, mode))
