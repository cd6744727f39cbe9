# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Python component's ROCm path without a GPU: a stub HIP runtime (stub_hip_runtime.c,
loaded through $DLPM_HIP_RUNTIME) logs every call, keeps "device" memory in host memory and
runs queued work lazily, so that a consumer that was never made to wait reads stale memory
(the CUDA stub's simulated device, with HIP's entry points).

Fake ROCm producers stand in for PyTorch and CuPy on ROCm: their __dlpack__(stream=s) makes
s wait for their own stream, where a fill of the memory is still queued. A
dlpack_mdspan.Tensor (dlpm_py_tensor_import, what dlpack_mdspan.from_dlpack does) re-exports
it, and a fake consumer reads the memory on its own stream: it must see the producer's write.
The array API's stream values for ROCm: None and 0 the default stream, -1 no
synchronisation, 1 and 2 refused, other values stream handles.
"""
import ctypes
import os
import subprocess
import sys

import pytest

import dlpm_interop as dl

KDLCPU, KDLCUDA, KDLROCM, KDLROCMHOST = 1, 2, 10, 11
DEFAULT = 0

RUNTIME = os.environ["DLPM_HIP_RUNTIME"]
stub = ctypes.CDLL(RUNTIME)
stub.stub_log.restype = ctypes.c_char_p
stub.stub_fail.argtypes = [ctypes.c_char_p, ctypes.c_int]
stub.stub_launch_fill.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_size_t]
stub.stub_launch_read.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
stub.stub_run.argtypes = [ctypes.c_void_p]
stub.stub_pending.argtypes = [ctypes.c_void_p]
stub.stub_pending.restype = ctypes.c_size_t
stub.hipGetErrorName.restype = ctypes.c_char_p
stub.hipInit(0)  # the stub's own API needs no initialisation; the component calls hipInit itself


def hip(name, *args):
    r = getattr(stub, name)(*args)
    assert r == 0, f"{name} -> {r}"


def new_stream():
    s = ctypes.c_void_p()
    hip("hipStreamCreateWithFlags", ctypes.byref(s), 1)
    return s.value


def new_event():
    e = ctypes.c_void_p()
    hip("hipEventCreateWithFlags", ctypes.byref(e), 2)
    return e.value


def device_memory(nbytes):
    p = ctypes.c_void_p()
    hip("hipMalloc", ctypes.byref(p), ctypes.c_size_t(nbytes))
    return p.value


def calls(name=None):
    lines = stub.stub_log().decode().splitlines()
    return [line for line in lines if name is None or line.split(" ", 1)[0] == name]


def field(line, key):
    return next(part.split("=", 1)[1] for part in line.split() if part.startswith(key + "="))


def handle(value):
    return "(nil)" if value == 0 else hex(value)  # how the stub's log prints a stream


def read_floats(stream, address, n):
    """A consumer kernel on `stream` reading n floats at address, then the host waiting for it."""
    out = (ctypes.c_float * n)()
    assert stub.stub_launch_read(stream, address, out, 4 * n) == 0
    assert stub.stub_run(stream) == 0
    return list(out)


def floats(raw):
    return list(ctypes.cast(ctypes.create_string_buffer(bytes(raw), len(raw)), ctypes.POINTER(ctypes.c_float))[: len(raw) // 4])


class FakeRocmProducer:
    """A ROCm producer: __dlpack__(stream=s) records an event on its own stream and makes s
    wait on it (-1: no wait; None and 0: the default stream waits); its memory is filled with
    `value` by a kernel still queued on its stream."""

    def __init__(self, n=6, value=7.0, shape=None, strides=None, device=(KDLROCM, 0), fill=True):
        self.shape = shape or (n,)
        self.strides = strides
        count = 1
        for e in self.shape:
            count *= e
        span = count if strides is None else 1 + sum((e - 1) * s for e, s in zip(self.shape, strides))
        self.address = device_memory(4 * span)
        self.stream = new_stream()
        self.event = new_event()
        self.device = device
        self.asked = []
        if fill:
            assert stub.stub_launch_fill(self.stream, self.address, value, span) == 0

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.asked.append(stream)
        if stream != -1 and stream != self.stream:
            waiting = DEFAULT if stream is None else stream
            hip("stub_event_record", ctypes.c_void_p(self.event), ctypes.c_void_p(self.stream))
            hip("stub_stream_wait_event", ctypes.c_void_p(waiting), ctypes.c_void_p(self.event))
        return dl.device_capsule(self.address, self.shape, self.strides, 32, *self.device)


@pytest.fixture(autouse=True)
def clean_stub():
    stub.stub_clear_fails()
    stub.stub_clear_log()
    yield
    stub.stub_clear_fails()


def library_stream_of(producer):
    """The stream the Tensor's import passed to the producer (the library's own)."""
    assert producer.asked[0] is None and isinstance(producer.asked[1], int), producer.asked
    return producer.asked[1]


# ---- stream order ----------------------------------------------------------------------


def test_a_consumer_that_is_not_made_to_wait_reads_stale_memory():
    """The stub's model of a GPU, without our Tensor: the producer's fill is still queued."""
    p = FakeRocmProducer()
    assert read_floats(new_stream(), p.address, 6) == [0.0] * 6


def test_stream_order_is_kept_through_dunder_dlpack():
    """Import: __dlpack__ asked again with the library's stream, an event recorded there.
    Export: the consumer's stream waits on that event, and the consumer sees the write."""
    p = FakeRocmProducer()
    t = dl.reexport(p)
    library = library_stream_of(p)
    record = calls("hipEventRecord")[-1]
    assert field(record, "stream") == handle(library)
    event = field(record, "event")
    assert stub.stub_pending(p.stream) == 1  # nothing blocked the host: the fill is still queued
    consumer = new_stream()
    stub.stub_clear_log()
    t.__dlpack__(max_version=(1, 3), stream=consumer)
    assert [(field(c, "stream"), field(c, "event")) for c in calls("hipStreamWaitEvent")] == [(handle(consumer), event)]
    assert read_floats(consumer, p.address, 6) == [7.0] * 6


