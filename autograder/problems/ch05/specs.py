"""Chapter 5's graded exercises: the tiled matmul and the roofline bound on a matmul's time."""

from __future__ import annotations

import numpy as np

from autograder.grading.problem import Problem, Sizes, SpeedBar
from autograder.problems.ch05.references import TILE, reference_tiled
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.matmul import (MATMUL_BASELINES, SPEED_MATMUL, cupy_matmul,
                                            matmul_blocks, matmul_bytes_moved, matmul_flops,
                                            matmul_inputs, matmul_launch, matmul_outputs,
                                            matmul_sample, matmul_spec, matmul_speed_inputs,
                                            matmul_tolerance)

U64 = 2.0 ** -53


# ---- 5.1 tiled matrix multiplication ------------------------------------------------------------

tiled_matmul = Problem(
    "tiled_matmul", title="C = A @ B with TILE × TILE tiles of A and B in shared memory",
    spec=matmul_spec, make_inputs=matmul_inputs, outputs=matmul_outputs,
    tolerance=matmul_tolerance, launch=matmul_launch,
    block_sizes=((TILE, TILE),), visible_block_size=(TILE, TILE), blocks_for=matmul_blocks,
    # (M, K, N), no side a multiple of TILE: every block row, block column and the last tile
    # along K is partial. K = 21 gives three tiles along K, so a missing second barrier races in
    # the first case; K = 3 and 1 × 1 × 1 fit in one tile (everything is padding but a corner).
    # CPU sides stay below 22: the simulator takes ~0.1 s per block and phase, and autograde
    # gives a test cell 25 s on a loaded 2-core machine.
    cpu_sizes=Sizes(visible=((13, 21, 10), (5, 3, 7), (1, 1, 1)),
                    hidden=((11, 9, 19), (1, 21, 17), (23, 29, 19)), hidden_random=(2, 1, 20)),
    gpu_sizes=Sizes(visible=((1023, 517, 1537), (13, 21, 10), (5, 3, 7), (1, 1, 1)),
                    hidden=((11, 9, 19), (1, 21, 17)), hidden_random=(3, 1, 1200),
                    speed=SPEED_MATMUL),
    bytes_moved=matmul_bytes_moved, flops=matmul_flops, baselines=MATMUL_BASELINES,
    reference=reference_tiled, speed_inputs=matmul_speed_inputs, sample_spec=matmul_sample,
    vendor=cupy_matmul, vendor_label="CuPy matmul (cuBLAS SGEMM)",
    # On the H200 the reference ran 4096³ in 27.2 ms: 4.5× NumPy on a 16-core host, 3.8× on a
    # 32-core one (docs/benchmarks.md). The bar asks for about half of that speedup.
    speed=SpeedBar(min_fraction_of_reference=0.7, baseline="numpy", min_speedup=2.0),
    size_label=lambda s: f"A {s[0]} × {s[1]} times B {s[1]} × {s[2]}",
    value_hint=("if only some elements are wrong, look at the last tile along K (K is not a "
                "multiple of TILE): a thread whose A column or B row is past K must store 0 in "
                "the tile, or the products use values left from the previous tile. If most are "
                "wrong: A's tile takes its column from the tile number and threadIdx.x, B's its "
                "row from the tile number and threadIdx.y, and the sum reads sA[ty, k] * sB[k, tx]."),
)


# ---- 5.2 predict: the roofline bound on a matmul's time -----------------------------------------

def matmul_bytes(m, k, n, tile):
    """Global-memory bytes a matmul moves when each block loads TILE × TILE tiles (tile = 1: the
    naive kernel): A is read once per column of tiles of C, B once per row of tiles, C written
    once; float32 (4 bytes) everywhere, sides taken as multiples of the tile."""
    return 4.0 * (m * k * n / tile + k * n * m / tile + m * n)


def _bound_spec(m, k, n, tile, peak_flops, bandwidth):
    flops = 2.0 * m * k * n
    return {"seconds": np.maximum(flops / peak_flops, matmul_bytes(m, k, n, tile) / bandwidth)}


def _bound_inputs(rng, count):
    m, k, n = (rng.integers(1, 8193, count).astype(np.float64) for _ in range(3))
    tile = rng.choice([1, 2, 4, 8, 16, 32, 64], count).astype(np.float64)
    peak = 10.0 ** rng.uniform(11, 14.5, count)          # 0.1 to 300 TFLOP/s
    bandwidth = 10.0 ** rng.uniform(10.5, 13, count)     # 30 GB/s to 10 TB/s
    # The first cases: chapter 5's device (67 TFLOP/s, 4.8 TB/s) on 4096³, naive then tiled
    # (memory bound), tile 64 (compute bound); then a 1 × 1 × 1 product.
    m[:4], k[:4], n[:4] = [4096, 4096, 4096, 1], [4096, 4096, 4096, 1], [4096, 4096, 4096, 1]
    tile[:4], peak[:4], bandwidth[:4] = [1, 16, 64, 1], 67e12, 4.8e12
    return {"m": m, "k": k, "n": n, "tile": tile, "peak_flops": peak, "bandwidth": bandwidth}


def _bound_tolerance(inputs, expected):
    # A handful of float64 roundings in any order of evaluation: 64 u relative is generous.
    return {"seconds": 64 * U64 * expected["seconds"]}


matmul_time_bound = formula_problem(
    "matmul_time_bound", title="The roofline: a lower bound on a tiled matmul's run time",
    function="matmul_time_bound",
    args=(("m", int), ("k", int), ("n", int), ("tile", int), ("peak_flops", float),
          ("bandwidth", float)),
    results=("seconds",), spec=_bound_spec, make_inputs=_bound_inputs,
    tolerance=_bound_tolerance, sizes=Sizes(visible=(8,), hidden=(200,)),
    value_hint=("the bound is the larger of two times: 2·M·K·N FLOPs at the peak rate, and the "
                "bytes at the bandwidth, with 4·(M·K·N / TILE + K·N·M / TILE + M·N) bytes "
                "(A and B read once per tile of C along the other side, C written once)."),
)
