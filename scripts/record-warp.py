#!/usr/bin/env python3
"""Record what a GPU's warp intrinsics give, for the tests of CPU mode's (tests/test_warp.py).

On an NVIDIA GPU (numba-cuda, no simulator; well under a minute):

    python3 scripts/record-warp.py --out tests/fixtures/warp-h200.json

Here, in CPU mode (how this script is debugged, and what the tests replay):

    NUMBA_ENABLE_CUDASIM=1 .venv/bin/python scripts/record-warp.py --out /tmp/warp-sim.json

Seeded random cases for every warp intrinsic Numba has (``shfl_sync``, ``shfl_up_sync``,
``shfl_down_sync``, ``shfl_xor_sync`` on int32/int64/float32/float64 with NaN, -0.0, big int64;
``ballot_sync``, ``all_sync``, ``any_sync``, ``eq_sync``, ``match_any_sync``, ``match_all_sync``,
``syncwarp``, ``activemask``, ``lanemask_lt``, ``laneid``, ``warpsize``), in 1-, 2- and 3-D blocks
(the warp is the linear thread index // warpsize), blocks that end in a partial warp, random masks
where only the lanes in a mask make the call (the others take another branch), and
``activemask()`` in divergent branches, loops and after early exits. Each case holds its inputs
and every thread's outputs, and a class per output: ``D`` defined by CUDA's documentation, ``O``
what this GPU's convergence gave (``activemask`` under divergence: not promised by CUDA, but what
CPU mode imitates), ``U`` undefined (a shuffle read from a lane that did not take part), ``-`` no
result (the thread did not make the call).

Hazards run in a child process, one at a time with a deadline, because CUDA leaves them undefined
and a GPU might hang: a full mask in a block whose last warp is partial, a full mask after some
lanes have exited, a mask that leaves out the calling lane. Their outcome (or "hung") is recorded
as information; only what PTX defines there is tested.

The tests import this file: :func:`make_cases` (the same seeded cases at any warp size),
:func:`run_case` (launch one case and return its outputs) and :func:`classify`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "tests" / "fixtures" / "warp-h200.json"
SEED = 20261130
SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"
os.environ.setdefault("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "0")    # the arrays go both ways
os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")   # small blocks on purpose

if SIMULATOR and "numba.cuda" not in sys.modules:     # CPU mode: the course's simulator extensions
    sys.path.insert(0, str(REPO))
    import autograder  # noqa: E402,F401  (picks CPU mode and installs it)
    from autograder import cpu_mode  # noqa: E402
    cpu_mode.install(cpu_mode.warp_size())

from numba import cuda, int64  # noqa: E402

MODES = ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync")
DTYPES = ("int32", "int64", "float32", "float64")
LOOP_TRIPS = 4            # most iterations of the activemask loop kernel
SHARED = 512              # most threads per block in any case


# -- kernels ---------------------------------------------------------------------------------------
# Every kernel computes the thread's linear index in its block (t) and in the launch (g); inputs
# and outputs are flat, one element per thread of the launch.

@cuda.jit
def k_shfl(mode, role, mask, val, arg, out, lane):
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    lane[g] = cuda.laneid
    if role[g] != 0:
        m = mask[g]
        v = val[g]
        a = arg[g]
        if mode == 0:
            r = cuda.shfl_sync(m, v, a)
        elif mode == 1:
            r = cuda.shfl_up_sync(m, v, a)
        elif mode == 2:
            r = cuda.shfl_down_sync(m, v, a)
        else:
            r = cuda.shfl_xor_sync(m, v, a)
        out[g] = r


@cuda.jit
def k_vote(role, mask, pred, ballot, all_, any_, eq):
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    if role[g] != 0:
        m = mask[g]
        p = pred[g]
        ballot[g] = cuda.ballot_sync(m, p)
        all_[g] = cuda.all_sync(m, p)
        any_[g] = cuda.any_sync(m, p)
        eq[g] = cuda.eq_sync(m, p)


@cuda.jit
def k_match(role, mask, val, any_, all_mask, all_pred):
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    if role[g] != 0:
        m = mask[g]
        v = val[g]
        any_[g] = cuda.match_any_sync(m, v)
        r = cuda.match_all_sync(m, v)
        all_mask[g] = r[0]
        all_pred[g] = r[1]


@cuda.jit
def k_lanes(role, mask, val, arg, lane, lt, ws, got):
    # laneid, lanemask_lt and warpsize for every thread; the callers also publish a value in
    # shared memory, syncwarp() with their group, and read a partner's (ordered by syncwarp).
    s = cuda.shared.array(SHARED, int64)
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    lane[g] = cuda.laneid
    lt[g] = cuda.lanemask_lt()
    ws[g] = cuda.warpsize
    if role[g] != 0:
        s[t] = val[g]
        cuda.syncwarp(mask[g])
        got[g] = s[arg[g]]


@cuda.jit
def k_branch(sel, spin, arm_a, arm_b, after, work):
    # activemask() in both arms of an if (each arm with a loop, so that the compiler branches
    # instead of predicating) and after it.
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    acc = 0
    if sel[g] != 0:
        for k in range(spin[g]):
            acc += k + 1
        arm_a[g] = cuda.activemask()
    else:
        for k in range(spin[g]):
            acc = acc * 3 + k
        arm_b[g] = cuda.activemask()
    after[g] = cuda.activemask()
    work[g] = acc


@cuda.jit
def k_ballot_branch(sel, pred, spin, active, ballot, work):
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    acc = 0
    if sel[g] != 0:
        for k in range(spin[g]):
            acc += k + 1
        m = cuda.activemask()
        active[g] = m
        ballot[g] = cuda.ballot_sync(m, pred[g])
    work[g] = acc


@cuda.jit
def k_exit(alive, pred, active, ballot):
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    if alive[g] == 0:
        return
    m = cuda.activemask()
    active[g] = m
    ballot[g] = cuda.ballot_sync(m, pred[g])


@cuda.jit
def k_loop(trips, inside, after):
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    for i in range(trips[g]):
        inside[g * LOOP_TRIPS + i] = cuda.activemask()
    after[g] = cuda.activemask()


@cuda.jit
def k_nested(a, c, spin, inner, outer, after, work):
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    acc = 0
    if a[g] != 0:
        for k in range(spin[g]):
            acc += k + 1
        if c[g] != 0:
            for k in range(spin[g]):
                acc = acc * 5 + k
            inner[g] = cuda.activemask()
        outer[g] = cuda.activemask()
    after[g] = cuda.activemask()
    work[g] = acc


@cuda.jit
def k_full(full, role, val, down_by, src, down, idx, ballot, active):
    # Hazards: the same full mask for every lane, after some lanes exited (role 0) or in a block
    # whose last warp is partial.
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    g = b * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + t
    if role[g] == 0:
        return
    v = val[g]
    down[g] = cuda.shfl_down_sync(full, v, down_by[g])
    idx[g] = cuda.shfl_sync(full, v, src[g])
    ballot[g] = cuda.ballot_sync(full, 1)
    active[g] = cuda.activemask()


# name -> (kernel, inputs, outputs, scalar arguments before the arrays). "val" is the case's
# dtype; outputs are filled with FILL before the launch (a thread that does not write keeps it).
KERNELS = {
    "shfl": (k_shfl, {"role": "int32", "mask": "uint64", "val": "val", "arg": "int64"},
             {"out": "val", "lane": "int64"}, ("mode",)),
    "vote": (k_vote, {"role": "int32", "mask": "uint64", "pred": "int32"},
             {"ballot": "int64", "all": "int64", "any": "int64", "eq": "int64"}, ()),
    "match": (k_match, {"role": "int32", "mask": "uint64", "val": "val"},
              {"any": "int64", "all_mask": "int64", "all_pred": "int64"}, ()),
    "lanes": (k_lanes, {"role": "int32", "mask": "uint64", "val": "int64", "arg": "int64"},
              {"lane": "int64", "lt": "uint64", "ws": "int64", "got": "int64"}, ()),
    "branch": (k_branch, {"sel": "int32", "spin": "int32"},
               {"arm_a": "uint64", "arm_b": "uint64", "after": "uint64", "work": "int64"}, ()),
    "ballot_branch": (k_ballot_branch, {"sel": "int32", "pred": "int32", "spin": "int32"},
                      {"active": "uint64", "ballot": "int64", "work": "int64"}, ()),
    "exit": (k_exit, {"alive": "int32", "pred": "int32"}, {"active": "uint64", "ballot": "int64"},
             ()),
    "loop": (k_loop, {"trips": "int32"}, {"inside": "uint64", "after": "uint64"}, ()),
    "nested": (k_nested, {"a": "int32", "c": "int32", "spin": "int32"},
               {"inner": "uint64", "outer": "uint64", "after": "uint64", "work": "int64"}, ()),
    "full": (k_full, {"role": "int32", "val": "val", "down_by": "int64", "src": "int64"},
             {"down": "val", "idx": "val", "ballot": "int64", "active": "uint64"}, ("full",)),
}
# (activemask and lanemask_lt are unsigned: uint64 outputs hold them at warp size 64 too; ballot
# and match are signed, as Numba's int32.)
FILL = -0x0F0F0F0F          # what an output holds where no thread wrote (its bits, for floats)
PER_THREAD = {"inside": LOOP_TRIPS}      # outputs with several elements per thread


# -- encoding --------------------------------------------------------------------------------------

def _uint(dtype: np.dtype) -> str:
    return f"<u{np.dtype(dtype).itemsize}"


def encode(a: np.ndarray) -> list[int]:
    """Array -> list of ints (floats by their bits, so NaN payloads and -0.0 survive JSON)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "f":
        a = a.view(_uint(a.dtype))
    return [int(x) for x in a.tolist()]


