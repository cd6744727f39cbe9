# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The nanobind and pybind11 casters (bindings/) against PyTorch 2.15 in the frameworks venv:
torch.Tensor publishes DLPack 1.3's exchange API, which both casters use, so its
``__dlpack__`` is patched out here to prove that no call goes through it.
"""
import importlib

import pytest
import torch


@pytest.fixture(params=["bound_nanobind", "bound_pybind11"])
def ext(request):
    return importlib.import_module(request.param)


@pytest.fixture
def no_dunder_dlpack(monkeypatch):
    def refuse(self, *args, **kwargs):
        raise RuntimeError("torch.Tensor.__dlpack__ is patched out")

    monkeypatch.setattr(torch.Tensor, "__dlpack__", refuse)


def test_a_write_in_cpp_is_seen_by_torch(ext, no_dunder_dlpack):
    t = torch.ones(2, 3)
    ext.scale(t, 4.0)
    assert t.tolist() == [[4.0] * 3] * 2
    ext.fill(torch.zeros(3, dtype=torch.float64)[::2], 1.0)  # strided, versioned: writable


def test_read_only_views_are_borrowed(ext, no_dunder_dlpack):
    t = torch.arange(10, dtype=torch.float64)
    assert ext.total(t[::3]) == 18.0
    assert ext.total_any(t.flip(0)) == 45.0
    assert ext.sum_without_gil(torch.arange(5, dtype=torch.float32)) == (False, 10.0)


def test_column_major_and_static_extents(ext, no_dunder_dlpack):
    c = torch.arange(6, dtype=torch.float32).reshape(3, 2)
    expected = sum(float(c[j, i]) * 10 ** (i * 3 + j) for i in range(2) for j in range(3))
    assert ext.fixed_left(c.t()) == expected
    with pytest.raises(TypeError, match=r"mdspan\[dtype=float32, shape=\(2, 3\), order='F'"):
        ext.fixed_left(torch.zeros(2, 3))


def test_overloads_and_refusals(ext, no_dunder_dlpack):
    assert ext.kind(torch.zeros(2)) == "float32"
    assert ext.kind(torch.zeros(2, dtype=torch.int32)) == "int32"
    with pytest.raises(TypeError, match="does not match"):
        ext.kind(torch.zeros(2, dtype=torch.float64))
    with pytest.raises(TypeError, match="rank"):
        ext.scale(torch.zeros(4), 1.0)


def test_held_view_keeps_the_tensor(ext, collect):
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    ext.keep(t)
    del t
    collect()
    assert ext.kept_sum() == 15.0


def test_returned_view_shares_torch_memory(ext):
    t = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    rows = torch.from_dlpack(ext.every_other_row(t))
    assert rows.tolist() == t[::2].tolist()
    rows[1, 0] = -1.0
    assert t[2, 0] == -1.0


def test_returned_as_torch(ext):
    r = ext.arange_2x3_torch()
    assert isinstance(r, torch.Tensor)
    assert r.tolist() == [[0, 1, 2], [3, 4, 5]]
    p = ext.pass_through(r)
    assert torch.from_dlpack(p).data_ptr() == r.data_ptr()


# Semantic bits (docs/python-interop.md): a lazy negated view is refused by every caster; a
# tensor that requires grad by the casters that may write (a mutable element type, a
# managed_tensor) and taken by the read-only ones. BufferError passes through the caster
# unchanged (it is not a "does not fit" TypeError).
NEG = r"torch\.Tensor refused: its negative bit is set .* call \.resolve_neg\(\) on it first"
GRAD = r"torch\.Tensor refused: it requires grad, .* call \.detach\(\) on it first, or import it read-only"


def test_neg_views_are_refused(ext, no_dunder_dlpack):
    n = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)._neg_view()
    with pytest.raises(BufferError, match=NEG) as refused:
        ext.total(n)  # borrowed (read-only)
    # the way to accept the bit is the option the extension's author sets, not the C struct's
    assert ("or set dlpack_mdspan::python::caster_options().accept_semantic_bits = 1 in the extension to take "
            "the raw memory") in str(refused.value)
    with pytest.raises(BufferError, match=NEG):
        ext.fill(n, 1.0)  # owned (writable)
    assert ext.total(n.resolve_neg()) == -2.0
    with pytest.raises(BufferError, match=NEG):
        ext.keep(torch.ones(2, 3)._neg_view())  # held_view, const


def test_the_peers_take_a_neg_views_raw_memory():
    """The check no peer makes (docs/performance.md, the torch rows): PyTorch's own
    ``__dlpack__``, ``numpy.from_dlpack`` and nanobind's own ``nb::ndarray`` take a negated
    view's memory as it is, a silently wrong value; our casters refuse it (above)."""
    import bound_nanobind
    import numpy

    n = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)._neg_view()  # means [-1, 2, -3]
    assert n.is_neg() and n.sum().item() == -2.0
    assert bound_nanobind.ndarray_total(n) == 2.0  # nanobind: the raw memory
    assert numpy.from_dlpack(n).sum() == 2.0
    assert torch.from_dlpack(n.__dlpack__()).sum().item() == 2.0
    assert bound_nanobind.ndarray_total(n.resolve_neg()) == -2.0
    with pytest.raises(BufferError, match=NEG):
        bound_nanobind.total(n)


def test_requires_grad_is_refused_for_writers_only(ext, no_dunder_dlpack):
    g = torch.ones(2, 3, requires_grad=True)
    with pytest.raises(BufferError, match=GRAD):
        ext.scale(g, 2.0)  # std::mdspan<float>
    with pytest.raises(BufferError, match=GRAD):
        ext.every_other_row(g)  # held_view<mdspan<float>>
    with pytest.raises(BufferError, match=GRAD):
        ext.pass_through(g)  # managed_tensor: may be written through
    assert g.detach().tolist() == [[1.0] * 3] * 2
    assert ext.total(torch.arange(4.0, dtype=torch.float64, requires_grad=True)) == 6.0  # const: read
    ext.keep(g)  # held_view<mdspan<const float>>
    assert ext.kept_sum() == 6.0
    ext.scale(g.detach(), 2.0)  # the remedy: the same memory, without autograd
    assert g.detach().tolist() == [[2.0] * 3] * 2


def test_a_const_view_of_requires_grad_stays_read_only(ext, no_dunder_dlpack):
    """A const view of a tensor that requires grad, returned as our Tensor, is READ_ONLY for
    PyTorch's reason: NumPy cannot write it, and a legacy export is refused naming it."""
    import numpy as np

    g = torch.arange(12.0).reshape(4, 3).requires_grad_()
    rows = ext.every_other_row_const(g)
    assert rows.readonly
    r = np.from_dlpack(rows)
    assert r.tolist() == g.detach()[::2].tolist() and not r.flags.writeable
    with pytest.raises(BufferError, match=r"torch\.Tensor forbids writes to tensors that require gradient"):
        rows.__dlpack__()
