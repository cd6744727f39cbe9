# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Instructions per call of each strided import row, by the check of the core headers they run.

    python3 bench/import_profile.py [--exe PATH] [--n N] [--tags TAGS] [--rows REGEX] [--keep DIR] [--markdown FILE]
                                    [--detail REGEX]
    python3 bench/import_profile.py --self-test

Runs dlpm_bench_cpp "[strided]" (--tags: other test cases, "[import]" for the compact rows
too) the way bench/callgrind.py does (its run_harness: N and 2N calls of each operation,
collected alone), with callgrind's per-instruction dump
(--dump-instr=yes), and subtracts the two dumps instruction by instruction: what remains,
over N, is one call's cost at each address, the same per-call total callgrind.py prints.
Each address is then symbolized with its chain of inlined frames (llvm-symbolizer), and
the instruction goes to the group of the innermost frame that stands on a marked line of
a core header (modules/dlpack_mdspan/include/dlpack_mdspan/*.hpp):

    // profile: GROUP
    // profile: GROUP; arithmetic: OTHER

A marker is a comment line of its own inside a function's (or a class's) body. It names the lines after it
up to the end of the block it stands in (a nested block inherits it) or to the next marker
of that block; `arithmetic` gives the instructions of checked_arithmetic.hpp's helpers
called from those lines to OTHER (count_elements' loop line tests an extent's sign, which
CCCL also tests, and its product's overflow, which it does not). The helpers have no
marker, so their instructions go to the line that called them. A conditional jump, set or
move goes where the instruction that set its flags goes (objdump): clang often gives the
branch on an inlined check's answer the calling line. An instruction of a core header on
line 0 (code the compiler merged: a flag's accumulation, a move at a join) is "line 0",
which no neighbour decides reliably; on no marked line, "unmarked: <function>";
one with no core frame at all is the bench's (the batch loop, launder, escape) or CCCL's.
--detail REGEX lists the rows' instructions one by one, with their group and line.

GROUPS below says, per group, whether CCCL 3.5's cuda::to_host_mdspan makes the same check
(read in its cuda/__mdspan/dlpack_to_mdspan.h) and why a user needs it where it does not;
one group, the strides' comparison with the C-contiguous ones, by the row's target layout
(kind_of: into a strided layout it proves the span, which CCCL does not check; into a
compact one it is the strides' test CCCL also makes).
The bench must be built with debug information, e.g. the bench preset with
-DCMAKE_CXX_FLAGS="-stdlib=libc++ -gdwarf-4" into its own build folder: the code, and so
the count, is the same (docs/performance-history.md says where that was checked).
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind  # noqa: E402  (run_harness, read_dumps, TAG)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE = "modules/dlpack_mdspan/include/dlpack_mdspan/"
ARITHMETIC = "checked_arithmetic.hpp"
FLAG_READER = re.compile(r"^(j(?!mp)[a-z]+|set[a-z]+|cmov[a-z]+)$")  # conditional jumps, sets, moves
FLAG_KEEPER = re.compile(r"^(mov[a-z]*|lea|push|pop|nop[a-z]*|xchg|bswap|not|cmov[a-z]+|set[a-z]+)$")
MARKER = re.compile(r"^\s*//\s*profile:\s*([\w-]+)\s*(?:;\s*arithmetic:\s*([\w-]+)\s*)?$")

ALSO, NOT, NONE = "checks CCCL also makes", "checks CCCL does not make", "not a check"
BY_LAYOUT = "by the target's layout: checks CCCL does not make (strided), also makes (compact)"
STRIDED_ROW = re.compile(r"\blayout_stride(_relaxed)?\b")  # a row's label names its target layout
# group: (kind, what it is, where CCCL does not make it: why a user needs it)
GROUPS = {
    "rank": (ALSO, "ndim equals the view's rank", ""),
    "device-type": (ALSO, "the device type is one the accessor reads", ""),
    "dtype": (ALSO, "code, bits, lanes equal the element type's", ""),
    "shape-null": (ALSO, "shape not NULL", ""),
    "extent-sign": (ALSO, "every extent at least 0 (the span pass of a strided tensor: at least 1, or empty)", ""),
    "stride-sign": (ALSO, "std::layout_stride: every stride positive", ""),
    "data-null": (ALSO, "data not NULL for a tensor with elements", ""),
    "byte-offset": (ALSO, "byte_offset at most INT64_MAX and a multiple of the element size (CCCL: the multiple, "
                    "into layout_stride_relaxed; into std::layout_stride its alignment test of data + byte_offset)", ""),
    "data-alignment": (ALSO, "data + byte_offset aligned for the element", ""),
    "device-id": (NOT, "device_id not negative",
                  "a negative ordinal names no device; the view's accessor and a copy would use it"),
    "metadata-alignment": (NOT, "shape and strides aligned for int64_t",
                           "reading an int64_t through a misaligned pointer is undefined behaviour"),
    "count-overflow": (NOT, "the element count within INT64_MAX",
                       "numel past INT64_MAX wraps every size a user computes from the view (size(), a copy's bytes)"),
    "span-pass": (NOT, "each dimension's reach (extent - 1) * stride and the index span, checked against int64 "
                  "overflow; the INT64_MIN stride",
                  "an index span past int64 makes the mapping's offsets overflow (undefined behaviour in "
                  "mapping(i...)), and the byte span below is computed from it; CCCL's layout_stride mapping "
                  "states it as a _CCCL_ASSERT, compiled out unless CCCL_ENABLE_ASSERTIONS or DEBUG"),
    "uniqueness": (NOT, "std::layout_stride: no two indices share an element (the two orders of the span pass, "
                   "layout_stride_unique for a permutation)",
                   "the mapping's precondition (is_unique() is true for layout_stride); CCCL's mapping states "
                   "it as a _CCCL_ASSERT, compiled out in a release build, and builds the overlapping view"),
    "extent-1-rule": (NOT, "std::layout_stride: an extent-1 dimension's stride replaced by 1",
                      "PyTorch and DrJit put 0 or anything there: the view is accepted and the mapping's "
                      "preconditions (positive strides) still hold; CCCL refuses such a stride of 0"),
    "byte-span": (NOT, "the byte span (offset + lowest .. highest + 1) * size within int64",
                  "every byte the view reaches must have an address: a span past int64 wraps pointer arithmetic"),
    "address-space": (NOT, "data + byte_offset and the span's ends do not wrap the address space, nor reach address 0",
                      "pointer arithmetic that wraps is undefined behaviour; the view would read other memory"),
    "rebase": (NOT, "layout_stride_relaxed: a view reaching below data is rebased on its lowest element, checked",
               "our mapping's precondition, its smallest reachable index at least 0 (layout_stride_relaxed.hpp); "
               "CCCL's import passes data and byte_offset / size on as they are, without a test of where the "
               "lowest element lies"),
    "index-range": (NOT, "extents, strides, the element count and the span within the view's index_type",
                    "a value past the index_type wraps the mapping (none for int64_t: folded away)"),
    "row-major-comparison": (BY_LAYOUT, "count_elements' comparison of each stride with the C-contiguous one, from "
                             "the innermost dimension until one differs",
                             "into layout_stride and layout_stride_relaxed, the span's proof for the dimensions it "
                             "passes: their reach is their count less one, and the span pass starts where the "
                             "comparison stops (tensor_checks.hpp, counted_in_span), so that a compact tensor needs "
                             "no span pass; CCCL compares no stride into these layouts and checks no span. Into "
                             "layout_right and layout_left, the strides' test CCCL also makes "
                             "(__validate_dlpack_strides)"),
    "dispatch": (NONE, "the fast paths' tests and the summary's stores (numel 0, row_major, the usual byte span, "
                 "the first loop's exit)", ""),
    "view": (NONE, "the view: handle, extents, strides, the mapping's construction", ""),
    "entry": (NONE, "to_mdspan's own test of the rules' answer", ""),
    "bench": (NONE, "the bench's batch loop, launder and escape (in every row: the CCCL one too)", ""),
    "line 0": (NONE, "instructions the compiler gave no source line (merged code: a flag's accumulation, "
               "a move at a join, a spill)", ""),
}


# ---- the headers' markers ----------------------------------------------------------------

def strip_code(line, in_comment):
    """The line with comments, string and character literals removed (only braces matter),
    and whether a /* comment runs on past it."""
    out, i = [], 0
    while i < len(line):
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out), True
            in_comment, i = False, j + 2
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
        elif line[i] in "\"'":
            q, i = line[i], i + 1
            while i < len(line) and line[i] != q:
                i += 2 if line[i] == "\\" else 1
            i += 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_comment


