# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What the stub-runtime suites share (cuda_stub/test_cuda_stub.py, hip_stub/test_hip_stub.py):
the stub library seen through ctypes, a fake producer of device memory, and the tests that
hold for every device runtime, written once. Each suite names its runtime in a module-level
``RT`` (a StubRuntime) and imports the tests with ``from stub_runtime import *``: pytest
collects them there, with ``rt`` that module's RT and the runtime's own cases as parameters.

The stubs (cuda_stub/stub_driver.c, and hip_stub/stub_hip_runtime.c over it) log every call,
keep "device" memory in host memory and run queued work lazily, so that a consumer that was
never made to wait reads stale memory.
"""
import ctypes
import os
import re
import subprocess
import sys

import pytest

import dlpm_interop as dl

KDLCPU = 1
KDLCUDAMANAGED = 13  # the one memory kind of the stubs that the host can read
ORDER_STREAM = 1  # dlpm_py_provenance.stream_order: ready on ready_stream


class StubRuntime:
    """A stub runtime: its library (from the environment variable the component reads), the
    names of its entry points, and the cases of the shared tests that differ by runtime."""

    def __init__(self, environment, memory, **names):
        self.environment = environment
        self.path = os.environ[environment]
        self.memory = memory  # the (device_type, device_id) of the runtime's device memory
        self.__dict__.update(names)
        lib = ctypes.CDLL(self.path)
        lib.stub_log.restype = ctypes.c_char_p
        lib.stub_fail.argtypes = [ctypes.c_char_p, ctypes.c_int]
        lib.stub_launch_fill.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_size_t]
        lib.stub_launch_read.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        lib.stub_run.argtypes = [ctypes.c_void_p]
        lib.stub_pending.argtypes = [ctypes.c_void_p]
        lib.stub_pending.restype = ctypes.c_size_t
        getattr(lib, self.init)(0)  # the stub's own API needs no initialisation; the component initialises itself
        self.lib = lib

    def call(self, name, *args):
        r = getattr(self.lib, name)(*args)
        assert r == 0, f"{name} -> {r}"

    def new_stream(self):
        s = ctypes.c_void_p()
        self.call(self.stream_create, ctypes.byref(s), 1)
        return s.value

    def new_event(self):
        e = ctypes.c_void_p()
        self.call(self.event_create, ctypes.byref(e), 2)
        return e.value

    def device_memory(self, nbytes):
        p = ctypes.c_void_p()  # both allocators write one pointer-sized address
        self.call(self.malloc, ctypes.byref(p), ctypes.c_size_t(nbytes))
        return p.value

    def calls(self, name=None):
        lines = self.lib.stub_log().decode().splitlines()
        return [line for line in lines if name is None or line.split(" ", 1)[0] == name]

    def read_floats(self, stream, address, n):
        """A consumer kernel on `stream` reading n floats at address, then the host waiting for it."""
        out = (ctypes.c_float * n)()
        assert self.lib.stub_launch_read(stream, address, out, 4 * n) == 0
        assert self.lib.stub_run(stream) == 0
        return list(out)


def field(line, key):
    return next(part.split("=", 1)[1] for part in line.split() if part.startswith(key + "="))


def handle(value):
    return "(nil)" if value == 0 else hex(value)  # a stream as the stubs' log prints it


def floats(raw):
    return list(ctypes.cast(ctypes.create_string_buffer(bytes(raw), len(raw)), ctypes.POINTER(ctypes.c_float))[: len(raw) // 4])


class FakeProducer:
    """A device producer as PyTorch and CuPy are: __dlpack__(stream=s) records an event on its
    own current stream and makes s wait on it (None and -1: no wait); its memory is filled
    with `value` by a kernel still queued on that stream. Subclasses name the runtime."""

    runtime = None

    def __init__(self, n=6, value=7.0, shape=None, strides=None, device=None, fill=True):
        rt = self.runtime
        self.shape = shape or (n,)
        self.strides = strides
        count = 1
        for e in self.shape:
            count *= e
        span = count if strides is None else 1 + sum((e - 1) * s for e, s in zip(self.shape, strides))
        self.address = rt.device_memory(4 * span)
        self.stream = rt.new_stream()
        self.event = rt.new_event()
        self.device = device or rt.memory
        self.asked = []
        self.devices_asked = 0
        if fill:
            assert rt.lib.stub_launch_fill(self.stream, self.address, value, span) == 0

    def __dlpack_device__(self):
        self.devices_asked += 1
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.asked.append(stream)
        if stream is not None and stream != -1 and stream != self.stream:
            self.runtime.call("stub_event_record", ctypes.c_void_p(self.event), ctypes.c_void_p(self.stream))
            self.runtime.call("stub_stream_wait_event", ctypes.c_void_p(stream), ctypes.c_void_p(self.event))
        return dl.device_capsule(self.address, self.shape, self.strides, 32, *self.device)


def library_stream_of(producer):
    """The stream the Tensor's import passed to the producer (the library's own), in its one
    __dlpack__ call: asked its device first, a producer of device memory is never asked with no
    stream (JAX's would block the host until its data is ready; PyTorch's would order the
    legacy default stream) and never asked twice."""
    assert len(producer.asked) == 1 and isinstance(producer.asked[0], int), producer.asked
    return producer.asked[0]


def run_alone(code, rt, path, **environment):
    """`code` in a new interpreter whose runtime is the file `path` (and `environment`), after
    a prelude that defines producer(): a tensor of the runtime's device memory (host memory
    underneath)."""
    env = dict(os.environ, **{rt.environment: path}, **environment)
    kind, device_id = rt.memory
    prelude = (
        "import ctypes, dlpm_interop as dl\n"
        "def producer():\n"
        "    buffer = (ctypes.c_float * 4)()\n"
        "    class P:\n"
        f"        def __dlpack_device__(self): return ({kind}, {device_id})\n"
        f"        def __dlpack__(self, **kw): return dl.device_capsule(ctypes.addressof(buffer), (4,), None, 32, {kind}, {device_id})\n"
        "    P.buffer = buffer\n"
        "    return P()\n"
    )
    return subprocess.run([sys.executable, "-c", prelude + code], env=env, capture_output=True, text=True)


# ---- the shared tests' fixtures: the suite's runtime and its own cases --------------------


@pytest.fixture
def rt(request):
    return request.module.RT


@pytest.fixture(autouse=True)
def clean_stub(request):
    lib = request.module.RT.lib
    lib.stub_clear_fails()
    lib.stub_clear_log()
    yield
    lib.stub_clear_fails()


def pytest_generate_tests(metafunc):
    """The cases that differ by runtime, from the suite's RT: (parameters..., id) tuples."""
    for arg in ("stream_case", "refused_stream", "allocator", "failure", "absent", "memory_kind"):
        if arg in metafunc.fixturenames:
            cases = getattr(metafunc.module.RT, arg + "s")
            metafunc.parametrize(arg, [c[:-1] for c in cases], ids=[c[-1] for c in cases])


