# %% [markdown]
# # Chapter 18 · Electrostatic potential map: direct Coulomb summation, coarsened and cut off
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 18.
#
# **Before you start:** chapters 1–6 and 9 (atomic operations; chapter 6's coarsening and
# coalescing above all). **Time:** about 4 hours, reading and exercises included (more in CPU
# mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Compute the **electrostatic potential** of a few thousand charged atoms on every point of a
#   slice of a grid, by **direct Coulomb summation**, in the two shapes a GPU kernel can take:
#   **scatter** (a thread per atom, atomic adds into every point) and **gather** (a thread per
#   point, a private sum, one store), and say why gather wins.
# - **Coarsen** the gather kernel so that each thread computes several points of a row and reuses
#   the part of each distance they share, with its points laid out so that the **stores
#   coalesce**, and check the layout, not only the values.
# - Sum only the atoms within a **cutoff** radius, found through **spatial bins** sorted on the
#   host, predict the work it saves, and measure what it costs in accuracy.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import math

import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32

ag.banner()
ch18 = ag.problems.ch18

# %% [markdown]
# ## The idea: every atom talks to every grid point
#
# Molecular dynamics and visualisation programs (VMD, which PMPP's chapter comes from) need the
# **electrostatic potential** that a molecule's atoms create around it, sampled on a regular grid
# of points: ions are placed where it is low, and pictures of a protein are coloured by it. An
# atom `a` at `(x_a, y_a, z_a)` with charge `q_a` adds `q_a / r` at a point a distance `r` away
# (in units where Coulomb's constant is 1), so the potential at a point is a sum over all atoms
# (PMPP §18.1):
#
# ```
# V[j, i] = Σ over atoms a of  q_a / √((x_i − x_a)² + (y_j − y_a)² + (z − z_a)²)
# ```
#
# Here the grid is one **slice**: `ny` rows by `nx` columns of points, a spacing `h` apart, in the
# plane at height `z`. Point `(j, i)`, row `j` and column `i`, sits at `(i·h, j·h, z)`: **column
# `i` goes with x, row `j` with y**. The atoms are a float32 array `atoms[A, 4]`, one row
# `(x, y, z, q)` per atom. Every atom is at least 0.75 spacings above or below the plane, so no
# distance is ever close to zero. A full 3-D map is one slice after another.
#
# This is **direct Coulomb summation** (DCS): `ny · nx · A` atom-point pairs, each a few
# subtractions and multiplications, a square root and a division. A slice of 1024 × 1024 points and
# 10,000 atoms is 10¹⁰ pairs; nothing is reused between pairs but the inputs, so the work is pure
# arithmetic and the question is how few instructions each pair costs.
#
# A small slice to look at: 6 rows by 10 columns, 8 atoms, h = 0.5. Positive charges are red,
# negative blue; the potential is high near the positive ones.

# %%
small = ch18.small_slice()
fig, ax = plt.subplots(figsize=(6, 3.4))
ny, nx = small["V"].shape
half = float(small["h"]) / 2                # each point is the centre of an h × h pixel
im = ax.imshow(small["V"], origin="lower", cmap="coolwarm",
               extent=(-half, (nx - 1) * 2 * half + half, -half, (ny - 1) * 2 * half + half))
a = small["atoms"]
ax.scatter(a[:, 0], a[:, 1], c=np.where(a[:, 3] > 0, "red", "blue"), s=60 * np.abs(a[:, 3]),
           edgecolors="black")
ax.set_xlabel("x (column i · h)")
ax.set_ylabel("y (row j · h)")
ax.set_title("V on a 6 × 10 slice, and the 8 atoms seen from above", fontsize=9)
fig.colorbar(im, ax=ax)
plt.show()
print("V[0, :4] =", small["V"][0, :4])

# %% [markdown]
# ## The CPU baseline
#
# Three ways on the host, timed on a slice of 64 × 64 points and 1,000 atoms (4.1 million
# pairs): the loops over points and atoms compiled with `numba.njit` on one core; the same loops
# with the rows spread over all cores (`numba.prange`); and NumPy, which broadcasts 256 atoms at a
# time against the whole slice. GFLOP/s counts 11 floating-point operations per pair: 3
# subtractions, 3 multiplications and 2 additions for r², one square root, one division, and the
# addition into the sum (the square root and the division each counted as one operation, though a
# GPU spends several instructions on each).

