# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch 2.15 (the frameworks venv) against the shipped Python component, both directions.

Import: torch.Tensor publishes DLPack 1.3's exchange API (``__dlpack_c_exchange_api__``), so
dlpm_py_import takes a tensor through managed_tensor_from_py_object_no_sync, dlpm_py_borrow
through dltensor_from_py_object_no_sync, and ``exchange=False`` through ``__dlpack__``. A spy
on ``torch.Tensor.__dlpack__`` proves which path each test took.

Export: ``torch.from_dlpack(our Tensor)`` (our ``__dlpack__``), and torch's own table:
managed_tensor_to_py_object_no_sync (``dl.to_py_via``) and its allocator (``dl.allocate_via``).
Also our own type through its exchange API. Run by CTest with the frameworks flavour only.
"""
import re

import pytest
import torch
from torch.utils.dlpack import ReadOnlyTensorWrapper

import dlpm_interop as dl

OURS = "dlpack_mdspan.Tensor"
INT, UINT, FLOAT, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 4, 5, 6

# torch dtype -> DLPack (code, bits, lanes)
TORCH_DL = {
    torch.bool: (BOOL, 8, 1), torch.int8: (INT, 8, 1), torch.int16: (INT, 16, 1), torch.int32: (INT, 32, 1),
    torch.int64: (INT, 64, 1), torch.uint8: (UINT, 8, 1), torch.uint16: (UINT, 16, 1), torch.uint32: (UINT, 32, 1),
    torch.uint64: (UINT, 64, 1), torch.float16: (FLOAT, 16, 1), torch.float32: (FLOAT, 32, 1),
    torch.float64: (FLOAT, 64, 1), torch.bfloat16: (BFLOAT, 16, 1), torch.complex32: (COMPLEX, 32, 1),
    torch.complex64: (COMPLEX, 64, 1), torch.complex128: (COMPLEX, 128, 1),
    torch.float8_e4m3fn: (10, 8, 1), torch.float8_e4m3fnuz: (11, 8, 1), torch.float8_e5m2: (12, 8, 1),
    torch.float8_e5m2fnuz: (13, 8, 1), torch.float8_e8m0fnu: (14, 8, 1), torch.float4_e2m1fn_x2: (17, 4, 2),
}
FLOAT8 = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]


def named(case):
    """A one-case test with a readable id (the case name the interop matrix lists)."""
    return pytest.mark.parametrize("case", [case])


def torch_bytes(t):
    """The elements of t in row-major order, as bytes (what consume returns)."""
    t = t.resolve_conj().resolve_neg().contiguous()
    return t.reshape(-1).view(torch.uint8).numpy().tobytes()  # any dtype, numpy's or not


def storage_address(t):
    """Where t's first element lives: its storage plus storage_offset elements."""
    return t.untyped_storage().data_ptr() + t.storage_offset() * t.element_size()


@pytest.fixture
def dlpack_calls(monkeypatch):
    """Records every call of torch.Tensor.__dlpack__ (its keyword arguments), passing it on."""
    calls = []
    original = torch.Tensor.__dlpack__

    def spy(self, *args, **kwargs):
        calls.append(kwargs)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "__dlpack__", spy)
    return calls


