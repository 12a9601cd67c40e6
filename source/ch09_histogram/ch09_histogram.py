# %% [markdown]
# # Chapter 9 · Parallel histogram: atomic operations and privatization
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 9.
#
# **Before you start:** chapters 1–6; atomic operations are new here. **Time:** about 3 hours,
# reading and exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Say why `hist[b] += 1` run by many threads **loses counts**, and fix it with an **atomic
#   operation** (`cuda.atomic.add`): a byte histogram with one thread per byte.
# - Write a **privatized** histogram: every block counts into its own copy in shared memory and
#   merges it into the global one at the end, with each thread looping over many bytes
#   (**coarsening**), laid out so that the loads coalesce. On the course's H200 its version counts
#   uniform bytes **15.6× faster than `cupy.bincount`** (0.190 ms against 2.96 ms for 2²⁸ bytes).
# - Write the **aggregating** version for **skewed data** (a scanned page is 90% white): one
#   atomic per run of equal bytes; predict, before measuring, which of three ceilings limits a
#   histogram (memory bandwidth, atomic throughput, or the single hottest bin), and find out on
#   your GPU whether aggregation pays (on the H200 it did not).
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, uint32

ag.banner()
ch09 = ag.problems.ch09

# %% [markdown]
# ## The idea: many threads, one counter
#
# A **histogram** counts how often each value occurs. Here the values are bytes (0 to 255) and
# there is one **bin** per value: `hist[b]` is the number of bytes equal to `b`. Histograms are
# everywhere: the brightness distribution of an image (for contrast equalisation), letter
# frequencies of a text (PMPP's running example counts letters in groups of four), the key
# distribution that a radix sort or a hash join needs before it can place anything.
#
# Sequentially it is one line per byte, `hist[data[i]] += 1`. In parallel, give each thread a
# byte. The trouble is that **the output position depends on the data**: two threads whose bytes
# are equal update the same bin, and `hist[b] += 1` is not one step but three: **read** the count
# into a register, **add** one, **write** it back. If two threads interleave those steps, both
# read the same old count and both write old + 1: one increment is **lost**. This is a
# *read-modify-write race*; whether and how often it happens depends on timing.

# %%
fig, ax = plt.subplots(figsize=(8, 2.6))
steps = [("thread A", 0, "read 5"), ("thread B", 1, "read 5"), ("thread A", 2, "5 + 1"),
         ("thread B", 3, "5 + 1"), ("thread A", 4, "write 6"), ("thread B", 5, "write 6")]
for who, t, text in steps:
    y = 1 if who == "thread A" else 0
    ax.add_patch(plt.Rectangle((t, y + 0.15), 0.9, 0.7, facecolor="#cfe0f3" if y else "#f6d6b8",
                               edgecolor="#555"))
    ax.text(t + 0.45, y + 0.5, text, ha="center", va="center", fontsize=10)
ax.text(6.2, 0.5, "hist[b] = 6,\nnot 7:\none count lost", va="center", color="firebrick")
ax.set_yticks([0.5, 1.5]); ax.set_yticklabels(["thread B", "thread A"])
ax.set_xticks(range(6)); ax.set_xlabel("time →")
ax.set_xlim(-0.2, 7.6); ax.set_ylim(0, 2)
ax.set_title("two threads increment the same bin with hist[b] += 1")
for side in ("top", "right"):
    ax.spines[side].set_visible(False)
plt.show()

# %% [markdown]
# **Atomic operations** make the read, the change and the write one indivisible step: while one
# thread's update of an address is in progress, no other thread's update of that address can
# slip in between. In Numba, `cuda.atomic.add(hist, b, 1)` adds 1 to `hist[b]` atomically (and
# returns the old value, which a histogram does not need). It works on global memory and on shared
# memory, for 32- and 64-bit integers and floats. The hardware performs the operation close to the
# memory: global atomics in the L2 cache, shared-memory atomics in the SM.
#
# Atomics are correct, but not free. Updates to **one address** happen one after another: each
# waits for the previous one to finish. Updates to different addresses proceed in parallel. So a
# histogram's speed depends on its **data**: 2²⁸ bytes spread evenly over 256 bins put about a
# million updates on each bin; 2²⁸ bytes of which 90% are 255 put 240 million updates on one bin,
# in a single queue. That is **contention**, and it is why this chapter tests on four kinds of
# input, all generated here (nothing is downloaded):
#
# - **uniform random values**: every bin equally likely, the friendliest case;
# - **English-like text**: sentences of common words drawn with Zipf frequencies, so the space
#   and a few letters dominate and bytes ≥ 128 never occur;
# - **a gray photo-like image** (chapter 3's test image, quantised to bytes): smooth gradients,
#   flat shapes and noise, so counts spread over a range of bins;
# - **a scanned page**: white paper (255) with lines of dark glyphs: about 90% of the bytes fall
#   in one bin, in long runs.

