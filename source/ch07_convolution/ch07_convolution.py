# %% [markdown]
# # Chapter 7 · Convolution: constant memory, caches and halo cells
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 7.
#
# **Before you start:** chapters 1–6 (tiling from chapter 5, coalescing from chapter 6). **Time:**
# about 3 hours, reading and exercises included (more in CPU mode, where the simulator runs kernels
# slowly).
#
# ## What you will be able to do
# - Write a 2-D convolution kernel, one thread per output pixel, that treats the pixels outside
#   the image as zeros ("ghost cells"), checked pixel by pixel against a float64 result.
# - Put the filter in **constant memory** (in Numba: a kernel *factory* that freezes the filter
#   into the compiled kernel) and say what the constant cache does when all the threads of a warp
#   read the same weight.
# - Write PMPP's **tiled convolution**: an input tile with a halo of `r` pixels in shared memory
#   and one barrier. Predict (graded) how many bytes each of your three kernels would move if no
#   load were ever served by a cache, then measure on a GPU how much of what tiling saves the L1
#   and L2 caches had already saved for the untiled kernel.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import time

import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32

ag.banner()

# %% [markdown]
# ## The idea: each output pixel is a weighted sum of its neighbours
#
# A **convolution filter** (also called a *mask*, or a *kernel*; this chapter says *filter* and
# keeps *kernel* for GPU functions) is a small square of weights, `(2r + 1) × (2r + 1)` of them for
# a radius `r`. Output pixel `(i, j)` is the weighted sum of the input pixels in the square
# window centred on `(i, j)`:
#
# ```
# out[i, j] = Σ Σ F[a, b] · image[i + a − r, j + b − r]      for a, b = 0, 1, …, 2r
# ```
#
# The centre weight `F[r, r]` multiplies the pixel itself; `F[0, 0]` multiplies the pixel `r`
# rows up and `r` columns left. The weights decide what the filter does: positive weights that
# add up to 1 blur; weights of opposite signs on the two sides of the centre respond to edges; a
# heavy centre with a negative ring sharpens.
#
# Two details every convolution has to settle:
#
# - **Ghost cells.** Near the border part of the window lies outside the image. In this chapter
#   (as in PMPP §7.1) the missing pixels count as **0**. Other conventions (repeat the edge pixel,
#   mirror the image) change the border of the result, not the method.
# - **Flipped or not.** Signal processing defines convolution with a flipped filter,
#   `F[2r − a, 2r − b]`; the formula above, without the flip, is strictly a *correlation*. PMPP
#   and deep-learning libraries use the unflipped form, and so does this chapter. For a
#   symmetric filter (a blur) the two agree; for an edge filter they differ, so the checks use
#   random, asymmetric filters.
#
# Each output pixel costs `(2r + 1)²` multiply-adds and reads `(2r + 1)²` input pixels, and its
# neighbour reads almost the same pixels. That sharing is the subject of the chapter: who keeps
# the shared pixels close to the arithmetic, you (shared memory, tiles) or the hardware (caches)?
#
# ## The CPU baseline
#
# The spec in NumPy: pad the image with `r` rows and columns of zeros, then, for each weight, add
# the weight times a shifted view of the padded image: `(2r + 1)²` vectorized passes over the
# image. Here it is with three classic filters on chapter 3's test image:

# %%
def conv2d_numpy(image, F):
    """Zero-padded 2-D convolution with an unflipped filter, in the image's precision."""
    r = F.shape[0] // 2
    h, w = image.shape
    padded = np.zeros((h + 2 * r, w + 2 * r), dtype=image.dtype)
    padded[r:r + h, r:r + w] = image
    out = np.zeros_like(image)
    for a in range(2 * r + 1):
        for b in range(2 * r + 1):
            out += F[a, b] * padded[a:a + h, b:b + w]
    return out


image = ag.problems.ch03.to_gray(ag.problems.ch03.test_image(192, 256, seed=3)).astype(np.float32)
g = np.array([1, 4, 6, 4, 1], np.float32)
filters = {
    "blur (5 × 5, r = 2)": np.outer(g, g) / g.sum() ** 2,
    "vertical edges (Sobel, r = 1)": np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], np.float32),
    "sharpen (r = 1)": np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32),
}
fig, axes = plt.subplots(1, 4, figsize=(14, 3.3))
axes[0].imshow(image, cmap="gray", vmin=0, vmax=1)
axes[0].set_title("input")
for ax, (name, F) in zip(axes[1:], filters.items()):
    result = conv2d_numpy(image, F)
    ax.imshow(np.abs(result) if "edges" in name else result, cmap="gray")
    ax.set_title(name)
for ax in axes:
    ax.axis("off")
plt.show()

big = ag.problems.ch07.fast_image(np.random.default_rng(0), (2048, 2048))
F_random = ag.problems.ch07.conv_filter(1, 2)          # a random 5 × 5 filter
t0 = time.perf_counter()
conv2d_numpy(big, F_random)
numpy_seconds = time.perf_counter() - t0
print(f"NumPy, 2048 × 2048 image, 5 × 5 filter: {numpy_seconds * 1e3:.0f} ms, "
      f"{2 * 25 * big.size / numpy_seconds / 1e9:.2f} GFLOP/s, "
      f"{8 * big.size / numpy_seconds / 1e9:.2f} GB/s of image in and out (one core)")

