# bank: blocking Send and Recv ordered by parity (even ranks send first, odd ranks receive first) so no two ranks wait on each other, with ifs at the grid's ends instead of PROC_NULL; it must get every point.
# naive: none
from mpi4py import MPI


def exchange_halos(comm, slab):
    rank, size = comm.Get_rank(), comm.Get_size()
    lower_plane = np.empty_like(slab[0])
    upper_plane = np.empty_like(slab[0])

    if rank % 2 == 0:
        if rank < size - 1:
            comm.Send(slab[-2].copy(), dest=rank + 1, tag=7)
            comm.Recv(upper_plane, source=rank + 1, tag=8)
            slab[-1] = upper_plane
        if rank > 0:
            comm.Send(slab[1].copy(), dest=rank - 1, tag=8)
            comm.Recv(lower_plane, source=rank - 1, tag=7)
            slab[0] = lower_plane
    else:
        comm.Recv(lower_plane, source=rank - 1, tag=7)
        comm.Send(slab[1].copy(), dest=rank - 1, tag=8)
        slab[0] = lower_plane
        if rank < size - 1:
            comm.Recv(upper_plane, source=rank + 1, tag=8)
            comm.Send(slab[-2].copy(), dest=rank + 1, tag=7)
            slab[-1] = upper_plane
