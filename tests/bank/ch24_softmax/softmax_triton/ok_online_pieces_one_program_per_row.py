# bank: one program per row, the row read in pieces of 1,024 columns: a running (m, d) merged piece by piece with the online rule (m measured from 0 while it is -inf), then a second pass writing y; any row length; correct, full marks.
# naive: none
import triton
import triton.language as tl
from autograder.machine.triton_bridge import view


@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, rows, cols, PIECE: tl.constexpr):
    offs = tl.arange(0, PIECE)
    row = tl.program_id(0)
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
    softmax_triton_kernel[(rows,)](view(x), view(y), rows, cols, PIECE=1024)
