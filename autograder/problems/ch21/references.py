"""Chapter 21's kernels of the course: what PMPP does with dynamic parallelism (a kernel that
launches kernels), done the way Numba CUDA can, with every launch made by the host.

Adaptive Bezier tessellation (PMPP ch. 21's Bezier-curve example): a quadratic Bezier curve is three control points
``cp[i] = (P0, P1, P2)``, float32 [n, 3, 2]; the number of points a curve is drawn with grows
with its curvature (the distance of P1 from the chord's midpoint over the chord's length, times
16, clamped to 4 .. MAX_POINTS). The book's parent kernel computes the count and launches a child
grid per curve; here one kernel computes every count, the course's exclusive scan (chapter 11's,
in integers, from chapter 13) turns the counts into offsets, and one kernel with a block per curve
writes every curve's points. The flat version draws every curve with MAX_POINTS points.

A quadtree (PMPP ch. 21's recursive example) by host-driven waves: a point's node is a locational code (1 for the
root, ``4 · code + q`` for child q), ``leaf`` int32 [n] holds every point's node; wave d counts
the points of every node of depth d (an atomic add into a table of 4^d counters) and moves the
points of every node holding more than ``capacity`` points into the child quadrant they lie in.
"""

from __future__ import annotations

import numpy as np

from autograder.machine import device
from autograder.problems.kit.kernels import KernelCache

cuda = float32 = int32 = None   # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "float32", "int32")

MAX_POINTS = 32          # PMPP's MAX_TESS_POINTS: the most points a curve is drawn with
MIN_POINTS = 4           # the fewest
POINTS_PER_CURVATURE = 16.0


@_kernels.lazy
def _bezier_kernels() -> dict:
    """Compile the course's tessellation kernels once for this backend."""
    import math

    @cuda.jit
    def tess_counts_reference(cp, counts):
        # One thread per curve: PMPP's curvature, |P1 − (P0 + P2)/2| / |P2 − P0|, times 16,
        # truncated and clamped (the float comparison first, so a huge curvature cannot overflow
        # the conversion to an integer).
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < cp.shape[0]:
            mx = cp[i, 1, 0] - float32(0.5) * (cp[i, 0, 0] + cp[i, 2, 0])
            my = cp[i, 1, 1] - float32(0.5) * (cp[i, 0, 1] + cp[i, 2, 1])
            cx = cp[i, 2, 0] - cp[i, 0, 0]
            cy = cp[i, 2, 1] - cp[i, 0, 1]
            c = math.sqrt(mx * mx + my * my) / math.sqrt(cx * cx + cy * cy)
            v = min(c * float32(16.0), float32(MAX_POINTS))
            counts[i] = max(int32(v), MIN_POINTS)

    @cuda.jit
    def tessellate_reference(cp, counts, offsets, points):
        # A block per curve (the child grid the book launches from the parent kernel), its threads
        # striding over the curve's points: u = k / (count − 1), the Bernstein weights of u.
        b = cuda.blockIdx.x
        if b < cp.shape[0]:
            count = counts[b]
            start = offsets[b]
            last = float32(count - 1)
            for k in range(cuda.threadIdx.x, count, cuda.blockDim.x):
                u = float32(k) / last
                w = float32(1.0) - u
                b0 = w * w
                b1 = float32(2.0) * u * w
                b2 = u * u
                points[start + k, 0] = b0 * cp[b, 0, 0] + b1 * cp[b, 1, 0] + b2 * cp[b, 2, 0]
                points[start + k, 1] = b0 * cp[b, 0, 1] + b1 * cp[b, 1, 1] + b2 * cp[b, 2, 1]

    @cuda.jit
    def tessellate_flat(cp, points):
        # The flat version: every curve drawn with MAX_POINTS points, curve b's at MAX_POINTS · b.
        b = cuda.blockIdx.x
        if b < cp.shape[0]:
            start = b * MAX_POINTS
            last = float32(MAX_POINTS - 1)
            for k in range(cuda.threadIdx.x, MAX_POINTS, cuda.blockDim.x):
                u = float32(k) / last
                w = float32(1.0) - u
                b0 = w * w
                b1 = float32(2.0) * u * w
                b2 = u * u
                points[start + k, 0] = b0 * cp[b, 0, 0] + b1 * cp[b, 1, 0] + b2 * cp[b, 2, 0]
                points[start + k, 1] = b0 * cp[b, 0, 1] + b1 * cp[b, 1, 1] + b2 * cp[b, 2, 1]

    return dict(counts=tess_counts_reference, tessellate=tessellate_reference,
                flat=tessellate_flat)