def import_cases():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    cases = {
        "contiguous": base,
        "transposed": base.t(),
        "sliced with steps": base[1::2, 1::3],  # storage_offset 7
        "size-1 dims": base[1:2, :, None],
        "size-0 dims": base[:0],
        "0-d": torch.tensor(3.5, dtype=torch.float64),
        "broadcast (stride 0)": base[1:2].expand(3, 6),
        "bool": torch.tensor([True, False, True]),
        "bfloat16": torch.tensor([1.5, -2.0, 3.25], dtype=torch.bfloat16),
        "complex64": torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64),
    }
    for name in ("int8", "int16", "int32", "int64"):
        cases[name] = torch.arange(-2, 3, dtype=getattr(torch, name))
    cases["uint8"] = torch.arange(250, 256, dtype=torch.uint8)
    for name in ("float16", "float32", "float64"):
        cases[name] = (torch.arange(-2, 3) / 4).to(getattr(torch, name))
    for name in FLOAT8:
        cases[name] = torch.tensor([0.5, 1.0, 2.0]).to(getattr(torch, name))
    cases["float4_e2m1fn_x2"] = torch.tensor([0x12, 0x34, 0xF0], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    return cases


IMPORT_CASES = list(import_cases())


def check_import(r, t):
    assert r["bytes"] == torch_bytes(t)
    assert r["shape"] == tuple(t.shape)
    assert r["strides"] == tuple(t.stride())
    assert r["dtype"] == TORCH_DL[t.dtype]
    assert r["device"] == (1, 0)
    assert r["byte_offset"] == 0
    # Zero-copy: consume's data_ptr is data + byte_offset, torch's first element. (torch's
    # own data_ptr() already includes storage_offset; check against the storage too.)
    assert r["data_ptr"] == t.data_ptr()
    if t.numel() > 0:
        assert r["data_ptr"] == storage_address(t)
    assert r["read_only"] is False and r["copied"] is False


# ---- import ------------------------------------------------------------------------------


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@named('publishes exchange API 1.3')
def test_torch_publishes_exchange_api_1_3(case):
    assert dl.exchange_api(torch.empty(1)) == (1, 3)
    capsule = torch.Tensor.__dlpack_c_exchange_api__
    assert type(capsule).__name__ == "PyCapsule" and '"dlpack_exchange_api"' in repr(capsule)


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("name", IMPORT_CASES)
def test_import_through_exchange_api(name, dlpack_calls):
    t = import_cases()[name]
    r = dl.consume(t)
    check_import(r, t)
    assert r["borrowed"] is False
    assert dlpack_calls == [], "the exchange API path must not call __dlpack__"


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("name", IMPORT_CASES)
def test_import_borrowed_through_exchange_api(name, dlpack_calls):
    t = import_cases()[name]
    r = dl.consume(t, borrow=True)
    check_import(r, t)
    # torch's table has dltensor_from_py_object_no_sync: a borrowed view, no managed tensor.
    assert r["borrowed"] is True
    assert dlpack_calls == []


@pytest.mark.matrix("PyTorch", "import", "__dlpack__")
@pytest.mark.parametrize("name", IMPORT_CASES)
def test_import_through_dunder_dlpack(name, dlpack_calls):
    t = import_cases()[name]
    r = dl.consume(t, exchange=False)
    check_import(r, t)
    assert r["borrowed"] is False
    assert dlpack_calls == [{"max_version": (1, 3)}]


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@named('__dlpack__ patched out')
def test_exchange_api_needs_no_dunder_dlpack(case, monkeypatch):
    t = torch.arange(6, dtype=torch.int32).reshape(2, 3)

    def broken(self, *args, **kwargs):
        raise RuntimeError("torch.Tensor.__dlpack__ is patched out")

    monkeypatch.setattr(torch.Tensor, "__dlpack__", broken)
    assert dl.consume(t)["bytes"] == torch_bytes(t)
    assert dl.consume(t, borrow=True)["bytes"] == torch_bytes(t)
    with pytest.raises(RuntimeError, match="patched out"):
        dl.consume(t, exchange=False)
    with pytest.raises(RuntimeError, match="patched out"):  # copy=True is __dlpack__'s to negotiate
        dl.consume(t, copy=True)
    monkeypatch.undo()
    assert dl.consume(t, exchange=False)["bytes"] == torch_bytes(t)


WRITE_VIEWS = ["write contiguous", "write transposed", "write sliced with steps"]


def check_write_through(view, exchange, dlpack_calls):
    base = torch.zeros(4, 6, dtype=torch.int32)
    t = {"write contiguous": base, "write transposed": base.t(), "write sliced with steps": base[1::2, ::3]}[view]
    want = torch.arange(1, t.numel() + 1, dtype=torch.int32).reshape(t.shape)
    r = dl.consume(t, writable=True, write=torch_bytes(want), exchange=exchange)
    assert torch.equal(t, want)
    assert int(base.sum()) == int(want.sum())  # nothing outside the view was touched
    assert r["read_only"] is False
    assert len(dlpack_calls) == (0 if exchange else 1)


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("view", WRITE_VIEWS)
def test_write_through_exchange_api_is_seen_by_torch(view, dlpack_calls):
    check_write_through(view, True, dlpack_calls)


@pytest.mark.matrix("PyTorch", "import", "__dlpack__")
@pytest.mark.parametrize("view", WRITE_VIEWS)
def test_write_through_dunder_dlpack_is_seen_by_torch(view, dlpack_calls):
    check_write_through(view, False, dlpack_calls)


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@named('writable borrow owns')
def test_writable_borrow_takes_the_owning_path(case):
    t = torch.zeros(3)
    r = dl.consume(t, borrow=True, writable=True, write=torch_bytes(torch.ones(3)))
    assert r["borrowed"] is False
    assert torch.equal(t, torch.ones(3))


def check_read_only_wrapper(exchange):
    x = torch.arange(4.0)
    ro = ReadOnlyTensorWrapper(x)
    assert dl.exchange_api(ro) == (1, 3)  # torch's const table
    r = dl.consume(ro, exchange=exchange)
    assert r["read_only"] is True
    assert r["bytes"] == torch_bytes(x)
    assert r["data_ptr"] == x.data_ptr()
    with pytest.raises(TypeError, match="READ_ONLY but a writable tensor is required"):
        dl.consume(ro, writable=True, write=torch_bytes(x), exchange=exchange)
    assert torch.equal(x, torch.arange(4.0))


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@named('ReadOnlyTensorWrapper')
def test_read_only_wrapper_exchange_api(case):
    check_read_only_wrapper(True)
    # A borrowed view carries no flags (dlpm_py_borrow documents it), so READ_ONLY is not seen.
    b = dl.consume(ReadOnlyTensorWrapper(torch.arange(4.0)), borrow=True)
    assert b["borrowed"] is True and b["read_only"] is False


@pytest.mark.matrix("PyTorch", "import", "__dlpack__")
@named('ReadOnlyTensorWrapper')
def test_read_only_wrapper_dunder_dlpack(case):
    check_read_only_wrapper(False)


# ---- semantic bits: what a DLPack tensor cannot carry -----------------------------------------
#
# A lazy conjugate view's memory holds the unconjugated values, a negated view's the values'
# negatives, and a write into a tensor that requires grad bypasses autograd. torch's own
# __dlpack__ refuses the conjugate bit and requires_grad (always), but exports a negated
# view's raw memory; its exchange API refuses none of them. The component refuses all three
# on the exchange-API paths (requires_grad only for an import that writes) and the negative
# bit on the __dlpack__ path (docs/python-interop.md, "Semantic bits").

OUR_REFUSAL = {
    "conj": r"torch\.Tensor refused: its conjugate bit is set \(a lazy conjugate view: its memory holds the "
            r"unconjugated values\); call \.resolve_conj\(\) on it first, or set "
            r"dlpm_py_options\.accept_semantic_bits = 1 to take the raw memory and resolve the bit yourself "
            r"\(invalid argument\)",
    "neg": r"torch\.Tensor refused: its negative bit is set \(a lazy negated view: its memory holds the values' "
           r"negatives\); call \.resolve_neg\(\) on it first, or set dlpm_py_options\.accept_semantic_bits = 1",
    "requires_grad": r"torch\.Tensor refused: it requires grad, and a write through this import would bypass "
                     r"autograd; call \.detach\(\) on it first, or import it read-only, or set "
                     r"dlpm_py_options\.accept_semantic_bits = 1",
}
TORCH_REFUSAL = {"conj": "Can't export tensors with the conjugate bit set",
                 "requires_grad": "Can't export tensors that require gradient, use tensor.detach()"}


def with_bit(bit):
    """(a tensor with `bit` set, its raw memory as bytes): what a consumer that drops the bit reads."""
    if bit == "conj":
        t = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64).conj()  # means [1-2j, 3+4j]
        assert t.is_conj()
        return t, torch_bytes(t.conj())
    if bit == "neg":
        t = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64).conj().imag  # a real view: means [-2, 4]
        assert t.is_neg() and not t.is_complex()
        return t, torch_bytes(-t)
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    return t, torch_bytes(t.detach())


