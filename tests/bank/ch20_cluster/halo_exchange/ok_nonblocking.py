# bank: Irecv into both ghost planes, Isend of both boundary planes, one Waitall; it must get every point.
# naive: none
from mpi4py import MPI


def exchange_halos(comm, slab):
    r, n = comm.rank, comm.size
    reqs = []
    if r > 0:
        reqs += [comm.Irecv(slab[0], source=r - 1, tag=1), comm.Isend(slab[1], dest=r - 1, tag=2)]
    if r < n - 1:
        reqs += [comm.Irecv(slab[-1], source=r + 1, tag=2), comm.Isend(slab[-2], dest=r + 1, tag=1)]
    MPI.Request.Waitall(reqs)