# %%
why = ag.timing.not_measured("Timing the CPU potential", gpu=False)
if why:
    print(why)
cpu_results = [] if why else ch18.time_cpu_potential()
for r in cpu_results:
    print(f"{r['label']:50s} {r['ms']:9.2f} ms {r['gflops']:8.2f} GFLOP/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# ## Scatter or gather
#
# There are two ways to give the pairs to threads (PMPP §18.2):
#
# - **scatter**: one thread per **atom**, which walks over every grid point and adds its
#   contribution there. Simple, and each thread reads its atom once, but every grid point is
#   updated by **every** thread: the adds must be atomic (chapter 9), and `ny · nx · A` atomic
#   adds to global memory are slow;
# - **gather**: one thread per **grid point**, which walks over every atom, keeps its sum in a
#   register and stores it once. Every thread reads every atom (the same atom at the same time in
#   all threads of a warp: one load serves them all), and no two threads write the same place.
#
# Here is the scatter form, with the atomic add:

# %%
@cuda.jit
def dcs_scatter(atoms, V, h, z):
    a = cuda.grid(1)                         # one thread per atom
    if a < atoms.shape[0]:
        for j in range(V.shape[0]):
            for i in range(V.shape[1]):
                dx = float32(i) * h - atoms[a, 0]
                dy = float32(j) * h - atoms[a, 1]
                dz = z - atoms[a, 2]
                cuda.atomic.add(V, (j, i), atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz))


s = ch18.run_scatter(dcs_scatter)
print("scatter with atomics, right everywhere:", s["right"], "  V[0, :4] =", s["got"][0, :4])

# %% [markdown]
# ## Break it: scatter without atomics
#
# The same kernel with `V[j, i] += ...` instead of the atomic add. **Predict before you run:**
# which threads update `V[0, 0]`, and what happens when two of them read it before either writes?
# On a GPU, which answer do you expect; in CPU mode, what does the course's launch say?

# %%
@cuda.jit
def dcs_scatter_no_atomics(atoms, V, h, z):
    a = cuda.grid(1)
    if a < atoms.shape[0]:
        for j in range(V.shape[0]):
            for i in range(V.shape[1]):
                dx = float32(i) * h - atoms[a, 0]
                dy = float32(j) * h - atoms[a, 1]
                dz = z - atoms[a, 2]
                V[j, i] += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)   # read, add, write


try:
    s = ch18.run_scatter(dcs_scatter_no_atomics)
    print("without atomics, right everywhere:", s["right"])
except Exception as race:                     # CPU mode: the race detector stops the launch
    print(f"{type(race).__name__}: {race}")

# %% [markdown]
# Every thread updates every point, so every point is a race between all the threads: on a GPU
# the result loses most contributions, differently from run to run. In CPU mode the simulator runs
# threads one at a time for long stretches, so the sums would often come out right by luck; the
# course's run records every access to `V` instead, and stops at the first point that two threads
# of different blocks updated with plain reads and writes, naming both threads and the line. The
# atomic add fixes the values but not the speed: the scatter form does `ny · nx · A` atomic
# read-modify-writes in the L2 cache, where the gather form keeps each sum in a register. The
# measuring cell below times both.
#
# ## Exercise 18.1 · Gather: a thread per grid point (3 points + 2 for speed)
#
# Write `dcs_gather_kernel(atoms, V, h, z)`: `atoms` float32 `[A, 4]` (x, y, z, q per row), `V`
# float32 `[ny, nx]`, `h` and `z` float32 scalars. A 2-D grid of 2-D blocks, as in chapter 3:
# `i = blockIdx.x · blockDim.x + threadIdx.x` is the **column** (x), `j` from y the **row**.
# Each thread with `j < ny` and `i < nx` computes its point's position, loops over every atom,
# adds `q / r` into a float32 local variable, and stores it once into `V[j, i]` (PMPP §18.2).
# Roughly 12 lines.
#
# **Stay in float32.** In Numba an integer times a float32 is a float64 (`i * h` would make the
# whole sum double precision: right, but not the kernel this chapter measures). Write
# `float32(i) * h`, and start the sum from `float32(0.0)`.
#
# **What the check does.** Blocks of 8 × 4 threads (16 × 2 and 4 × 4 in the hidden tests), `V`
# filled with NaN. Visible: a 9 × 21 slice with 13 atoms (partial blocks both ways), a single row
# of 30 points and 7 atoms, and one atom over a 5 × 6 slice; hidden: 12 × 37 with 40 atoms, a
# single column, two random shapes. Each point must be within the error bound of a float32 sum:
# `(γ_A + 8u) · Σ|q|/r` for the A roundings of the sum and the few of each term (`u = 2⁻²⁴`,
# `γ_A = A·u / (1 − A·u)`), plus the rounding of the coordinates themselves (`float32(i) · h` and
# `x − x_a` are rounded relative to the coordinates, not to their difference), about
# `4u · Σ |q| · (|x| + |x_a| + …) / r²`. A float64 sum passes; one atom left out does not.
# **The speed test** (on a GPU) runs a 1024 × 1024 slice with 10,000 atoms (1.05 · 10¹⁰ pairs)
# with blocks of 32 × 8, against the course's kernel (the same algorithm) timed in the same run
# and the parallel `numba.njit` loops on the host: you need at least 50% of the course's speed
# and 10 times the host's. Every timed call's `V` is checked at sampled points. In CPU mode it
# says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "dcs_gather_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def dcs_gather_kernel(atoms, V, h, z):
    ### BEGIN SOLUTION
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0] and i < V.shape[1]:
        x = float32(i) * h
        y = float32(j) * h
        acc = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = x - atoms[a, 0]
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
        V[j, i] = acc
    ### END SOLUTION