def producer(rt, **kw):
    return type("Producer", (FakeProducer,), {"runtime": rt})(**kw)


# ---- stream order ----------------------------------------------------------------------


def test_a_consumer_that_is_not_made_to_wait_reads_stale_memory(rt):
    """The stub's model of a GPU, without our Tensor: the producer's fill is still queued."""
    p = producer(rt)
    assert rt.read_floats(rt.new_stream(), p.address, 6) == [0.0] * 6


def test_stream_order_is_kept_through_dunder_dlpack(rt):
    """Import: __dlpack__ asked with the library's stream, an event recorded there.
    Export: the consumer's stream waits on that event, and the consumer sees the write."""
    p = producer(rt)
    t = dl.reexport(p)
    library = library_stream_of(p)
    record = rt.calls(rt.event_record)[-1]
    assert field(record, "stream") == handle(library)
    event = field(record, "event")
    assert rt.lib.stub_pending(p.stream) == 1  # nothing blocked the host: the fill is still queued
    consumer = rt.new_stream()
    rt.lib.stub_clear_log()
    t.__dlpack__(max_version=(1, 3), stream=consumer)
    waits = [(field(c, "stream"), field(c, "event")) for c in rt.calls(rt.stream_wait_event)]
    assert waits == [(handle(consumer), event)]
    assert rt.read_floats(consumer, p.address, 6) == [7.0] * 6


def test_each_stream_value_makes_its_stream_wait(rt, stream_case):
    stream, waits_on = stream_case
    p = producer(rt)
    t = dl.reexport(p)
    event = field(rt.calls(rt.event_record)[-1], "event")
    own = rt.new_stream()
    stream = own if stream == "own" else stream
    waits_on = own if waits_on == "own" else waits_on
    rt.lib.stub_clear_log()
    t.__dlpack__(max_version=(1, 3), stream=stream)
    waits = [(field(c, "stream"), field(c, "event")) for c in rt.calls(rt.stream_wait_event)]
    assert waits == ([] if waits_on is None else [(handle(waits_on), event)])
    if waits_on is not None:
        assert rt.read_floats(waits_on, p.address, 6) == [7.0] * 6


