# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Chapter 1 · Introduction: why GPUs, and your first kernels
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 1.
#
# **Before you start:** Python and NumPy; nothing about GPUs. **Time:** about 1.5 hours, reading and
# exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# Run the first cell before anything else. Importing `autograder` before Numba lets the course
# pick the backend (an NVIDIA GPU, an AMD GPU, or CPU mode, where the CUDA simulator runs your
# kernels on the CPU); the banner says which one it picked and why.

# %%
import autograder as ag
from numba import cuda
import numpy as np
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

ag.banner()

# %% [markdown]
# ## What you will be able to do
#
# - **Predict the speedup of a whole program** with Amdahl's law, and say why the part you do
#   *not* move to the GPU sets the limit (exercise 1.1).
# - **Write a kernel that knows who it is**: every thread works out its block, its place in the
#   block and the array element it owns, and the spare threads at the end of the grid stay quiet
#   (exercise 1.2). You will also see what happens when they don't.
# - **Write SAXPY**, `out = a·x + y`, a map kernel that is correct for any length, checked against
#   a float64 answer with an error bound you can derive (exercise 1.3).
#
# Points: 1.1 is worth 2, 1.2 and 1.3 are worth 3 each. Each exercise has a visible check you can
# run as often as you like, and hidden tests (other sizes, other block sizes) run when it is graded.

# %% [markdown]
# ## 1 · Why GPUs: latency against throughput
#
# A CPU is built to finish **one** stream of instructions as soon as possible: most of its chip
# goes to large caches, branch prediction and out-of-order machinery that hide how long memory
# takes to answer. A GPU is built to finish **a huge number** of independent pieces of work per
# second: most of its chip is simple arithmetic lanes, and it hides memory's delay not with caches
# but by keeping thousands of threads in flight and switching to ones whose data has arrived
# (PMPP §1.1). One thread on a GPU is slow; a hundred thousand of them are fast.
#
# The work that suits a GPU is therefore work with lots of *independent* pieces: the same operation
# on every pixel, every element, every row. Much of that work is limited less by arithmetic than
# by how fast memory delivers the operands, which is where the two designs differ most.
#
# First, a baseline on **your** machine: how many bytes per second does NumPy move when it adds two
# float32 vectors (read two arrays, write one: 12 bytes per element)? NumPy does this on one core.

# %%
from autograder.timing import time_cpu

n = 1 << 23                                   # 8 Mi float32 elements: 32 MiB per array
rng = np.random.default_rng(0)
x = rng.random(n, dtype=np.float32)
y = rng.random(n, dtype=np.float32)
z = np.empty_like(x)
cpu_add = time_cpu("NumPy add", lambda: np.add(x, y, out=z), repeats=5, nbytes=12 * n)
print(f"NumPy z = x + y, n = {n:,}: {cpu_add.median_ms:.1f} ms per call, "
      f"{cpu_add.gbps:.1f} GB/s on this machine")
del x, y, z

# %% [markdown]
# Now the same kind of number for a data-centre GPU. The bars below separate what we **measured**
# on the course's H200 machine (one NVIDIA H200 and a 32-core host CPU) from what the **datasheet**
# promises; the first bar is yours, measured just now. Both axes are logarithmic: every grid line
# is ten times the one before.

# %%
from autograder.data import device_facts     # the figures measured on the course's H200

fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.8))
CPU, GPU = "#7a9cc6", "#76b041"

host_cores = int(device_facts.value("host_cores"))
units = [("host CPU cores\n(our H200 machine)", host_cores, CPU, str(host_cores)),
         ("H200 SMs\n(datasheet)", 132, GPU, "132"),
         ("H200 threads resident\nat once (132 × 2048)", 132 * 2048, GPU, "270,336")]
for k, (label, value, color, text) in enumerate(units):
    left.barh(k, value, color=color)
    left.text(value * 1.15, k, text, va="center")
left.set_yticks(range(len(units)), [u[0] for u in units])
left.set_xscale("log")
left.set_xlim(1, 3e6)
left.invert_yaxis()
left.set_xlabel("count")
left.set_title("How much runs at once")

