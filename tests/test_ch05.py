"""Chapter 5: does the tiled-matmul check pass correct tiled kernels, at each tile side a learner
may choose (8, 16, 32), and fail each classic tiling bug (a missing barrier, unpadded edge tiles,
swapped tile indices, float16, a single phase) with a verdict that says what went wrong? Is the
roofline exercise judged to float64 precision?"""

import types

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag
from autograder.checks import CheckFailed

from verdicts import judge_entry
from verdicts import verdict_text as _verdict

ch05 = ag.problems.ch05
TILE = 8
CPU = not ag.backend.is_gpu


# ---- tiled_matmul ----------------------------------------------------------------------------------

@cuda.jit
def tiled_ok(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        a_col, b_row = t * TILE + tx, t * TILE + ty
        sA[ty, tx] = A[row, a_col] if row < A.shape[0] and a_col < A.shape[1] else 0
        sB[ty, tx] = B[b_row, col] if b_row < B.shape[0] and col < B.shape[1] else 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def tiled_ok_grid_and_partial_k(A, B, C):
    # cuda.grid(2), if/else loads, and an inner loop that stops at K in the last tile.
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    col, row = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    K = A.shape[1]
    acc = 0.0
    for start in range(0, K, TILE):
        if row < A.shape[0] and start + tx < K:
            sA[ty, tx] = A[row, start + tx]
        else:
            sA[ty, tx] = 0.0
        if start + ty < K and col < B.shape[1]:
            sB[ty, tx] = B[start + ty, col]
        else:
            sB[ty, tx] = 0.0
        cuda.syncthreads()
        for k in range(min(TILE, K - start)):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def _racy(first_barrier: bool, second_barrier: bool):
    @cuda.jit
    def kernel(A, B, C):
        sA = cuda.shared.array((TILE, TILE), float32)
        sB = cuda.shared.array((TILE, TILE), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * TILE + ty
        col = cuda.blockIdx.x * TILE + tx
        acc = float32(0)
        for t in range((A.shape[1] + TILE - 1) // TILE):
            a_col, b_row = t * TILE + tx, t * TILE + ty
            sA[ty, tx] = A[row, a_col] if row < A.shape[0] and a_col < A.shape[1] else 0
            sB[ty, tx] = B[b_row, col] if b_row < B.shape[0] and col < B.shape[1] else 0
            if first_barrier:
                cuda.syncthreads()
            for k in range(TILE):
                acc += sA[ty, k] * sB[k, tx]
            if second_barrier:
                cuda.syncthreads()
        if row < C.shape[0] and col < C.shape[1]:
            C[row, col] = acc
    return kernel


tiled_no_first_barrier = _racy(False, True)
tiled_no_second_barrier = _racy(True, False)


@cuda.jit
def tiled_unpadded(A, B, C):
    # Guarded loads with no else: past K the tile keeps the previous tile's values.
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        if row < A.shape[0] and t * TILE + tx < A.shape[1]:
            sA[ty, tx] = A[row, t * TILE + tx]
        if t * TILE + ty < B.shape[0] and col < B.shape[1]:
            sB[ty, tx] = B[t * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def tiled_unguarded_loads(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        sA[ty, tx] = A[row, t * TILE + tx]
        sB[ty, tx] = B[t * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def tiled_swapped_tile_index(A, B, C):
    # B's tile stored transposed (sB[tx, ty]) but read as if it were not.
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        a_col, b_row = t * TILE + tx, t * TILE + ty
        sA[ty, tx] = A[row, a_col] if row < A.shape[0] and a_col < A.shape[1] else 0
        sB[tx, ty] = B[b_row, col] if b_row < B.shape[0] and col < B.shape[1] else 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def tiled_float16(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = np.float16(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        a_col, b_row = t * TILE + tx, t * TILE + ty
        sA[ty, tx] = A[row, a_col] if row < A.shape[0] and a_col < A.shape[1] else 0
        sB[ty, tx] = B[b_row, col] if b_row < B.shape[0] and col < B.shape[1] else 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += np.float16(sA[ty, k]) * np.float16(sB[k, tx])
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = np.float32(acc)


RACE = "shared-memory race on `s"
CASES = {
    # name: (kernel, None if correct else fragments the CPU-mode verdict must contain)
    "tiled_ok": (tiled_ok, None),
    "tiled_ok_grid_and_partial_k": (tiled_ok_grid_and_partial_k, None),
    "tiled_no_first_barrier": (tiled_no_first_barrier,
                               (RACE, "no cuda.syncthreads() between them", "before any thread reads")),
    "tiled_unpadded": (tiled_unpadded, ("A 13 × 21 times B 21 × 10", "must store 0 in the tile")),
    "tiled_unguarded_loads": (tiled_unguarded_loads, ("out of bounds", "Guard both coordinates")),
    "tiled_swapped_tile_index": (tiled_swapped_tile_index, ("elements are wrong", "sB[k, tx]")),
    "tiled_float16": (tiled_float16, ("float16",)),
}




@pytest.mark.parametrize("name", sorted(CASES))
def test_tiled_submission_verdict(name):
    """Is each tiled kernel judged as it should be (pass, or fail for the right reason)?"""
    judge_entry(ch05.tiled_matmul, CASES, name)


@pytest.mark.skipif(not CPU, reason="the race detector is CPU mode's; on a GPU the race may not show")
def test_missing_second_barrier_fails_every_time():
    """Does a kernel missing only the second barrier fail on every run, naming both lines?"""
    for _ in range(3):
        with pytest.raises(CheckFailed) as info:
            ch05.tiled_matmul.check(tiled_no_second_barrier)
        text = str(info.value)
        assert RACE in text and "no cuda.syncthreads() between them" in text, text
        assert "acc += sA[ty, k] * sB[k, tx]" in text, text     # the read of the old tile
        assert "[ty, tx] = " in text, text                      # the write of the next one
        assert "again after the reads, before the tile is overwritten" in text, text


def test_cases_are_partial_tiles_at_every_tile_side():
    """Are no fixed sides multiples of 8 (so of no tile side: every edge tile partial)? At each
    tile side, does a visible case have several phases along K and several blocks across C, and
    do the hidden ones have several block rows?"""
    first = ch05.tiled_matmul.cases()[0]
    m, k, n = first.size
    assert all(s % TILE for s in (m, k, n)) and k > 2 * TILE and len({m, k, n}) == 3
    sizes = ch05.tiled_matmul.sizes
    for size in sizes.visible + sizes.hidden:
        assert size == (1, 1, 1) or all(s % 8 for s in size if s > 1), size
    for tile in ch05.TILES:
        assert any(k > tile and n > tile for _, k, n in sizes.visible), tile
        assert any(m > tile for m, _, _ in sizes.hidden), tile


class _Launches:
    """A stand-in kernel: records the launch shapes it is given; its function sees ``TILE``."""

    def __init__(self, tile):
        self.py_func = types.FunctionType((lambda A, B, C: None).__code__, {"TILE": tile})
        self.shapes = []

    def __getitem__(self, shape):
        self.shapes.append(shape)
        return lambda *args: None


@pytest.mark.parametrize("tile", [8, 16, 32])
def test_the_launch_uses_the_kernels_own_tile(tile):
    """Is the kernel launched with blocks of its own TILE × TILE threads, over all of C?"""
    kernel = _Launches(tile)
    for case in ch05.tiled_matmul.cases(hidden=True):
        ch05.tiled_matmul.launch(kernel, {"A": None, "B": None}, {"C": None}, case)
        m, _, n = case.size
        assert kernel.shapes[-1] == ((-(-n // tile), -(-m // tile)), (tile, tile))


@pytest.mark.parametrize("tile", [None, 4, 12, 64, True, "16"])
def test_a_tile_side_other_than_8_16_or_32_is_refused(tile):
    """Is a kernel without a TILE, or with one the check does not launch, failed with a verdict
    that says what to set?"""
    names = dict(tiled_ok.py_func.__globals__)
    names.pop("TILE")
    if tile is not None:
        names["TILE"] = tile
    fn = tiled_ok.py_func
    kernel = cuda.jit(types.FunctionType(fn.__code__, names, fn.__name__))
    failure = _verdict(ch05.tiled_matmul, kernel, hidden=False)
    assert failure and "set TILE = 8, 16 or 32" in failure, failure
    assert ("no TILE is defined" if tile is None else f"TILE is {tile!r}") in failure, failure


@pytest.mark.slow
@pytest.mark.parametrize("tile", [16, 32])
def test_a_correct_kernel_passes_at_every_tile_side(tile):
    """Does the same correct kernel pass, visible and hidden cases, with TILE = 16 and 32 (8:
    CASES above), compiled again for that side by the notebook's with_tile?"""
    kernel = ch05.with_tile(tiled_ok, tile)
    assert ch05.tile_of(kernel) == tile and ch05.tile_of(tiled_ok) == TILE
    failure = _verdict(ch05.tiled_matmul, kernel)
    assert failure is None, failure


def _one_phase(A, B, C):
    # One tile along K: the sum stops after the first TILE terms (right only when K <= TILE).
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    sA[ty, tx] = A[row, tx] if row < A.shape[0] and tx < A.shape[1] else 0
    sB[ty, tx] = B[ty, col] if ty < B.shape[0] and col < B.shape[1] else 0
    cuda.syncthreads()
    acc = float32(0)
    for k in range(TILE):
        acc += sA[ty, k] * sB[k, tx]
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def _inner_loop_of_8(A, B, C):
    # TILE everywhere but the inner loop, written for 8 × 8 tiles: right only at TILE = 8.
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        a_col, b_row = t * TILE + tx, t * TILE + ty
        sA[ty, tx] = A[row, a_col] if row < A.shape[0] and a_col < A.shape[1] else 0
        sB[ty, tx] = B[b_row, col] if b_row < B.shape[0] and col < B.shape[1] else 0
        cuda.syncthreads()
        for k in range(8):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@pytest.mark.slow
def test_a_kernel_right_at_one_tile_side_only_fails_at_the_others():
    """A single-phase kernel with 32 × 32 tiles is right for every K <= 32; an inner loop of 8
    products is right at TILE = 8 only. Does the visible check fail each at the side it states?"""
    one_phase = ch05.with_tile(cuda.jit(_one_phase), 32)
    failure = _verdict(ch05.tiled_matmul, one_phase, hidden=False)
    assert failure and "A 2 × 37 times B 37 × 35" in failure and "elements are wrong" in failure, \
        failure
    assert _verdict(ch05.tiled_matmul, ch05.with_tile(cuda.jit(_inner_loop_of_8), 8),
                    hidden=False) is None
    failure = _verdict(ch05.tiled_matmul, ch05.with_tile(cuda.jit(_inner_loop_of_8), 16),
                       hidden=False)
    assert failure and "elements are wrong" in failure, failure


def test_tiled_tolerance_is_chapter_3s():
    """Is the tolerance γ_K Σ|a b|, the same as the naive matmul's?"""
    case = ch05.tiled_matmul.cases()[0]
    exp = ch05.tiled_matmul.expected(case)
    a, b = case.inputs["A"].astype(np.float64), case.inputs["B"].astype(np.float64)
    tol = ch05.tiled_matmul.tolerance(case.inputs, exp)["C"]
    assert np.allclose(tol, ag.checks.gamma(a.shape[1]) * (np.abs(a) @ np.abs(b)), rtol=1e-12,
                       atol=1e-37)
    np.testing.assert_allclose(exp["C"], a @ b)


# ---- matmul_time_bound -----------------------------------------------------------------------------

def bound_ok(m, k, n, tile, peak_flops, bandwidth):
    flops = 2 * m * k * n
    traffic = 4 * (2 * m * k * n / tile + m * n)
    return max(flops / peak_flops, traffic / bandwidth)


def bound_ok_via_intensity(m, k, n, tile, peak_flops, bandwidth):
    intensity = 2 * m * k * n / (4 * (2 * m * k * n / tile + m * n))   # FLOP per byte
    return 2 * m * k * n / min(peak_flops, intensity * bandwidth)


def bound_sum(m, k, n, tile, peak_flops, bandwidth):
    return 2 * m * k * n / peak_flops + 4 * (2 * m * k * n / tile + m * n) / bandwidth


def bound_min(m, k, n, tile, peak_flops, bandwidth):
    return min(2 * m * k * n / peak_flops, 4 * (2 * m * k * n / tile + m * n) / bandwidth)


def bound_tile_squared(m, k, n, tile, peak_flops, bandwidth):
    return max(2 * m * k * n / peak_flops, 4 * (2 * m * k * n / tile ** 2 + m * n) / bandwidth)


def bound_no_c(m, k, n, tile, peak_flops, bandwidth):
    return max(2 * m * k * n / peak_flops, 4 * (2 * m * k * n / tile) / bandwidth)


def bound_rounded(m, k, n, tile, peak_flops, bandwidth):
    return float(f"{bound_ok(m, k, n, tile, peak_flops, bandwidth):.4g}")


BOUNDS = {
    "bound_ok": (bound_ok, None),
    "bound_ok_via_intensity": (bound_ok_via_intensity, None),
    "bound_sum": (bound_sum, "the larger of two times"),
    "bound_min": (bound_min, "the larger of two times"),
    "bound_tile_squared": (bound_tile_squared, "`seconds`[1]"),
    "bound_no_c": (bound_no_c, "inputs there"),
    "bound_rounded": (bound_rounded, "elements are wrong"),
}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_bound_verdict(name):
    """Is each answer to the roofline exercise judged as it should be?"""
    fn, expected = BOUNDS[name]
    failure = _verdict(ch05.matmul_time_bound, fn)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        assert expected in failure, failure


def test_bound_spec_numbers():
    """Do the worked numbers of the chapter hold: naive 4096³ memory bound at intensity 0.25,
    tile 16 at ~4 FLOP/byte, tile 64 compute bound on a 67 TFLOP/s, 4.8 TB/s device?"""
    m = k = n = 4096
    naive = ch05.matmul_bytes(m, k, n, 1)
    assert 2 * m * k * n / naive == pytest.approx(0.25, rel=1e-3)
    assert 2 * m * k * n / ch05.matmul_bytes(m, k, n, 16) == pytest.approx(4.0, rel=1e-2)
    case = ch05.matmul_time_bound.cases()[0]
    exp = ch05.matmul_time_bound.expected(case)["seconds"]
    assert exp[0] == pytest.approx(naive / 4.8e12)                     # memory bound
    assert exp[2] == pytest.approx(2 * m * k * n / 67e12)              # compute bound
    assert exp[1] > exp[2]
