"""Chapter 25's reference kernels: LayerNorm forward with one warp per row (Welford within each
lane, Chan's merge across lanes by shuffles, normalise and affine fused), the two-pass LayerNorm
(the mean first, then the mean of squared deviations: the row read three times), the textbook
one-pass LayerNorm (E[x²] − E[x]², which the chapter breaks on purpose), RMSNorm, and the
LayerNorm backward pass for the input gradient; :func:`reference_layernorm_triton` hands out the
Triton LayerNorm of :mod:`.triton_reference`. Every Numba kernel is written for any warp size (32
on NVIDIA, 64 on AMD and in CPU mode's portability runs) and strides over the rows with its warps.

Launch: ``kernel[blocks, threads](...)`` with ``threads`` a multiple of the warp size; warp
``w = (blockIdx.x · blockDim.x + threadIdx.x) // warpsize`` takes rows w, w + (all warps), ...
"""

from __future__ import annotations

import math

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = uint64 = None      # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32", "uint64")


@_kernels.lazy
def reference_layernorm():
    @cuda.jit
    def layernorm_reference(x, gamma, beta, eps, y):
        lane = cuda.threadIdx.x % cuda.warpsize
        warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
        warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
        mask = ~uint64(0) >> (64 - cuda.warpsize)          # every lane of the warp, 32 or 64
        rows, n = x.shape
        for row in range(warp, rows, warps):
            # Welford over this lane's elements: count, mean, M2 (sum of squared deviations).
            count = float32(0.0)
            mean = float32(0.0)
            m2 = float32(0.0)
            for i in range(lane, n, cuda.warpsize):
                v = x[row, i]
                count += float32(1.0)
                d = v - mean
                mean += d / count
                m2 += d * (v - mean)
            # Chan, Golub and LeVeque: merge two (count, mean, M2), by a butterfly of shuffles.
            offset = cuda.warpsize // 2
            while offset > 0:
                c_b = cuda.shfl_xor_sync(mask, count, offset)
                mean_b = cuda.shfl_xor_sync(mask, mean, offset)
                m2_b = cuda.shfl_xor_sync(mask, m2, offset)
                total = count + c_b
                if total > float32(0.0):
                    d = mean_b - mean
                    mean += d * (c_b / total)
                    m2 += m2_b + d * d * (count * c_b / total)
                    count = total
                offset //= 2
            rstd = float32(1.0) / math.sqrt(m2 / float32(n) + eps)
            for i in range(lane, n, cuda.warpsize):
                y[row, i] = (x[row, i] - mean) * rstd * gamma[i] + beta[i]
    return layernorm_reference


@_kernels.lazy
def two_pass_layernorm():
    @cuda.jit
    def layernorm_two_pass(x, gamma, beta, eps, y):
        lane = cuda.threadIdx.x % cuda.warpsize
        warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
        warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
        mask = ~uint64(0) >> (64 - cuda.warpsize)
        rows, n = x.shape
        for row in range(warp, rows, warps):
            s = float32(0.0)
            for i in range(lane, n, cuda.warpsize):
                s += x[row, i]
            offset = cuda.warpsize // 2
            while offset > 0:
                s += cuda.shfl_xor_sync(mask, s, offset)
                offset //= 2
            mean = s / float32(n)
            q = float32(0.0)
            for i in range(lane, n, cuda.warpsize):         # the row read a second time
                d = x[row, i] - mean
                q += d * d
            offset = cuda.warpsize // 2
            while offset > 0:
                q += cuda.shfl_xor_sync(mask, q, offset)
                offset //= 2
            rstd = float32(1.0) / math.sqrt(q / float32(n) + eps)
            for i in range(lane, n, cuda.warpsize):
                y[row, i] = (x[row, i] - mean) * rstd * gamma[i] + beta[i]
    return layernorm_two_pass


