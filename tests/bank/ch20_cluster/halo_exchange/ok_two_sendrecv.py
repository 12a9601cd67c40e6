# bank: two Sendrecv calls, up then down, MPI.PROC_NULL at the grid's ends (the textbook exchange); it must get every point.
# naive: none
from mpi4py import MPI


def exchange_halos(comm, slab):
    rank, size = comm.Get_rank(), comm.Get_size()
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    comm.Sendrecv(slab[-2], dest=above, sendtag=0, recvbuf=slab[0], source=below, recvtag=0)
    comm.Sendrecv(slab[1], dest=below, sendtag=1, recvbuf=slab[-1], source=above, recvtag=1)
