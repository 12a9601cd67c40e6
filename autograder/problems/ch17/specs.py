"""Chapter 17's graded exercises: F^H·d of a non-Cartesian MRI reconstruction, one thread per
voxel (gather), the error bound of the sum when sin and cos are approximate, and the k-space
samples staged in shared memory chunk by chunk, compiled with fast trigonometry.

A case's size is ``(N, M)``: N voxels, M k-space samples. For voxel n and sample m::

    θ[m, n] = 2π · (kx[m] · x[n] + ky[m] · y[n] + kz[m] · z[n])
    rFhD[n] = Σ_m rMu[m] · cos θ − iMu[m] · sin θ
    iFhD[n] = Σ_m iMu[m] · cos θ + rMu[m] · sin θ

(μ · e^{+iθ} summed over the samples, μ = φ* · d, as PMPP §17.3 has it).

**The error bound** (the judged tolerance, per voxel, the same for both outputs). Write
``w[m] = |rMu[m]| + |iMu[m]|`` and ``A[m, n] = 2π · (|kx·x| + |ky·y| + |kz·z|)`` (≥ |θ|):

- θ in float32 (three products, two additions, a product with a rounded 2π) is off by at most
  ``γ_5 · A``; since |d cos/dθ| ≤ 1, each cos and sin inherits that error;
- the sine and cosine themselves are off by at most ``a + b · A`` (libdevice's ``sinf``/``cosf``:
  2 ulp, under ``a = 2^-22`` for values in [−1, 1], ``b = 0``; the fast hardware approximation
  ``sin.approx.f32``: ``a = 2^-21`` (the CUDA C++ Programming Guide gives 2^-21.41 for |θ| ≤ π)
  and ``b = 2^-22`` for its reduction of the argument, a product with 1/(2π) rounded in float32);
- each term rounds twice (two products and a difference) and the M terms are added in float32:
  ``γ_(M+2) · Σ w``.

So ``|error[n]| ≤ Σ_m w[m] · (a + (b + γ_5) · A[m, n]) + γ_(M+2) · Σ_m w[m]``, plus the
smallest normal float32. Exercise 17.2 asks for the same bound with the largest A in place of
each A (what the learner can say before running anything)."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, gamma
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch17.references import reference_fhd_chunked, reference_fhd_gather
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.inputs import cores, random_floats

U64 = 2.0 ** -53
TRIG_PLAIN = (2.0 ** -22, 0.0)              # (a, b): libdevice sinf / cosf, 2 ulp
TRIG_FAST = (2.0 ** -21, 2.0 ** -22)        # sin.approx.f32 / cos.approx.f32
BLOCK_SIZES = (32, 64, 96)
VISIBLE_BLOCK = 64
SPEED_BLOCK = 256
# The speed test: a 64³ volume and 20,011 samples (not a multiple of any chunk): 5.2·10⁹
# (voxel, sample) pairs, each a sine, a cosine and ~10 FLOPs; a few to tens of milliseconds on an
# H200 (to be calibrated there).
SPEED_SIZE = (64 ** 3, 20011)
# Pairs per float64 pass of the spec (memory: a few arrays of this many float64).
_PAIRS = 1 << 21


# ---- the spec and its bound ------------------------------------------------------------------------

def fhd_host(kx, ky, kz, x, y, z, rMu, iMu, idx=None) -> tuple[np.ndarray, np.ndarray]:
    """(rFhD, iFhD) in float64, at voxels ``idx`` only if given, in passes of ~2M pairs."""
    kx, ky, kz, x, y, z, rMu, iMu = (np.asarray(a, np.float64)
                                     for a in (kx, ky, kz, x, y, z, rMu, iMu))
    if idx is not None:
        x, y, z = x[idx], y[idx], z[idx]
    re = np.zeros(x.size)
    im = np.zeros(x.size)
    step = max(1, _PAIRS // max(1, x.size))
    for a in range(0, kx.size, step):
        s = slice(a, a + step)
        theta = 2 * np.pi * (np.outer(x, kx[s]) + np.outer(y, ky[s]) + np.outer(z, kz[s]))
        c, sn = np.cos(theta), np.sin(theta)
        re += c @ rMu[s] - sn @ iMu[s]
        im += c @ iMu[s] + sn @ rMu[s]
    return re, im


def fhd_bound(kx, ky, kz, x, y, z, rMu, iMu, trig=TRIG_PLAIN, idx=None) -> np.ndarray:
    """The module docstring's bound at every voxel (or at ``idx``): Σ w·A has a closed form,
    2π·(|x|·Σ w|kx| + |y|·Σ w|ky| + |z|·Σ w|kz|), so this costs O(N + M)."""
    a, b = trig
    w = np.abs(np.asarray(rMu, np.float64)) + np.abs(np.asarray(iMu, np.float64))
    x, y, z = (np.abs(np.asarray(v, np.float64)) for v in (x, y, z))
    if idx is not None:
        x, y, z = x[idx], y[idx], z[idx]
    wa = 2 * np.pi * (x * (w @ np.abs(kx.astype(np.float64)))
                      + y * (w @ np.abs(ky.astype(np.float64)))
                      + z * (w @ np.abs(kz.astype(np.float64))))
    total = w.sum()
    return a * total + (b + gamma(5)) * wa + gamma(w.size + 2) * total + TINY32


def _spec(kx, ky, kz, x, y, z, rMu, iMu, **launch):
    if x.size * kx.size > 1 << 22:     # a GPU's cases (up to 2·10⁸ pairs): the compiled loop
        re, im = fhd_sampled(kx, ky, kz, x, y, z, rMu, iMu, idx=np.arange(x.size))
    else:
        re, im = fhd_host(kx, ky, kz, x, y, z, rMu, iMu)
    return {"rFhD": re, "iFhD": im}


def _tolerance_with(trig):
    def tolerance(inputs, expected):
        t = fhd_bound(**{k: inputs[k] for k in _NAMES}, trig=trig)
        return {"rFhD": t, "iFhD": t}
    return tolerance


@njit_on_first_call
def _sample_loop():
    import math
    import numba

    @numba.njit(parallel=True, cache=False)
    def fhd_at(kx, ky, kz, x, y, z, rMu, iMu, idx, re, im):
        # float64 throughout, one voxel per iteration: the speed test checks 4096 voxels after
        # every timed call, 8·10⁷ pairs at the speed size; NumPy would take seconds each time.
        for i in numba.prange(idx.size):
            n = idx[i]
            xn, yn, zn = np.float64(x[n]), np.float64(y[n]), np.float64(z[n])
            a = 0.0
            b = 0.0
            for m in range(kx.size):
                t = 2 * math.pi * (np.float64(kx[m]) * xn + np.float64(ky[m]) * yn
                                   + np.float64(kz[m]) * zn)
                c, s = math.cos(t), math.sin(t)
                a += np.float64(rMu[m]) * c - np.float64(iMu[m]) * s
                b += np.float64(iMu[m]) * c + np.float64(rMu[m]) * s
            re[i] = a
            im[i] = b
    return fhd_at


def fhd_sampled(kx, ky, kz, x, y, z, rMu, iMu, idx) -> tuple[np.ndarray, np.ndarray]:
    """(rFhD, iFhD) in float64 at voxels ``idx`` (compiled with numba.njit, all cores)."""
    idx = np.ascontiguousarray(idx, np.int64)
    re, im = np.empty(idx.size), np.empty(idx.size)
    _sample_loop(*(np.ascontiguousarray(a) for a in (kx, ky, kz, x, y, z, rMu, iMu)), idx, re, im)
    return re, im


def _sample_with(trig):
    def sample(inputs, idx):
        idx = np.asarray(idx, np.int64)
        args = {k: inputs[k] for k in _NAMES}
        re, im = fhd_sampled(**args, idx=idx)
        t = fhd_bound(**args, trig=trig, idx=idx)
        return {"rFhD": re, "iFhD": im}, {"rFhD": t, "iFhD": t}
    return sample


_NAMES = ("kx", "ky", "kz", "x", "y", "z", "rMu", "iMu")


# ---- inputs ------------------------------------------------------------------------------------------

def scan_inputs(rng, size) -> dict:
    """Voxels in a unit field of view (x, y, z in [−½, ½)) and samples of a k-space of a random
    extent (up to ±K cycles per field of view, K from 4 to 24: θ reaches a few hundred radians,
    where fast trigonometry's error shows); μ with a random offset and scale, both signs."""
    n, m = (int(v) for v in size)
    extent = rng.uniform(4, 24)
    k = (extent * rng.uniform(-1, 1, (3, m))).astype(np.float32)
    v = rng.uniform(-0.5, 0.5, (3, n)).astype(np.float32)
    return {"kx": k[0], "ky": k[1], "kz": k[2], "x": v[0], "y": v[1], "z": v[2],
            "rMu": random_floats(rng, m), "iMu": random_floats(rng, m)}


def _outputs(size):
    n = int(size[0])
    return {"rFhD": ((n,), np.float32), "iFhD": ((n,), np.float32)}


def _blocks(size, threads):
    return (int(size[0]) + threads - 1) // threads


def _launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](*(inputs[k] for k in _NAMES), outputs["rFhD"],
                                      outputs["iFhD"])


