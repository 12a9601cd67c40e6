# %% [markdown]
# # Chapter 22 · Advanced practices: streams, pinned memory, fewer launches, ILP
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 22, with the streams of
# chapter 20.
#
# **Before you start:** chapters 1–6 (chapter 6's coalescing and latency hiding above all) and
# chapter 2's CUDA events. **Time:** about 3 hours, reading and exercises included (more in CPU
# mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Write a **pipeline** that cuts a large host array into chunks and queues each chunk's copy in,
#   kernel and copy back on its own **CUDA stream**, from **pinned** memory, so that the copies of
#   one chunk run under the kernel of another; and read its **timeline**, drawn from CUDA event
#   stamps, to see it.
# - Measure what a kernel launch costs **from Python**, and remove most of it: do 2,000 small
#   problems of different lengths in **one launch** with an offsets array, instead of one launch
#   each.
# - Predict, then measure, **occupancy against instruction-level parallelism**: four independent
#   elements per thread at a quarter of the threads, against one element per thread.
# - Say what **unified (managed) memory** costs on first touch, what a **CUDA graph** saves, and
#   where Numba CUDA cannot express what the book shows (and what the closest Python is).
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32

ag.banner()
ch22 = ag.problems.ch22

# %% [markdown]
# ## The idea: the GPU is on the other side of a bus, and Python is slow to talk to it
#
# Every kernel so far took its inputs from device memory and left its outputs there. Real data
# starts on the host: it must cross the PCIe bus (about 50 GB/s each way on a PCIe 5 H200, nearly
# a hundred times less than the H200's own 4.8 TB/s), and the host must tell the GPU what to do, one call at
# a time, from Python. Three things follow.
#
# 1. **Copies and kernels can overlap.** A GPU has copy engines separate from its SMs: while a
#    kernel runs, one engine can copy data in and another copy results out. It does so only if
#    the work is queued on different **streams** (a stream is a queue the GPU runs in order; two
#    streams have no order between them) and only from **pinned** (page-locked) host memory,
#    which the copy engine can read by itself without the operating system moving pages. Cut the
#    array into chunks, and chunk 2's copy in runs under chunk 1's kernel and chunk 0's copy back.
# 2. **Each launch costs the host time.** Calling a Numba kernel from Python costs tens of
#    microseconds before the GPU sees anything: the arguments are checked and typed, the launch
#    is configured, the driver is called. A kernel that runs for 5 µs is then limited by Python,
#    not by the GPU. The cure is fewer, larger launches.
# 3. **Latency is hidden by independent work, whatever provides it.** Many threads per SM
#    (occupancy) is one way; several independent loads in flight per thread (instruction-level
#    parallelism, ILP) is another.
#
# Here is the picture of point 1 for four chunks on two streams, drawn by hand (the real one, from
# event stamps, comes later): above, the serial way, the whole array copied in, computed, copied
# back; below, the pipeline, where the bars stack in time.

# %%
def ideal(chunks, streams, copy_ms, kernel_ms):
    rows, engine_free = [], {"copy in": 0.0, "kernel": 0.0, "copy out": 0.0}
    stream_free = [0.0] * streams
    for i in range(chunks):
        s, t = i % streams, stream_free[i % streams]
        for stage, ms in (("copy in", copy_ms), ("kernel", kernel_ms), ("copy out", copy_ms)):
            t = max(t, engine_free[stage])
            rows.append({"chunk": i, "stream": s, "stage": stage, "start_ms": t,
                         "end_ms": t + ms})
            t += ms
            engine_free[stage] = t
        stream_free[s] = t
    return rows


