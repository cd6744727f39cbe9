# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Instructions per operation for every C++ benchmark row, counted by callgrind.

    python3 bench/callgrind.py [--exe PATH] [--n N] [--tsv FILE] [CATCH2 ARGS...]

Runs dlpm_bench_cpp --instructions N under `valgrind --tool=callgrind
--collect-atstart=no`. The harness (bench/cpp/harness.cpp) runs each operation once as
a warm-up, then N times and 2N times with collection switched on around the batch only
(callgrind client requests), dumping each pass as "dlpm-op <index> <calls>". Here the two
dumps' instruction totals are subtracted and divided by N: what remains is the cost of
one call of the operation, including the laundering and escaping of its inputs and
result and the 2 to 3 instructions of the batch loop (the same for a row and its
baseline), with the fixed costs (the batch call through std::function, the toggles)
cancelled. Instruction counts are deterministic, so one run is enough and they do not
depend on the machine's load; they are no substitute for the time (a division or a
cache miss is one instruction), but they make a change visible that the noise of a
2-core machine hides.

The output TSV has the columns of the other suites (section, name, value, unit, baseline,
allocs, note) with unit "instr"; bench/report.py puts it in the table's instructions
column. CATCH2 ARGS select test cases, e.g. "[import]".
"""

import argparse
import csv
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

TAG = re.compile(r"^desc: Trigger: Client Request: dlpm-op (\d+) (\d+)\s*$")
TOTAL = re.compile(r"^(?:summary|totals): (\d+)")


def read_dumps(directory):
    """{(index, calls): instructions} from the callgrind dump files."""
    counts = {}
    for path in glob.glob(os.path.join(directory, "cg.out.*")):
        key, total = None, None
        with open(path, errors="replace") as f:
            for line in f:
                m = TAG.match(line)
                if m:
                    key = (int(m.group(1)), int(m.group(2)))
                    continue
                m = TOTAL.match(line)
                if m and total is None:
                    total = int(m.group(1))
        if key is not None and total is not None:
            counts[key] = total
    return counts


def run_harness(exe, n, work, catch_args, valgrind_args=()):
    """Runs `exe --instructions n` under callgrind, its dumps in `work`: the harness's rows as
    [(row, index)], each row a dict of its TSV columns, or None (the failure written to stderr)."""
    os.makedirs(work, exist_ok=True)
    index_tsv = os.path.join(work, "index.tsv")
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", *valgrind_args,
           f"--callgrind-out-file={os.path.join(work, 'cg.out')}",
           exe, "--instructions", str(n), "--tsv", index_tsv, *catch_args]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stdout)
        print(f"bench/callgrind.py: {' '.join(cmd)} failed ({run.returncode})", file=sys.stderr)
        return None
    with open(index_tsv) as f:
        return [(r, int(float(r["value"]))) for r in csv.DictReader(f, delimiter="\t")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exe", default="build/bench/bench/dlpm_bench_cpp")
    ap.add_argument("--n", type=int, default=1000, help="calls per pass (the second pass makes 2N)")
    ap.add_argument("--tsv", help="write the rows here")
    ap.add_argument("--keep", help="keep the callgrind dumps in this directory")
    ap.add_argument("catch_args", nargs="*")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("bench/callgrind.py: valgrind is not installed", file=sys.stderr)
        return 2
    work = args.keep or tempfile.mkdtemp(prefix="dlpm-callgrind-")
    index = run_harness(args.exe, args.n, work, args.catch_args)
    if index is None:
        return 1
    counts = read_dumps(work)
    rows, missing = [], []
    for r, i in index:
        a, b = counts.get((i, args.n)), counts.get((i, 2 * args.n))
        if a is None or b is None:
            missing.append(r["name"])
            continue
        rows.append(dict(r, value=f"{(b - a) / args.n:.2f}", unit="instr", allocs=""))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if missing:
        print(f"bench/callgrind.py: no callgrind dump for {len(missing)} rows (first: {missing[0]!r}); "
              "is the executable built with <valgrind/callgrind.h>?", file=sys.stderr)
        return 1
    cols = ["section", "name", "value", "unit", "baseline", "allocs", "note"]
    if args.tsv:
        with open(args.tsv, "w", newline="") as f:
            w = csv.DictWriter(f, cols, delimiter="\t", extrasaction="ignore", lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    section = None
    for r in rows:
        if r["section"] != section:
            section = r["section"]
            print(f"\n{section}")
        print(f"  {r['name']:<70} {float(r['value']):9.1f} instr")
    return 0


if __name__ == "__main__":
    sys.exit(main())
