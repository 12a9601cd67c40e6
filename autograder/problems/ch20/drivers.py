"""What each rank runs around the learner's function (see :mod:`autograder.problems.ch20.ranks`):
one *driver* per kind of call. A driver gets the learner's function, ``comm``, this rank's own
inputs (its slab, never the whole grid) and the audit switch; it returns this rank's outputs.

The ``comm`` a learner's function receives is a :class:`RankComm`: the rank's ``MPI.COMM_WORLD``
with every point-to-point call recorded (its name and when it started and ended), so that the
overlap exercise can see that its messages were non-blocking, and the measuring cell can draw
each rank's timeline of exchange and compute.
"""

from __future__ import annotations

import time

import numpy as np

from autograder.problems.ch20.ranks import RankComm
from autograder.problems.kit.kernels import KernelCache

# Blocks of the course's stencil kernel (chapter 8's basic kernel): x, y, z.
STENCIL_BLOCK = (8, 4, 2)
NONBLOCKING = ("Isend", "Irecv", "Isendrecv", "isend", "irecv")

# While a timed step runs: the kernel launches of stencil_planes, as (start, end) CUDA events.
_trace: list = []
_tracing = [False]


cuda = float32 = None            # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32")


@_kernels.lazy
def stencil_planes_kernel():
    """One thread per point of the planes [start, stop) of a slab (chapter 8's basic stencil,
    along z offset by ``start``): y and x faces copied, and the slab planes ``face_lo`` and
    ``face_hi`` (the grid's own faces, or -1 for none) copied too."""
    @cuda.jit
    def stencil_planes(inp, out, start, stop, face_lo, face_hi, c0, c1, c2, c3, c4, c5, c6):
        k, j, dz = cuda.grid(3)
        i = start + dz
        nz, ny, nx = inp.shape
        if i < stop and j < ny and k < nx:
            if i == face_lo or i == face_hi or j == 0 or k == 0 or j == ny - 1 or k == nx - 1:
                out[i, j, k] = inp[i, j, k]
            else:
                out[i, j, k] = (c0 * inp[i, j, k] + c1 * inp[i, j, k - 1]
                                + c2 * inp[i, j, k + 1] + c3 * inp[i, j - 1, k]
                                + c4 * inp[i, j + 1, k] + c5 * inp[i - 1, j, k]
                                + c6 * inp[i + 1, j, k])
    return stencil_planes


