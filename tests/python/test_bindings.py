# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dlpack_mdspan/nanobind.hpp and dlpack_mdspan/pybind11.hpp: std::mdspan parameters, owned
tensors in and out, in two extensions built from one set of functions (bindings/).

Every test runs against both extensions. NumPy always; PyTorch 1.13 on the legacy flavour
(legacy capsules: READ_ONLY unless the parameter opts in), JAX on the modern one. PyTorch 2
through its exchange API is test_frameworks_bindings.py.
"""
import importlib
import os
import subprocess
import sys
import threading

import pytest

LEGACY = os.environ.get("DLPM_PYTHON_FLAVOUR", "modern") == "legacy"


@pytest.fixture(params=["bound_nanobind", "bound_pybind11"])
def ext(request):
    return importlib.import_module(request.param)


def test_a_write_in_cpp_is_seen_by_numpy(ext, np):
    a = np.ones((2, 3), np.float32)
    if LEGACY:  # NumPy 1.24 exports legacy capsules: READ_ONLY for a mutable mdspan
        with pytest.raises(TypeError, match="READ_ONLY"):
            ext.scale(a, 3.0)
        return
    ext.scale(a, 3.0)
    assert a.tolist() == [[3.0] * 3] * 2


def test_legacy_writable_is_a_per_parameter_opt_in(ext, np):
    a = np.zeros(5)
    ext.fill_legacy(a[::2], 7.0)  # strided, written through the opt-in parameter
    assert a.tolist() == [7.0, 0.0, 7.0, 0.0, 7.0]
    if LEGACY:
        with pytest.raises(TypeError, match="READ_ONLY"):
            ext.fill(a, 1.0)
    else:  # a versioned tensor says whether it is writable: no opt-in needed
        ext.fill(a, 1.0)
        assert a.tolist() == [1.0] * 5


class CapsuleProducer:
    """A CPU producer whose __dlpack__, whatever it is asked, returns `make()`'s capsule."""

    def __init__(self, make):
        self.make = make

    def __dlpack__(self, **kwargs):
        return self.make()

    def __dlpack_device__(self):
        return (1, 0)


def LegacyProducer(a):
    """A producer of legacy ("dltensor") capsules alone, as NumPy 1.x, JAX 0.10 and TensorFlow are."""
    return CapsuleProducer(a.__dlpack__)


def test_a_mutable_view_of_a_legacy_tensor_says_why_it_is_read_only(ext, np):
    """The refusal names the cause (a legacy capsule cannot say whether it may be written) and
    the opt-in, not only "use a const element type": for a plain view and a held_view."""
    why = "a legacy DLPack tensor cannot say whether it may be written .*legacy_writable"
    a = np.zeros(3)
    with pytest.raises(TypeError, match=why):
        ext.fill(LegacyProducer(a), 1.0)
    with pytest.raises(TypeError, match=why):
        ext.every_other_row(LegacyProducer(np.zeros((4, 3), np.float32)))
    # the legacy capsule itself, which the casters look at before taking it
    with pytest.raises(TypeError, match=why):
        ext.fill(a.__dlpack__(), 1.0)
    with pytest.raises(TypeError, match=why):
        ext.every_other_row(np.zeros((4, 3), np.float32).__dlpack__())
    ext.fill_legacy(LegacyProducer(a), 1.0)  # the opt-in the message names
    assert a.tolist() == [1.0] * 3


def test_a_held_view_refusal_keeps_its_words_and_lets_go_once(ext, collect):
    """A held_view parameter refuses a tensor only after importing it: the producer's deleter,
    a ctypes callback, runs once, and the refusal's own words reach the caller. Was: the deleter
    ran with the TypeError in flight, cleared it unrun, and the caller read "the import failed"."""
    from test_hostile import FLOAT32, Hand

    for function in (ext.every_other_row, ext.every_other_row_const):
        hand = Hand(shape=(6,), dtype=FLOAT32)  # rank 1: the 2-D view refuses it
        with pytest.raises(TypeError, match="rank"):
            function(CapsuleProducer(hand.capsule))
        collect()
        assert hand.deletes() == 1


