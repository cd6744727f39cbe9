// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Builds and links the C facade `libdlpack_mdspan_c.a`, then the C++ standard library it
//! was compiled against. No CMake and no build-dependency crate: the platform's C++20
//! compiler is run directly.
//!
//! Where the library comes from, in this order:
//!
//! - `DLPACK_MDSPAN_LIB_DIR` names a directory: its prebuilt `libdlpack_mdspan_c.a` (a CMake
//!   build's `ffi/` directory, or an installed `lib/`). The C++ runtime it needs is read
//!   from the archive (libc++ symbols live in `std::__1`), or from
//!   `DLPACK_MDSPAN_CXX_STDLIB`.
//! - `DLPACK_MDSPAN_USE_PKG_CONFIG=1`: `pkg-config --libs --static dlpack_mdspan` (an
//!   installed project), whose `Libs.private` names the C++ runtime.
//! - Otherwise the facade is compiled from source. Inside this repository (the crate's
//!   manifest directory is `<root>/rust/dlpack-mdspan-sys` of a checkout that has `ffi/` and
//!   `modules/`) the sources are the repository's own: `ffi/src/*.cpp`, with `ffi/include`
//!   and `modules/dlpack_mdspan/include` on the include path. A packaged crate (no such
//!   checkout around it) compiles `csrc/` instead, the copy of those files that
//!   `sync-sources` generates when the crate is packaged (never committed). The sources are
//!   compiled with `CXX` (a command, possibly with arguments), else `c++`, with
//!   `-std=c++20 -O2 -fPIC` and hidden visibility (as ffi/CMakeLists.txt builds
//!   `dlpack_mdspan_c_static`), plus `CXXFLAGS`, and archived with `AR`, else `ar`. The
//!   DLPack header (1.x, at least 1.3) comes from `DLPACK_INCLUDE_DIR`, else
//!   `/usr/include` or `/usr/local/include`. The C++ runtime linked is libc++ (`c++`,
//!   `c++abi`) when the compiler uses it and libstdc++ (`stdc++`) otherwise; set
//!   `DLPACK_MDSPAN_CXX_STDLIB` to `c++` or `stdc++` to say so explicitly. The script
//!   reruns when a compiled source, or a header the compiler reports it read (`-MMD`),
//!   changes, or a source is added.
//!
//! When the Rust code is built with `-Zsanitizer=address` (nightly), the facade is
//! compiled with `-fsanitize=address` and UndefinedBehaviorSanitizer in trap mode (no
//! runtime needed), so the sanitizers check the C++ side too.
//!
//! Metadata for dependents (`links = "dlpack_mdspan_c"`): `DEP_DLPACK_MDSPAN_C_ROOT` (where
//! the facade sources come from: the repository root, or the packaged `csrc/`),
//! `DEP_DLPACK_MDSPAN_C_INCLUDE` (the directory of `dlpack_mdspan.h`),
//! `DEP_DLPACK_MDSPAN_C_CXX_INCLUDE` (the directory of the C++ core headers),
//! `DEP_DLPACK_MDSPAN_C_DLPACK_INCLUDE` (`DLPACK_INCLUDE_DIR`, when set and compiled here),
//! `DEP_DLPACK_MDSPAN_C_CXX` (the compiler command, when compiled here) and
//! `DEP_DLPACK_MDSPAN_C_CXX_STDLIB` (`c++`, `stdc++`, or empty when unknown).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const LIB_DIR_VAR: &str = "DLPACK_MDSPAN_LIB_DIR";
const PKG_CONFIG_VAR: &str = "DLPACK_MDSPAN_USE_PKG_CONFIG";
const DLPACK_INCLUDE_VAR: &str = "DLPACK_INCLUDE_DIR";
const STDLIB_VAR: &str = "DLPACK_MDSPAN_CXX_STDLIB";
const PKG_CONFIG_NAME: &str = "dlpack_mdspan";
const LIB_NAME: &str = "dlpack_mdspan_c";
/// The DLPack version whose structs the facade and this crate's `#[repr(C)]` mirrors use.
const DLPACK_NEEDED: (u32, u32) = (1, 3);

