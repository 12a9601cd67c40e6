# %% [markdown]
# # Chapter 8 · Stencil: a 3-D seven-point stencil, tiled, coarsened and register-tiled
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 8.
#
# **Before you start:** chapters 1–7 (chapter 7's halo tiles above all). **Time:** about 3 hours,
# reading and exercises included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Write a **3-D seven-point stencil** kernel on a 3-D grid of 3-D blocks, with one thread per
#   point of a volume whose sides are not multiples of the block, and the boundary rule the
#   checks grade.
# - Count a stencil's memory traffic the way PMPP does: the basic kernel does about **0.46
#   floating-point operations per byte** it loads; a shared-memory tile with its **halo** raises
#   that towards a limit of 3.25, and you will compute by how much for any tile.
# - Write the tiled kernel (one barrier, and why it is needed), then a kernel that **marches along
#   z** (thread coarsening) and keeps the planes above and below in **registers** (register
#   tiling); measure all of them on a GPU in GB/s against a copy of the same bytes, and explain
#   why the measurements and the traffic model disagree.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32

ch08 = ag.problems.ch08
ag.banner()

# %% [markdown]
# ## The idea: every point from its neighbours
#
# A **stencil** computes every point of a grid from the same small pattern of neighbours around
# it, with the same weights everywhere. Stencils are how finite-difference methods solve partial
# differential equations (PMPP §8.1): to advance the heat equation by one time step, each point
# of a temperature field becomes a weighted sum of itself and its six face neighbours. Image
# filters (chapter 7's convolution) are stencils too; what sets the PDE kind apart is that the
# grids are 3-D and large, the patterns are sparse (7 points out of a 3 × 3 × 3 cube), and each
# point does very little arithmetic for the data it touches.
#
# **The spec used in this chapter.** `inp` and `out` are float32 volumes of shape `(nz, ny, nx)`,
# stored row-major and indexed `[i, j, k]` with `k` (x) the fastest-moving index: `inp[i, j, k]`
# and `inp[i, j, k + 1]` are neighbours in memory, `inp[i, j + 1, k]` is `nx` floats further,
# `inp[i + 1, j, k]` is `ny · nx` floats further. An **interior** point (no index equal to 0 or
# to N − 1 on its axis) gets
#
# ```
# out[i, j, k] = c0·in[i, j, k]
#              + c1·in[i, j, k−1] + c2·in[i, j, k+1]      (x neighbours)
#              + c3·in[i, j−1, k] + c4·in[i, j+1, k]      (y neighbours)
#              + c5·in[i−1, j, k] + c6·in[i+1, j, k]      (z neighbours)
# ```
#
# and a **boundary** point (some index 0 or N − 1) **copies** the input: `out[i, j, k] =
# in[i, j, k]`. (A PDE solver would apply its boundary condition there; copying is the simplest
# one, the boundary value stays fixed.) That is 7 multiplications and 6 additions, **13 FLOPs**
# per interior point. The seven coefficients `c0 … c6` are float32 scalars passed to the kernel.
#
# **Threads and axes.** As in chapter 3, x runs along the fastest index: a thread's
# `(x, y, z)` position is the point's `(k, j, i)`, so a kernel starts with `k, j, i =
# cuda.grid(3)` (note the order), and neighbouring threads of a warp read neighbouring floats.
#
# The pictures: (a) one z slice of the kind of test volume the checks use (a smooth field with a
# different slope along each axis, a box with sharp faces, a ball, a one-voxel sheet, a patch of
# alternating voxels, noise); (b) the seven points and their coefficients; (c) one z plane of a
# shared-memory tile: the block loads the whole 8 × 8 plane (8³ points in all), computes only
# the inner 6 × 6 (6³), and the outer ring, the **halo**, belongs to the neighbouring tiles'
# outputs; (d) the coarsened kernel seen from the side: a block of 16 × 16 threads marches up
# through its slab of z planes, keeping the plane below and the plane above in registers.

# %%
vol = ch08.test_volume(24, 40, 48, seed=3)
fig = plt.figure(figsize=(12, 10))

ax = fig.add_subplot(2, 2, 1)
ax.imshow(vol[14], cmap="viridis", origin="lower")
ax.set_title("(a) z slice i = 14 of a 24 × 40 × 48 test volume")
ax.set_xlabel("k (x, fastest in memory)")
ax.set_ylabel("j (y)")

ax = fig.add_subplot(2, 2, 2, projection="3d")
points = {"c0": (0, 0, 0), "c1": (-1, 0, 0), "c2": (1, 0, 0), "c3": (0, -1, 0), "c4": (0, 1, 0),
          "c5": (0, 0, -1), "c6": (0, 0, 1)}
where = {"c0": "in[i, j, k]", "c1": "k−1", "c2": "k+1", "c3": "j−1", "c4": "j+1", "c5": "i−1",
         "c6": "i+1"}
for name, (x, y, z) in points.items():
    ax.plot([0, x], [0, y], [0, z], color="grey")
    ax.scatter([x], [y], [z], s=250 if name == "c0" else 120,
               color="#3b6ea8" if name == "c0" else "#e08a2c", depthshade=False)
    if name == "c0":
        ax.text(0.3, -0.3, -0.45, "c0", fontsize=10)
    else:
        ax.text(x * 1.45, y * 1.45, z * 1.45 + 0.12 * np.sign(z), f"{name} ({where[name]})",
                fontsize=10, ha="center")
ax.set_xlabel("x (k)")
ax.set_ylabel("y (j)")
ax.set_zlabel("z (i)")
ax.set_xlim(-1.5, 1.5); ax.set_ylim(-1.5, 1.5); ax.set_zlim(-1.3, 1.3)
ax.set_xticks([-1, 0, 1]); ax.set_yticks([-1, 0, 1]); ax.set_zticks([-1, 0, 1])
ax.set_title("(b) the seven-point stencil: centre and six face neighbours")

