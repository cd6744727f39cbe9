# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dlpack_mdspan.mpi through mpi4py, every element size (1, 2, 4, 8, 16 bytes; float16 travels
as bytes) along every stride sign and magnitude (-2 to 2 elements on each axis; zero, and rows
that overlap, on the send side only), on 1 to 4 real ranks in a ring: each rank sends case k to the next and
receives case k from the previous. NumPy arrays over byte buffers with 64 guard bytes on
both sides. The receiving rank rebuilds the sender's buffer and computes, without MPI (a
byte copy through NumPy views), the whole receive buffer it expects: every element and every
byte outside them, guards included, must match."""
import sys
import traceback

import numpy as np
from mpi4py import MPI

from dlpack_mdspan.mpi import receive_buffer, send_buffer

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
GUARD = 64
SENTINEL = 0xEE
DTYPES = [np.int8, np.uint8, np.int16, np.float16, np.float32, np.int64, np.complex64, np.complex128]


def layouts():
    """(shape, send strides, receive strides) in elements: a vector, a matrix, interleaved rows,
    and overlapping rows (send only)."""
    vector = [(s,) for s in range(-2, 3)]
    yield (7,), vector, vector
    matrix = [(outer * 5 * max(1, abs(inner)), inner) for inner in range(-2, 3) for outer in range(-2, 3)]
    yield (3, 5), matrix, matrix
    interleaved = [(outer, inner) for outer in (-1, 1) for inner in (-2, 2)]
    yield (2, 4), interleaved, interleaved
    yield (4, 2), [(-1, 1), (1, 1), (-1, -1)], [(2, 1), (-2, -1)]


def placed(shape, strides, item):
    """The byte offset of element 0 and the buffer's bytes, guards included."""
    reach = [(n - 1) * s * item for n, s in zip(shape, strides)]
    low, high = sum(min(0, r) for r in reach), sum(max(0, r) for r in reach)
    return GUARD - low, GUARD + high - low + item + GUARD


def view(buffer, dtype, shape, strides, offset):
    item = np.dtype(dtype).itemsize
    return np.ndarray(shape, dtype=dtype, buffer=buffer, offset=offset, strides=[s * item for s in strides])


def pattern(nbytes, seed):
    """Never the sentinel, guards of sentinels."""
    b = ((np.arange(nbytes, dtype=np.int64) * 37 + seed * 11) % 200).astype(np.uint8)
    b[:GUARD] = SENTINEL
    b[nbytes - GUARD:] = SENTINEL
    return b


def main():
    # An mpi4py built against another MPI than the mpiexec's runs every rank as a singleton:
    # the expected size, given on the command line, catches that.
    if len(sys.argv) > 1 and size != int(sys.argv[1]):
        print(f"FAIL rank {rank}: {size} ranks, not {sys.argv[1]}: is mpi4py built against another MPI than "
              f"mpiexec's? ({MPI.Get_library_version().splitlines()[0]})", file=sys.stderr, flush=True)
        return 1
    previous, following = (rank - 1) % size, (rank + 1) % size
    transfers = failed = outside = 0
    k = 0
    for dtype in DTYPES:
        item = np.dtype(dtype).itemsize
        raw = f"V{item}"  # the same bytes, copied as bytes
        for shape, all_send, all_receive in layouts():
            for send_strides in all_send:
                for recv_strides in all_receive:
                    if 0 in recv_strides:
                        continue
                    k += 1
                    tag = k % 30000
                    send_offset, send_bytes = placed(shape, send_strides, item)
                    recv_offset, recv_bytes = placed(shape, recv_strides, item)
                    outgoing = pattern(send_bytes, k * 7 + rank)
                    incoming = np.full(recv_bytes, SENTINEL, dtype=np.uint8)
                    request = comm.Irecv(receive_buffer(view(incoming, dtype, shape, recv_strides, recv_offset)),
                                         source=previous, tag=tag)
                    comm.Send(send_buffer(view(outgoing, dtype, shape, send_strides, send_offset)), dest=following, tag=tag)
                    request.Wait()
                    sent = pattern(send_bytes, k * 7 + previous)
                    expected = np.full(recv_bytes, SENTINEL, dtype=np.uint8)
                    view(expected, raw, shape, recv_strides, recv_offset)[...] = view(sent, raw, shape, send_strides, send_offset)
                    transfers += 1
                    if not np.array_equal(incoming, expected):
                        failed += 1
                        guards = not (np.array_equal(incoming[:GUARD], expected[:GUARD])
                                      and np.array_equal(incoming[-GUARD:], expected[-GUARD:]))
                        outside += guards
                        if failed <= 20:
                            print(f"FAIL rank {rank}: {np.dtype(dtype).name} shape {shape} strides {send_strides} into "
                                  f"{recv_strides}{' (guard bytes overwritten)' if guards else ''}",
                                  file=sys.stderr, flush=True)
    total, wrong, guards = comm.allreduce(transfers), comm.allreduce(failed), comm.allreduce(outside)
    if rank == 0:
        print(f"mpi4py every size on {size} ranks: {total} transfers, {wrong} failed, {guards} with guard bytes overwritten")
    return 1 if wrong else 0


if __name__ == "__main__":
    try:
        code = main()
    except Exception:  # one rank's exception must not leave the others waiting
        traceback.print_exc()
        comm.Abort(1)
    sys.exit(code)
