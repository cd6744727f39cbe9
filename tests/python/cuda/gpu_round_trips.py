# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Issue 39's rules with CUDA memory, for a machine with a GPU (never CI, which has none):
the pip wheel installed (PYTHONPATH), then `python3 tests/python/cuda/gpu_round_trips.py`.
Ran on 2026-11-28 on an H200 (torch 2.11+cu130, CuPy, JAX GPU): 4 passed (docs/python-interop.md)."""
import sys, traceback
import numpy as np
import torch
import dlpack_mdspan as dm

results = []
def check(name, fn):
    try:
        fn(); results.append((name, "PASS", ""))
    except Exception as e:
        results.append((name, "FAIL", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"))

def requires_grad_cuda():
    x = torch.arange(6.0, device="cuda", requires_grad=True)
    info = dm.inspect(x)
    assert info["path"] == "exchange API", info["path"]
    assert info["read_only"] and info["read_only_cause"] == "producer_forbids", info
    t = dm.from_dlpack(x)
    assert t.readonly and t.device == (2, 0), (t, t.device)
    try:
        t.__dlpack__()
        raise AssertionError("a legacy export of a requires-grad tensor was not refused")
    except BufferError as e:
        assert "require gradient" in str(e), e
    again = dm.inspect(t)
    assert again["read_only"] and again["read_only_cause"] == "producer_forbids", again

def torch_cuda_round_trip():
    x = torch.arange(12.0, device="cuda").reshape(3, 4)[:, ::2]
    t = dm.from_dlpack(x)
    assert not t.readonly
    y = torch.from_dlpack(t)
    assert y.device.type == "cuda" and y.data_ptr() == x.data_ptr() and y.stride() == x.stride()
    y.mul_(2)
    torch.cuda.synchronize()
    assert torch.equal(x, torch.arange(12.0, device="cuda").reshape(3, 4)[:, ::2] * 2)
    assert t.__dlpack_data_type__() == (2, 32, 1) and t.__dlpack_device__() == (2, 0)

def cupy_takes_ours():
    import cupy
    x = torch.arange(5, dtype=torch.int32, device="cuda")
    c = cupy.from_dlpack(dm.from_dlpack(x))
    assert c.data.ptr == x.data_ptr() and c.tolist() == [0, 1, 2, 3, 4]

def jax_gpu_round_trip():
    import jax, jax.numpy as jnp
    gpu = [d for d in jax.devices() if d.platform == "gpu"]
    assert gpu, jax.devices()
    j = jax.device_put(jnp.arange(8.0, dtype=jnp.float32), gpu[0])
    info = dm.inspect(j)
    t = dm.from_dlpack(j)
    back = jax.dlpack.from_dlpack(t)
    assert back.unsafe_buffer_pointer() == j.unsafe_buffer_pointer(), "zero copy"
    assert np.asarray(back).tolist() == list(range(8))
    print("  jax gpu import:", info["path"], info["capsule"], "read_only_cause", info["read_only_cause"], "t.readonly", t.readonly)

print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
for name, fn in [("requires_grad CUDA tensor stays READ_ONLY", requires_grad_cuda),
                 ("torch CUDA strided view through our Tensor, zero copy", torch_cuda_round_trip),
                 ("CuPy takes our CUDA Tensor", cupy_takes_ours),
                 ("JAX GPU array through our Tensor and back", jax_gpu_round_trip)]:
    check(name, fn)
for name, verdict, detail in results:
    print(f"{verdict}: {name}" + (f"\n{detail}" if detail else ""))
print(f"{sum(v == 'PASS' for _, v, _ in results)} passed, {sum(v == 'FAIL' for _, v, _ in results)} failed")
sys.exit(any(v == "FAIL" for _, v, _ in results))