# %% [markdown]
# ## Exercise 7.1 · A convolution kernel, one thread per output pixel (3 points)
#
# Write `conv2d_basic_kernel(image, F, out, r)`: `image` and `out` are `H × W` float32 device
# arrays, `F` is a `(2r + 1) × (2r + 1)` float32 device array and `r` an int. One thread per
# output pixel: take `col, row = cuda.grid(2)` (x runs along a row, as in chapter 3); if
# `(row, col)` is inside the image, add up `F[a, b] * image[row + a − r, col + b − r]` over the
# window in a float32 accumulator, leaving out (or counting as 0) every pixel outside the image,
# and store the sum in `out[row, col]`. Roughly 10 lines. This is PMPP §7.2's kernel.
#
# Count its memory traffic before you write it: per output pixel, `(2r + 1)²` loads from the
# image and `(2r + 1)²` loads from `F` for `(2r + 1)²` multiply-adds. Two 4-byte loads per two
# floating-point operations is **0.25 FLOP/byte**, as low as chapter 5's naive matmul.
#
# **What the check does.** It launches your kernel with blocks of 16 × 8 threads (x × y) over a
# 23 × 37 image with a 3 × 3 filter, a 19 × 24 image with a 5 × 5 filter, and a 4 × 3 image with
# a 5 × 5 filter (bigger than the image: every window is mostly ghost cells), and on a GPU first
# over a 1080 × 1921 image with a 5 × 5 filter; the hidden tests
# use other sizes, radii up to 3 and other block shapes. The images are chapter 3's test image in
# gray (sharp edges, a disk, a one-pixel line, a checkerboard, noise) with a random offset and
# scale; the filters are random, of both signs, and not symmetric. `out` is filled with NaN
# first, and every pixel is compared with the float64 result, allowing an error of
# `γₙ · Σ |F[a, b] · image[…]|` with `n = (2r + 1)²` (`γₙ = n·u / (1 − n·u)`, `u = 2⁻²⁴`): any
# order of summation in float32, with fused multiply-adds or without, passes.

# %% nbgrader={"grade": false, "grade_id": "conv2d_basic_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
from numba import float32


@cuda.jit
def conv2d_basic_kernel(image, F, out, r):
    ### BEGIN SOLUTION
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(2 * r + 1):
            i = row + a - r
            if 0 <= i < h:
                for b in range(2 * r + 1):
                    j = col + b - r
                    if 0 <= j < w:
                        acc += F[a, b] * image[i, j]
        out[row, col] = acc
    ### END SOLUTION


# %% [markdown]
# Try it on a corner of the test image (small, because CPU mode simulates every thread), with
# the edge filter:

