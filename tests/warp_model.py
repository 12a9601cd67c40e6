"""A pure-Python model of CUDA's warp intrinsics, at any warp size, for tests/test_warp.py.

No threads and nothing of the simulator: each function takes what the lanes of one warp brought to
one call and returns what each lane gets. The semantics are the PTX ISA's (``shfl.sync``,
``vote.sync``, ``match.sync``, ``bar.warp.sync``, ``activemask``) as Numba emits them, widened from
32 lanes to ``W``:

- ``shfl.sync``: ``bval = b mod W`` (PTX's ``b[4:0]``), Numba's control operand (clamp ``W-1``,
  or 0 for ``up``, no segment mask), the pseudo-code's ``maxLane``/``minLane``/``pval``; a lane
  whose ``pval`` is false reads itself; reading a lane that did not take part is undefined
  (:data:`UNDEFINED`).
- votes and matches: over the lanes that take part (the mask's non-exited lanes).
- ``activemask``: the lanes that reach the call together (who that is, is for the caller to say:
  the lanes of an ``if`` arm, of a loop iteration, those still alive).
"""

from __future__ import annotations

UNDEFINED = None
SHFL_MODES = ("idx", "up", "down", "bfly")     # Numba's shfl_sync, shfl_up_sync, ... in order


def numba_control(mode: str, W: int) -> int:
    """Numba's ``c`` operand: clamp in the low bits, segment mask in the next byte (always 0)."""
    return 0 if mode == "up" else W - 1


def shfl_source(mode: str, lane: int, b: int, W: int, c: int | None = None) -> tuple[int, bool]:
    """PTX shfl.sync: the lane to read and ``pval`` (false: the lane reads itself)."""
    c = numba_control(mode, W) if c is None else c
    low = W - 1
    bval = b & low
    cval = c & low
    segmask = (c >> 8) & low
    max_lane = (lane & segmask) | (cval & ~segmask & low)
    min_lane = lane & segmask
    if mode == "up":
        j = lane - bval
        pval = j >= max_lane
    elif mode == "down":
        j = lane + bval
        pval = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        pval = j <= max_lane
    else:
        j = min_lane | (bval & ~segmask & low)
        pval = j <= max_lane
    return (j if pval else lane), pval


def shfl(mode: str, W: int, calls: dict[int, tuple[object, int]]) -> dict[int, object]:
    """``calls``: lane -> (value, b) for the lanes that take part. Returns lane -> value read (or
    UNDEFINED)."""
    out = {}
    for lane, (value, b) in calls.items():
        j, _ = shfl_source(mode, lane, b, W)
        out[lane] = calls[j][0] if j in calls else UNDEFINED
    return out


def signed(x: int, W: int) -> int:
    x &= (1 << W) - 1
    return x - (1 << W) if x >> (W - 1) else x


def bits(lanes) -> int:
    return sum(1 << lane for lane in lanes)


def ballot(W: int, preds: dict[int, bool]) -> int:
    """Numba's ballot_sync: a signed warp-width int (int32 at 32)."""
    return signed(bits(lane for lane, p in preds.items() if p), W)


def all_(preds: dict[int, bool]) -> bool:
    return all(preds.values())


def any_(preds: dict[int, bool]) -> bool:
    return any(preds.values())


def eq(preds: dict[int, bool]) -> bool:
    return len({bool(p) for p in preds.values()}) <= 1


def match_any(W: int, keys: dict[int, int]) -> dict[int, int]:
    """``keys``: lane -> the value's bits. Each lane gets the lanes holding the same bits."""
    return {lane: signed(bits(q for q, k in keys.items() if k == key), W)
            for lane, key in keys.items()}


def match_all(W: int, keys: dict[int, int]) -> tuple[int, bool]:
    same = len(set(keys.values())) <= 1
    return (signed(bits(keys), W) if same else 0), same


def activemask(lanes) -> int:
    """Unsigned: the lanes that reach the call together."""
    return bits(lanes)


def lanemask_lt(lane: int) -> int:
    return (1 << lane) - 1
