# %% [markdown]
# # Chapter 20 · Programming a heterogeneous computing cluster: MPI and the GPU
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 20.
#
# **Before you start:** chapters 1–6 and 8 (chapter 8's seven-point stencil above all: this
# chapter splits it over processes); no MPI needed. **Time:** about 3 hours, reading and exercises
# included (more in CPU mode, where every rank runs the simulator).
#
# ## What you will be able to do
# - Split a 3-D grid over several **MPI processes** (ranks), each holding a **slab** of z planes
#   with a **ghost plane** on each side, and fill the ghost planes from the neighbours with
#   `Sendrecv` (a **halo exchange**), the edge ranks included.
# - Run one **distributed stencil step** that gives exactly the single-process answer, for 2, 3 and
#   4 ranks and plane counts that do not divide evenly, and see what a missing receive does to an
#   MPI program (it waits forever).
# - **Overlap** communication with computation: compute the boundary planes first, start the
#   messages with `Isend`/`Irecv`, compute the interior while they fly; predict the bytes a step
#   exchanges against the bytes it computes on, then measure where each rank's time goes.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt
from mpi4py import MPI

import autograder as ag
from numba import cuda

ag.banner()
ch20 = ag.problems.ch20
print(MPI.Get_library_version().splitlines()[0])

# %% [markdown]
# ## The idea: one problem, many processes, messages between them
#
# One GPU holds one grid only as long as the grid fits in its memory, and finishes one step only
# as fast as that one GPU computes. A **cluster** has many nodes, each with CPUs and GPUs and its
# own memory; nothing is shared between nodes, so a program that uses them all is a set of
# **processes** that each own part of the data and send each other **messages** over the
# network. MPI (the Message Passing Interface, PMPP §20.2) is how such programs are written: the
# same program starts N times (`mpiexec -n N ...`); each copy is a **rank** (0 .. N − 1) and learns
# its number and N from its **communicator**, `comm.Get_rank()` and `comm.Get_size()`.
#
# PMPP's example (§20.3–§20.5) is this course's chapter 8 stencil at cluster scale. The grid is
# cut along z into **slabs** of planes, one per rank. A point on a rank's first plane needs the
# plane just below it, which another rank owns: so every rank keeps one **ghost plane** on each
# side (a copy of its neighbour's nearest plane) and refreshes it before every step by
# exchanging planes with its neighbours: the **halo exchange**. Rank 0 has no neighbour below and
# the last rank none above; there the grid simply ends.
#
# Here the ranks run on this one machine (2 to 4 processes sharing its cores, and its GPU if it
# has one), with MPICH, the MPI library that `pip` installs as a wheel (the `mpich` package;
# `mpi4py` is its Python binding). The messages go through shared memory instead of a network;
# the program is the one a cluster would run.

# %%
ch20.show_slabs(nz=10, ranks=3)
plt.show()

# %% [markdown]
# **A notebook is one process.** MPI needs N of them, so the course gives you `ch20.run_ranks(fn,
# ranks)`: it sends your function `fn` to N new processes started by `mpiexec`, gives each rank
# its own slab of a grid (split along z, ghost planes NaN), calls `fn(comm, slab)` in every rank
# and brings back what each rank's slab became and what `fn` returned. Everything a rank needs must
# come with `fn` or through messages: a rank has its own memory, so it cannot see the notebook's
# variables once it runs, nor another rank's slab. While your function runs, a rank may not open
# files or start processes either: ranks share data through MPI only.

# %%
def hello(comm, slab):
    """Each rank: its number, how many ranks there are, and how many planes it owns."""
    return np.array([comm.Get_rank(), comm.Get_size(), slab.shape[0] - 2])


for slab, returned in ch20.run_ranks(hello, ranks=3):
    rank, size, planes = returned
    print(f"rank {rank} of {size}: {planes} own planes, slab of shape {slab.shape}")

