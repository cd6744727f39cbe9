# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A Tensor of another copy of the component: the kept checked form its type publishes
(docs/python-interop.md, "A Tensor of another copy").

Two copies live here: `_core` (the pip package's extension) makes the Tensor, `dlpm_interop`
(this suite's extension, its own copy of the component) borrows it. To see whether the
borrowing copy trusted a publication, each case publishes a *lying* form on `_core.Tensor`
(a column-major Tensor), made with ctypes: a copy of the Tensor's real kept form that says
the tensor is C-contiguous. A borrow asking for C order is then accepted if the lie was
believed (the publication trusted) and refused if the tensor was checked in full. Each case runs in a
fresh interpreter: the consumer caches what it learns of a type at first sight.
"""
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import ctypes, sys
    import _core, dlpm_interop as dl

    case = sys.argv[1]
    ATTR = "__dlpack_mdspan_kept_checked_form__"
    NAME = b"dlpack_mdspan.kept_checked_form.v1"
    T = _core.Tensor

    class Form(ctypes.Structure):  # dlpm_py_kept_form (python/src/shared/shared.h)
        _fields_ = [("version", ctypes.c_uint32), ("size", ctypes.c_uint32), ("type", ctypes.c_void_p),
                    ("checked_version", ctypes.c_uint32), ("reserved", ctypes.c_uint32),
                    ("checked_of", ctypes.c_void_p)]

    CHECKED_SIZE = 576  # dlpm_checked_tensor (DLPM_MAX_NDIM 64)
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    checked_of_t = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object)

    t = _core.from_dlpack(dl.tensor((2, 3), (2, 32, 1), order="F"))  # column-major, a Tensor of _core's copy
    assert type(t) is T and type(t) is not type(dl.tensor((1,)))
    real = Form.from_address(api.PyCapsule_GetPointer(T.__dict__[ATTR], NAME))
    assert (real.version, real.size, real.type, real.checked_version) == (1, ctypes.sizeof(Form), id(T), 1)
    form = checked_of_t(real.checked_of)(t)
    assert form and checked_of_t(real.checked_of)(dl.tensor((1,))) is None  # only its own type's

    lie = ctypes.create_string_buffer(ctypes.string_at(form, CHECKED_SIZE), CHECKED_SIZE)
    ctypes.c_int32.from_buffer(lie, 4).value = 1  # row_major: "C-contiguous"
    if case == "form_version":
        ctypes.c_uint32.from_buffer(lie, 0).value = 2
    if case == "other_description":  # the form describes another tensor: its DLTensor with shape (3, 2)
        other = ctypes.create_string_buffer(ctypes.string_at(ctypes.c_void_p.from_buffer(lie, 8).value, 48), 48)
        shape = (ctypes.c_int64 * 2)(3, 2)
        ctypes.c_void_p.from_buffer(other, 24).value = ctypes.addressof(shape)
        ctypes.c_void_p.from_buffer(lie, 8).value = ctypes.addressof(other)
    if case == "no_tensor":  # a form of the right version that names no tensor
        ctypes.c_void_p.from_buffer(lie, 8).value = None
    lying = checked_of_t(lambda obj: ctypes.addressof(lie))
    forged = Form(1, ctypes.sizeof(Form), id(T), 1, 0, ctypes.cast(lying, ctypes.c_void_p).value)
    name = NAME
    if case == "name":
        name = b"dlpack_mdspan.kept_checked_form.v2"
    elif case == "version":
        forged.version = 2
    elif case == "size":
        forged.size += 8
    elif case == "type":  # a publication copied from another type: it names that type
        forged.type = id(type(dl.tensor((1,))))
    elif case == "checked_version":
        forged.checked_version = 2
    elif case == "no_function":
        forged.checked_of = None
    capsule = api.PyCapsule_New(ctypes.addressof(forged), name, None)
    if case == "plain_object":  # the same struct in a capsule of another name, or no capsule at all
        capsule = ctypes.addressof(forged)
    setattr(T, ATTR, capsule)
    try:
        dl.consume(t, borrow=True, order="C")
        print("trusted")
    except TypeError as e:
        print("checked in full:", e)
    print("lent" if dl.borrow_checked(t, lend=True)["lent"] else "not lent")  # dlpm_py_options.lent
    try:  # a binding's host view (dlpm_py_options.ready_on_host) reads the form's device
        import bound_nanobind
        bound_nanobind.sum_without_gil(t)
    except ImportError:
        pass
    except TypeError:  # column-major: refused by the view, after a full check
        pass
    """
)


def run(case):
    out = subprocess.run([sys.executable, "-c", SCRIPT, case], env=dict(os.environ), capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_kept_form_of_another_copy_is_trusted():
    """A well-formed publication is used: the lie it carries is believed (so the cases below
    show a guard, not an unused path)."""
    assert run("valid") == "trusted\nlent", "the other copy's kept form was not used (or not lent)"


@pytest.mark.parametrize("case", ["name", "plain_object", "version", "size", "type", "checked_version", "no_function",
                                  "form_version", "other_description", "no_tensor"])
def test_kept_form_refused_falls_back_to_the_full_check(case):
    """A capsule of another name or none, another layout version or size, a struct naming
    another type (a publication copied from one), another checked-form version, no function,
    a kept form of another version, of another description or of no tensor at all (a host
    view read its device through NULL: a crash): never trusted, the tensor is
    checked in full (and refused: it is not C-contiguous); nor lent (dlpm_py_options.lent),
    not even a form of the right version whose description is another's."""
    out = run(case)
    assert out.startswith("checked in full: ") and out.endswith("\nnot lent"), (case, out)


PADDED_SCRIPT = textwrap.dedent(
    """
    import _core, dlpm_interop as dl

    t = _core.from_dlpack(dl.narrow_tensor("float4_e2m1fn", bytes(range(0, 16, 3))))  # padded fp4, _core's
    del type(t).__dlpack_mdspan_kept_checked_form__  # a copy whose kept form this one cannot read
    for validate in (False, True):
        r = dl.borrow_checked(t, validate=validate)
        print(r["status"], bool(r["flags"] & 4), r["borrowed"])
    """
)


def test_a_padded_tensor_of_a_copy_whose_form_is_unknown_is_borrowed_owned():
    """Another copy's Tensor table refuses to lend a padded sub-byte tensor as a DLTensor (no
    flags to say so), with BufferError; where this copy cannot read that copy's kept form (another
    release's), the borrow takes the owned export, which carries the flag, instead of failing."""
    out = subprocess.run([sys.executable, "-c", PADDED_SCRIPT], env=dict(os.environ), capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["0 True False", "0 True False"], out.stdout