# How each path is asked for (dl.consume's keywords); "writable" asks for a writable tensor.
EXCHANGE_PATHS = {
    "owned": {}, "borrowed": {"borrow": True},
    "owned writable": {"writable": True}, "borrowed writable": {"borrow": True, "writable": True},
}


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("case", [f"refused {bit} {path}" for bit in ("conj", "neg") for path in EXCHANGE_PATHS])
def test_exchange_api_refuses_conj_and_neg(case, dlpack_calls):
    _, bit, path = case.split(" ", 2)
    t, _ = with_bit(bit)
    with pytest.raises(BufferError, match=OUR_REFUSAL[bit]):
        dl.consume(t, **EXCHANGE_PATHS[path])
    assert dlpack_calls == [], "refused on the exchange API path itself"


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("case", ["refused requires_grad owned writable", "refused requires_grad borrowed writable"])
def test_exchange_api_refuses_requires_grad_for_writers(case, dlpack_calls):
    t, _ = with_bit("requires_grad")
    with pytest.raises(BufferError, match=OUR_REFUSAL["requires_grad"]):
        dl.consume(t, write=torch_bytes(torch.zeros(2)), **EXCHANGE_PATHS[case.split(" ", 2)[2]])
    assert t.tolist() == [1.0, 2.0]  # nothing written
    assert dlpack_calls == []


def test_an_unvalidated_writer_still_refuses_requires_grad():
    """validate = 0 leaves the tensor's checks to the caller, not the semantic bits: a
    writer's borrow whose other options are the defaults (the Rust crate's PyTensorMut of
    PyTorch, whose view makes the check) refuses a tensor that requires grad, where a reader
    is lent its view."""
    t, _ = with_bit("requires_grad")
    with pytest.raises(BufferError, match=OUR_REFUSAL["requires_grad"]):
        dl.consume(t, write=torch_bytes(torch.zeros(2)), borrow=True, writable=True, validate=False)
    assert t.tolist() == [1.0, 2.0]  # nothing written
    assert dl.consume(t, borrow=True, validate=False)["borrowed"]


@pytest.mark.parametrize("path", ["owned writable", "borrowed writable"])
def test_a_refusal_names_the_option_in_the_callers_words(path):
    """dlpm_py_options.semantic_bits_option (version 2): NULL names the C option, a binding's
    own name is named as given, "" (a binding whose users have no such option, as Rust's
    PyTensorMut) names none: only the producer's remedy. A version-1 struct (an extension
    built against 0.2.0's header) is still accepted, and names the C option."""
    t, _ = with_bit("requires_grad")
    remedy = r"call \.detach\(\) on it first, or import it read-only"
    cases = [({}, r", or set dlpm_py_options\.accept_semantic_bits = 1 to take the raw memory"),
             ({"options_version": 1}, r", or set dlpm_py_options\.accept_semantic_bits = 1 to take the raw memory"),
             ({"semantic_bits_option": "ImportOptions::accept_semantic_bits"},
              r", or set ImportOptions::accept_semantic_bits to take the raw memory"),
             ({"semantic_bits_option": ""}, r" \(invalid argument\)$")]
    for keywords, ending in cases:
        with pytest.raises(BufferError, match=remedy + ending) as refused:
            dl.consume(t, write=torch_bytes(torch.zeros(2)), **EXCHANGE_PATHS[path], **keywords)
        assert ("accept_semantic_bits" in str(refused.value)) == (keywords.get("semantic_bits_option") != "")
    assert t.tolist() == [1.0, 2.0]  # nothing written


