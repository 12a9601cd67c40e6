# bank: the two boundary planes first, Irecv and Isend of their host copies, the interior queued, one Waitall, the ghost planes of d_out filled; it must get every point.
# naive: none
from mpi4py import MPI

ch20 = ag.problems.ch20


def stencil_step_overlap(comm, d_slab, d_out, c):
    rank, size = comm.Get_rank(), comm.Get_size()
    planes = d_slab.shape[0] - 2
    ends = {"first": rank == 0, "last": rank == size - 1}
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    ch20.stencil_planes(d_slab, d_out, c, 1, 2, **ends)
    if planes > 1:
        ch20.stencil_planes(d_slab, d_out, c, planes, planes + 1, **ends)
    top, bottom = d_out[planes].copy_to_host(), d_out[1].copy_to_host()
    lo, hi = np.empty_like(top), np.empty_like(top)
    reqs = [comm.Irecv(lo, source=below, tag=0), comm.Irecv(hi, source=above, tag=1),
            comm.Isend(top, dest=above, tag=0), comm.Isend(bottom, dest=below, tag=1)]
    if planes > 2:
        ch20.stencil_planes(d_slab, d_out, c, 2, planes, **ends)
    MPI.Request.Waitall(reqs)
    if rank > 0:
        d_out[0].copy_to_device(lo)
    if rank < size - 1:
        d_out[planes + 1].copy_to_device(hi)
