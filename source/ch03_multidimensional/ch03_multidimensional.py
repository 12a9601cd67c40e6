# %% [markdown]
# # Chapter 3 · Multidimensional grids and data: images and matrices
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 3.
#
# **Before you start:** chapters 1–2. **Time:** about 3 hours, reading and exercises included (more
# in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Launch a kernel on a **2-D grid of 2-D blocks** and turn each thread's `(x, y)` position into
#   a **row and a column** of an image or a matrix, with a bounds check on both.
# - Find any element of a 2-D (or 3-D) array in memory yourself: **row-major layout**, where
#   element `[row, col]` of a `height × width` array sits at `row * width + col`.
# - Write three kernels that each thread runs for one output element: an **RGB-to-gray**
#   conversion, a **box blur** whose edge pixels average fewer neighbours, and a **matrix
#   multiplication** of non-square matrices.
# - Compute, before running anything, the **least time** an image kernel can take (the bytes it
#   must move over the memory bandwidth), then measure how close your kernels come on a GPU.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda

ag.banner()

# %% [markdown]
# ## The idea: threads laid out like the data
#
# In chapter 2 every thread had one number, its global index `i`, and handled element `i` of a
# vector. Images and matrices have rows and columns, so CUDA lets you arrange threads the same way:
# a **block** can be a rectangle of threads (up to three dimensions, at most 1024 threads in all),
# and the **grid** a rectangle of blocks. Inside a kernel every thread reads its coordinates
# separately per dimension:
#
# | name | meaning |
# |---|---|
# | `cuda.threadIdx.x`, `cuda.threadIdx.y` | the thread's position inside its block |
# | `cuda.blockIdx.x`, `cuda.blockIdx.y` | the block's position inside the grid |
# | `cuda.blockDim.x`, `cuda.blockDim.y` | the block's size (threads per block along x and y) |
# | `cuda.gridDim.x`, `cuda.gridDim.y` | the grid's size (blocks along x and y) |
#
# The global position of a thread is built exactly like chapter 2's index, once per dimension:
#
# ```
# x = blockIdx.x * blockDim.x + threadIdx.x        (cuda.grid(2) returns (x, y))
# y = blockIdx.y * blockDim.y + threadIdx.y
# ```
#
# **Which one is the column?** By CUDA's convention, and in this course, **x runs along a row**
# (it is the column) and **y runs down the image** (it is the row), like the axes of a picture.
# So a kernel usually starts with `col, row = cuda.grid(2)`: note the order. The launch follows
# the same rule: `kernel[(blocks_x, blocks_y), (threads_x, threads_y)]` with
#
# ```
# blocks_x = ceil(width / threads_x)     # enough blocks across the columns
# blocks_y = ceil(height / threads_y)    # enough blocks down the rows
# ```
#
# The picture below shows a 3 × 2 grid of 4 × 4 blocks (x × y, drawn small) laid over a 10 × 7
# image (10 columns, 7 rows): the blocks cover 12 × 8 positions, so some threads sit outside the
# image and must do nothing. That is the 2-D version of chapter 2's `if i < n`.

