# %% [markdown]
# # Chapter 17 · Iterative MRI reconstruction: F^H·d, gathered, staged and approximated
#
# *Programming Massively Parallel Processors* (PMPP, 4th ed.), chapter 17.
#
# **Before you start:** chapters 1–7 (chapter 5's shared memory and chapter 7's constant memory
# above all) and chapter 9's atomics. **Time:** about 3 hours, reading and exercises included
# (more in CPU mode, where the simulator runs kernels slowly).
#
# ## What you will be able to do
# - Turn PMPP's first parallel form of the MRI computation (a thread per k-space sample, an
#   atomic add into every voxel) into a **gather** (a thread per voxel, the sums in registers) by
#   interchanging the loops, and time it against the scatter and the CPU.
# - Stage the k-space samples **chunk by chunk in shared memory**, so every thread of a block
#   reads the same sample at the same time, and say what Numba offers, and what it does not, for
#   PMPP's constant-memory version.
# - Compile the kernel with **fast sine and cosine**, read in the compiled code what that
#   changes, **derive the error bound** it costs, and have your fast kernel judged against it.
#
# Run the first cell before anything else: importing `autograder` picks the backend (an NVIDIA
# GPU, an AMD GPU, or CPU mode with the CUDA simulator) before Numba loads its CUDA target.

# %%
import math

import numpy as np

import autograder as ag
from numba import cuda, float32

ag.banner()
ch17 = ag.problems.ch17
TWO_PI = np.float32(2 * math.pi)      # 2π as a float32 constant, for your kernels

# %% [markdown]
# ## The idea: every sample visits every voxel
#
# An MRI scanner does not take a picture; it measures the **Fourier transform** of the picture at
# chosen frequencies, the **k-space samples**. When they lie on a regular grid, one inverse FFT
# gives the image. Faster scans and fewer artefacts come from sampling along spirals or radial
# lines instead (**non-Cartesian** trajectories), and then there is no FFT to call: the
# reconstruction solves a linear system iteratively (PMPP §17.1–17.2), and one of its largest
# steps is the vector **F^H·d**, the data `d` taken back from k-space to every voxel (§17.3).
#
# For voxel `n` at `(x[n], y[n], z[n])` (in units of the field of view) and sample `m` at
# `(kx[m], ky[m], kz[m])` (in cycles per field of view) with its complex value
# `μ[m] = rMu[m] + i·iMu[m]` (the data times a density weight, computed before), with
# `θ = 2π·(kx[m]·x[n] + ky[m]·y[n] + kz[m]·z[n])`:
#
# ```
# rFhD[n] = Σ over m of  rMu[m]·cos θ − iMu[m]·sin θ        (the real part of μ·e^{iθ})
# iFhD[n] = Σ over m of  iMu[m]·cos θ + rMu[m]·sin θ        (its imaginary part)
# ```
#
# Every voxel needs every sample: `N·M` pairs, each a sine, a cosine and about a dozen
# arithmetic operations, and no pair shares work with another. A 64³ volume and 20,000 samples is
# 5·10⁹ pairs: compute, not memory, is what this chapter is about (the inputs are a few hundred
# kilobytes). A small scan to look at, of 10 voxels and 7 samples:

# %%
scan = ch17.small_scan()
print("kx =", scan["kx"], "\nx =", scan["x"])
print("rFhD (float64) =", scan["re"].round(3))
theta = 2 * np.pi * (scan["kx"] * scan["x"][0] + scan["ky"] * scan["y"][0] + scan["kz"] * scan["z"][0])
print("voxel 0 by hand:", float(np.sum(scan["rMu"] * np.cos(theta) - scan["iMu"] * np.sin(theta))))

# %% [markdown]
# ## The CPU baseline
#
# The two loops compiled for the host with `numba.njit`, on one core and spread over the voxels
# on every core (`numba.prange`), on 4096 voxels and 512 samples. GFLOP/s counts 14 operations
# per pair (θ: 6; the four products and two sums: 6; a sine and a cosine as one each).

# %%
why = ag.timing.not_measured("Timing the CPU loops", gpu=False)
if why:
    print(why)
