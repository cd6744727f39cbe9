// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! What a tensor's elements are: [`TypeCode`] and [`DataType`].

use std::ffi::CString;
use std::fmt;
use std::mem::MaybeUninit;
use std::str::FromStr;

use dlpack_mdspan_sys as sys;

use crate::error::{check, Error, Status};

/// A DLPack type code (`DLDataTypeCode`). Unknown values are representable.
///
/// ```
/// use dlpack_mdspan::TypeCode;
/// assert_eq!(TypeCode::FLOAT.0, 2);
/// assert_eq!(format!("{:?}", TypeCode(200)), "TypeCode(200)");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct TypeCode(pub sys::DLDataTypeCode);

impl TypeCode {
    /// `kDLInt`.
    pub const INT: TypeCode = TypeCode(sys::kDLInt);
    /// `kDLUInt`.
    pub const UINT: TypeCode = TypeCode(sys::kDLUInt);
    /// `kDLFloat`.
    pub const FLOAT: TypeCode = TypeCode(sys::kDLFloat);
    /// `kDLOpaqueHandle`.
    pub const OPAQUE_HANDLE: TypeCode = TypeCode(sys::kDLOpaqueHandle);
    /// `kDLBfloat`.
    pub const BFLOAT: TypeCode = TypeCode(sys::kDLBfloat);
    /// `kDLComplex`.
    pub const COMPLEX: TypeCode = TypeCode(sys::kDLComplex);
    /// `kDLBool`.
    pub const BOOL: TypeCode = TypeCode(sys::kDLBool);
    /// `kDLFloat8_e3m4`.
    pub const FLOAT8_E3M4: TypeCode = TypeCode(sys::kDLFloat8_e3m4);
    /// `kDLFloat8_e4m3`.
    pub const FLOAT8_E4M3: TypeCode = TypeCode(sys::kDLFloat8_e4m3);
    /// `kDLFloat8_e4m3b11fnuz`.
    pub const FLOAT8_E4M3B11FNUZ: TypeCode = TypeCode(sys::kDLFloat8_e4m3b11fnuz);
    /// `kDLFloat8_e4m3fn`.
    pub const FLOAT8_E4M3FN: TypeCode = TypeCode(sys::kDLFloat8_e4m3fn);
    /// `kDLFloat8_e4m3fnuz`.
    pub const FLOAT8_E4M3FNUZ: TypeCode = TypeCode(sys::kDLFloat8_e4m3fnuz);
    /// `kDLFloat8_e5m2`.
    pub const FLOAT8_E5M2: TypeCode = TypeCode(sys::kDLFloat8_e5m2);
    /// `kDLFloat8_e5m2fnuz`.
    pub const FLOAT8_E5M2FNUZ: TypeCode = TypeCode(sys::kDLFloat8_e5m2fnuz);
    /// `kDLFloat8_e8m0fnu`.
    pub const FLOAT8_E8M0FNU: TypeCode = TypeCode(sys::kDLFloat8_e8m0fnu);
    /// `kDLFloat6_e2m3fn`.
    pub const FLOAT6_E2M3FN: TypeCode = TypeCode(sys::kDLFloat6_e2m3fn);
    /// `kDLFloat6_e3m2fn`.
    pub const FLOAT6_E3M2FN: TypeCode = TypeCode(sys::kDLFloat6_e3m2fn);
    /// `kDLFloat4_e2m1fn`.
    pub const FLOAT4_E2M1FN: TypeCode = TypeCode(sys::kDLFloat4_e2m1fn);
}

impl fmt::Debug for TypeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.0 {
            sys::kDLInt => "kDLInt",
            sys::kDLUInt => "kDLUInt",
            sys::kDLFloat => "kDLFloat",
            sys::kDLOpaqueHandle => "kDLOpaqueHandle",
            sys::kDLBfloat => "kDLBfloat",
            sys::kDLComplex => "kDLComplex",
            sys::kDLBool => "kDLBool",
            other => return write!(f, "TypeCode({other})"),
        };
        f.write_str(name)
    }
}

/// An element type (`DLDataType`): code, bits per lane, lanes.
///
/// ```
/// use dlpack_mdspan::{DataType, TypeCode};
/// let f16 = DataType::new(TypeCode::FLOAT, 16, 1);
/// assert_eq!((f16.code(), f16.bits(), f16.lanes()), (TypeCode::FLOAT, 16, 1));
/// assert_eq!(DataType::F32, DataType::new(TypeCode::FLOAT, 32, 1));
/// assert_eq!(DataType::COMPLEX64.bits(), 64); // a complex value's bits are the whole value
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct DataType(pub sys::DLDataType);

