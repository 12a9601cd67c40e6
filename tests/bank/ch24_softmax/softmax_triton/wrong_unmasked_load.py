# bank: loads the whole block without a mask (the padding lanes read past the row: into the next row, and past the end of x for the last one) and stores under the mask; right only when cols is a power of two; it must lose the points.
# naive: allclose
import triton
import triton.language as tl
from autograder.machine.triton_bridge import view


@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < cols
    x = tl.load(x_ptr + row * cols + offs)
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)
    e = tl.exp(x - m)
    d = tl.sum(e, axis=0)
    tl.store(y_ptr + row * cols + offs, e / tl.where(d > 0.0, d, 1.0), mask=inside)


def softmax_triton(x, y):
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    softmax_triton_kernel[(rows,)](view(x), view(y), cols, BLOCK=BLOCK)
