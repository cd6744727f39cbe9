# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Python-level DLPack exchange through the shipped Python component (dlpack_mdspan::python,
driven by the dlpm_bench extension) against nanobind's ndarray argument, tvm_ffi.from_dlpack
and the raw DLPack 1.3 exchange-API calls, per producer, in one process.

Run by scripts/bench (PYTHONPATH must hold the built dlpm_bench and nb_bench extensions):

    python bench/python/bench_py.py [--smoke] [--tsv FILE] [--json FILE] [--abi3 DIR]
    python bench/python/bench_py.py --summarize RUN.json...

Producers: a NumPy 4x6 float32 array, a PyTorch 4x6 float32 CPU tensor (when torch imports:
scripts/bench runs this with the frameworks venv's python for that), and a 4x6 float32
dlpack_mdspan.Tensor made by dlpm_py_tensor_new. For each: our import (the type's exchange
API where it publishes one, else __dlpack__), our import through __dlpack__ only, our
borrow, the raw exchange-API calls (the floor of the exchange path: no checks), nanobind's
nb::ndarray<float, nb::ndim<2>, nb::c_contig> argument, tvm_ffi.from_dlpack, the call
floors, and bench/rust_python's pyo3 arguments (PyTensor<f32>, PyTensorMut<f32>,
ManagedTensor) beside the component's borrow, borrow for writing and import: on a
dlpack_mdspan.Tensor each side takes a Tensor of its own copy of the component (the C
bench's Tensor, another copy's to the Rust extension, is timed beside them with no target),
as callgrind_py.py counts them. The producer side:
numpy.from_dlpack and torch.from_dlpack of a dlpack_mdspan.Tensor against the same function
on the framework's own array. With --abi3 DIR, the dlpm_bench
built over the limited-API (abi3) component in DIR is loaded beside the full-API one and
its imports are timed in the same interleaved measurement.

Timing is timeit's: each candidate is a `f(x)` statement timed over `number` calls (about
2 ms); the repeats of all candidates are interleaved (round robin, the starting candidate
rotating) so they share the machine's load, and each candidate's figure is its best
repeat, in ns per call (the median repeat is kept too, in the JSON). The figures include
the Python call itself; the call-floor rows give it. --smoke runs every operation once.

