# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The interop matrix of docs/python-interop.md, from the rows the test runs wrote.

    python3 matrix.py ROWS_DIR DOC --check   # fails when the table in DOC differs (a run of
                                             # some interpreters checks only their rows)
    python3 matrix.py ROWS_DIR DOC --write   # rewrites the table in DOC

ROWS_DIR holds *.jsonl files (conftest.py writes one row per test marked matrix). The
table sits between the markers <!-- interop-matrix:begin --> and <!-- interop-matrix:end -->.
"""
import collections
import glob
import json
import os
import sys

BEGIN, END = "<!-- interop-matrix:begin -->", "<!-- interop-matrix:end -->"


def table(rows_dir):
    groups = collections.OrderedDict()
    for path in sorted(glob.glob(os.path.join(rows_dir, "*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                key = (r["framework"], r["version"], r["flavour"], r["direction"], r["path"])
                groups.setdefault(key, []).append(r)
    if not groups:
        sys.exit(f"matrix.py: no rows in {rows_dir}")
    lines = ["| framework | version | interpreter | direction | path | cases | result |", "|---|---|---|---|---|---|---|"]
    order = lambda k: (k[0].lower(), k[1], k[2], k[3], k[4])  # noqa: E731
    for key in sorted(groups, key=order):
        rows = groups[key]
        passed = sum(r["outcome"] == "passed" for r in rows)
        failed = sum(r["outcome"] == "failed" for r in rows)
        skipped = sum(r["outcome"] == "skipped" for r in rows)
        cases = ", ".join(sorted({r["case"] for r in rows if r["outcome"] == "passed"})) or "-"
        result = f"{passed}/{len(rows)} pass" + (f", {skipped} skipped" if skipped else "") + (
            f", **{failed} fail**" if failed else "")
        framework, version, flavour, direction, path = key
        lines.append(f"| {framework} | {version} | {flavour} | {direction} | {path} | {cases} | {result} |")
    return "\n".join(lines) + "\n"


def main():
    rows_dir, doc, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    text = open(doc, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        sys.exit(f"matrix.py: {doc} has no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    new = "\n" + table(rows_dir)
    if mode == "--write":
        with open(doc, "w", encoding="utf-8") as f:
            f.write(head + BEGIN + new + END + tail)
        return 0
    failed = "**" in new
    # A partial run (ctest -R one flavour) checks the rows of the interpreters it ran; a full
    # run checks them all, since every flavour then has rows.
    ran = {line.split("|")[3].strip() for line in new.splitlines()[3:] if line.startswith("|")}
    if ran != {"legacy", "modern", "frameworks"}:
        def rows_of(text):
            return [line for line in text.strip().splitlines()[2:] if line.split("|")[3].strip() in ran]
        old_rows, new_rows = rows_of(old), rows_of(new)
        if old_rows == new_rows:
            print(f"matrix.py: partial run ({', '.join(sorted(ran))}): its rows match the documented ones")
            return 1 if failed else 0
        old, new = "\n".join(old_rows), "\n".join(new_rows)
    if old != new:
        print(f"matrix.py: the interop matrix in {doc} is not the one this run produced.\n"
              f"Run `python3 tests/python/matrix.py {rows_dir} {doc} --write`, or see why it changed:\n"
              f"--- documented\n{old}\n--- this run\n{new}")
        return 1
    if failed:
        print("matrix.py: some interop cases failed (see the table)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
