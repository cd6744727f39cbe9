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

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let source = manifest_dir.join("cxx").join("roundtrip_helper.cpp");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-changed=build.rs");

    let cxx_include = env::var_os("DEP_DLPACK_MDSPAN_C_CXX_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir.join("../../modules/dlpack_mdspan/include"));
    println!("cargo:rerun-if-changed={}", cxx_include.display());

    // `c++` (linked statically) or `c++-shared`: either way the facade brings libc++.
    let facade_libcxx =
        env::var("DEP_DLPACK_MDSPAN_C_CXX_STDLIB").is_ok_and(|s| s.starts_with("c++"));
    let facade_cxx = env::var("DEP_DLPACK_MDSPAN_C_CXX").unwrap_or_default();
    println!("cargo:rerun-if-env-changed=DLPM_CXX");
    let (cxx, link_libcxx) = match env::var("DLPM_CXX") {
        Ok(cxx) if !cxx.trim().is_empty() => (cxx, !facade_libcxx),
        _ if facade_libcxx && !facade_cxx.trim().is_empty() => (facade_cxx, false),
        _ => ("clang++-19".to_string(), !facade_libcxx),
    };

    // The same helper as the facade's build: the cc crate, given this compiler command.
    let mut build = cc::Build::new();
    let mut words = cxx.split_whitespace();
    build
        .cpp(true)
        .compiler(words.next().expect("a non-empty compiler command"))
        .std("c++23")
        .opt_level(1)
        .pic(true)
        .cpp_link_stdlib(None) // linked below, only when the facade does not link it
        .warnings_into_errors(true)
        .flag("-Wpedantic")
        .flag("-gdwarf-4")
        .include(&cxx_include)
        .file(&source);
    let args: Vec<&str> = words.collect();
    for arg in &args {
        build.flag(arg);
    }
    if !args.contains(&"-stdlib=libc++") {
        build.flag("-stdlib=libc++");
    }
    if let Some(dir) = env::var_os("DEP_DLPACK_MDSPAN_C_DLPACK_INCLUDE") {
        build.include(dir);
    }
    println!("cargo:rerun-if-env-changed=CARGO_CFG_SANITIZE");
    if env::var("CARGO_CFG_SANITIZE").is_ok_and(|s| s.split(',').any(|s| s == "address")) {
        for flag in [
            "-fsanitize=address,undefined",
            "-fsanitize-trap=undefined",
            "-fno-omit-frame-pointer",
        ] {
            build.flag(flag);
        }
    }
    build.compile("dlpm_cxx_roundtrip_helper");
    if link_libcxx {
        println!("cargo:rustc-link-lib=dylib=c++");
        println!("cargo:rustc-link-lib=dylib=c++abi");
    }
}
