# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Python component's CUDA path without a GPU: a stub driver (stub_driver.c, loaded
through $DLPM_CUDA_DRIVER) logs every driver call, keeps "device" memory in host memory and
runs queued work lazily, so that a consumer that was never made to wait reads stale memory.

Fake CUDA producers stand in for PyTorch and CuPy: their __dlpack__(stream=s) makes s wait
for their own stream, where a fill of the memory is still queued. A dlpack_mdspan.Tensor
(dlpm_py_tensor_import, what dlpack_mdspan.from_dlpack does) re-exports it, and a fake
consumer reads the memory on its own stream: it must see the producer's write.
"""
import ctypes
import os
import subprocess
import sys

import pytest

import dlpm_interop as dl

KDLCPU, KDLCUDA, KDLCUDAHOST, KDLCUDAMANAGED = 1, 2, 3, 13
LEGACY, PER_THREAD = 1, 2

DRIVER = os.environ["DLPM_CUDA_DRIVER"]
stub = ctypes.CDLL(DRIVER)
stub.stub_log.restype = ctypes.c_char_p
stub.stub_fail.argtypes = [ctypes.c_char_p, ctypes.c_int]
stub.stub_launch_fill.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_size_t]
stub.stub_launch_read.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
stub.stub_run.argtypes = [ctypes.c_void_p]
stub.stub_pending.argtypes = [ctypes.c_void_p]
stub.stub_pending.restype = ctypes.c_size_t
stub.stub_current_context.restype = ctypes.c_void_p
stub.cuInit(0)  # the stub's own API needs no initialisation; the component calls cuInit itself


def cu(name, *args):
    r = getattr(stub, name)(*args)
    assert r == 0, f"{name} -> {r}"


def new_stream():
    s = ctypes.c_void_p()
    cu("cuStreamCreate", ctypes.byref(s), 1)
    return s.value


def new_event():
    e = ctypes.c_void_p()
    cu("cuEventCreate", ctypes.byref(e), 2)
    return e.value


def device_memory(nbytes):
    p = ctypes.c_ulonglong()
    cu("cuMemAlloc_v2", ctypes.byref(p), ctypes.c_size_t(nbytes))
    return p.value


def free_device_memory(address):
    cu("cuMemFree_v2", ctypes.c_ulonglong(address))


def calls(name=None):
    lines = stub.stub_log().decode().splitlines()
    return [line for line in lines if name is None or line.split(" ", 1)[0] == name]


def field(line, key):
    return next(part.split("=", 1)[1] for part in line.split() if part.startswith(key + "="))


def handle(value):
    return hex(value)


def read_floats(stream, address, n):
    """A consumer kernel on `stream` reading n floats at address, then the host waiting for it."""
    out = (ctypes.c_float * n)()
    assert stub.stub_launch_read(stream, address, out, 4 * n) == 0
    assert stub.stub_run(stream) == 0
    return list(out)


class FakeCudaProducer:
    """A CUDA producer as PyTorch and CuPy are: __dlpack__(stream=s) records an event on its
    own current stream and makes s wait on it (None and -1: no wait); its memory is filled
    with `value` by a kernel still queued on that stream."""

    def __init__(self, n=6, value=7.0, shape=None, strides=None, device=(KDLCUDA, 0), fill=True):
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
        if stream is not None and stream != -1 and stream != self.stream:
            cu("stub_event_record", ctypes.c_void_p(self.event), ctypes.c_void_p(self.stream))
            cu("stub_stream_wait_event", ctypes.c_void_p(stream), ctypes.c_void_p(self.event))
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
    p = FakeCudaProducer()
    assert read_floats(new_stream(), p.address, 6) == [0.0] * 6


def test_stream_order_is_kept_through_dunder_dlpack():
    """Import: __dlpack__ asked again with the library's stream, an event recorded there.
    Export: the consumer's stream waits on that event, and the consumer sees the write."""
    p = FakeCudaProducer()
    t = dl.reexport(p)
    library = library_stream_of(p)
    record = calls("cuEventRecord")[-1]
    assert field(record, "stream") == handle(library)
    event = field(record, "event")
    assert stub.stub_pending(p.stream) == 1  # nothing blocked the host: the fill is still queued
    consumer = new_stream()
    stub.stub_clear_log()
    t.__dlpack__(max_version=(1, 3), stream=consumer)
    assert [(field(c, "stream"), field(c, "event")) for c in calls("cuStreamWaitEvent")] == [(handle(consumer), event)]
    assert read_floats(consumer, p.address, 6) == [7.0] * 6


