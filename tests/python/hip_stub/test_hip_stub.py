# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Python component's ROCm path without a GPU: a stub HIP runtime (stub_hip_runtime.c,
loaded through $DLPM_HIP_RUNTIME: HIP's entry points over the CUDA stub's simulated device)
logs every call, keeps "device" memory in host memory and runs queued work lazily, so that a
consumer that was never made to wait reads stale memory.

The tests every runtime passes are in ../stub_runtime.py (imported below, run here with the
HIP runtime's cases): stream order at import and export for each stream value, refusals,
copies between ROCm memory and the CPU, every error path. The array API's stream values for
ROCm: None and 0 the default stream, -1 no synchronisation, 1 and 2 refused, other values
stream handles. This file adds what is ROCm's own (devices set rather than contexts).
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dlpm_interop as dl  # noqa: E402
from stub_runtime import *  # noqa: E402,F401,F403 - the shared tests, collected here
from stub_runtime import FakeProducer, StubRuntime, field, run_alone  # noqa: E402

KDLCPU, KDLCUDA, KDLROCM, KDLROCMHOST = 1, 2, 10, 11
DEFAULT = 0

RT = StubRuntime(
    "DLPM_HIP_RUNTIME",
    (KDLROCM, 0),
    kind="ROCm",
    runtime="the HIP runtime",
    memory_kinds=[(KDLROCM, "device")],
    default_stream=DEFAULT,
    init="hipInit",
    init_failure="hipInit failed: hipErrorNoDevice (100), in the HIP runtime",
    stream_create="hipStreamCreateWithFlags",
    event_create="hipEventCreateWithFlags",
    malloc="hipMalloc",
    event_record="hipEventRecord",
    stream_wait_event="hipStreamWaitEvent",
    stream_synchronize="hipStreamSynchronize",
    event_synchronize="hipEventSynchronize",
    memcpy_prefix="hipMemcpy",
    memcpy_2d="hipMemcpy2DAsync",
    missing_device=r"hipSetDevice failed: hipErrorInvalidDevice \(101\)",
    stream_cases=[
        (None, DEFAULT, "None-default"),
        (0, DEFAULT, "0-default"),
        ("own", "own", "handle"),
        (-1, None, "-1-no-sync"),
    ],
    # 1 and 2 are CUDA's default streams, not ROCm's
    refused_streams=[(1, "1"), (2, "2"), (-2, "-2"), (-(2**40), "-1099511627776")],
    allocators=[
        ((KDLROCM, 0), "hipMalloc", "hipFree", "device"),
        ((KDLROCMHOST, 0), "hipHostMalloc", "hipHostFree", "pinned"),
    ],
    # the stub's symbol, its status, the call and error name the message gives, and when
    failures=[
        ("hipEventRecord", 400, "hipEventRecord", "hipErrorInvalidHandle", "import", "hipEventRecord"),
        ("hipStreamWaitEvent", 700, "hipStreamWaitEvent", "hipErrorIllegalAddress", "export", "hipStreamWaitEvent"),
        ("hipMalloc", 2, "hipMalloc", "hipErrorOutOfMemory", "copy", "hipMalloc"),
        ("hipMemcpyAsync", 1, "hipMemcpyAsync", "hipErrorInvalidValue", "copy", "hipMemcpyAsync"),
        ("hipStreamSynchronize", 700, "hipStreamSynchronize", "hipErrorIllegalAddress", "host copy",
         "hipStreamSynchronize"),
    ],
    absents=[
        ("/nonexistent/libamdhip64.so",
         r'this ROCm tensor needs the HIP runtime, and dlopen\("/nonexistent/libamdhip64.so"\) failed', "missing"),
        ("libc.so.6", "the HIP runtime libc.so.6 has no hipInit", "not-a-runtime"),
    ],
)
stub = RT.lib
stub.stub_current_device.restype = int


class FakeRocmProducer(FakeProducer):
    runtime = RT


def test_the_callers_device_is_restored():
    """HIP has no contexts: the tensor's device is set around each call, and the caller's
    device set again after it."""
    p = FakeRocmProducer(device=(KDLROCM, 1))
    assert stub.stub_current_device() == 0
    t = dl.reexport(p)
    t.__dlpack__(max_version=(1, 3), stream=RT.new_stream())
    assert stub.stub_current_device() == 0
    assert [field(c, "device") for c in RT.calls("hipSetDevice")][:2] == ["1", "0"]


def test_a_copy_is_freed_on_the_device_it_was_made_on():
    p = FakeRocmProducer(device=(KDLROCM, 1))
    t = dl.reexport(p)
    capsule = t.__dlpack__(max_version=(1, 3), dl_device=(KDLROCMHOST, 0), copy=True, stream=RT.new_stream())
    stub.stub_clear_log()
    del capsule
    [freed] = RT.calls("hipHostFree")
    assert field(freed, "device") == "1"
    assert stub.stub_current_device() == 0
    del t


ORDER_NONE, ORDER_STREAM, ORDER_UNKNOWN = 0, 1, 2


def test_an_import_says_which_stream_the_tensor_is_ready_on():
    p = FakeRocmProducer()
    mine = RT.new_stream()
    assert dl.ready_stream(p, stream=mine) == (ORDER_STREAM, mine) and p.asked == [mine]
    assert dl.ready_stream(p, stream=-1) == (ORDER_UNKNOWN, None)
    p = FakeRocmProducer()
    t = dl.reexport(p)
    assert dl.ready_stream(t) == (ORDER_STREAM, p.asked[0])  # the library's stream, through the exchange API
    pinned = FakeRocmProducer(device=(KDLROCMHOST, 0))
    assert dl.ready_stream(pinned, stream=mine) == (ORDER_NONE, None)  # memory no stream orders


def test_no_copy_between_runtimes():
    """ROCm memory to CUDA memory: neither runtime copies it."""
    t = dl.reexport(FakeRocmProducer())
    with pytest.raises(BufferError, match=r"cannot copy this tensor from device \(10, 0\) to \(2, 0\)"):
        t.__dlpack__(max_version=(1, 3), dl_device=(KDLCUDA, 0))


def test_the_default_names_are_tried_newest_first(tmp_path):
    """Without $DLPM_HIP_RUNTIME, ROCm 7's runtime is tried first, then ROCm 6's, then the
    development link: a ROCm 7 machine without the development package was refused. The
    stub stands in under both versioned names (found through LD_LIBRARY_PATH, before the
    system's); a failed call's message names the file that was loaded."""
    for name in ("libamdhip64.so.7", "libamdhip64.so.6"):
        (tmp_path / name).symlink_to(RT.path)
    code = (
        "import ctypes\n"
        f"stub = ctypes.CDLL({str(tmp_path / 'libamdhip64.so.7')!r})\n"
        "stub.stub_fail.argtypes = [ctypes.c_char_p, ctypes.c_int]\n"
        "stub.stub_fail(b'hipEventRecord', 400)\n"
        "try:\n"
        "    dl.reexport(producer())\n"
        "except BufferError as e:\n"
        "    print(e)\n"
    )
    r = run_alone(code, RT, "", LD_LIBRARY_PATH=str(tmp_path))
    assert "hipEventRecord failed: hipErrorInvalidHandle (400), in the HIP runtime libamdhip64.so.7" in r.stdout, r
