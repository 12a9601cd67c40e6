"""Chapter 13's graded exercises (13.1 - 13.4): the keys, the stable sorts as the spec, how the
checks launch a learner's pass kernels and whole sort, the CPU baselines, the verdicts that say
what a wrong pass usually means, and the :class:`Problem` objects."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import Verdict
from autograder.grading.problem import Baseline, Problem, SpeedBar, Sizes
from autograder.problems.ch13.references import (DIGITS, KEY_BITS, RADIX_BITS, cupy_sort,
                                                 reference_local_sort, reference_radix_sort,
                                                 reference_scatter)
from autograder.problems.kit import formula_problem, njit_on_first_call

U64 = 2.0 ** -53
KEY = np.uint32
COUNT = np.int32
MIN_THREADS = 32          # the smallest block a check launches: the count table is sized for it
TOP_KEY = 0xFFFFFFFE      # keys stay below the poison value of uint32 (0xFFFFFFFF)

KINDS = ("random", "duplicates", "equal", "sorted", "reversed")
KIND_LABELS = {"random": "random keys", "duplicates": "a handful of distinct keys, many copies",
               "equal": "every key equal", "sorted": "already sorted",
               "reversed": "sorted the other way, with copies"}


def kind_of(n: int) -> str:
    """The keys a case of n keys gets: fixed by the size, so a verdict can name them."""
    return KINDS[int(n) % len(KINDS)]


def shift_of(n: int) -> int:
    """The digit a pass exercise sorts by in a case of n keys: bits shift .. shift + 3."""
    return RADIX_BITS * ((int(n) * 3) % (KEY_BITS // RADIX_BITS))


def _label(n) -> str:
    return f"n = {int(n)} ({KIND_LABELS[kind_of(n)]})"


def _pass_label(n) -> str:
    return f"n = {int(n)} ({KIND_LABELS[kind_of(n)]}), shift = {shift_of(n)}"


# ---- keys with real structure -------------------------------------------------------------------

def radix_keys(rng: np.random.Generator, n: int, kind: str | None = None) -> np.ndarray:
    """n uint32 keys below 0xFFFFFFFF, of the case's kind: random over all 32 bits; a handful of
    distinct keys (so every digit of a pass ties); one key everywhere; already sorted; sorted
    descending with runs of copies."""
    n = int(n)
    kind = kind or kind_of(n)
    if kind == "duplicates":
        pool = rng.integers(0, TOP_KEY, max(2, min(7, n // 4 + 1)), dtype=np.uint64)
        keys = pool[rng.integers(0, pool.size, n)]
    elif kind == "equal":
        keys = np.full(n, rng.integers(0, TOP_KEY, dtype=np.uint64))
    elif kind == "sorted":
        keys = np.sort(rng.integers(0, TOP_KEY, n, dtype=np.uint64))
    elif kind == "reversed":
        pool = rng.integers(0, TOP_KEY, max(1, n // 3), dtype=np.uint64)
        keys = np.sort(pool[rng.integers(0, pool.size, n)])[::-1]
    else:
        keys = rng.integers(0, TOP_KEY, n, dtype=np.uint64)
    return np.ascontiguousarray(keys, dtype=KEY)


def positions(rng: np.random.Generator, n: int, shuffled: bool) -> np.ndarray:
    """The values paired with the keys: each key's input position (visible cases), or a random
    permutation of the positions (hidden ones: a kernel that writes an index instead of moving
    the value fails). Distinct either way, so the values show the order of equal keys."""
    return (rng.permutation(n) if shuffled else np.arange(n)).astype(KEY)


def digits(keys: np.ndarray, shift: int) -> np.ndarray:
    return (np.asarray(keys, np.uint64) >> np.uint64(shift)) & np.uint64(DIGITS - 1)


def stable_order(keys: np.ndarray, shift: int | None = None) -> np.ndarray:
    """The stable sorting order of the keys (by one digit when ``shift`` is given)."""
    by = np.asarray(keys, np.uint64) if shift is None else digits(keys, shift)
    return np.argsort(by, kind="stable")


def local_sort_reference(keys, values, shift: int, threads: int):
    """Exercise 13.1's spec: each tile of ``threads`` keys stably sorted by its digit, and the
    count table, digit-major: ``counts[d · blocks + b]``."""
    n = keys.size
    blocks = -(-n // threads)
    tile_keys = np.empty(n, KEY)
    tile_values = np.empty(n, KEY)
    counts = np.zeros((DIGITS, blocks), np.int64)
    for b in range(blocks):
        lo, hi = b * threads, min(n, (b + 1) * threads)
        order = stable_order(keys[lo:hi], shift)
        tile_keys[lo:hi] = keys[lo:hi][order]
        tile_values[lo:hi] = values[lo:hi][order]
        counts[:, b] = np.bincount(digits(keys[lo:hi], shift).astype(np.int64),
                                   minlength=DIGITS)
    return tile_keys, tile_values, counts.reshape(-1)


def exclusive_scan_host(counts) -> np.ndarray:
    out = np.zeros(len(counts), np.int64)
    np.cumsum(counts[:-1], out=out[1:])
    return out


def table_size(n: int) -> int:
    """Entries of the count buffer a check hands out: the table of the smallest block size."""
    return DIGITS * max(1, -(-int(n) // MIN_THREADS))


# ---- 13.1 the local sort of a tile, and its digit counts ----------------------------------------

def _pass_inputs(rng, n, hidden_values=False):
    return {"keys": radix_keys(rng, n), "values": positions(rng, n, hidden_values),
            "shift": shift_of(n)}


def _local_spec(keys, values, shift, blocks=0, threads=0):
    tk, tv, counts = local_sort_reference(keys, values, shift, threads)
    table = np.full(table_size(keys.size), np.iinfo(COUNT).min, np.float64)
    table[:counts.size] = counts
    return {"tile_keys": tk.astype(np.float64), "tile_values": tv.astype(np.float64),
            "counts": table}


def _local_outputs(n):
    return {"tile_keys": ((int(n),), KEY), "tile_values": ((int(n),), KEY),
            "counts": ((table_size(n),), COUNT)}


def _exact(inputs, expected):
    return {name: np.zeros_like(v) for name, v in expected.items()}


def _local_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["keys"], inputs["values"], int(inputs["shift"]),
                                      outputs["tile_keys"], outputs["tile_values"],
                                      outputs["counts"])


SHARED_BARRIER_HINT = (
    "two threads used the same shared-memory element between the same two barriers. Every step "
    "that reads what other threads wrote (a scan's step, the reordered tile, the counters) needs "
    "cuda.syncthreads() before it, and the next write over those elements needs one after it.")


def _tile_missing(missing: np.ndarray, n: int, threads: int) -> bool:
    """Are the elements never written exactly those of the last, partial tile?"""
    if not threads or n % threads == 0:
        return False
    last = (n // threads) * threads
    return bool(missing[last:].all() and not missing[:last].any())


def diagnose_local(case, got) -> str:
    keys, values, shift = case.inputs["keys"], case.inputs["values"], int(case.inputs["shift"])
    threads, n = int(case.threads or 0), keys.size
    tk, tv, counts = local_sort_reference(keys, values, shift, threads)
    g_keys = np.asarray(got["tile_keys"]).astype(np.int64)
    g_values = np.asarray(got["tile_values"]).astype(np.int64)
    g_counts = np.asarray(got["counts"]).astype(np.int64)[:counts.size]
    missing = g_keys == np.iinfo(KEY).max
    if missing.any() and _tile_missing(missing, n, threads):
        return ("the keys of the last tile were never written: n is not a multiple of the block "
                "size, so the last tile is partial. Its threads past the end must not load or "
                "store, but the threads before them still must sort and write their keys (and "
                "the scan must count only the valid ones).")
    if not np.array_equal(g_counts, counts):
        for other in range(0, KEY_BITS, 1):
            if other != shift and other + RADIX_BITS <= KEY_BITS:
                _, _, c = local_sort_reference(keys, values, other, threads)
                if np.array_equal(g_counts, c):
                    return (f"the counts are those of the digit at bits {other}..{other + 3}, not "
                            f"{shift}..{shift + 3}: the digit of a key is (key >> shift) & "
                            f"{DIGITS - 1}.")
        blocks = -(-n // threads) if threads else 0
        block_major = counts.reshape(DIGITS, blocks).T.reshape(-1) if blocks else counts
        if np.array_equal(g_counts, block_major):
            return ("the counts are block-major (counts[b · 16 + d]); the table is digit-major: "
                    "counts[d · gridDim.x + b], so that one exclusive scan of it gives every "
                    "block's starting position for every digit.")
        return ("`counts[d · gridDim.x + b]` must be the number of keys of digit d in tile b "
                "(zero for digits that do not occur).")
    if np.array_equal(g_keys, tk) and not np.array_equal(g_values, tv):
        if np.array_equal(np.sort(g_values), np.sort(tv)):
            return ("the keys are right but the values of equal digits came out in another "
                    "order: the local sort must be stable (keys of equal digit keep their order "
                    "in the tile). A 1-bit split puts the zeros first in their order, then the "
                    "ones in their order.")
        return "the keys are right, but each value must move with its key."
    if np.array_equal(np.sort(g_keys), np.sort(tk)) and not np.array_equal(g_keys, tk):
        if np.array_equal(digits(g_keys, shift), digits(tk, shift)):
            return ("every tile is in the order of its digit, but keys of equal digit came out "
                    "in another order: the local sort must be stable (a key of equal digit "
                    "that comes earlier in the tile stays earlier).")
        return ("every key is there, but a tile is not in the order of its digit (stable): sort "
                "by bits shift .. shift + 3, the lowest bit first, each 1-bit split stable.")
    return ""


class PassProblem(Problem):
    """A radix pass exercise: verdicts say which element is wrong and what that usually means."""

    def __init__(self, *args, diagnose=None, **kw):
        super().__init__(*args, **kw)
        self.diagnose = diagnose

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        verdict = super().judge(case, outcome, show_inputs=False)
        if verdict.passed:
            return verdict
        if outcome.error:
            if "shared-memory race" in outcome.error:
                verdict.hint = SHARED_BARRIER_HINT
            return verdict
        if self.diagnose and all(v is not None for v in outcome.outputs.values()):
            hint = self.diagnose(case, outcome.outputs)
            if hint:
                verdict.hint = hint
        return verdict


class LocalSortProblem(PassProblem):
    def cases(self, hidden: bool = False, seed=None):
        cases = super().cases(hidden, seed)
        if hidden:          # the values a random permutation of the positions
            rng = np.random.default_rng(self.case_seed(True) if seed is None else seed)
            for case in cases:
                case.inputs["values"] = positions(rng, case.size, True)
        return cases


def _blocks(n, threads):
    return max(1, -(-int(n) // int(threads)))


radix_local_sort = LocalSortProblem(
    "radix_local_sort",
    title="One radix pass, part 1: sort each tile by one digit, count the digits of each tile",
    spec=_local_spec, make_inputs=_pass_inputs, outputs=_local_outputs, tolerance=_exact,
    launch=_local_launch, block_sizes=(32, 64), visible_block_size=32, blocks_for=_blocks,
    # n; n % 5 picks the keys and shift_of(n) the digit: 91 duplicates at shift 4 (two full
    # tiles of 32 and one of 27), 45 random at shift 28 (the top digit), 40 random at shift 0,
    # 64 reversed at shift 0 (whole tiles), 37 all equal at shift 28; hidden 5 random at 28 (one
    # partial tile), 396 duplicates at 16 (4 times the largest visible), two random sizes.
    cpu_sizes=Sizes(visible=(91, 45, 40, 64, 37), hidden=(5, 396), hidden_random=(2, 1, 300)),
    gpu_sizes=Sizes(visible=(1_000_003, 91, 45, 40, 64, 37), hidden=(5, 396, 17_000_002),
                    hidden_random=(2, 1, 3_000_000)),
    size_label=_pass_label, diagnose=diagnose_local, reference=reference_local_sort,
)


# ---- 13.2 the scatter ----------------------------------------------------------------------------

def _scatter_spec(tile_keys, tile_values, shift, counts, offsets, blocks=0, threads=0):
    order = stable_order(tile_keys, shift)
    return {"out_keys": tile_keys[order].astype(np.float64),
            "out_values": tile_values[order].astype(np.float64)}


def _scatter_outputs(n):
    return {"out_keys": ((int(n),), KEY), "out_values": ((int(n),), KEY)}


def _scatter_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["tile_keys"], inputs["tile_values"],
                                      int(inputs["shift"]), inputs["counts"], inputs["offsets"],
                                      outputs["out_keys"], outputs["out_values"])


def _scatter_must_read(case):
    # Only the offsets of digits a tile holds are needed; the counts may be found another way.
    return {"counts": False, "offsets": np.asarray(case.inputs["counts"]) > 0}


def diagnose_scatter(case, got) -> str:
    tk, tv = case.inputs["tile_keys"], case.inputs["tile_values"]
    shift = int(case.inputs["shift"])
    order = stable_order(tk, shift)
    g_keys = np.asarray(got["out_keys"]).astype(np.int64)
    g_values = np.asarray(got["out_values"]).astype(np.int64)
    missing = g_keys == np.iinfo(KEY).max
    if missing.any() and not missing.all():
        return ("some outputs were never written: each tile's keys of digit d go to offsets[d · "
                "gridDim.x + b] onwards, one place per key, ranked among the tile's keys of digit "
                "d (count from where digit d starts in the tile, the sum of the tile's counts of "
                "the digits before d, not including d's own).")
    exp_k = tk[order].astype(np.int64)
    if np.array_equal(g_keys, exp_k) and not np.array_equal(g_values, tv[order]):
        return ("the keys are in place but equal digits came out in another order: the scatter "
                "must keep each tile's order (a key's place is the digit's offset plus its rank "
                "in the tile among keys of the same digit).")
    return ("a key's place is offsets[d · gridDim.x + b] (where the keys of digit d from tile b "
            "start) plus its rank in its tile among the keys of digit d; that rank is its index "
            "in the tile minus where digit d starts in the tile (an exclusive sum of the tile's "
            "counts of the digits before d).")


class ScatterProblem(PassProblem):
    def cases(self, hidden: bool = False, seed=None):
        """As every problem's, then each case's keys locally sorted for its block size, with its
        count table and the table's exclusive scan (what 13.1 and the scan would hand on)."""
        cases = super().cases(hidden, seed)
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        for case in cases:
            keys, shift = case.inputs["keys"], int(case.inputs["shift"])
            values = positions(rng, keys.size, hidden)
            tk, tv, counts = local_sort_reference(keys, values, shift, int(case.threads))
            case.inputs = {"tile_keys": tk, "tile_values": tv, "shift": shift,
                           "counts": counts.astype(COUNT),
                           "offsets": exclusive_scan_host(counts).astype(COUNT)}
        return cases


