// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The timing of the Rust benchmarks: this crate's binary (`scripts/bench`) and
//! `bench/dlpark`'s comparison with dlpark (both of its binaries) measure with it, the Rust
//! form of the C++ suite's harness (`bench/cpp/harness.hpp`).
//!
//! The operations of one comparison are measured interleaved, batch by batch, each round
//! starting with another one, so that they see the same machine load. Each batch runs with
//! its frames at one of the 256 16-byte placements of the stack across a 4 KiB page, every
//! operation of a round at the same one, the rounds visiting every placement in turn: where
//! the stack lies can decide an operation's time (the ndarray view gave 1.06x its baseline
//! with the stack at some places and 1.13x at others, fixed for a process by where the
//! kernel put its stack; docs/performance.md, "Where the stack lies"). Each figure is the
//! interquartile mean of its batches' ns per call: the placements mixed in proportion, the
//! fastest and slowest quarters (bursts of load, the worst placements) dropped.

use std::hint::black_box;
use std::time::Instant;

/// The batches each operation runs ([`time_interleaved`]): more than the 256 placements, so
/// that each is visited at least once.
pub const BATCHES: usize = 301;

/// How long a batch runs at least, in microseconds ([`calls_per_batch`]).
pub const BATCH_US: f64 = 40.0;

/// One measured operation: `batch(n)` runs it n times.
pub struct Op<'a> {
    pub name: String,
    pub batch: Box<dyn FnMut(u64) + 'a>,
}

/// An operation from a closure that performs it once, inlined into the batch's loop (one
/// dynamic call per batch, not per call).
pub fn op<'a>(name: impl Into<String>, mut f: impl FnMut() + 'a) -> Op<'a> {
    Op {
        name: name.into(),
        batch: Box::new(move |n| {
            for _ in 0..n {
                f();
            }
        }),
    }
}

/// The seconds of one batch of `n` calls, where the stack lies now.
#[inline(never)]
pub fn seconds(o: &mut Op<'_>, n: u64) -> f64 {
    let t0 = Instant::now();
    (o.batch)(n);
    t0.elapsed().as_secs_f64()
}

/// The calls a batch of `o` makes: doubled from 1 until the batch takes `batch_us`
/// microseconds (at most 2^30).
pub fn calls_per_batch(o: &mut Op<'_>, batch_us: f64) -> u64 {
    let mut n = 1u64;
    while seconds(o, n) < batch_us * 1e-6 && n < (1 << 30) {
        n *= 2;
    }
    n
}

const STACK_PLACEMENTS: usize = 4096 / 16;

/// One batch of `n` calls, its frames `PAD` bytes further down the stack (the pad is
/// reserved, never written). Rust has no `alloca`: each placement is a frame of its own size.
#[inline(never)]
fn seconds_at<const PAD: usize>(o: &mut Op<'_>, n: u64) -> f64 {
    let pad = std::mem::MaybeUninit::<[u8; PAD]>::uninit();
    black_box(&pad);
    seconds(o, n)
}

type Timed = for<'o, 'a> fn(&'o mut Op<'a>, u64) -> f64;

/// The sixteen placements from `$base` bytes down, 16 bytes apart.
macro_rules! sixteen_placements {
    ($base:literal) => {
        [
            seconds_at::<{ $base }>,
            seconds_at::<{ $base + 16 }>,
            seconds_at::<{ $base + 32 }>,
            seconds_at::<{ $base + 48 }>,
            seconds_at::<{ $base + 64 }>,
            seconds_at::<{ $base + 80 }>,
            seconds_at::<{ $base + 96 }>,
            seconds_at::<{ $base + 112 }>,
            seconds_at::<{ $base + 128 }>,
            seconds_at::<{ $base + 144 }>,
            seconds_at::<{ $base + 160 }>,
            seconds_at::<{ $base + 176 }>,
            seconds_at::<{ $base + 192 }>,
            seconds_at::<{ $base + 208 }>,
            seconds_at::<{ $base + 224 }>,
            seconds_at::<{ $base + 240 }>,
        ]
    };
}

static PLACED: [[Timed; 16]; 16] = [
    sixteen_placements!(0),
    sixteen_placements!(256),
    sixteen_placements!(512),
    sixteen_placements!(768),
    sixteen_placements!(1024),
    sixteen_placements!(1280),
    sixteen_placements!(1536),
    sixteen_placements!(1792),
    sixteen_placements!(2048),
    sixteen_placements!(2304),
    sixteen_placements!(2560),
    sixteen_placements!(2816),
    sixteen_placements!(3072),
    sixteen_placements!(3328),
    sixteen_placements!(3584),
    sixteen_placements!(3840),
];