@pytest.mark.parametrize(
    "stream, waits_on",
    [(None, LEGACY), (LEGACY, LEGACY), (PER_THREAD, PER_THREAD), ("own", "own"), (-1, None)],
    ids=["None-legacy", "1-legacy", "2-per-thread", "handle", "-1-no-sync"],
)
def test_each_stream_value_makes_its_stream_wait(stream, waits_on):
    p = FakeCudaProducer()
    t = dl.reexport(p)
    event = field(calls("cuEventRecord")[-1], "event")
    own = new_stream()
    stream = own if stream == "own" else stream
    waits_on = own if waits_on == "own" else waits_on
    stub.stub_clear_log()
    t.__dlpack__(max_version=(1, 3), stream=stream)
    waits = [(field(c, "stream"), field(c, "event")) for c in calls("cuStreamWaitEvent")]
    assert waits == ([] if waits_on is None else [(handle(waits_on), event)])
    if waits_on is not None:
        assert read_floats(waits_on, p.address, 6) == [7.0] * 6


@pytest.mark.parametrize("stream", [0, -2, -(2**40)])
def test_stream_values_the_array_api_refuses(stream):
    """0 is ambiguous (1 or 2?): refused as PyTorch refuses it (an AssertionError), which is
    also a RuntimeError (NumPy's kind for a refused stream)."""
    t = dl.reexport(FakeCudaProducer())
    for kind in (AssertionError, RuntimeError):
        with pytest.raises(kind, match=rf"unsupported stream on CUDA: {stream}"):
            t.__dlpack__(max_version=(1, 3), stream=stream)
    with pytest.raises(TypeError, match="stream must be None or an integer for CUDA memory"):
        t.__dlpack__(max_version=(1, 3), stream="a stream")
    # an integer past int64 is no other stream: refused before it is narrowed
    for past in (2**63, -(2**63) - 1):
        with pytest.raises(OverflowError, match=rf"__dlpack__: stream = {past} is out of range"):
            t.__dlpack__(max_version=(1, 3), stream=past)


def test_a_producer_device_past_int32_is_malformed():
    """from_dlpack asks __dlpack_device__ before it imports (is a CUDA copy needed?): an
    answer past DLDevice's fields is a BufferError, not a device narrowed into another."""
    p = FakeCudaProducer()
    p.__dlpack_device__ = lambda: (2, 2**32)
    with pytest.raises(BufferError, match=r"device_id = 4294967296 is out of range"):
        dl.tensor_import(p, copy=True, device=(KDLCPU, 0))


def test_a_stream_for_a_cpu_tensor_is_refused_as_numpy_and_pytorch_refuse_it():
    t = dl.tensor((3,))
    for kind in (AssertionError, RuntimeError):
        with pytest.raises(kind, match=r"stream should be None on cpu."):
            t.__dlpack__(stream=0)
    t.__dlpack__(stream=-1)
    t.__dlpack__(stream=None)


def test_stream_order_is_kept_through_the_exchange_api():
    """A Tensor of a Tensor: the second import takes the exchange API, whose
    current_work_stream (the library's stream, made to wait on every import) gets the event."""
    p = FakeCudaProducer()
    first = dl.reexport(p)
    library = library_stream_of(p)
    stub.stub_clear_log()
    second = dl.reexport(first)
    assert len(p.asked) == 2  # the exchange API, not __dlpack__
    record = calls("cuEventRecord")[-1]
    assert field(record, "stream") == handle(library)
    consumer = new_stream()
    second.__dlpack__(max_version=(1, 3), stream=consumer)
    assert read_floats(consumer, p.address, 6) == [7.0] * 6
    del first, second


class Pre10CudaProducer(FakeCudaProducer):
    """A producer older than DLPack 1.0 (PyTorch 1.x): __dlpack__ takes `stream` alone."""

    def __dlpack__(self, stream=None):
        return super().__dlpack__(stream=stream)


def test_stream_order_is_kept_for_a_producer_older_than_dlpack_1():
    p = Pre10CudaProducer()
    t = dl.reexport(p)
    library = library_stream_of(p)  # asked again without max_version, with the stream
    assert len(p.asked) == 2
    assert field(calls("cuEventRecord")[-1], "stream") == handle(library)
    consumer = new_stream()
    t.__dlpack__(max_version=(1, 3), stream=consumer)
    assert read_floats(consumer, p.address, 6) == [7.0] * 6


