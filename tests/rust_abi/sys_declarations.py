#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every function of the C facade's header is declared by dlpack-mdspan-sys, with as many
parameters, and the crate declares no other (its crate documentation promises "every
dlpm_* function"); every function of the Python component's header is declared by
dlpack-mdspan-python-sys but the four its documentation names as not bound (UNBOUND_PY).
The types are proved elsewhere: the #[repr(C)] mirrors and each declaration's parameter
types by abi.test.cpp and python_abi.test.cpp (cbindgen), the calls by the Rust tests that
make them.

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


# Not declared by dlpack-mdspan-python-sys: they take DLPack's exchange table or the device
# hooks, whose structs it does not mirror (docs/rust.md, "ABI proof").
UNBOUND_PY = {"dlpm_py_tensor_new_on_device", "dlpm_py_exchange_api_of", "dlpm_py_exchange_api_init",
              "dlpm_py_publish_exchange_api"}


def compare(c, r, header, crate, unbound=frozenset()):
    """The problems of crate's declarations `r` against header's `c` ({name: parameters})."""
    problems = [f"{n}: in {header}, not declared by {crate}" for n in sorted(c.keys() - r.keys() - unbound)]
    problems += [f"{n}: declared by {crate}, not in {header}" for n in sorted(r.keys() - c.keys())]
    problems += [f"{n}: {c[n]} parameters in C, {r[n]} in Rust" for n in sorted(c.keys() & r.keys()) if c[n] != r[n]]
    problems += [f"{n}: listed as not bound, but {crate} declares it" for n in sorted(unbound & r.keys())]
    problems += [f"{n}: listed as not bound, but {header} has no such function" for n in sorted(unbound - c.keys())]
    return problems


def read(path, comment):
    return re.sub(comment, " ", path.read_text(), flags=re.S)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    c_comment, rust_comment = r"/\*.*?\*/", r"//[^\n]*"
    rust_fn = r"\bpub fn (dlpm_\w+)\s*(?=\()"
    c = parameter_lists(read(root / "ffi/include/dlpack_mdspan.h", c_comment), r"DLPM_API\s+[^;(]*?\b(dlpm_\w+)\s*(?=\()")
    r = parameter_lists(read(root / "rust/dlpack-mdspan-sys/src/lib.rs", rust_comment), rust_fn)
    problems = compare(c, r, "ffi/include/dlpack_mdspan.h", "dlpack-mdspan-sys")
    c_py = parameter_lists(read(root / "python/include/dlpack_mdspan_python.h", c_comment),
                           r"DLPM_PY_API\s+[^;(]*?\b(dlpm_py_\w+)\s*(?=\()")
    r_py = parameter_lists(read(root / "rust/dlpack-mdspan-python-sys/src/lib.rs", rust_comment), rust_fn)
    problems += compare(c_py, r_py, "python/include/dlpack_mdspan_python.h", "dlpack-mdspan-python-sys", UNBOUND_PY)
    if len(c) < 40 or len(c_py) < 20:
        problems.append(f"only {len(c)} and {len(c_py)} functions read from the headers: the parser is broken")
    for p in problems:
        print(p)
    print(f"sys_declarations: {len(c)} facade functions, {len(r)} -sys declarations; {len(c_py)} Python component "
          f"functions, {len(r_py)} python-sys declarations; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
