# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Any DLPack producer as an mpi4py buffer specification, with no packing copy.

    from mpi4py import MPI
    from dlpack_mdspan.mpi import send_buffer, receive_buffer

    comm.Send(send_buffer(torch_tensor.T), dest=1)      # a transposed view, as it lies
    comm.Recv(receive_buffer(numpy_array), source=0)    # lands in row-major index order

Each returns ``[MPI.BOTTOM, 1, datatype]``: a derived datatype holding the tensor's absolute
address, built with mpi4py's own constructors (nested ``Create_hvector``; a step of -1 byte
from pairs, as the C builder does), so ``Send``,
``Recv``, ``Isend``, ``Irecv``, ``Bcast`` and the send side of ``Gather``/``Allgather`` take
it as it is. The message is the elements in row-major index order, whatever the layout.
The datatype holds the tensor, and the export of it whose address it holds (the memory of a
producer that makes its tensor on export lives in the export alone), and frees itself when
the last reference goes; mpi4py's requests hold it, so a nonblocking operation keeps the
tensor and its memory alive until it completes.

The tensor is checked once, and admitted by the library's one admission
(``message_plan``, the C++ core's, as in C and C++): invalid tensors, sub-byte elements,
device memory an MPI cannot move, and, for a receive, READ_ONLY tensors and layouts that
reach an element twice are refused with ``ValueError`` or ``BufferError`` before MPI sees
them, in the words C and C++ use. A producer that copied (IS_COPIED) is refused here too.
Types MPI lacks (float16, bfloat16, fp8) travel as their bytes. Reductions take
``reduction_buffer(x)``: a compact row-major tensor of a type MPI can combine, else refused
here rather than by MPI. mpi4py is imported on first use only.
"""
from ._core import message_plan as _message_plan

__all__ = ["receive_buffer", "send_buffer", "reduction_buffer", "cuda_aware"]

# MPI's own refusals' words, as <dlpack_mdspan/mpi_datatype.h>'s DLPM_MPI_REFUSAL_* say them in C
# and C++ (tests/mpi/python/mpi4py_transfers.py reads the header and compares). Which tensors
# may travel at all is the library's admission (message_plan), worded once.
NOT_INITIALIZED = "MPI is not initialized (or already finalized): call MPI_Init first"
REDUCE_BYTES = ("MPI has no type for these elements: they travel as bytes, which MPI's reductions cannot combine; "
                "reduce in a wider type")
REDUCE_DERIVED = ("MPI's predefined reductions take a count of predefined items, and this tensor travels as a derived "
                  "datatype (a layout other than compact row-major, or a count beyond INT_MAX): reduce a compact "
                  "row-major copy, in parts of at most INT_MAX items")
# The C builder's refusal of a packed message past INT_MAX items; this module sends no packed message.
PACKED_COUNT_TOO_LARGE = ("a packed message's count is beyond INT_MAX, the int count the library sends it with: send it "
                          "as its derived datatype")
RUN_TOO_LARGE = "a contiguous run of items is beyond INT_MAX, and MPI-3 counts are int"
EXTENT_TOO_LARGE = "an extent is beyond INT_MAX, and MPI-3 counts are int"
_INT_MAX = 2**31 - 1

# DLPack type codes (dlpack.h's DLDataTypeCode).
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6
_PREDEFINED = {
    (_INT, 8): "INT8_T", (_INT, 16): "INT16_T", (_INT, 32): "INT32_T", (_INT, 64): "INT64_T",
    (_UINT, 8): "UINT8_T", (_UINT, 16): "UINT16_T", (_UINT, 32): "UINT32_T", (_UINT, 64): "UINT64_T",
    (_FLOAT, 32): "FLOAT", (_FLOAT, 64): "DOUBLE",
    (_COMPLEX, 64): "C_FLOAT_COMPLEX", (_COMPLEX, 128): "C_DOUBLE_COMPLEX", (_BOOL, 8): "C_BOOL",
}


def cuda_aware():
    """Whether this MPI moves CUDA memory, as mpi4py's MPI says (``Query_cuda_support``); False
    where it cannot say."""
    from mpi4py import MPI
    query = getattr(MPI, "Query_cuda_support", None)
    return bool(query()) if query is not None else False


def _owning_datatype(MPI, datatype, tensor, export):
    """``datatype`` as an object that holds ``tensor`` and ``export`` (the plan's owner: the
    imported tensor whose address the datatype holds) and frees the handle when it goes.
    mpi4py's requests hold the datatype object of a ``[MPI.BOTTOM, count, datatype]``
    specification (not the list), so the memory lives as long as any operation using it."""
    global _TensorDatatype
    if _TensorDatatype is None:
        class _TensorDatatype(MPI.Datatype):
            def __del__(self):
                try:
                    if self != MPI.DATATYPE_NULL and not MPI.Is_finalized():
                        self.Free()
                except Exception:  # interpreter shutdown: mpi4py may be gone already
                    pass
    owned = _TensorDatatype(datatype)  # the same handle, now freed by `owned` only
    owned.tensor = tensor
    owned.export = export
    return owned


_TensorDatatype = None


class Buffer(list):
    """``[MPI.BOTTOM, 1, datatype]``; the datatype holds the tensor and frees itself."""

    def __init__(self, bottom, datatype, element):
        super().__init__([bottom, 1, datatype])
        #: How one element travels: (MPI type, items per element, reducible).
        self.element = element

    @property
    def tensor(self):
        return self[2].tensor


def _element(MPI, code, bits, lanes, itemsize):
    name = _PREDEFINED.get((code, bits))
    base = getattr(MPI, name) if name else None
    if base is not None and base.Get_size() * lanes == itemsize:
        return base, lanes, True
    return MPI.BYTE, itemsize, False


def _mode(MPI, old, count, block, step):
    """One mode: ``count`` blocks of ``block`` items of ``old``, ``step`` bytes apart. The rule
    of the C builder's dlpm_mpi_mode_ (``<dlpack_mdspan/mpi_datatype.h>``, which cannot be
    called with mpi4py's handles): an hvector, except for a step of exactly -1 byte, which
    Open MPI reads as "the old type's extent" (forwards); that mode is pairs of blocks at 0
    and -1, repeated 2 bytes down, and for an odd count a struct adding the last block."""
    if step != -1 or count < 2:
        return old.Create_hvector(count, block, step)
    pair = old.Create_hindexed_block(block, [0, -1])
    try:
        pairs = pair.Create_hvector(count // 2, 1, -2)
    finally:
        pair.Free()
    if count % 2 == 0:
        return pairs
    try:
        return MPI.Datatype.Create_struct([1, block], [0, -(count - 1)], [pairs, old])
    finally:
        pairs.Free()


def _checked(x, receive, what):
    """mpi4py's MPI, the library's plan for ``x`` and how one element travels, or the refusal."""
    from mpi4py import MPI
    if not MPI.Is_initialized() or MPI.Is_finalized():
        raise RuntimeError(f"{what}: {NOT_INITIALIZED}")
    try:
        plan = _message_plan(x, receive=receive, cuda_aware=cuda_aware())
    except (ValueError, BufferError, TypeError) as e:
        if type(e) not in (ValueError, BufferError, TypeError):
            raise  # a producer's own exception class, whose constructor may take other arguments
        raise type(e)(f"{what}: {e}") from None
    if plan["is_copied"]:
        raise BufferError(f"{what}: the producer handed over a copy (IS_COPIED), which MPI would "
                          "move instead of the tensor")
    code, bits, lanes = plan["dtype_code"]
    return MPI, plan, _element(MPI, code, bits, lanes, plan["itemsize"])


def _count_refusal(MPI, what, block, modes):
    """The C builder's refusal of a count an int cannot hold, in its words, for an MPI whose
    constructors refused one (MPI-3's counts are int); None when every count fits."""
    if block > _INT_MAX:
        words, value = RUN_TOO_LARGE, block
    else:
        value = next((extent for extent, _ in modes if extent > _INT_MAX), None)
        if value is None:
            return None
        words = EXTENT_TOO_LARGE
    version, subversion = MPI.Get_version()
    return ValueError(f"{what}: MPI {version}.{subversion}: {words} ({value}); "
                      "MPI-4's large-count constructors would take it")


def _buffer(x, receive):
    what = "receive_buffer" if receive else "send_buffer"
    MPI, plan, element = _checked(x, receive, what)
    address = plan["element0"]
    # The elements as nested byte loops (the library's coalesce), an empty tensor's block 0;
    # here the block counts the element's MPI items.
    modes, block = plan["loops"], plan["block"]
    block *= element[1]
    relative = element[0]
    made = []  # nested hvectors, innermost first: the block once, then one of the type inside
    try:
        for i, (extent, step) in enumerate(reversed(modes)):
            relative = _mode(MPI, relative, extent, block if i == 0 else 1, step)
            made.append(relative)
        # Absolute: element 0's address as the displacement from MPI.BOTTOM.
        datatype = MPI.Datatype.Create_struct([1 if modes else block], [address], [relative])
    except MPI.Exception:
        refusal = _count_refusal(MPI, what, block, modes)
        if refusal is None:
            raise
        raise refusal from None
    finally:  # the datatype made keeps what it needs of them; a refusal (a count MPI cannot take) leaks none
        for t in made:
            t.Free()
    try:
        datatype.Commit()
        return Buffer(MPI.BOTTOM, _owning_datatype(MPI, datatype, x, plan["owner"]), element)
    except BaseException:
        datatype.Free()
        raise


def send_buffer(x):
    """``[MPI.BOTTOM, 1, datatype]`` to send ``x`` (any DLPack producer, any valid layout,
    broadcast strides included)."""
    return _buffer(x, False)


def receive_buffer(x):
    """``[MPI.BOTTOM, 1, datatype]`` to receive into ``x``: writable, each element reached once."""
    return _buffer(x, True)


def _planned_memory(x, plan, nbytes):
    """The bytes the plan admitted, as a writable buffer mpi4py reads and writes in place,
    holding ``x`` and the plan's owner (the export whose memory it is): mpi4py then exports
    nothing again (another export of ``x`` may be other memory, or another size)."""
    if nbytes == 0:
        return bytearray()
    import ctypes
    memory = (ctypes.c_char * nbytes).from_address(plan["element0"])
    memory.tensor, memory.export = x, plan["owner"]
    return memory


def reduction_buffer(x, receive=False):
    """``[memory, count, predefined datatype]`` for MPI's predefined reductions (``Reduce``,
    ``Allreduce``, ``Reduce_scatter``...), the send side or (``receive``) the receive side:
    ``buffer::reduction_datatype()`` of C++. ``memory`` is the export the library checked
    (it holds ``x`` and that export, as a nonblocking reduction's request holds it), not
    ``x``, which mpi4py would export again. MPI's predefined operations take predefined
    datatypes only, so ``x`` must be compact row-major with elements MPI has a type for;
    anything else is refused here, in the library's words (``TypeError`` for elements that
    travel as bytes, ``ValueError`` for a layout that needs a derived datatype), instead of
    by MPI (Open MPI: ``MPI_ERR_OP``)."""
    what = "reduction_buffer"
    MPI, plan, (datatype, items, reducible) = _checked(x, receive, what)
    if not reducible:
        raise TypeError(f"{what}: {REDUCE_BYTES} ({items} bytes each)")
    modes, block = plan["loops"], plan["block"]
    if modes:
        raise ValueError(f"{what}: {REDUCE_DERIVED}")
    if block * items > _INT_MAX and MPI.Get_version()[0] < 4:  # the C builder's rule (DLPM_MPI_LARGE_COUNTS)
        raise _count_refusal(MPI, what, block * items, modes)
    return [_planned_memory(x, plan, block * plan["itemsize"]), block * items, datatype]
