# %% [markdown]
# # Chapter 21 · CUDA dynamic parallelism: work whose size the GPU finds
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 21.
#
# **Before you start:** chapters 1–6, 9 (atomic operations) and 11 (the scan). **Time:** about 3
# hours, reading and exercises included (more in CPU mode, where the simulator runs kernels
# slowly).
#
# ## What you will be able to do
# - Read the book's CUDA C++ for **dynamic parallelism** (a kernel that launches kernels), say
#   what it buys and what it costs, and say plainly why Numba CUDA cannot write it.
# - Build the same adaptive computation with launches from the host: **adaptive Bezier
#   tessellation** as a count per curve, a **scan** of the counts, and one kernel with a **block
#   per curve** in place of a child grid per curve; predict the work it saves over the flat version
#   and measure it.
# - Build a **quadtree** by **waves** the host launches (a count and a split per wave) in place of
#   a block that launches its four children, and say when a persistent kernel with a work queue
#   would be the better shape, and how such a kernel can hang.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import math

import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32, int32

ag.banner()
ch21 = ag.problems.ch21

# %% [markdown]
# ## The idea: a kernel that discovers work, and launches it
#
# Every kernel so far had its grid chosen by the host before it ran. Some problems only learn how
# much work there is **while** they run: a curve that bends sharply needs more points than a
# straight one, a region crowded with points needs a finer grid, a graph's next frontier is known
# only once the current one is explored. PMPP's chapter 21 shows CUDA's answer, **dynamic
# parallelism**: a thread of a kernel may launch a grid itself (a *child* grid), with the same
# `<<<blocks, threads>>>` syntax, sized by what it just computed.
#
# The book's first example is **adaptive tessellation of quadratic Bezier curves**. A
# curve is three control points `P0, P1, P2` (the curve starts at `P0`, ends at `P2`, and is pulled
# towards `P1`); its points are
#
# ```
# B(u) = (1 − u)²·P0 + 2u(1 − u)·P1 + u²·P2,     u from 0 to 1.
# ```
#
# Drawn with too few points, a bent curve looks like a polygon; drawn with many, a straight one
# wastes them. So each curve gets a count from its **curvature**, the distance of `P1` from the
# chord's midpoint over the chord's length:
#
# ```
# c = |P1 − (P0 + P2)/2| / |P2 − P0|,      count = min(max(int(16·c), 4), 32)
# ```
#
# and the curve's `count` points are `B(k / (count − 1))` for `k = 0 .. count − 1` (the first is
# `P0`, the last `P2`). Left, the curves with their own counts; right, every curve at 32 points:

# %%
curves = ch21.sample_curves()
ch21.show_tessellation(curves)
plt.tight_layout()
plt.show()

# %% [markdown]
# In CUDA C++ the book writes a **parent** kernel with a thread per curve: each thread computes its
# curve's count, allocates room for its points on the device heap, and launches a **child** grid
# with a thread per point. This is CUDA C++, shown as text (it needs `nvcc -rdc=true` and the
# device runtime library; it is not Python):

# %%
ch21.show_cuda("bezier")

# %% [markdown]
# **What Numba CUDA cannot do.** Numba CUDA compiles a Python function into a kernel, but it has
# no way to launch a kernel *from* a kernel: there is no `<<< >>>` inside `@cuda.jit` code, no
# device runtime (`cudaMalloc`, streams, tail launches on the device), no `-rdc` linking of a
# device runtime library. (HIP, on AMD GPUs, does not support launches from a kernel either.)
# Nothing in this notebook pretends otherwise: every launch here is made by the host.
#
# What Python **can** do is what production code mostly does anyway: turn the child launches
# into data. The parent's per-thread decision (how many points?) becomes an array of counts; the
# device heap becomes one buffer whose layout is an **exclusive scan** of the counts (curve `i`'s
# points start where curve `i − 1`'s end); the many small child grids become **one** grid with a
# block per curve. Three launches from the host instead of a million from the GPU, and no
# device-heap allocations at all.
#
# What a launch from the GPU costs, and where CUDA stops it, in the book's terms:

# %%
ch21.show_cuda("limits")

