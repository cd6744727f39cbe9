// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Catch2's runner with the benchmark options, the interleaved timing, the allocation
// counter (global operator new replaced in this executable) and the result table.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "harness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <new>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define DLPM_BENCH_HAVE_CALLGRIND 1
#else
#define DLPM_BENCH_HAVE_CALLGRIND 0
#endif

// ---- allocation counter ---------------------------------------------------------------
// Every form of the global operator new counts one allocation; the benchmarks are
// single-threaded, so a plain counter is enough. Static libraries linked into this
// executable (the C facade) allocate through these too.
namespace {
std::uint64_t g_allocations = 0;

void* counted_malloc(std::size_t n) noexcept {
  ++g_allocations;
  return std::malloc(n == 0 ? 1 : n);
}
void* counted_aligned(std::size_t n, std::align_val_t a) noexcept {
  ++g_allocations;
  const auto align = static_cast<std::size_t>(a);
  const std::size_t size = (n == 0 ? align : (n + align - 1) / align * align);
  return std::aligned_alloc(align, size);
}
}  // namespace

void* operator new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = counted_aligned(n, a)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  if (void* p = counted_aligned(n, a)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_aligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace bench {

std::uint64_t allocations() noexcept { return g_allocations; }

namespace {

struct options {
  bool smoke = false;           // one call of everything: keeps the benchmarks compiling and running
  bool catch_benchmark = false; // Catch2's BENCHMARK statistics instead of the interleaved harness
  int batches = 301;            // batches per operation
  double batch_us = 40;         // target duration of one batch
  std::size_t instructions = 0; // > 0: callgrind passes of this many calls instead of timing
  std::string out;              // TSV file for scripts/bench
};
options g_options;
std::vector<row> g_rows;

constexpr std::size_t alloc_reps = 64;

using clock_type = std::chrono::steady_clock;

// Where the stack lies can decide an operation's time, and the kernel places a process's
// stack at random within a page, so the same binary gave different figures from run to run.
// Measured under `setarch -R`, the stack moved by padding the environment: an export that
// writes a DLTensor and its arrays (11 stores) took 6, 7 or 8 cycles by how those stores
// fall across 64-byte cache lines (1.43, 1.67 and 1.91 ns at paddings of 24, 0 and 40
// bytes); at paddings from 2400 to 2592 bytes, and again about 4 KiB further, CCCL's rank-8
// relaxed import took 19.1 ns against 8.6 elsewhere and our try_to_mdspan 24.1 against 12.9
// (accesses that alias other data modulo the page, by all appearances). So the batches run
// at every 16-byte placement of the frames across a 4 KiB page in turn, and an operation's
// figure is the mean of the middle half of its batches: a figure of the code over the
// places a process may put it, the bursts of a busy machine and the worst placements
// trimmed.
constexpr std::size_t stack_placements = 4096 / 16;

// The placement of batch b: consecutive batches far apart in the page (157 is odd, so the
// first 256 batches visit every placement once).
constexpr std::size_t placement_of(std::size_t b) noexcept { return b * 157 % stack_placements; }

// One batch of n calls, its frames moved 16 * placement bytes further down the stack.
[[gnu::noinline]] double seconds_of(operation& o, std::size_t n, std::size_t placement = 0) {
  void* shift = __builtin_alloca(16 * (placement % stack_placements) + 16);
  asm volatile("" : : "r"(shift) : "memory");  // kept: the frames below move with it
  const auto t0 = clock_type::now();
  o.batch(n);
  const auto t1 = clock_type::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

// The mean of the middle half (the interquartile mean): the batches' placements mixed in
// proportion, the fastest and slowest quarters dropped.
double interquartile_mean(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t lo = v.size() / 4, hi = v.size() - v.size() / 4;
  double sum = 0;
  for (std::size_t i = lo; i < hi; ++i) sum += v[i];
  return sum / static_cast<double>(hi - lo);
}

}  // namespace

const std::vector<row>& rows() { return g_rows; }

namespace {

// --instructions: for each operation, a warm-up batch (lazy binding, first-touch costs),
// then a pass of n calls and one of 2n calls, each collected alone and dumped under a tag
// that bench/callgrind.py reads back ("dlpm-op <index> <calls>"). Outside valgrind the
// client requests do nothing, so the mode still runs (and --smoke keeps it compiling).
void count_instructions(const std::string& section, const std::vector<operation*>& ops, const std::string& note) {
  static std::size_t next_index = 0;
  const std::size_t n = g_options.instructions;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::size_t index = next_index++;
    ops[i]->batch(n);
    for (const std::size_t calls : {n, 2 * n}) {
      const std::string tag = "dlpm-op " + std::to_string(index) + " " + std::to_string(calls);
#if DLPM_BENCH_HAVE_CALLGRIND
      CALLGRIND_ZERO_STATS;
      CALLGRIND_TOGGLE_COLLECT;
      ops[i]->batch(calls);
      CALLGRIND_TOGGLE_COLLECT;
      CALLGRIND_DUMP_STATS_AT(tag.c_str());
#else
      ops[i]->batch(calls);
#endif
    }
    const std::string row_note = !ops[i]->note.empty() ? ops[i]->note : (i == 0 ? "" : note);
    g_rows.push_back(row{section, ops[i]->name, static_cast<double>(index), i == 0 ? "" : ops[0]->name, 0, row_note});
  }
}

}  // namespace

void compare(const std::string& section, operation baseline, std::vector<operation> candidates, const std::string& note) {
  std::vector<operation*> ops{&baseline};
  for (auto& c : candidates) ops.push_back(&c);
  std::cerr << "  " << section << ": " << baseline.name << " (+" << candidates.size() << ")\n";

  if (g_options.instructions > 0) {
    count_instructions(section, ops, note);
    return;
  }

  if (g_options.catch_benchmark) {
    for (operation* o : ops) {
      BENCHMARK_ADVANCED(section + " | " + o->name)(Catch::Benchmark::Chronometer meter) {
        // One batch of meter.runs() operations inside Catch2's chronometer, so the
        // measured loop is the same inlined loop as in the interleaved harness.
        const auto k = static_cast<std::size_t>(meter.runs());
        meter.measure([&](int i) {
          if (i == 0) o->batch(k);
        });
      };
    }
    return;
  }

  // Allocations of the operation alone: nothing else runs between the two reads.
  std::vector<double> allocs;
  const std::size_t reps = g_options.smoke ? 1 : alloc_reps;
  for (operation* o : ops) {
    const std::uint64_t before = allocations();
    o->batch(reps);
    allocs.push_back(static_cast<double>(allocations() - before) / static_cast<double>(reps));
  }

  std::vector<double> ns(ops.size());
  if (g_options.smoke) {
    for (std::size_t i = 0; i < ops.size(); ++i) ns[i] = seconds_of(*ops[i], 1) * 1e9;
  } else {
    // Batch sizes: double until a batch lasts batch_us (this also warms the caches).
    std::vector<std::size_t> n(ops.size(), 1);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      while (seconds_of(*ops[i], n[i]) < g_options.batch_us * 1e-6 && n[i] < (std::size_t{1} << 30)) n[i] *= 2;
    }
    std::vector<std::vector<double>> samples(ops.size());
    for (auto& s : samples) s.reserve(static_cast<std::size_t>(g_options.batches));
    for (int b = 0; b < g_options.batches; ++b) {
      for (std::size_t j = 0; j < ops.size(); ++j) {
        const std::size_t i = (j + static_cast<std::size_t>(b)) % ops.size();  // rotate who goes first
        const std::size_t placement = placement_of(static_cast<std::size_t>(b));  // the same for every operation
        samples[i].push_back(seconds_of(*ops[i], n[i], placement) * 1e9 / static_cast<double>(n[i]));
      }
    }
    for (std::size_t i = 0; i < ops.size(); ++i) ns[i] = interquartile_mean(std::move(samples[i]));
  }

  g_rows.push_back(row{section, baseline.name, ns[0], "", allocs[0], baseline.note});
  for (std::size_t i = 1; i < ops.size(); ++i) {
    const std::string& row_note = ops[i]->note.empty() ? note : ops[i]->note;
    g_rows.push_back(row{section, ops[i]->name, ns[i], baseline.name, allocs[i], row_note});
  }
}

}  // namespace bench

