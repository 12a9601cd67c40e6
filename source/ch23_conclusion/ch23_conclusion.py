# %% [markdown]
# # Chapter 23 · Conclusion: the course in review, and the road onward
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 23.
#
# **Before you start:** chapters 1–12 at least (4–6 and 10 above all). **Time:** about 2 hours,
# questions included. The questions draw on chapters 4–6 and 10; the later chapters help with the
# pictures.
#
# ## What you will be able to do
# - Answer, with a function that is checked on hundreds of cases you do not see, three questions
#   every GPU programmer meets again and again: which **shared-memory banks** a warp's access falls
#   into, how many **bytes must be in flight** to stream memory at full speed (and what that asks
#   of each thread), and how many bytes a kernel you have **not written yet** must move.
# - Read the course's own reference kernels on one chart, each set against the roof that limits
#   it on an H200, and say for each one which chapter's idea got it there and what stops it.
# - Plan the next kernel before writing it: a softmax, the first kernel of the track that follows
#   the book, counted in bytes and bounded in time.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target. No
# cell of this chapter needs a GPU.

# %%
import math

import matplotlib.pyplot as plt

import autograder as ag

ag.banner()
ch23 = ag.problems.ch23

# %% [markdown]
# ## The course in one picture
#
# The book, and this course, go in four stages. The **foundations** (chapters 1–6) are the
# machine: threads in blocks in a grid, warps that execute together, a memory hierarchy whose
# fast levels are small, and the two numbers that bound every kernel, the FP32 peak and the
# memory bandwidth. The **parallel patterns** (7–12) are the shapes most programs are made of:
# convolution and stencil (each output from a neighbourhood), histogram (many writers, one
# place), reduction and scan (combining), merge (co-ranks). The **applications** (13–19) combine
# the patterns on real problems, sorting, sparse matrices, graphs, a network layer, medical
# imaging, chemistry, N-body; the **practice** chapters (20–22) leave the single kernel: many
# processes, work that creates work, and the stream of copies and launches around the kernels.
#
# The arrows show some of the ideas that later work leans on: a softmax is two reductions, an
# attention kernel is a tiled matrix product with a softmax inside, a quantized matrix-vector
# product lives or dies by coalescing.

# %%
ch23.course_map()
plt.show()

# %% [markdown]
# PMPP's last chapter looks back at the goals the book set at its start (programs that run fast,
# that keep their speed on the next generation of GPUs, and that stay correct) and at where
# parallel computing is going. This notebook does the same in three questions that are graded like
# any exercise, one chart, and a plan for your next kernel.
#
# ## Banks: who waits for whom
#
# Shared memory is split into **32 banks**; the 4-byte word at address `w` (counted in words)
# lives in bank `w % 32`. In one cycle each bank can deliver one word. When the 32 threads of a
# warp ask shared memory for words in 32 different banks, the access takes one pass; when `k`
# *different* words sit in the same bank, that bank delivers them one after the other and the
# access takes `k` passes: a **`k`-way bank conflict**. Threads that ask for the *same* word cost
# nothing extra: the word is broadcast to all of them. (PMPP §5.3; chapter 6 of this course padded
# the transpose's tile from 32 to 33 words a row for exactly this reason.)
#
# A warp is 32 consecutive threads of a block, counted along `x` first: in a block `width` threads
# wide, thread `t` of the warp is at `tx = t % width`, `ty = t // width`. Most shared-memory
# accesses in this course have the form `tile[ty, tx · s]` or `tile[tx, ty]`, which read the word
# `tx · x_step + ty · y_step` for some steps. Three of them, drawn (one column per bank; a square
# is a distinct word, labelled with the threads that read it):

# %%
ch23.show_banks(32, 32, 0, "a warp reads a column of a 32 × 32 tile: tile[tx, 0] is word 32·tx")
plt.show()

# %%
ch23.show_banks(32, 33, 0, "the same column of a tile padded to 33 words a row: word 33·tx")
plt.show()

