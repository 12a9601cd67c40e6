"""Chapter 6's reference kernels (timed beside the learner's in the speed tests, same launch),
the CuPy vendor call, and the exercises' plain solutions ``aag bench`` times beside them.

The transpose references are written for speed: unsigned indices (Numba then skips the
negative-index wrap-around code on every access). The register-tiled matmul's speed bar is set
against its plain solution (:func:`plain_register_tiled`); :func:`tuned_register_tiled` adds the
checklist's tricks (A's tile stored transposed and padded, 16-byte aligned shared arrays read as
128-bit words, ``LDS.128``) and is timed beside it, ungraded."""

from __future__ import annotations

import numpy as np

from autograder.problems.kit.kernels import KernelCache, chose, pairs_fit

# The tiled transpose: TILE × TILE tiles, blocks of TILE × BLOCK_ROWS threads.
TILE = 32
BLOCK_ROWS = 8
TILE_PAD = TILE + 1     # the shared tile's row length; Numba needs a constant, not `TILE + 1`
TRANSPOSE_BLOCK = (TILE, BLOCK_ROWS)
# The register-tiled matmul: BM × BN tiles of C per block, TM × TN elements per thread.
BM = BN = 64
TM = TN = 8
MATMUL_BLOCK = (BN // TN, BM // TM)       # (8, 8) = 64 threads

cuda = float32 = uint32 = uint64 = None   # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32", "uint32", "uint64")


def cupy_transpose():
    import cupy as cp

    def run(inputs, outputs):
        cp.copyto(cp.asarray(outputs["out"]), cp.asarray(inputs["inp"]).T)
    return run


# ---- 6.1 naive transpose -------------------------------------------------------------------------

@_kernels.lazy
def reference_transpose_naive():
    @cuda.jit
    def transpose_naive_reference(inp, out):
        col, row = cuda.grid(2)
        if row < inp.shape[0] and col < inp.shape[1]:
            out[col, row] = inp[row, col]
    return transpose_naive_reference


# ---- 6.3 tiled transpose: a padded shared tile, coalesced both ways, thread coarsening -----------

@_kernels.lazy
def reference_transpose_tiled():
    @cuda.jit
    def transpose_tiled_reference(inp, out):
        tile = cuda.shared.array((TILE, TILE_PAD), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        m, n = inp.shape
        col = cuda.blockIdx.x * TILE + tx
        row = cuda.blockIdx.y * TILE + ty
        if col < n:
            for j in range(0, TILE, BLOCK_ROWS):
                if row + j < m:
                    tile[uint64(ty + j), uint64(tx)] = inp[uint64(row + j), uint64(col)]
        cuda.syncthreads()
        col = cuda.blockIdx.y * TILE + tx          # now a column of out (a row of inp)
        row = cuda.blockIdx.x * TILE + ty          # a row of out (a column of inp)
        if col < m:
            for j in range(0, TILE, BLOCK_ROWS):
                if row + j < n:
                    out[uint64(row + j), uint64(col)] = tile[uint64(tx), uint64(ty + j)]
    return transpose_tiled_reference


# ---- bench rows for issue 23's transpose goal: larger tiles, more loads in flight per thread -------

WIDE = 64                        # the wide tile's side
WIDE_PAD = WIDE + 1


class TileGrid:
    """``TileGrid(kernel, side, block)[blocks, threads](inp, out)``: launch ``kernel`` on its own
    grid of ``side × side`` tiles of the input, with its own ``block``, whatever shape the
    exercise's launch passes."""

    def __init__(self, kernel, side: int, block: tuple[int, int]):
        self.kernel, self.side, self.block = kernel, side, block

    def __getitem__(self, config):
        def launch(inp, out):
            m, n = inp.shape
            grid = ((n + self.side - 1) // self.side, (m + self.side - 1) // self.side)
            self.kernel[grid, self.block](inp, out)
        return launch


def _wide_transpose(rows_step: int):
    """A 64 × 64 tile (padded to 65 columns) per block of 32 × ``rows_step`` threads: each thread
    moves 2 · 64 / rows_step elements each way (two columns 32 apart), all its loads issued
    before the barrier, so a block keeps 16 KiB of loads in flight where the reference's 32 × 32
    tile keeps 4 KiB."""
    @cuda.jit
    def transpose_wide(inp, out):
        tile = cuda.shared.array((WIDE, WIDE_PAD), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        m, n = inp.shape
        row0 = cuda.blockIdx.y * WIDE
        col0 = cuda.blockIdx.x * WIDE
        for half in range(2):
            col = col0 + tx + 32 * half
            if col < n:
                for j in range(0, WIDE, rows_step):
                    if row0 + ty + j < m:
                        tile[uint64(ty + j), uint64(tx + 32 * half)] = \
                            inp[uint64(row0 + ty + j), uint64(col)]
        cuda.syncthreads()
        for half in range(2):
            col = row0 + tx + 32 * half                  # a column of out (a row of inp)
            if col < m:
                for j in range(0, WIDE, rows_step):
                    if col0 + ty + j < n:
                        out[uint64(col0 + ty + j), uint64(col)] = \
                            tile[uint64(tx + 32 * half), uint64(ty + j)]
    return transpose_wide


def wide_transpose_16():
    """64 × 64 tiles, blocks of 32 × 16 threads (8 elements per thread each way)."""
    return _kernels.get("wide_16", lambda: TileGrid(_wide_transpose(16), WIDE, (32, 16)))


def wide_transpose_8():
    """64 × 64 tiles, blocks of 32 × 8 threads (16 elements per thread each way)."""
    return _kernels.get("wide_8", lambda: TileGrid(_wide_transpose(8), WIDE, (32, 8)))


# ---- 8-byte accesses: each thread moves two floats per load and per store ------------------------

PAIR_COLS = 2 * TILE             # a pair tile: TILE rows × 64 columns of the input
PAIR_PAD = PAIR_COLS + 1
PAIR_LOADS = TILE // BLOCK_ROWS  # loads per thread


@_kernels.lazy
def _pair_transpose():
    """A 32 × 64 tile of the input per block of 32 × 8 threads, through uint64 views of both
    matrices: each thread loads 4 pairs of floats from 4 rows (8-byte loads: a warp reads 256
    contiguous bytes of a row), all four before it writes any to the tile (written load by load,
    the compiler let a thread wait for its first load with three issued), and stores 4 pairs
    (the two floats of a pair of out are two input rows: a warp writes 128 contiguous bytes of
    each of two rows of out). The tile's rows are 65 floats: the column reads are
    conflict-free; writing a load's two floats to the tile takes two passes per warp (lanes 16
    apart share a bank)."""
    @cuda.jit
    def transpose_pairs(inp2, out2):
        # inp2: the m × n input as m × n/2 pairs; out2: the n × m output as n × m/2 pairs.
        tile = cuda.shared.array((TILE, PAIR_PAD), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        m, half_n = inp2.shape
        n, half_m = out2.shape
        row0 = cuda.blockIdx.y * TILE
        col0 = cuda.blockIdx.x * PAIR_COLS
        pc = col0 // 2 + tx                              # this thread's pair column of inp
        if pc < half_n:
            got = cuda.local.array(PAIR_LOADS, uint64)
            for k in range(PAIR_LOADS):                  # every load issued before any store
                r = row0 + ty + k * BLOCK_ROWS
                got[k] = inp2[uint64(r), uint64(pc)] if r < m else uint64(0)
            for k in range(PAIR_LOADS):
                if row0 + ty + k * BLOCK_ROWS < m:
                    j = ty + k * BLOCK_ROWS
                    tile[uint64(j), uint64(2 * tx)] = \
                        uint32(got[k] & uint64(0xFFFFFFFF)).view(np.float32)
                    tile[uint64(j), uint64(2 * tx + 1)] = \
                        uint32(got[k] >> uint64(32)).view(np.float32)
        cuda.syncthreads()
        q, side = tx % 16, tx // 16                     # pair q of one of two rows of out
        opc = row0 // 2 + q                              # its pair column of out
        if opc < half_m:
            for j in range(0, PAIR_COLS, 2 * BLOCK_ROWS):
                oc = 2 * ty + side + j                   # the tile's column: a row of out
                if col0 + oc < n:
                    lo = tile[uint64(2 * q), uint64(oc)]
                    hi = tile[uint64(2 * q + 1), uint64(oc)]
                    out2[uint64(col0 + oc), uint64(opc)] = (
                        uint64(lo.view(np.uint32)) | (uint64(hi.view(np.uint32)) << uint64(32)))
    return transpose_pairs


class PairTranspose:
    """``PairTranspose()[blocks, threads](inp, out)``: the 8-byte transpose on a grid of its own
    where both matrices can be read as pairs (:func:`pairs_fit`: m and n even, 8-byte aligned),
    else the course reference with the launch it is given."""

    def __getitem__(self, config):
        def launch(inp, out):
            if not pairs_fit(inp, out):
                chose("the reference (no pairs: a dimension is odd or an array unaligned)")
                reference_transpose_tiled()[config](inp, out)
                return
            chose("8-byte pairs")
            m, n = inp.shape
            grid = ((n + PAIR_COLS - 1) // PAIR_COLS, (m + TILE - 1) // TILE)
            _pair_transpose()[grid, TRANSPOSE_BLOCK](inp.view(np.uint64), out.view(np.uint64))
        return launch


def pair_transpose():
    """8-byte loads and stores (uint64 views), a 32 × 64 tile per block of 32 × 8 threads."""
    return _kernels.get("pairs", PairTranspose)


# ---- 6.4 register-tiled matmul -------------------------------------------------------------------

REF_BK = 16                      # the tuned kernel's tile depth (the exercise's is 8)
_REF_SA_STRIDE = BM + 4          # the A tile is stored transposed: pad its rows against conflicts
_REF_SA_SIZE = REF_BK * _REF_SA_STRIDE
_REF_SB_SIZE = REF_BK * BN


@_kernels.lazy
def tuned_register_tiled():
    """64 × 64 tiles of C per block of 8 × 8 threads, 8 × 8 elements per thread, as the exercise,
    written for speed with what the chapter teaches after it (an ungraded bench row and chart row;
    the speed bar is set against :func:`plain_register_tiled`): A's tile stored transposed (with 4 floats of padding per row, so that the
    transposing stores hit different banks) and B's tile as it is, both 16-byte aligned; each
    thread owns rows 4·ty + {0..3} and 32 + 4·ty + {0..3} (and likewise columns), so its operands
    are two runs of 4 consecutive floats, read as 128-bit words; unsigned indices."""
    from autograder.machine import device
    threads = MATMUL_BLOCK[0] * MATMUL_BLOCK[1]
    a_rows_per_pass = threads // REF_BK
    # 16-byte aligned tiles let NVVM emit 128-bit shared loads itself (ld.shared.v4); the
    # simulator takes no alignment, so CPU mode (where the reference is only checked) has none.
    align = 16 if device.current().is_gpu else None

    @cuda.jit
    def matmul_register_tiled_tuned(A, B, C):
        sA = cuda.shared.array(_REF_SA_SIZE, float32, alignment=align)  # [k * stride + i]
        sB = cuda.shared.array(_REF_SB_SIZE, float32, alignment=align)  # [k * BN + j]
        acc = cuda.local.array((TM, TN), float32)
        a = cuda.local.array(TM, float32)
        b = cuda.local.array(TN, float32)
        M, K = A.shape
        N = B.shape[1]
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        tid = ty * MATMUL_BLOCK[0] + tx
        row0 = cuda.blockIdx.y * BM
        col0 = cuda.blockIdx.x * BN
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = float32(0)
        a_k, a_i = tid % REF_BK, tid // REF_BK      # this thread's A column and first row
        for k0 in range(0, K, REF_BK):
            for r in range(BM * REF_BK // threads):
                i = a_i + a_rows_per_pass * r
                sA[uint64(a_k * _REF_SA_STRIDE + i)] = (
                    A[uint64(row0 + i), uint64(k0 + a_k)]
                    if row0 + i < M and k0 + a_k < K else float32(0))
            for r in range(REF_BK * BN // threads):
                sB[uint64(tid + threads * r)] = (
                    B[uint64(k0 + r), uint64(col0 + tid)]
                    if k0 + r < K and col0 + tid < N else float32(0))
            cuda.syncthreads()
            pa, pb = uint64(4 * ty), uint64(4 * tx)
            for k in range(REF_BK):
                for q in range(4):
                    a[q] = sA[pa + uint64(q)]
                    a[q + 4] = sA[pa + uint64(q + 32)]
                    b[q] = sB[pb + uint64(q)]
                    b[q + 4] = sB[pb + uint64(q + 32)]
                for i in range(TM):
                    for j in range(TN):
                        acc[i, j] += a[i] * b[j]
                pa += uint64(_REF_SA_STRIDE)
                pb += uint64(BN)
            cuda.syncthreads()
        for i in range(TM):
            r = row0 + 4 * ty + i % 4 + 32 * (i // 4)
            for j in range(TN):
                c = col0 + 4 * tx + j % 4 + 32 * (j // 4)
                if r < M and c < N:
                    C[uint64(r), uint64(c)] = acc[i, j]
    return matmul_register_tiled_tuned


# ---- `aag bench` variants: the exercises' plain solutions, timed beside the references ----------

def plain_transpose(padded: bool):
    """The tiled transpose as the exercise's plain solution (signed indices), with the padded
    tile or (``padded=False``) a 32 × 32 one: a kernel factory for ``BENCH_VARIANTS``."""
    def make():
        if padded:
            @cuda.jit
            def transpose_tiled_plain(inp, out):
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
            return transpose_tiled_plain

        @cuda.jit
        def transpose_tiled_unpadded(inp, out):
            tile = cuda.shared.array((TILE, TILE), float32)
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
        return transpose_tiled_unpadded
    return lambda: _kernels.get(f"transpose_plain_{padded}", make)


_EX_BK = 8           # the exercise's tile depth


@_kernels.lazy
def plain_register_tiled():
    """The register-tiled matmul as the exercise's plain solution (signed indices, BK = 8): the
    speed bar's reference."""
    threads = MATMUL_BLOCK[0] * MATMUL_BLOCK[1]

    @cuda.jit
    def matmul_register_tiled_plain(A, B, C):
        sA = cuda.shared.array((_EX_BK, BM), float32)
        sB = cuda.shared.array((_EX_BK, BN), float32)
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
        for k0 in range(0, K, _EX_BK):
            for e in range(tid, BM * _EX_BK, threads):
                i, k = e // _EX_BK, e % _EX_BK
                sA[k, i] = A[row0 + i, k0 + k] if row0 + i < M and k0 + k < K else 0
                k, j = e // BN, e % BN
                sB[k, j] = B[k0 + k, col0 + j] if k0 + k < K and col0 + j < N else 0
            cuda.syncthreads()
            for k in range(_EX_BK):
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
    return matmul_register_tiled_plain


# ---- `aag bench` variants aimed at cuBLAS: 128 × 128 tiles, warp tiles, double buffering ---------
#
# Ungraded bench rows (BENCH_VARIANTS), each with a launch of its own (:class:`OwnLaunch`: the
# grid and block come from C's shape, whatever launch the problem gives): blocks of 256 threads
# (one dimension), each block a 128 × 128 tile of C, each thread 8 × 8 elements of it. What each
# is meant to fix is in its factory's docstring; :func:`big_tile_kernel` is the one kernel they
# share, built with different constants.

BIG_BM = BIG_BN = 128            # the block's tile of C
BIG_THREADS = 256                # 8 warps, as 4 × 2 warp tiles of 32 × 64
BIG_WM, BIG_WN = 32, 64          # a warp's tile of C: 4 × 8 lanes of 8 × 8 elements each
_BIG_SA_STRIDE = BIG_BM + 4      # A's slice stored transposed, sA[k, m]: rows padded by 4 floats
_BIG_SB_STRIDE = BIG_BN          # B's slice stored as it is, sB[k, n]


def big_tile_shape(m: int, n: int) -> tuple[tuple[int, int], int]:
    """(blocks, threads) of the 128 × 128 variants for an M × N matrix C."""
    return ((n + BIG_BN - 1) // BIG_BN, (m + BIG_BM - 1) // BIG_BM), BIG_THREADS


class OwnLaunch:
    """A launchable for a kernel with a launch of its own: ``OwnLaunch(plain, paired)[blocks,
    threads](A, B, C)`` launches ``plain`` (or ``paired``, the 8-byte-load build, where K and N
    are even and A and B start on 8-byte boundaries) on :func:`big_tile_shape` of C, whatever
    ``blocks`` and ``threads`` it is given."""

    def __init__(self, plain, paired=None):
        self.plain, self.paired = plain, paired

    def pick(self, A, B):
        return self.paired if self.paired is not None and pairs_fit(A, B) else self.plain

    def __getitem__(self, config):
        def launch(A, B, C):
            (m, k), n = A.shape, B.shape[1]
            blocks, threads = big_tile_shape(m, n)
            kernel = self.pick(A, B)
            if self.paired is not None:
                chose("8-byte pairs" if kernel is self.paired else
                      "the one-float build (no pairs: K or N odd, or A or B unaligned)")
            # Flat views of A and B (no copy: both are C-contiguous), as uint64 pairs for the
            # paired build; the kernel indexes them with one running index each.
            a, b = A.reshape(m * k), B.reshape(k * n)
            if kernel is self.paired:
                a, b = a.view(np.uint64), b.view(np.uint64)
            kernel[blocks, threads](a, b, C, k)
        return launch


def big_tile_kernel(bk: int, double_buffer: bool = True, pairs: bool = False, gpu: bool = True):
    """The 128 × 128 kernel, built (not cached: see :func:`_big_variant`) for a K slice of ``bk``
    (8 or 16), with two shared buffers (``double_buffer``: the next slice goes from global memory
    to registers while the current one is computed on, then to the other buffer; one barrier per
    slice) or one (load, barrier, compute, barrier), reading A and B as 8-byte pairs (``pairs``:
    K and N must be even, A and B 8-byte aligned; :class:`OwnLaunch` sees to it) or one float at
    a time. ``gpu``: 16-byte aligned shared arrays and ``launch_bounds`` (the simulator takes
    neither).

    Layout. Thread t is lane t % 32 of warp t // 32; the warp's tile of C is 32 × 64, at rows
    32·(w // 2) and columns 64·(w % 2) of the block's; lane l owns rows 4·(l // 8) + {0..3} and
    16 + 4·(l // 8) + {0..3} of it, and columns 4·(l % 8) + {0..3} and 32 + 4·(l % 8) + {0..3}:
    for each k its operands are four runs of 4 floats, each one 128-bit shared load. A warp's
    loads of B's row touch 8 × 16 = 128 consecutive bytes (one wavefront, no conflict) and of
    A's column 4 × 16 bytes (a broadcast): a warp moves 4 wavefronts of shared memory per 64 FFMA.

    Loads. A's slice (128 rows × bk) goes to shared memory transposed, sA[k·132 + m]: a warp
    reads 8 consecutive columns of 4 rows (whole 32-byte sectors; with bk = 16 the even warps take
    the slice's first 8 columns, the odd ones its last 8) and stores them into rows k of sA,
    132 = 4 (mod 32) floats apart: the warp's 32 stores hit 32 different banks. B's slice
    (bk rows × 128) is stored as it is: a warp reads and writes 32 consecutive floats. A and B
    come flat (1-D views, made by :class:`OwnLaunch`): one running index per matrix, advanced by
    a slice per pass, rows at fixed multiples of K or N from it. With ``pairs`` a thread moves
    two neighbours per load (A: k and k + 1 of one row, 4 pairs × 8 rows per warp, stored 132
    floats apart, still conflict-free; B: n and n + 1 of one row, stored side by side as one
    64-bit shared store). The inner k loop is written out 8 steps at a time (:func:`step`, an
    inlined device function): no loop counter, and ptxas may issue a step's shared loads while
    the previous step's FFMAs run.
    Elements outside A or B are stored as 0; C's rows and columns outside it are not written."""
    BM_, BN_, NT = BIG_BM, BIG_BN, BIG_THREADS
    SAS, SBS = _BIG_SA_STRIDE, _BIG_SB_STRIDE
    BK_ = bk
    SA_BUF, SB_BUF = BK_ * SAS, BK_ * SBS        # floats per buffer
    NBUF = 2 if double_buffer else 1
    SA_SIZE, SB_SIZE = NBUF * SA_BUF, NBUF * SB_BUF
    # One float per load: A's slice, thread t: column t % bk, rows t // bk + A_STEP·r.
    A_STEP, A_PER = NT // BK_, BM_ * BK_ // NT
    # B's slice, thread t: column t % 128, rows t // 128 + B_STEP·r.
    B_STEP, B_PER = NT // BN_, BN_ * BK_ // NT
    # 8-byte pairs: A, thread t: pair t % (bk / 2) (columns 2p, 2p + 1), rows t // (bk / 2) +
    # PA_STEP·r; B, thread t: pair t % 64 (columns 2p, 2p + 1), rows t // 64 + PB_STEP·r.
    A_PAIRS = BK_ // 2
    PA_STEP, PA_PER = NT // A_PAIRS, BM_ * A_PAIRS // NT
    B_PAIRS = BN_ // 2
    PB_STEP, PB_PER = NT // B_PAIRS, BK_ * B_PAIRS // NT
    NA = PA_PER if pairs else A_PER              # loads per thread per slice
    NB = PB_PER if pairs else B_PER
    KW = BK_ // 8                                # warps side by side along A's slice
    PAIRS = pairs
    DOUBLE = double_buffer
    align = 16 if gpu else None
    opts = {"launch_bounds": (NT, 2)} if gpu else {}   # at most 128 registers: 2 blocks per SM
    assert BM_ == 4 * BIG_WM and BN_ == 2 * BIG_WN and NT == 256 and BK_ in (8, 16)

    @cuda.jit(device=True, inline=True)
    def low(u):
        return uint32(u & uint64(0xFFFFFFFF)).view(np.float32)    # the pair's first float

    @cuda.jit(device=True, inline=True)
    def high(u):
        return uint32(u >> uint64(32)).view(np.float32)             # its second

    @cuda.jit(device=True, inline=True)
    def step(sA, sB, pa, pb, acc, a, b):
        """One k of the slice: this thread's 8 + 8 operands (four 128-bit loads), 64 FFMA."""
        for q in range(4):
            a[q] = sA[pa + uint64(q)]
            a[q + 4] = sA[pa + uint64(q + 16)]
            b[q] = sB[pb + uint64(q)]
            b[q + 4] = sB[pb + uint64(q + 32)]
        for i in range(8):
            for j in range(8):
                acc[i, j] += a[i] * b[j]

    @cuda.jit(**opts)
    def matmul_big_tile(A, B, C, K):
        # A and B flat (1-D views of the row-major M × K and K × N matrices: float32, or uint64
        # pairs of them with ``pairs``), C the M × N matrix.
        sA = cuda.shared.array(SA_SIZE, float32, alignment=align)     # [buf][k * SAS + m]
        sB = cuda.shared.array(SB_SIZE, float32, alignment=align)     # [buf][k * SBS + n]
        acc = cuda.local.array((8, 8), float32)
        a = cuda.local.array(8, float32)
        b = cuda.local.array(8, float32)
        ra = cuda.local.array(NA, float32)          # the next slice, on its way to shared memory
        rb = cuda.local.array(NB, float32)
        ra2 = cuda.local.array(NA, float32)         # (pairs: the second floats)
        rb2 = cuda.local.array(NB, float32)
        M, N = C.shape
        tid = cuda.threadIdx.x
        row0 = cuda.blockIdx.y * BM_
        col0 = cuda.blockIdx.x * BN_
        warp, lane = tid // 32, tid % 32
        am = (warp // 2) * BIG_WM + (lane // 8) * 4      # this thread's first row in the tile
        bn = (warp % 2) * BIG_WN + (lane % 8) * 4        # and first column
        for i in range(8):
            for j in range(8):
                acc[i, j] = float32(0)
        # This thread's share of the loads, through 1-D views of A and B (one running index per
        # matrix, advanced by a slice per pass; rows r apart at a fixed multiple of K or N).
        # A: a warp reads 8 consecutive columns (4 pairs) of 4 (8) rows; with bk = 16 the even
        # warps read the slice's first 8 columns, the odd ones its last 8.
        if PAIRS:
            akp = lane % 4 + 4 * (warp % KW)        # this thread's pair of columns of A's slice
            ak = 2 * akp
            ai = lane // 4 + 8 * (warp // KW)
            bjp = tid % B_PAIRS                     # and of B's
            bj, bk0 = 2 * bjp, tid // B_PAIRS
            a_at = uint64((row0 + ai) * (K // 2) + akp)         # in pairs
            a_row = uint64(PA_STEP * (K // 2))
            a_next = uint64(A_PAIRS)
            b_at = uint64(bk0 * (N // 2) + col0 // 2 + bjp)
            b_row = uint64(PB_STEP * (N // 2))
            b_next = uint64(BK_ * (N // 2))
            a_step, b_step = PA_STEP, PB_STEP
        else:
            ak = lane % 8 + 8 * (warp % KW)
            ai = lane // 8 + 4 * (warp // KW)
            bj, bk0 = tid % BN_, tid // BN_
            a_at = uint64((row0 + ai) * K + ak)                 # in floats
            a_row = uint64(A_STEP * K)
            a_next = uint64(BK_)
            b_at = uint64(bk0 * N + col0 + bj)
            b_row = uint64(B_STEP * N)
            b_next = uint64(BK_ * N)
            a_step, b_step = A_STEP, B_STEP
        b_in = col0 + bj < N                        # this thread's column of B is in the matrix
        nslices = (K + BK_ - 1) // BK_
        for t in range(nslices + 1 if DOUBLE else nslices):
            # 1. Global -> registers: slice t (double buffering: slice t is loaded while slice
            #    t - 1 is computed on; the loop's last pass loads nothing and only computes).
            k0 = t * BK_
            a_in = k0 + ak < K
            for r in range(NA):
                if a_in and row0 + ai + a_step * r < M:
                    if PAIRS:
                        p = A[a_at + uint64(r) * a_row]
                        ra[r], ra2[r] = low(p), high(p)
                    else:
                        ra[r] = A[a_at + uint64(r) * a_row]
                else:
                    ra[r], ra2[r] = float32(0), float32(0)
            for r in range(NB):
                if b_in and k0 + bk0 + b_step * r < K:
                    if PAIRS:
                        p = B[b_at + uint64(r) * b_row]
                        rb[r], rb2[r] = low(p), high(p)
                    else:
                        rb[r] = B[b_at + uint64(r) * b_row]
                else:
                    rb[r], rb2[r] = float32(0), float32(0)
            a_at += a_next
            b_at += b_next
            # 2. Compute on the slice already in shared memory (t - 1; single buffer: t, after
            #    storing it).
            if DOUBLE:
                cur = (t + 1) & 1                    # slice t - 1's buffer
                nxt = t & 1                          # slice t's buffer
            else:
                cur = 0
                nxt = 0
                # stores (below, 3) first, then compute
                for r in range(NA):
                    if PAIRS:
                        base = uint64(ak * SAS + ai + PA_STEP * r)
                        sA[base] = ra[r]
                        sA[base + uint64(SAS)] = ra2[r]
                    else:
                        sA[uint64(ak * SAS + ai + A_STEP * r)] = ra[r]
                for r in range(NB):
                    if PAIRS:
                        base = uint64((bk0 + PB_STEP * r) * SBS + bj)
                        sB[base] = rb[r]
                        sB[base + uint64(1)] = rb2[r]
                    else:
                        sB[uint64((bk0 + B_STEP * r) * SBS + bj)] = rb[r]
                cuda.syncthreads()
            if t > 0 or not DOUBLE:
                pa = uint64(cur * SA_BUF + am)
                pb = uint64(cur * SB_BUF + bn)
                for kk in range(BK_ // 8):           # 8 k steps written out: no loop counter,
                    step(sA, sB, pa, pb, acc, a, b)  # and the next step's shared loads can be
                    step(sA, sB, pa + uint64(SAS), pb + uint64(SBS), acc, a, b)   # issued early
                    step(sA, sB, pa + uint64(2 * SAS), pb + uint64(2 * SBS), acc, a, b)
                    step(sA, sB, pa + uint64(3 * SAS), pb + uint64(3 * SBS), acc, a, b)
                    step(sA, sB, pa + uint64(4 * SAS), pb + uint64(4 * SBS), acc, a, b)
                    step(sA, sB, pa + uint64(5 * SAS), pb + uint64(5 * SBS), acc, a, b)
                    step(sA, sB, pa + uint64(6 * SAS), pb + uint64(6 * SBS), acc, a, b)
                    step(sA, sB, pa + uint64(7 * SAS), pb + uint64(7 * SBS), acc, a, b)
                    pa += uint64(8 * SAS)
                    pb += uint64(8 * SBS)
            # 3. Registers -> the other shared buffer (its last readers, slice t - 2's, passed
            #    the barrier at the end of the previous pass), then one barrier.
            if DOUBLE:
                oa = nxt * SA_BUF
                ob = nxt * SB_BUF
                for r in range(NA):
                    if PAIRS:
                        base = uint64(oa + ak * SAS + ai + PA_STEP * r)
                        sA[base] = ra[r]
                        sA[base + uint64(SAS)] = ra2[r]
                    else:
                        sA[uint64(oa + ak * SAS + ai + A_STEP * r)] = ra[r]
                for r in range(NB):
                    if PAIRS:
                        base = uint64(ob + (bk0 + PB_STEP * r) * SBS + bj)
                        sB[base] = rb[r]
                        sB[base + uint64(1)] = rb2[r]
                    else:
                        sB[uint64(ob + (bk0 + B_STEP * r) * SBS + bj)] = rb[r]
            cuda.syncthreads()
        for i in range(8):
            r = row0 + am + i % 4 + 16 * (i // 4)
            for j in range(8):
                c = col0 + bn + j % 4 + 32 * (j // 4)
                if r < M and c < N:
                    C[uint64(r), uint64(c)] = acc[i, j]
    return matmul_big_tile


def _big_variant(key: str, bk: int, double_buffer: bool = True, pairs: bool = False):
    """The :class:`OwnLaunch` of one build of :func:`big_tile_kernel` (cached under ``key``)."""
    def make():
        from autograder.machine import device
        gpu = device.current().is_gpu
        plain = big_tile_kernel(bk, double_buffer, False, gpu)
        return OwnLaunch(plain, big_tile_kernel(bk, double_buffer, True, gpu) if pairs else None)
    return _kernels.get(key, make)


def big_tile_bk8():
    """128 × 128 tiles, 256 threads, warp tiles of 32 × 64, 8 × 8 per thread, BK = 8, double
    buffered (:func:`big_tile_kernel`). Meant to fix, against ``tuned_register_tiled`` (64 × 64,
    64 threads, one buffer): (1) L2 → SM traffic: each block reads 256 floats per k for 16,384
    FFMA instead of 128 for 4,096 (half the loads per FLOP); (2) the stall at the barrier: the
    next slice's global loads are in flight while the current one is computed on, and one barrier
    per slice instead of two; (3) the 34.5M shared-store bank conflicts: A's transposing stores
    land 132 = 4 (mod 32) floats apart per k, 8 columns × 4 rows per warp, 32 different banks;
    (4) shared-load wavefronts: a warp's 32 × 64 tile reads 128 B of B's row per LDS.128 (one
    wavefront) where a 16 × 128 strip reads 256 B (two); (5) loop overhead: the k loop written
    out (512 FFMA of ~700 instructions per slice, against 64 of ~78 per k). ptxas (CUDA 13.5,
    sm_90, launch bounds (256, 2)): 128 registers, 24 B spilled (6 local loads per slice, L1
    hits), 17,664 B shared memory per block (16.6 KB of arrays): 2 blocks = 16 warps per SM."""
    return _big_variant("big_bk8", 8)


def big_tile_bk16():
    """As :func:`big_tile_bk8` with BK = 16: half the barriers and half the loop overhead per
    FLOP, twice the loads in flight per thread (8 + 8 floats of the next slice in registers),
    shared memory 2 × (16 × 132 + 16 × 128) × 4 B = 33.3 KB per block. Meant to fix the barrier
    and latency stalls that remain at BK = 8; at risk from registers: ptxas gives 128 registers
    and 40 B spilled (8 local loads per slice of 1,024 FFMA)."""
    return _big_variant("big_bk16", 16)


def big_tile_pairs():
    """As :func:`big_tile_bk8`, reading A and B from global memory as 8-byte pairs (a uint64
    view, as chapter 10's sum): 2 + 2 loads per thread per slice instead of 4 + 4, and B's pairs
    stored side by side (one 64-bit shared store where NVVM merges them). Meant to fix the
    load-issue overhead (address arithmetic, bounds tests, LDG count) of the slice loads. Used
    where K and N are even and A and B start on 8-byte boundaries; otherwise the launch falls
    back to :func:`big_tile_bk8`'s kernel (every odd-sided check case: the GPU's visible cases
    all have K or N odd, so only the CPU-mode test of even sizes checks the paired build).
    ptxas: 128 registers, no spill, LDG.E.64 and STS.64."""
    return _big_variant("big_pairs", 8, pairs=True)


def big_tile_single():
    """As :func:`big_tile_bk8` with one shared buffer (load, barrier, compute, barrier), no
    prefetch: the control that tells what the double buffering of :func:`big_tile_bk8` is worth
    (ptxas: 128 registers, no spill, 9,344 B shared memory per block)."""
    return _big_variant("big_single", 8, double_buffer=False)


# ---- bench rows: a transpose that overlaps each block's loads with its stores ---------------------
#
# Nsight Compute on the reference (H200, 8192 × 12288): DRAM 67% of peak, SM 62%, 93% of warps
# active, 4 sectors per request: nothing is saturated. Each block issues its loads, waits at the
# barrier for all of them, then stores and exits, so the memory system sees load phases and store
# phases. The rows below keep loads in flight while a block stores: persistent blocks (a few per
# SM) walk the 32 × 32 tiles grid-stride, holding the next tile's loads in registers across the
# barrier; and/or walk the tiles in bands, so that the tiles in flight at once share DRAM rows of
# the output as well as of the input. Measured on the H200 (docs/benchmarks.md), all four were
# slower than the reference: 0.277-0.279 ms persistent, 0.267 ms banded, against 0.232 ms.

int64 = None                      # bound by _tkernels on first use (as cuda, float32... above)
_tkernels = KernelCache(globals(), "cuda", "float32", "uint32", "uint64", "int64")
PERSIST_BLOCKS_PER_SM = 8         # 8 × 256 threads = 2048: a full SM (launch bounds: 32 registers)
BAND = 32                         # tile rows per band of the banded order


def _sm_count() -> int:
    from autograder.machine import device
    if not device.current().is_gpu:
        return 0
    return cuda.get_current_device().MULTIPROCESSOR_COUNT


class PersistentGrid:
    """``PersistentGrid(kernel, blocks_per_sm)[blocks, threads](inp, out)``: launch ``kernel`` on a
    1-D grid of ``blocks_per_sm`` blocks of (32, 8) threads per SM (never more blocks than 32 × 32
    tiles), whatever launch the exercise passes; each block walks the tiles grid-stride. In CPU
    mode the grid is at most 3 blocks, so that the simulator runs blocks of several tiles (and of
    different tile counts)."""

    def __init__(self, kernel, blocks_per_sm: int):
        self.kernel, self.blocks_per_sm = kernel, blocks_per_sm

    def __getitem__(self, config):
        def launch(inp, out):
            m, n = inp.shape
            tiles = ((m + TILE - 1) // TILE) * ((n + TILE - 1) // TILE)
            if tiles == 0:
                return
            sms = _sm_count()
            blocks = min(tiles, sms * self.blocks_per_sm if sms else 3)
            self.kernel[blocks, TRANSPOSE_BLOCK](inp, out)
        return launch


class LinearGrid:
    """``LinearGrid(kernel)[blocks, threads](inp, out)``: launch ``kernel`` on a 1-D grid of one
    (32, 8) block per 32 × 32 tile, whatever launch the exercise passes."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, config):
        def launch(inp, out):
            m, n = inp.shape
            tiles = ((m + TILE - 1) // TILE) * ((n + TILE - 1) // TILE)
            if tiles:
                self.kernel[tiles, TRANSPOSE_BLOCK](inp, out)
        return launch


def _tile_of():
    """A device function ``(t, ntx, nty, band) -> (bx, by)``: the ``t``-th tile (column bx, row by
    of the tile grid, ntx × nty tiles) when the tile rows are cut in bands of ``band`` rows (the
    last band maybe fewer), each walked column by column. ``band = 1`` is row-major order, the
    reference's blockIdx order."""
    @cuda.jit(device=True)
    def tile_of(t, ntx, nty, band):
        per_band = band * ntx
        b = t // per_band
        i = t - b * per_band
        h = min(band, nty - b * band)              # the rows of this band
        bx = i // h
        return bx, b * band + (i - bx * h)
    return tile_of


def _persistent_transpose(double_buffer: bool, band: int, gpu: bool):
    """A persistent 32 × 32-tile transpose for a 1-D grid of (32, 8)-thread blocks: block b moves
    tiles b, b + gridDim, b + 2·gridDim... (in :func:`_tile_of`'s order for ``band``). Each thread
    holds its 4 elements of the next tile in registers: they are loaded after the barrier of the
    current tile, so they are in flight while the current tile is stored. ``double_buffer``: two
    shared tiles used in turn, one barrier per tile; else one tile and a second barrier before it
    is overwritten."""
    tile_of = _tile_of()
    opts = {"launch_bounds": (TILE * BLOCK_ROWS, PERSIST_BLOCKS_PER_SM)} if gpu else {}
    nbuf = 2 if double_buffer else 1

    @cuda.jit(device=True)
    def load4(inp, row, col, m, n, r0, r1, r2, r3):
        """A thread's 4 elements of a tile (rows row, row + 8, row + 16, row + 24 of column
        col); those outside the array keep the values given (they are never stored)."""
        if col < n:
            if row < m:
                r0 = inp[uint64(row), uint64(col)]
            if row + 8 < m:
                r1 = inp[uint64(row + 8), uint64(col)]
            if row + 16 < m:
                r2 = inp[uint64(row + 16), uint64(col)]
            if row + 24 < m:
                r3 = inp[uint64(row + 24), uint64(col)]
        return r0, r1, r2, r3

    @cuda.jit(**opts)
    def transpose_persistent(inp, out):
        tiles = cuda.shared.array((nbuf, TILE, TILE_PAD), float32)
        tx, ty = int64(cuda.threadIdx.x), int64(cuda.threadIdx.y)
        m, n = inp.shape
        ntx = (n + TILE - 1) // TILE
        nty = (m + TILE - 1) // TILE
        total = ntx * nty
        step = int64(cuda.gridDim.x)
        t = int64(cuda.blockIdx.x)
        bx, by = tile_of(t, ntx, nty, band)
        zero = float32(0)
        r0, r1, r2, r3 = load4(inp, by * TILE + ty, bx * TILE + tx, m, n, zero, zero, zero, zero)
        buf = uint64(0)
        while True:
            tiles[buf, uint64(ty), uint64(tx)] = r0
            tiles[buf, uint64(ty + 8), uint64(tx)] = r1
            tiles[buf, uint64(ty + 16), uint64(tx)] = r2
            tiles[buf, uint64(ty + 24), uint64(tx)] = r3
            cuda.syncthreads()
            ocol, orow = by * TILE + tx, bx * TILE + ty          # out's column and row
            t += step
            if t < total:                                        # the next tile's loads
                bx, by = tile_of(t, ntx, nty, band)
                r0, r1, r2, r3 = load4(inp, by * TILE + ty, bx * TILE + tx, m, n, r0, r1, r2, r3)
            if ocol < m:                                         # the current tile's stores
                for j in range(0, TILE, BLOCK_ROWS):
                    if orow + j < n:
                        out[uint64(orow + j), uint64(ocol)] = tiles[buf, uint64(tx),
                                                                    uint64(ty + j)]
            if t >= total:
                break
            if nbuf == 2:
                buf ^= uint64(1)        # the other tile was last read before this barrier
            else:
                cuda.syncthreads()      # the one tile is read: reuse it
    return transpose_persistent


def _persistent_variant(key: str, double_buffer: bool, band: int):
    def make():
        from autograder.machine import device
        kernel = _persistent_transpose(double_buffer, band, device.current().is_gpu)
        return PersistentGrid(kernel, PERSIST_BLOCKS_PER_SM)
    return _tkernels.get(key, make)


def persistent_transpose_2buf():
    """Persistent blocks (8 of 32 × 8 threads per SM, launch bounds (256, 8): at most 32
    registers), each walking 32 × 32 tiles grid-stride in the reference's order, with two shared
    tiles used in turn. Meant to fix the reference's load phase / store phase alternation: the
    next tile's 4 loads per thread are issued right after the barrier, before the current tile is
    stored, so every thread keeps loads in flight while it stores; one barrier per tile (the other
    buffer was last read before the barrier just passed); no block launch or exit per tile."""
    return _persistent_variant("persist_2buf", True, 1)


def persistent_transpose_1buf():
    """As :func:`persistent_transpose_2buf` with one shared tile (4.2 KB per block): the next
    tile's loads, held in registers, stay in flight across a second barrier per tile (before the
    tile is overwritten). Tells whether the second buffer matters."""
    return _persistent_variant("persist_1buf", False, 1)


def persistent_transpose_banded():
    """As :func:`persistent_transpose_2buf`, tiles walked in bands of 32 tile rows, column by
    column within a band. Meant to fix DRAM page locality on the store side: in row-major order
    the ~1,000 tiles in flight (8 blocks × 132 SMs) span ~3 tile rows, so each output row gets
    ~3 × 128 B at a time, 48 KB apart from the next; in bands they span 32 tile rows × ~33
    columns: ~4 KB contiguous per row on both the load and the store side."""
    return _persistent_variant("persist_banded", True, BAND)


def banded_transpose():
    """The reference's kernel body, one block per tile on a 1-D grid whose blocks take the tiles
    in bands of 32 tile rows (:func:`_tile_of`). Meant to tell the tile order's effect (DRAM
    page locality on the store side, see :func:`persistent_transpose_banded`) apart from the
    persistent blocks'."""
    def make():
        tile_of = _tile_of()

        @cuda.jit
        def transpose_tiled_banded(inp, out):
            tile = cuda.shared.array((TILE, TILE_PAD), float32)
            tx, ty = int64(cuda.threadIdx.x), int64(cuda.threadIdx.y)
            m, n = inp.shape
            ntx = (n + TILE - 1) // TILE
            nty = (m + TILE - 1) // TILE
            bx, by = tile_of(int64(cuda.blockIdx.x), ntx, nty, BAND)
            col = bx * TILE + tx
            row = by * TILE + ty
            if col < n:
                for j in range(0, TILE, BLOCK_ROWS):
                    if row + j < m:
                        tile[uint64(ty + j), uint64(tx)] = inp[uint64(row + j), uint64(col)]
            cuda.syncthreads()
            col = by * TILE + tx
            row = bx * TILE + ty
            if col < m:
                for j in range(0, TILE, BLOCK_ROWS):
                    if row + j < n:
                        out[uint64(row + j), uint64(col)] = tile[uint64(tx), uint64(ty + j)]
        return LinearGrid(transpose_tiled_banded)
    return _tkernels.get("banded", make)
