# %% [markdown]
# # Chapter 14 · Sparse matrix computation: COO, CSR, ELL, hybrid and JDS
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 14.
#
# **Before you start:** chapters 1–6 and 9 (atomic operations). **Time:** about 4 hours, reading and
# exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Store a sparse matrix four ways, **COO**, **CSR**, **ELL** and **JDS**, convert between them,
#   and say what each one costs in bytes for a given shape of matrix.
# - Write a **sparse matrix-vector product** (SpMV, `y = A·x`) for each format: one thread per
#   nonzero with atomic adds (COO), one thread per row (CSR), one thread per row over padded,
#   column-major slots (ELL), one thread per row with the rows sorted by length (JDS), a **warp
#   per row** with a shuffle reduction that is right at warp size 32 and 64 (CSR again), and
#   **hybrid ELL + COO** in one launch, with the ELL width chosen by your own function of the
#   row lengths; each checked against a float64 product within the error bound of a float32 sum.
# - Predict from a matrix's **row lengths** which format suits it (how much padding ELL adds,
#   how unevenly CSR's threads work), then check the prediction by measuring, and time your CSR
#   kernel (on a GPU) against the course's and NVIDIA's cuSPARSE.
#
# **Points:** 24 in all: Exercises 14.1, 14.3, 14.4, 14.5 and 14.6b 3 each, 14.2 3 + 2 for
# speed, 14.6a 2, and 2 for the written answer (graded by your instructor).
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32, uint64

ag.banner()
ch14 = ag.problems.ch14

# %% [markdown]
# ## The idea: store only the nonzeros
#
# A matrix is **sparse** when almost all of its elements are zero: the matrix of a finite-element
# mesh links each node to a handful of neighbours, the adjacency matrix of a web graph links each
# page to a few others among billions. Stored densely, a million × million matrix takes 4 TB of
# float32; with ten nonzeros a row it has ten million nonzeros, about 80 MB with their column
# indices. So a sparse format stores each nonzero's **value** and enough **indices** to know where
# it sits, and the kernels compute with nothing else (PMPP §14.1).
#
# SpMV, `y[i] = Σ_j A[i, j] · x[j]`, over the nonzeros of row `i` only, is the core of iterative
# solvers (conjugate gradient, GMRES) and of graph algorithms: it runs thousands of times per solve.
# Each nonzero is used once, for one multiply and one add, and needs its value and its column
# index from memory (8 bytes) plus `x[col]`: far fewer than the 10–20 FLOPs per byte a GPU needs
# to be compute-bound, so **SpMV is limited by memory**, and the format decides how well its
# accesses use it. Three formats (PMPP §14.2–14.4):
#
# - **COO** (coordinate): three arrays of `nnz` entries, `row[k]`, `col[k]`, `val[k]`, in any
#   order. Easy to build and to add to; every nonzero stands alone.
# - **CSR** (compressed sparse row): the nonzeros sorted by row, so `row` is not needed: the
#   `rows + 1` entries of `row_ptr` say where each row starts, row `i` being
#   `row_ptr[i] .. row_ptr[i + 1] − 1` of `col` and `val`. An **empty row** has
#   `row_ptr[i] == row_ptr[i + 1]`. In this chapter a column appears at most once in a row (no
#   duplicate entries: a duplicate would be a second nonzero at the same place), and the columns
#   of a row come in no particular order.
# - **ELL** (after ELLPACK): every row padded to the **longest** row's length `width`, stored as
#   two arrays of `rows × width` entries, **column-major**: slot `t` of row `i` is at
#   `t · rows + i`, so slot 0 of every row comes first, then slot 1 of every row, and so on. In this
#   chapter a padding slot holds column **−1** and value **0**, and `nnz_per_row[i]` says how many
#   of row `i`'s slots are real (PMPP's ELL keeps the same array).
#
# A fourth format, **JDS**, comes with Exercise 14.4. Here is a 5 × 6 matrix with an empty row
# (row 1) and a long row (row 2) in the first three:

# %%
small = ch14.small_example()
print("A =\n", small["dense"], "\n")
print("CSR  row_ptr =", small["row_ptr"].tolist())
print("     col     =", small["col"].tolist())
print("     val     =", small["val"].tolist(), "\n")
coo_row, coo_col, coo_val = ch14.csr_to_coo(small["row_ptr"], small["col"], small["val"])
print("COO  row =", coo_row.tolist(), "\n     col =", coo_col.tolist(), "\n     val =",
      coo_val.tolist(), "\n")
ell_col, ell_val, ell_len, width = ch14.csr_to_ell(small["row_ptr"], small["col"], small["val"])
print(f"ELL  width = {width}, nnz_per_row = {ell_len.tolist()}; slots as a width × rows table "
      "(slot t of row i at t * rows + i):")
print("     col =\n", ell_col.reshape(width, -1))
print("     val =\n", ell_val.reshape(width, -1))
print("\nx =", small["x"].tolist(), "  A @ x =", (small["dense"] @ small["x"]).tolist())