# %% [markdown]
# Try it on the small slice:

# %%
d_V = cuda.device_array(small["V"].shape, np.float32)
dcs_gather_kernel[(2, 2), (8, 4)](cuda.to_device(small["atoms"]), d_V, small["h"], small["z"])
got = d_V.copy_to_host()
print("yours V[0, :4] =", got[0, :4], "\nlargest error / bound:",
      float(np.max(np.abs(got - small["V"]) / small["tol"])))

# %% nbgrader={"grade": true, "grade_id": "dcs_gather_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch18.dcs_gather.check(dcs_gather_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch18.dcs_gather.check_hidden(dcs_gather_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "dcs_gather_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch18.dcs_gather.check_speed(dcs_gather_kernel)

# %% [markdown]
# **The atoms in constant memory.** PMPP's kernel (§18.2) keeps the atoms in **constant memory**:
# all threads of a warp read the same atom at the same time, which is exactly the access the
# constant cache broadcasts. In CUDA C++ the host copies each chunk of atoms into a `__constant__`
# array and launches once per chunk:
#
# ```cpp
# __constant__ float atominfo[4 * 4000];                     // 64 KB: the constant memory
# ...
# cudaMemcpyToSymbol(atominfo, host_atoms + 4 * start, 4 * count * sizeof(float));
# cenergy<<<grid, block>>>(energygrid, count, gridspacing, z);
# ```
#
# Numba cannot express this: `cuda.const.array_like` takes an array known when the kernel is
# compiled, and there is no way to fill a `__constant__` symbol from the host between launches. In
# your kernel the atoms stay in global memory; since every lane of a warp loads the same element,
# one load serves the warp through the L1 cache, which recovers most of the benefit.
#
# ## Coarsening: several points per thread
#
# Look at one pair's arithmetic: `dy` and `dz` depend only on the point's **row** and the atom, not
# on its column. A thread that computes several points of the same row can compute `dy² + dz²`
# once per atom and reuse it for all of them, and it loads each atom once for all of them (PMPP
# §18.3, **thread coarsening**, as in chapter 6). With a coarsening factor `F`, each thread
# computes `F` points, keeps `F` sums (in a small local array, `cuda.local.array(COARSEN_MAX,
# float32)`, `COARSEN_MAX = 8`), and the grid has `F` times fewer blocks in x.
#
# **Which** `F` points? PMPP §18.3 first gives a thread `F` **neighbouring** columns: thread
# `t` of the row takes columns `t·F, t·F + 1, …, t·F + F − 1`. Then at the end, in step `k` of
# the stores, the 32 threads of a warp write columns `k, F + k, 2F + k, …`, `F` floats apart: the
# stores of one instruction are spread over `F` times as many memory segments (chapter 6), and
# are not coalesced. PMPP §18.4 fixes this by giving a thread columns a **block-width apart**:
# with `base = blockIdx.x · blockDim.x · F + threadIdx.x`, the thread's points are `base`,
# `base + blockDim.x`, …, `base + (F − 1) · blockDim.x`, so in each step the warp's threads
# write neighbouring columns. Here is the first layout, ready to run. **Predict:** are its values
# right? What will the course's check say in CPU mode?