def decode(values: list[int], dtype: str) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.array(values, dtype=_uint(dtype)).view(dtype)
    if dtype.kind == "u":
        return np.array(values, dtype=np.uint64).astype(dtype)
    return np.array(values, dtype=np.int64).astype(dtype)


def _dtype(case: dict, spec: str) -> str:
    return case["dtype"] if spec == "val" else spec


# -- cases ---------------------------------------------------------------------------------------

def _values(rng, dtype: str, n: int) -> np.ndarray:
    """Random values of ``dtype``, with the awkward ones mixed in."""
    if dtype in ("int32", "int64"):
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dtype)
        small = rng.integers(-1000, 1000, size=n).astype(dtype)
        v = np.where(rng.random(n) < 0.5, small, v)
        special = np.array([info.min, info.max, 0, -1, 1], dtype=dtype)
    else:
        v = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 6, size=n)).astype(dtype)
        bits = _uint(dtype)
        odd_nan = np.array(0x7FC12345 if dtype == "float32" else 0x7FF8123456789ABC,
                           dtype=bits).view(dtype)
        neg_nan = np.array(0xFFC00001 if dtype == "float32" else 0xFFF0000000000001,
                           dtype=bits).view(dtype)
        tiny = np.finfo(dtype).smallest_subnormal
        special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, odd_nan, neg_nan, tiny,
                            np.finfo(dtype).max], dtype=dtype)
    pick = rng.random(n) < 0.2
    v[pick] = rng.choice(special, size=int(pick.sum()))
    return v