# %% [markdown]
# Count the bytes (4 per index or value): COO stores 12 per nonzero; CSR 8 per nonzero plus 4 per
# row; ELL 8 per **slot**, and it has `rows × width` slots: 20 slots for 9 nonzeros here, because
# one long row sets the width for all. How much padding ELL costs depends only on the **row
# lengths**, so the chapter's checks use three kinds of matrix (not square, so that the number of
# columns is not the number of rows):
#
# - **banded**: a few nonzeros on and around the diagonal, as a 1-D stencil or mesh gives: every
#   row about as long as the others;
# - **uniform**: random row lengths from 0 to 12, columns anywhere;
# - **power-law**: most rows short or empty, a few long, one much longer than the rest, as the
#   rows of a web or social graph are.
#
# The histograms show the row lengths of each kind for 2,000 rows (note the log scale):

# %%
ch14.plot_row_lengths(2000)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## The CPU baseline
#
# A compiled CSR loop on one core (`numba.njit`: for each row, add up `val[k] * x[col[k]]` over its
# nonzeros), and the same loop with the rows split over all cores (`numba.prange`), on the speed
# test's kind of matrix: 16 nonzeros a row on average (4 to 28). GB/s counts the bytes any CSR SpMV
# must move: `row_ptr`, `col` and `val` once, `x` and `y` once.

# %%
cpu_rows = (1 << 22) if ag.backend.is_gpu else (1 << 18)   # smaller without a GPU: slow machines
why = ag.timing.not_measured("Timing the CPU SpMV", gpu=False)
if why:
    print(why)
