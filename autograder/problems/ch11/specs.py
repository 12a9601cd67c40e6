"""Chapter 11's graded exercises (11.1 - 11.5): inputs, the float64 spec and its error bound
(see the chapter's docstring), how the checks launch a learner's kernels, the CPU baselines, the
verdicts that say what a wrong scan did, and the five :class:`Problem` objects."""

from __future__ import annotations

import math
import os

import numpy as np

from autograder.machine import device
from autograder.core.checks import GENERIC_VALUE_HINT, TINY32, Verdict, compare, fmt, gamma
from autograder.grading.problem import CHECK_TIMEOUT_ENV, Baseline, Problem, SpeedBar, Sizes
from autograder.core.spec import Case, stable_seed
from autograder.problems.ch11.references import (COARSEN, NOT_READY, cupy_cumsum, fill_kernel,
                                                 reference_hierarchical, reference_single_pass)
from autograder.problems.kit import (cores, formula_problem, in_parallel, njit_on_first_call,
                                     normal_fast, once_per_array)

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


def scan_speed_inputs(rng, n):
    """The speed tests' input: n float32 values ``3 + 2·N(0, 1)``, made in float32 throughout."""
    return {"x": normal_fast(rng, n, 3.0, 2.0)}


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
# 4096 samples after every timed call): float64 sums of chunks of 256 elements, kept per input
# array, then each sample's own chunk summed up to it.
_CHUNK = 256


