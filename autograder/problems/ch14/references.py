"""Chapter 14's kernels of the course: sparse matrix-vector products y = A·x in float32, one per
storage format (COO with atomics, CSR one thread per row, ELL column-major, JDS one thread per
sorted row), the CSR kernel with a warp per row (the "vector" kernel, for the measurements), and
cuSPARSE through CuPy as the vendor.

Index arrays are int32, values and vectors float32. ELL is column-major: slot ``t`` of row ``i``
is at ``t · rows + i``; a padding slot holds column −1 and value 0."""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = None      # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "float32")


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
        # A warp per row: its 32 lanes read consecutive nonzeros of the row (coalesced), then a
        # tree of shuffles adds the 32 partial sums. Blocks of a multiple of 32 threads.
        lane = cuda.threadIdx.x % 32
        i = cuda.grid(1) // 32
        if i < y.size:
            acc = float32(0.0)
            for k in range(row_ptr[i] + lane, row_ptr[i + 1], 32):
                acc += val[k] * x[col[k]]
            offset = 16
            while offset > 0:
                acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
                offset //= 2
            if lane == 0:
                y[i] = acc

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
                csr_vector=spmv_csr_vector, jds=spmv_jds_reference)


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
    """A warp per row (launch 32 threads per row): coalesced reads of long rows."""
    return _spmv_kernels()["csr_vector"]


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
