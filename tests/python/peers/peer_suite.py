# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs a peer library's own DLPack test file with every producer re-exported by us.

    python peer_suite.py --package numpy --file _core/tests/test_dlpack.py \\
        --reexport dlpm_interop:reexport --deselect numpy-test_dlpack.txt --out DIR [-- pytest args]

The peer's file is read from its installed package (``<package>.__file__``), never copied
into this repository. An ``ast.NodeTransformer`` rewrites it, the result is written to DIR
(a build tree) with a header naming the file and this adapter, and pytest runs it:

- a consumer call (any callee named ``from_dlpack``, or ``--consumer``) receives
  ``reexport(x)`` instead of its producer ``x``;
- a producer method looked up on an object (``x.__dlpack__``, ``x.__dlpack_device__``,
  called or not) is looked up on ``reexport(x)``, and a consumer handed such a call's
  capsule (``tf.experimental.dlpack.from_dlpack(x.__dlpack__())``) receives it as it is;
- both at the place of use, so what the test did to ``x`` before (``x.flags.writeable =
  False``) still happened to the peer's own object, and what it asks of ``x`` afterwards
  (``sys.getrefcount(x)``) still asks about the peer's object;
- not inside a producer's own ``def __dlpack__`` / ``def __dlpack_device__`` (a subclass's
  ``super().__dlpack__()`` stays the peer's: it *is* the producer we re-export);
- a relative import becomes absolute (the file no longer sits in its package), the
  package itself is imported first, as importing the file from it would, and ``__file__``
  becomes the peer's installed file, whose neighbours it may run (Warp's suite does);
- a test's subtests (unittest's ``subTest``) are not audited one by one: the test is.

Everything else is the peer's code. ``reexport`` is ``MODULE:FUNCTION`` (for this
repository's frameworks suite, ``dlpm_interop.reexport``: dlpm_py_import with the default
options, then dlpm_py_tensor_new).

The run fails when the rewrite found no site, when a test passes without re-exporting
anything (the rewrite missed its producer, so it tested the peer alone), when a re-export
returns something other than ``--expect-type``, or when a deselection names no test.

Deselections file: one test per line, ``Class::test`` (every parametrisation) or
``Class::test[id]``, then ``#`` and the reason, which the run prints; docs/python-interop.md
lists the same cases with the same reasons. Blank lines and lines starting with ``#`` are
comments.
"""
import argparse
import ast
import importlib
import importlib.metadata
import importlib.util
import os
import sys

import pytest

PRODUCER_METHODS = ("__dlpack__", "__dlpack_device__")
REEXPORT_NAME = "_dlpm_reexport"
ADAPTER = "tests/python/peers/peer_suite.py"


class ProducersThroughReexport(ast.NodeTransformer):
    """The rewrite described in the module's docstring; `sites` counts what it changed."""

    def __init__(self, consumers, package, filename):
        self.consumers = set(consumers)
        self.package = package  # the dotted package the peer file sits in
        self.filename = filename  # the peer file's own path
        self.sites = {"consumer call": 0, "producer method": 0, "relative import": 0, "__file__ use": 0}

    @staticmethod
    def wrap(expr):
        return ast.Call(func=ast.Name(id=REEXPORT_NAME, ctx=ast.Load()), args=[expr], keywords=[])

    def visit_FunctionDef(self, node):
        if node.name in PRODUCER_METHODS:
            return node  # the peer's producer itself
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr in PRODUCER_METHODS and isinstance(node.ctx, ast.Load):
            node.value = self.wrap(node.value)
            self.sites["producer method"] += 1
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in self.consumers:
            if node.args and not isinstance(node.args[0], ast.Starred):
                if not self.produced(node.args[0]):
                    node.args[0] = self.wrap(node.args[0])
                    self.sites["consumer call"] += 1
            else:  # the array API names the producer x
                for kw in node.keywords:
                    if kw.arg == "x" and not self.produced(kw.value):
                        kw.value = self.wrap(kw.value)
                        self.sites["consumer call"] += 1
        return node

    @staticmethod
    def produced(expr):
        """Whether `expr` is a producer method's call, already rewritten (visited first): its
        capsule comes from our Tensor, and a consumer that takes capsules only (TensorFlow's)
        gets it as it is."""
        return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and
                expr.func.attr in PRODUCER_METHODS)

    def visit_Name(self, node):
        if node.id == "__file__" and isinstance(node.ctx, ast.Load):
            self.sites["__file__ use"] += 1
            return ast.copy_location(ast.Constant(self.filename), node)
        return node

    def visit_ImportFrom(self, node):
        if node.level:
            node.module = importlib.util.resolve_name("." * node.level + (node.module or ""), self.package)
            node.level = 0
            self.sites["relative import"] += 1
        return node


def rewrite(source, filename, consumers, package, reexport, expect_type):
    """The peer's source, rewritten, and the sites changed."""
    tree = ast.parse(source, filename)
    transformer = ProducersThroughReexport(consumers, package, filename)
    tree = transformer.visit(tree)
    module, function = reexport.split(":")
    # The package the file sits in is imported first, as importing the file from there would
    # (dpnp's tests/__init__.py patches numpy.testing before its files import from it).
    prologue = ast.parse(
        f"import {package}\n"
        "import peer_suite as _dlpm_peer_suite\n"
        f"{REEXPORT_NAME} = _dlpm_peer_suite.reexporter({module!r}, {function!r}, {expect_type!r})\n").body
    # After a docstring and `from __future__` imports, which must come first.
    at = 0
    while at < len(tree.body) and (
            (isinstance(tree.body[at], ast.ImportFrom) and tree.body[at].module == "__future__") or
            (at == 0 and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant) and
             isinstance(tree.body[0].value.value, str))):
        at += 1
    tree.body[at:at] = prologue
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n", transformer.sites