impl DataType {
    /// `int8`.
    pub const I8: DataType = DataType::new(TypeCode::INT, 8, 1);
    /// `int16`.
    pub const I16: DataType = DataType::new(TypeCode::INT, 16, 1);
    /// `int32`.
    pub const I32: DataType = DataType::new(TypeCode::INT, 32, 1);
    /// `int64`.
    pub const I64: DataType = DataType::new(TypeCode::INT, 64, 1);
    /// `uint8`.
    pub const U8: DataType = DataType::new(TypeCode::UINT, 8, 1);
    /// `uint16`.
    pub const U16: DataType = DataType::new(TypeCode::UINT, 16, 1);
    /// `uint32`.
    pub const U32: DataType = DataType::new(TypeCode::UINT, 32, 1);
    /// `uint64`.
    pub const U64: DataType = DataType::new(TypeCode::UINT, 64, 1);
    /// `float16`.
    pub const F16: DataType = DataType::new(TypeCode::FLOAT, 16, 1);
    /// `float32`.
    pub const F32: DataType = DataType::new(TypeCode::FLOAT, 32, 1);
    /// `float64`.
    pub const F64: DataType = DataType::new(TypeCode::FLOAT, 64, 1);
    /// `bfloat16`.
    pub const BF16: DataType = DataType::new(TypeCode::BFLOAT, 16, 1);
    /// `bool`, one byte per value.
    pub const BOOL: DataType = DataType::new(TypeCode::BOOL, 8, 1);
    /// `complex64`: two `float32`.
    pub const COMPLEX64: DataType = DataType::new(TypeCode::COMPLEX, 64, 1);
    /// `complex128`: two `float64`.
    pub const COMPLEX128: DataType = DataType::new(TypeCode::COMPLEX, 128, 1);

    /// The data type (`code`, `bits`, `lanes`).
    pub const fn new(code: TypeCode, bits: u8, lanes: u16) -> Self {
        DataType(sys::DLDataType {
            code: code.0,
            bits,
            lanes,
        })
    }

    /// The type code.
    pub const fn code(self) -> TypeCode {
        TypeCode(self.0.code)
    }

    /// Bits per lane.
    pub const fn bits(self) -> u8 {
        self.0.bits
    }

    /// Number of lanes.
    pub const fn lanes(self) -> u16 {
        self.0.lanes
    }

    /// Bytes per element as stored, the C++ core's `storage_itemsize` (the facade's
    /// `dlpm_storage_itemsize`): `bits * lanes / 8`, or, for a sub-byte type stored padded
    /// (`subbyte_padded`: DLPack's `IS_SUBBYTE_TYPE_PADDED`), one byte per lane. `None`
    /// where the core answers 0: not a whole number of bytes (a packed odd count of 4-bit
    /// lanes), zero lanes, or zero bits.
    ///
    /// A `const fn`, so that views and exports ask it without a call into the facade: it
    /// states the core's rule, and a unit test holds it equal to `dlpm_storage_itemsize`
    /// for every bit width, every lane count and both storage forms.
    ///
    /// ```
    /// use dlpack_mdspan::{DataType, TypeCode};
    /// assert_eq!(DataType::BF16.storage_itemsize(false), Some(2));
    /// assert_eq!(DataType::new(TypeCode::UINT, 8, 3).storage_itemsize(false), Some(3));
    /// let fp4 = DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 1);
    /// assert_eq!(fp4.storage_itemsize(false), None); // half a byte
    /// assert_eq!(fp4.storage_itemsize(true), Some(1)); // padded: one byte per lane
    /// assert_eq!(DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 2).storage_itemsize(false), Some(1));
    /// ```
    pub const fn storage_itemsize(self, subbyte_padded: bool) -> Option<usize> {
        let (bits, lanes) = (self.bits() as usize, self.lanes() as usize);
        let size = if subbyte_padded && bits > 0 && bits < 8 {
            lanes
        } else if (bits * lanes) % 8 == 0 {
            bits * lanes / 8
        } else {
            0
        };
        if size == 0 {
            None
        } else {
            Some(size)
        }
    }
}

impl DataType {
    /// The name NumPy and ml_dtypes use, from the C++ core (`dlpm_dtype_name`): `float32`,
    /// `bfloat16`, `float8_e4m3fn`, `float32x4` for four lanes; a dtype the core refuses is
    /// shown as its numbers, `(code 42, bits 7, lanes 1)`.
    ///
    /// ```
    /// use dlpack_mdspan::{DataType, TypeCode};
    /// assert_eq!(DataType::F32.name(), "float32");
    /// assert_eq!(DataType::new(TypeCode::UINT, 8, 3).name(), "uint8x3");
    /// assert_eq!(DataType::new(TypeCode(200), 7, 1).to_string(), "(code 200, bits 7, lanes 1)");
    /// ```
    pub fn name(self) -> String {
        let mut buffer = [0u8; 40];
        // SAFETY: the buffer is writable for its whole length, which is passed as `size`;
        // the facade writes at most that many bytes and never fails.
        let length =
            unsafe { sys::dlpm_dtype_name(self.0, buffer.as_mut_ptr().cast(), buffer.len()) };
        let kept = length.min(buffer.len() - 1);
        String::from_utf8_lossy(&buffer[..kept]).into_owned()
    }
}

