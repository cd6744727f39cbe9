# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""peer_suite.py itself: what its rewrite changes and keeps, and that a run fails when it
tested the peer alone (a test with subtests is judged as a whole), re-exported into the wrong
type, or deselected a test that does not exist. Run by the legacy and modern suites, over a made-up peer package."""
import ast
import os
import subprocess
import sys
import textwrap

import peer_suite

ADAPTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer_suite.py")

PEER_SOURCE = '''\
"""docstring"""
from __future__ import annotations
from .helper import make

class Old(list):
    def __dlpack__(self, stream=None):
        return super().__dlpack__(stream=None)

def test_it(np, raises):
    x = make()
    x.flags.writeable = False
    np.from_dlpack(x, copy=True)
    np.from_dlpack(x=x)
    tf.from_dlpack(x.__dlpack__())
    raises(TypeError, x.__dlpack__, stream=1)
    assert x.__dlpack_device__() == (1, 0)
    assert __file__.endswith('.py')
'''

EXPECTED = '''\
"""docstring"""
from __future__ import annotations
import peer.tests
import peer_suite as _dlpm_peer_suite
_dlpm_reexport = _dlpm_peer_suite.reexporter('mod', 'fn', 'dlpack_mdspan.Tensor')
from peer.tests.helper import make

class Old(list):

    def __dlpack__(self, stream=None):
        return super().__dlpack__(stream=None)

def test_it(np, raises):
    x = make()
    x.flags.writeable = False
    np.from_dlpack(_dlpm_reexport(x), copy=True)
    np.from_dlpack(x=_dlpm_reexport(x))
    tf.from_dlpack(_dlpm_reexport(x).__dlpack__())
    raises(TypeError, _dlpm_reexport(x).__dlpack__, stream=1)
    assert _dlpm_reexport(x).__dlpack_device__() == (1, 0)
    assert 'peer.py'.endswith('.py')
'''


def test_rewrite_changes_producers_at_their_use_only():
    text, sites = peer_suite.rewrite(PEER_SOURCE, "peer.py", ["from_dlpack"], "peer.tests", "mod:fn",
                                     "dlpack_mdspan.Tensor")
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(EXPECTED)), text
    assert sites == {"consumer call": 2, "producer method": 3, "relative import": 1, "__file__ use": 1}


FAKE_TESTS = '''\
import unittest

from .helper import from_dlpack, make

def test_consumer():
    assert from_dlpack(make()) == (3,)

def test_method():
    assert make().__dlpack_device__() == (1, 0)

def test_no_producer():
    assert make().sum() == 3.0

class TestSubtests(unittest.TestCase):
    def test_each_subtest_reexports(self):  # audited as one test, not as each subtest
        for n in (1, 2):
            with self.subTest(n=n):
                assert from_dlpack(make()) == (3,)
'''

FAKE_HELPER = '''\
import numpy as np

def make():
    return np.arange(3.0)

def from_dlpack(x):  # a consumer of what both NumPy 1.24 and 2.4 read the same way
    return tuple(x.shape)

def identity(obj):
    return obj
'''


def run_adapter(tmp_path, reexport="dlpm_interop:reexport", deselect=None, file=os.path.join("tests", "test_fake.py")):
    """peer_suite.py over a made-up package `fakepeer` (tests/test_fake.py, or `file`): (rc, output)."""
    package = tmp_path / "site" / "fakepeer"
    (package / "tests").mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "tests" / "__init__.py").write_text("")
    (package / "tests" / "helper.py").write_text(FAKE_HELPER)
    (package / "tests" / "test_fake.py").write_text(FAKE_TESTS)
    args = [sys.executable, ADAPTER, "--package", "fakepeer", "--file", file,
            "--reexport", reexport, "--out", str(tmp_path / "out")]
    if deselect is not None:
        (tmp_path / "deselect.txt").write_text(textwrap.dedent(deselect))
        args += ["--deselect", str(tmp_path / "deselect.txt")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")]))
    child = subprocess.run(args + ["--", "-q", "-p", "no:randomly"], capture_output=True, text=True, env=env,
                           timeout=300)
    return child.returncode, child.stdout + child.stderr


def test_a_test_without_a_reexport_fails(tmp_path):
    rc, out = run_adapter(tmp_path)
    assert rc != 0, out
    assert "1 failed, 3 passed" in out, out
    assert "test_no_producer" in out and "passed without a re-export" in out, out
    generated = (tmp_path / "out" / "test_fake.py").read_text()
    assert generated.startswith("# Generated from ") and "fakepeer" in generated.splitlines()[0]
    assert "from fakepeer.tests.helper import from_dlpack, make" in generated


def test_deselections_take_their_reason_and_must_exist(tmp_path):
    rc, out = run_adapter(tmp_path, deselect="""\
        # a comment
        test_no_producer  # it hands no producer over
        """)
    assert rc == 0, out
    assert "3 passed" in out and "1 deselected" in out, out
    assert "test_fake.py::test_no_producer: it hands no producer over" in out, out

    rc, out = run_adapter(tmp_path, deselect="test_renamed  # gone\n")
    assert rc != 0 and "deselections that name no test of this file: ['test_renamed']" in out, out

    rc, out = run_adapter(tmp_path, deselect="test_no_producer\n")
    assert rc != 0 and "needs its reason" in out, out


def test_a_file_outside_the_package_keeps_its_absolute_imports(tmp_path):
    """--file as an absolute path: a test file from the peer's source checkout (PyTorch's and
    CuPy's wheels carry none; scripts/check-gpu) sits in no subpackage. Its imports are the
    package's own (once, its folders were made a subpackage of it, and the import failed)."""
    checkout = tmp_path / "checkout" / "tests"
    checkout.mkdir(parents=True)
    (checkout / "test_fake.py").write_text(FAKE_TESTS.replace("from .helper import", "from fakepeer.tests.helper import"))
    rc, out = run_adapter(tmp_path, deselect="test_no_producer  # no producer\n", file=str(checkout / "test_fake.py"))
    assert rc == 0 and "3 passed" in out, out


def test_a_reexport_of_another_type_fails(tmp_path):
    rc, out = run_adapter(tmp_path, reexport="fakepeer.tests.helper:identity")
    assert rc != 0, out
    assert "returned a numpy.ndarray, not a dlpack_mdspan.Tensor" in out, out