/// The C++ standard library a static facade needs at link time.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stdlib {
    /// GNU libstdc++ (`-lstdc++`).
    Gnu,
    /// LLVM libc++ and libc++abi (`-lc++ -lc++abi`).
    Llvm,
}

impl Stdlib {
    fn parse(value: &str) -> Stdlib {
        match value.trim() {
            "stdc++" | "libstdc++" => Stdlib::Gnu,
            "c++" | "libc++" => Stdlib::Llvm,
            other => panic!(
                "dlpack-mdspan-sys: {STDLIB_VAR}={other:?} is not a C++ standard library this build knows; \
                 use `stdc++` (GNU libstdc++) or `c++` (LLVM libc++)"
            ),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Stdlib::Gnu => "stdc++",
            Stdlib::Llvm => "c++",
        }
    }

    fn link(self) {
        match self {
            Stdlib::Gnu => println!("cargo:rustc-link-lib=dylib=stdc++"),
            Stdlib::Llvm => {
                println!("cargo:rustc-link-lib=dylib=c++");
                println!("cargo:rustc-link-lib=dylib=c++abi");
            }
        }
    }
}

fn env_var(name: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={name}");
    env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn stdlib_override() -> Option<Stdlib> {
    env_var(STDLIB_VAR).map(|v| Stdlib::parse(&v))
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_CFG_SANITIZE");

    let manifest_dir = PathBuf::from(
        env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo"),
    );
    let sources = Sources::locate(&manifest_dir);
    if let Some(s) = &sources {
        println!("cargo:root={}", s.root.display());
        println!("cargo:include={}", s.c_include.display());
        println!("cargo:cxx_include={}", s.cxx_include.display());
    }

    if let Some(dir) = env_var(LIB_DIR_VAR) {
        let dir = PathBuf::from(dir);
        let archive = dir.join(format!("lib{LIB_NAME}.a"));
        let bytes = fs::read(&archive).unwrap_or_else(|e| {
            panic!(
                "dlpack-mdspan-sys: {LIB_DIR_VAR}={} does not contain a readable lib{LIB_NAME}.a ({e}); build the \
                 CMake target dlpack_mdspan_c_static, or install the project, and point {LIB_DIR_VAR} at its lib \
                 directory",
                dir.display()
            )
        });
        println!("cargo:rerun-if-changed={}", archive.display());
        // libc++ keeps its names in the inline namespace std::__1 (mangled `St3__1`).
        let stdlib = stdlib_override().unwrap_or_else(|| {
            if contains(&bytes, b"St3__1") {
                Stdlib::Llvm
            } else {
                Stdlib::Gnu
            }
        });
        println!("cargo:cxx_stdlib={}", stdlib.name());
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static={LIB_NAME}");
        stdlib.link();
        return;
    }

    if env_var(PKG_CONFIG_VAR).as_deref() == Some("1") {
        link_with_pkg_config();
        return;
    }

    let sources = sources.unwrap_or_else(|| {
        panic!(
            "dlpack-mdspan-sys: no facade sources: {} is neither rust/dlpack-mdspan-sys of a dlpack_mdspan checkout \
             (with ffi/ and modules/) nor a packaged crate with csrc/ (made by sync-sources when the crate is \
             packaged); or set {LIB_DIR_VAR} to a directory that contains a prebuilt lib{LIB_NAME}.a",
            manifest_dir.display()
        )
    });
    build_from_sources(&sources);
}

/// Where the facade's sources are: the repository's own, or the packaged copy in `csrc/`.
struct Sources {
    /// The repository root, or `csrc/`.
    root: PathBuf,
    /// The directory of the translation units (`ffi/src`, `csrc/src`).
    src: PathBuf,
    /// The directory of `dlpack_mdspan.h`.
    c_include: PathBuf,
    /// The directory that holds `dlpack_mdspan/*.hpp`.
    cxx_include: PathBuf,
}

impl Sources {
    /// The repository's sources when `manifest_dir` is `<root>/rust/dlpack-mdspan-sys` of a
    /// checkout with `ffi/` and `modules/`; else the packaged `csrc/`, if there is one.
    fn locate(manifest_dir: &Path) -> Option<Sources> {
        let checkout = fs::canonicalize(manifest_dir.join("..").join("..")).ok();
        let manifest_dir = fs::canonicalize(manifest_dir).ok();
        if let Some(root) = checkout {
            let repository = Sources {
                src: root.join("ffi").join("src"),
                c_include: root.join("ffi").join("include"),
                cxx_include: root.join("modules").join("dlpack_mdspan").join("include"),
                root: root.clone(),
            };
            if manifest_dir == Some(root.join("rust").join("dlpack-mdspan-sys"))
                && repository.complete()
            {
                return Some(repository);
            }
        }
        let manifest_dir = manifest_dir?;
        let csrc = manifest_dir.join("csrc");
        let packaged = Sources {
            src: csrc.join("src"),
            c_include: csrc.join("include"),
            cxx_include: csrc.join("include"),
            root: csrc,
        };
        packaged.complete().then_some(packaged)
    }

    fn complete(&self) -> bool {
        self.src.is_dir()
            && self.c_include.join("dlpack_mdspan.h").is_file()
            && self.cxx_include.join("dlpack_mdspan").is_dir()
    }

    /// The translation units, sorted.
    fn translation_units(&self) -> Vec<PathBuf> {
        let mut units: Vec<PathBuf> = fs::read_dir(&self.src)
            .map(|dir| {
                dir.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
                    .collect()
            })
            .unwrap_or_default();
        units.sort();
        units
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn link_with_pkg_config() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_LIBDIR");
    let pkg_config = env_var("PKG_CONFIG").unwrap_or_else(|| "pkg-config".to_string());
    let output = Command::new(&pkg_config)
        .args(["--libs", "--static", PKG_CONFIG_NAME])
        .output()
        .unwrap_or_else(|e| {
            panic!("dlpack-mdspan-sys: {PKG_CONFIG_VAR}=1 but {pkg_config} could not be run ({e})")
        });
    if !output.status.success() {
        panic!(
            "dlpack-mdspan-sys: `{pkg_config} --libs --static {PKG_CONFIG_NAME}` failed: {}; install the project \
             (its lib/pkgconfig/{PKG_CONFIG_NAME}.pc) and set PKG_CONFIG_PATH, or unset {PKG_CONFIG_VAR}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let mut stdlib = None;
    for flag in String::from_utf8_lossy(&output.stdout).split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            match lib {
                // The static archive, whatever else lies next to it.
                LIB_NAME => println!("cargo:rustc-link-lib=static={LIB_NAME}"),
                "stdc++" => stdlib = Some(Stdlib::Gnu),
                "c++" | "c++abi" => stdlib = Some(Stdlib::Llvm),
                other => println!("cargo:rustc-link-lib={other}"),
            }
        }
    }
    match stdlib_override().or(stdlib) {
        Some(s) => {
            println!("cargo:cxx_stdlib={}", s.name());
            s.link();
        }
        None => println!("cargo:cxx_stdlib="),
    }
}

/// `CXX_<target>`, else `CXX`, else `c++`, split into the program and its arguments.
fn compiler() -> (String, Vec<String>) {
    let target = env::var("TARGET").unwrap_or_default().replace('-', "_");
    let command = env_var(&format!("CXX_{target}"))
        .or_else(|| env_var("CXX"))
        .unwrap_or_else(|| "c++".to_string());
    let mut words = command.split_whitespace().map(str::to_string);
    let program = words.next().expect("a non-empty CXX");
    (program, words.collect())
}

/// The directory holding `dlpack/dlpack.h`, if it was named by `DLPACK_INCLUDE_DIR` (the
/// standard directories need no `-I`, which would reorder the compiler's own search path).
/// Panics when the header is missing or older than [`DLPACK_NEEDED`].
fn dlpack_include() -> Option<PathBuf> {
    let explicit = env_var(DLPACK_INCLUDE_VAR);
    let candidates: Vec<PathBuf> = match &explicit {
        Some(dir) => vec![PathBuf::from(dir)],
        None => vec![
            PathBuf::from("/usr/include"),
            PathBuf::from("/usr/local/include"),
        ],
    };
    let found = candidates
        .iter()
        .find(|dir| dir.join("dlpack").join("dlpack.h").is_file());
    let Some(dir) = found else {
        let searched: Vec<String> = candidates.iter().map(|d| d.display().to_string()).collect();
        panic!(
            "dlpack-mdspan-sys: the DLPack header dlpack/dlpack.h (DLPack {}.{} or a newer 1.x) was not found in {}; \
             install DLPack (Debian: libdlpack-dev, or the header from the DLPack release) and set {DLPACK_INCLUDE_VAR} \
             to the directory that contains dlpack/dlpack.h",
            DLPACK_NEEDED.0,
            DLPACK_NEEDED.1,
            searched.join(", ")
        );
    };
    let header = dir.join("dlpack").join("dlpack.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let text = fs::read_to_string(&header)
        .unwrap_or_else(|e| panic!("dlpack-mdspan-sys: cannot read {} ({e})", header.display()));
    let define = |name: &str| -> Option<u32> {
        text.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("#define") && words.next() == Some(name))
                .then(|| words.next()?.parse().ok())
                .flatten()
        })
    };
    let version = (
        define("DLPACK_MAJOR_VERSION").unwrap_or(0),
        define("DLPACK_MINOR_VERSION").unwrap_or(0),
    );
    if version.0 != DLPACK_NEEDED.0 || version.1 < DLPACK_NEEDED.1 {
        panic!(
            "dlpack-mdspan-sys: {} is DLPack {}.{}, but the facade and this crate's structs need DLPack {}.{} or a \
             newer 1.x (DLManagedTensorVersioned, the 1.3 dtype codes and flags); point {DLPACK_INCLUDE_VAR} at a \
             directory with a newer dlpack/dlpack.h",
            header.display(),
            version.0,
            version.1,
            DLPACK_NEEDED.0,
            DLPACK_NEEDED.1
        );
    }
    explicit.is_some().then(|| dir.clone())
}

