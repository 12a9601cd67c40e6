"""Chapter 18's kernels of the course: the electrostatic potential on a 2-D slice of a grid by
direct Coulomb summation (DCS), in float32, four ways: scatter (a thread per atom, atomics into
every grid point), gather (a thread per grid point), gather coarsened along x with a thread's
points a block-width apart (coalesced stores), and cutoff summation over spatial bins.

The slice: grid point ``(j, i)`` (row j, column i) sits at ``(i·h, j·h, z)``; ``atoms[a]`` is
``(x, y, z, q)``. ``V[j, i] = Σ_a q_a / r_a``. Grid coordinates are computed as
``float32(i) * h``: in Numba an int64 times a float32 is a float64, which would put the whole
sum in double precision (correct, but not the float32 kernel the chapter times)."""

from __future__ import annotations

import math

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = None      # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "float32")

COARSEN_MAX = 8            # the largest coarsening factor the exercises use (a local array's size)


@_kernels.lazy
def _dcs_kernels() -> dict:
    """Compile the course's kernels of the chapter once for this backend."""

    @cuda.jit
    def dcs_scatter_reference(atoms, V, h, z):
        # One thread per atom, adding its q/r into every grid point: threads of different atoms
        # update the same V[j, i], so each update is an atomic read-add-write (PMPP §18.2).
        a = cuda.grid(1)
        if a < atoms.shape[0]:
            dz = z - atoms[a, 2]
            dz2 = dz * dz
            q = atoms[a, 3]
            for j in range(V.shape[0]):
                dy = float32(j) * h - atoms[a, 1]
                dyz2 = dy * dy + dz2
                for i in range(V.shape[1]):
                    dx = float32(i) * h - atoms[a, 0]
                    cuda.atomic.add(V, (j, i), q / math.sqrt(dx * dx + dyz2))

    @cuda.jit
    def dcs_gather_reference(atoms, V, h, z):
        # One thread per grid point, looping over every atom: a private float32 sum, one store.
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if j < V.shape[0] and i < V.shape[1]:
            x = float32(i) * h
            y = float32(j) * h
            acc = float32(0.0)
            for a in range(atoms.shape[0]):
                dx = x - atoms[a, 0]
                dy = y - atoms[a, 1]
                dz = z - atoms[a, 2]
                acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
            V[j, i] = acc

    @cuda.jit
    def dcs_coarsened_reference(atoms, V, h, z, coarsen):
        # Each thread computes `coarsen` points of one row, a block-width apart (PMPP §18.4): in
        # each step k the threads of a warp store neighbouring columns, so the stores coalesce;
        # per atom, dy² + dz² is computed once and reused for every point.
        base = cuda.blockIdx.x * cuda.blockDim.x * coarsen + cuda.threadIdx.x
        j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if j < V.shape[0]:
            y = float32(j) * h
            acc = cuda.local.array(COARSEN_MAX, float32)
            for k in range(coarsen):
                acc[k] = float32(0.0)
            for a in range(atoms.shape[0]):
                dy = y - atoms[a, 1]
                dz = z - atoms[a, 2]
                dyz2 = dy * dy + dz * dz
                q = atoms[a, 3]
                for k in range(coarsen):
                    dx = float32(base + k * cuda.blockDim.x) * h - atoms[a, 0]
                    acc[k] += q / math.sqrt(dx * dx + dyz2)
            for k in range(coarsen):
                i = base + k * cuda.blockDim.x
                if i < V.shape[1]:
                    V[j, i] = acc[k]

    @cuda.jit
    def dcs_cutoff_reference(atoms, bin_start, V, h, z, cutoff, bin_size):
        # One thread per grid point; only the bins within the cutoff in x and y are visited
        # (PMPP §18.5). A bin row's bins are consecutive in `atoms`, so the bins bx_lo..bx_hi of
        # row by are the one range bin_start[by, bx_lo] .. bin_start[by, bx_hi + 1].
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if j < V.shape[0] and i < V.shape[1]:
            x = float32(i) * h
            y = float32(j) * h
            nby = bin_start.shape[0]
            nbx = bin_start.shape[1] - 1
            bx_lo = max(int(math.floor((x - cutoff) / bin_size)), 0)
            bx_hi = min(int(math.floor((x + cutoff) / bin_size)), nbx - 1)
            by_lo = max(int(math.floor((y - cutoff) / bin_size)), 0)
            by_hi = min(int(math.floor((y + cutoff) / bin_size)), nby - 1)
            c2 = cutoff * cutoff
            acc = float32(0.0)
            for by in range(by_lo, by_hi + 1):
                for a in range(bin_start[by, bx_lo], bin_start[by, bx_hi + 1]):
                    dx = x - atoms[a, 0]
                    dy = y - atoms[a, 1]
                    dz = z - atoms[a, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 < c2:
                        acc += atoms[a, 3] / math.sqrt(r2)
            V[j, i] = acc

    return dict(scatter=dcs_scatter_reference, gather=dcs_gather_reference,
                coarsened=dcs_coarsened_reference, cutoff=dcs_cutoff_reference)


def reference_scatter():
    """The scatter form, written by the course: a thread per atom, atomic adds into V."""
    return _dcs_kernels()["scatter"]


def reference_gather():
    """Exercise 18.1 written by the course (the speed test's reference): a thread per point."""
    return _dcs_kernels()["gather"]


def reference_coarsened():
    """Exercise 18.2 written by the course: `coarsen` points a block-width apart per thread."""
    return _dcs_kernels()["coarsened"]


def reference_cutoff():
    """Exercise 18.3 written by the course: cutoff summation over the bins within reach."""
    return _dcs_kernels()["cutoff"]


@_kernels.lazy
def reference_coarsened_consecutive():
    """The coarsened kernel with a thread's points next to each other (PMPP §18.3): the same
    sums, but in each step k the threads of a warp store columns `coarsen` apart (uncoalesced);
    the measuring cell times it beside the coalesced one."""

    @cuda.jit
    def dcs_coarsened_consecutive(atoms, V, h, z, coarsen):
        base = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * coarsen
        j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if j < V.shape[0]:
            y = float32(j) * h
            acc = cuda.local.array(COARSEN_MAX, float32)
            for k in range(coarsen):
                acc[k] = float32(0.0)
            for a in range(atoms.shape[0]):
                dy = y - atoms[a, 1]
                dz = z - atoms[a, 2]
                dyz2 = dy * dy + dz * dz
                q = atoms[a, 3]
                for k in range(coarsen):
                    dx = float32(base + k) * h - atoms[a, 0]
                    acc[k] += q / math.sqrt(dx * dx + dyz2)
            for k in range(coarsen):
                if base + k < V.shape[1]:
                    V[j, base + k] = acc[k]
    return dcs_coarsened_consecutive