cpu_results = [] if why else ch14.time_cpu_spmv(cpu_rows)
for r in cpu_results:
    print(f"{r['label']:58s} {r['ms']:9.2f} ms {r['gbps']:7.2f} GB/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# ## Exercise 14.1 · SpMV in COO, one thread per nonzero (3 points)
#
# Write `spmv_coo_kernel(row, col, val, x, y)`: `row` and `col` are int32 device arrays of `nnz`
# entries, `val` float32 of `nnz`, `x` float32 of `cols` entries and `y` float32 of `rows`. Thread
# `k` takes nonzero `k` (if `k < nnz`: the last block is partial) and adds `val[k] · x[col[k]]`
# into `y[row[k]]`.
#
# Several threads add into the same `y[row[k]]` (one per nonzero of that row), in no order: a plain
# `y[r] += …` is a read, an add and a write, and two threads that interleave lose one addition
# (chapter 9). Use `cuda.atomic.add(y, r, value)`. **`y` starts at zero:** the check sets it to 0
# before it launches your kernel (`ch14.run_coo(kernel, row, col, val, x, y, blocks, threads)` does
# the same: zero, then launch), so empty rows need nothing from you. Roughly 4 lines.
#
# **What the check does.** Blocks of 64 threads (32, 64 or 128 in the hidden tests), `ceil(nnz /
# threads)` blocks; `y` filled with NaN and then set to 0 before the launch. The nonzeros come in a
# random order. Visible: 301 rows of uniform row lengths, 150 banded, 95 power-law, a single row;
# hidden: 7 rows, 1,208 rows (power-law, a row of 342 nonzeros), two random sizes. Each `y[i]` must
# be within the error bound of a float32 sum of row `i`'s products, in any order: `γ_(k+2) ·
# Σ|A[i, j] · x[j]|` with `γ_k = k·u / (1 − k·u)`, `u = 2⁻²⁴` and `k` the row's nonzeros. In CPU mode
# the race detector watches `y`: a plain `+=` fails every time, even when the simulator happens to
# get the right sum.

# %% nbgrader={"grade": false, "grade_id": "spmv_coo_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def spmv_coo_kernel(row, col, val, x, y):
    ### BEGIN SOLUTION
    k = cuda.grid(1)
    if k < val.size:
        cuda.atomic.add(y, row[k], val[k] * x[col[k]])
    ### END SOLUTION


# %% [markdown]
# Try it on the small matrix:

# %%
got, expected = ch14.check_small(spmv_coo_kernel, "coo")
print("yours:", got.tolist(), "\nA @ x:", expected.tolist())

# %% nbgrader={"grade": true, "grade_id": "spmv_coo_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch14.spmv_coo.check(spmv_coo_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch14.spmv_coo.check_hidden(spmv_coo_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: COO without atomics
#
# The kernel below adds with a plain `+=`. **Predict before you run:** launched directly on a
# power-law matrix, how many rows come out wrong? What does the course's check say?

# %%
@cuda.jit
def spmv_coo_no_atomics(row, col, val, x, y):
    k = cuda.grid(1)
    if k < val.size:
        y[row[k]] += val[k] * x[col[k]]       # read, add, write: another thread can come between


rows_break = (1 << 20) if ag.backend.is_gpu else 300
m = ch14.make_matrix(np.random.default_rng(4), rows_break, "power_law")
b_row, b_col, b_val = ch14.csr_to_coo(m["row_ptr"], m["col"], m["val"], np.random.default_rng(5))
b_x = np.random.default_rng(6).standard_normal(m["cols"]).astype(np.float32)
d_y = cuda.device_array(rows_break, np.float32)
ch14.run_coo(spmv_coo_no_atomics, cuda.to_device(b_row), cuda.to_device(b_col),
             cuda.to_device(b_val), cuda.to_device(b_x), d_y, -(-b_val.size // 256), 256)
y_exact, mag, count = ch14.spmv_host(b_row, b_col, b_val, b_x, rows_break)
bad = np.abs(d_y.copy_to_host() - y_exact) > ch14.row_tolerance(mag, count)
print(f"direct launch: {int(bad.sum())} of {rows_break} rows wrong "
      f"(the longest row has {int(count.max())} nonzeros)\n")
try:
    ch14.spmv_coo.check(spmv_coo_no_atomics)
except ag.CheckFailed as failure:
    print("the course's check:\n" + str(failure))

# %% [markdown]
# On a GPU, expect the long rows to come out wrong: their nonzeros are spread over many warps that
# add into the same `y[i]` at once. In CPU mode the simulator switches between threads rarely, so the direct
# launch is often right: a race that does not show is still a race. The check does not trust the
# sums; it records every access to `y` and stops at the first two threads that updated the same
# element with plain reads and writes, naming both.
#
# Atomics make COO correct, but they cost: every nonzero is one atomic on `y`, and the nonzeros of
# one row queue behind one another in the L2 cache. CSR removes them by giving each row to one
# thread.
#
# ## Exercise 14.2 · SpMV in CSR, one thread per row (3 points + 2 for speed)
#
# Write `spmv_csr_kernel(row_ptr, col, val, x, y)`: `row_ptr` is int32 of `rows + 1` entries,
# `col`, `val`, `x`, `y` as in 14.1. Thread `i` computes row `i` (if `i < rows`; take the number of
# rows from `y.size` or `row_ptr.size − 1`, never from `x.size`): the sum of `val[k] · x[col[k]]`
# over the row's nonzeros, in a local float32 variable, then **one store** `y[i] = sum`. No
# atomics: no other thread touches `y[i]`. An empty row stores 0. `y` is **not** zeroed for you
# this time: it is filled with NaN, and every row must be written. Roughly 7 lines.
#
# Which entries are row `i`'s? Read the definition of `row_ptr` above again: the first nonzero of
# row `i + 1` is where row `i` stops. (An off-by-one here is the classic CSR bug; the checks name
# the usual ones.)
#
# **What the check does.** As in 14.1 (same kinds and sizes), with `ceil(rows / threads)` blocks.
# **The speed test** (on a GPU) runs your kernel on 2²² rows with 2²⁶ nonzeros (16 a row on
# average, 4 to 28), `ceil(rows / 256)` blocks of 256 threads, against the course's CSR kernel
# (`ch14.reference_csr()`, the same algorithm) timed in the same run and the compiled CSR loop on
# one core of the host: you need at least 60% of the course's speed and 10× the CPU loop. Every
# timed call's `y` is checked at sampled rows. In CPU mode it says it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "spmv_csr_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def spmv_csr_kernel(row_ptr, col, val, x, y):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < y.size:
        acc = float32(0.0)
        for k in range(row_ptr[i], row_ptr[i + 1]):
            acc += val[k] * x[col[k]]
        y[i] = acc
    ### END SOLUTION


# %%
got, expected = ch14.check_small(spmv_csr_kernel, "csr")
print("yours:", got.tolist(), "\nA @ x:", expected.tolist())

# %% nbgrader={"grade": true, "grade_id": "spmv_csr_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch14.spmv_csr.check(spmv_csr_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch14.spmv_csr.check_hidden(spmv_csr_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "spmv_csr_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch14.spmv_csr.check_speed(spmv_csr_kernel)

# %% [markdown]
# Look at what a warp of your CSR kernel reads at its first step: 32 threads, 32 rows, each reading
# `col[row_ptr[i]]`: 32 addresses a row's length apart (16 entries, 64 bytes, on average in the
# speed test's matrix), so one 32-byte sector per thread where a coalesced read would share four
# sectors among all 32. And the warp runs as long as
# its **longest** row: on a power-law matrix, 31 threads wait while one adds up a long row (control
# divergence, chapter 4). ELL fixes the first problem by its layout, at the price of padding;
# Exercise 14.5 attacks both by giving each row a **warp** (lanes read consecutive nonzeros, a
# shuffle tree adds them), which pays off for long rows and wastes lanes on short ones.
#
# ## Exercise 14.3 · SpMV in ELL, column-major (3 points)
#
# Write `spmv_ell_kernel(col, val, nnz_per_row, x, y)`: `col` (int32) and `val` (float32) hold
# `rows × width` slots, column-major, slot `t` of row `i` at `t · rows + i` (padding: column −1,
# value 0); `nnz_per_row` (int32, `rows` entries) is each row's count of real slots; `rows` is
# `y.size` and `width` is `col.size // rows`. Thread `i` computes row `i` as in CSR, over its real
# slots: stop at `nnz_per_row[i]` (PMPP's way), or go over all `width` slots and skip those whose
# column is −1 (never use −1 as an index: Numba, like Python, reads `x[−1]` as the last element of
# `x`, a value that has nothing to do with the row). Roughly 8 lines.
#
# Now look at a warp's reads: at step `t`, threads `i, i + 1, …, i + 31` read slots `t · rows + i
# … t · rows + i + 31`, **consecutive addresses**: every load of `col` and `val` is coalesced,
# which is the whole point of storing ELL column-major (PMPP §14.4).
#
# **What the check does.** As in 14.2 (same kinds and sizes), the matrices converted with
# `ch14.csr_to_ell`. The verdict names a row-major read (`i · width + t`), the usual slip.

# %% nbgrader={"grade": false, "grade_id": "spmv_ell_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def spmv_ell_kernel(col, val, nnz_per_row, x, y):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    rows = y.size
    if i < rows:
        acc = float32(0.0)
        for t in range(nnz_per_row[i]):
            k = t * rows + i                  # column-major: slot t of row i
            acc += val[k] * x[col[k]]
        y[i] = acc
    ### END SOLUTION


# %%
got, expected = ch14.check_small(spmv_ell_kernel, "ell")
print("yours:", got.tolist(), "\nA @ x:", expected.tolist())

# %% nbgrader={"grade": true, "grade_id": "spmv_ell_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch14.spmv_ell.check(spmv_ell_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch14.spmv_ell.check_hidden(spmv_ell_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 14.4 · SpMV in JDS, rows sorted by length (3 points)
#
# ELL's coalesced reads cost padding; CSR has no padding but a warp waits for its longest row.
# **JDS** (jagged diagonal storage, PMPP §14.6) keeps ELL's layout without the padding:
#
# 1. sort the rows by length, **longest first** (stably: rows of equal length keep their order);
#    `perm[i]` is the matrix row of sorted row `i`;
# 2. store slot 0 of every sorted row, then slot 1 of every sorted row **that has one**, and so
#    on: since the rows are sorted, the rows that have a slot `t` are sorted rows `0, 1, …`, a
#    prefix that shrinks as `t` grows. Section `t` starts at `t_ptr[t]` (`width + 1` entries, the
#    last one `nnz`), and slot `t` of sorted row `i` is at `t_ptr[t] + i`, as long as that is
#    below `t_ptr[t + 1]`.
#
# Neighbouring threads now get rows of about the same length, so a warp's threads finish at
# about the same time, and a warp's reads at each step are consecutive addresses, as in ELL. The
# small matrix in JDS:

# %%
perm, t_ptr, jds_col, jds_val = ch14.csr_to_jds(small["row_ptr"], small["col"], small["val"])
print("perm   =", perm.tolist(), "  (matrix row of each sorted row)")
print("t_ptr  =", t_ptr.tolist())
print("col    =", jds_col.tolist())
print("val    =", jds_val.tolist())

# %% [markdown]
# Write `spmv_jds_kernel(perm, t_ptr, col, val, x, y)`: `perm` (int32, `rows` entries), `t_ptr`
# (int32, `width + 1`), `col` and `val` (`nnz` each), `x` and `y` as before. Thread `i` takes
# sorted row `i` (if `i < rows`), adds up its slots `t = 0, 1, …` while slot `t` exists, and stores
# the sum where that row belongs in `y`: which element is it? An empty row has no slot at all and
# still stores 0. Roughly 10 lines.
#
# **What the check does.** As in 14.2 (same kinds and sizes), the matrices converted with
# `ch14.csr_to_jds`. The verdict names a sum stored at the sorted row's index, and sections read
# as if every one were `rows` long (ELL's `t · rows + i`).

# %% nbgrader={"grade": false, "grade_id": "spmv_jds_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def spmv_jds_kernel(perm, t_ptr, col, val, x, y):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < perm.size:
        acc = float32(0.0)
        t = 0
        while t < t_ptr.size - 1 and t_ptr[t] + i < t_ptr[t + 1]:
            k = t_ptr[t] + i                  # slot t of sorted row i
            acc += val[k] * x[col[k]]
            t += 1
        y[perm[i]] = acc                      # sorted row i is matrix row perm[i]
    ### END SOLUTION


# %%
got, expected = ch14.check_small(spmv_jds_kernel, "jds")
print("yours:", got.tolist(), "\nA @ x:", expected.tolist())

# %% nbgrader={"grade": true, "grade_id": "spmv_jds_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch14.spmv_jds.check(spmv_jds_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch14.spmv_jds.check_hidden(spmv_jds_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Predict, then measure: which format for which matrix?
#
# The storage of each format follows from three numbers of a matrix: its rows, its nonzeros and
# its longest row. **Predict before you run the next cell**, for the three kinds of matrix with
# 2,000 rows (the histograms above show their row lengths):
#
# 1. For each kind, how many ELL slots per nonzero (ELL's slots over `nnz`)? Which kind makes ELL
#    larger than COO?
# 2. CSR against COO: by how much is CSR smaller, and does that depend on the kind? And JDS
#    against CSR?
# 3. For your CSR kernel, which kind makes a warp wait longest for its slowest thread?
#
# Then run it. It prints, for each kind: rows, nonzeros, the longest row, the bytes each format
# stores, and ELL's slots per nonzero.

# %%
table = ch14.storage_table(2000)
print(f"{'matrix':28s} {'rows':>6s} {'nnz':>7s} {'longest':>8s} {'COO B':>9s} {'CSR B':>9s} "
      f"{'ELL B':>10s} {'JDS B':>9s} {'ELL slots/nnz':>14s}")
for r in table:
    print(f"{r['kind']:28s} {r['rows']:6d} {r['nnz']:7d} {r['width']:8d} {r['coo']:9d} "
          f"{r['csr']:9d} {r['ell']:10d} {r['jds']:9d} {r['ell_slots_per_nonzero']:14.2f}")

# %% [markdown]
# ## Exercise 14.5 · CSR with a warp per row, for any warp size (3 points)
#
# Exercise 14.2's warp reads 32 rows at once, a row's length apart, and waits for its longest row.
# PMPP's **vector CSR** kernel (Bell and Garland's "CSR (vector)") gives each row a whole **warp**
# instead:
#
# 1. warp `i = cuda.grid(1) // cuda.warpsize` takes row `i`; its lane is
#    `cuda.threadIdx.x % cuda.warpsize`;
# 2. the lanes **stride** over the row: lane `l` adds up nonzeros `row_ptr[i] + l`,
#    `row_ptr[i] + l + warpsize`, … while they are below `row_ptr[i + 1]`, so at each step the warp
#    reads `warpsize` **consecutive** entries of `col` and `val` (coalesced), and a row of 100
#    nonzeros takes 4 steps at warp size 32 instead of 100;
# 3. a **shuffle reduction** adds the lanes' partial sums (chapter 10's warp sum:
#    `acc += cuda.shfl_down_sync(mask, acc, offset)` for `offset = warpsize // 2, …, 2, 1`), and
#    **lane 0** stores `y[i]`.
#
# Chapter 10's three rules for a shuffle hold here. The mask names the **whole warp** and is built
# from the warp size, `~uint64(0) >> (64 - cuda.warpsize)`: not a literal `0xffffffff` (32 lanes
# only, and an AMD wavefront has 64), and not `cuda.activemask()`, which names only the lanes that
# happen to run together where it is called. **Every lane calls every shuffle**: an empty row's
# lanes take part with 0, and so do the lanes of a warp past the last row (keep the row's loop and
# the store inside `if i < y.size:`, the shuffles outside it). No literal 32 anywhere: the same
# kernel must be right with warps of 32 and of 64 lanes. Roughly 12 lines.
#
# **How the check launches it.** `ceil(rows · warpsize / threads)` blocks of 128 threads (hidden:
# 64, 128 or 256), always whole warps at both warp sizes; the row counts are odd, so the last block
# holds fewer rows than it has warps. **What the check does.** As in 14.2, each `y[i]` within the
# error bound of a float32 sum of row `i`'s products (a shuffle tree is one more order of adding
# them). Visible, at this machine's warp size: 29 rows (power-law, empty rows and a row of 43
# nonzeros, longer than a warp of 32), 25 (uniform), 1. **The hidden tests run your kernel at warp
# sizes 64 and 32 in turn** wherever they run in CPU mode: 101 power-law rows at 64 (a row of 65),
# 125 at 32 (a row of 71: two whole rounds of a warp and a tail), 7 rows and two random sizes; on
# a GPU, which has one warp size, the grader runs them again in CPU mode at the other. CPU mode stops a shuffle whose mask leaves out a lane that calls it, or
# that reads a lane outside a mask from `cuda.activemask()`, and names the lanes.

# %% nbgrader={"grade": false, "grade_id": "spmv_csr_vector_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def spmv_csr_vector_kernel(row_ptr, col, val, x, y):
    ### BEGIN SOLUTION
    mask = ~uint64(0) >> (64 - cuda.warpsize)     # every lane of the warp: 32 or 64 one-bits
    lane = cuda.threadIdx.x % cuda.warpsize
    i = cuda.grid(1) // cuda.warpsize             # this warp's row
    acc = float32(0.0)
    if i < y.size:
        for k in range(row_ptr[i] + lane, row_ptr[i + 1], cuda.warpsize):
            acc += val[k] * x[col[k]]
    offset = cuda.warpsize // 2
    while offset > 0:                             # every lane, past the last row too
        acc += cuda.shfl_down_sync(mask, acc, offset)
        offset //= 2
    if lane == 0 and i < y.size:
        y[i] = acc
    ### END SOLUTION


# %% [markdown]
# Try it on the small matrix (one warp per row); in CPU mode, also at warp size 64
# (`ag.cpu_mode.warp_size_as(64)` runs the launches inside it with wavefronts of 64 lanes):

# %%
got, expected = ch14.check_small(spmv_csr_vector_kernel, "csr_vector")
print("yours:", got.tolist(), "\nA @ x:", expected.tolist())
if not ag.backend.is_gpu:
    with ag.cpu_mode.warp_size_as(64):
        got64, _ = ch14.check_small(spmv_csr_vector_kernel, "csr_vector")
    print("at warp size 64:", got64.tolist())

# %% nbgrader={"grade": true, "grade_id": "spmv_csr_vector_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch14.spmv_csr_vector.check(spmv_csr_vector_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch14.spmv_csr_vector.check_hidden(spmv_csr_vector_kernel)
### END HIDDEN TESTS

# %% [markdown]
# **When does a warp per row win?** It launches `warpsize` threads per row, so it pays off only
# where a row has enough nonzeros to keep the lanes busy. On an NVIDIA H200, with 2²² rows (the
# course's runs of `ch14.measure`; your GPU's are in the measuring cell below):
#
# | matrix (2²² rows) | thread per row (14.2) | warp per row (14.5) | cuSPARSE |
# |---|---|---|---|
# | speed test's: 16 nonzeros a row on average, 4 to 28 | 0.956 ms | 0.976 ms | 0.517 ms |
# | banded, up to 5 a row | 0.072 ms | 0.969 ms | 0.092 ms |
# | uniform, 0 to 12 a row | 0.260 ms | 0.941 ms | 0.226 ms |
# | power-law (longest row limited to 16 there) | 0.138 ms | 0.847 ms | 0.137 ms |
#
# The warp-per-row kernel takes about the same time whatever the matrix: 2²⁷ threads, and a warp
# per row whose lanes are mostly idle when the rows are short. On the banded matrix 27 of 32 lanes
# have nothing to read and it is 13 times slower than a thread per row. At 16 nonzeros a row the
# two break even: half of each warp is idle, but its reads are coalesced where the thread-per-row
# kernel's are a row apart. With rows longer than a warp (hundreds of nonzeros, as in many
# finite-element and graph matrices) every lane works and the reads stay coalesced: that is where
# a warp per row wins, and where one long row no longer holds up 31 threads of a warp. None of the
# four matrices above has such rows: a prediction of these measurements, not a result of them.
# cuSPARSE chooses its algorithm from the matrix and is never far from the better of the two.
#
# ## Exercise 14.6 · Hybrid ELL + COO (2 + 3 points)
#
# ELL pads every row to the **longest** one: the storage table above gave the power-law matrix,
# with one row of 540 nonzeros, about a hundred ELL slots per nonzero. **Hybrid ELL + COO** (PMPP §14.5) caps the ELL part
# at a width `K` of your choosing: row `i` keeps its first `min(len_i, K)` nonzeros in ELL
# (column-major, as in 14.3, `ell_len[i]` of them real), and its other `len_i − K` nonzeros, if
# any, go to a **COO** part (`coo_row`, `coo_col`, `coo_val`, in any order). A few long rows then
# cost a few COO entries instead of padding for every row.
#
# ### 14.6a · Choosing K (2 points)
#
# How large should `K` be? Each ELL slot is read by every row's thread, used or not; a COO nonzero
# costs more than a slot: its row index, a read of `x` and an **atomic add** into `y`, none of them
# coalesced. Bell and Garland (SC 2009) measured COO at about **three times** the cost of ELL per
# entry, which gives the cost of a hybrid SpMV with width `K`, in ELL slots:
#
# `cost(K) = rows · K + 3 · Σᵢ max(len_i − K, 0)`
#
# (`ch14.hybrid_cost(lengths, K)` computes it). Write `hybrid_width(lengths)`: given the row
# lengths (an int32 NumPy array, one entry per row), return a `K` with the **lowest cost**, a
# Python or NumPy integer from 0 to the longest row. Do not try every `K`: think about what slot
# `K` costs (one per row) and what it saves (3 for each row that has `K` nonzeros or more), and
# stop adding slots when it no longer pays. Roughly 6 lines of plain Python and NumPy (no kernel).
#
# **What the check does.** Your function is called on the row lengths of the chapter's matrices,
# with 2,000 rows of each kind, 2 rows and 1 (hidden: 8,003 power-law rows, 3 rows, two random
# sizes), and your `K`'s cost must equal the lowest (when two widths tie, either is right). The
# verdict says what your `K` costs against the best, and why.

# %% nbgrader={"grade": false, "grade_id": "hybrid_width_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def hybrid_width(lengths):
    ### BEGIN SOLUTION
    rows = lengths.size
    k = 0
    # slot k + 1 costs `rows` and saves 3 for each row with k + 1 nonzeros or more
    while 3 * np.count_nonzero(lengths >= k + 1) > rows:
        k += 1
    return k
    ### END SOLUTION


# %%
for r in ch14.width_table(hybrid_width):
    print(f"{r['kind']:28s} longest {r['longest']:4d}, your K = {r['width']:2d}: cost "
          f"{r['cost']:9,d} (plain ELL {r['ell_cost']:9,d}); {r['hybrid']:9,d} B (ELL "
          f"{r['ell']:9,d} B, CSR {r['csr']:7,d} B); {100 * r['coo_share']:4.1f}% of the nonzeros "
          "in COO")

# %% nbgrader={"grade": true, "grade_id": "hybrid_width_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch14.hybrid_width.check(hybrid_width)
### BEGIN HIDDEN TESTS
ag.problems.ch14.hybrid_width.check_hidden(hybrid_width)
### END HIDDEN TESTS

# %% [markdown]
# On the power-law matrix the best `K` is small (a third of the rows have 3 nonzeros or more) and
# most nonzeros land in COO, yet the hybrid costs a fraction of plain ELL, whose 540 slots per row
# are almost all padding. Its bytes are still above CSR's: what the hybrid buys is not storage but
# ELL's coalesced, evenly shared reads for the regular part of every row.
#
# ### 14.6b · Both parts in one launch (3 points)
#
# Write `spmv_hybrid_kernel(ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y)`, launched
# with one thread per row **and** one per COO nonzero: `rows = y.size`, the ELL width is
# `ell_col.size // rows` (it may be 0: no ELL slots at all), and `coo_val.size` may be 0 too.
# Thread `t < rows` adds up row `t`'s ELL slots (as in 14.3); thread `t ≥ rows` takes COO nonzero
# `k = t − rows`, if `k < coo_val.size`, and adds its product into `y[coo_row[k]]`. `y` starts at
# zero (the check sets it, as in 14.1; `ch14.run_hybrid` launches the same way).
#
# **Think before you write the ELL thread's last line.** A row longer than `K` gets its ELL sum
# from thread `t` and its other products from COO threads, in the same launch, in no order. What
# happens to a COO thread's atomic add if thread `t` then **stores** its sum with `y[t] = acc`?
# Which rows can safely be stored, and how does thread `t` know? Roughly 14 lines.
#
# **What the check does.** As in 14.1 (the same kinds and sizes, nonzeros in COO in a random
# order), with the matrices split at the best `K` (your `hybrid_width` is not used here);
# `ceil((rows + COO nonzeros) / threads)` blocks of 64 threads (hidden: 32, 64 or 128); the hidden
# tests include a matrix all in COO (`K = 0`) and one all in ELL (no COO nonzero). In CPU mode the
# race detector watches `y`: a store and an atomic add on the same element in one launch fail
# every time.

# %% nbgrader={"grade": false, "grade_id": "spmv_hybrid_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def spmv_hybrid_kernel(ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y):
    ### BEGIN SOLUTION
    t = cuda.grid(1)
    rows = y.size
    if t < rows:
        acc = float32(0.0)
        for s in range(ell_len[t]):
            k = s * rows + t                      # column-major, as in ELL
            acc += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, t, acc)                # COO threads may add into this row too
    elif t - rows < coo_val.size:
        k = t - rows
        cuda.atomic.add(y, coo_row[k], coo_val[k] * x[coo_col[k]])
    ### END SOLUTION


# %%
got, expected = ch14.check_small(spmv_hybrid_kernel, "hybrid")
print("yours:", got.tolist(), "\nA @ x:", expected.tolist())

# %% nbgrader={"grade": true, "grade_id": "spmv_hybrid_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch14.spmv_hybrid.check(spmv_hybrid_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch14.spmv_hybrid.check_hidden(spmv_hybrid_kernel)
### END HIDDEN TESTS

# %% [markdown]
# What the table does not show is time, and time is what the bytes are for: on a GPU, the next cell
# runs the course's COO, CSR (a thread per row, and a warp per row), ELL, hybrid and JDS kernels
# and your six on the speed test's matrix and on the three kinds, each with 2²² rows (the power-law
# matrix's longest row is limited to 16 there, so that its ELL arrays fit in memory), beside
# cuSPARSE (`cupyx.scipy.sparse`, where CuPy is installed). GB/s counts the bytes each format
# stores plus `x` and `y` once. In CPU mode it says that it needs a GPU (the simulator's times say
# nothing about one) and draws what the course's kernels took on an H200 instead.

# %%
mine = {"COO (yours)": ("coo", spmv_coo_kernel), "CSR (yours)": ("csr", spmv_csr_kernel),
        "ELL (yours)": ("ell", spmv_ell_kernel), "JDS (yours)": ("jds", spmv_jds_kernel),
        "CSR, a warp per row (yours)": ("csr_vector", spmv_csr_vector_kernel),
        "hybrid ELL + COO (yours)": ("hybrid", spmv_hybrid_kernel)}
try:
    results = ch14.measure(mine)
    for r in results:
        print(f"{r['matrix']:28s} {r['label']:40s} {r['ms']:8.3f} ms {r['gbps']:7.0f} GB/s"
              f"{'' if r['right'] else '   WRONG'}")
    for r in cpu_results:
        print(f"CPU: {r['label'][:52]:52s} {r['gbps']:8.2f} GB/s (measured above, "
              f"{cpu_rows:,} rows)")
    ag.experiments.steps(**ch14.chart(results)).show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels on the speed test's matrix "
          "(bars), cuSPARSE (the line):")
    ag.experiments.steps(**ch14.chart()).show()

# %% [markdown]
# ## Explain: the format follows the row lengths (2 points, graded by your instructor)
#
# In the cell below, in 5 to 10 sentences, with numbers from the storage table (and, if you ran on
# a GPU, your measured times):
#
# 1. say what you predicted for each kind of matrix and where the table proved you wrong;
# 2. explain, with the table's numbers, why ELL's padding overhead is `rows × width` slots against
#    `nnz` nonzeros, and what property of the row lengths (their spread, above all the longest row)
#    decides it; name the kind for which ELL is the best choice and the one for which it is the
#    worst;
# 3. say which format you would pick for a power-law matrix, and why, mentioning what CSR's
#    one-thread-per-row kernel does with its longest row, what JDS changes about it (and what it
#    does not), what your hybrid ELL + COO (Exercise 14.6) costs against plain ELL (the numbers
#    your `hybrid_width` table printed), and for which row lengths a warp per row (Exercise 14.5)
#    helps and for which it hurts (the H200 table under Exercise 14.5, or your own times).
#
# A full-mark answer puts a number on every claim and keeps what was measured apart from what was
# predicted.

# %% [markdown] nbgrader={"grade": true, "grade_id": "sparse_formats_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the storage figures are those of the table for 2,000 rows,
# seed 14; GPU times are the learner's own).* (1, 2) ELL stores `rows × width` slots of 8 bytes
# whatever the rows hold, so its overhead is the ratio of the longest row to the mean row:
# the banded matrix (8,400 nonzeros, longest row 5, mean 4.2) has 1.19 slots per nonzero and ELL
# takes 88,000 B against CSR's 75,204 B and COO's 100,800 B, so ELL is smaller than COO there and
# its coalesced reads make it the natural choice; uniform row lengths 0–12 (11,992 nonzeros,
# longest 12, mean 6) give 2.0 slots per nonzero, 200,000 B, already twice CSR; the power-law
# matrix (10,520 nonzeros, one row of 540) needs 1,080,000 slots, 102.7 per nonzero, 8,648,000 B,
# 94 times CSR's 92,164 B: one long row decides the width for every row. The spread of the row
# lengths, above all the longest row against the mean, decides ELL; the number of nonzeros alone
# does not. (CSR against COO: CSR saves the 4-byte row index per nonzero and adds 4 bytes per row,
# 25–28% less here whatever the kind.) (3) For a power-law matrix I would use CSR (or hybrid ELL +
# COO): CSR stores no padding, but with a thread per row the warp holding the 540-nonzero row runs
# 540 steps while its other 31 threads, whose rows have a few nonzeros, wait. JDS (94,324 B, about
# CSR's size) puts rows of similar length in the same warp, so the short rows no longer wait for
# the long one, but the thread of the 540-nonzero row still makes 540 steps alone: the kernel
# still lasts as long as its longest row. Hybrid ELL + COO spreads that row over many threads:
# with K = 3 (a third of the rows have 3 nonzeros or more), 72% of the nonzeros go to COO and the
# cost model gives 28,641 slots against plain ELL's 1,080,000, 38 times less, though its 146,564 B
# are still above CSR's 92,164 B. A warp per row would read the 540-nonzero row in 17 steps of 32
# coalesced entries instead of 540, but it gives every row a warp: on the H200, 0.847 ms against
# 0.138 ms for a thread per row on the power-law matrix of 2²² rows (rows of 16 at most there),
# 0.969 against 0.072 ms on the banded one (27 of 32 lanes idle), even at 16 nonzeros a row (0.976
# against 0.956 ms); it pays off only for rows longer than a warp, so for a power-law matrix it
# belongs to the few long rows, not to all of them. On a GPU I
# would expect ELL to be slower than CSR on the power-law matrix roughly in proportion to the bytes
# (5 slots per nonzero at 2²² rows, where the longest row is limited to 16): a prediction, to be
# checked against the measured times.

# %% [markdown]
# ## Going further (not graded)
#
# - Write the conversion from CSR to JDS yourself (a stable sort of the rows by length, then each
#   nonzero's place `t_ptr[t] + i`) and compare it with `ch14.csr_to_jds`.
# - Give the long rows a warp and the short ones a thread: sort the rows into two lists by
#   length (longer than a warp or not) and launch your 14.2 kernel on one and your 14.5 kernel on
#   the other (Greathouse and Daga's CSR-Adaptive, SC 2014, does this per block). On a power-law
#   matrix with long rows, does it beat both?
# - If a COO nonzero cost 2 ELL slots instead of 3, which `K` would be best for each kind? On a
#   GPU, time your hybrid kernel at a few widths (`ch14.csr_to_hybrid(row_ptr, col, val, K)` builds
#   the parts, `ch14.run_hybrid` launches) and estimate the ratio on your GPU.
#
# **Reading:** PMPP ch. 14: §14.1 (background), §14.2 (a simple SpMV kernel with COO), §14.3
# (grouping row nonzeros with CSR), §14.4 (improving memory coalescing with ELL), §14.5 (regulating
# padding with hybrid ELL-COO), §14.6 (reducing control divergence with JDS), §14.7 (summary).
# Bell and Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
# processors" (SC 2009), the study behind these formats on GPUs; the cuSPARSE documentation for
# the formats NVIDIA's library takes (CSR, COO, blocked ELL, SELL).
#
# **On AMD (HIP):** a wavefront has 64 lanes on the MI200 and MI300 series, so Exercise 14.5's
# kernel, written with `cuda.warpsize` and a mask built from it, runs there unchanged with 64 lanes
# to fill (and wastes more of them on short rows); the one-thread-per-row kernels of this chapter
# run unchanged too. rocSPARSE plays cuSPARSE's part. numba-hip keeps the same
# `cuda.atomic.add` on float32.
