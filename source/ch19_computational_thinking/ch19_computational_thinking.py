# %% [markdown]
# # Chapter 19 · Parallel programming and computational thinking: choosing a decomposition
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 19.
#
# **Before you start:** chapters 1–6 and 9 (chapter 5's tiling and roofline, chapter 9's atomic
# operations). **Time:** about 4 hours, reading and exercises included (more in CPU mode, where
# the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Take a problem this course has not shown you, one step of an **N-body simulation**, and choose
#   how to split it among threads: which thread **owns** which result (gather or scatter), and
#   which algorithm to run (all pairs, or half of them with Newton's third law), saying what each
#   choice costs.
# - **Predict** the time of each decomposition with the roofline **before** writing it: the FLOPs
#   and the bytes of an untiled and of a tiled gather, and which bound each one hits.
# - Write the gather, then the gather **tiled through shared memory** (a partial last tile, two
#   barriers), checked against a float64 sum within the error bound of a float32 one, and time
#   both (on a GPU) beside the scatter and the bound.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import math

import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32

ag.banner()
ch19 = ag.problems.ch19

# %% [markdown]
# ## The problem: one step of an N-body simulation
#
# Stars in a cluster, galaxies in a survey, molecules in a protein: many simulations follow `N`
# bodies that all pull on each other. A step computes every body's **acceleration** from the
# positions and masses of all the others, then moves the bodies a little; the acceleration is
# where the time goes. Body `i` at position `pos[i]` feels, from every body `j` of mass
# `mass[j]`, a pull along the line from `i` to `j`, growing with the mass and falling with the
# square of the distance:
#
# ```
# acc[i] = Σ over every j of  mass[j] · (pos[j] − pos[i]) / (|pos[j] − pos[i]|² + eps2)^(3/2)
# ```
#
# (in units where the gravitational constant is 1). The **softening** `eps2 > 0` keeps two close
# bodies from pulling each other with an almost infinite force, a standard device of stellar
# dynamics; it also makes the term `j = i` exactly zero (a zero vector over a positive number), so
# no kernel needs to skip it. `pos` is float32 `[N, 3]`, `mass` float32 `[N]`, `eps2` a float32,
# `acc` float32 `[N, 3]`.
#
# Three bodies on the x axis, at 0, 1 and 3, of masses 1, 2 and 4: without softening, body 0
# feels `2 / 1² + 4 / 3² = 2.444` towards +x; body 1 feels `−1 / 1² + 4 / 2² = 0` (pulled both
# ways equally); body 2 feels `−1 / 3² − 2 / 2² = −0.611`. With `eps2 = 0.01` the values move a
# little:

# %%
three = ch19.three_bodies()
print("pos =", three["pos"].tolist(), " mass =", three["mass"].tolist(), " eps2 =", three["eps2"])
print("acc (float64, softened) =\n", three["acc"])

# %% [markdown]
# ## Thinking before coding: what does a thread own?
#
# PMPP's chapter 19 asks three questions of any problem before a line of code: which
# **algorithm** (§19.2), how the work is **decomposed** among threads (§19.3), and what each
# choice does to the parallelism, the memory traffic and the amount of work. Here are the answers
# on the table for an N-body step.
#
# **Algorithm.** The direct sum does all `N²` pairs, exactly (up to float32 rounding). Tree codes
# (Barnes–Hut) and the fast multipole method group far bodies together and do `N log N` or `N`
# work, at the price of an approximation, irregular data structures, and far more code; for tens of
# thousands of bodies on a GPU the direct sum is fast, regular, and the reference the others are
# checked against. Within the direct sum, **Newton's third law** (the pull of `j` on `i` is the
# opposite of the pull of `i` on `j`, up to the masses) lets each pair be computed **once**, for
# half the arithmetic.
#
# **Decomposition** (PMPP §18.2 makes the same choice for the electrostatic potential map):
#
# - **gather** (output-centric): thread `i` owns `acc[i]`. It reads every body and writes its own
#   result once: no two threads write the same place, so no atomics, and every thread does the
#   same `N` terms (perfect balance). It computes every pair twice (once from each side).
# - **scatter** (input-centric): thread `i` owns the pairs `(i, j)` with `j > i`, computes each
#   once, and adds its pull to both bodies. Half the arithmetic, but a body's acceleration
#   receives additions from many threads, so each one is an **atomic** read-modify-write in global
#   memory; and thread 0 has `N − 1` pairs while thread `N − 1` has none.
#
# Which wins on a GPU is not a matter of taste: you will predict it (Exercise 19.1), write the
# gather (19.2), improve its locality (19.3), and measure all three. The picture shows the `N × N`
# pairs of 8 bodies and who computes each: the gather's rows, the same rows cut into tiles that a
# block loads together, and the scatter's upper triangle.