# %% [markdown]
# `run_ranks` split 7 planes (its small default grid) as 3, 2 and 2: `nz // ranks` each and one
# more for the first `nz % ranks` ranks (`ch20.split_planes(nz, ranks)` gives the ranges).
#
# ## Exercise 20.1 · The halo exchange (3 points)
#
# A rank's `slab` is a float32 NumPy array of shape `(planes + 2, ny, nx)`: `slab[0]` is its lower
# ghost plane, `slab[1] .. slab[planes]` its own planes, `slab[planes + 1]` (that is `slab[-1]`)
# its upper ghost plane. Write `exchange_halos(comm, slab)`, which fills both ghost planes in
# place:
#
# - `slab[0]` ← the **last own plane of the rank below** (its `slab[-2]`);
# - `slab[-1]` ← the **first own plane of the rank above** (its `slab[1]`).
#
# Every rank sends and receives at the same time, so use `comm.Sendrecv(sendbuf, dest=...,
# sendtag=..., recvbuf=..., source=..., recvtag=...)`: it sends one buffer and receives another in
# one call, and cannot deadlock the way a `Send` followed by a `Recv` in every rank can (PMPP
# §20.4). Two calls do it: every rank sends its top plane **up** while receiving from **below**,
# then its bottom plane **down** while receiving from **above**. Where a rank has no neighbour,
# name `MPI.PROC_NULL` instead: a message to it is not sent, a receive from it leaves the buffer
# as it was. Planes of a C-ordered array are contiguous, so `slab[0]` is a buffer MPI can write
# into directly. Roughly 7 lines.
#
# **What the check does.** The grid is split over 3 ranks (7 planes: 3, 2 and 2); the hidden
# tests split other grids over 4 ranks (6 planes: 2, 2, 1, 1; a one-plane rank sends the same
# plane both ways) and 2 ranks (9 planes: 5 and 4). Every ghost plane that has a neighbour must hold
# exactly that neighbour's plane, and the rank's own planes must be left as they were; the ghost
# planes start as NaN.

# %% nbgrader={"grade": false, "grade_id": "halo_exchange_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def exchange_halos(comm, slab):
    """Fill slab[0] from the rank below and slab[-1] from the rank above, in place."""
    ### BEGIN SOLUTION
    rank, size = comm.Get_rank(), comm.Get_size()
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    comm.Sendrecv(slab[-2], dest=above, sendtag=0, recvbuf=slab[0], source=below, recvtag=0)
    comm.Sendrecv(slab[1], dest=below, sendtag=1, recvbuf=slab[-1], source=above, recvtag=1)
    ### END SOLUTION


# %% [markdown]
# Try it on 3 ranks: each rank's ghost planes should now equal its neighbours' nearest planes.

# %%
grid = np.arange(7 * 2 * 3, dtype=np.float32).reshape(7, 2, 3)
for rank, (slab, _) in enumerate(ch20.run_ranks(exchange_halos, ranks=3, grid=grid)):
    print(f"rank {rank}: lower ghost {slab[0, 0, 0]:5}, own planes start at {slab[1, 0, 0]:5}, "
          f"end at {slab[-2, 0, 0]:5}, upper ghost {slab[-1, 0, 0]:5}")

# %% nbgrader={"grade": true, "grade_id": "halo_exchange_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch20.halo_exchange.check(exchange_halos)
### BEGIN HIDDEN TESTS
ag.problems.ch20.halo_exchange.check_hidden(exchange_halos)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: a receive that no rank sends to
#
# The classic MPI bug: a rank waits for a message that never comes. Below, every rank sends its
# top plane up and receives its lower ghost from below, as in your exchange, but then only the
# **last** rank sends its bottom plane down, while every rank but the last waits to receive its
# upper ghost. **Predict before you run:** which ranks finish, which wait, and for how long? MPI has
# no time limit of its own; `run_ranks` stops every rank after `timeout` seconds and shows where
# each waiting rank was.

