# %% [markdown]
# # Chapter 12c · Capstone: histogram equalization of an image, measured
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapters 3, 9 and 11 together.
#
# **Before you start:** chapters 3 (a 2-D grid over an image), 9 (a privatized histogram) and 11
# (a scan), and chapter 6's way of measuring. **Time:** about 6 hours, design, measurements and
# report included (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Design, on your own, a GPU computation made of several kernels: a histogram, a scan of its
#   256 counts and a 2-D map, launched by a host function of yours on scratch arrays of yours.
# - Prove it correct on an exact spec, edge cases included (a 1 × 1 image, a constant image, one
#   row, one column, sides that are multiples of nothing).
# - Measure it the way this course measures: CUDA events after a warm-up, the median of many runs,
#   a copy of the same bytes and NumPy on the CPU timed in the same run; set the result against the
#   floor that the bytes give, try one optimization, and write it up in a short report that your
#   instructor grades.
#
# This unit is open in method: nothing below tells you how many kernels to write, how to launch
# them or where to keep the counts. The spec is exact, the checks are strict, and the design is
# yours.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, int32, uint32, float32

ag.banner()
cap = ag.problems.ch12c

# %% [markdown]
# ## The idea: spread the values an image uses over the whole range
#
# A photograph taken in fog, an X-ray, a scan of a faded page: the pixels use only a narrow band of
# the 256 gray levels, and the picture looks flat. **Histogram equalization** remaps the levels so
# that they are spread out: each value `v` becomes the fraction of the image's pixels that are at
# or below `v`. A value that many pixels share gets a wide step of the output range, a rare one a
# narrow step; the darkest value present becomes 0 (black) and the brightest 1 (white). Below, a
# low-contrast image (values in a band of about a dozen levels) and what equalization makes of it,
# each with its histogram.

# %%
rng = np.random.default_rng(3)
foggy = cap.gray_image(rng, 120, 180, "narrow")
cap.show_equalization(foggy, "a low-contrast image, and the same image equalized")
plt.show()
print(f"values used: {foggy.min()} to {foggy.max()} ({np.unique(foggy).size} of 256)")

# %% [markdown]
# ## The spec (exact)
#
# The input `img` is a uint8 image of H × W pixels (any sizes: 1 × 1, one row, one column, sides
# that are multiples of nothing); N = H·W.
#
# - `hist[v]` is the number of pixels equal to `v`, for the 256 values `v = 0 … 255`;
# - `cdf[v] = hist[0] + hist[1] + … + hist[v]`: the **inclusive** scan of `hist`;
# - `cdf_min` is `cdf` at the **smallest value present** in the image (not `cdf[0]`, which is 0
#   when no pixel is 0);
# - the output `out` is float32, H × W, with
#   `out[p] = (cdf[img[p]] − cdf_min) / (N − cdf_min)` for every pixel `p`, and **0 everywhere when
#   every pixel has the same value** (then `N == cdf_min`, and the formula would divide 0 by 0).
#
# Three steps, each of a kind you have written before: a **histogram** (chapter 9), a **scan**
# (chapter 11) of only 256 counts, and a **map** over a 2-D image (chapter 3). The catch is in
# between: no pixel can be mapped before the last pixel has been counted, and `cdf_min` is only
# known once the scan is done.
#
# ## The CPU baseline
#
# NumPy does it in four lines: `np.bincount` for the histogram, `np.cumsum` for the cdf, a table
# of 256 outputs, and `np.take` to look every pixel up. Run it on the picture above, and time it
# (on one core) on a 4097 × 8191 image, the size the measuring cell below uses on a GPU.

# %%
def equalize_numpy(img):
    cdf = np.cumsum(np.bincount(img.reshape(-1), minlength=256))
    cdf_min = cdf[img.min()]
    if img.size == cdf_min:
        return np.zeros(img.shape, np.float32)
    table = ((cdf - cdf_min) / (img.size - cdf_min)).astype(np.float32)
    return np.take(table, img)