def line_groups(text):
    """{line number (1-based): (group, arithmetic group or None)} for the lines a marker names."""
    stack = [[None, None]]  # [marker, the line that opened it] of each open block, innermost last
    groups, in_comment, continued = {}, False, False
    for number, line in enumerate(text.splitlines(), 1):
        m = MARKER.match(line)
        if m and not in_comment:
            block = stack[-1]
            # A block's first marker also names the line that opened it when no outer marker
            # does: a function's signature line, where its prologue's instructions are.
            if block[0] is None and block[1] is not None and block[1] not in groups:
                groups[block[1]] = (m.group(1), m.group(2))
            block[0] = (m.group(1), m.group(2))
            continue
        if continued or line.lstrip().startswith("#"):  # preprocessor lines: their braces balance
            continued = line.rstrip().endswith("\\")
            continue
        marker = next((b[0] for b in reversed(stack) if b[0] is not None), None)
        if marker is not None:
            groups[number] = marker
        code, in_comment = strip_code(line, in_comment)
        for ch in code:
            if ch == "{":
                stack.append([None, number])
            elif ch == "}" and len(stack) > 1:
                stack.pop()
    return groups


def header_groups(include_dir):
    """{header file name: line_groups} for the core headers."""
    return {name: line_groups(open(os.path.join(include_dir, name)).read())
            for name in sorted(os.listdir(include_dir)) if name.endswith(".hpp")}