namespace {

void print_table(std::ostream& os) {
  std::string section;
  char line[512];
  for (const auto& r : bench::g_rows) {
    if (r.section != section) {
      section = r.section;
      os << "\n" << section << "\n";
    }
    double base = NAN;
    for (const auto& b : bench::g_rows)
      if (b.section == r.section && b.name == r.baseline) base = b.ns;
    std::snprintf(line, sizeof line, "  %-58s %9.2f ns  %6s  %5.2f allocs\n", r.name.c_str(), r.ns,
                  std::isnan(base) ? "" : (std::to_string(r.ns / base).substr(0, 4) + "x").c_str(), r.allocs);
    os << line;
  }
}

bool write_tsv(const std::string& path) {
  std::ofstream f(path);
  if (!f) return false;
  f << "section\tname\tvalue\tunit\tbaseline\tallocs\tnote\n";
  for (const auto& r : bench::g_rows)
    f << r.section << '\t' << r.name << '\t' << r.ns << "\tns\t" << r.baseline << '\t' << r.allocs << '\t' << r.note << '\n';
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  Catch::Session session;
  using Catch::clara::Opt;
  auto& o = bench::g_options;
  auto cli = session.cli()
             | Opt(o.smoke)["--smoke"]("run every operation once (CI: keeps the benchmarks compiling and running)")
             | Opt(o.catch_benchmark)["--catch-benchmark"]("measure with Catch2's BENCHMARK statistics instead")
             | Opt(o.batches, "n")["--batches"]("interleaved batches per operation (default 301)")
             | Opt(o.batch_us, "us")["--batch-us"]("target duration of one batch in microseconds (default 40)")
             | Opt(o.instructions, "n")["--instructions"]("callgrind passes of n and 2n calls per operation instead of "
                                                          "timing (bench/callgrind.py; the TSV's value is the dump index)")
             | Opt(o.out, "file")["--tsv"]("write the results as TSV to this file");
  session.cli(cli);
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const int rc = session.run();
  if (!o.catch_benchmark) {
    if (o.instructions == 0) print_table(std::cout);
    if (!o.out.empty() && !write_tsv(o.out)) {
      std::cerr << "cannot write " << o.out << "\n";
      return 1;
    }
  }
  return rc;
}
