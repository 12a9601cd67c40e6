"""Chapter 23: are the review questions' specs right (against independent computations: the
banks counted with NumPy, Little's law in exact fractions, a softmax's traffic counted pass by
pass), do the checks pass correct answers written other ways and fail the classic mistakes (threads
counted instead of distinct words, a floor instead of a ceiling, the SMs forgotten, a row that
fits counted as not fitting), and are the notebook's pictures and H200 numbers what they say?"""

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import autograder as ag

from verdicts import assert_judged

ch23 = ag.problems.ch23
ROOT = Path(__file__).resolve().parents[1]


# ---- 23.1 banks ------------------------------------------------------------------------------------

def _ways_numpy(width, x_step, y_step):
    t = np.arange(32)
    words = np.unique((t % width) * x_step + (t // width) * y_step)
    return int(np.bincount(words % 32).max())


def test_bank_spec_against_numpy_and_known_cases():
    rng = np.random.default_rng(23)
    for _ in range(300):
        w, x, y = int(rng.choice([1, 2, 4, 8, 16, 32])), int(rng.integers(0, 99)), \
            int(rng.integers(0, 199))
        assert ch23.bank_ways(w, x, y) == _ways_numpy(w, x, y)
    # Known answers: a stride of s words over a whole warp conflicts gcd(s, 32) ways.
    for s in range(1, 70):
        assert ch23.bank_ways(32, s, 0) == math.gcd(s, 32)
    assert ch23.bank_ways(32, 0, 0) == 1            # one word for all: a broadcast
    assert ch23.bank_ways(1, 0, 32) == 32           # a column, one thread a row


def _ways_counting_threads(width, x_step, y_step):
    banks = [((t % width) * x_step + (t // width) * y_step) % 32 for t in range(32)]
    return max(banks.count(b) for b in set(banks))     # a broadcast counted as a conflict


def _ways_gcd_only(width, x_step, y_step):
    return math.gcd(x_step, 32) if x_step else 1        # right for a whole-warp row only


@pytest.mark.parametrize("fn,expected", [(_ways_numpy, None),
                                         (_ways_counting_threads, "ways"),
                                         (_ways_gcd_only, "ways")])
def test_bank_verdict(fn, expected):
    assert_judged(ch23.bank_conflict_ways, fn, expected)


# ---- 23.2 Little's law -----------------------------------------------------------------------------

def _little_ok(bandwidth, latency, sms, max_threads, bytes_per_load):
    per_sm = bandwidth * latency / sms
    return (bandwidth * latency, math.ceil(per_sm / bytes_per_load),
            math.ceil(per_sm / (max_threads * bytes_per_load)))


def _little_other_order(bandwidth, latency, sms, max_threads, bytes_per_load):
    threads = -(-(latency * (bandwidth / sms)) // bytes_per_load)       # floats, rounded up
    return latency * bandwidth, threads, -(-threads // max_threads)


def _little_floor(bandwidth, latency, sms, max_threads, bytes_per_load):
    per_sm = bandwidth * latency / sms
    return bandwidth * latency, int(per_sm / bytes_per_load), \
        int(per_sm / (max_threads * bytes_per_load))


def _little_whole_gpu(bandwidth, latency, sms, max_threads, bytes_per_load):
    total = bandwidth * latency
    return total, math.ceil(total / bytes_per_load), \
        math.ceil(total / (max_threads * bytes_per_load))


@pytest.mark.parametrize("fn,expected", [(_little_ok, None), (_little_other_order, None),
                                         (_little_floor, "threads_per_sm"),
                                         (_little_whole_gpu, "threads_per_sm")])
def test_little_verdict(fn, expected):
    assert_judged(ch23.bytes_in_flight, fn, expected)


def test_little_cases_keep_away_from_whole_numbers():
    """Every way of rounding up agrees only if no quotient is within a rounding of an integer:
    checked in exact arithmetic on the hidden cases of several seeds."""
    problem = ch23.bytes_in_flight
    for seed in range(5):
        inputs = problem.make_inputs(np.random.default_rng(seed), 200)
        for k in range(200):
            row = {key: Fraction(float(v[k])) for key, v in inputs.items()}
            per_sm = row["bandwidth"] * row["latency"] / row["sms"]
            for q in (per_sm / row["bytes_per_load"],
                      per_sm / (row["max_threads"] * row["bytes_per_load"])):
                assert abs(q - round(q)) > Fraction(1, 10 ** 9) * max(q, 1), (seed, k)


def test_the_worked_h200_numbers():
    w = ch23.worked_little()
    assert w["bytes_in_flight"] == pytest.approx(4269e9 * 0.3e-6)
    assert w["threads_per_sm"] == math.ceil(4269e9 * 0.3e-6 / 132 / 4) > 2048
    assert w["loads_per_thread"] == 2


# ---- 23.3 softmax traffic --------------------------------------------------------------------------

def _softmax_by_passes(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    x = y = rows * cols * elem_bytes
    three = (x + x + x) + y                  # max, sum, normalise; the write
    online = (x + x) + y
    fused = x + y if cols * elem_bytes <= on_chip_bytes else online
    return three, online, fused, fused / bandwidth


def _softmax_strict(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    got = list(_softmax_by_passes(rows, cols, elem_bytes, on_chip_bytes, bandwidth))
    if cols * elem_bytes == on_chip_bytes:   # a row exactly as long as the chip holds "does not fit"
        got[2] = 3 * rows * cols * elem_bytes
        got[3] = got[2] / bandwidth
    return tuple(got)


def _softmax_always_fused(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    m = rows * cols * elem_bytes
    return 4 * m, 3 * m, 2 * m, 2 * m / bandwidth


def _softmax_float32_only(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    return _softmax_by_passes(rows, cols, 4, on_chip_bytes, bandwidth)


@pytest.mark.parametrize("fn,expected", [(_softmax_by_passes, None),
                                         (_softmax_strict, "fused_bytes"),
                                         (_softmax_always_fused, "fused_bytes"),
                                         (_softmax_float32_only, "bytes")])
def test_softmax_verdict(fn, expected):
    assert_judged(ch23.softmax_traffic, fn, expected)


def test_softmax_hidden_cases_include_the_edge_of_the_chip():
    inputs = ch23.softmax_traffic.make_inputs(np.random.default_rng(1), 200)
    row = inputs["cols"] * inputs["elem_bytes"]
    assert (row == inputs["on_chip_bytes"]).sum() >= 5
    assert (row == inputs["on_chip_bytes"] + inputs["elem_bytes"]).sum() >= 5
    assert (row < inputs["on_chip_bytes"]).sum() >= 20 and (row > inputs["on_chip_bytes"]).sum() >= 20


# ---- the notebook's pictures and numbers --------------------------------------------------------

def test_the_pictures(capsys):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = ch23.course_map()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "softmax" in texts and "21 work queues" in texts and "Onward" in texts
    assert "Onward: softmax" in ch23.course_map_text()
    fig = ch23.show_banks(16, 1, 32)
    assert "32 distinct words over 16 banks" in capsys.readouterr().out
    assert len(fig.axes[0].patches) == 32 and "2-way conflict" in fig.axes[0].get_title()
    ch23.show_banks(32, 33, 0)
    assert "no conflict" in capsys.readouterr().out
    fig = ch23.show_reference_kernels()
    assert len(fig.axes[0].patches) == len(ch23.reference_kernels())
    plt.close("all")


def test_the_reference_kernels_are_the_recorded_h200_run():
    """The chart shows the numbers of the `aag bench` run each row names (docs/bench-h200.json,
    or a later run's raw file for the references that changed; re-recording a run without copying
    it here fails), and each roof is the larger of the FLOPs at the peak and the copy."""
    bench = json.loads((ROOT / "docs" / "bench-h200.json").read_text())
    data = json.loads((ROOT / "autograder/problems/ch23/h200_reference_kernels.json").read_text())
    runs = {}
    for k in data["kernels"]:
        source = k["measured"].split(", ", 1)[1]
        if source not in runs:
            raw = json.loads((ROOT / source).read_text())
            runs[source] = {r["problem"]: r for r in raw.get("bench", raw)["references"]}
        recorded = runs[source][k["problem"]]
        for field in ("reference_ms", "copy_ms", "flops", "bytes"):
            assert k[field] == recorded[field], (k["problem"], field)
    rows = ch23.reference_kernels()
    assert {r["problem"] for r in rows} == {r["problem"] for r in bench["references"]}
    for r, k in zip(rows, data["kernels"]):
        assert r["ms"] == k["reference_ms"]
        assert r["roof_ms"] == max(k["flops"] / data["peak_fp32_flops"] * 1e3, k["copy_ms"])
    by = {r["problem"]: r for r in rows}
    # What the notebook's text says of them.
    assert by["reduce_sum"]["fraction"] > 0.98 and by["matmul_naive"]["fraction"] < 0.03
    assert 0.095 < by["matmul_register_tiled"]["fraction"] < 0.105
    assert 0.695 < by["conv2d_tiled"]["fraction"] < 0.705
    assert 0.445 < by["merge_tiled"]["fraction"] < 0.455
    assert 0.80 < by["scan_single_pass"]["fraction"] < 0.90
    assert by["matmul_register_tiled"]["bound"] == "compute" and by["scan_single_pass"]["bound"] \
        == "memory"
    blur = next(r for r in bench["references"] if r["problem"] == "blur")
    assert round(blur["reference_ms"] / blur["variants"]["radius fixed at compile time "
                                                       "(unrolled)"], 1) == 5.7
