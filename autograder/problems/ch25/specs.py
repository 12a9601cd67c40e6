"""Chapter 25's graded exercises: LayerNorm and RMSNorm over the last dimension of a
``(rows, n)`` float32 array, one warp per row, and LayerNorm's backward pass for the input
gradient; the inputs, the float64 specs, the error bounds, the launches and the CPU baselines
(which 25.4, the same LayerNorm in Triton, shares: :mod:`.triton_specs`).

The forms (every sum over the row's n elements, μ the mean, σ² the *biased* variance)::

    LayerNorm   y = (x − μ) · r · γ + β,     r = 1 / sqrt(σ² + ε)
    RMSNorm     y = x · r · γ,               r = 1 / sqrt(mean(x²) + ε)
    backward    dx = r · (g − mean(g) − x̂ · mean(g · x̂)),  g = γ · dy,  x̂ = (x − μ) · r

The backward pass is given the forward's saved ``mean`` and ``rstd`` (float32, one per row) and
is judged against the formula evaluated in float64 **from those saved values**.

Inputs: each row has its own scale s (10^-2 .. 10^2) and one of three kinds, shuffled over the
rows, every case holding at least one row of the first: (0) a **large offset**, x = o + s·N(0, 1)
with |o| = κ·s, κ up to 10^4 (κ = |μ| / σ, the conditioning of the variance); (1) a scale near
sqrt(ε), where ε matters; (2) a moderate offset (|o| ≤ 5s). ε is drawn per case (10^-6 .. 10^-2).

Tolerances: error bounds for correct float32 code against the float64 spec
----------------------------------------------------------------------------
u = 2^-24, γ_k = k·u / (1 − k·u) (Higham), c = ceil(n / 32) + 12 the longest chain of float32
operations a lane's sum may build: its own ceil(n / W) elements one after another, then up to
log2(1024) merges across lanes and warps, plus two to spare. Per row, A = max|x_i| (≥ |μ|), σ
the float64 standard deviation.

* **Mean.** A sum of n terms in any order, then a division (Welford's running mean rounds at most
  twice per element, as a sum does): |μ̂ − μ| ≤ δμ = γ_c · A. A row of one element has its mean
  and its variance (0) exactly in either formula: δμ = 0 there.
* **Variance.** Chan, Golub and LeVeque (1983) bound the relative error of the two-pass and of
  Welford's updating formula by about c·κ·u (κσ² ≈ |μ|σ ≤ Aσ), against c·κ²·u for E[x²] − E[x]²
  (which is why that one fails at κ = 10^4: κ²u ≈ 6, the whole variance). With a factor of two
  to spare for Chan's merges and the deviations' own roundings, and the two-pass's second-order
  term n·δμ² / n: |σ̂² − σ²| ≤ E = γ_2c · (σ² + 2Aσ) + δμ².
* **r = 1 / sqrt(σ² + ε).** Adding ε rounds once (u); e = (E + u(σ² + ε)) / (σ² + ε) is the
  relative error of σ̂² + ε, and for |e| ≤ 1/2, |(1 + e)^(-1/2) − 1| ≤ 1.42·|e|; sqrt and the
  division (or rsqrt) add 4u: ρ = 1.5·e + 4u. The inputs keep e ≤ 1/4 (the large offset is
  capped at κ ≤ 10^6 / c).
* **y.** (x_i − μ̂) is off by δμ plus its own rounding; then ·r, ·γ, +β round once each:
  |ŷ_i − y_i| ≤ |γ_i|·r·(δμ(1 + ρ) + |x_i − μ|·ρ + 4u(|x_i − μ| + δμ)) + 2u(|y_i| + |β_i|).
* **RMSNorm.** mean(x²) has positive terms only: relative error γ_(c+2) (squares, the sum, the
  division), so ρ = 1.5·(γ_(c+2)·m + u(m + ε)) / (m + ε) + 4u with m = mean(x²), and
  |ŷ_i − y_i| ≤ |y_i|·(ρ + 2u).
* **Backward.** With m1 = mean(g), m2 = mean(g·x̂) (float64, from the saved μ and r): x̂ is two
  roundings away, g one; m1's sum γ_(c+2)·mean|g|, m2's γ_(c+6)·mean|g·x̂|; the three-term
  difference and the product by r four more:
  |dx̂_i − dx_i| ≤ r·(γ_(c+6)·(mean|g| + |x̂_i|·mean|g·x̂|) + γ_4·(|g_i| + |m1| + |x̂_i·m2|)) + u|dx_i|.

Every bound adds the smallest normal float32 (values near 0). ``tests/test_ch25.py`` shows that
the course's kernels (Welford + Chan, two-pass) stay within them and that E[x²] − E[x]², the
unbiased n − 1 variance, ε outside the square root, a wrong merge weight and a missing mean term
of the backward pass each miss them on the checks' cases.

Warps: the three exercises ask for code that runs at any warp size. CPU mode's hidden cases
alternate warp sizes 64 and 32 (:func:`autograder.problems.ch10.at_warp_size`); a judge on a GPU
runs them again at the other warp size in a CPU-mode student process (``portability_cases``).
"""

