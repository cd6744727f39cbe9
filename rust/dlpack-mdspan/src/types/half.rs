// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! 16-bit floating-point storage types: [`F16`] (binary16) and [`BF16`] (bfloat16).

use std::fmt;

/// An IEEE 754 binary16 value (`float16`: DLPack `(kDLFloat, 16, 1)`, C's `_Float16`,
/// CUDA's `__half`, NumPy's `float16`), stored as its bit pattern: 1 sign, 5 exponent and
/// 10 mantissa bits.
///
/// A storage type without arithmetic. [`from_bits`](Self::from_bits) and
/// [`to_bits`](Self::to_bits) give the raw pattern; [`to_f32`](Self::to_f32) (also
/// `f32::from`) is exact, and [`from_f32`](Self::from_f32) rounds to nearest, ties to even.
/// `==` and `Hash` compare bit patterns, not values: `0.0` and `-0.0` differ, and a NaN
/// equals itself. `Default` is `+0.0`.
///
/// ```
/// use dlpack_mdspan::{DataType, Element, ManagedTensor, F16};
///
/// assert_eq!(F16::DTYPE, DataType::F16);
/// let h = F16::from_f32(1.5);
/// assert_eq!(h.to_bits(), 0x3e00);
/// assert_eq!(f32::from(h), 1.5);
/// assert_eq!(F16::from_f32(1e6), F16::INFINITY); // beyond F16::MAX (65504)
///
/// let t = ManagedTensor::from_vec(vec![F16::ONE, F16::from_f32(-2.0)], &[2])?;
/// assert_eq!(t.view::<F16>()?.get(&[1]).map(|h| h.to_f32()), Some(-2.0));
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct F16(pub u16);

impl F16 {
    /// `+0.0`.
    pub const ZERO: F16 = F16(0x0000);
    /// `1.0`.
    pub const ONE: F16 = F16(0x3c00);
    /// The largest finite value, `65504.0`.
    pub const MAX: F16 = F16(0x7bff);
    /// The smallest positive normal value, `2^-14`.
    pub const MIN_POSITIVE: F16 = F16(0x0400);
    /// `+∞`.
    pub const INFINITY: F16 = F16(0x7c00);
    /// `-∞`.
    pub const NEG_INFINITY: F16 = F16(0xfc00);
    /// A quiet NaN (`0x7e00`, the pattern `from_f32(f32::NAN)` gives).
    pub const NAN: F16 = F16(0x7e00);

    /// The value with bit pattern `bits`.
    pub const fn from_bits(bits: u16) -> Self {
        F16(bits)
    }

    /// The bit pattern.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// Whether this is a NaN (exponent all ones, mantissa non-zero).
    pub const fn is_nan(self) -> bool {
        self.0 & 0x7fff > 0x7c00
    }

    /// The exact `f32` of this value (every binary16 value is an `f32`). A NaN stays a NaN
    /// with the same sign and payload (shifted into the top of the `f32` mantissa), so a
    /// signaling NaN stays signaling.
    pub fn to_f32(self) -> f32 {
        let h = u32::from(self.0);
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let man = h & 0x3ff;
        let bits = if exp == 0x1f {
            sign | 0x7f80_0000 | (man << 13) // infinity or NaN
        } else if exp != 0 {
            sign | ((exp + 127 - 15) << 23) | (man << 13)
        } else if man == 0 {
            sign // ±0
        } else {
            // Subnormal, man * 2^-24: normalise around its highest set bit p.
            let p = 31 - man.leading_zeros();
            sign | ((p + 127 - 24) << 23) | ((man << (23 - p)) & 0x7f_ffff)
        };
        f32::from_bits(bits)
    }

    /// `x` rounded to the nearest binary16, ties to even (IEEE 754's default rounding, as
    /// C's `(_Float16)x` and x86's `vcvtps2ph` with the default mode). Values beyond the
    /// range round to `±∞` (from `±65520` on), tiny ones to subnormals or `±0`.
    ///
    /// NaN: a NaN gives a quiet NaN with the same sign and the top 9 bits of the payload
    /// (the quiet bit is set, as hardware conversions do), so `from_f32(h.to_f32()) == h`
    /// for every `h` except signaling NaNs, which come back quieted.
    pub fn from_f32(x: f32) -> Self {
        let x = x.to_bits();
        let sign = ((x >> 16) & 0x8000) as u16;
        let exp = (x >> 23) & 0xff;
        let man = x & 0x7f_ffff;
        if exp == 0xff {
            let nan = if man == 0 {
                0
            } else {
                0x0200 | (man >> 13) as u16
            };
            return F16(sign | 0x7c00 | nan);
        }
        if exp >= 127 + 16 {
            return F16(sign | 0x7c00); // |x| >= 2^16: beyond every rounding to finite
        }
        // Round q + rem / 2^shift to nearest, ties to even (q's carry into the exponent
        // field is the right result: the next binade, or infinity).
        let round = |q: u32, rem: u32, shift: u32| -> u16 {
            let half = 1u32 << (shift - 1);
            (q + u32::from(rem > half || (rem == half && q & 1 == 1))) as u16
        };
        if exp > 127 - 15 {
            // A normal binary16: rebias the exponent, keep 10 of the 23 mantissa bits.
            let q = ((exp - (127 - 15)) << 10) | (man >> 13);
            return F16(sign | round(q, man & 0x1fff, 13));
        }
        if exp < 127 - 25 {
            return F16(sign); // |x| < 2^-25, half the smallest subnormal: rounds to ±0
        }
        // A subnormal binary16, in units of 2^-24: the 24-bit significand shifted right.
        let m = man | 0x80_0000;
        let shift = 126 - exp; // 14..=24
        F16(sign | round(m >> shift, m & ((1 << shift) - 1), shift))
    }
}

