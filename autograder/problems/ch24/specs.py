"""Chapter 24's graded exercises: a row softmax one thread per row (24.1), one warp per row with
the partial (m, d) pairs merged by shuffles (24.2, timed on a GPU), the error bound the checks
use (24.3), and a row softmax in Triton (24.4, timed on a GPU); the inputs, the float64 spec, the
tolerance, the launches and the CPU baselines.

A case's size is ``(rows, cols)``: ``x`` float32 ``[rows, cols]``, ``y`` the same shape."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import HINT_2D_UNWRITTEN, TINY32, U32, is_poison
from autograder.grading.problem import Baseline, Case, Problem, Sizes, SpeedBar
from autograder.machine import device
from autograder.problems.ch24.references import (reference_softmax_rows, reference_softmax_triton,
                                                 reference_softmax_warp)
from autograder.problems.kit import cores, formula_problem, njit_on_first_call
from autograder.problems.kit.triton import TritonExercise

U64 = 2.0 ** -53
EXP_ULPS = 2.0          # CUDA's expf (what math.exp on a float32 compiles to): at most 2 ulp
NEG_INF = np.float32(-np.inf)


# ---- inputs: offsets and scales up to 1e4, masked entries ----------------------------------------

def make_rows(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    """float32 ``[rows, cols]``: each row an offset plus a scale times normal noise, the offset
    up to ±10^4 (so exp without the maximum subtracted overflows), the scale 10^-1 .. 10^1.5.
    Row r's mask by r mod 5: 0 none; 1 a prefix of −inf (a padded sequence, and the trap of an
    online softmax that starts from m = −inf); 2 about a fifth of the entries −inf; 3 every
    entry −inf (a fully masked row) once there are at least 4 rows; 4 a suffix of −inf (a causal
    mask). Row 0's offset is always above 100."""
    rows, cols = int(rows), int(cols)
    offset = np.where(rng.random(rows) < 0.7, rng.uniform(-1e4, 1e4, rows),
                      rng.uniform(-5.0, 5.0, rows))
    offset[0] = rng.uniform(100.0, 1e4)
    scale = 10.0 ** rng.uniform(-1.0, 1.5, rows)
    x = (offset[:, None] + scale[:, None] * rng.standard_normal((rows, cols))).astype(np.float32)
    for r in range(rows):
        kind = r % 5
        if kind == 1 and cols > 1:
            x[r, :rng.integers(1, cols)] = NEG_INF
        elif kind == 2 and cols > 1:
            x[r, rng.random(cols) < 0.2] = NEG_INF
        elif kind == 3 and rows >= 4:
            x[r, :] = NEG_INF
        elif kind == 4 and cols > 1:
            x[r, rng.integers(1, cols):] = NEG_INF
    return x


