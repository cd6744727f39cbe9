# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The array API's dtype and device protocol (__dlpack_data_type__, __dlpack_device__): our
Tensor answers it, and a typed import asks a producer that offers it before any export, so
a wrong dtype is refused without a capsule. The capsule stays authoritative: a producer
whose announcement raises, is malformed, or lies never yields a wrongly typed view.
"""
import importlib

import pytest

import dlpm_interop as dl

INT, FLOAT = 0, 2
F32, I32 = (FLOAT, 32, 1), (INT, 32, 1)


class Announcing:
    """A NumPy array's producer that announces `announce` (or raises it, an exception) and
    counts the capsules its __dlpack__ makes (NumPy 1.x refuses max_version: the component
    asks again without it, which makes one)."""

    def __init__(self, array, announce):
        self.array, self.announce, self.calls = array, announce, 0

    def __dlpack__(self, **kwargs):
        capsule = self.array.__dlpack__(**kwargs)
        self.calls += 1
        return capsule

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack_data_type__(self):
        if isinstance(self.announce, BaseException):
            raise self.announce
        return self.announce


def test_our_tensor_answers_the_protocol():
    t = dl.tensor((2, 3), I32)
    assert t.__dlpack_data_type__() == I32 == t.dtype
    assert t.__dlpack_device__() == (1, 0)


def test_a_mismatch_is_refused_without_an_export(np):
    p = Announcing(np.arange(3, dtype=np.float32), F32)
    with pytest.raises(TypeError, match=r"does not match the required .*, as the producer's __dlpack_data_type__\(\)"):
        dl.consume(p, dtype=I32)
    assert p.calls == 0, "refused before the producer made a capsule"
    assert dl.consume(p, dtype=F32)["shape"] == (3,) and p.calls == 1
    dl.consume(p)  # no dtype asked: nothing to announce against
    assert p.calls == 2


def test_our_tensor_is_refused_without_a_capsule():
    """Our Tensor publishes the exchange API, through which its tensor is looked at without a
    capsule, which is cheaper than two Python calls: it is not asked, and the refusal is the
    tensor's own."""
    t = dl.tensor((2,), F32)
    for borrow in (False, True):
        with pytest.raises(TypeError, match="does not match the required") as refused:
            dl.consume(t, dtype=I32, borrow=borrow)
        assert "__dlpack_data_type__" not in str(refused.value)
    assert dl.consume(t, dtype=F32, borrow=True)["dtype"] == F32


@pytest.mark.parametrize("announce", [ValueError("no dtype"), "float32", (2, 32), (300, 32, 1), (2, -1, 1), None,
                                      (2.0, 32, 1)], ids=repr)
def test_an_unusable_announcement_is_ignored(np, announce):
    """It raises or is no (code, bits, lanes) tuple: the capsule decides, as without it."""
    p = Announcing(np.arange(3, dtype=np.float32), announce)
    assert dl.consume(p, dtype=F32)["dtype"] == F32 and p.calls == 1
    with pytest.raises(TypeError, match="does not match the required"):
        dl.consume(p, dtype=I32)  # refused by the tensor itself, after the export
    assert p.calls == 2


