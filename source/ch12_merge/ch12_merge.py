# %% [markdown]
# # Chapter 12 · Merge: co-rank, tiles in shared memory, a circular buffer
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 12.
#
# **Before you start:** chapters 1–6 and 11 (the scan). **Time:** about 4 hours, reading and
# exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Write **co-rank**, the binary search that tells a thread, for any position `k` of the merged
#   output, how many of the first `k` keys come from `A` and how many from `B`, so that thousands
#   of threads can each merge their own piece of the output without talking to one another.
# - Write a **stable** parallel merge with it, and prove it stable: every output also says where
#   it came from, so a merge that puts equal keys in the wrong order fails even when the keys
#   themselves look right.
# - Write the **tiled** merge, which loads both inputs into shared memory in coalesced tiles, and
#   measure it against the basic one, against a copy of the same bytes, against `cupy.sort` and
#   against the CPU; predict first, with a model of two floors (the bytes a merge moves, and the
#   chain of dependent loads a thread waits for), which one binds each kernel.
#
# You did chapter 10 (a reduction: many inputs, one output) and chapter 11 (a scan: output `i`
# depends on inputs `0..i`). A merge is different again: **where** an input key ends up in the
# output depends on the data. That is what this chapter is about.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32

ag.banner()
ch12 = ag.problems.ch12

# %% [markdown]
# ## The idea: a merge, and where a thread should start
#
# **Merging** takes two sorted arrays, `A` with `m` keys and `B` with `n`, and produces `C`, all
# `m + n` keys in sorted order. It is the inner step of merge sort, of joining two sorted tables
# on a key, of combining sorted runs that did not fit in memory at once. Sequentially it is one
# pass (PMPP §12.2): keep a position `i` in `A` and `j` in `B`; at each step copy the smaller of
# `A[i]` and `B[j]` to the output and advance past it; when one array runs out, copy the rest of
# the other.
#
# **Stable.** When `A[i] == B[j]` the sequential merge takes `A[i]` first (it compares with `<=`).
# Every key of `A` comes before an equal key of `B`, and keys of one array keep their order. Why
# care, if equal keys are equal? Because in practice a key carries a **payload**: a row of a
# table, a particle's velocity, the index of a record. Sorting records by key with a merge sort is
# only correct if each merge keeps equal keys in order. In this chapter every merge writes two
# outputs: `C[k]`, the key, and `src[k]`, **where it came from**: `i` for `A[i]`, `m + j` for
# `B[j]` (its index in the concatenation A‖B). With `src`, the payloads follow (`payload[src]`),
# and a merge that swaps equal keys is caught.
#
# **In parallel.** Give each thread a piece of the output: thread `t` writes `C[k0:k1]`. Which keys
# does it need? The first `k0` outputs are made of some `i0` keys of `A` and `j0 = k0 − i0` keys of
# `B`: thread `t` must start at `A[i0]` and `B[j0]`. `i0` is the **co-rank** of `k0` (PMPP §12.3):
# for a stable merge, the one `i` with
#
# - `i == 0` or `j == n` or `A[i − 1] <= B[j]`  (no key of `A` taken so far belongs after
#   `B[j]`), and
# - `j == 0` or `i == m` or `B[j − 1] < A[i]`  (no key of `B` taken so far belongs after `A[i]`; on
#   a tie `A[i]` goes first, so it would have been taken before `B[j − 1]`),
#
# where `j = k − i`. Once a thread knows `i0, j0` and `i1, j1` (the co-ranks of its two ends), it
# merges `A[i0:i1]` and `B[j0:j1]` sequentially into `C[k0:k1]`, without waiting for anyone.
#
# A picture helps. Draw `A` down and `B` across. The sequential merge is a **path** from the top
# left corner to the bottom right: a step down for each key taken from `A`, a step right for each
# key from `B`. Shaded cells are those where `A[i] > B[j]`: the path runs along the edge of that
# region, going right while the next `B` key is smaller, down otherwise. After `k` steps the path
# is on the diagonal `i + j = k`, so **the co-rank of `k` is where the path crosses that
# diagonal**. Below, the output is cut into four equal pieces (four threads), the dashed diagonals
# are the cuts, and the dots are each thread's split points.

# %%
A_small = np.array([1, 2, 2, 3, 5, 5, 6, 8, 9, 9], np.float32)
B_small = np.array([2, 2, 3, 4, 5, 7, 8, 9, 10], np.float32)
ch12.plot_merge_path(A_small, B_small, parts=4,
                     title="the merge path of A (down) and B (across), cut for 4 threads")
plt.show()
C_small, src_small = ch12.merge_reference(A_small, B_small)
print("C   =", C_small.astype(int).tolist())
print("src =", src_small.tolist(), f"(< {A_small.size}: from A)")

