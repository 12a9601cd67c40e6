# %% [markdown]
# # Chapter 28 · Multi-GPU: peer copies, a ring all-reduce, and NCCL
#
# GPU MODE's lecture on NCCL, and the collectives of *Programming Massively Parallel Processors*
# (PMPP, 4th ed.) §20.6 on the GPUs of one node.
#
# **Before you start:** chapters 1–6 (kernels, streams of work on the GPU, bandwidth) and, if you
# can, chapter 20 (ranks, messages, overlap). **Time:** about 2 hours.
#
# ## What you will be able to do
# - Copy data **between GPUs** (peer to peer, over NVLink or PCIe) and measure the copy's
#   bandwidth against the link's.
# - Write a **ring all-reduce**: every GPU (rank) holds a buffer, and afterwards every buffer holds
#   the elementwise sum of all of them. `n − 1` reduce-scatter steps then `n − 1` all-gather
#   steps, each rank sending one chunk to the next rank per step, the additions done by **your
#   kernel** on each GPU, exact for 1 to 8 ranks and any buffer length.
# - Measure your ring beside **NCCL** (NVIDIA's collective library) with the numbers nccl-tests
#   reports (algorithm and **bus bandwidth**), and **overlap** a gradient all-reduce with the next
#   layer's backward kernel.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda

ag.banner()
ch28 = ag.problems.ch28
print(f"GPUs here: {ch28.gpu_count()}")

# %% [markdown]
# ## The idea: many GPUs, one sum
#
# Data-parallel training runs the same model on several GPUs, each on its own slice of the batch.
# After the backward pass each GPU holds its own gradients; before the optimizer step every GPU
# needs their **sum** (or mean). That operation, every rank contributing a buffer and every rank
# receiving the elementwise sum, is an **all-reduce**, the most used collective of all.
#
# The GPUs of one node are joined by links: **NVLink** (on an H200 board, 18 links, 450 GB/s each
# way per GPU) or **PCIe** (64 GB/s each way for PCIe 5.0 x16). A kernel on one GPU reads its own
# memory at 4.8 TB/s; anything from another GPU comes over a link ten or a hundred times slower.
# So an all-reduce is judged by how well it uses the links: every byte should cross as few links
# as possible, and all links should carry data all the time.
#
# **The ring.** Put the `n` ranks in a circle, rank `r` sending to rank `r + 1` (and the last to
# rank 0). Cut each buffer of `m` elements into `n` **chunks**, chunk `k` the elements
# `[k·m//n, (k+1)·m//n)`.
#
# 1. **Reduce-scatter**, steps `s = 0 .. n − 2`: rank `r` sends its chunk `(r − s) mod n` to rank
#    `r + 1`, which **adds** it into its own chunk of that number. Each chunk travels around the
#    ring collecting one more rank's contribution per step: after `n − 1` steps rank `r` holds the
#    finished sum of chunk `(r + 1) mod n`.
# 2. **All-gather**, steps `s = 0 .. n − 2`: rank `r` sends chunk `(r + 1 − s) mod n`, finished, to
#    rank `r + 1`, which **copies** it over its own. After `n − 1` steps every rank holds every
#    finished chunk.
#
# In every step every rank sends one chunk and receives one, so all `n` links work at once, and
# each rank sends `2(n − 1)/n` of its buffer in all: almost twice the buffer, however many
# ranks. That is why NCCL uses rings (and trees, for latency at small sizes). The picture counts,
# after each step, how many ranks' data each chunk of each rank holds:

# %%
ch28.show_ring(4)
plt.show()

# %% [markdown]
# ## The CPU baseline: one host sums everything
#
# Without a collective, an all-reduce is: copy every GPU's buffer to the host, add them with
# NumPy, copy the sum back to every GPU. The adding alone, for 4 buffers (16 Mi float32 each on a
# GPU, 64 Ki in CPU mode), on this machine's CPU:

