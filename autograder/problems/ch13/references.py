"""Chapter 13's kernels of the course: one radix pass (the local sort of a tile with its digit
counts, and the scatter), the exclusive scan of the count table, the whole radix sort of
key-value pairs (the speed test's reference), a merge sort built on chapter 12's co-rank, and the
vendors' sorts (CuPy's, and ``cuda.compute``'s from the cuda-cccl package where it is installed).

Every kernel here takes 32-bit unsigned keys and values; counts and offsets are int32."""

from __future__ import annotations

import numpy as np

from autograder.machine import device
from autograder.problems.kit.kernels import KernelCache

cuda = uint32 = int32 = None    # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "uint32", "int32")

RADIX_BITS = 4                  # bits of the key per pass: 8 passes over a 32-bit key
DIGITS = 1 << RADIX_BITS        # 16 digit values, 16 counters per tile
KEY_BITS = 32
MAX_THREADS = 256               # the largest block the kernels' shared arrays are sized for


def _cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))


def scan_threads() -> int:
    """Threads per block of the course's count-table scan: 256 on a GPU (sections of 1024
    counts), 32 in CPU mode (the simulator pays for every thread it starts)."""
    return 256 if device.current().is_gpu else 32


# ---- one radix pass ------------------------------------------------------------------------------

@_kernels.lazy
def _radix_kernels() -> dict:
    """Compile the course's radix-pass kernels once for this backend."""
    M = MAX_THREADS
    D = DIGITS
    MASK = DIGITS - 1

    @cuda.jit
    def radix_local_sort_reference(keys, values, shift, tile_keys, tile_values, counts):
        # One key per thread. Each thread ranks its key in the tile: the keys of a smaller digit,
        # and the keys of its digit that come before it (stable); then writes it at that rank.
        sd = cuda.shared.array(M, int32)
        t, T = cuda.threadIdx.x, cuda.blockDim.x
        b, nb = cuda.blockIdx.x, cuda.gridDim.x
        start = b * T
        valid = min(T, keys.size - start)
        d = -1
        k = uint32(0)
        if t < valid:
            k = keys[start + t]
            d = (k >> shift) & MASK
            sd[t] = d
        cuda.syncthreads()
        if t < valid:
            rank = 0
            for j in range(valid):
                dj = sd[j]
                if dj < d or (dj == d and j < t):
                    rank += 1
            tile_keys[start + rank] = k
            tile_values[start + rank] = values[start + t]
        for digit in range(t, D, T):     # thread t counts digit t (and t + T, ...)
            c = 0
            for j in range(valid):
                if sd[j] == digit:
                    c += 1
            counts[digit * nb + b] = c

    @cuda.jit
    def radix_scatter_reference(tile_keys, tile_values, shift, counts, offsets, out_keys,
                                out_values):
        first = cuda.shared.array(D, int32)
        t, T = cuda.threadIdx.x, cuda.blockDim.x
        b, nb = cuda.blockIdx.x, cuda.gridDim.x
        if t == 0:                       # where each digit's keys start in this tile
            run = 0
            for d in range(D):
                first[d] = run
                run += counts[d * nb + b]
        cuda.syncthreads()
        i = b * T + t
        if i < tile_keys.size:
            k = tile_keys[i]
            d = (k >> shift) & MASK
            dest = offsets[d * nb + b] + t - first[d]
            out_keys[dest] = k
            out_values[dest] = tile_values[i]

    return dict(local_sort=radix_local_sort_reference, scatter=radix_scatter_reference)


def reference_local_sort():
    """Exercise 13.1 written by the course: one key per thread; the tile's digits in shared
    memory, each thread's rank found by counting the smaller digits and the equal digits before
    it (stable), thread t counting digits t, t + T, …; the table digit-major (``counts[d · blocks +
    b]``). One barrier: the cheapest local sort for the CUDA simulator, O(tile) work per key."""
    return _radix_kernels()["local_sort"]


def reference_scatter():
    """Exercise 13.2 written by the course: thread 0 finds where each digit starts in the tile,
    then every thread writes its key to ``offsets[d · blocks + b]`` plus its rank among the
    tile's keys of digit d."""
    return _radix_kernels()["scatter"]


# ---- the exclusive scan of the count table (int32, any length) -----------------------------------

PER_THREAD = 4