for r in ([] if why else ch17.time_cpu_fhd()):
    print(f"{r['label']:50s} {r['ms']:9.2f} ms {r['gflops']:7.2f} GFLOP/s"
          f"{'' if r['right'] else '   WRONG'}")

# %% [markdown]
# ## The first parallel form: a thread per sample
#
# The loop nest is "for every sample, for every voxel". PMPP's first kernel (§17.3, step 1: the
# kernel's parallelism) parallelizes the outer loop: one thread per sample `m`, looping over all voxels. Each
# thread must then **add into every voxel**, and all `M` threads add into the same `N` voxels at
# once: every add must be atomic. Read it and run it on the small scan (the outputs start at zero):

# %%
@cuda.jit
def fhd_scatter_kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
    m = cuda.grid(1)
    if m < kx.size:
        for n in range(x.size):
            t = TWO_PI * (kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n])
            c, s = math.cos(t), math.sin(t)
            cuda.atomic.add(rFhD, n, rMu[m] * c - iMu[m] * s)
            cuda.atomic.add(iFhD, n, iMu[m] * c + rMu[m] * s)


got = ch17.run_fhd(fhd_scatter_kernel, scan, per="sample")
print("within the bound:", ch17.within_bound(got, scan))

# %% [markdown]
# It is right, and it is a bad plan: `2·M·N` atomic adds, each a read-modify-write of global
# memory that the L2 cache serializes per address, so every voxel's `M` adds wait for one another;
# and `M` threads (tens of thousands) may not even fill a large GPU. The measuring cell below times
# it on a sixty-fourth of the samples: it is that slow.
#
# ## Break it: the scatter without atomics
#
# Replace the atomic adds by plain `+=`. **Predict before you run:** how many of the `M` terms
# should reach each voxel, and how many will? In CPU mode the course watches every access to the
# outputs during the launch and stops at the first two threads that both read and write one voxel
# with nothing ordering them, naming both.

# %%
@cuda.jit
def fhd_scatter_no_atomics(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
    m = cuda.grid(1)
    if m < kx.size:
        for n in range(x.size):
            t = TWO_PI * (kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n])
            c, s = math.cos(t), math.sin(t)
            rFhD[n] += rMu[m] * c - iMu[m] * s        # read, add, write: not one step
            iFhD[n] += iMu[m] * c + rMu[m] * s


try:
    got = ch17.run_fhd(fhd_scatter_no_atomics, scan, per="sample", threads=32)
    print("within the bound:", ch17.within_bound(got, scan))
except Exception as failure:                  # CPU mode: the race detector stops the launch
    print(f"{type(failure).__name__}: {str(failure)[:600]}")

# %% [markdown]
# Two threads read the same `rFhD[n]`, each adds its term, each writes: one term is lost. On a
# GPU, where a warp's 32 threads do this at once, most terms are lost and the result is wrong by
# far more than any bound. Atomics fix it at the price above.
#
# **Interchange the loops** (PMPP §17.3, step 1): "for every voxel, for every sample". Now one
# thread per voxel gathers all `M` terms into two local variables (registers), and stores each
# output once. No two threads write the same place: no atomics, no race, and `N` threads (a 64³
# volume is 262,144) fill the GPU. The arithmetic is the same `N·M` pairs; only who does which
# changed. PMPP gets there in two steps (first splitting the loop that computes μ into a kernel of
# its own, then interchanging); here μ arrives computed.
#
# ## Exercise 17.1 · F^H·d, one thread per voxel (3 points + 2 for speed)
#
# Write `fhd_gather_kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD)`: all float32 1-D device
# arrays, `kx, ky, kz, rMu, iMu` of `M` samples, `x, y, z, rFhD, iFhD` of `N` voxels (take both
# from the arrays' sizes). One thread per voxel, `n = cuda.grid(1)`, guarded by `n < N`; read the
# voxel's coordinates once into locals; sum the `M` terms of both outputs in two float32 locals,
# starting from zero; store each output once. Compute θ in float32 with the `TWO_PI` of the
# first cell, and use `math.cos` and `math.sin` (the accurate ones: **no** `fastmath` here).
# Roughly 14 lines.
#
# **What the check does.** `ceil(N / 64)` blocks of 64 threads (32 and 96 in the hidden tests),
# both outputs filled with NaN. Visible: 150 voxels × 37 samples, 70 × 20, 1 × 5; hidden: 333 × 70,
# 1 × 200 and two random sizes. Voxels lie in `[−½, ½)³`, samples up to ±24 cycles, so θ reaches
# a few hundred radians; μ has a random offset and scale. Each output is judged against a float64
# answer within an **error bound** (PMPP §17.3 measures the image error of such choices; here it is
# per voxel):
#
# - θ itself is computed in float32, off by at most `γ_5` relative to `A = 2π·(|kx·x| + |ky·y| +
#   |kz·z|)`, and cosine and sine pass that on (their slope is at most 1);
# - libdevice's `cosf` and `sinf` (what `math.cos` compiles to) are within 2 ulp: under 2⁻²² for
#   values in [−1, 1];
# - each term rounds twice and the `M` terms are added in float32: `γ_(M+2)` times `Σ(|rMu| + |iMu|)`,
#
# where `γ_k = k·u / (1 − k·u)` with `u = 2⁻²⁴` (Higham's bound on `k` stacked roundings, as in
# chapter 16). A float64 accumulator passes too; a missing sample, a flipped sign or a lost 2π
# do not, and the verdict names those slips. **The speed test** (on a GPU) runs a 64³ volume with
# 20,011 samples in blocks of 256, against the course's kernel (the same algorithm) timed in the
# same run and the host loop on every core: you need at least half the course's speed and 5× the
# host. In CPU mode it says that it needs a GPU.

