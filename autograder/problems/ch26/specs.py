"""Chapter 26's Numba exercises: attention ``O = softmax(scale · Q Kᵀ + mask) · V`` over inputs of
shape ``(bh, n, d)`` (bh = batch · heads, n tokens, head dimension d), the output float32 of the
same shape, an optional causal mask (query i sees keys 0..i only); the inputs, the float64 spec,
the error bound, the launches and the CPU baselines (which 26.3, the same attention in Triton,
shares: :mod:`.triton_specs`).

26.1 (naive, float32 inputs) materialises the scores: one thread per query row writes its row of
S into a ``(bh, n, n)`` scratch array the check provides. 26.2 (FlashAttention's forward pass)
never does: one block per (query tile, bh), key and value tiles in shared memory, the online
softmax; its cases alternate float16 and float32 inputs (float32 arithmetic in the kernel either
way) and causal and full masks.

Inputs: every head (one of the bh) is one of two kinds, both in every case of two heads or more:
(0) **large scores**, q and k with a spread of about 7, so that scale · q·k has a spread of about
50 and reaches ±200 (exp overflows float32 above 88.7: a softmax without its maximum subtracted
gives inf or NaN there); (1) **moderate scores**, a spread of about 1, where every key's weight
matters. v has a per-head scale (10^-1 .. 10) and a per-column offset. Float16 inputs are rounded
once when drawn; the spec is computed in float64 from the rounded values, so the rounding of the
inputs is no error of the kernel.

Tolerance: an error bound for correct float32 code, against the float64 spec
---------------------------------------------------------------------------
u = 2^-24, γ_k = k·u / (1 − k·u). For query row i of head b: s_j = scale · q_i·k_j over the
keys it sees (n_k of them), w_j = exp(s_j − max s) / L its softmax weights, L = Σ exp(s_j − max s),
o_t = Σ_j w_j v_jt.

* **Scores.** A float32 dot product of d terms in any order, the scale applied before or after
  (one more rounding), float16 inputs converted exactly: |ŝ_j − s_j| ≤ Δ = γ_(d+2) · max_j a_j with
  a_j = scale · Σ_t |q_it| |k_jt|. A common shift of all scores cancels in the softmax, so each
  unnormalised weight is off by a factor within exp(±Δ): relatively expm1(Δ).
* **Exponentials.** CUDA's expf is within 2 ulp (4u relative); its argument is a rounded
  difference, off by u times its size. A term's weight meets its own exponential and, in the
  online softmax, up to n_k rescalings by exp(m_old − m_new), whose arguments add up to at most
  R = max s − min s: ε_e = u · (4·(n_k + 2) + 3R) (3R allows the log2 e multiply of exp2-based
  exponentials, as Triton's).
* **Sums.** The weights' sum L and each output's Σ p_j v_jt: one product, at most n_k additions
  and n_k rescaling multiplications per term: γ_(2n_k + 4).

With φ = expm1(Δ) + ε_e + γ_(2n_k+4), every term of the numerator and of the denominator is
perturbed by a relative φ at most, so with A_t = Σ_j w_j |v_jt| (≥ |o_t|) and the final division:

    |ô_t − o_t| ≤ 2φ · A_t / (1 − φ) + u·|o_t| + the smallest normal float32.

The bound does not depend on the order of the keys, the tile size, or how often the running
maximum changes: one key at a time, a tile at a time, three passes over a materialised row all
meet it. ``tests/test_ch26.py`` emulates such orders in float32 within it, and shows a missing
scale, a causal mask off by one, a dropped last tile and a forgotten rescaling far outside.

Sizes: (bh, n, d). CPU mode keeps n ≤ 45 and d ≤ 16 (the simulator runs every thread in Python:
a case of 2 × 40 × 16 takes about 2 s in the flash kernel); n is never a multiple of the 32-key
tile. A GPU runs d = 64 and 128, n up to 1537, and the speed test 16 heads of 4096 × 64 in float16.
"""

from __future__ import annotations

import math

import numpy as np

from autograder.core.checks import TINY32, U32, gamma
from autograder.grading.problem import Baseline, Case, Problem, Sizes, SpeedBar
from autograder.machine import device
from autograder.problems.ch26.references import (reference_attention_naive,
                                                 reference_flash_attention)
from autograder.problems.kit import cores, njit_on_first_call

