# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kDLOneAPI both ways with real SYCL producers and consumers: dpnp arrays and dpctl USM
allocations on Intel's OpenCL CPU device, through the shipped Python component and
sycl.hpp (driven by the dlpm_sycl test extension).

CTest runs this with the SYCL venv of scripts/install-deps and OCL_ICD_FILENAMES set; a
machine without that device fails here instead of skipping, because CI always has it.
"""
import gc

import dpctl
import dpctl.memory
import dpnp
import numpy as np
import pytest

import dlpm_sycl

KDL_ONEAPI = 14


def ready(array):
    """dpnp fills arrays asynchronously: a host read in place waits for the array's queue
    first (an import can instead pass the queue as its stream: dlpm_py_options.stream_object)."""
    array.sycl_queue.wait()
    return array


def address(array):
    """The address of element 0 (the interface gives the allocation and an element offset)."""
    interface = array.__sycl_usm_array_interface__
    return interface["data"][0] + interface.get("offset", 0) * array.itemsize


@pytest.fixture(scope="module")
def cpu():
    devices = dpctl.get_devices()
    assert devices, "no SYCL device: is OCL_ICD_FILENAMES set to the intel-opencl-rt wheel's libintelocl.so?"
    return devices[0]


def test_a_dpnp_array_is_a_usm_view_on_its_root_device(cpu):
    x = dpnp.arange(6, dtype="f4", device="cpu")
    assert x.__dlpack_device__() == (KDL_ONEAPI, 0)
    device_type, device_id, data, kind = dlpm_sycl.usm_view(x)
    assert (device_type, device_id) == (KDL_ONEAPI, 0)
    assert data == address(x)  # zero copy
    assert kind == x.usm_type == "device"


def test_numpy_cannot_take_what_we_take():
    """The reason this path exists: NumPy refuses every kDLOneAPI capsule."""
    x = dpnp.arange(6, dtype="f4", device="cpu")
    with pytest.raises((BufferError, RuntimeError, TypeError, ValueError)):
        np.from_dlpack(x)
    assert dlpm_sycl.usm_view(x)[0] == KDL_ONEAPI


def test_host_views_refuse_device_usm_unless_the_caller_allows_it():
    x = ready(dpnp.arange(6, dtype="f4", device="cpu"))
    with pytest.raises(TypeError, match=r"device USM on CPU root device 0: the host may not read it unless"):
        dlpm_sycl.host_sum(x)
    total, data = dlpm_sycl.host_sum(x, True)
    assert (total, data) == (15.0, address(x))
    x[0] = 100  # the same memory: the next read sees the write
    ready(x)
    assert dlpm_sycl.host_sum(x, True)[0] == 115.0


@pytest.mark.parametrize("usm_type", ["shared", "host"])
def test_host_views_read_shared_and_host_usm_in_place(usm_type):
    x = ready(dpnp.arange(6, dtype="f4", device="cpu", usm_type=usm_type))
    total, data = dlpm_sycl.host_sum(x)
    assert (total, data) == (15.0, address(x))
    assert dlpm_sycl.usm_view(x)[3] == usm_type


def test_a_strided_dpnp_view_keeps_its_strides():
    x = ready(dpnp.arange(12, dtype="f4", device="cpu", usm_type="shared"))[1::3]  # 1, 4, 7, 10
    total, data = dlpm_sycl.host_sum(x)
    assert total == 22.0
    assert data == address(x)


@pytest.mark.parametrize("memory", [dpctl.memory.MemoryUSMShared, dpctl.memory.MemoryUSMDevice, dpctl.memory.MemoryUSMHost])
def test_a_dpctl_allocation_goes_to_dpnp_zero_copy(memory):
    allocation = memory(6 * 4)
    tensor = dlpm_sycl.export_usm(allocation._pointer, 6, allocation)
    assert tensor.__dlpack_device__() == (KDL_ONEAPI, 0)
    y = dpnp.from_dlpack(tensor)
    assert address(y) == allocation._pointer
    assert y.usm_type == memory.__name__.replace("MemoryUSM", "").lower()
    y[:] = dpnp.arange(6, dtype="f4", device="cpu")
    ready(y)
    expected = np.arange(6, dtype="f4").tobytes()
    assert bytes(allocation.copy_to_host()) == expected  # written through the shared memory
    # The tensor keeps the allocation alive once the caller's references are gone.
    del tensor, allocation
    gc.collect()
    np.testing.assert_array_equal(dpnp.asnumpy(y), np.arange(6, dtype="f4"))


def test_a_round_trip_dpnp_to_us_and_back_to_dpnp():
    x = dpnp.arange(6, dtype="f4", device="cpu")
    tensor = dlpm_sycl.export_usm(address(x), 6, x)
    y = dpnp.from_dlpack(tensor)
    assert address(y) == address(x)
    y[2] = -1
    ready(y)
    assert float(x[2]) == -1.0


def test_a_device_id_that_names_no_root_device_is_refused():
    allocation = dpctl.memory.MemoryUSMShared(24)
    count = len(dpctl.get_devices())
    assert dlpm_sycl.check_raw(allocation._pointer, 6, 0) == "shared"
    with pytest.raises(TypeError, match=rf"device_id {count} names no SYCL root device \(this process sees {count}"):
        dlpm_sycl.check_raw(allocation._pointer, 6, count)


def test_usm_of_a_foreign_context_is_refused_both_ways(cpu):
    context = dpctl.SyclContext([cpu])  # a context of its own (SyclContext(cpu) is dpctl's cached default)
    assert context != cpu.sycl_platform.default_context
    allocation = dpctl.memory.MemoryUSMShared(24, queue=dpctl.SyclQueue(context, cpu))
    with pytest.raises(TypeError, match=r"is not a USM allocation of the default context of device_id 0's platform"):
        dlpm_sycl.check_raw(allocation._pointer, 6, 0)
    with pytest.raises(TypeError, match=r"not a USM allocation of any SYCL platform's default context"):
        dlpm_sycl.export_usm(allocation._pointer, 6, allocation)


def test_host_memory_labelled_kdloneapi_is_refused():
    host = np.zeros(6, dtype="f4")
    with pytest.raises(TypeError, match=r"is not a USM allocation of the default context"):
        dlpm_sycl.check_raw(host.ctypes.data, 6, 0)


# ---- copies across devices and dpctl queues as streams (python_sycl.hpp) -----------------

IS_COPIED = 1 << 1
KDL_CPU = 1


class Capsule:
    """A producer that hands out one capsule, on the device it names: how a test gives a
    capsule made by __dlpack__(dl_device=...) to a consumer's from_dlpack."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def test_dl_device_cpu_of_device_usm_is_a_host_copy_flagged_is_copied(cpu):
    x = dpnp.arange(6, dtype="f4", device="cpu")
    t = dlpm_sycl.reexport(x)
    for copy in (None, True):
        capsule = t.__dlpack__(dl_device=(KDL_CPU, 0), copy=copy, max_version=(1, 0))
        device_type, device_id, flags, data, values = dlpm_sycl.describe(capsule)
        assert (device_type, device_id) == (KDL_CPU, 0)
        assert flags & IS_COPIED
        assert data != address(x)
        assert values == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    # NumPy asks for the host copy itself (from_dlpack(device="cpu") passes dl_device).
    y = np.from_dlpack(t, device="cpu")
    np.testing.assert_array_equal(y, np.arange(6, dtype="f4"))


