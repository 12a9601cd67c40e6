"""H200 figures the chapters quote that no speed test measures: chapter 2's pageable and pinned
copies and its timer's spin kernel, chapter 5's tile sides, and the chapter 2 timer check run on
the GPU with the chapter's solution. CUDA events, warm-up first, median of the runs.

    python3 scripts/gpu-figures.py [--out DIR]        (on the GPU machine: scripts/gpu-check figures)

Writes DIR/figures.json and prints a table."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import autograder as ag  # noqa: E402
from numba import cuda  # noqa: E402


def events_ms(fn, repeats=10):
    fn()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    times = []
    for _ in range(repeats):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cuda.event_elapsed_time(start, end))
    return statistics.median(times), times


def copies(n):
    """Chapter 2's cell: pageable into a fresh allocation against pinned into one allocated once."""
    x = np.random.default_rng(1).standard_normal(n, dtype=np.float32)
    pinned = cuda.pinned_array(n, dtype=np.float32)
    pinned[:] = x
    d_once = cuda.device_array(n, dtype=np.float32)
    out = {}
    for label, fn in {"pageable, fresh allocation": lambda: cuda.to_device(x),
                      "pinned, allocated once": lambda: cuda.to_device(pinned, to=d_once),
                      "pageable, allocated once": lambda: cuda.to_device(x, to=d_once)}.items():
        ms, _ = events_ms(fn)
        out[label] = {"ms": ms, "GB/s": 4 * n / (ms * 1e-3) / 1e9}
    return out


def timer():
    """The spin kernel behind busy_kernel(ms): how close each run is to what was asked."""
    out = {}
    for asked in (2.0, 10.0, 20.0):
        launch = ag.problems.ch02.busy_kernel(ms=asked)
        ms, times = events_ms(launch, repeats=15)
        out[f"{asked:g} ms asked"] = {"median_ms": ms, "min_ms": min(times), "max_ms": max(times)}
    return out


def tiles():
    """Chapter 5's reference kernel compiled at each tile side, 4096 × 4096 × 4096."""
    from autograder.problems.ch05.references import reference_tiled
    side = 4096
    g = np.random.default_rng(1)
    a = cuda.to_device(g.standard_normal((side, side), dtype=np.float32))
    b = cuda.to_device(g.standard_normal((side, side), dtype=np.float32))
    c = cuda.device_array((side, side), np.float32)
    out = {}
    for tile in (8, 16, 32):
        kernel = ag.problems.ch05.with_tile(reference_tiled(), tile)
        grid = ((side + tile - 1) // tile, (side + tile - 1) // tile)
        ms, _ = events_ms(lambda: kernel[grid, (tile, tile)](a, b, c), repeats=10)
        out[f"TILE {tile}"] = {"ms": ms, "GFLOP/s": 2 * side ** 3 / ms / 1e6}
    return out


def timer_check():
    """The chapter's own solution of 2.2 through the check, on the GPU (verdicts printed)."""
    src = (ROOT / "source/ch02_data_parallel/ch02_data_parallel.py").read_text()
    start = src.index("def time_ms(launch, repeats):")
    body = src[start:src.index("### END SOLUTION", start)]
    names = {"cuda": cuda, "np": np}
    exec(body, names)
    out = {}
    for which in ("check", "check_hidden"):
        try:
            getattr(ag.problems.ch02.gpu_timer, which)(names["time_ms"])
            out[which] = "passed"
        except Exception as e:          # CheckFailed: the verdict's text
            out[which] = f"{type(e).__name__}: {e}"
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/figures"))
    args = ap.parse_args()
    import numba_cuda
    result = {"device": cuda.get_current_device().name.decode() if isinstance(
        cuda.get_current_device().name, bytes) else str(cuda.get_current_device().name),
        "numba_cuda": numba_cuda.__version__, "numpy": np.__version__}
    for name, fn in (("timer_check", timer_check), ("copy_2^26", lambda: copies(1 << 26)),
                     ("copy_2^28", lambda: copies(1 << 28)), ("timer", timer), ("ch05_tiles", tiles)):
        try:
            result[name] = fn()
        except Exception as e:
            import traceback
            traceback.print_exc()
            result[name] = f"failed: {type(e).__name__}: {e}"
        print(name, json.dumps(result[name], indent=1), flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "figures.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
