# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Hostile input at the Python boundary (issue 52): every integer that crosses into the
component is range-checked before it is narrowed, every malformed field is refused with the
exception docs/errors.md gives it, an empty tensor leaves with canonical strides, and every
deleter runs exactly once.

The producers here are built by hand: DLPack capsules laid out with ctypes (every field at
and past its limits), objects whose DLPack methods raise, lie or return the wrong kind,
exchange-API tables with NULL entries, and random tensors (fixed seed) judged by a small
model of DLPack's rules written here, independently of the library. `_core` is the pip
package's extension (dlpack_mdspan._core: inspect, from_dlpack), built for this interpreter
by tests/python/CMakeLists.txt.
"""
import ctypes
import gc
import os
import random
import re
import subprocess
import sys
import textwrap

import pytest

import _core
import dlpm_interop as dl

INT32_MAX, UINT32_MAX = 2**31 - 1, 2**32 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
KDLCPU, KDLCUDA = 1, 2
READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
INT, UINT, FLOAT, COMPLEX, BOOL = 0, 1, 2, 5, 6
FLOAT32, FLOAT64 = (FLOAT, 32, 1), (FLOAT, 64, 1)
FLAVOUR = os.environ.get("DLPM_PYTHON_FLAVOUR", "modern")


def collect():
    for _ in range(3):
        gc.collect()


# ---- DLPack's structs, by hand ------------------------------------------------------------

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensorVersioned._fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                                     ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                                     ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLPackExchangeAPI(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev_api", ctypes.c_void_p),
                ("managed_tensor_allocator", ctypes.c_void_p),
                ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
                ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
                ("dltensor_from_py_object_no_sync", ctypes.c_void_p), ("current_work_stream", ctypes.c_void_p)]


# A PyDLL of our own: argtypes set here do not change ctypes.pythonapi's for other files.
_api = ctypes.PyDLL(None)  # _api["f"] is a new function object each time: its own argtypes
_capsule_new = _api["PyCapsule_New"]
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_valid = _api["PyCapsule_IsValid"]
_capsule_valid.restype, _capsule_valid.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]
_capsule_pointer = _api["PyCapsule_GetPointer"]
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]
_capsule_name = _api["PyCapsule_GetName"]
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_object_pointer = _api["PyCapsule_GetPointer"]  # of a live capsule object
_object_pointer.restype, _object_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
NAMES = {True: b"dltensor_versioned", False: b"dltensor"}

ALL = []  # every hand-made tensor, kept for the process: no address is used twice
DELETED = {}  # address of a hand-made managed tensor -> how many times its deleter ran


@DELETER
def _deleter(address):
    DELETED[address] = DELETED.get(address, 0) + 1


CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule):
    # DLPack: a capsule still under its name when Python frees it was never consumed; its
    # tensor is deleted here. A consumer renames it, and the tensor is the consumer's.
    for versioned, name in NAMES.items():
        if _capsule_valid(capsule, name):
            _deleter(_capsule_pointer(capsule, name))


class Hand:
    """One hand-made DLPack tensor: every field as given (None: a NULL pointer), its memory
    held here until its deleter runs. `capsule()` wraps it once."""

    def __init__(self, shape=(2, 3), strides=None, dtype=FLOAT32, device=(KDLCPU, 0), ndim=None, data=True,
                 byte_offset=0, flags=0, version=(1, 1), versioned=True, data_bytes=None):
        self.versioned = versioned
        ndim = len(shape) if ndim is None and shape is not None else ndim
        self.shape_array = (ctypes.c_int64 * max(len(shape), 1))(*shape) if shape is not None else None
        self.strides_array = (ctypes.c_int64 * max(len(strides), 1))(*strides) if strides is not None else None
        if data is True:
            self.buffer = ctypes.create_string_buffer(data_bytes if data_bytes is not None else 64)
            address = ctypes.addressof(self.buffer)
        else:
            address = data  # None (NULL) or an address
        t = DLTensor(address, DLDevice(*device), ndim, DLDataType(*dtype),
                     ctypes.addressof(self.shape_array) if self.shape_array is not None else None,
                     ctypes.addressof(self.strides_array) if self.strides_array is not None else None, byte_offset)
        if versioned:
            self.managed = DLManagedTensorVersioned(version[0], version[1], None, _deleter, flags, t)
        else:
            self.managed = DLManagedTensor(t, None, _deleter)
        self.address = ctypes.addressof(self.managed)
        ALL.append(self)

    def capsule(self):
        return _capsule_new(self.address, NAMES[self.versioned], ctypes.cast(_capsule_destructor, ctypes.c_void_p))

    def deletes(self):
        return DELETED.get(self.address, 0)


def capsule_tensor(capsule):
    """The DLTensor inside a versioned or legacy capsule (not taken)."""
    name = _capsule_name(capsule)
    address = _object_pointer(capsule, name)
    if name == b"dltensor_versioned":
        return DLManagedTensorVersioned.from_address(address).dl_tensor
    return DLManagedTensor.from_address(address).dl_tensor


def strides_of(t):
    return tuple(ctypes.c_int64.from_address(t.strides + 8 * r).value for r in range(t.ndim))


# ---- 1. every integer argument, at and just past each limit ----------------------------------

@pytest.fixture
def a(np):
    return np.ones((2, 3), np.float64)


# (keywords of inspect, the exception, or None where the value is in range and answered)
INSPECT_ARGUMENTS = [
    # the cases: narrowed into another requirement, reported passes=True
    (dict(dtype=(258, 64, 1)), r"dtype code = 258 is out of range: it must be in \[0, 255\]"),
    (dict(dtype=(2, 320, 1)), r"dtype bits = 320 is out of range: it must be in \[0, 255\]"),
    (dict(dtype=(2, 64, 65537)), r"dtype lanes = 65537 is out of range: it must be in \[0, 65535\]"),
    (dict(dtype=(-254, 64, 1)), r"dtype code = -254 is out of range"),
    (dict(ndim=2**32 + 2), r"ndim = 4294967298 is out of range: it must be in \[0, 64\]"),
    (dict(ndim=-(2**32) + 2), r"ndim = -4294967294 is out of range"),
    # each field at its limits (answered) and just past them
    (dict(dtype=(255, 64, 1)), None), (dict(dtype=(0, 64, 1)), None), (dict(dtype=(256, 64, 1)), r"dtype code = 256"),
    (dict(dtype=(-1, 64, 1)), r"dtype code = -1"),
    (dict(dtype=(2, 255, 1)), None), (dict(dtype=(2, 0, 1)), None), (dict(dtype=(2, 256, 1)), r"dtype bits = 256"),
    (dict(dtype=(2, -1, 1)), r"dtype bits = -1"),
    (dict(dtype=(2, 64, 65535)), None), (dict(dtype=(2, 64, 0)), None), (dict(dtype=(2, 64, 65536)), r"dtype lanes = 65536"),
    (dict(dtype=(2, 64, -1)), r"dtype lanes = -1"),
    (dict(dtype=(2, 64, 2**64 + 1)), r"dtype lanes = 18446744073709551617"),
    (dict(ndim=0), None), (dict(ndim=64), None), (dict(ndim=65), r"ndim = 65 is out of range"), (dict(ndim=-1), r"ndim = -1"),
    (dict(shape=(2, 0)), None), (dict(shape=(2, INT64_MAX)), None), (dict(shape=(2, None)), None),
    (dict(shape=(2, 2**63)), r"shape\[1\] = 9223372036854775808 is out of range: it must be in \[0, 9223372036854775807\]"),
    (dict(shape=(-1, 3)), r"shape\[0\] = -1 is out of range"),
    (dict(device=(KDLCPU, 0)), None), (dict(device=(KDLCPU, INT32_MAX)), None), (dict(device=(INT32_MAX, 0)), None),
    (dict(device=(KDLCPU, 2**31)), r"device_id = 2147483648 is out of range: it must be in \[0, 2147483647\]"),
    (dict(device=(KDLCPU, -1)), r"device_id = -1 is out of range"),
    (dict(device=(2**31, 0)), r"device_type = 2147483648 is out of range"),
    (dict(device=(-1, 0)), r"device_type = -1 is out of range"),
    (dict(device=(KDLCPU, 2**32 + 0)), r"device_id = 4294967296"),  # would narrow to device 0 and pass
]


@pytest.mark.parametrize("kwargs, refused", INSPECT_ARGUMENTS, ids=[str(k) for k, _ in INSPECT_ARGUMENTS])
def test_inspect_arguments_are_range_checked(a, kwargs, refused):
    if refused is None:
        info = _core.inspect(a, **kwargs)
        # Answered about the value asked for: a requirement other than the defaults' fails
        # with a reason, none is reported met by a narrowed value.
        if info["passes"]:
            assert kwargs in (dict(device=(KDLCPU, 0)), dict(shape=(2, None)))
        else:
            assert info["reason"]
        return
    with pytest.raises(OverflowError, match="^inspect: " + refused.lstrip("^")):
        _core.inspect(a, **kwargs)


def test_inspect_and_from_dlpack_refuse_non_integers(a):
    with pytest.raises(TypeError, match=r"inspect: dtype code must be an integer in \[0, 255\], not <class 'float'>"):
        _core.inspect(a, dtype=(2.0, 64, 1))
    with pytest.raises(TypeError, match="inspect: ndim must be an integer"):
        _core.inspect(a, ndim="2")
    with pytest.raises(TypeError, match="from_dlpack: device_id must be an integer"):
        _core.from_dlpack(a, device=(KDLCPU, None))
    with pytest.raises(TypeError, match="dtype must be a name"):
        _core.inspect(a, dtype=(2, 64))
    with pytest.raises(TypeError, match="inspect: shape must be a tuple of extents"):
        _core.inspect(a, shape=[2, 3])
    # a tuple, of more extents than a tensor may have: said so, not "must be a tuple"
    with pytest.raises(ValueError, match="inspect: shape has 65 extents, more than the 64 dimensions a tensor may have"):
        _core.inspect(a, shape=(1,) * 65)


def test_inspect_names_with_a_nul_are_refused_whole(a):
    """A name is compared whole: the C lookup of a dtype or an order would stop at a NUL, and
    "float64\\x00junk" would be float64."""
    with pytest.raises(ValueError, match="a dtype name has no NUL character"):
        _core.inspect(a, dtype="float64\x00junk")
    with pytest.raises(ValueError, match="order must be 'C', 'F' or 'A'"):
        _core.inspect(a, order="C\x00")
    assert _core.inspect(a, dtype="float64")["dtype"] == "float64"


@pytest.mark.parametrize("device, refused", [
    ((KDLCPU, 0), None), ((KDLCPU, 2**31), r"device_id = 2147483648"), ((KDLCPU, -1), r"device_id = -1"),
    ((2**31, 0), r"device_type = 2147483648"), ((2**32 + KDLCPU, 0), r"device_type = 4294967297"),
])
def test_from_dlpack_device_is_range_checked(a, device, refused):
    if refused is None:
        assert _core.from_dlpack(a, device=device).shape == (2, 3)
        return
    with pytest.raises(OverflowError, match=r"^from_dlpack: " + refused + r" is out of range"):
        _core.from_dlpack(a, device=device)


class _LoudInt(int):
    """An int subclass with a repr of its own: the range check reads it as the int it is
    (operator.index), and words it by value, as an exact int is worded."""

    def __repr__(self):
        return "LoudInt"


class _Indexable:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


# Tensor.__dlpack__(**kwargs) -> the capsule's name, or (exception, message)
DLPACK_ARGUMENTS = [
    (dict(max_version=(_LoudInt(1), _Indexable(0))), "dltensor_versioned"),
    (dict(max_version=(_LoudInt(UINT32_MAX + 1), 0)), (OverflowError, r"max_version major = 4294967296 is out of range")),
    (dict(max_version=(1, _Indexable(-1))), (OverflowError, r"max_version minor = -1 is out of range")),
    (dict(max_version=(True, 0)), "dltensor_versioned"),
    (dict(max_version=(1, 0)), "dltensor_versioned"), (dict(max_version=(0, 8)), "dltensor"),
    (dict(max_version=(UINT32_MAX, UINT32_MAX)), "dltensor_versioned"),
    (dict(max_version=(UINT32_MAX + 1, 0)), (OverflowError, r"max_version major = 4294967296 is out of range: it must be in \[0, 4294967295\]")),
    (dict(max_version=(-1, 0)), (OverflowError, r"max_version major = -1 is out of range")),
    (dict(max_version=(1, UINT32_MAX + 1)), (OverflowError, r"max_version minor = 4294967296 is out of range")),
    (dict(max_version=(1, -1)), (OverflowError, r"max_version minor = -1 is out of range")),
    (dict(max_version=(1, "0")), (TypeError, r"max_version minor must be an integer")),
    (dict(max_version=(2**64 + 1, 0)), (OverflowError, r"max_version major = 18446744073709551617")),
    (dict(dl_device=(KDLCPU, 0)), "dltensor_versioned"),
    (dict(dl_device=(KDLCPU, 2**31)), (OverflowError, r"dl_device device_id = 2147483648 is out of range: it must be in \[0, 2147483647\]")),
    (dict(dl_device=(KDLCPU, -1)), (OverflowError, r"dl_device device_id = -1")),
    (dict(dl_device=(2**31, 0)), (OverflowError, r"dl_device device_type = 2147483648")),
    (dict(dl_device=(2**32 + KDLCPU, 0)), (OverflowError, r"dl_device device_type = 4294967297")),
    (dict(dl_device=(INT32_MAX, 0)), (BufferError, r"cannot copy this tensor from device \(1, 0\) to \(2147483647, 0\)")),
    (dict(stream=-1), "dltensor_versioned"), (dict(stream=None), "dltensor_versioned"),
    (dict(stream=INT64_MAX), (RuntimeError, r"stream must be None for CPU tensors")),
    (dict(stream=2**63), (OverflowError, r"stream = 9223372036854775808 is out of range")),
    (dict(stream=INT64_MIN - 1), (OverflowError, r"stream = -9223372036854775809 is out of range")),
    (dict(copy=False), "dltensor_versioned"), (dict(copy=True), "dltensor_versioned"),
]


@pytest.mark.parametrize("kwargs, outcome", DLPACK_ARGUMENTS, ids=[str(k) for k, _ in DLPACK_ARGUMENTS])
def test_tensor_dlpack_arguments_are_range_checked(kwargs, outcome):
    t = dl.tensor((2, 3))
    if "max_version" not in kwargs:
        kwargs = dict(kwargs, max_version=(1, 3))
    if isinstance(outcome, str):
        assert _capsule_name(t.__dlpack__(**kwargs)).decode() == outcome
        return
    kind, message = outcome
    with pytest.raises(kind, match=message):
        t.__dlpack__(**kwargs)


def test_a_stream_that_is_no_integer_is_the_one_type_error():
    """Every integer-stream producer decodes the stream object in one place
    (dlpm_py_stream_integer): exactly TypeError, with the one message of docs/errors.md."""
    t = dl.tensor((2, 3))
    for stream, name in (("0", "str"), (1.0, "float"), (object(), "object")):
        message = f"__dlpack__: stream must be None or an integer for CPU memory, not <class '{name}'>"
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$") as caught:
            t.__dlpack__(max_version=(1, 3), stream=stream)
        assert caught.type is TypeError
        del caught  # its traceback holds this frame in a cycle


# ---- 2. producers whose answers lie, raise or are of the wrong kind -------------------------

class Lying:
    """A producer whose __dlpack_device__ (and __dlpack_data_type__) answer `device` (and
    `dtype`), or raise them when they are exceptions; its tensor is t's."""

    def __init__(self, t, device=None, dtype=None):
        self.t, self.device, self.dtype = t, device, dtype

    def __dlpack__(self, **kwargs):
        kwargs.pop("stream", None)
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        if isinstance(self.device, BaseException):
            raise self.device
        return self.t.__dlpack_device__() if self.device is None else self.device