# %% nbgrader={"grade": false, "grade_id": "fhd_gather_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
@cuda.jit
def fhd_gather_kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
    ### BEGIN SOLUTION
    n = cuda.grid(1)
    if n < x.size:
        xn, yn, zn = x[n], y[n], z[n]
        re = float32(0.0)
        im = float32(0.0)
        for m in range(kx.size):
            t = TWO_PI * (kx[m] * xn + ky[m] * yn + kz[m] * zn)
            c = math.cos(t)
            s = math.sin(t)
            re += rMu[m] * c - iMu[m] * s
            im += iMu[m] * c + rMu[m] * s
        rFhD[n] = re
        iFhD[n] = im
    ### END SOLUTION


# %% [markdown]
# Try it on the small scan:

# %%
got = ch17.run_fhd(fhd_gather_kernel, scan)
print("yours:   ", got[0].round(3), "\nexpected:", scan["re"].round(3))
print("within the bound:", ch17.within_bound(got, scan))

# %% nbgrader={"grade": true, "grade_id": "fhd_gather_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch17.fhd_gather.check(fhd_gather_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch17.fhd_gather.check_hidden(fhd_gather_kernel)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "fhd_gather_speed", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch17.fhd_gather.check_speed(fhd_gather_kernel)

# %% [markdown]
# ## Registers, constant memory, and what Numba can do
#
# In the gather kernel every thread of a warp reads `kx[m]`, `ky[m]`, … for the **same** `m` at
# the same time: one address for 32 threads. PMPP (§17.3, step 2: the memory bandwidth limit) puts the samples in
# **constant memory**, whose cache broadcasts one value to a whole warp in one access, and since
# constant memory holds only 64 KiB, it copies the samples in **chunks**, launching the kernel
# once per chunk. In CUDA C++:
#
# ```
# __constant__ float kx_c[CHUNK_SIZE], ky_c[CHUNK_SIZE], kz_c[CHUNK_SIZE];
# ...
# for (int i = 0; i < M / CHUNK_SIZE; i++) {
#     cudaMemcpyToSymbol(kx_c, &kx[i * CHUNK_SIZE], CHUNK_SIZE * sizeof(float));
#     cudaMemcpyToSymbol(ky_c, &ky[i * CHUNK_SIZE], CHUNK_SIZE * sizeof(float));
#     cudaMemcpyToSymbol(kz_c, &kz[i * CHUNK_SIZE], CHUNK_SIZE * sizeof(float));
#     cmpFhD<<<N / FHD_THREADS_PER_BLOCK, FHD_THREADS_PER_BLOCK>>>(rPhi, iPhi, phiMag,
#         x, y, z, rMu, iMu, CHUNK_SIZE);
# }
# ```
#
# **Numba CUDA has no `__constant__` variable that the host can write.** Its routes into
# constant memory are all taken **when the kernel is compiled**: `cuda.const.array_like(a)` inside
# a kernel, or simply reading a NumPy array `a` that the kernel finds as a global or captured
# variable. Either way the array's values are written into the compiled code: its PTX declares
# `.const .align 4 .b8 _cudapy_cmem[…] = {…the bytes of a…}` and reads it with `ld.const.f32`.
# There is no `cudaMemcpyToSymbol`: a new chunk of samples means a new kernel, and a new
# compilation (a fraction of a second each on a GPU: thousands of kernel launches' worth). Here is
# that route, one kernel compiled per chunk of 3 samples, on the small scan:

# %%
built = ch17.fhd_by_constant_chunks(scan, chunk=3, threads=32)
got = (built["rFhD"].copy_to_host(), built["iFhD"].copy_to_host())
print(f"{len(built['kernels'])} kernels, built and first run in {built['compile_s']:.2f} s; "
      f"within the bound: {ch17.within_bound(got, scan)}")

# %% [markdown]
# On a GPU that time is compilation (in CPU mode nothing is compiled, so it says little). For a
# real scan, chunks of 3072 samples fill 60 KiB of constant memory, and 20,000 samples take seven
# kernels: seven compilations before the first result, paid again for every new scan. The
# measuring cell below reports it.
#
# The closest thing Numba does at run time is **shared memory used the way constant memory
# would be**: the block copies a chunk of samples from global memory into shared arrays (each
# thread copies a few), waits at a barrier, and then every thread reads sample `j` of the chunk at
# the same time: one shared-memory address for the whole warp, which shared memory **broadcasts**
# without a bank conflict. The block then waits again before the next chunk overwrites it. Each
# sample is read from global memory once per block instead of once per thread. PMPP §17.3
# goes one step further for the cache: the samples of one chunk stored together, one struct per
# sample, so one cache line brings all five of its values.
#
# ## Fast sine and cosine, and what they cost
#
# `math.sin` and `math.cos` compile to libdevice's `sinf` and `cosf`: within 2 ulp for every
# argument, which for large arguments takes a careful, slow reduction of θ into `[−π/4, π/4]`.
# Every GPU also has a **special function unit** that computes an approximate sine or cosine in
# a few cycles (PMPP §17.3, "using hardware trigonometry functions"). `@cuda.jit(fastmath=True)`
# lets the compiler use it: `math.sin` becomes PTX's `sin.approx.f32`. Compile the course's two
# gather kernels (no GPU needed: the CUDA toolkit's compiler does it) and look:

# %%
for label, kernel in (("math.sin, math.cos", ch17.reference_fhd_gather()),
                      ("the same, fastmath=True", ch17.reference_fhd_gather_fast())):
    found = ch17.trig_code(kernel, ag.visual.compile_kernel)
    if found is None:                         # not compiled while the notebook is graded
        break
    if found["missing"] or found["error"]:
        print(found["missing"] or found["error"])
        break
    print(f"{label}: {found['ptx_lines']} lines of PTX, {found['stack_bytes']} bytes of stack")
    print("   PTX:", found["ptx_approx"][:2], "\n   SASS:", found["sass_trig"][:3])

