# %% [markdown]
# # Chapter 2 · Data-parallel computing: vector addition
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 2.
#
# **Before you start:** chapter 1. **Time:** about 2 hours, reading and exercises included (more in
# CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Write a kernel **and the host code that launches it**: choose a block size, compute how many
#   blocks cover `n` elements, and keep the extra threads from writing where they must not.
# - Time the GPU correctly with a timer of your own: **CUDA events** around each launch (a launch
#   returns before its kernel ends), a warm-up call first (the first call compiles), the median
#   of several runs.
# - Write a **grid-stride loop**, so one launch of any size handles an array of any length.
# - Say, with your own measurements, **when the GPU loses to the CPU**: a vector addition moves 12
#   bytes for every single addition, and getting those bytes onto the GPU costs far more than
#   adding them there. Measure what that copy costs, and how to make it cheaper.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import time

import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda

ag.banner()

# %% [markdown]
# ## The idea: two memories, one program
#
# A CUDA program runs on two processors. The **host** (the CPU) runs your Python; the **device**
# (the GPU) runs kernels. Each has its own memory, joined by a link that is much slower than
# either memory. Data a kernel reads must be on the device first, and results come back the same
# way (PMPP §2.4). The numbers below show why this matters.

# %%
fig, ax = plt.subplots(figsize=(7, 2.6))
parts = [("CPU memory\n(DDR5, 8 channels)", 0.30, "~300 GB/s"),
         ("PCIe 5.0 x16\n(each way)", 0.064, "~64 GB/s"),
         ("H200 memory\n(HBM3e)", 4.8, "~4,800 GB/s")]
for k, (name, tbps, label) in enumerate(parts):
    ax.barh(k, tbps, color=["#7a9cc6", "#d98b5f", "#76b041"][k])
    ax.text(tbps + 0.05, k, label, va="center")
ax.set_yticks(range(len(parts)), [p[0] for p in parts])
ax.set_xlabel("bandwidth (TB/s, vendor figures)")
ax.set_xlim(0, 6)
ax.set_title("The link between host and device is the narrow part")
plt.tight_layout()
plt.show()

# %% [markdown]
# A kernel call therefore has three costs: copy the inputs to the device, run the kernel, copy
# the result back. Numba does the copies for you if you pass NumPy arrays to a kernel, silently,
# on every call. In this course you move data explicitly, so that you always know where it is:
#
# | call | what it does |
# |---|---|
# | `d = cuda.to_device(a)` | allocate device memory and copy the NumPy array `a` into it |
# | `d = cuda.device_array(n, dtype=np.float32)` | allocate device memory, uninitialised |
# | `d.copy_to_host()` | copy back into a new NumPy array |
# | `kernel[blocks, threads](args...)` | launch `blocks × threads` threads running `kernel` |
#
# ## The CPU baseline
#
# Every number in this course is compared with something. For vector addition, NumPy's
# `np.add` runs on one CPU core and reads and writes memory about as fast as that core can.

# %%
n = 1 << 22
rng = np.random.default_rng(0)
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
out = np.empty_like(x)

runs = []
for _ in range(5):
    t0 = time.perf_counter()
    np.add(x, y, out=out)
    runs.append(time.perf_counter() - t0)
seconds = float(np.median(runs))
print(f"NumPy, n = {n:,}: {seconds * 1e3:.2f} ms, "
      f"{12 * n / seconds / 1e9:.1f} GB/s (12 bytes per element: two reads and one write)")