@_kernels.lazy
def textbook_layernorm():
    """E[x²] − E[x]² in float32: one pass, fast, and wrong when |mean| ≫ std (the chapter's
    "break it")."""
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
                v = x[row, i]
                s += v
                s2 += v * v
            offset = cuda.warpsize // 2
            while offset > 0:
                s += cuda.shfl_xor_sync(mask, s, offset)
                s2 += cuda.shfl_xor_sync(mask, s2, offset)
                offset //= 2
            mean = s / float32(n)
            var = s2 / float32(n) - mean * mean
            rstd = float32(1.0) / math.sqrt(var + eps)
            for i in range(lane, n, cuda.warpsize):
                y[row, i] = (x[row, i] - mean) * rstd * gamma[i] + beta[i]
    return layernorm_textbook


@_kernels.lazy
def reference_rmsnorm():
    @cuda.jit
    def rmsnorm_reference(x, gamma, eps, y):
        lane = cuda.threadIdx.x % cuda.warpsize
        warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
        warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
        mask = ~uint64(0) >> (64 - cuda.warpsize)
        rows, n = x.shape
        for row in range(warp, rows, warps):
            s2 = float32(0.0)
            for i in range(lane, n, cuda.warpsize):
                v = x[row, i]
                s2 += v * v
            offset = cuda.warpsize // 2
            while offset > 0:
                s2 += cuda.shfl_xor_sync(mask, s2, offset)
                offset //= 2
            r = float32(1.0) / math.sqrt(s2 / float32(n) + eps)
            for i in range(lane, n, cuda.warpsize):
                y[row, i] = x[row, i] * r * gamma[i]
    return rmsnorm_reference


@_kernels.lazy
def reference_layernorm_backward():
    @cuda.jit
    def layernorm_backward_reference(dy, x, gamma, mean, rstd, dx):
        lane = cuda.threadIdx.x % cuda.warpsize
        warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
        warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
        mask = ~uint64(0) >> (64 - cuda.warpsize)
        rows, n = x.shape
        for row in range(warp, rows, warps):
            mu = mean[row]
            r = rstd[row]
            a = float32(0.0)                # Σ γ·dy
            b = float32(0.0)                # Σ γ·dy·x̂
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
                xhat = (x[row, i] - mu) * r
                dx[row, i] = r * (gamma[i] * dy[row, i] - a - xhat * b)
    return layernorm_backward_reference


def reference_layernorm_triton():
    """The course's Triton LayerNorm launcher, ``run(x, gamma, beta, eps, y)``
    (:mod:`autograder.problems.ch25.triton_reference`, imported here on first use: importing the
    course never imports Triton)."""
    from autograder.problems.ch25 import triton_reference
    return triton_reference.layernorm


def torch_layernorm():
    """PyTorch's fused LayerNorm on the GPU as ``run(x, gamma, beta, eps, y)`` over device arrays,
    or None where PyTorch with a GPU is not installed (it is never a dependency of the course)."""
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None

    def run(x, gamma, beta, eps, y):
        tx, tg, tb, ty = (torch.as_tensor(a, device="cuda") for a in (x, gamma, beta, y))
        ty.copy_(torch.nn.functional.layer_norm(tx, (tx.shape[1],), tg, tb, float(eps)))
    return run


def torch_rmsnorm():
    """``torch.nn.functional.rms_norm`` as ``run(x, gamma, eps, y)``, or None (see
    :func:`torch_layernorm`; rms_norm needs PyTorch 2.4 or later)."""
    try:
        import torch
        if not (torch.cuda.is_available() and hasattr(torch.nn.functional, "rms_norm")):
            return None
    except Exception:
        return None

    def run(x, gamma, eps, y):
        tx, tg, ty = (torch.as_tensor(a, device="cuda") for a in (x, gamma, y))
        ty.copy_(torch.nn.functional.rms_norm(tx, (tx.shape[1],), tg, float(eps)))
    return run