# %% [markdown]
# The accurate kernel's PTX has no approximate instruction: libdevice's `sinf` and `cosf` are
# inlined, with a stack array (the 32 bytes above) for the slow, exact reduction of very large
# arguments. The fast one's PTX (about as long: its loop is unrolled four times) has
# `sin.approx.ftz.f32` and `cos.approx.ftz.f32`, and its machine code (SASS) shows how the
# hardware handles any θ: `FMUL.RZ` multiplies θ by `0.15915493667…` (1/(2π), as a
# float32) **rounding toward zero**, then `MUFU.SIN` and `MUFU.COS` take that number of turns.
# Two errors follow:
#
# - the unit's own: at most `2⁻²¹·⁴¹` for the sine (`2⁻²¹·¹⁹` for the cosine) on `[−π, π]`
#   (CUDA C++ Programming Guide, intrinsic functions); the course uses `a = 2⁻²¹`;
# - the product with 1/(2π): rounded toward zero in float32, it is off by up to one ulp of
#   `θ/(2π)`, about `2⁻²³·|θ|/(2π)` turns, so the angle is off by about `2⁻²³·|θ|`, **growing with
#   θ**; with the constant's own rounding, the course uses `b = 2⁻²²` per radian of `|θ|`.
#
# So a fast sine or cosine at angle θ is off by at most `a + b·|θ|`. At `θ = 300` that is about
# `7·10⁻⁵`, against under `2.4·10⁻⁷` for libdevice's.
#
# **CPU mode cannot show this error.** The simulator runs your kernel as Python, and Python's
# `math.sin` computes in float64 whatever `fastmath` says: a fast kernel gives the accurate
# answer there. On a GPU, the next cell measures it: the course's gather kernel with libdevice's
# and with fast sine and cosine, on scans whose samples reach ±4, ±24 and ±200 cycles (θ up to
# about 38, 230 and 1900), each error given per unit of `Σ(|rMu| + |iMu|)` and as the fraction of
# its bound used (the bound of the next exercise, sample by sample). **Predict first:** which
# kernel's error grows with θ, and roughly how fast? (In CPU mode the cell prints what the course
# measured on an H200.)

# %%
try:
    for r in ch17.trig_errors():
        print(f"{r['label']:18s} samples to ±{r['extent']:5.0f} cycles (θ up to {r['theta_max']:6.0f}):"
              f" error {r['error']:.2e} per unit of μ, {100 * r['bound_used']:5.1f}% of its bound")
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nThe fast sine's error shows only on a GPU: the simulator computes every sine in "
          "float64. What the course measured on an H200:")
    kept = ag.experiments.recorded(ch17.TRIG)
    for r in kept["rows"]:
        print(f"{r['label']:18s} samples to ±{r['extent']:5.0f} cycles (θ up to {r['theta_max']:6.0f}):"
              f" error {r['error']:.2e} per unit of μ, {100 * r['bound_used']:5.1f}% of its bound")

# %% [markdown]
# ## Predict: how far can the fast kernel be from the exact F^H·d?
#
# Before writing the fast kernel, put a number on its error. Take one voxel and `M` samples,
# and write `mu_sum` for the sum over the samples of `|rMu[m]| + |iMu[m]|`. Suppose every sample's
# θ has `|θ| ≤ theta_max`, where `theta_max` bounds `A` above as well (the sum of the magnitudes
# of θ's three parts, times 2π), and that a sine or a cosine at angle θ is off by at most
# `a + b·|θ|`. The facts you need:
#
# - a term of `rFhD` is `rMu·cos θ − iMu·sin θ`; an error of `e` in the cosine and in the sine
#   moves it by at most `(|rMu| + |iMu|)` times `e` (the same for `iFhD`);
# - θ is computed in float32 and is off by at most `γ_5` times `theta_max`; the slope of sine and
#   cosine is at most 1, so that error reaches the sine and cosine as is;
# - every term's two products and one difference, and the `M` additions of the terms in float32,
#   add at most `γ_(m+2)` times the sum of the terms' magnitudes, and a term's magnitude is at
#   most `|rMu| + |iMu|`;
#
# with `γ_k` as in Exercise 17.1.
#
# ## Exercise 17.2 · The error bound of F^H·d with approximate sine and cosine (2 points)
#
# Write `fhd_error_bound(m, mu_sum, theta_max, a, b)`: `m` a Python int (the samples), the others
# Python floats as above. Return the bound on `|rFhD[n] − exact|` the three facts give (one
# number). Roughly 4 lines. Then, **by hand first**: for the speed test's scan (20,011 samples, θ
# up to about 302, `mu_sum` = 20,011 if every `|rMu| + |iMu|` is 1), which part is largest with
# fast trigonometry, and which with libdevice's (`a = 2⁻²²`, `b = 0`)? Does fastmath change the
# bound by much?
#
# **What the check does.** The speed test's scan with fast and with libdevice's trigonometry,
# and 200 random sets hidden (up to 4 million samples, `theta_max` from 0.1 to 10⁴, `b` sometimes
# 0), each within a few float64 roundings of the exact value.

