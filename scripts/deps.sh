# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sourced by every entry point (scripts/demo, run-tests, bench, fuzz, the check-* scripts,
# rust/run-tests, rust/check-package) before the first line that uses anything
# scripts/install-deps makes: clang 19, cmake 3.28, the offline crate registry (and so the
# CARGO_HOME that rust/cargo-env.sh picks), the venvs, the arm64 libc++. A fresh Debian 12
# machine has none of them; scripts/check-entry-points holds every entry point to this order.
#
# dlpm_install_deps [ARGS]: runs scripts/install-deps once per process tree. It exports
# DLPM_DEPS_INSTALLED=1 when install-deps succeeded, so that an entry point called by another
# (scripts/run-tests calls the rest) does not run it again.
dlpm_install_deps() {
  if [ "${DLPM_DEPS_INSTALLED:-}" = 1 ]; then return 0; fi
  "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/install-deps" "$@"
  export DLPM_DEPS_INSTALLED=1
}