# %%
width, height, tx, ty = 10, 7, 4, 4
bx, by = (width + tx - 1) // tx, (height + ty - 1) // ty
fig, ax = plt.subplots(figsize=(6, 4.2))
for r in range(by * ty):
    for c in range(bx * tx):
        inside = r < height and c < width
        block = (c // tx + r // ty) % 2
        ax.add_patch(plt.Rectangle((c, r), 1, 1, facecolor=["#cfe0f3", "#f3dccf"][block],
                                   edgecolor="white", alpha=1.0 if inside else 0.35))
        if not inside:
            ax.text(c + 0.5, r + 0.5, "×", ha="center", va="center", color="#999")
ax.add_patch(plt.Rectangle((0, 0), width, height, fill=False, edgecolor="black", lw=2))
ax.text(6 + 0.5, 5 + 0.5, "(x=6,\ny=5)", ha="center", va="center", fontsize=7)
ax.set_xlim(0, bx * tx); ax.set_ylim(by * ty, 0)
ax.set_xlabel("x = column →"); ax.set_ylabel("y = row ↓")
ax.set_title(f"grid {bx} × {by} blocks of {tx} × {ty} threads over a {width} × {height} image")
ax.set_aspect("equal")
plt.show()

# %% [markdown]
# ## Row-major layout: where `[row, col]` lives
#
# Memory is one long line of bytes, so a 2-D array must be flattened. NumPy, C and CUDA store
# arrays **row-major**: row 0 first, then row 1, and so on. In a `height × width` array, element
# `[row, col]` is at flat position `row * width + col`; in a `height × width × 3` RGB image,
# channel `ch` of pixel `[row, col]` is at `(row * width + col) * 3 + ch`. Numba lets you write
# `image[row, col, ch]` and does this arithmetic for you, but you should be able to do it
# yourself: the next chapters reason about which threads touch neighbouring addresses.

# %%
a = np.arange(12).reshape(3, 4)          # 3 rows, 4 columns
row, col = 2, 1
print(a)
print(f"a[{row}, {col}] = {a[row, col]};  flat position row * width + col = {row * 4 + col};"
      f"  a.ravel()[{row * 4 + col}] = {a.ravel()[row * 4 + col]}")
print("strides in bytes (one row, one column):", a.strides)

# %% [markdown]
# Moving one column to the right moves one element in memory; moving one row down moves a whole
# row (`width` elements). That asymmetry is why x, the fast-moving thread coordinate, is given to
# the column: threads next to each other in x then touch elements next to each other in memory,
# which chapter 5 will show is what GPU memory is fast at.
#
# ## The test image
#
# The exercises run on generated images, never downloaded ones. A smooth colour ramp would hide
# bugs (a blur of a ramp is the same ramp; a shifted ramp looks right), so the course's
# `test_image(height, width, seed)` adds sharp-edged shapes, a one-pixel line, a fine
# checkerboard and noise. Its rows and columns differ in number on purpose.

# %%
image = ag.problems.ch03.test_image(48, 64, seed=1)     # 48 rows, 64 columns, 3 channels
print(image.shape, image.dtype, f"values in [{image.min():.2f}, {image.max():.2f}]")
plt.figure(figsize=(4, 3))
plt.imshow(image)
plt.title("test_image(48, 64): rows × columns × channels")
plt.show()

# %% [markdown]
# ## The CPU baseline
#
# With NumPy, converting to gray is one weighted sum per pixel over the last axis: a matrix-vector
# product of the `(height · width) × 3` pixels with the three weights. We use the luma weights of
# the ITU-R BT.601 standard, **gray = 0.299 r + 0.587 g + 0.114 b** (green counts most because the
# eye is most sensitive to it). This is the spec your kernel is checked against.

# %%
weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)
gray_cpu = image @ weights
print(gray_cpu.shape, gray_cpu.dtype)

# %% [markdown]
# ## Exercise 3.1 · RGB to gray on a 2-D grid (3 points)
#
# Write the kernel `rgb_to_gray_kernel(image, gray)`: `image` is a device array of shape
# `(height, width, 3)` (float32), `gray` one of shape `(height, width)`. Each thread computes
# **one pixel**: it takes its column from x and its row from y, and if both are inside the image
# it stores `0.299 * r + 0.587 * g + 0.114 * b` for that pixel. Roughly 4 lines.
#
# **How the check launches it.** You write only the kernel; the check launches it as
# `rgb_to_gray_kernel[(ceil(width / 16), ceil(height / 8)), (16, 8)](image, gray)`: blocks of
# 16 × 8 threads (x × y; not square, so mixing up `blockDim.x` and `blockDim.y` shows), enough of
# them to cover every pixel. The hidden tests use other block shapes (8 × 16, 32 × 4, ...) and
# other image sizes, including one pixel wide or tall.
#
# **What the check does.** It fills `gray` with NaN, runs your kernel on images whose sides are
# not multiples of the block (29 × 45, 6 × 3, 1 × 1; values scaled and shifted at random) and
# compares every pixel with the exact weighted sum computed in float64. Three float32 products
# and two additions, plus the weights' own rounding to float32, stay within
# `γ₄ · (0.299|r| + 0.587|g| + 0.114|b|)`, where `γₖ = k·u / (1 − k·u)` and `u = 2⁻²⁴`: a few
# units in the last place. Arithmetic in float16 is thousands of times further off and fails. The
# verdict names the pixel as `gray[row, col]`.

