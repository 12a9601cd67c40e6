# bank: the notebook's kernel: one program per row, the row in one block loaded with other=-inf, tl.max then tl.sum, a fully masked row measured from 0 and written as 0, BLOCK the next power of two; correct, full marks.
# naive: none
import triton
import triton.language as tl
from autograder.machine.triton_bridge import view


@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=inside, other=-float("inf"))
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)
    e = tl.exp(x - m)
    d = tl.sum(e, axis=0)
    tl.store(y_ptr + row * cols + offs, e / tl.where(d > 0.0, d, 1.0), mask=inside)


def softmax_triton(x, y):
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    softmax_triton_kernel[(rows,)](view(x), view(y), cols, BLOCK=BLOCK,
                                   num_warps=max(1, min(16, BLOCK // 512)))
