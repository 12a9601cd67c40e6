# %% [markdown]
# # Chapter 15 · Graph traversal: breadth-first search, push, pull, edges and a frontier queue
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 15.
#
# **Before you start:** chapters 1–6 and 9 (atomic operations, privatization). **Time:** about 4 hours,
# reading and exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Store a graph in **CSR** form (`row_ptr`, `col`) and as an **edge list** (`src`, `dst`), and
#   compute the **BFS level** of every vertex (the number of edges on a shortest path from a
#   source) with one kernel launch per level, four ways: **push** (each vertex of the current
#   level labels its neighbours), **pull** (each unvisited vertex looks for a parent),
#   **edge-centric** (one thread per edge) and a **frontier queue** (one thread per vertex of the
#   current level, the next level appended with an atomic), then the queue **privatized**: a
#   queue per block in shared memory, and one global atomic per block instead of one per vertex.
# - Tell a **benign race** (several threads store the same value) from a harmful one (two
#   threads both claim a vertex and append it twice), and use `cuda.atomic.cas` and
#   `cuda.atomic.add` where the harmful one would happen.
# - Count the work of each level both ways and **predict** when switching from push to pull pays
#   off; measure your BFS (on a GPU) in **traversed edges per second** (TEPS), the Graph500
#   benchmark's unit.
#
# **Points:** 19 in all: 15.1 push (3), 15.2 pull (3), 15.3 edge-centric (3), 15.4 frontier queue
# (3, and 2 for speed on a GPU) and 15.5 privatized frontier (3), checked automatically; the
# written answer on direction switching (2), graded by your instructor.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda

ag.banner()
ch15 = ag.problems.ch15

# %% [markdown]
# ## The idea: a graph as two arrays, a search as waves
#
# A **directed graph** has `n` vertices, numbered `0 … n − 1`, and `m` edges `v → u`. The
# **compressed sparse row** form (CSR, the same layout as a sparse matrix's, PMPP ch. 14 and
# §15.2) keeps it in two int32 arrays:
#
# - `col`, every edge's destination, the edges grouped by their source: first all of vertex 0's
#   out-neighbours, then vertex 1's, and so on;
# - `row_ptr`, `n + 1` entries: vertex `v`'s out-neighbours are `col[row_ptr[v] : row_ptr[v + 1]]`
#   (`row_ptr[0] = 0`, `row_ptr[n] = m`). A vertex with no out-edge has `row_ptr[v] == row_ptr[v + 1]`.
#
# **Breadth-first search** (BFS) from a source finds, for every vertex, its **level**: the number
# of edges on a shortest path from the source (the source is level 0; a vertex no path reaches
# keeps level −1). It goes in waves: the vertices of level 0 (the source) label their unlabelled
# neighbours 1; the vertices of level 1 label theirs 2; and so on until a wave labels nothing. The
# vertices of the current wave are the **frontier**. Each wave depends on the one before, so a GPU
# BFS launches **one kernel per level**: within a level, every frontier vertex (or every edge)
# can be handled in parallel.
#
# Two kinds of graphs show two very different searches. An **R-MAT** graph (the recursive matrix
# generator of the Graph500 benchmark, with its probabilities a = 0.57, b = c = 0.19, d = 0.05)
# looks like a social network: a few hubs with thousands of edges, most vertices with a handful,
# and every vertex a few steps from the hubs (a **low diameter**). A **2-D grid** looks like a road
# network: every vertex has at most 4 neighbours, and crossing it takes as many steps as its
# width and height together (a **high diameter**). The pictures colour each vertex by its level:

# %%
rng = np.random.default_rng(7)
small_ptr, small_col = ch15.rmat_graph(rng, 24, edge_factor=3)
small_src = ch15.hub_source(rng, small_ptr)
grid_ptr, grid_col = ch15.to_csr(36, *ch15.grid_edges(np.random.default_rng(1), 36))
fig, axes = plt.subplots(1, 2, figsize=(10, 5))
small_levels = ch15.plot_graph(small_ptr, small_col, small_src, ax=axes[0])
ch15.plot_graph(grid_ptr, grid_col, 0, ax=axes[1], columns=6)
plt.show()
print("row_ptr:", small_ptr.tolist())
print("col:    ", small_col.tolist())
print("levels: ", small_levels.tolist())

