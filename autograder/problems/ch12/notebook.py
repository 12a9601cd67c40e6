"""What chapter 12's notebook calls outside the graded cells: the "measure it" cells (the merges
timed on a GPU beside CuPy's sort, the CPU baselines timed) and the pictures (the merge path with
each thread's split points, a block's tiles)."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch12.specs import (BASELINES, KEY, SPEED_SIZE, SRC, co_ranks,
                                            fast_sorted_keys, merge_bytes, merge_reference,
                                            merged_at)


# ---- measuring on a GPU (the chapter's "measure it" cells) --------------------------------------

def measure(kernels: dict, m: int = SPEED_SIZE[0], n: int = SPEED_SIZE[1], repeats: int = 10,
            seed: int = 12, with_cupy: bool = True) -> list[dict]:
    """Time each merge kernel on m + n keys (runs of ~16 equal keys), beside CuPy's sort of A‖B
    where CuPy is installed; every result is checked at 4096 random output positions.

    ``kernels`` maps a label to ``(kernel, shape)``, ``shape(total) -> (blocks, threads)``. Rows:
    label, ms, GB/s (12 bytes per key: read once, C and src written), right (bool)."""
    from autograder.machine import timing
    timing.require_gpu("Timing the merges")
    from numba import cuda as numba_cuda
    rng = np.random.default_rng(seed)
    A, B = fast_sorted_keys(rng, m, n)
    total = m + n
    nbytes = merge_bytes((m, n))
    d_A, d_B = numba_cuda.to_device(A), numba_cuda.to_device(B)
    d_C = numba_cuda.device_array(total, KEY)
    d_src = numba_cuda.device_array(total, SRC)
    idx = np.sort(rng.choice(total, size=min(4096, total), replace=False))
    exp_c, exp_src = merged_at(A, B, idx)
    rows = []
    for label, (kernel, shape) in kernels.items():
        blocks, threads = shape(total)
        stats = timing.time_gpu(label, lambda i: kernel[blocks, threads](d_A, d_B, d_C, d_src),
                                repeats=repeats, nbytes=nbytes)
        right = bool(np.array_equal(d_C.copy_to_host()[idx], exp_c)
                     and np.array_equal(d_src.copy_to_host()[idx], exp_src))
        rows.append({"label": label, "ms": stats.median_ms, "gbps": stats.gbps, "right": right})
    if with_cupy:
        try:
            import cupy as cp
        except ImportError:
            cp = None
        if cp is not None:
            both = cp.concatenate([cp.asarray(d_A), cp.asarray(d_B)])
            result = {}

            def sort(i):
                result["C"] = cp.sort(both)
            stats = timing.time_gpu("cupy.sort of A‖B (keys only)", sort, repeats=repeats,
                                    nbytes=nbytes)
            right = bool(np.array_equal(cp.asnumpy(result["C"][cp.asarray(idx)]), exp_c))
            rows.append({"label": "cupy.sort of A‖B (keys only)", "ms": stats.median_ms,
                         "gbps": stats.gbps, "right": right})
    return rows


def time_cpu_merges(m: int, n: int, seed: int = 3) -> list[dict]:
    """The CPU baselines on m + n keys: label, ms, GB/s (12 bytes per key, as on the GPU)."""
    from autograder.machine import timing
    rng = np.random.default_rng(seed)
    A, B = fast_sorted_keys(rng, m, n)
    C = np.empty(m + n, KEY)
    src = np.empty(m + n, SRC)
    rows = []
    for key in ("serial", "sort", "searchsorted"):
        base = BASELINES[key]
        stats = timing.time_cpu(base.label, lambda: base.run(A, B, C, src), repeats=3,
                                nbytes=merge_bytes((m, n)))
        exp_c, exp_src = merge_reference(A, B)
        right = bool(np.array_equal(C, exp_c) and np.array_equal(src, exp_src))
        rows.append({"label": base.label, "ms": stats.median_ms, "gbps": stats.gbps,
                     "right": right})
    return rows


# ---- the picture: the merge path ----------------------------------------------------------------

def plot_merge_path(A, B, parts: int = 0, ax=None, title: str = ""):
    """The merge as a path through the grid of A (down) × B (across): each step takes one key,
    down for A's, right for B's. Cells where A[i] > B[j] are shaded: the path runs along the
    boundary of that region. With ``parts``, the output is cut into that many equal ranges (one
    per thread): the dashed diagonals i + j = k at the cuts, and the dots where the path crosses
    them, (co_rank(k), k - co_rank(k)): each thread's split points."""
    import matplotlib.pyplot as plt
    A, B = np.asarray(A), np.asarray(B)
    m, n = A.size, B.size
    if ax is None:
        _, ax = plt.subplots(figsize=(0.45 * n + 2.2, 0.45 * m + 1.6))
    greater = A[:, None] > B[None, :]
    for i in range(m):
        for j in range(n):
            if greater[i, j]:
                ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor="#f3dcc4", edgecolor="none"))
    for x in range(n + 1):
        ax.plot([x, x], [0, m], color="#dddddd", lw=0.6, zorder=1)
    for y in range(m + 1):
        ax.plot([0, n], [y, y], color="#dddddd", lw=0.6, zorder=1)
    _, src = merge_reference(A, B)
    i = j = 0
    xs, ys = [0], [0]
    for s in src:
        if s < m:
            i += 1
        else:
            j += 1
        xs.append(j)
        ys.append(i)
    ax.plot(xs, ys, color="#3b6ea8", lw=2.5, zorder=3, label="merge path")
    if parts:
        total = m + n
        per = -(-total // parts)
        cuts = [min(t * per, total) for t in range(parts + 1)]
        ranks = co_ranks(A, B, cuts)
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for t, (k, r) in enumerate(zip(cuts, ranks)):
            lo_i, hi_i = max(0, k - n), min(k, m)
            ax.plot([k - lo_i, k - hi_i], [lo_i, hi_i], ls="--", lw=1, color="#777777", zorder=2)
            ax.plot([k - r], [r], "o", ms=8, color=colours[(t + 1) % len(colours)], zorder=4)
            if 0 < k < total:
                ax.annotate(f"k={k}: i={int(r)}, j={int(k - r)}", (k - r, r),
                            textcoords="offset points", xytext=(6, -10), fontsize=8)
    ax.set_xticks(np.arange(n) + 0.5)
    ax.set_xticklabels([f"{v:g}" for v in B], fontsize=8)
    ax.set_yticks(np.arange(m) + 0.5)
    ax.set_yticklabels([f"{v:g}" for v in A], fontsize=8)
    ax.xaxis.tick_top()
    ax.set_xlabel("B (j →)")
    ax.xaxis.set_label_position("top")
    ax.set_ylabel("A (i ↓)")
    ax.set_xlim(-0.2, n + 0.2)
    ax.set_ylim(m + 0.2, -0.2)
    ax.set_aspect("equal")
    if title:
        ax.set_title(title, fontsize=10, pad=28)
    return ax


def tile_plan(A, B, tile: int) -> list[dict]:
    """One block merging all of A and B tile by tile, as Exercise 12.4 does: per iteration, where
    its keys of A and B start, how many of each the tile holds (na, nb), how many it consumes,
    and how many keys the tiled and the circular-buffer kernels load from global memory."""
    A, B = np.asarray(A), np.asarray(B)
    m, n = A.size, B.size
    a = b = k = 0
    a_have = b_have = 0
    plan = []
    while k < m + n:
        na, nb = min(tile, m - a), min(tile, n - b)
        out = min(tile, m + n - k)
        used = int(co_ranks(A[a:a + na], B[b:b + nb], [out])[0])
        plan.append({"a": a, "b": b, "na": na, "nb": nb, "used_a": used, "used_b": out - used,
                     "tiled_loads": na + nb, "circular_loads": (na - a_have) + (nb - b_have)})
        a_have, b_have = na - used, nb - (out - used)
        a, b, k = a + used, b + out - used, k + out
    return plan


def plot_tiles(A, B, tile: int, axes=None):
    """Two panels, A and B: one row per iteration of a block's loop. The light bar is the tile of
    keys in shared memory, the dark part the keys the tile's `tile` outputs consume; hatched, the
    keys the circular-buffer kernel loads (only those it has not loaded before)."""
    import matplotlib.pyplot as plt
    plan = tile_plan(A, B, tile)
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 0.45 * len(plan) + 1.4), sharey=True)
    for ax, name, size in ((axes[0], "A", len(A)), (axes[1], "B", len(B))):
        key = name.lower()
        for r, row in enumerate(plan):
            start, held, used = row[key], row["n" + key], row["used_" + key]
            ax.add_patch(plt.Rectangle((start, r + 0.1), held, 0.8, facecolor="#cfe0f3",
                                       edgecolor="#3b6ea8", lw=0.8))
            ax.add_patch(plt.Rectangle((start, r + 0.1), used, 0.8, facecolor="#3b6ea8"))
            before = 0 if r == 0 else (plan[r - 1][key] + plan[r - 1]["n" + key]) - start
            new_from = start + max(before, 0)
            if start + held > new_from:
                ax.add_patch(plt.Rectangle((new_from, r + 0.1), start + held - new_from, 0.8,
                                           fill=False, hatch="///", edgecolor="#e07b39", lw=0))
        ax.set_xlim(0, max(size, 1))
        ax.set_ylim(len(plan), 0)
        ax.set_xlabel(f"index in {name}")
        ax.set_title(name, fontsize=10)
    axes[0].figure.suptitle(f"one block, TILE = {tile}: light, the tile in shared memory; dark, "
                            "the keys its outputs consume;\nhatched, the keys a circular buffer "
                            "loads (those it does not hold yet)", fontsize=9)
    axes[0].set_yticks(np.arange(len(plan)) + 0.5)
    axes[0].set_yticklabels([f"tile {r}" for r in range(len(plan))], fontsize=8)
    return plan
