"""Chapter 6: do the transpose checks pass correct kernels and fail each classic bug (swapped
indices on a non-square matrix, a missing guard, a missing barrier, untransposed block indices, no
coarsening loop), exactly? Is the sectors exercise exact, the register-tiled matmul check sound,
are the course's reference kernels correct, and does the bank-conflict counter see the padding?"""

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag

from verdicts import judge_entry, verdict_text as _verdict

ch06 = ag.problems.ch06
CPU = not ag.backend.is_gpu
TILE, BLOCK_ROWS, TILE_PAD = 32, 8, 33
BM = BN = 64
BK = 8
TM = TN = 8
THREADS = 64




# ---- transpose_naive -------------------------------------------------------------------------------

@cuda.jit
def naive_ok(inp, out):
    col, row = cuda.grid(2)
    if row < inp.shape[0] and col < inp.shape[1]:
        out[col, row] = inp[row, col]


@cuda.jit
def naive_ok_explicit(inp, out):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row >= out.shape[1] or col >= out.shape[0]:     # out's shape, the right way round
        return
    out[col, row] = inp[row, col]


@cuda.jit
def naive_swapped(inp, out):
    # Guards with the output's shape and swaps the indices: right on squares only.
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = inp[col, row]


@cuda.jit
def naive_no_guard(inp, out):
    col, row = cuda.grid(2)
    out[col, row] = inp[row, col]


