"""Chapter 26's reference kernels: attention ``O = softmax(scale · Q Kᵀ + mask) V`` over arrays of
shape ``(bh, n, d)`` (bh = batch · heads), float32 or float16 inputs, float32 output, with an
optional causal mask (query i sees keys 0..i).

- :func:`reference_attention_naive`: one thread per query row; the row of scores is written to a
  global ``(bh, n, n)`` scratch array (the materialised S), then a pass for the maximum, one for
  the exponentials and their sum (written back as P), one for P·V.
- :func:`reference_flash_attention`: FlashAttention's forward pass (Dao et al., 2022) in plain
  Numba: one block per (query tile, bh), one thread per query row holding its q row and its
  output row in local arrays, the key and value tiles staged in shared memory (float32) by all
  the block's threads, the online softmax (running maximum m and sum l, the accumulator
  rescaled by exp(m_old − m_new) when the maximum grows), and with the causal mask the tiles
  past the block's last row skipped.
- :func:`reference_attention_triton` hands out the Triton kernel of :mod:`.triton_reference`
  (imported on first use: importing the course never imports Triton).
- :func:`torch_sdpa`: PyTorch's ``scaled_dot_product_attention`` on the GPU with a chosen
  backend (math or flash), for the measuring cell only; None where PyTorch is not installed.

Launch: naive ``kernel[cdiv(n, t), t](q, k, v, scale, causal, s, o)`` with ``blocks`` over
bh · n rows; flash ``kernel[(cdiv(n, t), bh), t](q, k, v, scale, causal, o)``.
"""

from __future__ import annotations

import math

from autograder.problems.kit.kernels import KernelCache

TILE = 32           # keys per shared-memory tile of the flash kernel
D_MAX = 128         # the largest head dimension the kernels hold per thread

cuda = float32 = None      # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32")


@_kernels.lazy
def reference_attention_naive():
    @cuda.jit
    def attention_naive_reference(q, k, v, scale, causal, s, o):
        r = cuda.grid(1)
        bh_count, n, d = q.shape
        if r >= bh_count * n:
            return
        bh = r // n
        i = r % n
        keys = i + 1 if causal else n
        m = float32(-math.inf)
        for j in range(keys):                   # S[i, j] = scale · q_i · k_j, written out
            acc = float32(0.0)
            for t in range(d):
                acc += float32(q[bh, i, t]) * float32(k[bh, j, t])
            acc *= scale
            s[bh, i, j] = acc
            m = max(m, acc)
        total = float32(0.0)
        for j in range(keys):                   # P[i, j] = exp(S[i, j] − m), and its sum
            p = math.exp(s[bh, i, j] - m)
            s[bh, i, j] = p
            total += p
        for t in range(d):                      # O[i] = P[i] · V / sum
            acc = float32(0.0)
            for j in range(keys):
                acc += s[bh, i, j] * float32(v[bh, j, t])
            o[bh, i, t] = acc / total
    return attention_naive_reference


@_kernels.lazy
def reference_flash_attention():
    @cuda.jit
    def flash_attention_reference(q, k, v, scale, causal, o):
        bh = cuda.blockIdx.y
        tx = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + tx
        n = q.shape[1]
        d = q.shape[2]
        k_tile = cuda.shared.array((TILE, D_MAX), float32)
        v_tile = cuda.shared.array((TILE, D_MAX), float32)
        q_row = cuda.local.array(D_MAX, float32)
        acc = cuda.local.array(D_MAX, float32)
        live = i < n
        for t in range(d):
            q_row[t] = float32(q[bh, i, t]) * scale if live else float32(0.0)
            acc[t] = float32(0.0)
        m = float32(-math.inf)
        total = float32(0.0)
        end = n                                 # keys any row of this block can see
        if causal:
            end = min(n, (cuda.blockIdx.x + 1) * cuda.blockDim.x)
        for start in range(0, end, TILE):
            for e in range(tx, TILE * d, cuda.blockDim.x):     # all threads stage the tiles
                j = e // d
                t = e % d
                if start + j < n:
                    k_tile[j, t] = float32(k[bh, start + j, t])
                    v_tile[j, t] = float32(v[bh, start + j, t])
            cuda.syncthreads()
            if live:
                stop = min(TILE, n - start)
                if causal:
                    stop = min(stop, i - start + 1)
                for j in range(stop):
                    s = float32(0.0)
                    for t in range(d):
                        s += q_row[t] * k_tile[j, t]
                    if s > m:                   # a new maximum: rescale what is summed so far
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
                o[bh, i, t] = acc[t] / total
    return flash_attention_reference


def reference_attention_triton():
    """The course's Triton attention launcher, ``run(q, k, v, scale, causal, o)``
    (:mod:`autograder.problems.ch26.triton_reference`, imported on first use)."""
    from autograder.problems.ch26 import triton_reference
    return triton_reference.attention


def torch_sdpa(backend: str):
    """PyTorch's ``scaled_dot_product_attention`` restricted to ``backend`` as ``run(q, k, v,
    scale, causal, o)`` over float16 device arrays, or None where PyTorch with a GPU is not
    installed (it is never a dependency of the course). "math": the inputs converted to float32
    first (a copy of 3·n·d values, microseconds), so that S, the softmax and P V are computed in
    float32, the precision of the course's Numba kernels; "flash": FlashAttention-2's kernel on
    the float16 inputs (tensor cores), its float16 output widened into ``o``."""
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None
    which = {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION}[backend]

    def run(q, k, v, scale, causal, o):
        tq, tk, tv, to = (torch.as_tensor(a, device="cuda") for a in (q, k, v, o))
        if backend == "math":
            tq, tk, tv = tq.float(), tk.float(), tv.float()
        with sdpa_kernel(which):
            out = torch.nn.functional.scaled_dot_product_attention(
                tq[None], tk[None], tv[None], is_causal=bool(causal), scale=float(scale))
        to.copy_(out[0].float())
    return run
