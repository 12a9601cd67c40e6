"""An experiment toward issue 23's scan goal: a single-pass scan whose tiles publish status and
value together in one 64-bit word (as CUB's tile state does), read back by a whole warp with one
load per predecessor, against the course's reference (status word + two values, each read with
an atomic), a copy of the same bytes, `cupy.cumsum` and `torch.cumsum` (CUB), in one process.

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
from numba import cuda, float32, float64, int32, uint64
from numba.cuda import libdevice

FULL = 0xFFFFFFFF
NOT_READY, AGGREGATE, PREFIX = 0, 1, 2
NEG_INF64 = float64(-math.inf)


def packed_kernel(T: int, C: int, pad: bool = True):
    """Tiles of T·C elements; T threads, C consecutive elements each (staged through a padded
    shared tile so that global loads and stores stay coalesced)."""
    from autograder.problems.ch11 import references as ref
    block_scan = ref._block_scan("shuffle")
    TILE = T * C
    WORDS = TILE + (TILE // 32 if pad else 0)

    @cuda.jit(device=True, inline=True)
    def at(j):
        return j + (j >> 5) if pad else j

    @cuda.jit(device=True, inline=True)
    def pack(flag, v):
        return (uint64(flag) << uint64(32)) | (uint64(libdevice.float_as_int(v)) & uint64(FULL))

    @cuda.jit
    def scan(x, y, words, words_f, counter):
        tile = cuda.shared.array(WORDS, float32)
        part = cuda.shared.array(1, float32)          # unused by the shuffle block scan
        warp_totals = cuda.shared.array(32, float32)
        ticket = cuda.shared.array(1, int32)
        carry_s = cuda.shared.array(1, float32)
        t = cuda.threadIdx.x
        if t == 0:
            ticket[0] = cuda.atomic.add(counter, 0, 1)
        cuda.syncthreads()
        b = ticket[0]
        start = b * TILE
        n = x.size
        if start + TILE <= n:
            for k in range(C):
                j = k * T + t
                tile[at(j)] = x[start + j]
        else:
            for k in range(C):
                j = k * T + t
                tile[at(j)] = x[start + j] if start + j < n else float32(0)
        cuda.syncthreads()
        vals = cuda.local.array(C, float32)
        running = float32(0)
        first = t * C
        for k in range(C):
            running += tile[at(first + k)]
            vals[k] = running
        # the thread totals scanned by the course's warp-shuffle block scan (chapter 11's)
        before, total = block_scan(running, part, warp_totals, t, T)
        if t < 32:
            lane = t
            if lane == 0:
                if b == 0:
                    cuda.atomic.exch(words, 0, pack(PREFIX, total))
                else:
                    cuda.atomic.exch(words, b, pack(AGGREGATE, total))
            # look-back by warp 0: lane k reads tile end-1-k; one 64-bit load per word
            carry = float32(0)
            end = b
            done = b == 0
            while not done:
                j = end - 1 - lane
                flag = PREFIX            # before tile 0: nothing, as if a prefix of 0
                value = float32(0)
                if j >= 0:
                    bits = libdevice.double_as_longlong(cuda.atomic.max(words_f, j, NEG_INF64))
                    flag = int32(bits >> 32)
                    value = libdevice.int_as_float(int32(bits & 0xFFFFFFFF))
                not_ready = cuda.ballot_sync(FULL, flag == NOT_READY)
                prefix = cuda.ballot_sync(FULL, flag == PREFIX)
                # the lanes up to the nearest prefix count, if none before it is not ready
                first_nr = cuda.ffs(not_ready)          # 1-based; 0: none
                first_p = cuda.ffs(prefix)
                if first_p != 0 and (first_nr == 0 or first_p < first_nr):
                    upto = first_p
                    done = True
                elif first_nr != 0:
                    upto = first_nr - 1                 # the ready lanes before it
                else:
                    upto = 32
                part_sum = value if lane < upto else float32(0)
                d = 16
                while d > 0:
                    part_sum += cuda.shfl_down_sync(FULL, part_sum, d)
                    d //= 2
                carry += cuda.shfl_sync(FULL, part_sum, 0)
                end -= upto
            if lane == 0:
                carry_s[0] = carry
                if b > 0:
                    cuda.atomic.exch(words, b, pack(PREFIX, carry + total))
        cuda.syncthreads()
        before += carry_s[0]
        for k in range(C):
            tile[at(first + k)] = vals[k] + before
        cuda.syncthreads()
        if start + TILE <= n:
            for k in range(C):
                j = k * T + t
                y[start + j] = tile[at(j)]
        else:
            for k in range(C):
                j = k * T + t
                if start + j < n:
                    y[start + j] = tile[at(j)]

    @cuda.jit
    def zero(words, counter):
        i = cuda.grid(1)
        if i < words.size:
            words[i] = uint64(0)
        if i == 0:
            counter[0] = 0

    state = {}

    def run(x, y):
        tiles = (x.size + TILE - 1) // TILE
        if state.get("tiles") != tiles:
            state["words"] = cuda.device_array(tiles, np.uint64)
            state["words_f"] = state["words"].view(np.float64)
            state["counter"] = cuda.device_array(1, np.int32)
            state["tiles"] = tiles
        zero[(tiles + 255) // 256, 256](state["words"], state["counter"])
        scan[tiles, T](x, y, state["words"], state["words_f"], state["counter"])
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
    ref_kernel = ref.reference_single_pass()
    add("course reference (status + 2 values, atomics)",
        lambda: specs.single_pass_scan(ref_kernel, x, y, specs.SPEED_THREADS))
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