def core_name(path):
    i = path.find(CORE)
    return path[i + len(CORE):] if i >= 0 else None


def group_of(frames, headers):
    """The group of one instruction from its inlined frames [(function, file, line)], innermost first."""
    via_arithmetic, unmarked = False, None
    for function, path, line in frames:
        name = core_name(path)
        if name is None:
            continue
        if name == ARITHMETIC:
            via_arithmetic = True
            continue
        if line == 0:
            return "line 0"
        marked = headers.get(name, {}).get(line)
        if marked is not None:
            return marked[1] if via_arithmetic and marked[1] else marked[0]
        if unmarked is None:
            unmarked = f"unmarked: {short_name(function)}"
    if unmarked is not None:
        return unmarked
    if any("cuda/" in path or "/cccl/" in path for _, path, _ in frames):
        return "CCCL"
    return "bench"


# ---- callgrind's per-instruction dumps -----------------------------------------------------

def read_instr_dumps(directory):
    """{(index, calls): {(object, address): instructions}} from the dumps of --dump-instr=yes
    --compress-pos=no --compress-strings=no, and {object: {function: lowest address}}."""
    dumps, lowest = {}, collections.defaultdict(dict)
    for name in os.listdir(directory):
        if not name.startswith("cg.out."):
            continue
        key, costs, ob, fn, skip = None, collections.Counter(), None, None, False
        with open(os.path.join(directory, name), errors="replace") as f:
            for line in f:
                m = callgrind.TAG.match(line)
                if m:
                    key = (int(m.group(1)), int(m.group(2)))
                elif line.startswith("ob="):
                    ob = line[3:].strip()
                elif line.startswith("fn="):
                    fn = line[3:].strip()
                elif line.startswith("calls="):
                    skip = True  # the next cost line is the call's inclusive cost
                elif line.startswith("0x"):
                    if skip:
                        skip = False
                        continue
                    address, cost = line.split()[:2]
                    address = int(address, 16)
                    costs[(ob, address)] += int(cost)
                    seen = lowest[ob].get(fn)
                    if seen is None or address < seen:
                        lowest[ob][fn] = address
        if key is not None:
            dumps[key] = costs
    return dumps, lowest


