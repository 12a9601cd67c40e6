# %% [markdown]
# # Chapter 10 · Reduction: trees in shared memory, warp shuffles, one atomic per block
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 10.
#
# **Before you start:** chapters 1–6 and 9 (atomic operations). **Time:** about 4 hours, reading and
# exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Sum an array of any length on a GPU with a **reduction tree in shared memory**: each block
#   sums its own segment in log₂ steps and adds its result to the total with **one atomic**. You
#   will see, step by step and warp by warp, why the order in which threads pair up values
#   decides how many warps **diverge** and how many shared-memory **bank conflicts** the tree
#   pays (PMPP §10.3–10.5), and fix both.
# - Replace the shared-memory steps inside a warp with **warp shuffles** (`cuda.shfl_down_sync`),
#   written so that the same kernel is right on NVIDIA's 32-lane warps and on AMD's 64-lane
#   wavefronts.
# - Write the fast version: every thread first adds up many elements on its own (**grid-stride
#   accumulation**, PMPP §10.8's coarsening), then the block combines them with shuffles and makes
#   one atomic. Predict its time before measuring it, and compare each step of the book's
#   progression, from the first tree to `cupy.sum`, in GB/s against a copy of the same bytes.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32, uint64

ag.banner()
ch10 = ag.problems.ch10
WARP = ag.backend.warp_size      # 32 on NVIDIA, 64 on AMD; CPU mode: 32 (AAG_WARP_SIZE=64 for AMD)
print(f"warp size here: {WARP}")

# %% [markdown]
# ## The idea: a tree of additions
#
# A **reduction** combines all the elements of an array into one value with an operator: `+` for
# a sum, `max` for a maximum, `*`, `min`, logical and/or (PMPP §10.1). A loop does it in a chain:
# `acc = 0; acc += x[0]; acc += x[1]; …`, n additions, each waiting for the one before. On a GPU
# we want many additions at the same time, and an **associative** operator allows it: `(a + b) +
# (c + d)` gives the same result as `((a + b) + c) + d`, so we may add pairs first, then pairs of
# pairs, and so on. That is a **reduction tree** (§10.2): n values in log₂ n steps, each step
# halving the number of partial sums, n − 1 additions in all (as many as the loop: no extra work).
#
# On a GPU, a block puts its values in **shared memory** and its threads walk the tree together:
# in each step every active thread adds two slots, then all wait at `cuda.syncthreads()` so that
# the next step sees finished sums. **Which** thread adds **which** pair is a free choice, and it
# decides how the warps behave. Two choices, for 16 values and 8 threads (imagine warps of 4
# threads, colours by warp):