# %%
COARSEN_MAX = ch18.COARSEN_MAX


@cuda.jit
def dcs_coarsened_consecutive(atoms, V, h, z, coarsen):
    base = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * coarsen   # F side by side
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0]:
        y = float32(j) * h
        acc = cuda.local.array(COARSEN_MAX, float32)
        for k in range(coarsen):
            acc[k] = float32(0.0)
        for a in range(atoms.shape[0]):
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            dyz2 = dy * dy + dz * dz                    # once per atom, for all F points
            for k in range(coarsen):
                dx = float32(base + k) * h - atoms[a, 0]
                acc[k] += atoms[a, 3] / math.sqrt(dx * dx + dyz2)
        for k in range(coarsen):
            if base + k < V.shape[1]:
                V[j, base + k] = acc[k]


try:
    ch18.dcs_coarsened.check(dcs_coarsened_consecutive)
except ag.CheckFailed as failure:
    print("the course's check:\n" + str(failure))

# %% [markdown]
# Its values are right, and the values are all a GPU's check can see: there it passes, and the
# measuring cell below shows what the layout costs. The stores of both layouts give the same
# numbers, so CPU mode's check records which thread stored each element of `V` and holds your
# kernel to the coalesced layout; graded on a GPU, your kernel's hidden cases are also run once in
# CPU mode for this.
#
# ## Exercise 18.2 · Coarsened, with coalesced stores (3 points)
#
# Write `dcs_coarsened_kernel(atoms, V, h, z, coarsen)`: as 18.1, but each thread computes the
# `coarsen` points of row `j` at columns `base + k · blockDim.x` for `k < coarsen`, with
# `base = blockIdx.x · blockDim.x · coarsen + threadIdx.x`; per atom, compute `dy² + dz²` once
# and use it for every point; store each point whose column is inside the slice. The launch has
# `ceil(nx / (blockDim.x · coarsen))` blocks in x, so the last block's last points may fall past
# the slice, and `coarsen` (1 to `COARSEN_MAX = 8`) is a Python int given by the check. Roughly
# 18 lines: the kernel above with a few lines changed is one way.
#
# **What the check does.** Blocks of 8 × 4 threads (16 × 2 and 4 × 4 hidden), `V` filled with
# NaN, the bound of 18.1. Visible: a 5 × 37 slice of 12 atoms at `coarsen = 4` (two blocks of 32
# columns: the second is partial), 3 × 20 at 3, 2 × 1 at 2; hidden: `coarsen` of 8, 1 and 5,
# with slices up to 7 × 45 and 20 atoms. In CPU mode every store to `V` is recorded, and each
# element must have been stored by the thread the coalesced layout gives it (graded on a GPU, the
# hidden cases run once more in CPU mode, with a warp size of 64: the layout is the same).

# %% nbgrader={"grade": false, "grade_id": "dcs_coarsened_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def dcs_coarsened_kernel(atoms, V, h, z, coarsen):
    ### BEGIN SOLUTION
    base = cuda.blockIdx.x * cuda.blockDim.x * coarsen + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0]:
        y = float32(j) * h
        acc = cuda.local.array(COARSEN_MAX, float32)
        for k in range(coarsen):
            acc[k] = float32(0.0)
        for a in range(atoms.shape[0]):
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            dyz2 = dy * dy + dz * dz
            q = atoms[a, 3]
            for k in range(coarsen):
                dx = float32(base + k * cuda.blockDim.x) * h - atoms[a, 0]
                acc[k] += q / math.sqrt(dx * dx + dyz2)
        for k in range(coarsen):
            i = base + k * cuda.blockDim.x
            if i < V.shape[1]:
                V[j, i] = acc[k]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "dcs_coarsened_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch18.dcs_coarsened.check(dcs_coarsened_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch18.dcs_coarsened.check_hidden(dcs_coarsened_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Cutoff summation: only the atoms nearby