def _label(size) -> str:
    n, m = (int(v) for v in size)
    return f"N = {n} voxels, M = {m} samples"


def fhd_flops(size) -> int:
    """Per (voxel, sample) pair: θ (3 multiplies, 2 adds, ×2π: 6), the four products and two
    sums of the terms (6), and a sine and a cosine counted as one FLOP each: 14."""
    n, m = (int(v) for v in size)
    return 14 * n * m


def fhd_bytes(size) -> int:
    """The least a call moves: every input read once, both outputs written once (float32)."""
    n, m = (int(v) for v in size)
    return 4 * (5 * m + 3 * n + 2 * n)


# ---- CPU baselines ------------------------------------------------------------------------------------

@njit_on_first_call
def _serial_loop():
    import math
    import numba

    @numba.njit(cache=False)
    def fhd(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
        two_pi = np.float32(2 * math.pi)
        for n in range(x.size):
            re = np.float32(0.0)
            im = np.float32(0.0)
            for m in range(kx.size):
                t = two_pi * (kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n])
                c, s = math.cos(t), math.sin(t)
                re += rMu[m] * c - iMu[m] * s
                im += iMu[m] * c + rMu[m] * s
            rFhD[n] = re
            iFhD[n] = im
    return fhd


@njit_on_first_call
def _parallel_loop():
    import math
    import numba

    @numba.njit(parallel=True, cache=False)
    def fhd(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
        two_pi = np.float32(2 * math.pi)
        for n in numba.prange(x.size):
            re = np.float32(0.0)
            im = np.float32(0.0)
            for m in range(kx.size):
                t = two_pi * (kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n])
                c, s = math.cos(t), math.sin(t)
                re += rMu[m] * c - iMu[m] * s
                im += iMu[m] * c + rMu[m] * s
            rFhD[n] = re
            iFhD[n] = im
    return fhd