# %% [markdown]
# ## Exercise 2.1 · Vector addition, one thread per element (3 points)
#
# Write two things:
#
# 1. `vector_add_kernel(x, y, out)`: a kernel in which the thread with global index
#    `i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x` (or `cuda.grid(1)`) computes
#    `out[i] = x[i] + y[i]`, **only if `i < out.size`**.
# 2. `add_vectors(x, y, out)`: a host function that receives three **device arrays** of the same
#    length and launches your kernel with enough blocks to cover every element. Pick a block size
#    (a multiple of 32 up to 1024; 128 or 256 are good defaults) and compute
#    `blocks = ceil(n / threads)` with integers: `(n + threads - 1) // threads`.
#
# Roughly 4 lines in the kernel, 3 in the launcher.
#
# **What the check does.** It fills `out` with NaN, calls `add_vectors` on lengths that are not
# multiples of any block size (1025, 1023 and 1; the hidden tests use other lengths), copies `out`
# back and compares every element with the exact sum computed in float64. A float32 addition is
# *correctly rounded*, so your result may differ from the exact sum by at most one rounding:
# `|got − exact| ≤ 2⁻²⁴ · |exact|`. An element still NaN was never written; a value written past
# the end of `out` is caught too.

# %% nbgrader={"grade": false, "grade_id": "vector_add_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def vector_add_kernel(x, y, out):
    ### BEGIN SOLUTION
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = x[i] + y[i]
    ### END SOLUTION


def add_vectors(x, y, out):
    ### BEGIN SOLUTION
    threads = 256
    blocks = (out.size + threads - 1) // threads
    vector_add_kernel[blocks, threads](x, y, out)
    ### END SOLUTION


# %% [markdown]
# Try it by hand first, on a tiny input you can read:

# %%
dx = cuda.to_device(np.arange(10, dtype=np.float32))
dy = cuda.to_device(np.full(10, 100, dtype=np.float32))
dout = cuda.device_array(10, dtype=np.float32)
add_vectors(dx, dy, dout)
print(dout.copy_to_host())

# %% nbgrader={"grade": true, "grade_id": "vector_add_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch02.vector_add.check(add_vectors)
### BEGIN HIDDEN TESTS
ag.problems.ch02.vector_add.check_hidden(add_vectors)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: one block too few, then no bounds check
#
# Two mistakes everyone makes once. The cell below launches a copy of the kernel with
# `n // threads` blocks (rounding down) and then with a kernel that has no `if i < n`. It runs with
# `%%isolated`, in a **separate Python process**: on a GPU, a write past the end of an array can
# corrupt other data silently or stop the GPU with an *illegal address* error, after which the
# process's CUDA context is unusable until it restarts. The separate process takes that hit, not
# this notebook.
#
# Predict before you run: which elements stay NaN in the first launch? What happens in the second?

# %%
# %%isolated
import numpy as np
from numba import cuda

@cuda.jit
def add_no_guard(x, y, out):
    i = cuda.grid(1)
    out[i] = x[i] + y[i]          # no `if i < out.size`

n, threads = 1000, 128
x = cuda.to_device(np.ones(n, np.float32))
y = cuda.to_device(np.ones(n, np.float32))
out = cuda.to_device(np.full(n, np.nan, np.float32))

