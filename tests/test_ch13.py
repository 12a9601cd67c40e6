"""Chapter 13: do the radix-sort checks pass correct pass kernels and sorts written several ways,
and fail every classic radix bug (a digit from the wrong bits, a block-major count table, an
unstable local sort or scatter, an inclusive start where an exclusive one is needed, a missing
barrier, a skipped partial last tile, too few passes) with a verdict that says what went wrong?
Are the inputs as the chapter says (many ties, all keys equal, sorted, reversed, sizes that are
multiples of nothing), do the speed test's sampled answers agree with a real sort, does the
course's merge sort sort stably, and is the bound judged to float64 precision? Every course kernel
also compiles for a GPU (PTX for compute capability 9.0)."""

import numpy as np
import pytest
from numba import cuda, int32

import autograder as ag

from ptx import assert_compiles_for_h200
from verdicts import NamedInCpuMode, assert_judged, verdict_text

ch13 = ag.problems.ch13
CPU = not ag.backend.is_gpu


# ---- the inputs and the spec ---------------------------------------------------------------------

def test_inputs_have_ties_equal_sorted_reversed_and_odd_sizes():
    kinds = set()
    for problem in (ch13.radix_local_sort, ch13.radix_sort):
        for hidden in (False, True):
            for case in problem.cases(hidden=hidden):
                keys = case.inputs["keys"]
                assert keys.dtype == np.uint32 and keys.max(initial=0) < 0xFFFFFFFF
                kinds.add(ch13.kind_of(keys.size))
                values = case.inputs["values"]
                assert np.array_equal(np.sort(values), np.arange(keys.size))   # positions
                assert hidden or np.array_equal(values, np.arange(keys.size))
    assert kinds == set(ch13.KINDS)
    sizes = [c.size for c in ch13.radix_sort.cases()]
    assert all(n % 32 for n in sizes)                       # a partial last tile every time
    shifts = {ch13.shift_of(n) for n in ch13.radix_local_sort.cpu_sizes.visible}
    assert {0, 28} <= shifts                                # the bottom digit and the top one
    dup = ch13.radix_keys(np.random.default_rng(1), 91, "duplicates")
    assert np.unique(dup).size <= 7
    rev = ch13.radix_keys(np.random.default_rng(1), 64, "reversed")
    assert np.all(np.diff(rev.astype(np.int64)) <= 0)


def test_local_sort_spec_is_a_stable_sort_of_each_tile_with_digit_major_counts():
    keys = np.array([0x13, 0x02, 0x23, 0x11, 0x05, 0x33, 0x03], np.uint32)
    values = np.arange(7, dtype=np.uint32)
    tk, tv, counts = ch13.local_sort_reference(keys, values, 0, 4)
    assert tk.tolist() == [0x11, 0x02, 0x13, 0x23, 0x33, 0x03, 0x05]
    assert tv.tolist() == [3, 1, 0, 2, 5, 6, 4]
    table = counts.reshape(16, 2)
    assert table[3].tolist() == [2, 2] and table[1].tolist() == [1, 0] and table.sum() == 7


def test_the_speed_sample_agrees_with_a_real_sort():
    """The speed test checks samples computed without sorting; on 2^12 keys they must equal the
    stable sort everywhere (every key twice: the values show the stable order)."""
    from autograder.problems.ch13.specs import speed_sample, speed_keys
    host = speed_keys(np.random.default_rng(3), 1 << 12)
    order = ch13.stable_order(host["keys"])
    assert np.unique(host["keys"]).size == (1 << 11)
    expected, _ = speed_sample(host, np.arange(1 << 12))
    assert np.array_equal(expected["out_keys"], host["keys"][order])
    assert np.array_equal(expected["out_values"], host["values"][order])


