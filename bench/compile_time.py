# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Compile time of `import dlpack_mdspan;` against `#include <dlpack_mdspan/dlpack_mdspan.hpp>`.

Re-runs, from the bench build's compile_commands.json, the exact commands CMake uses for
bench/compile/import_tu.cpp (module form, with the BMI through its @modmap),
bench/compile/header_tu.cpp (header form, same code, same flags) and, where the CCCL
candidates are built, bench/compile/cccl_tu.cpp (the same work through CCCL's DLPack
headers), interleaved, and reports
the median wall time of each. Outputs go to a temporary directory, so the build is not
touched. The one-time cost of building the BMI is reported too.

    python3 bench/compile_time.py --build build/bench [--runs 5] [--smoke] [--tsv FILE]
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

SECTION = "compile time"
PROBES = {
    "import_tu.cpp": "import dlpack_mdspan; + export + import (module TU)",
    "header_tu.cpp": "#include <dlpack_mdspan/dlpack_mdspan.hpp> + export + import (header TU)",
    "dlpack_mdspan.cppm": "building the BMI once (dlpack_mdspan.cppm)",
    "cccl_tu.cpp": "CCCL's <cuda/__mdspan/{mdspan_to_dlpack,dlpack_to_mdspan}.h> + export + import (CCCL TU)",
}


def command_for(entry, tmp):
    """The entry's arguments with @files expanded and every output redirected into tmp."""
    args = []
    for a in shlex.split(entry["command"]):
        if a.startswith("@"):
            with open(os.path.join(entry["directory"], a[1:])) as f:
                args += shlex.split(f.read())
        else:
            args.append(a)
    out = []
    skip = False
    for a in args:
        if skip:
            out.append(os.path.join(tmp, "probe.o"))
            skip = False
        elif a == "-o":
            out.append(a)
            skip = True
        elif a.startswith("-fmodule-output="):
            out.append("-fmodule-output=" + os.path.join(tmp, "probe.pcm"))
        else:
            out.append(a)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build/bench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--tsv")
    args = ap.parse_args()
    runs = 1 if args.smoke else args.runs

    with open(os.path.join(args.build, "compile_commands.json")) as f:
        entries = json.load(f)
    found = {}
    for e in entries:
        base = os.path.basename(e["file"])
        if base in PROBES and (base != "dlpack_mdspan.cppm" or "c_static" not in e.get("output", "")):
            found.setdefault(base, e)
    if "import_tu.cpp" not in found or "header_tu.cpp" not in found:
        print("compile_time: no module probe in this build (module off?); skipped", file=sys.stderr)
        return 0

    times = {k: [] for k in found}
    with tempfile.TemporaryDirectory() as tmp:
        cmds = {k: command_for(e, tmp) for k, e in found.items()}
        for _ in range(runs):
            for k in ("header_tu.cpp", "import_tu.cpp", "cccl_tu.cpp", "dlpack_mdspan.cppm"):
                if k not in cmds:
                    continue
                t0 = time.perf_counter()
                subprocess.run(cmds[k], cwd=found[k]["directory"], check=True)
                times[k].append(time.perf_counter() - t0)
    med = {k: sorted(v)[len(v) // 2] * 1e3 for k, v in times.items()}

    header = PROBES["header_tu.cpp"]
    rows = [(header, med["header_tu.cpp"], ""),
            (PROBES["import_tu.cpp"], med["import_tu.cpp"], header)]
    if "cccl_tu.cpp" in med:  # no target: reported beside ours
        rows.append((PROBES["cccl_tu.cpp"], med["cccl_tu.cpp"], header))
    if "dlpack_mdspan.cppm" in med:
        rows.append((PROBES["dlpack_mdspan.cppm"], med["dlpack_mdspan.cppm"], ""))
    for name, ms, _ in rows:
        print(f"  {name:<75} {ms:8.1f} ms")
    flags = " ".join(a for a in cmds["import_tu.cpp"] if a.startswith(("-O", "-std", "-stdlib")))
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("section\tname\tvalue\tunit\tbaseline\tallocs\tnote\n")
            for name, ms, base in rows:
                f.write(f"{SECTION}\t{name}\t{ms}\tms\t{base}\t\tmedian of {runs}, clang++-19 {flags}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
