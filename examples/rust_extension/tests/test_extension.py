# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Rust example extension (pip-installed by scripts/check-rust-extension) on NumPy 2,
PyTorch (through its exchange API: a spy on torch.Tensor.__dlpack__ proves it is not
called), JAX and our own dlpack_mdspan.Tensor."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import dlpm_rust_extension as ext


def as_numpy(t):
    """A tensor the extension returned, as NumPy reads it (zero-copy)."""
    assert type(t).__name__ == "Tensor" and type(t).__module__ == "dlpack_mdspan"
    return np.from_dlpack(t)


@pytest.fixture
def no_torch_dlpack(monkeypatch):
    calls = []
    original = torch.Tensor.__dlpack__

    def spy(self, *args, **kwargs):
        calls.append(kwargs)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "__dlpack__", spy)
    yield calls
    assert calls == [], "the exchange API path does not call __dlpack__"


def test_scale_numpy_any_layout():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(as_numpy(ext.scale(a, 2.0)), a * 2)
    r = a[::-1, ::2]  # negative and gapped strides
    np.testing.assert_array_equal(as_numpy(ext.scale(r, -1.0)), -r)
    b = np.broadcast_to(np.float32(3), (2, 2))  # zero strides, read-only: reading is fine
    np.testing.assert_array_equal(as_numpy(ext.scale(b, 2.0)), np.full((2, 2), 6, np.float32))


def test_scale_torch_through_the_exchange_api(no_torch_dlpack):
    assert hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()
    out = ext.scale(t, 0.5)
    assert torch.equal(torch.from_dlpack(out), t * 0.5)


def test_scale_jax_and_our_tensor():
    x = jnp.arange(4, dtype=jnp.float32)
    out = ext.scale(x, 3.0)
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(out)), np.arange(4, dtype=np.float32) * 3)
    # Our own Tensor in, through its exchange API.
    np.testing.assert_array_equal(as_numpy(ext.scale(out, 2.0)), np.arange(4, dtype=np.float32) * 6)


def test_fill_writes_in_place():
    a = np.zeros((2, 3), np.float32)
    assert ext.fill(a[:, ::2], 7.0) == 4
    np.testing.assert_array_equal(a, [[7, 0, 7], [7, 0, 7]])
    t = torch.zeros(3)
    assert ext.fill(t, 1.5) == 3
    assert t.tolist() == [1.5, 1.5, 1.5]


def test_map_values_calls_python_while_it_reads():
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(as_numpy(ext.map_values(a.T, lambda e: e * 10)), a.T * 10)
    # The callback's writer of the memory being read is refused, and nothing is written.
    with pytest.raises(BufferError, match="cannot be borrowed for writing: 16 of them are borrowed by a reader"):
        ext.map_values(a, lambda e: ext.fill(a, 0.0))
    np.testing.assert_array_equal(a, [[0, 1], [2, 3]])


def second_copy_path():
    """The same extension built into another file (scripts/check-rust-extension names it)."""
    path = os.environ.get("DLPM_RUST_EXTENSION_SECOND_COPY")
    if not path:
        pytest.skip("DLPM_RUST_EXTENSION_SECOND_COPY names no second build (scripts/check-rust-extension sets it)")
    return path


def load_copy(path, name):
    """The extension from `path`, loaded as a module of its own: another copy of the crate in
    the process, as another Rust extension built with dlpack-mdspan is."""
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def second_copy():
    module = load_copy(second_copy_path(), ext.__name__)
    assert module.__file__ != ext.__file__ and module.fill is not ext.fill
    return module


def test_another_rust_extension_sees_this_ones_borrows():
    other = second_copy()
    a = np.arange(4, dtype=np.float32)
    with pytest.raises(BufferError, match="cannot be borrowed for writing: 16 of them are borrowed by a reader"):
        ext.map_values(a, lambda e: other.fill(a, 0.0))
    with pytest.raises(BufferError, match="cannot be borrowed for writing"):
        other.map_values(a, lambda e: ext.fill(a[1:], 0.0))
    np.testing.assert_array_equal(a, [0, 1, 2, 3])
    assert other.fill(a, 1.0) == 4  # the borrows ended with their calls


# A test that fakes a missing module rolls sys.modules back (mock.patch.dict). The registry
# is published where that does not reach (an attribute of sys), so a copy that borrows first
# inside such a block and one that borrows after still share it. In a process of its own: the
# first borrow of this one was made long ago.
# What each child process of these tests starts with: this process's sys.path, and
# load_copy (as above).
CHILD_PRELUDE = """
import importlib.machinery, importlib.util, os, sys
sys.path[:0] = {path!r}
def load_copy(path, name):
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, path, loader=loader))
    loader.exec_module(module)
    return module
"""

ROLLBACK = CHILD_PRELUDE + """
import numpy as np
from unittest import mock
with mock.patch.dict(sys.modules):
    import dlpm_rust_extension as first
    first.fill(np.zeros(1, np.float32), 0.0)  # the process's first borrow: publishes
second = load_copy({second!r}, "dlpm_rust_extension")
a = np.arange(4, dtype=np.float32)
try:
    first.map_values(a, lambda e: second.fill(a, 9.0))
    print("granted", a.tolist())
except BufferError:
    print("refused", a.tolist())
"""