def test_the_cpu_baselines_run_on_the_speed_inputs():
    """The speed test times each CPU baseline on the speed inputs, scalars included (``salt``,
    which only the sample check reads): every baseline must take them and sort."""
    from autograder.problems.ch13.specs import speed_keys
    n = 1 << 12
    host = speed_keys(np.random.default_rng(5), n)
    order = ch13.stable_order(host["keys"])
    for key, baseline in ch13.radix_sort.baselines.items():
        outs = {name: np.empty(shape, dt) for name, (shape, dt) in ch13.radix_sort.outputs(n).items()}
        baseline.run(**host, **outs)
        assert np.array_equal(outs["out_keys"], host["keys"][order]), key
        assert np.array_equal(outs["out_values"], host["values"][order]), key


# ---- 13.1 the local sort -------------------------------------------------------------------------

def _local(barrier=True, ties_reversed=False, digit_offset=0, block_major=False):
    """A 13.1 local sort that ranks each key by counting in shared memory: right with the
    defaults, else with one classic bug (no barrier after the digits are stored; equal digits
    ranked in reverse order; the digit taken ``digit_offset`` bits too high; block-major counts)."""
    @cuda.jit
    def local_sort(keys, values, shift, tile_keys, tile_values, counts):
        s_digit = cuda.shared.array(256, int32)
        t, T = cuda.threadIdx.x, cuda.blockDim.x
        start = cuda.blockIdx.x * T
        valid = min(T, keys.size - start)
        mine = -1
        if t < valid:
            mine = (keys[start + t] >> (shift + digit_offset)) & 15
            s_digit[t] = mine
        if barrier:
            cuda.syncthreads()
        if t < valid:
            rank = 0
            for j in range(valid):
                before = j > t if ties_reversed else j < t
                if s_digit[j] < mine or (s_digit[j] == mine and before):
                    rank += 1
            tile_keys[start + rank] = keys[start + t]
            tile_values[start + rank] = values[start + t]
        if t < 16:
            c = 0
            for j in range(valid):
                c += s_digit[j] == t
            if block_major:
                counts[cuda.blockIdx.x * 16 + t] = c
            else:
                counts[t * cuda.gridDim.x + cuda.blockIdx.x] = c
    return local_sort


local_ok = _local()
local_unstable = _local(ties_reversed=True)