bandwidth = [("NumPy add, 1 core\n(measured: your machine)", cpu_add.gbps, CPU, ""),
             ("NumPy add, 1 core\n(measured: our H200 machine)",
              device_facts.value("numpy_add_one_core"), CPU, ""),
             ("H200 device-to-device copy\n(measured: our H200 machine)",
              device_facts.value("copy_ceiling"), GPU, ""),
             ("H200 HBM3e memory\n(datasheet)", 4800, GPU, "//")]
for k, (label, value, color, hatch) in enumerate(bandwidth):
    right.barh(k, value, color=color, hatch=hatch, edgecolor="white" if hatch else None)
    right.text(value * 1.15, k, f"{value:,.0f} GB/s", va="center")
right.set_yticks(range(len(bandwidth)), [b[0] for b in bandwidth])
right.set_xscale("log")
right.set_xlim(1, 6e4)
right.invert_yaxis()
right.set_xlabel("GB/s")
right.set_title("Memory bandwidth")
fig.suptitle("A CPU and a GPU, side by side (green: GPU, blue: CPU, hatched: datasheet)")
plt.tight_layout()
plt.show()

# %% [markdown]
# An SM (*streaming multiprocessor*) is the GPU's unit of execution, closer to a CPU core than a
# single lane is: each H200 SM runs 128 float32 lanes and keeps up to 2048 threads resident so it
# always has some whose data is ready. The right panel is the one that matters for this chapter's
# kernels: a GPU's memory moves data about **450 times faster** than one CPU core running NumPy.
# A kernel that only streams data (like the SAXPY you will write) can go that much faster, but only
# for the part of the program it replaces. How much that is worth for the whole program is the
# next question.

# %% [markdown]
# ## 2 · Amdahl's law: the part you don't speed up decides
#
# Take a program that runs for time $T$ on a CPU. A fraction $p$ of that time is spent in work you
# can parallelise, and you make that part $s$ times faster (on a GPU, say). The other $1-p$ stays as
# it was. The new run time is $T\,\big((1-p) + p/s\big)$, so the whole program gets faster by
#
# $$S(p, s) = \frac{1}{(1 - p) + \dfrac{p}{s}}.$$
#
# This is **Amdahl's law** (PMPP §1.3). Let $s$ grow without bound and $S$ approaches
# $1/(1-p)$: if 10 % of the time stays serial, no accelerator can make the program more than
# 10 times faster. With $p = 0.9$ and a 100× faster kernel, the whole program gets only
# $1/(0.1 + 0.009) \approx 9.2$ times faster. This is why GPU programmers care about the serial
# parts: the data transfers, the setup, the steps that were never parallelised.
#
# ### Exercise 1.1 · `amdahl_speedup` (2 points)
#
# Write `amdahl_speedup(parallel_fraction, speedup)`. It receives two Python floats, $p$ with
# $0 \le p \le 1$ and $s \ge 1$, and returns the overall speedup $S(p, s)$ as a float. Roughly
# 1 line.
#
# **What the check tests.** The visible check calls it on 8 pairs $(p, s)$, including the edges a
# formula must get right: nothing parallel ($p = 0$, answer 1), everything parallel ($p = 1$, answer
# $s$) and no speedup ($s = 1$, answer 1). The hidden tests use 200 random pairs with
# $0 \le p \le 1$ and $1 \le s \le 1000$. Your result is compared with the formula evaluated in
# float64, allowing a few roundings' worth of error, so any algebraically equal way of writing it
# passes.

# %% nbgrader={"grade": false, "grade_id": "amdahl_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def amdahl_speedup(parallel_fraction, speedup):
    """Overall speedup when `parallel_fraction` of the run time becomes `speedup` times faster."""
    # Roughly 1 line.
    ### BEGIN SOLUTION
    return 1.0 / ((1.0 - parallel_fraction) + parallel_fraction / speedup)
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "amdahl_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch01.amdahl.check(amdahl_speedup)
### BEGIN HIDDEN TESTS
ag.problems.ch01.amdahl.check_hidden(amdahl_speedup)
### END HIDDEN TESTS

