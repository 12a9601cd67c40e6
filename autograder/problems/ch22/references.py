"""Chapter 22's kernels and host pipelines of the course. One operation throughout, so that what
changes between the exercises is how the work reaches the GPU, not the arithmetic::

    out[i] = a · x[i] + b          (float32; a and b scalars, or one pair per small problem)

- :func:`reference_axpb`: one thread per element, a grid-stride loop (any grid covers any n);
- :func:`reference_pipeline`: a host array in pinned memory processed in ``chunks`` pieces over
  ``streams`` CUDA streams, each piece copied in, computed and copied back on its own stream;
  :func:`serial_pipeline` does the same in one piece, copy, kernel, copy, one after the other;
- :func:`reference_batched`: many small problems of different lengths in one launch, a block per
  problem, its bounds read from an offsets array; :func:`reference_one_problem` is the kernel a
  one-launch-per-problem loop launches;
- :func:`reference_ilp`: each thread handles ``ILP`` independent elements (loads first, then
  stores), against :func:`reference_one_each`, one element per thread and no loop;
- :func:`reference_rounds`: the affine map applied ``rounds`` times (the measuring cell's kernel
  whose time can be matched to a copy's, so the timeline shows copies under kernels).
"""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = None      # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "float32")

ILP = 4                    # independent elements per thread in the ILP kernels


@_kernels.lazy
def _axpb_kernels() -> dict:
    """Compile the course's kernels of the chapter once for this backend."""

    @cuda.jit
    def axpb_reference(x, out, a, b):
        # Grid-stride: a thread takes i, i + the grid's width, ...; any grid covers any n.
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < x.size:
            out[i] = a * x[i] + b
            i += stride

    @cuda.jit
    def axpb_rounds_reference(x, out, a, b, rounds):
        # The same map applied `rounds` times: work per element that can be dialled up until a
        # chunk's kernel takes as long as its copies.
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < x.size:
            y = x[i]
            for _ in range(rounds):
                y = a * y + b
            out[i] = y
            i += stride

    @cuda.jit
    def batched_reference(x, offsets, a, b, out):
        # Block p owns problem p: its elements offsets[p] .. offsets[p + 1], strided by the block.
        p = cuda.blockIdx.x
        if p < offsets.size - 1:
            end = offsets[p + 1]
            ap = a[p]
            bp = b[p]
            j = offsets[p] + cuda.threadIdx.x
            while j < end:
                out[j] = ap * x[j] + bp
                j += cuda.blockDim.x

    @cuda.jit
    def ilp_reference(x, out, a, b):
        # ILP elements per thread, a grid's width apart (each load coalesced); all loads are
        # issued before the first store, so they are in flight together.
        t = cuda.grid(1)
        width = cuda.gridsize(1)
        v0 = float32(0.0)
        v1 = float32(0.0)
        v2 = float32(0.0)
        v3 = float32(0.0)
        n = x.size
        if t < n:
            v0 = x[t]
        if t + width < n:
            v1 = x[t + width]
        if t + 2 * width < n:
            v2 = x[t + 2 * width]
        if t + 3 * width < n:
            v3 = x[t + 3 * width]
        if t < n:
            out[t] = a * v0 + b
        if t + width < n:
            out[t + width] = a * v1 + b
        if t + 2 * width < n:
            out[t + 2 * width] = a * v2 + b
        if t + 3 * width < n:
            out[t + 3 * width] = a * v3 + b

    @cuda.jit
    def one_each_reference(x, out, a, b):
        # One element per thread, no loop: the grid must have a thread for every element.
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + b

    return dict(axpb=axpb_reference, rounds=axpb_rounds_reference, batched=batched_reference,
                ilp=ilp_reference, one_each=one_each_reference)


def reference_axpb():
    """out = a·x + b, a grid-stride loop: the kernel of each chunk of the pipeline."""
    return _axpb_kernels()["axpb"]


def reference_rounds():
    """The map applied ``rounds`` times (the measuring cell's adjustable kernel)."""
    return _axpb_kernels()["rounds"]