# %%
small = image[:24, :32].copy()
F_edges = filters["vertical edges (Sobel, r = 1)"]
grid = ((small.shape[1] + 15) // 16, (small.shape[0] + 7) // 8)
d_small = cuda.to_device(small)
d_out = cuda.to_device(np.full(small.shape, np.nan, np.float32))
conv2d_basic_kernel[grid, (16, 8)](d_small, cuda.to_device(F_edges), d_out, 1)
got = d_out.copy_to_host()
print(f"pixels never written: {np.isnan(got).sum()}; largest difference from NumPy: "
      f"{np.nanmax(np.abs(got - conv2d_numpy(small, F_edges))):.2e}")

# %% nbgrader={"grade": true, "grade_id": "conv2d_basic_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch07.conv2d_basic.check(conv2d_basic_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch07.conv2d_basic.check_hidden(conv2d_basic_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: half a ghost-cell test
#
# A common slip: test only the far edges, `i < h` and `j < w`, because an index past the end is
# the mistake people think of (CPU mode stops with an `IndexError`; a GPU reads memory past the
# array, or stops with an illegal-address error). The near edges then make negative indices, and
# in Numba, as in NumPy, `image[-1, j]` is not an error: it is the **last** row. **Predict before
# you run**: which output pixels come out wrong, and what do they contain?

# %%
@cuda.jit
def conv2d_half_ghost_test(image, F, out, r):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                i, j = row + a - r, col + b - r
                if i < h and j < w:                  # the `0 <=` halves are missing
                    acc += F[a, b] * image[i, j]
        out[row, col] = acc


F_blur = filters["blur (5 × 5, r = 2)"]
d_bad = cuda.to_device(np.full(small.shape, np.nan, np.float32))
conv2d_half_ghost_test[grid, (16, 8)](d_small, cuda.to_device(F_blur), d_bad, 2)
diff = np.abs(d_bad.copy_to_host() - conv2d_numpy(small, F_blur))
wrong = diff > 1e-5
rows, cols = np.nonzero(wrong)
print(f"{wrong.sum()} of {wrong.size} pixels are wrong; all of them in the first 2 rows or the "
      f"first 2 columns: {bool(np.all((rows < 2) | (cols < 2)))}")
fig, axes = plt.subplots(1, 2, figsize=(9, 3))
axes[0].imshow(conv2d_numpy(small, F_blur), cmap="gray")
axes[0].set_title("right (NumPy)")
axes[1].imshow(diff, cmap="magma")
axes[1].set_title("|half ghost test − right|")
for ax in axes:
    ax.axis("off")
plt.show()

# %% [markdown]
# Only the top `r` rows and the left `r` columns are wrong, and they are wrong quietly: their
# windows reached "above" the image and picked up pixels from its bottom rows (and from the end of
# the row, on the left). The far edges stay right because their test is there. Neither CPU mode
# nor a GPU complains: a negative index is legal. The tiled kernel below needs the same
# two-sided test to decide which tile cells are ghosts.
#
# ## Constant memory and caching (PMPP §7.3)
#
# Look at the filter reads of your kernel: at each step of the loops **every** thread reads the
# same `F[a, b]`. The filter is small, it does not change while the kernel runs, and all the
# threads of a warp read the same element at the same time. CUDA has a memory made for exactly
# that: **constant memory**, 64 KB of device memory that kernels can only read, served through a
# small **constant cache** in each SM. When the 32 threads of a warp read one address, the
# constant cache answers all of them at once (a *broadcast*); when they read different addresses,
# it answers them one address after another. So constant memory suits values that are the same
# across a warp, like filter weights, and little else.
#
# With the filter there, the loop makes one global load (the image pixel) per multiply-add
# instead of two: **0.5 FLOP/byte**. The weights come from a cache that the image's traffic never
# evicts.
#
# **CUDA C** (PMPP's code) declares the filter as a `__constant__` array and fills it from the
# host with `cudaMemcpyToSymbol` before the launch. **Numba has no such call.** Instead,
# `cuda.const.array_like(A)` inside a kernel, where `A` is a NumPy array the kernel's code can see
# (a module global, or a variable of an enclosing function), copies `A`'s values into the kernel's
# constant memory **when the kernel is compiled**: at its first launch with a given set of
# argument types. From then on the values belong to the compiled code, and changing `A` changes
# nothing. (Numba does this for any global or enclosing-function array a kernel reads;
# `cuda.const.array_like` says that you mean it.)
#
# So a new filter needs a new kernel. The pattern that makes this painless is a **kernel
# factory**: a Python function that takes the filter, defines a kernel that uses it, and returns
# that kernel. Each call makes a kernel specialised to one filter. A bonus: `r` becomes a
# compile-time constant, so the compiler knows every loop's trip count and can unroll the loops.
#
# ```python
# def make_scaled_copy(c):          # a factory: c is frozen into each kernel it makes
#     @cuda.jit
#     def scaled_copy(x, out):
#         i = cuda.grid(1)
#         if i < out.size:
#             out[i] = c * x[i]
#     return scaled_copy
#
# triple = make_scaled_copy(3.0)    # a kernel that multiplies by 3
# ```
#
# The cell below shows the trap a factory avoids: a kernel that reads a global filter is
# launched, the global is replaced, and the kernel is launched again. **Predict** what the second
# launch prints, on a GPU and in CPU mode.

# %%
FILTER = np.full((3, 3), 1 / 9, np.float32)      # a 3 × 3 box blur, in a global


@cuda.jit
def conv3x3_global_filter(image, out):
    Fc = cuda.const.array_like(FILTER)
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(3):
            for b in range(3):
                i, j = row + a - 1, col + b - 1
                if 0 <= i < h and 0 <= j < w:
                    acc += Fc[a, b] * image[i, j]
        out[row, col] = acc


d_ones, d_res = cuda.to_device(np.ones((4, 4), np.float32)), cuda.device_array((4, 4), np.float32)
conv3x3_global_filter[(1, 1), (4, 4)](d_ones, d_res)
print(f"box blur of an image of ones, pixel (1, 1): {d_res.copy_to_host()[1, 1]:.4f}")
FILTER = np.zeros((3, 3), np.float32)            # a new filter: all zeros
conv3x3_global_filter[(1, 1), (4, 4)](d_ones, d_res)
print(f"after FILTER = zeros, pixel (1, 1):          {d_res.copy_to_host()[1, 1]:.4f}")

# %% [markdown]
# On a GPU the second launch still prints 1: the kernel was compiled at the first launch with
# the box blur inside it, and the second launch reuses that code. In CPU mode it prints 0: the
# simulator runs the kernel's Python source at every launch and looks the global up again. This
# is one of the few places where CPU mode and a GPU disagree, and the reason the next check calls
# **your factory** once for every filter instead of changing a global.
#
# ## Exercise 7.2 · The filter in constant memory (2 points)
#
# Complete `make_conv2d_constant(F)`. Given a `(2r + 1) × (2r + 1)` float32 NumPy array `F` (on
# the host), it returns a kernel `conv2d_constant_kernel(image, out)` that computes the same
# convolution as exercise 7.1, with the filter read from constant memory. The skeleton defines
# the factory, `r`, and the kernel's first line; write the rest of the kernel: 7.1's body with
# `Fc` for `F`. Roughly 10 lines.
#
# **What the check does.** For each case it makes a new random filter, calls your
# `make_conv2d_constant(F)` **once**, and launches the kernel it returns with blocks of 16 × 8
# threads (hidden: other shapes) over the same images as 7.1's check. A kernel that reads another
# filter (a global, the previous case's) fails. On a GPU each case compiles a new kernel, so the
# check takes a few seconds.

# %% nbgrader={"grade": false, "grade_id": "conv2d_constant_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
from numba import float32


def make_conv2d_constant(F):
    """A kernel conv2d_constant_kernel(image, out) with the filter F frozen into constant memory."""
    r = F.shape[0] // 2                  # a Python int: a constant in the compiled kernel

    @cuda.jit
    def conv2d_constant_kernel(image, out):
        Fc = cuda.const.array_like(F)    # the filter, in constant memory
        ### BEGIN SOLUTION
        col, row = cuda.grid(2)
        h, w = image.shape
        if row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                i = row + a - r
                if 0 <= i < h:
                    for b in range(2 * r + 1):
                        j = col + b - r
                        if 0 <= j < w:
                            acc += Fc[a, b] * image[i, j]
            out[row, col] = acc
        ### END SOLUTION

    return conv2d_constant_kernel


# %% [markdown]
# Try it with the sharpening filter:

# %%
F_sharpen = filters["sharpen (r = 1)"]
sharpen_kernel = make_conv2d_constant(F_sharpen)
d_out = cuda.to_device(np.full(small.shape, np.nan, np.float32))
sharpen_kernel[grid, (16, 8)](d_small, d_out)
got = d_out.copy_to_host()
print(f"pixels never written: {np.isnan(got).sum()}; largest difference from NumPy: "
      f"{np.nanmax(np.abs(got - conv2d_numpy(small, F_sharpen))):.2e}")

# %% nbgrader={"grade": true, "grade_id": "conv2d_constant_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch07.conv2d_constant.check(make_conv2d_constant)
### BEGIN HIDDEN TESTS
ag.problems.ch07.conv2d_constant.check_hidden(make_conv2d_constant)
### END HIDDEN TESTS

# %% [markdown]
# ## Tiling with halo cells (PMPP §7.4)
#
# Per output pixel the constant-memory kernel still loads `(2r + 1)²` image pixels, and
# neighbouring threads load nearly the same ones: pixel `image[i, j]` is read by every output
# pixel whose window covers it, `(2r + 1)²` of them. Chapter 5's recipe applies: load a tile once
# into shared memory, then compute from there.
#
# A block computes an **output tile** of `out_tile × out_tile` pixels. Those need an **input
# tile** larger by `r` on every side: `in_tile = out_tile + 2r`. The extra ring, `r` pixels wide,
# is the **halo**; the input tiles of neighbouring blocks overlap on their halos, so halo pixels
# are loaded by several blocks. PMPP's design, the one you will write:
#
# 1. Blocks of `in_tile × in_tile` threads, **one thread per input-tile pixel**: each thread
#    loads its pixel of the input tile into shared memory, or **0** where that pixel lies outside
#    the image (a ghost cell). Which pixel is that? Block `(bx, by)` owns one output tile, and its
#    input tile sticks out by `r` on every side of it.
# 2. A barrier: the tile is complete before anyone reads it.
# 3. The threads of the inner `out_tile × out_tile` square of the block each compute the output
#    pixel at the position of the pixel they loaded, from the tile alone, and store it if it is
#    inside the image. The halo threads only load.
#
# One barrier is enough: the tile is written once, then only read, and no later phase overwrites
# it (unlike chapter 5's loop over tiles).
#
# The picture shows the top-left block of an image, for `in_tile = 8` and `r = 1`: its input tile
# sticks out of the image by one row and one column (ghost cells, zeros), and the input tile of
# the next block to the right (dashed) overlaps it by `2r = 2` columns.

# %%
in_t, r_demo = 8, 1
out_t = in_t - 2 * r_demo
img_h, img_w = 9, 15
fig, ax = plt.subplots(figsize=(9, 5.5))
ax.add_patch(plt.Rectangle((0, 0), img_w, img_h, facecolor="#f2f2f2", edgecolor="black", lw=2))
for y in range(-r_demo, in_t - r_demo):
    for x in range(-r_demo, in_t - r_demo):
        ghost = y < 0 or x < 0
        inner = 0 <= y < out_t and 0 <= x < out_t
        face = "#3b6ea8" if inner else ("white" if ghost else "#cfe0f3")
        ax.add_patch(plt.Rectangle((x, y), 1, 1, facecolor=face, edgecolor="#888",
                                   hatch="//" if ghost else None))
ax.add_patch(plt.Rectangle((out_t - r_demo, -r_demo), in_t, in_t, fill=False,
                           edgecolor="tab:orange", lw=2.5, ls="--"))
legend = [plt.Rectangle((0, 0), 1, 1, facecolor="#3b6ea8", edgecolor="#888"),
          plt.Rectangle((0, 0), 1, 1, facecolor="#cfe0f3", edgecolor="#888"),
          plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="#888", hatch="//"),
          plt.Rectangle((0, 0), 1, 1, fill=False, edgecolor="tab:orange", lw=2.5, ls="--"),
          plt.Rectangle((0, 0), 1, 1, facecolor="#f2f2f2", edgecolor="black", lw=2)]