# %%
sample_n = 200_000
samples = {kind: ch09.make_bytes(kind, sample_n, seed=1) for kind in ch09.KINDS}
fig, axes = plt.subplots(2, 2, figsize=(9, 5), sharex=True)
for ax, (kind, data) in zip(axes.flat, samples.items()):
    counts = np.bincount(data, minlength=256)
    ax.bar(np.arange(256), counts, width=1.0, color="#3b6ea8")
    ax.set_yscale("log")
    ax.set_title(f"{ch09.KIND_LABELS[kind]}: fullest bin {counts.argmax()} holds "
                 f"{counts.max() / data.size:.1%}", fontsize=9)
for ax in axes[1]:
    ax.set_xlabel("byte value (bin)")
plt.tight_layout()
plt.show()
print("the first 160 bytes of the text:", bytes(samples["text"][:160]).decode())

# %% [markdown]
# The vertical axes are logarithmic: on the page, bin 255 holds ten times more bytes than all the
# others together.
#
# ## The CPU baseline
#
# NumPy's `np.bincount` counts the values of an integer array (it first converts the bytes to
# 64-bit integers, which costs time and memory); a compiled loop (`numba.njit`) does the
# sequential `hist[data[i]] += 1` directly. Both run on one core. Their times on 4 MB of each input:

# %%
import numba


@numba.njit(cache=False)
def histogram_cpu(data, hist):
    hist[:] = 0
    for i in range(data.size):
        hist[data[i]] += 1


cpu_n = 1 << 22
for kind in ch09.KINDS:
    data = ch09.make_bytes(kind, cpu_n, seed=2)
    hist = np.zeros(256, np.uint32)
    assert np.array_equal(np.bincount(data, minlength=256), ch09.byte_counts(data))
    numpy_t = ag.timing.time_cpu("np.bincount", lambda: np.bincount(data, minlength=256))
    loop_t = ag.timing.time_cpu("njit loop", lambda: histogram_cpu(data, hist))
    print(f"{ch09.KIND_LABELS[kind]:32s} np.bincount {cpu_n / numpy_t.median_ms / 1e6:6.2f} GB/s"
          f"   njit loop {cpu_n / loop_t.median_ms / 1e6:6.2f} GB/s")

# %% [markdown]
# The loop is often slower on the page than on uniform bytes, on a CPU too: when consecutive
# bytes hit the same bin, each increment must wait for the previous one's result. On the host of
# the course's H200 it took 674 ms for 2²⁸ bytes of a page against 127 ms for 2²⁸ uniform bytes
# (`docs/benchmarks.md`). Contention is not only a GPU matter.
#
# ## Exercise 9.1 · Global atomics, one thread per byte (3 points)
#
# Write `histogram_global_kernel(data, hist)`: `data` is a `uint8` device array of `n` bytes,
# `hist` a `uint32` device array of 256 bins that **arrives filled with zeros** (the check zeroes
# it before each launch, as `cudaMemset` would). Each thread takes the byte at its global index
# `i = cuda.grid(1)`, if `i < data.size`, and adds 1 to its bin with `cuda.atomic.add(hist,
# data[i], 1)`. Roughly 3 lines.
#
# **How the check launches it.** `ceil(n / threads)` blocks of 64 threads (the hidden tests use 32,
# 64 or 128), so the last block sticks out past the data.
#
# **What the check does.** Every bin must be **exact** (counts are integers; there is no
# tolerance). Inputs: 1501 bytes of text, 1002 bytes of the image, a single byte; the hidden tests
# add a scanned page, uniform bytes and random sizes (small, because CPU mode simulates every
# thread; on a GPU the first case has 10 million bytes). In CPU mode the course also watches every
# access to `hist` during the launch: two threads touching one bin with nothing ordering them
# (threads of different blocks never are), one of them with a plain read or write, stop the launch
# with a `GlobalMemoryRace` that names both threads and lines, every time. When a histogram is
# wrong, the verdict adds up the bins and says what that usually means.

# %% nbgrader={"grade": false, "grade_id": "histogram_global_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def histogram_global_kernel(data, hist):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i], 1)
    ### END SOLUTION


