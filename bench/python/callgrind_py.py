# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Instructions per call of the Python boundary (callgrind), beside bench_py.py's nanoseconds.

    PYTHONPATH=build/bench/bench/python python bench/python/callgrind_py.py [--python PY] [-k TEXT]...

Each case runs in its own process under callgrind twice, with 2,000 and 22,000 calls; the
difference over 20,000 is the cost of one call, the Python loop and call floor included
(`noop`). The loop is the one bench_py.py times (timeit's `f(x)`, the function and its
argument bound as globals), on bench_py.py's objects (NumPy's and torch's `ones((4, 6))`,
the C bench's Tensor; the Rust rows on a Tensor take the Rust extension's own), so that a
ratio of two rows is the ratio of what the timed rows execute. With bench/rust_python's
module on PYTHONPATH too (scripts/bench builds it into build/bench/rust-python), the pyo3
arguments' rows are counted beside the component's, and a second table sets each against
the component's own call from C, gross and net of each side's call floor (pyo3's empty #[pyfunction] and the C METH_O `noop`; selecting a pyo3 row
with -k counts both floors and its C row too).
Hash randomisation and BLAS threads are turned off, so the counts repeat. -k runs only the
cases whose name contains one of the TEXTs (`noop` always runs).

--module-loop counts each call in a module-level loop instead (`for _ in range(n): b.noop(t)`:
the loop variable stored, the module and its argument looked up by name, the attribute
looked up), the default before 2026-11-30's afternoon and the loop of the counts that
docs/performance-history.md's earlier sections quote. Its floor (`noop`) is about 640 instructions
more than the timed loop's, which dilutes every ratio between two rows: the same difference
over a larger whole (docs/performance-history.md, "The Python rows in time, not instructions").
"""
import argparse
import os
import re
import subprocess
import sys

CASES = {
    "noop": "b.noop(t)",
    "ours: dlpack_mdspan.Tensor through the exchange API": "b.import_f32_2d(t)",
    "raw table call: dlpack_mdspan.Tensor": "b.raw_exchange_managed(t)",
    "ours: dlpack_mdspan.Tensor borrowed": "b.borrow_f32_2d(t)",
    "raw table borrow: dlpack_mdspan.Tensor": "b.raw_exchange_borrow(t)",
    "ours: NumPy through __dlpack__": "b.import_protocol_f32_2d(a)",
    "nanobind ndarray argument: NumPy": "nbb.consume_f32_2d(a)",
    "nanobind + our caster: NumPy": "nbb.consume_mdspan(a)",
    "pybind11 + our caster: NumPy": "pbb.consume_mdspan(a)",
    "pybind11 py::array_t argument: NumPy": "pbb.consume_array(a)",
    "pybind11 call floor (py::handle)": "pbb.noop(a)",
    "nanobind call floor (nb::handle)": "nbb.noop(a)",
    "ours: dlpack_mdspan.Tensor through __dlpack__": "b.import_protocol_f32_2d(t)",
    "nanobind ndarray argument: dlpack_mdspan.Tensor": "nbb.consume_f32_2d(t)",
    "numpy.from_dlpack(dlpack_mdspan.Tensor)": "np.from_dlpack(t)",
    "numpy.from_dlpack(numpy array)": "np.from_dlpack(a)",
}
TORCH_CASES = {  # when torch (2.15: it publishes the exchange API) is importable
    "ours: torch through the exchange API": "b.import_f32_2d(tt)",
    "raw table call: torch": "b.raw_exchange_managed(tt)",
    "ours: torch borrowed": "b.borrow_f32_2d(tt)",
    "ours: torch borrowed for writing": "b.borrow_f32_2d_writable(tt)",
    "raw table borrow: torch": "b.raw_exchange_borrow(tt)",
    "nanobind ndarray argument: torch": "nbb.consume_f32_2d(tt)",
    "nanobind + our caster: torch": "nbb.consume_mdspan(tt)",
    "pybind11 + our caster: torch": "pbb.consume_mdspan(tt)",
}

RUST_CASES = {  # when bench/rust_python's module (dlpm_rust_bench) is importable
    "ours: NumPy borrowed": "b.borrow_f32_2d(a)",
    "ours: NumPy imported": "b.import_f32_2d(a)",
    "rust noop (pyo3's call floor)": "rust.noop(a)",
    "rust PyTensor + view_ref: NumPy": "rust.borrow_f32(a)",
    "rust PyTensor + view (a copy): NumPy": "rust.borrow_f32_view_copy(a)",
    "rust PyTensor + view_ref: dlpack_mdspan.Tensor": "rust.borrow_f32(t)",
    "rust PyTensor + view (a copy): dlpack_mdspan.Tensor": "rust.borrow_f32_view_copy(t)",
    "rust PyTensor + view_ref: its own dlpack_mdspan.Tensor": "rust.borrow_f32(rt)",
    "ours: NumPy borrowed for writing": "b.borrow_f32_2d_writable(a)",
    "ours: dlpack_mdspan.Tensor borrowed for writing": "b.borrow_f32_2d_writable(t)",
    "rust PyTensorMut + view_mut: NumPy": "rust.borrow_f32_mut(a)",
    "rust PyTensorMut + view_mut: its own dlpack_mdspan.Tensor": "rust.borrow_f32_mut(rt)",
    "rust ManagedTensor: NumPy": "rust.import_managed(a)",
    "rust ManagedTensor: dlpack_mdspan.Tensor": "rust.import_managed(t)",
    "rust ManagedTensor: its own dlpack_mdspan.Tensor": "rust.import_managed(rt)",
}
RUST_TORCH_CASES = {  # when both are importable
    "rust PyTensor + view_ref: torch": "rust.borrow_f32(tt)",
    "rust ManagedTensor: torch": "rust.import_managed(tt)",
    "rust PyTensorMut + view_mut: torch": "rust.borrow_f32_mut(tt)",
}
C_FLOOR, PYO3_FLOOR = "noop", "rust noop (pyo3's call floor)"
# Each pyo3 row against the component's own call from a C METH_O function (issue 37's and
# 50's target: 1.2x, pyo3's own call floor excepted): gross, with pyo3's floor replaced by the
# C floor (the target's measure), and net of each side's floor.
RUST_VERSUS = {
    "rust PyTensor + view_ref: NumPy": "ours: NumPy borrowed",
    "rust PyTensor + view (a copy): NumPy": "ours: NumPy borrowed",
    "rust PyTensor + view_ref: dlpack_mdspan.Tensor": "ours: dlpack_mdspan.Tensor borrowed",
    "rust PyTensor + view (a copy): dlpack_mdspan.Tensor": "ours: dlpack_mdspan.Tensor borrowed",
    "rust PyTensor + view_ref: its own dlpack_mdspan.Tensor": "ours: dlpack_mdspan.Tensor borrowed",
    "rust ManagedTensor: NumPy": "ours: NumPy imported",
    "rust ManagedTensor: dlpack_mdspan.Tensor": "ours: dlpack_mdspan.Tensor through the exchange API",
    "rust ManagedTensor: its own dlpack_mdspan.Tensor": "ours: dlpack_mdspan.Tensor through the exchange API",
    "rust PyTensor + view_ref: torch": "ours: torch borrowed",
    "rust ManagedTensor: torch": "ours: torch through the exchange API",
    "rust PyTensorMut + view_mut: NumPy": "ours: NumPy borrowed for writing",
    "rust PyTensorMut + view_mut: its own dlpack_mdspan.Tensor": "ours: dlpack_mdspan.Tensor borrowed for writing",
    "rust PyTensorMut + view_mut: torch": "ours: torch borrowed for writing",
}
# The rows bench_py.py judges on a dlpack_mdspan.Tensor: each side on a Tensor of its own copy
# of the component. The C bench's Tensor is another copy's to the Rust extension (no lent
# form, no requirements met kept): its rows are reported beside them.
RUST_OTHER_COPY = {"rust PyTensor + view_ref: dlpack_mdspan.Tensor", "rust PyTensor + view (a copy): dlpack_mdspan.Tensor",
                   "rust ManagedTensor: dlpack_mdspan.Tensor"}

PROGRAM = """
import sys, numpy as np, dlpm_bench as b, nb_bench as nbb
if "rust." in {call!r}:
    import dlpm_rust_bench as rust
    rt = rust.make_tensor() if hasattr(rust, "make_tensor") else None