# %% [markdown]
# ## The CPU baseline
#
# A hundred thousand curves with their adaptive counts, tessellated on the host two ways: a loop
# compiled with `numba.njit` over the curves on every core (each curve's points where the running
# sum of the counts puts them), and NumPy, which finds each point's curve with a binary search
# over the offsets and evaluates the polynomial for all points at once.

# %%
why = ag.timing.not_measured("Timing the CPU tessellation", gpu=False)
if why:
    print(why)
cpu_results = [] if why else ch21.time_cpu()
for r in cpu_results:
    print(f"{r['label']:58s} {r['ms']:9.2f} ms  {r['points']:,} points"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# ## Exercise 21.1 · Each curve's count of points (2 points)
#
# The parent kernel's first job, without the launch. Write `tess_counts_kernel(cp, counts)`: one
# thread per curve, `i = blockIdx.x · blockDim.x + threadIdx.x`; threads past the last curve do
# nothing. `cp` is float32 `[n, 3, 2]`: `cp[i, 0]`, `cp[i, 1]`, `cp[i, 2]` are `P0`, `P1`, `P2`
# of curve `i`, each an `(x, y)` pair. Store into `counts[i]` (int32) the count of the formula
# above: 16 points per unit of curvature, truncated toward zero, at least 4, at most 32. Clamp
# before converting to an integer (a very bent curve has a huge curvature). `math.sqrt` gives the
# lengths. Roughly 10 lines.
#
# **What the check does.** Blocks of 32 threads (32, 64 and 128 in the hidden tests), `counts`
# filled with the most negative int32 before each run. Visible: 37 curves, 19 and 1; hidden: 150,
# 2 and two random counts. Curves have a random scale (10⁻³ to 10³) and centre, chords in every
# direction, curvatures from 0 to 2.4, so every count from 4 to 32 appears, the clamped ones too.
# Counts must be **exact**: no curve's `16·c` lies within 10⁻³ of a step between two counts, so a
# float32 curvature (a few units in the last place from the float64 one) rounds to the same count.

# %% nbgrader={"grade": false, "grade_id": "tess_counts_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
MAX_POINTS = 32


@cuda.jit
def tess_counts_kernel(cp, counts):
    ### BEGIN SOLUTION
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < cp.shape[0]:
        mx = cp[i, 1, 0] - float32(0.5) * (cp[i, 0, 0] + cp[i, 2, 0])
        my = cp[i, 1, 1] - float32(0.5) * (cp[i, 0, 1] + cp[i, 2, 1])
        cx = cp[i, 2, 0] - cp[i, 0, 0]
        cy = cp[i, 2, 1] - cp[i, 0, 1]
        c = math.sqrt(mx * mx + my * my) / math.sqrt(cx * cx + cy * cy)
        v = min(c * float32(16.0), float32(MAX_POINTS))
        counts[i] = max(int32(v), 4)
    ### END SOLUTION


# %% [markdown]
# Try it on 40 random curves:

# %%
got, expected = ch21.try_counts(tess_counts_kernel)
print("yours:   ", got[:16])
print("expected:", expected[:16])
print("all equal:", bool(np.array_equal(got, expected)))

# %% nbgrader={"grade": true, "grade_id": "tess_counts_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch21.tess_counts.check(tess_counts_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch21.tess_counts.check_hidden(tess_counts_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 21.2 · The child launch replaced: a scan, then a block per curve (3 points + 2 for speed)
#
# The book's parent thread launches a child grid for its curve's points. Here the host does it in
# two steps:
#
# 1. **Where each curve's points go.** All points live in one array `points` (float32
#    `[Σ counts, 2]`), curve after curve: curve `i`'s points start at `offset(i) = counts[0] + … +
#    counts[i − 1]` (and the first curve's at 0). That is an **exclusive scan** of the counts,
#    chapter 11's operation: the course hands you its scan of int32 arrays on the device,
#    `ag.problems.ch21.exclusive_scan(counts, offsets)` (you allocate `offsets`, int32, one per
#    curve, with `cuda.device_array`).
# 2. **One grid in place of a grid per curve.** A kernel launched with **one block per curve**
#    (`n` blocks of `threads` threads): block `b` handles curve `b`, its threads taking its points
#    `k = threadIdx.x, threadIdx.x + blockDim.x, …` below `counts[b]` (a curve may have more
#    points than the block has threads), and storing `B(u)` with `u = k / (counts[b] − 1)` at
#    `points[offset(b) + k]`.
#
# Write the kernel and the host function `tessellate(cp, counts, points, threads)` that runs both
# steps: `cp` float32 `[n, 3, 2]`, `counts` int32 `[n]` and `points` are device arrays; `threads`
# is the block size to use. Read nothing back to the host: every step runs on the device. Roughly
# 25 lines.
#
# **What the check does.** The counts are given (any counts from 4 to 32, not necessarily the
# curvature's: use the ones you are given); `points` filled with NaN. Blocks of 16 threads (8, 16
# and 32 hidden). Visible: 37 curves of 600 points in all, 19 curves of 4 points each, 5 curves of
# 32 points each (more points than a block has threads), 1 curve of 9. Hidden: 150 curves of 2,500
# points, 2 curves and two random shapes. **The tolerance.** Each coordinate within
# `32·u·(|P0| + 2|P1| + |P2|)` of the float64 polynomial (`u = 2⁻²⁴`): computing `u` in float32
# rounds it once, which moves the point by at most `|B′(u)|·u·2⁻²⁴ ≤ 2(|P0| + 2|P1| + |P2|)·2⁻²⁴`;
# the weights and the three products add a few tens of roundings of terms bounded by the same sum,
# in any of the usual forms (the Bernstein weights, the power form, de Casteljau's lerps). A wrong
# `u` (`k / count`), a point off by one, or a curve's points at the wrong offset miss by far more.
# In CPU mode the check also proves that your kernel stored every point and read every input, and
# that nothing was read back to the host.
#
# **The speed test** (on a GPU) tessellates a million curves into 12 million points with blocks of
# 32 threads, against the course's version (the same scan, then a block per curve) timed in the
# same run, and the compiled CPU loop on every core of the grading machine: you need at least 50%
# of the course's speed and twice the CPU's. Every timed call's points are checked at 4,096 samples.
# In CPU mode it says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "tessellate_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def tessellate_kernel(cp, counts, offsets, points):
    ### BEGIN SOLUTION
    b = cuda.blockIdx.x
    if b < cp.shape[0]:
        count = counts[b]
        start = offsets[b]
        last = float32(count - 1)
        for k in range(cuda.threadIdx.x, count, cuda.blockDim.x):
            u = float32(k) / last
            w = float32(1.0) - u
            b0 = w * w
            b1 = float32(2.0) * u * w
            b2 = u * u
            points[start + k, 0] = b0 * cp[b, 0, 0] + b1 * cp[b, 1, 0] + b2 * cp[b, 2, 0]
            points[start + k, 1] = b0 * cp[b, 0, 1] + b1 * cp[b, 1, 1] + b2 * cp[b, 2, 1]
    ### END SOLUTION


def tessellate(cp, counts, points, threads):
    ### BEGIN SOLUTION
    n = cp.shape[0]
    offsets = cuda.device_array(n, np.int32)
    ag.problems.ch21.exclusive_scan(counts, offsets)
    tessellate_kernel[n, threads](cp, counts, offsets, points)
    ### END SOLUTION


# %% [markdown]
# Try it on 12 curves with their curvature's counts (your Exercise 21.1 gives the same counts):

# %%
got, expected = ch21.try_tessellate(tessellate)
print(f"{len(got)} points; largest error: {float(np.nanmax(np.abs(got - expected))):.3g}, "
      f"points left NaN: {int(np.isnan(got).any(axis=1).sum())}")

# %% nbgrader={"grade": true, "grade_id": "tessellate_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch21.tessellate.check(tessellate)
### BEGIN HIDDEN TESTS
ag.problems.ch21.tessellate.check_hidden(tessellate)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "tessellate_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch21.tessellate.check_speed(tessellate)

# %% [markdown]
# ## Break it: one point per thread, and no loop
#
# The book's child grid has a thread per point, sized to the curve. A block per curve has a fixed
# number of threads, so the loop over `k` is what lets a block of 16 threads draw a curve of 32
# points. **Predict before you run:** the kernel below gives each thread one point and no loop.
# Which points stay NaN, for which curves, with blocks of 16?

# %%
@cuda.jit
def tessellate_no_loop(cp, counts, offsets, points):
    b = cuda.blockIdx.x
    k = cuda.threadIdx.x
    if b < cp.shape[0] and k < counts[b]:          # a curve of 20 points: 4 are never drawn
        u = float32(k) / float32(counts[b] - 1)
        w = float32(1.0) - u
        for c in range(2):
            points[offsets[b] + k, c] = (w * w * cp[b, 0, c] + float32(2.0) * u * w * cp[b, 1, c]
                                         + u * u * cp[b, 2, c])


def tessellate_broken(cp, counts, points, threads):
    offsets = cuda.device_array(cp.shape[0], np.int32)
    ag.problems.ch21.exclusive_scan(counts, offsets)
    tessellate_no_loop[cp.shape[0], threads](cp, counts, offsets, points)


try:
    ch21.tessellate.check(tessellate_broken)
except ag.CheckFailed as failure:
    print("the course's check:\n" + str(failure))

# %% [markdown]
# Every curve with more points than the block has threads loses its last ones: they stay NaN.
# Blocks of 32 threads would hide the bug (no count exceeds 32), and a GPU run at that size would
# look right: the check's blocks of 16 (8 and 32 hidden) are there to find it. The book's child
# grid avoids the problem by sizing itself to the count, `(n + 31) / 32` blocks of 32; a block per
# curve must loop instead.
#
# ## Predict, then measure: adaptive against flat
#
# The flat version draws every curve with 32 points: no counts, no scan, one kernel whose block
# `b` writes `points[32·b .. 32·b + 31]`. The adaptive one writes fewer points, but it runs three
# kernels (the counts, the scan, the tessellation) and reads the counts and offsets back in.
#
# **Predict first, by hand**, for a million curves like the check's (curvatures uniform from 0 to
# 2.4): what is the average count (how many curves are clamped at 4, how many at 32, and the mean
# of `int(16·c)` between)? How many bytes does each version move (24 bytes of control points per
# curve, 4 per count or offset, 8 per point written)? All of these kernels are memory bound: what
# speedup does that predict for the adaptive version, and what will the extra launches cost at
# that size? Then count on the 12 curves drawn above:

# %%
print(ch21.work_saved(curves))

# %% [markdown]
# On a GPU the next cell times a million curves each way: the flat version, the course's adaptive
# version (counts, scan, a block per curve), yours (your counts kernel and your `tessellate`),
# and the compiled CPU loop on every core. In CPU mode it says that it needs a GPU and draws what
# the course's kernels took on an H200.

# %%
try:
    results = ch21.measure(tessellate, tess_counts_kernel)
    for r in results:
        print(f"{r['label']:55s} {r['ms']:9.3f} ms {r['gbps']:8.1f} GB/s {r['points']:>12,} points"
              f"{'' if r['right'] else '   WRONG'}")
    ag.experiments.steps(**ch21.chart(results)).show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels:")
    ag.experiments.steps(**ch21.chart()).show()

# %% [markdown]
# ## A quadtree: recursion by waves
#
# The book's recursive example builds a **quadtree** over points in the plane: a square
# holding more than a few points splits into four quarters, each quarter that still holds too
# many splits again, and so on down to a depth limit. Crowded regions end up with small cells,
# empty ones with large cells. With dynamic parallelism it is a recursive kernel: a block per node
# counts its points per quadrant, moves them into place, and launches four child blocks for its
# quadrants. In CUDA C++ (abridged; text, not Python):

# %%
ch21.show_cuda("quadtree")

# %% [markdown]
# Without launches from the GPU, the recursion becomes a loop on the host over the **depth**: a
# **wave** per level of the tree, each wave handling every node of that level at once (a
# breadth-first build). Every point carries the name of the node it is in, a **locational code**:
# the root is 1, and child `q` of node `code` is `4·code + q`, where `q = qx + 2·qy` says which
# quarter (`qx = 1` for the right half, `qy = 1` for the top half). The root is the square
# `[0, 1)²`, so at depth `d` the halves are decided by the next bit of each coordinate:
# `qx = int(x · 2^(d+1)) & 1`, `qy = int(y · 2^(d+1)) & 1`. The codes of depth `d` are the numbers
# `4^d .. 2·4^d − 1`: a point whose code is at least `4^d` is still at depth `d` (its node split at
# every level so far); one whose code is smaller has found its leaf.
#
# Wave `d` (for `d = 0, 1, …, max_depth − 1`) is two kernels over all points:
#
# 1. **count**: every point still at depth `d` adds 1 to its node's counter, `table[code − 4^d]`
#    (an atomic add; a table of `4^d` counters, cleared before the wave);
# 2. **split**: every point still at depth `d` whose node holds **more than** `capacity` points
#    moves to its child: `code = 4·code + q`.
#
# After the last wave, every point's code is its **leaf**. No node at depth `max_depth` splits.
# The host never needs to know how many nodes split: a wave in which none does changes nothing.
# (A real build would read one flag back per wave and stop early, then sort the points by leaf
# code, chapter 13's radix sort, so each leaf's points are contiguous.)
#
# ## Exercise 21.3 · A quadtree built by waves (3 points)
#
# Write `build_quadtree(x, y, capacity, max_depth, leaf, table, threads)`: `x`, `y` float32
# `[n]` in `[0, 1)`, `leaf` int32 `[n]` and `table` int32 `[4^(max_depth − 1)]` (the counters, as
# many as the last wave needs) are device arrays, `capacity` and `max_depth` Python ints, `threads`
# the block size to use. Set every `leaf[i]` to 1 (`start_at_root`), then run the
# `max_depth` waves with the kernels below, a thread per point (`clear_table` clears the first `m`
# counters, `count_wave` and `split_wave` are the wave's two steps; `first` is `4^d`, `scale` is
# `2^(d+1)`), and leave in `leaf[i]` point `i`'s leaf, and in `table` the last wave's counts.
# Read nothing back to the host. Roughly 35 lines.
#
# **What the check does.** Blocks of 32 threads (32, 64 and 128 hidden). Points: a third uniform,
# the rest in a few clusters of random widths, and a run of identical points longer than
# `capacity` (a node that splits at every level down to `max_depth`), and a group of exactly
# `capacity` (a node that must not split); `capacity` from 1 to 8, `max_depth` from 3 to 5 (on a
# GPU, past 10,000 points, 4 to 32 and 7 to 10). Visible: 38, 100 and 1 point; hidden: 400, 2 and
# two random counts. The leaves and the last wave's counts must be exact. In CPU mode the check
# also proves that your kernels stored every leaf and read the coordinates of every point that
# moved, that nothing was read back to the host, and it watches every access to `leaf` and
# `table` during a launch: two threads that update the same counter without an atomic stop the
# launch with a race, naming both.

# %% nbgrader={"grade": false, "grade_id": "quadtree_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def start_at_root(leaf):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < leaf.size:
        leaf[i] = 1
    ### END SOLUTION


@cuda.jit
def clear_table(table, m):
    ### BEGIN SOLUTION
    j = cuda.grid(1)
    if j < m:
        table[j] = 0
    ### END SOLUTION


@cuda.jit
def count_wave(leaf, first, table):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < leaf.size and leaf[i] >= first:
        cuda.atomic.add(table, leaf[i] - first, 1)
    ### END SOLUTION


@cuda.jit
def split_wave(x, y, leaf, first, scale, capacity, table):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < leaf.size:
        code = leaf[i]
        if code >= first and table[code - first] > capacity:
            qx = int32(x[i] * scale) & 1
            qy = int32(y[i] * scale) & 1
            leaf[i] = 4 * code + qx + 2 * qy
    ### END SOLUTION


def build_quadtree(x, y, capacity, max_depth, leaf, table, threads):
    ### BEGIN SOLUTION
    n = leaf.size
    blocks = (n + threads - 1) // threads
    start_at_root[blocks, threads](leaf)
    for d in range(max_depth):
        first = 4 ** d
        clear_table[(first + threads - 1) // threads, threads](table, first)
        count_wave[blocks, threads](leaf, first, table)
        split_wave[blocks, threads](x, y, leaf, first, float(2 ** (d + 1)), capacity, table)
    ### END SOLUTION


# %% [markdown]
# Try it on 200 clustered points (capacity 4, depth at most 5), and look at the cells:

# %%
x, y, got, expected = ch21.try_quadtree(build_quadtree)
print("leaves equal:", bool(np.array_equal(got, expected)), " first leaves:", got[:8])
ch21.show_quadtree(x, y, got)
plt.show()

# %% nbgrader={"grade": true, "grade_id": "quadtree_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch21.quadtree.check(build_quadtree)
### BEGIN HIDDEN TESTS
ag.problems.ch21.quadtree.check_hidden(build_quadtree)
### END HIDDEN TESTS

# %% [markdown]
# ## The other shape: a persistent kernel with a work queue
#
# Waves pay for every level with launches over **all** points, even when only one small node is
# left to split. The other way to replace dynamic parallelism is a **persistent kernel**: one
# launch of as many blocks as the GPU can hold at once, each block looping: take a node from a
# queue in global memory (an atomic add on the queue's head), process it, append its children
# (an atomic add on the tail), until the queue is empty **and** nobody is still working. Numba can
# write this (atomics on global memory are all it needs); the catch is **forward progress**:
#
# - A block that finds the queue empty cannot simply stop: another block may be about to append
#   work. So it spins, re-reading the tail. If it spins waiting for work that a block **not yet
#   resident** on the GPU will produce, and that block can only start when a spinning block
#   finishes, the kernel hangs forever. CUDA promises nothing about the order or concurrency of
#   blocks beyond what fits on the GPU at once.
# - So the grid must be no larger than the number of blocks that can be resident at the same time
#   (the occupancy calculator's blocks per SM × SMs), and the kernel must know when everything is
#   finished: a counter of nodes still pending (added to before a child is appended, subtracted
#   from after a node is done), and every block leaves when it reads zero.
# - Spinning blocks read memory another block writes: the reads must see the writes (atomics, or
#   a memory fence after the writer's stores: `cuda.threadfence()`), or the spin never ends.
#
# On the simulator, which runs blocks one at a time, a kernel that spins on another block's work
# hangs every time; on a GPU it works or hangs depending on the grid size and the GPU. That is why
# this course grades the waves. The book's dynamic parallelism avoids the problem the same way the
# waves do: a child grid is a new launch, scheduled only when resources free up.
#
# ## Explain: predict, then measure (3 points, graded by your instructor)
#
# In the cell below, in 8 to 15 sentences, with numbers:
#
# 1. **your prediction** for a million curves: the average count, the points and the bytes of
#    each version, and the speedup of the adaptive one if all its kernels were memory bound;
# 2. **the measurement** (on a GPU, yours; without one, the course's H200 run above, or say what
#    you expect and why): how far it is from your prediction, and what the extra launches and the
#    scan cost at this size;
# 3. **the book's version**: what a million child launches from the GPU would cost (launch
#    overhead per grid, the pending-launch buffer, 32 threads per child grid on a GPU of 132 SMs),
#    and for which curves a child grid would beat a block per curve;
# 4. **the quadtree**: what the waves do per level that a persistent kernel would not, and one
#    reason to prefer the waves anyway.
#
# **Rubric (3 points).** 1 point: the prediction is computed (the average count within a few
# percent, bytes for both versions) before the measurement is quoted. 1 point: the measured gap
# (or, without a GPU, the expected one) is explained by a mechanism (bytes moved, the scan's and
# the counts kernel's extra traffic, launch overhead, idle threads in blocks of 32), not by "the
# GPU is fast". 1 point: the costs of child launches and of waves are named with the limits that
# cause them (pending launches, launch overhead, per-level passes over every point, forward
# progress of a persistent kernel). A claim with no number loses the point it belongs to.
# Studying alone: once `./aag grade` passes this chapter's auto-graded exercises,
# `ag.reveal("tessellation_answer")` shows a model answer to set yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "tessellation_answer", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the times quoted are the course's H200 run).* (1) With curvatures
# uniform on [0, 2.4], 16·c is uniform on [0, 38.4]: 13% of the curves (16·c < 5) are clamped at 4
# points, 17% (16·c ≥ 32) at 32, and the other 70% have int(16·c) from 5 to 31, 18 on average; the
# mean is 0.13·4 + 0.70·18 + 0.17·32 ≈ 18.5 points, so a million curves make 18.5 million points
# against the flat version's 32 million: 1.73 times fewer points. The bytes do not shrink as
# much: the flat version reads 24 bytes of control points and writes 256 bytes of points per
# curve, 280 MB; the adaptive one reads the control points twice (counts, then points), writes and
# reads the counts and offsets (4 bytes each way, twice, plus the scan's own pass), and writes 148
# bytes of points, about 24 + 4 + 8 + 8 + 24 + 8 + 148 ≈ 224 MB. If every kernel ran at the copy
# bandwidth (about 4 TB/s on an H200), that is 70 µs against 56 µs: a speedup of only 1.25, not
# 1.73. (2) The measurement sits below even that. On the course's H200 the flat version took
# 0.605 ms and the adaptive one 0.778 ms: the adaptive version, with 42% fewer points, was 29%
# slower, and neither came near the copy bandwidth (the flat one wrote its points at 469 GB/s).
# Both kernels are bound by the work of each thread, not by bytes: evaluating and storing a point
# costs far more instructions than its 8 bytes take to move, blocks of 32 threads keep few warps
# per SM, and the adaptive version adds the counts kernel and the scan's kernels, each a launch
# and a pass over a million values; with 18.5 points a curve in blocks of 32, 42% of the
# tessellation's threads do nothing while their block holds its slot on the SM. The adaptive version wins clearly only when the counts vary much more (a few points for
# most curves, hundreds for some) or when each point costs more than a store. (3) The book's
# version launches a child grid per curve: a million launches from the GPU, each a few
# microseconds of device-runtime work, queue far past the 2,048 pending launches the runtime
# holds by default, and each child grid has one block of 32 threads, a tiny fraction of a GPU
# with 132 SMs: the launches would cost more than all the arithmetic. A child grid pays off only
# when one curve's work fills many blocks (thousands of points), where a block per curve would
# leave one block looping while the others sit idle. (4) Each wave launches kernels over every
# point, also the points that found their leaf long ago, and clears and re-counts a table of 4^d
# counters: max_depth passes over all points, where a persistent kernel would touch each point
# once per level of its own node only. The waves are still the safer shape: every wave is a plain
# launch that cannot deadlock, the work per wave is balanced (a thread per point), and no block
# ever spins waiting for another that may not be resident.

# %% [markdown]
# ## Going further (not graded)
#
# - Stop early: read back one int per wave (how many points moved) and stop the loop when it is
#   zero. How many waves does the check's clustered input need, against `max_depth`?
# - Sort the points by leaf code (chapter 13's radix sort, on the codes) so that every leaf's
#   points are contiguous, as the book's quadtree leaves them; then each leaf is a range.
# - Write the persistent kernel with a work queue for the quadtree, with a grid no larger than the
#   resident blocks (`ag.profile` shows the occupancy) and a pending-work counter, and compare it
#   with the waves on a GPU. Then launch it with ten times as many blocks, on the simulator and on a
#   GPU, and explain what happens.
# - A thread per point instead of a block per curve for 21.2: each thread finds its curve with a
#   binary search over the offsets (chapter 12's co-rank in one dimension). When is it faster?
#
# **Reading:** PMPP ch. 21: the background and the overview (the `<<< >>>` launch from a
# kernel), the Bezier-curve example (adaptive tessellation, a child grid per curve), the
# recursive quadtree example, and the important considerations (memory visibility, the pending
# launch pool, streams, nesting depth).
# NVIDIA's CUDA C++ Programming Guide, "CUDA Dynamic Parallelism" (the current rules: tail
# launches and fire-and-forget streams in place of `cudaDeviceSynchronize` in a kernel). On
# persistent kernels and forward progress: Gupta, Stuart and Owens, "A study of persistent threads
# style GPU programming for GPGPU workloads" (InPar 2012).
#
# **On AMD (HIP):** HIP has no dynamic parallelism: a HIP kernel cannot launch a kernel, on any
# AMD GPU, so the designs of this notebook (a scan and a block per curve, waves launched by the
# host) are how it is done there too, and run unchanged. A wavefront is 64 threads: blocks of 32
# threads per curve fill half a wavefront each, so a block of 64 (one wavefront) is the natural
# size there.
