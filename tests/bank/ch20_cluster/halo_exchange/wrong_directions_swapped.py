# bank: fills the lower ghost plane from the rank above and the upper one from the rank below (the neighbours' order swapped); it must lose the points.
# naive: none
from mpi4py import MPI


def exchange_halos(comm, slab):
    rank, size = comm.Get_rank(), comm.Get_size()
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    comm.Sendrecv(slab[1], dest=below, sendtag=0, recvbuf=slab[0], source=above, recvtag=0)
    comm.Sendrecv(slab[-2], dest=above, sendtag=1, recvbuf=slab[-1], source=below, recvtag=1)
