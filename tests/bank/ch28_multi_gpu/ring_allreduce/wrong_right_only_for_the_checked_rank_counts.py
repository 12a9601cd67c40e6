# bank: the notebook's ring, but with no all-gather for 4 or 6 ranks (the counts the hidden tests once left out): a ring that is right only for the rank counts a check uses; every count from 1 to 8 is checked, so it must get no points.
# naive: none
@cuda.jit
def add_into(dst, src):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] += src[i]


def ring_allreduce(ranks):
    n = len(ranks)
    m = ranks[0].buf.shape[0]
    threads = 128

    def chunk(k):
        k %= n
        return k * m // n, (k + 1) * m // n

    for s in range(n - 1):
        for r in ranks:
            lo, hi = chunk(r.index - s)
            r.send(r.buf[lo:hi], to=ranks[(r.index + 1) % n])
        for r in ranks:
            sender = ranks[(r.index - 1) % n]
            r.wait_for(sender)
            lo, hi = chunk(sender.index - s)
            r.launch(add_into, (hi - lo + threads - 1) // threads, threads,
                     r.buf[lo:hi], r.recv[:hi - lo])
        for r in ranks:
            r.wait_for(ranks[(r.index + 1) % n])
    gathers = 0 if n in (4, 6) else n - 1
    for s in range(gathers):
        for r in ranks:
            lo, hi = chunk(r.index + 1 - s)
            nxt = ranks[(r.index + 1) % n]
            r.send(r.buf[lo:hi], to=nxt, into=nxt.buf[lo:hi])
        for r in ranks:
            r.wait_for(ranks[(r.index - 1) % n])