if "pbb" in {call!r}:
    import pb_bench as pbb
t = b.make_tensor(); a = np.ones((4, 6), dtype=np.float32)
if "tt" in {call!r}:
    import torch
    tt = torch.ones((4, 6), dtype=torch.float32)
{loop}
"""
MODULE_LOOP = """for _ in range(int(sys.argv[1])):
    {call}"""
# bench_py.py's measure(): timeit.Timer("f(x)", globals={"f": fn, "x": arg}).
TIMED_LOOP = """import timeit
timeit.Timer("f(x)", globals={{"f": {function}, "x": {argument}}}).timeit(int(sys.argv[1]))"""


def program(call, timed):
    if not timed:
        return PROGRAM.format(call=call, loop=MODULE_LOOP.format(call=call))
    function, argument = re.fullmatch(r"([\w.]+)\((\w+)\)", call).groups()  # every case is f(x)
    return PROGRAM.format(call=call, loop=TIMED_LOOP.format(function=function, argument=argument))


def instructions(python, call, n, timed=False):
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c",
                          program(call, timed), str(n)], env=env, capture_output=True, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", out.stderr).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("-k", dest="keep", action="append", default=[], metavar="TEXT",
                        help="only the cases whose name contains TEXT (repeatable)")
    parser.add_argument("--module-loop", action="store_true",
                        help="count in a module-level loop instead of bench_py.py's timed loop (timeit's f(x))")
    args = parser.parse_args()
    print(f"{'module-level loop' if args.module_loop else 'timed loop (timeit f(x))'}\n")
    print("| case | instructions per call |\n|---|---|")
    cases = dict(CASES)
    if subprocess.run([args.python, "-c", "import torch"], capture_output=True).returncode == 0:
        cases.update(TORCH_CASES)
    if subprocess.run([args.python, "-c", "import dlpm_rust_bench"], capture_output=True).returncode == 0:
        cases.update(RUST_CASES)
        if "ours: torch borrowed" in cases:
            cases.update(RUST_TORCH_CASES)
    if args.keep:
        cases = {name: call for name, call in cases.items() if name == "noop" or any(k in name for k in args.keep)}
    if any(name in RUST_VERSUS for name in cases):  # the net comparison needs both floors
        cases.setdefault(PYO3_FLOOR, RUST_CASES[PYO3_FLOOR])
        cases.update({c: (CASES | TORCH_CASES | RUST_CASES)[c] for n, c in RUST_VERSUS.items() if n in cases})
    counts = {}
    for name, call in cases.items():
        timed = not args.module_loop
        per_call = (instructions(args.python, call, 22000, timed) - instructions(args.python, call, 2000, timed)) // 20000
        counts[name] = per_call
        print(f"| {name} | {per_call} |", flush=True)
    print_net(counts)


def print_net(counts):
    """The pyo3 rows against the component's calls from C: gross; with pyo3's own call floor
    excepted (the pyo3 row with its floor, an empty #[pyfunction] of one object, replaced by
    the C floor `noop`, a METH_O function: the target's measure); and net of each side's
    call floor (what the argument itself costs on each side)."""
    pairs = [(n, c) for n, c in RUST_VERSUS.items() if n in counts and c in counts]
    if not pairs or C_FLOOR not in counts or PYO3_FLOOR not in counts:
        return
    c_floor, pyo3_floor = counts[C_FLOOR], counts[PYO3_FLOOR]
    print(f"\nCall floors: C METH_O {c_floor}, pyo3 {pyo3_floor} ({pyo3_floor - c_floor:+d}, pyo3's own)\n")
    print("| pyo3 row | against | gross | ratio | pyo3's floor excepted | ratio | net of each side's floor | net ratio |\n"
          "|---|---|---|---|---|---|---|---|")
    for n, c in pairs:
        excepted = counts[n] - pyo3_floor + c_floor
        rust_net, c_net = counts[n] - pyo3_floor, counts[c] - c_floor
        net_ratio = f"{rust_net / c_net:.2f}x" if c_net > 0 else "n/a"
        label = f"{n} (another copy's Tensor: reported, no target)" if n in RUST_OTHER_COPY else n
        print(f"| {label} | {c} | {counts[n]} vs {counts[c]} | {counts[n] / counts[c]:.2f}x "
              f"| {excepted} vs {counts[c]} | {excepted / counts[c]:.2f}x | {rust_net} vs {c_net} | {net_ratio} |")


if __name__ == "__main__":
    main()
