// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! Where a tensor's memory lives: [`DeviceType`] and [`Device`].

use std::fmt;

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

    /// Whether the CPU may dereference this device's memory, the C++ core's answer
    /// (`is_host_accessible`, the facade's `dlpm_is_host_accessible`): `kDLCPU`,
    /// `kDLCUDAHost`, `kDLCUDAManaged` and `kDLROCMHost`, the device types its default
    /// accessor accepts. Only these allow element access through views.
    ///
    /// A `const fn`, so that every view asks it without a call into the facade: it states
    /// the core's rule (a bit mask over the types 0 to 31), and a unit test holds it equal
    /// to `dlpm_is_host_accessible` over every type from -65536 to 65536, the ends of the
    /// `i32` range and each power of two and its neighbours (an ignored one over every
    /// `i32`).
    pub const fn is_host_accessible(self) -> bool {
        const HOST: u32 = (1 << sys::kDLCPU)
            | (1 << sys::kDLCUDAHost)
            | (1 << sys::kDLCUDAManaged)
            | (1 << sys::kDLROCMHost);
        self.0 >= 0 && self.0 < 32 && (HOST >> self.0) & 1 != 0
    }
}

impl DeviceType {
    /// The name dlpack.h gives this device type (`"kDLCUDA"`), the facade's
    /// (`dlpm_device_type_name`); `None` for a value dlpack.h does not define.
    ///
    /// ```
    /// use dlpack_mdspan::DeviceType;
    /// assert_eq!(DeviceType::ONE_API.name(), Some("kDLOneAPI"));
    /// assert_eq!(DeviceType(99).name(), None);
    /// ```
    pub fn name(self) -> Option<&'static str> {
        // SAFETY: the facade returns a static, NUL-terminated string, never NULL.
        let name = unsafe { std::ffi::CStr::from_ptr(sys::dlpm_device_type_name(self.0)) };
        // The facade's names are ASCII; "unknown" is its word for an undefined value.
        name.to_str().ok().filter(|&n| n != "unknown")
    }
}

impl fmt::Debug for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "DeviceType({})", self.0),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    // The same over the whole i32 range: 2^32 facade calls (docs/rust.md gives the time),
    // too slow for every run (`cargo test --release -p dlpack-mdspan --lib -- --ignored`).
    #[test]
    #[ignore]
    fn is_host_accessible_is_the_facades_answer_for_every_i32() {
        let mut accepted = 0u32;
        for raw in i32::MIN..=i32::MAX {
            // SAFETY: a plain function of its by-value argument.
            let facade = unsafe { sys::dlpm_is_host_accessible(raw) } != 0;
            assert_eq!(DeviceType(raw).is_host_accessible(), facade, "{raw}");
            accepted += u32::from(facade);
        }
        assert_eq!(accepted, 4);
    }

    // is_host_accessible (a const fn) is pinned to the facade:
    // for every device type tried, host-accessible exactly when the C++ core says the CPU
    // may dereference that memory.
    #[test]
    fn is_host_accessible_is_the_facades_answer() {
        let powers = (0..31).flat_map(|k| {
            let p = 1i32 << k;
            [p - 1, p, p + 1, -p - 1, -p, -p + 1]
        });
        let types = (-65536..=65536)
            .chain(i32::MIN..=i32::MIN + 4096)
            .chain(i32::MAX - 4096..=i32::MAX)
            .chain(powers);
        for raw in types {
            let device_type = DeviceType(raw);
            // SAFETY: a plain function of its by-value argument.
            let facade = unsafe { sys::dlpm_is_host_accessible(raw) } == 1;
            assert_eq!(device_type.is_host_accessible(), facade, "{device_type:?}");
        }
    }

    // Debug prints the facade's name (dlpm_device_type_name), or the number when dlpack.h
    // defines none.
    #[test]
    fn debug_names_are_the_facades() {
        assert_eq!(format!("{:?}", DeviceType::CUDA_HOST), "kDLCUDAHost");
        assert_eq!(format!("{:?}", DeviceType::TRN), "kDLTrn");
        assert_eq!(format!("{:?}", DeviceType(-1)), "DeviceType(-1)");
        assert_eq!(
            format!("{:?}", Device::new(DeviceType::CUDA, 1)),
            "Device(kDLCUDA, 1)"
        );
    }
}