def _shape(rng, W: int):
    """A block shape: 1-, 2- or 3-D, often ending in a partial warp, at most 3.5 warps."""
    n = int(rng.choice([W, 2 * W, W + W // 2, 3 * W + 3, int(rng.integers(1, 3 * W + 1)), 5]))
    dims = int(rng.choice([1, 1, 2, 3]))
    if dims == 1 or n < 4:
        return (n,)
    if dims == 2:
        x = int(rng.choice([d for d in range(1, n + 1) if n % d == 0 and d <= W] or [1]))
        return (x, n // x)
    x = int(rng.choice([1, 2, 3, 4, 5, 8]))
    y = int(rng.choice([1, 2, 3, 4]))
    z = max(1, n // (x * y))
    return (x, y, z)


def _threads(case: dict) -> tuple[int, int]:
    per_block = int(np.prod(case["block"]))
    return per_block, per_block * int(np.prod(case["grid"]))


def _groups(rng, n_lanes: int, W: int, p_call: float):
    """Callers of one warp and their masks: lanes call with probability p_call and are split into
    1-3 groups, each lane's mask naming exactly its group."""
    call = rng.random(n_lanes) < p_call
    lanes = np.flatnonzero(call)
    masks = np.zeros(n_lanes, dtype=np.uint64)
    if len(lanes):
        k = int(rng.choice([1, 1, 2, 3]))
        if rng.random() < 0.5:
            label = rng.integers(0, k, size=len(lanes))           # interleaved groups
        else:
            label = np.minimum(np.arange(len(lanes)) * k // max(len(lanes), 1), k - 1)
        for group in range(k):
            members = lanes[label == group]
            bits = 0
            for lane in members:
                bits |= 1 << int(lane)
            masks[members] = np.uint64(bits)
    return call.astype(np.int32), masks


def _roles_and_masks(rng, case: dict, W: int):
    per_block, total = _threads(case)
    role = np.zeros(total, np.int32)
    mask = np.zeros(total, np.uint64)
    p_call = float(rng.choice([1.0, 1.0, 0.85, 0.5, 0.2]))
    for start in range(0, total, per_block):
        for w0 in range(0, per_block, W):
            n = min(W, per_block - w0)
            r, m = _groups(rng, n, W, p_call)
            role[start + w0:start + w0 + n] = r
            mask[start + w0:start + w0 + n] = m
    return role, mask


def make_cases(seed: int = SEED, warp_size: int = 32, scale: float = 1.0) -> list[dict]:
    """The seeded cases (inputs only). ``scale`` multiplies how many of each kind."""
    rng = np.random.default_rng(seed)
    W = warp_size
    cases: list[dict] = []

    def count(k):
        return max(1, int(round(k * scale)))

    def new(kernel, **extra):
        block = _shape(rng, W)
        grid = (1,) if rng.random() < 0.75 else (2,)
        case = {"id": f"{kernel}-{len(cases):03d}", "kernel": kernel, "warp_size": W,
                "grid": list(grid), "block": list(block), **extra}
        cases.append(case)
        return case

    for mode in range(4):
        for dtype in DTYPES:
            for _ in range(count(4)):
                case = new("shfl", mode=mode, dtype=dtype)
                _, total = _threads(case)
                role, mask = _roles_and_masks(rng, case, W)
                top = {0: 2 * W, 1: W + W // 4 + 1, 2: W + W // 4 + 1, 3: 2 * W}[mode]
                if rng.random() < 0.5:
                    arg = np.full(total, int(rng.integers(0, top)), np.int64)   # one offset
                else:
                    arg = rng.integers(0, top, size=total).astype(np.int64)
                    if mode in (0, 3):      # half the lanes read inside their group (+0 or +W)
                        for g in np.flatnonzero((rng.random(total) < 0.5) & (role != 0)):
                            members = [b for b in range(W) if (int(mask[g]) >> b) & 1]
                            j = int(rng.choice(members))
                            lane = (g % int(np.prod(case["block"]))) % W
                            arg[g] = (j if mode == 0 else j ^ lane) + W * int(rng.integers(0, 2))
                case["inputs"] = {"role": role, "mask": mask, "val": _values(rng, dtype, total),
                                  "arg": arg}
    for _ in range(count(14)):
        case = new("vote")
        _, total = _threads(case)
        role, mask = _roles_and_masks(rng, case, W)
        p = float(rng.choice([0.0, 0.1, 0.5, 0.9, 1.0]))
        pred = np.where(rng.random(total) < p, rng.choice([1, 7, -3], size=total), 0)
        case["inputs"] = {"role": role, "mask": mask, "pred": pred.astype(np.int32)}
    for dtype in DTYPES:
        for _ in range(count(4)):
            case = new("match", dtype=dtype)
            _, total = _threads(case)
            role, mask = _roles_and_masks(rng, case, W)
            pool = _values(rng, dtype, int(rng.integers(1, 4)))
            if dtype.startswith("float") and rng.random() < 0.5:
                pool = np.concatenate([pool, np.array([0.0, -0.0, np.nan], dtype)])
            case["inputs"] = {"role": role, "mask": mask, "val": rng.choice(pool, size=total)}
    for _ in range(count(10)):
        case = new("lanes")
        per_block, total = _threads(case)
        role, mask = _roles_and_masks(rng, case, W)
        arg = np.zeros(total, np.int64)
        for g in range(total):            # a partner in the same group (itself if alone)
            if role[g]:
                members = [lane for lane in range(W) if (int(mask[g]) >> lane) & 1]
                t = g % per_block
                arg[g] = t - t % W + int(rng.choice(members))
        case["inputs"] = {"role": role, "mask": mask,
                          "val": rng.integers(-10**12, 10**12, size=total), "arg": arg}

    def selection(total):
        p = float(rng.choice([0.0, 0.3, 0.5, 0.8, 1.0]))
        if rng.random() < 0.3:                              # contiguous: lanes below a cut
            cut = int(rng.integers(0, W + 1))
            return np.array([(g % W) < cut for g in range(total)], np.int32)
        return (rng.random(total) < p).astype(np.int32)

    for _ in range(count(6)):
        case = new("branch")
        _, total = _threads(case)
        case["inputs"] = {"sel": selection(total),
                          "spin": rng.integers(1, 4, size=total).astype(np.int32)}
    for _ in range(count(5)):
        case = new("ballot_branch")
        _, total = _threads(case)
        case["inputs"] = {"sel": selection(total),
                          "pred": (rng.random(total) < 0.5).astype(np.int32),
                          "spin": rng.integers(1, 4, size=total).astype(np.int32)}
    for _ in range(count(5)):
        case = new("exit")
        _, total = _threads(case)
        case["inputs"] = {"alive": selection(total),
                          "pred": (rng.random(total) < 0.6).astype(np.int32)}
    for _ in range(count(5)):
        case = new("loop")
        _, total = _threads(case)
        case["inputs"] = {"trips": rng.integers(0, LOOP_TRIPS + 1, size=total).astype(np.int32)}
    for _ in range(count(5)):
        case = new("nested")
        _, total = _threads(case)
        case["inputs"] = {"a": selection(total), "c": selection(total),
                          "spin": rng.integers(1, 3, size=total).astype(np.int32)}
    return cases


def make_hazards(seed: int = SEED, warp_size: int = 32) -> list[dict]:
    """Cases CUDA leaves (partly) undefined, run apart on a GPU in case one hangs."""
    rng = np.random.default_rng(seed + 1)
    W = warp_size
    full = (1 << W) - 1
    hazards = []
    for name, block, dtype in (("partial", (W + W // 2,), "float32"),
                               ("partial", (W + 5,), "int32"),
                               ("partial", (3, 13), "float64"),
                               ("exited", (2 * W,), "float32"),
                               ("exited", (W,), "int64")):
        total = int(np.prod(block))
        role = np.ones(total, np.int32)
        if name == "exited":
            role = (rng.random(total) < 0.7).astype(np.int32)
        hazards.append({"id": f"hazard-{name}-{len(hazards)}", "kernel": "full", "hazard": name,
                        "warp_size": W, "grid": [1], "block": list(block), "dtype": dtype,
                        "full": full,
                        "inputs": {"role": role, "val": _values(rng, dtype, total),
                                   "down_by": rng.integers(0, W, size=total).astype(np.int64),
                                   "src": rng.integers(0, W, size=total).astype(np.int64)}})
    # A mask that leaves out the calling lane (every lane calls; lane `k` is not in the mask).
    k = int(rng.integers(0, W))
    total = W
    hazards.append({"id": f"hazard-self-{len(hazards)}", "kernel": "shfl", "hazard": "self",
                    "warp_size": W, "grid": [1], "block": [W], "dtype": "int32", "mode": 0,
                    "left_out": k,
                    "inputs": {"role": np.ones(total, np.int32),
                               "mask": np.full(total, full & ~(1 << k), np.uint64),
                               "val": np.arange(100, 100 + total, dtype=np.int32),
                               "arg": rng.integers(0, W, size=total).astype(np.int64)}})
    return hazards


# -- running ---------------------------------------------------------------------------------------

def run_case(case: dict) -> dict[str, np.ndarray]:
    """Launch one case (on the GPU, or in CPU mode at the current warp size) and return its
    outputs."""
    kernel, inputs, outputs, scalars = KERNELS[case["kernel"]]
    _, total = _threads(case)
    args = [case[name] for name in scalars]
    for name, spec in inputs.items():
        value = case["inputs"][name]
        args.append(value if isinstance(value, np.ndarray) else decode(value, _dtype(case, spec)))
    outs = {}
    for name, spec in outputs.items():
        dtype = np.dtype(_dtype(case, spec))
        size = total * PER_THREAD.get(name, 1)
        fill = FILL & ((1 << (8 * dtype.itemsize)) - 1)
        outs[name] = np.full(size, fill, _uint(dtype)).view(dtype)
        args.append(outs[name])
    kernel[tuple(case["grid"]), tuple(case["block"])](*args)
    if not SIMULATOR:
        cuda.synchronize()
    return outs


# -- what CUDA defines -----------------------------------------------------------------------------

def source_lane(mode: int, lane: int, b: int, W: int) -> int:
    """PTX shfl.sync's source lane with Numba's operands (clamp W-1, 0 for up; no segments)."""
    bval = b & (W - 1)
    if mode == 0:
        return bval
    if mode == 1:
        return lane - bval if lane - bval >= 0 else lane
    if mode == 2:
        return lane + bval if lane + bval <= W - 1 else lane
    return lane ^ bval


def classify(case: dict) -> dict[str, str]:
    """Per output, one letter per element: D defined by CUDA, O this GPU's convergence (activemask
    under divergence), U undefined, - no result."""
    per_block, total = _threads(case)
    W = case["warp_size"]
    kernel = case["kernel"]
    inputs = {k: (v if isinstance(v, np.ndarray) else np.array(v, dtype=object))
              for k, v in case["inputs"].items()}
    _, _, outputs, _ = KERNELS[kernel]

    def where(g):                       # (first thread of the warp, lane, lanes in the warp)
        t = g % per_block
        first = g - t + t - t % W
        return first, t % W, min(W, per_block - (t - t % W))

    classes = {}
    for name in outputs:
        letters = []
        for g in range(total):
            first, lane, n = where(g)
            if kernel in ("shfl", "vote", "match", "lanes"):
                caller = int(inputs["role"][g]) != 0
                if name in ("lane", "lt", "ws"):
                    letters.append("D")
                    continue
                if not caller:
                    letters.append("-")
                    continue
                mask = int(inputs["mask"][g])
                if case.get("hazard") == "self":
                    letters.append("U")
                    continue
                if kernel == "shfl":
                    j = source_lane(case["mode"], lane, int(inputs["arg"][g]), W)
                    ok = j == lane or (j < n and (mask >> j) & 1 and int(inputs["role"][first + j])
                                       and int(inputs["mask"][first + j]) == mask)
                    letters.append("D" if ok else "U")
                else:
                    letters.append("D")
            elif kernel == "full":
                if int(inputs["role"][g]) == 0:
                    letters.append("-")
                elif name in ("down", "idx"):
                    arg = inputs["down_by" if name == "down" else "src"][g]
                    j = source_lane(2 if name == "down" else 0, lane, int(arg), W)
                    ok = j == lane or (j < n and int(inputs["role"][first + j]))
                    letters.append("D" if ok else "U")
                elif name == "ballot":
                    letters.append("D")        # PTX: the non-exited lanes of the mask
                else:
                    letters.append("O")
            elif name == "work":
                letters.append("D")
            elif name == "inside":
                trips = int(inputs["trips"][g])
                letters.extend("O" if i < trips else "-" for i in range(LOOP_TRIPS))
            else:
                reached = {"arm_a": lambda: int(inputs["sel"][g]) != 0,
                           "arm_b": lambda: int(inputs["sel"][g]) == 0,
                           "active": lambda: int(inputs.get("sel", inputs.get("alive"))[g]) != 0,
                           "ballot": lambda: int(inputs.get("sel", inputs.get("alive"))[g]) != 0,
                           "inner": lambda: int(inputs["a"][g]) != 0 and int(inputs["c"][g]) != 0,
                           "outer": lambda: int(inputs["a"][g]) != 0,
                           "after": lambda: kernel != "exit" or int(inputs["alive"][g]) != 0,
                           }[name]()
                letters.append("O" if reached else "-")
        classes[name] = "".join(letters)
    return classes


def _jsonable(case: dict) -> dict:
    out = {k: v for k, v in case.items() if k != "inputs"}
    out["inputs"] = {}
    _, inputs, _, _ = KERNELS[case["kernel"]]
    for name, spec in inputs.items():
        value = case["inputs"][name]
        out["inputs"][name] = encode(np.asarray(value, dtype=_dtype(case, spec)))
    return out


def record(case: dict) -> dict:
    entry = _jsonable(case)
    try:
        outs = run_case(case)
        entry["outputs"] = {k: encode(v) for k, v in outs.items()}
    except Exception as exc:        # CPU mode refuses some hazards: record what it said
        entry["error"] = f"{type(exc).__name__}: {exc}"
    entry["classes"] = classify(case)
    return entry


def meta() -> dict:
    import numba
    info = {"simulator": SIMULATOR, "python": platform.python_version(), "numpy": np.__version__,
            "numba": numba.__version__, "platform": platform.platform(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "seed": SEED}
    try:
        from importlib.metadata import version
        info["numba_cuda"] = version("numba-cuda")
    except Exception:
        info["numba_cuda"] = None
    if SIMULATOR:
        from autograder import cpu_mode
        info["device"] = f"CPU mode (CUDA simulator), warp size {cpu_mode.warp_size()}"
        return info
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    info.update(device=name, compute_capability=list(dev.compute_capability))
    try:
        info["driver"] = ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
        info["runtime"] = ".".join(map(str, cuda.runtime.get_version()))
    except Exception as exc:
        info["driver"] = f"unknown ({exc})"
    return info


# -- hazards in a child process --------------------------------------------------------------------

def _child(ids: list[str], seed: int) -> None:
    hazards = {h["id"]: h for h in make_hazards(seed)}
    for hid in ids:
        print("BEGIN " + hid, flush=True)
        if os.environ.get("RECORD_WARP_HANG") == hid:     # to test the deadline, nothing else
            time.sleep(3600)
        print("DONE " + json.dumps(record(hazards[hid])), flush=True)


def run_hazards(seed: int, deadline: float) -> list[dict]:
    """Each hazard in a child process; one that does not finish within ``deadline`` seconds
    (compiling included) is recorded as hung and the child is killed."""
    hazards = make_hazards(seed)
    if SIMULATOR:                  # nothing can hang in CPU mode: it raises instead
        return [record(h) for h in hazards]
    results, left = [], [h["id"] for h in hazards]
    by_id = {h["id"]: h for h in hazards}
    while left:
        child = subprocess.Popen([sys.executable, __file__, "--child", ",".join(left),
                                  "--seed", str(seed)], stdout=subprocess.PIPE, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in child.stdout] + [lines.put(None)],
                         daemon=True).start()
        current, until = None, time.monotonic() + deadline + 15      # start-up
        while left:
            try:
                line = lines.get(timeout=max(0.1, until - time.monotonic()))
            except queue.Empty:
                line = "TIMEOUT"
            if line is None or line == "TIMEOUT":
                hid = current or left[0]
                what = "hung" if line == "TIMEOUT" else "child died"
                print(f"hazard {hid}: {what}", flush=True)
                entry = _jsonable(by_id[hid])
                entry.update(hung=line == "TIMEOUT", error=what, classes=classify(by_id[hid]))
                results.append(entry)
                left.remove(hid)
                child.kill()
                child.wait()
                break
            if line.startswith("BEGIN "):
                current, until = line.split()[1], time.monotonic() + deadline
            elif line.startswith("DONE "):
                entry = json.loads(line[5:])
                results.append(entry)
                left.remove(entry["id"])
                print(f"hazard {entry['id']}: done", flush=True)
                current, until = None, time.monotonic() + deadline
        else:
            child.wait()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--no-hazards", action="store_true")
    parser.add_argument("--hazard-deadline", type=float, default=20.0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child.split(","), args.seed)
        return
    start = time.monotonic()
    cases = make_cases(args.seed)
    entries = []
    for i, case in enumerate(cases):
        entries.append(record(case))
        if (i + 1) % 25 == 0:
            print(f"{i + 1}/{len(cases)} cases, {time.monotonic() - start:.1f} s", flush=True)
    hazards = [] if args.no_hazards else run_hazards(args.seed, args.hazard_deadline)
    doc = {"about": "warp intrinsics recorded by scripts/record-warp.py; classes: D defined by "
                    "CUDA, O this device's convergence (activemask), U undefined, - no result",
           "meta": meta(), "seconds": round(time.monotonic() - start, 1),
           "cases": entries, "hazards": hazards}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB): {len(entries)} cases, "
          f"{len(hazards)} hazards, {doc['seconds']} s", flush=True)


if __name__ == "__main__":
    main()
