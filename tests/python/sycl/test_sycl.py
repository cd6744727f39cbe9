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
    """dpnp fills arrays asynchronously: a host read waits for the array's queue first
    (what __dlpack__(stream=queue) would do; the component passes integer streams only)."""
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