@cuda.jit
def local_whole_tiles_only(keys, values, shift, tile_keys, tile_values, counts):
    s_digit = cuda.shared.array(256, int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    start = cuda.blockIdx.x * T
    if start + T > keys.size:
        return
    mine = (keys[start + t] >> shift) & 15
    s_digit[t] = mine
    cuda.syncthreads()
    rank = 0
    for j in range(T):
        if s_digit[j] < mine or (s_digit[j] == mine and j < t):
            rank += 1
    tile_keys[start + rank] = keys[start + t]
    tile_values[start + rank] = values[start + t]
    if t < 16:
        c = 0
        for j in range(T):
            c += s_digit[j] == t
        counts[t * cuda.gridDim.x + cuda.blockIdx.x] = c


LOCAL_CASES = {
    "local_ok": (local_ok, None, False),
    "local_block_major": (_local(block_major=True), "the counts are block-major", False),
    "local_unstable": (local_unstable, "the local sort must be stable", False),
    "local_wrong_shift": (_local(digit_offset=4), "the counts are those of the digit at bits",
                          False),
    "local_no_barrier": (_local(barrier=False), "race", True),
    "local_whole_tiles_only": (local_whole_tiles_only, "the last tile is partial", False),
}


@pytest.mark.parametrize("name", sorted(LOCAL_CASES))
def test_local_sort_verdict(name):
    fn, expected, race_only = LOCAL_CASES[name]
    if race_only and not CPU:
        pytest.skip("a race may not show on a GPU; CPU mode's detector catches it every time")
    failure = verdict_text(ch13.radix_local_sort, fn, hidden=expected is None)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        if CPU:
            assert expected in failure, failure


# ---- 13.2 the scatter ----------------------------------------------------------------------------

@cuda.jit
def scatter_ok(tile_keys, tile_values, shift, counts, offsets, out_keys, out_values):
    s_first = cuda.shared.array(16, int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    b, blocks = cuda.blockIdx.x, cuda.gridDim.x
    if t < 16:
        first = 0
        for d in range(t):
            first += counts[d * blocks + b]
        s_first[t] = first
    cuda.syncthreads()
    i = b * T + t
    if i < tile_keys.size:
        key = tile_keys[i]
        d = (key >> shift) & 15
        out_keys[offsets[d * blocks + b] + t - s_first[d]] = key
        out_values[offsets[d * blocks + b] + t - s_first[d]] = tile_values[i]


@cuda.jit
def scatter_inclusive(tile_keys, tile_values, shift, counts, offsets, out_keys, out_values):
    s_first = cuda.shared.array(16, int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    b, blocks = cuda.blockIdx.x, cuda.gridDim.x
    if t < 16:
        first = 0
        for d in range(t + 1):                      # up to and including t
            first += counts[d * blocks + b]
        s_first[t] = first
    cuda.syncthreads()
    i = b * T + t
    if i < tile_keys.size:
        key = tile_keys[i]
        d = (key >> shift) & 15
        dest = offsets[d * blocks + b] + t - s_first[d]
        if 0 <= dest < out_keys.size:
            out_keys[dest] = key
            out_values[dest] = tile_values[i]


@cuda.jit
def scatter_reversed(tile_keys, tile_values, shift, counts, offsets, out_keys, out_values):
    s_first = cuda.shared.array(16, int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    b, blocks = cuda.blockIdx.x, cuda.gridDim.x
    if t < 16:
        first = 0
        for d in range(t):
            first += counts[d * blocks + b]
        s_first[t] = first
    cuda.syncthreads()
    i = b * T + t
    if i < tile_keys.size:
        key = tile_keys[i]
        d = (key >> shift) & 15
        dest = offsets[d * blocks + b] + s_first[d] + counts[d * blocks + b] - 1 - t
        out_keys[dest] = key
        out_values[dest] = tile_values[i]


SCATTER_CASES = {
    "scatter_ok": (scatter_ok, None),
    "scatter_inclusive": (scatter_inclusive, "never written"),
    "scatter_reversed": (scatter_reversed,
                         NamedInCpuMode("equal digits came out in another order")),
}


@pytest.mark.parametrize("name", sorted(SCATTER_CASES))
def test_scatter_verdict(name):
    fn, expected = SCATTER_CASES[name]
    assert_judged(ch13.radix_scatter, fn, expected)


# ---- 13.3 the whole sort -------------------------------------------------------------------------

def sort_seven_passes(keys, values, out_keys, out_values, threads):
    n = keys.size
    blocks = -(-n // threads)
    tk, tv = cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32)
    counts = cuda.device_array(16 * blocks, np.int32)
    offsets = cuda.device_array(16 * blocks, np.int32)
    src = (keys, values)
    for shift in range(0, 28, 4):
        local_ok[blocks, threads](src[0], src[1], shift, tk, tv, counts)
        ch13.exclusive_scan(counts, offsets)
        scatter_ok[blocks, threads](tk, tv, shift, counts, offsets, out_keys, out_values)
        src = (out_keys, out_values)


def sort_unstable_local(keys, values, out_keys, out_values, threads):
    ch13.radix_sort_with(local_unstable, scatter_ok, keys, values, out_keys, out_values, threads)


def sort_ok(keys, values, out_keys, out_values, threads):
    ch13.radix_sort_with(local_ok, scatter_ok, keys, values, out_keys, out_values, threads)


def sort_on_host(keys, values, out_keys, out_values, threads):
    k, v = keys.copy_to_host(), values.copy_to_host()
    order = np.argsort(k, kind="stable")
    out_keys.copy_to_device(np.ascontiguousarray(k[order]))
    out_values.copy_to_device(np.ascontiguousarray(v[order]))


def test_sort_passes_a_correct_sort_and_the_course_reference():
    assert verdict_text(ch13.radix_sort, sort_ok, hidden=False) is None
    assert verdict_text(ch13.radix_sort, ch13.reference_radix_sort(), hidden=False) is None


@pytest.mark.parametrize("fn,expected", [
    (sort_seven_passes, "passes of 4 bits"),
    (sort_unstable_local, "every pass must be stable"),
    (sort_on_host, "copied to the host"),
])
def test_sort_verdict(fn, expected):
    failure = verdict_text(ch13.radix_sort, fn, hidden=False)
    assert failure is not None and (not CPU or expected in failure), failure


# ---- merge sort, the scan, and compiling for a GPU -----------------------------------------------

def test_merge_sort_is_sorted_and_stable_at_awkward_sizes():
    for n in (1, 2, 33, 203):
        result = ch13.merge_sort_check(n=n, seed=n)
        assert result["sorted"] and result["stable"], result
        assert result["passes"] == max(0, (n - 1).bit_length())


def test_exclusive_scan_of_the_table_at_several_lengths():
    for n, threads in ((1, None), (200, None), (300, 32), (1000, 32)):
        counts = np.random.default_rng(n).integers(0, 40, n).astype(np.int32)
        d_out = cuda.device_array(n, np.int32)
        ch13.exclusive_scan(cuda.to_device(counts), d_out, threads)
        assert np.array_equal(d_out.copy_to_host(), ch13.exclusive_scan_host(counts))


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """Every course kernel of the chapter compiles for compute capability 9.0."""
    assert_compiles_for_h200("ch13", (
        "r.cuda, r.uint32, r.int32 = cuda, numba.uint32, numba.int32\n"
        "u = types.uint32[::1]; i = types.int32[::1]\n"
        "k = r._radix_kernels.__wrapped__(); s = r._scan_kernels.__wrapped__()\n"
        "m = r._merge_sort_kernels.__wrapped__()\n"
        "sigs = [(k['local_sort'], (u, u, types.int64, u, u, i)),\n"
        "        (k['scatter'], (u, u, types.int64, i, i, u, u)),\n"
        "        (s['sections'], (i, i, i)), (s['carries'], (i, i)), (s['serial'], (i, i)),\n"
        "        (m['merge_pass'], (u, u, u, u, types.int64, types.int64))]\n"), 6)


# ---- 13.4 the bound ------------------------------------------------------------------------------

def bound_ok(n, bits, tile, bandwidth):
    passes = -(-32 // bits)
    tiles = -(-n // tile)
    return passes * (32 * n + 20 * (1 << bits) * tiles) / bandwidth


def bound_table_once(n, bits, tile, bandwidth):
    return -(-32 // bits) * (32 * n + 4 * (1 << bits) * -(-n // tile)) / bandwidth


def bound_no_partial_pass(n, bits, tile, bandwidth):
    return (32 // bits) * (32 * n + 20 * (1 << bits) * -(-n // tile)) / bandwidth


@pytest.mark.parametrize("fn,expected", [
    (bound_ok, None),
    (bound_table_once, "count per pass"),
    (bound_no_partial_pass, "count per pass"),
])
def test_bound_verdict(fn, expected):
    assert_judged(ch13.radix_time_bound, fn, expected)


def test_bound_worked_numbers():
    """The radix that makes the model lowest: 8 bits for 2^28 pairs, at tiles of 256 and 2048;
    16 bits is far worse (a table of 65,536 counters per tile)."""
    big = 1 << 28
    for tile in (256, 2048):
        times = [bound_ok(big, r, tile, ch13.BANDWIDTH) for r in range(1, 17)]
        assert int(np.argmin(times)) + 1 == 8
    assert abs(bound_ok(big, 4, 256, ch13.BANDWIDTH) - 14.876e-3) < 1e-6
