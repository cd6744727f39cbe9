# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A Kokkos::View to NumPy 2 and PyTorch 2 without a copy, and their arrays back as Views
(dlpack_mdspan/kokkos.hpp through the kokkos_views extension, kokkos_views_py.cpp), in the
frameworks venv of scripts/install-deps."""
import numpy
import pytest
import torch

import kokkos_views


def test_a_view_reaches_numpy_and_torch_without_a_copy():
    tensor, address = kokkos_views.matrix(False)
    a = numpy.from_dlpack(tensor)
    t = torch.from_dlpack(tensor)
    assert a.ctypes.data == address
    assert t.data_ptr() == address
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert a.dtype == numpy.float32 and t.dtype == torch.float32
    assert a.flags.writeable
    t[1, 2] = -7.0  # PyTorch writes the View's memory, which NumPy and the View see
    assert a[1, 2] == -7.0
    total, view_address = kokkos_views.view_sum(tensor)
    assert view_address == address
    assert total == 0 + 1 + 2 + 3 + 4 - 7.0


def test_the_tensor_keeps_the_view_alive():
    tensor, address = kokkos_views.matrix(False)
    a = numpy.from_dlpack(tensor)
    del tensor  # the extension's View went when matrix() returned; the array still holds a copy
    assert a.ctypes.data == address
    assert a.sum() == 15.0


def test_a_const_view_is_read_only():
    tensor, address = kokkos_views.matrix(True)
    a = numpy.from_dlpack(tensor)
    assert a.ctypes.data == address
    assert not a.flags.writeable  # NumPy 2 honours DLPack's READ_ONLY flag
    with pytest.raises(ValueError):
        a[0, 0] = 1.0
    # PyTorch has no read-only tensors: it takes the memory as it is (its own policy)
    assert torch.from_dlpack(tensor).data_ptr() == address


def test_a_layout_left_view_is_column_major():
    tensor, address = kokkos_views.left()
    a = numpy.from_dlpack(tensor)
    assert a.ctypes.data == address
    assert a.flags.f_contiguous and a.strides == (8, 24)
    assert a[2, 1] == 21.0


def test_numpy_and_torch_arrays_come_back_as_views_in_place():
    m = numpy.arange(12.0).reshape(3, 4)
    total, address = kokkos_views.view_sum(m.T)
    assert (total, address) == (66.0, m.ctypes.data)
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1:3]
    total, address = kokkos_views.view_sum(t)
    assert (total, address) == (float(t.sum()), t.data_ptr())


def test_a_tensor_that_does_not_fit_is_refused_with_the_reason():
    assert "strides" in kokkos_views.view_refusal(numpy.arange(12.0).reshape(3, 4).T)
    assert "float32" in kokkos_views.view_refusal(numpy.zeros((2, 2), numpy.float32))
    assert kokkos_views.view_refusal(numpy.zeros((2, 2))) is None
