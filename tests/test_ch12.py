"""Chapter 12: do the merge checks pass correct co-ranks and merges written several ways, and fail
every classic merge bug (ties broken the wrong way, j returned for i, a co-rank that is not a
device function, a merge loop that stops when one input runs out, an even split instead of
co-rank, a tiled merge missing a barrier, a skipped last partial tile, a tile's stale keys used
past the segment's end) with a verdict that says what went wrong? Are the inputs as the chapter
says (ties, empty arrays, odd sizes), and is the bound judged to float64 precision?"""

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag

from verdicts import assert_judged, verdict_text

ch12 = ag.problems.ch12
CPU = not ag.backend.is_gpu
TILE = ch12.course_tile()


# ---- the inputs and the spec ---------------------------------------------------------------------

def test_inputs_have_ties_empty_arrays_and_odd_sizes():
    """Do the cases hold what the chapter promises: every kind of keys, sorted float32 inputs,
    an empty A and an empty B, sizes that are multiples of nothing, many cross-array ties?"""
    kinds, empty_a, empty_b = set(), False, False
    for problem in (ch12.co_rank, ch12.merge_basic, ch12.merge_tiled):
        for hidden in (False, True):
            for case in problem.cases(hidden=hidden):
                A, B = case.inputs["A"], case.inputs["B"]
                assert A.dtype == B.dtype == np.float32
                assert np.all(np.diff(A) >= 0) and np.all(np.diff(B) >= 0)
                kinds.add(ch12.kind_of(A.size, B.size))
                empty_a |= A.size == 0
                empty_b |= B.size == 0
    assert kinds == set(ch12.KINDS) and empty_a and empty_b
    first = ch12.merge_basic.cases()[0]
    A, B = first.inputs["A"], first.inputs["B"]
    assert (A.size + B.size) % 32 and (A.size + B.size) % 8
    assert np.isin(A, B).sum() > A.size // 2          # most of A's keys also occur in B


def test_spec_is_the_stable_sort_and_samples_agree():
    """Is the spec NumPy's stable argsort of A‖B, and do the speed test's sampled values (a
    vectorised co-rank) agree with it everywhere, ties included?"""
    rng = np.random.default_rng(5)
    for kind in ch12.KINDS:
        for m, n in ((0, 7), (9, 0), (33, 20), (1, 1)):
            A, B = ch12.sorted_keys(rng, m, n, kind)
            order = np.argsort(np.concatenate([A, B]), kind="stable")
            C, src = ch12.merge_reference(A, B)
            assert np.array_equal(src, order)
            got_c, got_src = ch12.merged_at(A, B, np.arange(m + n))
            assert np.array_equal(got_c, C) and np.array_equal(got_src, src)
    A, B = ch12.fast_sorted_keys(rng, 10_000, 9_000)
    assert np.all(np.diff(A) >= 0) and np.isin(A, B).mean() > 0.9


# ---- 12.1 co_rank --------------------------------------------------------------------------------

@cuda.jit(device=True)
def co_rank_binary(k, A, m, B, n):
    lo = max(0, k - n)
    hi = min(k, m)
    while lo < hi:
        i = (lo + hi) // 2
        if A[i] <= B[k - i - 1]:
            lo = i + 1
        else:
            hi = i
    return lo


@cuda.jit(device=True)
def co_rank_two_branches(k, A, m, B, n):
    # PMPP's shape: start high, move i down while A[i-1] > B[j], up while B[j-1] >= A[i].
    i = min(k, m)
    j = k - i
    i_low = max(0, k - n)
    j_low = max(0, k - m)
    while True:
        if i > 0 and j < n and A[i - 1] > B[j]:
            delta = (i - i_low + 1) // 2
            j_low = j
            i -= delta
            j += delta
        elif j > 0 and i < m and B[j - 1] >= A[i]:
            delta = (j - j_low + 1) // 2
            i_low = i
            i += delta
            j -= delta
        else:
            return i


@cuda.jit(device=True)
def co_rank_unstable(k, A, m, B, n):
    lo = max(0, k - n)
    hi = min(k, m)
    while lo < hi:
        i = (lo + hi) // 2
        if A[i] < B[k - i - 1]:          # ties to B: not stable
            lo = i + 1
        else:
            hi = i
    return lo


