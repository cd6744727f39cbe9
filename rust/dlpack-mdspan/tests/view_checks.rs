// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//! The views' one facade call (`dlpm_check_tensor`) and per-element offsets without
//! re-validation (`dlpm_element_offset_prechecked`) against the calls they replace, made
//! here by hand on many generated tensors: `dlpm_check` / `dlpm_check_managed` with the
//! view's requirements (the device list from `dlpm_is_host_accessible`), the element size
//! from `dlpm_storage_itemsize`, `dlpm_layout`, and `dlpm_element_offset`. Every tensor the
//! old calls refused is refused, with the same status and message, and every accepted one
//! gets the same shape, strides, length and element addresses.

mod common;

use std::ptr;

use common::last_error;
use dlpack_mdspan::{
    sys, DataType, Element, Error, ManagedTensor, Status, TensorView, TensorViewMut, TypeCode,
};

/// splitmix64: a dependency-free, reproducible generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in lo..=hi.
    fn pick(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    fn one_in(&mut self, n: i64) -> bool {
        self.pick(1, n) == 1
    }
}

/// One padded fp4 value per byte (the IS_SUBBYTE_TYPE_PADDED form).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fp4(#[allow(dead_code)] u8);
// SAFETY: one byte per 4-bit lane (padded); any bit pattern; no interior mutability.
unsafe impl Element for Fp4 {
    const DTYPE: DataType = DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 1);
}

/// Two packed fp4 values in one byte: viewable packed, refused when flagged padded.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fp4x2(#[allow(dead_code)] u8);
// SAFETY: two 4-bit lanes in one byte (packed); any bit pattern; no interior mutability.
unsafe impl Element for Fp4x2 {
    const DTYPE: DataType = DataType::new(TypeCode::FLOAT4_E2M1FN, 4, 2);
}

/// The arrays of a generated tensor, which its `DLTensor` points into.
struct Generated {
    shape: [i64; 4],
    strides: [i64; 4],
    /// One byte in from `shape`, for a misaligned shape pointer.
    unaligned: [u64; 5],
}

/// A random tensor over `base` (the middle of a 4096-byte buffer: every layout generated
/// stays inside it), and the flags a managed tensor would carry.
fn generate(rng: &mut Rng, g: &mut Generated, base: *mut u8) -> (sys::DLTensor, u64) {
    let dtypes = [
        DataType::F32,
        DataType::U8,
        DataType::I16,
        DataType::F64,
        DataType::new(TypeCode::UINT, 8, 3),
        Fp4::DTYPE,
        Fp4x2::DTYPE,
        DataType::new(TypeCode::INT, 6, 1), // refused: no 6-bit ints
    ];
    let devices = [
        sys::kDLCPU,
        sys::kDLCPU,
        sys::kDLCPU,
        sys::kDLCUDA,
        sys::kDLCUDAHost,
        sys::kDLCUDAManaged,
        sys::kDLROCMHost,
        sys::kDLOpenCL,
        99,
    ];
    let ndim = rng.pick(0, 4) as i32;
    for r in 0..4 {
        g.shape[r] = if rng.one_in(40) { -1 } else { rng.pick(0, 4) };
        g.strides[r] = rng.pick(-6, 6);
    }
    let dtype = dtypes[rng.pick(0, dtypes.len() as i64 - 1) as usize];
    let mut flags = 0u64;
    if rng.one_in(5) {
        flags |= sys::DLPACK_FLAG_BITMASK_READ_ONLY;
    }
    if dtype.bits() < 8 && rng.one_in(2) {
        flags |= sys::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
    }
    let item = dtype.storage_itemsize(true).unwrap_or(1) as u64;
    let byte_offset = rng.pick(0, 32) as u64 * item + u64::from(rng.one_in(10));
    let data = match rng.pick(0, 9) {
        0 => ptr::null_mut(),
        1 => base.wrapping_add(1),
        _ => base,
    };
    let mut shape = g.shape.as_mut_ptr();
    if rng.one_in(30) {
        let bytes = g.unaligned.as_mut_ptr().cast::<u8>();
        for (r, &e) in g.shape.iter().enumerate() {
            // SAFETY: 1 + 8 * (r + 1) <= 40 bytes: inside `unaligned`.
            unsafe { bytes.add(1 + 8 * r).cast::<i64>().write_unaligned(e) };
        }
        shape = bytes.wrapping_add(1).cast::<i64>();
    }
    let t = sys::DLTensor {
        data: data.cast(),
        device: sys::DLDevice {
            device_type: devices[rng.pick(0, devices.len() as i64 - 1) as usize],
            device_id: if rng.one_in(20) { -1 } else { 0 },
        },
        ndim: if rng.one_in(50) { 65 } else { ndim },
        dtype: dtype.0,
        shape: if ndim > 0 && rng.one_in(40) {
            ptr::null_mut()
        } else {
            shape
        },
        strides: if rng.one_in(4) {
            ptr::null_mut()
        } else {
            g.strides.as_mut_ptr()
        },
        byte_offset,
    };
    (t, flags)
}

