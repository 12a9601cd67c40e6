"""Chapter 25's course Triton kernels: LayerNorm forward, one program per row.

This module imports Triton, so nothing imports it when the course loads: exercise 25.4's
reference and the notebook's comparison reach it through
:func:`autograder.problems.ch25.references.reference_layernorm_triton`, on first use.

- :func:`layernorm_row_kernel` holds the whole row in one block (rows up to :data:`MAX_FUSED`
  columns): one read of ``x``, the mean by ``tl.sum``, the deviations with the padded lanes set to
  0 before they are squared, their mean, ``tl.rsqrt``, and the affine step.
- :func:`layernorm_looped_kernel` walks longer rows in blocks of :data:`LOOP_BLOCK` columns: a
  pass for the mean, one for the squared deviations, one to normalise (the row read three times,
  the second and third mostly from L2), as Triton's own LayerNorm tutorial does.

:func:`layernorm` is the launcher: ``layernorm(x, gamma, beta, eps, y)`` on the course's device
arrays (a Numba device array on a GPU, a CPU-mode one in Triton's interpreter).
"""

from __future__ import annotations

import triton
import triton.language as tl

from autograder.machine.triton_bridge import view

MAX_FUSED = 8192      # columns a program holds at once (32 KiB of float32, 16 a thread at 16 warps)
LOOP_BLOCK = 4096     # the column block of the looped kernel


@triton.jit
def layernorm_row_kernel(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)          # rows · n may pass 2^31 elements
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)            # a padded lane's x − mean is −mean: zero it
    var = tl.sum(d * d, axis=0) / n
    rstd = tl.rsqrt(var + eps)
    g = tl.load(gamma_ptr + cols, mask=mask, other=0.0)
    b = tl.load(beta_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, d * rstd * g + b, mask=mask)


@triton.jit
def layernorm_looped_kernel(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n
    y_row = y_ptr + row * n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n, other=0.0)
    mean = tl.sum(acc, axis=0) / n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n
        d = tl.where(mask, tl.load(x_row + cols, mask=mask, other=0.0) - mean, 0.0)
        acc += d * d
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / n + eps)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        g = tl.load(gamma_ptr + cols, mask=mask, other=0.0)
        b = tl.load(beta_ptr + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, (x - mean) * rstd * g + b, mask=mask)


def warps_for(block: int) -> int:
    """Warps per program: about 16 columns per thread, 1 to 16 warps."""
    return min(16, max(1, block // 512))


def layernorm(x, gamma, beta, eps, y, block: int | None = None):
    """The course's LayerNorm in Triton: ``y = (x − μ) / sqrt(σ² + ε) · γ + β`` per row of ``x``
    (rows, n), one program per row. ``block`` (tests): the looped kernel with that column block."""
    rows, n = x.shape
    args = (view(x), view(gamma), view(beta), view(y), n, float(eps))
    if block is None and n <= MAX_FUSED:
        fused = triton.next_power_of_2(n)
        layernorm_row_kernel[(rows,)](*args, BLOCK=fused, num_warps=warps_for(fused))
    else:
        block = block or LOOP_BLOCK
        layernorm_looped_kernel[(rows,)](*args, BLOCK=block, num_warps=warps_for(block))
