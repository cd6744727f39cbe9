#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every function of the C facade's header is declared by dlpack-mdspan-sys, with as many
parameters, and the crate declares no other (its crate documentation promises "every
dlpm_* function"). The types are proved elsewhere: the #[repr(C)] mirrors by abi.test.cpp
(cbindgen), the calls by the Rust tests that make them.

    python3 tests/rust_abi/sys_declarations.py [REPOSITORY]
"""
import pathlib
import re
import sys


def parameter_lists(text, start_pattern):
    """{name: parameter count} of every declaration matching start_pattern (which ends at
    the name), its parameter list read to the matching parenthesis."""
    found = {}
    for m in re.finditer(start_pattern, text):
        i = text.index("(", m.end())
        depth, j = 0, i
        while True:
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        inner = text[i + 1 : j]
        # top-level commas only (a Rust fn-pointer type nests its own)
        depth, commas = 0, 0
        for c in inner:
            depth += c in "(<[" and 1 or 0
            depth -= c in ")>]" and 1 or 0
            commas += c == "," and depth == 0
        stripped = inner.strip().rstrip(",").strip()
        count = 0 if stripped in ("", "void") else commas + 1 - (inner.strip().endswith(",") and 1 or 0)
        found[m.group(1)] = count
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    header = (root / "ffi/include/dlpack_mdspan.h").read_text()
    header = re.sub(r"/\*.*?\*/", " ", header, flags=re.S)
    rust = (root / "rust/dlpack-mdspan-sys/src/lib.rs").read_text()
    rust = re.sub(r"//[^\n]*", " ", rust)
    c = parameter_lists(header, r"DLPM_API\s+[^;(]*?\b(dlpm_\w+)\s*(?=\()")
    r = parameter_lists(rust, r"\bpub fn (dlpm_\w+)\s*(?=\()")
    problems = []
    problems += [f"{n}: in ffi/include/dlpack_mdspan.h, not declared by dlpack-mdspan-sys" for n in sorted(c.keys() - r.keys())]
    problems += [f"{n}: declared by dlpack-mdspan-sys, not in ffi/include/dlpack_mdspan.h" for n in sorted(r.keys() - c.keys())]
    problems += [f"{n}: {c[n]} parameters in C, {r[n]} in Rust" for n in sorted(c.keys() & r.keys()) if c[n] != r[n]]
    if len(c) < 40:
        problems.append(f"only {len(c)} functions read from the header: the parser is broken")
    for p in problems:
        print(p)
    print(f"sys_declarations: {len(c)} facade functions, {len(r)} -sys declarations, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