@cuda.jit(device=True)
def co_rank_returns_j(k, A, m, B, n):
    lo = max(0, k - n)
    hi = min(k, m)
    while lo < hi:
        i = (lo + hi) // 2
        if A[i] <= B[k - i - 1]:
            lo = i + 1
        else:
            hi = i
    return k - lo


@cuda.jit(device=True)
def co_rank_wide_range_guarded(k, A, m, B, n):
    lo = 0                               # a wider range than needed, guarded: still right
    hi = min(k, m)
    while lo < hi:
        i = (lo + hi) // 2
        j = k - i - 1
        if j >= n or A[i] <= B[j]:
            lo = i + 1
        else:
            hi = i
    return lo


@cuda.jit(device=True)
def co_rank_no_low_clamp(k, A, m, B, n):
    lo = 0                               # forgets that B has only n keys: reads past its end
    hi = min(k, m)
    while lo < hi:
        i = (lo + hi) // 2
        if A[i] <= B[k - i - 1]:
            lo = i + 1
        else:
            hi = i
    return lo


@cuda.jit
def co_rank_a_kernel(k, A, m, B, n):
    pass


CO_RANK_CASES = {
    "co_rank_binary": (co_rank_binary, None),
    "co_rank_two_branches": (co_rank_two_branches, None),
    "co_rank_wide_range_guarded": (co_rank_wide_range_guarded, None),
    "co_rank_unstable": (co_rank_unstable, "ties go the wrong way"),
    "co_rank_returns_j": (co_rank_returns_j, "co_rank returned j = k - i"),
    "co_rank_a_kernel": (co_rank_a_kernel, "must be a device function"),
}


@pytest.mark.parametrize("name", sorted(CO_RANK_CASES))
def test_co_rank_verdict(name):
    """Is each co-rank judged as it should be (pass, or fail for the right reason)?"""
    fn, expected = CO_RANK_CASES[name]
    assert_judged(ch12.co_rank, fn, expected)


def test_co_rank_verdict_shows_the_search_state():
    """Does a wrong co-rank's verdict name k, the right i and j, and the keys around them?"""
    failure = verdict_text(ch12.co_rank, co_rank_unstable, hidden=False)
    assert "co_rank(k=" in failure and "should be i =" in failure and "A[" in failure


@pytest.mark.skipif(not CPU, reason="on a GPU a read past the end returns garbage, not an error")
def test_co_rank_without_the_low_clamp_reads_past_b():
    """Forgetting i >= k - n reads B past its end: CPU mode stops it and the hint says why."""
    failure = verdict_text(ch12.co_rank, co_rank_no_low_clamp, hidden=False)
    assert "out of bounds" in failure and "j = k - i stays within [0, n]" in failure, failure


# ---- 12.2 merge_basic ----------------------------------------------------------------------------

co_rank = co_rank_binary      # the learner's kernels call a global `co_rank`, as in the notebook