def make_rows_fast(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    """Speed-test rows: normal values with an offset per row, no mask, made in float32."""
    x = rng.standard_normal((int(rows), int(cols)), dtype=np.float32)
    x += rng.uniform(-50.0, 50.0, (int(rows), 1)).astype(np.float32)
    return x


# ---- the spec and its error bound ----------------------------------------------------------------

def softmax_host(x) -> np.ndarray:
    """y = exp(x − m) / Σ exp(x − m) per row in float64, m the row's maximum; −inf entries give
    0, and a row of −inf only gives 0 everywhere (the course's rule)."""
    x = np.asarray(x, np.float64)
    m = x.max(axis=1, keepdims=True) if x.shape[1] else np.zeros((x.shape[0], 1))
    empty = ~np.isfinite(m)                              # every entry −inf
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - np.where(empty, 0.0, m))
    e[np.broadcast_to(empty, e.shape)] = 0.0
    s = e.sum(axis=1, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def _g(a):
    """a / (1 − a): a bound on |Π(1 + δ_i) − 1| when Σ|δ_i| ≤ a < 1 (Higham's γ, for a not a
    whole number of roundings)."""
    return a / (1.0 - a)


def softmax_tolerance(x, chain: int, exp_ulps: float = EXP_ULPS, spread_units: float = 1.0,
                      divide_units: float = 2.0) -> np.ndarray:
    """How far a float32 softmax may be from the float64 one, per element (see the package's
    docstring for the derivation). ``chain``: the longest sequence of (rescale, add) steps a term
    passes through on its way into the row's sum d (``cols`` for one thread per row).
    ``spread_units``: the exponentials' argument errors, in units of u times the spread (1: the
    subtraction only; Triton's exp adds a multiply by a rounded log2 e, :data:`TRITON_SPREAD`);
    ``divide_units``: the division's relative error in u (2: a reciprocal and a multiply, or an
    IEEE division; 5: Triton's 2-ulp ``div.full.f32``, or its reciprocal and a multiply)."""
    x = np.asarray(x, np.float64)
    y = softmax_host(x)
    m = x.max(axis=1, keepdims=True) if x.shape[1] else np.zeros((x.shape[0], 1))
    live = np.isfinite(x) & np.isfinite(m)
    t = np.where(live, m - np.where(live, x, 0.0), 0.0)           # spread m − x_k ≥ 0
    e = np.where(live, np.exp(-t), 0.0)
    c = float(chain)
    s = float(spread_units)
    term = _g((2 * c + 2 * exp_ulps * (1 + c) + s * t) * U32)     # each term of d
    d = e.sum(axis=1, keepdims=True)
    r = np.divide((e * term).sum(axis=1, keepdims=True), d, out=np.zeros_like(d), where=d > 0)
    own = _g((2 * exp_ulps + divide_units + s * t) * U32)         # exp, subtraction, division
    return y * ((own + r) / (1.0 - r)) + 16 * U64 * y + TINY32


def rows_chain(cols: int) -> int:
    """24.1: one thread folds all ``cols`` values in turn."""
    return max(int(cols), 1)


def warp_chain(cols: int, warp: int) -> int:
    """24.2: a lane's own columns, up to three more for wide loads, then log2(warp) merges."""
    return -(-int(cols) // int(warp)) + 3 + int(warp).bit_length() - 1


def _size_label(size) -> str:
    rows, cols = (int(v) for v in size[:2])
    text = f"x {rows} × {cols} (rows × columns)"
    return text + (f" at warp size {int(size[2])}" if len(size) > 2 else "")


def _outputs(size):
    return {"y": ((int(size[0]), int(size[1])), np.float32)}


def _spec(x, **launch):
    return {"y": softmax_host(x)}


def rows_bytes(size) -> int:
    """The least a softmax moves: x read once, y written once (float32)."""
    return 8 * int(size[0]) * int(size[1])


def rows_flops(size) -> int:
    """About five operations a value: a comparison, a subtraction, an exponential counted as one,
    an addition, a division."""
    return 5 * int(size[0]) * int(size[1])


# ---- CPU baselines -------------------------------------------------------------------------------

def _numpy_softmax(x, y, **_):   # the speed inputs' warp_size is the kernel's, not NumPy's
    m = x.max(axis=1, keepdims=True)
    np.subtract(x, m, out=y)
    np.exp(y, out=y)
    y /= y.sum(axis=1, keepdims=True)


@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False, fastmath=False)
    def rows(x, y):
        for r in numba.prange(x.shape[0]):
            m = -np.inf
            for j in range(x.shape[1]):
                m = max(m, x[r, j])
            s = 0.0
            for j in range(x.shape[1]):
                v = np.exp(x[r, j] - m)
                y[r, j] = v
                s += v
            for j in range(x.shape[1]):
                y[r, j] /= s
    return rows


def _parallel_softmax(x, y, **_):
    _parallel_loop(x, y)


BASELINES = {
    "numpy": Baseline("NumPy max, exp, sum, divide (1 core)", _numpy_softmax),
    "parallel": Baseline(f"numba.njit parallel over rows ({cores()} cores)", _parallel_softmax),
}


# ---- verdicts that say what a NaN usually means --------------------------------------------------

def diagnose_softmax(x: np.ndarray, got: np.ndarray) -> str:
    """What NaN or inf in a softmax's output most likely comes from, in words ('' if neither).
    The checks fill ``y`` with NaN before a call, so a NaN may also be an output never written."""
    x = np.asarray(x)
    got = np.asarray(got)
    if got.shape != x.shape:
        return ""
    bad = ~np.isfinite(got)
    if not bad.any():
        return ""
    full = np.all(np.isneginf(x), axis=1)
    lead = np.isneginf(x[:, 0]) & ~full if x.shape[1] else np.zeros(x.shape[0], bool)
    rows_bad = bad.any(axis=1)
    if rows_bad[full].any() and not rows_bad[~full].any():
        return ("only the rows whose values are all −inf are wrong (NaN: never written, or 0/0): "
                "such a row has no softmax, and the course's rule sets it to 0 everywhere. After "
                "the fold, d is still 0 for it: write 0 when d is 0, and never compute "
                "exp(−inf − (−inf)).")
    if rows_bad[lead].any() and not rows_bad[~lead & ~full].any():
        return ("the rows that start with −inf (a padded sequence) are NaN: with m = −inf at the "
                "start, exp(m − v) or exp(v − m) for a value v = −inf is exp(−inf − (−inf)) = "
                "exp(NaN), and the NaN stays in d. Skip −inf values (they add nothing), and in a "
                "merge leave two empty pairs (both m = −inf) as they are. A row of −inf only is "
                "all 0.")
    finite = np.where(np.isfinite(x), x, -np.inf)
    big = finite.max(axis=1) > 88.7 if x.shape[1] else np.zeros(x.shape[0], bool)
    if rows_bad[big].any() and not rows_bad[~big & ~full].any():
        return ("only rows with values above 88.7 are NaN or inf: exp overflows float32 there "
                "(inf / inf is NaN). Subtract the row's maximum before every exp.")
    return ""


OVERFLOW_HINT = ("exp overflowed: the checks' values go up to 1e4, and exp(x) passes float32's "
                 "largest value for x > 88.7 (on a GPU it returns inf, and inf / inf is NaN; in "
                 "CPU mode Python's math.exp computes in float64 and raises past 709.8). "
                 "Subtract the row's maximum before every exp.")


class SoftmaxProblem(Problem):
    """A row softmax: a wrong verdict with NaN or inf in ``y`` says which rows and why."""

    def judge(self, case, outcome, show_inputs: bool = True):
        verdict = super().judge(case, outcome, show_inputs)
        if not verdict.passed and outcome.error and "math range error" in outcome.error:
            verdict.hint = OVERFLOW_HINT
            return verdict
        got = outcome.outputs.get("y") if outcome.outputs else None
        if not verdict.passed and not outcome.error and got is not None:
            hint = diagnose_softmax(case.inputs["x"], got)
            if hint:
                verdict.hint = hint
        return verdict


# ---- 24.1 one thread per row ---------------------------------------------------------------------

def _inputs(rng, size):
    return {"x": make_rows(rng, size[0], size[1])}


def _rows_tolerance(inputs, expected):
    x = inputs["x"]
    return {"y": softmax_tolerance(x, rows_chain(x.shape[1]))}


def _rows_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["x"], outputs["y"])


