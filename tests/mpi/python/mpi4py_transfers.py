# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dlpack_mdspan.mpi through mpi4py with real ranks (mpiexec -np 2, the frameworks venv):
PyTorch views to NumPy arrays and back, no packing copy, each result compared element by
element with the same view computed on the receiving rank without MPI; nonblocking
operations whose only reference to the tensor is the specification; a broadcast and
gathers of strided views; every refusal before MPI sees the tensor."""
import gc
import os
import re
import sys
import traceback

import numpy as np
import torch
from mpi4py import MPI

import dlpack_mdspan.mpi as dlpm_mpi
from dlpack_mdspan.mpi import receive_buffer, reduction_buffer, send_buffer

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL rank {rank}: {what}", file=sys.stderr, flush=True)


def matrix(rows, cols, dtype=torch.float32):
    return torch.arange(rows * cols, dtype=torch.float64).reshape(rows, cols).to(dtype)


def torch_transpose_to_numpy():
    """The issue's case: a transposed PyTorch view lands in a NumPy array."""
    if rank == 0:
        comm.Send(send_buffer(matrix(4, 6).T), dest=1, tag=1)
    elif rank == 1:
        got = np.full((6, 4), -1, dtype=np.float32)
        comm.Recv(receive_buffer(got), source=0, tag=1)
        check(np.array_equal(got, matrix(4, 6).T.numpy()), "torch transpose -> numpy")


def numpy_negative_to_torch_transposed():
    """Negative and skipping strides sent, received into a transposed PyTorch view."""
    source = np.arange(48, dtype=np.int64).reshape(6, 8)[::-2, 1::2]  # (3, 4), strides (-16, 2) elements
    if rank == 0:
        comm.Send(send_buffer(source), dest=1, tag=2)
    elif rank == 1:
        base = torch.full((4, 3), -1, dtype=torch.int64)
        view = base.T  # (3, 4), strides (1, 3)
        comm.Recv(receive_buffer(view), source=0, tag=2)
        check(np.array_equal(view.numpy(), source), "numpy negative strides -> torch transposed view")
        check(np.array_equal(base.numpy(), source.T), "the base of the transposed view holds the transpose")


def narrow_floats():
    """float16 and bfloat16 travel as their bytes."""
    if rank == 0:
        comm.Send(send_buffer(matrix(3, 5, torch.float16).T), dest=1, tag=3)
        comm.Send(send_buffer(matrix(3, 5, torch.bfloat16)[:, ::2]), dest=1, tag=4)
    elif rank == 1:
        half = np.zeros((5, 3), dtype=np.float16)
        comm.Recv(receive_buffer(half), source=0, tag=3)
        check(np.array_equal(half, matrix(3, 5, torch.float16).T.numpy()), "float16 transpose")
        bf16 = torch.zeros((3, 3), dtype=torch.bfloat16)
        comm.Recv(receive_buffer(bf16), source=0, tag=4)
        check(torch.equal(bf16, matrix(3, 5, torch.bfloat16)[:, ::2]), "bfloat16 every other column")


def nonblocking_keeps_the_tensor():
    """The specification is the only reference to the tensor and its datatype: the request
    must keep them until Wait."""
    if rank == 0:
        request = comm.Isend(send_buffer(matrix(64, 64).T[::2]), dest=1, tag=5)
        gc.collect()
        torch.zeros(64 * 64 * 4)  # memory a freed tensor's could be reused for
        request.Wait()
    elif rank == 1:
        got = torch.zeros((32, 64), dtype=torch.float32)
        request = comm.Irecv(receive_buffer(got.T.T), source=0, tag=5)
        gc.collect()
        request.Wait()
        check(torch.equal(got, matrix(64, 64).T[::2]), "Isend/Irecv with temporary specifications")


class MadeOnExport:
    """A producer that makes its tensor when exported: only the capsule holds that memory
    (DLPack allows it), so a buffer must keep the export it planned, not only the object."""

    def __init__(self, n, value=None):
        self.n, self.value = n, value

    def __dlpack__(self, **kwargs):
        made = np.arange(self.n, dtype=np.float64) if self.value is None else np.full(self.n, self.value)
        return made.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)