@_kernels.lazy
def _scan_kernels() -> dict:
    M = MAX_THREADS
    C = PER_THREAD
    SECTION = MAX_THREADS * PER_THREAD

    @cuda.jit
    def scan_sections(x, y, sums):
        # Each block: an exclusive scan of its section of C·blockDim counts, and their total.
        tile = cuda.shared.array(SECTION, int32)
        part = cuda.shared.array((2, M), int32)
        t, T = cuda.threadIdx.x, cuda.blockDim.x
        start = cuda.blockIdx.x * C * T
        for q in range(C):
            j = q * T + t
            tile[j] = x[start + j] if start + j < x.size else 0
        cuda.syncthreads()
        running = 0
        for q in range(C):
            j = t * C + q
            value = tile[j]
            tile[j] = running
            running += value
        part[0, t] = running
        cuda.syncthreads()
        src = 0
        stride = 1
        while stride < T:
            if t >= stride:
                part[1 - src, t] = part[src, t] + part[src, t - stride]
            else:
                part[1 - src, t] = part[src, t]
            cuda.syncthreads()
            src = 1 - src
            stride *= 2
        before = part[src, t] - running
        for q in range(C):
            tile[t * C + q] += before
        cuda.syncthreads()
        for q in range(C):
            j = q * T + t
            if start + j < y.size:
                y[start + j] = tile[j]
        if t == T - 1:
            sums[cuda.blockIdx.x] = part[src, t]

    @cuda.jit
    def add_carries(y, carries):
        b = cuda.blockIdx.x
        T = cuda.blockDim.x
        carry = carries[b]
        for q in range(C):
            i = b * C * T + q * T + cuda.threadIdx.x
            if i < y.size:
                y[i] += carry

    @cuda.jit
    def scan_serial(x, y):
        # CPU mode: the count tables of the checks hold a few hundred counts; one thread scans
        # them (the simulator pays for every thread and barrier).
        run = 0
        for i in range(x.size):
            y[i] = run
            run += x[i]

    # The chapter hands the learner this scan (chapter 11 had them write it): a call of Exercise
    # 13.3 may launch it beside the learner's own kernels. It scans int32 tables and computes no
    # part of a sort by itself, so it is marked as a helper, not counted as a foreign kernel.
    from autograder.grading import provenance
    for kernel in (scan_sections, add_carries, scan_serial):
        provenance.course_helper(kernel)
    return dict(sections=scan_sections, carries=add_carries, serial=scan_serial)


def exclusive_scan(counts, offsets, threads: int | None = None, _level: int = 0) -> None:
    """``offsets[i] = counts[0] + … + counts[i − 1]`` (``offsets[0] = 0``), on the device, for
    int32 device arrays of any length: each block scans a section of ``4 · threads`` counts, the
    sections' totals are scanned the same way, and each section adds the total of those before
    it (chapter 11's hierarchical scan, exclusive and in integers). In CPU mode, unless
    ``threads`` is given, one thread scans the table (a check's tables are small)."""
    from numba import cuda as numba_cuda
    kernels = _scan_kernels()
    n = counts.size
    if n == 0:
        return
    if not device.current().is_gpu and threads is None:
        kernels["serial"][1, 1](counts, offsets)
        return
    threads = threads or scan_threads()
    blocks = _cdiv(n, PER_THREAD * threads)
    sums = numba_cuda.device_array(blocks, np.int32)
    kernels["sections"][blocks, threads](counts, offsets, sums)
    if blocks > 1:
        carries = numba_cuda.device_array(blocks, np.int32)
        exclusive_scan(sums, carries, threads, _level + 1)
        kernels["carries"][blocks, threads](offsets, carries)


# ---- the whole sort ------------------------------------------------------------------------------

def radix_sort_with(local_sort, scatter, keys, values, out_keys, out_values, threads: int) -> None:
    """LSD radix sort of (keys, values) into (out_keys, out_values) with a pair of pass kernels:
    per pass, the local sort of every tile into a scratch pair, the exclusive scan of the count
    table, the scatter into the outputs (which are the next pass's input)."""
    from numba import cuda as numba_cuda
    n = keys.size
    if n == 0:
        return
    blocks = _cdiv(n, threads)
    tile_keys = numba_cuda.device_array(n, np.uint32)
    tile_values = numba_cuda.device_array(n, np.uint32)
    counts = numba_cuda.device_array(DIGITS * blocks, np.int32)
    offsets = numba_cuda.device_array(DIGITS * blocks, np.int32)
    src_keys, src_values = keys, values
    for shift in range(0, KEY_BITS, RADIX_BITS):
        local_sort[blocks, threads](src_keys, src_values, shift, tile_keys, tile_values, counts)
        exclusive_scan(counts, offsets)
        scatter[blocks, threads](tile_keys, tile_values, shift, counts, offsets, out_keys,
                                 out_values)
        src_keys, src_values = out_keys, out_values