@pytest.mark.parametrize(
    "stream, waits_on",
    [(None, DEFAULT), (0, DEFAULT), ("own", "own"), (-1, None)],
    ids=["None-default", "0-default", "handle", "-1-no-sync"],
)
def test_each_stream_value_makes_its_stream_wait(stream, waits_on):
    p = FakeRocmProducer()
    t = dl.reexport(p)
    event = field(calls("hipEventRecord")[-1], "event")
    own = new_stream()
    stream = own if stream == "own" else stream
    waits_on = own if waits_on == "own" else waits_on
    stub.stub_clear_log()
    t.__dlpack__(max_version=(1, 3), stream=stream)
    waits = [(field(c, "stream"), field(c, "event")) for c in calls("hipStreamWaitEvent")]
    assert waits == ([] if waits_on is None else [(handle(waits_on), event)])
    if waits_on is not None:
        assert read_floats(waits_on, p.address, 6) == [7.0] * 6


@pytest.mark.parametrize("stream", [1, 2, -2, -(2**40)])
def test_stream_values_the_array_api_refuses(stream):
    """1 and 2 are CUDA's default streams, not ROCm's: refused as for CUDA's 0 (an
    AssertionError, as PyTorch raises, which is also a RuntimeError, as NumPy raises)."""
    t = dl.reexport(FakeRocmProducer())
    for kind in (AssertionError, RuntimeError):
        with pytest.raises(kind, match=rf"unsupported stream on ROCm: {stream}"):
            t.__dlpack__(max_version=(1, 3), stream=stream)
    with pytest.raises(TypeError, match="stream must be None or an integer for ROCm memory"):
        t.__dlpack__(max_version=(1, 3), stream="a stream")
    for past in (2**63, -(2**63) - 1):
        with pytest.raises(OverflowError, match=rf"__dlpack__: stream = {past} is out of range"):
            t.__dlpack__(max_version=(1, 3), stream=past)


