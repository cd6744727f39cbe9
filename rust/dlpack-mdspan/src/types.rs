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

mod sealed {
    pub trait Sealed {}
}

/// An element type the views can read and write: its DLPack dtype must match the tensor's
/// (code, bits, lanes) exactly.
///
/// Sealed: implemented for `u8`..`u64`, `i8`..`i64`, `f32`, `f64`, `bool`, [`Complex32`]
/// and [`Complex64`], types whose size is `bits * lanes / 8` and whose alignment divides
/// their size. Every bit pattern is a valid value for all of them except `bool`, whose
/// bytes must be 0 or 1 (DLPack's `kDLBool` convention, which NumPy and PyTorch follow).
///
/// ```
/// use dlpack_mdspan::{DataType, Element};
/// assert_eq!(<u16 as Element>::DTYPE, DataType::U16);
/// assert_eq!(<bool as Element>::DTYPE, DataType::BOOL);
/// ```
pub trait Element: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The DLPack dtype of this type.
    const DTYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $dtype:expr),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DataType = $dtype;
        }
        const _: () = assert!(
            std::mem::size_of::<$t>() * 8 == $dtype.bits() as usize * $dtype.lanes() as usize
                && std::mem::size_of::<$t>() % std::mem::align_of::<$t>() == 0
        );
    )*};
}

element! {
    u8 => DataType::U8, u16 => DataType::U16, u32 => DataType::U32, u64 => DataType::U64,
    i8 => DataType::I8, i16 => DataType::I16, i32 => DataType::I32, i64 => DataType::I64,
    f32 => DataType::F32, f64 => DataType::F64,
    bool => DataType::BOOL,
    Complex32 => DataType::COMPLEX64, Complex64 => DataType::COMPLEX128,
}