# (rows, cols). Visible: 70 rows (two blocks of 64, the second partial) of 33 columns, 5 rows of
# 300, one value. Hidden: 9 rows of 1100 (4 times the largest visible), 131 short rows, 4 × 2,
# two random shapes.
softmax_rows = SoftmaxProblem(
    "softmax_rows", title="A row softmax, one thread per row, online: m and d in one read",
    spec=_spec, make_inputs=_inputs, outputs=_outputs, tolerance=_rows_tolerance,
    launch=_rows_launch, block_sizes=(32, 64, 128), visible_block_size=64,
    blocks_for=lambda size, t: max(1, -(-int(size[0]) // int(t))),
    cpu_sizes=Sizes(visible=((70, 33), (5, 300), (1, 1)),
                    hidden=((9, 1100), (131, 7), (4, 2)), hidden_random=(2, 1, 90)),
    gpu_sizes=Sizes(visible=((4099, 1000), (70, 33), (5, 300), (1, 1)),
                    hidden=((3, 65536), (1001, 1025), (4, 2)), hidden_random=(3, 1, 3000)),
    bytes_moved=rows_bytes, flops=rows_flops, baselines=BASELINES,
    reference=reference_softmax_rows, size_label=_size_label,
    value_hint=("y[r, j] = exp(x[r, j] − m) / d with m the row's largest value and d the sum of "
                "exp(x[r, k] − m) over the row. Keep a running pair: when a value v exceeds m, "
                "d becomes d · exp(m − v) + 1 and m becomes v; otherwise d grows by exp(v − m). "
                "An entry of −inf adds nothing (and exp(−inf − (−inf)) is NaN: never evaluate "
                "it), and a row of −inf only is all 0."),
)


# ---- 24.2 one warp per row, shuffles -------------------------------------------------------------

WARP_BLOCKS = (64, 128)         # whole warps at warp size 32 and 64
SPEED_SHAPE = (16384, 4096)     # 2^26 values: 256 MiB read, 256 MiB written


def warp_blocks(rows: int, threads: int, warp: int = 32) -> int:
    """Blocks giving about a quarter as many warps as there are rows (at least one block, at
    most three in CPU mode, where the simulator pays per block): only a grid-stride loop over the
    rows covers them all."""
    per_block = max(1, int(threads) // int(warp))
    blocks = max(1, -(-int(rows) // (4 * per_block)))
    return blocks if device.current().is_gpu else min(blocks, 3)


def _warp_inputs(rng, size):
    return {"x": make_rows(rng, size[0], size[1]), "warp_size": int(size[2])}


def _warp_tolerance(inputs, expected):
    x = inputs["x"]
    warp = int(inputs.get("warp_size", 32))
    # A chain for warps of 32 is at least as long as for 64: the bound holds at either.
    return {"y": softmax_tolerance(x, warp_chain(x.shape[1], min(warp, 32)))}


def _warp_launch(kernel, inputs, outputs, case):
    from autograder.problems.ch10 import at_warp_size
    with at_warp_size(int(inputs["warp_size"])):
        kernel[case.blocks, case.threads](inputs["x"], outputs["y"])


def _device_warp() -> int:
    return int(device.current().warp_size)


def _speed_launch(size):
    from numba import cuda as numba_cuda
    sms = numba_cuda.get_current_device().MULTIPROCESSOR_COUNT
    rows = int(size[0])
    return max(1, min(sms * 8, -(-rows * _device_warp() // 256))), 256


def _speed_inputs(rng, size):
    return {"x": make_rows_fast(rng, size[0], size[1]), "warp_size": _device_warp()}


def _sample_rows(x, idx, tolerance_of_row):
    """Expected values and tolerances at flat indices ``idx`` of a softmax of ``x``, computed for
    the rows they fall in only; ``tolerance_of_row(row)`` the tolerance of a [1, cols] row."""
    idx = np.asarray(idx)
    rows = idx // x.shape[1]
    exp = np.empty(idx.size)
    tol = np.empty(idx.size)
    for r in np.unique(rows):
        at = rows == r
        row = x[r:r + 1]
        exp[at] = softmax_host(row)[0, idx[at] % x.shape[1]]
        tol[at] = tolerance_of_row(row)[0, idx[at] % x.shape[1]]
    return {"y": exp}, {"y": tol}


def _speed_sample(inputs, idx):
    """Expected values and tolerances at flat indices ``idx``: only the rows they fall in."""
    x = inputs["x"]
    chain = warp_chain(x.shape[1], 32)
    return _sample_rows(x, idx, lambda row: softmax_tolerance(row, chain))


class WarpSoftmaxProblem(SoftmaxProblem):
    """24.2: sizes are (rows, cols, warp size); hidden cases in CPU mode alternate warp sizes 64
    and 32; on a GPU the device's own, and the judge runs :meth:`portability_cases` at the other
    in a CPU-mode process."""

    portable_warp_sizes = (32, 64)

    def _cases(self, shapes, warps, rng, visible: bool) -> list[Case]:
        threads = ([self.visible_block_size] * len(shapes) if visible
                   else self.block_size_cycle(rng, len(shapes)))
        cases = []
        for (rows, cols), warp, t in zip(shapes, warps, threads):
            size = (int(rows), int(cols), int(warp))
            case = Case(size=size, inputs=_warp_inputs(rng, size), label=_size_label(size))
            case.threads, case.blocks = int(t), warp_blocks(rows, t, warp)
            cases.append(case)
        return cases

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = self.sizes
        if not hidden:
            shapes = [s[:2] for s in sizes.visible]
            return self._cases(shapes, [_device_warp()] * len(shapes), rng, True)
        count, lo, hi = sizes.hidden_random
        # Random shapes: columns in [lo, hi), rows in [lo, hi / 16) (the simulator pays for
        # every row a warp takes in turn; the columns are what 24.2 is about).
        shapes = [s[:2] for s in sizes.hidden] + [
            (int(rng.integers(lo, max(lo + 1, hi // 16))), int(rng.integers(lo, hi)))
            for _ in range(count)]
        if device.current().is_gpu:
            warps = [_device_warp()] * len(shapes)
        else:
            warps = [(64, 32)[i % 2] for i in range(len(shapes))]
        return self._cases(shapes, warps, rng, False)

    def portability_cases(self, warp: int = 64, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(self.case_seed(True) if seed is None else seed)
        shapes = [s[:2] for s in self.cpu_sizes.hidden]
        return self._cases(shapes, [int(warp)] * len(shapes), rng, False)


softmax_warp = WarpSoftmaxProblem(
    "softmax_warp",
    title="A row softmax, one warp per row: lanes' (m, d) pairs merged with shuffles",
    spec=_spec, make_inputs=_warp_inputs, outputs=_outputs, tolerance=_warp_tolerance,
    launch=_warp_launch, block_sizes=WARP_BLOCKS, visible_block_size=64,
    # (rows, cols, warp size: the device's for the visible cases). Visible: 9 rows of 100 (a
    # partial last lane round at 32 and 64), 4 rows of 1, 3 of 65. Hidden, warp sizes 64 and 32
    # in turn: 5 × 777 (4 times the largest visible), 6 × 64, 7 × 5, two random shapes.
    cpu_sizes=Sizes(visible=((9, 100, 32), (4, 1, 32), (3, 65, 32)),
                    hidden=((5, 777, 32), (6, 64, 32), (7, 5, 32)), hidden_random=(2, 1, 200)),
    gpu_sizes=Sizes(visible=((4099, 4097, 32), (9, 100, 32), (4, 1, 32), (3, 65, 32)),
                    hidden=((3, 65536, 32), (5000, 1025, 32), (13, 5, 32)),
                    hidden_random=(3, 1, 5000), speed=SPEED_SHAPE),
    bytes_moved=rows_bytes, flops=rows_flops, baselines=BASELINES,
    reference=reference_softmax_warp, speed_inputs=_speed_inputs, speed_launch=_speed_launch,
    sample_spec=_speed_sample, size_label=_size_label,
    # The reference reads each row twice (its pair, then the outputs) and writes it once; the
    # second read mostly hits the caches. Half its speed leaves room for a plainer kernel.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=20.0),
    value_hint=("each lane folds its columns lane, lane + W, ... (W = cuda.warpsize) into a pair "
                "(m, d); then for offset = W/2, ..., 2, 1 it takes its partner's pair with "
                "cuda.shfl_xor_sync and merges: m' = max(m, m2), d' = d · exp(m − m') + d2 · "
                "exp(m2 − m'), skipping the merge when both m are −inf. After log2(W) steps every "
                "lane holds the row's pair and writes y at its own columns. The warps stride over "
                "the rows (more rows than warps)."),
)


# ---- 24.3 the error bound ------------------------------------------------------------------------

def _bound_spec(chain, exp_ulps, spread):
    a = (2 * chain + 2 * exp_ulps * (1 + chain) + spread) * U32
    r = a / (1 - a)
    b = (2 * exp_ulps + 2 + spread) * U32
    g = b / (1 - b)
    return {"sum_bound": r, "y_bound": (g + r) / (1 - r)}


WORKED = ((65536, 2.0, 0.0), (2048 // 32 + 3 + 5, 2.0, 20.0), (1, 0.5, 0.0))


def _bound_inputs(rng, count):
    chain = np.floor(10.0 ** rng.uniform(0, 5, count))
    exp_ulps = rng.choice([0.5, 1.0, 2.0, 4.0, 8.0], count)
    spread = np.where(rng.random(count) < 0.3, 0.0, rng.uniform(0, 104, count))
    k = min(count, len(WORKED))
    chain[:k], exp_ulps[:k], spread[:k] = np.array(WORKED[:k], np.float64).T
    return {"chain": chain, "exp_ulps": exp_ulps, "spread": spread}


def _bound_tolerance(inputs, expected):
    # The same few float64 operations in another order: 1e-8 relative (the largest result is of
    # order 1e-2, the roundings' effect of order 1e-16 / 1e-7 at worst).
    return {k: 1e-8 * np.abs(v) for k, v in expected.items()}


softmax_error_bound = formula_problem(
    "softmax_error_bound",
    title="The error bound of a float32 online softmax: the row's sum and each output",
    function="softmax_error_bound",
    args=(("chain", int), ("exp_ulps", float), ("spread", float)),
    results=("sum_bound", "y_bound"), spec=_bound_spec, make_inputs=_bound_inputs,
    tolerance=_bound_tolerance, sizes=Sizes(visible=(3,), hidden=(200,)),
    value_hint=("with u = 2^-24: a term of d goes through chain steps, each a multiply and an "
                "add (a rounding each) and an exponential (2·exp_ulps·u), plus its own "
                "exponential, and its exponentials' arguments add up to the spread: a = "
                "(2·chain + 2·exp_ulps·(chain + 1) + spread)·u, sum_bound = a / (1 − a). An "
                "output adds its own exponential, the subtraction (inside the spread) and the "
                "division: b = (2·exp_ulps + 2 + spread)·u, g = b / (1 − b); then y_bound = "
                "(g + sum_bound) / (1 − sum_bound)."),
)

# ---- 24.4 a row softmax in Triton ---------------------------------------------------------------

# Triton's float32 exp is ex2.approx.f32(fl(v · fl32(log2 e))) and its float32 `/` is
# div.full.f32 (NVIDIA's backend): the exponential is within 2 ulp like expf, but its argument
# meets a second rounding, the multiply (u times the argument, in the exponent), and the constant's
# own error (fl32(log2 e) is 0.224u off log2 e); the division is within 2 ulp, 4u, and a
# reciprocal (as rough) times e_j one rounding more, 5u. So an exponential's argument errors add
# up to (1 + 1 + 0.224)·u times the spread, rounded up to 2.25 (which also covers their products,
# of order u² times the spread), and the division costs 5u.
# In CPU mode the interpreter computes both in NumPy (float32 exp measured within 2.6 ulp, 3.6u
# relative, and an IEEE division): inside the same bound.
LOG2E_F32_ERROR = abs(float(np.float32(np.log2(np.e))) - float(np.log2(np.e))) / float(np.log2(np.e)) / U32
TRITON_SPREAD = 2.25
TRITON_DIVIDE = 5.0
TRITON_MAX_COLS = 16384          # the longest row one block of registers holds here


def triton_chain(cols: int) -> int:
    """24.4: a term's additions in Triton's reduction of one row (tl.sum, or the pairs' merge):
    each thread first folds its own values in turn, then the lanes' partials meet in a butterfly
    of shuffles (log2 32 = 5 levels), then the warps' partials (at most 32 warps: 5 more). Triton
    spreads a row over at least a warp's 32 lanes (fewer lanes only for a block under 128
    values, each then holding at most 4) in runs of up to 4 contiguous values (a 16-byte load), so
    a thread holds at most ceil(cols / 32) + 3 of the row's values (padding lanes add exact
    zeros). A plain sum's step is one add, where the bound counts a multiply, an add and an
    exponential (6u): the bound holds with room for it, and for pieces of 32 values or more merged
    online (a rescaling step each). NumPy's pairwise sum (CPU mode) is shorter; the interpreter's
    tl.reduce with a combine function of one's own is sequential, and longer."""
    return -(-int(cols) // 32) + 3 + 5 + 5


def _triton_tolerance(inputs, expected):
    x = inputs["x"]
    return {"y": softmax_tolerance(x, triton_chain(x.shape[1]), spread_units=TRITON_SPREAD,
                                   divide_units=TRITON_DIVIDE)}


def _call_launcher(launcher, inputs, outputs, case):
    # The interpreter computes in NumPy, which warns where a GPU computes inf or NaN silently
    # (a 0/0 in the branch a tl.where discards, say): the values are judged, not the warnings.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        launcher(inputs["x"], outputs["y"])


def diagnose_triton_unwritten(got: np.ndarray) -> str:
    """What elements of ``y`` never written by a Triton launch most likely mean ('' if none)."""
    got = np.asarray(got)
    if got.ndim != 2 or got.size == 0:
        return ""
    unwritten = is_poison(got)
    if not unwritten.any():
        return ""
    rows_missed = unwritten.all(axis=1)
    if rows_missed.any() and not unwritten[~rows_missed].any():
        first = int(np.argmax(rows_missed))
        return (f"whole rows were never written (the first is row {first}): one program per row "
                "needs a grid of (rows,) programs, and row = tl.program_id(0).")
    written = ~unwritten
    last = np.where(written.any(axis=1), got.shape[1] - np.argmax(written[:, ::-1], axis=1), 0)
    tail = np.arange(got.shape[1])[None, :] >= last[:, None]
    if np.array_equal(unwritten, tail):
        k = int(last.max())
        return (f"each row was written up to column {k} at most, and not past it: the block must "
                "cover the row, BLOCK = triton.next_power_of_2(cols) in the launcher, and the mask "
                "is offs < cols (the row's length, not BLOCK).")
    return ("a program's elements are x_ptr + row * cols + offs with offs = tl.arange(0, BLOCK), "
            "loaded and stored under the mask offs < cols, and the grid has one program per row.")


def _triton_speed_inputs(rng, size):
    return {"x": make_rows_fast(rng, size[0], size[1])}


def _triton_speed_sample(inputs, idx):
    x = inputs["x"]
    return _sample_rows(x, idx, lambda row: softmax_tolerance(
        row, triton_chain(x.shape[1]), spread_units=TRITON_SPREAD, divide_units=TRITON_DIVIDE))


_ALL_MASKED = "only the rows whose values are all −inf are wrong"
TRITON_ALL_MASKED_HINT = (
    "only the rows whose values are all −inf are wrong (NaN: never written, or 0/0): such a row "
    "has no softmax, and the course's rule sets it to 0 everywhere. Its tl.max is −inf, so x − m "
    "is −inf − (−inf) = NaN in every lane: measure it from 0 instead (tl.where(m == "
    "-float('inf'), 0.0, m)), so that every exp is 0, and write 0 where d is 0.")


class TritonSoftmaxProblem(TritonExercise, SoftmaxProblem):
    """24.4: the learner's launcher ``softmax_triton(x, y)`` runs a ``@triton.jit`` kernel on the
    course's device arrays. Sizes are (rows, cols); the random hidden shapes keep CPU mode's
    grids small (Triton's interpreter takes about a millisecond a program). Where Triton cannot
    run (not installed, or macOS and Windows, which it has no wheels for) the checks print why and
    return, so the rest of the notebook runs; the grader runs them on a machine with Triton."""

    def judge(self, case, outcome, show_inputs: bool = True):
        verdict = super().judge(case, outcome, show_inputs)
        got = outcome.outputs.get("y") if outcome.outputs else None
        if not verdict.passed and verdict.hint == HINT_2D_UNWRITTEN and got is not None:
            verdict.hint = diagnose_triton_unwritten(got) or verdict.hint
        elif not verdict.passed and verdict.hint and verdict.hint.startswith(_ALL_MASKED):
            verdict.hint = TRITON_ALL_MASKED_HINT
        return verdict

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = self.sizes
        shapes = [tuple(int(v) for v in s) for s in (sizes.hidden if hidden else sizes.visible)]
        if hidden:
            count, lo, hi = sizes.hidden_random
            # Rows up to 64 in CPU mode (a program each), columns anywhere in [lo, hi).
            most_rows = 5000 if device.current().is_gpu else 64
            shapes += [(int(rng.integers(1, most_rows)), int(rng.integers(lo, hi)))
                       for _ in range(count)]
        return [Case(size=s, inputs=_inputs(rng, s), label=_size_label(s)) for s in shapes]


# (rows, cols); every row length off a power of two (the block is the next one up). CPU mode, at
# most 64 programs a case: visible 40 rows of 33, 5 of 300, one value; hidden 6 rows of 2500 (a
# block of 4096, past any fixed block of 1024 or 2048), 64 of 7, 4 × 2 and two random shapes.
softmax_triton = TritonSoftmaxProblem(
    "softmax_triton",
    title="A row softmax in Triton: one program per row, the row in one block",
    spec=_spec, make_inputs=_inputs, outputs=_outputs, tolerance=_triton_tolerance,
    launch=_call_launcher,
    cpu_sizes=Sizes(visible=((40, 33), (5, 300), (1, 1)),
                    hidden=((6, 2500), (64, 7), (4, 2)), hidden_random=(2, 1, 600)),
    gpu_sizes=Sizes(visible=((4099, 4097), (40, 33), (5, 300), (1, 1)),
                    hidden=((3, TRITON_MAX_COLS), (5000, 1025), (13, 5)),
                    hidden_random=(3, 1, TRITON_MAX_COLS), speed=SPEED_SHAPE),
    bytes_moved=rows_bytes, flops=rows_flops, baselines=BASELINES,
    reference=reference_softmax_triton, speed_inputs=_triton_speed_inputs,
    sample_spec=_triton_speed_sample, size_label=_size_label,
    # The course's kernel reads each row once into registers and writes it once: the least a
    # softmax can move. Half its speed leaves room for a plainer launch (fewer warps, say).
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=20.0),
    kernel_language="triton",
    value_hint=("one program per row: row = tl.program_id(0), offs = tl.arange(0, BLOCK) with "
                "BLOCK = triton.next_power_of_2(cols) from the launcher; load the row with "
                "mask = offs < cols and other=-float('inf') (padding adds exp(−inf) = 0); m = "
                "tl.max(x, axis=0); e = tl.exp(x − m); d = tl.sum(e, axis=0); store e / d under "
                "the same mask. A row of −inf only has m = −inf and x − m = NaN: measure it from "
                "0 instead (tl.where), and write 0 where d is 0."),
)


__all__ = ["BASELINES", "EXP_ULPS", "LOG2E_F32_ERROR", "OVERFLOW_HINT", "SPEED_SHAPE",
           "SoftmaxProblem", "TRITON_DIVIDE", "TRITON_MAX_COLS", "TRITON_SPREAD",
           "TritonSoftmaxProblem", "WARP_BLOCKS", "WORKED", "diagnose_softmax",
           "diagnose_triton_unwritten", "make_rows",
           "make_rows_fast", "rows_bytes", "rows_chain", "rows_flops", "softmax_error_bound",
           "softmax_host", "softmax_rows", "softmax_tolerance", "softmax_triton", "softmax_warp",
           "triton_chain", "warp_blocks", "warp_chain"]
