"""Chapter 17's kernels of the course: F^H·d of an MRI reconstruction, in float32.

- ``scatter``: PMPP's first form, one thread per k-space sample adding its contribution to every
  voxel with atomic adds (M·N of them; the outputs must start at zero);
- ``gather``: the loops interchanged, one thread per voxel summing over every sample in two
  registers (Exercise 17.1, the speed test's reference);
- ``gather_fast``: the same compiled with ``fastmath=True`` (sin and cos become the hardware's
  ``sin.approx.f32`` and ``cos.approx.f32``);
- ``chunked``: the samples staged in shared memory ``CHUNK`` at a time by the whole block, every
  thread then reading the same sample at the same time (the broadcast constant memory serves in
  PMPP's version), compiled with fast trigonometry (Exercise 17.3).

Arguments, in this order: ``kx, ky, kz`` (M samples), ``x, y, z`` (N voxels), ``rMu, iMu`` (M),
``rFhD, iFhD`` (N, the outputs)."""

from __future__ import annotations

import math

import numpy as np

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = None      # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "float32")

TWO_PI = np.float32(2 * math.pi)
CHUNK = 64                 # samples staged per round (5 arrays × 64 × 4 bytes = 1.25 KiB)


@_kernels.lazy
def _fhd_kernels() -> dict:
    """Compile the chapter's course kernels once for this backend."""

    @cuda.jit
    def fhd_scatter_reference(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
        # One thread per sample m: its term goes to every voxel, and every voxel receives a
        # term from every thread at once, hence an atomic add per (sample, voxel) pair.
        m = cuda.grid(1)
        if m < kx.size:
            for n in range(x.size):
                t = TWO_PI * (kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n])
                c = math.cos(t)
                s = math.sin(t)
                cuda.atomic.add(rFhD, n, rMu[m] * c - iMu[m] * s)
                cuda.atomic.add(iFhD, n, iMu[m] * c + rMu[m] * s)

    def gather(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
        # One thread per voxel n: the voxel's coordinates and both sums live in registers; the
        # samples are read by every thread of a warp at once (the same address: one broadcast).
        n = cuda.grid(1)
        if n < x.size:
            xn, yn, zn = x[n], y[n], z[n]
            re = float32(0.0)
            im = float32(0.0)
            for m in range(kx.size):
                t = TWO_PI * (kx[m] * xn + ky[m] * yn + kz[m] * zn)
                c = math.cos(t)
                s = math.sin(t)
                re += rMu[m] * c - iMu[m] * s
                im += iMu[m] * c + rMu[m] * s
            rFhD[n] = re
            iFhD[n] = im

    @cuda.jit(fastmath=True)
    def fhd_chunked_reference(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
        # The block loads CHUNK samples into shared memory (each thread a few, strided by the
        # block's size), waits, then every thread sums over them; a second barrier keeps the
        # next round's loads from overwriting samples a slower warp still reads. Threads past
        # the last voxel load and wait too: a barrier must be reached by every thread.
        s_kx = cuda.shared.array(CHUNK, float32)
        s_ky = cuda.shared.array(CHUNK, float32)
        s_kz = cuda.shared.array(CHUNK, float32)
        s_r = cuda.shared.array(CHUNK, float32)
        s_i = cuda.shared.array(CHUNK, float32)
        n = cuda.grid(1)
        inside = n < x.size
        xn = x[n] if inside else float32(0.0)
        yn = y[n] if inside else float32(0.0)
        zn = z[n] if inside else float32(0.0)
        re = float32(0.0)
        im = float32(0.0)
        M = kx.size
        for base in range(0, M, CHUNK):
            for j in range(cuda.threadIdx.x, CHUNK, cuda.blockDim.x):
                if base + j < M:
                    s_kx[j] = kx[base + j]
                    s_ky[j] = ky[base + j]
                    s_kz[j] = kz[base + j]
                    s_r[j] = rMu[base + j]
                    s_i[j] = iMu[base + j]
            cuda.syncthreads()
            for j in range(min(CHUNK, M - base)):
                t = TWO_PI * (s_kx[j] * xn + s_ky[j] * yn + s_kz[j] * zn)
                c = math.cos(t)
                s = math.sin(t)
                re += s_r[j] * c - s_i[j] * s
                im += s_i[j] * c + s_r[j] * s
            cuda.syncthreads()
        if inside:
            rFhD[n] = re
            iFhD[n] = im

    return dict(scatter=fhd_scatter_reference, gather=cuda.jit(gather),
                gather_fast=cuda.jit(fastmath=True)(gather), chunked=fhd_chunked_reference)


def reference_fhd_gather():
    """Exercise 17.1 written by the course (the speed test's reference): one thread per voxel."""
    return _fhd_kernels()["gather"]


def reference_fhd_chunked():
    """Exercise 17.3 written by the course: samples staged in shared memory, fast sin and cos."""
    return _fhd_kernels()["chunked"]


def reference_fhd_scatter():
    """PMPP's first kernel: one thread per sample, atomic adds into every voxel (outputs zeroed
    first)."""
    return _fhd_kernels()["scatter"]


def reference_fhd_gather_fast():
    """The gather kernel compiled with ``fastmath=True``."""
    return _fhd_kernels()["gather_fast"]