@cuda.jit
def naive_copy(inp, out):
    # Copies in row order instead of transposing (a reshape, not a transpose).
    col, row = cuda.grid(2)
    if row < inp.shape[0] and col < inp.shape[1]:
        i = row * inp.shape[1] + col
        out[i // out.shape[1], i % out.shape[1]] = inp[row, col]


@cuda.jit
def naive_blockdim_x_twice(inp, out):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.y     # assumes square blocks
    if row < inp.shape[0] and col < inp.shape[1]:
        out[col, row] = inp[row, col]


@cuda.jit
def naive_float16(inp, out):
    col, row = cuda.grid(2)
    if row < inp.shape[0] and col < inp.shape[1]:
        out[col, row] = np.float32(np.float16(inp[row, col]))


NAIVE = {
    "naive_ok": (naive_ok, None),
    "naive_ok_explicit": (naive_ok_explicit, None),
    "naive_swapped": (naive_swapped, ("a 37 × 45 input", "were never written", "square")),
    "naive_no_guard": (naive_no_guard, ("out of bounds", "Guard both coordinates")),
    "naive_copy": (naive_copy, ("elements are wrong", "out[col, row] = inp[row, col]")),
    "naive_blockdim_x_twice": (naive_blockdim_x_twice, ("never written",)),
    "naive_float16": (naive_float16, ("elements are wrong",)),
}


@pytest.mark.parametrize("name", sorted(NAIVE))
def test_naive_transpose_verdict(name):
    """Is each naive transpose judged as it should be (pass, or fail for the right reason)?"""
    judge_entry(ch06.transpose_naive, NAIVE, name)


def test_naive_cases_are_non_square_and_exact():
    """Non-square first, no side a multiple of a block side; the tolerance is zero (a copy)."""
    first = ch06.transpose_naive.cases()[0]
    m, n = first.size
    assert m != n and m % 8 and n % 16
    assert first.threads == (16, 8)
    assert first.blocks == ((n + 15) // 16, (m + 7) // 8)
    exp = ch06.transpose_naive.expected(first)
    np.testing.assert_array_equal(exp["out"], first.inputs["inp"].T)
    assert not ch06.transpose_naive.tolerance(first.inputs, exp)["out"].any()
    for case in ch06.transpose_naive.cases(hidden=True):
        assert case.threads in ag.problems.ch03.BLOCK_SHAPES


# ---- sectors_per_warp -----------------------------------------------------------------------------

def sectors_ok(stride_bytes, elem_bytes):
    seen = set()
    for t in range(32):
        a = t * stride_bytes
        seen.update(range(a // 32, (a + elem_bytes - 1) // 32 + 1))
    return len(seen)


def sectors_ok_bytes(stride_bytes, elem_bytes):
    return len({(t * stride_bytes + b) // 32 for t in range(32) for b in range(elem_bytes)})


def sectors_first_only(stride_bytes, elem_bytes):
    # Forgets that a value can straddle two sectors.
    return len({t * stride_bytes // 32 for t in range(32)})


def sectors_formula(stride_bytes, elem_bytes):
    # The span divided by 32: right for small strides, wrong when strided accesses skip sectors.
    return -(-(31 * stride_bytes + elem_bytes) // 32)


def sectors_capped(stride_bytes, elem_bytes):
    # "One sector per thread at most, 32 in all": forgets straddling and sharing.
    return min(32, max(1, -(-32 * stride_bytes // 32)))


SECTORS = {
    "sectors_ok": (sectors_ok, None),
    "sectors_ok_bytes": (sectors_ok_bytes, None),
    "sectors_first_only": (sectors_first_only, ("`sectors`[6]", "straddle")),
    "sectors_formula": (sectors_formula, ("`sectors`[1]",)),
    "sectors_capped": (sectors_capped, ("elements are wrong",)),
}


@pytest.mark.parametrize("name", sorted(SECTORS))
def test_sectors_verdict(name):
    """Is each answer to the coalescing exercise judged as it should be?"""
    fn, expected = SECTORS[name]
    failure = _verdict(ch06.sectors_per_warp, fn)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        for fragment in expected:
            assert fragment in failure, (fragment, failure)


def test_sectors_spec_numbers():
    """The chapter's worked numbers: a float32 row 4 sectors, a 37-column float32 column 32,
    stride 0 one, float64 neighbours 8, 8-byte values 12 bytes apart 12, 4-byte values 33 apart
    33 (some straddle), float4 neighbours 16."""
    got = ch06.sectors_spec([4, 148, 0, 8, 12, 33, 16], [4, 4, 4, 8, 8, 4, 16])
    np.testing.assert_array_equal(got, [4, 32, 1, 8, 12, 33, 16])
    case = ch06.sectors_per_warp.cases()[0]
    np.testing.assert_array_equal(ch06.sectors_per_warp.expected(case)["sectors"],
                                  [4, 32, 1, 8, 8, 12, 33, 16])


# ---- transpose_tiled ------------------------------------------------------------------------------

@cuda.jit
def tiled_ok(inp, out):
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        if row + j < inp.shape[0] and col < inp.shape[1]:
            tile[ty + j, tx] = inp[row + j, col]
    cuda.syncthreads()
    col, row = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        if row + j < out.shape[0] and col < out.shape[1]:
            out[row + j, col] = tile[tx, ty + j]


@cuda.jit
def tiled_ok_unpadded_while_loop(inp, out):
    # Unpadded (slow on a GPU, but right), a while loop, guards hoisted out of the loops.
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    m, n = inp.shape
    x0, y0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    if x0 + tx < n:
        j = ty
        while j < TILE and y0 + j < m:
            tile[j, tx] = inp[y0 + j, x0 + tx]
            j += BLOCK_ROWS
    cuda.syncthreads()
    if y0 + tx < m:
        j = ty
        while j < TILE and x0 + j < n:
            out[x0 + j, y0 + tx] = tile[tx, j]
            j += BLOCK_ROWS


def _tiled_variant(barrier=True, swap_blocks=True, transpose_tile=True, loop=True):
    @cuda.jit
    def kernel(inp, out):
        tile = cuda.shared.array((TILE, TILE_PAD), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        col, row = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
        for j in range(0, TILE if loop else 1, BLOCK_ROWS):
            if row + j < inp.shape[0] and col < inp.shape[1]:
                tile[ty + j, tx] = inp[row + j, col]
        if barrier:
            cuda.syncthreads()
        if swap_blocks:
            col, row = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
        for j in range(0, TILE if loop else 1, BLOCK_ROWS):
            if row + j < out.shape[0] and col < out.shape[1]:
                out[row + j, col] = tile[tx, ty + j] if transpose_tile else tile[ty + j, tx]
    return kernel


RACE = "shared-memory race on `tile`"
TILED = {
    "tiled_ok": (tiled_ok, None),
    "tiled_ok_unpadded_while_loop": (tiled_ok_unpadded_while_loop, None),
    "tiled_no_barrier": (_tiled_variant(barrier=False),
                         (RACE, "no cuda.syncthreads() between them", "before any thread reads")),
    "tiled_blocks_not_swapped": (_tiled_variant(swap_blocks=False), ("a 37 × 45 input",)),
    "tiled_tile_not_transposed": (_tiled_variant(transpose_tile=False),
                                  ("elements are wrong", "tile[tx, ty + j]")),
    "tiled_one_row_per_thread": (_tiled_variant(loop=False), ("were never written",)),
}


@pytest.mark.parametrize("name", sorted(TILED))
def test_tiled_transpose_verdict(name):
    """Is each tiled transpose judged as it should be (pass, or fail for the right reason)?"""
    judge_entry(ch06.transpose_tiled, TILED, name)


def test_tiled_cases_are_partial_tiles_launched_32_by_8():
    first = ch06.transpose_tiled.cases()[0]
    m, n = first.size
    assert m != n and m % TILE and n % TILE and max(m, n) > TILE
    for case in ch06.transpose_tiled.cases() + ch06.transpose_tiled.cases(hidden=True):
        assert case.threads == (TILE, BLOCK_ROWS)
        assert case.blocks == (-(-case.size[1] // TILE), -(-case.size[0] // TILE))
    blocks, threads = ch06.transpose_tiled.speed_launch(ch06.SPEED_TRANSPOSE)
    assert threads == (TILE, BLOCK_ROWS) and blocks == (12288 // TILE, 8192 // TILE)


def test_transpose_sample_matches_spec():
    """Does the speed test's sampled spec agree with the full spec (out[r, c] = inp[c, r])?"""
    rng = np.random.default_rng(3)
    inputs = ch06.transpose_tiled.speed_inputs(rng, (37, 45))
    full = ch06.transpose_tiled.expected(ag.problem.Case(size=(37, 45), inputs=inputs))["out"]
    idx = rng.choice(full.size, 200, replace=False)
    expected, tol = ch06.transpose_tiled.sample_spec(inputs, idx)
    np.testing.assert_array_equal(expected["out"], full.reshape(-1)[idx])
    assert not tol["out"].any()


# ---- matmul_register_tiled --------------------------------------------------------------------------

@cuda.jit
def register_ok(A, B, C):
    sA = cuda.shared.array((BK, BM), float32)
    sB = cuda.shared.array((BK, BN), float32)
    acc = cuda.local.array((TM, TN), float32)
    a = cuda.local.array(TM, float32)
    b = cuda.local.array(TN, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 8 + tx
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    M, K = A.shape
    N = B.shape[1]
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0
    for k0 in range(0, K, BK):
        for e in range(tid, BM * BK, THREADS):
            i, k = e // BK, e % BK
            sA[k, i] = A[row0 + i, k0 + k] if row0 + i < M and k0 + k < K else 0
            k, j = e // BN, e % BN
            sB[k, j] = B[k0 + k, col0 + j] if k0 + k < K and col0 + j < N else 0
        cuda.syncthreads()
        for k in range(BK):
            for i in range(TM):
                a[i] = sA[k, ty + 8 * i]
            for j in range(TN):
                b[j] = sB[k, tx + 8 * j]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]
        cuda.syncthreads()
    for i in range(TM):
        for j in range(TN):
            row, col = row0 + ty + 8 * i, col0 + tx + 8 * j
            if row < M and col < N:
                C[row, col] = acc[i, j]


@cuda.jit
def register_ok_contiguous(A, B, C):
    # Each thread owns an 8 × 8 block of consecutive rows and columns; A's tile not transposed;
    # a float64 accumulator; the inner loop stops at K in the last tile.
    sA = cuda.shared.array((BM, BK), float32)
    sB = cuda.shared.array((BK, BN), float32)
    acc = cuda.local.array((TM, TN), np.float64)
    a = cuda.local.array(TM, float32)
    b = cuda.local.array(TN, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 8 + tx
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    M, K = A.shape
    N = B.shape[1]
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0.0
    for k0 in range(0, K, BK):
        for e in range(tid, BM * BK, THREADS):
            r, c = e // BK, e % BK
            if row0 + r < M and k0 + c < K:
                sA[r, c] = A[row0 + r, k0 + c]
            else:
                sA[r, c] = 0.0
            r, c = e // BN, e % BN
            if k0 + r < K and col0 + c < N:
                sB[r, c] = B[k0 + r, col0 + c]
            else:
                sB[r, c] = 0.0
        cuda.syncthreads()
        for k in range(min(BK, K - k0)):
            for i in range(TM):
                a[i] = sA[8 * ty + i, k]
            for j in range(TN):
                b[j] = sB[k, 8 * tx + j]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]
        cuda.syncthreads()
    for i in range(TM):
        for j in range(TN):
            row, col = row0 + 8 * ty + i, col0 + 8 * tx + j
            if row < M and col < N:
                C[row, col] = acc[i, j]


def _register_variant(second_barrier=True, pad_zero=True, store_contiguous=False):
    @cuda.jit
    def kernel(A, B, C):
        sA = cuda.shared.array((BK, BM), float32)
        sB = cuda.shared.array((BK, BN), float32)
        acc = cuda.local.array((TM, TN), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        tid = ty * 8 + tx
        row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
        M, K = A.shape
        N = B.shape[1]
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = 0
        for k0 in range(0, K, BK):
            for e in range(tid, BM * BK, THREADS):
                i, k = e // BK, e % BK
                if row0 + i < M and k0 + k < K:
                    sA[k, i] = A[row0 + i, k0 + k]
                elif pad_zero:
                    sA[k, i] = 0
                k, j = e // BN, e % BN
                if k0 + k < K and col0 + j < N:
                    sB[k, j] = B[k0 + k, col0 + j]
                elif pad_zero:
                    sB[k, j] = 0
            cuda.syncthreads()
            for k in range(BK):
                for i in range(TM):
                    for j in range(TN):
                        acc[i, j] += sA[k, ty + 8 * i] * sB[k, tx + 8 * j]
            if second_barrier:
                cuda.syncthreads()
        for i in range(TM):
            for j in range(TN):
                if store_contiguous:      # computed with the strided mapping, stored contiguously
                    row, col = row0 + 8 * ty + i, col0 + 8 * tx + j
                else:
                    row, col = row0 + ty + 8 * i, col0 + tx + 8 * j
                if row < M and col < N:
                    C[row, col] = acc[i, j]
    return kernel


REGISTER = {
    "register_ok": (register_ok, None),
    "register_ok_contiguous": (register_ok_contiguous, None),
    "register_no_second_barrier": (_register_variant(second_barrier=False),
                                   ("shared-memory race on `s", "again after the reads")),
    "register_unpadded_edges": (_register_variant(pad_zero=False),
                                ("A 19 × 11 times B 11 × 23", "stored as 0")),
    "register_mapping_mismatch": (_register_variant(store_contiguous=True),
                                  ("elements are wrong", "ty + 8·i")),
}


@pytest.mark.parametrize("name", sorted(REGISTER))
def test_register_tiled_verdict(name):
    """Is each register-tiled matmul judged as it should be?"""
    judge_entry(ch06.matmul_register_tiled, REGISTER, name)


def test_register_cases_cover_several_blocks_and_k_tiles():
    """Some visible case spans 2 × 2 blocks, some K spans two tiles, sides never multiples of
    the tiles; every launch is 8 × 8 threads over 64 × 64 tiles of C; the tolerance is ch. 3's."""
    cases = ch06.matmul_register_tiled.cases()
    assert any(c.blocks == (2, 2) for c in cases)
    assert any(c.size[1] > BK for c in cases)
    assert all(s % BK for c in cases for s in c.size if s > 1)
    for case in cases + ch06.matmul_register_tiled.cases(hidden=True):
        m, k, n = case.size
        assert case.threads == (8, 8) and case.blocks == (-(-n // BN), -(-m // BM))
    case = cases[0]
    exp = ch06.matmul_register_tiled.expected(case)
    a, b = case.inputs["A"].astype(np.float64), case.inputs["B"].astype(np.float64)
    tol = ch06.matmul_register_tiled.tolerance(case.inputs, exp)["C"]
    assert np.allclose(tol, ag.checks.gamma(a.shape[1]) * (np.abs(a) @ np.abs(b)), rtol=1e-12,
                       atol=1e-37)


# ---- the course's reference kernels, and the bank-conflict counter --------------------------------

@pytest.mark.parametrize("problem", ["transpose_naive", "transpose_tiled", "matmul_register_tiled"])
def test_reference_kernels_pass_the_visible_check(problem):
    """The references the speed tests time must be right (CPU mode: the simulator runs them)."""
    p = getattr(ch06, problem)
    p.check(p.reference_kernel())


def test_register_tiled_bar_is_set_against_the_plain_algorithm():
    """The speed bar's reference is the algorithm the exercise asks for (the 8-deep tile and signed
    indices of its model solution), not the tuned kernel that uses what the chapter teaches after
    the exercise; the tuned one is still timed, as an ungraded bench row that passes the check."""
    import inspect

    from autograder.problems import bench_variants
    p = ch06.matmul_register_tiled
    source = inspect.getsource(p.reference_kernel().py_func)
    assert "uint64" not in source and "_EX_BK" in source, source
    assert p.speed.min_fraction_of_reference >= 0.5
    tuned = [f for label, f in bench_variants(p).items() if "tuned" in label]
    assert tuned == [ch06.tuned_register_tiled]
    p.check(tuned[0]())


@pytest.mark.parametrize("label", [label for label in
                                   ag.problems.bench_variants(ch06.matmul_register_tiled)
                                   if "128 × 128" in label])
def test_big_tile_bench_variants_are_right(label):
    """The 128 × 128 bench rows (their own launch: 256 threads, a grid over C) pass the visible
    check, and cases with K and N even, where the 8-byte-pair build runs, several blocks each
    way, K not a multiple of the slice."""
    import copy

    from autograder.grading.problem import Sizes
    p = ch06.matmul_register_tiled
    factory = ag.problems.bench_variants(p)[label]
    p.check(factory())
    even = copy.copy(p)
    even.cpu_sizes = even.gpu_sizes = Sizes(visible=((130, 24, 258), (70, 34, 2)), hidden=(),
                                            hidden_random=(0, 1, 2))
    verdict = even.verdict(factory(), even.cases())
    assert verdict.passed, verdict


def test_pair_transpose_is_right_where_pairs_fit_and_falls_back_elsewhere():
    """The 8-byte bench row: even shapes run the pair kernel (partial tiles both ways, several
    blocks each way), odd ones the reference; every output written, none twice wrong."""
    from autograder.problems.ch06.references import pair_transpose, pairs_fit
    launch = pair_transpose()[(1, 1), (TILE, BLOCK_ROWS)]
    rng = np.random.default_rng(6)
    for m, n, pairs in ((70, 130, True), (32, 64, True), (2, 2, True), (33, 64, False),
                        (64, 31, False)):
        x = rng.standard_normal((m, n)).astype(np.float32)
        d_out = cuda.to_device(np.full((n, m), np.nan, np.float32))
        d_x = cuda.to_device(x)
        assert pairs_fit(d_x, d_out) is pairs
        if not pairs:
            # the reference on the case's own launch: give it a grid that covers the matrix
            launch = pair_transpose()[((n + TILE - 1) // TILE, (m + TILE - 1) // TILE),
                                      (TILE, BLOCK_ROWS)]
        launch(d_x, d_out)
        np.testing.assert_array_equal(d_out.copy_to_host(), x.T)


@pytest.mark.skipif(not CPU, reason="counts recorded shared-memory accesses: CPU mode only")
def test_bank_conflicts_see_the_padding():
    """An unpadded 32 × 32 tile: the column reads take 32 passes per warp access; the padded one
    (its unused column invisible in the accesses, read from the declared shape): one pass."""
    x = np.arange(TILE * TILE, dtype=np.float32).reshape(TILE, TILE)
    rows = {}
    for name, kernel in (("padded", tiled_ok), ("unpadded", tiled_ok_unpadded_while_loop)):
        rows[name] = ch06.bank_conflicts(kernel, (1, 1), (TILE, BLOCK_ROWS), cuda.to_device(x),
                                         cuda.to_device(np.zeros_like(x)))
    for name, table in rows.items():
        by_kind = {r["kind"]: r for r in table}
        assert by_kind["write"]["ways"] == 1 and by_kind["write"]["accesses"] == 32, (name, table)
        assert by_kind["read"]["accesses"] == 32, (name, table)
    assert {r["kind"]: r["worst"] for r in rows["unpadded"]}["read"] == 32
    assert {r["kind"]: r["worst"] for r in rows["padded"]}["read"] == 1
    assert "passes/access" in ch06.bank_table(rows["padded"])