LARGE_SPREAD = 7.0          # q and k of a large-score head: scale · q·k has a spread of about 50
FLASH_BLOCKS = (16, 32)     # query rows (threads) per block in CPU mode; a GPU uses 64 and 128
FLASH_BLOCKS_GPU = (64, 128)
SPEED_SIZE = (16, 4096, 64)  # the speed tests: 16 heads of 4096 tokens, d = 64, float16
# (causal, dtype) of the i-th case, cycled: the visible cases start at 0, the hidden ones at 3.
VARIANTS = ((1, np.float16), (0, np.float32), (0, np.float16), (1, np.float32))


# ---- the spec and the bound ---------------------------------------------------------------------

def _head(q, k, v, scale, causal):
    """(s, visible) of one head in float64: the scaled scores and the mask of visible keys."""
    s = float(scale) * (q @ k.T)
    n = q.shape[0]
    visible = np.tril(np.ones((n, n), bool)) if causal else np.ones((n, n), bool)
    return s, visible


def _weights(s, visible):
    """(w, big L, max, min) per row: the softmax weights over the visible keys."""
    masked = np.where(visible, s, -np.inf)
    top = masked.max(axis=1, keepdims=True)
    e = np.where(visible, np.exp(masked - top), 0.0)
    total = e.sum(axis=1, keepdims=True)
    low = np.where(visible, s, np.inf).min(axis=1, keepdims=True)
    return e / total, total, top, low