def test_a_read_only_import_words_the_refusal_in_the_callers_words():
    """Options that ask what the defaults ask but for semantic_bits_option (the Rust crate's
    ManagedTensor argument: "") take the defaults' body (dlpm_py_import's import_with_defaults),
    which still words a refusal with the caller's option, or with none for ""."""
    t, _ = with_bit("neg")
    remedy = r"call \.resolve_neg\(\) on it first"
    cases = [({}, r", or set dlpm_py_options\.accept_semantic_bits = 1 to take the raw memory"),
             ({"semantic_bits_option": "ImportOptions::accept_semantic_bits"},
              r", or set ImportOptions::accept_semantic_bits to take the raw memory"),
             ({"semantic_bits_option": ""}, r" \(invalid argument\)$")]
    for keywords, ending in cases:
        with pytest.raises(BufferError, match="negative bit is set") as refused:
            dl.consume(t, **keywords)
        assert re.search(remedy + ending, str(refused.value)), refused.value
        assert ("accept_semantic_bits" in str(refused.value)) == (keywords.get("semantic_bits_option") != "")


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("case", ["requires_grad read-only owned", "requires_grad read-only borrowed"])
def test_exchange_api_reads_a_tensor_that_requires_grad(case, dlpack_calls):
    """A read-only import takes a tensor that requires grad (reading it bypasses nothing)."""
    t, memory = with_bit("requires_grad")
    r = dl.consume(t, **EXCHANGE_PATHS[case.split(" ", 2)[2]])
    assert r["bytes"] == memory and r["data_ptr"] == t.data_ptr()
    p = torch.nn.Parameter(torch.ones(3))  # a subclass: requires_grad by default
    assert dl.consume(p)["bytes"] == torch_bytes(p.detach())
    with pytest.raises(BufferError, match=OUR_REFUSAL["requires_grad"]):
        dl.consume(p, writable=True)
    assert dlpack_calls == []


REQUIRES_GRADIENT = (r"the tensor is READ_ONLY because torch\.Tensor forbids writes to tensors that require gradient "
                     r"\(a write would bypass autograd; call \.detach\(\) on it first\), and a legacy "
                     r"DLManagedTensor cannot carry that flag")


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("case", ["requires_grad through our Tensor stays READ_ONLY"])
def test_requires_grad_stays_read_only_through_our_tensor(case, dlpack_calls):
    """A reading import of a tensor that requires grad is READ_ONLY, with PyTorch's reason,
    through every re-export: NumPy gets a read-only array, a legacy export is refused as
    PyTorch's own __dlpack__ refuses it, and a second hop keeps the reason."""
    import numpy as np

    x = torch.ones(3, requires_grad=True)
    t = dl.reexport(x)
    assert t.readonly
    a = np.from_dlpack(t)
    assert not a.flags.writeable and np.shares_memory(a, x.detach().numpy())
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 42.0
    assert x.detach().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(BufferError, match=REQUIRES_GRADIENT):
        t.__dlpack__()
    again = dl.reexport(t)  # through our own exchange API: the reason travels with the export
    assert again.readonly
    with pytest.raises(BufferError, match=REQUIRES_GRADIENT):
        again.__dlpack__()
    # a writer's refusal gives the reason too (it once said only "READ_ONLY but a writable
    # tensor is required")
    with pytest.raises(TypeError, match=r"the tensor is READ_ONLY because torch\.Tensor forbids writes to tensors that "
                                        r"require gradient \(a write would bypass autograd; call \.detach\(\) on it first\)"):
        dl.consume(t, writable=True)
    assert dlpack_calls == []
    d = dl.reexport(x.detach())  # the remedy: the same memory, writable
    assert not d.readonly
    np.from_dlpack(d)[0] = 5.0
    assert x.detach().tolist() == [5.0, 1.0, 1.0]


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
@pytest.mark.parametrize("case", ["test_dlpack_export_requires_grad, our Tensor standing in"])
def test_pytorch_export_requires_grad_with_our_tensor(case):
    """PyTorch's own test_dlpack_export_requires_grad (test/test_dlpack.py), with the tensor
    handed through our Tensor first."""
    x = dl.reexport(torch.zeros(10, dtype=torch.float32, requires_grad=True))
    with pytest.raises(BufferError, match=r"require gradient"):
        x.__dlpack__()


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("case", ["requires_grad borrowed read-only flagged"])
def test_requires_grad_borrow_is_flagged_read_only(case):
    r = dl.consume(torch.ones(2, requires_grad=True), borrow=True)
    assert r["read_only"]
    assert not dl.consume(torch.ones(2), borrow=True)["read_only"]


@pytest.mark.matrix("PyTorch", "import", "__dlpack__")
@pytest.mark.parametrize("case", ["refused conj", "refused requires_grad", "refused requires_grad read-only",
                                  "refused neg (ours)"])
def test_dunder_dlpack_semantic_bits(case, dlpack_calls):
    """torch's __dlpack__ refuses conj and requires_grad itself, also for a read-only import;
    the negative bit it exports as raw memory, and the component refuses it after the call."""
    bit = case.split(" ")[1]
    t, _ = with_bit(bit)
    keywords = {"writable": True} if case == "refused requires_grad" else {}
    with pytest.raises(BufferError, match=OUR_REFUSAL["neg"] if bit == "neg" else TORCH_REFUSAL[bit]):
        dl.consume(t, exchange=False, **keywords)
    assert dlpack_calls == [{"max_version": (1, 3)}]


