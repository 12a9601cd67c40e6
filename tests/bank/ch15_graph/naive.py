"""Naive allclose harnesses for chapter 15's exercises (see :mod:`bank.naive`): typical
hand-written tests, one fixed graph, ``np.allclose``. Written the way quick BFS tests usually are:
one R-MAT graph of 256 vertices (a power of two, so whole blocks of 32 threads), from its vertex
of highest out-degree, the expected levels from a BFS on the host, the course's loop around the
kernel, and nothing else: no race detector, no look at the frontiers the queue built, no count of
the atomics a privatized queue makes (the frontier harness serves both queue exercises); the
edge-centric kernel gets the same graph as an edge list in CSR order."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _graph():
    ch15 = autograder.problems.ch15
    row_ptr, col = ch15.rmat_graph(np.random.default_rng(0), 256, edge_factor=8)
    source = int(np.argmax(np.diff(row_ptr)))
    return row_ptr, col, source, ch15.bfs_levels(row_ptr, col, source)


def _allclose_push(kernel) -> bool:
    row_ptr, col, source, expected = _graph()
    d_levels = cuda.device_array(expected.size, np.int32)
    autograder.problems.ch15.bfs_by_levels(kernel, cuda.to_device(row_ptr), cuda.to_device(col),
                                           d_levels, source, 32)
    return bool(np.allclose(d_levels.copy_to_host(), expected))


def _allclose_pull(kernel) -> bool:
    row_ptr, col, source, expected = _graph()
    in_ptr, in_col = autograder.problems.ch15.transpose(row_ptr, col)
    d_levels = cuda.device_array(expected.size, np.int32)
    autograder.problems.ch15.bfs_by_levels(kernel, cuda.to_device(in_ptr), cuda.to_device(in_col),
                                           d_levels, source, 32)
    return bool(np.allclose(d_levels.copy_to_host(), expected))


def _allclose_edge(kernel) -> bool:
    row_ptr, col, source, expected = _graph()
    src, dst = autograder.problems.ch15.edge_list(row_ptr, col)
    d_levels = cuda.device_array(expected.size, np.int32)
    autograder.problems.ch15.bfs_by_edges(kernel, cuda.to_device(src), cuda.to_device(dst),
                                          d_levels, source, 32)
    return bool(np.allclose(d_levels.copy_to_host(), expected))


def _allclose_frontier(kernel) -> bool:
    row_ptr, col, source, expected = _graph()
    d_levels = cuda.device_array(expected.size, np.int32)
    autograder.problems.ch15.bfs_frontier(kernel, cuda.to_device(row_ptr), cuda.to_device(col),
                                          d_levels, source, 32)
    return bool(np.allclose(d_levels.copy_to_host(), expected))


HARNESS = {"bfs_push": _allclose_push,
           "bfs_pull": _allclose_pull,
           "bfs_edge": _allclose_edge,
           "bfs_frontier_queue": _allclose_frontier,
           "bfs_frontier_private": _allclose_frontier}
