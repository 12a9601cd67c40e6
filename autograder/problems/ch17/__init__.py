"""Chapter 17 (PMPP ch. 17, Iterative MRI reconstruction): the F^H·d step of a non-Cartesian
reconstruction. For every voxel n and every k-space sample m, the sample's data μ[m] (the book's
rMu, iMu: φ* · d) turned by θ = 2π · (k[m] · r[n]) is added into the voxel::

    FHd[n] = Σ_m μ[m] · e^{iθ[m, n]},   real and imaginary parts as two float32 outputs.

The chapter's story, as PMPP tells it: a thread per sample scattering into every voxel needs an
atomic add per (sample, voxel) pair; interchanging the loops gives a thread per voxel that gathers
over the samples in registers (17.1); the samples, read by every thread at the same time, belong
in memory built for broadcasts (constant memory in CUDA C++; in Numba, a block's shared-memory
chunk, or one compiled kernel per constant chunk); sine and cosine in hardware
(``fastmath=True``: ``sin.approx.f32``) trade accuracy for speed, by a bound the learner derives
(17.2) and the chunked fast kernel is judged against (17.3).

Files: ``specs.py`` the graded exercises (spec, bound, inputs, launches, baselines),
``references.py`` the course's kernels, ``notebook.py`` what the notebook's other cells call.
"""

from autograder.problems.ch17.notebook import (chart, const_chunk_kernel, fhd_by_constant_chunks,
                                               measure, run_fhd, small_scan, time_cpu_fhd, TRIG,
                                               trig_code, trig_errors, within_bound)
from autograder.problems.ch17.references import (CHUNK, reference_fhd_chunked,
                                                 reference_fhd_gather, reference_fhd_gather_fast,
                                                 reference_fhd_scatter)
from autograder.problems.ch17.specs import (BASELINES, SPEED_SIZE, TRIG_FAST, TRIG_PLAIN,
                                            fhd_bound, fhd_bytes, fhd_chunked, fhd_error_bound,
                                            fhd_flops, fhd_gather, fhd_host, scan_inputs)

__all__ = ["BASELINES", "BENCH_VARIANTS", "CHUNK", "PROBLEMS", "SPEED_SIZE", "TRIG", "TRIG_FAST",
           "TRIG_PLAIN", "chart", "const_chunk_kernel", "fhd_bound", "fhd_by_constant_chunks",
           "fhd_bytes", "fhd_chunked", "fhd_error_bound", "fhd_flops", "fhd_gather", "fhd_host",
           "measure", "reference_fhd_chunked", "reference_fhd_gather", "reference_fhd_gather_fast",
           "reference_fhd_scatter", "run_fhd", "scan_inputs", "small_scan", "time_cpu_fhd",
           "trig_code", "trig_errors", "within_bound"]

PROBLEMS = (fhd_gather, fhd_error_bound, fhd_chunked)
"""Chapter 17's graded exercises: F^H·d with one thread per voxel, the error bound of the sum
with approximate sine and cosine, and F^H·d with the samples staged in shared memory and fast
trigonometry. A kernel case's size is ``(N, M)``: N voxels, M k-space samples."""

BENCH_VARIANTS = {"fhd_gather": {
    "the gather with fastmath=True (sin.approx.f32, cos.approx.f32)": reference_fhd_gather_fast,
    "samples staged in shared memory, fastmath=True (17.3's reference)": reference_fhd_chunked,
}}
"""The kernels ``aag bench`` times beside 17.1's reference, with its launch and inputs."""