def test_dl_device_copies_of_strided_usm_follow_the_strides(cpu):
    x = dpnp.arange(24, dtype="f4", device="cpu").reshape(4, 6)[::-1, 1::2].T  # negative and non-unit strides
    t = dlpm_sycl.reexport(x)
    assert t.strides == tuple(s // 4 for s in x.strides)
    y = np.from_dlpack(t, device="cpu")
    np.testing.assert_array_equal(y, dpnp.asnumpy(x))


def test_copy_false_with_another_dl_device_is_refused(cpu):
    t = dlpm_sycl.reexport(dpnp.arange(3, dtype="f4", device="cpu"))
    with pytest.raises(BufferError, match="copy=False forbids one"):
        t.__dlpack__(dl_device=(KDL_CPU, 0), copy=False, max_version=(1, 0))
    with pytest.raises(BufferError, match=r"SYCL: cannot copy from device \(14, 0\) to \(2, 0\)"):
        t.__dlpack__(dl_device=(2, 0), max_version=(1, 0))
    with pytest.raises(BufferError, match="device_id 7 names no SYCL root device"):
        t.__dlpack__(dl_device=(KDL_ONEAPI, 7), max_version=(1, 0))


def test_copy_true_of_device_usm_is_new_device_usm(cpu):
    x = dpnp.arange(5, dtype="f4", device="cpu")
    t = dlpm_sycl.reexport(x)
    capsule = t.__dlpack__(copy=True, max_version=(1, 0))
    device_type, device_id, flags, data, kind = dlpm_sycl.describe(capsule)
    assert (device_type, device_id, kind) == (KDL_ONEAPI, 0, "device")
    assert flags & IS_COPIED and data != address(x)
    y = dpnp.from_dlpack(Capsule(t.__dlpack__(copy=True, max_version=(1, 0)), (KDL_ONEAPI, 0)))
    assert y.usm_type == "device"
    np.testing.assert_array_equal(dpnp.asnumpy(y), np.arange(5, dtype="f4"))


def test_host_memory_copied_to_device_usm_on_request(cpu):
    t = dlpm_sycl.host_tensor(4)
    assert t.device == (KDL_CPU, 0)
    capsule = t.__dlpack__(dl_device=(KDL_ONEAPI, 0), max_version=(1, 0))
    device_type, device_id, flags, data, kind = dlpm_sycl.describe(capsule)
    assert (device_type, device_id) == (KDL_ONEAPI, 0) and flags & IS_COPIED
    assert kind == "device"  # device USM of the default context (check_usm_tensor)
    y = dpnp.from_dlpack(Capsule(t.__dlpack__(dl_device=(KDL_ONEAPI, 0), max_version=(1, 0)), (KDL_ONEAPI, 0)))
    np.testing.assert_array_equal(dpnp.asnumpy(y), np.arange(4, dtype="f4"))


def test_a_sycl_queue_is_the_stream_of_kdloneapi_exports(cpu):
    x = dpnp.arange(3, dtype="f4", device="cpu")
    t = dlpm_sycl.reexport(x)
    other = dpctl.SyclQueue(x.sycl_device)
    for stream in (None, x.sycl_queue, other, other._get_capsule()):
        capsule = t.__dlpack__(stream=stream, max_version=(1, 0))
        assert dlpm_sycl.describe(capsule)[3] == address(x)  # zero copy
    with pytest.raises(TypeError, match="dpctl.SyclQueue"):
        t.__dlpack__(stream=5, max_version=(1, 0))
    # A consumer through the array API: dpnp passes its queue as the stream.
    y = dpnp.from_dlpack(t)
    np.testing.assert_array_equal(dpnp.asnumpy(y), np.arange(3, dtype="f4"))


def test_import_passes_an_object_stream_to_the_producer(cpu):
    x = dpnp.arange(3, dtype="f4", device="cpu")
    assert dlpm_sycl.import_on(x, dpctl.SyclQueue(x.sycl_device)) == (KDL_ONEAPI, 0)
    with pytest.raises(TypeError, match="dpctl.SyclQueue"):  # dpctl's own refusal of an integer
        dlpm_sycl.import_on(x, 5)
