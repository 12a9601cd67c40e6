"""Chapter 11 (PMPP ch. 11, Prefix sum (scan)): an inclusive scan of float32 values, first one
section per block (Kogge-Stone, then Brent-Kung), then for any length (a coarsened three-phase
section scan, a scan of the section sums, and the carries added: three kernels), then in a single
pass with decoupled look-back; and a prediction of the bytes a hierarchical scan moves.

The exercises and how the checks launch them (``T`` is the block size, ``cuda.blockDim.x``):

- 11.1 ``kogge_stone``: ``kernel[ceil(n / T), T](x, y)``. Block ``b`` scans its *section*
  ``x[b·T : (b + 1)·T]`` into ``y``: ``y[i] = x[b·T] + ... + x[i]``. Sections are independent (the
  carry from earlier sections comes later in the chapter).
- 11.2 ``brent_kung``: ``kernel[ceil(n / 2T), T](x, y)``, sections of ``2T`` elements.
- 11.3 ``scan_traffic``: a Python function, the bytes a hierarchical scan moves.
- 11.4 ``scan_hierarchical``: a pair of kernels ``(scan_sections_kernel, add_carries_kernel)``,
  launched by :func:`scan_any_length` (PMPP §11.6): sections of ``S = COARSEN·T`` elements are
  scanned and their totals written to ``sums``; the sums are scanned (recursively, the same way,
  into ``carries``); ``add_carries_kernel`` adds ``carries[b - 1]`` to every element of section
  ``b ≥ 1``.
- 11.5 ``scan_single_pass``: ``kernel[ceil(n / S), T](x, y, aggregates, prefixes, counter)``,
  launched by :func:`single_pass_scan` (PMPP §11.7, Merrill and Garland's decoupled look-back).
  ``aggregates`` and ``prefixes`` (one float32 per tile) arrive filled with NaN, which means "not
  published yet"; a number there is both the value and its flag, so one plain store publishes
  it. ``counter`` (one int32) arrives as 0: each block takes its tile index from it with
  ``cuda.atomic.add(counter, 0, 1)``, and the check verifies that every block did.

Inputs: ``x = s·(3 + 2·N(0, 1))`` in float32, with a random scale ``s = 10^U(-2, 2)``: a mean
of 3s (partial sums grow with the index), about 7% negative values (sums also cancel a little).
Lengths are not multiples of the block or section, and include 1 and lengths below one section.

**The error bound.** Every correct scan computes ``y_i`` as fp32 additions of ``x_0 .. x_i``,
each used once on the way to ``y_i``: ``y_i`` is the root of a binary tree of additions whose
leaves are ``x_0 .. x_i`` (partial sums that several outputs share, like a Kogge-Stone step's or
a section total, are subtrees of each of those outputs' trees). Each addition rounds, ``fl(a + b)
= (a + b)(1 + δ)`` with ``|δ| ≤ u = 2^-24``, so ``ŷ_i = Σ_j x_j Π(1 + δ)`` over the additions on
the path from ``x_j`` up to ``y_i``, and

    |ŷ_i - y_i| ≤ γ_c · Σ_{j ≤ i} |x_j|,   γ_c = c·u / (1 - c·u),

with ``c`` the largest number of additions on any such path (Higham, *Accuracy and Stability of
Numerical Algorithms*, §4.2). Adding an exact zero (the padding past the end of the array, or a
running sum started at 0) rounds nothing and does not count. Along a path, each addition joins
the partial sum so far with a disjoint, nonempty set of terms, so a sum of ``m`` terms has
``c ≤ m - 1`` **in any order**. The checks use, for output ``i``:

- sections (11.1, 11.2): ``c = p``, ``p`` = the position of ``i`` in its section (``p + 1``
  terms). Kogge-Stone needs ``⌈log2(p + 1)⌉``, Brent-Kung at most ``2·log2 S - 1``, a sequential
  loop ``p``: all pass. The first element of a section is a copy and must be exact.
- whole arrays (11.4, 11.5), sections (tiles) of ``S = COARSEN·T``:
  ``c = 2·COARSEN + 2·⌈log2 T⌉ + 2 + ⌊i / S⌋``:
  ``2·COARSEN`` for a thread's elements added in sequence, possibly twice (once for the thread's
  total, once again starting from the thread's prefix); ``2·⌈log2 T⌉`` for the scan of the ``T``
  thread totals (Brent-Kung's up- and down-sweep are the deepest tree scans; Kogge-Stone and a
  warp-shuffle scan are shallower); ``2`` for adding the thread's prefix and the carry;
  ``⌊i / S⌋`` for the chain of carries: the carry of tile ``k`` adds up the ``k`` earlier tiles'
  totals, at most ``k - 1`` additions in any order: a hierarchical scan's recursive scan of the
  sums, a look-back that adds earlier aggregates one at a time, or a chained scan that waits for
  its predecessor's prefix (one addition per tile).

This is not a blanket relative tolerance: where one term is large against the sum so far (the
first elements), a value off by one element (an exclusive scan, ``y[i] = y[i-1]``) is off by
``|x_i|``, hundreds of times the bound; a missing carry is off by the sum of whole sections,
``1 / (c·u)`` (over 10^4) times the bound. ``tests/test_ch11.py`` measures both.
"""

from __future__ import annotations

import math
import os
import weakref

import numpy as np

from autograder.machine import device
from autograder.core.checks import GENERIC_VALUE_HINT, TINY32, Verdict, _fmt, compare, gamma
from autograder.grading.problem import CHECK_TIMEOUT_ENV, Baseline, Problem, SpeedBar, Sizes
from autograder.problems.common import cores

MAX_THREADS = 256           # the largest block the checks launch: shared arrays are sized by it
COARSEN = 16                # elements per thread in 11.4 and 11.5: a tile is COARSEN·T elements
SPEED_THREADS = 256         # the speed tests' block: tiles of 4096 elements
SPEED_N = 1 << 28           # 2^28 float32 = 1 GiB in, 1 GiB out
U64 = 2.0 ** -53


def _cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))


# ---- inputs --------------------------------------------------------------------------------------

def scan_inputs(n: int, seed=0) -> np.ndarray:
    """n float32 values ``s·(3 + 2·N(0, 1))`` with a random scale ``s = 10^U(-2, 2)``: mean 3s,
    about 7% negative."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-2, 2)
    return (scale * (3.0 + 2.0 * rng.standard_normal(int(n)))).astype(np.float32)


def _inputs(rng, n):
    return {"x": scan_inputs(n, rng)}


def _speed_inputs(rng, n):
    x = rng.standard_normal(int(n), dtype=np.float32)
    x *= np.float32(2)
    x += np.float32(3)
    return {"x": x}


# ---- the spec, in float64 --------------------------------------------------------------------------

def inclusive_scan(x) -> np.ndarray:
    """y_i = x_0 + ... + x_i in float64."""
    return np.cumsum(np.asarray(x, dtype=np.float64))


def section_scan(x, section: int) -> np.ndarray:
    """The inclusive scan of each section of ``section`` elements on its own, in float64."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    pad = _cdiv(max(n, 1), section) * section - n
    rows = np.concatenate([x, np.zeros(pad)]).reshape(-1, section)
    return np.cumsum(rows, axis=1).reshape(-1)[:n]


def section_totals(x, section: int) -> np.ndarray:
    """The sum of each section of ``section`` elements, in float64."""
    x = np.asarray(x, dtype=np.float64)
    pad = _cdiv(max(x.size, 1), section) * section - x.size
    return np.concatenate([x, np.zeros(pad)]).reshape(-1, section).sum(axis=1)