#
# The direct sum's work grows with the slice times the atoms: a map of a whole virus, millions of
# atoms over millions of points, is far too much. Programs cut the sum off: each point sums only
# the atoms within a **cutoff** radius (often 8 to 12 Å), and the long-range remainder, which
# varies smoothly, is computed separately on a coarse grid (PMPP §18.5; in molecular dynamics,
# particle-mesh Ewald). Then each point needs only the atoms of a sphere around it, a number that
# stays the same however large the molecule: the work becomes **linear** in the number of points.
#
# To find those atoms without looking at all of them, the host sorts the atoms into **bins**: here
# squares of side `bin_size` in x and y (the slice's atoms lie in a thin slab, so there is no
# need to bin in z). Bin `(by, bx)` holds the atoms with `floor(x / bin_size) = bx` and
# `floor(y / bin_size) = by`; the atoms are reordered bin by bin, row by row, and `bin_start`
# (int32, `[nby, nbx + 1]`) says where each bin starts: bin `(by, bx)`'s atoms are
# `atoms[bin_start[by, bx] : bin_start[by, bx + 1]]`. Because a row's bins are consecutive,
# several neighbouring bins of one row are one range too. The binning is done for you
# (`ch18.bin_atoms`); here it is for a small slice:

# %%
rng = np.random.default_rng(18)
case = ch18.cutoff_case(rng, (6, 12, 10), cutoff=1.2, bin_ratio=1.0)
print("h =", case["h"], " cutoff =", case["cutoff"], " bin_size =", case["bin_size"])
print("bin_start (a row per bin row; the last column is where the next row starts):")
print(case["bin_start"])
print("atoms, in bin order (x, y, z, q):\n", np.round(case["atoms"], 2))

# %% [markdown]
# A point at `(x, y)` needs every atom with `r < cutoff`. Such an atom has `|x_a − x| < cutoff`,
# so its bin column lies between `floor((x − cutoff) / bin_size)` and `floor((x + cutoff) /
# bin_size)`, **both ends included**, clipped to the bins that exist; the same for rows. The
# bins visited cover a square around the point, larger than the cutoff's circle: a visited atom
# may still be too far, so **each atom's own distance** is tested before it counts. Bins make the
# search cheaper; the distance test makes the answer right.
#
# ## Exercise 18.3 · Cutoff summation over bins (3 points)
#
# Write `dcs_cutoff_kernel(atoms, bin_start, V, h, z, cutoff, bin_size)`: `atoms` float32
# `[A, 4]` in bin order, `bin_start` int32 `[nby, nbx + 1]`, `V` float32 `[ny, nx]`, and `h`,
# `z`, `cutoff`, `bin_size` float32 scalars. One thread per grid point, launched as in 18.1. Find
# the range of bin rows and columns within reach, loop over the atoms of those bins, and add
# `q / r` for each atom with `r < cutoff` (compare `r²` with `cutoff²`: no square root for the
# atoms that do not count). `math.floor` rounds down; `int(...)` turns it into an index; `max`
# and `min` clip. Roughly 20 lines.
#
# **The cutoff's edge.** An atom almost exactly at the cutoff distance may land on either side of
# it in float32 and float64. The check treats atoms with `|r − cutoff| ≤ 2⁻¹² · cutoff` as
# right either way (their `|q|/r` is added to the bound); any other atom must be in or out as
# float64 says.
#
# **What the check does.** Blocks as in 18.1, `V` filled with NaN. Visible: 11 × 23 with 40 atoms,
# 6 × 31 with 25, a single row of 9 with 6; hidden: 16 × 40 with 90 atoms, a 19 × 3 slice, two
# random. Each case draws a cutoff of 2 to 4 grid spacings and bins of 0.5, 1 or 1.7 times the
# cutoff, so a point visits 2 to 5 bins per axis.