radix_scatter = ScatterProblem(
    "radix_scatter",
    title="One radix pass, part 2: scatter each tile's keys to their places for this digit",
    spec=_scatter_spec, make_inputs=_pass_inputs, outputs=_scatter_outputs, tolerance=_exact,
    launch=_scatter_launch, block_sizes=(32, 64), visible_block_size=32, blocks_for=_blocks,
    must_read=_scatter_must_read,
    # As 13.1's: 91 duplicates at shift 4, 45 random at 28, 40 random at 0, 64 reversed at 0,
    # 37 all equal at 28; hidden 5 random at 28, 396 duplicates at 16, two random sizes.
    cpu_sizes=Sizes(visible=(91, 45, 40, 64, 37), hidden=(5, 396), hidden_random=(2, 1, 300)),
    gpu_sizes=Sizes(visible=(1_000_003, 91, 45, 40, 64, 37), hidden=(5, 396, 17_000_002),
                    hidden_random=(2, 1, 3_000_000)),
    size_label=_pass_label, diagnose=diagnose_scatter, reference=reference_scatter,
)


# ---- 13.3 the whole sort of key-value pairs -------------------------------------------------------

SPEED_SIZE = 1 << 28          # 2^28 pairs: 1 GiB of keys, 1 GiB of values
_MIX_A = 0x9E3779B1 & ((1 << 28) - 1) | 1
_MIX_B = 0x2C1B3C6D & ((1 << 28) - 1) | 1