@once_per_array
def _chunk_prefix(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = x.size
    chunks = _cdiv(max(n, 1), _CHUNK)
    sums = np.zeros(chunks)
    mags = np.zeros(chunks)
    step = _CHUNK << 14

    def slice_sums(i: int) -> None:      # the chunks of one slice (slices run side by side)
        start = i * step
        part = x[start:start + step].astype(np.float64)
        pad = _cdiv(part.size, _CHUNK) * _CHUNK - part.size
        rows = np.concatenate([part, np.zeros(pad)]).reshape(-1, _CHUNK)
        c0 = start // _CHUNK
        sums[c0:c0 + rows.shape[0]] = rows.sum(axis=1)
        mags[c0:c0 + rows.shape[0]] = np.abs(rows).sum(axis=1)
    in_parallel(slice_sums, _cdiv(n, step), n)
    pre = np.concatenate([[0.0], np.cumsum(sums)])
    pre_mag = np.concatenate([[0.0], np.cumsum(mags)])
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

_scratch: dict = {}
_state = {"checking": False}     # True while a correctness check runs (not a timed call)


def scratch(role: str, size: int, dtype, value):
    """A device array of ``size`` elements set to ``value`` (NaN: "not written yet"). On a GPU
    the arrays are kept between calls (allocating takes longer than a small scan) and filled by
    a small kernel; in CPU mode a fresh array is made each time."""
    from numba import cuda
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
    fill_kernel()[max(1, min(1024, _cdiv(size, 256))), 256](array, dtype.type(value))
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


STATUS_ADVICE = (
    "other blocks poll this word while the kernel runs: write and read it only with atomics (a "
    "plain store is a data race with their reads, and a plain load may come from this SM's "
    "stale L1 cache)")
VALUE_ADVICE = (
    "a plain load of a value another block published may come from this SM's L1 cache, which "
    "other SMs' stores do not update: read it with an atomic")
# The values: a plain store by their tile is fine (the fence and the atomic status order it), a
# plain read by another tile is not (it may be stale); the status: atomics only, as any shared
# result.
_VALUE_CLASHES = {"write": ("write", "read"), "read": ("write", "atomic"), "atomic": ("read",)}


def _tile_state(blocks: int):
    """(status, aggregates, prefixes) of one launch: status all NOT_READY, the values NaN, so
    that a value read before its status says it is there shows in the output. During a check in
    CPU mode, every access to them is race-checked (:func:`races.track_outputs`)."""
    if _state["checking"] and not device.current().is_gpu:
        from autograder.machine.simulator import races
        status = races.track_outputs({"status": np.full(blocks, NOT_READY, np.int32)},
                                     advice=STATUS_ADVICE, what="the tile status")["status"]
        values = races.track_outputs(
            {name: np.full(blocks, np.nan, np.float32) for name in ("aggregates", "prefixes")},
            clashes=_VALUE_CLASHES, advice=VALUE_ADVICE, what="the published value")
        return status, values["aggregates"], values["prefixes"]
    return (scratch("status", blocks, np.int32, NOT_READY),
            scratch("aggregates", blocks, np.float32, np.nan),
            scratch("prefixes", blocks, np.float32, np.nan))


def single_pass_scan(kernel, x, y, threads: int):
    """The single-pass scan, as Exercise 11.5 is launched: ``status`` (int32, one per tile) set
    to NOT_READY (0), ``aggregates`` and ``prefixes`` (float32) filled with NaN, ``counter`` set
    to 0, then one launch of ``ceil(n / tile)`` blocks. Returns the counter (device array)."""
    n = x.size
    blocks = _cdiv(max(n, 1), COARSEN * int(threads))
    status, aggregates, prefixes = _tile_state(blocks)
    counter = scratch("counter", 1, np.int32, 0)
    kernel[blocks, threads](x, y, status, aggregates, prefixes, counter)
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


def scan_bytes(n):
    return 8 * int(n)          # read x once, write y once


# ---- CPU baselines ------------------------------------------------------------------------------------

def _numpy_scan(x, y):
    np.cumsum(x, out=y)


@njit_on_first_call
def _serial_jit():
    import numba

    @numba.njit(cache=False)
    def serial(x, y):
        acc = np.float32(0)
        for i in range(x.size):
            acc += x[i]
            y[i] = acc
    return serial


def _serial_scan(x, y):
    _serial_jit(x, y)


@njit_on_first_call
def _parallel_jit():
    """Two passes over chunks, one chunk per core at a time: the chunks' sums, their exclusive
    scan (serial, one value per chunk), then every chunk scanned from its offset."""
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
    return parallel


def _parallel_scan(x, y):
    _parallel_jit(x, y)


BASELINES = {
    "numpy": Baseline("NumPy np.cumsum (1 core)", _numpy_scan),
    "serial": Baseline("numba.njit loop (1 core)", _serial_scan),
    "parallel": Baseline(f"numba.njit parallel, two passes ({cores()} cores)", _parallel_scan),
}


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
    "tile 0 is right but later tiles are NaN: a carry read a value that was never published "
    "(aggregates and prefixes arrive filled with NaN). Read a value only once status[j] says it "
    "is there (AGGREGATE: aggregates[j], PREFIX: prefixes[j]), and publish both: the aggregate "
    "before looking back, the inclusive prefix after, each value before its status.")
NAN_SENTINEL_HINT = (
    "the kernel never finished on this input, which has a NaN at x[{p}] (in tile {k}): a tile "
    "that looked back past tile {k} waited for ever. In CPU mode the blocks run one after "
    "another, so every tile it looked at had already published: the wait took a published NaN "
    "(tile {k}'s total, and every prefix from it on, is NaN) for 'not published yet'. No value "
    "can mean 'not ready': NaN is a real input, and so is any other number. Wait on status[j] "
    "(NOT_READY, AGGREGATE, PREFIX) and read the value only after it; on a GPU the same kernel "
    "hangs the device.")
NAN_INPUT_HINT = (
    "this input has a NaN at x[{p}]: y[i] for i < {p} are numbers, and from y[{p}] on every "
    "output is NaN (NaN plus anything is NaN), so every tile from tile {k} on publishes a NaN "
    "prefix, and a tile's look-back must add it like any other value (never skip it, never take "
    "it for 'not published').")
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
PUBLISH_RACE_HINT = (
    "publish the value first, then cuda.threadfence(), then the status with an atomic: "
    "aggregates[b] = total; cuda.threadfence(); cuda.atomic.exch(status, b, AGGREGATE) (and the "
    "same with prefixes[b] and PREFIX). Read the status with cuda.atomic.add(status, j, 0). The "
    "fence keeps the two words in order: without it another SM may see the new status before the "
    "value it announces.")
