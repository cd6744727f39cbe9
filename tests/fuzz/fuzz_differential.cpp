// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the differential test (tests/reference) driven by fuzzer bytes. The
// input decodes to one case (first byte even: the fields literally, as written by
// `dlpm_differential --emit-seeds`; odd: the rest drives the edge-biased generator), and
// the core (C++ and the C facade) is compared with the reference model on it. Any
// disagreement prints a reproducer and traps, so libFuzzer keeps the input.
#include "differential.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static dlpm_differential::differential diff = [] {
    dlpm_differential::differential d;
    d.abort_on_disagreement = true;
    return d;
  }();
  diff.run(dlpm_differential::decode_case(data, size));
  return 0;
}
