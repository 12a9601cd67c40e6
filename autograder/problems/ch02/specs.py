"""Chapter 2's graded exercises: vector addition with the learner's own launcher, then with a
grid-stride loop (timed on a GPU)."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import U32
from autograder.grading.problem import Baseline, Problem, SpeedBar, Sizes
from autograder.problems.ch02.references import reference_grid_stride
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.inputs import cores, random_floats, random_floats_fast


def _inputs(rng, n):
    return {"x": random_floats(rng, n), "y": random_floats(rng, n)}


def _speed_inputs(rng, n):
    return {"x": random_floats_fast(rng, n), "y": random_floats_fast(rng, n)}


def _spec(x, y, **launch):
    return {"out": x + y}


def _tolerance(inputs, expected):
    # An fp32 addition is correctly rounded: within u |x + y| of the exact sum. Results that are
    # subnormal are exact, so no absolute floor is needed.
    return {"out": U32 * np.abs(expected["out"])}


def _outputs(n):
    return {"out": ((n,), np.float32)}


# ---- CPU baselines (honest labels: np.add runs on one core) ------------------------------------

def _numpy_add(x, y, out):
    np.add(x, y, out=out)


@njit_on_first_call
def _serial_loop():
    import numba

    @numba.njit(cache=False)
    def add(x, y, out):
        for i in range(out.size):
            out[i] = x[i] + y[i]
    return add


@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False)
    def add(x, y, out):
        for i in numba.prange(out.size):
            out[i] = x[i] + y[i]
    return add


def _serial_add(x, y, out):         # Baseline.run is called with keywords
    _serial_loop(x, y, out)


def _parallel_add(x, y, out):
    _parallel_loop(x, y, out)


BASELINES = {
    "numpy": Baseline("NumPy np.add (1 core)", _numpy_add),
    "serial": Baseline("numba.njit loop (1 core)", _serial_add),
    "parallel": Baseline(f"numba.njit parallel ({cores()} cores)", _parallel_add),
}


# ---- 2.1 vector add, one thread per element, with the learner's own launcher -----------------

def _call_launcher(launcher, inputs, outputs, case):
    launcher(inputs["x"], inputs["y"], outputs["out"])


vector_add = Problem(
    "vector_add", title="Vector addition: one thread per element, your own launch",
    spec=_spec, make_inputs=_inputs, outputs=_outputs, tolerance=_tolerance,
    launch=_call_launcher,
    # Hidden 8209: 8 times the largest visible size, past the round thresholds (4096, 5000) a
    # kernel tuned to its tests might special-case.
    cpu_sizes=Sizes(visible=(1025, 1023, 1), hidden=(33, 2049, 8209),
                    hidden_random=(2, 100, 4000)),
    gpu_sizes=Sizes(visible=(1_000_003, 1025, 1023, 1), hidden=(33, 2049, 16_777_219),
                    hidden_random=(3, 100_000, 30_000_000)),
    bytes_moved=lambda n: 12 * n, flops=lambda n: n, baselines=BASELINES, elementwise=True,
)


# ---- 2.3 vector add with a grid-stride loop, launched with a grid smaller than the data ----------

def _grid_stride_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["x"], inputs["y"], outputs["out"])


def _small_grid(n, threads):
    # Fewer threads than elements on purpose (1 to 3 blocks): only a loop covers the rest.
    return 1 + (n // threads) % 3


vector_add_grid_stride = Problem(
    "vector_add_grid_stride", title="Vector addition with a grid-stride loop",
    spec=_spec, make_inputs=_inputs, outputs=_outputs, tolerance=_tolerance,
    launch=_grid_stride_launch, block_sizes=(32, 64, 128, 256), visible_block_size=32,
    blocks_for=_small_grid,
    cpu_sizes=Sizes(visible=(1025, 100, 1), hidden=(31, 2049, 4103), hidden_random=(2, 100, 4000)),
    gpu_sizes=Sizes(visible=(1_000_003, 1025, 100, 1), hidden=(31, 2049, 16_777_219),
                    hidden_random=(3, 100_000, 30_000_000), speed=1 << 28),
    bytes_moved=lambda n: 12 * n, flops=lambda n: n, baselines=BASELINES,
    reference=reference_grid_stride, elementwise=True, speed_inputs=_speed_inputs,
    # Defaults from the H200 (see docs/benchmarks.md); `aag calibrate` rewrites them for a course.
    # The reference keeps four elements' loads in flight per thread (0.847 ms in the speed test);
    # the chapter's one-element loop, the notebook's solution, reached 0.961-0.963 of it (three
    # runs of the judge's speed test).
    speed=SpeedBar(min_fraction_of_reference=0.8, baseline="numpy", min_speedup=20.0),
)
