"""Chapter 27's course Triton kernel: packed int4 weights times a small batch of activations.

This module imports Triton, so nothing imports it when the course loads: exercise 27.4's
reference and the notebook's comparison reach it through
:func:`autograder.problems.ch27.references.reference_int4_triton`, on first use.

:func:`int4_matmul_kernel` runs one program per (activation row b, block of BLOCK_N output rows):
it walks the row's bytes BLOCK_K columns (BLOCK_K / 2 bytes) at a time, splits each byte into its
low nibble (even column) and high nibble (odd column), subtracts the offset 8, multiplies by the
scale of the column's group and by the even and odd activations, and adds the products of each
output row with ``tl.sum``. The grid's first axis is b, so the programs that share a block of
weights run side by side and all but the first read it from L2.

:func:`int4_matmul` is the launcher: ``int4_matmul(packed, scales, x, group, y)`` on the course's
device arrays (a Numba device array on a GPU, a CPU-mode one in Triton's interpreter).
"""

from __future__ import annotations

import triton
import triton.language as tl

from autograder.machine.triton_bridge import view

BLOCK_N = 32        # output rows a program computes
BLOCK_K = 128       # columns per step (64 bytes of each of BLOCK_N rows)


@triton.jit
def int4_matmul_kernel(p_ptr, s_ptr, x_ptr, y_ptr, N, K, G,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    b = tl.program_id(0)
    rows = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < N
    nbytes = (K + 1) // 2
    ngroups = (K + G - 1) // G
    p_rows = p_ptr + rows.to(tl.int64)[:, None] * nbytes      # N · K / 2 may pass 2^31
    s_rows = s_ptr + rows[:, None] * ngroups
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, nbytes, BLOCK_K // 2):
        j = start + tl.arange(0, BLOCK_K // 2)                 # byte j: columns 2j and 2j + 1
        ok = row_ok[:, None] & (j < nbytes)[None, :]
        byte = tl.load(p_rows + j[None, :], mask=ok, other=0).to(tl.int32)
        s = tl.load(s_rows + (2 * j // G)[None, :], mask=ok, other=0.0).to(tl.float32)
        x0 = tl.load(x_ptr + b * K + 2 * j, mask=2 * j < K, other=0.0).to(tl.float32)
        x1 = tl.load(x_ptr + b * K + 2 * j + 1, mask=2 * j + 1 < K, other=0.0).to(tl.float32)
        w0 = ((byte & 15) - 8).to(tl.float32) * s
        w1 = ((byte >> 4) - 8).to(tl.float32) * s
        acc += tl.sum(w0 * x0[None, :] + w1 * x1[None, :], axis=1)
    tl.store(y_ptr + b * N + rows, acc, mask=row_ok)


def int4_matmul(packed, scales, x, group, y, block_n: int = BLOCK_N, block_k: int = BLOCK_K):
    """The course's int4 product in Triton: ``y[b, n] = Σ_k q[n, k] · s[n, k // group] · x[b, k]``
    for ``packed`` (N, ceil(K / 2)) uint8, ``scales`` (N, ceil(K / group)) float16, ``x`` (B, K)
    float16 and ``y`` (B, N) float32."""
    n = packed.shape[0]
    batch, k = x.shape
    grid = (batch, triton.cdiv(n, block_n))
    int4_matmul_kernel[grid](view(packed), view(scales), view(x), view(y), n, k, int(group),
                             BLOCK_N=block_n, BLOCK_K=block_k, num_warps=4)
