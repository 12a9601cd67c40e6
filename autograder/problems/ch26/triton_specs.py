"""Exercise 26.3: FlashAttention's forward pass in Triton, graded like 26.2.

The learner writes a ``@triton.jit`` kernel and a launcher ``attention_triton(q, k, v, scale,
causal, o)`` over the course's device arrays (handed to the kernel through
:func:`autograder.machine.triton_bridge.view`); ``scale`` arrives as a Python float, ``causal``
as an int. The inputs are float16 (the tensor cores' type), the output float32; same kinds of
heads as 26.2 (:mod:`.specs`).

Tolerance: 26.2's bound, for tensor cores and float16 weights
-------------------------------------------------------------
Two changes to :func:`.specs.row_bound`, both from how a Triton attention computes on a GPU:

* ``tl.dot`` of float16 tiles runs on tensor cores: the products are exact in float32 (11 by 11
  significant bits), but the float32 accumulation inside an MMA aligns every addend to the
  largest of the block and truncates instead of rounding (Fasi, Higham, Mikaitis and Pranesh,
  "Numerical behavior of NVIDIA tensor cores", 2021, measured on V100, T4 and A100; assumed of
  the H200's ``wgmma`` too). Each addend then loses less than one unit in the last place of the
  block's largest addend (2u relative to it, and so to the sum of the block's magnitudes), and a
  block adds k = 16 products along d and the accumulator: 17 · 2u per 16 products, over the d / 16
  blocks at most 2.125·d·u times Σ_t |q_t||k_t| (the accumulator is never larger than that sum).
  The bound takes γ_(4(d+2)) for the scores instead of γ_(d+2) (:data:`TRITON_DOT_FACTOR`), and
  so covers that with room to spare; a rounding accumulator (the interpreter's) is within it.
  P·V is a tensor-core product too, over the keys (2.125 units per key, and the rescalings): its
  sums get γ_(2(2n_k + 4)) instead of γ_(2n_k + 4).
* the weights P enter the second ``tl.dot`` as float16 (as FlashAttention does): each is
  rounded once more, relatively 2^-11, or by half a float16 subnormal (2^-25) where it is below
  float16's normal range; the sum l keeps the float32 weights. That adds
  2^-11 · Σ_j w_j |v_jt| + 2^-25 · Σ_j |v_jt| / L to the bound (L ≥ 1, the weights' sum before
  normalising, whose largest term is 1).

Triton's exponential (ex2.approx of the argument times log2 e) is inside 26.2's allowance (2 ulp,
and 3u per unit of the scores' spread). In CPU mode the interpreter computes ``tl.dot`` with
NumPy in float32 (exact products, rounded sums) and ``tl.exp`` with NumPy: within the same bound.

Sizes: (bh, n, d) with d a power of two of at least 16 (``tl.dot`` needs 16 on a GPU; the
interpreter is laxer); n off multiples of 32 and 64. In CPU mode at most a dozen programs a case
(the interpreter runs one in about a millisecond, plus its tiles' NumPy work). The speed test is
26.2's (16 heads of 4096 × 64, float16) against the course's Triton kernel
(:mod:`.triton_reference`, imported on first use) and NumPy on the host.
"""

from __future__ import annotations

import functools

import numpy as np

from autograder.core.spec import Case
from autograder.grading.problem import SpeedBar
from autograder.problems.ch26.references import reference_attention_triton
from autograder.problems.ch26.specs import (BASELINES, OVERFLOW_HINT, SPEED_SIZE,
                                            AttentionProblem, Sizes,
                                            attention_bound, attention_bytes, attention_flops,
                                            attention_host, attention_label, attention_sample,
                                            make_attention)
from autograder.problems.kit.triton import TritonExercise

TRITON_DOT_FACTOR = 4


def _spec(q, k, v, scale, causal, **launch):
    return {"o": attention_host(q, k, v, scale, causal)}


