// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Newtypes over the DLPack integers and structs, and the element types.

use std::fmt;
use std::ops::{BitAnd, BitOr, BitOrAssign};

use dlpack_mdspan_sys as sys;

/// A DLPack device type (`DLDeviceType`). Unknown values from newer producers are
/// representable.
///
/// ```
/// use dlpack_mdspan::DeviceType;
/// assert_eq!(DeviceType::CUDA.0, 2);
/// assert!(DeviceType::CUDA_HOST.is_host_accessible());
/// assert!(!DeviceType::CUDA.is_host_accessible());
/// assert!(!DeviceType(99).is_host_accessible());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct DeviceType(pub sys::DLDeviceType);

impl DeviceType {
    /// `kDLCPU`.
    pub const CPU: DeviceType = DeviceType(sys::kDLCPU);
    /// `kDLCUDA`.
    pub const CUDA: DeviceType = DeviceType(sys::kDLCUDA);
    /// `kDLCUDAHost` (pinned host memory).
    pub const CUDA_HOST: DeviceType = DeviceType(sys::kDLCUDAHost);
    /// `kDLOpenCL`.
    pub const OPENCL: DeviceType = DeviceType(sys::kDLOpenCL);
    /// `kDLVulkan`.
    pub const VULKAN: DeviceType = DeviceType(sys::kDLVulkan);
    /// `kDLMetal`.
    pub const METAL: DeviceType = DeviceType(sys::kDLMetal);
    /// `kDLVPI`.
    pub const VPI: DeviceType = DeviceType(sys::kDLVPI);
    /// `kDLROCM`.
    pub const ROCM: DeviceType = DeviceType(sys::kDLROCM);
    /// `kDLROCMHost` (pinned host memory).
    pub const ROCM_HOST: DeviceType = DeviceType(sys::kDLROCMHost);
    /// `kDLExtDev`.
    pub const EXT_DEV: DeviceType = DeviceType(sys::kDLExtDev);
    /// `kDLCUDAManaged` (unified memory).
    pub const CUDA_MANAGED: DeviceType = DeviceType(sys::kDLCUDAManaged);
    /// `kDLOneAPI`.
    pub const ONE_API: DeviceType = DeviceType(sys::kDLOneAPI);
    /// `kDLWebGPU`.
    pub const WEBGPU: DeviceType = DeviceType(sys::kDLWebGPU);
    /// `kDLHexagon`.
    pub const HEXAGON: DeviceType = DeviceType(sys::kDLHexagon);
    /// `kDLMAIA`.
    pub const MAIA: DeviceType = DeviceType(sys::kDLMAIA);
    /// `kDLTrn`.
    pub const TRN: DeviceType = DeviceType(sys::kDLTrn);

    /// The device types whose memory the CPU may dereference, the same set the C++ core's
    /// default accessor accepts: `kDLCPU`, `kDLCUDAHost`, `kDLCUDAManaged`, `kDLROCMHost`.
    /// Only these allow element access through views.
    pub const HOST_ACCESSIBLE: [DeviceType; 4] = [
        DeviceType::CPU,
        DeviceType::CUDA_HOST,
        DeviceType::CUDA_MANAGED,
        DeviceType::ROCM_HOST,
    ];

    /// Whether the CPU may dereference this device's memory (see [`Self::HOST_ACCESSIBLE`]).
    pub fn is_host_accessible(self) -> bool {
        Self::HOST_ACCESSIBLE.contains(&self)
    }
}

impl fmt::Debug for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.0 {
            sys::kDLCPU => "kDLCPU",
            sys::kDLCUDA => "kDLCUDA",
            sys::kDLCUDAHost => "kDLCUDAHost",
            sys::kDLOpenCL => "kDLOpenCL",
            sys::kDLVulkan => "kDLVulkan",
            sys::kDLMetal => "kDLMetal",
            sys::kDLVPI => "kDLVPI",
            sys::kDLROCM => "kDLROCM",
            sys::kDLROCMHost => "kDLROCMHost",
            sys::kDLExtDev => "kDLExtDev",
            sys::kDLCUDAManaged => "kDLCUDAManaged",
            sys::kDLOneAPI => "kDLOneAPI",
            sys::kDLWebGPU => "kDLWebGPU",
            sys::kDLHexagon => "kDLHexagon",
            sys::kDLMAIA => "kDLMAIA",
            sys::kDLTrn => "kDLTrn",
            other => return write!(f, "DeviceType({other})"),
        };
        f.write_str(name)
    }
}

