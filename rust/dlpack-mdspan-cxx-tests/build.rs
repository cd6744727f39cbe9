// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Compiles the C++ round-trip helper (test code, in this unpublished crate only). It uses
//! `std::mdspan` (C++23), which only libc++ provides on the project's toolchain, so it is
//! compiled with clang++-19 and `-stdlib=libc++` (or `DLPM_CXX`). The facade itself, and
//! its C++ runtime, are linked by dlpack-mdspan-sys, whose `links` metadata
//! (`DEP_DLPACK_MDSPAN_C_*`) says where its headers are and which compiler and C++ standard
//! library it used:
//!
//! - facade built with libc++ (e.g. `CXX="clang++-19 -stdlib=libc++"`, as rust/run-tests
//!   does): the helper is compiled with that same compiler command, and one C++ runtime
//!   is linked;
//! - facade built with libstdc++ (the default `c++` on Debian): the helper still needs
//!   libc++, so this crate links libc++ and libc++abi beside the facade's libstdc++. The
//!   two never share a C++ type (they meet only through the C facade and DLPack's C
//!   structs), and the Itanium ABI pieces both runtimes define (`__cxa_*`, the
//!   personality routine) are resolved to one of them for the whole process, so a C++
//!   exception thrown by the helper's deleter is still caught by the facade
//!   (tests/throwing_deleter.rs checks exactly that).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    let source = manifest_dir.join("cxx").join("roundtrip_helper.cpp");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-changed=build.rs");

    // The C++ headers, as located by dlpack-mdspan-sys (its `links` metadata), or relative
    // to this crate inside the repository.
    let cxx_include = env::var_os("DEP_DLPACK_MDSPAN_C_CXX_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir.join("../../modules/dlpack_mdspan/include"));
    println!("cargo:rerun-if-changed={}", cxx_include.display());
    let dlpack_include = env::var_os("DEP_DLPACK_MDSPAN_C_DLPACK_INCLUDE").map(PathBuf::from);

    let facade_stdlib = env::var("DEP_DLPACK_MDSPAN_C_CXX_STDLIB").unwrap_or_default();
    let facade_cxx = env::var("DEP_DLPACK_MDSPAN_C_CXX").unwrap_or_default();
    println!("cargo:rerun-if-env-changed=DLPM_CXX");
    // The facade's own compiler when it uses libc++ (one runtime in the test binaries);
    // otherwise clang++-19 with libc++, linked here.
    let (cxx, link_libcxx) = match env::var("DLPM_CXX") {
        Ok(cxx) if !cxx.trim().is_empty() => (cxx, facade_stdlib != "c++"),
        _ if facade_stdlib == "c++" && !facade_cxx.trim().is_empty() => (facade_cxx, false),
        _ => ("clang++-19".to_string(), facade_stdlib != "c++"),
    };
    let mut words = cxx.split_whitespace();
    let program = words
        .next()
        .expect("a non-empty compiler command")
        .to_string();
    let cxx_args: Vec<&str> = words.collect();
    let object = out_dir.join("roundtrip_helper.o");
    let mut compile = Command::new(&program);
    compile.args(&cxx_args);
    if !cxx_args.contains(&"-stdlib=libc++") {
        compile.arg("-stdlib=libc++");
    }
    if let Some(dir) = &dlpack_include {
        compile.arg("-I").arg(dir);
    }
    compile.args([
        "-std=c++23",
        "-fPIC",
        "-O1",
        "-gdwarf-4",
        "-Wall",
        "-Wextra",
        "-Wpedantic",
        "-Werror",
    ]);
    // Instrumented like the Rust code under RUSTFLAGS=-Zsanitizer=address.
    println!("cargo:rerun-if-env-changed=CARGO_CFG_SANITIZE");
    if env::var("CARGO_CFG_SANITIZE")
        .map(|s| s.split(',').any(|s| s == "address"))
        .unwrap_or(false)
    {
        compile.args([
            "-fsanitize=address,undefined",
            "-fsanitize-trap=undefined",
            "-fno-omit-frame-pointer",
        ]);
    }
    let status = compile
        .arg("-I")
        .arg(&cxx_include)
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(&object)
        .status()
        .unwrap_or_else(|e| panic!("could not run {cxx} ({e}); run scripts/install-deps"));
    assert!(
        status.success(),
        "{cxx} failed to compile {}",
        source.display()
    );

    let archive = out_dir.join("libdlpm_cxx_roundtrip_helper.a");
    let _ = std::fs::remove_file(&archive);
    let status = Command::new("ar")
        .arg("crs")
        .arg(&archive)
        .arg(&object)
        .status()
        .unwrap_or_else(|e| panic!("could not run ar ({e})"));
    assert!(status.success(), "ar failed");

    println!("cargo:rustc-link-search=native={}", out_dir.display());
    println!("cargo:rustc-link-lib=static=dlpm_cxx_roundtrip_helper");
    if link_libcxx {
        println!("cargo:rustc-link-lib=dylib=c++");
        println!("cargo:rustc-link-lib=dylib=c++abi");
    }
}