def attention_host(q, k, v, scale, causal) -> np.ndarray:
    """O in float64: the spec, computed head by head from the inputs' values."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    out = np.empty(q.shape)
    for b in range(q.shape[0]):
        s, visible = _head(q[b], k[b], v[b], scale, causal)
        w = _weights(s, visible)[0]
        out[b] = w @ v[b]
    return out


U16 = 2.0 ** -11            # float16's unit roundoff
HALF_SUBNORMAL = 2.0 ** -25  # half the spacing of float16's subnormals


def row_bound(q, k, v, scale, causal, rows=None, dot_factor: int = 1,
              p_half: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(o, bound) of one head's rows ``rows`` (all by default) in float64: the module's bound.
    ``dot_factor`` 4 for tensor cores (their float32 accumulation truncates:
    :mod:`.triton_specs`): γ_(4(d+2)) for the scores and γ_(2(2n_k+4)) for the sums;
    ``p_half`` for a kernel that rounds the weights to float16 before P·V (26.3)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    n, d = q.shape
    rows = np.arange(n) if rows is None else np.asarray(rows)
    s = float(scale) * (q[rows] @ k.T)
    a = float(scale) * (np.abs(q[rows]) @ np.abs(k).T)
    visible = (np.arange(n)[None, :] <= rows[:, None]) if causal else np.ones(s.shape, bool)
    w, total, top, low = _weights(s, visible)
    o = w @ v
    big_a = w @ np.abs(v)
    nk = visible.sum(axis=1, keepdims=True)
    delta = gamma(dot_factor * (d + 2)) * np.where(visible, a, 0.0).max(axis=1, keepdims=True)
    spread = top - low
    eps_exp = U32 * (4.0 * (nk + 2) + 3.0 * spread)
    terms = (2.0 * nk + 4) * max(1, dot_factor // 2)     # a tensor core's P·V: twice as many
    acc = terms * U32 / (1 - terms * U32)
    phi = np.expm1(delta) + eps_exp + acc
    extra = 0.0
    if p_half:
        # Σ_j |v_jt| over the keys each row sees: all of them, or (causal) a prefix sum.
        seen_v = (np.cumsum(np.abs(v), axis=0)[rows] if causal
                  else np.abs(v).sum(axis=0)[None, :])
        extra = U16 * big_a + HALF_SUBNORMAL * seen_v / total
    tol = (2.0 * phi * big_a + extra) / (1.0 - phi) + U32 * np.abs(o) + TINY32
    return o, np.where(phi < 0.25, tol, np.inf)


def attention_bound(q, k, v, scale, causal, dot_factor: int = 1, p_half: bool = False):
    """(o, bound) of every element, head by head."""
    o = np.empty(q.shape)
    tol = np.empty(q.shape)
    for b in range(q.shape[0]):
        o[b], tol[b] = row_bound(q[b], k[b], v[b], scale, causal, dot_factor=dot_factor,
                                 p_half=p_half)
    return o, tol


def attention_sample(inputs, idx, dot_factor: int = 1, p_half: bool = False):
    """(expected, bound) at flat indices ``idx`` of O, row by row (the speed test's samples)."""
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    bh, n, d = q.shape
    b_idx, i_idx, t_idx = np.unravel_index(np.asarray(idx), (bh, n, d))
    want = np.empty(len(idx))
    tol = np.empty(len(idx))
    for b in np.unique(b_idx):
        at = b_idx == b
        rows, where = np.unique(i_idx[at], return_inverse=True)
        o, t = row_bound(q[b], k[b], v[b], inputs["scale"], inputs["causal"], rows,
                         dot_factor=dot_factor, p_half=p_half)
        want[at] = o[where, t_idx[at]]
        tol[at] = t[where, t_idx[at]]
    return {"o": want}, {"o": tol}


# ---- inputs ---------------------------------------------------------------------------------------

def make_attention(rng, bh: int, n: int, d: int, dtype=np.float32, causal: int = 0,
                   fast: bool = False) -> dict:
    """q, k, v of shape (bh, n, d) in ``dtype``, heads of the two kinds (see the module's
    docstring), scale = 1 / sqrt(d) in float32, the causal flag."""
    bh, n, d = int(bh), int(n), int(d)
    kinds = (np.arange(bh) + rng.integers(2)) % 2
    spread = np.where(kinds == 0, LARGE_SPREAD * rng.uniform(0.8, 1.2, bh),
                      rng.uniform(0.6, 1.4, bh))[:, None, None]
    vscale = (10.0 ** rng.uniform(-1, 1, bh))[:, None, None]
    offset = rng.uniform(-2, 2, (bh, 1, d))

    def normal(shape):
        if fast:
            return rng.standard_normal(shape, dtype=np.float32)
        return rng.standard_normal(shape)
    q = (spread * normal((bh, n, d))).astype(dtype)
    k = (spread * normal((bh, n, d))).astype(dtype)
    v = (vscale * (normal((bh, n, d)) + offset)).astype(dtype)
    return {"q": q, "k": k, "v": v, "scale": np.float32(1.0 / math.sqrt(d)),
            "causal": int(causal)}


def _spec(q, k, v, scale, causal, **launch):
    return {"o": attention_host(q, k, v, scale, causal)}


def _tolerance(inputs, expected):
    return {"o": attention_bound(inputs["q"], inputs["k"], inputs["v"], inputs["scale"],
                                 inputs["causal"])[1]}


def _outputs(size):
    return {"o": (tuple(int(v) for v in size), np.float32)}


def attention_label(size) -> str:
    bh, n, d = (int(v) for v in size)
    return f"{bh} head{'s' * (bh != 1)} of n = {n}, d = {d}"


def attention_bytes(size) -> int:
    bh, n, d = (int(v) for v in size)
    return 2 * 3 * bh * n * d + 4 * bh * n * d      # q, k, v in float16 read once, O written


def attention_flops(size) -> int:
    bh, n, d = (int(v) for v in size)
    return 4 * bh * n * n * d                       # two matrix products of 2·n·n·d each


# ---- CPU baselines ----------------------------------------------------------------------------------

def _numpy_attention(q, k, v, scale, causal, o):
    """float32 NumPy: S = scale · Q Kᵀ per head (materialised), the row softmax, P V."""
    n = q.shape[1]
    for b in range(q.shape[0]):
        s = float(scale) * (q[b].astype(np.float32) @ k[b].astype(np.float32).T)
        if causal:
            s[np.triu_indices(n, 1)] = -np.inf
        s -= s.max(axis=1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=1, keepdims=True)
        o[b] = s @ v[b].astype(np.float32)


@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False)
    def attention(q, k, v, scale, causal, o):
        bh, n, d = q.shape
        for r in numba.prange(bh * n):
            b = r // n
            i = r % n
            keys = i + 1 if causal else n
            s = np.empty(keys, np.float32)
            m = -np.inf
            for j in range(keys):
                acc = np.float32(0.0)
                for t in range(d):
                    acc += q[b, i, t] * k[b, j, t]
                s[j] = acc * scale
                m = max(m, s[j])
            total = 0.0
            for j in range(keys):
                s[j] = np.exp(s[j] - m)
                total += s[j]
            for t in range(d):
                acc = np.float32(0.0)
                for j in range(keys):
                    acc += s[j] * v[b, j, t]
                o[b, i, t] = acc / total
    return attention


def _parallel_attention(q, k, v, scale, causal, o):
    # numba.njit has no float16 arrays: the inputs converted to float32 first (timed with it).
    q, k, v = (np.asarray(a, np.float32) for a in (q, k, v))
    _parallel_loop(q, k, v, np.float32(scale), int(causal), o)


BASELINES = {
    "numpy": Baseline("NumPy, S materialised per head, float32 (1 core)", _numpy_attention),
    "parallel": Baseline(f"numba.njit, prange over query rows ({cores()} cores)",
                         _parallel_attention),
}


