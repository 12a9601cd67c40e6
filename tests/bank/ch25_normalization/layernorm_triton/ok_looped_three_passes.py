# bank: the layout of Triton's LayerNorm tutorial: one program per row walking it in blocks of at most 1024 columns, a pass for the mean, one for the squared deviations (padded lanes zeroed), one to normalise; the row read three times (from the cache after the first), correct, full marks. (Blocks of 64 columns were correct too, but at 39% of the course's kernel on the H200 they lost the speed points.)
# naive: none
import triton
import triton.language as tl

from autograder.machine.triton_bridge import view


@triton.jit
def _layernorm_fwd(X, W, B, Y, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * N
    Y += row * N
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        _mean += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        tl.store(Y + cols, x_hat * w + b, mask=mask)


def layernorm_triton(x, gamma, beta, eps, y):
    rows, n = x.shape
    block = min(1024, triton.next_power_of_2(n))
    _layernorm_fwd[(rows,)](view(x), view(gamma), view(beta), view(y), n, eps,
                            BLOCK_SIZE=block, num_warps=4)