# %%
def exchange_one_way(comm, slab):
    rank, size = comm.Get_rank(), comm.Get_size()
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    comm.Sendrecv(slab[-2], dest=above, recvbuf=slab[0], source=below)
    if rank == size - 1:
        comm.Send(slab[1], dest=below)
    else:
        comm.Recv(slab[-1], source=above)


try:
    ch20.run_ranks(exchange_one_way, ranks=3, timeout=5)
except ch20.RankHung as stuck:
    print(stuck)

# %% [markdown]
# Rank 1 waits for rank 2's bottom plane and gets it; rank 0 waits for rank 1's, which rank 1
# never sends: rank 0 waits forever, and on a cluster the job would sit there until its time
# allocation ran out. The stack says which receive each rank was in. Two habits prevent it: pair
# every receive with a send in the code of the other rank (a `Sendrecv` pairs them by
# construction), and give every message a tag that says what it is, so that two messages between
# the same ranks cannot be swapped.
#
# ## Exercise 20.2 · One distributed stencil step (3 points)
#
# Now the step itself, on the GPU: the slab lives in device memory, where the stencil runs. Write
# `stencil_step(comm, d_slab, d_out, c)`:
#
# 1. **exchange**: fill `d_slab`'s ghost planes from the neighbours, as in 20.1. MPI here sends
#    host memory, so copy the two planes you send to the host (`d_slab[k].copy_to_host()`),
#    exchange them, and copy what you received into the ghost planes
#    (`d_slab[0].copy_to_device(plane)`), only where a neighbour exists;
# 2. **compute**: chapter 8's seven-point stencil on all of the rank's own planes, into `d_out`.
#    The course's `ch20.stencil_planes(d_slab, d_out, c, start, stop, first=..., last=...)`
#    launches it on the slab planes `start .. stop − 1` (each from the planes just below and
#    above it). Careful at the grid's ends: the grid's first plane (rank 0's plane 1) and its last
#    plane (the last rank's plane `planes`) are **faces**, copied rather than computed, as in
#    chapter 8. `first=True` and `last=True` say that this rank holds them.
#
# `d_slab` and `d_out` are `(planes + 2, ny, nx)` float32 device arrays, `c` the seven coefficients.
# Roughly 12 lines (or your 20.1 function and 6).
#
# **What the check does.** As 20.1's splits; `d_slab`'s ghost planes start as NaN, `d_out` all NaN.
# The ranks' own planes of `d_out` are gathered into one grid and compared with chapter 8's
# single-process stencil in float64, within chapter 8's bound (`γ₇ · Σ|c_m x_m|` inside, exact
# on the faces): a distributed step must give the single-process answer. Each rank is given only
# its own slab.

# %% nbgrader={"grade": false, "grade_id": "stencil_step_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def stencil_step(comm, d_slab, d_out, c):
    """Fill d_slab's ghost planes from the neighbours, then the stencil on every own plane."""
    ### BEGIN SOLUTION
    rank, size = comm.Get_rank(), comm.Get_size()
    planes = d_slab.shape[0] - 2
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    top, bottom = d_slab[planes].copy_to_host(), d_slab[1].copy_to_host()
    ghost_lo, ghost_hi = np.empty_like(top), np.empty_like(top)
    comm.Sendrecv(top, dest=above, sendtag=0, recvbuf=ghost_lo, source=below, recvtag=0)
    comm.Sendrecv(bottom, dest=below, sendtag=1, recvbuf=ghost_hi, source=above, recvtag=1)
    if rank > 0:
        d_slab[0].copy_to_device(ghost_lo)
    if rank < size - 1:
        d_slab[planes + 1].copy_to_device(ghost_hi)
    ch20.stencil_planes(d_slab, d_out, c, 1, planes + 1, first=rank == 0, last=rank == size - 1)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "stencil_step_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch20.stencil_step.check(stencil_step)
