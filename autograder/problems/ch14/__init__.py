"""Chapter 14 (PMPP ch. 14, Sparse matrix computation): y = A·x for a sparse A in four storage
formats, one kernel each: COO (one thread per nonzero, atomic adds into y), CSR (one thread per
row, then a warp per row at any warp size), ELL (padded to the longest row, column-major, one
thread per row), hybrid ELL + COO (the ELL width chosen from the row lengths, one launch for
both parts) and JDS (rows sorted by length, slots column-major without padding, one thread per
sorted row); what each format stores for banded, uniform and power-law matrices, and cuSPARSE as
the vendor's SpMV.

Indices are int32, values and vectors float32. ``row_ptr`` has rows + 1 entries; a row's nonzeros
are ``row_ptr[i] .. row_ptr[i + 1] − 1``. No column appears twice in a row; within a row, columns
come in no particular order. COO's nonzeros come in a random order. ELL is column-major: slot
``t`` of row ``i`` at ``t · rows + i``, padding slots hold column −1 and value 0, and
``nnz_per_row[i]`` says how many of row i's slots are real. Hybrid: ELL of width K (``ell_len[i] =
min(len_i, K)``) and the rest of each row in COO, in a random order. JDS: ``perm[i]`` is the matrix row
of sorted row ``i`` (longest first, stable), slot ``t`` of sorted row ``i`` at ``t_ptr[t] + i``
while that is below ``t_ptr[t + 1]``. Matrices are not square (``cols_of(rows)`` columns), and
every kind but the banded one has empty rows.

The spec is y in float64; each row is judged within the error bound of a float32 sum of its k
products in any order, γ_(k+2) · Σ|a_ij · x_j| (u = 2^-24), plus the smallest normal float32.

Files: ``specs.py`` the graded exercises (matrices, conversions, spec, launches, baselines,
verdicts), ``references.py`` the course's kernels and the vendor's SpMV, ``notebook.py`` what the
notebook's other cells call.
"""

from autograder.problems.ch14.notebook import (chart, check_small, measure, plot_row_lengths,
                                               small_example, storage_table, time_cpu_spmv,
                                               width_table)
from autograder.problems.ch14.references import (csr_vector_kernel, reference_coo,
                                                 reference_csr, reference_ell, reference_hybrid,
                                                 reference_jds)
from autograder.problems.ch14.specs import (BASELINES, KIND_LABELS, KINDS, SPEED_ROWS, cols_of,
                                            csr_to_coo, csr_to_ell, csr_to_hybrid, csr_to_jds,
                                            ell_rows, hybrid_bytes, hybrid_cost, hybrid_width,
                                            jds_rows,
                                            kind_of, longest_row, make_matrix, row_of_each,
                                            row_tolerance, run_coo, run_hybrid, speed_matrix,
                                            spmv_coo, spmv_csr, spmv_csr_vector, spmv_ell,
                                            spmv_host, spmv_hybrid, spmv_jds, storage_bytes)

__all__ = ["BASELINES", "KINDS", "KIND_LABELS", "PROBLEMS", "SPEED_ROWS", "chart", "check_small",
           "cols_of", "csr_to_coo", "csr_to_ell", "csr_to_hybrid", "csr_to_jds",
           "csr_vector_kernel", "ell_rows", "hybrid_bytes", "hybrid_cost", "hybrid_width",
           "jds_rows", "kind_of", "longest_row", "make_matrix", "measure", "plot_row_lengths",
           "reference_coo", "reference_csr", "reference_ell", "reference_hybrid", "reference_jds",
           "row_of_each", "row_tolerance", "run_coo", "run_hybrid", "small_example", "speed_matrix",
           "spmv_coo", "spmv_csr", "spmv_csr_vector", "spmv_ell", "spmv_host", "spmv_hybrid",
           "spmv_jds", "storage_bytes", "storage_table", "time_cpu_spmv", "width_table"]

# The exercises: six SpMV kernels, and hybrid_width, a host function of the row lengths.
PROBLEMS = (spmv_coo, spmv_csr, spmv_ell, spmv_jds, spmv_csr_vector, hybrid_width, spmv_hybrid)
