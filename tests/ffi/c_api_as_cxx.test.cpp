// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API test compiled as C++: the header must work from C++ too.
#include "c_api.test.c"
