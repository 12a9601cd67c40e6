# %% [markdown]
# # Chapter 16 · Deep learning: a convolution layer, forward and backward
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 16.
#
# **Before you start:** chapters 1–7 (chapter 5's tiled matrix product and chapter 7's
# convolution above all). **Time:** about 4 hours, reading and exercises included (more in CPU
# mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Write the **forward pass of a convolution layer** (a batch of multi-channel images, a bank of
#   filters) as a kernel with one thread per output, checked against a float64 layer within the
#   error bound of a float32 dot product of `C·R·S` terms, and time it (on a GPU) against the
#   course's kernel, NumPy and cuDNN.
# - **Unroll** the layer's input into a matrix (**im2col**), so that the whole layer becomes one
#   matrix product run by chapter 6's GEMM, and say what that costs in memory.
# - Write **max pooling** and the **backward pass for the input gradient** `dX`, whose sum runs
#   over the filters instead of the channels, and predict a layer's FLOPs, bytes and time bound
#   before measuring.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import numpy as np
import matplotlib.pyplot as plt

import autograder as ag
from numba import cuda, float32

ag.banner()
ch16 = ag.problems.ch16

# %% [markdown]
# ## The idea: a convolution layer is many dot products
#
# A convolutional network (LeNet, AlexNet, VGG, ResNet) spends most of its time in **convolution
# layers** (PMPP §16.2). A layer takes a **batch** of `N` images, each with `C` **channels** (the
# red, green and blue of a photograph, or the feature maps of the layer before), of `H × W`
# pixels: `X[n, c, h, w]`. It holds `M` **filters**, each `C × R × S`: one `R × S` patch of
# weights per input channel, `W[m, c, r, s]`. Each filter slides over each image and gives one
# output **feature map**:
#
# ```
# Y[n, m, p, q] = Σ over c < C, r < R, s < S of  X[n, c, p + r, q + s] · W[m, c, r, s]
# ```
#
# for `p < P = H − R + 1` and `q < Q = W − S + 1`: a **valid** convolution (stride 1, no padding:
# the filter stays inside the image, so the output is smaller), in PMPP's form, a correlation (the
# filter is not flipped). Chapter 7's convolution is the case `N = C = M = 1`; the new part is
# that every output sums over **all input channels**, and that there are `M` filters. The arrays
# are stored **NCHW** (the last index varies fastest), as PMPP and cuDNN's default have them.
#
# Each output is a dot product of `C·R·S` terms, and there are `N·M·P·Q` outputs: a 3 × 3 layer of
# 64 filters over 64 channels, 32 images of 64 × 64, is 9 billion FLOPs for 34 MB of input. The
# same values are used again and again (each input pixel by up to `M·R·S` products), which is what
# makes a layer fast on a GPU if the kernel lets the caches catch the reuse.
#
# After the convolution comes a **pooling** layer that shrinks each map (the largest value of each
# `K × K` window), and training needs the **backward pass**: from the gradient of the loss with
# respect to `Y` (`dY`, same shape as `Y`), the gradients with respect to `W` (to update the
# filters) and to `X` (to pass on to the layer before). You will write the one for `X`.
#
# A small layer to look at: one image of 2 channels (4 × 5, the values 0 to 39), and 3 filters of
# 2 × 2:

# %%
small = ch16.small_layer()
print("X[0, 0] =\n", small["X"][0, 0], "\nX[0, 1] =\n", small["X"][0, 1])
print("W[0] =\n", small["W"][0])
print("Y = X ∗ W has shape", small["Y"].shape, "; Y[0, 0] =\n", small["Y"][0, 0])

