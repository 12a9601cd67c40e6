# bank: a ring with the race of wrong_race_add_before_the_chunk_arrives (no waits at all) that first rebinds the ordering check's methods (Order.queue, wait, sync) to no-ops through a plain variable: the ranks keep their own copies of the check's functions, so the race is still reported: right values in CPU mode, yet a race on GPUs; it must get no points.
# naive: none
checker = ag.problems.ch28.Order
checker.queue = lambda *args, **kwargs: None
checker.wait = checker.sync = lambda *args, **kwargs: None


@cuda.jit
def add_into(dst, src):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] += src[i]


def ring_allreduce(ranks):
    n = len(ranks)
    m = ranks[0].buf.shape[0]

    def chunk(k):
        k %= n
        return k * m // n, (k + 1) * m // n

    for s in range(n - 1):
        for r in ranks:
            lo, hi = chunk(r.index - s)
            r.send(r.buf[lo:hi], to=ranks[(r.index + 1) % n])
        for r in ranks:
            lo, hi = chunk(r.index - 1 - s)
            r.launch(add_into, (hi - lo + 127) // 128, 128, r.buf[lo:hi], r.recv[:hi - lo])
    for s in range(n - 1):
        for r in ranks:
            lo, hi = chunk(r.index + 1 - s)
            nxt = ranks[(r.index + 1) % n]
            r.send(r.buf[lo:hi], to=nxt, into=nxt.buf[lo:hi])