from __future__ import annotations

import math

import numpy as np

from autograder.core.checks import TINY32, U32, gamma
from autograder.grading.problem import Baseline, Case, Problem, Sizes, SpeedBar
from autograder.machine import device
from autograder.problems.ch10 import at_warp_size, device_warp_size
from autograder.problems.ch25.references import (reference_layernorm,
                                                 reference_layernorm_backward, reference_rmsnorm)
from autograder.problems.kit import cores, njit_on_first_call, normal_fast, once_per_array

LARGE_OFFSET = 1e4          # κ = |μ| / σ of a large-offset row (capped by the chain, see above)
EPS_RANGE = (-6.0, -2.0)    # ε = 10^U(-6, -2)
WARP_BLOCKS = (64, 128)     # multiples of 64: whole warps at warp size 32 and 64
SPEED_ROWS = (16384, 4096)    # the speed test: 16384 rows of 4096 (256 MiB in, 256 MiB out)


# ---- bounds ---------------------------------------------------------------------------------------

def chain(n: int) -> int:
    """c: the longest chain of float32 roundings in a lane's part of a row's sum (see above)."""
    return -(-int(n) // 32) + 12


def max_kappa(n: int) -> float:
    """The largest offset in units of σ the inputs use: 10^4, less for long rows, so that the
    variance's bound stays below a quarter of it (4·c·κ·u ≤ 1/4)."""
    return min(LARGE_OFFSET, 1e6 / chain(n))


def _row_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(μ, σ², max|x|) of each row, in float64, a block of rows at a time."""
    rows = x.shape[0]
    mu, var, amax = np.empty(rows), np.empty(rows), np.empty(rows)
    step = max(1, (1 << 22) // max(1, x.shape[1]))
    for a in range(0, rows, step):
        part = np.asarray(x[a:a + step], np.float64)
        m = part.mean(axis=1)
        mu[a:a + step] = m
        var[a:a + step] = np.mean((part - m[:, None]) ** 2, axis=1)
        amax[a:a + step] = np.abs(part).max(axis=1)
    return mu, var, amax


def layernorm_host(x, gamma_, beta, eps) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, μ, r) in float64: the spec of the forward pass."""
    x = np.asarray(x, np.float64)
    mu = x.mean(axis=1)
    var = np.mean((x - mu[:, None]) ** 2, axis=1)
    r = 1.0 / np.sqrt(var + float(eps))
    y = (x - mu[:, None]) * r[:, None] * np.asarray(gamma_, np.float64) + np.asarray(beta, np.float64)
    return y, mu, r


def layernorm_bound(x, gamma_, beta, eps, y=None, moments=None,
                    c: int | None = None) -> np.ndarray:
    """The float32 error bound of every y (see the module's docstring); ``c`` the longest chain
    of roundings of the row's sums (:func:`chain` for one warp per row unless given)."""
    x64 = np.asarray(x, np.float64)
    n = x64.shape[1]
    mu, var, amax = _row_moments(np.asarray(x)) if moments is None else moments
    sigma = np.sqrt(var)
    c = chain(n) if c is None else int(c)
    exact = n == 1                  # one element: its mean is itself and its variance 0, exactly
    dmu = 0 * amax if exact else gamma(c) * amax
    err_var = gamma(2 * c) * (var + 2 * amax * sigma) + dmu ** 2
    v = var + float(eps)
    e = (err_var + U32 * v) / v
    rho = np.where(e <= 0.5, 1.5 * e + 4 * U32, np.inf)
    r = 1.0 / np.sqrt(v)
    dev = np.abs(x64 - mu[:, None])
    g = np.abs(np.asarray(gamma_, np.float64))
    b = np.abs(np.asarray(beta, np.float64))
    if y is None:
        y = (x64 - mu[:, None]) * r[:, None] * np.asarray(gamma_, np.float64) + np.asarray(beta, np.float64)
    return (g * r[:, None] * (dmu[:, None] * (1 + rho[:, None]) + dev * rho[:, None]
                              + 4 * U32 * (dev + dmu[:, None]))
            + 2 * U32 * (np.abs(y) + b) + TINY32)


def rmsnorm_host(x, gamma_, eps) -> tuple[np.ndarray, np.ndarray]:
    """(y, r) in float64: the spec of RMSNorm."""
    x = np.asarray(x, np.float64)
    r = 1.0 / np.sqrt(np.mean(x * x, axis=1) + float(eps))
    return x * r[:, None] * np.asarray(gamma_, np.float64), r


def rmsnorm_bound(x, y, eps) -> np.ndarray:
    x = np.asarray(x, np.float64)
    m = np.mean(x * x, axis=1)
    c = chain(x.shape[1])
    v = m + float(eps)
    rho = 1.5 * (gamma(c + 2) * m + U32 * v) / v + 4 * U32
    return np.abs(y) * (rho[:, None] + 2 * U32) + TINY32


def backward_host(dy, x, gamma_, mean, rstd) -> tuple[np.ndarray, np.ndarray]:
    """(dx, its error bound) in float64 from the saved float32 ``mean`` and ``rstd``."""
    dy, x = np.asarray(dy, np.float64), np.asarray(x, np.float64)
    mu, r = np.asarray(mean, np.float64)[:, None], np.asarray(rstd, np.float64)[:, None]
    g = np.asarray(gamma_, np.float64) * dy
    xhat = (x - mu) * r
    m1 = g.mean(axis=1, keepdims=True)
    m2 = (g * xhat).mean(axis=1, keepdims=True)
    dx = r * (g - m1 - xhat * m2)
    c = chain(x.shape[1])
    tol = (r * (gamma(c + 6) * (np.abs(g).mean(axis=1, keepdims=True)
                                + np.abs(xhat) * np.abs(g * xhat).mean(axis=1, keepdims=True))
                + gamma(4) * (np.abs(g) + np.abs(m1) + np.abs(xhat * m2)))
           + U32 * np.abs(dx) + TINY32)
    return dx, tol


# ---- inputs ----------------------------------------------------------------------------------------

def row_kinds(rng, rows: int) -> np.ndarray:
    """Each row's kind (0 large offset, 1 scale near sqrt(ε), 2 moderate offset), shuffled; row
    counts of one or more always hold a kind 0."""
    return rng.permutation(np.arange(int(rows)) % 3)


def _offsets_and_scales(rng, rows: int, n: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    kinds = row_kinds(rng, rows)
    scale = 10.0 ** rng.uniform(-2, 2, rows)
    near_eps = math.sqrt(eps) * rng.uniform(0.3, 3.0, rows)
    scale = np.where(kinds == 1, near_eps, scale)
    sign = rng.choice([-1.0, 1.0], rows)
    kappa = np.where(kinds == 0, max_kappa(n) * rng.uniform(0.5, 1.0, rows),
                     np.where(kinds == 1, rng.uniform(0, 3, rows), rng.uniform(0, 5, rows)))
    return sign * kappa * scale, scale


def make_rows(rng, rows: int, n: int, eps: float) -> np.ndarray:
    """A (rows, n) float32 array of the three kinds of rows (see the module's docstring)."""
    offset, scale = _offsets_and_scales(rng, rows, n, eps)
    z = rng.standard_normal((int(rows), int(n)))
    return (offset[:, None] + scale[:, None] * z).astype(np.float32)


def make_rows_fast(rng, rows: int, n: int, eps: float) -> np.ndarray:
    """Like :func:`make_rows` at the speed test's size, in float32 throughout, in parallel."""
    offset, scale = _offsets_and_scales(rng, rows, n, eps)
    x = normal_fast(rng, int(rows) * int(n)).reshape(int(rows), int(n))
    x *= scale[:, None].astype(np.float32)
    x += offset[:, None].astype(np.float32)
    return x


def draw_eps(rng) -> np.float32:
    return np.float32(10.0 ** rng.uniform(*EPS_RANGE))


def _affine(rng, n):
    gamma_ = (rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 2.0, n)).astype(np.float32)
    beta = rng.uniform(-3.0, 3.0, n).astype(np.float32)
    return gamma_, beta


def layernorm_inputs(rng, size):
    rows, n = (int(v) for v in size)
    eps = draw_eps(rng)
    gamma_, beta = _affine(rng, n)
    return {"x": make_rows(rng, rows, n, eps), "gamma": gamma_, "beta": beta, "eps": eps}


def layernorm_speed_inputs(rng, size):
    rows, n = (int(v) for v in size)
    eps = draw_eps(rng)
    gamma_, beta = _affine(rng, n)
    return {"x": make_rows_fast(rng, rows, n, eps), "gamma": gamma_, "beta": beta, "eps": eps}


def _rmsnorm_inputs(rng, size):
    rows, n = (int(v) for v in size)
    eps = draw_eps(rng)
    gamma_, _ = _affine(rng, n)
    return {"x": make_rows(rng, rows, n, eps), "gamma": gamma_, "eps": eps}


def saved_stats(x, eps) -> tuple[np.ndarray, np.ndarray]:
    """The forward pass's saved (mean, rstd) per row, float32, as a fused LayerNorm keeps them."""
    mu, var, _ = _row_moments(np.asarray(x))
    return mu.astype(np.float32), (1.0 / np.sqrt(var + float(eps))).astype(np.float32)


def _backward_inputs(rng, size):
    rows, n = (int(v) for v in size)
    eps = draw_eps(rng)
    x = make_rows(rng, rows, n, eps)
    gamma_, _ = _affine(rng, n)
    mean, rstd = saved_stats(x, eps)
    xhat = (x.astype(np.float64) - mean[:, None]) * rstd[:, None]
    # dy with a mean and a part along x̂ of its own per row: both mean terms of dx matter.
    s = 10.0 ** rng.uniform(-2, 2, (rows, 1))
    dy = s * (rng.standard_normal((rows, n)) + rng.uniform(-1, 1, (rows, 1))
              + rng.uniform(-1, 1, (rows, 1)) * xhat * np.sign(gamma_))
    return {"dy": dy.astype(np.float32), "x": x, "gamma": gamma_, "mean": mean, "rstd": rstd}


# ---- specs and tolerances -------------------------------------------------------------------------

def layernorm_spec(x, gamma, beta, eps, **launch):
    return {"y": layernorm_host(x, gamma, beta, eps)[0]}


def _layernorm_tolerance(inputs, expected):
    return {"y": layernorm_bound(inputs["x"], inputs["gamma"], inputs["beta"], inputs["eps"],
                                 expected["y"])}


def _rmsnorm_spec(x, gamma, eps, **launch):
    return {"y": rmsnorm_host(x, gamma, eps)[0]}


def _rmsnorm_tolerance(inputs, expected):
    return {"y": rmsnorm_bound(inputs["x"], expected["y"], inputs["eps"])}


def _backward_spec(dy, x, gamma, mean, rstd, **launch):
    return {"dx": backward_host(dy, x, gamma, mean, rstd)[0]}


def _backward_tolerance(inputs, expected):
    return {"dx": backward_host(inputs["dy"], inputs["x"], inputs["gamma"], inputs["mean"],
                                inputs["rstd"])[1]}


def _rows_outputs(name):
    return lambda size: {name: ((int(size[0]), int(size[1])), np.float32)}


# ---- launches ---------------------------------------------------------------------------------------

def row_blocks(size, threads: int) -> int:
    """Fewer warps than rows, so only a loop over the rows covers them: 2 blocks in CPU mode, a
    few dozen to a few hundred on a GPU."""
    rows = int(size[0])
    if device.current().is_gpu:
        return max(1, min(-(-rows * 32 // int(threads)), 96 + rows % 37))
    return 2


def _launcher(names_in, name_out):
    def launch(kernel, inputs, outputs, case):
        args = [inputs[k] for k in names_in] + [outputs[name_out]]
        warp = inputs.get("warp_size")
        if warp is None:
            kernel[case.blocks, case.threads](*args)
            return
        with at_warp_size(int(warp)):
            kernel[case.blocks, case.threads](*args)
    return launch


SPEED_BLOCKS_PER_SM = 8     # of 256 threads: 2048 threads, a whole SM of an H100/H200


def speed_shape(size) -> tuple[int, int]:
    """(blocks, threads) for the speed test: 256 threads (8 warps, 8 rows at a time per block),
    enough blocks to fill every SM, never more than the rows need."""
    from numba import cuda as numba_cuda
    sms = numba_cuda.get_current_device().MULTIPROCESSOR_COUNT
    return max(1, min(sms * SPEED_BLOCKS_PER_SM, -(-int(size[0]) // 8))), 256


@once_per_array
def _cached_moments(x):
    return _row_moments(x)


def layernorm_sample(inputs, idx, chain_of=chain):
    """(expected, bound) at flat indices ``idx`` of y; ``chain_of(n)`` the chain of roundings."""
    x = inputs["x"]
    rows, n = x.shape
    r_idx, c_idx = np.unravel_index(np.asarray(idx), (rows, n))
    mu, var, amax = _cached_moments(x)
    xs = x[r_idx, c_idx][:, None].astype(np.float64)
    g, b = inputs["gamma"][c_idx][:, None], inputs["beta"][c_idx][:, None]
    eps = float(inputs["eps"])
    moments = (mu[r_idx], var[r_idx], amax[r_idx])
    y = (xs - moments[0][:, None]) / np.sqrt(moments[1][:, None] + eps) * g + b
    # The bound at one column per sampled element: x as a (k, 1) array with its row's moments.
    tol = _bound_at(xs, g, b, eps, y, moments, n, chain_of(n))
    return {"y": y[:, 0]}, {"y": tol[:, 0]}


def _bound_at(xs, g, b, eps, y, moments, n, c):
    mu, var, amax = moments
    sigma = np.sqrt(var)
    dmu = 0 * amax if n == 1 else gamma(c) * amax
    err_var = gamma(2 * c) * (var + 2 * amax * sigma) + dmu ** 2
    v = var + eps
    e = (err_var + U32 * v) / v
    rho = np.where(e <= 0.5, 1.5 * e + 4 * U32, np.inf)[:, None]
    r = (1.0 / np.sqrt(v))[:, None]
    dev = np.abs(xs - mu[:, None])
    return (np.abs(g) * r * (dmu[:, None] * (1 + rho) + dev * rho + 4 * U32 * (dev + dmu[:, None]))
            + 2 * U32 * (np.abs(y) + np.abs(b)) + TINY32)


def layernorm_bytes(size):
    rows, n = (int(v) for v in size)
    return 4 * (2 * rows * n + 2 * n)           # x read once, y written, γ and β


def layernorm_flops(size):
    rows, n = (int(v) for v in size)
    return 9 * rows * n


# ---- CPU baselines -----------------------------------------------------------------------------------

def _numpy_layernorm(x, gamma, beta, eps, y):
    mu = x.mean(axis=1, keepdims=True)
    d = x - mu
    var = np.mean(d * d, axis=1, keepdims=True)
    y[...] = d / np.sqrt(var + eps) * gamma + beta


@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False)
    def layernorm(x, gamma, beta, eps, y):
        rows, n = x.shape
        for row in numba.prange(rows):
            count = 0.0
            mean = 0.0
            m2 = 0.0
            for i in range(n):                  # Welford, float64 on the host
                count += 1.0
                d = x[row, i] - mean
                mean += d / count
                m2 += d * (x[row, i] - mean)
            r = 1.0 / np.sqrt(m2 / n + eps)
            for i in range(n):
                y[row, i] = (x[row, i] - mean) * r * gamma[i] + beta[i]
    return layernorm


def _parallel_layernorm(x, gamma, beta, eps, y):
    _parallel_loop(x, gamma, beta, eps, y)


BASELINES = {
    "numpy": Baseline("NumPy, two-pass, vectorised over rows (float32, 1 core)", _numpy_layernorm),
    "parallel": Baseline(f"numba.njit Welford, prange over rows ({cores()} cores)",
                         _parallel_layernorm),
}


# ---- the problems ------------------------------------------------------------------------------------

def rows_label(size) -> str:
    rows, n = (int(v) for v in size)
    return f"{rows} row{'s' * (rows != 1)} of n = {n}"


CANCELLATION_HINT = (
    "only rows whose mean is large against their spread are wrong (|mean| / std above 100 on "
    "every wrong row): that is the signature of E[x²] − E[x]², whose two terms cancel in float32. "
    "Compute the variance from deviations: Welford's update in each lane, Chan's merge across "
    "lanes.")


def diagnose_layernorm(case: Case, expected, tolerance, got) -> str | None:
    """A hint from which rows are wrong: all of them large-offset rows means cancellation."""
    bad = np.any(~(np.abs(got - expected) <= tolerance), axis=1)
    x = np.asarray(case.inputs["x"], np.float64)
    kappa = np.abs(x.mean(axis=1)) / np.maximum(x.std(axis=1), 1e-300)
    if bad.any() and np.all(kappa[bad] > 100) and (kappa <= 100).any():
        return CANCELLATION_HINT
    return None


NEGATIVE_VARIANCE_HINT = (
    "math.sqrt was given a negative number: a variance computed as E[x²] − E[x]² comes out "
    "negative on rows whose mean is large against their spread (the two terms cancel in "
    "float32; on a GPU the square root gives NaN). Compute it from deviations: Welford's update "
    "in each lane and Chan's merge across lanes.")


class RowsProblem(Problem):
    """A row-wise exercise written for any warp size: sizes are (rows, n); CPU mode's hidden
    cases alternate warp sizes 64 and 32, a GPU runs its own (the judge adds the other one in a
    CPU-mode process through :meth:`portability_cases`)."""

    portable_warp_sizes = (32, 64)

    def _with_warps(self, cases: list[Case], warps: list[int]) -> list[Case]:
        for case, warp in zip(cases, warps):
            case.inputs["warp_size"] = int(warp)
            case.label = f"{rows_label(case.size)} at warp size {int(warp)}"
        return cases

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        """Problem's cases, with the random sizes moved off multiples of 32 (a row count or
        length of whole warps is no test of the tail) and the warp size of each case."""
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = list(self.sizes.hidden if hidden else self.sizes.visible)
        count, lo, hi = self.sizes.hidden_random
        if hidden and count:
            sizes += [tuple(int(v) + (int(v) > 1 and int(v) % 32 == 0)
                            for v in rng.integers(lo, hi, size=2)) for _ in range(count)]
        shapes = (self.block_size_cycle(rng, len(sizes)) if hidden
                  else [self.visible_block_size] * len(sizes))
        cases = []
        for size, threads in zip(sizes, shapes):
            case = Case(size=size, inputs=self.make_inputs(rng, size), label=rows_label(size))
            case.threads, case.blocks = threads, self.blocks_for(size, threads)
            cases.append(case)
        if hidden and not device.current().is_gpu:
            warps = [64 if i % 2 == 0 else 32 for i in range(len(cases))]
        else:
            warps = [device_warp_size()] * len(cases)
        return self._with_warps(cases, warps)

    diagnose = None     # (case, expected, tolerance, got) -> a hint, or None: set per exercise

    def judge(self, case: Case, outcome, show_inputs: bool = True):
        verdict = super().judge(case, outcome, show_inputs=show_inputs)
        if verdict.passed:
            return verdict
        if outcome.error and "math domain error" in outcome.error:
            verdict.hint = NEGATIVE_VARIANCE_HINT
        elif not outcome.error and self.diagnose is not None:
            expected, tolerance = self.reference_values(case)
            name = next(iter(expected))
            got = outcome.outputs.get(name)
            if got is not None and np.shape(got) == expected[name].shape:
                hint = self.diagnose(case, expected[name], tolerance[name], np.asarray(got))
                verdict.hint = hint or verdict.hint
        return verdict

    def portability_cases(self, warp: int = 64, seed: int | None = None) -> list[Case]:
        """The CPU hidden sizes at warp size ``warp`` (for a judge on a GPU)."""
        rng = np.random.default_rng(self.case_seed(True) if seed is None else seed)
        sizes = self.cpu_sizes.hidden
        shapes = self.block_size_cycle(rng, len(sizes))
        cases = []
        for size, threads in zip(sizes, shapes):
            case = Case(size=size, inputs=self.make_inputs(rng, size))
            case.threads, case.blocks = threads, 2
            cases.append(case)
        return self._with_warps(cases, [warp] * len(cases))


# (rows, n). CPU: a row length that is not a multiple of 32 or 64 (the last pass of every lane
# partial), rows shorter than a warp (lanes with nothing to do), a single element; more rows
# than the launch has warps. GPU: the same plus chip-filling and long rows.
# Hidden: 4 times the largest visible case's elements (9 × 215 against 4 × 120).
LAYERNORM_CPU = Sizes(visible=((4, 120), (5, 7), (3, 1)),
                      hidden=((9, 215), (6, 40), (4, 3)), hidden_random=(1, 2, 33))
LAYERNORM_GPU = Sizes(visible=((4096, 4099), (4, 120), (5, 7), (3, 1)),
                      hidden=((1000, 16387), (9, 215), (6, 40), (4, 3)),
                      hidden_random=(3, 1, 5000), speed=SPEED_ROWS)

layernorm_rows = RowsProblem(
    "layernorm_rows",
    title="LayerNorm over rows: one warp per row, Welford in each lane, Chan's merge by shuffles",
    spec=layernorm_spec, make_inputs=layernorm_inputs, outputs=_rows_outputs("y"),
    tolerance=_layernorm_tolerance, launch=_launcher(("x", "gamma", "beta", "eps"), "y"),
    block_sizes=WARP_BLOCKS, visible_block_size=64, blocks_for=row_blocks,
    cpu_sizes=LAYERNORM_CPU, gpu_sizes=LAYERNORM_GPU, size_label=rows_label,
    bytes_moved=layernorm_bytes, flops=layernorm_flops, baselines=BASELINES,
    reference=reference_layernorm, speed_inputs=layernorm_speed_inputs,
    speed_launch=speed_shape, sample_spec=layernorm_sample,
    # The reference reads each row twice (statistics, then the normalise pass, mostly from L2);
    # a kernel at half its speed passes. NumPy's two-pass on one core is many times slower.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=10.0),
    value_hint=("y = (x − μ) / sqrt(σ² + ε) · γ + β per row, σ² = mean((x − μ)²) divided by n "
                "(not n − 1), ε inside the square root, γ multiplies and β adds, indexed by "
                "column. Wrong on rows with a large offset only? E[x²] − E[x]² cancels there: "
                "use Welford's update and Chan's merge. Wrong when n is not a multiple of the "
                "warp size? The merge weights are the counts: mean_a + d·n_b / n, "
                "M2_a + M2_b + d²·n_a·n_b / n."),
)

layernorm_rows.diagnose = diagnose_layernorm

RMSNORM_CPU = LAYERNORM_CPU
RMSNORM_GPU = Sizes(visible=LAYERNORM_GPU.visible, hidden=LAYERNORM_GPU.hidden,
                      hidden_random=(3, 1, 5000))

rmsnorm_rows = RowsProblem(
    "rmsnorm_rows", title="RMSNorm over rows: one warp per row, one reduction, fused scale",
    spec=_rmsnorm_spec, make_inputs=_rmsnorm_inputs, outputs=_rows_outputs("y"),
    tolerance=_rmsnorm_tolerance, launch=_launcher(("x", "gamma", "eps"), "y"),
    block_sizes=WARP_BLOCKS, visible_block_size=64, blocks_for=row_blocks,
    cpu_sizes=RMSNORM_CPU, gpu_sizes=RMSNORM_GPU, size_label=rows_label,
    reference=reference_rmsnorm,
    value_hint=("y = x / sqrt(mean(x²) + ε) · γ per row: the mean of the squares over all n "
                "elements (divide by n), ε inside the square root, γ indexed by column, no "
                "mean subtracted and no β."),
)

BACKWARD_CPU = LAYERNORM_CPU
BACKWARD_GPU = Sizes(visible=LAYERNORM_GPU.visible, hidden=LAYERNORM_GPU.hidden,
                       hidden_random=(3, 1, 5000))

layernorm_backward = RowsProblem(
    "layernorm_backward",
    title="LayerNorm backward: the input gradient, two row reductions fused, one warp per row",
    spec=_backward_spec, make_inputs=_backward_inputs, outputs=_rows_outputs("dx"),
    tolerance=_backward_tolerance,
    launch=_launcher(("dy", "x", "gamma", "mean", "rstd"), "dx"),
    block_sizes=WARP_BLOCKS, visible_block_size=64, blocks_for=row_blocks,
    cpu_sizes=BACKWARD_CPU, gpu_sizes=BACKWARD_GPU, size_label=rows_label,
    reference=reference_layernorm_backward,
    value_hint=("dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)) per row, with g = γ · dy and "
                "x̂ = (x − mean) · rstd from the saved mean and rstd of that row; both means run "
                "over the row's n elements (divide by n), and every lane needs both sums before "
                "it writes (xor shuffles, or a broadcast from lane 0)."),
)
