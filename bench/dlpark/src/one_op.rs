// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! `--run NAME N`, shared by both binaries: one operation alone, for valgrind.

use std::fmt::Display;

/// With the arguments `--run NAME N`, calls the operation named NAME (`row / crate`) N
/// times and returns true; with any others, returns false and calls nothing.
pub fn run_named<R: Display, F: FnMut() + ?Sized>(
    ops: &mut [(R, &'static str, Box<F>)],
    args: &[String],
) -> bool {
    if args.first().map(String::as_str) != Some("--run") {
        return false;
    }
    let (name, n) = (&args[1], args[2].parse::<u64>().expect("N"));
    let (_, _, f) = ops
        .iter_mut()
        .find(|(r, c, _)| format!("{r} / {c}") == *name)
        .expect("no such op");
    for _ in 0..n {
        f();
    }
    true
}