ax.legend(legend, [f"output tile ({out_t} × {out_t}): threads that compute",
                   "halo inside the image: loaded, not computed",
                   "ghost cells: outside the image, stored as 0",
                   "the next block's input tile", "the image"],
          loc="upper left", bbox_to_anchor=(1.01, 1.0))
ax.set_xlim(-2, img_w + 1)
ax.set_ylim(img_h + 1, -2)
ax.set_aspect("equal")
ax.axis("off")
ax.set_title(f"block (0, 0): an {in_t} × {in_t} input tile for a {out_t} × {out_t} output tile")
plt.show()

# %% [markdown]
# **Traffic.** A block loads `in_tile²` pixels for `out_tile²` outputs: `in_tile² / out_tile²`
# loads per output pixel instead of `(2r + 1)²`. For `in_tile = 32` and `r = 2` that is
# 1024 / 784 ≈ 1.31 loads against 25, about 19 times fewer. The price: a fraction
# `1 − out_tile² / in_tile²` of the threads only load (23% here; 44% for 16 × 16 tiles), and
# every output still reads `(2r + 1)²` values, now from shared memory.
#
# ## Exercise 7.3 · A tiled convolution with halo cells (4 points + 2 for speed)
#
# Complete `make_conv2d_tiled(F, in_tile)`. It returns a kernel `conv2d_tiled_kernel(image, out)`
# that is launched with blocks of `in_tile × in_tile` threads and a grid of
# `(ceil(W / out_tile), ceil(H / out_tile))` blocks (x across the columns), where
# `out_tile = in_tile − 2r`. The skeleton gives `r`, `out_tile`, the filter in constant memory and
# the shared tile, `cuda.shared.array((in_tile, in_tile), float32)`: its shape comes from the
# factory's arguments, so it is a compile-time constant, as a shared array's shape must be. Write
# steps 1 to 3 above. Roughly 15 lines.
#
# Mind the edges: a thread whose pixel lies outside the image still stores its 0 and still
# reaches the barrier (a barrier waits for every thread of the block); only the store of a
# result is skipped.
#
# **What the check does.** As for 7.2 (a new random filter per case, your factory called once
# per filter and tile size), launched as above with `in_tile = 16` for the visible cases; the
# hidden cases use 16 and 32, so the tile side must come from `in_tile`, not from a constant of
# your own. In CPU mode the race detector watches every access to `tile`: a missing barrier fails
# on every run, with a message naming both threads and both lines.

# %% nbgrader={"grade": false, "grade_id": "conv2d_tiled_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
from numba import float32


def make_conv2d_tiled(F, in_tile):
    """A kernel conv2d_tiled_kernel(image, out) for blocks of in_tile × in_tile threads, each block
    computing an out_tile × out_tile tile of the output from an input tile in shared memory."""
    r = F.shape[0] // 2
    out_tile = in_tile - 2 * r

    @cuda.jit
    def conv2d_tiled_kernel(image, out):
        Fc = cuda.const.array_like(F)
        tile = cuda.shared.array((in_tile, in_tile), float32)
        ### BEGIN SOLUTION
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * out_tile + ty - r      # the input pixel this thread loads
        col = cuda.blockIdx.x * out_tile + tx - r
        h, w = image.shape
        if 0 <= row < h and 0 <= col < w:
            tile[ty, tx] = image[row, col]
        else:
            tile[ty, tx] = float32(0)                   # a ghost cell
        cuda.syncthreads()                              # the tile is complete
        if r <= ty < r + out_tile and r <= tx < r + out_tile and row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    acc += Fc[a, b] * tile[ty - r + a, tx - r + b]
            out[row, col] = acc
        ### END SOLUTION

    return conv2d_tiled_kernel