@pytest.mark.matrix("PyTorch", "import", "capsule")
@pytest.mark.parametrize("case", ["refused conj", "refused requires_grad", "neg: raw memory (undetectable)"])
def test_capsule_semantic_bits(case):
    """A bare capsule has no tensor object to ask: torch's __dlpack__ refuses conj and
    requires_grad before a capsule exists, and a negated view's capsule holds the raw memory,
    which the component cannot tell from any other (PyTorch's export drops the bit)."""
    bit = "neg" if case.startswith("neg") else case.split(" ")[1]
    t, memory = with_bit(bit)
    if bit == "neg":
        r = dl.consume(t.__dlpack__(max_version=(1, 3)))
        assert r["bytes"] == memory and r["bytes"] != torch_bytes(t)
        return
    with pytest.raises(BufferError, match=TORCH_REFUSAL[bit]):
        t.__dlpack__(max_version=(1, 3))


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("case", [f"accept_semantic_bits {bit} {path}" for bit in ("conj", "neg", "requires_grad")
                                  for path in ("owned", "borrowed writable")] + ["accept_semantic_bits neg borrowed"])
def test_accept_semantic_bits_takes_the_raw_memory(case, dlpack_calls):
    """The opt-out: the tensor's memory as it is (the unconjugated, unnegated values), for a
    caller that resolves the bits itself."""
    _, bit, path = case.split(" ", 2)
    t, memory = with_bit(bit)
    r = dl.consume(t, accept_semantic_bits=True, **EXCHANGE_PATHS[path])
    assert r["bytes"] == memory and r["data_ptr"] == t.data_ptr()
    assert r["borrowed"] is (path == "borrowed")
    if bit != "requires_grad":
        assert r["bytes"] != torch_bytes(t)  # not the values t means
    assert dlpack_calls == []


@pytest.mark.matrix("PyTorch", "import", "__dlpack__")
@named("accept_semantic_bits neg")
def test_accept_semantic_bits_through_dunder_dlpack(case):
    t, memory = with_bit("neg")
    assert dl.consume(t, exchange=False, accept_semantic_bits=True)["bytes"] == memory
    with pytest.raises(BufferError, match=TORCH_REFUSAL["conj"]):  # torch's own refusal: no opt-out
        dl.consume(with_bit("conj")[0], exchange=False, accept_semantic_bits=True)


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@named("resolved views import")
def test_resolved_views_import_their_values(case):
    for bit in ("conj", "neg"):
        t, _ = with_bit(bit)
        resolved = t.resolve_conj().resolve_neg()
        assert dl.consume(resolved)["bytes"] == torch_bytes(t)
        assert dl.consume(resolved, borrow=True)["bytes"] == torch_bytes(t)
    complex_plain = torch.tensor([1 + 2j], dtype=torch.complex128)  # complex, no bit: is_conj() asked, False
    assert dl.consume(complex_plain)["bytes"] == torch_bytes(complex_plain)


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("case", ["ReadOnlyTensorWrapper refused conj", "ReadOnlyTensorWrapper refused neg",
                                  "hooked subclass refused neg"])