def chain_bound(idx, section: int, threads: int) -> np.ndarray:
    """c at outputs ``idx`` of a whole-array scan with tiles of ``section = COARSEN·threads``
    elements (see the module docstring)."""
    idx = np.asarray(idx, dtype=np.int64)
    log_t = max(int(math.ceil(math.log2(max(int(threads), 1)))), 0)
    return 2 * COARSEN + 2 * log_t + 2 + idx // int(section)


def section_tolerance(x, section: int) -> np.ndarray:
    """γ_p · Σ |x_j| over the section up to i, p = the position of i in its section."""
    mag = section_scan(np.abs(np.asarray(x, dtype=np.float64)), section)
    p = np.arange(mag.size) % int(section)
    return gamma(p) * mag + TINY32


def whole_tolerance(x, threads: int) -> np.ndarray:
    """γ_c · Σ_{j ≤ i} |x_j| with c from :func:`chain_bound`, tiles of COARSEN·threads."""
    x = np.asarray(x, dtype=np.float64)
    mag = np.cumsum(np.abs(x))
    c = chain_bound(np.arange(x.size), COARSEN * int(threads), threads)
    return gamma(c) * mag + TINY32


def _section_spec(per_thread):
    def spec(x, blocks=0, threads=0, **launch):
        return {"y": section_scan(x, per_thread * int(threads))}
    return spec


def _whole_spec(x, **launch):
    return {"y": inclusive_scan(x)}


def _outputs(n):
    return {"y": ((int(n),), np.float32)}


# Expected values and tolerances at sampled indices of a chip-sized input (the speed tests check
# 4096 samples after every timed call): float64 sums of chunks of 1024 elements, kept per input
# array, then each sample's own chunk summed up to it.
_CHUNK = 1024
_chunk_cache: dict = {}


