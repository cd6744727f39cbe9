# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""DLPack's fp8 / fp6 / fp4 dtypes against ml_dtypes and JAX (dtype.hpp's storage types).

Real producers: NumPy refuses to export ml_dtypes arrays (its __dlpack__ takes only integer,
float and complex dtypes), so arrays reach us through JAX, which exports every fp8 dtype and
float4_e2m1fn (packed, two values per byte) but no fp6 dtype. fp6, and padded fp4 as
ml_dtypes stores it, go through a managed tensor of our own made from the ml_dtypes bytes
(typed.cpp: narrow_tensor), which carries IS_SUBBYTE_TYPE_PADDED.

Every check is on the raw bytes: the storage types have no arithmetic. ml_dtypes and JAX are
the modern interpreter's; the legacy one has neither, and runs only the raw-bytes test.
"""
import ctypes
import os

import pytest

import dlpm_interop as dl

FLAVOUR = os.environ.get("DLPM_PYTHON_FLAVOUR", "modern")

# ml_dtypes name -> DLPack (code, bits), dlpack.h 1.3
CODES = {
    "float8_e3m4": (7, 8), "float8_e4m3": (8, 8), "float8_e4m3b11fnuz": (9, 8), "float8_e4m3fn": (10, 8),
    "float8_e4m3fnuz": (11, 8), "float8_e5m2": (12, 8), "float8_e5m2fnuz": (13, 8), "float8_e8m0fnu": (14, 8),
    "float6_e2m3fn": (15, 6), "float6_e3m2fn": (16, 6), "float4_e2m1fn": (17, 4),
}
FP8 = [n for n, (_, bits) in CODES.items() if bits == 8]
SUB_BYTE = [n for n, (_, bits) in CODES.items() if bits < 8]


@pytest.fixture
def ml():
    if FLAVOUR == "legacy":
        pytest.skip("ml_dtypes is tested with the modern interpreter")
    import ml_dtypes  # required there: a missing ml_dtypes fails the run

    return ml_dtypes


def every_encoding(np, ml, name):
    """Every bit pattern of the type (NaNs and infinities included) as an ml_dtypes array."""
    bits = CODES[name][1]
    return np.arange(2**bits, dtype=np.uint8).view(getattr(ml, name))


def raw(np, a):
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


@pytest.mark.parametrize("name", list(CODES))
def test_raw_bytes_round_trip_through_a_managed_tensor(name):
    data = bytes(range(0, 2 ** CODES[name][1], 3))
    t = dl.narrow_tensor(name, data)
    got, address, padded = dl.narrow_view(t, name)
    assert got == data
    assert padded == (CODES[name][1] < 8)  # fp6 / fp4: one value per byte, flagged padded
    seen = dl.consume(t)
    assert seen["dtype"] == (*CODES[name], 1)
    assert address == seen["data_ptr"]  # both are views of the same memory
    other = "float8_e5m2" if name != "float8_e5m2" else "float8_e4m3fn"
    with pytest.raises(TypeError, match="dtype"):
        dl.narrow_view(t, other)
    with pytest.raises(ValueError, match="no narrow float type"):
        dl.narrow_view(t, "float8_e4m3fnz")


@pytest.mark.parametrize("name", list(CODES))
def test_ml_dtypes_bytes_are_our_storage(np, ml, name):
    """An ml_dtypes array's bytes, every encoding, through a C++ std::vector<T> and back."""
    h = every_encoding(np, ml, name)
    t = dl.narrow_tensor(name, raw(np, h))
    got, _, padded = dl.narrow_view(t, name)
    assert got == raw(np, h)
    assert padded == (name in SUB_BYTE)
    back = np.frombuffer(got, dtype=np.uint8).view(getattr(ml, name))
    assert back.dtype == h.dtype
    np.testing.assert_array_equal(back.astype(np.float32), h.astype(np.float32))  # NaN == NaN here


def test_numpy_refuses_to_export_ml_dtypes(np, ml):
    h = np.zeros(4, dtype=ml.float8_e4m3fn)
    with pytest.raises(BufferError, match="DLPack only supports"):
        dl.narrow_view(h, "float8_e4m3fn")


@pytest.mark.parametrize("name", FP8)
def test_jax_fp8_arrays_import_zero_copy(np, ml, jnp, name):
    h = every_encoding(np, ml, name)
    a = jnp.asarray(h)
    assert a.dtype == h.dtype
    got, address, padded = dl.narrow_view(a, name)
    assert got == raw(np, h)  # JAX keeps every encoding, NaNs included
    assert address == a.unsafe_buffer_pointer()  # zero copy
    assert not padded
    assert dl.consume(a)["dtype"] == (*CODES[name], 1)
    # The neighbouring formats are refused, never reinterpreted.
    for other in FP8:
        if other != name:
            with pytest.raises(TypeError, match="dtype"):
                dl.narrow_view(a, other)


