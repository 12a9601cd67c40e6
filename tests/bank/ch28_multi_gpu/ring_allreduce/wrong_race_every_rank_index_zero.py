# bank: a ring with no waits that sets every rank's index to 0 (and back at the end), so that a check keyed on r.index would see one stream and no race: the ranks' engine knows each rank by the object itself: right values in CPU mode, yet a race on GPUs; it must get no points.
# naive: none
@cuda.jit
def add_into(dst, src):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] += src[i]


def ring_allreduce(ranks):
    n = len(ranks)
    m = ranks[0].buf.shape[0]
    for r in ranks:
        r.number = r.index
        r.index = 0

    def chunk(k):
        k %= n
        return k * m // n, (k + 1) * m // n

    for s in range(n - 1):
        for r in ranks:
            lo, hi = chunk(r.number - s)
            r.send(r.buf[lo:hi], to=ranks[(r.number + 1) % n])
        for r in ranks:
            lo, hi = chunk(r.number - 1 - s)
            r.launch(add_into, (hi - lo + 127) // 128, 128, r.buf[lo:hi], r.recv[:hi - lo])
    for s in range(n - 1):
        for r in ranks:
            lo, hi = chunk(r.number + 1 - s)
            nxt = ranks[(r.number + 1) % n]
            r.send(r.buf[lo:hi], to=nxt, into=nxt.buf[lo:hi])
    for r in ranks:
        r.index = r.number