def test_a_caller_stream_given_to_the_import_is_the_one_recorded():
    """dlpm_py_options.stream: the producer orders the caller's stream; the event goes there."""
    p = FakeCudaProducer()
    mine = new_stream()
    r = dl.consume(p, stream=mine)  # dlpm_py_import with a stream: the C API for extensions with their own
    assert p.asked == [mine] and r["device"] == (KDLCUDA, 0)
    assert read_floats(mine, p.address, 6) == [7.0] * 6


def test_events_come_from_a_pool():
    p = FakeCudaProducer()
    dl.reexport(p)  # the first event is created
    stub.stub_clear_log()
    for _ in range(20):
        t = dl.reexport(p)
        t.__dlpack__(max_version=(1, 3), stream=LEGACY)
        del t
    assert calls("cuEventCreate") == []
    assert len(calls("cuEventRecord")) == 40  # the producer's 20 and the imports' 20


def test_the_callers_context_is_restored():
    before = stub.stub_current_context()
    p = FakeCudaProducer()
    t = dl.reexport(p)
    t.__dlpack__(max_version=(1, 3), stream=new_stream())
    assert stub.stub_current_context() == before
    assert any(field(c, "ctx") == hex(0xC000) for c in calls("cuCtxSetCurrent"))


def test_cpu_tensors_never_load_the_driver():
    code = (
        "import dlpm_interop as dl\n"
        "t = dl.reexport(dl.tensor((4,)))\n"
        "t.__dlpack__(max_version=(1, 3)); t.__dlpack__(max_version=(1, 3), copy=True, dl_device=(1, 0))\n"
        "dl.reexport(t)\n"
        "class P:  # the __dlpack__ path\n"
        "    def __dlpack__(self, **kw): return t.__dlpack__(**kw)\n"
        "    def __dlpack_device__(self): return t.__dlpack_device__()\n"
        "dl.reexport(P()); dl.tensor_import(P(), copy=True); dl.reexport(t.__dlpack__())\n"
        "maps = open('/proc/self/maps').read()\n"
        "assert 'dlpm_cuda_stub' not in maps, 'the driver was loaded'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))


# ---- where an import says the tensor is ready (provenance version 2, stream_ordered<M>) ---

ORDER_NONE, ORDER_STREAM, ORDER_UNKNOWN = 0, 1, 2


def test_an_import_says_which_stream_the_tensor_is_ready_on():
    """dlpm_py_provenance.stream_order / ready_stream: the stream the producer was asked to
    order; through the exchange API its current_work_stream; unknown where nobody said."""
    p = FakeCudaProducer()
    mine = new_stream()
    assert dl.ready_stream(p, stream=mine) == (ORDER_STREAM, mine) and p.asked == [mine]
    assert read_floats(mine, p.address, 6) == [7.0] * 6  # and the producer did order it
    assert dl.ready_stream(p, stream=LEGACY) == (ORDER_STREAM, LEGACY)
    assert dl.ready_stream(p, stream=PER_THREAD, borrow=True) == (ORDER_STREAM, PER_THREAD)
    # no stream (PyTorch then orders nothing), -1, a bare capsule: nobody said
    assert dl.ready_stream(p) == (ORDER_UNKNOWN, None)
    assert dl.ready_stream(p, stream=-1) == (ORDER_UNKNOWN, None)
    assert dl.ready_stream(p.__dlpack__(max_version=(1, 3))) == (ORDER_UNKNOWN, None)
    # our Tensor through its exchange API: the library's stream, which the import made wait
    p = FakeCudaProducer()
    t = dl.reexport(p)
    library = library_stream_of(p)
    assert dl.ready_stream(t) == (ORDER_STREAM, library)
    assert dl.ready_stream(t, borrow=True) == (ORDER_STREAM, library)
    assert dl.ready_stream(t, exchange=False) == (ORDER_UNKNOWN, None)  # __dlpack__ with no stream
    # memory no stream orders
    pinned = FakeCudaProducer(device=(KDLCUDAHOST, 0))
    assert dl.ready_stream(pinned, stream=mine) == (ORDER_NONE, None)


def binding_modules():
    found = []
    for name in ("bound_nanobind", "bound_pybind11"):
        try:
            found.append(__import__(name))
        except ImportError:
            pass
    return found


@pytest.mark.parametrize("bound", binding_modules(), ids=lambda m: m.__name__)
def test_a_stream_ordered_parameter_is_told_its_stream(bound):
    """dp::stream_ordered<M> in nanobind and pybind11 functions: the same answer as the C
    import's, for a CUDA view and a CPU one."""
    p = FakeCudaProducer()
    t = dl.reexport(p)
    library = library_stream_of(p)
    assert bound.ready_on_cuda(t) == (ORDER_STREAM, library)  # the exchange API: no sync, its stream
    assert bound.ready_on_cuda(p) == (ORDER_UNKNOWN, None)  # __dlpack__ with no stream
    assert bound.ready_on_cpu(dl.tensor((3,), (2, 32, 1))) == (ORDER_NONE, None)
    with pytest.raises(TypeError, match="device=kDLCUDA"):
        bound.ready_on_cuda(dl.tensor((3,), (2, 32, 1)))


# ---- copies ----------------------------------------------------------------------------


def consumed(capsule):
    return dl.consume(capsule)


def floats(raw):
    return list(ctypes.cast(ctypes.create_string_buffer(bytes(raw), len(raw)), ctypes.POINTER(ctypes.c_float))[: len(raw) // 4])


def test_a_copy_to_the_cpu_is_complete_when_dlpack_returns():
    p = FakeCudaProducer()
    t = dl.reexport(p)
    r = consumed(t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=True))
    assert r["device"] == (KDLCPU, 0) and r["copied"] and not r["read_only"]
    assert floats(r["bytes"]) == [7.0] * 6
    assert calls("cuStreamSynchronize")


@pytest.mark.parametrize(
    "target, alloc, free",
    [
        ((KDLCUDA, 0), "cuMemAlloc_v2", "cuMemFree_v2"),
        ((KDLCUDAMANAGED, 0), "cuMemAllocManaged", "cuMemFree_v2"),
        ((KDLCUDAHOST, 0), "cuMemAllocHost_v2", "cuMemFreeHost"),
    ],
    ids=["device", "managed", "pinned"],
)
def test_device_copies_use_the_right_allocator_and_free_once(target, alloc, free):
    p = FakeCudaProducer()
    t = dl.reexport(p)
    live = stub.stub_live_allocations()
    consumer = new_stream()
    stub.stub_clear_log()
    capsule = t.__dlpack__(max_version=(1, 3), dl_device=target, copy=True, stream=consumer)
    [allocated] = calls(alloc)
    address = int(field(allocated, "ptr"), 16)
    assert stub.stub_live_allocations() == live + 1
    copies = [c for c in calls() if c.startswith("cuMemcpy")]
    assert copies and all(field(c, "stream") == handle(consumer) for c in copies)
    assert read_floats(consumer, address, 6) == [7.0] * 6
    r = dl.consume(capsule)
    assert r["device"] == target and r["copied"]
    del capsule, r
    assert [int(field(c, "ptr"), 16) for c in calls(free)] == [address]
    assert stub.stub_live_allocations() == live
    del t


def test_a_copy_is_freed_in_the_context_it_was_made_in():
    """Pinned memory for a tensor of device 1: allocated and freed in device 1's context."""
    p = FakeCudaProducer(device=(KDLCUDA, 1))
    t = dl.reexport(p)
    capsule = t.__dlpack__(max_version=(1, 3), dl_device=(KDLCUDAHOST, 0), copy=True, stream=new_stream())
    stub.stub_clear_log()
    del capsule
    log = calls()
    free = next(i for i, c in enumerate(log) if c.startswith("cuMemFreeHost"))
    assert log[free - 1] == f"cuCtxSetCurrent ctx={hex(0xC001)}", log


def test_a_copy_within_the_device_for_copy_true():
    p = FakeCudaProducer()
    t = dl.reexport(p)
    consumer = new_stream()
    r = dl.consume(t.__dlpack__(max_version=(1, 3), copy=True, stream=consumer))
    assert r["device"] == (KDLCUDA, 0) and r["copied"] and r["data_ptr"] != p.address


def test_strided_sources_are_copied_as_they_are():
    """Rows padded to 8 floats: one 2-D copy; a transposed view: every element in place."""
    padded = FakeCudaProducer(shape=(3, 4), strides=(8, 1), fill=False)
    values = (ctypes.c_float * 24)(*range(24))
    ctypes.memmove(padded.address, values, 80)  # the span: 2 * 8 + 3 + 1 floats
    r = consumed(dl.reexport(padded).__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0)))
    assert floats(r["bytes"]) == [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19]
    [copy2d] = calls("cuMemcpy2DAsync_v2")
    assert (field(copy2d, "width"), field(copy2d, "height"), field(copy2d, "src_pitch")) == ("16", "3", "32")
    transposed = FakeCudaProducer(shape=(3, 4), strides=(1, 3), fill=False)
    ctypes.memmove(transposed.address, values, 48)
    r = consumed(dl.reexport(transposed).__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0)))
    assert floats(r["bytes"]) == [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]
    assert r["strides"] in (None, (4, 1))


