// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! A deleter that throws a C++ exception breaks the DLPack contract. The facade must end
//! the process with a message naming the exception, never let it unwind through Rust
//! frames (undefined behaviour: `dlpm_managed_delete` is an `extern "C"` function without
//! unwinding). Each case runs in a child process: this test binary, re-run with
//! `--exact <child test>` and an environment variable that turns the child test on.

use dlpack_mdspan::{sys, ManagedTensor};
use dlpack_mdspan_cxx_tests::throwing_tensor_from_cxx;

/// Set (to any value) in the child process only.
const CHILD_VAR: &str = "DLPM_THROWING_DELETER_CHILD";

fn in_child() -> bool {
    std::env::var_os(CHILD_VAR).is_some()
}

/// Child: the safe crate drops a tensor whose deleter throws.
#[test]
fn throwing_deleter_child_drop() {
    if !in_child() {
        return;
    }
    let raw = throwing_tensor_from_cxx();
    assert!(!raw.is_null());
    // SAFETY: raw is a live DLPack 1.x tensor whose ownership moves to Rust.
    let t = unsafe { ManagedTensor::from_raw(raw) }.expect("a valid tensor");
    assert_eq!(
        t.view::<f32>().unwrap().as_slice().unwrap(),
        &[1.0, 2.0, 3.0, 4.0]
    );
    drop(t);
    eprintln!("dlpm test: still running after the drop");
    std::process::exit(0);
}

/// Child: the raw bindings delete a tensor whose deleter throws.
#[test]
fn throwing_deleter_child_sys() {
    if !in_child() {
        return;
    }
    let raw = throwing_tensor_from_cxx();
    assert!(!raw.is_null());
    // SAFETY: raw is a live tensor we own; deleted once, here.
    unsafe { sys::dlpm_managed_delete(raw) };
    eprintln!("dlpm test: still running after dlpm_managed_delete");
    std::process::exit(0);
}

/// Runs `child` in a child process and checks that it was ended by SIGABRT with the
/// facade's message, without reaching the code after the delete.
#[cfg(unix)]
fn assert_child_aborts(child: &str) {
    use std::os::unix::process::ExitStatusExt;
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", child, "--nocapture", "--test-threads=1"])
        .env(CHILD_VAR, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.signal(),
        Some(6),
        "{child}: expected SIGABRT; status {:?}, stderr:\n{stderr}",
        out.status
    );
    assert!(
        stderr.contains("deleter threw a C++ exception"),
        "{child}: stderr:\n{stderr}"
    );
    assert!(
        stderr.contains("boom from a C++ deleter"),
        "{child}: stderr:\n{stderr}"
    );
    assert!(
        !stderr.contains("still running"),
        "{child}: stderr:\n{stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "{child}: the exception must not reach Rust; stderr:\n{stderr}"
    );
}

#[test]
#[cfg(unix)]
fn throwing_deleter_aborts_when_a_managed_tensor_is_dropped() {
    assert_child_aborts("throwing_deleter_child_drop");
}

#[test]
#[cfg(unix)]
fn throwing_deleter_aborts_in_dlpm_managed_delete() {
    assert_child_aborts("throwing_deleter_child_sys");
}