# ---- the problems ------------------------------------------------------------------------------------

OVERFLOW_HINT = (
    "your kernel stored NaN (the check's poison value, so it reads as unwritten) only on heads "
    "whose scores reach ±200: exp of an unshifted score above 88.7 is inf in float32, and "
    "inf / inf is NaN. Subtract the row's maximum (the running maximum m, online) before exp: "
    "every exponent is then ≤ 0.")

NAN_HINT = (
    "either these elements were never stored (blocks (ceil(n / T), bh), one query row per "
    "thread, every row below n written), or your kernel stored NaN there (the check's poison "
    "value): a row whose sum l stays 0 because it saw no key gives 0 / 0, as does a tile loop "
    "that stops before the first tile or a causal mask that hides the diagonal (row i sees keys "
    "0..i, so row 0 sees key 0); exp of a score above 88.7 without the maximum subtracted gives "
    "inf / inf.")


def large_score_heads(inputs) -> np.ndarray:
    """Which heads have a score beyond exp's float32 overflow (|scale · q·k| > 88.7)."""
    q, k = (np.asarray(inputs[x], np.float64) for x in ("q", "k"))
    return np.array([np.abs(float(inputs["scale"]) * q[b] @ k[b].T).max() > 88.7
                     for b in range(q.shape[0])])


def diagnose_nan(case: Case, outcome) -> str | None:
    """A hint for outputs left NaN: only on the large-score heads (overflow), or in general."""
    got = outcome.outputs.get("o")
    if got is None or np.shape(got) != tuple(case.size):
        return None
    bad = np.isnan(np.asarray(got)).any(axis=(1, 2))
    if not bad.any():
        return None
    large = large_score_heads(case.inputs)
    if np.all(large[bad]) and not large.all():
        return OVERFLOW_HINT
    return NAN_HINT


