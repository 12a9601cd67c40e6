# %% [markdown]
# # Chapter 26 · Attention: naive, FlashAttention-style, and in Triton
#
# GPU MODE track, third chapter: the operation at the heart of every transformer, first as three
# passes over a materialised matrix of scores, then as one tiled pass that never writes that
# matrix (the forward pass of FlashAttention), in Numba and in Triton.
#
# **Before you start:** chapters 1–6 (chapter 5's tiles in shared memory above all) and 24 (the online softmax). **Time:** about 4 hours, reading and exercises included (more in CPU mode,
# where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Write **naive attention** with one thread per query row: the row of scores written to global
#   memory, its softmax with the maximum subtracted, the weighted sum of the values; and count the
#   bytes that matrix of scores costs (for 4096 tokens, 64 MiB per head).
# - Derive the **online softmax** update with its rescaling, and write a **FlashAttention-style
#   forward pass**: key and value tiles staged in shared memory, a running maximum and sum per
#   row, the causal mask with the tiles past the diagonal skipped, float16 inputs with float32
#   arithmetic, judged against float64 within an error bound you can follow step by step.
# - Write the same forward pass in **Triton** with `tl.dot` on float16 tiles, time it beside your
#   Numba kernel and PyTorch's `scaled_dot_product_attention`, and explain, with your numbers,
#   why a Numba kernel cannot reach the tensor cores that make FlashAttention fast.
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
ch26 = ag.problems.ch26

# %% [markdown]
# ## The idea: every query looks at every key
#
# A transformer's attention layer gets three matrices per head, each `n × d`: the **queries** `Q`,
# the **keys** `K` and the **values** `V` (n tokens, head dimension d, typically 64 or 128). Every
# query row `i` compares itself with every key `j` by a dot product, turns the scores into weights
# with a softmax, and returns the weighted average of the values (Vaswani et al., 2017):
#
# ```
# S = scale · Q Kᵀ           (n × n scores, scale = 1 / sqrt(d))
# P = softmax of each row of S
# O = P V                    (n × d)
# ```
#
# With the **causal mask** (a language model predicting the next token), query `i` may look at
# keys `0..i` only: the scores above the diagonal are `−inf`, so their weights are 0. A layer
# runs this for every head of every sequence in a batch at once: the arrays of this chapter are
# `(bh, n, d)`, `bh` = batch · heads, each head independent of the others.
#
# Two numbers decide how to compute it. The work is two matrix products, `4·n²·d` floating-point
# operations per head. The matrix `S` has `n²` entries per head: for `n = 4096` that is 16 million
# floats, 64 MiB, per head, far more than the inputs themselves (`3·n·d` values, 1.5 MiB in
# float16 at `d = 64`). A small example, computed in float64 by the course's spec:

# %%
small = ch26.make_attention(np.random.default_rng(0), 1, 4, 2)
o_small = ch26.attention_host(small["q"], small["k"], small["v"], small["scale"], causal=1)
print("q =\n", small["q"][0].round(2))
print("o with the causal mask =\n", o_small[0].round(3))
print("row 0 sees only key 0, so o[0] is v[0]:", small["v"][0, 0].round(3))

# %% [markdown]
# ## The CPU baseline
#
# NumPy computes each head's `S` with one matrix product (BLAS, float32), the softmax row by row,
# and `P V` with another product: fast per FLOP, but it writes and reads `S`. The Numba loop
# spreads query rows over all cores, one row of scores at a time. 8 heads of 512 tokens, `d = 64`,
# float16 inputs:

# %%
why = ag.timing.not_measured("Timing attention on the CPU", gpu=False)
if why:
    print(why)