# %% [markdown]
# Here is your function over the whole range of $p$, for kernels 10, 100 and 1000 times faster
# than the CPU code they replace. The dotted line is the limit $1/(1-p)$, what an infinitely fast
# kernel would give. Until $p$ gets close to 1 the curves lie almost on top of each other: at
# $p = 0.5$ a 1000× kernel makes the program 2.0× faster and a 10× kernel 1.8×. Faster kernels
# only pay off once nearly all of the run time is in them.

# %%
p = np.linspace(0, 1, 401)
fig, ax = plt.subplots(figsize=(7, 4))
for s in (10, 100, 1000):
    ax.plot(p, [amdahl_speedup(float(q), float(s)) for q in p], label=f"s = {s}")
ax.plot(p[:-1], 1 / (1 - p[:-1]), ":", color="black", linewidth=2, label="limit 1/(1 − p)")
ax.set_yscale("log")
ax.set_ylim(1, 2000)
ax.set_xlim(0, 1)
ax.set_xlabel("parallel fraction p of the original run time")
ax.set_ylabel("overall speedup S")
ax.set_title("Amdahl's law: speedup of the whole program")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
plt.show()
print(f"p = 0.99, s = 1000: the whole program is {amdahl_speedup(0.99, 1000.0):.1f} times faster")

# %% [markdown]
# Before you go on, use your function to answer for yourself: a program spends 95 % of its time in
# a loop you move to the GPU. How fast must the kernel be for the whole program to get 10 times
# faster? 19 times? (The second answer is a surprise; the plot explains it.)

# %% [markdown]
# ## 3 · The CUDA execution model in a nutshell
#
# A **kernel** is a function that many GPU threads run at the same time, each on its own piece of
# the data. In Numba you write it in Python and mark it with `@cuda.jit`; a kernel returns
# nothing, it writes its results into arrays it was given. You launch it with the number of
# **blocks** and the number of **threads per block** in square brackets:
#
# ```python
# kernel[blocks, threads_per_block](arg1, arg2, ...)
# ```
#
# The launch creates a **grid** of `blocks` blocks, each of `threads_per_block` threads (at most
# 1024). Every thread runs the same code, and asks where it is with a few built-in values:
#
# | inside a kernel | what it is |
# |---|---|
# | `cuda.threadIdx.x` | this thread's index within its block: `0 … blockDim.x − 1` |
# | `cuda.blockIdx.x` | this block's index within the grid: `0 … gridDim.x − 1` |
# | `cuda.blockDim.x` | threads per block (the same for every block) |
# | `cuda.gridDim.x` | blocks in the grid |
# | `cuda.grid(1)` | the thread's **global** index, `blockIdx.x * blockDim.x + threadIdx.x` |
#
# With one thread per array element, thread `i = cuda.grid(1)` handles element `i`. Blocks all
# have the same size, so to cover `n` elements you launch `blocks = ceil(n / threads) =
# (n + threads - 1) // threads` of them, and when `n` is not a multiple of the block size the last
# block has threads with no element. They still run, so the kernel must stop them before they
# touch memory: `if i < n:`. Chapter 2 (PMPP §2.5–2.6) goes deeper; this is enough for now.
#
# The picture shows `n = 10` elements covered by 3 blocks of 4 threads. Call `draw_grid` with other
# values to see how the grid changes (try `draw_grid(10, 8)` or `draw_grid(13, 5)`).

