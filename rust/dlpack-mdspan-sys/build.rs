//! Links the static C facade `libdlpack_mdspan_c.a`, then libc++.
//!
//! - `DLPACK_MDSPAN_LIB_DIR` set: the library is taken from that directory.
//! - otherwise: the facade is built with CMake from this repository (two levels above this
//!   crate) into `OUT_DIR/build`, with the settings of the project's default preset
//!   (Ninja, clang-19 / clang++-19, libc++, no C++ extensions) in Release mode. When the
//!   Rust code is built with `-Zsanitizer=address` (nightly), the facade is compiled with
//!   `-fsanitize=address` (and UndefinedBehaviorSanitizer in trap mode) too, so the
//!   sanitizers also check the C++ side.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const LIB_DIR_VAR: &str = "DLPACK_MDSPAN_LIB_DIR";

fn main() {
    println!("cargo:rerun-if-env-changed={LIB_DIR_VAR}");
    println!("cargo:rerun-if-env-changed=CARGO_CFG_SANITIZE");
    println!("cargo:rerun-if-changed=build.rs");

    let manifest_dir = PathBuf::from(
        env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo"),
    );
    let repo_root = manifest_dir.join("..").join("..");
    let in_repository = repo_root
        .join("ffi")
        .join("include")
        .join("dlpack_mdspan.h")
        .is_file()
        && repo_root.join("CMakeLists.txt").is_file();

    // Include directories for crates that compile C or C++ against the facade
    // (DEP_DLPACK_MDSPAN_INCLUDE, DEP_DLPACK_MDSPAN_CXX_INCLUDE).
    if in_repository {
        let root = repo_root
            .canonicalize()
            .unwrap_or_else(|_| repo_root.clone());
        println!("cargo:root={}", root.display());
        println!(
            "cargo:include={}",
            root.join("ffi").join("include").display()
        );
        println!(
            "cargo:cxx_include={}",
            root.join("modules")
                .join("dlpack_mdspan")
                .join("include")
                .display()
        );
    }

    let lib_dir = match env::var_os(LIB_DIR_VAR) {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if !dir.join("libdlpack_mdspan_c.a").is_file() {
                panic!(
                    "{LIB_DIR_VAR}={} does not contain libdlpack_mdspan_c.a (build the CMake target \
                     dlpack_mdspan_c_static, or install the project, and point {LIB_DIR_VAR} at its lib directory)",
                    dir.display()
                );
            }
            dir
        }
        _ => {
            if !in_repository {
                panic!(
                    "dlpack-mdspan-sys: the dlpack_mdspan sources are not at {} ; set {LIB_DIR_VAR} to a directory \
                     that contains libdlpack_mdspan_c.a",
                    repo_root.display()
                );
            }
            for dir in ["ffi", "modules", "cmake"] {
                println!("cargo:rerun-if-changed={}", repo_root.join(dir).display());
            }
            for file in ["CMakeLists.txt", "CMakePresets.json"] {
                println!("cargo:rerun-if-changed={}", repo_root.join(file).display());
            }
            build_with_cmake(&repo_root)
        }
    };

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=static=dlpack_mdspan_c");
    // The facade is C++ built against libc++: link it after the static library.
    println!("cargo:rustc-link-lib=dylib=c++");
    println!("cargo:rustc-link-lib=dylib=c++abi");
}

/// Whether `program --version` runs.
fn tool_works(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn run(command: &mut Command, what: &str) {
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("dlpack-mdspan-sys: could not start {what}: {e}"));
    if !status.success() {
        panic!("dlpack-mdspan-sys: {what} failed ({status}); see the output above");
    }
}

fn build_with_cmake(repo_root: &Path) -> PathBuf {
    let missing: Vec<&str> = ["cmake", "ninja", "clang++-19", "clang-19"]
        .into_iter()
        .filter(|tool| !tool_works(tool))
        .collect();
    if !missing.is_empty() {
        panic!(
            "dlpack-mdspan-sys: {} not found; run scripts/install-deps (as root) to install the C++ toolchain, \
             or set {LIB_DIR_VAR} to a directory that contains a prebuilt libdlpack_mdspan_c.a",
            missing.join(", ")
        );
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let build_dir = out_dir.join("build");

    // Instrument the C++ code when the Rust code is (RUSTFLAGS=-Zsanitizer=address): the
    // Rust toolchain links the AddressSanitizer runtime.
    let asan = env::var("CARGO_CFG_SANITIZE")
        .map(|s| s.split(',').any(|s| s == "address"))
        .unwrap_or(false);
    // UndefinedBehaviorSanitizer in trap mode needs no runtime (Rust links none for it).
    let cxx_flags = if asan {
        "-DCMAKE_CXX_FLAGS=-stdlib=libc++ -fsanitize=address,undefined -fsanitize-trap=undefined -fno-omit-frame-pointer"
    } else {
        "-DCMAKE_CXX_FLAGS=-stdlib=libc++"
    };

    let mut configure = Command::new("cmake");
    configure
        .arg("-S")
        .arg(repo_root)
        .arg("-B")
        .arg(&build_dir)
        .args([
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_CXX_COMPILER=clang++-19",
            "-DCMAKE_C_COMPILER=clang-19",
            cxx_flags,
            "-DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++ -fuse-ld=lld",
            "-DCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++ -fuse-ld=lld",
            "-DCMAKE_CXX_EXTENSIONS=OFF",
            "-DDLPACK_MDSPAN_BUILD_TESTS=OFF",
            "-DDLPACK_MDSPAN_BUILD_EXAMPLES=OFF",
            "-DDLPACK_MDSPAN_BUILD_MODULE=OFF",
        ]);
    run(&mut configure, "cmake configure");

    let mut build = Command::new("cmake");
    build
        .arg("--build")
        .arg(&build_dir)
        .args(["--target", "dlpack_mdspan_c_static"]);
    if let Some(jobs) = env::var_os("NUM_JOBS") {
        build.arg("--parallel").arg(jobs);
    }
    run(&mut build, "cmake --build (target dlpack_mdspan_c_static)");

    let lib_dir = build_dir.join("ffi");
    if !lib_dir.join("libdlpack_mdspan_c.a").is_file() {
        panic!(
            "dlpack-mdspan-sys: the CMake build did not produce {}",
            lib_dir.join("libdlpack_mdspan_c.a").display()
        );
    }
    lib_dir
}
