# bank: every rank first sends with a synchronous Ssend and only then receives, so every rank waits for a receive that no rank has posted (a deadlock); the launch must be stopped at its time limit and the entry lose the points.
# naive: none
from mpi4py import MPI


def exchange_halos(comm, slab):
    rank, size = comm.Get_rank(), comm.Get_size()
    if rank < size - 1:
        comm.Ssend(slab[-2].copy(), dest=rank + 1)
    if rank > 0:
        comm.Ssend(slab[1].copy(), dest=rank - 1)
    if rank > 0:
        comm.Recv(slab[0], source=rank - 1)
    if rank < size - 1:
        comm.Recv(slab[-1], source=rank + 1)