# %%
def draw_grid(n=10, threads_per_block=4):
    """Draw a 1-D grid covering n elements: blocks of threads above, array elements below."""
    blocks = (n + threads_per_block - 1) // threads_per_block
    total = blocks * threads_per_block
    colors = plt.cm.Set2.colors
    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * total + 1), 3.2))
    for b in range(blocks):
        x0 = b * threads_per_block
        ax.add_patch(Rectangle((x0 + 0.02, 1.0), threads_per_block - 0.04, 1.25, fill=False,
                               edgecolor="black", linewidth=1.5))
        ax.text(x0 + threads_per_block / 2, 2.1, f"block {b}", ha="center", va="center",
                fontsize=10, weight="bold")
        for t in range(threads_per_block):
            i = x0 + t
            idle = i >= n
            ax.add_patch(Rectangle((i + 0.1, 1.1), 0.8, 0.8, hatch="//" if idle else None,
                                   facecolor="#dddddd" if idle else colors[b % len(colors)],
                                   edgecolor="grey"))
            ax.text(i + 0.5, 1.62, f"t{t}", ha="center", va="center", fontsize=9)
            ax.text(i + 0.5, 1.3, "idle" if idle else f"i={i}", ha="center", va="center",
                    fontsize=8, color="dimgrey" if idle else "black")
            if not idle:
                ax.annotate("", xy=(i + 0.5, 0.62), xytext=(i + 0.5, 1.08),
                            arrowprops=dict(arrowstyle="->", color="grey"))
    for i in range(n):
        ax.add_patch(Rectangle((i + 0.1, 0.0), 0.8, 0.6, facecolor="white", edgecolor="black"))
        ax.text(i + 0.5, 0.3, f"x[{i}]", ha="center", va="center", fontsize=8)
    ax.set_xlim(-0.2, total + 0.2)
    ax.set_ylim(-0.2, 2.4)
    ax.axis("off")
    ax.set_title(f"n = {n} elements, {blocks} blocks × {threads_per_block} threads = {total} "
                 f"threads: {total - n} idle (hatched), kept out by  if i < n")
    plt.show()


draw_grid(10, 4)

# %% [markdown]
# The explorer below draws the same picture live. Move the sliders to see which thread handles
# which element, which threads idle past the end (hatched), and how each block is cut into
# *warps*, the groups of 32 threads the hardware runs together (one row each). Try 100 elements
# with 48 threads per block: every block's second warp is half empty, and those lanes are
# wasted. Untick *just enough blocks* to see elements no thread handles. Hovering a cell names its
# block, thread, warp, lane and element.

# %%
ag.visual.grid_explorer(n=10, threads=4)

# %% [markdown]
# ### Exercise 1.2 · `thread_ids`: who am I? (3 points)
#
# Write the kernel `thread_ids(block, thread, index)`. It is launched with one thread per element
# and a grid that may be larger than the arrays:
#
# ```python
# thread_ids[blocks, threads](block, thread, index)   # blocks = (n + threads - 1) // threads
# ```
#
# `block`, `thread` and `index` are int32 device arrays of the same length `n`. The thread that
# handles element `i` (the one whose global index is `i`) stores
#
# - `block[i]`: its block index,
# - `thread[i]`: its thread index within the block,
# - `index[i]`: its global index, `i`.
#
# Threads whose global index is `n` or more must write nothing. Roughly 5 lines. Don't assume a
# block size: read it from `cuda.blockDim.x` (or use `cuda.grid(1)`), and take `n` from an array
# (`index.size`).
#
# **What the check tests.** Before each run, every element of the three arrays is set to the most
# negative int32, so an element that no thread writes is caught. The visible check runs
# `n = 1025, 127, 1` with 128 threads per block (9 blocks for 1025, the last with 127 idle
# threads; on a GPU also `n = 100,003`). The hidden tests use `n = 33, 1000` and random sizes, with
# block sizes drawn from 32, 64, 96, 128, 160 and 256, some of which are not powers of two. On a
# GPU, elements past the end of each array are watched too: a write there fails the check.
#
# Until you replace `raise NotImplementedError()`, the check fails: in CPU mode it names the
# exception; on a GPU, Numba reports an exception raised in a kernel only when the kernel is
# compiled with `debug=True`, otherwise the thread just stops, so the check says nothing was
# written.

# %% nbgrader={"grade": false, "grade_id": "thread_ids_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def thread_ids(block, thread, index):
    # Roughly 5 lines: compute the global index, guard it, store three values.
    ### BEGIN SOLUTION
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x   # the same as cuda.grid(1)
    if i < index.size:
        block[i] = cuda.blockIdx.x
        thread[i] = cuda.threadIdx.x
        index[i] = i
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "thread_ids_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch01.thread_ids.check(thread_ids)
### BEGIN HIDDEN TESTS
ag.problems.ch01.thread_ids.check_hidden(thread_ids)
### END HIDDEN TESTS

# %% [markdown]
# Your kernel on the example of the picture: `n = 10`, 3 blocks × 4 threads. The arrays start
# filled with −1, so an element nobody wrote would show up.