class Announcing(Lying):
    def __dlpack_data_type__(self):
        if isinstance(self.dtype, BaseException):
            raise self.dtype
        return self.dtype


@pytest.mark.parametrize("device, refused", [
    ((KDLCPU, 2**31), r"__dlpack_device__\(\)\[1\], the device_id = 2147483648 is out of range"),
    ((KDLCPU, -1), r"__dlpack_device__\(\)\[1\], the device_id = -1 is out of range"),
    ((KDLCPU, 2**32), r"the device_id = 4294967296"),  # narrowed, it was device 0 on the CPU: no stream
    ((2**32 + KDLCPU, 0), r"__dlpack_device__\(\)\[0\], the device type = 4294967297"),
    (("cpu", 0), r"__dlpack_device__\(\)\[0\], the device type must be an integer"),
    ((KDLCPU,), r"did not return a 2-tuple"),
    ([KDLCPU, 0], r"did not return a 2-tuple"),
])
def test_a_lying_dlpack_device_is_a_buffer_error(device, refused):
    # Asked when a stream is passed (no stream for CPU tensors): the answer decides the call.
    with pytest.raises(BufferError, match=refused):
        dl.consume(Lying(dl.tensor((2,)), device=device), stream=5)


def test_producer_methods_that_raise_or_return_the_wrong_kind(collect):
    t = dl.tensor((2,))

    class Raises:
        def __dlpack__(self, **kwargs):
            raise ValueError("the producer's own refusal")

    class WrongKind:
        def __init__(self, answer):
            self.answer = answer

        def __dlpack__(self, **kwargs):
            return self.answer

    with pytest.raises(ValueError, match="the producer's own refusal"):
        dl.consume(Raises())
    with pytest.raises(KeyError):
        dl.consume(Lying(t, device=KeyError("device")), stream=5)
    for answer in (5, None, b"dltensor", t):
        with pytest.raises(TypeError, match="not a PyCapsule"):
            dl.consume(WrongKind(answer))
    # a capsule of another name, and one already taken
    other = _capsule_new(ctypes.addressof(ctypes.c_int(0)), b"not_dltensor", None)
    with pytest.raises(BufferError):
        dl.consume(WrongKind(other))
    taken = t.__dlpack__(max_version=(1, 0))
    dl.consume(taken)
    with pytest.raises(BufferError):
        dl.consume(WrongKind(taken))
    # A lying __dlpack_data_type__ is never narrowed: an answer out of range is unusable,
    # and the tensor decides (a float32 tensor announced as (2 + 256, 64, 1), which would
    # narrow to float64, is still a float32).
    for announced in ((FLOAT + 256, 64, 1), (FLOAT, 32 + 256, 1), (FLOAT, 32, 2**16 + 1), (-1, 32, 1), ("f", 32, 1),
                      RuntimeError("announce")):
        r = dl.consume(Announcing(t, dtype=announced), dtype=FLOAT32)
        assert r["dtype"] == FLOAT32
    with pytest.raises(TypeError, match="as the producer's __dlpack_data_type__"):
        dl.consume(Announcing(t, dtype=FLOAT64), dtype=FLOAT32)
    del t, taken
    collect()