def test_stream_values_the_array_api_refuses(rt, refused_stream):
    """Refused as PyTorch refuses them (an AssertionError), which is also a RuntimeError
    (NumPy's kind for a refused stream)."""
    (stream,) = refused_stream
    t = dl.reexport(producer(rt))
    for kind in (AssertionError, RuntimeError):
        with pytest.raises(kind, match=rf"unsupported stream on {rt.kind}: {stream}"):
            t.__dlpack__(max_version=(1, 3), stream=stream)
    message = f"__dlpack__: stream must be None or an integer for {rt.kind} memory, not <class 'str'>"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$") as caught:  # the one decoding (dlpm_py_stream_integer)
        t.__dlpack__(max_version=(1, 3), stream="a stream")
    assert caught.type is TypeError
    del caught  # its traceback holds this frame, and t's device capsule, in a cycle
    # an integer past int64 is no other stream: refused before it is narrowed
    for past in (2**63, -(2**63) - 1):
        with pytest.raises(OverflowError, match=rf"__dlpack__: stream = {past} is out of range"):
            t.__dlpack__(max_version=(1, 3), stream=past)


def test_a_refused_stream_value_is_refused_for_pinned_memory_and_a_producers_wait(rt, refused_stream):
    """One rule of the runtime's stream values on every path: pinned memory (which has no
    order to keep) and a Tensor whose producer lent an integer wait refuse what a copy and the
    library's own wait refuse. Before, both took any integer: a producer's wait was told a
    value with another runtime's meaning (ROCm's 1, CUDA's legacy default stream)."""
    (stream,) = refused_stream
    [pinned] = [memory for memory, _, _, kind in rt.allocators if kind == "pinned"]
    t = dl.reexport(producer(rt, device=pinned))
    with pytest.raises(RuntimeError, match=rf"unsupported stream on {rt.kind}: {stream}"):
        t.__dlpack__(max_version=(1, 3), stream=stream)
    w, _, told = waiting(rt, rt.memory[0], hooks=False)
    with pytest.raises(RuntimeError, match=rf"unsupported stream on {rt.kind}: {stream}"):
        w.__dlpack__(max_version=(1, 3), stream=stream)
    assert told == []


def test_stream_order_is_kept_through_the_exchange_api(rt):
    """A Tensor of a Tensor: the second import takes the exchange API, whose
    current_work_stream (the library's stream, made to wait on every import) gets the event."""
    p = producer(rt)
    first = dl.reexport(p)
    library = library_stream_of(p)
    rt.lib.stub_clear_log()
    second = dl.reexport(first)
    assert len(p.asked) == 1  # the exchange API, not __dlpack__
    assert field(rt.calls(rt.event_record)[-1], "stream") == handle(library)
    consumer = rt.new_stream()
    second.__dlpack__(max_version=(1, 3), stream=consumer)
    assert rt.read_floats(consumer, p.address, 6) == [7.0] * 6
    del first, second


def test_a_type_that_gave_host_memory_is_asked_its_device_again_once_it_gives_device_memory(rt):
    """A type whose __dlpack__ gave memory no stream orders is not asked its device by the next
    import (NumPy's imports pay nothing for the device streams). Once it gives device memory
    (PyTorch: a CPU tensor, then a CUDA one) that import asks again with the library's stream,
    and every later import asks its device first and calls __dlpack__ once, with that stream."""
    kind = type("Mixed", (FakeProducer,), {"runtime": rt})
    host = kind(device=(1, 0), fill=False)
    dl.reexport(host)
    assert (host.asked, host.devices_asked) == ([None], 1)
    again = kind(device=(1, 0), fill=False)
    dl.reexport(again)
    assert (again.asked, again.devices_asked) == ([None], 0)
    first = kind()
    dl.reexport(first)
    assert first.asked[0] is None and isinstance(first.asked[1], int), first.asked  # the capsule told
    later = kind()
    t = dl.reexport(later)
    library = library_stream_of(later)
    assert later.devices_asked == 1
    assert rt.lib.stub_pending(later.stream) == 1  # nothing blocked the host
    consumer = rt.new_stream()
    t.__dlpack__(max_version=(1, 3), stream=consumer)
    assert rt.read_floats(consumer, later.address, 6) == [7.0] * 6
    assert library == first.asked[1]
    del t