def test_read_only_arrays_are_refused_by_mutable_views_only(ext, np):
    a = np.arange(4.0)
    a.flags.writeable = False
    if LEGACY:  # NumPy 1.24 cannot say READ_ONLY, so it refuses: its own error passes unchanged
        with pytest.raises(BufferError, match="Cannot export readonly array"):
            ext.total(a)
        return
    assert ext.total(a) == 6.0
    with pytest.raises((TypeError, BufferError), match="READ_ONLY|read-only|readonly"):
        ext.fill(a, 1.0)


def test_strides_are_honoured(ext, np):
    a = np.arange(10.0)
    assert ext.total(a[::3]) == 0 + 3 + 6 + 9
    with pytest.raises(TypeError, match="layout_stride needs positive strides"):
        ext.total(a[::-1])
    assert ext.total_any(a[::-1]) == 45.0  # layout_stride_relaxed: reversed
    if not LEGACY:  # NumPy 1.24 exports no read-only array, and broadcast_to makes one
        assert ext.total_any(np.broadcast_to(np.float64(2.0), (5,))) == 10.0  # broadcast
    assert "strides=any" in ext.total_any.__doc__


def test_static_extents_and_column_major(ext, np):
    c = np.arange(6, dtype=np.float32).reshape(3, 2)
    # c.T is 2x3 column-major: a[i, j] == c[j, i]
    expected = sum(float(c[j, i]) * 10 ** (i * 3 + j) for i in range(2) for j in range(3))
    assert ext.fixed_left(c.T) == expected
    with pytest.raises(TypeError, match=r"mdspan\[dtype=float32, shape=\(2, 3\), order='F'"):
        ext.fixed_left(np.zeros((2, 3), np.float32))  # row-major: not layout_left
    with pytest.raises(TypeError, match="extent"):
        ext.fixed_left(np.zeros((3, 2), np.float32).T.copy().T[:, :1])


def test_refusals_carry_the_library_message(ext, np):
    with pytest.raises(TypeError, match=r"^mdspan\[dtype=float64.*\]: dtype float32 does not match the required float64"):
        ext.total(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"rank"):
        ext.total(np.ones((2, 2)))


def test_objects_that_are_no_tensor_get_the_binding_message(ext):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.total("not a tensor")


def test_overloads_fall_through_on_element_type(ext, np):
    assert ext.kind(np.zeros(3, np.float32)) == "float32"
    assert ext.kind(np.zeros(3, np.int32)) == "int32"
    assert ext.kind("x") == "str"
    # no overload fits: the first mdspan overload says why, in the library's words
    with pytest.raises(TypeError, match=r"mdspan\[dtype=float32.*does not match"):
        ext.kind(np.zeros(3, np.float64))


def test_a_bare_capsule_refused_by_one_overload_stays_for_the_next(ext, np):
    # A capsule gives its tensor away once: the float32 overload looks, refuses and leaves
    # it, and the int32 one takes it.
    capsule = np.arange(3, dtype=np.int32).__dlpack__()
    assert ext.kind(capsule) == "int32"
    with pytest.raises((TypeError, BufferError), match="already consumed"):
        ext.kind(capsule)  # taken: it cannot be imported again
    # Refused by every overload, it is still whole for a function that fits it.
    wide = np.arange(4, dtype=np.float64).__dlpack__()
    with pytest.raises(TypeError, match=r"mdspan\[dtype=float32.*does not match"):
        ext.kind(wide)
    assert ext.total(wide) == 6.0


def test_noconvert_parameters_always_fall_through(ext, np):
    assert ext.kind_noconvert(np.zeros(3, np.int32)) == "int32"
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.kind_noconvert(np.zeros(3, np.float64))


class InterruptedOnce:
    """A NumPy array's producer whose first call of `method` raises KeyboardInterrupt: the
    user's Ctrl-C, not a refusal, which no overload may swallow by asking again."""

    def __init__(self, array, method):
        self.array, self.method, self.calls = array, method, 0

    def _called(self, name):
        if name == self.method:
            self.calls += 1
            if self.calls == 1:
                raise KeyboardInterrupt

    def __dlpack__(self, **kwargs):
        self._called("__dlpack__")
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        self._called("__dlpack_device__")
        return self.array.__dlpack_device__()

    def __dlpack_data_type__(self):
        self._called("__dlpack_data_type__")
        return (2, self.array.dtype.itemsize * 8, 1)