# %%
n, blocks, threads = 10, 3, 4
d_block = cuda.to_device(np.full(n, -1, np.int32))
d_thread = cuda.to_device(np.full(n, -1, np.int32))
d_index = cuda.to_device(np.full(n, -1, np.int32))
thread_ids[blocks, threads](d_block, d_thread, d_index)
cuda.synchronize()
print(f"{blocks} blocks × {threads} threads = {blocks * threads} threads for n = {n} elements")
print("element i  ", np.arange(n))
print("block[i]   ", d_block.copy_to_host())
print("thread[i]  ", d_thread.copy_to_host())
print("index[i]   ", d_index.copy_to_host())

# %% [markdown]
# ## 4 · Break it: a kernel without its bounds check
#
# What do the two idle threads of that launch do if the kernel forgets `if i < n`? Try it. The cell
# below gives a kernel the first 10 elements of a 16-element buffer (think of elements 10–15 as
# someone else's data that happens to sit next to yours in GPU memory, which is common) and launches
# 3 × 4 = 12 threads with no guard.
#
# The cell starts with `%%isolated`: it runs in a separate, fresh Python process, on the same
# backend. On a GPU a bad write can leave the process's CUDA context unusable, and this way it is a
# throw-away process that suffers, not your notebook. A fresh process knows nothing of this
# notebook, so the cell imports what it needs itself (the course adds `import autograder` first).

# %%
# %%isolated
from numba import cuda
import numpy as np


@cuda.jit
def fill_unguarded(out):
    i = cuda.grid(1)
    out[i] = i                    # no `if i < out.size:`, so threads 10 and 11 store too


memory = cuda.to_device(np.full(16, -1, np.int32))   # 16 ints; 10..15 belong to "someone else"
out = memory[:10]                                     # the kernel's array: the first 10 of them
try:
    fill_unguarded[3, 4](out)                          # 12 threads for 10 elements
    cuda.synchronize()
    print("No error. The 16 ints of memory are now:")
    print(memory.copy_to_host())
except Exception as exc:
    print(f"The launch failed with {type(exc).__name__}:\n  {exc}")

# %% [markdown]
# What you see depends on where the kernel ran:
#
# - **CPU mode (the simulator)** checks every index, like NumPy does, and stops at the first bad
#   one, naming the thread that made it: `IndexError: tid=[2, 0, 0] ctaid=[2, 0, 0]: index 10 is
#   out of bounds for axis 0 with size 10`. `tid` is the thread index and `ctaid` the block index
#   (a block is a *cooperative thread array* in NVIDIA's terms): thread 2 of block 2, global index
#   2·4 + 2 = 10. The simulator runs a block's threads side by side, so you may see thread 3
#   (index 11) instead: whichever of the two got there first. This is the friendly case.
# - **On a GPU nothing checks.** Thread 10 stores at the address of `out` plus 10 elements,
#   whatever is there. Here that is the neighbouring data: the cell prints `… 8 9 10 11 -1 -1 -1
#   -1` and reports no error. Your kernel "works", and someone else's data is now wrong, which
#   shows up later, somewhere else: the worst kind of bug. If a stray index lands outside any
#   allocation, the GPU raises an illegal-address error (`CUDA_ERROR_ILLEGAL_ADDRESS`) at the next
#   synchronisation, and from then on every CUDA call in that process fails: you would have to
#   restart the notebook's kernel, which is what `%%isolated` spared you.
#
# The course's checks catch both: in CPU mode through the `IndexError`, on a GPU through guard
# elements placed right after every output array, which must still hold their fill value after
# your kernel ran. Now put the guard back into the cell above (`if i < out.size:`) and run it
# again: only elements 0–9 change.