/// The placement of batch `b`: consecutive batches far apart in the page (157 is odd, so
/// the first 256 batches visit every placement once).
fn placement_of(b: usize) -> usize {
    b * 157 % STACK_PLACEMENTS
}

/// The mean of the middle half (the interquartile mean).
fn interquartile_mean(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let (lo, hi) = (v.len() / 4, v.len() - v.len() / 4);
    v[lo..hi].iter().sum::<f64>() / (hi - lo) as f64
}

/// Each operation's ns per call: `batches` rounds of one batch of `calls[i]` calls of
/// `ops[i]`, interleaved, at the round's placement of the stack; the interquartile mean of
/// each one's batches.
pub fn time_interleaved(ops: &mut [&mut Op<'_>], calls: &[u64], batches: usize) -> Vec<f64> {
    assert_eq!(ops.len(), calls.len(), "one batch size per operation");
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(batches); ops.len()];
    for b in 0..batches {
        let placed = PLACED[placement_of(b) / 16][placement_of(b) % 16]; // the same for all
        for j in 0..ops.len() {
            let i = (j + b) % ops.len(); // rotate who goes first
            samples[i].push(placed(ops[i], calls[i]) * 1e9 / calls[i] as f64);
        }
    }
    samples.into_iter().map(interquartile_mean).collect()
}

/// Callgrind's client requests, with which a benchmark counts the instructions of its
/// operations alone: written here in inline assembly for x86-64, no dependency; elsewhere,
/// and outside valgrind, they do nothing.
pub mod callgrind {
    use super::Op;

    /// Valgrind's client request: the magic instruction sequence of valgrind.h for amd64
    /// (four rotations of rdi by 128 bits in all, a no-op, then `xchg rbx, rbx`), with rax
    /// pointing at the request and its five arguments. On a real CPU it does nothing.
    #[cfg(target_arch = "x86_64")]
    pub fn client_request(request: usize, arg1: usize) {
        let args: [usize; 6] = [request, arg1, 0, 0, 0, 0];
        // SAFETY: the sequence leaves every register as it was except rdx (declared);
        // valgrind reads `args` (live for the call) when it runs the program, nothing
        // otherwise.
        unsafe {
            std::arch::asm!(
                "rol rdi, 3",
                "rol rdi, 13",
                "rol rdi, 61",
                "rol rdi, 51",
                "xchg rbx, rbx",
                in("rax") args.as_ptr(),
                inout("rdx") 0usize => _,
                options(nostack),
            );
        }
    }

    /// Valgrind's client request: none on this architecture.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn client_request(_request: usize, _arg1: usize) {}

    /// callgrind.h's requests: VG_USERREQ_TOOL_BASE('C', 'T') + 1 to 4.
    const BASE: usize = ((b'C' as usize) << 24) | ((b'T' as usize) << 16);
    pub const ZERO_STATS: usize = BASE + 1;
    pub const TOGGLE_COLLECT: usize = BASE + 2;
    pub const DUMP_STATS_AT: usize = BASE + 3;
    pub const START_INSTRUMENTATION: usize = BASE + 4;

    /// One batch of `n` calls of `o`, the only code callgrind counts when the program runs
    /// under `valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no`: the
    /// instrumentation starts here (the start-up before it runs uninstrumented, much
    /// faster, and uncounted) and collection is on for the batch alone. Under
    /// `--collect-atstart=no` alone the instrumentation is on already and its start does
    /// nothing (the C++ protocol's passes: `ZERO_STATS`, this, `DUMP_STATS_AT`). Under another
    /// tool, or none, it runs the batch.
    pub fn collected_batch(o: &mut Op<'_>, n: u64) {
        client_request(START_INSTRUMENTATION, 0);
        client_request(TOGGLE_COLLECT, 0);
        (o.batch)(n);
        client_request(TOGGLE_COLLECT, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rounds_visit_every_placement() {
        let mut seen = [false; STACK_PLACEMENTS];
        for b in 0..STACK_PLACEMENTS {
            seen[placement_of(b)] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn the_interquartile_mean_drops_the_outer_quarters() {
        assert_eq!(
            interquartile_mean(vec![100.0, 2.0, 1.0, 3.0, 0.0, 2.0, 2.0, 2.0]),
            2.0
        );
    }

    #[test]
    fn each_operation_runs_its_own_calls_every_batch() {
        let (mut a, mut b) = (0u64, 0u64);
        {
            let mut x = op("a", || a += 1);
            let mut y = op("b", || b += 1);
            let ns = time_interleaved(&mut [&mut x, &mut y], &[3, 5], 7);
            assert_eq!(ns.len(), 2);
            assert!(ns.iter().all(|t| t.is_finite() && *t >= 0.0));
        }
        assert_eq!((a, b), (21, 35));
    }
}