def _serial(**arrays):                 # Baseline.run is called with keywords
    _serial_loop(*(arrays[k] for k in _NAMES + ("rFhD", "iFhD")))


def _parallel(**arrays):
    _parallel_loop(*(arrays[k] for k in _NAMES + ("rFhD", "iFhD")))


BASELINES = {
    "serial": Baseline("numba.njit, a loop over voxels and samples (1 core)", _serial,
                       at_speed_size=False),
    "parallel": Baseline(f"numba.njit parallel over voxels ({cores()} cores)", _parallel),
}


# ---- what a wrong kernel usually did ------------------------------------------------------------------

def _variants(inputs) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The spec with one classic slip each, for the verdict's diagnosis (small cases only)."""
    a = {k: inputs[k] for k in _NAMES}
    re, im = fhd_host(**a)
    half = {**a, "kx": a["kx"] / (2 * np.pi), "ky": a["ky"] / (2 * np.pi),
            "kz": a["kz"] / (2 * np.pi)}
    r2, i2 = fhd_host(**half)
    conj_re, conj_im = fhd_host(**{**a, "kx": -a["kx"], "ky": -a["ky"], "kz": -a["kz"]})
    return {
        "the sign of the exponent is flipped: the sum is of μ · e^{+iθ}, so rFhD gains "
        "− iMu · sin θ and iFhD gains + rMu · sin θ": (conj_re, conj_im),
        "the 2π is missing from θ = 2π · (kx·x + ky·y + kz·z)": (r2, i2),
        "the real and imaginary outputs are swapped (rFhD is the real part)": (im, re),
    }


