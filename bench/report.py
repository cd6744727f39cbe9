"""Merges the benchmark TSVs into one table and checks the performance targets.

    python3 bench/report.py [--md FILE] [--smoke] RESULT.tsv...

Each TSV has the columns section, name, value, unit, baseline, allocs, note (written by
dlpm_bench_cpp, dlpack-mdspan-bench, bench_py.py and compile_time.py). A row that appears
in several files (the C++ suite runs several times, each in a fresh process, so that one
unlucky memory layout or load burst cannot decide a figure) gets the median of its values.
The ratio is against the row's baseline from the same run set.
"""

import argparse
import csv
import statistics
import sys


def load(paths):
    rows, order = {}, []
    for p in paths:
        with open(p) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                key = (r["section"], r["name"])
                if key not in rows:
                    rows[key] = dict(r, values=[])
                    order.append(key)
                rows[key]["values"].append(float(r["value"]))
    for r in rows.values():
        r["median"] = statistics.median(r["values"])
    return rows, order


def fmt_value(v, unit):
    if unit == "ms":
        return f"{v:.0f} ms"
    return f"{v:.1f} ns" if v >= 10 else f"{v:.2f} ns"


def table(rows, order):
    number = {key: i + 1 for i, key in enumerate(order)}
    lines = ["| # | benchmark | median | ratio | vs # | allocs/op |", "|---:|---|---:|---:|---:|---:|"]
    section = None
    for key in order:
        r = rows[key]
        if key[0] != section:
            section = key[0]
            lines.append(f"| | **{section}** | | | | |")
        base = rows.get((key[0], r["baseline"])) if r["baseline"] else None
        ratio = f"{r['median'] / base['median']:.2f}x" if base else ""
        vs = str(number[(key[0], r["baseline"])]) if base else ""
        allocs = r["allocs"] if r["allocs"] != "" else "n/a"
        if allocs not in ("n/a",):
            allocs = f"{float(allocs):g}"
        lines.append(f"| {number[key]} | `{r['name']}` | {fmt_value(r['median'], r['unit'])} | {ratio} | {vs} | {allocs} |")
    return "\n".join(lines)


def targets(rows):
    def get(section, name):
        return rows.get((section, name))

    def ratio(section, name):
        r = get(section, name)
        b = get(section, r["baseline"]) if r and r["baseline"] else None
        return r["median"] / b["median"] if r and b else None

    out = []

    def verdict(target, measured, ok):
        out.append((target, measured, "met" if ok else "MISSED"))

    exp = [ratio("export view", f"rank 4, {k} extents: to_dlpack_tensor(md).get()") for k in ("static", "dynamic")]
    if None not in exp:
        verdict("export view (rank 4) <= 1.2x the raw fill", f"static {exp[0]:.2f}x, dynamic {exp[1]:.2f}x",
                max(exp) <= 1.2)
    imp = [ratio("import view", f"rank 4, {l}: to_mdspan<M>(t)")
           for l in ("layout_right", "layout_stride", "layout_stride_relaxed")]
    if None not in imp:
        verdict("checked import (rank 4) <= 1.5x the raw read",
                "right {:.1f}x, stride {:.1f}x, relaxed {:.1f}x".format(*imp), max(imp) <= 1.5)
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
    a = get("managed tensor", "rank 4 adopt + view + release: managed_tensor::adopt(p).view<M>()")
    if a:
        verdict("adopt + view + release <= 20 ns plus the deleter", f"{a['median']:.1f} ns (no deleter runs)",
                a["median"] <= 20)
    pairs = [("validate: dlpm_validate", "validate"), ("check (f32, ndim 2, C order, CPU): dlpm_check", "check"),
             ("check managed: dlpm_check_managed", "check managed"),
             ("managed new + delete: dlpm_managed_new + dlpm_managed_delete", "managed new + delete")]
    diffs = []
    for name, short in pairs:
        r = get("C facade", name)
        b = get("C facade", r["baseline"]) if r else None
        if r and b:
            diffs.append((short, r["median"] - b["median"]))
    if diffs:
        verdict("C facade overhead <= 5 ns over inline C++", ", ".join(f"{s} {d:+.1f} ns" for s, d in diffs),
                max(d for _, d in diffs) <= 5)
    rust = [(n, ratio(s, n)) for (s, n), r in rows.items() if s == "Rust" and r["baseline"]]
    if rust:
        verdict("Rust safe layer <= 1.1x raw FFI", ", ".join(f"{n.split(':')[0]} {x:.2f}x" for n, x in rust),
                max(x for _, x in rust) <= 1.1)
    size = [(s, n, ratio(s, n)) for (s, n), r in rows.items()
            if r["baseline"] and ("2^28" in n)]
    if size:
        lo, hi = min(x for *_, x in size), max(x for *_, x in size)
        verdict("cost independent of tensor size (2^28 vs 1 element, within +-10%)",
                f"{len(size)} operations, ratios {lo:.2f}x to {hi:.2f}x", 0.9 <= lo and hi <= 1.1)
    c = [r for (s, n), r in rows.items() if s == "compile time" and r["baseline"]]
    if c:
        speedup = rows[("compile time", c[0]["baseline"])]["median"] / c[0]["median"]
        verdict("a TU importing the module compiles >= 2x faster than the header TU", f"{speedup:.2f}x faster",
                speedup >= 2)
    lines = ["| target | measured | verdict |", "|---|---|---|"]
    lines += [f"| {t} | {m} | {v} |" for t, m, v in out]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--md")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    rows, order = load(args.files)
    text = table(rows, order)
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