def test_semantic_bits_of_subclasses(case):
    """Subclasses count. A subclass's __torch_function__ is turned off while the bits are read:
    ReadOnlyTensorWrapper refuses every torch call but the DLPack ones, and a subclass may
    answer for itself, while the exchange API exported the tensor underneath."""
    bit = case.split(" ")[-1]
    t, _ = with_bit(bit)
    if case.startswith("ReadOnlyTensorWrapper"):
        wrapped = ReadOnlyTensorWrapper(t)
    else:
        class Lying(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func in (torch.Tensor.is_neg, torch.Tensor.is_conj):
                    return False
                return super().__torch_function__(func, types, args, kwargs or {})

        wrapped = t.as_subclass(Lying)
        assert wrapped.is_neg() is False  # what the hook says
    assert dl.exchange_api(wrapped) == (1, 3)
    for borrow in (False, True):
        with pytest.raises(BufferError, match=OUR_REFUSAL[bit]):
            dl.consume(wrapped, borrow=borrow)


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("case", ["typed: try_import const reads requires_grad", "typed: with_view refuses requires_grad",
                                  "typed: try_import refuses neg"])
def test_typed_imports_and_semantic_bits(case):
    """python.hpp's typed imports (dlpm_interop's typed.cpp): a const element type reads, a
    mutable one writes."""
    if case.endswith("const reads requires_grad"):
        t = torch.arange(6, dtype=torch.float32).reshape(2, 3).requires_grad_()
        assert dl.sum_f32_2d(t) == 15.0
    elif case.endswith("with_view refuses requires_grad"):
        t = torch.zeros(3, dtype=torch.float64, requires_grad=True)
        with pytest.raises(BufferError, match=OUR_REFUSAL["requires_grad"]):
            dl.fill_f64_1d(t, 1.0)
        assert t.tolist() == [0.0, 0.0, 0.0]
    else:
        n = torch.arange(6, dtype=torch.float32).reshape(2, 3)._neg_view()
        with pytest.raises(BufferError, match=OUR_REFUSAL["neg"]):
            dl.sum_f32_2d(n)


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@named("options with a neg view and requires_grad")
def test_options_semantic_bits_and_writable(case):
    """A neg view is refused by default and taken with accept_semantic_bits; a tensor that
    requires grad is refused by a writable import (`writable`, or req->writable), validated
    or not, and arrives READ_ONLY in a reading one."""
    import numpy as np

    r = dl.options(np.arange(4.0), with_bit("neg")[0], torch.ones(2, requires_grad=True))  # the rest: test_interop.py
    assert {k: v for k, v in r.items() if k.startswith(("bits_", "grad_"))} == {
        "bits_refused": 1, "bits_accepted": 1, "grad_writable_refused": 1, "grad_writable_unvalidated_refused": 1,
        "grad_req_writable_unvalidated_refused": 1, "grad_read_only": 1}
    assert r["defaults"] == 1 and r["init_refuses_next"] == 1


TORCH_IMPORTED_LATE = r"""
import sys
import numpy as np
import dlpm_interop as dl

dl.consume(np.arange(3.0)); dl.consume(dl.tensor((2,)))  # types cached before torch exists
assert "torch" not in sys.modules, "the component imported torch"
import torch
try:
    dl.consume(torch.tensor([1.0, 2.0])._neg_view())
except BufferError as e:
    print("refused:", e)
"""


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@named("torch imported after other types were cached")
def test_torch_imported_after_other_types(case):
    """Recognising torch's tensors never imports torch, and a process that imports it late
    still has its tensors recognised (their type did not exist before)."""
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", TORCH_IMPORTED_LATE], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert child.stdout.startswith("refused: torch.Tensor refused: its negative bit is set")


# Tensors PyTorch cannot export: its __dlpack__ raises BufferError, its exchange table
# RuntimeError (with a different message for a sparse tensor).
UNEXPORTABLE = {
    "refused sparse": (lambda: torch.eye(2).to_sparse(), "Cannot access data pointer of Tensor that doesn't have storage"),
    "refused quantized": (lambda: torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8),
                          "QUInt/QInt types are not supported by dlpack"),
}


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")  # deprecated, still exported
@pytest.mark.parametrize("case", list(UNEXPORTABLE))
def test_torch_exchange_api_refusal_is_buffer_error(case):
    """What PyTorch's own __dlpack__ refuses with BufferError, its table refuses with
    RuntimeError; through the table the import raises BufferError too, naming the entry, with
    PyTorch's RuntimeError kept as the cause."""
    make, table_says = UNEXPORTABLE[case]
    t = make()
    with pytest.raises(BufferError) as own:
        t.__dlpack__()
    for borrow, entry in ((False, "managed_tensor_from_py_object_no_sync"), (True, "dltensor_from_py_object_no_sync")):
        with pytest.raises(BufferError, match=f"^torch.Tensor's DLPack exchange API refused the tensor: {entry} raised "
                                              f"RuntimeError: {table_says}") as ours:
            dl.consume(t, borrow=borrow)
        assert type(ours.value.__cause__) is RuntimeError and table_says in str(ours.value.__cause__)
        # PyTorch's own words for the tensor follow (its test_dlpack.py asserts "strided" for a
        # sparse one, which the table's words lack)
        assert str(ours.value).endswith(f"; its __dlpack__() refuses it too: {str(own.value).splitlines()[0]} "
                                        "(the producer failed)"), ours.value
    # Through __dlpack__, PyTorch's own BufferError arrives as it is.
    with pytest.raises(BufferError) as dunder:
        dl.consume(t, exchange=False)
    assert dunder.value.__cause__ is None and str(dunder.value) == str(own.value)


def check_requirement_mismatches(exchange):
    t = torch.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match="dtype mismatch"):
        dl.consume(t, dtype=(FLOAT, 64, 1), exchange=exchange)
    with pytest.raises(TypeError, match="ndim = 2 but the target has rank 3"):
        dl.consume(t, ndim=3, exchange=exchange)
    with pytest.raises(TypeError, match="not C-contiguous"):
        dl.consume(t.t(), order="C", exchange=exchange)
    with pytest.raises(TypeError, match="shape mismatch"):
        dl.consume(t, ndim=2, shape=(3, 2), exchange=exchange)


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@named('requirement mismatches')
def test_requirement_mismatches_exchange_api(case):
    check_requirement_mismatches(True)


@pytest.mark.matrix("PyTorch", "import", "__dlpack__")
@named('requirement mismatches')
def test_requirement_mismatches_dunder_dlpack(case):
    check_requirement_mismatches(False)


@pytest.mark.matrix("PyTorch", "import", "__dlpack__")
@named('refused copy=True')
def test_copy_true_is_refused_because_torch_shares(case):
    # torch's __dlpack__(copy=True) on CPU returns shared memory without IS_COPIED.
    with pytest.raises(BufferError, match="copy=True was requested"):
        dl.consume(torch.ones(2), copy=True)


# ---- export: torch.from_dlpack(our Tensor) ------------------------------------------------

EXPORT_DTYPES = {
    "bool": torch.bool, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
    "uint8": torch.uint8, "uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64,
    "float16": torch.float16, "float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16,
    "complex32": torch.complex32, "complex64": torch.complex64, "complex128": torch.complex128,
    **{name: getattr(torch, name) for name in FLOAT8}, "float4_e2m1fn_x2": torch.float4_e2m1fn_x2,
}
SHAPES = {"0-d": (), "size-0": (0, 3), "size-1 dims": (1, 4, 1)}


def pattern(numel, itemsize, dtype):
    """numel distinct-ish elements, valid for every dtype (bool: 0/1 bytes)."""
    if dtype == torch.bool:
        return bytes(k % 2 for k in range(numel))
    return bytes((k * itemsize + j + 1) % 251 for k in range(numel) for j in range(itemsize))


