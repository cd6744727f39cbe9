// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A C++ producer whose deleter breaks the DLPack contract by throwing, for the boundary test.
#include <dlpack/dlpack.h>

#include <stdexcept>

extern "C" DLManagedTensorVersioned* dlpm_test_throwing_tensor(void) {
  auto* t = new DLManagedTensorVersioned{};
  t->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  t->deleter = [](DLManagedTensorVersioned* self) {
    delete self;
    throw std::runtime_error("boom from a C++ deleter");
  };
  return t;
}

// The same contract broken by a dlpm_release_fn.
extern "C" void dlpm_test_throwing_release(void*) { throw std::runtime_error("boom from a release function"); }