print("right on the picture:", np.allclose(equalize_numpy(foggy), cap.equalized(foggy),
                                           rtol=1e-6, atol=0))
why = ag.timing.not_measured("Timing NumPy", gpu=False)
if why:
    print(why)
else:
    big = cap.gray_image(np.random.default_rng(4), 4097, 8191, "photo")
    stats = ag.timing.time_cpu("NumPy (1 core)", lambda: equalize_numpy(big), repeats=3,
                               nbytes=cap.equalize_bytes(big.shape))
    print(f"NumPy on a 4097 × 8191 image: {stats.median_ms:.1f} ms (median of 3), "
          f"{stats.gbps:.2f} GB/s counting 6 bytes per pixel")

# %% [markdown]
# ## Exercise 12c.1 · Equalize on the GPU (6 points)
#
# Write a **host function** `equalize(img, out)`. It receives two device arrays: `img` (uint8,
# H × W) and `out` (float32, H × W, filled with NaN before the call), and must leave the spec's
# output in `out`. Inside it, launch kernels of your own design, as many as you like, with the
# launch shapes you choose, on scratch device arrays you create (`cuda.device_array`,
# `cuda.to_device(np.zeros(...))`). A privatized histogram or a plain one, any scan, a lookup table
# or the formula in the map, fused kernels or not: all are fine. Three rules:
#
# 1. **Everything on the device.** Nothing may be read back to the host during the call: not
#    `img`, not `out`, not your own scratch arrays (no `copy_to_host`, no `d[i]` or `np.asarray`
#    on the host, no NumPy array passed to a kernel, which the launch would copy back). Copying
#    host data *to* the device (fresh zeros for the bins) is fine. `N` is `img.size`.
# 2. **Your kernels compute it.** Every element of `out` must be stored by a thread of one of your
#    kernels, and every pixel of `img` must be read by one. A library call or a course kernel does
#    not count.
# 3. **Fresh every call.** The check calls `equalize` many times, on images of different shapes:
#    bins left over from the previous call must not leak into the next.
#
# Plain Numba CUDA is all you need: `cuda.atomic.add` (chapter 9), `cuda.shared.array` and
# `cuda.syncthreads()` (chapters 5 and 11), `cuda.grid(2)` (chapter 3).
#
# **What the check does.** It calls your `equalize` on each case with `out` full of NaN, and
# compares every pixel with the spec computed in float64 from exact counts. The tolerance comes
# from the error bound of computing the ratio in float32 (each count converted to float32, exact up
# to 2²⁴; one subtraction; one division): four units of float32 roundoff relative to the value for
# every image here, and exactly 0 where the spec's value is 0 (the darkest value present, a
# constant image). Visible: a low-contrast 37 × 53 image, a 1 × 1 image, a constant 13 × 7 image
# and a 23 × 28 image using all 256 values. Hidden: images with two values only, with values 0 and
# 255 absent, a single row (1 × 1000), a single column (1001 × 1), a 61 × 132 photo-like image,
# and random shapes; on a GPU also a 4097 × 8191 image. In CPU mode the shared-memory race
# detector watches your kernels (a missing barrier, or a non-atomic update of a shared bin, stops
# the run every time), and the data-flow recorder fails a call that reads anything back to the
# host, naming what. The verdict names the first wrong pixel, its value, and the usual cause
# (an exclusive scan, `cdf_min` taken as `cdf[0]`, an integer division, pixels never written).
# Stuck? `ag.hint("equalize")` gives a hint in three steps, the last a skeleton of one design.

# %% nbgrader={"grade": false, "grade_id": "equalize_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
HIST_THREADS = 256          # the histogram's blocks (and one thread per bin in the table)


@cuda.jit
def zero_bins(hist):
    v = cuda.grid(1)
    if v < hist.size:
        hist[v] = 0


