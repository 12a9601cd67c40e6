"""The course's per-rank functions for chapter 20: the halo exchange (20.1), one distributed
stencil step, exchange then compute (20.2), and the step of 20.3 twice: computing everything and
then exchanging (blocking), and the boundary planes first, their messages in flight while the
interior is computed (overlapped). Each runs in every rank, called with ``comm`` (the rank's
communicator) and the rank's slab; see :mod:`autograder.problems.ch20.specs` for the contracts.

A slab is ``(planes + 2, ny, nx)`` float32: plane 0 and plane ``planes + 1`` are the ghost planes
(copies of the neighbours' nearest planes), planes 1 .. planes are the rank's own. The rank below
(``rank - 1``) owns the planes just below, the rank above (``rank + 1``) those just above; the
first and the last rank have no neighbour on one side (``MPI.PROC_NULL``: a message to it is not
sent, a receive from it receives nothing and leaves the buffer as it was).
"""

from __future__ import annotations

import numpy as np

from autograder.problems.ch20.drivers import stencil_planes


def neighbours(comm) -> tuple[int, int]:
    """(the rank below, the rank above), ``MPI.PROC_NULL`` where there is none."""
    from mpi4py import MPI
    rank, size = comm.Get_rank(), comm.Get_size()
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    return below, above


def reference_exchange(comm, slab) -> None:
    """20.1: fill the two ghost planes of a host slab from the neighbours, in place. Two
    ``Sendrecv``: every rank sends its top plane up while it receives its lower ghost from below,
    then its bottom plane down while it receives its upper ghost from above (tags 0 and 1)."""
    below, above = neighbours(comm)
    comm.Sendrecv(slab[-2], dest=above, sendtag=0, recvbuf=slab[0], source=below, recvtag=0)
    comm.Sendrecv(slab[1], dest=below, sendtag=1, recvbuf=slab[-1], source=above, recvtag=1)


def _ends(comm) -> dict:
    """``first`` / ``last``: does this rank hold the grid's first (last) plane?"""
    return {"first": comm.Get_rank() == 0, "last": comm.Get_rank() == comm.Get_size() - 1}


def _swap_planes(comm, d_arr, planes: int, requests: bool = False):
    """Send ``d_arr``'s own first and last planes to the neighbours and receive theirs, through
    host copies: blocking (``Sendrecv``), or started (``Irecv``/``Isend``; returns the requests
    and the two host buffers to wait for)."""
    below, above = neighbours(comm)
    top, bottom = d_arr[planes].copy_to_host(), d_arr[1].copy_to_host()
    ghost_lo, ghost_hi = np.empty_like(top), np.empty_like(top)
    if requests:
        return ([comm.Irecv(ghost_lo, source=below, tag=0), comm.Irecv(ghost_hi, source=above, tag=1),
                 comm.Isend(top, dest=above, tag=0), comm.Isend(bottom, dest=below, tag=1)],
                ghost_lo, ghost_hi, (top, bottom))
    comm.Sendrecv(top, dest=above, sendtag=0, recvbuf=ghost_lo, source=below, recvtag=0)
    comm.Sendrecv(bottom, dest=below, sendtag=1, recvbuf=ghost_hi, source=above, recvtag=1)
    return ghost_lo, ghost_hi


def _fill_ghosts(comm, d_arr, planes: int, ghost_lo, ghost_hi) -> None:
    if comm.Get_rank() > 0:
        d_arr[0].copy_to_device(ghost_lo)
    if comm.Get_rank() < comm.Get_size() - 1:
        d_arr[planes + 1].copy_to_device(ghost_hi)


def reference_step(comm, d_slab, d_out, c) -> None:
    """20.2: fill ``d_slab``'s ghosts from the neighbours (through host copies of the two planes
    each rank sends), then the stencil on all of the rank's planes into ``d_out``."""
    from numba import cuda
    planes = d_slab.shape[0] - 2
    ghost_lo, ghost_hi = _swap_planes(comm, d_slab, planes)
    _fill_ghosts(comm, d_slab, planes, ghost_lo, ghost_hi)
    stencil_planes(d_slab, d_out, c, 1, planes + 1, **_ends(comm))
    cuda.synchronize()


def reference_step_blocking(comm, d_slab, d_out, c) -> None:
    """20.3's contract without overlap: the stencil on all of the rank's planes (``d_slab``'s
    ghosts are valid), then the new first and last planes exchanged with the neighbours into
    ``d_out``'s ghosts (ready for the next step). The messages wait for the whole kernel."""
    from numba import cuda
    planes = d_slab.shape[0] - 2
    stencil_planes(d_slab, d_out, c, 1, planes + 1, **_ends(comm))
    cuda.synchronize()
    ghost_lo, ghost_hi = _swap_planes(comm, d_out, planes)
    _fill_ghosts(comm, d_out, planes, ghost_lo, ghost_hi)


def reference_step_overlap(comm, d_slab, d_out, c) -> None:
    """20.3: the two boundary planes first (those the neighbours need) and copied to the host;
    their messages started (``Irecv``, ``Isend``); the interior planes computed while they fly;
    wait; the received planes into ``d_out``'s ghosts."""
    from mpi4py import MPI
    from numba import cuda
    planes = d_slab.shape[0] - 2
    ends = _ends(comm)
    stencil_planes(d_slab, d_out, c, 1, 2, **ends)                     # the first own plane
    stencil_planes(d_slab, d_out, c, max(planes, 2), planes + 1, **ends)   # the last (if another)
    requests, ghost_lo, ghost_hi, _sent = _swap_planes(comm, d_out, planes, requests=True)
    stencil_planes(d_slab, d_out, c, 2, max(planes, 2), **ends)        # the interior, queued
    MPI.Request.Waitall(requests)                                       # while the GPU computes
    _fill_ghosts(comm, d_out, planes, ghost_lo, ghost_hi)
    cuda.synchronize()