# ---- at run time -------------------------------------------------------------------------

_calls = {"count": 0}


def reexporter(module, function, expect_type):
    """The function the rewritten file calls: `module.function`, counted and type-checked."""
    target = getattr(importlib.import_module(module), function)

    def reexport(obj):
        _calls["count"] += 1
        out = target(obj)
        got = f"{type(out).__module__}.{type(out).__qualname__}"
        if expect_type and got != expect_type:
            raise AssertionError(f"{module}.{function} returned a {got}, not a {expect_type}")
        return out

    return reexport


def read_deselections(path):
    """[(test id within the file, reason)] from a deselections file."""
    entries = []
    if not path:
        return entries
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, reason = line.partition("#")
            if not sep or not reason.strip():
                sys.exit(f"{path}:{number}: a deselection needs its reason after '#'")
            entries.append((name.strip(), reason.strip()))
    return entries


class Audit:
    """pytest plugin: deselects by name (with reasons), and fails a test that passed without
    a re-export."""

    def __init__(self, deselections):
        self.deselections = deselections
        self.deselected = []  # (node id, reason)
        self.without_reexport = []

    def pytest_collection_modifyitems(self, config, items):
        keep, drop, used = [], [], set()
        for item in items:
            local = item.nodeid.split("::", 1)[1]
            base = local.split("[", 1)[0]
            hit = next((entry for entry in self.deselections if entry[0] in (local, base)), None)
            if hit is None:
                keep.append(item)
            else:
                used.add(hit[0])
                drop.append(item)
                self.deselected.append((item.nodeid, hit[1]))
        stale = [name for name, _ in self.deselections if name not in used]
        if stale:
            raise pytest.UsageError(f"deselections that name no test of this file: {stale}")
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        before = _calls["count"]
        item._dlpm_running = True
        try:
            yield
        finally:
            item._dlpm_running = False
        item._dlpm_reexports = _calls["count"] - before

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        # A subtest's report (unittest's subTest, as Warp's suite uses) is made while its test
        # still runs: the test's own report, after it, is the one audited.
        if getattr(item, "_dlpm_running", False):
            return
        if report.when == "call" and report.passed and getattr(item, "_dlpm_reexports", 0) == 0:
            report.outcome = "failed"
            report.longrepr = ("passed without a re-export: the rewrite missed this test's producer, "
                               "so it ran against the peer alone")
            self.without_reexport.append(item.nodeid)

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("peer suite: deselected (policy differences)")
        for nodeid, reason in self.deselected:
            terminalreporter.line(f"{nodeid}: {reason}")
        if not self.deselected:
            terminalreporter.line("none")
        terminalreporter.line(f"re-exports made: {_calls['count']}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", required=True, help="the peer's installed package (numpy, dpnp)")
    parser.add_argument("--file", required=True,
                        help="the test file, relative to the package's folder, or an absolute path (a source checkout)")
    parser.add_argument("--reexport", required=True, help="MODULE:FUNCTION that re-exports one producer")
    parser.add_argument("--expect-type", default="dlpack_mdspan.Tensor", help="what a re-export returns ('' for any)")
    parser.add_argument("--consumer", action="append", help="callee names that consume a producer (default: from_dlpack)")
    parser.add_argument("--deselect", help="the deselections file")
    parser.add_argument("--out", required=True, help="where the rewritten file is written (a build tree)")
    parser.add_argument("pytest_args", nargs="*", help="passed on to pytest (after --)")
    args = parser.parse_args(argv)

    package = importlib.import_module(args.package)
    root = os.path.dirname(package.__file__)
    source_path = os.path.join(root, args.file)
    with open(source_path, encoding="utf-8") as f:
        source = f.read()
    # A file outside the installed package (an absolute path into a source checkout: the
    # package's wheel has no tests) sits in no subpackage: its imports are the package's own.
    inside = not os.path.isabs(args.file)
    dotted = ".".join([args.package] + ([p for p in os.path.dirname(args.file).split(os.sep) if p] if inside else []))
    text, sites = rewrite(source, source_path, args.consumer or ["from_dlpack"], dotted, args.reexport, args.expect_type)
    if sites["consumer call"] + sites["producer method"] == 0:
        sys.exit(f"peer_suite: no producer found to re-export in {source_path}")
    try:
        version = importlib.metadata.version(args.package)
    except importlib.metadata.PackageNotFoundError:
        version = getattr(package, "__version__", "?")

    os.makedirs(args.out, exist_ok=True)
    generated = os.path.join(args.out, os.path.basename(args.file))
    with open(generated, "w", encoding="utf-8") as f:
        f.write(f"# Generated from {source_path} ({args.package} {version}) by {ADAPTER}: every producer re-exported "
                f"through {args.reexport.replace(':', '.')} first. Do not edit; it is rewritten on every run.\n")
        f.write(text)
    # Only this file's configuration: no ini or conftest of the tree around it.
    with open(os.path.join(args.out, "pytest.ini"), "w", encoding="utf-8") as f:
        f.write("[pytest]\n")
    print(f"peer_suite: {source_path} ({args.package} {version}) -> {generated}; rewritten: "
          + ", ".join(f"{n} {what}s" for what, n in sites.items()), flush=True)

    audit = Audit(read_deselections(args.deselect))
    return pytest.main([generated, "-p", "no:cacheprovider", "--rootdir", args.out, *args.pytest_args], plugins=[audit])


if __name__ == "__main__":
    # Run as a script, this file is __main__; the rewritten test file imports it as
    # peer_suite, so the counters must live in that one module.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import peer_suite

    sys.exit(peer_suite.main())
