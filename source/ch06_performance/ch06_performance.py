# %% [markdown]
# # Chapter 6 · Performance considerations: coalescing, banks, coarsening, register tiles
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 6.
#
# **Before you start:** chapters 1–5 (chapter 5's tiled matrix product above all). **Time:** about 4
# hours, reading and exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Say how a warp's 32 loads or stores turn into **32-byte sectors** of memory traffic, and
#   compute, before running anything, how many sectors an access pattern moves (**coalescing**).
# - Write a **matrix transpose** three ways and measure each against a device-to-device copy of
#   the same bytes: naive (one side of every access strided), tiled through **shared memory**
#   (both sides coalesced), and tiled with a **padded** tile that removes the 32-way
#   **shared-memory bank conflicts** of the first tiled version. You will count those conflicts
#   yourself, even without a GPU.
# - Use **thread coarsening**: give each thread more than one element of work (4 elements per
#   thread in the transpose, an 8 × 8 tile of C per thread in a **register-tiled matmul** that
#   makes 16 shared-memory loads for 64 multiply-adds, where chapter 5's made 128).
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32

ag.banner()
ch06 = ag.problems.ch06

# %% [markdown]
# ## The idea: memory is read in sectors, a warp at a time
#
# DRAM does not deliver single bytes. Reading one location opens a whole row of the memory array
# and streams out a **burst** of consecutive bytes; the GPU's caches are built around the same
# idea and move data in **sectors of 32 bytes** (four sectors make a 128-byte cache line). When
# the 32 threads of a warp execute one load instruction, the hardware gathers their 32 addresses
# and fetches every sector that at least one of them touches, once (PMPP §6.1):
#
# - thread `t` reads `x[base + t]` (float32, 4 bytes apart): the 32 addresses cover 128
#   consecutive bytes, **4 sectors**, and every byte fetched is used. The access is
#   **coalesced**.
# - thread `t` reads `x[t, col]` of a row-major matrix with 37 columns: the addresses are
#   4 · 37 = 148 bytes apart, each in its own sector: **32 sectors** (1024 bytes) moved for 128
#   bytes used. Seven eighths of the traffic is wasted (if nothing else uses those sectors soon).
#
# Row-major layout (chapter 3) decides which is which: along a row, neighbours are 4 bytes apart;
# down a column, they are a whole row apart. The picture shows the bytes one warp asks for (dark)
# and the sectors the memory system must move to serve them (shaded).