@pytest.fixture
def our_type_spy(monkeypatch):
    """Records calls of dlpack_mdspan.Tensor.__dlpack__ (a heap type: attributes can be set)."""
    calls = []
    tensor_type = dl.Tensor
    original = tensor_type.__dlpack__

    def spy(self, **kwargs):
        calls.append(kwargs)
        return original(self, **kwargs)

    monkeypatch.setattr(tensor_type, "__dlpack__", spy)
    return calls


def check_export_to_torch(dtype, shape, calls):
    ours = dl.tensor(shape, TORCH_DL[dtype])
    x = torch.from_dlpack(ours)
    assert calls == [{"max_version": (1, 0)}]  # torch asks for a versioned capsule
    assert x.dtype == dtype and tuple(x.shape) == shape and tuple(x.stride()) == ours.strides
    numel = x.numel()
    data = pattern(numel, x.element_size(), dtype)
    dl.fill(ours, data)  # written after the import: torch must see it (zero-copy)
    assert torch_bytes(x) == data
    if numel:
        assert x.data_ptr() == dl.consume(ours)["data_ptr"]


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
@pytest.mark.parametrize("name", list(EXPORT_DTYPES))
def test_export_to_torch(name, our_type_spy):
    check_export_to_torch(EXPORT_DTYPES[name], (2, 3), our_type_spy)


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
def test_export_shapes_to_torch(shape, our_type_spy):
    check_export_to_torch(torch.float32, shape, our_type_spy)


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
@named('column-major')
def test_export_column_major_to_torch(case):
    ours = dl.tensor((2, 3), (INT, 32, 1), order="F")
    x = torch.from_dlpack(ours)
    assert x.stride() == (1, 2)
    dl.fill(ours, torch_bytes(torch.arange(6, dtype=torch.int32).reshape(2, 3)))
    assert torch.equal(x, torch.arange(6, dtype=torch.int32).reshape(2, 3))
    x[1, 2] = 50  # and a torch write is seen by us
    assert dl.consume(ours)["bytes"][-4:] == (50).to_bytes(4, "little")


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
@pytest.mark.parametrize("dtype, message", [
    ((7, 8, 1), "Unsupported code 7"),                    # float8_e3m4: no torch dtype
    ((INT, 4, 1), "Unsupported kInt bits 4"),             # packed int4
    ((FLOAT, 32, 2), "does not support lanes != 1"),      # vector lanes
    ((17, 4, 1), "Unsupported kDLFloat4_e2m1fn lanes 1"),  # float4 must come in pairs (x2)
], ids=["refused float8_e3m4", "refused int4", "refused float32x2", "refused float4_e2m1fn x1"])
def test_torch_refusals_release_our_export(dtype, message, collect):
    ours = dl.tensor((2, 4), dtype)
    collect()
    before = dl.released()
    with pytest.raises(BufferError, match=message):
        torch.from_dlpack(ours)
    del ours
    collect()
    assert dl.released() == before + 1  # torch's refusal ran our deleter: nothing leaked


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
@named('read-only (torch ignores it)')
def test_read_only_tensor_torch_ignores_read_only(case):
    """torch.from_dlpack takes a READ_ONLY versioned tensor and hands out a writable tensor."""
    ours = dl.tensor((2, 2), readonly=True)
    x = torch.from_dlpack(ours)
    assert x.data_ptr() == dl.consume(ours)["data_ptr"]
    x[0, 0] = 1.0  # torch lets this write through: it ignores DLPACK_FLAG_BITMASK_READ_ONLY
    assert dl.consume(ours)["bytes"][:4] == torch_bytes(torch.tensor([1.0]))
    # A legacy capsule cannot carry READ_ONLY: we refuse it rather than hand it out writable.
    with pytest.raises(BufferError, match="READ_ONLY and a legacy DLManagedTensor cannot carry that flag"):
        torch.from_dlpack(ours.__dlpack__())


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
@named('lifetime')
def test_torch_keeps_our_memory_alive(case, collect):
    ours = dl.tensor((3,), (INT, 64, 1))
    dl.fill(ours, torch_bytes(torch.tensor([7, 8, 9])))
    collect()
    before = dl.released()
    x = torch.from_dlpack(ours)
    del ours
    collect()
    assert x.tolist() == [7, 8, 9]
    assert dl.released() == before
    del x
    collect()
    assert dl.released() == before + 1


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
@named('C++ memory lifetime')
def test_cpp_memory_to_torch(case, collect):
    ours = dl.cpp_tensor((2, 2), "float64")
    collect()
    before = dl.released()
    x = torch.from_dlpack(ours)
    dl.fill(ours, torch_bytes(torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)))
    del ours
    collect()
    assert x.sum().item() == 10.0 and dl.released() == before
    del x
    collect()
    assert dl.released() == before + 1


# ---- export through torch's exchange-API table ----------------------------------------------