# %% nbgrader={"grade": false, "grade_id": "rgb_to_gray_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def rgb_to_gray_kernel(image, gray):
    ### BEGIN SOLUTION
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])
    ### END SOLUTION


# %% [markdown]
# Try it on the test image first, launched the way the check will, and look at the result:

# %%
threads = (16, 8)
blocks = ((image.shape[1] + threads[0] - 1) // threads[0], (image.shape[0] + threads[1] - 1) // threads[1])
d_image = cuda.to_device(image)
d_gray = cuda.to_device(np.full(image.shape[:2], np.nan, np.float32))
rgb_to_gray_kernel[blocks, threads](d_image, d_gray)
gray = d_gray.copy_to_host()
print(f"launched {blocks} blocks of {threads} threads; pixels never written: {np.isnan(gray).sum()};"
      f" largest difference from NumPy: {np.nanmax(np.abs(gray - gray_cpu)):.2e}")
fig, axes = plt.subplots(1, 2, figsize=(8, 3))
axes[0].imshow(image); axes[0].set_title("input")
axes[1].imshow(gray, cmap="gray", vmin=0, vmax=1); axes[1].set_title("your kernel's gray")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "rgb_to_gray_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch03.rgb_to_gray.check(rgb_to_gray_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch03.rgb_to_gray.check_hidden(rgb_to_gray_kernel)
### END HIDDEN TESTS

# %% [markdown]
# **Speed (1 point, on a GPU).** The speed test runs your kernel 23 times on a 4097 × 8191 image
# (400 MB in, 134 MB out), with 32 × 8 blocks, fresh inputs and NaN-filled outputs every time,
# and checks 4096 random pixels after each call. It passes at 70% of the course's reference
# kernel's speed, timed in the same run, and 20× NumPy on one core. A straightforward kernel
# like yours should pass: the lesson here is that a kernel this simple is limited by memory,
# not arithmetic (more on that below). In CPU mode the cell says that timing needs a GPU.

# %% nbgrader={"grade": true, "grade_id": "rgb_to_gray_speed", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch03.rgb_to_gray.check_speed(rgb_to_gray_kernel)

# %% [markdown]
# ## Break it: swap x and y
#
# The commonest 2-D bug is taking the row from x: `row, col = cuda.grid(2)`. **Predict before
# you run**: the kernel below does exactly that (with a correct-looking bounds check) and is
# launched first on a square 24 × 24 image, then on a 24 × 40 one (24 rows, 40 columns), each
# with a grid built from the image's width (x) and height (y). Which pixels stay NaN in each case?

# %%
@cuda.jit
def gray_swapped(image, gray):
    row, col = cuda.grid(2)                     # wrong: x is the column
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])


