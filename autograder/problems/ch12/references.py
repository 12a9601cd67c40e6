"""Chapter 12's kernels of the course: the co-rank device function, the basic merge, the tiled
merge (the speed test's reference), the circular-buffer merge (a bench variant), the kernel that
grades a learner's co-rank device function, and CuPy's sort (the vendor)."""

from __future__ import annotations

from autograder.machine import device
from autograder.problems.kit.kernels import KernelCache

cuda = float32 = int64 = None    # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "float32", "int64")


# ---- the course's kernels (references for the speed test, and `aag bench` variants) -------------

def course_tile() -> int:
    """The tile the course's kernels use: 2048 keys of A and 2048 of B on a GPU (8 outputs per
    thread of a 256-thread block), 64 in CPU mode (small cases still loop over several tiles)."""
    return 2048 if device.current().is_gpu else 64


@_kernels.lazy
def _merge_kernels() -> dict:
    """Compile the course's merge kernels once for this backend: the co-rank device function, the
    basic merge, the tiled merge (the speed test's reference) and the circular-buffer merge."""
    T = course_tile()
    MASK = T - 1

    @cuda.jit(device=True)
    def co_rank(k, A, m, B, n):
        lo = max(0, k - n)
        hi = min(k, m)
        while lo < hi:
            i = (lo + hi) // 2
            if A[i] <= B[k - i - 1]:
                lo = i + 1
            else:
                hi = i
        return lo

    @cuda.jit
    def merge_basic_reference(A, B, C, src):
        m, n = A.size, B.size
        total = m + n
        per = (total + cuda.gridsize(1) - 1) // cuda.gridsize(1)
        k0 = min(cuda.grid(1) * per, total)
        k1 = min(k0 + per, total)
        if k0 >= k1:
            return
        i = co_rank(k0, A, m, B, n)
        i_end = co_rank(k1, A, m, B, n)
        j = k0 - i
        j_end = k1 - i_end
        for k in range(k0, k1):
            if j >= j_end or (i < i_end and A[i] <= B[j]):
                C[k] = A[i]
                src[k] = i
                i += 1
            else:
                C[k] = B[j]
                src[k] = m + j
                j += 1

    @cuda.jit
    def merge_tiled_reference(A, B, C, src):
        sA = cuda.shared.array(T, float32)
        sB = cuda.shared.array(T, float32)
        s_used = cuda.shared.array(1, int64)
        m, n = A.size, B.size
        total = m + n
        t, nt = cuda.threadIdx.x, cuda.blockDim.x
        per = (total + cuda.gridDim.x - 1) // cuda.gridDim.x
        k = min(cuda.blockIdx.x * per, total)
        k_end = min(k + per, total)
        a = co_rank(k, A, m, B, n)               # the block's segment in A and B
        a_end = co_rank(k_end, A, m, B, n)
        b = k - a
        b_end = k_end - a_end
        vt = (T + nt - 1) // nt                  # outputs per thread and tile
        while k < k_end:
            na = min(T, a_end - a)
            nb = min(T, b_end - b)
            for x in range(t, na, nt):           # coalesced loads of both tiles
                sA[x] = A[a + x]
            for x in range(t, nb, nt):
                sB[x] = B[b + x]
            cuda.syncthreads()
            out = min(T, k_end - k)
            lo = min(t * vt, out)
            hi = min(lo + vt, out)
            i = co_rank(lo, sA, na, sB, nb)
            i_end = co_rank(hi, sA, na, sB, nb)
            if lo < out and hi == out:
                s_used[0] = i_end                # its end is the tile's: keys of A consumed
            j = lo - i
            j_end = hi - i_end
            va = sA[i] if i < i_end else float32(0)   # the two candidates, in registers
            vb = sB[j] if j < j_end else float32(0)
            for q in range(k + lo, k + hi):
                if j >= j_end or (i < i_end and va <= vb):
                    C[q] = va
                    src[q] = a + i
                    i += 1
                    if i < i_end:
                        va = sA[i]
                else:
                    C[q] = vb
                    src[q] = m + b + j
                    j += 1
                    if j < j_end:
                        vb = sB[j]
            cuda.syncthreads()
            used = s_used[0]
            a += used
            b += out - used
            k += out

    @cuda.jit(device=True)
    def co_rank_ring(k, R, r0, m, S, s0, n):
        # co_rank over the m keys of ring R from slot r0 and the n keys of ring S from slot s0
        lo = max(0, k - n)
        hi = min(k, m)
        while lo < hi:
            i = (lo + hi) // 2
            if R[(r0 + i) & MASK] <= S[(s0 + k - i - 1) & MASK]:
                lo = i + 1
            else:
                hi = i
        return lo

    @cuda.jit
    def merge_circular_reference(A, B, C, src):
        sA = cuda.shared.array(T, float32)
        sB = cuda.shared.array(T, float32)
        s_used = cuda.shared.array(1, int64)
        m, n = A.size, B.size
        total = m + n
        t, nt = cuda.threadIdx.x, cuda.blockDim.x
        per = (total + cuda.gridDim.x - 1) // cuda.gridDim.x
        k = min(cuda.blockIdx.x * per, total)
        k_end = min(k + per, total)
        a = co_rank(k, A, m, B, n)
        a_end = co_rank(k_end, A, m, B, n)
        b = k - a
        b_end = k_end - a_end
        a_head = 0        # the ring slot that holds A[a]
        a_have = 0        # keys of A in the ring: A[a], ..., A[a + a_have - 1]
        b_head = 0
        b_have = 0
        vt = (T + nt - 1) // nt
        while k < k_end:
            a_load = min(T, a_end - a) - a_have          # top up only what was consumed
            b_load = min(T, b_end - b) - b_have
            for x in range(t, a_load, nt):
                sA[(a_head + a_have + x) & MASK] = A[a + a_have + x]
            for x in range(t, b_load, nt):
                sB[(b_head + b_have + x) & MASK] = B[b + b_have + x]
            cuda.syncthreads()
            a_have += a_load
            b_have += b_load
            out = min(T, k_end - k)
            lo = min(t * vt, out)
            hi = min(lo + vt, out)
            i = co_rank_ring(lo, sA, a_head, a_have, sB, b_head, b_have)
            i_end = co_rank_ring(hi, sA, a_head, a_have, sB, b_head, b_have)
            if lo < out and hi == out:
                s_used[0] = i_end
            j = lo - i
            j_end = hi - i_end
            va = sA[(a_head + i) & MASK] if i < i_end else float32(0)
            vb = sB[(b_head + j) & MASK] if j < j_end else float32(0)
            for q in range(k + lo, k + hi):
                if j >= j_end or (i < i_end and va <= vb):
                    C[q] = va
                    src[q] = a + i
                    i += 1
                    if i < i_end:
                        va = sA[(a_head + i) & MASK]
                else:
                    C[q] = vb
                    src[q] = m + b + j
                    j += 1
                    if j < j_end:
                        vb = sB[(b_head + j) & MASK]
            cuda.syncthreads()
            used = s_used[0]
            a += used
            a_head = (a_head + used) & MASK
            a_have -= used
            b += out - used
            b_head = (b_head + out - used) & MASK
            b_have -= out - used
            k += out

    return dict(co_rank=co_rank, basic=merge_basic_reference,
                tiled=merge_tiled_reference, circular=merge_circular_reference)


