# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sourced by the project's scripts before they call cargo. Where scripts/install-deps made
# the offline registry of Debian's crate sources (scripts/cargo-registry), cargo is pointed
# at it through CARGO_HOME, whose config.toml replaces crates.io with it; elsewhere nothing
# changes, and cargo uses crates.io (or the developer's own configuration) as usual.
# Cargo.lock is not committed (docs/rust.md#the-lock-file): dlpm_cargo_lock makes it from
# whichever registry cargo uses when the checkout has none, so that every later
# `cargo ... --locked` builds that one resolution.
: "${DLPM_CARGO_REGISTRY:=/var/cache/dlpack-mdspan-cargo}"
export DLPM_CARGO_REGISTRY
if [ -f "$DLPM_CARGO_REGISTRY/home/config.toml" ] && [ -z "${DLPM_CARGO_KEEP_HOME:-}" ]; then
  export CARGO_HOME="$DLPM_CARGO_REGISTRY/home"
fi

# Makes Cargo.lock in the workspace root $1 when there is none. When there is one that the
# workspace's own manifests no longer match (a version bump, a new member), refreshes the
# workspace's entries only: the dependencies stay as resolved.
dlpm_cargo_lock() {
  if [ ! -f "$1/Cargo.lock" ]; then
    (cd "$1" && cargo generate-lockfile --quiet)
  elif ! (cd "$1" && cargo metadata --offline --locked --format-version 1 >/dev/null 2>&1); then
    (cd "$1" && cargo update --workspace --offline --quiet)
  fi
}