def test_stream_order_is_kept_through_the_exchange_api():
    """A Tensor of a Tensor: the second import takes the exchange API, whose
    current_work_stream (the library's stream, made to wait on every import) gets the event."""
    p = FakeRocmProducer()
    first = dl.reexport(p)
    library = library_stream_of(p)
    stub.stub_clear_log()
    second = dl.reexport(first)
    assert len(p.asked) == 2  # the exchange API, not __dlpack__
    assert field(calls("hipEventRecord")[-1], "stream") == handle(library)
    consumer = new_stream()
    second.__dlpack__(max_version=(1, 3), stream=consumer)
    assert read_floats(consumer, p.address, 6) == [7.0] * 6
    del first, second


def test_a_caller_stream_given_to_the_import_is_the_one_recorded():
    """dlpm_py_options.stream: the producer orders the caller's stream."""
    p = FakeRocmProducer()
    mine = new_stream()
    r = dl.consume(p, stream=mine)
    assert p.asked == [mine] and r["device"] == (KDLROCM, 0)
    assert read_floats(mine, p.address, 6) == [7.0] * 6


def test_the_callers_device_is_restored():
    p = FakeRocmProducer(device=(KDLROCM, 1))
    assert stub.stub_current_device() == 0
    t = dl.reexport(p)
    t.__dlpack__(max_version=(1, 3), stream=new_stream())
    assert stub.stub_current_device() == 0
    assert [field(c, "device") for c in calls("hipSetDevice")][:2] == ["1", "0"]


ORDER_NONE, ORDER_STREAM, ORDER_UNKNOWN = 0, 1, 2


def test_an_import_says_which_stream_the_tensor_is_ready_on():
    p = FakeRocmProducer()
    mine = new_stream()
    assert dl.ready_stream(p, stream=mine) == (ORDER_STREAM, mine) and p.asked == [mine]
    assert dl.ready_stream(p, stream=-1) == (ORDER_UNKNOWN, None)
    t = dl.reexport(FakeRocmProducer())
    assert dl.ready_stream(t)[0] == ORDER_STREAM  # the library's stream, through the exchange API
    pinned = FakeRocmProducer(device=(KDLROCMHOST, 0))
    assert dl.ready_stream(pinned, stream=mine) == (ORDER_NONE, None)


# ---- copies ------------------------------------------------------------------------------


def test_a_copy_to_the_cpu_is_complete_when_dlpack_returns():
    p = FakeRocmProducer()
    t = dl.reexport(p)
    r = dl.consume(t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=True))
    assert r["device"] == (KDLCPU, 0) and r["copied"]
    assert floats(r["bytes"]) == [7.0] * 6
    assert calls("hipStreamSynchronize")


@pytest.mark.parametrize(
    "target, alloc, free",
    [((KDLROCM, 0), "hipMalloc", "hipFree"), ((KDLROCMHOST, 0), "hipHostMalloc", "hipHostFree")],
    ids=["device", "pinned"],
)
def test_device_copies_use_the_right_allocator_and_free_once(target, alloc, free):
    p = FakeRocmProducer()
    t = dl.reexport(p)
    live = stub.stub_live_allocations()
    consumer = new_stream()
    stub.stub_clear_log()
    capsule = t.__dlpack__(max_version=(1, 3), dl_device=target, copy=True, stream=consumer)
    [allocated] = calls(alloc)
    address = int(field(allocated, "ptr"), 16)
    assert stub.stub_live_allocations() == live + 1
    copies = [c for c in calls() if c.startswith("hipMemcpy")]
    assert copies and all(field(c, "stream") == handle(consumer) for c in copies)
    assert read_floats(consumer, address, 6) == [7.0] * 6
    r = dl.consume(capsule)
    assert r["device"] == target and r["copied"]
    del capsule, r
    assert [int(field(c, "ptr"), 16) for c in calls(free)] == [address]
    assert stub.stub_live_allocations() == live
    del t