@pytest.mark.parametrize("method", ["__dlpack__", "__dlpack_device__", "__dlpack_data_type__"])
def test_an_interrupt_is_raised_by_every_overload_pass(ext, np, method):
    """A KeyboardInterrupt in the producer's protocol is raised in the no-conversion pass too,
    never cleared for the next overload to ask again (which returned a value, the Ctrl-C lost)."""
    for function, dtype in ((ext.kind, np.float32), (ext.kind_noconvert, np.float32), (ext.total, np.float64)):
        p = InterruptedOnce(np.arange(3, dtype=dtype), method)
        with pytest.raises(KeyboardInterrupt):
            function(p)
        assert p.calls == 1


def test_an_interrupt_inside_a_container_is_raised_itself(ext, np):
    """nanobind loads a container's elements where nothing may raise: the container stops and
    the outermost one raises the interrupt, the producer's own instance, from the call (a
    SystemExit keeps its code, an exception class that needs arguments arrives as it was
    raised), in any thread, whatever SIGINT's handler; a variant asks the producer no more
    after it. Uncaught, it ends the program as an interrupt does. pybind11 raises them at
    once. In a subprocess: signal handlers, threads and the exit status."""
    passes_in_a_subprocess(ext, """
import signal, subprocess, sys, threading
class Abort(BaseException):
    def __init__(self, why):
        super().__init__(why)
class P:
    asked = 0
    def __dlpack_device__(self): return (1, 0)
    def __dlpack__(self, **kwargs):
        P.asked += 1
        raise self.interrupt
def raised_by(call):
    try:
        call()
    except BaseException as e:
        return e
    return None
calls = (lambda: ext.total_each([P()]), lambda: ext.total_optional(P()), lambda: ext.total_variant(P()),
         lambda: ext.total_each([np.arange(2.0), P(), P()]))
for interrupt in (KeyboardInterrupt("now"), SystemExit(3), Abort("disk gone")):
    P.interrupt = interrupt
    for call in calls:
        P.asked = 0
        assert raised_by(call) is interrupt, (interrupt, call)
        assert P.asked == 1, P.asked
seen = {}
def worker():
    seen["worker"] = raised_by(lambda: ext.total_each([P()]))
P.interrupt = KeyboardInterrupt("worker")
thread = threading.Thread(target=worker)
thread.start()
thread.join()
assert seen == {"worker": P.interrupt}, seen
signal.signal(signal.SIGINT, signal.SIG_IGN)
assert raised_by(lambda: ext.total_variant(P())) is P.interrupt
uncaught = "class P:\\n    def __dlpack_device__(self): return (1, 0)\\n    def __dlpack__(self, **k): raise {}\\n" \\
           "import {} as ext\\next.total_each([P()])\\n"
for raised, status in (("KeyboardInterrupt", (1, -2, 130)), ("SystemExit(3)", (3,))):
    run = subprocess.run([sys.executable, "-c", uncaught.format(raised, ext.__name__)], capture_output=True, text=True)
    assert run.returncode in status and "incompatible function arguments" not in run.stderr, (raised, run)
print("ok")
""")


def test_owned_values_return_in_other_containers(np):
    """nanobind: a std::map, std::pair or std::tuple of owned tensors, which does not compile as
    a parameter (map_of_owned_nanobind.cpp), returns as a dict or a tuple of Tensors."""
    ext = importlib.import_module("bound_nanobind")
    arange = [[0, 1, 2], [3, 4, 5]]
    named = ext.named_aranges()
    assert sorted(named) == ["a", "b"] and all(np.from_dlpack(t).tolist() == arange for t in named.values())
    pair = ext.pair_of_aranges()
    assert isinstance(pair, tuple) and [np.from_dlpack(t).tolist() for t in pair] == [arange] * 2
    tensor, seven = ext.arange_and_seven()
    assert np.from_dlpack(tensor).tolist() == arange and seven == 7
    assert "dict[str, dlpack_mdspan.Tensor]" in ext.named_aranges.__doc__