# %%
count = (1 << 24) if ag.backend.is_gpu else (1 << 16)
host = np.random.default_rng(0).random((4, count), dtype=np.float32)
baseline = ag.timing.time_cpu("NumPy: sum of 4 buffers", lambda: host.sum(axis=0), repeats=5)
print(f"NumPy adds 4 buffers of {count:,} float32 in {baseline.median_ms:.2f} ms "
      f"({host.nbytes / baseline.median_ms / 1e6:.1f} GB/s read)")
print(f"and the copies: 4 × {host[0].nbytes / 2**20:.0f} MiB to the host and back, over PCIe "
      f"at about 50 GB/s: {2 * host.nbytes / 50e9 * 1e3:.2f} ms more")

# %% [markdown]
# Every byte crosses the host's PCIe links twice and one CPU does all the adding: the ring below
# keeps the data on the GPUs, adds on every GPU at once, and uses the links between them.
#
# ## Your ranks
#
# NCCL can drive all the GPUs of a node from one process, one host thread queueing work for each
# GPU. The course does the same: your function gets `ranks`, a list of `n` rank objects, and
# loops over them. Rank `r = ranks[k]` gives you:
#
# | | |
# |---|---|
# | `r.index`, `r.size` | its number and `n` |
# | `r.buf` | its float32 buffer of `m` elements (on its GPU): what you all-reduce, in place |
# | `r.recv` | a receive buffer on its GPU, as long as the longest chunk (it starts as NaN) |
# | `r.send(chunk, to=other)` | copy `chunk` (a view of `r.buf` or `r.recv`) into the start of `other.recv`; `send(chunk, to=other, into=view)` copies into a view of `other`'s buffer instead |
# | `r.launch(kernel, blocks, threads, *args)` | `kernel[blocks, threads, r.stream](*args)` on its GPU |
# | `r.wait_for(other)` | `r`'s stream waits for everything queued so far on `other`'s (an event) |
# | `r.synchronize()`, `ranks.synchronize()` | the host waits for one rank, or for all of them |
#
# **Everything is queued.** `send` and `launch` return at once; each rank's work runs in order
# on its own stream, and different ranks' streams run **at the same time**, unordered, unless you
# order them. A rank must not add a chunk before it has arrived (`r.wait_for(sender)`), and a
# sender must not overwrite `other.recv` while `other`'s kernel still reads it. The course records
# every send and launch and the bytes each touches; two of them on different ranks touching the
# same bytes, one writing, with nothing ordering them, stop the call with a `RankRace` error, in
# CPU mode too, where the simulator happens to run everything in order.
#
# **Real or simulated GPUs.** With at least `n` GPUs, rank `r` is GPU `r` and `send` is a **peer
# copy** over the link. With fewer (one GPU, or CPU mode) the ranks are **simulated**: every
# rank's buffer is a separate allocation on the one device, and `send` is an ordinary
# device-to-device copy. Your code is the same; but a simulation cannot show a link's bandwidth,
# nor GPUs working at the same time: its timings say nothing about multi-GPU speed.

# %%
def show_each_rank(ranks):
    for r in ranks:
        print(r, "first elements:", r.buf[:4].copy_to_host())


before, after = ch28.run_ring(show_each_rank, ranks=3, m=10)

# %% [markdown]
# ## Peer copies and their bandwidth
#
# A peer copy moves bytes from one GPU's memory to another's without the host: `cuMemcpyPeerAsync`
# in CUDA, what `r.send` does between real GPUs. With peer access enabled (the course enables it
# where the hardware allows), the copy goes straight over NVLink or PCIe; without it the driver
# stages it through host memory. The next cell times copies of 1 MiB to 1 GiB from GPU 0 to GPU
# 1, back, and inside GPU 0 for comparison. **Predict first:** which is fastest, by how much, and
# how close will GPU 0 → GPU 1 come to the link's figure?

