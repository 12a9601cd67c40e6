# %% [markdown]
# # Chapter 13 · Sorting: radix sort passes, stability, merge sort
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 13.
#
# **Before you start:** chapters 1–6, 11 (the scan) and 12 (merge, co-rank). **Time:** about 5 hours,
# reading and exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Write **one pass of a radix sort** as PMPP §13.4 builds it: each block sorts its tile of keys
#   by one 4-bit digit and counts its digits; an exclusive scan of all the blocks' counts says
#   where each block's keys of each digit go; a scatter puts them there, in order.
# - Put eight passes together into a **radix sort of key-value pairs** (32-bit unsigned keys,
#   32-bit values) and prove it **stable**: every value is the position its key came from, so a
#   sort that swaps equal keys fails even though its keys look sorted.
# - Predict the time of a radix sort from the bytes its passes move, find the number of bits per
#   pass (the **radix**) that makes it lowest, and measure your sort (on a GPU) against CuPy's sort
#   (NVIDIA's CUB radix sort) and, where installed, `cuda.compute`'s radix sort.
# - Run a **merge sort** built on chapter 12's co-rank merge and say when it is the better choice.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, uint32, int32

ag.banner()
ch13 = ag.problems.ch13

# %% [markdown]
# ## The idea: sort by one digit at a time, lowest first
#
# A **radix sort** never compares two keys. Cut every 32-bit key into **digits** of `r` bits:
# with `r = 4`, digit 0 is bits 0–3, digit 1 bits 4–7, …, digit 7 bits 28–31, and a digit has
# `2^r = 16` possible values. The least-significant-digit (LSD) radix sort makes one **pass** per
# digit, lowest first: each pass reorders all the keys by that digit alone, and it must be
# **stable**, keeping keys of equal digit in the order the previous pass left them (PMPP §13.2).
# After the pass on digit 0 the keys are sorted by their lowest 4 bits; after the pass on digit 1,
# by their lowest 8 (keys with the same digit 1 are still in digit-0 order, because the pass was
# stable); after 8 passes, by all 32. One unstable pass anywhere and the order the earlier passes
# built is lost.
#
# **Stable, and why it matters beyond the passes.** Real sorts move a **payload** with each key:
# a record's index, a particle's id. A stable sort keeps records with equal keys in their input
# order, so sorting by a second key and then stably by a first gives a sort by both. In this
# chapter every key carries a value, and in the checks **the value is the key's input position**
# (a shuffled set of positions in the hidden tests): two equal keys that swap are caught by their
# values, even though the keys alone look perfectly sorted.
#
# **One pass in parallel** (PMPP §13.3–13.4). Cut the `n` keys into tiles of `T`, one block of `T`
# threads per tile, one key per thread (the last tile is partial when `T` does not divide `n`).
# A pass on the digit at bit `shift`, `d = (key >> shift) & 15`, has three steps:
#
# 1. **local sort and count**: each block sorts its tile by `d`, stably, and counts how many of
#    its keys have each digit: 16 counts per block. The counts go into one table,
#    **digit-major**: `counts[d · blocks + b]` for digit `d` of block `b`;
# 2. **scan**: the **exclusive** scan of that table (chapter 11). Read it in order: first every
#    block's count of digit 0, then every block's count of digit 1, and so on; that is exactly the
#    order of the keys in the pass's output (all the 0s, block by block, then all the 1s, …). So
#    `offsets[d · blocks + b]`, the sum of everything before that entry, is where block `b`'s
#    keys of digit `d` start in the output;
# 3. **scatter**: each thread writes its key (and value) to `offsets[d · blocks + b]` plus its
#    rank among its tile's keys of digit `d`.
#
# Why sort locally first, when the scatter could find every key's rank on its own? Because after
# the local sort, a block's keys of one digit sit next to each other and go to consecutive places
# of the output: the scatter's writes come in runs, which coalesce (chapter 6), instead of 32
# scattered places per warp. The picture shows one pass over 20 keys in tiles of 8 (the digit in
# hex, and under it each key's input position):

