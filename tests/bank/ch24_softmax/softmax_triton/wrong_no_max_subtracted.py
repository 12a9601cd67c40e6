# bank: the textbook formula exp(x) / sum(exp(x)) without the maximum: right for the small values of a quick test, NaN (inf / inf) for rows with values above 88.7, and the checks' offsets go to 1e4; it must lose the points.
# naive: allclose
import triton
import triton.language as tl
from autograder.machine.triton_bridge import view


@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=inside, other=-float("inf"))
    e = tl.exp(x)
    d = tl.sum(e, axis=0)
    tl.store(y_ptr + row * cols + offs, e / tl.where(d > 0.0, d, 1.0), mask=inside)


def softmax_triton(x, y):
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    softmax_triton_kernel[(rows,)](view(x), view(y), cols, BLOCK=BLOCK)
