"""Chapter 19's graded exercises: one step of a direct all-pairs N-body computation, the softened
gravitational acceleration of every body, predicted with the roofline first (19.1), then written
as a gather with one thread per body (19.2) and as a gather tiled through shared memory (19.3).

A case's size is ``(N,)``, N the number of bodies: ``pos`` float32 [N, 3] (a box of random size and
centre), ``mass`` float32 [N] (positive, of a random scale), ``eps2`` the softening length
squared (a float32 scalar), ``acc`` float32 [N, 3]::

    acc[i] = Σ over j < N of mass[j] · (pos[j] − pos[i]) / (|pos[j] − pos[i]|² + eps2)^(3/2)

The spec is float64, from the same float32 inputs; each component of each body is judged
within γ_(N + 32) · Σ over j of |term j| (:func:`nbody_tolerance`)."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, fmt, gamma
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch19.references import BLOCK_MAX, reference_gather, reference_tiled
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.inputs import cores

U64 = 2.0 ** -53
# The roundings inside one term, on top of the sum's: a subtraction per component, three squares
# and three adds, a square root, a division, three multiplies for the cube and the mass, one for
# the component; a fast reciprocal square root (a few ulps, cubed) stays inside 32 u as well.
PER_TERM = 32
# FLOPs a pair interaction is counted as, as the N-body literature counts it (Nyland, Harris and
# Prins, GPU Gems 3 ch. 31): 3 subtractions, 6 operations for r² + ε², the reciprocal square
# root, its cube times the mass, and 3 multiply-adds into the sums (the instructions a GPU
# executes depend on how the square root and the division are done).
FLOPS_PER_PAIR = 20
# Block sizes the kernels are launched with: the hidden cases use each; the tiled kernels'
# shared tiles hold BLOCK_MAX bodies, the speed test's block.
BLOCK_SIZES = (32, 64, 128)
VISIBLE_BLOCK = 32
SPEED_BLOCK = 256
# The speed test's step: 100,003 bodies (10^10 pair interactions, 200 GFLOP), not a
# multiple of any block size, so the last tile is partial.
SPEED_N = 100_003
assert SPEED_BLOCK <= BLOCK_MAX
COMPILED_FROM = 1 << 22      # terms of a spec from which it is computed by compiled code


# ---- the spec: float64, the tolerance from the sum ----------------------------------------------

def nbody_host(pos, mass, eps2, bodies=None) -> tuple[np.ndarray, np.ndarray]:
    """The accelerations of ``bodies`` (all of them by default) in float64, and Σ over j of the
    magnitude of each component's term, from the float32 inputs."""
    pos = np.ascontiguousarray(pos, np.float32)
    mass = np.ascontiguousarray(mass, np.float32)
    idx = np.arange(pos.shape[0]) if bodies is None else np.asarray(bodies, np.int64)
    acc = np.empty((idx.size, 3))
    mag = np.empty((idx.size, 3))
    if idx.size * pos.shape[0] > COMPILED_FROM:
        # Compiled and parallel over the bodies: a GPU's hidden case of 30,000 bodies is
        # 9 · 10^8 terms, and the speed test checks 4,096 sampled outputs after every timed call.
        _sum_f64(pos, mass, float(eps2), idx, acc, mag)
        return acc, mag
    # NumPy for the small cases of CPU mode: Numba's parallel loops use OpenMP, which a process
    # forked afterwards (CPU mode runs each case in a fork) cannot use again.
    p, m, e = pos.astype(np.float64), mass.astype(np.float64), float(eps2)
    step = max(1, (1 << 18) // max(1, p.shape[0]))
    for a in range(0, idx.size, step):
        d = p[None, :, :] - p[idx[a:a + step], None, :]           # [k, N, 3]: r_j − r_i
        r2 = np.einsum("knc,knc->kn", d, d) + e
        terms = d * (m[None, :] / (r2 * np.sqrt(r2)))[:, :, None]
        acc[a:a + step] = terms.sum(axis=1)
        mag[a:a + step] = np.abs(terms).sum(axis=1)
    return acc, mag


def nbody_tolerance(mag: np.ndarray, n: int) -> np.ndarray:
    """|error| ≤ γ_(N + 32) · Σ_j |term j| per component: γ_N for a float32 sum of N terms in any
    order (Higham), 32 u more for the roundings inside each term, plus the smallest normal
    float32 for results near zero."""
    return gamma(int(n) + PER_TERM) * mag + TINY32


@njit_on_first_call
def _sum_f64():
    import numba

    @numba.njit(parallel=True, cache=False)
    def sampled(pos, mass, eps2, bodies, acc, mag):
        # The float64 sum at the given bodies: N terms each, in parallel over them.
        n = pos.shape[0]
        for k in numba.prange(bodies.size):
            i = bodies[k]
            xi, yi, zi = np.float64(pos[i, 0]), np.float64(pos[i, 1]), np.float64(pos[i, 2])
            a0 = a1 = a2 = m0 = m1 = m2 = 0.0
            for j in range(n):
                dx = np.float64(pos[j, 0]) - xi
                dy = np.float64(pos[j, 1]) - yi
                dz = np.float64(pos[j, 2]) - zi
                r2 = dx * dx + dy * dy + dz * dz + eps2
                s = np.float64(mass[j]) / (r2 * np.sqrt(r2))
                a0 += dx * s
                a1 += dy * s
                a2 += dz * s
                m0 += abs(dx * s)
                m1 += abs(dy * s)
                m2 += abs(dz * s)
            acc[k, 0], acc[k, 1], acc[k, 2] = a0, a1, a2
            mag[k, 0], mag[k, 1], mag[k, 2] = m0, m1, m2
    return sampled


def nbody_sample(inputs, idx):
    """acc's expected values and tolerances at flat indices ``idx`` of [N, 3] only (the speed
    test's samples): the float64 sum of N terms at each sampled body, compiled (a NumPy sum over
    4,096 bodies of 100,003 terms would take seconds per timed call)."""
    pos, mass = inputs["pos"], inputs["mass"]
    idx = np.asarray(idx, np.int64)
    bodies, where = np.unique(idx // 3, return_inverse=True)
    acc, mag = nbody_host(pos, mass, inputs["eps2"], bodies)
    comp = idx % 3
    return ({"acc": acc[where, comp]},
            {"acc": nbody_tolerance(mag[where, comp], pos.shape[0])})


# ---- inputs ---------------------------------------------------------------------------------------

def bodies_of(size) -> int:
    """N from a case's size, ``(N,)``: the sizes are shapes of one side (an exercise's size is
    the shape of its data; here the work grows as N², see ``nbody_flops``)."""
    return int(size[0]) if isinstance(size, tuple) else int(size)


def nbody_inputs(rng, n) -> dict:
    """N bodies in a box of random size (10^-1 .. 10) and centre, masses positive with a random
    scale (no two alike, so using body i's mass for body j's is wrong), a softening length of
    1 to 10% of the box: terms of both signs and very different sizes."""
    n = bodies_of(n)
    scale = 10.0 ** rng.uniform(-1, 1)
    centre = rng.uniform(-2, 2, 3) * scale
    pos = (centre + scale * rng.uniform(-1, 1, (n, 3))).astype(np.float32)
    mass = (10.0 ** rng.uniform(-1, 1) * rng.uniform(0.25, 2.0, n)).astype(np.float32)
    eps2 = np.float32((scale * rng.uniform(0.01, 0.1)) ** 2)
    return {"pos": pos, "mass": mass, "eps2": eps2}


def _spec(pos, mass, eps2, **launch):
    return {"acc": nbody_host(pos, mass, eps2)[0]}


def _tolerance(inputs, expected):
    _, mag = nbody_host(inputs["pos"], inputs["mass"], inputs["eps2"])
    return {"acc": nbody_tolerance(mag, inputs["pos"].shape[0])}


def _outputs(size):
    return {"acc": ((bodies_of(size), 3), np.float32)}


def _blocks(size, threads):
    return (bodies_of(size) + threads - 1) // threads


def _label(size) -> str:
    n = bodies_of(size)
    return f"N = {n} bod{'y' if n == 1 else 'ies'}"


def _launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["pos"], inputs["mass"], inputs["eps2"],
                                      outputs["acc"])


def nbody_flops(n) -> int:
    """FLOPs of one step as the literature counts them: 20 per pair, N² pairs (the kernels compute
    the pair (i, i) too; softened, it adds zero)."""
    return FLOPS_PER_PAIR * bodies_of(n) ** 2


def nbody_bytes(n) -> int:
    """The least one step moves: every body's position and mass read once, its acceleration
    written once (float32)."""
    return (16 + 12) * bodies_of(n)


NAN_HINT = ("acc holds NaN where a thread stored nothing, or where it computed NaN: with eps2 "
            "left out of the denominator, the pair j = i is 0 · (1 / 0) = NaN (so is any pair of "
            "bodies at the same place); eps2 is added inside the power.")


def _must_read(case):
    """One body alone: a kernel that skips the pair j = i reads nothing, and is right (zero)."""
    return {"pos": False, "mass": False} if bodies_of(case.size) == 1 else {}


class NBodyProblem(Problem):
    """An N-body kernel: every thread sums N terms, so the simulator's time grows as N², not as
    the number of threads."""

    def simulated_threads(self, case) -> float:
        return case.thread_count * max(1.0, bodies_of(case.size) / 8)

    def judge(self, case, outcome, show_inputs: bool = True):
        # The wrong element's flat index is into acc [N, 3]: name its body and component, and
        # that body's inputs (the default would index the inputs with the flat index).
        verdict = super().judge(case, outcome, show_inputs=False)
        got = outcome.outputs.get("acc")
        if not verdict.passed and got is not None and np.isnan(np.asarray(got, float)).any():
            # A NaN is what the output was filled with before the run, and also what the pair
            # j = i gives without the softening: 0 · (1 / 0).
            verdict.hint = (NAN_HINT + " " + verdict.hint[:1].upper() + verdict.hint[1:]).strip()
        if verdict.index is not None and show_inputs:
            i, c = divmod(int(verdict.index), 3)
            p, m = case.inputs["pos"], case.inputs["mass"]
            verdict.message += (f"\n  that is body {i}, component {'xyz'[c]}; inputs there: "
                                f"pos[{i}] = ({fmt(p[i, 0])}, {fmt(p[i, 1])}, {fmt(p[i, 2])}), "
                                f"mass[{i}] = {fmt(m[i])}, eps2 = {fmt(case.inputs['eps2'])}")
        return verdict


# ---- CPU baselines ---------------------------------------------------------------------------------

@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False)
    def step(pos, mass, eps2, acc):
        n = pos.shape[0]
        for i in numba.prange(n):
            xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
            ax = ay = az = np.float32(0.0)
            for j in range(n):
                dx = pos[j, 0] - xi
                dy = pos[j, 1] - yi
                dz = pos[j, 2] - zi
                r2 = dx * dx + dy * dy + dz * dz + eps2
                inv = np.float32(1.0) / np.sqrt(r2)
                s = mass[j] * inv * inv * inv
                ax += dx * s
                ay += dy * s
                az += dz * s
            acc[i, 0], acc[i, 1], acc[i, 2] = ax, ay, az
    return step


