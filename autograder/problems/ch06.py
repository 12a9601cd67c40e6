"""Chapter 6 (PMPP ch. 6, Performance considerations): memory coalescing through a matrix
transpose (naive, then tiled in shared memory with a padded tile and thread coarsening), the
sectors a warp's access moves (predict, then measure), and register tiling for a matmul.

Launch conventions (the learner writes only the kernel):

- ``transpose_naive``: 2-D blocks of ``case.threads = (x, y)`` threads over the INPUT, x along
  its columns: a grid of ``(ceil(N / x), ceil(M / y))`` blocks for an M × N input.
- ``transpose_tiled``: blocks of ``(TILE, BLOCK_ROWS) = (32, 8)`` threads, one block per
  ``TILE × TILE`` tile of the input: a grid of ``(ceil(N / 32), ceil(M / 32))``; each thread moves
  ``TILE / BLOCK_ROWS = 4`` elements.
- ``matmul_register_tiled``: blocks of ``(BN // TN, BM // TM) = (8, 8)`` threads, one block per
  ``BM × BN = 64 × 64`` tile of C: a grid of ``(ceil(N / 64), ceil(M / 64))``; each thread
  computes ``TM × TN = 8 × 8`` elements of C.

The course's reference kernels (timed beside the learner's in the speed tests, same launch) are
written for speed: unsigned indices (Numba then skips the negative-index wrap-around code on every
access), the matmul's A tile stored transposed and padded, 16-byte aligned shared arrays read as
128-bit words (``LDS.128``). Their shapes were checked in the SASS (ptxas for sm_90): the
transpose has no shared-memory bank conflict; the matmul has no spill, 64 FFMA per 4 LDS.128 in
its inner loop.

:func:`bank_conflicts` counts, in CPU mode, the shared-memory bank conflicts of a launch from the
race detector's recording (:func:`autograder.races.record`): the chapter's padded-tile lesson can
be measured without a GPU.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from numba import cuda, float32, uint64   # module globals: CPU mode swaps `cuda` for the simulator

from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch03 import (BLOCK_SHAPES, SPEED_MATMUL, VISIBLE_BLOCK, _compiled, _grid_over,
                   _matmul_inputs, _matmul_launch, _matmul_outputs, _matmul_sample, _matmul_spec,
                   _matmul_speed_inputs, _matmul_tolerance, _unravel, cupy_matmul, matmul_naive)
from autograder.problems.common import random_floats, random_floats_fast

# The tiled transpose: TILE × TILE tiles, blocks of TILE × BLOCK_ROWS threads.
TILE = 32
BLOCK_ROWS = 8
TILE_PAD = TILE + 1     # the shared tile's row length; Numba needs a constant, not `TILE + 1`
TRANSPOSE_BLOCK = (TILE, BLOCK_ROWS)
# The register-tiled matmul: BM × BN tiles of C per block, TM × TN elements per thread.
BM = BN = 64
TM = TN = 8
MATMUL_BLOCK = (BN // TN, BM // TM)       # (8, 8) = 64 threads
# Speed runs: a non-square 8192 × 12288 float32 input (384 MiB, far beyond any L2), sides
# multiples of 32 so that every row starts on a 128-byte boundary, as a copy's do.
SPEED_TRANSPOSE = (8192, 12288)
WARP = 32            # threads per warp (NVIDIA)
SECTOR = 32          # bytes per DRAM/L2 sector
BANKS = 32           # shared-memory banks, each 4 bytes wide


# ---- transposes: shared pieces -------------------------------------------------------------------

def _transpose_inputs(rng, size):
    m, n = size
    return {"inp": random_floats(rng, m * n).reshape(m, n)}


def _transpose_speed_inputs(rng, size):
    m, n = size
    return {"inp": random_floats_fast(rng, m * n).reshape(m, n)}


def _transpose_spec(inp, **launch):
    return {"out": np.ascontiguousarray(inp.T)}


def _transpose_tolerance(inputs, expected):
    return {"out": np.zeros(expected["out"].shape)}     # a copy: every bit must arrive


def _transpose_outputs(size):
    m, n = size
    return {"out": ((n, m), np.float32)}


def _transpose_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["inp"], outputs["out"])


def _transpose_sample(inputs, idx):
    m, n = inputs["inp"].shape
    r, c = _unravel(idx, (n, m))                 # out[r, c] = inp[c, r]
    expected = inputs["inp"][c, r].astype(np.float64)
    return {"out": expected}, {"out": np.zeros(idx.size)}


def _transpose_label(s):
    return f"a {s[0]} × {s[1]} input (rows × columns), so a {s[1]} × {s[0]} output"


def _numpy_transpose(inp, out):
    np.copyto(out, inp.T)


_jit = {}


def _serial_transpose(inp, out):
    if "transpose" not in _jit:
        import numba

        @numba.njit(cache=False)
        def transpose(inp, out):
            for r in range(inp.shape[0]):
                for c in range(inp.shape[1]):
                    out[c, r] = inp[r, c]
        _jit["transpose"] = transpose
    _jit["transpose"](inp, out)


TRANSPOSE_BASELINES = {
    "numpy": Baseline("NumPy copyto(out, inp.T) (1 core)", _numpy_transpose),
    "serial": Baseline("numba.njit double loop (1 core)", _serial_transpose),
}


def _cupy_transpose():
    import cupy as cp

    def run(inputs, outputs):
        cp.copyto(cp.asarray(outputs["out"]), cp.asarray(inputs["inp"]).T)
    return run


def _tiles_over(size, block):
    m, n = size
    return ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)


# ---- 6.1 naive transpose -------------------------------------------------------------------------

def reference_transpose_naive():
    def make():
        @cuda.jit
        def transpose_naive_reference(inp, out):
            col, row = cuda.grid(2)
            if row < inp.shape[0] and col < inp.shape[1]:
                out[col, row] = inp[row, col]
        return transpose_naive_reference
    return _compiled("transpose_naive", make)


transpose_naive = Problem(
    "transpose_naive", title="Matrix transpose, one thread per element on a 2-D grid",
    spec=_transpose_spec, make_inputs=_transpose_inputs, outputs=_transpose_outputs,
    tolerance=_transpose_tolerance, launch=_transpose_launch, block_sizes=BLOCK_SHAPES,
    visible_block_size=VISIBLE_BLOCK, blocks_for=lambda s, b: _grid_over(s[0], s[1], b),
    # (M, N): non-square first (a kernel with swapped indices fails there, and passes on a square),
    # no side a multiple of a block side; then a single row and a single element.
    cpu_sizes=Sizes(visible=((37, 45), (1, 33), (1, 1)), hidden=((45, 37), (33, 1), (83, 89)),
                    hidden_random=(2, 1, 50)),
    gpu_sizes=Sizes(visible=((1081, 1919), (37, 45), (1, 33), (1, 1)),
                    hidden=((45, 37), (33, 1)), hidden_random=(3, 1, 3000),
                    speed=SPEED_TRANSPOSE),
    bytes_moved=lambda s: 8 * s[0] * s[1], baselines=TRANSPOSE_BASELINES,
    # No speed cell (the slow first version), but `aag bench` times it beside the tiled one.
    reference=reference_transpose_naive, speed_inputs=_transpose_speed_inputs,
    sample_spec=_transpose_sample,
    speed_launch=lambda s: (_grid_over(s[0], s[1], TRANSPOSE_BLOCK), TRANSPOSE_BLOCK),
    vendor=_cupy_transpose, vendor_label="CuPy copyto(out, inp.T)",
    size_label=_transpose_label,
    value_hint=("out[col, row] = inp[row, col], with row from the y coordinates and col from x. "
                "The grid covers the INPUT (x across its N columns, y down its M rows): guard with "
                "row < inp.shape[0] and col < inp.shape[1]. Swapped indices or shapes go "
                "unnoticed on a square matrix only."),
)


# ---- 6.2 predict: the sectors one warp's access moves --------------------------------------------

def sectors_spec(stride_bytes, elem_bytes, warp: int = WARP, sector: int = SECTOR) -> np.ndarray:
    """For each (stride, element size): how many distinct ``sector``-byte sectors a warp touches
    when thread t reads the ``elem_bytes`` bytes that start at byte t · stride (thread 0 at an
    address that starts a sector)."""
    stride = np.asarray(stride_bytes, dtype=np.int64).reshape(-1)
    elem = np.asarray(elem_bytes, dtype=np.int64).reshape(-1)
    counts = np.empty(stride.size)
    t = np.arange(warp, dtype=np.int64)
    for i, (s, e) in enumerate(zip(stride, elem)):
        first, last = (t * s) // sector, (t * s + e - 1) // sector
        touched = np.concatenate([np.arange(a, b + 1) for a, b in zip(first, last)])
        counts[i] = np.unique(touched).size
    return counts


def _sectors_inputs(rng, count):
    stride = rng.integers(0, 300, count).astype(np.float64)
    elem = rng.choice([1, 2, 4, 8, 16], count).astype(np.float64)
    # The visible cases: a row of float32 (4 B apart), a column of a 37-wide float32 matrix
    # (148 B apart: the naive transpose's writes), all threads on one word, float64 neighbours,
    # float32 every 8 bytes, 8-byte values 12 bytes apart and 4-byte values 33 bytes apart (some
    # straddle two sectors), 16-byte values (float4) side by side.
    fixed_stride = [4, 148, 0, 8, 8, 12, 33, 16]
    fixed_elem = [4, 4, 4, 8, 4, 8, 4, 16]
    k = min(count, len(fixed_stride))
    stride[:k], elem[:k] = fixed_stride[:k], fixed_elem[:k]
    return {"stride_bytes": stride, "elem_bytes": elem}


def _sectors_call(fn, inputs, outputs, case):
    for i in range(case.size):
        outputs["sectors"][i] = fn(int(inputs["stride_bytes"][i]), int(inputs["elem_bytes"][i]))


sectors_per_warp = Problem(
    "sectors_per_warp", title="Coalescing: the 32-byte sectors one warp's access touches",
    spec=lambda stride_bytes, elem_bytes: {"sectors": sectors_spec(stride_bytes, elem_bytes)},
    make_inputs=_sectors_inputs, outputs=lambda count: {"sectors": ((count,), np.float64)},
    tolerance=lambda inputs, expected: {"sectors": np.zeros(expected["sectors"].shape)},
    launch=_sectors_call, on_device=False,
    cpu_sizes=Sizes(visible=(8,), hidden=(200,)), gpu_sizes=Sizes(visible=(8,), hidden=(200,)),
    size_label=lambda count: f"{count} (stride, value size) pairs",
    value_hint=("thread t reads the bytes t·stride to t·stride + elem_bytes - 1; a byte at "
                "address a lies in sector a // 32. Count the distinct sectors over all 32 threads: "
                "a value can straddle two sectors, and threads can share one."),
)


# ---- 6.3 tiled transpose: a padded shared tile, coalesced both ways, thread coarsening -----------

def reference_transpose_tiled():
    def make():
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
    return _compiled("transpose_tiled", make)


transpose_tiled = Problem(
    "transpose_tiled", title="Tiled transpose: a padded shared-memory tile, coalesced both ways",
    spec=_transpose_spec, make_inputs=_transpose_inputs, outputs=_transpose_outputs,
    tolerance=_transpose_tolerance, launch=_transpose_launch,
    block_sizes=(TRANSPOSE_BLOCK,), visible_block_size=TRANSPOSE_BLOCK, blocks_for=_tiles_over,
    # 37 × 45: 2 × 2 tiles, every edge tile partial in both directions, non-square; 5 × 70: three
    # tiles in a row, each only 5 rows deep (most threads have nothing to load); 1 × 1. The
    # simulator takes ~0.2 s per 256-thread block.
    cpu_sizes=Sizes(visible=((37, 45), (5, 70), (1, 1)), hidden=((45, 37), (70, 5), (83, 89)),
                    hidden_random=(1, 1, 70)),
    gpu_sizes=Sizes(visible=((1081, 1919), (37, 45), (5, 70), (1, 1)),
                    hidden=((45, 37), (70, 5)), hidden_random=(3, 1, 3000),
                    speed=SPEED_TRANSPOSE),
    bytes_moved=lambda s: 8 * s[0] * s[1], baselines=TRANSPOSE_BASELINES,
    reference=reference_transpose_tiled, speed_inputs=_transpose_speed_inputs,
    sample_spec=_transpose_sample,
    speed_launch=lambda s: (_tiles_over(s, TRANSPOSE_BLOCK), TRANSPOSE_BLOCK),
    vendor=_cupy_transpose, vendor_label="CuPy copyto(out, inp.T)",
    # On the H200 (docs/benchmarks.md): reference 0.233 ms (82% of a copy), the exercise's plain
    # solution 0.338 ms (0.69 of it), an unpadded tile 0.550 ms (0.42), the naive kernel 1.50 ms.
    # The plain solution (signed indices) issues each of its 4 loads only after the previous one
    # has been stored to the tile (SASS, sm_90): one load in flight per thread where the
    # reference, with unsigned indices, has four. Hence a bar below the usual 0.7.
    speed=SpeedBar(min_fraction_of_reference=0.6, baseline="numpy", min_speedup=50.0),
    size_label=_transpose_label,
    value_hint=("a block reads the tile at rows blockIdx.y·TILE + ty + j, columns blockIdx.x·TILE "
                "+ tx of inp, and writes it to rows blockIdx.x·TILE + ty + j, columns "
                "blockIdx.y·TILE + tx of out (the block indices swap roles), storing "
                "tile[tx, ty + j]. The loads and the stores each need their own bounds test."),
)


# ---- 6.4 register-tiled matmul -------------------------------------------------------------------

def _register_blocks(size, block):
    m, k, n = size
    return ((n + BN - 1) // BN, (m + BM - 1) // BM)


REF_BK = 16                      # the reference's tile depth (the exercise's is 8)
_REF_SA_STRIDE = BM + 4          # the A tile is stored transposed: pad its rows against conflicts
_REF_SA_SIZE = REF_BK * _REF_SA_STRIDE
_REF_SB_SIZE = REF_BK * BN


def reference_register_tiled():
    """64 × 64 tiles of C per block of 8 × 8 threads, 8 × 8 elements per thread, as the exercise,
    written for speed: A's tile stored transposed (with 4 floats of padding per row, so that the
    transposing stores hit different banks) and B's tile as it is, both 16-byte aligned; each
    thread owns rows 4·ty + {0..3} and 32 + 4·ty + {0..3} (and likewise columns), so its operands
    are two runs of 4 consecutive floats, read as 128-bit words; unsigned indices."""
    def make():
        from autograder.machine import device
        threads = MATMUL_BLOCK[0] * MATMUL_BLOCK[1]
        a_rows_per_pass = threads // REF_BK
        # 16-byte aligned tiles let NVVM emit 128-bit shared loads itself (ld.shared.v4); the
        # simulator takes no alignment, so CPU mode (where the reference is only checked) has none.
        align = 16 if device.current().is_gpu else None

        @cuda.jit
        def matmul_register_tiled_reference(A, B, C):
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
        return matmul_register_tiled_reference
    return _compiled("matmul_register_tiled", make)


matmul_register_tiled = Problem(
    "matmul_register_tiled",
    title="C = A @ B with 64 × 64 tiles per block and an 8 × 8 tile of C per thread, in registers",
    spec=_matmul_spec, make_inputs=_matmul_inputs, outputs=_matmul_outputs,
    tolerance=_matmul_tolerance, launch=_matmul_launch,
    block_sizes=(MATMUL_BLOCK,), visible_block_size=MATMUL_BLOCK, blocks_for=_register_blocks,
    # (M, K, N). 19 × 11 × 23: one block, every side partial, two tiles along K (a missing second
    # barrier races); 66 × 5 × 67: 2 × 2 blocks, the second row and column of blocks nearly
    # empty; 1 × 1 × 1. Hidden: 70 × 9 × 5 (two blocks down), 3 × 17 × 1 (three tiles along K).
    # The simulator takes ~0.25 s per 64-thread block and K-tile here.
    cpu_sizes=Sizes(visible=((19, 11, 23), (66, 5, 67), (1, 1, 1)),
                    hidden=((70, 9, 5), (3, 17, 1), (67, 20, 67)), hidden_random=(1, 1, 30)),
    gpu_sizes=Sizes(visible=((1023, 517, 1537), (19, 11, 23), (66, 5, 67), (1, 1, 1)),
                    hidden=((70, 9, 5), (3, 17, 1)), hidden_random=(3, 1, 1200),
                    speed=SPEED_MATMUL),
    bytes_moved=matmul_naive.bytes_moved, flops=matmul_naive.flops,
    baselines=matmul_naive.baselines,
    reference=reference_register_tiled, speed_inputs=_matmul_speed_inputs,
    sample_spec=_matmul_sample,
    speed_launch=lambda s: (_register_blocks(s, MATMUL_BLOCK), MATMUL_BLOCK),
    vendor=cupy_matmul, vendor_label="CuPy matmul (cuBLAS SGEMM)",
    # On the H200 (docs/benchmarks.md) the reference ran 4096³ in 4.76 ms (28.9 TFLOP/s, 56% of
    # cuBLAS) and the exercise's plain solution in 19.9 ms: 0.24 of the reference, still 1.4×
    # chapter 5's tiled kernel and 4× NumPy on 32 cores. The plain solution: 152 registers, 16 LDS
    # and ~104 instructions per 64 FFMA in its inner loop, its tile loads two at a time; the
    # reference: 128 registers, 4 LDS.128 and ~89 instructions per 64 FFMA, 16 tile loads issued
    # back to back (SASS, sm_90). The bar asks for what the plain algorithm gives, not the tricks.
    speed=SpeedBar(min_fraction_of_reference=0.2, baseline="numpy", min_speedup=3.0),
    size_label=lambda s: f"A {s[0]} × {s[1]} times B {s[1]} × {s[2]}",
    value_hint=("a thread's element (i, j) of its 8 × 8 tile is C[blockIdx.y·64 + ty + 8·i, "
                "blockIdx.x·64 + tx + 8·j]: check the same mapping in the loads from shared "
                "memory (sA[k, ty + 8·i], sB[k, tx + 8·j]) and in the final stores. Wrong only "
                "near the edges or for K not a multiple of 8? Elements of A or B outside the "
                "matrices must be stored as 0 in the tiles."),
)

PROBLEMS = (transpose_naive, sectors_per_warp, transpose_tiled, matmul_register_tiled)


# ---- CPU mode: shared-memory bank conflicts from the race detector's recording -----------------

def bank_conflicts(kernel, blocks, threads, *args, shapes: dict | None = None,
                   word_bytes: int = 4) -> list[dict]:
    """Launch ``kernel[blocks, threads](*args)`` in CPU mode and count its shared-memory bank
    conflicts, per line of the kernel that touches a shared array.

    Every shared access is recorded (:func:`autograder.races.record`). The accesses that the 32
    threads of one warp make with the same line, in the same barrier interval, for the same time
    (a thread's n-th pass over that line) form one warp-wide access. Its element ``(r, c)`` of an
    array of shape ``(R, C)`` is the word ``r·C + c``, in bank ``word % 32`` (4-byte banks,
    ``word_bytes = 4``, float32). A bank asked for ``w`` different words serves them one after
    another: the access takes ``w`` passes ("w-way conflict"); threads reading one same word
    share it (a broadcast). ``shapes`` gives the shape of each shared array by name, as declared
    (padding included); arrays left out are taken to be as large as the elements seen.

    Returns one row per (array, line, kind): ``accesses`` (warp-wide accesses), ``passes`` (their
    total passes), ``worst`` (the most passes of one), ``ways`` (passes per access on average: 1
    means no conflict)."""
    from autograder.machine.simulator import races

    with races.record() as accesses:
        kernel[blocks, threads](*args)
    declared = {a.array: tuple(a.shape) for a in accesses if a.space == "shared" and a.shape}
    bx, by = (threads, 1) if isinstance(threads, int) else (tuple(threads) + (1,))[:2]
    extent: dict[str, list[int]] = {}
    for a in accesses:
        if getattr(a, "space", "shared") != "shared":
            continue
        seen = extent.setdefault(a.array, [0] * len(a.element))
        for d, v in enumerate(a.element):
            seen[d] = max(seen[d], v + 1)
    shapes = {name: tuple(shapes[name]) if shapes and name in shapes
              else declared.get(name, tuple(ext)) for name, ext in extent.items()}
    passes_of: dict[tuple, dict] = defaultdict(dict)     # warp-wide access -> {bank: {words}}
    visits: dict[tuple, int] = defaultdict(int)
    for a in accesses:
        if getattr(a, "space", "shared") != "shared":
            continue
        x, y, z = (tuple(a.thread) + (0, 0))[:3]
        lane = x + bx * (y + by * z)
        per_thread = (a.block, lane, a.array, a.line, a.kind, a.interval)
        n = visits[per_thread]
        visits[per_thread] += 1
        shape = shapes[a.array]
        word = int(np.ravel_multi_index(a.element, shape)) if shape else 0
        word = word * word_bytes // 4
        key = (a.array, a.line, a.kind, a.block, lane // WARP, a.interval, n)
        passes_of[key].setdefault(word % BANKS, set()).add(word)
    rows: dict[tuple, dict] = {}
    for (array, line, kind, *_rest), banks in passes_of.items():
        ways = max(len(words) for words in banks.values())
        row = rows.setdefault((array, line, kind), {"array": array, "line": line, "kind": kind,
                                                    "accesses": 0, "passes": 0, "worst": 0})
        row["accesses"] += 1
        row["passes"] += ways
        row["worst"] = max(row["worst"], ways)
    out = sorted(rows.values(), key=lambda r: (r["line"], r["kind"]))
    for row in out:
        row["ways"] = row["passes"] / row["accesses"]
    return out


def bank_table(rows: list[dict]) -> str:
    """:func:`bank_conflicts` rows as a small text table."""
    lines = [f"{'array':8s} {'line':>5s} {'kind':6s} {'warp accesses':>14s} {'passes':>7s} "
             f"{'passes/access':>14s} {'worst':>6s}"]
    for r in rows:
        lines.append(f"{r['array']:8s} {r['line']:5d} {r['kind']:6s} {r['accesses']:14d} "
                     f"{r['passes']:7d} {r['ways']:14.2f} {r['worst']:6d}")
    return "\n".join(lines)



# ---- `aag bench` variants: the exercises' plain solutions, timed beside the references ----------

def _plain_transpose(padded: bool):
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
    return lambda: _compiled(f"transpose_plain_{padded}", make)


_EX_BK = 8           # the exercise's tile depth


def _plain_register_tiled():
    def make():
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
    return lambda: _compiled("matmul_register_tiled_plain", make)


BENCH_VARIANTS = {
    "transpose_tiled": {"exercise solution (signed indices)": _plain_transpose(True),
                        "unpadded 32 × 32 tile (bank conflicts)": _plain_transpose(False)},
    "matmul_register_tiled": {"exercise solution (signed indices, BK = 8)": _plain_register_tiled()},
}
