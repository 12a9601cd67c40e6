# bank: a right kernel launched with a fixed block of 128 columns and no loop: rows of up to 128 (the visible ones) are right, longer rows keep the statistics of their first 128 columns and the rest of y unwritten; the hidden cases have rows of 215; it must lose the points.
# naive: none
import triton
import triton.language as tl

from autograder.machine.triton_bridge import view

BLOCK = 128


@triton.jit
def layernorm_triton_kernel(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) / n + eps)
    gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0)
    beta = tl.load(beta_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, d * rstd * gamma + beta, mask=mask)


def layernorm_triton(x, gamma, beta, eps, y):
    rows, n = x.shape
    layernorm_triton_kernel[(rows,)](view(x), view(gamma), view(beta), view(y), n, eps,
                                     BLOCK=BLOCK)
