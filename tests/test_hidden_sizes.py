"""Hidden cases are larger than the visible ones: a kernel that special-cases the sizes it was
shown (``if n < 5000:``) must fail. In CPU mode every exercise's hidden cases include a fixed size
at least 4 times its largest visible one; on a GPU, every 1-D exercise's hidden cases reach 2^24
elements. The size of a case is its element count (the product of a shape: pixels, voxels,
M·K·N multiply-adds), the sum m + n for a merge's two arrays, the number of questions for the
exercises that compute a formula on the host, and for a sparse matrix or a graph (whose size is
its rows or vertices) the largest array its inputs hold: nonzeros, edges."""

from __future__ import annotations

import numpy as np
import pytest

import autograder as ag
from autograder.problem import Problem, Sizes
from autograder.problems import CHAPTERS

SUMS = {"co_rank", "merge_basic", "merge_tiled"}     # sizes (m, n) of two arrays: m + n keys

# Exercises allowed below the rule, each with its reason (e.g. a 3-D stencil whose 4x case would
# take the simulator minutes).
CPU_EXCEPTIONS: dict[str, str] = {
    "gpu_timer": "its sizes are counts of timed runs, not data: the durations are drawn per case, "
                 "so there is no size to special-case, and each run takes tens of milliseconds",
    "stencil_overlap_speed": "a speed test timed on a GPU only: in CPU mode it runs its one case to "
                             "check that the step is right, and 20.3's own hidden cases judge "
                             "correctness at other sizes",
}
# Exercises whose size is not their element count: a sparse matrix's rows (its nonzeros are the
# elements), a graph's vertices (its edges are). Their largest hidden case is judged by the largest
# array its inputs hold.
SIZE_IS_NOT_ELEMENTS = {"spmv_coo", "spmv_csr", "spmv_csr_vector", "spmv_ell", "spmv_hybrid",
                        "spmv_jds", "bfs_push", "bfs_pull", "bfs_edge", "bfs_frontier_queue",
                        "bfs_frontier_private"}
PROBLEMS = {f"{m.__name__.rsplit('.', 1)[-1]}.{attr}": p for m in CHAPTERS
            for attr, p in vars(m).items() if isinstance(p, Problem)}


def measure(problem: Problem, size) -> int:
    if isinstance(size, tuple):
        return sum(size) if problem.name in SUMS else int(np.prod(size))
    return int(size)


def largest_hidden_over_visible(problem: Problem, sizes: Sizes) -> float:
    visible = max(measure(problem, s) for s in sizes.visible)
    hidden = max((measure(problem, s) for s in sizes.hidden), default=0)
    return hidden / max(visible, 1)


@pytest.mark.parametrize("path", sorted(PROBLEMS))
def test_cpu_hidden_cases_include_four_times_the_largest_visible_size(path):
    problem = PROBLEMS[path]
    if problem.name in CPU_EXCEPTIONS:
        pytest.skip(CPU_EXCEPTIONS[problem.name])
    ratio = largest_hidden_over_visible(problem, problem.cpu_sizes)
    assert ratio >= 4, (f"{path}: the largest fixed hidden CPU size is {ratio:.2f} times the "
                        "largest visible one; add one at least 4 times as large (and time it)")


@pytest.mark.parametrize("path", sorted(p for p, prob in PROBLEMS.items()
                                        if prob.on_device or prob.name == "co_rank"))
def test_gpu_hidden_cases_of_1d_exercises_reach_2_to_the_24(path):
    problem = PROBLEMS[path]
    shapes = isinstance(problem.gpu_sizes.visible[0], tuple) and problem.name not in SUMS
    if shapes:
        # Shapes on a GPU: their visible cases are chip-sized already (a 1081 x 1919 image, a
        # 1023 x 517 x 1537 matmul, a 129 x 255 x 517 volume), and the speed test runs larger.
        pytest.skip("a multi-dimensional exercise: its visible GPU case is chip-sized already")
    largest = max(measure(problem, s) for s in problem.gpu_sizes.hidden)
    if largest < 1 << 24 and problem.name in SIZE_IS_NOT_ELEMENTS:
        # A size of rows or vertices: count the elements its inputs hold (nonzeros, edges).
        inputs = problem.make_inputs(np.random.default_rng(24), largest)
        largest = max(np.asarray(v).size for v in inputs.values())
    assert largest >= 1 << 24, f"{path}: the largest fixed hidden GPU size is {largest}"


