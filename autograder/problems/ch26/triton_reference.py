"""Chapter 26's course Triton kernel: FlashAttention's forward pass, one program per (query tile,
head), as in Triton's "Fused Attention" tutorial and FlashAttention-2 (Dao, 2023).

This module imports Triton, so nothing imports it when the course loads: exercise 26.3's
reference and the notebook's comparison reach it through
:func:`autograder.problems.ch26.references.reference_attention_triton`, on first use.

A program loads its ``BLOCK_M`` query rows once, then walks the keys in tiles of ``BLOCK_N``:
``tl.dot`` of the float16 tiles gives the scores in float32 (tensor cores on a GPU), the masked
entries (past n, and with the causal mask past the diagonal) are set to −inf, the running maximum
and sum are updated and the accumulator rescaled, and the weights, rounded to the inputs' float16,
multiply the value tile in a second ``tl.dot``. With the causal mask the loop stops at the tile
holding the program's last row.

:func:`attention` is the launcher: ``attention(q, k, v, scale, causal, o)`` on the course's device
arrays (a Numba device array on a GPU, a CPU-mode one in Triton's interpreter).
"""

from __future__ import annotations

import triton
import triton.language as tl

from autograder.machine.triton_bridge import view

BLOCK_M = 64        # query rows per program
BLOCK_N = 32        # keys per tile


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, n, d, scale, CAUSAL: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    tile = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * n * d       # bh · n · d may pass 2^31
    rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + base + rows[:, None] * d + cols[None, :],
                mask=(rows[:, None] < n) & (cols[None, :] < d), other=0.0)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    end = n
    if CAUSAL:
        end = tl.minimum(n, (tile + 1) * BLOCK_M)
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
        acc = acc * alpha[:, None] + tl.dot(p.to(vt.dtype), vt)
        m = m_new
    tl.store(o_ptr + base + rows[:, None] * d + cols[None, :], acc / total[:, None],
             mask=(rows[:, None] < n) & (cols[None, :] < d))


def attention(q, k, v, scale, causal, o):
    """The course's attention in Triton: ``o = softmax(scale · q kᵀ (+ causal mask)) v`` per head
    of ``q``, ``k``, ``v`` (bh, n, d) float16, ``o`` float32."""
    bh, n, d = q.shape
    grid = (triton.cdiv(n, BLOCK_M), bh)
    attention_kernel[grid](view(q), view(k), view(v), view(o), n, d, float(scale),
                           CAUSAL=bool(causal), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                           BLOCK_D=max(16, triton.next_power_of_2(d)), num_warps=4)