# %% [markdown]
# Try it with the 5 × 5 blur and 16 × 16 tiles, launched as the check launches it:

# %%
tiled_blur = make_conv2d_tiled(F_blur, 16)
out_tile = 16 - 2 * 2
tiled_grid = ((small.shape[1] + out_tile - 1) // out_tile, (small.shape[0] + out_tile - 1) // out_tile)
d_out = cuda.to_device(np.full(small.shape, np.nan, np.float32))
tiled_blur[tiled_grid, (16, 16)](d_small, d_out)
got = d_out.copy_to_host()
print(f"grid {tiled_grid} of 16 × 16 blocks; pixels never written: {np.isnan(got).sum()}; "
      f"largest difference from NumPy: {np.nanmax(np.abs(got - conv2d_numpy(small, F_blur))):.2e}")

# %% nbgrader={"grade": true, "grade_id": "conv2d_tiled_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch07.conv2d_tiled.check(make_conv2d_tiled)
### BEGIN HIDDEN TESTS
ag.problems.ch07.conv2d_tiled.check_hidden(make_conv2d_tiled)
### END HIDDEN TESTS

# %% [markdown]
# **Speed (2 points, on a GPU).** An 8191 × 8193 image and a 5 × 5 filter, `in_tile = 32`, fresh
# inputs and a NaN-filled output for each of 23 calls (3 to warm up, 20 timed), 4096 random
# output pixels checked after every call. The bar: 15% of the speed of the course's reference
# kernel, timed in the same run (it uses no shared memory: each thread computes 8 rows × 2
# columns of outputs and keeps the input rows it loads in registers, in straight-line code
# generated for the filter; on the course's H200 it took 0.184 ms and this design 0.81 ms, 23%
# of its speed, which passes), and 100 times NumPy on this machine's CPU. In CPU mode the
# cell says that speed needs a GPU.

# %% nbgrader={"grade": true, "grade_id": "conv2d_tiled_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch07.conv2d_tiled.check_speed(make_conv2d_tiled)

# %% [markdown]
# ## Break it: no barrier
#
# The factory below makes your tiled kernel with the `cuda.syncthreads()` removed. **Predict
# before you run**: in CPU mode, which two lines will the race detector name? On a GPU, which
# output pixels are most likely to be wrong, and will they be wrong on every run?

# %%
from autograder import SharedMemoryRace


def make_tiled_no_barrier(F, in_tile):
    r = F.shape[0] // 2
    out_tile = in_tile - 2 * r

    @cuda.jit
    def tiled_no_barrier(image, out):
        Fc = cuda.const.array_like(F)
        tile = cuda.shared.array((in_tile, in_tile), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * out_tile + ty - r
        col = cuda.blockIdx.x * out_tile + tx - r
        h, w = image.shape
        tile[ty, tx] = image[row, col] if 0 <= row < h and 0 <= col < w else float32(0)
        # the cuda.syncthreads() is missing here
        if r <= ty < r + out_tile and r <= tx < r + out_tile and row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    acc += Fc[a, b] * tile[ty - r + a, tx - r + b]
            out[row, col] = acc

    return tiled_no_barrier


d_out = cuda.to_device(np.full(small.shape, np.nan, np.float32))
try:
    make_tiled_no_barrier(F_blur, 16)[tiled_grid, (16, 16)](d_small, d_out)
    cuda.synchronize()
    worst = np.nanmax(np.abs(d_out.copy_to_host() - conv2d_numpy(small, F_blur)))
    print(f"the launch finished; largest difference from NumPy: {worst:.2e}. On a GPU this can be "
          "right on one run and wrong on the next: nothing checks the race here.")
except SharedMemoryRace as race:
    print("CPU mode stopped the launch:\n")
    print(str(race).replace(": shared", ":\nshared", 1))

# %% [markdown]
# In CPU mode the message names an element of `tile` that one thread **read** on the `acc +=`
# line while another thread **wrote** it on the load line, with no barrier between. On a GPU,
# the threads of one warp run together, so a thread reading a tile element loaded by its own warp
# usually sees it; the reads that cross into *another* warp's rows (the rows above and below, for
# a 16 × 16 block whose warps are pairs of rows) see whatever that warp has or has not stored yet.
# Such a kernel can pass a test a thousand times and fail on another GPU or another image size.
#
# ## Predict: what each kernel would move without caches
#
# Four counts, per output pixel, in float32 (4 bytes), for an `H × W` image and a radius-`r`
# filter, **assuming that no load is ever served by a cache**: every load goes to DRAM. What each
# kernel loads, in words; the counts are yours to work out:
#
# - **basic (7.1)**: every tap of the window reads one pixel of the image and one weight of `F`
#   from global memory;
# - **constant (7.2)**: the same image reads, but the weights come from the constant cache (do
#   not count them);
# - **tiled (7.3)**: each block loads its whole input tile once, halo included, and computes the
#   outputs of its output tile from it;
# - **ideal**: every pixel of the image read once.
#
# Every kernel also stores its output pixel once.
#
# For the tiled count take `H` and `W` to be multiples of `out_tile` (so every block is full) and
# ignore the ghost cells. Multiply by `H · W` for the bytes. All four do the same arithmetic:
# `2 (2r + 1)²` FLOPs per output pixel (count the ghost terms too). As in chapter 5, a kernel
# cannot finish before its arithmetic is done at the peak rate, nor before its bytes have crossed
# the memory bus: its time is at least the larger of the two.
#
# ## Exercise 7.4 · Four lower bounds (2 points)
#
# Write `conv_time_bounds(height, width, r, in_tile, peak_flops, bandwidth)`: `height`, `width`,
# `r` and `in_tile` are Python ints, `peak_flops` (FLOP/s) and `bandwidth` (bytes/s) Python
# floats. Return a tuple of four floats, the lower bounds in **seconds** of
# `(basic, constant, tiled, ideal)`, each from the bytes you counted above and the arithmetic.
# Roughly 6 lines.
#
# **Predict first, by hand** (then let your function check you): on the H200-like device of
# chapter 5 (67 TFLOP/s float32, 4.8 TB/s) and the speed test's 8191 × 8193 image, with a 5 × 5
# filter and 32 × 32 tiles, how many milliseconds at least for each kernel? Which of them are
# memory bound? By what factor should the tiled kernel beat the basic one, if this model were
# right?
#
# **What the check does.** It calls your function on 8 sets of values (the first: the H200-like
# device on 8191 × 8193 with r = 2 and 32 × 32 tiles, r = 1 with 16 × 16, r = 7 with 32 × 32; then
# a one-pixel image), and the hidden tests on 200 random ones (sides up to 16384, r from 1 to 7,
# `in_tile` 8, 16 or 32 and larger than 2r, 0.1 to 300 TFLOP/s, 30 GB/s to 10 TB/s). Each of the
# four results is compared with the bound computed in float64, allowing a few roundings: any
# algebraically equal formula passes; a number rounded by hand does not.

# %% nbgrader={"grade": false, "grade_id": "conv_time_bounds_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def conv_time_bounds(height, width, r, in_tile, peak_flops, bandwidth):
    """Lower bounds in seconds (basic, constant, tiled, ideal) when no load is served by a cache."""
    ### BEGIN SOLUTION
    taps = (2 * r + 1) ** 2
    pixels = height * width
    loads_per_output = in_tile ** 2 / (in_tile - 2 * r) ** 2     # tiled: the halo is loaded too
    compute = 2 * taps * pixels / peak_flops
    per_pixel = (4 * (2 * taps + 1), 4 * (taps + 1), 4 * (loads_per_output + 1), 8)
    return tuple(max(compute, q * pixels / bandwidth) for q in per_pixel)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "conv_time_bounds_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch07.conv_time_bounds.check(conv_time_bounds)
### BEGIN HIDDEN TESTS
ag.problems.ch07.conv_time_bounds.check_hidden(conv_time_bounds)
### END HIDDEN TESTS

# %% [markdown]
# Your bounds for the H200-like device and the speed test's image:

# %%
H, W, r_big, tile_big = 8191, 8193, 2, 32
peak, bandwidth = 67e12, 4.8e12
names = ("basic (7.1)", "constant (7.2)", f"tiled (7.3), {tile_big} × {tile_big}", "ideal")
bounds = dict(zip(names, conv_time_bounds(H, W, r_big, tile_big, peak, bandwidth)))
compute_ms = 2 * (2 * r_big + 1) ** 2 * H * W / peak * 1e3
for name, seconds in bounds.items():
    limit = "compute" if seconds * 1e3 <= compute_ms * (1 + 1e-12) else "memory"
    print(f"{name:22s} at least {seconds * 1e3:7.3f} ms ({limit} bound)")
print(f"the model's promise for tiling: {bounds[names[0]] / bounds[names[2]]:.0f}× faster than "
      f"the basic kernel")
fig, ax = plt.subplots(figsize=(7, 3))
ax.barh(list(bounds)[::-1], [s * 1e3 for s in list(bounds.values())[::-1]], color="#cfe0f3",
        edgecolor="#3b6ea8")
ax.axvline(compute_ms, color="grey", ls=":", label="the arithmetic alone, at the peak rate")
ax.legend(loc="lower right", fontsize=8)
ax.set_xscale("log")
ax.set_xlabel("lower bound (ms, log scale)")
ax.set_title(f"{H} × {W} image, 5 × 5 filter, H200-like device, nothing cached")
plt.show()

# %% [markdown]
# ## Measure it
#
# On a GPU, the cell below times your three kernels and the course's reference on the 8191 × 8193
# image (268 MB, several times the L2 cache, so no run finds the image cached from the last)
# with a random 5 × 5 filter, and a copy of the same bytes (the practical bandwidth). For each
# kernel it prints the time, the bandwidth reached on the bytes the convolution must move
# (`8 · H · W`: the image read once, the output written once), the bound your function gives
# with this GPU's copy bandwidth and FP32 peak, and, where the kernel's requests exceed what DRAM
# could deliver in the time measured, the smallest fraction of those requests that caches must
# have served: `1 − time × bandwidth / bytes requested`; and, for scale, the NumPy baseline's
# time scaled up from the 2048 × 2048 image. A chart then shows each kernel's time (bars), your
# bound for it (orange marks) and the copy (dashed). In CPU mode the cell draws that chart from
# the course's H200 run of the solution's kernels.

# %%
F_big = ag.problems.ch07.conv_filter(1, r_big)
why = ag.timing.not_measured()
if why:
    print(why, f"On a GPU, this cell times conv2d_basic_kernel, your constant and tiled "
          f"kernels and the course reference on a {H} × {W} image with a 5 × 5 filter, and sets "
          "them against a copy of the same bytes and your bounds. Below, what the course "
          "measured with the solution's kernels:")
    ag.experiments.steps("ch07_conv2d").show()
else:
    from autograder import timing
    from autograder.bench import peak_fp32_flops
    d_image = cuda.device_array((H, W), np.float32)
    timing.fill_uniform(d_image, seed=7)
    d_big_out = cuda.device_array((H, W), np.float32)
    d_F = cuda.to_device(F_big)
    nbytes, flops = 8 * H * W, 2 * (2 * r_big + 1) ** 2 * H * W
    grid16 = ((W + 15) // 16, (H + 15) // 16)
    out_big = tile_big - 2 * r_big
    grid_tiled = ((W + out_big - 1) // out_big, (H + out_big - 1) // out_big)
    k_constant, k_tiled = make_conv2d_constant(F_big), make_conv2d_tiled(F_big, tile_big)
    k_reference = ag.problems.ch07.reference_conv2d_tiled()(F_big)
    ref_grid, ref_block = ag.problems.ch07.reference_shape(H, W)
    launches = {
        names[0]: lambda i: conv2d_basic_kernel[grid16, (16, 16)](d_image, d_F, d_big_out, r_big),
        names[1]: lambda i: k_constant[grid16, (16, 16)](d_image, d_big_out),
        names[2]: lambda i: k_tiled[grid_tiled, (tile_big, tile_big)](d_image, d_big_out),
        "course reference": lambda i: k_reference[ref_grid, ref_block](d_image, d_big_out),
    }
    measured = {name: timing.time_gpu(name, launch, nbytes=nbytes, flops=flops)
                for name, launch in launches.items()}
    copy = timing.copy_ceiling(nbytes)
    device_bounds = dict(zip(names, conv_time_bounds(H, W, r_big, tile_big, peak_fp32_flops(),
                                                     copy.gbps * 1e9)))
    requested = dict(zip(names, ag.problems.ch07.conv_bytes(H, W, r_big, tile_big)))
    print(f"{'kernel':22s} {'time':>9s} {'GB/s':>7s} {'of copy':>8s} {'bound':>9s}  served by caches")
    for name, s in measured.items():
        bound = device_bounds.get(name)
        line = (f"{name:22s} {s.median_ms:7.3f}ms {s.gbps:7.0f} {copy.median_ms / s.median_ms:8.0%} "
                + (f"{bound * 1e3:7.3f}ms" if bound else f"{'':9s}"))
        if name in requested:
            delivered = s.median_ms * 1e-3 * copy.gbps * 1e9
            line += f"  at least {max(0.0, 1 - delivered / requested[name]):.0%}"
        print(line)
    print(f"{'copy of the same bytes':22s} {copy.median_ms:7.3f}ms {copy.gbps:7.0f}")
    numpy_ms = numpy_seconds * 1e3 * H * W / big.size       # the CPU baseline, scaled up
    print(f"{'NumPy (1 core, scaled)':22s} {numpy_ms:7.0f}ms {nbytes / numpy_ms / 1e6:7.1f}   "
          f"{numpy_ms / min(s.median_ms for s in measured.values()):,.0f}× slower than your best")
    ag.experiments.steps("ch07_conv2d", measured, reference=copy,
                         bounds={name: b * 1e3 for name, b in device_bounds.items()},
                         title=f"2-D convolution of a {H} × {W} image, 5 × 5 filter").show()

# %% [markdown]
# ## Look inside: how many bytes did DRAM really move?
#
# The "served by caches" column above is a lower bound worked out from times. A profiler counts
# instead: Nsight Compute (`ncu`; chapter 5 shows how `ag.profile` runs it in a separate process,
# and GPU MODE's lecture 1, *How to profile CUDA kernels in PyTorch* by Mark Saroufim, shows it on
# PyTorch code) reads the bytes that DRAM delivered and received during one launch. The column to
# read is **× arrays**: those bytes divided by the bytes of the image and the output (the
# `8 · H · W` of the table above). Near 1, every pixel came from DRAM once, however many times
# the threads asked for it: the caches, or your tile, caught all the reuse. Well above 1, some
# pixels were fetched again. (Both kernels take only the image and the output: the filter is
# compiled into them.)
#
# On a GPU with `ncu` the cell profiles your constant-memory and tiled kernels on the
# 8191 × 8193 image (times under the profiler are longer than the timed ones: the clock is held
# at its base rate and the caches are emptied first). Elsewhere, and while the notebook is
# graded, it shows the course's report from an H200 where there is one.

# %%
why = ag.profiler.why_not()
if why is None:
    d_image = cuda.device_array((H, W), np.float32)
    ag.timing.fill_uniform(d_image, seed=7)
    d_big_out = cuda.device_array((H, W), np.float32)
    grid16 = ((W + 15) // 16, (H + 15) // 16)
    out_big = tile_big - 2 * r_big
    grid_tiled = ((W + out_big - 1) // out_big, (H + out_big - 1) // out_big)
    try:
        report = ag.profiler.live([
            ag.profile(make_conv2d_constant(F_big), grid16, (16, 16), d_image, d_big_out,
                       label=names[1], metrics="dram"),
            ag.profile(make_conv2d_tiled(F_big, tile_big), grid_tiled, (tile_big, tile_big),
                       d_image, d_big_out, label=names[2], metrics="dram"),
        ])
        report.show("dram")
    except ag.profiler.ProfilerFailed as failed:
        why = str(failed)
if why:
    print(why + "\n")
    ag.profiler.recorded("ch07").show("dram")

# %% [markdown]
# Set the measured bytes against your counts of Exercise 7.4, which assumed that no load is ever
# served by a cache: for 32 × 32 tiles and r = 2 the tiled kernel requests
# `4 · (32² / 28² + 1)` ≈ 9.2 bytes per pixel, 15% above the ideal 8, and the constant-memory
# kernel 104. If DRAM moved close to `8 · H · W` bytes for both of your kernels, the caches had
# already removed nearly all of the constant kernel's repeated traffic, and DRAM cannot explain
# why either kernel is slower than its bound: the time went somewhere inside the SM. Use the
# numbers in your answer below.

# %% [markdown]
# **Explain the gap (2 points, graded by your instructor).** Use the table above (without a GPU:
# your bounds and the H200 figures below). In four to eight sentences: (1) compare the basic and
# constant-memory kernels' times with their bounds: at least what fraction of their loads did the
# L1 and L2 caches serve (and where a kernel took longer than its no-cache bound, what limits it
# instead?), and why do these loads hit so well (think of what the threads of a warp, and
# neighbouring warps and blocks, read)? (2) The model promised tiling a
# large factor over the basic kernel: what did you measure, and why is it less? Give at least two
# reasons (what the caches had already done, the halo threads that only load, the barrier, the
# `(2r + 1)²` shared-memory reads per output, ...). (3) How far is the fastest kernel from the
# copy, and what would you change next?
#
# The course's H200 measured, on this image and filter, with the solution's kernels (the chart that
# the cell above draws in CPU mode): the basic kernel 3.85 ms, the constant-memory kernel 0.742 ms,
# the tiled kernel (32 × 32 tiles) 0.808 ms, the course reference 0.184 ms (70% of the copy's
# bandwidth), and a copy of the same bytes 0.129 ms (4.2 TB/s for these 0.54 GB). Its bounds, at
# that copy's bandwidth: basic 3.29 ms, constant 1.68 ms, tiled 0.149 ms. (The reference is
# straight-line code generated for one filter: 8 rows × 2 columns of outputs per thread, every
# weight an immediate operand and every running sum a register. The same design written as loops,
# one column per thread, took about 0.28 ms, 46% of the copy.)

# %% [markdown] nbgrader={"grade": true, "grade_id": "conv_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the release shows an empty answer cell), with the course's
# H200 figures.* (1) The basic kernel requests 4 · 51 = 204 bytes per pixel, 13.7 GB, so with no
# cache it could not finish in less than 3.29 ms at 4.2 TB/s; it took 3.85 ms, longer than that
# bound. In 3.85 ms DRAM could have delivered 16.0 GB, more than everything the kernel requests,
# so its time does not show how many loads the caches served (at least 0%): memory is not what
# limits it. What does is the work per output: 25 iterations, each with two global loads (the
# pixel and the weight), a multiply-add and the halo test, with a radius known only at run time. The constant-memory kernel shows what the
# caches do once those instructions shrink: it requests 4 · 26 = 104 bytes per pixel, 7.0 GB, and
# took 0.742 ms, in which DRAM could deliver at most 3.1 GB, so the caches served at least 56% of
# its requests; the reference requests 22 bytes per pixel, 1.5 GB, and in its 0.184 ms DRAM could
# deliver at most 0.77 GB, so at least 48%. They hit because the 32 threads of a warp read 32
# neighbouring pixels of one row (one or two cache lines, shared by the warp), the warps above and
# below read the same rows a few steps later while they are still in L1, neighbouring blocks share
# rows through L2, and every thread of a warp reads the same weight (the constant cache's
# broadcast). (2) The model gave tiling about 22× over the basic kernel (3.29 against 0.149 ms);
# measured, 4.8× (3.85 against 0.808 ms), and the tiled kernel was 9% *slower* than the
# constant-memory one (0.808 against 0.742 ms), whose bound is 11 times larger. In 0.808 ms DRAM
# could deliver 3.4 GB, more than five times the 0.62 GB the tiled kernel requests, so memory does
# not limit it either. Tiling removes traffic the caches were already absorbing for the constant
# kernel; what limits the tiled kernel is inside the SM: 23% of its threads only load, each
# 1024-thread block loads, waits at its barrier and only then computes (at most two such blocks fit
# on an SM, one if a thread needs more than 32 registers, so little else runs meanwhile), and each
# output still makes 25 shared-memory reads and 25 multiply-adds. (3) The fastest kernel, the
# reference, reaches 70% of the copy; the constant-memory kernel 17%, the tiled one 16%. To get
# closer, each thread must do fewer reads per output: compute more outputs per thread and keep the
# input rows in registers (the reference does 8 rows × 2 columns per thread, 4.5 loads per
# output), or, for a separable filter such as a Gaussian, do two 1-D passes of 5 taps each.

# %% [markdown]
# Questions to answer for yourself (not graded):
# 1. Constant memory holds 64 KB. What is the largest square float32 filter that fits? What
#    would happen to the constant cache's broadcast if each thread of a warp read a *different*
#    weight at the same time?
# 2. With `in_tile = 16`, what fraction of the threads compute for r = 1, 2, 3? And with 32?
#    What stops you from taking `in_tile = 64`?
# 3. PMPP §7.5 makes the block the size of the *output* tile, loads only that tile into shared
#    memory and reads the halo straight from global memory, counting on L1 and L2 to hold it.
#    Which threads need an extra branch there, and why can it be as fast as your kernel?
#
# ## Going further
# - PMPP ch. 7: §7.1 (background), §7.2 (parallel convolution: a basic algorithm), §7.3 (constant
#   memory and caching), §7.4 (tiled convolution with halo cells), §7.5 (tiled convolution using
#   caches for halo cells), §7.6 (summary); ch. 8 (stencils) applies the same ideas to grids of
#   physical simulations, and ch. 16 to the convolutional layers of neural networks.
# - Separable filters: a Gaussian blur is the outer product of two 1-D filters, so two 1-D passes
#   of `2r + 1` taps do the work of `(2r + 1)²`. Large filters are faster through the FFT; deep
#   learning libraries (cuDNN) turn convolutions into matrix multiplications or use Winograd's
#   transforms.
# - GPU MODE lecture 4 (compute and memory basics, PMPP ch. 4–5) and lecture 8 (CUDA performance
#   checklist).
# - **On AMD (HIP):** HIP has `__constant__` memory too; on AMD GPUs a load whose address is the
#   same across a wavefront can be done once by the scalar unit, through its own small cache:
#   the same broadcast idea. Shared memory is **LDS** (64 KB per compute unit on most chips) and
#   a wavefront is 64 threads on AMD's data-centre (CDNA) GPUs, so a 32 × 32 tile is 16
#   wavefronts and each wavefront covers two rows of it. Freezing a closure's NumPy array into
#   the compiled kernel is Numba behaviour; check numba-hip's documentation for what it does with
#   `cuda.const.array_like`.