/// What the compiler is: (`__clang__` defined, its C++ standard library), from its
/// predefined macros after including a standard header. `None` if the probe fails.
fn probe(program: &str, args: &[String], out_dir: &Path) -> Option<(bool, Option<Stdlib>)> {
    let source = out_dir.join("dlpm_stdlib_probe.cpp");
    fs::write(&source, "#include <cstddef>\n").ok()?;
    let output = Command::new(program)
        .args(args)
        .args(["-std=c++20", "-E", "-dM"])
        .arg(&source)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let macros = String::from_utf8_lossy(&output.stdout);
    let defined = |name: &str| {
        macros
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(name))
    };
    let stdlib = if defined("_LIBCPP_VERSION") {
        Some(Stdlib::Llvm)
    } else if defined("__GLIBCXX__") {
        Some(Stdlib::Gnu)
    } else {
        None
    };
    Some((defined("__clang__"), stdlib))
}

fn run(command: &mut Command, what: &str) {
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("dlpack-mdspan-sys: could not start {what}: {e}"));
    if !status.success() {
        panic!("dlpack-mdspan-sys: {what} failed ({status}); see the output above");
    }
}

fn build_from_sources(sources: &Sources) {
    let units = sources.translation_units();
    if units.is_empty() {
        panic!(
            "dlpack-mdspan-sys: no .cpp file in {}",
            sources.src.display()
        );
    }
    // A source added to (or removed from) the directory; each compiled file and each header it
    // includes is reported after compiling, from the compiler's dependency files.
    println!("cargo:rerun-if-changed={}", sources.src.display());

    let dlpack_dir = dlpack_include();
    if let Some(dir) = &dlpack_dir {
        println!("cargo:dlpack_include={}", dir.display());
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let (program, mut args) = compiler();
    if let Some(flags) = env_var("CXXFLAGS") {
        args.extend(flags.split_whitespace().map(str::to_string));
    }
    let probed = probe(&program, &args, &out_dir);
    let is_clang = probed.is_some_and(|(clang, _)| clang);
    let stdlib = stdlib_override()
        .or(probed.and_then(|(_, s)| s))
        .unwrap_or_else(|| {
            if args.iter().any(|a| a == "-stdlib=libc++") {
                Stdlib::Llvm
            } else {
                Stdlib::Gnu
            }
        });
    let command_line = std::iter::once(program.as_str())
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    println!("cargo:cxx={command_line}");
    println!("cargo:cxx_stdlib={}", stdlib.name());

    // Instrument the C++ code when the Rust code is (RUSTFLAGS=-Zsanitizer=address): the
    // Rust toolchain links the AddressSanitizer runtime. UndefinedBehaviorSanitizer runs in
    // trap mode, which needs no runtime (Rust links none); its vptr check needs one and
    // is left out, as ffi/CMakeLists.txt does for the facade.
    let asan = env::var("CARGO_CFG_SANITIZE")
        .map(|s| s.split(',').any(|s| s == "address"))
        .unwrap_or(false);
    let mut flags: Vec<&str> = vec![
        "-std=c++20",
        "-O2",
        "-fPIC",
        "-DNDEBUG",
        "-fvisibility=hidden",
        "-fvisibility-inlines-hidden",
    ];
    if asan {
        flags.extend([
            "-fsanitize=address,undefined",
            "-fno-sanitize=vptr",
            "-fno-omit-frame-pointer",
        ]);
        flags.push(if is_clang {
            "-fsanitize-trap=undefined"
        } else {
            "-fsanitize-undefined-trap-on-error"
        });
    }

    // One compiler process per translation unit, in parallel. `-MMD` writes the headers
    // each one read (the system's, dlpack.h among them, left out) to a dependency file.
    let mut includes = vec![&sources.c_include];
    if sources.cxx_include != sources.c_include {
        includes.push(&sources.cxx_include);
    }
    let jobs: Vec<_> = units
        .iter()
        .map(|source| {
            let stem = source
                .file_stem()
                .expect("a source file name")
                .to_string_lossy()
                .into_owned();
            let object = out_dir.join(format!("{stem}.o"));
            let depfile = out_dir.join(format!("{stem}.d"));
            let mut compile = Command::new(&program);
            compile.args(&args).args(&flags);
            for dir in &includes {
                compile.arg("-I").arg(dir);
            }
            if let Some(dir) = &dlpack_dir {
                compile.arg("-I").arg(dir);
            }
            compile.arg("-MMD").arg("-MF").arg(&depfile);
            compile.arg("-c").arg(source).arg("-o").arg(&object);
            let what = format!("{command_line} (compiling {})", source.display());
            let handle = std::thread::spawn(move || run(&mut compile, &what));
            (object, depfile, handle)
        })
        .collect();
    let mut objects = Vec::new();
    for (object, depfile, handle) in jobs {
        if handle.join().is_err() {
            panic!("dlpack-mdspan-sys: compiling the facade failed; see the output above");
        }
        for file in dependencies(&depfile) {
            println!("cargo:rerun-if-changed={}", file.display());
        }
        objects.push(object);
    }

    let archive = out_dir.join(format!("lib{LIB_NAME}.a"));
    let _ = fs::remove_file(&archive);
    let ar = env_var("AR").unwrap_or_else(|| "ar".to_string());
    let mut ar_words = ar.split_whitespace();
    let mut archive_cmd = Command::new(ar_words.next().expect("a non-empty AR"));
    archive_cmd
        .args(ar_words)
        .arg("crs")
        .arg(&archive)
        .args(&objects);
    run(&mut archive_cmd, &format!("{ar} crs"));

    println!("cargo:rustc-link-search=native={}", out_dir.display());
    println!("cargo:rustc-link-lib=static={LIB_NAME}");
    stdlib.link();
}

/// The files a Make-style dependency file (`-MMD -MF`) names as prerequisites: the source
/// and every non-system header it included. Panics if the compiler wrote none.
fn dependencies(depfile: &Path) -> Vec<PathBuf> {
    let text = fs::read_to_string(depfile).unwrap_or_else(|e| {
        panic!(
            "dlpack-mdspan-sys: the compiler wrote no dependency file {} ({e}); it must accept -MMD -MF",
            depfile.display()
        )
    });
    // `target: prerequisite ... \<newline> prerequisite ...`; a space inside a name is `\ `.
    let rule = text.replace("\\\n", " ").replace("\\\r\n", " ");
    let prerequisites = rule.split_once(": ").map_or("", |(_, p)| p);
    let mut files = Vec::new();
    let mut word = String::new();
    let mut chars = prerequisites.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => word.push(chars.next().expect("peeked")),
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    files.push(PathBuf::from(std::mem::take(&mut word)));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        files.push(PathBuf::from(word));
    }
    files
}
