"""Chapter 10's graded exercises: the inputs, the float64 spec, the error bounds of the chains
of additions (see the package's docstring), the launches, CPU baselines and verdicts of the three
sums, and the time-bound formula."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from autograder.machine import device
from autograder.machine.simulator.warp import FULL_MASK_TEXT as FULL_MASK   # every lane, 32 or 64
from autograder.core.checks import TINY32, Verdict, compare, gamma
from autograder.grading.problem import Baseline, Case, Problem, Sizes, SpeedBar
from autograder.problems.ch09 import zero
from autograder.problems.ch10.references import (COARSE, SPEED_BLOCKS_PER_SM, cupy_sum,
                                                 reference_sum, speed_shape)
from autograder.problems.kit import (cores, formula_problem, in_parallel, njit_on_first_call,
                                     once_per_array, uniform_fast)

MEAN = 5.0              # the inputs' offset, in units of their scale
U64 = 2.0 ** -53


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def make_values(n: int, seed=0) -> np.ndarray:
    """n float32 values scale · (5 + u), u uniform in [-1, 1), scale random in 10^-3 .. 10^3: an
    offset, so every element matters to the sum and none is near 0."""
    rng = _rng(seed)
    scale = 10.0 ** rng.uniform(-3, 3)
    return (scale * (MEAN + rng.uniform(-1.0, 1.0, int(n)))).astype(np.float32)


def make_values_fast(n: int, seed=0) -> np.ndarray:
    """Like :func:`make_values`, in float32 throughout (2^28 values in about a second)."""
    rng = _rng(seed)
    scale = np.float32(10.0 ** rng.uniform(-3, 3))
    return uniform_fast(rng, n, (MEAN - 1.0) * scale, (MEAN + 1.0) * scale)


_SLICE = 1 << 22


def _sum_of_slices(x: np.ndarray, part) -> float:
    """Σ part(slice) over slices of ``_SLICE`` elements (summed side by side, added in order: the
    same total on any number of cores), so a large array is never copied to float64 at once."""
    flat = np.asarray(x).reshape(-1)
    count = -(-flat.size // _SLICE)
    total = 0.0
    for value in in_parallel(lambda i: float(part(flat[i * _SLICE:(i + 1) * _SLICE])), count,
                             flat.size):
        total += value
    return total


def exact_sum(x: np.ndarray) -> float:
    """The float64 sum (NumPy's pairwise summation within each slice)."""
    return _sum_of_slices(x, lambda s: np.sum(s, dtype=np.float64))


def magnitude(x: np.ndarray) -> float:
    """Σ|x_i| in float64."""
    return _sum_of_slices(x, lambda s: np.sum(np.abs(s, dtype=np.float64)))


# ---- the chains of additions (see the module docstring) ------------------------------------------

def _log2(v: int) -> int:
    v = int(v)
    if v < 1 or v & (v - 1):
        raise ValueError(f"{v} is not a power of two")
    return v.bit_length() - 1


def tree_chain(blocks: int, threads: int) -> int:
    """10.1: one addition while loading, log2(threads) tree steps, one atomic per block."""
    return 1 + _log2(threads) + int(blocks)


def grid_stride_chain(n: int, blocks: int, threads: int, warp: int = 32) -> int:
    """10.3: a thread's own elements (up to three more with wide loads), the warp's shuffles, the
    warps' partial sums (a tree or a loop), one atomic per block."""
    per_thread = -(-int(n) // (int(blocks) * int(threads)))
    return per_thread + 3 + _log2(warp) + max(int(threads) // int(warp), 1) + int(blocks)


def warp_chain(warp: int) -> int:
    """10.2: a tree of shuffles over the warp's lanes."""
    return _log2(warp)


def sum_tolerance(x: np.ndarray, chain: int, total_magnitude: float | None = None) -> float:
    """γ_chain · Σ|x| for fp32, plus the float64 reference's own error and the smallest normal
    float32."""
    s = magnitude(x) if total_magnitude is None else total_magnitude
    n = max(int(np.asarray(x).size), 1)
    return gamma(chain) * s + gamma(math.ceil(math.log2(n)) + 1, U64) * s + TINY32


# ---- the launches ---------------------------------------------------------------------------------

def run_sum(kernel, x, out, blocks, threads) -> None:
    """Launch a sum kernel as the checks do: ``out`` set to 0, then ``kernel[blocks, threads](x,
    out)``."""
    zero(out)
    kernel[blocks, threads](x, out)


def _launch(kernel, inputs, outputs, case):
    run_sum(kernel, inputs["x"], outputs["out"], case.blocks, case.threads)


def device_warp_size() -> int:
    """The warp size kernels run at here: 32 on NVIDIA, 64 on AMD; CPU mode's default (32, or
    ``AAG_WARP_SIZE``)."""
    return int(device.current().warp_size)


@contextlib.contextmanager
def at_warp_size(warp: int):
    """Run the simulated launches inside at warp size ``warp`` (CPU mode). On a GPU only the
    device's own warp size exists: asking for another is an error, never a silent substitute."""
    if device.current().is_gpu:
        if int(warp) != device_warp_size():
            raise RuntimeError(f"this GPU runs warps of {device_warp_size()} lanes; a case at warp "
                               f"size {warp} can only run in CPU mode (AAG_BACKEND=cpu)")
        yield
        return
    from autograder.machine.simulator import cpu_mode
    with cpu_mode.warp_size_as(int(warp)):
        yield


def _warp_launch(kernel, inputs, outputs, case):
    with at_warp_size(int(inputs["warp_size"])):
        kernel[case.blocks, case.threads](inputs["x"], outputs["sums"])


# ---- inputs, spec and outputs ---------------------------------------------------------------------

def _inputs(rng, n):
    return {"x": make_values(n, rng)}


def _speed_inputs(rng, n):
    return {"x": make_values_fast(n, rng)}


def _spec(x, **launch):
    return {"out": np.array([exact_sum(x)])}


def _outputs(n):
    return {"out": ((1,), np.float32)}


def _bytes_moved(n):
    return 4 * int(n) + 4


@once_per_array
def _cached_sums(x: np.ndarray) -> tuple[float, float]:
    """(Σx, Σ|x|) in float64, once per input array (a speed run checks 23 calls on 2^28 values)."""
    return exact_sum(x), magnitude(x)




def _speed_sample(inputs, idx):
    x = inputs["x"]
    total, mag = _cached_sums(x)
    try:
        blocks, threads = speed_shape(x.size)
    except Exception:           # no GPU here: the widest launch a speed test could use
        blocks, threads = 4096, 1024
    tol = sum_tolerance(x, grid_stride_chain(x.size, blocks, threads, device_warp_size()), mag)
    idx = np.asarray(idx)
    return ({"out": np.full(idx.shape, total)}, {"out": np.full(idx.shape, tol)})


# ---- CPU baselines (honest labels) ----------------------------------------------------------------

def _numpy_sum(x, out):
    out[0] = np.sum(x, dtype=np.float32)


@njit_on_first_call
def _serial_loop():
    import numba

    @numba.njit(cache=False)
    def serial(x, out):
        acc = 0.0                   # float64: a float32 running sum of 2^28 values drifts
        for i in range(x.size):
            acc += x[i]
        out[0] = acc
    return serial


@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False)
    def parallel(x, out):
        acc = 0.0
        for i in numba.prange(x.size):
            acc += x[i]
        out[0] = acc
    return parallel


def _serial_sum(x, out):            # Baseline.run is called with keywords
    _serial_loop(x, out)


def _parallel_sum(x, out):
    _parallel_loop(x, out)


BASELINES = {
    "numpy": Baseline("NumPy x.sum(), pairwise float32 (1 core)", _numpy_sum),
    "serial": Baseline("numba.njit loop, float64 sum (1 core)", _serial_sum),
    "parallel": Baseline(f"numba.njit parallel, float64 sums ({cores()} cores)", _parallel_sum),
}



# ---- verdicts that say what a wrong sum usually means ------------------------------------------

def _close(got: float, candidate: float, tol: float) -> bool:
    return abs(got - candidate) <= max(tol, 1e-6 * abs(candidate))


def diagnose_sum(x: np.ndarray, got: float, blocks: int, threads: int, tol: float,
                 segment: bool, warp: int = 32) -> str:
    """What a wrong total most likely comes from, in words. ``segment``: the launch gives each
    block 2·threads elements (10.1); otherwise it is a grid-stride launch (10.3)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    n = x.size
    total = float(x.sum())
    if not np.isfinite(got):
        return ("the sum is not a number: the kernel added a value that was never set. Every "
                "shared-memory slot the tree reads must be written first: a thread whose elements "
                "lie past the end stores 0 (the neutral element of +), never leaves it unset.")
    if got == 0.0:
        return ("nothing reached out[0]: thread 0 of each block adds the block's sum with "
                "cuda.atomic.add(out, 0, block_sum) after the last barrier.")
    B, T = int(blocks), int(threads)
    if _close(got, B * total, tol * B) and B > 1:
        return (f"every element was counted {B} times, once per block: each block walked all of "
                "the data. A block's first element is at its own offset (blockIdx.x · blockDim.x "
                "· ...), and a grid-stride loop steps by cuda.gridsize(1).")
    if _close(got, 2 * total, 2 * tol):
        return "every element was counted twice: is the first addition during the load doubled?"
    if n > 1 and _close(got, total - x[-1], tol):
        return (f"the last element, x[{n - 1}], is missing: the bound is `i < n`, not "
                "`i < n - 1`.")
    if segment:
        per = 2 * T
        seg = [x[b * per:(b + 1) * per] for b in range(B)]
        firsts = sum(float(s[:T].sum()) for s in seg)
        if _close(got, firsts, tol) and firsts != total:
            return ("only the first half of each block's segment was added: each thread loads two "
                    "elements, x[i] and x[i + blockDim.x], with i = 2·blockDim.x·blockIdx.x + "
                    "threadIdx.x, and adds them while loading (the segment is 2·blockDim.x long).")
        full = (n // per) * per
        if full != n and _close(got, float(x[:full].sum()), tol):
            return ("the last block's segment is partial and was skipped: its threads whose "
                    "elements exist must still add them (store 0 for the ones past the end).")
        sums = [float(s.sum()) for s in seg]
        if B > 1 and any(_close(got, s, tol) for s in sums):
            return ("out[0] holds one block's sum: the blocks overwrote each other. Add each "
                    "block's sum with cuda.atomic.add(out, 0, ...), not out[0] = ... .")
        first = [float(s[0]) if s.size else 0.0 for s in seg]
        if _close(got, sum(first), tol):
            return ("out[0] is the sum of each block's first element only: the tree never ran, or "
                    "its steps never reached shared slot 0 (strides blockDim.x/2, ..., 2, 1).")
    else:
        grid = B * T
        if grid < n and _close(got, float(x[:grid].sum()), tol):
            return (f"exactly the first {grid} elements (blocks × threads) were added: each thread "
                    "took one element. Loop with a grid stride: `for i in range(cuda.grid(1), "
                    "x.size, cuda.gridsize(1))`.")
        if grid < n and _close(got, B * float(x[:T * -(-n // T)][:n].sum()), tol * B):
            return ("each block walked the whole array: the loop starts at cuda.threadIdx.x and "
                    "steps by cuda.blockDim.x. Start at cuda.grid(1), step by cuda.gridsize(1).")
        threads_of = np.arange(n) % grid           # the thread that owns element i
        per_block = [float(x[(threads_of // T) == b].sum()) for b in range(B)]
        if B > 1 and any(_close(got, s, tol) for s in per_block):
            return ("out[0] holds one block's sum: the blocks overwrote each other. Add each "
                    "block's sum with cuda.atomic.add(out, 0, ...), not out[0] = ... .")
        lane_of_block = threads_of % T
        warp0 = float(x[lane_of_block < warp].sum())
        if T > warp and _close(got, warp0, tol):
            return ("only the first warp of each block reached the total: after each warp's "
                    "shuffles, lane 0 of every warp writes its sum to shared memory, then (after "
                    "a barrier) the first warp adds those partial sums up.")
        lane0 = float(x[lane_of_block % warp == 0].sum())
        if _close(got, lane0, tol):
            return ("only lane 0's own elements reached the total: the shuffles did not add the "
                    "other lanes' values (v += cuda.shfl_down_sync(mask, v, offset), offsets "
                    "warp/2, ..., 2, 1).")
    full = (n // warp) * warp
    if full != n and _close(got, float(x[:full].sum()), tol):
        return (f"the last {n - full} elements, a partial warp, are missing: the lanes past the "
                "end of the data must still take part in the shuffles, with the value 0.")
    if got < total:
        return (f"the sum is short by {total - got:.6g}, about {(total - got) / (total / n):.3g} "
                "elements' worth: some elements were never added (a bound, a stride, or a "
                "barrier missing between a write and a read of shared memory).")
    return (f"the sum is too large by {got - total:.6g}, about {(got - total) / (total / n):.3g} "
            "elements' worth: some elements were added twice, or shared memory was read before it "
            "was set.")


def diagnose_warp_sums(x: np.ndarray, got: np.ndarray, warp: int) -> str:
    """What wrong per-warp sums most likely come from."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    n = x.size
    m = -(-n // warp)
    got = np.asarray(got, dtype=np.float64)

    def groups(size):
        k = -(-n // size)
        pad = np.zeros(k * size)
        pad[:n] = x
        return pad.reshape(k, size).sum(axis=1)

    exp = groups(warp)
    tol = 1e-5 * np.maximum(np.abs(exp), 1e-30)
    if warp != 32:
        g32 = groups(32)
        if np.allclose(got[:min(m, g32.size)], g32[:min(m, g32.size)], rtol=1e-5):
            return (f"each sum covers 32 elements, but this case runs warps of {warp} lanes: the "
                    "kernel assumes 32 somewhere (a lane or warp index with % 32 or // 32, "
                    "offsets starting at 16, a mask of 0xffffffff). Use cuda.warpsize, and a "
                    f"mask built from it: {FULL_MASK}.")
        half = np.zeros(m)
        for w in range(m):
            half[w] = x[w * warp:w * warp + warp // 2].sum()
        if np.allclose(got, half, rtol=1e-5):
            return (f"each sum covers only the first half of its warp: the offsets start at 16 "
                    f"(a warp of 32) but this warp has {warp} lanes: start at cuda.warpsize // 2.")
    if m > 1 and np.isnan(got[-1]) and not np.isnan(got[:-1]).any():
        return (f"the last warp is partial (its lanes cover only {n - (m - 1) * warp} elements) "
                "and wrote no sum. It still has one: count the warps as ceil(n / warpsize), and "
                "let the lanes past the end take part with 0.")
    firsts = x[::warp]
    if np.allclose(got, firsts, rtol=1e-5):
        return ("each sum is only lane 0's own element: the shuffles added nothing (v += "
                "cuda.shfl_down_sync(mask, v, offset), offset = warpsize // 2, ..., 2, 1).")
    wrong = np.flatnonzero(~(np.abs(got - exp) <= tol))
    if wrong.size and wrong[0] == m - 1 and n % warp:
        return ("only the partial last warp is wrong: its lanes past the end must take part in "
                "the shuffles with the value 0 (not skip them: a shuffle reads from lanes that "
                "must all be there).")
    return ("compare one warp's sum by hand: lanes w·warpsize ... w·warpsize + warpsize − 1 hold "
            "its elements, and lane 0 writes sums[w] after log2(warpsize) shuffle steps.")


RACE_OUT_HINT = (
    "two blocks wrote out[0] with a plain store or a plain `out[0] += block_sum` (a read, an "
    "add, a write): on a GPU blocks run in no fixed order and lose each other's sums. Use "
    "cuda.atomic.add(out, 0, block_sum), once per block.")
WARP_POISON_HINT = (
    "a shuffle read from a lane that did not take part (it had returned, skipped the call, or was "
    "left out of the mask): CUDA leaves that value undefined, and CPU mode makes it a NaN. Every "
    "lane of the warp takes part in the shuffles, with a mask that names them all "
    f"({FULL_MASK}); lanes without an element take part with 0.")
ACTIVEMASK_HINT = (
    "the shuffles' mask came from cuda.activemask(), which names only the lanes that happen to be "
    "converged where it is called, not the lanes the sum needs (NVIDIA's 'Using CUDA Warp-Level "
    "Primitives'): with independent thread scheduling a GPU may split the warp there, and CPU "
    "mode does so on purpose. Build the mask from the warp size, mask = "
    f"{FULL_MASK}, before any if, and let every lane call every shuffle.")
WARP_POISON_BITS = 0x7FFADBAD       # autograder.warp's float32 poison for an undefined read


def warp_poisoned(values) -> np.ndarray:
    """Where a float32 output holds CPU mode's value for an undefined shuffle read."""
    v = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    return v.view(np.uint32) == WARP_POISON_BITS
RACE_TREE_HINT = (
    "two threads used the same shared-memory slot between the same two barriers: in a tree every "
    "step reads what the previous step wrote, so put cuda.syncthreads() after the load into "
    "shared memory and after every step (outside the `if`, where every thread of the block "
    "reaches it).")

BARRIER_TREE_HINT = (
    "every thread of the block must reach every cuda.syncthreads(): keep the barrier after the "
    "`if t < stride:` (not inside it), and let threads without an element load 0 and stay in "
    "the kernel instead of returning early.")


class SumProblem(Problem):
    """A sum exercise: the tolerance is the error bound of the launch's chain of additions (so it
    needs the case's blocks and threads), and a wrong sum gets a diagnosis."""

    def __init__(self, name, *, chain, segment: bool, **kw):
        super().__init__(name, **kw)
        self.chain = chain              # (case) -> the longest chain of fp32 additions allowed
        self.segment = segment

    def case_tolerance(self, case: Case) -> float:
        return sum_tolerance(case.inputs["x"], self.chain(case))

    def tolerance_of(self, case, expected):
        return {"out": np.array([self.case_tolerance(case)])}

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        expected, tolerance = self.reference_values(case)
        verdict = compare(self.name, case.describe(), expected, outcome, tolerance,
                          {"out": np.dtype(np.float32)})
        if verdict.passed:
            return verdict
        if outcome.error:
            if "GlobalMemoryRace" in outcome.error or "global-memory race" in outcome.error:
                verdict.hint = RACE_OUT_HINT
            elif "shared-memory race" in outcome.error:
                verdict.hint = RACE_TREE_HINT
            elif "BarrierDivergence" in outcome.error:
                verdict.hint = BARRIER_TREE_HINT
            elif "shuffle outside its mask" in outcome.error:
                verdict.hint = ACTIVEMASK_HINT
            return verdict
        got = outcome.outputs.get("out")
        if got is not None and np.asarray(got).shape == (1,) and warp_poisoned(got).any():
            verdict.message = "out[0] is NaN: the value of an undefined shuffle read"
            verdict.hint = WARP_POISON_HINT
        elif got is not None and np.asarray(got).shape == (1,):
            got = float(np.asarray(got)[0])
            total = float(expected["out"][0])
            verdict.message += (f"\n  off by {abs(got - total):.3g}, {abs(got - total) / tolerance['out'][0]:.3g}"
                                " times the allowed error (the fp32 bound for this launch)")
            verdict.hint = diagnose_sum(case.inputs["x"], got, case.blocks, case.threads,
                                        float(tolerance["out"][0]), self.segment,
                                        device_warp_size())
        return verdict


def _sum_label(n) -> str:
    return f"n = {int(n)} value{'s' * (int(n) != 1)}"


def _sum_problem(name, title, **kw):
    return SumProblem(
        name, title=title, spec=_spec, make_inputs=_inputs, outputs=_outputs,
        tolerance=lambda inputs, expected: {"out": np.zeros(1)},    # see SumProblem.judge
        launch=_launch, bytes_moved=_bytes_moved, flops=lambda n: int(n), baselines=BASELINES,
        size_label=_sum_label, race_check_outputs=True, vendor=cupy_sum,
        vendor_label="cupy.sum", **kw)


# ---- 10.1 the tree in shared memory, one segment of 2·blockDim.x elements per block -------------

def segment_blocks(n: int, threads: int) -> int:
    """Blocks for a kernel in which each block sums 2·threads elements."""
    return max(1, -(-int(n) // (2 * int(threads))))


reduce_tree = _sum_problem(
    "reduce_tree",
    "A sum: a convergent tree in shared memory per block of 2·blockDim.x elements, one atomic "
    "per block",
    chain=lambda case: tree_chain(case.blocks, case.threads), segment=True,
    block_sizes=(32, 64, 128, 256), visible_block_size=64, blocks_for=segment_blocks,
    # 601: 5 blocks, the last one partial; 100: shorter than one block's segment (128); 1.
    # Hidden: 31, fewer elements than any block has threads.
    cpu_sizes=Sizes(visible=(601, 100, 1), hidden=(531, 31, 2405), hidden_random=(2, 2, 800)),
    gpu_sizes=Sizes(visible=(10_000_001, 601, 100, 1), hidden=(531, 31, 16_777_219),
                    hidden_random=(3, 100_000, 30_000_000)),
)


# ---- 10.2 warp sums with shuffles, for any warp size ----------------------------------------------

def _warp_label(size) -> str:
    n, warp = size
    return f"n = {int(n)} value{'s' * (int(n) != 1)} at warp size {int(warp)}"


def _warp_outputs(size):
    n, warp = size
    return {"sums": ((max(1, -(-int(n) // int(warp))),), np.float32)}


def _warp_spec(x, warp_size, **launch):
    warp = int(warp_size)
    n = x.size
    m = max(1, -(-n // warp))
    pad = np.zeros(m * warp)
    pad[:n] = np.asarray(x, dtype=np.float64)
    return {"sums": pad.reshape(m, warp).sum(axis=1)}


def _warp_tolerance(inputs, expected):
    x = np.asarray(inputs["x"], dtype=np.float64)
    warp = int(inputs["warp_size"])
    m = expected["sums"].size
    pad = np.zeros(m * warp)
    pad[:x.size] = np.abs(x)
    mags = pad.reshape(m, warp).sum(axis=1)
    return {"sums": gamma(warp_chain(warp)) * mags + gamma(8, U64) * mags + TINY32}


PORTABILITY_NOTE = (
    "this GPU runs warps of {warp} lanes only, so the hidden tests ran your kernel at warp size "
    "{warp}; whether it is right at the other warp size ({other}) was NOT checked here (CPU mode "
    "runs both: AAG_BACKEND=cpu).")


def _off_multiples(sizes) -> list[int]:
    """Random sizes, moved off multiples of 32 (a last warp with all its lanes is no test)."""
    return [int(s) + (int(s) % 32 == 0) for s in sizes]


class WarpSumsProblem(Problem):
    """10.2: sizes are (n, warp size) pairs; the hidden cases in CPU mode run at warp sizes 32
    and 64 (``portable_warp_sizes``), on a GPU at the device's only."""

    portable_warp_sizes = (32, 64)

    def warp_sizes(self, hidden: bool) -> tuple[int, ...]:
        if hidden and not device.current().is_gpu:
            return self.portable_warp_sizes
        return (device_warp_size(),)

    def _make_cases(self, ns_and_warps, rng) -> list[Case]:
        cases = []
        shapes = self.block_size_cycle(rng, len(ns_and_warps))
        for (n, warp), threads in zip(ns_and_warps, shapes):
            x = make_values(n, rng)
            case = Case(size=(int(n), int(warp)), inputs={"x": x, "warp_size": int(warp)},
                        blocks=-(-int(n) // threads), threads=threads)
            case.label = _warp_label(case.size)
            cases.append(case)
        return cases

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = self.sizes
        if not hidden:
            warp = device_warp_size()
            cases = []
            for n in sizes.visible:
                case = self._make_cases([(n, warp)], rng)[0]
                case.threads = self.visible_block_size
                case.blocks = -(-int(n) // case.threads)
                cases.append(case)
            return cases
        warps = self.warp_sizes(True)
        count, lo, hi = sizes.hidden_random
        ns = list(sizes.hidden) + _off_multiples(rng.integers(lo, hi, size=count))
        # Alternate the warp sizes, the larger first: every hidden run has both (in CPU mode).
        pairs = [(n, warps[(len(warps) - 1 - i) % len(warps)]) for i, n in enumerate(ns)]
        return self._make_cases(pairs, rng)

    def portability_cases(self, warp: int = 64, seed: int | None = None) -> list[Case]:
        """CPU-mode cases at one warp size whatever this process's backend: for a judge on a GPU
        machine that runs them in a CPU-mode student process (a GPU cannot run warp size 64)."""
        rng = np.random.default_rng(self.case_seed(True) if seed is None else seed)
        count, lo, hi = self.cpu_sizes.hidden_random
        ns = list(self.cpu_sizes.hidden) + _off_multiples(rng.integers(lo, hi, size=count))
        return self._make_cases([(n, warp) for n in ns], rng)

    def gpu_note(self) -> str:
        """What a hidden check on a GPU could not check (empty in CPU mode)."""
        if not device.current().is_gpu:
            return ""
        warp = device_warp_size()
        others = [w for w in self.portable_warp_sizes if w != warp]
        return PORTABILITY_NOTE.format(warp=warp, other=", ".join(map(str, others)))

    def check_hidden(self, submission) -> None:
        super().check_hidden(submission)
        note = self.gpu_note()
        if note:
            print("ℹ " + note)

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        verdict = super().judge(case, outcome, show_inputs=False)
        if verdict.passed or outcome.error:
            if outcome.error and "leaves out its own lane" in outcome.error:
                verdict.hint = (f"at warp size {case.size[1]} a mask must name all the lanes that "
                                "call: a literal 0xffffffff names only 32 of them. Build it from "
                                f"the warp size: mask = {FULL_MASK}.")
            elif outcome.error and "shuffle outside its mask" in outcome.error:
                verdict.hint = ACTIVEMASK_HINT
            elif outcome.error and "out of bounds" in outcome.error and int(case.size[1]) != 32:
                verdict.hint = (f"a sum was written past the end of `sums` (ceil(n / {case.size[1]}) "
                                "entries at this warp size): is a warp index computed with // 32 "
                                "instead of // cuda.warpsize?")
            return verdict
        got = outcome.outputs.get("sums")
        if got is not None and warp_poisoned(got).any():
            bad = np.flatnonzero(warp_poisoned(got))
            verdict.message = (f"`sums`[{bad[0]}] is NaN: the value CPU mode gives a shuffle that "
                               f"read from lanes that did not take part ({bad.size} of "
                               f"{np.asarray(got).size} sums)")
            verdict.hint = WARP_POISON_HINT
        elif got is not None:
            verdict.hint = diagnose_warp_sums(case.inputs["x"], got, int(case.size[1]))
        return verdict


WARP_BLOCKS = (64, 128, 256)        # multiples of 64: whole warps at warp size 32 and 64

warp_sums = WarpSumsProblem(
    "warp_sums", title="The sum of every warp's elements with shuffles, for any warp size",
    spec=_warp_spec, make_inputs=_inputs, outputs=_warp_outputs, tolerance=_warp_tolerance,
    launch=_warp_launch, block_sizes=WARP_BLOCKS, visible_block_size=64,
    # 501: 16 warps of 32 (the last one with 21 lanes of data) at warp size 32; 70: 3 warps, the
    # last with 6 elements; 1. Hidden, alternating warp sizes 64 and 32 (601 and 40 at 64).
    cpu_sizes=Sizes(visible=(501, 70, 1), hidden=(601, 399, 40, 2005), hidden_random=(2, 2, 700)),
    gpu_sizes=Sizes(visible=(10_000_003, 501, 70, 1), hidden=(601, 399, 40, 16_777_219),
                    hidden_random=(3, 100_000, 30_000_000)),
    bytes_moved=lambda size: 4 * int(size[0]) + 4 * -(-int(size[0]) // int(size[1])),
    size_label=_warp_label,
)


# ---- 10.3 grid-stride accumulation, shuffles, one atomic per block ---------------------------------

def few_blocks(n: int, threads: int) -> int:
    """2 to 4 blocks (CPU mode) or a few dozen (GPU): far fewer threads than elements, so only a
    grid-stride loop covers the data, and several blocks add into out[0]."""
    if device.current().is_gpu:
        return max(2, min(-(-int(n) // int(threads)), 96 + (int(n) // int(threads)) % 37))
    return 2 + (int(n) // int(threads)) % 3


reduce_sum = _sum_problem(
    "reduce_sum",
    "A sum: grid-stride accumulation, warp shuffles, one atomic per block",
    chain=lambda case: grid_stride_chain(case.size, case.blocks, case.threads,
                                         device_warp_size()),
    segment=False, block_sizes=(64, 128, 256), visible_block_size=128, blocks_for=few_blocks,
    speed_inputs=_speed_inputs, speed_launch=speed_shape, sample_spec=_speed_sample,
    # 3001: 2 to 4 blocks of 128 threads, ~8 elements per thread; 100: fewer than one block; 1.
    # Hidden 4099: more than 4 elements per thread whichever block size the case draws.
    cpu_sizes=Sizes(visible=(3001, 100, 1), hidden=(4099, 63, 12007), hidden_random=(2, 2, 2999)),
    gpu_sizes=Sizes(visible=(10_000_001, 3001, 100, 1), hidden=(1025, 63, 16_777_219),
                    hidden_random=(3, 100_000, 30_000_000), speed=1 << 28),
    reference=reference_sum,
    # H200 (docs/benchmarks.md): the reference 0.252 ms at 2^28 (101% of a copy, 95% of cupy.sum's
    # speed); the notebook's solution 0.329 ms in its speed test (77%), 803x the serial loop.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="serial", min_speedup=20.0),
)


# ---- 10.4 predict: a bound on a reduction's time -------------------------------------------------

def _bound_spec(n, blocks, threads, resident_blocks, bandwidth, step_time, atomic_rate):
    reading = 4.0 * n / bandwidth
    waves = np.ceil(blocks / resident_blocks)
    tree = waves * np.log2(threads) * step_time
    atomics = blocks / atomic_rate
    return {"seconds": np.maximum(np.maximum(reading, tree), atomics)}


# The chapter's figures (round numbers of the order an H200 shows; not measurements).
BANDWIDTH = 4.8e12              # bytes per second
STEP_TIME = 40e-9               # seconds per tree step (shared load, add, store, barrier)
ATOMIC_RATE = 5e8               # atomics on one global address per second: ch09's GLOBAL_ADDRESS_RATE
RESIDENT = 132 * 8              # blocks of 256 threads the GPU holds at once: 132 SMs × 8
N_MEASURE = 1 << 28


def _bound_inputs(rng, count):
    n = np.floor(10.0 ** rng.uniform(3, 10, count))
    threads = 2.0 ** rng.integers(5, 11, count)                 # 32 .. 1024
    per_thread = 2.0 ** rng.integers(0, 8, count)
    blocks = np.maximum(1.0, np.ceil(n / (threads * per_thread)))
    resident = rng.integers(1, 4097, count).astype(np.float64)
    bandwidth = 10.0 ** rng.uniform(10.5, 13, count)            # 30 GB/s .. 10 TB/s
    step_time = 10.0 ** rng.uniform(-8.5, -6.5, count)          # 3 ns .. 300 ns
    atomic_rate = 10.0 ** rng.uniform(7, 11, count)
    # First cases: the chapter's device on 2^28 values; segments of 512 (PMPP §10.3-10.7), of
    # 4096 (coarsened ×8, §10.8), and a grid-stride grid of 4 blocks per SM; then a slower
    # memory; one element.
    T = 256
    figures = [(N_MEASURE, N_MEASURE // (2 * T), T, RESIDENT, BANDWIDTH, STEP_TIME, ATOMIC_RATE),
               (N_MEASURE, N_MEASURE // (2 * COARSE * T), T, RESIDENT, BANDWIDTH, STEP_TIME,
                ATOMIC_RATE),
               (N_MEASURE, 132 * 4, T, RESIDENT, BANDWIDTH, STEP_TIME, ATOMIC_RATE),
               (N_MEASURE, N_MEASURE // (2 * T), T, RESIDENT, 3e11, STEP_TIME, ATOMIC_RATE),
               (1, 1, T, RESIDENT, BANDWIDTH, STEP_TIME, ATOMIC_RATE)]
    for i, row in enumerate(figures[:count]):
        (n[i], blocks[i], threads[i], resident[i], bandwidth[i], step_time[i],
         atomic_rate[i]) = row
    return {"n": n, "blocks": blocks, "threads": threads, "resident_blocks": resident,
            "bandwidth": bandwidth, "step_time": step_time, "atomic_rate": atomic_rate}


def _bound_tolerance(inputs, expected):
    # A handful of float64 roundings in any order of evaluation: 64 u relative is generous.
    return {"seconds": 64 * U64 * expected["seconds"]}


reduce_time_bound = formula_problem(
    "reduce_time_bound",
    title="Three ceilings on a reduction's speed: reading, the tree's steps, the atomics",
    function="reduce_time_bound",
    args=(("n", int), ("blocks", int), ("threads", int), ("resident_blocks", int),
          ("bandwidth", float), ("step_time", float), ("atomic_rate", float)),
    results=("seconds",), spec=_bound_spec, make_inputs=_bound_inputs,
    tolerance=_bound_tolerance, sizes=Sizes(visible=(8,), hidden=(200,)),
    value_hint=("the bound is the largest of three times: 4·n / bandwidth (reading the float32 "
                "values once), ceil(blocks / resident_blocks) · log2(threads) · step_time (the "
                "waves of blocks, each paying its tree's steps one after another), and "
                "blocks / atomic_rate (one atomic per block, all on out[0], one after another)."),
)
