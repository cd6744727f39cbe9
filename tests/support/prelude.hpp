// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Included first by every C++ test, before `import dlpack_mdspan;` (all #includes must
// precede the import). Each test file is built twice: importing the module
// (DLPM_USE_MODULE) and including the header.
#pragma once

#include <doctest/doctest.h>

#include <dlpack/dlpack.h>
// Macros only (DLPM_HAS_BF16 and friends): a module import does not carry macros.
#include <dlpack_mdspan/config.hpp>

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mdspan>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <thread>
#include <vector>

#include "support/alloc_counter.hpp"
#include "support/death_test.h"
#include "support/tensor_builder.hpp"
