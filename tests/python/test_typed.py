# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dlpack_mdspan/python.hpp: typed imports, borrowed views and a C++ exchange-API table."""
import os

import pytest

import dlpm_interop as dl

MODERN = os.environ.get("DLPM_PYTHON_FLAVOUR", "modern") == "modern"


def test_try_import_checks_the_mdspan_type(np):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert dl.sum_f32_2d(a) == 66.0
    assert dl.sum_f32_2d(a.T[::2]) == float(a.T[::2].sum())  # layout_stride takes any strides
    with pytest.raises(TypeError, match="dtype"):
        dl.sum_f32_2d(a.astype(np.float64))
    with pytest.raises(TypeError, match="rank"):
        dl.sum_f32_2d(a.reshape(-1))
    with pytest.raises(TypeError, match="expected a DLPack tensor"):
        dl.sum_f32_2d("not a tensor")


def test_with_view_writes_through_a_mutable_view(np):
    a = np.zeros(4)
    if MODERN:
        dl.fill_f64_1d(a, 2.5)
        assert a.tolist() == [2.5] * 4
    else:  # a legacy capsule arrives READ_ONLY: a mutable mdspan refuses it
        with pytest.raises(TypeError, match="READ_ONLY"):
            dl.fill_f64_1d(a, 2.5)

    class LegacyProducer:  # legacy ("dltensor") capsules alone, as NumPy 1.x's
        def __dlpack__(self, **kwargs):
            return a.__dlpack__()

        def __dlpack_device__(self):
            return a.__dlpack_device__()

    # the refusal says why the tensor is READ_ONLY, and the opt-in
    with pytest.raises(TypeError, match="a legacy DLPack tensor cannot say whether it may be written .*legacy_writable"):
        dl.fill_f64_1d(LegacyProducer(), 2.5)
    t = dl.tensor((3,), (2, 64, 1))
    dl.fill_f64_1d(t, -1.0)  # our own type: the owning path of its exchange API
    assert np.frombuffer(dl.consume(t)["bytes"], np.float64).tolist() == [-1.0] * 3
    with pytest.raises(TypeError, match="READ_ONLY"):
        dl.fill_f64_1d(dl.tensor((3,), (2, 64, 1), readonly=True), 1.0)


def test_held_view_outlives_the_python_object(np, collect):
    t = dl.tensor((2, 2))
    dl.fill(t, np.array([1, 2, 3, 4], dtype=np.float32).tobytes())
    before = dl.released()
    dl.keep(t)
    del t
    collect()
    assert dl.released() == before  # the held view keeps the memory
    assert dl.kept_sum() == 10.0
    collect()
    assert dl.released() == before + 1


def test_cxx_exchange_table_for_a_type_of_ours(np):
    h = dl.Holder(3)
    assert dl.exchange_api(h) == (1, 3)
    assert np.frombuffer(dl.consume(h)["bytes"], np.float32).tolist() == [1.0, 1.0, 1.0]
    # The C++ exception became the table's RuntimeError, not a crash; the import raises it as
    # the cause of a BufferError (docs/errors.md).
    with pytest.raises(BufferError, match="managed_tensor_from_py_object_no_sync raised RuntimeError") as e:
        dl.consume(dl.Holder(0))
    assert type(e.value.__cause__) is RuntimeError
    assert str(e.value.__cause__) == "C++ exception: an empty Holder has nothing to export"
    with pytest.raises(BufferError, match="dltensor_from_py_object_no_sync raised RuntimeError") as e:
        dl.consume(h, borrow=True)
    assert str(e.value.__cause__) == "C++ exception: borrowing is not offered by Holder"
    with pytest.raises(TypeError, match="expected a DLPack tensor"):
        dl.consume(h, exchange=False)  # Holder has no __dlpack__: only the table
    # A function of ours that fails without an exception: BufferError naming the entry (it was
    # a RuntimeError saying "BufferError: ..."); a borrow then asks the owned export, which
    # fails the same way.
    for borrow in (False, True):
        with pytest.raises(BufferError, match=r"^managed_tensor_from_py_object_no_sync: your export failed without setting "
                                              r"an exception$"):
            dl.consume(dl.Holder(1), borrow=borrow)