class FhdProblem(Problem):
    """A Problem whose verdict names the classic slips of an F^H·d kernel when the values match
    one of them (the sign of the exponent, the missing 2π, the outputs swapped)."""

    def judge(self, case, outcome, show_inputs=True):
        verdict = super().judge(case, outcome, show_inputs)
        if verdict.passed or outcome.error or case.size[0] * case.size[1] > 1 << 20:
            return verdict
        _, tol = self.reference_values(case)
        got_re = outcome.outputs.get("rFhD")
        got_im = outcome.outputs.get("iFhD")
        if got_re is None or got_im is None:
            return verdict
        for what, (re, im) in _variants(case.inputs).items():
            if (np.all(np.abs(got_re - re) <= tol["rFhD"])
                    and np.all(np.abs(got_im - im) <= tol["iFhD"])):
                verdict.hint = f"Your values are F^H·d with one slip: {what}."
                break
        return verdict


# ---- 17.1 one thread per voxel ---------------------------------------------------------------------

# (N, M). Visible: 150 voxels × 37 samples (a partial block, M prime), 70 × 20, one voxel × 5.
# Hidden: 333 × 70 (4.2 times the largest visible in pairs), 1 voxel × 200 samples, two random.
FHD_CPU_SIZES = Sizes(visible=((150, 37), (70, 20), (1, 5)),
                      hidden=((333, 70), (1, 200)), hidden_random=(2, 1, 120))
FHD_GPU_SIZES = Sizes(visible=((32771, 1500),) + FHD_CPU_SIZES.visible,
                      hidden=FHD_CPU_SIZES.hidden + ((65537, 2999),),
                      hidden_random=(3, 1, 4000), speed=SPEED_SIZE)

GATHER_HINT = ("rFhD[n] = Σ over m of rMu[m]·cos θ − iMu[m]·sin θ and iFhD[n] = Σ of "
               "iMu[m]·cos θ + rMu[m]·sin θ, with θ = 2π·(kx[m]·x[n] + ky[m]·y[n] + kz[m]·z[n]): "
               "one thread per voxel n (guard n < x.size, the voxels, not the samples), the sum "
               "over every sample m in two float32 locals, each output stored once (it arrives "
               "filled with NaN: start the sums from 0, do not add to it).")

fhd_gather = FhdProblem(
    "fhd_gather", title="F^H·d, one thread per voxel: the loops interchanged",
    spec=_spec, make_inputs=scan_inputs, outputs=_outputs, tolerance=_tolerance_with(TRIG_PLAIN),
    launch=_launch, block_sizes=BLOCK_SIZES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_blocks, cpu_sizes=FHD_CPU_SIZES, gpu_sizes=FHD_GPU_SIZES,
    bytes_moved=fhd_bytes, flops=fhd_flops, baselines=BASELINES,
    reference=reference_fhd_gather, sample_spec=_sample_with(TRIG_PLAIN),
    speed_launch=lambda size: (_blocks(size, SPEED_BLOCK), SPEED_BLOCK),
    # The reference is the same algorithm with libdevice's sinf and cosf: a plain solution runs
    # at its speed; 0.5 leaves room for another order of the arithmetic and the spread between
    # runs. The baseline is the same loop compiled for the host, on every core.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="parallel", min_speedup=5.0),
    size_label=_label, value_hint=GATHER_HINT)