impl From<F16> for f32 {
    fn from(h: F16) -> f32 {
        h.to_f32()
    }
}

impl fmt::Debug for F16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "F16({:?}, bits {:#06x})", self.to_f32(), self.0)
    }
}

impl fmt::Display for F16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}

/// A bfloat16 value (`bfloat16`: DLPack `(kDLBfloat, 16, 1)`, C++'s `std::bfloat16_t` /
/// `__bf16`, CUDA's `__nv_bfloat16`, `ml_dtypes.bfloat16`), stored as its bit pattern: the
/// upper 16 bits of an `f32` (1 sign, 8 exponent, 7 mantissa bits).
///
/// A storage type without arithmetic, like [`F16`]: [`to_f32`](Self::to_f32) (also
/// `f32::from`) is exact, [`from_f32`](Self::from_f32) rounds to nearest, ties to even.
/// `==` and `Hash` compare bit patterns. `Default` is `+0.0`.
///
/// ```
/// use dlpack_mdspan::{DataType, Element, BF16};
///
/// assert_eq!(BF16::DTYPE, DataType::BF16);
/// assert_eq!(BF16::from_f32(1.0).to_bits(), 0x3f80);
/// assert_eq!(BF16::from_f32(1.0 + 1.0 / 256.0), BF16::ONE); // a tie: rounds to even
/// assert_eq!(f32::from(BF16::from_bits(0xc0a0)), -5.0);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct BF16(pub u16);

impl BF16 {
    /// `+0.0`.
    pub const ZERO: BF16 = BF16(0x0000);
    /// `1.0`.
    pub const ONE: BF16 = BF16(0x3f80);
    /// The largest finite value, `(2 - 2^-7) * 2^127`.
    pub const MAX: BF16 = BF16(0x7f7f);
    /// The smallest positive normal value, `2^-126` (as for `f32`).
    pub const MIN_POSITIVE: BF16 = BF16(0x0080);
    /// `+∞`.
    pub const INFINITY: BF16 = BF16(0x7f80);
    /// `-∞`.
    pub const NEG_INFINITY: BF16 = BF16(0xff80);
    /// A quiet NaN (`0x7fc0`, the upper half of `f32::NAN`).
    pub const NAN: BF16 = BF16(0x7fc0);

    /// The value with bit pattern `bits`.
    pub const fn from_bits(bits: u16) -> Self {
        BF16(bits)
    }

    /// The bit pattern.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// Whether this is a NaN (exponent all ones, mantissa non-zero).
    pub const fn is_nan(self) -> bool {
        self.0 & 0x7fff > 0x7f80
    }

    /// The exact `f32`: these 16 bits followed by 16 zero bits. A NaN keeps its sign and
    /// payload, signaling or quiet.
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }

    /// `x` rounded to the nearest bfloat16, ties to even (as PyTorch, JAX and CUDA's
    /// `__float2bfloat16` round); values beyond `BF16::MAX` by half an ulp or more become
    /// `±∞`, and `f32` subnormals round like any other value.
    ///
    /// NaN: a NaN gives a quiet NaN with the same sign and the top 6 bits of the payload (the
    /// quiet bit is set, never rounded into infinity), so `from_f32(b.to_f32()) == b` for
    /// every `b` except signaling NaNs, which come back quieted.
    pub fn from_f32(x: f32) -> Self {
        let bits = x.to_bits();
        if x.is_nan() {
            return BF16((bits >> 16) as u16 | 0x0040);
        }
        // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even; a carry
        // into the exponent is the right result (the next binade, or infinity). No overflow:
        // the largest non-NaN pattern is -∞, 0xff80_0000.
        let rounded = bits + 0x7fff + ((bits >> 16) & 1);
        BF16((rounded >> 16) as u16)
    }
}

impl From<BF16> for f32 {
    fn from(b: BF16) -> f32 {
        b.to_f32()
    }
}

impl fmt::Debug for BF16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BF16({:?}, bits {:#06x})", self.to_f32(), self.0)
    }
}

impl fmt::Display for BF16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}
