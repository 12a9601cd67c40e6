"""Chapter 20 (PMPP ch. 20, Programming a heterogeneous computing cluster): MPI and the GPU. A
3-D grid split along z over ranks, each rank a slab with a ghost plane on each side: the halo
exchange (20.1), one distributed step of chapter 8's seven-point stencil checked against the
single-rank result (20.2), and the step with its exchange overlapped with the interior's
computation, timed against the one that waits (20.3).

A notebook is one process and MPI needs several: ``ranks.py`` runs a per-rank function under
``mpiexec`` (the MPICH wheel's), ``drivers.py`` is what each rank runs around it.

Files: ``specs.py`` the graded exercises, ``references.py`` the course's per-rank functions,
``notebook.py`` what the notebook's other cells call, ``ranks.py`` and ``drivers.py`` the ranks.
"""

from autograder.problems.ch20.drivers import RankComm, stencil_planes
from autograder.problems.ch20.notebook import (CHART, chart, exchange_bytes, measure, run_ranks,
                                               show_slabs, timeline)
from autograder.problems.ch20.ranks import RankFailed, RankHung
from autograder.problems.ch20.references import (neighbours, reference_exchange, reference_step,
                                                 reference_step_blocking, reference_step_overlap)
from autograder.problems.ch20.specs import (SPEED_GRID, SPEED_RANKS, grid_inputs, halo_exchange,
                                            slabs_of, split_planes, stencil_overlap,
                                            stencil_overlap_speed, stencil_step)

__all__ = ["CHART", "PROBLEMS", "RankComm", "RankFailed", "RankHung", "SPEED_GRID", "SPEED_RANKS",
           "chart", "exchange_bytes", "grid_inputs", "halo_exchange", "measure", "neighbours",
           "reference_exchange", "reference_step", "reference_step_blocking",
           "reference_step_overlap", "run_ranks", "show_slabs", "slabs_of", "split_planes",
           "stencil_overlap", "stencil_overlap_speed", "stencil_planes", "stencil_step",
           "timeline"]

PROBLEMS = (halo_exchange, stencil_step, stencil_overlap, stencil_overlap_speed)