@pytest.mark.parametrize("name", FP8)
def test_our_fp8_tensors_reach_jax(np, ml, jnp, name):
    h = every_encoding(np, ml, name)
    j = jnp.from_dlpack(dl.narrow_tensor(name, raw(np, h)))
    assert j.dtype == h.dtype
    assert raw(np, np.asarray(j)) == raw(np, h)


def test_jax_float4_is_packed_and_refused_as_one_value_per_byte(np, ml, jnp):
    h = every_encoding(np, ml, "float4_e2m1fn")[[1, 2, 7, 15, 0, 9, 3]]  # 7 values: an odd count
    a = jnp.asarray(h)
    seen = dl.consume(a)
    assert seen["dtype"] == (17, 4, 1)  # no padded flag (JAX hands out legacy capsules)
    assert seen["data_ptr"] == a.unsafe_buffer_pointer()
    # JAX's CPU buffer packs two values per byte, low nibble first: DLPack's packed form.
    nibbles = list(raw(np, h)) + [0]
    packed = bytes(lo | (hi << 4) for lo, hi in zip(nibbles[0::2], nibbles[1::2]))
    memory = ctypes.string_at(a.unsafe_buffer_pointer(), len(packed))
    assert memory[:-1] == packed[:-1]
    assert memory[-1] & 0x0F == packed[-1]  # the 8th nibble is padding JAX leaves as it finds it
    with pytest.raises(TypeError, match="is packed, which cannot be viewed as one 1-byte element each"):
        dl.narrow_view(a, "float4_e2m1fn")


@pytest.mark.parametrize("name", SUB_BYTE)
def test_padded_sub_byte_tensors_are_refused_by_legacy_consumers(np, ml, jnp, name):
    # JAX asks for a legacy capsule, which cannot say "padded": our export refuses rather
    # than let it read one value per byte as packed data.
    t = dl.narrow_tensor(name, raw(np, every_encoding(np, ml, name)))
    with pytest.raises(BufferError, match="padded"):
        jnp.from_dlpack(t)


@pytest.mark.parametrize("name", SUB_BYTE)
def test_padded_sub_byte_tensors_are_refused_by_dlpack_1_0_consumers(name):
    """IS_SUBBYTE_TYPE_PADDED is DLPack 1.1's: a consumer asking max_version=(1, 0) knows no
    such flag and would read one value per byte as packed. Refused, as for a legacy consumer;
    from 1.1 on the capsule carries the flag."""
    t = dl.narrow_tensor(name, bytes(range(0, 2 ** CODES[name][1], 3)))
    with pytest.raises(BufferError, match=r"padded .*max_version=\(1, 0\)"):
        t.__dlpack__(max_version=(1, 0))
    with pytest.raises(BufferError, match="padded"):
        t.__dlpack__(max_version=(1, 0), copy=True)
    assert dl.consume(t.__dlpack__(max_version=(1, 1)))["dtype"] == (*CODES[name], 1)


@pytest.mark.parametrize("name", ["float6_e2m3fn", "float6_e3m2fn"])
def test_jax_has_no_fp6_dlpack_export(np, ml, jnp, name):
    """Why fp6 is tested through narrow_tensor only: JAX 0.10's CPU backend cannot hold it."""
    with pytest.raises(Exception, match="PrimitiveType"):
        jnp.asarray(np.zeros(4, dtype=getattr(ml, name))).__dlpack__()


PADDED = 1 << 2  # DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED


@pytest.mark.parametrize("validate", [False, True], ids=["unvalidated", "validating"])
@pytest.mark.parametrize("name", SUB_BYTE)
def test_a_padded_tensor_is_never_lent_as_a_dltensor_without_its_flag(name, validate):
    """A DLTensor has no flags: the Tensor type's dltensor_from_py_object_no_sync refuses a
    padded tensor (its consumer would read one value per byte as packed, as a DLPack 1.0 one
    would), its managed export carries the flag, and dlpm_py_borrow takes the owning path,
    whose flags say padded (it once lent the bare view with flags 0: half the bytes)."""
    t = dl.narrow_tensor(name, bytes(range(0, 2 ** CODES[name][1], 3)))
    with pytest.raises(BufferError, match=r"dltensor_from_py_object_no_sync: .* padded"):
        dl.table_export(t)
    r = dl.borrow_checked(t, validate=validate)
    assert r["status"] == 0 and not r["borrowed"] and r["flags"] & PADDED, r


@pytest.mark.parametrize("name", SUB_BYTE)
def test_a_padded_tensor_is_not_lent_its_checked_form(name):
    """dlpm_py_options.lent: our Tensor's kept form is lent to a borrow of its own view, but not
    one with sub-byte padding (checked with IS_SUBBYTE_TYPE_PADDED, which a borrowed view, with no
    flags, lacks): the borrow checks the view itself and lends nothing."""
    t = dl.narrow_tensor(name, bytes(range(0, 2 ** CODES[name][1], 3)))
    r = dl.borrow_checked(t, lend=True)
    assert r["status"] == 0 and not r["lent"] and r["described"] and r["matches"], r
