"""What chapter 8's notebook calls outside the graded cells: timing the four stencils on a GPU
beside a copy of the same bytes."""

from __future__ import annotations

import numpy as np

# The three stencil exercises share their bytes, FLOPs and sampled spec: stencil_basic's stand
# for all of them.
from autograder.problems.ch08.references import variant_launch
from autograder.problems.ch08.specs import (COEFFICIENTS, SPEED_COEFFICIENTS, SPEED_VOLUME,
                                            stencil_basic)


def measure(kernels, size=SPEED_VOLUME, repeats: int = 20) -> list[dict]:
    """Time each ``(label, problem, kernel)`` on a ``size`` volume, launched as the problem's
    speed test launches it, check 4096 sampled outputs of the last call, and add a copy of the
    same bytes. Rows: label, ms, GB/s for the bytes a stencil must move (read once, write once),
    fraction of the copy's bandwidth, and whether the samples were right."""
    from autograder.machine import timing
    timing.require_gpu("Timing the stencils")
    from numba import cuda
    nbytes = stencil_basic.bytes_moved(size)
    d_inp = cuda.device_array(size, dtype=np.float32)
    timing.fill_uniform(d_inp, seed=8, low=-2.0, high=2.0)
    d_out = cuda.device_array(size, dtype=np.float32)
    c = [np.float32(v) for v in SPEED_COEFFICIENTS]
    host = {"inp": d_inp.copy_to_host(), **dict(zip(COEFFICIENTS, c))}
    rng = np.random.default_rng(8)
    idx = np.sort(rng.choice(int(np.prod(size)), size=4096, replace=False))
    expected, tol = stencil_basic.sampled(host, idx)
    poison = np.full(size, np.nan, np.float32)
    rows = []
    for label, problem, kernel in kernels:
        # A bench variant (references.py) has a grid and block of its own.
        blocks, threads = variant_launch(kernel, size) or problem.speed_shape(size)
        d_out.copy_to_device(poison)          # NaN: a point the kernel skips shows up

        def launch(i, kernel=kernel, blocks=blocks, threads=threads):
            kernel[blocks, threads](d_inp, d_out, *c)
        stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=nbytes,
                                flops=stencil_basic.flops(size))
        got = d_out.copy_to_host().reshape(-1)[idx].astype(np.float64)
        right = bool(np.all(np.abs(got - expected["out"]) <= tol["out"]))
        rows.append({"label": label, "ms": stats.median_ms, "gbps": stats.gbps, "right": right,
                     "blocks": blocks, "threads": threads})
    ceiling = timing.copy_ceiling(nbytes)
    for row in rows:
        row["of_copy"] = ceiling.median_ms / row["ms"]
    rows.append({"label": ceiling.label, "ms": ceiling.median_ms, "gbps": ceiling.gbps,
                 "right": True, "of_copy": 1.0, "blocks": None, "threads": None})
    return rows
