# %% [markdown]
# # Chapter 27 · Quantized matrix products: int8 and int4 weights, dequantised on the fly
#
# GPU MODE track: the kernels that make a large language model fit in memory and answer quickly.
# Its weights are stored in 8 or 4 bits, and every matrix product turns them back into numbers as
# it reads them.
#
# **Before you start:** chapters 1–6 and 10 (warp shuffles written for any warp size above all),
# and chapter 24 or 25 for Triton. **Time:** about 3 hours, reading and exercises included (more
# in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Write a **weight-only int8 matrix–vector product**: one warp per output row, each weight
#   turned back into a float32 (`q · scale`) in registers as it is read, the row's sum merged by
#   shuffles, judged against float64 within an error bound you can derive, and timed against a
#   copy of the bytes it must read.
# - Write the **packed int4** product for a small batch of activation rows (1 to 16), unpacking two
#   weights from every byte, reading each weight byte once for the whole batch.
# - Write the same int4 product in **Triton**, and set it beside your Numba kernel on a GPU.
# - Measure what the smaller formats cost in accuracy (against float16 weights) and what they buy
#   in time, and explain both with numbers.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32, int32, uint64

ag.banner()
ch27 = ag.problems.ch27

# %% [markdown]
# ## The idea: a matrix–vector product is a copy of the weights
#
# When a language model writes text, each new token multiplies every weight matrix by **one**
# activation vector (or a handful, one per request in a small batch): `y = W x`, with `W` of
# `N × K` (output features × input features), say 16384 × 8192. Each weight is used for one
# multiply-add per activation row and never again. With float16 weights the GPU reads 2 bytes for
# every 2 FLOPs: at the H200's 4.8 TB/s that is 4.8 TFLOP/s at best, against its hundreds of
# TFLOP/s of arithmetic. The product is **memory-bound**: its time is the time to read `W` once,
# and the only way to make it faster is to read fewer bytes.
#
# So store the weights in fewer bits. **Weight-only quantization** keeps the activations in
# float16 and stores each weight as a small integer `q` with a **scale** `s` shared by a group of
# weights: the weight stands for `w = q · s`. The kernel reads `q` and `s`, multiplies them in
# registers (**dequantising on the fly**), and goes on exactly as before. Nothing in memory is
# ever a float weight again.
#
# ## The format
#
# Row `n` of `W` is cut into **groups** of `G` consecutive columns (G = 128 is common; G is even).
# Group `g = k // G` of row `n` has one float16 scale `scales[n, g]`, so `scales` is
# `N × ceil(K / G)`. When `G` does not divide `K` the last group of each row is shorter: a
# **ragged** last group.
#
# - **int8**: `q` is an int8 array `N × K`, `w[n, k] = q[n, k] · scales[n, k // G]`. The quantiser
#   is symmetric: `s = max|w| / 127` over the group, `q = round(w / s)`, so `q` runs from −127
#   to 127.
# - **int4, packed**: two 4-bit weights share a byte. `packed` is uint8, `N × ceil(K / 2)`; byte `j`
#   of a row holds column `2j` in its **low** nibble (`byte & 15`) and column `2j + 1` in its
#   **high** nibble (`byte >> 4`). A nibble is 0 to 15 and stands for `q = nibble − 8` (−8 to 7;
#   the quantiser uses −7 to 7, `s = max|w| / 7`). When `K` is odd the last byte's high nibble
#   stands for no column.
#
# The activations `x` are float16 (`K` long, or `B × K` for a batch) and `y` is float32:
# `y[b, n] = Σ_k w[n, k] · x[b, k]`, **accumulated in float32**. A weight costs 1 byte plus
# 2/G for its scale in int8, half a byte plus 2/G in int4, against 2 bytes in float16.

# %%
q_small = np.array([[-8, 7, 0, 3, -1], [1, 2, -3, 4, -5]], np.int8)
packed_small = ch27.pack_int4(q_small)
print("q (2 rows, K = 5):\n", q_small)
print("packed (2 rows, 3 bytes each):", [[f"{b:#04x}" for b in row] for row in packed_small])
byte0 = int(packed_small[0, 0])        # a Python int: a uint8 minus 8 would wrap round
print("low nibble − 8, high nibble − 8 of byte 0:", (byte0 & 15) - 8, (byte0 >> 4) - 8)
print("unpacked again:\n", ch27.unpack_int4(packed_small, 5))

