// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The DLPack flags of a managed tensor: [`Flags`].

use std::fmt;
use std::ops::{BitAnd, BitOr, BitOrAssign};

use dlpack_mdspan_sys as sys;

/// DLPack flags of a managed tensor (`DLPACK_FLAG_BITMASK_*`). Unknown bits are kept.
///
/// ```
/// use dlpack_mdspan::Flags;
/// let f = Flags::READ_ONLY | Flags::IS_COPIED;
/// assert!(f.contains(Flags::READ_ONLY));
/// assert!(!f.contains(Flags::IS_SUBBYTE_TYPE_PADDED));
/// assert_eq!(f.bits(), 3);
/// assert_eq!(Flags::empty().bits(), 0);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Flags(pub u64);

impl Flags {
    /// The consumer must not write to the data.
    pub const READ_ONLY: Flags = Flags(sys::DLPACK_FLAG_BITMASK_READ_ONLY);
    /// The data is a copy that aliases nothing: the consumer may mutate it freely.
    pub const IS_COPIED: Flags = Flags(sys::DLPACK_FLAG_BITMASK_IS_COPIED);
    /// Sub-byte elements occupy one whole byte each.
    pub const IS_SUBBYTE_TYPE_PADDED: Flags =
        Flags(sys::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);

    /// No flag.
    pub const fn empty() -> Self {
        Flags(0)
    }

    /// The raw bits.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Whether every bit of `other` is set.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for Flags {
    type Output = Flags;
    fn bitand(self, rhs: Flags) -> Flags {
        Flags(self.0 & rhs.0)
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut item = |f: &mut fmt::Formatter<'_>, name: &str| -> fmt::Result {
            let sep = if first { "" } else { " | " };
            first = false;
            write!(f, "{sep}{name}")
        };
        f.write_str("Flags(")?;
        if self.contains(Flags::READ_ONLY) {
            item(f, "READ_ONLY")?;
        }
        if self.contains(Flags::IS_COPIED) {
            item(f, "IS_COPIED")?;
        }
        if self.contains(Flags::IS_SUBBYTE_TYPE_PADDED) {
            item(f, "IS_SUBBYTE_TYPE_PADDED")?;
        }
        let unknown = self.0 & !0b111;
        if unknown != 0 {
            item(f, &format!("{unknown:#x}"))?;
        }
        f.write_str(")")
    }
}