def reference_batched():
    """Exercise 22.2 written by the course (the speed test's reference): a block per problem."""
    return _axpb_kernels()["batched"]


def reference_one_problem():
    """The kernel a one-launch-per-problem loop launches on each problem's slice."""
    return _axpb_kernels()["axpb"]


def reference_ilp():
    """Exercise 22.3 written by the course: ``ILP`` = 4 independent elements per thread."""
    return _axpb_kernels()["ilp"]


def reference_one_each():
    """One element per thread, as many threads as elements (22.3's comparison)."""
    return _axpb_kernels()["one_each"]


THREADS = 256


def chunk_bounds(n: int, chunks: int) -> list[tuple[int, int]]:
    """``chunks`` pieces of [0, n) as even as they come: the first n % chunks are one longer."""
    base, extra = divmod(n, chunks)
    out, start = [], 0
    for i in range(chunks):
        stop = start + base + (i < extra)
        out.append((start, stop))
        start = stop
    return out


def reference_pipeline(x, out, a, b, chunks, streams, kernel=None, rounds=0, stamps=None):
    """Exercise 22.1 written by the course: ``x`` and ``out`` host arrays (pinned), ``chunks``
    pieces over ``streams`` streams. Each stream gets its own device buffers, as long as the
    longest chunk, reused by every chunk queued on it: the stream runs them in order, so chunk
    i + streams cannot overwrite chunk i's buffer before chunk i's copy back has been done.
    ``kernel``: another kernel of the same arguments; ``rounds`` > 0 runs the rounds kernel.
    ``stamps``: a list to append each chunk's events to (see :func:`timed_stage`)."""
    from numba import cuda
    n = x.shape[0]
    chunks = max(1, min(int(chunks), n))
    streams = max(1, min(int(streams), chunks))
    parts = chunk_bounds(n, chunks)
    longest = max(stop - start for start, stop in parts)
    queues = [cuda.stream() for _ in range(streams)]
    d_in = [cuda.device_array(longest, x.dtype) for _ in range(streams)]
    d_out = [cuda.device_array(longest, out.dtype) for _ in range(streams)]
    if rounds:
        step = reference_rounds()
    else:
        step = kernel or reference_axpb()
    for i, (start, stop) in enumerate(parts):
        s = i % streams
        m = stop - start
        q = queues[s]
        blocks = (m + THREADS - 1) // THREADS
        with timed_stage(stamps, i, s, "copy in", q):
            d_in[s][:m].copy_to_device(x[start:stop], stream=q)
        with timed_stage(stamps, i, s, "kernel", q):
            if rounds:
                step[blocks, THREADS, q](d_in[s][:m], d_out[s][:m], a, b, rounds)
            else:
                step[blocks, THREADS, q](d_in[s][:m], d_out[s][:m], a, b)
        with timed_stage(stamps, i, s, "copy out", q):
            d_out[s][:m].copy_to_host(out[start:stop], stream=q)
    for q in queues:
        q.synchronize()


def serial_pipeline(x, out, a, b, rounds=0, stamps=None):
    """The whole array at once: copy in, kernel, copy back, each waiting for the one before."""
    reference_pipeline(x, out, a, b, 1, 1, rounds=rounds, stamps=stamps)


class timed_stage:
    """Two events on ``stream`` around one stage of one chunk, appended to ``stamps`` (a list)
    as ``[chunk, stream, stage, start_event, end_event]``; nothing when ``stamps`` is None."""

    def __init__(self, stamps, chunk, stream_index, stage, stream):
        self.stamps, self.row = stamps, [chunk, stream_index, stage]
        self.stream = stream

    def __enter__(self):
        if self.stamps is not None:
            from numba import cuda
            self.start = cuda.event()
            self.start.record(self.stream)
        return self

    def __exit__(self, *exc):
        if self.stamps is not None and exc[0] is None:
            from numba import cuda
            end = cuda.event()
            end.record(self.stream)
            self.stamps.append(self.row + [self.start, end])
        return False