/// What a view of `T` was before its one facade call: its checks and its layout, each from
/// its own facade call, or the refusal's status and message.
struct OldView {
    strides: Vec<i64>,
    numel: i64,
}

fn old_view<T: Element>(
    t: &sys::DLTensor,
    flags: Option<u64>,
    writable: bool,
) -> Result<OldView, (Status, String)> {
    let own = [t.device.device_type];
    // SAFETY: a plain function of its argument.
    let host = unsafe { sys::dlpm_is_host_accessible(own[0]) } != 0;
    let accepted: &[i32] = if host { &own } else { &[] };
    // SAFETY: zeroed is a valid bit pattern for the struct, which init then fills.
    let mut req: sys::dlpm_requirements = unsafe { std::mem::zeroed() };
    // SAFETY: req is writable.
    assert_eq!(
        unsafe { sys::dlpm_requirements_init(&mut req, sys::DLPM_REQUIREMENTS_VERSION) },
        sys::DLPM_OK
    );
    req.check_dtype = 1;
    req.dtype = T::DTYPE.0;
    req.device_types = accepted.as_ptr();
    req.num_device_types = accepted.len() as i32;
    req.min_alignment = std::mem::align_of::<T>() as u64;
    req.writable = i32::from(writable);
    let managed = sys::DLManagedTensorVersioned {
        version: sys::DLPackVersion { major: 1, minor: 3 },
        manager_ctx: ptr::null_mut(),
        deleter: None,
        flags: flags.unwrap_or(0),
        dl_tensor: *t,
    };
    // SAFETY: live structs; the facade validates before reading the arrays.
    let status = unsafe {
        match flags {
            None => sys::dlpm_check(t, &req),
            Some(_) => sys::dlpm_check_managed(&managed, &req),
        }
    };
    if status != sys::DLPM_OK {
        return Err((Status(status), last_error()));
    }
    let padded = flags.unwrap_or(0) & sys::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0;
    // SAFETY: a plain function of its arguments.
    let size = unsafe { sys::dlpm_storage_itemsize(T::DTYPE.0, i32::from(padded)) };
    if size != std::mem::size_of::<T>() {
        return Err((Status::SUBBYTE_NOT_VIEWABLE, String::new()));
    }
    let mut strides = vec![0i64; sys::DLPM_MAX_NDIM as usize];
    let mut numel = 0i64;
    // SAFETY: checked above; strides has DLPM_MAX_NDIM entries.
    let status =
        unsafe { sys::dlpm_layout(t, strides.as_mut_ptr(), sys::DLPM_MAX_NDIM, &mut numel) };
    assert_eq!(
        status,
        sys::DLPM_OK,
        "dlpm_layout after dlpm_check: {}",
        last_error()
    );
    strides.truncate(t.ndim as usize);
    Ok(OldView { strides, numel })
}