def test_a_target_device_that_is_the_tensors_own_is_asked_once_with_the_library_stream(rt):
    """from_dlpack(x, device=<x's own device>): still one __dlpack__ call, with the library's
    stream of that device (it once asked with no stream first, as for every dl_device)."""
    p = producer(rt)
    t = dl.tensor_import(p, device=rt.memory)
    library = library_stream_of(p)
    consumer = rt.new_stream()
    t.__dlpack__(max_version=(1, 3), stream=consumer)
    assert rt.read_floats(consumer, p.address, 6) == [7.0] * 6
    assert library


def test_a_tensor_on_another_device_than_its_producer_said_is_ordered_on_its_own(rt):
    """A __dlpack_device__ that says device 0 for a tensor on device 1: the stream passed was
    device 0's, which orders nothing of device 1's work, so the tensor is asked for again with
    device 1's library stream, where its readiness is then recorded."""
    kind, _ = rt.memory
    lying = type("SaysDevice0", (FakeProducer,), {"runtime": rt, "__dlpack_device__": lambda self: (kind, 0)})
    p = lying(device=(kind, 1))
    rt.lib.stub_clear_log()
    t = dl.reexport(p)
    assert len(p.asked) == 2 and p.asked[0] != p.asked[1], p.asked
    assert field(rt.calls(rt.event_record)[-1], "stream") == handle(p.asked[1])
    del t


def test_a_failing_dlpack_device_is_not_the_imports_but_an_interrupt_is_raised(rt):
    """The ordered import asks __dlpack_device__ only to pass the right stream: a producer whose
    __dlpack_device__ fails is asked as before (no stream, then the library's, as its tensor's
    device says), but a KeyboardInterrupt there is the user's, raised, not dropped."""

    def broken(self):
        raise RuntimeError("no device today")

    p = type("Broken", (FakeProducer,), {"runtime": rt, "__dlpack_device__": broken})()
    dl.reexport(p)
    assert p.asked[0] is None and isinstance(p.asked[1], int) and len(p.asked) == 2, p.asked

    def interrupted(self):
        raise KeyboardInterrupt

    q = type("Interrupted", (FakeProducer,), {"runtime": rt, "__dlpack_device__": interrupted})()
    with pytest.raises(KeyboardInterrupt):
        dl.reexport(q)
    assert q.asked == []


def test_managed_and_device_memory_of_one_device_share_its_streams(rt):
    """__dlpack_device__ may name the device's memory and the capsule its managed memory (or
    the other way round): the stream passed was that device's, and it is not asked again."""
    if rt.memory[0] != 2:
        pytest.skip("CUDA's two memory kinds")
    for said, held in (((2, 0), (13, 0)), ((13, 0), (2, 0))):
        p = type("Kinds", (FakeProducer,), {"runtime": rt, "__dlpack_device__": lambda self, d=said: d})(device=held)
        dl.reexport(p)
        assert len(p.asked) == 1, (said, held, p.asked)


# ---- a producer's own wait (dlpm_py_tensor_new_on_stream, a wait hook) ---------------------


def waiting(rt, device_type, hooks, n=6):
    """A Tensor over device memory that a kernel still queued on the producer's stream fills
    with 7.0, whose producer orders consumers through a wait it lends (a wait hook, or
    dlpm_py_tensor_new_on_stream's), as python_cuda.hpp's do: an event recorded on its stream,
    the stream it is told made to wait on it. Also the streams the wait was told."""
    address = rt.device_memory(4 * n)
    stream, event = rt.new_stream(), rt.new_event()
    assert rt.lib.stub_launch_fill(stream, address, 7.0, n) == 0
    told = []

    def wait(has_stream, consumer):
        told.append(consumer if has_stream else None)
        consumer = consumer if has_stream else rt.default_stream
        if consumer != -1:
            rt.call("stub_event_record", ctypes.c_void_p(event), ctypes.c_void_p(stream))
            rt.call("stub_stream_wait_event", ctypes.c_void_p(consumer), ctypes.c_void_p(event))

    return dl.waiting_tensor(address, n, wait, device_type, hooks), address, told


WAITS = pytest.mark.parametrize("hooks", [False, True], ids=["new_on_stream", "wait_hook"])


