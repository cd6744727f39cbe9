# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Copies through a dlpack_mdspan.Tensor between every memory kind of CUDA, on a real GPU
(never CI, which has none; scripts/check-gpu runs it, with the pip package on PYTHONPATH).

Sources, each a strided view (every other column of a 4x6 float32 matrix): device memory
(PyTorch), managed memory (CuPy's managed allocator), pinned memory (our own copy of the
device view to kDLCUDAHost). Targets: kDLCPU, kDLCUDA, kDLCUDAManaged, kDLCUDAHost, the
source's own kind included, with copy=True: each copy holds the source's values, is on the
target, is not the source's memory (a write to it leaves the source as it was), and is
freed by its own allocator when let go (no leak: the device's free memory is the same after
a thousand copies, DLPM_GPU_COPIES). Then copy=None to the CPU: managed and pinned memory are shared, device
memory is copied; copy=False of device memory to the CPU is refused. Prints one line per
case and exits nonzero when one fails.

    python3 tests/python/cuda/gpu_copies.py
"""
import os
import sys
import traceback

import numpy as np
import torch

import dlpack_mdspan as dm

KDLCPU, KDLCUDA, KDLCUDAHOST, KDLCUDAMANAGED = 1, 2, 3, 13
TARGETS = {"cpu": (KDLCPU, 0), "device": (KDLCUDA, 0), "managed": (KDLCUDAMANAGED, 0), "pinned": (KDLCUDAHOST, 0)}
EXPECTED = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
results = []


def case(name, fn):
    try:
        fn()
        results.append((name, "PASS", ""))
    except Exception as e:  # noqa: BLE001 - reported, not raised
        results.append((name, "FAIL", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"))


def host_values(t):
    """The values of Tensor t, read on the host: a copy for device memory, as it is otherwise."""
    return np.from_dlpack(t, device="cpu").copy()


def sources():
    import cupy
    device = dm.from_dlpack(torch.arange(24.0, device="cuda").reshape(4, 6)[:, ::2])
    with cupy.cuda.using_allocator(cupy.cuda.malloc_managed):
        managed_array = cupy.arange(24, dtype=cupy.float32).reshape(4, 6)[:, ::2]
    managed = dm.from_dlpack(managed_array)
    pinned = dm.from_dlpack(device.__dlpack__(max_version=(1, 3), dl_device=(KDLCUDAHOST, 0), copy=True))
    torch.cuda.synchronize()
    found = {"device": device, "managed": managed, "pinned": pinned}
    for kind, t in found.items():
        assert t.device == TARGETS[kind], (kind, t.device)
    return found, managed_array


def copy_case(source_kind, target_kind):
    def run():
        found, keep = sources()
        source = found[source_kind]
        copy = dm.from_dlpack(source.__dlpack__(max_version=(1, 3), dl_device=TARGETS[target_kind], copy=True))
        torch.cuda.synchronize()
        assert copy.device == TARGETS[target_kind], copy.device
        assert np.array_equal(host_values(copy), EXPECTED), host_values(copy)
        # not the source's memory: a write to the copy leaves the source as it was
        if target_kind == "device":
            torch.from_dlpack(copy).fill_(-1.0)
        else:
            torch.from_dlpack(dm.from_dlpack(copy.__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0)))).fill_(-1.0)
        torch.cuda.synchronize()
        assert np.array_equal(host_values(source), EXPECTED), "the copy aliased its source"
        del keep
    return run


def no_leak():
    found, keep = sources()
    free_before = torch.cuda.mem_get_info()[0]
    for _ in range(int(os.environ.get("DLPM_GPU_COPIES", "1000"))):
        for kind in ("device", "managed", "pinned"):
            dm.from_dlpack(found[kind].__dlpack__(max_version=(1, 3), dl_device=TARGETS["device"], copy=True))
    torch.cuda.synchronize()
    free_after = torch.cuda.mem_get_info()[0]
    assert free_before - free_after < 1 << 20, (free_before, free_after)


def shared_with_the_cpu():
    found, keep = sources()
    for kind, shared in (("managed", True), ("pinned", True), ("device", False)):
        t = found[kind]
        a = np.from_dlpack(t, device="cpu")  # copy=None
        assert np.array_equal(a, EXPECTED), (kind, a)
        b = np.from_dlpack(t, device="cpu")
        assert np.may_share_memory(a, b) == shared, kind
    try:
        found["device"].__dlpack__(max_version=(1, 3), dl_device=(KDLCPU, 0), copy=False)
        raise AssertionError("copy=False of device memory to the CPU was not refused")
    except dm.CopyForbiddenError:
        pass


print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
for source_kind in ("device", "managed", "pinned"):
    for target_kind in TARGETS:
        case(f"copy=True {source_kind} -> {target_kind}", copy_case(source_kind, target_kind))
case("copy=None to the CPU: managed and pinned shared, device copied; copy=False refused", shared_with_the_cpu)
case("many copies of each kind to the device leak nothing", no_leak)
for name, verdict, detail in results:
    print(f"{verdict}: {name}" + (f"\n{detail}" if detail else ""))
print(f"{sum(v == 'PASS' for _, v, _ in results)} passed, {sum(v == 'FAIL' for _, v, _ in results)} failed")
sys.exit(any(v == "FAIL" for _, v, _ in results))