for h, w in ((24, 24), (24, 40)):
    img = ag.problems.ch03.test_image(h, w, seed=2)
    out = cuda.to_device(np.full((h, w), np.nan, np.float32))
    gray_swapped[((w + 7) // 8, (h + 7) // 8), (8, 8)](cuda.to_device(img), out)
    missing = np.isnan(out.copy_to_host())
    cols = np.flatnonzero(missing.any(axis=0))
    print(f"{h} × {w}: {missing.sum()} of {h * w} pixels never written"
          + (f" (columns {cols[0]} to {cols[-1]})" if cols.size else " — the bug is invisible here"))

# %% [markdown]
# On the square image the grid is square too, so every `(row, col)` pair still gets exactly one
# thread: the swapped kernel computes the right picture, and a test on square inputs would pass
# it. On the 24 × 40 image the grid has 40 threads along x but only 24 along y; with x used as
# the row, no thread ever reaches a column beyond 23, and those pixels are never written. (With
# a more forgiving bounds check, the threads would read and write outside the image instead.)
# That is why every check in this chapter uses non-square shapes whose sides are not multiples
# of the block.
#
# ## Exercise 3.2 · A box blur (3 points)
#
# A blur replaces each pixel with the average of its neighbourhood. Here the neighbourhood is the
# square **window** of pixels at most `radius` rows and `radius` columns away: `(2·radius + 1)²`
# pixels in the middle of the image. Near an edge part of the window falls outside the image;
# those pixels do not exist, so they are **left out of both the sum and the count**: a corner
# pixel with `radius = 1` is the mean of 4 pixels, not 9.
#
# Write `blur_kernel(image, out, radius)`: `image` and `out` are `(height, width)` float32 device
# arrays, `radius` an integer. One thread per output pixel, launched like Exercise 3.1 (blocks of
# 16 × 8, grid from the image's width and height). Each thread loops over the rows
# `row - radius … row + radius` and columns `col - radius … col + radius`, adds the pixels that
# are inside the image, counts them, and stores `total / count`. Roughly 10 lines.
#
# **What the check does.** Gray images made from `test_image` (scaled and shifted at random),
# 22 × 33 with radius 2, 9 × 6 with radius 1 and 2 × 3 with radius 3 (a window larger than the
# image); the hidden tests use other shapes and radii. A sum of k float32 values is within
# `γₖ₋₁ · Σ|x|` of the exact sum and the division rounds once more, so a pixel may differ from
# the exact mean by at most `γₖ · mean|x| + 2u · |mean|` (k = the pixels inside its window).

# %% nbgrader={"grade": false, "grade_id": "blur_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def blur_kernel(image, out, radius):
    ### BEGIN SOLUTION
    col, row = cuda.grid(2)
    height, width = image.shape
    if row < height and col < width:
        total = np.float32(0)
        count = 0
        for r in range(max(row - radius, 0), min(row + radius + 1, height)):
            for c in range(max(col - radius, 0), min(col + radius + 1, width)):
                total += image[r, c]
                count += 1
        out[row, col] = total / count
    ### END SOLUTION


# %% [markdown]
# See what it does to the gray image from Exercise 3.1 (radius 2):

# %%
d_blurred = cuda.to_device(np.full(gray_cpu.shape, np.nan, np.float32))
blur_kernel[blocks, threads](cuda.to_device(gray_cpu), d_blurred, 2)
blurred = d_blurred.copy_to_host()
print("pixels never written:", np.isnan(blurred).sum(), "; corner:", blurred[0, 0],
      "= mean of the 3 × 3 corner block:", gray_cpu[:3, :3].mean())
fig, axes = plt.subplots(1, 2, figsize=(8, 3))
axes[0].imshow(gray_cpu, cmap="gray", vmin=0, vmax=1); axes[0].set_title("gray")
axes[1].imshow(blurred, cmap="gray", vmin=0, vmax=1); axes[1].set_title("blurred, radius 2")
plt.show()

# %% nbgrader={"grade": true, "grade_id": "blur_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch03.blur.check(blur_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch03.blur.check_hidden(blur_kernel)
### END HIDDEN TESTS

# %% [markdown]
# **Speed (1 point, on a GPU)**, as for Exercise 3.1: a 4097 × 8191 float32 image, radius 2
# (25 pixels read per output pixel), 70% of the reference's speed and 20× NumPy's summed-area
# table on one core.

# %% nbgrader={"grade": true, "grade_id": "blur_speed", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch03.blur.check_speed(blur_kernel)

# %% [markdown]
# ## Predict, then run: dividing by the full window
#
# A tempting shortcut is to divide every sum by `(2·radius + 1)²`. **Predict**: on a 12 × 20 image
# that is 1.0 everywhere, what does that kernel give in a corner, on an edge, and in the middle,
# for radius 1? Then run the cell.

# %%
@cuda.jit
def blur_full_window(image, out, radius):
    col, row = cuda.grid(2)
    height, width = image.shape
    if row < height and col < width:
        total = np.float32(0)
        for r in range(max(row - radius, 0), min(row + radius + 1, height)):
            for c in range(max(col - radius, 0), min(col + radius + 1, width)):
                total += image[r, c]
        out[row, col] = total / ((2 * radius + 1) * (2 * radius + 1))   # the shortcut


ones = cuda.to_device(np.ones((12, 20), np.float32))
res = cuda.device_array((12, 20), np.float32)
blur_full_window[((20 + 15) // 16, (12 + 7) // 8), (16, 8)](ones, res, 1)
res = res.copy_to_host()
print(f"corner {res[0, 0]:.3f}, edge {res[0, 5]:.3f}, middle {res[5, 5]:.3f}")

# %% [markdown]
# The corner is 4/9 ≈ 0.444 and an edge 6/9 ≈ 0.667: the border darkens, as if the image were
# surrounded by black. Some image libraries choose exactly that (zero padding); this exercise
# asks for the mean of the pixels that exist, which keeps a uniform image uniform.
#
# ## Exercise 3.3 · Matrix multiplication, one thread per output element (3 points)
#
# `C = A @ B` with `A` of shape `M × K` and `B` of shape `K × N` gives `C` of shape `M × N`:
#
# ```
# C[row, col] = A[row, 0] * B[0, col] + A[row, 1] * B[1, col] + ... + A[row, K-1] * B[K-1, col]
# ```
#
# a dot product of row `row` of A with column `col` of B. Write `matmul_kernel(A, B, C)` in which
# each thread computes **one element of C**: its column from x, its row from y, a bounds check on
# both against C's shape, and a loop over `k` from 0 to `K - 1` (`K = A.shape[1]`). Accumulate in a
# local variable and store once at the end. Roughly 7 lines.
#
# **How the check launches it.** Blocks of 16 × 8 threads (x × y), a grid of
# `(ceil(N / 16), ceil(M / 8))` blocks: x covers C's columns, y its rows. Apart from the 1 × 1
# case no matrix is square and no two of M, K, N are equal: 19 × 37 times 37 × 27, 5 × 3 times
# 3 × 7, and 1 × 1 times 1 × 1 (the hidden tests: other shapes, with K smaller than M and N
# too, and other blocks), so a loop over the wrong dimension, or A's and B's indices swapped,
# gives wrong values or runs off the end of an array.
#
# **What the check does.** Values with a random offset and scale; every element of C compared
# with the float64 product. A dot product of length K computed in float32 (fused multiply-adds or
# not) is within `γ_K · Σₖ |A[row, k] · B[k, col]|` of the exact one: that is the allowed error.

# %% nbgrader={"grade": false, "grade_id": "matmul_naive_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def matmul_kernel(A, B, C):
    ### BEGIN SOLUTION
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = np.float32(0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
    ### END SOLUTION


# %% [markdown]
# A small product you can check by eye: `A` has 2 rows and 3 columns, `B` 3 rows and 4 columns.

# %%
A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.ones((3, 4), dtype=np.float32)
d_C = cuda.to_device(np.full((2, 4), np.nan, np.float32))
matmul_kernel[((4 + 15) // 16, (2 + 7) // 8), (16, 8)](cuda.to_device(A), cuda.to_device(B), d_C)
print(d_C.copy_to_host())
print(A @ B)

# %% nbgrader={"grade": true, "grade_id": "matmul_naive_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch03.matmul_naive.check(matmul_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch03.matmul_naive.check_hidden(matmul_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Predict, then measure: how fast can an image kernel be?
#
# Before timing a kernel, work out the shortest time it could possibly take. The gray conversion
# does 5 floating-point operations per pixel and moves 16 bytes (12 read, 4 written): a GPU does
# tens of trillions of operations per second but moves only a few trillion bytes, so the bytes
# decide. Every pixel has to come in from memory once and go out once, and nothing crosses the
# memory bus faster than its **bandwidth** (bytes per second). Those two facts are enough to put a
# floor under the kernel's time; turning them into a formula is the exercise below.
#
# The blur reads 25 pixels per output pixel at radius 2, but its neighbours read the same ones:
# if the caches keep them (they mostly do), each pixel still crosses the bus once, and the bound
# is that of a copy (4 bytes in, 4 out).
#
# ## Exercise 3.4 · The least time (2 points)
#
# Write `image_time_bound(height, width, bytes_in, bytes_out, bandwidth)`: ints for the image's
# sides and the bytes read and written per pixel, a float for the bandwidth in bytes per second.
# Return the least time a one-pass image kernel can take, in **seconds**, as a float. Derive it
# from the two facts above; check its units (bytes over bytes per second) before you run the
# check. One line.
#
# **Predict first, by hand**: for the speed tests' 4097 × 8191 image on an H200 (4.8 TB/s), how
# many microseconds at least for the gray conversion? For the blur?
#
# **What the check does.** It calls your function on 6 sets of values (the first two are the
# questions above, then a one-pixel image), and the hidden tests on 200 random ones (sides up to
# 20,000, 30 GB/s to 10 TB/s); results are compared with the bound computed in float64, to a few
# roundings.

# %% nbgrader={"grade": false, "grade_id": "image_time_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def image_time_bound(height, width, bytes_in, bytes_out, bandwidth):
    """Seconds a one-pass image kernel needs at least: its bytes over the memory bandwidth."""
    ### BEGIN SOLUTION
    return height * width * (bytes_in + bytes_out) / bandwidth
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "image_time_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch03.image_time_bound.check(image_time_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch03.image_time_bound.check_hidden(image_time_bound)
### END HIDDEN TESTS

# %% [markdown]
# ### Measure
#
# On a GPU, the cell below times your gray and blur kernels on the speed tests' image, next to a
# copy of the same bytes (the best this device really does: its *practical* bandwidth, usually
# 80–90% of the figure on the box), and sets both against your bound with the advertised
# bandwidth. In CPU mode it says what it would do: the simulator's times mean nothing.

# %%
height, width = 4097, 8191
why = ag.timing.not_measured()
if why:
    print(why, "On a GPU, this cell times rgb_to_gray_kernel and blur_kernel on a "
          f"{height} × {width} image and compares them with image_time_bound at 4.8 TB/s and with "
          "a copy of the same bytes.")
else:
    from autograder import timing
    g = np.random.default_rng(0)
    d_rgb = cuda.to_device(g.random((height, width, 3), dtype=np.float32))
    d_gray = cuda.device_array((height, width), np.float32)
    d_blur = cuda.device_array((height, width), np.float32)
    grid2 = ((width + 31) // 32, (height + 7) // 8)
    rows = []
    for label, launch, b_in, b_out in (
            ("rgb_to_gray_kernel", lambda i: rgb_to_gray_kernel[grid2, (32, 8)](d_rgb, d_gray), 12, 4),
            ("blur_kernel (radius 2)", lambda i: blur_kernel[grid2, (32, 8)](d_gray, d_blur, 2), 4, 4)):
        nbytes = height * width * (b_in + b_out)
        mine = timing.time_gpu(label, launch, nbytes=nbytes)
        copy = timing.copy_ceiling(nbytes)
        bound = image_time_bound(height, width, b_in, b_out, 4.8e12)
        rows.append((label, mine.median_ms, bound * 1e3, copy.median_ms, mine.gbps, copy.gbps))
    print(f"{'kernel':24s} {'yours':>9s} {'bound @4.8 TB/s':>16s} {'copy':>9s} {'your GB/s':>10s} {'copy GB/s':>10s}")
    for label, ms, bound_ms, copy_ms, gbps, copy_gbps in rows:
        print(f"{label:24s} {ms:7.3f}ms {bound_ms:14.3f}ms {copy_ms:7.3f}ms {gbps:10.0f} {copy_gbps:10.0f}")

# %% [markdown]
# **Explain the gap (2 points, graded by your instructor).** In two to five sentences: how far is
# each of your kernels from your bound, and from the copy? Name what the bound leaves out (the
# practical bandwidth a copy reaches, the blur's extra reads and the caches that absorb them,
# launch overhead on small images, float64 arithmetic from Python constants...), and which of
# these you think matters most here, with the numbers that support it. On a machine without a
# GPU, answer with the H200 figures from `docs/benchmarks.md` in the course repository.

# %% [markdown] nbgrader={"grade": true, "grade_id": "image_gap_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the release shows an empty answer cell).* On the H200:
# the gray kernel moves 537 MB; the bound at 4.8 TB/s is 112 µs, a copy of the same bytes takes
# about 130 µs (≈ 4.1 TB/s, 86% of the advertised figure) and the kernel 150 µs, so
# the practical floor is the copy, not the datasheet. A kernel within 10–20% of the copy is as
# good as it gets; most of the rest of the gap is the advertised bandwidth itself. The blur is a
# different story: its bound is 56 µs (a copy of 268 MB), but the straightforward kernel took
# 1.36 ms, about 5% of the copy bandwidth. It is not waiting for memory: the caches serve the 25
# reads per pixel, and the time goes to instructions, a loop whose bounds are only known at run
# time, clamping, index arithmetic and a division for every pixel. The course's bench shows it:
# the same blur with the radius fixed when the kernel is compiled (loops unrolled, no clamping
# inside the image) ran in 0.24 ms, 5.7× faster, with exactly the same bytes moved; a block that
# loads its tile and halo into shared memory once, with many loads in flight, and sums rows of 5
# there ran in 0.083 ms, 80% of a copy (chapter 5 teaches such tiles). Python float
# constants make the gray arithmetic float64, which would matter on a GPU with few float64
# units; here the gray kernel waits for memory either way.

# %% [markdown]
# ## Looking ahead: the naive matmul
#
# The naive matmul is not memory-bound in the same way: each thread reads a whole row of A and a
# whole column of B, `2K` loads for `2K` floating-point operations, about **one operation per
# 4-byte load**, and most of those loads fetch data a neighbouring thread fetched too. On the
# course's H200 this kernel reached 1.4 TFLOP/s (101 ms) on 4096 × 4096 matrices, barely faster
# than NumPy's BLAS on the host's 32 CPU cores (116 ms), and 38× slower than cuBLAS (2.68 ms).
# Chapters 4 and 5 explain why; chapter 5's tiles in shared memory bring it to 27 ms, and
# chapter 6 closes more of the gap.
#
# Questions to answer for yourself (not graded):
# 1. In `matmul_kernel`, threads with neighbouring x read `B[k, col]` and `B[k, col + 1]` at the
#    same step k. Are those neighbouring addresses in memory? What about `A[row, k]` for
#    neighbouring y?
# 2. A 3-D volume of `depth × height × width` floats, stored row-major: at which flat position is
#    `[z, y, x]`? How would you launch a kernel with one thread per voxel, and which of
#    `cuda.grid(3)`'s coordinates would you give to `x`?
#
# ## Going further
# - PMPP ch. 3: §3.1 (multidimensional grid organization), §3.2 (mapping threads to
#   multidimensional data: colour to gray), §3.3 (image blur, a more complex kernel), §3.4
#   (matrix multiplication); ch. 4–5 (compute architecture, memory and tiling) use these kernels.
# - GPU MODE lecture 2 (a recap of PMPP ch. 1–3) and lecture 3 (getting started with CUDA for
#   Python programmers: the same gray conversion and a matmul on 2-D blocks, written in CUDA C and
#   called from PyTorch).
# - **On AMD (HIP):** the same notebook runs through numba-hip; 2-D grids and blocks work the same
#   way. On AMD's data-centre GPUs wavefronts are 64 threads wide, so prefer blocks whose size is
#   a multiple of 64 (16 × 4, 16 × 8, 16 × 16).