@WAITS
def test_a_zero_copy_export_asks_the_producers_wait(rt, memory_kind, hooks):
    t, address, told = waiting(rt, memory_kind[0], hooks)
    consumer = rt.new_stream()
    t.__dlpack__(max_version=(1, 3), stream=consumer)
    assert told == [consumer]
    assert rt.read_floats(consumer, address, 6) == [7.0] * 6


@WAITS
def test_a_copy_to_the_cpu_is_ordered_after_the_producers_wait(rt, memory_kind, hooks):
    """The copy's stream waits as a consumer's would (managed memory too, which the CPU could
    read at once, before the producer's kernel has run)."""
    t, address, told = waiting(rt, memory_kind[0], hooks)
    r = dl.consume(t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=True))
    assert r["copied"] and floats(r["bytes"]) == [7.0] * 6, told
    assert len(told) == 1 and told[0] not in (None, -1)
    copy = dl.tensor_import(t, copy=True, device=(KDLCPU, 0))  # from_dlpack's copy
    assert floats(dl.consume(copy)["bytes"]) == [7.0] * 6


@WAITS
def test_a_copy_on_the_device_is_ordered_after_the_producers_wait(rt, memory_kind, hooks):
    t, address, told = waiting(rt, memory_kind[0], hooks)
    consumer = rt.new_stream()
    capsule = t.__dlpack__(max_version=(1, 3), copy=True, stream=consumer)
    assert told == [consumer]
    assert rt.lib.stub_run(consumer) == 0  # the copy, queued on the consumer's stream
    r = dl.consume(capsule)
    assert r["copied"] and r["device"][0] == memory_kind[0] and floats(r["bytes"]) == [7.0] * 6


def test_an_import_only_records_and_the_first_table_export_makes_the_library_stream_wait(rt):
    """Through a producer's table with a stream of its own (PyTorch's): the import records the
    readiness event on that stream and makes no stream wait (one driver call fewer: 631 to 665
    ns per import on an H200, against 695 to 816 with the wait); the Tensor's first export through our table makes the library's stream,
    its current_work_stream, wait on the event, once; a Tensor of it, and that Tensor's
    consumer, read the producer's write."""
    p = producer(rt)
    inner = dl.reexport(dl.device_capsule(p.address, (6,), None, 32, *rt.memory))  # a bare capsule: no order of its own
    foreign = type("Foreign", (), {"__init__": lambda self, inner: setattr(self, "inner", inner)})
    dl.publish_on_stream(foreign, p.stream)
    rt.lib.stub_clear_log()
    t = dl.reexport(foreign(inner))
    [record] = rt.calls(rt.event_record)
    assert field(record, "stream") == handle(p.stream) and rt.calls(rt.stream_wait_event) == []
    event = field(record, "event")
    for _ in range(2):
        again = dl.reexport(t)  # through our table: current_work_stream is the library's stream
    waits = [(field(c, "stream"), field(c, "event")) for c in rt.calls(rt.stream_wait_event)]
    assert len(waits) == 1 and waits[0][1] == event and waits[0][0] != handle(p.stream), waits
    consumer = rt.new_stream()
    again.__dlpack__(max_version=(1, 3), stream=consumer)
    assert rt.read_floats(consumer, p.address, 6) == [7.0] * 6
    del again, t, inner


@WAITS
def test_the_exchange_api_orders_its_work_stream_after_the_producers_wait(rt, memory_kind, hooks):
    """An export through the Tensor type's exchange API ("no sync") asks the wait to order the
    library's stream, which current_work_stream names: a Tensor of that Tensor, and its
    consumers, read the producer's writes."""
    t, address, told = waiting(rt, memory_kind[0], hooks)
    again = dl.reexport(t)  # dlpm_py_tensor_import: the exchange API
    assert len(told) == 1 and told[0] not in (None, -1)
    consumer = rt.new_stream()
    again.__dlpack__(max_version=(1, 3), stream=consumer)
    assert rt.read_floats(consumer, address, 6) == [7.0] * 6
    del again


@WAITS
@pytest.mark.parametrize("validate", [False, True], ids=["unvalidated", "validating"])
def test_a_borrow_of_the_tensor_orders_the_library_stream_after_the_producers_wait(rt, memory_kind, hooks, validate):
    """A borrow (dlpm_py_borrow) reports the tensor ready on the library's stream, so that
    stream must have been made to wait: also a validating one, which reads this copy's Tensor's
    view in place instead of calling its table (it once skipped the producer's wait)."""
    t, address, told = waiting(rt, memory_kind[0], hooks)
    order, stream = dl.ready_stream(t, borrow=True, validate=validate)
    assert order == ORDER_STREAM
    assert told == [stream], told  # the wait ordered the stream the borrow names
    assert rt.read_floats(stream, address, 6) == [7.0] * 6