add_no_guard[n // threads, threads](x, y, out)      # 7 blocks: 896 threads for 1000 elements
host = out.copy_to_host()
print("never written:", np.flatnonzero(np.isnan(host))[[0, -1]], "->", np.isnan(host).sum(), "elements")

add_no_guard[(n + threads - 1) // threads, threads](x, y, out)   # 8 blocks: 1024 threads
cuda.synchronize()
print("second launch finished without an error")

# %% [markdown]
# In CPU mode the simulator checks every index, so the second launch stops with an `IndexError`
# that names the thread. A real GPU does not check: threads 1000 to 1023 write past the end of
# `out`, into whatever lies there. Usually nothing complains, and the damage shows up later, far
# from its cause. That is why the course's checks place a guard zone after every output and
# report any write into it.
#
# ## Timing the GPU: a launch returns before the kernel ends
#
# Before measuring anything: how do you time a kernel? A host clock around the call gives the
# wrong answer, in two ways. See both on a kernel the course provides: each call of `launch()`
# below starts about 20 ms of work on the GPU.

# %%
launch = ag.problems.ch02.busy_kernel(ms=20)

for call in range(3):
    t0 = time.perf_counter()
    launch()
    t1 = time.perf_counter()
    cuda.synchronize()                 # wait until the GPU has finished everything launched
    t2 = time.perf_counter()
    print(f"call {call}: launch() returned after {(t1 - t0) * 1e3:8.3f} ms, "
          f"the GPU was done after {(t2 - t0) * 1e3:8.3f} ms")

# %% [markdown]
# Two things show:
#
# 1. **A launch is asynchronous.** `kernel[blocks, threads](...)` queues the kernel for the GPU
#    and returns at once, after some microseconds, while the GPU works on. `time.perf_counter()`
#    read right after the call measures the launch, not the kernel. The GPU runs what it is
#    given in order (it is one *stream* of work), and `cuda.synchronize()` makes the host wait
#    until all of it is done.
# 2. **The first call compiles.** Numba compiles a kernel the first time it is launched, on the
#    host, before the GPU runs anything: call 0 took hundreds of milliseconds more than the
#    others. Time only after a warm-up call.
#
# CPU mode behaves the same way here: the course gives the simulator a stream on which
# `busy_kernel`'s work runs while your code goes on, and a pause on the first call stands for
# the compilation. The kernels you write still run in the simulator, one at a time, after the
# work queued before them.
#
# A host clock with `cuda.synchronize()` after the launch is closer, but it also counts the
# launch's own cost on the host and the time the host takes to notice that the GPU is done. The
# GPU can time itself instead. A **CUDA event** is a marker you put into the stream; the GPU
# stamps it with its own clock when it reaches it.
#
# | call | what it does |
# |---|---|
# | `e = cuda.event()` | make an event |
# | `e.record()` | put it into the stream, after everything launched so far; returns at once |
# | `e.synchronize()` | wait until the GPU has reached it (so everything launched before it is done) |
# | `cuda.event_elapsed_time(start, end)` | the time from `start` to `end`, in **milliseconds** (a float) |
#
# Reading the time of an event the GPU has not reached yet is an error (`CUDA_ERROR_NOT_READY`),
# and so is reading one that was never recorded.
#
# One run is not enough: times vary from run to run (other work on the GPU, clocks that change
# with temperature and load). Time several runs and report the **median**. One slow run drags
# the mean up; it barely moves the median.
#
# ## Exercise 2.2 · A GPU timer (2 points)
#
# Write `time_ms(launch, repeats)`. `launch()` starts work on the GPU and returns at once. Call
# it once as a warm-up, then time `repeats` runs of it with CUDA events, one launch per run, and
# return the median time of one run in milliseconds, as a number. Roughly 10 lines.
#
# **What the check does.** It passes your function a `launch` whose first call compiles a fresh
# kernel and whose runs each take a different time: a base time per case (10 to 20 ms in CPU
# mode, 8 to 16 ms on a GPU) give or take 25 %, and every third run about four times longer. The
# check knows how long each run really took, and it sees which events you recorded around which
# launches and which times you read from them. Your result must be within 5 % of the median of
# the runs you timed, and it must be the median of what your own events measured, over `repeats`
# runs, none of them the first call. The hidden tests use other times and `repeats` up to 9.

# %% nbgrader={"grade": false, "grade_id": "gpu_timer_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def time_ms(launch, repeats):
    ### BEGIN SOLUTION
    launch()                           # warm-up: the first call compiles
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    times = []
    for _ in range(repeats):
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cuda.event_elapsed_time(start, end))
    return float(np.median(times))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "gpu_timer_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch02.gpu_timer.check(time_ms)
### BEGIN HIDDEN TESTS
ag.problems.ch02.gpu_timer.check_hidden(time_ms)
### END HIDDEN TESTS

# %% [markdown]
# Your timer on the kernel from above (about 20 ms a run):

# %%
print(f"{time_ms(ag.problems.ch02.busy_kernel(ms=20), 5):.2f} ms per run")

# %% [markdown]
# From here on, the chapters time kernels with the course's timer, `ag.timing`, which does what
# yours does: a warm-up, events around each launch, the median of many runs. It adds one thing
# that matters for short kernels: before each run it keeps the GPU busy for a fraction of a
# millisecond, so that the GPU reaches the start event only once the launch is queued, and the
# time holds the kernel alone, not the launch's cost on the host. The speed tests also rotate
# their inputs through buffers larger than the GPU's L2 cache, so that no run finds its data
# already in the cache. In CPU mode these timings say they need a GPU: the simulator runs your
# kernels in Python, so their times say nothing about a GPU.
#
# ## Measure it: when does the GPU win?
#
# The experiment times `add_vectors` three ways for growing `n`, with the course's timer: the
# kernel alone (data already on the GPU), the kernel with the copies a one-off call needs (`x`
# and `y` in, `out` back), and NumPy. On a GPU it runs your kernel; in CPU mode it shows what the
# course measured on an H200.

# %%
try:
    rows = ag.experiments.copy_cost(add_vectors)
    title = f"Vector add on this machine ({ag.backend.label})"
except ag.timing.NeedsGPU as why:
    print(why)
    recorded = ag.experiments.recorded("h200_copy_cost")
    rows, title = recorded["rows"], f"Measured by the course on {recorded['device']}"
ag.visual.time_vs_size(rows, columns={"kernel_ms": "GPU kernel only",
                                      "with_copies_ms": "GPU with host↔device copies",
                                      "numpy_ms": "CPU, NumPy"},
                       title=title, xlabel="elements n (float32)").show()
for r in rows:
    print(f"n = {r['n']:>11,}  kernel {r['kernel_ms']:8.3f} ms  with copies {r['with_copies_ms']:8.3f} ms"
          f"  NumPy {r['numpy_ms']:8.3f} ms")

# %% [markdown]
# Read the plot from left to right. For small `n` every GPU line is flat: each call costs tens of
# microseconds whatever it does (Numba's launch from Python, then the copies' own fixed costs),
# so the CPU wins by far. For large `n`, the kernel alone is hundreds of times faster than
# NumPy, but **with the copies the GPU only about ties with one CPU core**. On the course's H200,
# at n = 2²⁸, the kernel took about 0.93 ms, the same call with copies about 355 ms, and NumPy
# about 440 ms. A GPU pays off when data stays on it across many kernels, or when each byte feeds
# many operations. Vector addition does one addition per 12 bytes; later chapters reach hundreds
# of operations per byte.
#
# **What made the copies slow.** They moved 3.2 GB (`x` and `y` in, `out` back) in about 354 ms:
# with a pageable source and a fresh allocation each call, about 9.1 GB/s. That is not the
# link's limit: the figure above gives PCIe 5.0 x16 about 64 GB/s each way, and a Grace Hopper
# board's NVLink-C2C is faster still. Two things the call did cost more than the link:
#
# - **Pageable host memory.** A NumPy array lives in ordinary, *pageable* memory, which the
#   operating system may move or swap out, so the GPU's copy engine cannot read it directly. The
#   driver first copies each piece, with the CPU, into a *pinned* (page-locked) staging buffer,
#   and the copy engine transfers it from there: the CPU's own copying sets the pace. Memory
#   allocated pinned in the first place skips that step ("page-locked host memory" in the CUDA C++
#   Programming Guide; the CUDA C++ Best Practices Guide: "page-locked or pinned memory transfers
#   attain the highest bandwidth between the host and the device"). In Numba:
#   `cuda.pinned_array(shape, dtype)`.
# - **A fresh device allocation each call.** `cuda.to_device(x)` allocates new device memory for
#   every array it copies (1 GiB each here), and the arrays are freed again afterwards. The Best
#   Practices Guide calls allocating and freeing device memory "expensive operations" and advises
#   reusing it: allocate once and copy into it, `cuda.to_device(host, to=d)` or
#   `d.copy_to_device(host)`.
#
# The cell below measures both on your GPU: 256 MiB copied from a pageable array into a fresh
# device array, then from a pinned array into a device array allocated once, each timed with CUDA
# events after a warm-up (the median of 5 copies), as your timer does. **Predict** how much faster
# the second is before you run it. On the course's H200 the same copies (the median of 10) gave
# 6.3 GB/s for the pageable copy into a fresh array, 6.4 GB/s for a pageable copy into an array
# allocated once, and 51 GB/s for the pinned copy: at this size the pinned memory is what counts,
# and reusing the allocation adds little. Your machine's figures may differ: the pageable copy
# depends on the host's CPU and memory, the pinned one on the link.

# %%
def host_to_device_rates(n, repeats=5):
    """GB/s of two ways to copy n float32 values to the device: from a pageable NumPy array into
    a freshly allocated device array, and from a pinned array into one allocated once."""
    x = np.random.default_rng(1).standard_normal(n, dtype=np.float32)
    pinned = cuda.pinned_array(n, dtype=np.float32)
    pinned[:] = x
    d_once = cuda.device_array(n, dtype=np.float32)
    ways = {"pageable, fresh allocation": lambda: cuda.to_device(x),
            "pinned, allocated once": lambda: cuda.to_device(pinned, to=d_once)}
    rates = {}
    for label, copy in ways.items():
        copy()                                     # warm-up: the driver's first use of each path
        cuda.synchronize()
        times_ms = []
        start, end = cuda.event(), cuda.event()
        for _ in range(repeats):
            start.record()
            copy()
            end.record()
            end.synchronize()
            times_ms.append(cuda.event_elapsed_time(start, end))
        rates[label] = 4 * n / (float(np.median(times_ms)) * 1e-3) / 1e9
    return rates


n_copy = (1 << 26) if ag.backend.is_gpu else (1 << 16)
rates = host_to_device_rates(n_copy)
for label, gbps in rates.items():
    print(f"{label:28s} {gbps:8.1f} GB/s  ({4 * n_copy / 2**20:g} MiB to the device)")
if ag.backend.is_gpu:
    print(f"pinned and allocated once: {rates['pinned, allocated once'] / rates['pageable, fresh allocation']:.1f}× "
          "the rate of the pageable copy with a fresh allocation")
else:
    from autograder.data import device_facts
    print("CPU mode: the simulator's 'device' arrays are NumPy arrays in this process, so these are "
          "copies within host memory, on a small size; the figures mean nothing about a GPU. "
          f"On the course's H200: {device_facts.quote('pageable_copy_to_device')} pageable into a "
          f"fresh array, {device_facts.quote('pinned_copy_to_device')} pinned into an array "
          "allocated once.")

# %% [markdown]
# ## Device functions: helpers that a kernel calls
#
# A kernel is launched from the host, `kernel[blocks, threads](...)`. Code that a kernel *calls*,
# in each of its threads, is a **device function**: `@cuda.jit(device=True)`. It runs on the GPU
# in the thread that calls it, takes and returns ordinary values (numbers, or the arrays the
# kernel hands it), and is never launched: no `[blocks, threads]`, and on a GPU no host code can
# call it (CPU mode lets you, so try yours inside a kernel). The compiler usually inlines it, so
# a kernel split into small, named helpers runs as fast as one written in a single piece. CUDA C
# has the same three kinds of function (PMPP §2.7): `__global__` for kernels, `__device__` for
# device functions, `__host__` for the CPU. Later chapters' kernels use them for the pieces they
# repeat (a tile's load in chapter 11, the co-rank search in chapter 12); use them in your own
# kernels whenever one grows long.

# %%
@cuda.jit(device=True)
def clamp(v, lo, hi):
    return min(max(v, lo), hi)


@cuda.jit
def add_clamped(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = clamp(x[i] + y[i], 0.0, 10.0)       # called like any Python function


x_small = np.arange(-5, 5, dtype=np.float32) * 3     # -15, -12, ..., 12
d_clamped = cuda.device_array(10, dtype=np.float32)
add_clamped[1, 32](cuda.to_device(x_small), cuda.to_device(np.ones(10, np.float32)), d_clamped)
print(x_small + 1, "->", d_clamped.copy_to_host())

# %% [markdown]
# ## Exercise 2.3 · A grid-stride loop (3 points + 2 for speed)
#
# One thread per element ties the launch to the data size. A **grid-stride loop** decouples them:
# each thread starts at its global index and steps by the total number of threads in the grid,
# `cuda.gridsize(1)` (= `cuda.gridDim.x * cuda.blockDim.x`), until it passes the end:
#
# ```
# thread t handles t, t + G, t + 2G, ...   where G = threads in the whole grid
# ```
#
# Write `vector_add_grid_stride(x, y, out)`, computing `out[i] = x[i] + y[i]` for every `i`,
# whatever grid it is launched with. Roughly 3 lines.
#
# **What the check does.** It launches your kernel with grids much *smaller* than the data (one
# to three blocks of 32 to 256 threads), so only a loop covers everything. The speed test (on a
# GPU) times your kernel against the course's reference kernel on 2²⁸ elements, with the same
# launch (enough blocks to fill every multiprocessor), and against NumPy on this machine: you
# need at least 80% of the reference's speed and 20× NumPy. Both are timed in the same run on the
# GPU you have, so the bar asks the same of a laptop's GPU as of a data-center one: how close your
# kernel comes to a good kernel on that chip, never a number of milliseconds. In CPU mode it says
# it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "grid_stride_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def vector_add_grid_stride(x, y, out):
    ### BEGIN SOLUTION
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = x[i] + y[i]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "grid_stride_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch02.vector_add_grid_stride.check(vector_add_grid_stride)
### BEGIN HIDDEN TESTS
ag.problems.ch02.vector_add_grid_stride.check_hidden(vector_add_grid_stride)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "grid_stride_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch02.vector_add_grid_stride.check_speed(vector_add_grid_stride)

# %% [markdown]
# ## Predict, then explain
#
# Vector addition reads two float32 values and writes one: 12 bytes per element. A kernel like
# this is **memory-bound**: its time is the bytes it moves divided by the bandwidth the memory
# delivers. The speed test prints the bandwidth your kernel reached next to a device-to-device
# copy of the same bytes, the practical ceiling. On the course's H200 the copy ceiling, 4,269 GB/s
# (a device-to-device copy of the same 3.2 GB), means 2²⁸ elements cannot take much less than
# 0.755 ms; the grid-stride loop as this notebook writes it took 0.880 ms (86% of that copy), and
# the course's reference, the same loop handling four elements per thread per step with all eight
# loads issued before the four stores, 0.836 ms (91%).
#
# Questions to answer for yourself (not graded here; chapter 5 grades a prediction like this):
# 1. Your kernel reached some fraction of the copy bandwidth. What could the remaining gap be made
#    of? (Think of the launch, the last partial wave of blocks, and reads versus writes.)
# 2. Why is NumPy's `np.add` far below the CPU's memory bandwidth, and what would
#    `numba.njit(parallel=True)` change?
#
# ## Going further
# - PMPP ch. 2: §2.3–2.5 (vector addition, device memory, kernel functions and threading), §2.7
#   (compilation); ch. 3 takes the same ideas to two-dimensional data.
# - GPU MODE lecture 1 (how to profile CUDA kernels) and lecture 2 (recap of PMPP ch. 1–3).
# - **On AMD (HIP):** the same notebook runs through numba-hip. Its "warps" (wavefronts) are
#   64 threads wide, so prefer block sizes that are multiples of 64 there; everything in this
#   chapter is otherwise the same.