def test_an_interrupt_in_an_announcement_is_raised(np):
    """A KeyboardInterrupt raised by __dlpack_data_type__ is the user's, not an unusable
    announcement: raised, and no capsule made (it was cleared and the import went on)."""
    p = Announcing(np.arange(3, dtype=np.float32), KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        dl.consume(p, dtype=F32)
    assert p.calls == 0


class InterruptingIndex:
    """An integer of a producer's answer whose __index__ is interrupted (Ctrl-C)."""

    def __index__(self):
        raise KeyboardInterrupt


def test_an_interrupt_while_reading_an_answer_is_raised(np):
    """An interrupt in the __index__ of an item of __dlpack_data_type__() or __dlpack_device__()
    is the user's: raised as it is, not reworded into a malformed answer (BufferError) that
    the import cleared before going on."""
    p = Announcing(np.arange(3, dtype=np.float32), (FLOAT, 32, InterruptingIndex()))
    with pytest.raises(KeyboardInterrupt):
        dl.consume(p, dtype=F32)
    assert p.calls == 0

    class InterruptedDevice(Announcing):
        def __dlpack_device__(self):
            return (1, InterruptingIndex())

    d = InterruptedDevice(np.arange(3, dtype=np.float32), F32)
    with pytest.raises(KeyboardInterrupt):
        dl.reexport(d)  # the ordered import asks __dlpack_device__ first
    assert d.calls == 0


def test_an_interrupt_in_copy_s_truth_value_is_raised():
    class InterruptingTruth:
        def __bool__(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        dl.tensor((2,), F32).__dlpack__(copy=InterruptingTruth())

    class NoTruth:
        def __bool__(self):
            raise RuntimeError("no truth value")

    with pytest.raises(ValueError, match="copy must be None or a boolean"):
        dl.tensor((2,), F32).__dlpack__(copy=NoTruth())  # an Exception: reworded, as before


def test_a_lying_producer_never_yields_a_wrong_view(np):
    liar = Announcing(np.arange(3, dtype=np.float32), I32)  # says int32, hands over float32
    with pytest.raises(TypeError, match="does not match the required"):
        dl.consume(liar, dtype=I32)  # passes the announcement, refused by the capsule
    assert liar.calls == 1
    with pytest.raises(TypeError, match="__dlpack_data_type__"):
        dl.consume(liar, dtype=F32)  # refused by its own announcement: a float32 view is never made
    assert liar.calls == 1


@pytest.mark.parametrize("borrow", [False, True], ids=["import", "borrow"])
def test_an_unvalidated_import_still_checks_the_announcement(np, borrow):
    """validate = 0 leaves the tensor's checks to the caller, not the announced pre-check: a
    binding that validates the tensor itself (the casters) has the import make it, with the
    type's facts looked up once."""
    p = Announcing(np.arange(3, dtype=np.float32), F32)
    with pytest.raises(TypeError, match="__dlpack_data_type__"):
        dl.consume(p, dtype=I32, validate=False, borrow=borrow)
    assert p.calls == 0, "refused before the producer made a capsule"
    assert dl.consume(p, dtype=F32, validate=False, borrow=borrow)["dtype"] == F32 and p.calls == 1
    liar = Announcing(np.arange(3, dtype=np.float32), I32)  # unvalidated: the tensor is not compared
    assert dl.consume(liar, dtype=I32, validate=False, borrow=borrow)["dtype"] == F32 and liar.calls == 1


@pytest.fixture(params=["bound_nanobind", "bound_pybind11"])
def ext(request):
    return importlib.import_module(request.param)


def test_overloads_fall_through_without_an_export(ext, np):
    """kind() has a float32 overload, then an int32 one: an int32 tensor that announces its
    dtype is exported once, for the overload that takes it."""
    p = Announcing(np.arange(3, dtype=np.int32), I32)
    assert ext.kind(p) == "int32"
    assert p.calls == 1
    q = Announcing(np.arange(3, dtype=np.float32), F32)
    assert ext.kind(q) == "float32" and q.calls == 1
    t = dl.tensor((2,), I32)
    assert ext.kind(t) == "int32"


def test_a_held_view_parameter_is_refused_without_an_export(ext, np):
    """A held_view parameter (an owning import) has the import check the announcement, as a
    view parameter's borrow does: a wrong dtype is refused before __dlpack__ is called, with
    the announcement's message, and a right one exported once."""
    p = Announcing(np.arange(6, dtype=np.int32).reshape(2, 3), I32)
    with pytest.raises(TypeError, match=r"__dlpack_data_type__\(\) and __dlpack_device__\(\) announce it"):
        ext.same_const(p)
    assert p.calls == 0, "refused before the producer made a capsule"
    q = Announcing(np.arange(6, dtype=np.float32).reshape(2, 3), F32)
    assert ext.cast_held(q) == 2 and q.calls == 1  # py::cast / nb::cast of a held_view: the same caster
    assert np.from_dlpack(ext.same_const(q)).tolist() == [[0, 1, 2], [3, 4, 5]] and q.calls == 2
    liar = Announcing(np.arange(6, dtype=np.float32).reshape(2, 3), I32)  # refused by its own announcement
    with pytest.raises(TypeError, match="__dlpack_data_type__"):
        ext.same_const(liar)
    assert liar.calls == 0
