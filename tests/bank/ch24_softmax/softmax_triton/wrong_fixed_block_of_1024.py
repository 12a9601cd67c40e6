# bank: a fixed BLOCK of 1024 with the mask against BLOCK's columns: rows of up to 1024 values are right (every visible case), a longer row is normalised over its first 1024 values and the rest never written; it must lose the points.
# naive: allclose
import triton
import triton.language as tl
from autograder.machine.triton_bridge import view

BLOCK = 1024


@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < tl.minimum(cols, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=inside, other=-float("inf"))
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)
    e = tl.exp(x - m)
    d = tl.sum(e, axis=0)
    tl.store(y_ptr + row * cols + offs, e / tl.where(d > 0.0, d, 1.0), mask=inside)


def softmax_triton(x, y):
    rows, cols = x.shape
    softmax_triton_kernel[(rows,)](view(x), view(y), cols, BLOCK=BLOCK, num_warps=4)