@njit_on_first_call
def _serial_loop():
    import numba

    @numba.njit(cache=False)
    def step(pos, mass, eps2, acc):
        n = pos.shape[0]
        for i in range(n):
            xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
            ax = ay = az = np.float32(0.0)
            for j in range(n):
                dx = pos[j, 0] - xi
                dy = pos[j, 1] - yi
                dz = pos[j, 2] - zi
                r2 = dx * dx + dy * dy + dz * dz + eps2
                inv = np.float32(1.0) / np.sqrt(r2)
                s = mass[j] * inv * inv * inv
                ax += dx * s
                ay += dy * s
                az += dz * s
            acc[i, 0], acc[i, 1], acc[i, 2] = ax, ay, az
    return step


def _numpy_step(pos, mass, eps2, acc):
    """Blocks of bodies against all bodies as [k, N, 3] arrays, float32 (NumPy's vector code)."""
    n = pos.shape[0]
    step = max(1, (1 << 22) // max(1, n))
    for a in range(0, n, step):
        d = pos[None, :, :] - pos[a:a + step, None, :]
        r2 = np.einsum("knc,knc->kn", d, d) + eps2
        s = mass[None, :] / (r2 * np.sqrt(r2))
        acc[a:a + step] = np.einsum("knc,kn->kc", d, s)


def _parallel_step(pos, mass, eps2, acc):      # Baseline.run is called with keywords
    _parallel_loop(pos, mass, np.float32(eps2), acc)


def _serial_step(pos, mass, eps2, acc):
    _serial_loop(pos, mass, np.float32(eps2), acc)


BASELINES = {
    "parallel": Baseline(f"numba.njit all pairs, parallel over bodies ({cores()} cores)",
                         _parallel_step),
    "serial": Baseline("numba.njit all pairs (1 core)", _serial_step, at_speed_size=False),
    "numpy": Baseline("NumPy, bodies in blocks against all (1 core)", _numpy_step,
                      at_speed_size=False),
}


# ---- 19.2 and 19.3: the kernels -------------------------------------------------------------------

# Sizes are (N,). Visible (blocks of 32): 37 bodies (a partial second block), 19 (one partial
# block) and 1 (the pair (i, i) alone: zero, if softened). Hidden: 150 bodies (over 4 times the
# largest visible; a partial last block of 32, 64 or 128), 2, and one random count up to 100,
# over blocks of 32, 64 and 128 (one each). Every thread sums N terms: the simulator's time grows
# as N², so the sizes stay small. On a GPU the largest hidden case, 30,011 bodies, is 9 · 10^8
# terms.
CPU_SIZES = Sizes(visible=((37,), (19,), (1,)), hidden=((150,), (2,)),
                  hidden_random=(1, 3, 100))
GPU_SIZES = Sizes(visible=((20_001,),) + CPU_SIZES.visible, hidden=((150,), (2,), (30_011,)),
                  hidden_random=(3, 3, 30_000), speed=(SPEED_N,))

VALUE_HINT = ("acc[i] = Σ over every body j of mass[j] · (pos[j] − pos[i]) / (|pos[j] − pos[i]|² "
              "+ eps2)^(3/2): the difference points from body i to body j (gravity pulls i "
              "towards j), the mass is body j's, eps2 is added inside the power (so the term "
              "j = i is 0, not 0 / 0), and every body counts, the last partial block's too.")

nbody_gather = NBodyProblem(
    "nbody_gather", title="One N-body step: a thread per body gathers the pull of every body",
    spec=_spec, make_inputs=nbody_inputs, outputs=_outputs, tolerance=_tolerance,
    launch=_launch, block_sizes=BLOCK_SIZES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_blocks, size_label=_label, cpu_sizes=CPU_SIZES, gpu_sizes=GPU_SIZES,
    bytes_moved=nbody_bytes, flops=nbody_flops,
    reference=reference_gather, baselines=BASELINES, sample_spec=nbody_sample,
    value_hint=VALUE_HINT, must_read=_must_read,
)

nbody_tiled = NBodyProblem(
    "nbody_tiled", title="One N-body step: bodies tiled through shared memory by the block",
    spec=_spec, make_inputs=nbody_inputs, outputs=_outputs, tolerance=_tolerance,
    launch=_launch, block_sizes=BLOCK_SIZES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_blocks, size_label=_label, cpu_sizes=CPU_SIZES, gpu_sizes=GPU_SIZES,
    bytes_moved=nbody_bytes, flops=nbody_flops,
    reference=reference_tiled, baselines=BASELINES, sample_spec=nbody_sample,
    must_read=_must_read, speed_launch=lambda size: (_blocks(size, SPEED_BLOCK), SPEED_BLOCK),
    # The reference is the same algorithm (tiles of blockDim.x bodies, plain square root and
    # division): a plain tiled kernel runs at its speed, and half of it leaves room for another
    # loop shape and for the spread between runs. The CPU bar is the compiled all-pairs loop on
    # every core of the grading machine: a GPU is expected over 50 times faster (to be
    # calibrated on the H200).
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="parallel", min_speedup=10.0),
    value_hint=VALUE_HINT + (" Tiled: wait at a barrier after loading a tile and again before "
                             "the next load overwrites it, and read only the tile's bodies that "
                             "exist (the last tile is partial)."),
)