@cuda.jit
def count_pixels(img, hist):
    # One private histogram per block in shared memory: atomics there are cheap, and each block
    # adds its non-empty bins to the global ones once at the end.
    private = cuda.shared.array(256, uint32)
    me = cuda.threadIdx.x
    v = me
    while v < 256:
        private[v] = 0
        v += cuda.blockDim.x
    cuda.syncthreads()
    width = img.shape[1]
    p = cuda.grid(1)
    while p < img.size:                     # grid-stride: any image, any grid
        row = p // width
        cuda.atomic.add(private, img[row, p - row * width], 1)
        p += cuda.gridsize(1)
    cuda.syncthreads()
    v = me
    while v < 256:
        if private[v] > 0:
            cuda.atomic.add(hist, v, private[v])
        v += cuda.blockDim.x


@cuda.jit
def build_table(hist, n, lut):
    # One block, thread v owns value v: Kogge-Stone over 256 counts, double-buffered.
    scan = cuda.shared.array((2, 256), int32)
    smallest = cuda.shared.array(1, int32)
    v = cuda.threadIdx.x
    scan[0, v] = hist[v]
    cuda.syncthreads()
    cur = 0
    step = 1
    while step < 256:
        total = scan[cur, v]
        if v >= step:
            total += scan[cur, v - step]
        scan[1 - cur, v] = total
        cuda.syncthreads()
        cur = 1 - cur
        step *= 2
    mine = scan[cur, v]
    below = scan[cur, v - 1] if v > 0 else 0
    if mine > 0 and below == 0:             # v is the smallest value present
        smallest[0] = mine
    cuda.syncthreads()
    cmin = smallest[0]
    if n - cmin > 0 and mine >= cmin:       # differences in integers: exact
        lut[v] = float32(mine - cmin) / float32(n - cmin)
    else:
        lut[v] = float32(0.0)               # constant image, or a value not present