# %%
ch23.show_banks(16, 1, 32, "a 16 × 2 block reads tile[ty, tx] of rows of 32 words")
plt.show()

# %% [markdown]
# The first is the worst case: all 32 words in bank 0, 32 passes. The padding moves each row one
# bank to the right, and the column spreads over all 32 banks. The third is a quieter trap: a block
# 16 threads wide puts two rows in one warp, and rows of 32 words start in the same bank, so each
# bank is asked for two words. Try a few of your own: a float2 array read as pairs of words
# (`x_step = 2`), every thread reading `tile[0, 0]` (`x_step = y_step = 0`), a block 8 wide over rows
# of 16 words.
#
# ## Exercise 23.1 · The ways of a bank conflict (2 points)
#
# Write `bank_conflict_ways(width, x_step, y_step)`: the 32 threads of one warp, in a block
# `width` threads wide (1, 2, 4, 8, 16 or 32), each read the 4-byte word
# `tx · x_step + ty · y_step` of a shared array (steps are ints ≥ 0). Return the number of passes
# the access takes: the largest number of **distinct** words any one bank is asked for (1 when
# there is no conflict). Roughly 8 lines.
#
# **What the check does.** Eight accesses (the three drawn above, a float2 read, a broadcast and
# three more), then 200 random ones hidden, half of them on the strides tiles use (8, 16, 32 and 64
# words, padded by one or not). The answer is a whole number and must be exact.

