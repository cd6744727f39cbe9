// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The rows of both binaries (`dlpark-compare`, `dlpark-compare-python`): each an operation
//! of one crate, named `row / crate`, timed with the project's Rust benchmark's harness
//! (`dlpack-mdspan-bench`'s library), or called alone for valgrind (`--run NAME N`,
//! `--list`: [`main_with`]).

use dlpack_mdspan_bench::{
    callgrind, calls_per_batch, op, time_interleaved, Op, BATCHES, BATCH_US,
};

/// One row of the table: what is done, by which crate, and the operation (named
/// `row / crate`, the name `--run` and `--list` use).
pub struct Row<'a> {
    pub row: String,
    pub krate: &'static str,
    pub op: Op<'a>,
}

/// A row from a closure that does the job once.
pub fn row<'a>(row: impl Into<String>, krate: &'static str, f: impl FnMut() + 'a) -> Row<'a> {
    let row = row.into();
    let name = format!("{row} / {krate}");
    Row {
        row,
        krate,
        op: op(name, f),
    }
}

/// What a binary does with its arguments: `--run NAME N` calls the operation named NAME
/// (`row / crate`) N times, one batch, the only code callgrind counts under `--instr-atstart=no
/// --collect-atstart=no` (`callgrind::collected_batch`); `--list` prints every operation's
/// name; no arguments time every row ([`print_times`]).
pub fn main_with(rows: &mut [Row<'_>], args: &[String]) {
    match args.first().map(String::as_str) {
        Some("--run") => {
            let (name, n) = (&args[1], args[2].parse::<u64>().expect("N"));
            let r = rows
                .iter_mut()
                .find(|r| r.op.name == *name)
                .expect("no such op");
            callgrind::collected_batch(&mut r.op, n);
        }
        Some("--list") => {
            for r in rows.iter() {
                println!("{}", r.op.name);
            }
        }
        Some(other) => panic!("unknown argument {other} (--run NAME N, --list, or none)"),
        None => print_times(rows),
    }
}

/// Times every row, interleaved, and prints each one's interquartile mean ns per call.
fn print_times(rows: &mut [Row<'_>]) {
    let mut ops: Vec<&mut Op<'_>> = rows.iter_mut().map(|r| &mut r.op).collect();
    for o in ops.iter_mut() {
        (o.batch)(1000); // warm-up
    }
    let calls: Vec<u64> = ops
        .iter_mut()
        .map(|o| calls_per_batch(o, BATCH_US))
        .collect();
    let ns = time_interleaved(&mut ops, &calls, BATCHES);
    let width = rows.iter().map(|r| r.row.len()).max().unwrap_or(0) + 2;
    println!("{:<width$} {:<14} {:>8}", "row", "crate", "ns (IQM)");
    for (r, t) in rows.iter().zip(ns) {
        println!("{:<width$} {:<14} {:>8.1}", r.row, r.krate, t);
    }
}
