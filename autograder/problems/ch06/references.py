"""Chapter 6's reference kernels (timed beside the learner's in the speed tests, same launch),
the CuPy vendor call, and the exercises' plain solutions ``aag bench`` times beside them.

The transpose references are written for speed: unsigned indices (Numba then skips the
negative-index wrap-around code on every access). The register-tiled matmul's speed bar is set
against its plain solution (:func:`plain_register_tiled`); :func:`tuned_register_tiled` adds the
checklist's tricks (A's tile stored transposed and padded, 16-byte aligned shared arrays read as
128-bit words, ``LDS.128``) and is timed beside it, ungraded."""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

# The tiled transpose: TILE × TILE tiles, blocks of TILE × BLOCK_ROWS threads.
TILE = 32
BLOCK_ROWS = 8
TILE_PAD = TILE + 1     # the shared tile's row length; Numba needs a constant, not `TILE + 1`
TRANSPOSE_BLOCK = (TILE, BLOCK_ROWS)
# The register-tiled matmul: BM × BN tiles of C per block, TM × TN elements per thread.
BM = BN = 64
TM = TN = 8
MATMUL_BLOCK = (BN // TN, BM // TM)       # (8, 8) = 64 threads

cuda = float32 = uint64 = None   # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32", "uint64")


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