# %% [markdown]
# Three things to see. Every dot lies on the path, each exactly once: every thread finds its own
# split points, and they fit together. The cuts are even in the *output* (5 keys per thread, 4 for
# the last) but not in the inputs: the first thread takes 3 keys of `A` and 2 of `B`, another might
# take all of its keys from one array. And where the keys tie (the `2`s, the `5`s and the `9`s), the
# path goes **down first**: `A`'s copy before `B`'s. A co-rank that went right first at a tie would
# put a dot somewhere else, and the thread's output would disagree with its neighbour's.
#
# **Finding the crossing: a binary search.** On diagonal `k`, `i` can range from `max(0, k − n)`
# (`B` has only `n` keys) to `min(k, m)`. Test a candidate `i` (with `j = k − i`): if `i < m`,
# `j > 0` and `A[i] <= B[j − 1]`, then `A[i]` belongs before `B[j − 1]`, which is already taken:
# `i` is too small. Otherwise it is not. "Too small" holds for every `i` below the co-rank and for
# none from it on, so halve the range until it is one value: about `log2(min(m, n) + 1)` steps,
# each reading one key of `A` and one of `B` (PMPP §12.4 writes the same search in another shape,
# moving `i` down or up by half the remaining range).
#
# ## The CPU baseline
#
# Three ways on one core: the sequential merge compiled with `numba.njit`; NumPy's stable sort of
# the concatenation (`np.argsort(..., kind="stable")`, which gives `src` directly; for float32 it
# is a timsort, which finds the two sorted runs and merges them, so it is a merge in disguise); and
# a merge made of two **searches**: `A[i]` goes to position `i + (number of B's keys < A[i])` and
# `B[j]` to `j + (number of A's keys <= B[j])`, each count a binary search (`np.searchsorted`), the
# same `<` against `<=` that makes the merge stable. (That last one is a parallel algorithm too:
# every key finds its place on its own. It does `m + n` searches where co-rank does one per
# thread.) Throughout, a merge moves 12 bytes per key: the key read, `C` and `src` written.

# %%
cpu_n = (1 << 24) if ag.backend.is_gpu else (1 << 20)   # smaller without a GPU: slow machines
why = ag.timing.not_measured("Timing the CPU merges", gpu=False)
if why:
    print(why)
