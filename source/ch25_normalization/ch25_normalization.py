# %% [markdown]
# # Chapter 25 · LayerNorm and RMSNorm: one pass, stable, fused, and backward
#
# GPU MODE track, second chapter: the normalisation layers of every transformer, written as
# kernels that read each row once, stay accurate on any input, and run backward too.
#
# **Before you start:** chapters 1–6 and 10 (warp shuffles written for any warp size above all).
# **Time:** about 3.5 hours, reading and exercises included (more in CPU mode, where the simulator
# runs kernels slowly).
#
# ## What you will be able to do
# - Write **LayerNorm** over the rows of a matrix with one warp per row: each lane keeps a running
#   mean and sum of squared deviations (**Welford's** update), the lanes merge them with shuffles
#   (**Chan's** formula), and the normalise and the affine step `· γ + β` happen in the same
#   kernel, judged against float64 within an error bound you can derive.
# - Explain, and show on real numbers, why the textbook variance `E[x²] − E[x]²` gives zero,
#   negative or garbage values when the mean is large against the spread, while the two-pass and
#   Welford's formulas do not.
# - Write **RMSNorm**, and the **backward pass** of LayerNorm for the input gradient, with its two
#   row reductions fused into one loop, and measure all of it against the copy bandwidth.
# - Write the same LayerNorm in **Triton**, one program per row on a masked block, and set what
#   its compiler did for you against what you wrote by hand in Numba.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import math

import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32, uint64

ag.banner()
ch25 = ag.problems.ch25

# %% [markdown]
# ## The idea: normalise every row, then scale and shift
#
# A transformer's activations are a matrix `x` of `rows × n` float32 values: one row per token, `n`
# features. **LayerNorm** (Ba, Kiros and Hinton, 2016) makes each row have mean 0 and variance 1,
# then applies a learned scale `γ` and shift `β` (one value per column):
#
# ```
# μ = mean of the row,   σ² = mean of (x − μ)²   (divided by n: the biased variance)
# y = (x − μ) / sqrt(σ² + ε) · γ + β
# ```
#
# `ε` (a small number such as 1e-5) keeps the division finite on a constant row, and belongs
# **inside** the square root. **RMSNorm** (Zhang and Sennrich, 2019), used by Llama and most recent
# models, drops the mean and `β`: `y = x / sqrt(mean(x²) + ε) · γ`.
#
# Every output depends on a whole row, through one or two **row reductions**, and then every
# element is touched again: reductions (chapter 10) followed by an elementwise pass. Each element
# needs a handful of FLOPs and 8 bytes of traffic (read `x`, write `y`), so a good kernel runs at
# the speed of a copy. How fast it gets there, and whether its answer is right, depends on how the
# reductions are done. A small example:

# %%
x_small = np.array([[1.0, 2.0, 3.0, 4.0], [10.0, 10.0, 10.0, 14.0]], np.float32)
y_small, mu_small, r_small = ch25.layernorm_host(x_small, np.ones(4), np.zeros(4), 1e-5)
print("mean per row:", mu_small, " rstd per row:", r_small.round(4))
print("y =\n", y_small.round(4))

# %% [markdown]
# ## The CPU baseline
#
# NumPy normalises all rows at once (a mean, the squared deviations, their mean, then the formula:
# four passes over the data, each vectorised on one core); Numba's `prange` spreads rows over all
# cores with Welford's loop (below). GB/s counts the 8 bytes a row element must move.

# %%
why = ag.timing.not_measured("Timing LayerNorm on the CPU", gpu=False)
if why:
    print(why)
