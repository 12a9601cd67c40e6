"""Chapter 14's kernels of the course: sparse matrix-vector products y = A·x in float32, one per
storage format (COO with atomics, CSR one thread per row, ELL column-major, JDS one thread per
sorted row), CSR with a warp per row (the "vector" kernel, for any warp size), hybrid ELL + COO in
one launch, and cuSPARSE through CuPy as the vendor.

Index arrays are int32, values and vectors float32. ELL is column-major: slot ``t`` of row ``i``
is at ``t · rows + i``; a padding slot holds column −1 and value 0."""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = uint64 = None  # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "float32", "uint64")


@_kernels.lazy
def _spmv_kernels() -> dict:
    """Compile the course's SpMV kernels once for this backend."""

    @cuda.jit
    def spmv_coo_reference(row, col, val, x, y):
        # One thread per nonzero; y is zeroed before the launch. Many threads add into the same
        # y[row], so the add is atomic.
        k = cuda.grid(1)
        if k < val.size:
            cuda.atomic.add(y, row[k], val[k] * x[col[k]])

    @cuda.jit
    def spmv_csr_reference(row_ptr, col, val, x, y):
        # One thread per row: the row's nonzeros are row_ptr[i] .. row_ptr[i + 1] - 1.
        i = cuda.grid(1)
        if i < y.size:
            acc = float32(0.0)
            for k in range(row_ptr[i], row_ptr[i + 1]):
                acc += val[k] * x[col[k]]
            y[i] = acc

    @cuda.jit
    def spmv_ell_reference(col, val, nnz_per_row, x, y):
        # One thread per row; slot t of row i at t * rows + i, so the threads of a warp read
        # neighbouring elements at every step (coalesced).
        i = cuda.grid(1)
        rows = y.size
        if i < rows:
            acc = float32(0.0)
            for t in range(nnz_per_row[i]):
                k = t * rows + i
                acc += val[k] * x[col[k]]
            y[i] = acc

    @cuda.jit
    def spmv_csr_vector(row_ptr, col, val, x, y):
        # A warp per row: its lanes read consecutive nonzeros of the row (coalesced), then a tree
        # of shuffles adds the lanes' partial sums and lane 0 stores. Any warp size (32 or 64):
        # the mask names every lane of the warp, and every lane, past the last row too, shuffles.
        mask = ~uint64(0) >> (64 - cuda.warpsize)
        lane = cuda.threadIdx.x % cuda.warpsize
        i = cuda.grid(1) // cuda.warpsize
        acc = float32(0.0)
        if i < y.size:
            for k in range(row_ptr[i] + lane, row_ptr[i + 1], cuda.warpsize):
                acc += val[k] * x[col[k]]
        offset = cuda.warpsize // 2
        while offset > 0:
            acc += cuda.shfl_down_sync(mask, acc, offset)
            offset //= 2
        if lane == 0 and i < y.size:
            y[i] = acc

    @cuda.jit
    def spmv_hybrid_reference(ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y):
        # One launch, y zeroed before it: threads 0 .. rows - 1 take the ELL part's rows, the
        # rest one COO nonzero each. A row that overflowed into COO gets adds from both kinds of
        # thread, so those adds are atomic; a row whose ELL slots are not all used has no COO
        # nonzero, and its thread stores.
        t = cuda.grid(1)
        rows = y.size
        if t < rows:
            width = ell_col.size // rows
            acc = float32(0.0)
            for s in range(ell_len[t]):
                acc += ell_val[s * rows + t] * x[ell_col[s * rows + t]]
            if ell_len[t] < width:
                y[t] = acc
            else:
                cuda.atomic.add(y, t, acc)
        elif t - rows < coo_val.size:
            k = t - rows
            cuda.atomic.add(y, coo_row[k], coo_val[k] * x[coo_col[k]])

    @cuda.jit
    def spmv_jds_reference(perm, t_ptr, col, val, x, y):
        # One thread per sorted row (longest first): slot t at t_ptr[t] + i while the section
        # still holds row i; neighbouring threads have rows of about the same length.
        i = cuda.grid(1)
        if i < perm.size:
            acc = float32(0.0)
            t = 0
            while t < t_ptr.size - 1 and t_ptr[t] + i < t_ptr[t + 1]:
                k = t_ptr[t] + i
                acc += val[k] * x[col[k]]
                t += 1
            y[perm[i]] = acc

    return dict(coo=spmv_coo_reference, csr=spmv_csr_reference, ell=spmv_ell_reference,
                csr_vector=spmv_csr_vector, jds=spmv_jds_reference, hybrid=spmv_hybrid_reference)


def reference_coo():
    """Exercise 14.1 written by the course: one thread per nonzero, ``cuda.atomic.add`` into y."""
    return _spmv_kernels()["coo"]


def reference_csr():
    """Exercise 14.2 written by the course (the speed test's reference): one thread per row."""
    return _spmv_kernels()["csr"]


def reference_ell():
    """Exercise 14.3 written by the course: one thread per row over the column-major slots."""
    return _spmv_kernels()["ell"]


def reference_jds():
    """Exercise 14.4 written by the course: one thread per sorted row over its JDS slots."""
    return _spmv_kernels()["jds"]


def csr_vector_kernel():
    """Exercise 14.5 written by the course: a warp per row (launch ``cuda.warpsize`` threads per
    row, blocks of whole warps), a shuffle tree, lane 0 stores."""
    return _spmv_kernels()["csr_vector"]


def reference_hybrid():
    """Exercise 14.6 written by the course: ELL rows and COO nonzeros in one launch (y zeroed
    first), atomic adds into the rows that overflowed."""
    return _spmv_kernels()["hybrid"]


# ---- the vendor ---------------------------------------------------------------------------------

def cupy_csr_spmv():
    """The vendor's SpMV: ``cupyx.scipy.sparse.csr_matrix @ x`` (cuSPARSE), on the same arrays."""
    import cupy as cp
    from cupyx.scipy import sparse

    def run(inputs, outputs):
        row_ptr = cp.asarray(inputs["row_ptr"])
        y = cp.asarray(outputs["y"])
        x = cp.asarray(inputs["x"])
        a = sparse.csr_matrix((cp.asarray(inputs["val"]), cp.asarray(inputs["col"]), row_ptr),
                              shape=(y.size, x.size))
        y[...] = a @ x
    return run
