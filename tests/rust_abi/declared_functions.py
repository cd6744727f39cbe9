#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Wraps cbindgen's C rendering of a -sys crate's function declarations (functions.toml) as
C++: the declarations inside `namespace NAMESPACE` (C++ functions there, declared and never
defined, so that they do not clash with the C header's extern "C" ones), and
`#define NAMESPACE(X)` (upper case), X(name) for each, which the ABI test expands into one
static_assert per function (same_layout.hpp, DLPM_ABI_SAME_FUNCTION). Run at build time by
tests/rust_abi/CMakeLists.txt; its output is never committed.

    declared_functions.py RENDERED.h OUTPUT.hpp NAMESPACE
"""
import re
import sys


def main():
    rendered, output, namespace = sys.argv[1:4]
    text = open(rendered).read()
    names = re.findall(r"^extern\b[^;(]*?\b(\w+)\s*\(", text, flags=re.M)
    if not names:
        print(f"declared_functions.py: no function declaration in {rendered}", file=sys.stderr)
        return 1
    listed = " ".join(f"X({n})" for n in names)
    with open(output, "w") as out:
        out.write(f"// Generated at build time by tests/rust_abi/declared_functions.py; never committed.\n"
                  f"namespace {namespace} {{\n{text}\n}}  // namespace {namespace}\n"
                  f"#define {namespace.upper()}(X) {listed}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