# %%
try:
    for row in ch28.peer_bandwidth():
        print(f"{row['bytes'] / 2**20:7.0f} MiB  {row['what']}:  {row['ms']:8.3f} ms  "
              f"{row['GB/s']:7.1f} GB/s")
except ch28.NeedsGPUs as why:
    print(why)
    print("\nWhat the links between GPUs are built to carry (not measured here):")
    print(ch28.link_figures())

# %% [markdown]
# A copy inside one GPU reads and writes its own memory (a few TB/s between them); a peer copy is
# limited by the link, and reaches its figure only for large copies: each copy has a fixed cost of
# a few microseconds, which dominates below about a megabyte.
#
# ## Exercise 28.1 · A ring all-reduce (3 points)
#
# Write two things in the cell below:
#
# - `add_into(dst, src)`, a Numba kernel: `dst[i] += src[i]` for every `i < dst.size` (the chunks
#   are not multiples of any block size: guard the index, or loop with a grid stride);
# - `ring_allreduce(ranks)`: the reduce-scatter and the all-gather above. In reduce-scatter step
#   `s`, every rank sends its chunk `(r − s) mod n` into the next rank's `recv`; then every rank,
#   once its sender's copy has arrived, launches `add_into` on its chunk `(r − 1 − s) mod n` and
#   its `recv`. Before the next step's sends, each rank waits for the rank it sends to (that rank
#   must be done reading its `recv`). In all-gather step `s`, every rank sends chunk
#   `(r + 1 − s) mod n` straight into the same chunk of the next rank's `buf` (`into=`), and the
#   next rank waits for it before it sends that chunk on.
#
# Roughly 25 lines. One rank is a valid ring too: it has nothing to send.
#
# **What the check does.** 3 ranks, buffers of 301 random float32 values (chunks of 100, 100 and
# 101; on a GPU also 4 ranks of 1,000,003), magnitudes from 10⁻³ to 10³ and both signs; `recv` starts as NaN. Afterwards every rank's
# buffer must hold the sum of all the ranks' buffers, compared with the float64 sum within the
# float32 bound of a sum of `n` terms in any order (`γ_{n−1} · Σ|x_r|`; exact for one rank), and
# every rank must hold the same bits. The hidden tests use every rank count from 1 to 8 and lengths
# that no rank count or block size divides (8 ranks over 9 elements: chunks of one and two; 2 ranks
# over 2,101: chunks longer than one block of 1,024 threads). Your sends and launches are checked
# for races; every kernel must be launched through `r.launch`, with its own rank's arrays and
# numbers as arguments (nothing else from outside: no global lists, no other rank's arrays); and
# the sum must come from your kernel: no rank's array may reach the host during the call (in CPU
# mode the check shows the host, and another rank's kernel, only a NaN decoy of a rank's memory).

# %% nbgrader={"grade": false, "grade_id": "ring_allreduce_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def add_into(dst, src):
    """Add src into dst, element by element, for every index of dst."""
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] += src[i]
    ### END SOLUTION


def ring_allreduce(ranks):
    """Every rank's buf becomes the elementwise sum of all ranks' bufs."""
    ### BEGIN SOLUTION
    n = len(ranks)
    m = ranks[0].buf.shape[0]
    threads = 128

    def chunk(k):
        k %= n
        return k * m // n, (k + 1) * m // n

    for s in range(n - 1):
        for r in ranks:
            lo, hi = chunk(r.index - s)
            r.send(r.buf[lo:hi], to=ranks[(r.index + 1) % n])
        for r in ranks:
            sender = ranks[(r.index - 1) % n]
            r.wait_for(sender)
            lo, hi = chunk(sender.index - s)
            r.launch(add_into, (hi - lo + threads - 1) // threads, threads,
                     r.buf[lo:hi], r.recv[:hi - lo])
        for r in ranks:
            r.wait_for(ranks[(r.index + 1) % n])
    for s in range(n - 1):
        for r in ranks:
            lo, hi = chunk(r.index + 1 - s)
            nxt = ranks[(r.index + 1) % n]
            r.send(r.buf[lo:hi], to=nxt, into=nxt.buf[lo:hi])
        for r in ranks:
            r.wait_for(ranks[(r.index - 1) % n])
    ### END SOLUTION