@pytest.mark.parametrize("validate", [False, True], ids=["unvalidated", "validating"])
def test_a_wait_that_refuses_is_asked_once_and_its_refusal_raised(rt, validate):
    """A producer's wait that raises BufferError, asked by a borrow of our Tensor: its refusal
    is the borrow's, and the wait is not asked a second time through the owned export (the
    fallback for another copy's refusal of a padded tensor is not this copy's)."""
    address = rt.device_memory(24)
    told = []

    def wait(has_stream, consumer):
        told.append(consumer)
        raise BufferError(f"the producer cannot order that stream ({len(told)})")

    t = dl.waiting_tensor(address, 6, wait, rt.memory[0], True)
    r = dl.borrow_checked(t, validate=validate)
    assert r["status"] != 0 and r["error"].endswith("the producer cannot order that stream (1)"), r
    assert len(told) == 1


def test_the_cpu_is_device_0(rt):
    """dl_device=(kDLCPU, 3) names no device: refused, not a copy on (kDLCPU, 0)."""
    for t in (dl.reexport(producer(rt)), dl.tensor((4,))):
        with pytest.raises(BufferError, match=r"^__dlpack__: dl_device=\(1, 3\) names no device: the CPU is device 0"):
            t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 3))
    with pytest.raises(BufferError, match=r"^__dlpack__: dl_device=\(1, 3\) names no device"):
        dl.tensor_import(dl.reexport(producer(rt)), copy=True, device=(KDLCPU, 3))  # from_dlpack's


def test_a_caller_stream_given_to_the_import_is_the_one_recorded(rt):
    """dlpm_py_options.stream: the producer orders the caller's stream; the event goes there."""
    p = producer(rt)
    mine = rt.new_stream()
    r = dl.consume(p, stream=mine)  # dlpm_py_import with a stream: the C API for extensions with their own
    assert p.asked == [mine] and r["device"] == rt.memory
    assert rt.read_floats(mine, p.address, 6) == [7.0] * 6


def test_events_come_from_a_pool(rt):
    p = producer(rt)
    dl.reexport(p)  # the first event is created
    rt.lib.stub_clear_log()
    for _ in range(20):
        t = dl.reexport(p)
        t.__dlpack__(max_version=(1, 3), stream=rt.default_stream)
        del t
    assert rt.calls(rt.event_create) == []
    assert len(rt.calls(rt.event_record)) == 40  # the producer's 20 and the imports' 20


def test_cpu_tensors_never_load_the_runtime(rt):
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
        f"assert {os.path.basename(rt.path)!r} not in maps, 'the runtime was loaded'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))


# ---- copies ------------------------------------------------------------------------------


def test_a_copy_to_the_cpu_is_complete_when_dlpack_returns(rt):
    p = producer(rt)
    t = dl.reexport(p)
    r = dl.consume(t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=True))
    assert r["device"] == (KDLCPU, 0) and r["copied"] and not r["read_only"]
    assert floats(r["bytes"]) == [7.0] * 6
    # the host's wait releases the GIL (queued work may call back into Python)
    assert [field(c, "gil") for c in rt.calls(rt.stream_synchronize)] == ["0"]


def test_device_copies_use_the_right_allocator_and_free_once(rt, allocator):
    target, alloc, free = allocator
    p = producer(rt)
    t = dl.reexport(p)
    live = rt.lib.stub_live_allocations()
    consumer = rt.new_stream()
    rt.lib.stub_clear_log()
    capsule = t.__dlpack__(max_version=(1, 3), dl_device=target, copy=True, stream=consumer)
    [allocated] = rt.calls(alloc)
    address = int(field(allocated, "ptr"), 16)
    assert rt.lib.stub_live_allocations() == live + 1
    copies = [c for c in rt.calls() if c.startswith(rt.memcpy_prefix)]
    assert copies and all(field(c, "stream") == handle(consumer) for c in copies)
    assert rt.read_floats(consumer, address, 6) == [7.0] * 6
    r = dl.consume(capsule)
    assert r["device"] == target and r["copied"]
    del capsule, r
    assert [int(field(c, "ptr"), 16) for c in rt.calls(free)] == [address]
    assert rt.lib.stub_live_allocations() == live
    del t