ax = fig.add_subplot(2, 2, 3)
T = ch08.IN_TILE
O = ch08.OUT_TILE
for r in range(T):
    for c in range(O + T):
        if c < T:                     # this block's tile: inner points are its outputs
            face = "#3b6ea8" if 1 <= r <= T - 2 and 1 <= c <= T - 2 else "#f3c58f"
        else:                         # the next block's tile (along x), which starts at column 6
            face = "#c9d7ea" if 1 <= r <= T - 2 and c <= O + T - 2 else "#f8e4cc"
        ax.add_patch(plt.Rectangle((c, r), 1, 1, facecolor=face, edgecolor="#999", lw=0.5))
ax.add_patch(plt.Rectangle((0, 0), T, T, fill=False, edgecolor="black", lw=2.5))
ax.add_patch(plt.Rectangle((O, 0), T, T, fill=False, edgecolor="#555", lw=2, ls="--"))
ax.text(T / 2, -0.7, "this block: 8 × 8 input plane,\n6 × 6 outputs (blue), halo (orange)",
        ha="center", va="top", fontsize=9)
ax.text(O + T / 2 + 1, T + 0.4, "the next block along x (dashed) starts 6 points later:\n"
        "columns 6 and 7 are loaded by both blocks", ha="center", va="bottom", fontsize=9,
        color="#333")
ax.set_xlim(-0.5, O + T + 0.5); ax.set_ylim(-2.5, T + 2.2)
ax.set_aspect("equal"); ax.axis("off")
ax.set_title("(c) one z plane of the 8³ shared-memory tile and its halo")

ax = fig.add_subplot(2, 2, 4)
nz_, nx_, here = 14, 20, 5
slab_edges = (0, 5, 10, 14)
for z in range(nz_):
    for x in range(nx_):
        face = "white"
        if x < 16:
            face = {here - 1: "#f3c58f", here: "#3b6ea8", here + 1: "#f3c58f"}.get(z, "#eef2f7")
            if z < 5 or z >= 10:
                face = "white" if face == "#eef2f7" else face
            if z == here and x in (0, 15):
                face = "#9db7d8"              # halo threads: they store, but compute nothing
        ax.add_patch(plt.Rectangle((x, z), 1, 1, facecolor=face, edgecolor="#bbb", lw=0.4))
for z in slab_edges:
    ax.axhline(z, color="black", lw=1.5, ls="--")
ax.annotate("", xy=(17.5, 9.5), xytext=(17.5, 5.5), arrowprops=dict(arrowstyle="->", lw=2))
ax.text(18.1, 7.5, "march", rotation=90, va="center")
ax.text(20.3, here - 0.5, "plane i − 1 (below): registers", fontsize=8, va="center")
ax.text(20.3, here + 0.5, "plane i: shared memory", fontsize=8, va="center")
ax.text(20.3, here + 1.5, "plane i + 1 (above): registers", fontsize=8, va="center")
ax.set_xlim(0, nx_ + 9); ax.set_ylim(0, nz_)
ax.set_xlabel("x (k): the block's 16 threads along x (14 outputs + 2 halo)")
ax.set_ylabel("z (i): slabs of planes (dashed), one per blockIdx.z")
ax.set_title("(d) z-marching: one block, its slab, three planes at a time")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## The CPU baseline
#
# NumPy does the whole sweep with seven shifted views of the volume (slices, no copies), one core;
# a Numba loop does it point by point. Both move the same data a GPU kernel must move at least:
# every point read once and written once, **8 bytes per point**. The cell times them on a small
# volume and prints their bandwidth for those bytes.

# %%
shape = (64, 96, 128)                      # (nz, ny, nx)
rng = np.random.default_rng(8)
x_cpu = rng.standard_normal(shape).astype(np.float32)
coefs = [np.float32(v) for v in (0.52, 0.071, 0.093, 0.084, 0.066, 0.097, 0.069)]
out_cpu = np.empty_like(x_cpu)
nbytes = 8 * x_cpu.size
for key in ("numpy", "serial"):
    baseline = ch08.BASELINES[key]
    stats = ag.timing.time_cpu(baseline.label, lambda: baseline.run(x_cpu, out_cpu, *coefs),
                               repeats=3, nbytes=nbytes)
    print(f"{baseline.label:28s} {stats.median_ms:8.2f} ms  {stats.gbps:6.2f} GB/s")
print(f"largest difference from the float64 spec: "
      f"{np.abs(out_cpu - ch08.stencil7(x_cpu, coefs)).max():.2e}")

# %% [markdown]
# ## Exercise 8.1 · One thread per point (3 points)
#
# Write `stencil_basic_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6)`: `inp` and `out` are
# `(nz, ny, nx)` float32 device arrays, `c0 … c6` float32 scalars. Each thread:
#
# - takes its point `k, j, i = cuda.grid(3)` (x is k, the last index);
# - does nothing if the point is outside the volume (the grid has extra threads along every axis);
# - copies `inp[i, j, k]` to `out[i, j, k]` if the point is on the boundary (an index 0 or N − 1
#   on any axis), and otherwise stores the seven-term sum of the spec.
#
# Roughly 10 lines. Only interior points read neighbours: a boundary point at `k = 0` has no
# `k − 1` (and in Numba `inp[i, j, -1]` silently reads the *last* point of the row).
#
# **How the check launches it.** Blocks of `(8, 4, 2)` threads (x × y × z) and a grid of
# `(ceil(nx / 8), ceil(ny / 4), ceil(nz / 2))` blocks; the hidden tests draw other block shapes
# (`(4, 8, 2)`, `(2, 4, 8)`, `(16, 2, 2)`, …), so use `cuda.grid(3)` or the `blockDim`s, never
# a fixed block size.
#
# **What the check does.** `out` is filled with NaN, the volumes are test volumes like picture
# (a) with a random scale and offset, and the coefficients are random, distinct and of both
# signs (swap any two and the answer changes). Every point is compared with the float64 spec:
# boundary points must be **exact** copies; an interior point may be off by
# `γ₇ · Σₘ |cₘ · xₘ|` (`γ₇ = 7u / (1 − 7u)`, `u = 2⁻²⁴`), which any float32 evaluation order
# meets, with or without fused multiply-adds. Volumes `9 × 11 × 13`, `3 × 4 × 5` (one interior
# plane of 2 × 3 points) and `1 × 2 × 3` (all boundary), given as nz × ny × nx; the hidden tests
# use other shapes below 15 (small, because CPU mode simulates every thread; on a GPU the first
# visible case is 129 × 255 × 517). A wrong verdict says where the wrong points are (the boundary
# only? an axis never covered?) and, when it recognises the mistake (two coefficients swapped, x
# and z swapped), which one it is.

