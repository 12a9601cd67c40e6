"""Chapter 15 (PMPP ch. 15, Graph traversal): breadth-first search on a directed graph in CSR form,
four ways: vertex-centric push (each vertex of the current level labels its unvisited
out-neighbours), vertex-centric pull (each unvisited vertex looks for a parent among its
in-neighbours, in the transposed graph), edge-centric (one thread per edge of an edge list), and a
frontier queue (one thread per vertex of the current level, the next level's vertices appended
with an atomic tail), also privatized (a queue per block in shared memory, one global atomic per
block).

A graph of n vertices is ``row_ptr`` (int32, n + 1 entries) and ``col`` (int32, one per edge); the
pull exercise gets the transpose, ``in_ptr`` and ``in_col``. The output is ``levels`` (int32, n):
the number of edges on a shortest path from the source, −1 where there is none. Every check
compares it exactly with a BFS on the host. The course's loop launches the learner's kernel once
per level (:func:`references.bfs_by_levels`, :func:`references.bfs_by_edges`,
:func:`references.bfs_frontier`); the learner writes the kernel.

Graphs are made in code, seeded: R-MAT graphs as Graph500 makes them (a = 0.57, b = c = 0.19), a
2-D grid like a road network (high diameter), and the edge cases (self-loops, duplicate edges,
unreachable vertices, a source with no out-edges, a single vertex).

Files: ``specs.py`` the graded exercises (graphs, spec, launches, baselines, verdicts),
``references.py`` the graphs, the host BFS and the course's kernels and loops, ``notebook.py`` what
the notebook's other cells call.
"""

from autograder.problems.ch15.notebook import (chart, measure, plot_graph, plot_work, time_cpu_bfs)
from autograder.problems.ch15.references import (BLOCK_QUEUE, MIN_BLOCK_QUEUE, RMAT_ABC,
                                                 UNVISITED, FrontierError, NotPrivatized,
                                                 bfs_by_edges, bfs_by_levels, bfs_frontier,
                                                 bfs_levels, bfs_levels_queue, edge_list,
                                                 grid_edges, hub_source, reference_bfs_edges,
                                                 reference_bfs_frontier, reference_bfs_push,
                                                 reference_edge, reference_frontier,
                                                 reference_private, reference_pull,
                                                 reference_push, rmat_edges, rmat_graph, to_csr,
                                                 transpose, work_per_level)
from autograder.problems.ch15.specs import (KINDS, SPEED_SIZE, bfs_bytes, bfs_edge,
                                            bfs_frontier_private, bfs_frontier_queue, bfs_pull,
                                            bfs_push, check_graph, kind_of, speed_graph,
                                            traversed_edges)

__all__ = ["BLOCK_QUEUE", "FrontierError", "KINDS", "MIN_BLOCK_QUEUE", "NotPrivatized", "PROBLEMS",
           "RMAT_ABC", "SPEED_SIZE", "UNVISITED", "bfs_by_edges", "bfs_by_levels", "bfs_bytes",
           "bfs_edge", "bfs_frontier", "bfs_frontier_private", "bfs_frontier_queue", "bfs_levels",
           "bfs_levels_queue", "bfs_pull", "bfs_push", "chart", "check_graph", "edge_list",
           "grid_edges", "hub_source", "kind_of", "measure", "plot_graph", "plot_work",
           "reference_bfs_edges", "reference_bfs_frontier", "reference_bfs_push", "reference_edge",
           "reference_frontier", "reference_private", "reference_pull", "reference_push",
           "rmat_edges", "rmat_graph", "speed_graph", "time_cpu_bfs", "to_csr", "transpose",
           "traversed_edges", "work_per_level"]

PROBLEMS = (bfs_push, bfs_pull, bfs_edge, bfs_frontier_queue, bfs_frontier_private)
