# bank: copies the whole slab to the host, exchanges with a 20.1-style function on the host copy, copies it back, and computes the faces' planes and the rest in separate stencil_planes calls; it must get every point.
# naive: none
from mpi4py import MPI

ch20 = ag.problems.ch20


def halo(comm, slab):
    r, n = comm.rank, comm.size
    reqs = []
    if r > 0:
        reqs += [comm.Irecv(slab[0], source=r - 1, tag=1), comm.Isend(slab[1], dest=r - 1, tag=2)]
    if r < n - 1:
        reqs += [comm.Irecv(slab[-1], source=r + 1, tag=2), comm.Isend(slab[-2], dest=r + 1, tag=1)]
    MPI.Request.Waitall(reqs)


def stencil_step(comm, d_slab, d_out, c):
    host = d_slab.copy_to_host()
    halo(comm, host)
    d_slab.copy_to_device(host)
    planes = host.shape[0] - 2
    first, last = comm.rank == 0, comm.rank == comm.size - 1
    for z in range(1, planes + 1):
        ch20.stencil_planes(d_slab, d_out, c, z, z + 1, first=first, last=last)
    cuda.synchronize()
