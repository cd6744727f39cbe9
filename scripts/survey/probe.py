# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One framework's part of the survey, run in that framework's interpreter:

    python probe.py CATALOGUE      (catalogue.py's name; dlpack_mdspan on PYTHONPATH)

builds every case of the catalogue and hands each to dlpack_mdspan.inspect three ways:
as the object itself (the component's default import: the type's exchange API, else
__dlpack__(max_version=(1, 3)), asked again without keywords when refused), and as the
capsules that x.__dlpack__() and x.__dlpack__(max_version=(1, 3)) return. Prints one JSON
document: what arrived, or the exception raised, per case and per way.

Addresses never reach the output. Alignment is the largest power of two dividing an
address, at most 64, and an allocator's alignment shows only over several allocations: each
case is built TRIALS times, each after a spacer allocation of another size from the same
framework, all kept alive, and the smallest alignment seen is reported. Every other fact
must be the same in every trial (the disagreeing ones are named on the page).
"""
import contextlib
import importlib.metadata
import json
import os
import platform
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from catalogue import CATALOGUES  # noqa: E402

TRIALS = 32
ALIGNMENT_CAP = 64  # the cache line; above it allocators differ from one run to the next (TF, dpnp)
COMPARED = ("device", "dtype_code", "shape", "strides", "byte_offset", "data")  # "the same view"


def error_text(e):
    """The exception's class and message on one line, without addresses."""
    message = re.sub(r"0x[0-9a-fA-F]{4,}", "0x...", " ".join(str(e).split()))
    return type(e).__name__ + (": " + message if message else "")


def alignment(address):
    return None if address == 0 else min(address & -address, ALIGNMENT_CAP)


def facts(info):
    """inspect's dict, reduced to what the page shows (and the address, to compare views)."""
    flags = [name for name, key in (("READ_ONLY", "read_only"), ("IS_COPIED", "is_copied"),
                                    ("IS_SUBBYTE_TYPE_PADDED", "subbyte_padded")) if info[key]]
    return {"path": info["path"], "pre_1_0_call": info["pre_1_0_call"], "capsule": info["capsule"],
            "dlpack_version": list(info["dlpack_version"]) if info["dlpack_version"] else None,
            "device": info["device_name"] + " " + str(tuple(info["device"])), "dtype": info["dtype"],
            "dtype_code": list(info["dtype_code"]), "shape": info["shape"] and list(info["shape"]),
            "strides": info["strides"] and list(info["strides"]), "byte_offset": info["byte_offset"],
            "flags": flags, "valid": info["valid"], "reason": info["reason"], "data": info["data"],
            "data_alignment": alignment(info["data"]), "first_alignment": alignment(info["data"] + info["byte_offset"])}


def probe(dm, call):
    try:
        return facts(dm.inspect(call(), show=False))
    except Exception as e:  # noqa: BLE001 - every refusal is a finding
        return {"error": error_text(e)}


def ways(dm, x, export):
    """The three ways one tensor is handed over; the capsules' views compared with the import's.
    `export` is the framework's own export function for a framework whose tensors have no
    __dlpack__ (the import way is given its capsule), else None."""
    out = {"import": probe(dm, (lambda: export(x)) if export else (lambda: x)),
           "legacy": probe(dm, lambda: x.__dlpack__()),
           "versioned": probe(dm, lambda: x.__dlpack__(max_version=(1, 3)))}
    first = out["import"]
    for way in ("legacy", "versioned"):
        if "error" not in out[way] and "error" not in first:
            out[way]["same_view"] = all(out[way][k] == first[k] for k in COMPARED)
    return out


def merge(trials):
    """One way's record over every trial: the smallest alignment, and the other facts, which
    must agree (else the disagreeing keys are named)."""
    merged = dict(trials[0])
    if "error" not in merged:
        for key in ("data_alignment", "first_alignment"):
            seen = [t.get(key) for t in trials]
            merged[key] = None if None in seen else min(seen)
    varies = sorted({k for t in trials for k in set(t) | set(merged)
                     if k not in ("data", "data_alignment", "first_alignment") and t.get(k) != merged.get(k)})
    if varies:
        merged["varies"] = varies
    merged.pop("data", None)
    return merged


def namespace(catalogue):
    scope = {}
    for statement in catalogue["imports"]:
        exec(statement, scope)  # noqa: S102 - the catalogue's own import lines
    for statement in catalogue.get("optional_imports", []):
        try:
            exec(statement, scope)  # noqa: S102
        except ImportError as e:
            scope[statement.split()[-1]] = _Missing(e)
    return scope


class _Missing:
    """An optional module that is not installed: using it raises its ImportError."""

    def __init__(self, error):
        self._error = error

    def __getattr__(self, name):
        raise ModuleNotFoundError(str(self._error))


def versions(catalogue, scope):
    """The distributions' versions, in the catalogue's order."""
    found = {}
    for name in catalogue["distributions"]:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    if not found:  # a distribution without metadata (Debian's python3-torch): the module's own
        module = scope[catalogue["imports"][0].split()[-1]]
        found[module.__name__] = getattr(module, "__version__", "unknown")
    return found


DLPACK_NAMES = ("__dlpack__", "__dlpack_device__", "__dlpack_c_exchange_api__", "from_dlpack", "to_dlpack")


def without_dlpack(catalogue, scope):
    """A framework the catalogue says has no DLPack: the DLPack names its tensor type and its
    module have (none, or the probe fails: the page would be wrong)."""
    spec = catalogue["no_dlpack"]
    x = eval(spec["made"], scope)  # noqa: S307 - the catalogue's expression
    module = scope[spec["module"]]
    found = [type(x).__name__ + "." + n for n in DLPACK_NAMES if hasattr(x, n)]
    found += [spec["module"] + "." + n for n in DLPACK_NAMES if hasattr(module, n)]
    return found


def main():
    # The JSON document is the only output: what frameworks print (Warp's banner) goes to stderr.
    out = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        result = survey(sys.argv[1])
    json.dump(result, out, indent=1, sort_keys=True)
    return 0


def survey(name):
    catalogue = CATALOGUES[name]()
    warnings.simplefilter("ignore")  # JAX's int64 truncation, TF's notices: the page says what arrives
    try:
        scope = namespace(catalogue)
    except ImportError as e:
        return {"catalogue": name, "missing": error_text(e)}
    import dlpack_mdspan as dm

    result = {"catalogue": name, "title": catalogue["title"], "note": catalogue.get("note"),
              "python": platform.python_implementation() + " " + platform.python_version(),
              "cases": []}
    result["versions"] = versions(catalogue, scope)
    result["version"] = next(iter(result["versions"].values()))  # the first distribution named: the framework's
    if "no_dlpack" in catalogue:
        found = without_dlpack(catalogue, scope)
        if found:
            sys.exit("probe: {} now has {}: give it a catalogue of cases".format(catalogue["title"], ", ".join(found)))
        result["no_dlpack"] = catalogue["no_dlpack"]["reason"]
        return result
    export = eval(catalogue["export"], scope) if "export" in catalogue else None  # noqa: S307
    for case, made in catalogue["cases"].items():
        row = {"case": case}
        if isinstance(made, tuple):
            row["absent"] = made[1]
        else:
            row["made"] = made
            kept, trials = [], []
            for trial in range(TRIALS):
                kept.append(eval(catalogue["spacer"].format(n=16 * trial + 8), scope))  # noqa: S307
                try:
                    x = eval(made, scope)  # noqa: S307 - the catalogue's expression
                except Exception as e:  # noqa: BLE001 - a case the framework cannot make is a finding
                    row["not_made"] = error_text(e)
                    break
                kept.append(x)
                trials.append(ways(dm, x, export))
            if "not_made" not in row:
                row.update({way: merge([t[way] for t in trials]) for way in ("import", "legacy", "versioned")})
            del kept, trials
        result["cases"].append(row)
    return result


if __name__ == "__main__":
    sys.exit(main())