def test_a_copy_within_the_device_for_copy_true(rt):
    p = producer(rt)
    t = dl.reexport(p)
    r = dl.consume(t.__dlpack__(max_version=(1, 3), copy=True, stream=rt.new_stream()))
    assert r["device"] == rt.memory and r["copied"] and r["data_ptr"] != p.address


def test_strided_sources_are_copied_as_they_are(rt):
    """Rows padded to 8 floats: one 2-D copy; a transposed view: every element in place."""
    padded = producer(rt, shape=(3, 4), strides=(8, 1), fill=False)
    values = (ctypes.c_float * 24)(*range(24))
    ctypes.memmove(padded.address, values, 80)  # the span: 2 * 8 + 3 + 1 floats
    r = dl.consume(dl.reexport(padded).__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0)))
    assert floats(r["bytes"]) == [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19]
    [copy2d] = rt.calls(rt.memcpy_2d)
    assert (field(copy2d, "width"), field(copy2d, "height"), field(copy2d, "src_pitch")) == ("16", "3", "32")
    transposed = producer(rt, shape=(3, 4), strides=(1, 3), fill=False)
    ctypes.memmove(transposed.address, values, 48)
    r = dl.consume(dl.reexport(transposed).__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0)))
    assert floats(r["bytes"]) == [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]
    assert r["strides"] in (None, (4, 1))


def test_from_dlpack_copies_device_memory(rt):
    """from_dlpack(x, copy=True, device=...): imported as it is, copied by the runtime after
    the producer's work, the producer's tensor let go at once."""
    p = producer(rt)
    released = dl.device_capsules_released()
    t = dl.tensor_import(p, copy=True, device=(KDLCPU, 0))
    assert t.device == (KDLCPU, 0)
    r = dl.consume(t)
    assert floats(r["bytes"]) == [7.0] * 6 and r["data_ptr"] != p.address
    assert dl.device_capsules_released() == released + 1  # the source, its only capsule
    d = dl.tensor_import(p, copy=True)
    assert d.device == rt.memory and dl.consume(d)["data_ptr"] != p.address


def test_a_cpu_tensor_is_copied_to_the_device(rt):
    t = dl.tensor((4,), (2, 32, 1))
    dl.fill(t, bytes((ctypes.c_float * 4)(1, 2, 3, 4)))
    consumer = rt.new_stream()
    copy = dl.reexport(t.__dlpack__(max_version=(1, 3), dl_device=rt.memory, stream=consumer))  # kept alive
    assert copy.device == rt.memory
    assert rt.read_floats(consumer, dl.consume(copy)["data_ptr"], 4) == [1, 2, 3, 4]
    del copy
    rt.lib.stub_clear_log()
    del t  # its memory is read by a queued copy: the host waits for it before letting go
    assert [field(c, "gil") for c in rt.calls(rt.event_synchronize)] == ["0"]


def test_a_copy_that_fails_once_queued_is_freed_only_after_its_stream_ran(rt):
    """The copy's bytes are queued on the consumer's stream; then the event that orders the
    library's stream after them cannot be recorded. The copy's memory is freed only after
    that stream is synchronised (a real device may still be writing it; the stub runs queued
    work in its free, which hides a free under them), and nothing is left behind."""
    target, alloc, free, _ = rt.allocators[0]
    t = dl.reexport(producer(rt, shape=(3, 4), strides=(1, 3)))
    consumer = rt.new_stream()
    live = rt.lib.stub_live_allocations()
    rt.lib.stub_clear_log()
    rt.lib.stub_fail(rt.event_record.encode(), 400)
    with pytest.raises(BufferError, match=rt.event_record):
        t.__dlpack__(max_version=(1, 3), copy=True, stream=consumer)
    rt.lib.stub_clear_fails()
    log = rt.calls()
    names = [line.split(" ", 1)[0] for line in log]
    queued = [i for i, line in enumerate(log) if line.startswith(rt.memcpy_prefix)]
    [freed] = [i for i, name in enumerate(names) if name == free]
    synchronised = [i for i, line in enumerate(log)
                    if names[i] == rt.stream_synchronize and field(line, "stream") == handle(consumer)]
    assert queued and all(field(log[i], "stream") == handle(consumer) for i in queued), log
    assert synchronised and queued[-1] < synchronised[0] < freed, log
    assert rt.lib.stub_live_allocations() == live