def test_the_rule_can_fail():
    small = Problem.__new__(Problem)
    small.name = "toy"
    assert largest_hidden_over_visible(small, Sizes(visible=(1025, 1), hidden=(4000,))) < 4
    assert largest_hidden_over_visible(small, Sizes(visible=((29, 45),), hidden=((45, 29),))) == 1


def test_a_hung_kernel_on_a_gpu_costs_a_minute_not_hours(monkeypatch):
    """The per-case time limit on a GPU: the simulator's rate (2 ms a thread) would give a
    2^24-element hidden case more than nine hours; a GPU needs milliseconds."""
    import types

    from autograder.grading import problem as problem_module
    from autograder.problem import Case
    p = ag.problems.ch02.vector_add
    case = Case(size=(1 << 24) + 3, inputs={}, blocks=65537, threads=256)
    monkeypatch.delenv("AAG_CHECK_TIMEOUT", raising=False)
    monkeypatch.setattr(problem_module.device, "current",
                        lambda: types.SimpleNamespace(is_gpu=True, name="cuda"))
    assert p.time_limit(case) <= 120


@pytest.mark.parametrize("path", sorted(p for p in PROBLEMS if len(PROBLEMS[p].block_sizes or ()) > 1))
def test_hidden_cases_use_every_block_shape(path):
    """Do an exercise's hidden cases use each of its block shapes, whatever the secret? A kernel
    written for one block shape (a section of 64 where it owns 2·blockDim.x) must not pass
    because every hidden case happened to draw that shape."""
    problem = PROBLEMS[path]
    shapes = set(problem.block_sizes)
    for seed in range(12):
        cases = problem.cases(hidden=True, seed=seed)
        if len(cases) < len(shapes):
            pytest.skip(f"{len(cases)} hidden cases for {len(shapes)} block shapes")
        used = {c.threads for c in cases}
        assert used == shapes, f"seed {seed}: hidden cases used {used} of {shapes}"


# Fixed sizes allowed to be a multiple of a warp, each with its reason.
WHOLE_WARPS = {
    ("radix_local_sort", 64): "whole tiles on purpose (64 reversed keys at shift 0), beside 91, 45, "
                              "40 and 37",
    ("radix_scatter", 64): "as 13.1's: whole tiles on purpose, beside 91, 45, 40 and 37",
    **{(name, 1_000_000): "a graph of a million vertices, beside 250,001 and 4,800,001 (and the "
                          "edges, which the threads of the edge kernels cover, are not a multiple)"
       for name in ("bfs_edge", "bfs_frontier_private", "bfs_frontier_queue", "bfs_pull",
                    "bfs_push")},
}


@pytest.mark.parametrize("path", sorted(p for p, prob in PROBLEMS.items() if prob.on_device))
def test_fixed_1d_sizes_are_not_whole_warps(path):
    """A kernel with no bounds guard, or one that assumes whole blocks, passes every case whose
    size is a multiple of its block: the fixed 1-D sizes (visible and hidden, CPU and GPU) are
    not multiples of 32, the smallest block a check launches, but for the reasons listed."""
    problem = PROBLEMS[path]
    for sizes in (problem.cpu_sizes, problem.gpu_sizes):
        for n in (*sizes.visible, *sizes.hidden):
            if isinstance(n, int) and n > 1 and (problem.name, n) not in WHOLE_WARPS:
                assert n % 32, f"{path}: the fixed size {n} is a whole number of warps"