# %% nbgrader={"grade": false, "grade_id": "stencil_basic_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def stencil_basic_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    ### BEGIN SOLUTION
    k, j, i = cuda.grid(3)
    nz, ny, nx = inp.shape
    if i < nz and j < ny and k < nx:
        if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
            out[i, j, k] = inp[i, j, k]
        else:
            out[i, j, k] = (c0 * inp[i, j, k]
                            + c1 * inp[i, j, k - 1] + c2 * inp[i, j, k + 1]
                            + c3 * inp[i, j - 1, k] + c4 * inp[i, j + 1, k]
                            + c5 * inp[i - 1, j, k] + c6 * inp[i + 1, j, k])
    ### END SOLUTION


# %% [markdown]
# Try it on a small volume, launched the way the check launches it:

# %%
small = ch08.test_volume(5, 6, 7, seed=1)
block = (8, 4, 2)
grid = ch08.basic_blocks(small.shape, block)
d_out = cuda.to_device(np.full(small.shape, np.nan, np.float32))
stencil_basic_kernel[grid, block](cuda.to_device(small), d_out, *coefs)
got = d_out.copy_to_host()
print(f"grid {grid} of {block} blocks; points never written: {np.isnan(got).sum()}; "
      f"largest difference from the spec: {np.nanmax(np.abs(got - ch08.stencil7(small, coefs))):.2e}")

# %% nbgrader={"grade": true, "grade_id": "stencil_basic_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch08.stencil_basic.check(stencil_basic_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch08.stencil_basic.check_hidden(stencil_basic_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Counting the traffic
#
# Each thread of the basic kernel makes **7 loads** (28 bytes) and 13 FLOPs, so PMPP (§8.2)
# counts its arithmetic intensity as
#
# ```
# 13 FLOP / (7 · 4 bytes) ≈ 0.46 FLOP/byte
# ```
#
# far below the ~14 FLOP/byte ridge point of an H200-like device (chapter 5's roofline): by this
# count the kernel is memory bound, and every load it saves should save time (the end of the chapter
# measures whether it does). Yet each input point is loaded by **seven** threads: by its own and by
# each of its six neighbours'. The same cure as chapter 5's matmul applies: a block loads a **box**
# of input points into shared memory once, and its threads read their neighbours there.
#
# A block that computes the outputs of a box needs one more layer of points on every face: the
# **halo** (picture (c)). If the block loads a `box_x × box_y × box_z` box of inputs, halo
# included, it can compute the points strictly inside it, those not on the box's faces. The
# halo points are loaded by this block *and* by the neighbouring blocks (they are those blocks'
# outputs, or their halos), so the smaller the box, the larger the share of the loads that are
# repeats.
#
# ## Exercise 8.2 · Predict: PMPP's intensity of a tiled stencil (2 points)
#
# Write `stencil_intensity(box_x, box_y, box_z)`: the arithmetic intensity, in **FLOPs per byte
# loaded from global memory**, of a block that loads every float32 point of a `box_x × box_y ×
# box_z` input box exactly once and computes every point inside the box (13 FLOPs each). Count
# loads only (as PMPP does), no stores; the sides are ints of at least 3. Return a float. One or
# two lines.
#
# **Predict first, by hand** (then let your function check you): the intensity of an 8 × 8 × 8
# box (the next exercise's tile)? Of a 32 × 32 × 32 box? What does it tend to as the box grows,
# and why can a 3-D tile never get much closer to that limit (how many threads would a 32³ block
# have)? A block that marches along z (Exercise 8.4) loads a 16 × 16 plane tile for each of the
# 32 planes of its slab, plus one plane below and one above: what box is that, and what
# intensity?
#
# **What the check does.** 6 boxes (8³, 16³, 32³, the z-marching box, the smallest box 3³, a
# flat one), then 200 random ones in the hidden tests (sides 3 to 64), compared with the exact
# count in float64 to a few roundings: any algebraically equal formula passes, a rounded number
# does not.

# %% nbgrader={"grade": false, "grade_id": "stencil_intensity_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def stencil_intensity(box_x, box_y, box_z):
    """FLOPs per byte loaded: a block loads a box once and computes the points inside it."""
    ### BEGIN SOLUTION
    outputs = (box_x - 2) * (box_y - 2) * (box_z - 2)
    return 13 * outputs / (4 * box_x * box_y * box_z)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "stencil_intensity_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch08.stencil_intensity.check(stencil_intensity)
### BEGIN HIDDEN TESTS
ag.problems.ch08.stencil_intensity.check_hidden(stencil_intensity)
### END HIDDEN TESTS

# %% [markdown]
# Your function for cubic tiles and for z-marching blocks, against the basic kernel and the
# limit. The dots mark the tiles this chapter uses:

# %%
sides = np.arange(3, 65)
fig, ax = plt.subplots(figsize=(10, 4))
ax.plot(sides, [stencil_intensity(s, s, s) for s in sides], label="cubic tile s × s × s")
ax.plot(sides, [stencil_intensity(s, s, 34) for s in sides],
        label="z-marching: s × s plane tile, slabs of 32 planes")