@cuda.jit
def look_up(img, lut, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = lut[img[row, col]]


def equalize(img, out):
    height, width = img.shape
    hist = cuda.device_array(256, np.uint32)
    lut = cuda.device_array(256, np.float32)
    zero_bins[1, 256](hist)
    # About a thousand blocks fill a large GPU (an H200: 132 SMs, 8 such blocks each); more
    # would only add merges of private histograms, fewer could leave SMs idle.
    blocks = max(1, min(1024, (img.size + HIST_THREADS - 1) // HIST_THREADS))
    count_pixels[blocks, HIST_THREADS](img, hist)
    build_table[1, 256](hist, np.int32(img.size), lut)
    look_up[((width + 31) // 32, (height + 7) // 8), (32, 8)](img, lut, out)
### END SOLUTION

# %% [markdown]
# Try it on the foggy picture (the left image is yours, the right one NumPy's), then on the edge
# cases by hand before the check does: a 1 × 1 image, a constant one, one row, one column.

# %%
d_out = cuda.device_array(foggy.shape, np.float32)
equalize(cuda.to_device(foggy), d_out)
mine = d_out.copy_to_host()
fig, axes = plt.subplots(1, 2, figsize=(8, 2.8))
for ax, picture, name in ((axes[0], mine, "your equalize"),
                          (axes[1], equalize_numpy(foggy), "NumPy")):
    ax.imshow(picture, cmap="gray", vmin=0, vmax=1)
    ax.set_title(name, fontsize=9)
    ax.axis("off")
plt.show()
print("largest difference from the spec:", float(np.abs(mine - cap.equalized(foggy)).max()))
for shape in ((1, 1), (1, 9), (7, 1)):
    tiny = cap.gray_image(np.random.default_rng(0), *shape, "photo")
    d_tiny = cuda.device_array(shape, np.float32)
    equalize(cuda.to_device(tiny), d_tiny)
    print(shape, "values", tiny.ravel().tolist(), "->", np.round(d_tiny.copy_to_host().ravel(), 3))

# %% nbgrader={"grade": true, "grade_id": "equalize_test", "locked": true, "points": 6, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch12c.equalize.check(equalize)
### BEGIN HIDDEN TESTS
ag.problems.ch12c.equalize.check_hidden(equalize)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: a histogram without atomics
#
# Below, a design whose histogram adds to its shared bins with `bins[v] += 1` instead of an atomic
# add. **Predict before you run:** on a GPU, would the counts be too high, too low, or right? In
# CPU mode the race detector records which thread read and wrote each shared element between two
# barriers, and stops the launch at the first conflict, every time, naming the two threads, the
# bin and the line.

# %%
@cuda.jit
def count_racy(img, hist):
    bins = cuda.shared.array(256, uint32)
    t = cuda.threadIdx.x
    for b in range(t, 256, cuda.blockDim.x):
        bins[b] = 0
    cuda.syncthreads()
    w = img.shape[1]
    for p in range(cuda.grid(1), img.size, cuda.gridsize(1)):
        bins[img[p // w, p % w]] += 1           # read, add, write: not atomic
    cuda.syncthreads()
    for b in range(t, 256, cuda.blockDim.x):
        cuda.atomic.add(hist, b, bins[b])


@cuda.jit
def table_one_thread(hist, n, lut):
    if cuda.grid(1) == 0:
        running = 0
        low = 0
        for v in range(256):
            running += hist[v]
            if low == 0:
                low = running
        running = 0
        for v in range(256):
            running += hist[v]
            lut[v] = (running - low) / (n - low) if n > low and running >= low else 0.0


@cuda.jit
def map_table(img, lut, out):
    c, r = cuda.grid(2)
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = lut[img[r, c]]


def equalize_racy(img, out):
    hist = cuda.to_device(np.zeros(256, np.uint32))
    lut = cuda.device_array(256, np.float32)
    count_racy[2, 64](img, hist)
    table_one_thread[1, 1](hist, img.size, lut)
    map_table[((img.shape[1] + 15) // 16, (img.shape[0] + 15) // 16), (16, 16)](img, lut, out)


try:
    cap.equalize.check(equalize_racy)
except ag.CheckFailed as failure:
    print(str(failure)[:900])

# %% [markdown]
# On a GPU the lost updates are real but rare in a small test: two threads of a warp that read the
# same bin in the same instruction both write back "old + 1", and one count is lost. The counts come
# out **too low**, by an amount that changes from run to run, and the output is slightly wrong in
# ways that a quick look at the picture will never show. That is why this course checks every pixel
# against an exact spec, and why CPU mode checks the accesses themselves.
#
# ## Measure it (on a GPU)
#
# The next cell times **your** `equalize` on a 4097 × 8191 photo-like image (33.6 million pixels),
# the way chapter 6 taught: three warm-up calls (the first compiles your kernels), then 30 timed
# calls, each between two CUDA events, and the median; the output is checked at 4096 pixels. In the
# same run it times a device-to-device **copy of the same bytes** (6 per pixel: the image read twice
# and the output written once, see below) and the **NumPy** equalization on one CPU core. It prints a
# table you can paste into your report. The time includes everything your function does: the
# allocation of its scratch arrays, every launch, and Python's cost of each launch.
#
# There is no speed cell in this unit: the design is yours, so no single reference design would be
# a fair bar, and your measurements are graded instead, through the report below. In CPU mode the
# cell says that it needs a GPU. Without one, you can still do everything else the report asks:
# derive the floor from the bytes (the course's H200 copy ceiling, 4,269 GB/s, is a recorded
# measurement), test your edge cases, and time the NumPy baseline above; for the measured columns,
# run this notebook on a GPU (a course machine, a cloud notebook) when you can, and say in your
# report which numbers are measured and which derived.

# %%
try:
    rows = cap.time_equalize(equalize)
    print(f"{'':44s} {'median':>10s} {'GB/s':>8s}  right")
    for r in rows:
        print(f"{r['label'][:44]:44s} {r['ms']:8.3f}ms {r['gbps']:8.1f}  {r['right']}")
    floor = cap.floor_ms(cap.SPEED_SIZE, rows[1]["gbps"])
    print(f"\nfloor from the bytes at this run's copy bandwidth: {floor:.3f} ms; "
          f"your equalize took {rows[0]['ms'] / floor:.1f}× that")
except ag.timing.NeedsGPU as why:
    print(why)
    from autograder.data import device_facts
    h200 = device_facts.value("copy_ceiling")
    print(f"\nWithout a GPU: 6 bytes per pixel × {cap.SPEED_SIZE[0]} × {cap.SPEED_SIZE[1]} pixels "
          f"= {cap.equalize_bytes(cap.SPEED_SIZE) / 1e6:.1f} MB; at the course's recorded H200 "
          f"copy ceiling ({device_facts.quote('copy_ceiling')}) that is a floor of "
          f"{cap.floor_ms(cap.SPEED_SIZE, h200):.3f} ms (derived, not measured). Test your "
          "edge cases here, time the NumPy baseline above, and run this cell on a GPU for the "
          "measured columns of your report.")

# %% [markdown]
# ## The report (10 points, graded by your instructor)
#
# Write a short, measured report in the five cells below, one per criterion: 2 points each, graded
# by hand with the rubric under each heading. Numbers come from your own runs on a GPU where you
# have one; otherwise say plainly which numbers are derived (bytes divided by a recorded
# bandwidth) and which you could not measure. A claim without a number earns less than one with.
#
# ### 1 · Design
#
# Which kernels does your `equalize` launch, in which order, with which launch shapes (blocks,
# threads, shared memory), and why that shape for each step? Where do the counts live between
# kernels, and how are they reset each call?
#
# *2 points:* every kernel named with its launch shape and a reason tied to the step's work (how
# many threads the histogram needs to fill the GPU, why 256 threads for the table, why a 2-D grid
# for the map); the scratch arrays and their reset described. *1 point:* the kernels listed, but
# shapes or reasons missing. *0:* no description of the design.

# %% [markdown] nbgrader={"grade": true, "grade_id": "capstone_design_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only), for the course's reference design.* Four launches per
# call. (a) `zero_bins[1, 256]`: the 256 global bins (uint32, a scratch array) back to 0, so no
# count leaks from the previous call. (b) `count_pixels[min(8 · SMs, ceil(N / 256)), 256]`: a
# grid-stride loop over the pixels (flat index, row = p // W), each block counting into its own
# 256 bins in shared memory with shared atomics, then adding each non-empty private bin to the
# global bins with one global atomic: at most 256 global atomics per block instead of one per
# pixel. Eight blocks of 256 threads per SM are enough to fill the GPU; more blocks would only add
# merges. (c) `build_table[1, 256]`: one thread per value; a Kogge-Stone inclusive scan of the 256
# counts in shared memory (8 steps, double-buffered, a barrier per step), the thread whose bin is
# the first non-empty one publishes `cdf_min` through shared memory, and each thread writes
# `lut[v]`, 0 for a constant image. One block suffices: 256 counts are nothing to scan, and one
# block can use barriers, where several blocks could not. (d) `look_up[(ceil(W / 32), ceil(H / 8)),
# (32, 8)]`: one thread per pixel, 32 threads along a row so a warp reads 32 consecutive bytes and
# writes 128 consecutive bytes of `out`, with a bounds check for the partial blocks. The kernel
# boundaries are the barriers between the steps: the map cannot start before the last count is in.

# %% [markdown]
# ### 2 · Correctness beyond the checks
#
# Which cases did you try yourself, beyond the visible checks, and what did each one test? Did any
# of them find a bug, and which?
#
# *2 points:* at least four cases that each target a distinct risk (1 × 1; one row and one
# column; a constant image; values 0 and/or 255 absent; two values; sides not multiples of your
# blocks; an image large enough to need many blocks; counts above 2²⁴), each compared with the
# spec, and what each would catch. *1 point:* some cases tried, without saying what they test.
# *0:* only the course's checks.

# %% [markdown] nbgrader={"grade": true, "grade_id": "capstone_edge_cases_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only).* Each case compared with `cap.equalized` pixel by pixel.
# A 1 × 1 image and a 13 × 7 constant image: N − cdf_min is 0, so the table must be all zeros
# (no 0 / 0). A 1 × 1000 row and a 1001 × 1 column: the map's grid must cover a side of 1 (one
# block wide) and the histogram's flat index must handle W = 1. Values 0 and 255 absent: catches
# `cdf_min = cdf[0]` (0 here) and a map that assumes the brightest value is 255. Two values only:
# the output is exactly 0 and 1, so any rounding or off-by-one in the scan shows. A 37 × 53 image
# with block shapes that do not divide it: the last partial block row and column. An image of
# 4097 × 8191 on a GPU: 33.6 million pixels, so counts pass 2²⁴ and float32 conversion is no longer
# exact: computing the differences in integers before converting keeps the error within the
# tolerance, while converting cdf and cdf_min first and then subtracting loses up to a few units in
# the numerator. A poisoned `out` (NaN) before each call shows pixels never written.

# %% [markdown]
# ### 3 · Measurement
#
# Your measurements, as a table: your `equalize`, a copy of the same bytes, and NumPy on the CPU,
# all from one run (the measuring cell above), with the image size, the GPU's name, and how they
# were timed.
#
# *2 points:* a table with the three rows measured in the same run, times in ms and GB/s, how they
# were timed (CUDA events around each call after warm-up, median of many runs; the CPU's wall
# clock), the device and the size; the speed-up over NumPy stated. *1 point:* some numbers, but
# missing the yardsticks, the method or the size. *0:* no measurement and no reason for its absence
# (without a GPU, a table of derived numbers clearly marked as such and the NumPy time earns 1).

# %% [markdown] nbgrader={"grade": true, "grade_id": "capstone_measurement_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only).* What a full-mark table looks like (the course keeps no
# measured figure for this unit: the times are yours to fill in; the copy row's floor is
# derived): device, e.g. "NVIDIA H200, numba-cuda 0.30.4"; image 4097 × 8191 = 33,558,527
# pixels, 201.4 MB moved at 6 bytes per pixel; method: 3 warm-up calls, then 30 calls each between
# two CUDA events, median and interquartile spread; NumPy timed with the wall clock, median of 5.
#
# | what | median | GB/s (6 B/pixel) |
# |---|---|---|
# | my `equalize` | (measured) ms | 201.4 MB / time |
# | copy of the same bytes | (measured) ms; at the course's recorded copy ceiling, 4,269 GB/s, it would take 0.047 ms (derived) | (measured) |
# | NumPy, 1 core | (measured) ms | (measured) |
#
# followed by one sentence each: the speed-up over NumPy (its time over mine), and the fraction of
# the copy's bandwidth reached (the copy's time over mine).

# %% [markdown]
# ### 4 · The bound
#
# How many bytes must any design move, and what floor does that give at your GPU's copy bandwidth
# (or the course's recorded one)? How close did your measurement come, and what do you think
# keeps it from the floor?
#
# *2 points:* the bytes derived from the spec (which arrays are read and written, how many times,
# and why the image must be read twice unless it stays in a cache), the floor computed from them,
# the ratio of the measured time to it, and one or two causes named and tied to a measurement
# (time per kernel, the launch overhead, the atomics). *1 point:* a floor without its derivation,
# or no comparison with the measurement. *0:* no bound.

# %% [markdown] nbgrader={"grade": true, "grade_id": "capstone_bound_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only).* The histogram must read every pixel (1 byte), and the
# map can only start once all counts are known, so it reads every pixel again (1 byte) and writes
# one float32 (4 bytes): 6 bytes per pixel, the table and bins (2 KB) negligible. For 4097 × 8191
# pixels that is 201.4 MB; at the course's recorded H200 copy ceiling, 4,269 GB/s, the floor is
# 0.047 ms (derived). If the 33.6 MB image stays in the L2 cache between the two kernels (a large
# GPU's L2 can hold it: `ag.timing.l2_bytes()` says how big yours is), the second read costs no
# memory traffic and the floor drops to 5 bytes per pixel, 0.039 ms. Against a floor of tens of
# microseconds, fixed costs weigh: four launches from Python at tens of microseconds each, and the
# allocation of the scratch arrays on every call, can cost more than the memory traffic; a full
# answer measures them (time an `equalize` on a 1 × 1 image: that is almost all fixed cost) and
# subtracts. The histogram's atomics are the other suspect: derived from the course's recorded
# rates, 33.6 million updates take about 0.024 ms as shared-memory atomics (recorded at
# 1.41 × 10¹² updates per second in the course's privatized byte histogram) but about 0.37 ms as
# global atomics spread over 256 addresses (recorded at 9.08 × 10¹⁰ updates per second), eight times
# the floor: privatization is what makes the histogram memory-bound.

# %% [markdown]
# ### 5 · One optimization
#
# Try one change to your design that you expect to make it faster. Give the time before and after
# (same image, same run or same method), and explain why it helped, or why it did not.
#
# *2 points:* one change, described precisely; before and after medians measured the same way;
# an explanation that ties the result to the bound or to a measurement (bytes saved, launches
# saved, atomics avoided), including when the change did not help. *1 point:* a change and numbers
# without an explanation, or an explanation without numbers. *0:* nothing tried.

# %% [markdown] nbgrader={"grade": true, "grade_id": "capstone_optimization_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only).* Any one change, measured; three that the bound above
# suggests, with what each should change (derived, to be set against the measured before/after):
# (a) **keep the scratch arrays between calls** (allocate the bins and the table once, reset the
# bins with the zero kernel): removes two allocations per call, a fixed cost that matters when the
# memory floor is 0.047 ms; the expected saving is what a 1 × 1 image's time drops by. (b)
# **privatize the histogram** (from one global atomic per pixel): the derived cost of the atomics
# falls from about 0.37 ms to about 0.024 ms, so the histogram kernel should go from atomic-bound
# to about its 33.6 MB read. (c) **fuse the table into the histogram** (the last block to finish,
# found with an atomic counter, scans the bins and writes the table): one launch fewer, the same
# bytes; it helps only if launch overhead is a visible part of the time, which the 1 × 1
# measurement tells. A full answer reports before and after medians from the same measuring cell,
# and explains a change that did not help as carefully as one that did (e.g. loading the table
# into shared memory in the map: the 1 KB table is served by the L1 cache anyway, so no gain).

# %% [markdown]
# ## Going further
# - PMPP ch. 9 (§9.5 privatization, §9.6 coarsening, §9.7 aggregation), ch. 11 (§11.2
#   Kogge-Stone, §11.4 Brent-Kung), ch. 3 (§3.2 mapping threads to multidimensional data).
# - **Adaptive** histogram equalization (CLAHE, as in OpenCV's `createCLAHE`) equalizes each tile
#   of the image with its own histogram, clipped, and blends neighbouring tiles' tables: one
#   histogram per tile (a privatized histogram per block is already most of it), one scan per
#   tile, and a map that reads four tables per pixel.
# - Single-kernel designs: the last block to finish (an atomic counter of finished blocks) builds
#   the table; a grid-wide barrier (a cooperative launch) would let one kernel do all three steps.
#   Measure before you believe either is faster.
# - **On AMD (HIP):** shared memory is the LDS, a wavefront has 64 lanes on the data-centre GPUs,
#   and shared-memory atomics behave much as on NVIDIA GPUs; numba-hip keeps `cuda.atomic.add`,
#   `cuda.shared.array` and `cuda.syncthreads()`. The report's method is the same on any GPU.