# %% [markdown]
# ## 5 · A map kernel: SAXPY
#
# SAXPY, *Single-precision A times X Plus Y*, is one of the oldest routines in numerical
# libraries (it is in BLAS): `out = a·x + y` for a number `a` and vectors `x`, `y`. It is a
# **map**: each output element depends only on the elements at the same index, so one thread per
# element does all the work with no cooperation between threads, the simplest and most common
# kind of GPU kernel.
#
# **Why float32.** GPUs do float32 arithmetic fast, and many (most gaming and workstation cards)
# do float64 at a small fraction of that rate. More important for a kernel like this one, a float32
# is 4 bytes instead of 8: SAXPY does 2 operations per 12 bytes it moves (read `x[i]` and `y[i]`,
# write `out[i]`), so its speed is set by memory bandwidth, and half the bytes means twice the speed.
#
# ### Exercise 1.3 · `saxpy` (3 points)
#
# Write the kernel `saxpy(a, x, y, out)`: `a` is a float32 scalar, `x`, `y` and `out` are float32
# device arrays of length `n`, and for every `i < n`
#
# $$\texttt{out}[i] = a \cdot x[i] + y[i].$$
#
# It is launched one thread per element with a grid that overshoots `n`:
#
# ```python
# saxpy[blocks, threads](a, x, y, out)   # blocks = (n + threads - 1) // threads
# ```
#
# so threads with `i >= n` must write nothing. Roughly 3 lines.
#
# **Stuck?** `ag.hint("saxpy")` (in the next cell) gives a hint in three steps: what to think
# about, where PMPP explains it, and a skeleton with blanks to fill (never the answer). Each run of
# the cell, or the *next hint* button, shows one more step. Try the first before you look at the
# second.
#
# **What the check tests.** The inputs have random scales (from 10⁻³ to 10³) and offsets, so
# neither a result of zeros nor a bound tuned to values near 1 passes by accident. The visible check
# runs `n = 1025, 1023, 1` with 128 threads per block (on a GPU also `n = 1,000,003`); the hidden
# tests run `n = 31` and random sizes with 32, 64, 128, 256 or 512 threads per block.
#
# - **Outputs start as NaN.** Before each run `out` is filled with NaN (not a number). NaN never
#   counts as close to anything, so an element your kernel never writes is reported as such.
# - **The allowed error comes from float32's rounding.** The check computes `a·x[i] + y[i]` exactly
#   (in float64) and accepts your float32 result if it is within
#   $\gamma_2\,(|a\,x_i| + |y_i|)$ of it, plus the smallest normal float32 for results near zero.
#   Here $u = 2^{-24}$ is float32's unit roundoff (one correctly rounded operation is off by at
#   most $u$ times its result) and $\gamma_2 = 2u/(1-2u)$ bounds two roundings in a row: one for
#   the product, one for the sum. So both a multiply followed by an add and a fused multiply-add
#   (one rounding; the GPU compiler uses it for `a * x[i] + y[i]`) pass, while computing in a lower
#   precision, or a different formula, does not. Exact equality would be wrong here: the GPU and
#   NumPy may round differently, and both are right.

# %%
ag.hint("saxpy")

# %% nbgrader={"grade": false, "grade_id": "saxpy_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def saxpy(a, x, y, out):
    # Roughly 3 lines.
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "saxpy_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch01.saxpy.check(saxpy)
### BEGIN HIDDEN TESTS
ag.problems.ch01.saxpy.check_hidden(saxpy)
### END HIDDEN TESTS

# %% [markdown]
# Your kernel next to NumPy on a small example, and the largest difference in units of the
# allowed error (anything up to 1 passes). `out` starts as NaN, as in the check.

# %%
n, threads = 1000, 128
blocks = (n + threads - 1) // threads
rng = np.random.default_rng(1)
a = np.float32(2.5)
x = rng.uniform(-1, 1, n).astype(np.float32)
y = rng.uniform(-1, 1, n).astype(np.float32)
d_out = cuda.to_device(np.full(n, np.nan, np.float32))
saxpy[blocks, threads](a, cuda.to_device(x), cuda.to_device(y), d_out)
out = d_out.copy_to_host()
print(f"elements never written: {np.isnan(out).sum()} of {n}")
exact = np.float64(a) * x.astype(np.float64) + y
bound = 2 * 2.0**-24 / (1 - 2 * 2.0**-24) * (np.abs(np.float64(a) * x) + np.abs(y))
bound += np.finfo(np.float32).tiny
print("out[:4]   ", out[:4])
print("NumPy     ", (a * x + y)[:4])
print(f"largest error / allowed error: {np.max(np.abs(out - exact) / bound):.3f}")