# %% nbgrader={"grade": false, "grade_id": "dcs_cutoff_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def dcs_cutoff_kernel(atoms, bin_start, V, h, z, cutoff, bin_size):
    ### BEGIN SOLUTION
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0] and i < V.shape[1]:
        x = float32(i) * h
        y = float32(j) * h
        nby = bin_start.shape[0]
        nbx = bin_start.shape[1] - 1
        bx_lo = max(int(math.floor((x - cutoff) / bin_size)), 0)
        bx_hi = min(int(math.floor((x + cutoff) / bin_size)), nbx - 1)
        by_lo = max(int(math.floor((y - cutoff) / bin_size)), 0)
        by_hi = min(int(math.floor((y + cutoff) / bin_size)), nby - 1)
        c2 = cutoff * cutoff
        acc = float32(0.0)
        for by in range(by_lo, by_hi + 1):
            for a in range(bin_start[by, bx_lo], bin_start[by, bx_hi + 1]):
                dx = x - atoms[a, 0]
                dy = y - atoms[a, 1]
                dz = z - atoms[a, 2]
                r2 = dx * dx + dy * dy + dz * dz
                if r2 < c2:
                    acc += atoms[a, 3] / math.sqrt(r2)
        V[j, i] = acc
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "dcs_cutoff_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch18.dcs_cutoff.check(dcs_cutoff_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch18.dcs_cutoff.check_hidden(dcs_cutoff_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## What the cutoff costs in accuracy
#
# The cutoff potential is not the potential: it leaves out every atom beyond the radius, and
# Coulomb's `1/r` falls off slowly. The next cell runs your kernel on one slice (16 × 24 points,
# h = 0.5, 150 atoms of random charge spread over it) at radii of 1, 2, 4 and 8, bins as wide as
# the cutoff, and compares each map with the full sum in float64: the largest error as a fraction
# of the largest `|V|`, the root-mean-square error as a fraction of V's, and how many atoms each
# point actually summed. **Predict first:** how does the error fall as the radius grows? Quickly,
# or slowly? Why do programs add a separate long-range term instead of simply raising the cutoff?

# %%
rows = ch18.cutoff_error(dcs_cutoff_kernel)
for r in rows:
    print(f"cutoff {r['radius']:4.1f}: largest error {r['max_error']:7.1%} of max |V|, "
          f"rms error {r['rms_error']:7.1%} of V's, {r['atoms_per_point']:6.1f} atoms per point")
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot([r["radius"] for r in rows], [r["max_error"] for r in rows], "o-", label="largest error")
ax.plot([r["radius"] for r in rows], [r["rms_error"] for r in rows], "s-", label="rms error")
ax.set_xlabel("cutoff radius")
ax.set_ylabel("error, as a fraction of V")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# The error falls slowly: doubling the radius multiplies the atoms summed by about four but leaves
# a large part of the error. Charges of random sign do not cancel inside a sphere, and `1/r`
# from the atoms just beyond the radius is barely smaller than from those just inside. Real
# molecules are nearly neutral overall and fare better, but still need the long-range part.
#
# ## Predict: the pairs a cutoff visits
#
# Before timing the cutoff kernel, count its work. Take a slice of `nx × ny` points a spacing `h`
# apart, with `A` atoms spread evenly over the slice's area (count that area as `nx·h` by `ny·h`:
# each point owns an `h × h` square), a cutoff radius `cutoff` and square bins of side
# `bin_size`.
#
# - **pairs_full**: the atom-point pairs the full sum computes;
# - **pairs_binned**: the pairs the cutoff kernel looks at (computes `r²` for), on average over
#   the points and leaving out the slice's edges. A point's reach along x is an interval of
#   length twice the cutoff; an interval of length `L` placed at random over bins of width `b`
#   touches, on average, `L / b + 1` of them. The same holds along y, and each bin holds the atoms
#   of its area at the slice's density;
# - **useful_fraction**: the share of the visited atoms that are within the cutoff in x and y:
#   the circle's area over the visited square's.
#
# ## Exercise 18.4 · The work binning saves (2 points)
#
# Write `binned_work(nx, ny, h, atoms, cutoff, bin_size)`: `nx`, `ny` and `atoms` Python ints,
# the others Python floats; return `(pairs_full, pairs_binned, useful_fraction)` as described
# above. Roughly 5 lines.
#
# **Predict first, by hand:** for the measuring cell's slice (1024 × 1024 points, h = 0.5,
# 10,000 atoms) with a cutoff of 12 and bins of 12, how many times fewer pairs does the cutoff
# kernel look at? What share of them counts? Would bins of 6 be better or worse, and why might a
# GPU not run them faster?
#
# **What the check does.** Three sets of values (the question above, the same with bins of 6, a
# small slice with bins of one grid spacing), then 200 random ones hidden; each result within a
# few float64 roundings.