Outputs: --tsv, the rows for bench/report.py (value = best, ns); --json, the same rows with
best and median and the target verdicts; --summarize merges several --json runs (the
median of each row's best) and prints the verdicts as a Markdown table:

    ours through __dlpack__              <= nanobind's ndarray argument, same producer
    nanobind + our mdspan caster         <= nanobind's ndarray argument (NumPy), >= 10x faster (torch)
    pybind11 + our mdspan caster         <= 1.3x nanobind's ndarray argument (NumPy), >= 10x faster (torch);
                                            beside pybind11's own py::array_t argument (NumPy; no target)
    ours through the exchange API        <= 1.3x the raw managed_tensor_from_py_object_no_sync
                                            + deleter, same producer
    numpy.from_dlpack(dlpack_mdspan.Tensor) <= numpy.from_dlpack(numpy array)
"""

import argparse
import importlib.metadata
import importlib.util
import json
import pathlib
import statistics
import sys
import timeit

SECTION = "Python"

# Row names, shared by the measurement and the verdicts.
FLOOR_C = "call floor: C function (METH_O) returning None"
FLOOR_NB = "call floor: nanobind function taking nb::handle"
FLOOR_PYO3 = "call floor: pyo3 #[pyfunction] taking &Bound<PyAny>"
PRODUCER_FLOOR = "producer floor: x.__dlpack__(max_version=(1, 3)), capsule dropped"
RAW_MANAGED = "raw exchange API: managed_tensor_from_py_object_no_sync + deleter (no checks)"
RAW_BORROW = "raw exchange API: dltensor_from_py_object_no_sync (no checks)"
OURS_IMPORT = "ours: dlpm_py_import, default options"
OURS_PROTOCOL = "ours: dlpm_py_import through __dlpack__ (use_exchange_api = 0)"
OURS_BORROW = "ours: dlpm_py_borrow + dlpm_py_borrow_end"
OURS_BORROW_WRITABLE = "ours: dlpm_py_borrow for writing + dlpm_py_borrow_end"
RUST_BORROW = "ours, Rust pyo3: PyTensor<f32> argument (dlpm_py_borrow, a view's checks)"
RUST_BORROW_MUT = "ours, Rust pyo3: PyTensorMut<f32> argument (dlpm_py_borrow for writing, a view's checks)"
RUST_IMPORT = "ours, Rust pyo3: ManagedTensor argument (dlpm_py_import)"
RUST_BORROW_OTHER = "Rust pyo3 on the C bench's Tensor: PyTensor<f32> argument (another copy's Tensor)"
RUST_IMPORT_OTHER = "Rust pyo3 on the C bench's Tensor: ManagedTensor argument (another copy's Tensor)"
ABI3_IMPORT = "ours, abi3 component: dlpm_py_import, default options"
ABI3_PROTOCOL = "ours, abi3 component: dlpm_py_import through __dlpack__"
NB = "nanobind: nb::ndarray<float, ndim<2>, c_contig> argument"
NB_CASTER = "nanobind + our caster: std::mdspan<float, dextents<int64_t, 2>> argument"
NB_FALL_THROUGH = "nanobind + our caster, two overloads: a float64 view refuses, a float32 view takes it"
PB_CASTER = "pybind11 + our caster: std::mdspan<float, dextents<int64_t, 2>> argument"
FLOOR_PB = "call floor: pybind11 function taking py::handle"
PB_ARRAY = "pybind11: py::array_t<float, c_style> argument (its own NumPy caster; rank checked in the body)"
TVM = "tvm_ffi.from_dlpack(x)"
NP_OWN = "numpy.from_dlpack(numpy array)"
NP_OURS = "numpy.from_dlpack(dlpack_mdspan.Tensor)"
TORCH_OWN = "torch.from_dlpack(torch tensor)"
TORCH_OURS = "torch.from_dlpack(dlpack_mdspan.Tensor)"
PRODUCER_SIDE = f"{SECTION}: producer side, 4x6 float32"
SIZE = f"{SECTION}: size independence, NumPy"


def load(name):
    try:
        return __import__(name)
    except ImportError as e:  # reported as skipped rows
        print(f"bench_py: cannot import {name} with {sys.executable}: {e}; its rows are skipped", file=sys.stderr)
        return None


def load_abi3(directory):
    """The dlpm_bench extension in `directory`, under another module name (the init symbol
    stays PyInit_dlpm_bench: it is named after the last component)."""
    found = sorted(pathlib.Path(directory).glob("dlpm_bench*.so"))
    if not found:
        sys.exit(f"bench_py: no dlpm_bench*.so in {directory}")
    spec = importlib.util.spec_from_file_location("dlpm_abi3.dlpm_bench", found[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def measure(candidates, smoke, repeats=31, target_s=0.002):
    """candidates: list of (key, fn, arg). Returns {key: (best ns, median ns)}."""
    timers = [(key, timeit.Timer("f(x)", globals={"f": fn, "x": arg})) for key, fn, arg in candidates]
    if smoke:
        out = {}
        for key, t in timers:
            ns = t.timeit(1) * 1e9
            out[key] = (ns, ns)
        return out
    numbers = {}
    for key, t in timers:
        once = min(t.repeat(3, 200)) / 200  # also warms up
        numbers[key] = max(1, int(target_s / once))
    samples = {key: [] for key, _ in timers}
    for r in range(repeats):
        k = r % len(timers)
        for key, t in timers[k:] + timers[:k]:
            samples[key].append(t.timeit(numbers[key]) / numbers[key] * 1e9)
    return {key: (min(v), statistics.median(v)) for key, v in samples.items()}


def run(args):
    dlpm = load("dlpm_bench")
    nb = load("nb_bench")
    pb = load("pb_bench")
    tvm_ffi = load("tvm_ffi")
    np = load("numpy")
    torch = load("torch")
    abi3 = load_abi3(args.abi3) if args.abi3 else None
    rust = load("dlpm_rust_bench")  # bench/rust_python, built by scripts/bench when cargo is there
    if dlpm is None or np is None:
        sys.exit("bench_py: dlpm_bench and numpy are required")

    producers = [("NumPy ndarray", np.ones((4, 6), dtype=np.float32))]
    if torch is not None:
        producers.append(("torch.Tensor (CPU)", torch.ones((4, 6), dtype=torch.float32)))
    ours = dlpm.make_tensor()
    producers.append(("dlpack_mdspan.Tensor", ours))

    cands = []  # (section, name, fn, arg, baseline, note)

    def add(section, name, fn, arg, baseline="", note=""):
        if fn is not None:
            cands.append((section, name, fn, arg, baseline, note))

    for label, x in producers:
        section = f"{SECTION}: {label} 4x6 float32"
        exchange, has_borrow = dlpm.has_exchange_api(x), False
        add(section, FLOOR_C, dlpm.noop, x)
        add(section, FLOOR_NB, nb and nb.noop, x)
        add(section, FLOOR_PYO3, rust and rust.noop, x, FLOOR_C, "pyo3's own call, netted out of the Rust rows")
        add(section, PRODUCER_FLOOR, lambda o: o.__dlpack__(max_version=(1, 3)), x)
        if exchange:
            add(section, RAW_MANAGED, dlpm.raw_exchange_managed, x, note="the floor of the exchange path")
            try:
                dlpm.raw_exchange_borrow(x)
                add(section, RAW_BORROW, dlpm.raw_exchange_borrow, x)
                has_borrow = True
            except TypeError:  # the table has no dltensor_from_py_object_no_sync
                pass
        add(section, NB, nb and nb.consume_f32_2d, x,
            note="nanobind 3.1 calls __dlpack__(max_version=...); it uses no exchange API")
        add(section, FLOOR_PB, pb and pb.noop, x)
        if label.startswith("NumPy"):  # py::array_t takes NumPy arrays only (others are converted)
            add(section, PB_ARRAY, pb and getattr(pb, "consume_array", None), x,
                note="pybind11's own floor for a NumPy argument: its call and its array caster")
        add(section, NB_CASTER, nb and getattr(nb, "consume_mdspan", None), x, NB)
        add(section, PB_CASTER, pb and pb.consume_mdspan, x, NB)
        add(section, NB_FALL_THROUGH, nb and getattr(nb, "overloaded", None), x, NB_CASTER,
            "the first overload refused before an export where the producer announces its dtype (ours)")
        add(section, OURS_IMPORT, dlpm.import_f32_2d, x, RAW_MANAGED if exchange else NB,
            "the type's exchange API" if exchange else "__dlpack__: the type publishes no exchange API")
        add(section, OURS_PROTOCOL, dlpm.import_protocol_f32_2d, x, NB)
        add(section, OURS_BORROW, dlpm.borrow_f32_2d, x, RAW_BORROW if has_borrow else NB,
            "dltensor_from_py_object_no_sync" if has_borrow else "falls back to dlpm_py_import")
        # The Rust rows against the component's own calls (which also ask for ndim 2 and C
        # order: a little more checking than the Rust arguments, which ask for none). On a
        # dlpack_mdspan.Tensor each side takes a Tensor of its own copy of the component (the
        # C bench's `ours` is another copy's Tensor to the Rust extension, which takes other
        # paths: no lent form, no requirements met kept); callgrind_py.py counts the same.
        own = rust.make_tensor() if rust is not None and x is ours else x
        add(section, RUST_BORROW, rust and rust.borrow_f32, own, OURS_BORROW, "pyo3 over the same component")
        add(section, RUST_IMPORT, rust and rust.import_managed, own, OURS_IMPORT, "pyo3 over the same component")
        add(section, OURS_BORROW_WRITABLE, dlpm.borrow_f32_2d_writable, x)
        add(section, RUST_BORROW_MUT, rust and rust.borrow_f32_mut, own, OURS_BORROW_WRITABLE,
            "pyo3 over the same component")
        if own is not x:  # reported, no target: the Rust extension on the C bench's Tensor
            add(section, RUST_BORROW_OTHER, rust.borrow_f32, x, OURS_BORROW, "another copy's Tensor: no target")
            add(section, RUST_IMPORT_OTHER, rust.import_managed, x, OURS_IMPORT, "another copy's Tensor: no target")
        if abi3 is not None:
            add(section, ABI3_IMPORT, abi3.import_f32_2d, x, OURS_IMPORT, "the limited-API (abi3) component")
            add(section, ABI3_PROTOCOL, abi3.import_protocol_f32_2d, x, OURS_PROTOCOL,
                "the limited-API (abi3) component")
        add(section, TVM, tvm_ffi and tvm_ffi.from_dlpack, x, NB, "returns a tvm_ffi.Tensor (the others return None)")

    # The producer side: frameworks importing a dlpack_mdspan.Tensor, against their own arrays.
    add(PRODUCER_SIDE, NP_OWN, np.from_dlpack, producers[0][1])
    add(PRODUCER_SIDE, NP_OURS, np.from_dlpack, ours, NP_OWN, "our __dlpack__ (NumPy uses no exchange API)")
    if torch is not None:
        add(PRODUCER_SIDE, TORCH_OWN, torch.from_dlpack, producers[1][1])
        add(PRODUCER_SIDE, TORCH_OURS, torch.from_dlpack, ours, TORCH_OWN)

    # Size independence: the same consumers on 4 elements (2 x 2) and on 2^28 elements (never
    # touched), both of extents above 1; 1 element (1 x 1) beside them, whose extents of 1 a
    # consumer may treat apart (the shape, not the size: bench/cpp/size_bench.cpp).
    one = np.ones((1, 1), dtype=np.float32)
    four = np.ones((2, 2), dtype=np.float32)
    big = np.empty((16384, 16384), dtype=np.float32)  # 1 GiB of address space
    for label, fn in (("ours (dlpm_py_import)", dlpm.import_f32_2d),
                      ("nanobind ndarray argument", nb and nb.consume_f32_2d),
                      ("tvm_ffi.from_dlpack", tvm_ffi and tvm_ffi.from_dlpack)):
        small = f"size: {label}, 4 elements (2 x 2)"
        add(SIZE, small, fn, four)
        add(SIZE, f"size: {label}, 2^28 elements (1 GiB, untouched)", fn, big, small)
        add(SIZE, f"size: {label}, 1 element (extents of 1)", fn, one, small)

    for _, _, fn, x, _, _ in cands:
        fn(x)  # each must accept its argument (raises otherwise)
    res = measure([((s, n), f, x) for s, n, f, x, _, _ in cands], args.smoke)

    versions = {"python": sys.version.split()[0], "executable": sys.executable}
    for dist in ("numpy", "torch", "nanobind", "pybind11", "apache-tvm-ffi"):
        versions[dist] = version(dist)
    if nb is not None and versions["nanobind"] is None:
        versions["nanobind"] = "3.1.0 (built by bench/CMakeLists.txt from the PATH python's nanobind)"
    rows = [{"section": s, "name": n, "best_ns": res[(s, n)][0], "median_ns": res[(s, n)][1], "baseline": b,
             "note": note} for s, n, _, _, b, note in cands]
    return {"smoke": args.smoke, "versions": versions, "abi3": bool(abi3), "rows": rows}


# ---- verdicts ------------------------------------------------------------------------------


def verdicts(rows):
    """rows: {(section, name): best ns}. Returns [(target, measured, verdict)]."""
    out = []
    sections = []
    for s, _ in rows:
        if s not in sections:
            sections.append(s)

    def check(target, a, b, limit):
        x = rows[a] / rows[b]
        out.append((target, f"{rows[a]:.1f} vs {rows[b]:.1f} ns ({x:.2f}x)", "met" if x <= limit else "MISSED"))

    def speedup(target, slow, fast, factor):
        x = rows[slow] / rows[fast]
        out.append((target, f"{rows[fast]:.1f} vs {rows[slow]:.1f} ns ({x:.1f}x faster)",
                    "met" if x >= factor else "MISSED"))

    for s in sections:
        if s in (PRODUCER_SIDE, SIZE):
            continue
        producer = s.removeprefix(f"{SECTION}: ").removesuffix(" 4x6 float32")
        if (s, OURS_PROTOCOL) in rows and (s, NB) in rows:
            check(f"{producer}: ours through __dlpack__ <= nanobind's ndarray argument", (s, OURS_PROTOCOL), (s, NB), 1.0)
        if (s, ABI3_PROTOCOL) in rows and (s, NB) in rows:
            check(f"{producer}: ours through __dlpack__, abi3 component <= nanobind's ndarray argument",
                  (s, ABI3_PROTOCOL), (s, NB), 1.0)
        if (s, NB_CASTER) in rows and (s, NB) in rows:
            if producer.startswith("NumPy"):
                check(f"{producer}: nanobind + our mdspan caster <= nanobind's ndarray argument", (s, NB_CASTER), (s, NB), 1.0)
            elif producer.startswith("torch"):
                speedup(f"{producer}: nanobind + our mdspan caster >= 10x faster than nanobind's ndarray", (s, NB),
                        (s, NB_CASTER), 10.0)
        if (s, PB_CASTER) in rows and (s, PB_ARRAY) in rows:
            x = rows[(s, PB_CASTER)] / rows[(s, PB_ARRAY)]
            out.append((f"{producer}: pybind11 + our mdspan caster against pybind11's own py::array_t argument "
                        "(no target)", f"{rows[(s, PB_CASTER)]:.1f} vs {rows[(s, PB_ARRAY)]:.1f} ns ({x:.2f}x)",
                        "reported"))
        if (s, PB_CASTER) in rows and (s, NB) in rows:
            if producer.startswith("NumPy"):
                check(f"{producer}: pybind11 + our mdspan caster <= 1.3x nanobind's ndarray argument", (s, PB_CASTER),
                      (s, NB), 1.3)
            elif producer.startswith("torch"):
                speedup(f"{producer}: pybind11 + our mdspan caster >= 10x faster than nanobind's ndarray", (s, NB),
                        (s, PB_CASTER), 10.0)
        if (s, OURS_IMPORT) in rows and (s, RAW_MANAGED) in rows:
            check(f"{producer}: ours through the exchange API <= 1.3x the raw table call", (s, OURS_IMPORT),
                  (s, RAW_MANAGED), 1.3)
    if (PRODUCER_SIDE, NP_OURS) in rows and (PRODUCER_SIDE, NP_OWN) in rows:
        check("numpy.from_dlpack(dlpack_mdspan.Tensor) <= numpy.from_dlpack(numpy array)", (PRODUCER_SIDE, NP_OURS),
              (PRODUCER_SIDE, NP_OWN), 1.0)
    return out


def print_table(result):
    rows = result["rows"]
    width = max(len(r["name"]) for r in rows)
    by_key = {(r["section"], r["name"]): r for r in rows}
    section = None
    print("ns per call: best repeat, median repeat; ratio of the best against the row named after it")
    for r in rows:
        if r["section"] != section:
            section = r["section"]
            print(f"\n{section}")
        base = by_key.get((r["section"], r["baseline"])) if r["baseline"] else None
        ratio = f"{r['best_ns'] / base['best_ns']:5.2f}x vs {r['baseline']}" if base else ""
        print(f"  {r['name']:<{width}} {r['best_ns']:9.1f} {r['median_ns']:9.1f}  {ratio}")
    if not result["smoke"]:
        print()
        out = verdicts({(r["section"], r["name"]): r["best_ns"] for r in rows})
        tw = max((len(t) for t, _, _ in out), default=0)
        for t, m, v in out:
            print(f"  {t:<{tw}}  {m:<28} {v}")
    v = result["versions"]
    print("\n" + ", ".join(f"{k} {val}" for k, val in v.items() if val))


def summarize(paths):
    """The verdicts over several --json runs: each row's value is the median of its runs' best."""
    runs = [json.load(open(p)) for p in paths]
    values = {}
    for run_ in runs:
        for r in run_["rows"]:
            values.setdefault((r["section"], r["name"]), []).append(r["best_ns"])
    out = verdicts({key: statistics.median(v) for key, v in values.items()})
    print(f"Python targets (bench/python/bench_py.py; ns per call, the median of {len(runs)} runs' best):\n")
    print("| target | measured | verdict |\n|---|---|---|")
    for t, m, v in out:
        print(f"| {t} | {m} | {v} |")
    print("\n" + ", ".join(f"{k} {val}" for k, val in runs[0]["versions"].items() if val))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true", help="every operation once")
    ap.add_argument("--tsv", help="rows for bench/report.py")
    ap.add_argument("--json", help="rows with best and median, and the verdicts")
    ap.add_argument("--abi3", metavar="DIR", help="also time the dlpm_bench in DIR (built over the abi3 component)")
    ap.add_argument("--summarize", nargs="+", metavar="RUN.json", help="the verdicts over several --json runs")
    args = ap.parse_args()
    if args.summarize:
        summarize(args.summarize)
        return
    result = run(args)
    rows = result["rows"]
    if not args.smoke:
        result["verdicts"] = [dict(zip(("target", "measured", "verdict"), v))
                              for v in verdicts({(r["section"], r["name"]): r["best_ns"] for r in rows})]
    print_table(result)
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("section\tname\tvalue\tunit\tbaseline\tallocs\tnote\n")
            for r in rows:
                f.write(f"{r['section']}\t{r['name']}\t{r['best_ns']}\tns\t{r['baseline']}\t\t{r['note']}\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
