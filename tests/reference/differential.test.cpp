// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dlpm_differential: the core against the reference model on generated tensors.
//
//   dlpm_differential [--cases N] [--seed S] [--first I] [--max-seconds T] [--no-examples]
//   dlpm_differential --replay HEX           # one case, from a reproducer
//   dlpm_differential --emit-seeds DIR       # the edge examples as fuzz_differential seeds
//
// N defaults to $DLPM_DIFFERENTIAL_CASES, else a count that keeps the sanitizer CTest run
// near half a minute. Every run first replays the edge examples. Exit status 1 on
// any disagreement, after printing one reproducer per kind of disagreement.
#include "campaign_options.hpp"
#include "differential.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

constexpr std::uint64_t default_cases = 80000;
constexpr std::uint64_t default_seed = 0xd1f0c0de2024ULL;

}  // namespace

int main(int argc, char** argv) {
  const auto options = dlpm_reference::parse_campaign_options(argc, argv, "DLPM_DIFFERENTIAL_CASES", default_cases,
                                                             "DLPM_DIFFERENTIAL_SEED", default_seed, true);
  const std::uint64_t cases = options.cases, seed = options.seed, first = options.first;
  const double max_seconds = options.max_seconds;
  const std::string& replay = options.replay;
  const std::string& emit_dir = options.emit_dir;
  const bool examples = options.examples;
  namespace dd = dlpm_differential;
  namespace ref = dlpm_reference;

  if (!emit_dir.empty()) {
    for (const auto& ex : dd::edge_examples()) {
      const auto bytes = ref::encode_literal(ex.spec);
      std::ofstream(emit_dir + "/" + ex.name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                                       static_cast<std::streamsize>(bytes.size()));
    }
    // Generated cases too, literally encoded (seeds independent of the generator's coding).
    for (std::uint64_t i = 0; i < 8; ++i) {
      const auto bytes = ref::encode_literal(dd::generate_case(seed, i));
      std::ofstream(emit_dir + "/generated_" + std::to_string(i), std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    std::printf("wrote %zu edge examples and 8 generated cases to %s\n", dd::edge_examples().size(), emit_dir.c_str());
    return 0;
  }

  dd::differential diff;
  const auto start = std::chrono::steady_clock::now();
  if (!replay.empty()) {
    const auto bytes = ref::from_hex(replay);
    const auto spec = dd::decode_case(bytes.data(), bytes.size());
    std::printf("replaying:\n%s  target = %s\n", ref::describe(spec).c_str(), dd::target_table()[spec.target].desc.name);
    diff.run(spec);
  } else {
    if (examples)
      for (const auto& ex : dd::edge_examples()) diff.run(ex.spec);
    std::uint64_t i = 0;
    for (; i < cases; ++i) {
      diff.run(dd::generate_case(seed, first + i));
      if (max_seconds > 0 && (i & 1023) == 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > max_seconds)
        break;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  diff.print_report(stdout);
  std::printf(
      "\ndifferential: %llu cases (seed 0x%llx, %u targets), %llu comparisons, %llu disagreements in %zu kinds, %.1f s\n"
      "  validate accepted %llu; imports accepted %llu, refused %llu\n",
      static_cast<unsigned long long>(diff.cases), static_cast<unsigned long long>(seed), dd::num_targets(),
      static_cast<unsigned long long>(diff.comparisons), static_cast<unsigned long long>(diff.disagreements),
      diff.groups.size(), seconds, static_cast<unsigned long long>(diff.validate_accepted),
      static_cast<unsigned long long>(diff.imports_accepted), static_cast<unsigned long long>(diff.imports_refused));
  diff.print_coverage(stdout);
  return diff.disagreements == 0 ? 0 : 1;
}