# %% [markdown]
# Read vertex `small_src`'s out-neighbours off the two arrays, and check their levels. The R-MAT
# graph needs few levels and leaves some vertices unreached (they have no in-edge from the part
# of the graph the source reaches); the grid needs many levels, each with only a few vertices.
#
# ## The CPU baseline
#
# Two ways on one core, on an R-MAT graph with 16 edges per vertex: the textbook BFS with a FIFO
# queue, compiled with `numba.njit` (take the vertex at the head, label its unvisited neighbours,
# append them at the tail), and a level-by-level BFS in NumPy (gather the frontier's neighbours,
# keep the unvisited ones, `np.unique`). A BFS is measured in **traversed edges per second**
# (TEPS): Graph500 counts the out-edges of every vertex the search reached, divided by the time.

# %%
cpu_n = (1 << 22) if ag.backend.is_gpu else (1 << 18)   # smaller without a GPU: slow machines
why = ag.timing.not_measured("Timing the CPU searches", gpu=False)
if why:
    print(why)
cpu_rows = [] if why else ch15.time_cpu_bfs(cpu_n)
for row in cpu_rows:
    print(f"{row['label']:44s} {row['ms']:9.2f} ms  {row['mteps']:7.1f} million TEPS"
          f"{'' if row['right'] else '   WRONG'}")

# %% [markdown]
# ## Exercise 15.1 · Vertex-centric push BFS (3 points)
#
# Write `bfs_push_kernel(row_ptr, col, levels, level, changed)`, one launch of a level: one thread
# per vertex, `v = cuda.grid(1)`. If `v` is a vertex (`v < levels.size`) **of the current level**
# (`levels[v] == level`), it goes through its out-neighbours `u`; every `u` that is still
# unvisited (`levels[u] == -1`) gets level `level + 1`, and the thread sets `changed[0] = 1` so that
# the host knows this level labelled something. Roughly 8 lines (PMPP §15.3).
#
# **Who runs the loop.** The course does (`ch15.bfs_by_levels`): it sets every level to −1 and the
# source's to 0, then for `level = 0, 1, 2, …` sets `changed[0] = 0`, launches your kernel with
# `ceil(n / T)` blocks of `T` threads, and stops when a launch left `changed[0]` at 0. Your kernel
# handles one level.
#
# **A race, and why it is harmless here.** Two vertices of the current level can share an
# unvisited neighbour `u`: two threads then store into `levels[u]` in the same launch, in an order
# nobody controls. Both store **the same value**, `level + 1`, so whichever lands last, `levels[u]`
# ends right. The same goes for `changed[0] = 1`. And a thread reading `levels[v]` while another
# thread labels `v` sees −1 or `level + 1`, neither of which is `level`: either way it does
# nothing. This is a **benign race** (PMPP §15.3): plain stores are enough, no atomic is needed. It
# is benign only because every writer writes the same value and no decision depends on who wrote
# first: Exercise 15.4 has a race that is not.
#
# **What the check does.** Levels exact against a BFS on the host. Visible: an R-MAT graph of 100
# vertices (800 edges), a 9 × 9 grid with some streets missing, an R-MAT graph with self-loops and
# doubled edges, and a graph where every out-neighbour of the source is a dead end (the search
# stops after one level); blocks of 32 threads, so the last block has threads with no vertex.
# Hidden: 2 vertices, 400 vertices, a grid of 181 vertices (about 25 levels), two random sizes,
# blocks of 32 or 64. The verdict names the first wrong vertex and what that usually means.

# %% nbgrader={"grade": false, "grade_id": "bfs_push_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def bfs_push_kernel(row_ptr, col, levels, level, changed):
    ### BEGIN SOLUTION
    v = cuda.grid(1)
    if v < levels.size and levels[v] == level:
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if levels[u] == -1:           # unvisited: label it (several threads may: same value)
                levels[u] = level + 1
                changed[0] = 1
    ### END SOLUTION


# %% [markdown]
# Try it on the pictured R-MAT graph, with the course's loop:

# %%
def run_bfs(kernel, ptr, col, source, threads=32, loop=ch15.bfs_by_levels):
    """Launch a BFS kernel through one of the course's loops; return (levels, launches)."""
    d_levels = cuda.device_array(len(ptr) - 1, np.int32)
    launches = loop(kernel, cuda.to_device(ptr), cuda.to_device(col), d_levels, source, threads)
    return d_levels.copy_to_host(), launches


got_levels, launches = run_bfs(bfs_push_kernel, small_ptr, small_col, small_src)
print("levels:  ", got_levels.tolist())
print("right:", np.array_equal(got_levels, small_levels), f" ({launches} launches)")

# %% nbgrader={"grade": true, "grade_id": "bfs_push_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch15.bfs_push.check(bfs_push_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch15.bfs_push.check_hidden(bfs_push_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: forget the visited check
#
# The kernel below labels **every** out-neighbour of a frontier vertex with `level + 1`, visited
# or not. **Predict before you run:** on the grid, what happens to the source, whose neighbours
# point back at it? Does the loop even stop? (The course's loop gives up after `n` levels.)