@WAITS
@pytest.mark.parametrize("copy", [None, False])
def test_memory_the_host_reads_reaches_the_cpu_as_it_is_after_the_host_waits(rt, memory_kind, hooks, copy):
    """dl_device=(kDLCPU, 0) without copy=True: memory the host can read (managed) is handed to
    the CPU consumer as it is, as CuPy's __dlpack__ hands it (the array API's copy=None reuses
    the memory where it can), once the host has waited for the producer's kernel (a CPU
    consumer passes no stream); device memory needs a copy, which copy=False forbids."""
    t, address, told = waiting(rt, memory_kind[0], hooks)
    if memory_kind[0] != KDLCUDAMANAGED:
        if copy is False:
            with pytest.raises(ValueError, match="copy=False forbids one"):  # CopyForbiddenError
                t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=copy)
        else:
            assert dl.consume(t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=copy))["copied"]
        return
    r = dl.consume(t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=copy))
    assert r["device"] == (KDLCPU, 0) and not r["copied"] and r["data_ptr"] == address, r
    assert floats(r["bytes"]) == [7.0] * 6, told  # the fill landed before the host read
    assert len(told) == 1 and told[0] not in (None, -1)


def test_copy_false_still_forbids_a_copy(rt):
    t = dl.reexport(producer(rt))
    for kind in (BufferError, ValueError):  # CopyForbiddenError: the array API's and CuPy's types
        with pytest.raises(kind, match="copy=False forbids one"):
            t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=False)


# ---- errors ------------------------------------------------------------------------------


def test_a_failed_call_is_a_buffer_error_naming_it(rt, failure):
    symbol, code, call, name, when = failure
    p = producer(rt)
    released = dl.device_capsules_released()
    live = rt.lib.stub_live_allocations()
    t = None if when == "import" else dl.reexport(p)
    rt.lib.stub_fail(symbol.encode(), code)
    with pytest.raises(BufferError, match=rf"{call} failed: {name} \({code}\), in {rt.runtime}"):
        if when == "import":
            dl.reexport(p)
        elif when == "export":
            t.__dlpack__(max_version=(1, 3), stream=rt.new_stream())
        elif when == "copy":
            t.__dlpack__(max_version=(1, 3), copy=True, stream=rt.new_stream())
        else:
            t.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0))
    rt.lib.stub_clear_fails()
    del t
    assert dl.device_capsules_released() == released + 1  # nothing of the producer's is kept
    assert rt.lib.stub_live_allocations() == live  # no copy's memory is left behind


def test_a_failed_copy_keeps_its_error_from_a_python_deleter(rt, collect):
    """tensor_import(x, copy=True) of device memory whose copy fails: the BufferError naming the
    call reaches the caller, and the producer's deleter, a ctypes callback, runs once. Was a
    SystemError with no delete: the source was let go with the error in flight, which the
    callback reported and cleared."""
    from test_hostile import Hand  # a hand-made tensor whose deleter is Python code

    symbol, code, call, name, _, _ = next(f for f in rt.failures if f[4] == "copy" and "emcpy" in f[0])
    hand = Hand(shape=(4,), device=rt.memory, data=rt.device_memory(16))
    capsule = hand.capsule()
    rt.lib.stub_fail(symbol.encode(), code)
    with pytest.raises(BufferError, match=rf"{call} failed: {name} \({code}\)"):
        dl.tensor_import(capsule, copy=True, device=(KDLCPU, 0))
    del capsule
    collect()
    assert hand.deletes() == 1


def test_a_device_the_runtime_does_not_have(rt):
    kind, _ = rt.memory
    with pytest.raises(BufferError, match=rt.missing_device):
        dl.reexport(producer(rt, device=(kind, 5)))


def test_no_runtime_is_a_buffer_error_naming_it(rt, absent):
    path, message = absent
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
    r = run_alone(code, rt, path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_a_failed_init_is_a_buffer_error_naming_it(rt):
    code = (
        f"stub = ctypes.CDLL({rt.path!r})\n"
        f"stub.stub_fail({rt.init.encode()!r}, 100)\n"
        "try:\n"
        "    dl.reexport(producer())\n"
        "except BufferError as e:\n"
        f"    assert {rt.init_failure!r} in str(e), str(e)\n"
        "    print('ok')\n"
    )
    r = run_alone(code, rt, rt.path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
