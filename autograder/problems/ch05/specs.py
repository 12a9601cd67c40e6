"""Chapter 5's graded exercises: the tiled matmul and the roofline bound on a matmul's time."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from autograder.core.spec import Case
from autograder.grading.problem import Problem, Sizes, SpeedBar
from autograder.problems.ch05.references import TILES, reference_tiled
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.matmul import (MATMUL_BASELINES, SPEED_MATMUL, cupy_matmul,
                                            matmul_blocks, matmul_bytes_moved, matmul_flops,
                                            matmul_inputs, matmul_outputs,
                                            matmul_sample, matmul_spec, matmul_speed_inputs,
                                            matmul_tolerance)

U64 = 2.0 ** -53


# ---- 5.1 tiled matrix multiplication ------------------------------------------------------------

def tile_of(kernel) -> int:
    """The tile side a tiled matmul kernel is written for: the module constant ``TILE`` that its
    Python function sees (the learner's notebook; ``references.py`` for the course's kernel), one
    of :data:`TILES`. Numba reads that global when it compiles the kernel, so it is the size of
    the kernel's shared tiles and the block side it must be launched with."""
    names = getattr(getattr(kernel, "py_func", None), "__globals__", None)
    if names is None:
        raise TypeError("tiled_matmul_kernel must be a @cuda.jit kernel")
    tile = names.get("TILE")
    if isinstance(tile, (int, np.integer)) and not isinstance(tile, bool) and int(tile) in TILES:
        return int(tile)
    found = "no TILE is defined" if tile is None else f"TILE is {tile!r}"
    raise ValueError(f"{found}: the check launches your kernel with blocks of TILE × TILE threads, "
                     f"TILE read from your notebook; set TILE = 8, 16 or 32 in the kernel's cell")


def tiled_launch(kernel, inputs, outputs, case):
    """Blocks of TILE × TILE threads, TILE the kernel's own (:func:`tile_of`), and a grid of
    (ceil(N / TILE), ceil(M / TILE)) blocks: x across C's columns, y down its rows."""
    block = (tile_of(kernel),) * 2
    kernel[matmul_blocks(case.size, block), block](inputs["A"], inputs["B"], outputs["C"])


class TiledMatmul(Problem):
    """The tiled matmul, launched with the learner's tile side: the launch reads it from the
    kernel (:func:`tiled_launch`), in the process that runs the kernel, so a case carries no
    launch shape of its own."""

    def time_limit(self, case: Case) -> float:
        # The limit of the tile side whose grid has the most threads (the most padding).
        limit = super().time_limit
        return max(limit(replace(case, blocks=matmul_blocks(case.size, (t, t)), threads=(t, t)))
                   for t in TILES)

    def simulated_threads(self, case: Case) -> float:
        # Each thread loads one element of each tile and sums over K: its work grows with K, and
        # with blocks of 1024 threads every step of the simulator is slower. A correct TILE = 32
        # kernel took 5.3 s of processor time on A 2 × 37 (2,048 threads) alone on a 2-core
        # machine, and past the 24 s that the thread count alone allowed beside CI's other work.
        return case.thread_count * max(1.0, case.size[1] / 8)


tiled_matmul = TiledMatmul(
    "tiled_matmul", title="C = A @ B with TILE × TILE tiles of A and B in shared memory",
    spec=matmul_spec, make_inputs=matmul_inputs, outputs=matmul_outputs,
    tolerance=matmul_tolerance, launch=tiled_launch,
    # (M, K, N), no side a multiple of 8 (so of no tile side): every block row, block column and
    # the last tile along K is partial, whatever the learner's TILE. K = 21 gives three tiles of
    # 8 (two of 16), so a missing second barrier races in the first case; K = 37 gives two tiles
    # of 32 and N = 35 two blocks of 32 across C, so the second case does that at every tile
    # side; 1 × 1 × 1 fits in one tile (everything is padding but a corner). Hidden, M = 37: two
    # block rows of 32. CPU sides stay small: the simulator takes ~0.1 s per block of 64 threads
    # and phase, ~1.5 s per block of 1024 (TILE = 32), the race detector watching.
    cpu_sizes=Sizes(visible=((13, 21, 10), (2, 37, 35), (1, 1, 1)),
                    hidden=((11, 9, 19), (1, 21, 17), (23, 29, 19), (37, 5, 3)),
                    hidden_random=(2, 1, 20)),
    gpu_sizes=Sizes(visible=((1023, 517, 1537), (13, 21, 10), (2, 37, 35), (1, 1, 1)),
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