def an_export_that_owns_its_memory():
    """The datatype holds the export whose address it carries: memory of the same size
    allocated after the buffer was made (where a freed export's would be reused) is neither
    what is sent nor what a receive writes."""
    n = 1000
    if rank == 0:
        spec = send_buffer(MadeOnExport(n))
        gc.collect()
        junk = [np.full(n, -7.0) for _ in range(50)]
        comm.Send(spec, dest=1, tag=20)
        comm.Send(np.full(n, 5.0), dest=1, tag=21)
        del junk
    elif rank == 1:
        got = np.zeros(n)
        comm.Recv(got, source=0, tag=20)
        check(np.array_equal(got, np.arange(n, dtype=np.float64)), "a send from memory only the export holds")
        spec = receive_buffer(MadeOnExport(n, 0.0))
        gc.collect()
        junk = [np.full(n, -7.0) for _ in range(50)]
        comm.Recv(spec, source=0, tag=21)
        check(all((j == -7.0).all() for j in junk), "a receive into memory only the export holds writes nothing else")


def collectives():
    """Bcast of a strided view into transposed views; Gather and Allgather of strided columns."""
    source = matrix(4, 6)[:, ::2]  # (4, 3)
    target = source.clone() if rank == 0 else torch.zeros((3, 4), dtype=torch.float32).T
    comm.Bcast(send_buffer(source) if rank == 0 else receive_buffer(target), root=0)
    check(torch.equal(target, source), "Bcast of every other column into a transposed view")

    mine = np.arange(5 * size, dtype=np.float64).reshape(5, size) + 100 * rank
    column = mine[:, rank]  # stride: size elements
    gathered = np.zeros((size, 5)) if rank == 0 else None
    comm.Gather(send_buffer(column), [gathered, MPI.DOUBLE] if rank == 0 else None, root=0)
    reference = np.array([(np.arange(5 * size).reshape(5, size) + 100 * r)[:, r] for r in range(size)], dtype=np.float64)
    if rank == 0:
        check(np.array_equal(gathered, reference), "Gather of strided columns")
    every = np.zeros((size, 5))
    comm.Allgather(send_buffer(column), [every, MPI.DOUBLE])
    check(np.array_equal(every, reference), "Allgather of strided columns")


def refused(call, error, words, what):
    try:
        call()
    except error as e:
        check(words in str(e), f"{what}: message {e!r} lacks {words!r}")
        if rank == 0:
            print(f"  {what:<40} {type(e).__name__}: {e}")
        return
    check(False, f"{what}: not refused")


def refusals():
    read_only = np.zeros((3, 4), dtype=np.float32)
    read_only.setflags(write=False)
    refused(lambda: receive_buffer(read_only), BufferError, "READ_ONLY", "receive into a read-only array")
    broadcast = torch.zeros(4, dtype=torch.float32).expand(3, 4)  # stride 0, writable in PyTorch
    send_buffer(broadcast)  # sending it is fine
    refused(lambda: receive_buffer(broadcast), ValueError, "reaches an element twice", "receive into a broadcast view")
    overlapping = torch.zeros(16).as_strided((4, 4), (2, 1))
    refused(lambda: receive_buffer(overlapping), ValueError, "reaches an element twice", "receive into overlapping rows")
    refused(lambda: send_buffer(object()), TypeError, "send_buffer: ", "not a DLPack producer")
    # A receive into a tensor autograd tracks: refused with the producer's reason and remedy,
    # not a bare READ_ONLY; sending from it is fine.
    tracked = torch.zeros(3, requires_grad=True)
    send_buffer(tracked)
    refused(lambda: receive_buffer(tracked), BufferError, ".detach()", "receive into a tensor that requires grad")
    # The library refuses a reduction MPI cannot do, in its own words (not MPI_ERR_OP).
    strided = np.arange(12, dtype=np.float64)[::2]
    refused(lambda: reduction_buffer(strided), ValueError, dlpm_mpi.REDUCE_DERIVED, "a reduction on a strided view")
    refused(lambda: reduction_buffer(np.zeros(4, dtype=np.float16)), TypeError, dlpm_mpi.REDUCE_BYTES,
            "a reduction on float16")
    refused(lambda: receive_buffer(read_only), BufferError, "the tensor is READ_ONLY but a writable tensor is required",
            "READ_ONLY: the library's one wording")
    # Counts an int cannot hold, where MPI's constructors take ints (MPI-3): refused in the C
    # builder's words, not as MPI's bare MPI_ERR_ARG. Neither array is read (calloc'd pages
    # and a broadcast of one element).
    if MPI.Get_version()[0] < 4:
        past_int_max = 2**31 + 5
        broadcast = np.broadcast_to(np.int8(1), (past_int_max,))
        refused(lambda: send_buffer(broadcast), ValueError, f"{dlpm_mpi.EXTENT_TOO_LARGE} ({past_int_max})",
                "an extent past INT_MAX")
        compact = np.zeros(past_int_max, dtype=np.int8)
        refused(lambda: receive_buffer(compact), ValueError, f"{dlpm_mpi.RUN_TOO_LARGE} ({past_int_max})",
                "a run past INT_MAX")
        refused(lambda: reduction_buffer(compact), ValueError, f"{dlpm_mpi.RUN_TOO_LARGE} ({past_int_max})",
                "a reduction past INT_MAX")
        del compact


