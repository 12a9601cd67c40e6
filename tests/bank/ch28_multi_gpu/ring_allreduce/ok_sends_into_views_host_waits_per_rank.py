# bank: a ring that names every receive view itself (send(..., into=to.recv[:length])), uses ranks.chunk, a 256-thread grid-stride kernel, and orders each step by the host waiting for each rank (r.synchronize()) rather than by events; right for every rank count: it must get full marks.
# naive: none
@cuda.jit
def accumulate(dst, src, length):
    i = cuda.grid(1)
    while i < length:
        dst[i] = dst[i] + src[i]
        i += cuda.gridsize(1)


def ring_allreduce(ranks):
    n = ranks.size
    for step in range(n - 1):
        for r in ranks:
            to = ranks[(r.index + 1) % n]
            lo, hi = ranks.chunk((r.index - step) % n)
            r.send(r.buf[lo:hi], to=to, into=to.recv[:hi - lo])
        for r in ranks:
            r.synchronize()
        for r in ranks:
            lo, hi = ranks.chunk((r.index - 1 - step) % n)
            r.launch(accumulate, 4, 256, r.buf[lo:hi], r.recv[:hi - lo], hi - lo)
        for r in ranks:
            r.synchronize()
    for step in range(n - 1):
        for r in ranks:
            to = ranks[(r.index + 1) % n]
            lo, hi = ranks.chunk((r.index + 1 - step) % n)
            r.send(r.buf[lo:hi], to=to, into=to.buf[lo:hi])
        for r in ranks:
            r.synchronize()