/// A device: type and ordinal (`DLDevice`).
///
/// ```
/// use dlpack_mdspan::{Device, DeviceType};
/// let gpu1 = Device::new(DeviceType::CUDA, 1);
/// assert_eq!(gpu1.device_type(), DeviceType::CUDA);
/// assert_eq!(gpu1.device_id(), 1);
/// assert_eq!(Device::CPU.device_type(), DeviceType::CPU);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Device(pub sys::DLDevice);

impl Device {
    /// The CPU, ordinal 0.
    pub const CPU: Device = Device::new(DeviceType::CPU, 0);

    /// A device of type `device_type` and ordinal `device_id`.
    pub const fn new(device_type: DeviceType, device_id: i32) -> Self {
        Device(sys::DLDevice {
            device_type: device_type.0,
            device_id,
        })
    }

    /// The device type.
    pub const fn device_type(self) -> DeviceType {
        DeviceType(self.0.device_type)
    }

    /// The device ordinal.
    pub const fn device_id(self) -> i32 {
        self.0.device_id
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({:?}, {})", self.device_type(), self.device_id())
    }
}

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

    /// Bytes per element as stored, the C++ core's `storage_itemsize`: `bits * lanes / 8`
    /// when packed, or, for a sub-byte type (`bits < 8`) stored padded (DLPack's
    /// `IS_SUBBYTE_TYPE_PADDED`), one byte per lane. `None` when that is not a whole,
    /// non-zero number of bytes (a packed odd count of 4-bit lanes, zero bits or lanes).
    ///
    /// ```
    /// use dlpack_mdspan::{DataType, TypeCode};
    /// assert_eq!(DataType::BF16.storage_size(false), Some(2));
    /// assert_eq!(DataType::new(TypeCode::UINT, 8, 3).storage_size(false), Some(3));
    /// let fp4 = DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 1);
    /// assert_eq!(fp4.storage_size(false), None); // half a byte
    /// assert_eq!(fp4.storage_size(true), Some(1)); // padded: one byte per lane
    /// assert_eq!(DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 2).storage_size(false), Some(1));
    /// ```
    pub const fn storage_size(self, subbyte_padded: bool) -> Option<usize> {
        let (bits, lanes) = (self.0.bits as usize, self.0.lanes as usize);
        let size = if subbyte_padded && bits < 8 {
            lanes
        } else if (bits * lanes) % 8 == 0 {
            bits * lanes / 8
        } else {
            0
        };
        if bits == 0 || size == 0 {
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

/// A single-precision complex number with the C/C++/NumPy layout (`complex64`,
/// `std::complex<float>`): real part, then imaginary part.
///
/// ```
/// use dlpack_mdspan::{Complex32, DataType, Element};
/// let z = Complex32::new(1.0, -2.0);
/// assert_eq!((z.re, z.im), (1.0, -2.0));
/// assert_eq!(Complex32::DTYPE, DataType::COMPLEX64);
/// ```
#[derive(Clone, Copy, PartialEq, Debug, Default)]
#[repr(C)]
pub struct Complex32 {
    /// Real part.
    pub re: f32,
    /// Imaginary part.
    pub im: f32,
}

impl Complex32 {
    /// `re + im·i`.
    pub const fn new(re: f32, im: f32) -> Self {
        Complex32 { re, im }
    }
}

/// A double-precision complex number with the C/C++/NumPy layout (`complex128`,
/// `std::complex<double>`): real part, then imaginary part.
///
/// ```
/// use dlpack_mdspan::{Complex64, DataType, Element};
/// let z = Complex64::new(0.5, 4.0);
/// assert_eq!(z.im, 4.0);
/// assert_eq!(Complex64::DTYPE, DataType::COMPLEX128);
/// ```
#[derive(Clone, Copy, PartialEq, Debug, Default)]
#[repr(C)]
pub struct Complex64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex64 {
    /// `re + im·i`.
    pub const fn new(re: f64, im: f64) -> Self {
        Complex64 { re, im }
    }
}

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

/// An element type the views can read and write, and `from_vec` can export: its DLPack
/// dtype must match the tensor's (code, bits, lanes) exactly. The Rust counterpart of the
/// C++ library's `dtype_traits<T>`.
///
/// Implemented for `u8`..`u64`, `i8`..`i64`, `f32`, `f64`, `bool`, [`F16`], [`BF16`],
/// [`Complex32`] and [`Complex64`]. Every bit pattern is a valid value for all of them
/// except `bool`, whose bytes must be 0 or 1 (DLPack's `kDLBool` convention, which NumPy
/// and PyTorch follow).
///
/// # Registering your own element type
///
/// Implement it for a plain-old-data type whose bytes are one element of a DLPack dtype,
/// for instance three `uint8` lanes, and check the size at compile time with
/// [`assert_element_layout`]:
///
/// ```
/// use dlpack_mdspan::{assert_element_layout, DataType, Element, ManagedTensor, TypeCode};
///
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Rgb {
///     r: u8,
///     g: u8,
///     b: u8,
/// }
///
/// // SAFETY: three u8 fields, so 3 bytes (8 bits * 3 lanes) with no padding, alignment 1;
/// // every bit pattern is a valid Rgb; no interior mutability; the code is not kDLBool.
/// unsafe impl Element for Rgb {
///     const DTYPE: DataType = DataType::new(TypeCode::UINT, 8, 3);
/// }
/// const _: () = assert_element_layout::<Rgb>(); // a size mismatch fails the build
///
/// let t = ManagedTensor::from_vec(vec![Rgb { r: 1, g: 2, b: 3 }; 4], &[2, 2])?;
/// assert_eq!(t.dtype(), DataType::new(TypeCode::UINT, 8, 3));
/// assert_eq!(t.view::<Rgb>()?.get(&[1, 1]), Some(&Rgb { r: 1, g: 2, b: 3 }));
/// assert!(t.view::<u8>().is_err()); // (kDLUInt, 8, 3) is not uint8
/// # Ok::<(), dlpack_mdspan::Error>(())
/// ```
///
/// Views check the size at run time as well: a `T` whose `size_of` is not one element of
/// `T::DTYPE` as the tensor stores it gets [`Status::SUBBYTE_NOT_VIEWABLE`](crate::Status::SUBBYTE_NOT_VIEWABLE)
/// (the C++ library's `errc::subbyte_not_viewable`), never a view that reads past the
/// elements the facade validated.
///
/// # Safety
///
/// With `T::DTYPE = (code, bits, lanes)`, an implementor promises:
///
/// 1. **Size.** `size_of::<T>() * 8 == bits * lanes` (packed: the lanes fill `T` bit for
///    bit, e.g. `(kDLUInt, 8, 3)` in 3 bytes, or two 4-bit lanes in one byte), or
///    `bits < 8` and `size_of::<T>() == lanes` (padded sub-byte: one byte per lane, the
///    form DLPack flags `IS_SUBBYTE_TYPE_PADDED`). [`assert_element_layout`] checks exactly
///    this. Exports ([`ManagedTensor::from_vec`](crate::ManagedTensor::from_vec) and its
///    variants) describe a `Vec<T>` with this dtype to foreign consumers, which read
///    `bits * lanes / 8` bytes per element.
/// 2. **No uninitialised bytes.** `T` has no padding bytes (nor `MaybeUninit` fields):
///    every byte of every value is initialised, because exports hand the bytes to other
///    languages and to views of other element types with the same dtype.
/// 3. **Every bit pattern is valid.** Any initialised `size_of::<T>()` bytes are a valid
///    `T` (so no `bool`, `char`, enum, reference, `NonZero*` or other niche-carrying
///    field): views hand out `&T` to memory written by C, C++, Python, or through another
///    element type with the same dtype. If the code is `kDLBool`, the converse holds too:
///    every byte of every value of `T` is 0 or 1, since such memory may be viewed as `bool`.
/// 4. **No interior mutability** (`UnsafeCell`, `Cell`, atomics): a shared view of a
///    READ_ONLY or foreign tensor hands out `&T`, through which nothing may write.
///
/// `Copy + Send + Sync + 'static` are required by the trait. Alignment is free: the
/// facade refuses data that is not aligned for `T` ([`Status::MISALIGNED_DATA`](crate::Status::MISALIGNED_DATA)), so a
/// `T` aligned more strictly than its lanes only narrows which tensors it can view.
///
/// Not a safety matter, but what makes the data meaningful: the bytes of `T` are the
/// dtype's bytes as C and C++ store them (lanes in order, each in the platform's byte
/// order), the same as the C++ side's `dtype_traits<T>` registration for that type.
///
/// ```
/// use dlpack_mdspan::{DataType, Element};
/// assert_eq!(<u16 as Element>::DTYPE, DataType::U16);
/// assert_eq!(<bool as Element>::DTYPE, DataType::BOOL);
/// ```
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// The DLPack dtype of this type.
    const DTYPE: DataType;
}

/// Whether `size_of::<T>()` is one element of `T::DTYPE`: packed
/// (`size_of::<T>() * 8 == bits * lanes`) or padded sub-byte (`bits < 8` and
/// `size_of::<T>() == lanes`), rule 1 of [`Element`]'s safety contract.
///
/// ```
/// use dlpack_mdspan::{element_layout_ok, F16};
/// assert!(element_layout_ok::<F16>());
/// assert!(element_layout_ok::<u64>());
/// ```
pub const fn element_layout_ok<T: Element>() -> bool {
    let size = std::mem::size_of::<T>();
    matches!(T::DTYPE.storage_size(false), Some(s) if s == size)
        || (T::DTYPE.bits() < 8 && matches!(T::DTYPE.storage_size(true), Some(s) if s == size))
}

/// Fails (at compile time, in a `const` item) unless `size_of::<T>()` is one element of
/// `T::DTYPE`, packed or padded sub-byte: see [`element_layout_ok`]. The Rust counterpart of
/// the C++ library's `static_assert` on registered dtypes.
///
/// ```
/// use dlpack_mdspan::{assert_element_layout, DataType, Element, TypeCode};
///
/// #[derive(Clone, Copy)]
/// #[repr(transparent)]
/// struct Fp8E4m3fn(u8);
/// // SAFETY: one byte (8 bits, 1 lane), any bit pattern valid, no interior mutability.
/// unsafe impl Element for Fp8E4m3fn {
///     const DTYPE: DataType = DataType::new(TypeCode::FLOAT8_E4M3FN, 8, 1);
/// }
/// const _: () = assert_element_layout::<Fp8E4m3fn>();
/// ```
///
/// A mismatch does not compile:
///
/// ```compile_fail,E0080
/// use dlpack_mdspan::{assert_element_layout, DataType, Element, TypeCode};
///
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Rgba(u8, u8, u8, u8);
/// // Wrong: 4 bytes registered as 3 lanes of 8 bits.
/// unsafe impl Element for Rgba {
///     const DTYPE: DataType = DataType::new(TypeCode::UINT, 8, 3);
/// }
/// const _: () = assert_element_layout::<Rgba>();
/// ```
pub const fn assert_element_layout<T: Element>() {
    assert!(
        element_layout_ok::<T>(),
        "dlpack_mdspan: size_of::<T>() matches neither the packed (bits * lanes / 8) nor the \
         padded (one byte per sub-byte lane) form of T::DTYPE"
    );
}

macro_rules! element {
    ($($t:ty => $dtype:expr),* $(,)?) => {$(
        // SAFETY: a primitive, a #[repr(C)] pair of floats or a #[repr(transparent)] u16
        // whose size is bits * lanes / 8 (asserted below), with no padding, no interior
        // mutability, and every bit pattern valid except for bool, the kDLBool type, whose
        // values are the bytes 0 and 1.
        unsafe impl Element for $t {
            const DTYPE: DataType = $dtype;
        }
        const _: () = {
            assert_element_layout::<$t>();
            assert!(std::mem::size_of::<$t>() * 8 == $dtype.bits() as usize * $dtype.lanes() as usize);
        };
    )*};
}

element! {
    u8 => DataType::U8, u16 => DataType::U16, u32 => DataType::U32, u64 => DataType::U64,
    i8 => DataType::I8, i16 => DataType::I16, i32 => DataType::I32, i64 => DataType::I64,
    f32 => DataType::F32, f64 => DataType::F64,
    bool => DataType::BOOL,
    F16 => DataType::F16, BF16 => DataType::BF16,
    Complex32 => DataType::COMPLEX64, Complex64 => DataType::COMPLEX128,
}
