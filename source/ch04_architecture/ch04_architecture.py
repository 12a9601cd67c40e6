# %% [markdown]
# # Chapter 4 · Compute architecture and scheduling: warps, divergence and occupancy
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 4.
#
# **Before you start:** chapters 1–3. **Time:** about 3 hours, reading and exercises included (more
# in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Read your GPU's properties (SMs, warp size, resource limits, clocks, memory bus) and turn them
#   into the two ceilings every later measurement is set against: **peak FP32 FLOP/s** and **peak
#   memory bandwidth**.
# - Write one computation **two ways**: threads that branch on mixed data, so that the 32 threads
#   of a warp disagree (**divergence**), and the same work grouped so that every warp takes a single
#   branch. Count, before running anything, what the divergence costs (close to 2× when the two
#   kinds of work are mixed half and half), then measure it.
# - Compute **occupancy**, how many blocks and warps one SM can hold, from a kernel's registers,
#   shared memory and block size, exactly as CUDA's occupancy calculator does; check it against
#   what the compiler and the driver report, and see what occupancy does, and does not do, for
#   memory bandwidth.
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
# ## The idea: SMs run blocks, blocks run as warps
#
# A GPU is an array of **streaming multiprocessors** (SMs): 132 of them on an H200. Each SM has
# its own arithmetic units, a large register file (65,536 32-bit registers, 256 KB), and an on-chip
# memory that serves as L1 cache and as the blocks' shared memory (PMPP §4.1).
#
# **Blocks go to SMs whole** (§4.2). When a kernel is launched, the hardware hands out blocks to
# the SMs, as many per SM as its resources allow at once; the other blocks wait, and start as
# earlier ones finish. A block never moves to another SM and never splits. That is what lets the
# threads of one block cooperate (a barrier, shared memory: they all live on one SM), and also why
# blocks must not wait for one another: the same program has to run on a GPU with 10 SMs, where
# most blocks wait, and on one with 132 (**transparent scalability**, §4.3).
#
# **Threads run as warps** (§4.4). An SM does not schedule threads one by one: it cuts each block
# into **warps** of 32 consecutive threads (`threadIdx.x` 0–31, 32–63, …; in a 2-D block the
# threads are numbered row by row, x fastest, then cut). A warp executes **one instruction at a
# time for all of its 32 threads** (NVIDIA calls it SIMT: single instruction, multiple threads;
# the threads are the warp's *lanes*). One instruction fetched and decoded drives 32 arithmetic
# lanes: that is where a GPU's arithmetic density comes from. The warp is also the unit of
# waste: a block of 100 threads makes 4 warps, and the last one runs with 4 active lanes and 28
# idle ones.
#
# An H200's SM (Hopper, compute capability 9.0) is four **processing blocks** (sub-partitions),
# each with one warp scheduler, 32 FP32 lanes and a quarter of the register file. It can hold up
# to 64 warps (2,048 threads) of up to 32 blocks at once, and each cycle each scheduler issues one
# instruction from one of its ready warps.

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [3, 2]})
# Left: 12 blocks on 4 SMs that hold 2 blocks each: two waves of 8, then 4.
sms, per_sm, n_blocks = 4, 2, 12
colours = plt.cm.tab20(np.linspace(0, 1, n_blocks))
for b in range(n_blocks):
    wave, slot = divmod(b, sms * per_sm)
    sm, lane = divmod(slot, per_sm)
    left.add_patch(plt.Rectangle((wave * 1.05, sm + lane * 0.45 + 0.05), 1, 0.4,
                                 facecolor=colours[b], edgecolor="black"))
    left.text(wave * 1.05 + 0.5, sm + lane * 0.45 + 0.25, f"block {b}", ha="center", va="center",
              fontsize=8)
left.set_xlim(-0.05, 2.2); left.set_ylim(sms, -0.05)
left.set_yticks([s + 0.5 for s in range(sms)], [f"SM {s}" for s in range(sms)])
left.set_xticks([0.5, 1.55], ["first wave", "second wave"])
left.set_title("a grid of 12 blocks on 4 SMs that hold 2 blocks each")
# Right: a block of 100 threads cut into 4 warps of 32 lanes.
threads = 100
for t in range(128):
    warp, lane = divmod(t, 32)
    right.add_patch(plt.Rectangle((lane, warp), 1, 0.85, edgecolor="white",
                                  facecolor=plt.cm.tab10(warp) if t < threads else "#e8e8e8"))
