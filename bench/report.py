# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Merges the benchmark TSVs into one table and checks the performance targets.

    python3 bench/report.py [--md FILE] [--smoke] RESULT.tsv...

Each TSV has the columns section, name, value, unit, baseline, allocs, note (written by
dlpm_bench_cpp, dlpack-mdspan-bench, bench_py.py and compile_time.py). A row that appears
in several files (the C++ suite runs several times, each in a fresh process, so that one
unlucky memory layout or load burst cannot decide a figure) gets the median of its values.
The ratio is against the row's baseline from the same run set.

Rows with unit "instr" (bench/callgrind.py: instructions per call, counted by callgrind)
are not rows of their own: they fill the instructions column of the timed row with the
same section and name.

    python3 bench/report.py --check docs/performance.md INSTR.tsv...

compares the instruction counts of INSTR.tsv (bench/callgrind.py's) with the committed
table, the first table under "## Results" in docs/performance.md, row by row (section and
name), and fails (exit status 1, every such row listed) when a row counts more than 2 %
above its committed figure. Rows the committed table lacks are listed as new. Instruction
counts are exact, so the check does not depend on the machine's load; it is the check a
developer runs before stopping (scripts/bench --instructions --check), not a timed test.
"""

import argparse
import os
import csv
import functools
import statistics
import sys


def load(paths):
    rows, order, instr = {}, [], {}
    for p in paths:
        with open(p) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                key = (r["section"], r["name"])
                if r["unit"] == "instr":
                    instr.setdefault(key, []).append(float(r["value"]))
                    continue
                if key not in rows:
                    rows[key] = dict(r, values=[])
                    order.append(key)
                rows[key]["values"].append(float(r["value"]))
    for key, r in rows.items():
        r["median"] = statistics.median(r["values"])
        r["instr"] = statistics.median(instr[key]) if key in instr else None
    return rows, order


def header(rows):
    """Lines above the table: the third-party versions the rows' notes name."""
    cccl = sorted({r["note"] for r in rows.values() if r.get("note", "").startswith("CCCL ")})
    lines = []
    if cccl:
        lines.append(f"CCCL candidates: {', '.join(cccl)} (headers of the pinned nvidia-cuda-cccl wheel, "
                     "host code compiled by the same clang + libc++)")
    if any(r["instr"] is not None for r in rows.values()):
        lines.append("instr/op: instructions per call counted by callgrind (bench/callgrind.py), including the "
                     "2 to 3 of the benchmark loop; the ratio column next to it is against the same baseline")
    return "\n\n".join(lines)


def fmt_instr(v):
    return "" if v is None else (f"{v:.0f}" if abs(v - round(v)) < 0.05 else f"{v:.1f}")


def fmt_value(v, unit):
    if unit == "ms":
        return f"{v:.0f} ms"
    return f"{v:.1f} ns" if v >= 10 else f"{v:.2f} ns"


def table(rows, order):
    number = {key: i + 1 for i, key in enumerate(order)}
    lines = ["| # | benchmark | median | ratio | instr/op | instr ratio | vs # | allocs/op |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    section = None
    for key in order:
        r = rows[key]
        if key[0] != section:
            section = key[0]
            lines.append(f"| | **{section}** | | | | | | |")
        base = rows.get((key[0], r["baseline"])) if r["baseline"] else None
        ratio = f"{r['median'] / base['median']:.2f}x" if base else ""
        iratio = (f"{r['instr'] / base['instr']:.2f}x"
                  if base and r["instr"] is not None and base["instr"] else "")
        vs = str(number[(key[0], r["baseline"])]) if base else ""
        allocs = r["allocs"] if r["allocs"] != "" else "n/a"
        if allocs not in ("n/a",):
            allocs = f"{float(allocs):g}"
        lines.append(f"| {number[key]} | `{r['name']}` | {fmt_value(r['median'], r['unit'])} | {ratio} | "
                     f"{fmt_instr(r['instr'])} | {iratio} | {vs} | {allocs} |")
    return "\n".join(lines)


# Why a target is missed, by the start of its text: what the profiles in docs/performance.md
# ("What limits the missed targets") measured. Shown only beside a MISSED verdict, so a
# target that comes to be met drops its reason by itself. The causes only: their figures
# are one run's and stay, dated, in the profile, not beside every later run's numbers.
PROFILE = "([profile](#what-limits-the-missed-targets))"
MISS_REASONS = (
    ("checked import", "per dimension, checks CCCL does not make: the range bound, the span, std::layout_stride's "
                       "uniqueness and extent-1 rule, a relaxed view's element count; then the address-space wrap "
                       "and metadata alignment " + PROFILE),
    ("strided import", "the per-dimension passes (the element count, the span with its overflow tests, the stride "
                       "rules) and std::layout_stride's uniqueness, which CCCL does not test; a permutation sorts "
                       + PROFILE),
    ("export view", "the int64 range test of size_t extents and strides, the empty-view rule, and get() building "
                    "its DLTensor beside the view's fields (by value, for clang's lifetime diagnostic) " + PROFILE),
    ("Rust views", "the call a view makes, dlpm_check_tensor, also counts the elements and writes the checked "
                   "form (the view's length and strides; its raw row is in the Rust section); what Rust adds over "
                   "that call is the DLTensor's copy, the strides' inline buffer, the length's range and the "
                   "Result " + PROFILE),
    ("Rust ndarray view", "the view's shape and strides copied into ndarray's dimension types (1.08x in "
                          "instructions; the time moves about the limit with the bench binary's code layout) "
                          + PROFILE),
    ("Rust pyo3 argument <= 1.2x the component's own call, pyo3's call floor excepted (NumPy",
     "PyTensor and PyTensorMut: the view's one check, dlpm_check_tensor, which also writes the checked form "
     "the view is read from (the C row's import makes dlpm_check_managed), and pyo3's moves of the 128-byte "
     "argument; ManagedTensor: about 1.07x in instructions, its time about the limit from run to run "
     + PROFILE),
    ("Rust pyo3 argument", "the view made from the lent checked form, and pyo3's moves of the 128-byte argument, "
                           "which it reads with 16-byte loads from narrower stores (a failed store-to-load "
                           "forward per 16 bytes); a writer (PyTensorMut) of another producer than this copy's "
                           "writable Tensor takes the owning path (an export and its release) " + PROFILE),
    ("NumPy ndarray: nanobind + our mdspan caster", "about nb::ndarray's instructions; the keep-alive "
                                                    "that stops a view inside std::optional, std::vector or "
                                                    "std::variant from outliving its tensor " + PROFILE),
    ("NumPy ndarray: pybind11", "pybind11's dispatch (its call-floor row is above nanobind's) and the keep-alive "
                                "through loader_life_support, a hash-set insert " + PROFILE),
    ("torch.Tensor (CPU): nanobind + our mdspan caster", "a writer's import (the parameter is a mutable mdspan) "
                                                         "asks PyTorch for the semantic bits, is_neg() and "
                                                         "requires_grad " + PROFILE),
    ("torch.Tensor (CPU): pybind11", "pybind11's dispatch and loader_life_support's keep-alive, as on NumPy "
                                     + PROFILE),
    ("torch.Tensor (CPU): ours through __dlpack__", "the semantic-bits check: PyTorch's is_neg() " + PROFILE),
    ("torch.Tensor (CPU): ours through the exchange API", "the semantic-bits check: PyTorch's is_neg(), most of it "
                                                          "its own GIL release and retake " + PROFILE),
    ("dlpack_mdspan.Tensor: ours through the exchange API", "the requirements check, dlpm_check_prechecked (the description compared with the Tensor's carried checked form, then the requirements) " + PROFILE),
    ("numpy.from_dlpack(dlpack_mdspan.Tensor)", "a few more instructions; our __dlpack__ makes its managed "
                                                "tensor with glibc's malloc, NumPy with pymalloc " + PROFILE),
    ("cost independent of tensor size", "a 2^28-element row's time more than 10 % off the 4-element one's; "
                                        "its instruction count beside it tells a check from noise " + PROFILE),
)


def miss_reason(target, verdict):
    if verdict != "MISSED":
        return ""
    return next((why for start, why in MISS_REASONS if target.startswith(start)), "")


RANKS = (1, 2, 4, 8)
LAYOUTS = ("layout_right", "layout_left", "layout_stride", "layout_stride_relaxed")


@functools.cache
def bench_py_module():
    """bench/python/bench_py.py: the Python rows' names and verdicts live beside the measurement
    (imported once: its folder goes on sys.path once)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
    import bench_py  # noqa: E402
    return bench_py


def targets(rows):
    def get(section, name):
        return rows.get((section, name))

    def ratio(section, name):
        r = get(section, name)
        b = get(section, r["baseline"]) if r and r["baseline"] else None
        return r["median"] / b["median"] if r and b else None

    def ns(r):
        return fmt_value(r["median"], r["unit"])

    def versus(a, b):
        """"a vs b ns (ratio)", and the same for the instruction counts when both have them."""
        text = f"{ns(a)} vs {ns(b)} ({a['median'] / b['median']:.2f}x)"
        if a["instr"] is not None and b["instr"] is not None and b["instr"]:
            text += f"; {fmt_instr(a['instr'])} vs {fmt_instr(b['instr'])} instr ({a['instr'] / b['instr']:.2f}x)"
        return text

    out = []

    def verdict(target, measured, ok):
        out.append((target, measured, "met" if ok else "MISSED"))

    def summary(target, results):
        if results:
            met = sum(results)
            verdict(target, f"met in {met} of {len(results)}", met == len(results))

    def within(a, b, time_limit, instr_limit):
        """a's time at most time_limit x b's, and its instructions at most instr_limit x b's
        (when callgrind measured both)."""
        ok = a["median"] <= time_limit * b["median"]
        if a["instr"] is not None and b["instr"] is not None and b["instr"]:
            ok = ok and a["instr"] <= instr_limit * b["instr"]
        return ok

    # ---- checked import: at most CCCL's instructions and time --------------------------------
    imp = "import view"
    vs_cccl, lines = [], []
    for rank in RANKS:
        for layout in LAYOUTS:
            ours = get(imp, f"rank {rank}, {layout}: to_mdspan<M>(t)")
            cccl = get(imp, f"rank {rank}, {layout}: cuda::to_host_mdspan (CCCL)")
            if ours and cccl:
                ok = within(ours, cccl, 1.0, 1.0)
                vs_cccl.append(ok)
                lines.append((f"checked import, rank {rank} {layout}: to_mdspan <= CCCL's to_host_mdspan, time and "
                              "instructions", versus(ours, cccl), ok))
    if not vs_cccl and get(imp, "rank 1, layout_right: to_mdspan<M>(t)"):
        out.append(("checked import <= CCCL's to_host_mdspan", "no CCCL rows (dlpm_bench_cpp built without CCCL)",
                    "n/a"))
    summary("checked import <= CCCL's to_host_mdspan in time and instructions, every rank and layout", vs_cccl)
    for t, m, ok in lines:
        verdict(t, m, ok)

    # ---- strided import (slices, transposes, ...): at most CCCL's, where CCCL accepts the tensor --
    vs_cccl, lines = [], []
    ours_suffix = ": to_mdspan<M>(t)"
    for section, name in [k for k in rows if k[0] == "strided import" and k[1].endswith(ours_suffix)]:
        what = name[: -len(ours_suffix)]
        cccl = get(section, f"{what}: cuda::to_host_mdspan (CCCL)")
        if cccl:
            ours = get(section, name)
            ok = within(ours, cccl, 1.0, 1.0)
            vs_cccl.append(ok)
            lines.append((f"checked import, {what}: to_mdspan <= CCCL's to_host_mdspan, time and instructions",
                          versus(ours, cccl), ok))
    summary("strided import (slice, transpose, permutation, broadcast, reversed, extent-1 axis) <= CCCL's "
            "to_host_mdspan in time and instructions, every row CCCL accepts", vs_cccl)
    for t, m, ok in lines:
        verdict(t, m, ok)

    # ---- export view: at most 1.3x the hand fill's time and 1.5x its instructions ----------
    lines, results = [], []
    for rank in RANKS:
        for kind in ("static", "dynamic"):
            ours = get("export view", f"rank {rank}, {kind} extents: to_dlpack_tensor(md).get()")
            hand = get("export view", f"rank {rank}, {kind} extents: hand-filled DLTensor")
            if ours and hand:
                ok = within(ours, hand, 1.3, 1.5)
                results.append(ok)
                lines.append((f"export view, rank {rank} {kind} extents: <= 1.3x the hand fill's time, 1.5x its "
                              "instructions", versus(ours, hand), ok))
    summary("export view <= 1.3x the hand fill (time), 1.5x (instructions), every rank, static and dynamic", results)
    for t, m, ok in lines:
        verdict(t, m, ok)

    views = [r for (s, n), r in rows.items()
             if s in ("export view", "import view") or (s == "size independence" and "view" in n and "managed" not in n)
             or "adopt + view + release" in n]
    if views:
        worst = max(float(r["allocs"]) for r in views)
        verdict("view paths: 0 allocations", f"max {worst:g} over {len(views)} view rows", worst == 0)
    m = get("managed tensor", "rank 4 export + destroy: to_managed_tensor(md, owner)")
    if m:
        verdict("managed export: exactly 1 allocation, <= 40 ns",
                f"{float(m['allocs']):g} allocation, {m['median']:.1f} ns (export + destroy)",
                float(m["allocs"]) == 1 and m["median"] <= 40)

    # ---- adopt + view + release -------------------------------------------------------------
    a = get("managed tensor", "rank 4 adopt + view + release: managed_tensor::adopt(p).view<M>()")
    if a:
        verdict("adopt + view + release <= 20 ns plus the deleter", f"{a['median']:.1f} ns (no deleter runs)",
                a["median"] <= 20)
        c = get("managed tensor", "rank 4 adopt + view + release: CCCL import only, cuda::to_host_mdspan(p->dl_tensor)")
        c_imp = get(imp, "rank 4, layout_right: cuda::to_host_mdspan (CCCL)")
        if not c:
            out.append(("adopt + view + release <= CCCL's import + 3 ns", "no CCCL row (built without CCCL)", "n/a"))
        else:
            text = f"{ns(a)} vs {ns(c)} + 3 = {c['median'] + 3:.1f} ns"
            if a["instr"] is not None and c["instr"] is not None:
                text += f"; {fmt_instr(a['instr'])} vs {fmt_instr(c['instr'])} instr"
            if c_imp:
                text += f" (CCCL's rank-4 layout_right import in the import group: {ns(c_imp)})"
            verdict("adopt + view + release (rank 4, layout_right) <= CCCL's import of the same tensor + 3 ns", text,
                    a["median"] <= c["median"] + 3)

    # ---- C facade ---------------------------------------------------------------------------
    pairs = [("validate: dlpm_validate", "validate"), ("check (f32, ndim 2, C order, CPU): dlpm_check", "check"),
             ("check managed: dlpm_check_managed", "check managed"),
             ("managed new + delete: dlpm_managed_new + dlpm_managed_delete", "managed new + delete"),
             ("managed new + delete: dlpm_managed_new_from + dlpm_managed_delete", "managed new_from + delete")]
    diffs = []
    for name, short in pairs:
        r = get("C facade", name)
        b = get("C facade", r["baseline"]) if r else None
        if r and b:
            diffs.append((short, r["median"] - b["median"]))
    if diffs:
        verdict("C facade overhead <= 5 ns over inline C++", ", ".join(f"{s} {d:+.1f} ns" for s, d in diffs),
                max(d for _, d in diffs) <= 5)
    r = get("C facade", "check (f32, ndim 2, C order, CPU): dlpm_check")
    b = get("C facade", r["baseline"]) if r else None
    if r and b:
        verdict("dlpm_check <= 1.2x the inline check_requirements it wraps", versus(r, b),
                r["median"] <= 1.2 * b["median"])

    # Issue 30's Rust targets: a view and each element access at most 1.1x the raw facade
    # calls behind it; the round trip at most 1.5x, with at most the raw path's 3 allocations.
    # A raw row beside a baseline (the call a view makes, when the baseline is a cheaper
    # call) is a reference, not a candidate.
    rust = [(n, r) for (s, n), r in rows.items()
            if s == "Rust" and r["baseline"] and not n.startswith(("round trip", "ndarray")) and ": raw " not in n]
    if rust:
        verdict("Rust views and element access <= 1.1x the raw facade calls",
                "; ".join(f"{n.split(':')[0]}: {versus(r, get('Rust', r['baseline']))}" for n, r in rust),
                max(ratio("Rust", n) for n, _ in rust) <= 1.1)
    made = get("Rust", "view of a bare DLTensor: raw dlpm_check_tensor (the call the view makes)")
    view = get("Rust", "view of a bare DLTensor: TensorView::<f32>::from_raw")
    if made and view:
        out.append(("Rust view of a bare DLTensor against the one facade call it makes, dlpm_check_tensor (no target)",
                    versus(view, made), "reported"))
    # Issue 37's ndarray target: the ndarray view at most 1.1x the view it is made from.
    for n, r in [(n, r) for (s, n), r in rows.items() if s == "Rust" and r["baseline"] and n.startswith("ndarray")]:
        verdict("Rust ndarray view <= 1.1x the TensorView it is made from", versus(r, get("Rust", r["baseline"])),
                ratio("Rust", n) <= 1.1)
    # Issues 37 and 50's pyo3 target: a Rust pyo3 argument at most 1.2x the component's own
    # call, pyo3's own call floor excepted: the Rust row with pyo3's call floor (an empty
    # #[pyfunction]) replaced by the C call floor (a METH_O function), against the C row;
    # the gross ratio and the ratio net of each side's floor are shown beside it.
    for (s, n), r in rows.items():
        if s.startswith("Python") and n.startswith("ours, Rust pyo3") and r["baseline"]:
            b = get(s, r["baseline"])
            bench_py = bench_py_module()
            c_floor, pyo3_floor = get(s, bench_py.FLOOR_C), get(s, bench_py.FLOOR_PYO3)
            text = f"{n.split(': ')[1].split(' (')[0]}: gross {versus(r, b)}"
            ok = ratio(s, n) <= 1.2
            if c_floor and pyo3_floor:
                keys = [k for k in ("median", "instr") if all(x[k] is not None for x in (r, b, c_floor, pyo3_floor))]

                def shown(pairs):
                    return "; ".join(f"{a:.1f} vs {c:.1f} ns ({a / c:.2f}x)" if k == "median" else
                                     f"{fmt_instr(a)} vs {fmt_instr(c)} instr ({a / c:.2f}x)"
                                     for k, (a, c) in pairs if c > 0) or "n/a"
                excepted = [(k, (r[k] - pyo3_floor[k] + c_floor[k], b[k])) for k in keys]
                net = [(k, (r[k] - pyo3_floor[k], b[k] - c_floor[k])) for k in keys]
                text += f"; pyo3's call floor excepted {shown(excepted)}; net of each side's floor {shown(net)}"
                ok = bool(excepted) and all(c > 0 and a <= 1.2 * c for _, (a, c) in excepted)
            else:
                text += "; no call-floor rows, judged gross"
            verdict(f"Rust pyo3 argument <= 1.2x the component's own call, pyo3's call floor excepted "
                    f"({s.split(': ', 1)[-1]})", text, ok)
    trip = [(n, r) for (s, n), r in rows.items() if s == "Rust" and r["baseline"] and n.startswith("round trip")]
    for n, r in trip:
        raw = get("Rust", r["baseline"])
        verdict("Rust round trip <= 1.5x the raw calls, at most 3 allocations",
                f"{versus(r, raw)}; {float(r['allocs']):g} allocations against {float(raw['allocs']):g}",
                r["median"] <= 1.5 * raw["median"] and float(r["allocs"]) <= 3)

    # ---- Python: bench/python/bench_py.py's own verdicts, on the median of the runs ----------
    py = {(s, n): r["median"] for (s, n), r in rows.items() if s.startswith("Python")}
    if py:
        out.extend(bench_py_module().verdicts(py))
    size = [(s, n, ratio(s, n)) for (s, n), r in rows.items()
            if r["baseline"] and ("2^28" in n)]
    if size:
        lo, hi = min(x for *_, x in size), max(x for *_, x in size)
        verdict("cost independent of tensor size (2^28 vs 4 elements, within +-10%)",
                f"{len(size)} operations, ratios {lo:.2f}x to {hi:.2f}x", 0.9 <= lo and hi <= 1.1)
    c = [(n, r) for (s, n), r in rows.items() if s == "compile time" and r["baseline"]]
    for n, r in c:
        base = rows[("compile time", r["baseline"])]
        if "module TU" in n:
            speedup = base["median"] / r["median"]
            verdict("a TU importing the module compiles >= 2x faster than the header TU", f"{speedup:.2f}x faster",
                    speedup >= 2)
        else:  # CCCL's TU: reported beside ours, no target
            out.append(("compile time of the same work through CCCL's headers (no target)",
                        f"{r['median']:.0f} ms vs our header TU's {base['median']:.0f} ms", "reported"))
    lines = ["| target | measured | verdict | why, when missed |", "|---|---|---|---|"]
    lines += [f"| {t} | {m} | {v} | {miss_reason(t, v)} |" for t, m, v in out]
    lines.append("")
    lines.append("Verdicts are decided on the median time; the instruction counts are shown beside it where "
                 "bench/callgrind.py measured them.")
    return "\n".join(lines)


RISE_LIMIT = 1.02  # an instruction count more than 2 % over the committed table fails --check


def committed_instructions(md_path):
    """{(section, name): instr/op} from the first table under "## Results" in md_path."""
    with open(md_path) as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Results"), None)
    if start is None:
        raise SystemExit(f"bench/report.py --check: {md_path} has no '## Results' section")
    header = next((i for i in range(start, len(lines))
                   if lines[i].startswith("|") and "instr/op" in lines[i]), None)
    if header is None:
        raise SystemExit(f"bench/report.py --check: no table with an instr/op column under {md_path}'s Results")
    columns = [c.strip() for c in lines[header].strip().strip("|").split("|")]
    at = columns.index("instr/op")
    counts, section = {}, None
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "" and cells[1].startswith("**"):
            section = cells[1].strip("*")
            continue
        name = cells[1].strip("`")
        if len(cells) > at and cells[at]:
            counts[(section, name)] = float(cells[at])
    return counts


def check_instructions(md_path, paths):
    """Exit status 1 when a measured row counts more than RISE_LIMIT x its committed figure."""
    committed = committed_instructions(md_path)
    measured = {}
    for p in paths:
        with open(p) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                if r["unit"] == "instr":
                    measured.setdefault((r["section"], r["name"]), []).append(float(r["value"]))
    risen, fallen, rose, change, new = [], 0, 0, 0.0, []
    for key, values in measured.items():
        now = statistics.median(values)
        before = committed.get(key)
        if before is None:
            new.append(key)
            continue
        change += now - before
        fallen += now < before
        rose += now > before
        if now > RISE_LIMIT * before:
            risen.append((key, before, now))
    compared = len(measured) - len(new)
    print(f"instruction check against {md_path}: {compared} rows compared: {fallen} fell, {rose} rose, "
          f"{change:+.0f} instructions over all of them; {len(new)} rows not in the committed table")
    for section, name in new:
        print(f"  new: {section}: {name}")
    if risen:
        print(f"\nFAILED: {len(risen)} rows count more than {(RISE_LIMIT - 1) * 100:.0f} % over the committed table "
              "(name the row and the reason in docs/performance.md, or bring it back down):", file=sys.stderr)
        for (section, name), before, now in risen:
            print(f"  {section}: {name}: {fmt_instr(before)} -> {fmt_instr(now)} instr ({now / before:.3f}x)",
                  file=sys.stderr)
        return 1
    print(f"no row rose more than {(RISE_LIMIT - 1) * 100:.0f} %")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--md")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--check", metavar="COMMITTED_MD",
                    help="compare the instr rows of FILES with this committed table instead of printing a table")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.check:
        return check_instructions(args.check, args.files)
    rows, order = load(args.files)
    text = table(rows, order)
    head = header(rows)
    if head:
        text = head + "\n\n" + text
    if args.smoke:
        text += "\n\n(smoke run: every operation ran once; the timings mean nothing)"
    else:
        text += "\n\n" + targets(rows)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