# %%
def draw_tree(ax, title, steps, n=16, warp=4):
    """steps: per step, a list of (thread, destination slot, source slot)."""
    colours = {0: "#3b6ea8", 1: "#e07b39"}
    rows = len(steps) + 1
    for i in range(n):
        ax.add_patch(plt.Rectangle((i + 0.1, rows - 1 + 0.1), 0.8, 0.8, facecolor="#cfd8e3"))
        ax.text(i + 0.5, rows - 0.5, f"x{i}", ha="center", va="center", fontsize=7)
    for k, step in enumerate(steps, start=1):
        y = rows - 1 - k
        active = {}
        for t, dst, src in step:
            ax.plot([dst + 0.5, dst + 0.5], [y + 1.1, y + 0.9], color="#444", lw=0.8)
            ax.plot([src + 0.5, dst + 0.5], [y + 1.1, y + 0.9], color="#444", lw=0.8)
            ax.add_patch(plt.Rectangle((dst + 0.1, y + 0.1), 0.8, 0.8,
                                       facecolor=colours[(t // warp) % 2]))
            ax.text(dst + 0.5, y + 0.5, f"t{t}", ha="center", va="center", color="white",
                    fontsize=7)
            active.setdefault(t // warp, []).append(t)
        words = []
        for w in range(8 // warp):
            k_on = len(active.get(w, []))
            state = "idle" if k_on == 0 else ("all lanes" if k_on == warp else
                                              f"{k_on} of {warp}: diverges")
            words.append(f"warp {w}: {state}")
        ax.text(n + 0.3, y + 0.5, "\n".join(words), va="center", fontsize=7)
    ax.set_xlim(0, n + 5.5)
    ax.set_ylim(0, rows)
    ax.axis("off")
    ax.set_title(title, fontsize=9)


interleaved = [[(t, 2 * t, 2 * t + s) for t in range(8) if t % s == 0] for s in (1, 2, 4, 8)]
convergent = [[(t, t, t + s) for t in range(s)] for s in (8, 4, 2, 1)]
fig, axes = plt.subplots(1, 2, figsize=(13, 3.6))
draw_tree(axes[0], "interleaved (PMPP §10.3): thread t owns slot 2t, strides 1, 2, 4, 8",
          interleaved)
draw_tree(axes[1], "convergent (PMPP §10.4): thread t owns slot t, strides 8, 4, 2, 1",
          convergent)
plt.tight_layout()
plt.show()

# %% [markdown]
# Read each picture top to bottom: a coloured box is a slot written in that step, by the thread
# named in it, from the two slots above it joined by lines. Both trees make the same number of
# additions in the same number of steps. The difference is in the warps:
#
# - **Interleaved** (left). In step 2 the active threads are 0, 2, 4, 6: *every* warp has some
#   lanes working and some idle, so every warp diverges, issues the instruction, and pays for it as
#   if all lanes worked. The active threads thin out *inside* every warp.
# - **Convergent** (right). The active threads are always the first ones: 0–7, then 0–3, then
#   0–1. Whole warps fall idle and are not scheduled at all; only once fewer threads than a warp
#   remain active does the last warp diverge.
#
# With 256 threads and real 32-lane warps, the interleaved tree keeps all 8 warps busy for 6 of its
# 9 steps, 55 warp-steps in all; the convergent one (after adding pairs while loading) keeps 4, 2,
# then 1 warp busy in its 8 steps, 12 warp-steps (you will see these counts below, recorded from
# real kernels).
#
# **Floating point is not quite associative.** Every fp32 addition rounds its result (to 24
# significant bits), so different trees give slightly different sums. What stays true is a bound:
# each rounding is off by at most a relative `u = 2⁻²⁴`, so if the longest chain of additions that
# any value passes through has `c` additions, the computed sum is within about `c · u · Σ|xᵢ|` of
# the exact one. A loop has `c = n − 1`; a tree has `c = log₂ n`. The course's checks compare your
# sum with the exact one (computed in float64) using that bound, with `c` the longest chain the
# exercise's algorithm can build: a correct kernel always passes, whatever order its blocks finish
# in, and a kernel that drops or doubles even one element fails (the test values are all between
# 4 and 6 times a random scale, so every element counts).
#
# ## The CPU baseline
#
# NumPy's `x.sum()` adds float32 values pairwise (a tree, in blocks of 8); a compiled loop
# (`numba.njit`) adds them in a chain. Both run on one core. Their times on 2²² values, and how
# far each lands from the exact sum:

# %%
import numba


@numba.njit(cache=False)
def sum_loop_f32(x):
    acc = np.float32(0)
    for i in range(x.size):
        acc += x[i]
    return acc


@numba.njit(cache=False)
def sum_loop_f64(x):
    acc = 0.0
    for i in range(x.size):
        acc += x[i]
    return acc


cpu_n = 1 << 22
x_cpu = ch10.make_values_fast(cpu_n, seed=1)
exact = ch10.exact_sum(x_cpu)
for label, fn in (("NumPy x.sum() (float32, pairwise)", lambda: x_cpu.sum()),
                  ("njit loop, float32 accumulator", lambda: sum_loop_f32(x_cpu)),
                  ("njit loop, float64 accumulator", lambda: sum_loop_f64(x_cpu))):
    stats = ag.timing.time_cpu(label, fn)
    got = float(fn())
    print(f"{label:36s} {stats.median_ms:7.2f} ms {4 * cpu_n / stats.median_ms / 1e6:6.2f} GB/s"
          f"   relative error {abs(got - exact) / exact:.1e}")

# %% [markdown]
# The float32 loop is off in the third significant digit, about 10⁵ times further than the
# pairwise sum. float32 keeps 24 significant bits: once the running sum is millions of times
# larger than the values it adds, the spacing between float32 numbers near the sum is a sizeable
# fraction of each value, and every addition rounds part of it away, along a chain of 4 million
# additions. The pairwise tree only ever adds partial sums of similar size. Trees are not only
# parallel, they are more accurate.
#
# ## The first kernels: a block sums its segment
#
# Give each block a **segment** of `2 · blockDim.x` consecutive values (PMPP §10.7: the segments
# together cover any length; the last one may stick out past the end). Each thread loads two of
# them into shared memory, the block runs the tree, and thread 0 adds the block's sum to the total
# with `cuda.atomic.add(out, 0, s[0])`: one atomic per block, and `out[0]` must be 0 before the
# launch. Here is the interleaved tree of the picture, for a segment (read it, you will write the
# other one):

# %%
BLOCK_MAX = 1024      # a block has at most 1024 threads
SEGMENT_MAX = 2 * BLOCK_MAX   # two values per thread (a shared array's size must be a constant)


@cuda.jit
def reduce_interleaved(x, out):
    s = cuda.shared.array(SEGMENT_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    start = 2 * T * cuda.blockIdx.x               # this block's segment: x[start : start + 2T]
    s[t] = x[start + t] if start + t < x.size else float32(0)            # 0 past the end:
    s[t + T] = x[start + T + t] if start + T + t < x.size else float32(0)  # it adds nothing
    cuda.syncthreads()
    stride = 1
    while stride <= T:
        if t % stride == 0:                       # thread t owns slot 2t
            s[2 * t] += s[2 * t + stride]
        cuda.syncthreads()                        # every thread, outside the if
        stride *= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


def segment_launch(n, threads=256):
    """(blocks, threads): one block per segment of 2 · threads values."""
    return (n + 2 * threads - 1) // (2 * threads), threads


x_demo = ch10.make_values(600, seed=2)     # small: CPU mode simulates every thread
d_out = cuda.to_device(np.zeros(1, np.float32))
blocks, threads = segment_launch(x_demo.size, 64)
reduce_interleaved[blocks, threads](cuda.to_device(x_demo), d_out)
print(f"{blocks} blocks of {threads} threads: sum = {d_out.copy_to_host()[0]:.7g}, "
      f"exact (float64) = {ch10.exact_sum(x_demo):.7g}")

# %% [markdown]
# Three things in it matter in every version:
#
# - **Zero for what is not there.** A thread whose element lies past the end stores 0 in its slot,
#   the neutral element of `+` (for a maximum it would be −∞). Leaving the slot unset would add
#   whatever the shared memory held before.
# - **The barrier is outside the `if`.** Every thread of the block must reach every
#   `cuda.syncthreads()`; a barrier inside `if t % stride == 0` would wait for threads that never
#   come (on a GPU, a hang or garbage).
# - **One atomic per block.** Blocks run in no fixed order and cannot wait for each other, so their
#   sums meet in `out[0]` through `cuda.atomic.add`. A plain `out[0] += s[0]` loses sums (chapter
#   9's read-modify-write race).
#
# **Bank conflicts.** Shared memory has 32 banks (chapter 6): the 4-byte word `w` lives in bank `w
# mod 32`, and a warp whose lanes touch different words of one bank waits for one pass per word.
# In the interleaved tree, thread `t` reads slots `2t` and `2t + stride`: the 32 threads of a warp
# touch every other word, two words in each of 16 banks, so the steps take two passes each until
# fewer than two threads per warp are left. A tempting fix for the divergence, packing the active
# threads together (`slot = 2 · stride · t`, active while `slot < 2T`), makes this worse: in step
# k the lanes touch words `2ᵏ` apart, and up to 16 of them land in one bank. PMPP §10.5 calls the
# global-memory form of this *memory divergence*; the convergent tree removes both problems at
# once, since in every step consecutive threads touch consecutive words.
#
# ## Exercise 10.1 · The convergent tree (3 points)
#
# Write `reduce_tree_kernel(x, out)`: `x` is a float32 device array of `n` values, `out` a float32
# array of one element that **arrives set to 0**. Block `b` sums the segment `x[2·T·b : 2·T·(b+1)]`
# (`T = cuda.blockDim.x`) and adds its sum to `out[0]` with `cuda.atomic.add`. Do it the
# convergent way (PMPP §10.4, §10.6):
#
# 1. `s = cuda.shared.array(BLOCK_MAX, float32)`, one slot per thread;
# 2. thread `t` adds its two elements `x[i]` and `x[i + T]` (`i = 2·T·b + t`) **while loading**,
#    each only if it exists (0 otherwise), and stores the sum in `s[t]`; barrier;
# 3. for `stride = T/2, T/4, …, 1`: threads `t < stride` do `s[t] += s[t + stride]`; barrier
#    after every step;
# 4. thread 0 adds `s[0]` to `out[0]` atomically.
#
# Roughly 15 lines.
#
# **How the check launches it.** `ceil(n / (2·64))` blocks of 64 threads (hidden tests: 32, 64,
# 128 or 256), so the last segment is partial.
#
# **What the check does.** Your `out[0]` is compared with the float64 sum; the allowed error is
# `γ_c · Σ|xᵢ|` with `c = 1 + log₂ T + blocks` (the addition while loading, the tree's steps, and
# the atomics, which may land in any order): a correct kernel always passes, a dropped element
# always fails. Inputs: 601 values (5 blocks), 100 (fewer than one segment), 1; hidden: other
# sizes and block sizes. In CPU mode the course watches every access to `s` and to `out`: a
# missing barrier or a plain `out[0] += …` stops the launch with a message naming both threads and
# lines. When a sum is wrong, the verdict says what it usually means (half of each segment, one
# block's sum, the last element, …).

# %% nbgrader={"grade": false, "grade_id": "reduce_tree_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
BLOCK_MAX = 1024      # a block has at most 1024 threads


@cuda.jit
def reduce_tree_kernel(x, out):
    ### BEGIN SOLUTION
    s = cuda.shared.array(BLOCK_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    i = 2 * T * cuda.blockIdx.x + t
    v = float32(0)
    if i < x.size:
        v = x[i]
    if i + T < x.size:
        v += x[i + T]                  # the first addition, during the load
    s[t] = v
    cuda.syncthreads()
    stride = T // 2
    while stride > 0:
        if t < stride:                 # the active threads are always the first ones
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])
    ### END SOLUTION


# %% [markdown]
# Try it on the same 600 values, 64 threads per block:

# %%
d_out = cuda.to_device(np.zeros(1, np.float32))
blocks, threads = segment_launch(x_demo.size, 64)
reduce_tree_kernel[blocks, threads](cuda.to_device(x_demo), d_out)
print(f"sum = {d_out.copy_to_host()[0]:.7g}, exact = {ch10.exact_sum(x_demo):.7g}")

# %% nbgrader={"grade": true, "grade_id": "reduce_tree_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch10.reduce_tree.check(reduce_tree_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch10.reduce_tree.check_hidden(reduce_tree_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Count it: what each step of a tree costs (works in CPU mode)
#
# `ch10.tree_profile(kernel, threads)` launches one block of a tree kernel with the course's
# recording of shared-memory accesses on, and reports for each step (each stretch between two
# barriers): how many threads wrote, how many warps had work, how many of those **diverged** (some
# lanes working, some not), and how many **passes** the warps' shared-memory accesses took (1 per
# access means no bank conflict). Below: the interleaved tree, the packed-threads variant, and
# your convergent tree, each with 256 threads (8 warps of 32).

# %%
@cuda.jit
def reduce_packed(x, out):
    # The interleaved tree with the active threads packed together: no divergence until fewer
    # than 32 threads work, but lane k touches slot 2·stride·k: bank conflicts.
    s = cuda.shared.array(SEGMENT_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    start = 2 * T * cuda.blockIdx.x
    s[t] = x[start + t] if start + t < x.size else float32(0)
    s[t + T] = x[start + T + t] if start + T + t < x.size else float32(0)
    cuda.syncthreads()
    stride = 1
    while stride <= T:
        slot = 2 * stride * t
        if slot < 2 * T:
            s[slot] += s[slot + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


trees = {"interleaved": reduce_interleaved, "packed threads": reduce_packed,
         "convergent (yours)": reduce_tree_kernel}
if ag.backend.is_gpu:
    print("On a GPU the accesses are not recorded: run this notebook in CPU mode "
          "(AAG_BACKEND=cpu) to see the tables, or read them in the solutions. Nsight Compute "
          "counts divergent branches and shared-memory bank conflicts on a real GPU.")
else:
    profiles = {}
    for label, kernel in trees.items():
        profiles[label] = ch10.tree_profile(kernel, 256, warp=32)
        rows = profiles[label]
        print(f"{label}: {sum(r['warps'] for r in rows[1:])} warp-steps, "
              f"{sum(r['passes'] for r in rows[1:])} passes in the tree's steps")
        print(ch10.profile_table(rows, 256 // 32) + "\n")

# %% [markdown]
# Read the three tables side by side:
#
# - **interleaved**: all 8 warps work through step 6, and from step 2 on every one of them
#   diverges; every access takes 2 passes (two words per bank) until only a few threads remain.
# - **packed threads**: whole warps retire, as they should, but the accesses take 2, 4, 8, 16
#   passes: at stride 8, lane k touches word 16·k, and the 32 lanes of a warp land in 2 banks.
#   Count the passes: exactly as many as the interleaved tree's. Packing the threads traded
#   divergent warps for conflicted accesses, and the shared memory does the same work.
# - **convergent**: warps retire (4, 2, 1 after the load), every access takes one pass, and only
#   the last 5 steps diverge.
#
# From step 3 on, everything happens inside one warp: six steps, each with a barrier for the whole
# block. That is what warp shuffles will replace.
#
# ## Break it: a tree without its barriers
#
# The kernel below is your kernel without the barrier inside the loop. **Predict before you
# run**: on a GPU, are its sums wrong every time, sometimes, or never? In CPU mode, what happens?

# %%
from autograder import SharedMemoryRace


@cuda.jit
def tree_no_barrier(x, out):
    s = cuda.shared.array(BLOCK_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    i = 2 * T * cuda.blockIdx.x + t
    v = float32(0)
    if i < x.size:
        v = x[i]
    if i + T < x.size:
        v += x[i + T]
    s[t] = v
    cuda.syncthreads()
    stride = T // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]      # may read a slot another warp has not finished
        stride //= 2                   # (no cuda.syncthreads() here)
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


n_break = (1 << 22) + 5 if ag.backend.is_gpu else 2000
x_break = ch10.make_values(n_break, seed=3)
exact_break = ch10.exact_sum(x_break)
d_x = cuda.to_device(x_break)
try:
    for attempt in range(3):
        d_out = cuda.to_device(np.zeros(1, np.float32))
        tree_no_barrier[segment_launch(n_break, 256)](d_x, d_out)
        got = float(d_out.copy_to_host()[0])
        print(f"run {attempt + 1}: sum off by {abs(got - exact_break) / exact_break:.2e} "
              f"(relative)")
except SharedMemoryRace as race:
    print("CPU mode stopped the launch:\n")
    print(str(race).replace(": thread", ":\nthread", 1))

# %% [markdown]
# On a GPU the warps of a block run in no fixed order: in step 2 thread 0 (warp 0) reads
# `s[64]`, which thread 64 (warp 2) writes in step 1, and nothing makes warp 0 wait for it. If
# warp 0 gets there first, it adds the old value and the block's sum misses a part. Whether a run
# shows it depends on the timing of the warps, which is why the result can be right on one run
# and wrong on the next. CPU mode does not depend on luck: it records which thread touched which
# slot between which barriers and stops at the first pair that conflicts.
#
# ## Coarsening: fewer blocks, more work each (PMPP §10.8)
#
# With one segment of 512 values per block of 256 threads, a sum of 2²⁸ values launches 524,288
# blocks. Each of them pays the whole tree: 8 steps with a barrier each, in which fewer and fewer
# threads work, and one atomic on the same address as every other block. **Coarsening** gives
# each block a longer segment, `2 · COARSE · T` values: every thread first adds `2 · COARSE`
# elements on its own (no barrier, no shared memory), then the block runs the same tree once. With
# `COARSE = 8` there are 8× fewer blocks, trees and atomics for the same data:

# %%
COARSE = 8


@cuda.jit
def reduce_coarsened(x, out):
    s = cuda.shared.array(BLOCK_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    start = 2 * COARSE * T * cuda.blockIdx.x
    acc = float32(0)
    for k in range(2 * COARSE):               # coalesced: lane t reads start + k·T + t
        i = start + k * T + t
        if i < x.size:
            acc += x[i]
    s[t] = acc
    cuda.syncthreads()
    stride = T // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


def coarsened_launch(n, threads=256):
    return (n + 2 * COARSE * threads - 1) // (2 * COARSE * threads), threads


d_out = cuda.to_device(np.zeros(1, np.float32))
blocks, threads = coarsened_launch(x_demo.size, 32)
reduce_coarsened[blocks, threads](cuda.to_device(x_demo), d_out)
print(f"coarsened: {blocks} block{'s' * (blocks != 1)} of {threads} threads for {x_demo.size} "
      f"values, sum = {d_out.copy_to_host()[0]:.7g}, exact = {ch10.exact_sum(x_demo):.7g}")

# %% [markdown]
# Taken to its end, coarsening launches only as many blocks as the GPU holds at once and lets
# each thread walk the data with a **grid stride** (chapter 2): `for i in range(cuda.grid(1),
# x.size, cuda.gridsize(1))`. Every thread then makes one running sum of `n / (blocks · threads)`
# elements, the loads of a warp stay coalesced, and the whole launch pays a few hundred trees and
# atomics instead of half a million. The remaining tree is then a small part of the time, and the
# next section makes it cheaper still.
#
# ## Warp shuffles: a tree in registers
#
# The last steps of the convergent tree run inside one warp: 32 partial sums, then 16, 8, 4, 2, 1,
# each step a shared-memory load, an add, a store and a barrier for the whole block. The
# lanes of a warp can instead exchange registers directly: `cuda.shfl_down_sync(mask, v, d)`
# returns to each lane the value `v` of the lane `d` places above it (a lane whose partner would
# be past the end of the warp gets its own value back). Adding that to `v` with `d = 16, 8, 4, 2,
# 1` leaves the warp's sum in lane 0, with no shared memory and no barrier:

# %%
lanes, values = 8, np.arange(1, 9)
fig, ax = plt.subplots(figsize=(9, 2.8))
state = values.astype(float)
for row, d in enumerate((None, 4, 2, 1)):
    y = 3 - row
    if d is not None:
        new = state.copy()
        for lane in range(lanes):
            if lane + d < lanes:
                new[lane] = state[lane] + state[lane + d]
                colour = "#3b6ea8" if lane < d else "#b9c9dc"
                ax.annotate("", xy=(lane + 0.5, y + 0.85), xytext=(lane + d + 0.5, y + 1.15),
                            arrowprops=dict(arrowstyle="->", color=colour, lw=0.9))
        state = new
    for lane in range(lanes):
        useful = d is None or lane < d
        ax.add_patch(plt.Rectangle((lane + 0.1, y + 0.15), 0.8, 0.7,
                                   facecolor="#cfe0f3" if useful else "#eeeeee"))
        ax.text(lane + 0.5, y + 0.5, f"{state[lane]:g}", ha="center", va="center", fontsize=8)
    ax.text(lanes + 0.2, y + 0.5, "lanes' values" if d is None else
            f"v += shfl_down_sync(mask, v, {d})", va="center", fontsize=8)
ax.set_xticks([k + 0.5 for k in range(lanes)], [f"lane {k}" for k in range(lanes)], fontsize=7)
ax.set_yticks([])
ax.set_xlim(0, lanes + 4.5)
ax.set_ylim(0, 4)
ax.set_title("a warp of 8 lanes sums its registers: lane 0 ends with 36 (grey: results nobody "
             "uses)", fontsize=9)
for side in ("top", "right", "left"):
    ax.spines[side].set_visible(False)
plt.show()

# %% [markdown]
# Three rules make a shuffle correct:
#
# - **Every lane named in the mask must call it.** The mask says which lanes take part; lanes
#   that skipped the call (an early `return`, an `if i < n:` around it) leave their partners
#   reading nothing defined. So lanes with no element still take part, with the value 0.
# - **The mask names the whole warp, built from the warp size.** `~uint64(0) >> (64 -
#   cuda.warpsize)` keeps `cuda.warpsize` one-bits: `0xffffffff` on NVIDIA, 64 bits on AMD (Numba
#   passes a shuffle the low 32 bits of its mask). A literal `0xffffffff` names only 32 lanes;
#   `(1 << cuda.warpsize) - 1` shifts a 64-bit integer by its full width at warp size 64, which
#   compiled code leaves undefined. **Not `cuda.activemask()`:** it reports the lanes that happen
#   to be converged at that instant (CUDA C++ Programming Guide, *warp vote functions*), not the
#   lanes that must take part. Since Volta, a warp's lanes may run apart, so a sum over that mask
#   can silently be partial (NVIDIA's blog post "Using CUDA Warp-Level Primitives" shows this very
#   bug). A GPU usually hands it the whole warp, so the bug hides; CPU mode splits the warp on
#   purpose and stops such a shuffle, naming the lane and the mask. If only some lanes should take
#   part, vote for the mask before the branch, with every lane: `cuda.ballot_sync(full, i < n)`,
#   `full` being the whole-warp mask.
# - **The warp size is `cuda.warpsize`.** AMD's data-centre GPUs run **wavefronts of 64 lanes**.
#   A kernel that starts its offsets at 16, or finds its lane with `% 32`, sums only half of each
#   wavefront there. Start at `cuda.warpsize // 2`, use `cuda.threadIdx.x % cuda.warpsize` (or
#   `cuda.laneid`), and the same kernel is right on both.
#
# ## Exercise 10.2 · The sum of every warp, for any warp size (3 points)
#
# Write `warp_sums_kernel(x, sums)`: one thread per element (`i = cuda.grid(1)`; its value is
# `x[i]`, or 0 if `i ≥ n`), and each warp adds up its lanes' values with shuffles; lane 0 of warp
# `w = i // cuda.warpsize` writes the sum to `sums[w]`. `sums` has `ceil(n / warpsize)` elements,
# so the last warp is usually **partial** (some of its lanes have no element) and still writes its
# sum. No literal 32 anywhere: `cuda.warpsize`, and a mask built from it that names the whole warp.
# Roughly 10 lines.
#
# **How the check launches it.** `ceil(n / 64)` blocks of 64 threads (hidden: 64, 128 or 256), all
# multiples of 64, so every block holds whole warps at both warp sizes.
#
# **What the check does.** Each `sums[w]` is compared with the float64 sum of its warp's elements,
# allowing `γ_c · Σ|xᵢ|` with `c = log₂(warpsize)` (a tree of shuffles). Inputs: 501 values, 70
# (three warps, the last with 6 elements), 1. **The hidden tests run your kernel at warp size 32
# and at warp size 64** wherever they run in CPU mode (the course's simulator can run any warp
# size), so a kernel that assumes 32 anywhere fails there. On a GPU only its own warp size can
# run: the hidden check then says that it checked only that one. In CPU mode the simulator also
# stops a shuffle whose mask leaves out a lane that calls it, or whose mask came from
# `cuda.activemask()` and leaves out the lane it reads, and names the lanes.

# %% nbgrader={"grade": false, "grade_id": "warp_sums_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def warp_sums_kernel(x, sums):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    v = float32(0)
    if i < x.size:
        v = x[i]                           # lanes past the end take part with 0
    mask = ~uint64(0) >> (64 - cuda.warpsize)   # every lane of the warp: 32 or 64 one-bits
    offset = cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_down_sync(mask, v, offset)
        offset //= 2
    w = i // cuda.warpsize
    if i % cuda.warpsize == 0 and w < sums.size:
        sums[w] = v
    ### END SOLUTION


# %% [markdown]
# Try it on 70 values; in CPU mode, also at warp size 64 (`ag.cpu_mode.warp_size_as(64)` runs the
# launches inside it with wavefronts of 64 lanes):

# %%
x70 = ch10.make_values(70, seed=4)
for warp in ((WARP,) if ag.backend.is_gpu else (32, 64)):
    m = (x70.size + warp - 1) // warp
    d_sums = cuda.to_device(np.full(m, np.nan, np.float32))
    with ch10.at_warp_size(warp):
        warp_sums_kernel[(x70.size + 63) // 64, 64](cuda.to_device(x70), d_sums)
    expected = [x70[k * warp:(k + 1) * warp].sum(dtype=np.float64) for k in range(m)]
    print(f"warp size {warp}: sums {np.round(d_sums.copy_to_host(), 4)}, "
          f"expected {np.round(expected, 4)}")

# %% nbgrader={"grade": true, "grade_id": "warp_sums_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch10.warp_sums.check(warp_sums_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch10.warp_sums.check_hidden(warp_sums_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 10.3 · The fast sum: grid stride, shuffles, one atomic per block (3 points + 2 for speed)
#
# Put the pieces together in `reduce_sum_kernel(x, out)` (`out[0]` arrives set to 0):
#
# 1. **Accumulate.** Each thread adds up the elements `i = cuda.grid(1), i + cuda.gridsize(1),
#    …` below `x.size` into a float32 running sum: a grid-stride loop, so any grid covers any `n`.
# 2. **Inside each warp**, add up the lanes' sums with shuffles, as in 10.2; lane 0 of warp `w`
#    (`w = cuda.threadIdx.x // cuda.warpsize`) stores it in `partials[w]`, with `partials =
#    cuda.shared.array(MAX_WARPS, float32)`; barrier.
# 3. **Across the warps**: the first warp loads `partials[lane]` (0 for `lane ≥` the number of
#    warps in the block), adds them up with shuffles, and its lane 0 adds the block's sum to
#    `out[0]` with `cuda.atomic.add`: one atomic per block.
#
# Roughly 25 lines. This exercise is graded at your device's warp size (32 in CPU mode, unless
# `AAG_WARP_SIZE=64`): `cuda.warpsize` costs nothing and keeps the kernel portable, but NVIDIA
# code that assumes 32 is accepted here.
#
# **Making it fast.** A sum reads every byte once and does one addition per 4 bytes: it is bound
# by memory bandwidth, and what matters is keeping enough loads **in flight**. A thread whose loop
# issues one load, waits for it, adds, and issues the next, keeps one load of 4 bytes in flight;
# memory has a latency of several hundred nanoseconds. Two remedies: more threads (the grid), and
# more independent loads per thread: unroll the loop by four, `a0 += x[i]`, `a1 += x[i + stride]`,
# `a2 += x[i + 2·stride]`, `a3 += x[i + 3·stride]`, `i += 4·stride`, with four separate
# accumulators so that no addition waits for another, then a plain loop for the rest, and `v =
# (a0 + a1) + (a2 + a3)`. (Numba's compiler often unrolls a simple loop by itself; measure both.)
# The course's reference goes one step further: it reads the float32 array as 8-byte pairs (half
# as many load instructions); its source is `ch10.reference_sum` in
# `autograder/problems/ch10/references.py`.
#
# **How the check launches it.** Two to four blocks of 128 threads (hidden: 64, 128 or 256) for up
# to 3000 values: every thread loops. **What the check does**: the float64 sum, with the allowed
# error `γ_c · Σ|xᵢ|`, `c = k + 3 + log₂ W + T/W + blocks`, where `k = ceil(n / (blocks · T))` is
# the most elements one thread adds (+3 for wider loads), `log₂ W` the shuffles, `T/W` the warps'
# partial sums (a tree or a loop), `blocks` the atomics. Inputs: 3001 values, 100, 1; hidden: other
# sizes and block sizes. **The speed test** (on a GPU) times it on 2²⁸ values (1 GiB) with 4
# blocks of 256 threads per SM, against the course's reference and a compiled CPU loop: you need
# at least half of the reference's speed and 20× the loop's. In CPU mode it says it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "reduce_sum_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
MAX_WARPS = 32        # at most 1024 threads per block: 32 warps of 32 (16 wavefronts of 64)


@cuda.jit
def reduce_sum_kernel(x, out):
    ### BEGIN SOLUTION
    partials = cuda.shared.array(MAX_WARPS, float32)
    n = x.size
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    a0 = float32(0)                       # four independent sums: four loads in flight
    a1 = float32(0)
    a2 = float32(0)
    a3 = float32(0)
    while i + 3 * stride < n:
        a0 += x[i]
        a1 += x[i + stride]
        a2 += x[i + 2 * stride]
        a3 += x[i + 3 * stride]
        i += 4 * stride
    while i < n:
        a0 += x[i]
        i += stride
    v = (a0 + a1) + (a2 + a3)
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = cuda.threadIdx.x // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)    # every lane of the warp
    offset = cuda.warpsize // 2
    while offset > 0:                     # 1. inside each warp
        v += cuda.shfl_down_sync(mask, v, offset)
        offset //= 2
    if lane == 0:
        partials[warp] = v
    cuda.syncthreads()
    if warp == 0:                         # 2. across the warps
        warps = (cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize
        v = partials[lane] if lane < warps else float32(0)
        offset = cuda.warpsize // 2
        while offset > 0:
            v += cuda.shfl_down_sync(mask, v, offset)
            offset //= 2
        if lane == 0:
            cuda.atomic.add(out, 0, v)        # 3. one atomic per block
    ### END SOLUTION


# %% [markdown]
# Try it with 2 blocks of 64 threads on the 600 values (about 5 elements per thread):

# %%
d_out = cuda.to_device(np.zeros(1, np.float32))
reduce_sum_kernel[2, 64](cuda.to_device(x_demo), d_out)
print(f"sum = {d_out.copy_to_host()[0]:.7g}, exact = {ch10.exact_sum(x_demo):.7g}")

# %% nbgrader={"grade": true, "grade_id": "reduce_sum_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch10.reduce_sum.check(reduce_sum_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch10.reduce_sum.check_hidden(reduce_sum_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "reduce_sum_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch10.reduce_sum.check_speed(reduce_sum_kernel)

# %% [markdown]
# ## Predict: three ceilings on a reduction's time
#
# A sum of `n` float32 values, launched as `blocks` blocks of `threads` threads, cannot finish
# before the slowest of three things is done:
#
# 1. **reading the values** (4 bytes each) through a memory bus of `bandwidth` bytes per second;
# 2. **the trees**: the GPU holds `resident_blocks` blocks at once, so the blocks run in waves,
#    one after another, and a block's tree is `log₂(threads)` dependent steps of `step_time` each
#    (a shared-memory load, an add, a store and a barrier); a last wave that is only partly full
#    still takes a whole tree;
# 3. **the atomics**: one per block, all on `out[0]`; updates of one address are served one after
#    another, `atomic_rate` per second (chapter 9's model of atomics on one address).
#
# Each is a number of seconds you can write down from its description; the time is at least the
# largest of the three.
#
# Use these figures for an H200-like device. They are **round numbers chosen for this exercise,
# not measurements** (the bandwidth is the H200's advertised 4.8 TB/s); comparing the bounds they
# give with measured times, afterwards, tells you how good they are. The atomic rate is chapter 9's
# round figure for one global address.
#
# | bandwidth | resident_blocks (blocks of 256) | step_time | atomic_rate (one address) |
# |---|---|---|---|
# | 4.8 × 10¹² B/s | 1056 (132 SMs × 8) | 40 ns | 5 × 10⁸ per s |
#
# ## Exercise 10.4 · A bound on a reduction's time (2 points)
#
# Write `reduce_time_bound(n, blocks, threads, resident_blocks, bandwidth, step_time,
# atomic_rate)`: `n`, `blocks`, `threads` (a power of two) and `resident_blocks` are Python ints,
# the others Python floats (bytes per second, seconds, per second). Return the bound described
# above, in **seconds**, as a float: write each ceiling from its description first. Roughly 5
# lines.
#
# **Predict first, by hand** (then let your function check you), for 2²⁸ values and 256 threads
# per block: the segment kernels of 10.1 (one block per 512 values: 524,288 blocks); the
# coarsened kernel (4096 values per block); and 10.3's grid-stride launch (4 blocks per SM, 528
# blocks). Which ceiling binds in each case, and how many milliseconds is each bound?
#
# **What the check does.** It calls your function on 8 sets of values (the first three are the
# cases above; then a slower memory, one value, random values) and the hidden tests on 200 random
# ones. Results are compared with the bound computed in float64, allowing a few roundings: any
# algebraically equal formula passes; a number rounded by hand does not.

# %% nbgrader={"grade": false, "grade_id": "reduce_time_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
import math


def reduce_time_bound(n, blocks, threads, resident_blocks, bandwidth, step_time, atomic_rate):
    """Seconds a sum of n float32 values needs at least: the slowest of three ceilings."""
    ### BEGIN SOLUTION
    reading = 4 * n / bandwidth
    waves = math.ceil(blocks / resident_blocks)
    trees = waves * math.log2(threads) * step_time
    atomics = blocks / atomic_rate
    return max(reading, trees, atomics)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "reduce_time_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch10.reduce_time_bound.check(reduce_time_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch10.reduce_time_bound.check_hidden(reduce_time_bound)
### END HIDDEN TESTS

# %% [markdown]
# ## Measure it: the book's progression, step by step (on a GPU)
#
# The cell below times every step on 2²⁸ values (1 GiB), each with its own launch, beside
# `cupy.sum` (CUB's reduction, if CuPy is installed) and a device-to-device copy of the same
# bytes (the practical bandwidth ceiling), checks every result, and prints your bound for each.
# Blocks of 256 threads throughout. In CPU mode it prints the bounds and says why it cannot time.

# %%
n_measure = 1 << 28
figures = dict(resident_blocks=1056, bandwidth=4.8e12, step_time=40e-9, atomic_rate=5e8)
# 10.3's speed launch: 4 blocks of 256 threads per SM (528 blocks on the chapter's 132 SMs)
grid_stride_launch = ch10.speed_shape if ag.backend.is_gpu else (lambda n: (4 * 132, 256))
steps = {
    "1 interleaved, divergent": (reduce_interleaved, segment_launch),
    "2 interleaved, packed (bank conflicts)": (reduce_packed, segment_launch),
    "3 convergent (yours, 10.1)": (reduce_tree_kernel, segment_launch),
    f"4 convergent, coarsened ×{COARSE}": (reduce_coarsened, coarsened_launch),
    "5 shuffles (yours, 10.3), 4096 per block": (reduce_sum_kernel,
                                                 lambda n: ((n + 4095) // 4096, 256)),
    "6 shuffles, grid stride (yours, 10.3)": (reduce_sum_kernel, grid_stride_launch),
    "7 course reference (8-byte loads)": (ch10.reference_sum(), grid_stride_launch),
}
bounds = {label: reduce_time_bound(n_measure, shape(n_measure)[0], 256, **figures)
          for label, (kernel, shape) in steps.items()}
print(f"{'step':42s} {'blocks':>8s} {'bound':>10s}")
for label, (kernel, shape) in steps.items():
    print(f"{label:42s} {shape(n_measure)[0]:8d} {bounds[label] * 1e3:8.3f} ms")
try:
    rows = ch10.measure(steps, n=n_measure)
    ceiling = ag.timing.copy_ceiling(4 * n_measure)
    print()
    for r in rows:
        bound = bounds.get(r["label"])
        of_bound = f"{bound / (r['ms'] * 1e-3):6.0%} of the bound's speed" if bound else ""
        print(f"{r['label']:42s} {r['ms']:8.3f} ms {r['gbps']:7.0f} GB/s "
              f"({r['gbps'] / ceiling.gbps:4.0%} of a copy) {of_bound}"
              + ("" if r["right"] else "  WRONG"))
    print(f"copy ceiling: {ceiling.gbps:.0f} GB/s ({ceiling.label})")
    ch10.plot_measurements(rows, ceiling.gbps, f"Sums of 2^28 float32 values on {ag.backend.label}")
    plt.show()
except ag.timing.NeedsGPU as why:
    print("\n" + str(why))
    print("\nOn the course's H200 (one run, 2^28 values): steps 1 to 7 took 2.687, 1.229, 1.073, "
          "0.286, 0.292, 0.327 and 0.250 ms (400, 874, 1000, 3759, 3680, 3287 and 4289 GB/s); "
          "cupy.sum 0.243 ms (4412 GB/s); a copy of the same bytes 0.255 ms.")

# %% [markdown]
# ## Explain the gap (2 points, graded by your instructor)
#
# Compare the bounds with what you measured (on a GPU; without one, use the course's H200 figures
# in `docs/benchmarks.md`). In the cell below, in 5 to 10 sentences:
#
# 1. for steps 3 (convergent, one segment per block), 4 (coarsened) and 6 (grid stride), say which
#    ceiling the model says binds and how far the measurement is from it;
# 2. explain the largest gap between two steps of the progression: which measurement shows that
#    the atomics, the trees, or the loads in flight were (or were not) what limited a step;
# 3. say which figure of the table you would correct, in which direction, from your measurements,
#    and what the last gap, between the grid-stride kernels and `cupy.sum`, tells you.
#
# A full-mark answer gets the binding ceiling right in the three cases, uses measured numbers
# (yours or the course's), and ties each cause to a measurement rather than listing causes.

# %% [markdown] nbgrader={"grade": true, "grade_id": "reduction_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only), with the course's H200 figures (2²⁸ values, 1 GiB).* The
# model says the atomics bind for the segment kernels (524,288 atomics at 5 × 10⁸ per second:
# 1.05 ms, against 0.22 ms of reading and 0.16 ms of trees), and reading binds for the coarsened
# kernel (0.22 ms; its 65,536 atomics would take 0.13 ms) and for the grid-stride launch (0.22 ms).
# Measured on the H200 by this chapter's cells: the convergent segment kernel took 1.073 ms, the
# coarsened one 0.286 ms, the grid-stride kernel 0.327 ms, the reference 0.250 ms, `cupy.sum`
# 0.243 ms and a copy of the same bytes 0.255 ms. Step 3 lands on its atomic bound (1.073 against
# 1.05 ms), but the atomics are not why: steps 1 to 3, with the same 524,288 blocks, atomics and
# reads, took 2.687, 1.229 and 1.073 ms, and chapter 9 measured one global address on this GPU
# taking at least 4 × 10¹⁰ updates per second, 80 times the table's rate (its section "Atomics on
# one address"). The trees and barriers, paid 524,288 times, are what the segment kernels pay for.
# The largest gap in speed, 3.75× between steps 3 and 4 (1.073 to 0.286 ms), comes from doing 8×
# fewer blocks for the same bytes: 8× fewer trees, barriers and atomics, with the same loads,
# which shows that the per-block costs, not the reading, limited the segment kernels. Steps 4 to 6
# are all bound by reading in the model, and their differences (3759, 3680 and 3287 GB/s: 89%, 87%
# and 78% of the copy of the same bytes) come from what the model leaves out: how many loads each
# thread keeps in flight, and how many threads there are to hide the memory's latency. The
# remaining gap to `cupy.sum`, which reads at 4412 GB/s, 105% of that copy, is the same kind of
# thing: CUB loads 16 bytes per instruction and many per thread; the reference's 8-byte loads
# close most of it (4289 GB/s; 97% of `cupy.sum`'s speed, 0.250 against 0.243 ms). I would raise
# the atomic rate to chapter 9's measured figure, raise the step time (the model gives steps 1 to 3
# the same 0.16 ms of trees, yet they differ by 1.6 ms), and lower the bandwidth to what a kernel
# that only reads reached, about 4.4 TB/s (`cupy.sum`), rather than the advertised 4.8 TB/s.

# %% [markdown]
# Questions to answer for yourself (not graded):
# 1. A maximum instead of a sum: what replaces the 0 stored by threads past the end, and what
#    replaces `cuda.atomic.add`? (Numba has `cuda.atomic.max` for float32.)
# 2. Why does the convergent tree keep **loads** coalesced as well as avoiding divergence, when the
#    values are read from global memory instead of shared memory (PMPP §10.5)?
# 3. The grid-stride kernel's error bound grows with `n / (blocks · threads)`, the length of each
#    thread's running sum. For 2²⁸ values and 528 blocks of 256 threads, how long is that chain,
#    and how does its bound compare with the segment kernels'? Would four accumulators change it?
# 4. With `blocks` atomics on one address, a reduction's result depends on the order in which the
#    blocks arrive: run a sum twice on a GPU and compare the last bits. How would you make it
#    reproducible (hint: each block writes its sum to its own slot, and a second, tiny launch adds
#    the slots in a fixed order)?
#
# ## Going further
# - PMPP ch. 10: §10.1 (background), §10.2 (reduction trees), §10.3 (a simple reduction kernel),
#   §10.4 (minimizing control divergence), §10.5 (minimizing memory divergence), §10.6 (minimizing
#   global memory accesses: shared memory), §10.7 (hierarchical reduction for arbitrary input
#   length: segments and atomics), §10.8 (thread coarsening). Chapter 11 (prefix sum) builds on
#   the same trees.
# - Warp shuffles are not in PMPP's chapter: the CUDA C++ programming guide's *warp shuffle
#   functions* and *warp vote functions*, NVIDIA's blog post "Using CUDA Warp-Level Primitives"
#   (which masks are right, and why `__activemask()` is not one of them), and Numba's
#   `cuda.shfl_*_sync`, `cuda.ballot_sync`, `cuda.syncwarp`. Mark Harris's classic "Optimizing
#   Parallel Reduction in CUDA" walks through the same progression on older GPUs, where it ends by
#   unrolling the last warp; since Volta, such warp-synchronous code needs `cuda.syncwarp()` or
#   shuffles.
# - GPU MODE lecture 9 (reductions) and lecture 8 (CUDA performance checklist). CUB's
#   `DeviceReduce` (what `cupy.sum` runs) and its `BlockReduce`/`WarpReduce` building blocks.
# - **On AMD (HIP):** a wavefront has 64 lanes on the data-centre GPUs (CDNA) and 32 on recent
#   gaming ones (RDNA): read `cuda.warpsize`, and build masks from it (`~uint64(0) >> (64 -
#   cuda.warpsize)`: 64 bits there, where HIP's masks are 64-bit integers). Shared memory is the
#   **LDS**; it is banked too, so the convergent tree helps there in the same way. numba-hip keeps
#   the same names; which warp intrinsics it supports depends on its version (check with a small
#   kernel).