right.set_xlim(0, 32); right.set_ylim(4, -0.2)
right.set_yticks([w + 0.42 for w in range(4)], [f"warp {w}" for w in range(4)])
right.set_xticks([0, 8, 16, 24, 31], ["lane 0", "8", "16", "24", "31"])
right.set_title("a block of 100 threads = 4 warps (28 idle lanes, grey)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Meet your GPU: its properties (§4.8)
#
# The driver answers questions about the device: `cuda.get_current_device()` gives an object whose
# upper-case attributes are the CUDA driver's device attributes (`MULTIPROCESSOR_COUNT`,
# `WARP_SIZE`, `MAX_THREADS_PER_BLOCK`, `MAX_REGISTERS_PER_MULTIPROCESSOR`, …). On a GPU the next
# cell reads them. The CUDA simulator has no such figures, so in CPU mode the cell shows the
# **published** figures of an H200 SXM instead (NVIDIA's data sheet and the CUDA programming
# guide's table for compute capability 9.0), not values read from a device.

# %%
PROPERTY_NAMES = ("MULTIPROCESSOR_COUNT", "WARP_SIZE", "MAX_THREADS_PER_BLOCK",
                  "MAX_THREADS_PER_MULTIPROCESSOR", "MAX_BLOCKS_PER_MULTIPROCESSOR",
                  "MAX_REGISTERS_PER_MULTIPROCESSOR", "MAX_REGISTERS_PER_BLOCK",
                  "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", "MAX_SHARED_MEMORY_PER_BLOCK",
                  "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", "RESERVED_SHARED_MEMORY_PER_BLOCK",
                  "L2_CACHE_SIZE", "CLOCK_RATE", "MEMORY_CLOCK_RATE", "GLOBAL_MEMORY_BUS_WIDTH")

# Published figures for an H200 SXM (compute capability 9.0). The memory clock is the one
# implied by the published 4.8 TB/s on a 6144-bit bus (CUDA reports it as half the data rate).
H200_PROPERTIES = {
    "MULTIPROCESSOR_COUNT": 132, "WARP_SIZE": 32, "MAX_THREADS_PER_BLOCK": 1024,
    "MAX_THREADS_PER_MULTIPROCESSOR": 2048, "MAX_BLOCKS_PER_MULTIPROCESSOR": 32,
    "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536, "MAX_REGISTERS_PER_BLOCK": 65536,
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 233472, "MAX_SHARED_MEMORY_PER_BLOCK": 49152,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448, "RESERVED_SHARED_MEMORY_PER_BLOCK": 1024,
    "L2_CACHE_SIZE": 60 * 2 ** 20, "CLOCK_RATE": 1_980_000, "MEMORY_CLOCK_RATE": 3_125_000,
    "GLOBAL_MEMORY_BUS_WIDTH": 6144,
}

if ag.backend.is_gpu:
    dev = cuda.get_current_device()
    props = {}
    for name in PROPERTY_NAMES:
        try:
            props[name] = int(getattr(dev, name))
        except Exception as why:          # an attribute this driver does not report
            props[name] = None
            print(f"{name}: not reported ({type(why).__name__})")
    device_name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    compute_capability = tuple(dev.compute_capability)
    print(f"{device_name}, compute capability {compute_capability[0]}.{compute_capability[1]}")
else:
    props, device_name, compute_capability = dict(H200_PROPERTIES), "H200 (published figures)", (9, 0)
    print("CPU mode: the simulator has no device properties; these are an H200's published figures.")
for name, value in props.items():
    print(f"  {name:38s} {value:>14,}" if value is not None else f"  {name:38s} {'?':>14s}")

# %% [markdown]
# Some figures the driver does not report, because they follow from the architecture (the
# compute capability): how many FP32 lanes an SM has, and how registers and shared memory are
# handed out. The course keeps them in tables:

# %%
# FP32 lanes (CUDA cores) per SM, by compute capability (NVIDIA's architecture white papers).
FP32_LANES_PER_SM = {(6, 0): 64, (6, 1): 128, (7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128,
                     (8, 7): 128, (8, 9): 128, (9, 0): 128, (10, 0): 128, (12, 0): 128}
lanes = FP32_LANES_PER_SM.get(compute_capability, 128)
print(f"compute capability {compute_capability}: {lanes} FP32 lanes per SM, "
      f"{lanes // 4} per processing block")

# %% [markdown]
# ## Two ceilings: peak FLOP/s and peak bandwidth
#
# Every kernel is limited by arithmetic or by memory traffic (chapter 5's roofline). Both ceilings
# follow from the properties:
#
# - **Peak FP32 FLOP/s** = SMs × FP32 lanes per SM × 2 × clock. The 2: each lane can finish one
#   fused multiply-add (`a·b + c`, two floating-point operations) per cycle. `CLOCK_RATE` is in
#   kHz (the boost clock).
# - **Peak memory bandwidth** = 2 × memory clock × bus width in bytes. The 2: the memory
#   transfers data on both edges of its clock (double data rate); `MEMORY_CLOCK_RATE` is in kHz as
#   CUDA reports it, and `GLOBAL_MEMORY_BUS_WIDTH` in bits.
#
# Neither is reached in practice: the clock drops under load, and a memory system moves data at
# 85–95% of its peak at best. On the course's H200 a device-to-device copy reached 4,269 GB/s
# (`docs/benchmarks.md`), 89% of the 4.8 TB/s on the box: the *practical* ceiling that the
# course's "share of a copy" figures set memory-bound kernels against. (The speed tests
# themselves compare your kernel with the course's reference kernel, timed in the same run.)
#
# ## Exercise 4.1 · Peak figures from a device's properties (2 points)
#
# Write `peak_figures(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits)`:
# all five are Python ints, as the driver and the table above give them. Return two floats,
# `(flops, bytes_per_second)`: the peak FP32 FLOP/s and the peak memory bandwidth in bytes per
# second, counted as above. Roughly 3 lines.
#
# **Predict first, by hand:** an H200 (132 SMs, 128 lanes, 1.98 GHz, a 3.125 GHz memory clock on
# a 6144-bit bus): how many TFLOP/s, how many TB/s? How many FLOPs must a kernel do per byte it
# moves before arithmetic, not memory, limits it?
#
# **What the check does.** It calls your function on 3 devices (H200-like, A100, RTX 4090), and the
# hidden tests on 100 (the same 3, then random ones: 1 to 199 SMs, 32 to 256 lanes, clocks of
# 0.3 to 3 GHz, memory clocks of 0.4 to 16 GHz, buses of 64 to 8192 bits). Both numbers are
# compared with the formulas in float64, allowing a few roundings: any algebraically equal
# formula passes; a rounded number does not.

# %% nbgrader={"grade": false, "grade_id": "peak_figures_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def peak_figures(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    """(peak FP32 FLOP/s, peak memory bytes per second) of a device."""
    ### BEGIN SOLUTION
    flops = sm_count * fp32_lanes_per_sm * 2 * clock_khz * 1e3
    bytes_per_second = 2 * memory_clock_khz * 1e3 * bus_width_bits / 8
    return flops, bytes_per_second
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "peak_figures_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch04.peak_figures.check(peak_figures)
### BEGIN HIDDEN TESTS
ag.problems.ch04.peak_figures.check_hidden(peak_figures)
### END HIDDEN TESTS

# %% [markdown]
# Your function on this device's properties; on a GPU, next to the bandwidth a copy really
# reaches (the course's timing harness: the fastest of a driver copy and copy kernels, moving
# 1 GiB):

# %%
def device_peaks(props, lanes):
    try:
        return peak_figures(props["MULTIPROCESSOR_COUNT"], lanes, props["CLOCK_RATE"],
                            props["MEMORY_CLOCK_RATE"], props["GLOBAL_MEMORY_BUS_WIDTH"])
    except TypeError:                    # a clock the driver did not report
        return float("nan"), float("nan")


peak_flops, peak_bandwidth = device_peaks(props, lanes)
print(f"{device_name}: peak {peak_flops / 1e12:.1f} TFLOP/s (FP32), "
      f"{peak_bandwidth / 1e12:.2f} TB/s; ridge {peak_flops / peak_bandwidth:.1f} FLOP/byte")
why = ag.timing.not_measured()
if not why:
    copy = ag.timing.copy_ceiling(1 << 30)
    print(f"{copy.label}: {copy.gbps:,.0f} GB/s = {copy.gbps * 1e9 / peak_bandwidth:.0%} of the peak")
else:
    from autograder.data import device_facts             # the figures measured on the course's H200
    ceiling_gbps = device_facts.value("copy_ceiling")
    print(why, f"On the course's H200, a copy reached {device_facts.quote('copy_ceiling')}: "
          f"{ceiling_gbps * 1e9 / peak_bandwidth:.0%} of this peak.")

# %% [markdown]
# ## Control divergence (§4.5)
#
# A warp issues one instruction for all its lanes. What happens at an `if` whose condition differs
# between the lanes of one warp? The warp runs **both** paths, one after the other: first the
# instructions of one path with only the lanes that took it switched on (the others are masked
# off: they sit idle, their results discarded), then the other path with the other lanes. The
# time a warp spends is the **sum** of the two paths. A loop whose trip count differs between
# lanes is the same story: the warp keeps going until its longest lane is done.
#
# The converse matters as much: **a branch on a value that is the same for all 32 lanes of a warp
# costs nothing** beyond the compare and the jump. A condition on `cuda.blockIdx.x`, on
# `cuda.threadIdx.x // 32`, or on data that happens to agree within each warp sends the whole
# warp down one path, and the other path is skipped entirely. Divergence is not about `if`
# statements; it is about **which threads share a warp**.
#
# **Since Volta (compute capability 7.0): independent thread scheduling.** Before Volta a warp
# had one program counter, ran one side of a divergent branch to the end, then the other, and
# reconverged at a fixed point. Since Volta every thread has its own program counter and the
# scheduler may interleave the two sides (a few instructions of one, then of the other), which
# lets threads of one warp wait on each other without deadlocking (a lock inside a warp, say).
# What it does **not** do is run the two sides at the same time: in any one cycle a warp issues one
# instruction for the lanes on one path, so the cost of divergence is unchanged. What it changes
# is that the lanes of a warp are no longer guaranteed to be back in step after a branch; code
# that relies on it must say so with `cuda.syncwarp()` (PMPP chapter 10's warp-level reductions).
#
# The picture: one warp whose 32 elements are of two kinds, mixed, running a branch whose two
# sides take 8 and 5 steps; then, once the elements are grouped by kind, a warp of kind-0
# elements and a warp of kind-1 elements, each taking a single side.

# %%
rng = np.random.default_rng(4)
kinds_demo = (rng.random(32) < 0.5).astype(int)
D_demo, E_demo = 8, 5


def draw_warp(ax, kinds, title):
    steps = (D_demo if (kinds == 0).any() else 0) + (E_demo if (kinds == 1).any() else 0)
    t = 0
    for kind, length, name in ((0, D_demo, "power form"), (1, E_demo, "product form")):
        if not (kinds == kind).any():
            continue
        for lane, k in enumerate(kinds):
            colour = ("tab:blue" if kind == 0 else "tab:orange") if k == kind else "#e4e4e4"
            ax.add_patch(plt.Rectangle((t, lane), length, 0.9, facecolor=colour, edgecolor="white"))
        ax.text(t + length / 2, -1.2, name, ha="center", fontsize=9)
        t += length
    useful = D_demo * (kinds == 0).sum() + E_demo * (kinds == 1).sum()
    ax.set_xlim(0, D_demo + E_demo); ax.set_ylim(32, -2.5)
    ax.set_xlabel("time (steps)"); ax.set_ylabel("lane")
    ax.set_title(f"{title}\n{steps} steps, {useful / (32 * steps):.0%} of the lane-steps do work",
                 fontsize=10)


fig, axes = plt.subplots(1, 3, figsize=(12, 4.2), sharey=True)
draw_warp(axes[0], kinds_demo, "mixed kinds: one warp runs both sides")
draw_warp(axes[1], np.zeros(32, int), "grouped: a warp of kind-0 elements")
draw_warp(axes[2], np.ones(32, int), "grouped: a warp of kind-1 elements")
plt.tight_layout()
plt.show()

# %% [markdown]
# With the kinds mixed, every element costs the warp 8 + 5 = 13 steps; grouped, a warp of kind-0
# elements costs 8 and a warp of kind-1 elements costs 5, and no lane idles. Grouping costs
# something too (here: a sort of the elements by kind, done once), which pays off when the work
# per element is large or the grouping is reused.
#
# ## The work: two kinds of element
#
# Exercises 4.2 and 4.3 compute the same thing. Element `i` has a value `x[i]` (float32) and a
# kind, `kind[i]` (uint8, 0 or 1):
#
# - an element of **kind 0** gets the **power form** of a polynomial with the `D = a.size`
#   coefficients `a`, highest power first (as `np.polyval`):
#   `p(x) = a[0]·x^(D−1) + a[1]·x^(D−2) + … + a[D−1]`, computed by Horner's rule:
#   `acc = 0`, then `acc = acc·x + a[k]` for `k = 0, 1, …, D − 1`;
# - an element of **kind 1** gets the **product form** with the `E = b.size` factors `b`:
#   `q(x) = (1 + b[0]·x)(1 + b[1]·x)…(1 + b[E−1]·x)`: `acc = 1`, then `acc = acc·(1 + b[k]·x)`.
#
# Think of a ray tracer where rays that hit glass run one shader and rays that hit metal another;
# here the two "shaders" are one loop of multiply-adds each, over its own coefficient array. The
# spec and CPU baselines first (NumPy evaluates each form over the elements of its kind only;
# the Numba loop is a plain serial loop):

# %%
import numba

spec = ag.problems.ch04.two_kinds          # the float64 spec the checks use


@numba.njit(cache=False)
def two_kinds_serial(x, kind, a, b, out):
    for i in range(x.size):
        xi = x[i]
        if kind[i] == 0:
            acc = np.float32(0)
            for k in range(a.size):
                acc = acc * xi + a[k]
        else:
            acc = np.float32(1)
            for k in range(b.size):
                acc *= np.float32(1) + b[k] * xi
        out[i] = acc


def two_kinds_numpy(x, kind, a, b, out):
    zero = kind == 0
    x0, x1 = x[zero], x[~zero]
    acc = np.zeros_like(x0)
    for c in a:
        acc = acc * x0 + c
    out[zero] = acc
    acc = np.ones_like(x1)
    for c in b:
        acc = acc * (np.float32(1) + c * x1)
    out[~zero] = acc


g = np.random.default_rng(0)
n_cpu, degree = 1 << 20, 64
x_cpu = g.uniform(-1, 1, n_cpu).astype(np.float32)
kind_cpu = (g.random(n_cpu) < 0.5).astype(np.uint8)
a_cpu = g.uniform(-1, 1, degree).astype(np.float32)
b_cpu = g.uniform(-0.4, 0.4, degree).astype(np.float32)
out_cpu = np.empty(n_cpu, np.float32)
flops_cpu = 2 * degree * n_cpu
for label, fn in (("NumPy, each form over its own kind", two_kinds_numpy),
                  ("numba.njit serial loop", two_kinds_serial)):
    s = ag.timing.time_cpu(label, lambda: fn(x_cpu, kind_cpu, a_cpu, b_cpu, out_cpu), repeats=3,
                           flops=flops_cpu)
    worst = np.max(np.abs(out_cpu - spec(x_cpu, kind_cpu, a_cpu, b_cpu)))
    print(f"{label:36s} {s.median_ms:8.1f} ms  {s.gflops:6.2f} GFLOP/s   (largest error {worst:.1e})")

# %% [markdown]
# ## Exercise 4.2 · One thread per element (3 points)
#
# Write the kernel `divergent_kernel(x, kind, a, b, out)`: `x` (float32), `kind` (uint8) and `out`
# (float32) have `n` elements, `a` and `b` (float32) hold the coefficients. Thread
# `i = cuda.grid(1)` computes element `i` if `i < n`: the power form if `kind[i] == 0`, the
# product form otherwise, and stores it in `out[i]`. Roughly 12 lines.
#
# Keep the arithmetic in **float32**: start the accumulator at `float32(0)` or `float32(1)`
# (imported in the first cell), not `0.0`, which Numba types as float64. Float64 would pass the
# check, but it runs at half the speed on an H200 and at 1/64 of it on most consumer GPUs, and the
# next exercise is timed.
#
# **How the check launches it.** One thread per element: blocks of 128 threads (visible cases;
# the hidden ones draw 32, 64, 128 or 256), `ceil(n / threads)` blocks.
#
# **What the check does.** `out` is filled with NaN; every element is compared with the float64
# spec, allowing what float32 may be off by for each form (`γ_(2D+1) · Σ|a_k|·|x|^(D−1−k)` for the
# power form, `γ_(3E+1) · |q(x)|` for the product form, `γ_k = k·u / (1 − k·u)`, `u = 2⁻²⁴`).
# Sizes n = 1000, 97 and 1 (the hidden tests: 1025, 31 and two random ones), 1 to 12
# coefficients of random scale in `a`, factors in [−0.4, 0.4] in `b`, `|x| ≤ 1.25`, the kinds
# mixed at random (sometimes in runs). On a GPU the visible check starts with n = 1,000,003 and
# the hidden tests draw three random sizes up to 3,000,000; from 65,536 elements on, `a` and `b`
# have 128 entries each.

# %% nbgrader={"grade": false, "grade_id": "divergent_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def divergent_kernel(x, kind, a, b, out):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < x.size:
        xi = x[i]
        if kind[i] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xi + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xi
        out[i] = acc
    ### END SOLUTION


# %% [markdown]
# Try it on a small case, launched the way the check launches it:

# %%
g = np.random.default_rng(1)
n = 300
x = g.uniform(-1.25, 1.25, n).astype(np.float32)
kind = (g.random(n) < 0.5).astype(np.uint8)
a = g.uniform(-2, 2, 6).astype(np.float32)
b = g.uniform(-0.4, 0.4, 4).astype(np.float32)
d_out = cuda.to_device(np.full(n, np.nan, np.float32))
divergent_kernel[(n + 127) // 128, 128](cuda.to_device(x), cuda.to_device(kind), cuda.to_device(a),
                                         cuda.to_device(b), d_out)
got = d_out.copy_to_host()
print(f"elements never written: {np.isnan(got).sum()}; largest difference from the spec: "
      f"{np.nanmax(np.abs(got - spec(x, kind, a, b))):.2e}")

# %% nbgrader={"grade": true, "grade_id": "divergent_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch04.divergent.check(divergent_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch04.divergent.check_hidden(divergent_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Count it: what the warps pay
#
# Before timing anything, count. Take the model of the picture: a warp runs the power-form loop
# (D steps) if **any** of its lanes has kind 0, and the product-form loop (E steps) if **any** has
# kind 1. The function below counts the steps of all the warps for a given order of the elements,
# and the share of lane-steps that do useful work (the **SIMD efficiency**). It is plain NumPy: it
# runs anywhere.

# %%
WARP = ag.backend.warp_size        # 32 on NVIDIA; AAG_WARP_SIZE=64 in CPU mode stands for AMD


def warp_steps(kind, D, E, warp=WARP):
    """Steps all warps take, one thread per element in this order: a warp runs D steps if any of
    its lanes has kind 0 and E steps if any has kind 1. Also the useful share of lane-steps."""
    pad = (-kind.size) % warp
    lanes = np.concatenate([kind, np.full(pad, 255, kind.dtype)]).reshape(-1, warp)
    steps = D * (lanes == 0).any(axis=1).sum() + E * (lanes == 1).any(axis=1).sum()
    useful = D * (kind == 0).sum() + E * (kind == 1).sum()
    return int(steps), useful / (warp * steps)


n_count, D, E = 1 << 16, 64, 64
g = np.random.default_rng(2)
runs32 = (np.arange(n_count) // 32 % 2).astype(np.uint8)   # runs of 32 elements of one kind
patterns = {
    "independent, half and half": (g.random(n_count) < 0.5).astype(np.uint8),
    "independent, 5% of kind 1": (g.random(n_count) < 0.05).astype(np.uint8),
    "runs of 32, aligned with the warps": runs32,
    "runs of 32, shifted by 16 elements": np.roll(runs32, 16),
    "runs of 64, shifted by 16 elements": np.roll((np.arange(n_count) // 64 % 2).astype(np.uint8), 16),
}
print(f"{n_count:,} elements, D = E = {D}, warps of {WARP}; steps relative to the same elements "
      "grouped by kind")
for name, k in patterns.items():
    steps, efficiency = warp_steps(k, D, E)
    grouped_steps, _ = warp_steps(np.sort(k), D, E)
    print(f"  {name:38s} {steps / grouped_steps:5.2f}×   SIMD efficiency {efficiency:5.0%}")

# %% [markdown]
# **Break it.** The third and fourth rows are the same data, shifted by 16 elements: the runs of
# 32 that fit the warps exactly cost nothing; shifted by half a warp, every warp straddles two
# runs and pays for both branches. Divergence depends on where the data falls relative to warp
# boundaries, which is why the fix in the next exercise changes **which thread handles which
# element**, not the arithmetic.
#
# For independent kinds with a fraction `p` of kind 1, a warp avoids the product form only if all
# 32 of its lanes are of kind 0 (probability `(1 − p)³²`), and the other way round. So the
# expected slowdown of mixed over grouped is
#
# ```
#            D·(1 − p³²) + E·(1 − (1 − p)³²)
# ratio(p) = -------------------------------
#                   (1 − p)·D + p·E
# ```
#
# **Predict before you read on:** with D = E, what is the ratio at p = 1/2? At p = 5%? At 1%? Only
# at what fractions of kind 1 is divergence nearly free?

# %%
def predicted_slowdown(p, D, E, warp=WARP):
    p = np.asarray(p, dtype=np.float64)
    mixed = D * (1 - p ** warp) + E * (1 - (1 - p) ** warp)
    return mixed / ((1 - p) * D + p * E)


p_axis = np.linspace(0, 1, 401)
fig, ax = plt.subplots(figsize=(7, 3.6))
for D_, E_ in ((64, 64), (64, 16), (16, 64)):
    ax.plot(p_axis, predicted_slowdown(p_axis, D_, E_), label=f"D = {D_}, E = {E_}")
ax.set_xlabel("fraction of elements of kind 1 (independent, mixed)")
ax.set_ylabel("mixed / grouped time (model)")
ax.set_title("the cost of divergence, counted")
ax.grid(alpha=0.3)
ax.legend()
plt.show()
for p in (0.01, 0.05, 0.5):
    print(f"p = {p:4.2f}: {predicted_slowdown(p, 64, 64):.2f}× for D = E = 64")

# %% [markdown]
# Even 1% of the minority kind makes a quarter of the warps diverge (1 − 0.99³² ≈ 0.27): a rare
# branch is not a cheap branch on a GPU, unless it is rare *per warp*. And when the rare kind is
# the expensive one (the green curve), a few percent of it can make the whole computation more
# than three times slower: nearly every warp pays for the long branch on behalf of one or two
# lanes.
#
# ## Exercise 4.3 · Group the work by kind (3 points + 2 for speed)
#
# Now the elements come grouped by kind: `order` (int32) lists the indices of the elements of kind
# 0, then those of kind 1, each group in increasing order (what
# `np.argsort(kind, kind="stable")` gives), and the data arrive in that order:
# `x_sorted = x[order]`, `kind_sorted = kind[order]`. (Grouping is done once on the host here;
# PMPP chapter 13 sorts on the GPU.)
#
# Write `uniform_kernel(x_sorted, kind_sorted, order, a, b, out)`. Thread `t = cuda.grid(1)`, if
# `t < n`, computes the result for **sorted element t** (from `x_sorted[t]` and `kind_sorted[t]`,
# with exercise 4.2's two forms) and stores it where that element came from: `out[order[t]]`.
# The output is the same as `divergent_kernel`'s. In every warp but the one where the kinds
# change, all 32 lanes take the same branch. Roughly 12 lines; float32 arithmetic, as before.
#
# **What the check does.** As for 4.2 (same sizes, tolerances and launch), with the inputs grouped
# and `out[order[t]]` compared with the spec. A kernel that stores at `out[t]` writes every result
# at the wrong place, and one that reads `x_sorted[order[t]]` takes the wrong element's value:
# both fail.
#
# **The speed test** (on a GPU, 2 points): n = 2²⁴ elements, half of each kind at random, D = E =
# 128, blocks of 256 threads, one thread per element. You need at least 70% of the speed of the
# course's reference kernel and 20× a parallel Numba loop on all the host's cores. On the
# course's H200 the reference took 2.15 ms, and the same work with both kinds in every warp
# 4.30 ms, 50% of the reference's speed (`docs/benchmarks.md`): divergence alone fails the bar.
# In CPU mode the speed cell says it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "uniform_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def uniform_kernel(x_sorted, kind_sorted, order, a, b, out):
    ### BEGIN SOLUTION
    t = cuda.grid(1)
    if t < x_sorted.size:
        xt = x_sorted[t]
        if kind_sorted[t] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xt + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xt
        out[order[t]] = acc
    ### END SOLUTION


# %% [markdown]
# Try it on the small case of 4.2: the same output, from grouped inputs.

# %%
order = ag.problems.ch04.group_by_kind(kind)            # = np.argsort(kind, kind="stable")
d_out2 = cuda.to_device(np.full(n, np.nan, np.float32))
uniform_kernel[(n + 127) // 128, 128](cuda.to_device(x[order]), cuda.to_device(kind[order]),
                                       cuda.to_device(order), cuda.to_device(a), cuda.to_device(b),
                                       d_out2)
got2 = d_out2.copy_to_host()
print(f"elements never written: {np.isnan(got2).sum()}; largest difference from divergent_kernel's "
      f"output: {np.nanmax(np.abs(got2 - got)):.2e}")

# %% nbgrader={"grade": true, "grade_id": "uniform_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch04.uniform.check(uniform_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch04.uniform.check_hidden(uniform_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "uniform_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch04.uniform.check_speed(uniform_kernel)

# %% [markdown]
# ## Measure it: mixed against grouped
#
# On a GPU, the cell below times your two kernels on 2²⁴ elements with D = E = 64, for fractions
# of kind 1 from 0 to 1/2, and sets the measured ratio against the count's prediction. It also
# reports each kernel's GFLOP/s (counting the useful 2·64 FLOPs per element) against the peak
# FP32 rate from Exercise 4.1. In CPU mode it shows the prediction only: the simulator's times
# say nothing about a GPU.

# %%
fractions = (0.0, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5)
n_gpu, degree = 1 << 24, 64
measured = []
why = ag.timing.not_measured()
if not why:
    g = np.random.default_rng(3)
    x_h = g.uniform(-1, 1, n_gpu).astype(np.float32)
    d_a = cuda.to_device(g.uniform(-1, 1, degree).astype(np.float32))
    d_b = cuda.to_device(g.uniform(-0.4, 0.4, degree).astype(np.float32))
    d_x, d_out = cuda.to_device(x_h), cuda.device_array(n_gpu, np.float32)
    blocks, flops = (n_gpu + 255) // 256, 2 * degree * n_gpu
    print(f"{'kind 1':>7s} {'mixed ms':>9s} {'grouped ms':>11s} {'ratio':>6s} {'model':>6s}"
          f" {'mixed GFLOP/s':>14s} {'grouped GFLOP/s':>16s} {'of FP32 peak':>13s}")
    for p in fractions:
        kind_h = (g.random(n_gpu) < p).astype(np.uint8)
        order_h = ag.problems.ch04.group_by_kind(kind_h)
        d_kind = cuda.to_device(kind_h)
        d_xs, d_ks, d_order = (cuda.to_device(v) for v in (x_h[order_h], kind_h[order_h], order_h))
        mixed = ag.timing.time_gpu("mixed", lambda i: divergent_kernel[blocks, 256](
            d_x, d_kind, d_a, d_b, d_out), flops=flops)
        grouped = ag.timing.time_gpu("grouped", lambda i: uniform_kernel[blocks, 256](
            d_xs, d_ks, d_order, d_a, d_b, d_out), flops=flops)
        ratio = mixed.median_ms / grouped.median_ms
        measured.append((p, ratio))
        print(f"{p:7.2f} {mixed.median_ms:9.3f} {grouped.median_ms:11.3f} {ratio:6.2f}"
              f" {predicted_slowdown(p, degree, degree):6.2f} {mixed.gflops:14,.0f}"
              f" {grouped.gflops:16,.0f} {grouped.gflops * 1e9 / peak_flops:13.0%}")
else:
    print(why, "On a GPU, this cell times divergent_kernel and uniform_kernel on "
          f"{n_gpu:,} elements for kind-1 fractions {fractions}. Below: the prediction only.")

fig, ax = plt.subplots(figsize=(7, 3.6))
ax.plot(p_axis[p_axis <= 0.5], predicted_slowdown(p_axis[p_axis <= 0.5], degree, degree),
        color="black", label="counted (model)")
if measured:
    ax.plot(*zip(*measured), "o", color="tab:red", label="measured on this GPU")
ax.set_xlabel("fraction of elements of kind 1")
ax.set_ylabel("mixed time / grouped time")
ax.set_title(f"divergence, D = E = {degree}")
ax.grid(alpha=0.3)
ax.legend()
plt.show()

# %% [markdown]
# What to look for in the numbers: at p = 0 both kernels do the same thing (the grouped one also
# reads `order` and stores through it); from a few percent on, the ratio climbs towards 2 as the
# count predicts, as long as the arithmetic, not memory, sets the time. Where the measured ratio
# falls short of the model, something other than issuing the two loops takes part of the time
# (loading the coefficients, the memory traffic, the scattered stores of the grouped kernel).
# And however the elements are ordered, a kernel at a few percent of the FP32 peak is limited by
# something else entirely: the `a[k]` and `b[k]` loads in every step, and the dependency of each
# step on the one before (chapter 6 has the tools: more independent work per thread).
#
# ## Warp scheduling and latency hiding (§4.6)
#
# An SM holds far more warps than it can issue in a cycle: up to 64 resident warps on an H200 for
# 4 schedulers that issue one instruction each per cycle. That is on purpose. An instruction
# whose operands are not ready stalls its warp: a few cycles for an arithmetic result, hundreds of
# cycles for a load from global memory. Each cycle, each scheduler picks a warp **that is ready**
# and issues its next instruction. Switching warps costs nothing, because every resident warp
# keeps its own registers on the SM all the time. With enough ready warps the schedulers never
# idle, and the long waits are **hidden** behind other warps' work.
#
# How many is enough? **Little's law**: the work in flight equals the throughput times the
# latency. To stream memory at 4.8 TB/s with a latency of roughly 600 cycles (0.3 µs at 1.98 GHz),
# about 4.8 TB/s × 0.3 µs ≈ 1.4 MB must be on its way at every moment: about 11 KB per SM, or
# some 2,700 loads of 4 bytes per SM, more loads than the 2,048 threads an SM can hold if each
# thread has only one load in flight. A memory-bound kernel needs many resident warps, or several
# independent loads per thread, or both.
#
# ## Resource partitioning and occupancy (§4.7)
#
# The resident blocks of an SM share its resources, and each block holds its share from start to
# finish. Four limits decide how many blocks of a kernel fit on one SM at once:
#
# 1. **Warp slots**: at most `max_threads_per_sm / warp_size` warps (64 on an H200); a block of
#    `T` threads takes `W = ceil(T / warp_size)` of them (a partial warp takes a whole slot).
# 2. **Block slots**: at most `max_blocks_per_sm` blocks (32 on an H200), however small.
# 3. **Registers**: each warp gets `R · warp_size` registers (`R` per thread, as the compiler
#    decided), rounded **up** to a multiple of `reg_alloc_unit` (256). A warp's registers come from
#    the register file of the processing block (sub-partition) it runs on, which has
#    `regs_per_sm / sub_partitions` registers (65,536 / 4 = 16,384): only **whole warps** fit in
#    each. So `(regs_per_sm / sub_partitions) // registers per warp` warps per sub-partition,
#    times `sub_partitions`, is how many warps the registers allow, and that `// W` is the number
#    of blocks. If this gives 0, the launch fails ("too many resources requested for launch").
# 4. **Shared memory**: each block gets the shared memory it uses, `S` bytes (static and dynamic),
#    plus `smem_reserved_per_block` (1 KB that the driver keeps per block from compute capability
#    8.0 on), rounded **up** to a multiple of `smem_alloc_unit` (128 bytes); `smem_per_sm`
#    (233,472 bytes on an H200) `//` that many blocks fit. A block that needs no shared memory at
#    all (possible only where the reserve is 0) sets no limit.
#
# The number of resident blocks is the smallest of the four; the **occupancy** is the share of
# the warp slots they fill: `blocks · W / (max_threads_per_sm / warp_size)`. Example, H200,
# blocks of 256 threads (W = 8), 40 registers per thread, 20,000 bytes of shared memory: warp
# slots allow 64 / 8 = 8 blocks, block slots 32; a warp needs 40 · 32 = 1,280 registers (already a
# multiple of 256), a sub-partition holds 16,384 // 1,280 = 12 warps, the SM 48, so 48 // 8 = 6
# blocks; a block's shared memory is 20,000 + 1,024 = 21,024 bytes, rounded up to 21,120, and
# 233,472 // 21,120 = 11 blocks. Registers limit it: **6 blocks, 48 warps, occupancy 75%**.
#
# These are the rules of CUDA's occupancy calculator (`cuda_occupancy.h`, which
# `cudaOccupancyMaxActiveBlocksPerMultiprocessor` follows) for a kernel with the default split
# between L1 and shared memory.
#
# ## Exercise 4.4 · Occupancy (3 points)
#
# Write `occupancy(threads_per_block, regs_per_thread, smem_per_block, limits)`: three Python
# ints and a dict of ints with the keys `warp_size`, `max_threads_per_sm`, `max_blocks_per_sm`,
# `regs_per_sm`, `reg_alloc_unit`, `sub_partitions`, `smem_per_sm`, `smem_alloc_unit` and
# `smem_reserved_per_block` (the H200's are in `ag.problems.ch04.H200`, other devices' in
# `ag.problems.ch04.DEVICES`). Return `(blocks_per_sm, occupancy)`: the number of resident blocks
# (a whole number) and the occupancy as a fraction between 0 and 1, by the four rules above.
# Roughly 10 lines.
#
# **What the check does.** It calls your function on 9 visible cases (on the H200: 256 threads at
# 32 and at 64 registers; 64 threads at 40 registers, where the sub-partitions matter; 46,000 bytes
# of shared memory, where the reserve matters; 100 threads; 1,024 threads at 72 registers, which
# does not fit; 32 threads at 16 registers, where the block slots bind; then an RTX 4090 and a
# V100), and the hidden tests on 300 random ones: real devices and imaginary ones (warps of 64,
# other allocation units and sub-partitions), so no figure can be hard-coded. Blocks must be
# exact; the occupancy within a few float64 roundings.

# %% nbgrader={"grade": false, "grade_id": "occupancy_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def occupancy(threads_per_block, regs_per_thread, smem_per_block, limits):
    """(resident blocks per SM, occupancy) of a kernel with these resources on this device."""
    ### BEGIN SOLUTION
    warp = limits["warp_size"]
    warps_per_block = -(-threads_per_block // warp)
    max_warps = limits["max_threads_per_sm"] // warp
    by_warps = max_warps // warps_per_block
    by_slots = limits["max_blocks_per_sm"]
    unit = limits["reg_alloc_unit"]
    regs_per_warp = -(-regs_per_thread * warp // unit) * unit
    per_partition = limits["regs_per_sm"] // limits["sub_partitions"] // regs_per_warp
    by_regs = per_partition * limits["sub_partitions"] // warps_per_block
    unit = limits["smem_alloc_unit"]
    smem = -(-(smem_per_block + limits["smem_reserved_per_block"]) // unit) * unit
    by_smem = limits["smem_per_sm"] // smem if smem else by_slots
    blocks = min(by_warps, by_slots, by_regs, by_smem)
    return blocks, blocks * warps_per_block / max_warps
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "occupancy_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch04.occupancy.check(occupancy)
### BEGIN HIDDEN TESTS
ag.problems.ch04.occupancy.check_hidden(occupancy)
### END HIDDEN TESTS

# %% [markdown]
# Your function, drawn: resident warps per SM on an H200 against registers per thread, for a few
# block sizes, without shared memory. The steps are the register rounding and the whole warps per
# sub-partition; the flat tops are the warp slots; and large blocks fall off cliffs, because a
# block is resident entirely or not at all.

# %%
H200 = ag.problems.ch04.H200
regs_axis = np.arange(16, 256)
fig, ax = plt.subplots(figsize=(7, 4))
for T, width in ((64, 6), (128, 4.5), (256, 3), (512, 2), (1024, 1.2)):   # wide lines underneath
    warps = [occupancy(T, int(r), 0, H200)[0] * -(-T // 32) for r in regs_axis]
    ax.step(regs_axis, warps, where="post", lw=width, label=f"{T} threads per block")
ax.set_xlabel("registers per thread")
ax.set_ylabel("resident warps per SM (of 64)")
ax.set_title("H200: occupancy against registers (no shared memory)")
ax.grid(alpha=0.3)
ax.legend()
plt.show()

# %% [markdown]
# ## Measure it: what the compiler and the driver say
#
# Registers per thread are the compiler's choice, not yours: after a kernel has been compiled
# (launched once), `kernel.get_regs_per_thread()`, `kernel.get_shared_mem_per_block()` and
# `kernel.get_local_mem_per_thread()` (bytes of registers *spilled* to slow local memory) report
# what it uses, one entry per compiled signature. The driver's own occupancy calculator answers
# through a compiled kernel's `max_cooperative_grid_blocks(threads, dynamic_shared_bytes)`: the
# number of blocks that fit on the whole GPU at once, which divided by the SM count is the
# driver's resident blocks per SM. `cuda.jit(max_registers=N)` asks the compiler to use at most N
# registers (spilling the rest).
#
# On a GPU, the first cell compares your prediction with the driver's for your two kernels, and
# for `uniform_kernel` recompiled with at most 32 and at most 24 registers. The second times a
# plain copy kernel whose occupancy is set by asking for **dynamic shared memory it does not use**
# (the 4th launch parameter, `kernel[blocks, threads, 0, shared_bytes]`): the padding caps the
# resident blocks, one launch wave fills exactly that many per SM, and the bandwidth is measured
# at each occupancy. In CPU mode both cells show your predictions on the H200 only; the simulator
# compiles nothing and reports no resources.

# %%
def limits_of(props):
    """The occupancy limits of this device: the properties plus the architecture's allocation
    units (cuda_occupancy.h: 256 registers, 4 sub-partitions; shared memory in units of 128
    bytes from compute capability 8.0 on, 256 before)."""
    return {"warp_size": props["WARP_SIZE"], "max_threads_per_sm": props["MAX_THREADS_PER_MULTIPROCESSOR"],
            "max_blocks_per_sm": props["MAX_BLOCKS_PER_MULTIPROCESSOR"],
            "regs_per_sm": props["MAX_REGISTERS_PER_MULTIPROCESSOR"], "reg_alloc_unit": 256,
            "sub_partitions": 4, "smem_per_sm": props["MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"],
            "smem_alloc_unit": 128 if compute_capability >= (8, 0) else 256,
            "smem_reserved_per_block": props["RESERVED_SHARED_MEMORY_PER_BLOCK"] or 0}


limits = limits_of(props)
sm_count = props["MULTIPROCESSOR_COUNT"]
threads_per_block = 256
if ag.backend.is_gpu:
    def only(d):                           # one compiled signature -> its value
        return next(iter(d.values())) if isinstance(d, dict) else d

    sig = "void(float32[::1], uint8[::1], int32[::1], float32[::1], float32[::1], float32[::1])"
    kernels = {"divergent_kernel": divergent_kernel, "uniform_kernel": uniform_kernel}
    for cap in (32, 24):
        capped = cuda.jit(sig, max_registers=cap)(uniform_kernel.py_func)
        kernels[f"uniform_kernel, max_registers={cap}"] = capped
    print(f"{threads_per_block} threads per block on {device_name}:")
    print(f"  {'kernel':36s} {'regs':>5s} {'shared':>7s} {'spilled':>8s} {'yours':>16s} {'driver':>7s}")
    for name, k in kernels.items():
        regs, smem = only(k.get_regs_per_thread()), only(k.get_shared_mem_per_block())
        spill = only(k.get_local_mem_per_thread())
        blocks, occ = occupancy(threads_per_block, regs, smem, limits)
        driver = only(k.overloads).max_cooperative_grid_blocks(threads_per_block, 0) // sm_count
        print(f"  {name:36s} {regs:5d} {smem:6d}B {spill:7d}B {int(blocks):4d} blocks {occ:5.0%}"
              f" {driver:7d}")
else:
    print("The simulator compiles nothing: register counts and the driver's calculator need a GPU.")
    for regs in (16, 24, 32, 40, 48, 64):
        blocks, occ = occupancy(threads_per_block, regs, 0, limits)
        print(f"  H200, {threads_per_block} threads, {regs:2d} registers per thread: {int(blocks)} blocks, "
              f"occupancy {occ:.0%}")

# %%
@cuda.jit
def stream_copy(x, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = x[i]


def padding_for(blocks_per_sm, limits):
    """Dynamic shared memory per block that leaves room for exactly this many blocks per SM."""
    unit = limits["smem_alloc_unit"]
    return (limits["smem_per_sm"] // blocks_per_sm) // unit * unit - limits["smem_reserved_per_block"]


# (threads per block, blocks per SM the padding allows): 5 to 64 resident warps on an H200.
# Below 5 blocks the padding would pass 48 KB per block, which needs an opt-in.
configs = ((32, 5), (32, 8), (64, 6), (64, 8), (64, 12), (64, 16), (64, 24), (64, 32))
rows = []
why = ag.timing.not_measured()
if not why:
    n_copy = 1 << 26
    d_src, d_dst = cuda.device_array(n_copy, np.float32), cuda.device_array(n_copy, np.float32)
    ag.timing.fill_uniform(d_src, seed=1)
    stream_copy[sm_count, 64](d_src, d_dst)                # compile once
    regs = only(stream_copy.get_regs_per_thread())
    ceiling = ag.timing.copy_ceiling(8 * n_copy)
    for T, k in configs:
        pad = padding_for(k, limits)
        blocks, occ = occupancy(T, regs, pad, limits)
        driver = only(stream_copy.overloads).max_cooperative_grid_blocks(T, pad) // sm_count
        grid = sm_count * max(driver, 1)
        s = ag.timing.time_gpu("copy", lambda i: stream_copy[grid, T, 0, pad](d_src, d_dst),
                               nbytes=8 * n_copy)
        rows.append((T, pad, blocks, occ, driver, s.gbps))
    print(f"stream_copy ({regs} registers per thread); copy ceiling {ceiling.gbps:,.0f} GB/s")
else:
    regs = 16                                               # assumed: a copy kernel needs few
    for T, k in configs:
        pad = padding_for(k, limits)
        blocks, occ = occupancy(T, regs, pad, limits)
        rows.append((T, pad, blocks, occ, None, None))
    print(why, "Your predictions on the H200 (registers assumed: 16); on a GPU the bandwidth "
          "columns are measured.")
print(f"  {'threads':>7s} {'padding':>8s} {'yours':>16s} {'driver':>7s} {'GB/s':>7s}")
for T, pad, blocks, occ, driver, gbps in rows:
    print(f"  {T:7d} {pad:7d}B {int(blocks):4d} blocks {occ:5.0%} "
          + (f"{driver:7d} {gbps:7,.0f}" if gbps else f"{'-':>7s} {'-':>7s}"))
if rows and rows[0][5]:
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot([r[3] for r in rows], [r[5] for r in rows], "o-", label="stream_copy")
    ax.axhline(ceiling.gbps, ls=":", color="grey", label="copy ceiling")
    ax.set_xlabel("occupancy (your prediction)")
    ax.set_ylabel("GB/s")
    ax.set_ylim(0, None)
    ax.grid(alpha=0.3)
    ax.legend()
    plt.show()

# %% [markdown]
# Without a GPU, the course's H200 measurements in `docs/benchmarks.md` make the same point with
# a vector add (a grid-stride loop whose occupancy was set by the grid's size rather than by
# padding): 4 blocks of 256 threads per SM, **32 resident warps (50%), reached 2,678 GB/s**; 4
# blocks of 512 or 8 of 256, **64 warps (100%), 3,649–3,651 GB/s**; grids of 16 or 32 blocks of
# 256 per SM (more than fit at once, so still 64 warps), no better (3,641–3,660 GB/s). The copy
# ceiling in that run was 4,269 GB/s.
#
# **Explain the gap (2 points, graded by your instructor).** Use your measurements (on a GPU) or
# the H200 numbers just above (without one). In four to eight sentences: (1) did your predicted
# blocks per SM agree with the driver's for every kernel and padding? If not, which rule made the
# difference; and how did `max_registers` change the registers, the spills and the occupancy?
# (2) How does the bandwidth change with occupancy, and why does it drop at low occupancy? Use
# latency hiding and Little's law with rough numbers. (3) Why does it stop improving before 100%
# occupancy, and stay below the copy ceiling? What else, besides more warps, keeps enough bytes in
# flight? A full-mark answer answers all three with numbers.

# %% [markdown] nbgrader={"grade": true, "grade_id": "occupancy_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only).* (1) The prediction and the driver should agree for every
# kernel and padding: both apply the same four limits with the same rounding (registers per warp
# in units of 256, whole warps per sub-partition, shared memory plus the 1 KB reserve in units of
# 128 bytes). A mismatch would point at a rule left out, typically the sub-partitions or the
# reserve. Capping registers with `max_registers` lowers the count the driver sees and can raise
# the occupancy, but the compiler then spills values to local memory (reported as local bytes per
# thread), which costs memory traffic; read the table for how much it changed here. (2) The
# bandwidth grows with the resident warps because each warp has only a load or two in flight: to
# keep about 4.8 TB/s × 0.3 µs ≈ 1.4 MB in flight the H200 needs roughly 2,700 4-byte loads in
# flight per SM, more than 5–16 warps (160–512 threads) can supply, so at low occupancy the memory
# system idles while every warp waits; on the course's H200 the grid-stride vector add with 4
# blocks of 256 per SM (50% occupancy) gave 2,678 GB/s and with 8 or more (100%) about 3,650.
# (3) Once enough loads are in flight, the memory system, not the warps, is the limit: more warps
# only queue behind it, which is why 8 to 32 blocks of 256 per SM all gave the same time
# (0.880–0.885 ms). The remaining gap to the copy ceiling (86% of it) is the code itself: each
# iteration's loads of `x` and `y` are issued after the previous iteration's store to `out`, which
# needs that iteration's loads back first (the compiler may not move a load above a store that,
# for all it knows, writes the same memory), so a thread has one element's loads in flight.
# Unsigned indices alone changed nothing (0.884 ms); four elements per thread per iteration, all
# eight loads before the four stores, took 0.836 ms, 91% of the copy (`docs/benchmarks.md`). More
# independent loads per thread keep bytes in flight without more warps: occupancy is a means to
# hide latency, not a goal.

# %% [markdown]
# Questions to answer for yourself (not graded):
# 1. A kernel uses 33 registers per thread instead of 32. How many warps per SM fit now on an H200,
#    by registers alone? Which of your kernels would care?
# 2. Blocks of 1,024 threads fill an SM's 64 warp slots with 2 blocks at up to 32 registers per
#    thread; at 33 to 64 registers only 1 fits (half the slots). What happens to the SM between
#    the end of one such block and the start of the next? Why do smaller blocks often balance
#    better?
# 3. In `divergent_kernel`, does `if i < x.size:` cause divergence? In which warps, and how much
#    does it cost?
#
# ## Going further
# - PMPP ch. 4: §4.1 (architecture of a modern GPU), §4.2 (block scheduling), §4.3
#   (synchronization and transparent scalability), §4.4 (warps and SIMD hardware), §4.5 (control
#   divergence), §4.6 (warp scheduling and latency tolerance), §4.7 (resource partitioning and
#   occupancy), §4.8 (querying device properties). Chapter 6 (performance considerations) and
#   chapter 10 (reductions) use warps on purpose; chapter 13 sorts on the GPU.
# - GPU MODE lecture 4 (compute and memory basics, PMPP ch. 4–5) and lecture 8 (the CUDA
#   performance checklist: occupancy, divergence, coalescing). NVIDIA's CUDA C++ Programming Guide
#   (SIMT architecture, independent thread scheduling; the compute capabilities table) and Best
#   Practices Guide (occupancy); Nsight Compute's occupancy section reports the *achieved*
#   occupancy of a run next to the theoretical one you computed.
# - **On AMD (HIP):** a **wavefront** has 64 lanes on the CDNA data-centre GPUs (MI200, MI300),
#   so a divergent branch idles up to 63 lanes, and a rare branch reaches more wavefronts: with
#   1% of the minority kind, 1 − 0.99⁶⁴ ≈ 47% of 64-lane wavefronts diverge, against 27% of
#   32-lane warps. RDNA (gaming) GPUs can run wavefronts of 32. A compute
#   unit (CU, AMD's SM) has four SIMD units, each with its own vector register file, and 64 KB of
#   LDS (shared memory) on most chips (160 KB on MI355X); occupancy is counted in wavefronts per
#   SIMD, with rules of the same shape as above and AMD's own figures. The compiler reports a
#   kernel's registers and LDS with `-Rpass-analysis=kernel-resource-usage` (hipcc); with
#   numba-hip, check which of Numba's kernel queries (`get_regs_per_thread`, ...) your version
#   provides. In CPU mode, `AAG_WARP_SIZE=64` makes the simulator's warps 64 wide: this
#   chapter's counts (`warp_steps`, `predicted_slowdown`) then use 64-lane warps.
