"""What chapter 19's notebook calls outside the graded cells: a three-body system to check by
hand, a picture of the two decompositions, the CPU baselines timed, and the "measure it" cell
(gather, tiled gather and scatter on a GPU, beside the roofline bound of each)."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch19.references import (reference_gather, reference_tiled,
                                                 scatter_step)
from autograder.problems.ch19.specs import (BASELINES, SPEED_BLOCK, SPEED_N, nbody_bytes,
                                            nbody_flops, nbody_host, nbody_inputs, nbody_sample)


# ---- a system small enough to check by hand ------------------------------------------------------

def three_bodies() -> dict:
    """Three bodies on the x axis at 0, 1 and 3, of masses 1, 2 and 4, softening eps2 = 0 for
    the hand computation (the kernels use eps2 > 0): pos, mass, eps2 and the float64 accelerations
    with eps2 = 0.01."""
    pos = np.array([[0, 0, 0], [1, 0, 0], [3, 0, 0]], np.float32)
    mass = np.array([1, 2, 4], np.float32)
    eps2 = np.float32(0.01)
    return {"pos": pos, "mass": mass, "eps2": eps2, "acc": nbody_host(pos, mass, eps2)[0]}


def try_kernel(kernel, n: int = 50, threads: int = 32, seed: int = 19) -> tuple[np.ndarray,
                                                                                  np.ndarray]:
    """Run a learner's kernel once on ``n`` random bodies with blocks of ``threads``; return (what
    it stored, the float64 answer)."""
    from numba import cuda
    inputs = nbody_inputs(np.random.default_rng(seed), n)
    acc = cuda.to_device(np.full((n, 3), np.nan, np.float32))
    kernel[(n + threads - 1) // threads, threads](cuda.to_device(inputs["pos"]),
                                                  cuda.to_device(inputs["mass"]),
                                                  inputs["eps2"], acc)
    return acc.copy_to_host(), nbody_host(inputs["pos"], inputs["mass"], inputs["eps2"])[0]


def show_decompositions(n: int = 8, ax=None):
    """The N × N pairs of a step, coloured by who computes each: the gather (row i is thread i's,
    all N of them), the tiled gather (blocks of 4 threads: each square is the tile of bodies a
    block stages in shared memory together), and the scatter (only the pairs j > i, thread i's
    row, each also added into body j's row by an atomic)."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(1, 3, figsize=(12, 4))
    block = 4
    rows = np.arange(n)[:, None] * np.ones((1, n))
    views = [("gather: thread i reads all N bodies", rows, None),
             ("tiled: a block stages tiles of bodies", (rows // block) * 2 +
              (np.arange(n)[None, :] // block) % 2, block),
             ("scatter: pairs j > i, once each", np.where(np.arange(n)[None, :] > rows, rows,
                                                          np.nan), None)]
    for a, (title, values, tile) in zip(ax, views):
        a.imshow(values, cmap="tab20", interpolation="nearest")
        a.set_title(title, fontsize=9)
        a.set_xlabel("body j (the source of the pull)", fontsize=8)
        a.set_ylabel("body i (whose acceleration)", fontsize=8)
        a.set_xticks(range(n))
        a.set_yticks(range(n))
        a.tick_params(labelsize=7)
        if tile:
            for k in range(0, n + 1, tile):
                a.axvline(k - 0.5, color="k", lw=1)
                a.axhline(k - 0.5, color="k", lw=1)
    return ax


# ---- timing ------------------------------------------------------------------------------------------

def _right(got: np.ndarray, inputs: dict, seed: int = 1) -> bool:
    """acc checked at 512 sampled elements against the float64 sum."""
    idx = np.random.default_rng(seed).choice(got.size, size=min(512, got.size), replace=False)
    expected, tol = nbody_sample(inputs, idx)
    return bool(np.all(np.abs(got.reshape(-1)[idx] - expected["acc"]) <= tol["acc"]))


def time_cpu(n: int = 2_000, seed: int = 19) -> list[dict]:
    """The CPU baselines on ``n`` bodies: label, ms, GFLOP/s (20 FLOPs a pair), right (bool)."""
    from autograder.machine import timing
    inputs = nbody_inputs(np.random.default_rng(seed), n)
    acc = np.empty((n, 3), np.float32)
    out = []
    for key, base in BASELINES.items():
        if key == "serial" and n > 5_000:
            continue
        acc[:] = np.nan
        stats = timing.time_cpu(base.label, lambda: base.run(acc=acc, **inputs), repeats=3,
                                nbytes=nbody_bytes(n), flops=nbody_flops(n))
        out.append({"label": base.label, "ms": stats.median_ms, "gflops": stats.gflops,
                    "right": _right(acc, inputs)})
    return out


def bounds(n: int, block: int, peak_flops: float, bandwidth: float) -> dict:
    """The roofline's lower bounds on a step's time (seconds): the gather counting every load of
    a body from global memory, the tiled gather counting one load of each body per block."""
    flops = nbody_flops(n)
    gather = 16.0 * n * n + 24.0 * n
    tiled = 16.0 * n * -(-n // block) + 24.0 * n
    return {"gather": max(flops / peak_flops, gather / bandwidth),
            "tiled": max(flops / peak_flops, tiled / bandwidth)}


def measure(kernels: dict | None = None, n: int = SPEED_N, repeats: int = 10, seed: int = 19,
            limits: tuple[float, float] | None = None) -> list[dict]:
    """Time one N-body step of ``n`` bodies on a GPU, blocks of 256: the course's gather, tiled
    gather and scatter (Newton's third law, atomics), beside ``kernels``: ``{label: ("gather",
    kernel)}`` for a kernel of Exercise 19.2, ``{label: ("tiled", kernel)}`` for one of 19.3
    (launched as their checks launch them; the kind picks the bound), with this GPU's roofline
    bound on each decomposition and the compiled CPU loop on every core. Rows: label, ms,
    GFLOP/s (20 FLOPs a pair, N² pairs, for every row: the scatter computes half of them),
    bound_ms (the roofline's, None for the CPU), right (bool: acc checked at 512 elements).
    ``limits``: (peak FLOP/s, bytes/s) instead of this GPU's FP32 peak and copy bandwidth."""
    from autograder.machine import timing
    for label, (kind, _) in (kernels or {}).items():       # before anything is timed
        if kind not in ("gather", "tiled"):
            raise ValueError(f"{label}: the kind is 'gather' or 'tiled', not {kind!r}")
    timing.require_gpu("Timing the N-body step")
    from numba import cuda
    inputs = nbody_inputs(np.random.default_rng(seed), n)
    d_pos, d_mass = cuda.to_device(inputs["pos"]), cuda.to_device(inputs["mass"])
    eps2 = inputs["eps2"]
    acc = cuda.device_array((n, 3), np.float32)
    poison = np.full((n, 3), np.nan, np.float32)
    if limits is None:
        from autograder.machine.facts import peak_fp32_flops
        limits = (peak_fp32_flops(), timing.copy_ceiling(1 << 30).gbps * 1e9)
    bound = bounds(n, SPEED_BLOCK, *limits)
    blocks = (n + SPEED_BLOCK - 1) // SPEED_BLOCK
    out = []

    def record(label, launch, bound_s):
        acc.copy_to_device(poison)
        stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=nbody_bytes(n),
                                flops=nbody_flops(n))
        out.append({"label": label, "ms": stats.median_ms, "gflops": stats.gflops,
                    "bound_ms": None if bound_s is None else bound_s * 1e3,
                    "right": _right(acc.copy_to_host(), inputs)})

    def launcher(kernel):
        return lambda i: kernel[blocks, SPEED_BLOCK](d_pos, d_mass, eps2, acc)

    record("gather, a thread per body (course)", launcher(reference_gather()), bound["gather"])
    record("tiled gather, shared memory (course)", launcher(reference_tiled()), bound["tiled"])
    # The scatter's bound: half the FLOPs at the peak rate, or the least bytes of a step at the
    # bandwidth (its atomics' traffic left out): the best half the work could do.
    record("scatter, Newton's third law + atomics (course)",
           lambda i: scatter_step(d_pos, d_mass, eps2, acc, SPEED_BLOCK),
           max(nbody_flops(n) / 2 / limits[0], nbody_bytes(n) / limits[1]))
    for label, (kind, kernel) in (kernels or {}).items():
        record(label, launcher(kernel), bound[kind])
    host = np.full((n, 3), np.nan, np.float32)
    base = BASELINES["parallel"]
    base.run(acc=host, **inputs)          # checked below: a cached timing does not run it
    stats = timing.time_cpu(base.label, lambda: base.run(acc=host, **inputs), repeats=3,
                            nbytes=nbody_bytes(n), flops=nbody_flops(n),
                            cache_key=f"ch19.measure|parallel|{n}|{seed}")
    out.append({"label": "CPU: " + base.label, "ms": stats.median_ms, "gflops": stats.gflops,
                "bound_ms": None, "right": _right(host, inputs)})
    return out


CHART = "ch19_measure"      # the measuring cell's recorded picture: h200_ch19_measure.json here


def chart(rows: list[dict] | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): each GPU row of
    :func:`measure` as a bar, with its roofline bound as a mark. Without a GPU, ``chart()`` names
    the course's own run of it instead, recorded on the H200 (``h200_ch19_measure.json`` in this
    folder)."""
    if rows is None:
        return {"name": CHART}
    gpu = [r for r in rows if r["bound_ms"] is not None]
    return {"name": CHART, "rows": gpu, "bounds": {r["label"]: r["bound_ms"] for r in gpu},
            "title": f"One N-body step of {SPEED_N:,} bodies"}
