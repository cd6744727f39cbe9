// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Compiles the Python component (the repository's `python/src/**/*.c`, C11; in a packaged
//! crate the `csrc/` copy that `sync-sources` writes) into a static
//! library with the `cc` crate, for the interpreter pyo3 builds for: its headers come from
//! that interpreter's `sysconfig` (or `DLPM_PYTHON_INCLUDE`), and with pyo3's abi3 features
//! the component is compiled for the same limited API. The facade it calls is
//! dlpack-mdspan-sys's; the Python C API is resolved by the interpreter that loads the
//! extension (or by libpython, which pyo3 links into test binaries).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn c_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            c_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "c") {
            out.push(p);
        }
    }
}

/// The directory of `Python.h` for the interpreter pyo3 resolved.
fn python_include(config: &pyo3_build_config::InterpreterConfig) -> PathBuf {
    println!("cargo:rerun-if-env-changed=DLPM_PYTHON_INCLUDE");
    if let Some(dir) = env::var_os("DLPM_PYTHON_INCLUDE") {
        return dir.into();
    }
    let python = config.executable.as_deref().unwrap_or_else(|| {
        panic!(
            "dlpack-mdspan-python-sys: pyo3 resolved no interpreter (PYO3_NO_PYTHON?), so Python's \
             headers are unknown: set DLPM_PYTHON_INCLUDE to the directory of Python.h"
        )
    });
    let out = Command::new(python)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['include'])",
        ])
        .output()
        .unwrap_or_else(|e| panic!("dlpack-mdspan-python-sys: cannot run {python}: {e}"));
    assert!(
        out.status.success(),
        "dlpack-mdspan-python-sys: {python} could not say where Python.h is"
    );
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        dir.join("Python.h").is_file(),
        "dlpack-mdspan-python-sys: no Python.h in {} (the headers of {python}: python3-dev, or set \
         DLPM_PYTHON_INCLUDE)",
        dir.display()
    );
    dir
}

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    // The repository's python/ when this is its rust/dlpack-mdspan-python-sys, else csrc/.
    let checkout = manifest.join("../../python");
    let in_repository =
        manifest.ends_with("rust/dlpack-mdspan-python-sys") && checkout.join("src").is_dir();
    let python = if in_repository {
        checkout
    } else {
        manifest.join("csrc")
    };
    assert!(
        python.join("include/dlpack_mdspan_python.h").is_file(),
        "dlpack-mdspan-python-sys: no Python component sources in {} (a packaged crate carries csrc/, made by \
         sync-sources)",
        python.display()
    );
    let facade_include = PathBuf::from(
        env::var_os("DEP_DLPACK_MDSPAN_C_INCLUDE").expect("dlpack-mdspan-sys's metadata"),
    );
    let config = pyo3_build_config::get();
    // The component keeps process-global caches guarded by the GIL (docs/python-interop.md).
    assert!(
        !config
            .build_flags
            .0
            .contains(&pyo3_build_config::BuildFlag::Py_GIL_DISABLED),
        "dlpack-mdspan-python-sys: the Python component does not support the free-threaded build \
         (Py_GIL_DISABLED) of {}: use a GIL build of Python",
        config
            .executable
            .as_deref()
            .unwrap_or("the interpreter pyo3 found")
    );

    let mut files = Vec::new();
    c_files(&python.join("src"), &mut files);
    let mut build = cc::Build::new();
    build
        .files(&files)
        .include(python.join("src"))
        .include(python.join("include"))
        .include(&facade_include)
        .include(python_include(config))
        .std("c11")
        .flag_if_supported("-fvisibility=hidden")
        .warnings(false);
    if let Some(dir) = env::var_os("DEP_DLPACK_MDSPAN_C_DLPACK_INCLUDE") {
        build.include(dir);
    }
    if config.abi3 {
        // The limited API of the oldest version the extension supports (abi3-py3XY).
        let v = 0x0300_0000u32 + (u32::from(config.version.minor) << 16);
        build.define("Py_LIMITED_API", format!("{v:#010x}").as_str());
    }
    // Under -Zsanitizer=address the component is instrumented like the facade.
    if env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|f| f.contains("sanitizer=address")) {
        build
            .flag("-fsanitize=address")
            .flag("-fno-omit-frame-pointer");
    }
    build.compile("dlpack_mdspan_python");
    println!("cargo:rerun-if-changed={}", python.join("src").display());
    println!(
        "cargo:rerun-if-changed={}",
        python.join("include").display()
    );
    println!("cargo:include={}", python.join("include").display());
}