# ---- 3. hand-made capsules: every field at and past its limits --------------------------------

# (fields of Hand, what the import raises: None for accepted)
CAPSULE_FIELDS = [
    (dict(), None),
    (dict(ndim=-1), (BufferError, "not a valid rank")), (dict(ndim=65, shape=(1,) * 65), (BufferError, "not a valid rank")),
    (dict(ndim=64, shape=(1,) * 64), None),
    (dict(dtype=(FLOAT, 32, 0)), (BufferError, "lanes must be at least 1")),
    (dict(dtype=(255, 32, 1)), (BufferError, "unknown type code")),
    (dict(dtype=(FLOAT, 7, 1)), (BufferError, "impossible bit width")),
    (dict(dtype=(FLOAT, 32, 65535), shape=(1,), data_bytes=4 * 65535), None),
    # a negative device_id is malformed whatever was asked: BufferError, not TypeError
    (dict(device=(KDLCPU, -1)), (BufferError, "device_id = -1 is negative")),
    (dict(device=(KDLCPU, -(2**31))), (BufferError, "is negative")),
    (dict(shape=None, ndim=2), (BufferError, "shape is NULL")),
    (dict(shape=(2, -3)), (BufferError, r"shape\[1\] = -3 is negative")),
    (dict(shape=(2**62, 4)), (BufferError, "element count overflows")),
    (dict(shape=(3, 2), strides=(INT64_MIN, 1)), (BufferError, "INT64_MIN")),
    (dict(shape=(3, 2), strides=(INT64_MAX, 1)), (BufferError, "span")),
    (dict(data=None), (BufferError, "data is NULL")),
    (dict(byte_offset=2**63), (BufferError, "larger than INT64_MAX")),
    (dict(byte_offset=2), (BufferError, "not a multiple of the element size")),
    (dict(data=2**64 - 4, shape=(2,)), (BufferError, "address space")),
    (dict(version=(2, 0)), (BufferError, "major 2")),
    (dict(version=(1, UINT32_MAX)), None),
    (dict(versioned=False), None),
    # empty tensors: any strides, any data
    (dict(shape=(0, 5), strides=(INT64_MIN, INT64_MAX)), None), (dict(shape=(0, 5), data=None), None),
    (dict(shape=(2**62, 0, 2**62), strides=(INT64_MIN, INT64_MIN, INT64_MIN)), None),
]


