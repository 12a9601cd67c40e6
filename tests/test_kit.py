"""The shared pieces that make grading cheap (autograder/problems/kit): inputs made in parallel,
whole-input answers computed once per content set, sample checks, and the judge's expected values
computed once per case. Each must give what the slow, plain version gives."""

import gc
import math

import numpy as np
import pytest

from autograder.core.spec import Case
from autograder.problems import ALL
from autograder.problems.ch04 import specs as ch04
from autograder.problems.ch10 import specs as ch10
from autograder.problems.ch11 import specs as ch11
from autograder.problems.kit import inputs, matmul_sample, once_per_array, parallel_fill


@pytest.mark.parametrize("n", [0, 5, (1 << 20) + 77])
def test_parallel_inputs_do_not_depend_on_the_number_of_threads(monkeypatch, n):
    """The judge and the learner's process make a speed test's inputs separately (on machines with
    different core counts, in a sandbox or not): the values must be the same whatever the threads,
    and differ with the seed."""
    def make(seed, workers):
        monkeypatch.setattr(inputs, "_usable_cores", lambda: workers)
        return inputs.normal_fast(np.random.default_rng(seed), n, 3.0, 2.0)
    one, many = make(7, 1), make(7, 5)
    assert one.dtype == np.float32 and one.shape == (n,)
    assert np.array_equal(one, many)
    if n > 100:
        assert not np.array_equal(one, make(8, 5))
        assert abs(float(one.mean()) - 3.0) < 0.01 and abs(float(one.std()) - 2.0) < 0.01
        u = inputs.uniform_fast(np.random.default_rng(1), n, -4.0, 6.0)
        assert u.min() >= -4.0 and u.max() <= 6.0 and abs(float(u.mean()) - 1.0) < 0.02


def test_parallel_fill_fills_every_piece_once():
    """Every element written by exactly one piece (pieces meet without gaps or overlaps)."""
    n = (1 << 20) + 3
    out = parallel_fill(np.random.default_rng(0), n, lambda g, piece: piece.fill(piece.size),
                        dtype=np.int64)
    edges = inputs.piece_edges(n)
    assert edges[0] == 0 and edges[-1] == n
    for a, b in zip(edges, edges[1:]):
        assert (out[a:b] == b - a).all()


def test_once_per_array_computes_once_and_forgets_dead_arrays():
    calls = []

    @once_per_array
    def total(x):
        calls.append(1)
        return float(x.sum())

    a, b = np.arange(10.0), np.ones(4)
    assert [total(a), total(b), total(a), total(b)] == [45.0, 4.0, 45.0, 4.0]
    assert len(calls) == 2
    del a
    gc.collect()
    assert len(total.cache) == 1          # a's entry went with a
    c = np.arange(10.0) * 2               # may reuse a's address: must not get a's answer
    assert total(c) == 90.0


def test_matmul_sample_is_the_float64_product_at_those_elements():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((300, 517), dtype=np.float32)
    B = rng.standard_normal((517, 401), dtype=np.float32)
    full = A.astype(np.float64) @ B.astype(np.float64)
    idx = np.sort(rng.choice(full.size, 700, replace=False))
    exp, tol = matmul_sample({"A": A, "B": B}, idx)
    assert np.allclose(exp["C"], full.reshape(-1)[idx], rtol=1e-12, atol=1e-12)
    mag = (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)).reshape(-1)[idx]
    assert (tol["C"] >= 517 * 2.0 ** -24 * mag).all()


def test_two_kinds_forms_by_blocks_equal_the_plain_loops():
    """Chapter 4's float64 forms, evaluated by blocks side by side, give what one loop over the
    whole array gives, across block edges."""
    rng = np.random.default_rng(2)
    x = rng.uniform(-1.25, 1.25, ch04._BLOCK * 2 + 11)
    a, b = rng.uniform(-1, 1, 9), rng.uniform(-0.4, 0.4, 7)
    power, product = np.zeros_like(x), np.ones_like(x)
    for c in a:
        power = power * x + c
    for c in b:
        product = product * (1.0 + c * x)
    assert np.array_equal(ch04.power_form(a, x), power)
    assert np.array_equal(ch04.product_form(b, x), product)
    assert ch04.power_form(a, x[:0]).size == 0


def test_whole_input_answers_match_the_plain_sums():
    x = np.random.default_rng(4).standard_normal((1 << 22) * 3 + 5).astype(np.float32)
    assert math.isclose(ch10.exact_sum(x), math.fsum(x.astype(np.float64)), rel_tol=1e-12)
    assert math.isclose(ch10.magnitude(x), math.fsum(np.abs(x.astype(np.float64))), rel_tol=1e-12)
    idx = np.array([0, 1, 255, 256, 70_000, x.size - 1])
    exp, mag = ch11.sampled_scan(x, idx)
    whole = np.cumsum(x.astype(np.float64))
    assert np.allclose(exp, whole[idx], rtol=1e-12, atol=1e-9)


def test_a_case_s_expected_values_are_computed_once():
    """The judge computes a case's expected values while the learner's code runs; judging the
    outcome uses those, without computing the spec again."""
    p = ALL["vector_add"]
    case = p.cases()[0]
    calls = []
    spec = p.spec
    p.spec = lambda **kw: (calls.append(1), spec(**kw))[1]
    try:
        expected, tolerance = p.reference_values(case)
        again = p.reference_values(case)
    finally:
        p.spec = spec
    assert len(calls) == 1 and again[0] is expected and again[1] is tolerance
    assert isinstance(case, Case) and "expected" in case.memo