# %%
@cuda.jit
def push_without_visited_check(row_ptr, col, levels, level, changed):
    v = cuda.grid(1)
    if v < levels.size and levels[v] == level:
        for e in range(row_ptr[v], row_ptr[v + 1]):
            levels[col[e]] = level + 1
            changed[0] = 1


bad_levels, bad_launches = run_bfs(push_without_visited_check, grid_ptr, grid_col, 0)
print("expected:", ch15.bfs_levels(grid_ptr, grid_col, 0).tolist())
print("got:     ", bad_levels.tolist(), f"({bad_launches} launches for 36 vertices)")

# %% [markdown]
# Every vertex bounces between levels: level 1's vertices relabel the source 2, which relabels
# them 3, and the wave never dies out, so the loop runs until its cap. The check
# `levels[u] == -1` is what makes each vertex get its level once, from the first wave that reaches
# it, which is the shortest path.
#
# ## Exercise 15.2 · Vertex-centric pull BFS (3 points)
#
# Push makes the **frontier** do the work. **Pull** turns it around (PMPP §15.3): one thread per
# vertex again, but now every **unvisited** vertex looks for a parent: it goes through its
# **in-neighbours** (the vertices with an edge *to* it), and as soon as it finds one of the
# current level it takes level `level + 1`, sets `changed[0] = 1` and stops looking (`break`).
# A vertex writes only its own level.
#
# In-neighbours need the **transposed graph**, the CSR of the reversed edges: `in_ptr` and
# `in_col`, with `v`'s in-neighbours at `in_col[in_ptr[v] : in_ptr[v + 1]]`. The course makes it for
# you (`ch15.transpose(row_ptr, col)`, on the host). Write
# `bfs_pull_kernel(in_ptr, in_col, levels, level, changed)`: launched by the same loop as 15.1
# (`ch15.bfs_by_levels` with the transposed arrays), one level per launch. Roughly 9 lines.
#
# The race here is benign too: a vertex reads a neighbour's level while that neighbour may be
# labelling itself `level + 1` in the same launch; it reads −1 or `level + 1`, and neither is the
# `level` it looks for.
#
# **What the check does.** As 15.1's, on the same kinds of graphs, your kernel given their
# transposes.

# %% nbgrader={"grade": false, "grade_id": "bfs_pull_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def bfs_pull_kernel(in_ptr, in_col, levels, level, changed):
    ### BEGIN SOLUTION
    v = cuda.grid(1)
    if v < levels.size and levels[v] == -1:
        for e in range(in_ptr[v], in_ptr[v + 1]):
            if levels[in_col[e]] == level:     # a parent in the current level
                levels[v] = level + 1
                changed[0] = 1
                break
    ### END SOLUTION


# %% [markdown]
# Try it on the pictured R-MAT graph's transpose:

# %%
small_in_ptr, small_in_col = ch15.transpose(small_ptr, small_col)
got_levels, launches = run_bfs(bfs_pull_kernel, small_in_ptr, small_in_col, small_src)
print("right:", np.array_equal(got_levels, small_levels), f" ({launches} launches)")

# %% nbgrader={"grade": true, "grade_id": "bfs_pull_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch15.bfs_pull.check(bfs_pull_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch15.bfs_pull.check_hidden(bfs_pull_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 15.3 · Edge-centric BFS (3 points)
#
# Push and pull give each thread one **vertex**, so a thread does as many edges as its vertex
# has: on an R-MAT graph a hub's thread goes through thousands of edges while the other 31 lanes
# of its warp, with two or three edges each, wait for it. The **edge-centric** BFS (PMPP §15.4)
# gives each thread one **edge** instead, so every thread does the same small work.
#
# It reads the graph as an **edge list** (the COO form of chapter 14): two int32 arrays `src`
# and `dst` with one entry per edge, edge `e` going from `src[e]` to `dst[e]`, in no particular
# order (`ch15.edge_list(row_ptr, col)` makes one from a CSR graph). Write
# `bfs_edge_kernel(src, dst, levels, level, changed)`, one launch of a level: thread
# `e = cuda.grid(1)`, if `e` is an edge (`e < src.size`) whose source is **at the current level**
# (`levels[src[e]] == level`) and whose destination is still unvisited, gives the destination
# level `level + 1` and sets `changed[0] = 1`. Roughly 7 lines.
#
# The loop is 15.1's with one change: `ch15.bfs_by_edges` launches `ceil(m / T)` blocks for the
# `m` edges (one thread per edge), not `ceil(n / T)`. The race is 15.1's benign one: several
# edges into the same vertex may store the same `level + 1`.
#
# **The price.** Every launch gives a thread to **every edge**, whatever the frontier: on an
# R-MAT graph of 16 edges per vertex, 16 times as many threads as push, most of them finding that
# their edge's source is not at this level. What it buys is balance: no thread waits for a hub.
# So it pays on graphs with a few levels and very uneven degrees, and loses on a road-like grid,
# whose many levels each cost a pass over all the edges.
#
# **What the check does.** Levels exact against a BFS on the host, your kernel launched through
# `ch15.bfs_by_edges`. Visible: an R-MAT graph of 60 vertices, a 7 × 7 grid with some streets
# missing, an R-MAT graph with self-loops and doubled edges, and a source whose out-neighbours are
# dead ends; every edge list in a random order with one to three edges doubled (so the last block
# has threads with no edge); blocks of 32 threads. Hidden: 2 vertices, 240 vertices, an 11 × 11
# grid (20 levels or more), two random sizes, blocks of 32 or 64.

