# %% [markdown]
# # Chapter 5 · Memory architecture and data locality: tiling a matrix multiplication
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 5.
#
# **Before you start:** chapters 1–4 (chapter 3's matrix product above all). **Time:** about 3
# hours, reading and exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Name the levels of a GPU's memory (registers, shared memory, the L1 and L2 caches, global
#   memory), say who can see each one, and roughly how fast each one is.
# - Count the bytes a kernel moves. The naive matmul from chapter 3 does about **0.25
#   floating-point operations per byte** it loads; you will write a **tiled matmul** with
#   `TILE × TILE` tiles in shared memory that loads `TILE` times fewer bytes (8× fewer for 8 × 8
#   tiles), with both of its `cuda.syncthreads()` barriers in the right places, and say why each
#   one is needed; then time it with 8, 16 and 32 as `TILE` on your GPU.
# - Use the **roofline**: compute, before running anything, the shortest time a kernel can take
#   on a device with a given bandwidth and peak FLOP/s, and tell whether it is limited by memory or
#   by arithmetic.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32

ag.banner()

# %% [markdown]
# ## The idea: memory comes in levels
#
# Arithmetic is cheap on a GPU; getting the operands to the arithmetic units is what costs. The
# memory a kernel uses comes in levels: the closer to the arithmetic, the faster and the smaller.
#
# | level | who sees it | size (per SM or per chip) | latency | bandwidth |
# |---|---|---|---|---|
# | **registers** | one thread (its local variables) | ~256 KB per SM | ~1 cycle | feeds every operation |
# | **shared memory** (`cuda.shared.array`) | the threads of one block | up to ~100–230 KB per SM (shared with L1) | ~20–30 cycles | ~128 B/cycle per SM, tens of TB/s in all |
# | **L1 cache** | one SM, automatic | same storage as shared memory | ~30 cycles | like shared memory |
# | **L2 cache** | the whole chip, automatic | ~10–100 MB | ~200–300 cycles | ~5–10 TB/s |
# | **global memory** (DRAM: HBM or GDDR) | every thread, and the host | ~10–140 GB | ~500–800 cycles (a few hundred ns) | ~1–5 TB/s |
#
# **These numbers are typical orders of magnitude** for recent NVIDIA data-centre GPUs (an H200
# has 4.8 TB/s of HBM bandwidth, and the course's H200 reports 60 MiB of L2); your chip's
# differ, sometimes by a factor of several. What holds everywhere is the shape: each step
# outwards is several times slower, and the levels outside the SM are far larger (a few hundred
# KB of registers and of shared memory per SM, tens of MB of L2, tens of GB of DRAM). An SM
# (streaming multiprocessor) is the unit a block runs on: all the threads of one block share one
# SM, its registers and its shared memory.
#
# Two words from PMPP sum up what the table means for a kernel:
#
# - **Arithmetic intensity** (or computational intensity): floating-point operations per byte
#   moved from global memory, FLOP/byte.
# - **Data reuse, or locality**: a value fetched once from global memory and kept close (in a
#   register or in shared memory) can be used many times for one trip.
#
# ## The naive matmul's memory traffic
#
# Chapter 3's kernel computes one element of `C = A @ B` per thread:
#
# ```python
# for k in range(K):
#     acc += A[row, k] * B[k, col]
# ```
#
# Each step of that loop loads **two** float32 values (8 bytes) from global memory and does
# **two** floating-point operations (a multiply and an add). Over the whole loop a thread makes
# `2K` loads for `2K` FLOPs:
#
# ```
# arithmetic intensity = 2K FLOP / (2K · 4 bytes) = 0.25 FLOP/byte
# ```
#
# At 4.8 TB/s that is at most 0.25 × 4.8 = **1.2 TFLOP/s**, whatever the arithmetic units could
# do (an H200 does ~67 TFLOP/s in float32). Yet the loads are mostly **repeats**: every thread in
# row `row` of C reads the same row of A, and every thread in column `col` reads the same column
# of B. `A[row, k]` is loaded `N` times in all, once per column of C. Caches catch some of the
# repeats, by luck; the next section catches them on purpose.
#
# ## Tiling: load once, use `TILE` times
#
# Cut C into `TILE × TILE` tiles and give each tile to one block of `TILE × TILE` threads. To
# compute its tile, a block needs a **strip** of `TILE` rows of A and a strip of `TILE` columns of
# B. It walks along the two strips one `TILE × TILE` tile at a time (a **phase**):
#
# 1. every thread loads **one** element of A's tile and **one** of B's tile from global memory into
#    two shared arrays, `sA` and `sB`;
# 2. **`cuda.syncthreads()`**: wait until every thread of the block has written its elements;
# 3. every thread adds `TILE` products from the tiles, `sA[ty, k] * sB[k, tx]` for `k < TILE`, to
#    its running sum (shared memory: fast);
# 4. **`cuda.syncthreads()`**: wait until every thread has finished reading the tiles; then the
#    next phase may overwrite them.
#
# The picture shows the block that computes the dark tile of C, in its second phase: it has loaded
# the dark tiles of A and B, and it walks along the light strips.