/// What a view made of a tensor: its shape, strides and length, and the address `get`
/// gave for each index tried.
type Observed<T> = (Vec<i64>, Vec<i64>, usize, Vec<Option<*const T>>);

/// The view's answer against the old calls': the same refusal, or the same layout and the
/// same address for every index tried (in and out of bounds).
fn compare<T: Element>(
    t: &sys::DLTensor,
    flags: Option<u64>,
    writable: bool,
    new: Result<Observed<T>, Error>,
    indices: &[Vec<usize>],
    counts: &mut [usize; 2],
) {
    let old = old_view::<T>(t, flags, writable);
    let context = format!(
        "T = {}, flags {flags:?}, writable {writable}, ndim {}, dtype {:?}, device {:?}",
        T::DTYPE,
        t.ndim,
        DataType(t.dtype),
        t.device.device_type
    );
    let (shape, addresses) = match (old, new) {
        (Err((status, message)), Err(e)) => {
            assert_eq!(e.status(), status, "{context}: {e}");
            if status != Status::SUBBYTE_NOT_VIEWABLE {
                assert_eq!(e.message(), message, "{context}");
            }
            counts[1] += 1;
            return;
        }
        (Ok(_), Err(e)) => panic!("{context}: the old calls accepted, the view refuses: {e}"),
        (Err((status, message)), Ok(_)) => {
            panic!("{context}: the old calls refused ({status:?}: {message}), the view accepts")
        }
        (Ok(old), Ok((shape, strides, len, addresses))) => {
            assert_eq!(strides, old.strides, "{context}");
            assert_eq!(len as i64, old.numel, "{context}");
            (shape, addresses)
        }
    };
    counts[0] += 1;
    let own_shape: &[i64] = if t.ndim == 0 {
        &[]
    } else {
        // SAFETY: accepted, so shape holds ndim entries, aligned.
        unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
    };
    assert_eq!(shape, own_shape, "{context}");
    // The old per-element call: dlpm_element_offset on the tensor, or for padded sub-byte
    // elements on its (kDLUInt, 8, size) twin.
    let mut addressed = *t;
    let padded = flags.unwrap_or(0) & sys::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0;
    let size = std::mem::size_of::<T>();
    if padded && T::DTYPE.storage_itemsize(false) != Some(size) {
        addressed.dtype = DataType::new(TypeCode::UINT, 8, size as u16).0;
    }
    for (index, got) in indices.iter().zip(addresses) {
        let expected = if index.len() != t.ndim as usize {
            None
        } else {
            let wide: Vec<i64> = index.iter().map(|&i| i as i64).collect();
            let mut offset = 0i64;
            // SAFETY: a tensor the facade accepted; wide has ndim entries.
            let status =
                unsafe { sys::dlpm_element_offset(&addressed, wide.as_ptr(), &mut offset) };
            (status == sys::DLPM_OK).then(|| {
                t.data
                    .cast::<u8>()
                    .wrapping_offset(offset as isize)
                    .cast::<T>()
                    .cast_const()
            })
        };
        assert_eq!(got, expected, "{context}: index {index:?}");
    }
}

/// Indices for a tensor of this shape: in bounds, one past an end, and of the wrong rank.
fn indices(rng: &mut Rng, t: &sys::DLTensor) -> Vec<Vec<usize>> {
    let ndim = t.ndim.clamp(0, 4) as usize;
    let shape: Vec<i64> = if t.shape.is_null() || !t.shape.is_aligned() || t.ndim > 4 {
        vec![1; ndim]
    } else {
        // SAFETY: ndim <= 4 entries of a Generated's aligned shape.
        unsafe { std::slice::from_raw_parts(t.shape, ndim) }.to_vec()
    };
    let mut out = Vec::new();
    for _ in 0..6 {
        out.push(
            shape
                .iter()
                .map(|&e| rng.pick(0, e.max(0)) as usize)
                .collect(),
        );
    }
    out.push(vec![0; ndim + 1]);
    out
}