# %% [markdown]
# Byte `0xf0` of row 0 holds column 0 in its low nibble (`0x0`: 0 − 8 = −8) and column 1 in its
# high nibble (`0xf`: 15 − 8 = 7). The third byte of each row has a padding high nibble (8, that
# is 0): `K = 5` is odd.
#
# ## What quantising costs: the accuracy
#
# The quantiser rounds every weight to the nearest multiple of its group's scale, an error of up
# to `s / 2`. The next cell quantises weights drawn like a trained layer's (normal, standard
# deviation 0.02) and measures the error of `y = W x` against the float64 product with the
# original weights, relative to the size of `y`, for float16 weights and for int8 and int4 with
# groups of 32, 128 and 1024 columns; then again with one large weight per row (an **outlier**,
# 20 standard deviations out, as trained models have), which sets its whole group's scale.

# %%
for outlier in (0.0, 20.0):
    print(f"\nweights N(0, 0.02²){'' if not outlier else f', one weight per row at {outlier:g} σ'}")
    print(f"{'format':8s} {'G':>5s} {'bytes/weight':>13s} {'relative error of y':>20s}")
    for r in ch27.quantization_errors(outlier=outlier):
        print(f"{r['format']:8s} {r['group'] or '':>5} {r['bytes_per_weight']:13.3f} "
              f"{r['error']:20.2e}")

# %% [markdown]
# float16 keeps 11 significant bits, int8 about 7 and int4 3, and the table shows it: each
# format's error follows the spacing of its grid (about 2·10⁻⁴ for float16, 6·10⁻³ for int8 and
# 0.11 for int4 with G = 128). Smaller groups cost more bytes for scales and
# follow the weights more closely; an outlier stretches its group's scale, so every other weight of
# the group is rounded more coarsely, and the bigger the group the more weights pay for it. In a
# real model the trade is judged on the model's answers, not on one product, but this is where it
# starts: int8 with G = 128 stays below 1% for half the bytes of float16, int4 costs about 11% for
# a quarter (which is why int4 checkpoints choose their scales and roundings with care: GPTQ, AWQ).
#
# ## The CPU baseline
#
# NumPy on one core, with 4096 × 4096 weights: dequantise the whole matrix to float32, then
# multiply. GB/s counts the bytes of the weights in their format (and the scales, `x` and `y`), the
# bytes a GPU kernel must read.

# %%
why = ag.timing.not_measured("Timing the products on the CPU", gpu=False)
if why:
    print(why)