# %%
def warp_picture(ax, stride, elem=4, title=""):
    span = 32 * max(stride, elem) + 32
    for s in range(0, span, 32):
        ax.axvline(s, color="#ddd", lw=0.5)
    touched = set()
    for t in range(32):
        start = t * stride
        touched.update(range(start // 32, (start + elem - 1) // 32 + 1))
        ax.add_patch(plt.Rectangle((start, 0.25), elem, 0.5, color="#1f4e79", zorder=3))
    for s in touched:
        ax.add_patch(plt.Rectangle((32 * s, 0), 32, 1, color="#f4b183", alpha=0.5, lw=0))
    ax.set_xlim(0, span)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xlabel("byte address (grid lines: 32-byte sectors)")
    ax.set_title(f"{title}: {len(touched)} sectors = {32 * len(touched)} bytes moved for "
                 f"{32 * elem} bytes used")


fig, axes = plt.subplots(2, 1, figsize=(10, 3.6))
warp_picture(axes[0], 4, title="a warp reads a row (stride 4 B)")
warp_picture(axes[1], 148, title="a warp reads a column of a 37-column matrix (stride 148 B)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## A transpose: one side of the copy is always a column
#
# The transpose of an `M × N` matrix is the `N × M` matrix with `out[j, i] = inp[i, j]`. It does
# no arithmetic: it is a copy whose **destination is laid out the other way**. If a warp's threads
# take 32 neighbouring columns `j` of one input row `i`, their reads are coalesced (a row of
# `inp`), but their writes `out[j, i]` go down a column of `out`, `4 · M` bytes apart. Make the
# threads walk down a column instead, and the reads are strided while the writes are coalesced.
# Either way one side moves whole sectors for one float each. That makes the transpose the
# classic test of coalescing: its ideal speed is known (a copy of the same bytes), and the naive
# version misses it by a wide margin.
#
# ## The CPU baseline
#
# NumPy transposes by copying `inp.T` (a strided view) into a fresh array. On the CPU the
# strided side costs too: each cache line read or written serves few elements.

# %%
rng = np.random.default_rng(6)
M, N = 37, 45                          # small and not square, as the checks use
inp = rng.standard_normal((M, N)).astype(np.float32)
out_cpu = np.ascontiguousarray(inp.T)
print(f"inp is {inp.shape[0]} × {inp.shape[1]}, out is {out_cpu.shape[0]} × {out_cpu.shape[1]}; "
      f"out[5, 2] = {out_cpu[5, 2]:.4f} = inp[2, 5] = {inp[2, 5]:.4f}")

big = rng.standard_normal((2048, 3072)).astype(np.float32)
big_out = np.empty((3072, 2048), np.float32)
cpu = ag.timing.time_cpu("NumPy copyto(out, inp.T)", lambda: np.copyto(big_out, big.T),
                         repeats=3, nbytes=8 * big.size)
copy = ag.timing.time_cpu("NumPy copy (same bytes)", lambda: np.copyto(big_out.reshape(big.shape), big),
                          repeats=3, nbytes=8 * big.size)
print(f"2048 × 3072 transpose on this CPU: {cpu.median_ms:.1f} ms ({cpu.gbps:.1f} GB/s); a plain "
      f"copy of the same bytes: {copy.median_ms:.1f} ms ({copy.gbps:.1f} GB/s)")

# %% [markdown]
# ## Exercise 6.1 · A naive transpose (2 points)
#
# Write `transpose_naive_kernel(inp, out)`: `inp` is an `M × N` float32 device array, `out` an
# `N × M` one. One thread per element of the **input**: the thread at `col, row = cuda.grid(2)`
# copies `inp[row, col]` to `out[col, row]`, if `row < M` and `col < N`. Roughly 4 lines.
#
# **How the check launches it.** 2-D blocks of `(x, y)` threads laid over the **input**: x across
# its `N` columns, y down its `M` rows, a grid of `(ceil(N / x), ceil(M / y))` blocks. The visible
# check uses 16 × 8 blocks; the hidden tests draw among 16 × 8, 8 × 16, 8 × 8, 16 × 16 and 32 × 4.
#
# **What the check does.** `out` filled with NaN, then every element compared with NumPy's
# transpose **exactly** (a copy must deliver every bit). Inputs 37 × 45 (not square, no side a
# multiple of a block side), 1 × 33 and 1 × 1; hidden: 45 × 37, 33 × 1 and random shapes below 50.
# On a GPU the visible check starts with 1081 × 1919, and the random hidden shapes go up to 3000.

# %% nbgrader={"grade": false, "grade_id": "transpose_naive_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def transpose_naive_kernel(inp, out):
    ### BEGIN SOLUTION
    col, row = cuda.grid(2)
    if row < inp.shape[0] and col < inp.shape[1]:
        out[col, row] = inp[row, col]
    ### END SOLUTION


# %% [markdown]
# Try it on the 37 × 45 matrix, launched as the check launches it:

# %%
block = (16, 8)
grid = ((N + block[0] - 1) // block[0], (M + block[1] - 1) // block[1])
d_out = cuda.to_device(np.full((N, M), np.nan, np.float32))
transpose_naive_kernel[grid, block](cuda.to_device(inp), d_out)
got = d_out.copy_to_host()
print(f"grid {grid} of {block} blocks; unwritten: {np.isnan(got).sum()}, "
      f"equal to NumPy: {np.array_equal(got, out_cpu)}")

# %% nbgrader={"grade": true, "grade_id": "transpose_naive_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch06.transpose_naive.check(transpose_naive_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch06.transpose_naive.check_hidden(transpose_naive_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: a transpose that only works on squares
#
# The kernel below guards with the **output's** shape and reads `inp[col, row]`: the roles of
# the two indices are swapped on both sides. **Predict before you run**: on a square matrix, is
# the result right? On the 37 × 45 one?

# %%
@cuda.jit
def transpose_swapped(inp, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:     # the output's shape: N × M
        out[row, col] = inp[col, row]


for shape in ((40, 40), (M, N)):
    x = rng.standard_normal(shape).astype(np.float32)
    d_o = cuda.to_device(np.full(shape[::-1], np.nan, np.float32))
    blocks = ((shape[1] + 15) // 16, (shape[0] + 7) // 8)
    try:
        transpose_swapped[blocks, (16, 8)](cuda.to_device(x), d_o)
        o = d_o.copy_to_host()
        print(f"{shape[0]} × {shape[1]}: equal to NumPy: {np.array_equal(o, x.T)}, "
              f"unwritten: {np.isnan(o).sum()} of {o.size}")
    except Exception as exc:  # CPU mode reports out-of-range indices; a GPU may not
        print(f"{shape[0]} × {shape[1]}: the launch failed: {type(exc).__name__}: "
              f"{str(exc).splitlines()[0][:120]}")

# %% [markdown]
# On the square the swap is invisible: `out[row, col] = inp[col, row]` is the same statement as
# `out[col, row] = inp[row, col]` with the names exchanged, and `out` has the input's shape. On
# 37 × 45 the grid is laid over the input (45 columns by 37 rows, rounded up to whole blocks: 48
# by 40), but the guard lets through `row < 45` and `col < 37`, the output's shape: the threads
# that would write the last 5 rows of `out` do not exist, and 5 × 37 = 185 elements stay
# unwritten (NaN). With other shapes the same swap reads or writes past the end of an array
# instead, which CPU mode stops at once and a GPU may do silently. That is why every check in
# this course starts with a non-square shape.
#
# ## Predict: how many sectors does a warp move?
#
# To predict a kernel's traffic, count sectors per warp-wide access. The general case: thread `t`
# of a warp (t = 0 … 31) accesses `elem_bytes` bytes starting at byte address `t · stride_bytes`
# (thread 0 starts a sector). The bytes `a` with `a // 32` equal belong to one sector; the warp
# moves every sector that holds at least one of its bytes, once.
#
# ## Exercise 6.2 · Sectors per warp (2 points)
#
# Write `sectors_per_warp(stride_bytes, elem_bytes)`: two Python ints (`stride_bytes ≥ 0`, and
# `elem_bytes` one of 1, 2, 4, 8, 16); return the number of distinct 32-byte sectors that the 32
# threads' accesses touch, as an int. Careful: a value can **straddle** two sectors (8 bytes at
# address 28 touch sectors 0 and 1), and several threads can share one (stride 0: one sector).
# Roughly 5 lines; a loop over the 32 threads and a `set` is fine.
#
# **Predict first, by hand**: a row of float32 (stride 4, 4 bytes)? A column of a 37-column
# float32 matrix (stride 148)? float64 neighbours (stride 8, 8 bytes)? Then let the check confirm.
#
# **What the check does.** Your function on 8 cases (the three above, stride 0, float32 every
# 8 bytes, 8-byte values 12 bytes apart, 4-byte values 33 bytes apart, 16-byte values side by
# side), then 200 hidden random ones (strides 0 to 299 bytes). Answers must be exact.

# %% nbgrader={"grade": false, "grade_id": "sectors_per_warp_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def sectors_per_warp(stride_bytes, elem_bytes):
    """Distinct 32-byte sectors touched when thread t (0..31) accesses elem_bytes bytes at byte
    t * stride_bytes."""
    ### BEGIN SOLUTION
    sectors = set()
    for t in range(32):
        first = t * stride_bytes
        last = first + elem_bytes - 1
        sectors.update(range(first // 32, last // 32 + 1))
    return len(sectors)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "sectors_per_warp_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch06.sectors_per_warp.check(sectors_per_warp)
### BEGIN HIDDEN TESTS
ag.problems.ch06.sectors_per_warp.check_hidden(sectors_per_warp)
### END HIDDEN TESTS

# %% [markdown]
# Now the prediction. The naive transpose of an `M × N` matrix, one warp = 32 neighbouring
# columns of one input row: its read touches `sectors_per_warp(4, 4)` sectors, its write (down a
# column of `out`, whose rows are `M` floats long) `sectors_per_warp(4 · M, 4)`. If every sector
# crossed the DRAM bus, the traffic per element would be the sectors' bytes divided by 32
# elements; a transpose that is coalesced on both sides moves 8 bytes per element, like a copy.
# The cell predicts both times on an H200-like device (4.8 TB/s advertised; on the course's H200
# a copy of the speed test's 805 MB reached about 4.2 TB/s, the figure used here) for the size
# the speed test uses.

# %%
M_big, N_big = ch06.SPEED_TRANSPOSE
bandwidth = 4.2e12                       # bytes/s: what a device-to-device copy reached on the H200
read_bytes = 32 * sectors_per_warp(4, 4) / 32            # per element
write_bytes = 32 * sectors_per_warp(4 * M_big, 4) / 32
naive_s = M_big * N_big * (read_bytes + write_bytes) / bandwidth
ideal_s = M_big * N_big * 8 / bandwidth
print(f"{M_big} × {N_big} float32: per element the naive transpose moves {read_bytes:g} B in and "
      f"{write_bytes:g} B out")
print(f"predicted: naive ≥ {naive_s * 1e3:.2f} ms, coalesced (like a copy) ≥ {ideal_s * 1e3:.2f} ms, "
      f"a ratio of {naive_s / ideal_s:.1f}")

# %% [markdown]
# Keep these two numbers: you will hold them against measurements after the next exercise.
#
# ## Both sides coalesced: a tile through shared memory
#
# The way out is to **change the order** in which the elements travel (PMPP calls it corner
# turning). A block takes a `TILE × TILE` square of the input:
#
# 1. its threads read the square **row by row** (neighbouring threads, neighbouring columns:
#    coalesced) into a shared-memory array `tile`, element `[r, c]` of the square into
#    `tile[r, c]`;
# 2. `cuda.syncthreads()`: the whole square is in `tile`;
# 3. they write it to `out` **row by row of the output**: the output's square sits at the
#    transposed position (the block indices swap roles), and row `r` of the output's square is
#    column `r` of `tile`. Neighbouring threads write neighbouring columns of `out`, reading
#    `tile[c, r]`: the column walk now happens in shared memory, which has no sectors.
#
# **Bank conflicts.** Shared memory is not free of layout rules either. It is split into
# **32 banks**, each 4 bytes wide: the word at 4-byte address `w` lives in bank `w mod 32`. A
# bank serves one word per cycle, so when the threads of a warp ask one bank for *different*
# words, the access is split into as many passes as that bank has words to deliver (an **n-way
# bank conflict**); threads that ask for the *same* word share it (a broadcast). A
# `TILE × TILE = 32 × 32` float32 tile has rows of 32 words: element `[r, c]` is word
# `32·r + c`, in bank `c`. In the column read of step 3, the 32 threads of a warp read
# `tile[0..31, r]` (one value of `r` for the whole warp): all in bank `r`. **32-way conflict**:
# 32 passes where one would do.
#
# **Padding.** Declare the tile with one unused column, `(TILE, TILE + 1)`. Element `[r, c]` is
# now word `33·r + c`, in bank `(r + c) mod 32`: down a column every element sits in another
# bank, and the column read takes one pass. The row accesses of step 1 stay conflict-free. 4 KB
# of tile cost 128 extra bytes.

# %%
def bank_picture(ax, row_words, title):
    rows, cols = 32, row_words
    banks = (np.arange(rows)[:, None] * row_words + np.arange(cols)[None, :]) % 32
    shown = np.ma.masked_array(banks, mask=np.zeros_like(banks, bool))
    if row_words > 32:
        shown.mask[:, 32:] = True                      # the padding column is never used
    ax.imshow(shown, cmap="hsv", interpolation="nearest", alpha=0.55, aspect="equal")
    for r in range(rows):                              # warp 0, step 3: column 0 of the tile
        ax.add_patch(plt.Rectangle((-0.5, r - 0.5), 1, 1, fill=False, ec="black", lw=1.2))
    hit = banks[:, 0]
    ax.set_title(f"{title}\ncolumn 0 (black): {len(set(hit))} bank(s), "
                 f"{max(np.bincount(hit))} pass(es)")
    ax.set_xlabel("column of the tile (colour: bank)")
    ax.set_ylabel("row of the tile")


fig, axes = plt.subplots(1, 2, figsize=(11, 5.2))
bank_picture(axes[0], 32, "tile (32, 32): every row starts in bank 0")
bank_picture(axes[1], 33, "tile (32, 33): each row starts one bank later")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Hiding latency, and thread coarsening
#
# A load from DRAM takes hundreds of cycles to come back (a few hundred nanoseconds, more under
# heavy load); meanwhile the memory system can serve many others. To keep the bus busy, enough
# bytes must be **in flight** at every moment: bandwidth × latency (Little's law, as in chapter
# 4; PMPP §6.2 on hiding memory latency). For 4.8 TB/s and a rough 0.3 µs (about 600 cycles,
# chapter 4's estimate) that is about 1.4 MB across the chip, some 11 KB per SM on an H200's 132
# SMs: about 2,700 float32 loads waiting at once on every SM. An SM holds at most 2048 threads,
# so one load per thread is not enough; several **independent** loads per thread are.
#
# That is one reason for **thread coarsening** (PMPP §6.3): give each thread several elements
# of work. Here a block of `TILE × BLOCK_ROWS = 32 × 8` threads moves a `32 × 32` tile, each
# thread 4 elements (rows `ty`, `ty + 8`, `ty + 16`, `ty + 24`): its 4 loads are independent,
# so the compiler can issue them back to back (whether Numba's code does is a detail of the
# checklist at the end), and the per-thread work of computing indices is shared by 4 elements.
# The price of coarsening: fewer threads in all, so the grid must still have enough of them to
# fill the GPU (here: millions).
#
# ## Exercise 6.3 · A tiled, padded, coarsened transpose (4 points + 2 for speed)
#
# Write `transpose_tiled_kernel(inp, out)` (same arrays as in 6.1) with the module constants of
# the cell: `TILE = 32`, `BLOCK_ROWS = 8`, and `TILE_PAD = TILE + 1` for the tile's row length.
# The tile is `cuda.shared.array((TILE, TILE_PAD), float32)`. **Numba needs the shape as
# constants**: `(TILE, TILE + 1)` written inside the kernel runs in CPU mode but does not compile
# on a GPU; use `TILE_PAD`. What the kernel must do:
#
# - each block moves one `TILE × TILE` tile of `inp` to its transposed place in `out`, each of its
#   `TILE × BLOCK_ROWS` threads moving `TILE / BLOCK_ROWS = 4` elements;
# - **both** global accesses coalesce: a warp reads consecutive elements of a row of `inp` and
#   writes consecutive elements of a row of `out` (the transposing happens in shared memory);
# - one barrier, between the tile's loads and its stores;
# - no bank conflicts when the tile is read (that is what the padding is for);
# - nothing read outside `inp`, nothing written outside `out`, on tiles cut by either edge.
#
# The hints hold the index arithmetic, step by step, if you want it.
# Roughly 14 lines.
#
# **How the check launches it.** Blocks of `(TILE, BLOCK_ROWS) = (32, 8)` threads, a grid of
# `(ceil(N / 32), ceil(M / 32))` blocks: one block per tile of the input. Every launch, visible
# and hidden, uses these shapes, so keep the constants.
#
# **What the check does.** As in 6.1 (exact comparison), on 37 × 45 (2 × 2 tiles, every edge
# tile partial), 5 × 70 (three tiles, each 5 rows deep) and 1 × 1; hidden: 45 × 37, 70 × 5 and a
# random shape below 70 (on a GPU the visible check starts with 1081 × 1919, and the hidden tests
# add three random shapes up to 3000). In CPU mode the race detector watches every access to the
# tile: a missing barrier fails every time. The check cannot see bank conflicts (an unpadded tile
# gives the right answer); the speed test can, and the cell after it counts them.

# %% nbgrader={"grade": false, "grade_id": "transpose_tiled_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
from numba import float32

TILE = 32          # the tile's side
BLOCK_ROWS = 8     # the block is TILE × BLOCK_ROWS threads: each thread moves TILE / BLOCK_ROWS elements
TILE_PAD = TILE + 1


@cuda.jit
def transpose_tiled_kernel(inp, out):
    ### BEGIN SOLUTION
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx              # a column of inp
    row = cuda.blockIdx.y * TILE + ty              # a row of inp
    for j in range(0, TILE, BLOCK_ROWS):
        if row + j < inp.shape[0] and col < inp.shape[1]:
            tile[ty + j, tx] = inp[row + j, col]
    cuda.syncthreads()                             # the whole tile is loaded
    col = cuda.blockIdx.y * TILE + tx              # a column of out
    row = cuda.blockIdx.x * TILE + ty              # a row of out
    for j in range(0, TILE, BLOCK_ROWS):
        if row + j < out.shape[0] and col < out.shape[1]:
            out[row + j, col] = tile[tx, ty + j]
    ### END SOLUTION


# %% [markdown]
# Try it on the 37 × 45 matrix:

# %%
tgrid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
d_out = cuda.to_device(np.full((N, M), np.nan, np.float32))
transpose_tiled_kernel[tgrid, (TILE, BLOCK_ROWS)](cuda.to_device(inp), d_out)
got = d_out.copy_to_host()
print(f"grid {tgrid} of {TILE} × {BLOCK_ROWS} blocks; unwritten: {np.isnan(got).sum()}, "
      f"equal to NumPy: {np.array_equal(got, out_cpu)}")

# %% nbgrader={"grade": true, "grade_id": "transpose_tiled_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch06.transpose_tiled.check(transpose_tiled_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch06.transpose_tiled.check_hidden(transpose_tiled_kernel)
### END HIDDEN TESTS

# %% [markdown]
# **Speed (2 points, on a GPU).** An 8192 × 12288 input (384 MiB, far larger than the L2
# cache), fresh inputs and a NaN-filled output for each timed call, 4096 random elements checked
# after every call. The bar: 60% of the speed of the course's own tiled transpose (same launch,
# timed in the same run; it uses the Numba trick of the checklist at the end) and 50× NumPy's
# transpose on one CPU core. On the course's H200 (`docs/benchmarks.md`) the reference took
# 0.233 ms and a plain padded solution 0.338–0.343 ms (68–69%: it passes); an unpadded tile,
# 0.550 ms (42%), and the naive kernel, 1.50 ms (16%), fall short.

# %% nbgrader={"grade": true, "grade_id": "transpose_tiled_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch06.transpose_tiled.check_speed(transpose_tiled_kernel)

# %% [markdown]
# ## Break it: no barrier
#
# Remove the `cuda.syncthreads()` and a thread may read `tile[tx, ty + j]` before the thread
# that loads it has written it. **Predict**: which two lines will CPU mode name?

# %%
from autograder import SharedMemoryRace


@cuda.jit
def transpose_no_barrier(inp, out):
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        if row + j < inp.shape[0] and col < inp.shape[1]:
            tile[ty + j, tx] = inp[row + j, col]
    # cuda.syncthreads() is missing here
    col, row = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        if row + j < out.shape[0] and col < out.shape[1]:
            out[row + j, col] = tile[tx, ty + j]


d_out = cuda.to_device(np.full((N, M), np.nan, np.float32))
try:
    transpose_no_barrier[tgrid, (TILE, BLOCK_ROWS)](cuda.to_device(inp), d_out)
    cuda.synchronize()
    print("the launch finished; equal to NumPy:", np.array_equal(d_out.copy_to_host(), out_cpu),
          "(on a GPU it may be right this time and wrong the next)")
except SharedMemoryRace as race:
    print("CPU mode stopped the launch:\n")
    print(str(race).replace(": thread", ":\nthread", 1))

# %% [markdown]
# On a GPU the 256 threads of a block form 8 warps that run in no fixed order: without the
# barrier, a warp that reaches the stores first reads tile entries that other warps have not
# loaded yet. Whether that shows depends on timing, which is why CPU mode checks every access
# instead.
#
# ## Count the bank conflicts (works in CPU mode)
#
# `ag.problems.ch06.bank_conflicts(kernel, blocks, threads, *args)` launches a kernel with the
# race detector's recording on and replays every shared-memory access a warp makes together: same
# line, same barrier interval, same pass of the loop. For each it counts the words each bank
# must deliver; the most in one bank is the number of **passes** the access takes. Here it is on
# one 32 × 32 tile, for a copy of your kernel with an unpadded tile, and for yours:

# %%
@cuda.jit
def transpose_unpadded(inp, out):
    tile = cuda.shared.array((TILE, TILE), float32)      # no padding column
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


one_tile = rng.standard_normal((TILE, TILE)).astype(np.float32)
for label, kernel in (("unpadded tile (32, 32)", transpose_unpadded),
                      ("your kernel", transpose_tiled_kernel)):
    if ag.backend.is_gpu:
        print("(on a GPU the accesses are not recorded: run this cell in CPU mode, "
              "AAG_BACKEND=cpu, or read Nsight Compute's bank-conflict counters in the "
              "profiler cell after 'Measure it')")
        break
    rows = ch06.bank_conflicts(kernel, (1, 1), (TILE, BLOCK_ROWS), cuda.to_device(one_tile),
                               cuda.to_device(np.zeros((TILE, TILE), np.float32)))
    print(f"{label}:\n{ch06.bank_table(rows)}\n")

# %% [markdown]
# The writes into the tile (step 1) take one pass per warp in both kernels. The reads of step 3
# take 32 passes each with the unpadded tile, one with the padded one: 8 warps × 4 passes of
# `j`, 32 warp-wide reads per block, 1024 passes against 32.
#
# ## Measure it
#
# On a GPU the cell below times, on the speed test's 8192 × 12288 input: your naive kernel (with
# 32 × 8 blocks), the unpadded tiled kernel, your tiled kernel, the course's reference, and a
# device-to-device copy of the same bytes (the ceiling: `ag.timing.copy_ceiling`); it prints
# each one's GB/s and share of the copy, and your prediction from Exercise 6.2 beside the naive
# one, then draws each kernel's time and speedup over the naive one, with the copy as a dashed
# line. In CPU mode it draws the same chart from the course's H200 run of the solution's kernels.

# %%
why = ag.timing.not_measured()
if why:
    print(why, f"On a GPU, this cell times the naive, unpadded and padded transposes "
          f"of a {M_big} × {N_big} matrix against a copy of the same bytes. Below, what the "
          "course measured with the solution's kernels:")
    ag.experiments.steps("ch06_transpose").show()
else:
    from autograder import timing
    d_in = cuda.device_array((M_big, N_big), np.float32)
    timing.fill_uniform(d_in, seed=6)
    d_t = cuda.device_array((N_big, M_big), np.float32)
    nbytes = 8 * M_big * N_big
    g32 = ((N_big + 31) // 32, (M_big + 31) // 32)
    gnaive = ((N_big + 31) // 32, (M_big + 7) // 8)
    reference = ch06.transpose_tiled.reference_kernel()
    runs = {
        "naive (yours, 32 × 8 blocks)": lambda i: transpose_naive_kernel[gnaive, (32, 8)](d_in, d_t),
        "tiled, unpadded": lambda i: transpose_unpadded[g32, (TILE, BLOCK_ROWS)](d_in, d_t),
        "tiled, padded (yours)": lambda i: transpose_tiled_kernel[g32, (TILE, BLOCK_ROWS)](d_in, d_t),
        "course reference": lambda i: reference[g32, (TILE, BLOCK_ROWS)](d_in, d_t),
    }
    stats = {label: timing.time_gpu(label, run, nbytes=nbytes) for label, run in runs.items()}
    ceiling = timing.copy_ceiling(nbytes)
    print(f"{'kernel':30s} {'time':>9s} {'GB/s':>7s} {'of copy':>8s}")
    for label, s in stats.items():
        print(f"{label:30s} {s.median_ms:7.3f}ms {s.gbps:7.0f} {s.gbps / ceiling.gbps:8.0%}")
    print(f"{ceiling.label:30s} {ceiling.median_ms:7.3f}ms {ceiling.gbps:7.0f}")
    scale = bandwidth / (ceiling.gbps * 1e9)      # the prediction, redone at this GPU's copy speed
    print(f"your prediction at this GPU's copy bandwidth: naive ≥ {naive_s * scale * 1e3:.3f} ms, "
          f"coalesced ≥ {ideal_s * scale * 1e3:.3f} ms")
    ag.experiments.steps("ch06_transpose", stats, reference=ceiling,
                         title=f"Transposes of a {M_big} × {N_big} float32 matrix").show()

# %% [markdown]
# ## Look inside: sectors and bank conflicts, counted by the GPU
#
# The sector model of Exercise 6.2 and the bank-conflict replay above are predictions. Nsight
# Compute (`ncu`, NVIDIA's profiler; chapter 5 shows how `ag.profile` runs it in a separate
# process) counts the same events on the GPU itself. The cell below asks for three groups of
# counters:
#
# - **DRAM**: the bytes read from and written to DRAM, and **× arrays**, those bytes over the
#   805 MB that the input and output hold.
# - **Coalescing**: the **sectors per request** of the global loads and stores: the 32-byte
#   sectors one warp-wide access touched. 4 means fully coalesced (32 threads, 32 neighbouring
#   float32, 128 bytes); 32 means every thread's word in a sector of its own.
# - **Bank conflicts**: per warp-wide shared-memory access, the **passes** (ncu calls them
#   wavefronts) it took: 1 without a conflict, up to 32; and the conflicts, the passes beyond
#   the first.
#
# On a GPU with `ncu` it profiles your naive kernel, the unpadded tiled kernel and your tiled
# kernel on the 8192 × 12288 input (times under the profiler are longer than the timed ones:
# the clock is held at its base rate). Elsewhere, and while the notebook is graded, it shows
# the course's H200 report for its own kernels: the naive one, the reference (padded tile) and
# the unpadded tile.

# %%
why = ag.profiler.why_not()
if why is None:
    d_in = cuda.device_array((M_big, N_big), np.float32)
    ag.timing.fill_uniform(d_in, seed=6)
    d_t = cuda.device_array((N_big, M_big), np.float32)
    g32 = ((N_big + 31) // 32, (M_big + 31) // 32)
    gnaive = ((N_big + 31) // 32, (M_big + 7) // 8)
    groups = ("dram", "coalescing", "bank_conflicts")
    try:
        report = ag.profiler.live([
            ag.profile(transpose_naive_kernel, gnaive, (32, 8), d_in, d_t,
                       label="naive (yours)", metrics=groups),
            ag.profile(transpose_unpadded, g32, (TILE, BLOCK_ROWS), d_in, d_t,
                       label="tiled, unpadded", metrics=groups),
            ag.profile(transpose_tiled_kernel, g32, (TILE, BLOCK_ROWS), d_in, d_t,
                       label="tiled, padded (yours)", metrics=groups),
        ])
        report.show(groups)
    except ag.profiler.ProfilerFailed as failed:
        why = str(failed)
if why:
    print(why + "\n")
    ag.profiler.recorded("ch06", ("transpose_naive", "transpose_tiled")).show(
        ("dram", "coalescing", "bank_conflicts"))

# %% [markdown]
# **What the H200 report shows.**
#
# - **Coalescing.** Every kernel's loads take 4 sectors per request: each warp reads 32
#   neighbouring floats of a row. The naive kernel's stores take **32**: a warp writes 32 floats
#   of a column, 32 different rows, so each thread's 4 bytes sit in a 32-byte sector of their own.
#   The tiled kernels store rows of the output, 4 sectors per request, as predicted.
# - **DRAM.** Yet DRAM saw almost the same bytes for all three: 869 MB for the naive kernel,
#   785 MB and 786 MB for the tiled ones, against the 805 MB of the arrays. The naive kernel's
#   scattered stores land in the L2 cache, and by the time a sector goes out to DRAM the warps
#   writing the neighbouring rows have mostly filled it in. (A figure a little below the arrays'
#   size is not a mistake: writes still in the L2 cache when the kernel ends reach DRAM later,
#   outside the measurement.) What sets the naive kernel apart (1.58 ms under the profiler,
#   against 0.244 ms for the reference) is the 8 times as many sector writes from the SMs to L2,
#   not the DRAM traffic.
# - **Bank conflicts.** With the unpadded tile, each shared load of the column reads took 32.4
#   passes on average, 98.7 million conflicts in all; with the padded tile, 1.12 passes and 0.38
#   million. Both kernels execute the same 3.1 million shared load instructions: the padding
#   changes only where the words sit. The unpadded kernel took 0.638 ms under the profiler. (The
#   reference's 0.244 ms owes something to the checklist's unsigned indices too, so compare your
#   own two tiled kernels on a GPU to see what the padding alone buys.)

# %% [markdown]
# **Explain the gap (2 points, graded by your instructor).** Your prediction said the naive
# transpose moves 4.5 times the bytes of a coalesced one. Compare it with the measured ratio of
# the naive time to the padded tiled time (on a machine without a GPU, use the H200 figures in
# `docs/benchmarks.md` of the course repository). In three to six sentences: is the measured
# gap larger or smaller than predicted, and why? A full answer names what the sector model leaves
# out (hint: where do the other 7 floats of each written sector come from, and when; the L2 cache
# between the SMs and DRAM), says what still makes the naive kernel slow even if DRAM traffic were
# ideal, and explains, with the numbers, what the padding bought over the unpadded tile.

# %% [markdown] nbgrader={"grade": true, "grade_id": "transpose_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only), with the course's H200 figures (8192 × 12288, 805 MB
# moved).* The sector model predicts 36 bytes per element for the naive kernel against 8 for a
# coalesced one, a ratio of 4.5. Measured: naive 1.50 ms (536 GB/s), the padded tiled kernel
# written plainly 0.338 ms: a ratio of 4.4, as predicted; the course's reference, with its four
# loads in flight per thread, 0.233 ms (82% of a copy of the same bytes, 0.190 ms). The match
# does not prove that DRAM moved 36 bytes per element: writes land first in the L2 cache
# (write-back, 60 MiB here), where the other seven floats of a sector arrive moments later from
# the warps handling the next rows, so DRAM may see whole sectors. What the cache cannot remove
# is the 8× larger number of sector writes from the SMs to L2, one store instruction touching 32
# sectors: with ideal DRAM traffic the naive kernel is still limited by those transactions
# (timing alone cannot tell the two apart; the profiler's counters above do: DRAM moved 869 MB
# for the naive kernel and 785 MB for the reference, while the naive stores touched 8 times as
# many sectors). The padding
# bought 1.6×: the unpadded tile took 0.550 ms, its column reads 32 passes per warp instead of 1.
# What is left between the plain tiled kernel and the copy is the load issue: one load in flight
# per thread (the signed-index code of the checklist) instead of four.

# %% [markdown]
# ## Register tiling: thread coarsening for the matmul
#
# Chapter 5's tiled matmul computes one element of C per thread. Per step `k` of the inner loop a
# thread reads two words of shared memory (`sA[ty, k]` and `sB[k, tx]`) for one multiply-add:
# shared memory, not DRAM, is now the bottleneck, and each value a thread reads is used once.
#
# Coarsen: give each thread a `TM × TN` tile of C, kept in **registers**
# (`cuda.local.array((TM, TN), float32)`, which the compiler maps to registers when every index
# is a constant after unrolling). For each `k`, the thread loads `TM` values of A's tile and `TN`
# of B's into registers, then does all `TM · TN` multiply-adds between them (an outer product):
#
# ```
# for k in range(BK):
#     a[i] = sA[k, my row i]       for i < TM       (TM shared loads)
#     b[j] = sB[k, my column j]    for j < TN       (TN shared loads)
#     acc[i, j] += a[i] * b[j]     for all i, j     (TM · TN multiply-adds)
# ```
#
# With `TM = TN = 8`: 16 shared loads for 64 multiply-adds, 8 times fewer loads per multiply-add
# than chapter 5. A block of `8 × 8` threads then covers a `BM × BN = 64 × 64` tile of C, so each
# tile of A and B loaded from global memory serves 64 rows or columns: about 16 FLOP per byte
# from DRAM, near the H200's ridge point (chapter 5's roofline). The price: 64 accumulators and
# 16 operands per thread need over 100 registers, so fewer threads fit on an SM (PMPP §5.6 and
# §6.3 on the trade-off).
#
# Two layout choices make the loads cheap:
#
# - **A's tile stored transposed**, `sA[k, i]`: the `TM` values a thread needs for one `k` sit in
#   one row of `sA`.
# - **Strided ownership**: thread `(tx, ty)` owns rows `ty + 8·i` and columns `tx + 8·j` of the
#   block's tile. The 32 threads of a warp (tx = 0 … 7, four values of ty) then read 8
#   consecutive words of `sB` (8 banks, each word shared by 4 threads) and 4 consecutive words of
#   `sA`: no bank conflict. The picture shows the 64 elements of C that thread (tx, ty) = (2, 1)
#   owns.

# %%
owned = np.zeros((64, 64))
for i in range(8):
    for j in range(8):
        owned[1 + 8 * i, 2 + 8 * j] = 1
fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.imshow(owned, cmap="Blues", interpolation="nearest")
ax.set_xticks(range(0, 65, 8))
ax.set_yticks(range(0, 65, 8))
ax.grid(True, color="#bbb", lw=0.5)
ax.set_title("a 64 × 64 tile of C: the 8 × 8 elements\nthat thread (tx, ty) = (2, 1) computes")
plt.show()

# %% [markdown]
# ## Exercise 6.4 · A register-tiled matmul (4 points + 2 for speed)
#
# Write `matmul_register_tiled_kernel(A, B, C)` (`A` is `M × K`, `B` is `K × N`, `C` is `M × N`,
# float32) with the constants of the cell: each block computes a `BM × BN = 64 × 64` tile of C,
# each of its `THREADS = 64` threads an `8 × 8` tile of it (`TM = TN = 8`), stepping along K
# in tiles `BK = 8` deep. What the kernel must do:
#
# - **Both inputs through shared memory.** Per step along K the block loads a `BM × BK` tile of
#   A and a `BK × BN` tile of B into shared arrays, all 64 threads sharing the work, with loads
#   that coalesce (neighbouring threads, neighbouring addresses of global memory). Elements
#   outside A or B enter the tiles as 0.
# - **Each thread's 64 results in registers**: `cuda.local.array((TM, TN), float32)`, indexed
#   only by loop variables of loops with constant bounds, so the compiler can keep it in
#   registers; each `k` of a tile is one outer product of `TM` values of A and `TN` of B.
# - **No bank conflicts** in the inner loop (the layout section above shows one way), and two
#   barriers per step: none too few (a race), none more.
# - Every element of C inside the matrix written once, nothing outside it.
#
# Roughly 30 lines. The hints hold the index arithmetic, step by step, if you want it.
#
# **How the check launches it.** Blocks of `(8, 8)` threads, a grid of
# `(ceil(N / 64), ceil(M / 64))`: one block per 64 × 64 tile of C. Every launch uses these
# shapes.
#
# **What the check does.** As for chapters 3 and 5: `C` filled with NaN, values with a random
# offset and scale, every element compared with the float64 product within
# `γ_K · Σₖ |A[row, k] · B[k, col]|`. Shapes 19 × 11 times 11 × 23 (one block, every side
# partial, two tiles along K), 66 × 5 times 5 × 67 (2 × 2 blocks, the second row and column of
# blocks almost empty) and 1 × 1 × 1; hidden: 70 × 9 times 9 × 5, 3 × 17 times 17 × 1 and a
# random shape with sides below 30 (on a GPU the visible check starts with 1023 × 517 times
# 517 × 1537, and the hidden tests add three random shapes up to 1200).
# CPU mode's race detector watches `sA` and `sB` (a missing barrier fails every time).

# %% nbgrader={"grade": false, "grade_id": "matmul_register_tiled_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
from numba import float32

BM = BN = 64       # the block's tile of C
BK = 8             # the depth of the A and B tiles
TM = TN = 8        # each thread's tile of C
THREADS = 64       # (BN // TN) × (BM // TM) threads per block


@cuda.jit
def matmul_register_tiled_kernel(A, B, C):
    ### BEGIN SOLUTION
    sA = cuda.shared.array((BK, BM), float32)      # sA[k, i] = A[row0 + i, k0 + k]
    sB = cuda.shared.array((BK, BN), float32)      # sB[k, j] = B[k0 + k, col0 + j]
    acc = cuda.local.array((TM, TN), float32)
    a = cuda.local.array(TM, float32)
    b = cuda.local.array(TN, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 8 + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
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
        cuda.syncthreads()                         # both tiles are complete
        for k in range(BK):
            for i in range(TM):
                a[i] = sA[k, ty + 8 * i]
            for j in range(TN):
                b[j] = sB[k, tx + 8 * j]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]
        cuda.syncthreads()                         # everyone is done before the next tiles
    for i in range(TM):
        for j in range(TN):
            row, col = row0 + ty + 8 * i, col0 + tx + 8 * j
            if row < M and col < N:
                C[row, col] = acc[i, j]
    ### END SOLUTION


# %% [markdown]
# Try it on a small product, launched as the check launches it:

# %%
Ms, Ks, Ns = 19, 11, 23
A = rng.standard_normal((Ms, Ks)).astype(np.float32)
B = rng.standard_normal((Ks, Ns)).astype(np.float32)
mgrid = ((Ns + BN - 1) // BN, (Ms + BM - 1) // BM)
d_C = cuda.to_device(np.full((Ms, Ns), np.nan, np.float32))
matmul_register_tiled_kernel[mgrid, (BN // TN, BM // TM)](cuda.to_device(A), cuda.to_device(B), d_C)
C_gpu = d_C.copy_to_host()
print(f"grid {mgrid} of 8 × 8 blocks; unwritten: {np.isnan(C_gpu).sum()}, largest difference "
      f"from NumPy: {np.nanmax(np.abs(C_gpu - A @ B)):.2e}")

# %% nbgrader={"grade": true, "grade_id": "matmul_register_tiled_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch06.matmul_register_tiled.check(matmul_register_tiled_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch06.matmul_register_tiled.check_hidden(matmul_register_tiled_kernel)
### END HIDDEN TESTS

# %% [markdown]
# **Speed (2 points, on a GPU).** 4096 × 4096 matrices, blocks of 8 × 8 threads each computing a
# 64 × 64 tile of C, fresh inputs and a NaN-filled C for each timed call, 4096 random elements of
# C checked after every call. The bar: three quarters of the speed of the plain register-tiled
# algorithm above, timed on the same GPU in the same run, and 3× NumPy's `A @ B` on all the CPU's
# cores. The tuned kernel of the checklist at the end of the chapter is timed beside yours in
# the next cell, ungraded.

# %% nbgrader={"grade": true, "grade_id": "matmul_register_tiled_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch06.matmul_register_tiled.check_speed(matmul_register_tiled_kernel)

# %% [markdown]
# ## Measure it
#
# On a GPU the cell below times chapter 5's tiled kernel (the course's 8 × 8 version), yours,
# a tuned register-tiled kernel (the tricks of the checklist below) and cuBLAS (through CuPy,
# when it is installed) on
# 4096 × 4096 matrices, and sets their GFLOP/s against the GPU's FP32 peak (no tensor cores),
# then draws the times as bars with cuBLAS as a dashed line. In CPU mode it draws that chart from
# the course's H200 run.

# %%
side = 4096
why = ag.timing.not_measured()
if why:
    print(why, f"On a GPU, this cell times chapter 5's tiled matmul, yours, a tuned "
          f"register-tiled kernel and cuBLAS on {side} × {side} matrices and prints their GFLOP/s. "
          "Below, what the course measured with the solution's kernel:")
    ag.experiments.steps("ch06_matmul").show()
else:
    from autograder import timing
    from autograder.bench import peak_fp32_flops
    dA = cuda.device_array((side, side), np.float32)
    dB = cuda.device_array((side, side), np.float32)
    timing.fill_uniform(dA, seed=1)
    timing.fill_uniform(dB, seed=2)
    dC = cuda.device_array((side, side), np.float32)
    flops = 2 * side ** 3
    g8 = ((side + 7) // 8, (side + 7) // 8)
    g64 = ((side + 63) // 64, (side + 63) // 64)
    ch05_tiled = ag.problems.ch05.tiled_matmul.reference_kernel()
    tuned = ch06.tuned_register_tiled()
    runs = {
        "chapter 5 tiled (8 × 8)": lambda i: ch05_tiled[g8, (8, 8)](dA, dB, dC),
        "register-tiled (yours)": lambda i: matmul_register_tiled_kernel[g64, (8, 8)](dA, dB, dC),
        "register-tiled, tuned (checklist)": lambda i: tuned[g64, (8, 8)](dA, dB, dC),
    }
    stats = {label: timing.time_gpu(label, run, repeats=10, flops=flops) for label, run in runs.items()}
    try:
        import cupy as cp
        cA, cB, cC = cp.asarray(dA), cp.asarray(dB), cp.asarray(dC)
        stats["cuBLAS SGEMM (CuPy)"] = timing.time_gpu("cublas", lambda i: cp.matmul(cA, cB, out=cC),
                                                     repeats=10, flops=flops)
    except ImportError:
        print("(CuPy is not installed: no cuBLAS row)")
    peak = peak_fp32_flops()
    print(f"{'kernel':36s} {'time':>9s} {'GFLOP/s':>9s} {'of FP32 peak':>13s}")
    for label, s in stats.items():
        print(f"{label:36s} {s.median_ms:7.2f}ms {s.gflops:9.0f} {s.gflops * 1e9 / peak:13.0%}")
    print(f"FP32 peak of this GPU (no tensor cores): {peak / 1e12:.1f} TFLOP/s")
    ag.experiments.steps("ch06_matmul", stats,
                         reference="cuBLAS SGEMM (CuPy)" if "cuBLAS SGEMM (CuPy)" in stats else None,
                         title=f"Matmul of {side} × {side} float32").show()

# %% [markdown]
# ## Look inside: occupancy and the tile stores
#
# The register tile buys reuse with registers. How many did the compiler use, and how many warps
# could each SM then hold? The profiler reports, per kernel:
#
# - **registers** per thread and **static shared memory** per block, as compiled;
# - **theoretical occupancy**: the most warps an SM can hold with those registers, that shared
#   memory and this block size, as a share of the SM's maximum (64 warps on an H200); and
#   **achieved occupancy**, the warps actually resident on average while the SM was busy;
# - the **passes** per shared load and per shared store, and the bank conflicts, as above.
#
# On a GPU with `ncu` the cell profiles your kernel and the tuned one on 4096 × 4096 matrices;
# elsewhere, and while the notebook is graded, it shows the course's H200 report for the plain
# register-tiled kernel of the solution and the tuned kernel.

# %%
why = ag.profiler.why_not()
if why is None:
    side = 4096
    dA = cuda.device_array((side, side), np.float32)
    dB = cuda.device_array((side, side), np.float32)
    ag.timing.fill_uniform(dA, seed=1)
    ag.timing.fill_uniform(dB, seed=2)
    dC = cuda.device_array((side, side), np.float32)
    g64 = ((side + 63) // 64, (side + 63) // 64)
    groups = ("occupancy", "bank_conflicts")
    try:
        report = ag.profiler.live([
            ag.profile(matmul_register_tiled_kernel, g64, (8, 8), dA, dB, dC,
                       label="register-tiled (yours)", metrics=groups),
            ag.profile(ch06.tuned_register_tiled(), g64, (8, 8), dA, dB, dC,
                       label="register-tiled, tuned", metrics=groups),
        ])
        report.show(groups)
    except ag.profiler.ProfilerFailed as failed:
        why = str(failed)
if why:
    print(why + "\n")
    ag.profiler.recorded("ch06", "matmul_register_tiled").show(("occupancy", "bank_conflicts"))

# %% [markdown]
# **What the H200 report shows.**
#
# - **Occupancy.** The plain kernel uses 152 registers per thread. With 64-thread blocks that
#   leaves room for 12 of the SM's 64 warps: a theoretical occupancy of 18.75%, and 17.4%
#   achieved. Few warps is the price of register tiling, and it is affordable: each thread has 64
#   independent multiply-adds per step to keep the SM busy. The tuned kernel needs 128 registers
#   (25% theoretical, 23.5% achieved).
# - **The inner loop is free of conflicts**: the plain kernel's shared loads take 1.00 pass
#   each, as the strided ownership promised. (The tuned kernel's take 3 passes with no conflict:
#   its loads are 128 bits wide, and a warp's 512 bytes need several passes whatever the banks.)
# - **The tile stores are not.** The plain kernel's shared stores take 4.52 passes on average,
#   236 million conflicts. The culprit is the transposed store `sA[k, i] = A[row0 + i, k0 + k]`:
#   the 32 threads of a warp hold `i = e // 8` (4 values) and `k = e % 8` (8 values), and the word
#   `sA[k, i]` lies in bank `(64 k + i) mod 32 = i`, so 32 words fall in 4 banks: 8 passes. The
#   stores into `sB` take 1, hence 4.5 on average. The tuned kernel pads A's tile: 1.51 passes and
#   34.5 million conflicts. Under the profiler the plain kernel took 24.0 ms, the tuned one 6.2 ms.
#
# Timed as the speed test times them, on the H200 the plain register-tiled kernel took 20.4 ms:
# slower than chapter 5's one-element-per-thread kernel compiled with 16 × 16 tiles (17.8 ms).
# Register tiling pays once its tile stores and loads are cheap, as in the tuned kernel (4.8 ms,
# 56% of cuBLAS's 2.69 ms). Larger tiles go further: 128 × 128 tiles of C per block of 256
# threads, each warp a 32 × 64 piece, and the next K slice loaded into registers while the current
# one is computed on (double buffering) took 3.68 ms, 73% of cuBLAS (`docs/benchmarks.md`).
#
# A bank conflict that no timing would have pointed to, found by reading two counters: that is
# what a profiler is for. Try padding `sA` in your kernel and profile again: with rows of
# `BM + 4` words (a module constant, `BM_PAD = 68`: shapes must be constants), the word
# `sA[k, i]` lies in bank `(4 k + i) mod 32`, a different one for each of the 32 threads, and the
# loads of the inner loop still read 4 neighbouring words.

# %% [markdown]
# ## A checklist of optimizations
#
# PMPP §6.4 collects the chapter's techniques in one table. Here it is in this course's words,
# with where each one appears:
#
# | technique | what it buys | how | where in this course |
# |---|---|---|---|
# | **enough threads, enough occupancy** | latency hidden by other warps | many blocks; registers and shared memory per thread small enough that several blocks fit on an SM | ch. 4 (occupancy), this chapter (bytes in flight) |
# | **coalesced global accesses** | every sector moved is used | neighbouring threads, neighbouring addresses; turn the corner in shared memory when the data are laid out the wrong way | the transposes |
# | **no shared-memory bank conflicts** | one pass per warp access | pad the tile (or swizzle the index) so a warp's words fall in different banks | the padded tile |
# | **less control divergence** | all 32 lanes of a warp busy | make branches depend on the warp, not on the lane; arrange data so that it does | ch. 4 |
# | **tiling for data reuse** | fewer trips to global memory | stage what a block shares in shared memory, with barriers | ch. 5, the matmuls here |
# | **privatization** | fewer conflicting updates | each block (or thread) updates its own copy; merge at the end | ch. 9 (histogram) |
# | **thread coarsening** | less redundant work per element, more independent work per thread | give each thread several outputs; keep its partial results in registers | the 4-element transpose, the 8 × 8 register tile |
#
# Two points that are Numba's own, visible in the course's reference kernels
# (`autograder/problems/ch06/references.py`):
#
# - **Shapes of shared and local arrays must be compile-time constants**: module-level names
#   such as `TILE_PAD`, not expressions such as `TILE + 1` (the simulator accepts both; the GPU
#   compiler only the first).
# - **Indexing with a signed integer** makes Numba add code for negative indices (Python's
#   `x[-1]` means the last element) to every access, and that code can keep the compiler from
#   overlapping loads. In the exercise's tiled transpose (SASS for sm_90) each thread waits for
#   each of its 4 loads to come back before it issues the next: one load in flight, where
#   coarsening meant four. With the indices converted to unsigned (`inp[uint64(row + j),
#   uint64(col)]`, `from numba import uint64`) the negative-index code disappears and the 4 loads
#   go out back to back: that is the course reference. In the register-tiled matmul the same
#   change, with each thread's operands laid out as two runs of four consecutive floats (which the
#   compiler reads as 128-bit words), a 16-deep K tile and A's tile padded, brings the inner loop
#   from 16 shared loads and about 104 instructions per 64 multiply-adds to 4 loads and about 89,
#   and issues the 16 tile loads of a step together: that is the tuned kernel of the chart above
#   (`tuned_register_tiled` in the same file), about 4× faster than the plain algorithm on the
#   H200. Try it on your kernels and measure: it is a
#   Numba detail, not a GPU one, and Nsight Compute's source view shows where the warps wait.
#
# ## Going further
# - PMPP ch. 6: §6.1 (memory coalescing, corner turning), §6.2 (hiding memory latency), §6.3
#   (thread coarsening), §6.4 (a checklist of optimizations), §6.5 (knowing your computation's
#   bottleneck).
# - GPU MODE lecture 8 (CUDA performance checklist), and lecture 1, *How to profile CUDA kernels
#   in PyTorch* (Mark Saroufim): PyTorch's profiler for the timeline of a program, Nsight Compute
#   for the counters of one kernel, as in this chapter's profiler cells.
# - Mark Harris, *An efficient matrix transpose in CUDA C/C++* (NVIDIA developer blog, 2013): the
#   same three steps measured on an older GPU. Simon Boehm, *How to optimize a CUDA matmul kernel
#   for cuBLAS-like performance* (2022): register tiling and what comes after it (vectorized
#   loads, warp tiling, double buffering).
# - **On AMD (HIP):** on the Instinct (CDNA) GPUs a wavefront is 64 threads, so a coalesced
#   access covers 256 bytes of float32 and the sector arithmetic of Exercise 6.2 changes with it.
#   Shared memory is the **LDS**; it is banked too (32 banks of 4 bytes on recent Instinct GPUs),
#   so padding a tile's rows is the same fix, though how a 64-wide access is split into passes
#   differs between chips: check your GPU's ISA guide. `bank_conflicts` here assumes 32-thread warps.