def _chunk_prefix(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    key = id(x)
    hit = _chunk_cache.get(key)
    if hit is not None and hit[0]() is x:
        return hit[1], hit[2]
    n = x.size
    chunks = _cdiv(max(n, 1), _CHUNK)
    sums = np.zeros(chunks)
    mags = np.zeros(chunks)
    step = _CHUNK << 14
    for start in range(0, n, step):
        part = x[start:start + step].astype(np.float64)
        pad = _cdiv(part.size, _CHUNK) * _CHUNK - part.size
        rows = np.concatenate([part, np.zeros(pad)]).reshape(-1, _CHUNK)
        c0 = start // _CHUNK
        sums[c0:c0 + rows.shape[0]] = rows.sum(axis=1)
        mags[c0:c0 + rows.shape[0]] = np.abs(rows).sum(axis=1)
    pre = np.concatenate([[0.0], np.cumsum(sums)])
    pre_mag = np.concatenate([[0.0], np.cumsum(mags)])
    if len(_chunk_cache) > 3:
        _chunk_cache.clear()
    _chunk_cache[key] = (weakref.ref(x), pre, pre_mag)
    return pre, pre_mag


def sampled_scan(x: np.ndarray, idx, section: int | None = None):
    """(expected, Σ|x| so far) in float64 at indices ``idx`` of the whole-array scan of ``x``, or
    of its scan by sections of ``section`` elements."""
    x = np.asarray(x)
    idx = np.asarray(idx, dtype=np.int64)
    unit = section or _CHUNK
    first = (idx // unit) * unit
    width = int((idx - first).max()) + 1 if idx.size else 1
    cols = first[:, None] + np.arange(width)[None, :]
    inside = cols <= idx[:, None]
    vals = np.where(inside, x[np.minimum(cols, x.size - 1)].astype(np.float64), 0.0)
    within = vals.sum(axis=1)
    within_mag = np.abs(vals).sum(axis=1)
    if section:
        return within, within_mag
    pre, pre_mag = _chunk_prefix(x)
    c = idx // _CHUNK
    return pre[c] + within, pre_mag[c] + within_mag


def _whole_sample(inputs, idx):
    exp, mag = sampled_scan(inputs["x"], idx)
    tol = gamma(chain_bound(idx, COARSEN * SPEED_THREADS, SPEED_THREADS)) * mag + TINY32
    return {"y": exp}, {"y": tol}


# ---- launches ---------------------------------------------------------------------------------------

cuda = None   # numba.cuda, imported on first use; a module global, as the simulator needs
_kernels: dict = {}
_scratch: dict = {}
_state = {"checking": False}     # True while a correctness check runs (not a timed call)


def _cuda():
    global cuda
    if cuda is None:
        from numba import cuda as numba_cuda
        cuda = numba_cuda
    return cuda


def _fill_kernel():
    if "fill" not in _kernels:
        _cuda()

        @cuda.jit
        def fill(out, value):
            for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
                out[i] = value
        _kernels["fill"] = fill
    return _kernels["fill"]


def scratch(role: str, size: int, dtype, value):
    """A device array of ``size`` elements set to ``value`` (NaN: "not written yet"). On a GPU
    the arrays are kept between calls (allocating takes longer than a small scan) and filled by
    a small kernel; in CPU mode a fresh array is made each time."""
    _cuda()
    dtype = np.dtype(dtype)
    if not device.current().is_gpu:
        return cuda.to_device(np.full(int(size), value, dtype))
    context = cuda.current_context()
    if _scratch.get("context") is not context or len(_scratch) > 32:
        _scratch.clear()              # a new CUDA context: the old arrays are gone with it
        _scratch["context"] = context
    key = (role, int(size), dtype.str)
    array = _scratch.get(key)
    if array is None:
        array = _scratch[key] = cuda.device_array(int(size), dtype)
    _fill_kernel()[max(1, min(1024, _cdiv(size, 256))), 256](array, dtype.type(value))
    return array


def scan_sections(kernel, x, y, threads: int, per_thread: int = 1) -> None:
    """Launch a section scan as 11.1 (``per_thread = 1``) and 11.2 (``2``) are launched: one
    block of ``threads`` threads per section of ``per_thread·threads`` elements."""
    kernel[_cdiv(max(x.size, 1), per_thread * threads), threads](x, y)


def scan_any_length(kernels, x, y, threads: int, level: int = 0) -> None:
    """The hierarchical scan of PMPP §11.6, as Exercise 11.4 is launched. ``kernels`` is the pair
    ``(scan_sections_kernel, add_carries_kernel)``::

        tile = COARSEN * threads
        blocks = ceil(n / tile)
        sums = an array of `blocks` float32 (NaN until written)
        scan_sections_kernel[blocks, threads](x, y, sums)     # y: each section scanned alone
        if blocks > 1:                                        # sums[b]: section b's total
            carries = an array of `blocks` float32
            scan_any_length(kernels, sums, carries, threads)  # carries = the scan of sums
            add_carries_kernel[blocks, threads](y, carries)   # section b >= 1 adds carries[b-1]

    The recursion scans the sums with the same two kernels, so any length works: 2^28 elements
    in tiles of 4096 make 65,536 sums, then 16, then 1."""
    scan_sections_kernel, add_carries_kernel = kernels
    n = x.size
    tile = COARSEN * int(threads)
    blocks = _cdiv(max(n, 1), tile)
    sums = scratch(f"sums{level}", blocks, np.float32, np.nan)
    scan_sections_kernel[blocks, threads](x, y, sums)
    if blocks > 1:
        carries = scratch(f"carries{level}", blocks, np.float32, np.nan)
        scan_any_length(kernels, sums, carries, threads, level + 1)
        add_carries_kernel[blocks, threads](y, carries)


class TileCounterError(RuntimeError):
    """A single-pass scan's blocks did not each take one tile index from the counter."""


def single_pass_scan(kernel, x, y, threads: int):
    """The single-pass scan, as Exercise 11.5 is launched: ``aggregates`` and ``prefixes`` filled
    with NaN ("not published"), ``counter`` set to 0, then one launch of ``ceil(n / tile)``
    blocks. Returns the counter (device array)."""
    n = x.size
    blocks = _cdiv(max(n, 1), COARSEN * int(threads))
    aggregates = scratch("aggregates", blocks, np.float32, np.nan)
    prefixes = scratch("prefixes", blocks, np.float32, np.nan)
    counter = scratch("counter", 1, np.int32, 0)
    kernel[blocks, threads](x, y, aggregates, prefixes, counter)
    if _state["checking"]:
        taken = int(counter.copy_to_host()[0])
        if taken != blocks:
            raise TileCounterError(
                f"the {blocks} block(s) took {taken} tile index(es) from `counter`; each block must "
                "take exactly one, with `cuda.atomic.add(counter, 0, 1)` in one thread, and scan "
                "the tile it got (not the tile of cuda.blockIdx.x)")
    return counter


def _launch_ks(kernel, inputs, outputs, case):
    scan_sections(kernel, inputs["x"], outputs["y"], case.threads, 1)


def _launch_bk(kernel, inputs, outputs, case):
    scan_sections(kernel, inputs["x"], outputs["y"], case.threads, 2)


def _launch_hierarchical(kernels, inputs, outputs, case):
    scan_any_length(kernels, inputs["x"], outputs["y"], case.threads)


def _launch_single_pass(kernel, inputs, outputs, case):
    single_pass_scan(kernel, inputs["x"], outputs["y"], case.threads)


def _tiles(n, threads):
    return _cdiv(max(int(n), 1), COARSEN * int(threads))


def _speed_shape(n):
    return _tiles(n, SPEED_THREADS), SPEED_THREADS


def _bytes(n):
    return 8 * int(n)          # read x once, write y once


# ---- CPU baselines ------------------------------------------------------------------------------------

def _numpy_scan(x, y):
    np.cumsum(x, out=y)


_jit: dict = {}


def _serial_scan(x, y):
    if "serial" not in _jit:
        import numba

        @numba.njit(cache=False)
        def serial(x, y):
            acc = np.float32(0)
            for i in range(x.size):
                acc += x[i]
                y[i] = acc
        _jit["serial"] = serial
    _jit["serial"](x, y)


def _parallel_scan(x, y):
    """Two passes over chunks, one chunk per core at a time: the chunks' sums, their exclusive
    scan (serial, one value per chunk), then every chunk scanned from its offset."""
    if "parallel" not in _jit:
        import numba

        @numba.njit(parallel=True, cache=False)
        def parallel(x, y):
            n = x.size
            chunks = numba.get_num_threads() * 4
            size = (n + chunks - 1) // chunks
            sums = np.zeros(chunks, np.float32)
            for c in numba.prange(chunks):
                acc = np.float32(0)
                for i in range(c * size, min((c + 1) * size, n)):
                    acc += x[i]
                sums[c] = acc
            offset = np.zeros(chunks, np.float32)
            for c in range(1, chunks):
                offset[c] = offset[c - 1] + sums[c - 1]
            for c in numba.prange(chunks):
                acc = offset[c]
                for i in range(c * size, min((c + 1) * size, n)):
                    acc += x[i]
                    y[i] = acc
        _jit["parallel"] = parallel
    _jit["parallel"](x, y)


BASELINES = {
    "numpy": Baseline("NumPy np.cumsum (1 core)", _numpy_scan),
    "serial": Baseline("numba.njit loop (1 core)", _serial_scan),
    "parallel": Baseline(f"numba.njit parallel, two passes ({cores()} cores)", _parallel_scan),
}


def cupy_cumsum():
    """For `aag bench` and the notebook: CuPy's cumsum into the output."""
    import cupy as cp

    def run(inputs, outputs):
        cp.cumsum(cp.asarray(inputs["x"]), out=cp.asarray(outputs["y"]))
    return run


# ---- the course's reference kernels -------------------------------------------------------------------

_reference: dict = {}


def _compiled(name, make):
    """Compile a reference once. Its code names ``cuda`` as a module global: the CUDA simulator
    swaps only globals named ``cuda`` for its per-launch module (CPU mode)."""
    if name not in _reference:
        _cuda()
        _reference[name] = make()
    return _reference[name]


# Tiles in shared memory are padded with one word every 32 (element j at j + j // 32): a thread
# reading its COARSEN consecutive elements at stride COARSEN would otherwise hit 2 of the 32
# banks (a 16-way conflict); with the padding a warp's 32 reads fall in 32 different banks.
TILE_MAX = COARSEN * MAX_THREADS
TILE_WORDS = TILE_MAX + TILE_MAX // 32


FULL_MASK = 0xFFFFFFFF


def _tile_parts():
    """Device functions the reference kernels share: the padded tile's load and store, phase 1
    (each thread's COARSEN elements in registers), and two block scans of the thread totals."""
    if "parts" in _reference:
        return _reference["parts"]
    from numba import float32

    @cuda.jit(device=True)
    def load_tile(x, tile, start, t, T):
        n = x.size
        if start + COARSEN * T <= n:             # a whole tile: no bounds checks
            for k in range(COARSEN):
                j = k * T + t
                tile[j + (j >> 5)] = x[start + j]
        else:
            for k in range(COARSEN):
                j = k * T + t
                tile[j + (j >> 5)] = x[start + j] if start + j < n else float32(0)

    @cuda.jit(device=True)
    def store_tile(y, tile, start, t, T):
        n = y.size
        if start + COARSEN * T <= n:
            for k in range(COARSEN):
                j = k * T + t
                y[start + j] = tile[j + (j >> 5)]
        else:
            for k in range(COARSEN):
                j = k * T + t
                if start + j < n:
                    y[start + j] = tile[j + (j >> 5)]

    @cuda.jit(device=True)
    def block_scan_shared(running, part, warp_totals, t, T):
        """Kogge-Stone over the T thread totals, double-buffered in shared memory (one barrier
        per step). Returns (the sum of the totals of threads before t, the block's total)."""
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
        before = part[src, t - 1] if t > 0 else float32(0)
        return before, part[src, T - 1]

    @cuda.jit(device=True)
    def block_scan_shuffle(running, part, warp_totals, t, T):
        """The same with warp shuffles (chapter 10): a Kogge-Stone of 5 shuffle steps in each
        warp, the warps' totals scanned by warp 0, two barriers in all. T a multiple of 32."""
        lane = t & 31
        w = t >> 5
        v = running
        d = 1
        while d < 32:
            other = cuda.shfl_up_sync(FULL_MASK, v, d)
            if lane >= d:
                v += other
            d *= 2
        if lane == 31:
            warp_totals[w] = v
        cuda.syncthreads()
        warps = T >> 5
        if w == 0:
            s = warp_totals[lane] if lane < warps else float32(0)
            d = 1
            while d < 32:
                other = cuda.shfl_up_sync(FULL_MASK, s, d)
                if lane >= d:
                    s += other
                d *= 2
            if lane < warps:
                warp_totals[lane] = s
        cuda.syncthreads()
        before = cuda.shfl_up_sync(FULL_MASK, v, 1)
        if lane == 0:
            before = float32(0)
        if w > 0:
            before += warp_totals[w - 1]
        return before, warp_totals[warps - 1]

    _reference["parts"] = (load_tile, store_tile, block_scan_shared, block_scan_shuffle)
    return _reference["parts"]


def _block_scan(kind: str):
    load_tile, store_tile, shared, shuffle = _tile_parts()
    return shuffle if kind == "shuffle" else shared


def _hierarchical_kernels(block: str):
    """Exercise 11.4's pair as the course writes it: the three-phase section scan with a padded
    tile (conflict-free), each thread's running sums in registers (COARSEN of them, unrolled), the
    thread totals scanned by ``block`` ("shared": Kogge-Stone in shared memory, as in the
    exercise; "shuffle": warp shuffles); and a coalesced add of the carries."""
    from numba import float32
    load_tile, store_tile, _, _ = _tile_parts()
    block_scan = _block_scan(block)

    @cuda.jit
    def scan_sections_reference(x, y, sums):
        tile = cuda.shared.array(TILE_WORDS, float32)
        part = cuda.shared.array((2, MAX_THREADS), float32)
        warp_totals = cuda.shared.array(32, float32)
        vals = cuda.local.array(COARSEN, float32)
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        start = cuda.blockIdx.x * (COARSEN * T)
        load_tile(x, tile, start, t, T)
        cuda.syncthreads()
        first = t * COARSEN
        running = float32(0)
        for k in range(COARSEN):
            j = first + k
            running += tile[j + (j >> 5)]
            vals[k] = running
        before, total = block_scan(running, part, warp_totals, t, T)
        for k in range(COARSEN):
            j = first + k
            tile[j + (j >> 5)] = vals[k] + before
        if t == 0:
            sums[cuda.blockIdx.x] = total
        cuda.syncthreads()
        store_tile(y, tile, start, t, T)

    @cuda.jit
    def add_carries_reference(y, carries):
        b = cuda.blockIdx.x
        if b == 0:
            return
        carry = carries[b - 1]
        T = cuda.blockDim.x
        start = b * (COARSEN * T) + cuda.threadIdx.x
        n = y.size
        for k in range(COARSEN):
            i = start + k * T
            if i < n:
                y[i] += carry

    return (scan_sections_reference, add_carries_reference)


def reference_hierarchical():
    """Exercise 11.4's pair as the course writes it (see :func:`_hierarchical_kernels`), launched
    by :func:`scan_any_length` with SPEED_THREADS threads per block on the GPU."""
    return _compiled("hierarchical", lambda: _hierarchical_kernels("shared"))


def hierarchical_shuffle():
    """The same pair with the thread totals scanned by warp shuffles."""
    return _compiled("hierarchical_shuffle", lambda: _hierarchical_kernels("shuffle"))


LOOK_BACK_WINDOW = 32        # the reference looks at up to 32 earlier tiles per round
NEG_INF = np.float32(-np.inf)


def _single_pass_kernel(look_back: str, block: str = "shared"):
    """The single-pass scan: 11.4's tile scan (``block``: how the thread totals are scanned), a
    tile index from the counter, and one of three look-backs:

    - ``"window"`` (the course reference): 32 threads read the status of the 32 previous tiles at
      once (one round trip to the L2 cache for all of them); thread 0 then adds up, nearest
      first, the aggregates until a published prefix, and the block repeats for the tiles that
      were not ready;
    - ``"one"`` (the notebook's solution): thread 0 reads the previous tiles one at a time;
    - ``"chained"`` (PMPP §11.7's stream-based scan): thread 0 waits for the previous tile's
      inclusive prefix, whatever its aggregate says.

    Published values are read with an atomic that changes nothing, so that the read sees what
    the L2 cache (which every SM shares) holds now, never a stale copy in this SM's L1 or a
    register: the exercise's ``cuda.atomic.add(a, j, 0.0)`` (a read-modify-write at the L2);
    the window reference uses ``cuda.atomic.max(a, j, -inf)``, which Numba compiles to a volatile
    load and a compare that never writes (max(NaN, -inf) and max(v, -inf) change nothing), so
    the 32 reads of a round do not queue as read-modify-writes on hot addresses."""
    from numba import float32, int32
    load_tile, store_tile, _, _ = _tile_parts()
    block_scan = _block_scan(block)
    W = LOOK_BACK_WINDOW
    window_look_back = look_back == "window"
    one_look_back = look_back == "one"

    @cuda.jit
    def scan_single_pass_reference(x, y, aggregates, prefixes, counter):
        tile = cuda.shared.array(TILE_WORDS, float32)
        part = cuda.shared.array((2, MAX_THREADS), float32)
        warp_totals = cuda.shared.array(32, float32)
        vals = cuda.local.array(COARSEN, float32)
        ticket = cuda.shared.array(1, int32)
        carry_s = cuda.shared.array(1, float32)
        win_v = cuda.shared.array(LOOK_BACK_WINDOW, float32)
        win_s = cuda.shared.array(LOOK_BACK_WINDOW, int32)
        state = cuda.shared.array(2, int32)          # [tiles still to read back from, done]
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        if t == 0:
            ticket[0] = cuda.atomic.add(counter, 0, 1)
        cuda.syncthreads()
        b = ticket[0]
        start = b * (COARSEN * T)
        load_tile(x, tile, start, t, T)
        cuda.syncthreads()
        first = t * COARSEN
        running = float32(0)
        for k in range(COARSEN):
            j = first + k
            running += tile[j + (j >> 5)]
            vals[k] = running
        before, total = block_scan(running, part, warp_totals, t, T)
        if t == 0:
            carry_s[0] = float32(0)
            if b == 0:
                prefixes[0] = total                  # nothing before tile 0
            else:
                aggregates[b] = total                # publish first, then look back
        if window_look_back:
            if t == 0:
                state[0] = b
                state[1] = 1 if b == 0 else 0
            cuda.syncthreads()
            while state[1] == 0:
                end = state[0]
                if t < W:
                    j = end - 1 - t
                    s = 0
                    v = float32(0)
                    if j >= 0:
                        v = cuda.atomic.max(prefixes, j, NEG_INF)
                        if v == v:
                            s = 2
                        else:
                            v = cuda.atomic.max(aggregates, j, NEG_INF)
                            if v == v:
                                s = 1
                    win_s[t] = s
                    win_v[t] = v
                cuda.syncthreads()
                if t == 0:
                    c = carry_s[0]
                    k = 0
                    done = 0
                    while k < W:
                        s = win_s[k]
                        if s == 0:
                            break
                        c += win_v[k]
                        k += 1
                        if s == 2:
                            done = 1
                            break
                    carry_s[0] = c
                    state[0] = end - k
                    state[1] = done
                cuda.syncthreads()
            if t == 0 and b > 0:
                prefixes[b] = carry_s[0] + total
        elif t == 0 and b > 0:
            carry = float32(0)
            j = b - 1
            while True:
                p = cuda.atomic.add(prefixes, j, 0.0)
                if p == p:
                    carry += p
                    break
                if one_look_back:
                    a = cuda.atomic.add(aggregates, j, 0.0)
                    if a == a:
                        carry += a
                        j -= 1
            prefixes[b] = carry + total
            carry_s[0] = carry
        cuda.syncthreads()
        before = carry_s[0] + before
        for k in range(COARSEN):
            j = first + k
            tile[j + (j >> 5)] = vals[k] + before
        cuda.syncthreads()
        store_tile(y, tile, start, t, T)

    return scan_single_pass_reference


def reference_single_pass():
    """Exercise 11.5 as the course writes it: the three-phase tile scan of 11.4's reference, a
    dynamic tile index from the counter, and a look-back that reads 32 earlier tiles per round
    trip (see :func:`_single_pass_kernel`)."""
    return _compiled("single_pass", lambda: _single_pass_kernel("window"))


def single_pass_shuffle():
    """The reference with the thread totals scanned by warp shuffles (two barriers, not eight)."""
    return _compiled("single_pass_shuffle", lambda: _single_pass_kernel("window", "shuffle"))


def single_pass_one_thread():
    """The exercise's solution shape: thread 0 looks back one tile at a time."""
    return _compiled("single_pass_one", lambda: _single_pass_kernel("one"))


def single_pass_chained():
    """PMPP §11.7's stream-based (chained) scan: each tile waits for its predecessor's prefix."""
    return _compiled("single_pass_chained", lambda: _single_pass_kernel("chained"))


def reference_kogge_stone():
    """Exercise 11.1's shape (double-buffered), for the GPU tests and the notebook's comparison."""
    def make():
        from numba import float32

        @cuda.jit
        def kogge_stone_reference(x, y):
            buf = cuda.shared.array((2, MAX_THREADS), float32)
            t = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + t
            buf[0, t] = x[i] if i < x.size else float32(0)
            cuda.syncthreads()
            src = 0
            stride = 1
            while stride < cuda.blockDim.x:
                if t >= stride:
                    buf[1 - src, t] = buf[src, t] + buf[src, t - stride]
                else:
                    buf[1 - src, t] = buf[src, t]
                cuda.syncthreads()
                src = 1 - src
                stride *= 2
            if i < x.size:
                y[i] = buf[src, t]
        return kogge_stone_reference
    return _compiled("kogge_stone", make)


BK_SECTION = 2 * MAX_THREADS


def reference_brent_kung():
    """Exercise 11.2's shape, for the GPU tests and the notebook's comparison."""
    def make():
        from numba import float32

        @cuda.jit
        def brent_kung_reference(x, y):
            xy = cuda.shared.array(BK_SECTION, float32)
            t = cuda.threadIdx.x
            T = cuda.blockDim.x
            section = 2 * T
            start = cuda.blockIdx.x * section
            for k in range(t, section, T):
                xy[k] = x[start + k] if start + k < x.size else float32(0)
            stride = 1
            while stride < section:
                cuda.syncthreads()
                j = (t + 1) * 2 * stride - 1
                if j < section:
                    xy[j] += xy[j - stride]
                stride *= 2
            stride = T // 2
            while stride > 0:
                cuda.syncthreads()
                j = (t + 1) * 2 * stride - 1
                if j + stride < section:
                    xy[j + stride] += xy[j]
                stride //= 2
            cuda.syncthreads()
            for k in range(t, section, T):
                if start + k < x.size:
                    y[start + k] = xy[k]
        return brent_kung_reference
    return _compiled("brent_kung", make)


# ---- the networks, for the pictures and the verdicts ---------------------------------------------

def network(kind: str, n: int) -> list[list[tuple[int, int]]]:
    """The additions of a scan of n elements (n a power of two), step by step: a list of steps,
    each a list of ``(dst, src)`` pairs meaning ``xy[dst] += xy[src]`` (all reads of a step
    happen before its writes). ``kind``: ``"kogge-stone"``, ``"brent-kung"`` (up-sweep then
    down-sweep) or ``"up-sweep"`` (Brent-Kung's first half only)."""
    steps = []
    if kind == "kogge-stone":
        stride = 1
        while stride < n:
            steps.append([(i, i - stride) for i in range(stride, n)])
            stride *= 2
        return steps
    stride = 1
    while stride < n:
        steps.append([(j, j - stride) for j in range(2 * stride - 1, n, 2 * stride)])
        stride *= 2
    if kind == "up-sweep":
        return steps
    stride = n // 4
    while stride > 0:
        steps.append([(j + stride, j) for j in range(2 * stride - 1, n - stride, 2 * stride)])
        stride //= 2
    return steps


def run_network(x, kind: str, section: int) -> np.ndarray:
    """Apply :func:`network` to each section of x, in float64 (the values a kernel that stops
    after those steps would hold)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    pad = _cdiv(max(n, 1), section) * section - n
    rows = np.concatenate([x, np.zeros(pad)]).reshape(-1, section)
    for step in network(kind, section):
        dst = np.array([d for d, _ in step], dtype=np.int64)
        src = np.array([s for _, s in step], dtype=np.int64)
        rows[:, dst] = rows[:, dst] + rows[:, src]
    return rows.reshape(-1)[:n]


def window_sums(x, section: int, width: int) -> np.ndarray:
    """y[i] = the sum of the ``width`` elements ending at i, not reaching back past the start of
    i's section (what Kogge-Stone holds after log2(width) steps), in float64."""
    x = np.asarray(x, dtype=np.float64)
    local = section_scan(x, section)
    i = np.arange(x.size)
    back = i - width
    inside = back >= (i // section) * section
    return local - np.where(inside, local[np.maximum(back, 0)], 0.0)


def plot_network(ax, kind: str, n: int = 16, title: str = ""):
    """Draw a scan network: one column per element, one row per step (time runs down); a line
    from element src to element dst where ``xy[dst] += xy[src]``, a dot where an addition
    happens, gray where a value only passes through."""
    steps = network(kind, n)
    for s, step in enumerate(steps):
        busy = {d for d, _ in step}
        for i in range(n):
            if i not in busy:
                ax.plot([i, i], [s, s + 1], color="#cccccc", lw=1, zorder=1)
        for d, src in step:
            ax.plot([d, d], [s, s + 1], color="#3b6ea8", lw=1.2, zorder=2)
            ax.plot([src, d], [s, s + 1], color="#e07b39", lw=1.2, zorder=2)
            ax.scatter([d], [s + 1], s=18, color="#b5485d", zorder=3)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(len(steps) + 0.3, -0.3)
    ax.set_xticks(range(n))
    ax.set_xticklabels([str(i) for i in range(n)], fontsize=7)
    ax.set_yticks(range(len(steps) + 1))
    ax.set_yticklabels(["load"] + [f"step {s + 1}" for s in range(len(steps))], fontsize=8)
    adds = sum(len(step) for step in steps)
    ax.set_title(title or f"{kind}: {len(steps)} steps, {adds} additions", fontsize=10)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


# ---- verdicts that say what a wrong scan did -------------------------------------------------------

EXCLUSIVE_HINT = (
    "y[i] holds the sum of the elements *before* x[i]: that is an exclusive scan. This exercise "
    "asks for the inclusive scan, y[i] = x[start] + ... + x[i], x[i] included (in Kogge-Stone: "
    "load x[i] itself, not x[i - 1]; in the last step write the element's own value).")
NO_CARRY_HINT = (
    "every section of {S} elements is scanned on its own, as if nothing came before it: section "
    "b ≥ 1 must also get the sum of all earlier sections (the carry). {how}")
CARRY_OWN_HINT = (
    "section b's carry includes section b's own total, so that total is counted twice: section b "
    "adds the sum of sections 0 .. b - 1 only. {how}")
CARRY_PREVIOUS_ONLY_HINT = (
    "section b got only the total of section b - 1 as its carry; it needs the sum of *all* earlier "
    "sections. {how}")
HOW_HIERARCHICAL = ("carries is the inclusive scan of sums: section b ≥ 1 adds carries[b - 1], "
                    "section 0 adds nothing.")
HOW_SINGLE_PASS = ("The carry of tile b is the inclusive prefix of tile b - 1 if it is published; "
                   "otherwise tile b - 1's aggregate plus whatever comes before it: keep looking "
                   "back (b - 2, b - 3, ...) until a tile whose prefix is published.")
NAN_CARRY_HINT = (
    "section 0 is right but later sections are NaN: the carries were never written. Does "
    "scan_sections_kernel write each section's total into sums[cuda.blockIdx.x] (sums arrive "
    "filled with NaN)?")
NAN_LOOK_BACK_HINT = (
    "tile 0 is right but later tiles are NaN: a carry read a value that was never published (NaN "
    "means 'not yet'). Wait until the value you read is a number (`v == v` is False for NaN), and "
    "publish both the aggregate (before looking back) and the inclusive prefix (after).")
UP_SWEEP_ONLY_HINT = (
    "the values are those the up-sweep (the reduction tree) leaves: element 2^k·m - 1 holds its "
    "block of 2^k elements, the last element the section's total. The down-sweep is missing: "
    "for stride = T/2, T/4, ..., 1, element (t + 1)·2·stride - 1 + stride adds element "
    "(t + 1)·2·stride - 1, with a barrier before each step.")
SECOND_HALF_HINT = (
    "the second half of every section of {S} elements was never written: a Brent-Kung block of T "
    "threads scans 2T elements, so each thread loads and stores two, elements t and t + T of its "
    "section (a coalesced pair).")
COARSEN_UNWRITTEN_HINT = (
    "only the first {T} elements of each tile of {S} were written: each of the T threads handles "
    "COARSEN = {C} elements. Load and store them all: element k·T + t of the tile for k = 0 .. "
    "COARSEN - 1 (coalesced).")
KS_WINDOW_HINT = (
    "each y[i] holds the sum of only the last {w} elements up to x[i] (within its section): the "
    "loop stopped after {k} steps, with strides 1 .. {w}/2. It must run while stride < "
    "cuda.blockDim.x, log2(T) steps (the section here has {S} elements).")
SECTION_SIZE_HINT = (
    "the values are the scans of sections of {got} elements, but this launch gives each block a "
    "section of {S} ({what}). Take the section from cuda.blockDim.x, not from a constant.")
RACE_HINTS = {
    "kogge_stone": (
        "Kogge-Stone in place: in each step thread t reads the element of thread t - stride, which "
        "thread t - stride overwrites in that same step. Use two buffers (read one, write the "
        "other, swap after a barrier: one barrier per step), or read into a register, barrier, "
        "write, barrier."),
    "brent_kung": (
        "in Brent-Kung every step reads what another thread wrote in the step before: put "
        "cuda.syncthreads() before each step of the up-sweep and of the down-sweep, and before "
        "the final store."),
    "scan_hierarchical": (
        "the three phases share the tile: a barrier after the load (threads then read elements "
        "other threads loaded), after the thread totals are written, after each step of the "
        "totals' scan, and before the coalesced store."),
    "scan_single_pass": (
        "the phases share the tile and the totals: barriers after the load, after the totals, "
        "after each step of their scan; and one after thread 0 has stored the carry in shared "
        "memory, before the other threads read it."),
}
HANG_HINT = (
    "the kernel never finished: a tile waited for a value that no tile publishes, or that only a "
    "later tile publishes. In CPU mode the blocks run one after another in index order (and with "
    "the counter, block b scans tile b), so a tile that waits for a later tile waits forever; on "
    "a GPU the same wait deadlocks when the later block is not resident. Look back at tiles b - 1, "
    "b - 2, ... only; publish your aggregate *before* looking back; tile 0 publishes its prefix at "
    "once and never waits.")


class ScanProblem(Problem):
    """A scan exercise: the tolerance depends on the launch (a section's length, the block size),
    and a wrong scan's verdict names what it computed instead."""

    def __init__(self, *args, per_thread: int = 1, whole: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.per_thread = per_thread      # elements per thread in a section (1, 2 or COARSEN)
        self.whole = whole                # True: a whole-array scan; False: sections only

    def section(self, threads: int) -> int:
        return self.per_thread * int(threads)

    def tolerance_for(self, x, threads: int) -> np.ndarray:
        if self.whole:
            return whole_tolerance(x, threads)
        return section_tolerance(x, self.section(threads))

    def _time_limit(self, case) -> float:
        limit = super()._time_limit(case)
        if self.name == "scan_single_pass" and not device.current().is_gpu:
            # A look-back that waits for a later tile hangs in the simulator: say so in seconds,
            # not minutes (a correct CPU case takes 1-3 s).
            if not os.environ.get(CHECK_TIMEOUT_ENV):
                limit = min(limit, 12.0 + 2e-3 * case.thread_count)
        return limit

    def _run_here(self, submission, case, forget_inputs: bool = False):
        _state["checking"] = True
        try:
            return super()._run_here(submission, case, forget_inputs=forget_inputs)
        finally:
            _state["checking"] = False

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        x = case.inputs["x"]
        threads = int(case.threads)
        S = self.section(threads)
        expected = self.expected(case)
        tol = {"y": self.tolerance_for(x, threads)}
        where = case.describe() + f", sections of {S} elements"
        verdict = compare(self.name, where, expected, outcome, tol, {"y": np.dtype(np.float32)})
        if verdict.passed:
            return verdict
        if self.value_hint and verdict.hint == GENERIC_VALUE_HINT:
            verdict.hint = self.value_hint
        if outcome.error:
            verdict.hint = self._error_hint(outcome) or verdict.hint
            return verdict
        got = outcome.outputs.get("y")
        if got is None or np.asarray(got).shape != expected["y"].shape:
            return verdict
        got = np.asarray(got, dtype=np.float64)
        hint = self._diagnose(x, got, expected["y"], tol["y"], threads)
        if hint:
            verdict.hint = hint
        if verdict.index is not None and show_inputs:
            i = verdict.index
            first = (i // S) * S if not self.whole else 0
            verdict.message += (f"\n  inputs there: x[{i}] = {_fmt(x[i])}; y[{i}] should be "
                                f"x[{first}] + ... + x[{i}]")
            if i > first:
                verdict.message += (f" = y[{i - 1}] + x[{i}] (expected y[{i - 1}] = "
                                    f"{_fmt(expected['y'][i - 1])}, got {_fmt(got[i - 1])})")
        return verdict

    def _error_hint(self, outcome) -> str:
        error = outcome.error or ""
        if "shared-memory race" in error:
            return RACE_HINTS.get(self.name, "")
        if outcome.error_kind == "hang" and self.name == "scan_single_pass":
            return HANG_HINT
        if "TileCounterError" in error:
            return ("the simulator runs blocks in index order, so using cuda.blockIdx.x as the tile "
                    "works here; on a GPU blocks start in no guaranteed order, and a block that "
                    "waits for a tile whose block has not started can wait forever. The counter "
                    "hands out tiles in the order blocks really start.")
        return ""

    def _diagnose(self, x, got, exp, tol, threads) -> str:
        S = self.section(threads)
        n = x.size
        x64 = np.asarray(x, dtype=np.float64)
        nan = np.isnan(got)
        section_of = np.arange(n) // S

        # An alternative is matched within the bound its own sums allow: its terms' magnitude is
        # at most that of x up to the end of i's section, counted twice.
        i = np.arange(n)
        mag = np.cumsum(np.abs(x64))
        mag_end = mag[np.minimum((i // S + 1) * S - 1, n - 1)]
        c = chain_bound(i, S, threads) if self.whole else np.full(n, max(S - 1, 1))
        loose = 2 * tol + 4 * gamma(c) * mag_end

        def matches(alt):
            return alt.size > 0 and bool(np.all(np.abs(got - alt) <= loose))

        if nan.any():
            if self.whole and not nan[:min(S, n)].any() and nan[S:].all():
                return NAN_CARRY_HINT if self.name == "scan_hierarchical" else NAN_LOOK_BACK_HINT
            pos = np.arange(n) % S
            if self.per_thread == 2 and np.array_equal(nan, pos >= S // 2) and nan.any():
                return SECOND_HALF_HINT.format(S=S)
            if self.per_thread == COARSEN and np.array_equal(nan, pos >= threads) and nan.any():
                return COARSEN_UNWRITTEN_HINT.format(T=threads, S=S, C=COARSEN)
            return ""
        local = section_scan(x64, S)
        if self.whole:
            how = HOW_HIERARCHICAL if self.name == "scan_hierarchical" else HOW_SINGLE_PASS
            if matches(inclusive_scan(x64) - x64) or matches(local - x64):
                return EXCLUSIVE_HINT
            totals = section_totals(x64, S)
            carry_before = np.concatenate([[0.0], np.cumsum(totals)])[section_of]
            if n > S and matches(local):
                return NO_CARRY_HINT.format(S=S, how=how)
            own = totals[section_of]
            if n > S and (matches(local + carry_before + np.where(section_of > 0, own, 0.0))
                          or matches(local + carry_before + own)):
                return CARRY_OWN_HINT.format(how=how)
            previous = np.concatenate([[0.0], totals])[section_of]
            if n > 2 * S and matches(local + previous):
                if self.name == "scan_single_pass":
                    how += (" And the prefix a tile publishes is its carry plus its total "
                            "(prefixes[b] = carry + total), not its total alone.")
                return CARRY_PREVIOUS_ONLY_HINT.format(how=how)
            return ""
        if matches(local - x64):
            return EXCLUSIVE_HINT
        if self.per_thread == 1:
            w = 1
            while w < S:
                if matches(window_sums(x64, S, w)):
                    return KS_WINDOW_HINT.format(w=w, k=int(math.log2(w)), S=S)
                w *= 2
        if self.per_thread == 2 and S >= 2 and S & (S - 1) == 0:
            if matches(run_network(x64, "up-sweep", S)):
                return UP_SWEEP_ONLY_HINT
        for other, what in ((S // 2, "half"), (2 * S, "twice"), (n, "the whole array")):
            if other >= 1 and other != S and matches(section_scan(x64, other)):
                got_text = f"{other}" if other != n else f"{n} (one section)"
                return SECTION_SIZE_HINT.format(
                    got=got_text, S=S,
                    what=("blockDim.x" if self.per_thread == 1 else f"{self.per_thread}·blockDim.x"))
        return ""


_VALUE_HINT_SECTIONS = ("y[i] is the sum of x from the start of i's section up to x[i], included: "
                        "compare your steps with the picture of the network for this element.")
_VALUE_HINT_WHOLE = ("y[i] is the sum of x[0] .. x[i]: the element's section scanned, plus the "
                     "sum of all earlier sections (the carry).")


# ---- 11.1 Kogge-Stone, one section per block ------------------------------------------------------

kogge_stone = ScanProblem(
    "kogge_stone", title="Kogge-Stone scan of one section per block (double-buffered)",
    spec=_section_spec(1), make_inputs=_inputs, outputs=_outputs,
    tolerance=lambda inputs, expected: {"y": section_tolerance(inputs["x"], 64)},
    launch=_launch_ks, block_sizes=(32, 64, 128), visible_block_size=64,
    # 150 elements: 3 sections of 64, the last one partial; 37: fewer than one block; 1 element.
    cpu_sizes=Sizes(visible=(150, 37, 1), hidden=(200, 33, 601), hidden_random=(1, 2, 260)),
    gpu_sizes=Sizes(visible=(10_000_019, 150, 37, 1), hidden=(200, 33, 16_777_219),
                    hidden_random=(3, 2, 20_000_000)),
    bytes_moved=_bytes, baselines=BASELINES, per_thread=1, value_hint=_VALUE_HINT_SECTIONS,
)


# ---- 11.2 Brent-Kung, a section of 2T per block --------------------------------------------------

brent_kung = ScanProblem(
    "brent_kung", title="Brent-Kung scan of one section of 2·blockDim elements per block",
    spec=_section_spec(2), make_inputs=_inputs, outputs=_outputs,
    tolerance=lambda inputs, expected: {"y": section_tolerance(inputs["x"], 64)},
    launch=_launch_bk, block_sizes=(32, 64, 128), visible_block_size=32,
    blocks_for=lambda n, t: _cdiv(max(int(n), 1), 2 * t),
    # 150: sections of 64, the third partial; 50: less than one section; 1 element.
    cpu_sizes=Sizes(visible=(150, 50, 1), hidden=(300, 65, 601), hidden_random=(1, 2, 400)),
    gpu_sizes=Sizes(visible=(10_000_019, 150, 50, 1), hidden=(300, 65, 16_777_219),
                    hidden_random=(3, 2, 20_000_000)),
    bytes_moved=_bytes, baselines=BASELINES, per_thread=2, value_hint=_VALUE_HINT_SECTIONS,
)


# ---- 11.3 predict: the bytes a hierarchical scan moves -------------------------------------------

def hierarchical_bytes(n: int, tile: int) -> int:
    """Bytes a hierarchical scan of n float32 moves with tiles of ``tile`` elements: a level of
    m elements and B = ceil(m / tile) tiles reads m and writes m + B values (4 bytes each); if
    B > 1 the B sums are scanned the same way, then the m outputs are read and written again and
    the B carries read."""
    n, tile = int(n), int(tile)
    blocks = _cdiv(n, tile)
    level = 4 * (2 * n + blocks)
    if blocks <= 1:
        return level
    return 2 * level + hierarchical_bytes(blocks, tile)


def _traffic_spec(n, tile, **launch):
    return {"bytes": np.array([float(hierarchical_bytes(a, b)) for a, b in zip(n, tile)])}


def _traffic_inputs(rng, count):
    n = np.floor(10.0 ** rng.uniform(0, 10.3, count))
    tile = np.floor(2.0 ** rng.uniform(1, 13.5, count))
    first = [(SPEED_N, COARSEN * SPEED_THREADS), (SPEED_N, 64), (1, 4096), (4096, 4096),
             (4097, 4096), (10 ** 9, 2048), (1000, 2), (2 ** 34, 8192)]
    for i, (a, b) in enumerate(first[:count]):
        n[i], tile[i] = a, b
    return {"n": n, "tile": tile}


def _traffic_tolerance(inputs, expected):
    return {"bytes": 16 * U64 * expected["bytes"]}


def _traffic_call(fn, inputs, outputs, case):
    for i in range(case.size):
        outputs["bytes"][i] = fn(int(inputs["n"][i]), int(inputs["tile"][i]))


scan_traffic = Problem(
    "scan_traffic", title="The bytes a hierarchical scan moves (the recursion included)",
    spec=_traffic_spec, make_inputs=_traffic_inputs,
    outputs=lambda count: {"bytes": ((count,), np.float64)},
    tolerance=_traffic_tolerance, launch=_traffic_call, on_device=False,
    cpu_sizes=Sizes(visible=(8,), hidden=(200,)), gpu_sizes=Sizes(visible=(8,), hidden=(200,)),
    size_label=lambda count: f"{count} (n, tile) pairs",
    value_hint=("a level of m elements has B = ceil(m / tile) tiles and moves 4·(2m + B) bytes "
                "in its first kernel; if B > 1, add the bytes of the same scan of B elements "
                "(recursion) and 4·(2m + B) more for adding the carries. With one tile "
                "(m ≤ tile) the first kernel is all."),
)


# ---- 11.4 hierarchical, any length ------------------------------------------------------------------

scan_hierarchical = ScanProblem(
    "scan_hierarchical",
    title="A scan of any length: coarsened three-phase sections, their sums scanned, carries added",
    spec=_whole_spec, make_inputs=_inputs, outputs=_outputs,
    tolerance=lambda inputs, expected: {"y": whole_tolerance(inputs["x"], SPEED_THREADS)},
    launch=_launch_hierarchical, block_sizes=(32, 64), visible_block_size=32,
    blocks_for=_tiles,
    # Tiles of 16·32 = 512: 1500 is 3 tiles (the last partial) and a second level of 3 sums;
    # 200 is less than one tile; 1 element. Hidden: 2000 (4 tiles of 512, or 2 of 1024 with 64
    # threads), 513, random. On a GPU the first case needs three levels.
    cpu_sizes=Sizes(visible=(1500, 200, 1), hidden=(2000, 513, 6001), hidden_random=(1, 2, 2500)),
    gpu_sizes=Sizes(visible=(30_000_001, 1500, 200, 1), hidden=(2000, 513, 16_777_219),
                    hidden_random=(3, 2, 50_000_000), speed=SPEED_N),
    speed_launch=_speed_shape, bytes_moved=_bytes, flops=lambda n: int(n), baselines=BASELINES,
    reference=reference_hierarchical, speed_inputs=_speed_inputs, sample_spec=_whole_sample,
    vendor=cupy_cumsum, vendor_label="cupy.cumsum",
    # H200 (docs/benchmarks.md): the reference 1.50 ms at 2^28 (1.31x cupy.cumsum, 34% of a copy).
    speed=SpeedBar(min_fraction_of_reference=0.6, baseline="parallel", min_speedup=5.0),
    per_thread=COARSEN, whole=True, value_hint=_VALUE_HINT_WHOLE,
)


# ---- 11.5 single pass, decoupled look-back -----------------------------------------------------------

scan_single_pass = ScanProblem(
    "scan_single_pass",
    title="A single-pass scan: dynamic tile index, decoupled look-back",
    spec=_whole_spec, make_inputs=_inputs, outputs=_outputs,
    tolerance=lambda inputs, expected: {"y": whole_tolerance(inputs["x"], SPEED_THREADS)},
    launch=_launch_single_pass, block_sizes=(32, 64), visible_block_size=32,
    blocks_for=_tiles,
    # Tiles of 512: 2600 is 6 tiles (look-backs of every length); 200 less than one; 1 element.
    cpu_sizes=Sizes(visible=(2600, 200, 1), hidden=(3000, 513, 10401), hidden_random=(1, 2, 3000)),
    gpu_sizes=Sizes(visible=(30_000_001, 2600, 200, 1), hidden=(3000, 513, 16_777_219),
                    hidden_random=(3, 2, 50_000_000), speed=SPEED_N),
    speed_launch=_speed_shape, bytes_moved=_bytes, flops=lambda n: int(n), baselines=BASELINES,
    reference=reference_single_pass, speed_inputs=_speed_inputs, sample_spec=_whole_sample,
    vendor=cupy_cumsum, vendor_label="cupy.cumsum",
    # H200: the reference 1.33 ms (1.48x cupy.cumsum, 38% of a copy); the notebook's solution, a
    # look-back of one tile at a time, 3.07 ms in its speed test (45%): the bar is 30%.
    speed=SpeedBar(min_fraction_of_reference=0.3, baseline="parallel", min_speedup=5.0),
    per_thread=COARSEN, whole=True, value_hint=_VALUE_HINT_WHOLE,
)

PROBLEMS = (kogge_stone, brent_kung, scan_traffic, scan_hierarchical, scan_single_pass)


# ---- measuring on a GPU (the chapter's "measure it" cells) ----------------------------------------

def sections_runner(kernel, threads: int, per_thread: int):
    """run(x, y) for a section scan (11.1: per_thread 1, 11.2: 2), and its section length."""
    return (lambda x, y: scan_sections(kernel, x, y, threads, per_thread)), per_thread * threads


def hierarchical_runner(kernels, threads: int = SPEED_THREADS):
    return (lambda x, y: scan_any_length(kernels, x, y, threads)), None


def single_pass_runner(kernel, threads: int = SPEED_THREADS):
    return (lambda x, y: single_pass_scan(kernel, x, y, threads)), None


def measure(runners: dict, n: int = SPEED_N, repeats: int = 10, seed: int = 11) -> list[dict]:
    """Time each scan on n float32, beside ``cupy.cumsum`` (if CuPy is installed) and a copy of
    the same bytes. ``runners`` maps a label to ``(run, section)`` (see :func:`sections_runner`,
    :func:`hierarchical_runner`, :func:`single_pass_runner`); ``section`` None for a whole scan.
    Every result is checked at 4096 sampled elements. Rows: label, ms, GB/s (8 bytes per
    element: read once, written once), fraction of the copy, right, section."""
    from autograder.machine import timing
    timing.require_gpu("Timing the scans")
    _cuda()
    host = _speed_inputs(np.random.default_rng(seed), n)["x"]
    d_x = cuda.to_device(host)
    d_y = cuda.device_array(n, np.float32)
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(n, size=min(4096, n), replace=False))
    threads_of = SPEED_THREADS

    def right(values, section):
        exp, mag = sampled_scan(host, idx, section)
        if section:
            tol = gamma(idx % section) * mag + TINY32
        else:
            tol = gamma(chain_bound(idx, COARSEN * threads_of, threads_of)) * mag + TINY32
        return bool(np.all(np.abs(values[idx].astype(np.float64) - exp) <= tol))

    rows = []
    for label, (run, section) in runners.items():
        stats = timing.time_gpu(label, lambda i, run=run: run(d_x, d_y), repeats=repeats,
                                nbytes=_bytes(n))
        rows.append({"label": label, "ms": stats.median_ms, "gbps": stats.gbps,
                     "right": right(d_y.copy_to_host(), section), "section": section})
    try:
        import cupy as cp
        c_x, c_y = cp.asarray(d_x), cp.asarray(d_y)
        stats = timing.time_gpu("cupy.cumsum", lambda i: cp.cumsum(c_x, out=c_y),
                                repeats=repeats, nbytes=_bytes(n))
        rows.append({"label": "cupy.cumsum", "ms": stats.median_ms, "gbps": stats.gbps,
                     "right": right(cp.asnumpy(c_y), None), "section": None})
    except ImportError:
        pass
    ceiling = timing.copy_ceiling(_bytes(n))
    for row in rows:
        row["of_copy"] = ceiling.median_ms / row["ms"]
    rows.append({"label": ceiling.label, "ms": ceiling.median_ms, "gbps": ceiling.gbps,
                 "right": True, "of_copy": 1.0, "section": None})
    return rows


def plot_measurements(rows: list[dict], title: str = ""):
    """Horizontal bars: GB/s of each scan, the copy's as a line."""
    import matplotlib.pyplot as plt
    copy = next((r for r in rows if r["label"].startswith("copy")), None)
    bars = [r for r in rows if r is not copy]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(bars) + 1.2))
    colours = ["#9aa9bb" if r["section"] else "#3b6ea8" for r in bars]
    ax.barh(range(len(bars)), [r["gbps"] for r in bars], color=colours)
    ax.set_yticks(range(len(bars)))
    ax.set_yticklabels([r["label"] + ("" if r["right"] else "  (WRONG)") for r in bars],
                       fontsize=8)
    ax.invert_yaxis()
    if copy:
        ax.axvline(copy["gbps"], color="black", ls="--", lw=1,
                   label=f"copy of the same bytes: {copy['gbps']:.0f} GB/s")
        ax.legend(fontsize=8, loc="lower right")
    ax.set_xlabel("GB/s (8 bytes per element: read once, written once); gray: sections only")
    ax.set_title(title or "Scans of 2^28 float32")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


# `aag bench` times these beside an exercise's reference, with the same launch and inputs.
BENCH_VARIANTS = {
    "scan_single_pass": {
        "one thread looks back one tile at a time (the notebook's solution)": single_pass_one_thread,
        "chained: each tile waits for the previous tile's prefix (PMPP §11.7)": single_pass_chained,
        "the reference with a warp-shuffle block scan": single_pass_shuffle,
    },
    "scan_hierarchical": {"the reference with a warp-shuffle block scan": hierarchical_shuffle},
}
