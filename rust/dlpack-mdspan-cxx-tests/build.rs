//! Compiles the C++ round-trip helper (test code, in this unpublished crate only) with the
//! project's toolchain: clang++-19, C++23, libc++. The facade itself, and libc++, are linked
//! by dlpack-mdspan-sys.

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
    let cxx_include = env::var_os("DEP_DLPACK_MDSPAN_CXX_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir.join("../../modules/dlpack_mdspan/include"));
    println!("cargo:rerun-if-changed={}", cxx_include.display());

    let cxx = env::var("DLPM_CXX").unwrap_or_else(|_| "clang++-19".to_string());
    println!("cargo:rerun-if-env-changed=DLPM_CXX");
    let object = out_dir.join("roundtrip_helper.o");
    let mut compile = Command::new(&cxx);
    compile.args([
        "-std=c++23",
        "-stdlib=libc++",
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
    println!("cargo:rustc-link-lib=dylib=c++");
    println!("cargo:rustc-link-lib=dylib=c++abi");
}
