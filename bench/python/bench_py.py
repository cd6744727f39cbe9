"""Python-level DLPack import: our facade-based consumer against nanobind's ndarray argument
conversion and tvm_ffi.from_dlpack, on the same NumPy array, in the same process.

Run by scripts/bench (PYTHONPATH must hold the built dlpm_bench and nb_bench extensions):

    python3 bench/python/bench_py.py [--smoke] [--tsv FILE]

Timing is timeit's: each candidate is a `f(a)` statement timed over `number` calls; the
repeats of all candidates are interleaved (round robin) so they share the machine's load,
and each candidate's figure is the median over repeats, in ns per call. The figures
include the Python call itself; the `noop` rows give that floor.
"""

import argparse
import sys
import timeit

import numpy as np

SECTION = "Python"


def load(name):
    try:
        return __import__(name)
    except ImportError as e:  # reported in the table as a skipped row
        print(f"bench_py: cannot import {name}: {e}", file=sys.stderr)
        return None


def measure(candidates, smoke, repeats=41, target_s=0.002):
    """candidates: list of (name, fn, arg). Returns {name: ns per call}."""
    timers = [(name, timeit.Timer("f(a)", globals={"f": fn, "a": arg})) for name, fn, arg in candidates]
    if smoke:
        return {name: t.timeit(1) * 1e9 for name, t in timers}
    numbers = {}
    for name, t in timers:
        once = min(t.repeat(3, 500)) / 500  # also warms up
        numbers[name] = max(1, int(target_s / once))
    samples = {name: [] for name, _ in timers}
    for r in range(repeats):
        order = timers[r % len(timers):] + timers[: r % len(timers)]
        for name, t in order:
            samples[name].append(t.timeit(numbers[name]) / numbers[name] * 1e9)
    return {name: sorted(v)[len(v) // 2] for name, v in samples.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--tsv")
    args = ap.parse_args()

    dlpm = load("dlpm_bench")
    nb = load("nb_bench")
    tvm_ffi = load("tvm_ffi")

    a = np.ones((64, 64), dtype=np.float32)
    one = np.ones((1, 1), dtype=np.float32)
    big = np.empty((16384, 16384), dtype=np.float32)  # 2^28 elements, 1 GiB: never touched

    rows = []  # (name, ns, baseline, note)

    def row(name, ns, baseline="", note=""):
        rows.append((name, ns, baseline, note))

    nb_name = "nanobind: nb::ndarray<float, ndim<2>, c_contig> argument"
    cands = [("call floor: C function (METH_O) returning None", dlpm.noop if dlpm else None, a)]
    cands.append(("call floor: nanobind function taking nb::handle", nb.noop if nb else None, a))
    cands.append(("producer floor: a.__dlpack__(max_version=(1, 3)), capsule dropped",
                  lambda x: x.__dlpack__(max_version=(1, 3)), a))
    cands.append((nb_name, nb.consume_f32_2d if nb else None, a))
    cands.append(("ours: capsule -> dlpm_check_managed -> typed view (dlpm_bench)",
                  dlpm.consume_f32_2d if dlpm else None, a))
    cands.append(("tvm_ffi.from_dlpack(a)", tvm_ffi.from_dlpack if tvm_ffi else None, a))
    # Size independence: the same consumers on 1 element and on 2^28 elements.
    sizes = []
    for label, fn in (("ours (dlpm_bench)", dlpm.consume_f32_2d if dlpm else None),
                      ("nanobind ndarray argument", nb.consume_f32_2d if nb else None),
                      ("tvm_ffi.from_dlpack", tvm_ffi.from_dlpack if tvm_ffi else None)):
        if fn is not None:
            small_name = f"size: {label}, 1 element"
            big_name = f"size: {label}, 2^28 elements (1 GiB, untouched)"
            sizes.append((small_name, big_name))
            cands += [(small_name, fn, one), (big_name, fn, big)]

    # Everything in one interleaved measurement, so that every row sees the same load.
    present = [(n, f, x) for n, f, x in cands if f is not None]
    for _, fn, x in present:
        fn(x)  # each must accept its array (raises otherwise)
    res = measure(present, args.smoke)
    size_names = {n for pair in sizes for n in pair}
    for name, _, _ in present:
        if name in size_names:
            continue
        base = nb_name if name.startswith(("ours", "tvm_ffi")) and nb_name in res else ""
        note = ""
        if name.startswith("tvm_ffi"):
            note = "returns a tvm_ffi.Tensor (the others return None)"
        if name.startswith("ours"):
            note = "also checks the device and the DLPack version"
        row(name, res[name], base, note)
    for small_name, big_name in sizes:
        row(small_name, res[small_name])
        row(big_name, res[big_name], small_name)

    for name, ns, base, _ in rows:
        print(f"  {name:<70} {ns:9.1f} ns")
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("section\tname\tvalue\tunit\tbaseline\tallocs\tnote\n")
            for name, ns, base, note in rows:
                f.write(f"{SECTION}\t{name}\t{ns}\tns\t{base}\t\t{note}\n")


if __name__ == "__main__":
    main()
