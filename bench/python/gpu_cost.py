# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What a CUDA tensor's import and export cost through dlpack_mdspan.Tensor, on a real GPU
(issue 48, item 6; never CI, which has none; scripts/check-gpu runs it).

    python3 bench/python/gpu_cost.py [--repeat 7] [--number 2000]

Times each operation `number` times in a loop, `repeat` times, and prints the median and the
minimum per call in nanoseconds, beside the same operation done by PyTorch and CuPy alone:

- import: dlpack_mdspan.from_dlpack(x) of a torch.Tensor on the GPU, inside a non-default
  stream's context (the readiness event recorded from the pool), against torch.from_dlpack(x)
  and cupy.from_dlpack(x) of the same tensor;
- export: torch.from_dlpack(t) of our Tensor t on another stream (the consumer's stream made
  to wait on the recorded event), against torch.from_dlpack(x) of the torch.Tensor itself;
- t.__dlpack__(stream=...) alone, the capsule dropped unconsumed.

Host time only: nothing here waits for the GPU, as none of the three libraries does. The
tensor is 4x6 float32; the cost does not depend on its size.
"""
import argparse
import statistics
import time

import torch

import dlpack_mdspan as dm


def measure(fn, number, repeat):
    fn()  # warm: the driver's table, the event pool, the framework's caches
    per_call = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for _ in range(number):
            fn()
        per_call.append((time.perf_counter_ns() - start) / number)
    return statistics.median(per_call), min(per_call)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    try:
        import cupy
    except ImportError:
        cupy = None

    producer = torch.cuda.Stream()
    consumer = torch.cuda.Stream()
    with torch.cuda.stream(producer):
        x = torch.arange(24.0, device="cuda").reshape(4, 6)
        t = dm.from_dlpack(x)
    torch.cuda.synchronize()
    consumer_handle = consumer.cuda_stream

    rows = []

    def row(name, fn, stream=None):
        if stream is None:
            median, best = measure(fn, args.number, args.repeat)
        else:
            with torch.cuda.stream(stream):
                median, best = measure(fn, args.number, args.repeat)
        rows.append((name, median, best))

    row("import: dlpack_mdspan.from_dlpack(x) (event recorded)", lambda: dm.from_dlpack(x), producer)
    row("import: torch.from_dlpack(x)", lambda: torch.from_dlpack(x), producer)
    if cupy is not None:
        row("import: cupy.from_dlpack(x)", lambda: cupy.from_dlpack(x), producer)
    row("export: torch.from_dlpack(t), our Tensor (stream wait)", lambda: torch.from_dlpack(t), consumer)
    row("export: torch.from_dlpack(x), the torch.Tensor itself", lambda: torch.from_dlpack(x), consumer)
    if cupy is not None:
        row("export: cupy.from_dlpack(t), our Tensor (stream wait)", lambda: cupy.from_dlpack(t), None)
    row("export: t.__dlpack__(stream=consumer), capsule dropped", lambda: t.__dlpack__(stream=consumer_handle))
    row("export: x.__dlpack__(stream=consumer), capsule dropped", lambda: x.__dlpack__(stream=consumer_handle))
    torch.cuda.synchronize()

    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}"
          + (f"; cupy {cupy.__version__}" if cupy is not None else "")
          + f"; {args.repeat} x {args.number} calls each")
    print("| operation | median ns | min ns |")
    print("|---|---:|---:|")
    for name, median, best in rows:
        print(f"| {name} | {median:.0f} | {best:.0f} |")


if __name__ == "__main__":
    main()
