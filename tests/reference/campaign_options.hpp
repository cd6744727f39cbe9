// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The command line both campaign programs take (dlpm_differential, dlpm_fast_paths):
//   [--cases N] [--seed S] [--first I] [--max-seconds T] [--no-examples] [--replay HEX]
// plus --emit-seeds DIR where the program allows it. N and S default to environment
// variables, then to the program's defaults. A bad command line exits with status 2.
#ifndef DLPM_REFERENCE_CAMPAIGN_OPTIONS_HPP
#define DLPM_REFERENCE_CAMPAIGN_OPTIONS_HPP

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dlpm_reference {

struct campaign_options {
  std::uint64_t cases = 0;
  std::uint64_t seed = 0;
  std::uint64_t first = 0;
  double max_seconds = 0;  ///< 0: no time limit
  std::string replay;      ///< one case's reproducer, in hex
  std::string emit_dir;    ///< --emit-seeds (only where allowed)
  bool examples = true;    ///< replay the edge examples first
};

inline std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 0) : fallback;
}

inline campaign_options parse_campaign_options(int argc, char** argv, const char* cases_env, std::uint64_t default_cases,
                                               const char* seed_env, std::uint64_t default_seed, bool allow_emit_seeds) {
  campaign_options o;
  o.cases = env_or(cases_env, default_cases);
  o.seed = env_or(seed_env, default_seed);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--cases") o.cases = std::strtoull(next().c_str(), nullptr, 0);
    else if (a == "--seed") o.seed = std::strtoull(next().c_str(), nullptr, 0);
    else if (a == "--first") o.first = std::strtoull(next().c_str(), nullptr, 0);
    else if (a == "--max-seconds") o.max_seconds = std::strtod(next().c_str(), nullptr);
    else if (a == "--replay") o.replay = next();
    else if (a == "--no-examples") o.examples = false;
    else if (a == "--emit-seeds" && allow_emit_seeds) o.emit_dir = next();
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace dlpm_reference

#endif
