// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Empty: this crate only lists the crates dlpark needs (Cargo.toml).