def test_a_copy_is_freed_on_the_device_it_was_made_on():
    p = FakeRocmProducer(device=(KDLROCM, 1))
    t = dl.reexport(p)
    capsule = t.__dlpack__(max_version=(1, 3), dl_device=(KDLROCMHOST, 0), copy=True, stream=new_stream())
    stub.stub_clear_log()
    del capsule
    [freed] = calls("hipHostFree")
    assert field(freed, "device") == "1"
    assert stub.stub_current_device() == 0


def test_strided_sources_are_copied_as_they_are():
    """Rows padded to 8 floats: one 2-D copy; a transposed view: every element in place."""
    padded = FakeRocmProducer(shape=(3, 4), strides=(8, 1), fill=False)
    values = (ctypes.c_float * 24)(*range(24))
    ctypes.memmove(padded.address, values, 80)
    r = dl.consume(dl.reexport(padded).__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0)))
    assert floats(r["bytes"]) == [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19]
    [copy2d] = calls("hipMemcpy2DAsync")
    assert (field(copy2d, "width"), field(copy2d, "height"), field(copy2d, "src_pitch")) == ("16", "3", "32")
    assert field(copy2d, "kind") == "4"  # hipMemcpyDefault
    transposed = FakeRocmProducer(shape=(3, 4), strides=(1, 3), fill=False)
    ctypes.memmove(transposed.address, values, 48)
    r = dl.consume(dl.reexport(transposed).__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0)))
    assert floats(r["bytes"]) == [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]


def test_from_dlpack_copies_rocm_memory():
    p = FakeRocmProducer()
    released = dl.device_capsules_released()
    t = dl.tensor_import(p, copy=True, device=(KDLCPU, 0))
    assert t.device == (KDLCPU, 0)
    r = dl.consume(t)
    assert floats(r["bytes"]) == [7.0] * 6 and r["data_ptr"] != p.address
    assert dl.device_capsules_released() == released + 2  # the first (unused) capsule, and the source
    d = dl.tensor_import(p, copy=True)
    assert d.device == (KDLROCM, 0) and dl.consume(d)["data_ptr"] != p.address


def test_a_cpu_tensor_is_copied_to_the_device():
    t = dl.tensor((4,), (2, 32, 1))
    dl.fill(t, bytes((ctypes.c_float * 4)(1, 2, 3, 4)))
    consumer = new_stream()
    copy = dl.reexport(t.__dlpack__(max_version=(1, 3), dl_device=(KDLROCM, 0), stream=consumer))
    assert copy.device == (KDLROCM, 0)
    assert read_floats(consumer, dl.consume(copy)["data_ptr"], 4) == [1, 2, 3, 4]
    del copy
    stub.stub_clear_log()
    del t  # its memory is read by a queued copy: the host waits for it before letting go
    assert calls("hipEventSynchronize")


def test_no_copy_between_runtimes():
    """ROCm memory to CUDA memory: neither runtime copies it."""
    t = dl.reexport(FakeRocmProducer())
    with pytest.raises(BufferError, match=r"cannot copy this tensor from device \(10, 0\) to \(2, 0\)"):
        t.__dlpack__(max_version=(1, 3), dl_device=(KDLCUDA, 0))


