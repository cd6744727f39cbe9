// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The differential test's targets with layout right (40 instantiations of try_to_mdspan).
#include "targets.hpp"

namespace dlpm_differential {
std::vector<target_entry> targets_right() { return grid<0>(std::make_index_sequence<40>{}); }
}  // namespace dlpm_differential
