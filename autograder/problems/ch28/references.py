"""The course's ring all-reduce (exercise 28.1) on :class:`~autograder.problems.ch28.ranks.Ranks`:
a float32 ``add_into`` kernel and the ring of PMPP §20.6's collective and NCCL's ring algorithm,
``n - 1`` reduce-scatter steps then ``n - 1`` all-gather steps.

Chunk ``k`` of a buffer of ``m`` elements is ``[k m // n, (k + 1) m // n)``. In reduce-scatter
step ``s`` rank ``r`` sends its chunk ``(r - s) mod n`` to rank ``r + 1``, which adds it into its
own chunk of that number; after ``n - 1`` steps rank ``r`` holds the whole sum of chunk
``(r + 1) mod n``. In all-gather step ``s`` rank ``r`` sends its chunk ``(r + 1 - s) mod n``, now
complete, to rank ``r + 1``, which copies it over its own. Each step ends with every rank's
stream waiting for its sender's (``wait_for``), so that a rank adds a chunk only once it has
arrived, and sends the next only once its own addition is done.
"""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

THREADS = 128

cuda = float32 = None            # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32")


@_kernels.lazy
def add_into_kernel():
    """``dst[i] += src[i]`` for ``i < dst.size``, one thread per element, grid-stride."""
    @cuda.jit
    def add_into(dst, src):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < dst.size:
            dst[i] += src[i]
            i += stride
    return add_into


def reference_ring_allreduce(ranks) -> None:
    """Every rank's ``buf`` becomes the elementwise sum of all of them, through the ring."""
    add_into = add_into_kernel()
    n = len(ranks)
    m = ranks[0].buf.shape[0]

    def chunk(k):
        k %= n
        return k * m // n, (k + 1) * m // n

    for s in range(n - 1):                      # reduce-scatter
        for r in ranks:
            lo, hi = chunk(r.index - s)
            r.send(r.buf[lo:hi], to=ranks[(r.index + 1) % n])
        for r in ranks:
            left = ranks[(r.index - 1) % n]
            r.wait_for(left)                    # the chunk has arrived
            lo, hi = chunk(left.index - s)
            if hi > lo:
                r.launch(add_into, -(-(hi - lo) // THREADS), THREADS, r.buf[lo:hi],
                         r.recv[:hi - lo])
        for r in ranks:
            r.wait_for(ranks[(r.index + 1) % n])   # the next send waits for its receiver's add
    for s in range(n - 1):                      # all-gather
        for r in ranks:
            lo, hi = chunk(r.index + 1 - s)
            nxt = ranks[(r.index + 1) % n]
            r.send(r.buf[lo:hi], to=nxt, into=nxt.buf[lo:hi])
        for r in ranks:
            r.wait_for(ranks[(r.index - 1) % n])
    ranks.synchronize()