# %% nbgrader={"grade": false, "grade_id": "bfs_edge_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def bfs_edge_kernel(src, dst, levels, level, changed):
    ### BEGIN SOLUTION
    e = cuda.grid(1)
    if e < src.size and levels[src[e]] == level:
        u = dst[e]
        if levels[u] == -1:               # unvisited: label it (several edges may: same value)
            levels[u] = level + 1
            changed[0] = 1
    ### END SOLUTION


# %% [markdown]
# Try it on the pictured R-MAT graph, as an edge list (the launches are the levels, as in 15.1):

# %%
small_src_list, small_dst_list = ch15.edge_list(small_ptr, small_col)
d_levels = cuda.device_array(len(small_ptr) - 1, np.int32)
launches = ch15.bfs_by_edges(bfs_edge_kernel, cuda.to_device(small_src_list),
                             cuda.to_device(small_dst_list), d_levels, small_src, 32)
print(f"{small_src_list.size} edges, so {-(-small_src_list.size // 32)} blocks of 32 threads "
      f"a launch, for {len(small_ptr) - 1} vertices")
print("right:", np.array_equal(d_levels.copy_to_host(), small_levels), f" ({launches} launches)")

# %% nbgrader={"grade": true, "grade_id": "bfs_edge_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch15.bfs_edge.check(bfs_edge_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch15.bfs_edge.check_hidden(bfs_edge_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Predict: which direction does less work?
#
# Both kernels launch a thread for **every** vertex at every level, but what each thread does
# differs. In a push step, the frontier's vertices go through all their out-edges: the work is the
# sum of the frontier's out-degrees. In a pull step, every unvisited vertex goes through its
# in-edges until it finds a parent: a vertex that finds one early stops early, one that finds none
# reads all its in-edges. So push is cheap when the frontier is small, and pull is cheap when most
# unvisited vertices have a parent in the frontier.
#
# **Predict first, then run the next cell:** on an R-MAT graph of 4,096 vertices (16 edges each),
# at which level does the frontier hold most of the graph, and at that level which direction
# examines fewer edges, by roughly how much? And on a grid of 4,096 vertices? The cell counts,
# on the host, the edges each direction examines at each level (`ch15.work_per_level`).

# %%
work_rng = np.random.default_rng(5)
rmat_ptr, rmat_col = ch15.rmat_graph(work_rng, 4096, edge_factor=16)
road_ptr, road_col = ch15.to_csr(4096, *ch15.grid_edges(work_rng, 4096))
work = ch15.plot_work({"R-MAT, 4,096 vertices, 16 edges each":
                       (rmat_ptr, rmat_col, ch15.hub_source(work_rng, rmat_ptr)),
                       "grid, 4,096 vertices": (road_ptr, road_col, 0)})
plt.show()
for label, rows in work.items():
    push, pull = sum(r["push_edges"] for r in rows), sum(r["pull_edges"] for r in rows)
    best = sum(min(r["push_edges"], r["pull_edges"]) for r in rows)
    print(f"{label}: {len(rows)} levels; edges examined: push {push:,}, pull {pull:,}, "
          f"the cheaper direction at each level {best:,}")