def load_bias(exe, lowest):
    """Where valgrind loaded the executable: the most common difference between a function's
    lowest executed address and its symbol's address (entries are executed)."""
    symbols = {}
    for line in subprocess.run(["nm", "--defined-only", exe], stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            symbols[parts[2]] = int(parts[0], 16)
    diffs = collections.Counter(a - symbols[fn] for fn, a in lowest.items() if fn in symbols)
    if not diffs:
        raise SystemExit("bench/import_profile.py: no function of the dumps is in the executable's symbols")
    return diffs.most_common(1)[0][0]


def disassemble(exe, addresses):
    """{address: (mnemonic, flag setter)} for the instructions at `addresses` (one objdump over
    their range). The flag setter of a conditional jump, set or move is the nearest instruction
    before it that writes the flags (moves, lea, push and pop do not), else None."""
    if not addresses:
        return {}
    run = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={min(addresses):#x}",
                          f"--stop-address={max(addresses) + 16:#x}", exe], stdout=subprocess.PIPE, text=True, check=True)
    wanted, out, setter = set(addresses), {}, None
    for line in run.stdout.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)", line)
        if not m:
            setter = None  # a new function, or a gap
            continue
        address, mnemonic = int(m.group(1), 16), m.group(2)
        if address in wanted:
            out[address] = (mnemonic, setter if FLAG_READER.match(mnemonic) else None)
        if FLAG_READER.match(mnemonic) or mnemonic in ("jmp", "ret", "call"):
            if mnemonic in ("jmp", "ret", "call"):
                setter = None
        elif not FLAG_KEEPER.match(mnemonic):
            setter = address
    return out


def symbolize(exe, addresses):
    """{address: [(function, file, line)]}, innermost frame first (llvm-symbolizer --inlining)."""
    if not addresses:
        return {}
    tool = shutil.which("llvm-symbolizer") or shutil.which("llvm-symbolizer-19")
    if tool is None:
        raise SystemExit("bench/import_profile.py: llvm-symbolizer is not installed")
    run = subprocess.run([tool, "--obj", exe, "--inlining", "--output-style=JSON", "--demangle"],
                         input="\n".join(hex(a) for a in addresses), stdout=subprocess.PIPE, text=True, check=True)
    out = {}
    for line in run.stdout.splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        out[int(entry["Address"], 16)] = [(s.get("FunctionName", ""), s.get("FileName", ""), s.get("Line", 0))
                                          for s in entry.get("Symbol", [])]
    return out


# ---- the table -------------------------------------------------------------------------------

def kind_of(group, label):
    """The kind of a group's instructions in the row `label`: a BY_LAYOUT group's by the row's
    target layout (layout_stride, layout_stride_relaxed: strided; the others compact)."""
    kind = GROUPS.get(group, (None,))[0]
    if kind == BY_LAYOUT:
        return NOT if STRIDED_ROW.search(label) else ALSO
    return kind


def breakdown(per_group, kind, label):
    parts = sorted(((v, g) for g, v in per_group.items() if kind_of(g, label) == kind and round(v) != 0),
                   key=lambda p: -p[0])
    return sum(v for v, _ in parts), ", ".join(f"{g} {v:.0f}" for v, g in parts)


def short_name(function):
    """A function's qualified name without its template arguments and parameters."""
    if function.startswith("_ZN"):  # a mangled nested name (older demanglers miss C++20's): its parts
        parts, i = [], 3
        while i < len(function) and function[i].isdigit():
            j = i
            while function[j].isdigit():
                j += 1
            parts.append(function[j:j + int(function[i:j])])
            i = j + int(function[i:j])
        return "::".join(parts) or function
    depth, out = 0, []
    for ch in function.split("(")[0]:
        depth += ch == "<"
        if depth == 0:
            out.append(ch)
        depth -= ch == ">"
    return "".join(out).split()[-1] if out else function


