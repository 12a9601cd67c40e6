"""Chapter 18 (PMPP ch. 18, Electrostatic potential map): the potential of a set of charged atoms
on a 2-D slice of a regular grid by direct Coulomb summation (DCS), in float32: the scatter form
(a thread per atom, atomic adds) set against the gather form (a thread per grid point, graded),
thread coarsening with a thread's points a block-width apart so that its stores coalesce
(graded), and cutoff summation over spatial bins (graded), with the work binning saves as a
formula and a measuring cell that times every way on a GPU.

Grid point ``(j, i)`` of a slice is at ``(i·h, j·h, z)``; ``atoms[a] = (x, y, z, q)``;
``V[j, i] = Σ_a q_a / r_a``. The specs are float64; each point is judged within the error bound
of a float32 sum of A terms whose coordinates are rounded too (see ``specs``). With a cutoff, only
atoms with r < cutoff count, and an atom within 2⁻¹² of a cutoff of it may count either way.

Files: ``specs.py`` the graded exercises (sizes, spec, bounds, launches, baselines),
``references.py`` the course's kernels, ``notebook.py`` what the notebook's other cells call.
"""

from autograder.problems.ch18.notebook import (chart, cutoff_error, measure,
                                               run_scatter, small_slice, time_cpu_potential)
from autograder.problems.ch18.references import (COARSEN_MAX, reference_coarsened,
                                                 reference_coarsened_consecutive,
                                                 reference_cutoff, reference_gather,
                                                 reference_scatter)
from autograder.problems.ch18.specs import (BASELINES, BLOCK_SHAPES, BOUNDARY, MIN_DZ,
                                            SPEED_BLOCK, SPEED_SLICE, bin_atoms, binned_work,
                                            bins_for, coalesced_writer, cutoff_case,
                                            dcs_coarsened, dcs_cutoff, dcs_gather,
                                            gather_sample, potential_at, potential_host,
                                            random_atoms, slice_bytes, slice_flops,
                                            slice_sample)

__all__ = ["BASELINES", "BLOCK_SHAPES", "BOUNDARY", "COARSEN_MAX", "MIN_DZ", "PROBLEMS",
           "SPEED_BLOCK", "SPEED_SLICE", "bin_atoms", "binned_work", "bins_for", "chart",
           "coalesced_writer", "cutoff_case", "cutoff_error", "dcs_coarsened", "dcs_cutoff",
           "dcs_gather", "gather_sample", "measure", "potential_at", "potential_host",
           "random_atoms", "reference_coarsened", "reference_coarsened_consecutive",
           "reference_cutoff", "reference_gather", "reference_scatter", "run_scatter",
           "slice_bytes", "slice_flops", "slice_sample", "small_slice", "time_cpu_potential"]

PROBLEMS = (dcs_gather, dcs_coarsened, dcs_cutoff, binned_work)
