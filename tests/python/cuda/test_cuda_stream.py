# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""python_cuda.hpp: a CUDA producer's __dlpack__(stream=...) as the Python array API
defines it, on whatever machine runs it. Values that need no CUDA call (the same stream,
-1, refusals) behave the same everywhere; a wait across streams calls the runtime, which
succeeds on a GPU and, without one, fails with BufferError naming the CUDA call.
"""
import pytest

import dlpm_cuda_stream

LEGACY, PER_THREAD = 1, 2


def capsule_name(capsule):
    return repr(capsule).split('"')[1]


@pytest.mark.parametrize("stream", [None, LEGACY, -1], ids=["None", "legacy", "no-sync"])
def test_no_cuda_call_is_needed_for_the_same_stream_or_no_sync(stream):
    """stream=None means the legacy default stream for CUDA, the producer's own here."""
    t = dlpm_cuda_stream.tensor_on_stream(LEGACY)
    assert t.__dlpack_device__() == (2, 0)
    assert capsule_name(t.__dlpack__(max_version=(1, 3), stream=stream)) == "dltensor_versioned"


@pytest.mark.parametrize("stream", [0, -2, -(2**40)])
def test_values_the_array_api_disallows_are_refused(stream):
    t = dlpm_cuda_stream.tensor_on_stream(LEGACY)
    with pytest.raises(BufferError, match=rf"unsupported stream on CUDA: {stream}"):
        t.__dlpack__(max_version=(1, 3), stream=stream)


@pytest.mark.parametrize("stream", [2**64 - 1, 2**63, -(2**63) - 1])
def test_a_stream_past_int64_is_refused_not_narrowed(stream):
    """2**64 - 1 narrowed would be -1, "no synchronisation": a silent stale read."""
    t = dlpm_cuda_stream.tensor_on_stream(LEGACY)
    with pytest.raises(OverflowError, match=rf"__dlpack__: stream = {stream} is out of range"):
        t.__dlpack__(max_version=(1, 3), stream=stream)
    with pytest.raises(OverflowError, match=rf"__dlpack__: stream = {stream} is out of range"):
        t.__dlpack__(max_version=(1, 3), dl_device=(2, 0), copy=True, stream=stream)


def test_another_stream_waits_through_an_event_or_names_the_failed_call():
    t = dlpm_cuda_stream.tensor_on_stream(LEGACY)
    try:
        capsule = t.__dlpack__(max_version=(1, 3), stream=PER_THREAD)
    except BufferError as e:  # no GPU or no driver: the first runtime call fails
        assert "make_stream_wait: cudaEventCreateWithFlags failed: cuda" in str(e)
    else:
        assert capsule_name(capsule) == "dltensor_versioned"


def test_a_stream_that_is_not_an_integer_is_a_type_error():
    t = dlpm_cuda_stream.tensor_on_stream(LEGACY)
    with pytest.raises(TypeError, match=r"^__dlpack__: stream must be None or an integer for CUDA memory, not <class 'str'>$"):
        t.__dlpack__(max_version=(1, 3), stream="queue")


class Capsule:
    """A producer handing out one capsule, for a consumer's from_dlpack."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def test_copies_across_devices_or_names_the_failed_call():
    """dl_device=(kDLCPU, 0) of device memory is a host copy flagged IS_COPIED; copy=True a
    new device copy. Without a GPU, making the device memory fails first, naming the call."""
    try:
        t = dlpm_cuda_stream.cuda_tensor(6)
    except BufferError as e:
        assert "failed: cuda" in str(e)
        pytest.skip(f"no usable CUDA device: {e}")
    np = pytest.importorskip("numpy")
    y = np.from_dlpack(Capsule(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0)), (1, 0)))
    np.testing.assert_array_equal(y, np.arange(6, dtype="f4"))
    copy = t.__dlpack__(max_version=(1, 3), copy=True, stream=LEGACY)
    assert capsule_name(copy) == "dltensor_versioned"
    with pytest.raises(BufferError, match="copy=False forbids one"):
        t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)