# ---- 17.2 the bound, before measuring -----------------------------------------------------------------

def _bound_spec(m, mu_sum, theta_max, a, b):
    return {"bound": mu_sum * (a + (b + gamma(5)) * theta_max)
            + (m + 2) * 2.0 ** -24 / (1 - (m + 2) * 2.0 ** -24) * mu_sum}


def _bound_inputs(rng, count):
    m = rng.integers(1, 1 << 22, count).astype(np.float64)
    mu_sum = 10.0 ** rng.uniform(-3, 6, count)
    theta = 10.0 ** rng.uniform(-1, 4, count)
    a = 2.0 ** rng.uniform(-24, -18, count)
    b = np.where(rng.random(count) < 0.3, 0.0, 2.0 ** rng.uniform(-24, -20, count))
    # The notebook's questions first: the speed test's scan (20,011 samples, θ up to 2π·3·32·½
    # ≈ 302, Σ w = 20,011) with fast trigonometry, then with libdevice's.
    first = np.array([[20011, 20011, 302.0, 2.0 ** -21, 2.0 ** -22],
                      [20011, 20011, 302.0, 2.0 ** -22, 0.0]])
    k = min(count, len(first))
    m[:k], mu_sum[:k], theta[:k], a[:k], b[:k] = first[:k].T
    return {"m": m, "mu_sum": mu_sum, "theta_max": theta, "a": a, "b": b}


def _bound_tolerance(inputs, expected):
    return {k: 64 * U64 * np.abs(v) for k, v in expected.items()}


fhd_error_bound = formula_problem(
    "fhd_error_bound", title="Predict: the error bound of F^H·d with approximate sine and cosine",
    function="fhd_error_bound",
    args=(("m", int), ("mu_sum", float), ("theta_max", float), ("a", float), ("b", float)),
    results=("bound",), spec=_bound_spec, make_inputs=_bound_inputs,
    tolerance=_bound_tolerance, sizes=Sizes(visible=(2,), hidden=(200,)),
    value_hint=("Three parts, each a multiple of mu_sum: the sine's and cosine's own error at "
                "the largest argument (a plus b times theta_max); the error of the float32 "
                "argument itself, γ_5 times theta_max, which the cosine passes on since its "
                "slope is at most 1; and the sum's rounding, γ_(m+2), with γ_k = k·u / (1 − k·u) "
                "and u = 2^-24."))


# ---- 17.3 the samples staged in shared memory, fast trigonometry -----------------------------------

# As 17.1, with sizes that make the chunks' tails matter: M = 150 (two chunks of 64 and a tail of
# 22), 20 (one partial chunk), 5; hidden 200 × 70 (4.7 times the largest visible in pairs, a tail
# of 6), 1 × 200 and two random. Small: the simulator records every shared-memory access.
fhd_chunked = FhdProblem(
    "fhd_chunked",
    title="F^H·d with the k-space samples staged in shared memory, chunk by chunk, fast sin/cos",
    spec=_spec, make_inputs=scan_inputs, outputs=_outputs, tolerance=_tolerance_with(TRIG_FAST),
    launch=_launch, block_sizes=BLOCK_SIZES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_blocks,
    cpu_sizes=Sizes(visible=((20, 150), (70, 20), (1, 5)), hidden=((200, 70), (1, 200)),
                    hidden_random=(2, 1, 80)),
    gpu_sizes=Sizes(visible=((32771, 1500), (20, 150), (70, 20), (1, 5)),
                    hidden=((200, 70), (1, 200), (65537, 2999)), hidden_random=(3, 1, 4000)),
    bytes_moved=fhd_bytes, flops=fhd_flops, reference=reference_fhd_chunked,
    sample_spec=_sample_with(TRIG_FAST), size_label=_label,
    value_hint=(GATHER_HINT + " Wrong only for the last samples? The last chunk is partial: "
                "load only the samples that exist, and add only those. Every thread of the "
                "block, voxel or not, must help load and reach every barrier."))
