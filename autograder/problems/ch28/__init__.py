"""Chapter 28 (GPU MODE's NCCL lecture; PMPP ch. 20's collectives on one node): several GPUs in
one process. Peer copies between GPUs and their bandwidth, a ring all-reduce written by the
learner (28.1: reduce-scatter then all-gather, the additions in the learner's kernel), nccl-tests'
bandwidth numbers (28.2), NCCL as the yardstick, and the overlap of a data-parallel step's
gradient all-reduce with the next layer's backward kernel.

With fewer GPUs than ranks (one GPU, or CPU mode) the ranks are simulated on the one device
(``ranks.py`` says what that cannot show); the learner's code is the same either way.

Files: ``specs.py`` the graded exercises, ``references.py`` the course's ring, ``ranks.py`` the
ranks (their buffers, streams, sends, and the check that orders them), ``notebook.py`` what the
notebook's other cells call.
"""

from autograder.problems.ch28.notebook import (LINK_SPECS, MESSAGE_SIZES, NeedsGPUs,
                                               contributions, gpu_count, link_figures,
                                               measure_allreduce, measure_overlap,
                                               overlap_step, peer_bandwidth, ring_schedule,
                                               run_ring, show_ring, table)
from autograder.problems.ch28.ranks import Order, Rank, RankRace, Ranks, RankUsageError
from autograder.problems.ch28.references import add_into_kernel, reference_ring_allreduce
from autograder.problems.ch28.specs import bus_bandwidth, ring_allreduce

__all__ = ["LINK_SPECS", "MESSAGE_SIZES", "NeedsGPUs", "Order", "PROBLEMS", "Rank", "RankRace",
           "RankUsageError", "Ranks", "add_into_kernel", "bus_bandwidth", "contributions",
           "gpu_count", "link_figures", "measure_allreduce", "measure_overlap", "overlap_step",
           "peer_bandwidth", "reference_ring_allreduce", "ring_allreduce", "ring_schedule",
           "run_ring", "show_ring", "table"]

PROBLEMS = (ring_allreduce, bus_bandwidth)