def test_from_dlpack_copies_cuda_memory():
    """from_dlpack(x, copy=True, device=...): imported as it is, copied by the driver after
    the producer's work, the producer's tensor let go at once."""
    p = FakeCudaProducer()
    released = dl.device_capsules_released()
    t = dl.tensor_import(p, copy=True, device=(KDLCPU, 0))
    assert t.device == (KDLCPU, 0)
    r = dl.consume(t)
    assert floats(r["bytes"]) == [7.0] * 6 and r["data_ptr"] != p.address
    assert dl.device_capsules_released() == released + 2  # the first (unused) capsule, and the source
    d = dl.tensor_import(p, copy=True)
    assert d.device == (KDLCUDA, 0) and dl.consume(d)["data_ptr"] != p.address


def test_a_cpu_tensor_is_copied_to_the_device():
    t = dl.tensor((4,), (2, 32, 1))
    dl.fill(t, bytes((ctypes.c_float * 4)(1, 2, 3, 4)))
    consumer = new_stream()
    copy = dl.reexport(t.__dlpack__(max_version=(1, 3), dl_device=(KDLCUDA, 0), stream=consumer))  # kept alive
    assert copy.device == (KDLCUDA, 0)
    assert read_floats(consumer, dl.consume(copy)["data_ptr"], 4) == [1, 2, 3, 4]
    del copy
    stub.stub_clear_log()
    del t  # its memory is read by a queued copy: the host waits for it before letting go
    assert calls("cuEventSynchronize")