def one_wording():
    """dlpack_mdspan.mpi's own refusals say what <dlpack_mdspan/mpi_datatype.h> says in C and C++
    (the admission's are the library's, one text for all three: message_plan)."""
    header = os.path.join(os.path.dirname(__file__), "..", "..", "..", "mpi", "include", "dlpack_mdspan", "mpi_datatype.h")
    with open(header) as f:
        text = f.read()
    words = {m.group(1): m.group(2) for m in re.finditer(r'#define DLPM_MPI_REFUSAL_(\w+)\s*\\?\s*"([^"]*)"', text)}
    check(len(words) == 6, f"the header's refusals: {sorted(words)}")
    for name, said in words.items():
        check(getattr(dlpm_mpi, name, None) == said, f"dlpack_mdspan.mpi.{name} differs from DLPM_MPI_REFUSAL_{name}")


def reduction():
    """A compact view reduces through reduction_buffer, on both sides."""
    mine = np.arange(6, dtype=np.int32) + rank
    total = np.zeros(6, dtype=np.int32)
    comm.Allreduce(reduction_buffer(mine), reduction_buffer(total, receive=True), op=MPI.SUM)
    check(np.array_equal(total, np.arange(6, dtype=np.int32) * size + sum(range(size))), "Allreduce through reduction_buffer")


class CountingExports(MadeOnExport):
    """MadeOnExport that keeps every array it exported, in order."""

    def __init__(self, n, value):
        super().__init__(n, value)
        self.made = []

    def __dlpack__(self, **kwargs):
        made = np.full(self.n, self.value)
        self.made.append(made)
        return made.__dlpack__(**kwargs)


def a_reduction_lands_in_the_checked_export():
    """reduction_buffer hands mpi4py the export it checked (held by the buffer), so the
    result lands there and mpi4py exports nothing again: before, it was given the object,
    exported it a second time and reduced into that other memory (a producer whose later
    exports were smaller took a write past them)."""
    n = 1000
    mine = np.arange(n, dtype=np.float64) + rank
    target = CountingExports(n, 0.0)
    spec = reduction_buffer(target, receive=True)
    gc.collect()
    comm.Allreduce(reduction_buffer(mine), spec, op=MPI.SUM)
    expected = np.arange(n, dtype=np.float64) * size + sum(range(size))
    check(len(target.made) == 1, f"a reduction's target exported {len(target.made)} times, not once")
    check(np.array_equal(target.made[0], expected), "a reduction lands in the export that was checked")
    request = comm.Iallreduce(reduction_buffer(np.ones(4, dtype=np.int64)),
                              reduction_buffer(CountingExports(4, 0), receive=True), op=MPI.SUM)
    gc.collect()
    request.Wait()  # the request holds the buffer, which holds the export: nothing freed under it


class CodedError(ValueError):
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")


def a_producers_own_exception_passes_through():
    """A producer's exception of its own class (one whose constructor takes other arguments)
    reaches the caller as it was raised: it was re-made with the function's name, and its
    constructor failed with an unrelated TypeError."""

    class Raising:
        def __dlpack__(self, **kwargs):
            raise CodedError(7, "the producer's words")

        def __dlpack_device__(self):
            return (1, 0)

    for function in (send_buffer, receive_buffer, reduction_buffer):
        try:
            function(Raising())
        except CodedError as e:
            check("the producer's words" in str(e), f"{function.__name__}: {e!r}")
        except Exception as e:  # noqa: BLE001 - the defect this test catches
            check(False, f"{function.__name__}: a producer's CodedError became {e!r}")
        else:
            check(False, f"{function.__name__}: not refused")


def main():
    for test in (torch_transpose_to_numpy, numpy_negative_to_torch_transposed, narrow_floats,
                 nonblocking_keeps_the_tensor, an_export_that_owns_its_memory, collectives, refusals, one_wording,
                 reduction, a_reduction_lands_in_the_checked_export, a_producers_own_exception_passes_through):
        test()
        comm.Barrier()
    total = comm.allreduce(len(failures))
    if rank == 0:
        print(f"mpi4py transfers: {size} ranks, {total} failures")
    return 1 if total else 0


if __name__ == "__main__":
    try:
        code = main()
    except Exception:  # one rank's exception must not leave the others waiting
        traceback.print_exc()
        comm.Abort(1)
    sys.exit(code)