cpu_results = [] if why else ch26.time_cpu()
for r in cpu_results:
    print(f"{r['label']:52s} {r['ms']:8.2f} ms {r['gflops']:7.1f} GFLOP/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# ## Break it: a softmax without its maximum
#
# Mathematically `softmax(s)_j = exp(s_j) / Σ_k exp(s_k)` and subtracting any constant from every
# score changes nothing. In float32 it changes everything: `exp` overflows above 88.72, and
# `inf / inf` is NaN. Scores of attention need not be small: `q·k` of two vectors of 64 values
# with a spread of 7 each has a spread of about `7 · 7 · 8 = 392` before the scale, about 50 after
# it, and among the `n²` scores of a head the largest lie 3 to 5 spreads out, at 150 to 250.
# **Predict before you run:** for a row of two scores `[0, s]`, which `s` first breaks the plain
# formula?

# %%
for r in ch26.overflow_demo():
    print(f"s = {r['score']:6.1f}: exp(s) = {r['exp']:10.4g}   plain {np.round(r['plain'], 4)}"
          f"   with the maximum subtracted {np.round(r['stable'], 4)}")

# %% [markdown]
# At 89 `exp(s)` is `inf` and the plain formula gives `[0, nan]`; with the maximum `m`
# subtracted, every exponent is `≤ 0`, every `exp` is in `(0, 1]`, and the largest is exactly 1,
# so the sum is at least 1 and never overflows. The checks of this chapter have heads whose scores
# reach ±200 for this reason.
#
# ## Exercise 26.1 · Naive attention, one thread per query row (3 points)
#
# Write `attention_naive_kernel(q, k, v, scale, causal, s, o)`: `q`, `k`, `v` float32
# `[bh, n, d]`, `scale` a float32, `causal` 0 or 1, `s` a float32 scratch array `[bh, n, n]`
# (the materialised scores), `o` float32 `[bh, n, d]`. Thread `r = cuda.grid(1)` owns query row
# `i = r % n` of head `b = r // n` (threads with `r ≥ bh · n` do nothing):
#
# 1. for each key `j` the row sees (`j ≤ i` with the causal mask, all `n` without), the float32
#    dot product of `q[b, i]` and `k[b, j]`, times `scale`, stored in `s[b, i, j]`, keeping the
#    row's maximum `m`;
# 2. `s[b, i, j] = exp(s[b, i, j] − m)` and their sum;
# 3. `o[b, i, t] = Σ_j s[b, i, j] · v[b, j, t] / sum` for every `t < d`.
#
# Start `m` at `float32(-math.inf)` and write constants as `float32(...)`: a Python float mixed
# with a float32 makes Numba compute in float64 on the GPU. Roughly 25 lines.
#
# **What the check does.** Blocks of 32 threads (32 and 64 in the hidden tests), enough of them
# for `bh · n` rows, `o` filled with NaN. Every case has heads of two kinds: scores with a spread
# of about 50 (the overflow above, if the maximum is not subtracted) and scores with a spread of
# about 1 (where every key's weight matters); `v` has a scale and an offset per head. The causal
# mask alternates from case to case. Visible: 2 heads of 33 tokens at `d = 8`, one of 5 at
# `d = 16`, one of a single token. Hidden: other sizes, 4 times the largest visible one. Each
# element of `o` must be within the float32 error bound of 26.2 (below) of the float64 result.

# %% nbgrader={"grade": false, "grade_id": "attention_naive_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def attention_naive_kernel(q, k, v, scale, causal, s, o):
    ### BEGIN SOLUTION
    r = cuda.grid(1)
    bh, n, d = q.shape
    if r >= bh * n:
        return
    b = r // n
    i = r % n
    keys = i + 1 if causal else n
    m = float32(-math.inf)
    for j in range(keys):
        acc = float32(0.0)
        for t in range(d):
            acc += q[b, i, t] * k[b, j, t]
        acc *= scale
        s[b, i, j] = acc
        m = max(m, acc)
    total = float32(0.0)
    for j in range(keys):
        p = math.exp(s[b, i, j] - m)
        s[b, i, j] = p
        total += p
    for t in range(d):
        acc = float32(0.0)
        for j in range(keys):
            acc += s[b, i, j] * v[b, j, t]
        o[b, i, t] = acc / total
    ### END SOLUTION


# %% [markdown]
# Try it on the small example first (4 tokens, `d = 2`, the causal mask):

# %%
o_try = np.full((1, 4, 2), np.nan, np.float32)
scratch = np.zeros((1, 4, 4), np.float32)
attention_naive_kernel[1, 32](small["q"], small["k"], small["v"], small["scale"], 1, scratch, o_try)
print("yours:\n", o_try[0].round(3), "\nlargest error:", np.abs(o_try - o_small).max())

# %% nbgrader={"grade": true, "grade_id": "attention_naive_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch26.attention_naive.check(attention_naive_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch26.attention_naive.check_hidden(attention_naive_kernel)
### END HIDDEN TESTS

# %% [markdown]
# **Bytes.** Your kernel writes `S`, reads it back to exponentiate it, writes `P`, and reads `P`
# once more per output column (from the caches, with luck). Count only the first four passes over
# `n²` floats: at `n = 4096` that is 256 MiB per head, against 1.5 MiB of float16 inputs and 1 MiB
# of float32 output. The next cell counts the global-memory bytes of the naive pass and of a tiled
# pass that keeps each query tile's scores on chip (the next section), for one head:

# %%
for n in (1024, 4096, 16384):
    b = ch26.traffic(n, 64)
    print(f"n = {n:6d}: S alone {b['scores'] / 2**20:8.1f} MiB; naive {b['naive'] / 2**20:8.1f} MiB, "
          f"tiled {b['flash'] / 2**20:6.1f} MiB, inputs and output once {b['ideal'] / 2**20:5.2f} MiB")

# %% [markdown]
# The naive pass grows with `n²` and the tiled one with `n²/64` (K and V read once per tile of 64
# queries, mostly from L2). At 4.8 TB/s the naive pass's 256 MiB take about 55 µs per head, while
# its `4·n²·d = 4.3` GFLOP take 64 µs at the float32 peak of an H200 (67 TFLOP/s): both limits
# matter. On the tensor cores (989 TFLOP/s in float16), the arithmetic takes 4 µs, and only the
# tiled pass can keep up.
#
# ## The online softmax, derived
#
# To avoid `S`, a query row must consume its keys in pieces without knowing the row's maximum in
# advance. Chapter 24's online normalizer does exactly that for the sum; attention also needs the
# weighted sum of the values. Keep, for the keys seen so far, the running maximum `m`, the sum
# `l = Σ exp(s_j − m)` and the accumulator `a = Σ exp(s_j − m) · v_j` (a vector of `d`). A new key
# with score `s` and value `v`:
#
# ```
# m' = max(m, s)
# l' = l · exp(m − m') + exp(s − m')
# a' = a · exp(m − m') + exp(s − m') · v
# ```
#
# Why: every term of `l` and `a` was `exp(s_j − m)`; multiplying by `exp(m − m')` turns it into
# `exp(s_j − m')`, the term it would have been had `m'` been known from the start. After the last
# key, `o = a / l` is exactly the softmax-weighted average, and no exponent was ever positive.
# When the maximum does not change, `exp(m − m') = 1` and the update is a plain sum. A **tile** of
# keys is the same update with `s` the tile's largest score and the tile's own sums added.
# Forgetting to rescale `a` (or `l`) is the classic bug: it is invisible whenever a row's first
# key is its largest, and wrong everywhere else.
#
# Start with `m = −inf`, `l = 0`, `a = 0`: the first key gives `exp(−inf) = 0` for the empty
# past. FlashAttention (Dao et al., 2022, Algorithm 1) is this update applied per tile, with the
# tiles of `K` and `V` in shared memory.
#
# ## Tiles in shared memory
#
# One block computes `T` query rows of one head, one thread per row. Each thread keeps its row of
# `q` (times the scale) and its accumulator `a` in local arrays of `D_MAX = 128` floats (`d ≤ 128`).
# The keys are walked in tiles of `TILE = 32`: all threads of the block copy the tile's
# `32 × d` keys and values into two shared arrays (converted to float32 as they are loaded: the
# inputs may be float16), `cuda.syncthreads()`, each thread applies the online update for the
# tile's keys it sees, `cuda.syncthreads()` again before the next tile overwrites the shared
# arrays. Every key and value read from global memory serves `T` query rows.
#
# - **The last tile** holds `n mod 32` keys when `n` is not a multiple of 32: load only keys
#   below `n`, and walk only those.
# - **The causal mask.** Row `i` sees keys `0..i`. No row of block `x` (rows `x·T .. x·T + T − 1`)
#   sees a key past `x·T + T − 1`, so the block's loop stops at `min(n, (x + 1)·T)`: about half
#   the tiles of a causal pass are never loaded. Within the last tiles each thread stops at its
#   own `i`. The barriers must still be reached by every thread of the block, so a thread with
#   nothing left to do keeps going round the loop (it only skips the arithmetic).
# - **float16 inputs.** `float32(q[b, i, t])` converts a float16 element exactly, and all the
#   arithmetic is float32, as on the GPU. In CPU mode the simulator holds float16 arrays and
#   converts them exactly too, so the checks run the same float16 cases there. One difference: a
#   float16 value times a Python float stays float16 in the simulator but becomes float64 on the
#   GPU; convert to float32 first and you meet neither.
#
# **The error bound** (the package's docstring has every step). With `u = 2⁻²⁴`, `γ_k = k·u /
# (1 − k·u)`, for one query row: each score is a float32 dot product of `d` terms, off by at most
# `Δ = γ_(d+2)` times the largest `scale · Σ_t |q_t| |k_jt|`, and a common shift of all scores
# cancels in the softmax, so each weight moves by a factor within `exp(±Δ)`; each exponential is
# within 2 ulp, and a term meets its own exponential and at most one rescaling per key, whose
# arguments add up to at most the row's spread of scores `R`; each sum has at most `2·n_k + 4`
# roundings per term. With `φ` the sum of the three relative errors and `A_t = Σ_j w_j |v_jt|`,
# every output is within `2φ·A_t / (1 − φ)` plus one rounding of the result. It does not depend
# on the tile size, on the order of the keys, or on how often the maximum changes: 26.1's three
# passes meet it too. A mask off by one key, a dropped last tile or a missing rescaling are off by
# a whole weight times a value: thousands of times more.
#
# ## Exercise 26.2 · FlashAttention-style forward pass (4 points + 2 for speed)
#
# Write `flash_attention_kernel(q, k, v, scale, causal, o)`: `q`, `k`, `v` float16 or float32
# `[bh, n, d]` (the cases alternate), `o` float32 `[bh, n, d]`, launched as
# `kernel[(ceil(n / T), bh), T]`: block `(x, b)` computes rows `x·T .. x·T + T − 1` of head `b`,
# one per thread. Use the constants of the next cell (`TILE`, `D_MAX`) for the shared and local
# arrays, the online update above, the causal mask with the tiles past the block's last row
# skipped, and never write a score to global memory. Roughly 40 lines.
#
# **What the check does.** Blocks of 16 threads (16 and 32 in the hidden tests; 64 and 128 on a
# GPU), `o` filled with NaN, the kinds of heads of 26.1, float16 and float32 inputs and the causal
# mask alternating. Visible: one head of 40 tokens (a tile of 32 and a last tile of 8) at
# `d = 8`, 2 heads of 7 at `d = 16`, one token. Hidden: 4 times the largest visible case, other
# lengths. Every element within the bound above. **The speed test** (on a GPU) runs 16 heads of
# 4096 tokens at `d = 64` in float16 without a mask, blocks of 64 threads, against the course's
# kernel timed in the same run (you need half its speed) and NumPy on the host (10×); it reports
# your TFLOP/s. In CPU mode it says that it needs a GPU.

# %%
TILE = 32       # keys per tile in shared memory
D_MAX = 128     # the largest head dimension a thread holds

# %% nbgrader={"grade": false, "grade_id": "flash_attention_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def flash_attention_kernel(q, k, v, scale, causal, o):
    ### BEGIN SOLUTION
    b = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tx
    n = q.shape[1]
    d = q.shape[2]
    k_tile = cuda.shared.array((TILE, D_MAX), float32)
    v_tile = cuda.shared.array((TILE, D_MAX), float32)
    q_row = cuda.local.array(D_MAX, float32)
    acc = cuda.local.array(D_MAX, float32)
    live = i < n
    if live:
        for t in range(d):
            q_row[t] = float32(q[b, i, t]) * scale
            acc[t] = float32(0.0)
    m = float32(-math.inf)
    total = float32(0.0)
    end = n
    if causal:
        end = min(n, (cuda.blockIdx.x + 1) * cuda.blockDim.x)
    for start in range(0, end, TILE):
        for e in range(tx, TILE * d, cuda.blockDim.x):
            j = e // d
            t = e % d
            if start + j < n:
                k_tile[j, t] = float32(k[b, start + j, t])
                v_tile[j, t] = float32(v[b, start + j, t])
        cuda.syncthreads()
        if live:
            stop = min(TILE, n - start)
            if causal:
                stop = min(stop, i - start + 1)
            for j in range(stop):
                s = float32(0.0)
                for t in range(d):
                    s += q_row[t] * k_tile[j, t]
                if s > m:
                    alpha = math.exp(m - s)
                    total *= alpha
                    for t in range(d):
                        acc[t] *= alpha
                    m = s
                p = math.exp(s - m)
                total += p
                for t in range(d):
                    acc[t] += p * v_tile[j, t]
        cuda.syncthreads()
    if live:
        for t in range(d):
            o[b, i, t] = acc[t] / total
    ### END SOLUTION


# %% [markdown]
# Try it against your naive kernel on float16 inputs (2 heads of 40 tokens, causal):

# %%
demo = ch26.make_attention(np.random.default_rng(1), 2, 40, 8, dtype=np.float16, causal=1)
want = ch26.attention_host(demo["q"], demo["k"], demo["v"], demo["scale"], 1)
o_flash = np.full((2, 40, 8), np.nan, np.float32)
flash_attention_kernel[(3, 2), 16](demo["q"], demo["k"], demo["v"], demo["scale"], 1, o_flash)
print(f"largest error against float64: {np.abs(o_flash - want).max():.3g} "
      f"(outputs up to {np.abs(want).max():.3g})")

# %% nbgrader={"grade": true, "grade_id": "flash_attention_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch26.flash_attention.check(flash_attention_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch26.flash_attention.check_hidden(flash_attention_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "flash_attention_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch26.flash_attention.check_speed(flash_attention_kernel)

# %% [markdown]
# ## Measure: over sequence lengths, against PyTorch and the float32 peak
#
# On a GPU, the next cell times your two kernels, the course's naive, Numba and Triton kernels,
# and PyTorch's `scaled_dot_product_attention` where PyTorch is installed with a GPU (an optional
# extra; the course never needs it) with two of its backends: **math**, which computes `S` with a
# matrix product, the softmax, and `P V` with another, here on the inputs widened to float32 (so
# in the precision your kernels compute in: cuBLAS's float32 products run on the CUDA cores, as
# your FMAs do); and **flash**, FlashAttention-2's kernel on the float16 inputs and the tensor
# cores. Lengths 512 to 4096 with `bh · n = 32768` query
# rows every time, `d = 64` and `128`, float16 inputs, no mask; TFLOP/s counts `4·n²·d` per head.
# The dashed line is the H200's float32 peak on its CUDA cores (67 TFLOP/s): what any kernel whose
# arithmetic is float32 multiply-adds, yours included, can at most reach. In CPU mode it says that
# it needs a GPU and draws the course's H200 run instead.

# %%
mine = {"naive (yours, 26.1)": ("naive", attention_naive_kernel),
        "FlashAttention-style, Numba (yours, 26.2)": ("flash", flash_attention_kernel)}
try:
    results = ch26.measure(mine)
    for r in results:
        print(f"{r['label']:46s} n = {r['n']:5d} d = {r['d']:3d} {r['ms']:9.3f} ms "
              f"{r['tflops']:7.2f} TFLOP/s{'' if r['right'] else '   WRONG'}")
    ch26.chart(results)
    plt.show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels:")
    if ch26.chart() is not None:
        plt.show()

# %% [markdown]
# ## Attention in Triton: tiles as values, `tl.dot` on the tensor cores
#
# Chapters 24 and 25 wrote Triton kernels over one row: a program, a block of indices, masked
# loads, `tl.sum`. Attention adds two-dimensional blocks and **`tl.dot`**: a program holds a
# `[BLOCK_M, BLOCK_D]` block of queries, and `tl.dot(q, kt)` with `kt` a `[BLOCK_D, BLOCK_N]`
# block of keys (the key index along the columns) is their matrix product, `[BLOCK_M, BLOCK_N]`
# scores. On float16 blocks, with a float32 result, the compiler emits the GPU's matrix
# instructions (`mma` on an A100, `wgmma` on an H100 or H200): the **tensor cores**, which do a
# whole small matrix product per instruction, about 15 times the float32 rate of the CUDA cores
# on an H200 (989 against 67 TFLOP/s).
#
# ```python
# rows = x * BLOCK_M + tl.arange(0, BLOCK_M)                 # this program's queries
# cols = tl.arange(0, BLOCK_D)                               # BLOCK_D = next power of two ≥ d
# q = tl.load(q_ptr + base + rows[:, None] * d + cols[None, :],
#             mask=(rows[:, None] < n) & (cols[None, :] < d), other=0.0)
# ```
#
# - **Broadcasting** works as in NumPy: `rows[:, None] * d + cols[None, :]` is a block of offsets.
# - **The loop over key tiles** is a Python `for` over `range(0, end, BLOCK_N)`; the online
#   update is 26.2's, on blocks: `tl.max(s, axis=1)` and `tl.sum(p, axis=1)` per row,
#   `alpha[:, None]` to rescale the accumulator's rows.
# - **The masks** become `−inf` scores: `s = tl.where(keys[None, :] < n, s, float("-inf"))`, and
#   with the causal mask also `keys[None, :] <= rows[:, None]`. Then `exp(−inf − m) = 0`. Every
#   row sees key 0 in the first tile, so no row's maximum stays `−inf` (which would make
#   `m − m_new` NaN).
# - **`P V` on the tensor cores** needs `P` in float16 too: `tl.dot(p.to(tl.float16), v)`. That
#   rounds each weight once more (relatively 2⁻¹¹), which the check allows for, as it allows for
#   the tensor cores' accumulation, which truncates instead of rounding.
# - **A `tl.constexpr` flag** (`CAUSAL`) compiles a separate kernel for each value: the one
#   without the mask has no mask code at all.
#
# In Numba, none of this exists: the Python kernel language of numba-cuda has no `mma` or `wgmma`
# instruction and no warp matrix functions (`wmma`), so every multiply-add of your kernel is a
# float32 FMA on the CUDA cores. (A Numba kernel can call a device function written in CUDA C++,
# declared with `cuda.declare_device` and linked with `@cuda.jit(link=[...])`, and such a function
# may use `wmma`; but then the matrix product is CUDA C++, not Python, and the simulator cannot
# run it.) The measuring cells show what that costs.
#
# **In CPU mode** Triton runs its interpreter: every program of the grid runs in NumPy, `tl.dot`
# is a float32 NumPy matrix product, so the checks use a few heads of up to 77 tokens. The
# interpreter also accepts blocks smaller than 16, which a GPU refuses for `tl.dot`: keep every
# block at 16 or more.

# %%
from autograder.machine.triton_bridge import unavailable_reason, view

no_triton = unavailable_reason()        # None where Triton runs
if no_triton:
    print(no_triton)
    triton = tl = ch26.TritonMissing(no_triton)   # stand-ins: the cells below still define things
else:
    import triton
    import triton.language as tl
    where = "on the GPU" if ag.backend.is_gpu else "in its interpreter (CPU mode)"
    print(f"Triton {triton.__version__}, {where}")

# %% [markdown]
# ## Exercise 26.3 · The forward pass in Triton (3 points + 2 for speed)
#
# Write the kernel `attention_triton_kernel(q_ptr, k_ptr, v_ptr, o_ptr, n, d, scale, CAUSAL,
# BLOCK_M, BLOCK_N, BLOCK_D)` and its launcher `attention_triton(q, k, v, scale, causal, o)`: `q`,
# `k`, `v` float16 `[bh, n, d]` device arrays, `o` float32, `scale` a Python float, `causal` 0 or
# 1. The same attention as 26.2, in Triton:
#
# - one program per (query tile, head): `grid = (triton.cdiv(n, BLOCK_M), bh)`, head `b`'s
#   elements start at `b · n · d` (take `tl.program_id(1).to(tl.int64)` before multiplying: on a
#   GPU `bh · n · d` may pass 2³¹);
# - `BLOCK_M = 64` queries, `BLOCK_N = 32` keys per tile, `BLOCK_D = triton.next_power_of_2(d)`
#   (at least 16), every load and the store masked;
# - the online update on blocks, the masked scores set to `−inf`, and with the causal mask the
#   loop stopped at the tile holding the program's last row;
# - `o = acc / l` stored in float32.
#
# Roughly 30 lines for the kernel and 5 for the launcher.
#
# **What the check does.** float16 inputs, the kinds of heads of 26.1, the causal mask
# alternating, `o` filled with NaN. Visible: one head of 40 tokens, 2 heads of 7, one token, all
# at `d = 16`; hidden: 4 heads of 40, one of 77 at `d = 32`, and a random length. Every element
# within 26.2's bound with the two changes above (for the tensor cores' truncating sums,
# `γ_(4(d+2))` for the scores and twice the roundings for the sums over the keys; for the float16
# weights, `2⁻¹¹ · A_t` plus half a float16 subnormal per key). **The speed test** (on a GPU) is 26.2's, 16
# heads of 4096 × 64 in float16, against the course's Triton kernel timed in the same run (you
# need half its speed) and NumPy on the host (10×). In CPU mode it says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "attention_triton_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@triton.jit
def attention_triton_kernel(q_ptr, k_ptr, v_ptr, o_ptr, n, d, scale, CAUSAL: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    ### BEGIN SOLUTION
    x = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * n * d
    rows = x * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + base + rows[:, None] * d + cols[None, :],
                mask=(rows[:, None] < n) & (cols[None, :] < d), other=0.0)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    end = n
    if CAUSAL:
        end = tl.minimum(n, (x + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + base + keys[None, :] * d + cols[:, None],
                     mask=(keys[None, :] < n) & (cols[:, None] < d), other=0.0)
        s = tl.dot(q, kt) * scale
        seen = keys[None, :] < n
        if CAUSAL:
            seen = seen & (keys[None, :] <= rows[:, None])
        s = tl.where(seen, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        total = total * alpha + tl.sum(p, axis=1)
        vt = tl.load(v_ptr + base + keys[:, None] * d + cols[None, :],
                     mask=(keys[:, None] < n) & (cols[None, :] < d), other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), vt)
        m = m_new
    tl.store(o_ptr + base + rows[:, None] * d + cols[None, :], acc / total[:, None],
             mask=(rows[:, None] < n) & (cols[None, :] < d))
    ### END SOLUTION


def attention_triton(q, k, v, scale, causal, o):
    ### BEGIN SOLUTION
    bh, n, d = q.shape
    grid = (triton.cdiv(n, 64), bh)
    attention_triton_kernel[grid](view(q), view(k), view(v), view(o), n, d, scale,
                                  CAUSAL=bool(causal), BLOCK_M=64, BLOCK_N=32,
                                  BLOCK_D=max(16, triton.next_power_of_2(d)))
    ### END SOLUTION


# %% [markdown]
# Try it on the float16 example of 26.2 (device arrays: on a GPU, `view` needs them on the
# device):

# %%
if no_triton:
    print(no_triton)
else:
    d_q, d_k, d_v = (cuda.to_device(demo[x]) for x in ("q", "k", "v"))
    d_o = cuda.device_array((2, 40, 8), np.float32)
    attention_triton(d_q, d_k, d_v, float(demo["scale"]), 1, d_o)
    print(f"largest error against float64: {np.abs(d_o.copy_to_host() - want).max():.3g}")

# %% nbgrader={"grade": true, "grade_id": "attention_triton_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch26.attention_triton.check(attention_triton)
### BEGIN HIDDEN TESTS
ag.problems.ch26.attention_triton.check_hidden(attention_triton)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "attention_triton_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch26.attention_triton.check_speed(attention_triton)

# %% [markdown]
# **Triton beside Numba.** On a GPU, the next cell times your Triton kernel, the course's, your
# Numba kernel of 26.2 and the course's, with PyTorch's two backends where PyTorch is installed,
# at the measuring cell's lengths. Set the Triton kernels against the dashed float32 line: above
# it, the tensor cores are at work. In CPU mode the cell says that it needs a GPU.

# %%
if no_triton:
    print(no_triton)
else:
    try:
        results = ch26.compare_triton(attention_triton, flash_attention_kernel)
        for r in results:
            print(f"{r['label']:46s} n = {r['n']:5d} d = {r['d']:3d} {r['ms']:9.3f} ms "
                  f"{r['tflops']:7.2f} TFLOP/s{'' if r['right'] else '   WRONG'}")
        ch26.chart(results, title="Attention in Triton and in Numba over sequence lengths")
        plt.show()
    except ag.timing.NeedsGPU as why:
        print(why)

# %% [markdown]
# ## Explain: the tensor cores (3 points, graded by your instructor)
#
# In the cell below, in 5 to 10 sentences, with numbers from this notebook (on a GPU your
# measurements; without one the recorded H200 run, or your expectation from the peaks):
#
# 1. compare your Numba FlashAttention-style kernel with PyTorch's math backend (float32, the
#    precision of your kernel, `S` materialised by matrix products) at `n = 4096`, `d = 64`: which
#    is faster, and why, counting the bytes of `S` and where each one's multiply-adds run;
# 2. compare both with PyTorch's flash backend and your Triton kernel, and say why a kernel
#    written in Numba cannot get near them: what numba-cuda does not expose, and what the two
#    matrix products of attention run on instead;
# 3. say what fraction of the H200's float32 peak (67 TFLOP/s) your Numba kernel reached, and name
#    one change (tile sizes, rows per thread, registers against shared memory) that would move it,
#    and why.
#
# A full-mark answer puts a number on every claim. Studying alone: once `./aag grade` passes this
# chapter's auto-graded exercises, `ag.reveal("attention_answer")` shows a model answer to set
# yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "attention_answer", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; measured figures are the learner's own).* (1) At
# `n = 4096`, `d = 64` one head's `S` is 64 MiB of float32. The math backend writes `S` with a
# float32 matrix product, runs the softmax as separate kernels (reading `S` and writing `P`), and
# reads `P` in a second product: about 4 × 64 MiB per head through HBM, some 54 µs per head at
# 4.8 TB/s, on top of its two products, which run on the CUDA cores like mine (cuBLAS's float32
# GEMM reaches about 51 of the 67 TFLOP/s: 84 µs per head for the 4.3 GFLOP). My Numba kernel
# never writes `S`: it reads K and V once per block of 64 queries (about 2 MiB per head, mostly
# from L2), so it is limited by its arithmetic alone, `4·n²·d = 4.3` GFLOP per head as float32
# FMAs, at best 64 µs per head. On the course's H200 run (8 heads of 4096 × 64, float16 inputs)
# the math backend reached 15.5 TFLOP/s and the course's Numba kernel 0.49 (0.7% of the float32
# peak; at `d = 128`, 24.5 against 0.33, below the naive kernel's 0.37): the math backend wins by
# 30 to 70 times. Its traffic for `S` costs less than my kernel's slow arithmetic: each thread's
# query row and accumulator of `d` floats live in local memory, so nearly every FMA waits on a
# load. (2)
# The flash backend and the Triton kernel run both products on the tensor cores (`wgmma` on the
# H200, 989 TFLOP/s in float16 with float32 accumulation) and keep `S` on chip: on the same run
# 245 TFLOP/s for the Triton kernel and 250 for the flash backend at `d = 64` (273 and 302 at
# `d = 128`), 16 times the math backend and 500 times the Numba kernel. numba-cuda's kernel language has no `mma`, `wgmma` or `wmma` (warp
# matrix functions): a kernel written in Numba can only issue scalar float32 (or paired float16)
# FMAs on the CUDA cores, so 67 TFLOP/s is its ceiling, about 7% of the tensor cores', however it
# is tiled (short of linking a device function written in CUDA C++ that uses `wmma`, which is no
# longer a Numba kernel's arithmetic). (3)
# Taking my kernel's measured TFLOP/s over 67 gives its fraction of the float32 peak (set it
# beside the course's kernel in the same run); the largest single step would be more work per
# thread from registers: several query rows per thread with the q rows and accumulators in registers
# (unrolled, fixed `d`), so that each key element loaded from shared memory feeds several FMAs
# instead of one.

# %% [markdown]
# ## Going further (not graded)
#
# - Give each thread 4 query rows (4 accumulators, a key element from shared memory reused 4
#   times) and a fixed `d` as a compile-time constant, and measure how far towards 67 TFLOP/s
#   that moves your Numba kernel.
# - Write the backward pass of 26.2 (FlashAttention's Algorithm 2: `S` and `P` recomputed from the
#   saved row statistics `m` and `l`, never stored), first in Triton.
# - In Triton, try `BLOCK_M = 128`, `BLOCK_N = 64` and `num_warps = 8` at `d = 128`, and
#   `num_stages` for the loads (software pipelining): the tutorial's autotuned configurations.
# - Add dropout, a sliding-window mask, or grouped-query attention (several query heads sharing
#   one key and value head): what changes in the grid and in the mask?
# - Run the forward pass on bfloat16 inputs in Triton, and work out how the error bound changes
#   (bfloat16 has 8 significant bits, float16 11).
#
# **Reading:** A. Vaswani et al., "Attention Is All You Need" (2017), §3.2; M. Milakov and N.
# Gimelshein, "Online normalizer calculation for softmax" (2018); T. Dao, D. Y. Fu, S. Ermon, A.
# Rudra and C. Ré, "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness"
# (NeurIPS 2022); T. Dao, "FlashAttention-2: Faster Attention with Better Parallelism and Work
# Partitioning" (2023); J. Shah et al., "FlashAttention-3" (2024), for Hopper's `wgmma` and
# asynchronous copies; M. Fasi, N. J. Higham, M. Mikaitis and S. Pranesh, "Numerical behavior of
# NVIDIA tensor cores" (PeerJ Computer Science, 2021). Triton's "Fused Attention" tutorial. The
# GPU MODE lectures on FlashAttention and on Triton. PMPP ch. 5 (tiling through shared memory)
# and ch. 16 (a layer as matrix products).
#
# **On AMD (HIP):** the Numba kernels run unchanged (they use no warp-size constant: one thread
# per query row, block-wide barriers); shared memory is the LDS (64 KiB per workgroup on MI300,
# ample for two tiles of 32 × 128 floats). The matrix cores of an MI300 (MFMA instructions) play
# the tensor cores' part; Triton's AMD backend and PyTorch's ROCm build (with AMD's port of
# FlashAttention) use them, and numba-hip, like numba-cuda, does not expose them.