def test_the_registry_outlives_a_rollback_of_sys_modules():
    code = ROLLBACK.format(path=sys.path, second=second_copy_path())
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "refused [0.0, 1.0, 2.0, 3.0]", out.stdout


def test_fill_refuses_a_read_only_array_with_the_librarys_message():
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="the tensor is READ_ONLY but a writable tensor is required"):
        ext.fill(ro, 1.0)
    np.testing.assert_array_equal(ro, [0, 0, 0])


def test_a_conjugate_view_is_refused_for_writing(no_torch_dlpack):
    z = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
    assert ext.zero_complex(z.clone()) == 2
    grid = torch.tensor([[1 + 2j, 3], [4, 5j], [6, 7]], dtype=torch.complex64)
    assert ext.zero_complex(grid.T) == 6  # any rank, any strides (here transposed)
    assert torch.count_nonzero(grid) == 0
    c = z.conj()
    assert c.is_conj()
    with pytest.raises(BufferError, match="conjugate bit is set") as refused:
        ext.zero_complex(c)
    # the remedy a Rust caller can follow: no C option (dlpm_py_options) it cannot reach
    assert str(refused.value).endswith("call .resolve_conj() on it first (invalid argument)"), refused.value
    assert "dlpm_py_options" not in str(refused.value)
    assert torch.equal(z, torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64))
    n = torch._neg_view(torch.ones(2, dtype=torch.complex64))
    with pytest.raises(BufferError, match="negative bit is set") as refused:
        ext.zero_complex(n)
    assert "dlpm_py_options" not in str(refused.value)


def test_bad_arguments_raise_the_components_exceptions():
    with pytest.raises(TypeError, match="float64"):
        ext.scale(np.zeros(2), 1.0)
    with pytest.raises(TypeError):
        ext.scale("no tensor", 1.0)

    class Raising:
        def __dlpack__(self, **kwargs):
            raise ValueError("producer says no")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(ValueError, match="producer says no"):
        ext.scale(Raising(), 1.0)


def test_grid_returns_an_ndarray_with_its_strides():
    g = as_numpy(ext.grid(2, 3))
    np.testing.assert_array_equal(g, [[0, 1, 2], [10, 11, 12]])
    assert g.strides == (8, 16)  # column-major, as the ndarray was built
    assert torch.equal(torch.from_dlpack(ext.grid(2, 3)), torch.tensor([[0, 1, 2], [10, 11, 12]], dtype=torch.float64))


def test_host_memory_has_no_stream_to_order(no_torch_dlpack):
    assert ext.ready_stream(np.zeros(3, np.float32)) == ("none", 0)
    assert ext.ready_stream(torch.zeros(2, 2)) == ("none", 0)


def test_a_panic_becomes_a_python_exception():
    with pytest.raises(BaseException, match="a panic in the extension"):
        ext.panics()


# The extension imported with RTLD_GLOBAL, as some hosts import every module, before PyTorch
# and JAX, which then throw and catch C++ exceptions inside their own libraries. A facade
# built with libc++ whose shared runtime the extension needed brought LLVM's libunwind.so.1,
# and PyTorch's first exception aborted the process (dlpack-mdspan-sys now links libc++'s
# static archives; scripts/check-rust-extension builds one copy with libc++). In a process
# of its own, so that a crash is a failure with its signal.
RTLD_GLOBAL_IMPORT = CHILD_PRELUDE + """
sys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_NOW)
if {file!r} is None:
    import dlpm_rust_extension as ext
else:
    ext = load_copy({file!r}, "dlpm_rust_extension")
sys.setdlopenflags(os.RTLD_LOCAL | os.RTLD_NOW)
import numpy as np
import torch
for _ in range(3):
    for action in (lambda: torch.zeros(2) + torch.zeros(3), lambda: torch.zeros(2).view(3)):
        try:
            action()
            raise AssertionError("PyTorch raised nothing")
        except RuntimeError:
            pass
import jax
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp
def fails(x):
    raise ValueError("raised inside a host callback")
callback = jax.jit(lambda x: jax.pure_callback(fails, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
try:
    callback(jnp.ones(3)).block_until_ready()
    raise AssertionError("JAX raised nothing")
except Exception as e:
    assert "host callback" in str(e), e
a = np.ones(3, np.float32)
assert ext.fill(a, 2.0) == 3 and a.tolist() == [2.0, 2.0, 2.0]
print("exceptions caught")
"""


@pytest.mark.parametrize("which", ["this build", "the second build"])
def test_an_rtld_global_import_leaves_the_frameworks_exceptions_alone(which):
    file = None if which == "this build" else second_copy_path()  # None: imported by its name
    code = RTLD_GLOBAL_IMPORT.format(path=sys.path, file=file)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    where = file or ext.__file__
    assert out.returncode == 0, "%s: exit %d (a negative one is a signal)\n%s" % (where, out.returncode, out.stderr[-3000:])
    assert out.stdout.strip().endswith("exceptions caught"), out.stdout