def test_copy_false_still_forbids_a_copy():
    t = dl.reexport(FakeCudaProducer())
    with pytest.raises(BufferError, match="copy=False forbids one"):
        t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=False)


# ---- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, code, name, when",
    [
        ("cuEventRecord", 400, "CUDA_ERROR_INVALID_HANDLE", "import"),
        ("cuStreamWaitEvent", 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "export"),
        ("cuMemAlloc_v2", 2, "CUDA_ERROR_OUT_OF_MEMORY", "copy"),
        ("cuMemcpyAsync", 1, "CUDA_ERROR_INVALID_VALUE", "copy"),
        ("cuStreamSynchronize", 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "host copy"),
    ],
)
def test_a_failed_call_is_a_buffer_error_naming_it(call, code, name, when):
    p = FakeCudaProducer()
    released = dl.device_capsules_released()
    live = stub.stub_live_allocations()
    t = None if when == "import" else dl.reexport(p)
    stub.stub_fail(call.encode(), code)
    short = call.replace("_v2", "")
    with pytest.raises(BufferError, match=rf"{short} failed: {name} \({code}\)"):
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


def test_a_device_the_driver_does_not_have():
    with pytest.raises(BufferError, match=r"cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE \(101\)"):
        dl.reexport(FakeCudaProducer(device=(KDLCUDA, 5)))


def run_alone(code, driver):
    env = dict(os.environ, DLPM_CUDA_DRIVER=driver)
    prelude = (
        "import ctypes, dlpm_interop as dl\n"
        "def producer():\n"
        "    buffer = (ctypes.c_float * 4)()\n"
        "    class P:\n"
        "        def __dlpack_device__(self): return (2, 0)\n"
        "        def __dlpack__(self, **kw): return dl.device_capsule(ctypes.addressof(buffer), (4,), None, 32, 2, 0)\n"
        "    P.buffer = buffer\n"
        "    return P()\n"
    )
    return subprocess.run([sys.executable, "-c", prelude + code], env=env, capture_output=True, text=True)


@pytest.mark.parametrize(
    "driver, message",
    [
        ("/nonexistent/libcuda.so.1", r'needs the CUDA driver, and dlopen\("/nonexistent/libcuda.so.1"\) failed'),
        ("libc.so.6", "the CUDA driver libc.so.6 has no cuInit"),
    ],
    ids=["missing", "not-a-driver"],
)
def test_no_driver_is_a_buffer_error_naming_it(driver, message):
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
    r = run_alone(code, driver)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_a_failed_cu_init_is_a_buffer_error_naming_it():
    code = (
        f"stub = ctypes.CDLL({DRIVER!r})\n"
        "stub.stub_fail(b'cuInit', 100)\n"
        "try:\n"
        "    dl.reexport(producer())\n"
        "except BufferError as e:\n"
        "    assert 'cuInit failed: CUDA_ERROR_NO_DEVICE (100)' in str(e), str(e)\n"
        "    print('ok')\n"
    )
    r = run_alone(code, DRIVER)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
