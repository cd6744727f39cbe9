// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Builds and links the C facade `libdlpack_mdspan_c.a` and its C++ runtime: compiled by the
//! `cc` crate, found by the `pkg-config` crate (`DLPACK_MDSPAN_USE_PKG_CONFIG=1`), or prebuilt
//! (`DLPACK_MDSPAN_LIB_DIR`). What stays here is this project's own: where the sources are,
//! the DLPack >= 1.3 header check, the C++ runtime, the sanitizer flags and the metadata
//! for dependents (docs/rust.md has the details).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

const LIB_DIR_VAR: &str = "DLPACK_MDSPAN_LIB_DIR";
const PKG_CONFIG_VAR: &str = "DLPACK_MDSPAN_USE_PKG_CONFIG";
const DLPACK_INCLUDE_VAR: &str = "DLPACK_INCLUDE_DIR";
const STDLIB_VAR: &str = "DLPACK_MDSPAN_CXX_STDLIB";
const LIB_NAME: &str = "dlpack_mdspan_c";
/// The DLPack version whose structs the facade and this crate's `#[repr(C)]` mirrors use.
const DLPACK_NEEDED: (u32, u32) = (1, 3);

fn env_var(name: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={name}");
    env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Links the C++ runtime: `stdc++` (GNU, shared), `c++` (LLVM's libc++ with libc++abi, their
/// static archives, found by `compilers`) or `c++-shared`. libc++ is linked statically because
/// its shared library brings LLVM's `libunwind.so.1`, whose `_Unwind_*` then serve the whole
/// process: a Python extension built on this crate, imported with `RTLD_GLOBAL`, made the
/// next C++ exception inside PyTorch abort. A cdylib keeps the archives' symbols to itself.
/// Sanitizer builds keep the shared runtime (its `operator new` is the sanitizer's).
fn link_stdlib(name: &str, compilers: &[cc::Tool]) {
    let sanitized = env::var("CARGO_CFG_SANITIZE").is_ok_and(|s| !s.is_empty());
    let name = if name == "c++" && sanitized {
        "c++-shared"
    } else {
        name
    };
    println!("cargo:cxx_stdlib={name}");
    match name {
        "stdc++" => println!("cargo:rustc-link-lib=dylib=stdc++"),
        "c++-shared" => {
            println!("cargo:rustc-link-lib=dylib=c++\ncargo:rustc-link-lib=dylib=c++abi")
        }
        "c++" => {
            let libcxx = archive_dir("libc++.a", compilers);
            println!("cargo:rustc-link-search=native={}", libcxx.display());
            println!("cargo:rustc-link-lib=static:-bundle=c++");
            // Debian's libc++.a carries libc++abi's objects; elsewhere they are libc++abi.a,
            // looked for beside libc++.a first.
            let beside = libcxx.join("libc++abi.a").is_file().then(|| libcxx.clone());
            if let Some(abi) = beside.or_else(|| find_archive("libc++abi.a", compilers)) {
                if abi != libcxx {
                    println!("cargo:rustc-link-search=native={}", abi.display());
                }
                println!("cargo:rustc-link-lib=static:-bundle=c++abi");
            }
        }
        _ => {}
    }
}

/// The C++ compiler `cc` would use (`CXX_<target>`, `CXX`, else `c++`).
fn default_compiler() -> cc::Tool {
    cc::Build::new().cpp(true).get_compiler()
}

/// The directory of the static archive `file`, as the first of `compilers` that knows it
/// says (`-print-file-name`), or clang's.
fn find_archive(file: &str, compilers: &[cc::Tool]) -> Option<PathBuf> {
    let clang = cc::Build::new()
        .cpp(true)
        .compiler("clang++")
        .get_compiler();
    let found = compilers.iter().chain([&clang]).find_map(|tool| {
        let out = tool
            .to_command()
            .arg(format!("-print-file-name={file}"))
            .output()
            .ok()?;
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let path = fs::canonicalize(path.is_absolute().then_some(path)?).ok()?;
        Some(path.parent()?.to_path_buf())
    });
    found
}

fn archive_dir(file: &str, compilers: &[cc::Tool]) -> PathBuf {
    find_archive(file, compilers).unwrap_or_else(|| {
        panic!(
            "dlpack-mdspan-sys: the facade uses libc++, which this crate links statically, but no compiler knows \
             {file} (`clang++ -print-file-name={file}`); install libc++'s static archives (Debian: libc++-dev and \
             libc++abi-dev; Fedora: libcxx-static), or set {STDLIB_VAR}=c++-shared to link the shared libc++, \
             which loads LLVM's libunwind.so.1 into the process (a Python extension imported with RTLD_GLOBAL then \
             breaks C++ exceptions in PyTorch)"
        )
    })
}

fn stdlib_override() -> Option<&'static str> {
    env_var(STDLIB_VAR).map(|v| match v.trim() {
        "stdc++" | "libstdc++" => "stdc++",
        "c++" | "libc++" => "c++",
        "c++-shared" | "libc++-shared" => "c++-shared",
        other => panic!(
            "dlpack-mdspan-sys: {STDLIB_VAR}={other:?} is not a C++ standard library this build knows; use \
             `stdc++` (GNU libstdc++), `c++` (LLVM libc++, linked statically) or `c++-shared`"
        ),
    })
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let sources = Sources::locate(&manifest_dir);
    if let Some(s) = &sources {
        println!("cargo:root={}", s.root.display());
        println!("cargo:include={}", s.c_include.display());
        println!("cargo:cxx_include={}", s.cxx_include.display());
    }
    if let Some(dir) = env_var(LIB_DIR_VAR) {
        let archive = Path::new(&dir).join(format!("lib{LIB_NAME}.a"));
        let bytes = fs::read(&archive).unwrap_or_else(|e| {
            panic!(
                "dlpack-mdspan-sys: {LIB_DIR_VAR}={dir} has no readable lib{LIB_NAME}.a ({e}): point it at the \
                 lib directory of an installed project or a CMake build (target dlpack_mdspan_c_static)"
            )
        });
        println!("cargo:rerun-if-changed={}", archive.display());
        println!("cargo:rustc-link-search=native={dir}\ncargo:rustc-link-lib=static={LIB_NAME}");
        // libc++ keeps its names in the inline namespace std::__1 (mangled `St3__1`).
        let libcxx = bytes.windows(6).any(|w| w == b"St3__1");
        link_stdlib(
            stdlib_override().unwrap_or(if libcxx { "c++" } else { "stdc++" }),
            &[default_compiler()],
        );
    } else if env_var(PKG_CONFIG_VAR).as_deref() == Some("1") {
        let lib = pkg_config::Config::new()
            .statik(true)
            .cargo_metadata(false)
            .probe("dlpack_mdspan")
            .unwrap_or_else(|e| {
                panic!(
                    "dlpack-mdspan-sys: {PKG_CONFIG_VAR}=1 but pkg-config cannot use dlpack_mdspan: {e}; install the \
                     project (its lib/pkgconfig/dlpack_mdspan.pc) and set PKG_CONFIG_PATH, or unset {PKG_CONFIG_VAR}"
                )
            });
        let mut stdlib = "";
        lib.link_paths
            .iter()
            .for_each(|d| println!("cargo:rustc-link-search=native={}", d.display()));
        for name in &lib.libs {
            match name.as_str() {
                LIB_NAME => println!("cargo:rustc-link-lib=static={LIB_NAME}"), // whatever lies beside it
                "stdc++" => stdlib = "stdc++",
                "c++" | "c++abi" => stdlib = "c++",
                other => println!("cargo:rustc-link-lib={other}"),
            }
        }
        link_stdlib(stdlib_override().unwrap_or(stdlib), &[default_compiler()]);
    } else {
        let sources = sources.unwrap_or_else(|| {
            panic!(
                "dlpack-mdspan-sys: no facade sources: {} is neither rust/dlpack-mdspan-sys of a checkout (with \
                 ffi/, modules/) nor a crate packaged with csrc/; or set {LIB_DIR_VAR} (a prebuilt lib{LIB_NAME}.a)",
                manifest_dir.display()
            )
        });
        compile(&sources);
    }
}

/// Where the facade's sources are: the repository's own, or the packaged `csrc/`.
struct Sources {
    root: PathBuf,
    src: PathBuf,
    c_include: PathBuf,
    cxx_include: PathBuf,
}

impl Sources {
    /// The repository's sources when `manifest_dir` is `<root>/rust/dlpack-mdspan-sys` of a
    /// checkout with `ffi/` and `modules/`; else the packaged `csrc/`, if there is one.
    fn locate(manifest_dir: &Path) -> Option<Sources> {
        let dir = fs::canonicalize(manifest_dir).ok()?;
        let root = dir.parent()?.parent()?;
        let in_repository = root.join("rust/dlpack-mdspan-sys") == dir;
        let dirs = ["ffi/src", "ffi/include", "modules/dlpack_mdspan/include"];
        let repository = in_repository.then(|| Sources::at(root, dirs));
        let packaged = Sources::at(&dir.join("csrc"), ["src", "include", "include"]);
        repository
            .into_iter()
            .chain([packaged])
            .find(Sources::complete)
    }

    /// `root` and, under it, the translation units' directory and the C and C++ includes.
    fn at(root: &Path, dirs: [&str; 3]) -> Sources {
        let [src, c_include, cxx_include] = dirs.map(|d| root.join(d));
        Sources {
            root: root.into(),
            src,
            c_include,
            cxx_include,
        }
    }

    fn complete(&self) -> bool {
        self.src.is_dir()
            && self.c_include.join("dlpack_mdspan.h").is_file()
            && self.cxx_include.join("dlpack_mdspan").is_dir()
    }
}

/// The directory of `dlpack/dlpack.h` when `DLPACK_INCLUDE_DIR` names it (the standard
/// directories need no `-I`). Panics when the header is missing or older than 1.3.
fn dlpack_include() -> Option<PathBuf> {
    let explicit = env_var(DLPACK_INCLUDE_VAR).map(PathBuf::from);
    let standard = || vec!["/usr/include".into(), "/usr/local/include".into()];
    let candidates: Vec<PathBuf> = explicit.clone().map_or_else(standard, |d| vec![d]);
    let header = candidates
        .iter()
        .map(|d| d.join("dlpack/dlpack.h"))
        .find(|h| h.is_file());
    let Some(header) = header else {
        panic!(
            "dlpack-mdspan-sys: the DLPack header dlpack/dlpack.h (DLPack {}.{} or a newer 1.x) was not found in \
             {candidates:?}; install DLPack (Debian: libdlpack-dev, or the header from the DLPack release) and set \
             {DLPACK_INCLUDE_VAR} to the directory that contains dlpack/dlpack.h",
            DLPACK_NEEDED.0, DLPACK_NEEDED.1
        );
    };
    println!("cargo:rerun-if-changed={}", header.display());
    let text = fs::read_to_string(&header)
        .unwrap_or_else(|e| panic!("cannot read {} ({e})", header.display()));
    let define = |name: &str| -> u32 {
        text.lines()
            .find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("#define") && words.next() == Some(name))
                    .then(|| words.next()?.parse().ok())?
            })
            .unwrap_or(0)
    };
    let major = define("DLPACK_MAJOR_VERSION");
    let minor = define("DLPACK_MINOR_VERSION");
    if major != DLPACK_NEEDED.0 || minor < DLPACK_NEEDED.1 {
        panic!(
            "dlpack-mdspan-sys: {} is DLPack {}.{}, but the facade and this crate's structs need DLPack {}.{} or a \
             newer 1.x (DLManagedTensorVersioned, the 1.3 dtype codes and flags); point {DLPACK_INCLUDE_VAR} at a \
             directory with a newer dlpack/dlpack.h",
            header.display(), major, minor, DLPACK_NEEDED.0, DLPACK_NEEDED.1
        );
    }
    explicit
}

