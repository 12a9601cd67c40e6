# bank: the style of Triton's tutorial: the scale times log2(e) folded into one constant, exp2 instead of exp, query and key tiles of 64, k loaded row-major and transposed with tl.trans, every key tile walked with the causal mask applied in all of them; correct, full marks.
# naive: none
import triton
import triton.language as tl

from autograder.machine.triton_bridge import view


@triton.jit
def attention_triton_kernel(q_ptr, k_ptr, v_ptr, o_ptr, n, d, scale, CAUSAL: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    x = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = x * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_D)
    in_d = cols[None, :] < d
    q = tl.load(q_ptr + head * n * d + rows[:, None] * d + cols[None, :],
                mask=(rows[:, None] < n) & in_d, other=0.0)
    qk_scale = scale * 1.44269504
    m = tl.zeros([BLOCK_M], tl.float32) - float("inf")
    total = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    for start in range(0, n, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        offs = head * n * d + keys[:, None] * d + cols[None, :]
        kb = tl.load(k_ptr + offs, mask=(keys[:, None] < n) & in_d, other=0.0)
        vb = tl.load(v_ptr + offs, mask=(keys[:, None] < n) & in_d, other=0.0)
        s = tl.dot(q, tl.trans(kb)) * qk_scale
        ok = keys[None, :] < n
        if CAUSAL:
            ok = ok & (keys[None, :] <= rows[:, None])
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        alpha = tl.math.exp2(m - m_new)
        p = tl.math.exp2(s - m_new[:, None])
        total = total * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), vb)
        m = m_new
    out = acc / total[:, None]
    tl.store(o_ptr + head * n * d + rows[:, None] * d + cols[None, :], out,
             mask=(rows[:, None] < n) & in_d)


def attention_triton(q, k, v, scale, causal, o):
    bh, n, d = q.shape
    block_d = max(16, triton.next_power_of_2(d))
    attention_triton_kernel[(triton.cdiv(n, 64), bh)](view(q), view(k), view(v), view(o), n, d,
                                                      scale, CAUSAL=causal == 1, BLOCK_M=64,
                                                      BLOCK_N=64, BLOCK_D=block_d)