class AttentionProblem(Problem):
    """Cases of size (bh, n, d), each with its own (causal, dtype) from :data:`VARIANTS` (or
    float32 only), and block sizes per backend."""

    def __init__(self, *args, half: bool = True, gpu_block_sizes=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.half = half
        self.gpu_block_sizes = gpu_block_sizes

    def variant(self, index: int, hidden: bool) -> tuple[int, type]:
        causal, dtype = VARIANTS[(index + 3 * hidden) % len(VARIANTS)]
        return causal, (dtype if self.half else np.float32)

    def _block_sizes(self):
        return self.gpu_block_sizes if device.current().is_gpu and self.gpu_block_sizes \
            else self.block_sizes

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = list(self.sizes.hidden if hidden else self.sizes.visible)
        count, lo, hi = self.sizes.hidden_random
        if hidden and count:
            d = sizes[0][2]
            sizes += [(int(rng.integers(1, 3)), int(n) + (int(n) % 32 == 0), d)
                      for n in rng.integers(lo, hi, size=count)]
        blocks = self._block_sizes()
        cases = []
        for index, size in enumerate(sizes):
            causal, dtype = self.variant(index, hidden)
            inputs = make_attention(rng, *size, dtype=dtype, causal=causal)
            label = (f"{attention_label(size)}, {np.dtype(dtype).name}, "
                     f"{'causal' if causal else 'no mask'}")
            case = Case(size=tuple(int(v) for v in size), inputs=inputs, label=label)
            if blocks:
                threads = (self.visible_block_size if not hidden and self.visible_block_size
                           else blocks[index % len(blocks)])
                if device.current().is_gpu and not hidden:
                    threads = blocks[0]
                case.threads, case.blocks = threads, self.blocks_for(case.size, threads)
            cases.append(case)
        return cases

    def speed_inputs(self, rng, size):
        return make_attention(rng, *size, dtype=np.float16, causal=0, fast=True)

    def judge(self, case: Case, outcome, show_inputs: bool = True):
        verdict = super().judge(case, outcome, show_inputs=show_inputs)
        if not verdict.passed and not outcome.error and "never written" in verdict.message:
            verdict.hint = diagnose_nan(case, outcome) or verdict.hint
        return verdict

    def simulated_threads(self, case: Case) -> float:
        bh, n, d = case.size
        return float(bh * n * n * d) / 8      # a thread's work grows with its row of keys


def _naive_blocks(size, threads):
    bh, n, _ = (int(v) for v in size)
    return -(-bh * n // int(threads))


def _naive_launch(kernel, inputs, outputs, case):
    from numba import cuda
    bh, n, _ = case.size
    s = cuda.device_array((bh, n, n), np.float32)      # the materialised scores, scratch
    kernel[case.blocks, case.threads](inputs["q"], inputs["k"], inputs["v"], inputs["scale"],
                                      inputs["causal"], s, outputs["o"])


def _flash_blocks(size, threads):
    bh, n, _ = (int(v) for v in size)
    return (-(-n // int(threads)), bh)


def _flash_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["q"], inputs["k"], inputs["v"], inputs["scale"],
                                      inputs["causal"], outputs["o"])


def flash_speed_shape(size):
    return _flash_blocks(size, 64), 64


# (bh, n, d). CPU: n off multiples of the 32-key tile and of the block (40 = a tile and 8), a
# row shorter than a tile, one token; hidden 4 times the largest visible case (more heads). A
# case of two heads or more holds both kinds of heads (large and moderate scores).
NAIVE_CPU = Sizes(visible=((2, 33, 8), (1, 5, 16), (1, 1, 8)),
                  hidden=((8, 33, 8), (1, 19, 16)), hidden_random=(1, 2, 40))
NAIVE_GPU = Sizes(visible=((4, 517, 64), (2, 33, 128), (1, 1, 64)),
                  hidden=((16, 1029, 64), (4, 777, 128)), hidden_random=(1, 2, 1500))

attention_naive = AttentionProblem(
    "attention_naive",
    title="Naive attention: one thread per query row, the scores materialised in global memory",
    spec=_spec, make_inputs=lambda rng, size: make_attention(rng, *size), outputs=_outputs,
    tolerance=_tolerance, launch=_naive_launch, block_sizes=(32, 64), visible_block_size=32,
    blocks_for=_naive_blocks, cpu_sizes=NAIVE_CPU, gpu_sizes=NAIVE_GPU,
    size_label=attention_label, reference=reference_attention_naive, half=False,
    gpu_block_sizes=(128, 256),
    value_hint=("O[b, i] = Σ_j P[i, j] · V[b, j] with P[i, j] = exp(S[i, j] − max_j S[i, j]) / "
                "Σ_j exp(S[i, j] − max), S[i, j] = scale · Σ_t Q[b, i, t] · K[b, j, t]. With the "
                "causal mask (causal = 1) row i sees keys j = 0..i (i + 1 of them), not j < i. "
                "Wrong only on some heads, with inf or nan? The maximum was not subtracted "
                "before exp: those heads' scores reach ±200."),
)

FLASH_CPU = Sizes(visible=((1, 40, 8), (2, 7, 16), (1, 1, 8)),
                  hidden=((4, 40, 8), (1, 37, 16)), hidden_random=(1, 2, 40))
FLASH_GPU = Sizes(visible=((8, 1000, 64), (4, 517, 128), (2, 33, 64), (1, 1, 128)),
                  hidden=((16, 1537, 64), (8, 1029, 128), (3, 77, 128)),
                  hidden_random=(2, 2, 2000), speed=SPEED_SIZE)

flash_attention = AttentionProblem(
    "flash_attention",
    title="FlashAttention's forward pass: key and value tiles in shared memory, the online "
          "softmax, a block per (query tile, head)",
    spec=_spec, make_inputs=lambda rng, size: make_attention(rng, *size), outputs=_outputs,
    tolerance=_tolerance, launch=_flash_launch, block_sizes=FLASH_BLOCKS, visible_block_size=16,
    blocks_for=_flash_blocks, cpu_sizes=FLASH_CPU, gpu_sizes=FLASH_GPU,
    size_label=attention_label, bytes_moved=attention_bytes, flops=attention_flops,
    baselines=BASELINES, reference=reference_flash_attention, speed_launch=flash_speed_shape,
    sample_spec=attention_sample, gpu_block_sizes=FLASH_BLOCKS_GPU,
    # A kernel at half the course's speed passes (one thread per row, tiles in shared memory);
    # one that writes S to global memory and reads it back does not. NumPy on one core is far
    # slower still.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=10.0),
    value_hint=("O[b, i] = Σ_j w_j · V[b, j], w = softmax over the keys row i sees of "
                "scale · Q[b, i]·K[b, j]. The online update on a key (or tile) with score s: "
                "m_new = max(m, s), then l ← l·exp(m − m_new) + exp(s − m_new) and "
                "acc ← acc·exp(m − m_new) + exp(s − m_new)·v: forget to rescale acc (or l) "
                "when the maximum grows and every row whose maximum is not its first key is "
                "wrong. A last tile shorter than the tile size (n not a multiple of it) must "
                "still be read; with causal = 1, row i sees keys 0..i."),
)