# %% [markdown]
# Try it on 2000 bytes of text, launched the way the check launches it:

# %%
text = ch09.make_bytes("text", 2000, seed=3)
d_hist = cuda.to_device(np.zeros(256, np.uint32))
histogram_global_kernel[(text.size + 63) // 64, 64](cuda.to_device(text), d_hist)
got = d_hist.copy_to_host()
print(f"counted {got.sum()} of {text.size} bytes; spaces: {got[ord(' ')]}, 'e': {got[ord('e')]};"
      f" same as np.bincount: {np.array_equal(got, np.bincount(text, minlength=256))}")

# %% nbgrader={"grade": true, "grade_id": "histogram_global_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch09.histogram_global.check(histogram_global_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch09.histogram_global.check_hidden(histogram_global_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: a histogram without atomics
#
# The kernel below is your kernel with the atomic replaced by a plain `+=`. **Predict before you
# run**: on a GPU, on a scanned page (90% of the bytes in one bin), how many of the counts
# survive? In CPU mode, does the simulator lose counts too?

# %%
@cuda.jit
def histogram_no_atomics(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        hist[data[i]] += 1        # read, add, write: three steps another thread can come between


n_break = (1 << 22) if ag.backend.is_gpu else 1500
page = ch09.make_bytes("page", n_break, seed=4)
d_hist = cuda.to_device(np.zeros(256, np.uint32))
histogram_no_atomics[(n_break + 255) // 256, 256](cuda.to_device(page), d_hist)
got = d_hist.copy_to_host()
print(f"direct launch: the bins add up to {got.sum():,} for {n_break:,} bytes "
      f"({n_break - int(got.sum()):,} counts lost)\n")
try:
    ch09.histogram_global.check(histogram_no_atomics)
except ag.CheckFailed as failure:
    print("the course's check:\n" + str(failure))

# %% [markdown]
# On a GPU the direct launch should lose most of the page's counts: thousands of threads read,
# add and write bin 255 at once, and most of their writes overwrite one another. In CPU mode the
# simulator runs threads one Python step at a time and switches between them rarely, so the same
# launch usually gets every count right: **a race that does not show is still a race**. That is
# why the course's check does not trust the totals: it records every access to `hist` and stops at
# the first pair of threads that touched a bin with a plain read or write and nothing ordering
# them. The message names the bin, the two threads and the line.
#
# ## Measure it (on a GPU)
#
# On a GPU the next cell times your kernel on 2²⁸ bytes (256 MiB) of uniform values and of a
# scanned page, next to CuPy's `bincount` (if CuPy is installed) and a device-to-device copy of
# the same number of bytes, the practical bandwidth ceiling. In CPU mode it says why it cannot.

# %%
one_per_byte = lambda n: ((n + 255) // 256, 256)      # noqa: E731  (blocks, threads)
try:
    rows = ch09.measure({"9.1 global atomics": (histogram_global_kernel, one_per_byte)},
                        n=1 << 28, kinds=("uniform", "page"))
    ceiling = ag.timing.copy_ceiling(1 << 28)
    for r in rows:
        print(f"{ch09.KIND_LABELS[r['kind']]:32s} {r['label']:22s} {r['ms']:9.3f} ms"
              f" {r['gbps']:8.1f} GB/s  ({r['gbps'] / ceiling.gbps:.1%} of a copy)"
              f"{'' if r['right'] else '   WRONG'}")
    print(f"copy ceiling: {ceiling.gbps:.0f} GB/s ({ceiling.label})")
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nOn the course's H200 (one run, 2^28 uniform bytes), cupy.bincount, built on one"
          " global atomic per element as your kernel is, took 2.96 ms (about 91 GB/s): 43 times"
          " as long as a device-to-device copy of the same bytes (0.068 ms). On a scanned page"
          " it took 5.60 ms.")

# %% [markdown]
# A byte histogram reads each byte once and does almost no arithmetic: if memory were the limit,
# it would run near the copy ceiling. It runs far below it, and slower still on the page. The
# limit is the atomics: every byte makes one trip to the L2 cache, and all the updates of one bin
# queue behind each other there.
#
# ## Privatization: a copy of the histogram per block
#
# The fix is to give the updates more places to go (PMPP §9.4). Each block keeps a **private**
# copy of the 256 bins in **shared memory** and counts its bytes there: contention is now only
# among the threads of one block, and a shared-memory atomic is handled in the SM, some tens of
# cycles away, instead of in the L2 cache, hundreds of cycles away. At the end each block adds its
# 256 counts into the global histogram: 256 global atomics per block instead of one per byte.
#
# A block does three things, with a barrier between each two:
#
# 1. **zero** its private bins: `bins = cuda.shared.array(NUM_BINS, uint32)` starts with whatever
#    was in that memory (on a GPU: left over from another block; in CPU mode too). With fewer than
#    256 threads per block, each thread zeroes several bins:
#    `for b in range(cuda.threadIdx.x, NUM_BINS, cuda.blockDim.x)`;
# 2. `cuda.syncthreads()`, then **count**: `cuda.atomic.add(bins, data[i], 1)` for its bytes;
# 3. `cuda.syncthreads()`, then **merge**: for the same bins as in step 1, if the count is not 0,
#    `cuda.atomic.add(hist, b, bins[b])`. Atomically: other blocks merge into the same bins.
#
# **Coarsening** (PMPP §9.5). Privatization pays a fixed cost per block (zero and merge 256 bins),
# so it pays off when every block counts many bytes: launch only as many blocks as the GPU holds at
# once, and let each thread **loop** over many bytes. Which bytes? Two ways to split the data:

# %%
threads_, per_thread = 4, 4
fig, axes = plt.subplots(2, 1, figsize=(8, 2.8))
colours = ["#3b6ea8", "#e07b39", "#4c9a52", "#b5485d"]
for ax, (title, owner) in zip(axes, [
        ("contiguous: thread t takes bytes t·4 … t·4 + 3", lambda i: i // per_thread),
        ("interleaved (grid stride): thread t takes bytes t, t + 4, t + 8, …",
         lambda i: i % threads_)]):
    for i in range(threads_ * per_thread):
        t = owner(i)
        step = (i % per_thread) if "contiguous" in title else i // threads_
        ax.add_patch(plt.Rectangle((i, 0), 1, 1, facecolor=colours[t], edgecolor="white",
                                   alpha=1.0 if step == 0 else 0.45))
        ax.text(i + 0.5, 0.5, f"T{t}", ha="center", va="center", color="white", fontsize=9)
    ax.set_xlim(0, threads_ * per_thread); ax.set_ylim(0, 1); ax.axis("off")
    ax.set_title(title + "  (dark: the bytes read in the first step)", fontsize=9)
plt.tight_layout()
plt.show()

# %% [markdown]
# Both split the work evenly, and both give the right histogram. On a CPU, contiguous chunks are
# the natural choice (each core streams through its own part of memory). On a GPU the threads of a
# warp execute each load **together**: with **interleaved** partitioning, in every step the 32
# threads of a warp read 32 *consecutive* bytes, one memory transaction; with contiguous chunks
# they read 32 bytes that lie a whole chunk apart, up to 32 transactions for the same amount of
# data. Interleaved partitioning is the grid-stride loop of chapter 2:
# `for i in range(cuda.grid(1), data.size, cuda.gridsize(1))`. (Chapter 6 covers coalescing.)
#
# ## Exercise 9.2 · A privatized histogram with coarsening (4 points + 2 for speed)
#
# Write `histogram_private_kernel(data, hist)` (same arguments, `hist` zeroed before the launch):
# a private `cuda.shared.array(NUM_BINS, uint32)` per block, zeroed, counted into with
# `cuda.atomic.add` over a **grid-stride loop**, merged into `hist` with `cuda.atomic.add`, and
# the two `cuda.syncthreads()` barriers between the three steps. Use the module constant
# `NUM_BINS = 256` in the cell. Roughly 12 lines.
#
# **How the check launches it.** Two to four blocks of 64 threads (32 to 128 in the hidden tests)
# for about 2000 bytes: every thread loops over many bytes, and blocks have fewer threads than
# there are bins.
#
# **What the check does.** Exact counts, as in 9.1, on text, uniform bytes (every bin in use) and
# a single byte; hidden: a scanned page, the image, random sizes. In CPU mode the race detector
# watches the shared bins and `hist`: a missing barrier, a plain `+=` on a shared bin, or a merge
# that stores (`hist[b] = bins[b]`) instead of adding fails with a message naming the two threads
# and lines. **The speed test** (on a GPU) times your kernel on 2²⁸ uniform bytes with 8 blocks of
# 256 threads per SM, against the course's reference kernel and a compiled CPU loop: you need at
# least 25% of the reference's speed and 20× the loop. In CPU mode it says it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "histogram_private_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
NUM_BINS = 256   # one bin per byte value


@cuda.jit
def histogram_private_kernel(data, hist):
    ### BEGIN SOLUTION
    bins = cuda.shared.array(NUM_BINS, uint32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):       # 1. zero the private copy
        bins[b] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):   # 2. count (interleaved)
        cuda.atomic.add(bins, data[i], 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):       # 3. merge into the global histogram
        if bins[b] != 0:
            cuda.atomic.add(hist, b, bins[b])
    ### END SOLUTION


# %% [markdown]
# Try it on the image, with three blocks of 64 threads for 2000 bytes:

# %%
image = ch09.make_bytes("image", 2000, seed=5)
d_hist = cuda.to_device(np.zeros(256, np.uint32))
histogram_private_kernel[3, 64](cuda.to_device(image), d_hist)
got = d_hist.copy_to_host()
print(f"counted {got.sum()} of {image.size} bytes in {np.count_nonzero(got)} bins;"
      f" same as np.bincount: {np.array_equal(got, np.bincount(image, minlength=256))}")

# %% nbgrader={"grade": true, "grade_id": "histogram_private_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch09.histogram_private.check(histogram_private_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch09.histogram_private.check_hidden(histogram_private_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "histogram_private_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch09.histogram_private.check_speed(histogram_private_kernel)

# %% [markdown]
# Try breaking it on purpose, one change at a time, and read what the check says: remove the
# first barrier (a thread counts into a bin another thread has not zeroed yet), remove the second
# (a thread merges a bin others are still counting into), replace the shared atomic with
# `bins[data[i]] += 1`, or merge with `hist[b] = bins[b]`. Each of these can pass on a GPU on a
# lucky run; in CPU mode each fails every time.
#
# ## Aggregation: one atomic per run of equal bytes
#
# Privatization spreads the updates over many copies, but within a block, the updates of a hot bin
# still queue: on the page, nearly every thread of every warp adds to bin 255 at the same moment,
# and in PMPP's account those updates are served one at a time. PMPP §9.6 adds **aggregation**:
# each thread keeps the bin it is counting (`previous`) and how many bytes in a row fell in it
# (`run`). While its next byte falls in the same bin it only increments `run`, a register; when
# the bin changes it makes **one** atomic, `cuda.atomic.add(bins, previous, run)`, and starts a
# new run. When the loop ends, the last run is still in the registers: flush it too.
#
# The runs are runs *in the sequence of bytes a thread visits* (`i`, `i + stride`, …). On the page
# most of them are 255 whatever the stride, so runs are long and the number of atomics drops
# several times; on uniform bytes a run is rarely longer than one byte and aggregation only adds a
# comparison per byte.
#
# **Whether it pays depends on the GPU.** PMPP's argument assumes that atomics on one address are
# slow. On the course's H200 they were not the limit: on a scanned page of 2²⁸ − 1 bytes the
# course's privatized kernel (9.2's reference) took 0.194 ms, no slower than the 0.190 ms it took
# on uniform bytes, and the course's aggregating kernel took 0.893 ms, 4.6× slower: the compare
# and the branch it adds to every byte cost more than the atomics it saves (`docs/benchmarks.md`;
# the privatized reference also keeps four loads in flight per thread, the aggregating one reads
# one byte per step of its loop). Measure both on your GPU below; the speed test asks
# your aggregating kernel for 60% of the course's aggregating kernel, not for a win over 9.2.
#
# ## Exercise 9.3 · Aggregating runs (3 points + 2 for speed)
#
# Write `histogram_aggregate_kernel(data, hist)`: your 9.2 kernel, with the counting loop
# replaced by an aggregating one. Start with `previous = -1` and `run = 0`; for each byte `value =
# int(data[i])`: if `value == previous`, `run += 1`; otherwise, if `run > 0`, add `run` to bin
# `previous` atomically, then `previous = value` and `run = 1`. After the loop, flush the last run.
# Roughly 18 lines.
#
# **What the check does.** As for 9.2 (same launches, exact counts, races caught in CPU mode),
# with a scanned page first (long runs), then text and a single byte; hidden: uniform bytes (runs
# of one), the image, random sizes. **The speed test** (on a GPU) times it on 2²⁸ − 1 bytes of a
# scanned page, where contention bites, against the course's reference; same bars as 9.2.

# %% nbgrader={"grade": false, "grade_id": "histogram_aggregate_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def histogram_aggregate_kernel(data, hist):
    ### BEGIN SOLUTION
    bins = cuda.shared.array(NUM_BINS, uint32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        bins[b] = 0
    cuda.syncthreads()
    previous = -1
    run = 0
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        value = int(data[i])
        if value == previous:
            run += 1                                    # same bin: a register, no atomic
        else:
            if run > 0:
                cuda.atomic.add(bins, previous, run)    # one atomic for the whole run
            previous = value
            run = 1
    if run > 0:
        cuda.atomic.add(bins, previous, run)            # the last run
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if bins[b] != 0:
            cuda.atomic.add(hist, b, bins[b])
    ### END SOLUTION


# %% [markdown]
# How many atomics does aggregation save? Count the runs each thread would see on each input,
# for a launch of 3 blocks of 64 threads (192 threads, as in the check) and for a GPU-sized grid:

# %%
def atomics_with_runs(data, total_threads):
    """Atomic adds an aggregating grid-stride histogram makes (one per run per thread)."""
    count = 0
    for t in range(min(total_threads, data.size)):
        seq = data[t::total_threads]
        count += 1 + int(np.count_nonzero(seq[1:] != seq[:-1]))
    return count


for kind, data in samples.items():
    small = data[:20_000]
    few = atomics_with_runs(small, 192) / small.size
    many = atomics_with_runs(data, 4096) / data.size
    print(f"{ch09.KIND_LABELS[kind]:32s} atomics per byte: {few:5.2f} (192 threads),"
          f"  {many:5.2f} (4096 threads)")

# %% nbgrader={"grade": true, "grade_id": "histogram_aggregate_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch09.histogram_aggregate.check(histogram_aggregate_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch09.histogram_aggregate.check_hidden(histogram_aggregate_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "histogram_aggregate_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch09.histogram_aggregate.check_speed(histogram_aggregate_kernel)

# %% [markdown]
# ## Predict: three ceilings on a histogram's speed
#
# A histogram of `n` bytes cannot finish before the slowest of three things is done:
#
# 1. **reading the bytes**, through a memory bus of `bandwidth` bytes per second;
# 2. **the atomics, all bins together**: one atomic per byte, and the memory that holds the bins
#    completes at most `atomic_rate` of them per second;
# 3. **the hottest bin**: a fraction `hot_fraction` of the bytes fall in the fullest bin, and the
#    updates of one address are served one after another, at most `address_rate` per second. With
#    `copies` copies of the histogram updated at the same time (1 for global atomics; one per block
#    in flight for a privatized histogram), each copy gets an equal share of those updates.
#
# Each is a number of seconds you can write down from its description; the time is at least the
# largest of the three.
#
# Use these figures for an H200-like device. They are **round numbers chosen for this exercise,
# not measurements** (the bandwidth is the H200's advertised 4.8 TB/s); comparing the bounds they
# give with measured times, afterwards, tells you how good they are.
#
# | | bandwidth | atomic_rate (all bins) | address_rate (one bin) | copies |
# |---|---|---|---|---|
# | global atomics (9.1) | 4.8 × 10¹² B/s | 1 × 10¹¹ per s | 5 × 10⁸ per s | 1 |
# | privatized (9.2) | 4.8 × 10¹² B/s | 2 × 10¹² per s | 1 × 10⁹ per s | 1056 (132 SMs × 8) |
#
# ## Exercise 9.4 · A bound on a histogram's time (2 points)
#
# Write `histogram_time_bound(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies)`:
# `n` and `copies` are Python ints, the others Python floats (rates per second, bandwidth in
# bytes per second). Return the lower bound described above, in **seconds**, as a float: write
# each ceiling from its description first. Roughly 3 lines.
#
# **Predict first, by hand** (then let your function check you): for 2²⁸ bytes with the figures
# above, how many milliseconds at least does the global-atomics kernel need on uniform bytes
# (`hot_fraction = 1/256`)? On a scanned page (`hot_fraction = 0.9`)? And the privatized kernel on
# each? Which ceiling binds in each of the four cases?
#
# **What the check does.** It calls your function on 8 sets of values (the first four are the four
# cases above; then a slower memory, one byte, random values) and the hidden tests on 200 random
# ones (10³ to 10¹⁰ bytes, any hot fraction, bandwidths from 30 GB/s to 10 TB/s, rates over
# several orders of magnitude, 1 to 4096 copies). Results are compared with the bound computed in
# float64, allowing a few roundings: any algebraically equal formula passes; a number rounded by
# hand does not.

# %% nbgrader={"grade": false, "grade_id": "histogram_time_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def histogram_time_bound(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    """Seconds a histogram of n bytes needs at least: the slowest of three ceilings."""
    ### BEGIN SOLUTION
    reading = n / bandwidth
    atomics = n / atomic_rate
    hottest = hot_fraction * n / (copies * address_rate)
    return max(reading, atomics, hottest)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "histogram_time_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch09.histogram_time_bound.check(histogram_time_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch09.histogram_time_bound.check_hidden(histogram_time_bound)
### END HIDDEN TESTS

# %% [markdown]
# Your bounds for 2²⁸ bytes of each input (with its own hot fraction), next to what each kernel
# reaches on a GPU. In CPU mode only the predictions are printed.

# %%
n_measure = 1 << 28
figures = {
    "global": dict(bandwidth=4.8e12, atomic_rate=1e11, address_rate=5e8, copies=1),
    "private": dict(bandwidth=4.8e12, atomic_rate=2e12, address_rate=1e9, copies=1056),
}
hot = {kind: ch09.hot_fraction(data) for kind, data in samples.items()}
predicted = {(kind, way): histogram_time_bound(n_measure, hot[kind], **figures[way])
             for kind in ch09.KINDS for way in figures}
print(f"{'input':32s} {'hot':>6s}  bound, global atomics   bound, privatized")
for kind in ch09.KINDS:
    g, p = predicted[(kind, "global")], predicted[(kind, "private")]
    print(f"{ch09.KIND_LABELS[kind]:32s} {hot[kind]:6.3f}  {g * 1e3:8.3f} ms"
          f" {n_measure / g / 1e9:7.0f} GB/s  {p * 1e3:8.3f} ms {n_measure / p / 1e9:7.0f} GB/s")

kernels = {
    "9.1 global atomics": (histogram_global_kernel, one_per_byte),
    "9.2 privatized": (histogram_private_kernel, ch09.speed_shape),
    "9.3 aggregated": (histogram_aggregate_kernel, ch09.speed_shape),
}
try:
    rows = ch09.measure(kernels, n=n_measure)
    ceiling = ag.timing.copy_ceiling(n_measure)
    print()
    for r in rows:
        way = "private" if r["label"].startswith(("9.2", "9.3")) else "global"
        bound = predicted[(r["kind"], way)]
        print(f"{ch09.KIND_LABELS[r['kind']]:32s} {r['label']:20s} {r['ms']:9.3f} ms"
              f" {r['gbps']:8.1f} GB/s  {bound / (r['ms'] * 1e-3):6.0%} of the bound's speed"
              + ("" if r["right"] else "  WRONG"))
    ch09.plot_measurements(rows, ceiling.gbps, f"Histograms of 2^28 bytes on {ag.backend.label}")
    plt.show()
except ag.timing.NeedsGPU as why:
    print("\n" + str(why))

# %% [markdown]
# ## Explain the gap (2 points, graded by your instructor)
#
# Compare the bounds with what you measured (on a GPU; without one, use the course's H200 figures
# for 2²⁸ bytes, `docs/benchmarks.md`: the course's privatized kernel 0.190 ms on uniform bytes
# and 0.194 ms on the page, its aggregating kernel 0.893 ms on the page, `cupy.bincount` 2.96 ms
# and 5.60 ms, a copy of the bytes about 0.07 ms). In the cell below, in 5 to 10 sentences:
#
# 1. for the global-atomics kernel and for the privatized one, on uniform bytes and on the page,
#    say which ceiling the model says binds, and how far the measurement is from it;
# 2. explain the largest gap: name at least two things the model leaves out, and say which
#    measurement supports each (for example: how the time changes from uniform bytes to the page,
#    or from 9.2 to 9.3);
# 3. say which figure of the table you would correct, in which direction, from your measurements.
#
# A full-mark answer gets the binding ceiling right in all four cases, uses measured numbers (yours
# or the course's), and ties each proposed cause to a measurement rather than listing causes.

# %% [markdown] nbgrader={"grade": true, "grade_id": "histogram_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only), with the course's H200 figures (2²⁸ bytes).* Global
# atomics: the model binds on the atomic rate for uniform bytes (2.7 ms) and on the hottest bin
# for the page (0.48 s). `cupy.bincount`, one global atomic per byte like 9.1, took 2.96 ms on
# uniform bytes, 10% above its bound, but only 5.60 ms on the page: 86× faster than the
# hot-bin bound, so the model's rate for one global address (5 × 10⁸ per second) is far too low
# on this GPU; the L2 serves repeated atomics on one address much faster, at least 0.9 · 2²⁸ /
# 5.6 ms ≈ 4 × 10¹⁰ per second. Privatized: the model binds on the shared atomic rate for uniform
# bytes (0.13 ms) and on the hot bin for the page (0.23 ms). Measured 0.190 ms and 0.194 ms: the
# page is no slower than uniform bytes, and faster than its own hot-bin bound, so the per-copy
# address rate (10⁹ per second) is too low too, and contention on bin 255 is not what limits the
# kernel. What does is the work per byte the model leaves out: a 1-byte load, index arithmetic,
# the loop and the atomic instruction itself, the same on both inputs (which is why the two times
# are equal), at 1.4 TB/s, a third of the copy. Aggregation (9.3) confirms it: it removes
# atomics that were not the bottleneck and adds a compare and a branch per byte, and took
# 0.893 ms on the page, 4.6× slower than plain privatization. I would raise both address rates
# (global by at least 86×, about two orders of magnitude; shared by at least 18%), and add a
# per-byte instruction cost to the model.

# %% [markdown]
# ## Atomics on one address: the model and the H200
#
# This chapter's model, PMPP's (§9.3), serves the updates of one address one after another, at
# `address_rate` per second, while updates of different addresses proceed in parallel; chapter 10
# uses the same model, with the same round figure for one global address (5 × 10⁸ per second), for
# its one atomic per block. What the course's H200 measured (`docs/bench-h200.json`, 2²⁸ bytes;
# `cupy.bincount` makes one global atomic add per byte):
#
# - spread over 256 addresses (uniform bytes): 2²⁸ updates in 2.96 ms, at least 9 × 10¹⁰ updates
#   per second;
# - on one address (the scanned page, about 90% of its bytes in bin 255): 5.60 ms, so that one
#   address took at least 4 × 10¹⁰ updates per second, 80 times the table's figure;
# - shared-memory atomics in 9.2's privatized reference (uniform bytes): 2²⁸ updates in 0.190 ms,
#   at least 1.4 × 10¹² updates per second.
#
# All three are lower bounds: each kernel also reads its bytes. So the model's shape holds (one
# address is slower than many: the page took about twice as long as uniform bytes), but on the
# H200 one global address is not a queue of single round trips to the L2: it absorbed at least
# 4 × 10¹⁰ updates per second. When you model atomics on one address on this GPU, start from that
# measured figure rather than the table's.

# %% [markdown]
# Questions to answer for yourself (not graded):
# 1. Each block of the privatized kernel merges up to 256 bins with global atomics. With 1056
#    blocks, how many global atomics is that, and how many updates does each global bin receive?
#    Compare with 9.1's one atomic per byte.
# 2. A histogram with 65,536 bins (16-bit values) needs 256 KB per private copy: more than an SM's
#    shared memory. What would you do? (Think of private copies in global memory shared by several
#    blocks, or of keeping only the hot bins in shared memory.)
# 3. Aggregation can only save atomics when a thread sees runs. With contiguous partitioning a
#    thread sees the runs that are in the data itself (a row of white paper), with interleaved
#    partitioning only those that the value distribution makes likely. Which loads coalesce, and
#    which data would make you choose differently?
# 4. How would the model's third term change for the aggregated kernel, if a thread's average run
#    on the page is 10 bytes? Would the model then predict 9.3 to beat 9.2 on the page, and what
#    does the H200's 0.893 ms against 0.194 ms say is missing from it?
#
# ## Going further
# - PMPP ch. 9: §9.1 (background: histograms), §9.2 (atomic operations and a basic histogram
#   kernel), §9.3 (latency and throughput of atomic operations), §9.4 (privatization), §9.5
#   (coarsening), §9.6 (aggregation); ch. 10 (reduction) uses atomics and privatization again, and
#   ch. 6 explains coalescing.
# - GPU MODE lecture 8 (CUDA performance checklist) and lecture 9 (reductions).
# - Warp-aggregated atomics: a warp can find its lanes that share a bin (`cuda.match_any_sync`)
#   and let one lane add for all of them. Like 9.3, this adds instructions to every byte to save
#   atomics: measure it against plain privatization before keeping it. CUB's `DeviceHistogram`
#   (what a library call would use in CUDA C++) privatizes in shared or global memory and can
#   compress each thread's runs of equal samples before counting them, PMPP's aggregation.
# - **On AMD (HIP):** shared memory is the **LDS**, which has its own atomic units, so
#   privatization helps there too. On AMD's data-centre GPUs a wavefront has 64 lanes, so up to 64
#   updates of a hot bin arrive in one instruction; whether aggregation pays there is, as on the
#   H200, a question for measurement. numba-hip keeps the same `cuda.atomic.add` and
#   `cuda.shared.array` names.