ax.axhline(13 / 28, color="tab:red", ls=":", label="basic kernel (7 loads per point): 0.46")
ax.axhline(13 / 4, color="grey", ls="--", label="limit 13/4 = 3.25 (each point loaded once)")
for box, text in (((8, 8, 8), "8³ tile (8.3)"), ((16, 16, 34), "16 × 16, 32 planes (8.4)")):
    ax.plot(box[0], stencil_intensity(*box), "o", color="black")
    ax.annotate(f"{text}: {stencil_intensity(*box):.2f}", (box[0], stencil_intensity(*box)),
                textcoords="offset points", xytext=(8, -14))
ax.axvline(10.08, color="tab:purple", lw=0.8)
ax.text(10.6, 0.62, "right of this line a cubic block\nhas more than 1024 threads",
        color="tab:purple", fontsize=8)
ax.set_xlabel("tile side s (points, halo included)")
ax.set_ylabel("FLOP per byte loaded")
ax.set_ylim(0, 3.5)
ax.grid(alpha=0.3)
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Tiling in shared memory
#
# PMPP §8.3's tiled kernel gives each block an `IN_TILE × IN_TILE × IN_TILE` cube of threads,
# **one thread per input point of the tile**, halo included. With `IN_TILE = 8` the block has
# 512 threads and its outputs are the inner `OUT_TILE³ = 6³` points. Consecutive blocks'
# output boxes touch (block `b` along x outputs `k = 6b … 6b + 5`), so their input tiles overlap
# by two points (picture (c)). Each thread:
#
# 1. finds its input point `(i, j, k)`: along x, `k = blockIdx.x · OUT_TILE + threadIdx.x − 1`
#    (the tile starts one point before the block's first output), and the same along y and z;
# 2. **loads** `inp[i, j, k]` into `tile[tz, ty, tx]` if that point is inside the volume (halo
#    points of the first and last tiles lie outside; leave those tile entries alone: no output
#    reads them, since the points next to them are boundary points);
# 3. waits at **`cuda.syncthreads()`**: its neighbours' entries were written by other threads;
# 4. if it is an **inner** thread of the tile (`1 ≤ tx, ty, tz ≤ IN_TILE − 2`) and its point is
#    inside the volume, it stores its output: a copy on the boundary, otherwise the seven-term sum
#    with every input read from `tile` (`tile[tz, ty, tx − 1]` for `in[i, j, k − 1]`, and so
#    on). Halo threads store nothing.
#
# One barrier is enough here: each thread loads once, computes once, and the tile is never
# overwritten. Without it, a thread can read a neighbour's entry **before** that neighbour has
# written it; on a GPU that is a timing-dependent wrong answer, in this course's CPU mode a
# `SharedMemoryRace` that stops the launch, every time.
#
# **The cost.** The block loads 8³ = 512 points for 6³ = 216 outputs (PMPP's 1.37 FLOP/byte,
# three times the basic kernel's count), but only 216 of its 512 threads (42%) compute; the rest
# load one value and idle. The shared tile is 512 × 4 = 2 KB. On the course's H200 this kernel
# is in fact **slower** than the basic one (1.916 ms against 1.264 ms on the speed test's volume,
# docs/benchmarks.md): the loads it saves were mostly cache hits already, and the end of the
# chapter asks you to explain the rest.
#
# ## Exercise 8.3 · A shared-memory tile with its halo (4 points)
#
# Write `stencil_tiled_kernel(inp, out, c0, …, c6)` as above, with the module constants
# `IN_TILE = 8` and `OUT_TILE = IN_TILE − 2` of the cell, and one shared array
# `tile = cuda.shared.array((IN_TILE, IN_TILE, IN_TILE), float32)` indexed `[tz, ty, tx]`.
# Roughly 20 lines.
#
# **How the check launches it.** Blocks of `(IN_TILE, IN_TILE, IN_TILE)` = 8 × 8 × 8 threads
# and a grid of `(ceil(nx / 6), ceil(ny / 6), ceil(nz / 6))` blocks (x, y, z), in every case,
# visible and hidden: keep `IN_TILE = 8`.
#
# **What the check does.** As for Exercise 8.1 (NaN-filled output, the same tolerance, exact
# boundary copies). Volumes `7 × 8 × 9` (two tiles along every axis: seams in x, y and z, the
# second tiles partial), `3 × 4 × 5` (one tile) and `1 × 2 × 3`; the hidden tests, other shapes
# below 11. In CPU mode the race detector watches every access to `tile`. A verdict that says
# "only points on the faces of an output tile are wrong" means the halo was not loaded (or not
# from the right place).

# %% nbgrader={"grade": false, "grade_id": "stencil_tiled_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
IN_TILE = 8                 # the block is IN_TILE³ threads: one per input point of the tile
OUT_TILE = IN_TILE - 2      # its inner OUT_TILE³ points are the block's outputs