### BEGIN HIDDEN TESTS
ag.problems.ch20.stencil_step.check_hidden(stencil_step)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 20.3 · Overlap the exchange with the interior (3 points + 2 for speed)
#
# In 20.2 the GPU waits while the messages travel, and the messages wait while the GPU computes.
# Only two planes of a slab (its first and its last) depend on the neighbours or are needed by
# them; the planes in between, the **interior**, depend only on the rank's own data. PMPP §20.5
# overlaps the two: compute the boundary planes first, start sending them, and compute the
# interior while the messages fly.
#
# Here a step also leaves `d_out` ready for the **next** step, as an iterative solver needs: its
# ghost planes must hold the neighbours' new boundary planes. `d_slab`'s ghost planes are already
# filled (the previous step did it). Write `stencil_step_overlap(comm, d_slab, d_out, c)`:
#
# 1. the **boundary**: the stencil on the rank's first plane and on its last plane
#    (`stencil_planes(..., 1, 2, ...)` and `(..., planes, planes + 1, ...)`), then copy those two
#    planes of `d_out` to the host (the copy waits for their kernels);
# 2. **start the messages**: `comm.Irecv(buffer, source=..., tag=...)` for both ghost planes,
#    `comm.Isend(plane, dest=..., tag=...)` for both boundary planes; each returns at once with a
#    request;
# 3. the **interior**: the stencil on planes `2 .. planes − 1`, queued on the GPU (a kernel launch
#    returns before the kernel ends);
# 4. **wait** for the messages (`MPI.Request.Waitall(requests)`), then copy the received planes into
#    `d_out`'s ghost planes (where a neighbour exists).
#
# Between steps 2 and 4 the GPU computes the interior while MPI moves the planes: nothing there may
# wait for the GPU. A rank of one or two planes has no interior: take care that the ranges stay
# inside the slab. Roughly 20 lines.
#
# **What the check does.** As 20.2's, and `d_out`'s ghost planes are compared with the
# neighbours' new planes. The calls each rank makes on its `comm` are recorded: 20.3 asks for
# `Isend`/`Irecv`, so a blocking `Send`, `Recv` or `Sendrecv` fails it. **The speed test** (on a GPU)
# runs 4 ranks sharing the GPU on a 514 × 512 × 512 grid (128 or 129 planes a rank, 1 MiB a
# plane); the course's blocking step (compute everything, then exchange) and your step are called
# in turn, 20 times each after 3 warm-up calls, every call as long as its slowest rank, and every
# call's planes checked. You need a median at most 97% of the blocking step's. In CPU mode it says
# that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "stencil_overlap_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def stencil_step_overlap(comm, d_slab, d_out, c):
    """Boundary planes first, their messages in flight while the interior is computed."""
    ### BEGIN SOLUTION
    rank, size = comm.Get_rank(), comm.Get_size()
    planes = d_slab.shape[0] - 2
    ends = {"first": rank == 0, "last": rank == size - 1}
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    ch20.stencil_planes(d_slab, d_out, c, 1, 2, **ends)
    if planes > 1:
        ch20.stencil_planes(d_slab, d_out, c, planes, planes + 1, **ends)
    top, bottom = d_out[planes].copy_to_host(), d_out[1].copy_to_host()
    ghost_lo, ghost_hi = np.empty_like(top), np.empty_like(top)
    requests = [comm.Irecv(ghost_lo, source=below, tag=0),
                comm.Irecv(ghost_hi, source=above, tag=1),
                comm.Isend(top, dest=above, tag=0),
                comm.Isend(bottom, dest=below, tag=1)]
    if planes > 2:
        ch20.stencil_planes(d_slab, d_out, c, 2, planes, **ends)
    MPI.Request.Waitall(requests)
    if rank > 0:
        d_out[0].copy_to_device(ghost_lo)
    if rank < size - 1:
        d_out[planes + 1].copy_to_device(ghost_hi)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "stencil_overlap_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch20.stencil_overlap.check(stencil_step_overlap)