cpu_rows = [] if why else ch12.time_cpu_merges(cpu_n // 2 + 3, cpu_n // 2 - 3)
for row in cpu_rows:
    print(f"{row['label']:44s} {row['ms']:8.2f} ms  {row['gbps']:6.2f} GB/s"
          f"{'' if row['right'] else '   WRONG'}")

# %% [markdown]
# ## Exercise 12.1 · Co-rank (3 points)
#
# Write the device function `co_rank(k, A, m, B, n)`: the number `i` of keys of `A` among the first
# `k` keys of the stable merge of `A[:m]` and `B[:n]` (`0 <= k <= m + n`). Use only the first `m`
# keys of `A` and `n` of `B` (later `A` and `B` will be tiles in shared memory, only partly
# filled). Constraints: about `log₂ min(m, n)` steps, not `k` (a thread of the merge kernels calls
# it once, on keys it would take too long to walk), no array of its own, and ties broken as the
# stable merge breaks them (an `A` key before an equal `B` key). The search above is the
# algorithm; the code is yours: the range to search, the test of a candidate with its edge cases
# (`i = m`, `j = 0`), and a loop that ends on the co-rank itself, not one off. The hints have it
# step by step. Roughly 9 lines. It must be a **device function** (`@cuda.jit(device=True)`): kernels call it and use the
# value it returns.
#
# **What the check does.** A kernel of the course calls your function once per thread, each
# thread a different `k`, and compares every answer with the exact co-rank (no tolerance: it is an
# integer). Visible: every `k` from 0 to `m + n` on 37 + 27 small integers with many ties, an empty
# `A` (every key equal), 50 + 52 spread-out floats (some keys in both arrays), and 41 + 2 keys
# whose ranges only partly overlap. Hidden: an empty `B`, 96 + 9 equal keys, random sizes (on a GPU
# ten million keys and 8192 values of `k`, 0 and `m + n` included). The verdict names the first
# wrong `k`, the right `i` and `j`, and the keys around them; a co-rank that breaks ties the wrong
# way is named as such.

# %% nbgrader={"grade": false, "grade_id": "co_rank_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit(device=True)
def co_rank(k, A, m, B, n):
    ### BEGIN SOLUTION
    lo = max(0, k - n)          # B has only n keys: at least k - n come from A
    hi = min(k, m)
    while lo < hi:
        i = (lo + hi) // 2      # try: i keys from A, k - i from B
        if A[i] <= B[k - i - 1]:
            lo = i + 1          # A[i] belongs before B[k-i-1], which is taken: i too small
        else:
            hi = i
    return lo
    ### END SOLUTION


# %% [markdown]
# Try it on the two arrays of the picture: every `k`, the co-rank `i` and `j = k − i` (the dots
# of the picture are at `k` = 0, 5, 10, 15 and 19).

# %%
ranks = ch12.evaluate_co_rank(co_rank, A_small, B_small)
print("k:", " ".join(f"{k:2d}" for k in range(ranks.size)))
print("i:", " ".join(f"{i:2d}" for i in ranks))
print("j:", " ".join(f"{k - i:2d}" for k, i in enumerate(ranks)))
print("same as the path:", np.array_equal(ranks, ch12.co_ranks(A_small, B_small,
                                                               np.arange(ranks.size))))

# %% nbgrader={"grade": true, "grade_id": "co_rank_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch12.co_rank.check(co_rank)
### BEGIN HIDDEN TESTS
ag.problems.ch12.co_rank.check_hidden(co_rank)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 12.2 · A basic parallel merge (3 points)
#
# Write `merge_basic_kernel(A, B, C, src)` (PMPP §12.5): `A` and `B` are sorted float32 device
# arrays, `C` (float32) and `src` (int32) have `m + n` elements. With `total = m + n` and
# `per = ceil(total / cuda.gridsize(1))` outputs per thread, thread `t = cuda.grid(1)`:
#
# 1. takes the range `k0 = min(t · per, total)`, `k1 = min(k0 + per, total)` (threads past the
#    end get an empty range);
# 2. finds `i0 = co_rank(k0, A, m, B, n)` and `i1 = co_rank(k1, A, m, B, n)`, and `j0 = k0 − i0`,
#    `j1 = k1 − i1` (call your `co_rank` from 12.1);
# 3. merges `A[i0:i1]` and `B[j0:j1]` into `C[k0:k1]`: for each `k`, if `B`'s part is used up, or
#    `A`'s is not and `A[i] <= B[j]`, write `C[k] = A[i]`, `src[k] = i` and advance `i`; otherwise
#    `C[k] = B[j]`, `src[k] = m + j`, advance `j`.
#
# Roughly 18 lines.
#
# **How the check launches it.** Blocks of 32 threads (32, 64 or 128 in the hidden tests), and
# `ceil(total / (threads · 8))` blocks: about 8 outputs per thread.
#
# **What the check does.** `C` filled with NaN and `src` with −2³¹ before the launch; both must be
# exact. Visible: 300 + 216 small integers with many ties, 64 + 45 keys all equal (the output is
# all of `A`, then all of `B`), 211 + 4 keys with partly overlapping ranges, and an empty `A`.
# Hidden: an empty `B`, 9 + 388 equal keys, random sizes (on a GPU 8 million keys first). The
# verdict says which output is wrong, where the first wrong key should have come from, and what
# that usually means.

# %% nbgrader={"grade": false, "grade_id": "merge_basic_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def merge_basic_kernel(A, B, C, src):
    ### BEGIN SOLUTION
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
    ### END SOLUTION


# %% [markdown]
# Try it on the pictured arrays with 4 threads (5 outputs each, as in the picture):

# %%
def run_merge(kernel, A, B, blocks, threads):
    """Launch a merge kernel on host arrays A and B; return (C, src) on the host."""
    d_C = cuda.device_array(A.size + B.size, np.float32)
    d_src = cuda.device_array(A.size + B.size, np.int32)
    kernel[blocks, threads](cuda.to_device(A), cuda.to_device(B), d_C, d_src)
    return d_C.copy_to_host(), d_src.copy_to_host()


C_got, src_got = run_merge(merge_basic_kernel, A_small, B_small, 1, 4)
print("C   =", C_got.astype(int).tolist())
print("src =", src_got.tolist())
print("same as the stable merge:", np.array_equal(C_got, C_small) and
      np.array_equal(src_got, src_small))

# %% nbgrader={"grade": true, "grade_id": "merge_basic_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch12.merge_basic.check(merge_basic_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch12.merge_basic.check_hidden(merge_basic_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: ties the wrong way
#
# The kernel below is the basic merge with one character changed: the merge loop takes `A[i]` only
# when `A[i] < B[j]`, so on a tie it takes `B[j]` first. **Predict before you run:** is `C` still
# right? Is `src`? (The co-rank still puts ties the right way, so a thread's split points and its
# merge loop now disagree about ties.)

# %%
@cuda.jit
def merge_ties_to_b(A, B, C, src):
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
        if j >= j_end or (i < i_end and A[i] < B[j]):     # <, not <=
            C[k] = A[i]
            src[k] = i
            i += 1
        else:
            C[k] = B[j]
            src[k] = m + j
            j += 1


C_bad, src_bad = run_merge(merge_ties_to_b, A_small, B_small, 1, 4)
print("C   right:", np.array_equal(C_bad, C_small))
print("src right:", np.array_equal(src_bad, src_small))
print("src      =", src_bad.tolist())
print("expected =", src_small.tolist())
try:
    ch12.merge_basic.check(merge_ties_to_b)
except ag.CheckFailed as failure:
    print("\nthe course's check:\n" + str(failure))

# %% [markdown]
# `C` is exactly right: a check that compared only the keys (or compared `C` with `np.sort` of the
# concatenation, as a quick test would) passes this kernel. `src` shows the swap: at each tie the
# `B` key came out first. Records sorted with this merge would be reordered among equal keys, and
# a merge sort built on it would not be stable. Stability is a property you can only test with
# inputs that have ties and outputs that tell equal keys apart; that is why every case of this
# chapter has many ties, and why `src` exists.
#
# ## Measure it (on a GPU)
#
# How fast is the basic merge, and how does it depend on the number of outputs per thread? On a
# GPU the next cell times your kernel on 2²⁸ keys (2²⁷ + 12,345 in `A`, 2²⁷ − 6,789 in `B`, runs
# of about 16 equal keys in both) with 1, 4, 16, 64 and 256 outputs per thread, each result
# checked at 4096 positions, next to a device-to-device copy of the same 12 bytes per key, the
# practical bandwidth ceiling. In CPU mode it says why it cannot.

# %%
def per_thread(e, threads=256):
    """A launch shape with about e outputs per thread: (blocks, threads) for `total` keys."""
    return lambda total: (max(1, -(-total // (threads * e))), threads)


basic_shapes = {f"basic, {e:3d} outputs per thread": (merge_basic_kernel, per_thread(e))
                for e in (1, 4, 16, 64, 256)}
try:
    rows = ch12.measure(basic_shapes, with_cupy=False)
    total = sum(ch12.SPEED_SIZE)
    ceiling = ag.timing.copy_ceiling(12 * total)
    for r in rows:
        print(f"{r['label']:32s} {r['ms']:8.3f} ms {r['gbps']:8.1f} GB/s"
              f"  ({r['gbps'] / ceiling.gbps:.0%} of a copy){'' if r['right'] else '   WRONG'}")
    print(f"copy ceiling: {ceiling.gbps:.0f} GB/s ({ceiling.label})")
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nOn the course's H200 (2^28 keys): with 1 output per thread 30.5 ms,"
          " 4: 8.75 ms (the fastest), 16: 10.7 ms, 64: 41.7"
          " ms, 256: 50.4 ms; a copy of the same 3.2 GB 0.76 ms.")

# %% [markdown]
# ## Predict: two floors under a merge's time
#
# Whatever the kernel, a merge must **move its bytes**: read every key (`key_reads` times, if a
# kernel reads keys more than once; 4 bytes each) and write `C` (4-byte floats) and `src` (4-byte
# ints), all through a memory bus of `bandwidth` bytes per second. That is one floor.
#
# The basic kernel has a second one. A thread's work is a **chain**: its two co-rank searches take
# `ceil(log2(min(m, n) + 1))` steps each, and each step's loads depend on the previous step's
# comparison; then its merge loop makes `E` more loads (`E` outputs per thread), each depending on
# the comparison before it. Each link of the chain waits `latency` seconds for memory. A GPU runs
# at most `resident_threads` threads at once, so the `m + n` outputs, `E` per thread, are computed
# in **waves** of threads, one wave after the other. That is the second floor, and the time is at
# least the larger of the two. Writing both down is Exercise 12.3.
#
# Few outputs per thread means many threads and many waves, each paying for two whole searches;
# many outputs per thread means few waves, but long merge loops. For the tiled kernels below, the
# searches and the merging happen in shared memory, whose latency is much smaller; leave their
# second floor out (`latency = 0`) and compare their memory floors: the tiled kernel reads each
# key about twice (`key_reads = 2`, you will see why), the circular-buffer one once.
#
# Use these figures for an H200-like device. They are **round numbers chosen for this exercise,
# not measurements** (the bandwidth is the H200's advertised 4.8 TB/s): 4.8 × 10¹² B/s, a latency
# of 4 × 10⁻⁷ s per link (a load served by the L2 cache or memory, not by the L1), and
# 132 SMs × 2048 threads = 270,336 resident threads.
#
# ## Exercise 12.3 · A bound on a merge's time (2 points)
#
# Write `merge_time_bound(m, n, outputs_per_thread, key_reads, bandwidth, latency,
# resident_threads)`: `m`, `n`, `outputs_per_thread` and `resident_threads` are Python ints, the
# others Python floats. Return the larger of the two floors above, in **seconds**, derived from
# their descriptions (count what one thread waits for, then how many waves there are; a last
# wave that is only partly full still takes a whole chain). Roughly 6 lines (`ceil(log2(x + 1))`
# of an int `x` is `x.bit_length()`; `-(-a // b)` is `ceil(a / b)` for ints).
#
# **Predict first, by hand** (then let your function check you): for `m = n = 2²⁷`, with the
# figures above, which floor binds the basic kernel at 4 outputs per thread, and at 256? At how many
# outputs per thread does the latency floor drop below the memory floor? How much slower than the
# circular-buffer kernel's floor is the tiled kernel's?
#
# **What the check does.** It calls your function on 8 sets of values (the first six are the
# chapter's: the basic kernel at 4, 16, 64 and 256 outputs per thread, the tiled and the
# circular-buffer kernels; then an empty `A` and a single key) and the hidden tests on 200 random
# ones (up to 3 × 10⁹ keys per array, one of them sometimes empty, 1 to 2048 outputs per thread,
# bandwidths from 30 GB/s to 10 TB/s, latencies from 1 ns to 3 µs or 0). Results are compared with
# the bound computed in float64, allowing a few roundings.

# %% nbgrader={"grade": false, "grade_id": "merge_time_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def merge_time_bound(m, n, outputs_per_thread, key_reads, bandwidth, latency, resident_threads):
    """Seconds a merge of m + n keys needs at least: the larger of two floors."""
    ### BEGIN SOLUTION
    memory = (4 * key_reads + 8) * (m + n) / bandwidth
    steps = min(m, n).bit_length()                       # ceil(log2(min(m, n) + 1))
    threads = -(-(m + n) // outputs_per_thread)
    waves = -(-threads // resident_threads)
    chain = (2 * steps + outputs_per_thread) * latency
    return max(memory, waves * chain)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "merge_time_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch12.merge_time_bound.check(merge_time_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch12.merge_time_bound.check_hidden(merge_time_bound)
### END HIDDEN TESTS

# %% [markdown]
# Your predictions for the speed test's 2²⁸ keys:

# %%
m_big, n_big = ch12.SPEED_SIZE
figures = dict(bandwidth=ch12.BANDWIDTH, resident_threads=ch12.RESIDENT)
predicted = {f"basic, {e:3d} outputs per thread":
             merge_time_bound(m_big, n_big, e, 1.0, latency=ch12.LATENCY, **figures)
             for e in (1, 4, 16, 64, 256)}
predicted["tiled (yours)"] = merge_time_bound(m_big, n_big, 8, 2.0, latency=0.0, **figures)
predicted["tiled (course)"] = predicted["tiled (yours)"]
predicted["circular buffer (course)"] = merge_time_bound(m_big, n_big, 8, 1.0, latency=0.0,
                                                         **figures)
for label, seconds in predicted.items():
    print(f"{label:32s} ≥ {seconds * 1e3:7.3f} ms")

# %% [markdown]
# ## Tiles: load together, merge from shared memory
#
# The basic kernel has two problems, and the model above shows only the first. Its searches run in
# global memory, one chain of dependent loads per thread. And its loads do not **coalesce**: in
# each step of the merge loop, the 32 threads of a warp read keys that lie a whole range apart
# (`per` keys), so one load instruction touches up to 32 different memory sectors, where a warp
# reading 32 consecutive keys would touch four (chapter 6).
#
# The tiled merge (PMPP §12.6) fixes both by working in two levels. Each **block** takes one long
# segment of the output and finds its ends with co-rank in global memory: two searches per block,
# not per thread. Then it walks along its segment one **tile** at a time:
#
# 1. **load**: the block's threads copy the next `TILE` keys of `A` (from where the block is in
#    `A`) into a shared array `sA`, and the next `TILE` keys of `B` into `sB`, thread `t` taking
#    elements `t, t + blockDim, …`: consecutive threads, consecutive keys, coalesced. Near the
#    segment's end fewer keys are left: load only `na = min(TILE, a_end − a)` of `A` and
#    `nb = min(TILE, b_end − b)` of `B`;
# 2. `cuda.syncthreads()`;
# 3. **merge**: the tile produces the next `out = min(TILE, k_end − k)` outputs. Why can it? The
#    next `TILE` outputs need at most `TILE` keys of `A` and at most `TILE` of `B`, and those are
#    exactly what was loaded. Each thread takes `ceil(TILE / blockDim)` of those outputs and finds
#    its split points with `co_rank` **on the tiles** (`co_rank(lo, sA, na, sB, nb)`: this is why
#    co_rank takes the lengths), then merges from shared memory into `C` and `src`;
# 4. **advance**: how many keys of `A` did the tile consume? `used = co_rank(out, sA, na, sB, nb)`;
#    the block moves `a` on by `used`, `b` by `out − used`, `k` by `out`;
# 5. `cuda.syncthreads()`, before the next load overwrites the tiles.
#
# The catch is in step 1: each tile loads `TILE` keys of each array but consumes `TILE` keys in
# all, so roughly half of what is loaded is thrown away and loaded again for the next tile. The
# picture shows one block over 30 + 27 keys with `TILE = 8`:

# %%
A_tiles, B_tiles = ch12.sorted_keys(np.random.default_rng(7), 30, 27, "ties")
plan = ch12.plot_tiles(A_tiles, B_tiles, tile=8)
plt.tight_layout()
plt.show()
loads = sum(r["tiled_loads"] for r in plan)
fresh = sum(r["circular_loads"] for r in plan)
print(f"{A_tiles.size + B_tiles.size} outputs: the tiled kernel loads {loads} keys "
      f"({loads / (A_tiles.size + B_tiles.size):.2f} per output), a circular buffer {fresh}")

# %% [markdown]
# On the 2²⁸ keys of the speed test, with `TILE = 2048`, the tiled kernel loads 1.98 keys per
# output. The extra loads are **recent**: the keys loaded again were loaded one tile earlier, so on
# a GPU with a large L2 cache they may well come from there rather than from memory. Your
# measurements below will say how much they cost.
#
# ## Exercise 12.4 · A tiled merge (4 points + 2 for speed)
#
# Write `merge_tiled_kernel(A, B, C, src)` (same arguments as 12.2). Use the module constant
# `TILE` in the cell (2048 on a GPU, 64 in CPU mode, where the simulator is slow and small tiles
# make every block loop over several): two shared arrays `cuda.shared.array(TILE, float32)`, `sA`
# and `sB`. With `per = ceil((m + n) / cuda.gridDim.x)`, block `b` merges the outputs from
# `k = min(b · per, m + n)` to `k_end = min(k + per, m + n)`; find `a = co_rank(k, A, m, B, n)`,
# `a_end` likewise, `b = k − a`, `b_end = k_end − a_end`, then loop `while k < k_end` over the
# five steps above (each thread's share: `vt = ceil(TILE / blockDim)` outputs, from
# `lo = min(t · vt, out)` to `hi = min(lo + vt, out)` of the tile). In `src`, a key from the tile of
# `A` at `sA[i]` is `A[a + i]`, so `src = a + i`; one from `sB[j]` is `m + b + j`. Roughly 40 lines.
#
# **How the check launches it.** Two to four blocks of 32 threads in CPU mode (32, 64 or 128 in
# the hidden tests), for a few hundred keys: every block loops over several tiles of 64, and the
# last tile of every segment is partial. On a GPU, one block per 8192 outputs.
#
# **What the check does.** As for 12.2 (exact `C` and `src`, ties everywhere, an empty `A`, a very
# short `B`, all keys equal; hidden: an empty `B`, random sizes). In CPU mode the race detector
# watches `sA` and `sB`: a missing barrier fails every time, naming the two threads, the element and
# the lines. **The speed test** (on a GPU) times it on 2²⁸ keys, 8 blocks of 256 threads per SM,
# against the course's fastest merge (merge path, described after the measurements below: 3.6
# times as fast as the course's tiled kernel on the course's H200) and the compiled sequential merge
# on one core: you need at least 15% of the course kernel's speed and 20× the CPU loop. In CPU
# mode it says it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "merge_tiled_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
TILE = 2048 if ag.backend.is_gpu else 64    # keys of A and of B per tile


@cuda.jit
def merge_tiled_kernel(A, B, C, src):
    ### BEGIN SOLUTION
    sA = cuda.shared.array(TILE, float32)
    sB = cuda.shared.array(TILE, float32)
    m, n = A.size, B.size
    t, nt = cuda.threadIdx.x, cuda.blockDim.x
    per = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
    k = min(cuda.blockIdx.x * per, m + n)            # the block's segment of the output
    k_end = min(k + per, m + n)
    a = co_rank(k, A, m, B, n)                       # ... and of A and B
    a_end = co_rank(k_end, A, m, B, n)
    b = k - a
    b_end = k_end - a_end
    vt = (TILE + nt - 1) // nt                       # outputs per thread and tile
    while k < k_end:
        na = min(TILE, a_end - a)                    # 1. load (coalesced)
        nb = min(TILE, b_end - b)
        for x in range(t, na, nt):
            sA[x] = A[a + x]
        for x in range(t, nb, nt):
            sB[x] = B[b + x]
        cuda.syncthreads()                           # 2.
        out = min(TILE, k_end - k)                   # 3. merge this tile's outputs
        lo = min(t * vt, out)
        hi = min(lo + vt, out)
        i = co_rank(lo, sA, na, sB, nb)
        i_end = co_rank(hi, sA, na, sB, nb)
        j = lo - i
        j_end = hi - i_end
        for q in range(k + lo, k + hi):
            if j >= j_end or (i < i_end and sA[i] <= sB[j]):
                C[q] = sA[i]
                src[q] = a + i
                i += 1
            else:
                C[q] = sB[j]
                src[q] = m + b + j
                j += 1
        used = co_rank(out, sA, na, sB, nb)          # 4. keys of A this tile consumed
        cuda.syncthreads()                           # 5. before the next load
        a += used
        b += out - used
        k += out
    ### END SOLUTION


# %% [markdown]
# Try it on the pictured keys with two blocks of 4 threads (in CPU mode the tiles hold 64 keys, so
# each block's segment is one partial tile; on a GPU, 2048):

# %%
C_got, src_got = run_merge(merge_tiled_kernel, A_small, B_small, 2, 4)
print("same as the stable merge:", np.array_equal(C_got, C_small) and
      np.array_equal(src_got, src_small))

# %% nbgrader={"grade": true, "grade_id": "merge_tiled_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch12.merge_tiled.check(merge_tiled_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch12.merge_tiled.check_hidden(merge_tiled_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "merge_tiled_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch12.merge_tiled.check_speed(merge_tiled_kernel)

# %% [markdown]
# Break it on purpose, one change at a time, and read what the check says: remove the first
# barrier (a thread searches a tile another thread has not finished loading), remove the second
# (a fast thread loads the next tile over keys a slow one is still merging), or loop over
# `(k_end − k) // TILE` tiles instead of `while k < k_end` (each segment's last, partial tile is
# never merged: its outputs are never written).
#
# ## A circular buffer: load each key once
#
# PMPP §12.7 removes the second loads. Keep each tile as a **ring**: after a tile, the keys of `A`
# it did not consume are still in `sA`; leave them where they are, remember where the first of them
# sits (`a_head`) and how many there are, and load only as many new keys as were consumed, into
# the slots that were freed, wrapping around the end of the array (`(a_head + x) % TILE`, a bit
# mask when `TILE` is a power of two). Every index into `sA` and `sB` goes through the ring, so
# co-rank needs a version that reads `R[(head + i) % TILE]`. The hatched parts of the picture
# above are what such a kernel loads: each key once. The course's version is
# `ch12.reference_circular()` (in `autograder/problems/ch12/references.py`); the measurements
# below time it beside yours, and a stretch exercise at the end of the chapter asks you to write
# your own.
#
# ## Measure all of them (on a GPU)
#
# On a GPU the next cell times, on the speed test's 2²⁸ keys: your basic kernel at 16 outputs per
# thread, your tiled kernel, the course's tiled kernel (the same algorithm, with the two candidate
# keys kept in registers and the keys a tile consumed taken from the thread that ends the tile),
# the course's circular-buffer kernel, written the same way (8 blocks of 256 threads per SM), the
# course's merge-path kernel (the speed test's reference, described below), and `cupy.sort` of the
# concatenation (a radix sort of the keys alone: it computes no `src`, and does not know the input
# is two sorted runs), each checked at 4096 positions; next to a copy of the same bytes, the CPU baselines measured above, and your
# predictions. It prints the time, the bandwidth for the 12 bytes per key, and the fraction of the
# copy's bandwidth. In CPU mode it prints your predictions only.

# %%
shapes = {"basic,  16 outputs per thread": (merge_basic_kernel, per_thread(16)),
          "tiled (yours)": (merge_tiled_kernel, ch12.speed_shape),
          "tiled (course)": (ch12.reference_tiled(), ch12.speed_shape),
          "circular buffer (course)": (ch12.reference_circular(), ch12.speed_shape),
          "merge path (course)": (ch12.reference_merge_path_wide(), ch12.speed_shape)}
try:
    rows = ch12.measure(shapes)
    total = sum(ch12.SPEED_SIZE)
    ceiling = ag.timing.copy_ceiling(12 * total)
    print(f"{total:,} keys, {12 * total / 1e9:.2f} GB to move; a copy of the same bytes: "
          f"{ceiling.median_ms:.3f} ms = {ceiling.gbps:,.0f} GB/s\n")
    print(f"{'kernel':36s} {'time':>10s} {'GB/s':>7s} {'of copy':>8s} {'predicted':>10s} right")
    for r in rows:
        guess = predicted.get(r["label"])
        guess = f"{guess * 1e3:8.3f}ms" if guess else f"{'–':>10s}"
        print(f"{r['label']:36s} {r['ms']:8.3f}ms {r['gbps']:7.0f} {r['gbps'] / ceiling.gbps:8.0%}"
              f" {guess} {r['right']}")
    for r in cpu_rows:
        print(f"CPU: {r['label'][:31]:31s} {r['gbps']:18.2f} GB/s"
              f" (measured above, on {cpu_n:,} keys)")
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.barh([r["label"] for r in rows], [r["gbps"] for r in rows], color="#3b6ea8")
    ax.axvline(ceiling.gbps, color="black", ls="--", lw=1, label=f"copy {ceiling.gbps:.0f} GB/s")
    ax.set_xlabel("GB/s (12 bytes per key)")
    ax.set_title(f"Merging 2^28 keys on {ag.backend.label}")
    ax.legend(fontsize=8)
    plt.tight_layout()
    plt.show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nYour predictions for 2^28 keys:")
    for label, seconds in predicted.items():
        print(f"  {label:32s} ≥ {seconds * 1e3:7.3f} ms")

# %% [markdown]
# ## The course's fastest merge: merge path
#
# The tiled kernel pays for its tile loop: per tile, three co-rank searches per thread and two
# barriers, and keys of each tile loaded a second time. The course's fastest merge, the speed
# test's reference (`ch12.reference_merge_path_wide()`, the design of ModernGPU's and CUB's
# merges), has no tile loop. It makes two launches:
#
# 1. a **partition** kernel: one thread per block boundary computes co-rank at that boundary (a
#    binary search in global memory), and writes where each block's keys of `A` start;
# 2. the **merge**: each block of 256 threads owns 256 × 11 = 2816 consecutive outputs. It loads
#    exactly the keys of `A` and `B` those outputs need into shared memory, once and coalesced,
#    and waits at one barrier. Each thread then finds its own 11 outputs' start with a binary
#    search in shared memory, merges them serially (a select, not a branch, picks the next key),
#    writes each output's position in the staged keys back to shared memory, and after a second
#    barrier the block stores `C` and `src` coalesced.
#
# Every key crosses DRAM once, each thread does one search instead of three per tile, and each
# block waits at two barriers in all. On the course's H200 it merged the 2²⁸ keys in 1.65 ms,
# 46% of the copy's bandwidth.

# %% [markdown]
# ## Explain the gap (2 points, graded by your instructor)
#
# Compare your predictions with what you measured (on a GPU; without one, use the course's H200
# figures for 2²⁸ keys, from this chapter's cells and `docs/benchmarks.md`: a copy of the same
# 3.2 GB 0.76 ms; the basic kernel 30.5 / 8.75 / 10.7 / 41.7 / 50.4 ms at 1, 4, 16, 64 and 256
# outputs per thread; the course's tiled kernel 6.03 ms and circular-buffer kernel 5.92 ms;
# `cupy.sort` 6.62 ms; the sequential merge on one core of the host 714 ms). In the cell below,
# in 5 to 10 sentences:
#
# 1. for the basic kernel, say how its time changes with the outputs per thread, and where the
#    model's latency floor follows the measurements and where it does not; name what the model
#    leaves out that explains the difference at the largest number of outputs per thread;
# 2. say how close the tiled kernel comes to the copy, and whether loading each key twice cost
#    what the model's `key_reads = 2` predicts: compare it with the circular-buffer kernel, and
#    say where the second loads were most likely served from;
# 3. say whether the merge beats `cupy.sort`, by how much, and why a merge should (what a sort of
#    the concatenation must do that a merge need not).
#
# A full-mark answer uses measured numbers (yours or the course's) for every claim, ties each
# proposed cause to a measurement rather than listing causes, and gets the binding floor of the
# model right for each kernel.

# %% [markdown] nbgrader={"grade": true, "grade_id": "merge_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only), with the course's H200 figures (2²⁸ keys).* (1) The model
# puts the basic kernel on its latency floor up to 64 outputs per thread (21.8, 5.78, 1.76 and
# 0.76 ms at 1, 4, 16 and 64) and on the memory floor (0.67 ms) from 256 on. Measured: 30.5, 8.75,
# 10.7, 41.7 and 50.4 ms. From 1 to 4 outputs per thread the time falls as the model's waves do,
# 3.5× against the model's 3.8×, and stays 1.4 to 1.5× above the latency floor: each thread pays for
# two whole searches however few keys it merges, and its links waited at least the model's 0.4 µs.
# From 4 on the model keeps falling (7.7× more down to 64), but the measured time rises: 1.2× at
# 16, 4.8× at 64, 5.8× at 256, where the model says memory-bound and the kernel takes 67× a copy's
# 0.758 ms. The model leaves out coalescing. With E outputs per thread, neighbouring threads of a
# warp read keys about E/2 apart in each array (and write `C` and `src` E apart) in every step of
# their merge loops: at 4 one load instruction touches about 8 sectors, at 16 up to 32 (each reused
# over the next 8 steps), and from 64 on 32 separate 128-byte lines, which the L1 must hold across
# dozens of steps for every resident warp, or the kernel moves many times the copy's traffic; the
# copy's warps read 32 consecutive keys, four sectors, per instruction. (2) The course's tiled
# kernel took 6.03 ms (534 GB/s, 13% of the 4,269 GB/s copy ceiling), and the
# circular-buffer kernel 5.92 ms, only 2% faster. The model's
# key_reads = 2 predicted the tiled kernel 33% slower (0.89 against 0.67 ms), but the second loads
# read keys that the same block loaded one tile earlier, a few KB before, so they came from the L2
# (tens of MB on the H200), not from memory: the memory saw each key about once, and the circular
# buffer saved L2 traffic, paid for with a modulo on every shared-memory index. Both take about 8×
# the copy's time, 7 to 9× their memory floors, because each output also costs a share of three
# shared-memory searches per thread and tile (about 11 steps each for 8 outputs), and two barriers
# per tile, work a copy does not do. (3) `cupy.sort` took 6.62 ms in the comparison cell, 1.10× the
# course's tiled merge (6.03 ms): the merge wins, though by 10%, not by multiples, and the sort
# writes no `src`. A radix sort of 32-bit keys makes
# several passes over all the keys (reading and writing them each time) and knows nothing of the
# two sorted runs, while a merge reads each key once and writes it once, and sorting two sorted
# arrays is a merge; the margin is small because the merge runs at 13% of a copy's bandwidth, held
# back by its searches and barriers rather than by its bytes. (The course's merge-path kernel,
# which finds each block's start once, stages its keys in shared memory in one pass and merges 11
# outputs per thread with no tile loop, took 1.65 ms, 46% of the copy.)

# %% [markdown]
# ## Stretch (not graded): your own circular buffer
#
# Write `merge_circular_kernel(A, B, C, src)`: your tiled kernel, with the tiles kept as rings
# (PMPP §12.7), as described above. Keep, per array, the ring slot of the block's next key
# (`a_head`) and how many keys after it are in the ring (`a_have`); per tile, load
# `min(TILE, a_end − a) − a_have` new keys into slots `(a_head + a_have + x) % TILE`, add them to
# `a_have`, search and merge through the ring, then advance `a_head` by the keys consumed (mod
# `TILE`) and take them off `a_have`. You need a `co_rank_ring(k, R, r0, m, S, s0, n)` that reads
# `R[(r0 + i) % TILE]` and `S[(s0 + j) % TILE]`. The next cell checks it with the tiled merge's
# cases; time it with `ch12.measure({"circular (yours)": (merge_circular_kernel,
# ch12.speed_shape)})` on a GPU.

# %% nbgrader={"grade": false, "grade_id": "merge_circular_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
RING = TILE - 1      # TILE is a power of two: (x % TILE) == (x & RING)


@cuda.jit(device=True)
def co_rank_ring(k, R, r0, m, S, s0, n):
    ### BEGIN SOLUTION
    lo = max(0, k - n)
    hi = min(k, m)
    while lo < hi:
        i = (lo + hi) // 2
        if R[(r0 + i) & RING] <= S[(s0 + k - i - 1) & RING]:
            lo = i + 1
        else:
            hi = i
    return lo
    ### END SOLUTION


@cuda.jit
def merge_circular_kernel(A, B, C, src):
    ### BEGIN SOLUTION
    sA = cuda.shared.array(TILE, float32)
    sB = cuda.shared.array(TILE, float32)
    m, n = A.size, B.size
    t, nt = cuda.threadIdx.x, cuda.blockDim.x
    per = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
    k = min(cuda.blockIdx.x * per, m + n)
    k_end = min(k + per, m + n)
    a = co_rank(k, A, m, B, n)
    a_end = co_rank(k_end, A, m, B, n)
    b = k - a
    b_end = k_end - a_end
    a_head = 0
    a_have = 0
    b_head = 0
    b_have = 0
    vt = (TILE + nt - 1) // nt
    while k < k_end:
        a_load = min(TILE, a_end - a) - a_have       # only what the last tile consumed
        b_load = min(TILE, b_end - b) - b_have
        for x in range(t, a_load, nt):
            sA[(a_head + a_have + x) & RING] = A[a + a_have + x]
        for x in range(t, b_load, nt):
            sB[(b_head + b_have + x) & RING] = B[b + b_have + x]
        cuda.syncthreads()
        a_have += a_load
        b_have += b_load
        out = min(TILE, k_end - k)
        lo = min(t * vt, out)
        hi = min(lo + vt, out)
        i = co_rank_ring(lo, sA, a_head, a_have, sB, b_head, b_have)
        i_end = co_rank_ring(hi, sA, a_head, a_have, sB, b_head, b_have)
        j = lo - i
        j_end = hi - i_end
        for q in range(k + lo, k + hi):
            if j >= j_end or (i < i_end and sA[(a_head + i) & RING] <= sB[(b_head + j) & RING]):
                C[q] = sA[(a_head + i) & RING]
                src[q] = a + i
                i += 1
            else:
                C[q] = sB[(b_head + j) & RING]
                src[q] = m + b + j
                j += 1
        used = co_rank_ring(out, sA, a_head, a_have, sB, b_head, b_have)
        cuda.syncthreads()
        a += used
        a_head = (a_head + used) & RING
        a_have -= used
        b += out - used
        b_head = (b_head + out - used) & RING
        b_have -= out - used
        k += out
    ### END SOLUTION


# %%
ch12.merge_tiled.check(merge_circular_kernel)

# %% [markdown]
# Questions to answer for yourself (not graded):
# 1. Each block of the tiled kernel calls co-rank on global memory twice. Neighbouring blocks
#    search for the same split point (one block's end is the next one's start). How would you
#    find each split point once, for all blocks, before the merge starts? What does it cost?
# 2. The basic kernel with 16 outputs per thread makes two searches per 16 outputs. Thread `t`'s
#    end is thread `t + 1`'s start: how could a block share those searches through shared memory,
#    and how many searches per thread would remain?
# 3. In the tiled kernel every thread computes `used = co_rank(out, sA, na, sB, nb)`, the same
#    value. Which thread already knows it, and what would it take to let only that thread compute
#    it?
# 4. A merge sort of `N` keys merges sorted runs of length 1, 2, 4, … : `log2(N)` passes, each a
#    merge of all the keys. With this chapter's numbers, how long would a merge sort of 2²⁸ keys
#    take on your GPU, and how does that compare with `cupy.sort`? (Chapter 13 is about sorting.)
#
# ## Going further
# - PMPP ch. 12: §12.1 (background), §12.2 (the sequential merge), §12.3 (the parallelization
#   approach: output ranges and co-rank), §12.4 (the co-rank function), §12.5 (a basic parallel
#   merge kernel), §12.6 (a tiled merge kernel to improve coalescing), §12.7 (a circular buffer
#   merge kernel), §12.8 (thread coarsening for merge); ch. 13 (sorting) builds merge sort and
#   radix sort on this chapter and on chapter 11's scan.
# - Merge path (Green, McColl and Bader, 2012; Odeh et al., 2012) is the picture above made an
#   algorithm: partition the output along diagonals, search each diagonal once. NVIDIA's CUB
#   (`cub::DeviceMerge`) and the ModernGPU library merge with it, each block loading exactly the
#   keys of its own segment, found by a separate partitioning pass.
# - GPU MODE lecture 8 (CUDA performance checklist: coalescing, thread coarsening) and the
#   lectures on scan and sorting.
# - **On AMD (HIP):** shared memory is the **LDS** (64 KB per compute unit on the MI200 and MI300
#   series) and a wavefront has 64 lanes on these data-centre GPUs, so the basic kernel's
#   uncoalesced loads span 64 ranges per instruction, not 32. numba-hip keeps the same
#   `cuda.shared.array`, `cuda.syncthreads()` and `cuda.jit(device=True)`; measure before you
#   assume the tiled kernel's second loads are as cheap as on the H200.