def test_nanobind_containers_const_elements_and_the_sequences_own_code(np):
    """nanobind: an optional of a const view takes the header's caster (a refusal or an
    interrupt inside nanobind's own optional ended the process); an interrupt raised by a
    sequence's own __getitem__ is raised (it was cleared: "incompatible function arguments");
    a bound call that a sequence's finaliser makes raises its own refusal, and its interrupt
    is not the container's. In a subprocess: an abort is this test's failure."""
    passes_in_a_subprocess(importlib.import_module("bound_nanobind"), """
class P:
    def __dlpack_device__(self): return (1, 0)
    def __dlpack__(self, **kwargs): raise KeyboardInterrupt("k")
def raised_by(call):
    try:
        call()
    except BaseException as e:
        return e
assert ext.total_optional_const(np.arange(3.0)) == 3.0
assert "incompatible function arguments" in str(raised_by(lambda: ext.total_optional_const(np.arange(3, dtype=np.int32))))
assert isinstance(raised_by(lambda: ext.total_optional_const(P())), KeyboardInterrupt)
class Interrupting:
    def __len__(self): return 1
    def __getitem__(self, i): raise SystemExit(4)
e = raised_by(lambda: ext.total_each(Interrupting()))
assert isinstance(e, SystemExit) and e.code == 4, repr(e)
seen = []
class Item:
    def __init__(self, interrupt): self.interrupt = interrupt
    def __dlpack_device__(self): return (1, 0)
    def __dlpack__(self, **kwargs): return np.arange(2.0).__dlpack__(**kwargs)
    def __del__(self):
        seen.append(repr(raised_by(lambda: ext.total([P()] if False else (P() if self.interrupt else np.zeros(2, np.int32))))))
class Items:
    def __init__(self, interrupt): self.interrupt = interrupt
    def __len__(self): return 1
    def __getitem__(self, i):
        if i: raise IndexError
        return Item(self.interrupt)
for interrupt in (False, True):
    seen.clear()
    assert ext.total_each(Items(interrupt)) == 1.0
    assert len(seen) == 1 and ("KeyboardInterrupt" if interrupt else "does not match") in seen[0], seen
print("ok")
""")


def test_a_nested_call_interrupted_leaves_the_container_whole(ext, np):
    """A producer whose own code calls a bound function that its interrupt stops, and which
    handles that interrupt, still gives its tensor: the outer container loads every element
    (nanobind stopped it after the first: a shorter list, silently)."""

    class Interrupts:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            raise KeyboardInterrupt

    class CallsBack:
        def __init__(self, array, nested):
            self.array, self.nested = array, nested

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            if self.nested:
                try:
                    ext.total_each([Interrupts()])
                except KeyboardInterrupt:
                    pass  # the producer's own code handles it
            return self.array.__dlpack__(**kwargs)

    arrays = [np.full(4, 1.0), np.full(4, 10.0), np.full(4, 100.0)]
    assert ext.total_each([CallsBack(a, i == 0) for i, a in enumerate(arrays)]) == 444.0


def test_a_bound_call_from_a_producer_inside_a_container_raises_as_usual(ext, np):
    """A producer's own code may call a bound function while one of its tensors loads as a
    container's element: that call's refusal is raised in the library's words, not cleared
    as if it were the element's (nanobind: "incompatible function arguments" before)."""
    seen = []

    class CallsBack:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            try:
                ext.total(np.arange(3, dtype=np.float32))
            except TypeError as refused:
                seen.append(str(refused))
            return np.arange(3.0).__dlpack__(**kwargs)

    assert ext.total_each([CallsBack()]) == 3.0
    assert ext.total_optional(CallsBack()) == 3.0
    # (NumPy 1.x refuses max_version: its __dlpack__ is asked twice per load, so more calls)
    assert len(seen) >= 2 and all("float32 does not match" in text for text in seen), seen


def test_signatures_name_what_is_accepted(ext):
    doc = ext.kind.__doc__
    assert "mdspan[dtype=float32, shape=(*,), order='C', device=kDLCPU]" in doc
    assert "mdspan[dtype=int32, shape=(*,), order='C', device=kDLCPU]" in doc
    assert "mdspan[dtype=float32, shape=(*, *), order='C', device=kDLCPU, writable]" in ext.scale.__doc__
    assert "shape=(2, 3), order='F'" in ext.fixed_left.__doc__