# %% [markdown]
# A **direction-optimizing** BFS (Beamer, Asanović and Patterson, 2012; PMPP §15.3) uses push
# while the frontier is small and switches to pull when the frontier's edges become a large share
# of the edges left, then back to push near the end. Whether that pays is what the written answer
# at the end of the chapter asks you to explain, with these counts and, on a GPU, with times.
#
# ## Exercise 15.4 · BFS with a frontier queue (3 points, and 2 for speed)
#
# Push and pull both launch `n` threads per level (the edge-centric kernel `m`), even when the
# frontier holds three vertices: on the grid, nearly every thread of nearly every launch finds
# nothing to do. A **frontier queue** (PMPP §15.5) launches one thread per vertex of the frontier. The launch for `level` gets the
# current frontier as an array of vertices, and builds the next one: every vertex it labels is
# appended to `next_frontier`, at a slot taken from the counter `next_size`.
#
# Write `bfs_frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level)`:
# thread `i` (if `i < frontier.size`) takes `v = frontier[i]` and goes through `v`'s
# out-neighbours `u`. Two things must be atomic now:
#
# - **claiming `u`.** If two frontier vertices share the unvisited neighbour `u` and both test
#   `levels[u] == -1` and then store, both see −1 and both **append `u`**: the next frontier holds
#   it twice, and its edges are done twice. The race is no longer benign, because a decision (to
#   append) depends on who came first. `cuda.atomic.cas(levels, u, -1, level + 1)` stores
#   `level + 1` only if `levels[u]` is still −1, and returns what it found: exactly one thread
#   gets −1 back, and only that thread appends `u`.
# - **taking a slot.** `slot = cuda.atomic.add(next_size, 0, 1)` adds 1 and returns the old value:
#   every appending thread gets a slot of its own, and the thread writes `next_frontier[slot] = u`.
#
# Roughly 9 lines. The course's loop (`ch15.bfs_frontier`) sets the levels, puts the source alone
# in the first frontier, and for each level sets `next_size[0] = 0`, launches `ceil(size / T)`
# blocks with `frontier` exactly the current frontier's vertices, reads the new size back and
# swaps the two queues, until a level appends nothing.
#
# **What the check does.** Same graphs, sizes and verdicts as 15.1, and more: after every launch
# the new frontier must hold exactly the vertices the launch labelled, each once (checked on graphs
# of up to 65,536 vertices, which in CPU mode is all of them). In CPU mode the race detector
# watches `levels` and `next_size`: a plain store into a vertex's level, or a plain
# `next_size[0] += 1`, fails every time, whatever the threads' order. (A plain *read* of
# `levels[u]` before the `cas`, to skip visited vertices cheaply, is allowed: the `cas` decides.)

# %% nbgrader={"grade": false, "grade_id": "bfs_frontier_queue_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def bfs_frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:   # this thread claimed u
                slot = cuda.atomic.add(next_size, 0, 1)
                next_frontier[slot] = u
    ### END SOLUTION


# %% [markdown]
# Try it on the pictured grid, where the frontier is a thin diagonal wave:

# %%
got_levels, launches = run_bfs(bfs_frontier_kernel, grid_ptr, grid_col, 0, loop=ch15.bfs_frontier)
print("right:", np.array_equal(got_levels, ch15.bfs_levels(grid_ptr, grid_col, 0)),
      f" ({launches} launches)")

# %% nbgrader={"grade": true, "grade_id": "bfs_frontier_queue_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch15.bfs_frontier_queue.check(bfs_frontier_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch15.bfs_frontier_queue.check_hidden(bfs_frontier_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "bfs_frontier_queue_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch15.bfs_frontier_queue.check_speed(bfs_frontier_kernel)

# %% [markdown]
# **The speed test** (on a GPU): an R-MAT graph of 2²² vertices with 16 edges each (67 million
# edges, 285 MB of CSR) from one of its hubs, 256 threads a block, timed against the course's
# frontier kernel in the same run; it passes at half the course's speed and at least 5 times the
# njit queue BFS on one core. The table gives GB/s for the least a BFS moves (the graph read once,
# every level written once); divide the traversed edges by the time for TEPS.
#
# ## Break it: a tail without an atomic
#
# The kernel below claims vertices correctly but takes its slot with a plain `next_size[0] += 1`:
# a load, an add and a store, which two threads can interleave so that both get the same slot.
# On a GPU it loses vertices now and then, depending on timing. **Predict:** what does the
# check say in CPU mode?

