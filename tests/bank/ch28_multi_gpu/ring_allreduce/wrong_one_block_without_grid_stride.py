# bank: launches each addition as one block of 1,024 threads with no grid-stride loop: right while every chunk fits in one block (all the visible case's and most hidden ones), wrong once a chunk is longer (2 ranks over 2,101 elements); it must get no points.
# naive: none
@cuda.jit
def add_into(dst, src):
    i = cuda.threadIdx.x
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
            r.launch(add_into, 1, 1024,
                     r.buf[lo:hi], r.recv[:hi - lo])
        for r in ranks:
            r.wait_for(ranks[(r.index + 1) % n])
    for s in range(n - 1):
        for r in ranks:
            lo, hi = chunk(r.index + 1 - s)
            nxt = ranks[(r.index + 1) % n]
            r.send(r.buf[lo:hi], to=nxt, into=nxt.buf[lo:hi])
        for r in ranks:
            r.wait_for(ranks[(r.index - 1) % n])