# ---- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, code, name, when",
    [
        ("hipEventRecord", 400, "hipErrorInvalidHandle", "import"),
        ("hipStreamWaitEvent", 700, "hipErrorIllegalAddress", "export"),
        ("hipMalloc", 2, "hipErrorOutOfMemory", "copy"),
        ("hipMemcpyAsync", 1, "hipErrorInvalidValue", "copy"),
        ("hipStreamSynchronize", 700, "hipErrorIllegalAddress", "host copy"),
    ],
)
def test_a_failed_call_is_a_buffer_error_naming_it(call, code, name, when):
    p = FakeRocmProducer()
    released = dl.device_capsules_released()
    live = stub.stub_live_allocations()
    t = None if when == "import" else dl.reexport(p)
    stub.stub_fail(call.encode(), code)
    with pytest.raises(BufferError, match=rf"{call} failed: {name} \({code}\), in the HIP runtime"):
        if when == "import":
            dl.reexport(p)
        elif when == "export":
            t.__dlpack__(max_version=(1, 3), stream=new_stream())
        elif when == "copy":
            t.__dlpack__(max_version=(1, 3), copy=True, stream=new_stream())
        else:
            t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0))
    stub.stub_clear_fails()
    del t
    assert dl.device_capsules_released() == released + 2  # nothing of the producer's is kept
    assert stub.stub_live_allocations() == live  # no copy's memory is left behind


def test_a_device_the_runtime_does_not_have():
    with pytest.raises(BufferError, match=r"hipSetDevice failed: hipErrorInvalidDevice \(101\)"):
        dl.reexport(FakeRocmProducer(device=(KDLROCM, 1 + 4)))


def run_alone(code, runtime):
    env = dict(os.environ, DLPM_HIP_RUNTIME=runtime)
    prelude = (
        "import ctypes, dlpm_interop as dl\n"
        "def producer():\n"
        "    buffer = (ctypes.c_float * 4)()\n"
        "    class P:\n"
        "        def __dlpack_device__(self): return (10, 0)\n"
        "        def __dlpack__(self, **kw): return dl.device_capsule(ctypes.addressof(buffer), (4,), None, 32, 10, 0)\n"
        "    P.buffer = buffer\n"
        "    return P()\n"
    )
    return subprocess.run([sys.executable, "-c", prelude + code], env=env, capture_output=True, text=True)


@pytest.mark.parametrize(
    "runtime, message",
    [
        ("/nonexistent/libamdhip64.so", r'ROCm tensor needs the HIP runtime, and dlopen\("/nonexistent/libamdhip64.so"\) failed'),
        ("libc.so.6", "the HIP runtime libc.so.6 has no hipInit"),
    ],
    ids=["missing", "not-a-runtime"],
)
def test_no_runtime_is_a_buffer_error_naming_it(runtime, message):
    code = (
        "import re\n"
        "for attempt in range(2):\n"
        "    try:\n"
        "        dl.reexport(producer())\n"
        "    except BufferError as e:\n"
        f"        assert re.search({message!r}, str(e)), str(e)\n"
        "    else:\n"
        "        raise SystemExit('no error')\n"
        "print('ok')\n"
    )
    r = run_alone(code, runtime)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_a_failed_hip_init_is_a_buffer_error_naming_it():
    code = (
        f"stub = ctypes.CDLL({RUNTIME!r})\n"
        "stub.stub_fail(b'hipInit', 100)\n"
        "try:\n"
        "    dl.reexport(producer())\n"
        "except BufferError as e:\n"
        "    assert 'hipInit failed: hipErrorNoDevice (100), in the HIP runtime' in str(e), str(e)\n"
        "    print('ok')\n"
    )
    r = run_alone(code, RUNTIME)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_cpu_and_cuda_tensors_never_load_the_hip_runtime():
    code = (
        "import dlpm_interop as dl\n"
        "t = dl.reexport(dl.tensor((4,)))\n"
        "t.__dlpack__(max_version=(1, 3)); t.__dlpack__(max_version=(1, 3), copy=True, dl_device=(1, 0))\n"
        "dl.reexport(t)\n"
        "maps = open('/proc/self/maps').read()\n"
        "assert 'dlpm_hip_stub' not in maps, 'the runtime was loaded'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))