# %%
M_, K_, N_ = 5, 6, 7            # in tiles: C is 5 × 7 tiles, K is 6 tiles long
fig, ax = plt.subplots(figsize=(7, 6))


def tiles(x0, y0, rows, cols, name, strip=None, dark=None, colour="#cfe0f3"):
    for r in range(rows):
        for c in range(cols):
            face = "white"
            if strip is not None and (r, c) in strip:
                face = colour
            if dark is not None and (r, c) == dark:
                face = "#3b6ea8"
            ax.add_patch(plt.Rectangle((x0 + c, y0 + r), 1, 1, facecolor=face, edgecolor="#888"))
    ax.text(x0 + cols / 2, y0 - 0.4, name, ha="center", fontsize=11)


block_row, block_col, phase = 2, 4, 1
tiles(0, K_ + 1, M_, K_, "A (M × K)", strip={(block_row, c) for c in range(K_)}, dark=(block_row, phase))
tiles(K_ + 1, 0, K_, N_, "B (K × N)", strip={(r, block_col) for r in range(K_)}, dark=(phase, block_col))
tiles(K_ + 1, K_ + 1, M_, N_, "C (M × N)", dark=(block_row, block_col))
ax.set_xlim(-0.5, K_ + N_ + 1.5); ax.set_ylim(K_ + M_ + 1.5, -1)
ax.set_aspect("equal"); ax.axis("off")
ax.set_title("one block computes one tile of C, one phase (one tile of A and of B) at a time")
plt.show()

# %% [markdown]
# **Why the first barrier.** In step 3 a thread reads elements of `sA` and `sB` that *other*
# threads wrote in step 1 (thread `(tx, ty)` reads the whole row `sA[ty, :]`). Threads do not run
# in lockstep: without the barrier a thread can read `sA[ty, k]` **before** the thread that loads
# it has written it, and sum a stale value (the previous tile's, or whatever was in the memory).
#
# **Why the second barrier.** Without it, a fast thread finishes its `TILE` products, goes round
# the loop and **overwrites** its element of `sA` and `sB` with the next tile, while a slower
# thread of the same block is still reading the current tile. The slow thread then mixes two
# tiles. The first barrier of the next phase does not help: the damage is done before it.
#
# Both bugs depend on timing: on a GPU a kernel missing a barrier can give the right answer a
# hundred times and the wrong one on the next run, or on the next GPU. This course's CPU mode
# checks every shared-memory access instead: two threads touching one element between the same
# two barriers, one of them writing, stops the launch with a `SharedMemoryRace` that names both
# threads, the element and both lines, every time.
#
# **Traffic.** Per phase, a thread makes 2 global loads (8 bytes) and `TILE` multiply-adds
# (`2 · TILE` FLOPs), so
#
# ```
# arithmetic intensity = 2·TILE FLOP / 8 bytes = TILE / 4 FLOP/byte
# ```
#
# `TILE` times the naive kernel's: 2 FLOP/byte for 8 × 8 tiles, 4 for 16 × 16, 8 for 32 × 32. The
# price is shared memory: two `TILE × TILE` float32 arrays per block (512 bytes for `TILE = 8`,
# 8 KB for 32), and a block of `TILE²` threads (at most 1024, so `TILE ≤ 32`).
#
# **Edges: pad with zeros.** When M, K or N is not a multiple of `TILE`, the last tiles stick out
# of the matrices. A thread whose element of A or B lies outside **stores 0** in the tile instead
# of loading (and without loading: that element does not exist). A zero adds nothing to the sum,
# so the `TILE` products of the last phase need no special case. A thread whose `(row, col)` is
# outside C still loads (zeros, mostly) and still reaches both barriers; it only skips the final
# store. It must not leave the loop early: a barrier waits for **every** thread of the block, and
# a thread that never arrives is a bug (the block hangs, or worse).
#
# ## The CPU baseline
#
# NumPy's `A @ B` calls a BLAS library, itself tiled for the CPU's caches. Here is the spec on a
# small non-square product, and what the two kernels would move from global memory:

# %%
rng = np.random.default_rng(5)
M, K, N = 13, 21, 10
A = rng.standard_normal((M, K)).astype(np.float32)
B = rng.standard_normal((K, N)).astype(np.float32)
C_cpu = A @ B
flops = 2 * M * K * N
for tile in (1, 8, 16):
    loads = 2 * M * K * N / tile        # each output: 2K loads, divided by TILE when tiled
    label = "naive" if tile == 1 else f"tiled, TILE = {tile}"
    print(f"{label:16s}: {loads:8.0f} loads of 4 bytes for {flops} FLOPs:"
          f" {flops / (4 * loads):.2f} FLOP/byte")

# %% [markdown]
# (For these small sides the tiled counts are slightly optimistic: a 13-row matrix fills two
# 8-row tiles, the second one partly, and padded zeros are stored, not loaded.)
#
# ## Exercise 5.1 · A tiled matrix multiplication (4 points)
#
# Write `tiled_matmul_kernel(A, B, C)`: `A` is `M × K`, `B` is `K × N`, `C` is `M × N`, all
# float32 device arrays. The tile side is yours to choose: the module constant **`TILE`** set in
# the cell, **8, 16 or 32** (8 to start with; a block has `TILE²` threads, at most 1024). Use it
# everywhere the tile side appears: two shared arrays `cuda.shared.array((TILE, TILE), float32)`,
# one for a tile of A and one for a tile of B. Each thread:
#
# - takes `tx, ty = cuda.threadIdx.x, cuda.threadIdx.y`, its row `blockIdx.y · TILE + ty` and its
#   column `blockIdx.x · TILE + tx` of C;
# - loops over the `ceil(K / TILE)` phases; in phase `t` it stores `A[row, t·TILE + tx]` in
#   `sA[ty, tx]` and `B[t·TILE + ty, col]` in `sB[ty, tx]`, or **0** where that element is outside
#   the matrix; barrier; adds `sA[ty, k] * sB[k, tx]` for `k` in `range(TILE)` to a float32
#   accumulator; barrier;
# - after the loop, stores its sum in `C[row, col]` if `row < M` and `col < N`.
#
# Roughly 15 lines.
#
# **How the check launches it.** Blocks of `(TILE, TILE)` threads (x × y) and a grid of
# `(ceil(N / TILE), ceil(M / TILE))` blocks: x covers C's columns, y its rows. The check reads
# `TILE` from your notebook when it launches the kernel, for every case, visible and hidden.
# Numba reads it too, when it compiles the kernel: if you change `TILE`, run the kernel's cell
# again, so that the kernel is compiled for the new tile side.
#
# **What the check does.** As for chapter 3's matmul: `C` filled with NaN, values with a random
# offset and scale, every element compared with the float64 product, allowed error
# `γ_K · Σₖ |A[row, k] · B[k, col]|` (`γₖ = k·u / (1 − k·u)`, `u = 2⁻²⁴`), which any order of
# summation in float32 meets. Shapes 13 × 21 times 21 × 10 (three phases of 8, the last one
# partial), 2 × 37 times 37 × 35 (several phases and several blocks across C at every tile side)
# and 1 × 1 times 1 × 1: no side is a multiple of 8, so of no tile side. The hidden tests use
# other such shapes with sides up to 37 (small, because CPU mode simulates every thread, and a
# block of 1024 threads for `TILE = 32` takes it over a second per phase; on a GPU they are
# larger). In CPU mode the race detector watches every access to `sA` and `sB`: a missing
# barrier fails the check on every run, with a message naming the two threads and lines.

# %% nbgrader={"grade": false, "grade_id": "tiled_matmul_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
from numba import float32

TILE = 8   # your tile side: 8, 16 or 32; the check launches blocks of TILE × TILE threads


@cuda.jit
def tiled_matmul_kernel(A, B, C):
    ### BEGIN SOLUTION
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        a_col = t * TILE + tx
        b_row = t * TILE + ty
        sA[ty, tx] = A[row, a_col] if row < A.shape[0] and a_col < A.shape[1] else 0
        sB[ty, tx] = B[b_row, col] if b_row < B.shape[0] and col < B.shape[1] else 0
        cuda.syncthreads()          # the tiles are complete before anyone reads them
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()          # everyone is done reading before the next phase overwrites
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc
    ### END SOLUTION


# %% [markdown]
# Try it on the matrices of the CPU baseline, launched the way the check launches it:

# %%
grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
d_C = cuda.to_device(np.full((M, N), np.nan, np.float32))
tiled_matmul_kernel[grid, (TILE, TILE)](cuda.to_device(A), cuda.to_device(B), d_C)
C_gpu = d_C.copy_to_host()
print(f"grid {grid} of {TILE} × {TILE} blocks; elements never written: {np.isnan(C_gpu).sum()};"
      f" largest difference from NumPy: {np.nanmax(np.abs(C_gpu - C_cpu)):.2e}")