# %% nbgrader={"grade": false, "grade_id": "bank_conflict_ways_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def bank_conflict_ways(width, x_step, y_step):
    """The passes one warp's shared-memory access takes: the most distinct words in one bank."""
    ### BEGIN SOLUTION
    words = {(t % width) * x_step + (t // width) * y_step for t in range(32)}
    per_bank = {}
    for w in words:
        per_bank[w % 32] = per_bank.get(w % 32, 0) + 1
    return max(per_bank.values())
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "bank_conflict_ways_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch23.bank_conflict_ways.check(bank_conflict_ways)
### BEGIN HIDDEN TESTS
ag.problems.ch23.bank_conflict_ways.check_hidden(bank_conflict_ways)
### END HIDDEN TESTS

# %% [markdown]
# ## Latency: what must be in flight
#
# A load from device memory takes a long time to come back: hundreds of the SMs' cycles, about
# 0.3 µs on an H200 when memory is quiet, and more when it is busy. The memory system can still deliver its full bandwidth, but only if
# enough requests are **on their way at every moment**. That amount is Little's law (chapters 4
# and 6): bytes in flight = bandwidth × latency. The GPU hides the wait by switching among resident
# warps, so the bytes in flight must come from the threads resident on the SMs, each carrying the
# loads it has issued and not yet used.
#
# On the H200, with the course's measured copy bandwidth of 4.27 TB/s and the rough latency of
# chapters 4 and 6, 0.3 µs, spread over 132 SMs that each hold at most 2,048 threads:

# %%
w = ch23.worked_little()
print(f"bytes in flight on the whole GPU: {w['bytes_in_flight'] / 1e6:.2f} MB")
print(f"per SM: {w['bytes_in_flight'] / 132 / 1e3:.1f} kB; with one 4-byte load in flight per "
      f"thread that is {w['threads_per_sm']:.0f} threads, against the 2,048 an SM can hold")
print(f"so with every thread resident, each must keep {w['loads_per_thread']:.0f} independent "
      "4-byte loads in flight (or one 16-byte float4 load)")

# %% [markdown]
# This is why occupancy alone does not reach the bandwidth for a kernel whose threads each load
# one float and wait for it, and why the course's fastest memory-bound kernels give each thread
# several independent loads (thread coarsening in chapters 6 and 8, and chapter 22's experiment
# of occupancy against independent loads): **instruction-level parallelism** inside a thread does
# what more threads cannot. The latency is not a fixed number: it grows as the memory system
# fills, and at twice the latency every count above doubles. Treat the answer as the order of
# magnitude it is.
#
# ## Exercise 23.2 · Little's law for a GPU (3 points)
#
# Write `bytes_in_flight(bandwidth, latency, sms, max_threads, bytes_per_load)`: `bandwidth` in
# bytes/s and `latency` in seconds (floats), `sms`, `max_threads` (threads an SM can hold) and
# `bytes_per_load` (the bytes of one load, 1 to 16) ints. Return three numbers:
# `(bytes_in_flight, threads_per_sm, loads_per_thread)`: the bytes that must be in flight on the
# whole GPU, the threads one SM needs when each has **one** load in flight (rounded up), and the
# independent loads each thread must have in flight when all `max_threads` threads of an SM are
# resident (rounded up; 1 when occupancy alone is enough). Roughly 5 lines.
#
# **What the check does.** Four cases (the H200 above, with float32 and with float4 loads, and two
# more), then 200 random devices hidden (100 GB/s to 16 TB/s, 0.2 to 1.5 µs, 4 to 200 SMs). The
# bytes within a few roundings; the counts exact (no case lies within a rounding of a whole
# number, so any order of the arithmetic rounds up the same way).

# %% nbgrader={"grade": false, "grade_id": "bytes_in_flight_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def bytes_in_flight(bandwidth, latency, sms, max_threads, bytes_per_load):
    """(bytes in flight on the GPU, threads per SM at one load each, loads per thread at full
    occupancy)."""
    ### BEGIN SOLUTION
    in_flight = bandwidth * latency
    per_sm = in_flight / sms
    threads = math.ceil(per_sm / bytes_per_load)
    loads = math.ceil(per_sm / (max_threads * bytes_per_load))
    return in_flight, threads, loads
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "bytes_in_flight_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch23.bytes_in_flight.check(bytes_in_flight)
### BEGIN HIDDEN TESTS
ag.problems.ch23.bytes_in_flight.check_hidden(bytes_in_flight)
### END HIDDEN TESTS

# %% [markdown]
# ## The course's kernels against their roofs
#
# Every reference kernel of chapters 2–12 was timed on the course's H200, the way the speed tests
# time them, beside a device-to-device copy of the same bytes in the same run. A kernel's **roof** here is the larger
# of two times: its FLOPs at the FP32 peak (66.9 TFLOP/s, no tensor cores) and the copy of its
# bytes. The chart shows, for each, what share of its roof it reaches (roof time over measured
# time; 100% means as fast as the copy itself). On a GPU, the course's benchmark command
# (see the README) measures the same on yours.

# %%
ch23.show_reference_kernels()
plt.show()

# %% [markdown]
# Read it from the bottom up, with the chapter that built each kernel in mind:
#
# - **At the roof:** the reduction (chapter 10: one atomic per block, the rest in registers and
#   shuffles) runs as fast as a copy of its input; the map kernels (vector add, gray image), the
#   tiled transpose (chapter 6: a padded tile, coalesced both ways) and the single-pass scan
#   (chapter 11: one 64-bit word per tile for the look-back, every index unsigned) reach 80–90%.
# - **In the middle:** the convolution (chapter 7: 8 rows × 2 columns of outputs per thread, the
#   input rows kept in registers) reaches 70% of the copy and the merge (chapter 12: merge path,
#   each block's keys staged once) 45%. The coarsened stencil, the privatized histogram and the
#   hierarchical scan sit at 34–40%: their halos, their barriers, their atomics and their extra
#   passes cost bytes or waits the copy does not pay.
# - **Far below:** the naive matrix product (2%), the tiled one with 8 × 8 tiles (7.5%) and the
#   register-tiled one as chapter 6 writes it (10% of the FP32 peak) show how far a matrix product
#   stays from its roof until every technique is in: the course's kernel with 128 × 128 tiles,
#   double buffering and warp tiles reaches 60% of the peak, cuBLAS 77%. The naive transpose (13%)
#   is what uncoalesced writes cost; the histogram that aggregates runs of equal bytes (8%) pays a
#   compare and a branch for every byte, where the plain privatized one (36%) keeps several loads
#   in flight. Two rows are not meant to reach their roof: the box blur (5%) runs chapter 3's
#   plain loop over its (2r + 1)² neighbours with the radius known only when it runs (the same
#   blur with the radius fixed when it is compiled runs 5.7 times faster), and `uniform` (3%) is
#   chapter 4's divergence exercise, timed for its branches.
#
# None of this is fixed: each row's limit was found by the measurements of its chapter, and each
# could move with the techniques of another. That is the habit the book teaches: measure, find
# the roof, explain the gap.
#
# ## Looking ahead: a softmax, counted before it is written
#
# The track that follows the book starts with the kernels that run today's models, and the first
# is the **softmax** of each row of a matrix `x` (rows × cols): `y[i, j] = exp(x[i, j] − m_i) /
# s_i`, with `m_i` the row's maximum (subtracted so that no exponential overflows) and `s_i` the sum
# of `exp(x[i, j] − m_i)` over the row. Three ways to compute it:
#
# 1. **Three passes:** one reduction for the maxima (reads `x`), one for the sums (reads `x`
#    again), one map that normalises (reads `x` a third time, writes `y`).
# 2. **Online softmax** (Milakov and Gimelshein, 2018): one pass keeps a running maximum and a
#    running sum, rescaling the sum by `exp(m_old − m_new)` whenever the maximum grows; then the
#    normalising pass. Two reads and a write.
# 3. **Fused**, one block per row: the row is loaded once into registers or shared memory, both
#    reductions run on chip, and `y` is written. One read and one write, but only if a whole row
#    fits in the chip memory one block can use; a longer row must fall back to the online traffic.
#
# The softmax does about five FLOPs per element against at least 8 bytes: far below the ridge
# (about 16 FLOPs a byte on the H200), so it is memory bound and its bytes are its time.
#
# ## Exercise 23.3 · The bytes a softmax moves (2 points)
#
# Write `softmax_traffic(rows, cols, elem_bytes, on_chip_bytes, bandwidth)`: a rows × cols
# matrix of `elem_bytes`-byte values (2 for fp16, 4 for fp32), `on_chip_bytes` the shared memory
# and registers one block may use for a row (ints), `bandwidth` in bytes/s (a float). Count only
# `x` and `y` (the per-row maxima and sums are negligible). Return four numbers:
# `(three_pass_bytes, online_bytes, fused_bytes, fused_seconds)`, the last the time bound of the
# fused kernel at `bandwidth`. A row fits when `cols × elem_bytes ≤ on_chip_bytes`. Roughly 5 lines.
#
# **What the check does.** Three cases (4,096 × 4,096 fp32 on the H200 with 227 kB a block, the
# same with rows of 131,072, which do not fit, and a single fp16 value), then 200 random ones
# hidden, some with rows exactly as long as the chip holds and one value longer. The byte counts
# exact, the time within a few roundings.

# %% nbgrader={"grade": false, "grade_id": "softmax_traffic_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def softmax_traffic(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    """(bytes of the three-pass, online and fused softmax, and the fused kernel's time bound)."""
    ### BEGIN SOLUTION
    matrix = rows * cols * elem_bytes
    fused = 2 * matrix if cols * elem_bytes <= on_chip_bytes else 3 * matrix
    return 4 * matrix, 3 * matrix, fused, fused / bandwidth
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "softmax_traffic_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch23.softmax_traffic.check(softmax_traffic)
### BEGIN HIDDEN TESTS
ag.problems.ch23.softmax_traffic.check_hidden(softmax_traffic)
### END HIDDEN TESTS

# %% [markdown]
# For 4,096 rows of 4,096 fp32 on the H200, the three ways are 268, 201 and 134 MB: at 4.27 TB/s,
# 63, 47 and 31 µs. A fused kernel that reaches the copy's speed is twice as fast as three
# well-written passes, whatever their arithmetic; that is the whole case for fusion in the
# chapters that follow.

# %%
for name, value in zip(("three passes", "online", "fused"),
                       softmax_traffic(4096, 4096, 4, 227 * 1024, 4269e9)[:3]):
    print(f"{name:13s} {value / 1e6:6.0f} MB  {value / 4269e9 * 1e6:5.1f} µs at 4.27 TB/s")

# %% [markdown]
# ## A review in questions (not graded)
#
# Answer each in a sentence or a number before you open its answer; each names the chapter to
# reread if yours differs.
#
# 1. A kernel reads 8 bytes and does 2 FLOPs per element. On the H200 (66.9 TFLOP/s, 4.27 TB/s),
#    which roof binds it, and what is its best time for 2^28 elements?
#    <details><summary>answer</summary>Memory: 0.25 FLOP a byte is far below the ridge of 15.7;
#    2^31 bytes take 0.50 ms at 4.27 TB/s (chapters 3 and 5).</details>
# 2. Why does `if threadIdx.x % 2 == 0:` cost more than `if threadIdx.x < 32:` in a block of 64?
#    <details><summary>answer</summary>The first splits every warp into two paths that run one
#    after the other; the second sends whole warps one way or the other, so no warp diverges
#    (chapter 4).</details>
# 3. A block of 256 threads uses 64 registers a thread. How many blocks fit on an SM with 65,536
#    registers, and what occupancy is that out of 2,048 threads?
#    <details><summary>answer</summary>65,536 / (256 · 64) = 4 blocks, 1,024 threads: 50%
#    (chapter 4).</details>
# 4. A tiled matrix product with tiles of T × T reads each input element how many times fewer from
#    global memory than the naive one?
#    <details><summary>answer</summary>T times fewer (chapter 5).</details>
# 5. A warp reads `a[32 · t]` of a float32 array. How many 32-byte sectors does it touch, and how
#    many would `a[t]` touch?
#    <details><summary>answer</summary>32 sectors (one useful float in each) against 4
#    (chapter 6).</details>
# 6. Why does a privatized histogram beat one with a global atomic per element when there are few
#    bins?
#    <details><summary>answer</summary>Few bins means many threads hit the same address; the
#    atomics on one address are served one at a time. Shared-memory copies per block spread the
#    contention, and only one merge per bin and block goes to global memory (chapter 9).</details>
# 7. Kogge–Stone or Brent–Kung: which does less work, and which takes fewer steps?
#    <details><summary>answer</summary>Brent–Kung does about 2n additions against Kogge–Stone's
#    n log n; Kogge–Stone takes log n steps against Brent–Kung's 2 log n (chapter 11).</details>
# 8. Which sparse format would you choose for a matrix whose rows have 3 to 5 nonzeros each, and
#    which for one with a few rows of 10,000 among millions of rows of 10?
#    <details><summary>answer</summary>ELL for the first (little padding, coalesced column-major
#    reads); hybrid ELL–COO or a warp per long row for the second, where ELL's padding to 10,000
#    would be enormous and a thread per row would leave most threads waiting on the long ones
#    (chapter 14).</details>
# 9. A BFS level has a frontier of 12 vertices in a graph of 10 million. Push or pull?
#    <details><summary>answer</summary>Push: a pull kernel would look at every unvisited vertex to
#    find the 12 frontier neighbours; pull pays when the frontier is a large share of the graph
#    (chapter 15).</details>
# 10. Two streams each copy 1 GB to the GPU from pageable host memory. Do the copies overlap with a
#     kernel on a third stream?
#     <details><summary>answer</summary>Not as hoped: a copy from pageable memory is staged through
#     a pinned buffer by the driver and is synchronous with respect to the host; use pinned memory
#     (chapter 22).</details>
#
# ## Explain: your next kernel (2 points, graded by your instructor)
#
# Choose one kernel of the track that follows (softmax, layer normalization, attention, or a
# matrix-vector product with int8 weights and a scale per group of 128) and, in 6 to 10 sentences,
# plan it before writing it:
#
# 1. **the bound**: its bytes and FLOPs for a size you choose, which roof binds it on the H200 (or
#    your GPU), and its time bound;
# 2. **the techniques**: which chapters' ideas it needs (name at least three, and what each one
#    buys this kernel);
# 3. **the risk**: what you expect to keep it furthest from its roof, and how you would find out
#    (a measurement, a profiler counter).
#
# **Rubric (2 points).** 1 point: the bound is computed correctly with the numbers shown, and the
# kernel is placed on the right side of the ridge. 1 point: three techniques are named with what
# each buys, and the risk is a mechanism with a way to measure it. Studying alone: once
# `./aag grade` passes this chapter's auto-graded exercises, `ag.reveal("next_kernel_answer")`
# shows a model answer to set yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "next_kernel_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only).* I would write the int8 matrix-vector product for a
# 8,192 × 8,192 weight matrix with one fp16 scale per group of 128 weights and an fp32 vector.
# (1) The weights are 8,192² bytes = 67.1 MB, the scales 8,192 · 64 · 2 bytes = 1.0 MB, the vector
# and the result 64 kB: about 68.2 MB. The FLOPs are two per weight plus one multiply per group,
# 134 MFLOP: 2 FLOPs a byte, far below the H200's ridge of 15.7, so the kernel is memory bound at
# 68.2 MB / 4.27 TB/s = 16 µs, four times less than the same product with fp32 weights (268 MB,
# 63 µs). (2) Chapter 6's coalescing: a warp must read a row's bytes side by side, and since one
# int8 is a quarter of a word, each thread should load 4 or 16 weights at once (a 32-bit or
# 128-bit load) and unpack them in registers. Chapter 10's reduction: a warp (or a block) per row
# sums its products with shuffles, one store per row. This chapter's Little's law: a row of 8 kB per
# warp is not enough in flight per SM on its own, so each warp should keep several 16-byte loads
# in flight (unrolled), or the grid should be large enough for every SM to hold many rows.
# (3) The risk is the unpacking and the scale: if the dequantisation instructions (extracting
# bytes, converting to float, one scale per 128) take longer than the bytes take to arrive, the
# kernel becomes bound by instructions, not memory. I would measure the achieved bandwidth against
# the copy of the same 68 MB, and in the profiler compare how busy the instruction issue slots are
# with the DRAM throughput: a kernel whose issue slots are 90% busy at 50% of the DRAM bandwidth is
# instruction bound.

# %% [markdown]
# ## The road onward
#
# - **The GPU MODE track** (after this chapter): softmax (three passes, online, fused), layer and
#   RMS normalization (Welford's one-pass variance; the backward pass), attention (the naive
#   product, then a tiled kernel with the online softmax inside, as FlashAttention does),
#   quantized matrix products (int8 and int4 weights dequantized on the fly), and each of them
#   again in **Triton**, a Python language that compiles block-level programs for the GPU, to
#   compare with your Numba kernels on the same machine.
# - **Multi-GPU**: peer-to-peer copies, a ring all-reduce you write, and NCCL's as its yardstick:
#   what chapter 20's ranks become when each has its own GPU.
# - **What the course could not show:** tensor cores (Numba CUDA has no matrix instructions; cuBLAS
#   and the flash path of PyTorch's attention use them, and reach many times the FP32 peak), CUDA
#   graphs and device-side launches (chapters 21 and 22 show the C++ and the closest thing Python
#   can do).
#
# **Reading:** PMPP ch. 23 (conclusion and outlook), and, for what follows: M. Milakov and N.
# Gimelshein, "Online normalizer calculation for softmax" (2018); T. Dao et al., "FlashAttention:
# fast and memory-efficient exact attention with IO-awareness" (NeurIPS 2022); P. Tillet, H. T.
# Kung and D. Cox, "Triton: an intermediate language and compiler for tiled neural network
# computations" (MAPL 2019); the GPU MODE lectures.
#
# **On AMD (HIP):** the LDS of CDNA GPUs also has 32 banks of 4-byte words, but a wavefront is 64
# threads, and how its accesses are split into passes depends on the instruction and the
# generation: count per half-wavefront as a first estimate and check with the profiler
# (`rocprof`'s LDS bank-conflict counter). Little's law holds as written, with the GPU's compute
# units in place of SMs.