# %% nbgrader={"grade": false, "grade_id": "fhd_error_bound_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
def fhd_error_bound(m, mu_sum, theta_max, a, b):
    """The bound on |rFhD[n] − exact| with sine and cosine off by at most a + b·|θ|."""
    ### BEGIN SOLUTION
    u = 2.0 ** -24

    def gamma(k):
        return k * u / (1 - k * u)
    trig = a + b * theta_max                  # the sine's and cosine's own error
    argument = gamma(5) * theta_max           # θ's float32 error, passed on by cos and sin
    return mu_sum * (trig + argument) + gamma(m + 2) * mu_sum
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "fhd_error_bound_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch17.fhd_error_bound.check(fhd_error_bound)
### BEGIN HIDDEN TESTS
ag.problems.ch17.fhd_error_bound.check_hidden(fhd_error_bound)
### END HIDDEN TESTS

# %% [markdown]
# Your numbers for the speed test's scan:

# %%
fast = fhd_error_bound(20011, 20011.0, 302.0, 2.0 ** -21, 2.0 ** -22)
plain = fhd_error_bound(20011, 20011.0, 302.0, 2.0 ** -22, 0.0)
print(f"fast sin/cos: {fast:.3f}   libdevice: {plain:.3f}   (|F^H·d| is about "
      f"{math.sqrt(20011):.0f} for random phases)")

# %% [markdown]
# The worst case of the float32 sum is the largest part by far, with either trigonometry: the
# fast sine's error is about as large as the error θ already has in float32 at these angles.
# (Rounding errors of a long sum mostly cancel, so a real result is far closer than this bound;
# the bound is what can be promised for any order of additions.) The check of Exercise 17.3 uses
# the same three parts with each sample's own `A` instead of the largest.
#
# ## Exercise 17.3 · The samples in shared memory, chunk by chunk, with fast sin and cos (3 points)
#
# Write `fhd_chunked_kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD)` (arguments as in 17.1),
# compiled with `@cuda.jit(fastmath=True)`, one thread per voxel, that stages the samples in
# shared memory `CHUNK` at a time:
#
# - five shared arrays of `CHUNK` float32 values (`cuda.shared.array(CHUNK, float32)`: the size
#   must be a constant known when the kernel compiles, hence `CHUNK` above the kernel);
# - for each chunk starting at `base` (0, `CHUNK`, 2·`CHUNK`, … below `M`): the block's threads
#   copy its samples into the shared arrays, each thread `threadIdx.x`, `threadIdx.x + blockDim.x`,
#   … (the block may have more or fewer threads than `CHUNK`), **only the samples that exist**
#   (the last chunk is partial); a barrier; every thread adds the chunk's terms for its voxel;
#   a barrier before the next chunk's copies;
# - a thread past the last voxel still copies and reaches every barrier (a barrier that some
#   threads of the block never reach is undefined behaviour); only the final stores are guarded.
#
# Roughly 30 lines.
#
# **What the check does.** As 17.1, with blocks of 64 (32 and 96 hidden: more and fewer threads
# than a chunk of 64) and sizes where the chunk's tail matters: 20 voxels × 150 samples (two
# chunks and a tail of 22), 70 × 20, 1 × 5; hidden: 200 × 70, 1 × 200, two random. Judged within
# the bound of Exercise 17.2 with fast trigonometry's `a` and `b` (per sample, with its own `A`):
# an accurate kernel passes it too. In CPU mode the course records every shared-memory access
# and stops at a read of a value no barrier separates from its write.

# %% nbgrader={"grade": false, "grade_id": "fhd_chunked_solution", "locked": false, "schema_version": 3, "solution": true, "task": false}
CHUNK = 64          # samples per chunk


