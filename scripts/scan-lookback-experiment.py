"""Issue 23's scan experiment: the course's single-pass scan (tiles publish status and value
together in one 64-bit word, as CUB's tile state does, read back by a whole warp with one load per
predecessor; chapter 11's reference since 2026-12-04) at several tile shapes, against the
status-word kernel (status word + two values, each read with an atomic), a copy of the same
bytes, `cupy.cumsum` and `torch.cumsum` (CUB), in one process.

    python scripts/scan-lookback-experiment.py [--n 268435456] [--repeats 30] [--out DIR]

Prints a table and writes scan-lookback-N.json under --out. GPU only. Every row is timed by the
course's own `timing.time_gpu` (the median of --repeats calls between CUDA events, after three
warm-ups, the GPU held busy while Python queues the call: device time, as the speed tests take
it); the copy is the course's yardstick (`timing.copy_variants`: cudaMemcpy, a Numba copy
kernel, CuPy's copyto).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np
from numba import cuda


def packed_kernel(T: int, C: int):
    """The course's reference (chapter 11's packed-word scan) at tiles of T threads × C elements,
    called as a caller outside the exercises calls it: one launch, bound once."""
    from autograder.problems.ch11 import references as ref
    scan = ref.packed_at(T, C)()

    def run(x, y):
        scan(x, y)       # 256 threads: the speed test's block size, so (T, C) is used
    run.label = f"packed word, warp look-back, {T} threads x {C}"
    return run


VARIANTS = ((256, 16), (128, 16), (128, 24), (128, 32), (256, 24), (64, 32))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 28)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    host = rng.uniform(-1, 1, n).astype(np.float32)
    x = cuda.to_device(host)
    y = cuda.device_array(n, np.float32)
    sys.path.insert(0, os.getcwd())
    from autograder.machine import timing
    from autograder.problems.ch11 import references as ref, specs
    rows = []
    sample = rng.integers(0, n, 2000)
    exact = np.cumsum(host.astype(np.float64))

    def check(label):
        got = y.copy_to_host()
        err = float(np.max(np.abs(got[sample] - exact[sample])))
        last = float(abs(got[-1] - exact[-1]))
        return {"max_abs_err_sampled": err, "last_err": last, "ok": bool(err < 1e-2 * math.sqrt(n) and last < 1e-2 * math.sqrt(n))}

    def add(label, fn, correct=True):
        ms = timing.time_gpu(label, lambda i: fn(), repeats=args.repeats).median_ms
        row = {"kernel": label, "ms": round(ms, 4), "GBps": round(8 * n / ms / 1e6, 1)}
        if correct:
            y.copy_to_device(np.full(n, np.nan, np.float32))
            fn()
            cuda.synchronize()
            row.update(check(label))
        rows.append(row)
        print(row, flush=True)

    for s in timing.copy_variants(8 * n, args.repeats):      # the course's copy yardsticks
        rows.append({"kernel": f"copy of the same bytes: {s.label}", "ms": round(s.median_ms, 4),
                     "best_ms": round(s.best_ms, 4), "GBps": round(8 * n / s.median_ms / 1e6, 1)})
        print(rows[-1], flush=True)
    window = ref.window_single_pass()
    add("status word + 2 values, atomics",
        lambda: specs.single_pass_scan(window, x, y, specs.SPEED_THREADS))
    for T, C in VARIANTS:
        try:
            run = packed_kernel(T, C)
            add(run.label, lambda: run(x, y))
        except Exception as exc:     # a variant that does not compile or launch
            rows.append({"kernel": f"packed {T}x{C}", "error": repr(exc)[:500]})
            print(rows[-1], flush=True)
    try:
        import cupy as cp
        cx, cy = cp.asarray(x), cp.asarray(y)
        add("cupy.cumsum", lambda: cp.cumsum(cx, out=cy))
    except Exception as exc:
        rows.append({"kernel": "cupy.cumsum", "error": repr(exc)[:300]})
    try:
        import torch
        tx = torch.as_tensor(x, device="cuda")
        ty = torch.as_tensor(y, device="cuda")
        add("torch.cumsum (CUB)", lambda: torch.cumsum(tx, 0, out=ty))
    except Exception as exc:
        rows.append({"kernel": "torch.cumsum", "error": repr(exc)[:300]})
    copy = min(r["ms"] for r in rows if r["kernel"].startswith("copy"))
    print(f"\n{'kernel':55s} {'ms':>8s} {'GB/s':>8s} {'of copy':>8s}  ok")
    for r in rows:
        if "ms" in r:
            print(f"{r['kernel'][:55]:55s} {r['ms']:8.3f} {r['GBps']:8.0f} {copy / r['ms']:8.0%}  {r.get('ok', '')}")
        else:
            print(r)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"scan-lookback-{n}.json"), "w") as f:
        name = cuda.get_current_device().name
        json.dump({"device": name.decode() if isinstance(name, bytes) else str(name), "n": n,
                   "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
