# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The malformed capsules our imports refuse (test_hostile.py's table: MALFORMED, each
refused with the error that names the rule by test_hand_made_capsules), given to the
peers' own imports: ``numpy.from_dlpack``, ``torch.from_dlpack``, ``tvm_ffi.from_dlpack``,
``jax.dlpack.from_dlpack``, ``tf.experimental.dlpack.from_dlpack``,
``paddle.utils.dlpack.from_dlpack`` and ``warp.from_dlpack``. Each peer runs in a child
process, so that a crash is an outcome like the others. docs/python-interop.md ("Hostile
producers") and docs/index.md give the table.

The capsules have no destructor (a Python one, test_hostile.py's, runs while a peer's
refusal is being raised and loses it); their memory is kept for the child's life.
"""
import os
import pathlib
import resource
import subprocess
import sys

import pytest

from test_hostile import MALFORMED

CASES = [str(fields) for fields, _ in MALFORMED]

# What each peer does with each: "accepted" (a tensor of no valid memory, or of memory laid
# out otherwise than the capsule says), "refused" (an exception), "crashed" (the process
# killed by a signal) or "legacy" (the peer asks for a legacy capsule, which has no version
# field to be wrong).
EXPECTED = {
    "{'ndim': -1}": ("refused", "crashed", "accepted", "refused", "refused", "accepted", "refused"),
    "{'ndim': 65, 'shape': " + str((1,) * 65) + "}": ("refused", "accepted", "accepted", "accepted", "accepted", "refused", "refused"),
    "{'dtype': (2, 32, 0)}": ("refused", "refused", "accepted", "refused", "accepted", "accepted", "accepted"),
    "{'dtype': (255, 32, 1)}": ("refused", "refused", "accepted", "refused", "refused", "refused", "refused"),
    "{'dtype': (2, 7, 1)}": ("refused", "refused", "accepted", "refused", "refused", "refused", "refused"),
    "{'device': (1, -1)}": ("accepted", "accepted", "accepted", "accepted", "accepted", "accepted", "accepted"),
    "{'device': (1, -2147483648)}": ("accepted", "accepted", "accepted", "accepted", "accepted", "accepted", "accepted"),
    "{'shape': None, 'ndim': 2}": ("crashed", "crashed", "crashed", "crashed", "crashed", "crashed", "refused"),
    "{'shape': (2, -3)}": ("refused", "refused", "accepted", "refused", "crashed", "accepted", "refused"),
    "{'shape': (4611686018427387904, 4)}": ("refused", "refused", "accepted", "refused", "crashed", "accepted", "refused"),
    "{'shape': (3, 2), 'strides': (-9223372036854775808, 1)}": ("accepted", "refused", "accepted", "refused", "refused", "accepted", "accepted"),  # NumPy: byte strides (0, 4)
    "{'shape': (3, 2), 'strides': (9223372036854775807, 1)}": ("accepted", "refused", "accepted", "refused", "refused", "accepted", "accepted"),  # NumPy: byte strides (-4, 4)
    "{'data': None}": ("accepted", "accepted", "accepted", "accepted", "accepted", "accepted", "accepted"),
    "{'byte_offset': 9223372036854775808}": ("accepted", "refused", "accepted", "crashed", "refused", "accepted", "accepted"),
    "{'byte_offset': 2}": ("accepted", "refused", "accepted", "accepted", "refused", "accepted", "accepted"),
    "{'data': 18446744073709551612, 'shape': (2,)}": ("accepted", "accepted", "accepted", "crashed", "accepted", "accepted", "accepted"),
    "{'version': (2, 0)}": ("refused", "refused", "legacy", "legacy", "legacy", "refused", "legacy"),
}
PEERS = ("numpy", "torch", "tvm_ffi", "jax", "tensorflow", "paddle", "warp")
# The child imports test_hostile.py from here, and this interpreter's dlpm_interop and _core.
CHILD_ENV = {**os.environ,
             "PYTHONPATH": os.pathsep.join([str(pathlib.Path(__file__).parent), *sys.path])}

# The child marks the lines of this protocol, among what a peer prints itself.
MARK = "@@"

CHILD = "MARK = %r\n" % MARK + r"""
import importlib
import sys
import test_hostile as th

peer = sys.argv[1]
module = importlib.import_module(peer)
# Each peer's import: a producer where it takes one (and asks for the capsule's version), a
# capsule where it takes only that (PyTorch's asked for a versioned one, TensorFlow's legacy).
take = {
    "numpy": lambda producer: module.from_dlpack(producer),
    "torch": lambda producer: module.from_dlpack(producer.__dlpack__(max_version=(1, 3))),
    "tvm_ffi": lambda producer: module.from_dlpack(producer),
    "jax": lambda producer: importlib.import_module("jax.dlpack").from_dlpack(producer),
    "tensorflow": lambda producer: module.experimental.dlpack.from_dlpack(producer.__dlpack__()),
    "paddle": lambda producer: module.utils.dlpack.from_dlpack(producer),
    "warp": lambda producer: module.from_dlpack(producer),
}[peer]
if peer == "warp":
    module.config.quiet = True
    module.init()


class Legacy(Exception):
    pass


class Producer:
    def __init__(self, fields):
        self.fields = fields

    def __dlpack__(self, max_version=None, **kwargs):
        versioned = max_version is not None and max_version[0] >= 1
        if not versioned and "version" in self.fields:
            raise Legacy  # a legacy capsule has no version field: not malformed there
        hand = th.Hand(**{**self.fields, "versioned": versioned})
        return th._capsule_new(hand.address, th.NAMES[versioned], None)

    def __dlpack_device__(self):
        return (th.KDLCPU, 0)


for key in sys.argv[2:]:
    producer = Producer(next(f for f, _ in th.CAPSULE_FIELDS if str(f) == key))
    print(MARK, key, flush=True)  # the case the process is in, should it die
    try:
        take(producer)
        print(MARK, "accepted", flush=True)
    except Legacy:
        print(MARK, "legacy", flush=True)
    except Exception:
        print(MARK, "refused", flush=True)
"""


def no_core_file():
    """A child that crashes leaves no core file behind."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def peer_outcomes(peer):
    """{case: outcome} for every malformed capsule through `peer`'s from_dlpack: one child
    process runs the cases in turn, and where one kills it, the next child goes on after it."""
    outcomes, left = {}, list(CASES)
    while left:
        child = subprocess.run([sys.executable, "-c", CHILD, peer, *left], capture_output=True, text=True,
                               timeout=300, env=CHILD_ENV, preexec_fn=no_core_file)
        lines = [line[len(MARK) + 1:] for line in child.stdout.splitlines() if line.startswith(MARK + " ")]
        for key, outcome in zip(lines[::2], lines[1::2]):
            outcomes[key] = outcome
        if len(lines) % 2:  # the child died inside this case
            assert child.returncode < 0, (child.returncode, child.stderr[-2000:])
            outcomes[lines[-1]] = "crashed"
        else:
            assert child.returncode == 0, child.stderr[-2000:]
        left = [key for key in left if key not in outcomes]
    return outcomes


@pytest.mark.parametrize("peer", PEERS)
def test_what_the_peers_import_does_with_the_capsules_ours_refuses(peer):
    assert set(EXPECTED) == set(CASES)
    got = peer_outcomes(peer)
    want = {key: EXPECTED[key][PEERS.index(peer)] for key in CASES}
    assert got == want
