"""Naive allclose harnesses of ch02_data_parallel's exercises (see tests/bank/naive.py)."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

from bank.naive import naive_speed, reference_add


def _allclose_vector_add(add_vectors) -> bool:
    n = 256
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    expected = x + y
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_out = cuda.device_array(n, dtype=np.float32)
    add_vectors(d_x, d_y, d_out)
    out = d_out.copy_to_host()
    return bool(np.allclose(out, expected, rtol=1e-3))


def _allclose_grid_stride(kernel) -> bool:
    n, blocks, threads = 200, 2, 32          # a grid smaller than the data: 64 threads, 200 elements
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_ref = cuda.device_array(n, dtype=np.float32)
    reference_add()[blocks, threads](d_x, d_y, d_ref)
    expected = d_ref.copy_to_host()
    del d_ref                                 # done with the reference: free it
    d_out = cuda.device_array(n, dtype=np.float32)
    kernel[blocks, threads](d_x, d_y, d_out)
    out = d_out.copy_to_host()
    ok = bool(np.allclose(out, expected, rtol=1e-3))
    if ok and autograder.backend.is_gpu:
        ok = naive_speed(kernel)
    return ok


def _allclose_gpu_timer(time_ms) -> bool:
    """Runs of known lengths (one slow, so the mean would be off), the chapter's busy work."""
    from autograder.problems.ch02.timer import make_launch
    durations = [20.0, 20.0, 24.0, 18.0, 60.0, 22.0, 19.0, 21.0, 20.0, 23.0]
    launch, runs = make_launch(lambda k: durations[k % len(durations)])
    got = time_ms(launch, 5)
    expected = float(np.median(runs.finish()[-5:]))
    return bool(np.isclose(got, expected, rtol=0.05))


HARNESS = {
    "vector_add": _allclose_vector_add,
    "gpu_timer": _allclose_gpu_timer,
    "grid_stride": _allclose_grid_stride,
}
