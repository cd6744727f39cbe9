// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The benchmark harness: Catch2 declares and selects the benchmarks (TEST_CASE, tags,
// the command line); this header times them.
//
// Why our own timing instead of Catch2's BENCHMARK statistics: this machine has 2 cores
// that are shared with other builds, so its noise comes in bursts of seconds. Catch2 runs
// one benchmark to completion and then the next, so a burst that hits only the baseline
// (or only the candidate) skews their ratio. Here every comparison is a group of
// operations measured *interleaved*: batch of the baseline, batch of each candidate, and
// again, hundreds of times, so every operation sees the same conditions. The batches run
// at every 16-byte placement of the stack across a 4 KiB page in turn (where the stack lies
// moved some operations by up to 2x from process to process: harness.cpp), and each
// operation's figure is the mean of the middle half of its batches, which drops the bursts
// and the worst placements. `--catch-benchmark` runs the same operations through Catch2's
// own BENCHMARK instead (mean and confidence interval in Catch2's report), for a second
// opinion.
//
// `--instructions N` counts instructions instead of timing (bench/callgrind.py runs the
// executable under `valgrind --tool=callgrind --collect-atstart=no`): every operation runs
// N times and 2N times with callgrind's collection switched on by client requests, each
// pass dumped as "dlpm-op <index> <count>"; the difference divided by N is the operation's
// instructions per call, free of the fixed costs (the batch call, the toggles).
#ifndef DLPM_BENCH_HARNESS_HPP
#define DLPM_BENCH_HARNESS_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace bench {

/// The optimizer must assume that unknown code reads and writes `*p` (and everything
/// reachable from it) here: stores into it happen, and nothing can be deleted.
template <class T>
inline void escape(T* p) noexcept {
  asm volatile("" : : "g"(p) : "memory");
}

/// The optimizer must forget what it knows about `v`: it is reloaded after this point, so
/// inputs cannot be constant-folded or hoisted out of the timing loop.
template <class T>
inline void launder(T& v) noexcept {
  asm volatile("" : "+m"(v));
}

/// Heap allocations made so far in this process (global operator new, every form).
std::uint64_t allocations() noexcept;

/// One measured operation: `batch(n)` runs it n times. `note`, when set, replaces the
/// group's note in this operation's row (e.g. the version of a third-party library).
struct operation {
  std::string name;
  std::function<void(std::size_t)> batch;
  std::string note = {};
};

/// An operation from a callable that performs it once (inlined into the batch loop).
template <class F>
operation op(std::string name, F f, std::string note = {}) {
  return operation{std::move(name),
                   [f](std::size_t n) mutable {
                     for (std::size_t i = 0; i < n; ++i) f();
                   },
                   std::move(note)};
}

/// Measures `baseline` and each candidate interleaved (see above) and records one row per
/// operation in `section`: the ns/op (the interquartile mean of the batches), the
/// baseline's name (for the ratio) and the heap allocations per operation, counted over
/// separate calls of that operation alone. `note` is copied into every candidate row that
/// has no note of its own.
void compare(const std::string& section, operation baseline, std::vector<operation> candidates,
             const std::string& note = "");

/// One result row (what compare() records; written as TSV with --tsv). Under
/// --instructions, `ns` holds the operation's index in the callgrind dumps instead.
struct row {
  std::string section;
  std::string name;
  double ns = 0;
  std::string baseline;  // empty: none
  double allocs = 0;
  std::string note;
};
const std::vector<row>& rows();

}  // namespace bench

#endif