@cuda.jit(fastmath=True)
def fhd_chunked_kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
    ### BEGIN SOLUTION
    s_kx = cuda.shared.array(CHUNK, float32)
    s_ky = cuda.shared.array(CHUNK, float32)
    s_kz = cuda.shared.array(CHUNK, float32)
    s_r = cuda.shared.array(CHUNK, float32)
    s_i = cuda.shared.array(CHUNK, float32)
    n = cuda.grid(1)
    inside = n < x.size
    xn = x[n] if inside else float32(0.0)
    yn = y[n] if inside else float32(0.0)
    zn = z[n] if inside else float32(0.0)
    re = float32(0.0)
    im = float32(0.0)
    M = kx.size
    for base in range(0, M, CHUNK):
        for j in range(cuda.threadIdx.x, CHUNK, cuda.blockDim.x):
            if base + j < M:
                s_kx[j] = kx[base + j]
                s_ky[j] = ky[base + j]
                s_kz[j] = kz[base + j]
                s_r[j] = rMu[base + j]
                s_i[j] = iMu[base + j]
        cuda.syncthreads()
        for j in range(min(CHUNK, M - base)):
            t = TWO_PI * (s_kx[j] * xn + s_ky[j] * yn + s_kz[j] * zn)
            c = math.cos(t)
            s = math.sin(t)
            re += s_r[j] * c - s_i[j] * s
            im += s_i[j] * c + s_r[j] * s
        cuda.syncthreads()
    if inside:
        rFhD[n] = re
        iFhD[n] = im
    ### END SOLUTION


# %%
got = ch17.run_fhd(fhd_chunked_kernel, scan, threads=32)
print("within the fast bound:", ch17.within_bound(got, scan, fast=True))

# %% nbgrader={"grade": true, "grade_id": "fhd_chunked_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ag.problems.ch17.fhd_chunked.check(fhd_chunked_kernel)
### BEGIN HIDDEN TESTS
ag.problems.ch17.fhd_chunked.check_hidden(fhd_chunked_kernel)
### END HIDDEN TESTS

# %% [markdown]
# ## Measure: scatter, gather, chunks and fast trigonometry
#
# On a GPU, the next cell times the speed test's scan (64³ voxels, 20,011 samples) six ways or
# more: the scatter with atomics (on a sixty-fourth of the samples), the course's gather with
# accurate and with fast trigonometry, the course's chunked shared-memory kernel, one compiled
# kernel per constant-memory chunk (its compile time shown apart), and your two kernels. Each
# result is checked at 1024 voxels against the bound its trigonometry allows. **Predict first:**
# which is fastest, by how much is the scatter slower per pair, and how much does `fastmath` buy?
# In CPU mode it says that it needs a GPU and draws what the course's kernels took on an H200.

# %%
mine = {"gather (yours)": (fhd_gather_kernel, False),
        "chunked, fastmath=True (yours)": (fhd_chunked_kernel, True)}
try:
    results = ch17.measure(mine)
    for r in results:
        print(f"{r['label']:66s} {r['ms']:9.3f} ms {r['gflops']:8.0f} GFLOP/s"
              f"{'' if r['right'] else '   WRONG'}  {r['note']}")
    ag.experiments.steps(**ch17.chart(results)).show()
except ag.timing.NeedsGPU as why:
    print(why)
    print("\nWhat the course measured on an H200 with its own kernels:")
    ag.experiments.steps(**ch17.chart()).show()

# %% [markdown]
# ## Explain: where the time of F^H·d goes (2 points, graded by your instructor)
#
# In the cell below, in 5 to 10 sentences, with numbers from your bound (Exercise 17.2) and, if you
# ran on a GPU, from the measurements:
#
# 1. say why the scatter is slow and the gather is not, counting the atomic operations and the
#    stores of each for the speed test's scan;
# 2. say what the samples' chunks in shared memory (or constant memory) save, and why every
#    thread reading the same sample at the same time matters; and what Numba's
#    `cuda.const.array_like` would cost for a new scan;
# 3. say what `fastmath=True` changes in the compiled code, what it costs in accuracy (with
#    your bound's numbers: which part of the bound dominates?), and whether you would use it for
#    a reconstruction, and why.
#
# A full-mark answer puts a number on every claim and keeps what was measured apart from what was
# predicted. Studying alone: once `./aag grade` passes this chapter's auto-graded exercises,
# `ag.reveal("fhd_paths_answer")` shows a model answer to set yours against.