# %% nbgrader={"grade": false, "grade_id": "binned_work_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def binned_work(nx, ny, h, atoms, cutoff, bin_size):
    """(pairs of the full sum, pairs the binned cutoff visits, share of those within the cutoff)."""
    ### BEGIN SOLUTION
    full = nx * ny * atoms
    side = 2 * cutoff + bin_size                   # the visited square's side, on average
    density = atoms / (nx * h * ny * h)
    return full, nx * ny * density * side * side, math.pi * cutoff * cutoff / (side * side)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "binned_work_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch18.binned_work.check(binned_work)
### BEGIN HIDDEN TESTS
ag.problems.ch18.binned_work.check_hidden(binned_work)
### END HIDDEN TESTS

# %% [markdown]
# Your numbers for the measuring cell's slice:

# %%
for bins in (12.0, 6.0):
    full, visited, useful = binned_work(1024, 1024, 0.5, 10000, 12.0, bins)
    print(f"bins of {bins:4.1f}: {full:.3g} pairs in the full sum, {visited:.3g} visited "
          f"({full / visited:.0f} times fewer), {useful:.0%} of them within the cutoff")

# %% [markdown]
# ## Measure: scatter, gather, coarsened, cut off
#
# On a GPU, the next cell times, on the 1024 × 1024 slice with 10,000 atoms: the scatter form with
# atomics (on a smaller slice of 256 × 256 points and 2,000 atoms: it is slow), your gather
# kernel and the course's, the coarsened kernel (`coarsen = 4`) with a thread's points side by
# side and a block-width apart, yours too, and the cutoff kernel at radii of 4, 8 and 12 (bins as
# wide as the cutoff). GFLOP/s counts 11 FLOPs per pair **of the full sum** for every row, so a
# cutoff row's figure reads "as fast as a full sum running at". Every row's `V` is checked at 512
# points against its own sum, and the times are drawn. In CPU mode it says that it needs a GPU
# and draws what the course's kernels took on an H200 instead.

# %%
mine = {"gather (yours)": ("gather", dcs_gather_kernel),
        "coarsened ×4, a block apart (yours)": ("coarsened", dcs_coarsened_kernel),
        "cutoff over bins (yours)": ("cutoff", dcs_cutoff_kernel)}
try:
    results = ch18.measure(mine)
    for r in results:
        print(f"{r['label']:52s} {r['ms']:9.3f} ms {r['gflops']:9.0f} GFLOP/s"
              f"{'' if r['right'] else '   WRONG'}")
    ag.experiments.steps(**ch18.chart(results)).show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels:")
    ag.experiments.steps(**ch18.chart()).show()