impl DataType {
    /// The dtype named `name`, the inverse of [`DataType::name`] (the facade's
    /// `dlpm_dtype_from_name`): every name that [`DataType::name`] returns, and only those,
    /// spelled exactly so, the raw `(code C, bits B, lanes L)` form of a refused dtype
    /// included. Also [`FromStr`]: `"float32".parse::<DataType>()`.
    ///
    /// # Errors
    ///
    /// [`Status::INVALID_DTYPE`], naming the text, for any other text.
    ///
    /// ```
    /// use dlpack_mdspan::{DataType, Status, TypeCode};
    /// assert_eq!(DataType::from_name("float32")?, DataType::F32);
    /// assert_eq!("uint8x3".parse::<DataType>()?, DataType::new(TypeCode::UINT, 8, 3));
    /// assert_eq!(DataType::from_name("float").unwrap_err().status(), Status::INVALID_DTYPE);
    /// # Ok::<(), dlpack_mdspan::Error>(())
    /// ```
    pub fn from_name(name: &str) -> Result<DataType, Error> {
        let Ok(text) = CString::new(name) else {
            return Err(Error::new(
                Status::INVALID_DTYPE,
                format!("{name:?} names no DLPack dtype: it holds a NUL byte"),
            ));
        };
        let mut out = MaybeUninit::<sys::DLDataType>::uninit();
        // SAFETY: `text` is NUL-terminated and lives for the call; `out` is writable.
        check(unsafe { sys::dlpm_dtype_from_name(text.as_ptr(), out.as_mut_ptr()) })?;
        // SAFETY: written by the facade on success.
        Ok(DataType(unsafe { out.assume_init() }))
    }
}

/// [`DataType::from_name`]: the inverse of `Display`.
impl FromStr for DataType {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        DataType::from_name(name)
    }
}

/// The dtype's name ([`DataType::name`]), e.g. `float32`.
impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl fmt::Debug for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DataType({:?}, bits {}, lanes {})",
            self.code(),
            self.bits(),
            self.lanes()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // storage_itemsize (a const fn) is the facade's answer for every bit width, every lane
    // count and both storage forms: the whole domain of (bits, lanes, padded). The code
    // does not enter the core's rule (tests/ffi/facade_queries.test.cpp holds the facade to
    // the core for every code); a few codes are tried all the same.
    #[test]
    fn storage_itemsize_is_the_facades_answer_everywhere() {
        for bits in 0..=u8::MAX {
            for lanes in 0..=u16::MAX {
                let code = [TypeCode::FLOAT, TypeCode::UINT, TypeCode::FLOAT4_E2M1FN]
                    [usize::from(lanes % 3)];
                let dtype = DataType::new(code, bits, lanes);
                for padded in [false, true] {
                    // SAFETY: a plain function of its by-value arguments.
                    let facade = unsafe { sys::dlpm_storage_itemsize(dtype.0, i32::from(padded)) };
                    assert_eq!(
                        dtype.storage_itemsize(padded).unwrap_or(0),
                        facade,
                        "bits {bits}, lanes {lanes}, padded {padded}"
                    );
                }
            }
        }
    }

    // from_name inverts name: every (code, bits) with one and four lanes, the raw form of a
    // refused dtype included; any other text, a name with a NUL byte or a near miss, is
    // INVALID_DTYPE naming it.
    #[test]
    fn from_name_inverts_name() {
        for code in 0..=u8::MAX {
            for bits in [1u8, 4, 6, 7, 8, 16, 32, 64, 128] {
                for lanes in [1u16, 4] {
                    let dtype = DataType::new(TypeCode(code), bits, lanes);
                    let name = dtype.name();
                    let back: DataType = name.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(back, dtype, "{name}");
                }
            }
        }
        for text in [
            "",
            "float",
            "Float32",
            "float32 ",
            "float32x",
            "int8\0",
            "(code 2, bits 32)",
        ] {
            let e = DataType::from_name(text).expect_err(text);
            assert_eq!(e.status(), Status::INVALID_DTYPE, "{text:?}");
        }
        let nul = DataType::from_name("float32\0x").expect_err("a NUL byte");
        assert_eq!(nul.status(), Status::INVALID_DTYPE);
        assert!(nul.message().contains("NUL"), "{}", nul.message());
        let near = DataType::from_name("float33").expect_err("float33");
        assert!(near.message().contains("float33"), "{}", near.message());
    }
}
