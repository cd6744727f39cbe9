/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
/* Compiles <dlpack_mdspan.h> alone, for the strict-C header checks. */
#include <dlpack_mdspan.h>

int dlpm_header_compiles(void) { return DLPM_OK; }