@pytest.mark.parametrize("borrow", [False, True], ids=["owned", "borrowed"])
@pytest.mark.parametrize("fields, refused", CAPSULE_FIELDS, ids=[str(f) for f, _ in CAPSULE_FIELDS])
def test_hand_made_capsules(fields, refused, borrow, collect):
    hand = Hand(**fields)
    capsule = hand.capsule()
    if refused is None:
        r = dl.consume(capsule, borrow=borrow)
        assert r["shape"] == tuple(fields.get("shape", (2, 3)))
    else:
        kind, message = refused
        with pytest.raises(Exception) as e:
            dl.consume(capsule, borrow=borrow)
        assert type(e.value) is kind and e.match(message), repr(e.value)
    del capsule
    collect()
    assert hand.deletes() == 1


# The malformed ones, which our imports refuse (above), given to the peers' imports: here
# nanobind 3.1's own nb::ndarray argument (bound_nanobind.ndarray_description: any dtype,
# device and rank, read-only; it reads no element), in the frameworks venv NumPy's,
# PyTorch's, tvm-ffi's, JAX's and TensorFlow's (test_frameworks_malformed_capsules.py).
# nanobind takes every one but a negative rank, so what a nanobind extension's function
# receives is a description of no memory (docs/index.md). Not the NULL shape here: nanobind
# reads it.
MALFORMED = [(f, r) for f, r in CAPSULE_FIELDS if r is not None]
NANOBIND_TRIED = [f for f, _ in MALFORMED if f.get("shape", ()) is not None]
NANOBIND_REFUSES = [dict(ndim=-1)]


@pytest.mark.parametrize("fields", NANOBIND_TRIED, ids=[str(f) for f in NANOBIND_TRIED])
def test_nanobinds_ndarray_takes_the_capsules_ours_refuses(fields, collect):
    bound_nanobind = pytest.importorskip("bound_nanobind")  # not built for the ASan interpreter
    hand = Hand(**fields)
    capsule = hand.capsule()
    if fields in NANOBIND_REFUSES:
        with pytest.raises(TypeError, match="incompatible function arguments"):
            bound_nanobind.ndarray_description(capsule)
    else:
        shape, strides, device_id, data = bound_nanobind.ndarray_description(capsule)
        assert shape == tuple(e % 2**64 for e in fields.get("shape", (2, 3)))  # its extents are size_t
        assert strides == fields.get("strides", strides)
        assert device_id == fields.get("device", (KDLCPU, 0))[1]
        if "data" in fields:  # NULL with elements, the top of the address space
            assert data == (fields["data"] or 0)
    del capsule
    collect()
    assert hand.deletes() == 1


class HandProducer:
    """A producer whose __dlpack__ hands out a Hand's capsule, whose destructor is a ctypes
    callback (Warp's kind): Python code that runs when the import lets go of the capsule."""

    def __init__(self, hand):
        self.hand = hand

    def __dlpack__(self, **kwargs):
        return self.hand.capsule()

    def __dlpack_device__(self):
        return (KDLCPU, 0)


@pytest.mark.parametrize("entry", [dl.consume, dl.reexport, _core.from_dlpack, _core.inspect],
                         ids=["consume", "reexport", "from_dlpack", "inspect"])
@pytest.mark.parametrize("fields, refused", [(dict(version=(2, 0)), "major 2"), (dict(version=(0, 8)), "major 0")],
                         ids=["major 2", "major 0"])
def test_a_refusal_outlives_the_producers_capsule_destructor(entry, fields, refused, collect):
    """The capsule a producer's __dlpack__ returned is let go with the refusal set aside: its
    destructor, Python code, once cleared it (SystemError: returned NULL without setting an
    exception)."""
    hand = Hand(**fields)
    with pytest.raises(BufferError, match=refused):
        entry(HandProducer(hand))
    collect()
    assert hand.deletes() == 1


def test_inspect_judges_the_structure_with_the_tensors_flags(collect):
    """A padded sub-byte tensor's byte offset is checked against its stored element size (3
    bytes of int4 x 3, padded): inspect said valid where every import refuses it."""
    fields = dict(shape=(2,), dtype=(INT, 4, 3), byte_offset=1, flags=4, version=(1, 3))
    inspected, imported = Hand(**fields), Hand(**fields)
    info = _core.inspect(inspected.capsule())
    assert not info["valid"] and not info["passes"], info
    assert info["reason"].startswith("byte_offset = 1 is not a multiple of the element size 3"), info["reason"]
    capsule = imported.capsule()  # a name's, let go with no exception in flight (its destructor is Python's)
    with pytest.raises(BufferError, match="byte_offset = 1 is not a multiple of the element size 3"):
        dl.reexport(capsule)
    del capsule
    collect()
    assert inspected.deletes() == imported.deletes() == 1