def test_held_view_outlives_the_array(ext, np, collect):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    ext.keep(a)
    del a
    collect()
    assert ext.kept_sum() == 15.0
    assert ext.kept_sum() is None


def test_a_returned_held_view_shows_its_view_and_shares_memory(ext, np):
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    if LEGACY:
        pytest.skip("a mutable view of a legacy (READ_ONLY) NumPy 1.24 array is refused")
    rows = ext.every_other_row(a)
    assert type(rows).__name__ == "Tensor"
    assert rows.shape == (2, 3)
    r = np.from_dlpack(rows)
    assert r.tolist() == a[::2].tolist()
    r[1, 0] = -1.0
    assert a[2, 0] == -1.0  # zero copy: the original memory


def test_a_managed_tensor_passes_through(ext, np):
    a = np.arange(4, dtype=np.float32)
    t = ext.pass_through(a)
    assert type(t).__name__ == "Tensor"
    if LEGACY:  # it came in READ_ONLY as a legacy capsule, which cannot say: it leaves as one
        assert t.readonly
    b = np.from_dlpack(t)
    assert b.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.shares_memory(a, b)


def test_a_const_view_of_a_legacy_tensor_leaves_as_legacy(ext, np):
    """A const view of a tensor whose writability is unknown (a legacy capsule) keeps that
    cause, not "const", so a legacy consumer may take it; one of a writable tensor is
    READ_ONLY by the function's choice, which a legacy capsule would drop."""
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    rows = ext.every_other_row_const(a)
    assert rows.readonly
    if LEGACY:  # NumPy 1.24 hands over a legacy capsule and asks for one back
        r = np.from_dlpack(rows)
        assert r.tolist() == a[::2].tolist() and np.shares_memory(a, r)
    else:
        with pytest.raises(BufferError, match="READ_ONLY and a legacy DLManagedTensor cannot carry that flag"):
            rows.__dlpack__()
        r = np.from_dlpack(rows)  # versioned: READ_ONLY travels
        assert r.tolist() == a[::2].tolist() and not r.flags.writeable


def test_returned_as_numpy(ext, np):
    a = ext.arange_2x3_numpy()
    assert isinstance(a, np.ndarray)
    assert a.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert ext.arange_2x3().shape == (2, 3)