class CourseRadixSort:
    """The course's radix sort as a submission of Exercise 13.3 (a function of the course's
    code): ``sort(keys, values, out_keys, out_values, threads)``."""

    def __call__(self, keys, values, out_keys, out_values, threads):
        radix_sort_with(reference_local_sort(), reference_scatter(), keys, values, out_keys,
                        out_values, threads)


def reference_radix_sort():
    """The whole radix sort of key-value pairs with the course's pass kernels (the speed test's
    reference): 8 passes of 4 bits, blocks of ``threads`` threads, one key per thread."""
    return CourseRadixSort()


# ---- merge sort: chapter 12's co-rank, runs doubling in length -----------------------------------

@_kernels.lazy
def _merge_sort_kernels() -> dict:

    @cuda.jit(device=True)
    def co_rank(k, A, a0, m, B, b0, n):
        # how many of the first k keys of the stable merge of A[a0:a0+m] and B[b0:b0+n] are A's
        lo = max(0, k - n)
        hi = min(k, m)
        while lo < hi:
            i = (lo + hi) // 2
            if A[a0 + i] <= B[b0 + k - i - 1]:
                lo = i + 1
            else:
                hi = i
        return lo

    @cuda.jit
    def merge_pass(keys, values, out_keys, out_values, width, per):
        # Each thread `per` outputs of the pass; a pair of runs [lo, lo+width) and
        # [lo+width, lo+2·width) is merged into out[lo : lo + 2·width] (PMPP §13.7).
        n = keys.size
        k0 = cuda.grid(1) * per
        k = k0
        end = min(k0 + per, n)
        while k < end:
            lo = (k // (2 * width)) * (2 * width)       # the pair of runs output k belongs to
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            stop = min(end, hi)
            m = mid - lo
            nn = hi - mid
            i = co_rank(k - lo, keys, lo, m, keys, mid, nn)
            i_end = co_rank(stop - lo, keys, lo, m, keys, mid, nn)
            j = k - lo - i
            j_end = stop - lo - i_end
            while k < stop:
                if j >= j_end or (i < i_end and keys[lo + i] <= keys[mid + j]):
                    out_keys[k] = keys[lo + i]
                    out_values[k] = values[lo + i]
                    i += 1
                else:
                    out_keys[k] = keys[mid + j]
                    out_values[k] = values[mid + j]
                    j += 1
                k += 1

    return dict(merge_pass=merge_pass)


def merge_pass_kernel():
    """The course's merge pass of a merge sort: runs of ``width`` keys merged in pairs into runs
    of ``2 · width``, each thread a fixed number of outputs found with co-rank (chapter 12)."""
    return _merge_sort_kernels()["merge_pass"]


def merge_sort(keys, values, out_keys, out_values, threads: int = 256, per: int = 8) -> int:
    """A stable merge sort of (keys, values) on the device: runs of 1 merged into runs of 2, 4, …
    (``ceil(log2 n)`` passes, each merging all n keys), ping-ponging between the outputs and a
    scratch pair so that the last pass writes the outputs. Returns the number of passes."""
    from numba import cuda as numba_cuda
    n = keys.size
    passes = max(0, int(n - 1).bit_length()) if n > 1 else 0
    kernel = merge_pass_kernel()
    blocks = max(1, _cdiv(n, threads * per))
    scratch = (numba_cuda.device_array(n, np.uint32), numba_cuda.device_array(n, np.uint32))
    # Choose the first destination so that the last of `passes` passes lands in the outputs.
    buffers = [(out_keys, out_values), scratch]
    src = (keys, values)
    width = 1
    for p in range(passes):
        dst = buffers[(passes - 1 - p) % 2]
        kernel[blocks, threads](src[0], src[1], dst[0], dst[1], width, per)
        src = dst
        width *= 2
    if passes == 0 and n:
        out_keys.copy_to_device(keys)
        out_values.copy_to_device(values)
    return passes


# ---- the vendors ---------------------------------------------------------------------------------

def cupy_sort():
    """For `aag bench`: CuPy's sort of the keys (CUB's radix sort; keys only, no values)."""
    import cupy as cp

    def run(inputs, outputs):
        cp.asarray(outputs["out_keys"])[...] = cp.sort(cp.asarray(inputs["keys"]))
    return run
