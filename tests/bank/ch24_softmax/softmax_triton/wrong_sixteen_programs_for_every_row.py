# bank: right values (pieces of 64 columns merged with the online rule, a grid-stride loop over the rows), but only 16 programs for every row: on the H200 the 16,384 × 4,096 speed test took 47.5 ms against the course's 0.132 ms (0.3%, 5× NumPy), so it must lose the speed points.
# naive: none
# gpu-only: yes
import triton
import triton.language as tl
from autograder.machine.triton_bridge import view


@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, rows, cols, PIECE: tl.constexpr):
    offs = tl.arange(0, PIECE)
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        base = x_ptr + row * cols
        m = -float("inf")
        d = 0.0
        for start in range(0, cols, PIECE):
            inside = start + offs < cols
            v = tl.load(base + start + offs, mask=inside, other=-float("inf"))
            m_new = tl.maximum(m, tl.max(v, axis=0))
            ref = tl.where(m_new == -float("inf"), 0.0, m_new)
            d = d * tl.exp(m - ref) + tl.sum(tl.exp(v - ref), axis=0)
            m = m_new
        ref = tl.where(m == -float("inf"), 0.0, m)
        scale = tl.where(d > 0.0, 1.0 / tl.where(d > 0.0, d, 1.0), 0.0)
        for start in range(0, cols, PIECE):
            inside = start + offs < cols
            v = tl.load(base + start + offs, mask=inside, other=-float("inf"))
            tl.store(y_ptr + row * cols + start + offs, tl.exp(v - ref) * scale, mask=inside)


def softmax_triton(x, y):
    rows, cols = x.shape
    softmax_triton_kernel[(min(rows, 16),)](view(x), view(y), rows, cols, PIECE=64)