# %% [markdown]
# ## Explain: where the time goes, and what the cutoff trades (2 points, graded by your instructor)
#
# In the cell below, in 5 to 10 sentences, with numbers from your prediction (Exercise 18.4), the
# accuracy experiment and, if you ran on a GPU, the measurements:
#
# 1. say why the scatter form is slower than the gather form, counting the atomic operations of
#    the measured scatter slice, and what limits the gather kernel (a pair's instructions, and
#    which of them a GPU runs at a lower rate than a multiply-add);
# 2. say what coarsening saved per pair, and what the layout of a thread's points changed (how
#    many stores the kernel makes compared with how many pairs it computes, and so how much the
#    layout can matter here, compared with chapter 6's kernels);
# 3. set the cutoff's speedup against your prediction of the pairs it visits, and its error
#    against its speed: which radius would you choose, and what would you add to the cut-off sum
#    to get the potential right?
#
# A full-mark answer puts a number on every claim and keeps what was measured apart from what was
# predicted. Studying alone: once `./aag grade` passes this chapter's auto-graded exercises,
# `ag.reveal("dcs_answer")` shows a model answer to set yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "dcs_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; predicted figures are for an H200-like GPU, measured times
# are the learner's own).* (1) The scatter slice of 256 × 256 points and 2,000 atoms makes 1.3 ·
# 10⁸ atomic adds, every one a read-modify-write in the L2 cache, and all 2,000 threads hit the
# same points in the same order, so the adds to one address queue behind each other; the gather
# kernel does the same arithmetic with its sum in a register and one store per point, 1.05 · 10⁶
# stores for 1.05 · 10¹⁰ pairs on the large slice. Each pair costs about a dozen instructions: 3
# subtractions, 3 multiply-adds for r², and an IEEE square root and division, each a special
# function unit instruction (reciprocal square root, reciprocal) plus a few multiply-adds of
# refinement; the special function units issue 16 results per SM per clock against 128 for
# multiply-adds, so at 132 SMs and about 1.9 GHz the two of them alone take about 5 ms for the
# slice, so the gather kernel's floor is about 5 ms, and it is not memory bound at all (the atoms are
# 160 KB, read through the L1 cache); the course's gather took 20.8 ms on an H200, four times that
# floor, so the division and square root cost more than one special-function instruction each. `fastmath=True` replaces both by one approximate reciprocal
# square root, within the check's bound. (2) Coarsening by 4 saves, per pair, the 2 subtractions, 2
# multiplications and the addition of dy² + dz², and 3 of every 4 atom loads: roughly a third of
# the non-special-function instructions. The layout changes only the stores: 1 store per 10,000
# pairs, so the uncoalesced layout costs almost nothing here (a few percent at most), unlike
# chapter 6's memory-bound kernels, where every load and store counted; on a slice with few atoms
# it would matter. Measured, coarsening did not pay: on an H200 the course's kernels coarsened by 4
# took 31.4 ms (side by side) and 31.9 ms (a block apart) against the plain gather's 20.8 ms. What
# it saves is not what limits the kernel (the square root and the division, once per pair in every
# version), and a thread with four sums and four points has fewer warps beside it to hide their
# latency: a full-mark answer reports the learner's own times and checks one such cause (the
# registers and the occupancy `ag.profile` reports) rather than assuming the saving. (3) With bins as wide as the cutoff, the predicted pairs visited are (3 ·
# cutoff)² / (512 · 512) of the full sum's: 1,820 times fewer at a cutoff of 4, 455 at 8, 202 at
# 12, of which 35% are within the cutoff. The measured speedups fall well short of those ratios:
# each point's loop is short, so the fixed cost of finding its bins counts, the branch on r² <
# cutoff² idles lanes, and the lanes of a warp visit different numbers of atoms; but even a tenth
# of the ratio is tens of times faster than the full sum. The accuracy experiment shows the error
# falling slowly: on its slice of random charges the largest error is still over a third of the
# largest |V| at a cutoff of 8, with 125 of the 150 atoms summed, because 1/r decays slowly and
# charges of random sign do not cancel within a sphere (a nearly neutral molecule does better, but
# not enough). I would pick a cutoff of 8 to 12 Å for speed, and add the long-range part separately
# on a coarse grid (multilevel summation, or particle-mesh Ewald), with a smooth switching function
# so the two parts join without a step at the cutoff.

# %% [markdown]
# ## Going further (not graded)
#
# - Compile the gather kernel with `@cuda.jit(fastmath=True)`: the square root and division
#   become one approximate reciprocal square root (`rsqrt`). How much faster is it, and does it
#   still pass the check's bound?
# - Unroll the coarsened kernel by hand for `F = 4` with four scalar sums instead of a local array
#   (PMPP's version): the local array may live in memory, the scalars in registers.
# - Bin in 3-D and compute a whole 3-D map, a slice per `blockIdx.z`; or put a bin's atoms in
#   shared memory for a block of points that all visit it (a tiled form of §18.5's kernel).
# - Sort each bin's atoms by distance to the bin's centre, or pad bins to a fixed size so all
#   threads of a warp loop the same number of times: what does the divergence cost?
#
# **Reading:** PMPP ch. 18: §18.1 (background), §18.2 (scatter versus gather in kernel design),
# §18.3 (thread coarsening), §18.4 (memory coalescing), §18.5 (cutoff binning for data size
# scalability), §18.6 (summary). Stone et al., "Accelerating molecular modeling applications
# with graphics processors" (2007); Hardy et al., "Multilevel summation of electrostatic
# potentials using graphics processing units" (2009), for the long-range part.
#
# **On AMD (HIP):** the kernels run unchanged. A wavefront is 64 lanes, so a block of 8 × 4
# threads is half a wavefront; give blocks 64 threads in x or more there for full wavefronts,
# and take the coarsened layout's `blockDim.x` as the stride, as the exercise does, never 32.
