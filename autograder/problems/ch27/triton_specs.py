"""Exercise 27.4: the packed int4 small-batch product of 27.3 in Triton, graded like 27.3.

The learner writes a ``@triton.jit`` kernel and a launcher ``int4_matmul_triton(packed, scales,
x, group, y)`` over the course's device arrays (handed to the kernel through
:func:`autograder.machine.triton_bridge.view`); ``group`` arrives as a Python int. Same format,
spec and inputs as 27.3 (:mod:`.specs`).

Tolerance: 27.3's bound for any order of the additions
------------------------------------------------------
A Triton program's order of evaluation is the compiler's: how a block's lanes are spread over a
thread's registers, its warp and the program's warps depends on the layout it picks, and a
learner's BLOCK_K may be anything. So 27.4 does not assume an order: a sum of K terms computed by
any tree of float32 additions passes every term through at most K − 1 of them (padded lanes add
exact zeros, which round nothing), each product w·x, q·x·s or q·(s·x) rounds at most twice, and a
group's partial sum may be multiplied by its scale once: c_T = K + ceil(K / G) + 4
(:func:`triton_chain`), with 27.3's form, γ_c · Σ|w·x|. This is looser than 27.3's bound for long
rows, and still far below what the plain bugs give on the checks' cases, whose rows are short
(K ≤ 201 in CPU mode): a nibble swapped or taken without its offset, a neighbouring group's scale
and a ragged last group dropped are off by the size of the terms themselves, float16 sums and
float16 dequantised weights by far more than γ_c (``tests/test_ch27.py``).

Sizes: 27.3's (B, N, K), with the random hidden ones' K odd (no power-of-two block divides it);
in CPU mode at most a few dozen programs a case, where Triton's interpreter runs a program in
about a millisecond. The speed test is 27.3's, 8 × 16384 × 8192, against the course's Triton
kernel (:mod:`.triton_reference`, imported on first use) and NumPy on the host.
"""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, gamma
from autograder.core.spec import Case
from autograder.grading.problem import SpeedBar
from autograder.problems.ch27.references import reference_int4_triton, torch_int4_vendor
from autograder.problems.ch27.specs import (INT4_BASELINES, INT4_CPU, INT4_GPU, QuantProblem,
                                            case_label, dequantize, groups, int4_inputs,
                                            int4_sample, int4_spec, int4_speed_inputs,
                                            matmul_bytes, matmul_flops, product_host,
                                            shape_label, unpack_int4)
from autograder.problems.kit.triton import TritonExercise


def triton_chain(k: int, group: int) -> int:
    """c_T: the most roundings a term goes through in any order of the additions (see above)."""
    return int(k) + groups(k, group) + 4


def _triton_tolerance(inputs, expected):
    x = inputs["x"]
    k = x.shape[1]
    w = dequantize(unpack_int4(inputs["packed"], k), inputs["scales"], inputs["group"])
    _, mag = product_host(w, x)
    return {"y": gamma(triton_chain(k, inputs["group"])) * mag + TINY32}


def _triton_sample(inputs, idx):
    return int4_sample(inputs, idx, chain_of=triton_chain)


def _launch(launcher, inputs, outputs, case):
    launcher(inputs["packed"], inputs["scales"], inputs["x"], int(inputs["group"]), outputs["y"])


UNWRITTEN_HINT = (
    "every output row of every activation row must be stored: a grid of (B, cdiv(N, BLOCK_N)) "
    "programs, rows = pid · BLOCK_N + tl.arange(0, BLOCK_N), a loop over the row's bytes up to "
    "(K + 1) // 2, and the store masked with rows < N, not left out.")


class TritonQuantProblem(TritonExercise, QuantProblem):
    """27.3's exercise answered by a Triton launcher: cases without launch shapes or warp sizes
    (the launcher picks its grid and blocks); where Triton cannot be installed, the notebook's
    checks say why and skip (a grader must have it)."""

    portable_warp_sizes = ()

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = list(self.sizes.hidden if hidden else self.sizes.visible)
        count, lo, hi = self.sizes.hidden_random
        if hidden and count:
            sizes += self._random_sizes(rng, count, lo, hi, 3)
        cases = []
        for size in sizes:
            case = Case(size=size, inputs=self.make_inputs(rng, size))
            case.label = case_label(case)
            cases.append(case)
        return cases

    def portability_cases(self, warp: int = 64, seed: int | None = None) -> list[Case]:
        return []

    unwritten_hint = UNWRITTEN_HINT


int4_matmul_triton = TritonQuantProblem(
    "int4_matmul_triton",
    title="packed int4 weights times a small batch in Triton: blocks of rows, nibbles unpacked",
    spec=int4_spec, make_inputs=int4_inputs,
    outputs=lambda size: {"y": ((int(size[0]), int(size[1])), np.float32)},
    tolerance=_triton_tolerance, launch=_launch,
    cpu_sizes=INT4_CPU, gpu_sizes=INT4_GPU, size_label=shape_label,
    bytes_moved=matmul_bytes, flops=matmul_flops, baselines=INT4_BASELINES,
    reference=reference_int4_triton, speed_inputs=int4_speed_inputs, vendor=torch_int4_vendor,
    vendor_label="PyTorch: unpack, dequantise to float16, then cuBLAS",
    sample_spec=_triton_sample,
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=10.0),
    kernel_language="triton",
    value_hint=("y[b, n] = Σ_k q[n, k] · scales[n, k // group] · x[b, k] with K = x.shape[1]: "
                "byte j holds column 2j in its low nibble (byte & 15) and column 2j + 1 in its "
                "high nibble (byte >> 4), each as q + 8, so convert the byte to tl.int32 and "
                "subtract 8 from each nibble; mask the loads past the row's (K + 1) // 2 bytes and "
                "the odd column K (other=0.0 for x), and take the scale at column 2j // group."),
)
