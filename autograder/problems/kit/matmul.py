"""The matrix product C = A @ B as chapters 3, 5 and 6 grade it: inputs, spec, tolerance,
outputs, launch, the speed test's size, inputs and samples, the CPU baselines and cuBLAS.

Sizes are ``(M, K, N)``: A is M × K, B is K × N, C is M × N, all float32."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, gamma
from autograder.grading.problem import Baseline
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.inputs import (cores, grid_over, in_parallel, random_floats,
                                            random_floats_fast, unravel)
from autograder.problems.kit.memo import once_per_array

SPEED_MATMUL = (4096, 4096, 4096)


def matmul_inputs(rng, size):
    m, k, n = size
    return {"A": random_floats(rng, m * k).reshape(m, k), "B": random_floats(rng, k * n).reshape(k, n)}


def matmul_spec(A, B, **launch):
    return {"C": A @ B}


def matmul_tolerance(inputs, expected):
    # A dot product of length K in fp32 (products and a running sum, fused or not) is within
    # gamma_K * sum_k |a_ik b_kj| of the exact one.
    a, b = inputs["A"].astype(np.float64), inputs["B"].astype(np.float64)
    return {"C": gamma(a.shape[1]) * (np.abs(a) @ np.abs(b)) + TINY32}


def matmul_speed_inputs(rng, size):
    m, k, n = size
    return {"A": random_floats_fast(rng, m * k).reshape(m, k),
            "B": random_floats_fast(rng, k * n).reshape(k, n)}


@once_per_array
def _columns(B: np.ndarray) -> np.ndarray:
    """B's columns as contiguous rows: a sample's columns are then read as rows, not gathered one
    element per cache line."""
    return np.ascontiguousarray(B.T)


def matmul_sample(inputs, idx):
    """C's expected values and tolerances at flat indices ``idx``: each from its row of A and
    column of B in float64 (products of float32 values are exact there), in blocks of rows that
    stay in cache, side by side."""
    A, B = inputs["A"], inputs["B"]
    rows, cols = unravel(idx, (A.shape[0], B.shape[1]))
    exp, mag = np.empty(rows.size), np.empty(rows.size)
    step = 256

    def block(i: int) -> None:
        s = slice(i * step, (i + 1) * step)
        products = A[rows[s]].astype(np.float64) * _columns(B)[cols[s]]
        exp[s] = products.sum(axis=1)
        mag[s] = np.abs(products).sum(axis=1)
    _columns(B)                  # made once, before the threads share it
    in_parallel(block, -(-rows.size // step), rows.size * A.shape[1])
    return {"C": exp}, {"C": gamma(A.shape[1]) * mag + TINY32}


def matmul_outputs(size):
    m, k, n = size
    return {"C": ((m, n), np.float32)}


def matmul_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["A"], inputs["B"], outputs["C"])


def matmul_blocks(size, block):
    """One thread per element of C: blocks (x, y) across C's columns and down its rows."""
    m, k, n = size
    return grid_over(m, n, block)


def matmul_bytes_moved(s):
    return 4 * (s[0] * s[1] + s[1] * s[2] + s[0] * s[2])


def matmul_flops(s):
    return 2 * s[0] * s[1] * s[2]


def cupy_matmul():
    import cupy as cp

    def run(inputs, outputs):
        cp.matmul(cp.asarray(inputs["A"]), cp.asarray(inputs["B"]), out=cp.asarray(outputs["C"]))
    return run


def _numpy_matmul(A, B, C):
    np.matmul(A, B, out=C)


@njit_on_first_call
def _triple_loop():
    import numba

    @numba.njit(cache=False)
    def matmul(A, B, C):
        for i in range(C.shape[0]):
            for j in range(C.shape[1]):
                acc = np.float32(0)
                for k in range(A.shape[1]):
                    acc += A[i, k] * B[k, j]
                C[i, j] = acc
    return matmul


def _serial_matmul(A, B, C):
    _triple_loop(A, B, C)


MATMUL_BASELINES = {
    "numpy": Baseline(f"NumPy A @ B (BLAS, up to {cores()} cores)", _numpy_matmul),
    "serial": Baseline("numba.njit triple loop (1 core)", _serial_matmul, at_speed_size=False),
}