def _mix(i: np.ndarray, bits: int, salt: int) -> np.ndarray:
    """A bijection of [0, 2^bits): multiply by odd numbers, xor with shifts (each invertible)."""
    mask = np.uint64((1 << bits) - 1)
    x = (i.astype(np.uint64) + np.uint64(salt)) & mask
    x = (x * np.uint64(_MIX_A)) & mask
    x ^= x >> np.uint64(bits // 2)
    x = (x * np.uint64(_MIX_B)) & mask
    return x


def _unmix(x: np.ndarray, bits: int, salt: int) -> np.ndarray:
    mask = (1 << bits) - 1
    inv_a, inv_b = pow(_MIX_A, -1, 1 << bits), pow(_MIX_B, -1, 1 << bits)
    x = (x.astype(np.uint64) * np.uint64(inv_b)) & np.uint64(mask)
    x ^= x >> np.uint64(bits // 2)          # undoing x ^= x >> h (h >= bits / 2) is itself
    x = (x * np.uint64(inv_a)) & np.uint64(mask)
    return (x - np.uint64(salt)) & np.uint64(mask)


def _group_key(g: np.ndarray) -> np.ndarray:
    """Strictly increasing keys over the groups g (pairs of positions share one key)."""
    g = g.astype(np.uint64)
    return g * np.uint64(32) + (((g * np.uint64(2654435761)) >> np.uint64(7)) % np.uint64(31))


def speed_keys(rng: np.random.Generator, n: int) -> dict:
    """Keys for a speed run of n = 2^b pairs, made in chunks with no sort: position i gets the
    key of group mix(i) // 2 (a bijection), so every key occurs twice, at two scattered places,
    and the sorted output at any index is known without sorting (:func:`speed_sample`)."""
    bits = max(1, int(n - 1).bit_length())
    if 1 << bits != n:
        raise ValueError("speed runs use a power-of-two count of keys")
    salt = int(rng.integers(0, 1 << bits))
    keys = np.empty(n, KEY)
    step = 1 << 22
    for lo in range(0, n, step):
        i = np.arange(lo, min(n, lo + step), dtype=np.uint64)
        keys[lo:lo + i.size] = _group_key(_mix(i, bits, salt) >> np.uint64(1)).astype(KEY)
    return {"keys": keys, "values": np.arange(n, dtype=KEY), "salt": salt}


def speed_sample(inputs, idx):
    n = inputs["keys"].size
    idx = np.asarray(idx, np.int64)
    if "salt" not in inputs:
        order = stable_order(inputs["keys"])[idx]
        expected = {"out_keys": inputs["keys"][order].astype(np.float64),
                    "out_values": inputs["values"][order].astype(np.float64)}
    else:
        bits = int(n - 1).bit_length()
        g = (idx // 2).astype(np.uint64)
        a = _unmix(2 * g, bits, int(inputs["salt"])).astype(np.int64)      # the two positions
        b = _unmix(2 * g + 1, bits, int(inputs["salt"])).astype(np.int64)  # of group g's key
        first, second = np.minimum(a, b), np.maximum(a, b)
        pos = np.where(idx % 2 == 0, first, second)
        expected = {"out_keys": _group_key(g).astype(np.float64),
                    "out_values": inputs["values"][pos].astype(np.float64)}
    return expected, {k: np.zeros_like(v) for k, v in expected.items()}


def _sort_inputs(rng, n):
    return {"keys": radix_keys(rng, n), "values": positions(rng, n, False)}


def _sort_spec(keys, values, blocks=0, threads=0):
    order = stable_order(keys)
    return {"out_keys": keys[order].astype(np.float64),
            "out_values": values[order].astype(np.float64)}


def _sort_launch(sort, inputs, outputs, case):
    sort(inputs["keys"], inputs["values"], outputs["out_keys"], outputs["out_values"],
         int(case.threads))


def _speed_shape(n):
    return _blocks(n, 256), 256


def sort_bytes(n):
    # What any sort of pairs must move at least: read keys and values, write them once.
    return 16 * int(n)


def diagnose_sort(case, got) -> str:
    keys, values = case.inputs["keys"], case.inputs["values"]
    g_keys = np.asarray(got["out_keys"]).astype(np.int64)
    g_values = np.asarray(got["out_values"]).astype(np.int64)
    order = stable_order(keys)
    exp_k = keys[order].astype(np.int64)
    if np.array_equal(g_keys, exp_k):
        if np.array_equal(np.sort(g_values), np.sort(values.astype(np.int64))):
            return ("the keys are sorted, but equal keys came out in another order (their values "
                    "show it): every pass must be stable, or a later pass undoes the order an "
                    "earlier one made.")
        return "the keys are sorted, but each value must move with its key in every pass."
    for bits in range(0, KEY_BITS, RADIX_BITS):
        low = (keys.astype(np.uint64) & np.uint64((1 << bits) - 1)) if bits else None
        if bits and np.array_equal(g_keys, keys[np.argsort(low, kind="stable")].astype(np.int64)):
            return (f"the keys are sorted by their lowest {bits} bits only: the sort needs "
                    f"{KEY_BITS // RADIX_BITS} passes of {RADIX_BITS} bits (shift = 0, 4, …, 28), "
                    "the last pass writing the outputs.")
    if np.array_equal(np.sort(g_keys), np.sort(exp_k)):
        return ("every key is there, in the wrong order: every pass must be stable (an unstable "
                "pass undoes the order the earlier passes made), the shifts must be 0, 4, …, 28, "
                "lowest digit first, and each pass must read the previous pass's output.")
    return ("some keys are lost or doubled: the offsets are the EXCLUSIVE scan of the count "
            "table (the first block's digit 0 starts at 0), and every pass must scatter every key.")


class SortProblem(PassProblem):
    def simulated_threads(self, case) -> float:
        # 8 passes, each a local sort and a scatter over every key, and a scan of the table.
        return 24.0 * float(case.thread_count) + 2000.0


def _serial_jit_factory():
    import numba

    @numba.njit(cache=False)
    def serial(keys, values, out_keys, out_values):
        n = keys.size
        tmp_k = np.empty_like(keys)
        tmp_v = np.empty_like(values)
        for p in range(4):                       # 8-bit digits: keys -> tmp -> out -> tmp -> out
            shift = 8 * p
            src_k, src_v = (keys, values) if p == 0 else ((out_keys, out_values) if p % 2 == 0
                                                          else (tmp_k, tmp_v))
            dst_k, dst_v = (tmp_k, tmp_v) if p % 2 == 0 else (out_keys, out_values)
            count = np.zeros(257, np.int64)
            for i in range(n):
                count[((src_k[i] >> shift) & 255) + 1] += 1
            for d in range(256):
                count[d + 1] += count[d]
            for i in range(n):
                d = (src_k[i] >> shift) & 255
                dst_k[count[d]] = src_k[i]
                dst_v[count[d]] = src_v[i]
                count[d] += 1
    return serial


_serial_jit = njit_on_first_call(_serial_jit_factory)


# A baseline gets every speed input (Baseline.run(**inputs, **outputs)); the speed keys carry the
# scalar ``salt`` that only the sample check reads.
def _serial_sort(keys, values, out_keys, out_values, **_):
    _serial_jit(keys, values, out_keys, out_values)


def _numpy_sort(keys, values, out_keys, out_values, **_):
    order = np.argsort(keys, kind="stable")
    out_keys[:] = keys[order]
    out_values[:] = values[order]


BASELINES = {
    "serial": Baseline("numba.njit LSD radix sort, 8 bits a pass (1 core)", _serial_sort),
    "numpy": Baseline("NumPy stable argsort + take (1 core)", _numpy_sort, at_speed_size=False),
}


radix_sort = SortProblem(
    "radix_sort",
    title="A radix sort of key-value pairs: 8 passes of 4 bits, stable",
    spec=_sort_spec, make_inputs=_sort_inputs, outputs=_scatter_outputs, tolerance=_exact,
    launch=_sort_launch, block_sizes=(32, 64), visible_block_size=32, blocks_for=_blocks,
    # n; n % 5 picks the keys: 70 random (two tiles of 32 and one of 6), 91 duplicates, 33
    # sorted (one key in the last tile); hidden 12 all equal, 364 reversed (4 times the largest
    # visible), one random size. Each case is 8 passes: CPU mode keeps them small.
    cpu_sizes=Sizes(visible=(70, 91, 33), hidden=(12, 364), hidden_random=(1, 2, 120)),
    gpu_sizes=Sizes(visible=(1_000_003, 70, 91, 33), hidden=(12, 364, 17_000_002),
                    hidden_random=(2, 1, 3_000_000), speed=SPEED_SIZE),
    size_label=_label, diagnose=diagnose_sort, bytes_moved=sort_bytes,
    sample_spec=speed_sample, speed_inputs=speed_keys, speed_launch=_speed_shape,
    reference=reference_radix_sort, baselines=BASELINES, vendor=cupy_sort,
    vendor_label="cupy.sort (CUB radix sort, keys only)",
    speed=SpeedBar(min_fraction_of_reference=0.6, baseline="serial", min_speedup=20.0),
)


# ---- 13.4 predict: the memory floor of a radix sort, and the radix --------------------------------

def passes_of(bits: int) -> int:
    return -(-KEY_BITS // int(bits))


def _bound_spec(n, bits, tile, bandwidth):
    out = np.empty(np.size(n))
    for x in range(out.size):
        nn, r, t = int(n[x]), int(bits[x]), int(tile[x])
        tiles = -(-nn // t)
        table = (1 << r) * tiles
        per_pass = 16 * nn + 16 * nn + 4 * table * 5
        out[x] = passes_of(r) * per_pass / bandwidth[x]
    return {"seconds": out}


BANDWIDTH = 4.8e12


def _bound_inputs(rng, count):
    n = np.floor(10.0 ** rng.uniform(0, 9.5, count))
    bits = rng.integers(1, 17, count).astype(np.float64)
    tile = rng.integers(1, 8193, count).astype(np.float64)
    bandwidth = 10.0 ** rng.uniform(10.5, 13, count)
    # The first cases: 2^28 pairs on the chapter's device with tiles of 256 keys at 4, 6, 8 and
    # 11 bits a pass, then 8 bits with tiles of 2048; one key; 3 bits (11 passes, the last short).
    figures = [(1 << 28, 4, 256), (1 << 28, 6, 256), (1 << 28, 8, 256), (1 << 28, 11, 256),
               (1 << 28, 8, 2048), (1, 4, 256), (1000, 3, 64), (12345, 16, 1024)]
    for x, (nn, r, t) in enumerate(figures[:count]):
        n[x], bits[x], tile[x], bandwidth[x] = nn, r, t, BANDWIDTH
    return {"n": n, "bits": bits, "tile": tile, "bandwidth": bandwidth}


def _bound_tolerance(inputs, expected):
    return {"seconds": 64 * U64 * expected["seconds"]}


radix_time_bound = formula_problem(
    "radix_time_bound",
    title="The memory floor of a radix sort of pairs, and the radix that makes it lowest",
    function="radix_time_bound",
    args=(("n", int), ("bits", int), ("tile", int), ("bandwidth", float)),
    results=("seconds",), spec=_bound_spec, make_inputs=_bound_inputs, tolerance=_bound_tolerance,
    sizes=Sizes(visible=(8,), hidden=(200,)),
    value_hint=("count per pass: the local sort reads and writes every key and value, the "
                "scatter reads and writes them again (4 bytes each); the table holds 2^bits "
                "counts per tile (4 bytes each) and is written by the local sort, read and written "
                "by the scan (as offsets), and read twice by the scatter (counts and offsets); "
                "passes = ceil(32 / bits); tiles = ceil(n / tile)."),
)