def test_negative_device_id_is_a_buffer_error_on_every_path(collect):
    hands = [Hand(device=(KDLCPU, -1)) for _ in range(3)]
    capsules = [h.capsule() for h in hands]  # freed below, not while the refusal is raised
    with pytest.raises(BufferError, match="device_id = -1 is negative"):
        _core.from_dlpack(capsules[0])
    info = _core.inspect(capsules[1])  # described, not refused
    assert info["valid"] is False and "device_id = -1 is negative" in info["reason"]
    with pytest.raises(BufferError, match="device_id = -1 is negative"):
        dl.consume(capsules[2], dtype=FLOAT32, ndim=2)  # requirements it meets
    # a device_id that is wrong but well-formed stays a requirement not met
    ok = Hand(device=(KDLCPU, 0))
    info = _core.inspect(ok.capsule(), device=(KDLCPU, 1))
    assert info["valid"] is True and info["passes"] is False and "(device id mismatch)" in info["reason"]
    del capsules
    collect()
    assert [h.deletes() for h in hands] == [1, 1, 1] and ok.deletes() == 1


_capsule_new_named_at = _api["PyCapsule_New"]  # the name given by its address
_capsule_new_named_at.restype = ctypes.py_object
_capsule_new_named_at.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


def test_capsule_name_at_a_reused_address_is_read_again(collect):
    """The import guesses a capsule's kind by its name's address (the last DLPack name
    taken); a name that now says something else at that address is read, not trusted."""
    name = ctypes.create_string_buffer(b"dltensor_versioned", 32)
    destructor = ctypes.cast(_capsule_destructor, ctypes.c_void_p)
    first, legacy, other = Hand(), Hand(versioned=False), Hand()
    assert dl.consume(_capsule_new_named_at(first.address, ctypes.addressof(name), destructor))["shape"] == (2, 3)
    name.value = b"dltensor"  # the same address, a legacy name: taken as legacy
    r = dl.consume(_capsule_new_named_at(legacy.address, ctypes.addressof(name), destructor))
    assert r["shape"] == (2, 3) and r["read_only"] is True
    name.value = b"dltensor_versioned!"  # the same address, no DLPack name: refused
    capsule = _capsule_new_named_at(other.address, ctypes.addressof(name), destructor)
    with pytest.raises(TypeError, match="is not a DLPack tensor"):
        dl.consume(capsule)
    name.value = b"dltensor_versioned"  # the destructor reads the name: the untaken tensor is deleted
    del capsule
    collect()
    assert (first.deletes(), legacy.deletes(), other.deletes()) == (1, 1, 1)


# ---- 4. an empty tensor leaves with canonical strides -----------------------------------------

# (shape, the producer's strides) -> the row-major strides the re-export carries
EMPTY = [
    ((0, 5), (INT64_MIN, INT64_MAX), (5, 1)),
    ((5, 0), (INT64_MAX, INT64_MIN), (0, 1)),
    ((3, 0, 4), (-7, 0, INT64_MIN), (0, 4, 1)),
    ((0,), (INT64_MIN,), (1,)),
    ((0, 2, 3), None, (6, 3, 1)),
]


@pytest.mark.parametrize("shape, strides, canonical", EMPTY, ids=[str(s) for s, _, _ in EMPTY])
def test_empty_tensor_reexported_with_canonical_strides(shape, strides, canonical, np, collect):
    hand = Hand(shape=shape, strides=strides)
    t = dl.reexport(hand.capsule())
    assert t.shape == shape and t.strides == canonical
    # every way out: __dlpack__ (versioned and legacy), the exchange API (owned, borrowed)
    for capsule in (t.__dlpack__(max_version=(1, 3)), t.__dlpack__()):
        assert strides_of(capsule_tensor(capsule)) == canonical
    del capsule
    assert dl.consume(t)["strides"] == canonical
    assert dl.consume(t, borrow=True)["strides"] == canonical
    assert _core.from_dlpack(t).strides == canonical
    assert _core.inspect(t)["strides"] == canonical
    a = np.from_dlpack(t)
    assert a.shape == shape and a.size == 0
    del t, a
    collect()
    assert hand.deletes() == 1


def test_non_empty_strides_are_kept_as_given(np):
    # Only an empty tensor's strides are replaced: a reversed or extent-1 stride stays.
    hand = Hand(shape=(2, 1, 3), strides=(-3, 99, 1), byte_offset=12)
    t = dl.reexport(hand.capsule())
    assert t.strides == (-3, 99, 1)
    assert strides_of(capsule_tensor(t.__dlpack__(max_version=(1, 3)))) == (-3, 99, 1)


# ---- 5. exchange-API tables with NULL entries -------------------------------------------------

def test_own_tensor_import_checks_the_export_it_makes_itself(collect):
    """An import of a dlpack_mdspan.Tensor through its own table makes the export itself
    (dlpm_py__tensor_export) and checks the Tensor's kept checked form against the
    requirements with the export's flags: the requirements are still applied, and a
    legacy_writable import of a Tensor holding a legacy (READ_ONLY, writability unknown)
    import is checked without READ_ONLY, as one through a foreign table is."""
    t = dl.reexport(Hand(shape=(2, 3), strides=(3, 1)).capsule())
    r = dl.consume(t, dtype=FLOAT32, ndim=2, shape=(2, 3), order="C")
    assert r["shape"] == (2, 3) and r["strides"] == (3, 1) and r["borrowed"] is False
    for refused, match in (({"dtype": FLOAT64}, "dtype"), ({"ndim": 3}, "ndim|rank"), ({"ndim": 2, "shape": (3, 2)}, "shape"),
                           ({"order": "F"}, "order|F-contiguous|column-major")):
        with pytest.raises(TypeError, match=match):
            dl.consume(t, **refused)
    legacy = dl.reexport(Hand(shape=(2, 3), strides=(3, 1), versioned=False).capsule())
    assert dl.consume(legacy)["read_only"] is True
    with pytest.raises(TypeError, match="READ_ONLY"):
        dl.consume(legacy, writable=True)
    w = dl.consume(legacy, writable=True, legacy_writable=True)
    assert w["read_only"] is False and w["borrowed"] is False
    del t, legacy, r, w
    collect()


def test_own_tensor_import_without_options_checks_the_export(collect):
    """dlpm_py_import with NULL options (the usual call) of a dlpack_mdspan.Tensor takes a path
    of its own (import_own_tensor: the export, then its check, without the options' body):
    the requirements are still applied to the export, with its flags (READ_ONLY refuses a
    writer), and a Tensor without shared arrays (an empty one: its export is a copy) is
    checked too."""
    t = dl.reexport(Hand(shape=(2, 3), strides=(3, 1)).capsule())
    r = dl.consume(t, dtype=FLOAT32, ndim=2, shape=(2, 3), order="C", options=False)
    assert r["shape"] == (2, 3) and r["strides"] == (3, 1) and r["borrowed"] is False
    for refused, match in (({"dtype": FLOAT64}, "dtype"), ({"ndim": 3}, "ndim|rank"), ({"ndim": 2, "shape": (3, 2)}, "shape"),
                           ({"order": "F"}, "order|F-contiguous|column-major")):
        with pytest.raises(TypeError, match=match):
            dl.consume(t, options=False, **refused)
    legacy = dl.reexport(Hand(shape=(2, 3), strides=(3, 1), versioned=False).capsule())
    assert dl.consume(legacy, options=False)["read_only"] is True
    with pytest.raises(TypeError, match="READ_ONLY"):
        dl.consume(legacy, writable=True, options=False)
    empty = dl.reexport(Hand(shape=(0, 3), strides=(3, 1)).capsule())
    assert dl.consume(empty, ndim=2, options=False)["shape"] == (0, 3)
    with pytest.raises(TypeError, match="ndim|rank"):
        dl.consume(empty, ndim=3, options=False)
    del t, legacy, empty, r
    collect()