# %%
ch19.show_decompositions()
plt.tight_layout()
plt.show()

# %% [markdown]
# **Why this problem.** Counting character n-grams in a text was the other candidate: it is a
# histogram (chapter 9), bound by memory and atomics whatever one does, with little to decide. The
# N-body step has a real choice between two decompositions with opposite costs (half the work
# against atomics and imbalance), and one between an untiled and a tiled gather whose rooflines
# sit on opposite sides of the ridge: a design question with numbers on both sides.
#
# ## The CPU baseline
#
# Three ways on the host, timed on 2,000 bodies (4 million pairs): the double loop compiled with
# `numba.njit` on one core, the same with the bodies spread over all cores (`numba.prange`), and
# NumPy, which works on blocks of bodies against all bodies as `[k, N, 3]` arrays. GFLOP/s counts
# 20 FLOPs a pair, as the N-body literature does (three subtractions, the squared distance and the
# softening, the reciprocal square root and its cube, the mass, and three multiply-adds): the real
# instruction count depends on how the square root and the division are done.

# %%
why = ag.timing.not_measured("Timing the CPU N-body step", gpu=False)
if why:
    print(why)
cpu_results = [] if why else ch19.time_cpu()
for r in cpu_results:
    print(f"{r['label']:58s} {r['ms']:9.2f} ms {r['gflops']:8.2f} GFLOP/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# ## Predict: where each gather sits on the roofline
#
# Before writing a kernel, bound it (chapter 5): a kernel cannot finish before its FLOPs are done
# at the GPU's peak rate, nor before its bytes have crossed the memory bus. What differs between
# the two gathers is the bytes, so count them carefully (float32, 4 bytes a value; a body is four
# values: x, y, z and its mass):
#
# - **the untiled gather**: every thread loads every body from global memory by itself, so each
#   pair costs one body's four values; on top of that, each body's own position is read once and
#   its acceleration written once;
# - **the tiled gather** with blocks of `block` threads: the threads of a block load each body
#   **once** for the whole block (into shared memory) and all read it from there; there are as many
#   blocks as it takes to cover the bodies, the last one partial; the same own reads and writes.
#
# **Predict first, by hand:** for the speed test's step (100,003 bodies, blocks of 256) on the
# course's H200 (66.9 TFLOP/s FP32, 4.27 TB/s; `ag.visual.roofline.H200` holds them), how many
# GFLOP? How many bytes for each gather, and how many FLOPs per byte? The ridge of the roofline is
# the peak over the bandwidth, about 16 FLOPs per byte: which gather is memory bound and which
# compute bound, and how far apart are their bounds?
#
# ## Exercise 19.1 · The FLOPs, bytes and time bound of each gather (2 points)
#
# Write `nbody_bound(n, block, peak_flops, bandwidth)`: `n` bodies, blocks of `block` threads
# (Python ints), `peak_flops` (FLOP/s) and `bandwidth` (bytes/s) Python floats. Return five
# numbers: `(flops, gather_bytes, tiled_bytes, gather_seconds, tiled_seconds)`, the FLOPs of a
# step (20 a pair, every pair counted, the pair of a body with itself included), the bytes of each
# gather as described above, and the time bound of each. Roughly 7 lines.
#
# **What the check does.** Three sets of values (the speed test's step and 1,000 bodies in blocks
# of 64 on the H200, then one body), and 200 random ones hidden (up to 3 million bodies, blocks of
# 32 to 1,024, 0.1 to 300 TFLOP/s, 30 GB/s to 10 TB/s), each result within a few float64
# roundings of the exact one.

# %% nbgrader={"grade": false, "grade_id": "nbody_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def nbody_bound(n, block, peak_flops, bandwidth):
    """(FLOPs, untiled gather's bytes, tiled gather's bytes, and the time bound of each)."""
    ### BEGIN SOLUTION
    flops = 20 * n * n
    own = 24 * n                              # own position read, acceleration written
    gather_bytes = 16 * n * n + own
    blocks = (n + block - 1) // block
    tiled_bytes = 16 * n * blocks + own
    return (flops, gather_bytes, tiled_bytes, max(flops / peak_flops, gather_bytes / bandwidth),
            max(flops / peak_flops, tiled_bytes / bandwidth))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "nbody_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch19.nbody_bound.check(nbody_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch19.nbody_bound.check_hidden(nbody_bound)
### END HIDDEN TESTS

# %% [markdown]
# Your numbers for the speed test's step:

# %%
h200 = ag.visual.roofline.H200
flops, gather_bytes, tiled_bytes, t_gather, t_tiled = nbody_bound(100_003, 256, h200.peak_flops,
                                                                  h200.bandwidth)
print(f"{flops / 1e9:.1f} GFLOP; ridge {h200.ridge:.1f} FLOPs per byte")
for name, nbytes, t in (("untiled gather", gather_bytes, t_gather),
                        ("tiled gather", tiled_bytes, t_tiled)):
    bound = "compute" if flops / h200.peak_flops >= nbytes / h200.bandwidth else "memory"
    print(f"{name:15s} {nbytes / 1e6:12,.1f} MB  {flops / nbytes:7.1f} FLOPs/byte  "
          f"bound {t * 1e3:7.3f} ms ({bound} bound)")

# %% [markdown]
# The two gathers on the H200's roofline, before any code runs (hollow points: predicted, not
# measured; each sits on the roof at its intensity, the best it could reach). The same FLOPs, 250
# times fewer bytes: the tiled gather crosses the ridge.

# %%
ag.visual.roofline([dict(label="untiled gather (predicted)", flops=flops, bytes=gather_bytes),
                    dict(label="tiled gather (predicted)", flops=flops, bytes=tiled_bytes)],
                   device="H200", title="One N-body step of 100,003 bodies")

# %% [markdown]
# ## Exercise 19.2 · The gather, one thread per body (3 points)
#
# Write `nbody_gather_kernel(pos, mass, eps2, acc)`: one thread per body,
# `i = blockIdx.x · blockDim.x + threadIdx.x`; threads past the last body do nothing. Thread `i`
# reads its own position once, then loops over **every** body `j`, accumulating the three
# components of the sum in float32 variables, and stores them once. `math.sqrt` gives the square
# root; the power 3/2 is the square root times the square, or one over the square root cubed.
# Roughly 16 lines.
#
# **What the check does.** Blocks of 32 threads (32, 64 and 128 in the hidden tests), `acc`
# filled with NaN. Visible: 37 bodies (a partial second block), 19 (one partial block) and 1 (a
# body alone: its acceleration is zero). Hidden: 150 bodies, 2, and a random count. Bodies lie
# in a box of random size and centre, masses are positive with a random scale. **The tolerance.**
# Each component is a float32 sum of `N` terms, each term itself a few roundings: it must be
# within `γ_(N + 32) · Σ|term|` of the float64 sum, with `γ_k = k·u / (1 − k·u)` and `u = 2⁻²⁴`
# (chapter 3's bound for a sum in any order, with 32 roundings more for each term). A float64
# accumulator passes; a missing body, a flipped direction or the wrong body's mass does not.

# %% nbgrader={"grade": false, "grade_id": "nbody_gather_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def nbody_gather_kernel(pos, mass, eps2, acc):
    ### BEGIN SOLUTION
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    n = pos.shape[0]
    if i < n:
        xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ax = float32(0.0)
        ay = float32(0.0)
        az = float32(0.0)
        for j in range(n):
            dx = pos[j, 0] - xi
            dy = pos[j, 1] - yi
            dz = pos[j, 2] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = float32(1.0) / math.sqrt(r2)
            s = mass[j] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
    ### END SOLUTION


# %% [markdown]
# Try it on 50 random bodies (blocks of 32):

# %%
got, expected = ch19.try_kernel(nbody_gather_kernel)
print("yours, acc[:3] =\n", got[:3], "\nexpected =\n", expected[:3])
print("largest relative error:", float(np.max(np.abs(got - expected)) / np.max(np.abs(expected))))

# %% nbgrader={"grade": true, "grade_id": "nbody_gather_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch19.nbody_gather.check(nbody_gather_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch19.nbody_gather.check_hidden(nbody_gather_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 19.3 · The gather tiled through shared memory (3 points + 2 for speed)
#
# Your prediction says the untiled gather asks the memory for 16 bytes per pair. Every thread of a
# block reads the **same** bodies, so let the block load them once: walk the bodies a **tile** of
# `blockDim.x` at a time (PMPP §19.3, and chapter 5's tiled product). For the tile that starts at
# `start`:
#
# 1. thread `t` of the block loads body `start + t`, if it exists, into shared arrays (its x, y, z
#    and mass);
# 2. `cuda.syncthreads()`: the whole tile is loaded before anyone reads it;
# 3. each thread adds the pull of every body **of the tile that exists** (the last tile is
#    partial when `N` is not a multiple of the block) to its own sums;
# 4. `cuda.syncthreads()` again: nobody overwrites the tile with the next one while another thread
#    still reads it.
#
# Every thread must reach both barriers, those past the last body too: let them take part with a
# borrowed position (`min(i, N − 1)`) and guard only their final store. Declare the shared arrays
# with `TILE_MAX = 256` entries (the largest block the check uses) and use the first `blockDim.x`.
# Roughly 30 lines.
#
# **What the check does.** As 19.2's; in CPU mode a race detector records every shared-memory
# access and stops at the first read or write that no barrier separates from another thread's
# write. **The speed test** (on a GPU) runs the step of 100,003 bodies (200 GFLOP as counted above)
# with blocks of 256 threads, against the course's tiled kernel timed in the same run and the
# compiled CPU loop on every core of the grading machine: you need at least 50% of the course's
# speed and 10× the CPU. Every timed call's `acc` is checked at 4,096 sampled elements against the
# float64 sum. In CPU mode it says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "nbody_tiled_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
TILE_MAX = 256


@cuda.jit
def nbody_tiled_kernel(pos, mass, eps2, acc):
    ### BEGIN SOLUTION
    sx = cuda.shared.array(TILE_MAX, float32)
    sy = cuda.shared.array(TILE_MAX, float32)
    sz = cuda.shared.array(TILE_MAX, float32)
    sm = cuda.shared.array(TILE_MAX, float32)
    t = cuda.threadIdx.x
    width = cuda.blockDim.x
    i = cuda.blockIdx.x * width + t
    n = pos.shape[0]
    me = min(i, n - 1)
    xi, yi, zi = pos[me, 0], pos[me, 1], pos[me, 2]
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for start in range(0, n, width):
        j = start + t
        if j < n:
            sx[t] = pos[j, 0]
            sy[t] = pos[j, 1]
            sz[t] = pos[j, 2]
            sm[t] = mass[j]
        cuda.syncthreads()
        for k in range(min(width, n - start)):
            dx = sx[k] - xi
            dy = sy[k] - yi
            dz = sz[k] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = float32(1.0) / math.sqrt(r2)
            s = sm[k] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        cuda.syncthreads()
    if i < n:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
    ### END SOLUTION


# %%
got, expected = ch19.try_kernel(nbody_tiled_kernel)
print("tiled, largest relative error:",
      float(np.max(np.abs(got - expected)) / np.max(np.abs(expected))))

# %% nbgrader={"grade": true, "grade_id": "nbody_tiled_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch19.nbody_tiled.check(nbody_tiled_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch19.nbody_tiled.check_hidden(nbody_tiled_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "nbody_tiled_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch19.nbody_tiled.check_speed(nbody_tiled_kernel)

# %% [markdown]
# ## Break it: the second barrier left out
#
# The second barrier looks useless: nothing is read after it. The kernel below leaves it out.
# **Predict before you run:** a fast thread finishes the tile and goes on to load the next one
# into the same shared arrays; which thread can then read a value of the wrong tile? What does the
# course's check say in CPU mode?

# %%
@cuda.jit
def nbody_tiled_one_barrier(pos, mass, eps2, acc):
    sx = cuda.shared.array(TILE_MAX, float32)
    sy = cuda.shared.array(TILE_MAX, float32)
    sz = cuda.shared.array(TILE_MAX, float32)
    sm = cuda.shared.array(TILE_MAX, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    n = pos.shape[0]
    me = min(i, n - 1)
    xi, yi, zi = pos[me, 0], pos[me, 1], pos[me, 2]
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for start in range(0, n, cuda.blockDim.x):
        if start + t < n:
            sx[t], sy[t], sz[t], sm[t] = (pos[start + t, 0], pos[start + t, 1],
                                          pos[start + t, 2], mass[start + t])
        cuda.syncthreads()
        for k in range(min(cuda.blockDim.x, n - start)):
            dx, dy, dz = sx[k] - xi, sy[k] - yi, sz[k] - zi
            inv = float32(1.0) / math.sqrt(dx * dx + dy * dy + dz * dz + eps2)
            s = sm[k] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        # cuda.syncthreads() belongs here: the next loads overwrite this tile
    if i < n:
        acc[i, 0], acc[i, 1], acc[i, 2] = ax, ay, az


try:
    ch19.nbody_tiled.check(nbody_tiled_one_barrier)
except ag.CheckFailed as failure:
    print("the course's check:\n" + str(failure))

# %% [markdown]
# Thread 0 may finish its sums over the tile while thread 30 is still reading it, then store body
# `start + width` where body `start` was: thread 30 then adds the wrong body, or the same body
# twice. On a GPU this happens only when the warps of a block drift apart, so the kernel is often
# right, and wrong on another GPU, another block size, or under load. In CPU mode the race detector
# names the two threads and the two lines. A barrier protects what comes **after** it (the loads
# are complete) and what came **before** it (nobody is still reading): a tiled loop needs both.
#
# ## Break it, then measure it: the scatter and Newton's third law
#
# The scatter computes each pair once. Here is the course's version: thread `i` takes the pairs
# `(i, j)` with `j > i`, keeps body `i`'s share in registers, and adds body `j`'s share
# (the opposite direction, body `i`'s mass) into `acc[j]` with `cuda.atomic.add`, since many
# threads add to the same body; `acc` must start at zero (`ch19.scatter_step` zeroes it, then
# launches the scatter). It is right:

# %%
rng = np.random.default_rng(19)
small = ch19.nbody_inputs(rng, 40)
d_acc = cuda.to_device(np.full((40, 3), np.nan, np.float32))
ch19.scatter_step(cuda.to_device(small["pos"]), cuda.to_device(small["mass"]), small["eps2"],
                  d_acc, threads=32)
exact, mag = ch19.nbody_host(**small)
print("scatter within the bound:",
      bool(np.all(np.abs(d_acc.copy_to_host() - exact) <= ch19.nbody_tolerance(mag, 40))))
print(f"pairs computed: {40 * 39 // 2} (the gather computes {40 * 40}); "
      f"thread 0 computes {39} of them, thread 39 none")

# %% [markdown]
# **Predict before you measure:** the scatter does half the FLOPs of the gather. What does it pay
# instead? Count, per pair, the atomic additions to global memory (three, into a body another
# thread owns), and think about where they are served (the L2 cache, one read-modify-write at a
# time per address), how the work is spread (thread `i` has `N − 1 − i` pairs: the first warps
# run `N` iterations while the last run none), and whether the scatter can tile its writes the way
# the gather tiles its reads.
#
# ## Measure: gather, tiled gather and scatter against the bound
#
# On a GPU, the next cell times the speed test's step (100,003 bodies, blocks of 256) every way:
# the course's untiled gather, tiled gather and scatter, your two kernels, and the compiled CPU
# loop on every core; beside each, the roofline bound of its decomposition on this GPU (its FP32
# peak and the bandwidth of a device-to-device copy, measured now). GFLOP/s counts 20 FLOPs a
# pair for `N²` pairs in every row, the scatter's too, so the rows compare times for the same
# result. In CPU mode it says that it needs a GPU and draws what the course's kernels took on an
# H200, beside their bounds there.

# %%
mine = {"gather, a thread per body (yours)": ("gather", nbody_gather_kernel),
        "tiled gather (yours)": ("tiled", nbody_tiled_kernel)}
try:
    results = ch19.measure(mine)
    for r in results:
        bound = f"bound {r['bound_ms']:8.3f} ms" if r["bound_ms"] is not None else ""
        print(f"{r['label']:50s} {r['ms']:9.3f} ms {r['gflops']:9.0f} GFLOP/s  {bound}"
              f"{'' if r['right'] else '   WRONG'}")
    ag.experiments.steps(**ch19.chart(results)).show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels (bars), beside each one's "
          "roofline bound (marks):")
    ag.experiments.steps(**ch19.chart()).show()

# %% [markdown]
# ## Explain: the decomposition you would ship (3 points, graded by your instructor)
#
# In the cell below, in 8 to 15 sentences, with numbers from your bound (Exercise 19.1) and, if you
# ran on a GPU, from the measurements:
#
# 1. **the decomposition**: which one you would ship for this step, and why, in PMPP's terms (what a
#    thread owns, what it reads and writes, atomics, balance, work);
# 2. **the prediction**: the bound of each gather for the speed test's step (FLOPs per byte,
#    compute or memory bound, milliseconds);
# 3. **the gap**: how far each measured time is from its bound, and the cause (for the untiled
#    gather: were its loads really served by DRAM? for the tiled one: are 20 FLOPs a pair what the
#    GPU executes? for the scatter: what do its atomics and its imbalance cost?);
# 4. **what would close it**: two concrete changes to the tiled kernel and what each would buy.
#
# **Rubric (3 points).** 1 point: the decomposition is chosen and justified by ownership, atomics
# and balance, not by the count of FLOPs alone. 1 point: the bounds are right (within a few percent)
# and each gather is placed on the correct side of the ridge. 1 point: the measured gap (or, without
# a GPU, the expected one) is explained by a mechanism (caches, instruction count, atomics,
# imbalance) and two changes that would close it are named with what they buy. A claim with no
# number, or a measurement and a prediction mixed up, loses the point it belongs to. Studying alone:
# once `./aag grade` passes this chapter's auto-graded exercises, `ag.reveal("nbody_design_answer")`
# shows a model answer to set yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "nbody_design_answer", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the bound's numbers are the course's H200, measured times
# are the learner's own).* (1) I would ship the tiled gather. Each thread owns one body's
# acceleration, reads all bodies and writes its three sums once: no two threads write the same
# place, so there are no atomics, and every thread does the same 100,003 terms, so the warps stay
# balanced. The scatter computes each pair once, 100 GFLOP instead of 200, but every pair then
# makes three atomic additions into a body another thread owns (15 billion atomics for the whole
# step), served one read-modify-write at a time per address by the L2 cache, and its work is a
# triangle: thread 0 has 100,002 pairs and thread 100,002 none, so the first blocks run long after
# the last have finished. Half the FLOPs does not help a kernel whose time is set by something
# else. (2) The step is 20 · 100,003² = 200 GFLOP, 2.99 ms at 66.9 TFLOP/s. The untiled gather
# asks for 16 bytes a pair, 160 GB: 1.25 FLOPs per byte, far below the ridge of 15.7, so its
# bound is memory, 37.5 ms. The tiled gather loads every body once per block, 391 blocks × 100,003
# × 16 bytes = 626 MB: 318 FLOPs per byte, far above the ridge, so it is compute bound at 2.99 ms,
# 12.5 times lower. (3) On the course's H200 the tiled kernel measured 20.7 ms (9.7 TFLOP/s as
# counted): 7 times its bound. The bound counts 20 FLOPs a pair, but the kernel as written does an IEEE-exact square
# root and division, each a sequence of about ten instructions, so the GPU executes some 40
# instructions a pair; and every pair also reads four values from shared memory. The untiled
# gather measures less than its 37.5 ms bound (30.6 ms there, 1.5 times the tiled one): all 32
# threads of a warp read the same body at the same time, a single broadcast load, and the 1.6 MB of
# bodies stays in L1 and L2, so the 160 GB never come from DRAM; the roofline with DRAM bytes
# assumed no cache at all. The scatter, at ten times the tiled time (206 ms), loses to its atomics
# and its imbalance. (4) First, a fast reciprocal square root (`cuda.jit(fastmath=True)`, one
# `rsqrt.approx` instruction, a few ulps, within the check's 32 roundings per term) removes most of
# the extra instructions: perhaps 2 times. Second, thread coarsening: each thread computes two or
# four bodies, so every value read from shared memory feeds two or four pairs, halving or
# quartering the shared loads per FLOP; unrolling the inner loop by 4 removes its loop overhead.
# Together they should bring the kernel within 1.5 to 2 times the compute bound.

# %% [markdown]
# ## Going further (not graded)
#
# - Compile your tiled kernel with `@cuda.jit(fastmath=True)` and measure again: what does the
#   check say, and how much faster is it?
# - Coarsen: let each thread own 2 or 4 bodies (PMPP §18.3 does this for the potential map). How
#   many registers does it take (`ag.profile`), and where does the gain stop?
# - Integrate: move the bodies with a leapfrog step (velocities by half a step, positions by a
#   whole one, velocities by the other half) and check that the total energy drifts slowly.
# - Cut off: with forces that fade with distance (molecular dynamics), bin the bodies into cells
#   and visit only the neighbouring cells (PMPP §18.5, cutoff binning): `N` work instead of `N²`.
# - Barnes–Hut: build an octree on the GPU and compare its accuracy and time with the direct sum.
#
# **Reading:** PMPP ch. 19: §19.1 (goals of parallel computing), §19.2 (algorithm selection),
# §19.3 (problem decomposition), §19.4 (computational thinking); ch. 18 (electrostatic potential
# map: scatter versus gather, thread coarsening, cutoff binning), whose direct summation is this
# chapter's sum in another field. Nyland, Harris and Prins, "Fast N-body simulation with CUDA",
# *GPU Gems 3*, ch. 31 (2007), where the tiled gather and the 20 FLOPs a pair come from; Barnes and
# Hut, "A hierarchical O(N log N) force-calculation algorithm", *Nature* 324 (1986).
#
# **On AMD (HIP):** the kernels run unchanged. Shared memory is the LDS (64 KB per compute unit),
# a wavefront is 64 threads, so a block of 256 is four wavefronts; float atomics on global memory
# are native on CDNA GPUs (MI200 and later), emulated with compare-and-swap loops on older ones,
# which makes the scatter slower still.
