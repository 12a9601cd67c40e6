"""Chapter 10's reference kernels: the course's sum (``reduce_sum``'s ``reference=``), CuPy's
(its ``vendor=``), and the book's steps that ``aag bench`` times beside it (``BENCH_VARIANTS``):
the shared-memory trees of PMPP §10.3-10.8 and two plain grid-stride sums."""

from __future__ import annotations

import numpy as np

from autograder.machine.launch import BoundLaunches, zero_words
from autograder.problems.kit.kernels import KernelCache

MAX_WARPS = 32          # 1024 threads per block / 32 lanes: the most warps a block can have
COARSE = 8              # PMPP §10.8's coarsening factor in the course's coarsened kernel

cuda = float32 = uint32 = uint64 = None      # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32", "uint32", "uint64")


@_kernels.lazy
def _pieces():
    """The device functions the grid-stride sums share: ``low(u)`` and ``high(u)``, the two floats
    of an 8-byte pair, and ``block_total(v, out)``, which adds every thread's ``v`` into
    ``out[0]``: shuffles within each warp, the warps' partial sums through shared memory, then
    one atomic per block (every thread of the block calls it)."""
    @cuda.jit(device=True)
    def low(u):
        return uint32(u & 0xFFFFFFFF).view(np.float32)   # the first float of a pair

    @cuda.jit(device=True)
    def high(u):
        return uint32(u >> 32).view(np.float32)          # the second

    @cuda.jit(device=True, inline="always")
    def block_total(v, out):
        partials = cuda.shared.array(MAX_WARPS, float32)
        lane = cuda.threadIdx.x % cuda.warpsize
        warp = cuda.threadIdx.x // cuda.warpsize
        mask = ~uint64(0) >> (64 - cuda.warpsize)      # every lane of the warp, 32 or 64
        offset = cuda.warpsize // 2
        while offset > 0:
            v += cuda.shfl_down_sync(mask, v, offset)
            offset //= 2
        if lane == 0:
            partials[warp] = v
        cuda.syncthreads()
        if warp == 0:
            nwarps = (cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize
            v = partials[lane] if lane < nwarps else float32(0)
            offset = cuda.warpsize // 2
            while offset > 0:
                v += cuda.shfl_down_sync(mask, v, offset)
                offset //= 2
            if lane == 0:
                cuda.atomic.add(out, 0, v)
    return low, high, block_total


@_kernels.lazy
def reference_sum():
    """The course's fastest clean sum: each thread reads the float32 data as 8-byte pairs
    (uint64 loads: half the load instructions), four pairs in flight per loop pass into four
    accumulators, unsigned indices (no negative-index wraparound code); then shuffles, the warps'
    partial sums through shared memory, and one atomic per block. Wants the speed launch
    (:func:`speed_shape`: 256 threads, 4 blocks per SM), and ``x`` aligned to 8 bytes (every array
    from ``cuda.to_device`` or ``cuda.device_array`` is; a view starting at an odd element is
    not)."""
    low, high, block_total = _pieces()

    @cuda.jit
    def reduce_sum_reference(x, out):
        n = x.size
        npairs = n // 2
        pairs = x[:2 * npairs].view(np.uint64)
        stride = uint64(cuda.gridsize(1))
        stride2 = stride + stride
        stride3 = stride2 + stride
        stride4 = stride2 + stride2
        i = uint64(cuda.grid(1))
        end = uint64(npairs)
        a0 = float32(0)
        a1 = float32(0)
        a2 = float32(0)
        a3 = float32(0)
        while i + stride3 < end:                         # four 8-byte loads in flight
            p0 = pairs[i]
            p1 = pairs[i + stride]
            p2 = pairs[i + stride2]
            p3 = pairs[i + stride3]
            a0 += low(p0) + high(p0)
            a1 += low(p1) + high(p1)
            a2 += low(p2) + high(p2)
            a3 += low(p3) + high(p3)
            i += stride4
        while i < end:
            p = pairs[i]
            a0 += low(p) + high(p)
            i += stride
        if cuda.grid(1) == 0 and n % 2 == 1:
            a1 += x[n - 1]                               # the odd last element
        v = (a0 + a1) + (a2 + a3)
        block_total(v, out)
    return reduce_sum_reference


def cupy_sum():
    """For `aag bench`: CuPy's sum (CUB's device-wide reduction) into ``out``."""
    import cupy as cp

    def run(inputs, outputs):
        out = cp.asarray(outputs["out"])
        out[...] = cp.sum(cp.asarray(inputs["x"]))
    return run


class OwnGrid:
    """A kernel that picks its own grid from the data: ``OwnGrid(kernel, grid)[blocks, threads]``
    launches ``kernel[grid(n, threads)..., threads]`` whatever ``blocks`` it is given (so a
    segment-per-block kernel can be timed with a grid-stride problem's launch)."""

    def __init__(self, kernel, grid, threads: int | None = None):
        self.kernel, self.grid, self.threads = kernel, grid, threads

    def __getitem__(self, config):
        _blocks, threads = config
        threads = self.threads or threads

        def launch(x, out):
            self.kernel[self.grid(x.size, threads), threads](x, out)
        return launch


def segment_kernel(kind: str):
    """The shared-memory trees of PMPP §10.3-10.8, one segment of 2·blockDim.x (or 2·COARSE·
    blockDim.x) elements per block, one atomic per block. ``kind``: "divergent" (interleaved,
    thread t owns slot 2·t·stride... PMPP's first kernel), "strided" (interleaved with the active
    threads packed together: no divergence, bank conflicts), "convergent" (PMPP §10.4),
    "coarsened" (PMPP §10.8, convergent)."""
    def make():
        coarse = COARSE if kind == "coarsened" else 1
        divergent, strided = kind == "divergent", kind == "strided"    # compile-time constants

        @cuda.jit
        def segment_sum(x, out):
            s = cuda.shared.array(2 * 1024, float32)
            t = cuda.threadIdx.x
            T = cuda.blockDim.x
            start = 2 * coarse * T * cuda.blockIdx.x
            if divergent or strided:
                # 2T values into shared memory, no addition during the load
                a = start + t
                s[t] = x[a] if a < x.size else float32(0)
                s[t + T] = x[a + T] if a + T < x.size else float32(0)
                cuda.syncthreads()
                stride = 1
                while stride <= T:
                    if divergent:
                        if t % stride == 0:                  # thread t owns slot 2t
                            s[2 * t] += s[2 * t + stride]
                    else:
                        slot = 2 * stride * t                # the active threads packed together
                        if slot < 2 * T:
                            s[slot] += s[slot + stride]
                    cuda.syncthreads()
                    stride *= 2
            else:
                acc = float32(0)
                for k in range(2 * coarse):
                    a = start + k * T + t
                    if a < x.size:
                        acc += x[a]
                s[t] = acc
                cuda.syncthreads()
                stride = T // 2
                while stride >= 1:
                    if t < stride:
                        s[t] += s[t + stride]
                    cuda.syncthreads()
                    stride //= 2
            if t == 0:
                cuda.atomic.add(out, 0, s[0])
        return segment_sum
    return _kernels.get("segment-" + kind, make)


def segment_grid(coarse: int = 1):
    return lambda n, threads: max(1, -(-int(n) // (2 * coarse * int(threads))))


def book_kernel(kind: str):
    """One of the book's steps, launched with its own grid (see :class:`OwnGrid`)."""
    coarse = COARSE if kind == "coarsened" else 1
    return OwnGrid(segment_kernel(kind), segment_grid(coarse))


@_kernels.lazy
def plain_grid_stride():
    """The textbook grid-stride sum: one accumulator, one float per load, shuffles, one atomic per
    block (what a learner writes first)."""
    block_total = _pieces()[2]

    @cuda.jit
    def reduce_sum_plain(x, out):
        acc = float32(0)
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            acc += x[i]
        block_total(acc, out)
    return reduce_sum_plain


@_kernels.lazy
def four_in_flight():
    """The grid-stride sum with four float32 loads in flight per pass into four accumulators
    (the chapter's advice, without the 8-byte loads of the reference)."""
    block_total = _pieces()[2]

    @cuda.jit
    def reduce_sum_four(x, out):
        n = x.size
        stride = cuda.gridsize(1)
        i = cuda.grid(1)
        a0 = float32(0)
        a1 = float32(0)
        a2 = float32(0)
        a3 = float32(0)
        while i + 3 * stride < n:
            a0 += x[i]
            a1 += x[i + stride]
            a2 += x[i + 2 * stride]
            a3 += x[i + 3 * stride]
            i += 4 * stride
        while i < n:
            a0 += x[i]
            i += stride
        v = (a0 + a1) + (a2 + a3)
        block_total(v, out)
    return reduce_sum_four


def in_flight(pairs: int, per_sm: int = 0, pipelined: bool = False):
    """The reference's loop with ``pairs`` 8-byte loads per thread and pass (the reference: 4, 32
    bytes; ``pairs=4`` is the reference itself), into as many accumulators; with ``per_sm``, on
    a grid of that many blocks of 256 threads per SM instead of the speed launch's 4
    (:class:`OwnGrid`); ``pipelined``: each pass issues its loads, then adds the pairs the
    previous pass loaded.

    What it tests: CUB's sum (``cuda.compute``) ran 5% faster than the reference on the H200
    (0.238 against 0.252 ms at 2^28), and the reference's four loads per pass are not in flight
    together. The compiler places each load next to the adds that use it, so in the reference's
    loop (SASS for sm_90, compiled without a GPU; ``visual.code.loads_in_flight``) a warp waits
    four times per pass with one or two loads outstanding, and with 8 pairs per pass with three
    at most. Pipelined, a pass's own loads stay in flight across the loop's branch back, and the
    loop's first wait has 8 loads outstanding. More threads are the other way to more bytes in
    flight: 6 blocks per SM (as many as fit at 33 to 40 registers per thread; compiled without a
    GPU the reference takes 36 and the pipelined loop of 4 pairs 40, on the H200 30 and 34)
    where the speed launch has 4. Measured on the H200 ("Issue 23, fourth run" in
    docs/benchmarks.md): none of these rows is faster than the reference; both it and CUB are
    bound by DRAM (92% and 95% of its peak), CUB with half the load requests (16-byte loads)."""
    def make():
        low, high, block_total = _pieces()
        K = pairs
        PIPELINED = pipelined                # a compile-time constant

        @cuda.jit(device=True, inline="always")
        def load_pass(xp, i, stride, into):
            for k in range(K):
                into[k] = xp[i + stride * uint64(k)]

        @cuda.jit(device=True, inline="always")
        def add_pass(acc, got):
            for k in range(K):
                acc[k] += low(got[k]) + high(got[k])

        @cuda.jit
        def reduce_sum_in_flight(x, out):
            n = x.size
            npairs = n // 2
            xp = x[:2 * npairs].view(np.uint64)
            stride = uint64(cuda.gridsize(1))
            step = stride * uint64(K)
            last = step - stride                 # a pass reads i, i + stride, ..., i + last
            i = uint64(cuda.grid(1))
            end = uint64(npairs)
            acc = cuda.local.array(K, float32)
            got = cuda.local.array(K, uint64)
            ahead = cuda.local.array(K, uint64)
            for k in range(K):
                acc[k] = float32(0)
            if PIPELINED:
                # Two sets of registers in turn (no copies between them): a pass loads into one
                # set, then adds the other, which the previous pass loaded.
                if i + last < end:
                    load_pass(xp, i, stride, got)
                    i += step
                    while True:
                        if i + last >= end:
                            add_pass(acc, got)
                            break
                        load_pass(xp, i, stride, ahead)
                        add_pass(acc, got)
                        i += step
                        if i + last >= end:
                            add_pass(acc, ahead)
                            break
                        load_pass(xp, i, stride, got)
                        add_pass(acc, ahead)
                        i += step
            else:
                while i + last < end:
                    load_pass(xp, i, stride, got)
                    add_pass(acc, got)
                    i += step
            while i < end:
                u = xp[i]
                acc[0] += low(u) + high(u)
                i += stride
            if cuda.grid(1) == 0 and n % 2 == 1:
                acc[K - 1] += x[n - 1]                   # the odd last element
            v = float32(0)
            for k in range(K):
                v += acc[k]
            block_total(v, out)
        return reduce_sum_in_flight
    if pairs == 4 and not pipelined:
        kernel = reference_sum()
    else:
        kernel = _kernels.get(f"in_flight_{pairs}{'_pipelined' * pipelined}", make)
    if not per_sm:
        return kernel

    def grid(n, threads):
        from autograder.machine import device
        if device.current().is_gpu:
            return speed_shape(n, per_sm)[0]
        return max(1, min(4, -(-int(n) // threads)))   # CPU mode: a few blocks, to be checked
    return OwnGrid(kernel, grid, 256)


# ---- the speed test's launch, and the sum for code outside the exercises ---------------------

SPEED_BLOCKS_PER_SM = 4     # of 256 threads: half of an H100/H200 SM's 2048 threads


def speed_shape(n: int, per_sm: int = SPEED_BLOCKS_PER_SM) -> tuple[int, int]:
    """(blocks, threads) for the speed test: 256 threads, ``SPEED_BLOCKS_PER_SM`` blocks per SM
    (4: every block is resident at once even for kernels of up to 64 registers per thread, so no
    block waits for a second wave), never more blocks than the data needs. ``per_sm``: another
    number of blocks per SM."""
    from numba import cuda as numba_cuda
    sms = numba_cuda.get_current_device().MULTIPROCESSOR_COUNT
    return max(1, min(sms * per_sm, -(-int(n) // 256))), 256


_sums = BoundLaunches()


def sum_on_device(x, out):
    """``out[0]`` = the sum of ``x`` (float32, on the device) with the course's reference: ``out``
    zeroed by one driver call, then one launch, bound once per pair of arrays
    (:class:`autograder.machine.launch.BoundLaunches`). For code outside the exercises (``aag
    bench`` times it end to end)."""
    from autograder.machine import device
    zero_words(out)
    _sums.launch(reference_sum(),
                 lambda: speed_shape(x.shape[0]) if device.current().is_gpu else (2, 64), x, out)
    return out