# %% nbgrader={"grade": true, "grade_id": "tiled_matmul_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch05.tiled_matmul.check(tiled_matmul_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch05.tiled_matmul.check_hidden(tiled_matmul_kernel)
### END HIDDEN TESTS

# %% [markdown]
# **Speed (2 points, on a GPU).** 4096 × 4096 matrices, blocks of your `TILE × TILE`, fresh
# inputs and a NaN-filled C for each of 23 calls, 4096 random elements of C checked after every
# call. The bar:
# 70% of the course's own 8 × 8 tiled kernel, timed in the same run, and at least twice as fast
# as NumPy's `A @ B` on all the CPU's cores (a BLAS library tuned for years). The bar asks for
# the speed of *this* algorithm, not for more: chapter 6 makes it much faster.

# %% nbgrader={"grade": true, "grade_id": "tiled_matmul_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch05.tiled_matmul.check_speed(tiled_matmul_kernel)

# %% [markdown]
# ## Break it: remove the second barrier
#
# The kernel below is a correct tiled matmul with one line removed: the `cuda.syncthreads()`
# after the products. **Predict before you run**: in CPU mode, which two lines will the race
# detector name, and which thread wrote? On a GPU, will the result be wrong?

# %%
from autograder import SharedMemoryRace


@cuda.jit
def tiled_one_barrier(A, B, C):
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
        # the second cuda.syncthreads() is missing here
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


d_C = cuda.to_device(np.full((M, N), np.nan, np.float32))
try:
    tiled_one_barrier[grid, (TILE, TILE)](cuda.to_device(A), cuda.to_device(B), d_C)
    cuda.synchronize()
    worst = np.nanmax(np.abs(d_C.copy_to_host() - C_cpu))
    print(f"the launch finished; largest difference from NumPy: {worst:.2e}. On a GPU this may be"
          " right on this run and wrong on the next: nothing checks the race here.")
except SharedMemoryRace as race:
    print("CPU mode stopped the launch:\n")
    print(str(race).replace(": shared", ":\nshared", 1))

# %% [markdown]
# In CPU mode the message names an element of `sA` (or `sB`) that one thread **wrote** on the load
# line of the *next* phase while another thread **read** it on the `acc +=` line of the current
# one, with no barrier between. On a GPU nothing stops the launch: the 64 threads of an 8 × 8
# block form two warps (a 32 × 32 block, 32 warps), and whether one warp runs ahead of another
# far enough to overwrite a tile before
# the other has read it depends on scheduling. The result may be right on one run, on one GPU,
# with one matrix size, and wrong on another. That is why the rule is mechanical: **a barrier after
# the writes and before the reads, and a barrier after the reads and before the next writes.**
# Try removing the first barrier instead (put it back in, remove the other): the message then
# names the load line and the `acc +=` line of the *same* phase.
#
# ## Measure it
#
# On a GPU, the cell below times chapter 3's naive kernel (written out again here), your tiled
# kernel and cuBLAS (through CuPy, when it is installed) on 4096 × 4096 matrices, and prints
# their GFLOP/s. Expect the tiled kernel to beat the naive one, and both to be far from cuBLAS:
# the tiles cut the traffic to global memory, but each thread still computes one element of C
# from shared memory, one multiply-add per two shared loads. A bar chart then shows each kernel's
# time and its speedup over the naive one, with cuBLAS as a dashed line. In CPU mode the cell
# draws the same chart from what the course measured on an H200 with the solution's kernel.

