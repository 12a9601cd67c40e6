# bank: loads the key and value tiles without a mask on the keys (only on the columns): the last tile reads past the end of k and v when n is not a multiple of 32 (CPU mode's fenced copy faults; on a GPU it reads the next head or faults); it must lose its points.
# naive: none
import triton
import triton.language as tl

from autograder.machine.triton_bridge import view


@triton.jit
def attention_triton_kernel(q_ptr, k_ptr, v_ptr, o_ptr, n, d, scale, CAUSAL: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
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
                     mask=cols[:, None] < d, other=0.0)
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
                     mask=cols[None, :] < d, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), vt)
        m = m_new
    tl.store(o_ptr + base + rows[:, None] * d + cols[None, :], acc / total[:, None],
             mask=(rows[:, None] < n) & (cols[None, :] < d))


def attention_triton(q, k, v, scale, causal, o):
    bh, n, d = q.shape
    grid = (triton.cdiv(n, 64), bh)
    attention_triton_kernel[grid](view(q), view(k), view(v), view(o), n, d, scale,
                                  CAUSAL=bool(causal), BLOCK_M=64, BLOCK_N=32,
                                  BLOCK_D=max(16, triton.next_power_of_2(d)))