def reference_co_rank():
    """The course's co-rank device function (a binary search over i in [max(0, k-n), min(k, m)])."""
    return _merge_kernels()["co_rank"]


def reference_basic():
    """The course's basic merge: each thread a contiguous range of the output, its two ends found
    with co-rank in global memory, then a sequential merge from global memory."""
    return _merge_kernels()["basic"]


def reference_tiled():
    """The tiled merge as Exercise 12.4 asks for it (PMPP §12.6), written well: each block one
    long segment of the output; per tile, coalesced loads of up to TILE keys of A and of B into
    shared memory, each thread two co-rank searches on the tiles and a merge of TILE / blockDim
    outputs with the two candidate keys held in registers (one shared load per output). The keys
    of A a tile consumed come from the thread whose range ends the tile (its end co-rank), through
    shared memory, instead of a third search by every thread. TILE = 2048 on a GPU (8 outputs per
    thread of a 256-thread block)."""
    return _merge_kernels()["tiled"]


def reference_circular():
    """PMPP §12.7's circular-buffer merge, written as the tiled reference is (candidates in
    registers, the tile's consumption from the thread that ends it): the same tiles kept as rings,
    topped up with only the keys the previous tile consumed, so every key is loaded from global
    memory once."""
    return _merge_kernels()["circular"]


class OwnGrid:
    """A kernel launched with its own grid, whatever launch it is given: for `aag bench`, to time
    the basic merge at about ``per_thread`` outputs per thread beside the tiled one."""

    def __init__(self, kernel, per_thread: int = 8):
        self.kernel, self.per_thread = kernel, per_thread

    def __getitem__(self, config):
        threads = config[1] if isinstance(config[1], int) else 256

        def launch(A, B, C, src):
            blocks = max(1, -(-C.size // (threads * self.per_thread)))
            self.kernel[blocks, threads](A, B, C, src)
        return launch


# ---- the kernel that grades a learner's co_rank ---------------------------------------------------

_wrappers: dict = {}


def co_rank_evaluator(fn):
    """A kernel of the course that calls the learner's device function once per thread:
    ``evaluate_co_rank[blocks, threads](A, B, ks, out)`` sets ``out[t] = fn(ks[t], A, m, B, n)``."""
    _kernels.bind()
    hit = _wrappers.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    co_rank = fn

    @cuda.jit
    def evaluate_co_rank(A, B, ks, out):
        t = cuda.grid(1)
        if t < ks.size:
            out[t] = co_rank(ks[t], A, A.size, B, B.size)
    _wrappers[id(fn)] = (fn, evaluate_co_rank)
    return evaluate_co_rank


# ---- the vendor ---------------------------------------------------------------------------------

def cupy_sort():
    """For `aag bench`: CuPy's sort of A‖B (keys only: `src` is not computed)."""
    import cupy as cp

    def run(inputs, outputs):
        both = cp.concatenate([cp.asarray(inputs["A"]), cp.asarray(inputs["B"])])
        cp.asarray(outputs["C"])[...] = cp.sort(both)
    return run