def markdown(rows):
    lines = ["| row | ours | CCCL | ours less the checks CCCL does not make | checks CCCL also makes | "
             "checks CCCL does not make | not a check |",
             "|---|---:|---:|---:|---|---|---|"]
    for label, ours, cccl, per_group in rows:
        cells = []
        for kind in (ALSO, NOT, NONE):
            total, parts = breakdown(per_group, kind, label)
            cells.append(f"**{total:.0f}**: {parts}" if parts else "0")
        cells.insert(0, f"{ours - breakdown(per_group, NOT, label)[0]:.0f}")
        other = {g: v for g, v in per_group.items() if g not in GROUPS and round(v) != 0}
        if other:
            cells[3] += "; " + ", ".join(f"{g} {v:.0f}" for g, v in sorted(other.items()))
        cccl_cell = f"{cccl:.0f}" if cccl is not None else "—"
        lines.append(f"| {label} | {ours:.0f} | {cccl_cell} | " + " | ".join(cells) + " |")
    lines += ["", "| group | kind | what | why a user needs it (where CCCL does not check it) |", "|---|---|---|---|"]
    for g, (kind, what, why) in GROUPS.items():
        lines.append(f"| {g} | {kind} | {what} | {why} |")
    return "\n".join(lines)


def profile(args):
    headers = header_groups(os.path.join(ROOT, CORE))
    unknown = sorted({g for h in headers.values() for pair in h.values() for g in pair if g and g not in GROUPS})
    if unknown:
        raise SystemExit(f"bench/import_profile.py: markers name groups GROUPS lacks: {unknown}")
    work = args.keep or tempfile.mkdtemp(prefix="dlpm-import-profile-")
    index = callgrind.run_harness(args.exe, args.n, work, [args.tags],
                                  ["--dump-instr=yes", "--dump-line=no", "--compress-pos=no", "--compress-strings=no",
                                   "--demangle=no"])
    if index is None:
        return 1
    dumps, lowest = read_instr_dumps(work)
    totals = callgrind.read_dumps(work)
    exe = os.path.realpath(args.exe)
    bias = load_bias(exe, lowest.get(exe, {}))
    wanted = re.compile(args.rows)
    deltas, cccl_totals = {}, {}
    for r, i in index:
        label, _, form = r["name"].rpartition(": ")
        a, b = totals.get((i, args.n)), totals.get((i, 2 * args.n))
        if a is None or b is None:
            continue
        if form == "cuda::to_host_mdspan (CCCL)":
            cccl_totals[label] = (b - a) / args.n
        elif wanted.search(r["name"]):
            delta = collections.Counter(dumps[(i, 2 * args.n)])
            delta.subtract(dumps[(i, args.n)])
            deltas[label] = ({k: v / args.n for k, v in delta.items() if v}, (b - a) / args.n)
    addresses = sorted({addr - bias for d, _ in deltas.values() for (ob, addr) in d if ob == exe})
    # A conditional jump (set, move) belongs to the test that set its flags: clang often gives
    # the branch on an inlined check's answer the calling line (its `if (!check(...))`).
    code = disassemble(exe, addresses)
    setters = {s for _, s in code.values() if s is not None}
    frames = symbolize(exe, sorted(set(addresses) | setters))

    def group_at(address):
        setter = code.get(address, ("", None))[1]
        return group_of(frames.get(setter if setter is not None else address, []), headers)

    rows, details = [], collections.defaultdict(list)
    for label, (delta, total) in deltas.items():
        per_group = collections.Counter()
        for (ob, addr), v in delta.items():
            group = group_at(addr - bias) if ob == exe else f"outside: {os.path.basename(ob)}"
            per_group[group] += v
            if args.detail and re.search(args.detail, label):
                f = frames.get(addr - bias, [])
                core = next((f"{core_name(path)}:{line}" for _, path, line in f if core_name(path)), "")
                details[label].append((addr - bias, code.get(addr - bias, ("",))[0], v, group, core))
        if abs(sum(per_group.values()) - total) > 0.01:
            raise SystemExit(f"bench/import_profile.py: {label}: the instructions sum to {sum(per_group.values())}, "
                             f"the dumps' totals to {total}")
        rows.append((label, total, cccl_totals.get(label), per_group))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    for label, instructions in details.items():  # --detail: one line per instruction, in address order
        print(f"{label}:", file=sys.stderr)
        for addr, mnem, v, group, core in sorted(instructions):
            print(f"  {addr:#x} {mnem:<8} {v:5.2f}  {group:<22} {core}", file=sys.stderr)
    text = markdown(rows)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