@cuda.jit
def basic_ok(A, B, C, src):
    m, n = A.size, B.size
    total = m + n
    per = (total + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    k0 = min(cuda.grid(1) * per, total)
    k1 = min(k0 + per, total)
    i = co_rank(k0, A, m, B, n)
    i_end = co_rank(k1, A, m, B, n)
    j = k0 - i
    j_end = k1 - i_end
    for k in range(k0, k1):
        if j >= j_end or (i < i_end and A[i] <= B[j]):
            C[k] = A[i]
            src[k] = i
            i += 1
        else:
            C[k] = B[j]
            src[k] = m + j
            j += 1


@cuda.jit(device=True)
def merge_sequential(A, i, i_end, B, j, j_end, C, src, k, m):
    # PMPP's shape: merge while both have keys, then copy what is left of either.
    while i < i_end and j < j_end:
        if A[i] <= B[j]:
            C[k] = A[i]
            src[k] = i
            i += 1
        else:
            C[k] = B[j]
            src[k] = m + j
            j += 1
        k += 1
    while i < i_end:
        C[k] = A[i]
        src[k] = i
        i += 1
        k += 1
    while j < j_end:
        C[k] = B[j]
        src[k] = m + j
        j += 1
        k += 1


@cuda.jit
def basic_ok_two_branches_device_merge(A, B, C, src):
    t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    m, n = A.size, B.size
    per = -(-(m + n) // (cuda.gridDim.x * cuda.blockDim.x))
    k0 = min(t * per, m + n)
    k1 = min((t + 1) * per, m + n)
    if k0 < k1:
        i0 = co_rank_two_branches(k0, A, m, B, n)
        i1 = co_rank_two_branches(k1, A, m, B, n)
        merge_sequential(A, i0, i1, B, k0 - i0, k1 - i1, C, src, k0, m)


@cuda.jit
def basic_unstable_loop(A, B, C, src):
    m, n = A.size, B.size
    total = m + n
    per = (total + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    k0 = min(cuda.grid(1) * per, total)
    k1 = min(k0 + per, total)
    i = co_rank(k0, A, m, B, n)
    i_end = co_rank(k1, A, m, B, n)
    j = k0 - i
    j_end = k1 - i_end
    for k in range(k0, k1):
        if j >= j_end or (i < i_end and A[i] < B[j]):      # ties to B
            C[k] = A[i]
            src[k] = i
            i += 1
        else:
            C[k] = B[j]
            src[k] = m + j
            j += 1


@cuda.jit
def basic_stops_when_one_runs_out(A, B, C, src):
    m, n = A.size, B.size
    total = m + n
    per = (total + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    k = min(cuda.grid(1) * per, total)
    k1 = min(k + per, total)
    i = co_rank(k, A, m, B, n)
    i_end = co_rank(k1, A, m, B, n)
    j = k - i
    j_end = k1 - i_end
    while i < i_end and j < j_end:                      # and the leftovers?
        if A[i] <= B[j]:
            C[k] = A[i]
            src[k] = i
            i += 1
        else:
            C[k] = B[j]
            src[k] = m + j
            j += 1
        k += 1


@cuda.jit
def basic_even_split(A, B, C, src):
    # Each thread takes the same share of A and of B, as if the output split that way.
    m, n = A.size, B.size
    threads = cuda.gridsize(1)
    t = cuda.grid(1)
    i, i_end = t * m // threads, (t + 1) * m // threads
    j, j_end = t * n // threads, (t + 1) * n // threads
    k = i + j
    while i < i_end or j < j_end:
        if j >= j_end or (i < i_end and A[i] <= B[j]):
            C[k] = A[i]
            src[k] = i
            i += 1
        else:
            C[k] = B[j]
            src[k] = m + j
            j += 1
        k += 1


@cuda.jit
def basic_src_j(A, B, C, src):
    m, n = A.size, B.size
    total = m + n
    per = (total + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    k0 = min(cuda.grid(1) * per, total)
    k1 = min(k0 + per, total)
    i = co_rank(k0, A, m, B, n)
    i_end = co_rank(k1, A, m, B, n)
    j = k0 - i
    j_end = k1 - i_end
    for k in range(k0, k1):
        if j >= j_end or (i < i_end and A[i] <= B[j]):
            C[k] = A[i]
            src[k] = i
            i += 1
        else:
            C[k] = B[j]
            src[k] = j                                     # not m + j
            j += 1


BASIC_CASES = {
    "basic_ok": (basic_ok, None),
    "basic_ok_two_branches_device_merge": (basic_ok_two_branches_device_merge, None),
    "basic_unstable_loop": (basic_unstable_loop, "equal keys came out in the wrong order"),
    "basic_stops_when_one_runs_out": (basic_stops_when_one_runs_out,
                                      "the rest comes from the other input"),
    "basic_even_split": (basic_even_split, "find them with co_rank at both ends"),
    "basic_src_j": (basic_src_j, "must be m + j"),
}


@pytest.mark.parametrize("name", sorted(BASIC_CASES))
def test_basic_verdict(name):
    """Is each basic merge judged as it should be (pass, or fail for the right reason)?"""
    fn, expected = BASIC_CASES[name]
    assert_judged(ch12.merge_basic, fn, expected)


def test_unstable_merge_has_the_right_keys_and_names_the_output():
    """The unstable merge gets every key of C right; the verdict points at `src` and the tie."""
    failure = verdict_text(ch12.merge_basic, basic_unstable_loop, hidden=False)
    assert "`src`" in failure and "should be A[" in failure


# ---- 12.3 merge_tiled ----------------------------------------------------------------------------

@cuda.jit
def tiled_thread0_splits(A, B, C, src):
    # The block's ends found once, by thread 0, and shared; both tiles loaded in one loop.
    sA = cuda.shared.array(TILE, float32)
    sB = cuda.shared.array(TILE, float32)
    ends = cuda.shared.array(2, np.int64)
    m, n = A.size, B.size
    t, nt = cuda.threadIdx.x, cuda.blockDim.x
    per = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
    k = min(cuda.blockIdx.x * per, m + n)
    k_end = min(k + per, m + n)
    if t == 0:
        ends[0] = co_rank(k, A, m, B, n)
        ends[1] = co_rank(k_end, A, m, B, n)
    cuda.syncthreads()
    a, a_end = ends[0], ends[1]
    b, b_end = k - a, k_end - a_end
    while k < k_end:
        na, nb = min(TILE, a_end - a), min(TILE, b_end - b)
        for x in range(t, TILE, nt):
            if x < na:
                sA[x] = A[a + x]
            if x < nb:
                sB[x] = B[b + x]
        cuda.syncthreads()
        out = min(TILE, k_end - k)
        per_t = (out + nt - 1) // nt
        lo = min(t * per_t, out)
        hi = min(lo + per_t, out)
        i = co_rank(lo, sA, na, sB, nb)
        i_end = co_rank(hi, sA, na, sB, nb)
        j, j_end = lo - i, hi - i_end
        for q in range(lo, hi):
            if j >= j_end or (i < i_end and sA[i] <= sB[j]):
                C[k + q] = sA[i]
                src[k + q] = a + i
                i += 1
            else:
                C[k + q] = sB[j]
                src[k + q] = m + b + j
                j += 1
        used = co_rank(out, sA, na, sB, nb)
        cuda.syncthreads()
        a += used
        b += out - used
        k += out


def _tiled(no_first_barrier=False, no_second_barrier=False, floor_tiles=False, stale_keys=False):
    """The course's tiled merge with one classic bug switched on."""
    @cuda.jit
    def kernel(A, B, C, src):
        sA = cuda.shared.array(TILE, float32)
        sB = cuda.shared.array(TILE, float32)
        m, n = A.size, B.size
        t, nt = cuda.threadIdx.x, cuda.blockDim.x
        per = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
        k = min(cuda.blockIdx.x * per, m + n)
        k_end = min(k + per, m + n)
        a = co_rank(k, A, m, B, n)
        a_end = co_rank(k_end, A, m, B, n)
        b, b_end = k - a, k_end - a_end
        vt = (TILE + nt - 1) // nt
        tiles = (k_end - k) // TILE if floor_tiles else (k_end - k + TILE - 1) // TILE
        for _ in range(tiles):
            na, nb = min(TILE, a_end - a), min(TILE, b_end - b)
            for x in range(t, na, nt):
                sA[x] = A[a + x]
            for x in range(t, nb, nt):
                sB[x] = B[b + x]
            if not no_first_barrier:
                cuda.syncthreads()
            if stale_keys:
                na, nb = TILE, TILE
            out = min(TILE, k_end - k)
            lo = min(t * vt, out)
            hi = min(lo + vt, out)
            i = co_rank(lo, sA, na, sB, nb)
            i_end = co_rank(hi, sA, na, sB, nb)
            j, j_end = lo - i, hi - i_end
            for q in range(k + lo, k + hi):
                if j >= j_end or (i < i_end and sA[i] <= sB[j]):
                    C[q] = sA[i]
                    src[q] = a + i
                    i += 1
                else:
                    C[q] = sB[j]
                    src[q] = m + b + j
                    j += 1
            used = co_rank(out, sA, na, sB, nb)
            if not no_second_barrier:
                cuda.syncthreads()
            a += used
            b += out - used
            k += out
    return kernel


RACE = "shared-memory race"
TILED_CASES = {
    # name: (kernel, None if correct else a fragment of the CPU-mode verdict, race only)
    "tiled_course_shape": (_tiled(), None, False),
    "tiled_thread0_splits": (tiled_thread0_splits, None, False),
    "tiled_no_first_barrier": (_tiled(no_first_barrier=True), RACE, True),
    "tiled_no_second_barrier": (_tiled(no_second_barrier=True), RACE, True),
    "tiled_floor_tiles": (_tiled(floor_tiles=True), "the block's last tile is partial", False),
    "tiled_stale_keys": (_tiled(stale_keys=True), "never TILE", False),
}


@pytest.mark.parametrize("name", sorted(TILED_CASES))
def test_tiled_verdict(name):
    """Is each tiled merge judged as it should be (pass, or fail for the right reason)?"""
    fn, expected, race_only = TILED_CASES[name]
    if race_only and not CPU:
        pytest.skip("a race may not show on a GPU; CPU mode's detector catches it every time")
    failure = verdict_text(ch12.merge_tiled, fn, hidden=expected is None)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        if CPU:
            assert expected in failure, failure
            if race_only:
                assert "cuda.syncthreads() after the block loads its tiles" in failure, failure


def test_course_kernels_agree_with_the_spec_on_awkward_launches():
    """The course's basic, tiled and circular kernels on a case with more threads than outputs,
    a one-key array, and blocks whose segments are empty."""
    for kernel in (ch12.reference_basic(), ch12.reference_tiled(), ch12.reference_circular()):
        for m, n, blocks in ((1, 0, 3), (0, 1, 2), (5, 70, 5)):
            A, B = ch12.sorted_keys(np.random.default_rng(m + n), m, n, "ties")
            d_C = cuda.device_array(m + n, np.float32)
            d_src = cuda.device_array(m + n, np.int32)
            kernel[blocks, 32](cuda.to_device(A), cuda.to_device(B), d_C, d_src)
            C, src = ch12.merge_reference(A, B)
            assert np.array_equal(d_C.copy_to_host(), C)
            assert np.array_equal(d_src.copy_to_host(), src)


# ---- 12.4 merge_time_bound -----------------------------------------------------------------------

def bound_ok(m, n, outputs_per_thread, key_reads, bandwidth, latency, resident_threads):
    memory = (4 * key_reads + 8) * (m + n) / bandwidth
    steps = min(m, n).bit_length()
    threads = -(-(m + n) // outputs_per_thread)
    waves = -(-threads // resident_threads)
    return max(memory, waves * (2 * steps + outputs_per_thread) * latency)


def bound_ok_float_logs(m, n, outputs_per_thread, key_reads, bandwidth, latency,
                        resident_threads):
    import math
    steps = math.ceil(math.log2(min(m, n) + 1))
    waves = math.ceil(math.ceil((m + n) / outputs_per_thread) / resident_threads)
    return max((m + n) * (4 * key_reads + 8) / bandwidth,
               latency * waves * (outputs_per_thread + 2 * steps))


def bound_no_waves(m, n, outputs_per_thread, key_reads, bandwidth, latency, resident_threads):
    memory = (4 * key_reads + 8) * (m + n) / bandwidth
    steps = min(m, n).bit_length()
    return max(memory, (2 * steps + outputs_per_thread) * latency)


def bound_reads_only(m, n, outputs_per_thread, key_reads, bandwidth, latency, resident_threads):
    memory = 4 * key_reads * (m + n) / bandwidth
    steps = min(m, n).bit_length()
    threads = -(-(m + n) // outputs_per_thread)
    waves = -(-threads // resident_threads)
    return max(memory, waves * (2 * steps + outputs_per_thread) * latency)


@pytest.mark.parametrize("fn,expected", [
    (bound_ok, None), (bound_ok_float_logs, None),
    (bound_no_waves, "the bound is the larger of two times"),
    (bound_reads_only, "the bound is the larger of two times"),
])
def test_bound_verdict(fn, expected):
    assert_judged(ch12.merge_time_bound, fn, expected)


def test_bound_worked_numbers():
    """The chapter's worked numbers: the basic kernel's latency floor falls as threads take more
    outputs, until the memory floor (0.67 ms for 2^28 keys at 4.8 TB/s) takes over."""
    half = 1 << 27
    times = [bound_ok(half, half, e, 1, ch12.BANDWIDTH, ch12.LATENCY, ch12.RESIDENT)
             for e in (4, 16, 64, 256)]
    assert times == sorted(times, reverse=True)
    assert abs(times[-1] - 12 * 2 * half / ch12.BANDWIDTH) < 1e-12
    assert bound_ok(half, half, 8, 2, ch12.BANDWIDTH, 0.0, ch12.RESIDENT) == \
        16 * 2 * half / ch12.BANDWIDTH