# %%
@cuda.jit
def frontier_plain_tail(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                slot = next_size[0]
                next_size[0] = slot + 1
                next_frontier[slot] = u


try:
    ch15.bfs_frontier_queue.check(frontier_plain_tail)
except ag.CheckFailed as failed:
    print(failed)

# %% [markdown]
# In CPU mode the race detector records every access to `next_size` during a launch: two threads
# touched it, at least one with a plain store, and nothing ordered them, so the check fails on
# every run, whether or not the threads happened to collide. On a GPU the check sees only the
# levels and the frontiers, and such a kernel can pass a run and fail the next.
#
# ## Exercise 15.5 · A privatized frontier (3 points)
#
# The queue launches the fewest threads and examines the fewest edges of push, pull and itself, yet on
# the course's H200 (an R-MAT graph of 2²² vertices, 16 edges each, 6 levels) it was the slowest:
# push took 54.9 ms (1.21 GTEPS), pull 3.85 ms (17.3 GTEPS), the frontier queue 76.7 ms (0.87
# GTEPS). One suspect is **contention on the one global counter** `next_size`: every vertex
# appended is one `cuda.atomic.add` on the same word, performed one after another in the L2
# cache, the same problem as chapter 9's histogram with every byte in one bin. Chapter 9's cure is
# **privatization** (PMPP §15.6), and you will write it here. Measure before you believe the
# suspect, though: the course's privatized kernel took 82.5 ms on the same graph, no faster. On
# this graph the time goes elsewhere: one thread walks all of a hub's thousands of edges while the
# rest of its warp waits (the edge-centric kernel, which gives every edge its own thread, took
# 4.26 ms). Privatization pays where many threads append at once and each has little else to do.
#
# Each block keeps its own queue in **shared memory**, with a counter of its own. A thread that
# claims a vertex takes a slot in the **block's** queue (a `cuda.atomic.add` on a shared array:
# fast, and contended only by the block's own threads). When the block is done, **one** thread
# reserves room for the whole block in the global queue with **one** `cuda.atomic.add(next_size,
# 0, count)`, which returns where the block's room starts, and the block's threads copy its queue
# there. The global atomics drop from one per vertex to one per block.
#
# Write `bfs_frontier_private_kernel(row_ptr, col, levels, frontier, next_frontier, next_size,
# level)`: the same arguments and the same loop (`ch15.bfs_frontier`) as 15.4. Roughly 25 lines:
#
# 1. `b_queue = cuda.shared.array(BLOCK_QUEUE, int32)` (with `BLOCK_QUEUE = 128`, a constant at
#    the top of the cell), `b_count = cuda.shared.array(1, int32)` and a one-entry shared array
#    for the block's start; thread 0 sets `b_count[0] = 0`; `cuda.syncthreads()`.
# 2. As in 15.4, thread `i < frontier.size` goes through its vertex's edges and claims with
#    `cuda.atomic.cas`. A claiming thread takes `k = cuda.atomic.add(b_count, 0, 1)`; if
#    `k < BLOCK_QUEUE` it writes `b_queue[k] = u`, else the block's queue is full (**overflow**)
#    and it appends `u` to the global queue directly, as 15.4 does.
# 3. `cuda.syncthreads()`; thread 0 takes `count = min(b_count[0], BLOCK_QUEUE)` (the overflowed
#    vertices are in the global queue already), stores it back in `b_count[0]`, and stores
#    `cuda.atomic.add(next_size, 0, count)` in the shared start; `cuda.syncthreads()`.
# 4. Every thread `t` of the block copies `b_queue[k]` to `next_frontier[start + k]` for
#    `k = t, t + blockDim.x, …` below `count`.
#
# Two traps. **Every thread must reach every barrier**: the threads past the end of the frontier
# skip step 2 only, never `return` early. And PMPP's version has the overflowing thread store
# the capacity into the shared counter (a plain store while other threads update it atomically):
# in CPU mode that is a shared-memory race and fails; taking the `min` after the barrier, as in
# step 3, does the same without the race.
#
# **What the check does.** Everything 15.4's check does (levels, every frontier built, the race
# detector on `levels` and `next_size`), on the same kinds of graphs (the grid 7 × 7), and a star
# of 150 vertices whose source's one thread appends 149 vertices in a single launch, more than a
# block queue of 128 holds, so the overflow path runs (hidden: a star of 601). And, in CPU mode,
# whether it is privatized: during every launch the check counts, block by block, the updates of
# `next_size` and the slots of the next frontier the block filled. A block may update `next_size`
# **once**, plus once per vertex past the first 64 it appended (the overflow: your block queue
# must hold at least 64 vertices). 15.4's kernel handed in here fails with "this exercise asks
# for a privatized frontier, and this kernel is not", naming the block and the level. On a GPU
# the check sees only the levels and the frontiers (nothing counts a GPU's atomics for the
# check): there, the "Measure it" cell below shows what privatization changes.

# %% nbgrader={"grade": false, "grade_id": "bfs_frontier_private_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
from numba import int32

BLOCK_QUEUE = 128     # vertices a block's queue holds (at least 64)


@cuda.jit
def bfs_frontier_private_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    ### BEGIN SOLUTION
    b_queue = cuda.shared.array(BLOCK_QUEUE, int32)
    b_count = cuda.shared.array(1, int32)
    b_start = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        b_count[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < frontier.size:                  # no early return: every thread reaches the barriers
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                k = cuda.atomic.add(b_count, 0, 1)
                if k < BLOCK_QUEUE:
                    b_queue[k] = u
                else:                      # the block's queue is full: straight to the global one
                    next_frontier[cuda.atomic.add(next_size, 0, 1)] = u
    cuda.syncthreads()
    if t == 0:
        count = min(b_count[0], BLOCK_QUEUE)
        b_count[0] = count
        b_start[0] = cuda.atomic.add(next_size, 0, count)    # one global atomic per block
    cuda.syncthreads()
    for k in range(t, b_count[0], cuda.blockDim.x):
        next_frontier[b_start[0] + k] = b_queue[k]
    ### END SOLUTION


# %% [markdown]
# Try it on the pictured R-MAT graph, and see that 15.4's kernel is not accepted here:

# %%
got_levels, launches = run_bfs(bfs_frontier_private_kernel, small_ptr, small_col, small_src,
                               loop=ch15.bfs_frontier)
print("right:", np.array_equal(got_levels, small_levels), f" ({launches} launches)")
if not ag.backend.is_gpu:
    try:
        ch15.bfs_frontier_private.check(bfs_frontier_kernel)
    except ag.CheckFailed as failed:
        print(str(failed).splitlines()[1])

# %% nbgrader={"grade": true, "grade_id": "bfs_frontier_private_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch15.bfs_frontier_private.check(bfs_frontier_private_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch15.bfs_frontier_private.check_hidden(bfs_frontier_private_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Measure it (on a GPU)
#
# On a GPU the next cell runs a BFS on an R-MAT graph of 2²² vertices (16 edges each) with your
# five kernels and the course's frontier kernels (plain and privatized), 256 threads a block, and prints the time, the
# launches (levels), GTEPS (billions of traversed edges per second) and the bandwidth for the least
# a BFS moves, beside the time a copy of those bytes takes (the roofline's floor: a BFS reads
# `levels` at random, so expect to be far above it). In CPU mode it says it needs a GPU and draws
# what the course's kernels took on an H200 instead.

# %%
searches = {"push (yours)": ("push", bfs_push_kernel), "pull (yours)": ("pull", bfs_pull_kernel),
            "edge-centric (yours)": ("edge", bfs_edge_kernel),
            "frontier queue (yours)": ("frontier", bfs_frontier_kernel),
            "privatized frontier (yours)": ("private", bfs_frontier_private_kernel),
            "frontier queue (course)": ("frontier", ch15.reference_frontier()),
            "privatized frontier (course)": ("private", ch15.reference_private())}
floor_bytes = ch15.bfs_bytes(ch15.SPEED_SIZE)     # the graph read once, the levels written once
print(f"The least a BFS of this graph moves: {floor_bytes / 1e6:.0f} MB, "
      f"{floor_bytes / 4.8e12 * 1e3:.3f} ms at 4.8 TB/s (the H200's memory bandwidth).")
try:
    rows = ch15.measure(searches)
    ceiling = ag.timing.copy_ceiling(floor_bytes)
    print(f"A copy of the same bytes on this GPU: {ceiling.median_ms:.3f} ms\n")
    print(f"{'BFS':28s} {'time':>10s} {'levels':>7s} {'GTEPS':>7s} {'GB/s':>7s} right")
    for r in rows:
        print(f"{r['label']:28s} {r['ms']:8.3f}ms {r['launches']:7d} {r['gteps']:7.2f} "
              f"{r['gbps']:7.0f} {r['right']}")
    for r in cpu_rows:
        print(f"CPU: {r['label'][:40]:40s} {r['mteps'] / 1e3:7.3f} GTEPS (measured above, "
              f"{cpu_n:,} vertices)")
    ag.experiments.steps(**ch15.chart(rows, copy_ms=ceiling.median_ms)).show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels (bars), beside a copy of "
          "the least bytes a BFS moves (the line):")
    ag.experiments.steps(**ch15.chart()).show()

# %% [markdown]
# ## Explain: when does direction switching pay? (2 points, graded by your instructor)
#
# **Predict, then measure.** Before you look at times, use the counts of the "Predict" section
# (and, on a GPU, time push and pull level by level: the loop `ch15.bfs_by_levels` accepts any of
# your kernels, and `ch15.work_per_level` gives the counts for any graph). In the cell below, in 5
# to 10 sentences:
#
# 1. say why, on the R-MAT graph, a BFS that pushes while the frontier is small and pulls when it
#    is large examines far fewer edges than either direction alone, naming the level where the
#    switch pays and the numbers behind it;
# 2. say why the same switch gains nothing on the grid (what the frontier and the unvisited
#    vertices look like at every level there, and what each launch of `n` threads costs when the
#    frontier is a thin wave);
# 3. say which of your kernels you would use for each graph, and why, with a number.
#
# A full-mark answer uses numbers (the counts, or your measurements) for every claim and keeps
# edges examined and time apart.

# %% [markdown] nbgrader={"grade": true, "grade_id": "direction_switch_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the reasoning the instructor looks for, with the counts of
# the "Predict" cell, which are the same on every run: its graphs are seeded).* (1) The R-MAT graph
# has a low diameter: from a hub, 5 levels reach all 2,989 reachable vertices, and level 2's
# frontier alone holds 2,263 of them. A push step goes through every out-edge of its frontier,
# most of them to vertices already visited: 38,927 edges at level 1 and 24,784 at level 2. A pull
# step lets each vertex still unvisited stop at its first parent, and once the frontier is most
# of the graph it finds one after an edge or two: 3,478 edges at level 1 and 277 at level 2. At
# level 0 it is the other way round (push 781 edges from the one source, pull 45,443, since every
# vertex scans all its in-edges and finds no parent). Taking the cheaper direction at each level
# examines 4,541 edges, 14 times fewer than push alone (64,971) and 11 times fewer than pull alone
# (49,203): push for level 0, pull for levels 1 to 4. (2) The grid has a high diameter: 127 levels
# for 4,096 vertices, the frontier a thin diagonal wave of at most 68 vertices, and most of the
# graph unvisited until late. Pull makes every unvisited vertex scan its in-edges at every level
# for nothing (904,649 edges in all, 62 times push's 14,484), so push is cheaper at every level
# but the last four (the corner's few last vertices, 16 edges saved in all), and the cheapest mix,
# 14,468 edges, is push's own count to a tenth of a percent: switching gains nothing. What costs
# on the grid is not edges but launches: 127 launches of n threads each, nearly all idle, each
# paying a launch and a read of all n levels. (3) For the grid the frontier queue, whose launches have as many threads
# as the wave has vertices (at most 68 here instead of 4,096); for the R-MAT graph the queue for
# level 0 and pull for the big levels (a direction-optimizing BFS), since pull examines 277 edges
# where push examines 24,784 at level 2.

# %% [markdown]
# ## Stretch (not graded): direction-optimizing BFS
#
# Write a host function that runs a BFS level by level and, at each level, chooses between your
# push kernel and your pull kernel: push while the frontier's out-edges are fewer than the edges
# left unexplored divided by a factor α (Beamer's heuristic uses α ≈ 14), pull otherwise, and
# push again when the frontier shrinks below n / β (β ≈ 24). It needs the frontier's size and its
# out-degree sum at each level: count them in the kernels with `cuda.atomic.add`. On a GPU,
# compare its time on the R-MAT graph and on a grid of 2²² vertices with your kernels.
#
# Questions to answer for yourself (not graded):
# 1. Push and pull launch `n` threads per level. How many levels does a grid of 2²² vertices
#    need, and what is the cost of those launches alone, at about 5 µs a launch?
# 2. The frontier queue appends vertices in whatever order the atomics came: what does that do to
#    the next level's reads of `row_ptr` and `col`? Would sorting the frontier help?
# 3. One thread per frontier vertex gives a hub's thread thousands of edges while its neighbours
#    have two. What does that do to a warp? Your edge-centric kernel (15.3) is one answer; what
#    does a warp per hub (Merrill, Garland and Grimshaw) keep of the queue that it loses?
#
# ## Going further
# - PMPP ch. 15: §15.1 (background), §15.2 (breadth-first search), §15.3 (vertex-centric parallel
#   BFS: push, pull, and the direction-optimized combination), §15.4 (edge-centric parallel BFS),
#   §15.5 (improving efficiency with frontiers), §15.6 (reducing contention with privatization),
#   §15.7 (other optimizations).
# - Beamer, Asanović and Patterson, "Direction-optimizing breadth-first search" (SC 2012); Merrill,
#   Garland and Grimshaw, "Scalable GPU graph traversal" (PPoPP 2012); the Graph500 specification
#   (the R-MAT generator, and the TEPS count).
# - **On AMD (HIP):** a wavefront has 64 lanes on the MI200 and MI300 series, and shared memory is
#   the **LDS**. The chapter's kernels use no warp-level code, so they run unchanged; numba-hip
#   keeps `cuda.atomic.cas` and `cuda.atomic.add`. The privatized queue of 15.5 lives in the LDS
#   as it does in shared memory.
