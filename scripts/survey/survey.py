# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs every framework's probe (probe.py, one process each, in the framework's own
interpreter) and writes or checks the survey page. scripts/survey-frameworks calls it after
building the dlpack_mdspan package it needs:

    python3 survey.py --site DIR --page docs/framework-survey.md --write
    python3 survey.py --site DIR --page docs/framework-survey.md --check

DIR holds the dlpack_mdspan package (put on each probe's PYTHONPATH). The interpreters come
from the environment scripts/venvs.sh sets (DLPM_FRAMEWORKS_PYTHON, DLPM_MINDSPORE_PYTHON,
DLPM_SYCL_PYTHON) and
Debian's /usr/bin/python3. A framework whose interpreter or module is missing is skipped:
--write says so on the page, --check leaves its section unchecked and says so.
"""
import argparse
import concurrent.futures
import difflib
import json
import os
import subprocess
import sys

import render

HERE = os.path.dirname(os.path.abspath(__file__))
DEBIAN_PYTHON = "/usr/bin/python3"
VARIABLES = {"frameworks": "DLPM_FRAMEWORKS_PYTHON", "mindspore": "DLPM_MINDSPORE_PYTHON", "sycl": "DLPM_SYCL_PYTHON"}


def interpreters():
    """Each interpreter of the survey: its executable, its label on the page, extra environment.
    The venvs' interpreters are the ones scripts/venvs.sh exports (dlpm_export_venv_pythons)."""
    frameworks = os.environ.get("DLPM_FRAMEWORKS_PYTHON", "")
    sycl = os.environ.get("DLPM_SYCL_PYTHON", "")
    # Intel's OpenCL CPU runtime sits in the SYCL venv's lib folder, which the ICD loader does
    # not search (the environment cmake/DlpackMdspanSycl.cmake gives the SYCL tests).
    sycl_lib = os.path.join(os.path.dirname(os.path.dirname(sycl)), "lib")
    sycl_env = {"LD_LIBRARY_PATH": sycl_lib}
    if os.path.exists(os.path.join(sycl_lib, "libintelocl.so")):
        sycl_env["OCL_ICD_FILENAMES"] = os.path.join(sycl_lib, "libintelocl.so")
    return {
        "frameworks": (frameworks, "the frameworks venv of scripts/install-deps", {}),
        "debian": (DEBIAN_PYTHON, "Debian's /usr/bin/python3", {}),
        "mindspore": (os.environ.get("DLPM_MINDSPORE_PYTHON", ""), "the MindSpore venv of scripts/install-deps", {}),
        "sycl": (sycl, "the SYCL venv of scripts/install-deps", sycl_env),
    }


# The page's sections, in order: (id, catalogue, interpreter, label when it is missing).
SECTIONS = [
    ("numpy2", "numpy", "frameworks", "NumPy 2"),
    ("numpy1", "numpy", "debian", "NumPy 1"),
    ("torch2", "torch", "frameworks", "PyTorch 2"),
    ("torch1", "torch", "debian", "PyTorch 1"),
    ("jax", "jax", "frameworks", "JAX"),
    ("tensorflow", "tensorflow", "frameworks", "TensorFlow"),
    ("pyarrow", "pyarrow", "frameworks", "pyarrow"),
    ("tvm_ffi", "tvm_ffi", "frameworks", "tvm-ffi"),
    ("dpnp", "dpnp", "sycl", "dpnp"),
    ("paddle", "paddle", "frameworks", "PaddlePaddle"),
    ("mindspore", "mindspore", "mindspore", "MindSpore"),
    ("warp", "warp", "frameworks", "Warp"),
    ("mlx", "mlx", "frameworks", "MLX"),
    ("tinygrad", "tinygrad", "frameworks", "tinygrad"),
]


def run_probe(section, site):
    python, _, extra = interpreters()[section["interpreter"]]
    if not python or not os.access(python, os.X_OK):
        said = python or "none: {} is not set".format(VARIABLES[section["interpreter"]])
        return {"catalogue": section["catalogue"], "missing": "no interpreter ({})".format(said)}
    env = dict(os.environ, PYTHONPATH=site, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1", JAX_PLATFORMS="cpu",
               TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", **extra)
    done = subprocess.run([python, os.path.join(HERE, "probe.py"), section["catalogue"]], env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError("the {} probe failed (exit {}):\n{}".format(section["id"], done.returncode,
                                                                       done.stderr[-4000:]))
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", required=True)
    parser.add_argument("--page", required=True)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args()

    labels = interpreters()
    sections = [{"id": id_, "catalogue": catalogue, "interpreter": interpreter, "label": label,
                 "where": labels[interpreter][1]} for id_, catalogue, interpreter, label in SECTIONS]
    # Two at a time: CI machines have two cores, and TensorFlow's import alone takes seconds.
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            docs = dict(zip([s["id"] for s in sections], pool.map(lambda s: run_probe(s, args.site), sections)))
    except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        print("survey-frameworks: {}".format(e), file=sys.stderr)
        return 1
    for section in sections:
        doc = docs[section["id"]]
        state = ("skipped: " + doc["missing"] if "missing" in doc else "no DLPack" if "no_dlpack" in doc
                 else "{} cases".format(len(doc["cases"])))
        print("[survey] {}: {}".format(section["id"], state))
    new = render.page(sections, docs)

    if args.write:
        with open(args.page, "w", encoding="utf-8") as f:
            f.write(new)
        print("[survey] wrote " + args.page)
        return 0

    try:
        with open(args.page, encoding="utf-8") as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    missing = [s["id"] for s in sections if "missing" in docs[s["id"]]]
    if missing:
        # Only what this machine could survey is compared; the rest of the page stands.
        old_sections, new_sections = render.split_sections(old), render.split_sections(new)
        checked = [s["id"] for s in sections if s["id"] not in missing]
        old = "".join(old_sections.get(i, "") for i in checked)
        new = "".join(new_sections[i] for i in checked)
        print("[survey] not checked (missing here): " + ", ".join(missing))
    if old == new:
        print("[survey] {} is up to date for the installed frameworks".format(args.page))
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                               args.page + " (committed)", args.page + " (these frameworks)"))
    print("\n[survey] {} is stale for the installed frameworks; regenerate it with scripts/survey-frameworks "
          "and commit it".format(args.page))
    return 1


if __name__ == "__main__":
    sys.exit(main())