cpu_results = [] if why else ch27.time_cpu()
for r in cpu_results:
    print(f"{r['label']:72s} {r['ms']:8.2f} ms {r['gbps']:7.2f} GB/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# NumPy writes the dequantised matrix out in float32 (4 bytes a weight) and reads it back: it moves
# many times the bytes of the format. A kernel that dequantises in registers moves only the
# format's bytes.
#
# ## Predict: the least time
#
# Before writing a kernel, work out what it cannot beat. A matrix–vector product reads every
# weight once and does 2 FLOPs with it, far too little arithmetic to hide the reads behind, so its
# time is at least the time to move its bytes at the memory's bandwidth: the **bandwidth
# roofline** (chapter 5). What it must move, once each: the weights in their format, the scales
# (float16, one per group of every row; none for float16 weights), the float16 activations and
# the float32 outputs.
#
# ## Exercise 27.1 · The least time of a quantised product (2 points)
#
# Write `quant_time_bound(n, k, batch, bits, group, bandwidth)`: ints for the weight matrix's
# `n` rows and `k` columns (k even), the activation rows `batch`, the bits of a weight (4, 8, or 16
# for float16 weights) and the group size (`0` for float16 weights: no scales), a float for the
# bandwidth in bytes per second. Return the least time the product can take, in **seconds**, as a
# float. Count the bytes of each array above yourself; a row's last group may be short. Roughly
# three lines.
#
# **Predict first, by hand**: for 16384 × 8192 weights and one activation row on an H200
# (4.8 TB/s), how many microseconds at least in float16, in int8 with groups of 128, in int4? What
# fraction of the float16 time is each?
#
# **What the check does.** It calls your function on 6 sets of values (the int8 and float16
# questions above, int4 with 8 activation rows, a 1 × 2 matrix and two random sets), and the
# hidden tests on 200 random ones (up to 65,536 × 65,536 weights, 1 to 16 activation rows,
# 100 GB/s to 10 TB/s); results are compared with the bound computed in float64, to a few
# roundings.

# %% nbgrader={"grade": false, "grade_id": "quant_time_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def quant_time_bound(n, k, batch, bits, group, bandwidth):
    """Seconds a weight-only quantised product needs at least: its bytes over the bandwidth."""
    ### BEGIN SOLUTION
    scales = 2 * n * ((k + group - 1) // group) if group else 0
    nbytes = n * k * bits / 8 + scales + 2 * batch * k + 4 * batch * n
    return nbytes / bandwidth
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "quant_time_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch27.quant_time_bound.check(quant_time_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch27.quant_time_bound.check_hidden(quant_time_bound)
### END HIDDEN TESTS

# %%
for label, bits, group in (("float16", 16, 0), ("int8, G = 128", 8, 128), ("int4, G = 128", 4, 128)):
    t = quant_time_bound(16384, 8192, 1, bits, group, 4.8e12)
    print(f"{label:14s} at least {t * 1e6:7.1f} µs "
          f"({t / quant_time_bound(16384, 8192, 1, 16, 0, 4.8e12):.0%} of float16's)")

# %% [markdown]
# These are the floors the speed tests measure you against (through a copy of the same bytes,
# which is what the GPU really reaches, a little below the 4.8 TB/s on the box). int8 halves the
# float16 time and int4 quarters it, but only if the kernel keeps up with the memory: every byte
# now carries one or two weights to convert and multiply, and a kernel that spends too many
# instructions per byte stops being limited by the bandwidth.
#
# ## Exercise 27.2 · int8 weight-only matrix–vector product (3 points + 2 for speed)
#
# Write `int8_matvec_kernel(q, scales, x, group, y)`: `q` int8 `[N, K]`, `scales` float16
# `[N, ceil(K / group)]`, `x` float16 `[K]`, `group` an integer (even), `y` float32 `[N]`. One
# **warp** computes one output row at a time:
#
# - warp `w = (blockIdx.x · blockDim.x + threadIdx.x) // warpsize` takes rows `w`, `w + W`, ...
#   where `W` is the number of warps in the grid (the grid has fewer warps than rows);
# - lane `l` takes the row's columns `l`, `l + warpsize`, ... (a warp reads consecutive bytes:
#   coalesced), turns each into `float32(q) · float32(scale)` and adds its product with
#   `float32(x[k])` to a float32 sum;
# - the lanes add their sums with `cuda.shfl_xor_sync`, and one lane writes `y[row]`.
#
# Two ways to find a column's scale: `scales[row, k // group]` for every column, or a loop over
# the groups with the scale read once per group and an inner loop over the lane's columns of that
# group (the last group ends at `K`, not at the next multiple of `group`). Both are right, but
# only the second is fast: `k // group` of two int64 values is a 64-bit integer division, which a
# GPU runs as a subroutine of dozens of instructions, for every weight, where the rest of the
# work is a conversion and two multiply-adds. The loop over groups also lets you multiply a
# group's partial sum `Σ q · x` by its scale once. Write every constant and conversion as `float32(...)`: a float16 value times a
# Python number is float16 in CPU mode and float64 on a GPU. Write it for **any warp size**
# (`cuda.warpsize`, the mask `~uint64(0) >> (64 − cuda.warpsize)`). Roughly 20 lines.
#
# **What the check does.** Blocks of 64 threads (64 and 128 in the hidden tests), 2 blocks in CPU
# mode (a few dozen on a GPU), `y` filled with NaN; `group` drawn per case from 16, 32 and 64 in
# CPU mode (32 to 128 on a GPU), scales spread over two decades so that a neighbouring group's
# scale is a different number, `x` of mixed magnitudes. Visible: N × K = 5 × 150, 3 × 37 and
# 4 × 1; hidden: other sizes, 4 times the largest visible one, at warp sizes 64 and 32 in CPU
# mode. Every `y` must be within the float32 error bound below. **The speed test** (on a GPU)
# multiplies 16384 × 8192 int8 weights (128 MiB, G = 128) with blocks of 256, against the course's
# kernel timed in the same run (you need half its speed) and NumPy on the host (10×); it reports
# your GB/s against a copy of the same bytes: the **bandwidth roofline** of this product. In CPU
# mode it says that it needs a GPU.
#
# **The error bound.** The dequantised weights are exact in float32: `|q| ≤ 127` needs 7 bits and
# a float16 scale 11, and float32 holds 24, so `float32(q) · float32(s)` rounds nothing (nor does
# `q · x`). The check's float64 answer uses the same weights, so all that float32 adds is rounding
# in the products and the sums. A sum whose every term goes through at most `c` roundings, in any
# order, is within `γ_c · Σ|w_k x_k|` of the exact one (`u = 2⁻²⁴`, `γ_c = c·u / (1 − c·u)`, Higham
# ch. 3). Here a lane adds about `K / 32` products one after another, a group's partial sum may be
# scaled and added once per group, and the shuffles add 5 or 6 more: the check takes
# `c = ceil(K / 32) + ceil(K / G) + 24`. A float16 accumulator (`u = 2⁻¹¹`, 8192 times float32's)
# falls far outside it, as the next section shows.

# %% nbgrader={"grade": false, "grade_id": "int8_matvec_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def int8_matvec_kernel(q, scales, x, group, y):
    ### BEGIN SOLUTION
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, k = q.shape
    for row in range(warp, rows, warps):
        acc = float32(0.0)
        for g in range(scales.shape[1]):
            start = g * group
            end = min(start + group, k)
            part = float32(0.0)
            for c in range(start + lane, end, cuda.warpsize):
                part += float32(q[row, c]) * float32(x[c])
            acc += part * float32(scales[row, g])
        offset = cuda.warpsize // 2
        while offset > 0:
            acc += cuda.shfl_xor_sync(mask, acc, offset)
            offset //= 2
        if lane == 0:
            y[row] = acc
    ### END SOLUTION


# %% [markdown]
# Try it on a small product first:

# %%
rng = np.random.default_rng(27)
w_demo = rng.standard_normal((6, 300)) * 0.02
q_demo, s_demo = ch27.quantize_int8(w_demo, group=64)
x_demo = rng.standard_normal(300).astype(np.float16)
y_demo = np.full(6, np.nan, np.float32)
int8_matvec_kernel[2, 64](q_demo, s_demo, x_demo, 64, y_demo)
w_exact = ch27.dequantize(q_demo, s_demo, 64)
right_demo = w_exact @ x_demo.astype(np.float64)
print("yours:", y_demo.round(5))
print("float64 of the dequantised weights:", right_demo.round(5))
print(f"largest error: {np.abs(y_demo - right_demo).max():.2e}")

# %% nbgrader={"grade": true, "grade_id": "int8_matvec_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch27.int8_matvec.check(int8_matvec_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch27.int8_matvec.check_hidden(int8_matvec_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "int8_matvec_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch27.int8_matvec.check_speed(int8_matvec_kernel)

# %% [markdown]
# ## Break it: a float16 accumulator
#
# Tensor cores and many hand-written kernels keep data in float16, so it is tempting to sum in
# float16 too: half the registers, and `hfma2` does two at once. The next kernel takes the weights
# dequantised to float16 (on the host, here) and multiplies and sums in float16 (`cuda.fp16.hmul`
# and `hadd`, which round to float16 after every operation), one warp per row as yours does. **Predict before you run:** on a row of 4096 weights, how far
# from the float64 answer will it be, against the bound? (float16 keeps 11 bits: each addition may
# lose `2⁻¹¹` of the running sum.)

# %%
@cuda.jit
def matvec_half(w, x, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, k = w.shape
    for row in range(warp, rows, warps):
        acc = x[0] - x[0]                                   # a float16 zero
        for c in range(lane, k, cuda.warpsize):
            acc = cuda.fp16.hadd(acc, cuda.fp16.hmul(w[row, c], x[c]))
        total = float32(acc)
        offset = cuda.warpsize // 2
        while offset > 0:
            total += cuda.shfl_xor_sync(mask, total, offset)
            offset //= 2
        if lane == 0:
            y[row] = total


w_long = rng.standard_normal((4, 4096)) * 0.02
q_long, s_long = ch27.quantize_int8(w_long, group=128)
x_long = rng.standard_normal(4096).astype(np.float16)
right_long, size_long = ch27.product_host(ch27.dequantize(q_long, s_long, 128), x_long[None, :])
allowed = ch27.bound(size_long[0], 4096, 128)
w16_long = ch27.dequantize(q_long, s_long, 128).astype(np.float16)    # dequantised on the host
for name in ("float16", "yours"):
    y_long = np.full(4, np.nan, np.float32)
    if name == "float16":
        matvec_half[2, 64](w16_long, x_long, y_long)
    else:
        int8_matvec_kernel[2, 64](q_long, s_long, x_long, 128, y_long)
    err = np.abs(y_long - right_long[0])
    print(f"{name:8s} largest error {err.max():.2e}, {(err / allowed).max():.2g} times the bound")

# %% [markdown]
# The float16 kernel is off by about ten times the bound (11 times on these rows; the factor
# depends on the data and grows with K), yours by a small fraction of it. float16 arithmetic is not the problem in itself (`q · x` and
# `q · s` are exact in float32, and tensor cores multiply float16 exactly); **accumulating** in it
# is: each of the ~128 additions of a lane rounds the running sum to 11 bits. The same mistake
# hides in `w = q * s` when `s` is a float16 array element: in CPU mode that product is float16,
# and every weight loses up to `2⁻¹²` of itself before it is used. Convert first:
# `float32(q) * float32(s)`.
#
# ## Measure: int8 and int4 against float16 and the copy
#
# On a GPU, the next cell times your int8 kernel, the course's int8 and int4 kernels, the float16
# matrix–vector product (2 bytes a weight), the course's Triton int4 kernel where Triton runs, and
# PyTorch's float16 product and its dequantise-then-multiply where PyTorch is installed (an
# optional extra; the course never needs it), at 4096 × 4096, 8192 × 8192 and 16384 × 8192 with
# batches of 1 and 8. Each bar's black tick is a copy of the bytes that product's format must move:
# its **roofline**. In CPU mode it says that it needs a GPU and draws the course's H200 run
# instead.

# %%
mine = {"int8, Numba (yours)": ("int8", int8_matvec_kernel)}
try:
    results = ch27.measure(mine)
    for r in results:
        print(f"{r['label']:42s} {r['n']:6d} × {r['k']:5d}, B = {r['batch']:2d} {r['ms']:8.3f} ms "
              f"{r['gbps']:7.0f} GB/s  roof {r['roof_ms']:7.3f} ms{'' if r['right'] else '  WRONG'}")
    ch27.chart(results)
    plt.show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels:")
    if ch27.chart() is not None:
        plt.show()

# %% [markdown]
# ## Exercise 27.3 · packed int4 weights times a small batch (4 points + 2 for speed)
#
# Serving several requests at once multiplies the same weights by a few activation rows: `x` is
# `B × K` (B = 1 to 16) and `y` is `B × N`. The weights are still read once, whatever `B`: each
# byte a warp loads is used for all `B` rows before the next one is loaded.
#
# Write `int4_matmul_kernel(packed, scales, x, group, y)`: `packed` uint8 `[N, ceil(K / 2)]`,
# `scales` float16 `[N, ceil(K / group)]`, `x` float16 `[B, K]`, `group` an even integer, `y`
# float32 `[B, N]`; `K = x.shape[1]`. One warp per output row as in 27.2:
#
# - a loop over the row's groups as in 27.2 (a group is `group // 2` bytes), and in each, lane `l`
#   takes the group's **bytes** `l`, `l + warpsize`, ...; byte `j` holds columns `2j` and
#   `2j + 1` (the same group: `group` is even);
# - unpack it as integers: `v = int32(packed[row, j])`, then `(v & 15) − 8` and `(v >> 4) − 8`.
#   Convert to `int32` first: in CPU mode a uint8 minus 8 wraps round (0 − 8 gives 248);
# - a float32 sum per activation row, kept in `acc = cuda.local.array(16, float32)` (B ≤ 16);
#   for every byte, add `w0 · x[b, 2j] + w1 · x[b, 2j + 1]` to `acc[b]` for each `b`, leaving out
#   the second column when `2j + 1 = K` (odd K);
# - then a butterfly of shuffles for each `b`, and one lane writes `y[b, row]`.
#
# Roughly 30 lines.
#
# **What the check does.** 27.2's launches, groups, scales and activations, the int4 values over
# the whole range −8 to 7 (nibbles 0 to 15), the padding nibble of an odd `K` set to anything.
# Visible: B × N × K = 3 × 5 × 100, 1 × 4 × 37 and 2 × 3 × 1; hidden: other sizes (B up to 16),
# 4 times the largest visible one, at warp sizes 64 and 32 in CPU mode. The bound is 27.2's,
# per output. **The speed test** (on a GPU) multiplies 16384 × 8192 int4 weights (64 MiB, G = 128)
# by 8 activation rows, against the course's kernel (half its speed) and NumPy on the host (10×).

# %% nbgrader={"grade": false, "grade_id": "int4_matmul_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def int4_matmul_kernel(packed, scales, x, group, y):
    ### BEGIN SOLUTION
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, nbytes = packed.shape
    batch, k = x.shape
    half = group // 2
    acc = cuda.local.array(16, float32)
    for row in range(warp, rows, warps):
        for b in range(batch):
            acc[b] = float32(0.0)
        for g in range(scales.shape[1]):
            s = float32(scales[row, g])
            for j in range(g * half + lane, min(g * half + half, nbytes), cuda.warpsize):
                v = int32(packed[row, j])
                w0 = float32((v & 15) - 8) * s
                w1 = float32((v >> 4) - 8) * s
                c = 2 * j
                for b in range(batch):
                    t = w0 * float32(x[b, c])
                    if c + 1 < k:
                        t += w1 * float32(x[b, c + 1])
                    acc[b] += t
        for b in range(batch):
            total = acc[b]
            offset = cuda.warpsize // 2
            while offset > 0:
                total += cuda.shfl_xor_sync(mask, total, offset)
                offset //= 2
            if lane == 0:
                y[b, row] = total
    ### END SOLUTION


# %% [markdown]
# Try it on weights quantised to int4 (the bound is set by the dequantised weights, not by the
# original ones: the check judges your arithmetic, the table above judged the format):

# %%
packed_demo, s4_demo = ch27.quantize_int4(w_demo, group=64)
x4_demo = rng.standard_normal((3, 300)).astype(np.float16)
y4_demo = np.full((3, 6), np.nan, np.float32)
int4_matmul_kernel[2, 64](packed_demo, s4_demo, x4_demo, 64, y4_demo)
w4 = ch27.dequantize(ch27.unpack_int4(packed_demo, 300), s4_demo, 64)
print(f"largest error against the dequantised weights: "
      f"{np.abs(y4_demo - x4_demo.astype(np.float64) @ w4.T).max():.2e}")
print(f"and against the original float64 weights:      "
      f"{np.abs(y4_demo - x4_demo.astype(np.float64) @ w_demo.T).max():.2e}")

# %% nbgrader={"grade": true, "grade_id": "int4_matmul_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch27.int4_matmul.check(int4_matmul_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch27.int4_matmul.check_hidden(int4_matmul_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "int4_matmul_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch27.int4_matmul.check_speed(int4_matmul_kernel)

# %% [markdown]
# ## The int4 product in Triton
#
# Chapters 24 and 25 introduced Triton: a kernel written for one **program** working on whole
# blocks (`tl.arange(0, BLOCK)`), launched over a grid of programs, with masked loads and stores
# for the blocks' ends. Here a program computes `BLOCK_N` outputs of one activation row, walking
# the weight rows' bytes `BLOCK_K / 2` at a time:
#
# ```python
# b = tl.program_id(0)                          # the activation row
# rows = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
# j = start + tl.arange(0, BLOCK_K // 2)        # bytes j: columns 2j and 2j + 1
# byte = tl.load(p_ptr + rows[:, None] * nbytes + j[None, :], mask=..., other=0).to(tl.int32)
# ```
#
# - **Two dimensions.** `rows[:, None]` and `j[None, :]` broadcast to a `BLOCK_N × BLOCK_K / 2`
#   tile: one load brings a block of bytes of `BLOCK_N` weight rows. `(byte & 15) − 8` and
#   `(byte >> 4) − 8` unpack the whole tile at once (after `.to(tl.int32)`), the scales are loaded
#   at the same tile's columns (`2 * j // G`: a gather, served from the cache), and the even and
#   odd activations `x[b, 2j]` and `x[b, 2j + 1]` are two vectors of `BLOCK_K / 2` values.
# - **The sum.** `tl.sum(w0 * x0[None, :] + w1 * x1[None, :], axis=1)` adds each weight row's
#   part; a `BLOCK_N` float32 accumulator carries it over the loop.
# - **The grid** is `(B, cdiv(N, BLOCK_N))`, activation rows first: the B programs that read the
#   same block of weights are numbered one after another and run side by side, so most of their
#   reads of the weights are served by L2. Each program still reads them, so this is not the one read of 27.3,
#   and the comparison below shows what that costs.
# - **Masks.** The bytes past the row's `(K + 1) // 2` (`other=0`), the odd column `2j + 1 = K`
#   (`other=0.0` for `x`, which makes its product 0) and the rows past `N`.
# - Avoid `tl.dot` here: with float32 operands a GPU computes it in TF32 (10 bits), outside the
#   bound, and it needs tiles of at least 16 in every dimension.
#
# **In CPU mode** Triton runs its interpreter, a program at a time in NumPy (about a millisecond
# each): the checks use a few dozen programs. The interpreter adds in another order than a GPU
# does, and the layout a GPU's compiler picks decides its order, so the bound of 27.4 assumes none:
# `c = K + ceil(K / G) + 4`, enough for any order of the additions (looser than 27.3's for long
# rows, and still far tighter than any of the bugs above). Triton is installed with the course
# on Linux; on macOS and Windows the next cell says so, the checks of 27.4 skip with that reason,
# and everything else runs.

# %%
from autograder.machine.triton_bridge import unavailable_reason, view

no_triton = unavailable_reason()        # None where Triton runs
if no_triton:
    print(no_triton)
    triton = tl = ch27.TritonMissing(no_triton)   # stand-ins: the cells below still define things
else:
    import triton
    import triton.language as tl
    where = "on the GPU" if ag.backend.is_gpu else "in its interpreter (CPU mode)"
    print(f"Triton {triton.__version__}, {where}")

# %% [markdown]
# ## Exercise 27.4 · the int4 product in Triton (3 points + 2 for speed)
#
# Write the kernel `int4_matmul_triton_kernel(p_ptr, s_ptr, x_ptr, y_ptr, N, K, G, BLOCK_N,
# BLOCK_K)` and its launcher `int4_matmul_triton(packed, scales, x, group, y)`, with 27.3's
# arrays (device arrays) and `group` a Python int:
#
# - the grid is `(B, triton.cdiv(N, BLOCK_N))`; row `n` of the weights starts at byte
#   `n · ((K + 1) // 2)`, its scales at `n · ceil(K / G)`, activation row `b` at `b · K`, and
#   `y[b, n]` is element `b · N + n`;
# - a loop over the bytes, `BLOCK_K // 2` at a time, as above; BLOCK_N = 32 and BLOCK_K = 128
#   work well;
# - the launcher wraps every array in `view(...)`.
#
# Roughly 20 lines for the kernel and 5 for the launcher.
#
# **What the check does.** 27.3's cases (visible and hidden, the random hidden ones with an odd
# `K`), `y` filled with NaN, within the bound for any order above. **The speed test** (on a GPU) is
# 27.3's, 8 × 16384 × 8192, against the course's Triton kernel timed in the same run (half its
# speed) and NumPy on the host (10×). In CPU mode it says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "int4_matmul_triton_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@triton.jit
def int4_matmul_triton_kernel(p_ptr, s_ptr, x_ptr, y_ptr, N, K, G,
                              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    ### BEGIN SOLUTION
    b = tl.program_id(0)
    rows = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < N
    nbytes = (K + 1) // 2
    ngroups = (K + G - 1) // G
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, nbytes, BLOCK_K // 2):
        j = start + tl.arange(0, BLOCK_K // 2)
        ok = row_ok[:, None] & (j < nbytes)[None, :]
        byte = tl.load(p_ptr + rows[:, None] * nbytes + j[None, :], mask=ok, other=0).to(tl.int32)
        s = tl.load(s_ptr + rows[:, None] * ngroups + (2 * j // G)[None, :], mask=ok, other=0.0)
        x0 = tl.load(x_ptr + b * K + 2 * j, mask=2 * j < K, other=0.0).to(tl.float32)
        x1 = tl.load(x_ptr + b * K + 2 * j + 1, mask=2 * j + 1 < K, other=0.0).to(tl.float32)
        w0 = ((byte & 15) - 8).to(tl.float32) * s.to(tl.float32)
        w1 = ((byte >> 4) - 8).to(tl.float32) * s.to(tl.float32)
        acc += tl.sum(w0 * x0[None, :] + w1 * x1[None, :], axis=1)
    tl.store(y_ptr + b * N + rows, acc, mask=row_ok)
    ### END SOLUTION


def int4_matmul_triton(packed, scales, x, group, y):
    ### BEGIN SOLUTION
    n = packed.shape[0]
    batch, k = x.shape
    grid = (batch, triton.cdiv(n, 32))
    int4_matmul_triton_kernel[grid](view(packed), view(scales), view(x), view(y), n, k, group,
                                    BLOCK_N=32, BLOCK_K=128)
    ### END SOLUTION


# %% [markdown]
# Try it on the demo weights (device arrays: on a GPU, `view` needs the arrays on the device):

# %%
if no_triton:
    print(no_triton)
else:
    d_p, d_s, d_x = (cuda.to_device(a) for a in (packed_demo, s4_demo, x4_demo))
    d_y = cuda.device_array((3, 6), np.float32)
    int4_matmul_triton(d_p, d_s, d_x, 64, d_y)
    print(f"largest difference from your Numba kernel: "
          f"{np.abs(d_y.copy_to_host() - y4_demo).max():.2e}")

# %% nbgrader={"grade": true, "grade_id": "int4_matmul_triton_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch27.int4_matmul_triton.check(int4_matmul_triton)
### BEGIN HIDDEN TESTS
ag.problems.ch27.int4_matmul_triton.check_hidden(int4_matmul_triton)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "int4_matmul_triton_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch27.int4_matmul_triton.check_speed(int4_matmul_triton)

# %% [markdown]
# **Triton beside Numba.** On a GPU, the next cell times your Triton kernel, the course's, the
# course's Numba int4 kernel and your 27.3 kernel at the measuring cell's sizes, with PyTorch's
# float16 product where it is installed and the copies. Look at B = 8: your Numba kernel reads each
# weight once for all eight rows, the Triton grid reads it eight times (mostly from L2).
# In CPU mode the cell says that it needs a GPU.

# %%
if no_triton:
    print(no_triton)
else:
    try:
        results = ch27.compare_triton(int4_matmul_triton, int4_matmul_kernel)
        for r in results:
            print(f"{r['label']:42s} {r['n']:6d} × {r['k']:5d}, B = {r['batch']:2d} "
                  f"{r['ms']:8.3f} ms {r['gbps']:7.0f} GB/s{'' if r['right'] else '  WRONG'}")
        ch27.chart(results, title="The int4 product in Triton and in Numba")
        plt.show()
    except ag.timing.NeedsGPU as why:
        print(why)

# %% [markdown]
# ## Explain: bytes and accuracy (3 points, graded by your instructor)
#
# In the cell below, in 5 to 10 sentences, with numbers from this notebook:
#
# 1. count the bytes per weight of float16, int8 and int4 with G = 128 (scales included), and say
#    what fraction of the float16 time the int8 and int4 products can reach at best, and why a
#    matrix–vector product gains exactly that much from fewer bytes while a large matrix–matrix
#    product would not;
# 2. say what fraction of the copy bandwidth your int8 kernel (or, without a GPU, the course's
#    kernels in the recorded H200 run) reached, and what limits it when it is not the bytes
#    (what a lane does per byte it loads);
# 3. compare the quantisation error of int8 and int4 with float16 in the accuracy table, and say
#    what the outlier did to each format and why smaller groups help.
#
# A full-mark answer puts a number on every claim. Studying alone: once `./aag grade` passes this
# chapter's auto-graded exercises, `ag.reveal("quantization_answer")` shows a model answer to set
# yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "quantization_answer", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; measured figures are the learner's own).* (1) A float16
# weight is 2 bytes; int8 with G = 128 is 1 + 2/128 = 1.016 bytes, int4 0.5 + 2/128 = 0.516
# bytes. A matrix–vector product does 2 FLOPs per weight read, so its time is the time to read
# the weights: at best int8 takes 1.016 / 2 = 51% of float16's time and int4 26%. A large
# matrix–matrix product reuses each weight for many activation rows, so it is limited by
# arithmetic, and fewer bytes buy little (the dequantising even adds work). (2) The speed test
# prints the fraction of the copy: a kernel that reads one byte per lane per load and then does a
# conversion, a multiply and an add per byte issues many instructions per byte moved; with 32
# bytes per warp load, the loads in flight, not the bytes, set the pace, and loading 4 bytes per
# lane (four weights unpacked with shifts) raises the fraction. The course's H200 run shows how
# much: at 16,384 × 8,192 the int8 kernel took 0.374 ms (9% of the copy of its bytes), the int4
# one 0.488 ms (4%), the float16 one 0.221 ms (29%) and cuBLAS's float16 product 0.071 ms (92%):
# written this way, the quantised kernels are *slower* than float16 despite reading half or a
# quarter of the bytes, so the saving in bytes only pays once the instructions per byte come
# down. (3) In the table, float16
# weights give a relative error of 1.9·10⁻⁴, int8 with G = 128 6.6·10⁻³ (35 times more) and int4
# 0.11 (about 600 times more): each loses about the spacing of its grid (11, 7 and 3 significant
# bits). The outlier at 20 σ makes its group's scale several times larger (20 σ against the
# ~3 σ largest of 128 normal weights), so every other weight of the group is rounded that much more
# coarsely: int8 with G = 128 goes from 6.6·10⁻³ to 1.3·10⁻², with G = 1024 (the whole row one
# group) to 3.6·10⁻², int4 from 0.11 to 0.23 and 0.64. With G = 32 only 31 other weights pay, and
# the errors move least (7.6·10⁻³ and 0.14).

# %% [markdown]
# ## Going further (not graded)
#
# - Load four bytes per lane at once in 27.2 (a uint32 view of the weights, four int8 weights
#   unpacked with shifts) and measure the fraction of the copy again; then try two rows per warp.
# - Put the activations of 27.3 in shared memory once per block (they are read by every warp) and
#   see whether it matters at B = 1 and at B = 16.
# - In Triton, compute all B activation rows in one program (a `BLOCK_B × BLOCK_N` accumulator from
#   a three-dimensional broadcast), so that each weight is read once, and compare.
# - For larger batches, dequantise a tile of weights into float16 in shared memory and use tensor
#   cores (`tl.dot` with float16 operands, float32 accumulation): the error of the float16 weights
#   is then part of the format, and the bound must say so.
# - Quantise activations too (int8 × int8 with an int32 accumulator, as SmoothQuant does) and
#   count what changes in the bytes and in the bound.
#
# **Reading:** Dettmers et al., "LLM.int8(): 8-bit Matrix Multiplication for Transformers at
# Scale" (2022); Frantar et al., "GPTQ" (2023) and Lin et al., "AWQ" (2024), for how the int4
# weights and their scales are chosen; Frantar et al., "MARLIN: Mixed-Precision Auto-Regressive
# Parallel Inference on Large Language Models" (2024), for an int4 kernel at the bandwidth
# roofline; N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 3 (the bound of a
# sum and of a dot product). The GPU MODE lectures on quantization (and the `bitsandbytes` and
# `torchao` kernels they walk through); PMPP ch. 5–6 for the memory roofline.
#
# **On AMD (HIP):** a wavefront has 64 lanes, so a lane takes every 64th column and the butterfly
# takes six steps; the kernels above run unchanged because they use `cuda.warpsize` and build the
# mask from it. The hidden tests run them at warp size 64 in CPU mode for that reason.