# %% [markdown]
# Check one value by hand: `Y[0, 0, 0, 0]` takes the 2 × 2 window at the top left of each
# channel, `[[0, 1], [5, 6]]` and `[[20, 21], [25, 26]]`, times `W[0, 0] = [[1, 0], [0, −1]]` and
# `W[0, 1] = [[0, 1], [1, 0]]`: `0 − 6 + 21 + 25 = 40`.
#
# ## The CPU baseline
#
# Three ways on the host, timed on a layer of 8 images of 16 channels (32 × 32) and 16 filters of
# 3 × 3 (about 33 MFLOP): the seven nested loops compiled with `numba.njit` on one core; the same
# loops with the `(n, m)` pairs spread over all cores (`numba.prange`); and NumPy, which views the
# input as its windows without copying (`sliding_window_view`: the im2col of Exercise 16.2,
# as strides) and hands the sum to BLAS as one matrix product (`np.tensordot`). GFLOP/s counts
# `2·N·M·P·Q·C·R·S` FLOPs.

# %%
why = ag.timing.not_measured("Timing the CPU convolution", gpu=False)
if why:
    print(why)
cpu_results = [] if why else ch16.time_cpu_forward()
for r in cpu_results:
    print(f"{r['label']:58s} {r['ms']:9.2f} ms {r['gflops']:8.2f} GFLOP/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# ## Exercise 16.1 · The forward pass, one thread per output (3 points + 2 for speed)
#
# Write `conv_forward_kernel(X, W, Y)`: `X` is float32 `[N, C, H, W]`, `W` float32 `[M, C, R, S]`,
# `Y` float32 `[N, M, P, Q]` (take every size from the arrays' `.shape`). One thread computes one
# output `Y[n, m, p, q]`: its dot product of `C·R·S` terms in a local float32 variable, then one
# store. The launch is PMPP's (§16.3): a 3-D grid of 2-D blocks,
#
# - `x` across the output's columns: `q = blockIdx.x · blockDim.x + threadIdx.x`;
# - `y` down its rows: `p = blockIdx.y · blockDim.y + threadIdx.y`;
# - `z` over the (image, filter) pairs: `blockIdx.z = n · M + m`, one layer of blocks per output
#   map, so `n = blockIdx.z // M` and `m = blockIdx.z % M`.
#
# The last blocks along x and y are partial: guard with the **output's** sizes. Roughly 12 lines.
#
# **What the check does.** Blocks of 8 × 8 threads (16 × 4 and 4 × 8 in the hidden tests), `Y`
# filled with NaN. Visible: a 3 × 3 layer (N = 2, C = 3, M = 4, 9 × 11 images), a 2 × 3 filter
# (`R ≠ S`: swapped axes fail) and a filter as large as the image. Hidden: a 1 × 1 convolution,
# a deep 5 × 6 filter over 8 channels, and two random shapes. Inputs have a random offset and
# scale, filters both signs. Each output must be within the error bound of a float32 dot product
# of its `k = C·R·S` terms in any order, `γ_k · Σ|X · W|` with `γ_k = k·u / (1 − k·u)` and
# `u = 2⁻²⁴`: a float64 accumulator passes too, a missing term or a flipped filter does not.
# **The speed test** (on a GPU) runs a VGG-like layer (N = 32, C = M = 64, 64 × 64 images, 3 × 3
# filters: 9.1 GFLOP) with blocks of 32 × 8, against the course's kernel (the same algorithm) timed
# in the same run and NumPy on the host: you need at least 60% of the course's speed and 5× NumPy.
# Every timed call's `Y` is checked at sampled outputs. In CPU mode it says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "conv_forward_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def conv_forward_kernel(X, W, Y):
    ### BEGIN SOLUTION
    q = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    p = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M, C, R, S = W.shape
    n = cuda.blockIdx.z // M
    m = cuda.blockIdx.z % M
    if p < Y.shape[2] and q < Y.shape[3]:
        acc = float32(0.0)
        for c in range(C):
            for r in range(R):
                for s in range(S):
                    acc += X[n, c, p + r, q + s] * W[m, c, r, s]
        Y[n, m, p, q] = acc
    ### END SOLUTION


# %% [markdown]
# Try it on the small layer:

# %%
got, expected = ch16.check_small(conv_forward_kernel, "forward")
print("yours, Y[0, 0] =\n", got[0, 0], "\nexpected =\n", expected[0, 0])

# %% nbgrader={"grade": true, "grade_id": "conv_forward_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch16.conv_forward.check(conv_forward_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch16.conv_forward.check_hidden(conv_forward_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "conv_forward_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch16.conv_forward.check_speed(conv_forward_kernel)

# %% [markdown]
# ## Break it: the filter in shared memory, without a barrier
#
# Every thread of a block works for the same `(n, m)`: they all read the same filter `W[m]`, so a
# natural improvement is to load it into **shared memory** once per block (each thread copies a
# few of its `C·R·S` values) and read it from there (PMPP §16.3 and chapter 5). The kernel below
# does that, but forgets the `cuda.syncthreads()` between the copy and the use. **Predict before
# you run:** which threads can read a value that is not there yet? What does the course's check
# say in CPU mode?

# %%
FILTER_MAX = 1024       # the largest C·R·S this kernel takes


@cuda.jit
def conv_forward_shared_no_barrier(X, W, Y):
    w_s = cuda.shared.array(FILTER_MAX, float32)
    M, C, R, S = W.shape
    n, m = cuda.blockIdx.z // M, cuda.blockIdx.z % M
    t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    for k in range(t, C * R * S, cuda.blockDim.x * cuda.blockDim.y):
        w_s[k] = W[m, k // (R * S), (k // S) % R, k % S]      # each thread copies a few values
    # cuda.syncthreads() belongs here: every copy done before any thread reads w_s
    q = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    p = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if p < Y.shape[2] and q < Y.shape[3]:
        acc = float32(0.0)
        for k in range(C * R * S):
            acc += X[n, k // (R * S), p + (k // S) % R, q + k % S] * w_s[k]
        Y[n, m, p, q] = acc


try:
    ch16.conv_forward.check(conv_forward_shared_no_barrier)
except ag.CheckFailed as failure:
    print("the course's check:\n" + str(failure))

# %% [markdown]
# A thread reads `w_s[k]` for every `k`, and most of them were copied by **other** threads, of
# other warps: without a barrier nothing says those copies are done. On a GPU the kernel often
# gives the right answer anyway (the first warps finish their copies early), and then fails on
# another GPU, another block shape or under load. In CPU mode the race detector records every
# shared-memory access and stops at the first read of a value another thread wrote with no
# barrier between, naming both threads and both lines: put the `cuda.syncthreads()` back and the
# check passes.
#
# ## Exercise 16.2 · im2col: the layer as one matrix product (3 points)
#
# A GPU's fastest operation is the matrix product (chapters 5 and 6, cuBLAS, tensor cores). The
# convolution becomes one if the input is **unrolled** (PMPP §16.4): write every output
# position's window, all `C` channels of `R × S`, as one **column** of a matrix `Xu` with `C·R·S`
# rows and one column per output position of every image, `N·P·Q`:
#
# ```
# Xu[c·R·S + r·S + s,  n·P·Q + p·Q + q] = X[n, c, p + r, q + s]
# ```
#
# The filters, read as a `[M, C·R·S]` matrix (row `m` is filter `m`, in the same `(c, r, s)`
# order: `W.reshape(M, C·R·S)`, no copy), times `Xu` give a `[M, N·P·Q]` matrix whose row `m`
# holds map `m` of every image: `Y` with `n` and `m` swapped. Here is `Xu` for one image of 2
# channels of 3 × 4 and a 2 × 2 filter; each column is one window, and each value of `X` appears up
# to `R·S = 4` times:

# %%
ch16.show_im2col()
plt.tight_layout()
plt.show()

# %% [markdown]
# Write `im2col_kernel(X, Xu, R, S)`: `X` float32 `[N, C, H, W]`, `Xu` float32
# `[C·R·S, N·P·Q]`, `R` and `S` the filter's sizes (Python ints). One thread per element of `Xu`:
# `x` across its columns (`col = blockIdx.x · blockDim.x + threadIdx.x`), `y` down its rows. From
# `row` and `col`, find `c, r, s` and `n, p, q` (integer division and remainder), then copy one
# value. Roughly 10 lines.
#
# **What the check does.** Blocks of 8 × 8 threads (16 × 4 and 4 × 8 hidden), `Xu` filled with
# NaN, compared **exactly** (a copy has no rounding). Visible: `Xu` of 12 × 40 (a 3 × 2 filter,
# two images of two channels), 12 × 9 and 1 × 1; hidden: 27 × 72, a 1 × 4 filter, two random
# shapes.

# %% nbgrader={"grade": false, "grade_id": "im2col_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def im2col_kernel(X, Xu, R, S):
    ### BEGIN SOLUTION
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < Xu.shape[0] and col < Xu.shape[1]:
        P = X.shape[2] - R + 1
        Q = X.shape[3] - S + 1
        c = row // (R * S)
        r = (row // S) % R
        s = row % S
        n = col // (P * Q)
        p = (col // Q) % P
        q = col % Q
        Xu[row, col] = X[n, c, p + r, q + s]
    ### END SOLUTION


# %%
got, expected = ch16.check_small(im2col_kernel, "im2col")
print("your Xu matches:", bool(np.array_equal(got, expected)), " shape", got.shape)

# %% nbgrader={"grade": true, "grade_id": "im2col_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch16.im2col.check(im2col_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch16.im2col.check_hidden(im2col_kernel)
### END HIDDEN TESTS

# %% [markdown]
# Now the whole layer through your unroll: `ch16.conv_by_im2col(im2col_kernel, X, W)` launches
# your kernel, then chapter 6's register-tiled GEMM (`ch16.course_gemm`, 64 × 64 tiles of the
# product per block) on `W` as `[M, C·R·S]` times `Xu`, then a small kernel that puts the
# `[M, N·P·Q]` result into `Y`'s NCHW order. Does it agree with your direct kernel? (It may differ
# in the last bits: the GEMM adds the same terms in another order. Both are within the bound.)

# %%
rng = np.random.default_rng(16)
X_try = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
W_try = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
d_X, d_W = cuda.to_device(X_try), cuda.to_device(W_try)
Y_gemm = ch16.conv_by_im2col(im2col_kernel, d_X, d_W).copy_to_host()
Y_direct = cuda.device_array(Y_gemm.shape, np.float32)
conv_forward_kernel[(2, 1, 8), (8, 8)](d_X, d_W, Y_direct)
exact, mag = ch16.conv_forward_host(X_try, W_try)
bound = ch16.layer_tolerance(mag, 3 * 3 * 3)
print("largest |direct − GEMM|:", float(np.abs(Y_direct.copy_to_host() - Y_gemm).max()))
print("both within the bound:", bool(np.all(np.abs(Y_gemm - exact) <= bound)
                                     and np.all(np.abs(Y_direct.copy_to_host() - exact) <= bound)))

# %% [markdown]
# What im2col costs: `Xu` holds up to `R·S` copies of every input value. For the speed test's
# layer (32 images of 64 channels, 64 × 64, 3 × 3 filters) `X` is 34 MB and `Xu` 283 MB, written
# once by the unroll and read again by the GEMM. In exchange the product runs at a GEMM's speed,
# which on a GPU can be many times a direct kernel's. PMPP's version unrolls one image at a time
# to keep `Xu` small; cuDNN goes further and never stores `Xu` at all ("implicit GEMM": the GEMM's
# tiles are loaded from `X` with im2col's index arithmetic), or switches to FFT or Winograd
# algorithms for some filter sizes.
#
# ## Exercise 16.3 · Max pooling (2 points)
#
# A pooling layer shrinks each map: the output is the largest value of each `K × K` window, and
# the windows do not overlap (a stride of `K`). For an input of `H × W`, the output has
# `H // K` rows and `W // K` columns: rows and columns past the last whole window are left out.
#
# Write `maxpool_kernel(Y, out, K)`: `Y` float32 `[N, C, H, W]`, `out` float32
# `[N, C, H // K, W // K]`, `K` a Python int. One thread per output, launched like 16.1: `x`
# across `out`'s columns, `y` down its rows, `z` over the (image, channel) pairs
# (`blockIdx.z = n · C + c`, with `C = out.shape[1]`). Roughly 10 lines. Careful: what is the
# largest value of a window whose values are all negative?
#
# **What the check does.** As 16.1's launches; `out` compared exactly (the maximum is one of the
# inputs). Visible: 2 × 2 windows over 10 × 12 maps, 3 × 3 over 11 × 14, and one 4 × 4 window
# over 7 × 6 (rows and columns left over); hidden: 3 × 3 over 19 × 22, `K = 1`, two random. One
# channel of every case is entirely negative.

# %% nbgrader={"grade": false, "grade_id": "maxpool_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def maxpool_kernel(Y, out, K):
    ### BEGIN SOLUTION
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    C = out.shape[1]
    n = cuda.blockIdx.z // C
    c = cuda.blockIdx.z % C
    if i < out.shape[2] and j < out.shape[3]:
        best = Y[n, c, i * K, j * K]
        for a in range(K):
            for b in range(K):
                best = max(best, Y[n, c, i * K + a, j * K + b])
        out[n, c, i, j] = best
    ### END SOLUTION


# %%
got, expected = ch16.check_small(maxpool_kernel, "maxpool")
print("yours:\n", got[0, 0], "\nexpected:\n", expected[0, 0])

# %% nbgrader={"grade": true, "grade_id": "maxpool_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch16.maxpool.check(maxpool_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch16.maxpool.check_hidden(maxpool_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 16.4 · The gradient with respect to the input (3 points)
#
# Training needs, for each layer, the gradient of the loss `L` with respect to the layer's input,
# `dX = ∂L/∂X`, from the gradient with respect to its output, `dY = ∂L/∂Y` (PMPP §16.2, backward
# propagation). Each input value `X[n, c, h, w]` was used by every output whose window covers it:
# output `(p, q)` of map `m` used it with the weight `W[m, c, h − p, w − q]`. So by the chain rule,
#
# ```
# dX[n, c, h, w] = Σ over m < M, r < R, s < S of  dY[n, m, h − r, w − s] · W[m, c, r, s]
# ```
#
# taking only the terms with `0 ≤ h − r < P` and `0 ≤ w − s < Q` (the outputs that exist). It is
# again a convolution, of `dY` with the filters turned by 180°, over a `dY` padded with zeros (a
# "full" convolution: the output, `H × W`, is larger than `dY`), and with the roles of `m` and `c`
# exchanged: **the sum runs over the filters**, and there is one output map per input channel.
#
# **The error bound changes with it.** An element of `dX` is a dot product of at most `k = M·R·S`
# terms (fewer at the borders, where some `h − r` fall outside `dY`), so the check allows
# `γ_(M·R·S) · Σ|dY · W|`: with many filters and few channels, as in the hidden deep case (10
# filters of 5 × 6 into 2 channels: k = 300), the forward pass of the same layer would be judged
# with k = 60, the gradient with k = 300. And the bound is relative to the **sum of the
# magnitudes**, not to the result: gradients are sums of terms of both signs that largely cancel,
# and a result near zero can carry an error as large as its value and still be right.
#
# Write `conv_backward_input_kernel(dY, W, dX)`: `dY` float32 `[N, M, P, Q]`, `W` float32
# `[M, C, R, S]`, `dX` float32 `[N, C, H, W]`. One thread per element of `dX`: `x` across its
# columns (`w`), `y` down its rows (`h`), `z` over the (image, channel) pairs,
# `blockIdx.z = n · C + c` with `C = W.shape[1]`. Mind the two tests on `h − r` and `w − s`: in
# Numba, as in Python, a negative index does not fail; it wraps around to the other end of the
# array. Roughly 16 lines.
#
# **What the check does.** The shapes of 16.1 (so `dX` is 16.1's `X`), hidden the 1 × 1 layer,
# the deep case above and two random; `dX` filled with NaN; the bound above.

# %% nbgrader={"grade": false, "grade_id": "conv_backward_input_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def conv_backward_input_kernel(dY, W, dX):
    ### BEGIN SOLUTION
    w = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    h = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M, C, R, S = W.shape
    n = cuda.blockIdx.z // C
    c = cuda.blockIdx.z % C
    P, Q = dY.shape[2], dY.shape[3]
    if h < dX.shape[2] and w < dX.shape[3]:
        acc = float32(0.0)
        for m in range(M):
            for r in range(R):
                p = h - r
                if p >= 0 and p < P:
                    for s in range(S):
                        q = w - s
                        if q >= 0 and q < Q:
                            acc += dY[n, m, p, q] * W[m, c, r, s]
        dX[n, c, h, w] = acc
    ### END SOLUTION


# %%
got, expected = ch16.check_small(conv_backward_input_kernel, "backward")
print("yours, dX[0, 0] =\n", got[0, 0], "\nexpected =\n", expected[0, 0])

# %% nbgrader={"grade": true, "grade_id": "conv_backward_input_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch16.conv_backward_input.check(conv_backward_input_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch16.conv_backward_input.check_hidden(conv_backward_input_kernel)
### END HIDDEN TESTS

# %% [markdown]
# The gradient with respect to the filters, `dW[m, c, r, s] = Σ over n, p, q of
# dY[n, m, p, q] · X[n, c, p + r, q + s]`, is a third convolution, summed over the batch and the
# output positions: `N·P·Q` terms, by far the longest of the three sums, and with im2col a product
# of `dY` as `[M, N·P·Q]` with the transpose of `Xu` (Going further).
#
# ## Predict: what a layer must compute and move
#
# Before timing the layer, put numbers on it. For a layer of `N` images of `C` channels, `H × W`,
# and `M` filters of `C × R × S` (float32, 4 bytes a value), with the output's sizes `P` and `Q` as
# above:
#
# - **FLOPs**: every output is a dot product of `C·R·S` products, each a multiply and an add;
# - **the least bytes** a forward pass can move: `X` and the filters read once each, `Y` written
#   once (every reuse served by caches or shared memory);
# - **the bytes of the im2col path**: those, plus the unrolled matrix, written once by the unroll
#   kernel and read once by the GEMM;
# - **the time bound**: as in chapters 5 and 7, a kernel cannot finish before its arithmetic is
#   done at the peak rate, nor before its least bytes have crossed the memory bus.
#
# ## Exercise 16.5 · A layer's FLOPs, bytes and time bound (2 points)
#
# Write `conv_layer_bound(n, c, h, w, m, r, s, peak_flops, bandwidth)`: the first seven are
# Python ints (the input's and the filters' sizes), `peak_flops` (FLOP/s) and `bandwidth`
# (bytes/s) Python floats. Return four numbers: `(flops, bytes, im2col_bytes, seconds)` as
# described above, `seconds` being the bound for the least bytes. Roughly 6 lines.
#
# **Predict first, by hand:** for the speed test's layer (32 images of 64 channels, 64 × 64, 64
# filters of 3 × 3) on the H200-like device of chapter 5 (67 TFLOP/s float32, 4.8 TB/s), how many
# GFLOP, how many MB, how many FLOPs per byte? Is the layer compute bound or memory bound? How
# many times more bytes does the im2col path move?
#
# **What the check does.** Three sets of values (the speed test's layer and a 1 × 1 layer of one
# image on the H200-like device, then a one-pixel layer), and 200 random ones hidden (filters up
# to 7 × 7, up to 512 channels and filters, 0.1 to 300 TFLOP/s, 30 GB/s to 10 TB/s), each result
# within a few float64 roundings of the exact one.

# %% nbgrader={"grade": false, "grade_id": "conv_layer_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def conv_layer_bound(n, c, h, w, m, r, s, peak_flops, bandwidth):
    """(FLOPs, least bytes, bytes with im2col, time bound in seconds) of a layer's forward pass."""
    ### BEGIN SOLUTION
    p, q = h - r + 1, w - s + 1
    flops = 2 * n * m * p * q * c * r * s
    least = 4 * (n * c * h * w + m * c * r * s + n * m * p * q)
    unrolled = 4 * (c * r * s) * (n * p * q)             # Xu, written once and read once
    return flops, least, least + 2 * unrolled, max(flops / peak_flops, least / bandwidth)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "conv_layer_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch16.conv_layer_bound.check(conv_layer_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch16.conv_layer_bound.check_hidden(conv_layer_bound)
### END HIDDEN TESTS

# %% [markdown]
# Your numbers for the speed test's layer:

# %%
flops, least, unrolled, seconds = conv_layer_bound(32, 64, 64, 64, 64, 3, 3, 67e12, 4.8e12)
print(f"{flops / 1e9:.2f} GFLOP, at least {least / 1e6:.1f} MB: {flops / least:.0f} FLOPs per byte")
print(f"bound: {seconds * 1e3:.3f} ms ({'compute' if flops / 67e12 >= least / 4.8e12 else 'memory'}"
      f" bound); the im2col path moves {unrolled / least:.1f} times the least bytes")

# %% [markdown]
# ## Measure: direct, im2col + GEMM, and cuDNN
#
# On a GPU, the next cell times the speed test's layer four ways or more: your direct kernel, your
# unroll kernel followed by chapter 6's GEMM, the course's direct kernel, the course's unroll + the
# same GEMM, and, where PyTorch is installed with a GPU, **cuDNN** through
# `torch.nn.functional.conv2d` (NVIDIA's library of deep-learning kernels; PyTorch is an optional
# extra here, the course never needs it). TFLOP/s counts the layer's FLOPs; GB/s its least
# bytes, so you can set each time against your bound. In CPU mode it says that it needs a GPU and
# draws what the course's kernels took on an H200 instead.

# %%
mine = {"direct, a thread per output (yours)": ("direct", conv_forward_kernel),
        "im2col (yours) + chapter 6's GEMM": ("im2col", im2col_kernel)}
try:
    results = ch16.measure(mine)
    for r in results:
        print(f"{r['label']:52s} {r['ms']:8.3f} ms {r['tflops']:7.2f} TFLOP/s {r['gbps']:7.0f} GB/s"
              f"{'' if r['right'] else '   WRONG'}")
    ag.experiments.steps(**ch16.chart(results)).show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels (bars), cuDNN (the line):")
    ag.experiments.steps(**ch16.chart()).show()

# %% [markdown]
# ## Explain: where the time of a layer goes (2 points, graded by your instructor)
#
# In the cell below, in 5 to 10 sentences, with numbers from your bound (Exercise 16.5) and, if you
# ran on a GPU, from the measurements:
#
# 1. say what you predicted for the speed test's layer (FLOPs per byte, compute or memory bound,
#    the bound in milliseconds) and how far each measured way is from it;
# 2. explain why the direct kernel, which does the same FLOPs as the GEMM, can be slower, naming
#    what its threads load per multiply-add and where those loads are served from; and what
#    im2col pays for the GEMM's speed (bytes and memory, with your numbers);
# 3. say what cuDNN does that neither of the course's ways does (or, without a GPU, what you
#    would expect it to do), and which way you would pick for a 1 × 1 layer, and why.
#
# A full-mark answer puts a number on every claim and keeps what was measured apart from what was
# predicted. Studying alone: once `./aag grade` passes this chapter's auto-graded exercises,
# `ag.reveal("conv_paths_answer")` shows a model answer to set yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "conv_paths_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the bound's numbers are the chapter's H200-like device,
# measured times are the learner's own).* (1) The speed test's layer does 2 · 32 · 64 · 62 · 62 ·
# 64 · 9 = 9.07 GFLOP and must move at least 33.6 MB (X) + 0.15 MB (W) + 31.5 MB (Y) = 65.2 MB:
# 139 FLOPs per byte, far above the device's 67 / 4.8 = 14 FLOPs per byte, so it is compute
# bound, at 0.135 ms (the bytes alone would take 0.014 ms). A direct kernel at, say, 5 TFLOP/s
# takes 1.8 ms, 13 times the bound; that is the gap to explain, and it is not memory bandwidth.
# (2) Each multiply-add of the direct kernel loads two values, one of X and one of W: 8 bytes per
# 2 FLOPs. They come from L1 and L2, not DRAM (every X value is reused by up to M · R · S = 576
# products), but L1 delivers far fewer loads per cycle than the FMA units need, so the kernel is
# bound by load instructions, as chapter 5's naive matmul was; the GEMM keeps tiles in shared
# memory and registers, and each of its threads does 64 multiply-adds per 16 loads from shared
# memory. im2col pays for that with its unrolled matrix: 576 × 123,008 floats = 283 MB, written
# once and read once, so the path moves 631 MB, 9.7 times the least bytes (0.13 ms at 4.8 TB/s,
# about the whole compute bound again), and needs 283 MB of memory, which for large batches is
# why PMPP unrolls one image at a time. (3) cuDNN picks among implicit GEMM (im2col's indices
# inside the GEMM's tile loads, so the unrolled matrix never exists), Winograd (fewer
# multiplications for 3 × 3 filters) and FFT algorithms, uses tensor cores where the precision
# allows, and fuses the layout changes; I would expect it within a small factor of the bound. For
# a 1 × 1 layer, each image X[n] is already its own unrolled matrix (C rows of H·W, nothing
# repeated), so the layer is N plain GEMMs of W as M × C by X[n], and the unroll would only copy:
# I would call the GEMM directly.

# %% [markdown]
# ## Going further (not graded)
#
# - Put the filter in shared memory (with the barrier) and load a tile of `X` with its halo, as in
#   chapter 7's tiled convolution, so that each block reads each input value once: how close does
#   the direct kernel get to the GEMM path?
# - Write the gradient with respect to the filters, `dW`, as a GEMM: `dY` as `[M, N·P·Q]` (after
#   swapping `n` and `m`) times the transpose of `Xu`.
# - Unroll one image at a time (as PMPP §16.4 does) and run `N` smaller GEMMs: how much memory does
#   it save, and what does it cost in time?
# - Average pooling and a ReLU fused into the convolution's store: one pass over `Y` saved.
#
# **Reading:** PMPP ch. 16: §16.1 (background: machine learning, and the perceptron), §16.2
# (convolutional neural networks: the forward and backward passes), §16.3 (a convolutional layer:
# a CUDA inference kernel), §16.4 (formulating a convolutional layer as GEMM), §16.5 (cuDNN).
# Chellapilla, Puri and Simard, "High performance convolutional neural networks for document
# processing" (2006), where the unrolling comes from; Chetlur et al., "cuDNN: efficient primitives
# for deep learning" (2014); Lavin and Gray, "Fast algorithms for convolutional neural networks"
# (2016, Winograd).
#
# **On AMD (HIP):** MIOpen plays cuDNN's part (PyTorch's ROCm build calls it for `conv2d`), and
# rocBLAS cuBLAS's. The kernels of this chapter run unchanged; a block of 8 × 8 threads is
# exactly one wavefront of 64 there (two warps on NVIDIA GPUs).