def _tolerance(inputs, expected):
    return {"o": attention_bound(inputs["q"], inputs["k"], inputs["v"], inputs["scale"],
                                 inputs["causal"], dot_factor=TRITON_DOT_FACTOR, p_half=True)[1]}


_sample = functools.partial(attention_sample, dot_factor=TRITON_DOT_FACTOR, p_half=True)


def _launch(launcher, inputs, outputs, case):
    # scale as a Python float (Triton takes scalars as Python numbers; float32 exactly: it is one).
    launcher(inputs["q"], inputs["k"], inputs["v"], float(inputs["scale"]),
             int(inputs["causal"]), outputs["o"])


UNWRITTEN_HINT = (
    "every element of o must be stored: a grid of (cdiv(n, BLOCK_M), bh) programs, program "
    "(tile, b) storing rows tile · BLOCK_M ... + BLOCK_M − 1 of head b at offsets "
    "b · n · d + row · d + col, the store masked with row < n and col < d, not left out.")
NAN_TAIL = (
    "Or your kernel stored NaN there (the check's poison value): a row whose maximum stays −inf "
    "(it saw no key: with the causal mask, row i must see keys 0..i, itself included) gives "
    "−inf − (−inf) = NaN in exp and 0 / 0 at the end.")


class TritonAttentionProblem(TritonExercise, AttentionProblem):
    """An attention exercise whose answer is a Triton launcher: float16 cases without launch
    shapes (the learner's launcher picks its grid and tiles); where Triton cannot be installed,
    the notebook's checks say why and skip (a grader must have it)."""

    def variant(self, index: int, hidden: bool):
        causal, _ = super().variant(index, hidden)
        return causal, np.float16

    unwritten_hint = UNWRITTEN_HINT + " " + NAN_TAIL

    def hint_for_unwritten(self, hint: str) -> str:
        return OVERFLOW_HINT if hint == OVERFLOW_HINT else self.unwritten_hint


TRITON_CPU = Sizes(visible=((1, 40, 16), (2, 7, 16), (1, 1, 16)),
                   hidden=((4, 40, 16), (1, 77, 32)), hidden_random=(1, 2, 70))
TRITON_GPU = Sizes(visible=((8, 1000, 64), (4, 517, 128), (2, 33, 64), (1, 1, 128)),
                   hidden=((16, 1537, 64), (8, 1029, 128), (3, 77, 128)),
                   hidden_random=(2, 2, 2000), speed=SPEED_SIZE)

attention_triton = TritonAttentionProblem(
    "attention_triton",
    title="FlashAttention's forward pass in Triton: tl.dot on float16 tiles, the online softmax "
          "on blocks",
    spec=_spec, make_inputs=lambda rng, size: make_attention(rng, *size, dtype=np.float16),
    outputs=lambda size: {"o": (tuple(int(v) for v in size), np.float32)},
    tolerance=_tolerance, launch=_launch, cpu_sizes=TRITON_CPU, gpu_sizes=TRITON_GPU,
    size_label=attention_label, bytes_moved=attention_bytes, flops=attention_flops,
    baselines=BASELINES, reference=reference_attention_triton, sample_spec=_sample,
    # The course's kernel is Triton's tutorial in its plainest form (tiles of 64 × 32, 4 warps);
    # half its speed passes, as in 26.2.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=10.0),
    kernel_language="triton",
    value_hint=("o[b, i] = Σ_j w_j · v[b, j], w = softmax over the keys row i sees of "
                "scale · q[b, i]·k[b, j]: per tile, s = tl.dot(q, kᵀ) · scale with the entries "
                "past n (and, with causal = 1, the keys j > i) set to −inf by tl.where, "
                "m_new = max(m, row max of s), alpha = exp(m − m_new), p = exp(s − m_new), "
                "l = l·alpha + row sum of p, acc = acc·alpha + tl.dot(p.to(tl.float16), v); "
                "o = acc / l at the end."),
)