### BEGIN HIDDEN TESTS
ag.problems.ch20.stencil_overlap.check_hidden(stencil_step_overlap)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "stencil_overlap_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch20.stencil_overlap_speed.check(stencil_step_overlap)

# %% [markdown]
# ## Predict: what a step exchanges, against what it computes
#
# Before you measure, count. In one step each rank sends one `ny × nx` float32 plane to each
# neighbour; it computes on all of its own planes. **Predict first, by hand**, for the speed test's
# grid (514 × 512 × 512, 4 ranks): how many bytes does one rank send, and how many bytes are its
# own planes? What fraction of the grid's bytes do all ranks send in a step? That is the surface
# of a slab against its volume: what happens to it with 16 ranks on the same grid, or with a grid
# twice as deep? Then check your numbers:

# %%
plan = ch20.exchange_bytes(ch20.SPEED_GRID, ch20.SPEED_RANKS)
for row in plan["per_rank"]:
    print(f"rank {row['rank']}: {row['planes']} planes, sends {row['sent'] / 2**20:.0f} MiB, "
          f"its own planes are {row['slab'] / 2**20:.0f} MiB")
print(f"all ranks send {plan['sent'] / 2**20:.0f} MiB a step: {plan['fraction']:.2%} of the grid's "
      f"{plan['grid'] / 2**20:.0f} MiB")

# %% [markdown]
# ## Measure: where each rank's time goes
#
# On a GPU, the next cell runs one step on 4 ranks sharing the GPU: the course's blocking step,
# its overlapped step and yours, each 20 times after warm-up, then draws each step's time and a
# **timeline** of one call per rank: the stencil kernels (from CUDA events, on the GPU's clock) and
# the MPI calls (on the host's), in milliseconds from the call's start. In the blocking step the
# messages follow the kernel; in the overlapped one they should sit under the interior's kernel.
# In CPU mode it says that it needs a GPU, and shows what the course measured on an H200.

# %%
try:
    results = ch20.measure({"your overlapped step": stencil_step_overlap})
    for r in results:
        print(f"{r['label']:75s} {r['ms']:8.3f} ms{'' if r['right'] else '   WRONG'}")
    ag.experiments.steps(**ch20.chart(results)).show()
    ch20.timeline(results)
    plt.show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own steps:")
    ag.experiments.steps(**ch20.chart()).show()