# ---- 19.1 predict: FLOPs, bytes and the time bound of each decomposition -------------------------

def _bound_spec(n, block, peak_flops, bandwidth):
    flops = float(FLOPS_PER_PAIR) * n * n
    gather = 16.0 * n * n + 24.0 * n
    tiled = 16.0 * n * np.ceil(n / block) + 24.0 * n
    return {"flops": flops, "gather_bytes": gather, "tiled_bytes": tiled,
            "gather_seconds": np.maximum(flops / peak_flops, gather / bandwidth),
            "tiled_seconds": np.maximum(flops / peak_flops, tiled / bandwidth)}


def _bound_inputs(rng, count):
    n = np.floor(10.0 ** rng.uniform(0, 6.5, count))
    block = rng.choice([32, 64, 96, 128, 192, 256, 512, 1024], count).astype(np.float64)
    peak = 10.0 ** rng.uniform(11, 14.5, count)            # 0.1 to 300 TFLOP/s
    bandwidth = 10.0 ** rng.uniform(10.5, 13, count)       # 30 GB/s to 10 TB/s
    # The first cases: the speed test's step on the course's H200 (66.9 TFLOP/s, 4.27 TB/s),
    # tiles of 256; 1,000 bodies in tiles of 64 (not a multiple); one body.
    first = [(SPEED_N, 256), (1_000, 64), (1, 32)]
    k = min(count, len(first))
    n[:k], block[:k] = np.array(first[:k], np.float64).T
    peak[:k], bandwidth[:k] = 66.908e12, 4269e9
    return {"n": n, "block": block, "peak_flops": peak, "bandwidth": bandwidth}


def _bound_tolerance(inputs, expected):
    # A handful of float64 roundings in any order of evaluation: 64 u relative is generous.
    return {k: 64 * U64 * np.abs(v) for k, v in expected.items()}


nbody_bound = formula_problem(
    "nbody_bound", title="Predict: an N-body step's FLOPs, bytes and time bound, untiled and tiled",
    function="nbody_bound",
    args=(("n", int), ("block", int), ("peak_flops", float), ("bandwidth", float)),
    results=("flops", "gather_bytes", "tiled_bytes", "gather_seconds", "tiled_seconds"),
    spec=_bound_spec, make_inputs=_bound_inputs, tolerance=_bound_tolerance,
    sizes=Sizes(visible=(3,), hidden=(200,)),
    value_hint=("flops: 20 per pair, N² pairs. gather_bytes: every thread loads every body's 16 "
                "bytes (x, y, z, m) from global memory, 16·N², plus 24·N (each body's own "
                "position read, its acceleration written). tiled_bytes: each block loads every "
                "body once, 16·N per block, ceil(N / block) blocks (the last one partial), plus "
                "the same 24·N. Each time bound is the larger of the FLOPs at the peak rate and "
                "that decomposition's bytes at the bandwidth."),
)
