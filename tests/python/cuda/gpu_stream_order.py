# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Stream order through a re-exporting dlpack_mdspan.Tensor, on a real GPU (never CI, which
has none; scripts/check-gpu runs it). PyTorch queues a long kernel and then x.fill_(7) on a
stream s; our Tensor imports x inside `with torch.cuda.stream(s)`; a consumer on another
stream must see the 7s. The control (stream=-1, "no synchronisation") reads before the fill
lands and must see the old zeros: it proves that the race is there to be lost.

    python3 tests/python/cuda/gpu_stream_order.py MODULE:FUNCTION

MODULE:FUNCTION re-exports one producer as a dlpack_mdspan.Tensor (dlpack_mdspan:from_dlpack
for the pip package, dlpm_interop:reexport for the test extension). Prints one line per case
and exits nonzero when one fails.
"""
import importlib
import sys
import traceback

import torch

N = 1 << 20
SLEEP_CYCLES = 2_000_000_000  # about a second on current GPUs: far longer than the host's path

module, _, function = (sys.argv[1] if len(sys.argv) > 1 else "dlpack_mdspan:from_dlpack").partition(":")
reexport = getattr(importlib.import_module(module), function)
results = []


def case(name):
    def run(fn):
        try:
            fn()
            results.append((name, "PASS", ""))
        except Exception as e:  # noqa: BLE001 - reported, not raised
            results.append((name, "FAIL", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"))
        return fn

    return run


def producer_behind_a_long_kernel():
    s = torch.cuda.Stream()
    x = torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.fill_(7)
        t = reexport(x)  # inside the producer's stream context, as the user did
    return s, x, t


@case("torch -> Tensor -> torch on another stream sees the write")
def torch_to_torch():
    _, _, t = producer_behind_a_long_kernel()
    consumer = torch.cuda.Stream()
    with torch.cuda.stream(consumer):
        y = torch.from_dlpack(t)  # torch passes stream=consumer to t.__dlpack__
        total = y.sum()
    consumer.synchronize()
    assert total.item() == 7 * N, total.item()


@case("control: stream=-1 (no synchronisation) reads before the write lands")
def control_without_wait():
    s, x, t = producer_behind_a_long_kernel()
    consumer = torch.cuda.Stream()
    with torch.cuda.stream(consumer):
        y = torch.utils.dlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), stream=-1))
        total = y.sum()
    consumer.synchronize()
    s.synchronize()
    assert total.item() != 7 * N, "no race to lose: the control proves nothing on this machine"


@case("torch -> Tensor -> cupy sees the write")
def torch_to_cupy():
    try:
        import cupy
    except ImportError:
        raise AssertionError("CuPy is not installed") from None
    _, _, t = producer_behind_a_long_kernel()
    with cupy.cuda.Stream(non_blocking=True):
        y = cupy.from_dlpack(t)
        total = float(y.sum())
    assert total == 7 * N, total


@case("torch -> Tensor -> numpy copy (dl_device=CPU) sees the write")
def torch_to_host_copy():
    import numpy as np

    _, _, t = producer_behind_a_long_kernel()

    class Host:
        def __init__(self, capsule):
            self.capsule = capsule

        def __dlpack__(self, **kwargs):
            return self.capsule

        def __dlpack_device__(self):
            return (1, 0)

    y = np.from_dlpack(Host(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=True)))
    assert float(y.sum()) == 7 * N, float(y.sum())


@case("from_dlpack(x, copy=True) within the device and to the CPU")
def copies():
    s, x, _ = producer_behind_a_long_kernel()
    with torch.cuda.stream(s):
        on_device = reexport(x) if function == "reexport" else reexport(x, copy=True)
        y = torch.from_dlpack(on_device)
    assert float(y.sum()) == 7 * N


@case("the ready stream of a PyTorch tensor is PyTorch's current stream (provenance version 2)")
def ready_stream_is_the_producers_current_stream():
    s = torch.cuda.Stream()
    x = torch.zeros(4, device="cuda")
    owner = importlib.import_module(module)
    with torch.cuda.stream(s):
        if hasattr(owner, "ready_stream"):  # dlpm_interop: dlpm_py_import with a provenance
            order, stream = owner.ready_stream(x)
        else:  # the pip package
            info = owner.inspect(x, show=False)
            order, stream = {"none": 0, "stream": 1, "unknown": 2}[info["stream_order"]], info["ready_stream"]
    assert (order, stream) == (1, s.cuda_stream), (order, stream, s.cuda_stream)


print(f"GPU: {torch.cuda.get_device_name()} (torch {torch.__version__}, CUDA {torch.version.cuda})")
for name, outcome, detail in results:
    print(f"{outcome}: {name}")
    if detail:
        print("   " + detail.replace("\n", "\n   "))
sys.exit(0 if all(outcome == "PASS" for _, outcome, _ in results) else 1)
