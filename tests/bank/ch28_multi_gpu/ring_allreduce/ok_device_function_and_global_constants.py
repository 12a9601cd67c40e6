# bank: a ring whose kernel calls a @cuda.jit device function and reads global constants (a block size, numba's float32), the reduce-scatter and all-gather written as one loop over 2(n - 1) steps with wait_for on both neighbours; it must get full marks.
# naive: none
import math

from numba import float32

BLOCK = 96


@cuda.jit(device=True)
def plus(a, b):
    return float32(a) + float32(b)


@cuda.jit
def add_into(dst, src):
    i = cuda.grid(1)
    if i < dst.shape[0]:
        dst[i] = plus(dst[i], src[i])


def ring_allreduce(ranks):
    n = len(ranks)
    m = ranks[0].buf.shape[0]
    for step in range(2 * (n - 1)):
        gather = step >= n - 1
        s = step - (n - 1) if gather else step
        for r in ranks:
            nxt = ranks[(r.index + 1) % n]
            k = (r.index + 1 - s) % n if gather else (r.index - s) % n
            lo, hi = k * m // n, (k + 1) * m // n
            r.send(r.buf[lo:hi], to=nxt, into=nxt.buf[lo:hi] if gather else None)
        for r in ranks:
            prev = ranks[(r.index - 1) % n]
            r.wait_for(prev)
            if not gather:
                k = (prev.index - s) % n
                lo, hi = k * m // n, (k + 1) * m // n
                r.launch(add_into, math.ceil((hi - lo) / BLOCK), BLOCK, r.buf[lo:hi],
                         r.recv[:hi - lo])
        for r in ranks:
            r.wait_for(ranks[(r.index + 1) % n])