/// The C++ runtime `compiler` uses, from its predefined macros (`None` if it cannot say).
fn compiler_stdlib(compiler: &cc::Tool) -> Option<&'static str> {
    let probe = PathBuf::from(env::var_os("OUT_DIR")?).join("dlpm_stdlib_probe.cpp");
    fs::write(&probe, "#include <cstddef>\n").ok()?;
    let out = compiler
        .to_command()
        .args(["-E", "-dM"])
        .arg(&probe)
        .output()
        .ok()?;
    let macros = String::from_utf8_lossy(&out.stdout);
    [(" _LIBCPP_VERSION ", "c++"), (" __GLIBCXX__ ", "stdc++")]
        .into_iter()
        .find_map(|(name, stdlib)| macros.contains(name).then_some(stdlib))
}

fn compile(sources: &Sources) {
    let dlpack_dir = dlpack_include();
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++20")
        .opt_level(2)
        .pic(true)
        .define("NDEBUG", None)
        .flag("-fvisibility=hidden")
        .flag("-fvisibility-inlines-hidden")
        .warnings(false)
        .cpp_link_stdlib(None) // linked below, as the compiler's own runtime
        .include(&sources.c_include)
        .include(&sources.cxx_include);
    if let Some(dir) = &dlpack_dir {
        build.include(dir);
        println!("cargo:dlpack_include={}", dir.display());
    }
    // Instrumented like the Rust code (RUSTFLAGS=-Zsanitizer=address, whose runtime Rust
    // links); UBSan in trap mode needs none, and its vptr check (which does) is left out.
    println!("cargo:rerun-if-env-changed=CARGO_CFG_SANITIZE");
    if env::var("CARGO_CFG_SANITIZE").is_ok_and(|s| s.split(',').any(|s| s == "address")) {
        let trap = if build.get_compiler().is_like_clang() {
            "-fsanitize-trap=undefined"
        } else {
            "-fsanitize-undefined-trap-on-error"
        };
        let flags = [
            "-fsanitize=address,undefined",
            "-fno-sanitize=vptr",
            "-fno-omit-frame-pointer",
            trap,
        ];
        flags.into_iter().for_each(|f| _ = build.flag(f));
    }
    let entries = fs::read_dir(&sources.src).into_iter().flatten().flatten();
    let mut units: Vec<_> = entries.map(|e| e.path()).collect();
    units.retain(|p| p.extension() == Some("cpp".as_ref()));
    units.sort();
    if units.is_empty() {
        panic!("dlpack-mdspan-sys: no .cpp file in {:?}", sources.src);
    }
    build.files(&units);
    // Cargo rescans these directories, headers included, for any change.
    for dir in [&sources.src, &sources.c_include, &sources.cxx_include] {
        println!("cargo:rerun-if-changed={}", dir.display());
    }

    let target = env::var("TARGET").unwrap_or_default().replace('-', "_");
    let command = env_var(&format!("CXX_{target}"))
        .or_else(|| env_var("CXX"))
        .unwrap_or_else(|| "c++".into());
    println!("cargo:cxx={}", command.trim());
    let stdlib = stdlib_override().or_else(|| compiler_stdlib(&build.get_compiler()));
    let stdlib = stdlib.unwrap_or("stdc++");
    build.compile(LIB_NAME);
    link_stdlib(stdlib, &[build.get_compiler()]);
}
