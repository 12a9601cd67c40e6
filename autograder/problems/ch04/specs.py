"""Chapter 4's graded exercises: peak figures from a device's properties, the two-kinds work
with a divergent branch and grouped by kind, and the occupancy calculation (the package's
docstring describes the two-kinds work)."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, gamma
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch04.references import reference_divergent, reference_uniform
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.inputs import cores, in_parallel
from autograder.problems.kit.memo import once_per_array

U64 = 2.0 ** -53
SPEED_DEGREE = 128      # D = E for large cases (n >= LARGE) and the speed test
LARGE = 1 << 16         # from this many elements on, cases use SPEED_DEGREE coefficients
BLOCK_SIZES = (32, 64, 128, 256)


# ---- the two-kinds work, in float64 ---------------------------------------------------------------

_BLOCK = 1 << 17         # elements per block of the float64 forms (stays in cache)


def _by_blocks(step, coefficients, x) -> np.ndarray:
    """``step(coefficients, x_block, out_block)`` over cache-sized blocks, side by side: a case of
    16.8M elements and 128 coefficients is 2 × 128 passes over its values."""
    x = np.asarray(x, dtype=np.float64)
    coefficients = np.asarray(coefficients, dtype=np.float64)
    out = np.empty_like(x)

    def block(i: int) -> None:
        part = slice(i * _BLOCK, (i + 1) * _BLOCK)
        step(coefficients, x[part], out[part])
    in_parallel(block, -(-x.size // _BLOCK), x.size * max(coefficients.size, 1))
    return out


def _horner(a, x, acc) -> None:
    acc[:] = 0.0
    for c in a:
        acc *= x
        acc += c


def _factors(b, x, acc) -> None:
    acc[:] = 1.0
    factor = np.empty_like(x)
    for c in b:
        np.multiply(x, c, out=factor)
        factor += 1.0
        acc *= factor


def power_form(a, x):
    """p(x) = a[0]·x^(D−1) + … + a[D−1] by Horner's rule (np.polyval's convention)."""
    return _by_blocks(_horner, a, x)


def product_form(b, x):
    """q(x) = (1 + b[0]·x)(1 + b[1]·x) … (1 + b[E−1]·x)."""
    return _by_blocks(_factors, b, x)


def two_kinds(x, kind, a, b):
    """The spec of exercises 4.2 and 4.3, element by element, in float64."""
    x = np.asarray(x, dtype=np.float64)
    zero = np.asarray(kind) == 0
    out = np.empty(x.shape)
    out[zero] = power_form(a, x[zero])
    out[~zero] = product_form(b, x[~zero])
    return out


def two_kinds_tolerance(x, kind, a, b):
    """What float32 arithmetic may be off by, element by element.

    Power form: Horner's rule in fp32 is within γ_2(D−1) · Σ|a_k|·|x|^(D−1−k) of p(x) (Higham,
    Accuracy and Stability of Numerical Algorithms, §5.1); one more rounding for a result computed
    in float64 and stored as float32: γ_(2D+1).
    Product form: |b·x| ≤ 1/2 in every case (see the inputs), so each factor 1 + b·x is computed
    within 2 roundings relative to itself, and E factors with E − 1 products within γ_(3E) of q(x)
    (γ_(3E+1) with the final store). A floor of the smallest normal float32 covers underflow."""
    x = np.asarray(x, dtype=np.float64)
    zero = np.asarray(kind) == 0
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    tol = np.empty(x.shape)
    tol[zero] = gamma(2 * a.size + 1) * power_form(np.abs(a), np.abs(x[zero]))
    tol[~zero] = gamma(3 * b.size + 1) * np.abs(product_form(b, x[~zero]))
    return tol + TINY32


# ---- inputs ---------------------------------------------------------------------------------------

def _kinds(rng, n):
    """Kinds with real spread: mostly independent per element (a fraction of kind 1 between 5% and
    80%), sometimes in runs of random length (so some warps are uniform and some are not)."""
    if n > 1 and rng.random() < 0.25:
        lengths = rng.geometric(1 / 24, size=n // 4 + 2)
        runs = np.repeat(np.arange(lengths.size) % 2, lengths)[:n]
        kind = runs if runs.size == n else np.resize(runs, n)
        if rng.random() < 0.5:
            kind = 1 - kind
        return kind.astype(np.uint8)
    p = rng.choice([0.5, 0.5, 0.3, 0.8, 0.05])
    kind = (rng.random(n) < p).astype(np.uint8)
    if n >= 2 and kind.min() == kind.max():      # keep both kinds in every case of 2 or more
        kind[rng.integers(n)] ^= 1
    return kind


def _coefficients(rng, n):
    """a: D coefficients with a random scale (10^-3 .. 10^3) and signs; b: E factors in
    [−0.4, 0.4]. D and E are small (1 to 12) below LARGE elements, SPEED_DEGREE above."""
    if n >= LARGE:
        d = e = SPEED_DEGREE
    else:
        d, e = (int(v) for v in rng.integers(1, 13, size=2))
    scale = 10.0 ** rng.uniform(-3, 3)
    a = (scale * rng.uniform(-1, 1, d)).astype(np.float32)
    b = rng.uniform(-0.4, 0.4, e).astype(np.float32)
    return a, b


def _work(rng, n):
    # |x| ≤ 1.25 and |b| ≤ 0.4 keep |b·x| ≤ 1/2 (the product form's error bound needs it).
    x = rng.uniform(-1.25, 1.25, n).astype(np.float32)
    kind = _kinds(rng, n)
    a, b = _coefficients(rng, n)
    return x, kind, a, b


def group_by_kind(kind):
    """The indices of the elements of kind 0, then those of kind 1, each in increasing order
    (what ``np.argsort(kind, kind="stable")`` gives), as int32."""
    kind = np.asarray(kind)
    return np.concatenate([np.flatnonzero(kind == 0), np.flatnonzero(kind != 0)]).astype(np.int32)


def _divergent_inputs(rng, n):
    x, kind, a, b = _work(rng, n)
    return {"x": x, "kind": kind, "a": a, "b": b}


def _uniform_inputs(rng, n):
    x, kind, a, b = _work(rng, n)
    order = group_by_kind(kind)
    return {"x_sorted": x[order], "kind_sorted": kind[order], "order": order, "a": a, "b": b}


def _speed_work(rng, n):
    """Chip-sized inputs, made fast in float32: kinds independent with p = 1/2 (every warp of the
    original order diverges), D = E = SPEED_DEGREE, |x| ≤ 1."""
    x = rng.random(n, dtype=np.float32)
    x *= np.float32(2)
    x -= np.float32(1)
    kind = rng.integers(0, 2, n, dtype=np.uint8)
    a = (10.0 ** rng.uniform(-3, 3) * rng.uniform(-1, 1, SPEED_DEGREE)).astype(np.float32)
    b = rng.uniform(-0.4, 0.4, SPEED_DEGREE).astype(np.float32)
    return x, kind, a, b


def _uniform_speed_inputs(rng, n):
    x, kind, a, b = _speed_work(rng, n)
    order = group_by_kind(kind)
    return {"x_sorted": x[order], "kind_sorted": kind[order], "order": order, "a": a, "b": b}


# ---- specs, tolerances, outputs, launches ---------------------------------------------------------

def _divergent_spec(x, kind, a, b, **launch):
    return {"out": two_kinds(x, kind, a, b)}


def _divergent_tolerance(inputs, expected):
    return {"out": two_kinds_tolerance(inputs["x"], inputs["kind"], inputs["a"], inputs["b"])}


def _uniform_spec(x_sorted, kind_sorted, order, a, b, **launch):
    out = np.empty(np.asarray(order).size)
    out[order] = two_kinds(x_sorted, kind_sorted, a, b)
    return {"out": out}


def _uniform_tolerance(inputs, expected):
    order = inputs["order"]
    tol = np.empty(order.size)
    tol[order] = two_kinds_tolerance(inputs["x_sorted"], inputs["kind_sorted"], inputs["a"],
                                     inputs["b"])
    return {"out": tol}


@once_per_array
def _rank(order):
    """rank[i] = the sorted position t with order[t] = i (once per `order`: the speed test
    samples the same few inputs 20+ times)."""
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank


def _uniform_sample(inputs, idx):
    """(expected, tolerance) at output indices ``idx`` only (the speed test's samples): output i
    comes from sorted position rank[i], where order[rank[i]] = i."""
    t = _rank(inputs["order"])[idx]
    x, kind = inputs["x_sorted"][t], inputs["kind_sorted"][t]
    return ({"out": two_kinds(x, kind, inputs["a"], inputs["b"])},
            {"out": two_kinds_tolerance(x, kind, inputs["a"], inputs["b"])})


def _outputs(n):
    return {"out": ((n,), np.float32)}


def _divergent_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["x"], inputs["kind"], inputs["a"], inputs["b"],
                                      outputs["out"])


def _uniform_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["x_sorted"], inputs["kind_sorted"], inputs["order"],
                                      inputs["a"], inputs["b"], outputs["out"])


def _bytes_divergent(n):
    return 9 * n          # x (4) and kind (1) in, out (4) back; a and b stay in the caches


def _bytes_uniform(n):
    return 13 * n         # x_sorted (4), kind_sorted (1), order (4) in, out (4) back


def _flops(n):
    return 2 * SPEED_DEGREE * n     # one multiply and one add per coefficient, either kind


# ---- CPU baselines (the speed test's: grouped inputs, results scattered back) --------------------

def _numpy_uniform(x_sorted, kind_sorted, order, a, b, out):
    # The groups are contiguous: each form is vectorized over its own group only, in float32.
    n0 = int(np.count_nonzero(kind_sorted == 0))
    res = np.empty_like(x_sorted)
    x0, x1 = x_sorted[:n0], x_sorted[n0:]
    acc = np.zeros_like(x0)
    for c in a:
        acc *= x0
        acc += c
    res[:n0] = acc
    acc = np.ones_like(x1)
    for c in b:
        acc *= np.float32(1) + c * x1
    res[n0:] = acc
    out[order] = res


@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False)
    def two_kinds_parallel(x_sorted, kind_sorted, order, a, b, out):
        for t in numba.prange(x_sorted.size):
            xt = x_sorted[t]
            if kind_sorted[t] == 0:
                acc = np.float32(0)
                for k in range(a.size):
                    acc = acc * xt + a[k]
            else:
                acc = np.float32(1)
                for k in range(b.size):
                    acc *= np.float32(1) + b[k] * xt
            out[order[t]] = acc
    return two_kinds_parallel


def _parallel_uniform(x_sorted, kind_sorted, order, a, b, out):    # Baseline.run uses keywords
    _parallel_loop(x_sorted, kind_sorted, order, a, b, out)


def _numpy_divergent(x, kind, a, b, out):
    order = group_by_kind(kind)
    _numpy_uniform(x[order], kind[order], order, a, b, out)


UNIFORM_BASELINES = {
    # 5-10 s a call at the speed test's 2^24 elements: left out of the speed test and bench.
    "numpy": Baseline("NumPy, each form over its own group (1 core)", _numpy_uniform,
                      at_speed_size=False),
    "parallel": Baseline(f"numba.njit parallel loop ({cores()} cores)", _parallel_uniform),
}


# ---- the two-kinds problems' verdicts ------------------------------------------------------------

class _TwoKindsProblem(Problem):
    """The two-kinds exercises name a wrong element's own inputs (its x and kind, and the sizes of
    a and b, not the whole arrays). For ``uniform``, output i comes from sorted position t with
    order[t] = i: the inputs are named at t."""

    def judge(self, case, outcome, show_inputs=True):
        verdict = super().judge(case, outcome, show_inputs=False)
        if verdict.index is None or not show_inputs:
            return verdict
        i, inputs = verdict.index, case.inputs
        sizes = f"D = a.size = {inputs['a'].size}, E = b.size = {inputs['b'].size}"
        if "order" in inputs:
            hits = np.flatnonzero(inputs["order"] == i)
            if hits.size:
                t = int(hits[0])
                verdict.message += (
                    f"\n  inputs there: out[{i}] is sorted element t = {t} (order[{t}] = {i}): "
                    f"x_sorted[{t}] = {float(inputs['x_sorted'][t]):.9g}, "
                    f"kind_sorted[{t}] = {int(inputs['kind_sorted'][t])}; {sizes}")
        else:
            verdict.message += (f"\n  inputs there: x[{i}] = {float(inputs['x'][i]):.9g}, "
                                f"kind[{i}] = {int(inputs['kind'][i])}; {sizes}")
        return verdict


# ---- 4.2 divergent: one thread per element, in the original order ----------------------------------

DIVERGENT_HINT = ("an element of kind 0 gets the power form p(x) = a[0]·x^(D−1) + … + a[D−1] "
                  "(Horner: acc = 0, then acc = acc·x + a[k] for k = 0 … a.size − 1), one of kind "
                  "1 the product form (1 + b[0]·x)(1 + b[1]·x)…(1 + b[E−1]·x) (acc = 1, then "
                  "acc = acc·(1 + b[k]·x)). Is each form on its own kind's branch, and does each "
                  "loop run over the whole of its array (a.size and b.size differ)? If the values "
                  "are close but not close enough, is the arithmetic done in float32 (not "
                  "float16)?")


def _coefficients_needed(kind) -> dict:
    """Provenance: a kernel must read `a` only if some element is of kind 0, `b` if of kind 1."""
    kind = np.asarray(kind)
    return {"a": bool((kind == 0).any()), "b": bool((kind != 0).any())}


divergent = _TwoKindsProblem(
    "divergent", title="Two kinds of work, one thread per element: a branch that diverges",
    spec=_divergent_spec, make_inputs=_divergent_inputs, outputs=_outputs,
    tolerance=_divergent_tolerance, launch=_divergent_launch, block_sizes=BLOCK_SIZES,
    visible_block_size=128, elementwise=True,
    must_read=lambda case: _coefficients_needed(case.inputs["kind"]),
    # n = 1000: 8 blocks of 128, the last one partial; 97 and 1: less than one warp or block.
    cpu_sizes=Sizes(visible=(1000, 97, 1), hidden=(1025, 31, 4001), hidden_random=(2, 100, 1500)),
    gpu_sizes=Sizes(visible=(1_000_003, 1000, 97, 1), hidden=(1025, 31, 16_777_219),
                    hidden_random=(3, 100, 3_000_000)),
    bytes_moved=_bytes_divergent, flops=_flops,
    baselines={"numpy": Baseline("NumPy, each form over its own elements (1 core)",
                                 _numpy_divergent)},
    reference=reference_divergent, value_hint=DIVERGENT_HINT,
)


# ---- 4.3 uniform: grouped by kind, results scattered back -------------------------------------------

uniform = _TwoKindsProblem(
    "uniform", title="The same work grouped by kind: every warp takes one branch",
    spec=_uniform_spec, make_inputs=_uniform_inputs, outputs=_outputs,
    tolerance=_uniform_tolerance, launch=_uniform_launch, block_sizes=BLOCK_SIZES,
    visible_block_size=128, sample_spec=_uniform_sample,
    must_read=lambda case: _coefficients_needed(case.inputs["kind_sorted"]),
    speed_launch=lambda n: ((n + 255) // 256, 256),
    cpu_sizes=Sizes(visible=(1000, 97, 1), hidden=(1025, 31, 4001), hidden_random=(2, 100, 1500)),
    gpu_sizes=Sizes(visible=(1_000_003, 1000, 97, 1), hidden=(1025, 31, 16_777_219),
                    hidden_random=(3, 100, 3_000_000), speed=1 << 24),
    bytes_moved=_bytes_uniform, flops=_flops, baselines=UNIFORM_BASELINES,
    reference=reference_uniform, speed_inputs=_uniform_speed_inputs,
    # On the H200 (docs/benchmarks.md): reference 2.154 ms; the same work with the two kinds
    # interleaved in every warp 4.30 ms (50%: both branches issued), so 70% separates the two.
    # The solution graded at 100% of the reference and 68× numba parallel on 32 cores.
    speed=SpeedBar(min_fraction_of_reference=0.7, baseline="parallel", min_speedup=20.0),
    value_hint=("thread t works on sorted element t: x_sorted[t] and kind_sorted[t] (no "
                "indirection when reading), and stores its result where that element came from, "
                "out[order[t]]. The two forms are exercise 4.2's."),
)


# ---- 4.1 peak figures from a device's properties ----------------------------------------------------

def peak_spec(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    """FP32 FLOP/s: every lane of every SM does one fused multiply-add (2 FLOPs) per cycle.
    Bytes/s: the memory transfers on both clock edges (double data rate) on a bus of
    ``bus_width_bits`` bits."""
    flops = 2.0 * sm_count * fp32_lanes_per_sm * clock_khz * 1e3
    bandwidth = 2.0 * memory_clock_khz * 1e3 * bus_width_bits / 8
    return flops, bandwidth


# (sm_count, FP32 lanes per SM, boost clock kHz, memory clock kHz as CUDA reports it, bus bits)
PEAK_EXAMPLES = (
    (132, 128, 1_980_000, 3_125_000, 6144),     # H200-like: ~67 TFLOP/s, 4.8 TB/s
    (108, 64, 1_410_000, 1_215_000, 5120),      # A100 40 GB: 19.5 TFLOP/s, 1.56 TB/s
    (128, 128, 2_520_000, 10_501_000, 384),     # RTX 4090: 82.6 TFLOP/s, 1.01 TB/s
)


def _peak_inputs(rng, count):
    sms = rng.integers(1, 200, count)
    lanes = rng.choice([32, 64, 128, 256], count)
    clock = rng.integers(300_000, 3_000_000, count)
    mem = rng.integers(400_000, 16_000_000, count)
    bus = rng.choice([64, 128, 192, 256, 320, 384, 512, 1024, 4096, 5120, 6144, 8192], count)
    k = min(count, len(PEAK_EXAMPLES))
    for i in range(k):
        sms[i], lanes[i], clock[i], mem[i], bus[i] = PEAK_EXAMPLES[i]
    return {"sm_count": sms.astype(np.int64), "fp32_lanes_per_sm": lanes.astype(np.int64),
            "clock_khz": clock.astype(np.int64), "memory_clock_khz": mem.astype(np.int64),
            "bus_width_bits": bus.astype(np.int64)}


def _peak_problem_spec(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    flops, bandwidth = peak_spec(*(np.asarray(v, dtype=np.float64) for v in (
        sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits)))
    return {"flops": flops, "bytes_per_second": bandwidth}


def _peak_tolerance(inputs, expected):
    # A few float64 roundings in any order of evaluation.
    return {k: 16 * U64 * np.abs(v) for k, v in expected.items()}


def _two_numbers(result, function, names):
    try:
        first, second = result
        return float(first), float(second)
    except (TypeError, ValueError):
        raise TypeError(f"{function}(...) must return two numbers, ({names}); it returned "
                        f"{result!r}") from None


def _peak_call(fn, inputs, outputs, case):
    for i in range(case.size):
        args = [int(inputs[k][i]) for k in ("sm_count", "fp32_lanes_per_sm", "clock_khz",
                                            "memory_clock_khz", "bus_width_bits")]
        flops, bandwidth = _two_numbers(fn(*args), "peak_figures", "flops, bytes_per_second")
        outputs["flops"][i], outputs["bytes_per_second"][i] = flops, bandwidth


peak_figures = Problem(
    "peak_figures", title="A device's peak FP32 FLOP/s and memory bandwidth from its properties",
    spec=_peak_problem_spec, make_inputs=_peak_inputs,
    outputs=lambda count: {"flops": ((count,), np.float64), "bytes_per_second": ((count,), np.float64)},
    tolerance=_peak_tolerance, launch=_peak_call, on_device=False,
    cpu_sizes=Sizes(visible=(3,), hidden=(100,)), gpu_sizes=Sizes(visible=(3,), hidden=(100,)),
    value_hint=("FLOP/s = SMs × FP32 lanes per SM × 2 (a fused multiply-add is two operations) × "
                "clock in Hz (kHz × 1000). Bytes/s = 2 (double data rate) × memory clock in Hz × "
                "bus width in bytes (bits / 8)."),
)


# ---- 4.4 occupancy: resident blocks per SM from registers, shared memory and block size ----------

LIMIT_KEYS = ("warp_size", "max_threads_per_sm", "max_blocks_per_sm", "regs_per_sm",
              "reg_alloc_unit", "sub_partitions", "smem_per_sm", "smem_alloc_unit",
              "smem_reserved_per_block")


def _limits(warp, threads, blocks, smem, smem_unit, reserved, regs=65536, reg_unit=256, parts=4):
    return dict(zip(LIMIT_KEYS, (warp, threads, blocks, regs, reg_unit, parts, smem, smem_unit,
                                 reserved)))


# Per compute capability, from the CUDA programming guide's table of technical specifications and
# the occupancy calculator (cuda_occupancy.h): allocation units and the 1 KB reserved per block
# from compute capability 8.0 on.
DEVICES = {
    "H100 / H200 (compute capability 9.0)": _limits(32, 2048, 32, 233472, 128, 1024),
    "A100 (8.0)": _limits(32, 2048, 32, 167936, 128, 1024),
    "RTX 3090 / A40 (8.6)": _limits(32, 1536, 16, 102400, 128, 1024),
    "RTX 4090 / L4 (8.9)": _limits(32, 1536, 24, 102400, 128, 1024),
    "V100 (7.0)": _limits(32, 2048, 32, 98304, 256, 0),
    "T4 (7.5)": _limits(32, 1024, 16, 65536, 256, 0),
}
H200 = DEVICES["H100 / H200 (compute capability 9.0)"]


def _ceil_to(value, unit):
    return -(-value // unit) * unit


def resident_blocks(threads_per_block, regs_per_thread, smem_per_block, limits):
    """The spec of exercise 4.4 (element-wise on arrays): (blocks per SM, occupancy).

    - warps per block W = ceil(T / warp size);
    - by warps: (max threads per SM / warp size) // W;   by block slots: max blocks per SM;
    - by registers: a warp gets ceil(R · warp size / unit) · unit registers, in one of the SM's
      sub-partitions; each sub-partition holds regs_per_sm / sub_partitions registers, so
      (that // registers per warp) warps, times sub_partitions, // W blocks;
    - by shared memory: a block gets ceil((S + reserved) / unit) · unit bytes; smem_per_sm //
      that many blocks (no limit if a block needs none);
    - blocks = the smallest of the four; occupancy = blocks · W / max warps per SM.
    """
    T = np.asarray(threads_per_block, dtype=np.int64)
    R = np.asarray(regs_per_thread, dtype=np.int64)
    S = np.asarray(smem_per_block, dtype=np.int64)
    lim = {k: np.asarray(v, dtype=np.int64) for k, v in limits.items()}
    warp = lim["warp_size"]
    W = -(-T // warp)
    max_warps = lim["max_threads_per_sm"] // warp
    by_warps = max_warps // W
    by_slots = lim["max_blocks_per_sm"]
    per_warp = _ceil_to(R * warp, lim["reg_alloc_unit"])
    per_part = (lim["regs_per_sm"] // lim["sub_partitions"]) // np.maximum(per_warp, 1)
    by_regs = np.where(per_warp > 0, per_part * lim["sub_partitions"] // W, np.iinfo(np.int64).max)
    smem = _ceil_to(S + lim["smem_reserved_per_block"], lim["smem_alloc_unit"])
    by_smem = np.where(smem > 0, lim["smem_per_sm"] // np.maximum(smem, 1), np.iinfo(np.int64).max)
    blocks = np.minimum(np.minimum(by_warps, by_slots), np.minimum(by_regs, by_smem))
    return blocks.astype(np.float64), blocks * W / max_warps


# (threads per block, registers per thread, shared bytes per block, device): the visible cases.
OCCUPANCY_EXAMPLES = (
    (256, 32, 0, "H100 / H200 (compute capability 9.0)"),      # 8 blocks: every warp slot
    (256, 64, 0, "H100 / H200 (compute capability 9.0)"),      # registers: 4 blocks, 50%
    (64, 40, 0, "H100 / H200 (compute capability 9.0)"),       # sub-partitions: 24, not 25
    (256, 32, 46000, "H100 / H200 (compute capability 9.0)"),  # the 1 KB reserve: 4, not 5
    (100, 32, 0, "H100 / H200 (compute capability 9.0)"),      # a partial warp counts whole
    (1024, 72, 0, "H100 / H200 (compute capability 9.0)"),     # does not fit at all: 0
    (32, 16, 0, "H100 / H200 (compute capability 9.0)"),       # block slots: 32 blocks, 50%
    (256, 48, 0, "RTX 4090 / L4 (8.9)"),                       # 5 blocks of 8 warps of 48
    (128, 32, 0, "V100 (7.0)"),                                # no reserve, no shared: no limit
)


def _random_limits(rng):
    if rng.random() < 0.7:
        return dict(DEVICES[list(DEVICES)[int(rng.integers(len(DEVICES)))]])
    # An imaginary device, so that no figure can be hard-coded (warp 64 as on AMD's CDNA).
    return _limits(warp=int(rng.choice([32, 64])), threads=int(rng.choice([1024, 1536, 2048, 2560])),
                   blocks=int(rng.choice([16, 24, 32, 64])),
                   smem=int(rng.integers(48, 257)) * 1024, smem_unit=int(rng.choice([128, 256])),
                   reserved=int(rng.choice([0, 1024])),
                   regs=int(rng.choice([32768, 65536, 131072])),
                   reg_unit=int(rng.choice([128, 256, 512])), parts=int(rng.choice([1, 2, 4])))


def _occupancy_inputs(rng, count):
    rows = []
    for i in range(count):
        if i < len(OCCUPANCY_EXAMPLES):
            t, r, s, name = OCCUPANCY_EXAMPLES[i]
            rows.append((t, r, s, DEVICES[name]))
            continue
        lim = _random_limits(rng)
        t = int(rng.integers(1, 33)) * 32 if rng.random() < 0.6 else int(rng.integers(1, 1025))
        pick = rng.random()
        if pick < 0.5:      # what compilers typically report
            r = int(rng.choice([16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128]))
        else:               # anything, a few register-hungry kernels among them
            r = int(rng.integers(8, 129)) if pick < 0.85 else int(rng.integers(129, 256))
        room = lim["smem_per_sm"] - lim["smem_reserved_per_block"]
        s = 0 if rng.random() < 0.3 else int(min(room, max(0, lim["smem_per_sm"]
                                                         // int(rng.integers(1, 17))
                                                         - int(rng.integers(0, 2048)))))
        rows.append((t, r, s, lim))
    inputs = {"threads_per_block": np.array([row[0] for row in rows], dtype=np.int64),
              "regs_per_thread": np.array([row[1] for row in rows], dtype=np.int64),
              "smem_per_block": np.array([row[2] for row in rows], dtype=np.int64)}
    for key in LIMIT_KEYS:
        inputs[key] = np.array([row[3][key] for row in rows], dtype=np.int64)
    return inputs


def _occupancy_spec(threads_per_block, regs_per_thread, smem_per_block, **rest):
    limits = {k: rest[k] for k in LIMIT_KEYS}
    blocks, occ = resident_blocks(threads_per_block, regs_per_thread, smem_per_block, limits)
    return {"blocks": blocks, "occupancy": occ}


def _occupancy_tolerance(inputs, expected):
    # Blocks are whole numbers: exact. Occupancy: a couple of float64 roundings.
    return {"blocks": np.zeros_like(expected["blocks"]),
            "occupancy": 4 * U64 * expected["occupancy"]}


def _occupancy_call(fn, inputs, outputs, case):
    for i in range(case.size):
        limits = {k: int(inputs[k][i]) for k in LIMIT_KEYS}
        result = fn(int(inputs["threads_per_block"][i]), int(inputs["regs_per_thread"][i]),
                    int(inputs["smem_per_block"][i]), limits)
        blocks, occ = _two_numbers(result, "occupancy", "blocks_per_sm, occupancy")
        outputs["blocks"][i], outputs["occupancy"][i] = blocks, occ


occupancy = Problem(
    "occupancy", title="Occupancy: resident blocks and warps per SM from a kernel's resources",
    spec=_occupancy_spec, make_inputs=_occupancy_inputs,
    outputs=lambda count: {"blocks": ((count,), np.float64), "occupancy": ((count,), np.float64)},
    tolerance=_occupancy_tolerance, launch=_occupancy_call, on_device=False,
    cpu_sizes=Sizes(visible=(len(OCCUPANCY_EXAMPLES),), hidden=(300,)),
    gpu_sizes=Sizes(visible=(len(OCCUPANCY_EXAMPLES),), hidden=(300,)),
    value_hint=("blocks per SM = the smallest of four limits: warps ((max threads per SM / warp "
                "size) // warps per block, a partial warp counting whole), block slots, registers "
                "(registers per warp rounded up to reg_alloc_unit; whole warps per sub-partition "
                "of regs_per_sm / sub_partitions registers, times sub_partitions, // warps per "
                "block) and shared memory (smem_per_sm // (S + reserve rounded up to "
                "smem_alloc_unit)). Occupancy = blocks × warps per block / max warps per SM."),
)