# ---- the self-test ---------------------------------------------------------------------------

SNIPPET = """\
inline bool f(const int* p, int n) {
  // profile: shape-null
  if (p == nullptr) return false;  // a } in a comment
  const char* s = "{";
  for (int r = 0; r < n; ++r) {
    // profile: extent-sign; arithmetic: count-overflow
    if (p[r] < 0) return false;
  }
  // profile: dispatch
  return s != nullptr;
}
int g() { return 0; }
"""


def self_test():
    got = line_groups(SNIPPET)
    want = {1: ("shape-null", None), 3: ("shape-null", None), 4: ("shape-null", None), 5: ("shape-null", None),
            7: ("extent-sign", "count-overflow"), 8: ("extent-sign", "count-overflow"),
            10: ("dispatch", None), 11: ("dispatch", None)}
    assert got == want, f"line_groups: {got}"
    headers = {"x.hpp": got}
    core = lambda n: f"/any/checkout/{CORE}{n}"  # noqa: E731
    assert group_of([("mul_overflows", core(ARITHMETIC), 9), ("f", core("x.hpp"), 7)], headers) == "count-overflow"
    assert group_of([("f", core("x.hpp"), 7)], headers) == "extent-sign"
    assert group_of([("f", core("x.hpp"), 0)], headers) == "line 0"
    assert group_of([("h", core("y.hpp"), 1), ("f", core("x.hpp"), 3)], headers) == "shape-null"
    assert group_of([("h", core("y.hpp"), 1), ("main", "/b/bench/cpp/x.cpp", 1)], headers) == "unmarked: h"
    assert group_of([("escape", "/b/bench/cpp/harness.hpp", 1)], headers) == "bench"
    # The comparison's kind follows the row's target layout.
    assert kind_of("row-major-comparison", "rank 4, layout_stride_relaxed, slice") == NOT
    assert kind_of("row-major-comparison", "rank 8, layout_stride, permutation") == NOT
    assert kind_of("row-major-comparison", "rank 2, layout_right") == ALSO
    assert kind_of("row-major-comparison", "rank 2, layout_left") == ALSO
    assert kind_of("span-pass", "rank 2, layout_right") == NOT and kind_of("view", "rank 2, layout_stride") == NONE
    # Every marker of the real headers names a group of GROUPS.
    for name, marks in header_groups(os.path.join(ROOT, CORE)).items():
        for line, pair in marks.items():
            for g in pair:
                assert g is None or g in GROUPS, f"{CORE}{name}:{line}: group {g!r} is not in GROUPS"
    print("bench/import_profile.py: self-test passed")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exe", default="build/bench-g/bench/dlpm_bench_cpp", help="a bench build with debug information")
    ap.add_argument("--n", type=int, default=1000, help="calls per pass (the second pass makes 2N)")
    ap.add_argument("--tags", default="[strided]",
                    help="the bench's test cases to run, as Catch2 tags (\"[import]\": the compact import rows too)")
    ap.add_argument("--rows", default=r": to_mdspan<M>\(t\)$", help="the rows of ours to profile (a regex of the name)")
    ap.add_argument("--keep", help="keep the callgrind dumps in this directory")
    ap.add_argument("--markdown", help="also write the table here")
    ap.add_argument("--detail", help="also list each instruction of the rows matching this regex (stderr)")
    ap.add_argument("--self-test", action="store_true", help="test the marker parser and the headers' groups")
    args = ap.parse_args()
    return self_test() if args.self_test else profile(args)


if __name__ == "__main__":
    sys.exit(main())