fig, ax = plt.subplots(2, 1, figsize=(11, 3.6), sharex=True)
ch22.draw_timeline(ideal(1, 1, 4.0, 2.0), title="serial (drawn by hand)", ax=ax[0])
ch22.draw_timeline(ideal(4, 2, 1.0, 0.5), title="4 chunks on 2 streams (drawn by hand)", ax=ax[1])
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Streams and events in Numba, and what CPU mode can show
#
# The calls of this chapter:
#
# ```python
# s = cuda.stream()                              # a new stream
# x = cuda.pinned_array(n, np.float32)           # page-locked host memory
# d_x = cuda.to_device(x[lo:hi], stream=s)       # queued copy in: returns at once
# kernel[blocks, threads, s](d_x, d_out, ...)    # queued on s (third launch argument)
# d_out.copy_to_host(out[lo:hi], stream=s)       # queued copy back, straight into pinned memory
# e = cuda.event(); e.record(s)                  # stamped when s reaches it
# s.synchronize(); cuda.synchronize()            # wait for s; for every stream
# cuda.event_elapsed_time(e0, e1)                # milliseconds between two stamps
# ```
#
# On a GPU, a copy from pageable memory (an ordinary NumPy array) is staged through a pinned
# buffer by the driver and does not overlap anything; a launch without a stream goes to the
# default stream, which waits for every other (blocking) stream and makes them wait for it.
#
# **In CPU mode** the simulator runs everything at once, in order, on the host. The course adds a
# timeline to it so that events stamp real milliseconds (chapter 2 used them), but there is **one**
# timeline: nothing overlaps, and a copy takes no time at all. So CPU mode **can** check that a
# pipeline is right (every chunk, every element, the right streams, no waits in the loop: the
# check below watches the copies and waits your code makes) and **cannot** show overlap or
# measure it. The next cell prints what each call does here; where a GPU would overlap, this
# notebook shows the timeline the course recorded on an H200.

# %%
ch22.show_cpu_mode()

# %% [markdown]
# ## Where Numba CUDA stops, and what the book means
#
# Some of what PMPP's chapter 22 and the CUDA toolkit describe has no Numba CUDA API. This
# notebook says so where it comes up and shows the CUDA C++ the book means as text:
#
# | CUDA feature | Numba CUDA | closest Python |
# |---|---|---|
# | streams, events, pinned memory, async copies | yes | used in this chapter |
# | managed (unified) memory, `cudaMallocManaged` | `cuda.managed_array` | measured below |
# | prefetch and advice, `cudaMemPrefetchAsync`, `cudaMemAdvise` | no call in the public API | touch the data in a kernel first, or copy explicitly |
# | CUDA graphs, `cudaStreamBeginCapture` / `cudaGraphLaunch` | **none** | CuPy's stream capture (`stream.begin_capture()`), or fewer launches |
# | dynamic parallelism (a kernel launching kernels) | none | launch from the host; chapter 21 |
# | stream priorities, `cudaStreamCreateWithPriority` | none | order the work yourself |
#
# In CUDA C++ a graph captures a sequence of launches once and replays it with one call, which
# removes most of the per-launch cost on the host:
#
# ```cpp
# cudaStream_t s;  cudaStreamCreate(&s);
# cudaGraph_t graph;  cudaGraphExec_t exec;
# cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
# for (int p = 0; p < problems; ++p)                  // recorded, not run
#     axpb<<<blocks[p], 256, 0, s>>>(x + off[p], out + off[p], a[p], b[p], len[p]);
# cudaStreamEndCapture(s, &graph);
# cudaGraphInstantiate(&exec, graph, 0);
# cudaGraphLaunch(exec, s);                           // all the launches, one call
# ```
#
# Numba has nothing like it. The measuring cell times CuPy's version of it where CuPy is installed
# (CuPy is not part of this course's packages); Exercise 22.2 does what Numba can: one launch
# instead of many.
#
# ## The CPU baseline
#
# The chapter's operation is as simple as an operation gets, `out = a · x + b` in float32: what
# matters is how the data reaches the GPU, not the arithmetic. The host does it at memory speed:

# %%
why = ag.timing.not_measured("Timing the CPU baseline", gpu=False)
if why:
    print(why)