# %%
@cuda.jit
def naive_matmul(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


side = 4096
why = ag.timing.not_measured()
if why:
    print(why, f"On a GPU, this cell times the naive kernel, tiled_matmul_kernel and "
          f"cuBLAS on {side} × {side} matrices and prints their GFLOP/s. Below, what the course "
          "measured with the solution's kernels:")
    ag.experiments.steps("ch05_matmul").show()
else:
    from autograder import timing
    g = np.random.default_rng(0)
    dA = cuda.to_device(g.standard_normal((side, side), dtype=np.float32))
    dB = cuda.to_device(g.standard_normal((side, side), dtype=np.float32))
    dC = cuda.device_array((side, side), np.float32)
    flops_big = 2 * side ** 3
    grid16 = ((side + 15) // 16, (side + 15) // 16)
    grid8 = ((side + TILE - 1) // TILE, (side + TILE - 1) // TILE)
    measured = {
        "naive (16 × 16 blocks)": timing.time_gpu("naive", lambda i: naive_matmul[grid16, (16, 16)](dA, dB, dC), repeats=10, flops=flops_big),
        f"tiled, TILE = {TILE}": timing.time_gpu("tiled", lambda i: tiled_matmul_kernel[grid8, (TILE, TILE)](dA, dB, dC), repeats=10, flops=flops_big),
    }
    try:
        import cupy as cp
        cA, cB, cC = cp.asarray(dA), cp.asarray(dB), cp.asarray(dC)
        measured["cuBLAS (CuPy)"] = timing.time_gpu("cublas", lambda i: cp.matmul(cA, cB, out=cC), repeats=10, flops=flops_big)
    except ImportError:
        print("(CuPy is not installed: no cuBLAS row)")
    for label, s in measured.items():
        print(f"{label:24s} {s.median_ms:8.2f} ms  {s.gflops:8.0f} GFLOP/s")
    ag.experiments.steps("ch05_matmul", measured,
                         reference="cuBLAS (CuPy)" if "cuBLAS (CuPy)" in measured else None,
                         title=f"Matmul of {side} × {side} float32").show()

# %% [markdown]
# ### Which tile side? Time all three
#
# A larger tile divides the global traffic further (`TILE / 4` FLOP/byte: 2, 4 and 8 for 8, 16
# and 32), but each block then needs `2 · TILE² · 4` bytes of shared memory (512 B, 2 KB, 8 KB)
# and `TILE²` threads, which limits how many blocks an SM holds at once (PMPP §5.6), and every
# thread still makes two shared-memory loads per multiply-add whatever the tile. **Predict**
# which of 8, 16 and 32 is fastest on your GPU, then run the cell. It compiles your kernel again
# for each tile side (`ag.problems.ch05.with_tile`: the same code, with its own `TILE`; your
# notebook's `TILE` does not change), launches it once (the warm-up: that launch compiles it),
# then times `repeats` launches between two CUDA events. Not graded. In CPU mode it runs a
# 20 × 20 product only, to show that the three give the right answer, and prints the times the
# course's kernel took on an H200 instead: the simulator's speed says nothing about a GPU's.

# %%
from autograder.data import device_facts
why = ag.timing.not_measured("Timing the tile sides")
side, repeats = (4096, 10) if why is None else (20, 0)     # CPU mode: the warm-up only
g = np.random.default_rng(1)
A_s = g.standard_normal((side, side), dtype=np.float32)
B_s = g.standard_normal((side, side), dtype=np.float32)
C_s = A_s @ B_s
dA, dB = cuda.to_device(A_s), cuda.to_device(B_s)
dC = cuda.device_array((side, side), np.float32)
for tile in (8, 16, 32):
    kernel = ag.problems.ch05.with_tile(tiled_matmul_kernel, tile)
    grid = ((side + tile - 1) // tile, (side + tile - 1) // tile)
    kernel[grid, (tile, tile)](dA, dB, dC)          # warm-up: compiles for this tile side
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(repeats):
        kernel[grid, (tile, tile)](dA, dB, dC)
    end.record()
    end.synchronize()
    error = np.abs(dC.copy_to_host() - C_s).max()
    if repeats:
        ms = start.elapsed_time(end) / repeats
        print(f"TILE = {tile:2d}: {ms:8.2f} ms, {2 * side ** 3 / ms / 1e9:7.0f} GFLOP/s; "
              f"largest difference from NumPy {error:.1e}")
    else:
        print(f"TILE = {tile:2d}: ran; largest difference from NumPy {error:.1e}; the course's "
              f"kernel on an H200, 4096 × 4096: {device_facts.quote(f'tiled_matmul_tile{tile}')}")
if why:
    print(why)

# %% [markdown]
# **What the H200 showed.** With the course's kernel on 4096 × 4096 matrices, TILE 8 took
# 27.5 ms, TILE 16 took 17.8 ms and TILE 32 took 17.9 ms. Going from 8 to 16 halves the global
# traffic and pays; going from 16 to 32 halves it again and buys nothing. At 16 the global loads
# are no longer what limits the kernel: every multiply-add still needs two loads from shared
# memory, whatever the tile. (A 32 × 32 tile also makes blocks of 1,024 threads, two per SM, and
# at each barrier 32 warps of a block wait for its slowest one.) Chapter 6 attacks the
# shared-memory limit by giving each thread several outputs, so that each value loaded from
# shared memory serves several multiply-adds.

# %% [markdown]
# ## Predict: the roofline
#
# A kernel that does `F` FLOPs and moves `Q` bytes from global memory cannot finish before the
# arithmetic is done, nor before the bytes have crossed the memory bus:
#
# ```
# time ≥ max(F / peak FLOP/s,  Q / bandwidth)
# ```
#
# Divided by the time this gives the **roofline**: the best possible FLOP/s is
# `min(peak, intensity × bandwidth)`, with intensity = F / Q. Below the **ridge point**
# `peak / bandwidth` FLOP/byte a kernel is **memory bound** (more arithmetic would be free, fewer
# bytes would help); above it, **compute bound**. For an H200-like device (≈ 67 TFLOP/s float32
# without tensor cores, ≈ 4.8 TB/s) the ridge is at about 14 FLOP/byte: both the naive kernel
# (0.25) and the 8 × 8 tiled one (2) are far to its left.
#
# For a matmul of `M × K` times `K × N` with `TILE × TILE` tiles (all float32; take the sides to
# be multiples of `TILE`), `F` and `Q` are yours to count. What happens: every term of every dot
# product is one multiply and one add; each block computes one `TILE × TILE` tile of C and, for
# each step along K, loads one tile of A and one tile of B from global memory; every element of C
# is written once. How many times is each element of A read, over the whole grid? Of B?
# `TILE = 1` is the naive kernel.
#
# The model counts every load as a trip to DRAM. Caches can beat it (on the course's H200 the
# naive kernel, at 101 ms, ran faster than this bound allows), and a real kernel has other
# overheads, so a measured time can sit on either side of it: above for most kernels,
# sometimes well above, and below where the caches serve many repeated loads.
#
# ## Exercise 5.2 · A lower bound on a matmul's time (2 points)
#
# Write `matmul_time_bound(m, k, n, tile, peak_flops, bandwidth)`: the sides `m, k, n` and the
# tile side are Python ints, `peak_flops` (FLOP/s) and `bandwidth` (bytes/s) Python floats. Return
# the lower bound in **seconds**, as a float, with the `F` and `Q` you counted. Roughly 3 lines.
#
# **Predict first, by hand** (then let your function check you): on the H200-like device, for
# 4096 × 4096 matrices, how many milliseconds at least for the naive kernel (`tile = 1`)? For
# `TILE = 16`? From which tile size on does the bound stop shrinking, because the kernel has
# become compute bound?
#
# **What the check does.** It calls your function on 8 sets of values (the visible ones start
# with the H200-like device on 4096³, with tiles 1, 16 and 64, then a 1 × 1 × 1 product), and the
# hidden tests on 200 random ones (sides up to 8192, tiles 1 to 64, 0.1 to 300 TFLOP/s, 30 GB/s to
# 10 TB/s). Results are compared with the bound computed in float64, allowing a few roundings: any
# algebraically equal formula passes; a number rounded by hand does not.

# %% nbgrader={"grade": false, "grade_id": "matmul_time_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def matmul_time_bound(m, k, n, tile, peak_flops, bandwidth):
    """Seconds a tiled float32 matmul needs at least: the slower of its arithmetic and its traffic."""
    ### BEGIN SOLUTION
    flops = 2 * m * k * n
    traffic = 4 * (m * k * n / tile + k * n * m / tile + m * n)
    return max(flops / peak_flops, traffic / bandwidth)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "matmul_time_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch05.matmul_time_bound.check(matmul_time_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch05.matmul_time_bound.check_hidden(matmul_time_bound)
### END HIDDEN TESTS

# %% [markdown]
# Your function, on the H200-like device and 4096 × 4096 matrices, for every tile side; and the
# roofline, with each kernel placed at its arithmetic intensity:

# %%
peak, bandwidth, side = 67e12, 4.8e12, 4096
flops = 2 * side ** 3
for tile in (1, 8, 16, 32, 64, 128):
    t = matmul_time_bound(side, side, side, tile, peak, bandwidth)
    bound = "compute" if flops / peak >= t * (1 - 1e-12) else "memory"
    print(f"TILE = {tile:3d}: at least {t * 1e3:7.2f} ms, at most {flops / t / 1e12:5.1f} TFLOP/s"
          f" ({bound} bound)")

intensity = np.logspace(-1.5, 2.5, 200)
fig, ax = plt.subplots(figsize=(7, 4))
ax.loglog(intensity, np.minimum(peak, intensity * bandwidth) / 1e12, color="black")
for tile, colour in ((1, "tab:red"), (8, "tab:orange"), (16, "tab:green"), (32, "tab:blue")):
    ai = tile / 4
    ax.plot(ai, min(peak, ai * bandwidth) / 1e12, "o", color=colour,
            label=("naive" if tile == 1 else f"TILE = {tile}") + f" ({ai:g} FLOP/byte)")
ax.axvline(peak / bandwidth, ls=":", color="grey")
ax.text(peak / bandwidth * 1.1, 0.1, f"ridge ≈ {peak / bandwidth:.0f} FLOP/byte", color="grey")
ax.set_xlabel("arithmetic intensity (FLOP/byte)")
ax.set_ylabel("best possible TFLOP/s")
ax.set_title("roofline of an H200-like device (float32, no tensor cores; typical figures)")
ax.grid(True, which="both", alpha=0.3)
ax.legend(loc="lower right")
plt.show()

# %% [markdown]
# ## Look inside: a profiler's counters
#
# A time says how long a kernel took, not why. A **profiler** reads the GPU's hardware counters
# while the kernel runs; NVIDIA's is **Nsight Compute**, the command `ncu`. GPU MODE's first
# lecture, *How to profile CUDA kernels in PyTorch* (Mark Saroufim), runs it on PyTorch code;
# `ag.profile(kernel, grid, block, *args)` runs it on a Numba kernel. ncu can only profile a
# program that it starts itself, not the Python process behind this notebook, so `ag.profile`
# saves the launch (the kernel, and a copy of its arguments) and has ncu start a separate Python
# process that launches the kernel twice: the first launch compiles it, the second is measured.
# ncu replays that launch several times, reading a few counters each time, with the GPU's clock
# held at its base rate and the caches emptied before each replay. Its times are therefore longer
# than those of the timing cell above: they are for comparing kernels, not for quoting speeds.
#
# The cell asks for this chapter's question, the traffic to DRAM, and for the number of
# warp-wide global loads (chapter 6 is about the other columns of that table):
#
# - **DRAM read and written**: the bytes that crossed the memory bus. A load served by the L1 or
#   L2 cache does not count.
# - **GB/s**: (read + written) / time, the achieved DRAM bandwidth, and **% of peak**, its share
#   of what the DRAM can sustain.
# - **× arrays**: the DRAM bytes divided by the bytes of A, B and C: 1 would mean every input
#   read once and the output written once.
# - **load requests**: the global load instructions the warps executed, in millions, whether
#   the caches or DRAM answered them.
#
# On a GPU the cell profiles the naive kernel of the cell above and yours on 4096 × 4096
# matrices (it needs `ncu`, which comes with the CUDA toolkit, and permission to read the
# counters). In CPU mode, where `ncu` is missing or refused, and while the notebook is graded,
# it shows what the course recorded the same way on an H200 for its own naive kernel and its 8 × 8
# tiled kernel.

# %%
why = ag.profiler.why_not()
if why is None:
    side = 4096
    g = np.random.default_rng(0)
    dA = cuda.to_device(g.standard_normal((side, side), dtype=np.float32))
    dB = cuda.to_device(g.standard_normal((side, side), dtype=np.float32))
    dC = cuda.device_array((side, side), np.float32)
    grid16 = ((side + 15) // 16, (side + 15) // 16)
    grid_tiled = ((side + TILE - 1) // TILE, (side + TILE - 1) // TILE)
    try:
        report = ag.profiler.live([
            ag.profile(naive_matmul, grid16, (16, 16), dA, dB, dC, label="naive (16 × 16 blocks)",
                       metrics=("dram", "coalescing")),
            ag.profile(tiled_matmul_kernel, grid_tiled, (TILE, TILE), dA, dB, dC,
                       label=f"tiled, TILE = {TILE} (yours)", metrics=("dram", "coalescing")),
        ])
        report.show(("dram", "coalescing"))
    except ag.profiler.ProfilerFailed as failed:
        why = str(failed)
if why:
    print(why + "\n")
    ag.profiler.recorded("ch05").show(("dram", "coalescing"))

# %% [markdown]
# **What the H200 report shows.** The tiled kernel took 35.6 ms under the profiler, the naive one
# 132.6 ms: 3.7 times faster. Yet the tiled kernel read **twice as many bytes from DRAM**,
# 33.6 GB against 16.3 GB, when A, B and C hold 0.2 GB between them. And neither kernel is
# limited by DRAM: the naive one used 2.6% of the DRAM's peak bandwidth, the tiled one 19.6%.
#
# - What the tiles cut is the number of **loads**: the naive kernel's warps executed 4,295
#   million global loads, the tiled kernel's 537 million, 8 times fewer (`TILE = 8`). Most of the
#   naive kernel's loads were answered by the L1 and L2 caches, and issuing them, not DRAM, was
#   what held it back.
# - What DRAM sees depends on the L2 cache (60 MiB on the H200). A row of blocks across C reads
#   the whole of B, 64 MiB, which does not quite fit, so B probably comes from DRAM again for
#   nearly every row of blocks: 4096 / 16 = 256 rows of 16 × 16 blocks for the naive kernel,
#   4096 / 8 = 512 rows of 8 × 8 tiles for the tiled one. 256 × 64 MiB is 17 GB and
#   512 × 64 MiB is 34 GB, close to the two measured amounts (the counters give the totals, not
#   which array the bytes belonged to).
#
# So the roofline's count, every load a trip to DRAM, is wrong both ways here: the caches absorb
# most of the naive kernel's repeats, and the smaller blocks of the tiled kernel make DRAM fetch
# B more often. The counters, not the model, say where the time goes: for the tiled kernel, into
# the SM (shared-memory loads, barriers), which is where chapter 6 continues.

# %% [markdown]
# **Explain the gap (2 points, graded by your instructor).** Take your device's figures (on a GPU:
# `ag.timing.copy_ceiling` for the bandwidth, the FP32 peak from its data sheet; without one, the
# H200-like figures above and the H200 measurements in `docs/benchmarks.md`). Compute your bound
# for the naive kernel (`tile = 1`) and for yours (`tile = TILE`) on 4096³, and compare each with
# the time measured above. In three to six sentences: which kernel is closer to its bound, and
# why is neither at it? Name at least two things the model ignores (caches serving repeated
# loads, shared-memory bandwidth and the two shared loads per multiply-add, barriers, occupancy,
# the tile edges...) and say which one your numbers point to.

# %% [markdown] nbgrader={"grade": true, "grade_id": "matmul_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only).* On the H200 (4.1 TB/s copy, ~67 TFLOP/s FP32): the bound
# for the naive kernel is 2 · 4096³ · 4 B / 4.1 TB/s ≈ 134 ms, yet it ran in 101 ms:
# faster than its own bound, because the model sends every load to DRAM while the L1 and L2
# caches serve most of the repeats (neighbouring threads read the same rows and columns). The
# 8 × 8 tiled bound is ≈ 17 ms, and the tiled kernel is well above it. The tiles cut the global
# loads 8-fold (the profiler cell: 537 million load requests against 4,295 million), though DRAM
# itself moved more bytes, at 19.6% of its peak: the limit is inside the SM. Each multiply-add needs two shared-memory loads, so the kernel is
# bound by shared-memory bandwidth and instruction issue, not by DRAM; blocks of 64 threads and a
# barrier every 8 multiply-adds also leave the SM idle while warps wait. The model's compute bound
# (2 ms) is out of reach until each thread reuses values from registers (chapter 6).

# %% [markdown]
# Below the ridge every doubling of `TILE` halves the bound; past it (TILE = 64 here) the
# arithmetic takes longer than the traffic and bigger tiles no longer help. But a 64 × 64 tile
# would need 4096 threads per block, four times the limit: the way past that is to let each
# thread compute several elements of C (**thread coarsening**, PMPP ch. 6).
#
# Questions to answer for yourself (not graded):
# 1. Shared memory per SM is limited (say 100 KB for the blocks of one SM). How many blocks of
#    your kernel fit, by shared memory alone, with `TILE = 8`? With `TILE = 32`? Why would you
#    want several blocks on one SM at once?
# 2. In the tiled kernel, threads with neighbouring `tx` load `A[row, t·TILE + tx]` and
#    `B[t·TILE + ty, col]`. Are those neighbouring addresses in memory? (Chapter 6: coalescing.)
# 3. Why must a thread whose `(row, col)` is outside C still run the whole loop, rather than
#    `return` at the start?
#
# ## Going further
# - PMPP ch. 5: §5.1 (importance of memory access efficiency), §5.2 (CUDA memory types), §5.3
#   (tiling for reduced memory traffic), §5.4 (a tiled matrix multiplication kernel), §5.5
#   (boundary checks), §5.6 (impact of memory usage on occupancy); ch. 6 (performance
#   considerations: coalescing, thread coarsening).
# - GPU MODE lecture 4 (compute and memory basics, PMPP ch. 4–5), lecture 8 (CUDA performance
#   checklist) and lecture 1 (*How to profile CUDA kernels in PyTorch*, Mark Saroufim: Nsight
#   Compute and its counters); the roofline model: Williams, Waterman and Patterson, *Roofline: an insightful
#   visual performance model for multicore architectures* (CACM, 2009).
# - **On AMD (HIP):** shared memory is called **LDS** (local data share, 64 KB per compute unit on
#   most chips, up to 160 KB on recent ones) and `cuda.syncthreads()` is `__syncthreads()` there
#   too; numba-hip keeps the same Python names. A wavefront is 64 threads, so an 8 × 8 block is one
#   wavefront: the missing-barrier race may hide even longer on AMD, and is still a bug.