def test_the_gil_is_released_when_the_binding_says_so(ext, np):
    a = np.arange(5, dtype=np.float32)
    held, total = ext.sum_without_gil(a)
    assert (held, total) == (False, 10.0)
    # and the call really runs without it: other threads make progress meanwhile
    results = []
    threads = [threading.Thread(target=lambda: results.append(ext.sum_without_gil(a))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [(False, 10.0)] * 4


def test_cast_to_a_bare_view(ext, np):
    a = np.arange(4.0)
    if ext.__name__ == "bound_nanobind":  # nb::cast has no call to outlive: refused
        with pytest.raises((RuntimeError, TypeError)):
            ext.cast_view(a)
    else:  # py::cast inside a bound function: kept alive until it returns
        assert ext.cast_view(a) == 6.0
    assert ext.cast_held(np.zeros((3, 2), np.float32)) == 3


def passes_in_a_subprocess(ext, body):
    """Runs `body` (which ends by printing "ok") in a fresh interpreter, with NumPy as `np`
    and the extension as `ext`: a fault or an abort is then this test's failure, not the end
    of the run."""
    code = f"import importlib\nimport numpy as np\next = importlib.import_module({ext.__name__!r})\n{body}"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.strip()) == (0, "ok"), run.stderr


def test_views_inside_containers_outlive_their_element_casters(ext, np):
    # A bare capsule is the only owner of its array: once the tensor is released the array
    # is freed, and at 64 MiB malloc returns it to the system, so a view still in use faults
    # (a subprocess, to report that as a failure rather than end the run).
    passes_in_a_subprocess(ext, """
n = 1 << 23
expected = n * (n - 1) / 2
capsule = lambda: np.arange(n, dtype=np.float64).__dlpack__()
assert ext.total_optional(capsule()) == expected
assert ext.total_optional(None) == -1.0
assert ext.total_each([capsule(), capsule()]) == 2 * expected
assert ext.total_variant(capsule()) == expected
assert ext.total_variant("not a tensor") == -1.0
print("ok")
""")


def test_a_view_refused_inside_a_container_is_a_type_error(ext, np):
    # nanobind loads a container's elements in a noexcept function, where a raise ended the
    # process (std::terminate): a refused element fails the argument there (nanobind's
    # "incompatible function arguments"), where pybind11 raises the library's reason. In a
    # subprocess, so that an abort is a failure of this test.
    passes_in_a_subprocess(ext, """
for call in (lambda: ext.total_optional(np.zeros(3, np.float32)),
             lambda: ext.total_each([np.zeros(3), np.zeros(3, np.float32)]),
             lambda: ext.total_each([np.zeros((2, 2))]),
             lambda: ext.total_variant(np.zeros(3, np.float32))):
    try:
        call()
    except TypeError as e:
        assert "incompatible function arguments" in str(e) or "float32" in str(e) or "rank" in str(e), e
    else:
        raise AssertionError("accepted")
assert ext.total_each([np.arange(3.0), np.ones(2)]) == 5.0
print("ok")
""")


def test_owned_values_inside_containers(ext, np):
    # held views and managed tensors in std::vector and std::optional, in and out; a refused
    # element is a TypeError (nanobind: its own, in a container), never the end of the
    # process (a subprocess, so that an abort is a failure of this test)
    passes_in_a_subprocess(ext, """
assert ext.count_held([np.zeros((2, 3), np.float32), np.ones((4, 5), np.float32)]) == 2
assert ext.maybe_pass(None) is None
assert np.from_dlpack(ext.maybe_pass(np.arange(3.0))).tolist() == [0.0, 1.0, 2.0]
assert [np.from_dlpack(t).tolist() for t in ext.two_aranges()] == [[[0, 1, 2], [3, 4, 5]]] * 2
capsule = np.arange(3.0).__dlpack__()
ext.maybe_pass(capsule)
for call in (lambda: ext.count_held([np.zeros((2, 3), np.float64)]),
             lambda: ext.maybe_pass(capsule)):  # taken once: a second import is refused
    try:
        call()
    except (TypeError, BufferError):
        pass
    else:
        raise AssertionError("accepted")
print("ok")
""")


def test_views_borrowed_inside_a_container_outlive_their_elements(ext, np):
    # Our own Tensor is borrowed through its exchange API, where the argument keeps the
    # memory: an element of a container need not (a sequence's items made on access, which a
    # copy of the sequence holds until it is freed, before the function runs). The element
    # is kept until the call returns. 64 MiB each, so that a freed one's memory goes back to
    # the system and a read of it faults (a subprocess, to report that as a failure).
    passes_in_a_subprocess(ext, """
import _core
n = 1 << 23
class Made:
    def __len__(self):
        return 2
    def __getitem__(self, i):
        if i >= 2:
            raise IndexError(i)
        return _core.from_dlpack(np.arange(n, dtype=np.float64))
assert ext.total_each(Made()) == 2 * (n * (n - 1) / 2)
print("ok")
""")


def test_torch_1_legacy_tensors(ext, torch):
    t = torch.zeros(4, dtype=torch.float64)
    with pytest.raises(TypeError, match="READ_ONLY"):
        ext.fill(t, 1.0)
    ext.fill_legacy(t, 2.5)  # PyTorch 1.x allows writes: the parameter opts in
    assert t.tolist() == [2.5] * 4
    assert ext.total(t) == 10.0
    assert ext.kind(torch.zeros(2, dtype=torch.int32)) == "int32"
    r = ext.arange_2x3_torch()
    assert isinstance(r, torch.Tensor) and r.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_jax_arrays(ext, jnp):
    a = jnp.arange(6, dtype=jnp.float32)
    assert ext.kind(a) == "float32"
    assert ext.sum_without_gil(a) == (False, 15.0)
    with pytest.raises(TypeError, match="READ_ONLY"):  # JAX arrays are immutable
        ext.scale(a.reshape(2, 3), 2.0)
    r = ext.arange_2x3_jax()
    assert r.tolist() == [[0, 1, 2], [3, 4, 5]]
