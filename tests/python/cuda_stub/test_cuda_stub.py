# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Python component's CUDA path without a GPU: a stub driver (stub_driver.c, loaded
through $DLPM_CUDA_DRIVER) logs every driver call, keeps "device" memory in host memory and
runs queued work lazily, so that a consumer that was never made to wait reads stale memory.

Fake CUDA producers stand in for PyTorch and CuPy: their __dlpack__(stream=s) makes s wait
for their own stream, where a fill of the memory is still queued. A dlpack_mdspan.Tensor
(dlpm_py_tensor_import, what dlpack_mdspan.from_dlpack does) re-exports it, and a fake
consumer reads the memory on its own stream: it must see the producer's write.

The tests every runtime passes are in ../stub_runtime.py (imported below, run here with the
CUDA driver's cases); this file adds what is CUDA's own (contexts, the per-thread stream).
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dlpm_interop as dl  # noqa: E402
from stub_runtime import *  # noqa: E402,F401,F403 - the shared tests, collected here
from stub_runtime import FakeProducer, StubRuntime, field, handle, library_stream_of, run_alone  # noqa: E402

KDLCPU, KDLCUDA, KDLCUDAHOST, KDLCUDAMANAGED = 1, 2, 3, 13
LEGACY, PER_THREAD = 1, 2

RT = StubRuntime(
    "DLPM_CUDA_DRIVER",
    (KDLCUDA, 0),
    kind="CUDA",
    runtime="the CUDA driver",
    memory_kinds=[(KDLCUDA, "device"), (KDLCUDAMANAGED, "managed")],
    default_stream=LEGACY,
    init="cuInit",
    init_failure="cuInit failed: CUDA_ERROR_NO_DEVICE (100)",
    stream_create="cuStreamCreate",
    event_create="cuEventCreate",
    malloc="cuMemAlloc_v2",
    event_record="cuEventRecord",
    stream_wait_event="cuStreamWaitEvent",
    stream_synchronize="cuStreamSynchronize",
    event_synchronize="cuEventSynchronize",
    memcpy_prefix="cuMemcpy",
    memcpy_2d="cuMemcpy2DAsync_v2",
    missing_device=r"cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE \(101\)",
    stream_cases=[
        (None, LEGACY, "None-legacy"),
        (LEGACY, LEGACY, "1-legacy"),
        (PER_THREAD, PER_THREAD, "2-per-thread"),
        ("own", "own", "handle"),
        (-1, None, "-1-no-sync"),
    ],
    # 0 is ambiguous (1 or 2?)
    refused_streams=[(0, "0"), (-2, "-2"), (-(2**40), "-1099511627776")],
    allocators=[
        ((KDLCUDA, 0), "cuMemAlloc_v2", "cuMemFree_v2", "device"),
        ((KDLCUDAMANAGED, 0), "cuMemAllocManaged", "cuMemFree_v2", "managed"),
        ((KDLCUDAHOST, 0), "cuMemAllocHost_v2", "cuMemFreeHost", "pinned"),
    ],
    # the stub's symbol, its status, the call and error name the message gives, and when
    failures=[
        ("cuEventRecord", 400, "cuEventRecord", "CUDA_ERROR_INVALID_HANDLE", "import", "cuEventRecord"),
        ("cuStreamWaitEvent", 700, "cuStreamWaitEvent", "CUDA_ERROR_ILLEGAL_ADDRESS", "export", "cuStreamWaitEvent"),
        ("cuMemAlloc_v2", 2, "cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY", "copy", "cuMemAlloc_v2"),
        ("cuMemcpyAsync", 1, "cuMemcpyAsync", "CUDA_ERROR_INVALID_VALUE", "copy", "cuMemcpyAsync"),
        ("cuStreamSynchronize", 700, "cuStreamSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS", "host copy",
         "cuStreamSynchronize"),
    ],
    absents=[
        ("/nonexistent/libcuda.so.1", r'needs the CUDA driver, and dlopen\("/nonexistent/libcuda.so.1"\) failed', "missing"),
        ("libc.so.6", "the CUDA driver libc.so.6 has no cuInit", "not-a-driver"),
    ],
)
stub = RT.lib
calls, new_stream, read_floats = RT.calls, RT.new_stream, RT.read_floats


class FakeCudaProducer(FakeProducer):
    runtime = RT


def test_stream_values_the_array_api_refuses_name_the_ambiguity_of_zero():
    t = dl.reexport(FakeCudaProducer())
    with pytest.raises(AssertionError, match=r"unsupported stream on CUDA: 0 \(the array API allows None or 1"):
        t.__dlpack__(max_version=(1, 3), stream=0)


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


class Pre10CudaProducer(FakeCudaProducer):
    """A producer older than DLPack 1.0 (PyTorch 1.x): __dlpack__ takes `stream` alone."""

    def __dlpack__(self, stream=None):
        return super().__dlpack__(stream=stream)


def test_stream_order_is_kept_for_a_producer_older_than_dlpack_1():
    p = Pre10CudaProducer()
    t = dl.reexport(p)
    library = library_stream_of(p)  # asked again without max_version, with the stream
    assert field(calls("cuEventRecord")[-1], "stream") == handle(library)
    consumer = new_stream()
    t.__dlpack__(max_version=(1, 3), stream=consumer)
    assert read_floats(consumer, p.address, 6) == [7.0] * 6


def test_the_callers_context_is_restored():
    before = stub.stub_current_context()
    p = FakeCudaProducer()
    t = dl.reexport(p)
    t.__dlpack__(max_version=(1, 3), stream=new_stream())
    assert stub.stub_current_context() == before
    assert any(field(c, "ctx") == hex(0xC000) for c in calls("cuCtxSetCurrent"))


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
    # a producer whose __dlpack_device__ says the CPU is asked with no stream (the array API),
    # so nothing ordered `mine`, whatever it then exports: not reported as ready on it
    lying = type("SaysCpu", (FakeCudaProducer,), {"__dlpack_device__": lambda self: (KDLCPU, 0)})()
    assert dl.ready_stream(lying, stream=mine) == (ORDER_UNKNOWN, None) and lying.asked == [None]


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


def without_concurrent_managed_access(body, imports=""):
    """Runs `body` in a new process (the device's answer is kept for the process) whose stub
    device 0 lacks concurrent managed access, with `stub` (the stub library) and `buffer`
    (4 floats: 1, 2, 3, 4) defined; it prints 'ok' when its checks hold."""
    prelude = (
        f"import os{imports}\n"
        "stub = ctypes.CDLL(os.environ['DLPM_CUDA_DRIVER'])\n"
        "stub.stub_log.restype = ctypes.c_char_p\n"
        "stub.stub_set_concurrent_managed_access(0)\n"
        "buffer = (ctypes.c_float * 4)(1, 2, 3, 4)\n"
    )
    child = run_alone(prelude + body + "print('ok')\n", RT, RT.path)
    assert child.returncode == 0 and child.stdout.strip() == "ok", child.stdout + child.stderr


def test_managed_memory_is_copied_to_the_cpu_where_the_device_lacks_concurrent_managed_access():
    """On a device without concurrent managed access (Jetson, pre-Pascal GPUs) the host faults
    reading managed memory while any kernel runs: there dl_device=(kDLCPU, 0) copies it
    (copy=None), the device making the copy (with no pending work, the host would have read
    it), or refuses (copy=False), where a current GPU shares it. The attribute is asked once
    per device."""
    without_concurrent_managed_access(
        "t = dl.reexport(dl.device_capsule(ctypes.addressof(buffer), (4,), None, 32, 13, 0))  # no event, no wait\n"
        "stub.stub_clear_log()\n"
        "r = dl.consume(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))\n"
        "assert r['copied'] and r['data_ptr'] != ctypes.addressof(buffer), r\n"
        "assert any(l.startswith('cuMemcpy') for l in stub.stub_log().decode().splitlines()), 'the host read it'\n"
        "assert list(ctypes.cast(ctypes.create_string_buffer(r['bytes'], 16), ctypes.POINTER(ctypes.c_float))[:4]) == [1, 2, 3, 4]\n"
        "try:\n"
        "    t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)\n"
        "    raise SystemExit('copy=False was not refused')\n"
        "except ValueError as e:\n"
        "    assert 'lacks concurrent managed access' in str(e), e\n"
        "asked = [l for l in stub.stub_log().decode().splitlines() if l.startswith('cuDeviceGetAttribute')]\n"
        "assert asked == ['cuDeviceGetAttribute attribute=89 device=0'], asked\n"
    )


@pytest.mark.parametrize("bound", binding_modules(), ids=lambda m: m.__name__)
def test_a_host_view_of_managed_memory_is_refused_where_the_device_lacks_concurrent_managed_access(bound):
    """A host function's view (ready_on_host) of managed memory on a device without concurrent
    managed access: the host may not read it while any kernel runs, so the caster refuses it
    with TypeError naming why (a binding then tries the next overload), through __dlpack__
    and through our Tensor."""
    without_concurrent_managed_access(
        "class M:\n"
        "    def __dlpack_device__(self): return (13, 0)\n"
        "    def __dlpack__(self, **kw): return dl.device_capsule(ctypes.addressof(buffer), (2, 2), None, 32, 13, 0)\n"
        "for x in (M(), dl.reexport(M())):\n"
        "    try:\n"
        "        bound.sum_without_gil(x)\n"
        "        raise SystemExit('a host view of managed memory was made')\n"
        "    except TypeError as e:\n"
        "        assert 'lacks concurrent managed access' in str(e), e\n",
        imports=f", {bound.__name__} as bound")


@pytest.mark.parametrize("bound", binding_modules(), ids=lambda m: m.__name__)
def test_a_host_view_of_managed_memory_reads_the_producers_writes(bound):
    """Managed memory that a kernel still queued on the producer's stream fills with 7.0: a
    plain host view (a host function reads it, nothing orders that after the producer) is
    read only once the host waited for that kernel (dlpm_py_options.ready_on_host), through
    __dlpack__ and through our Tensor's exchange API. Before, the function summed 0.0."""
    p = FakeCudaProducer(device=(KDLCUDAMANAGED, 0))
    assert bound.sum_without_gil(p)[1] == 42.0
    t = dl.reexport(FakeCudaProducer(device=(KDLCUDAMANAGED, 0)))
    assert bound.sum_without_gil(t)[1] == 42.0


@pytest.mark.parametrize("bound", binding_modules(), ids=lambda m: m.__name__)
def test_a_host_view_refuses_device_memory_without_waiting_for_it(bound):
    """Device memory the host cannot read, lent through an exchange API, is refused by a host
    view as before (its TypeError), without an import or a host wait first: the wait is for
    memory the host reads."""
    t = dl.reexport(FakeCudaProducer())
    stub.stub_clear_log()
    with pytest.raises(TypeError, match="kDLCUDA"):
        bound.sum_without_gil(t)
    assert calls("cuEventSynchronize") == [] and calls("cuStreamSynchronize") == [], calls()
    # Through __dlpack__ too: asked with no stream (the array API's call), and no event
    # captured for the host to wait for; before, the library's stream was passed and the host
    # waited for the producer's work, once per overload, then refused the memory.
    p = FakeCudaProducer()
    stub.stub_clear_log()
    with pytest.raises(TypeError, match="kDLCUDA"):
        bound.sum_without_gil(p)
    assert p.asked == [None]
    assert calls("cuEventSynchronize") == [] and calls("cuStreamSynchronize") == [], calls()
    managed = FakeCudaProducer(device=(KDLCUDAMANAGED, 0))
    assert bound.sum_without_gil(managed)[1] == 42.0 and managed.asked != [None]  # read by the host: ordered


@pytest.mark.parametrize("bound", binding_modules(), ids=lambda m: m.__name__)
@pytest.mark.parametrize("hooks", [False, True], ids=["new_on_stream", "wait_hook"])
def test_a_host_view_of_managed_memory_asks_the_producers_wait_once(bound, hooks):
    """Our Tensor over managed memory whose producer lent a wait, read by a host function: its
    kept form says the memory is managed, so the borrow imports it at once (the host waits for
    the captured work) instead of being lent the view first, which asked the wait twice."""
    t, address, told = waiting(RT, KDLCUDAMANAGED, hooks)
    assert bound.sum_without_gil(t)[1] == 42.0
    assert len(told) == 1, told


@pytest.mark.parametrize("bound", binding_modules(), ids=lambda m: m.__name__)
def test_another_copys_borrow_asks_a_refusing_wait_once(bound):
    """A binding links its own copy of the component: its borrow of our Tensor, whose
    producer's wait refuses with BufferError, raises that refusal; the fallback to the owned
    export (for a padded tensor of a copy whose form is not known) asked the wait again, and
    raised the second refusal."""
    for function in (bound.ready_on_cuda, bound.sum_without_gil):
        told = []

        def wait(has_stream, consumer):
            told.append(consumer)
            raise BufferError(f"the producer cannot order that stream ({len(told)})")

        t = dl.waiting_tensor(RT.device_memory(24), 6, wait, KDLCUDA, True)
        with pytest.raises(BufferError, match=r"cannot order that stream \(1\)$"):
            function(t)
        assert len(told) == 1, told


@pytest.mark.parametrize("bound", binding_modules(), ids=lambda m: m.__name__)
def test_a_kept_tensor_is_ready_when_the_function_gets_it(bound):
    """A managed_tensor or held_view parameter carries no stream order, and what the function
    returns is a new Tensor: the host waits for the producer's work before the function gets
    the tensor, so a consumer of the returned Tensor reads the producer's writes. Before, it
    read the memory before the producer's kernel ran (0.0)."""
    p = FakeCudaProducer()
    out = bound.pass_through(p)
    consumer = new_stream()
    out.__dlpack__(max_version=(1, 3), stream=consumer)
    assert RT.read_floats(consumer, p.address, 6) == [7.0] * 6
    managed = FakeCudaProducer(device=(KDLCUDAMANAGED, 0), shape=(2, 3))
    kept = bound.same_const(managed)
    assert floats(dl.consume(kept.__dlpack__(max_version=(1, 3)))["bytes"]) == [7.0] * 6


# ---- copies ----------------------------------------------------------------------------


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
