# %% [markdown]
# # Chapter 24 · Softmax: from three passes to one fused, online pass
#
# The GPU MODE track, first chapter: the softmax of attention and of every classifier's last
# layer, written the way fast libraries write it.
#
# **Before you start:** chapters 1–6 and 10 (chapter 10's warp shuffles above all). **Time:**
# about 3.5 hours, reading and exercises included (more in CPU mode, where the simulator runs
# kernels slowly).
#
# ## What you will be able to do
# - Write a **row softmax** that is right for rows of 1 to 65,536 columns, for values as large as
#   10⁴ (where `exp` alone overflows) and for **masked** entries (−inf), with one thread per row
#   and the **online** normalizer: the row's maximum and sum found in **one** read instead of two.
# - Merge partial results `(m, d)` with a rule that makes the online softmax **parallel**, and
#   use it to write a **fused, one-warp-per-row** kernel with warp shuffles, timed on a GPU
#   against the course's kernel and a copy of the same bytes.
# - Derive the **error bound** of a float32 softmax against the exact one (the bound the checks
#   use) and say which part of it grows with the row's length.
# - Write the same softmax in **Triton**, one program per row with the row in one block of
#   registers (read once, written once), and time it beside your warp kernel on a GPU.
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
ch24 = ag.problems.ch24

# %% [markdown]
# ## The idea: a softmax turns scores into probabilities
#
# For a row of scores `x_0, ..., x_(n−1)` (the logits of a classifier, one query's attention
# scores), the softmax is
#
# ```
# y_j = exp(x_j) / Σ_k exp(x_k)
# ```
#
# every `y_j` in (0, 1], the row summing to 1, the largest score getting the largest share. A
# batch is a matrix `x[rows, cols]`, and the softmax is taken **along each row**.
#
# **Why subtract the maximum.** `exp` grows fast: in float32 the largest finite value is about
# 3.4·10³⁸, and `exp(x)` passes it for x > ln(3.4·10³⁸) ≈ 88.72. Scores of a few hundred are
# ordinary (attention scores grow with the head's dimension), and then `exp(x_j)` is `inf` and
# `inf / inf` is NaN. Since `exp(x_j − c) / Σ_k exp(x_k − c)` is the same fraction for any `c`,
# take `c = m`, the row's **maximum**: every argument is then ≤ 0, every `exp` is in (0, 1], and
# the sum is at least 1 (the maximum's own term). Nothing overflows, and terms far below the
# maximum underflow to 0, where they belong.

# %%
row = np.array([1.0, 2.0, 3.0, 90.0], np.float32)
with np.errstate(over="ignore", invalid="ignore"):
    e = np.exp(row)                                   # float32: exp(90) is inf
    print("without the maximum:", e / e.sum())
print("with the maximum:   ", ch24.softmax_host(row[None, :])[0])

# %% [markdown]
# ## The CPU baseline
#
# Two ways on the host, timed on 2048 rows of 1024 values: NumPy's `max`, `exp`, `sum` and a
# division, each a pass over the whole matrix (one core), and a `numba.njit` loop with its rows
# spread over all cores. GB/s counts what any softmax must move: `x` read once and `y` written
# once, 8 bytes a value.

# %%
why = ag.timing.not_measured("Timing the CPU softmax", gpu=False)
if why:
    print(why)