fn check_type<T: Element>(rng: &mut Rng, base: *mut u8, counts: &mut [usize; 2]) {
    let mut g = Generated {
        shape: [0; 4],
        strides: [0; 4],
        unaligned: [0; 5],
    };
    let (t, flags) = generate(rng, &mut g, base);
    let idx = indices(rng, &t);
    let observe =
        |shape: &[i64], strides: &[i64], len: usize, get: &dyn Fn(&[usize]) -> Option<*const T>| {
            (
                shape.to_vec(),
                strides.to_vec(),
                len,
                idx.iter().map(|i| get(i)).collect::<Vec<_>>(),
            )
        };

    // A bare DLTensor: TensorView::from_raw and TensorViewMut::from_raw (no flags, so
    // never READ_ONLY), against dlpm_check.
    // SAFETY: every layout generated stays inside the buffer, which outlives the view and
    // holds initialised bytes (any bit pattern is a valid T); nothing else writes it.
    let new = unsafe { TensorView::<T>::from_raw(&t) }.map(|v| {
        observe(v.shape(), v.strides(), v.len(), &|i| {
            v.get(i).map(ptr::from_ref)
        })
    });
    compare::<T>(&t, None, false, new, &idx, counts);
    // SAFETY: as above; the buffer is writable and only this view reaches it.
    let new = unsafe { TensorViewMut::<T>::from_raw(&t) }.map(|v| {
        observe(v.shape(), v.strides(), v.len(), &|i| {
            v.get(i).map(ptr::from_ref)
        })
    });
    compare::<T>(&t, None, false, new, &idx, counts);

    // The same tensor managed, with flags: view and view_mut against dlpm_check_managed.
    let mut managed = sys::DLManagedTensorVersioned {
        version: sys::DLPackVersion { major: 1, minor: 3 },
        manager_ctx: ptr::null_mut(),
        deleter: None, // ours, on the stack: nothing to release
        flags,
        dl_tensor: t,
    };
    // SAFETY: version 1, no deleter; the struct, its arrays and the buffer outlive the
    // handle and are written by nothing else while it lives.
    let mut m = unsafe { ManagedTensor::from_raw(&mut managed) }.expect("version 1");
    let new = m.view::<T>().map(|v| {
        observe(v.shape(), v.strides(), v.len(), &|i| {
            v.get(i).map(ptr::from_ref)
        })
    });
    compare::<T>(&t, Some(flags), false, new, &idx, counts);
    let new = m.view_mut::<T>().map(|v| {
        observe(v.shape(), v.strides(), v.len(), &|i| {
            v.get(i).map(ptr::from_ref)
        })
    });
    compare::<T>(&t, Some(flags), true, new, &idx, counts);
    drop(m);
}

#[test]
fn views_refuse_and_address_what_the_separate_calls_did() {
    let mut buffer = vec![0u64; 512]; // 4096 bytes, 8-byte aligned
    for (i, w) in buffer.iter_mut().enumerate() {
        *w = (i as u64).wrapping_mul(0x0101_0101_0101_0101);
    }
    let base = buffer.as_mut_ptr().cast::<u8>().wrapping_add(2048);
    let mut rng = Rng(20261125);
    let mut counts = [0usize; 2]; // accepted, refused
    for _ in 0..3000 {
        check_type::<f32>(&mut rng, base, &mut counts);
        check_type::<u8>(&mut rng, base, &mut counts);
        check_type::<i16>(&mut rng, base, &mut counts);
        check_type::<Fp4>(&mut rng, base, &mut counts);
        check_type::<Fp4x2>(&mut rng, base, &mut counts);
    }
    assert!(counts[0] > 1000, "accepted {}", counts[0]);
    assert!(counts[1] > 20000, "refused {}", counts[1]);
}