# %% [markdown] nbgrader={"grade": true, "grade_id": "fhd_paths_answer", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer (in the solutions only; the bound's numbers are computed, measured times are the
# learner's own).* (1) The speed test's scan has N = 262,144 voxels and M = 20,011 samples:
# 5.2·10⁹ pairs. The scatter does two atomic adds per pair, 1.05·10¹⁰ read-modify-writes of
# global memory, and all M threads add into the same N addresses, so each voxel's adds are
# serialized at the L2 cache; with only 20,011 threads it also leaves most of a 132-SM GPU idle.
# The gather does no atomics and 2N = 524,288 stores, keeps both sums in registers, and has
# 262,144 threads; its per-pair cost is the trigonometry and a dozen FLOPs, so it runs at many
# times the scatter's GFLOP/s (measured on the scatter's sixty-fourth of the samples). (2) In the
# gather every thread loads kx, ky, kz, rMu, iMu for the same m at the same time: five loads per
# pair from the L1 cache, against a dozen FLOPs. Staging a chunk in shared memory turns them into
# shared-memory reads of one address per warp, which are broadcast without bank conflicts, and
# reads each sample from global memory once per block instead of once per thread; constant
# memory would do the same through its broadcast cache. In Numba the constant-memory version
# needs one compiled kernel per chunk of at most ~3,000 samples: 7 compilations for this scan,
# each a fraction of a second, which is more than the kernels' run and must be paid again for
# every scan, since the samples are baked into the code. (3) fastmath replaces libdevice's
# inlined sinf/cosf (a polynomial after a careful argument reduction, with a stack array for large
# arguments) by FMUL.RZ by 1/(2π) and MUFU.SIN / MUFU.COS, three instructions for both (on the
# course's H200: the gather 23.5 ms with libdevice, 17.6 ms with fastmath, 6.6 ms chunked in shared
# memory with fastmath; constant memory's 7 kernels 95.9 ms, after 5.6 s of compiling). Their
# error is a + b·|θ| ≈ 2⁻²¹ + 2⁻²²·302 ≈ 7.2·10⁻⁵ at the largest θ, against under 2.4·10⁻⁷ for libdevice; with mu_sum = 20,011 the fast bound is 27.2 against 25.7
# for libdevice: the float32 summation part (γ_20013·20,011 ≈ 23.9) dominates both, and the
# argument's own float32 error (γ_5·302 ≈ 9·10⁻⁵ per term) is as large as the fast sine's. So for
# a reconstruction, whose data carry noise far above 10⁻⁴ relative, I would use fastmath, after
# checking the image error as PMPP §17.3 does; if the arguments grew much larger (finer
# grids), I would reduce θ in float64 or in turns before the fast sine.

# %% [markdown]
# ## Going further (not graded)
#
# - Store the samples of a chunk together, one struct of five values per sample (a `[CHUNK, 5]`
#   array), as PMPP §17.3 does for the constant cache: does the shared-memory version care?
# - Compute θ in turns instead of radians (`kx·x + ky·y + kz·z`, then `math.sin(TWO_PI * t)` with
#   `t` reduced by `t − round(t)` first): the fast sine's argument is then always small. What
#   happens to the bound's `b` part, and to the measured error?
# - Give each thread two or four voxels: the sample loaded once from shared memory then serves
#   several sums (chapter 6's thread coarsening).
# - Write the μ kernel that comes before (`rMu + i·iMu = (rPhi − i·iPhi)·(rD + i·iD)`) and fuse
#   it into the chunk loads.
#
# **Reading:** PMPP ch. 17: §17.1 (background: non-Cartesian k-space), §17.2 (iterative
# reconstruction, the conjugate gradient and why F^H·d dominates), §17.3 (computing F^H·d: the
# scatter, loop fission and interchange, registers, constant memory in chunks, the memory layout
# for the constant cache, hardware trigonometry and its accuracy). Stone et al., "Accelerating
# advanced MRI reconstructions on GPUs" (2008), where the chapter comes from.
#
# **On AMD (HIP):** the kernels run unchanged. AMD GPUs have hardware sine and cosine too (taking
# the angle in turns, as NVIDIA's does); what `fastmath` compiles to under numba-hip depends on
# its math library, so read the compiled code before trusting the bound here.
