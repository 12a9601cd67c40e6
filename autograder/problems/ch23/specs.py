"""Chapter 23's graded review questions, each a function of a few numbers judged on 200 hidden,
seeded cases (``kit.formula``): the shared-memory banks a warp's access falls into (23.1), the
bytes a GPU must keep in flight to stream at its bandwidth and what that asks of each thread
(23.2), and the traffic of three ways to write a softmax, the first kernel of the track that
follows the book (23.3)."""

from __future__ import annotations

import numpy as np

from autograder.grading.problem import Sizes
from autograder.problems.kit.formula import formula_problem

U64 = 2.0 ** -53
BANKS = 32          # shared-memory banks of 4-byte words (NVIDIA since Fermi; AMD's LDS too)
WARP = 32


# ---- 23.1 banks: how many ways does a warp's shared-memory access conflict? ----------------------

def bank_ways(width: int, x_step: int, y_step: int) -> int:
    """The ways of the bank conflict when the 32 threads of one warp, laid out as a block of
    ``width`` threads a row (thread t is (t % width, t // width)), each read the 4-byte word
    ``tx · x_step + ty · y_step`` of a shared array: the most *distinct* words any one bank is
    asked for (threads reading the same word share it: a broadcast)."""
    words = {(t % width) * x_step + (t // width) * y_step for t in range(WARP)}
    per_bank: dict[int, int] = {}
    for w in words:
        per_bank[w % BANKS] = per_bank.get(w % BANKS, 0) + 1
    return max(per_bank.values())


def _banks_spec(width, x_step, y_step):
    return {"ways": np.array([bank_ways(int(w), int(x), int(y))
                              for w, x, y in zip(width, x_step, y_step)], np.float64)}


def _banks_inputs(rng, count):
    width = rng.choice([1, 2, 4, 8, 16, 32], count)
    x_step = rng.integers(0, 80, count)
    y_step = rng.integers(0, 160, count)
    # Half the random cases on the strides tiles use: multiples of 8, 16 or 32, padded by one or
    # not, where the answer is far from 1.
    tiles = rng.random(count) < 0.5
    x_step[tiles] = rng.choice([1, 2, 4, 8, 16, 32, 33, 64, 65], tiles.sum())
    y_step[tiles] = rng.choice([8, 9, 16, 17, 32, 33, 64, 65, 128, 129], tiles.sum())
    # The cases the notebook explains first: a row of a 32 × 32 tile (1 way), its column (32),
    # the column of a padded tile (33 words a row: 1), a float2 array read as words 2t (2), every
    # thread on one word (a broadcast: 1), and a 16 × 2 block over rows of 32 words (2) and of 33
    # (1), and 8 × 4 over rows of 16 (2).
    first = [(32, 1, 0), (32, 32, 0), (32, 33, 0), (32, 2, 0), (32, 0, 0), (16, 1, 32),
             (16, 1, 33), (8, 1, 16)]
    k = min(count, len(first))
    width[:k], x_step[:k], y_step[:k] = np.array(first[:k]).T
    return {"width": width, "x_step": x_step, "y_step": y_step}


bank_conflict_ways = formula_problem(
    "bank_conflict_ways", title="Review: the ways of a warp's shared-memory bank conflict",
    function="bank_conflict_ways", args=(("width", int), ("x_step", int), ("y_step", int)),
    results=("ways",), spec=_banks_spec, make_inputs=_banks_inputs,
    tolerance=lambda inputs, expected: {"ways": np.zeros(expected["ways"].shape)},
    sizes=Sizes(visible=(8,), hidden=(200,)),
    value_hint=("Thread t of the warp is tx = t % width, ty = t // width, and reads word "
                "tx·x_step + ty·y_step, in bank word % 32. Threads that read the same word are "
                "served together (a broadcast), so count distinct words per bank; the answer is "
                "the largest count (1: no conflict)."),
    size_label=lambda count: f"{count} (width, x_step, y_step) accesses",
)


# ---- 23.2 Little's law: bytes in flight, threads, loads per thread ------------------------------

def _little_spec(bandwidth, latency, sms, max_threads, bytes_per_load):
    in_flight = bandwidth * latency
    per_sm = in_flight / sms
    return {"bytes_in_flight": in_flight,
            "threads_per_sm": np.ceil(per_sm / bytes_per_load),
            "loads_per_thread": np.ceil(per_sm / (max_threads * bytes_per_load))}


def _little_inputs(rng, count):
    bandwidth = 10.0 ** rng.uniform(11, 13.2, count)         # 100 GB/s to 16 TB/s
    latency = rng.uniform(200e-9, 1.5e-6, count)             # 0.2 to 1.5 µs
    sms = rng.integers(4, 200, count).astype(np.float64)
    max_threads = rng.choice([1024, 1536, 2048], count).astype(np.float64)
    bytes_per_load = rng.choice([1, 2, 4, 8, 16], count).astype(np.float64)
    # The notebook's worked case first: an H200 (132 SMs, 2,048 threads each) at its 4.27 TB/s
    # copy bandwidth with the rough 0.3 µs of latency chapters 4 and 6 use, float32 loads; then
    # float4 loads.
    first = [(4269e9, 0.3e-6, 132, 2048, 4), (4269e9, 0.3e-6, 132, 2048, 16)]
    k = min(count, len(first))
    bandwidth[:k], latency[:k], sms[:k], max_threads[:k], bytes_per_load[:k] = \
        np.array(first[:k], np.float64).T
    # No case within a rounding of a whole number of threads or loads: every way of writing the
    # formula must round up the same way.
    for _ in range(20):
        per_sm = bandwidth * latency / sms
        near = np.zeros(count, bool)
        for q in (per_sm / bytes_per_load, per_sm / (max_threads * bytes_per_load)):
            near |= np.abs(q - np.round(q)) < 1e-6 * np.maximum(q, 1.0)
        near[:k] = False
        if not near.any():
            break
        latency[near] *= 1.0 + rng.uniform(1e-3, 1e-2, near.sum())
    return {"bandwidth": bandwidth, "latency": latency, "sms": sms, "max_threads": max_threads,
            "bytes_per_load": bytes_per_load}


def _little_tolerance(inputs, expected):
    # bytes in flight: one multiplication, any order, 8 u; the counts are whole numbers and the
    # inputs keep them away from a rounding's reach: exact.
    return {"bytes_in_flight": 8 * U64 * expected["bytes_in_flight"],
            "threads_per_sm": np.zeros(expected["threads_per_sm"].shape),
            "loads_per_thread": np.zeros(expected["loads_per_thread"].shape)}


bytes_in_flight = formula_problem(
    "bytes_in_flight", title="Review: Little's law, the bytes in flight and what each thread owes",
    function="bytes_in_flight",
    args=(("bandwidth", float), ("latency", float), ("sms", int), ("max_threads", int),
          ("bytes_per_load", int)),
    results=("bytes_in_flight", "threads_per_sm", "loads_per_thread"),
    spec=_little_spec, make_inputs=_little_inputs, tolerance=_little_tolerance,
    sizes=Sizes(visible=(4,), hidden=(200,)),
    value_hint=("bytes_in_flight = bandwidth × latency (Little's law: what must be on its way at "
                "every moment). Shared by the SMs, each holds bytes_in_flight / sms. "
                "threads_per_sm: with one load of bytes_per_load bytes in flight per thread, "
                "round up. loads_per_thread: with every one of max_threads threads resident, how "
                "many independent loads each must have in flight, rounded up (1 if occupancy "
                "alone is enough)."),
)


# ---- 23.3 softmax: the traffic of three passes, of online softmax, and of one fused pass ---------

def _softmax_spec(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    matrix = rows * cols * elem_bytes
    fits = cols * elem_bytes <= on_chip_bytes
    fused = np.where(fits, 2 * matrix, 3 * matrix)
    return {"three_pass_bytes": 4 * matrix, "online_bytes": 3 * matrix, "fused_bytes": fused,
            "fused_seconds": fused / bandwidth}


def _softmax_inputs(rng, count):
    rows = np.floor(10.0 ** rng.uniform(0, 6, count))
    cols = np.floor(10.0 ** rng.uniform(0, 5.3, count))           # 1 to 200,000 columns
    elem_bytes = rng.choice([2, 4], count).astype(np.float64)
    on_chip = rng.choice([48, 96, 164, 227, 256], count) * 1024.0
    bandwidth = 10.0 ** rng.uniform(11, 13.2, count)
    # Rows exactly as long as the chip holds (they fit), and one element longer (they do not).
    edge = rng.random(count) < 0.15
    cols[edge] = on_chip[edge] / elem_bytes[edge] + rng.integers(0, 2, edge.sum())
    # The notebook's worked cases first: 4,096 rows of 4,096 float32 on an H200 (fits in a
    # block's 227 KB), the same with rows of 131,072 (do not fit), and one row of one element.
    first = [(4096, 4096, 4, 227 * 1024, 4269e9), (4096, 131072, 4, 227 * 1024, 4269e9),
             (1, 1, 2, 48 * 1024, 1e12)]
    k = min(count, len(first))
    rows[:k], cols[:k], elem_bytes[:k], on_chip[:k], bandwidth[:k] = \
        np.array(first[:k], np.float64).T
    return {"rows": rows, "cols": cols, "elem_bytes": elem_bytes, "on_chip_bytes": on_chip,
            "bandwidth": bandwidth}


def _softmax_tolerance(inputs, expected):
    # Whole byte counts below 2^53: exact; the time one division more: 8 u.
    return {"three_pass_bytes": np.zeros(expected["three_pass_bytes"].shape),
            "online_bytes": np.zeros(expected["online_bytes"].shape),
            "fused_bytes": np.zeros(expected["fused_bytes"].shape),
            "fused_seconds": 8 * U64 * expected["fused_seconds"]}


softmax_traffic = formula_problem(
    "softmax_traffic", title="Looking ahead: the bytes a softmax moves, three ways",
    function="softmax_traffic",
    args=(("rows", int), ("cols", int), ("elem_bytes", int), ("on_chip_bytes", int),
          ("bandwidth", float)),
    results=("three_pass_bytes", "online_bytes", "fused_bytes", "fused_seconds"),
    spec=_softmax_spec, make_inputs=_softmax_inputs, tolerance=_softmax_tolerance,
    sizes=Sizes(visible=(3,), hidden=(200,)),
    value_hint=("Count only the rows × cols matrices, elem_bytes each (the row maxima and sums are "
                "tiny). Three passes: x read three times (max, sum, normalise), y written once. "
                "Online: max and sum in one read, then a read to normalise and the write. Fused: "
                "one read and one write, but only when a whole row (cols × elem_bytes) fits in "
                "on_chip_bytes; otherwise it falls back to the online traffic. The time bound is "
                "the fused bytes at the bandwidth."),
)


def worked_little() -> dict:
    """The notebook's worked numbers for an H200, from the spec itself (not typed in)."""
    out = _little_spec(4269e9, 0.3e-6, 132.0, 2048.0, 4.0)
    return {k: float(v) for k, v in out.items()}