/// What the Vec export answered before its export went through
/// `dlpm_managed_new_inline` with the Vec's size: the layout's bytes by `dlpm_byte_span`
/// (which validates the description first), refused when they reach outside the Vec.
fn old_from_vec(
    len: usize,
    shape: &[i64],
    strides: Option<&[i64]>,
    offset: usize,
) -> Result<(), (Status, String)> {
    let mut data = vec![0u32; len];
    let d = sys::DLTensor {
        data: data.as_mut_ptr().cast(),
        device: sys::DLDevice {
            device_type: sys::kDLCPU,
            device_id: 0,
        },
        ndim: shape.len() as i32,
        dtype: DataType::U32.0,
        shape: shape.as_ptr().cast_mut(),
        strides: strides.map_or(ptr::null_mut(), |s| s.as_ptr().cast_mut()),
        byte_offset: offset as u64 * 4,
    };
    let (mut begin, mut end) = (0i64, 0i64);
    // SAFETY: shape and strides hold ndim entries; begin and end are valid out-parameters.
    let status = unsafe { sys::dlpm_byte_span(&d, 0, &mut begin, &mut end) };
    if status != sys::DLPM_OK {
        return Err((Status(status), last_error()));
    }
    if begin != end && (begin < 0 || end > len as i64 * 4) {
        return Err((
            Status::INVALID_ARGUMENT,
            format!(
                "the layout addresses elements {} to {} but the Vec holds {} elements",
                begin.div_euclid(4),
                (end - 1).div_euclid(4),
                len
            ),
        ));
    }
    Ok(())
}

#[test]
fn from_vec_refuses_what_the_byte_span_check_refused() {
    let mut rng = Rng(20261126);
    let (mut accepted, mut outside, mut invalid) = (0, 0, 0);
    for _ in 0..20000 {
        let ndim = rng.pick(0, 3) as usize;
        let shape: Vec<i64> = (0..ndim)
            .map(|_| if rng.one_in(30) { -1 } else { rng.pick(0, 4) })
            .collect();
        let strides: Vec<i64> = (0..ndim).map(|_| rng.pick(-3, 4)).collect();
        let strides = if rng.one_in(2) {
            None
        } else {
            Some(&strides[..])
        };
        let len = rng.pick(0, 14) as usize;
        let offset = rng.pick(0, 6) as usize;
        let old = old_from_vec(len, &shape, strides, offset);
        let values: Vec<u32> = (0..len as u32).collect();
        let mut export = ManagedTensor::build_from_vec(values, &shape).offset(offset);
        if let Some(strides) = strides {
            export = export.strides(strides);
        }
        let new = export.finish();
        let context = format!("len {len}, shape {shape:?}, strides {strides:?}, offset {offset}");
        match (old, new) {
            (Ok(()), Ok(t)) => {
                accepted += 1;
                // The elements are the Vec's, where the layout says.
                let v = t.view::<u32>().expect("a valid export views");
                let mut index = vec![0usize; ndim];
                if v.is_empty() {
                    continue;
                }
                loop {
                    let at = offset as i64
                        + index
                            .iter()
                            .zip(v.strides())
                            .map(|(&i, &s)| i as i64 * s)
                            .sum::<i64>();
                    assert_eq!(v.get(&index), Some(&(at as u32)), "{context}");
                    let mut r = ndim;
                    loop {
                        if r == 0 {
                            break;
                        }
                        r -= 1;
                        index[r] += 1;
                        if (index[r] as i64) < shape[r] {
                            break;
                        }
                        index[r] = 0;
                    }
                    if index.iter().all(|&i| i == 0) {
                        break;
                    }
                }
            }
            (Err((status, message)), Err(e)) => {
                assert_eq!(
                    (e.status(), e.message()),
                    (status, &message[..]),
                    "{context}"
                );
                if status == Status::INVALID_ARGUMENT {
                    outside += 1;
                } else {
                    invalid += 1;
                }
            }
            (old, new) => panic!("{context}: before {old:?}, now {:?}", new.map(|_| ())),
        }
    }
    assert!(
        accepted > 3000 && outside > 3000 && invalid > 500,
        "{accepted} {outside} {invalid}"
    );
}
