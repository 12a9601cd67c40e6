"""What chapter 13's notebook calls outside the graded cells: the "measure it" cells (the sorts
timed on a GPU beside CuPy's and, where installed, ``cuda.compute``'s radix sort; the CPU
baselines timed), the picture of one radix pass, and the merge sort's stability check."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch13.references import DIGITS, merge_sort
from autograder.problems.ch13.specs import (BASELINES, KEY, SPEED_SIZE, digits,
                                            exclusive_scan_host, local_sort_reference,
                                            radix_keys, sort_bytes, speed_keys, speed_sample,
                                            stable_order)


# ---- measuring on a GPU (the chapter's "measure it" cells) --------------------------------------

def _cuda_compute_sort():
    """``cuda.compute``'s radix sort of pairs (the cuda-cccl package), or None where it is not
    installed or has no such algorithm. Returns ``sort(d_keys, d_values, d_out_keys,
    d_out_values)`` on CuPy arrays."""
    try:
        import cuda.compute as cc
    except Exception:           # not installed, or no GPU toolkit it can load
        return None
    make = getattr(cc, "make_radix_sort", None)
    order = getattr(cc, "SortOrder", None)
    if make is None or order is None:
        return None
    cache = {}

    def run(keys, values, out_keys, out_values):
        n = keys.size
        if "sorter" not in cache:
            cache["sorter"] = make(keys, out_keys, values, out_values, order.ASCENDING)
            cache["temp"] = None
        sorter = cache["sorter"]
        if cache["temp"] is None:
            import cupy as cp
            size = sorter(None, keys, out_keys, values, out_values, n)
            cache["temp"] = cp.empty(size, np.uint8)
        sorter(cache["temp"], keys, out_keys, values, out_values, n)
    return run


def measure(sorts: dict, n: int = SPEED_SIZE, repeats: int = 10, seed: int = 13,
            with_vendors: bool = True) -> list[dict]:
    """Time each radix sort of pairs on n = 2^k keys (every key twice, scattered) beside CuPy's
    sort of the keys (CUB's radix sort) and ``cuda.compute``'s radix sort of the pairs where they
    are installed; every result is checked at 4096 random positions.

    ``sorts`` maps a label to ``sort(keys, values, out_keys, out_values, threads)`` (launched
    with 256 threads). Rows: label, ms, GB/s (16 bytes per pair: read and written once, the least
    any sort moves), right (bool)."""
    from autograder.machine import timing
    timing.require_gpu("Timing the sorts")
    from numba import cuda as numba_cuda
    rng = np.random.default_rng(seed)
    host = speed_keys(rng, n)
    d_keys, d_values = numba_cuda.to_device(host["keys"]), numba_cuda.to_device(host["values"])
    d_out_k = numba_cuda.device_array(n, KEY)
    d_out_v = numba_cuda.device_array(n, KEY)
    idx = np.sort(rng.choice(n, size=min(4096, n), replace=False))
    expected, _ = speed_sample(host, idx)
    nbytes = sort_bytes(n)
    rows = []

    def right(keys_out, values_out=None):
        ok = np.array_equal(keys_out[idx].astype(np.float64), expected["out_keys"])
        if values_out is not None:
            ok = ok and np.array_equal(values_out[idx].astype(np.float64), expected["out_values"])
        return bool(ok)

    for label, sort in sorts.items():
        stats = timing.time_gpu(label, lambda i: sort(d_keys, d_values, d_out_k, d_out_v, 256),
                                repeats=repeats, nbytes=nbytes)
        rows.append({"label": label, "ms": stats.median_ms, "gbps": stats.gbps,
                     "right": right(d_out_k.copy_to_host(), d_out_v.copy_to_host())})
    if not with_vendors:
        return rows
    try:
        import cupy as cp
    except ImportError:
        return rows
    c_keys, c_values = cp.asarray(d_keys), cp.asarray(d_values)
    result = {}

    def keys_only(i):
        result["k"] = cp.sort(c_keys)
    stats = timing.time_gpu(VENDOR_SORTS[0], keys_only, repeats=repeats,
                            nbytes=8 * n)
    rows.append({"label": VENDOR_SORTS[0], "ms": stats.median_ms,
                 "gbps": stats.gbps, "right": right(cp.asnumpy(result["k"]))})
    compute_sort = _cuda_compute_sort()
    if compute_sort is not None:
        out_k, out_v = cp.empty_like(c_keys), cp.empty_like(c_values)
        label = VENDOR_SORTS[1]
        try:
            stats = timing.time_gpu(label, lambda i: compute_sort(c_keys, c_values, out_k, out_v),
                                    repeats=repeats, nbytes=nbytes)
        except Exception as exc:     # another cuda-cccl version's interface: say so, go on
            print(f"({label} not timed: {type(exc).__name__}: {str(exc)[:200]})")
        else:
            rows.append({"label": label, "ms": stats.median_ms, "gbps": stats.gbps,
                         "right": right(cp.asnumpy(out_k), cp.asnumpy(out_v))})
    return rows


def time_cpu_sorts(n: int, seed: int = 3) -> list[dict]:
    """The CPU baselines on n random pairs: label, ms, GB/s (16 bytes per pair, as on the GPU),
    right (bool)."""
    from autograder.machine import timing
    rng = np.random.default_rng(seed)
    keys = radix_keys(rng, n, "random")
    values = np.arange(n, dtype=KEY)
    out_k, out_v = np.empty(n, KEY), np.empty(n, KEY)
    order = stable_order(keys)
    rows = []
    for key in ("serial", "numpy"):
        base = BASELINES[key]
        stats = timing.time_cpu(base.label, lambda: base.run(keys, values, out_k, out_v),
                                repeats=3, nbytes=sort_bytes(n))
        rows.append({"label": base.label, "ms": stats.median_ms, "gbps": stats.gbps,
                     "right": bool(np.array_equal(out_k, keys[order])
                                   and np.array_equal(out_v, values[order]))})
    return rows


# ---- the picture: one radix pass ------------------------------------------------------------------

def plot_pass(keys, shift: int, threads: int, ax=None):
    """One pass of the radix sort on a few keys, drawn as four rows of cells coloured by digit:
    the input (cut into tiles of ``threads``), each tile sorted by the digit, the pass's output
    (the keys of digit 0 of every tile, then digit 1, …), and under it the count table and its
    exclusive scan, digit-major. Returns (tile keys, counts, offsets, output)."""
    import matplotlib.pyplot as plt
    keys = np.asarray(keys, KEY)
    n = keys.size
    values = np.arange(n, dtype=KEY)
    tk, tv, counts = local_sort_reference(keys, values, shift, threads)
    offsets = exclusive_scan_host(counts)
    order = stable_order(tk, shift)
    out = tk[order]
    if ax is None:
        _, ax = plt.subplots(figsize=(0.5 * n + 2, 3.6))
    colours = plt.get_cmap("tab20")
    rows = [("input", keys, values), ("tiles sorted\nby digit", tk, tv),
            ("output of\nthe pass", out, tv[order])]
    for r, (label, ks, vs) in enumerate(rows):
        for i, (k, v) in enumerate(zip(ks, vs)):
            d = int(digits(np.array([k]), shift)[0])
            ax.add_patch(plt.Rectangle((i, -r * 1.4), 0.95, 0.95, color=colours(d % 20)))
            ax.text(i + 0.47, -r * 1.4 + 0.6, f"{d:x}", ha="center", va="center", fontsize=9)
            ax.text(i + 0.47, -r * 1.4 + 0.22, f"@{int(v)}", ha="center", va="center",
                    fontsize=6, color="#333333")
        ax.text(-0.4, -r * 1.4 + 0.45, label, ha="right", va="center", fontsize=8)
    for b in range(1, -(-n // threads)):
        for r in range(2):
            ax.plot([b * threads - 0.03] * 2, [-r * 1.4 - 0.1, -r * 1.4 + 1.05], color="black",
                    lw=2)
    ax.set_xlim(-3, n + 0.5)
    ax.set_ylim(-3.2, 1.3)
    ax.axis("off")
    ax.set_title(f"one pass, digit = (key >> {shift}) & {DIGITS - 1} (shown in hex; @ = input "
                 f"position), tiles of {threads}", fontsize=9)
    return tk, counts, offsets, out


# ---- merge sort ----------------------------------------------------------------------------------

def merge_sort_check(n: int = 203, seed: int = 4) -> dict:
    """The course's merge sort (runs doubling in length, each merge chapter 12's co-rank merge) on
    n keys with many copies, paired with their positions: is it sorted, and is it stable?"""
    from numba import cuda as numba_cuda
    rng = np.random.default_rng(seed)
    keys = radix_keys(rng, n, "duplicates")
    values = np.arange(n, dtype=KEY)
    d_k, d_v = numba_cuda.device_array(n, KEY), numba_cuda.device_array(n, KEY)
    passes = merge_sort(numba_cuda.to_device(keys), numba_cuda.to_device(values), d_k, d_v,
                        threads=32, per=4)
    got_k, got_v = d_k.copy_to_host(), d_v.copy_to_host()
    order = stable_order(keys)
    return {"n": n, "passes": passes, "sorted": bool(np.array_equal(got_k, keys[order])),
            "stable": bool(np.array_equal(got_v, values[order]))}


CHART = "ch13_measure"      # the measuring cell's recorded picture: h200_ch13_measure.json here
VENDOR_SORTS = ("cupy.sort (CUB radix sort, keys only)", "cuda.compute radix sort (pairs)")


def chart(rows: list[dict] | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): each sort of
    :func:`measure` as a bar, the vendors' sorts (CUB) as lines. Without a GPU, ``chart()``
    names the course's own run of it instead, recorded on the H200 (``h200_ch13_measure.json``
    in this folder)."""
    if rows is None:
        return {"name": CHART}
    labels = {r["label"] for r in rows}
    return {"name": CHART, "rows": rows, "reference": [v for v in VENDOR_SORTS if v in labels] or None,
            "title": f"Sorting {SPEED_SIZE:,} key-value pairs"}