cpu_results = [] if why else ch24.time_cpu()
for r in cpu_results:
    print(f"{r['label']:50s} {r['ms']:8.2f} ms {r['gbps']:7.2f} GB/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# ## Three passes, and the online normalizer
#
# The textbook softmax reads the row **three** times: once for the maximum `m`, once for the sum
# `d = Σ exp(x_k − m)`, once more to write `y_j = exp(x_j − m) / d`. On a GPU a softmax is
# memory bound (a few operations per 8 bytes), so its time is its traffic: three reads and a
# write, where one read and one write would do.
#
# Milakov and Gimelshein (2018) compute `m` and `d` **together**, in one read. Keep a running
# maximum `m` and a running sum `d` of `exp(x_k − m)` over the values seen so far. When the next
# value `v` arrives:
#
# - if `v ≤ m`, the maximum stays, and `d ← d + exp(v − m)`;
# - if `v > m`, every term already in `d` was taken relative to the old maximum. Since
#   `exp(x_k − m_new) = exp(x_k − m_old) · exp(m_old − m_new)`, multiplying the whole sum by
#   `exp(m_old − m_new)` moves it to the new maximum, and the new term is `exp(v − v) = 1`:
#
# ```
# d ← d · exp(m_old − m_new) + exp(v − m_new),    m ← m_new = max(m_old, v)
# ```
#
# which covers both cases. Start from `m = −inf, d = 0` (nothing seen). After the last value,
# `d` is exactly `Σ exp(x_k − m)` for the row's maximum `m`, and one more read writes `y`: two
# reads and a write. Watch the pair on a short row; `d` shrinks each time the maximum grows:

# %%
for step in ch24.online_steps([2.0, 1.0, 5.0, 3.0, 7.0]):
    print(f"x = {step['x']:4.1f}   m = {step['m']:4.1f}   d = {step['d']:.6f}"
          f"{'   (rescaled)' if step['rescaled'] else ''}")
x5 = np.array([[2.0, 1.0, 5.0, 3.0, 7.0]])
print("Σ exp(x − 7) =", float(np.exp(x5 - 7).sum()))

# %% [markdown]
# **The merge rule: what makes it parallel.** Two pieces of a row, folded separately, give pairs
# `(m_1, d_1)` and `(m_2, d_2)`. The whole row's pair is
#
# ```
# m = max(m_1, m_2),    d = d_1 · exp(m_1 − m) + d_2 · exp(m_2 − m)
# ```
#
# each sum moved to the common maximum. The merge is associative and commutative (up to
# rounding), like the `+` of chapter 10's reductions: the lanes of a warp can fold their own
# columns, then merge their pairs in a tree of shuffles; the warps of a block can merge theirs
# through shared memory. The online update above is the merge of `(m, d)` with `(v, 1)`.

# %%
left, right = ch24.online_steps([2.0, 1.0, 5.0])[-1], ch24.online_steps([3.0, 7.0])[-1]
print("merged:", ch24.merge((left["m"], left["d"]), (right["m"], right["d"])),
      " whole row:", (ch24.online_steps([2.0, 1.0, 5.0, 3.0, 7.0])[-1]["m"],
                      ch24.online_steps([2.0, 1.0, 5.0, 3.0, 7.0])[-1]["d"]))

# %% [markdown]
# ## Masked entries: −inf
#
# Attention masks a score by setting it to −inf (a padded position, or a future token in a
# causal model): `exp(−inf) = 0`, so it gets no share, and the rest of the row still sums to 1.
# Two cases need a rule:
#
# - **A row with some −inf entries.** `y = 0` there. But the online pair starts at
#   `m = −inf`: if the row **begins** with −inf entries (left padding), the first update computes
#   `exp(m_old − m_new) = exp(−inf − (−inf))`, and `−inf − (−inf)` is **NaN**. From then on `d`
#   is NaN, however many real values follow. A masked entry must add nothing and never reach
#   that subtraction; a merge of two empty pairs (both `m = −inf`) must stay `(−inf, 0)`.
# - **A row whose entries are all −inf.** It has no softmax: `0 / 0`. **This course's rule: such
#   a row is all 0** (a query that may attend to nothing gets nothing; FlashAttention does the
#   same, where `torch.softmax` returns NaN). The checks enforce it: every `y` of such a row must
#   be exactly 0.
#
# The checks' inputs hold rows with a prefix of −inf, scattered −inf, a suffix of −inf (a causal
# mask) and rows of −inf only; their values have offsets up to ±10⁴ with both small and large
# spreads, so a softmax without the maximum overflows; and `y` starts as NaN, so an output never
# written is seen.

# %%
masked = np.array([[-np.inf, -np.inf, 1.0, 2.0],
                   [-np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
print(ch24.softmax_host(masked))

# %% [markdown]
# ## Exercise 24.1 · One thread per row, online (3 points)
#
# Write `softmax_rows_kernel(x, y)`: `x` and `y` float32 `[rows, cols]`; thread
# `r = cuda.grid(1)` computes row `r` (threads past the last row do nothing). One loop over the
# row folds each value into the pair `(m, d)` with the online update (start from
# `m = float32(-math.inf)`, `d = float32(0)`; skip −inf values); a second loop writes
# `y[r, j] = exp(x[r, j] − m) / d`, or 0 when the row had no finite value (`d == 0`). Use
# `math.exp` on float32 values. Roughly 14 lines.
#
# **What the check does.** One thread per row, blocks of 64 threads (32 and 128 in the hidden
# tests), `y` filled with NaN. Visible: 70 rows of 33 columns (two blocks, the second partial),
# 5 rows of 300, one value. Hidden: 9 rows of 1100, 131 rows of 7, 4 × 2 and two random shapes,
# other seeds. Every element must be within the error bound of a float32 softmax (derived in
# Exercise 24.3), and masked entries and fully masked rows exactly 0.

# %% nbgrader={"grade": false, "grade_id": "softmax_rows_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def softmax_rows_kernel(x, y):
    ### BEGIN SOLUTION
    r = cuda.grid(1)
    if r < x.shape[0]:
        m = float32(-math.inf)
        d = float32(0.0)
        for j in range(x.shape[1]):
            v = x[r, j]
            if v > m:
                d = d * math.exp(m - v) + float32(1.0)
                m = v
            elif v > float32(-math.inf):
                d += math.exp(v - m)
        for j in range(x.shape[1]):
            if d > float32(0.0):
                y[r, j] = math.exp(x[r, j] - m) / d
            else:
                y[r, j] = float32(0.0)
    ### END SOLUTION


# %% [markdown]
# Try it on the rows above (a large offset, a left-padded row, a fully masked one):

# %%
small = np.array([[1.0, 2.0, 3.0, 90.0], [-np.inf, -np.inf, 1.0, 2.0],
                  [-np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
d_y = cuda.to_device(np.full(small.shape, np.nan, np.float32))
softmax_rows_kernel[1, 32](cuda.to_device(small), d_y)
print("yours:\n", d_y.copy_to_host(), "\nexpected:\n", ch24.softmax_host(small))

# %% nbgrader={"grade": true, "grade_id": "softmax_rows_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch24.softmax_rows.check(softmax_rows_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch24.softmax_rows.check_hidden(softmax_rows_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Break it: no maximum, and the −inf trap
#
# Two kernels that look right on small, friendly rows. **Predict before you run:** what does
# each give for the row `[100, 101, 102]`, and for `[−inf, 1, 2]`?

# %%
@cuda.jit
def softmax_without_max(x, y):
    r = cuda.grid(1)
    if r < x.shape[0]:
        d = float32(0.0)
        for j in range(x.shape[1]):
            d += math.exp(x[r, j])                  # no maximum subtracted
        for j in range(x.shape[1]):
            y[r, j] = math.exp(x[r, j]) / d


@cuda.jit
def softmax_online_unguarded(x, y):
    r = cuda.grid(1)
    if r < x.shape[0]:
        m = float32(-math.inf)
        d = float32(0.0)
        for j in range(x.shape[1]):
            m_new = max(m, x[r, j])
            d = d * math.exp(m - m_new) + math.exp(x[r, j] - m_new)   # −inf − (−inf)?
            m = m_new
        for j in range(x.shape[1]):
            y[r, j] = math.exp(x[r, j] - m) / d


import warnings

friendly = np.array([[0.5, 1.0, 2.0]], np.float32)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)     # CPU mode: NumPy's notes on inf and NaN
    for kernel in (softmax_without_max, softmax_online_unguarded):
        d_y = cuda.to_device(np.full(friendly.shape, np.nan, np.float32))
        kernel[1, 32](cuda.to_device(friendly), d_y)
        print(f"{kernel.__name__:26s} on a friendly row: {d_y.copy_to_host()[0]}")
    for kernel in (softmax_without_max, softmax_online_unguarded):
        try:
            ch24.softmax_rows.check(kernel)
        except ag.CheckFailed as failure:
            print(f"\nthe course's check of {kernel.__name__}:\n{failure}")
        except Exception as error:        # CPU mode: Python's math.exp raises past 709.78
            print(f"\n{kernel.__name__} stopped: {type(error).__name__}: {error}")

# %% [markdown]
# Both pass the friendly row, and both fail the check. Without the maximum, `exp(100)` is
# already `inf` in float32 on a GPU, so the row's sum is `inf` and every `y` is `inf / inf`,
# NaN (or 0 where `exp(x_j)` stayed finite). In CPU mode the simulator computes `math.exp` in
# float64, which overflows only past 709.78, and there Python raises `OverflowError` instead of
# returning `inf`: the failure looks different, the cause is the same. The unguarded online
# kernel is right for every row that starts with a finite value and wrong for a left-padded
# row: its first step is `exp(−inf − (−inf)) = exp(NaN)`, and the NaN never leaves `d`; a fully
# masked row gives NaN instead of the course's 0.
#
# ## One warp per row, with shuffles
#
# One thread per row reads its row alone: at 65,536 columns a single thread walks 256 KB twice,
# and a matrix of few long rows leaves most of the GPU idle. Neighbouring threads also read
# addresses a whole row apart, which chapter 6 taught you is uncoalesced. Give each row a
# **warp** instead:
#
# 1. lane `l` of the warp folds the columns `l, l + W, l + 2W, ...` (`W = cuda.warpsize`) into
#    its own pair `(m, d)` with the online update: the warp's 32 lanes read 32 neighbouring
#    floats at a time, coalesced;
# 2. the lanes merge their pairs with the merge rule in a **butterfly** of shuffles: for
#    `offset = W/2, ..., 2, 1`, each lane takes its partner's pair,
#    `m2 = cuda.shfl_xor_sync(mask, m, offset)` and the same for `d`, and merges it into its
#    own. After `log2 W` steps **every** lane holds the row's pair (with `shfl_down_sync`, only
#    lane 0 would, and it would have to broadcast it);
# 3. each lane writes `y` at its own columns: one more read of the row, which the caches often
#    still hold, and the write.
#
# A merge of two empty pairs (both `m = −inf`, a lane whose columns were all masked, or a lane
# with no column at all when the row is shorter than the warp) must leave `(−inf, 0)`: test
# `max(m, m2) > −inf` before you compute `exp(m − max)`. As in chapter 10, write the kernel for
# **any** warp size: `W = cuda.warpsize`, and a mask naming every lane of the warp,
# `mask = ~uint64(0) >> (64 - cuda.warpsize)` (32 or 64 one-bits). AMD GPUs run wavefronts of 64
# lanes, and CPU mode runs the hidden cases at both.
#
# The launch has **fewer warps than rows**: warp `w = cuda.grid(1) // W` of the grid's
# `cuda.gridsize(1) // W` warps takes rows `w, w + warps, ...` (a grid-stride loop over rows, as
# in chapter 2). Every lane of a warp takes part in the shuffles for every row, so the loop over
# rows must be the same for the whole warp.

# %% [markdown]
# ## Exercise 24.2 · One warp per row, fused (4 points + 2 for speed)
#
# Write `softmax_warp_kernel(x, y)` as described above: `x`, `y` float32 `[rows, cols]`, one warp
# per row, grid-stride over the rows, each lane's pair merged across the warp with
# `cuda.shfl_xor_sync`, the rule for −inf and for fully masked rows as in 24.1. Roughly 25 lines.
#
# **What the check does.** Blocks of 64 threads (64 and 128 in the hidden tests), and about a
# quarter as many warps as rows (so only a grid-stride loop covers them), `y` filled with NaN.
# Visible: 9 rows of 100 columns, 4 rows of 1 value (a warp with one busy lane), 3 rows of 65.
# Hidden: 5 rows of 777, 6 rows of 64 (whole warps of columns), 7 rows of 5 and two random
# shapes, at warp sizes 64 and 32 in turn (CPU mode; on a GPU the hidden cases run at the GPU's
# own warp size, and the grader runs the other in CPU mode). The tolerance is the bound of 24.3
# for a lane's `ceil(cols / W)` values and `log2 W` merges.
#
# **The speed test** (on a GPU) runs 16,384 rows of 4096 values (256 MiB in, 256 MiB out) with
# blocks of 256 threads and up to 8 blocks per SM, against the course's kernel (this algorithm)
# timed in the same run and NumPy on the host: you need at least half the course's speed and 20×
# NumPy's. It also reports your GB/s against a device copy of the same bytes (x read once and y
# written once). Every timed call's `y` is checked at sampled values. In CPU mode it says that it
# needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "softmax_warp_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def softmax_warp_kernel(x, y):
    ### BEGIN SOLUTION
    W = cuda.warpsize
    mask = ~uint64(0) >> (64 - W)
    lane = cuda.threadIdx.x % W
    warp = cuda.grid(1) // W
    warps = cuda.gridsize(1) // W
    n = x.shape[1]
    for r in range(warp, x.shape[0], warps):
        m = float32(-math.inf)
        d = float32(0.0)
        for j in range(lane, n, W):
            v = x[r, j]
            if v > m:
                d = d * math.exp(m - v) + float32(1.0)
                m = v
            elif v > float32(-math.inf):
                d += math.exp(v - m)
        offset = W // 2
        while offset > 0:
            m2 = cuda.shfl_xor_sync(mask, m, offset)
            d2 = cuda.shfl_xor_sync(mask, d, offset)
            big = max(m, m2)
            if big > float32(-math.inf):
                d = d * math.exp(m - big) + d2 * math.exp(m2 - big)
                m = big
            offset //= 2
        for j in range(lane, n, W):
            if d > float32(0.0):
                y[r, j] = math.exp(x[r, j] - m) / d
            else:
                y[r, j] = float32(0.0)
    ### END SOLUTION


# %% [markdown]
# Try it on the small rows, and in CPU mode also at warp size 64 (`ch24.at_warp_size(64)` runs
# the launches inside it with wavefronts of 64 lanes):

# %%
for warp in ((ag.backend.warp_size,) if ag.backend.is_gpu else (32, 64)):
    d_y = cuda.to_device(np.full(small.shape, np.nan, np.float32))
    with ch24.at_warp_size(warp):
        softmax_warp_kernel[1, 64](cuda.to_device(small), d_y)
    print(f"warp size {warp}:\n", d_y.copy_to_host())

# %% nbgrader={"grade": true, "grade_id": "softmax_warp_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch24.softmax_warp.check(softmax_warp_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch24.softmax_warp.check_hidden(softmax_warp_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "softmax_warp_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch24.softmax_warp.check_speed(softmax_warp_kernel)

# %% [markdown]
# ## How far from exact may a float32 softmax be?
#
# The checks compare your `y` with a float64 softmax, and allow the error that correct float32
# code can make, no more. Here are the pieces, with `u = 2⁻²⁴` (half the gap between 1 and the
# next float32):
#
# - **The maximum** is exact: comparisons round nothing.
# - **An exponential.** `math.exp` on a float32 compiles to CUDA's `expf`, accurate to 2 ulp (CUDA
#   C Programming Guide, mathematical functions): a relative error of at most 2 · 2⁻²³ = 4u. Its
#   argument is a rounded difference: `fl(a − b)` is off by at most `|a − b|` times u, which
#   changes `exp` by the factor `exp(±|a − b| u)`, a relative error of about `|a − b| u`. A large
#   argument, not a large result, is what costs precision.
# - **A multiply, an add, a division**: one rounding each, a relative error of at most u.
# - **Errors compound as products**: a value that went through perturbations `1 + δ_i` whose
#   sizes add up to `a` is off by a relative `a / (1 − a)` at most (Higham's γ; here `a` need not
#   be a whole number of roundings).
#
# Now follow one term `exp(x_k − m)` into the row's sum `d`. It enters as `exp(x_k − m_e)`,
# relative to the running maximum `m_e` when it is read; every later step of its chain (a value
# folded in after it, or a merge of pairs) may multiply it by a rescaling factor (another
# exponential), and adds to it. Call `c` the **chain**: the most steps a term can go through.
# One thread per row: `c = cols`. One warp per row: a lane's own `ceil(cols / W)` values,
# three more for kernels that load several values at a time, and `log2 W` merges. And the
# arguments of all the exponentials a term meets add up to `m − x_k`, its **spread** below the
# row's maximum (the rescaling arguments telescope). Then the output `y_j` adds its own
# exponential, its subtraction (inside the spread), and the division.
#
# ## Predict: the bound the checks use
#
# Because every term of `d` is positive, the sum's relative error is at most the largest
# relative error of its terms, whatever the order of the additions. And an output's relative
# error combines its own and the sum's: dividing by a sum that is off by a relative `r` at most
# is off by up to `r / (1 − r)`.
#
# ## Exercise 24.3 · The error bound of a float32 online softmax (2 points)
#
# Write `softmax_error_bound(chain, exp_ulps, spread)`: `chain` a Python int (the most steps a
# term of `d` goes through, each with one multiply, one add and one rescaling exponential),
# `exp_ulps` a Python float (the exponential's error in ulp: 2 for CUDA's `expf`; an ulp is at
# most 2u relative), `spread` a Python float (an upper bound on the spreads of the row's terms).
# Return two numbers:
#
# - `sum_bound`: the bound on the relative error of the computed `d`: every perturbation a
#   term meets, its own exponential included, added up and turned into a relative error as above;
# - `y_bound`: the bound on the relative error of an output whose spread is at most `spread`,
#   computed with one exponential, one subtraction (counted in the spread) and a division
#   counted as two roundings (a reciprocal and a multiply are two).
#
# Roughly 6 lines. **Predict first:** for one thread per row over 65,536 values with `expf`
# (spread 0), is the bound nearer 10⁻⁷ or 10⁻²? And for one warp per row over 2048 values, with
# a term 20 below the maximum? Which part of the bound grows with the row, and which with the
# values?
#
# **What the check does.** Three sets of values (the two questions above and a chain of 1 with a
# correctly rounded exponential), and 200 random ones hidden (chains of 1 to 10⁵, 0.5 to 8 ulp,
# spreads 0 to 104), each result within 10⁻⁸ of the exact one, relatively.

# %% nbgrader={"grade": false, "grade_id": "softmax_error_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def softmax_error_bound(chain, exp_ulps, spread):
    """(relative error bound of the row's sum d, relative error bound of an output y_j)."""
    ### BEGIN SOLUTION
    u = 2.0 ** -24
    a = (2 * chain + 2 * exp_ulps * (chain + 1) + spread) * u
    r = a / (1 - a)
    b = (2 * exp_ulps + 2 + spread) * u
    g = b / (1 - b)
    return r, (g + r) / (1 - r)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "softmax_error_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch24.softmax_error_bound.check(softmax_error_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch24.softmax_error_bound.check_hidden(softmax_error_bound)
### END HIDDEN TESTS

# %% [markdown]
# Your bounds for the two questions, and the errors the course's kernels really make on a
# matrix of the checks' kind (largest error over the allowed error, per element; 1 would be the
# bound itself):

# %%
for chain, ulps, spread in ch24.WORKED[:2]:
    s, yb = softmax_error_bound(chain, ulps, spread)
    print(f"chain {chain:6d}, {ulps} ulp, spread {spread:4.0f}: sum {s:.2e}, output {yb:.2e}")
x_try = ch24.make_rows(np.random.default_rng(24), 6, 300)
exact = ch24.softmax_host(x_try)
for name, kernel, shape, chain in (
        ("one thread per row", softmax_rows_kernel, (1, 32), ch24.rows_chain(300)),
        ("one warp per row", softmax_warp_kernel, (2, 64), ch24.warp_chain(300, 32))):
    d_y = cuda.to_device(np.full(x_try.shape, np.nan, np.float32))
    kernel[shape](cuda.to_device(x_try), d_y)
    err = np.abs(d_y.copy_to_host() - exact) / ch24.softmax_tolerance(x_try, chain)
    print(f"{name:20s} largest error / allowed: {float(err.max()):.3f}")

# %% [markdown]
# The kernels' errors are a small fraction of the bound: a bound holds for the worst order of
# every rounding, and rounding errors mostly cancel. But a kernel with a real bug (a rescaling
# factor `exp(m_new − m_old)` instead of `exp(m_old − m_new)`, a column skipped, a merge level
# missing) is off by far more than the bound, on every row it touches.
#
# ## Measure: one thread, one warp, three passes, and a copy
#
# On a GPU the next cell times, for rows of 32 to 65,536 columns (2²⁵ values each time, so from
# a million rows of 32 to 512 rows of 65,536): your two kernels, the course's, the three-pass
# warp kernel, `torch.softmax` where PyTorch is installed with a GPU (an optional comparison; the
# course never needs PyTorch), NumPy on the host, and a device copy of the same bytes (the
# ceiling: a softmax cannot move less than a copy of `x` into `y`). GB/s counts `x` read once
# and `y` written once. In CPU mode it says that it needs a GPU and draws what the course's
# kernels did on an H200 instead.

# %%
mine = {"one thread per row (yours)": ("rows", softmax_rows_kernel),
        "one warp per row (yours)": ("warp", softmax_warp_kernel)}
try:
    results = ch24.measure(mine)
    for r in results:
        print(f"{r['label']:42s} {r['cols']:6d} columns {r['ms']:9.3f} ms {r['gbps']:8.1f} GB/s"
              f"{'' if r['right'] else '   WRONG'}")
    ch24.chart(results)
    plt.show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels:")
    if ch24.chart() is not None:
        plt.show()

# %% [markdown]
# ## The same softmax in Triton: blocks instead of threads
#
# In 24.2 you decided which lane reads which column, wrote the butterfly of shuffles and kept the
# pair `(m, d)` in each lane's registers. **Triton** (OpenAI's GPU language, written in Python)
# lets you describe the same kernel one level up, and does that part for you.
#
# - **A program, not a thread.** A Triton kernel is written for one **program** of the grid:
#   `kernel[(rows,)](...)` launches `rows` programs, and `tl.program_id(0)` is this program's
#   index (as `cuda.blockIdx.x` is a block's). A program is a whole block of threads, but you
#   never see them.
# - **Blocks of elements.** Its values are whole blocks: `offs = tl.arange(0, BLOCK)` is the
#   block `0, 1, ..., BLOCK − 1`; `x_ptr + row * cols + offs` is a block of addresses;
#   `tl.load` reads them all and `x - m`, `tl.exp(...)` work element by element. `BLOCK` is a
#   `tl.constexpr`: known when the kernel compiles (each value compiles a kernel of its own), a
#   power of two.
# - **Masks.** A row of 300 values in a block of 512: the lanes `offs >= cols` must not read or
#   write. `tl.load(ptrs, mask=offs < cols, other=-float("inf"))` reads only inside the row and
#   gives the other lanes −inf, which is exactly the padding a softmax wants (it adds
#   `exp(−inf) = 0`); `tl.store(ptrs, y, mask=offs < cols)` writes only inside. A load or store
#   without its mask reads or writes past the row: on a GPU that faults, or silently touches the
#   next row; in CPU mode the course stops the process, as a fault would.
# - **Reductions inside a block.** `tl.max(x, axis=0)` and `tl.sum(e, axis=0)` reduce the whole
#   block to one value.
#
# **What the compiler does that you did by hand in 24.2.** It chooses how the block's elements
# are spread over the program's threads (its *layout*): neighbouring threads hold neighbouring
# runs of a few floats (coalesced), and a run is loaded with one vector load of up to 16 bytes
# where the compiler can prove it is aligned (Triton compiles a kernel for each launch's integer
# arguments that are multiples of 16: a row length of 4096 gets vector loads, one of 4097 loads
# its floats one by one). It turns `tl.max` and `tl.sum` into a loop over each thread's own values,
# then the butterfly of warp shuffles you wrote, then, across the program's warps, shared memory
# and a barrier. And the row stays in registers between the maximum, the sum and the write: the
# row is read **once** and written once, the least traffic a softmax can have (24.2 reads it
# twice). `num_warps=...` at the launch (4 by default) sets how many warps a program has.
#
# **What it costs.** The whole row lives in one program's registers, so this kernel is for rows
# that fit: up to 16,384 values here (64 floats a thread at 8 warps). And `BLOCK` is a power of
# two at least `cols`: a row of 4097 values pays for 8192 lanes, half of them masked off. Longer
# rows need a loop over pieces of the row with the merge rule of 24.2 (see "Going further").
#
# **Masked rows, once more.** A row of −inf only gives `m = tl.max(x) = −inf`, and `x - m` is
# `−inf − (−inf) = NaN` in every lane. The course's rule still holds: such a row is 0. Replace `m`
# by 0 for it (`tl.where(m == -float("inf"), 0.0, m)`): every `exp` is then `exp(−inf) = 0`, `d` is
# 0, and a division by `tl.where(d > 0, d, 1.0)` writes 0.
#
# **The course's arrays.** A Triton kernel takes pointers: any object with a `data_ptr()` and a
# `dtype`. `view(x)` hands it a course device array (a Numba array on a GPU, the simulator's in
# CPU mode) without copying. In CPU mode Triton runs its **interpreter**: every program runs in
# NumPy, about a millisecond each, so the checks keep to a few dozen rows.
#
# **Installing Triton.** It runs on Linux (x86-64 and Arm64): `pip install 'triton>=3.9,<3.10'`
# (`./aag` installs it). It has no wheels for macOS or Windows (use WSL on Windows): there the
# next cell says so, the exercise's cells still run, and the checks say that they need Triton.

# %%
# Triton, or where it cannot run, stand-ins that let the cells below define their kernel.
triton, tl, triton_missing = ch24.import_triton()
from autograder.machine.triton_bridge import view

if triton_missing:
    print(triton_missing)
else:
    print(f"Triton {triton.__version__}:", "compiles for this GPU" if ag.backend.is_gpu
          else "CPU mode, its interpreter runs every program with NumPy")

# %% [markdown]
# ## Exercise 24.4 · A row softmax in Triton (3 points + 2 for speed)
#
# Write the kernel `softmax_triton_kernel(x_ptr, y_ptr, cols, BLOCK)` and its launcher
# `softmax_triton(x, y)`:
#
# - the **kernel**: one program per row (`row = tl.program_id(0)`), the row loaded into one
#   block with the mask and `other=-float("inf")`, its maximum by `tl.max`, the exponentials, their
#   sum by `tl.sum`, and `y` stored under the same mask; the rule for a fully masked row as above.
#   Roughly 10 lines.
# - the **launcher**: `x` and `y` are the course's float32 `[rows, cols]` device arrays (C order:
#   row `r` starts `r * cols` elements in); `BLOCK = triton.next_power_of_2(cols)`, a grid of
#   `(rows,)` programs, the arrays passed as `view(x)` and `view(y)`. Choose `num_warps` for
#   long rows (8 at 4096 values is a good start). Roughly 4 lines.
#
# **What the check does.** Rows of 1 to 16,384 values, most of them just past a power of two
# (so that the block has padding lanes), `y` filled with NaN.
# Visible: 40 rows of 33, 5 rows of 300, one value. Hidden: 6 rows of 2500, 64 rows of 7, 4 × 2
# and two random shapes (more and longer rows on a GPU, up to 16,384 columns), other seeds. The
# tolerance is the bound of 24.3 for Triton's arithmetic: its float32 `exp` is
# `ex2.approx(fl(v · log2 e))`, whose argument meets one more rounding (the multiply) and the
# constant's own error, so the spread counts 2.25 times; its `/` is within 2 ulp (4u, and 5u
# for a reciprocal times `e`); and the chain is a thread's own values, at most
# `ceil(cols / 32) + 3`, then 5 levels of shuffles and up to 5 levels across warps. Masked
# entries and fully masked rows must be exactly 0.
#
# **The speed test** (on a GPU) runs 16,384 rows of 4096 values, as 24.2's, against the course's
# Triton kernel (this one) timed in the same run and NumPy on the host: at least half the course's
# speed and 20× NumPy's. In CPU mode it says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "softmax_triton_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=inside, other=-float("inf"))
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)        # a fully masked row: every exp is 0
    e = tl.exp(x - m)
    d = tl.sum(e, axis=0)
    tl.store(y_ptr + row * cols + offs, e / tl.where(d > 0.0, d, 1.0), mask=inside)
    ### END SOLUTION


def softmax_triton(x, y):
    """y = the row softmax of x: float32 [rows, cols] device arrays of the course."""
    ### BEGIN SOLUTION
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    softmax_triton_kernel[(rows,)](view(x), view(y), cols, BLOCK=BLOCK,
                                   num_warps=max(1, min(16, BLOCK // 512)))
    ### END SOLUTION


# %% [markdown]
# Try it on the small rows of 24.1 (a large offset, a left-padded row, a fully masked one):

# %%
if triton_missing:
    print("Not run here:", triton_missing)
else:
    d_y = cuda.to_device(np.full(small.shape, np.nan, np.float32))
    softmax_triton(cuda.to_device(small), d_y)
    print("yours:\n", d_y.copy_to_host(), "\nexpected:\n", ch24.softmax_host(small))

# %% nbgrader={"grade": true, "grade_id": "softmax_triton_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch24.softmax_triton.check(softmax_triton)
### BEGIN HIDDEN TESTS
ag.problems.ch24.softmax_triton.check_hidden(softmax_triton)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "softmax_triton_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch24.softmax_triton.check_speed(softmax_triton)

# %% [markdown]
# ## Measure: Triton beside your warp kernel
#
# On a GPU the next cell times, for rows of 256 to 16,384 values (2²⁵ values each time): your
# one-warp-per-row kernel of 24.2, your Triton kernel, the course's Triton kernel,
# `torch.softmax` where PyTorch is installed, NumPy on the host, and a copy of the same bytes.
# **Predict first:** your Triton kernel reads each row once, the warp kernel twice; where should
# that show, for short rows or for long ones? And where may a block of registers per row cost
# more than it saves (think of how many rows run at once when a row takes 16,384 registers)?
# In CPU mode it says that it needs a GPU and draws the course's H200 run of the same comparison
# (the course's warp kernel and Triton kernel in your kernels' places).

# %%
if triton_missing:
    print("Not run here:", triton_missing)
else:
    try:
        compared = ch24.compare_triton(softmax_warp_kernel, softmax_triton)
        for r in compared:
            print(f"{r['label']:42s} {r['cols']:6d} columns {r['ms']:9.3f} ms "
                  f"{r['gbps']:8.1f} GB/s{'' if r['right'] else '   WRONG'}")
        ch24.chart(compared)
        plt.show()
    except ag.timing.NeedsGPU as why:
        print(why)
        print("\nWhat the course measured on an H200 with its own kernels:")
        if ch24.chart(name=ch24.TRITON_CHART) is not None:
            plt.show()

# %% [markdown]
# ## Explain: where a softmax's time goes (2 points, graded by your instructor)
#
# In the cell below, in 5 to 10 sentences, with numbers from the measurements (yours on a GPU,
# or the course's H200 run in CPU mode):
#
# 1. compare the one-warp-per-row kernel with the copy of the same bytes at 1024 and at 65,536
#    columns: how close is it, and what does that say about what limits it?
# 2. explain why one thread per row is slow for short rows **and** for long rows, for different
#    reasons (name them: which addresses neighbouring threads read; how many threads there are);
# 3. say what the three-pass kernel costs over the online one, in bytes read per value, and why
#    the measured difference can be smaller than that count (where does the second or third read
#    of a row come from?); and what changes for a row too long to stay in the caches.
#
# A full-mark answer puts a number on every claim and keeps what was measured apart from what was
# predicted. Studying alone: once `./aag grade` passes this chapter's auto-graded exercises,
# `ag.reveal("softmax_answer")` shows a model answer to set yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "softmax_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the figures to quote are the learner's own measurements
# or the course's recorded H200 run; the numbers here are that run's).* (1) At 1024 columns the
# warp kernel took 0.247 ms for 2²⁵ values, 1,087 GB/s, against 4,163 GB/s for the copy: 26%.
# At 65,536 columns it fell to 144 GB/s, 3.5%. So it is not limited by DRAM bandwidth, and not
# by its arithmetic either (about five operations per 8 bytes). What most likely limits it is
# how few bytes it keeps in flight: each lane's loop loads a value and updates (m, d) with
# exponentials and a branch before it goes on, so a warp has few loads out at once. With one
# 128-byte load per warp in flight and 64 warps per SM, an SM has about 8 KB on the way. Little's law (chapter 23) asks for bandwidth × latency
# ≈ 4.8 TB/s × ~600 ns ≈ 2.9 MB over 132 SMs, about 22 KB per SM. A third of that gives about a
# third of the copy. `torch.softmax` reached 3,810 GB/s (92%) on the same rows with wide loads
# and several loads per thread before it waits. At 65,536 columns there are only 512 rows, so
# 512 warps: about 4 per SM, with each warp still loading one value at a time. (2) One thread
# per row makes neighbouring threads read addresses a whole row apart. Every warp-wide load then
# touches 32 rows: 32 sectors for 128 useful bytes (chapter 6), which wastes bandwidth at every
# length. It measured 344 GB/s at 1024 columns and 10 GB/s at 65,536, where there are only 512
# threads in all, each walking 256 KB alone. (3) The three-pass kernel reads each value three
# times and writes it once (16 bytes a value), where the online kernel reads it twice (12 bytes;
# the least is 8). Yet the three-pass kernel was the faster one: 1,412 against 1,087 GB/s at
# 1024 columns, and 1.45 against 1.87 ms at 65,536. Its re-reads come from L1 and L2, since a
# warp reads its row again right after the first pass. And its loops are simpler: a max, then
# one exponential and an add, with no branch and no rescaling per value. Where bytes are not
# the limit, counting them does not predict the time. A row too long for the caches, or many
# rows in flight, would send the extra reads to DRAM, and then the saved pass would show. A
# kernel that loads several values per lane before using any of them (registers for rows of up
# to a few thousand) attacks that limit; `ag.profile` on the kernel shows whether its warps
# stall waiting on memory, which tests the explanation.

# %% [markdown]
# ## Going further (not graded)
#
# - **One block per row** for very long rows: each warp folds and merges its pair as in 24.2,
#   then the warps' pairs go through shared memory and the first warp merges them (chapter 10's
#   block reduction, with the merge rule instead of `+`). How many columns must a row have before
#   it pays?
# - **Keep the row on chip:** for rows of up to a few thousand values, each lane keeps its
#   values in registers between the pair and the write: one read and one write, the least
#   traffic. What limits the row length, and what happens to occupancy?
# - **Longer rows in Triton:** past 16,384 values a row no longer fits one program's registers.
#   Loop over the row in pieces of `BLOCK` values, keep a running `(m, d)` (each piece's maximum
#   and sum merged in with the rule of 24.2), then a second loop writes `y`: two reads, as in
#   24.2, for any length. Or keep the pieces in one program and give a row several programs
#   whose pairs are merged afterwards.
# - **Fuse more:** the softmax of attention sits between two matrix products,
#   `softmax(Q Kᵀ / √d) V`. The online merge rule is what lets FlashAttention compute it block by
#   block without ever storing the scores: each block of keys updates `(m, d)` and rescales the
#   partial output, exactly as `d` is rescaled here.
#
# **Reading:** M. Milakov and N. Gimelshein, "Online normalizer calculation for softmax" (2018);
# T. Dao et al., "FlashAttention: fast and memory-efficient exact attention with IO-awareness"
# (2022), and FlashAttention-2 (2023); the GPU MODE lectures on reductions, on Triton and on
# FlashAttention; P. Tillet, H. T. Kung and D. Cox, "Triton: an intermediate language and compiler
# for tiled neural network computations" (2019), and Triton's tutorial "Fused Softmax";
# N. Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 3–4 (the γ bounds); the CUDA
# C Programming Guide's appendix on mathematical functions (the ulp errors of `expf` and
# `__expf`: fast math trades the first for the second, which this bound would not allow).
#
# **On AMD (HIP):** a wavefront has 64 lanes, so the butterfly takes six steps and each lane
# folds half as many columns; written with `cuda.warpsize` and the mask built from it, the kernel
# of 24.2 runs unchanged, which is why the hidden tests run it at warp size 64. MIOpen's and
# PyTorch's ROCm softmax kernels play `torch.softmax`'s part there. Triton also compiles for AMD
# GPUs (ROCm builds of Triton): the kernel of 24.4 runs unchanged, since its reductions are the
# compiler's and the compiler knows the wavefront is 64 lanes.