for r in ([] if why else ch22.time_cpu()):
    print(f"{r['label']:34s} {r['ms']:8.2f} ms {r['gbps']:7.1f} GB/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# **Predict before you go on:** to do this on a GPU, every byte crosses the bus twice (in and
# out). At 50 GB/s each way, how long do 2^26 floats (268 MB) take to go in and come back, one
# direction after the other? How long does the H200 take to compute them (8 bytes an element at
# about 4 TB/s)? What is the best a pipeline can do, and how far is the serial way from it?
#
# ## Exercise 22.1 · A chunked pipeline over streams (4 points)
#
# Write `axpb_kernel(x, out, a, b)` (one thread per element: `out[i] = a · x[i] + b`) and
# `pipeline(x, out, a, b, chunks, streams)`. `x` and `out` are host arrays of `n` float32 values
# in **pinned** memory (the check makes them with `cuda.pinned_array`), `a` and `b` float32
# scalars, `chunks` and `streams` Python ints (`chunks ≤ n`). Process `x` in `chunks` pieces that
# cover it exactly once (`n` need not be a multiple of `chunks`); piece `i` goes on stream
# `i % streams`:
#
# 1. copy piece `i` of `x` to the device, queued on its stream;
# 2. launch the kernel on it, on the same stream;
# 3. copy the result straight into piece `i` of `out`, queued on the same stream;
#
# and wait **once**, after the last piece is queued. Give each stream its own device buffers
# (allocated before the loop, as long as the longest piece, and used through a slice `d[:m]`):
# the stream runs its pieces in order, so a buffer is never overwritten before its copy back is
# done. Roughly 20 lines.
#
# **What the check does.** Besides the values (each within `γ_2 · (|a·x| + |b|)` of the float64
# value, `γ_k = k·u / (1 − k·u)`, `u = 2⁻²⁴`: a product and a sum, fused or not), it watches
# the copies, launches and waits your function makes: `x` goes to the device in exactly `chunks`
# copies that cover it once, each queued on a stream (`stream=`), over `min(chunks, streams)`
# streams at least; your kernel is launched on a stream (`kernel[blocks, threads, s]`);
# nothing else is copied in; results come back only into `out`, with `stream=`; and no wait
# (`cuda.synchronize()`, or a stream's `synchronize()` on the piece just queued) happens before
# the last piece is queued. Visible: 1,000 elements in 7 pieces over 3 streams, 37 in 5 over 2,
# and 1 in 1 over 1; hidden: 4,000, 2, 97 and random sizes with random pieces (1 to 12) and
# streams (1 to 4). `out` is filled with NaN first. The pipeline's speed is not graded: on a GPU
# the measuring cell times yours beside the serial copy–kernel–copy and the course's pipeline.

# %% nbgrader={"grade": false, "grade_id": "pipeline_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def axpb_kernel(x, out, a, b):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b
    ### END SOLUTION


def pipeline(x, out, a, b, chunks, streams):
    ### BEGIN SOLUTION
    n = x.shape[0]
    longest = (n + chunks - 1) // chunks
    queues = [cuda.stream() for _ in range(streams)]
    d_in = [cuda.device_array(longest, np.float32) for _ in range(streams)]
    d_out = [cuda.device_array(longest, np.float32) for _ in range(streams)]
    for i in range(chunks):
        lo, hi = i * n // chunks, (i + 1) * n // chunks
        s = i % streams
        m = hi - lo
        d_in[s][:m].copy_to_device(x[lo:hi], stream=queues[s])
        axpb_kernel[(m + 255) // 256, 256, queues[s]](d_in[s][:m], d_out[s][:m], a, b)
        d_out[s][:m].copy_to_host(out[lo:hi], stream=queues[s])
    cuda.synchronize()
    ### END SOLUTION


# %% [markdown]
# Try it once, and see what the grader says about its copies (`None`: nothing to say):

# %%
got, expected, said = ch22.try_pipeline(pipeline, n=1000, chunks=7, streams=3)
print("largest error:", float(np.max(np.abs(got - expected))), "| the grader on the copies:", said)

# %% nbgrader={"grade": true, "grade_id": "pipeline_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch22.pipeline.check(pipeline)
### BEGIN HIDDEN TESTS
ag.problems.ch22.pipeline.check_hidden(pipeline)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: a wait after every piece
#
# The pipeline below is the same, except that it waits for each piece's stream before queuing
# the next one, a line people add "to be safe". **Predict before you run:** are its results
# right? What does a GPU do with the copy engines while it waits? What does the check say?

# %%
def pipeline_waits(x, out, a, b, chunks, streams):
    n = x.shape[0]
    queues = [cuda.stream() for _ in range(streams)]
    for i in range(chunks):
        lo, hi = i * n // chunks, (i + 1) * n // chunks
        s = queues[i % streams]
        d_x = cuda.to_device(x[lo:hi], stream=s)
        d_y = cuda.device_array(hi - lo, np.float32)
        axpb_kernel[(hi - lo + 255) // 256, 256, s](d_x, d_y, a, b)
        d_y.copy_to_host(out[lo:hi], stream=s)
        s.synchronize()                   # "to be safe": every piece now runs alone


got, expected, said = ch22.try_pipeline(pipeline_waits)
print("values right:", bool(np.all(np.abs(got - expected) <= 1e-5 * (np.abs(expected) + 1))))
try:
    ch22.pipeline.check(pipeline_waits)
except ag.CheckFailed as failure:
    print("the course's check:\n" + str(failure))

# %% [markdown]
# Its values are right, and on a GPU it is as slow as the serial copy–kernel–copy: while a piece
# is being computed, nothing has been queued behind it, so the copy engines sit idle. A wait
# inside the loop is the most common reason a stream pipeline shows no overlap; the other two are
# a copy from pageable memory (a plain NumPy array: the driver stages it and the call returns only
# once it is done) and a launch without a stream (the default stream waits for all the others).
#
# ## The timeline, drawn from event stamps
#
# Put an event on a stream before a stage and another after it: the GPU stamps each when the
# stream reaches it, so the pair brackets the stage exactly (`ch22.reference_pipeline` does this
# when given a list, `stamps=`). The cell below runs the course's pipeline on 2^26 floats, serial
# and in 8 chunks over 4 streams, and draws one lane per stream. In CPU mode it draws the course's
# run on an H200 instead: this machine's single timeline cannot overlap anything.

# %%
try:
    serial_rows = ch22.timeline(chunks=1, streams=1)
    piped_rows = ch22.timeline(chunks=8, streams=4)
    fig, ax = plt.subplots(2, 1, figsize=(11, 4.4), sharex=True)
    ch22.draw_timeline(serial_rows, title="serial", ax=ax[0])
    ch22.draw_timeline(piped_rows, title="8 chunks over 4 streams", ax=ax[1])
    plt.tight_layout()
    plt.show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nThe course's run on an H200 (2^26 floats, serial, then 8 chunks over 4 streams):")
    ch22.show_recorded_timelines()

# %% [markdown]
# Look for three things: the copy-in bars of later chunks under the kernel bars of earlier ones;
# the copy-out bars under the next chunk's copy in (the two directions use two copy engines); and
# the total, which cannot be shorter than the slower direction of copies, however many streams
# you add. The kernel here is so cheap next to the bus that the copies dominate: the pipeline can
# save at most about the time of one direction and of the kernel. On the course's H200 it saved
# less, 9.36 ms against 11.53 for the serial way: each direction slowed when both ran at once
# (from about 48 GB/s to 35–40), and each chunk's copy in started a little after the previous one
# ended, while Python queued the chunk's calls.
#
# ## Launch overhead, measured from Python
#
# On a GPU the next cell launches a one-block kernel 2,000 times in a row and divides the host's
# time by 2,000: the GPU does each launch's work in a few microseconds, so what is measured is
# the host. Numba's launch `k[grid, block](...)` configures the kernel each time (a new launch
# configuration object) and then checks and types every argument; keeping the configured kernel,
# `kc = k[grid, block]`, and calling `kc(...)` saves the first part, which on the course's H200
# was too small to see (45 µs a launch either way: the arguments are where the time goes). The
# third row prepares the arguments once (their pointers, shapes and strides, the compiled
# kernel's handle) and then calls the driver's `cuLaunchKernel` directly on each launch
# (`autograder.machine.launch.BoundLaunch`, which the course's own sum, scan and histogram use
# outside the exercises): on the H200's host 7 to 11 µs a launch, against 23 to 46 µs for
# Numba's in the same runs (`docs/benchmarks.md`). Where CuPy is installed, the same launches are
# also captured once into a CUDA graph and replayed with one call (there: 12 µs a CuPy launch,
# 1.0 µs a kernel replayed from the graph).

# %%
try:
    for r in ch22.launch_overhead():
        print(f"{r['label']:70s} {r['us_per_launch']:7.2f} µs per launch")
except ag.timing.NeedsGPU as why:
    print(why)

# %% [markdown]
# ## One call, end to end: what a caller waits for
#
# The launch overhead above is the host's share of a call. Code that calls a GPU function and
# needs its answer (a training step that sums a gradient, a filter that scans a mask) waits for
# the whole call, and three figures describe it:
#
# - **device time**: the GPU's own work for the call, measured with the GPU kept busy while
#   Python queues it (how the speed tests time your kernels);
# - **host time**: Python's time per call, calls queued back to back: the overhead of every
#   launch, fill and argument check the call makes;
# - **end to end**: from a CUDA event just before the call to one just after it, on an idle GPU:
#   what the caller sees. The GPU cannot start a kernel before Python has queued it, and
#   Python's work after a launch runs while the kernel does, so a caller waits for about
#   Python's time plus whatever of the GPU's work is left when Python returns.
#
# The course's sum (chapter 10), scan (chapter 11) and histogram (chapter 9) are called two ways
# below. The **exercise launch** is how the checks launch a kernel: the output zeroed by a small
# kernel (the scan: four fills, of its tile flags, its two arrays of partial sums and its tile
# counter), then the kernel, each through Numba's launch. The **course helpers**
# (`sum_on_device`, `scan_on_device`, `histogram_on_device`, in each chapter's `references.py`)
# are written for code outside the exercises: the launch is bound once (the bound launch
# above), scratch arrays are kept between calls, and an output is zeroed by one driver call
# instead of a kernel. Beside them, where they are installed, PyTorch's and CUB's own calls on
# the same arrays. The chart is the course's run on the H200: each bar is a call's end-to-end
# time, its dark part the GPU's own time, the light rest Python's and the driver's.
#
# What it shows:
#
# - **At 2^18 elements (1 MiB) the host decides.** The GPU's work for a sum, a scan or a
#   histogram takes 5 to 13 µs (PyTorch's histogram aside); end to end the calls take 20 to
#   193 µs. The exercise launch of the scan, five launches through Numba (one empty kernel's
#   launch cost Python 24 µs in this run), takes 193 µs for 13 µs of GPU work.
# - **Binding the launch and keeping the scratch closes most of the gap.** At 2^24 elements
#   (64 MiB) the sum helper takes 37 µs end to end (the exercise launch 74, `torch.sum` 32) and
#   the scan helper 68 µs (the exercise launch 239, `torch.cumsum` 68): the sum 1.2 times
#   PyTorch's time and the scan level with it, though PyTorch's dispatch is compiled C++.
# - **A call that reads a value back waits for the GPU.** `torch.bincount` must know the largest
#   value before it can size its output, so every call copies one number back and waits for
#   everything queued before it: 141 µs at 2^24 against 45 for the course's histogram, and Python
#   cannot queue the next call while it waits. `.item()`, `copy_to_host` and any output sized by
#   the data do the same.
#
# So: below a few tens of microseconds of GPU work per call, count launches and Python, not
# bytes. Prepare a launch once and call it many times, keep outputs and scratch arrays between
# calls, zero with the driver rather than a kernel, read nothing back until the end, and when the
# problems are many and small, put them in one launch (the next exercise) or capture the launches
# once in a CUDA graph.
#
# On a GPU the next cell measures the same calls on yours at 2^18 and 2^24 elements (about half a
# minute), prints the table and draws it; in CPU mode it draws the course's run.

# %%
try:
    costs = ch22.call_costs()
    print(ch22.calls_table(costs["rows"]))
    ch22.show_calls(costs)
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200:")
    ch22.show_calls()

# %% [markdown]
# ## Exercise 22.2 · Many small problems in one launch (3 points + 2 for speed)
#
# A batch of `P` independent problems, each a vector of its own length (from empty to thousands of
# elements) with its own `a[p]` and `b[p]`: `out[j] = a[p] · x[j] + b[p]` for every `j` of
# problem `p`. The vectors are stored end to end in one array `x`, and an **offsets** array says
# where each starts: problem `p` is `x[offsets[p]:offsets[p + 1]]` (`offsets` has `P + 1`
# entries, the first 0, the last the total length; chapter 14's CSR row pointer is the same
# idea). One launch per problem would cost `P` launch overheads; write `batched_kernel(x,
# offsets, a, b, out)`, launched **once** with one block per problem (`P` blocks): block `p`
# handles problem `p`, its threads stepping through the problem by `blockDim.x`. Roughly 8 lines.
#
# **What the check does.** Blocks of 32 threads (32, 64 and 128 in the hidden tests), `out`
# filled with NaN. Visible: 7 problems of 300 elements in all (problem 0 empty, others longer than
# a block), 3 of 70, and 1 of 1; hidden: 30 problems of 1,200 elements, a problem alone, 6 problems
# for 4 elements (most empty), 3 problems of 2,500 elements, and random batches. Tolerance as in 22.1. **The speed test** (on a
# GPU) runs 2,000 problems of 8.4 million elements in all, blocks of 256, against the course's
# kernel timed in the same run and NumPy on one core: you need at least 50% of the course's speed
# and 5× NumPy's. In CPU mode it says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "batched_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def batched_kernel(x, offsets, a, b, out):
    ### BEGIN SOLUTION
    p = cuda.blockIdx.x
    end = offsets[p + 1]
    ap, bp = a[p], b[p]
    j = offsets[p] + cuda.threadIdx.x
    while j < end:
        out[j] = ap * x[j] + bp
        j += cuda.blockDim.x
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "batched_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch22.batched.check(batched_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch22.batched.check_hidden(batched_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "batched_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch22.batched.check_speed(batched_kernel)

# %% [markdown]
# ## Exercise 22.3 · Occupancy against ILP: four elements per thread (3 points + 2 for speed)
#
# A memory-bound kernel needs many loads in flight to cover DRAM's latency (hundreds of cycles):
# by Little's law, bandwidth × latency bytes must be on their way at every moment (about 4 TB/s ×
# 600 ns = 2.4 MB on an H200, some 18 KB per SM). **Occupancy** provides them with many threads,
# each with one load; **instruction-level parallelism** with fewer threads, each issuing several
# independent loads before it needs the first (Volkov, 2010). Write `ilp_kernel(x, out, a, b)`,
# `out = a · x + b`, launched with **a quarter** of the threads there are elements
# (`ceil(n / (4 · threads))` blocks): with `W = cuda.gridsize(1)`, thread `t` loads `x[t]`,
# `x[t + W]`, `x[t + 2W]` and `x[t + 3W]` (each load coalesced across a warp) into four
# variables, then computes and stores the four results; each index is used only if it is below
# `n`. Roughly 16 lines.
#
# **Predict first:** on an H200 at 2^26 elements, will the four-per-thread kernel (a quarter of
# the threads, blocks of 256) be faster, as fast, or slower than one element per thread? Write
# your guess down; the measuring cell below answers it.
#
# **What the check does.** Blocks of 32 threads (32, 64 and 128 hidden), `out` filled with NaN:
# 1,000 elements (a partial last round), 129 (one element past a block's 128) and 1; hidden:
# 4,099, 4 and random sizes. **The speed test** (on a GPU): 2^26 + 3 elements, blocks of 256,
# against the course's kernel of the same shape and NumPy on one core: at least 50% of the
# course's speed and 5× NumPy's.

# %% nbgrader={"grade": false, "grade_id": "ilp_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def ilp_kernel(x, out, a, b):
    ### BEGIN SOLUTION
    t = cuda.grid(1)
    w = cuda.gridsize(1)
    n = x.size
    v0 = float32(0.0)
    v1 = float32(0.0)
    v2 = float32(0.0)
    v3 = float32(0.0)
    if t < n:
        v0 = x[t]
    if t + w < n:
        v1 = x[t + w]
    if t + 2 * w < n:
        v2 = x[t + 2 * w]
    if t + 3 * w < n:
        v3 = x[t + 3 * w]
    if t < n:
        out[t] = a * v0 + b
    if t + w < n:
        out[t + w] = a * v1 + b
    if t + 2 * w < n:
        out[t + 2 * w] = a * v2 + b
    if t + 3 * w < n:
        out[t + 3 * w] = a * v3 + b
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "ilp_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch22.ilp.check(ilp_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch22.ilp.check_hidden(ilp_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ilp_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch22.ilp.check_speed(ilp_kernel)

# %% [markdown]
# ## Unified memory and its page faults (measured, not graded)
#
# `cuda.managed_array` allocates **managed** (unified) memory, `cudaMallocManaged` in CUDA C++:
# one address that the host and the GPU both use, with the driver moving 4 KB to 2 MB pages to
# whichever side touches them. Convenient, and not free: when the host has just written the
# array, its pages live in host memory, and the first kernel that reads them takes a **page fault**
# per page group, waits for the migration over the bus, and goes on. The second kernel finds them
# on the GPU. The measuring cell times both. In CUDA C++ the cure is to say where the data will be
# needed before it is:
#
# ```cpp
# cudaMemPrefetchAsync(ptr, bytes, device, stream);   // migrate ahead, in bulk, on a stream
# cudaMemAdvise(ptr, bytes, cudaMemAdviseSetPreferredLocation, device);
# ```
#
# Numba's public API has no call for either. The closest Python: copy explicitly (`cuda.to_device`,
# or a pinned pipeline like yours), or touch the managed array once in a cheap kernel before the
# timed work. **In CPU mode** `cuda.managed_array` does not exist (the simulator has no managed
# memory): there are no pages and no faults to see.
#
# ## Measure it: the pipeline, launches, ILP and managed memory
#
# On a GPU the next cell measures, in one run:
#
# - the **pipeline** on 2^26 floats in pinned memory: the two copies alone (the floor), the serial
#   copy–kernel–copy, the course's pipeline in 8 chunks over 4 streams, and yours (timed on the
#   host's clock, since the host drives it);
# - **2,000 small problems** (22.2's speed test): one launch per problem, the same with a
#   configured kernel reused, one launch for all (the course's kernel and yours);
# - **ILP**: one element per thread against four per thread (the course's and yours), 2^26
#   floats, with CUDA events;
# - **managed memory**: the first kernel after the host wrote the array, and the same kernel again.
#
# Each row is checked at sampled elements (`WRONG` if not). In CPU mode it draws the course's run
# on an H200.

# %%
try:
    results = ch22.measure(pipeline=pipeline, batched_kernel=batched_kernel, ilp_kernel=ilp_kernel)
    for r in results:
        print(f"[{r['group']:8s}] {r['label']:62s} {r['ms']:9.3f} ms {r['gbps']:8.1f} GB/s"
              f"{'' if r['right'] else '   WRONG'}")
    ag.experiments.steps(**ch22.chart(results)).show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels:")
    ag.experiments.steps(**ch22.chart()).show()

# %% [markdown]
# ## Predict, then measure: where the time went (3 points, graded by your instructor)
#
# In the cell below, in 8 to 15 sentences, with numbers (your predictions, and the measurements if
# you ran on a GPU, else the course's H200 run):
#
# 1. **the pipeline**: what you predicted for the serial copy–kernel–copy of 2^26 floats and for
#    the pipeline, what was measured, and which stage bounds the pipeline (read it off the
#    timeline); why more streams or more chunks stop helping;
# 2. **launches**: the host's cost per launch, configured and reused, and the time of 2,000
#    launches against one batched launch; when would the batched kernel not be worth it?
# 3. **ILP**: your guess for four elements per thread against one, the measurement, and the
#    reason, in terms of loads in flight per SM;
# 4. **managed memory**: what the first kernel paid over the second, per megabyte, and what you
#    would do about it in Numba, and in CUDA C++.
#
# **Rubric (3 points).** 1 point: the pipeline's bound is named from the copies (the bus, not the
# kernel) with numbers, and the measured times (or the course's) are set against it. 1 point: the
# launch overhead is quantified per launch and the batched launch's gain explained by it. 1 point:
# the ILP and managed-memory results are each explained by a mechanism (loads in flight; page
# faults and migration) with a number. A claim with no number, or a prediction and a measurement
# mixed up, loses the point it belongs to. Studying alone: once `./aag grade` passes this
# chapter's auto-graded exercises, `ag.reveal("ch22_answer")` shows a model answer to set yours
# against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ch22_answer", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the predictions come from the text's figures, the
# measurements from the course's H200 run).* (1) 2^26 floats are 268 MB each way. At about 50 GB/s
# a direction the copy in takes some 5.4 ms and the copy back as long; the kernel moves 537 MB
# inside the GPU at about 4 TB/s, 0.13 ms. Serial: about 11 ms. A pipeline can at best run the two
# directions at the same time on the two copy engines and hide the kernel under them: about 5.5 ms
# plus the first chunk's copy in and the last chunk's copy back (with 8 chunks, an eighth of a
# direction each, 1.3 ms), so about 7 ms, 1.6 times faster. Measured on the H200: the two copies
# alone 10.27 ms (5.5 ms in, 4.8 ms out), serial 11.53 ms, 8 chunks over 4 streams 9.36 ms: 1.23
# times faster, not 1.6. The timeline shows why. The copy in of one chunk does run beside the copy
# out of the one before, but each direction then slows from about 48 GB/s to 35–40 GB/s (the link
# and the host's memory carried about 75 GB/s together, not twice 48), and each chunk's copy in
# starts 0.1 to 0.3 ms after the previous one ends, while Python queues that chunk's three calls.
# The kernels are thin slivers between the copies: the bus bounds it. More streams do not add copy
# engines (there is one per direction), and more chunks add a launch and two copy calls each, so
# beyond 8 to 16 chunks nothing is gained. (2) A Numba launch cost the host 45 µs on the H200's
# machine, configured each time or reused alike (46 µs: the configuration is not where the time
# goes); CuPy's launch 12 µs, and a CUDA graph of the same launches, captured once through CuPy
# and replayed, 1.0 µs a kernel. The 2,000 launches of 22.2's baseline took 467 ms (with a slice
# of each device array per problem), the one batched launch 0.070 ms: 6,700 times less. The
# batched kernel is not worth it when the problems are so few and so large that each fills the GPU
# by itself, or so uneven that one block per problem leaves most SMs idle behind one long problem
# (then split long problems into several blocks). (3) I guessed four per thread would be faster,
# and it was: 0.134 ms against 0.201 ms (3.99 against 2.67 TB/s; a copy reaches 4.27). With one
# 4-byte load per thread, even 2,048 resident threads per SM keep only 8 kB in flight, and
# Little's law asks for about 10 kB per SM at 4.27 TB/s and 0.3 µs (chapter 4): the one-element
# kernel cannot reach the bandwidth at any occupancy. Four independent loads per thread keep four
# times as much in flight with a quarter of the threads. (4) The first kernel on the managed
# array took 73.8 ms where the second took 0.51 ms: 268 MB migrated by page faults at under 4
# GB/s, a tenth of a pinned copy's speed, because each fault stops the warps that touched the
# page while the driver moves it. In Numba I would copy explicitly (`cuda.to_device`, or my
# pipeline from pinned memory) or touch the array once in a warm-up kernel; in CUDA C++ I would
# call `cudaMemPrefetchAsync` to the device on a stream before the kernel.

# %% [markdown]
# ## Going further (not graded)
#
# - Make the kernel heavier (`ch22.reference_pipeline(..., rounds=200)` applies the map 200 times
#   per element) and draw the timeline again: at which number of rounds do the kernels become
#   the bound, and what does the pipeline save then?
# - Time your pipeline from an ordinary NumPy array instead of a pinned one: what happens to the
#   overlap, and why?
# - Write the launch loop of 22.2's baseline with `cuda.defer_cleanup()` around it, and with the
#   device arrays allocated before the loop: how much of the cost per launch was allocation?
# - Try 8 elements per thread in 22.3, and blocks of 64: where does ILP start to pay?
#
# **Reading:** PMPP ch. 22 (how host and device interact: pinned, zero-copy and unified memory;
# kernel execution control; the evolution of the programming environment) and ch. 20 (overlapping
# computation and communication with CUDA streams, there between the ranks of an MPI program);
# §6.2–6.3 (hiding memory latency, thread coarsening). The CUDA C++ Programming Guide,
# "Asynchronous concurrent execution", "CUDA graphs" and "Unified memory programming"; V. Volkov,
# "Better performance at lower occupancy", GTC 2010.
#
# **On AMD (HIP):** streams, events and pinned memory work the same way (`hipStreamCreate`,
# `hipEventRecord`, `hipHostMalloc`), and HIP has graphs (`hipStreamBeginCapture`) and managed
# memory (`hipMallocManaged`). On MI200 and MI300 GPUs, managed memory migrates on a page fault
# only when the system enables it (`HSA_XNACK=1`); without it, the GPU reads managed pages over
# the bus where they are, so the first-touch cost measured here looks different there.