# %% [markdown]
# ### What your kernel touches
#
# What did each thread of your SAXPY touch? `ag.visual.access_picture` runs your kernel once in
# CPU mode on a small input (in a separate process when this notebook is on a GPU) and records
# every memory access of every thread. Each dot is one access; the 24 threads past `n = 40` touch
# nothing, so the second block's warp runs with 8 of its 32 lanes. A full warp reads 32
# neighbouring float32s in 4 sectors of 32 bytes, the fewest possible: a *coalesced* access.
# Chapter 5's tiled matmul shows in the same table how tiling cuts the global bytes each thread
# moves.

# %%
n_small, threads_small = 40, 32          # small: every thread runs as Python code
ag.visual.access_picture(saxpy, (n_small + threads_small - 1) // threads_small, threads_small,
                         np.float32(2.5), np.ones(n_small, np.float32),
                         np.arange(n_small, dtype=np.float32), np.zeros(n_small, np.float32))

# %% [markdown]
# ### What your kernel becomes
#
# A GPU does not run Python. Numba compiles your kernel to PTX, NVIDIA's portable assembly, and
# the driver turns that into SASS, the machine code the GPU runs. The viewer shows all three for
# your `saxpy`, compiled for the course's H200 (compute capability 9.0) even on a laptop without a
# GPU (it needs the CUDA toolkit wheels; if they are missing it says what to install). Beside each
# Python line are the instructions it became: two global-memory loads, one fused multiply-add
# (`fma.rn.f32`, the single rounding the check allows) and one store. The summary gives the
# compiler's own figures (registers per thread, shared and local memory), which chapters 4–6 teach
# you to read.

# %%
ag.visual.show_code(saxpy, a, x, y, d_out)   # the arguments you launched it with

# %% [markdown]
# ## 6 · Where SAXPY sits on the roofline
#
# SAXPY does 2 floating-point operations for every 12 bytes it moves: an *arithmetic intensity* of
# 1/6 FLOP per byte. A kernel can go no faster than the GPU computes (its peak FLOP/s), nor faster
# than its memory delivers bytes (intensity × bandwidth): the **roofline** below draws both
# limits, which meet at the *ridge point*. SAXPY sits far left of the ridge: memory sets its speed
# on every GPU, so "fast" for SAXPY means moving its bytes at the speed of a copy. On a GPU your
# kernel is timed and placed on this GPU's own limits; in CPU mode you see the course's H200, and
# your kernel's place marks the best it could reach (the simulator's times say nothing about a
# GPU). Chapter 2 measures a kernel like this one properly.

# %%
ag.visual.roofline.for_problem("saxpy", kernel=saxpy, size=1 << 25)

# %% [markdown]
# ## Going further
#
# - **PMPP chapter 1**: §1.1 (heterogeneous parallel computing: the latency- and
#   throughput-oriented designs behind section 1), §1.2 (why more speed or parallelism), §1.3
#   (speeding up real applications, where Amdahl's law appears), §1.4 (the challenges in parallel
#   programming: memory-bound work, irregular data, synchronisation; the rest of the book is about
#   these). Chapter 2 (§2.3–2.6) is the next step after this notebook's section 3.
# - **GPU MODE lectures** (github.com/gpu-mode/lectures): lecture 1, on profiling CUDA kernels in
#   PyTorch, shows where the time of a real program goes, which is Amdahl's law in practice;
#   lecture 2 walks through PMPP chapters 1–3.
# - **AMD GPUs (HIP).** With ROCm and numba-hip, the course runs these same notebooks on an AMD GPU:
#   numba-hip mirrors the `cuda` API used here (`@cuda.jit`, `cuda.threadIdx.x`, `cuda.grid(1)`,
#   `kernel[blocks, threads]`), so nothing in this chapter changes. One difference to keep in mind
#   for later chapters: the hardware runs threads in groups that NVIDIA calls *warps* (32 threads)
#   and AMD *wavefronts*, which are 64 threads wide on AMD's data-centre GPUs. Block sizes that are
#   multiples of 64 fill whole wavefronts on both. In CPU mode, `AAG_WARP_SIZE=64` makes the
#   simulator behave like a 64-wide wavefront.