def stencil_planes(d_slab, d_out, c, start: int, stop: int, first: bool = False,
                   last: bool = False) -> None:
    """The seven-point stencil on the planes ``start .. stop - 1`` of a slab: ``d_out[z]`` from
    ``d_slab[z - 1]``, ``d_slab[z]`` and ``d_slab[z + 1]`` (device arrays of one shape,
    ``(planes + 2, ny, nx)``, ghost planes included), the y and x faces copied. ``first``: this
    rank holds the grid's first plane (slab plane 1), which is copied, not computed; ``last``:
    the grid's last plane (slab plane ``planes``), likewise. Asynchronous on a GPU: it returns
    once the kernel is queued (``cuda.synchronize()`` waits for it)."""
    from numba import cuda as _cuda
    if tuple(d_slab.shape) != tuple(d_out.shape) or len(d_slab.shape) != 3:
        raise ValueError(f"stencil_planes: d_slab is {tuple(d_slab.shape)} and d_out "
                         f"{tuple(d_out.shape)}: both must be the (planes + 2, ny, nx) slab")
    if len(c) != 7:
        raise ValueError(f"stencil_planes: c holds the 7 coefficients, not {len(c)}")
    planes = d_slab.shape[0] - 2
    start, stop = int(start), int(stop)
    if not 1 <= start <= stop <= planes + 1:
        raise ValueError(f"stencil_planes: planes {start} .. {stop - 1} are not the slab's own "
                         f"(1 .. {planes}): the ghost planes 0 and {planes + 1} are inputs only")
    if stop == start:
        return
    _, ny, nx = d_slab.shape
    bx, by, bz = STENCIL_BLOCK
    blocks = (-(-nx // bx), -(-ny // by), -(-(stop - start) // bz))
    coefs = [np.float32(v) for v in c]
    args = (d_slab, d_out, start, stop, 1 if first else -1, planes if last else -1, *coefs)
    kernel = stencil_planes_kernel()
    if _tracing[0]:
        begin, end = _cuda.event(), _cuda.event()
        begin.record()
        kernel[blocks, STENCIL_BLOCK](*args)
        end.record()
        _trace.append((begin, end))
        return
    kernel[blocks, STENCIL_BLOCK](*args)


def _compile_course_kernel() -> None:
    """Compile (and run once, on a tiny slab) the course's stencil kernel before the learner's
    function runs: on a GPU the compiler reads and writes files, which the ranks' audit hook
    refuses while the learner's function runs."""
    from numba import cuda as _cuda
    tiny = _cuda.to_device(np.zeros((3, 3, 3), np.float32))
    stencil_planes(tiny, tiny, [0.0] * 7, 1, 2)
    _cuda.synchronize()


def _coefficients(inputs) -> tuple:
    return tuple(np.float32(v) for v in inputs["c"])


def step(fn, comm, inputs, options, switch) -> dict:
    """Exercises 20.2 and 20.3: ``fn(comm, d_slab, d_out, c)`` on device arrays; the whole of
    ``d_out`` comes back (ghost planes too), with the names of the MPI calls it made."""
    from numba import cuda
    slab = np.array(inputs["slab"], np.float32)
    d_slab = cuda.to_device(slab)
    d_out = cuda.to_device(np.full(slab.shape, np.nan, np.float32))
    _compile_course_kernel()
    rc = RankComm(comm)
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    MPI.COMM_WORLD = rc          # calls through MPI.COMM_WORLD are recorded too
    try:
        switch(True)
        fn(rc, d_slab, d_out, _coefficients(inputs))
        cuda.synchronize()
        switch(False)
    finally:
        MPI.COMM_WORLD = world
    names = sorted({name for name, _, _ in rc.calls})
    return {"out": d_out.copy_to_host(), "calls": np.array(names or [""])}


def slab_expected(slab: np.ndarray, c, first: bool, last: bool) -> tuple[np.ndarray, np.ndarray]:
    """The float64 stencil of a slab's own planes (``slab`` with its ghost planes valid), and the
    tolerance of each point: the first rank's first plane and the last rank's last plane are the
    grid's faces (copied); elsewhere chapter 8's bound, γ₇ · Σ |c_m x_m|."""
    from autograder.core.checks import TINY32, gamma
    from autograder.problems.ch08.specs import interior_mask, stencil7
    n = slab.shape[0] - 2
    lo, hi = (1 if first else 0), (n + 1 if last else n + 2)
    part = slab[lo:hi].astype(np.float64)
    exact = stencil7(part, c)[1 - lo:n + 1 - lo]
    mag = stencil7(np.abs(part), [abs(float(v)) for v in c]) * interior_mask(part.shape)
    return exact, gamma(7) * mag[1 - lo:n + 1 - lo] + TINY32


class SlabCheck:
    """A rank's answer key for the timed calls, made a few planes at a time: the float64 stencil
    of its own planes and their tolerances (:func:`slab_expected`), the tolerances kept as float32
    rounded up. A rank of the speed test's grid (129 planes of 512 × 512) then holds about 400 MiB
    for it, where the whole slab at once in float64 peaked near 1.9 GiB: four ranks of that were
    more than the grader's memory limit for a student process and its children."""

    PLANES = 8

    def __init__(self, slab: np.ndarray, c, first: bool, last: bool):
        n = slab.shape[0] - 2
        self.exact = np.empty((n,) + slab.shape[1:], np.float64)
        self.tol = np.empty((n,) + slab.shape[1:], np.float32)
        for a in range(0, n, self.PLANES):
            b = min(n, a + self.PLANES)
            # own planes a .. b - 1 are slab planes a + 1 .. b; their neighbours a .. b + 1
            exact, tol = slab_expected(slab[a:b + 2], c, first and a == 0, last and b == n)
            self.exact[a:b] = exact
            self.tol[a:b] = np.nextafter(tol.astype(np.float32), np.float32(np.inf))

    def right(self, got: np.ndarray) -> bool:
        """Are ``got`` (the own planes, float32) all within their tolerance? (NaN is not.)"""
        for a in range(0, len(self.exact), self.PLANES):
            b = a + self.PLANES
            if not np.all(np.abs(got[a:b].astype(np.float64) - self.exact[a:b]) <= self.tol[a:b]):
                return False
        return True


def timed(fns, comm, inputs, options, switch) -> dict:
    """The measuring cell and the speed test: each of ``fns`` ({label: step function}) called
    ``repeats`` times after ``warmup`` calls, the steps taking turns call by call, every rank
    starting together (a barrier); a call lasts as long as its slowest rank. Every timed call's
    ``d_out`` is checked against the float64 stencil of the rank's slab (:class:`SlabCheck`).
    Returns, per label: ms of each call, right (bool each), and this rank's timeline of the last
    call (MPI calls and stencil kernels, ms from its start)."""
    from numba import cuda
    from mpi4py import MPI
    rank, size = comm.Get_rank(), comm.Get_size()
    slab = np.ascontiguousarray(inputs["slab"], np.float32)
    c = _coefficients(inputs)
    n = slab.shape[0] - 2
    key = SlabCheck(slab, c, rank == 0, rank == size - 1)
    _compile_course_kernel()
    d_slab = cuda.to_device(slab)
    d_out = cuda.device_array(slab.shape, np.float32)
    poison = cuda.to_device(np.full(slab.shape, np.nan, np.float32))   # kept on the device only
    out = {}
    steps = list(fns.values())
    times = [[] for _ in steps]
    right = [[] for _ in steps]
    spans = [[] for _ in steps]
    # The steps take turns, call by call, in an order that rotates: a drift of the machine
    # (clocks, another process) falls on all of them alike, not on whichever ran last.
    for call in range(options["warmup"] + options["repeats"]):
        for k in range(len(steps)):
            index = (call + k) % len(steps)
            fn = steps[index]
            d_out.copy_to_device(poison)
            rc = RankComm(comm)
            _trace.clear()
            cuda.synchronize()
            comm.Barrier()
            t0 = time.perf_counter()
            origin = cuda.event()
            origin.record()
            _tracing[0] = True
            switch(True)
            fn(rc, d_slab, d_out, c)
            cuda.synchronize()
            switch(False)
            _tracing[0] = False
            mine = time.perf_counter() - t0
            slowest = comm.allreduce(mine, op=MPI.MAX)
            if call < options["warmup"]:
                continue
            right[index].append(key.right(d_out.copy_to_host()[1:n + 1]))
            times[index].append(slowest * 1e3)
            spans[index] = [(name, (a - t0) * 1e3, (b - t0) * 1e3) for name, a, b in rc.calls]
            for start, end in _trace:
                spans[index].append(("kernel", cuda.event_elapsed_time(origin, start),
                                     cuda.event_elapsed_time(origin, end)))
    for index in range(len(steps)):
        out[f"ms_{index}"] = np.array(times[index])
        out[f"right_{index}"] = np.array(right[index])
        out[f"span_names_{index}"] = np.array([s[0] for s in spans[index]] or [""])
        out[f"span_times_{index}"] = np.array([s[1:] for s in spans[index]] or [(0.0, 0.0)])
    return out


# What ranks.launch names to run these in the ranks ("module:function").
STEP = f"{__name__}:step"
TIMED = f"{__name__}:timed"