def test_own_tensor_requirements_met_are_compared_not_trusted(collect):
    """An import of a dlpack_mdspan.Tensor's own export, and a borrow of its view, keep the last
    requirements its view met (import/requirements_met.h) and answer equal ones without checking
    again; anything else is checked. consume's requirements and device-type list are on its stack, so calls made the
    same way (ask, called without ** so that each call nests alike) put them at the same
    addresses: requirements that differ there only in content, device types rewritten in
    place, and the same requirements met with other flags are each refused."""
    t = dl.reexport(Hand(shape=(2, 3), strides=(3, 1)).capsule())

    def ask(obj, options, changed=None, borrow=False):
        asked = {"dtype": FLOAT32, "ndim": 2, "order": "C", "device_types": (KDLCPU,), "options": options,
                 "borrow": borrow}
        return dl.consume(obj, **(asked | (changed or {})))

    # import_own_tensor, the body's own-table path, and the borrow's own view (met with no flags)
    for options, borrow in ((False, False), (True, False), (False, True), (True, True)):
        for _ in range(2):  # checked, then answered as met
            assert ask(t, options, borrow=borrow)["shape"] == (2, 3)
        for refused, match in (({"dtype": FLOAT64}, "dtype"), ({"ndim": 3}, "ndim|rank"),
                               ({"order": "F"}, "order|F-contiguous|column-major"),
                               ({"device_types": (KDLCUDA,)}, "device")):
            with pytest.raises(TypeError, match=match):
                ask(t, options, refused, borrow)
            assert ask(t, options, borrow=borrow)["shape"] == (2, 3)  # met again
    # every length of device-type list the kept requirements hold (one to four), with the CPU at
    # each place: the same list met again, then the CPU's entry rewritten in place (the same
    # address, the other entries equal) refused, so that no place goes uncompared
    others = (KDLCUDA, 3, 10, 4)  # kDLCUDA, kDLCUDAHost, kDLROCM, kDLOpenCL
    for options, borrow in ((False, False), (True, False), (False, True)):
        for n in range(1, 5):
            for place in range(n):
                met = others[:place] + (KDLCPU,) + others[place + 1:n]
                unmet = others[:place] + (7,) + others[place + 1:n]  # kDLVulkan where the CPU was
                for _ in range(2):
                    assert ask(t, options, {"device_types": met}, borrow)["shape"] == (2, 3)
                with pytest.raises(TypeError, match="device"):
                    ask(t, options, {"device_types": unmet}, borrow)
    # READ_ONLY dropped by legacy_writable meets a writer; the same requirements with it kept do not
    legacy = dl.reexport(Hand(shape=(2, 3), strides=(3, 1), versioned=False).capsule())
    assert ask(legacy, True, {"writable": True, "legacy_writable": True})["read_only"] is False
    with pytest.raises(TypeError, match="READ_ONLY"):
        ask(legacy, False, {"writable": True, "legacy_writable": False})
    del t, legacy
    collect()


def our_table():
    capsule = type(dl.tensor((1,))).__dlpack_c_exchange_api__
    return DLPackExchangeAPI.from_address(_object_pointer(capsule, b"dlpack_exchange_api"))


REQUIRED = ["managed_tensor_allocator", "managed_tensor_from_py_object_no_sync", "managed_tensor_to_py_object_no_sync",
            "current_work_stream"]
TABLES = []  # kept for the process: a type's table must outlive it


@pytest.mark.parametrize("entry", REQUIRED + ["dltensor_from_py_object_no_sync", "all", "version"])
def test_exchange_tables_with_null_entries(entry):
    table = DLPackExchangeAPI()
    ctypes.memmove(ctypes.addressof(table), ctypes.addressof(our_table()), ctypes.sizeof(table))
    if entry == "all":
        for name, _ in DLPackExchangeAPI._fields_[3:]:
            setattr(table, name, None)
    elif entry == "version":
        table.major = 0  # another major, no prev_api: not ours to call
    else:
        setattr(table, entry, None)
    TABLES.append(table)
    # The type publishes the table as an integer (the earlier drafts' form) and has a
    # __dlpack__: a table with a NULL entry DLPack says is never NULL is not used. (The
    # component's type cache keeps the class: it holds no tensor.)
    cls = type("NullEntries", (), {"__c_dlpack_exchange_api__": ctypes.addressof(table),
                                   "__dlpack__": lambda self, **kw: dl.tensor((2, 3)).__dlpack__(**kw),
                                   "__dlpack_device__": lambda self: (KDLCPU, 0)})
    usable = entry == "dltensor_from_py_object_no_sync"  # the one entry that may be NULL
    assert (dl.exchange_api(cls()) is not None) == usable
    for borrow in (False, True):
        if usable:  # our Tensor's entries, called with another type, refuse it: the table was used
            with pytest.raises(BufferError, match="managed_tensor_from_py_object_no_sync raised TypeError"):
                dl.consume(cls(), borrow=borrow)  # a borrow without its entry takes the owned path
        else:  # through __dlpack__
            assert dl.consume(cls(), borrow=borrow)["shape"] == (2, 3)


@pytest.mark.parametrize("address", [-1, -2**63, 12345, 2**64 - 1, 2**64, 2**70])
def test_exchange_table_integers_no_table_can_have_are_no_table(address):
    """The earlier drafts' integer form is an address, which cannot be verified; a negative
    one, one past 64 bits or one not aligned for a table is none, and the import goes
    through __dlpack__ (the negative and unaligned ones were read as a table: a crash). An
    aligned address in range is the producer's word, as a capsule's pointer is."""
    cls = type("IntegerTable", (), {"__c_dlpack_exchange_api__": address,
                                    "__dlpack__": lambda self, **kw: dl.tensor((2, 3)).__dlpack__(**kw),
                                    "__dlpack_device__": lambda self: (KDLCPU, 0)})
    assert dl.exchange_api(cls()) is None
    for borrow in (False, True):
        assert dl.consume(cls(), borrow=borrow)["shape"] == (2, 3)


