"""Chapter 19's kernels of the course: one step of a direct all-pairs N-body computation (the
softened gravitational acceleration of every body), decomposed three ways, in float32:

- gather, one thread per body: thread i reads every body j from global memory and sums the pull
  of each on body i (output-centric: each thread owns one output and writes it once);
- tiled gather: the same ownership, but the block stages ``blockDim.x`` bodies at a time in shared
  memory, so every body is read from global memory once per block instead of once per thread;
- scatter with Newton's third law: each pair (i, j), i < j, is computed once and its force added
  to both bodies, half the arithmetic, but every addition to a body another thread owns is an
  atomic read-modify-write in global memory (input-centric).

``pos`` is float32 [N, 3], ``mass`` float32 [N], ``eps2`` the softening length squared (a float32
scalar), ``acc`` float32 [N, 3]::

    acc[i] = Σ over j of mass[j] · (pos[j] − pos[i]) / (|pos[j] − pos[i]|² + eps2)^(3/2)

The term j = i is zero (its difference is zero and the softening keeps the denominator positive),
so none of the kernels skips it."""

from __future__ import annotations

import math

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = None      # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "float32")

BLOCK_MAX = 256            # the largest block the tiled kernels take: their shared tiles' length


@_kernels.lazy
def _nbody_kernels() -> dict:
    """Compile the course's kernels of the chapter once for this backend."""

    @cuda.jit
    def nbody_gather_reference(pos, mass, eps2, acc):
        # One thread per body i: N terms, each read from global memory, summed in registers.
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        n = pos.shape[0]
        if i < n:
            xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
            ax = float32(0.0)
            ay = float32(0.0)
            az = float32(0.0)
            for j in range(n):
                dx = pos[j, 0] - xi
                dy = pos[j, 1] - yi
                dz = pos[j, 2] - zi
                r2 = dx * dx + dy * dy + dz * dz + eps2
                inv = float32(1.0) / math.sqrt(r2)
                s = mass[j] * inv * inv * inv
                ax += dx * s
                ay += dy * s
                az += dz * s
            acc[i, 0] = ax
            acc[i, 1] = ay
            acc[i, 2] = az

    @cuda.jit
    def nbody_tiled_reference(pos, mass, eps2, acc):
        # The same sum, with the block's threads loading blockDim.x bodies into shared memory
        # (one each), waiting, then all reading the tile; a second barrier before the next load.
        # Threads past the last body still load and wait: a barrier must be reached by all.
        sx = cuda.shared.array(BLOCK_MAX, float32)
        sy = cuda.shared.array(BLOCK_MAX, float32)
        sz = cuda.shared.array(BLOCK_MAX, float32)
        sm = cuda.shared.array(BLOCK_MAX, float32)
        t = cuda.threadIdx.x
        width = cuda.blockDim.x
        i = cuda.blockIdx.x * width + t
        n = pos.shape[0]
        xi = float32(0.0)
        yi = float32(0.0)
        zi = float32(0.0)
        if i < n:
            xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ax = float32(0.0)
        ay = float32(0.0)
        az = float32(0.0)
        for start in range(0, n, width):
            j = start + t
            if j < n:
                sx[t] = pos[j, 0]
                sy[t] = pos[j, 1]
                sz[t] = pos[j, 2]
                sm[t] = mass[j]
            cuda.syncthreads()
            for k in range(min(width, n - start)):
                dx = sx[k] - xi
                dy = sy[k] - yi
                dz = sz[k] - zi
                r2 = dx * dx + dy * dy + dz * dz + eps2
                inv = float32(1.0) / math.sqrt(r2)
                s = sm[k] * inv * inv * inv
                ax += dx * s
                ay += dy * s
                az += dz * s
            cuda.syncthreads()
        if i < n:
            acc[i, 0] = ax
            acc[i, 1] = ay
            acc[i, 2] = az

    @cuda.jit
    def nbody_scatter_reference(pos, mass, eps2, acc):
        # Newton's third law: thread i computes the pairs (i, j) with j > i once each, keeps
        # body i's share in registers and adds body j's (the opposite direction, body i's mass)
        # to acc[j] atomically, since many threads add to the same body. acc starts at zero.
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        n = pos.shape[0]
        if i < n:
            xi, yi, zi, mi = pos[i, 0], pos[i, 1], pos[i, 2], mass[i]
            ax = float32(0.0)
            ay = float32(0.0)
            az = float32(0.0)
            for j in range(i + 1, n):
                dx = pos[j, 0] - xi
                dy = pos[j, 1] - yi
                dz = pos[j, 2] - zi
                r2 = dx * dx + dy * dy + dz * dz + eps2
                inv = float32(1.0) / math.sqrt(r2)
                inv3 = inv * inv * inv
                s = mass[j] * inv3
                ax += dx * s
                ay += dy * s
                az += dz * s
                s = mi * inv3
                cuda.atomic.add(acc, (j, 0), -dx * s)
                cuda.atomic.add(acc, (j, 1), -dy * s)
                cuda.atomic.add(acc, (j, 2), -dz * s)
            cuda.atomic.add(acc, (i, 0), ax)
            cuda.atomic.add(acc, (i, 1), ay)
            cuda.atomic.add(acc, (i, 2), az)

    @cuda.jit
    def zero_rows(acc):
        k = cuda.grid(1)
        if k < acc.shape[0]:
            acc[k, 0] = float32(0.0)
            acc[k, 1] = float32(0.0)
            acc[k, 2] = float32(0.0)

    return dict(gather=nbody_gather_reference, tiled=nbody_tiled_reference,
                scatter=nbody_scatter_reference, zero=zero_rows)


def reference_gather():
    """Exercise 19.2 written by the course: one thread per body, every body from global memory."""
    return _nbody_kernels()["gather"]


def reference_tiled():
    """Exercise 19.3 written by the course (the speed test's reference): bodies staged through
    shared memory a block's width at a time."""
    return _nbody_kernels()["tiled"]


def reference_scatter():
    """The scatter decomposition (not graded): half the pairs, atomics into every body."""
    return _nbody_kernels()["scatter"]


def scatter_step(pos, mass, eps2, acc, threads: int = 256) -> None:
    """``acc`` zeroed, then the scatter kernel (it adds into ``acc``): the whole step, as the
    measuring cell times it. Device arrays in."""
    kernels = _nbody_kernels()
    n = pos.shape[0]
    blocks = (n + threads - 1) // threads
    kernels["zero"][blocks, threads](acc)
    kernels["scatter"][blocks, threads](pos, mass, eps2, acc)