cpu_results = [] if why else ch25.time_cpu()
for r in cpu_results:
    print(f"{r['label']:66s} {r['ms']:8.2f} ms {r['gbps']:7.2f} GB/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# ## Numerics: three ways to compute a variance
#
# **The textbook one-pass formula.** `σ² = E[x²] − E[x]²` needs one pass over the row (sum the
# values and their squares together), which is why it is tempting on a GPU. But it subtracts two
# large, nearly equal numbers. With `x = 10⁴ + N(0, 1)`, `E[x²] ≈ 10⁸`, and a float32 near 10⁸
# has a spacing of 8: the rounding error of *each* of the two terms is already several times the
# variance (about 1) that the subtraction is supposed to leave. The result is 0, negative, or
# garbage. The loss of accuracy is set by the **condition number** `κ = |μ| / σ`: the relative
# error grows like `κ²·u` (u = 2⁻²⁴ for float32), so `κ = 10⁴` loses everything.
#
# **Two passes.** First the mean, then the mean of the squared deviations `(x − μ)²`: every term is
# small, nothing cancels, and the error grows like `κ·u` only (the mean's own rounding). The price
# is reading the row twice (three times with the normalise pass).
#
# **Welford's one-pass update** (1962). Keep a count `k`, a running mean `m` and `M2`, the sum of
# squared deviations from the running mean; for each new value `v`:
#
# ```
# k ← k + 1;   d ← v − m;   m ← m + d / k;   M2 ← M2 + d · (v − m)
# ```
#
# and `σ² = M2 / n` at the end. It reads each value once and, like two passes, works with
# deviations, so its error also grows like `κ·u` (Chan, Golub and LeVeque analyse both).
#
# **Chan's merge** (Chan, Golub and LeVeque, 1979) is what makes Welford parallel. Two partial
# results `(n_a, m_a, M2_a)` and `(n_b, m_b, M2_b)` over disjoint parts combine into the triple of
# the union exactly:
#
# ```
# n = n_a + n_b,   d = m_b − m_a,   m = m_a + d · n_b / n,   M2 = M2_a + M2_b + d² · n_a · n_b / n
# ```
#
# (write `Σ (x − m)²` over part a as `Σ (x − m_a)² + n_a (m_a − m)²`, the same for b, and use
# `m_a − m = −d·n_b/n`, `m_b − m = d·n_a/n`). So every lane of a warp runs Welford over its own
# elements, and a tree of shuffles merges the lanes' triples, as chapter 10 merged partial sums.
# The weights are the **counts**: when `n` is not a multiple of the warp size, lanes hold
# different counts, and a lane with no element has count 0 (skip that merge: `n` would be 0).
#
# The next cell computes the variance of `offset + N(0, 1)` (1024 float32 values) the three ways,
# each as one thread would (one element after another, in float32), against float64:

# %%
table = ch25.variance_errors()
print(f"{'offset':>8s} {'float64':>10s} {'E[x²]−E[x]²':>14s} {'two-pass':>11s} {'Welford':>11s}"
      f"   relative errors: textbook, two-pass, Welford")
for r in table:
    print(f"{r['offset']:8.0e} {r['exact']:10.5f} {r['textbook']:14.6g} {r['two_pass']:11.6f} "
          f"{r['welford']:11.6f}   {r['textbook_error']:9.1e} {r['two_pass_error']:9.1e} "
          f"{r['welford_error']:9.1e}")

# %% [markdown]
# ## Break it: LayerNorm with `E[x²] − E[x]²`
#
# Here is a LayerNorm kernel that looks right and is fast: one warp per row, each lane adds its
# values and their squares, two butterflies of shuffles combine them, and the variance is
# `E[x²] − E[x]²` (clamped at 0, as some libraries do, so that the square root never sees a
# negative number). **Predict before you run:** on rows of `10⁴ + N(0, 1)`, what will `y` look
# like? The right `y` is close to the `N(0, 1)` part itself.

# %%
@cuda.jit
def layernorm_textbook(x, gamma, beta, eps, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, n = x.shape
    for row in range(warp, rows, warps):
        s = float32(0.0)
        s2 = float32(0.0)
        for i in range(lane, n, cuda.warpsize):
            s += x[row, i]
            s2 += x[row, i] * x[row, i]
        offset = cuda.warpsize // 2
        while offset > 0:
            s += cuda.shfl_xor_sync(mask, s, offset)
            s2 += cuda.shfl_xor_sync(mask, s2, offset)
            offset //= 2
        mean = s / float32(n)
        var = max(s2 / float32(n) - mean * mean, float32(0.0))
        rstd = float32(1.0) / math.sqrt(var + eps)
        for i in range(lane, n, cuda.warpsize):
            y[row, i] = (x[row, i] - mean) * rstd * gamma[i] + beta[i]


demo = ch25.break_inputs(rows=4, n=200)
y_demo = np.zeros_like(demo["x"])
layernorm_textbook[2, 64](demo["x"], demo["gamma"], demo["beta"], demo["eps"], y_demo)
right = ch25.layernorm_host(demo["x"], demo["gamma"], demo["beta"], demo["eps"])[0]
print("first values, right:   ", right[0, :5].round(3))
print("first values, textbook:", y_demo[0, :5].round(3))
print(f"largest error: {np.abs(y_demo - right).max():.3g} (on values of size about 1)")
try:
    ch25.layernorm_rows.check(layernorm_textbook)
except ag.CheckFailed as failure:
    print("\nthe course's check:\n" + str(failure))

# %% [markdown]
# Each row's variance came out as 0 or a few multiples of 8 (the float32 spacing near `μ² ≈ 10⁸`),
# not as about 1: `rstd` is off by a large factor (`1 / sqrt(ε) ≈ 316` where the variance came out
# 0), and so is every `y`. The check's inputs include such rows on purpose. Real activations do have large
# offsets (a feature that is always around 30 with a spread of 0.01 has `κ = 3000`), and mixed
# precision makes it worse. Nothing about the formula is wrong in exact arithmetic: it is the
# order of the float32 operations that fails.
#
# ## Exercise 25.1 · LayerNorm, one warp per row (3 points + 2 for speed)
#
# Write `layernorm_kernel(x, gamma, beta, eps, y)`: `x` and `y` float32 `[rows, n]`, `gamma` and
# `beta` float32 `[n]`, `eps` a float32. One **warp** normalises one row at a time:
#
# - warp `w = (blockIdx.x · blockDim.x + threadIdx.x) // warpsize` takes rows `w`, `w + W`,
#   `w + 2W`, ... where `W` is the number of warps in the grid (the grid has fewer warps than
#   rows);
# - lane `l` of the warp runs Welford's update over the row's elements `l`, `l + warpsize`, ...
#   (the warp reads consecutive addresses: coalesced);
# - the lanes merge their `(count, mean, M2)` with `cuda.shfl_xor_sync` and Chan's formula (a
#   butterfly: after log2(warpsize) steps every lane holds the row's triple);
# - each lane writes its elements of `y = (x − μ) · rstd · γ + β`, `rstd = 1 / sqrt(M2 / n + ε)`.
#
# Write it for **any warp size** (`cuda.warpsize`, the mask `~uint64(0) >> (64 − cuda.warpsize)`,
# as in chapter 10). Roughly 30 lines.
#
# **What the check does.** Blocks of 64 threads (64 and 128 in the hidden tests), 2 blocks in CPU
# mode (a few dozen on a GPU), `y` filled with NaN. Rows are of three kinds, shuffled: a large
# offset (`|μ|` up to `10⁴ σ`), a spread near `sqrt(ε)` (where `ε` matters), a moderate offset;
# `ε` is drawn per case between 10⁻⁶ and 10⁻², `γ` has both signs. Visible: 4 rows of 120, 5 rows
# of 7 (shorter than a warp: most lanes have nothing), 3 rows of 1. Hidden: other sizes, 4 times
# the largest visible one, run at warp sizes 64 and 32 in CPU mode. Every `y` must be within the
# float32 error bound of a stable algorithm (see below): `E[x²] − E[x]²` and the `n − 1` variance
# are not. **The speed test** (on a GPU) normalises 16384 rows of 4096 with blocks of 256, against
# the course's kernel timed in the same run (you need half its speed) and NumPy on the host (10×);
# it reports your GB/s against a copy of the same bytes. In CPU mode it says that it needs a GPU.
#
# **The error bound**, in short (the package's docstring has every step). With `u = 2⁻²⁴`,
# `γ_c = c·u / (1 − c·u)`, `c` the longest chain of roundings (a lane's `n / 32` elements and the
# merges), `A` the row's largest `|x|`: the mean is within `δμ = γ_c·A`; the variance within
# `γ_2c·(σ² + 2Aσ) + δμ²`, that is a relative error of about `4·c·κ·u` (Chan, Golub and LeVeque's
# bound for the stable formulas); `rstd` inherits 1.5 times that relative error divided by
# `1 + ε/σ²`, plus a few `u`; and `y` adds `|γ|·rstd·(δμ + |x − μ|·ρ)` and the last roundings.
# The textbook formula's error, about `κ²·u`, is far outside it.

# %% nbgrader={"grade": false, "grade_id": "layernorm_rows_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def layernorm_kernel(x, gamma, beta, eps, y):
    ### BEGIN SOLUTION
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, n = x.shape
    for row in range(warp, rows, warps):
        count = float32(0.0)
        mean = float32(0.0)
        m2 = float32(0.0)
        for i in range(lane, n, cuda.warpsize):
            v = x[row, i]
            count += float32(1.0)
            d = v - mean
            mean += d / count
            m2 += d * (v - mean)
        offset = cuda.warpsize // 2
        while offset > 0:
            count_b = cuda.shfl_xor_sync(mask, count, offset)
            mean_b = cuda.shfl_xor_sync(mask, mean, offset)
            m2_b = cuda.shfl_xor_sync(mask, m2, offset)
            total = count + count_b
            if total > float32(0.0):
                d = mean_b - mean
                mean += d * (count_b / total)
                m2 += m2_b + d * d * (count * count_b / total)
                count = total
            offset //= 2
        rstd = float32(1.0) / math.sqrt(m2 / float32(n) + eps)
        for i in range(lane, n, cuda.warpsize):
            y[row, i] = (x[row, i] - mean) * rstd * gamma[i] + beta[i]
    ### END SOLUTION


# %% [markdown]
# Try it on the break-it rows first:

# %%
y_mine = np.zeros_like(demo["x"])
layernorm_kernel[2, 64](demo["x"], demo["gamma"], demo["beta"], demo["eps"], y_mine)
print(f"largest error on rows of 1e4 + N(0, 1): {np.abs(y_mine - right).max():.3g}")

# %% nbgrader={"grade": true, "grade_id": "layernorm_rows_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch25.layernorm_rows.check(layernorm_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch25.layernorm_rows.check_hidden(layernorm_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "layernorm_rows_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch25.layernorm_rows.check_speed(layernorm_kernel)

# %% [markdown]
# **Bytes.** The least LayerNorm moves is `x` read once and `y` written once, 8 bytes per element
# (plus `γ` and `β`, 8 bytes per column, nothing beside the rows). Your kernel reads each row twice:
# once for the statistics, once to normalise. Whether the second read comes from the caches or from
# HBM again depends on how much is in flight: a row of 4096 floats is 16 KiB, and a GPU full of
# warps (64 per SM, 132 SMs on an H200) holds about 130 MiB of rows at once, more than its 60 MiB
# of L2, so expect part of the second read to cost HBM bandwidth; the measuring cell shows
# how much. Keeping the row in registers (each lane holds its `n / 32` values) removes that second
# read for rows that fit, which is what the fused kernels of Apex and Triton's tutorial do.
#
# ## Exercise 25.2 · RMSNorm (2 points)
#
# Write `rmsnorm_kernel(x, gamma, eps, y)`: the same rows and launch as 25.1,
# `y = x · rstd · γ` with `rstd = 1 / sqrt(mean(x²) + ε)`. One reduction per row (a sum of
# squares: every term is positive, so nothing cancels), then the scale. Roughly 20 lines. The
# check is 25.1's, with RMSNorm's bound: the mean of the squares has a relative error of at most
# `γ_(c+2)`, `rstd` 1.5 times that plus a few `u`, and each `y` two more roundings.

# %% nbgrader={"grade": false, "grade_id": "rmsnorm_rows_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def rmsnorm_kernel(x, gamma, eps, y):
    ### BEGIN SOLUTION
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, n = x.shape
    for row in range(warp, rows, warps):
        s2 = float32(0.0)
        for i in range(lane, n, cuda.warpsize):
            s2 += x[row, i] * x[row, i]
        offset = cuda.warpsize // 2
        while offset > 0:
            s2 += cuda.shfl_xor_sync(mask, s2, offset)
            offset //= 2
        r = float32(1.0) / math.sqrt(s2 / float32(n) + eps)
        for i in range(lane, n, cuda.warpsize):
            y[row, i] = x[row, i] * r * gamma[i]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "rmsnorm_rows_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch25.rmsnorm_rows.check(rmsnorm_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch25.rmsnorm_rows.check_hidden(rmsnorm_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## The backward pass
#
# Training needs the gradient of the loss with respect to the layer's input, `dx`, from the
# gradient with respect to its output, `dy`. Write `x̂ = (x − μ) · r` with `r = 1 / sqrt(σ² + ε)`,
# so `y = x̂ · γ + β`, and `g = γ · dy` (elementwise), the gradient with respect to `x̂`. The chain
# rule through `x̂` needs `∂x̂_i / ∂x_j`. The mean gives `∂μ / ∂x_j = 1/n`; the variance
# `∂σ² / ∂x_j = 2 (x_j − μ) / n` (the terms through `μ` add up to zero, since `Σ (x_i − μ) = 0`);
# so `∂r / ∂x_j = −r³ (x_j − μ) / n`, and
#
# ```
# ∂x̂_i / ∂x_j = r (δ_ij − 1/n) − r x̂_i x̂_j / n
# dx_j = Σ_i g_i ∂x̂_i / ∂x_j = r · (g_j − mean(g) − x̂_j · mean(g · x̂))
# ```
#
# Two row reductions, `mean(g)` and `mean(g · x̂)`, then an elementwise pass. The forward pass saves
# `μ` and `r` per row (8 bytes a row), so the backward pass need not recompute them; the gradients
# of `γ` and `β` (sums over the rows of `dy · x̂` and `dy`) are column reductions, a separate
# kernel in practice, and not part of this exercise.
#
# ## Exercise 25.3 · LayerNorm's input gradient (4 points)
#
# Write `layernorm_backward_kernel(dy, x, gamma, mean, rstd, dx)`: `dy`, `x`, `dx` float32
# `[rows, n]`, `gamma` `[n]`, `mean` and `rstd` `[rows]` (the forward pass's saved values). One warp
# per row as before; **one** loop over the lane's elements accumulates both sums
# (`Σ γ·dy` and `Σ γ·dy·x̂`), **one** butterfly combines both, then each lane writes its
# elements of `dx`. Roughly 25 lines.
#
# **What the check does.** 25.1's sizes, launches and kinds of rows; `dy` has a mean and a part
# along `x̂` of its own in every row, so leaving out either mean term fails. `dx` is judged against
# the formula evaluated in float64 from the **saved** `mean` and `rstd`, within the bound of two
# sums of `n` terms (`γ_(c+6)` times the sums of magnitudes) and four roundings per element.

# %% nbgrader={"grade": false, "grade_id": "layernorm_backward_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def layernorm_backward_kernel(dy, x, gamma, mean, rstd, dx):
    ### BEGIN SOLUTION
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, n = x.shape
    for row in range(warp, rows, warps):
        mu = mean[row]
        r = rstd[row]
        a = float32(0.0)
        b = float32(0.0)
        for i in range(lane, n, cuda.warpsize):
            g = gamma[i] * dy[row, i]
            a += g
            b += g * ((x[row, i] - mu) * r)
        offset = cuda.warpsize // 2
        while offset > 0:
            a += cuda.shfl_xor_sync(mask, a, offset)
            b += cuda.shfl_xor_sync(mask, b, offset)
            offset //= 2
        a /= float32(n)
        b /= float32(n)
        for i in range(lane, n, cuda.warpsize):
            dx[row, i] = r * (gamma[i] * dy[row, i] - a - (x[row, i] - mu) * r * b)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "layernorm_backward_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch25.layernorm_backward.check(layernorm_backward_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch25.layernorm_backward.check_hidden(layernorm_backward_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Measure: over row lengths, against a copy
#
# On a GPU, the next cell times your LayerNorm and RMSNorm, the course's Welford kernel and its
# two-pass kernel, PyTorch's fused kernels where PyTorch is installed with a GPU (an optional
# extra; the course never needs it), and a copy of the same bytes, at row lengths from 256 to
# 16384 with `rows · n = 2²⁶` every time (256 MiB in, 256 MiB out). GB/s counts `x` read once and
# `y` written once. In CPU mode it says that it needs a GPU and draws the course's H200 run
# instead.

# %%
mine = {"LayerNorm (yours)": ("layernorm", layernorm_kernel),
        "RMSNorm (yours)": ("rmsnorm", rmsnorm_kernel)}
try:
    results = ch25.measure(mine)
    for r in results:
        print(f"{r['label']:38s} n = {r['n']:6d} {r['ms']:8.3f} ms {r['gbps']:7.0f} GB/s"
              f"{'' if r['right'] else '   WRONG'}")
    ch25.chart(results)
    plt.show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels:")
    if ch25.chart() is not None:
        plt.show()

# %% [markdown]
# ## LayerNorm in Triton: blocks instead of threads
#
# Triton (Tillet, Kung and Cox, 2019) is a language for GPU kernels embedded in Python, the one
# PyTorch's compiler writes its fused kernels in. A Triton kernel is written for one **program**
# that works on whole **blocks** of values, not for one thread: a launch `kernel[(rows,)](...)`
# runs `rows` programs, `tl.program_id(0)` says which one this is, and `tl.arange(0, BLOCK)` is a
# vector of `BLOCK` indices (a power of two, fixed when the kernel compiles: `BLOCK:
# tl.constexpr`) that every operation acts on at once. Which thread of which warp holds which
# element is the compiler's business. LayerNorm with one program per row starts like this:
#
# ```python
# row = tl.program_id(0)
# cols = tl.arange(0, BLOCK)                  # BLOCK = triton.next_power_of_2(n), at least n
# mask = cols < n                             # False in the lanes past the row's end
# x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
# mean = tl.sum(x, axis=0) / n
# ```
#
# - **Masks.** A masked load reads nothing where the mask is False and gives `other` there, so
#   with `other=0.0` the padded lanes add nothing to `tl.sum(x)`. A masked store writes nothing
#   there: without the mask the program would write past the row, into the next one.
# - **The padded lanes after the mean.** In a padded lane `x − mean` is `0 − mean`, and its square
#   is `mean²`. On a row of `10⁴ + N(0, 1)` every padded lane adds 10⁸ to a sum of squares that
#   should be about `n`. So zero those lanes before squaring, `d = tl.where(mask, x - mean, 0.0)`,
#   then `var = tl.sum(d * d, axis=0) / n`. That is the two-pass formula of the Numerics section,
#   stable for the same reason, and its second pass reads no memory: the row is in registers.
# - **`tl.sum`** reduces the block: each thread adds the elements it holds, the lanes of a warp
#   merge their sums by shuffles, and the warps of the program merge theirs through shared memory.
#   It is the tree you built by hand in 25.1, with the shuffle offsets, the lane mask for the warp
#   size and the lanes that hold no data all taken care of. `tl.rsqrt(v)` is `1 / sqrt(v)` in one
#   instruction (an approximate one on the GPU, within about 2 units in the last place).
# - **What else the compiler decides.** It spreads the block over `num_warps` warps (a launch
#   option, 4 unless you say otherwise), gives each thread a few consecutive columns so that a
#   warp's loads are coalesced (16 bytes per thread when it can prove the rows aligned: Triton
#   compiles a separate version when an integer argument such as `n` is a multiple of 16), and
#   keeps the row in registers between the two reductions. In 25.1 you chose each lane's
#   elements, the butterfly and the merge weights yourself; here you choose the block and the
#   warps, and the rest follows.
#
# A Triton kernel takes its arrays as pointers: Triton accepts any object with a `data_ptr()` and
# a `dtype`, and `view(array)` wraps the course's device arrays that way (on a GPU, the address of
# a Numba device array; in CPU mode, its host memory). Scalars go in as Python numbers: `n` as an
# integer, `eps` as a `float`.
#
# **In CPU mode** Triton runs its interpreter: each program of the grid runs in NumPy, about a
# millisecond each, so the checks use a few dozen rows. The interpreter adds in another order than
# a GPU does (NumPy's pairwise sums), and the error bound below allows for both.
#
# **Installing Triton.** The course installs it on Linux (x86-64 and Arm64); by hand it is
# `pip install 'triton>=3.9,<3.10'`, and it does not need PyTorch. Triton publishes no packages
# for macOS or Windows: there the next cell says so, the checks of 25.4 skip with that reason,
# and everything before this section runs as it is (on Windows, WSL runs Triton).

# %%
from autograder.machine.triton_bridge import unavailable_reason, view

no_triton = unavailable_reason()        # None where Triton runs
if no_triton:
    print(no_triton)
    triton = tl = ch25.TritonMissing(no_triton)   # stand-ins: the cells below still define things
else:
    import triton
    import triton.language as tl
    where = "on the GPU" if ag.backend.is_gpu else "in its interpreter (CPU mode)"
    print(f"Triton {triton.__version__}, {where}")

# %% [markdown]
# ## Exercise 25.4 · LayerNorm in Triton (3 points + 2 for speed)
#
# Write the kernel `layernorm_triton_kernel(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK)` and
# its launcher `layernorm_triton(x, gamma, beta, eps, y)`: `x` and `y` float32 `[rows, n]` device
# arrays, `gamma` and `beta` float32 `[n]`, `eps` a Python float. The same LayerNorm as 25.1, in
# Triton:
#
# - one program per row: the grid is `(rows,)`, and row `r` starts at element `r · n`;
# - one block covers the row, `BLOCK = triton.next_power_of_2(n)`, with the loads and the store
#   masked by `cols < n`;
# - the mean first, then the mean of the squared deviations with the padded lanes zeroed (never
#   `E[x²] − E[x]²`: the checks have the same large-offset rows as 25.1), then
#   `y = (x − μ) · rstd · γ + β` with `rstd = tl.rsqrt(σ² + ε)`;
# - the launcher wraps every array in `view(...)` and picks the warps: about 16 columns per
#   thread, `num_warps = min(16, max(1, BLOCK // 512))`.
#
# Roughly 12 lines for the kernel and 4 for the launcher.
#
# **What the check does.** 25.1's rows, `ε`, `γ` and `β`, `y` filled with NaN: visible, 4 rows of
# 120, 5 rows of 7 and 3 rows of 1; hidden, other sizes (4 times the largest visible one, and
# random ones, all odd, so that no block size divides them). Every `y` must be within 25.1's error
# bound, with a longer chain of roundings: `c = ceil(n / 32) + 22` instead of `+ 12`. On a GPU a
# thread adds its own elements one after another (about `n / 32` with one warp, and a few more
# when the compiler gives it runs of 4 consecutive columns), then 5 shuffle steps and up to 5 more
# across 32 warps, and the division by `n` may be the approximate one; in CPU mode `tl.sum` is
# NumPy's pairwise sum, whose longest chain is shorter. **The speed test** (on a GPU) is 25.1's:
# 16384 rows of 4096, against the course's Triton kernel timed in the same run (you need half its
# speed) and NumPy on the host (10×). In CPU mode it says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "layernorm_triton_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@triton.jit
def layernorm_triton_kernel(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n
    rstd = tl.rsqrt(var + eps)
    gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0)
    beta = tl.load(beta_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, d * rstd * gamma + beta, mask=mask)
    ### END SOLUTION


def layernorm_triton(x, gamma, beta, eps, y):
    ### BEGIN SOLUTION
    rows, n = x.shape
    block = triton.next_power_of_2(n)
    layernorm_triton_kernel[(rows,)](view(x), view(gamma), view(beta), view(y), n, eps,
                                     BLOCK=block, num_warps=min(16, max(1, block // 512)))
    ### END SOLUTION


# %% [markdown]
# Try it on the break-it rows first (device arrays: on a GPU, `view` needs the array on the
# device):

# %%
if no_triton:
    print(no_triton)
else:
    d_x, d_gamma, d_beta = (cuda.to_device(demo[k]) for k in ("x", "gamma", "beta"))
    d_y = cuda.device_array_like(d_x)
    layernorm_triton(d_x, d_gamma, d_beta, float(demo["eps"]), d_y)
    print(f"largest error on rows of 1e4 + N(0, 1): {np.abs(d_y.copy_to_host() - right).max():.3g}")

# %% nbgrader={"grade": true, "grade_id": "layernorm_triton_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch25.layernorm_triton.check(layernorm_triton)
### BEGIN HIDDEN TESTS
ag.problems.ch25.layernorm_triton.check_hidden(layernorm_triton)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "layernorm_triton_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch25.layernorm_triton.check_speed(layernorm_triton)

# %% [markdown]
# **Triton beside Numba.** On a GPU, the next cell times your Triton LayerNorm, the course's,
# your Numba kernel of 25.1 and the course's Welford kernel at the measuring cell's row lengths
# (`rows · n = 2²⁶`), with PyTorch's where it is installed and a copy of the same bytes. Look at
# where each one is close to the copy and where not: the Triton kernel reads each row once (it is
# in registers), the Numba one twice. In CPU mode the cell says that it needs a GPU.

# %%
if no_triton:
    print(no_triton)
else:
    try:
        results = ch25.compare_triton(layernorm_triton, layernorm_kernel)
        for r in results:
            print(f"{r['label']:38s} n = {r['n']:6d} {r['ms']:8.3f} ms {r['gbps']:7.0f} GB/s"
                  f"{'' if r['right'] else '   WRONG'}")
        ch25.chart(results, title="LayerNorm in Triton and in Numba over row lengths")
        plt.show()
    except ag.timing.NeedsGPU as why:
        print(why)

# %% [markdown]
# ## Explain: accuracy and bytes (3 points, graded by your instructor)
#
# In the cell below, in 5 to 10 sentences, with numbers from this notebook:
#
# 1. explain why `E[x²] − E[x]²` failed on the break-it rows while Welford did not, using the
#    condition number `κ = |μ| / σ` and float32's spacing near `E[x²]`; say what error each
#    formula showed in the variance table at an offset of 10⁴;
# 2. say why Chan's merge weights the two means by the counts, and what goes wrong in a warp when
#    `n` is not a multiple of the warp size if they are replaced by 1/2;
# 3. count the bytes your LayerNorm moves per element (reads of `x`, including the second pass,
#    and the write of `y`) and compare with the copy's: on a GPU with your measurements, without
#    one with the recorded H200 run or your expectation; say which row lengths would let a kernel
#    keep the row in registers, and what that saves.
#
# A full-mark answer puts a number on every claim. Studying alone: once `./aag grade` passes this
# chapter's auto-graded exercises, `ag.reveal("normalization_answer")` shows a model answer to set
# yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "normalization_answer", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; measured figures are the learner's own).* (1) On rows of
# `10⁴ + N(0, 1)`, `κ ≈ 10⁴` and `E[x²] ≈ 10⁸`, where float32 values are 8 apart: the sum of squares
# and `μ²` each carry rounding errors of several units, while the variance they should leave is
# about 1, so the difference is 0, negative or a multiple of the spacing (the table gives −152
# instead of 0.97, a relative error of about 160, against 2·10⁻⁵ for two passes and 2·10⁻⁴ for
# Welford). The textbook error grows like `κ²·u` (10⁸ · 6·10⁻⁸ ≈ 6 before any accumulation);
# Welford's and the two-pass formula's like `κ·u` times the chain, because they subtract the mean
# before squaring, so every term they add is small. (2) The merged mean is the weighted average
# `(n_a m_a + n_b m_b) / n`, and the `d² n_a n_b / n` term is the spread between the two parts'
# means counted for every element; with `n = 150` and 32 lanes, 22 lanes hold 5 elements and 10
# hold 4, so weights of 1/2 give those lanes' values the wrong share of the mean (and lanes with
# no element at all, as in rows of 7, would pull the mean towards 0). (3) My kernel reads `x`
# twice and writes `y` once: 12 bytes per element against the 8 a copy moves, so if the second
# read came from HBM it could reach at most 2/3 of the copy's GB/s (counting 8 bytes). The
# recorded H200 run is far below even that. At n = 1024 the course's Welford kernel moved
# 1,306 GB/s against the copy's 4,229 (31%); its two-pass kernel 1,540 (36%); its RMSNorm, one
# read fewer and no division per element, 2,163 (51%); PyTorch's `layer_norm` 1,628 (39%). So
# bytes are not what limits these kernels. Welford's update divides once per element, in a chain
# that each lane runs one value at a time, and that chain, with few loads in flight per warp,
# sets the pace (the two-pass kernel, with more reads but no division, is faster). A lane holding
# its values in registers needs `n / 32` floats: up to about 64 per lane (n ≤ 2048) is cheap. It
# can load them all before computing anything, which puts many loads in flight, and it then moves
# exactly the copy's 8 bytes per element, as Apex's and Triton's fused kernels do.

# %% [markdown]
# ## Going further (not graded)
#
# - Keep each lane's values in registers for rows up to 2048 (a fixed-size local array) and
#   measure how close to the copy you get; then write a version with one **block** per row for
#   rows of 16k and more (Welford per warp, Chan's merge of the warps' triples in shared memory).
# - Write the forward pass that also **saves** `μ` and `rstd` per row, then the gradients of `γ`
#   and `β` (column sums over the rows: a second kernel, or per-block partial sums and atomics).
# - Fuse a residual add into the forward pass (`x + residual` normalised, both written), as
#   transformer blocks do, and count the bytes it saves.
# - Try float16 or bfloat16 inputs with float32 statistics: where does the textbook formula break
#   now?
# - In Triton, write the version for rows longer than a block holds: a loop over column blocks,
#   either the three passes of Triton's tutorial (mean, squared deviations, normalise; the row
#   read three times) or each block's `(count, mean, M2)` from `tl.sum` merged into the row's by
#   Chan's formula (read twice). Time both against your one-block kernel at n = 16384 and 65536,
#   and try `num_warps` from 4 to 16.
#
# **Reading:** B. P. Welford, "Note on a method for calculating corrected sums of squares and
# products" (Technometrics, 1962); T. F. Chan, G. H. Golub and R. J. LeVeque, "Updating formulae and
# a pairwise algorithm for computing sample variances" (Stanford report, 1979) and "Algorithms for
# computing the sample variance: analysis and recommendations" (The American Statistician, 1983);
# N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, §1.9 and ch. 4 (summation). Ba,
# Kiros and Hinton, "Layer Normalization" (2016); Zhang and Sennrich, "Root Mean Square Layer
# Normalization" (2019). The GPU MODE lectures on reductions and on fused kernels (their
# `reference-kernels` problems include LayerNorm-style row kernels); NVIDIA Apex's fused
# LayerNorm (`apex/contrib/csrc/layer_norm`, Welford with a warp-level Chan merge) and the
# "Layer Normalization" tutorial of Triton, forward and backward. PMPP ch. 10 (reduction) for the
# trees and chapter 16 for a layer's backward pass.
#
# **On AMD (HIP):** a wavefront has 64 lanes, so the butterfly takes six steps instead of five and
# each lane holds `n / 64` values; the kernels above run unchanged because they use
# `cuda.warpsize` and build the mask from it (a literal `0xffffffff` would name only half the
# wavefront). The hidden tests run them at warp size 64 in CPU mode for that reason. PyTorch's
# ROCm build and MIOpen provide the vendor's LayerNorm there.