@cuda.jit
def stencil_tiled_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    ### BEGIN SOLUTION
    tile = cuda.shared.array((IN_TILE, IN_TILE, IN_TILE), float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    k = cuda.blockIdx.x * OUT_TILE + tx - 1
    j = cuda.blockIdx.y * OUT_TILE + ty - 1
    i = cuda.blockIdx.z * OUT_TILE + tz - 1
    nz, ny, nx = inp.shape
    inside = 0 <= i < nz and 0 <= j < ny and 0 <= k < nx
    if inside:
        tile[tz, ty, tx] = inp[i, j, k]
    cuda.syncthreads()          # every entry of the tile is loaded before anyone reads it
    inner = 1 <= tx <= IN_TILE - 2 and 1 <= ty <= IN_TILE - 2 and 1 <= tz <= IN_TILE - 2
    if inside and inner:
        if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
            out[i, j, k] = tile[tz, ty, tx]
        else:
            out[i, j, k] = (c0 * tile[tz, ty, tx]
                            + c1 * tile[tz, ty, tx - 1] + c2 * tile[tz, ty, tx + 1]
                            + c3 * tile[tz, ty - 1, tx] + c4 * tile[tz, ty + 1, tx]
                            + c5 * tile[tz - 1, ty, tx] + c6 * tile[tz + 1, ty, tx])
    ### END SOLUTION


# %% [markdown]
# Try it on the small volume, launched the way the check launches it:

# %%
grid = ch08.tiled_blocks(small.shape)
d_out = cuda.to_device(np.full(small.shape, np.nan, np.float32))
stencil_tiled_kernel[grid, (IN_TILE, IN_TILE, IN_TILE)](cuda.to_device(small), d_out, *coefs)
got = d_out.copy_to_host()
print(f"grid {grid} of {IN_TILE}³ blocks; points never written: {np.isnan(got).sum()}; "
      f"largest difference from the spec: {np.nanmax(np.abs(got - ch08.stencil7(small, coefs))):.2e}")

# %% nbgrader={"grade": true, "grade_id": "stencil_tiled_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch08.stencil_tiled.check(stencil_tiled_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch08.stencil_tiled.check_hidden(stencil_tiled_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: remove the barrier
#
# The kernel below is a correct tiled stencil without its `cuda.syncthreads()`. **Predict before
# you run**: in CPU mode, which two lines will the race detector name, and which thread did what
# first? On a GPU, would the result be wrong on every run?

# %%
from autograder import SharedMemoryRace


@cuda.jit
def tiled_no_barrier(inp, out, c0, c1, c2, c3, c4, c5, c6):
    tile = cuda.shared.array((IN_TILE, IN_TILE, IN_TILE), float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    k = cuda.blockIdx.x * OUT_TILE + tx - 1
    j = cuda.blockIdx.y * OUT_TILE + ty - 1
    i = cuda.blockIdx.z * OUT_TILE + tz - 1
    nz, ny, nx = inp.shape
    inside = 0 <= i < nz and 0 <= j < ny and 0 <= k < nx
    if inside:
        tile[tz, ty, tx] = inp[i, j, k]
    # the cuda.syncthreads() is missing here
    if inside and 1 <= tx <= IN_TILE - 2 and 1 <= ty <= IN_TILE - 2 and 1 <= tz <= IN_TILE - 2:
        if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
            out[i, j, k] = tile[tz, ty, tx]
        else:
            out[i, j, k] = (c0 * tile[tz, ty, tx]
                            + c1 * tile[tz, ty, tx - 1] + c2 * tile[tz, ty, tx + 1]
                            + c3 * tile[tz, ty - 1, tx] + c4 * tile[tz, ty + 1, tx]
                            + c5 * tile[tz - 1, ty, tx] + c6 * tile[tz + 1, ty, tx])


tiny = ch08.test_volume(4, 5, 6, seed=2)
d_out = cuda.to_device(np.full(tiny.shape, np.nan, np.float32))
try:
    tiled_no_barrier[ch08.tiled_blocks(tiny.shape), (IN_TILE,) * 3](cuda.to_device(tiny), d_out, *coefs)
    cuda.synchronize()
    worst = np.nanmax(np.abs(d_out.copy_to_host() - ch08.stencil7(tiny, coefs)))
    print(f"the launch finished; largest difference from the spec: {worst:.2e}. On a GPU this may "
          "be right on this run and wrong on the next: nothing checks the race here.")
except SharedMemoryRace as race:
    print("CPU mode stopped the launch:\n")
    print(str(race).replace(": shared", ":\nshared", 1))

# %% [markdown]
# In CPU mode the message names an element of `tile` that one thread **read** on the line of the
# sum while another thread **wrote** it on the load line, with no barrier between them (or the
# other way round: which thread the simulator ran first does not matter, the race is there either
# way). On a GPU the 512 threads of a block are 16 warps; whether a warp reaches the sum before
# another warp has loaded the neighbours it needs depends on scheduling, and the result can be
# right for a thousand runs and wrong on the next GPU.
#
# ## Thread coarsening along z, and register tiling
#
# The 3-D tile is limited by its block: at most 1024 threads, so at most 10³ points, and with
# `IN_TILE = 8` more than half of the threads only load. PMPP §8.4 changes the shape of the work:
# a block is a **2-D** tile of one z plane, `PLANE_TILE × PLANE_TILE` threads (16 × 16 here), and
# it **marches along z** through a slab of planes, each thread computing one output per plane
# instead of one in all (**thread coarsening**). To compute plane `i`, the block needs planes
# `i − 1`, `i` and `i + 1` of its tile; when it moves on to plane `i + 1`, two of those three
# planes are still needed. So each step loads **one** new plane:
#
# ```
# before the loop:  prev ← plane start − 1,  curr ← plane start
# for each plane i of the slab:
#     next ← plane i + 1                          (one load per thread)
#     barrier                                     (curr and next complete)
#     inner threads: out[i, j, k] from curr (x and y neighbours), prev and next (z neighbours)
#     barrier                                     (everyone done reading)
#     prev ← curr,  curr ← next                   (each thread moves its own entry down)
# ```
#
# Per output point the block now loads `(PLANE_TILE / PLANE_OUT)² · (planes + 2) / planes`
# points, about 1.39 for 16 × 16 tiles and 32-plane slabs: the intensity of a `16 × 16 × 34`
# box in your `stencil_intensity`, and 77% of the threads compute (`14² / 16²`), against 42%.
#
# **Register tiling** (PMPP §8.5). Look at who reads what: a thread reads its x and y neighbours
# from `curr`, but from `prev` and `next` it reads **only its own entry** (the z neighbours are in
# the same column). Values only one thread reads need not be shared: keep them in that thread's
# **registers**, `below` and `above`, and keep only the current plane in shared memory. The shared
# memory per block drops from three planes to one, and the copies `prev ← curr`, `curr ← next`
# become register moves plus one store per plane:
#
# ```
# before the loop:  below ← in[start − 1, j, k],  here ← in[start, j, k]
# for each plane i of the slab:
#     above ← in[i + 1, j, k]                     (if that plane exists)
#     plane[ty, tx] ← here
#     barrier                                     (the plane is complete)
#     inner threads: out[i, j, k] = c0·here + c1·plane[ty, tx−1] + … + c5·below + c6·above
#     barrier                                     (everyone done reading the plane)
#     below ← here,  here ← above
# ```
#
# Both barriers are needed: without the first, a thread can read `plane[ty, tx − 1]` before its
# neighbour stored it; without the second, a fast thread stores the **next** plane's value into
# `plane` while a slower neighbour still reads the current one.
#
# **Slabs.** The grid's z dimension splits the volume's planes into `gridDim.z` slabs of `per =
# ceil(nz / gridDim.z)` planes: block `blockIdx.z` handles planes `start = blockIdx.z · per` up to
# `stop = min(start + per, nz)` (exclusive). The last slab can be shorter, and can even be empty.
# The check launches slabs of 3 planes on its small volumes (so the seams between slabs are tested),
# and of up to 32 planes on a GPU's large ones (31 on the speed test's volume). Every block loads
# one plane below its slab and one above it (where they exist): those planes are read by two blocks.
#
# ## Exercise 8.4 · March along z with register tiling (4 points, and 2 for speed)
#
# Write `stencil_coarsened_kernel(inp, out, c0, …, c6)`: 2-D blocks of `PLANE_TILE ×
# PLANE_TILE` threads with `PLANE_TILE = 16` and `PLANE_OUT = PLANE_TILE − 2` as in the cell,
# one shared array `plane = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)` indexed
# `[ty, tx]`, the planes below and above in registers. Each thread:
#
# - finds its column `k = blockIdx.x · PLANE_OUT + threadIdx.x − 1`, `j = blockIdx.y · PLANE_OUT
#   + threadIdx.y − 1` (the same halo offset as in 8.3), and its slab `start`, `stop` as above;
# - loads `below` and `here` before the loop, and `above` in each step, **only where the point is
#   inside the volume** (use 0 otherwise: those values are never used);
# - runs the loop above. Every thread of the block, halo threads and threads outside the volume
#   included, goes round the loop and reaches both barriers the same number of times: a thread
#   that leaves early would leave its block waiting at a barrier.
#
# Roughly 30 lines. (A kernel with three shared planes, PMPP §8.4's version, passes the check
# too; this exercise asks for the register-tiled one, and the speed test compares it with the
# course's.)
#
# **How the check launches it.** Blocks of `(16, 16)` threads and a grid of `(ceil(nx / 14),
# ceil(ny / 14), slabs)` blocks, in every case: keep `PLANE_TILE = 16`.
#
# **What the check does.** As for 8.1 and 8.3. Volumes `6 × 15 × 9` (two blocks along y, the
# second partial, and two slabs of 3 planes), `4 × 3 × 16` (two blocks along x, two slabs of 2
# planes) and `1 × 1 × 1`; the hidden tests, a `7 × 5 × 9` volume in three slabs of 3, 3 and 1
# planes, a `5 × 16 × 4` one and a random small one. In CPU mode the race detector watches every
# access to `plane`.
#
# **The speed test (2 points, on a GPU).** Your kernel on a 511 × 513 × 515 volume (540 MB per copy,
# far larger than any L2 cache), launched as `(37, 37, 17)` blocks of 16 × 16 (slabs of 31 planes),
# timed against the course's reference kernel (register tiling too, plus loads issued several planes
# ahead) and the CPU baseline (a parallel Numba loop on all of the grading machine's cores): full
# marks for at least half the reference's speed and 10× the CPU (bars your instructor may
# recalibrate for the course's GPU). On the course's H200 the reference took 0.640 ms and a plain
# register-tiled solution 0.685–0.693 ms, 92% of its speed. The output of every timed call is
# checked on 4096 sampled points. In CPU mode the cell says that speed needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "stencil_coarsened_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
PLANE_TILE = 16                 # the block is PLANE_TILE × PLANE_TILE threads: a tile of one plane
PLANE_OUT = PLANE_TILE - 2      # its inner PLANE_OUT × PLANE_OUT points are outputs in each plane


@cuda.jit
def stencil_coarsened_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    ### BEGIN SOLUTION
    plane = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    nz, ny, nx = inp.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    k = cuda.blockIdx.x * PLANE_OUT + tx - 1
    j = cuda.blockIdx.y * PLANE_OUT + ty - 1
    per = (nz + cuda.gridDim.z - 1) // cuda.gridDim.z
    start = cuda.blockIdx.z * per
    stop = min(start + per, nz)
    inside = 0 <= j < ny and 0 <= k < nx
    inner = 1 <= tx <= PLANE_TILE - 2 and 1 <= ty <= PLANE_TILE - 2
    below = float32(0)
    here = float32(0)
    if inside and start < stop:
        here = inp[start, j, k]
        if start > 0:
            below = inp[start - 1, j, k]
    for i in range(start, stop):
        above = float32(0)
        if inside and i + 1 < nz:
            above = inp[i + 1, j, k]
        plane[ty, tx] = here
        cuda.syncthreads()          # the whole plane is stored before anyone reads it
        if inside and inner:
            if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                out[i, j, k] = here
            else:
                out[i, j, k] = (c0 * here
                                + c1 * plane[ty, tx - 1] + c2 * plane[ty, tx + 1]
                                + c3 * plane[ty - 1, tx] + c4 * plane[ty + 1, tx]
                                + c5 * below + c6 * above)
        cuda.syncthreads()          # everyone is done reading before the next plane is stored
        below = here
        here = above
    ### END SOLUTION


# %% [markdown]
# Try it on the small volume, launched the way the check launches it (here with two slabs):

# %%
grid = ch08.coarsened_blocks(small.shape)
d_out = cuda.to_device(np.full(small.shape, np.nan, np.float32))
stencil_coarsened_kernel[grid, (PLANE_TILE, PLANE_TILE)](cuda.to_device(small), d_out, *coefs)
got = d_out.copy_to_host()
print(f"grid {grid} of {PLANE_TILE} × {PLANE_TILE} blocks; points never written: "
      f"{np.isnan(got).sum()}; largest difference from the spec: "
      f"{np.nanmax(np.abs(got - ch08.stencil7(small, coefs))):.2e}")

# %% nbgrader={"grade": true, "grade_id": "stencil_coarsened_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch08.stencil_coarsened.check(stencil_coarsened_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch08.stencil_coarsened.check_hidden(stencil_coarsened_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "stencil_coarsened_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch08.stencil_coarsened.check_speed(stencil_coarsened_kernel)

# %% [markdown]
# ## Measure all four (on a GPU)
#
# For comparison the cell below defines PMPP §8.4's version, coarsened with **three** shared
# planes and no register tiling (given, not graded). Then, on a GPU, it times four kernels on the
# speed test's 511 × 513 × 515 volume: your basic kernel (in 32 × 8 × 1 blocks), your tiled one,
# the three-plane one and your register-tiled one, each checked on 4096 sampled points, and a
# device copy of the same bytes. It prints the time, the bandwidth for the 8 bytes per point the
# sweep must move, and the fraction of the copy's bandwidth, next to what PMPP's traffic model
# predicts from your `stencil_intensity`: every load a trip to DRAM, plus the 4-byte store, at the
# copy's bandwidth, and draws the times as bars with the model's times as orange marks and the
# copy as a dashed line (a kernel whose samples were wrong is hatched). In CPU mode it prints the
# model's predictions and draws the chart from the course's H200 run of the solution's kernels.

# %%
@cuda.jit
def stencil_three_planes(inp, out, c0, c1, c2, c3, c4, c5, c6):
    prev = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    curr = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    nxt = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    nz, ny, nx = inp.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    k = cuda.blockIdx.x * PLANE_OUT + tx - 1
    j = cuda.blockIdx.y * PLANE_OUT + ty - 1
    per = (nz + cuda.gridDim.z - 1) // cuda.gridDim.z
    start = cuda.blockIdx.z * per
    stop = min(start + per, nz)
    inside = 0 <= j < ny and 0 <= k < nx
    if inside and 0 < start < nz:
        prev[ty, tx] = inp[start - 1, j, k]
    if inside and start < nz:
        curr[ty, tx] = inp[start, j, k]
    for i in range(start, stop):
        if inside and i + 1 < nz:
            nxt[ty, tx] = inp[i + 1, j, k]
        cuda.syncthreads()
        if inside and 1 <= tx <= PLANE_TILE - 2 and 1 <= ty <= PLANE_TILE - 2:
            if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                out[i, j, k] = curr[ty, tx]
            else:
                out[i, j, k] = (c0 * curr[ty, tx] + c1 * curr[ty, tx - 1] + c2 * curr[ty, tx + 1]
                                + c3 * curr[ty - 1, tx] + c4 * curr[ty + 1, tx]
                                + c5 * prev[ty, tx] + c6 * nxt[ty, tx])
        cuda.syncthreads()
        prev[ty, tx] = curr[ty, tx]
        curr[ty, tx] = nxt[ty, tx]


size = ch08.SPEED_VOLUME
per = -(-size[0] // ch08.slabs(size[0]))
model_bytes = {                                   # bytes per output point in PMPP's model
    "basic (yours)": 7 * 4 + 4,
    "tiled 8³ (yours)": 13 / stencil_intensity(8, 8, 8) + 4,
    "three shared planes (given)": 13 / stencil_intensity(16, 16, per + 2) + 4,
    "register tiled (yours)": 13 / stencil_intensity(16, 16, per + 2) + 4,
}
kernels = [("basic (yours)", ch08.stencil_basic, stencil_basic_kernel),
           ("tiled 8³ (yours)", ch08.stencil_tiled, stencil_tiled_kernel),
           ("three shared planes (given)", ch08.stencil_coarsened, stencil_three_planes),
           ("register tiled (yours)", ch08.stencil_coarsened, stencil_coarsened_kernel)]
points = int(np.prod(size))
try:
    rows = ch08.measure(kernels, size)
    copy_gbps = rows[-1]["gbps"]
    print(f"{size[0]} × {size[1]} × {size[2]} volume, {8 * points / 1e6:,.0f} MB to move; "
          f"copy of the same bytes: {rows[-1]['ms']:.3f} ms = {copy_gbps:,.0f} GB/s\n")
    print(f"{'kernel':28s} {'time':>9s} {'GB/s':>7s} {'of copy':>8s} {'model':>9s} {'right':>6s}")
    model_ms = {label: per_point * points / copy_gbps / 1e6 for label, per_point in model_bytes.items()}
    for row in rows[:-1]:
        print(f"{row['label']:28s} {row['ms']:7.3f}ms {row['gbps']:7.0f} {row['of_copy']:8.0%} "
              f"{model_ms[row['label']]:7.3f}ms {str(row['right']):>6s}")
    ag.experiments.steps("ch08_stencil", rows[:-1], reference=rows[-1], bounds=model_ms,
                         title=f"7-point stencil on {size[0]} × {size[1]} × {size[2]}").show()
except ag.timing.NeedsGPU as why:
    print(why, "\n")
    bandwidth = 4.2e12             # the H200's copy of these bytes: 0.257 ms (docs/bench-h200.json)
    print(f"PMPP's model on a {size[0]} × {size[1]} × {size[2]} volume at {bandwidth / 1e12:.2f} TB/s "
          f"(the best possible: 8 bytes per point, {8 * points / bandwidth * 1e3:.3f} ms):")
    for label, per_point in model_bytes.items():
        print(f"  {label:28s} {per_point:5.1f} bytes per point -> "
              f"{per_point * points / bandwidth * 1e3:6.3f} ms")
    print("\nWhat the course measured with the solution's kernels (bars), against the model "
          "(orange marks):")
    ag.experiments.steps("ch08_stencil").show()

# %% [markdown]
# **Explain the gap (2 points, graded by your instructor).** In three to six sentences, with your
# numbers: which kernel comes closest to the copy, and which is furthest from what PMPP's model
# predicts for it, in which direction? A full-mark answer (1) names the assumption of the model that
# fails for the basic kernel (what serves its seven loads per point, and how many bytes per point
# actually cross the memory bus) and says what sets the basic kernel's time instead, (2) says why
# the tiled 8³ kernel does not win in proportion to its intensity (what its 512 threads spend their
# time on), and (3) names one thing that still keeps the register-tiled kernel from the copy's
# bandwidth, and a change that would help. Without a GPU, answer from the model's table, the
# chapter's text and the H200 figures below, and say which measurement would settle each point.
#
# The course's H200 measured, on the 511 × 513 × 515 volume (docs/benchmarks.md): a copy of the same
# bytes about 0.26 ms; the basic kernel 1.264 ms (20% of the copy's bandwidth), the tiled 8³ kernel
# 1.916 ms (13%), three shared planes 0.775 ms (33%), the plain register-tiled kernel 0.685–0.693 ms
# (38%) and the course's reference, which loads four planes ahead, 0.640 ms (40%).

# %% [markdown] nbgrader={"grade": true, "grade_id": "stencil_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the release shows an empty answer cell).* On the H200 the
# register-tiled kernel comes closest to the copy: 0.685–0.693 ms, 38% of its bandwidth (the
# course's reference 40%); the tiled 8³ kernel is furthest from the model, in the slow direction.
# PMPP's model (every load a trip to DRAM, at the copy's 4.2 TB/s) predicts 1.03 ms for the basic
# kernel (32 bytes per point), 0.43 ms for the 8³ tile (13.5 bytes) and 0.31 ms for the z-marching
# kernels (9.6 bytes); measured, every kernel is slower than that, the basic one by 1.2×, the
# z-marching ones by 2.2–2.5× and the 8³ one by 4.4×: it takes 1.916 ms, slower than the basic
# kernel's 1.264 ms, where the model ranked it 2.4× faster. (1) The assumption that fails for the
# basic kernel is that its seven loads per point go to DRAM: most are floats that neighbouring
# threads loaded a moment earlier, the x and y neighbours from L1 (a warp reads 32 consecutive
# floats, and the block's rows overlap), planes i − 1 and i + 1 from the H200's 60 MiB L2 (a plane
# is about 1 MB, and the blocks of neighbouring planes run at about the same time), so close to 8
# bytes per point should cross the memory bus, not 32; a profiler's count of DRAM bytes would settle
# it. The time alone does not show it, because the model's other assumption, that time is bytes over
# bandwidth, fails too: the basic kernel takes almost five copies' time, so it is limited by the
# work per point in the SM (seven separate loads with their index arithmetic, six boundary tests,
# one point per thread), not by the bus. (2) The 8³ kernel saves loads that were cache hits anyway
# and pays for it: 58% of its 512 threads only load and then wait at the barrier, a block that
# loads, waits and only then computes keeps few loads in flight, and a warp's 32 loads fall on four
# separate 8-float rows, each usually straddling two 32-byte sectors, where the basic kernel's warp
# reads 32 consecutive floats. (3) The register-tiled kernel has 77% of its threads computing and
# loads one new plane per step; what still keeps it from the copy is that each thread has a single
# load in flight per plane and waits at two barriers per plane (too few bytes in flight for the
# memory, by Little's law), plus the halo: 1.39 loads per point in PMPP's count. Loading four planes
# ahead (the reference) is only 7–8% faster, so wider plane tiles (32 × 32 cut the halo's extra
# loads in a plane from 31% to 14%) and longer slabs are the next things to try.

# %% [markdown]
# Questions to answer for yourself (not graded):
# 1. The three-plane kernel copies `curr` into `prev` and `next` into `curr` after the second
#    barrier, each thread its own entry. Why is no third barrier needed before the next load into
#    `nxt`? (Who reads `nxt[ty, tx]`, and when?)
# 2. How much shared memory do the 8³ tile, the three planes and the register-tiled plane use per
#    block? With 228 KB of shared memory per SM, is shared memory what limits how many blocks of
#    each kernel an SM can hold?
# 3. Why must threads whose column is outside the volume still run the whole z loop in the
#    coarsened kernel, when a thread outside the volume may simply skip everything in the basic
#    one?
# 4. A 27-point stencil reads the whole 3 × 3 × 3 cube around each point. Which of this chapter's
#    kernels change, and can the z-marching kernel still keep the planes below and above in
#    registers?
#
# ## Going further
# - PMPP ch. 8: §8.1 (background: finite differences and stencils), §8.2 (a basic stencil
#   kernel), §8.3 (shared-memory tiling for a stencil sweep), §8.4 (thread coarsening), §8.5
#   (register tiling); ch. 7 (convolution, the 2-D filters with the same halo question) and ch. 5
#   (tiling and the roofline).
# - GPU MODE lecture 4 (compute and memory basics) and lecture 8 (CUDA performance checklist:
#   coalescing, occupancy, thread coarsening, tiling to reuse data).
# - Memory-level parallelism: a kernel needs roughly bandwidth × latency bytes in flight (Little's
#   law) to keep the memory busy; the course's reference kernel (`reference_coarsened` in
#   `autograder/problems/ch08/references.py`) issues each thread's loads four planes ahead for that reason.
#   Temporal blocking (several time steps of the stencil per sweep, while a tile is on chip) is
#   how stencil codes go past the one-read-one-write bound.
# - **On AMD (HIP):** shared memory is the **LDS** (64 KB per compute unit on the MI200 and MI300
#   series) and a wavefront is 64 threads on these data-centre (CDNA) GPUs: a 16 × 16 block is four
#   wavefronts, the 8³ block eight. numba-hip keeps the same Python names (`cuda.shared.array`,
#   `cuda.syncthreads()`). The caches differ (MI300X parts add a 256 MB Infinity Cache behind the
#   L2), so measure before you trust the basic kernel's ranking there too.