READ_RACE_HINT = (
    "once cuda.atomic.add(status, j, 0) says a value is there, cuda.threadfence() (so that the "
    "value is not read before the status), then read the value with an atomic that changes "
    "nothing: cuda.atomic.add(aggregates, j, 0.0) or cuda.atomic.add(prefixes, j, 0.0).")
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

    def __init__(self, *args, per_thread: int = 1, whole: bool = False,
                 nan_sizes: tuple[int, int] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.per_thread = per_thread      # elements per thread in a section (1, 2 or COARSEN)
        self.whole = whole                # True: a whole-array scan; False: sections only
        # (CPU mode, GPU): the length of one more case, last, whose input holds a NaN
        self.nan_sizes = nan_sizes

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        cases = super().cases(hidden, seed)
        if self.nan_sizes:
            cases.append(self.nan_case(hidden, seed))
        return cases

    def nan_case(self, hidden: bool = False, seed: int | None = None) -> Case:
        """A case whose input has one NaN, between a third and a half of the way in: the spec
        is NaN from there on, and the tiles after the NaN's tile look back past a NaN value."""
        rng = np.random.default_rng(stable_seed(
            self.case_seed(hidden) if seed is None else seed, "a NaN in the input"))
        n = self.nan_sizes[1 if device.current().is_gpu else 0]
        x = scan_inputs(n, rng)
        p = int(rng.integers(n // 3, n // 2))
        x[p] = np.nan
        threads = (self.visible_block_size if not hidden and self.visible_block_size
                   else int(rng.choice(self.block_sizes)))
        return Case(size=n, inputs={"x": x}, threads=threads, blocks=self.blocks_for(n, threads),
                    label=f"n = {n} with a NaN at x[{p}]")

    def section(self, threads: int) -> int:
        return self.per_thread * int(threads)

    def tolerance_for(self, x, threads: int) -> np.ndarray:
        if self.whole:
            return whole_tolerance(x, threads)
        return section_tolerance(x, self.section(threads))

    def time_limit(self, case) -> float:
        limit = super().time_limit(case)
        if self.name == "scan_single_pass" and not device.current().is_gpu:
            # A look-back that waits for a later tile hangs in the simulator: say so in seconds,
            # not minutes (a correct CPU case takes 1-3 s).
            if not os.environ.get(CHECK_TIMEOUT_ENV):
                limit = min(limit, 12.0 + 2e-3 * case.thread_count)
        return limit

    def run_here(self, submission, case, forget_inputs: bool = False):
        _state["checking"] = True
        try:
            return super().run_here(submission, case, forget_inputs=forget_inputs)
        finally:
            _state["checking"] = False

    def tolerance_of(self, case, expected):
        return {"y": self.tolerance_for(case.inputs["x"], int(case.threads))}

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        x = case.inputs["x"]
        threads = int(case.threads)
        S = self.section(threads)
        expected, tol = self.reference_values(case)
        where = case.describe() + f", sections of {S} elements"
        verdict = compare(self.name, where, expected, outcome, tol, {"y": np.dtype(np.float32)})
        if verdict.passed:
            return verdict
        if self.value_hint and verdict.hint == GENERIC_VALUE_HINT:
            verdict.hint = self.value_hint
        if outcome.error:
            verdict.hint = self._error_hint(outcome, case) or verdict.hint
            return verdict
        got = outcome.outputs.get("y")
        if got is None or np.asarray(got).shape != expected["y"].shape:
            return verdict
        got = np.asarray(got, dtype=np.float64)
        hint = self._diagnose(x, got, expected["y"], tol["y"], threads)
        if np.isnan(x).any():
            p = int(np.argmax(np.isnan(x)))
            hint = NAN_INPUT_HINT.format(p=p, k=p // S)
        if hint:
            verdict.hint = hint
        if verdict.index is not None and show_inputs:
            i = verdict.index
            first = (i // S) * S if not self.whole else 0
            verdict.message += (f"\n  inputs there: x[{i}] = {fmt(x[i])}; y[{i}] should be "
                                f"x[{first}] + ... + x[{i}]")
            if i > first:
                verdict.message += (f" = y[{i - 1}] + x[{i}] (expected y[{i - 1}] = "
                                    f"{fmt(expected['y'][i - 1])}, got {fmt(got[i - 1])})")
        return verdict

    def _error_hint(self, outcome, case) -> str:
        error = outcome.error or ""
        if "shared-memory race" in error:
            return RACE_HINTS.get(self.name, "")
        if "global-memory race on the tile status" in error:
            return PUBLISH_RACE_HINT
        if "global-memory race on the published value" in error:
            return READ_RACE_HINT
        if outcome.error_kind == "hang" and self.name == "scan_single_pass":
            x = case.inputs.get("x")
            if x is not None and np.isnan(x).any():
                p = int(np.argmax(np.isnan(x)))
                return NAN_SENTINEL_HINT.format(p=p, k=p // self.section(int(case.threads)))
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
        nan = np.isnan(got) & ~np.isnan(exp)
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
    bytes_moved=scan_bytes, baselines=BASELINES, per_thread=1, value_hint=_VALUE_HINT_SECTIONS,
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
    bytes_moved=scan_bytes, baselines=BASELINES, per_thread=2, value_hint=_VALUE_HINT_SECTIONS,
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


scan_traffic = formula_problem(
    "scan_traffic", title="The bytes a hierarchical scan moves (the recursion included)",
    function="scan_traffic", args=(("n", int), ("tile", int)), results=("bytes",),
    spec=_traffic_spec, make_inputs=_traffic_inputs, tolerance=_traffic_tolerance,
    sizes=Sizes(visible=(8,), hidden=(200,)),
    value_hint=("a level of m elements has B = ceil(m / tile) tiles and moves 4·(2m + B) bytes "
                "in its first kernel; if B > 1, add the bytes of the same scan of B elements "
                "(recursion) and 4·(2m + B) more for adding the carries. With one tile "
                "(m ≤ tile) the first kernel is all."),
    size_label=lambda count: f"{count} (n, tile) pairs",
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
    speed_launch=_speed_shape, bytes_moved=scan_bytes, flops=lambda n: int(n), baselines=BASELINES,
    reference=reference_hierarchical, speed_inputs=scan_speed_inputs, sample_spec=_whole_sample,
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
    speed_launch=_speed_shape, bytes_moved=scan_bytes, flops=lambda n: int(n), baselines=BASELINES,
    reference=reference_single_pass, speed_inputs=scan_speed_inputs, sample_spec=_whole_sample,
    vendor=cupy_cumsum, vendor_label="cupy.cumsum",
    # H200 (docs/benchmarks.md): the packed-word reference with unsigned indices 0.621 ms (81%
    # of a copy, 1.17x CUB's scan; 2026-12-05); the notebook's solution, a look-back of one tile
    # at a time, 3.45-4.05 ms in five runs (2026-12-04), 15-18% of it, and its design as
    # a bench row 3.54 ms beside the reference (17.5%). Judged with its real test and speed cells
    # three times against this reference (2026-12-05): 4.006-4.008 ms against 0.622 ms, 15.5%,
    # all three passed. The bar is 12%.
    speed=SpeedBar(min_fraction_of_reference=0.12, baseline="parallel", min_speedup=5.0),
    per_thread=COARSEN, whole=True, value_hint=_VALUE_HINT_WHOLE,
    # A last case with a NaN in the input (5 tiles of 512, or 3 of 1024; on a GPU 5860 tiles).
    nan_sizes=(2100, 3_000_017),
)