# ---- 6. random tensors against a model of DLPack's rules -------------------------------------

# dtypes whose validity is DLPack's (dlpack.h: the codes and their bit widths), not the library's
MODEL_DTYPES = [((FLOAT, 32, 1), 4), ((FLOAT, 64, 1), 8), ((INT, 8, 1), 1), ((UINT, 16, 1), 2), ((COMPLEX, 128, 1), 16),
                ((BOOL, 8, 1), 1), ((FLOAT, 32, 4), 16), ((FLOAT, 32, 0), None), ((255, 32, 1), None),
                ((FLOAT, 7, 1), None), ((COMPLEX, 8, 1), None)]
EXTENTS = [0, 1, 2, 3, 7, 2**31, 2**62]
STRIDES = [0, 1, -1, 2, 3, -5, 2**40, INT64_MIN, INT64_MAX]


def model_valid(ndim, itemsize, device_id, shape, strides, data, byte_offset):
    """DLPack's structural rules, from the specification and docs/errors.md, computed with
    Python's unbounded integers: whether a tensor can be used at all. `itemsize` is None
    for a dtype DLPack has no such type for."""
    def fits(*values):
        return all(INT64_MIN <= v <= INT64_MAX for v in values)

    if not 0 <= ndim <= 64 or itemsize is None or device_id < 0:
        return False
    if ndim > 0 and shape is None:
        return False
    if any(e < 0 for e in shape):
        return False
    numel = 1
    for e in shape:
        numel *= e
    if numel != 0 and not fits(numel):
        return False
    if byte_offset > INT64_MAX or byte_offset % itemsize:
        return False
    if numel == 0:  # no element addressed: any strides, any data that does not wrap
        return data is None or data + byte_offset < 2**64
    if data is None:
        return False
    if strides is None:
        strides = [1] * ndim
        for r in range(ndim - 2, -1, -1):
            strides[r] = strides[r + 1] * shape[r + 1]
    low = high = 0
    for e, s in zip(shape, strides):
        if e == 1:  # reaches index 0 only
            continue
        if s == INT64_MIN:
            return False
        reach = (e - 1) * s
        if s < 0:
            low += reach
        else:
            high += reach
        if not fits(reach, low, high):
            return False
    offset_items = byte_offset // itemsize
    first, last = offset_items + low, offset_items + high + 1
    if not fits(first, last, first * itemsize, last * itemsize):
        return False
    return data + first * itemsize > 0 and data + last * itemsize < 2**64


def random_tensor(rng):
    ndim = rng.choice([0, 1, 2, 3, 4] * 4 + [-1, 65])
    dtype, itemsize = rng.choice(MODEL_DTYPES)
    rank = max(0, min(ndim, 4))
    shape = [rng.choice(EXTENTS[:5] * 3 + EXTENTS) for _ in range(rank)]
    strides = None if rng.random() < 0.3 else [rng.choice(STRIDES) for _ in range(rank)]
    device_id = rng.choice([0] * 8 + [-1, 1])
    byte_offset = rng.choice([0] * 6 + [itemsize or 1, 1, 2**63, 2**62])
    null_data = rng.random() < 0.1
    shape_null = rank > 0 and rng.random() < 0.05
    return dict(ndim=ndim, dtype=dtype, itemsize=itemsize, device_id=device_id, shape=shape, strides=strides,
                byte_offset=byte_offset, null_data=null_data, shape_null=shape_null)


def test_random_tensors_against_the_model(collect):
    rng = random.Random(52)
    hands, disagreements, counted = [], [], {True: 0, False: 0}
    for i in range(3000):
        c = random_tensor(rng)
        shape = None if c["shape_null"] else tuple(c["shape"])
        hand = Hand(shape=shape if shape is not None else (), ndim=c["ndim"], strides=c["strides"], dtype=c["dtype"],
                    device=(KDLCPU, c["device_id"]), byte_offset=c["byte_offset"], data=None if c["null_data"] else True)
        if c["shape_null"]:
            hand.managed.dl_tensor.shape = None
        data = None if c["null_data"] else ctypes.addressof(hand.buffer)
        expected = model_valid(c["ndim"], c["itemsize"], c["device_id"], shape, c["strides"], data, c["byte_offset"])
        info = _core.inspect(hand.capsule())  # reads nothing: the data may be far smaller than the span
        counted[expected] += 1
        if info["valid"] is not expected:
            disagreements.append((i, c, info["reason"]))
        elif expected and 0 in (shape or ()):
            # a valid empty tensor re-exported: row-major strides whatever it had
            again = Hand(shape=shape, ndim=c["ndim"], strides=c["strides"], dtype=c["dtype"],
                         byte_offset=c["byte_offset"], data=None if c["null_data"] else True)
            t = dl.reexport(again.capsule())
            row_major, step = [], 1
            for e in reversed(shape):
                row_major.insert(0, step)
                step = min(step * e, INT64_MAX)
            assert t.strides == tuple(row_major), (c, t.strides)
            hands.append(again)
            del t
        hands.append(hand)
    collect()
    assert not disagreements, disagreements[:5]
    assert counted[True] > 300 and counted[False] > 300, counted  # both sides are exercised
    assert all(h.deletes() == 1 for h in hands)


def test_every_deleter_ran_once():
    collect()
    assert all(n == 1 for n in DELETED.values()), {a: n for a, n in DELETED.items() if n != 1}


def test_an_exception_in_flight_outlives_a_python_deleter():
    """The Tensor goes while its own __dlpack__'s exception is in flight (the bound method held
    the last reference), and its producer's deleter is Python code (a ctypes callback, as
    Warp's is): the caller still sees that exception. Was a SystemError ("error return
    without exception set"), the ctypes callback having reported and cleared it (issue 51)."""
    hand = Hand()
    with pytest.raises(RuntimeError, match="stream must be None for CPU tensors"):
        dl.reexport(hand.capsule()).__dlpack__(stream=0)
    collect()
    assert hand.deletes() == 1


@pytest.mark.parametrize("fields, receive, refused", [
    (dict(data=None), False, (ValueError, "data is NULL")),
    (dict(shape=(2, -3)), False, (ValueError, r"shape\[1\] = -3 is negative")),
    (dict(device=(KDLCUDA, 0)), False, (BufferError, "")),
    (dict(flags=READ_ONLY), True, (BufferError, "READ_ONLY")),
], ids=["null-data", "negative-extent", "cuda", "read-only-receive"])
def test_message_plan_refusals_outlive_a_python_deleter(fields, receive, refused, collect):
    """message_plan (dlpack_mdspan.mpi's admission) refuses a tensor whose producer's deleter
    is Python code (a ctypes callback): the refusal is what the caller sees, and the deleter
    runs once. Was a SystemError ("returned NULL without setting an exception"): the tensor was
    deleted with the refusal in flight, and the callback reported and cleared it."""
    hand = Hand(**fields)
    capsule = hand.capsule()  # freed below, not while the refusal is raised (its destructor is Python too)
    kind, words = refused
    with pytest.raises(Exception) as e:
        _core.message_plan(capsule, receive=receive)
    assert type(e.value) is kind and e.match(words), repr(e.value)
    del capsule
    collect()
    assert hand.deletes() == 1