# %% [markdown]
# ## Explain: predict, then measure (3 points, graded by your instructor)
#
# In the cell below, in 8 to 12 sentences, with numbers:
#
# 1. **the prediction**: the bytes one rank sends per step against the bytes of its own planes,
#    and the fraction of the grid all ranks send (the surface against the volume); how it changes
#    with 16 ranks on the same grid, and with a grid twice as deep;
# 2. **the measurement**: from the timeline, how long a rank spends exchanging and how long
#    computing in the blocking step, and whether the overlapped step hid the exchange (on a GPU,
#    your own numbers; without one, the course's H200 run above);
# 3. **the explanation**: why the gain of overlapping is bounded by the exchange's share of the
#    step, and what limits it here, with several ranks sharing one GPU and messages through
#    shared memory, compared with ranks on separate nodes of a cluster.
#
# **Rubric (3 points).** 1 point: the bytes and the fraction are right (within a few percent) and
# their scaling with ranks and depth is stated correctly. 1 point: the exchange and compute times
# are read from a measurement (yours or the course's) and compared with the prediction. 1 point:
# the gain's bound and its limits are explained by a mechanism (what overlaps with what, what the
# ranks share), not by the numbers alone. A claim with no number loses the point it belongs to.
# Studying alone: once `./aag grade` passes this chapter's auto-graded exercises,
# `ag.reveal("cluster_overlap_answer")` shows a model answer to set yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "cluster_overlap_answer", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the measured times are the learner's own).* (1) Each rank
# sends one 512 × 512 float32 plane to each neighbour: 1 MiB per neighbour, so 1 MiB for the two
# edge ranks and 2 MiB for the two middle ones, against 128 or 129 MiB of own planes: under 2%.
# All four ranks send 6 MiB a step, 1.17% of the grid's 514 MiB: two planes per internal cut,
# three cuts. The exchange grows with the number of cuts, the computation with the volume: with 16
# ranks on the same grid, 15 cuts send 30 MiB (5.8%), five times the fraction, because each slab
# is a quarter as deep while its faces stay the same size; a grid twice as deep on 4 ranks sends
# the same 6 MiB over twice the volume (0.58%). Deeper slabs, or blocks cut along more than one
# axis for many ranks, keep the surface small against the volume (PMPP §20.3). (2) In the
# blocking step the timeline shows each rank's kernel first, then its two Sendrecv calls after it;
# in the overlapped step the Isend and Irecv calls start after the two one-plane kernels and the
# Waitall ends while the interior kernel still runs, so the exchange disappears under the
# compute. The step's time is set by the GPU: four ranks each launch a kernel on a quarter of the
# grid, and the one GPU runs them one after another or side by side, so a step costs about as
# much as one kernel over the whole grid. On the course's H200 the blocking step took 6.74 ms and
# the overlapped one 6.11 ms (medians of 20 calls, 4 ranks): overlapping saved 0.63 ms, 9% of the
# step. (3) Overlapping can save at most the exchange's share of the step: the time of the copies
# to and from the host and the two messages, here under a millisecond for 2 MiB through shared
# memory against about 6 ms of compute, so the gain is bounded at about a tenth of the step, as
# measured, and the extra launches (three kernels instead of one) eat part of it. On a cluster,
# each rank has its own GPU, the messages cross a network at a few tens of GB/s with microseconds
# of latency, and the exchange's share grows with the number of nodes: there overlap can hide a
# large part of the step, as long as the interior takes longer than the exchange.

# %% [markdown]
# ## Going further (not graded)
#
# - Iterate: call your overlapped step 100 times, swapping `d_slab` and `d_out` each time, and
#   compare the result with chapter 8's stencil applied 100 times on one process.
# - Cut along two axes: with 16 ranks, a 4 × 4 grid of columns exchanges less than 16 slabs. Count
#   the bytes for the speed test's grid; `comm.Create_cart` gives each rank its neighbours.
# - Streams: put the boundary kernels and their copies on one CUDA stream and the interior on
#   another (`cuda.stream()`), so that even the copies overlap with the interior.
# - CUDA-aware MPI: builds of MPI that accept device memory send `d_slab[0]` directly, without the
#   host copies (GPUDirect RDMA moves it from GPU to network card). The `mpich` wheel used here is
#   not CUDA-aware.
# - Several GPUs: with one GPU per rank (`cuda.select_device(rank % gpus)`), the same program runs
#   on a multi-GPU node.
#
# **Reading:** PMPP ch. 20: §20.1 (background), §20.2 (a simple MPI program), §20.3 (a running
# example: the stencil's domain partition), §20.4 (point-to-point communication: `MPI_Send`,
# `MPI_Recv`, `MPI_Sendrecv`, and the deadlock), §20.5 (overlapping computation and
# communication), §20.6 (collectives), §20.7 (CUDA-aware MPI). The MPI standard (MPI Forum, version
# 4.1) for the semantics of `MPI_PROC_NULL` and non-blocking requests; the mpi4py documentation
# for the Python calls (upper-case methods send buffers, lower-case ones pickled objects).
#
# **On AMD (HIP):** the ranks and the messages are the same; each rank's kernels run on the GPU
# through numba-hip, and ROCm-aware MPI builds exist as CUDA-aware ones do. MPICH's wheel moves
# host memory on either.