@pytest.mark.matrix("PyTorch", "export", "exchange API")
@pytest.mark.parametrize("name", ["int32", "float64", "bfloat16", "bool"], ids=lambda n: f"to_py_via {n}")
def test_to_py_via_torch_table(name, collect):
    dtype = EXPORT_DTYPES[name]
    ours = dl.tensor((2, 3), TORCH_DL[dtype])
    collect()
    before = dl.released()
    x = dl.to_py_via(torch.empty(1), ours)
    assert type(x) is torch.Tensor and x.dtype == dtype and tuple(x.shape) == (2, 3)
    data = pattern(6, x.element_size(), dtype)
    dl.fill(ours, data)
    assert torch_bytes(x) == data
    del ours
    collect()
    assert torch_bytes(x) == data and dl.released() == before
    del x
    collect()
    assert dl.released() == before + 1


def check_allocate_via(dtype, shape):
    x = dl.allocate_via(torch.empty(1), shape, TORCH_DL[dtype])
    assert type(x) is torch.Tensor and x.dtype == dtype and tuple(x.shape) == shape
    assert x.is_contiguous() and x.device.type == "cpu"
    x.fill_(1)
    r = dl.consume(x)
    assert r["shape"] == shape and r["dtype"] == TORCH_DL[dtype] and r["bytes"] == torch_bytes(x)


@pytest.mark.matrix("PyTorch", "export", "exchange API")
@pytest.mark.parametrize("name", ["float32", "int64", "bfloat16", "bool", "complex64"], ids=lambda n: f"allocate {n}")
def test_allocate_via_torch_table(name):
    check_allocate_via(EXPORT_DTYPES[name], (3, 4))


@pytest.mark.matrix("PyTorch", "export", "exchange API")
@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=[f"allocate {k}" for k in SHAPES])
def test_allocate_shapes_via_torch_table(shape):
    check_allocate_via(torch.float32, shape)


@pytest.mark.matrix("PyTorch", "export", "exchange API")
@named('allocator refuses float8_e3m4')
def test_allocate_via_torch_table_refuses_unknown_dtype(case):
    # torch's allocator reports through SetError (kind "MemoryError"); dlpm_interop raises RuntimeError.
    with pytest.raises(RuntimeError, match="Unsupported code 7"):
        dl.allocate_via(torch.empty(1), (2,), (7, 8, 1))


# ---- our own type through its exchange API ------------------------------------------------------


@pytest.mark.matrix(OURS, "import", "exchange API")
@pytest.mark.parametrize("borrow", [False, True], ids=["owned", "borrowed"])
def test_own_type_through_its_exchange_api(borrow, monkeypatch):
    ours = dl.tensor((2, 3), (INT, 16, 1))
    data = torch_bytes(torch.arange(6, dtype=torch.int16))
    dl.fill(ours, data)
    assert dl.exchange_api(ours) == (1, 3)

    def broken(self, **kwargs):
        raise RuntimeError("dlpack_mdspan.Tensor.__dlpack__ is patched out")

    monkeypatch.setattr(dl.Tensor, "__dlpack__", broken)
    r = dl.consume(ours, borrow=borrow)
    assert r["bytes"] == data and r["borrowed"] is borrow and r["strides"] == (3, 1)
    with pytest.raises(RuntimeError, match="patched out"):
        dl.consume(ours, exchange=False)
    monkeypatch.undo()
    assert dl.consume(ours, exchange=False)["bytes"] == data


@pytest.mark.matrix(OURS, "import", "exchange API")
@named('read-only')
def test_own_read_only_type_through_its_exchange_api(case):
    ours = dl.tensor((2,), readonly=True)
    assert dl.consume(ours)["read_only"] is True
    with pytest.raises(TypeError, match="READ_ONLY but a writable tensor is required"):
        dl.consume(ours, writable=True)


@pytest.mark.matrix(OURS, "import", "exchange API")
@named("torch's export into our table")
def test_torch_table_wraps_into_our_type(case):
    # The reverse of to_py_via(torch, ours): torch's export handed to our table.
    t = torch.arange(3)
    y = dl.to_py_via(dl.tensor((1,)), t)
    assert type(y) is dl.Tensor and y.shape == (3,) and y.dtype == (INT, 64, 1)
    assert dl.consume(y)["data_ptr"] == t.data_ptr()
    t[0] = 42
    assert dl.consume(y)["bytes"][:8] == (42).to_bytes(8, "little")


@pytest.mark.matrix("PyTorch", "import", "exchange API")
@pytest.mark.parametrize("borrow", [False, True], ids=["refused 65-d", "refused 65-d borrowed"])
def test_rank_above_64_is_refused(borrow):
    with pytest.raises(BufferError, match="ndim = 65 is not a valid rank"):
        dl.consume(torch.zeros([1] * 65), borrow=borrow)
    with pytest.raises(BufferError, match="ndim = 65 is not a valid rank"):
        dl.to_py_via(dl.tensor((1,)), torch.zeros([1] * 65))  # our table refuses torch's export


EXIT_WITH_LIVE_EXPORTS = r"""
import torch
import dlpm_interop as dl

ours = dl.tensor((1000,))
kept = (torch.from_dlpack(ours), dl.to_py_via(torch.empty(1), dl.tensor((3,))))
del ours
print("exiting", flush=True)
"""


@pytest.mark.matrix("PyTorch", "export", "__dlpack__")
@named("interpreter exit with live exports")
def test_interpreter_exit_with_live_exports(case):
    """torch tensors over our memory still alive at exit: the release callbacks run during or
    after finalisation and must neither crash nor hang."""
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", EXIT_WITH_LIVE_EXPORTS], capture_output=True, text=True, timeout=300)
    assert child.stdout == "exiting\n"
    assert child.returncode == 0, child.stderr