# %% [markdown]
# Try it on 4 ranks whose buffers hold small integers (so the sums are exact): every rank should
# now hold the same row, the sum of the four.

# %%
before, after = ch28.run_ring(ring_allreduce, ranks=4, m=10)
print("the ranks' buffers before:\n", before)
print("after:\n", after)
print("every rank holds the sum:", np.array_equal(after, np.broadcast_to(before.sum(axis=0), after.shape)))

# %% nbgrader={"grade": true, "grade_id": "ring_allreduce_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch28.ring_allreduce.check(ring_allreduce)
### BEGIN HIDDEN TESTS
ag.problems.ch28.ring_allreduce.check_hidden(ring_allreduce)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: a ring that does not wait
#
# Below, a ring with the same sends and additions as yours but **no ordering at all**: no
# `wait_for`, no `synchronize`. **Predict before you run:** on real GPUs, what can go wrong, and in
# which step first? In CPU mode the simulator runs every operation the moment it is queued, so the
# values come out right by luck; the course's ordering check still sees it.

# %%
def ring_without_waiting(ranks):
    n, m = len(ranks), ranks[0].buf.shape[0]
    for s in range(n - 1):
        for r in ranks:
            k = (r.index - s) % n
            r.send(r.buf[k * m // n:(k + 1) * m // n], to=ranks[(r.index + 1) % n])
        for r in ranks:
            k = (r.index - 1 - s) % n
            lo, hi = k * m // n, (k + 1) * m // n
            r.launch(add_into, (hi - lo + 127) // 128, 128, r.buf[lo:hi], r.recv[:hi - lo])


try:
    ch28.run_ring(ring_without_waiting, ranks=3, m=12)
except ch28.RankRace as race:
    print("RankRace:", race)

# %% [markdown]
# Rank 1's kernel reads `recv` while rank 0's copy into it may still be in flight: nothing made
# rank 1's stream wait for rank 0's. On GPUs the kernel could add half a chunk of stale NaN; in
# the next step rank 0 could overwrite `recv` while rank 1 still adds it. Such bugs show up once in
# a thousand runs, on one machine and not another; NCCL orders its steps with flags in GPU memory
# that each rank raises and the next one waits for, the same rule in hardware.
#
# ## Exercise 28.2 · What nccl-tests reports (1 point)
#
# nccl-tests, the standard benchmark of NCCL, reports two bandwidths for an all-reduce of a buffer
# of `nbytes` bytes that took `seconds`:
#
# - the **algorithm bandwidth** `algbw = nbytes / seconds`, in GB/s (10⁹ bytes per second): how
#   fast the buffer was reduced, as a user sees it;
# - the **bus bandwidth** `busbw = algbw · 2(n − 1)/n`: the bytes each rank's link carried per
#   second. Each rank sends `(n − 1)/n` of the buffer in the reduce-scatter and again in the
#   all-gather, so the factor makes numbers for different `n` comparable with each other and with
#   the link's own figure (with one rank nothing moves: 0).
#
# Write `allreduce_bandwidth(nbytes, seconds, ranks)`, returning `(algbw, busbw)` in GB/s. One or
# two lines. **The check** calls it with sizes from 4 KiB to 3 GiB, times from microseconds to
# tenths of a second and 1 to 8 ranks, within a relative 10⁻⁹.

# %% nbgrader={"grade": false, "grade_id": "bus_bandwidth_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def allreduce_bandwidth(nbytes, seconds, ranks):
    """nccl-tests' (algbw, busbw) of an all-reduce, in GB/s."""
    ### BEGIN SOLUTION
    algbw = nbytes / seconds / 1e9
    return algbw, algbw * 2 * (ranks - 1) / ranks
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "bus_bandwidth_test", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch28.bus_bandwidth.check(allreduce_bandwidth)
### BEGIN HIDDEN TESTS
ag.problems.ch28.bus_bandwidth.check_hidden(allreduce_bandwidth)
### END HIDDEN TESTS

# %% [markdown]
# ## Measure: your ring beside NCCL
#
# NCCL is the yardstick: its all-reduce is one kernel per GPU that moves and adds the data itself,
# chunk by chunk, with many rings at once over all the links. The course reaches it through CuPy's
# bindings (`cupy.cuda.nccl`), in the single-process mode your ring uses too. On a machine with
# two or more GPUs, the next cell times your ring and NCCL's all-reduce at message sizes from
# 4 KiB to 1 GiB (nccl-tests' sweep) and prints nccl-tests' columns. **Predict first:** at 4 KiB,
# what limits your ring (count its sends and launches for 2 ranks)? At 1 GiB, how close can its
# bus bandwidth come to NCCL's, and what separates them? Elsewhere the cell says why it cannot
# run: simulated ranks cross no link.

# %%
try:
    results = ch28.measure_allreduce(ring_allreduce)
    print(ch28.table(results))
except ch28.NeedsGPUs as why:
    print(why)

# %% [markdown]
# At small sizes your ring pays, every step, the host's cost of queueing sends, launches and
# waits from Python (tens of microseconds each), where NCCL launches one kernel per GPU; at large
# sizes both are limited by the links, and NCCL keeps every link busy with several rings and
# pipelined chunks while yours moves one chunk per step and waits between steps.
#
# ## Overlap: all-reduce one layer while the next one computes
#
# In data-parallel training, a layer's gradients are ready as soon as its backward pass is done,
# while the layers below still have theirs to compute. Frameworks (PyTorch's DDP) therefore start
# the all-reduce of layer `k`'s gradients right away, on a **communication stream**, while layer
# `k − 1`'s backward kernel runs on the **compute stream**: the exchange hides under the compute.
#
# `ch28.overlap_step(ring_allreduce, overlap=...)` runs one such backward step, 4 layers of 4 Mi
# gradients on 2 ranks: each layer's backward kernel on the rank's compute stream, then your ring
# over that layer's gradients on the ranks' own streams. Without overlap the host waits for each
# kernel, then for each all-reduce. With overlap, layer `k − 1`'s kernel is queued before layer
# `k`'s all-reduce, whose streams wait (an event) only for layer `k`'s gradients. On a GPU the cell
# times both (on one GPU the ranks are simulated: both ranks' kernels and copies share it); in CPU
# mode it says that timing needs a GPU.

# %%
try:
    for row in ch28.measure_overlap(ring_allreduce):
        print(f"{row['label']:22s} {row['ms']:8.2f} ms  right: {row['right']}  "
              f"({'simulated ranks on one GPU' if row['simulated'] else 'one GPU per rank'})")
except ag.timing.NeedsGPU as why:
    print(why)

# %% [markdown]
# ## Explain: what overlap can save (3 points, graded by your instructor)
#
# In the cell below, in 6 to 10 sentences, with numbers:
#
# 1. **predict**: for the overlap cell's step (4 layers, 4 Mi float32 gradients each, 2 ranks),
#    how many bytes each rank sends per layer in your ring, and how long that takes on a link of
#    450 GB/s; against that, how long the backward kernel of a layer takes if it is limited by
#    its 200 multiply-adds per element (an H200 does about 60 TFLOP/s in float32);
# 2. **measure**: the two times from the overlap cell (on a GPU, yours; without one, say what you
#    expect and why);
# 3. **explain**: what overlapping can save at most (which of the two costs hides under the
#    other), why the first layer's all-reduce (the last to run) can never be hidden, and why
#    simulated ranks on one GPU show less gain than two GPUs would.
#
# **Rubric (3 points).** 1 point: the bytes per rank (2(n − 1)/n of 16 MiB) and both times are
# right within a factor of two. 1 point: the measured (or expected) times are compared with the
# prediction. 1 point: the bound (the smaller of the two costs per layer, minus the last layer's
# exchange) and the limits of one GPU are explained by a mechanism. Studying alone: once
# `./aag grade` passes this chapter's auto-graded exercises, `ag.reveal("multi_gpu_overlap_answer")`
# shows a model answer to set yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "multi_gpu_overlap_answer", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the measured times are the learner's own).* (1) A layer
# holds 4 Mi float32 gradients, 16 MiB; with 2 ranks each rank sends 2(n − 1)/n = 1 times its
# buffer, 16 MiB per layer: half in the reduce-scatter, half in the all-gather. At 450 GB/s that is
# about 37 µs per layer, plus a few tens of microseconds of host overhead for the ring's handful of
# sends, launches and waits. A backward kernel does 200 multiply-adds on each of 4 Mi elements per
# rank, 1.7 GFLOP, about 28 µs at 60 TFLOP/s (more in practice: the loop is a chain of dependent
# operations). The two costs are of the same order, so overlap can save up to about half of the
# step. (2) Without overlap the step costs about four kernels plus four all-reduces, one after the
# other; with overlap, the first layer's kernel, then the slower of kernel and exchange for each
# layer, then the last exchange. On one GPU with simulated ranks the measured gain is small (a
# few percent to a fifth), because the "links" are copies inside the same GPU's memory that
# compete with the kernels for the same SMs and memory bandwidth. (3) Overlap hides at most the
# smaller of the two costs for every layer but one: the first layer's gradients (the last
# computed) have no compute left to hide under, so its all-reduce is always exposed. With one GPU
# per rank the kernels run on separate GPUs and the copies on the links' own engines, so the
# exchange and the compute use different hardware and the hidden part approaches the bound; on
# one GPU both ranks' kernels and copies share it, and the overlap only fills idle gaps.

# %% [markdown]
# ## Going further (not graded)
#
# - **Pipelining.** Split each chunk in two and send the second half while the first is added:
#   NCCL pipelines every step this way (its "slices"), so the link never waits for the kernel.
# - **Latency.** At 4 KiB a ring of `n` ranks costs `2(n − 1)` steps, each a launch and a copy.
#   NCCL switches to trees (`NCCL_ALGO=Tree`) at small sizes: `log n` steps. Count both for 8 ranks.
# - **One kernel.** With peer access a kernel on GPU `r` can read GPU `r − 1`'s memory directly:
#   write the reduce-scatter step as one kernel that reads the sender's chunk over the link and
#   adds it, with no `recv` at all. What must order the steps now?
# - **nccl-tests.** Build NVIDIA's nccl-tests and run `all_reduce_perf -b 4K -e 1G -f 4 -g 2`:
#   its busbw at 1 GiB is the figure to compare with the link's.
#
# **Reading:** GPU MODE lecture on NCCL and collective communication; PMPP §20.6 (collective
# communication: MPI_Allreduce); NCCL's documentation (collective operations, `ncclGroupStart`
# for one process driving several GPUs, the environment variables such as `NCCL_ALGO` and
# `NCCL_NVLS_ENABLE`); nccl-tests' `doc/PERFORMANCE.md` for algbw and busbw; Patarasuk and Yuan,
# "Bandwidth optimal all-reduce algorithms for clusters of workstations" (2009), for why a ring
# is bandwidth-optimal.
#
# **On AMD (HIP):** RCCL is AMD's NCCL (the same API; CuPy's ROCm builds bind it), the GPUs of a
# node are joined by Infinity Fabric links, and `hipMemcpyPeerAsync` is the peer copy. The ring,
# its ranks and its ordering are the same.