def exclusive_scan(counts, offsets) -> None:
    """``offsets[i] = counts[0] + … + counts[i − 1]`` for int32 device arrays: the course's scan
    (chapter 11's hierarchical scan, exclusive and in integers, as chapter 13 hands it out)."""
    from autograder.problems.ch13.references import exclusive_scan as scan
    scan(counts, offsets)


def reference_counts():
    """Exercise 21.1 written by the course: a thread per curve."""
    return _bezier_kernels()["counts"]


def tessellate_kernel():
    """The course's block-per-curve tessellation kernel (offsets given)."""
    return _bezier_kernels()["tessellate"]


def flat_kernel():
    """The flat tessellation: MAX_POINTS points for every curve."""
    return _bezier_kernels()["flat"]


def course_tessellate(cp, counts, points, threads):
    """Exercise 21.2 written by the course: the exclusive scan of the counts, then one kernel with
    a block of ``threads`` per curve."""
    from numba import cuda as numba_cuda
    n = cp.shape[0]
    if n == 0:
        return
    offsets = numba_cuda.device_array(n, np.int32)
    exclusive_scan(counts, offsets)
    _bezier_kernels()["tessellate"][n, threads](cp, counts, offsets, points)


def reference_tessellate():
    return course_tessellate


def tessellate_flat(cp, points, threads: int = MAX_POINTS) -> None:
    """Every curve with MAX_POINTS points into ``points`` [MAX_POINTS · n, 2]."""
    n = cp.shape[0]
    if n:
        _bezier_kernels()["flat"][n, threads](cp, points)


# ---- the quadtree, wave by wave -------------------------------------------------------------------

@_kernels.lazy
def _quadtree_kernels() -> dict:
    """Compile the course's quadtree kernels once for this backend."""

    @cuda.jit
    def start_at_root(leaf):
        i = cuda.grid(1)
        if i < leaf.size:
            leaf[i] = 1

    @cuda.jit
    def clear(table, m):
        j = cuda.grid(1)
        if j < m:
            table[j] = 0

    @cuda.jit
    def count_wave(leaf, first, table):
        # Points still at depth d (their code is in [4^d, 2·4^d), first = 4^d) count themselves
        # into their node's counter.
        i = cuda.grid(1)
        if i < leaf.size:
            code = leaf[i]
            if code >= first:
                cuda.atomic.add(table, code - first, 1)

    @cuda.jit
    def split_wave(x, y, leaf, first, scale, capacity, table):
        # A point of a node holding more than `capacity` points moves to the child quadrant it lies
        # in: the next bit of x and of y (scale = 2^(d+1); the root is [0, 1)²).
        i = cuda.grid(1)
        if i < leaf.size:
            code = leaf[i]
            if code >= first and table[code - first] > capacity:
                qx = int32(x[i] * scale) & 1
                qy = int32(y[i] * scale) & 1
                leaf[i] = 4 * code + qx + 2 * qy

    return dict(root=start_at_root, clear=clear, count=count_wave, split=split_wave)


def quadtree_threads() -> int:
    return 256 if device.current().is_gpu else 32


def course_quadtree(x, y, capacity, max_depth, leaf, table, threads):
    """Exercise 21.3 written by the course: ``max_depth`` waves launched by the host, each a clear
    of the table's first 4^d counters, a count and a split over every point; nothing read back
    (a wave with no node to split changes nothing)."""
    k = _quadtree_kernels()
    n = leaf.size
    if n == 0:
        return
    blocks = (n + threads - 1) // threads
    k["root"][blocks, threads](leaf)
    for d in range(int(max_depth)):
        first = 4 ** d
        k["clear"][(first + threads - 1) // threads, threads](table, first)
        k["count"][blocks, threads](leaf, first, table)
        k["split"][blocks, threads](x, y, leaf, first, float(2 ** (d + 1)), int(capacity), table)


def reference_quadtree():
    return course_quadtree