def test_an_owner_dropped_with_an_error_in_flight_keeps_it_and_deletes_once(collect):
    """message_plan's owner (an owner object, dlpack_mdspan.owner) as the argument of a call that
    raises: Python drops it with that call's error in flight. The error reaches the caller and
    the producer's deleter, a ctypes callback, runs once. Was a SystemError with no delete."""
    hand = Hand()
    capsule = hand.capsule()
    with pytest.raises(TypeError, match="isinstance"):
        isinstance(_core.message_plan(capsule)["owner"], 5)
    del capsule
    collect()
    assert hand.deletes() == 1


def test_the_integer_decoders_refuse_a_null_argument():
    """dlpm_py_stream_integer and dlpm_py_integer_in_range, public C functions, once
    dereferenced a NULL argument (a crash); now ValueError naming it, as their siblings do."""
    assert dl.null_arguments() == [
        ("dlpm_py_stream_integer(NULL, \"CPU\", &v)", -1, "ValueError",
         "dlpm_py_stream_integer: stream is NULL (null pointer argument)"),
        ("dlpm_py_stream_integer(one, \"CPU\", NULL)", -1, "ValueError",
         "dlpm_py_stream_integer: value is NULL (null pointer argument)"),
        ("dlpm_py_stream_integer(half, NULL, &v)", -1, "TypeError",
         "__dlpack__: stream must be None or an integer for this memory, not <class 'float'>"),
        ("dlpm_py_integer_in_range(one, \"x\", 0, 5, NULL, NULL)", -1, "ValueError",
         "dlpm_py_integer_in_range: out is NULL (null pointer argument)"),
        ("dlpm_py_integer_in_range(one, NULL, 3, 5, NULL, &v)", -1, "OverflowError",
         "the integer = 1 is out of range: it must be in [3, 5]"),
        ("dlpm_py_integer_in_range(NULL, \"x\", 0, 5, NULL, &v)", -1, "TypeError",
         "x must be an integer in [0, 5], not None"),
    ]


# ---- finalisers that import while the type cache is being changed ---------------------------
# Freeing a producer's old __dlpack__ (or its type) may run a finaliser, whose own imports of
# 16 other types take every slot of the per-type cache, the one being changed too. Each case
# runs in its own process (the cache and the producer rows are the process's).

CACHE_REENTRY = {
    # An evicted slot's type was let go before the slot was rewritten, so a finaliser that
    # took the slot meanwhile had it let go twice (a use-after-free under ASan).
    "eviction": """
        class Old:
            __slots__ = ()
            def __dlpack__(self, _d=Finaliser(), **kw): return value(1).__dlpack__(**kw)
            def __dlpack_device__(self): return (1, 0)
        dl.consume(Old())
        del Old.__dlpack__  # the cache holds the old function's only reference
        before = sys.getrefcount(Old)
        for i in range(16): dl.consume(fresh(i))  # evicts every slot, Old's too
        print(before - sys.getrefcount(Old))
    """,
    # The stale method was dropped before the fresh one was returned from the slot, which the
    # finaliser had given to another type: that type's __dlpack__ was called on the object.
    "stale method": """
        class T:
            __slots__ = ()
            def __dlpack__(self, _d=Finaliser(), **kw): return value(111).__dlpack__(**kw)
            def __dlpack_device__(self): return (1, 0)
        dl.consume(T())
        T.__dlpack__ = lambda self, **kw: value(999).__dlpack__(**kw)
        print(struct.unpack("i", dl.consume(T())["bytes"])[0])
    """,
    # A producer row (torch.Tensor's query methods) resolved again by an import nested in its
    # resolution: the outer one overwrote the inner one's references (a leak).
    # The same type imported again by a lookup its own first caching ran (a metaclass's
    # __getattr__): it took a second slot, with a second reference.
    "nested caching": """
        class Meta(type):
            nested = False
            def __getattr__(cls, name):
                if name == "__dlpack_data_type__" and not Meta.nested:
                    Meta.nested = True
                    dl.consume(cls())
                raise AttributeError(name)
        class T(metaclass=Meta):
            __slots__ = ()
            def __dlpack__(self, **kw): return value(5).__dlpack__(**kw)
            def __dlpack_device__(self): return (1, 0)
        before = sys.getrefcount(T)
        dl.consume(T())
        print(sys.getrefcount(T) - before)
    """,
    "producer row": """
        class FT:  # stands for torch.Tensor
            def is_conj(self): return False
            def is_neg(self): return False
        class FakeTorch:
            nested = False
            @property
            def Tensor(self):
                if not FakeTorch.nested:
                    FakeTorch.nested = True
                    dl.consume(fresh(100))  # a cache miss: resolves the row itself
                return FT
        sys.modules["torch"] = FakeTorch()
        before = sys.getrefcount(FT)
        dl.consume(fresh(200))
        print(sys.getrefcount(FT) - before)
    """,
}
CACHE_REENTRY_PRELUDE = """
import struct, sys
import dlpm_interop as dl
def value(v):
    t = dl.tensor((1,), (0, 32, 1))
    dl.fill(t, struct.pack("i", v))
    return t
kept = []
def fresh(i):
    source = value(i)
    C = type(f"Fresh{i}", (), {"__slots__": (), "__dlpack__": lambda self, _s=source, **kw: _s.__dlpack__(**kw),
                               "__dlpack_device__": lambda self: (1, 0)})
    kept.append(C)
    return C()
class Finaliser:
    def __del__(self):
        for i in range(16): dl.consume(fresh(1000 + i))
"""


@pytest.mark.parametrize("case, expected", [("eviction", "1"), ("stale method", "999"), ("nested caching", "1"),
                                            ("producer row", "1")])
def test_a_finaliser_that_imports_while_the_type_cache_changes(case, expected):
    """The evicted entry is let go once the slot is whole again, the fresh method is returned
    from a reference of the caller's own, and a row resolved meanwhile is kept: the cache held
    one reference to Old (not two let go), T is imported with its own __dlpack__ (999, not a
    Fresh type's), FT gains one reference (not two)."""
    script = CACHE_REENTRY_PRELUDE + textwrap.dedent(CACHE_REENTRY[case])
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ), capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected, (case, out.stdout, out.stderr)
