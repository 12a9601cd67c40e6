# bank: exchanges correctly but never says which rank holds the grid's first and last planes, so those faces are computed from ghost planes that do not exist instead of being copied; it must lose the points.
# naive: none
from mpi4py import MPI

ch20 = ag.problems.ch20


def stencil_step(comm, d_slab, d_out, c):
    rank, size = comm.Get_rank(), comm.Get_size()
    planes = d_slab.shape[0] - 2
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    top, bottom = d_slab[planes].copy_to_host(), d_slab[1].copy_to_host()
    lo, hi = np.zeros_like(top), np.zeros_like(top)
    comm.Sendrecv(top, dest=above, recvbuf=lo, source=below)
    comm.Sendrecv(bottom, dest=below, recvbuf=hi, source=above)
    d_slab[0].copy_to_device(lo)
    d_slab[planes + 1].copy_to_device(hi)
    ch20.stencil_planes(d_slab, d_out, c, 1, planes + 1)