# %%
keys_small = ch13.radix_keys(np.random.default_rng(11), 20, "random")
tk_small, counts_small, offsets_small, out_small = ch13.plot_pass(keys_small, shift=0, threads=8)
plt.show()
blocks_small = -(-keys_small.size // 8)
print("counts  (digit-major, 3 blocks per digit):")
print("   ", " ".join(f"{d:x}:{counts_small[d * blocks_small:(d + 1) * blocks_small].tolist()}"
                      for d in range(16) if counts_small[d * blocks_small:(d + 1) * blocks_small].any()))
print("offsets (exclusive scan of the table):")
print("   ", " ".join(f"{d:x}:{offsets_small[d * blocks_small:(d + 1) * blocks_small].tolist()}"
                      for d in range(16) if counts_small[d * blocks_small:(d + 1) * blocks_small].any()))

# %% [markdown]
# Follow one digit through: its keys in block 0 start at its first offset, those of block 1 right
# after them, and so on. The pass's output is sorted by the digit, and within a digit the input
# order is kept: the positions under the cells of one colour rise from left to right.
#
# ## The CPU baseline
#
# Two ways on one core: an LSD radix sort compiled with `numba.njit` (8-bit digits, 4 passes: count
# the digits, scan the 256 counts, move every pair to its place), and NumPy's stable `argsort`
# followed by two `take`s. Throughout, a sort of pairs is given 16 bytes per pair (the key and the
# value read once and written once): the least any sort can move, not what a radix sort moves.

# %%
cpu_n = (1 << 24) if ag.backend.is_gpu else (1 << 20)   # smaller without a GPU: slow machines
why = ag.timing.not_measured("Timing the CPU sorts", gpu=False)
if why:
    print(why)
cpu_rows = [] if why else ch13.time_cpu_sorts(cpu_n)
for row in cpu_rows:
    print(f"{row['label']:52s} {row['ms']:9.2f} ms  {row['gbps']:6.2f} GB/s"
          f"{'' if row['right'] else '   WRONG'}")

# %% [markdown]
# ## Exercise 13.1 · The local sort of a tile, and its digit counts (3 points)
#
# Write `radix_local_sort_kernel(keys, values, shift, tile_keys, tile_values, counts)`: `keys` and
# `values` are uint32 device arrays of `n` elements, `shift` the digit's lowest bit (0, 4, …, 28).
# Block `b` (of `blocks = cuda.gridDim.x`) owns the tile `keys[b · T : b · T + T]` with
# `T = cuda.blockDim.x`, one key per thread; the last tile holds only what is left. It must:
#
# - write its tile, **stably sorted by the digit** `(key >> shift) & 15`, to the same positions
#   of `tile_keys`, each value moving with its key into `tile_values`;
# - write, for each of the 16 digits `d`, the number of its keys with that digit to
#   `counts[d · blocks + b]` (zeros included).
#
# How does a thread find where its key goes in the sorted tile? Its **rank** is the number of keys
# in the tile that must come before it: those with a smaller digit, and those with the same digit
# that come before it in the tile (that second part is what makes it stable). Put the tile's digits
# in shared memory (`cuda.shared.array(MAX_THREADS, int32)`; blocks have at most `MAX_THREADS`
# threads), wait for all of them, then each thread counts and writes its key and value at its
# rank. The 16 counts can be made the same way (thread `t` counts digit `t`, and `t + T`, … when
# a block has fewer than 16 threads). Roughly 20 lines. (PMPP §13.4 sorts the tile with one stable 1-bit split per bit instead, each split a scan
# of the bit over the tile: fewer steps per thread for large tiles, but a dozen barriers per bit.
# Either is right; the hints have both.)
#
# **How the check launches it.** Blocks of 32 threads (32 or 64 in the hidden tests),
# `ceil(n / T)` blocks. `counts` has room for the table of 32-thread blocks; write only your
# table's `16 · blocks` entries.
#
# **What the check does.** Every output filled with the largest uint32 (or int32's most negative
# value) before the launch; all must be exact. Visible: 91 keys with a handful of distinct values
# (every digit ties), 45 and 40 random keys at the top digit and the bottom one, 64 keys sorted
# the other way (whole tiles) and 37 equal keys, the values being the positions. Hidden: 5 keys, 396 keys, two random
# sizes, the values shuffled. In CPU mode the race detector watches shared memory: a missing
# barrier fails every time. The verdict says which element is wrong and what that usually means
# (a digit from the wrong bits, a block-major table, an unstable order, a partial last tile).

# %% nbgrader={"grade": false, "grade_id": "radix_local_sort_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
MAX_THREADS = ch13.MAX_THREADS     # 256: the largest block the checks and timings launch
DIGITS = 16                        # 4 bits a pass


@cuda.jit
def radix_local_sort_kernel(keys, values, shift, tile_keys, tile_values, counts):
    ### BEGIN SOLUTION
    s_digit = cuda.shared.array(MAX_THREADS, int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    b, blocks = cuda.blockIdx.x, cuda.gridDim.x
    start = b * T
    valid = min(T, keys.size - start)        # the last tile may be partial
    d = -1
    if t < valid:
        d = (keys[start + t] >> shift) & (DIGITS - 1)
        s_digit[t] = d
    cuda.syncthreads()
    if t < valid:
        rank = 0                              # keys that come before mine in the sorted tile
        for j in range(valid):
            dj = s_digit[j]
            if dj < d or (dj == d and j < t):
                rank += 1
        tile_keys[start + rank] = keys[start + t]
        tile_values[start + rank] = values[start + t]
    for digit in range(t, DIGITS, T):         # thread t counts digit t (and t + T, ...)
        c = 0
        for j in range(valid):
            if s_digit[j] == digit:
                c += 1
        counts[digit * blocks + b] = c
    ### END SOLUTION


# %% [markdown]
# Try it on the pictured keys, in tiles of 8 (compare with the picture's second row):

# %%
def run_local_sort(kernel, keys, shift, threads, values=None):
    """Launch a local-sort kernel on host keys; return (tile_keys, tile_values, counts)."""
    n = keys.size
    values = np.arange(n, dtype=np.uint32) if values is None else values
    blocks = -(-n // threads)
    d_tk = cuda.device_array(n, np.uint32)
    d_tv = cuda.device_array(n, np.uint32)
    d_counts = cuda.device_array(DIGITS * blocks, np.int32)
    kernel[blocks, threads](cuda.to_device(keys), cuda.to_device(values), shift, d_tk, d_tv,
                            d_counts)
    return d_tk.copy_to_host(), d_tv.copy_to_host(), d_counts.copy_to_host()


got_tk, got_tv, got_counts = run_local_sort(radix_local_sort_kernel, keys_small, 0, 8)
print("tiles sorted right:", np.array_equal(got_tk, tk_small))
print("values (input positions):", got_tv.tolist())
print("counts right:", np.array_equal(got_counts, counts_small))

# %% nbgrader={"grade": true, "grade_id": "radix_local_sort_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch13.radix_local_sort.check(radix_local_sort_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch13.radix_local_sort.check_hidden(radix_local_sort_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 13.2 · The scatter (3 points)
#
# Write `radix_scatter_kernel(tile_keys, tile_values, shift, counts, offsets, out_keys,
# out_values)`: `tile_keys` and `tile_values` are what 13.1 wrote (each tile sorted by the digit),
# `counts` its table, `offsets` the **exclusive** scan of `counts` (int32 device arrays of
# `16 · blocks`). Launched as 13.1 is, thread `t` of block `b` takes the element at `i = b · T + t`
# (if `i < n`), finds its digit `d`, and writes key and value to
#
# - `offsets[d · blocks + b]`, where the tile's keys of digit `d` start in the output, plus
# - its **rank among the tile's keys of digit `d`**: how far `t` is past the first key of digit
#   `d` in the tile. Where does digit `d` start in a tile sorted by digit? After all the tile's
#   keys of smaller digits: a sum of this block's counts (which ones, exactly? an off-by-one here
#   is the classic bug).
#
# Compute those 16 starting points once per block (in shared memory, before a barrier), not once
# per thread. Roughly 15 lines.
#
# **What the check does.** It makes the inputs from random keys as a correct 13.1 and scan would,
# for the launch's block size, then launches your kernel with the outputs poisoned; `out_keys` and
# `out_values` must be the stable sort of the keys by the digit, exactly. Same sizes, digits and
# kinds of keys as 13.1.

# %% nbgrader={"grade": false, "grade_id": "radix_scatter_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def radix_scatter_kernel(tile_keys, tile_values, shift, counts, offsets, out_keys, out_values):
    ### BEGIN SOLUTION
    s_first = cuda.shared.array(DIGITS, int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    b, blocks = cuda.blockIdx.x, cuda.gridDim.x
    for digit in range(t, DIGITS, T):     # where each digit starts in this tile: the counts
        first = 0                         # of the smaller digits
        for d in range(digit):
            first += counts[d * blocks + b]
        s_first[digit] = first
    cuda.syncthreads()
    i = b * T + t
    if i < tile_keys.size:
        key = tile_keys[i]
        d = (key >> shift) & (DIGITS - 1)
        dest = offsets[d * blocks + b] + t - s_first[d]
        out_keys[dest] = key
        out_values[dest] = tile_values[i]
    ### END SOLUTION


# %% [markdown]
# One whole pass on the pictured keys: your local sort, the course's scan of the table
# (`ch13.exclusive_scan(counts, offsets)`: chapter 11's hierarchical scan, in int32), your scatter:

# %%
def one_pass(local_sort, scatter, keys, shift, threads):
    n = keys.size
    blocks = -(-n // threads)
    d_keys, d_values = cuda.to_device(keys), cuda.to_device(np.arange(n, dtype=np.uint32))
    d_tk, d_tv = cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32)
    d_counts = cuda.device_array(DIGITS * blocks, np.int32)
    d_offsets = cuda.device_array(DIGITS * blocks, np.int32)
    d_ok, d_ov = cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32)
    local_sort[blocks, threads](d_keys, d_values, shift, d_tk, d_tv, d_counts)
    ch13.exclusive_scan(d_counts, d_offsets)
    scatter[blocks, threads](d_tk, d_tv, shift, d_counts, d_offsets, d_ok, d_ov)
    return d_ok.copy_to_host(), d_ov.copy_to_host()


pass_keys, pass_values = one_pass(radix_local_sort_kernel, radix_scatter_kernel, keys_small, 0, 8)
print("output of the pass right:", np.array_equal(pass_keys, out_small))
print("digits:   ", " ".join(f"{d:x}" for d in ch13.digits(pass_keys, 0)))
print("positions:", pass_values.tolist())

# %% nbgrader={"grade": true, "grade_id": "radix_scatter_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch13.radix_scatter.check(radix_scatter_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch13.radix_scatter.check_hidden(radix_scatter_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: a scatter that is not stable
#
# The scatter below ranks each key from the **end** of its digit's run in the tile instead of
# from its start: every key still lands inside its digit's range of the output, so every pass
# still sorts the keys by its own digit. **Predict before you run:** after all eight passes, are
# the keys sorted? Are the values right?

# %%
@cuda.jit
def scatter_reversed_runs(tile_keys, tile_values, shift, counts, offsets, out_keys, out_values):
    s_first = cuda.shared.array(DIGITS, int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    b, blocks = cuda.blockIdx.x, cuda.gridDim.x
    for digit in range(t, DIGITS, T):
        first = 0
        for d in range(digit):
            first += counts[d * blocks + b]
        s_first[digit] = first
    cuda.syncthreads()
    i = b * T + t
    if i < tile_keys.size:
        key = tile_keys[i]
        d = (key >> shift) & (DIGITS - 1)
        last = s_first[d] + counts[d * blocks + b] - 1        # the run's last slot
        dest = offsets[d * blocks + b] + last - t             # ranked from the end: reversed
        out_keys[dest] = key
        out_values[dest] = tile_values[i]


def sort_with(local_sort, scatter, keys, threads=32):
    n = keys.size
    d_ok, d_ov = cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32)
    ch13.radix_sort_with(local_sort, scatter, cuda.to_device(keys),
                         cuda.to_device(np.arange(n, dtype=np.uint32)), d_ok, d_ov, threads)
    return d_ok.copy_to_host(), d_ov.copy_to_host()


dup_keys = ch13.radix_keys(np.random.default_rng(2), 40, "duplicates")
bad_keys, bad_values = sort_with(radix_local_sort_kernel, scatter_reversed_runs, dup_keys)
order = ch13.stable_order(dup_keys)
print("keys sorted:  ", np.array_equal(bad_keys, dup_keys[order]))
print("values right: ", np.array_equal(bad_values, order))
print("values:  ", bad_values.tolist())
print("expected:", order.tolist())

# %% [markdown]
# The keys are not sorted. Each pass did sort by its digit, but the last pass on digit 7 only
# orders keys whose digit 7 differs; keys that share it stay in the order the seven passes before
# left them, and those passes reversed runs instead of keeping them. Stability is not a nicety of
# LSD radix sort: it is why the sort is right at all. One place a swap stays hidden in the keys is
# the keys that are **equal**: no pass tells them apart, so only their values show their order (an
# unstable last pass, for instance, leaves every key in place and swaps equal keys' values). A
# test with distinct keys, or one that compares keys only, cannot see that. That is why every case
# of this chapter has many equal keys, and why the values exist.
#
# Break your own kernels on purpose, one change at a time, and read what the checks say: remove the
# barrier in 13.1 (a thread reads a digit another thread has not stored yet: the race detector
# names both), let the last tile's threads past the end take part, or compute a digit's start in
# 13.2 with the counts of digits up to and **including** `d` (an inclusive sum where an exclusive
# one is needed).
#
# ## Exercise 13.3 · A radix sort of key-value pairs (3 points + 2 for speed)
#
# Write the host function `radix_sort(keys, values, out_keys, out_values, threads)`: all four are
# uint32 device arrays of `n` elements; sort the pairs by key, stably, into `out_keys` and
# `out_values`, with blocks of `threads` threads and your two kernels, one pass per digit:
# `shift = 0, 4, …, 28`. Per pass: your local sort, `ch13.exclusive_scan(counts, offsets)` for the
# table, your scatter. You need scratch arrays for the tiles and the table (allocate them with
# `cuda.device_array`); think about which array each pass reads and which it writes, so that the
# last pass writes `out_keys` and `out_values` (no copy at the end is needed: can the outputs
# serve as every pass's destination?). Do not copy the arrays to the host. Roughly 15 lines.
#
# **What the check does.** As in 13.1 (exact, values the input positions, shuffled in the hidden
# tests); visible: 70 random keys, 91 keys with a handful of distinct values, 33 already sorted;
# hidden: 12 equal keys, 364 keys sorted the other way, one random size; blocks of 32 threads
# (32 or 64 hidden). Each case runs all eight passes, so a check takes a few seconds in CPU mode.
# **The speed test** (on a GPU) sorts 2²⁸ pairs with `threads = 256` against the course's radix
# sort (the same algorithm: `ch13.reference_radix_sort()`) timed in the same run, and the compiled
# radix sort on one core of the host: you need at least 60% of the course's speed and 20× the CPU
# sort. In CPU mode it says it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "radix_sort_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def radix_sort(keys, values, out_keys, out_values, threads):
    ### BEGIN SOLUTION
    n = keys.size
    blocks = (n + threads - 1) // threads
    tk = cuda.device_array(n, np.uint32)              # the tiles, sorted by digit
    tv = cuda.device_array(n, np.uint32)
    counts = cuda.device_array(DIGITS * blocks, np.int32)
    offsets = cuda.device_array(DIGITS * blocks, np.int32)
    src_keys, src_values = keys, values
    for shift in range(0, 32, 4):
        radix_local_sort_kernel[blocks, threads](src_keys, src_values, shift, tk, tv, counts)
        ch13.exclusive_scan(counts, offsets)
        radix_scatter_kernel[blocks, threads](tk, tv, shift, counts, offsets, out_keys, out_values)
        src_keys, src_values = out_keys, out_values   # the next pass reads what this one wrote
    ### END SOLUTION


# %% [markdown]
# Try it on keys with many copies:

# %%
n_try = 50
try_keys = ch13.radix_keys(np.random.default_rng(5), n_try, "duplicates")
d_ok, d_ov = cuda.device_array(n_try, np.uint32), cuda.device_array(n_try, np.uint32)
radix_sort(cuda.to_device(try_keys), cuda.to_device(np.arange(n_try, dtype=np.uint32)), d_ok,
           d_ov, 32)
order = ch13.stable_order(try_keys)
print("sorted:", np.array_equal(d_ok.copy_to_host(), try_keys[order]),
      " stable:", np.array_equal(d_ov.copy_to_host(), order))

# %% nbgrader={"grade": true, "grade_id": "radix_sort_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch13.radix_sort.check(radix_sort)
### BEGIN HIDDEN TESTS
ag.problems.ch13.radix_sort.check_hidden(radix_sort)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "radix_sort_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch13.radix_sort.check_speed(radix_sort)

# %% [markdown]
# ## Predict: how many bits per pass?
#
# Nothing forces 4 bits. With `r` bits a pass, a 32-bit key needs as many passes as it takes
# `r`-bit digits to cover 32 bits (the last digit may be shorter), and every pass has `2^r`
# possible digits, so every tile has `2^r` counters. More bits: fewer passes over the data, but a
# count table that grows as `2^r` times the number of tiles, and more shared memory per block for
# the counters (a block needs room for all of them while it counts).
#
# A model of the bytes a pass moves through memory, for `n` pairs of a 4-byte key and a 4-byte
# value, with tiles of `tile` keys:
#
# - the local sort reads every key and every value, and writes them into the scratch arrays; it
#   writes its table of counts (4 bytes each, `2^r` per tile);
# - the scan reads the table and writes the offsets, a table as large;
# - the scatter reads both tables, then reads every key and value of the scratch arrays and writes
#   them to their places.
#
# Leave out everything else (caches, the partial last digit's smaller table, the scan's own small
# second level): a pass costs what it moves over `bandwidth` bytes per second, and the sort is its
# passes one after the other. Use 4.8 × 10¹² B/s, the H200's advertised bandwidth, as the
# chapter's figure (`ch13.BANDWIDTH`).
#
# ## Exercise 13.4 · A radix sort's memory floor (2 points)
#
# Write `radix_time_bound(n, bits, tile, bandwidth)`: `n`, `bits` (1 to 16) and `tile` are
# Python ints, `bandwidth` a float; return the model's time in **seconds**, derived from the list
# above (count the bytes of one pass, then the passes; a partial last tile still has a whole table
# of counters). Roughly 5 lines.
#
# **Predict first, by hand** (then let your function check you): for `n = 2²⁸` pairs and tiles of
# 256 keys, is 4 bits a pass or 8 better, and by how much? What happens at 11 bits, and at 16? With
# tiles of 2048 keys, how does the best choice move? The course's kernels use 4 bits and tiles of
# `blockDim.x` keys: a simple choice (16 counters, one key per thread), not the fastest one.
#
# **What the check does.** It calls your function on 8 sets of values (the first five are 2²⁸
# pairs at 4.8 TB/s: tiles of 256 at 4, 6, 8 and 11 bits, then tiles of 2048 at 8 bits; then one
# key, 3 bits a pass (11 passes), and 16 bits) and the hidden tests on 200 random ones (up to
# 3 × 10⁹ pairs, 1 to 16 bits, tiles of 1 to 8192 keys, 30 GB/s to 10 TB/s). Results are compared
# with the model computed in float64, allowing a few roundings.

# %% nbgrader={"grade": false, "grade_id": "radix_time_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def radix_time_bound(n, bits, tile, bandwidth):
    """Seconds a radix sort of n (key, value) pairs moves bytes for, at `bits` bits a pass."""
    ### BEGIN SOLUTION
    passes = -(-32 // bits)
    tiles = -(-n // tile)
    table = 4 * (2 ** bits) * tiles                 # bytes of one count table
    per_pass = 16 * n + 16 * n + 5 * table          # local sort, scatter; the table 5 times
    return passes * per_pass / bandwidth
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "radix_time_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch13.radix_time_bound.check(radix_time_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch13.radix_time_bound.check_hidden(radix_time_bound)
### END HIDDEN TESTS

# %% [markdown]
# Your model for 2²⁸ pairs, every radix from 1 to 16 bits, at two tile sizes:

# %%
big = ch13.SPEED_SIZE
radixes = list(range(1, 17))
fig, ax = plt.subplots(figsize=(7, 3.2))
for tile in (256, 2048):
    times = [radix_time_bound(big, r, tile, ch13.BANDWIDTH) * 1e3 for r in radixes]
    best = radixes[int(np.argmin(times))]
    ax.plot(radixes, times, "o-", label=f"tiles of {tile}: best at {best} bits")
    print(f"tiles of {tile:4d}: 4 bits {times[3]:6.2f} ms, 8 bits {times[7]:6.2f} ms, "
          f"best {best} bits {min(times):6.2f} ms")
ax.set_yscale("log")
ax.set_xlabel("bits per pass")
ax.set_ylabel("model time (ms), 2^28 pairs")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()
predicted_ms = radix_time_bound(big, 4, 256, ch13.BANDWIDTH) * 1e3

# %% [markdown]
# ## Measure it (on a GPU)
#
# On a GPU the next cell sorts 2²⁸ pairs (every key twice, at two scattered positions) with your
# sort and the course's, both at 256 threads a block; CuPy's `cupy.sort` of the keys alone (CUB's
# radix sort, keys only: it moves half the bytes); and, where the `cuda-cccl` package is installed,
# `cuda.compute`'s radix sort of the pairs. Each result is checked at 4096 positions. It prints the
# time, the bandwidth for 16 bytes per pair, and the model's floor for your sort (4 bits, tiles of
# 256), then draws the times. In CPU mode it says it needs a GPU and draws what the course's
# kernels took on an H200 instead.

# %%
sorts = {"radix sort (yours)": radix_sort, "radix sort (course)": ch13.reference_radix_sort()}
try:
    rows = ch13.measure(sorts)
    ceiling = ag.timing.copy_ceiling(16 * big)
    print(f"{big:,} pairs; a copy of the same {16 * big / 1e9:.1f} GB: {ceiling.median_ms:.3f} ms"
          f"; your model's floor: {predicted_ms:.3f} ms\n")
    print(f"{'sort':40s} {'time':>10s} {'GB/s':>7s} right")
    for r in rows:
        print(f"{r['label']:40s} {r['ms']:8.3f}ms {r['gbps']:7.0f} {r['right']}")
    for r in cpu_rows:
        print(f"CPU: {r['label'][:40]:40s} {r['gbps']:12.2f} GB/s (measured above, {cpu_n:,} pairs)")
    ag.experiments.steps(**ch13.chart(rows)).show()
except ag.timing.NeedsGPU as why:
    print(why)
    print(f"\nYour model's floor for the course's sort of 2^28 pairs: {predicted_ms:.3f} ms")
    print("What the course measured on an H200 with its own kernels (bars), CUB's sort (lines):")
    ag.experiments.steps(**ch13.chart()).show()

# %% [markdown]
# ## Merge sort: chapter 12's merge, runs doubling in length
#
# A radix sort needs keys made of digits. A **merge sort** needs only a comparison, so it sorts
# floats, strings, tuples, anything with a `<=` (PMPP §13.7). Bottom up: every key alone is a
# sorted run of length 1; a pass merges neighbouring runs in pairs, runs of 1 into runs of 2, then
# 4, 8, …, so `ceil(log2 n)` passes sort `n` keys. Every pass is a merge of all `n` keys, and
# chapter 12 made that parallel: each thread takes a fixed number of outputs, finds which pair of
# runs they belong to, and finds its split points with **co-rank** on that pair. The merge is
# stable (an `A` key before an equal `B` key), so the merge sort is too.
#
# The course's version is `ch13.merge_sort(keys, values, out_keys, out_values)`
# (`autograder/problems/ch13/references.py`: one kernel per pass, the runs' pair found from the
# output position, co-rank within the pair, ping-pong between the outputs and a scratch pair so the
# last pass lands in the outputs). The next cell sorts 203 keys with many copies and checks it as
# the radix sort was checked:

# %%
print(ch13.merge_sort_check())

# %% [markdown]
# Count the passes: 8 for 203 keys, 28 for 2²⁸. Each merge pass reads and writes every pair, like a
# radix pass, and chapter 12's tiled merge ran at a fraction of a copy's bandwidth, held back by
# its searches. So a merge sort of 32-bit keys makes 28 passes where the radix sort makes 8 (or 4
# at 8 bits): for integer keys the radix sort wins on bytes moved. The merge sort wins where
# there are no digits (a comparison is all there is), where the keys are long (a radix sort of
# 64-bit keys needs twice the passes; the merge sort's stay `log2 n`), and where the input is
# already made of a few sorted runs (start the passes from those runs).
#
# ## Explain the gap (2 points, graded by your instructor)
#
# Compare your model with what you measured (on a GPU; without one, with the model's numbers and
# the structure of the kernels you wrote). In the cell below, in 5 to 10 sentences:
#
# 1. say how far the course's radix sort (and yours) is from its model's floor, and name the costs
#    the model leaves out that matter most in these kernels (look at what the local sort does per
#    key, and at what the scatter's writes look like to the memory system), tying each cause to a
#    measurement or a number of the model;
# 2. say how far it is from `cupy.sort` and from `cuda.compute`'s radix sort, and what those do
#    that the course's sort does not (digits per pass, the work per key of the local sort, how the
#    counts are made), using your model's table of radixes;
# 3. say when you would pick the merge sort instead, with a number from this chapter.
#
# A full-mark answer uses numbers (measured, or the model's) for every claim, ties each proposed
# cause to a number rather than listing causes, and keeps the model's floor and the measured times
# apart.

# %% [markdown] nbgrader={"grade": true, "grade_id": "radix_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the reasoning the instructor looks for, with the model's
# numbers for 2²⁸ pairs at 4.8 TB/s; the measured times are the learner's own).* (1) The model
# puts the course's sort (4 bits, tiles of 256) at 8 passes of 32 bytes per pair plus 1.25 bytes
# per pair of tables: 71.4 GB, 14.9 ms. The course's local sort leaves out two costs the model
# ignores. Each thread ranks its key by reading every digit of its tile: 256 shared-memory reads
# per key per pass, 2,048 per key over the sort, which is instruction work the bandwidth model
# does not count; and the scatter writes each tile's runs of one digit, which for random keys are
# 256 / 16 = 16 keys long on average: 64-byte runs, so a warp's writes touch several sectors
# where a copy's touch four per 128 bytes, and partly used sectors cost whole ones. A measured
# time well above 14.9 ms with the bandwidth far below a copy's points at the ranking loop when
# the time barely changes with tile size, and at the scatter when it grows with the number of
# distinct digits per tile. (2) CUB (`cupy.sort`, `cuda.compute`) sorts 8 bits a pass with tiles
# of thousands of keys: for 8 bits with tiles of 2048 the model gives 4 passes of 34.5 bytes per
# pair, 7.7 ms, about half of the course's 14.9 ms before any of the costs above; it also ranks keys
# with warp-level ballots and per-warp counters instead of a loop over the tile, and counts all
# digits of all passes in one read of the keys, so it runs close to its floor; `cupy.sort` of keys
# alone moves half the bytes again. (3) A merge sort makes ceil(log2 n) = 28 passes over 2²⁸ keys
# against 8 radix passes, each at best a copy's bytes (16 bytes per pair): at least 28 × 4.3 GB /
# 4.8 TB/s = 25 ms, so for 32-bit integers the radix sort wins; the merge sort is the choice for
# keys without digits (a comparison only), for long keys, and for input that is already a few
# sorted runs.

# %% [markdown]
# ## Stretch (not graded): a local sort with 1-bit splits
#
# Write `local_sort_splits(keys, values, shift, tile_keys, tile_values, counts)`, the same contract
# as 13.1, sorting the tile the way PMPP §13.4 does: four stable **1-bit splits**, lowest bit
# first. In a split on bit `s`, each thread has a flag (its key's bit `s`); an exclusive scan of
# the flags over the tile (chapter 11, in shared memory) gives `ones_before`; the keys with the bit
# 0 go first, in order (to `t − ones_before`), those with 1 after them, in order (to
# `valid − ones + ones_before`, where `ones` is the tile's total). Keep keys and values in
# registers between splits, passing them through shared memory. Check it with
# `ch13.radix_local_sort.check(local_sort_splits)` and compare, on a GPU, the time of a whole
# sort with each local sort (`ch13.radix_sort_with(local_sort, scatter, …)`).
#
# Questions to answer for yourself (not graded):
# 1. In 13.1 each thread reads the whole tile's digits: how does that work grow with the tile, and
#    how does the 1-bit split's grow? At which tile size would you switch?
# 2. The local sort and the scatter each read every key once per pass. Could one kernel do both?
#    What would it need to know before it can write (PMPP §13.6, and CUB's "onesweep")?
# 3. The first pass's counts could be made for all 8 digits at once, in one read of the keys.
#    Which of the model's terms would that remove?
#
# ## Going further
# - PMPP ch. 13: §13.1 (background), §13.2 (radix sort), §13.3 (parallel radix sort), §13.4
#   (optimizing for memory coalescing: the local sort), §13.5 (choice of radix value), §13.6
#   (thread coarsening to improve coalescing), §13.7 (parallel merge sort), §13.8 (other parallel
#   sort methods).
# - Merrill and Grimshaw, "High performance and scalable radix sorting" (2011), the design of CUB's
#   radix sort; Adinets and Merrill, "Onesweep" (2022), a single pass over the keys per digit.
# - GPU MODE lectures on scan and sorting.
# - **On AMD (HIP):** a wavefront has 64 lanes on the MI200 and MI300 series, and shared memory is
#   the **LDS** (64 KB per compute unit). This chapter's kernels use no warp-level code, so they run
#   unchanged; rocPRIM's radix sort (what `hipcub` calls) plays CUB's part. numba-hip keeps the
#   same `cuda.shared.array`, `cuda.syncthreads()` and atomics.
